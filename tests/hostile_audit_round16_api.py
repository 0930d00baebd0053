"""Cases of the sixteenth hostile audit (issue 45), part one: the public Python API.

Chosen from ``tests/hostile_audit_round16_coverage.py`` (how often the earlier rounds' files name each public callable,
the least named first) and from the API pages read as a new user reads them: every documented promise at its edges.

* ``reward_preference`` on random questions of 2-5 outputs (G = 2..6; scale with ddof / eps, shift, RLOO and
  REINFORCE++), against the reference's count-vector enumeration;
* binary ``stationary_policy`` on a new grid of ``pi_ref(a)`` x ``beta`` under six closed forms, compared in the
  smaller of ``x`` and ``1 - x``; at finite G (5 .. 700) against the bisection, with ddof and eps;
* the ``closed_form`` module's functions called directly, vectorised, at new values (the filtered and entropy
  forms against a bisection of the conditions the docs state);
* every stationary point of the large-G direct penalty (``stationary_points``) against the roots of ``h``;
* ``log_pooling``, ``rlhf_optimum``, ``nash_equilibrium`` and ``nash_residual`` against log pooling and the
  reference's NLHF iteration;
* the ``kl`` module's values, coefficients, slopes and shifts with clamps, against SPEC section 8;
* ``stationary_policy_batch``, ``reinforce_pp_expectations``, ``rloo_expectations``, ``pooled_expectations``,
  ``full_space_flow``, ``answer_weights``, ``proximal_map`` (named by no earlier round) against the enumeration and
  the closed forms;
* ``predict`` / its helpers at new counts; the least-named callables with bad arguments.

Tolerances (each from both sides' accuracy). ``P_G``: the reference's ``fsum`` of count-vector terms (weights
``exp(lgamma ...)``, 1e-15 relative each) against the library's log-space sums (documented ~1e-14): 1e-10 relative
plus 1e-13 absolute. Closed forms through the solvers: the library's residual is below 1e-10 of ``beta`` at a drift
slope of at least 1/2, so 1e-8 relative in the smaller of ``x`` and ``1 - x``, plus 1.2e-16 absolute (one rounding
of ``x`` near 1). Closed forms called directly: 1e-12 relative (the same formula in doubles, a few roundings).
Finite G: the reference bisects to the last bit, the library's root finder stops at ``xtol`` 1e-14 with residual
below 1e-10 beta: 1e-7 relative. Bisected conditions (filtered, entropy): 1e-9 relative. KL values: 1e-12 relative
and 1e-300 absolute. NLHF: the reference iterates until a step moves less than 1e-15; 1e-9 absolute. Flows
(``full_space_flow`` to t = 10^4 against Eq. 14): 1e-7 absolute. ``predict``'s table (float64 in memory): 1e-9
relative; intervals (SciPy on both sides) 1e-9.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

import hostile_audit_round16_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi, _warn

INF = math.inf


def _small(pi, want, rtol=1e-8):
    """A two-output policy against the reference's ``(x, 1 - x)``, in the smaller component."""
    pi = _pi(pi)
    x, y = want
    if x <= 0.5:
        return ref.close(pi[0], x, rtol, 1e-300)
    return ref.close(pi[1], y, rtol, 1.2e-16)


def _lazy(fn, *args, **kw):
    memo = []

    def get():
        if not memo:
            memo.append(fn(*args, **kw))
        return memo[0]
    return get


# ---------------------------------------------------------------- P_G against the count-vector enumeration
def pg_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference

    G_ = "API: reward_preference against the count-vector enumeration (new questions, REINFORCE++ included)"
    rng = np.random.default_rng(161616)
    out = []
    kinds = ["scale", "shift", "rloo", "rpp", "scale", "scale"]
    for i in range(42):
        n = int(rng.integers(2, 6))
        G = int(rng.integers(2, 7 if n <= 3 else 5))
        kind = kinds[i % len(kinds)]
        ddof = 1 if (kind == "scale" and i % 4 == 0) else 0
        eps = float(rng.choice([0.0, 1e-4, 0.2, 3.0])) if kind == "scale" else 0.0
        pi_ref = rng.dirichlet(np.ones(n))
        pi = rng.dirichlet(np.ones(n) * 0.5)
        scale = [1.0, 100.0, 1e-4, 7.0][i % 4]
        rew = np.round(rng.normal(size=n) * scale, 8)
        if i % 5 == 2:
            rew[1] = rew[0]                                       # a tie
        if i % 9 == 4:
            pi[-1] = 0.0                                          # an output the policy never draws
            pi = pi / pi.sum()
        okw = dict(beta=1.0, group_size=G)
        if kind in ("scale", "shift"):
            okw.update(normalization=kind, std_ddof=ddof, std_eps=eps)
        elif kind == "rloo":
            okw["advantage"] = "rloo"
        else:
            okw["advantage"] = "reinforce_pp"
        if ddof == 1 and G == 1:
            continue
        want = _lazy(ref.count_pg, list(pi), list(rew), G, kind, ddof, eps)
        lab = f"reward_preference n={n} G={G} {kind} ddof={ddof} eps={eps} rewards={rew.tolist()} pi={np.round(pi, 5).tolist()}"
        out.append(_ok(G_, lab, lambda pi_ref=pi_ref, rew=rew, okw=okw, pi=pi:
                       reward_preference(Question(pi_ref, rew), Objective(**okw), pi),
                       lambda v, want=want: ref.close(v, want(), 1e-10, 1e-13)))
    return out


def law_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference, stationary_policy

    G_ = "API: random rewards (reward laws) against the mixture enumeration, and rests of graded questions"
    rng = np.random.default_rng(160)
    out = []
    kinds = ["scale", "shift", "rloo", "rpp"]
    for i in range(12):
        n = int(rng.integers(2, 5))
        L = 2 if i % 3 else 3
        levels = [0.0, 1.0] if L == 2 else [0.0, 0.5, 1.0]
        probs = rng.dirichlet(np.ones(L), size=n)
        G = int(rng.integers(2, 6))
        kind = kinds[i % 4]
        ddof = 1 if (kind == "scale" and i % 8 == 0) else 0
        eps = 0.1 if (kind == "scale" and i % 8 == 4) else 0.0
        pi = rng.dirichlet(np.ones(n))
        okw = dict(beta=1.0, group_size=G)
        if kind in ("scale", "shift"):
            okw.update(normalization=kind, std_ddof=ddof, std_eps=eps)
        else:
            okw["advantage"] = "rloo" if kind == "rloo" else "reinforce_pp"
        want = ref.law_pg(list(pi), levels, probs.tolist(), G, kind, ddof, eps)
        out.append(_ok(G_, f"reward_preference n={n} levels={levels} G={G} {kind} ddof={ddof} eps={eps} "
                           f"probs={np.round(probs, 3).tolist()}",
                       lambda n=n, levels=levels, probs=probs, okw=okw, pi=pi:
                       reward_preference(Question(np.full(n, 1 / n), reward_levels=levels, reward_probs=probs.tolist()),
                                         Objective(**okw), pi),
                       lambda v, want=want: ref.close(v, want, 1e-10, 1e-13)))
    for i in range(10):
        n = int(rng.integers(3, 5))
        pr = rng.dirichlet(np.ones(n) * 2)
        rw = np.round(rng.uniform(0, 2, n), 2)
        G = [2, 3, 4, 6][i % 4]
        beta = float([0.15, 0.6, 2.0][i % 3])
        pen = "direct" if i % 2 else "reverse"

        def chk(v, pr=pr, rw=rw, G=G, beta=beta, pen=pen):
            pi = _pi(v)
            P = ref.count_pg(list(pi), list(rw), G)
            res = ref.eq11_residual(pi, pr, P, beta) if pen == "reverse" else ref.direct_residual(pi, pr, P, beta)
            return True if res < 1e-8 else f"rest residual {res:.3g} at {pi}"
        out.append(_ok(G_, f"stationary_policy {pen} n={n} G={G} beta={beta} pi_ref={np.round(pr, 4).tolist()} "
                           f"rewards={rw.tolist()}: the rest with the enumerated P_G",
                       lambda pr=pr, rw=rw, G=G, beta=beta, pen=pen:
                       stationary_policy(Question(pr, rw), Objective(beta=beta, group_size=G, penalty=pen)), chk))
    return out


# ---------------------------------------------------------------- binary closed forms through stationary_policy
FORMS = {
    "Eq. 14": dict(group_size=2),
    "Eq. 15": dict(group_size=INF),
    "G=2 direct": dict(group_size=2, penalty="direct"),
    "shift+direct G=3 (RLHF at 3 beta/2)": dict(group_size=3, penalty="direct", normalization="shift"),
    "rloo+direct G=6 (RLHF at beta)": dict(group_size=6, penalty="direct", advantage="rloo"),
    "ddof=1 G=2 (Eq. 14 at gamma=1/sqrt 2)": dict(group_size=2, std_ddof=1),
}


def _form_xy(form, p, beta):
    if form == "Eq. 14":
        y = ref.eq14_complement(p, beta)
        return (ref.eq14(p, beta) if y >= 0.5 else 1 - y), y
    if form == "ddof=1 G=2 (Eq. 14 at gamma=1/sqrt 2)":
        g = 1 / math.sqrt(2)
        y = ref.eq14_complement(p, beta, g)
        return (ref.eq14(p, beta, g) if y >= 0.5 else 1 - y), y
    if form == "Eq. 15":
        y = ref.eq15_complement(p, beta)
        return (ref.eq15(p, beta) if y >= 0.5 else 1 - y), y
    if form == "G=2 direct":
        z = ref.logit(p) + 1 / beta
    elif form.startswith("shift+direct"):
        z = ref.logit(p) + (2 / 3) / beta
    else:
        z = ref.logit(p) + 1 / beta
    return ref.expit(z), ref.expit(-z)


def binary_grid_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: binary stationary_policy on a new pi_ref x beta grid against six closed forms"
    out = []
    for form, okw in FORMS.items():
        for p in (3e-7, 0.02, 0.5, 0.77, 0.999999):
            for beta in (3e-6, 0.02, 0.6, 7.0, 3e5):
                want = _form_xy(form, p, beta)
                out.append(_ok(G_, f"{form}: p={p!r} beta={beta!r}",
                               lambda p=p, beta=beta, okw=okw:
                               stationary_policy(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, **okw)),
                               lambda v, want=want: _small(v, want)))
    return out


