"""Cases of the nineteenth hostile audit (issue 45), part one: the public Python API, aimed away from rounds 16-18
(binary ``stationary_policy`` grids, ``solve --json``) at the callables earlier rounds name least
(``tests/hostile_audit_round16_coverage.py`` over every earlier round's files):

* :mod:`grpo_theory.kl`'s evaluation functions (``estimator_value``, ``coefficient``, ``value_slope``, ``value_shift``,
  their ``flow_*`` twins, ``flow_log_ratio`` / ``floored_log_ratio``, ``discontinuities``) for every estimator under
  log-ratio and value clamps, against SPEC section 8 written out;
* ``predict.zero_limit`` at finite G (the binomial ``P_G(a | x) = beta``), shift and direct;
* stationary points under KL estimators and placements (k2 / k3_ratio / k3_plus in the loss, k1 and k2 in the
  advantage, k1 in the reward at every G, verl's clamped k3 where the clamps do not bind);
* ``dynamics.ascent`` / ``grpo_steps`` (one inner update, exact groups) against an Euler ascent on the logits,
  ``dynamics.flow`` at finite times against RK4, extreme step sizes and refused arguments;
* token-level objectives on answer trees whose later tokens are forced (equal to the sequence level);
* the predict package's calibration helpers (``jeffreys_logit``, ``conformal_offsets``, ``conformal_interval``,
  ``start_logits``, ``clock_band``, ``clock_from_mean_reward``, ``unbiased_pass_at_k``) and their refusals;
* ``integrations.mapping.parse_version``, ``predict.response.binary_rewards``, ``objective_for`` on TRL, verl and
  OpenRLHF configs as users write them (SPEC section 7).

Tolerances: the KL functions 1e-12 relative plus 1e-300 (closed forms; ``discontinuities`` 1e-9, a root);
``zero_limit`` 1e-8 relative plus 1e-12 (Brent in the library, a 200-step bisection here); rests through
``stationary_policy`` 1e-8 relative in the smaller of ``x`` and ``1 - x`` plus 1e-15; ``ascent`` / ``grpo_steps``
against Euler 1e-10 relative plus 1e-14 (the same arithmetic, different order); ``flow`` against RK4 (4,000 steps)
1e-7 plus 1e-12 (LSODA at rtol 1e-9); the predict helpers 1e-12 (closed forms and sorted ranks).
"""

from __future__ import annotations

import math
import random

import numpy as np

import hostile_audit_round19_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi, _warn

INF = math.inf
LR = [-30.3, -5.1, -1.7, -0.61, -0.13, 0.07, 0.44, 1.9, 3.3, 25.2]


def _obj(**kw):
    import grpo_theory as g

    return g.Objective(**kw)


def _vec(fn_ref, lrs):
    return [fn_ref(x) for x in lrs]


