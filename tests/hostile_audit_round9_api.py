"""Cases of the ninth hostile audit (issue 45), part one: the Python API as a researcher uses it in a notebook.

Answers that must be right (every family member, KL estimator and placement at unusual but valid parameters;
the closed forms at parameters no round tried), checked against :mod:`hostile_audit_round9_ref` (no
``grpo_theory`` import); objects reused across calls and results fed back in; the results' documented
attributes.

Tolerances. The library documents ``converged`` as a residual below 1e-10 and its closed forms are exact to a
few ulps; the reference is 40-digit mpmath (bisection to 2^-140) or ``math.fsum`` enumeration (1e-15). So a
root or closed form is held to 1e-9 relative to ``x`` and, near 1, to 1e-9 relative to ``1 - x`` where the
closed form resolves it (a wrong root is off by 1e-3 or more); a stationarity condition scaled by
``1 + max|P_G|/beta`` to 1e-9; a preference vector to 1e-10 relative with 1e-13 absolute; the RK4 + Newton
flow end to 1e-7 absolute on ``pi`` (the Newton polish converges to 1e-12; 1e-7 leaves room for its
conditioning on a 3-simplex, and a different stationary point is 1e-2 away).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle

import numpy as np

import hostile_audit_round9_ref as ref
from hostile_audit_fresh import ok_case as _ok

INF = math.inf
TOL = 1e-9


def _err(group, label, call, names, expect="error", wrong=()):
    return dict(group=group, label=label, call=call, expect=expect, names=list(names), wrong=list(wrong))


def _pi(v):
    return np.asarray(getattr(v, "pi", v), float).ravel()


def _near(got, want, tol=TOL):
    """``got`` within ``tol`` relative of ``want``, and of ``1 - want`` where ``want`` is near 1."""
    got, want = float(got), float(want)
    if abs(got - want) <= tol * abs(want):
        return True
    return abs(got - want) <= max(tol * (1 - want), 1e-15) if want > 0.5 else f"{got!r} != {want!r}"


# ---------------------------------------------------------------- closed forms at new parameters
def closed_form_cases() -> list[dict]:
    from grpo_theory import closed_form as cf

    G_ = "API: closed forms at unusual parameters, checked"
    out = []
    for p, b, g in [(0.3, 0.2, 0.37), (0.01, 0.004, 0.01), (0.9, 3.0, 0.5), (0.5, 1e-6, 1e-3), (1e-9, 0.1, 0.8),
                    (0.45, 7.0, 7.0), (0.2, 0.05, 0.05), (0.999, 0.3, 0.2)]:
        out.append(_ok(G_, f"binary_pairwise({p}, {b}, gamma={g}) = Eq. 14 at beta/gamma",
                       lambda p=p, b=b, g=g: cf.binary_pairwise(p, b, g), lambda v, p=p, b=b, g=g: _near(v, ref.eq14(p, b, g))))
    for p, b, g in [(0.3, 0.2, 0.37), (1e-6, 0.05, 1.0), (0.7, 10.0, 0.01), (0.02, 0.6, 0.9), (0.5, 0.25, 0.0),
                    (0.4, 1e-3, 1e-4)]:
        out.append(_ok(G_, f"binary_pairwise_direct({p}, {b}, gamma={g}): logit x = logit p + gamma/beta",
                       lambda p=p, b=b, g=g: cf.binary_pairwise_direct(p, b, g),
                       lambda v, p=p, b=b, g=g: _near(v, ref.logistic_shift(p, g / b))))
    for p, b in [(1e-12, 0.3), (0.3, 1e-4), (0.3, 1e4), (0.999999, 2.0), (0.61, 0.61), (0.05, 37.0)]:
        out.append(_ok(G_, f"binary_large_group({p}, {b}) = Eq. 15", lambda p=p, b=b: cf.binary_large_group(p, b),
                       lambda v, p=p, b=b: _near(v, ref.eq15(p, b))))
    for p, b, gap, pen in [(0.3, 0.7, 2.5, "reverse"), (0.3, 0.7, 2.5, "direct"), (0.02, 0.03, 0.1, "reverse"),
                           (0.02, 0.03, 0.1, "direct"), (0.8, 5.0, 0.25, "reverse"), (0.5, 1e-3, 1e-3, "reverse"),
                           (0.1, 2.0, 30.0, "direct"), (0.66, 0.4, 1.0, "direct")]:
        want = ref.eq14(p, b, gap) if pen == "reverse" else ref.logistic_shift(p, gap / b)
        out.append(_ok(G_, f"binary_rloo({p}, {b}, reward_gap={gap}, penalty={pen!r})",
                       lambda p=p, b=b, gap=gap, pen=pen: cf.binary_rloo(p, b, gap, pen),
                       lambda v, w=want: _near(v, w)))
    for p, b, g, gap in [(0.3, 0.5, 3, 0.4), (0.1, 0.05, 17, 1.0), (0.6, 2.0, INF, 3.0), (0.25, 0.8, 2, -0.5),
                         (0.5, 0.01, 1000, 0.02), (0.05, 1.5, 5, 10.0)]:
        bp = b if g == INF else g * b / (g - 1)
        out.append(_ok(G_, f"binary_shift_direct({p}, {b}, G={g}, reward_gap={gap}): RLHF at beta' = G beta/(G-1)",
                       lambda p=p, b=b, g=g, gap=gap: cf.binary_shift_direct(p, b, g, gap),
                       lambda v, p=p, bp=bp, gap=gap: _near(v, ref.logistic_shift(p, gap / bp))))
    for p, b in [(0.3, 0.1), (0.01, 2.0), (0.8, 0.35), (0.5, 9.0), (1e-4, 0.5)]:
        out.append(_ok(G_, f"binary_pairwise_filtered({p}, {b}): the cubic's root above p",
                       lambda p=p, b=b: cf.binary_pairwise_filtered(p, b),
                       lambda v, p=p, b=b: _near(v, ref.root(p, b, filtered=True))))
    for p, b, c, m, pen in [(0.3, 0.5, 0.3, 1.0, "reverse"), (0.3, 0.5, 0.3, 1.0, "direct"),
                            (0.1, 0.2, 0.05, 0.6, "reverse"), (0.1, 0.2, 0.05, 0.6, "direct"),
                            (0.4, 2.0, 1.5, 1.0, "reverse"), (0.02, 0.01, 0.001, 1.0, "direct"),
                            (0.25, 1.0, 0.0, 0.5, "reverse"), (0.45, 0.3, 4.0, 2.0, "direct")]:
        if pen == "direct":
            # logit x = (Delta + beta logit p)/(beta + c), Delta = margin
            lp = math.log(p / (1 - p))
            want = 1 / (1 + math.exp(-(m + b * lp) / (b + c)))
        else:
            want = ref.root(p, b, 2, entropy=c, advantage="rloo", gap=m)     # Delta = margin, constant
        out.append(_ok(G_, f"binary_entropy({p}, beta={b}, c={c}, margin={m}, penalty={pen!r})",
                       lambda p=p, b=b, c=c, m=m, pen=pen: cf.binary_entropy(p, b, c, m, pen),
                       lambda v, w=want: _near(v, w, 1e-9)))
    for x, g in [(1e-15, 3), (1 - 1e-12, 4), (0.5, 2), (0.123, 777), (0.9, 60), (1e-3, 1500), (0.37, 11), (0.0, 5)]:
        pa, pb = ref.binary_pg(x, g)
        want = [float(pa), float(pb)]
        out.append(_ok(G_, f"binary_preference({x}, {g}) against the binomial sum",
                       lambda x=x, g=g: np.array([float(np.ravel(a)[0]) for a in cf.binary_preference(x, g)]),
                       lambda v, w=want: ref.close(v, w, rtol=1e-10, atol=1e-13) or f"{list(v)} != {w}"))
    for x, p, b in [(0.5, 0.3, 0.7), (0.99, 0.01, 2.0), (1e-3, 0.5, 10.0), (0.7, 0.7, 1e-3)]:
        out.append(_ok(G_, f"large_group_direct_h({x}, {p}, {b})", lambda x=x, p=p, b=b: cf.large_group_direct_h(x, p, b),
                       lambda v, x=x, p=p, b=b: ref.close(v, ref.h_large_direct(x, p, b), rtol=1e-12, atol=1e-12)))
    for b in (1e-3, 0.5, 40.0):
        out.append(_ok(G_, f"large_group_direct_turning_point({b})", lambda b=b: cf.large_group_direct_turning_point(b),
                       lambda v, b=b: _near(v, ref.turning_point(b), 1e-12)))
    # vectorised: every element right, broadcast as documented
    ps, bs = [0.1, 0.4, 0.8], [[0.2], [1.5]]
    want = np.array([[ref.eq14(p, b[0]) for p in ps] for b in bs])
    out.append(_ok(G_, "binary_pairwise over a (2, 1) x (3,) broadcast", lambda: cf.binary_pairwise(ps, bs),
                   lambda v, w=want: (np.shape(v) == (2, 3) and ref.close(v, w, rtol=TOL)) or f"{np.shape(v)} {v}"))
    want2 = np.array([ref.eq15(p, 0.7) for p in ps])
    out.append(_ok(G_, "binary_large_group over a list of p", lambda: cf.binary_large_group(ps, 0.7),
                   lambda v, w=want2: ref.close(v, w, rtol=TOL)))
    return out


# ---------------------------------------------------------------- the family, KL placements, stationary policies
def family_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: family members and KL settings at unusual parameters, checked"
    out = []

    def binq(p):
        return Question([p, 1 - p], rewards=[1, 0])

    specs = [  # label, p, objective kwargs, reference kwargs for ref.root
        ("rloo G=3 reverse", 0.2, dict(beta=0.35, group_size=3, advantage="rloo"), dict(G=3, advantage="rloo")),
        ("rloo G=7 direct", 0.4, dict(beta=0.9, group_size=7, advantage="rloo", penalty="direct"),
         dict(G=7, advantage="rloo", penalty="direct")),
        ("rloo G=inf reverse", 0.05, dict(beta=0.15, group_size=INF, advantage="rloo"), dict(G=INF, advantage="rloo")),
        ("rloo G=2 direct ddof=1 (RLOO has no std)", 0.6, dict(beta=0.3, group_size=2, advantage="rloo",
                                                                penalty="direct", std_ddof=1),
         dict(G=2, advantage="rloo", penalty="direct")),
        ("reinforce_pp G=2 beta=0.1", 0.3, dict(beta=0.1, group_size=2, advantage="reinforce_pp"),
         dict(G=2, advantage="reinforce_pp")),
        ("reinforce_pp G=5 beta=1.7", 0.15, dict(beta=1.7, group_size=5, advantage="reinforce_pp"),
         dict(G=5, advantage="reinforce_pp")),
        ("reinforce_pp G=inf beta=0.4", 0.5, dict(beta=0.4, group_size=INF, advantage="reinforce_pp"),
         dict(G=INF, advantage="reinforce_pp")),
        ("reinforce_pp G=12 direct", 0.25, dict(beta=2.0, group_size=12, advantage="reinforce_pp", penalty="direct"),
         dict(G=12, advantage="reinforce_pp", penalty="direct")),
        ("filter_ties G=2 p=0.12 beta=0.8", 0.12, dict(beta=0.8, group_size=2, filter_ties=True), dict(filtered=True)),
        ("filter_ties G=2 p=0.5 beta=0.05", 0.5, dict(beta=0.05, group_size=2, filter_ties=True), dict(filtered=True)),
        ("filter_ties G=2 p=0.03 beta=3", 0.03, dict(beta=3.0, group_size=2, filter_ties=True), dict(filtered=True)),
        ("entropy c=1 beta=0 G=4 p=0.07 (independent of pi_ref)", 0.07,
         dict(beta=0.0, group_size=4, entropy_coef=1.0), dict(G=4, entropy=1.0, penalty="direct")),
        ("entropy c=0.5 beta=0 G=6 p=0.2", 0.2, dict(beta=0.0, group_size=6, entropy_coef=0.5),
         dict(G=6, entropy=0.5, penalty="direct")),
        ("entropy c=0.2 reverse G=3 beta=0.4", 0.3, dict(beta=0.4, group_size=3, entropy_coef=0.2),
         dict(G=3, entropy=0.2)),
        ("entropy c=0.05 direct G=5 beta=1.2", 0.1, dict(beta=1.2, group_size=5, entropy_coef=0.05, penalty="direct"),
         dict(G=5, entropy=0.05, penalty="direct")),
        ("shift reverse G=5 beta=0.2", 0.3, dict(beta=0.2, group_size=5, normalization="shift"),
         dict(G=5, normalization="shift")),
        ("shift reverse G=2 beta=0.04", 0.01, dict(beta=0.04, group_size=2, normalization="shift"),
         dict(G=2, normalization="shift")),
        ("shift direct G=9 beta=0.3", 0.45, dict(beta=0.3, group_size=9, normalization="shift", penalty="direct"),
         dict(G=9, normalization="shift", penalty="direct")),
        ("variance_eps=0.1 G=4", 0.3, dict(beta=0.5, group_size=4, variance_eps=0.1), dict(G=4, veps=0.1)),
        ("variance_eps=1e-6 G=6 beta=0.05", 0.2, dict(beta=0.05, group_size=6, variance_eps=1e-6), dict(G=6, veps=1e-6)),
        ("variance_eps=2 G=3 direct", 0.4, dict(beta=0.6, group_size=3, variance_eps=2.0, penalty="direct"),
         dict(G=3, veps=2.0, penalty="direct")),
        ("ddof=1 eps=0.5 G=3 (a large epsilon)", 0.35, dict(beta=0.3, group_size=3, std_ddof=1, std_eps=0.5),
         dict(G=3, ddof=1, eps=0.5)),
        ("ddof=1 G=2 (advantages +-1/sqrt(2)... times sqrt 2)", 0.3, dict(beta=0.5, group_size=2, std_ddof=1),
         dict(G=2, ddof=1)),
        ("k2 in the loss = direct, G=4", 0.3, dict(beta=0.45, group_size=4, kl_estimator="k2"),
         dict(G=4, penalty="direct")),
        ("k3_plus in the loss = direct, G=3", 0.2, dict(beta=0.25, group_size=3, kl_estimator="k3_plus"),
         dict(G=3, penalty="direct")),
        ("k3_ratio in the loss = direct, G=6", 0.6, dict(beta=1.1, group_size=6, kl_estimator="k3_ratio"),
         dict(G=6, penalty="direct")),
        ("k3 in the loss = reverse, G=5, explicit", 0.15, dict(beta=0.33, group_size=5, kl_estimator="k3"),
         dict(G=5)),
        ("k1 in the advantage = direct, G=4", 0.3, dict(beta=0.5, group_size=4, kl_estimator="k1",
                                                        kl_placement="advantage"), dict(G=4, penalty="direct")),
        ("k1 in the advantage = direct, G=inf", 0.2, dict(beta=2.5, group_size=INF, kl_estimator="k1",
                                                          kl_placement="advantage"), dict(G=INF, penalty="direct")),
        ("k1 in the advantage, shift, G=3", 0.5, dict(beta=0.2, group_size=3, kl_estimator="k1",
                                                      kl_placement="advantage", normalization="shift"),
         dict(G=3, penalty="direct", normalization="shift")),
    ]
    for lab, p, kw, rk in specs:
        x = ref.root(p, rk.pop("beta", kw["beta"]), **rk)
        out.append(_ok(G_, f"stationary_policy binary p={p}: {lab}",
                       lambda p=p, kw=kw: stationary_policy(binq(p), Objective(**kw)),
                       lambda v, x=x: _near(_pi(v)[0], x)))
    # KL in the reward before normalisation (k1): every shaped reward equal on the support = log pooling, for
    # every G and normalisation
    for pr, r, b, g, norm in [([0.2, 0.3, 0.5], [1, 0.5, 0], 0.4, 4, "scale"), ([0.6, 0.4], [2, 0], 1.5, 3, "shift"),
                              ([0.1, 0.1, 0.8], [0, 1, 3], 2.0, INF, "scale"), ([0.5, 0.5], [1, 0], 0.25, 2, "scale")]:
        w = ref.rlhf(pr, r, b)
        out.append(_ok(G_, f"stationary_policy k1 in the reward pi_ref={pr} rewards={r} beta={b} G={g} {norm}: log pooling",
                       lambda pr=pr, r=r, b=b, g=g, norm=norm: stationary_policy(
                           Question(pr, rewards=r), Objective(beta=b, group_size=g, normalization=norm,
                                                              kl_estimator="k1", kl_placement="reward")),
                       lambda v, w=w: ref.close(_pi(v), w, rtol=1e-8, atol=1e-12) or f"{_pi(v)} != {w}"))
    # shift-only + direct on K outputs: RLHF at beta' = G beta/(G-1) (SPEC section 3)
    for pr, r, b, g in [([0.1, 0.2, 0.3, 0.4], [3, 1, 0, 2], 0.7, 4), ([0.5, 0.25, 0.25], [0, 1, 1], 0.1, 2),
                        ([0.3, 0.3, 0.4], [-1, 5, 2], 4.0, 11), ([0.2] * 5, [0.1, 0.2, 0.3, 0.4, 0.5], 0.05, 3)]:
        w = ref.rlhf(pr, r, g * b / (g - 1))
        out.append(_ok(G_, f"stationary_policy shift/direct pi_ref={pr} rewards={r} beta={b} G={g} = RLHF at G beta/(G-1)",
                       lambda pr=pr, r=r, b=b, g=g: stationary_policy(Question(pr, rewards=r), Objective(
                           beta=b, group_size=g, normalization="shift", penalty="direct")),
                       lambda v, w=w: ref.close(_pi(v), w, rtol=1e-8, atol=1e-12) or f"{_pi(v)} != {w}"))
    # pass@k with k = G: no signal, the policy stays at pi_ref (docs/guide.md)
    for p, g in [(0.3, 4), (0.8, 2)]:
        out.append(_ok(G_, f"stationary_policy pass_at_k k=G={g} p={p}: stays at pi_ref",
                       lambda p=p, g=g: stationary_policy(binq(p), Objective(beta=0.5, group_size=g, advantage="pass_at_k",
                                                                             pass_k=g)),
                       lambda v, p=p: ref.close(_pi(v), [p, 1 - p], rtol=1e-9, atol=1e-12)))
    # K outputs, the flow's end by an independent RK4 + Newton
    for pr, r, b, g, pen, kw in [([0.2, 0.3, 0.5], [1, 0.5, 0], 0.5, 3, "reverse", {}),
                                 ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.5, 3, "direct", {}),
                                 ([0.5, 0.3, 0.2], [0, 1, 2], 0.8, 4, "reverse", {}),
                                 ([0.1, 0.6, 0.3], [1, 0, 0.2], 0.3, INF, "reverse", {}),
                                 ([0.4, 0.4, 0.2], [0, 2, 1], 1.3, 5, "reverse", dict(advantage="rloo")),
                                 ([0.4, 0.4, 0.2], [0, 2, 1], 1.3, 5, "direct", dict(advantage="rloo")),
                                 ([0.25, 0.25, 0.5], [1, 0, 0.5], 0.6, 4, "reverse", dict(normalization="shift")),
                                 ([0.3, 0.2, 0.5], [2, 1, 0], 0.4, 3, "reverse", dict(ddof=1, eps=0.1)),
                                 ([0.3, 0.2, 0.5], [2, 1, 0], 0.4, 4, "direct", dict(veps=0.3)),
                                 ([0.05, 0.05, 0.9], [1, 0.9, 0], 0.2, 3, "reverse", {}),
                                 ([0.6, 0.2, 0.2], [0, 1, 1], 0.15, 2, "reverse", {}),
                                 ([0.3, 0.3, 0.4], [0.2, 0.1, 0.0], 2.0, 6, "direct", {})]:
        okw = dict(beta=b, group_size=g, penalty=pen)
        okw.update({k if k not in ("ddof", "eps", "veps") else {"ddof": "std_ddof", "eps": "std_eps",
                                                                  "veps": "variance_eps"}[k]: v for k, v in kw.items()})
        want = ref.flow_end(pr, r, b, g, pen, **kw)
        out.append(_ok(G_, f"stationary_policy pi_ref={pr} rewards={r} beta={b} G={g} {pen} {kw}: the RK4 flow's end",
                       lambda pr=pr, r=r, okw=okw: stationary_policy(Question(pr, rewards=r), Objective(**okw)),
                       lambda v, w=want: ref.close(_pi(v), w, rtol=0, atol=1e-7) or f"{_pi(v)} != flow's {w}"))
    return out


# ---------------------------------------------------------------- P_G of the family members
def preference_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference

    G_ = "API: reward_preference of family members, checked"
    out = []
    for pi, r, g, kw in [([0.2, 0.3, 0.5], [1, 0.5, 0], 4, dict(advantage="rloo")),
                         ([0.1, 0.9], [3, -1], 7, dict(advantage="rloo")),
                         ([0.25, 0.25, 0.5], [0, 1, 2], 3, dict(advantage="reinforce_pp")),
                         ([0.7, 0.3], [1, 0], 9, dict(advantage="reinforce_pp")),
                         ([0.2, 0.3, 0.5], [1, 0.5, 0], 4, dict(veps=0.05)),
                         ([0.5, 0.5], [1, 0], 2, dict(veps=1.0)),
                         ([0.3, 0.3, 0.4], [2, 1, 0], 5, dict(normalization="shift")),
                         ([0.4, 0.6], [0.5, 0.25], 6, dict(ddof=1, eps=0.2)),
                         ([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], 5, dict(veps=0.5, normalization="scale"))]:
        okw = {"advantage": kw.get("advantage", "group"), "normalization": kw.get("normalization", "scale"),
               "std_ddof": kw.get("ddof", 0), "std_eps": kw.get("eps", 0.0), "variance_eps": kw.get("veps", 0.0)}
        want = ref.pg_family(pi, r, g, **kw)
        out.append(_ok(G_, f"reward_preference pi={pi} rewards={r} G={g} {kw}",
                       lambda pi=pi, r=r, g=g, okw=okw: reward_preference(
                           Question([1 / len(r)] * len(r), rewards=r), Objective(beta=1.0, group_size=g, **okw), pi),
                       lambda v, w=want: ref.close(v, w, rtol=1e-10, atol=1e-13) or f"{v} != {w}"))
    return out


# ---------------------------------------------------------------- a notebook: reuse, feed back, inspect
def notebook_cases() -> list[dict]:
    from grpo_theory import (Objective, Question, nash_equilibrium, rlhf_optimum, stationarity_residual, stationary_points,
                             stationary_policy)

    G_ = "API: a notebook (objects reused, results fed back)"
    out = []
    q = Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0])
    o = Objective(beta=0.5, group_size=3)

    # results fed back as pi_ref: each answer checked against its own condition with the new pi_ref
    for lab, first, obj2 in [("stationary_policy's pi as the next pi_ref (same objective)", "grpo", o),
                             ("stationary_policy's pi as the next pi_ref, direct", "grpo", Objective(beta=0.5, group_size=3,
                                                                                                   penalty="direct")),
                             ("rlhf_optimum's pi as the next pi_ref", "rlhf", o),
                             ("nash_equilibrium's pi as the next pi_ref", "nash", o)]:
        def call(first=first, obj2=obj2):
            s1 = {"grpo": lambda: stationary_policy(q, o), "rlhf": lambda: rlhf_optimum(q, 0.5),
                  "nash": lambda: nash_equilibrium(q, 0.5)}[first]()
            q2 = Question(s1.pi, rewards=[1, 0.5, 0])
            return s1.pi, stationary_policy(q2, obj2)

        def check(v, obj2=obj2):
            pr, s2 = v
            P = ref.pg_family(_pi(s2), [1, 0.5, 0], 3)
            f = ref.reverse_resid if obj2.penalty in (None, "reverse") and obj2.regime == "reverse" else ref.direct_resid
            r = f(_pi(s2), pr, P, 0.5)
            return r <= TOL or f"condition off by {r:.2e}"
        out.append(_ok(G_, lab, call, check))
    # iterating the map 5 times: each step's pi_ref is the last answer; P(best) must rise every time
    def iterate():
        pr, xs = [0.2, 0.3, 0.5], []
        for _ in range(5):
            s = stationary_policy(Question(pr, rewards=[1, 0.5, 0]), o)
            xs.append(float(s.pi[0]))
            pr = list(s.pi)
        return xs, pr
    out.append(_ok(G_, "stationary_policy iterated 5 times (pi fed back as pi_ref): P(best) rises each time",
                   iterate, lambda v: all(b > a for a, b in zip(v[0], v[0][1:])) or f"{v[0]}"))
    # the same objects used twice give the same answer; the inputs are not changed by the call
    def twice():
        arr = np.array([0.2, 0.3, 0.5])
        qq = Question(arr, rewards=np.array([1.0, 0.5, 0.0]))
        a = stationary_policy(qq, o).pi.copy()
        b = stationary_policy(qq, o).pi.copy()
        return a, b, arr
    out.append(_ok(G_, "stationary_policy twice on the same Question/Objective: same answer, inputs untouched", twice,
                   lambda v: (np.array_equal(v[0], v[1]) and np.array_equal(v[2], [0.2, 0.3, 0.5])) or f"{v}"))

    def kept(change):
        """The question's expected rewards and pi_ref after ``change(arr, qq)`` (a write the question must not see)."""
        def call():
            arr = np.array([0.2, 0.3, 0.5])
            qq = Question(arr, rewards=[1, 0.5, 0])
            try:
                change(arr, qq)
            except (ValueError, TypeError, AttributeError):
                pass
            return np.concatenate([qq.pi_ref, qq.expected_reward])
        return call

    for lab, change in [
            ("Question keeps its own pi_ref when the caller's array is changed afterwards",
             lambda arr, qq: arr.__setitem__(slice(None), [0.5, 0.3, 0.2])),
            ("q.pi_ref[0] = 0.9 does not change the question (read-only or a copy)",
             lambda arr, qq: qq.pi_ref.__setitem__(0, 0.9)),
            ("q.reward_levels[0] = 7 does not change the question's rewards",
             lambda arr, qq: qq.reward_levels.__setitem__(0, 7.0))]:
        out.append(_ok(G_, lab, kept(change),
                       lambda v: ref.close(v, [0.2, 0.3, 0.5, 1, 0.5, 0]) or f"the question became {v}"))

    def sp_pi_write():
        s = stationary_policy(q, o)
        before = s.pi.copy()
        try:
            s.pi[0] = 0.0
        except (ValueError, TypeError, AttributeError):
            pass
        return before, s.pi.copy(), s.residual
    out.append(_ok(G_, "a StationaryPoint's pi is not silently writable (its residual describes its pi)", sp_pi_write,
                   lambda v: np.array_equal(v[0], v[1]) or f"pi changed to {v[1]}; residual still {v[2]}"))
    # documented meanings of the attributes
    out.append(_ok(G_, "converged means residual < 1e-10; stationarity_residual at its pi agrees",
                   lambda: (lambda s: (s, stationarity_residual(q, o, s.pi)))(stationary_policy(q, o)),
                   lambda v: (v[0].converged and v[0].residual < 1e-10 and v[1] < 1e-10) or f"{v[0].residual} {v[1]}"))
    out.append(_ok(G_, "stationarity_residual at pi_ref (beta = 0.5): the condition's violation there",
                   lambda: stationarity_residual(q, o, [0.2, 0.3, 0.5]),
                   lambda v: v > 1e-3 or f"{v}"))
    out.append(_ok(G_, "stationary_points: from_reference is stationary_policy's point; stable is a subset of points",
                   lambda: (stationary_points(q, o), stationary_policy(q, o)),
                   lambda v: (ref.close(v[0].from_reference.pi, v[1].pi, 1e-9, 1e-12)
                              and all(any(s is p or np.array_equal(s.pi, p.pi) for p in v[0].points) for s in v[0].stable))
                   or "mismatch"))

    def basins():
        return stationary_points(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=3.0, group_size=INF, penalty="direct"))
    out.append(_ok(G_, "stationary_points binary: basins cover [0, 1] without gaps or overlaps", basins,
                   lambda v: _basins_cover(v.basins)))
    out.append(_ok(G_, "stationary_points: summary names every stable point", basins, _summary_names_stable))

    def residuals():
        q2, o2 = Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=3.0, group_size=INF, penalty="direct")
        pts = stationary_points(q2, o2).points
        return [(float(p.residual), float(stationarity_residual(q2, o2, p.pi))) for p in pts]
    out.append(_ok(G_, "every point's residual is stationarity_residual at its pi (documented 'always'), the vertex too",
                   residuals, lambda v: all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for a, b in v) or f"{v}"))
    # pickle / copy / replace / eq / hash / repr of results and inputs at family settings
    fam = Objective(beta=0.3, group_size=5, advantage="reinforce_pp", entropy_coef=0.1, filter_ties=True)
    for lab, mk in [("Objective(advantage='reinforce_pp', entropy_coef=0.1, filter_ties=True)", lambda: fam),
                    ("Objective(kl_estimator='k3', kl_placement='loss', clamps 20/10)",
                     lambda: Objective(beta=0.01, group_size=5, kl_estimator="k3", kl_log_ratio_clamp=20, kl_value_clamp=10)),
                    ("Objective(level='token', loss_type='dapo', groups_per_batch=1, std_ddof=1)",
                     lambda: Objective(beta=0.04, group_size=8, level="token", loss_type="dapo", groups_per_batch=1,
                                       std_ddof=1, std_eps=1e-4, penalty="direct")),
                    ("Question with answer trees", lambda: Question([0.2, 0.3, 0.5], rewards=[1, 0, 0],
                                                                    answers=[("B", "X", "$"), ("B", "Y", "$"), ("A", "$")])),
                    ("Question with answer trees of unequal depth and labels",
                     lambda: Question([0.1, 0.2, 0.7], rewards=[0, 1, 0.5], labels=["long", "mid", "short"],
                                      answers=[("A", "B", "C", "$"), ("A", "$"), ("D", "$")]))]:
        out.append(_ok(G_, f"{lab}: pickle round trip equal, same hash",
                       lambda mk=mk: (mk(), pickle.loads(pickle.dumps(mk()))),
                       lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1])) or "not equal"))
        out.append(_ok(G_, f"{lab}: copy.copy equal", lambda mk=mk: (mk(), copy.copy(mk())), lambda v: v[0] == v[1]))
        out.append(_ok(G_, f"{lab}: eval(repr(x)) == x", lambda mk=mk: (mk(), _eval_repr(mk())),
                       lambda v: v[0] == v[1] or f"{v[1]!r}"))
    out.append(_ok(G_, "a dict keyed by Objectives: two equal objectives are one key",
                   lambda: {Objective(beta=0.5, group_size=4): 1, Objective(beta=0.5, group_size=4.0): 2},
                   lambda v: len(v) == 1))
    out.append(_ok(G_, "Objective(beta=0.5) == Objective(beta=0.5, penalty='reverse') (the default is the reverse)",
                   lambda: (Objective(beta=0.5).regime, Objective(beta=0.5, penalty="reverse").regime),
                   lambda v: v[0] == v[1] == "reverse"))
    for lab, fn, names in [
            ("dataclasses.replace(obj, advantage='rloo ') (a trailing space)",
             lambda: dataclasses.replace(fam, advantage="rloo "), ["advantage", "rloo "]),
            ("dataclasses.replace(obj, entropy_coef=-0.1)", lambda: dataclasses.replace(fam, entropy_coef=-0.1),
             ["entropy_coef", "-0.1"]),
            ("dataclasses.replace(obj, pass_k=3) without advantage='pass_at_k'",
             lambda: dataclasses.replace(Objective(beta=0.5, group_size=4), pass_k=3), ["pass_k"]),
            ("dataclasses.replace(obj, advantage='pass_at_k', pass_k=9) with G = 5",
             lambda: dataclasses.replace(Objective(beta=0.5, group_size=5), advantage="pass_at_k", pass_k=9),
             ["pass_k", "9"]),
            ("dataclasses.replace(obj, variance_eps=-1e-3)", lambda: dataclasses.replace(fam, variance_eps=-1e-3),
             ["variance_eps", "-0.001"]),
            ("dataclasses.replace(obj, groups_per_batch=0)", lambda: dataclasses.replace(fam, groups_per_batch=0),
             ["groups_per_batch", "0"]),
            ("dataclasses.replace(obj, importance_level='sentence')",
             lambda: dataclasses.replace(fam, importance_level="sentence"), ["importance_level", "sentence"]),
            ("dataclasses.replace(obj, kl_placement='advantage', kl_estimator='k7')",
             lambda: dataclasses.replace(fam, kl_placement="advantage", kl_estimator="k7"), ["kl_estimator", "k7"]),
            ("Objective(beta=0.5, loss_type='dapo') at sequence level",
             lambda: Objective(beta=0.5, group_size=4, loss_type="dapo", groups_per_batch=0.5),
             ["groups_per_batch", "0.5"]),
            ("stationary_policy(q, Objective) with q and obj swapped", lambda: stationary_policy(o, q), ["Question"]),
            ("stationary_policy(q, a StationaryPoint as the objective)",
             lambda: stationary_policy(q, stationary_policy(q, o)), ["StationaryPoint"]),
            ("Question(pi_ref=a StationaryPoint) (not its .pi)",
             lambda: Question(stationary_policy(q, o), rewards=[1, 0.5, 0]), ["pi_ref", "StationaryPoint"]),
            ("Question(pi_ref=a StationaryPointSet)",
             lambda: Question(stationary_points(q, o), rewards=[1, 0.5, 0]), ["pi_ref", "StationaryPointSet"]),
            ("stationarity_residual(q, o, a StationaryPoint) (not its .pi)",
             lambda: stationarity_residual(q, o, stationary_policy(q, o)), ["pi", "StationaryPoint"]),
            ("reward_preference with pi of another length", lambda: __import__("grpo_theory").reward_preference(
                q, o, [0.5, 0.5]), ["pi", "3"]),
            ("Objective from a dict with a typo ('group_sise')",
             lambda: stationary_policy(q, {"beta": 0.5, "group_sise": 4}), ["group_sise"]),
            ("stationarity_residual(q, o, pi with a negative entry)",
             lambda: stationarity_residual(q, o, [0.7, -0.2, 0.5]), ["pi", "-0.2"])]:
        out.append(_err(G_, lab, fn, names, expect="error"))
    return out


