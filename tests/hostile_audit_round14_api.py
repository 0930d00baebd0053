"""Cases of the fourteenth hostile audit (issue 45), part one: the public Python API's least-called corners.

Chosen by counting how often the earlier rounds' files name each public callable (``api_contract.public_callables``):
the ones no round called come first.

* the advantage registry's expectation functions (``preference.level_expectations``, ``advantage.rloo_expectations``,
  ``pass_at_k_expectations``, ``tie_free_probability``, ``pass_at_k_table``, ``n_count_vectors``,
  ``max_abs_advantage``, ``regularisation_scale``, ``monte_carlo.sampled_advantages``) against the reference's
  ordered-tuple enumeration, and with bad arguments;
* ``Question`` / ``Objective`` field combinations at unusual but valid values: ``stationary_policy`` on two outputs
  against the reference flow's rest, on three outputs against the KKT residual and an RK4 end;
* results containers (``StationaryPoint``, ``StationaryPointSet``): copy, pickle, ``==``, ``hash``, ``repr``,
  JSON round trips, fed back in as input;
* ``sweep.grid_size`` / ``check_grid`` / ``cases_from_grid`` / ``Case`` / ``evaluate_case``;
* ``convergence.check_history`` on logs shaped like a trainer's ``log_history`` with quirks, and
  ``summarise_convergence``;
* the symbolic module's derivations evaluated at the reference's roots, and ``symbolic_proofs`` with bad input;
* ``integrations.mapping`` (``parse_version``, ``defaults_for``, ``load_config_file``), ``problem.as_objective``,
  ``shaped_question``, ``_question.as_question``, ``closed_form`` members at values not yet checked.

Tolerances. Level expectations: the reference sums ``L^(G-1)`` ordered tuples with ``math.fsum`` (1e-16 relative
per term), the library sums count vectors in log space (documented to ~1e-14): 1e-10 relative + 1e-13 absolute.
Two-output rests: the reference bisects the logit to the last bit from a 1e-2 scan; the library documents
residuals below 1e-10 of beta; at a simple root with drift slope ``|f'| >= 1e-2`` that is a position error below
1e-8, so 1e-7 relative of ``x`` (of ``1 - x`` above 1/2). Three outputs: the reference's KKT residual at the
library's point below 1e-8 (the library's 1e-10 plus rounding), and an RK4 end (t = 200, 2000 steps of 0.1; the
attraction is exponential with rate ~beta, so at t = 200 the end is within 1e-6 of the rest) within 1e-3 (which
stationary point only). Closed forms: 1e-12 relative (a few roundings of a square root) away from cancellation.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle

import numpy as np

import hostile_audit_round14_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi

INF = math.inf


def _lazy(fn, *args, **kw):
    """``fn(*args, **kw)`` computed once, when first asked for (the reference's flows cost seconds)."""
    memo = []

    def get():
        if not memo:
            memo.append(fn(*args, **kw))
        return memo[0]
    return get


def _allclose(got, want, rtol=1e-10, atol=1e-13):
    got = np.asarray(got, float).ravel()
    want = np.asarray(want, float).ravel()
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    bad = [(g, w) for g, w in zip(got, want) if not abs(g - w) <= atol + rtol * abs(w)]
    return True if not bad else f"{bad[:3]}"


# ---------------------------------------------------------------- expectations against the enumeration
EXP_CASES = [  # (levels, w, G, Objective kwargs, reference kwargs)
    ([0.0, 1.0], [0.3, 0.7], 3, {}, {}),
    ([0.0, 0.5, 1.0], [0.2, 0.3, 0.5], 4, {}, {}),
    ([0.0, 0.5, 1.0], [0.2, 0.3, 0.5], 3, dict(std_ddof=1, std_eps=0.1), dict(ddof=1, eps=0.1)),
    ([-2.0, 0.0, 3.0], [0.5, 0.25, 0.25], 5, dict(std_ddof=1), dict(ddof=1)),
    ([0.0, 1.0], [1e-6, 1 - 1e-6], 6, {}, {}),
    ([0.0, 1.0], [0.999, 0.001], 7, dict(std_eps=1e-4), dict(eps=1e-4)),
    ([0.0, 0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4], 4, dict(variance_eps=0.05), dict(veps=0.05)),
    ([0.0, 1.0, 2.0], [0.6, 0.3, 0.1], 3, dict(normalization="shift"), dict(kind="shift")),
    ([0.0, 1.0, 2.0], [0.6, 0.3, 0.1], 5, dict(normalization="shift", std_ddof=1), dict(kind="shift")),
    ([1e-9, 2e-9], [0.5, 0.5], 4, {}, {}),
    ([1e6, 1e6 + 1], [0.25, 0.75], 4, {}, {}),
    ([0.0, 1.0], [0.5, 0.5], 2, dict(std_ddof=1, std_eps=0.5), dict(ddof=1, eps=0.5)),
    ([0.0, 0.3, 1.0], [1 / 3, 1 / 3, 1 / 3], 6, dict(variance_eps=1e-8), dict(veps=1e-8)),
    ([-1.0, 1.0], [0.9, 0.1], 8, dict(std_ddof=1, std_eps=1e-6), dict(ddof=1, eps=1e-6)),
    ([0.0, 2.0, 5.0], [0.0, 0.5, 0.5], 4, {}, {}),
    ([0.0, 1.0, 4.0, 9.0], [0.4, 0.3, 0.2, 0.1], 3, dict(std_ddof=1), dict(ddof=1)),
]


def expectation_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory import advantage as A
    from grpo_theory import preference as P
    from grpo_theory.monte_carlo import sampled_advantages

    G_ = "API: advantage expectations against an ordered-tuple enumeration"
    out = []
    for levels, w, G, okw, rkw in EXP_CASES:
        obj = Objective(beta=1.0, group_size=G, **okw)
        with np.errstate(divide="ignore"):
            lw = np.log(np.array(w))
        want = ref.cond_adv(levels, w, G, **rkw)
        out.append(_ok(G_, f"level_expectations(levels={levels}, w={w}, G={G}, {okw})",
                       lambda levels=levels, lw=lw, obj=obj: P.level_expectations(np.array(levels), lw[None, :], obj)[0],
                       lambda v, want=want, w=w: _allclose([a for a, b in zip(v, w) if b > 0],
                                                           [a for a, b in zip(want, w) if b > 0])))
    for levels, w, G in [([0.0, 1.0], [0.3, 0.7], 3), ([0.0, 0.5, 2.0], [0.2, 0.5, 0.3], 4),
                         ([-1.0, 3.0], [0.01, 0.99], 9), ([0.0, 1.0, 2.0], [0.5, 0.0, 0.5], 5)]:
        obj = Objective(beta=1.0, group_size=G, advantage="rloo")
        with np.errstate(divide="ignore"):
            lw = np.log(np.array(w))
        want = ref.cond_adv(levels, w, G, kind="rloo")
        out.append(_ok(G_, f"rloo_expectations(levels={levels}, w={w}, G={G})",
                       lambda levels=levels, lw=lw, obj=obj: A.rloo_expectations(np.array(levels), lw[None, :], obj)[0],
                       lambda v, want=want, w=w: _allclose([a for a, b in zip(v, w) if b > 0],
                                                           [a for a, b in zip(want, w) if b > 0])))
    for w1, G, k in [(0.3, 4, 2), (0.05, 5, 3), (0.9, 6, 2), (0.5, 3, 1), (0.2, 8, 4)]:
        obj = Objective(beta=1.0, group_size=G, advantage="pass_at_k", pass_k=k)
        want = ref.cond_adv([0.0, 1.0], [1 - w1, w1], G, kind="passk", k=k)
        out.append(_ok(G_, f"pass_at_k_expectations(w_pass={w1}, G={G}, k={k})",
                       lambda w1=w1, obj=obj: A.pass_at_k_expectations(np.array([0.0, 1.0]),
                                                                        np.log([[1 - w1, w1]]), obj)[0],
                       lambda v, want=want: _allclose(v, want)))
    for G, k in [(4, 2), (5, 5), (6, 1), (7, 3)]:
        def table_check(v, G=G, k=k):
            a_pass, a_fail = v
            for n in range(G + 1):
                rs = [1] * n + [0] * (G - n)
                adv = ref.group_adv(rs, kind="passk", k=k)
                wp = adv[0] if n > 0 else None
                wf = adv[-1] if n < G else None
                if wp is not None and not abs(a_pass[n] - wp) <= 1e-12 + 1e-12 * abs(wp):
                    return f"n_pass={n}: A_pass {a_pass[n]} != {wp}"
                if wf is not None and not abs(a_fail[n] - wf) <= 1e-12 + 1e-12 * abs(wf):
                    return f"n_pass={n}: A_fail {a_fail[n]} != {wf}"
            return True
        out.append(_ok(G_, f"pass_at_k_table(0..{G}, G={G}, k={k})",
                       lambda G=G, k=k: A.pass_at_k_table(np.arange(G + 1), G, k), table_check))
    for R, w, G in [([[1, 0], [0, 1]], [0.3, 0.7], 3), ([[0.5, 0.5], [0, 1], [1, 0]], [0.25, 0.75], 5),
                    ([[0.2, 0.3, 0.5]], [0.1, 0.1, 0.8], 4)]:
        want = [sum(R[c][j] * (1 - w[j] ** (G - 1)) for j in range(len(w))) for c in range(len(R))]
        out.append(_ok(G_, f"tie_free_probability(R={R}, w={w}, G={G})",
                       lambda R=R, w=w, G=G: A.tie_free_probability(np.array(R, float), np.log(np.array(w)), G),
                       lambda v, want=want: _allclose(v, want, 1e-12, 1e-15)))
    for G, L in [(2, 2), (5, 3), (10, 4), (64, 2), (30, 6), (1, 5)]:
        want = ref.simplex_interior(G - 1 + L, L) if G > 1 else 1      # count vectors = C(G + L - 2, L - 1)
        want = math.comb(G + L - 2, L - 1)
        out.append(_ok(G_, f"n_count_vectors({G}, {L}) = C(G+L-2, L-1)",
                       lambda G=G, L=L: P.n_count_vectors(G, L), lambda v, want=want: v == want or f"{v} != {want}"))
    # max |A| over every group of G members on the two extreme levels, by enumeration of the ones count
    for G, ddof in [(5, 0), (5, 1), (9, 0), (2, 1), (17, 1)]:
        want = max(abs(a) for n in range(1, G) for a in ref.group_adv([1.0] * n + [0.0] * (G - n), ddof=ddof))
        out.append(_ok(G_, f"max_abs_advantage(1.0, G={G}, ddof={ddof}) = the largest |A| of any group",
                       lambda G=G, ddof=ddof: P.max_abs_advantage(1.0, Objective(beta=1, group_size=G, std_ddof=ddof)),
                       lambda v, want=want: (v >= want - 1e-12 and v <= want * (1 + 1e-12) + 1e-12) or f"{v} vs {want}"))
    for lab, kw, want in [("beta=0.3", dict(beta=0.3), 0.3), ("beta=0, entropy_coef=0.07", dict(beta=0, entropy_coef=0.07), 0.07),
                          ("beta=2, entropy_coef=0.5", dict(beta=2.0, entropy_coef=0.5), 2.0)]:
        out.append(_ok(G_, f"regularisation_scale(Objective({lab}))", lambda kw=kw: A.regularisation_scale(Objective(**kw)),
                       lambda v, want=want: v == want or f"{v}"))
    for lab, r, kw, rkw in [("ddof=1 eps=0.01", [[3.0, 1.0, 1.0, 0.0]], dict(std_ddof=1, std_eps=0.01), dict(ddof=1, eps=0.01)),
                            ("variance_eps=0.2", [[0.0, 0.5, 1.0]], dict(variance_eps=0.2), dict(veps=0.2)),
                            ("shift", [[2.0, -1.0, 5.0, 5.0, 0.0]], dict(normalization="shift"), dict(kind="shift")),
                            ("rloo", [[1.0, 0.0, 0.0, 0.0, 1.0]], dict(advantage="rloo"), dict(kind="rloo")),
                            ("tie", [[0.7, 0.7, 0.7]], {}, {}),
                            ("huge rewards", [[1e300, -1e300]], {}, {})]:
        G = len(r[0])
        want = ref.group_adv(r[0], **rkw)
        out.append(_ok(G_, f"sampled_advantages({r}, {lab})",
                       lambda r=r, kw=kw, G=G: sampled_advantages(np.array(r), Objective(beta=1, group_size=G, **kw))[0],
                       lambda v, want=want: _allclose(v, want, 1e-12, 1e-14)))
    # bad arguments
    ob = Objective(beta=1.0, group_size=3)
    for lab, call, names in [
            ("pass_at_k_table(n_pass=[5], G=4, k=2) (more passes than members)",
             lambda: A.pass_at_k_table(np.array([5]), 4, 2), ["n_pass", "5"]),
            ("pass_at_k_table(n_pass=[-1], G=4, k=2)", lambda: A.pass_at_k_table(np.array([-1]), 4, 2), ["n_pass", "-1"]),
            ("pass_at_k_table(n_pass=[1.5], G=4, k=2)", lambda: A.pass_at_k_table(np.array([1.5]), 4, 2), ["n_pass", "1.5"]),
            ("pass_at_k_table([1], G=4, k=0)", lambda: A.pass_at_k_table(np.array([1]), 4, 0), ["k", "0"]),
            ("pass_at_k_table([1], G=0, k=1)", lambda: A.pass_at_k_table(np.array([1]), 0, 1), ["G", "0"]),
            ("level_expectations(log_w of a law summing to 1.1)",
             lambda: P.level_expectations(np.array([0.0, 1.0]), np.log([[0.5, 0.6]]), ob), ["log_w"]),
            ("level_expectations(log_w with a NaN)",
             lambda: P.level_expectations(np.array([0.0, 1.0]), np.array([[np.nan, 0.0]]), ob), ["log_w"]),
            ("level_expectations(levels [0, 0] repeated)",
             lambda: P.level_expectations(np.array([0.0, 0.0]), np.log([[0.5, 0.5]]), ob), ["levels"]),
            ("level_expectations(levels [0, inf])",
             lambda: P.level_expectations(np.array([0.0, np.inf]), np.log([[0.5, 0.5]]), ob), ["levels"]),
            ("level_expectations(3 levels, log_w of 2)",
             lambda: P.level_expectations(np.array([0.0, 1.0, 2.0]), np.log([[0.5, 0.5]]), ob), ["log_w"]),
            ("level_expectations(part='both')",
             lambda: P.level_expectations(np.array([0.0, 1.0]), np.log([[0.5, 0.5]]), ob, part="both"), ["part", "both"]),
            ("level_expectations(obj={'beta': 1})",
             lambda: P.level_expectations(np.array([0.0, 1.0]), np.log([[0.5, 0.5]]), {"beta": 1}), ["Objective"]),
            ("tie_free_probability(R rows summing to 2)",
             lambda: A.tie_free_probability(np.array([[1.0, 1.0]]), np.log([0.5, 0.5]), 3), ["R"]),
            ("tie_free_probability(group_size=0)",
             lambda: A.tie_free_probability(np.array([[1.0, 0.0]]), np.log([0.5, 0.5]), 0), ["group_size", "0"]),
            ("n_count_vectors(3, 0) (no level)", lambda: P.n_count_vectors(3, 0), ["n_levels", "0"]),
            ("n_count_vectors(2.5, 2)", lambda: P.n_count_vectors(2.5, 2), ["group_size", "2.5"]),
            ("max_abs_advantage(nan, obj)", lambda: P.max_abs_advantage(float("nan"), ob), ["n_levels_span", "nan"]),
            ("sampled_advantages(rewards with a NaN)",
             lambda: sampled_advantages(np.array([[1.0, np.nan, 0.0]]), ob), ["r", "nan"]),
            ("sampled_advantages(rewards of 4 columns, G = 3)",
             lambda: sampled_advantages(np.array([[1.0, 0.0, 0.0, 1.0]]), ob), ["r", "3"]),
            ("sampled_advantages(a 0-d array)", lambda: sampled_advantages(np.array(1.0), ob), ["r"]),
            ("regularisation_scale(None)", lambda: A.regularisation_scale(None), ["Objective"])]:
        out.append(_err(G_, lab, call, names))
    return out


# ---------------------------------------------------------------- Question x Objective combinations
BIN_COMBOS = [  # (p, beta, G, Objective kwargs, gap) ; rewards gap / 0
    (0.3, 0.37, 3, dict(std_ddof=1, std_eps=0.02), 1.0),
    (0.05, 1.3, 4, dict(std_ddof=1, std_eps=1e-4), 1.0),
    (0.6, 0.08, 5, dict(variance_eps=0.3), 1.0),
    (0.5, 0.5, 3, dict(std_eps=0.5), 0.1),
    (0.5, 0.5, 3, dict(std_eps=0.5), 10.0),
    (0.2, 0.9, 6, dict(penalty="direct", std_ddof=1), 1.0),
    (0.7, 2.5, 3, dict(penalty="direct", std_eps=0.3), 2.0),
    (0.1, 0.25, 2, dict(filter_ties=True, std_ddof=1), 1.0),
    (0.4, 0.6, 4, dict(filter_ties=True, penalty="direct"), 1.0),
    (0.3, 0.5, 3, dict(entropy_coef=0.2, std_ddof=1), 1.0),
    (0.85, 0.15, 4, dict(entropy_coef=0.01, penalty="direct"), 1.0),
    (0.3, 0.4, 5, dict(normalization="shift", penalty="reverse"), 3.0),
    (0.3, 0.4, 5, dict(normalization="shift", penalty="direct"), 3.0),
    (0.02, 0.7, 3, dict(advantage="rloo", penalty="reverse"), 0.5),
    (0.6, 1.7, 6, dict(advantage="rloo", entropy_coef=0.3), 1.0),
    (0.25, 0.2, 4, dict(advantage="pass_at_k", pass_k=2), 1.0),
    (0.25, 0.2, 5, dict(advantage="pass_at_k", pass_k=2, penalty="direct"), 1.0),
    (0.001, 3.0, 7, {}, 1.0),
    (0.999, 0.05, 3, {}, 1.0),
    (0.5, 10.0, 8, dict(std_ddof=1), 1.0),
    (0.45, 0.011, 2, dict(penalty="direct"), 1.0),
    (0.3, 0.5, 3, dict(filter_ties=True, entropy_coef=0.1), 1.0),
    (0.3, 0.5, 2, dict(kl_estimator="k2"), 1.0),
    (0.3, 0.5, 3, dict(kl_estimator="k3_ratio"), 1.0),
    (0.66, 0.45, 4, dict(std_ddof=1, std_eps=0.05, filter_ties=True), 0.25),
    (0.12, 0.33, 3, dict(variance_eps=0.01, penalty="direct", entropy_coef=0.05), 1.0),
]

MULTI_COMBOS = [  # (pi_ref, rewards, beta, G, Objective kwargs)
    ([0.2, 0.5, 0.3], [1.0, 0.0, 0.4], 0.7, 3, dict(std_ddof=1, std_eps=0.01)),
    ([0.1, 0.1, 0.8], [0.0, 2.0, 1.0], 0.45, 4, dict(variance_eps=0.1)),
    ([0.3, 0.3, 0.4], [1.0, 1.0, 0.0], 0.6, 3, dict(penalty="direct")),
    ([0.25, 0.25, 0.5], [3.0, 0.0, 1.0], 1.2, 2, dict(filter_ties=True)),
    ([0.6, 0.3, 0.1], [0.0, 0.5, 1.0], 0.9, 3, dict(entropy_coef=0.15)),
    ([0.2, 0.3, 0.5], [1.0, 0.5, 0.0], 0.5, 4, dict(advantage="rloo")),
    ([0.4, 0.4, 0.2], [0.2, 0.1, 0.9], 2.0, 5, dict(std_ddof=1)),
    ([0.05, 0.9, 0.05], [1.0, 0.0, 0.5], 0.8, 3, dict(normalization="shift")),
]


def combo_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: Question x Objective combinations (two outputs: the flow's rest; three: KKT + RK4)"
    out = []
    for p, beta, G, kw, gap in BIN_COMBOS:
        adv = kw.get("advantage", "group")
        rk = dict(kind={"rloo": "rloo", "pass_at_k": "passk"}.get(adv, "shift" if kw.get("normalization") == "shift" else "scale"),
                  ddof=kw.get("std_ddof", 0), eps=kw.get("std_eps", 0.0), veps=kw.get("variance_eps", 0.0),
                  k=kw.get("pass_k") or 1)
        pen = "direct" if kw.get("penalty") == "direct" or kw.get("kl_estimator") in ("k2", "k3_ratio") else "reverse"
        R, levels = ref.det_R([gap, 0.0])
        want = _lazy(ref.binary_rest, p, R, levels, beta, G, penalty=pen, filter_ties=kw.get("filter_ties", False),
                     entropy=kw.get("entropy_coef", 0.0), **rk)
        lab = f"stationary_policy p={p} beta={beta} G={G} rewards=[{gap}, 0] {' '.join(f'{k}={v}' for k, v in kw.items())}"
        out.append(_ok(G_, lab, lambda p=p, beta=beta, G=G, kw=kw, gap=gap:
                       stationary_policy(Question([p, 1 - p], rewards=[gap, 0.0]), Objective(beta=beta, group_size=G, **kw)),
                       lambda v, want=want: ref.near_x(_pi(v)[0], want(), 1e-7) or f"{_pi(v)[0]!r} != ref {want()!r}"))
    for pi_ref, rewards, beta, G, kw in MULTI_COMBOS:
        adv = kw.get("advantage", "group")
        rk = dict(kind={"rloo": "rloo"}.get(adv, "shift" if kw.get("normalization") == "shift" else "scale"),
                  ddof=kw.get("std_ddof", 0), eps=kw.get("std_eps", 0.0), veps=kw.get("variance_eps", 0.0))
        pen = kw.get("penalty", "reverse")
        R, levels = ref.det_R(rewards)
        extra = dict(penalty=pen, filter_ties=kw.get("filter_ties", False), entropy=kw.get("entropy_coef", 0.0), **rk)
        end = _lazy(ref.rk4, pi_ref, R, levels, beta, G, 200.0, 2000, **extra)

        def chk(v, pi_ref=pi_ref, R=R, levels=levels, beta=beta, G=G, extra=extra, end=end):
            pi = list(_pi(v))
            if min(pi) <= 0:
                return f"a face: {pi}"
            res = ref.kkt(pi, pi_ref, R, levels, beta, G, **extra)
            if res > 1e-8:
                return f"reference KKT residual {res:.2e} at {pi}"
            d = max(abs(a - b) for a, b in zip(pi, end()))
            return True if d < 1e-3 else f"{pi} is not the RK4 end {end()} ({d:.1e})"
        lab = f"stationary_policy pi_ref={pi_ref} rewards={rewards} beta={beta} G={G} {' '.join(f'{k}={v}' for k, v in kw.items())}"
        out.append(_ok(G_, lab, lambda pi_ref=pi_ref, rewards=rewards, beta=beta, G=G, kw=kw:
                       stationary_policy(Question(pi_ref, rewards=rewards), Objective(beta=beta, group_size=G, **kw)), chk))
    # random rewards (reward_levels + reward_probs) and labels: the same rest through the level law
    for p, pa, pb, beta, G in [(0.3, 0.8, 0.4, 0.5, 3), (0.5, 0.6, 0.55, 0.2, 4), (0.1, 1.0, 0.0, 0.7, 3), (0.7, 0.3, 0.9, 0.4, 2)]:
        R = [[1 - pa, pa], [1 - pb, pb]]
        want = _lazy(ref.binary_rest, p, R, [0.0, 1.0], beta, G)
        out.append(_ok(G_, f"stationary_policy Bernoulli rewards p_a={pa} p_b={pb} pi_ref(a)={p} beta={beta} G={G} labels=['yes', 'no']",
                       lambda p=p, R=R, beta=beta, G=G: stationary_policy(
                           Question([p, 1 - p], reward_levels=[0.0, 1.0], reward_probs=R, labels=["yes", "no"]),
                           Objective(beta=beta, group_size=G)),
                       lambda v, want=want: ref.near_x(_pi(v)[0], want(), 1e-7) or f"{_pi(v)[0]!r} != ref {want()!r}"))
    # a pairwise preference matrix at G = 2 (SPEC section 2): P_2(o) = sum_o' pi(o') (2 M[o, o'] - 1)
    for p, m, beta in [(0.3, 0.8, 0.4), (0.6, 0.55, 0.1), (0.2, 1.0, 1.5)]:
        gamma = 2 * m - 1
        want = ref.eq14(p, beta, gamma)
        out.append(_ok(G_, f"stationary_policy preference [[0.5, {m}], [{1 - m:.2f}, 0.5]] pi_ref(a)={p} beta={beta} = Eq. 14 at gamma={gamma:.2f}",
                       lambda p=p, m=m, beta=beta: stationary_policy(Question([p, 1 - p], preference=[[0.5, m], [1 - m, 0.5]]),
                                                                     Objective(beta=beta, group_size=2)),
                       lambda v, want=want: ref.near_x(_pi(v)[0], want, 1e-9) or f"{_pi(v)[0]!r} != Eq. 14 {want!r}"))
    return out


# ---------------------------------------------------------------- results containers
def container_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationarity_residual, stationary_points, stationary_policy

    G_ = "API: results containers (copy, pickle, ==, hash, repr, JSON) and fed back in"
    q = lambda: Question([0.3, 0.7], rewards=[1, 0])      # noqa: E731
    q3 = lambda: Question([0.2, 0.5, 0.3], rewards=[1, 0, 0.4])      # noqa: E731
    o = lambda: Objective(beta=0.5)                        # noqa: E731
    sp = lambda: stationary_policy(q(), o())               # noqa: E731
    ss = lambda: stationary_points(q(), o())               # noqa: E731
    want = ref.eq14(0.3, 0.5)
    out = []

    def ok_pi(v):
        return ref.near_x(_pi(v)[0], want, 1e-9) or f"{_pi(v)}"
    out.append(_ok(G_, "StationaryPoint == its pickled copy (a bool)", lambda: sp() == pickle.loads(pickle.dumps(sp())),
                   lambda v: v is True or f"{v!r}"))
    out.append(_ok(G_, "StationaryPoint == its deepcopy (a bool)", lambda: (lambda a: a == copy.deepcopy(a))(sp()),
                   lambda v: v is True or f"{v!r}"))
    out.append(_ok(G_, "StationaryPoint != another beta's point (a bool)",
                   lambda: sp() != stationary_policy(q(), Objective(beta=0.9)), lambda v: v is True or f"{v!r}"))
    out.append(_ok(G_, "StationaryPointSet == its pickled copy (a bool)", lambda: ss() == pickle.loads(pickle.dumps(ss())),
                   lambda v: v is True or f"{v!r}"))
    out.append(_ok(G_, "StationaryPoint in a list of points (membership uses ==)", lambda: sp() in [ss()[0], sp()],
                   lambda v: v is True or f"{v!r}"))

    def hashed(x):
        try:
            return ("hash", hash(x))
        except TypeError as exc:
            return ("TypeError", str(exc))
    for lab, mk, cls in [("StationaryPoint", sp, "StationaryPoint"), ("StationaryPointSet", ss, "StationaryPointSet")]:
        out.append(_ok(G_, f"hash({lab}): an int, or TypeError naming {lab}", lambda mk=mk: hashed(mk()),
                       lambda v, cls=cls: v[0] == "hash" or cls in v[1] or f"TypeError: {v[1]}"))
        out.append(_ok(G_, f"{{{lab}}} (a set of results): built, or TypeError naming {lab}",
                       lambda mk=mk: hashed(frozenset([mk()])) if True else None,
                       lambda v, cls=cls: v[0] == "hash" or cls in v[1] or f"TypeError: {v[1]}"))
    out.append(_ok(G_, "copy.copy(StationaryPoint).pi right", lambda: copy.copy(sp()), ok_pi))
    out.append(_ok(G_, "pickle round trip of StationaryPointSet: its point right",
                   lambda: pickle.loads(pickle.dumps(ss(), protocol=0))[0], ok_pi))
    out.append(_ok(G_, "dataclasses.replace(StationaryPoint, stable=False) keeps pi",
                   lambda: dataclasses.replace(sp(), stable=False), ok_pi))
    out.append(_ok(G_, "repr(StationaryPointSet) names its points' pi", lambda: repr(ss()),
                   lambda v: ("0.71" in v and "StationaryPointSet" in v) or v[:100]))
    out.append(_ok(G_, "repr of a 3-output StationaryPoint is one line", lambda: repr(stationary_policy(q3(), o())),
                   lambda v: "\n" not in v or repr(v[:120])))

    def js(x):
        return json.loads(json.dumps(x.pi.tolist()))
    out.append(_ok(G_, "JSON of .pi.tolist() read back as a Question's pi_ref gives the same rest",
                   lambda: stationary_policy(Question(js(sp()), rewards=[1, 0]), o()),
                   lambda v: ref.near_x(_pi(v)[0], ref.eq14(want, 0.5), 1e-9) or f"{_pi(v)}"))
    out.append(_ok(G_, "StationaryPoint.pi as pi_ref (a numpy array from a result)",
                   lambda: stationary_policy(Question(sp().pi, rewards=[1, 0]), o()),
                   lambda v: ref.near_x(_pi(v)[0], ref.eq14(want, 0.5), 1e-9) or f"{_pi(v)}"))
    out.append(_ok(G_, "stationarity_residual(q, o, StationaryPointSet[0].pi) small",
                   lambda: stationarity_residual(q(), o(), ss()[0].pi), lambda v: float(v) < 1e-10 or f"{v}"))
    out.append(_ok(G_, "stationarity_residual(q, o, a pickled point's pi) small",
                   lambda: stationarity_residual(q(), o(), pickle.loads(pickle.dumps(sp())).pi),
                   lambda v: float(v) < 1e-10 or f"{v}"))
    for lab, call, names in [
            ("Objective(beta=a StationaryPoint)", lambda: Objective(beta=sp()), ["beta", "StationaryPoint"]),
            ("Objective(beta=0.5, group_size=a StationaryPointSet)", lambda: Objective(beta=0.5, group_size=ss()),
             ["group_size", "StationaryPointSet"]),
            ("Question([0.3, 0.7], rewards=a StationaryPoint)", lambda: Question([0.3, 0.7], rewards=sp()),
             ["rewards", "StationaryPoint"]),
            ("stationary_points(q, o) with q a dict of Question fields", lambda: stationary_points({"pi_ref": [0.3, 0.7],
                                                                                                    "rewards": [1, 0]}, o()),
             ["Question"]),
            ("stationarity_residual(q, o, json.dumps(pi)) (a JSON text)",
             lambda: stationarity_residual(q(), o(), json.dumps(sp().pi.tolist())), ["pi"]),
            ("stationary_policy(q, o) with o a pickled Objective's bytes",
             lambda: stationary_policy(q(), pickle.dumps(o())), ["Objective"]),
            ("Question(pi_ref=StationaryPointSet.basins)", lambda: Question(ss().basins, rewards=[1, 0]), ["pi_ref"]),
            ("Question(labels=[a StationaryPoint, 'b'])", lambda: Question([0.3, 0.7], rewards=[1, 0], labels=[sp(), "b"]),
             ["labels"])]:
        out.append(_err(G_, lab, call, names))
    # a point's arrays must not be editable through the returned object (its residual describes it)
    def append_refused():
        try:
            ss().points.append(None)
        except (AttributeError, TypeError):
            return "refused"
        return "appended"
    out.append(_ok(G_, "StationaryPointSet.points is not a mutable list (append refused)", append_refused,
                   lambda v: v == "refused" or v))
    return out


# ---------------------------------------------------------------- sweep grids in Python
def sweep_api_cases() -> list[dict]:
    from grpo_theory import Objective, Question
    from grpo_theory import sweep as S

    G_ = "API: sweep.grid_size / check_grid / cases_from_grid / Case / evaluate_case"
    out = []
    for K, n in [(2, 10), (3, 20), (4, 12), (5, 9), (3, 1000), (6, 30), (2, 3)]:
        rewards = [float(i) for i in range(K)]
        grid = {"simplex": {"rewards": rewards, "step": 1 / n}, "objectives": {"beta": [0.5, 1.0], "group_size": [2, 4, "inf"]}}
        want = (ref.simplex_interior(n, K), 6)
        out.append(_ok(G_, f"grid_size(simplex K={K}, step=1/{n}, 2 betas x 3 G) = (C({n}-1, {K}-1), 6)",
                       lambda grid=grid: S.grid_size(grid), lambda v, want=want: tuple(v) == want or f"{v} != {want}"))
    qs = [{"name": f"q{i}", "pi_ref": [0.5, 0.5], "rewards": [1, 0]} for i in range(3)]
    out.append(_ok(G_, "grid_size(3 questions + simplex step 1/4 on 3 rewards)",
                   lambda: S.grid_size({"questions": qs, "simplex": {"rewards": [1, 0, 2], "step": 0.25},
                                        "objectives": {"beta": 0.5}}),
                   lambda v: tuple(v) == (3 + ref.simplex_interior(4, 3), 1) or f"{v}"))
    out.append(_ok(G_, "cases_from_grid keys: beta 1 and 1.0 written once each way (documented: beta=1.0)",
                   lambda: [c.key for c in S.cases_from_grid({"questions": qs[:1], "objectives": {"beta": [1, 2.5]}})],
                   lambda v: v == ["q0|beta=1.0", "q0|beta=2.5"] or f"{v}"))
    out.append(_ok(G_, "cases_from_grid(simplex step 1/3 on 3 rewards): the one interior point (1/3, 1/3, 1/3)",
                   lambda: S.cases_from_grid({"simplex": {"rewards": [1, 0, 0.5], "step": 1 / 3}, "objectives": {"beta": 0.5}}),
                   lambda v: (len(v) == 1 and np.allclose(v[0].question.pi_ref, 1 / 3, atol=1e-15)) or f"{[c.key for c in v]}"))
    out.append(_ok(G_, "evaluate_case on a two-output case: reached policy = Eq. 14",
                   lambda: S.evaluate_case(S.Case("k", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0.5))),
                   lambda v: (ref.near_x(float(json.loads(v["reached_policy"])[0]) if isinstance(v["reached_policy"], str)
                                         else float(v["reached_policy"][0]), ref.eq14(0.3, 0.5), 1e-9)) or f"{v}"))
    out.append(_ok(G_, "Case(objective=a dict of fields) becomes an Objective",
                   lambda: S.Case("k", Question([0.3, 0.7], rewards=[1, 0]), {"beta": 0.5, "group_size": 4}).objective,
                   lambda v: (isinstance(v, Objective) and v.group_size == 4) or f"{v!r}"))
    out.append(_either(G_, "cases_from_grid(objectives penalty: [reverse, reverse]) (the same value twice)",
                       lambda: S.cases_from_grid({"questions": qs[:1], "objectives": {"beta": 0.5, "penalty": ["reverse", "reverse"]}}),
                       lambda v: len(v) == 1 or f"{[c.key for c in v]}", ["penalty"]))
    big = {"simplex": {"rewards": [1, 0, 0.5, 0.2], "step": 1e-4}, "objectives": {"beta": 0.5}}
    out.append(_either(G_, "grid_size(simplex step 1e-4 on 4 rewards: ~1.7e11 points) counted, not enumerated",
                       lambda: S.grid_size(big), lambda v: v[0] == math.comb(9999, 3) or f"{v}", ["step"]))
    for lab, grid, names in [
            ("check_grid(None)", None, ["grid"]),
            ("check_grid([])", [], ["grid"]),
            ("cases_from_grid({'objectives': {'beta': 0.5}}) (no question)", {"objectives": {"beta": 0.5}}, ["questions"]),
            ("cases_from_grid(objectives beta: [0.5, 'x'])", {"questions": qs[:1], "objectives": {"beta": [0.5, "x"]}},
             ["beta", "x"]),
            ("cases_from_grid(objectives: {'betta': 0.5}) (a typo)", {"questions": qs[:1], "objectives": {"betta": 0.5}},
             ["betta"]),
            ("cases_from_grid(two questions named 'q')", {"questions": [dict(qs[0], name="q"), dict(qs[1], name="q")],
                                                          "objectives": {"beta": 0.5}}, ["q"]),
            ("cases_from_grid(simplex step 0)", {"simplex": {"rewards": [1, 0], "step": 0}, "objectives": {"beta": 0.5}},
             ["step"]),
            ("cases_from_grid(simplex step -0.5)", {"simplex": {"rewards": [1, 0], "step": -0.5}, "objectives": {"beta": 0.5}},
             ["step"]),
            ("cases_from_grid(simplex rewards of 1 output)", {"simplex": {"rewards": [1], "step": 0.5},
                                                             "objectives": {"beta": 0.5}}, ["rewards"]),
            ("cases_from_grid(simplex without step)", {"simplex": {"rewards": [1, 0]}, "objectives": {"beta": 0.5}}, ["step"]),
            ("cases_from_grid(questions: a dict, not a list)", {"questions": qs[0], "objectives": {"beta": 0.5}},
             ["questions"]),
            ("cases_from_grid(a question with pi_ref 'abc')", {"questions": [{"pi_ref": "abc", "rewards": [1, 0]}],
                                                              "objectives": {"beta": 0.5}}, ["pi_ref"]),
            ("cases_from_grid(objectives group_size [2, 2.5])", {"questions": qs[:1],
                                                                "objectives": {"beta": 0.5, "group_size": [2, 2.5]}},
             ["group_size", "2.5"]),
            ("cases_from_grid(objectives beta: {'a': 1}) (a mapping value)", {"questions": qs[:1],
                                                                             "objectives": {"beta": {"a": 1}}}, ["beta"]),
            ("cases_from_grid(a grid of 10^6 x 10^3 cases)", {"simplex": {"rewards": [1, 0], "step": 1e-6},
                                                              "objectives": {"beta": list(np.linspace(0.1, 1, 1000))}},
             ["200,000"])]:
        fn = S.check_grid if lab.startswith("check_grid") else S.cases_from_grid
        if lab.startswith("check_grid"):
            out.append(_either(G_, lab, lambda grid=grid: S.check_grid(grid),
                               lambda v, names=names: (bool(v) and all(n in " ".join(v) for n in names)) or f"{v}", names))
        else:
            out.append(_err(G_, lab, lambda grid=grid, fn=fn: fn(grid), names))
    for lab, args, names in [("Case('', q, o) (empty key)", ("", Question([0.3, 0.7], rewards=[1, 0]), {"beta": 0.5}), ["key"]),
                             ("Case('a\\nb', q, o)", ("a\nb", Question([0.3, 0.7], rewards=[1, 0]), {"beta": 0.5}), ["key"]),
                             ("Case(5, q, o)", (5, Question([0.3, 0.7], rewards=[1, 0]), {"beta": 0.5}), ["key"]),
                             ("Case('k', q, {'beta': -1})", ("k", Question([0.3, 0.7], rewards=[1, 0]), {"beta": -1}),
                              ["beta"]),
                             ("Case('k', None, o)", ("k", None, {"beta": 0.5}), ["Question"])]:
        out.append(_err(G_, lab, lambda args=args: S.Case(*args), names))
    out.append(_err(G_, "evaluate_case(a dict)", lambda: S.evaluate_case({"key": "k"}), ["Case"]))
    return out


# ---------------------------------------------------------------- convergence on trainer-like logs
def _hist(n=60, drift=0.0, start=0.7, keys=("p_best_q0", "p_best_q1"), every=10, extra=None):
    rows = []
    for i in range(n):
        row = {"step": (i + 1) * every, "loss": 0.1, "learning_rate": 1e-5, "epoch": i / n}
        for j, k in enumerate(keys):
            row[k] = start + 0.05 * j + drift * i
        if extra:
            row.update(extra(i))
        rows.append(row)
    return rows


def convergence_cases() -> list[dict]:
    from grpo_theory import convergence as cv

    G_ = "API: convergence.check_history / summarise_convergence on trainer-like logs"
    out = []
    flat = _hist()
    out.append(_ok(G_, "check_history: 60 rows, flat values, extra TRL keys (loss, learning_rate, epoch)",
                   lambda: cv.check_history(_hist(), 2), lambda v: list(v.status) == ["converged", "converged"] or f"{v.status}"))
    out.append(_ok(G_, "check_history: a steady climb of 0.004 per logged row (0.06 over the tail) is moving",
                   lambda: cv.check_history(_hist(drift=0.004, start=0.4), 2),
                   lambda v: list(v.status) == ["moving", "moving"] or f"{v.status}"))
    out.append(_either(G_, "check_history: rows given newest first (a reversed log): read by step, or refused naming step",
                       lambda: cv.check_history(list(reversed(_hist(drift=0.004, start=0.4))), 2),
                       lambda v: list(v.status) == ["moving", "moving"] or f"{v.status}", ["step"]))
    out.append(_either(G_, "check_history(step given as text '10', '20', ...): read as numbers, or refused naming step",
                       lambda: cv.check_history([dict(r, step=str(r["step"])) for r in _hist()], 2),
                       lambda v: list(v.status) == ["converged", "converged"] or f"{v.status}", ["step"]))
    out.append(_ok(G_, "check_history: every value exactly 1.0 (a solved prompt) converged",
                   lambda: cv.check_history(_hist(start=1.0, keys=("p_best_q0",)), 1),
                   lambda v: list(v.status) == ["converged"] or f"{v.status}"))
    out.append(_ok(G_, "check_history: n_prompts=1 of a log holding 2 prompts (reads q0 only)",
                   lambda: cv.check_history(_hist(), 1), lambda v: len(v.status) == 1 or f"{v.status}"))
    out.append(_ok(G_, "check_history: an alternating +-0.1 tail is oscillating",
                   lambda: cv.check_history(_hist(keys=("p_best_q0",), start=0.5,
                                                  extra=lambda i: {"p_best_q0": 0.5 + (0.1 if i % 2 else -0.1)}), 1),
                   lambda v: list(v.status) == ["oscillating"] or f"{v.status}"))
    for lab, hist, n, names in [
            ("check_history([], 1)", [], 1, ["history"]),
            ("check_history(rows without 'step')", [{k: v for k, v in r.items() if k != "step"} for r in flat], 2, ["step"]),
            ("check_history(n_prompts=3, the log has q0 and q1)", flat, 3, ["p_best_q2"]),
            ("check_history(n_prompts=0)", flat, 0, ["n_prompts", "0"]),
            ("check_history(n_prompts=-1)", flat, -1, ["n_prompts", "-1"]),
            ("check_history(n_prompts=1.5)", flat, 1.5, ["n_prompts", "1.5"]),
            ("check_history(a row with p_best_q0 = 'nan' text)",
             [dict(r, p_best_q0="nan") if i == 30 else r for i, r in enumerate(flat)], 2, ["p_best_q0"]),
            ("check_history(a row with p_best_q0 = None)",
             [dict(r, p_best_q0=None) if i == 59 else r for i, r in enumerate(flat)], 2, ["p_best_q0"]),
            ("check_history(p_best_q0 = 1.7, not a probability)",
             [dict(r, p_best_q0=1.7) for r in flat], 2, ["p_best_q0"]),
            ("check_history(two rows with the same step)", flat[:30] + [dict(flat[29])] + flat[30:], 2, ["step"]),
            ("check_history(a dict instead of a list of rows)", {"step": [1, 2]}, 1, ["history"]),
            ("check_history(rows that are lists)", [[1, 0.5]] * 20, 1, ["history"]),
            ("check_history(3 rows only)", flat[:3], 2, []),
            ("check_history(tail=1.5)", flat, 2, ["tail", "1.5"]),
            ("check_history(step = inf in the last row)", flat[:-1] + [dict(flat[-1], step=float("inf"))], 2, ["step"])]:
        kw = {"tail": 1.5} if "tail=1.5" in lab else {}
        out.append(_err(G_, lab, lambda hist=hist, n=n, kw=kw: cv.check_history(hist, n, **kw), names))
    # a TRL-like log where the eval rows lack the p_best keys (interleaved "eval_loss" rows)
    mixed = []
    for r in _hist():
        mixed.append(r)
        mixed.append({"step": r["step"], "eval_loss": 0.3})
    out.append(_either(G_, "check_history: eval rows without p_best keys interleaved (same steps)",
                       lambda: cv.check_history(mixed, 2), lambda v: list(v.status) == ["converged", "converged"] or f"{v.status}",
                       ["p_best_q0"]))
    # a trainer_state.json as a trainer writes it: read with json.loads (NaN literals allowed), a final summary row
    state = {"log_history": _hist() + [{"step": 600, "train_runtime": 12.5, "train_loss": 0.1, "total_flos": 0}]}
    text = json.dumps(state)
    out.append(_either(G_, "check_history(trainer_state.json's log_history with its final summary row, no p_best keys)",
                       lambda: cv.check_history(json.loads(text)["log_history"], 2),
                       lambda v: list(v.status) == ["converged", "converged"] or f"{v.status}", ["p_best_q0"]))
    nan_text = 'NaN}'.join(json.dumps({"log_history": _hist()}).rsplit('0.75}', 1))     # the last row's value
    out.append(_err(G_, "check_history(a log_history whose last row holds a JSON NaN for p_best_q1)",
                    lambda: cv.check_history(json.loads(nan_text)["log_history"], 2), ["p_best_q1"]))
    out.append(_ok(G_, "check_history(steps logged as floats 10.0, 20.0, ...)",
                   lambda: cv.check_history([dict(r, step=float(r["step"])) for r in _hist()], 2),
                   lambda v: list(v.status) == ["converged", "converged"] or f"{v.status}"))
    out.append(_ok(G_, "check_history(rows of NumPy scalars, as DataFrame.to_dict('records') gives them)",
                   lambda: cv.check_history(__import__("pandas").DataFrame(_hist()).to_dict("records"), 2),
                   lambda v: list(v.status) == ["converged", "converged"] or f"{v.status}"))
    out.append(_ok(G_, "summarise_convergence: 2 converged (errors 0.1, -0.3), 1 moving",
                   lambda: cv.summarise_convergence([0.1, -0.3, 0.9], ["converged", "converged", "moving"], ["a", "b", "c: moving"]),
                   lambda v: (abs(v["mae_converged"] - 0.2) < 1e-15 and abs(v["max_converged"] - 0.3) < 1e-15
                              and v["n_converged"] == 2 and v["n_moving"] == 1 and v["n_oscillating"] == 0) or f"{v}"))
    out.append(_ok(G_, "summarise_convergence: none converged gives NaN mae",
                   lambda: cv.summarise_convergence([0.1], ["moving"]),
                   lambda v: (math.isnan(v["mae_converged"]) and v["n_converged"] == 0) or f"{v}"))
    for lab, args, names in [
            ("summarise_convergence(3 errors, 2 statuses)", ([0.1, 0.2, 0.3], ["converged", "moving"]), ["status"]),
            ("summarise_convergence(status 'done')", ([0.1], ["done"]), ["done"]),
            ("summarise_convergence(errors with NaN for a converged prompt)", ([float("nan")], ["converged"]), ["errors"]),
            ("summarise_convergence(errors 'abc')", ("abc", ["converged"]), ["errors"]),
            ("summarise_convergence(status a str 'converged')", ([0.1], "converged"), ["status"]),
            ("summarise_convergence(reasons of another length)", ([0.1, 0.2], ["converged", "moving"], ["x", "y", "z"]),
             ["reasons"])]:
        out.append(_err(G_, lab, lambda args=args: cv.summarise_convergence(*args), names))
    return out


# ---------------------------------------------------------------- the symbolic module
def symbolic_cases() -> list[dict]:
    import sympy as sp

    from grpo_theory import symbolic as sy
    from grpo_theory import symbolic_proofs as pf

    G_ = "API: symbolic derivations at the reference's roots; symbolic_proofs with bad input"
    out = []

    def sol_at(d, **vals):
        e = d.solution
        subs = {s: vals[s.name] for s in e.free_symbols if s.name in vals}
        return float(e.subs(subs).evalf(30))
    for p, beta, gamma in [(0.3, 0.5, 1.0), (0.01, 2.0, 0.5), (0.9, 0.05, 1.0), (0.5, 1.0, 1.0)]:
        out.append(_ok(G_, f"derive_eq14().solution at p={p}, beta={beta}, gamma={gamma} = Eq. 14",
                       lambda p=p, beta=beta, gamma=gamma: sol_at(sy.derive_eq14(), p=p, beta=beta, gamma=gamma),
                       lambda v, want=ref.eq14(p, beta, gamma): ref.close(v, want, 1e-12) or f"{v} != {want}"))
    for p, beta in [(0.3, 0.5), (0.05, 3.0), (0.7, 0.1)]:
        out.append(_ok(G_, f"derive_eq15().solution at p={p}, beta={beta} = Eq. 15",
                       lambda p=p, beta=beta: sol_at(sy.derive_eq15(), p=p, beta=beta),
                       lambda v, want=ref.eq15(p, beta): ref.close(v, want, 1e-12) or f"{v} != {want}"))

    def cond_at(G, penalty, x, p, beta):
        e = sy.binary_finite_group_condition(G, penalty)
        vals = {"x": x, "p": p, "beta": beta}
        return float(e.subs({s: vals[s.name] for s in e.free_symbols}).evalf(30))
    R, lv = ref.det_R([1.0, 0.0])
    for G, pen, p, beta in [(3, "reverse", 0.3, 0.5), (4, "reverse", 0.1, 0.2), (5, "direct", 0.4, 0.7), (6, "reverse", 0.6, 1.5)]:
        x = _lazy(ref.binary_rest, p, R, lv, beta, G, penalty=pen)
        out.append(_ok(G_, f"binary_finite_group_condition({G}, '{pen}') vanishes at the reference rest (p={p}, beta={beta})",
                       lambda G=G, pen=pen, x=x, p=p, beta=beta: (cond_at(G, pen, x(), p, beta),
                                                                  cond_at(G, pen, (x() + p) / 2, p, beta)),
                       lambda v: (abs(v[0]) < 1e-9 and abs(v[1]) > 1e-4) or f"{v}"))
    for p, beta, gamma in [(0.3, 0.5, 1.0), (0.02, 0.1, 0.4), (0.8, 3.0, 2.0)]:
        out.append(_ok(G_, f"derive_pairwise_direct().solution at p={p}, beta={beta}, gamma={gamma} = the G = 2 direct form",
                       lambda p=p, beta=beta, gamma=gamma: sol_at(sy.derive_pairwise_direct(), p=p, beta=beta, gamma=gamma),
                       lambda v, want=ref.g2_direct(p, beta, gamma): ref.near_x(v, want, 1e-12) or f"{v} != {want}"))
    for beta in (0.1, 1.0, 7.0):
        out.append(_ok(G_, f"derive_large_group_direct().solution at beta={beta} = the turning point x*",
                       lambda beta=beta: sol_at(sy.derive_large_group_direct(), beta=beta),
                       lambda v, want=ref.turning_point(beta): ref.close(v, want, 1e-12) or f"{v} != {want}"))
    Rf, lvf = ref.det_R([1.0, 0.0])
    for p, beta in [(0.3, 0.5), (0.05, 2.0)]:
        xf = _lazy(ref.binary_rest, p, Rf, lvf, beta, 2, filter_ties=True)

        def filt(p=p, beta=beta, xf=xf):
            d = sy.derive_filtered_pairwise()
            e = d.condition.lhs - d.condition.rhs
            vals = {"x": xf(), "p": p, "beta": beta}
            return float(e.subs({s_: vals[s_.name] for s_ in e.free_symbols}).evalf(30))
        out.append(_ok(G_, f"derive_filtered_pairwise().condition vanishes at the reference's tie-filtered rest (p={p}, beta={beta})",
                       filt, lambda v: abs(v) < 1e-12 or f"{v}"))
    from grpo_theory import symbolic_identities as si
    for name in ("identity_pairwise_advantage", "identity_penalty_gradient", "identity_shift_direct_is_rlhf",
                 "identity_zero_mean_preference"):
        out.append(_ok(G_, f"symbolic_identities.{name}() holds", lambda name=name: getattr(si, name)(),
                       lambda v: bool(v.holds) or f"{v}"))
    x_ = sp.Symbol("x", positive=True)
    for lab, call, names in [
            ("binary_finite_group_condition(1)", lambda: sy.binary_finite_group_condition(1), ["group_size", "1"]),
            ("binary_finite_group_condition(2.5)", lambda: sy.binary_finite_group_condition(2.5), ["group_size", "2.5"]),
            ("binary_finite_group_condition(3, 'sideways')", lambda: sy.binary_finite_group_condition(3, "sideways"),
             ["penalty", "sideways"]),
            ("binary_finite_group_condition(10**6) (a symbolic sum of a million terms)",
             lambda: sy.binary_finite_group_condition(10 ** 6), ["group_size"]),
            ("prove_positive('x + 1', x, 's') (a str, not an expression)", lambda: pf.prove_positive("x + 1", x_, "s"), ["expr"]),
            ("prove_positive(x + 1, 'x', 's') (var a str)", lambda: pf.prove_positive(x_ + 1, "x", "s"), ["var"]),
            ("prove_sign(x, 2, 's', {x: (0, 1)}) (sign 2)", lambda: pf.prove_sign(x_, 2, "s", {x_: (0, 1)}), ["sign", "2"]),
            ("prove_sign(x, 1, 's', {x: (1, 0)}) (an empty range)", lambda: pf.prove_sign(x_ - 5, 1, "s", {x_: (1, 0)}),
             ["x"]),
            ("prove_sign(x, 1, 's', {x: (0, 1)}, n_points=0)", lambda: pf.prove_sign(x_ - 5, 1, "s", {x_: (0, 1)}, n_points=0),
             ["n_points", "0"]),
            ("prove_zero(x - x, 5) (statement not a text)", lambda: pf.prove_zero(x_ - x_, 5), ["statement"]),
            ("prove_sign(x - 5, 1, 's', {x: (0, nan)}) (a NaN range end)",
             lambda: pf.prove_sign(x_ - 5, 1, "s", {x_: (0, float("nan"))}), ["nan"])]:
        out.append(_err(G_, lab, call, names))
    out.append(_ok(G_, "prove_positive(x**2 + 1, x, 's') holds", lambda: pf.prove_positive(x_ ** 2 + 1, x_, "s"),
                   lambda v: bool(getattr(v, "holds", getattr(v, "ok", True))) or f"{v}"))
    out.append(_ok(G_, "prove_zero(x - 1, 's', {x: (0, 2)}) does not hold (a false statement is not 'proved')",
                   lambda: pf.prove_zero(x_ - 1, "s", {x_: (0, 2)}),
                   lambda v: not bool(getattr(v, "holds", getattr(v, "ok", False))) or f"{v}"))
    out.append(_ok(G_, "prove_sign(x - 1, +1, 's', {x: (0, 2)}) does not hold",
                   lambda: pf.prove_sign(x_ - 1, 1, "s", {x_: (0, 2)}),
                   lambda v: not bool(getattr(v, "holds", getattr(v, "ok", False))) or f"{v}"))
    return out


# ---------------------------------------------------------------- mapping, problem, closed forms
def misc_cases() -> list[dict]:
    from grpo_theory import Objective, Question
    from grpo_theory import closed_form as cf
    from grpo_theory import problem as pr
    from grpo_theory._question import as_question
    from grpo_theory.integrations import mapping as mp
    from grpo_theory.monte_carlo import sample_rewards

    G_ = "API: integrations.mapping, problem helpers, sample_rewards"
    out = []
    for v, want in [("1.16.0", (1, 16, 0)), ("0.19.1.dev0", (0, 19, 1)), ("2.0.0rc1", (2, 0, 0)), ("1.9", (1, 9, 0)),
                    (" 1.16.0 ", (1, 16, 0)), ("v1.16.0", (1, 16, 0))]:
        out.append(_either(G_, f"parse_version({v!r})", lambda v=v: mp.parse_version(v),
                           lambda r, want=want: tuple(r) == want or f"{r}", ["version", v.strip()]))
    for lab, v in [("''", ""), ("None", None), ("1.16", 1.16), ("'1..16'", "1..16"), ("'-1.0.0'", "-1.0.0"),
                   ("'1.16.0' * 1000", "1.16.0" * 1000)]:
        out.append(_err(G_, f"parse_version({lab})", lambda v=v: mp.parse_version(v), ["version"]))
    table = [("0.1.0", {"beta": 0.04, "eps": 1e-4}, "a"), ("0.19.0", {"beta": 0.0}, "b"), ("1.0.0", {"eps": 1e-6}, "c")]
    for ver, want, warned in [("0.18.9", {"beta": 0.04, "eps": 1e-4}, False), ("0.19.0", {"beta": 0.0, "eps": 1e-4}, False),
                              ("5.0.0", {"beta": 0.0, "eps": 1e-6}, False), ("0.0.1", {"beta": 0.04, "eps": 1e-4}, True)]:
        # older than the first row: the warning, with the oldest row's defaults or none
        out.append(_ok(G_, f"defaults_for(3-row table, {ver!r})", lambda ver=ver: mp.defaults_for(table, ver, "TRL"),
                       lambda v, want=want, warned=warned: ((v[0] == want or warned and v[0] == {})
                                                            and bool(v[1]) == warned) or f"{v}"))
    for lab, tab, names in [("defaults_for(an unsorted table)", list(reversed(table)), ["table"]),
                            ("defaults_for(rows of 2 fields)", [("0.1.0", {"beta": 0.04})], ["table"])]:
        out.append(_err(G_, lab, lambda tab=tab: mp.defaults_for(tab, "1.0.0", "TRL"), names))
    out.append(_either(G_, "defaults_for([], '1.0.0') (an empty table): no defaults, or refused naming table",
                       lambda: mp.defaults_for([], "1.0.0", "TRL"), lambda v: v[0] == {} or f"{v}", ["table"]))
    out.append(_err(G_, "load_config_file('trl', a missing path)", lambda: mp.load_config_file("trl", "/nonexistent/c.json"),
                    ["/nonexistent/c.json"]))
    out.append(_err(G_, "load_config_file('keras', 'c.json')", lambda: mp.load_config_file("keras", "c.json"),
                    ["keras"]))
    out.append(_err(G_, "load_config_file('trl', None)", lambda: mp.load_config_file("trl", None), ["path"]))
    out.append(_either(G_, "as_objective({'beta': 0.5, 'group_size': 'inf'}): G = inf, or refused naming group_size",
                       lambda: pr.as_objective({"beta": 0.5, "group_size": "inf"}),
                       lambda v: v.group_size == INF or f"{v!r}", ["group_size"]))
    for lab, arg, names in [("as_objective({'beta': 0.5, 'gruop_size': 4}) (a typo)", {"beta": 0.5, "gruop_size": 4}, ["gruop_size"]),
                            ("as_objective([('beta', 0.5)])", [("beta", 0.5)], ["Objective"]),
                            ("as_objective('beta=0.5')", "beta=0.5", ["Objective"]),
                            ("as_objective({})", {}, ["beta"])]:
        out.append(_err(G_, lab, lambda arg=arg: pr.as_objective(arg), names))
    for lab, arg in [("as_question(None)", None), ("as_question([0.3, 0.7])", [0.3, 0.7]),
                     ("as_question({'pi_ref': [0.3, 0.7]})", {"pi_ref": [0.3, 0.7]}), ("as_question(Objective)", Objective(beta=1))]:
        out.append(_err(G_, lab, lambda arg=arg: as_question(arg), ["Question"]))
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    out.append(_ok(G_, "shaped_question(q, shift [0.1, 0, -0.2]): rewards 0.9, 0.5, 0.2",
                   lambda: pr.shaped_question(q, np.array([0.1, 0.0, -0.2])),
                   lambda v: _allclose(np.asarray(v.rewards, float), [0.9, 0.5, 0.2], 1e-15, 1e-15)))
    for lab, shift, names in [("shaped_question(q, shift of 2 entries for 3 outputs)", np.array([0.1, 0.2]), ["shift"]),
                              ("shaped_question(q, shift with NaN)", np.array([0.1, np.nan, 0.0]), ["shift"]),
                              ("shaped_question(q, shift 'abc')", "abc", ["shift"])]:
        out.append(_err(G_, lab, lambda shift=shift: pr.shaped_question(q, shift), names))
    qr = Question([0.5, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.25, 0.75], [1.0, 0.0]])
    out.append(_ok(G_, "sample_rewards: 200,000 draws of output 0 (P(1) = 0.75) within 5 SE",
                   lambda: sample_rewards(qr, np.zeros(200_000, int), np.random.default_rng(3)),
                   lambda v: abs(v.mean() - 0.75) < 5 * math.sqrt(0.75 * 0.25 / 200_000) or f"{v.mean()}"))
    out.append(_ok(G_, "sample_rewards: output 1 always 0", lambda: sample_rewards(qr, np.ones((3, 4), int), np.random.default_rng(0)),
                   lambda v: (v.shape == (3, 4) and not v.any()) or f"{v}"))
    for lab, outs, rng, names in [("sample_rewards(outputs [2] of a 2-output question)", np.array([2]), np.random.default_rng(0), ["outputs", "2"]),
                                  ("sample_rewards(outputs [-1])", np.array([-1]), np.random.default_rng(0), ["outputs", "-1"]),
                                  ("sample_rewards(outputs [0.5])", np.array([0.5]), np.random.default_rng(0), ["outputs"]),
                                  ("sample_rewards(rng=42)", np.array([0]), 42, ["rng"])]:
        out.append(_err(G_, lab, lambda outs=outs, rng=rng: sample_rewards(qr, outs, rng), names))

    G2 = "API: closed forms at values not yet checked"
    for p, beta, gap in [(0.3, 0.5, 2.0), (1e-8, 0.1, 1.0), (0.999999, 3.0, 0.2), (0.5, 1e-3, 1.0), (0.2, 50.0, 7.0)]:
        R, lv = ref.det_R([gap, 0.0])
        want = _lazy(ref.binary_rest, p, R, lv, beta, 3, kind="rloo")
        out.append(_ok(G2, f"binary_rloo({p}, {beta}, reward_gap={gap}) (reverse) = the RLOO flow's rest",
                       lambda p=p, beta=beta, gap=gap: float(cf.binary_rloo(p, beta, reward_gap=gap)),
                       lambda v, want=want: ref.near_x(v, want(), 1e-8) or f"{v!r} != {want()!r}"))
        wantd = ref.expit(ref.logit(p) + gap / beta)
        out.append(_ok(G2, f"binary_rloo({p}, {beta}, reward_gap={gap}, 'direct') = logit p + gap/beta",
                       lambda p=p, beta=beta, gap=gap: float(cf.binary_rloo(p, beta, reward_gap=gap, penalty="direct")),
                       lambda v, want=wantd: ref.near_x(v, want, 1e-11) or f"{v!r} != {want!r}"))
    for p, beta, G, gap in [(0.3, 0.5, 3, 1.0), (0.01, 0.2, 7, 0.5), (0.8, 4.0, 2, 3.0), (0.5, 0.05, 1000, 1.0), (0.4, 1.0, INF, 1.0)]:
        f = 1.0 if G == INF else (G - 1) / G
        want = ref.expit(ref.logit(p) + f * gap / beta)
        out.append(_ok(G2, f"binary_shift_direct({p}, {beta}, G={G}, gap={gap}) = logit p + (G-1)/G gap/beta",
                       lambda p=p, beta=beta, G=G, gap=gap: float(cf.binary_shift_direct(p, beta, G, reward_gap=gap)),
                       lambda v, want=want: ref.near_x(v, want, 1e-11) or f"{v!r} != {want!r}"))
    for p, beta in [(0.3, 0.5), (0.02, 0.1), (0.9, 2.0), (0.5, 0.01)]:
        R, lv = ref.det_R([1.0, 0.0])
        want = _lazy(ref.binary_rest, p, R, lv, beta, 2, filter_ties=True)
        out.append(_ok(G2, f"binary_pairwise_filtered({p}, {beta}) = the tie-filtered G = 2 rest",
                       lambda p=p, beta=beta: float(cf.binary_pairwise_filtered(p, beta)),
                       lambda v, want=want: ref.near_x(v, want(), 1e-8) or f"{v!r} != {want()!r}"))
    for beta in (0.05, 1.0, 30.0):
        out.append(_ok(G2, f"large_group_direct_turning_point({beta})", lambda beta=beta: float(cf.large_group_direct_turning_point(beta)),
                       lambda v, want=ref.turning_point(beta): ref.close(v, want, 1e-12) or f"{v} != {want}"))
    for x, p, beta in [(0.7, 0.3, 0.5), (0.999, 0.5, 2.0), (0.01, 0.2, 0.3)]:
        out.append(_ok(G2, f"large_group_direct_h({x}, {p}, {beta})", lambda x=x, p=p, beta=beta: float(cf.large_group_direct_h(x, p, beta)),
                       lambda v, want=ref.h_large_direct(x, p, beta): ref.close(v, want, 1e-11, 1e-12) or f"{v} != {want}"))
    for lab, call, names in [("binary_rloo(0.3, 0.5, reward_gap=0)", lambda: cf.binary_rloo(0.3, 0.5, reward_gap=0), ["reward_gap"]),
                             ("binary_rloo(0.3, 0.5, reward_gap=-1e-300)", lambda: cf.binary_rloo(0.3, 0.5, reward_gap=-1e-300), ["reward_gap"]),
                             ("binary_rloo(0.3, 0.5, penalty='k3')", lambda: cf.binary_rloo(0.3, 0.5, penalty="k3"), ["penalty", "k3"]),
                             ("binary_shift_direct(0.3, 0.5, 0)", lambda: cf.binary_shift_direct(0.3, 0.5, 0), ["group_size", "0"]),
                             ("binary_shift_direct(0.3, 0.5, 3, reward_gap=nan)",
                              lambda: cf.binary_shift_direct(0.3, 0.5, 3, reward_gap=float("nan")), ["reward_gap"]),
                             ("binary_pairwise_filtered(0.3, [0.5, -1])", lambda: cf.binary_pairwise_filtered(0.3, [0.5, -1]), ["beta"]),
                             ("large_group_direct_turning_point([0.5, -1])", lambda: cf.large_group_direct_turning_point([0.5, -1]), ["beta"]),
                             ("large_group_direct_h(0.0, 0.3, 0.5) (x at the vertex 0)",
                              lambda: cf.large_group_direct_h(0.0, 0.3, 0.5), ["x"])]:
        # h(x) -> +inf as x -> 0 (1/sqrt(x) outgrows -log(x/(1 - x)) = log(1/x) + ...): +inf, or a refusal naming x
        out.append(_either(G2, lab, call, lambda v: float(v) == INF or f"{v}", names) if "vertex" in lab
                   else _err(G2, lab, call, names))
    return out