# ---------------------------------------------------------------- the KL module
def kl_cases() -> list[dict]:
    import grpo_theory.kl as kl

    G_ = "API: kl evaluation functions under clamps (SPEC section 8)"
    out = []
    clamps = [(None, None), (20.0, 10.0), (0.5, None), (None, 0.3), (2.0, 1.5), (7.0, None)]
    for est in ("k1", "k2", "k3", "abs"):
        for L, V in clamps:
            kw = dict(kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)
            tag = f"{est} L={L} V={V}"
            out.append(_ok(G_, f"kl.estimator_value({tag}) on 10 log-ratios",
                           lambda kw=kw: kl.estimator_value(_obj(beta=0.3, **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(np.ravel(v), _vec(lambda x: ref.kl_value(est, x, L, V),
                                                                                    LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.coefficient({tag}, loss) on 10 log-ratios",
                           lambda kw=kw: kl.coefficient(_obj(beta=0.3, **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: ref.kl_coef(est, "loss", x, L, V), LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.coefficient({tag}, advantage) on 10 log-ratios",
                           lambda kw=kw: kl.coefficient(_obj(beta=0.3, kl_placement="advantage", **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: ref.kl_coef(est, "advantage", x, L, V), LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.value_slope({tag}) on 10 log-ratios",
                           lambda kw=kw: kl.value_slope(_obj(beta=0.3, **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: ref.kl_slope(est, x, L, V), LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.value_shift({tag}, reward, beta=0.37) on 10 log-ratios",
                           lambda kw=kw: kl.value_shift(_obj(beta=0.37, kl_placement="reward", **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: 0.37 * ref.kl_value(est, x, L, V), LR), 1e-12, 1e-300)))
    # the flow twins on a subset
    for est in ("k1", "k2", "k3", "abs"):
        for L, V in ((None, None), (2.0, 1.5)):
            kw = dict(kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)
            tag = f"{est} L={L} V={V}"
            out.append(_ok(G_, f"kl.flow_value({tag})", lambda kw=kw: kl.flow_value(_obj(beta=0.3, **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(np.ravel(v), _vec(lambda x: ref.kl_value(est, x, L, V),
                                                                                    LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.flow_coefficient({tag})",
                           lambda kw=kw: kl.flow_coefficient(_obj(beta=0.3, **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: ref.kl_coef(est, "loss", x, L, V), LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.flow_value_slope({tag})",
                           lambda kw=kw: kl.flow_value_slope(_obj(beta=0.3, **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: ref.kl_slope(est, x, L, V), LR), 1e-12, 1e-300)))
            out.append(_ok(G_, f"kl.flow_value_shift({tag}, reward, beta=2.5)",
                           lambda kw=kw: kl.flow_value_shift(_obj(beta=2.5, kl_placement="reward", **kw), np.array(LR)),
                           lambda v, est=est, L=L, V=V: ref.close(
                               np.ravel(v), _vec(lambda x: 2.5 * ref.kl_value(est, x, L, V), LR), 1e-12, 1e-300)))
    # k3_ratio and k3_plus, unclamped
    for est in ("k3_ratio", "k3_plus"):
        out.append(_ok(G_, f"kl.estimator_value({est}) = k3's value",
                       lambda est=est: kl.estimator_value(_obj(beta=0.3, kl_estimator=est), np.array(LR)),
                       lambda v, est=est: ref.close(np.ravel(v), _vec(lambda x: ref.kl_value("k3", x), LR), 1e-12, 1e-300)))
        out.append(_ok(G_, f"kl.coefficient({est}, loss) = lr (the direct penalty)",
                       lambda est=est: kl.coefficient(_obj(beta=0.3, kl_estimator=est), np.array(LR)),
                       lambda v: ref.close(np.ravel(v), LR, 1e-12, 1e-14)))
        out.append(_ok(G_, f"kl.flow_coefficient({est}, loss) = lr",
                       lambda est=est: kl.flow_coefficient(_obj(beta=0.3, kl_estimator=est), np.array(LR)),
                       lambda v: ref.close(np.ravel(v), LR, 1e-12, 1e-14)))
        out.append(_ok(G_, f"kl.coefficient({est}, advantage) = k3's value",
                       lambda est=est: kl.coefficient(_obj(beta=0.3, kl_estimator=est, kl_placement="advantage"),
                                                      np.array(LR)),
                       lambda v: ref.close(np.ravel(v), _vec(lambda x: ref.kl_value("k3", x), LR), 1e-12, 1e-300)))
    # floors
    lrs = [-INF, -1e4, -690.5, -689.9, -3.0, 0.0, 2.0, INF]
    for est in ("k1", "k2", "k3", "abs", "k3_ratio", "k3_plus"):
        for fn in ("flow_log_ratio", "floored_log_ratio"):
            out.append(_ok(G_, f"kl.{fn}({est}) on {lrs}",
                           lambda est=est, fn=fn: getattr(kl, fn)(_obj(beta=1.0, kl_estimator=est), np.array(lrs)),
                           lambda v, est=est: ref.close(np.ravel(v), [ref.kl_floor(est, x) for x in lrs], 0, 0)))
    # infinities
    for est, want_v, want_c in (("k1", [-INF, INF], [1.0, 1.0]), ("k2", [INF, INF], [-INF, INF]),
                                ("k3", [INF, INF], [-INF, 1.0]), ("abs", [INF, INF], [-1.0, 1.0])):
        out.append(_ok(G_, f"kl.estimator_value({est}) at -inf, +inf = the limits",
                       lambda est=est: kl.estimator_value(_obj(beta=1.0, kl_estimator=est), np.array([-INF, INF])),
                       lambda v, w=want_v: ref.close(np.ravel(v), w, 0, 0)))
        out.append(_ok(G_, f"kl.coefficient({est}, loss) at -inf, +inf = the limits",
                       lambda est=est: kl.coefficient(_obj(beta=1.0, kl_estimator=est), np.array([-INF, INF])),
                       lambda v, w=want_c: ref.close(np.ravel(v), w, 0, 0)))
    # discontinuities of c in the loss
    for est in ("k1", "k2", "k3", "abs"):
        for L, V in ((20.0, 10.0), (0.5, None), (None, 0.3), (2.0, 1.5), (7.0, None), (None, 4.0)):
            want = _jumps(est, L, V)
            out.append(_ok(G_, f"kl.discontinuities({est} L={L} V={V}) = {[round(w, 6) for w in want]}",
                           lambda est=est, L=L, V=V: kl.discontinuities(
                               _obj(beta=0.3, kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)),
                           lambda v, w=want: ref.close(list(v), w, 1e-9, 1e-12)))
    for est in ("k1", "k2", "k3"):
        out.append(_ok(G_, f"kl.discontinuities({est} L=2 V=1.5, advantage placement) = () (the value is continuous)",
                       lambda est=est: kl.discontinuities(_obj(beta=0.3, kl_estimator=est, kl_placement="advantage",
                                                                kl_log_ratio_clamp=2.0, kl_value_clamp=1.5)),
                       lambda v: len(v) == 0 or f"got {v}"))
    # refusals
    ob = _obj(beta=0.3, kl_estimator="k3")
    E = [
        ("kl.estimator_value(k3, [0.1, nan])", lambda: kl.estimator_value(ob, [0.1, math.nan]), ["lr"]),
        ("kl.coefficient(k3, nan)", lambda: kl.coefficient(ob, math.nan), ["lr"]),
        ("kl.value_slope(k3, ['a'])", lambda: kl.value_slope(ob, ["a"]), ["lr"]),
        ("kl.coefficient(k1, reward placement) (no coefficient)",
         lambda: kl.coefficient(_obj(beta=0.3, kl_estimator="k1", kl_placement="reward"), [0.2]), ["reward"]),
        ("kl.estimator_value(obj=None, [0.1])", lambda: kl.estimator_value(None, [0.1]), ["obj"]),
        ("kl.estimator_value(obj={'beta': 1}, [0.1])", lambda: kl.estimator_value({"beta": 1}, [0.1]), ["obj"]),
        ("kl.discontinuities('k3')", lambda: kl.discontinuities("k3"), ["obj"]),
        ("kl.flow_log_ratio(k3, nan) (NaN refused)", lambda: kl.flow_log_ratio(ob, [math.nan]), ["lr"]),
        ("Objective(beta=0.3, kl_log_ratio_clamp=-1)", lambda: _obj(beta=0.3, kl_log_ratio_clamp=-1.0),
         ["kl_log_ratio_clamp"]),
        ("Objective(beta=0.3, kl_value_clamp=0)", lambda: _obj(beta=0.3, kl_value_clamp=0.0), ["kl_value_clamp"]),
        ("Objective(beta=0.3, kl_value_clamp=nan)", lambda: _obj(beta=0.3, kl_value_clamp=math.nan), ["kl_value_clamp"]),
        ("Objective(beta=0.3, kl_log_ratio_clamp='20')", lambda: _obj(beta=0.3, kl_log_ratio_clamp="20"),
         ["kl_log_ratio_clamp"]),
        ("Objective(beta=0.3, kl_estimator='K3')", lambda: _obj(beta=0.3, kl_estimator="K3"), ["kl_estimator"]),
        ("Objective(beta=0.3, kl_placement='rewards')", lambda: _obj(beta=0.3, kl_placement="rewards"), ["kl_placement"]),
        ("Objective(beta=0.3, kl_estimator=3)", lambda: _obj(beta=0.3, kl_estimator=3), ["kl_estimator"]),
        ("Objective(beta=0.3, penalty='reverse', kl_estimator='k2') (two penalties that contradict)",
         lambda: _obj(beta=0.3, penalty="reverse", kl_estimator="k2"), ["penalty", "kl_estimator"]),
    ]
    out += [_err(G_, lab, call, names) for lab, call, names in E]
    return out


def _jumps(est, L, V):
    """Where the loss coefficient c jumps (reference): the clamp edges at which c differs on its two sides."""
    cands = set()
    if L is not None:
        cands.update([-L, L])
    if est == "abs":
        cands.add(0.0)
    if V is not None:
        for side in (-1, 1):
            lo, hi = 0.0, side * 700.0
            f = lambda u: abs(ref.kl_value(est, u, L)) - V
            if f(hi) <= 0:
                continue
            for _ in range(200):
                mid = (lo + hi) / 2
                if f(mid) > 0:
                    hi = mid
                else:
                    lo = mid
            cands.add((lo + hi) / 2)
    out = []
    for u in sorted(cands):
        d = 1e-7 * max(1.0, abs(u))
        a, b = ref.kl_coef(est, "loss", u - d, L, V), ref.kl_coef(est, "loss", u + d, L, V)
        if abs(a - b) > 1e-3:
            out.append(u)
    return out


# ---------------------------------------------------------------- zero_limit
def zero_limit_cases() -> list[dict]:
    from grpo_theory.predict import zero_limit

    G_ = "API: predict.zero_limit (the never-solved prompt's rest) against P_G(a | x) = beta"
    out = []
    for G in (2, 3, 4, 6, 11, 30, INF):
        for beta in (0.07, 0.35, 0.9, 1.6, 3.2):
            want = ref.zero_limit(G, beta)
            out.append(_ok(G_, f"zero_limit(Objective(beta={beta}, G={G})) = {want:.6g}",
                           lambda G=G, beta=beta: zero_limit(_obj(beta=beta, group_size=G)),
                           lambda v, w=want: ref.close(float(v), w, 1e-8, 1e-12)))
    for G in (2, 5, INF):
        for beta in (0.2, 0.7, 1.5):
            for gap in (1.0, 2.5):
                want = ref.zero_limit(G, beta, "shift", gap=gap)
                out.append(_ok(G_, f"zero_limit(Objective(beta={beta}, G={G}, shift), rewards=({gap}, 0)) = {want:.6g}",
                               lambda G=G, beta=beta, gap=gap: zero_limit(
                                   _obj(beta=beta, group_size=G, normalization="shift"), rewards=(gap, 0.0)),
                               lambda v, w=want: ref.close(float(v), w, 1e-8, 1e-12)))
    for G, beta in ((2, 0.1), (7, 0.5), (INF, 0.05)):
        out.append(_ok(G_, f"zero_limit(Objective(beta={beta}, G={G}, direct)) = 0 (continuous at p = 0)",
                       lambda G=G, beta=beta: zero_limit(_obj(beta=beta, group_size=G, penalty="direct")),
                       lambda v: ref.close(float(v), 0.0, 0, 1e-12)))
    for G, beta, rw in ((3, 0.4, (3.0, -2.0)), (8, 1.1, (0.5, 0.25)), (INF, 0.6, (10.0, 9.0))):
        want = ref.zero_limit(G, beta)
        out.append(_ok(G_, f"zero_limit(Objective(beta={beta}, G={G}), rewards={rw}) = scale-free {want:.6g}",
                       lambda G=G, beta=beta, rw=rw: zero_limit(_obj(beta=beta, group_size=G), rewards=rw),
                       lambda v, w=want: ref.close(float(v), w, 1e-8, 1e-12)))
    E = [
        ("zero_limit(obj, rewards=(0, 1)) (wrong first)", lambda: zero_limit(_obj(beta=0.5), rewards=(0.0, 1.0)),
         ["rewards"]),
        ("zero_limit(obj, rewards=(1, 1))", lambda: zero_limit(_obj(beta=0.5), rewards=(1.0, 1.0)), ["rewards"]),
        ("zero_limit(obj, rewards=(1, 0, 0))", lambda: zero_limit(_obj(beta=0.5), rewards=(1.0, 0.0, 0.0)), ["rewards"]),
        ("zero_limit(obj, rewards=(nan, 0))", lambda: zero_limit(_obj(beta=0.5), rewards=(math.nan, 0.0)), ["rewards"]),
        ("zero_limit(obj, rewards=(inf, 0))", lambda: zero_limit(_obj(beta=0.5), rewards=(INF, 0.0)), ["rewards"]),
        ("zero_limit(0.5) (a number for the Objective)", lambda: zero_limit(0.5), ["obj"]),
    ]
    out += [_err(G_, lab, call, names) for lab, call, names in E]
    return out


# ---------------------------------------------------------------- stationary points under KL options
PS = [0.04, 0.23, 0.5, 0.77]
BS = [0.15, 0.6, 2.2]


def _side(v, x):
    pi = _pi(v)
    if len(pi) != 2:
        return f"pi has {len(pi)} entries"
    if x <= 0.5:
        return ref.close(pi[0], x, 1e-8, 1e-15)
    return ref.close(pi[1], 1 - x, 1e-8, 1e-15)


def kl_rest_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: binary rests under KL estimators and placements (SPEC section 8)"
    out = []

    def sp(p, **kw):
        return lambda: g.stationary_policy(g.Question([p, 1 - p], [1, 0]), g.Objective(**kw))

    for p in PS:
        for beta in BS:
            direct = ref.xlogit(p, 1 / beta)
            for est in ("k2", "k3_ratio", "k3_plus"):
                out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=2, {est} in the loss) = "
                                   f"logit p + 1/beta", sp(p, beta=beta, group_size=2, kl_estimator=est),
                               lambda v, x=direct: _side(v, x)))
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=2, k1 in the advantage) = "
                               f"logit p + 1/beta",
                           sp(p, beta=beta, group_size=2, kl_estimator="k1", kl_placement="advantage"),
                           lambda v, x=direct: _side(v, x)))
            for G in (3, INF):
                out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G={G}, k1 in the reward) = "
                                   f"log pooling", sp(p, beta=beta, group_size=G, kl_estimator="k1",
                                                      kl_placement="reward"),
                               lambda v, x=direct: _side(v, x)))
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=2, k2 in the advantage) = "
                               f"bisection of 1 = beta (lr_a^2 - lr_b^2)/2",
                           sp(p, beta=beta, group_size=2, kl_estimator="k2", kl_placement="advantage"),
                           lambda v, x=ref.rest_k2_adv(p, beta): _side(v, x)))
            x = ref.x14(p, beta)
            la, lb = math.log(x / p), math.log((1 - x) / (1 - p))
            if max(ref.kl_value("k3", la), ref.kl_value("k3", lb)) < 10 and max(abs(la), abs(lb)) < 20:
                out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=2, k3 L=20 V=10 "
                                   f"(verl low_var_kl, not binding)) = Eq. 14",
                               sp(p, beta=beta, group_size=2, kl_estimator="k3", kl_log_ratio_clamp=20.0,
                                  kl_value_clamp=10.0), lambda v, x=x: _side(v, x)))
    for pr, rw in (([0.2, 0.5, 0.3], [1.0, 0.0, 0.4]), ([0.05, 0.05, 0.9], [2.0, -1.0, 0.5]),
                   ([0.25, 0.25, 0.25, 0.25], [0.0, 0.3, 0.6, 1.2])):
        for beta, G, norm in ((0.3, 3, "shift"), (1.4, 5, "scale"), (0.8, INF, "scale")):
            out.append(_ok(G_, f"stationary_policy({pr}, r={rw}, beta={beta}, G={G}, {norm}, k1 in the reward) = "
                               f"pi_ref e^(r/beta)",
                           lambda pr=pr, rw=rw, beta=beta, G=G, norm=norm: g.stationary_policy(
                               g.Question(pr, rw), g.Objective(beta=beta, group_size=G, normalization=norm,
                                                               kl_estimator="k1", kl_placement="reward")),
                           lambda v, pr=pr, rw=rw, beta=beta: ref.close(_pi(v), ref.pool(pr, rw, beta), 1e-8, 1e-15)))
    return out


# ---------------------------------------------------------------- dynamics
def dynamics_cases() -> list[dict]:
    import grpo_theory as g
    from grpo_theory import dynamics as d

    G_ = "API: dynamics.ascent / grpo_steps against an Euler ascent, flow against RK4"
    out = []
    forms = [(2, "scale", "reverse"), (2, "scale", "direct"), (INF, "scale", "reverse"), (5, "shift", "reverse"),
             (4, "shift", "direct")]
    for G, kind, pen in forms:
        for p, beta, lr, steps in ((0.12, 0.4, 0.05, 60), (0.63, 1.7, 0.7, 7), (0.3, 0.25, 3.0, 1),
                                   (0.9, 0.08, 0.2, 25)):
            kw = dict(beta=beta, group_size=G, penalty=pen)
            if kind == "shift":
                kw["normalization"] = "shift"
            want = ref.euler([p, 1 - p], [1.0, 0.0], beta, G, kind, pen, lr, steps)
            out.append(_ok(G_, f"ascent([{p}, 1-p], r=[1,0], beta={beta}, G={G}, {kind}/{pen}, lr={lr}, steps={steps})"
                               f" = Euler",
                           lambda p=p, kw=kw, lr=lr, steps=steps: d.ascent(
                               g.Question([p, 1 - p], [1, 0]), g.Objective(**kw), [p, 1 - p], lr=lr, steps=steps,
                               with_points=False).pi[-1],
                           lambda v, w=want: ref.close(np.ravel(v), w, 1e-10, 1e-14)))
            if G != INF:
                out.append(_ok(G_, f"grpo_steps([{p}, 1-p], r=[1,0], beta={beta}, G={G}, {kind}/{pen}, lr={lr}, "
                                   f"n_batches={steps}, one inner update, exact groups) = Euler",
                               lambda p=p, kw=kw, lr=lr, steps=steps: d.grpo_steps(
                                   g.Question([p, 1 - p], [1, 0]), g.Objective(**kw), [p, 1 - p], lr=lr,
                                   n_batches=steps, with_points=False).pi[-1],
                               lambda v, w=want: ref.close(np.ravel(v), w, 1e-10, 1e-14)))
    for pr, rw in (([0.2, 0.5, 0.3], [1.0, 0.0, 0.4]), ([0.6, 0.3, 0.1], [0.0, 2.0, 1.0])):
        for G, kind, pen in forms:
            kw = dict(beta=0.45, group_size=G, penalty=pen)
            if kind == "shift":
                kw["normalization"] = "shift"
            want = ref.euler(pr, rw, 0.45, G, kind, pen, 0.3, 12)
            out.append(_ok(G_, f"ascent({pr}, r={rw}, beta=0.45, G={G}, {kind}/{pen}, lr=0.3, steps=12) = Euler",
                           lambda pr=pr, rw=rw, kw=kw: d.ascent(g.Question(pr, rw), g.Objective(**kw), pr, lr=0.3,
                                                                steps=12, with_points=False).pi[-1],
                           lambda v, w=want: ref.close(np.ravel(v), w, 1e-10, 1e-14)))
            for t in (0.4, 2.5):
                want = ref.rk4(pr, rw, 0.45, G, kind, pen, t, n=2000)
                out.append(_ok(G_, f"flow({pr}, r={rw}, beta=0.45, G={G}, {kind}/{pen}) at t={t} = RK4",
                               lambda pr=pr, rw=rw, kw=kw, t=t: d.flow(g.Question(pr, rw), g.Objective(**kw), pr,
                                                                       [0.0, t], with_points=False).pi[-1],
                               lambda v, w=want: ref.close(np.ravel(v), w, 1e-7, 1e-12)))
    # from a start away from pi_ref
    for p, x0, beta in ((0.3, 0.95, 0.5), (0.5, 0.02, 1.2), (0.1, 0.5, 0.2)):
        want = ref.rk4([p, 1 - p], [1.0, 0.0], beta, 2, "scale", "reverse", 1.5, n=2000, pi0=[x0, 1 - x0])
        out.append(_ok(G_, f"flow([{p}, 1-p], r=[1,0], beta={beta}, G=2) from pi0=[{x0}, 1-x0] at t=1.5 = RK4",
                       lambda p=p, x0=x0, beta=beta: d.flow(g.Question([p, 1 - p], [1, 0]), g.Objective(beta=beta),
                                                            [x0, 1 - x0], [0.0, 1.5], with_points=False).pi[-1],
                       lambda v, w=want: ref.close(np.ravel(v), w, 1e-7, 1e-12)))
    q = g.Question([0.3, 0.7], [1, 0])
    ob = g.Objective(beta=0.5)

    def sane(v):
        pi = np.asarray(v.pi, float)
        if not np.all(np.isfinite(pi)) or np.any(pi < 0) or np.any(np.abs(pi.sum(axis=1) - 1) > 1e-9):
            return f"status {v.status}: pi {pi[-1]}"
        return True
    for lr in (1e3, 1e8):
        out.append(_either(G_, f"ascent lr={lr:g} steps=20 (a huge step: a sane path or a named refusal)",
                           lambda lr=lr: d.ascent(q, ob, q.pi_ref, lr=lr, steps=20, with_points=False), sane, ["lr"]))
        out.append(_either(G_, f"grpo_steps lr={lr:g} n_batches=20",
                           lambda lr=lr: d.grpo_steps(q, ob, q.pi_ref, lr=lr, n_batches=20, with_points=False),
                           sane, ["lr"]))
    out.append(_either(G_, "flow t=[0, 1e7] (a long horizon: ends at Eq. 14 or a named refusal)",
                       lambda: d.flow(q, ob, q.pi_ref, [0.0, 1e7], with_points=False),
                       lambda v: ref.close(float(v.pi[-1][0]), ref.x14(0.3, 0.5), 1e-6, 1e-12), ["t"]))
    out.append(_ok(G_, "flow t=[0, 0] (time zero only) = pi0",
                   lambda: d.flow(q, ob, [0.4, 0.6], [0.0, 0.0], with_points=False).pi[-1],
                   lambda v: ref.close(np.ravel(v), [0.4, 0.6], 1e-12, 1e-15)))
    out.append(_ok(G_, "ascent steps=0 = the start alone",
                   lambda: d.ascent(q, ob, [0.4, 0.6], lr=0.1, steps=0, with_points=False).pi[-1],
                   lambda v: ref.close(np.ravel(v), [0.4, 0.6], 1e-12, 1e-15)))
    E = [
        ("ascent lr=0", lambda: d.ascent(q, ob, q.pi_ref, lr=0.0, steps=3), ["lr"]),
        ("ascent lr=-0.1", lambda: d.ascent(q, ob, q.pi_ref, lr=-0.1, steps=3), ["lr"]),
        ("ascent lr=nan", lambda: d.ascent(q, ob, q.pi_ref, lr=math.nan, steps=3), ["lr"]),
        ("ascent lr=inf", lambda: d.ascent(q, ob, q.pi_ref, lr=INF, steps=3), ["lr"]),
        ("ascent lr='0.1'", lambda: d.ascent(q, ob, q.pi_ref, lr="0.1", steps=3), ["lr"]),
        ("ascent steps=-1", lambda: d.ascent(q, ob, q.pi_ref, lr=0.1, steps=-1), ["steps"]),
        ("ascent steps=2.5", lambda: d.ascent(q, ob, q.pi_ref, lr=0.1, steps=2.5), ["steps"]),
        ("ascent every=0", lambda: d.ascent(q, ob, q.pi_ref, lr=0.1, steps=3, every=0), ["every"]),
        ("ascent every=-2", lambda: d.ascent(q, ob, q.pi_ref, lr=0.1, steps=3, every=-2), ["every"]),
        ("ascent steps=10**12 (refused up front by its cost)", lambda: d.ascent(q, ob, q.pi_ref, lr=0.1,
                                                                                steps=10 ** 12), ["steps"]),
        ("ascent pi0=[0.5, 0.6]", lambda: d.ascent(q, ob, [0.5, 0.6], lr=0.1, steps=3), ["pi0"]),
        ("ascent pi0=[1/3]*3 (wrong length)", lambda: d.ascent(q, ob, [1 / 3] * 3, lr=0.1, steps=3), ["pi0"]),
        ("ascent pi0=[nan, 1]", lambda: d.ascent(q, ob, [math.nan, 1.0], lr=0.1, steps=3), ["pi0"]),
        ("ascent pi0=[-0.1, 1.1]", lambda: d.ascent(q, ob, [-0.1, 1.1], lr=0.1, steps=3), ["pi0"]),
        ("flow t=[1, 0.5] (decreasing)", lambda: d.flow(q, ob, q.pi_ref, [1.0, 0.5]), ["t"]),
        ("flow t=[-1, 1]", lambda: d.flow(q, ob, q.pi_ref, [-1.0, 1.0]), ["t"]),
        ("flow t=[0, nan]", lambda: d.flow(q, ob, q.pi_ref, [0.0, math.nan]), ["t"]),
        ("flow t=[0, inf]", lambda: d.flow(q, ob, q.pi_ref, [0.0, INF]), ["t"]),
        ("flow t=[[0, 1]] (2-d)", lambda: d.flow(q, ob, q.pi_ref, [[0.0, 1.0]]), ["t"]),
        ("flow t=[] (no time)", lambda: d.flow(q, ob, q.pi_ref, []), ["t"]),
        ("flow t=np.linspace(0, 1, 10**7) (too many values)", lambda: d.flow(q, ob, q.pi_ref, np.linspace(0, 1, 10 ** 7)),
         ["t"]),
        ("flow rtol=-1e-9", lambda: d.flow(q, ob, q.pi_ref, [0.0, 1.0], rtol=-1e-9), ["rtol"]),
        ("flow atol=-1", lambda: d.flow(q, ob, q.pi_ref, [0.0, 1.0], atol=-1.0), ["atol"]),
        ("flow with_points='yes'", lambda: d.flow(q, ob, q.pi_ref, [0.0, 1.0], with_points="yes"), ["with_points"]),
        ("grpo_steps n_batches=0", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=0), ["n_batches"]),
        ("grpo_steps inner_updates=0", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=3, inner_updates=0),
         ["inner_updates"]),
        ("grpo_steps clip_eps=-0.2", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=3, clip_eps=-0.2),
         ["clip_eps"]),
        ("grpo_steps clip_eps=nan", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=3, clip_eps=math.nan),
         ["clip_eps"]),
        ("grpo_steps n_groups=0", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=3, n_groups=0), ["n_groups"]),
        ("grpo_steps n_groups=2.5", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=3, n_groups=2.5),
         ["n_groups"]),
        ("grpo_steps n_groups=4 at G=inf", lambda: d.grpo_steps(q, g.Objective(beta=0.5, group_size=INF), q.pi_ref,
                                                                lr=0.1, n_batches=3, n_groups=4), ["n_groups"]),
        ("grpo_steps seed=-1 with n_groups=4", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=3, n_groups=4,
                                                                    seed=-1), ["seed"]),
        ("grpo_steps lr=0", lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.0, n_batches=3), ["lr"]),
        ("grpo_steps n_batches=10**12 (refused by its cost)",
         lambda: d.grpo_steps(q, ob, q.pi_ref, lr=0.1, n_batches=10 ** 12), ["n_batches"]),
        ("ascent(obj, q, ...) (swapped)", lambda: d.ascent(ob, q, q.pi_ref, lr=0.1, steps=3), ["q"]),
    ]
    out += [_err(G_, lab, call, names) for lab, call, names in E]
    return out


