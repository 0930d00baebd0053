"""The one guard of every query whose answer is a stationary point: an unregularised objective is refused.

An :class:`~grpo_theory.problem.Objective` with ``beta = 0`` and no entropy bonus (``obj.regularised`` False,
TRL's default) is valid: the finite-time flows take it. It has no stationary policy, so every solver, closed
form and command that solves for one calls :func:`require_regularised` (or checks its objective argument with
:data:`STATIONARY_OBJECTIVE`), which raises :class:`~grpo_theory.errors.NoStationaryPolicy` saying why and what
answers a finite run instead. Re-exported by :mod:`grpo_theory.problem`, where users import it.
"""

from __future__ import annotations

import numpy as np

from ._checks import OBJECTIVE, checked, is_instance, text
from ._validate import float_array, plain
from .errors import InvalidInputError, NoStationaryPolicy

__all__ = ["require_regularised", "STATIONARY_OBJECTIVE", "UNREGULARISED"]


#: Why an unregularised objective has no stationary policy, and what answers a finite run instead.
UNREGULARISED = ("beta = 0 with no entropy bonus (entropy_coef = 0) has no stationary policy in the interior: the "
                 "expected gradient only pushes mass to the best answers, so every run ends at a vertex (a limit, "
                 "not a stationary point); give beta > 0 or entropy_coef > 0, or, for a finite run, use the "
                 "finite-time flow: grpo_theory.dynamics (flow, ascent, grpo_steps, with with_points=False) or "
                 "`grpo-theory predict --measured AFTER` (or `--fit`)")


@checked(query=text(nonempty=True))
def require_regularised(obj, query: str = "obj") -> None:
    """Refuse a query for a stationary point of an unregularised objective (``obj.regularised`` False).

    The one guard of every query whose answer is a stationary point (the solvers, the closed forms, the
    command line's ``solve`` and ``sweep``, a sweep's :class:`~grpo_theory.sweep.Case`, ``predict``'s stationary
    response); it only refuses, a regularised objective passes unchanged. :data:`STATIONARY_OBJECTIVE` is the
    same guard as an argument rule. Import it from :mod:`grpo_theory.problem`.

    Parameters
    ----------
    obj : Objective or array_like
        The objective of the query; or, for the closed forms (no entropy bonus), their ``beta`` (numbers, each
        ``>= 0``), unregularised where an entry is 0.
    query : str
        What asks, named first in the message (an argument name, a function or a command).

    Raises
    ------
    NoStationaryPolicy
        When ``obj`` is unregularised (``beta = 0`` and ``entropy_coef = 0``), saying why and what to use instead.
    InvalidInputError
        When ``obj`` is neither an Objective nor finite numbers ``>= 0`` (at least one), or ``query`` is not a
        non-empty text.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> require_regularised(Objective(beta=0.04))          # passes
    >>> try:
    ...     require_regularised(Objective(beta=0), "stationary_policy")
    ... except NoStationaryPolicy as exc:
    ...     print(str(exc)[:76])
    stationary_policy: the objective reverse/scale, G=2, beta=0 is unregularised
    """
    if is_instance(obj, "Objective"):
        _refuse_unregularised(obj, query)
        return
    beta = float_array("obj", obj, low=0.0)         # the closed forms' beta: finite numbers >= 0
    if beta.size == 0:                              # nothing to guard: an empty beta is no query
        raise InvalidInputError(f"{'' if query == 'obj' else query + ': '}obj is empty ({plain(obj)}); expected "
                                "an Objective, or the closed forms' beta as numbers >= 0")
    if np.any(beta == 0):
        where = "" if beta.ndim == 0 else f" (entry {np.flatnonzero(beta.ravel() == 0)[0]} of {beta.size})"
        raise NoStationaryPolicy(f"{query}: beta = 0{where} is unregularised: {UNREGULARISED}")


def _refuse_unregularised(obj, query: str) -> None:
    """:func:`require_regularised` for an :class:`Objective`, without its argument checks (the argument rule's path)."""
    if not obj.regularised:
        raise NoStationaryPolicy(f"{query}: the objective {obj.describe()} is unregularised: {UNREGULARISED}")


def _stationary_objective(name: str, value) -> None:
    """The argument rule of a stationary query's objective: an :class:`Objective` (``_checks.OBJECTIVE``) that is
    regularised (:func:`require_regularised`, naming the argument)."""
    OBJECTIVE(name, value)
    _refuse_unregularised(value, name)


#: The argument rule (``@checked(obj=STATIONARY_OBJECTIVE)``) of every query whose answer is a stationary point.
STATIONARY_OBJECTIVE = _stationary_objective
