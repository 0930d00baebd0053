r"""Stationary policies of token-level GRPO on two-token answers (beyond the note).

The note works with whole answers. Common trainers take the ratio and the KL
penalty per token and average over the answer's tokens. For an answer ``(t1, t2)``
with the policy factorised as ``pi1(t1) pi2(t2 | t1)`` and ``P(t1, t2) = P_G((t1, t2) | pi)``
(the sequence preference, computed exactly), the on-policy expected gradient of the
token-level objective vanishes when (the 1/2 of the token average cancels)

* reverse (per-token k3, no ratio):
  ``pi2(t2|t1) (1 - (P(t1,t2) - Pbar(t1))/beta) = pi2_ref(t2|t1)`` with ``Pbar(t1) = E_{pi2(.|t1)} P(t1, .)``,
  and ``pi1(t1) (1 - (Q(t1) - E_pi1 Q)/beta) = pi1_ref(t1)`` with ``Q(t1) = Pbar(t1)``;
* direct (per-token ratio * k3):
  ``pi2(.|t1) ∝ pi2_ref(.|t1) exp(P(t1, .)/beta)`` and ``pi1 ∝ pi1_ref exp(Q/beta)``.

At sequence level the first-token condition involves the whole sequence term
instead (for the direct penalty a log-sum-exp over ``t2`` instead of the mean ``Q``),
so the two stationary policies differ whenever the reward depends on ``t2``.
"""

from __future__ import annotations

import numpy as np

from ._numerics import logsumexp, optimize
from .preference import reward_preference
from .problem import InvalidInputError, Objective, Question
from .proximal import _reverse_argmax
from .stationary import stationary_policy


def _normalised(log_v: np.ndarray) -> np.ndarray:
    return np.exp(log_v - logsumexp(log_v))


def token_level_stationary(pi1_ref, pi2_ref, rewards, obj: Objective) -> dict:
    """Token-level stationary policy for answers ``(t1, t2)``, ``t1 in 0..n1-1``, ``t2 in 0..n2-1``.

    ``pi1_ref`` (n1,), ``pi2_ref`` (n1, n2) rows summing to 1, ``rewards`` (n1, n2).
    Returns ``dict(pi=(n1*n2,) sequence policy in row-major order, pi1, pi2, residual, converged)``.
    The sequence-level stationary point is the starting guess; the equations above
    are solved by MINPACK's hybrid method on the logits.
    """
    pi1_ref = np.asarray(pi1_ref, float)
    pi2_ref = np.asarray(pi2_ref, float)
    r = np.asarray(rewards, float)
    n1, n2 = pi2_ref.shape
    if pi1_ref.shape != (n1,) or r.shape != (n1, n2):
        raise InvalidInputError(f"shapes: pi1_ref {pi1_ref.shape}, pi2_ref {pi2_ref.shape}, rewards {r.shape}")
    if np.any(pi1_ref <= 0) or np.any(pi2_ref <= 0):
        raise InvalidInputError("token-level solver needs strictly positive reference probabilities")
    q = Question((pi1_ref[:, None] * pi2_ref).ravel(), rewards=r.ravel())
    beta = obj.beta

    def unpack(x):
        l1 = np.append(x[: n1 - 1], 0.0)
        l2 = np.hstack([x[n1 - 1:].reshape(n1, n2 - 1), np.zeros((n1, 1))])
        return _normalised(l1), np.vstack([_normalised(row) for row in l2])

    def target(x):
        pi1, pi2 = unpack(x)
        P = reward_preference(q, (pi1[:, None] * pi2).ravel(), obj).reshape(n1, n2)
        Q = (pi2 * P).sum(axis=1)
        if obj.penalty == "direct":
            new1 = _normalised(np.log(pi1_ref) + Q / beta)
            new2 = np.vstack([_normalised(np.log(pi2_ref[i]) + P[i] / beta) for i in range(n1)])
        else:
            new1 = _reverse_argmax(pi1_ref, Q, beta)
            new2 = np.vstack([_reverse_argmax(pi2_ref[i], P[i], beta) for i in range(n1)])
        return new1, new2

    def equations(x):
        new1, new2 = target(x)
        l1, l2 = np.log(new1), np.log(new2)
        return np.concatenate([(l1[:-1] - l1[-1]) - x[: n1 - 1],
                               ((l2[:, :-1] - l2[:, -1:]) - x[n1 - 1:].reshape(n1, n2 - 1)).ravel()])

    start = stationary_policy(q, obj)
    if start.boundary or np.any(start.pi <= 0):
        raise InvalidInputError("the sequence-level stationary policy is a vertex (a limit point of the "
                                "direct penalty at G = inf); the token-level solver needs an interior start")
    seq = start.pi.reshape(n1, n2)
    s1 = seq.sum(axis=1)
    s2 = seq / s1[:, None]
    x0 = np.concatenate([np.log(s1[:-1] / s1[-1]), (np.log(s2[:, :-1]) - np.log(s2[:, -1:])).ravel()])
    sol = optimize.root(equations, x0, method="hybr", options={"xtol": 1e-13})
    pi1, pi2 = unpack(sol.x)
    residual = float(np.max(np.abs(equations(sol.x))))
    return dict(pi=(pi1[:, None] * pi2).ravel(), pi1=pi1, pi2=pi2, residual=residual,
                converged=bool(residual < 1e-9))
