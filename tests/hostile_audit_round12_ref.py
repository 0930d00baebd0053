"""Independent reference of the twelfth hostile audit: no ``grpo_theory`` import.

Written from SPEC sections 1-4 (and docs/predict.md section 5 for the finite-time flow); the multi-level
preference, the per-output gradient ``g`` and the KKT residual come from :mod:`hostile_audit_round11_ref`
(an enumeration with ``math.fsum``, also free of ``grpo_theory``). New here:

* :func:`binary_gap` -- ``P_G(a|pi) - P_G(b|pi)`` of a deterministic binary question from SPEC section 2's
  binomial sums (``k ~ Binomial(G - 1, x)``, weights in log space), and the penalty's slope difference;
* :func:`finite_flow` -- the finite-time shared-weights flow ``dz_i/dt = sum_j K_ij h_j(z_j)`` with
  ``h(z) = 2 x (1 - x) (g_a - g_b)``, ``x = expit(z)``, by a plain RK4 in the logits;
* :func:`euler_logits` -- plain Euler steps ``z_o += lr pi(o) (g(o) - E_pi g)`` (GRPO's first inner step at
  ``pi_old = pi`` is the flow's Euler step: the clipped ratio is 1 there);
* :func:`group_advantages`, :func:`leave_one_out` -- one group's advantages from SPEC's Eq. 2 and RLOO's
  definition; :func:`conditional_advantage` -- ``E[A_1 | r_1 = v_l]`` by enumerating every ordered tuple of the
  other ``G - 1`` members' levels (``L^(G-1)`` tuples, no pooling);
* :func:`pass_before` -- the unbiased pass@k estimate ``1 - C(n - c, k)/C(n, k)``;
* :func:`trajectory` -- synthetic logged P(correct) curves with a known one-signed drift or a known end.
"""

from __future__ import annotations

import itertools
import math
from math import fsum, lgamma

INF = math.inf


def expit(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def logit(x: float) -> float:
    return math.log(x) - math.log1p(-x)


# ---------------------------------------------------------------- binary question: SPEC section 2's sums
def binary_pref(x: float, G) -> tuple[float, float]:
    """``(P_G(a|pi), P_G(b|pi))`` for deterministic ``r(a) > r(b)``, scale normalisation, ddof 0, ``pi(a) = x``."""
    if G == INF:
        s = math.sqrt(x * (1 - x))
        return ((1 - x) / s, -x / s) if s > 0 else (0.0, 0.0)
    n = int(G) - 1
    pa, pb = [], []
    for k in range(n + 1):
        lw = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)
        lw += (k * math.log(x) if k else 0.0) + ((n - k) * math.log1p(-x) if n - k else 0.0)
        w = math.exp(lw)
        pa.append(w * math.sqrt((n - k) / (k + 1)))
        pb.append(-w * math.sqrt(k / (n + 1 - k)) if k else 0.0)
    return fsum(pa), fsum(pb)


def binary_gap(x: float, p: float, beta: float, G=2, penalty: str = "reverse") -> float:
    """``g(a) - g(b)`` at ``pi(a) = x`` for ``pi_ref(a) = p`` (SPEC section 3's gradient)."""
    pa, pb = binary_pref(x, G)
    if penalty == "reverse":
        slope = (1 - p / x) - (1 - (1 - p) / (1 - x))
    else:
        slope = (math.log(x) - math.log(p)) - (math.log1p(-x) - math.log1p(-p))
    return pa - pb - beta * slope


def rk4(f, y0: list, t_end: float, n_steps: int) -> list:
    """A plain fixed-step RK4 of ``dy/dt = f(y)`` from ``y0`` over ``[0, t_end]``."""
    y, dt = list(y0), t_end / n_steps
    for _ in range(n_steps):
        k1 = f(y)
        k2 = f([a + dt / 2 * b for a, b in zip(y, k1)])
        k3 = f([a + dt / 2 * b for a, b in zip(y, k2)])
        k4 = f([a + dt * b for a, b in zip(y, k3)])
        y = [a + dt / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(y, k1, k2, k3, k4)]
    return y


