"""Cases of the sixth hostile audit (issue 45), part two: the functions no round called.

The KL module's slopes and shifts, the output gradient, the proximal map and its fixed points, the large-G
potential, ``ascent``/``grpo_steps``/``flow`` tolerances, ``predict``'s finite-time pieces (``sampling_floor``,
``fit_shift``, ``binary_question``, ``PromptField``, ``flow_table``, ``fit_clock``, ``reward_kl_tradeoff``) and
the trainer's configuration (``group_advantages``, ``GRPOConfig``, ``GPTConfig``, ``synthetic_binary_task``).
Numbers are checked against :mod:`hostile_audit_round6_ref` or closed forms written here.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round6_ref as ref

NAN, INF = float("nan"), math.inf


def _c(group, label, call, expect, names=(), check=None, wrong=()):
    return dict(group=group, label=label, call=call, expect=expect, names=list(names), check=check, wrong=list(wrong))


def _val(res):
    return np.asarray(res["value"], float)


def _q(p=0.3):
    from grpo_theory import Question

    return Question([p, 1 - p], [1, 0])


def _o(**kw):
    from grpo_theory import Objective

    return Objective(**{"beta": 0.5, "group_size": 2, **kw})


# ---------------------------------------------------------------- KL module
def kl_cases() -> list[dict]:
    from grpo_theory import kl

    G = "KL slopes, shifts, coefficients"
    out = []
    lrs = [-30.0, -1.0, 0.0, 0.5, 3.0]
    for est in ("k1", "k2", "k3", "k3_ratio", "k3_plus", "abs"):
        want = [ref.kl_coef_loss(est, x) for x in lrs]
        out.append(_c(G, f"coefficient {est} (loss) at {lrs}",
                      lambda est=est: kl.coefficient(_o(kl_estimator=est), np.array(lrs)), "ok",
                      check=lambda tmp, res, w=want: np.allclose(_val(res), w, rtol=1e-12, atol=1e-12)
                      if est != "k1" else np.ptp(_val(res)) == 0))
        for beta in (0.25, 3.0):
            w2 = [beta * ref.kl_value(est, x) for x in lrs]
            out.append(_c(G, f"value_shift {est} beta={beta} (reward placement)",
                          lambda est=est, beta=beta: kl.value_shift(_o(beta=beta, kl_estimator=est, kl_placement="reward"),
                                                                    np.array(lrs)),
                          "either" if est in ("k3_ratio", "k3_plus") else "ok", [est],
                          check=lambda tmp, res, w=w2: np.allclose(_val(res), w, rtol=1e-12, atol=1e-12)))
    for est, lc, vc in (("k3", 20.0, 10.0), ("k2", None, 1.0), ("k1", 5.0, None), ("abs", 2.0, 1.5)):
        pts = [-40.0, -25.0, -3.0, -0.1, 0.2, 4.0, 25.0]
        want = [ref.kl_value(est, x, lc, vc) for x in pts]
        out.append(_c(G, f"estimator_value {est} with clamps log {lc}, value {vc}",
                      lambda est=est, lc=lc, vc=vc: kl.estimator_value(
                          _o(kl_estimator=est, kl_log_ratio_clamp=lc, kl_value_clamp=vc), np.array(pts)),
                      "ok", check=lambda tmp, res, w=want: np.allclose(_val(res), w, rtol=1e-12)))
        out.append(_c(G, f"discontinuities {est} clamps log {lc}, value {vc}: each at a clamp edge",
                      lambda est=est, lc=lc, vc=vc: kl.discontinuities(
                          _o(kl_estimator=est, kl_log_ratio_clamp=lc, kl_value_clamp=vc)),
                      "ok", check=lambda tmp, res, est=est, lc=lc, vc=vc: len(res["value"]) > 0 and all(
                          (lc is not None and math.isclose(abs(d), lc, rel_tol=1e-9))
                          or (vc is not None and math.isclose(ref.kl_value(est, d), vc, rel_tol=1e-7))
                          for d in res["value"])))
    out.append(_c(G, "value_slope k2 at [-2, 0, 3] = lr", lambda: kl.value_slope(_o(kl_estimator="k2"),
                                                                                   np.array([-2.0, 0.0, 3.0])),
                  "ok", check=lambda tmp, res: np.allclose(_val(res), [-2, 0, 3])))
    out.append(_c(G, "value_slope k3 at [-1, 2] = 1 - e^-lr", lambda: kl.value_slope(_o(kl_estimator="k3"),
                                                                                       np.array([-1.0, 2.0])),
                  "ok", check=lambda tmp, res: np.allclose(_val(res), [1 - math.e, 1 - math.exp(-2)])))
    out.append(_c(G, "value_slope k3 value-clamped at 10: 0 past the clamp (lr = -5)",
                  lambda: kl.value_slope(_o(kl_estimator="k3", kl_value_clamp=10.0), np.array([-5.0])),
                  "ok", check=lambda tmp, res: float(_val(res)[0]) == 0.0))
    out.append(_c(G, "coefficient with kl_placement='reward' (documented refusal)",
                  lambda: kl.coefficient(_o(kl_estimator="k1", kl_placement="reward"), np.array([0.1])), "error",
                  ["reward"]))
    bad_lr = [("text", "0.5"), ("None", None), ("a list of text", ["a", "b"]), ("a complex", 1 + 2j),
              ("NaN", NAN)]
    # lr = +inf is pi_ref = 0: k3's limits there, 1 - e^-lr -> 1 (slope and loss coefficient), beta (e^-lr + lr - 1)
    # and the log-ratio itself -> +inf (estimator_value gives the same limits)
    inf_limit = {"coefficient": 1.0, "value_slope": 1.0, "value_shift": INF, "flow_log_ratio": INF}
    for fn in ("coefficient", "value_slope", "value_shift", "flow_log_ratio"):
        for label, lr in bad_lr:
            out.append(_c(G, f"kl.{fn}(k3, lr={label})",
                          lambda fn=fn, lr=lr: getattr(kl, fn)(_o(kl_estimator="k3"), lr), "error", ["lr"]))
        out.append(_c(G, f"kl.{fn}(k3, lr=+inf)",
                      lambda fn=fn: getattr(kl, fn)(_o(kl_estimator="k3"), INF), "ok",
                      check=lambda tmp, res, w=inf_limit[fn]: float(_val(res)) == w))
    out.append(_c(G, "kl.coefficient(None, 0.1) (no objective)", lambda: kl.coefficient(None, 0.1), "error", ["None"]))
    out.append(_c(G, "kl.value_shift({'beta': 2, 'kl_estimator': 'k2'}, 3) (a dict objective)",
                  lambda: kl.value_shift({"beta": 2.0, "kl_estimator": "k2", "kl_placement": "reward"}, 3.0),
                  "either", [], check=lambda tmp, res: np.allclose(_val(res), 9.0)))
    out.append(_c(G, "kl.coefficient on a 2-d lr keeps its shape",
                  lambda: kl.coefficient(_o(kl_estimator="k2"), np.array([[0.1, 0.2], [0.3, 0.4]])), "ok",
                  check=lambda tmp, res: _val(res).shape == (2, 2) and np.allclose(_val(res), [[0.1, 0.2], [0.3, 0.4]])))
    out.append(_c(G, "kl.coefficient on an empty lr", lambda: kl.coefficient(_o(kl_estimator="k2"), np.array([])),
                  "either", ["lr"], check=lambda tmp, res: _val(res).shape == (0,)))
    return out


# ---------------------------------------------------------------- dynamics: gradient, proximal map, potential, steps
def dynamics_cases() -> list[dict]:
    from grpo_theory import dynamics as dy, stationarity_residual

    G = "dynamics: gradient, proximal map, potential"
    out = []
    for p, beta in ((0.3, 0.5), (0.05, 2.0), (0.9, 0.1)):
        x = ref.eq14(p, beta)
        out.append(_c(G, f"output_gradient at Eq. 14's point (p={p}, beta={beta}) is constant",
                      lambda p=p, beta=beta, x=x: dy.output_gradient(_q(p), _o(beta=beta), np.array([x, 1 - x])),
                      "ok", check=lambda tmp, res: abs(float(np.ptp(_val(res)))) < 1e-9))
        out.append(_c(G, f"stationarity_residual at Eq. 14's point (p={p}, beta={beta}) ~ 0",
                      lambda p=p, beta=beta, x=x: stationarity_residual(_q(p), _o(beta=beta), [x, 1 - x]),
                      "ok", check=lambda tmp, res: abs(float(res["value"])) < 1e-9))
        out.append(_c(G, f"proximal map fixes Eq. 14's point (p={p}, beta={beta})",
                      lambda p=p, beta=beta, x=x: dy.proximal_map(_q(p), _o(beta=beta))(np.array([x, 1 - x])),
                      "ok", check=lambda tmp, res, x=x: abs(float(_val(res)[0]) - x) < 1e-8))
        out.append(_c(G, f"map_fixed_points (p={p}, beta={beta}) are Eq. 14's point",
                      lambda p=p, beta=beta: dy.map_fixed_points(_q(p), _o(beta=beta)),
                      "ok", check=lambda tmp, res, x=x: len(res["value"]) >= 1 and all(
                          abs(float(m.pi[0]) - x) < 1e-8 for m in res["value"])))
    # the gradient at pi_ref, G = 2 reverse: g = P_2 (the penalty term vanishes): [pi(b), -pi(a)] for rewards 1/0
    out.append(_c(G, "output_gradient at pi_ref (G=2, reverse) = P_2 = [0.7, -0.3]",
                  lambda: dy.output_gradient(_q(0.3), _o(), np.array([0.3, 0.7])), "ok",
                  check=lambda tmp, res: np.allclose(_val(res), [0.7, -0.3], atol=1e-12)))
    out.append(_c(G, "output_gradient direct at pi_ref = P_2 - beta (log 1 + 1)",
                  lambda: dy.output_gradient(_q(0.3), _o(penalty="direct"), np.array([0.3, 0.7])), "ok",
                  check=lambda tmp, res: np.allclose(_val(res), [0.7 - 0.5, -0.3 - 0.5], atol=1e-12)))
    # potential F(pi) = 2 asin(sqrt(E s)) - beta D
    for pen, pi in (("reverse", [0.5, 0.5]), ("direct", [0.5, 0.5]), ("reverse", [0.9, 0.1]), ("direct", [0.01, 0.99])):
        pr = np.array([0.2, 0.8])
        piv = np.array(pi)
        D = float(pr @ np.log(pr / piv)) if pen == "reverse" else float(piv @ np.log(piv / pr))
        want = 2 * math.asin(math.sqrt(pi[0])) - 1.0 * D
        out.append(_c(G, f"potential_objective {pen} at {pi}",
                      lambda pen=pen, pi=pi: dy.potential_objective(_q(0.2), _o(beta=1.0, group_size=INF, penalty=pen),
                                                                    pi),
                      "ok", check=lambda tmp, res, w=want: ref.close(res["value"], w, rel=1e-12)))
    for label, p in (("p=-0.1", -0.1), ("p=1.0000001", 1.0000001), ("p=nan", NAN), ("p='0.3'", "0.3")):
        out.append(_c(G, f"arcsin_potential({label})", lambda p=p: dy.arcsin_potential(p), "error", ["p"]))
    out.append(_c(G, "arcsin_potential(0.5, variance_eps=-1e-300)", lambda: dy.arcsin_potential(0.5, variance_eps=-1e-300),
                  "error", ["variance_eps"]))
    out.append(_c(G, "arcsin_potential([0, 0.25, 1]) = 2 asin(sqrt p)",
                  lambda: dy.arcsin_potential([0.0, 0.25, 1.0]), "ok",
                  check=lambda tmp, res: np.allclose(_val(res), [0.0, 2 * math.asin(0.5), math.pi])))
    bad_pi = [("sums to 0.9", [0.3, 0.6]), ("negative", [1.2, -0.2]), ("three entries", [0.3, 0.3, 0.4]),
              ("NaN", [NAN, 0.5]), ("2-d", [[0.3, 0.7]]), ("text", ["0.3", "0.7"]), ("None", None)]
    for label, pi in bad_pi:
        out.append(_c(G, f"output_gradient pi {label}",
                      lambda pi=pi: dy.output_gradient(_q(), _o(), pi), "error", ["pi"]))
        out.append(_c(G, f"proximal step pi_prev {label}",
                      lambda pi=pi: dy.proximal_map(_q(), _o())(pi), "error", ["pi"]))
        out.append(_c(G, f"potential_objective pi {label}",
                      lambda pi=pi: dy.potential_objective(_q(), _o(beta=1.0, group_size=INF), pi), "error", ["pi"]))
        out.append(_c(G, f"stationarity_residual pi {label}",
                      lambda pi=pi: stationarity_residual(_q(), _o(), pi), "error", ["pi"]))
    out.append(_c(G, "potential_objective at G=8 (documented: G = inf only)",
                  lambda: dy.potential_objective(_q(), _o(group_size=8), [0.5, 0.5]), "error", ["G"]))
    out.append(_c(G, "potential_objective with rewards (2, 0) (documented: rewards in {0, 1})",
                  lambda: dy.potential_objective(__import__("grpo_theory").Question([0.3, 0.7], [2, 0]),
                                                 _o(group_size=INF), [0.5, 0.5]), "error", ["reward"]))
    for label, period in (("True", True), ("1", 1), ("-2", -2), ("nan", NAN), ("'2'", "2"), ("10**6", 10**6)):
        out.append(_c(G, f"map_cycles period={label}", lambda period=period: dy.map_cycles(_q(0.05), _o(beta=0.2),
                                                                                           period, n_grid=401),
                      "either" if label in ("1", "10**6") else "error", ["period"]))
    # steps, rates, tolerances
    pi0 = np.array([0.3, 0.7])
    for label, kw, names in [
            ("ascent lr=-0.0", dict(lr=-0.0, steps=3), ["lr"]), ("ascent lr=-0.1", dict(lr=-0.1, steps=3), ["lr"]),
            ("ascent lr=nan", dict(lr=NAN, steps=3), ["lr"]), ("ascent lr=inf", dict(lr=INF, steps=3), ["lr"]),
            ("ascent steps=True", dict(lr=0.1, steps=True), ["steps"]), ("ascent steps=-1", dict(lr=0.1, steps=-1), ["steps"]),
            ("ascent lr='0.1'", dict(lr="0.1", steps=3), ["lr"]), ("ascent every=-1", dict(lr=0.1, steps=3, every=-1),
                                                                     ["every"])]:
        out.append(_c(G, label, lambda kw=kw: dy.ascent(_q(), _o(), pi0, **kw), "error", names))
    for label, kw, names in [
            ("grpo_steps clip_eps=inf", dict(clip_eps=INF), ["clip_eps"]),
            ("grpo_steps clip_eps=nan", dict(clip_eps=NAN), ["clip_eps"]),
            ("grpo_steps inner_updates=-1", dict(inner_updates=-1), ["inner_updates"]),
            ("grpo_steps inner_updates=1.5", dict(inner_updates=1.5), ["inner_updates"]),
            ("grpo_steps n_groups=-4", dict(n_groups=-4), ["n_groups"]),
            ("grpo_steps seed=-1", dict(seed=-1), ["seed"]),
            ("grpo_steps seed='a'", dict(seed="a"), ["seed"]),
            ("grpo_steps lr=nan", dict(lr=NAN), ["lr"]),
            ("grpo_steps n_batches=-1", dict(n_batches=-1), ["n_batches"])]:
        args = dict(dict(lr=0.1, n_batches=3), **kw)
        out.append(_c(G, label, lambda args=args: dy.grpo_steps(_q(), _o(), pi0, **args), "error", names))
    for label, kw, names in [("flow rtol=0", dict(rtol=0.0), ["rtol"]), ("flow rtol=-1e-9", dict(rtol=-1e-9), ["rtol"]),
                             ("flow atol=nan", dict(atol=NAN), ["atol"]), ("flow rtol='1e-9'", dict(rtol="1e-9"), ["rtol"]),
                             ("flow rtol=10", dict(rtol=10.0), ["rtol"])]:
        out.append(_c(G, label, lambda kw=kw: dy.flow(_q(), _o(), pi0, [0, 1], **kw),
                      "flag" if "=10" in label else "error", names))
    out.append(_c(G, "flow t unsorted [0, 2, 1]", lambda: dy.flow(_q(), _o(), pi0, [0, 2, 1]), "error", ["t"]))
    out.append(_c(G, "flow to t=1e4 ends at Eq. 14", lambda: dy.flow(_q(), _o(), pi0, [0, 1e4], with_points=False),
                  "ok", check=lambda tmp, res: abs(float(res["value"].pi[-1][0]) - ref.eq14(0.3, 0.5)) < 1e-7))
    out.append(_c(G, "ascent 2000 steps lr=0.5 ends at Eq. 14",
                  lambda: dy.ascent(_q(), _o(), pi0, lr=0.5, steps=2000, with_points=False),
                  "ok", check=lambda tmp, res: abs(float(res["value"].pi[-1][0]) - ref.eq14(0.3, 0.5)) < 1e-6))
    out.append(_c(G, "clamp_critical_beta without a value clamp", lambda: __import__("grpo_theory").clamp_critical_beta(
        _q(), _o(kl_estimator="k3")), "error", ["kl_value_clamp"]))
    out.append(_c(G, "clamp_critical_beta, clamp in the reward placement",
                  lambda: __import__("grpo_theory").clamp_critical_beta(
                      _q(), _o(kl_estimator="k3", kl_value_clamp=10.0, kl_placement="reward")), "error", ["placement"]))
    return out


# ---------------------------------------------------------------- predict's finite-time pieces
def predict_piece_cases() -> list[dict]:
    from grpo_theory import predict as pr

    G = "predict: finite-time pieces"
    out = []
    for q, m in (([0.5], [2]), ([0.1, 0.9], [7, 3]), ([0.0, 1.0, 0.33], [5, 5, 11]), ([0.42], [60])):
        out.append(_c(G, f"sampling_floor({q}, {m})", lambda q=q, m=m: pr.sampling_floor(q, m), "ok",
                      check=lambda tmp, res, q=q, m=m: ref.close(res["value"], ref.sampling_floor(q, m), rel=1e-9)))
    for label, q, m, names in [("q=1.5", [1.5], [4], ["q"]), ("q=-0.1", [-0.1], [4], ["q"]), ("q=nan", [NAN], [4], ["q"]),
                               ("m=0", [0.5], [0], ["m"]), ("m=-3", [0.5], [-3], ["m"]), ("m=2.5", [0.5], [2.5], ["m"]),
                               ("lengths 2 and 1", [0.5, 0.4], [4], ["m"]), ("empty", [], [], ["q"]),
                               ("m=10**9 (exact sum too long)", [0.5], [10**9], ["m"])]:
        out.append(_c(G, f"sampling_floor {label}", lambda q=q, m=m: pr.sampling_floor(q, m),
                      "either" if "10**9" in label else "error", names,
                      check=lambda tmp, res: 0 < float(res["value"]) < 1e-4))
    for z0, k, m in (([0.0, 0.0], [3, 5], [10, 10]), ([-2.0, 1.0, 0.3], [1, 8, 4], [10, 10, 10]), ([4.0], [1], [20])):
        out.append(_c(G, f"fit_shift({z0}, {k}, {m})", lambda z0=z0, k=k, m=m: pr.fit_shift(z0, k, m), "ok",
                      check=lambda tmp, res, z0=z0, k=k, m=m: ref.close(res["value"], ref.fit_shift(z0, k, m), rel=1e-7)))
    out.append(_c(G, "fit_shift all correct: +50 (documented edge)", lambda: pr.fit_shift([0.0], [10], [10]), "ok",
                  check=lambda tmp, res: float(res["value"]) == 50))
    for label, z0, k, m, names in [("k > m", [0.0], [11], [10], ["k"]), ("k negative", [0.0], [-1], [10], ["k"]),
                                   ("z0 NaN", [NAN], [3], [10], ["z0"]), ("lengths differ", [0.0, 1.0], [3], [10], ["k"]),
                                   ("m = 0", [0.0], [0], [0], ["m"]), ("k fractional", [0.0], [2.5], [10], ["k"]),
                                   ("empty", [], [], [], ["z0"])]:
        out.append(_c(G, f"fit_shift {label}", lambda z0=z0, k=k, m=m: pr.fit_shift(z0, k, m), "error", names))
    for p in (0.3, 0.0, 1.0):              # documented: p in [0, 1]
        out.append(_c(G, f"binary_question({p}): pi_ref [p, 1 - p], rewards [1, 0]", lambda p=p: pr.binary_question(p),
                      "ok", check=lambda tmp, res, p=p: np.allclose(res["value"].pi_ref, [p, 1 - p])
                      and np.allclose(getattr(res["value"], "rewards", [1, 0]), [1, 0])))
    for label, p in (("-0.1", -0.1), ("nan", NAN), ("1.5", 1.5), ("'0.3'", "0.3"), ("[0.3]", [0.3])):
        out.append(_c(G, f"binary_question({label})", lambda p=p: pr.binary_question(p), "error", ["p"]))
    for p, beta in ((0.25, 1.0), (0.05, 0.3), (0.8, 2.0)):
        x = ref.eq14(p, beta)
        out.append(_c(G, f"PromptField h vanishes at Eq. 14 (p={p}, beta={beta})",
                      lambda p=p, beta=beta, x=x: pr.PromptField(_o(beta=beta), [p]).h(np.array([math.log(x / (1 - x))])),
                      "ok", check=lambda tmp, res: abs(float(_val(res)[0])) < 1e-6))
    for label, p, kw, names in [("p=0", [0.0], {}, ["p"]), ("p=1", [1.0], {}, ["p"]), ("p=nan", [NAN], {}, ["p"]),
                                ("p=[]", [], {}, ["p"]), ("z_step=0", [0.3], dict(z_step=0.0), ["z_step"]),
                                ("z_step=-0.1", [0.3], dict(z_step=-0.1), ["z_step"]),
                                ("tol=0", [0.3], dict(tol=0.0), ["tol"]), ("tol=nan", [0.3], dict(tol=NAN), ["tol"])]:
        out.append(_c(G, f"PromptField {label}", lambda p=p, kw=kw: pr.PromptField(_o(), p, **kw), "error", names))
    for label, starts, kw, names in [("t_max=0", [0.3], dict(t_max=0.0), ["t_max"]),
                                     ("t_max=-5", [0.3], dict(t_max=-5.0), ["t_max"]),
                                     ("t_max=nan", [0.3], dict(t_max=NAN), ["t_max"]),
                                     ("n_times=0", [0.3], dict(n_times=0), ["n_times"]),
                                     ("n_times=2.5", [0.3], dict(n_times=2.5), ["n_times"]),
                                     ("max_exact=0", [0.3], dict(max_exact=0), ["max_exact"]),
                                     ("starts=[1.2]", [1.2], {}, ["starts"]), ("starts=[]", [], {}, ["starts"]),
                                     ("starts=['a']", ["a"], {}, ["starts"])]:
        out.append(_c(G, f"flow_table {label}", lambda s=starts, kw=kw: pr.flow_table(s, _o(), **kw), "error", names))

    def _table():
        return pr.flow_table([0.2, 0.5], _o(), t_max=100.0, n_times=50)
    for label, kw, names in [("step=0", dict(step=0.0, mean_reward=0.5), ["step"]),
                             ("step=-3", dict(step=-3.0, mean_reward=0.5), ["step"]),
                             ("mean_reward=1.5", dict(step=10.0, mean_reward=1.5), ["mean_reward"]),
                             ("mean_reward=0.1 (below the start)", dict(step=10.0, mean_reward=0.1), ["mean_reward"]),
                             ("mean_reward=nan", dict(step=10.0, mean_reward=NAN), ["mean_reward"]),
                             ("p of 3 entries for a 2-start table", dict(step=10.0, mean_reward=0.5), ["p"])]:
        p = [0.2, 0.5, 0.3] if "3 entries" in label else [0.2, 0.5]
        out.append(_c(G, f"fit_clock {label}", lambda kw=kw, p=p: pr.fit_clock(_table(), p, **kw), "error", names))
    out.append(_c(G, "fit_clock at the start's own mean reward: clock 0 or refused",
                  lambda: pr.fit_clock(_table(), [0.2, 0.5], step=10.0, mean_reward=0.35), "either", ["mean_reward"],
                  check=lambda tmp, res: abs(float(res["value"])) < 1e-6))
    samples = lambda: pr.samples_from_counts([20, 20], [4, 12])   # noqa: E731
    for label, betas, names in [("empty", [], ["betas"]), ("negative", [-0.5], ["betas"]), ("nan", [NAN], ["betas"]),
                                ("zero", [0.0], ["beta"]), ("text", ["0.5"], ["betas"]), ("a number", 0.5, ["betas"]),
                                ("10**6 values", list(np.linspace(0.1, 10, 10**6)), ["betas"])]:
        out.append(_c(G, f"reward_kl_tradeoff betas {label}",
                      lambda b=betas: pr.reward_kl_tradeoff(samples(), _o(), b), "error", names))
    out.append(_c(G, "reward_kl_tradeoff betas [0.5, 0.5] (repeated): two equal rows",
                  lambda: pr.reward_kl_tradeoff(samples(), _o(), [0.5, 0.5]), "either", ["betas"],
                  check=lambda tmp, res: len(res["value"]) == 2 and abs(
                      float(res["value"].mean_pred.iloc[0]) - (ref.eq14(0.2, 0.5) + ref.eq14(0.6, 0.5)) / 2) < 1e-6))
    out.append(_c(G, "reward_kl_tradeoff betas [0.25, 4]: mean Eq. 14 over the prompts",
                  lambda: pr.reward_kl_tradeoff(samples(), _o(), [0.25, 4.0]), "ok",
                  check=lambda tmp, res: all(abs(float(res["value"].mean_pred.iloc[i]) - (
                      ref.eq14(0.2, b) + ref.eq14(0.6, b)) / 2) < 1e-6 for i, b in enumerate([0.25, 4.0]))))
    return out


# ---------------------------------------------------------------- the trainer's configuration (imports torch)
def training_cases() -> list[dict]:
    G = "trainer configuration"
    out = []

    def adv(rewards, **kw):
        import torch

        from grpo_theory.training import group_advantages
        return group_advantages(torch.as_tensor(rewards, dtype=torch.float64), **kw).numpy()

    def np_adv(r, ddof=0, eps=0.0, norm="scale"):
        r = np.asarray(r, float)
        s = float(np.max(np.abs(r))) if r.size else 0.0
        if norm == "scale" and s > 0:                  # scale-invariant: avoid overflow of (r - m)^2
            r, eps = r / s, eps / s
        m = r.mean(-1, keepdims=True)
        if norm == "shift":
            return r - m
        sd = np.sqrt(((r - m) ** 2).sum(-1, keepdims=True) / (r.shape[-1] - ddof))
        den = sd + eps
        return np.where(den > 0, (r - m) / np.where(den > 0, den, 1), 0.0)
    for r, kw in (([1, 0, 0, 1], {}), ([[1, 0, 0], [0.5, 0.5, 0.5]], {}), ([3.0, 1.0, 2.0], dict(std_ddof=1)),
                  ([1, 0], dict(std_eps=1e-4)), ([5, 1, 1, 1], dict(normalization="shift")),
                  ([1e-300, 0, 0], {}), ([1e200, -1e200], {})):
        want = np_adv(r, kw.get("std_ddof", 0), kw.get("std_eps", 0.0), kw.get("normalization", "scale"))
        out.append(_c(G, f"group_advantages({r}, {kw})", lambda r=r, kw=kw: adv(r, **kw), "ok",
                      check=lambda tmp, res, w=want: np.allclose(_val(res), w, rtol=1e-12, atol=1e-12)))
    for label, r, kw, names in [("one member", [1.0], {}, ["G"]), ("NaN reward", [1.0, NAN], {}, ["rewards"]),
                                ("normalization='std'", [1.0, 0.0], dict(normalization="std"), ["normalization"]),
                                ("std_ddof=2", [1.0, 0.0, 0.5], dict(std_ddof=2), ["std_ddof"]),
                                ("std_eps=-1", [1.0, 0.0], dict(std_eps=-1.0), ["std_eps"]),
                                ("empty", [], {}, ["rewards"])]:
        out.append(_c(G, f"group_advantages {label}", lambda r=r, kw=kw: adv(r, **kw), "error", names))

    def cfg(**kw):
        from grpo_theory.training import GRPOConfig
        return GRPOConfig(**kw)
    bad = [("clip_eps=-0.2", dict(clip_eps=-0.2)), ("clip_eps=nan", dict(clip_eps=NAN)),
           ("inner_updates=0", dict(inner_updates=0)), ("inner_updates=1.5", dict(inner_updates=1.5)),
           ("learning_rate=0", dict(learning_rate=0.0)), ("learning_rate=-1e-3", dict(learning_rate=-1e-3)),
           ("learning_rate=inf", dict(learning_rate=INF)), ("learning_rate='3e-4'", dict(learning_rate="3e-4")),
           ("optimizer='adamw'", dict(optimizer="adamw")), ("final_lr_fraction=1.5", dict(final_lr_fraction=1.5)),
           ("final_lr_fraction=-0.1", dict(final_lr_fraction=-0.1)), ("warmup_steps=-1", dict(warmup_steps=-1)),
           ("questions_per_step=0", dict(questions_per_step=0)), ("groups_per_question=0", dict(groups_per_question=0)),
           ("steps=0", dict(steps=0)), ("steps=2.5", dict(steps=2.5)), ("steps=-10", dict(steps=-10)),
           ("sampling='greedy'", dict(sampling="greedy")), ("device='tpu'", dict(device="tpu")),
           ("dtype='float8'", dict(dtype="float8")), ("log_every=0", dict(log_every=0)),
           ("checkpoint_every=-5", dict(checkpoint_every=-5)), ("final_window=0", dict(final_window=0.0)),
           ("final_window=1.5", dict(final_window=1.5)), ("num_threads=0", dict(num_threads=0)),
           ("num_threads=-2", dict(num_threads=-2)), ("convergence_tail=0", dict(convergence_tail=0.0)),
           ("convergence_tail=2", dict(convergence_tail=2.0)), ("seed=-1", dict(seed=-1)), ("seed=1.5", dict(seed=1.5)),
           ("max_steps=0 with until_stationary", dict(until_stationary=True, max_steps=0)),
           ("warmup_steps=2000 > steps=1500", dict(warmup_steps=2000))]
    for label, kw in bad:
        name = label.split("=")[0]
        out.append(_c(G, f"GRPOConfig {label}", lambda kw=kw: cfg(**kw), "flag" if "> steps" in label else "error",
                      [name]))
    out.append(_c(G, "GRPOConfig objective with group_size=inf (documented refusal)",
                  lambda: cfg(objective=_o(group_size=INF)), "error", ["group_size"]))
    out.append(_c(G, "GRPOConfig objective with variance_eps=1e-3 (documented refusal)",
                  lambda: cfg(objective=_o(group_size=4, variance_eps=1e-3)), "error", ["variance_eps"]))
    out.append(_c(G, "GRPOConfig objective=None", lambda: cfg(objective=None), "error", ["objective"]))
    out.append(_c(G, "GRPOConfig objective={'beta': 0.5, 'group_size': 4} (a dict)",
                  lambda: cfg(objective={"beta": 0.5, "group_size": 4}), "either", ["objective"],
                  check=lambda tmp, res: res["value"].objective.beta == 0.5 and res["value"].objective.group_size == 4))
    out.append(_c(G, "GRPOConfig objective='beta=0.5' (text)", lambda: cfg(objective="beta=0.5"), "error", ["objective"]))

    def gpt(**kw):
        from grpo_theory.training import GPTConfig
        return GPTConfig(**kw)
    for label, kw in [("vocab_size=0", dict(vocab_size=0)), ("vocab_size=-3", dict(vocab_size=-3)),
                      ("n_embd=65 with n_head=4", dict(vocab_size=10, n_embd=65)),
                      ("dropout=1.5", dict(vocab_size=10, dropout=1.5)), ("block_size=0", dict(vocab_size=10, block_size=0)),
                      ("n_layer=-1", dict(vocab_size=10, n_layer=-1)), ("vocab_size=2.5", dict(vocab_size=2.5))]:
        name = "n_embd" if "n_embd" in label else label.split("=")[0]
        out.append(_c(G, f"GPTConfig {label}", lambda kw=kw: gpt(**kw), "error", [name]))

    def task(**kw):
        from grpo_theory.training import synthetic_binary_task
        return synthetic_binary_task(**kw)
    for label, kw, name in [("answer_length=3", dict(answer_length=3), "answer_length"),
                            ("n_questions=0", dict(n_questions=0), "n_questions"),
                            ("p_range=(0.9, 0.1)", dict(p_range=(0.9, 0.1)), "p_range"),
                            ("p_range=(-0.1, 0.5)", dict(p_range=(-0.1, 0.5)), "p_range"),
                            ("p_range=(0, 1)", dict(p_range=(0.0, 1.0)), "p_range"),
                            ("p_range=(0.5,)", dict(p_range=(0.5,)), "p_range")]:
        out.append(_c(G, f"synthetic_binary_task {label}", lambda kw=kw: task(**kw),
                      "either" if "(0, 1)" in label else "error", [name]))
    out.append(_c(G, "synthetic_binary_task(n_questions=5, p_range=(0.2, 0.3)): rewarded frequencies in range",
                  lambda: task(n_questions=5, p_range=(0.2, 0.3)), "ok",
                  check=lambda tmp, res: res["value"][1].shape[0] == 5 and bool(np.all(
                      (np.max(res["value"][1], axis=1) <= 1)))))
    return out
