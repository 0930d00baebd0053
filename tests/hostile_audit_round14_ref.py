"""Independent reference of the fourteenth hostile audit: no ``grpo_theory`` import.

Written from /work/shared/SPEC.md sections 1-5 and the docstrings' definitions of the GRPO family (RLOO, the
pass@k advantage, tie filtering ``u``, the entropy bonus ``- c_H U (log pi + 1)``), by the plainest means:

* :func:`group_adv` -- one sampled group's advantages (Eq. 2 with ``std_ddof`` / ``std_eps`` / ``variance_eps``,
  shift only, RLOO, pass@k as ``rho_i = 1 - C(n_fail - [i fails], k - 1)/C(G - 1, k - 1)`` normalised in the group);
* :func:`cond_adv` -- ``E[A_1 | r_1 = v_l]`` by enumerating every ORDERED tuple of the other ``G - 1`` members'
  levels (``L^(G-1)`` terms with ``math.fsum``; the library enumerates count vectors), so a shared mistake in a
  multinomial coefficient cannot hide;
* :func:`gradient`, :func:`kkt` -- SPEC section 3's ``g(o)`` and the residual ``max pi |g - E_pi g| / scale``;
* :func:`binary_rest` -- the point the logit flow from ``x = p`` reaches on a two-output question: a scan of the
  drift ``g(a) - g(b)`` in the logit with step 1e-2, then bisection to the last bit;
* :func:`rk4` -- a plain fixed-step RK4 of the softmax-logit flow ``dz_o/dt = pi(o) (g(o) - E_pi g)``;
* closed forms (Eq. 14, Eq. 15, G = 2 direct, large-G direct ``h``) and the simplex lattice count.
"""

from __future__ import annotations

import itertools
import math
from math import fsum

INF = math.inf


# ---------------------------------------------------------------- one group
def group_adv(rs, kind="scale", ddof=0, eps=0.0, veps=0.0, k=1):
    """Advantages of one group of rewards ``rs`` (module doc)."""
    G = len(rs)
    mean = fsum(rs) / G
    tie = all(r == rs[0] for r in rs)
    if kind == "rloo":
        tot = fsum(rs)
        return [r - (tot - r) / (G - 1) for r in rs]
    if kind == "shift":
        return [0.0 if tie else r - mean for r in rs]
    if kind == "passk":                    # rewards 1 (pass) / 0 (fail)
        n_fail = sum(1 for r in rs if r == 0)
        R = 1 - math.comb(n_fail, k) / math.comb(G, k)     # the group's pass@k
        sd = math.sqrt(R * (1 - R))
        if sd == 0:
            return [0.0] * G
        out = []
        for r in rs:
            if r == 1:
                out.append((1 - R) / sd)
            else:                          # this member fails: rho = P(a k-subset holding it passes)
                rho = 1 - math.comb(n_fail - 1, k - 1) / math.comb(G - 1, k - 1)
                out.append((rho - R) / sd)
        return out
    if tie:
        return [0.0] * G
    if not eps and not veps:             # Eq. 2 is scale-free: rescale so that squares of 1e300 do not overflow
        top = max(abs(r) for r in rs)
        rs = [r / top for r in rs]
        mean = fsum(rs) / G
    var = fsum((r - mean) ** 2 for r in rs) / (G - ddof)
    if veps:
        return [(r - mean) / math.sqrt(var + veps) for r in rs]
    return [(r - mean) / (math.sqrt(var) + eps) for r in rs]


_TABLES: dict = {}


def _adv_table(levels, G, kw):
    """``[(l1, tup, A_1)]`` for every first level and ordered tuple of the others (cached: it does not depend on w)."""
    key = (tuple(levels), G, tuple(sorted(kw.items())))
    if key not in _TABLES:
        L = len(levels)
        _TABLES[key] = [[(tup, group_adv([levels[l1]] + [levels[j] for j in tup], **kw)[0])
                         for tup in itertools.product(range(L), repeat=G - 1)] for l1 in range(L)]
    return _TABLES[key]


def cond_adv(levels, w, G, **kw):
    """``E[A_1 | r_1 = v_l]`` for every level ``l`` by ordered-tuple enumeration (finite ``G``)."""
    out = []
    for rows in _adv_table(levels, G, kw):
        terms = []
        for tup, a in rows:
            pr = 1.0
            for j in tup:
                pr *= w[j]
            if pr:
                terms.append(pr * a)
        out.append(fsum(terms))
    return out