def finite_flow(p_start: list, p_ref: list, beta: float, t: float, *, G=2, penalty="reverse", rho: float = 0.0,
                K=None, n_steps: int = 4000) -> list:
    """docs/predict.md section 5: every prompt's P(correct) after flow time ``t`` with ``K = (1 - rho) I + rho 11^T/N``
    (or the kernel ``K`` scaled to mean diagonal 1)."""
    N = len(p_start)
    if K is not None:
        d = fsum(K[i][i] for i in range(N)) / N
        K = [[v / d for v in row] for row in K]

    def f(z):
        h = []
        for zi, pr in zip(z, p_ref):
            x = expit(zi)
            h.append(2 * x * (1 - x) * binary_gap(x, pr, beta, G, penalty))
        if K is not None:
            return [fsum(K[i][j] * h[j] for j in range(N)) for i in range(N)]
        m = fsum(h) / N
        return [(1 - rho) * hi + rho * m for hi in h]
    return [expit(z) for z in rk4(f, [logit(p) for p in p_start], t, n_steps)]


def pass_before(n: int, c: int, k: int) -> float | None:
    """The unbiased pass@k estimate from ``c`` correct of ``n`` (None where ``k > n``)."""
    if k > n:
        return None
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


# ---------------------------------------------------------------- flows and steps on the logits
def euler_logits(pi0: list, grad, lr: float, n: int) -> list:
    """``n`` plain Euler steps ``z_o += lr pi(o) (g(o) - E_pi g)`` from ``pi0`` (every entry > 0); ``grad(pi)``."""
    z = [math.log(p) for p in pi0]
    for _ in range(n):
        pi = _softmax(z)
        g = grad(pi)
        lam = fsum(a * b for a, b in zip(pi, g))
        z = [a + lr * p * (x - lam) for a, p, x in zip(z, pi, g)]
    return _softmax(z)


def logit_flow(pi0: list, grad, t_end: float, n_steps: int) -> list:
    """RK4 of the logit flow ``dz_o/dt = pi(o) (g(o) - E_pi g)`` from ``pi0`` to ``t_end``."""
    def f(z):
        pi = _softmax(z)
        g = grad(pi)
        lam = fsum(a * b for a, b in zip(pi, g))
        return [p * (x - lam) for p, x in zip(pi, g)]
    return _softmax(rk4(f, [math.log(p) for p in pi0], t_end, n_steps))


def _softmax(z):
    m = max(z)
    e = [math.exp(x - m) for x in z]
    s = fsum(e)
    return [x / s for x in e]


# ---------------------------------------------------------------- one group's advantages, and their enumeration
def group_advantages(r: list, ddof: int = 0, eps: float = 0.0, shift: bool = False) -> list:
    """SPEC Eq. 2 for one group ``r``: ``(r_i - mean)/(std + eps)`` (0 for a tie), or ``r_i - mean``."""
    G = len(r)
    mean = fsum(r) / G
    if all(v == r[0] for v in r):
        return [0.0] * G
    if shift:
        return [v - mean for v in r]
    sd = math.sqrt(fsum((v - mean) ** 2 for v in r) / (G - ddof))
    return [(v - mean) / (sd + eps) for v in r]


def leave_one_out(r: list) -> list:
    """RLOO: ``r_i`` minus the mean of the other ``G - 1`` rewards."""
    G, s = len(r), fsum(r)
    return [v - (s - v) / (G - 1) for v in r]


def conditional_advantage(levels: list, w: list, G: int, adv) -> list:
    """``E[A_1 | r_1 = v_l]`` for each level by enumerating every ordered tuple of the others' levels."""
    out = []
    for l1 in range(len(levels)):
        terms = []
        for rest in itertools.product(range(len(levels)), repeat=G - 1):
            prob = math.prod(w[j] for j in rest)
            if prob:
                terms.append(prob * adv([levels[l1]] + [levels[j] for j in rest])[0])
        out.append(fsum(terms))
    return out


# ---------------------------------------------------------------- synthetic trajectories
def trajectory(kind: str, n: int, *, start=0.2, end=0.8, rate=0.01, amp=0.1, period=20.0, seed=0, noise=0.0):
    """``(steps, values)``: ``n`` logged points of a curve of ``kind``: ``linear`` (``start + rate s``), ``sqrt``,
    ``log`` (one-signed, never flat), ``exp`` (``end - (end - start) e^(-rate s)``), ``flat``, ``sine`` (about
    ``end``), each plus Gaussian ``noise`` (seeded)."""
    import random

    rnd = random.Random(seed)
    steps = list(range(1, n + 1))
    vals = []
    for s in steps:
        if kind == "linear":
            v = start + rate * s
        elif kind == "sqrt":
            v = start + rate * math.sqrt(s)
        elif kind == "log":
            v = start + rate * math.log(s)
        elif kind == "exp":
            v = end - (end - start) * math.exp(-rate * s)
        elif kind == "sine":
            v = end + amp * math.sin(2 * math.pi * s / period)
        else:
            v = end
        vals.append(v + (rnd.gauss(0.0, noise) if noise else 0.0))
    return steps, vals
