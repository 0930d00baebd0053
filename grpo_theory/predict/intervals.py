"""How well ``n`` samples pin down ``p_ref``, and pass@k before and after training.

Two intervals for a binomial proportion (``correct`` of ``n``), at confidence ``level``:

* ``"jeffreys"`` (default): the equal-tailed interval of the Beta posterior under Jeffreys' prior,
  ``Beta(correct + 1/2, n - correct + 1/2)``;
* ``"wilson"``: Wilson's score interval.

A prompt never solved (``correct = 0``) gets the one-sided bound ``p_ref in (0, 1 - (1 - level)^(1/n)]``
for both methods: at level 0.95 that is the "rule of three", ``~3/n``. Symmetrically a prompt always
solved gets ``[(1 - level)^(1/n), 1)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._checks import checked, one_of, text
from .._validate import as_double, float_array, number, plain
from ..errors import InvalidInputError

__all__ = ["binomial_interval", "pass_at_k", "unbiased_pass_at_k", "INTERVALS", "check_k"]

INTERVALS = ("jeffreys", "wilson")


#: Largest count: 2**53, beyond which integers are not exact in double precision.
MAX_COUNT = 2**53


def _counts(correct, n) -> tuple[np.ndarray, np.ndarray]:
    """``correct`` and ``n`` as non-empty float arrays of whole numbers, ``n`` in [1, 2**53],
    ``0 <= correct <= n``."""
    n = float_array("n", n, low=1, high=MAX_COUNT, integer=True)
    c = float_array("correct", correct, low=0, high=MAX_COUNT, integer=True)
    if c.size == 0 or n.size == 0:                       # no prompt: nothing to estimate
        empty = "correct" if c.size == 0 else "n"
        raise InvalidInputError(f"{empty} is empty; expected the counts of at least one prompt")
    try:
        above = c > n
    except ValueError:
        above = np.broadcast_to(False, ())
        raise InvalidInputError(f"correct {c.shape} and n {n.shape} do not broadcast together") from None
    if np.any(above):
        i = np.flatnonzero(np.broadcast_to(above, np.broadcast_shapes(c.shape, n.shape)))[0]
        cb, nb = np.broadcast_arrays(c, n)
        raise InvalidInputError(f"need correct <= n, got correct = {int(cb.flat[i])} of n = {int(nb.flat[i])}")
    return c, n


def _check(correct, n, level):
    """The counts as arrays and ``level`` as a double (a float32, Decimal or long double level computed in its
    own type gave a float32-accurate interval or a TypeError)."""
    level = number("level", level, low=0, high=1, low_open=True, high_open=True)
    c, n = _counts(correct, n)
    return c, n, level


@checked(method=one_of(*INTERVALS))
def binomial_interval(correct, n, *, level: float = 0.95, method: str = "jeffreys") -> tuple[np.ndarray, np.ndarray]:
    """Interval ``(lo, hi)`` for ``p_ref`` from ``correct`` of ``n`` samples (see the module doc).

    Parameters
    ----------
    correct : array_like of int
        Successes per prompt ``c_x`` (broadcast with ``n``).
    n : array_like of int
        Samples per prompt ``n_x``.
    level : float
        Confidence level (two-sided; one-sided at ``correct`` = 0 or ``n``).
    method : {"jeffreys", "wilson"}
        Jeffreys (quantiles of the Beta(c + 1/2, n - c + 1/2) posterior) or Wilson's score interval.

    Returns
    -------
    lo : numpy.ndarray
        Lower ends.
    hi : numpy.ndarray
        Upper ends.

    Raises
    ------
    InvalidInputError
        An unknown ``method``, a ``level`` outside ``(0, 1)``, counts outside ``0 <= correct <= n``, ``n >= 1``,
        or no counts at all (an empty array).

    Examples
    --------
    >>> lo, hi = binomial_interval([0, 5], [100, 10])
    >>> round(float(hi[0]), 5), round(float(lo[1]), 4), round(float(hi[1]), 4)   # 1 - 0.05**(1/100) ~ 3/100
    (0.02951, 0.2235, 0.7765)
    """
    if method not in INTERVALS:
        raise InvalidInputError(f"interval method must be one of {INTERVALS}, got {method!r}")
    c, n, level = _check(correct, n, level)
    alpha = 1.0 - level
    if method == "jeffreys":
        from scipy.special import betaincinv  # Beta quantiles; scipy.stats costs seconds to import

        with np.errstate(all="ignore"):             # c = 0 or n are replaced below
            lo = betaincinv(c + 0.5, n - c + 0.5, alpha / 2)
            hi = betaincinv(c + 0.5, n - c + 0.5, 1 - alpha / 2)
    else:
        from scipy.special import ndtri

        z = float(ndtri(1 - alpha / 2))
        phat = c / n
        centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
        lo, hi = centre - half, centre + half
    one_sided = 1.0 - alpha ** (1.0 / n)                     # exact: P(0 of n | p) = (1 - p)^n = alpha
    lo = np.where(c == 0, 0.0, np.where(c == n, 1.0 - one_sided, lo))
    hi = np.where(c == n, 1.0, np.where(c == 0, one_sided, hi))
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


@checked(name=text())
def check_k(k, name: str = "k") -> tuple[int, ...]:
    """``k`` as a tuple of integers >= 1; anything else is an error naming it.

    Parameters
    ----------
    k : int or sequence of int
        pass@k values.
    name : str, default "k"
        The argument's name, for the message.

    Returns
    -------
    tuple of int
        The values of ``k``, in the order given.

    Raises
    ------
    InvalidInputError
        A value that is not an integer ``>= 1`` (a bool included), or one given twice.

    Examples
    --------
    >>> check_k([1, 8])
    (1, 8)
    """
    if isinstance(k, (str, bytes, bytearray, memoryview, Mapping)) or type(k).__module__.split(".")[0] == "pandas" \
            and hasattr(k, "columns"):
        raise InvalidInputError(f"{name} must be an integer >= 1 or a list of them (pass@k), got {plain(k)[:80]} "
                                f"({type(k).__name__})")
    try:
        ks = np.atleast_1d(np.asarray(k, dtype=object))
    except (TypeError, ValueError):
        ks = None
    if ks is None or ks.ndim != 1:
        raise InvalidInputError(f"{name} must be an integer >= 1 or a flat list of them (pass@k), got "
                                f"{plain(k)[:80]}")
    out = []
    for v in ks:
        if not isinstance(v, bool) and isinstance(v, (int, np.integer, float, np.floating)):
            as_double(name, v)                           # 10**400: beyond a double, named
        if isinstance(v, bool) or not isinstance(v, (int, np.integer, float, np.floating)) \
                or not float(v).is_integer() or v < 1:
            raise InvalidInputError(f"{name} must be an integer >= 1 (pass@k), got {plain(v)}")
        if int(v) in out:                     # a set of k: a value twice is a slip (one column or curve each)
            raise InvalidInputError(f"{name} must give each k once, got k = {int(v)} twice: {plain(ks.tolist())}")
        out.append(int(v))
    if not out:
        raise InvalidInputError(f"{name} must name at least one value")
    return tuple(out)


def one_k(k) -> int:
    """``k`` checked as :func:`check_k` does, and one value (a list of several is refused, naming them).

    Parameters
    ----------
    k : int or sequence of int
        The pass@k value (a sequence holds just one).

    Returns
    -------
    int
        ``k``.
    """
    ks = check_k(k)
    if len(ks) > 1:
        raise InvalidInputError(f"k must be one integer >= 1 (pass@k), got {len(ks)} values: {plain(list(ks))[:80]}")
    return ks[0]


def pass_at_k(x, k) -> np.ndarray:
    """``1 - (1 - x)^k``: at least one of ``k`` i.i.d. draws correct when one is correct with probability ``x``.

    Within the correct class the stationary policy keeps ``pi_ref``'s proportions, so a draw is correct
    with probability ``x = P(correct)``, independently across draws.

    Parameters
    ----------
    x : array_like
        P(correct) of one draw, in ``[0, 1]``.
    k : int
        Number of draws, ``>= 1``.

    Returns
    -------
    numpy.ndarray
        ``1 - (1 - x)^k``, shaped like ``x``.

    Examples
    --------
    >>> float(pass_at_k(0.5, 3))
    0.875
    """
    k = one_k(k)
    x = float_array("x", x, low=0, high=1)
    with np.errstate(divide="ignore"):
        out = -np.expm1(k * np.log1p(-np.minimum(x, 1.0)))
    return out + 0.0                                     # no -0.0


def unbiased_pass_at_k(n, correct, k) -> np.ndarray:
    """The unbiased estimate ``1 - C(n - c, k)/C(n, k)`` of pass@k from ``c`` correct of ``n`` (Chen et al. 2021).

    Where ``k > n`` no unbiased estimate exists (``n`` draws say nothing about ``k > n`` of them without a
    model), and ``nan`` is returned there: the plug-in ``1 - (1 - c/n)^k`` would be biased low (below the
    estimate's value ``1`` at ``k = n`` for every ``c >= 1``), so a curve switching to it goes down past ``n``.

    Parameters
    ----------
    n : array_like of int
        Samples per prompt.
    correct : array_like of int
        Correct samples per prompt ``c``.
    k : int
        ``>= 1``.

    Returns
    -------
    numpy.ndarray
        The estimate per prompt; ``nan`` where ``k > n``.

    Raises
    ------
    InvalidInputError
        Counts outside ``0 <= correct <= n``, ``n >= 1``, no counts at all (an empty array), or ``k`` not one
        integer ``>= 1``.

    Examples
    --------
    >>> round(float(unbiased_pass_at_k(4, 1, 2)), 6)    # 1 - C(3,2)/C(4,2) = 1 - 3/6
    0.5
    >>> unbiased_pass_at_k([4, 8], [1, 1], 8).tolist()    # k > n = 4: not estimable
    [nan, 1.0]
    """
    ks = check_k(k)
    if len(ks) != 1:                      # one k per call (pass_at takes several)
        raise InvalidInputError(f"k must be one integer >= 1, got {k!r}")
    (k,) = ks
    c, n = _counts(correct, n)
    c, n = np.broadcast_arrays(c, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_ratio = _log_ratio(n, c, k)
        exact = np.where(n - c < k, 1.0, -np.expm1(np.where(n - c < k, 0.0, log_ratio))) + 0.0
    return np.where(k <= n, exact, np.nan)


#: Above this many factors, ``log C(n-c, k)/C(n, k)`` comes from log-gamma differences instead of a product.
_PRODUCT_TERMS = 4096


def _log_ratio(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """``log(C(n-c, k)/C(n, k))`` where ``n - c >= k``, as ``sum_{j<c} log1p(-k/(n-j))`` (the same ratio,
    ``C(n-k, c)/C(n, c)``) or ``sum_{i<k} log1p(-c/(n-i))``, whichever has fewer terms: accurate to a few ulps.
    Log-gamma differences, which lose digits to cancellation at large ``n`` (1.4e-4 relative at
    ``n = 10^6``), are used only where both ``c`` and ``k`` exceed 4,096."""
    from scipy.special import gammaln

    out = np.zeros(n.shape)
    ok = n - c >= k
    m = np.where(ok, np.minimum(c, k), 0)
    use_c = c <= k                                       # the sum over j < c (terms log1p(-k/(n-j)))
    many = m > _PRODUCT_TERMS
    top = int(np.max(np.where(many, 0, m), initial=0))
    for start in range(0, top, 256):
        i = np.arange(start, min(start + 256, top))
        live = (i[None, :] < np.where(many, 0, m).ravel()[:, None])
        nn, cc = n.ravel()[:, None], c.ravel()[:, None]
        term = np.where(use_c.ravel()[:, None], np.log1p(-k / (nn - i)), np.log1p(-cc / (nn - i)))
        out.ravel()[:] += np.where(live, term, 0.0).sum(axis=1)
    if np.any(many):
        big = gammaln(n - c + 1) - gammaln(n - c - k + 1) - (gammaln(n + 1) - gammaln(n - k + 1))
        out = np.where(many, big, out)
    return out