def _basins_cover(basins) -> bool | str:
    if not basins:
        return "no basins"
    iv = sorted((float(b[0]), float(b[1])) for b in (getattr(b, "interval", b) for b in basins)) \
        if not hasattr(basins[0], "lo") else sorted((b.lo, b.hi) for b in basins)
    if abs(iv[0][0]) > 1e-12 or abs(iv[-1][1] - 1) > 1e-12:
        return f"ends {iv}"
    for (a0, a1), (b0, b1) in zip(iv, iv[1:]):
        if abs(a1 - b0) > 1e-9:
            return f"gap or overlap {iv}"
    return True


def _summary_names_stable(v) -> bool | str:
    """Each stable point's pi(best class), as the summary prints it (5 significant digits), is in the summary."""
    import re

    shown = [float(m) for m in re.findall(r"pi\(best class\) = ([0-9.eE+-]+)", v.summary)]
    want = sorted(float(s.pi[0]) for s in v.stable)
    if len(shown) != len(want) or not all(abs(a - b) <= 1e-4 for a, b in zip(sorted(shown), want)):
        return f"summary shows {shown}, stable points {want}"
    return True


def _eval_repr(x):
    import grpo_theory as g

    ns = {"Objective": g.Objective, "Question": g.Question, "inf": math.inf, "nan": math.nan, "array": np.array,
          "np": np, "math": math}
    return eval(repr(x), ns)  # noqa: S307 - the audit's own object