# ---------------------------------------------------------------- token level, forced later tokens
def token_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: token-level objectives on answer trees whose later tokens are forced (= the sequence level)"
    out = []
    for p, beta in ((0.2, 0.5), (0.45, 1.3), (0.8, 0.2), (0.07, 0.09)):
        for answers in ([("A", "x"), ("B", "y")], [("Q",), ("R",)], ["ab", "cd"], [("A", "x", "y"), ("B", "z", "w")]):
            x = ref.x14(p, beta)
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], answers={answers}, beta={beta}, G=2, token) "
                               f"= Eq. 14",
                           lambda p=p, beta=beta, answers=answers: g.stationary_policy(
                               g.Question([p, 1 - p], [1, 0], answers=answers),
                               g.Objective(beta=beta, group_size=2, level="token")),
                           lambda v, x=x: _side(v, x)))
    E = [
        ("Question answers=[('A',), ('A', 'B')] (a prefix)",
         lambda: g.Question([0.5, 0.5], [1, 0], answers=[("A",), ("A", "B")]), ["answers"]),
        ("Question answers=[('A',), ('A',)] (twice)", lambda: g.Question([0.5, 0.5], [1, 0], answers=[("A",), ("A",)]),
         ["answers"]),
        ("Question answers=[(), ('B',)] (empty answer)", lambda: g.Question([0.5, 0.5], [1, 0], answers=[(), ("B",)]),
         ["answers"]),
        ("Question answers of 3 for 2 outputs", lambda: g.Question([0.5, 0.5], [1, 0], answers=["a", "b", "c"]),
         ["answers"]),
        ("Question answers=[['A'], [{'t'}]] (unhashable token)",
         lambda: g.Question([0.5, 0.5], [1, 0], answers=[["A"], [{"t"}]]), ["answers"]),
        ("Question answers='ab' (a string, not a sequence of answers)",
         lambda: g.Question([0.5, 0.5], [1, 0], answers="ab"), ["answers"]),
    ]
    out += [_err(G_, lab, call, names) for lab, call, names in E]
    return out


