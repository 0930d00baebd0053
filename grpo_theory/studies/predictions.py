"""What the theory predicts for a trained task: the stationary policy of each question, from the
reference model's own probabilities (shared by the studies)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..problem import Objective, Question
from ..solvers import stationary_points, stationary_policy
from ..training.tasks import QATask

__all__ = ["predict_task", "predict_token_level", "stable_points_of_rewarded_class", "rewarded"]


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
        The stationary policy of each question (:func:`~grpo_theory.solvers.stationary_policy`).
    """
    out = np.zeros_like(reference_probs)
    for q in range(task.n_questions):
        p = reference_probs[q] / reference_probs[q].sum()
        out[q] = stationary_policy(Question(p, rewards=task.rewards[q]), obj).pi
    return out


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
    out = np.zeros((task.n_questions, len(task.answers)))
    tok_obj = dataclasses.replace(obj, level="token", loss_type="grpo")
    for q in range(task.n_questions):
        p = np.exp(ref_token_logp[q].sum(-1))
        q_tree = Question(p / p.sum(), rewards=task.rewards[q], answers=task.answers)
        out[q] = stationary_policy(q_tree, tok_obj).pi
    return out


def stable_points_of_rewarded_class(task: QATask, reference_probs: np.ndarray, obj: Objective) -> list:
    """For each question: the rewarded class's probability at every stable stationary point.

    Parameters
    ----------
    task : QATask
        As in :func:`predict_task`.
    reference_probs : numpy.ndarray
        As in :func:`predict_task`.
    obj : Objective
        As in :func:`predict_task`.

    Returns
    -------
    list of list of float
        Per question, one entry per stable point (more than one: multistable).
    """
    out = []
    for q in range(task.n_questions):
        p = reference_probs[q] / reference_probs[q].sum()
        pts = stationary_points(Question(p, rewards=task.rewards[q]), obj)
        best = task.rewards[q] == task.rewards[q].max()
        out.append([float(pt.pi[best].sum()) for pt in pts if pt.stable])
    return out


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
