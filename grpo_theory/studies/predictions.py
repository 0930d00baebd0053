"""The studies' one bridge to the theory: what the theory predicts for a trained task, from the reference
model's own probabilities.

Every study reaches the solvers through this module and no other. Two forms:

- :func:`study_theory`: per question (a row of the reference probabilities, renormalised, and of the
  reward table; over an answer tree when ``answers`` are given) the stationary policy the on-policy flow
  reaches from ``pi_ref`` (:func:`~grpo_theory.solvers.stationary_policy`), and on request every
  stationary point (:func:`~grpo_theory.solvers.stationary_points`) for the count of stable ones. The
  small-GPT, KL, tree, SmolLM2 and TRL studies use it, directly or through :func:`predict_task`,
  :func:`predict_token_level` and :func:`~grpo_theory.studies.trl.theory_predictions`.
- :func:`stationary_x`: ``x(p_ref)``, the stationary ``P(correct)`` of many binary-reward prompts at once,
  through :class:`~grpo_theory.predict.Response` (exact solves up to its limit of distinct ``p_ref``, then an
  interpolation checked against its tolerance). The free-generation study uses it: it predicts hundreds of
  prompts that share one reward pattern (right / wrong), not a reward table per question.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .._checks import arr, checked, instance
from .._validate import as_array, plain
from ..errors import InvalidInputError
from ..predict import Response
from ..problem import Objective, Question
from ..solvers import clamp_critical_beta, log_pooling, stationary_points, stationary_policy
from ..training.tasks import QATask

__all__ = ["StudyTheory", "study_questions", "study_theory", "clamp_critical_betas", "predict_task",
           "predict_token_level", "rewarded", "stationary_x"]


#: The argument rule of a task (:class:`~grpo_theory.training.tasks.QATask`).
_TASK = instance(QATask, "a QATask", " (grpo_theory.training.tasks)")


@checked(reference_probs=arr(0, ndim=2), rewards=arr(ndim=2))
def study_questions(reference_probs, rewards, *, answers: Sequence | None = None) -> list[Question]:
    """One :class:`~grpo_theory.problem.Question` per row: ``pi_ref`` the row of ``reference_probs``
    divided by its sum, the rewards the same row of ``rewards``.

    Parameters
    ----------
    reference_probs : array_like, shape (n_questions, K)
        The reference model's probability of each answer (or token) after each prompt; each row is
        renormalised here, so it may be the restriction of a larger distribution.
    rewards : array_like, shape (n_questions, K)
        The reward of each answer to each question.
    answers : sequence of token sequences, optional
        The ``K`` answers as token sequences: each question is then an answer tree, which a token-level
        objective solves per token (a sequence-level one, per answer).

    Returns
    -------
    list of Question
        ``n_questions`` questions, in the rows' order.

    Raises
    ------
    InvalidInputError
        Arrays that are not 2-D of one shape (ragged rows included), entries that are not finite numbers,
        a negative probability, a row of ``reference_probs`` with sum 0 (nothing to renormalise; named with
        its index), ``answers`` of another length than ``K``, or a row the question refuses.
    """
    probs, table = np.asarray(reference_probs), np.asarray(rewards)
    if probs.ndim != 2 or table.shape != probs.shape:
        raise InvalidInputError(f"reference_probs and rewards must be 2-D arrays of one shape (n_questions, K), "
                                f"got shapes {probs.shape} and {table.shape}")
    if answers is not None and len(answers) != probs.shape[1]:
        raise InvalidInputError(f"answers must hold one token sequence per column (K={probs.shape[1]}), "
                                f"got {len(answers)}")
    sums = probs.sum(axis=1)
    if np.any(sums == 0):
        q = int(np.flatnonzero(sums == 0)[0])
        raise InvalidInputError(f"reference_probs row {q} is {plain(probs[q])}: its sum is 0, so it cannot be "
                                "renormalised; expected probabilities >= 0 with a positive sum in every row")
    extra = {} if answers is None else dict(answers=answers)
    return [Question(probs[q] / probs[q].sum(), rewards=table[q], **extra) for q in range(probs.shape[0])]


@dataclasses.dataclass(frozen=True)
class StudyTheory:
    """What the theory predicts for a study's questions under one objective (from :func:`study_theory`).

    Attributes
    ----------
    questions : tuple of Question
        The questions, one per row of the study's tables.
    rewards : numpy.ndarray, shape (n_questions, K)
        Their rewards (the rewarded class of question ``q`` is ``rewards[q] == rewards[q].max()``).
    objective : Objective
        The objective they were solved with.
    points : tuple of StationaryPoint
        Per question, the stationary point the flow reaches from ``pi_ref`` (its ``pi``, ``converged``,
        ``boundary``, ``discontinuous``, ...).
    point_sets : tuple of StationaryPointSet or None
        Per question, every stationary point found, when asked for (``stable_points=True``); else None.
    """

    questions: tuple
    rewards: np.ndarray
    objective: Objective
    points: tuple
    point_sets: tuple | None = None

    @property
    def pi(self) -> np.ndarray:
        """The stationary policy of each question, shape ``(n_questions, K)``."""
        return np.array([pt.pi for pt in self.points])

    @property
    def rewarded(self) -> np.ndarray:
        """The stationary probability of each question's rewarded class, shape ``(n_questions,)``."""
        return np.array([pt.pi[r == r.max()].sum() for pt, r in zip(self.points, self.rewards)])

    @property
    def log_pooling(self) -> np.ndarray:
        """RLHF's optimum ``pi_ref(o) exp(r(o)/beta)`` normalised, per question, shape ``(n_questions, K)``
        (:func:`~grpo_theory.solvers.log_pooling`, the objective's ``beta``), to set beside the stationary policy."""
        return np.array([log_pooling(q.pi_ref, q.expected_reward, self.objective.beta) for q in self.questions])

    def _sets(self, what: str) -> tuple:
        if self.point_sets is None:
            raise InvalidInputError(f"{what} needs every stationary point: call study_theory(..., "
                                    f"stable_points=True), got stable_points=False")
        return self.point_sets

    @property
    def n_stable(self) -> list[int]:
        """The number of stable stationary points of each question (more than one: multistable)."""
        return [len(s.stable) for s in self._sets("n_stable")]

    @property
    def rewarded_at_stable(self) -> list[list[float]]:
        """Per question, the rewarded class's probability at every stable stationary point."""
        return [[float(pt.pi[r == r.max()].sum()) for pt in s if pt.stable]
                for s, r in zip(self._sets("rewarded_at_stable"), self.rewards)]


