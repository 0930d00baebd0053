"""Map a Spec to the library's public API and call stationary_policy (public API only)."""
import signal, time, traceback
import numpy as np

class LibTimeout(Exception):
    pass

def _alarm(sig, frm):
    raise LibTimeout()

def to_objective_kwargs(sp):
    kw = dict(beta=sp.beta, group_size=sp.G, normalization=sp.normalization, std_ddof=sp.ddof, std_eps=sp.eps,
              kl_estimator=sp.estimator, kl_placement=sp.placement)
    if sp.lr_clamp is not None: kw["kl_log_ratio_clamp"] = sp.lr_clamp
    if sp.value_clamp is not None: kw["kl_value_clamp"] = sp.value_clamp
    return kw

def call_library(sp, limit_s=60):
    from grpo_theory import Question, Objective, stationary_policy
    kw = to_objective_kwargs(sp)
    res = {"objective_kwargs": kw}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit_s)
    t = time.process_time(); tw = time.time()
    try:
        q = Question(list(sp.pi_ref), rewards=list(sp.rewards))
        obj = Objective(**kw)
        res["regime"] = obj.regime
        pt = stationary_policy(q, obj)
        res.update(status="ok", pi=np.asarray(pt.pi, float).tolist(), converged=bool(pt.converged),
                   boundary=bool(pt.boundary), stable=pt.stable, method=str(pt.method), message=str(pt.message),
                   residual=float(pt.residual), discontinuous=bool(getattr(pt, "discontinuous", False)))
    except LibTimeout:
        res.update(status="timeout")
    except Exception as e:
        res.update(status="crash", error=f"{type(e).__name__}: {e}", tb=traceback.format_exc()[-1500:])
    finally:
        signal.alarm(0)
    res["cpu"] = time.process_time() - t
    res["wall"] = time.time() - tw
    return res
