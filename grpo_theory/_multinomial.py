r"""Multinomial weights over count vectors, accurate for group sizes in the thousands (the note's reward preference model).

``P_G`` sums over the count vectors ``n`` of the other ``N = G - 1`` rewards over ``L`` levels, weighted
by ``Multinomial(n; N, w)``. This module enumerates those vectors (all of them, or a window around
``N w``) and gives the log weights: the plain log-gamma form for small ``N`` and Loader's saddle-point
form (Stirling with error terms, ``bd0`` deviances) above it. numpy only; the advantages themselves
are in :mod:`grpo_theory.preference`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._numerics import log_factorial

__all__ = ["count_vectors", "box_count_vectors", "window_bounds", "window_size", "bd0", "saddle_constant",
           "multinomial_terms", "log_multinomial_weights", "SMALL_TOTAL"]


@lru_cache(maxsize=16)
def count_vectors(total: int, n_levels: int) -> np.ndarray:
    """All ``n in N^L`` with ``sum(n) = total``, as an ``(N, L)`` int array, lexicographic (cached).

    The box ``0 <= n <= total`` of :func:`box_count_vectors`: built level by level with numpy (a
    loop over ``L``, never over ``G``). For two levels this is the pair of ``arange``s ``(k, total - k)``.
    """
    out = box_count_vectors(total, np.zeros(n_levels, dtype=np.int64), np.full(n_levels, total, dtype=np.int64))
    out.setflags(write=False)
    return out


def stirling_error(m: np.ndarray) -> np.ndarray:
    """``log Gamma(m+1) - (m log m - m + log(2 pi m)/2)`` for integers ``m >= 1``."""
    m = np.asarray(m, dtype=float)
    small = m < 16
    ms = np.where(small, m, 1.0)
    exact = log_factorial(ms) - (ms * np.log(ms) - ms + 0.5 * np.log(2 * np.pi * ms))
    mi = np.where(small, 16.0, m)
    inv2 = 1.0 / mi**2
    series = (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188)))) / mi
    return np.where(small, exact, series)


def bd0(x: np.ndarray, log_mean: np.ndarray) -> np.ndarray:
    """Loader's deviance ``x log(x/M) + M - x >= 0`` for integers ``x >= 0``, given ``log M``.

    Written as ``M [(1+d) log1p(d) - d]`` with ``d = (x - M)/M``, whose absolute
    error is about ``eps |x - M|`` (``eps sqrt(M)`` in the bulk of the weights),
    where the plain form loses ``eps M`` to cancellation. Where ``M`` is tiny (a
    level of probability ``< 1e-280``, e.g. a class logit in the thousands) ``d``
    would overflow; there ``x >> M`` and the plain form, with ``log M`` kept in
    log space, has no cancellation.
    """
    with np.errstate(under="ignore"):
        mean = np.exp(log_mean)
    loaders = mean > 1e-280
    # each form only where it is used, by the same operations on the same entries (a flow of 3 levels at
    # G = 1000 with a level below 1e-280 spent a fifth of its time here computing both forms everywhere)
    if loaders.all():
        out = _loader_form(x, mean)
    elif not loaders.any():
        out = _plain_form(x, mean, log_mean)
    elif mean.ndim == 1:                               # one mean per level (column): each column its form
        out = np.empty(np.broadcast_shapes(x.shape, mean.shape))
        for cols, form in ((np.flatnonzero(loaders), _loader_form), (np.flatnonzero(~loaders), _plain_form)):
            out[..., cols] = form(x[..., cols], mean[cols], log_mean[cols])
    else:
        out = np.where(loaders, _loader_form(x, mean), _plain_form(x, mean, log_mean))
    return np.where(x == 0, mean, out)


def _loader_form(x: np.ndarray, mean: np.ndarray, log_mean: np.ndarray | None = None) -> np.ndarray:
    """:func:`bd0` as ``M [(1+d) log1p(d) - d]``, ``d = (x - M)/M`` (``log_mean`` not used)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = (x - mean) / mean
        return mean * ((1.0 + d) * np.log1p(d) - d)


def _plain_form(x: np.ndarray, mean: np.ndarray, log_mean: np.ndarray) -> np.ndarray:
    """:func:`bd0` as ``x (log x - log M) + M - x``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return x * (np.log(np.where(x > 0, x, 1.0)) - log_mean) + mean - x


#: Up to this many other group members the plain gammaln/matmul form of the log weights
#: is used (fast; cancellation error <~ 1e-14); above it, the saddle-point form.
SMALL_TOTAL = 64


@lru_cache(maxsize=64)
def plain_multinomial_terms(total: int, n_levels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts^T, ``log(total!/prod n_j!)`` and usage^T, for the matmul form (cached)."""
    counts = count_vectors(total, n_levels)
    coef = log_factorial(total) - log_factorial(counts).sum(axis=1)
    counts_t = np.ascontiguousarray(counts.T, dtype=float)
    used_t = np.ascontiguousarray((counts > 0).T, dtype=float)
    for arr in (coef, counts_t, used_t):
        arr.setflags(write=False)
    return counts_t, coef, used_t