def cond_adv_inf(levels, w, eps=0.0, veps=0.0, kind="scale", **_):
    """``G = inf``: ``(v_l - mu)/(sigma + eps)`` (``/sqrt(sigma^2 + veps)`` with a variance epsilon; ``v_l - mu`` for
    shift only and RLOO)."""
    mu = fsum(a * b for a, b in zip(levels, w))
    if kind in ("shift", "rloo"):
        return [v - mu for v in levels]
    var = fsum(b * (a - mu) ** 2 for a, b in zip(levels, w))
    den = math.sqrt(var + veps) if veps else math.sqrt(var) + eps
    return [(v - mu) / den for v in levels]


def level_law(pi, R):
    return [fsum(pi[o] * R[o][j] for o in range(len(pi))) for j in range(len(R[0]))]


def preference(pi, R, levels, G, **kw):
    """``P_G(o|pi) = sum_l R[o][l] E[A_1 | r_1 = v_l]``."""
    w = level_law(pi, R)
    E = cond_adv_inf(levels, w, **kw) if G == INF else cond_adv(levels, w, G, **kw)
    return [fsum(R[o][j] * E[j] for j in range(len(levels))) for o in range(len(pi))]


def det_R(rewards):
    """``(R, levels)`` of deterministic rewards: one level per distinct reward, increasing."""
    levels = sorted(set(rewards))
    return [[1.0 if r == v else 0.0 for v in levels] for r in rewards], levels


def tie_free(pi, R, G):
    w = level_law(pi, R)
    if G == INF:
        return [fsum(R[o][j] * (0.0 if w[j] >= 1 else 1.0) for j in range(len(w))) for o in range(len(pi))]
    return [fsum(R[o][j] * (1 - w[j] ** (G - 1)) for j in range(len(w))) for o in range(len(pi))]


def gradient(pi, pi_ref, R, levels, beta, G, penalty="reverse", filter_ties=False, entropy=0.0, **kw):
    """``g(o) = P(o) - beta u(o) c(o) - c_H U (log pi(o) + 1)`` at ``pi_old = pi`` (every ``pi(o) > 0``)."""
    P = preference(pi, R, levels, G, **kw)
    u = tie_free(pi, R, G) if filter_ties else [1.0] * len(pi)
    U = fsum(a * b for a, b in zip(pi, u))
    g = []
    for o in range(len(pi)):
        c = 1 - pi_ref[o] / pi[o] if penalty == "reverse" else math.log(pi[o] / pi_ref[o])
        x = P[o] - beta * u[o] * c
        if entropy:
            x -= entropy * U * (math.log(pi[o]) + 1)
        g.append(x)
    return g


def kkt(pi, pi_ref, R, levels, beta, G, **kw):
    """``max_o pi(o) |g(o) - E_pi g| / scale`` (scale ``beta``, the entropy coefficient when ``beta = 0``)."""
    g = gradient(pi, pi_ref, R, levels, beta, G, **kw)
    lam = fsum(a * b for a, b in zip(pi, g))
    scale = beta if beta > 0 else kw.get("entropy", 1.0)
    return max(abs(a * (b - lam)) for a, b in zip(pi, g)) / scale