def finite_g_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: binary stationary_policy at finite G (new G) against the bisection, ddof and eps included"
    out = []
    for G in (5, 6, 9, 13, 24, 50, 129, 700):
        for p, beta in ((0.12, 0.2), (0.63, 1.3), (0.4, 0.08)):
            want = _lazy(ref.rest_bisect, p, beta, G)
            out.append(_ok(G_, f"reverse G={G} p={p} beta={beta}",
                           lambda p=p, beta=beta, G=G:
                           stationary_policy(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, group_size=G)),
                           lambda v, want=want: ref.close(_pi(v)[0], want(), 1e-7)))
    for G in (4, 6, 20, 150):
        for p, beta in ((0.3, 0.9), (0.05, 2.5)):
            want = _lazy(ref.rest_bisect, p, beta, G, "direct")
            out.append(_ok(G_, f"direct G={G} p={p} beta={beta}",
                           lambda p=p, beta=beta, G=G:
                           stationary_policy(Question([p, 1 - p], [1.0, 0.0]),
                                             Objective(beta=beta, group_size=G, penalty="direct")),
                           lambda v, want=want: ref.close(_pi(v)[0], want(), 1e-7)))
    for G, ddof, eps, p, beta in ((4, 1, 1e-4, 0.25, 0.5), (10, 1, 0.0, 0.6, 0.3), (4, 0, 0.3, 0.25, 0.5),
                                  (10, 1, 1e-6, 0.02, 1.0), (32, 0, 2.0, 0.5, 0.1), (3, 1, 0.05, 0.9, 0.04)):
        want = _lazy(ref.rest_bisect, p, beta, G, "reverse", ddof, eps)
        out.append(_ok(G_, f"reverse G={G} ddof={ddof} eps={eps} p={p} beta={beta}",
                       lambda p=p, beta=beta, G=G, ddof=ddof, eps=eps:
                       stationary_policy(Question([p, 1 - p], [1.0, 0.0]),
                                         Objective(beta=beta, group_size=G, std_ddof=ddof, std_eps=eps)),
                       lambda v, want=want: ref.close(_pi(v)[0], want(), 1e-7)))
    return out


# ---------------------------------------------------------------- closed_form called directly
def _bisect01(f, lo, hi):
    flo = f(lo)
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if (f(mid) > 0) == (flo > 0):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _filtered(p, beta):
    """The root in (p, 1) of ``x(1-x) - beta (x-p)(x^2 + (1-x)^2)`` (docs/guide.md), bisected."""
    return _bisect01(lambda x: x * (1 - x) - beta * (x - p) * (x * x + (1 - x) ** 2), p, 1.0)


def _entropy_rev(p, beta, c, delta=1.0):
    """The root of ``Delta - beta (x-p)/(x(1-x)) - c logit x`` (docs/guide.md), bisected in the logit."""
    def F(z):
        x, y = ref.expit(z), ref.expit(-z)
        return delta - beta * (x - p) / (x * y) - c * z
    z = _bisect01(F, -35.0, 35.0)
    return ref.expit(z)


def closed_form_cases() -> list[dict]:
    from grpo_theory import closed_form as cf

    G_ = "API: closed_form's functions called directly at new values"
    out = []
    ps = np.array([1e-9, 0.013, 0.37, 0.81, 1 - 1e-7])
    for beta in (1e-5, 0.11, 1.0, 2.9, 1e6):
        out.append(_ok(G_, f"binary_pairwise(p={ps.tolist()}, beta={beta}) = Eq. 14",
                       lambda beta=beta: cf.binary_pairwise(ps, beta),
                       lambda v, beta=beta: ref.close(v, [ref.eq14(float(p), beta) for p in ps], 1e-12)))
        out.append(_ok(G_, f"binary_large_group(p={ps.tolist()}, beta={beta}) = Eq. 15",
                       lambda beta=beta: cf.binary_large_group(ps, beta),
                       lambda v, beta=beta: ref.close(v, [ref.eq15(float(p), beta) for p in ps], 1e-12)))
        out.append(_ok(G_, f"binary_pairwise_direct(p={ps.tolist()}, beta={beta}, gamma=0.35)",
                       lambda beta=beta: cf.binary_pairwise_direct(ps, beta, 0.35),
                       lambda v, beta=beta: ref.close(v, [ref.direct2(float(p), beta, 0.35) for p in ps], 1e-12)))
    for gamma in (0.0, 1e-3, 0.5, 1.0):
        out.append(_ok(G_, f"binary_pairwise(p=0.37, beta=0.2, gamma={gamma}) = Eq. 14 at beta/gamma (gamma 0: p)",
                       lambda gamma=gamma: cf.binary_pairwise(0.37, 0.2, gamma),
                       lambda v, gamma=gamma: ref.close(v, ref.eq14(0.37, 0.2, gamma) if gamma else 0.37, 1e-12)))
    for G in (2, 3, 11, 1000, INF):
        for gap in (0.5, 3.0):
            want = ref.shift_direct(0.22, 0.4, G, gap)
            out.append(_ok(G_, f"binary_shift_direct(0.22, 0.4, G={G}, gap={gap}) = RLHF at G beta/(G-1)",
                           lambda G=G, gap=gap: cf.binary_shift_direct(0.22, 0.4, G, gap),
                           lambda v, want=want: ref.close(v, want, 1e-12)))
    for gap, pen in ((0.25, "reverse"), (4.0, "reverse"), (0.25, "direct"), (4.0, "direct")):
        want = ref.eq14(0.6, 0.3, gap) if pen == "reverse" else ref.direct2(0.6, 0.3, gap)
        out.append(_ok(G_, f"binary_rloo(0.6, 0.3, reward_gap={gap}, penalty={pen!r})",
                       lambda gap=gap, pen=pen: cf.binary_rloo(0.6, 0.3, gap, pen),
                       lambda v, want=want: ref.close(v, want, 1e-12)))
    for x, G in ((0.42, 7), (0.999, 64), (1e-4, 12), (0.5, 2), (0.2, 333), (0.93, 4096)):
        want = ref.binomial_pg(x, G)
        out.append(_ok(G_, f"binary_preference(x={x}, G={G}) = SPEC's binomial form",
                       lambda x=x, G=G: cf.binary_preference(x, G),
                       lambda v, want=want: ref.close([float(np.asarray(v[0])), float(np.asarray(v[1]))], want,
                                                      1e-10, 1e-13)))
    for p, beta in ((0.05, 0.5), (0.3, 0.2), (0.7, 3.0), (1e-6, 1.0), (0.5, 1e-3)):
        want = _filtered(p, beta)
        out.append(_ok(G_, f"binary_pairwise_filtered(p={p}, beta={beta}) = the root of the guide's cubic",
                       lambda p=p, beta=beta: cf.binary_pairwise_filtered(p, beta),
                       lambda v, want=want: ref.close(v, want, 1e-9)))
    for p, beta, c in ((0.3, 0.5, 0.1), (0.05, 0.2, 1.0), (0.9, 2.0, 0.01), (0.5, 1e-3, 0.3)):
        want = _entropy_rev(p, beta, c)
        out.append(_ok(G_, f"binary_entropy(p={p}, beta={beta}, c={c}) reverse = the root of the guide's condition",
                       lambda p=p, beta=beta, c=c: cf.binary_entropy(p, beta, c),
                       lambda v, want=want: ref.close(v, want, 1e-9)))
        zd = (1.0 + beta * ref.logit(p)) / (beta + c)
        out.append(_ok(G_, f"binary_entropy(p={p}, beta={beta}, c={c}, penalty='direct') = logit x = (1 + beta logit p)/(beta + c)",
                       lambda p=p, beta=beta, c=c: cf.binary_entropy(p, beta, c, penalty="direct"),
                       lambda v, zd=zd: ref.close(v, ref.expit(zd), 1e-12)))
    for beta in (0.01, 0.3, 17.0):
        out.append(_ok(G_, f"large_group_direct_turning_point({beta})",
                       lambda beta=beta: cf.large_group_direct_turning_point(beta),
                       lambda v, beta=beta: ref.close(v, ref.turning_point(beta), 1e-12)))
    for x, p, beta in ((0.2, 0.7, 0.4), (0.95, 0.1, 1.0), (1e-6, 0.5, 3.0)):
        out.append(_ok(G_, f"large_group_direct_h(x={x}, p={p}, beta={beta})",
                       lambda x=x, p=p, beta=beta: cf.large_group_direct_h(x, p, beta),
                       lambda v, x=x, p=p, beta=beta: ref.close(v, ref.h(x, p, beta), 1e-11, 1e-12)))
    return out


# ---------------------------------------------------------------- every stationary point at G = inf, direct
def all_points_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_points

    G_ = "API: stationary_points at G = inf, direct penalty, against every root of h"
    out = []
    for p, beta in ((0.2, 1.5), (0.05, 1.2), (0.5, 2.0), (0.15, 0.9), (0.3, 4.0), (0.01, 3.0), (0.4, 0.5)):
        roots = ref.h_roots(p, beta)

        def chk(v, roots=roots):
            interior = sorted(float(_pi(pt.pi)[0]) for pt in v if not getattr(pt, "boundary", False))
            if len(interior) != len(roots):
                return f"interior points {interior}, roots of h {roots}"
            return ref.close(interior, roots, 1e-8)
        out.append(_ok(G_, f"stationary_points p={p} beta={beta} G=inf direct: interior points = roots of h {np.round(roots, 6).tolist()}",
                       lambda p=p, beta=beta: stationary_points(Question([p, 1 - p], [1.0, 0.0]),
                                                                Objective(beta=beta, group_size=INF, penalty="direct")),
                       chk))
    return out


# ---------------------------------------------------------------- baselines
def baseline_cases() -> list[dict]:
    from grpo_theory import Question, log_pooling, nash_equilibrium, rlhf_optimum
    from grpo_theory.solvers.baselines import nash_residual

    G_ = "API: log_pooling, rlhf_optimum, nash_equilibrium, nash_residual against the reference"
    rng = np.random.default_rng(1606)
    out = []
    for i in range(10):
        n = int(rng.integers(2, 9))
        pi_ref = rng.dirichlet(np.ones(n))
        rew = np.round(rng.normal(size=n) * [1, 50, 0.01, 3][i % 4], 6)
        beta = float([0.01, 0.3, 2.0, 40.0, 1e-4][i % 5])
        want = ref.log_pool(list(pi_ref), list(rew), beta)
        lab = f"n={n} rewards={rew.tolist()} beta={beta}"
        out.append(_ok(G_, f"log_pooling({lab})", lambda pi_ref=pi_ref, rew=rew, beta=beta: log_pooling(pi_ref, rew, beta),
                       lambda v, want=want: ref.close(v, want, 1e-10, 1e-300)))
        out.append(_ok(G_, f"rlhf_optimum({lab})", lambda pi_ref=pi_ref, rew=rew, beta=beta:
                       rlhf_optimum(Question(pi_ref, rew), beta), lambda v, want=want: ref.close(_pi(v), want, 1e-10, 1e-300)))
    for i in range(8):
        n = int(rng.integers(2, 6))
        pi_ref = rng.dirichlet(np.ones(n))
        rew = rng.integers(0, 3, n).astype(float)
        beta = float([0.1, 0.5, 1.0, 3.0][i % 4])
        M = ref.pref_from_rewards(list(rew))
        want = ref.nash(pi_ref, M, beta)
        lab = f"pi_ref={np.round(pi_ref, 4).tolist()} rewards={rew.tolist()} beta={beta}"
        out.append(_ok(G_, f"nash_equilibrium({lab}) = the NLHF fixed point (ties half)",
                       lambda pi_ref=pi_ref, rew=rew, beta=beta: nash_equilibrium(Question(pi_ref, rew), beta),
                       lambda v, want=want: ref.close(_pi(v), want, 0, 1e-9)))
        out.append(_ok(G_, f"nash_residual({lab}) at the reference's fixed point is below 1e-12",
                       lambda pi_ref=pi_ref, rew=rew, beta=beta, want=want:
                       nash_residual(Question(pi_ref, rew), beta, want), lambda v: float(v) < 1e-12))
    # a preference matrix (non-transitive: rock-paper-scissors)
    M = [[0.5, 0.9, 0.2], [0.1, 0.5, 0.7], [0.8, 0.3, 0.5]]
    for beta in (0.2, 1.0):
        want = ref.nash([0.2, 0.3, 0.5], M, beta)
        out.append(_ok(G_, f"nash_equilibrium(a cyclic preference matrix, beta={beta})",
                       lambda beta=beta: nash_equilibrium(Question([0.2, 0.3, 0.5], preference=M), beta),
                       lambda v, want=want: ref.close(_pi(v), want, 0, 1e-9)))
    out.append(_ok(G_, "nash_residual at pi_ref (not the equilibrium) is the documented max |pi - pi_ref e^{P/beta}/Z|",
                   lambda: nash_residual(Question([0.3, 0.7], [1.0, 0.0]), 0.5, [0.3, 0.7]),
                   lambda v: ref.close(v, abs(0.3 - ref.log_pool([0.3, 0.7], [0.5 * 0.3 + 0.7, 0.5 * 0.7], 0.5)[0]), 1e-12)))
    for lab, call, names in [
        ("nash_residual(pi of the wrong length)", lambda: nash_residual(Question([0.3, 0.7], [1.0, 0.0]), 0.5, [1.0]), ["pi"]),
        ("nash_residual(pi summing to 1.2)", lambda: nash_residual(Question([0.3, 0.7], [1.0, 0.0]), 0.5, [0.5, 0.7]), ["pi"]),
        ("nash_residual(beta=1e-310)", lambda: nash_residual(Question([0.3, 0.7], [1.0, 0.0]), 1e-310, [0.3, 0.7]), ["beta"]),
        ("nash_residual(beta=-1)", lambda: nash_residual(Question([0.3, 0.7], [1.0, 0.0]), -1.0, [0.3, 0.7]), ["beta"]),
        ("nash_equilibrium(beta='0.5')", lambda: nash_equilibrium(Question([0.3, 0.7], [1.0, 0.0]), "0.5"), ["beta"]),
        ("log_pooling(pi_ref and rewards of different lengths)", lambda: log_pooling([0.3, 0.7], [1.0, 0.0, 2.0], 0.5),
         ["rewards"]),
        ("log_pooling(beta=inf)", lambda: log_pooling([0.3, 0.7], [1.0, 0.0], INF), ["beta"]),
        ("log_pooling(rewards with a NaN)", lambda: log_pooling([0.3, 0.7], [1.0, math.nan], 0.5), ["rewards"]),
        ("rlhf_optimum(a preference-matrix question) (no rewards)",
         lambda: rlhf_optimum(Question([0.3, 0.7], preference=[[0.5, 0.8], [0.2, 0.5]]), 0.5), ["preference"]),
    ]:
        out.append(_err(G_, lab, call, names))
    return out