# ---------------------------------------------------------------- the predict package's helpers
def predict_helper_cases() -> list[dict]:
    from grpo_theory.predict import calibrate as cal
    from grpo_theory.predict import conformal as cf
    from grpo_theory.predict import unbiased_pass_at_k

    G_ = "API: predict's calibration helpers against their docstrings"
    out = []
    km = [(0, 1), (1, 1), (0, 10), (10, 10), (3, 7), (49, 100), (1, 1000), (999, 1000), (0, 10 ** 6), (5, 9),
          (2, 3), (17, 40)]
    out.append(_ok(G_, f"jeffreys_logit over {len(km)} (k, m) pairs", lambda: cf.jeffreys_logit([a for a, _ in km],
                                                                                               [b for _, b in km]),
                   lambda v: ref.close(np.ravel(v), [ref.jeffreys(a, b) for a, b in km], 1e-12, 1e-14)))
    for a, b in km:
        out.append(_ok(G_, f"jeffreys_logit({a}, {b})", lambda a=a, b=b: cf.jeffreys_logit(a, b),
                       lambda v, a=a, b=b: ref.close(float(np.ravel(v)[0]), ref.jeffreys(a, b), 1e-12, 1e-14)))
    rng = random.Random(1919)
    for n, level in ((3, 0.5), (5, 0.8), (9, 0.9), (19, 0.9), (20, 0.9), (39, 0.95), (40, 0.95), (60, 0.7),
                     (7, 0.25), (100, 0.99), (12, 0.6), (25, 0.85)):
        p = [round(rng.uniform(0.02, 0.98), 4) for _ in range(n)]
        m = [rng.choice([4, 8, 16, 32]) for _ in range(n)]
        k = [min(mm, max(0, round(mm * min(0.99, max(0.01, pp + rng.gauss(0, 0.15)))))) for pp, mm in zip(p, m)]
        q_lo, q_hi, nn = ref.conformal_offsets(p, k, m, level)
        finite = math.isfinite(q_lo) and math.isfinite(q_hi)

        def chk(v, q_lo=q_lo, q_hi=q_hi, nn=nn):
            got = ref.close([v.q_lo, v.q_hi], [q_lo, q_hi], 1e-12, 1e-14)
            if got is not True:
                return got
            return int(v.n) == nn or f"n {v.n} != {nn}"
        maker = (lambda p=p, k=k, m=m, level=level: cf.conformal_offsets(p, k, m, level=level))
        if finite:
            out.append(_ok(G_, f"conformal_offsets(n={n}, level={level}) = ranks of the sorted residuals", maker, chk))
        else:
            out.append(_warn(G_, f"conformal_offsets(n={n}, level={level}) (too few: an open end, warned)", maker,
                             ["calibration"], check=chk))
        # intervals for new prompts from these offsets
        for pnew, mnew in ((0.31, 8), (0.77, 16), (0.05, 32)):
            want = ref.conformal_interval(pnew, q_lo, q_hi, mnew)
            if want is None:
                continue

            def chk2(v, want=want):
                return ref.close([float(np.ravel(v[0])[0]), float(np.ravel(v[1])[0])], list(want), 1e-12, 1e-15)
            out.append(_ok(G_, f"conformal_interval(p={pnew}, offsets of n={n} level={level}, m={mnew}) = the k/m with "
                               f"q_lo <= g(k, m) - logit p <= q_hi",
                           lambda p=p, k=k, m=m, level=level, pnew=pnew, mnew=mnew: _quiet(
                               lambda: cf.conformal_interval([pnew], cf.conformal_offsets(p, k, m, level=level), mnew)),
                           chk2))
    nc = [(10, 3), (10, 0), (10, 10), (1, 0), (1, 1), (7, 2), (1000, 1), (1000, 999), (3, 3), (64, 32)]
    out.append(_ok(G_, f"start_logits over {len(nc)} prompts (Jeffreys at 0 and n)",
                   lambda: cal.start_logits([a for a, _ in nc], [b for _, b in nc]),
                   lambda v: ref.close(np.ravel(v), [ref.start_logit(a, b) for a, b in nc], 1e-12, 1e-14)))
    for a, b in nc:
        out.append(_ok(G_, f"start_logits([{a}], [{b}])", lambda a=a, b=b: cal.start_logits([a], [b]),
                       lambda v, a=a, b=b: ref.close(float(np.ravel(v)[0]), ref.start_logit(a, b), 1e-12, 1e-14)))
    times = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0]
    path = [[0.1, 0.9, 0.5], [0.2, 0.85, 0.55], [0.35, 0.7, 0.5], [0.5, 0.6, 0.52], [0.6, 0.65, 0.45],
            [0.62, 0.66, 0.4]]
    for t_lo, t_hi in ((0.0, 8.0), (0.5, 2.0), (1.0, 1.0), (2.0, 8.0), (0.0, 0.5), (4.0, 8.0)):
        want = ref.clock_band(times, path, t_lo, t_hi)
        out.append(_ok(G_, f"clock_band(6 times x 3 prompts, {t_lo}, {t_hi}) (ends on the grid)",
                       lambda t_lo=t_lo, t_hi=t_hi: cal.clock_band(times, path, t_lo, t_hi),
                       lambda v, w=want: ref.close(list(np.ravel(v[0])) + list(np.ravel(v[1])), w[0] + w[1], 1e-12,
                                                   1e-15)))
    for target in (0.5, 0.52, 0.55, 0.5333333333333333, 0.555, 0.5633, 0.51, 0.565):
        want = ref.first_crossing(times, path, target)
        out.append(_ok(G_, f"clock_from_mean_reward(6 times x 3 prompts, {target}) = first crossing, linear",
                       lambda target=target: cal.clock_from_mean_reward(times, path, target),
                       lambda v, w=want: ref.close(float(v), w, 1e-12, 1e-14)))
    for n, c, k in ((10, 3, 1), (10, 3, 5), (10, 0, 4), (10, 10, 2), (100, 1, 50), (100, 99, 3), (7, 7, 7), (50, 12, 10)):
        out.append(_ok(G_, f"unbiased_pass_at_k(n={n}, c={c}, k={k}) = 1 - C(n-c,k)/C(n,k)",
                       lambda n=n, c=c, k=k: unbiased_pass_at_k(n, c, k),
                       lambda v, n=n, c=c, k=k: ref.close(float(np.ravel(v)[0]), ref.unbiased_pass(n, c, k), 1e-12,
                                                          1e-15)))
    off = cf.ConformalOffsets(-0.5, 0.5, 0.9, 30) if _can_offsets() else None
    E = [
        ("jeffreys_logit(5, 3) (k > m)", lambda: cf.jeffreys_logit(5, 3), ["k"]),
        ("jeffreys_logit(-1, 3)", lambda: cf.jeffreys_logit(-1, 3), ["k"]),
        ("jeffreys_logit(1, 0) (no samples)", lambda: cf.jeffreys_logit(1, 0), ["m"]),
        ("jeffreys_logit(1.5, 3)", lambda: cf.jeffreys_logit(1.5, 3), ["k"]),
        ("jeffreys_logit([1, 2], [3]) (lengths)", lambda: cf.jeffreys_logit([1, 2], [3, 4, 5]), ["k", "m"]),
        ("conformal_offsets level=1.0", lambda: cf.conformal_offsets([0.5] * 5, [1] * 5, [4] * 5, level=1.0), ["level"]),
        ("conformal_offsets level=0", lambda: cf.conformal_offsets([0.5] * 5, [1] * 5, [4] * 5, level=0.0), ["level"]),
        ("conformal_offsets level=nan", lambda: cf.conformal_offsets([0.5] * 5, [1] * 5, [4] * 5, level=math.nan),
         ["level"]),
        ("conformal_offsets level=90 (a percentage)", lambda: cf.conformal_offsets([0.5] * 5, [1] * 5, [4] * 5,
                                                                                   level=90), ["level"]),
        ("conformal_offsets lengths 5, 4, 5", lambda: cf.conformal_offsets([0.5] * 5, [1] * 4, [4] * 5), ["k"]),
        ("conformal_offsets no prompt", lambda: cf.conformal_offsets([], [], []), ["p_pred"]),
        ("conformal_offsets k > m", lambda: cf.conformal_offsets([0.5] * 3, [1, 5, 2], [4] * 3), ["k"]),
        ("conformal_offsets m=0", lambda: cf.conformal_offsets([0.5] * 3, [0, 0, 0], [4, 0, 4]), ["m"]),
        ("conformal_offsets p_pred=1.2", lambda: cf.conformal_offsets([0.5, 1.2, 0.4], [1] * 3, [4] * 3), ["p_pred"]),
        ("conformal_offsets p_pred=nan", lambda: cf.conformal_offsets([0.5, math.nan, 0.4], [1] * 3, [4] * 3),
         ["p_pred"]),
        ("conformal_interval offsets=(−0.5, 0.5) (a tuple)", lambda: cf.conformal_interval([0.3], (-0.5, 0.5), 8),
         ["offsets"]),
        ("conformal_interval m=0", lambda: cf.conformal_interval([0.3], off, 0), ["m"]),
        ("conformal_interval m=2.5", lambda: cf.conformal_interval([0.3], off, 2.5), ["m"]),
        ("conformal_interval m of 2 for 3 prompts", lambda: cf.conformal_interval([0.3, 0.4, 0.5], off, [4, 8]), ["m"]),
        ("conformal_interval p=-0.1", lambda: cf.conformal_interval([-0.1], off, 8), ["p"]),
        ("start_logits n=0", lambda: cal.start_logits([0], [0]), ["n"]),
        ("start_logits correct > n", lambda: cal.start_logits([4], [5]), ["correct"]),
        ("start_logits correct=-1", lambda: cal.start_logits([4], [-1]), ["correct"]),
        ("start_logits lengths 2 and 1", lambda: cal.start_logits([4, 5], [1]), ["correct"]),
        ("clock_band t_lo > t_hi", lambda: cal.clock_band(times, path, 2.0, 1.0), ["t_lo"]),
        ("clock_band t_lo=-1", lambda: cal.clock_band(times, path, -1.0, 1.0), ["t_lo"]),
        ("clock_band t_hi=nan", lambda: cal.clock_band(times, path, 0.0, math.nan), ["t_hi"]),
        ("clock_band p_path of 5 rows for 6 times", lambda: cal.clock_band(times, path[:5], 0.0, 1.0), ["p_path"]),
        ("clock_band p_path=1.5 somewhere", lambda: cal.clock_band(times, [[1.5, 0.2, 0.3]] + path[1:], 0.0, 1.0),
         ["p_path"]),
        ("clock_from_mean_reward 0.9 (never reached)", lambda: cal.clock_from_mean_reward(times, path, 0.9),
         ["mean_reward"]),
        ("clock_from_mean_reward nan", lambda: cal.clock_from_mean_reward(times, path, math.nan), ["mean_reward"]),
        ("clock_from_mean_reward 1.5", lambda: cal.clock_from_mean_reward(times, path, 1.5), ["mean_reward"]),
        ("clock_from_mean_reward times decreasing", lambda: cal.clock_from_mean_reward(times[::-1], path, 0.55),
         ["times"]),
        ("clock_from_mean_reward times of 5 for 6 rows", lambda: cal.clock_from_mean_reward(times[:5], path, 0.55),
         ["times"]),
        ("unbiased_pass_at_k k=0", lambda: unbiased_pass_at_k(10, 3, 0), ["k"]),
        ("unbiased_pass_at_k c > n", lambda: unbiased_pass_at_k(10, 11, 2), ["c"]),
        ("unbiased_pass_at_k n=-1", lambda: unbiased_pass_at_k(-1, 0, 1), ["n"]),
    ]
    out += [_err(G_, lab, call, names) for lab, call, names in E]
    return out


