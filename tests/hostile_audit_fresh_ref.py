"""Independent reference computations for the fresh hostile audit (:mod:`hostile_audit_fresh`).

Nothing here imports ``grpo_theory``: every number is computed from SPEC.md's definitions.

* ``ref_pg``: ``P_G(o | pi)`` for deterministic rewards, by enumerating every group of the ``G - 1`` other
  answers (scale normalisation, ``std_ddof``, ``std_eps``; advantage 0 where the group's std is 0), the shift-only
  form ``((G-1)/G)(r(o) - E_pi r)`` and the large-G form ``(r(o) - E_pi r)/sigma_pi`` (SPEC section 2).
* ``stationary_ok``: the stationarity condition of SPEC section 3 on the support of ``pi`` (reverse:
  ``pi(o)(1 - (P_G(o) - E_pi P_G)/beta) = pi_ref(o)``; direct: ``log(pi/pi_ref) - P_G/beta`` constant).
* ``eq14``, ``eq15``, ``g2_direct``: SPEC section 4's binary closed forms in 300-digit mpmath.
* ``rlhf``: ``pi ∝ pi_ref exp(r/beta)`` in log space; ``nlhf_ok``: the NLHF fixed point with ties counted half.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def ref_pg(pi, r, G, *, normalization="scale", ddof=0, eps=0.0):
    """``P_G(o | pi)`` per output ``o`` (deterministic rewards ``r``)."""
    pi, r = np.asarray(pi, float), np.asarray(r, float)
    d = r - r.min()                                     # both advantages are invariant to a shift of r
    if not np.all(np.isfinite(d)):                     # [-1e300, 1e300]: shift after dividing by max |r|
        s = float(np.max(np.abs(r)))
        d, eps = r / s - (r / s).min(), eps / s
        if normalization == "shift":
            raise ValueError("shift-only advantages overflow")
    if normalization == "shift":
        f = 1.0 if math.isinf(G) else (G - 1) / G
        return f * (d - float(pi @ d))
    t = float(d.max())                                  # scale: invariant to r -> r / t with eps -> eps / t
    if t == 0:
        return np.zeros_like(r)
    r, eps = d / t, eps / t
    if math.isinf(G):
        mean = float(pi @ r)
        sigma = math.sqrt(max(float(pi @ (r - mean) ** 2), 0.0))
        return (r - mean) / (sigma + eps) if sigma + eps > 0 else np.zeros_like(r)
    levels, cls = np.unique(r, return_inverse=True)   # pool outputs by reward (SPEC section 2)
    q = np.bincount(cls, weights=pi, minlength=len(levels))
    L, G = len(levels), int(G)
    if L ** (G - 1) > 200_000:
        raise ValueError("too many groups to enumerate")
    idx = np.array(list(itertools.product(range(L), repeat=G - 1)), dtype=int).reshape(-1, G - 1)
    w = np.prod(q[idx], axis=1) if G > 1 else np.ones(1)
    out = np.zeros(L)
    for o in range(L):
        rewards = np.concatenate([np.full((len(idx), 1), levels[o]), levels[idx]], axis=1)
        m = rewards.mean(axis=1)
        sd = np.sqrt(((rewards - m[:, None]) ** 2).sum(axis=1) / (G - ddof))
        num = rewards[:, 0] - m
        den = sd + eps
        a = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        out[o] = float(w @ a)
    return out[cls]


def stationary_ok(pi, pi_ref, r, beta, G, *, penalty="reverse", normalization="scale", ddof=0, eps=0.0,
                  tol=1e-7) -> bool:
    """Does ``pi`` satisfy the stationarity condition on its support (to ``tol``)?"""
    pi, pi_ref = np.asarray(pi, float), np.asarray(pi_ref, float)
    if not (np.all(np.isfinite(pi)) and abs(pi.sum() - 1) < 1e-9 and np.all(pi >= 0)):
        return False
    P = ref_pg(pi, r, G, normalization=normalization, ddof=ddof, eps=eps)
    EP = float(pi @ P)
    sup = pi > 1e-12
    if penalty == "reverse":
        lhs = pi * (1 - (P - EP) / beta)
        return bool(np.all(np.abs(lhs[sup] - pi_ref[sup]) <= tol * np.maximum(pi_ref[sup], 1e-3)))
    c = np.log(pi[sup]) - np.log(pi_ref[sup]) - P[sup] / beta
    return bool(np.ptp(c) <= tol * max(1.0, float(np.max(np.abs(P[sup] / beta)))))


def rlhf(pi_ref, r, beta):
    """``pi ∝ pi_ref exp(r / beta)``, in log space."""
    pi_ref, r = np.asarray(pi_ref, float), np.asarray(r, float)
    with np.errstate(divide="ignore"):
        z = np.log(pi_ref) + (r - r.max()) / beta
    z = z - np.max(z)
    w = np.exp(z)
    return w / w.sum()


def nlhf_ok(pi, pi_ref, r, beta, tol=1e-7) -> bool:
    """NLHF (SPEC Eq. 5): ``log(pi/pi_ref) - E_{o'~pi} P(o > o')/beta`` constant, ties counted half."""
    pi, pi_ref, r = (np.asarray(a, float) for a in (pi, pi_ref, r))
    M = (r[:, None] > r[None, :]) + 0.5 * (r[:, None] == r[None, :])
    s = M @ pi
    sup = pi > 1e-12
    c = np.log(pi[sup]) - np.log(pi_ref[sup]) - s[sup] / beta
    return bool(np.ptp(c) <= tol * max(1.0, 1 / beta))


def _mp():
    import mpmath as mp

    return mp


def eq14(p, beta, gamma=1.0) -> float:
    """SPEC Eq. 14 (G = 2, reverse), 300 digits."""
    mp = _mp()
    with mp.workdps(300):
        b = mp.mpf(beta) / mp.mpf(gamma)
        P = mp.mpf(p)
        if P == 0:
            return 0.0
        root = mp.sqrt((1 - b) ** 2 + 4 * b * P)
        if b <= 1:
            return float((1 - b + root) / 2)
        return float(2 * b * P / (root - (1 - b)))      # the same root, without cancellation for b > 1


def eq15(p, beta) -> float:
    """SPEC Eq. 15 (large G, reverse), 300 digits."""
    mp = _mp()
    with mp.workdps(300):
        B, P = mp.mpf(beta), mp.mpf(p)
        if P == 0:
            return 0.0
        return float((2 * B ** 2 * P + 1 + mp.sqrt(1 + 4 * B ** 2 * P * (1 - P))) / (2 * (1 + B ** 2)))


def g2_direct(p, beta, gamma=1.0) -> float:
    """SPEC section 4, G = 2 direct penalty, 300 digits."""
    mp = _mp()
    with mp.workdps(300):
        e = mp.exp(mp.mpf(gamma) / (2 * mp.mpf(beta)))
        P = mp.mpf(p)
        return float(e * P / (e * P + (1 - P) / e))


def close(a, b, rel=1e-9, abs_=1e-300) -> bool:
    a, b = (float(np.asarray(v, float).ravel()[0]) if np.size(v) == 1 else float("nan") for v in (a, b))
    if math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)
