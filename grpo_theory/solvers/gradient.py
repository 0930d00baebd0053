r"""The per-output gradient ``g(o) = dJ/dpi(o)`` at ``pi_old = pi`` and the stationarity residual.

``g`` and the stationarity condition are defined in :mod:`grpo_theory.solvers.classes` (its module
doc); these functions work on every output of a question, for every estimator and placement.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import OBJECTIVE, QUESTION, checked
from .. import advantage, kl
from .._numerics import logsumexp
from .._validate import as_floats
from ..errors import InvalidInputError
from ..preference import preference_evaluator, reward_preference
from ..problem import (STATIONARY_OBJECTIVE, Objective, Question, as_objective, as_question, shaped_question,
                       validate_policy, validate_probability_vector)

__all__ = ["output_gradient", "stationarity_residual"]


@checked(q=QUESTION, obj=OBJECTIVE)
def output_gradient(q: Question, obj: Objective, pi: np.ndarray) -> np.ndarray:
    """``g(o) = dJ/dpi(o)`` at ``pi_old = pi`` for every output in the support of ``pi``; 0 outside it.

    reverse: ``P_G - beta (1 - pi_ref/pi)``; direct: ``P_G - beta (log(pi/pi_ref) + 1)``; other
    estimators and placements: ``P_G - beta c(o)`` with ``c`` of :func:`grpo_theory.kl.coefficient`,
    or, with the KL in the reward, ``P_G`` of the shaped reward ``r - beta value``.

    Parameters
    ----------
    q : Question
        The question: its outputs, ``pi_ref`` and the reward of each output.
    obj : Objective
        The objective: ``beta``, the group size ``G``, the penalty and the advantage estimator.
    pi : array_like, shape (K,)
        The policy.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``g``; ``pi`` is stationary when ``g`` is constant on its support.

    Raises
    ------
    InvalidInputError
        When the KL in the reward meets a preference-matrix question.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.3, 0.7], rewards=[1, 0])
    >>> g = output_gradient(q, Objective(beta=1.0), [0.3**0.5, 1 - 0.3**0.5])
    >>> round(float(g[0] - g[1]), 12)             # Eq. 14's point is stationary: g is constant
    0.0
    """
    return gradient_with_coefficient(q, obj, pi, kl.flow_coefficient)


def policy_and_centred_gradient(q: Question, obj: Objective, theta: np.ndarray, support: np.ndarray,
                                gradient=None) -> tuple[np.ndarray, np.ndarray]:
    """``pi`` on ``support`` from its logits ``theta``, and ``g - E_pi g`` there: the flow on the output logits
    (:func:`~grpo_theory.solvers.full_space.logit_flow`) is their product. Nothing is checked.

    Parameters
    ----------
    q : Question
        The question whose outputs ``support`` indexes.
    obj : Objective
        The objective of the gradient (any penalty, estimator and placement).
    theta : numpy.ndarray, shape (S,)
        Finite logits of the answers of ``support``.
    support : numpy.ndarray, shape (S,)
        Distinct output indices (an integer array); the other answers are at mass 0.
    gradient : callable, optional
        ``pi -> g`` of ``q`` and ``obj`` (:func:`gradient_evaluator`'s); by default :func:`output_gradient`.

    Returns
    -------
    tuple of numpy.ndarray
        ``pi`` and ``g - E_pi g`` on ``support``.
    """
    pi = np.zeros(q.n_outputs)
    pi[support] = np.exp(theta - logsumexp(theta))
    g = (output_gradient(q, obj, pi) if gradient is None else gradient(pi))[support]
    return pi[support], g - pi[support] @ g


@checked(q=QUESTION, obj=OBJECTIVE)
def gradient_evaluator(q: Question, obj: Objective):
    """``pi -> output_gradient(q, obj, pi)`` with the per-call set-up done once, for a flow's hundreds of calls.

    The checks of ``q`` and ``obj`` are made here, once; ``P_G`` comes from
    :func:`~grpo_theory.preference.preference_evaluator` (the same values as ``reward_preference`` to the bit),
    and the rest is :func:`output_gradient`'s own operations (``pi``'s checks included), so ``g`` is the same to
    the bit. With the KL in the reward the shaped question changes with ``pi``: ``P_G`` is then computed per call,
    as :func:`output_gradient` does.

    Parameters
    ----------
    q : Question
        As for :func:`output_gradient`, checked here once.
    obj : Objective
        As for :func:`output_gradient` (every penalty, estimator and placement), checked here once.

    Returns
    -------
    callable
        ``f(pi)``, ``pi`` of shape (K,), returning ``g`` of shape (K,), 0 outside ``pi``'s support.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q, obj = Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0)
    >>> g = gradient_evaluator(q, obj)([0.3**0.5, 1 - 0.3**0.5])
    >>> round(float(g[0] - g[1]), 12)
    0.0
    """
    preference = None if obj.regime_variant.in_reward else preference_evaluator(q, obj)
    return lambda pi: gradient_with_coefficient(q, obj, pi, kl.flow_coefficient, preference)


def gradient_with_coefficient(q: Question, obj: Objective, pi, coefficient, preference=None) -> np.ndarray:
    """:func:`output_gradient` with the loss placement's per-answer coefficient ``c(lr)`` taken from
    ``coefficient(obj, lr)``: the field with its jumps smoothed (:mod:`.kinks`) or read on one side of them.
    Only the loss placement reads ``c``; the reward placement, the note's two penalties and ``beta = 0`` do not.

    Parameters
    ----------
    q : Question
        The question: ``pi_ref`` and each output's reward law.
    obj : Objective
        The objective; its estimator's ``c`` is replaced by ``coefficient``.
    pi : array_like, shape (K,)
        The policy at which ``g`` is read.
    coefficient : callable
        ``coefficient(obj, lr) -> c``, ``lr`` the log-ratios of ``pi``'s support (``output_gradient`` passes
        :func:`grpo_theory.kl.flow_coefficient`).
    preference : callable, optional
        ``pi -> P_G`` of ``q`` and ``obj`` (:func:`~grpo_theory.preference.preference_evaluator`); by default
        :func:`~grpo_theory.preference.reward_preference`. Not used with the KL in the reward.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``g`` with that coefficient; 0 outside the support.
    """
    pi = as_floats("pi", pi)                             # text, bytes, 10**400, complex: refused by name
    if pi.shape != (q.n_outputs,):
        raise InvalidInputError(f"pi must be a vector of {q.n_outputs} probabilities (one per output), got shape "
                                f"{pi.shape}")
    s = pi > 0
    g = np.zeros_like(pi)
    lr = np.zeros_like(pi)
    with np.errstate(divide="ignore"):
        lr[s] = np.log(pi[s]) - np.log(q.pi_ref[s])
    if obj.regime_variant.in_reward:
        if not q.has_reward_law:
            raise InvalidInputError("kl_placement='reward' needs a reward law; a preference matrix has no reward "
                                    "to shape")
        g[s] = reward_preference(shaped_question(q, kl.flow_value_shift(obj, lr)), obj, pi)[s]
        return g
    P = reward_preference(q, obj, pi) if preference is None else preference(pi)
    if advantage.changes_regulariser(obj):
        return _family_output_gradient(q, obj, pi, P, lr, s, coefficient)
    if obj.regime_variant.is_reverse:
        g[s] = P[s] - obj.beta * (1.0 - q.pi_ref[s] / pi[s])
    elif obj.regime_variant.is_direct:
        g[s] = P[s] - obj.beta * (lr[s] + 1.0)
    else:
        g[s] = P[s] - obj.beta * coefficient(obj, lr[s])
    return g


def _family_output_gradient(q: Question, obj: Objective, pi: np.ndarray, P: np.ndarray, lr: np.ndarray,
                            s: np.ndarray, coefficient) -> np.ndarray:
    """:func:`output_gradient` with tie filtering and/or an entropy bonus (see :mod:`grpo_theory.advantage`)."""
    slope = coefficient(obj, lr[s])                  # per-sample slope in log pi (see ClassProblem._family_gradient)
    u = None
    if obj.filter_ties:
        if not q.has_reward_law:
            raise InvalidInputError("filter_ties needs a reward law; this question was given as a preference matrix")
        with np.errstate(divide="ignore"):
            log_w = np.log(pi @ q.membership)
        u = advantage.tie_free_probability(q.membership[s], log_w, obj.group_size)
    g = np.zeros_like(pi)
    # U = E_pi u sums over the support only (pi is 0 elsewhere), so restricting to s is exact
    g[s] = advantage.regularised_gradient(P[s], slope, np.log(pi[s]), obj, u)
    return g


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE)
def stationarity_residual(q: Question, obj: Objective, pi) -> float:
    """Max-norm residual of the stationarity condition at ``pi``.

    reverse: ``max_o |pi(o) (1 - (P_G(o|pi) - E_pi P_G)/beta) - pi_ref(o)|`` (Eq. 11);
    direct:  ``max_o |pi(o) - pi_ref(o) exp(P_G(o|pi)/beta) / Z|``;
    other estimators and placements: ``max_o pi(o) |g(o) - E_pi g| / beta`` with ``g`` of
    :func:`output_gradient` (the speed of the logit flow over ``beta``), over the support of ``pi``:
    an absent answer's ``g(o)`` may be infinite (a log-ratio estimator at ``pi(o) = 0``) and does not
    move the flow; an infinite ``g`` on the support gives ``inf`` (not stationary).

    Parameters
    ----------
    q : Question
        The question: its outputs, ``pi_ref`` and the reward of each output.
    obj : Objective or mapping
        The objective: ``beta``, the group size ``G``, the penalty and the advantage estimator. A dict of its fields
        is accepted.
    pi : array_like, shape (K,)
        A policy on the simplex.

    Returns
    -------
    float
        The residual; 0 exactly at a stationary policy.

    Raises
    ------
    InvalidInputError
        When ``pi`` is not a probability vector, or ``q`` or ``obj`` is invalid.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.3, 0.7], rewards=[1, 0])
    >>> stationarity_residual(q, Objective(beta=1.0), [0.3**0.5, 1 - 0.3**0.5]) < 1e-12   # Eq. 14
    True
    >>> round(stationarity_residual(q, Objective(beta=1.0), [0.3, 0.7]), 4)               # pi_ref is not
    0.21
    """
    q, obj = as_question(q), as_objective(obj)
    pi = validate_policy("pi", pi, q.n_outputs)
    if not obj.regime_variant.is_note_penalty or advantage.changes_regulariser(obj):
        s = pi > 0
        g = output_gradient(q, obj, pi)[s]
        if not np.all(np.isfinite(g)):
            return math.inf
        return float(np.max(pi[s] * np.abs(g - pi[s] @ g))) / advantage.regularisation_scale(obj)
    return note_residual(q, obj, pi, reward_preference(q, obj, pi))


def note_residual(q: Question, obj: Objective, pi: np.ndarray, P: np.ndarray) -> float:
    """:func:`stationarity_residual` for the note's two penalties from ``P = P_G(. | pi)`` (K,) the caller has
    (no tie filtering, no entropy bonus; no input checks: the solvers' own points)."""
    if obj.regime_variant.is_reverse:
        with np.errstate(over="ignore", invalid="ignore"):  # a tiny beta: (P - pi P)/beta overflows, no residual
            return float(np.max(np.abs(pi * (1.0 - (P - pi @ P) / obj.beta) - q.pi_ref)))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):   # log 0; P/beta past 1.8e308 at a tiny beta
        logits = np.log(q.pi_ref) + P / obj.beta
    target = np.exp(logits - logsumexp(logits))
    return float(np.max(np.abs(pi - target)))