def study_theory(reference_probs, rewards, obj: Objective, *, answers: Sequence | None = None,
                 stable_points: bool = False) -> StudyTheory:
    """The theory's prediction for a study's questions: the one call from a study to the solvers.

    Parameters
    ----------
    reference_probs : array_like, shape (n_questions, K)
        The reference model's probability of each answer after each prompt (renormalised per row; for a
        token-level study the product of each answer's token probabilities, see :func:`predict_token_level`).
    rewards : array_like, shape (n_questions, K)
        The reward of each answer to each question.
    obj : Objective
        The objective: ``beta``, ``G``, the penalty, the advantage estimator, the level, ...
    answers : sequence of token sequences, optional
        The answers as token sequences (answer trees; needed for a token-level objective).
    stable_points : bool, default False
        Also find every stationary point of each question (``point_sets``, ``n_stable``,
        ``rewarded_at_stable``); this costs a search per question.

    Returns
    -------
    StudyTheory
        The questions, their stationary points and, with ``stable_points``, every stationary point.

    Raises
    ------
    InvalidInputError
        ``obj`` that is not an :class:`~grpo_theory.problem.Objective`, or tables :func:`study_questions` refuses.
    """
    if not isinstance(obj, Objective):
        raise InvalidInputError(f"obj must be an Objective, got {obj!r}")
    questions = study_questions(reference_probs, rewards, answers=answers)
    points = tuple(stationary_policy(q, obj) for q in questions)
    sets = tuple(stationary_points(q, obj) for q in questions) if stable_points else None
    return StudyTheory(tuple(questions), np.asarray(rewards), obj, points, sets)


