"""Independent reference of the sixteenth hostile audit: written from /work/shared/SPEC.md's definitions (and the
formulas the docs state where SPEC is silent: REINFORCE++'s batch whitening, tie filtering at G = 2, the entropy
bonus, the KL estimators' clamps), imports nothing of ``grpo_theory``.

* :func:`count_pg`: ``P_G(o | pi) = E[A_1 | o_1 = o]`` summed over the *count vectors* of the other ``G - 1`` members
  (multinomial weights ``(G-1)!/prod c_j! prod pi_j^{c_j}``, exact integers, ``math.fsum``), a different route from
  round fifteen's ordered tuples; the advantage of Eq. 2 (``scale`` with ``ddof`` / ``eps``), ``shift``, RLOO
  (``r_1 - mean of the others``) and REINFORCE++ (``r_1 - group mean`` divided by the square root of its own variance
  over groups, computed by the same enumeration: the docs' "group mean, then batch whitening" with one question);
* :func:`binomial_pg`: SPEC section 2's O(G) binomial form for a binary deterministic question, weights in logs;
* closed forms of SPEC section 4 (:func:`eq14`, :func:`eq14_complement`, :func:`eq15`, :func:`direct2`,
  :func:`shift_direct`), the large-G direct ``h``, its turning point and its roots (:func:`h_roots`);
* :func:`rest_bisect`: the stationary ``x`` of a binary question at finite G from ``pi_ref``: the first zero above
  ``logit p`` of the logit drift (reverse: ``x (1-x) (P_a - P_b) - beta (x - p)``; direct: ``(P_a - P_b)/beta - (z -
  logit p)``), bisected to the last bit;
* :func:`log_pool` (RLHF), :func:`nash` (NLHF, SPEC section 5, by a damped fixed-point iteration on
  ``pi ∝ pi_ref exp(P(o > pi)/beta)`` until it stops moving), :func:`eq11_residual` and :func:`direct_residual`;
* :func:`rk4` of the logit flow ``dz_o/dt = pi(o) (g(o) - E_pi g)``;
* the KL estimators of SPEC section 8 with both clamps (:func:`kl_value`); the unbiased pass@k; Jeffreys' and
  Wilson's intervals.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def expit(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def logit(x):
    return math.log(x) - math.log1p(-x)


# ---------------------------------------------------------------- P_G by count vectors
def _compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def _adv(group, kind, ddof, eps, rpp_scale=None):
    G = len(group)
    m = math.fsum(group) / G
    if kind == "shift":
        return group[0] - m
    if kind == "rloo":
        return group[0] - math.fsum(group[1:]) / (G - 1)
    if kind == "rpp":
        return (group[0] - m) / rpp_scale
    if max(group) == min(group):
        return 0.0
    var = math.fsum((g - m) ** 2 for g in group) / (G - ddof)
    return (group[0] - m) / (math.sqrt(var) + eps)


def count_pg(pi, rewards, G, kind="scale", ddof=0, eps=0.0):
    """``P_G(o|pi)`` for deterministic ``rewards`` (module doc)."""
    n = len(pi)
    rpp_scale = None
    if kind == "rpp":
        # Var over groups of r_1 - mean(r): (G-1)/G sigma^2 in theory; here enumerated directly
        mu = math.fsum(p * r for p, r in zip(pi, rewards))
        var = math.fsum(p * (r - mu) ** 2 for p, r in zip(pi, rewards))
        rpp_scale = math.sqrt(var * (G - 1) / G)
    out = []
    lf = [math.lgamma(k + 1) for k in range(G + 1)]
    for o in range(n):
        terms = []
        for c in _compositions(G - 1, n):
            if any(ci and pi[j] == 0 for j, ci in enumerate(c)):
                continue
            lw = lf[G - 1] - sum(lf[ci] for ci in c) + sum(ci * math.log(pi[j]) for j, ci in enumerate(c) if ci)
            group = [rewards[o]] + [rewards[j] for j, ci in enumerate(c) for _ in range(ci)]
            terms.append(math.exp(lw) * _adv(group, kind, ddof, eps, rpp_scale))
        out.append(math.fsum(terms))
    return out


def law_pg(pi, levels, probs, G, kind="scale", ddof=0, eps=0.0):
    """``P_G(o|pi)`` for random rewards: ``probs[o][l] = P(r = levels[l] | o)``. Each member's reward is a draw from
    the mixture ``w_l = sum_o pi(o) probs[o][l]``, so ``E[A_1 | r_1 = v_l]`` is :func:`count_pg` of the levels as
    outputs with policy ``w``, and ``P_G(o) = sum_l probs[o][l] E[A_1 | r_1 = v_l]``."""
    w = [math.fsum(p * pr[l] for p, pr in zip(pi, probs)) for l in range(len(levels))]
    e = count_pg(w, list(levels), G, kind, ddof, eps)
    return [math.fsum(pr[l] * e[l] for l in range(len(levels))) for pr in probs]


def binomial_pg(x, G, ddof=0, eps=0.0):
    """``(P_G(a), P_G(b))``, SPEC section 2's binomial form (deterministic ``r(a) > r(b)``, scale)."""
    if G == math.inf:
        return math.sqrt((1 - x) / x), -math.sqrt(x / (1 - x))
    f = math.sqrt((G - ddof) / G)
    pa, pb = [], []
    for k in range(G):
        lw = math.lgamma(G) - math.lgamma(k + 1) - math.lgamma(G - k)
        if k:
            lw += k * math.log(x)
        if G - 1 - k:
            lw += (G - 1 - k) * math.log1p(-x)
        w = math.exp(lw)
        # o_1 = a, k others correct: j = k + 1 ones in G
        j = k + 1
        if j < G:
            m = j / G
            sd = math.sqrt(m * (1 - m)) / f
            pa.append(w * (1 - m) / (sd + eps))
        if k > 0:
            m = k / G
            sd = math.sqrt(m * (1 - m)) / f
            pb.append(w * (0 - m) / (sd + eps))
    return math.fsum(pa), math.fsum(pb)