# ---------------------------------------------------------------- the kl module
KL_ROWS = [  # (estimator, L, V)
    ("k1", None, None), ("k2", None, None), ("k3", None, None), ("k3_ratio", None, None), ("abs", None, None),
    ("k3", 20.0, 10.0), ("k2", None, 10.0), ("k3", 3.0, None), ("k1", 5.0, 2.0), ("k3_plus", None, 4.0),
]
LRS = [-30.0, -4.2, -0.7, -1e-9, 0.0, 3e-6, 0.9, 2.5, 12.0, 45.0]


def _kl_close(got, want, scale=1.0):
    """KL values: 1e-12 relative, plus two roundings of terms of size ``|lr|`` (4.5e-16 |lr|): near ``lr = 0`` k3's
    value ``lr^2/2`` is a difference of such terms in any double computation without a series (round fifteen's
    argument)."""
    g = np.asarray(got, float).ravel()
    for a, b, x in zip(g, want, LRS):
        if not abs(a - b) <= 1e-12 * abs(b) + scale * 4.5e-16 * abs(x) + 1e-300:
            return f"at lr={x}: got {a!r}, reference {b!r}"
    return True if len(g) == len(want) else f"{len(g)} values for {len(want)} log-ratios"


def kl_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory import kl as K

    G_ = "API: the kl module's values, coefficients and shifts with clamps against SPEC section 8"
    out = []
    lr = np.array(LRS)
    for est, L, V in KL_ROWS:
        okw = dict(beta=0.7, kl_estimator=est, kl_log_ratio_clamp=L, kl_value_clamp=V)
        want_v = [ref.kl_value(est, x, L, V) for x in LRS]
        tag = f"{est} L={L} V={V}"
        out.append(_ok(G_, f"estimator_value({tag}) at lr={LRS}", lambda okw=okw: K.estimator_value(Objective(**okw), lr),
                       lambda v, w=want_v: _kl_close(v, w)))
        out.append(_ok(G_, f"flow_value({tag}) = estimator_value", lambda okw=okw: K.flow_value(Objective(**okw), lr),
                       lambda v, w=want_v: _kl_close(v, w)))
        out.append(_ok(G_, f"value_shift({tag}) = 0.7 value", lambda okw=okw: K.value_shift(Objective(**okw), lr),
                       lambda v, w=want_v: _kl_close(v, [0.7 * x for x in w], 0.7)))
        # the coefficient, away from the clamps' edges (every lr above is off them)
        want_c = [ref.kl_coefficient_loss(est, x, L, V) for x in LRS]

        def chk_c(v, w=want_c, est=est):
            v = np.asarray(v, float)
            w = np.asarray(w, float)
            keep = [i for i in range(len(LRS)) if not (est == "abs" and LRS[i] == 0.0)]
            # constants cancel in g - E g: compare differences against lr = 0.9 (off every clamp and kink)
            return ref.close((v - v[6])[keep], (w - w[6])[keep], 1e-12, 1e-15)
        out.append(_ok(G_, f"coefficient({tag}) in the loss, up to a constant", lambda okw=okw: K.coefficient(Objective(**okw), lr),
                       chk_c))
    for est in ("k1", "k2", "k3"):
        w = [ref.kl_value(est, x) for x in LRS]
        out.append(_ok(G_, f"coefficient({est}, placement 'advantage') = the value (detached)",
                       lambda est=est: K.coefficient(Objective(beta=0.7, kl_estimator=est, kl_placement="advantage"), lr),
                       lambda v, w=w: ref.close(np.asarray(v) - np.asarray(v)[4], np.asarray(w) - w[4], 1e-12, 1e-15)))
    out.append(_ok(G_, "estimator_value(k3) at lr=-inf is +inf and at +inf is +inf (documented limits)",
                   lambda: K.estimator_value(Objective(beta=1.0, kl_estimator="k3"), [-INF, INF]),
                   lambda v: bool(np.all(np.asarray(v) == INF))))
    out.append(_ok(G_, "estimator_value(k3, V=10) at lr=-inf is the clamp 10",
                   lambda: K.estimator_value(Objective(beta=1.0, kl_estimator="k3", kl_value_clamp=10.0), [-INF]),
                   lambda v: ref.close(v, [10.0], 0)))
    out.append(_ok(G_, "estimator_value(k1) at lr=+-inf is lr itself",
                   lambda: K.estimator_value(Objective(beta=1.0, kl_estimator="k1"), [-INF, INF]),
                   lambda v: list(np.asarray(v)) == [-INF, INF]))
    out.append(_ok(G_, "discontinuities(k3, L=20, V=10)[0]: the value clamp's lower edge, e^{-lr} + lr - 1 = 10 with lr < 0 (docs: e^{-lr} = 13.611)",
                   lambda: K.discontinuities(Objective(beta=0.001, kl_estimator="k3", kl_log_ratio_clamp=20.0, kl_value_clamp=10.0)),
                   lambda v: ref.close(float(v[0]), _k3_edge(10.0), 1e-9)))
    for lab, call, names in [
        ("estimator_value(lr with a NaN)", lambda: K.estimator_value(Objective(beta=1.0, kl_estimator="k3"), [0.1, math.nan]),
         ["lr"]),
        ("coefficient(placement 'reward') (documented: no coefficient)",
         lambda: K.coefficient(Objective(beta=1.0, kl_estimator="k1", kl_placement="reward"), [0.1]), ["reward"]),
        ("value_slope(lr='0.5' a string)", lambda: K.value_slope(Objective(beta=1.0, kl_estimator="k3"), "0.5"), ["lr"]),
        ("estimator_value(obj=None)", lambda: K.estimator_value(None, [0.1]), ["obj"]),
        ("effective_penalty('kl3', 'loss', None, None)", lambda: K.effective_penalty("kl3", "loss", None, None), ["kl3"]),
        ("effective_penalty('k3', 'losses', None, None)", lambda: K.effective_penalty("k3", "losses", None, None),
         ["losses"]),
        ("effective_penalty('k3', 'loss', -1, None) (a negative clamp)", lambda: K.effective_penalty("k3", "loss", -1.0, None),
         ["-1"]),
        ("Objective(kl_value_clamp=-3)", lambda: Objective(beta=1.0, kl_estimator="k3", kl_value_clamp=-3.0), ["kl_value_clamp"]),
        ("Objective(kl_log_ratio_clamp=nan)", lambda: Objective(beta=1.0, kl_estimator="k3", kl_log_ratio_clamp=math.nan),
         ["kl_log_ratio_clamp"]),
        ("Objective(kl_placement='advantage', kl_estimator='k5')",
         lambda: Objective(beta=1.0, kl_placement="advantage", kl_estimator="k5"), ["k5"]),
    ]:
        out.append(_err(G_, lab, call, names))
    for est, pl, L, V, want in [("k3", "loss", None, None, "reverse"), ("k2", "loss", None, None, "direct"),
                                ("k3_ratio", "loss", None, None, "direct"), ("k1", "advantage", None, None, "direct")]:
        out.append(_ok(G_, f"effective_penalty({est!r}, {pl!r}) names the note's {want} penalty",
                       lambda est=est, pl=pl, L=L, V=V: K.effective_penalty(est, pl, L, V),
                       lambda v, want=want: want in str(v)))
    return out


