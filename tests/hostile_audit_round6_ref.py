"""Independent references for the sixth hostile audit (:mod:`hostile_audit_round6`).

Nothing here imports ``grpo_theory``; every number comes from SPEC.md's and the docs' definitions:

* ``pg_random``: ``P_G(o | pi)`` for random rewards (``reward_levels``, ``reward_probs``), by enumerating the
  reward level of ``o`` and of each of the other ``G - 1`` members (drawn from ``q(l) = sum_o' pi(o') P(l|o')``);
  scale normalisation with ``ddof``/``eps`` (advantage 0 where ``std + eps = 0``) or shift-only.
* ``pg_preference``: ``P_2(o | pi) = sum_o' pi(o') (2 M[o, o'] - 1)`` (G = 2, ddof 0: the advantage is the sign).
* ``reverse_ok`` / ``direct_ok``: the stationarity condition of SPEC section 3 on the support, for any ``P``.
* ``bisect``: a root of a scalar function in 120-digit mpmath; ``binary_*`` roots built on it (REINFORCE++,
  entropy-only, Dr. GRPO at G).
* ``kl_value``/``kl_coef``: the estimator table of docs/conventions.md, with clamps.
* ``sampling_floor``, ``fit_shift``: the definitions in ``grpo_theory.predict``'s docstrings, by ``math.comb``
  and bisection.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def _adv(rew: np.ndarray, ddof: int, eps: float, normalization: str) -> np.ndarray:
    """Advantage of member 0 in each row of ``rew`` (groups as rows)."""
    G = rew.shape[1]
    m = rew.mean(axis=1)
    if normalization == "shift":
        return rew[:, 0] - m
    sd = np.sqrt(((rew - m[:, None]) ** 2).sum(axis=1) / (G - ddof))
    den = sd + eps
    return np.where(den > 0, (rew[:, 0] - m) / np.where(den > 0, den, 1.0), 0.0)


def pg_random(pi, levels, probs, G: int, *, ddof=0, eps=0.0, normalization="scale") -> np.ndarray:
    """``P_G(o | pi)`` for random rewards, by enumeration over every member's level."""
    pi, levels, probs = np.asarray(pi, float), np.asarray(levels, float), np.asarray(probs, float)
    L = len(levels)
    q = pi @ probs                                         # the other members' level distribution
    idx = np.array(list(itertools.product(range(L), repeat=G - 1)), dtype=int).reshape(-1, G - 1)
    w = np.prod(q[idx], axis=1)
    out = np.zeros(len(pi))
    for lo in range(L):
        rew = np.concatenate([np.full((len(idx), 1), levels[lo]), levels[idx]], axis=1)
        a = float(w @ _adv(rew, ddof, eps, normalization))
        out += probs[:, lo] * a
    return out


def pg_random_inf(pi, levels, probs) -> np.ndarray:
    """Large-G limit, scale normalisation: ``(E[r|o] - mu)/sigma`` with ``mu, sigma`` of the mixture."""
    pi, levels, probs = np.asarray(pi, float), np.asarray(levels, float), np.asarray(probs, float)
    er = probs @ levels
    q = pi @ probs
    mu = float(q @ levels)
    sigma = math.sqrt(float(q @ (levels - mu) ** 2))
    return (er - mu) / sigma if sigma > 0 else np.zeros_like(er)


def pg_preference(pi, M) -> np.ndarray:
    """G = 2, ddof 0: ``P_2(o) = sum_o' pi(o') (2 M[o, o'] - 1)``."""
    return (2 * np.asarray(M, float) - 1) @ np.asarray(pi, float)


def reverse_ok(pi, pi_ref, P, beta, tol=1e-7) -> bool:
    """``pi(o) (1 - (P(o) - E_pi P)/beta) = pi_ref(o)`` on the support of ``pi``."""
    pi, pi_ref, P = (np.asarray(v, float) for v in (pi, pi_ref, P))
    e = float(pi @ P)
    lhs = pi * (1 - (P - e) / beta)
    return bool(np.all(np.abs(lhs - pi_ref) <= tol * max(1.0, float(np.max(np.abs(pi_ref))))))


def direct_ok(pi, pi_ref, P, beta, tol=1e-7) -> bool:
    """``log(pi/pi_ref) - P/beta`` constant over the support."""
    pi, pi_ref, P = (np.asarray(v, float) for v in (pi, pi_ref, P))
    s = pi > 1e-300
    v = np.log(pi[s] / pi_ref[s]) - P[s] / beta
    return bool(np.ptp(v) <= tol * max(1.0, float(np.max(np.abs(P))) / beta))


def _mp(dps=120):
    import mpmath

    mpmath.mp.dps = dps
    return mpmath


def bisect(f, lo, hi, n=400) -> float:
    """A root of ``f`` on ``[lo, hi]`` (a sign change is required), in mpmath."""
    mp = _mp()
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    flo = f(lo)
    if flo * f(hi) > 0:
        raise ValueError("no sign change")
    for _ in range(n):
        mid = (lo + hi) / 2
        fm = f(mid)
        if fm == 0:
            return float(mid)
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return float((lo + hi) / 2)


