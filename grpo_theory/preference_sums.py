"""``E_l(w)`` as sums over count vectors: :mod:`grpo_theory.preference` chooses the sum, this module computes it.

``E_l(w) = sum_n Multinomial(n; G - 1, w) A_l(n)`` over the count vectors ``n`` of the ``G - 1`` other
rewards on the ``L`` levels, with ``A_l(n)`` the advantage of a reward ``v_l`` among them:

* every count vector (:func:`group_enumerated_expectations`, over :func:`advantage_table`), for ``G - 1 <= 64``
  or where the windows would not be much smaller;
* two levels, large G: the binomial weights in an ``O(sqrt(G))`` window about the mode, walked outward
  from it (:func:`binomial_window_expectations`);
* three or more levels, large G: the count vectors in each level's Bernstein window, generated directly
  (:func:`multinomial_window_expectations`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import advantage, variants
from ._multinomial import bd0, box_count_vectors, count_vectors, log_multinomial_weights, saddle_constant, window_bounds

if TYPE_CHECKING:
    from .problem import Objective


def advantages_for_counts(v: np.ndarray, counts: np.ndarray, group_size: int, normalization: str, ddof: int,
                           eps: float, variance_eps: float, part: str) -> np.ndarray:
    """``A[l, n]``: advantage of ``r_1 = v_l`` with counts ``n`` (rows of ``counts``) among the others.

    Scale: ``(v_l - mean) / (sqrt(SS/(G - ddof) + variance_eps) + eps)``; shift: ``v_l - mean``.
    ``part`` is "mean" (A itself), "positive" (max(A, 0)) or "negative" (min(A, 0)).

    The group's total counts are ``N = n + e_l``. With ``D_ij = v_i - v_j`` (``D_ll = 0``),
    ``G (v_l - mean) = sum_j N_j D_lj = (n D^T)_l`` and
    ``SS = sum_i N_i (v_i - mean)^2 = (1/2G) sum_ij N_i D_ij^2 N_j = (n D^2 n + 2 (n D^2)_l) / 2G``:
    two products of the ``(N, L)`` count matrix with an ``(L, L)`` matrix, every term of the sum of
    squares non-negative (no cancellation). This is ``O(N L^2)``; the direct triple sum over
    ``(l, n, i, j)`` it replaces was ``O(N L^3)`` and dominated a solve with the KL in the reward
    (shaped levels that change with every policy, so nothing is cached). tests/test_preference.py holds it to the
    direct sum.
    """
    G = group_size
    diff = v[:, None] - v[None, :]                                # diff[i, j] = v_i - v_j
    numerator = (counts @ diff.T).T / G                           # (L, N): v_l - mean, no cancellation
    if not variants.lookup("normalization", normalization).scales:
        table = numerator
    else:
        cross = counts @ diff**2                                  # (N, L): (n D^2)_j
        sum_sq = (np.einsum("nj,nj->n", cross, counts)[None, :] + 2.0 * cross.T) / (2.0 * G)
        denom = np.sqrt(sum_sq / (G - ddof) + variance_eps) + eps
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(denom > 0, numerator / np.where(denom > 0, denom, 1.0), 0.0)
    return advantage.signed_part(table, part)


@lru_cache(maxsize=8)
def _level_major_counts(total: int, n_levels: int) -> np.ndarray:
    """``count_vectors(total, n_levels)`` as floats, transposed to ``(L, N)`` in C order (cached, read-only)."""
    counts = np.ascontiguousarray(count_vectors(total, n_levels).astype(float).T)
    counts.setflags(write=False)
    return counts


@lru_cache(maxsize=64)
def advantage_table(levels: tuple, group_size: int, normalization: str, ddof: int, eps: float,
                     variance_eps: float, part: str) -> np.ndarray:
    """:func:`advantages_for_counts` over every count vector of ``G - 1`` others (cached).

    The same sums, built level-major: ``D @ n^T`` and ``D^2 @ n^T`` are ``(L, N)`` in C order (the flow's
    ``E(w) = table @ weights`` reads each level's row in one sweep), from counts converted and transposed once per
    ``(G, L)``, the normalisation applied in place. With the KL in the reward the levels change at every evaluation
    and nothing else is cached: three ``(L, N)`` passes fewer than :func:`advantages_for_counts` plus its transposed
    copy, 2.5x faster at ``G = 16``, ``L = 9`` (490,314 count vectors), equal to it within 1e-15.
    """
    v = np.asarray(levels, dtype=float)
    G = group_size
    counts = _level_major_counts(G - 1, v.size)                  # (L, N)
    diff = v[:, None] - v[None, :]
    table = diff @ counts                                         # (L, N): G (v_l - mean)
    table /= G
    if variants.lookup("normalization", normalization).scales:
        sum_sq = (diff**2) @ counts                               # (L, N): (D^2 n)_l, D^2 symmetric
        quad = np.einsum("jn,jn->n", sum_sq, counts)              # n D^2 n
        sum_sq *= 2.0
        sum_sq += quad
        sum_sq /= 2.0 * G * (G - ddof)                            # SS / (G - ddof)
        if variance_eps:
            sum_sq += variance_eps
        np.sqrt(sum_sq, out=sum_sq)
        sum_sq += eps
        positive = sum_sq > 0
        np.divide(table, sum_sq, out=table, where=positive)
        table[~positive] = 0.0
    table = advantage.signed_part(table, part)
    table = np.ascontiguousarray(table)
    table.setflags(write=False)
    return table





#: Beyond this level-0 logit every binomial weight but the mode's is exactly 0 in double precision (neighbouring
#: weights differ by a factor e^(z + log((N-k)/(k+1))), and |log((N-k)/(k+1))| <= log N), so |z| is clipped to it.
_WALK_LOGIT_CLIP = 1e4


class BinomialWalk(NamedTuple):
    """The ``w``-independent terms of :func:`binomial_window_expectations` for one ``(levels, G, normalisation)``
    (:func:`binomial_walk`), read-only.

    With ``N = G - 1`` and ``pad`` (at least the widest half-window) positions either side, the walk's log-ratios
    at even odds, ``log(b_(k+1)/b_k) - z = log((N - k)/(k + 1))`` (``k = 0..N-1``), sit at padded positions
    ``pad + k``, with ``+inf`` before (``k < 0``) and ``-inf`` after (``k >= N``), so that a walk leaving ``0..N``
    gets weight exactly 0; the advantage table ``A_l(k)`` (``k = 0..N``) sits at ``pad + k`` between zero columns.
    Rows of sliding windows (views, ``pad`` wide) hold what the walk from the mode's padded position ``m`` reads
    (the fields below); a policy's window is copied out of them as whole rows.
    """

    #: Positions added either side (at least the widest half-window, so that no window needs clipping).
    pad: int
    #: ``N``, the other group members' count.
    total: int
    #: ``up[m, j]``: the log-ratio of step ``j`` up from ``m`` (from position ``m + j`` to ``m + j + 1``).
    up: np.ndarray
    #: ``down[down_end - m, j]``: the log-ratio of step ``j`` down from ``m`` (from ``m - j`` to ``m - j - 1``,
    #: ``log(b_(k-1)/b_k)``, the step up negated); ``down_end`` is the padded length of the log-ratios.
    down: np.ndarray
    down_end: int
    #: The padded table, ``(L, N + 1 + 2 pad)``.
    table: np.ndarray
    #: ``table_up[l, m, j]``: ``A_l`` at position ``m + j + 1``; ``table_down[l, table_end - m, j]``: at
    #: ``m - j - 1`` (``table_end``: the table's padded length).
    table_up: np.ndarray
    table_down: np.ndarray
    table_end: int


@lru_cache(maxsize=64)
def binomial_walk(levels: tuple, group_size: int, normalization: str, ddof: int, eps: float, variance_eps: float,
                   part: str) -> BinomialWalk:
    """The ``w``-independent terms of :func:`binomial_window_expectations` (:class:`BinomialWalk`; cached)."""
    total = group_size - 1
    pad = int(6.0 * math.sqrt(total)) + 48               # >= the widest half-window, 12 sd + 42 at sd = sqrt(N)/2
    k = np.arange(total, dtype=float)
    steps = np.concatenate([np.full(pad, np.inf), np.log(total - k) - np.log1p(k), np.full(pad, -np.inf)])
    table = advantage_table(levels, group_size, normalization, ddof, eps, variance_eps, part)
    table = np.pad(table, ((0, 0), (pad, pad)))
    reversed_steps = np.ascontiguousarray(-steps[::-1])   # [S - 1 - i]: -steps[i]
    reversed_table = np.ascontiguousarray(table[:, ::-1])
    for arr in (steps, reversed_steps, table, reversed_table):
        arr.setflags(write=False)
    windows = np.lib.stride_tricks.sliding_window_view
    # step j down from m is -steps[m - 1 - j] = reversed_steps[S - m + j]; the count m - 1 - j is column P - m + j
    # of the reversed table (S, P: the padded lengths)
    return BinomialWalk(pad, total, windows(steps, pad), windows(reversed_steps, pad), steps.size, table,
                        windows(table[:, 1:], pad, axis=1), windows(reversed_table, pad, axis=1), table.shape[1])


def binomial_window_expectations(log_w: np.ndarray, walk: BinomialWalk) -> np.ndarray:
    """``E_l`` for two levels from each policy's own window of count vectors (``k`` = the count of level 0).

    The binomial weights ``b_k`` of ``Bin(N, w_0)`` are walked outward from the mode ``m = floor((N + 1) w_0)``:
    ``log(b_(k+1)/b_k) = log((N - k)/(k + 1)) + z`` with ``z = log(w_0/w_1)``, so ``log(b_k/b_m)`` is a cumulative
    sum of ratios that stay small in the bulk (an absolute error of about ``eps`` per step, with no
    ``lgamma(N)``-sized terms to cancel), and ``E_l = sum_k b_k A_l(k) / sum_k b_k`` over
    ``m - H <= k <= m + H`` with ``H = 12 sd + 42`` (``sd`` the largest of the batch), which contains
    mean +- (12 sd + 40). Padding (:func:`binomial_walk`) gives the weights outside ``0..N`` exactly 0. The
    window's normalisation by its own sum differs from the full sum's by less than 1e-25 relative.

    The walk up and the walk down of a batch of ``B`` policies are one ``(B, 2, H)`` array, rows copied out of
    the cached sliding windows (no index arrays are built); its cumulative sums, exponentials and sums against
    the table's rows are taken in that layout.
    """
    table = walk.table
    with np.errstate(invalid="ignore", over="ignore"):
        z, half, mode = _window_place(log_w, walk.total, walk.pad)
        log_b = np.empty((log_w.shape[0], 2, half))                       # (B, 2, H): up, then down
        np.add(walk.up[mode, :half], z, out=log_b[:, 0])                  # log(b_(m+j+1) / b_(m+j))
        np.subtract(walk.down[walk.down_end - mode, :half], z, out=log_b[:, 1])
        log_b.cumsum(axis=-1, out=log_b)                                  # log(b_k / b_m)
        b = np.exp(log_b, out=log_b)
    norm = 1.0 + b.sum(axis=(1, 2))
    below = walk.table_end - mode
    out = np.empty((table.shape[0], log_w.shape[0]))
    a = np.empty_like(b)
    for lvl in range(table.shape[0]):                                     # two levels
        a[:, 0] = walk.table_up[lvl, mode, :half]                         # A_l at the counts the walk reaches
        a[:, 1] = walk.table_down[lvl, below, :half]
        out[lvl] = np.einsum("bsk,bsk->b", b, a)
    out += table[:, mode].reshape(out.shape)                              # A_l at the mode
    out /= norm
    return out.T


def _window_place(log_w: np.ndarray, total: int, pad: int):
    """``(z, H, m)`` of :func:`binomial_window_expectations`: ``z = log(w_0/w_1)`` clipped to ``+-1e4`` (a column),
    the half-width ``H`` for the batch, and each mode's padded position ``m``. For a single policy ``z`` and ``m``
    are numbers (the windows are then read by plain slicing), from the same floating-point operations."""
    if log_w.shape[0] == 1:
        z = log_w[0, 0] - log_w[0, 1]
        if z == z:                                        # not NaN (which the batch form below passes on)
            z = min(max(z, -_WALK_LOGIT_CLIP), _WALK_LOGIT_CLIP)
            w0 = 1.0 / (1.0 + np.exp(-z))
            half = int(12.0 * math.sqrt(total * float(w0 * (1.0 - w0)))) + 42
            return z, half, min(math.floor((total + 1) * w0), total) + pad
    z = np.minimum(np.maximum(log_w[:, 0] - log_w[:, 1], -_WALK_LOGIT_CLIP), _WALK_LOGIT_CLIP)
    # the window's place and size only, so one exp (not _numerics.expit's accurate two-branch form, three exps
    # on this hot path); the weights themselves come from z
    w0 = 1.0 / (1.0 + np.exp(-z))
    half = int(12.0 * math.sqrt(total * float((w0 * (1.0 - w0)).max()))) + 42
    # the mode m = floor((N + 1) w_0) (at most N, also where w_0 rounds to 1), at its padded position
    mode = (np.minimum(np.floor((total + 1) * w0), total) + pad).astype(np.intp)
    return z[:, None], half, mode


def multinomial_window_expectations(v: np.ndarray, log_w: np.ndarray, obj: Objective, part: str) -> np.ndarray:
    """``E_l`` for ``L >= 3`` levels, summing for each policy only the count vectors in its window.

    Per level ``|n_j - N w_j| <= 9 sd_j + 30`` (see :func:`window_bounds`: the weight left out is
    below 1e-16). The window is generated directly (:func:`box_count_vectors`) and its advantages computed on the
    fly, so the cost is ``O(sd^(L-1))`` count vectors per policy rather than ``O(G^(L-1))``: exact
    ``P_G`` for 4 or 5 reward levels at G in the hundreds or thousands, which enumeration cannot reach.
    """
    total = obj.group_size - 1
    lo, hi = window_bounds(log_w, total)
    out = np.empty(log_w.shape)
    for i in range(log_w.shape[0]):                      # rows of a block: each its own window
        counts, const, table = _window_terms(tuple(v.tolist()), total, tuple(lo[i].tolist()), tuple(hi[i].tolist()),
                                             obj.normalization, obj.std_ddof, obj.std_eps, obj.variance_eps, part)
        log_mean = math.log(total) + log_w[i]
        log_weights = const - bd0(counts, log_mean).sum(axis=-1)
        out[i] = table @ np.exp(log_weights)
    return out


@lru_cache(maxsize=16)
def _window_terms(levels: tuple, total: int, lo: tuple, hi: tuple, normalization: str, ddof: int, eps: float,
                  variance_eps: float, part: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``w``-independent part of one window of :func:`multinomial_window_expectations`: its count vectors,
    their :func:`saddle_constant` and advantage table (cached: a flow's consecutive policies mostly share a
    window; the reliability tests' G = 1000 solves asked for 335 distinct windows in 3,536 calls)."""
    counts = box_count_vectors(total, np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)).astype(float)
    const = saddle_constant(counts, total)
    table = advantages_for_counts(np.asarray(levels, dtype=float), counts, total + 1, normalization, ddof, eps,
                                   variance_eps, part)
    for arr in (counts, const, table):
        arr.setflags(write=False)
    return counts, const, table


def group_enumerated_expectations(flat_log_w: np.ndarray, total: int, table: np.ndarray) -> np.ndarray:
    """``E_l(w) = sum_n Multinomial(n; total, w) A_l(n)`` over every count vector ``n``, for ``flat_log_w (B, L)``.

    ``table`` is ``A_l(n)`` (L, N) in C order. The weights are exponentiated in place and summed as
    ``table @ weights``, which reads both arrays row by row: at 5 levels and ``G = 32`` (52,360 count
    vectors) this is memory-bound, and ``weights @ table.T`` (a column sweep of the table) took twice as long.
    :func:`level_expectations` and :func:`expectations_evaluator` both sum through here, so they agree to the bit.
    """
    weights = log_multinomial_weights(flat_log_w, total)                   # (B, N), a fresh array
    np.exp(weights, out=weights)
    return (table @ weights.T).T