# ---------------------------------------------------------------- callables no earlier round named
def unnamed_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy
    from grpo_theory.advantage import reinforce_pp_expectations, rloo_expectations
    from grpo_theory.preference import pooled_expectations
    from grpo_theory.proximal import proximal_map
    from grpo_theory.solvers.batch import stationary_policy_batch
    from grpo_theory.solvers.collapse import may_collapse
    from grpo_theory.solvers.full_space import full_space_flow
    from grpo_theory.solvers.token_weights import answer_weights
    from grpo_theory.predict.response import binary_rewards

    G_ = "API: callables no earlier round named, against the reference"
    out = []
    v = np.array([0.0, 0.5, 2.0])
    for w, G in (([0.2, 0.5, 0.3], 4), ([0.6, 0.1, 0.3], 9), ([0.01, 0.01, 0.98], 2), ([0.3, 0.3, 0.4], INF)):
        mu = float(np.dot(w, v))
        sd = math.sqrt(float(np.dot(w, (v - mu) ** 2)))
        f = 1.0 if G == INF else math.sqrt((G - 1) / G)
        want = f * (v - mu) / sd
        if G != INF:
            # the same from the enumeration: P_G of REINFORCE++ for three outputs with these rewards and law w
            want_enum = ref.count_pg(list(w), list(v), G, "rpp")
            assert np.allclose(want, want_enum, rtol=1e-9, atol=1e-12), (want, want_enum)
        out.append(_ok(G_, f"reinforce_pp_expectations(levels {v.tolist()}, w={w}, G={G}) = sqrt((G-1)/G)(v - mu)/sigma",
                       lambda w=w, G=G: reinforce_pp_expectations(v, np.log([w]), Objective(beta=1.0, group_size=G,
                                                                                           advantage="reinforce_pp")),
                       lambda r, want=want: ref.close(np.asarray(r).ravel(), want, 1e-10, 1e-13)))
        out.append(_ok(G_, f"rloo_expectations(levels {v.tolist()}, w={w}, G={G}) = v - mu",
                       lambda w=w, G=G: rloo_expectations(v, np.log([w]), Objective(beta=1.0, group_size=G, advantage="rloo")),
                       lambda r, mu=mu: ref.close(np.asarray(r).ravel(), v - mu, 1e-12, 1e-15)))
    for lab, call, names in [
        ("reinforce_pp_expectations(part='Mean')",
         lambda: reinforce_pp_expectations(v, np.log([[0.2, 0.5, 0.3]]), Objective(beta=1.0, group_size=4,
                                                                                   advantage="reinforce_pp"), part="Mean"),
         ["Mean"]),
        ("rloo_expectations(levels not increasing [2, 0.5, 0])",
         lambda: rloo_expectations(np.array([2.0, 0.5, 0.0]), np.log([[0.2, 0.5, 0.3]]),
                                   Objective(beta=1.0, group_size=4, advantage="rloo")), ["v"]),
        ("rloo_expectations(log_w of the wrong length)",
         lambda: rloo_expectations(v, np.log([[0.5, 0.5]]), Objective(beta=1.0, group_size=4, advantage="rloo")), ["log_w"]),
        ("rloo_expectations(max_count_vectors=-5, part='positive')",
         lambda: rloo_expectations(v, np.log([[0.2, 0.5, 0.3]]), Objective(beta=1.0, group_size=4, advantage="rloo"),
                                   part="positive", max_count_vectors=-5), ["max_count_vectors"]),
    ]:
        out.append(_err(G_, lab, call, names))
    # pooled_expectations: a preference matrix at G = 2: E(w) = (2M - 1) w (ddof 0), / sqrt 2 (ddof 1)
    M = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]])
    qm = Question([0.2, 0.3, 0.5], preference=M)
    w = np.array([0.2, 0.3, 0.5])
    out.append(_ok(G_, "pooled_expectations(a preference matrix, G=2, ddof 0) = (2M - 1) w",
                   lambda: pooled_expectations(qm, Objective(beta=1.0), np.log(w)),
                   lambda r: ref.close(np.asarray(r).ravel(), (2 * M - 1) @ w, 1e-12, 1e-15)))
    out.append(_ok(G_, "pooled_expectations(a preference matrix, G=2, ddof 1) = (2M - 1) w / sqrt 2",
                   lambda: pooled_expectations(qm, Objective(beta=1.0, std_ddof=1), np.log(w)),
                   lambda r: ref.close(np.asarray(r).ravel(), (2 * M - 1) @ w / math.sqrt(2), 1e-12, 1e-15)))
    out.append(_err(G_, "pooled_expectations(a preference matrix at G=4) (documented: refused)",
                    lambda: pooled_expectations(qm, Objective(beta=1.0, group_size=4), np.log(w)), ["preference"]))
    out.append(_err(G_, "pooled_expectations(a preference matrix, std_eps=0.1) (documented: refused)",
                    lambda: pooled_expectations(qm, Objective(beta=1.0, std_eps=0.1), np.log(w)), ["eps"]))
    out.append(_err(G_, "pooled_expectations(log_w not a log-law: log([0.5, 0.5, 0.5]))",
                    lambda: pooled_expectations(qm, Objective(beta=1.0), np.log([0.5, 0.5, 0.5])), ["log_w"]))
    # stationary_policy_batch against the closed forms and the bisection
    qs, objs, wants = [], [], []
    for p, beta, G in ((0.3, 0.5, 2), (0.1, 0.05, 2), (0.7, 1.5, INF), (0.45, 0.2, 7), (0.2, 0.9, 3)):
        qs.append(Question([p, 1 - p], [1.0, 0.0]))
        objs.append(Objective(beta=beta, group_size=G))
        wants.append((lambda p=p, beta=beta, G=G: ref.eq14(p, beta) if G == 2 else
                      (ref.eq15(p, beta) if G == INF else ref.rest_bisect(p, beta, G))))
    for i in range(len(qs)):
        out.append(_ok(G_, f"stationary_policy_batch(5 binary pairs)[{i}] = its closed form / bisection",
                       lambda: stationary_policy_batch(qs, objs),
                       lambda r, i=i: ref.close(_pi(r[i])[0], wants[i](), 1e-7)))
    q3 = Question([0.2, 0.3, 0.5], [1.0, 0.5, 0.0])
    for beta, G in ((0.5, 8), (2.0, 8), (0.3, 3)):
        def chk3(r, beta=beta, G=G):
            pi = _pi(r[0])
            res = ref.eq11_residual(pi, [0.2, 0.3, 0.5], ref.count_pg(list(pi), [1.0, 0.5, 0.0], G), beta)
            return True if res < 1e-8 else f"Eq. 11 residual {res:.3g} at {pi}"
        out.append(_ok(G_, f"stationary_policy_batch(3 outputs, beta={beta}, G={G}): Eq. 11 with the enumerated P_G",
                       lambda beta=beta, G=G: stationary_policy_batch([q3], [Objective(beta=beta, group_size=G)]), chk3))
    for lab, call, names in [
        ("stationary_policy_batch(2 questions, 1 objective)",
         lambda: stationary_policy_batch([q3, q3], [Objective(beta=0.5)]), ["objectives"]),
        ("stationary_policy_batch(a question given as a list)",
         lambda: stationary_policy_batch([[0.3, 0.7]], [Objective(beta=0.5)]), ["question"]),
        ("stationary_policy_batch(objectives=None)", lambda: stationary_policy_batch([q3], None), ["objectives"]),
    ]:
        out.append(_err(G_, lab, call, names))
    out.append(_either(G_, "stationary_policy_batch([], []): an empty list, or refused naming questions",
                       lambda: stationary_policy_batch([], []), lambda r: list(r) == [], ["questions"]))
    # full_space_flow: the end at t = 10^4 is Eq. 14 (two outputs), and with pooled outputs proportional to pi_ref
    for p, beta in ((0.3, 1.0), (0.08, 0.4), (0.9, 0.05)):
        out.append(_ok(G_, f"full_space_flow(binary p={p} beta={beta}) = Eq. 14",
                       lambda p=p, beta=beta: full_space_flow(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta)),
                       lambda r, p=p, beta=beta: ref.close(np.asarray(r)[0], ref.eq14(p, beta), 0, 1e-7)))
    pr4 = [0.1, 0.2, 0.3, 0.4]
    x4 = ref.eq14(0.3, 0.5)
    out.append(_ok(G_, "full_space_flow(4 outputs, rewards [1, 1, 0, 0], G=2, beta=0.5): class a = Eq. 14 at 0.3, "
                       "within a class proportional to pi_ref",
                   lambda: full_space_flow(Question(pr4, [1.0, 1.0, 0.0, 0.0]), Objective(beta=0.5)),
                   lambda r: ref.close(r, [x4 / 3, 2 * x4 / 3, (1 - x4) * 3 / 7, (1 - x4) * 4 / 7], 0, 1e-7)))
    out.append(_ok(G_, "full_space_flow(method='euler', lr=0.05, steps=400) = Euler on the logits (binary)",
                   lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.5), method="euler",
                                           lr=0.05, steps=400),
                   lambda r: ref.close(np.asarray(r)[0], _euler2(0.3, 0.5, 0.05, 400), 0, 1e-10)))
    for lab, call, names in [
        ("full_space_flow(method='rk4')", lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.5),
                                                                  method="rk4"), ["rk4"]),
        ("full_space_flow(pi0 summing to 0.5)", lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.5),
                                                                       [0.25, 0.25]), ["pi0"]),
        ("full_space_flow(t_max=-5)", lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.5),
                                                              t_max=-5.0), ["t_max"]),
        ("full_space_flow(method='euler', steps=-1)", lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]),
                                                                              Objective(beta=0.5), method="euler", steps=-1),
         ["steps"]),
        ("full_space_flow(method='euler', lr=nan)", lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]),
                                                                            Objective(beta=0.5), method="euler", lr=math.nan),
         ["lr"]),
        ("full_space_flow(method='euler', steps=10**12) (would not finish)",
         lambda: full_space_flow(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.5), method="euler", steps=10 ** 12),
         ["steps"]),
    ]:
        out.append(_err(G_, lab, call, names))
    # answer_weights: docs example and one more: grpo answer_mean P^w = P_2/|o|, W = E[1/|o_1|]...
    qa = Question([0.3, 0.7], [1.0, 0.0], answers=["ABC", "D"])
    out.append(_ok(G_, "answer_weights(answers 'ABC', 'D', loss_type grpo, pi=[0.3, 0.7]): P^w = P_2/|o| = [0.7/3, -0.3]",
                   lambda: answer_weights(qa, Objective(beta=0.1, level="token", loss_type="grpo"), [0.3, 0.7]),
                   lambda r: ref.close(np.asarray(r[0]), [0.7 / 3, -0.3], 1e-12, 1e-15)))
    out.append(_err(G_, "answer_weights(pi of 3 entries for 2 answers)",
                    lambda: answer_weights(qa, Objective(beta=0.1, level="token"), [0.3, 0.3, 0.4]), ["pi"]))
    # proximal_map: Eq. 14's point is a fixed point; a step of the direct penalty from pi_ref
    def prox_fixed():
        s = proximal_map(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.8, group_size=2))
        x = ref.eq14(0.3, 0.8)
        return s(np.array([x, 1 - x]))
    out.append(_ok(G_, "proximal_map(beta=0.8, G=2) leaves Eq. 14's point where it is",
                   prox_fixed, lambda r: ref.close(np.asarray(r)[0], ref.eq14(0.3, 0.8), 0, 1e-10)))
    for lab, call, names in [
        ("proximal_map(beta=0) (documented: refused)", lambda: proximal_map(Question([0.3, 0.7], [1.0, 0.0]),
                                                                            Objective(beta=0.0)), ["beta"]),
        ("proximal_map step(pi_prev of the wrong length)",
         lambda: proximal_map(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.8))(np.array([0.2, 0.3, 0.5])),
         ["pi"]),
        ("proximal_map step(pi_prev with a NaN)",
         lambda: proximal_map(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.8))(np.array([math.nan, 1.0])),
         ["pi"]),
    ]:
        out.append(_err(G_, lab, call, names))
    for lab, kw, want in [("the note's reverse penalty at G=2", dict(beta=0.5), False),
                          ("direct at G=inf (|P_G| unbounded)", dict(beta=0.5, group_size=INF, penalty="direct"), True),
                          ("k2 with a value clamp", dict(beta=0.5, kl_estimator="k2", kl_value_clamp=5.0), True),
                          ("tie filtering", dict(beta=0.5, group_size=4, filter_ties=True), True)]:
        out.append(_ok(G_, f"may_collapse({lab}) is {want} (its documented rule)",
                       lambda kw=kw: may_collapse(Objective(**kw)), lambda r, want=want: bool(r) is want))
    out.append(_ok(G_, "binary_rewards([2, -1]) = [2.0, -1.0]", lambda: binary_rewards([2, -1]),
                   lambda r: list(r) == [2.0, -1.0] and all(type(x) is float for x in r)))
    for lab, arg, names in [("[0, 1] (the first not the larger)", [0, 1], ["rewards"]),
                            ("[1, 1] (a tie)", [1.0, 1.0], ["rewards"]),
                            ("[1, 0, 0] (three)", [1, 0, 0], ["rewards"]),
                            ("[inf, 0]", [INF, 0.0], ["rewards"]), ("'10'", "10", ["rewards"])]:
        out.append(_err(G_, f"binary_rewards({lab})", lambda arg=arg: binary_rewards(arg), names))
    return out