@lru_cache(maxsize=64)
def multinomial_terms(total: int, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Cached count vectors (float) and the w-independent part of ``log Multinomial``.

    ``log Mult(n; N, w) = -sum_j bd0(n_j, N w_j) + c(n)`` with
    ``c(n) = log(2 pi N)/2 + se(N) - sum_{n_j > 0} [log(2 pi n_j)/2 + se(n_j)]``
    (Stirling with error terms ``se``): every term is small or non-negative, so the
    weights stay accurate to ~1e-15 relative for ``N`` in the tens of thousands,
    where ``gammaln`` differences would lose four digits to cancellation.
    """
    counts = count_vectors(total, n_levels).astype(float)
    const = saddle_constant(counts, total)
    for arr in (counts, const):
        arr.setflags(write=False)
    return counts, const


def saddle_constant(counts: np.ndarray, total: int) -> np.ndarray:
    """``c(n)`` of :func:`multinomial_terms` for the rows of ``counts`` (float, summing to ``total``)."""
    safe = np.where(counts > 0, counts, 1.0)
    per_level = np.where(counts > 0, 0.5 * np.log(2 * np.pi * safe) + stirling_error(safe), 0.0)
    const = -per_level.sum(axis=1)
    if total > 0:
        const += 0.5 * np.log(2 * np.pi * total) + stirling_error(np.array(float(total)))
    return const


def window_bounds(log_w: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Per level, the counts within ``N w_j +- (9 sd_j + 30)`` (clipped to ``[0, N]``), shape (..., L).

    Bernstein: ``P(|n_j - N w_j| >= t) <= 2 exp(-t^2 / (2 (sd^2 + t/3)))``, with exponent >= 40.5 for
    every sd at this ``t`` (40.5 as sd grows, 45 at sd = 0); over ``L`` levels the weight left out is
    below ``2 L e^{-40} < 1e-16`` and, with ``|A| <= sqrt(G)``, moves ``E_l`` by less than 1e-14.
    (Two levels use the wider 12 sd + 40: there the window is cheap and the tests pin 1e-25.)
    """
    w = np.exp(log_w)
    mean = total * w
    reach = 9.0 * np.sqrt(total * w * (1.0 - w)) + 30.0
    lo = np.clip(np.floor(mean - reach), 0, total).astype(np.int64)
    hi = np.clip(np.ceil(mean + reach), 0, total).astype(np.int64)
    return lo, hi


def box_count_vectors(total: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The count vectors ``n`` with ``sum n = total`` and ``lo <= n <= hi``, built level by level.

    Like :func:`count_vectors`, but each level only takes the values that leave the rest
    feasible, so the cost is the size of the box, never ``C(total + L - 1, L - 1)``.
    """
    L = lo.size
    later_lo = np.concatenate([np.cumsum(lo[::-1])[::-1][1:], [0]])
    later_hi = np.concatenate([np.cumsum(hi[::-1])[::-1][1:], [0]])
    remaining = np.array([total], dtype=np.int64)
    rows = np.zeros((1, 0), dtype=np.int64)
    for j in range(L - 1):
        first = np.maximum(lo[j], remaining - later_hi[j])
        last = np.minimum(hi[j], remaining - later_lo[j])
        reps = np.maximum(last - first + 1, 0)
        parent = np.repeat(np.arange(remaining.size), reps)
        starts = np.cumsum(reps) - reps
        value = first[parent] + np.arange(int(reps.sum()), dtype=np.int64) - np.repeat(starts, reps)
        rows = np.column_stack([rows[parent], value])
        remaining = remaining[parent] - value
    return np.column_stack([rows, remaining])


def window_size(log_w: np.ndarray, total: int) -> int:
    """An upper bound on the count vectors :func:`grpo_theory.preference.level_expectations` sums for ``log_w`` (L,)."""
    lo, hi = window_bounds(np.asarray(log_w, dtype=float), total)
    return int(np.prod((hi - lo + 1)[:-1].astype(float)))


def log_multinomial_weights(log_w: np.ndarray, total: int) -> np.ndarray:
    """``log Multinomial(n; total, w)`` for a batch ``log_w (..., L)``, over all count vectors."""
    if total <= SMALL_TOTAL:
        counts_t, coef, used_t = plain_multinomial_terms(total, log_w.shape[-1])
        finite = np.isfinite(log_w)
        out = np.where(finite, log_w, 0.0) @ counts_t                       # (..., N)
        out += coef                                      # in place: a flow calls this hundreds of times
        if not finite.all():
            out[((~finite).astype(float) @ used_t) > 0] = -np.inf   # a zero-probability level kills its counts
        return out
    counts, const = multinomial_terms(total, log_w.shape[-1])
    log_mean = (math.log(total) + log_w)[..., None, :]                    # (..., 1, L)
    return const - bd0(counts, log_mean).sum(axis=-1)                    # (..., N)
