"""Independent reference of the fifteenth hostile audit: written from /work/shared/SPEC.md's definitions, imports
nothing of ``grpo_theory``.

* :func:`enum_pg`: ``P_G(o | pi) = E[A_1 | o_1 = o]`` by summing over every ordered tuple ``(o_2..o_G)`` of the other
  members (and every tuple of reward levels where rewards are random), each weighted by its probability, with the
  advantage of Eq. 2 (``scale``: ``(r - mean)/(std_ddof + eps)``, 0 where all rewards are equal; ``shift``:
  ``r - mean``) or RLOO's ``r_1 - mean of the others`` (``math.fsum``: 1e-16 relative per term);
* :func:`binary_pg`: the O(G) binomial form of SPEC section 2 for a binary deterministic question;
* the closed forms of SPEC section 4 (:func:`eq14`, :func:`eq15`, :func:`g2_direct`, :func:`shift_direct`), RLHF's
  log pooling (:func:`log_pool`), the large-G direct ``h`` and its turning point;
* :func:`binary_rest`: the stationary ``x = pi(a)`` of a binary question at finite G by bisection of the rest
  condition ``beta (x - p) = x (1 - x) (P_a - P_b)`` (reverse) or ``logit x = logit p + (P_a - P_b)/beta``
  (direct), in the logit, to the last bit;
* :func:`kkt_residual`: Eq. 11's residual ``max_o |pi(o) (1 - (P(o) - E_pi P)/beta) - pi_ref(o)|`` over the support;
* :func:`rk4_flow`: the on-policy expected-gradient flow on softmax logits, ``dz_o/dt = pi(o) (g(o) - E_pi g)`` with
  ``g = P_G - beta (1 - pi_ref/pi)`` (reverse) or ``P_G - beta (log(pi/pi_ref) + 1)`` (direct), plain RK4;
* the KL estimators of SPEC section 8; the unbiased pass@k ``1 - C(n-c, k)/C(n, k)``; Jeffreys' interval.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def expit(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def logit(x: float) -> float:
    return math.log(x) - math.log1p(-x)


# ---------------------------------------------------------------- the advantage and P_G by enumeration
def advantage_first(r, kind="scale", ddof=0, eps=0.0):
    """``A_1`` of the group ``r`` (Eq. 2, its shift-only form, or RLOO)."""
    G = len(r)
    m = math.fsum(r) / G
    if kind == "shift":
        return r[0] - m
    if kind == "rloo":
        return r[0] - math.fsum(r[1:]) / (G - 1)
    if all(x == r[0] for x in r):
        return 0.0
    var = math.fsum((x - m) ** 2 for x in r) / (G - ddof)
    return (r[0] - m) / (math.sqrt(var) + eps)


def enum_pg(pi, laws, G, kind="scale", ddof=0, eps=0.0):
    """``P_G(o | pi)`` for every output; ``laws[o]`` is a list of ``(level, prob)`` pairs (deterministic: one pair)."""
    n = len(pi)
    out = []
    for o in range(n):
        terms = []
        for others in itertools.product(range(n), repeat=G - 1):
            w = math.prod(pi[j] for j in others)
            if w == 0:
                continue
            for combo in itertools.product(*(laws[j] for j in (o,) + others)):
                p = w * math.prod(c[1] for c in combo)
                if p == 0:
                    continue
                terms.append(p * advantage_first([c[0] for c in combo], kind, ddof, eps))
        out.append(math.fsum(terms))
    return out


def det_laws(rewards):
    return [[(float(r), 1.0)] for r in rewards]


def binary_pg(x: float, G: int, ddof: int = 0, eps: float = 0.0):
    """``(P_G(a), P_G(b))`` for deterministic ``r(a) = 1 > r(b) = 0``, scale normalisation (SPEC section 2), summed
    over ``k ~ Binomial(G - 1, x)`` correct answers among the others: a group with ``j`` ones has mean ``m = j/G`` and
    std ``sqrt(m (1 - m) G/(G - ddof))``; Eq. 2's advantage ``(r - m)/(std + eps)``, 0 where all rewards tie."""
    pa, pb = [], []
    c = math.sqrt(G / (G - ddof))
    for k in range(G):
        lw = (math.lgamma(G) - math.lgamma(k + 1) - math.lgamma(G - k)
              + (k * math.log(x) if k else 0.0) + ((G - 1 - k) * math.log1p(-x) if G - 1 - k else 0.0))
        w = math.exp(lw)
        j = k + 1                                          # o_1 = a
        m = j / G
        pa.append(0.0 if j == G else w * (1 - m) / (math.sqrt(m * (1 - m)) * c + eps))
        m = k / G                                          # o_1 = b
        pb.append(0.0 if k == 0 else w * (-m) / (math.sqrt(m * (1 - m)) * c + eps))
    return math.fsum(pa), math.fsum(pb)


