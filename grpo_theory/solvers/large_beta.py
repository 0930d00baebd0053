"""A beta so large that pi_ref is the stationary point to double precision, decided before any solver runs (their
flows move at a rate of order beta, and their integrators' steps overflow there)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..preference import max_abs_advantage
from ..problem import Objective, Question
from .._checks import OBJECTIVE, QUESTION, checked
from .classes import ClassProblem, class_problem, stationarity_residual
from .results import StationaryPoint

__all__ = ["reference_in_rounding", "reference_point"]


@checked(q=QUESTION, obj=OBJECTIVE, cp=class_problem())
def reference_in_rounding(q: Question, obj: Objective, cp: ClassProblem) -> bool:
    """Whether ``beta`` is so large that ``pi_ref`` is the stationary point to double precision: a penalty in the
    loss that is the note's reverse or direct one near ``pi_ref`` (exactly, or a clamped estimator whose unclamped
    form is one: at a relative distance below ``2^-53`` from ``pi_ref`` the log-ratio is below ``2^-52`` and no
    positive clamp binds), and ``2 (max|P_G| + c spread(log pi_ref)) / beta`` below ``2^-53`` (``pi(o) = pi_ref(o) /
    (1 - (P_G(o) - E P_G)/beta)``, ``pi ∝ pi_ref exp(P_G/beta)``, with an entropy bonus ``c`` adding ``-c log pi``
    to ``P_G``: a relative change below the rounding of 1). ``max|P_G|`` is the advantage's bound (its registry
    entry: group, RLOO, pass@k), or where that is infinite (G = inf with no epsilon, REINFORCE++) twice
    ``max|P_G(pi_ref)|`` (``P_G`` is continuous at ``pi_ref``, which every stationary point is that close to).
    The class solvers' flow moves at a rate of order ``beta``; its integrator's steps overflow there (three
    classes: beta of 1e12 and above; with an entropy bonus, RLOO or clamps, tracebacks from 1e20).

    Parameters
    ----------
    q : Question
        The question (a reward law).
    obj : Objective
        The objective.
    cp : ClassProblem
        The question's class problem (its ``P_G`` at ``pi_ref`` bounds an unbounded advantage).

    Returns
    -------
    bool
        True where ``pi_ref`` is the answer to double precision.
    """
    if not (q.has_reward_law and obj.beta > 2.0**53 and not obj.filter_ties and _note_penalty_at_reference(obj)):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        bound = max_abs_advantage(float(np.ptp(q.reward_levels)), obj)
        if not np.isfinite(bound):
            bound = 2.0 * float(np.max(np.abs(cp.class_preference(cp.log_p))))
        if obj.entropy_coef:
            bound += obj.entropy_coef * float(np.ptp(np.log(q.pi_ref[q.pi_ref > 0])))
    return bool(np.isfinite(bound) and 2.0 * bound < obj.beta * 2.0**-53)


def _note_penalty_at_reference(obj: Objective) -> bool:
    """The KL term is the note's reverse or direct penalty in a neighbourhood of ``pi_ref``: exactly, or clamped
    (log-ratio or value clamps above 1e-10, far above the log-ratios within double rounding of ``pi_ref``)."""
    if obj.regime_variant.is_note_penalty:
        return True
    clamps = [c for c in (obj.kl_log_ratio_clamp, obj.kl_value_clamp) if c is not None]
    if not clamps or min(clamps) <= 1e-10:
        return False
    return dataclasses.replace(obj, kl_log_ratio_clamp=None, kl_value_clamp=None).regime_variant.is_note_penalty


@checked(q=QUESTION, obj=OBJECTIVE)
def reference_point(q: Question, obj: Objective) -> StationaryPoint:
    """``pi_ref`` where :func:`reference_in_rounding` holds: stationary to double precision and stable (the
    flow's Jacobian is ``-C^(1/2) (beta I + E) C^(1/2)`` with ``|E| <= 2 max|A| < beta``).

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective.

    Returns
    -------
    StationaryPoint
        ``pi_ref``, converged and stable, with its residual.
    """
    pi = q.pi_ref.copy()
    return StationaryPoint(pi=pi, residual=stationarity_residual(q, obj, pi), converged=True, stable=True,
                           nfev=0, method="flow", boundary=False,
                           message="pi_ref: |P_G|/beta is below the rounding of 1, so pi_ref is the stationary "
                                   "point to double precision (stable: the penalty's curvature beta dominates)")
