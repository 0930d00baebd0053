"""Cases of the tenth hostile audit (issue 45), part one: the Python API where the field jumps, flows, faces.

* the KL estimators' values, coefficients and jumps (:mod:`grpo_theory.kl`) with and without clamps, against the
  definitions of SPEC section 8 (:mod:`hostile_audit_round10_ref`);
* binary stationary policies with ``abs`` in the loss and with clamps whose edges the flow meets, against the
  Filippov rest condition (``binary_rest``);
* three-class ``stationary_points`` with a class of mass near 0 (near a face), each point's Eq. 11 residual from
  an independent ``P_G`` enumeration; ``stationary_policy`` against an RK4 flow polished by Newton's method;
* ``dynamics.flow`` and ``dynamics.ascent`` against a plain RK4 / Euler integration on the logits;
* ``advantage="pass_at_k"`` (k = 1 is Eq. 2 with ddof 0) and its refusals;
* token-level objectives on answer trees: chains of equal length (the second token's conditional is 1, so the
  token-level objective is the sequence-level one), token relabelling, and the tree's refusals;
* ``convergence.check_trajectories`` / ``largest_drop`` on synthetic trajectories whose verdict is known.

Tolerances. The library's roots are documented to a residual of 1e-10 and its closed forms to a few ulps; the
reference's drift is a ``math.fsum`` binomial sum (1e-15 relative) located by bisection to the last bit, and a
jump's position is a closed form (``p e^{L}``, ``1 - (1 - p) e^{-L}``) or a bisection of ``k3 = V`` to 2^-80.
So a point ``x`` is held to 1e-9 relative (of ``1 - x`` above 1/2): a wrong root or the wrong side of a jump is
off by 1e-4 or more. An Eq. 11 residual is held to 1e-8 times ``1 + max|P_G|/beta`` (the library's 1e-10 on
its own scale, with room for ill conditioning near a face). Flows: LSODA at rtol 1e-9 against RK4 with
``dt = 0.005`` (global error ~ dt^4 |f''''| t ~ 1e-9 on these smooth, O(1) fields): 1e-6 absolute on ``pi``.
Euler ascent is the same arithmetic as the reference's: 1e-10 absolute.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round10_ref as ref
from hostile_audit_round9_api import _err, _ok  # noqa: F401  (ok with a check; error naming names)

INF = math.inf
TOL = 1e-9


def _either(group, label, call, check, names=()):
    d = _ok(group, label, call, check)
    d.update(expect="either", names=list(names))
    return d


def _pi(v):
    return np.asarray(getattr(v, "pi", v), float).ravel()


def _bq(p):
    from grpo_theory import Question
    return Question([p, 1 - p], rewards=[1, 0])


# ---------------------------------------------------------------- KL values, coefficients, jumps
LRS = [-30.0, -20.5, -7.3, -1.0, -1e-8, 0.3, 2.9, 12.5, 19.9, 26.0]
CLAMPS = [(None, None), (18.0, 7.0), (None, 1.0), (2.0, None), (5.0, 0.25)]


def _safe_lrs(est, L, V):
    """LRS without points within 1e-6 of a jump (the coefficient is two-valued there) or 0 for abs."""
    edges = []
    if L is not None:
        edges += [-L, L]
    if V is not None:
        edges += list(ref.k3_value_edges(V)) + [-math.sqrt(2 * V), math.sqrt(2 * V), -V, V]
    out = [x for x in LRS if all(abs(x - e) > 1e-6 for e in edges)]
    return out


def kl_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory import kl

    G_ = "API: KL estimator values, coefficients and jumps (SPEC 8), checked"
    out = []
    for est in ("k1", "k2", "k3", "k3_ratio", "k3_plus", "abs"):
        for L, V in CLAMPS:
            lrs = _safe_lrs(est, L, V)
            kw = dict(beta=0.1, kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)
            want_v = [ref.kl_value(est, x, L, V) for x in lrs]
            out.append(_ok(G_, f"kl.estimator_value {est} L={L} V={V} at {len(lrs)} log-ratios",
                           lambda kw=kw, lrs=lrs: kl.estimator_value(Objective(**kw), np.array(lrs)),
                           lambda v, w=want_v: ref.close(v, w, rtol=1e-12, atol=1e-14) or f"{np.round(v, 6)} != {np.round(w, 6)}"))
            want_c = [ref.kl_coef(est, x, L, V) for x in lrs]
            out.append(_ok(G_, f"kl.coefficient {est} in the loss, L={L} V={V}",
                           lambda kw=kw, lrs=lrs: kl.coefficient(Objective(**kw), np.array(lrs)),
                           lambda v, w=want_c: ref.close(v, w, rtol=1e-12, atol=1e-14) or f"{np.round(v, 6)} != {np.round(w, 6)}"))
        # the jumps
    for est, L, V in [("abs", None, None), ("k3", 25.0, 12.0), ("k3", None, 1.0), ("k3", 2.0, None), ("k1", 3.0, None),
                      ("k1", None, 0.5), ("k2", None, 2.0), ("k2", 1.0, 8.0), ("k3_plus", None, 0.1),
                      ("k3_ratio", None, 10.0), ("k3_ratio", 20.0, 10.0), ("abs", 4.0, None), ("k3", 30.0, 5.0),
                      ("k3", None, None), ("k2", None, None), ("k3_plus", 0.5, 3.0)]:
        cands = ([-L, L] if L is not None else []) + ([0.0] if est == "abs" else [])
        if V is not None:
            cands += {"k1": [-V, V], "abs": [-V, V], "k2": [-math.sqrt(2 * V), math.sqrt(2 * V)]}.get(
                est, list(ref.k3_value_edges(V)))
        want = sorted(e for e in set(cands) if (L is None or abs(e) <= L)
                      and abs(ref.kl_coef(est, e - 1e-9 * max(1, abs(e)), L, V)
                              - ref.kl_coef(est, e + 1e-9 * max(1, abs(e)), L, V)) > 1e-6)

        def chk(v, w=want):
            v = sorted(float(x) for x in v)
            return (len(v) == len(w) and all(abs(a - b) <= 1e-9 * max(1, abs(b)) for a, b in zip(v, w))) \
                or f"{v} != {w}"
        out.append(_ok(G_, f"kl.discontinuities {est} L={L} V={V} = where c jumps",
                       lambda est=est, L=L, V=V: kl.discontinuities(Objective(beta=0.2, kl_estimator=est,
                                                                              kl_log_ratio_clamp=L, kl_value_clamp=V)),
                       chk))
    # advantage placement: c is the value
    for est in ("k1", "k2", "k3", "abs"):
        for L, V in [(None, None), (None, 10.0), (3.0, None)]:
            lrs = _safe_lrs(est, L, V)
            want = [ref.kl_coef(est, x, L, V, placement="advantage") for x in lrs]
            out.append(_ok(G_, f"kl.coefficient {est} in the advantage, L={L} V={V} (the value)",
                           lambda est=est, L=L, V=V, lrs=lrs: kl.coefficient(
                               Objective(beta=0.3, kl_estimator=est, kl_placement="advantage",
                                         kl_log_ratio_clamp=L, kl_value_clamp=V), np.array(lrs)),
                           lambda v, w=want: ref.close(v, w, rtol=1e-12, atol=1e-14) or f"{np.round(v, 6)} != {np.round(w, 6)}"))
    # refusals of the KL functions
    obj = lambda: Objective(beta=0.1, kl_estimator="k3", kl_value_clamp=10.0)  # noqa: E731
    for lab, arg, names in [("a NaN log-ratio", [0.1, math.nan], ["nan"]),
                            ("a string log-ratio", "0.5", ["0.5"]),
                            ("a list of strings", ["a", "b"], ["'a'"]),
                            ("a complex log-ratio", [1 + 2j], ["(1+2j)"])]:
        out.append(_err(G_, f"kl.coefficient with {lab}", lambda arg=arg: kl.coefficient(obj(), arg), names))
    out.append(_err(G_, "kl.estimator_value with an Objective in place of the log-ratios",
                    lambda: kl.estimator_value(obj(), obj()), ["Objective"]))
    out.append(_err(G_, "kl.coefficient with a string for the objective",
                    lambda: kl.coefficient("k3", [0.1]), ["'k3'"]))
    out.append(_either(G_, "kl.coefficient at +inf log-ratio with a log clamp (clamped: gradient 0)",
                       lambda: kl.coefficient(Objective(beta=0.1, kl_estimator="k3", kl_log_ratio_clamp=5.0), np.array([INF])),
                       lambda v: ref.close(v, [0.0], atol=0.0), names=["inf"]))
    out.append(_either(G_, "Objective(kl_value_clamp=5e-324) (subnormal, positive: representable)",
                       lambda: Objective(beta=0.2, kl_value_clamp=5e-324, kl_estimator="k3"),
                       lambda v: v.kl_value_clamp == 5e-324, names=["kl_value_clamp"]))
    out.append(_either(G_, "Objective(kl_estimator='k3+') (verl's spelling: k3_plus, or refused naming it)",
                       lambda: Objective(beta=0.2, kl_estimator="k3+"), lambda v: v.estimator == "k3_plus",
                       names=["kl_estimator", "k3+"]))
    # clamp field refusals
    for lab, kw, names in [
        ("kl_log_ratio_clamp=-inf", dict(kl_log_ratio_clamp=-INF), ["kl_log_ratio_clamp", "-inf"]),
        ("kl_value_clamp=nan", dict(kl_value_clamp=math.nan), ["kl_value_clamp", "nan"]),
        ("kl_log_ratio_clamp='20'", dict(kl_log_ratio_clamp="20"), ["kl_log_ratio_clamp", "'20'"]),
        ("kl_value_clamp=True", dict(kl_value_clamp=True), ["kl_value_clamp", "True"]),
        ("kl_estimator=' k3' (a leading space)", dict(kl_estimator=" k3"), ["kl_estimator", "' k3'"]),
        ("kl_placement='in_reward' (verl's flag name)", dict(kl_estimator="k1", kl_placement="in_reward"), ["kl_placement", "'in_reward'"]),
        ("kl_estimator='abs' with penalty='direct'", dict(kl_estimator="abs", penalty="direct"), ["penalty", "abs"]),
        ("kl_placement='reward' with kl_value_clamp=-3", dict(kl_estimator="k1", kl_placement="reward",
                                                              kl_value_clamp=-3.0), ["kl_value_clamp", "-3"]),
    ]:
        out.append(_err(G_, f"Objective({lab})", lambda kw=kw: Objective(beta=0.2, **kw), names))
    return out


# ---------------------------------------------------------------- binary rest at the jumps (Filippov)
def _rest_check(want):
    def check(v):
        x = _pi(v)[0]
        if want >= 1.0:
            return x > 1 - 1e-6 or f"x = {x!r}, the reference runs into the vertex"
        return ref.near_x(x, want) or f"x = {x!r} != {want!r}"
    return check


def jump_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: binary stationary policies at the jumps of the field (abs, clamps), Filippov reference"
    out = []
    specs = []
    # abs in the loss: rest at pi_ref iff Delta(p) <= 2 beta, else the first root of Delta = 2 beta above p
    for G in (2, 3, 4, 8, 16, INF):
        for p, beta in [(0.3, 0.45), (0.3, 0.6), (0.1, 0.8), (0.5, 1.2), (0.05, 1.5), (0.7, 0.2), (0.2, 2.5)]:
            specs.append(("abs", G, p, beta, None, None))
    # k3 with a log-ratio clamp the flow reaches
    for G in (2, 4, INF):
        for p, beta, L in [(0.3, 0.05, 0.5), (0.3, 0.05, 1.0), (0.05, 0.1, 2.0), (0.5, 0.02, 0.3), (0.2, 0.4, 0.2),
                           (0.01, 0.3, 3.0)]:
            specs.append(("k3", G, p, beta, L, None))
    # k3 with a value clamp (the gradient off once k3 > V)
    for G in (2, 5):
        for p, beta, V in [(0.3, 0.05, 0.1), (0.05, 0.1, 0.5), (0.5, 0.02, 0.02), (0.2, 0.2, 1.0)]:
            specs.append(("k3", G, p, beta, None, V))
    # k1 with a clamp: no regularisation inside, the gradient of the clamp's edge switches it off
    for G in (2, 4):
        for p, beta, L in [(0.3, 0.8, 1.0), (0.3, 1.5, 0.4), (0.1, 3.0, 2.0)]:
            specs.append(("k1", G, p, beta, L, None))
    # k2 / k3_plus with value clamps
    for est, G, p, beta, V in [("k2", 2, 0.3, 0.2, 0.5), ("k2", 4, 0.1, 0.5, 2.0), ("k3_plus", 2, 0.3, 0.2, 0.3),
                               ("k3_plus", 3, 0.4, 0.05, 0.05), ("k3_ratio", 2, 0.3, 0.4, 0.2)]:
        specs.append((est, G, p, beta, None, V))
    for est, G, p, beta, L, V in specs:
        want = ref.binary_rest(p, beta, G, est, L, V)
        kw = dict(beta=beta, group_size=G, kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)
        lab = f"stationary_policy binary p={p} {est} G={G} beta={beta} L={L} V={V}"
        call = (lambda p=p, kw=kw: stationary_policy(_bq(p), Objective(**kw)))
        if want >= 1.0:
            out.append(_either(G_, lab + " (the reference runs into the vertex)", call, _rest_check(want)))
        else:
            out.append(_ok(G_, lab + f" -> x = {want:.6g}", call, _rest_check(want)))
    # K = 3, 4: the point returned rests (Filippov: one mu in every answer's range); at pi_ref when the spread
    # of P_G(.|pi_ref) is <= 2 beta (abs), where every answer sits on its jump
    G2 = "API: 3-4 output stationary policies with abs or clamps: the Filippov rest condition, checked"
    kspecs = [
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.6, 3, "abs", None, None), ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 3, "abs", None, None),
        ([0.3, 0.3, 0.4], [0.5, 1, 0], 0.4, 8, "abs", None, None), ([0.1, 0.6, 0.3], [1, 0, 0.2], 1.1, 4, "abs", None, None),
        ([0.25, 0.25, 0.25, 0.25], [1, 0.7, 0.2, 0], 0.5, 2, "abs", None, None),
        ([0.25, 0.25, 0.25, 0.25], [1, 0.7, 0.2, 0], 0.2, 5, "abs", None, None),
        ([0.05, 0.15, 0.8], [1, 0.5, 0], 0.25, INF, "abs", None, None),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.1, 3, "k3", 0.7, None), ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 4, "k3", None, 0.2),
        ([0.1, 0.2, 0.7], [1, 0.5, 0], 0.8, 3, "k1", 0.5, None), ([0.4, 0.4, 0.2], [0, 1, 0.3], 0.05, 2, "k3", 1.5, 1.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.5, 3, "k2", None, 0.3), ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.2, 3, "k3_plus", 0.6, None),
        ([0.1, 0.3, 0.6], [1, 0.5, 0], 0.7, 6, "k1", 1.0, None),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.9, 3, "abs", None, None), ([0.2, 0.3, 0.5], [1, 0.5, 0], 2.0, 5, "abs", None, None),
        ([0.25, 0.25, 0.25, 0.25], [1, 0.7, 0.2, 0], 1.5, 3, "abs", None, None),
        ([1e-3, 0.5, 0.499], [1, 0.5, 0], 1.2, 2, "abs", None, None),
    ]
    for pr, rw, beta, G, est, L, V in kspecs:
        P0 = ref.pg(pr, rw, G)
        at_ref = est == "abs" and float(P0.max() - P0.min()) <= 2 * beta

        def rest(v, pr=pr, rw=rw, beta=beta, G=G, est=est, L=L, V=V, at_ref=at_ref):
            x = _pi(v)
            if at_ref and not ref.close(x, pr, rtol=0, atol=1e-12):
                return f"{x} but pi_ref = {pr} rests (spread of P_G {float(P0.max() - P0.min()):.4g} <= 2 beta)"
            if getattr(v, "boundary", False) and min(x) < 1e-9:
                return True                               # a vertex or face: checked by the two-output cases
            gap = ref.filippov_gap(x, pr, rw, beta, G, est, L, V)
            return gap <= 1e-8 * (1 + 3 / beta) or f"{np.round(x, 9)}: no common mu, gap {gap:.3g}"
        out.append((_ok if at_ref else _either)(G2, f"stationary_policy pi_ref={pr} rewards={rw} beta={beta} G={G} {est} L={L} V={V}"
                           + (": rests at pi_ref" if at_ref else ": a Filippov rest"),
                           lambda pr=pr, rw=rw, beta=beta, G=G, est=est, L=L, V=V: stationary_policy(
                               Question(pr, rw), Objective(beta=beta, group_size=G, kl_estimator=est,
                                                            kl_log_ratio_clamp=L, kl_value_clamp=V)), rest))
    return out


# ---------------------------------------------------------------- three classes near faces
def face_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_points, stationary_policy

    G_ = "API: stationary points of 3-4 classes near faces, each point's Eq. 11 residual checked"
    out = []
    specs = [
        ([1e-7, 0.3, 0.7 - 1e-7], [1, 0.5, 0], 0.1, 3),
        ([0.3, 1e-7, 0.7 - 1e-7], [1, 0.5, 0], 0.1, 3),
        ([0.3, 0.7 - 1e-7, 1e-7], [1, 0.5, 0], 0.1, 3),
        ([1e-9, 0.5, 0.5 - 1e-9], [1, 0.2, 0], 0.05, 4),
        ([1e-4, 1e-4, 1 - 2e-4], [1, 0.5, 0], 0.2, 4),
        ([1 - 2e-6, 1e-6, 1e-6], [0, 1, 0.5], 0.3, 3),
        ([0.5, 0.5 - 1e-8, 1e-8], [0, 1, 0.9], 0.02, 2),
        ([1e-6, 0.4, 0.6 - 1e-6], [1, 0, 0.5], 1.5, 5),
        ([1e-5, 0.2, 0.3, 0.5 - 1e-5], [1, 0.6, 0.3, 0], 0.1, 3),
        ([0.25, 1e-6, 0.25, 0.5 - 1e-6], [1, 0.6, 0.3, 0], 0.25, 4),
        ([1e-3, 1e-3, 1e-3, 0.997], [1, 0.6, 0.3, 0], 0.05, 2),
        ([0.2, 0.3, 0.5 - 1e-10, 1e-10], [0, 0.3, 1, 0.6], 0.15, 3),
        ([1e-7, 0.3, 0.7 - 1e-7], [1, 0.5, 0], 0.1, INF),
        ([1e-4, 0.5, 0.5 - 1e-4], [1, 0.25, 0], 0.4, INF),
    ]
    for pr, rw, beta, G in specs:
        scale = 1 + (math.sqrt(G - 1) if G != INF else 1e3) / beta

        def all_ok(v, pr=pr, rw=rw, beta=beta, G=G, scale=scale):
            pts = list(v.points)
            if not pts:
                return "no point"
            for p in pts:
                r = ref.reverse_resid(_pi(p), pr, rw, beta, G)
                if r > 1e-8 * scale:
                    return f"point {np.round(_pi(p), 8)} has Eq. 11 residual {r:.3g}"
            return True
        if G != INF:
            out.append(_ok(G_, f"stationary_points pi_ref={pr} rewards={rw} beta={beta} G={G}: every point solves Eq. 11",
                           lambda pr=pr, rw=rw, beta=beta, G=G: stationary_points(Question(pr, rw),
                                                                                   Objective(beta=beta, group_size=G)),
                           all_ok))

        def pol_ok(v, pr=pr, rw=rw, beta=beta, G=G, scale=scale):
            r = ref.reverse_resid(_pi(v), pr, rw, beta, G)
            return r <= 1e-8 * scale or f"Eq. 11 residual {r:.3g} at {np.round(_pi(v), 8)}"
        out.append(_ok(G_, f"stationary_policy pi_ref={pr} rewards={rw} beta={beta} G={G}: solves Eq. 11",
                       lambda pr=pr, rw=rw, beta=beta, G=G: stationary_policy(Question(pr, rw), Objective(beta=beta, group_size=G)),
                       pol_ok))
    # stationary_policy = the flow's end (RK4 to t = 40, then the reference's own Newton polish)
    flows = [([1e-4, 0.3, 0.7 - 1e-4], [1, 0.5, 0], 0.2, 3), ([0.3, 1e-5, 0.7 - 1e-5], [1, 0.5, 0], 0.15, 4),
             ([1e-3, 0.499, 0.5], [0, 1, 0.8], 0.1, 2), ([0.6, 0.4 - 1e-6, 1e-6], [0, 1, 0.5], 0.5, 3),
             ([1e-3, 0.3, 0.3, 0.399], [1, 0.6, 0.3, 0], 0.3, 2)]
    for pr, rw, beta, G in flows:
        def flow_ok(v, pr=pr, rw=rw, beta=beta, G=G):
            from scipy.optimize import fsolve
            z = np.log(ref.rk4_flow(pr, rw, beta, G, 40.0, dt=0.02))
            prr = np.asarray(pr, float)
            sol = fsolve(lambda y: np.append(ref.field(y, prr, rw, beta, G)[:-1], y.sum() - z.sum()), z, xtol=1e-14)
            e = np.exp(sol - sol.max())
            w = e / e.sum()
            return ref.close(_pi(v), w, rtol=0, atol=1e-7) or f"{np.round(_pi(v), 9)} != flow end {np.round(w, 9)}"
        out.append(_ok(G_, f"stationary_policy pi_ref={pr} rewards={rw} beta={beta} G={G} = the RK4 flow's end",
                       lambda pr=pr, rw=rw, beta=beta, G=G: stationary_policy(Question(pr, rw), Objective(beta=beta, group_size=G)),
                       flow_ok))
    # refusals of stationary_points' own options
    q3 = lambda: Question([1e-7, 0.3, 0.7 - 1e-7], rewards=[1, 0.5, 0])  # noqa: E731
    o3 = lambda: Objective(beta=0.1, group_size=3)  # noqa: E731
    for lab, kw, names in [("n_grid=np.float64(3.5)", dict(n_grid=np.float64(3.5)), ["n_grid", "3.5"]), ("n_grid=[11]", dict(n_grid=[11]), ["n_grid", "[11]"]),
                           ("n_starts=[3]", dict(n_starts=[3]), ["n_starts", "[3]"]),
                           ("seed=-7", dict(seed=-7), ["seed", "-7"]),
                           ("time_budget='60s'", dict(time_budget="60s"), ["time_budget", "60s"]),
                           ("time_budget=-inf", dict(time_budget=-INF), ["time_budget", "-inf"]),
                           ("box_budget=2.5", dict(box_budget=2.5), ["box_budget", "2.5"]),
                           ("exhaustive=np.array([True, False])", dict(exhaustive=np.array([True, False])), ["exhaustive"])]:
        out.append(_err(G_, f"stationary_points(3 classes near a face, {lab})",
                        lambda kw=kw: stationary_points(q3(), o3(), **kw), names))
    return out


# ---------------------------------------------------------------- flows against RK4 / Euler
def flow_cases() -> list[dict]:
    from grpo_theory import Objective, Question, dynamics

    G_ = "API: dynamics.flow / dynamics.ascent against a plain RK4 / Euler integration, checked"
    out = []
    specs = [  # pi_ref, rewards, beta, G, objective extra, ref extra, pi0, t_end
        ([0.3, 0.7], [1, 0], 0.2, 2, {}, {}, None, 3.0),
        ([0.3, 0.7], [1, 0], 0.2, 4, {}, {}, None, 5.0),
        ([0.1, 0.9], [1, 0], 0.5, 8, {}, {}, None, 4.0),
        ([0.3, 0.7], [1, 0], 0.2, 3, dict(kl_estimator="k2"), dict(est="k2"), None, 3.0),
        ([0.3, 0.7], [1, 0], 0.2, 3, dict(kl_estimator="k3_plus"), dict(est="k3_plus"), None, 3.0),
        ([0.3, 0.7], [1, 0], 0.2, 3, dict(kl_estimator="k3_ratio"), dict(est="k3_ratio"), None, 3.0),
        ([0.3, 0.7], [1, 0], 0.4, 4, dict(kl_estimator="k1", kl_placement="advantage"),
         dict(est="k1", placement="advantage"), None, 3.0),
        ([0.3, 0.7], [1, 0], 0.4, 4, dict(kl_estimator="k2", kl_placement="advantage"),
         dict(est="k2", placement="advantage"), None, 3.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 3, {}, {}, None, 4.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 3, dict(penalty="direct"), dict(est="k3_ratio"), None, 4.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 4, dict(std_ddof=1), dict(ddof=1), None, 3.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 4, dict(std_eps=0.1), dict(eps=0.1), None, 3.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 5, dict(normalization="shift"), dict(normalization="shift"), None, 3.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, INF, {}, {}, None, 2.0),
        ([0.25, 0.25, 0.25, 0.25], [1, 0.7, 0.2, 0], 0.15, 3, {}, {}, None, 3.0),
        ([0.3, 0.7], [1, 0], 0.2, 2, {}, {}, [0.9, 0.1], 3.0),
        ([0.3, 0.7], [1, 0], 0.6, 4, dict(kl_estimator="abs"), dict(est="abs"), [0.8, 0.2], 2.0),
        ([0.3, 0.7], [1, 0], 0.3, 3, dict(kl_estimator="k3", kl_log_ratio_clamp=5.0), dict(est="k3", L=5.0), None, 2.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 3, dict(kl_estimator="k2"), dict(est="k2"), [0.1, 0.1, 0.8], 3.0),
        ([0.5, 0.5], [1, 0], 1e-3, 2, {}, {}, None, 2.0),
    ]
    for pr, rw, beta, G, okw, rkw, pi0, T in specs:
        ts = [0.0, T / 3, T]
        tag = f"pi_ref={pr} rewards={rw} beta={beta} G={G} {okw or ''} pi0={pi0}"
        want = [ref.rk4_flow(pr, rw, beta, G, t, dt=0.005, pi0=pi0, **rkw) if t > 0 else
                np.asarray(pi0 if pi0 is not None else pr, float) for t in ts]

        def chk(v, w=want):
            got = np.asarray(v.pi, float)
            return (got.shape == np.shape(w) and ref.close(got, w, rtol=0, atol=1e-6)) or \
                f"{np.round(got, 7).tolist()} != {np.round(w, 7).tolist()}"
        out.append(_ok(G_, f"dynamics.flow {tag} at t={ts}",
                       lambda pr=pr, rw=rw, beta=beta, G=G, okw=okw, pi0=pi0, ts=ts: dynamics.flow(
                           Question(pr, rw), Objective(beta=beta, group_size=G, **okw), pr if pi0 is None else pi0, ts,
                           with_points=False), chk))
    for pr, rw, beta, G, okw, rkw, lr, steps in [
        ([0.3, 0.7], [1, 0], 0.2, 2, {}, {}, 0.5, 40), ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 3, {}, {}, 0.1, 60),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 4, dict(penalty="direct"), dict(est="k3_ratio"), 1.0, 25),
        ([0.3, 0.7], [1, 0], 0.4, 4, dict(kl_estimator="k1", kl_placement="advantage"), dict(est="k1", placement="advantage"), 2.0, 10),
        ([0.1, 0.9], [1, 0], 0.05, INF, {}, {}, 0.05, 100), ([0.25, 0.25, 0.25, 0.25], [1, 0.7, 0.2, 0], 0.15, 3, {}, {}, 0.3, 30),
    ]:
        want = ref.euler_ascent(pr, rw, beta, G, lr, steps, **rkw)
        out.append(_ok(G_, f"dynamics.ascent pi_ref={pr} rewards={rw} beta={beta} G={G} {okw or ''} lr={lr} steps={steps}",
                       lambda pr=pr, rw=rw, beta=beta, G=G, okw=okw, lr=lr, steps=steps: dynamics.ascent(
                           Question(pr, rw), Objective(beta=beta, group_size=G, **okw), pr, lr=lr, steps=steps,
                           with_points=False),
                       lambda v, w=want: ref.close(v.final, w, rtol=0, atol=1e-10) or f"{v.final} != {w}"))
    # refusals of the flow APIs
    q = lambda: Question([0.3, 0.7], rewards=[1, 0])  # noqa: E731
    o = lambda: Objective(beta=0.2, group_size=3)  # noqa: E731
    for lab, call, names in [
        ("flow with decreasing times [0, 2, 1]", lambda: dynamics.flow(q(), o(), [0.3, 0.7], [0, 2, 1]), ["t", "[0"]),
        ("flow with a NaN time", lambda: dynamics.flow(q(), o(), [0.3, 0.7], [0, math.nan]), ["t", "nan"]),
        ("flow from a start of the wrong length", lambda: dynamics.flow(q(), o(), [0.3, 0.3, 0.4], [0, 1]), ["pi0", "3"]),
        ("flow from a start not summing to 1", lambda: dynamics.flow(q(), o(), [0.3, 0.6], [0, 1]), ["pi0"]),
        ("flow with rtol=-1e-9", lambda: dynamics.flow(q(), o(), [0.3, 0.7], [0, 1], rtol=-1e-9), ["rtol", "-1e-09"]),
        ("flow with atol=nan", lambda: dynamics.flow(q(), o(), [0.3, 0.7], [0, 1], atol=math.nan), ["atol", "nan"]),
        ("flow with t a scalar string", lambda: dynamics.flow(q(), o(), [0.3, 0.7], "10"), ["t", "'10'"]),
        ("ascent with lr=-0.1", lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=-0.1, steps=10), ["lr", "-0.1"]),
        ("ascent with lr=inf", lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=INF, steps=10), ["lr", "inf"]),
        ("ascent with steps='10'", lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=0.1, steps="10"), ["steps", "'10'"]),
        ("ascent with steps=True", lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=0.1, steps=True), ["steps", "True"]),
        ("ascent with every=-3", lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=0.1, steps=5, every=-3), ["every", "-3"]),
        ("ascent with steps=10**15", lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=0.1, steps=10 ** 15), ["steps"]),
        ("grpo_steps with n_batches=inf", lambda: dynamics.grpo_steps(q(), o(), [0.3, 0.7], lr=0.1, n_batches=INF), ["n_batches", "inf"]),
        ("grpo_steps with inner_updates=-2", lambda: dynamics.grpo_steps(q(), o(), [0.3, 0.7], lr=0.1, n_batches=2,
                                                                        inner_updates=-2), ["inner_updates", "-2"]),
        ("flow with a string objective", lambda: dynamics.flow(q(), "grpo", [0.3, 0.7], [0, 1]), ["'grpo'"]),
        ("basins of a preference question at G=3", lambda: dynamics.basins(
            Question([0.5, 0.5], preference=[[0.5, 0.8], [0.2, 0.5]]), o()), ["preference", "G"]),
    ]:
        out.append(_err(G_, f"dynamics.{lab}", call, names))
    w_inf = ref.binary_rest(0.3, 0.2, 3, "k3")
    out.append(_either(G_, "dynamics.flow to t = inf (the limit: the stationary policy, or refused naming inf)",
                       lambda: dynamics.flow(q(), o(), [0.3, 0.7], [0, INF], with_points=False),
                       lambda v, w=w_inf: ref.near_x(v.pi[-1][0], w, 1e-6) or f"{v.pi[-1]} != {w}", names=["inf"]))
    w1 = ref.rk4_flow([0.3, 0.7], [1, 0], 0.2, 3, 1.0, dt=0.005)
    out.append(_either(G_, "dynamics.flow at t = [-1, 0, 1] (pi0 is the policy at t = 0, or refused naming -1)",
                       lambda: dynamics.flow(q(), o(), [0.3, 0.7], [-1, 0, 1], with_points=False),
                       lambda v, w=w1: (ref.close(v.pi[1], [0.3, 0.7], atol=1e-9) and ref.close(v.pi[2], w, atol=1e-6))
                       or f"{v.pi.tolist()}", names=["-1"]))
    out.append(_either(G_, "dynamics.flow from the vertex [1, 0] (reverse penalty: pi_ref pulls it back, or refused)",
                       lambda: dynamics.flow(q(), o(), [1.0, 0.0], [0, 1], with_points=False),
                       lambda v: bool(np.all(np.isfinite(v.pi)) and np.allclose(v.pi.sum(axis=1), 1)), names=["pi0"]))
    # ascent with a huge step: either a diverged path (status says why) or a clean refusal; no NaN policy
    out.append(_either(G_, "dynamics.ascent with lr=1e6 (a huge step)",
                       lambda: dynamics.ascent(q(), o(), [0.3, 0.7], lr=1e6, steps=20, with_points=False),
                       lambda v: bool(np.all(np.isfinite(v.pi)) and (v.diverged or np.allclose(v.pi.sum(axis=1), 1))),
                       names=["lr"]))
    return out


# ---------------------------------------------------------------- pass@k
def pass_k_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: pass@k advantage (k = 1 is Eq. 2, ddof 0) and its refusals"
    out = []
    for p, beta, G in [(0.3, 0.2, 4), (0.05, 0.1, 8), (0.6, 0.5, 3), (0.2, 1.0, 2), (0.4, 0.05, 6)]:
        want = ref.binary_rest(p, beta, G, "k3")
        out.append(_ok(G_, f"pass_at_k k=1 binary p={p} beta={beta} G={G} = the group advantage's root",
                       lambda p=p, beta=beta, G=G: stationary_policy(_bq(p), Objective(beta=beta, group_size=G,
                                                                                       advantage="pass_at_k", pass_k=1)),
                       _rest_check(want)))
    q = lambda: _bq(0.3)  # noqa: E731
    for lab, kw, names in [
        ("pass_k=-1", dict(advantage="pass_at_k", pass_k=-1), ["pass_k", "-1"]),
        ("pass_k=10**40", dict(advantage="pass_at_k", pass_k=10 ** 40), ["pass_k"]),
        ("pass_k=np.int64(7)", dict(advantage="pass_at_k", pass_k=np.int64(7)), ["pass_k", "7"]),
        ("pass_k=[2]", dict(advantage="pass_at_k", pass_k=[2]), ["pass_k", "[2]"]),
        ("pass_k=2+0j", dict(advantage="pass_at_k", pass_k=2 + 0j), ["pass_k"]),
                ("advantage='pass_at_k' without pass_k", dict(advantage="pass_at_k"), ["pass_k"]),
        ("advantage='pass_at_K'", dict(advantage="pass_at_K", pass_k=2), ["advantage", "pass_at_K"]),
        ("pass_k=nan", dict(advantage="pass_at_k", pass_k=math.nan), ["pass_k", "nan"]),
    ]:
        out.append(_err(G_, f"Objective(G=4, {lab})", lambda kw=kw: Objective(beta=0.2, group_size=4, **kw), names))
    out.append(_err(G_, "Objective(G=4, pass_k=3 with advantage='rloo')",
                    lambda: Objective(beta=0.2, group_size=4, advantage="rloo", pass_k=3), ["pass_k"], expect="flag"))
    out.append(_err(G_, "pass_at_k k=2 on a question with three reward levels",
                    lambda: stationary_policy(Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]),
                                              Objective(beta=0.2, group_size=4, advantage="pass_at_k", pass_k=2)),
                    ["level"]))
    # pass@k at k = G: the advantage of arXiv 2508.10751 is defined; the result is a policy on the simplex
    out.append(_ok(G_, "pass_at_k k=G=4 binary p=0.3 beta=0.2: a policy above p (the better answer gains)",
                   lambda: stationary_policy(q(), Objective(beta=0.2, group_size=4, advantage="pass_at_k", pass_k=4)),
                   lambda v: (0.3 < _pi(v)[0] < 1 and abs(_pi(v).sum() - 1) < 1e-12) or f"{_pi(v)}"))
    return out


# ---------------------------------------------------------------- token level on answer trees
def tree_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: token-level objectives on answer trees (chains = the sequence level), every KL setting"
    out = []
    settings = [("k3 (reverse)", dict(), dict(est="k3")), ("k2", dict(kl_estimator="k2"), dict(est="k2")),
                ("k3_plus", dict(kl_estimator="k3_plus"), dict(est="k3_plus")),
                ("k1 advantage", dict(kl_estimator="k1", kl_placement="advantage"), dict(est="k1", placement="advantage")),
                ("k2 advantage", dict(kl_estimator="k2", kl_placement="advantage"), dict(est="k2", placement="advantage")),
                ("abs", dict(kl_estimator="abs"), dict(est="abs")),
                ("k3 clamp L=0.5", dict(kl_estimator="k3", kl_log_ratio_clamp=0.5), dict(est="k3", L=0.5)),
                ("k3 value clamp V=0.1", dict(kl_estimator="k3", kl_value_clamp=0.1), dict(est="k3", V=0.1))]
    for name, okw, rkw in settings:
        for p, beta, G in [(0.3, 0.05, 2), (0.2, 0.3, 4)]:
            want = ref.binary_rest(p, beta, G, rkw.get("est", "k3"), rkw.get("L"), rkw.get("V"), rkw.get("placement", "loss"))
            call = (lambda p=p, beta=beta, G=G, okw=okw: stationary_policy(
                Question([p, 1 - p], rewards=[1, 0], answers=[("x", "y"), ("z", "w")]),
                Objective(beta=beta, group_size=G, level="token", **okw)))
            lab = f"token level, chains xy/zw, {name}, p={p} beta={beta} G={G}"
            if want >= 1.0:
                out.append(_either(G_, lab + " (vertex)", call, _rest_check(want)))
            else:
                out.append(_ok(G_, lab + f" -> x = {want:.6g}", call, _rest_check(want)))
    # three chains of length 3, reverse: the sequence-level Eq. 11 residual
    for pr, rw, beta, G in [([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3, 3), ([0.1, 0.6, 0.3], [0, 1, 0.4], 0.2, 2)]:
        out.append(_ok(G_, f"token level, three chains of 3 tokens, pi_ref={pr} rewards={rw} beta={beta} G={G}: Eq. 11",
                       lambda pr=pr, rw=rw, beta=beta, G=G: stationary_policy(
                           Question(pr, rewards=rw, answers=["abc", "def", "ghi"]),
                           Objective(beta=beta, group_size=G, level="token")),
                       lambda v, pr=pr, rw=rw, beta=beta, G=G: ref.reverse_resid(_pi(v), pr, rw, beta, G) < 1e-8 * (1 + 2 / beta)
                       or f"{_pi(v)}"))
    # relabelling tokens and permuting answers changes nothing
    tree = [("A", "B"), ("A", "C"), ("D",)]
    tree2 = [(7, 8), (7, 9), (1,)]
    for name, okw in [("k3", {}), ("k2", dict(kl_estimator="k2")), ("k1 advantage", dict(kl_estimator="k1", kl_placement="advantage")),
                      ("abs", dict(kl_estimator="abs")), ("k3 L=1", dict(kl_estimator="k3", kl_log_ratio_clamp=1.0))]:
        def both(okw=okw, tree=tree, tree2=tree2):
            o = Objective(beta=0.2, group_size=3, level="token", **okw)
            a = stationary_policy(Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0], answers=tree), o)
            b = stationary_policy(Question([0.3, 0.5, 0.2], rewards=[0.5, 0, 1], answers=[tree2[1], tree2[2], tree2[0]]), o)
            return _pi(a), _pi(b)[[2, 0, 1]]
        out.append(_ok(G_, f"token level tree AB/AC/D, {name}: relabelled tokens and permuted answers agree",
                       both, lambda v: ref.close(v[0], v[1], rtol=0, atol=1e-8) or f"{v[0]} != {v[1]}"))
    # refusals
    for lab, call, names in [
        ("answers not prefix-free ((x,), (x, y, z))", lambda: Question([0.5, 0.5], rewards=[1, 0], answers=[("x",), ("x", "y", "z")]), ["prefix"]),
        ("duplicate answers of 3 tokens", lambda: Question([0.2, 0.3, 0.5], rewards=[1, 0, 0], answers=[("a", 1, None), ("b",), ("a", 1, None)]), ["answer"]),
        ("an empty tuple as an answer", lambda: Question([0.2, 0.3, 0.5], rewards=[1, 0, 0], answers=[("q",), (), ("r", "s")]), ["empty"]),
        ("1 answer for 2 outputs", lambda: Question([0.5, 0.5], rewards=[1, 0], answers=[("a", "b")]), ["answers", "1"]),
        ("an unhashable token", lambda: Question([0.5, 0.5], rewards=[1, 0], answers=[(["a"],), ("b",)]), ["['a']"]),
        ("answers=None tokens", lambda: Question([0.5, 0.5], rewards=[1, 0], answers=[None, None]), ["None"]),
        ("k3_ratio at token level on multi-token answers", lambda: stationary_policy(
            Question([0.5, 0.5], rewards=[1, 0], answers=[("a", "b"), ("a", "c")]),
            Objective(beta=0.2, group_size=2, level="token", kl_estimator="k3_ratio")), ["k3_ratio"]),
        ("level='Token'", lambda: Objective(beta=0.2, level="Token"), ["level", "'Token'"]),
        ("loss_type=None", lambda: Objective(beta=0.2, level="token", loss_type=None), ["loss_type", "None"]),
        ("importance_level='Sequence'", lambda: Objective(beta=0.2, importance_level="Sequence"), ["importance_level", "'Sequence'"]),
        ("groups_per_batch=-inf", lambda: Objective(beta=0.2, level="token", loss_type="dapo", groups_per_batch=-INF),
         ["groups_per_batch", "-inf"]),
    ]:
        out.append(_err(G_, f"answer tree: {lab}", call, names))
    return out


# ---------------------------------------------------------------- convergence on synthetic trajectories
def convergence_cases() -> list[dict]:
    from grpo_theory import convergence as cv

    G_ = "API: convergence checks on synthetic trajectories with a known verdict"
    out = []
    steps = np.arange(0, 1001, 5.0)
    series = {
        "a constant 0.7": (np.full(steps.size, 0.7), "converged"),
        "an exponential settling to 0.7 (time constant 30 steps)": (0.7 - 0.4 * np.exp(-steps / 30), "converged"),
        "a straight climb 0.2 -> 0.8": (0.2 + 0.6 * steps / 1000, "moving"),
        "a climb still steep at the end (logistic, midpoint 900)": (1 / (1 + np.exp(-(steps - 900) / 40)), "moving"),
        "a sine of amplitude 0.2, period 40 steps, about 0.5": (0.5 + 0.2 * np.sin(2 * np.pi * steps / 40), "oscillating"),
        "exactly 1.0 throughout": (np.ones(steps.size), "converged"),
        "exactly 0.0 throughout": (np.zeros(steps.size), "converged"),
        "a fall 0.9 -> 0.3 over the last half": (np.where(steps < 500, 0.9, 0.9 - 0.6 * (steps - 500) / 500), "moving"),
    }
    for lab, (vals, want) in series.items():
        out.append(_ok(G_, f"check_trajectories on {lab}: {want}",
                       lambda vals=vals: cv.check_trajectories(steps, vals),
                       lambda v, want=want: (str(np.ravel(v.status)[0]) == want) or f"status {v.status}"))
    both = np.column_stack([np.full(steps.size, 0.7), 0.2 + 0.6 * steps / 1000])
    out.append(_ok(G_, "check_trajectories on two prompts (constant, climbing): converged, moving",
                   lambda: cv.check_trajectories(steps, both),
                   lambda v: list(map(str, v.status)) == ["converged", "moving"] or f"{v.status}"))
    for lab, vals, want in [("[0.5, 0.9, 0.2, 0.6]", [0.5, 0.9, 0.2, 0.6], (0.7, 1.0, 2.0, 0.4)),
                            ("a monotone rise", [0.1, 0.2, 0.3, 0.4], (0.0, None, None, None)),
                            ("[1, 0, 1, 0.5]", [1.0, 0.0, 1.0, 0.5], (1.0, 0.0, 1.0, 0.5))]:
        def chk(v, want=want):
            if abs(v.size - want[0]) > 1e-12:
                return f"size {v.size} != {want[0]}"
            if want[1] is not None and (v.peak_step != want[1] or v.trough_step != want[2] or abs(v.recovered - want[3]) > 1e-12):
                return f"{v}"
            return True
        out.append(_ok(G_, f"largest_drop on {lab}", lambda vals=vals: cv.largest_drop(np.arange(len(vals), dtype=float), vals), chk))
    ok_vals = 0.7 - 0.4 * np.exp(-steps / 30)
    for lab, call, names in [
        ("a NaN value", lambda: cv.check_trajectories(steps, np.where(steps == 500, np.nan, ok_vals)), ["nan"]),
        ("decreasing steps", lambda: cv.check_trajectories(steps[::-1], ok_vals), ["steps"]),
        ("duplicate steps", lambda: cv.check_trajectories(np.repeat(steps[:101], 2)[:steps.size], ok_vals), ["steps"]),
        ("one step fewer than values", lambda: cv.check_trajectories(steps[:-1], ok_vals), ["steps", "values"]),
        ("a single point", lambda: cv.check_trajectories([10.0], [0.5]), []),
        ("empty arrays", lambda: cv.check_trajectories([], []), []),
        ("tail=-0.2", lambda: cv.check_trajectories(steps, ok_vals, tail=-0.2), ["tail", "-0.2"]),
        ("tail=nan", lambda: cv.check_trajectories(steps, ok_vals, tail=math.nan), ["tail", "nan"]),
        ("alpha=-0.05", lambda: cv.check_trajectories(steps, ok_vals, alpha=-0.05), ["alpha", "-0.05"]),
        ("alpha='0.05'", lambda: cv.check_trajectories(steps, ok_vals, alpha="0.05"), ["alpha", "0.05"]),
        ("windows=-4", lambda: cv.check_trajectories(steps, ok_vals, windows=-4), ["windows", "-4"]),
        ("windows=True", lambda: cv.check_trajectories(steps, ok_vals, windows=True), ["windows", "True"]),
        ("drift_tol=-0.01", lambda: cv.check_trajectories(steps, ok_vals, drift_tol=-0.01), ["drift_tol", "-0.01"]),
        ("spread_tol=nan", lambda: cv.check_trajectories(steps, ok_vals, spread_tol=math.nan), ["spread_tol", "nan"]),
        ("se negative", lambda: cv.check_trajectories(steps, ok_vals, se=-0.01), ["se", "-0.01"]),
        ("se of the wrong shape", lambda: cv.check_trajectories(steps, ok_vals, se=np.ones(7)), ["se"]),
        ("values of strings", lambda: cv.check_trajectories(steps, ["0.5"] * steps.size), ["values"]),
        ("values 3-D", lambda: cv.check_trajectories(steps, np.ones((steps.size, 2, 2))), ["values"]),
        ("infinite steps", lambda: cv.check_trajectories(np.append(steps[:-1], INF), ok_vals), ["steps", "inf"]),
        ("reward of the wrong length", lambda: cv.check_trajectories(steps, ok_vals, reward=np.ones(5)), ["reward"]),
        ("largest_drop with NaN", lambda: cv.largest_drop([0, 1, 2], [0.5, math.nan, 0.1]), ["nan"]),
        ("largest_drop with mismatched lengths", lambda: cv.largest_drop([0, 1, 2], [0.5, 0.1]), ["steps", "values"]),
        ("largest_drop with decreasing steps", lambda: cv.largest_drop([2, 1, 0], [0.5, 0.4, 0.1]), ["steps"]),
        ("creep_tol=-1", lambda: cv.check_trajectories(steps, ok_vals, creep_tol=-1.0), ["creep_tol", "-1"]),
        ("logit_drift_tol=0", lambda: cv.check_trajectories(steps, ok_vals, logit_drift_tol=0.0), ["logit_drift_tol", "0"]),
    ]:
        out.append(_err(G_, f"check_trajectories with {lab}" if not lab.startswith("largest") else lab, call, names))
    return out


# ---------------------------------------------------------------- closed forms and baselines at new points
def closed_cases() -> list[dict]:
    from grpo_theory import Question, closed_form as cf, log_pooling, rlhf_optimum

    G_ = "API: closed forms and baselines at new points, checked"
    out = []
    for p, b, g in [(0.17, 0.09, 0.6), (0.83, 0.4, 0.25), (1e-5, 0.002, 1.0), (0.5, 50.0, 1.0), (0.33, 0.33, 0.33),
                    (0.999, 0.01, 0.9), (0.04, 0.8, 0.3), (0.6, 1e-5, 0.02)]:
        out.append(_ok(G_, f"binary_pairwise({p}, {b}, gamma={g}) = Eq. 14",
                       lambda p=p, b=b, g=g: cf.binary_pairwise(p, b, g),
                       lambda v, w=ref.eq14(p, b, g): ref.near_x(v, w) or f"{v} != {w}"))
    for p, b in [(0.17, 0.09), (0.83, 2.5), (1e-7, 0.7), (0.5, 1e-3), (0.4, 0.999), (0.25, 123.0)]:
        out.append(_ok(G_, f"binary_large_group({p}, {b}) = Eq. 15", lambda p=p, b=b: cf.binary_large_group(p, b),
                       lambda v, w=ref.eq15(p, b): ref.near_x(v, w) or f"{v} != {w}"))
    for pr, rw, b in [([0.1, 0.2, 0.7], [3, -1, 0.5], 0.7), ([1e-8, 1 - 1e-8], [40, 0], 1.0), ([0.25] * 4, [0, 0, 0, 1e-9], 1e-9),
                      ([0.5, 0.5], [1e3, 0], 10.0), ([0.3, 0.3, 0.4], [-5, -5, -6], 0.2)]:
        want = ref.log_pooling(pr, rw, b)
        out.append(_ok(G_, f"log_pooling({pr}, {rw}, {b})", lambda pr=pr, rw=rw, b=b: log_pooling(pr, rw, b),
                       lambda v, w=want: ref.close(v, w, rtol=1e-10, atol=1e-15) or f"{v} != {w}"))
        out.append(_ok(G_, f"rlhf_optimum(Question({pr}, {rw}), {b}) = log pooling",
                       lambda pr=pr, rw=rw, b=b: rlhf_optimum(Question(pr, rw), b),
                       lambda v, w=want: ref.close(_pi(v), w, rtol=1e-10, atol=1e-15) or f"{_pi(v)} != {w}"))
    for x, G in [(0.3, 5), (0.01, 40), (0.77, 3), (0.5, 200)]:
        pa = ref.pg([x, 1 - x], [1, 0], G)
        out.append(_ok(G_, f"binary_preference({x}, {G}) against the multinomial enumeration",
                       lambda x=x, G=G: np.array([float(np.ravel(a)[0]) for a in cf.binary_preference(x, G)]),
                       lambda v, w=pa: ref.close(v, w, rtol=1e-10, atol=1e-14) or f"{v} != {w}"))
    return out


def all_api_cases() -> list[dict]:
    return (kl_cases() + jump_cases() + face_cases() + flow_cases() + pass_k_cases() + tree_cases()
            + convergence_cases() + closed_cases())
