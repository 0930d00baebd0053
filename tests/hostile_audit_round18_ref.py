"""Independent reference of the eighteenth hostile audit, written from /work/shared/SPEC.md alone; it imports
nothing of ``grpo_theory`` and reuses no earlier round's reference.

* :func:`pg_binary`: SPEC section 2's binomial form ``P_G(a) = E sqrt((G-1-k)/(k+1))``, ``P_G(b) = -E sqrt(k/(G-k))``,
  ``k ~ Binomial(G-1, x)``, weights in log space (``lgamma``), ``fsum``; ``G = inf``: ``(1-x)/sigma``, ``-x/sigma``;
* :func:`pg_tuples`: ``P_G(o | pi) = E[A_1 | o_1 = o]`` over the ordered tuples of the other ``G - 1`` members (scale,
  shift, RLOO advantages, a group of equal rewards has advantage 0);
* :func:`rest_finite`: the reverse/scale rest of a binary question at finite G by bisection of Eq. 11's binary form
  ``beta (x - p) = x P_G(a | x)`` (``E_pi P_G = 0``) on ``(p, 1)``;
* :func:`x14` (Eq. 14 by the cancellation-free root), :func:`x15` (Eq. 15 as written), :func:`xlogit` (the direct
  forms), :func:`pool` (Eq. 4 in log space).
"""

from __future__ import annotations

import itertools
import math


def sig(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def lgt(x):
    return math.log(x) - math.log1p(-x)


def x14(p, beta, gamma=1.0):
    """Root in [p, 1] of gamma x^2 + (beta - gamma) x - beta p = 0; small roots by c/(a q)."""
    if gamma == 0:
        return p
    a, b, c = gamma, beta - gamma, -beta * p
    d = math.sqrt(b * b - 4 * a * c)
    if b >= 0:
        return (-2 * c) / (b + d)
    return (-b + d) / (2 * a)


def y14(p, beta, gamma=1.0):
    """1 - x of Eq. 14: with y = 1 - x, gamma y^2 - (beta + gamma) y + beta (1 - p) = 0, the smaller root."""
    if gamma == 0:
        return 1 - p
    a, b, c = gamma, -(beta + gamma), beta * (1 - p)
    d = math.sqrt(b * b - 4 * a * c)
    return (2 * c) / (-b + d)


def x15(p, beta):
    b2 = beta * beta
    return (2 * b2 * p + 1 + math.sqrt(1 + 4 * b2 * p * (1 - p))) / (2 * (1 + b2))


def y15(p, beta):
    """1 - x of Eq. 15 from (1 + b^2) y^2 - (1 + 2 b^2 (1-p)) y + b^2 (1-p)^2 = 0, smaller root, cancellation-free."""
    b2 = beta * beta
    A, B, C = 1 + b2, -(1 + 2 * b2 * (1 - p)), b2 * (1 - p) ** 2
    d = math.sqrt(B * B - 4 * A * C)
    return (2 * C) / (-B + d)


def xlogit(p, shift):
    """(x, 1 - x) with logit x = logit p + shift."""
    z = lgt(p) + shift
    return sig(z), sig(-z)


def _logbinom(n, k, x):
    if x <= 0:
        return 0.0 if k == 0 else -math.inf
    if x >= 1:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(x)
            + (n - k) * math.log1p(-x))


def pg_binary(x, G):
    if G == math.inf:
        s = math.sqrt(x * (1 - x))
        return (1 - x) / s, -x / s
    n = G - 1
    pa, pb = [], []
    for k in range(n + 1):
        w = math.exp(_logbinom(n, k, x))
        pa.append(w * math.sqrt((G - 1 - k) / (k + 1)))
        pb.append(-w * (math.sqrt(k / (G - k)) if k > 0 else 0.0))
    return math.fsum(pa), math.fsum(pb)


def rest_finite(p, beta, G):
    """Bisection of f(x) = beta (x - p) - x P_G(a|x) on [p, 1]: f(p) < 0 < f(1) (P_G(a|1) = 0)."""
    lo, hi = p, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if beta * (mid - p) - mid * pg_binary(mid, G)[0] < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _adv(group, kind):
    G = len(group)
    m = math.fsum(group) / G
    if kind == "shift":
        return group[0] - m
    if kind == "rloo":
        return group[0] - math.fsum(group[1:]) / (G - 1)
    var = math.fsum((r - m) ** 2 for r in group) / G
    return 0.0 if var == 0 else (group[0] - m) / math.sqrt(var)


def pg_tuples(pi, rewards, G, kind="scale"):
    out = []
    n = len(pi)
    for o in range(n):
        terms = []
        for rest in itertools.product(range(n), repeat=G - 1):
            w = math.prod(pi[j] for j in rest)
            terms.append(w * _adv([rewards[o]] + [rewards[j] for j in rest], kind))
        out.append(math.fsum(terms))
    return out


def pool(pi_ref, rewards, beta):
    z = [math.log(p) + r / beta for p, r in zip(pi_ref, rewards)]
    m = max(z)
    w = [math.exp(v - m) for v in z]
    s = math.fsum(w)
    return [v / s for v in w]


def close(got, want, rtol, atol=0.0):
    got = [float(v) for v in (got if hasattr(got, "__len__") else [got])]
    want = [float(v) for v in (want if hasattr(want, "__len__") else [want])]
    if len(got) != len(want):
        return f"length {len(got)} != {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if not (abs(g - w) <= rtol * abs(w) + atol):
            return f"[{i}] got {g!r}, want {w!r} (rtol {rtol}, atol {atol})"
    return True


def h_direct(x, p, beta):
    """SPEC section 4's h for the large-G direct penalty, with y = 1 - x given separately near 1."""
    return 1.0 / (beta * math.sqrt(x * (1 - x))) - lgt(x) + lgt(p)


def h_roots(p, beta):
    """The interior roots of h: none if h(x*) > 0, else one by bisection on (0, x*) and one on (x*, 1)."""
    xs = (1 + math.sqrt(1 - 1 / (1 + beta * beta))) / 2
    hs = h_direct(xs, p, beta)
    if hs > 0:
        return [], hs

    def bis(lo, hi, falling):
        for _ in range(300):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            v = h_direct(mid, p, beta)
            if (v > 0) == falling:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)
    return [bis(1e-300, xs, True), bis(xs, 1.0, False)], hs