def binary_reinforce_pp(p, beta, G) -> float:
    """REINFORCE++ (docs/guide.md): ``s / sqrt(x(1-x)) = beta (x - p)/(x(1-x))``, ``s = sqrt((G-1)/G)``."""
    mp = _mp()
    s = mp.mpf(1) if math.isinf(G) else mp.sqrt(mp.mpf(G - 1) / G)
    p, b = mp.mpf(p), mp.mpf(beta)
    return bisect(lambda x: s * mp.sqrt(x * (1 - x)) - b * (x - p), p, 1 - mp.mpf(10) ** -100)


def _delta_binary(x, G):
    """``P_G(a) - P_G(b)`` for rewards (1, 0) at ``pi(a) = x`` (scale, ddof 0), by a binomial sum in mpmath."""
    mp = _mp()
    if math.isinf(G):
        return 1 / mp.sqrt(x * (1 - x))
    d = mp.mpf(0)
    for j in range(G):                    # j of the other G - 1 members are correct
        w = mp.binomial(G - 1, j) * x ** j * (1 - x) ** (G - 1 - j)
        for own in (1, 0):
            k = j + own
            if k in (0, G):
                continue
            m = mp.mpf(k) / G
            sd = mp.sqrt(m * (1 - m))
            a = (own - m) / sd
            d += w * (a if own else -a)
    return d


def binary_entropy_only(G, c) -> float:
    """``beta = 0``, entropy bonus ``c``, rewards (1, 0): ``Delta(x) = c logit(x)`` (docs/guide.md)."""
    mp = _mp()
    return bisect(lambda x: _delta_binary(x, G) - c * mp.log(x / (1 - x)), mp.mpf("0.5"), 1 - mp.mpf(10) ** -30)


def binary_group_reverse(p, beta, G) -> float:
    """Group advantage, reverse: ``Delta(x) = beta (x - p)/(x (1 - x))`` (the stable interior root from p up)."""
    mp = _mp()
    p, b = mp.mpf(p), mp.mpf(beta)
    return bisect(lambda x: _delta_binary(x, G) * x * (1 - x) - b * (x - p), p, 1 - mp.mpf(10) ** -60)


def eq14(p, beta, gamma=1.0) -> float:
    """SPEC Eq. 14 root, rationalised (no cancellation): ``x = 2p / (1 - b + sqrt((1 - b)^2 + 4 b p))``, b = gamma/beta."""
    mp = _mp()
    p, b = mp.mpf(p), mp.mpf(gamma) / mp.mpf(beta)
    disc = mp.sqrt((1 - b) ** 2 + 4 * b * p)
    if b <= 1:
        return float(2 * p / (1 - b + disc))
    return float((b - 1 + disc) / (2 * b))


def kl_value(est, lr, log_clamp=None, value_clamp=None) -> float:
    """docs/conventions.md's table, with verl's clamps (the log-ratio first, then the value)."""
    if log_clamp is not None:
        lr = min(max(lr, -log_clamp), log_clamp)
    if est == "k1":
        v = lr
    elif est == "k2":
        v = lr * lr / 2
    elif est in ("k3", "k3_plus", "k3_ratio"):
        v = math.exp(-lr) + lr - 1 if lr > -700 else math.inf
    elif est == "abs":
        v = abs(lr)
    else:
        raise ValueError(est)
    if value_clamp is not None:
        v = min(max(v, -value_clamp), value_clamp)
    return v


def kl_coef_loss(est, lr) -> float:
    """``c`` in the loss, no clamp: k1 1, k2 lr, k3 1 - e^{-lr}, k3_ratio lr, k3_plus lr, abs sign(lr)."""
    return {"k1": 1.0, "k2": lr, "k3": 1 - math.exp(-lr), "k3_ratio": lr, "k3_plus": lr,
            "abs": float(np.sign(lr))}[est]


def sampling_floor(q, m) -> float:
    """``mean_j E|Bin(m_j, q_j)/m_j - q_j|`` by exact summation (fractions of ``math.comb``)."""
    tot = 0.0
    for qj, mj in zip(q, m):
        tot += sum(math.comb(mj, k) * qj ** k * (1 - qj) ** (mj - k) * abs(k / mj - qj) for k in range(mj + 1))
    return tot / len(q)


def fit_shift(z0, k, m) -> float:
    """Root in ``c`` of ``sum_j k_j - m_j expit(z0_j + c)`` (bisection in mpmath on [-50, 50])."""
    mp = _mp(50)
    return bisect(lambda c: sum(mp.mpf(kj) - mj / (1 + mp.exp(-(mp.mpf(z) + c))) for z, kj, mj in zip(z0, k, m)),
                  -50, 50, n=200)


def close(a, b, rel=1e-9, abs_=1e-12) -> bool:
    return abs(float(a) - float(b)) <= max(abs_, rel * max(abs(float(a)), abs(float(b))))