def all_api_cases() -> list[dict]:
    return (expectation_cases() + combo_cases() + container_cases() + sweep_api_cases() + convergence_cases()
            + symbolic_cases() + misc_cases())


# ---------------------------------------------------------------- every stationary point; batches; training config
def _drift_roots(p, beta, G, pen, zmax=25.0, step=2e-3):
    """Every interior root of the two-output drift in the logit window [-zmax, zmax] (scan + bisection)."""
    R, lv = ref.det_R([1.0, 0.0])
    if G == INF:
        f = lambda z: (1 / math.sqrt(ref.expit(z) * ref.expit(-z))                       # noqa: E731
                       - beta * ((z - ref.logit(p)) if pen == "direct" else
                             ((1 - p) / ref.expit(-z) - p / ref.expit(z))))
    else:
        f = lambda z: ref.binary_drift(ref.expit(z), p, R, lv, beta, G, penalty=pen)    # noqa: E731
    roots, z, fz = [], -zmax, None
    fz = f(z)
    while z < zmax:
        z2 = z + step
        f2 = f(z2)
        if (fz > 0) != (f2 > 0):
            lo, hi, flo = z, z2, fz
            for _ in range(200):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                fm = f(mid)
                if (fm > 0) == (flo > 0):
                    lo, flo = mid, fm
                else:
                    hi = mid
            roots.append(ref.expit((lo + hi) / 2))
        z, fz = z2, f2
    return roots


