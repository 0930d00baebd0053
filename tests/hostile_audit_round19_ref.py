"""Independent reference of the nineteenth hostile audit, written from /work/shared/SPEC.md and the public docstrings
alone; it imports nothing of ``grpo_theory`` and reuses no earlier round's reference.

* :func:`kl_value`, :func:`kl_coef`, :func:`kl_slope`, :func:`kl_floor`: SPEC section 8's estimators (k1, k2, k3, abs,
  k3_ratio, k3_plus) with the log-ratio clamp ``L`` applied before the value and the value clamp ``V`` after it, the
  gradient 0 where either clip is active; the loss coefficient ``d value/d lr`` (k3_ratio: plus the value), the
  advantage coefficient (the value);
* :func:`pa_binom`: SPEC section 2's ``P_G(a | x) = E sqrt((G-1-k)/(k+1))``, log-space binomial weights, ``fsum``;
  :func:`zero_limit`: the least ``x > 0`` where the limit update at ``pi_ref = (0, 1)`` stops being positive (the
  ``zero_limit`` docstring), by bisection of ``P_G(a | x) = beta`` (reverse/scale), ``1 - beta/(f gap)``
  (reverse/shift), 0 (direct);
* :func:`x14`, :func:`x15`, :func:`xlogit`, :func:`pool`: SPEC section 4's closed forms and Eq. 4;
  :func:`rest_k2_adv`: the binary rest of k2 in the advantage placement at G = 2 by bisection of
  ``1 = beta (lr_a^2 - lr_b^2)/2``;
* :func:`euler`, :func:`rk4`: the expected-gradient flow on logits ``d theta_o/dt = pi(o) (g(o) - E_pi g)``,
  ``g = P_G - beta c`` (c: ``1 - pi_ref/pi`` reverse, ``log(pi/pi_ref)`` direct) for G = 2 (``P_2(o) = sum pi(o')
  sign(r_o - r_o')``), G = inf (``(r - E r)/sigma``) and shift (``(G-1)/G (r - E r)``);
* :func:`jeffreys`, :func:`conformal_offsets`, :func:`conformal_interval` (every count ``k`` of ``0..m`` tried),
  :func:`start_logit`, :func:`clock_band`, :func:`first_crossing` (the predict package's docstrings);
* :func:`parse_version` (its docstring's rules), :func:`unbiased_pass` (``1 - C(n-c, k)/C(n, k)``).
"""

from __future__ import annotations

import math
from fractions import Fraction


def close(got, want, rtol, atol):
    """True, or the reason (a text), elementwise over sequences; infinities must match exactly."""
    g = list(got) if hasattr(got, "__len__") and not isinstance(got, str) else [got]
    w = list(want) if hasattr(want, "__len__") and not isinstance(want, str) else [want]
    if len(g) != len(w):
        return f"length {len(g)} != {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        a, b = float(a), float(b)
        if math.isinf(b) or math.isinf(a):
            if a != b:
                return f"[{i}] got {a!r}, want {b!r}"
            continue
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return f"[{i}] got {a!r}, want {b!r}"
            continue
        if abs(a - b) > atol + rtol * abs(b):
            return f"[{i}] got {a!r}, want {b!r} (diff {abs(a - b):.3g})"
    return True


