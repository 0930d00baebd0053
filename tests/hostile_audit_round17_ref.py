"""Independent reference of the seventeenth hostile audit, written from /work/shared/SPEC.md alone; it imports
nothing of ``grpo_theory`` and reuses no earlier round's reference.

* :func:`pg_enum`: ``P_G(o | pi) = E[A_1 | o_1 = o]`` by brute force over the *ordered* tuples of the other
  ``G - 1`` members (``itertools.product``), each weighted by its product of probabilities, ``math.fsum``; the
  advantage of Eq. 2 (``scale`` with ``ddof`` / ``eps``; a group of equal rewards has advantage 0), ``shift``
  and RLOO;
* :func:`binary_pg`: SPEC section 2's binomial form ``P_G(a) = E sqrt((G-1-k)/(k+1))``, ``P_G(b) = -E sqrt(k/(G-k))``
  with log-space binomial weights (``lgamma``), summed with ``fsum``;
* the closed forms of SPEC section 4, written from the quadratic each comes from (:func:`x_eq14` solves
  ``beta (x - p) = gamma x (1 - x)`` with the cancellation-free root; :func:`x_eq15` ``beta (x - p) = sqrt(x(1-x))``);
  the direct forms in logits; ``h`` and its turning point;
* :func:`pool` (RLHF, Eq. 4) in log space; :func:`eq11_res` the reverse rest's residual;
* SPEC section 8's estimators with both clamps (:func:`kl_val`, :func:`kl_slope`).
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
    return math.log(x / (1.0 - x)) if 0.05 < x < 0.95 else math.log(x) - math.log1p(-x)


# ---------------------------------------------------------------- P_G by ordered tuples
def _adv(group, kind, ddof, eps):
    G = len(group)
    m = math.fsum(group) / G
    if kind == "shift":
        return group[0] - m
    if kind == "rloo":
        return group[0] - math.fsum(group[1:]) / (G - 1)
    if max(group) == min(group):
        return 0.0
    s = math.sqrt(math.fsum((r - m) ** 2 for r in group) / (G - ddof))
    return (group[0] - m) / (s + eps)


def pg_enum(pi, rewards, G, kind="scale", ddof=0, eps=0.0):
    n = len(pi)
    out = []
    for o in range(n):
        terms = []
        for rest in itertools.product(range(n), repeat=G - 1):
            w = 1.0
            for j in rest:
                w *= pi[j]
            if w == 0.0:
                continue
            terms.append(w * _adv([rewards[o]] + [rewards[j] for j in rest], kind, ddof, eps))
        out.append(math.fsum(terms))
    return out


def binary_pg(x, G):
    """(P_G(a), P_G(b)) for a binary deterministic question, r(a) > r(b), scale normalisation, ddof 0."""
    if G == math.inf:
        if x <= 0.0 or x >= 1.0:
            return None
        s = math.sqrt(x * (1 - x))
        return (1 - x) / s, -x / s
    m = G - 1
    ta, tb = [], []
    for k in range(m + 1):
        if x == 0.0:
            w = 1.0 if k == 0 else 0.0
        elif x == 1.0:
            w = 1.0 if k == m else 0.0
        else:
            lw = math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1) + k * math.log(x) + (m - k) * math.log1p(-x)
            w = math.exp(lw)
        if w == 0.0:
            continue
        ta.append(w * math.sqrt((m - k) / (k + 1)))
        if k > 0:
            tb.append(w * math.sqrt(k / (G - k)))
    return math.fsum(ta), -math.fsum(tb)


# ---------------------------------------------------------------- SPEC section 4
def x_eq14(p, beta, gamma=1.0):
    """Root in [p, 1] of gamma x^2 + (beta - gamma) x - beta p = 0, computed without cancellation."""
    a, b, c = gamma, beta - gamma, -beta * p
    d = math.sqrt(b * b - 4 * a * c)
    if b <= 0:
        return (-b + d) / (2 * a)
    return (2 * -c) / (b + d)          # = (-b + d)/(2a), rationalised


def y_eq14(p, beta, gamma=1.0):
    """1 - x of Eq. 14: y solves gamma y^2 - (gamma + beta) y + beta (1 - p) = 0, the smaller root; its discriminant
    ``(gamma + beta)^2 - 4 gamma beta (1 - p)`` written as ``(beta - gamma)^2 + 4 gamma beta p`` (no cancellation)."""
    a, b, c = gamma, -(gamma + beta), beta * (1 - p)
    d = math.sqrt((beta - gamma) ** 2 + 4 * gamma * beta * p)
    return (2 * c) / (-b + d)


def x_eq15(p, beta):
    """beta^2 (x - p)^2 = x (1 - x), x >= p: (1 + beta^2) x^2 - (2 beta^2 p + 1) x + beta^2 p^2 = 0, larger root."""
    a, b, c = 1 + beta * beta, -(2 * beta * beta * p + 1), beta * beta * p * p
    d = math.sqrt(1 + 4 * beta * beta * p * (1 - p))
    return (-b + d) / (2 * a)


def y_eq15(p, beta):
    """1 - x of Eq. 15: with q = 1 - p, beta^2 (y - q)^2 = y (1 - y), the smaller root."""
    q = 1 - p
    a, b, c = 1 + beta * beta, -(2 * beta * beta * q + 1), beta * beta * q * q
    d = math.sqrt(1 + 4 * beta * beta * p * q)
    return (2 * c) / (-b + d)


def x_direct2(p, beta, gamma=1.0):
    return sig(lgt(p) + gamma / beta)


def x_shift_direct(p, beta, G, gap=1.0):
    return sig(lgt(p) + gap * (G - 1) / (G * beta) if G != math.inf else lgt(p) + gap / beta)


def h(x, p, beta):
    return 1 / (beta * math.sqrt(x * (1 - x))) - lgt(x) + lgt(p)


def turning(beta):
    return (1 + math.sqrt(1 - 1 / (1 + beta * beta))) / 2


# ---------------------------------------------------------------- baselines and rests
def pool(pi_ref, rewards, beta):
    logs = [(math.log(p) + r / beta) if p > 0 else -math.inf for p, r in zip(pi_ref, rewards)]
    m = max(logs)
    w = [math.exp(v - m) if v > -math.inf else 0.0 for v in logs]
    s = math.fsum(w)
    return [v / s for v in w]


def eq11_res(pi, pi_ref, P, beta):
    EP = math.fsum(a * b for a, b in zip(pi, P))
    return max(abs(a * (1 - (b - EP) / beta) - r) for a, b, r in zip(pi, P, pi_ref) if a > 1e-14)


# ---------------------------------------------------------------- SPEC section 8
def _raw(est, lr):
    if est == "k1":
        return lr
    if est == "k2":
        return lr * lr / 2
    if est == "abs":
        return abs(lr)
    return math.expm1(-lr) + lr          # k3 (and k3_ratio, k3_plus at pi_old = pi)


def _draw(est, lr):
    if est == "k1":
        return 1.0
    if est == "k2":
        return lr
    if est == "abs":
        return 1.0 if lr > 0 else -1.0
    return -math.expm1(-lr)              # 1 - e^{-lr}


def kl_val(est, lr, L=None, V=None):
    if L is not None:
        lr = min(max(lr, -L), L)
    v = _raw(est, lr)
    if V is not None:
        v = min(max(v, -V), V)
    return v


def kl_slope(est, lr, L=None, V=None):
    """d value / d lr with both clamps: 0 where either clip is active (away from its switch)."""
    if L is not None and abs(lr) > L:
        return 0.0
    if V is not None and abs(_raw(est, lr)) > V:
        return 0.0
    return _draw(est, lr)


# ---------------------------------------------------------------- comparison
def close(got, want, rtol, atol=0.0):
    """True, or a text naming the worst entry."""
    try:
        g = [float(v) for v in (got if hasattr(got, "__len__") else [got])]
    except TypeError:
        g = [float(got)]
    w = [float(v) for v in (want if hasattr(want, "__len__") else [want])]
    if len(g) != len(w):
        return f"shape: got {len(g)} values, want {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        if math.isinf(b) and a == b:
            continue
        if not (abs(a - b) <= atol + rtol * abs(b)):
            return f"entry {i}: got {a!r}, want {b!r} (rtol {rtol}, atol {atol})"
    return True
