"""Independent references for the tenth hostile audit (:mod:`hostile_audit_round10`).

Nothing here imports ``grpo_theory`` (nor an earlier round's reference). Every number comes from the definitions
of the maths contract (/work/shared/SPEC.md sections 1 to 5 and 8), computed directly:

* ``kl_value`` / ``kl_coef``: the estimators ``k1 = lr``, ``k2 = lr^2/2``, ``k3 = e^{-lr} + lr - 1``, ``abs = |lr|``
  with the log-ratio clipped to ``[-L, L]`` and the value to ``[-V, V]`` (section 8), and the coefficient of the
  expected on-policy gradient of each placement: loss -> ``d value/d lr`` (0 where a clip is active; ``k3_ratio``
  adds the value; ``k3_plus`` has k2's slope), advantage -> the value;
* ``delta``: ``P_G(a) - P_G(b)`` of a binary question with rewards 1/0 by the binomial sum over the other
  ``G - 1`` members (``math.lgamma`` log-weights, ``math.fsum``: ~1e-15 relative), Eq. 2 with ``ddof``/``eps``,
  or shift-only;
* ``pg``: ``P_G(o|pi)`` for K outputs with deterministic rewards by enumerating every composition of the other
  ``G - 1`` members over the reward levels (multinomial weights, ``math.fsum``);
* ``binary_rest``: the point the flow from ``p`` reaches on a binary question when the field may jump (abs at
  ``lr = 0``, a clamp's edges): the drift ``f(x) = Delta(x) - beta (c(lr_a) - c(lr_b))`` of ``x = pi(a)`` read on
  each side of every jump; the flow climbs while ``f > 0`` and stops at the first continuous root (bisection to
  2^-60) or at the first jump where ``f`` turns from positive to non-positive (the Filippov rest condition: 0 lies
  between the two one-sided drifts); ``1.0`` where it never stops (the vertex);
* ``rk4_flow``: the expected-gradient flow on softmax logits, ``d z_o/dt = pi_o (g_o - E_pi g)``,
  ``g_o = P_G(o|pi) - beta c(lr_o)``, a plain fixed-step RK4;
* Eq. 14, Eq. 15, the direct penalty's logistic shift, log pooling, the large-G ``P_inf``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

INF = math.inf


# ---------------------------------------------------------------- KL estimators (SPEC section 8)
def _raw_value(est, lr):
    if est == "k1":
        return lr
    if est == "k2":
        return lr * lr / 2
    if est in ("k3", "k3_ratio", "k3_plus"):
        return math.expm1(-lr) + lr
    if est == "abs":
        return abs(lr)
    raise ValueError(est)


def _raw_slope(est, lr):
    if est == "k1":
        return 1.0
    if est in ("k2", "k3_plus"):
        return lr
    if est in ("k3", "k3_ratio"):
        return -math.expm1(-lr)
    if est == "abs":
        return 1.0 if lr > 0 else (-1.0 if lr < 0 else 0.0)
    raise ValueError(est)


def kl_value(est, lr, L=None, V=None):
    """The clamped estimator's value at ``lr = log(pi/pi_ref)``."""
    x = lr if L is None else min(max(lr, -L), L)
    v = _raw_value(est, x)
    return v if V is None else min(max(v, -V), V)


def kl_coef(est, lr, L=None, V=None, placement="loss"):
    """``c`` of the expected gradient ``g = P_G - beta c`` (constants do not matter: they cancel)."""
    if placement == "advantage":
        return kl_value(est, lr, L, V)
    active = True
    x = lr
    if L is not None and abs(lr) > L:
        active, x = False, math.copysign(L, lr)
    v = _raw_value(est, x)
    if V is not None and abs(v) > V:
        active = False
    slope = _raw_slope(est, x) if active else 0.0
    if est == "k3_ratio" and active and (V is None or abs(v) <= V):
        return x                         # (1 - e^{-lr}) + (e^{-lr} + lr - 1) = lr, without the cancellation
    if est == "k3_ratio":
        return slope + (v if V is None else min(max(v, -V), V))
    return slope


def k3_value_edges(V):
    """The two log-ratios where ``k3 = e^{-lr} + lr - 1`` equals ``V`` (bisection, 2^-80)."""
    f = lambda x: math.expm1(-x) + x - V  # noqa: E731
    def bis(a, b):
        for _ in range(200):
            m = (a + b) / 2
            if (f(a) > 0) == (f(m) > 0):
                a = m
            else:
                b = m
        return (a + b) / 2
    return bis(-V - 5, 0.0), bis(0.0, V + 5)