# ---------------------------------------------------------------- two outputs
def expit(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def logit(x):
    return math.log(x) - math.log1p(-x)


def binary_drift(x, p, R, levels, beta, G, **kw):
    g = gradient([x, 1 - x], [p, 1 - p], R, levels, beta, G, **kw)
    return g[0] - g[1]


def flow_rest(f, z0, step=1e-2, zmax=30.0):
    """Where the flow ``dz/dt ∝ f(z)`` from ``z0`` stops: the first sign change of ``f`` in the direction it moves
    (a scan of ``step``, then bisection to the last bit), as ``x = expit(z)``; 1.0 / 0.0 at a vertex."""
    f0 = f(z0)
    if f0 == 0:
        return expit(z0)
    up = f0 > 0
    prev, i = z0, 1
    while abs(prev - z0) < zmax:
        z = z0 + (i * step if up else -i * step)
        fz = f(z)
        if fz == 0 or (fz > 0) != up:
            lo, hi = prev, z
            for _ in range(200):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                fm = f(mid)
                if fm != 0 and (fm > 0) == up:
                    lo = mid
                else:
                    hi = mid
            return expit((lo + hi) / 2)
        prev, i = z, i + 1
    return 1.0 if up else 0.0


def binary_rest(p, R, levels, beta, G, step=1e-2, zmax=30.0, **kw):
    """The rest of the flow from ``x = p`` (module doc); 1.0 / 0.0 where it runs to a vertex."""
    return flow_rest(lambda z: binary_drift(expit(z), p, R, levels, beta, G, **kw), logit(p), step, zmax)


def eq14(p, beta, gamma=1.0):
    """SPEC Eq. 14 (G = 2, reverse)."""
    b = beta / gamma
    s = math.sqrt((1 - b) ** 2 + 4 * b * p)
    return (1 - b + s) / 2 if b <= 1 else 2 * b * p / (s - (1 - b))


def eq15(p, beta):
    """SPEC Eq. 15 (large G, reverse)."""
    b2 = beta * beta
    return (2 * b2 * p + 1 + math.sqrt(1 + 4 * b2 * p * (1 - p))) / (2 * (1 + b2))


def g2_direct(p, beta, gamma=1.0):
    """SPEC section 4, G = 2 direct: ``logit x = logit p + gamma/beta``."""
    return expit(logit(p) + gamma / beta)


def h_large_direct(x, p, beta):
    return 1 / (beta * math.sqrt(x * (1 - x))) - logit(x) + logit(p)


def turning_point(beta):
    return (1 + math.sqrt(1 - 1 / (1 + beta * beta))) / 2


def binary_pref(x, G):
    """``(P_G(a), P_G(b))`` for ``r(a) > r(b)``, scale, ddof 0: SPEC section 2's binomial sums (``math.fsum``)."""
    n = G - 1
    ta, tb = [], []
    for k in range(n + 1):
        lw = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
              + (k * math.log(x) if k else 0.0) + ((n - k) * math.log1p(-x) if n - k else 0.0))
        wk = math.exp(lw)
        ta.append(wk * math.sqrt((n - k) / (k + 1)))
        tb.append(-wk * math.sqrt(k / (G - k)) if k else 0.0)
    return fsum(ta), fsum(tb)


def binary_rest_binom(p, beta, G, penalty="reverse"):
    """:func:`binary_rest` for rewards 1/0, scale, ddof 0 at large finite ``G``, with :func:`binary_pref`'s sums."""
    def f(z):
        x = expit(z)
        Pa, Pb = binary_pref(x, G)
        if penalty == "reverse":
            ca, cb = 1 - p / x, 1 - (1 - p) / (1 - x)
        else:
            ca, cb = math.log(x / p), math.log((1 - x) / (1 - p))
        return (Pa - beta * ca) - (Pb - beta * cb)
    return flow_rest(f, logit(p))


# ---------------------------------------------------------------- flows
def softmax(z):
    m = max(z)
    e = [math.exp(a - m) for a in z]
    s = fsum(e)
    return [a / s for a in e]


def rk4(pi_ref, R, levels, beta, G, t_end, n_steps, pi0=None, **kw):
    """RK4 of ``dz_o/dt = pi(o) (g(o) - E_pi g)`` from ``pi0`` (default ``pi_ref``) to ``t_end``: the twelfth round's
    plain fixed-step integrator (:func:`hostile_audit_round12_ref.rk4`, no package import) on this field."""
    import hostile_audit_round12_ref as r12

    def field(z):
        pi = softmax(z)
        g = gradient(pi, pi_ref, R, levels, beta, G, **kw)
        lam = fsum(a * b for a, b in zip(pi, g))
        return [a * (b - lam) for a, b in zip(pi, g)]
    return softmax(r12.rk4(field, [math.log(a) for a in (pi0 or pi_ref)], t_end, n_steps))


def rlhf(pi_ref, rewards, beta):
    """``pi ∝ pi_ref exp(r/beta)`` in log space."""
    lz = [math.log(p) + r / beta for p, r in zip(pi_ref, rewards)]
    m = max(lz)
    e = [math.exp(a - m) for a in lz]
    s = fsum(e)
    return [a / s for a in e]


# ---------------------------------------------------------------- counting
def simplex_interior(n, K):
    """Interior points of the lattice ``{pi : n pi integer}`` of the K-simplex: ``C(n - 1, K - 1)``, by brute
    enumeration for small ``n`` (so the formula itself is checked), by the formula otherwise."""
    if n ** (K - 1) <= 200_000:
        return sum(1 for c in itertools.product(range(1, n), repeat=K - 1) if sum(c) < n)
    return math.comb(n - 1, K - 1)


def close(a, b, rtol=1e-9, atol=0.0):
    return abs(a - b) <= atol + rtol * abs(b)


def near_x(got, want, tol=1e-9):
    """``got`` within ``tol`` relative of ``want`` (of ``1 - want`` above 1/2), 1e-15 absolute floor."""
    if want > 0.5:
        return abs((1 - got) - (1 - want)) <= tol * (1 - want) + 1e-15
    return abs(got - want) <= tol * want + 1e-15