def _k3_edge(V):
    """The ``lr < 0`` where k3's value reaches ``V``: bisection of ``e^{-lr} + lr - 1 - V``."""
    return _bisect01(lambda lr: math.expm1(-lr) + lr - V, -50.0, 0.0)


def _euler2(p, beta, lr, steps):
    """Euler on both output logits of a binary question (G = 2, reverse): dz_o = lr pi(o) (g(o) - E g)."""
    za, zb = math.log(p), math.log(1 - p)
    for _ in range(steps):
        m = max(za, zb)
        ea, eb = math.exp(za - m), math.exp(zb - m)
        x = ea / (ea + eb)
        Pa, Pb = 1 - x, -x                      # P_2 = pi(b), -pi(a)
        ga = Pa - beta * (1 - p / x)
        gb = Pb - beta * (1 - (1 - p) / (1 - x))
        eg = x * ga + (1 - x) * gb
        za += lr * x * (ga - eg)
        zb += lr * (1 - x) * (gb - eg)
    m = max(za, zb)
    return math.exp(za - m) / (math.exp(za - m) + math.exp(zb - m))


# ---------------------------------------------------------------- predict and its helpers at new counts
def predict_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts, unbiased_pass_at_k
    from grpo_theory.predict.intervals import binomial_interval

    G_ = "API: predict and its helpers at new counts"
    out = []

    def row_check(n, c, beta, method="jeffreys", level=0.95, k=(1, 4)):
        def chk(v):
            r = v.table.iloc[0]
            bad = ref.close(r["p_ref"], c / n, 1e-15)
            if bad is not True:
                return f"p_ref: {bad}"
            if 0 < c < n:
                lo, hi = ref.jeffreys(c, n, level) if method == "jeffreys" else ref.wilson(c, n, level)
                bad = ref.close([r["p_ref_lo"], r["p_ref_hi"]], [lo, hi], 1e-9, 1e-15)
                if bad is not True:
                    return f"interval: {bad}"
                x = ref.eq14(c / n, beta)
                bad = ref.close(r["pred"], x, 1e-9)
                if bad is not True:
                    return f"pred: {bad}"
            for kk in k:
                want = ref.pass_at_k(n, c, kk)
                if want is None:
                    continue
                bad = ref.close(float(r[f"pass@{kk}_before"]), want, 1e-9, 1e-15)
                if bad is not True:
                    return f"pass@{kk}: {bad}"
            return True
        return chk
    for n, c, beta in ((17, 5, 0.37), (2, 1, 0.05), (400, 3, 1.7), (12345, 12000, 0.25), (64, 32, 8.0), (9, 8, 0.02)):
        out.append(_ok(G_, f"predict one prompt n={n} correct={c} beta={beta}: p_ref, Jeffreys, Eq. 14, pass@1/4",
                       lambda n=n, c=c, beta=beta: predict(samples_from_counts([n], [c]), Objective(beta=beta), k=(1, 4)),
                       row_check(n, c, beta)))
    for n, c, level in ((20, 7, 0.8), (300, 150, 0.99)):
        out.append(_ok(G_, f"predict n={n} correct={c} interval='wilson' level={level}",
                       lambda n=n, c=c, level=level: predict(samples_from_counts([n], [c]), Objective(beta=0.5),
                                                             interval="wilson", level=level, k=(1, 4)),
                       row_check(n, c, 0.5, "wilson", level)))
    for n, c, k in ((30, 4, 7), (100, 99, 50), (8, 1, 8), (2 ** 30, 3, 1000)):
        want = ref.pass_at_k(n, c, k)
        out.append(_ok(G_, f"unbiased_pass_at_k(n={n}, c={c}, k={k})", lambda n=n, c=c, k=k: unbiased_pass_at_k(n, c, k),
                       lambda v, want=want: ref.close(float(np.asarray(v).ravel()[0]), want, 1e-9, 1e-15)))
    for c, n, method, level in ((0, 25, "jeffreys", 0.9), (13, 40, "wilson", 0.5), (40, 40, "wilson", 0.95),
                                (7, 10, "jeffreys", 0.999)):
        if c == 0:
            want = (0.0, 1 - (1 - level) ** (1 / n))          # docs/predict.md: the one-sided bound, both methods
        elif c == n:
            want = ((1 - level) ** (1 / n), 1.0)              # and its mirror at correct = n
        else:
            want = ref.jeffreys(c, n, level) if method == "jeffreys" else ref.wilson(c, n, level)
        out.append(_ok(G_, f"binomial_interval({c}, {n}, method={method!r}, level={level})",
                       lambda c=c, n=n, method=method, level=level: binomial_interval(c, n, level=level, method=method),
                       lambda v, want=want: ref.close([float(np.asarray(v[0]).ravel()[0]),
                                                       float(np.asarray(v[1]).ravel()[0])], want, 1e-9, 1e-15)))
    # several prompts with the direct penalty and shift: pred = G=2 direct form / Eq. 14 at gamma 1/2
    ns, cs = [10, 20, 30], [2, 10, 27]
    out.append(_ok(G_, "predict 3 prompts penalty='direct' beta=0.4: pred = logit p + 1/beta",
                   lambda: predict(samples_from_counts(ns, cs, ["a", "b", "c"]), Objective(beta=0.4, penalty="direct")),
                   lambda v: ref.close(v.table["pred"].to_numpy(float), [ref.direct2(c / n, 0.4) for n, c in zip(ns, cs)],
                                       1e-9)))
    out.append(_ok(G_, "predict 3 prompts normalization='shift' beta=0.4 G=2: Eq. 14 at gamma = 1/2",
                   lambda: predict(samples_from_counts(ns, cs, ["a", "b", "c"]), Objective(beta=0.4, normalization="shift")),
                   lambda v: ref.close(v.table["pred"].to_numpy(float), [ref.eq14(c / n, 0.4, 0.5) for n, c in zip(ns, cs)],
                                       1e-9)))
    out.append(_ok(G_, "predict 3 prompts G=inf beta=0.4: Eq. 15",
                   lambda: predict(samples_from_counts(ns, cs, ["a", "b", "c"]), Objective(beta=0.4, group_size=INF)),
                   lambda v: ref.close(v.table["pred"].to_numpy(float), [ref.eq15(c / n, 0.4) for n, c in zip(ns, cs)],
                                       1e-9)))
    for G in (5, 16):
        out.append(_ok(G_, f"predict 3 prompts G={G} beta=0.4: the bisection",
                       lambda G=G: predict(samples_from_counts(ns, cs, ["a", "b", "c"]), Objective(beta=0.4, group_size=G)),
                       lambda v, G=G: ref.close(v.table["pred"].to_numpy(float),
                                                [ref.rest_bisect(c / n, 0.4, G) for n, c in zip(ns, cs)], 1e-7)))
    for lab, call, names in [
        ("samples_from_counts(n and correct of different lengths)", lambda: samples_from_counts([4, 5], [1]), ["correct"]),
        ("samples_from_counts(duplicate prompt ids)", lambda: samples_from_counts([4, 5], [1, 2], ["a", "a"]), ["a"]),
        ("samples_from_counts(correct=-1)", lambda: samples_from_counts([4], [-1]), ["-1"]),
        ("samples_from_counts(n=True)", lambda: samples_from_counts([True], [0]), ["n"]),
        ("samples_from_counts([], [])", lambda: predict(samples_from_counts([], []), Objective(beta=0.5)), ["prompt"]),
        ("predict(level=0.0)", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), level=0.0), ["level"]),
        ("predict(interval=None)", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), interval=None),
         ["interval"]),
        ("binomial_interval(5, 4) (c > n)", lambda: binomial_interval(5, 4), ["5"]),
        ("binomial_interval(0, 0) (n = 0)", lambda: binomial_interval(0, 0), ["n"]),
        ("binomial_interval(2.5, 10)", lambda: binomial_interval(2.5, 10), ["2.5"]),
        ("unbiased_pass_at_k(n=9, c=3, k=10) (k > n)", lambda: unbiased_pass_at_k(9, 3, 10), ["k"]),
        ("unbiased_pass_at_k(n=-1, c=0, k=1)", lambda: unbiased_pass_at_k(-1, 0, 1), ["-1"]),
    ]:
        out.append(_err(G_, lab, call, names))
    x4 = ref.eq14(0.25, 0.5)

    def big_k(v):
        r = v.table.iloc[0]
        before = r["pass@1000000000_before"]
        if not (before is None or before == "" or (isinstance(before, float) and math.isnan(before))):
            return f"pass@k_before {before!r} for k > n (documented: empty)"
        return ref.close(float(r["pass@1000000000_after"]), -math.expm1(1e9 * math.log1p(-x4)), 1e-12)
    out.append(_ok(G_, "predict(k=(10**9,)) on n=4: pass@k_before empty (k > n), pass@k_after = 1 - (1 - pred)^k",
                   lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), k=(10 ** 9,)), big_k))
    out.append(_either(G_, "predict(k=(3, 3)) (a repeated k): one pass@3 column, or refused naming k",
                       lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), k=(3, 3)),
                       lambda v: ref.close(float(v.table.iloc[0]["pass@3_before"]), ref.pass_at_k(4, 1, 3), 1e-12),
                       ["k"]))
    return out