def _can_offsets():
    try:
        from grpo_theory.predict import conformal as cf

        cf.ConformalOffsets(-0.5, 0.5, 0.9, 30)
        return True
    except Exception:                                    # noqa: BLE001 - the case itself then reports
        return False


def _quiet(fn):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# ---------------------------------------------------------------- parse_version, binary_rewards
def small_cases() -> list[dict]:
    from grpo_theory.integrations.mapping import parse_version
    from grpo_theory.predict.response import binary_rewards

    G_ = "API: parse_version (its docstring's rules) and binary_rewards"
    out = []
    for v in ("1.16.0", "0.26.0.dev0", "2", "0.9", "1.2.3rc1", "1.2.3+cu118", "1.2.3.post1", "4.0.0a2", "10.20.30",
              "0.0.0", "1.16.0.dev20250101", "3.1b4", "1.7.0+git.abc123", "12.0rc2"):
        want = ref.parse_version(v)
        out.append(_ok(G_, f"parse_version({v!r}) = {want}", lambda v=v: parse_version(v),
                       lambda got, w=want: tuple(got) == w or f"got {got}, want {w}"))
    for v in ("1..16", "-1.0.0", "", "v1.2", "1.2.3.4", "one.two", "1.2.x", ". ", "1,16,0"):
        out.append(_err(G_, f"parse_version({v!r}) (refused)", lambda v=v: parse_version(v), ["v" if not v else v]))
    out.append(_err(G_, "parse_version(1.16) (a float)", lambda: parse_version(1.16), ["v"]))
    out.append(_err(G_, "parse_version(None)", lambda: parse_version(None), ["v"]))
    for rw in ([1, 0], [2.5, -3], (0.75, 0.25), np.array([10.0, 9.0])):
        out.append(_ok(G_, f"binary_rewards({list(np.ravel(rw))})", lambda rw=rw: binary_rewards(rw),
                       lambda v, rw=rw: ref.close(list(v), [float(a) for a in np.ravel(rw)], 0, 0)))
    for rw, nm in (([0, 1], "rewards"), ([1, 1], "rewards"), ([1, 0, 0], "rewards"), ([math.nan, 0], "rewards"),
                   ([INF, 0], "rewards"), ([1], "rewards"), ("10", "rewards")):
        out.append(_err(G_, f"binary_rewards({rw!r})", lambda rw=rw: binary_rewards(rw), [nm]))
    return out