def sig(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def lgt(x):
    return math.log(x) - math.log1p(-x)


# ---------------------------------------------------------------- SPEC section 8
def _raw(est, u):
    if est == "k1":
        return u
    if est == "k2":
        return u * u / 2
    if est == "abs":
        return abs(u)
    # k3, k3_ratio, k3_plus: the value of k3
    if u == -math.inf:
        return math.inf
    if u == math.inf:
        return math.inf
    return math.expm1(-u) + u


def _raw_slope(est, u):
    if est == "k1":
        return 1.0
    if est == "k2":
        return u
    if est == "abs":
        return 1.0 if u > 0 else -1.0
    if u == -math.inf:
        return -math.inf
    return -math.expm1(-u)               # 1 - e^{-u}


def kl_value(est, lr, L=None, V=None):
    u = lr if L is None else min(max(lr, -L), L)
    v = _raw(est, u)
    if V is not None:
        v = min(max(v, -V), V)
    return v


def _gated(lr, est, L, V):
    """True where a clamp is active (the gradient through it is 0)."""
    if L is not None and abs(lr) > L:
        return True
    if V is not None:
        u = lr if L is None else min(max(lr, -L), L)
        if abs(_raw(est, u)) > V:
            return True
    return False


def kl_slope(est, lr, L=None, V=None):
    """d value/d lr of the clamped estimator (0 where a clamp is active); k1, k2, k3, abs."""
    if _gated(lr, est, L, V):
        return 0.0
    return _raw_slope(est, lr)


def kl_coef(est, placement, lr, L=None, V=None):
    if placement == "advantage":
        return kl_value(est, lr, L, V)
    if est == "k3_ratio":                # d k3/d lr + k3 = lr (unclamped cases only)
        return lr
    if est == "k3_plus":                 # the gradient of k2
        return lr
    return kl_slope(est, lr, L, V)


def kl_floor(est, lr):
    if est in ("k3", "k3_ratio", "k3_plus"):
        return max(lr, -690.0)
    return lr


# ---------------------------------------------------------------- SPEC section 2, binomial
def pa_binom(x, G):
    """P_G(a | x) for a binary question with r(a) > r(b), scale normalisation, ddof 0."""
    if G == math.inf:
        return math.sqrt((1 - x) / x)
    n = G - 1
    if x <= 0:
        return math.sqrt(n)
    if x >= 1:
        return 0.0
    terms = []
    la, lb = math.log(x), math.log1p(-x)
    for k in range(n + 1):
        lw = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * la + (n - k) * lb
        terms.append(math.exp(lw) * math.sqrt((n - k) / (k + 1)))
    return math.fsum(terms)


def zero_limit(G, beta, kind="scale", penalty="reverse", gap=1.0):
    """x(0+) of the zero_limit docstring for a binary question, rewards (r_c, r_w) with gap r_c - r_w."""
    if penalty == "direct":
        return 0.0
    if kind == "shift":
        f = 1.0 if G == math.inf else (G - 1) / G
        return max(0.0, 1 - beta / (f * gap))
    if G == 2:
        return max(0.0, 1 - beta)
    if G == math.inf:
        return 1 / (1 + beta * beta)
    if beta >= math.sqrt(G - 1):
        return 0.0
    lo, hi = 0.0, 1.0                    # P_G(a|x) falls from sqrt(G-1) at 0 to 0 at 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if pa_binom(mid, G) > beta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# ---------------------------------------------------------------- SPEC section 4, closed forms
def x14(p, beta, gamma=1.0):
    a, b, c = gamma, beta - gamma, -beta * p
    d = math.sqrt(b * b - 4 * a * c)
    if b >= 0:
        return (-2 * c) / (b + d)
    return (-b + d) / (2 * a)


def x15(p, beta):
    b2 = beta * beta
    return (2 * b2 * p + 1 + math.sqrt(1 + 4 * b2 * p * (1 - p))) / (2 * (1 + b2))


def xlogit(p, shift):
    return sig(lgt(p) + shift)


def pool(pr, rw, beta):
    lw = [math.log(a) + r / beta for a, r in zip(pr, rw)]
    m = max(lw)
    e = [math.exp(v - m) for v in lw]
    s = math.fsum(e)
    return [v / s for v in e]


def rest_k2_adv(p, beta):
    """G = 2, k2 in the advantage placement: 1 = beta (log(x/p)^2 - log((1-x)/(1-p))^2)/2 on (p, 1)."""
    def f(x):
        return beta * (math.log(x / p) ** 2 - math.log((1 - x) / (1 - p)) ** 2) / 2 - 1
    lo, hi = p, 1.0
    for _ in range(300):
        mid = (lo + hi) / 2
        if mid == lo or mid == hi:
            break
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def kl_pair(x, p):
    """(KL(pi || pi_ref), KL(pi_ref || pi)) of two outputs."""
    def t(a, b):
        return 0.0 if a == 0 else a * math.log(a / b)
    return t(x, p) + t(1 - x, 1 - p), t(p, x) + t(1 - p, 1 - x)


# ---------------------------------------------------------------- the flow on logits
def _softmax(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = math.fsum(e)
    return [v / s for v in e]


def _drift(z, pr, rw, beta, G, kind, penalty):
    pi = _softmax(z)
    K = len(pi)
    er = math.fsum(a * r for a, r in zip(pi, rw))
    if kind == "shift":
        f = 1.0 if G == math.inf else (G - 1) / G
        P = [f * (r - er) for r in rw]
    elif G == 2:
        P = [math.fsum(pi[j] * ((rw[i] > rw[j]) - (rw[i] < rw[j])) for j in range(K)) for i in range(K)]
    else:                                # G = inf, scale
        sd = math.sqrt(math.fsum(a * (r - er) ** 2 for a, r in zip(pi, rw)))
        P = [(r - er) / sd for r in rw]
    if penalty == "reverse":
        c = [1 - a / b for a, b in zip(pr, pi)]
    else:
        c = [math.log(b / a) for a, b in zip(pr, pi)]
    g = [Pi - beta * ci for Pi, ci in zip(P, c)]
    eg = math.fsum(a * b for a, b in zip(pi, g))
    return [a * (b - eg) for a, b in zip(pi, g)]


def euler(pr, rw, beta, G, kind, penalty, lr, steps, pi0=None):
    z = [math.log(a) for a in (pi0 or pr)]
    for _ in range(steps):
        d = _drift(z, pr, rw, beta, G, kind, penalty)
        z = [a + lr * b for a, b in zip(z, d)]
    return _softmax(z)


def rk4(pr, rw, beta, G, kind, penalty, t, n=4000, pi0=None):
    z = [math.log(a) for a in (pi0 or pr)]
    h = t / n
    for _ in range(n):
        k1 = _drift(z, pr, rw, beta, G, kind, penalty)
        k2 = _drift([a + h / 2 * b for a, b in zip(z, k1)], pr, rw, beta, G, kind, penalty)
        k3 = _drift([a + h / 2 * b for a, b in zip(z, k2)], pr, rw, beta, G, kind, penalty)
        k4 = _drift([a + h * b for a, b in zip(z, k3)], pr, rw, beta, G, kind, penalty)
        z = [a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(z, k1, k2, k3, k4)]
    return _softmax(z)


# ---------------------------------------------------------------- the predict package's docstrings
def jeffreys(k, m):
    return lgt((k + 0.5) / (m + 1))


def conformal_offsets(p, k, m, level):
    r = sorted(jeffreys(a, b) - lgt(q) for q, a, b in zip(p, k, m))
    n = len(r)
    alpha = 1 - Fraction(str(level))
    i_lo = math.floor((n + 1) * alpha / 2)
    i_hi = math.ceil((n + 1) * (1 - alpha / 2))
    q_lo = r[i_lo - 1] if i_lo >= 1 else -math.inf
    q_hi = r[i_hi - 1] if i_hi <= n else math.inf
    return q_lo, q_hi, n


def conformal_interval(p, q_lo, q_hi, m):
    """(lo, hi) fractions k/m over the k with q_lo <= g(k, m) - logit p <= q_hi; None where no k qualifies."""
    z = lgt(p)
    ks = [k for k in range(m + 1) if q_lo - 1e-10 <= jeffreys(k, m) - z <= q_hi + 1e-10]
    if not ks:
        return None
    return min(ks) / m, max(ks) / m


def start_logit(n, c):
    if c == 0 or c == n:
        return lgt((c + 0.5) / (n + 1))
    return lgt(c / n)


def clock_band(times, path, t_lo, t_hi):
    """Per prompt (column) the least and largest value over grid times in [t_lo, t_hi] (ends on the grid)."""
    rows = [row for t, row in zip(times, path) if t_lo <= t <= t_hi]
    cols = list(zip(*rows))
    return [min(c) for c in cols], [max(c) for c in cols]


def first_crossing(times, path, target):
    means = [math.fsum(row) / len(row) for row in path]
    if means[0] == target:
        return times[0]
    for i in range(1, len(times)):
        a, b = means[i - 1] - target, means[i] - target
        if b == 0:
            return times[i]
        if (a < 0) != (b < 0):
            return times[i - 1] + (times[i] - times[i - 1]) * (target - means[i - 1]) / (means[i] - means[i - 1])
    return None


def parse_version(v):
    """The docstring's rules: up to three dot-separated numbers, then an optional suffix (.devN, rcN, aN, bN,
    .postN, +local) dropped; None where refused."""
    import re

    m = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?((?:\.?(?:dev|rc|a|b|post)\d*)*)(\+[A-Za-z0-9.]+)?", v)
    if m is None:
        return None
    return tuple(int(g) if g is not None else 0 for g in m.groups()[:3])


def unbiased_pass(n, c, k):
    if k > n:
        return None
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def rest_finite(p, beta, G):
    """The reverse/scale rest of a binary question at finite G: bisection of beta (x - p) = x P_G(a | x) on (p, 1)."""
    lo, hi = p, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if beta * (mid - p) - mid * pa_binom(mid, G) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def wilson(c, n, level):
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = c / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z / den * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def jeffreys_interval(c, n, level):
    """Beta(c + 1/2, n - c + 1/2) equal-tailed quantiles; 0 at c = 0 and 1 at c = n (the usual convention)."""
    from scipy.stats import beta as B

    a = (1 - level) / 2
    lo = 0.0 if c == 0 else float(B.ppf(a, c + 0.5, n - c + 0.5))
    hi = 1.0 if c == n else float(B.ppf(1 - a, c + 0.5, n - c + 0.5))
    return lo, hi