# ---------------------------------------------------------------- types a scientist passes, new ones
def type_cases() -> list[dict]:
    import pandas as pd

    from grpo_theory import Objective, Question, closed_form as cf, stationary_policy

    G_ = "API: numeric types and containers not tried before"
    out = []
    x = ref.eq14(0.25, 0.5)
    for lab, pi_ref in [("a tuple of numpy float32 scalars (np.float32(0.25), np.float32(0.75))",
                         (np.float32(0.25), np.float32(0.75))),
                        ("a pandas Series with a MultiIndex", pd.Series([0.25, 0.75],
                                                                        index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]))),
                        ("an array.array('d')", __import__("array").array("d", [0.25, 0.75])),
                        ("a memoryview of a float64 array", memoryview(np.array([0.25, 0.75]))),
                        ("a list of Fractions (1/4, 3/4)", [Fraction(1, 4), Fraction(3, 4)]),
                        ("a big-endian float64 array", np.array([0.25, 0.75], dtype=">f8")),
                        ("a 1x2 numpy matrix", np.matrix([[0.25, 0.75]]))]:
        out.append(_either(G_, f"Question pi_ref as {lab}: Eq. 14 at p = 0.25, or refused naming pi_ref",
                           lambda pi_ref=pi_ref: stationary_policy(Question(pi_ref, [1.0, 0.0]), Objective(beta=0.5)),
                           lambda v: ref.close(_pi(v)[0], x, 1e-8), ["pi_ref"]))
    for lab, rew in [("a pandas nullable Float64 Series without NA", pd.Series([1.0, 0.0], dtype="Float64")),
                     ("bools [True, False]", [True, False]), ("a numpy bool array", np.array([True, False])),
                     ("a float128 / longdouble array", np.array([1.0, 0.0], dtype=np.longdouble)),
                     ("Decimals", [Decimal("1"), Decimal("0")]), ("a range(1, -1, -1)", range(1, -1, -1))]:
        out.append(_either(G_, f"Question rewards as {lab}: Eq. 14, or refused naming rewards",
                           lambda rew=rew: stationary_policy(Question([0.25, 0.75], rew), Objective(beta=0.5)),
                           lambda v: ref.close(_pi(v)[0], x, 1e-8), ["rewards"]))
    for lab, call, names in [
        ("Question pi_ref a string '0.25 0.75'", lambda: Question("0.25 0.75", [1.0, 0.0]), ["pi_ref"]),
        ("Question pi_ref a dict {'a': 0.25, 'b': 0.75}", lambda: Question({"a": 0.25, "b": 0.75}, [1.0, 0.0]), ["pi_ref"]),
        ("Question pi_ref of bytes", lambda: Question(b"\x01\x02", [1.0, 0.0]), ["pi_ref"]),
        ("Question rewards a pandas Timestamp pair", lambda: Question([0.25, 0.75], [pd.Timestamp(0), pd.Timestamp(1)]),
         ["rewards"]),
        ("Question rewards a timedelta64 array", lambda: Question([0.25, 0.75], np.array([1, 0], "timedelta64[s]")),
         ["rewards"]),
        ("Question rewards a nested list [[1], [0]]", lambda: Question([0.25, 0.75], [[1.0], [0.0]]), ["rewards"]),
        ("Question labels of the wrong count", lambda: Question([0.25, 0.75], [1.0, 0.0], labels=["a"]), ["labels"]),
        ("Question labels repeated ['a', 'a']", lambda: Question([0.25, 0.75], [1.0, 0.0], labels=["a", "a"]), ["labels"]),
        ("Question with rewards and a preference matrix at once",
         lambda: Question([0.25, 0.75], [1.0, 0.0], preference=[[0.5, 1.0], [0.0, 0.5]]), ["preference"]),
        ("Question reward_probs rows not summing to 1",
         lambda: Question([0.25, 0.75], reward_levels=[0, 1], reward_probs=[[0.5, 0.6], [0.5, 0.5]]), ["reward_probs"]),
        ("Question reward_levels repeated [0, 0]",
         lambda: Question([0.25, 0.75], reward_levels=[0, 0], reward_probs=[[0.5, 0.5], [0.5, 0.5]]), ["reward_levels"]),
        ("Question preference matrix with M + M^T != 1",
         lambda: Question([0.25, 0.75], preference=[[0.5, 0.9], [0.9, 0.5]]), ["preference"]),
        ("Question preference of shape 3x3 for 2 outputs",
         lambda: Question([0.25, 0.75], preference=np.full((3, 3), 0.5)), ["preference"]),
        ("Objective(beta=np.datetime64('2020-01-01'))", lambda: Objective(beta=np.datetime64("2020-01-01")), ["beta"]),
        ("Objective(beta={'value': 0.5})", lambda: Objective(beta={"value": 0.5}), ["beta"]),
        ("Objective(group_size='8')", lambda: Objective(beta=0.5, group_size="8"), ["group_size"]),
        ("Objective(group_size=0)", lambda: Objective(beta=0.5, group_size=0), ["group_size"]),
        ("Objective(group_size=-inf)", lambda: Objective(beta=0.5, group_size=-INF), ["group_size"]),
        ("Objective(std_ddof=3)", lambda: Objective(beta=0.5, std_ddof=3), ["std_ddof"]),
        ("Objective(std_eps=-1e-9)", lambda: Objective(beta=0.5, std_eps=-1e-9), ["std_eps"]),
        ("Objective(variance_eps='0.1') (a string)", lambda: Objective(beta=0.5, variance_eps="0.1"), ["variance_eps"]),
        ("Objective(penalty='KL')", lambda: Objective(beta=0.5, penalty="KL"), ["KL"]),
        ("Objective(normalization='batch')", lambda: Objective(beta=0.5, normalization="batch"), ["batch"]),
        ("Objective(level='Token')", lambda: Objective(beta=0.5, level="Token"), ["Token"]),
        ("Objective(loss_type='dr_grpo ')", lambda: Objective(beta=0.5, loss_type="dr_grpo "), ["dr_grpo "]),
        ("Objective(groups_per_batch=-2)", lambda: Objective(beta=0.5, groups_per_batch=-2), ["groups_per_batch"]),
        ("Objective(advantage='ppo')", lambda: Objective(beta=0.5, advantage="ppo"), ["ppo"]),
        ("Objective(filter_ties=2)", lambda: Objective(beta=0.5, filter_ties=2), ["filter_ties"]),
        ("Objective(entropy_coef=inf)", lambda: Objective(beta=0.5, entropy_coef=INF), ["entropy_coef"]),
        ("Objective(importance_level='seq')", lambda: Objective(beta=0.5, importance_level="seq"), ["seq"]),
        ("Objective(penalty='direct', kl_estimator='k3') (two answers to one question)",
         lambda: Objective(beta=0.5, penalty="direct", kl_estimator="k3"), ["penalty"]),
        ("binary_pairwise(p=[0.3, 1.2])", lambda: cf.binary_pairwise([0.3, 1.2], 0.5), ["pi_ref_a"]),
        ("binary_pairwise(p, beta=[0.5, -0.5])", lambda: cf.binary_pairwise(0.3, [0.5, -0.5]), ["beta"]),
        ("binary_pairwise(p of shape 3, beta of shape 2) (not broadcastable)",
         lambda: cf.binary_pairwise([0.1, 0.2, 0.3], [0.5, 0.6]), ["beta"]),
        ("binary_pairwise(gamma=-0.5)", lambda: cf.binary_pairwise(0.3, 0.5, -0.5), ["gamma"]),
        ("binary_large_group(beta=0)", lambda: cf.binary_large_group(0.3, 0.0), ["beta"]),
        ("binary_preference(x=0.3, G=1)", lambda: cf.binary_preference(0.3, 1), ["group_size"]),
        ("binary_preference(x=0.3, G=2.5)", lambda: cf.binary_preference(0.3, 2.5), ["group_size"]),
        ("binary_preference(x=1.5, G=4) (x outside [0, 1])", lambda: cf.binary_preference(1.5, 4), ["x"]),
        ("binary_shift_direct(group_size=0.5)", lambda: cf.binary_shift_direct(0.3, 0.5, 0.5), ["group_size"]),
        ("binary_rloo(reward_gap=-1)", lambda: cf.binary_rloo(0.3, 0.5, -1.0), ["reward_gap"]),
        ("binary_rloo(penalty='forward')", lambda: cf.binary_rloo(0.3, 0.5, 1.0, "forward"), ["forward"]),
        ("binary_entropy(entropy_coef=-1)", lambda: cf.binary_entropy(0.3, 0.5, -1.0), ["entropy_coef"]),
        ("binary_entropy(penalty='both')", lambda: cf.binary_entropy(0.3, 0.5, 0.1, penalty="both"), ["both"]),
        ("binary_pairwise_filtered(beta=nan)", lambda: cf.binary_pairwise_filtered(0.3, math.nan), ["beta"]),
        ("large_group_direct_h(x=0)", lambda: cf.large_group_direct_h(0.0, 0.3, 1.0), ["x"]),
        ("large_group_direct_turning_point(beta=-2)", lambda: cf.large_group_direct_turning_point(-2.0), ["beta"]),
    ]:
        out.append(_err(G_, lab, call, names))
    return out


# ---------------------------------------------------------------- stationary_policy / points arguments and warnings
def solver_argument_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationarity_residual, stationary_points, stationary_policy

    G_ = "API: stationary_points / stationarity_residual arguments at their documented edges"
    q = Question([0.3, 0.7], [1.0, 0.0])
    o = Objective(beta=0.5)
    out = []
    for lab, kw, names in [("n_grid=0", dict(n_grid=0), ["n_grid"]), ("n_grid=2.5", dict(n_grid=2.5), ["n_grid"]),
                           ("n_grid=10**10 (would not fit)", dict(n_grid=10 ** 10), ["n_grid"]),
                           ("n_starts=1.5", dict(n_starts=1.5), ["n_starts"]), ("n_starts=-4", dict(n_starts=-4), ["n_starts"]),
                           ("seed=2.5", dict(seed=2.5), ["seed"]), ("seed='abc'", dict(seed="abc"), ["seed"]),
                           ("box_budget=-1", dict(box_budget=-1), ["box_budget"]),
                           ("time_budget='10s'", dict(time_budget="10s"), ["time_budget"]),
                           ("time_budget=nan", dict(time_budget=math.nan), ["time_budget"]),
                           ("exhaustive='yes'", dict(exhaustive="yes"), ["exhaustive"])]:
        out.append(_err(G_, f"stationary_points({lab})", lambda kw=kw: stationary_points(q, o, **kw), names))
    x = ref.eq14(0.3, 0.5)
    for lab, kw in [("n_grid=3", dict(n_grid=3)), ("n_starts=1", dict(n_starts=1)), ("seed=2**32-1", dict(seed=2 ** 32 - 1)),
                    ("box_budget=1", dict(box_budget=1))]:
        out.append(_ok(G_, f"stationary_points(binary, {lab}): the one interior point is Eq. 14",
                       lambda kw=kw: stationary_points(q, o, **kw),
                       lambda v: ref.close([_pi(p.pi)[0] for p in v if not getattr(p, "boundary", False)], [x], 1e-8)))
    # stationarity_residual: 0 at Eq. 14, and the documented residual at pi_ref
    out.append(_ok(G_, "stationarity_residual at Eq. 14's point is below 1e-12",
                   lambda: stationarity_residual(q, o, [x, 1 - x]), lambda v: float(np.max(np.abs(v))) < 1e-12))
    r0 = ref.eq11_residual([0.3, 0.7], [0.3, 0.7], [0.7, -0.3], 0.5)
    out.append(_either(G_, f"stationarity_residual at pi_ref = {r0:.6g} (Eq. 11's max |pi (1 - (P - E P)/beta) - pi_ref|), "
                           "or a vector whose largest entry is it",
                       lambda: stationarity_residual(q, o, [0.3, 0.7]),
                       lambda v: ref.close(float(np.max(np.abs(v))), r0, 1e-9) is True or
                       f"residual {v} (Eq. 11 at pi_ref: {r0})", ["pi"]))
    for lab, pi, names in [("pi=[0.5, 0.6] (sums to 1.1)", [0.5, 0.6], ["pi"]), ("pi=[1.0] (wrong length)", [1.0], ["pi"]),
                           ("pi=[-0.1, 1.1]", [-0.1, 1.1], ["pi"]), ("pi=None", None, ["pi"])]:
        out.append(_err(G_, f"stationarity_residual({lab})", lambda pi=pi: stationarity_residual(q, o, pi), names))
    out.append(_either(G_, "stationary_policy(q, a dict {'beta': 0.5}) (a mapping of fields, as stationarity_residual takes)",
                       lambda: stationary_policy(q, {"beta": 0.5}), lambda v: ref.close(_pi(v)[0], x, 1e-8), ["obj"]))
    out.append(_err(G_, "stationary_policy(q, q) (a Question where the Objective goes)", lambda: stationary_policy(q, q), ["obj"]))
    return out