def clamp_critical_betas(reference_probs, rewards, obj: Objective, *, answers: Sequence | None = None) -> np.ndarray:
    """Per question, the beta below which ``obj``'s clamped KL in the loss lets the worse class collapse
    (:func:`~grpo_theory.solvers.clamp_critical_beta`; ``obj``'s own ``beta`` is not used).

    Parameters
    ----------
    reference_probs : array_like, shape (n_questions, 2)
        The reference model's probability of each class after each prompt (renormalised per row).
    rewards : array_like, shape (n_questions, 2)
        The reward of each class.
    answers : sequence of token sequences, optional
        As for :func:`study_questions`.
    obj : Objective
        The objective whose KL estimator, placement and clamps are meant.

    Returns
    -------
    numpy.ndarray, shape (n_questions,)
        The critical beta of each question.
    """
    questions = study_questions(reference_probs, rewards, answers=answers)
    return np.array([clamp_critical_beta(q, obj) for q in questions])


@checked(task=_TASK)
def predict_task(task: QATask, reference_probs: np.ndarray, obj: Objective) -> np.ndarray:
    """Stationary pi over each question's answer set, from the reference model's probabilities.

    Parameters
    ----------
    task : QATask
        The task: ``n_questions`` questions over a shared answer set, with ``rewards`` of shape
        ``(n_questions, K)``.
    reference_probs : numpy.ndarray, shape (n_questions, K)
        The reference model's probability of each answer (renormalised per question).
    obj : Objective
        The objective the questions are solved with: ``beta``, ``G``, the penalty and the advantage estimator.

    Returns
    -------
    numpy.ndarray, shape (n_questions, K)
        The stationary policy of each question (``pi`` of :func:`study_theory`).
    """
    out = np.zeros_like(reference_probs)
    out[:] = study_theory(reference_probs, task.rewards, obj).pi
    return out


@checked(task=_TASK)
def predict_token_level(task: QATask, ref_token_logp: np.ndarray, obj: Objective) -> np.ndarray:
    """Token-level stationary pi over each question's answer tree, from the reference model's own
    token log-probabilities (the trainer's "token" level averages over an answer's tokens: TRL's
    ``loss_type="grpo"``).

    Parameters
    ----------
    task : QATask
        The task: ``n_questions`` questions over a shared answer set, with ``rewards`` of shape
        ``(n_questions, K)``.
    ref_token_logp : numpy.ndarray, shape (n_questions, K, T)
        The reference model's log-probability of each token of each answer, ``T`` the longest
        answer's length, 0 past an answer's end (as ``training.policy.answer_token_logprobs`` gives it).
    obj : Objective
        Its ``level`` and ``loss_type`` are replaced by ``"token"`` and ``"grpo"``.

    Returns
    -------
    numpy.ndarray, shape (n_questions, K)
        The token-level stationary policy of each question (the answers' trees from ``ref_token_logp``).
    """
    tok_obj = dataclasses.replace(obj, level="token", loss_type="grpo")
    p = np.exp(np.asarray(ref_token_logp).sum(-1))
    return study_theory(p, task.rewards, tok_obj, answers=task.answers).pi


@checked(task=_TASK)
def rewarded(task: QATask, table: np.ndarray) -> np.ndarray:
    """Probability of the rewarded answer class, per question.

    Parameters
    ----------
    task : QATask
        As for :func:`predict_task`.
    table : numpy.ndarray, shape (n_questions, K)
        A policy (or its standard errors) per question.

    Returns
    -------
    numpy.ndarray, shape (n_questions,)
        The sum over the answers with the question's highest reward.
    """
    best = task.rewards == task.rewards.max(axis=1, keepdims=True)
    return np.where(best, table, 0.0).sum(axis=1)        # where, not a product: an SE of inf stays inf


@checked(p_ref=arr(0, 1))
def stationary_x(p_ref, obj: Objective) -> np.ndarray:
    """``x(p_ref)``: each prompt's stationary P(correct) under ``obj`` (the flow's end from ``p_ref``, binary
    rewards; :class:`~grpo_theory.predict.Response`), ``p_ref`` clipped to ``[1e-12, 1]``.

    Parameters
    ----------
    p_ref : array_like
        Each prompt's ``pi_ref(correct)``.
    obj : Objective
        The objective.

    Returns
    -------
    numpy.ndarray
        ``x(p_ref)``, shaped like ``p_ref``.
    """
    return Response(obj)(np.clip(as_array("p_ref", p_ref), 1e-12, 1.0))