# ---------------------------------------------------------------- binary Delta by the binomial sum (SPEC 2)
def _adv(r0, ones, G, ddof, eps, normalization):
    m = ones / G
    if normalization == "shift":
        return r0 - m
    if ones in (0, G):
        return 0.0
    var = m * (1 - m) * G / (G - ddof)
    return (r0 - m) / (math.sqrt(var) + eps)


def _logbinom(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def delta(x, G, ddof=0, eps=0.0, normalization="scale"):
    """``P_G(a|pi) - P_G(b|pi)``, rewards 1/0, ``pi(a) = x``; G = inf in closed form."""
    if G == INF:
        return 1.0 if normalization == "shift" else 1 / (math.sqrt(x * (1 - x)) + eps)
    G = int(G)
    pa, pb = [], []
    lx, l1 = (math.log(x) if x > 0 else -INF), (math.log1p(-x) if x < 1 else -INF)
    for k in range(G):
        a = (k * lx if k else 0.0) + ((G - 1 - k) * l1 if G - 1 - k else 0.0)
        w = math.exp(_logbinom(G - 1, k) + a) if a > -INF else 0.0
        pa.append(w * _adv(1.0, k + 1, G, ddof, eps, normalization))
        pb.append(w * _adv(0.0, k, G, ddof, eps, normalization))
    return math.fsum(pa) - math.fsum(pb)


# ---------------------------------------------------------------- closed forms (SPEC 4, 5)
def eq14(p, beta, gamma=1.0):
    """Eq. 14; for ``beta/gamma > 1`` in the form ``2 r p/(s - (1 - r))`` (no cancellation at small ``p``)."""
    r = beta / gamma
    s = math.sqrt((1 - r) ** 2 + 4 * r * p)
    return 0.5 * (1 - r + s) if r <= 1 else 2 * r * p / (s - (1 - r))


def eq15(p, beta):
    b2 = beta * beta
    return (2 * b2 * p + 1 + math.sqrt(1 + 4 * b2 * p * (1 - p))) / (2 * (1 + b2))


def logistic_shift(p, s):
    return 1 / (1 + math.exp(-(math.log(p / (1 - p)) + s)))


def log_pooling(pi_ref, rewards, beta):
    z = np.log(np.asarray(pi_ref, float)) + np.asarray(rewards, float) / beta
    z -= z.max()
    e = np.exp(z)
    return e / e.sum()


# ---------------------------------------------------------------- K outputs, deterministic rewards
def _compositions(n, parts):
    if parts == 1:
        yield (n,)
        return
    for i in range(n + 1):
        for rest in _compositions(n - i, parts - 1):
            yield (i, *rest)


def pg(pi, rewards, G, ddof=0, eps=0.0, normalization="scale"):
    """``P_G(o|pi)`` by enumerating the other members' reward levels (G = inf: ``(r - E r)/sigma``)."""
    pi = [float(v) for v in pi]
    rewards = [float(r) for r in rewards]
    levels = sorted(set(rewards))
    q = [math.fsum(p for p, r in zip(pi, rewards) if r == lv) for lv in levels]
    if G == INF:
        mean = math.fsum(a * b for a, b in zip(q, levels))
        if normalization == "shift":
            return np.array([r - mean for r in rewards])
        sd = math.sqrt(math.fsum(a * (b - mean) ** 2 for a, b in zip(q, levels)))
        return np.array([(r - mean) / (sd + eps) for r in rewards])
    G = int(G)
    per = {}
    for lv in levels:
        terms = []
        for comp in _compositions(G - 1, len(levels)):
            logw = math.lgamma(G)
            ok = True
            for c, ql in zip(comp, q):
                logw -= math.lgamma(c + 1)
                if c:
                    if ql <= 0:
                        ok = False
                        break
                    logw += c * math.log(ql)
            if not ok:
                continue
            grp = [lv] + [l2 for l2, c in zip(levels, comp) for _ in range(c)]
            m = math.fsum(grp) / G
            if normalization == "shift":
                a = lv - m
            elif max(grp) == min(grp):
                a = 0.0
            else:
                sd = math.sqrt(math.fsum((r - m) ** 2 for r in grp) / (G - ddof))
                a = (lv - m) / (sd + eps)
            terms.append(math.exp(logw) * a)
        per[lv] = math.fsum(terms)
    return np.array([per[r] for r in rewards])


def reverse_resid(pi, pi_ref, rewards, beta, G, **kw):
    """Eq. 11's residual ``max |pi (1 - (P - E P)/beta) - pi_ref|`` on the support."""
    pi = np.asarray(pi, float)
    P = pg(pi, rewards, G, **kw)
    EP = float(pi @ P)
    lhs = pi * (1 - (P - EP) / beta)
    s = pi > 1e-14
    return float(np.max(np.abs(lhs - np.asarray(pi_ref, float))[s]))


def direct_resid(pi, pi_ref, rewards, beta, G, **kw):
    """The direct condition's residual: ``P(o)/beta - log(pi/pi_ref)`` equal on the support (its spread)."""
    pi = np.asarray(pi, float)
    P = pg(pi, rewards, G, **kw)
    s = pi > 1e-14
    v = P[s] / beta - np.log(pi[s] / np.asarray(pi_ref, float)[s])
    return float(v.max() - v.min())


# ---------------------------------------------------------------- the flow on the logits
def field(z, pi_ref, rewards, beta, G, est="k3", L=None, V=None, placement="loss", **kw):
    e = np.exp(z - z.max())
    pi = e / e.sum()
    P = pg(pi, rewards, G, **kw)
    lr = np.log(pi) - np.log(pi_ref)
    c = np.array([kl_coef(est, float(v), L, V, placement) for v in lr])
    g = P - beta * c
    return pi * (g - pi @ g)


def rk4_flow(pi_ref, rewards, beta, G, t_end, dt=0.01, pi0=None, **kw):
    """``pi(t_end)`` of the logit flow from ``pi0`` (default ``pi_ref``), fixed-step RK4."""
    pr = np.asarray(pi_ref, float)
    z = np.log(np.asarray(pr if pi0 is None else pi0, float))
    n = max(1, math.ceil(t_end / dt))
    dt = t_end / n                                   # land on t_end exactly
    for _ in range(n):
        k1 = field(z, pr, rewards, beta, G, **kw)
        k2 = field(z + dt / 2 * k1, pr, rewards, beta, G, **kw)
        k3 = field(z + dt / 2 * k2, pr, rewards, beta, G, **kw)
        k4 = field(z + dt * k3, pr, rewards, beta, G, **kw)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    e = np.exp(z - z.max())
    return e / e.sum()


def euler_ascent(pi_ref, rewards, beta, G, lr, steps, pi0=None, **kw):
    """``steps`` Euler steps of size ``lr`` of the same field (the documented ``ascent``)."""
    pr = np.asarray(pi_ref, float)
    z = np.log(np.asarray(pr if pi0 is None else pi0, float))
    for _ in range(steps):
        z = z + lr * field(z, pr, rewards, beta, G, **kw)
    e = np.exp(z - z.max())
    return e / e.sum()


# ---------------------------------------------------------------- binary rest with jumps (Filippov)
def _binary_drift(x, p, beta, G, est, L, V, placement, side_a, side_b, **kw):
    """``f(x)`` with each log-ratio nudged to one side of a jump (``side`` in -1, 0, +1)."""
    la = math.log(x / p)
    lb = math.log1p(-x) - math.log1p(-p)
    tiny = 1e-12
    ca = kl_coef(est, la + side_a * tiny * max(1, abs(la)), L, V, placement)
    cb = kl_coef(est, lb + side_b * tiny * max(1, abs(lb)), L, V, placement)
    return delta(x, G, **kw) - beta * (ca - cb)


def _jumps_in_x(p, est, L, V, placement):
    """The ``x = pi(a)`` in (p, 1) where ``lr_a`` or ``lr_b`` crosses a jump of ``c`` (loss placement)."""
    if placement != "loss":
        return []
    edges = []
    if L is not None:
        edges += [-L, L]
    if V is not None:
        if est in ("k3", "k3_ratio", "k3_plus"):
            edges += list(k3_value_edges(V))
        elif est == "k2":
            edges += [-math.sqrt(2 * V), math.sqrt(2 * V)]
        elif est in ("k1", "abs"):
            edges += [-V, V]
    xs = []
    for e in edges:
        if L is not None and abs(e) > L:
            continue
        xa = p * math.exp(e)              # lr_a = e
        if p < xa < 1:
            xs.append(("a", xa))
        xb = 1 - (1 - p) * math.exp(e)    # lr_b = e
        if p < xb < 1:
            xs.append(("b", xb))
    return sorted(xs, key=lambda t: t[1])


def binary_rest(p, beta, G=2, est="k3", L=None, V=None, placement="loss", n_scan=4000, **kw):
    """Where the flow from ``x = p`` stops (module doc); ``p`` itself when it does not move."""
    f = lambda x: _binary_drift(x, p, beta, G, est, L, V, placement, 0, 0, **kw)  # noqa: E731
    # at p itself (abs has its jump there): moves up iff the drift just above p is positive
    up = _binary_drift(p, p, beta, G, est, L, V, placement, +1, -1, **kw)
    if est == "abs" and placement == "loss":
        if up <= 0:
            return p
    elif f(p * (1 + 1e-12) if p * (1 + 1e-12) < 1 else p) <= 0 and up <= 0:
        return p
    jumps = _jumps_in_x(p, est, L, V, placement)
    # scan points: a geometric grid in 1 - x towards 1, plus the jumps
    grid = sorted(set([p + (1 - p) * (1 - 10 ** (-12 * i / n_scan)) for i in range(1, n_scan + 1)]
                      + [x for _, x in jumps]))
    jump_x = {x: who for who, x in jumps}
    lo = p
    for x in grid:
        if x <= p or x >= 1:
            continue
        if x in jump_x:
            who = jump_x[x]
            below = _binary_drift(x, p, beta, G, est, L, V, placement, -1 if who == "a" else 0,
                                  +1 if who == "b" else 0, **kw)
            above = _binary_drift(x, p, beta, G, est, L, V, placement, +1 if who == "a" else 0,
                                  -1 if who == "b" else 0, **kw)
            if below <= 0:
                return _bisect(f, lo, x)
            if above <= 0:
                return x
            lo = x
            continue
        if f(x) <= 0:
            return _bisect(f, lo, x)
        lo = x
    return 1.0


def _bisect(f, a, b):
    for _ in range(200):
        m = (a + b) / 2
        if m in (a, b):
            break
        if f(m) > 0:
            a = m
        else:
            b = m
    return (a + b) / 2


# ---------------------------------------------------------------- comparisons
def close(got, want, rtol=1e-9, atol=0.0) -> bool:
    got, want = np.asarray(got, float), np.asarray(want, float)
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


def near_x(got, want, tol=1e-9) -> bool:
    """``got`` within ``tol`` relative of ``want`` (of ``1 - want`` above 1/2, with a 1e-15 absolute floor)."""
    got, want = float(got), float(want)
    scale = want if want <= 0.5 else 1 - want
    return abs(got - want) <= max(tol * scale, 1e-15)


def all_permutations(seq):
    return list(itertools.permutations(seq))


# ---------------------------------------------------------------- K outputs: the Filippov rest condition
def jumps(est, L=None, V=None):
    """The log-ratios where the loss placement's ``c`` jumps (its one-sided values differ)."""
    cands = ([-L, L] if L is not None else []) + ([0.0] if est == "abs" else [])
    if V is not None:
        cands += {"k1": [-V, V], "abs": [-V, V], "k2": [-math.sqrt(2 * V), math.sqrt(2 * V)]}.get(
            est, list(k3_value_edges(V)))
    return sorted(e for e in set(cands) if (L is None or abs(e) <= L)
                  and abs(kl_coef(est, e - 1e-9 * max(1, abs(e)), L, V)
                          - kl_coef(est, e + 1e-9 * max(1, abs(e)), L, V)) > 1e-6)


def filippov_gap(pi, pi_ref, rewards, beta, G, est="k3", L=None, V=None, on_jump=1e-6, **kw):
    """``max_o lower_o - min_o upper_o`` over the support (``pi > 1e-12``): ``g_o = P_G(o) - beta c(lr_o)`` off the
    jumps, the interval between its one-sided values on them (``lr_o`` within ``on_jump`` of a jump). The point
    rests (0 is in the flow's Filippov set) iff the gap is <= 0."""
    pi = np.asarray(pi, float)
    P = pg(pi, rewards, G, **kw)
    js = jumps(est, L, V)
    lows, ups = [], []
    for o in range(len(pi)):
        if pi[o] <= 1e-12:
            continue
        lr = math.log(pi[o] / pi_ref[o])
        near = [e for e in js if abs(lr - e) <= on_jump * max(1, abs(e))]
        if near:
            e = near[0]
            a = P[o] - beta * kl_coef(est, e - 1e-9 * max(1, abs(e)), L, V)
            b = P[o] - beta * kl_coef(est, e + 1e-9 * max(1, abs(e)), L, V)
            lows.append(min(a, b))
            ups.append(max(a, b))
        else:
            g = P[o] - beta * kl_coef(est, lr, L, V)
            lows.append(g)
            ups.append(g)
    return max(lows) - min(ups)