# ---------------------------------------------------------------- more answers checked: random rewards, Monte Carlo
def more_checked_cases() -> list[dict]:
    from grpo_theory import (Objective, Question, log_pooling, monte_carlo_preference, nash_equilibrium,
                             reward_preference, stationary_policy)

    G_ = "API: random rewards, Monte Carlo, pooling and the question's own numbers, checked"
    out = []
    # Bernoulli rewards at G = 2: Delta = gamma = p_a - p_b, so the reverse point is Eq. 14 at beta/gamma
    for p, pa, pb, b in [(0.3, 0.9, 0.2, 0.5), (0.1, 0.55, 0.45, 0.02), (0.6, 1.0, 0.5, 1.3), (0.45, 0.3, 0.0, 0.08)]:
        out.append(_ok(G_, f"stationary_policy Bernoulli rewards p_a={pa} p_b={pb} pi_ref(a)={p} beta={b} G=2: Eq. 14 "
                       "at gamma = p_a - p_b",
                       lambda p=p, pa=pa, pb=pb, b=b: stationary_policy(
                           Question([p, 1 - p], reward_levels=[0, 1], reward_probs=[[1 - pa, pa], [1 - pb, pb]]),
                           Objective(beta=b, group_size=2)),
                       lambda v, p=p, pa=pa, pb=pb, b=b: _near(_pi(v)[0], ref.eq14(p, b, pa - pb))))
        out.append(_ok(G_, f"Question confidence_margin p_a={pa} p_b={pb}",
                       lambda p=p, pa=pa, pb=pb: Question([p, 1 - p], reward_levels=[0, 1],
                                                          reward_probs=[[1 - pa, pa], [1 - pb, pb]]).confidence_margin(),
                       lambda v, pa=pa, pb=pb: abs(float(v) - (pa - pb)) <= 1e-15 or f"{v}"))
    # the pairwise preference of random rewards: P(o > o') + half the ties
    for lv, pb in [([0, 1, 2], [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]), ([-1, 0.5], [[0.5, 0.5], [0.1, 0.9]]),
                   ([0, 1], [[1.0, 0.0], [0.0, 1.0]])]:
        P = np.asarray(pb, float)
        W = (np.subtract.outer(lv, lv) > 0) + 0.5 * (np.subtract.outer(lv, lv) == 0)
        want = P @ W @ P.T
        out.append(_ok(G_, f"Question pairwise_preference() levels={lv} probs={pb}",
                       lambda lv=lv, pb=pb: np.asarray(Question([0.5, 0.5], reward_levels=lv, reward_probs=pb)
                                                       .pairwise_preference(), float),
                       lambda v, w=want: ref.close(v, w, rtol=1e-14, atol=1e-15) or f"{v} != {w}"))
        er = P @ np.asarray(lv, float)
        out.append(_ok(G_, f"Question expected_reward levels={lv} probs={pb}",
                       lambda lv=lv, pb=pb: np.asarray(Question([0.5, 0.5], reward_levels=lv, reward_probs=pb)
                                                       .expected_reward, float),
                       lambda v, w=er: ref.close(v, w, rtol=1e-14, atol=1e-15) or f"{v} != {w}"))
    # NLHF with random rewards: pi ∝ pi_ref exp(M pi / beta), M the pairwise preference with ties half
    for pr, lv, pb, b in [([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 0.2),
                          ([0.2, 0.3, 0.5], [0, 1, 2], [[0.1, 0.2, 0.7], [0.3, 0.4, 0.3], [0.5, 0.5, 0.0]], 0.05)]:
        P = np.asarray(pb, float)
        W = (np.subtract.outer(lv, lv) > 0) + 0.5 * (np.subtract.outer(lv, lv) == 0)
        M = P @ W @ P.T
        out.append(_ok(G_, f"nash_equilibrium random rewards pi_ref={pr} levels={lv} beta={b}",
                       lambda pr=pr, lv=lv, pb=pb, b=b: nash_equilibrium(Question(pr, reward_levels=lv, reward_probs=pb), b),
                       lambda v, pr=pr, M=M, b=b: ref.direct_resid(_pi(v), pr, M @ _pi(v), b) <= TOL or "off"))
    for pr, r, b in [([0.999999, 1e-6], [0, 1], 0.05), ([0.2, 0.2, 0.6], [-300, 0, -300], 7.0),
                     ([1 / 3] * 3, [1e-12, 0, 2e-12], 1e-12), ([0.5, 0.5], [709, 0], 1.0)]:
        w = ref.rlhf(pr, r, b)
        out.append(_ok(G_, f"log_pooling({pr}, {r}, {b})", lambda pr=pr, r=r, b=b: log_pooling(pr, r, b),
                       lambda v, w=w: ref.close(v, w, rtol=1e-9, atol=1e-300) or f"{v} != {w}"))
    # Monte Carlo against enumeration: within 6 standard errors (a fixed seed; a wrong estimator is far off)
    for pi, r, g, kw in [([0.2, 0.3, 0.5], [1, 0.5, 0], 4, {}), ([0.6, 0.4], [1, 0], 3, dict(normalization="shift")),
                         ([0.25, 0.25, 0.5], [0, 1, 2], 5, dict(advantage="rloo")),
                         ([0.1, 0.9], [2, 0], 6, dict(ddof=1, eps=0.1))]:
        okw = {"advantage": kw.get("advantage", "group"), "normalization": kw.get("normalization", "scale"),
               "std_ddof": kw.get("ddof", 0), "std_eps": kw.get("eps", 0.0)}
        want = ref.pg_family(pi, r, g, **kw)

        def mc_check(v, w=want):
            est, se = (np.asarray(a, float) for a in v)
            if not np.all(np.abs(est - w) <= 6 * se + 1e-12):
                return f"estimate {est} +- {se} vs exact {w}"
            return True
        out.append(_ok(G_, f"monte_carlo_preference pi={pi} rewards={r} G={g} {kw} within 6 standard errors",
                       lambda pi=pi, r=r, g=g, okw=okw: monte_carlo_preference(
                           Question([1 / len(r)] * len(r), rewards=r), Objective(beta=1.0, group_size=g, **okw), pi,
                           n_groups=40000, seed=3), mc_check))
    # reward_preference of the binary question at G and ddof/eps the binomial sum covers
    for x, g, dd, eps in [(0.2, 3, 1, 0.0), (0.7, 10, 1, 1e-4), (0.01, 25, 0, 0.3), (0.5, 2, 1, 1e-6),
                          (0.999, 40, 0, 0.0), (0.33, 7, 1, 2.0)]:
        pa, pb = ref.binary_pg(x, g, ddof=dd, eps=eps)
        want = [float(pa), float(pb)]
        out.append(_ok(G_, f"reward_preference binary pi(a)={x} G={g} ddof={dd} eps={eps}",
                       lambda x=x, g=g, dd=dd, eps=eps: reward_preference(
                           Question([0.5, 0.5], rewards=[1, 0]), Objective(beta=1.0, group_size=g, std_ddof=dd,
                                                                           std_eps=eps), [x, 1 - x]),
                       lambda v, w=want: ref.close(v, w, rtol=1e-10, atol=1e-13) or f"{v} != {w}"))
    # documented regimes of the KL settings (docs/guide.md: obj.regime)
    for kw, want in [(dict(kl_estimator="k1"), "none"), (dict(kl_estimator="k1", kl_placement="reward"), "reward"),
                     (dict(kl_estimator="k2"), "direct"), (dict(kl_estimator="k3_ratio"), "direct"),
                     (dict(kl_estimator="k3"), "reverse"), (dict(penalty="direct"), "direct")]:
        out.append(_ok(G_, f"Objective({kw}).regime is {want!r} (docs/guide.md)",
                       lambda kw=kw: Objective(beta=0.5, group_size=4, **kw).regime,
                       lambda v, w=want: v == w or f"{v!r}"))
    # k1 as a loss term: no regularisation, so no stationary policy (an error that says so)
    out.append(_err(G_, "stationary_policy with k1 in the loss (no regularisation)",
                    lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                              Objective(beta=0.5, group_size=4, kl_estimator="k1")), ["k1"]))
    return out


def all_api_cases() -> list[dict]:
    return closed_form_cases() + family_cases() + preference_cases() + notebook_cases() + more_checked_cases()
