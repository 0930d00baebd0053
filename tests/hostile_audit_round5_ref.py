"""Independent references for the fifth hostile audit (:mod:`hostile_audit_round5`).

Nothing here imports ``grpo_theory``. Each function is written from the definition it names, in mpmath at
200 digits (bisection where the note defines a root), or from ``math.comb``:

* ``rloo_direct``, ``shift_direct``: ``logit x = logit p + gap/beta'`` (RLHF at ``beta'``; ``beta' = G beta/(G-1)``
  for shift-only with the direct penalty).
* ``filtered``: the root in ``(p, 1)`` of ``x(1-x) = beta (x-p)(x^2 + (1-x)^2)`` (G = 2, ties filtered).
* ``entropy_root``: the root of ``Delta - beta (x-p)/(x(1-x)) - c logit x`` (reverse) or
  ``Delta - beta (logit x - logit p) - c logit x`` (direct).
* ``direct_h``, ``turning_point``: ``h(x) = 1/(beta sqrt(x(1-x))) - logit x + logit p`` and
  ``x* = (1 + sqrt(1 - 1/(1+beta^2)))/2``.
* ``binary_pg``: ``P_G(a) = E[sqrt((G-1-k)/(k+1))]``, ``P_G(b) = -E[sqrt(k/(G-k))]``, ``k ~ Bin(G-1, x)``.
* ``pass_at_k``: ``1 - C(n-c, k)/C(n, k)``; ``wilson``: the Wilson score interval.
"""

from __future__ import annotations

import math

DPS = 200


def _mp():
    import mpmath as mp

    return mp


def _logistic(z):
    mp = _mp()
    return 1 / (1 + mp.exp(-z))


def _logit(p):
    mp = _mp()
    return mp.log(p) - mp.log(1 - p)


def rloo_direct(p, beta, gap=1.0) -> float:
    mp = _mp()
    with mp.workdps(DPS):
        P = mp.mpf(p)
        if P in (0, 1):
            return float(P)
        return float(_logistic(_logit(P) + mp.mpf(gap) / mp.mpf(beta)))


def shift_direct(p, beta, G, gap=1.0) -> float:
    mp = _mp()
    with mp.workdps(DPS):
        b = mp.mpf(beta) if math.isinf(G) else mp.mpf(G) * mp.mpf(beta) / (mp.mpf(G) - 1)
        return rloo_direct(p, b, gap)


def _bisect(f, lo, hi, n=700):
    mp = _mp()
    flo = f(lo)
    for _ in range(n):
        mid = mp.sqrt(lo * hi) if lo > 0 and hi > 4 * lo else (lo + hi) / 2   # geometric: roots near 0
        fm = f(mid)
        if fm == 0:
            return mid
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return (lo + hi) / 2


def filtered(p, beta) -> float:
    mp = _mp()
    with mp.workdps(DPS):
        P, B = mp.mpf(p), mp.mpf(beta)
        if P == 0:
            return 0.0
        if P == 1:
            return 1.0
        f = lambda x: x * (1 - x) - B * (x - P) * (x ** 2 + (1 - x) ** 2)  # noqa: E731
        return float(_bisect(f, P, mp.mpf(1)))


def entropy_root(p, beta, c, margin=1.0, penalty="reverse") -> float:
    mp = _mp()
    with mp.workdps(DPS):
        P, B, C, D = (mp.mpf(v) for v in (p, beta, c, margin))
        if penalty == "direct":
            f = lambda x: D - B * (_logit(x) - _logit(P)) - C * _logit(x)  # noqa: E731
        else:
            f = lambda x: D - B * (x - P) / (x * (1 - x)) - C * _logit(x)  # noqa: E731
        return float(_bisect(f, mp.mpf(10) ** -150, 1 - mp.mpf(10) ** -150))


def entropy_condition(x, p, beta, c, margin=1.0, penalty="reverse") -> float:
    mp = _mp()
    with mp.workdps(DPS):
        X, P, B, C, D = (mp.mpf(v) for v in (x, p, beta, c, margin))
        if penalty == "direct":
            return float(D - B * (_logit(X) - _logit(P)) - C * _logit(X))
        return float(D - B * (X - P) / (X * (1 - X)) - C * _logit(X))


def direct_h(x, p, beta) -> float:
    mp = _mp()
    with mp.workdps(DPS):
        X, P, B = mp.mpf(x), mp.mpf(p), mp.mpf(beta)
        return float(1 / (B * mp.sqrt(X * (1 - X))) - _logit(X) + _logit(P))


def turning_point(beta) -> float:
    mp = _mp()
    with mp.workdps(DPS):
        B = mp.mpf(beta)
        return float((1 + mp.sqrt(1 - 1 / (1 + B ** 2))) / 2)


def binary_pg(x, G) -> tuple[float, float]:
    mp = _mp()
    with mp.workdps(60):
        X = mp.mpf(x)
        if math.isinf(G):
            if X == 0 or X == 1:
                raise ValueError("undefined at the vertex for G = inf")
            return float(mp.sqrt((1 - X) / X)), float(-mp.sqrt(X / (1 - X)))
        G = int(G)
        pa = pb = mp.mpf(0)
        for k in range(G):
            w = mp.binomial(G - 1, k) * X ** k * (1 - X) ** (G - 1 - k)
            pa += w * mp.sqrt(mp.mpf(G - 1 - k) / (k + 1))
            pb -= w * mp.sqrt(mp.mpf(k) / (G - k))
        return float(pa), float(pb)


def pass_at_k(n: int, c: int, k: int) -> float:
    if k > n:
        return float("nan")
    if n - c < k:
        return 1.0
    from fractions import Fraction

    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))      # exact, then rounded once


def one_sided(c: int, n: int, level: float):
    """The documented bound at ``c = 0`` or ``c = n`` (both methods): ``(0, 1 - (1-level)^(1/n)]`` and its mirror."""
    if c == 0:
        return 0.0, 1 - (1 - level) ** (1 / n)
    if c == n:
        return (1 - level) ** (1 / n), 1.0
    return None


def wilson(c: int, n: int, level: float) -> tuple[float, float]:
    from statistics import NormalDist

    if one_sided(c, n, level):
        return one_sided(c, n, level)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    ph = c / n
    den = 1 + z * z / n
    mid = (ph + z * z / (2 * n)) / den
    half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def jeffreys(c: int, n: int, level: float) -> tuple[float, float]:
    mp = _mp()
    if one_sided(c, n, level):
        return one_sided(c, n, level)
    a = (1 - level) / 2
    with mp.workdps(40):
        A, B = mp.mpf(c) + mp.mpf(1) / 2, mp.mpf(n - c) + mp.mpf(1) / 2

        def q(prob):
            f = lambda x: mp.betainc(A, B, 0, x, regularized=True) - prob  # noqa: E731
            lo, hi = mp.mpf(0), mp.mpf(1)
            for _ in range(200):
                mid = (lo + hi) / 2
                if f(mid) < 0:
                    lo = mid
                else:
                    hi = mid
            return float((lo + hi) / 2)
        lo = 0.0 if c == 0 else q(a)
        hi = 1.0 if c == n else q(1 - a)
    return lo, hi


def close(a, b, rel=1e-9, abs_=1e-300) -> bool:
    a, b = float(a), float(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)
