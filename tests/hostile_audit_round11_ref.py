"""Independent reference of the eleventh hostile audit: no ``grpo_theory`` import.

Written from SPEC sections 1-4 and 8 and from the definitions the docs give for the GRPO family (RLOO,
REINFORCE++ whitened over a large batch, the pass@k advantage of arXiv 2508.10751, tie filtering, the entropy
bonus): every expectation is a plain enumeration of the other ``G - 1`` members' reward-level counts with
``math.fsum`` (1e-15 relative), a root a bisection to the last bit, a flow a plain RK4 on the logits.

* :func:`level_pref` -- ``E[A_1 | r_1 = v_l]`` for each level, by enumeration of the multinomial count vectors;
* :func:`gradient` -- ``g(o) = P(o) - beta u(o) c(o) - c_H U (log pi(o) + 1)`` (the penalty's slope ``c`` is
  ``1 - pi_ref/pi`` for k3 in the loss, ``log(pi/pi_ref)`` for k2 / k3 x ratio; ``u`` the probability that the
  group does not tie, 1 without filtering; ``U = E_pi u``), written from the derivative of each term at
  ``pi_old = pi``;
* :func:`residual` -- ``max_o pi(o) |g(o) - E_pi g| / scale`` (the KKT condition on the simplex);
* :func:`binary_rest` -- the point the flow from ``p`` reaches on a two-output question (scan + bisection);
* :func:`rk4_flow` -- the softmax-logit flow ``dz_o/dt = pi(o) (g(o) - E_pi g)``.
"""

from __future__ import annotations

import math
from math import fsum, lgamma

INF = math.inf


