"""Independent references for the seventh hostile audit (:mod:`hostile_audit_round7`).

Nothing here imports ``grpo_theory``: every number is computed from the definitions of the maths contract
(SPEC sections 1 to 5) and of docs/predict.md, in 60-digit mpmath where a closed form cancels:

* ``eq14``, ``eq15``, ``g2_direct``, ``shift_direct``: the binary closed forms of SPEC section 4;
  ``turning_point`` and ``direct_h``: the large-G direct penalty's ``x*`` and ``h(x)``.
* ``binary_p``: ``(P_G(a|pi), P_G(b|pi))`` for a binary question with rewards 1, 0, by the binomial sum over the
  number of correct answers among the other ``G - 1`` members, with ``ddof``, ``eps`` and the normalisation.
* ``binary_reverse`` / ``binary_direct``: the stationary point the on-policy flow reaches from ``p`` (the first
  root above ``p`` of the binary stationarity condition of SPEC section 3), by a scan and bisection in mpmath.
* ``pg_levels``: ``P_G(o|pi)`` for deterministic rewards with ties, by enumerating the other members' counts
  per reward level (multinomial); ``reverse_ok``, ``direct_ok``, ``nlhf_ok``: the conditions on the support.
* ``rlhf``: log pooling in log space; ``pass_k``, ``unbiased_pass_k``, ``wilson``, ``jeffreys``: docs/predict.md.
* ``k1``, ``k2``, ``k3``: the per-output KL estimators of SPEC section 8.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np

mp.mp.dps = 60


def close(got, want, rtol=1e-10, atol=0.0) -> bool:
    got, want = np.asarray(got, float), np.asarray(want, float)
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


# ---------------------------------------------------------------- SPEC section 4
def eq14(p, beta, gamma=1.0) -> float:
    p, b = mp.mpf(p), mp.mpf(beta) / mp.mpf(gamma)
    d = 1 - b
    s = mp.sqrt(d * d + 4 * b * p)
    return float((d + s) / 2 if d >= 0 else 2 * b * p / (s - d))


def eq15(p, beta) -> float:
    p, b = mp.mpf(p), mp.mpf(beta)
    return float((2 * b * b * p + 1 + mp.sqrt(1 + 4 * b * b * p * (1 - p))) / (2 * (1 + b * b)))


def g2_direct(p, beta, gamma=1.0) -> float:
    p, e = mp.mpf(p), mp.mpf(gamma) / (2 * mp.mpf(beta))
    return float(p / (p + mp.exp(-2 * e) * (1 - p)))


def shift_direct(p, beta, G, gap=1.0) -> float:
    """RLHF at ``beta' = G beta/(G-1)``: ``logistic(logit p + gap (G-1)/(G beta))``."""
    f = 1 if G == math.inf else mp.mpf(G - 1) / G
    p = mp.mpf(p)
    return float(p / (p + mp.exp(-mp.mpf(gap) * f / mp.mpf(beta)) * (1 - p)))


def turning_point(beta) -> float:
    b = mp.mpf(beta)
    return float((1 + b / mp.sqrt(1 + b * b)) / 2)


def direct_h(x, p, beta) -> float:
    x, p, b = mp.mpf(x), mp.mpf(p), mp.mpf(beta)
    return float(1 / (b * mp.sqrt(x * (1 - x))) - mp.log(x / (1 - x)) + mp.log(p / (1 - p)))


# ---------------------------------------------------------------- P_G of a binary question (SPEC section 2)
def _adv(r0: int, ones: int, G: int, ddof: int, eps: float, normalization: str):
    """Advantage of a member with reward ``r0`` in a group of ``G`` with ``ones`` rewards 1 (it included)."""
    m = mp.mpf(ones) / G
    if normalization == "shift":
        return r0 - m
    if ones in (0, G):
        return mp.mpf(0)
    sd = mp.sqrt(m * (1 - m) * G / (G - ddof))
    return (r0 - m) / (sd + eps)


def binary_p(x, G, ddof=0, eps=0.0, normalization="scale"):
    """``(P_G(a|pi), P_G(b|pi))`` with ``pi(a) = x``, rewards 1 (a) and 0 (b), finite ``G``."""
    x = mp.mpf(x)
    pa = pb = mp.mpf(0)
    for k in range(G):                         # k correct among the other G - 1
        w = mp.binomial(G - 1, k) * x ** k * (1 - x) ** (G - 1 - k)
        pa += w * _adv(1, k + 1, G, ddof, eps, normalization)
        pb += w * _adv(0, k, G, ddof, eps, normalization)
    return pa, pb


def _delta(x, G, ddof, eps, normalization):
    x = mp.mpf(x)
    if G == math.inf:
        # A = (r - mean)/(std + eps) with std -> sigma_pi: P_inf(a) - P_inf(b) = 1/(sigma_pi + eps)
        return 1 / (mp.sqrt(x * (1 - x)) + eps) if normalization == "scale" else mp.mpf(1)
    pa, pb = binary_p(x, G, ddof, eps, normalization)
    return pa - pb


def _others(G, q):
    """Each count vector of the ``G - 1`` other members of a group over the levels, with its multinomial probability
    under the level masses ``q``."""
    for counts in itertools.product(range(G), repeat=len(q)):
        if sum(counts) != G - 1:
            continue
        w = math.factorial(G - 1)
        for c, qq in zip(counts, q):
            w = w / math.factorial(c) * qq ** c
        yield counts, w


