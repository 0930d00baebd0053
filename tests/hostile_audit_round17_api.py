"""Cases of the seventeenth hostile audit (issue 45), part one: the public Python API.

Aimed at what the earlier rounds name least: the ``closed_form`` module's functions called directly at a new grid
of ``pi_ref(a)`` x ``beta`` (``binary_pairwise`` with and without a margin, ``binary_large_group``,
``binary_pairwise_direct``, ``binary_shift_direct``, ``binary_rloo``, ``large_group_direct_h``,
``large_group_direct_turning_point``, ``binary_preference`` up to G = 10^6), the documented promises of Eq. 14 /
Eq. 15 at their edges (a tie gives ``p``; ``sqrt(p)`` at beta = gamma; the lower bounds), binary
``stationary_policy`` under six forms, the rest of three-output questions against an ordered-tuple enumeration,
``reward_preference``, ``log_pooling`` / ``rlhf_optimum``, the ``kl`` module's values, slopes, shifts and
coefficients with both clamps, and bad arguments the docs refuse.

Tolerances. Closed forms called directly: the reference solves the same quadratic without cancellation; the
library's textbook formula can lose ``eps * beta / x`` (at most 3e4 ulps on this grid): 1e-10 relative. Direct and
shift forms (one ``expit``): 1e-12 relative. ``h``: 1e-11 relative plus 1e-12 absolute (logs of O(10)).
``binary_preference``: the reference's log-space binomial sum with ``fsum`` against the library's, each ~1e-14
relative per term over up to 10^6 terms: 1e-9 relative plus 1e-13 absolute. Through ``stationary_policy`` (a root
finder, residual below 1e-10 of beta at a drift slope of at least 1/2): 1e-8 relative in the smaller of ``x`` and
``1 - x``, plus 2.3e-16 absolute. Rests of 3-output questions: the Eq. 11 residual with the enumerated ``P_G``
below 1e-8. ``P_G``: 1e-10 relative plus 1e-13 absolute. Log pooling: 1e-12 relative plus 1e-300 absolute. KL
values: 1e-12 relative plus 1e-15 absolute.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round17_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi

INF = math.inf
P = [0.0023, 0.061, 0.318, 0.529, 0.874, 0.9971]
B = [0.0031, 0.047, 0.62, 2.9, 57.0]


def _c(v, want, rtol, atol=0.0):
    return ref.close(np.asarray(v, float).ravel(), [want] if np.ndim(want) == 0 else want, rtol, atol)


def _small(v, x, y, rtol=1e-8):
    pi = _pi(v)
    if x <= 0.5:
        return ref.close(pi[0], x, rtol, 1e-300)
    return ref.close(pi[1], y, rtol, 2.3e-16)


# ---------------------------------------------------------------- closed forms called directly
def closed_cases() -> list[dict]:
    import grpo_theory.closed_form as cf

    G_ = "API: closed_form called directly on a new p x beta grid"
    out = []
    for p in P:
        for beta in B:
            out.append(_ok(G_, f"binary_pairwise(p={p}, beta={beta}) = Eq. 14",
                           lambda p=p, beta=beta: cf.binary_pairwise(p, beta),
                           lambda v, p=p, beta=beta: _c(v, ref.x_eq14(p, beta), 1e-10)))
            out.append(_ok(G_, f"binary_pairwise(p={p}, beta={beta}, gamma=0.37) = Eq. 14 at beta/gamma",
                           lambda p=p, beta=beta: cf.binary_pairwise(p, beta, gamma=0.37),
                           lambda v, p=p, beta=beta: _c(v, ref.x_eq14(p, beta, 0.37), 1e-10)))
            out.append(_ok(G_, f"binary_large_group(p={p}, beta={beta}) = Eq. 15",
                           lambda p=p, beta=beta: cf.binary_large_group(p, beta),
                           lambda v, p=p, beta=beta: _c(v, ref.x_eq15(p, beta), 1e-10)))
            out.append(_ok(G_, f"binary_pairwise_direct(p={p}, beta={beta})",
                           lambda p=p, beta=beta: cf.binary_pairwise_direct(p, beta),
                           lambda v, p=p, beta=beta: _c(v, ref.x_direct2(p, beta), 1e-12)))
            G = [3, 7, 40, INF, 2][B.index(beta)]
            gap = [1.0, 0.25, 4.0][P.index(p) % 3]
            out.append(_ok(G_, f"binary_shift_direct(p={p}, beta={beta}, G={G}, gap={gap}) = RLHF at G beta/(G-1)",
                           lambda p=p, beta=beta, G=G, gap=gap: cf.binary_shift_direct(p, beta, G, reward_gap=gap),
                           lambda v, p=p, beta=beta, G=G, gap=gap: _c(v, ref.x_shift_direct(p, beta, G, gap), 1e-12)))
            pen = "reverse" if (P.index(p) + B.index(beta)) % 2 else "direct"
            want = ref.x_eq14(p, beta, gap) if pen == "reverse" else ref.x_direct2(p, beta, gap)
            out.append(_ok(G_, f"binary_rloo(p={p}, beta={beta}, gap={gap}, penalty={pen})",
                           lambda p=p, beta=beta, gap=gap, pen=pen: cf.binary_rloo(p, beta, reward_gap=gap, penalty=pen),
                           lambda v, want=want: _c(v, want, 1e-10)))
    for p in (0.0041, 0.27, 0.83):
        for beta in (0.09, 1.7):
            for x in (0.0013, 0.36, 0.9992):
                out.append(_ok(G_, f"large_group_direct_h(x={x}, p={p}, beta={beta})",
                               lambda x=x, p=p, beta=beta: cf.large_group_direct_h(x, p, beta),
                               lambda v, x=x, p=p, beta=beta: _c(v, ref.h(x, p, beta), 1e-11, 1e-12)))
    for beta in (0.0007, 0.013, 0.31, 1.0, 4.4, 93.0, 1e4, 3e7):
        out.append(_ok(G_, f"large_group_direct_turning_point(beta={beta})",
                       lambda beta=beta: cf.large_group_direct_turning_point(beta),
                       lambda v, beta=beta: _c(v, ref.turning(beta), 1e-12)))
    # vectorised calls, as the docs promise (array p and beta broadcast)
    pa = np.array(P)
    out.append(_ok(G_, "binary_pairwise(array of 6 p, beta=0.47) vectorised",
                   lambda: cf.binary_pairwise(pa, 0.47), lambda v: _c(v, [ref.x_eq14(p, 0.47) for p in P], 1e-10)))
    out.append(_ok(G_, "binary_large_group(p=0.318, array of 5 beta) vectorised",
                   lambda: cf.binary_large_group(0.318, np.array(B)),
                   lambda v: _c(v, [ref.x_eq15(0.318, b) for b in B], 1e-10)))
    out.append(_ok(G_, "binary_pairwise_direct(6 p, 6 beta) elementwise",
                   lambda: cf.binary_pairwise_direct(pa, np.array(B + [0.5])),
                   lambda v: _c(v, [ref.x_direct2(p, b) for p, b in zip(P, B + [0.5])], 1e-12)))
    return out


def preference_cases() -> list[dict]:
    import grpo_theory.closed_form as cf

    G_ = "API: binary_preference (the O(G) binomial form) against the reference's binomial sum, G up to 10^6"
    out = []
    for x in (0.0009, 0.13, 0.5, 0.77, 0.9993):
        for G in (2, 3, 11, 64, 1500, INF):
            want = ref.binary_pg(x, G)
            out.append(_ok(G_, f"binary_preference(x={x}, G={G})",
                           lambda x=x, G=G: cf.binary_preference(x, G),
                           lambda v, want=want: _c(np.concatenate([np.ravel(v[0]), np.ravel(v[1])]), list(want),
                                                   1e-9, 1e-13)))
    for x, G in ((0.4, 100_000), (0.002, 250_000), (0.61, 1_000_000)):
        out.append(_ok(G_ + " (size)", f"binary_preference(x={x}, G={G}) within 60 s",
                       lambda x=x, G=G: cf.binary_preference(x, G),
                       lambda v, x=x, G=G: _c(np.concatenate([np.ravel(v[0]), np.ravel(v[1])]), list(ref.binary_pg(x, G)),
                                              1e-9, 1e-13)))
    # x P_a + (1 - x) P_b = 0 (SPEC section 2's first fact) on an array
    xs = np.array([0.011, 0.2, 0.45, 0.91])
    out.append(_ok(G_, "binary_preference(array of 4 x, G=9): x P_a + (1-x) P_b = 0",
                   lambda: cf.binary_preference(xs, 9),
                   lambda v: _c(xs * np.asarray(v[0]) + (1 - xs) * np.asarray(v[1]), [0.0] * 4, 0, 1e-14)))
    return out


def promise_cases() -> list[dict]:
    import grpo_theory.closed_form as cf

    G_ = "API: Eq. 14 / Eq. 15's stated properties at their edges"
    out = []
    for p in (0.019, 0.44, 0.981):
        out.append(_ok(G_, f"binary_pairwise(p={p}, beta=0.8, gamma=0): a tie gives x = p",
                       lambda p=p: cf.binary_pairwise(p, 0.8, gamma=0.0), lambda v, p=p: _c(v, p, 1e-14)))
        for g in (0.29, 1.0):
            out.append(_ok(G_, f"binary_pairwise(p={p}, beta=gamma={g}): x = sqrt(p)",
                           lambda p=p, g=g: cf.binary_pairwise(p, g, gamma=g),
                           lambda v, p=p: _c(v, math.sqrt(p), 1e-13)))
        for beta in (0.0203, 0.71, 6.6):
            out.append(_ok(G_, f"binary_large_group(p={p}, beta={beta}) >= max(1/(1+beta^2), p)",
                           lambda p=p, beta=beta: cf.binary_large_group(p, beta),
                           lambda v, p=p, beta=beta: True if float(np.ravel(v)[0]) >= max(1 / (1 + beta * beta), p) * (1 - 1e-15)
                           else f"{float(np.ravel(v)[0])} below the bound"))
    out.append(_ok(G_, "binary_pairwise_direct(p=0, beta=0.5): continuous at p = 0 (x = 0)",
                   lambda: cf.binary_pairwise_direct(0.0, 0.5), lambda v: _c(v, 0.0, 0, 0)))
    out.append(_ok(G_, "binary_pairwise(p=1, beta=0.3): x = 1",
                   lambda: cf.binary_pairwise(1.0, 0.3), lambda v: _c(v, 1.0, 1e-15)))
    out.append(_ok(G_, "binary_large_group(p=1, beta=2.1): x = 1",
                   lambda: cf.binary_large_group(1.0, 2.1), lambda v: _c(v, 1.0, 1e-14)))
    return out


# ---------------------------------------------------------------- through stationary_policy
def _forms():
    return {
        "G=2 reverse (Eq. 14)": (dict(group_size=2), lambda p, b: (ref.x_eq14(p, b), ref.y_eq14(p, b))),
        "G=inf reverse (Eq. 15)": (dict(group_size=INF), lambda p, b: (ref.x_eq15(p, b), ref.y_eq15(p, b))),
        "G=2 direct": (dict(group_size=2, penalty="direct"),
                       lambda p, b: (ref.sig(ref.lgt(p) + 1 / b), ref.sig(-ref.lgt(p) - 1 / b))),
        "shift+direct G=5": (dict(group_size=5, penalty="direct", normalization="shift"),
                             lambda p, b: (ref.sig(ref.lgt(p) + 0.8 / b), ref.sig(-ref.lgt(p) - 0.8 / b))),
        "rloo reverse G=4 (Eq. 14)": (dict(group_size=4, advantage="rloo"),
                                      lambda p, b: (ref.x_eq14(p, b), ref.y_eq14(p, b))),
        "rloo direct G=9": (dict(group_size=9, advantage="rloo", penalty="direct"),
                            lambda p, b: (ref.sig(ref.lgt(p) + 1 / b), ref.sig(-ref.lgt(p) - 1 / b))),
    }


def stationary_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: binary stationary_policy under six forms on a new grid"
    out = []
    for form, (okw, fn) in _forms().items():
        for p in (0.0057, 0.23, 0.64, 0.9938):
            for beta in (0.011, 0.38, 13.0):
                x, y = fn(p, beta)
                out.append(_ok(G_, f"stationary_policy {form}: p={p} beta={beta}",
                               lambda p=p, beta=beta, okw=okw:
                               stationary_policy(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, **okw)),
                               lambda v, x=x, y=y: _small(v, x, y)))
    return out


def rest_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference, stationary_policy

    G_ = "API: reward_preference and three-output rests against the ordered-tuple enumeration"
    rng = np.random.default_rng(171717)
    out = []
    kinds = ["scale", "shift", "rloo", "scale"]
    for i in range(30):
        n = int(rng.integers(2, 5))
        G = int(rng.integers(2, 6 if n <= 3 else 5))
        kind = kinds[i % 4]
        ddof = 1 if (kind == "scale" and i % 8 == 3) else 0
        eps = 0.05 if (kind == "scale" and i % 8 == 7) else 0.0
        pi = rng.dirichlet(np.ones(n) * 0.8)
        pr = rng.dirichlet(np.ones(n))
        rew = np.round(rng.uniform(-3, 3, n), 3)
        if i % 6 == 1:
            rew[-1] = rew[0]
        okw = dict(beta=0.7, group_size=G)
        if kind == "rloo":
            okw["advantage"] = "rloo"
        else:
            okw.update(normalization=kind, std_ddof=ddof, std_eps=eps)
        want = ref.pg_enum(list(pi), list(rew), G, kind, ddof, eps)
        out.append(_ok(G_, f"reward_preference n={n} G={G} {kind} ddof={ddof} eps={eps} rewards={rew.tolist()} "
                           f"pi={np.round(pi, 6).tolist()}",
                       lambda pr=pr, rew=rew, okw=okw, pi=pi: reward_preference(Question(pr, rew), Objective(**okw), pi),
                       lambda v, want=want: _c(v, want, 1e-10, 1e-13)))
    for i in range(12):
        n = 3
        pr = rng.dirichlet(np.ones(n) * 1.5)
        rw = np.round(rng.uniform(0, 1, n), 2)
        G = [2, 3, 5][i % 3]
        beta = [0.21, 0.9, 3.5, 0.45][i % 4]

        def chk(v, pr=pr, rw=rw, G=G, beta=beta):
            pi = _pi(v)
            r = ref.eq11_res(list(pi), list(pr), ref.pg_enum(list(pi), list(rw), G), beta)
            return True if r < 1e-8 else f"Eq. 11 residual {r:.3g} at {pi}"
        out.append(_ok(G_, f"stationary_policy reverse/scale n=3 G={G} beta={beta} pi_ref={np.round(pr, 5).tolist()} "
                           f"rewards={rw.tolist()}: Eq. 11 with the enumerated P_G",
                       lambda pr=pr, rw=rw, G=G, beta=beta:
                       stationary_policy(Question(pr, rw), Objective(beta=beta, group_size=G)), chk))
    return out


def pool_cases() -> list[dict]:
    from grpo_theory import Question
    from grpo_theory.solvers.baselines import log_pooling, rlhf_optimum

    G_ = "API: log_pooling and rlhf_optimum against Eq. 4 in log space"
    rng = np.random.default_rng(1717)
    out = []
    for i in range(16):
        n = int(rng.integers(2, 9))
        pr = rng.dirichlet(np.ones(n) * 0.6)
        if i % 5 == 3:
            pr[0] = 0.0
            pr /= pr.sum()
        rw = np.round(rng.normal(size=n) * [1, 30, 0.01, 5][i % 4], 4)
        beta = [0.003, 0.5, 80.0, 0.07][i % 4]
        want = ref.pool(list(pr), list(rw), beta)
        out.append(_ok(G_, f"log_pooling n={n} beta={beta} rewards={rw.tolist()}",
                       lambda pr=pr, rw=rw, beta=beta: log_pooling(pr, rw, beta),
                       lambda v, want=want: _c(v, want, 1e-12, 1e-300)))
        if i % 3 == 0:
            out.append(_ok(G_, f"rlhf_optimum n={n} beta={beta} rewards={rw.tolist()}",
                           lambda pr=pr, rw=rw, beta=beta: rlhf_optimum(Question(pr, rw), beta),
                           lambda v, want=want: _c(_pi(v), want, 1e-12, 1e-300)))
    N = 999_999                                            # 7 levels of 142,857 outputs each
    pr = np.full(N, 1.0 / N)
    rw = (np.arange(N) % 7) / 7.0
    want = ref.pool([1.0 / 7] * 7, [k / 7.0 for k in range(7)], 0.3)
    out.append(_ok(G_ + " (size)", "log_pooling on 999,999 outputs (7 reward levels) within 60 s",
                   lambda: log_pooling(pr, rw, 0.3),
                   lambda v: _c(np.asarray(v)[:7] * N / 7, want, 1e-9)))
    return out


# ---------------------------------------------------------------- kl
LR = [-25.0, -3.1, -0.4, 0.27, 2.2, 23.0]
CLAMPS = [(None, None), (20.0, 10.0), (1.5, None), (None, 0.9)]


def kl_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.kl import coefficient, estimator_value, value_shift, value_slope

    G_ = "API: kl values, slopes, shifts and coefficients with both clamps against SPEC section 8"
    out = []
    lr = np.array(LR)
    for est in ("k1", "k2", "k3", "abs", "k3_ratio", "k3_plus"):
        for L, V in CLAMPS:
            if est in ("k3_ratio", "k3_plus") and (L, V) != (None, None):
                continue
            kw = dict(beta=0.4, kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)
            want = [ref.kl_val(est, x, L, V) for x in LR]
            out.append(_ok(G_, f"estimator_value {est} L={L} V={V} at lr={LR}",
                           lambda kw=kw: estimator_value(Objective(**kw), lr),
                           lambda v, want=want: _c(v, want, 1e-12, 1e-15)))
            if est not in ("k3_ratio", "k3_plus"):
                sl = [ref.kl_slope(est, x, L, V) for x in LR]
                out.append(_ok(G_, f"value_slope {est} L={L} V={V} at lr={LR}",
                               lambda kw=kw: value_slope(Objective(**kw), lr),
                               lambda v, sl=sl: _c(v, sl, 1e-12, 1e-15)))
                out.append(_ok(G_, f"value_shift {est} L={L} V={V} beta=0.4 at lr={LR}",
                               lambda kw=kw: value_shift(Objective(**kw), lr),
                               lambda v, want=want: _c(v, [0.4 * w for w in want], 1e-12, 1e-15)))
    lr2 = np.array([-2.7, -0.15, 0.6, 4.1])
    coef = {"k2": list(lr2), "k3": [-math.expm1(-x) for x in lr2], "k3_ratio": list(lr2), "k3_plus": list(lr2),
            "abs": [float(np.sign(x)) for x in lr2]}
    for est, want in coef.items():
        out.append(_ok(G_, f"coefficient {est} (loss placement) at lr={lr2.tolist()}",
                       lambda est=est: coefficient(Objective(beta=1.3, kl_estimator=est), lr2),
                       lambda v, want=want: _c(v, want, 1e-12, 1e-15)))
    for est in ("k1", "k2", "k3", "abs"):
        want = [ref.kl_val(est, x) for x in lr2]
        out.append(_ok(G_, f"coefficient {est} (advantage placement) = the value at lr={lr2.tolist()}",
                       lambda est=est: coefficient(Objective(beta=1.3, kl_estimator=est, kl_placement="advantage"), lr2),
                       lambda v, want=want: _c(v, want, 1e-12, 1e-15)))
    out.append(_ok(G_, "estimator_value k3 at lr = -inf and +inf: +inf on both sides (documented)",
                   lambda: estimator_value(Objective(beta=1.0, kl_estimator="k3"), np.array([-INF, INF])),
                   lambda v: _c(v, [INF, INF], 0)))
    out.append(_ok(G_, "estimator_value k1 at lr = -inf: lr itself (documented)",
                   lambda: estimator_value(Objective(beta=1.0, kl_estimator="k1"), np.array([-INF])),
                   lambda v: _c(v, [-INF], 0)))
    out.append(_ok(G_, "estimator_value k2 on an empty array: an empty array",
                   lambda: estimator_value(Objective(beta=1.0, kl_estimator="k2"), np.array([])),
                   lambda v: True if np.asarray(v).shape == (0,) else f"shape {np.asarray(v).shape}"))
    out.append(_ok(G_, "estimator_value k3 on a (2, 3) array keeps the shape",
                   lambda: estimator_value(Objective(beta=1.0, kl_estimator="k3"), np.array(LR).reshape(2, 3)),
                   lambda v: _c(np.ravel(v), [ref.kl_val("k3", x) for x in LR], 1e-12, 1e-15)
                   if np.shape(v) == (2, 3) else f"shape {np.shape(v)}"))
    return out


# ---------------------------------------------------------------- refused arguments
def error_cases() -> list[dict]:
    import grpo_theory.closed_form as cf
    from grpo_theory import Objective, Question, reward_preference, stationary_policy
    from grpo_theory.kl import estimator_value
    from grpo_theory.solvers.baselines import log_pooling

    G_ = "API: arguments the docs refuse, each named in the message"
    E = []
    for beta in (0.0, -0.6, math.nan, -INF):
        E.append((f"binary_pairwise(0.4, beta={beta})", lambda b=beta: cf.binary_pairwise(0.4, b), ["beta"]))
        E.append((f"binary_large_group(0.4, beta={beta})", lambda b=beta: cf.binary_large_group(0.4, b), ["beta"]))
        E.append((f"binary_pairwise_direct(0.4, beta={beta})", lambda b=beta: cf.binary_pairwise_direct(0.4, b), ["beta"]))
        if beta != 0.0:                                   # beta = 0 is valid for an Objective (unregularised)
            E.append((f"Objective(beta={beta})", lambda b=beta: Objective(beta=b), ["beta"]))
        E.append((f"log_pooling([0.5, 0.5], [1, 0], beta={beta})", lambda b=beta: log_pooling([0.5, 0.5], [1, 0], b),
                  ["beta"]))
    for p in (-0.2, 1.3, math.nan):
        E.append((f"binary_pairwise(p={p}, 0.5)", lambda p=p: cf.binary_pairwise(p, 0.5), ["pi_ref"]))
        E.append((f"binary_large_group(p={p}, 0.5)", lambda p=p: cf.binary_large_group(p, 0.5), ["pi_ref"]))
        E.append((f"binary_shift_direct(p={p}, 0.5, 4)", lambda p=p: cf.binary_shift_direct(p, 0.5, 4), ["pi_ref"]))
    for x in (-0.01, 1.01, math.nan):
        E.append((f"binary_preference(x={x}, 5)", lambda x=x: cf.binary_preference(x, 5), ["x"]))
    for G in (1, 0, -3, 2.5, math.nan):
        E.append((f"binary_preference(0.3, G={G})", lambda G=G: cf.binary_preference(0.3, G), ["group_size"]))
        E.append((f"Objective(beta=1, group_size={G})", lambda G=G: Objective(beta=1.0, group_size=G), ["group_size"]))
        E.append((f"binary_shift_direct(0.3, 0.5, G={G})", lambda G=G: cf.binary_shift_direct(0.3, 0.5, G),
                  ["group_size"]))
    for gap in (0.0, -1.0):
        E.append((f"binary_rloo(0.3, 0.5, reward_gap={gap})", lambda g=gap: cf.binary_rloo(0.3, 0.5, reward_gap=g),
                  ["reward_gap"]))
    E.append(("binary_rloo(0.3, 0.5, penalty='forward')", lambda: cf.binary_rloo(0.3, 0.5, penalty="forward"),
              ["penalty"]))
    E.append(("binary_pairwise(0.3, 0.5, gamma=-0.2)", lambda: cf.binary_pairwise(0.3, 0.5, gamma=-0.2), ["gamma"]))
    E.append(("binary_pairwise(0.3, 0.5, gamma=1.4)", lambda: cf.binary_pairwise(0.3, 0.5, gamma=1.4), ["gamma"]))
    E.append(("large_group_direct_turning_point(beta=0)", lambda: cf.large_group_direct_turning_point(0.0), ["beta"]))
    E.append(("large_group_direct_h(x=1.5, 0.3, 1)", lambda: cf.large_group_direct_h(1.5, 0.3, 1.0), ["x"]))
    E.append(("estimator_value k3 with a NaN log-ratio (documented: refused)",
              lambda: estimator_value(Objective(beta=1.0, kl_estimator="k3"), np.array([0.1, math.nan])), ["nan"]))
    E.append(("Objective(kl_estimator='k2_ratio')", lambda: Objective(beta=1.0, kl_estimator="k2_ratio"), ["kl_estimator"]))
    E.append(("Objective(kl_placement='batch')", lambda: Objective(beta=1.0, kl_placement="batch"), ["kl_placement"]))
    E.append(("Objective(kl_value_clamp=-3)", lambda: Objective(beta=1.0, kl_estimator="k3", kl_value_clamp=-3.0),
              ["kl_value_clamp"]))
    E.append(("Objective(std_ddof=2)", lambda: Objective(beta=1.0, std_ddof=2), ["std_ddof"]))
    E.append(("Objective(std_eps=-1e-4)", lambda: Objective(beta=1.0, std_eps=-1e-4), ["std_eps"]))
    E.append(("Objective(normalization='zscore')", lambda: Objective(beta=1.0, normalization="zscore"), ["normalization"]))
    E.append(("Objective(advantage='ppo')", lambda: Objective(beta=1.0, advantage="ppo"), ["advantage"]))
    E.append(("Objective(penalty='forward')", lambda: Objective(beta=1.0, penalty="forward"), ["penalty"]))
    E.append(("Question([], [])", lambda: Question([], []), ["pi_ref"]))
    E.append(("Question([0.5, 0.6], [1, 0]) (sums to 1.1)", lambda: Question([0.5, 0.6], [1, 0]), ["pi_ref"]))
    E.append(("Question([1.2, -0.2], [1, 0])", lambda: Question([1.2, -0.2], [1, 0]), ["pi_ref"]))
    E.append(("Question([0.5, 0.5], [1, 0, 2]) (3 rewards)", lambda: Question([0.5, 0.5], [1, 0, 2]), ["rewards"]))
    E.append(("Question([0.5, 0.5], [1, nan])", lambda: Question([0.5, 0.5], [1, math.nan]), ["rewards"]))
    E.append(("Question([0.5, 0.5], [1, inf])", lambda: Question([0.5, 0.5], [1, INF]), ["rewards"]))
    E.append(("Question([0.5, 0.5]) with no rewards, levels or preference", lambda: Question([0.5, 0.5]), ["rewards"]))
    E.append(("Question with reward_probs rows not summing to 1",
              lambda: Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.5, 0.4], [0.1, 0.9]]),
              ["reward_probs"]))
    E.append(("Question with a 2x3 preference for 2 outputs",
              lambda: Question([0.5, 0.5], preference=[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]), ["preference"]))
    E.append(("reward_preference with pi of 3 entries on 2 outputs",
              lambda: reward_preference(Question([0.5, 0.5], [1, 0]), Objective(beta=1.0), [0.2, 0.3, 0.5]), ["pi"]))
    E.append(("reward_preference with pi summing to 0.9",
              lambda: reward_preference(Question([0.5, 0.5], [1, 0]), Objective(beta=1.0), [0.4, 0.5]), ["pi"]))
    E.append(("stationary_policy(pi_ref list, Objective) instead of a Question",
              lambda: stationary_policy([0.5, 0.5], Objective(beta=1.0)), ["Question"]))
    E.append(("log_pooling with pi_ref of 2 and rewards of 3", lambda: log_pooling([0.5, 0.5], [1, 0, 2], 1.0),
              ["rewards"]))
    out = [_err(G_, lab, call, names) for lab, call, names in E]
    # where the docs leave it open: refused naming the argument, or accepted with the right number
    out.append(_either(G_, "Objective(beta='0.5') (a string): refused, or beta 0.5",
                       lambda: Objective(beta="0.5").beta, lambda v: _c(v, 0.5, 0), ["beta"]))
    out.append(_either(G_, "Objective(group_size='8') (a string): refused, or G = 8",
                       lambda: Objective(beta=1.0, group_size="8").group_size, lambda v: _c(v, 8.0, 0), ["group_size"]))
    out.append(_either(G_, "Objective(beta=True) (a bool): refused, or beta 1",
                       lambda: Objective(beta=True).beta, lambda v: _c(v, 1.0, 0), ["beta"]))
    out.append(_either(G_, "Objective(kl_log_ratio_clamp=0) (not negative): refused, or the value at lr = 0 (k3: 0)",
                       lambda: estimator_value(Objective(beta=1.0, kl_estimator="k3", kl_log_ratio_clamp=0.0),
                                               np.array([-1.3, 2.0])),
                       lambda v: _c(v, [0.0, 0.0], 0, 1e-300), ["kl_log_ratio_clamp"]))
    out.append(_either(G_, "stationary_policy with a dict {'beta': 1.0} for the objective (a mapping, as "
                           "reward_preference accepts): refused, or sqrt(1/2)",
                       lambda: stationary_policy(Question([0.5, 0.5], [1, 0]), {"beta": 1.0}),
                       lambda v: _small(v, math.sqrt(0.5), 1 - math.sqrt(0.5)), ["Objective"]))
    return out


def accepted_cases() -> list[dict]:
    """Types the docs accept: numpy scalars, Fractions, ints, tuples."""
    from fractions import Fraction

    import grpo_theory.closed_form as cf
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: accepted types (numpy scalars, ints, Fractions, tuples)"
    out = [
        _ok(G_, "binary_pairwise(np.float32(0.25), np.float32(0.5))",
            lambda: cf.binary_pairwise(np.float32(0.25), np.float32(0.5)),
            lambda v: _c(v, ref.x_eq14(float(np.float32(0.25)), 0.5), 1e-7)),
        _either(G_, "binary_large_group(Fraction(1, 3), 2): refused naming pi_ref, or Eq. 15 at 1/3",
                lambda: cf.binary_large_group(Fraction(1, 3), 2), lambda v: _c(v, ref.x_eq15(1 / 3, 2.0), 1e-10),
                ["pi_ref"]),
        _ok(G_, "binary_pairwise_direct(0.2, np.int64(3))", lambda: cf.binary_pairwise_direct(0.2, np.int64(3)),
            lambda v: _c(v, ref.x_direct2(0.2, 3.0), 1e-12)),
        _ok(G_, "stationary_policy(Question((0.35, 0.65), (1, 0)), Objective(beta=np.float64(0.7)))",
            lambda: stationary_policy(Question((0.35, 0.65), (1, 0)), Objective(beta=np.float64(0.7))),
            lambda v: _small(v, ref.x_eq14(0.35, 0.7), ref.y_eq14(0.35, 0.7))),
        _ok(G_, "stationary_policy with group_size=np.int32(2) and integer rewards (5, 2)",
            lambda: stationary_policy(Question(np.array([0.8, 0.2]), np.array([5, 2])),
                                      Objective(beta=0.25, group_size=np.int32(2))),
            lambda v: _small(v, ref.x_eq14(0.8, 0.25), ref.y_eq14(0.8, 0.25))),
        _ok(G_, "stationary_policy group_size=float('inf') given as 1e400",
            lambda: stationary_policy(Question([0.4, 0.6], [1, 0]), Objective(beta=0.9, group_size=1e400)),
            lambda v: _small(v, ref.x_eq15(0.4, 0.9), ref.y_eq15(0.4, 0.9))),
    ]
    return out


def all_api_cases() -> list[dict]:
    return (closed_cases() + preference_cases() + promise_cases() + stationary_cases() + rest_cases() + pool_cases()
            + kl_cases() + error_cases() + accepted_cases())


def predict_api_cases() -> list[dict]:
    """``predict`` on a 2-d array of ``(n, correct)`` rows (docs/predict.md: prompt ids 0, 1, ...): ``pred``."""
    from grpo_theory import Objective
    from grpo_theory.predict import predict

    G_ = "API: predict on an (n, correct) array, pred against Eq. 14 / Eq. 15 / the direct form"
    out = []
    rows = np.array([[128, 40], [64, 63], [7, 2], [300, 151], [33, 1]])
    for beta in (0.27, 1.15):
        for okw, fn in ((dict(group_size=2), lambda p, b: ref.x_eq14(p, b)),
                        (dict(group_size=INF), lambda p, b: ref.x_eq15(p, b)),
                        (dict(group_size=2, penalty="direct"), lambda p, b: ref.sig(ref.lgt(p) + 1 / b))):
            want = [fn(c / n, beta) for n, c in rows]
            out.append(_ok(G_, f"predict(array of 5 (n, correct) rows, Objective(beta={beta}, {okw})).table['pred']",
                           lambda beta=beta, okw=okw: predict(rows, Objective(beta=beta, **okw)).table,
                           lambda v, want=want: _c(np.asarray(v["pred"], float), want, 1e-9)))
    return out


def all_api_cases() -> list[dict]:  # noqa: F811 - the predict cases added
    return (closed_cases() + preference_cases() + promise_cases() + stationary_cases() + rest_cases() + pool_cases()
            + kl_cases() + error_cases() + accepted_cases() + predict_api_cases())


def huge_beta_cases() -> list[dict]:
    """beta from 1e13 to 1e300 (docs: the class solvers' integrator overflows from beta ~ 1e12, tracebacks from 1e20
    with an entropy bonus, RLOO or clamps, so ``reference_in_rounding`` short-cuts there): the stationary point is
    ``pi_ref`` to ``2 max|P_G| / beta`` relative (Eq. 11 / the direct form), below 1e-11 on these questions
    (``|P_G| <= 10``, entropy term ``0.05 * 4.0``)."""
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: stationary_policy at beta 1e13 .. 1e300: pi_ref to the rounding"
    out = []
    qs = [([0.013, 0.287, 0.7], [1.0, 0.25, 0.0]), ([0.4, 0.1, 0.3, 0.2], [2.0, -1.0, 0.5, 3.0])]
    objs = [("reverse/scale G=3", dict(group_size=3)), ("direct G=4", dict(group_size=4, penalty="direct")),
            ("rloo G=5", dict(group_size=5, advantage="rloo")), ("G=inf", dict(group_size=INF)),
            ("ddof=1 eps=1e-4 G=6", dict(group_size=6, std_ddof=1, std_eps=1e-4)),
            ("verl low_var_kl (k3, L=20, V=10) G=2", dict(group_size=2, kl_estimator="k3", kl_log_ratio_clamp=20.0,
                                                          kl_value_clamp=10.0)),
            ("entropy_coef=0.05 G=2", dict(group_size=2, entropy_coef=0.05))]
    for beta in (1e13, 1e17, 1e21, 1e300):
        for name, okw in objs:
            for pr, rw in qs:
                if beta in (1e17, 1e300) and len(pr) == 4:
                    continue
                out.append(_ok(G_, f"stationary_policy {name} beta={beta:g} pi_ref={pr} rewards={rw}: = pi_ref",
                               lambda pr=pr, rw=rw, okw=okw, beta=beta:
                               stationary_policy(Question(pr, rw), Objective(beta=beta, **okw)),
                               lambda v, pr=pr: _c(_pi(v), pr, 1e-11, 1e-300)))
    return out


def all_api_cases() -> list[dict]:  # noqa: F811 - the huge-beta cases added
    return (closed_cases() + preference_cases() + promise_cases() + stationary_cases() + rest_cases() + pool_cases()
            + kl_cases() + error_cases() + accepted_cases() + predict_api_cases() + huge_beta_cases())
