"""Many questions at once: :func:`stationary_policies` and :func:`stationary_policy_batch`.

The two-class pairs :mod:`~grpo_theory.solvers.two_class_batch` covers are solved together, the multi-class
flows :mod:`~grpo_theory.solvers.multi_class_batch` covers are integrated together; every other pair goes
through :func:`~grpo_theory.solvers.search.stationary_policy`, one at a time. The answers are those of the
one-at-a-time path up to the root finder's tolerance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .._checks import checked, items, listed
from ..errors import InvalidInputError
from ..problem import Objective, Question, as_objective, as_question, require_regularised
from .classes import ClassProblem
from .multi_class import multi_class_policy
from .multi_class_batch import batch_flow_endpoints, supports_flow
from .results import StationaryPoint
from .search import kkt_checked, stationary_policy, token_level
from .two_class_batch import TwoClassBatch, batch_flow_policies, supports

__all__ = ["stationary_policies", "stationary_policy_batch"]


@checked(questions=items(Question, "Question"),
         objectives=items((Objective, Mapping), "Objective (or a dict of its fields)"))
def stationary_policies(questions: Sequence[Question], objectives: Sequence[Objective]) -> list[np.ndarray]:
    """``stationary_policy(q, obj).pi`` for many pairs ``(q, obj)``, the two-class ones solved together.

    The two-class problems that :func:`~grpo_theory.solvers.two_class_batch.supports` covers (the note's
    two penalties with a reward law: binary questions, noisy verifiers) are solved at once by
    :func:`~grpo_theory.solvers.two_class_batch.batch_flow_roots`, the scalar path's steps vectorised over
    the problems (the same scan from ``pi_ref``, the same bracket, Brent's iteration): the same policies up
    to the last bits of the drift. Every other pair goes through :func:`stationary_policy` (for many
    multi-class pairs, :func:`stationary_policy_batch` integrates their flows together). Use it for a
    grid of questions (a figure's ``(beta, pi_ref)`` map); for one question, :func:`stationary_policy`
    also reports the residual, the stability and how the point was found.

    Parameters
    ----------
    questions : sequence of Question
        The questions, each solved with its own objective.
    objectives : sequence of Objective or mapping
        One per question.

    Returns
    -------
    list of numpy.ndarray
        The output policy ``pi`` (shape ``(K,)`` of its question) the flow from ``pi_ref`` reaches, per pair;
        a vertex where the flow runs into one (a limit point).

    Raises
    ------
    InvalidInputError
        When the lengths differ, or as :func:`stationary_policy`.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> qs = [Question([p, 1 - p], rewards=[1, 0]) for p in (0.3, 0.6)]
    >>> pis = stationary_policies(qs, [Objective(beta=1.0)] * 2)
    >>> [round(float(pi[0]), 6) for pi in pis]       # Eq. 14 at beta = gamma: sqrt(pi_ref(a))
    [0.547723, 0.774597]
    """
    out, batch, where = _split_batch("stationary_policies", questions, objectives, supports,
                                     lambda q, obj: stationary_policy(q, obj).pi)
    if batch:
        for i, pi in zip(where, batch_flow_policies(TwoClassBatch(batch))):
            out[i] = pi
    return out


@checked(questions=items(Question, "Question"),
         objectives=items((Objective, Mapping), "Objective (or a dict of its fields)"))
def stationary_policy_batch(questions: Sequence[Question], objectives: Sequence[Objective]) -> list[StationaryPoint]:
    """``stationary_policy(q, obj)`` for many pairs, the multi-class ones' flows from ``pi_ref`` integrated together.

    For the pairs with three or more classes that
    :func:`~grpo_theory.solvers.multi_class_batch.supports_flow` covers (the note's two penalties with a
    reward law), the flows from ``pi_ref`` are integrated at once
    (:func:`~grpo_theory.solvers.multi_class_batch.batch_flow_endpoints`: an explicit Runge-Kutta method,
    each flow with its own step size, the tolerances and stopping rule of the one-at-a-time LSODA path);
    each end is then polished and checked exactly as :func:`stationary_policy` does
    (:func:`~grpo_theory.solvers.multi_class.multi_class_policy`, :func:`kkt_checked`). The flow's end
    only decides where the root finding starts, so the points are :func:`stationary_policy`'s up to the
    root finder's tolerance (``xtol = 1e-14``). Every other pair, and a flow the batch gives up (a stiff
    one), goes through :func:`stationary_policy`.

    Parameters
    ----------
    questions : sequence of Question
        As for :func:`stationary_policies`.
    objectives : sequence of Objective or mapping
        One per question, as for :func:`stationary_policies`.

    Returns
    -------
    list of StationaryPoint
        One per pair, as :func:`stationary_policy` returns it.

    Raises
    ------
    InvalidInputError
        As for :func:`stationary_policies`.

    Examples
    --------
    >>> import math
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    >>> objs = [Objective(beta=b, group_size=8) for b in (0.5, 2.0)]
    >>> pts = stationary_policy_batch([q, q], objs)
    >>> [bool(np.allclose(p.pi, stationary_policy(q, o).pi, rtol=0, atol=1e-12)) for p, o in zip(pts, objs)]
    [True, True]
    """
    out, flows, where = _split_batch("stationary_policy_batch", questions, objectives, supports_flow,
                                     stationary_policy)
    for i, cp, end in zip(where, flows, batch_flow_endpoints(flows)):
        # a flow the batch gave up (None) is integrated here, one at a time, by LSODA
        out[i] = kkt_checked(cp.q, cp.obj, multi_class_policy(cp, end))
    return out


def _split_batch(name: str, questions, objectives, batchable, one_at_a_time) -> tuple[list, list, list]:
    """Pair ``questions`` with ``objectives``; the class problems ``batchable`` accepts go to a batch (returned
    with their positions), every other pair is answered now by ``one_at_a_time(q, obj)`` (its slot in ``out``)."""
    questions = listed("questions", questions, Question, "Question")
    objectives = listed("objectives", objectives, (Objective, Mapping), "Objective (or a dict of its fields)")
    if len(questions) != len(objectives):
        raise InvalidInputError(f"{name} needs one objective per question, got {len(questions)} "
                                f"questions and {len(objectives)} objectives")
    out: list = [None] * len(questions)
    batch, where = [], []
    for i, (q, obj) in enumerate(zip(questions, objectives)):
        q, obj = as_question(q), as_objective(obj)
        require_regularised(obj, f"{name}: objectives[{i}]")
        cp = None if token_level(q, obj) else ClassProblem(q, obj)
        if cp is not None and batchable(cp):
            batch.append(cp)
            where.append(i)
        else:
            out[i] = one_at_a_time(q, obj)
    return out, batch, where
