"""One check for a probability law handed to a public function: a policy or reward law ``pi``, a level law ``w``,
the rows of a membership matrix ``R`` (each row a law over the reward levels), or their logarithms ``log w``.

A law along its last axis holds finite entries ``>= 0`` that sum to 1 within :data:`LAW_TOL`; a log-law holds
entries that are finite or ``-inf`` (a level of probability 0), never NaN or ``+inf``, with
``logsumexp(log w) = 0``, i.e. ``sum exp(log w) = 1`` within the same tolerance. The tolerance is a stated
absolute bound on the sum, loose enough for every law the package builds from valid input (a ``pi_ref`` and
reward rows each within ``1e-9`` per entry of summing to 1, :class:`~grpo_theory.Question`, combined as
``w = pi R``) and far below a law that is not one (a sum of 1.01). A violation is an
:class:`~grpo_theory.errors.InvalidInputError` naming the argument, the first offending row, its sum and what was
expected. The check refuses; it never renormalises, so a valid call computes what it computed without it.

The rules :func:`law` and :func:`log_law` check a value given from outside the package only: a law the package
computes itself and passes on (a solver's trial point, which may hold NaN that the solver's own logic handles) is
not checked again, so the solvers compute what they computed without the check.
"""

from __future__ import annotations


import numpy as np

from ._checks import arr, from_outside, numbers
from .errors import InvalidInputError

__all__ = ["LAW_TOL", "check_law", "law", "log_law", "log_probabilities", "from_outside", "in_level_order"]

#: Largest ``|sum - 1|`` of a law (or of ``exp`` of a log-law) along its last axis.
LAW_TOL = 1e-6


def _row(a: np.ndarray, flat_index: int) -> tuple:
    """The index of the row (all axes but the last) that holds the ``flat_index``-th row of ``a``."""
    return tuple(int(i) for i in np.unravel_index(flat_index, a.shape[:-1])) if a.ndim > 1 else ()


def _shown(values) -> str:
    vals = np.asarray(values).ravel().tolist()
    text = "[" + ", ".join(repr(v) for v in vals[:8]) + (", ..." if len(vals) > 8 else "") + "]"
    return text


def check_law(name: str, value, *, log: bool = False) -> None:
    """Refuse ``value`` unless each of its rows along the last axis is a probability law (``log=True``: the
    logarithm of one), as the module docstring states; the value itself is not changed.

    Parameters
    ----------
    name : str
        The argument's name in the message.
    value : array_like, shape (..., L)
        The law(s), or their logarithms.
    log : bool, default False
        Whether ``value`` holds log-probabilities.

    Raises
    ------
    InvalidInputError
        Naming ``name``, the first bad row, and its sum or its bad entry.
    """
    a = np.asarray(value, dtype=float)
    if a.ndim == 0 or a.shape[-1] == 0 or a.size == 0:
        return                                  # shapes are the callers' checks (one entry per level, ...)
    what = ("log-probabilities (finite or -inf, whose exp sums to 1 within "
            f"{LAW_TOL:g} along the last axis: logsumexp = 0)" if log else
            f"probabilities (finite, >= 0, summing to 1 within {LAW_TOL:g} along the last axis)")
    bad_entry = np.isnan(a) | (a == np.inf) if log else ~np.isfinite(a) | (a < 0)
    if bad_entry.any():
        flat = np.argwhere(bad_entry)[0]
        row = tuple(int(i) for i in flat[:-1])
        where = f"row {row} " if row else ""
        raise InvalidInputError(f"{name} must hold {what}; got {float(a[tuple(flat)])!r} in {where}"
                                f"{_shown(a[row] if row else a)}")
    with np.errstate(over="ignore"):
        total = (np.exp(a) if log else a).sum(axis=-1)
    off = np.abs(total - 1.0) > LAW_TOL
    if off.any():
        k = int(np.flatnonzero(off.ravel())[0])
        row = _row(a, k)
        shown, summed = _shown(a[row] if row else a), float(total.ravel()[k])
        exp = "exp's " if log else ""
        which = (f"row {row} {shown} has the {exp}sum" if row else f"got {shown}, whose {exp}sum is")
        raise InvalidInputError(f"{name} must hold {what}; {which} {summed!r}")


def law(*, ndim=None, finite=False, base=None):
    """A rule (:func:`grpo_theory._checks.checked`): ``base`` (default :func:`~grpo_theory._checks.numbers` of
    ``ndim`` dimensions) and, for a value given from outside the package, rows along the last axis that are
    probability laws (:func:`check_law`)."""
    base = numbers(ndim=ndim, finite=finite) if base is None else base

    def check(name, value):
        base(name, value)
        if from_outside(2):              # this rule <- the @checked wrapper <- the call
            check_law(name, value)
    return check


def log_law(*, ndim=None, base=None):
    """A rule: ``base`` (default numbers), whose rows along the last axis are log-laws (:func:`check_law` with
    ``log=True``) when given from outside the package."""
    base = numbers(ndim=ndim) if base is None else base

    def check(name, value):
        base(name, value)
        if from_outside(2):
            check_law(name, value, log=True)
    return check


def log_probabilities(*, ndim=None, base=None):
    """A rule: ``base`` (default numbers), each of which is a log-probability (``<= 0`` or ``-inf``; never NaN or
    ``+inf``) when given
    from outside the package, for logs that are not one law along an axis (an answer tree's ``log pi(c|v)`` of
    every edge, several nodes' laws side by side)."""
    base = numbers(ndim=ndim) if base is None else base

    def check(name, value):
        base(name, value)
        if from_outside(2):
            a = np.asarray(value, dtype=float)
            bad = np.isnan(a) | (a > 0)
            if bad.any():
                raise InvalidInputError(f"{name} must hold log-probabilities (<= 0, or -inf for probability 0), got "
                                        f"{float(a[bad].ravel()[0])!r} among {_shown(a)}")
    return check


def in_level_order(v, log_w, call, *, name: str = "v"):
    """``call(v, log_w)`` with the reward levels increasing, its result in the caller's order of levels.

    The advantage estimators' ``E_l`` are documented for increasing levels (pass@k's second level is "pass"), and
    an estimator registered by a user may rely on that; distinct levels given in another order are sorted, with
    ``log_w``'s last axis, and the result's last axis is put back. A level given twice is refused, naming it and the
    argument ``name``.
    Increasing levels (every call the package makes itself) cost one comparison.
    """
    v = np.asarray(v, dtype=float)
    if v.size < 2 or bool(np.all(v[1:] > v[:-1])):
        return call(v, log_w)
    order = np.argsort(v, kind="stable")
    ordered = v[order]
    if np.any(ordered[1:] == ordered[:-1]):
        arr(ndim=1, distinct=True)(name, v)          # names the argument and the level given twice
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    return call(ordered, np.asarray(log_w, dtype=float)[..., order])[..., back]