# ---------------------------------------------------------------- Monte Carlo, drawdowns, preferences, trees
def more_cases() -> list[dict]:
    from grpo_theory import Objective, Question, monte_carlo_preference
    from grpo_theory.convergence import largest_drop

    G_ = "API: monte_carlo_preference, largest_drop, pairwise preferences and trees at new inputs"
    out = []
    for i, (pi, rew, G, kw) in enumerate([
            ([0.2, 0.5, 0.3], [1.0, 0.2, 0.0], 4, {}), ([0.6, 0.4], [3.0, 1.0], 7, dict(normalization="shift")),
            ([0.1, 0.3, 0.6], [0.0, 1.0, 2.0], 3, dict(advantage="rloo")),
            ([0.25, 0.25, 0.5], [1.0, 0.0, 0.5], 5, dict(advantage="reinforce_pp")),
            ([0.5, 0.5], [1.0, 0.0], 6, dict(std_ddof=1, std_eps=0.1))]):
        kind = ("shift" if kw.get("normalization") == "shift" else
                {"rloo": "rloo", "reinforce_pp": "rpp"}.get(kw.get("advantage"), "scale"))
        want = ref.count_pg(pi, rew, G, kind, kw.get("std_ddof", 0), kw.get("std_eps", 0.0))

        def within(v, want=want):
            est, se = np.asarray(v[0]), np.asarray(v[1])
            bad = [(e, w, s_) for e, w, s_ in zip(est, want, se) if not abs(e - w) <= 5 * s_ + 1e-12]
            return True if not bad else f"beyond 5 standard errors (estimate, enumeration, se): {bad}"
        out.append(_ok(G_, f"monte_carlo_preference pi={pi} rewards={rew} G={G} {kw}: within 5 standard errors of the "
                           "enumeration", lambda pi=pi, rew=rew, G=G, kw=kw:
                       monte_carlo_preference(Question([1 / len(pi)] * len(pi), rew), Objective(beta=1.0, group_size=G, **kw),
                                              pi, n_groups=4000, seed=16), within))
    qm = Question([0.5, 0.5], [1.0, 0.0])
    for lab, call, names in [
        ("monte_carlo_preference(n_groups=1)", lambda: monte_carlo_preference(qm, Objective(beta=1.0, group_size=4), [0.5, 0.5],
                                                                              n_groups=1), ["n_groups"]),
        ("monte_carlo_preference(G=inf)", lambda: monte_carlo_preference(qm, Objective(beta=1.0, group_size=INF), [0.5, 0.5]),
         ["group_size"]),
        ("monte_carlo_preference(seed='x')", lambda: monte_carlo_preference(qm, Objective(beta=1.0, group_size=4), [0.5, 0.5],
                                                                           seed="x"), ["seed"]),
        ("monte_carlo_preference(q=None without a reward_sampler)",
         lambda: monte_carlo_preference(None, Objective(beta=1.0, group_size=4), [0.5, 0.5]), ["reward_sampler"]),
        ("monte_carlo_preference(n_groups=10**13) (would not fit)",
         lambda: monte_carlo_preference(qm, Objective(beta=1.0, group_size=4), [0.5, 0.5], n_groups=10 ** 13), ["n_groups"]),
    ]:
        out.append(_err(G_, lab, call, names))
    for steps, vals, want in [
            ([0, 10, 20, 30, 40], [0.5, 0.9, 0.1, 0.3, 0.95], (0.8, 10, 20, 0.85)),
            ([1, 2, 3], [0.1, 0.2, 0.3], (0.0, None, None, None)),
            ([5, 6, 7, 8], [1.0, 0.2, 0.9, -0.5], (1.5, 5, 8, 0.0)),
            ([0.5, 1.5, 2.5], [3.0, 3.0, 2.0], (1.0, None, 2.5, 0.0))]:
        def chk(v, want=want):
            got = [v.size, v.peak_step, v.trough_step, v.recovered]
            keep = [i for i, w in enumerate(want) if w is not None]
            return ref.close([got[i] for i in keep], [want[i] for i in keep], 1e-12, 1e-15)
        out.append(_ok(G_, f"largest_drop({steps}, {vals}) = (size, peak, trough, recovered) {want}",
                       lambda steps=steps, vals=vals: largest_drop(steps, vals), chk))
    for lab, args, names in [("steps not increasing [0, 2, 1]", ([0, 2, 1], [1.0, 2.0, 3.0]), ["steps"]),
                             ("empty", ([], []), ["steps"]), ("values with a NaN", ([0, 1], [1.0, math.nan]), ["values"])]:
        out.append(_err(G_, f"largest_drop({lab})", lambda args=args: largest_drop(*args), names))
    # pairwise preferences and margins of Bernoulli laws: P(a > b) + P(b > a) / 2 ... (ties half)
    pa, pb, pc = 0.8, 0.35, 0.6
    q3 = Question([0.3, 0.3, 0.4], reward_levels=[0.0, 1.0], reward_probs=[[1 - pa, pa], [1 - pb, pb], [1 - pc, pc]])

    def pref(x, y):
        return x * (1 - y) + 0.5 * (x * y + (1 - x) * (1 - y))
    M = [[pref(u, w) for w in (pa, pb, pc)] for u in (pa, pb, pc)]
    out.append(_ok(G_, "pairwise_preference of Bernoulli 0.8, 0.35, 0.6 (ties half)", lambda: q3.pairwise_preference(),
                   lambda v: ref.close(v, M, 1e-12, 1e-15)))
    out.append(_ok(G_, "confidence_margin(1, 2) of Bernoulli 0.35 vs 0.6 = -0.25 (SPEC: p_a - p_b)",
                   lambda: q3.confidence_margin(1, 2), lambda v: ref.close(v, -0.25, 1e-12)))
    ql = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 0.5, 1.0],
                  reward_probs=[[0.2, 0.3, 0.5], [0.5, 0.5, 0.0], [0.1, 0.8, 0.1]])
    law = [[0.2, 0.3, 0.5], [0.5, 0.5, 0.0], [0.1, 0.8, 0.1]]

    def gt(u, w):
        return sum(u[i] * w[j] for i in range(3) for j in range(3) if i > j)
    out.append(_ok(G_, "confidence_margin(0, 2) of three-level laws = P(a > c) - P(c > a)", lambda: ql.confidence_margin(0, 2),
                   lambda v: ref.close(v, gt(law[0], law[2]) - gt(law[2], law[0]), 1e-12)))
    # binary G = 2 with Bernoulli rewards: Eq. 14 at gamma = p_a - p_b (SPEC section 4)
    for p, beta in ((0.3, 0.2), (0.7, 0.05)):
        qb = Question([p, 1 - p], reward_levels=[0.0, 1.0], reward_probs=[[1 - pa, pa], [1 - pb, pb]])
        from grpo_theory import stationary_policy
        out.append(_ok(G_, f"stationary_policy Bernoulli 0.8 vs 0.35, G=2, p={p}, beta={beta}: Eq. 14 at gamma = 0.45",
                       lambda qb=qb, beta=beta: stationary_policy(qb, Objective(beta=beta)),
                       lambda v, p=p, beta=beta: _small(v, (ref.eq14(p, beta, 0.45), ref.eq14_complement(p, beta, 0.45)))))
    from grpo_theory.solvers.tree import tree_stationary_policy
    for lab, call, names in [
        ("tree_stationary_policy(a question without answers)",
         lambda: tree_stationary_policy(Question([0.3, 0.7], [1.0, 0.0]), Objective(beta=0.5, level="token")), ["answers"]),
        ("tree_stationary_policy(a sequence-level objective)",
         lambda: tree_stationary_policy(Question([0.3, 0.7], [1.0, 0.0], answers=["AB", "C"]), Objective(beta=0.5)),
         ["level"]),
    ]:
        out.append(_either(G_, lab, call, lambda v: ref.close(_pi(v)[0], ref.eq14(0.3, 0.5), 1e-7), names))
    # token level, two one-token answers: the tree is the sequence question (Eq. 14)
    out.append(_ok(G_, "tree_stationary_policy(answers 'A', 'B', token level) = Eq. 14",
                   lambda: tree_stationary_policy(Question([0.3, 0.7], [1.0, 0.0], answers=["A", "B"]),
                                                  Objective(beta=0.5, level="token")),
                   lambda v: ref.close(_pi(v)[0], ref.eq14(0.3, 0.5), 1e-7)))
    return out


# ---------------------------------------------------------------- sizes at the documented limits
def size_cases() -> list[dict]:
    from grpo_theory import Objective, Question, closed_form as cf, reward_preference, stationary_policy
    from grpo_theory.predict import predict, samples_from_counts

    G_ = "API: sizes at the documented limits"
    out = []
    # the reference's lgamma at ~1.4e7 carries ~1.5e-9 of rounding per weight: 1e-7 relative
    want = ref.binomial_pg(0.37, 10 ** 6)
    out.append(_ok(G_, "binary_preference(x=0.37, G=10**6) = the binomial sums (1e-7: the reference's lgamma rounding)",
                   lambda: cf.binary_preference(0.37, 10 ** 6),
                   lambda v: ref.close([float(np.asarray(v[0])), float(np.asarray(v[1]))], want, 1e-7, 1e-13)))
    out.append(_err(G_, "binary_preference(x=0.37, G=MAX_BINARY_GROUP + 1)",
                    lambda: cf.binary_preference(0.37, cf.MAX_BINARY_GROUP + 1), ["group_size"]))
    rng = np.random.default_rng(8)
    pi8 = rng.dirichlet(np.ones(8))
    r8 = np.round(rng.normal(size=8), 3)
    want8 = _lazy(ref.count_pg, list(pi8), list(r8), 6)
    out.append(_ok(G_, f"reward_preference 8 outputs of distinct rewards at G=6 (792 count vectors) rewards={r8.tolist()}",
                   lambda: reward_preference(Question(np.full(8, 1 / 8), r8), Objective(beta=1.0, group_size=6), pi8),
                   lambda v: ref.close(v, want8(), 1e-10, 1e-13)))
    pr = rng.dirichlet(np.ones(10000))
    rw = (np.arange(10000) % 3 == 0).astype(float)
    pa = float(pr[rw == 1].sum())
    xa = ref.eq14(pa, 0.4)
    w10k = np.where(rw == 1, pr / pa * xa, pr / (1 - pa) * (1 - xa))
    out.append(_ok(G_, f"stationary_policy 10,000 outputs, two reward levels (p = {pa:.4f}), G=2 beta=0.4: class mass Eq. 14, "
                       "within a class proportional to pi_ref",
                   lambda: stationary_policy(Question(pr, rw), Objective(beta=0.4)),
                   lambda v: ref.close(_pi(v), w10k, 1e-7, 1e-18)))
    ns = rng.integers(1, 64, 20000)
    cs = np.array([int(rng.integers(0, k + 1)) for k in ns])
    picks = [i for i in range(20000) if 0 < cs[i] < ns[i]][:3]

    def chk20k(v):
        t = v.table.set_index("prompt_id")
        for i in picks:
            bad = ref.close(float(t.loc[f"p{i}", "pred"]), ref.rest_bisect(cs[i] / ns[i], 0.6, 4), 1e-7)
            if bad is not True:
                return f"p{i} ({cs[i]}/{ns[i]}): {bad}"
        return ref.close(float(t["p_ref"].mean()), float(np.mean(cs / ns)), 1e-12)
    out.append(_ok(G_, "predict 20,000 prompts at G=4 beta=0.6: three prompts' pred = the bisection, mean p_ref",
                   lambda: predict(samples_from_counts(ns, cs, [f"p{i}" for i in range(20000)]),
                                   Objective(beta=0.6, group_size=4), k=(1,)), chk20k))
    return out


