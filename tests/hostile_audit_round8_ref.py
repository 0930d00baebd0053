"""Independent references for the eighth hostile audit (:mod:`hostile_audit_round8`).

Nothing here imports ``grpo_theory``. Every number comes from the definitions of the maths contract
(/work/shared/SPEC.md sections 1 to 5) and of docs/predict.md, computed directly:

* ``pg_groups``: ``P_G(o|pi) = E[A_1 | o_1 = o]`` by enumerating the other ``G - 1`` members' reward levels as a
  multinomial over the distinct levels (random rewards: over the levels of a draw from ``pi``), each group's
  advantages from Eq. 2 with ``ddof``, ``eps`` and the normalisation written out (``math.fsum``). For G = inf,
  ``(E[r|o] - E_pi r)/sigma_pi``.
* ``binary_p_mp``: ``P_G(a|pi), P_G(b|pi)`` for rewards 1/0 by the binomial sum of SPEC section 2 in 40-digit
  mpmath with the weights built by their ratio (no ``lgamma``), good for G in the tens of thousands.
* ``binary_root``: the stationary point the on-policy flow from ``p`` reaches for a binary question (the first
  sign change above ``p`` of the binary stationarity condition of SPEC section 3), scan and bisection in mpmath.
* ``eq14``, ``eq15``, ``g2_direct``: SPEC section 4's closed forms in mpmath; ``rlhf``: log pooling.
* ``reverse_resid``, ``direct_resid``, ``nlhf_resid``: the largest violation of each stationarity condition on
  the support, scaled so that 1e-9 is a fair tolerance for two double-precision computations.
* ``pass_before``, ``jeffreys``, ``wilson``, ``kl2``: docs/predict.md's pass@k estimate, intervals and the
  class-level KL (the stationary policy keeps ``pi_ref``'s proportions within a class).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
from hostile_audit_round7_ref import _first_root, _others

MP_DPS = 40


def close(got, want, rtol=1e-10, atol=0.0) -> bool:
    got, want = np.asarray(got, float), np.asarray(want, float)
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


# ---------------------------------------------------------------- SPEC section 4, in mpmath
def eq14(p, beta, gamma=1.0) -> float:
    with mp.workdps(MP_DPS):
        p, b = mp.mpf(p), mp.mpf(beta) / mp.mpf(gamma)
        d = 1 - b
        s = mp.sqrt(d * d + 4 * b * p)
        return float((d + s) / 2 if d >= 0 else 2 * b * p / (s - d))


def eq15(p, beta) -> float:
    with mp.workdps(MP_DPS):
        p, b = mp.mpf(p), mp.mpf(beta)
        return float((2 * b * b * p + 1 + mp.sqrt(1 + 4 * b * b * p * (1 - p))) / (2 * (1 + b * b)))


def g2_direct(p, beta, gamma=1.0) -> float:
    with mp.workdps(MP_DPS):
        p, e = mp.mpf(p), mp.mpf(gamma) / mp.mpf(beta)
        return float(p / (p + mp.exp(-e) * (1 - p)))


def rlhf(pi_ref, rewards, beta) -> np.ndarray:
    """``pi ∝ pi_ref exp(r/beta)`` in log space (Eq. 4)."""
    with mp.workdps(MP_DPS):
        lp = [mp.log(mp.mpf(p)) + mp.mpf(r) / mp.mpf(beta) for p, r in zip(pi_ref, rewards)]
        top = max(lp)
        z = mp.log(mp.fsum(mp.exp(v - top) for v in lp)) + top
        return np.array([float(mp.exp(v - z)) for v in lp])


# ---------------------------------------------------------------- SPEC section 2: P_G by enumeration
def _advantage(r0, others, ddof, eps, normalization) -> float:
    rew = [r0, *others]
    G = len(rew)
    if max(rew) == min(rew):
        # Eq. 2's A_i := 0 when all r are equal, decided exactly: three rewards 0.1 have a float mean
        # 0.10000000000000002 and a "std" of 1.4e-17, and (r - mean)/std would be -1
        return 0.0
    m = math.fsum(rew) / G
    if normalization == "shift":
        return r0 - m
    sd = math.sqrt(math.fsum((r - m) ** 2 for r in rew) / (G - ddof))
    if sd + eps == 0:
        return 0.0
    return (r0 - m) / (sd + eps)


def _level_law(pi, levels, probs):
    """The law of the reward of one draw from ``pi``: ``q_l = sum_o pi(o) P(l|o)``."""
    return [math.fsum(pi[o] * probs[o][j] for o in range(len(pi))) for j in range(len(levels))]


def pg_groups(pi, G, *, rewards=None, levels=None, probs=None, ddof=0, eps=0.0, normalization="scale"):
    """``P_G(o|pi)`` for every output. Deterministic ``rewards`` or ``levels`` with ``probs[o][l]``."""
    pi = [float(v) for v in pi]
    if rewards is not None:
        levels = sorted(set(float(r) for r in rewards))
        probs = [[1.0 if float(r) == lv else 0.0 for lv in levels] for r in rewards]
    levels = [float(v) for v in levels]
    q = _level_law(pi, levels, probs)
    if G == math.inf:
        mean = math.fsum(ql * lv for ql, lv in zip(q, levels))
        var = math.fsum(ql * (lv - mean) ** 2 for ql, lv in zip(q, levels))
        out = []
        for o in range(len(pi)):
            eo = math.fsum(probs[o][j] * levels[j] for j in range(len(levels)))
            out.append((eo - mean) / (math.sqrt(var) + eps) if normalization == "scale" else eo - mean)
        return np.array(out)
    L = len(levels)
    per_level = []
    for j0, r0 in enumerate(levels):
        terms = []
        for counts, w in _others(G, q):
            if w == 0.0:
                continue
            others = [lv for lv, c in zip(levels, counts) for _ in range(c)]
            terms.append(w * _advantage(r0, others, ddof, eps, normalization))
        per_level.append(math.fsum(terms))
    return np.array([math.fsum(probs[o][j] * per_level[j] for j in range(L)) for o in range(len(pi))])


def reverse_resid(pi, pi_ref, P, beta) -> float:
    """Largest ``|pi (1 - (P - E_pi P)/beta) - pi_ref|`` on the support over ``1 + max|P|/beta``."""
    pi, pi_ref, P = (np.asarray(v, float) for v in (pi, pi_ref, P))
    e = math.fsum(pi * P)
    s = pi > 0
    r = np.abs(pi[s] * (1 - (P[s] - e) / beta) - pi_ref[s])
    return float(r.max() / (1 + np.abs(P).max() / beta)) + abs(math.fsum(pi) - 1)


def direct_resid(pi, pi_ref, P, beta) -> float:
    """Spread of ``log(pi/pi_ref) - P/beta`` over the support over ``1 + max|P|/beta`` (log pooling's condition)."""
    pi, pi_ref, P = (np.asarray(v, float) for v in (pi, pi_ref, P))
    s = pi > 0
    v = np.log(pi[s] / pi_ref[s]) - P[s] / beta
    return float(np.ptp(v) / (1 + np.abs(P).max() / beta)) + abs(math.fsum(pi) - 1)


def nlhf_resid(pi, pi_ref, rewards, beta) -> float:
    """NLHF (Eq. 5): ``pi ∝ pi_ref exp(E_{o'~pi} P(o > o')/beta)``, ``P = 1, 1/2, 0`` for deterministic rewards."""
    r = np.asarray(rewards, float)
    M = (r[:, None] > r[None, :]) + 0.5 * (r[:, None] == r[None, :])
    return direct_resid(pi, pi_ref, M @ np.asarray(pi, float), beta)


# ---------------------------------------------------------------- binary questions, large G, in mpmath
def binary_p_mp(x, G, ddof=0, eps=0.0, normalization="scale"):
    """``(P_G(a|pi), P_G(b|pi))``, ``pi(a) = x``, rewards 1 and 0: the sum over ``k ~ Binomial(G-1, x)``."""
    with mp.workdps(MP_DPS):
        x = mp.mpf(x)
        G = int(G)
        w = (1 - x) ** (G - 1)
        ratio = x / (1 - x)
        pa = pb = mp.mpf(0)
        for k in range(G):
            if k:
                w = w * (G - k) / k * ratio
            for r0, ones in ((1, k + 1), (0, k)):
                m = mp.mpf(ones) / G
                if normalization == "shift":
                    a = r0 - m
                elif ones in (0, G):
                    a = mp.mpf(0)
                else:
                    a = (r0 - m) / (mp.sqrt(m * (1 - m) * G / (G - ddof)) + eps)
                if r0:
                    pa += w * a
                else:
                    pb += w * a
        return pa, pb


def binary_root(p, beta, G, penalty="reverse", ddof=0, eps=0.0, normalization="scale", n=300) -> float:
    """The first root above ``p`` of the binary condition: reverse ``x (1-x) Delta(x) = beta (x - p)``, direct
    ``Delta(x) = beta (logit x - logit p)``, ``Delta = P_G(a) - P_G(b)``; 1.0 where there is none below 1."""
    with mp.workdps(MP_DPS):
        p, b = mp.mpf(p), mp.mpf(beta)

        def delta(x):
            if G == math.inf:
                return 1 / (mp.sqrt(x * (1 - x)) + eps) if normalization == "scale" else mp.mpf(1)
            pa, pb = binary_p_mp(x, G, ddof, eps, normalization)
            return pa - pb

        if penalty == "reverse":
            f = lambda x: x * (1 - x) * delta(x) - b * (x - p)  # noqa: E731
        else:
            lp = mp.log(p / (1 - p))
            f = lambda x: delta(x) - b * (mp.log(x / (1 - x)) - lp)  # noqa: E731
        return _first_root(f, p, n=n, top_digits=30, halvings=120)


# ---------------------------------------------------------------- docs/predict.md
def pass_before(n, c, k) -> float:
    """``1 - C(n-c, k)/C(n, k)`` (exact integers)."""
    if k > n:
        return math.nan
    return float(1 - mp.mpf(math.comb(n - c, k)) / math.comb(n, k))


def pass_after(x, k) -> float:
    with mp.workdps(MP_DPS):
        return float(1 - (1 - mp.mpf(x)) ** k)


def jeffreys(c, n, level=0.95):
    from scipy.stats import beta

    a = (1 - level) / 2
    return float(beta.ppf(a, c + 0.5, n - c + 0.5)), float(beta.ppf(1 - a, c + 0.5, n - c + 0.5))


def wilson(c, n, level=0.95):
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    ph = c / n
    den = 1 + z * z / n
    mid = (ph + z * z / (2 * n)) / den
    half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def kl2(x, p) -> float:
    """``x log(x/p) + (1-x) log((1-x)/(1-p))`` (0 log 0 = 0)."""
    with mp.workdps(MP_DPS):
        x, p = mp.mpf(x), mp.mpf(p)
        t = lambda a, b: a * mp.log(a / b) if a > 0 else mp.mpf(0)  # noqa: E731
        return float(t(x, p) + t(1 - x, 1 - p))
