"""Independent paths for the round-two figure tests (issue 24): the binary group-relative preference from
the binomial law of the other members, written from SPEC section 2 without the library's engine, and
root counts by sign changes on fine grids."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import expit
from scipy.stats import binom


def binary_preferences(x, G: int, ddof: int = 0, eps: float = 0.0):
    """``(P_G(a|x), P_G(b|x))`` for a binary question with rewards 1 (a) and 0 (b), scale normalisation.

    Member 1's answer given, the other G - 1 carry k ~ Binomial(G - 1, x) a's. With m a's in the whole group,
    mean m/G, population std sqrt(m/G (1 - m/G)), times sqrt(G/(G - 1)) for ddof 1, plus ``eps``;
    A_1 = (r_1 - mean)/std, 0 when every reward ties."""
    x = np.atleast_1d(np.asarray(x, float))
    k = np.arange(G)
    w = binom.pmf(k[None, :], G - 1, x[:, None])            # (n_x, G)

    def adv(r1, m):
        mean = m / G
        sd = np.sqrt(mean * (1 - mean)) * (np.sqrt(G / (G - 1)) if ddof == 1 else 1.0) + eps
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where((m == 0) | (m == G), 0.0, (r1 - mean) / sd)
        return a

    pa = w @ adv(1.0, k + 1.0)
    pb = w @ adv(0.0, k + 0.0)
    return pa, pb


@lru_cache(maxsize=8)
def _preference_gap(z_bytes: bytes, G: int, ddof: int, eps: float) -> np.ndarray:
    """``P_G(a) - P_G(b)`` on the grid of logits ``z`` (its bytes; cached: the tests evaluate the same grid for
    every question of a table, and the gap does not depend on pi_ref)."""
    pa, pb = binary_preferences(expit(np.frombuffer(z_bytes)), G, ddof, eps)
    gap = pa - pb
    gap.setflags(write=False)
    return gap


def direct_h(z, p: float, beta: float, G: int, ddof: int = 0, eps: float = 0.0):
    """The direct penalty's binary drift over beta, in the logit z of pi(a):
    ``(P_G(a) - P_G(b))/beta - (z - logit p)``; its roots are the stationary points (pi ∝ pi_ref e^{P/beta})."""
    gap = _preference_gap(np.ascontiguousarray(z, dtype=float).tobytes(), G, ddof, eps)
    return gap / beta - (np.asarray(z) - np.log(p / (1 - p)))


def sign_changes(values) -> int:
    s = np.sign(values)
    s = s[s != 0]
    return int(np.count_nonzero(s[1:] != s[:-1]))


def k3_interior_count(pi_ref, rewards, beta: float, n: int = 200_001) -> int:
    """Interior stationary points of the direct penalty at G = inf for K answers, by a 1-d reduction.

    ``pi ∝ pi_ref exp(P_inf/beta)`` with ``P_inf(o) = (r(o) - m)/s`` depends on pi only through s = sigma_pi, so
    every interior point is ``pi_u ∝ pi_ref exp(u r)`` with ``beta u sigma(pi_u) = 1``, u = 1/(beta s) > 0.
    The roots are counted by sign changes on a log grid of u."""
    pi_ref, r = np.asarray(pi_ref, float), np.asarray(rewards, float)
    u = np.geomspace(1e-4, 1e4, n)
    logw = np.log(pi_ref)[None, :] + u[:, None] * r[None, :]
    logw -= logw.max(axis=1, keepdims=True)
    pi = np.exp(logw)
    pi /= pi.sum(axis=1, keepdims=True)
    m = pi @ r
    s = np.sqrt(np.maximum(pi @ r ** 2 - m ** 2, 0.0))
    return sign_changes(beta * u * s - 1.0)


def bound_up(value: float, spec: str) -> str:
    """``value`` rounded up (toward +inf) at the precision the format ``spec`` prints (".Nf": N decimals; ".Ne":
    N decimals of the mantissa; ".Ng": N significant digits), by Decimal's ROUND_CEILING, then formatted: what a
    caption must print for "within X" to be a bound. Independent of plotting.at_most (no string arithmetic)."""
    import math
    from decimal import ROUND_CEILING, Decimal

    n, kind = int(spec[1:-1]), spec[-1]
    if kind == "f":
        quantum = Decimal(1).scaleb(-n)
    else:
        digits = n + 1 if kind == "e" else n
        quantum = Decimal(1).scaleb(math.floor(math.log10(value)) - digits + 1)
    # the float as Python writes it (0.0015, not its binary expansion 0.00150000000000000003...)
    return format(float(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_CEILING)), spec)


def mp_flow_jacobian(gradient, theta0, step):
    """The on-policy flow ``d theta_o/dt = pi_o (g_o - E_pi g)`` on the output logits at ``theta0`` and its Jacobian
    by central differences of step ``step``, in mpmath at the current precision: ``gradient(pi)`` gives ``g`` (a list)
    at the softmax ``pi`` of the logits. Returns ``(field at theta0, Jacobian as an mpmath matrix)``."""
    import mpmath as mp

    def field(theta):
        top = max(theta)
        z = sum(mp.e ** (t - top) for t in theta)
        pi = [mp.e ** (t - top) / z for t in theta]
        g = gradient(pi)
        gbar = sum(a * x for a, x in zip(pi, g))
        return [a * (x - gbar) for a, x in zip(pi, g)]

    n = len(theta0)
    jac = mp.matrix(n, n)
    for j in range(n):
        up, down = list(theta0), list(theta0)
        up[j] += step
        down[j] -= step
        fu, fd = field(up), field(down)
        for i in range(n):
            jac[i, j] = (fu[i] - fd[i]) / (2 * step)
    return field(list(theta0)), jac