def _first_root(f, p, n=400, top_digits=40, halvings=200):
    """The first sign change of ``f`` on ``(p, 1 - 10^-top_digits)`` (``f > 0`` just above ``p``) on a grid of ``n``
    points quadratically denser near ``p``, bisected ``halvings`` times; 1.0 where there is none."""
    lo = mp.mpf(p)
    top = 1 - mp.mpf(10) ** -top_digits
    grid = [lo + (top - lo) * (mp.mpf(i) / n) ** 2 for i in range(1, n + 1)]
    prev = lo
    for x in grid:
        if f(x) <= 0:
            a, b = prev, x
            for _ in range(halvings):
                c = (a + b) / 2
                if f(c) > 0:
                    a = c
                else:
                    b = c
            return float((a + b) / 2)
        prev = x
    return 1.0


def binary_reverse(p, beta, G, ddof=0, eps=0.0, normalization="scale") -> float:
    """The reverse penalty's point reached from ``p``: ``x (1-x) Delta(x) = beta (x - p)``, first root above p."""
    b = mp.mpf(beta)
    return _first_root(lambda x: x * (1 - x) * _delta(x, G, ddof, eps, normalization) - b * (x - p), p)


def binary_direct(p, beta, G, ddof=0, eps=0.0, normalization="scale") -> float:
    """The direct penalty's point reached from ``p``: ``Delta(x) = beta (logit x - logit p)``, first root above."""
    b, lp = mp.mpf(beta), mp.log(mp.mpf(p) / (1 - mp.mpf(p)))
    return _first_root(lambda x: _delta(x, G, ddof, eps, normalization) - b * (mp.log(x / (1 - x)) - lp), p)


# ---------------------------------------------------------------- deterministic rewards with ties
def pg_levels(pi, rewards, G, ddof=0, eps=0.0, normalization="scale") -> np.ndarray:
    """``P_G(o|pi)`` for deterministic ``rewards``, enumerating the others' counts per distinct level."""
    pi, rewards = np.asarray(pi, float), np.asarray(rewards, float)
    levels = sorted(set(rewards.tolist()))
    q = [float(pi[rewards == v].sum()) for v in levels]
    out = {}
    for r0 in levels:
        tot = 0.0
        for counts, w in _others(G, q):
            rew = [r0] + [v for v, c in zip(levels, counts) for _ in range(c)]
            m = sum(rew) / G
            if normalization == "shift":
                a = r0 - m
            else:
                sd = math.sqrt(sum((r - m) ** 2 for r in rew) / (G - ddof))
                a = (r0 - m) / (sd + eps) if sd + eps > 0 else 0.0
            tot += w * a
        out[r0] = tot
    return np.array([out[r] for r in rewards.tolist()])


def reverse_ok(pi, pi_ref, P, beta, tol=1e-7) -> bool:
    pi, pi_ref, P = (np.asarray(v, float) for v in (pi, pi_ref, P))
    e = float(pi @ P)
    return bool(np.all(np.abs(pi * (1 - (P - e) / beta) - pi_ref) <= tol))


def direct_ok(pi, pi_ref, P, beta, tol=1e-7) -> bool:
    pi, pi_ref, P = (np.asarray(v, float) for v in (pi, pi_ref, P))
    s = pi > 1e-300
    v = np.log(pi[s] / pi_ref[s]) - P[s] / beta
    return bool(np.ptp(v) <= tol * max(1.0, float(np.max(np.abs(P))) / beta)) and abs(pi.sum() - 1) < 1e-9


def nlhf_ok(pi, pi_ref, rewards, beta, tol=1e-7) -> bool:
    """``pi ∝ pi_ref exp(E_{o'~pi} P(o > o')/beta)`` with ``P(o > o') = 1, 1/2, 0`` for deterministic rewards."""
    pi, pi_ref, r = (np.asarray(v, float) for v in (pi, pi_ref, rewards))
    M = (r[:, None] > r[None, :]) + 0.5 * (r[:, None] == r[None, :])
    return direct_ok(pi, pi_ref, M @ pi, beta, tol)


def rlhf(pi_ref, rewards, beta) -> np.ndarray:
    lp = [mp.log(mp.mpf(p)) + mp.mpf(r) / mp.mpf(beta) for p, r in zip(pi_ref, rewards)]
    z = mp.log(mp.fsum(mp.exp(v - max(lp)) for v in lp)) + max(lp)
    return np.array([float(mp.exp(v - z)) for v in lp])


# ---------------------------------------------------------------- docs/predict.md
def pass_k(x, k) -> float:
    return float(1 - (1 - mp.mpf(x)) ** k)


def unbiased_pass_k(n, c, k) -> float:
    if n - c < k:
        return 1.0
    return float(1 - mp.binomial(n - c, k) / mp.binomial(n, k))


def wilson(c, n, level=0.95):
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    ph = c / n
    den = 1 + z * z / n
    mid = (ph + z * z / (2 * n)) / den
    half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def jeffreys(c, n, level=0.95):
    from scipy.stats import beta

    a = (1 - level) / 2
    return float(beta.ppf(a, c + 0.5, n - c + 0.5)), float(beta.ppf(1 - a, c + 0.5, n - c + 0.5))


def kl_binary(x, p) -> float:
    """KL(pi || pi_ref) for two classes (the direct KL)."""
    x, p = mp.mpf(x), mp.mpf(p)
    t = lambda a, b: a * mp.log(a / b) if a > 0 else mp.mpf(0)  # noqa: E731
    return float(t(x, p) + t(1 - x, 1 - p))


# ---------------------------------------------------------------- SPEC section 8
def k1(lr) -> float:
    return float(lr)


def k2(lr) -> float:
    return float(mp.mpf(lr) ** 2 / 2)


def k3(lr) -> float:
    """``rho - log rho - 1`` with ``rho = e^{-lr}``."""
    lr = mp.mpf(lr)
    return float(mp.exp(-lr) + lr - 1)
