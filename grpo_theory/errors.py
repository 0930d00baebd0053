"""The package's exceptions and warning class: the bottom layer, imported by every other module."""

from __future__ import annotations

__all__ = ["InvalidInputError", "ExactEvaluationTooLarge", "NoStationaryPolicy", "TheoryWarning"]


class InvalidInputError(ValueError):
    """Raised for any invalid input; the message names the value and what was expected."""


class ExactEvaluationTooLarge(InvalidInputError):
    """The exact enumeration would exceed ``max_count_vectors``; use Monte Carlo instead."""


class NoStationaryPolicy(InvalidInputError):
    """The input is valid but there is nothing to predict (e.g. no KL penalty: ``beta = 0``); the message says why."""


class TheoryWarning(UserWarning):
    """Where a setting leaves the theory's assumptions (off-policy updates, a sampling temperature, ...)."""