# ---------------------------------------------------------------- closed forms (SPEC section 4)
def eq14(p, beta, gamma=1.0):
    """Eq. 14; ``gamma = 0`` (a tie) gives ``p``; the root written without cancellation or overflow (``hypot``; for
    ``b > 1`` the rationalised form ``2 b p / (b - 1 + h)``)."""
    if gamma == 0:
        return p
    b = beta / gamma
    h = math.hypot(1 - b, 2 * math.sqrt(b * p))
    return 0.5 * (1 - b + h) if b <= 1 else 2 * b * p / (b - 1 + h)


def eq14_one_minus(p, beta, gamma=1.0):
    """``1 - x`` of Eq. 14 without cancellation: the other root's form ``b (1 - p) / x`` from
    ``x^2 - (1 - b) x - b p = 0`` rewritten for ``y = 1 - x``: ``y^2 - (1 + b) y + b (1 - p) = 0``, the small root."""
    b = beta / gamma
    s = 1 + b
    disc = s * s - 4 * b * (1 - p)
    big = 0.5 * (s + math.sqrt(disc))
    return b * (1 - p) / big


def eq15(p, beta):
    b2 = beta * beta
    return (2 * b2 * p + 1 + math.sqrt(1 + 4 * b2 * p * (1 - p))) / (2 * (1 + b2))


def g2_direct(p, beta, gamma=1.0):
    return expit(logit(p) + gamma / beta)


def shift_direct(p, beta, G, gap=1.0):
    f = 1.0 if G == math.inf else (G - 1) / G
    return expit(logit(p) + f * gap / beta)


def log_pool(pi_ref, rewards, beta):
    z = [math.log(p) + r / beta for p, r in zip(pi_ref, rewards)]
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = math.fsum(e)
    return [v / s for v in e]


def large_group_direct_h(x, p, beta):
    return 1 / (beta * math.sqrt(x * (1 - x))) - logit(x) + logit(p)


def large_group_direct_turning_point(beta):
    return (1 + math.sqrt(1 - 1 / (1 + beta * beta))) / 2


def binary_rest(p, beta, G, penalty="reverse", pg=None, ddof=0, eps=0.0):
    """The stationary ``x`` of a binary question from ``pi_ref`` (module doc), by bisection in the logit between the
    root bracket that contains the flow's end from ``p`` (the first sign change moving from ``logit p`` upwards:
    ``P_a - P_b > 0``, so the drift at ``p`` pushes ``x`` up)."""
    pg = pg or (lambda x: binary_pg(x, G, ddof, eps))

    def drift(z):
        x = expit(z)
        pa, pb = pg(x)
        if penalty == "reverse":
            return x * (1 - x) * (pa - pb) - beta * (x - p)
        return (pa - pb) / beta - (z - logit(p))

    lo = logit(p)
    step = 0.01
    hi = lo + step
    while drift(hi) > 0:
        lo, step = hi, step * 1.5
        hi = lo + step
        if hi > 745:
            return 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if drift(mid) > 0:
            lo = mid
        else:
            hi = mid
    return expit(0.5 * (lo + hi))


def kkt_residual(pi, pi_ref, P, beta):
    """Eq. 11's residual over the support of ``pi``."""
    ep = math.fsum(a * b for a, b in zip(pi, P))
    return max(abs(a * (1 - (b - ep) / beta) - r) for a, b, r in zip(pi, P, pi_ref) if a > 0)


def direct_residual(pi, pi_ref, P, beta):
    """The direct penalty's rest: ``pi ∝ pi_ref exp(P/beta)``, the max difference of the two normalised sides."""
    z = [math.log(r) + b / beta for r, b in zip(pi_ref, P)]
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = math.fsum(e)
    return max(abs(a - v / s) for a, v in zip(pi, e))