def compositions(n: int, parts: int):
    """Every vector of ``parts`` non-negative integers summing to ``n``."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in compositions(n - first, parts - 1):
            yield (first,) + rest


def log_multinomial(counts, w) -> float:
    """log P(counts) for a multinomial with probabilities ``w`` (-inf where impossible)."""
    n = sum(counts)
    out = lgamma(n + 1)
    for c, p in zip(counts, w):
        if c:
            if p <= 0:
                return -INF
            out += c * math.log(p) - lgamma(c + 1)
    return out


def advantage_first(l1: int, counts, levels, kind: str, G: int, ddof=0, eps=0.0, veps=0.0, k=1, s=None) -> float:
    """``A_1`` of a group whose first member has level index ``l1`` and the others ``counts`` per level."""
    rs = [levels[l1]] + [levels[j] for j, c in enumerate(counts) for _ in range(c)]
    tie = counts[l1] == G - 1
    mean = fsum(rs) / G
    if kind == "shift":
        return 0.0 if tie else rs[0] - mean
    if kind == "rloo":
        return rs[0] - fsum(rs[1:]) / (G - 1)
    if kind == "rpp":
        return 0.0 if tie else (rs[0] - mean) / s
    if kind == "passk":                  # two levels: index 1 passes
        n_neg = counts[0] + (1 if l1 == 0 else 0)
        R = 1 - math.comb(n_neg, k) / math.comb(G, k)
        sd = math.sqrt(R * (1 - R))
        if sd == 0:
            return 0.0
        if l1 == 1:
            return (1 - R) / sd
        return (1 - R - math.comb(n_neg - 1, k - 1) / math.comb(G - 1, k - 1)) / sd
    if tie:
        return 0.0
    var = fsum((r - mean) ** 2 for r in rs) / (G - ddof)
    if veps:
        return (rs[0] - mean) / math.sqrt(var + veps)
    return (rs[0] - mean) / (math.sqrt(var) + eps)


def level_law(pi, R):
    """The law of the reward level of one draw from ``pi``: ``w_l = sum_o pi(o) R[o][l]``."""
    L = len(R[0])
    return [fsum(pi[o] * R[o][j] for o in range(len(pi))) for j in range(L)]


_TABLES: dict = {}


def _table(levels, kind, G, ddof, eps, veps, k):
    """The parts of the enumeration that do not depend on the law ``w`` (cached): the count vectors of the other
    ``G - 1`` members, their log multinomial coefficients, ``A_1`` for each first level and count vector, and (for
    REINFORCE++) the squared deviations from the group mean."""
    key = (tuple(levels), kind, G, ddof, eps, veps, k)
    if key not in _TABLES:
        L = len(levels)
        comps = list(compositions(G - 1, L))
        logc = [lgamma(G) - fsum(lgamma(c + 1) for c in comp) for comp in comps]
        adv = None if kind == "rpp" else [[advantage_first(l1, c, levels, kind, G, ddof, eps, veps, k) for c in comps]
                                          for l1 in range(L)]
        dev = [[advantage_first(l1, c, levels, "shift", G) for c in comps] for l1 in range(L)]
        _TABLES[key] = (comps, logc, adv, dev)
    return _TABLES[key]


def level_pref(levels, w, kind="scale", G=2, ddof=0, eps=0.0, veps=0.0, k=1):
    """``E[A_1 | r_1 = v_l]`` for every level ``l`` (finite ``G`` by enumeration; ``G = inf`` in closed form)."""
    L = len(levels)
    mu = fsum(a * b for a, b in zip(levels, w))
    sig = math.sqrt(max(fsum(b * (a - mu) ** 2 for a, b in zip(levels, w)), 0.0))
    if G == INF:
        if kind in ("shift", "rloo"):
            return [v - mu for v in levels]
        if kind == "passk":
            f = w[0]
            R = 1 - f ** k
            sd = math.sqrt(R * (1 - R))
            return [0.0, 0.0] if sd == 0 else [-(1 - f) * f ** (k - 1) / sd, f ** k / sd]
        return [(v - mu) / (sig + eps) if sig + eps > 0 else 0.0 for v in levels]
    comps, logc, adv, dev = _table(levels, kind, G, ddof, eps, veps, k)
    logw = [math.log(x) if x > 0 else -INF for x in w]
    prob = []
    for comp, lc in zip(comps, logc):
        if any(c and lw == -INF for c, lw in zip(comp, logw)):
            prob.append(0.0)
        else:
            prob.append(math.exp(lc + fsum(c * lw for c, lw in zip(comp, logw) if c)))
    if kind == "rpp":
        # the batch std of r_i - mean r over a large batch of this question's groups (its mean is 0)
        s = math.sqrt(fsum(w[l1] * p * d * d for l1 in range(L) if w[l1] > 0 for p, d in zip(prob, dev[l1]) if p))
        if s == 0:
            return [0.0] * L
        adv = [[d / s for d in row] for row in dev]
    return [fsum(p * a for p, a in zip(prob, adv[l1]) if p) for l1 in range(L)]


def preference(pi, R, levels, **kw):
    """``P(o | pi) = sum_l R[o][l] E[A_1 | r_1 = v_l]`` for every output ``o``."""
    E = level_pref(levels, level_law(pi, R), **kw)
    return [fsum(R[o][j] * E[j] for j in range(len(levels))) for o in range(len(pi))]


def tie_free(pi, R, G):
    """``u(o) = sum_l R[o][l] (1 - w_l^(G-1))`` (``G = inf``: ``1 - [w_l = 1]``)."""
    w = level_law(pi, R)
    tie = [(1.0 if x >= 1.0 else 0.0) if G == INF else x ** (G - 1) for x in w]
    return [fsum(R[o][j] * (1 - tie[j]) for j in range(len(w))) for o in range(len(pi))]


def gradient(pi, pi_ref, R, levels, beta, penalty="reverse", filter_ties=False, entropy=0.0, **kw):
    """``g(o)`` of the module doc at ``pi`` (every ``pi(o) > 0``)."""
    G = kw.get("G", 2)
    P = preference(pi, R, levels, **kw)
    u = tie_free(pi, R, G) if filter_ties else [1.0] * len(pi)
    U = fsum(a * b for a, b in zip(pi, u))
    out = []
    for o in range(len(pi)):
        if penalty == "reverse":
            c = 1 - pi_ref[o] / pi[o]
        else:
            c = math.log(pi[o]) - math.log(pi_ref[o])
        g = P[o] - beta * u[o] * c if u[o] > 0 else P[o]
        if entropy:
            g -= entropy * U * (math.log(pi[o]) + 1)
        out.append(g)
    return out


def residual(pi, pi_ref, R, levels, beta, **kw):
    """``max_o pi(o) |g(o) - E_pi g| / scale``, scale ``beta`` (``entropy`` when ``beta = 0``)."""
    g = gradient(pi, pi_ref, R, levels, beta, **kw)
    lam = fsum(a * b for a, b in zip(pi, g))
    scale = beta if beta > 0 else kw.get("entropy", 1.0)
    return max(abs(p * (x - lam)) for p, x in zip(pi, g)) / scale


def _softmax(z):
    m = max(z)
    e = [math.exp(x - m) for x in z]
    s = fsum(e)
    return [x / s for x in e]


def rk4_flow(pi_ref, R, levels, beta, t_end=400.0, dt=0.02, **kw):
    """The logit flow ``dz_o/dt = pi(o)(g(o) - E_pi g)`` from ``z = log pi_ref`` to ``t_end`` (RK4), then ``pi``."""
    z = [math.log(p) for p in pi_ref]

    def f(zz):
        pi = _softmax(zz)
        pi = [max(p, 1e-300) for p in pi]
        g = gradient(pi, pi_ref, R, levels, beta, **kw)
        lam = fsum(a * b for a, b in zip(pi, g))
        return [p * (x - lam) for p, x in zip(pi, g)]

    t = 0.0
    while t < t_end:
        k1 = f(z)
        k2 = f([a + dt / 2 * b for a, b in zip(z, k1)])
        k3 = f([a + dt / 2 * b for a, b in zip(z, k2)])
        k4 = f([a + dt * b for a, b in zip(z, k3)])
        z = [a + dt / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(z, k1, k2, k3, k4)]
        t += dt
        if max(abs(x) for x in k1) < 1e-10:
            break
    return _softmax(z)


def _binary_f(x, p, R, levels, beta, **kw):
    g = gradient([x, 1 - x], [p, 1 - p], R, levels, beta, **kw)
    return g[0] - g[1]


def binary_rest(p, R, levels, beta, **kw):
    """The point ``x = pi(a)`` the flow from ``x = p`` reaches: the first sign change of ``g(a) - g(b)`` in the
    direction of the flow (a scan in the logit, then bisection), or 1.0 / 0.0 at a vertex."""
    f0 = _binary_f(p, p, R, levels, beta, **kw)
    if f0 == 0:
        return p
    up = f0 > 0
    z0 = math.log(p / (1 - p))
    step = 0.002
    prev = z0
    for i in range(1, 30000):
        z = z0 + (step * i if up else -step * i)
        x = 1 / (1 + math.exp(-z))
        if x >= 1 or x <= 0:
            break
        fx = _binary_f(x, p, R, levels, beta, **kw)
        if (fx > 0) != up or fx == 0:
            lo, hi = prev, z
            for _ in range(200):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                fm = _binary_f(1 / (1 + math.exp(-mid)), p, R, levels, beta, **kw)
                if (fm > 0) == up and fm != 0:
                    lo = mid
                else:
                    hi = mid
            return 1 / (1 + math.exp(-(lo + hi) / 2))
        prev = z
        if abs(z - z0) > 36:
            break
    return 1.0 if up else 0.0


def near(got, want, tol=1e-9):
    """``got`` within ``tol`` relative of ``want`` (of ``1 - want`` above 1/2), or 1e-14 absolute."""
    got, want = float(got), float(want)
    scale = want if want <= 0.5 else 1 - want
    return abs(got - want) <= max(tol * scale, 1e-14)


def close(a, b, rtol=1e-10, atol=1e-13) -> bool:
    a, b = list(map(float, a)), list(map(float, b))
    return len(a) == len(b) and all(abs(x - y) <= atol + rtol * abs(y) for x, y in zip(a, b))


# ------------------------------------------------------------------------ closed forms (SPEC section 4)
def eq14(p, beta, gamma=1.0):
    b = beta / gamma
    return 0.5 * (1 - b + math.sqrt((1 - b) ** 2 + 4 * b * p))


def direct_g2(p, beta, gamma=1.0):
    e = math.exp(gamma / (2 * beta))
    return e * p / (e * p + (1 - p) / e)


def logistic_shift(p, delta):
    z = math.log(p) - math.log1p(-p) + delta
    return 1 / (1 + math.exp(-z))

