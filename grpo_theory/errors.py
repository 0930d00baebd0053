"""The package's exceptions and warning class: the bottom layer, imported by every other module."""

from __future__ import annotations

__all__ = ["InvalidInputError", "ExactEvaluationTooLarge", "NoStationaryPolicy", "TheoryWarning",
           "UnusedInputWarning"]


class InvalidInputError(ValueError):
    """Raised for any invalid input; the message names the value and what was expected.

    Every constructor and public function of the package raises it on bad input (an ``Objective`` with
    ``beta < 0``, a ``pi_ref`` that does not sum to 1, a malformed samples file, ...). It is a
    ``ValueError``, so ``except ValueError`` catches it too.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> try:
    ...     Objective(beta=-1)
    ... except InvalidInputError as exc:
    ...     print(exc)
    beta must be a finite number >= 0 (0: no KL penalty), got -1
    """


class ExactEvaluationTooLarge(ValueError):
    """The exact enumeration would exceed ``max_count_vectors``; use Monte Carlo instead.

    The input is valid, only too large to sum exactly: this is not an :class:`InvalidInputError`, so
    ``except InvalidInputError`` does not swallow it (it is a ``ValueError``, which the command line reports
    in one line like a bad input).

    Raised by the exact ``P_G`` sums (:func:`grpo_theory.preference.reward_preference`,
    :func:`grpo_theory.preference.level_expectations`, the advantage estimators and the token-level
    tree solver) when the number of reward-level count vectors of the other ``G - 1`` answers is over the
    limit; :func:`grpo_theory.preference.monte_carlo_preference` gives an estimate with its standard error.

    Examples
    --------
    ``L = 3`` reward levels and ``G = 8``: the other 7 answers fall into ``C(7 + 2, 2) = 36`` count vectors.

    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> from grpo_theory.preference import level_expectations
    >>> try:
    ...     level_expectations(np.array([0.0, 0.5, 1.0]), np.log(np.full((1, 3), 1 / 3)),
    ...                        Objective(beta=1.0, group_size=8), max_count_vectors=10)
    ... except ExactEvaluationTooLarge as exc:
    ...     print(str(exc)[:45])
    exact P_G needs 36 count vectors for G=8 and
    """


class NoStationaryPolicy(InvalidInputError):
    """The input is valid but there is no stationary policy to compute; the message says why and what to use instead.

    Raised by every query for a stationary point given an unregularised objective (``beta = 0`` with no entropy
    bonus, TRL's default: :func:`grpo_theory.problem.require_regularised`), and by the trainer-config readers
    for a config the theory does not model (e.g. verl's ``gae`` advantage).

    Examples
    --------
    >>> from grpo_theory import Objective, Question, stationary_policy
    >>> try:
    ...     stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0))
    ... except NoStationaryPolicy as exc:
    ...     print("beta = 0" in str(exc))
    True
    """


class TheoryWarning(UserWarning):
    """Where a setting leaves the theory's assumptions (off-policy updates, a sampling temperature, ...).

    Given by the trainer-config readers for every setting the theory does not model exactly; the
    package's other warnings (``PredictWarning``, ``IntegrationFallbackWarning``) subclass it, so
    ``warnings.simplefilter("ignore", TheoryWarning)`` silences them all.
    """


class UnusedInputWarning(TheoryWarning):
    """An input or option given that the work asked for does not use (``figures --results DIR`` when no figure
    built reads a study table): it changes nothing, and the warning names it and why."""