def rk4_flow(pi_ref, laws, G, beta, t_end, dt=0.05, kind="scale", penalty="reverse", ddof=0, eps=0.0, pi0=None):
    """The flow's end on the logits (module doc), plain RK4 of step ``dt``."""
    z = np.log(np.asarray(pi0 if pi0 is not None else pi_ref, float))
    pr = np.asarray(pi_ref, float)

    def f(z):
        pi = np.exp(z - z.max())
        pi /= pi.sum()
        P = np.array(enum_pg(list(pi), laws, G, kind, ddof, eps))
        if penalty == "reverse":
            g = P - beta * (1 - pr / pi)
        else:
            g = P - beta * (np.log(pi / pr) + 1)
        return pi * (g - pi @ g)

    for _ in range(int(round(t_end / dt))):
        k1 = f(z)
        k2 = f(z + dt / 2 * k1)
        k3 = f(z + dt / 2 * k2)
        k4 = f(z + dt * k3)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    pi = np.exp(z - z.max())
    return pi / pi.sum()


def euler_binary(p, beta, G, t_end, dt=1e-3, penalty="reverse", x0=None):
    """A plain Euler flow of a binary question on ``z = z_a - z_b``: with ``dz_o/dt = pi(o) (g(o) - E_pi g)``,
    ``dz/dt = 2 x (1 - x) (g_a - g_b)``, ``g`` as in :func:`rk4_flow`; from ``x0`` (default ``p``)."""
    x = p if x0 is None else x0
    z = logit(x)
    n = int(round(t_end / dt))
    for _ in range(n):
        x = expit(z)
        pa, pb = binary_pg(x, G)
        if penalty == "reverse":
            ga, gb = pa - beta * (1 - p / x), pb - beta * (1 - (1 - p) / (1 - x))
        else:
            ga, gb = pa - beta * (math.log(x / p) + 1), pb - beta * (math.log((1 - x) / (1 - p)) + 1)
        z += dt * 2 * x * (1 - x) * (ga - gb)
    return expit(z)


# ---------------------------------------------------------------- KL estimators (SPEC section 8)
def k1(lr):
    return lr


def k2(lr):
    return lr * lr / 2


def k3(lr):
    """``rho - log rho - 1`` with ``rho = e^{-lr}``: ``expm1(-lr) + lr``, and near 0 (|lr| < 1e-2, where that
    cancels) its Taylor series ``sum_{n>=2} (-lr)^n / n!`` to order 12 (remainder < 1e-26 relative)."""
    if abs(lr) < 1e-2:
        return math.fsum((-lr) ** n / math.factorial(n) for n in range(2, 13))
    return math.expm1(-lr) + lr


# ---------------------------------------------------------------- counts
def pass_at_k(n, c, k):
    """``1 - C(n - c, k)/C(n, k)`` (None where ``k > n``), the ratio as a product of ``min(c, k)`` factors
    ``C(n-c, k)/C(n, k) = prod_{i<c} (1 - k/(n - i)) = prod_{j<k} (1 - c/(n - j))`` summed in logs with ``log1p``
    (exact integers up to 2^53; no ``lgamma`` of huge arguments, whose rounding is ~1e-3 at 1e12)."""
    if k > n:
        return None
    if n - c < k:
        return 1.0
    if c <= k:
        s = math.fsum(math.log1p(-k / (n - i)) for i in range(c))
    else:
        s = math.fsum(math.log1p(-c / (n - j)) for j in range(k))
    return -math.expm1(s)


def jeffreys(c, n, level=0.95):
    from scipy.stats import beta as B

    a = (1 - level) / 2
    lo = 0.0 if c == 0 else B.ppf(a, c + 0.5, n - c + 0.5)
    hi = 1.0 if c == n else B.ppf(1 - a, c + 0.5, n - c + 0.5)
    return lo, hi


def close(got, want, rtol, atol=0.0):
    """True, or a text naming the first pair that differs beyond ``atol + rtol |want|``."""
    g = np.asarray(got, float).ravel()
    w = np.asarray(want, float).ravel()
    if g.shape != w.shape:
        return f"shape {g.shape} != {w.shape}"
    for a, b in zip(g, w):
        if not abs(a - b) <= atol + rtol * abs(b):
            return f"got {a!r}, reference {b!r} (rtol {rtol}, atol {atol})"
    return True


def close_prob(got, want, rtol):
    """Probabilities compared in the smaller of ``x`` and ``1 - x`` (near 1 the complement carries the digits):
    ``want`` is ``(x, 1 - x)`` from the reference, ``got`` the library's ``x`` (its ``1 - x`` is computed from it, so
    the library's rounding of ``x`` near 1, 1.1e-16 absolute, is allowed on that side)."""
    x, y = want
    if x <= 0.5:
        return close(got, x, rtol)
    return close(1 - got, y, rtol, 1.2e-16)