# ---------------------------------------------------------------- closed forms
def eq14(p, beta, gamma=1.0):
    b = beta / gamma
    h = math.hypot(1 - b, 2 * math.sqrt(b * p))
    return 0.5 * (1 - b + h) if b <= 1 else 2 * b * p / (b - 1 + h)


def eq14_complement(p, beta, gamma=1.0):
    """``1 - x`` of Eq. 14: the small root of ``y^2 - (1 + b) y + b (1 - p) = 0``."""
    b = beta / gamma
    s = 1 + b
    return 2 * b * (1 - p) / (s + math.sqrt(s * s - 4 * b * (1 - p)))


def eq15(p, beta):
    b2 = beta * beta
    return (2 * b2 * p + 1 + math.sqrt(1 + 4 * b2 * p * (1 - p))) / (2 * (1 + b2))


def eq15_complement(p, beta):
    """``1 - x`` of Eq. 15 rationalised: ``2 b^2 q^2 / (1 + 2 b^2 q + sqrt(1 + 4 b^2 p q))``, ``q = 1 - p``."""
    b2 = beta * beta
    q = 1 - p
    return 2 * b2 * q * q / (1 + 2 * b2 * q + math.sqrt(1 + 4 * b2 * p * q))


def direct2(p, beta, gamma=1.0):
    """G = 2, direct penalty: ``logit x = logit p + gamma/beta``."""
    return expit(logit(p) + gamma / beta)


def shift_direct(p, beta, G, gap=1.0):
    f = 1.0 if G == math.inf else (G - 1) / G
    return expit(logit(p) + f * gap / beta)


def h(x, p, beta):
    return 1 / (beta * math.sqrt(x * (1 - x))) - logit(x) + logit(p)


def turning_point(beta):
    return (1 + math.sqrt(1 - 1 / (1 + beta * beta))) / 2


def h_roots(p, beta):
    """Every interior root of ``h`` (two at most: it falls then rises), each bisected in the logit."""
    xs = turning_point(beta)
    zs = logit(xs)
    if h(xs, p, beta) >= 0:
        return []

    def hz(z):
        return h(expit(z), p, beta)

    def bis(lo, hi):
        flo = hz(lo)
        for _ in range(400):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if (hz(mid) > 0) == (flo > 0):
                lo = mid
            else:
                hi = mid
        return expit(0.5 * (lo + hi))
    lo = zs - 1
    while hz(lo) < 0:
        lo -= 1
    hi = zs + 1
    while hi < 700 and hz(hi) < 0:
        hi += 1
    roots = [bis(lo, zs)]
    if hi < 700:
        roots.append(bis(zs, hi))
    return roots


def rest_bisect(p, beta, G, penalty="reverse", ddof=0, eps=0.0):
    """The flow's rest from ``p`` (module doc)."""
    def drift(z):
        x = expit(z)
        if x in (0.0, 1.0):
            pa, pb = (0.0, 0.0) if x == 1.0 else (math.sqrt(G - 1) if G != math.inf else math.inf, 0.0)
        else:
            pa, pb = binomial_pg(x, G, ddof, eps)
        if penalty == "reverse":
            return x * (1 - x) * (pa - pb) - beta * (x - p)
        return (pa - pb) / beta - (z - logit(p))
    lo = logit(p)
    step = 1e-3
    hi = lo + step
    while drift(hi) > 0:
        lo = hi
        step *= 1.4
        hi = lo + step
        if hi > 740:
            return 1.0
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if drift(mid) > 0:
            lo = mid
        else:
            hi = mid
    return expit(0.5 * (lo + hi))