def more_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_points, stationary_policy
    from grpo_theory.figures import build as fb
    from grpo_theory.solvers.batch import stationary_policies

    G_ = "API: every stationary point of two-output questions against the reference's root scan"
    out = []
    for p, beta, G, pen in [(0.3, 2.0, INF, "direct"), (0.05, 1.5, INF, "direct"), (0.3, 0.5, INF, "direct"),
                            (0.2, 0.7, 3, "direct"), (0.4, 0.3, 5, "reverse"), (0.01, 4.0, INF, "direct"),
                            (0.5, 0.9, 4, "direct"), (0.15, 1.2, 2, "reverse")]:
        roots = _lazy(_drift_roots, p, beta, G, pen)

        def chk(v, roots=roots):
            got = sorted(float(_pi(pt)[0]) for pt in v.points if 1e-12 < float(_pi(pt)[0]) < 1 - 1e-12)
            want = sorted(roots())
            if len(got) != len(want):
                return f"interior points {got} != reference roots {want}"
            bad = [(a, b) for a, b in zip(got, want) if not ref.near_x(a, b, 1e-7)]
            return True if not bad else f"{bad}"
        out.append(_ok(G_, f"stationary_points p={p} beta={beta} G={G} {pen}: the interior points",
                       lambda p=p, beta=beta, G=G, pen=pen: stationary_points(Question([p, 1 - p], rewards=[1, 0]),
                                                                              Objective(beta=beta, group_size=G, penalty=pen)),
                       chk))
    G2 = "API: solvers.batch.stationary_policies, preference matrices, random rewards on three outputs"
    qs = [Question([p, 1 - p], rewards=[1, 0]) for p in (0.1, 0.3, 0.5, 0.9)] + [Question([0.2, 0.5, 0.3], rewards=[1, 0, 0.4])]
    os_ = [Objective(beta=b, group_size=g) for b, g in ((0.2, 2), (0.5, INF), (1.0, 2), (3.0, INF), (0.7, 3))]

    def batch_chk(v):
        for i, (p, b, g) in enumerate(((0.1, 0.2, 2), (0.3, 0.5, INF), (0.5, 1.0, 2), (0.9, 3.0, INF))):
            want = ref.eq14(p, b) if g == 2 else ref.eq15(p, b)
            if not ref.near_x(float(np.asarray(v[i])[0]), want, 1e-9):
                return f"#{i}: {v[i]} != {want}"
        R, lv = ref.det_R([1.0, 0.0, 0.4])
        r = ref.kkt(list(np.asarray(v[4], float)), [0.2, 0.5, 0.3], R, lv, 0.7, 3)
        return r < 1e-8 or f"#4 KKT {r}"
    out.append(_ok(G2, "stationary_policies(5 mixed questions x objectives) = each closed form / KKT",
                   lambda: stationary_policies(qs, os_), batch_chk))
    out.append(_ok(G2, "stationary_policies([], []) = []", lambda: stationary_policies([], []), lambda v: list(v) == [] or f"{v}"))
    for lab, call, names in [("stationary_policies(2 questions, 1 objective)", lambda: stationary_policies(qs[:2], os_[:1]),
                              ["objectives"]),
                             ("stationary_policies([q, None], [o, o])", lambda: stationary_policies([qs[0], None], os_[:2]),
                              ["Question"]),
                             ("stationary_policies(a Question, an Objective) (not sequences)",
                              lambda: stationary_policies(qs[0], os_[0]), ["questions"]),
                             ("stationary_policies([q], [Objective(beta=0)]) (unregularised)",
                              lambda: stationary_policies(qs[:1], [Objective(beta=0)]), ["unregularised"])]:
        out.append(_err(G2, lab, call, names))
    for p, m, beta in [(0.3, 0.8, 0.4), (0.7, 0.6, 0.05), (0.02, 0.9, 2.0)]:
        want = ref.expit(ref.logit(p) + (2 * m - 1) / beta)
        out.append(_ok(G2, f"stationary_policy preference m={m}, pi_ref(a)={p}, beta={beta}, direct: logit x = logit p + (2m-1)/beta",
                       lambda p=p, m=m, beta=beta: stationary_policy(Question([p, 1 - p], preference=[[0.5, m], [1 - m, 0.5]]),
                                                                     Objective(beta=beta, group_size=2, penalty="direct")),
                       lambda v, want=want: ref.near_x(_pi(v)[0], want, 1e-9) or f"{_pi(v)[0]!r} != {want!r}"))
    for pi_ref, R, beta, G in [([0.2, 0.5, 0.3], [[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]], 0.4, 3),
                               ([0.4, 0.4, 0.2], [[0.0, 0.3, 0.7], [0.6, 0.4, 0.0], [0.2, 0.2, 0.6]], 0.8, 4),
                               ([0.1, 0.6, 0.3], [[0.5, 0.5], [0.9, 0.1], [0.3, 0.7]], 1.5, 2)]:
        levels = [0.0, 1.0] if len(R[0]) == 2 else [0.0, 0.5, 1.0]
        end = _lazy(ref.rk4, pi_ref, R, levels, beta, G, 200.0, 2000)

        def chk(v, pi_ref=pi_ref, R=R, levels=levels, beta=beta, G=G, end=end):
            pi = list(_pi(v))
            r = ref.kkt(pi, pi_ref, R, levels, beta, G)
            if r > 1e-8:
                return f"KKT {r:.1e} at {pi}"
            d = max(abs(a - b) for a, b in zip(pi, end()))
            return d < 1e-3 or f"{pi} vs RK4 {end()}"
        out.append(_ok(G2, f"stationary_policy random rewards R={R} pi_ref={pi_ref} beta={beta} G={G}",
                       lambda pi_ref=pi_ref, R=R, levels=levels, beta=beta, G=G: stationary_policy(
                           Question(pi_ref, reward_levels=levels, reward_probs=R), Objective(beta=beta, group_size=G)), chk))
    G4 = "API: G = inf and large finite G with the family's options (two outputs: the flow's rest)"
    for p, beta, kw in [(0.3, 0.5, dict(std_eps=0.2)), (0.1, 0.3, dict(variance_eps=0.5)), (0.6, 1.2, dict(entropy_coef=0.3)),
                        (0.3, 0.8, dict(normalization="shift")), (0.25, 0.4, dict(advantage="rloo")),
                        (0.4, 0.6, dict(filter_ties=True)), (0.2, 2.5, dict(std_eps=0.05, penalty="direct"))]:
        rk = dict(kind="rloo" if kw.get("advantage") == "rloo" else "shift" if kw.get("normalization") == "shift" else "scale",
                  eps=kw.get("std_eps", 0.0), veps=kw.get("variance_eps", 0.0))
        R, lv = ref.det_R([1.0, 0.0])
        want = _lazy(ref.binary_rest, p, R, lv, beta, INF, penalty=kw.get("penalty", "reverse"),
                     filter_ties=kw.get("filter_ties", False), entropy=kw.get("entropy_coef", 0.0), **rk)
        out.append(_ok(G4, f"stationary_policy p={p} beta={beta} G=inf {' '.join(f'{k}={v}' for k, v in kw.items())}",
                       lambda p=p, beta=beta, kw=kw: stationary_policy(Question([p, 1 - p], rewards=[1, 0]),
                                                                       Objective(beta=beta, group_size=INF, **kw)),
                       lambda v, want=want: ref.near_x(_pi(v)[0], want(), 1e-7) or f"{_pi(v)[0]!r} != ref {want()!r}"))
    for p, beta, G, pen in [(0.3, 0.5, 40, "reverse"), (0.05, 0.2, 200, "reverse"), (0.6, 1.0, 1000, "reverse"),
                            (0.3, 0.5, 3000, "reverse"), (0.2, 0.9, 40, "direct"), (0.5, 3.0, 500, "direct"),
                            (0.01, 0.1, 12, "reverse"), (0.9, 0.02, 64, "direct")]:
        want = _lazy(ref.binary_rest_binom, p, beta, G, pen)
        out.append(_ok(G4, f"stationary_policy p={p} beta={beta} G={G} {pen} (binomial sums)",
                       lambda p=p, beta=beta, G=G, pen=pen: stationary_policy(Question([p, 1 - p], rewards=[1, 0]),
                                                                             Objective(beta=beta, group_size=G, penalty=pen)),
                       lambda v, want=want: ref.near_x(_pi(v)[0], want(), 1e-7) or f"{_pi(v)[0]!r} != ref {want()!r}"))
    G5 = "API: reward_preference and stationarity_residual at random policies against the enumeration"
    from grpo_theory import reward_preference, stationarity_residual
    rng = np.random.default_rng(14)
    PREF = [  # (pi, reward_levels, reward_probs, G, Objective kwargs, reference kwargs)
        ([0.2, 0.5, 0.3], [0.0, 0.5, 1.0], [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.3, 0.4, 0.3]], 3, dict(std_ddof=1, std_eps=0.05),
         dict(ddof=1, eps=0.05)),
        ([0.6, 0.4], [0.0, 1.0], [[0.25, 0.75], [0.5, 0.5]], 5, dict(variance_eps=0.2), dict(veps=0.2)),
        ([0.1, 0.2, 0.3, 0.4], [-1.0, 2.0], [[1, 0], [0, 1], [0.5, 0.5], [0.9, 0.1]], 4, {}, {}),
        ([0.5, 0.5], [0.0, 0.3, 0.9], [[0.2, 0.2, 0.6], [0.0, 1.0, 0.0]], 6, dict(std_eps=1e-3), dict(eps=1e-3)),
        ([0.3, 0.3, 0.4], [0.0, 1.0, 3.0], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], 4, dict(normalization="shift"), dict(kind="shift")),
        ([0.7, 0.2, 0.1], [0.0, 1.0], [[0.3, 0.7], [0.8, 0.2], [0.0, 1.0]], 5, dict(advantage="rloo"), dict(kind="rloo")),
        ([0.25, 0.75], [0.0, 1.0], [[0.0, 1.0], [1.0, 0.0]], 6, dict(advantage="pass_at_k", pass_k=3), dict(kind="passk", k=3)),
        ([0.4, 0.6], [0.0, 0.5, 1.0], [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]], 3, dict(std_ddof=1), dict(ddof=1)),
        ([0.2, 0.8], [0.0, 1.0, 2.0], [[0.3, 0.3, 0.4], [0.1, 0.8, 0.1]], INF, dict(std_eps=0.1), dict(eps=0.1)),
        ([0.5, 0.3, 0.2], [0.0, 1.0], [[0.9, 0.1], [0.4, 0.6], [0.2, 0.8]], INF, dict(variance_eps=0.05), dict(veps=0.05)),
    ]
    for pi, lv, R, G, okw, rkw in PREF:
        want = ref.preference(pi, R, lv, G, **rkw)
        out.append(_ok(G5, f"reward_preference pi={pi} levels={lv} probs={R} G={G} {okw}",
                       lambda pi=pi, lv=lv, R=R, G=G, okw=okw: reward_preference(
                           Question([1 / len(pi)] * len(pi), reward_levels=lv, reward_probs=R),
                           Objective(beta=1.0, group_size=G, **okw), pi),
                       lambda v, want=want: _allclose(v, want)))
    for i, (rewards, G, pen, okw, rkw) in enumerate([
            ([1.0, 0.0, 0.4], 3, "reverse", dict(std_ddof=1, std_eps=0.02), dict(ddof=1, eps=0.02)),
            ([2.0, 1.0, 0.0, 1.0], 4, "reverse", {}, {}), ([0.0, 1.0], 5, "reverse", dict(variance_eps=0.1), dict(veps=0.1)),
            ([1.0, 0.5, 0.0], INF, "reverse", {}, {}), ([3.0, 0.0, 1.0], 2, "reverse", dict(normalization="shift"), dict(kind="shift")),
            ([1.0, 0.0, 0.4], 3, "direct", {}, {}), ([0.0, 1.0, 2.0], 4, "direct", dict(std_ddof=1), dict(ddof=1)),
            ([1.0, 0.0], INF, "direct", {}, {})]):
        K = len(rewards)
        pi = list(rng.dirichlet(np.ones(K)))
        pi_ref = list(rng.dirichlet(np.ones(K)))
        beta = float(rng.uniform(0.2, 2.0))
        R, levels = ref.det_R(rewards)

        def want(pi=pi, pi_ref=pi_ref, R=R, levels=levels, beta=beta, G=G, pen=pen, rkw=rkw):
            if pen == "reverse":
                return ref.kkt(pi, pi_ref, R, levels, beta, G, **rkw)
            P = ref.preference(pi, R, levels, G, **rkw)
            e = [a * math.exp(b / beta) for a, b in zip(pi_ref, P)]
            return max(abs(a - b / sum(e)) for a, b in zip(pi, e))
        out.append(_ok(G5, f"stationarity_residual at a random pi (seed 14, #{i}) rewards={rewards} G={G} {pen} {okw}",
                       lambda pi=pi, pi_ref=pi_ref, rewards=rewards, beta=beta, G=G, pen=pen, okw=okw: stationarity_residual(
                           Question(pi_ref, rewards=rewards), Objective(beta=beta, group_size=G, penalty=pen, **okw), pi),
                       lambda v, want=want: ref.close(float(v), want(), 1e-9, 1e-14) or f"{v!r} != {want()!r}"))
    G6 = "API: solvers.certify, preference.expectations_evaluator, advantage.changes_regulariser"
    from grpo_theory import advantage as A
    from grpo_theory import preference as P
    from grpo_theory.solvers import certify as C
    for p, beta, G, pen in [(0.3, 0.5, 2, "reverse"), (0.2, 0.8, 3, "reverse"), (0.3, 2.0, INF, "direct"),
                            (0.6, 0.4, INF, "reverse")]:
        roots = _lazy(_drift_roots, p, beta, G, pen)

        def cchk(v, roots=roots):
            got = sorted(float(np.asarray(getattr(r, "pi", getattr(r, "point", r)), float).ravel()[0]) for r in v.roots
                         if not getattr(r, "limit", False))
            want = sorted(roots())
            if len(got) != len(want):
                return f"certified interior roots {got} != reference {want}"
            return all(ref.near_x(a, b, 1e-7) for a, b in zip(got, want)) or f"{got} != {want}"
        out.append(_ok(G6, f"certified_stationary_points p={p} beta={beta} G={G} {pen}: the interior roots",
                       lambda p=p, beta=beta, G=G, pen=pen: C.certified_stationary_points(
                           Question([p, 1 - p], rewards=[1, 0]), Objective(beta=beta, group_size=G, penalty=pen)), cchk))
    qd = Question([0.5, 0.5], rewards=[1, 0])
    for lab, q_, o_, inside in [("in scope (reverse, deterministic rewards)", qd, Objective(beta=1.0), True),
                                ("filter_ties=True", qd, Objective(beta=1.0, filter_ties=True), False),
                                ("entropy_coef=0.1", qd, Objective(beta=1.0, entropy_coef=0.1), False),
                                ("Bernoulli rewards", Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.2, 0.8], [0.5, 0.5]]),
                                 Objective(beta=1.0), False)]:
        out.append(_ok(G6, f"certification_scope: {lab}", lambda q_=q_, o_=o_: C.certification_scope(q_, o_),
                       lambda v, inside=inside: (v is None) == inside and (inside or isinstance(v, str) and len(v) > 10)
                       or f"{v!r}"))
    out.append(_err(G6, "certified_stationary_points(q, o, time_budget=0)",
                    lambda: C.certified_stationary_points(qd, Objective(beta=1.0), time_budget=0), ["time_budget"]))
    # outside the scope: no roots, exhaustive=False and the scope's reason naming the 5 classes (the docstring)
    out.append(_ok(G6, "certified_stationary_points(q of 5 classes, o)",
                   lambda: C.certified_stationary_points(Question([0.2] * 5, rewards=[0, 1, 2, 3, 4]), Objective(beta=1.0)),
                   lambda v: (v.roots == () and v.exhaustive is False and "5" in v.message) or f"{v!r}"))
    for levels, w, G, okw, rkw in [([0.0, 1.0], [0.4, 0.6], 5, {}, {}), ([0.0, 0.5, 1.0], [0.2, 0.2, 0.6], 4, dict(std_ddof=1),
                                                                         dict(ddof=1)),
                                   ([0.0, 1.0], [0.1, 0.9], INF, {}, {}), ([-1.0, 2.0, 5.0], [0.5, 0.3, 0.2], 3,
                                                                           dict(normalization="shift"), dict(kind="shift"))]:
        want = (ref.cond_adv_inf(levels, w, **rkw) if G == INF else ref.cond_adv(levels, w, G, **rkw))
        out.append(_ok(G6, f"expectations_evaluator(levels={levels}, G={G}, {okw})(log w={w})",
                       lambda levels=levels, w=w, G=G, okw=okw: P.expectations_evaluator(
                           np.array(levels), Objective(beta=1.0, group_size=G, **okw))(np.log([w]))[0],
                       lambda v, want=want: _allclose(v, want)))
    for lab, kw, want in [("filter_ties=True", dict(filter_ties=True), True), ("entropy_coef=1e-300", dict(entropy_coef=1e-300), True),
                          ("std_eps=0.5 (not a regulariser)", dict(std_eps=0.5), False)]:
        out.append(_ok(G6, f"changes_regulariser(Objective(beta=1, {lab}))", lambda kw=kw: A.changes_regulariser(Objective(beta=1.0, **kw)),
                       lambda v, want=want: v is want or f"{v!r}"))
    G3 = "API: figures.build helpers and training.TrainerConfig"
    out.append(_ok(G3, "figure_numbers() = the range the CLI's help prints (1-9, 11-33)", fb.figure_numbers,
                   lambda v: v == "1-9, 11-33" or v))
    import pandas as pd
    a = pd.DataFrame({"x": [1.0, np.nan], "s": ["a", "b"]})
    for lab, b_, want in [("same_table(a, a with NaN) is True", a.copy(), True),
                          ("same_table(a, a + 1e-3) is False", a.assign(x=a.x + 1e-3), False),
                          ("same_table(a, a with a renamed column) is False", a.rename(columns={"s": "t"}), False),
                          ("same_table(a, a with 'b' -> 'c') is False", a.assign(s=["a", "c"]), False)]:
        out.append(_ok(G3, lab, lambda b_=b_: fb.same_table(a, b_), lambda v, want=want: bool(v) is want or f"{v}"))
    out.append(_err(G3, "same_table(a, a, rtol=-1)", lambda: fb.same_table(a, a, rtol=-1), ["rtol"]))
    out.append(_err(G3, "same_table(a, 'a.csv') (a path, not a frame)", lambda: fb.same_table(a, "a.csv"), ["DataFrame"]))

    def cfg(**kw):
        from grpo_theory.training.trainer import TrainerConfig
        return TrainerConfig(**kw)
    out.append(_ok(G3, "TrainerConfig(objective={'beta': 0.3, 'group_size': 4}) (a dict of fields)",
                   lambda: cfg(objective={"beta": 0.3, "group_size": 4}),
                   lambda v: (isinstance(v.objective, Objective) and v.objective.group_size == 4) or f"{v.objective!r}"))
    out.append(_ok(G3, "TrainerConfig().with_changes(beta=0.2, steps=10)", lambda: cfg().with_changes(beta=0.2, steps=10),
                   lambda v: (v.objective.beta == 0.2 and v.steps == 10) or f"{v}"))
    for lab, kw, names in [("TrainerConfig(steps=-5)", dict(steps=-5), ["steps", "-5"]),
                           ("TrainerConfig(learning_rate=nan)", dict(learning_rate=float("nan")), ["learning_rate"]),
                           ("TrainerConfig(clip_eps=-0.1)", dict(clip_eps=-0.1), ["clip_eps"]),
                           ("TrainerConfig(optimizer='adamw2')", dict(optimizer="adamw2"), ["optimizer", "adamw2"]),
                           ("TrainerConfig(dtype='float8')", dict(dtype="float8"), ["dtype", "float8"]),
                           ("TrainerConfig(final_window=1.5)", dict(final_window=1.5), ["final_window"]),
                           ("TrainerConfig(groups_per_question=0)", dict(groups_per_question=0), ["groups_per_question"]),
                           ("TrainerConfig(objective=None)", dict(objective=None), ["objective"])]:
        out.append(_err(G3, lab, lambda kw=kw: cfg(**kw), names))
    out.append(_err(G3, "TrainerConfig().with_changes(stepz=10) (a typo)", lambda: cfg().with_changes(stepz=10), ["stepz"]))
    out.append(_err(G3, "TrainerConfig().with_changes(beta=-1)", lambda: cfg().with_changes(beta=-1), ["beta"]))
    return out


_all_api_first = all_api_cases


def all_api_cases() -> list[dict]:      # noqa: F811  (the extra groups appended)
    return _all_api_first() + more_cases()
