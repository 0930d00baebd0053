"""Cases of the seventh hostile audit (issue 45), part two: valid values at the edge of validity, checked.

Every case here is valid input and must give the right number (``ok``), checked against
:mod:`hostile_audit_round7_ref` (no ``grpo_theory`` import, 60-digit mpmath where a closed form cancels):
Eq. 14 and Eq. 15 at reference masses from 2.5e-200 to 1 - 1e-9 and betas from 7e-9 to 4.2e5; the G = 2 direct
form where ``gamma/beta`` overflows ``exp``; the large-G direct turning point and ``h``; shift + direct (RLHF at
``G beta/(G-1)``); ``binary_preference`` up to G = 2,048 at masses 1e-7 from the ends; ``stationary_policy`` at
finite G with ddof 1 and an epsilon, shift normalisation, the direct penalty, G = inf; questions of four or five
outputs with tied rewards; RLHF with a reward spread of 1e4 at beta 1e-3; NLHF; ``predict``'s pass@k and intervals
at 10^6 and 10^7 samples; the KL estimators at log-ratios of 1e-9 and 700.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round7_ref as ref

INF = math.inf


def _c(group, label, call, check, rtol=1e-10, atol=0.0):
    def chk(tmp, res):
        v = res["value"]
        got = np.asarray(getattr(v, "pi", v), float).ravel()
        return check(got)
    return dict(group=group, label=label, call=call, expect="ok", names=[], check=chk, wrong=[])


def closed_form_cases() -> list[dict]:
    from grpo_theory import closed_form as cf

    G = "API: closed forms at the edges (valid, checked)"
    out = []
    ps = [2.5e-200, 3e-17, 0.123456789, 0.5, 1 - 1e-9]
    betas = [7e-9, 3.3e-4, 0.999, 1.001, 4.2e5]
    for p in ps:
        for b in betas:
            w = ref.eq14(p, b)
            out.append(_c(G, f"binary_pairwise({p}, {b})", lambda p=p, b=b: cf.binary_pairwise(p, b),
                          lambda g, w=w: ref.close(g, [w], rtol=1e-10)))
    for p in ps[1:]:
        for b in betas:
            w = ref.eq15(p, b)
            out.append(_c(G, f"binary_large_group({p}, {b})", lambda p=p, b=b: cf.binary_large_group(p, b),
                          lambda g, w=w: ref.close(g, [w], rtol=1e-10)))
    for p, b, gm in [(0.3, 0.5, 1e-9), (0.3, 1e-12, 1e-9), (0.7, 2.0, 0.37), (1e-5, 0.01, 0.02)]:
        w = ref.eq14(p, b, gm)
        out.append(_c(G, f"binary_pairwise({p}, {b}, gamma={gm})", lambda p=p, b=b, gm=gm: cf.binary_pairwise(p, b, gm),
                      lambda g, w=w: ref.close(g, [w], rtol=1e-10)))
    for p, b, gm in [(0.3, 1e-4, 1.0), (1e-300, 1e-3, 1.0), (0.999, 1e-3, 1.0), (0.4, 2e-3, 0.9),
                     (1e-9, 0.05, 1.0), (0.5, 1e6, 1.0), (0.2, 0.0005, 0.001), (1 - 1e-12, 50.0, 1.0)]:
        w = ref.g2_direct(p, b, gm)
        out.append(_c(G, f"binary_pairwise_direct({p}, {b}, gamma={gm})",
                      lambda p=p, b=b, gm=gm: cf.binary_pairwise_direct(p, b, gm),
                      lambda g, w=w: ref.close(g, [w], rtol=1e-10, atol=1e-300)))
    for b in [1e-9, 3e-5, 0.5, 1.0, 1e4, 1e12]:
        w = ref.turning_point(b)
        out.append(_c(G, f"large_group_direct_turning_point({b})", lambda b=b: cf.large_group_direct_turning_point(b),
                      lambda g, w=w: ref.close(g, [w], rtol=1e-12)))
    for x, p, b in [(1e-10, 0.5, 1.0), (1 - 1e-10, 0.3, 0.1), (0.5, 1 - 1e-10, 2.0), (0.25, 1e-12, 1e-3)]:
        w = ref.direct_h(x, p, b)
        out.append(_c(G, f"large_group_direct_h({x}, {p}, {b})", lambda x=x, p=p, b=b: cf.large_group_direct_h(x, p, b),
                      lambda g, w=w: ref.close(g, [w], rtol=1e-9)))
    for p, b, g_, gap in [(0.3, 0.5, 2, 1.0), (0.3, 0.5, 17, 1.0), (0.3, 1e-3, 8, 1.0), (1e-8, 0.2, 3, 2.5),
                          (0.6, 0.5, INF, 1.0), (0.6, 4.0, 1000, 0.001)]:
        w = ref.shift_direct(p, b, g_, gap)
        out.append(_c(G, f"binary_shift_direct({p}, {b}, G={g_}, gap={gap})",
                      lambda p=p, b=b, g_=g_, gap=gap: cf.binary_shift_direct(p, b, g_, gap),
                      lambda g, w=w: ref.close(g, [w], rtol=1e-10, atol=1e-300)))
    for x in [1e-7, 0.5, 1 - 1e-7]:
        for g_ in [3, 17, 64, 513, 2048]:
            if g_ > 600 and x != 0.5:
                continue
            w = [float(v) for v in ref.binary_p(x, g_)]
            out.append(_c(G, f"binary_preference({x}, G={g_})", lambda x=x, g_=g_: np.concatenate(
                [np.ravel(a) for a in cf.binary_preference(x, g_)]), lambda g, w=w: ref.close(g, w, rtol=1e-9, atol=1e-15)))
    return out


def solver_cases() -> list[dict]:
    from grpo_theory import Objective, Question, nash_equilibrium, rlhf_optimum, stationary_policy

    G = "API: stationary policies at the edges (valid, checked)"
    out = []
    qb = lambda p: Question([p, 1 - p], rewards=[1, 0])  # noqa: E731
    specs = [  # (p, beta, G, ddof, eps, normalization, penalty)
        (0.3, 0.5, 3, 1, 1e-4, "scale", "reverse"), (0.05, 0.2, 6, 1, 1e-4, "scale", "reverse"),
        (0.8, 1.5, 11, 0, 0.0, "scale", "reverse"), (0.02, 0.05, 5, 0, 0.0, "scale", "reverse"),
        (0.4, 0.3, 7, 1, 0.5, "scale", "reverse"), (0.3, 0.5, 5, 0, 0.0, "shift", "reverse"),
        (0.3, 0.1, 9, 1, 0.0, "shift", "reverse"), (0.3, 0.5, 3, 0, 0.0, "scale", "direct"),
        (0.1, 2.0, 5, 1, 1e-4, "scale", "direct"), (0.45, 0.05, 4, 0, 0.0, "scale", "direct"),
        (0.6, 0.7, 12, 0, 0.0, "scale", "reverse"), (0.999, 0.01, 3, 0, 0.0, "scale", "reverse"),
        (1e-6, 0.9, 4, 0, 0.0, "scale", "reverse"), (0.25, 3.0, 20, 1, 1e-6, "scale", "reverse")]
    for p, b, g_, dd, eps, norm, pen in specs:
        fn = ref.binary_reverse if pen == "reverse" else ref.binary_direct
        w = fn(p, b, g_, dd, eps, norm)
        out.append(_c(G, f"stationary_policy binary p={p} beta={b} G={g_} ddof={dd} eps={eps} {norm} {pen}",
                      lambda p=p, b=b, g_=g_, dd=dd, eps=eps, norm=norm, pen=pen: stationary_policy(qb(p), Objective(
                          beta=b, group_size=g_, std_ddof=dd, std_eps=eps, normalization=norm, penalty=pen)),
                      lambda g, w=w: abs(g[0] - w) <= 1e-8))
    for p, b in [(0.3, 0.05), (1e-4, 2.0), (0.9, 10.0)]:
        w = ref.eq15(p, b)
        out.append(_c(G, f"stationary_policy binary p={p} beta={b} G=inf reverse (Eq. 15)",
                      lambda p=p, b=b: stationary_policy(qb(p), Objective(beta=b, group_size=INF)),
                      lambda g, w=w: abs(g[0] - w) <= 1e-9))
    # ties, 4 and 5 outputs, finite G: the reverse condition with enumerated P_G on the support
    ties = [([0.1, 0.2, 0.3, 0.4], [1, 1, 0, 0], 3, 0.5, "scale"), ([0.4, 0.1, 0.1, 0.4], [0, 1, 0.5, 0.5], 4, 0.8, "scale"),
            ([0.2] * 5, [2, 2, 1, 1, 0], 3, 1.2, "scale"), ([0.05, 0.05, 0.3, 0.6], [1, 1, 1, 0], 5, 0.4, "scale"),
            ([0.1, 0.2, 0.3, 0.4], [3, 3, -1, -1], 4, 0.6, "shift"), ([0.25, 0.25, 0.25, 0.25], [0, 0, 0, 1], 6, 2.0,
                                                                     "scale")]
    for pr, r, g_, b, norm in ties:
        out.append(_c(G, f"stationary_policy ties pi_ref={pr} rewards={r} G={g_} beta={b} {norm}",
                      lambda pr=pr, r=r, g_=g_, b=b, norm=norm: stationary_policy(
                          Question(pr, rewards=r), Objective(beta=b, group_size=g_, normalization=norm)),
                      lambda g, pr=pr, r=r, g_=g_, b=b, norm=norm: ref.reverse_ok(
                          g, pr, ref.pg_levels(g, r, g_, normalization=norm), b, tol=1e-7)))
    for pr, r, b in [([0.5, 0.5], [1e4, 0], 1e-3), ([0.2, 0.3, 0.5], [-5e3, 0, 5e3], 7.0),
                     ([1e-250, 1 - 1e-250], [1000, 0], 1.0), ([0.3, 0.3, 0.4], [1e-9, 0, 2e-9], 1e-9)]:
        w = ref.rlhf(pr, r, b)
        out.append(_c(G, f"rlhf_optimum pi_ref={pr} rewards={r} beta={b}",
                      lambda pr=pr, r=r, b=b: rlhf_optimum(Question(pr, rewards=r), b),
                      lambda g, w=w: ref.close(g, w, rtol=1e-9, atol=1e-300)))
    for pr, r, b in [([0.3, 0.7], [1, 0], 0.05), ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.3), ([0.1, 0.2, 0.3, 0.4], [1, 1, 0, 0], 2.0),
                     ([0.6, 0.4], [0, 1], 1e-3)]:
        out.append(_c(G, f"nash_equilibrium pi_ref={pr} rewards={r} beta={b}",
                      lambda pr=pr, r=r, b=b: nash_equilibrium(Question(pr, rewards=r), b),
                      lambda g, pr=pr, r=r, b=b: ref.nlhf_ok(g, pr, r, b, tol=1e-7)))
    return out


def piece_cases() -> list[dict]:
    from grpo_theory import Objective, kl
    from grpo_theory.predict import binomial_interval, pass_at_k, unbiased_pass_at_k

    G = "API: predict's pieces and the KL estimators at the edges (valid, checked)"
    out = []
    for n, c, k in [(10 ** 6, 1, 1000), (10 ** 6, 999_999, 5), (5000, 17, 64), (3, 1, 3)]:
        w = ref.unbiased_pass_k(n, c, k)
        out.append(_c(G, f"unbiased_pass_at_k({n}, {c}, {k})", lambda n=n, c=c, k=k: unbiased_pass_at_k(n, c, k),
                      lambda g, w=w: ref.close(g, [w], rtol=1e-9)))
    for x, k in [(1e-12, 10 ** 6), (0.999999, 3), (0.5, 1075)]:
        w = ref.pass_k(x, k)
        out.append(_c(G, f"pass_at_k({x}, {k})", lambda x=x, k=k: pass_at_k(x, k), lambda g, w=w: ref.close(g, [w], rtol=1e-9)))
    for c, n, lv, m in [(1, 10 ** 7, 0.95, "jeffreys"), (3, 7, 0.5, "jeffreys"), (500, 1000, 0.999, "jeffreys"),
                        (1, 10 ** 7, 0.95, "wilson"), (13, 29, 0.8, "wilson")]:
        w = (ref.jeffreys if m == "jeffreys" else ref.wilson)(c, n, lv)
        out.append(_c(G, f"binomial_interval({c}, {n}, level={lv}, {m})",
                      lambda c=c, n=n, lv=lv, m=m: np.ravel(binomial_interval(c, n, level=lv, method=m)),
                      lambda g, w=w: ref.close(g, w, rtol=1e-7)))
    for est, fn in [("k1", ref.k1), ("k2", ref.k2), ("k3", ref.k3)]:
        for lr in [1e-9, -700.0, 30.0]:
            w = fn(lr)
            out.append(_c(G, f"kl.estimator_value({est}, lr={lr})",
                          lambda est=est, lr=lr: kl.estimator_value(Objective(beta=0.5, kl_estimator=est), [lr]),
                          lambda g, w=w: ref.close(g, [w], rtol=1e-6, atol=1e-15)))
    return out