# ---------------------------------------------------------------- baselines
def log_pool(pi_ref, rewards, beta):
    z = [(math.log(p) + r / beta) if p > 0 else -math.inf for p, r in zip(pi_ref, rewards)]
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = math.fsum(e)
    return [v / s for v in e]


def pref_from_rewards(rewards):
    n = len(rewards)
    return [[1.0 if rewards[i] > rewards[j] else (0.5 if rewards[i] == rewards[j] else 0.0) for j in range(n)]
            for i in range(n)]


def nash(pi_ref, M, beta, iters=200000, tol=1e-15):
    """NLHF's ``pi ∝ pi_ref exp((M pi)/beta)`` (SPEC section 5) by the damped iteration ``pi <- (1 - a) pi + a T(pi)``."""
    pr = np.asarray(pi_ref, float)
    Mx = np.asarray(M, float)
    pi = pr.copy()
    a = min(1.0, beta / 2)
    for _ in range(iters):
        u = Mx @ pi / beta
        t = np.log(pr) + u
        t = np.exp(t - t.max())
        t /= t.sum()
        new = (1 - a) * pi + a * t
        if np.max(np.abs(new - pi)) < tol:
            pi = new
            break
        pi = new
    return pi


def eq11_residual(pi, pi_ref, P, beta):
    ep = math.fsum(a * b for a, b in zip(pi, P))
    return max(abs(a * (1 - (b - ep) / beta) - r) for a, b, r in zip(pi, P, pi_ref) if a > 0)


def direct_residual(pi, pi_ref, P, beta):
    z = [math.log(r) + b / beta for r, b in zip(pi_ref, P)]
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = math.fsum(e)
    return max(abs(a - v / s) for a, v in zip(pi, e))


def rk4(pi_ref, rewards, G, beta, t_end, dt=0.01, penalty="reverse", kind="scale", pi0=None):
    pr = np.asarray(pi_ref, float)
    z = np.log(np.asarray(pi0 if pi0 is not None else pi_ref, float))

    def f(z):
        pi = np.exp(z - z.max())
        pi /= pi.sum()
        P = np.array(count_pg(list(pi), rewards, G, kind))
        g = P - beta * (1 - pr / pi) if penalty == "reverse" else P - beta * (np.log(pi / pr) + 1)
        return pi * (g - pi @ g)
    for _ in range(int(round(t_end / dt))):
        k1 = f(z)
        k2 = f(z + dt / 2 * k1)
        k3 = f(z + dt / 2 * k2)
        k4 = f(z + dt * k3)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    pi = np.exp(z - z.max())
    return pi / pi.sum()


# ---------------------------------------------------------------- KL estimators with clamps (SPEC section 8)
def kl_raw(est, lr):
    if est == "k1":
        return lr
    if est == "k2":
        return lr * lr / 2
    if est in ("k3", "k3_ratio", "k3_plus"):
        if abs(lr) < 1e-3:
            return math.fsum((-lr) ** n / math.factorial(n) for n in range(2, 14))
        return math.expm1(-lr) + lr
    if est == "abs":
        return abs(lr)
    raise ValueError(est)


def kl_value(est, lr, L=None, V=None):
    if L is not None:
        lr = min(max(lr, -L), L)
    v = kl_raw(est, lr)
    if V is not None:
        v = min(max(v, -V), V)
    return v


def kl_coefficient_loss(est, lr, L=None, V=None):
    """``c = d value/d lr`` (+ value for k3_ratio) in the loss; 0 where a clamp is active (SPEC section 8)."""
    active = (L is not None and abs(lr) > L) or (V is not None and abs(kl_value(est, lr, L, None)) > V)
    if est == "k1":
        d = 1.0
    elif est == "k2" or est == "k3_plus":
        d = lr
    elif est == "k3":
        d = -math.expm1(-lr)
    elif est == "k3_ratio":
        d = -math.expm1(-lr)
    else:
        d = math.copysign(1.0, lr) if lr else 0.0
    if active and est != "k3_plus":
        # k3_plus is verl's straight-through k3+: its backward term is k2's, unclamped (the kl module's doc;
        # round ten's triage), so no clamp gates it
        d = 0.0
    if est == "k3_ratio":
        if not active:
            return lr               # (1 - e^{-lr}) + (e^{-lr} + lr - 1), summed exactly (no cancellation)
        d += kl_value(est, lr, L, V)
    return d


# ---------------------------------------------------------------- counts and intervals
def pass_at_k(n, c, k):
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
    lo = 0.0 if c == 0 else float(B.ppf(a, c + 0.5, n - c + 0.5))
    hi = 1.0 if c == n else float(B.ppf(1 - a, c + 0.5, n - c + 0.5))
    return lo, hi


def wilson(c, n, level=0.95):
    from scipy.stats import norm

    z = float(norm.ppf(1 - (1 - level) / 2))
    p = c / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(mid - half, 0.0), min(mid + half, 1.0)


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