# ---------------------------------------------------------------- framework readers (SPEC section 7)
def reader_cases() -> list[dict]:
    from grpo_theory.predict import objective_for

    G_ = "API: objective_for on TRL, verl and OpenRLHF configs (SPEC section 7)"
    out = []

    def fields(**want):
        def chk(v):
            obj = v[0]
            bad = {k: (getattr(obj, k), w) for k, w in want.items() if getattr(obj, k) != w}
            return not bad or f"fields (got, want) {bad}"
        return chk

    def rd(fw, cfg, **kw):
        return lambda: _quiet(lambda: objective_for(framework=fw, config=cfg, **kw))
    # TRL
    for b, G in ((0.04, 8), (0.2, 16), (1.0, 2)):
        out.append(_ok(G_, f"TRL {{beta: {b}, num_generations: {G}, use_bias_correction_kl: False}}: reverse k3, ddof 1, "
                           f"eps 1e-4", rd("trl", {"beta": b, "num_generations": G, "use_bias_correction_kl": False}),
                       fields(beta=b, group_size=G, kl_estimator="k3", std_ddof=1, std_eps=1e-4, normalization="scale")))
        out.append(_ok(G_, f"TRL {{beta: {b}, num_generations: {G}, use_bias_correction_kl: True}}: k3 x ratio (direct)",
                       rd("trl", {"beta": b, "num_generations": G, "use_bias_correction_kl": True}),
                       fields(beta=b, group_size=G, kl_estimator="k3_ratio", std_ddof=1)))
        out.append(_ok(G_, f"TRL {{beta: {b}, num_generations: {G}, scale_rewards: 'none'}}: shift",
                       rd("trl", {"beta": b, "num_generations": G, "scale_rewards": "none"}),
                       fields(beta=b, group_size=G, normalization="shift")))
    out.append(_ok(G_, "TRL {num_generations: 8} (beta not given): TRL's default beta = 0",
                   rd("trl", {"num_generations": 8}), fields(beta=0.0)))
    out.append(_ok(G_, "TRL {beta: 0.1, num_generations: 4, loss_type: 'grpo'}", rd("trl", {"beta": 0.1,
                                                                                             "num_generations": 4,
                                                                                             "loss_type": "grpo"}),
                   fields(loss_type="grpo", group_size=4)))
    out.append(_either(G_, "TRL {beta: 0.1, num_generations: 4, scale_rewards: False} (older bool form): shift, or "
                           "refused naming scale_rewards",
                       rd("trl", {"beta": 0.1, "num_generations": 4, "scale_rewards": False}),
                       fields(normalization="shift"), ["scale_rewards"]))
    out.append(_either(G_, "TRL {beta: 0.1, num_generations: 4, scale_rewards: True} (older bool form): scale, or "
                           "refused naming scale_rewards",
                       rd("trl", {"beta": 0.1, "num_generations": 4, "scale_rewards": True}),
                       fields(normalization="scale"), ["scale_rewards"]))
    # verl
    def verl(kl_loss=None, kl_reward=None, norm=True, n=5, est="grpo"):
        cfg = {"algorithm": {"adv_estimator": est, "norm_adv_by_std_in_grpo": norm},
               "actor_rollout_ref": {"rollout": {"n": n}, "actor": {}}}
        if kl_loss:
            cfg["actor_rollout_ref"]["actor"].update(use_kl_loss=True, kl_loss_coef=kl_loss[0], kl_loss_type=kl_loss[1])
        if kl_reward:
            cfg["algorithm"].update(use_kl_in_reward=True, kl_penalty=kl_reward[1],
                                    kl_ctrl={"type": "fixed", "kl_coef": kl_reward[0]})
        return cfg
    for typ, est, L, V in (("low_var_kl", "k3", 20.0, 10.0), ("kl", "k1", None, None), ("mse", "k2", None, None),
                           ("abs", "abs", None, None)):
        mk = _either if est == "k1" else (lambda g_, lab, call, chk, names: _ok(g_, lab, call, chk))
        out.append(mk(G_, f"verl use_kl_loss kl_loss_type={typ!r} coef 0.01 n=5: {est} in the loss"
                          + (" (or refused: no regularisation)" if est == "k1" else ""),
                      rd("verl", verl(kl_loss=(0.01, typ))),
                      fields(beta=0.01, group_size=5, kl_estimator=est, kl_placement="loss", kl_log_ratio_clamp=L,
                             kl_value_clamp=V, std_ddof=1, std_eps=1e-6), ["kl"]))
    out.append(_ok(G_, "verl use_kl_in_reward kl_penalty='kl' coef 0.002 n=8: k1 in the reward",
                   rd("verl", verl(kl_reward=(0.002, "kl"), n=8)),
                   fields(beta=0.002, group_size=8, kl_estimator="k1", kl_placement="reward")))
    out.append(_ok(G_, "verl norm_adv_by_std_in_grpo=False, low_var_kl 0.05: shift",
                   rd("verl", verl(kl_loss=(0.05, "low_var_kl"), norm=False)), fields(normalization="shift", beta=0.05)))
    out.append(_ok(G_, "verl adv_estimator='rloo', low_var_kl 0.05: RLOO", rd("verl", verl(kl_loss=(0.05, "low_var_kl"),
                                                                                          est="rloo")),
                   fields(advantage="rloo")))
    out.append(_err(G_, "verl adv_estimator='gae' (not modelled: named)", rd("verl", verl(kl_loss=(0.05, "low_var_kl"),
                                                                                         est="gae")), ["gae"]))
    out.append(_err(G_, "verl adv_estimator='grpoo' (misspelt)", rd("verl", verl(kl_loss=(0.05, "low_var_kl"),
                                                                                est="grpoo")), ["grpoo"]))
    # OpenRLHF
    for b, G in ((0.02, 4), (0.001, 16)):
        out.append(_ok(G_, f"OpenRLHF {{init_kl_coef: {b}, n_samples_per_prompt: {G}, advantage_estimator: group_norm}}: "
                           f"k1 after normalisation (advantage), ddof 1, eps 1e-9",
                       rd("openrlhf", {"init_kl_coef": b, "n_samples_per_prompt": G,
                                       "advantage_estimator": "group_norm"}),
                       fields(beta=b, group_size=G, kl_estimator="k1", kl_placement="advantage", std_ddof=1,
                              std_eps=1e-9)))
        out.append(_ok(G_, f"OpenRLHF {{init_kl_coef: {b}, n_samples_per_prompt: {G}, group_norm, use_kl_loss, "
                           f"kl_estimator: k3}}: k3 in the loss",
                       rd("openrlhf", {"init_kl_coef": b, "n_samples_per_prompt": G, "advantage_estimator": "group_norm",
                                       "use_kl_loss": True, "kl_estimator": "k3"}),
                       fields(beta=b, group_size=G, kl_estimator="k3", kl_placement="loss")))
    out.append(_either(G_, "OpenRLHF argv list ['--init_kl_coef', '0.05', '--n_samples_per_prompt', '6', "
                           "'--advantage_estimator', 'group_norm'] (read, or refused naming config)",
                       rd("openrlhf", ["--init_kl_coef", "0.05", "--n_samples_per_prompt", "6", "--advantage_estimator",
                                       "group_norm"]), fields(beta=0.05, group_size=6), ["config"]))
    E = [
        ("objective_for(framework='trl', config={'beta': -0.1, 'num_generations': 4})",
         rd("trl", {"beta": -0.1, "num_generations": 4}), ["beta"]),
        ("objective_for(framework='trl', config={'beta': 0.1, 'num_generations': 1})",
         rd("trl", {"beta": 0.1, "num_generations": 1}), ["num_generations"]),
        ("objective_for(framework='trl', config={'beta': 'high', 'num_generations': 4})",
         rd("trl", {"beta": "high", "num_generations": 4}), ["beta"]),
        ("objective_for(framework='trl', config={'beta': 0.1, 'scale_rewards': 'zscore'})",
         rd("trl", {"beta": 0.1, "num_generations": 4, "scale_rewards": "zscore"}), ["scale_rewards"]),
        ("objective_for(framework='trl', config={'beta': 0.1, 'loss_type': 'mean'})",
         rd("trl", {"beta": 0.1, "num_generations": 4, "loss_type": "mean"}), ["loss_type"]),
        ("objective_for(framework='trl', config={...}, trl_version='banana')",
         rd("trl", {"beta": 0.1, "num_generations": 4}, trl_version="banana"), ["banana"]),
        ("objective_for(framework='TRL', config={'beta': 0.1})", rd("TRL", {"beta": 0.1}), ["TRL"]),
        ("objective_for(framework='deepspeed', config={'beta': 0.1})", rd("deepspeed", {"beta": 0.1}), ["deepspeed"]),
        ("objective_for(framework='trl') (no config)", lambda: objective_for(framework="trl"), ["config"]),
        ("objective_for(framework='trl', config='no_such_file.json')", rd("trl", "no_such_file.json"),
         ["no_such_file.json"]),
        ("objective_for({'beta': 0.1}, framework='trl', config={'beta': 0.1}) (both)",
         lambda: objective_for({"beta": 0.1}, framework="trl", config={"beta": 0.1}), ["config"]),
        ("objective_for({'beta': 0.1, 'group_sise': 4}) (misspelt field)",
         lambda: objective_for({"beta": 0.1, "group_sise": 4}), ["group_sise"]),
        ("objective_for(framework='verl', config={'algorithm': {'adv_estimator': 'grpo'}, ... kl_loss_type: 'k9'})",
         rd("verl", verl(kl_loss=(0.05, "k9"))), ["k9"]),
        ("objective_for(framework='verl', ... kl_loss_coef: -0.05)", rd("verl", verl(kl_loss=(-0.05, "low_var_kl"))),
         ["kl_loss_coef"]),
        ("objective_for(framework='verl', ... rollout.n: 0)", rd("verl", verl(kl_loss=(0.05, "low_var_kl"), n=0)),
         ["n"]),
        ("objective_for(framework='openrlhf', config={'init_kl_coef': 0.01, 'n_samples_per_prompt': 4, "
         "'advantage_estimator': 'group-norm'})",
         rd("openrlhf", {"init_kl_coef": 0.01, "n_samples_per_prompt": 4, "advantage_estimator": "group-norm"}),
         ["group-norm"]),
        ("objective_for(framework='openrlhf', config={'init_kl_coef': 'x', ...})",
         rd("openrlhf", {"init_kl_coef": "x", "n_samples_per_prompt": 4, "advantage_estimator": "group_norm"}),
         ["init_kl_coef"]),
        ("objective_for(framework='openrlhf', config={... 'kl_estimator': 'k7', 'use_kl_loss': True})",
         rd("openrlhf", {"init_kl_coef": 0.01, "n_samples_per_prompt": 4, "advantage_estimator": "group_norm",
                         "use_kl_loss": True, "kl_estimator": "k7"}), ["k7"]),
    ]
    out += [_err(G_, lab, call, names) for lab, call, names in E]
    return out


def all_api_cases() -> list[dict]:
    return (kl_cases() + zero_limit_cases() + kl_rest_cases() + dynamics_cases() + token_cases()
            + predict_helper_cases() + small_cases() + reader_cases())