# ---------------------------------------------------------------- documented promises of the API pages, at their edges
def _phi(p, eps=0.0):
    """``Phi(p) = int_0^p dt / sqrt(t (1 - t) + eps)`` = ``arcsin((2p - 1)/s) + arcsin(1/s)``, ``s = sqrt(1 + 4 eps)``."""
    s_ = math.sqrt(1 + 4 * eps)
    return math.asin((2 * p - 1) / s_) + math.asin(1 / s_)


def promise_cases() -> list[dict]:
    from grpo_theory import Objective, Question
    from grpo_theory import dynamics as D
    from grpo_theory import sweep as S
    from grpo_theory import variants as V

    G_ = "API: documented promises of the API pages (dynamics, sweep, variants) at their edges"
    out = []
    ps = [1e-12, 0.1, 0.5, 0.9, 1.0]
    for eps in (0.0, 0.05, 3.0):
        want = [_phi(p, eps) for p in ps]
        out.append(_ok(G_, f"arcsin_potential(p={ps}, variance_eps={eps}) = the integral of 1/sqrt(t(1-t) + eps)",
                       lambda eps=eps: D.arcsin_potential(ps, eps), lambda v, w=want: ref.close(v, w, 1e-12, 1e-15)))
    for lab, call, names in [("arcsin_potential(p=1.5)", lambda: D.arcsin_potential([1.5]), ["p"]),
                             ("arcsin_potential(variance_eps=-1)", lambda: D.arcsin_potential([0.5], -1.0), ["variance_eps"]),
                             ("arcsin_potential(p=nan)", lambda: D.arcsin_potential([math.nan]), ["p"])]:
        out.append(_err(G_, lab, call, names))
    for pr, rw, pi, beta, pen in [([0.2, 0.8], [1.0, 0.0], [0.6, 0.4], 0.5, "reverse"),
                                  ([0.1, 0.3, 0.6], [1.0, 0.0, 1.0], [0.5, 0.2, 0.3], 1.3, "reverse"),
                                  ([0.2, 0.8], [1.0, 0.0], [0.6, 0.4], 0.5, "direct"),
                                  ([0.25, 0.25, 0.5], [0.0, 1.0, 0.0], [0.1, 0.8, 0.1], 0.2, "direct")]:
        es = sum(a * r for a, r in zip(pi, rw))
        if pen == "reverse":
            d = sum(r * math.log(r / a) for r, a in zip(pr, pi))
        else:
            d = sum(a * math.log(a / r) for r, a in zip(pr, pi))
        want = 2 * math.asin(math.sqrt(es)) - beta * d
        out.append(_ok(G_, f"potential_objective(pi_ref={pr}, rewards={rw}, pi={pi}, beta={beta}, {pen}) = "
                           "2 arcsin sqrt(E_pi r) - beta D",
                       lambda pr=pr, rw=rw, pi=pi, beta=beta, pen=pen:
                       D.potential_objective(Question(pr, rw), Objective(beta=beta, group_size=INF, penalty=pen), pi),
                       lambda v, w=want: ref.close(v, w, 1e-12, 1e-15)))
    for lab, call, names in [
        ("potential_objective at G=4 (documented: G = inf only)",
         lambda: D.potential_objective(Question([0.2, 0.8], [1.0, 0.0]), Objective(beta=0.5, group_size=4), [0.5, 0.5]),
         ["group_size"]),
        ("potential_objective with rewards [1, 0.5] (documented: {0, 1})",
         lambda: D.potential_objective(Question([0.2, 0.8], [1.0, 0.5]), Objective(beta=0.5, group_size=INF), [0.5, 0.5]),
         ["rewards"]),
        ("potential_objective with std_eps=0.1 (documented: 0 only)",
         lambda: D.potential_objective(Question([0.2, 0.8], [1.0, 0.0]), Objective(beta=0.5, group_size=INF, std_eps=0.1),
                                       [0.5, 0.5]), ["std_eps"]),
    ]:
        out.append(_err(G_, lab, call, names))
    # output_gradient: reverse P_G - beta (1 - pi_ref/pi); direct P_G - beta (log(pi/pi_ref) + 1)
    for pr, rw, pi, beta, G, pen in [([0.2, 0.3, 0.5], [1.0, 0.4, 0.0], [0.5, 0.25, 0.25], 0.7, 3, "reverse"),
                                     ([0.2, 0.3, 0.5], [1.0, 0.4, 0.0], [0.5, 0.25, 0.25], 0.7, 3, "direct"),
                                     ([0.6, 0.4], [0.0, 2.0], [0.3, 0.7], 0.1, 5, "reverse")]:
        P = ref.count_pg(pi, rw, G)
        if pen == "reverse":
            want = [a - beta * (1 - r / b) for a, r, b in zip(P, pr, pi)]
        else:
            want = [a - beta * (math.log(b / r) + 1) for a, r, b in zip(P, pr, pi)]
        out.append(_ok(G_, f"output_gradient(pi_ref={pr}, rewards={rw}, pi={pi}, beta={beta}, G={G}, {pen})",
                       lambda pr=pr, rw=rw, pi=pi, beta=beta, G=G, pen=pen:
                       D.output_gradient(Question(pr, rw), Objective(beta=beta, group_size=G, penalty=pen), np.array(pi)),
                       lambda v, w=want: ref.close(v, w, 1e-10, 1e-13)))
    out.append(_ok(G_, "output_gradient at pi with a zero entry: 0 outside the support (documented)",
                   lambda: D.output_gradient(Question([0.2, 0.3, 0.5], [1.0, 0.4, 0.0]), Objective(beta=0.7, group_size=3),
                                             np.array([0.6, 0.4, 0.0])),
                   lambda v: float(np.asarray(v)[2]) == 0.0))
    # map_fixed_points of a binary G = 2 reverse question: Eq. 14
    out.append(_ok(G_, "map_fixed_points(binary p=0.4, beta=0.6, G=2): one fixed point, Eq. 14",
                   lambda: D.map_fixed_points(Question([0.4, 0.6], [1.0, 0.0]), Objective(beta=0.6)),
                   lambda v: len(v) == 1 and ref.close(_pi(v[0].pi)[0], ref.eq14(0.4, 0.6), 1e-8) is True))
    for lab, call, names in [
        ("map_cycles(period=1)", lambda: D.map_cycles(Question([0.4, 0.6], [1.0, 0.0]), Objective(beta=0.6), period=1),
         ["period"]),
        ("map_cycles(period=10**6) (over the documented evaluation limit)",
         lambda: D.map_cycles(Question([0.4, 0.6], [1.0, 0.0]), Objective(beta=0.6), period=10 ** 6), ["period"]),
        ("map_cycles(three classes)", lambda: D.map_cycles(Question([0.2, 0.3, 0.5], [1.0, 0.5, 0.0]), Objective(beta=0.6)),
         ["class"]),
    ]:
        out.append(_err(G_, lab, call, names))
    # sweep's grid helpers
    for K, n, betas, gs in ((3, 20, [0.1, 0.5], [2, 4, "inf"]), (2, 8, [1.0], [2]), (4, 10, [0.3, 0.6, 0.9], [8])):
        rewards = list(range(K))
        grid = {"simplex": {"rewards": rewards, "step": 1 / n}, "objectives": {"beta": betas, "group_size": gs}}
        want = (math.comb(n - 1, K - 1), len(betas) * len(gs))
        out.append(_ok(G_, f"grid_size(simplex K={K} step=1/{n}, {len(betas)} betas x {len(gs)} G) = {want}",
                       lambda grid=grid: S.grid_size(grid), lambda v, want=want: tuple(v) == want))
    bad_grid = {"simplex": {"rewards": [1, 0, 0.5], "step": 0.5}, "objectives": {"beta": [0.5, -1]}}
    out.append(_ok(G_, "check_grid(step 1/2 for K=3 (documented n >= K) and beta -1): a line naming each problem",
                   lambda: S.check_grid(bad_grid),
                   lambda v: (len(v) >= 2 and any("step" in x for x in v) and any("-1" in x for x in v))
                   or f"lines: {v}"))
    out.append(_ok(G_, "cases_from_grid keys write beta: 1 as beta=1.0 and group_size: 4.0 as group_size=4 (documented)",
                   lambda: S.cases_from_grid({"questions": [{"name": "q", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}],
                                              "objectives": {"beta": 1, "group_size": 4.0}}),
                   lambda v: [c.key for c in v] == ["q|beta=1.0,group_size=4"] or [getattr(c, "key", c) for c in v]))
    for lab, call, names in [
        ("variants.lookup('advantage', 'RLOO')", lambda: V.lookup("advantage", "RLOO"), ["RLOO", "rloo"]),
        ("variants.lookup('estimator', 'k3')", lambda: V.lookup("estimator", "k3"), ["estimator"]),
        ("variants.names('penalties')", lambda: V.names("penalties"), ["penalties"]),
        ("variants.register(None)", lambda: V.register(None), ["entry"]),
        ("variants.register(the package's own rloo entry, replace=True)",
         lambda: V.register(V.lookup("advantage", "rloo"), replace=True), ["rloo"]),
        ("variants.unregister('advantage', 'group') (the package's own)", lambda: V.unregister("advantage", "group"),
         ["group"]),
    ]:
        out.append(_err(G_, lab, call, names))
    out.append(_ok(G_, "variants.names('kl_estimator') holds the six documented estimators",
                   lambda: V.names("kl_estimator"),
                   lambda v: set(v) >= {"k1", "k2", "k3", "k3_ratio", "k3_plus", "abs"} or f"names {v}"))
    from grpo_theory.solvers.full_space import full_space_stability
    G2 = "API: full_space_stability at the reference's points"
    lo, hi = ref.h_roots(0.1, 1.0)
    qd, od = Question([0.1, 0.9], [1.0, 0.0]), Objective(beta=1.0, group_size=INF, penalty="direct")
    for lab, x, want in [("the lower root of h (p=0.1, beta=1, G=inf, direct) is stable", lo, True),
                         ("the upper root of h (p=0.1, beta=1, G=inf, direct) is unstable", hi, False)]:
        out.append(_ok(G2, f"full_space_stability: {lab} (the README's 0.453 and 0.967)",
                       lambda x=x: full_space_stability(qd, od, [x, 1 - x]), lambda v, want=want: v.stable is want))
    x5 = ref.eq14(0.35, 0.45)
    out.append(_ok(G2, "full_space_stability: Eq. 14's point of 3 outputs pooled [0.2, 0.15 | 0.65] is stable",
                   lambda: full_space_stability(Question([0.2, 0.15, 0.65], [1.0, 1.0, 0.0]), Objective(beta=0.45),
                                                [x5 * 0.2 / 0.35, x5 * 0.15 / 0.35, 1 - x5]),
                   lambda v: v.stable is True))
    for lab, pi, names in [("pi of 3 entries for 2 outputs", [0.2, 0.3, 0.5], ["pi"]), ("pi summing to 0.8", [0.4, 0.4], ["pi"])]:
        out.append(_err(G2, f"full_space_stability({lab})", lambda pi=pi: full_space_stability(qd, od, pi), names))
    return out


def all_api_cases() -> list[dict]:
    return (pg_cases() + law_cases() + binary_grid_cases() + finite_g_cases() + closed_form_cases() + all_points_cases()
            + baseline_cases() + kl_cases() + unnamed_cases() + predict_cases() + type_cases()
            + solver_argument_cases() + more_cases() + size_cases() + promise_cases())
