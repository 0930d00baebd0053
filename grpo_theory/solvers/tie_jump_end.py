"""The end of the flow on all output logits where its field jumps at tied shaped rewards: read off the flows of
nearby continuous fields.

With scale normalisation and no epsilon (``std_eps = variance_eps = 0``) a group whose shaped rewards all tie has
advantage 0, while off the tie by any amount its normalised advantages are of order 1: the field jumps where two
answers' shaped rewards tie. With the KL value in the reward (``r_o - beta k(lr_o)``) the shaped rewards depend on
each answer's own log-ratio ``lr_o = log(pi_o/pi_ref_o)``, so two answers of one reward tie where their log-ratios
are equal, which is where the flow from ``pi_ref`` starts. There the flow can slide along the jump (a Filippov
solution) while an integrator chatters across it; :func:`~grpo_theory.solvers.full_space_end.full_space_end`
then finds no rest and reports the flow still moving. (The brute-force check in ``tests/test_tie_jump_end.py``
follows the exact expected gradient by explicit Euler steps: it chatters at an amplitude of the step's order around
log pooling, the class solvers' answer, and comes closer as the step shrinks.)

The fields with ``std_eps = eps > 0`` are continuous, and as ``eps -> 0`` their flows tend to the sliding flow on
every finite time interval (the regularisation of a Filippov system). So where the flows at two values of ``eps``
(:data:`TIE_JUMP_EPS`, relative to the reward span) both come to rest, and the nearer ``eps``'s rest is within
:data:`~grpo_theory.solvers.full_space_end` ``_NEAR`` (1e-3, max-norm) of the class solvers' answer and no farther
than the other's, and no single-logit nudge of that answer is pushed away
(:func:`~grpo_theory.solvers.full_space.jump_repeller`), the answer is taken as this flow's end, saying so.
Otherwise the unsettled end is returned as it was, with what the nearby flows did.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._checks import OBJECTIVE, checked
from ..errors import InvalidInputError
from ..problem import Objective, Question
from .full_space import jump_repeller
from .results import StationaryPoint

# The public names: the epsilons and the test of an objective; tie_jump_end is stationary_policy's own step.
__all__ = ["TIE_JUMP_EPS", "TIE_JUMP_NEAR", "has_tie_jumps"]

#: The epsilons of the nearby continuous fields, times the reward span (the larger first).
TIE_JUMP_EPS = (1e-3, 1e-4)
#: Max-norm distance from the class solvers' answer within which the nearer field's rest counts as reaching it
#: (the tolerance within which full_space_end takes a polished root as the flow's end).
TIE_JUMP_NEAR = 1e-3


@checked(obj=OBJECTIVE)
def has_tie_jumps(obj: Objective) -> bool:
    """Whether ``obj``'s field jumps where shaped rewards that depend on the policy tie: the KL value in the reward,
    scale normalisation, and neither ``std_eps`` nor ``variance_eps``.

    Parameters
    ----------
    obj : Objective
        The objective.
    """
    return bool(obj.regime_variant.in_reward and obj.normalization_variant.scales and obj.std_eps == 0
                and obj.variance_eps == 0)


def tie_jump_end(q: Question, obj: Objective, candidate: StationaryPoint, end: StationaryPoint, solve) -> StationaryPoint:
    """``candidate`` as the flow's end where the nearby continuous fields' flows come to rest at it (the module
    doc), else ``end`` with what they did appended to its message.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        An objective with :func:`has_tie_jumps`.
    candidate : StationaryPoint
        The class solvers' converged answer.
    end : StationaryPoint
        What :func:`~grpo_theory.solvers.full_space_end.full_space_end` returned: not converged.
    solve : callable
        ``(q, obj) -> StationaryPoint``: the flow's end for an objective (``stationary_policy``).

    Returns
    -------
    StationaryPoint
        ``candidate`` with the evidence in its message, or ``end``.
    """
    span = float(np.ptp(q.reward_levels)) or 1.0
    rests = []
    for rel in TIE_JUMP_EPS:
        nearby = dataclasses.replace(obj, std_eps=rel * span)
        try:
            rest = solve(q, nearby)
        except InvalidInputError as err:            # a refusal of the nearby problem: no evidence either way
            return _noted(end, f"with std_eps = {rel * span:g} the solve was refused ({err})")
        if not rest.converged:
            return _noted(end, f"with std_eps = {rel * span:g} the flow does not settle either")
        rests.append(rest)
    far, near = (float(np.abs(r.pi - candidate.pi).max()) for r in rests)
    eps = " and ".join(f"{rel * span:g}" for rel in TIE_JUMP_EPS)
    if near > TIE_JUMP_NEAR or near > far + 1e-12:
        return _noted(end, f"with std_eps = {eps} the flow rests {far:.2g} and {near:.2g} (max-norm) from the class "
                           f"solvers' answer {np.array2string(candidate.pi, precision=6)}: not approaching it")
    away = jump_repeller(q, obj, candidate.pi)
    if away:
        return _noted(end, f"the flows with std_eps = {eps} rest {far:.2g} and {near:.2g} from the class solvers' "
                           f"answer, but on all output logits it repels: {away}")
    return dataclasses.replace(candidate, message=(
        f"{candidate.message}; the flow on all output logits from pi_ref chatters on a jump of its field (shaped "
        f"rewards that tie, normalised with no epsilon) and was not followed to its end ({end.message.split(';')[0]}), "
        f"but the flows of the continuous fields with std_eps = {eps}, which tend to it as std_eps -> 0, rest "
        f"{far:.2g} and {near:.2g} (max-norm) from this point, and nudging any one output logit either way is pulled "
        "back"))


def _noted(end: StationaryPoint, why: str) -> StationaryPoint:
    return dataclasses.replace(end, message=f"{end.message}; {why}")
