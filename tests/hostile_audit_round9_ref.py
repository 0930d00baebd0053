"""Independent references for the ninth hostile audit (:mod:`hostile_audit_round9`).

Nothing here imports ``grpo_theory``. Every number comes from the definitions of the maths contract
(/work/shared/SPEC.md sections 1 to 5, 8) and of docs/guide.md's family section, computed directly:

* ``delta``: ``Delta(x) = P_G(a|pi) - P_G(b|pi)`` of a binary question with rewards 1/0, ``pi(a) = x``, by the sum
  over ``k ~ Binomial(G-1, x)`` correct answers among the others in 40-digit mpmath, for Eq. 2's advantage (with
  ``ddof``, ``eps`` and the variance epsilon ``A = (r - mean)/sqrt(var + veps)``), shift-only, RLOO
  (``r_i - mean_{j != i} r_j``, whose expectation is the reward gap at every G) and REINFORCE++
  (``sqrt((G-1)/G) (E[r|o] - mu)/sigma``, docs/guide.md); G = inf in closed form.
* ``root``: the stationary point the on-policy flow from ``p`` reaches (the first sign change above ``p`` of the
  binary condition, scan and bisection in mpmath): reverse ``x(1-x) Delta = beta (x - p)``, direct
  ``Delta = beta (logit x - logit p)``, with an entropy bonus ``- c logit x`` (per unit of ``x(1-x)``), tied
  groups filtered at G = 2 (``x(1-x) = beta (x-p)(x^2 + (1-x)^2)``).
* ``pg_family``: ``P_G(o|pi)`` for K outputs with deterministic rewards by enumerating the other members' reward
  levels (multinomial), each group's advantage written out (group/scale with ddof, eps, veps; shift; RLOO).
* ``flow_end``: a plain RK4 integration of the expected-gradient flow on softmax logits
  (``dz_o/dt = pi_o (P_o - E_pi P) - beta g_o``, ``g_o = pi_o - pi_ref_o`` reverse, ``pi_o (log(pi_o/pi_ref_o) -
  KL)`` direct) from ``pi_ref``, then Newton's method on the stationarity condition from where it stops.
* the large-G direct ``h`` and its turning point in mpmath; Eq. 14, Eq. 15 and log pooling are round eight's
  (:mod:`hostile_audit_round8_ref`), the first-root scan round seven's.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
from hostile_audit_round7_ref import _first_root, _others
from hostile_audit_round8_ref import close, direct_resid, eq14, eq15, reverse_resid, rlhf  # noqa: F401  (for the cases)

DPS = 40


# ---------------------------------------------------------------- closed forms (SPEC section 4)
def logistic_shift(p, s) -> float:
    """``x`` with ``logit x = logit p + s`` (the direct penalty's binary answers)."""
    with mp.workdps(DPS):
        p = mp.mpf(p)
        return float(p / (p + mp.exp(-mp.mpf(s)) * (1 - p)))


def h_large_direct(x, p, beta) -> float:
    with mp.workdps(DPS):
        x, p, b = mp.mpf(x), mp.mpf(p), mp.mpf(beta)
        return float(1 / (b * mp.sqrt(x * (1 - x))) - mp.log(x / (1 - x)) + mp.log(p / (1 - p)))


def turning_point(beta) -> float:
    with mp.workdps(DPS):
        b = mp.mpf(beta)
        return float((1 + mp.sqrt(1 - 1 / (1 + b * b))) / 2)


# ---------------------------------------------------------------- binary Delta(x) by the binomial sum
def _adv_mp(r0, ones, G, ddof, eps, veps, normalization):
    """Eq. 2's advantage of a member with reward ``r0`` in a group of ``G`` rewards 1/0 holding ``ones`` ones."""
    m = mp.mpf(ones) / G
    if normalization == "shift":
        return r0 - m
    if ones in (0, G):
        return mp.mpf(0)
    var = m * (1 - m) * G / (G - ddof)
    return (r0 - m) / (mp.sqrt(var + veps) + eps)


def binary_pg(x, G, *, ddof=0, eps=0.0, veps=0.0, normalization="scale"):
    """``(P_G(a), P_G(b))`` for rewards 1/0 and ``pi(a) = x``."""
    with mp.workdps(DPS):
        x = mp.mpf(x)
        G = int(G)
        pa = pb = mp.mpf(0)
        for k in range(G):
            w = mp.binomial(G - 1, k) * x ** k * (1 - x) ** (G - 1 - k)
            pa += w * _adv_mp(1, k + 1, G, ddof, eps, veps, normalization)
            pb += w * _adv_mp(0, k, G, ddof, eps, veps, normalization)
        return pa, pb


def delta(x, G, *, advantage="group", normalization="scale", ddof=0, eps=0.0, veps=0.0, gap=1.0):
    """``Delta(x) = P_G(a) - P_G(b)``, rewards ``gap``/0 (scale normalisation is invariant to the gap without eps)."""
    x = mp.mpf(x)
    if advantage == "rloo":
        return mp.mpf(gap)
    if advantage == "reinforce_pp":
        c = mp.mpf(1) if G == math.inf else mp.sqrt(mp.mpf(G - 1) / G)
        return c / mp.sqrt(x * (1 - x))
    if G == math.inf:
        return mp.mpf(gap) if normalization == "shift" else 1 / (mp.sqrt(x * (1 - x)) + eps)
    pa, pb = binary_pg(x, G, ddof=ddof, eps=eps, veps=veps, normalization=normalization)
    return (pa - pb) * (gap if normalization == "shift" else 1)


def root(p, beta, G=2, penalty="reverse", *, entropy=0.0, filtered=False, **kw) -> float:
    """The point the flow from ``p`` reaches on a binary question (rewards 1/0 unless ``gap``)."""
    with mp.workdps(DPS):
        p, b, c = mp.mpf(p), mp.mpf(beta), mp.mpf(entropy)
        lg = lambda x: mp.log(x / (1 - x))  # noqa: E731
        if filtered:
            f = lambda x: x * (1 - x) - b * (x - p) * (x * x + (1 - x) ** 2)  # noqa: E731
        elif penalty == "reverse":
            f = lambda x: x * (1 - x) * (delta(x, G, **kw) - c * lg(x)) - b * (x - p)  # noqa: E731
        else:
            lp = lg(p)
            f = lambda x: delta(x, G, **kw) - c * lg(x) - b * (lg(x) - lp)  # noqa: E731
        return _first_root(f, p, n=300, top_digits=30, halvings=140)


# ---------------------------------------------------------------- K outputs, deterministic rewards
def _adv(rew, i, advantage, normalization, ddof, eps, veps):
    G = len(rew)
    if advantage == "rloo":
        return rew[i] - math.fsum(rew[:i] + rew[i + 1:]) / (G - 1)
    if max(rew) == min(rew):
        return 0.0
    m = math.fsum(rew) / G
    if normalization == "shift":
        return rew[i] - m
    var = math.fsum((r - m) ** 2 for r in rew) / (G - ddof)
    return (rew[i] - m) / (math.sqrt(var + veps) + eps)


def pg_family(pi, rewards, G, *, advantage="group", normalization="scale", ddof=0, eps=0.0, veps=0.0):
    """``P_G(o|pi)`` by enumerating the other ``G - 1`` members' levels (finite G) or the closed forms (G = inf)."""
    levels = sorted(set(float(r) for r in rewards))
    q = [math.fsum(p for p, r in zip(pi, rewards) if float(r) == lv) for lv in levels]
    mean = math.fsum(ql * lv for ql, lv in zip(q, levels))
    if G == math.inf or advantage == "reinforce_pp":
        sd = math.sqrt(math.fsum(ql * (lv - mean) ** 2 for ql, lv in zip(q, levels)))
        if advantage == "rloo" or normalization == "shift":
            return np.array([float(r) - mean for r in rewards])
        c = 1.0 if G == math.inf else math.sqrt((G - 1) / G)
        return np.array([c * (float(r) - mean) / (sd + (eps if advantage == "group" else 0.0)) for r in rewards])
    per = {}
    for lv in levels:
        terms = []
        for counts, w in _others(G, q):
            if w == 0.0:
                continue
            others = [l2 for l2, cnt in zip(levels, counts) for _ in range(cnt)]
            terms.append(w * _adv([lv, *others], 0, advantage, normalization, ddof, eps, veps))
        per[lv] = math.fsum(terms)
    return np.array([per[float(r)] for r in rewards])


def flow_end(pi_ref, rewards, beta, G, penalty="reverse", t_end=4000.0, dt=0.05, **kw) -> np.ndarray:
    """The end of the expected-gradient flow on logits from ``pi_ref`` (RK4), polished by Newton's method on the
    condition (``scipy.optimize.fsolve`` on the logits, the simplex fixed by ``sum z = 0``)."""
    from scipy.optimize import fsolve

    pr = np.asarray(pi_ref, float)

    def field(z):
        e = np.exp(z - z.max())
        pi = e / e.sum()
        P = pg_family(pi, rewards, G, **kw)
        a = pi * (P - pi @ P)
        if penalty == "reverse":
            g = pi - pr
        else:
            lr = np.log(pi / pr)
            g = pi * (lr - pi @ lr)
        return a - beta * g

    z = np.log(pr)
    t = 0.0
    while t < t_end:
        k1 = field(z)
        if np.abs(k1).max() < 1e-9:
            break
        k2 = field(z + dt / 2 * k1)
        k3 = field(z + dt / 2 * k2)
        k4 = field(z + dt * k3)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    z = z - z.mean()
    sol = fsolve(lambda y: np.append(field(y)[:-1], y.sum()), z, xtol=1e-14)
    e = np.exp(sol - sol.max())
    return e / e.sum()
