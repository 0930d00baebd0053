"""Independent reference computations for the tests.

Nothing here imports the code under test: these are the definitions of the
SPEC written out the slow, obvious way (enumerating every group of outputs and
every reward realisation), so that the fast library code is checked against
the mathematics and not against itself.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def group_advantage_first(rewards, normalization="scale", ddof=0, eps=0.0) -> float:
    """A_1 for one group, straight from Eq. 2 (ties give 0 when eps == 0)."""
    r = np.asarray(rewards, dtype=float)
    centred = r[0] - r.mean()
    if normalization == "shift":
        return float(centred)
    if np.all(r == r[0]):
        return 0.0
    return float(centred / (r.std(ddof=ddof) + eps))


class _FirstAdvantages(dict):
    """``lv -> A_1`` of the group whose rewards are ``levels[lv]``, by :func:`group_advantage_first`,
    each tuple computed the first time it is asked for: A_1 depends on the reward tuple only, not on
    which outputs drew it, so the enumerations below ask for the same tuple once per group of outputs
    (K^(G-1) times over) and the numbers are the same as calling it every time."""

    def __init__(self, levels, normalization, ddof, eps):
        super().__init__()
        self.args = (np.asarray(levels, float), normalization, ddof, eps)

    def __missing__(self, lv):
        levels, normalization, ddof, eps = self.args
        value = self[lv] = group_advantage_first(levels[list(lv)], normalization, ddof, eps)
        return value


def brute_force_preference(levels, reward_probs, pi, G, normalization="scale",
                           ddof=0, eps=0.0) -> np.ndarray:
    """P_G(o|pi) by enumerating every group (o_2..o_G) and every reward tuple."""
    levels = np.asarray(levels, float)
    probs = np.asarray(reward_probs, float)
    pi = np.asarray(pi, float)
    K, L = probs.shape
    first_advantage = _FirstAdvantages(levels, normalization, ddof, eps)
    out = np.zeros(K)
    for o in range(K):
        total = 0.0
        for others in itertools.product(range(K), repeat=G - 1):
            p_group = math.prod(pi[j] for j in others)
            if p_group == 0:
                continue
            outs = (o,) + others
            for lv in itertools.product(range(L), repeat=G):
                p_r = math.prod(probs[outs[i], lv[i]] for i in range(G))
                if p_r == 0:
                    continue
                total += p_group * p_r * first_advantage[lv]
        out[o] = total
    return out


def brute_force_preference_fn(levels, reward_probs, G, normalization="scale", ddof=0, eps=0.0):
    """The same enumeration as :func:`brute_force_preference`, done once: returns ``pi -> P_G(.|pi)``.

    ``P_G(o|pi) = sum over (o_2..o_G) of prod_j pi(o_j) * C(o, o_2..o_G)``, where the coefficient
    ``C`` (every reward tuple's probability times A_1, summed) does not depend on ``pi``. Enumerating
    ``C`` once and evaluating the polynomial per call gives the same numbers (to rounding) at a
    fraction of the cost, for loops that evaluate ``P_G`` thousands of times (Euler ascent).
    """
    levels = np.asarray(levels, float)
    probs = np.asarray(reward_probs, float)
    K, L = probs.shape
    groups = list(itertools.product(range(K), repeat=G - 1))
    first_advantage = _FirstAdvantages(levels, normalization, ddof, eps)
    coef = np.zeros((K, len(groups)))
    for o in range(K):
        for g, others in enumerate(groups):
            outs = (o,) + others
            total = 0.0
            for lv in itertools.product(range(L), repeat=G):
                p_r = math.prod(probs[outs[i], lv[i]] for i in range(G))
                if p_r == 0:
                    continue
                total += p_r * first_advantage[lv]
            coef[o, g] = total
    index = np.array(groups, dtype=int).reshape(len(groups), G - 1)

    def P(pi):
        pi = np.asarray(pi, float)
        weights = np.prod(pi[index], axis=1) if G > 1 else np.ones(1)
        return coef @ weights

    return P


def pairwise_preference_p2(levels, reward_probs, pi) -> np.ndarray:
    """SPEC: P_2(o|pi) = sum_o' pi(o') [P(o > o') - P(o' > o)], by double sums over levels."""
    levels = np.asarray(levels, float)
    probs = np.asarray(reward_probs, float)
    K, L = probs.shape
    out = np.zeros(K)
    for o in range(K):
        for o2 in range(K):
            win = sum(probs[o, i] * probs[o2, j] for i in range(L) for j in range(L) if levels[i] > levels[j])
            lose = sum(probs[o, i] * probs[o2, j] for i in range(L) for j in range(L) if levels[i] < levels[j])
            out[o] += pi[o2] * (win - lose)
    return out


def large_group_preference(levels, reward_probs, pi) -> np.ndarray:
    """SPEC: P_inf(o|pi) = (E[r|o] - E_pi r) / sigma_pi (noise included)."""
    levels = np.asarray(levels, float)
    probs = np.asarray(reward_probs, float)
    w = np.asarray(pi) @ probs
    mean = w @ levels
    sigma = math.sqrt(w @ (levels - mean) ** 2)
    return (probs @ levels - mean) / sigma


def expected_gradient_ascent(P_fn, pi_ref, beta, penalty, x0, lr=0.05, steps=200_000, tol=1e-13,
                             return_converged=False):
    """Plain Euler ascent of the on-policy expected gradient on softmax logits.

    ``P_fn(pi) -> P_G(.|pi)``; the penalty gradient is written from the SPEC
    (reverse: 1 - pi_ref/pi; direct: log(pi/pi_ref) + 1). With ``return_converged`` also says
    whether the step fell below ``tol`` within ``steps`` (near a vertex the logit flow moves at
    a speed proportional to the light output's mass, and plain Euler may run out of steps).
    """
    converged = False
    pi_ref = np.asarray(pi_ref, float)
    theta = np.log(np.asarray(x0, float))
    for _ in range(steps):
        pi = np.exp(theta - theta.max())
        pi /= pi.sum()
        P = P_fn(pi)
        if penalty == "reverse":
            g = P - beta * (1 - pi_ref / pi)
        else:
            g = P - beta * (np.log(pi / pi_ref) + 1)
        step = pi * (g - pi @ g)
        theta = theta + lr * step
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    pi = np.exp(theta - theta.max())
    pi = pi / pi.sum()
    return (pi, converged) if return_converged else pi
