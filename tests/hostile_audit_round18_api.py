"""Cases of the eighteenth hostile audit (issue 45), part one: the public Python API, aimed away from round 17's
closed forms at ``stationary_policy`` under the family options (finite G by bisection, shift, RLOO, Bernoulli
laws, preference matrices), ``nash_equilibrium``, ``reward_preference`` against an ordered-tuple enumeration and the
binomial form, three- and four-output shift+direct rests (log pooling at ``G beta/(G-1)``), and refused
``Objective`` / ``Question`` arguments of the family options.

Tolerances. Rests through ``stationary_policy`` / ``nash_equilibrium`` (a root finder, residual below 1e-10 of beta
at a drift slope of at least 1/2 on these grids): 1e-8 relative in the smaller of ``x`` and ``1 - x`` plus 1e-15
absolute; finite-G reverse/scale rests against a 200-step bisection of ``beta (x - p) = x P_G(a|x)`` with the
binomial ``P_G`` (each ~1e-14 relative): 1e-7 relative in the smaller side plus 1e-13 absolute. ``reward_preference``:
1e-10 relative plus 1e-12 absolute (sums of at most 4^4 terms, or G binomial terms). Pooled rests: 1e-8 relative plus
1e-15 absolute.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round18_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi

INF = math.inf
P = [0.0137, 0.0865, 0.2213, 0.4071, 0.5549, 0.7126, 0.8838, 0.9784]
B = [0.0088, 0.073, 0.36, 1.37, 6.1, 41.0]


def _side(v, x, y, rtol=1e-8, atol=1e-15):
    pi = _pi(v)
    if len(pi) != 2:
        return f"pi has {len(pi)} entries"
    if x <= 0.5:
        return ref.close(pi[0], x, rtol, atol)
    return ref.close(pi[1], y, rtol, atol)


def _sp(pr, rw=None, **obj):
    import grpo_theory as g

    return lambda: g.stationary_policy(g.Question(pr, rw), g.Objective(**obj))


def binary_rest_cases() -> list[dict]:
    G_ = "API: binary stationary_policy under the family options (SPEC sections 3-4)"
    out = []
    for i, p in enumerate(P):
        for j, beta in enumerate(B):
            q = [p, 1 - p]
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=2) = Eq. 14",
                           _sp(q, [1, 0], beta=beta, group_size=2),
                           lambda v, p=p, beta=beta: _side(v, ref.x14(p, beta), ref.y14(p, beta))))
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=inf) = Eq. 15",
                           _sp(q, [1, 0], beta=beta, group_size=INF),
                           lambda v, p=p, beta=beta: _side(v, ref.x15(p, beta), ref.y15(p, beta))))
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G=2, direct): logit p + 1/beta",
                           _sp(q, [1, 0], beta=beta, group_size=2, penalty="direct"),
                           lambda v, p=p, beta=beta: _side(v, *ref.xlogit(p, 1 / beta))))
            G = [3, 5, 12, 64][(i + j) % 4]
            gap = [1.0, 0.4, 2.5][(i + 2 * j) % 3]
            f = (G - 1) / G
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[{gap},0], beta={beta}, G={G}, shift, reverse)"
                               f" = Eq. 14 at gamma={gap}(G-1)/G",
                           _sp(q, [gap, 0], beta=beta, group_size=G, normalization="shift", penalty="reverse"),
                           lambda v, p=p, beta=beta, g_=gap * f: _side(v, ref.x14(p, beta, g_), ref.y14(p, beta, g_))))
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[{gap},0], beta={beta}, G={G}, shift, direct)"
                               f" = logit p + {gap}(G-1)/(G beta)",
                           _sp(q, [gap, 0], beta=beta, group_size=G, normalization="shift", penalty="direct"),
                           lambda v, p=p, beta=beta, s=gap * f / beta: _side(v, *ref.xlogit(p, s))))
            Gr = [3, 6, INF][(i + j) % 3]
            pen = "reverse" if (i + j) % 2 else "direct"
            want = (ref.x14(p, beta, gap), ref.y14(p, beta, gap)) if pen == "reverse" else ref.xlogit(p, gap / beta)
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[{gap},0], beta={beta}, G={Gr}, advantage=rloo, "
                               f"{pen}) = reward gap {gap}",
                           _sp(q, [gap, 0], beta=beta, group_size=Gr, advantage="rloo", penalty=pen),
                           lambda v, want=want: _side(v, *want)))
    return out


def finite_g_cases() -> list[dict]:
    G_ = "API: binary reverse/scale rests at finite G against a bisection of the binomial drift"
    out = []
    for p in P:
        for G in (3, 4, 7, 20):
            for beta in (0.21, 2.3):
                out.append(_ok(G_, f"stationary_policy([{p}, 1-p], r=[1,0], beta={beta}, G={G}) = bisection root",
                               _sp([p, 1 - p], [1, 0], beta=beta, group_size=G),
                               lambda v, p=p, beta=beta, G=G: _side(v, ref.rest_finite(p, beta, G),
                                                                    1 - ref.rest_finite(p, beta, G), 1e-7, 1e-13)))
    return out


def law_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: Bernoulli laws and preference matrices at G = 2 (gamma = p_a - p_b; NLHF logit p + (q - 1/2)/beta)"
    out = []
    for p, beta, pa, pb in [(0.017, 0.11, 0.83, 0.29), (0.26, 0.58, 0.64, 0.61), (0.49, 0.033, 0.97, 0.04),
                            (0.71, 2.7, 0.5, 0.1), (0.93, 0.29, 0.35, 0.3), (0.38, 0.9, 0.99, 0.01)]:
        gm = pa - pb
        mk = lambda pen, p=p, beta=beta, pa=pa, pb=pb: (lambda: g.stationary_policy(
            g.Question([p, 1 - p], reward_levels=[0, 1], reward_probs=[[1 - pa, pa], [1 - pb, pb]]),
            g.Objective(beta=beta, group_size=2, penalty=pen)))
        out.append(_ok(G_, f"Bernoulli p_a={pa} p_b={pb}, pi_ref(a)={p}, beta={beta}, G=2 reverse: Eq. 14 at {gm:.2f}",
                       mk("reverse"), lambda v, p=p, beta=beta, gm=gm: _side(v, ref.x14(p, beta, gm), ref.y14(p, beta, gm))))
        out.append(_ok(G_, f"Bernoulli p_a={pa} p_b={pb}, pi_ref(a)={p}, beta={beta}, G=2 direct: logit p + gamma/beta",
                       mk("direct"), lambda v, p=p, beta=beta, gm=gm: _side(v, *ref.xlogit(p, gm / beta))))
    for q in (0.51, 0.6, 0.77, 0.93, 1.0):
        for p, beta in [(0.052, 0.14), (0.33, 1.1), (0.68, 0.045), (0.95, 3.3)]:
            M = [[0.5, q], [1 - q, 0.5]]
            out.append(_ok(G_, f"nash_equilibrium([{p}, 1-p], preference P(a>b)={q}, beta={beta}): "
                               f"logit p + {q - 0.5:.2f}/beta",
                           lambda p=p, M=M, beta=beta: g.nash_equilibrium(g.Question([p, 1 - p], preference=M), beta),
                           lambda v, p=p, q=q, beta=beta: _side(v, *ref.xlogit(p, (q - 0.5) / beta))))
            out.append(_ok(G_, f"stationary_policy([{p}, 1-p], preference P(a>b)={q}, beta={beta}, G=2): Eq. 14 at "
                               f"{2 * q - 1:.2f}",
                           lambda p=p, M=M, beta=beta: g.stationary_policy(g.Question([p, 1 - p], preference=M),
                                                                          g.Objective(beta=beta, group_size=2)),
                           lambda v, p=p, q=q, beta=beta: _side(v, ref.x14(p, beta, 2 * q - 1),
                                                                ref.y14(p, beta, 2 * q - 1))))
    return out


def preference_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: reward_preference against the binomial form and ordered tuples"
    out = []
    for x in (0.0219, 0.187, 0.5, 0.634, 0.9417):
        for G in (2, 3, 6, 9, 33, 250, INF):
            out.append(_ok(G_, f"reward_preference(binary r=[1,0], G={G}, pi=[{x}, 1-x])",
                           lambda x=x, G=G: g.reward_preference(g.Question([0.5, 0.5], [1, 0]),
                                                                g.Objective(beta=1.0, group_size=G), [x, 1 - x]),
                           lambda v, x=x, G=G: ref.close(np.ravel(v), ref.pg_binary(x, G), 1e-10, 1e-12)))
    tri = [([0.2, 0.5, 0.3], [0.0, 1.0, 3.0]), ([0.61, 0.13, 0.26], [2.0, -1.0, 0.5]),
           ([0.25, 0.25, 0.25, 0.25], [1.0, 2.0, 2.0, 5.0]), ([0.05, 0.15, 0.7, 0.1], [-3.0, 0.0, 0.25, 0.3])]
    for pi, rw in tri:
        for G in (2, 3, 4):
            for kind in ("scale", "shift", "rloo"):
                kw = dict(normalization="shift") if kind == "shift" else dict(advantage="rloo") if kind == "rloo" else {}
                out.append(_ok(G_, f"reward_preference(r={rw}, G={G}, {kind}, pi={pi}) = ordered tuples",
                               lambda pi=pi, rw=rw, G=G, kw=kw: g.reward_preference(
                                   g.Question([1 / len(pi)] * len(pi), rw), g.Objective(beta=1.0, group_size=G, **kw), pi),
                               lambda v, pi=pi, rw=rw, G=G, kind=kind: ref.close(
                                   np.ravel(v), ref.pg_tuples(pi, rw, G, kind), 1e-10, 1e-12)))
    return out


def pooled_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: shift+direct rests on 3-4 outputs = log pooling at G beta/(G-1); rlhf_optimum / log_pooling"
    out = []
    qs = [([0.31, 0.22, 0.47], [0.9, 0.1, 0.4]), ([0.002, 0.498, 0.5], [3.0, 0.0, 1.0]),
          ([0.1, 0.2, 0.3, 0.4], [-1.0, 0.0, 1.0, 2.0]), ([0.7, 0.1, 0.1, 0.1], [0.0, 0.0, 1.0, 1.0])]
    for pr, rw in qs:
        for beta, G in ((0.19, 3), (0.8, 5), (2.6, 16)):
            out.append(_ok(G_, f"stationary_policy({pr}, r={rw}, beta={beta}, G={G}, shift, direct) = pool at "
                               f"G beta/(G-1)",
                           _sp(pr, rw, beta=beta, group_size=G, normalization="shift", penalty="direct"),
                           lambda v, pr=pr, rw=rw, b=G * beta / (G - 1): ref.close(_pi(v), ref.pool(pr, rw, b),
                                                                                    1e-8, 1e-15)))
            out.append(_ok(G_, f"rlhf_optimum({pr}, r={rw}, beta={beta}) = Eq. 4",
                           lambda pr=pr, rw=rw, beta=beta: g.rlhf_optimum(g.Question(pr, rw), beta),
                           lambda v, pr=pr, rw=rw, beta=beta: ref.close(_pi(v), ref.pool(pr, rw, beta), 1e-8, 1e-15)))
            out.append(_ok(G_, f"log_pooling({pr}, {rw}, beta={beta * 3.7:.4g})",
                           lambda pr=pr, rw=rw, b=beta * 3.7: g.log_pooling(pr, rw, b),
                           lambda v, pr=pr, rw=rw, b=beta * 3.7: ref.close(np.ravel(v), ref.pool(pr, rw, b), 1e-12,
                                                                           1e-300)))
    return out


def refused_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: refused family options, each naming what is wrong"
    O = g.Objective
    E = [
        ("Objective(beta=0.5, advantage='rlo0')", lambda: O(beta=0.5, advantage="rlo0"), ["advantage"]),
        ("Objective(beta=0.5, advantage='Rloo')", lambda: O(beta=0.5, advantage="Rloo"), ["advantage"]),
        ("Objective(beta=0.5, normalization='zscore')", lambda: O(beta=0.5, normalization="zscore"), ["normalization"]),
        ("Objective(beta=0.5, penalty='Reverse KL')", lambda: O(beta=0.5, penalty="Reverse KL"), ["penalty"]),
        ("Objective(beta=0.5, kl_placement='reward ')", lambda: O(beta=0.5, kl_placement="reward "), ["kl_placement"]),
        ("Objective(beta=0.5, kl_estimator='k5')", lambda: O(beta=0.5, kl_estimator="k5"), ["kl_estimator"]),
        ("Objective(beta=0.5, level='paragraph')", lambda: O(beta=0.5, level="paragraph"), ["level"]),
        ("Objective(beta=0.5, loss_type='dapo2')", lambda: O(beta=0.5, loss_type="dapo2"), ["loss_type"]),
        ("Objective(beta=0.5, importance_level='batch')", lambda: O(beta=0.5, importance_level="batch"),
         ["importance_level"]),
        ("Objective(beta=-0.01)", lambda: O(beta=-0.01), ["beta"]),
        ("Objective(beta=nan)", lambda: O(beta=math.nan), ["beta"]),
        ("Objective(beta=0.5, group_size=-0.0)", lambda: O(beta=0.5, group_size=-0.0), ["group_size"]),
        ("Objective(beta=0.5, group_size=-3)", lambda: O(beta=0.5, group_size=-3), ["group_size"]),
        ("Objective(beta=0.5, group_size=2.5)", lambda: O(beta=0.5, group_size=2.5), ["group_size"]),
        ("Objective(beta=0.5, group_size=nan)", lambda: O(beta=0.5, group_size=math.nan), ["group_size"]),
        ("Objective(beta=0.5, std_ddof=-2)", lambda: O(beta=0.5, std_ddof=-2), ["std_ddof"]),
        ("Objective(beta=0.5, std_ddof=1.5)", lambda: O(beta=0.5, std_ddof=1.5), ["std_ddof"]),
        ("Objective(beta=0.5, std_eps=-1e-3)", lambda: O(beta=0.5, std_eps=-1e-3), ["std_eps"]),
        ("Objective(beta=0.5, std_eps=inf)", lambda: O(beta=0.5, std_eps=math.inf), ["std_eps"]),
        ("Objective(beta=0.5, variance_eps=-2.0)", lambda: O(beta=0.5, variance_eps=-2.0), ["variance_eps"]),
        ("Objective(beta=0.5, entropy_coef=-0.37)", lambda: O(beta=0.5, entropy_coef=-0.37), ["entropy_coef"]),
        ("Objective(beta=0.5, entropy_coef=-inf)", lambda: O(beta=0.5, entropy_coef=-math.inf), ["entropy_coef"]),
        ("Objective(beta=0.5, groups_per_batch=-0.5)", lambda: O(beta=0.5, groups_per_batch=-0.5), ["groups_per_batch"]),
        ("Objective(beta=0.5, groups_per_batch=-4)", lambda: O(beta=0.5, groups_per_batch=-4), ["groups_per_batch"]),
        ("Objective(beta=0.5, kl_log_ratio_clamp=-2.5)", lambda: O(beta=0.5, kl_log_ratio_clamp=-2.5),
         ["kl_log_ratio_clamp"]),
        ("Objective(beta=0.5, kl_value_clamp=-5.0)", lambda: O(beta=0.5, kl_value_clamp=-5.0), ["kl_value_clamp"]),
        ("Objective(beta=0.5, kl_log_ratio_clamp=nan)", lambda: O(beta=0.5, kl_log_ratio_clamp=math.nan),
         ["kl_log_ratio_clamp"]),
        ("Objective(beta=0.5, group_size=7, advantage='pass_at_k', pass_k=8)",
         lambda: O(beta=0.5, group_size=7, advantage="pass_at_k", pass_k=8), ["pass_k"]),
        ("Objective(beta=0.5, group_size=4, advantage='pass_at_k', pass_k=13)",
         lambda: O(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=13), ["pass_k"]),
        ("Objective(beta=0.5, group_size=4, advantage='pass_at_k', pass_k=-7)",
         lambda: O(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=-7), ["pass_k"]),
        ("Objective(beta=0.5, group_size=4, advantage='pass_at_k', pass_k=1.25)",
         lambda: O(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=1.25), ["pass_k"]),
        ("Objective(beta=0.5, group_size=1, advantage='rloo')", lambda: O(beta=0.5, group_size=1, advantage="rloo"),
         ["group_size"]),
        ("Objective(beta=0.5, filter_ties='False')", lambda: O(beta=0.5, filter_ties="False"), ["filter_ties"]),
        ("Objective(beta=0.5, normalization=None)", lambda: O(beta=0.5, normalization=None), ["normalization"]),
        ("Objective(beta=0.5, advantage='group ')", lambda: O(beta=0.5, advantage='group '), ["advantage"]),
        ("Objective(beta=(0.5, 0.6))", lambda: O(beta=(0.5, 0.6)), ["beta"]),
        ("Objective(beta=0.5, group_size={4})", lambda: O(beta=0.5, group_size={4}), ["group_size"]),
        ("Question([0.5, 0.5], [1, 0], preference=[[.5,.5],[.5,.5]]) (two laws)",
         lambda: g.Question([0.5, 0.5], [1, 0], preference=[[.5, .5], [.5, .5]]), ["preference"]),
        ("Question([0.4, 0.6], preference=[[.5,.9],[.9,.5]]) (P(a>b)+P(b>a)>1)",
         lambda: g.Question([0.4, 0.6], preference=[[.5, .9], [.9, .5]]), ["preference"]),
        ("Question([0.4, 0.6], preference=[[.5,1.2],[-.2,.5]])",
         lambda: g.Question([0.4, 0.6], preference=[[.5, 1.2], [-.2, .5]]), ["preference"]),
        ("Question([0.4, 0.6], preference=3x3)",
         lambda: g.Question([0.4, 0.6], preference=[[.5, .5, .5]] * 3), ["preference"]),
        ("Question([0.4, 0.6], reward_levels=[0,1], reward_probs=[[.5,.6],[.5,.5]]) (a row sums to 1.1)",
         lambda: g.Question([0.4, 0.6], reward_levels=[0, 1], reward_probs=[[.5, .6], [.5, .5]]), ["reward_probs"]),
        ("Question([0.4, 0.6], reward_levels=[0,1], reward_probs=[[1.5,-.5],[.5,.5]])",
         lambda: g.Question([0.4, 0.6], reward_levels=[0, 1], reward_probs=[[1.5, -.5], [.5, .5]]), ["reward_probs"]),
        ("Question([0.4, 0.6], reward_levels=[0,1], reward_probs=[[1,0]]) (one row for two outputs)",
         lambda: g.Question([0.4, 0.6], reward_levels=[0, 1], reward_probs=[[1, 0]]), ["reward_probs"]),
        ("Question([0.4, 0.6], reward_levels=[0,1,2], reward_probs=2x2)",
         lambda: g.Question([0.4, 0.6], reward_levels=[0, 1, 2], reward_probs=[[1, 0], [0, 1]]), ["reward_probs"]),
        ("Question([0.4, 0.6], reward_levels=[0,nan], reward_probs=[[.5,.5],[1,0]])",
         lambda: g.Question([0.4, 0.6], reward_levels=[0, math.nan], reward_probs=[[.5, .5], [1, 0]]), ["reward_levels"]),
        ("Question([0.4, 0.6], reward_probs=[[1,0],[0,1]]) (no levels)",
         lambda: g.Question([0.4, 0.6], reward_probs=[[1, 0], [0, 1]]), ["reward_levels"]),
        ("Question([0.4, 0.6], [1, 0], labels=['x', 'y', 'z'])", lambda: g.Question([0.4, 0.6], [1, 0], labels=["x", "y", "z"]), ["labels"]),
        ("Question([0.4, 0.6], [1, 0, 2, 3])", lambda: g.Question([0.4, 0.6], [1, 0, 2, 3]), ["rewards"]),
        ("Question([0.4, 0.6], [1, inf])", lambda: g.Question([0.4, 0.6], [1, math.inf]), ["rewards"]),
        ("Question([0.4, 0.7], [1, 0])", lambda: g.Question([0.4, 0.7], [1, 0]), ["pi_ref"]),
        ("Question([1.25, -0.25], [1, 0])", lambda: g.Question([1.25, -0.25], [1, 0]), ["pi_ref"]),
        ("nash_equilibrium(preference question, beta=-0.0)",
         lambda: g.nash_equilibrium(g.Question([0.4, 0.6], preference=[[.5, .7], [.3, .5]]), -0.0), ["beta"]),
        ("nash_equilibrium(preference question, beta=-0.25)",
         lambda: g.nash_equilibrium(g.Question([0.4, 0.6], preference=[[.5, .7], [.3, .5]]), -0.25), ["beta"]),
        ("rlhf_optimum(Question, beta=-inf)",
         lambda: g.rlhf_optimum(g.Question([0.4, 0.6], [1, 0]), -math.inf), ["beta"]),
        ("log_pooling([0.4, 0.6], [1, 0], beta=-0.0)", lambda: g.log_pooling([0.4, 0.6], [1, 0], -0.0), ["beta"]),
        ("log_pooling([0.4, 0.6], [1], beta=1)", lambda: g.log_pooling([0.4, 0.6], [1], 1.0), ["rewards"]),
        ("log_pooling([0.4, -0.6], [1, 0], beta=1)", lambda: g.log_pooling([0.4, -0.6], [1, 0], 1.0), ["pi_ref"]),
        ("reward_preference(Q, Objective, pi=[0.45, 0.65])",
         lambda: g.reward_preference(g.Question([0.4, 0.6], [1, 0]), O(beta=1.0), [0.45, 0.65]), ["pi"]),
        ("reward_preference(Q, Objective, pi=[0.2, 0.3, 0.5]) (3 entries for 2 outputs)",
         lambda: g.reward_preference(g.Question([0.4, 0.6], [1, 0]), O(beta=1.0), [0.2, 0.3, 0.5]), ["pi"]),
        ("reward_preference(Q, Objective, pi=[1, nan])",
         lambda: g.reward_preference(g.Question([0.4, 0.6], [1, 0]), O(beta=1.0), [1.0, math.nan]), ["pi"]),
        ("stationary_policy(Q, beta=0.5) (a float for the objective)",
         lambda: g.stationary_policy(g.Question([0.4, 0.6], [1, 0]), 0.5), ["Objective"]),
        ("stationary_policy(Objective, Question) (swapped)",
         lambda: g.stationary_policy(O(beta=0.5), g.Question([0.4, 0.6], [1, 0])), ["Question"]),
    ]
    out = [_err(G_, lab, call, names) for lab, call, names in E]
    out.append(_either(G_, "Objective(beta=0.5, filter_ties=2) (an int for a flag): refused, or True",
                       lambda: O(beta=0.5, filter_ties=2), lambda v: bool(v.filter_ties) is True, ["filter_ties"]))
    out.append(_either(G_, "Objective(beta=0.5, group_size=np.int32(9)): refused, or G = 9",
                       lambda: O(beta=0.5, group_size=np.int32(9)), lambda v: v.group_size == 9, ["group_size"]))
    out.append(_either(G_, "Objective(beta=np.float16(0.375)): refused, or beta 0.375",
                       lambda: O(beta=np.float16(0.375)), lambda v: v.beta == 0.375, ["beta"]))
    return out


def all_api_cases() -> list[dict]:
    return (binary_rest_cases() + finite_g_cases() + law_cases() + preference_cases() + pooled_cases()
            + h_root_cases() + flow_cases() + refused_cases())


def h_root_cases() -> list[dict]:
    import grpo_theory as g

    G_ = "API: stationary_points at G = inf, direct penalty: the interior roots of h and their stability"
    out = []
    for p in (0.0047, 0.0523, 0.1977, 0.4602, 0.7381, 0.9305):
        for beta in (0.12, 0.47, 1.33, 3.9, 15.0, 88.0):
            roots, hs = ref.h_roots(p, beta)
            if abs(hs) < 0.05:
                continue                                  # near the fold: the roots are ill-conditioned

            def chk(v, roots=roots):
                inner = sorted((pt for pt in v.points if 0 < _pi(pt)[0] < 1), key=lambda pt: _pi(pt)[0])
                if len(inner) != len(roots):
                    return f"{len(inner)} interior points, want {len(roots)} ({[list(_pi(pt)) for pt in inner]})"
                for k, (pt, x) in enumerate(zip(inner, roots)):
                    bad = _side(pt, x, 1 - x, 1e-7, 1e-12)
                    if bad is not True:
                        return f"root {k}: {bad}"
                    want_stable = (k == 0)
                    if getattr(pt, "stable", None) is not None and bool(pt.stable) != want_stable:
                        return f"root {k} at {x}: stable={pt.stable}, want {want_stable}"
                return True
            out.append(_ok(G_, f"stationary_points([{p}, 1-p], r=[1,0], beta={beta}, G=inf, direct): "
                               f"{len(roots)} interior roots of h",
                           lambda p=p, beta=beta: g.stationary_points(
                               g.Question([p, 1 - p], [1, 0]), g.Objective(beta=beta, group_size=INF, penalty="direct")),
                           chk))
    return out


def flow_cases() -> list[dict]:
    import grpo_theory as g
    import grpo_theory.dynamics as d

    G_ = "API: dynamics.flow run long ends at the unique stable rest (SPEC sections 3-4)"
    out = []
    starts = ([0.5, 0.5], [0.07, 0.93], [0.91, 0.09])
    for k, (p, beta) in enumerate([(0.17, 0.34), (0.43, 1.8), (0.64, 0.61), (0.29, 2.7), (0.81, 0.45),
                                   (0.52, 1.05), (0.11, 0.82), (0.73, 3.3)]):
        pi0 = starts[k % 3]
        for form, obj, want in (
                ("G=2 reverse: Eq. 14", dict(group_size=2), (ref.x14(p, beta), ref.y14(p, beta))),
                ("G=inf reverse: Eq. 15", dict(group_size=INF), (ref.x15(p, beta), ref.y15(p, beta))),
                ("G=2 direct: logit p + 1/beta", dict(group_size=2, penalty="direct"), ref.xlogit(p, 1 / beta)),
                ("G=5 rloo reverse: Eq. 14", dict(group_size=5, advantage="rloo"), (ref.x14(p, beta), ref.y14(p, beta))),
                ("G=4 shift direct: logit p + 3/(4 beta)", dict(group_size=4, normalization="shift", penalty="direct"),
                 ref.xlogit(p, 0.75 / beta))):
            out.append(_ok(G_, f"flow([{p}, 1-p], r=[1,0], beta={beta}, {form}) from {pi0} to t=5000",
                           lambda p=p, beta=beta, obj=obj, pi0=pi0: d.flow(
                               g.Question([p, 1 - p], [1, 0]), g.Objective(beta=beta, **obj), pi0, [0.0, 50.0, 5000.0]),
                           lambda v, want=want: _side(np.asarray(v.pi)[-1], *want, 1e-6, 1e-12)))
    return out
