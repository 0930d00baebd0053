r"""The expected group-relative preference ``P_G(o | pi)`` (SPEC section 2).

``P_G(o | pi) = E[A_1 | o_1 = o]`` with ``o_2..o_G`` i.i.d. from ``pi`` and every
reward drawn from its law. It depends on ``o`` only through its reward law and
on ``pi`` only through ``w = pi @ reward_probs``, the law of the reward of one
draw from ``pi`` over the ``L`` reward levels ``v_1 < ... < v_L``. So

    P_G(o | pi) = sum_l P(r = v_l | o) E_l(w),
    E_l(w) = E[A_1 | r_1 = v_l],  r_2..r_G i.i.d. ~ w.

``E_l`` is an exact sum over the count vectors ``n`` (how many of the other
``G - 1`` rewards fall on each level) weighted by ``Multinomial(n; G-1, w)``: there
are ``C(G+L-2, L-1)`` of them, which is ``G`` for two levels (the O(G) binary
path) and does not depend on the number of outputs ``K``.

The advantage of a group is computed without cancellation: with total counts
``N_j`` per level, ``sum_i (r_i - mean)^2 = (1/G) sum_{i<j} N_i N_j (v_i - v_j)^2``,
a sum of non-negative terms, exactly zero when all rewards tie (then
``A := 0`` unless ``std_eps > 0``, when the numerator is zero as well).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np

from . import advantage
from ._multinomial import (
    SMALL_TOTAL,
    bd0,
    box_count_vectors,
    count_vectors,
    log_multinomial_weights,
    saddle_constant,
    window_bounds,
    window_size,
)
from .errors import ExactEvaluationTooLarge
from .monte_carlo import monte_carlo_preference, sample_rewards, sampled_advantages
from .problem import InvalidInputError, Objective, Question, as_objective, as_question, validate_probability_vector

__all__ = [
    "ExactEvaluationTooLarge",
    "reward_preference",
    "level_expectations",
    "expectations_evaluator",
    "pooled_expectations",
    "monte_carlo_preference",
    "n_count_vectors",
    "max_abs_advantage",
    "sampled_advantages",
    "sample_rewards",
]

#: Default cap on the number of count vectors enumerated exactly.
MAX_COUNT_VECTORS = 3_000_000
#: Entries of a (policies x count vectors) weight block processed at once.
_BLOCK = 2_000_000


def n_count_vectors(group_size: int, n_levels: int) -> int:
    """Number of count vectors of ``G - 1`` rewards over ``L`` levels: ``C(G+L-2, L-1)``.

    Parameters
    ----------
    group_size : int
        ``G``.
    n_levels : int
        ``L``, the number of reward levels.

    Returns
    -------
    int
        How many terms the exact enumeration of ``P_G`` sums.

    Examples
    --------
    >>> n_count_vectors(8, 2), n_count_vectors(64, 3)
    (8, 2080)
    """
    return math.comb(group_size - 1 + n_levels - 1, n_levels - 1)


def _advantages_for_counts(v: np.ndarray, counts: np.ndarray, group_size: int, normalization: str, ddof: int,
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
    if normalization == "shift":
        table = numerator
    else:
        cross = counts @ diff**2                                  # (N, L): (n D^2)_j
        sum_sq = (np.einsum("nj,nj->n", cross, counts)[None, :] + 2.0 * cross.T) / (2.0 * G)
        denom = np.sqrt(sum_sq / (G - ddof) + variance_eps) + eps
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(denom > 0, numerator / np.where(denom > 0, denom, 1.0), 0.0)
    return advantage.signed_part(table, part)


@lru_cache(maxsize=64)
def _advantage_table(levels: tuple, group_size: int, normalization: str, ddof: int, eps: float,
                     variance_eps: float, part: str) -> np.ndarray:
    """:func:`_advantages_for_counts` over every count vector of ``G - 1`` others (cached)."""
    v = np.asarray(levels, dtype=float)
    counts = count_vectors(group_size - 1, v.size).astype(float)
    # C order: the flow's E(w) = table @ weights then reads each level's row in one sweep
    table = np.ascontiguousarray(_advantages_for_counts(v, counts, group_size, normalization, ddof, eps,
                                                        variance_eps, part))
    table.setflags(write=False)
    return table




#: Two levels: sum, for each policy, only the binomial weights within mean +- (12 sd + 40). By
#: Bernstein's inequality P(|k - mu| >= t) <= 2 exp(-t^2 / (2 (sd^2 + t/3))) the rest is below
#: 1e-25 relative for every sd (exponent >= 60 at sd = 0, -> 72 as sd grows), also in the
#: Poisson-like regime of a tiny sd. Tests compare against the full sum.
_TRUNCATE_BINOMIAL = True

#: Beyond this level-0 logit every binomial weight but the mode's is exactly 0 in double precision (neighbouring
#: weights differ by a factor e^(z + log((N-k)/(k+1))), and |log((N-k)/(k+1))| <= log N), so |z| is clipped to it.
_WALK_LOGIT_CLIP = 1e4


@lru_cache(maxsize=64)
def _binomial_walk(levels: tuple, group_size: int, normalization: str, ddof: int, eps: float, variance_eps: float,
                   part: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``w``-independent terms of :func:`_binomial_window_expectations`, padded so that no window needs clipping
    (cached).

    Returns ``(steps, table, step_at, count_at)``:

    * ``steps[pad + k] = log((N - k)/(k + 1))`` for ``k = 0..N-1`` (``N = G - 1``), the log-ratio of the binomial
      weights of ``k + 1`` and ``k`` counts of level 0 at even odds, with ``+inf`` before (``k < 0``) and ``-inf``
      after (``k >= N``), so that a walk leaving ``0..N`` gets weight exactly 0; followed by the same array negated,
      for the walk downward;
    * the advantage table with ``pad`` zero columns either side;
    * for the ``j``-th step of the walk up (row 0) and down (row 1) from the mode's padded position ``m``: where
      ``steps`` holds its log-ratio, minus ``m``, and the count it reaches in the table, minus ``m``.
    """
    total = group_size - 1
    pad = int(6.0 * math.sqrt(total)) + 48               # >= the widest half-window, 12 sd + 42 at sd = sqrt(N)/2
    k = np.arange(total, dtype=float)
    steps = np.concatenate([np.full(pad, np.inf), np.log(total - k) - np.log1p(k), np.full(pad, -np.inf)])
    j = np.arange(pad)
    step_at = np.stack([j, steps.size - 1 - j])          # up: + steps[m + j]; down: - steps[m - 1 - j]
    count_at = np.stack([1 + j, -1 - j])
    steps = np.concatenate([steps, -steps])
    table = _advantage_table(levels, group_size, normalization, ddof, eps, variance_eps, part)
    table = np.pad(table, ((0, 0), (pad, pad)))
    for arr in (steps, table, step_at, count_at):
        arr.setflags(write=False)
    return steps, table, step_at, count_at


#: The sign of ``z`` in the walk's steps up (+) and down (-).
_WALK_SIGN = np.array([[1.0], [-1.0]])


def _binomial_window_expectations(log_w: np.ndarray, walk: tuple) -> np.ndarray:
    """``E_l`` for two levels from each policy's own window of count vectors (``k`` = the count of level 0).

    The binomial weights ``b_k`` of ``Bin(N, w_0)`` are walked outward from the mode ``m = floor((N + 1) w_0)``:
    ``log(b_(k+1)/b_k) = log((N - k)/(k + 1)) + z`` with ``z = log(w_0/w_1)``, so ``log(b_k/b_m)`` is a cumulative
    sum of ratios that stay small in the bulk (an absolute error of about ``eps`` per step, with no
    ``lgamma(N)``-sized terms to cancel), and ``E_l = sum_k b_k A_l(k) / sum_k b_k`` over
    ``m - H <= k <= m + H`` with ``H = 12 sd + 42``, which contains mean +- (12 sd + 40). Padding
    (:func:`_binomial_walk`) gives the weights outside ``0..N`` exactly 0. The window's
    normalisation by its own sum differs from the full sum's by less than 1e-25 relative.
    """
    steps, table, step_at, count_at = walk
    pad = step_at.shape[1]
    total = table.shape[1] - 2 * pad - 1
    with np.errstate(invalid="ignore", over="ignore"):
        z = np.minimum(np.maximum(log_w[:, 0] - log_w[:, 1], -_WALK_LOGIT_CLIP), _WALK_LOGIT_CLIP)
        # the window's place and size only, so one exp (not _numerics.expit's accurate two-branch form, three exps
        # on this hot path); the weights themselves come from z
        w0 = 1.0 / (1.0 + np.exp(-z))
        half = int(12.0 * math.sqrt(total * float(np.max(w0 * (1.0 - w0))))) + 42
        # the mode m = floor((N + 1) w_0) (at most N, also where w_0 rounds to 1), at its padded position
        mode = (np.minimum(np.floor((total + 1) * w0), total) + pad).astype(np.int64)[:, None, None]
        log_b = steps[step_at[:, :half] + mode]                          # (B, 2, H): up, then down
        log_b += _WALK_SIGN * z[:, None, None]
        np.cumsum(log_b, axis=-1, out=log_b)                              # log(b_k / b_m)
        b = np.exp(log_b, out=log_b)
    norm = 1.0 + b.sum(axis=(1, 2))
    at = count_at[:, :half] + mode
    out = np.empty((log_w.shape[0], table.shape[0]))
    for lvl, a in enumerate(table):                                       # two levels
        out[:, lvl] = a[mode[:, 0, 0]] + np.einsum("bsk,bsk->b", b, a[at])
    return out / norm[:, None]


def _multinomial_window_expectations(v: np.ndarray, log_w: np.ndarray, obj: Objective, part: str) -> np.ndarray:
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
    """The ``w``-independent part of one window of :func:`_multinomial_window_expectations`: its count vectors,
    their :func:`saddle_constant` and advantage table (cached: a flow's consecutive policies mostly share a
    window; the reliability tests' G = 1000 solves asked for 335 distinct windows in 3,536 calls)."""
    counts = box_count_vectors(total, np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)).astype(float)
    const = saddle_constant(counts, total)
    table = _advantages_for_counts(np.asarray(levels, dtype=float), counts, total + 1, normalization, ddof, eps,
                                   variance_eps, part)
    for arr in (counts, const, table):
        arr.setflags(write=False)
    return counts, const, table


def max_abs_advantage(n_levels_span: float, obj: Objective) -> float:
    """An upper bound on ``|A_i|`` for rewards spanning ``n_levels_span = v_max - v_min``.

    Scale normalisation: ``|r_i - mean| / std <= sqrt(G-1)`` (ddof 0) and
    ``(G-1)/sqrt(G)`` (ddof 1); shift: the span. For ``G = inf`` with scale, ``span/std_eps`` or
    ``span/sqrt(variance_eps)`` when an epsilon is set, infinite otherwise.

    Parameters
    ----------
    n_levels_span : float
        ``v_max - v_min``, the span of the reward levels.
    obj : Objective
        Group size and normalisation options.

    Returns
    -------
    float
        The bound (``math.inf`` where ``|A_i|`` is unbounded).

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> max_abs_advantage(1.0, Objective(beta=0.1, group_size=5))       # sqrt(G - 1)
    2.0
    """
    if obj.advantage == "rloo":                  # r_i minus the mean of the other G - 1 rewards
        return float(n_levels_span)
    if obj.advantage == "reinforce_pp":          # whitened by the policy's own reward std: unbounded near a vertex
        return math.inf
    if obj.advantage == "pass_at_k":             # the analytic table is scale-free and finite for finite G
        if obj.is_large_group:
            return math.inf
        a_pass, a_fail = advantage.pass_at_k_table(np.arange(obj.group_size + 1), obj.group_size, obj.pass_k)
        return float(max(np.abs(a_pass).max(), np.abs(a_fail).max()))
    if obj.normalization == "shift":
        return float(n_levels_span)
    if obj.is_large_group:
        bounds = [math.inf]
        if obj.std_eps > 0:
            bounds.append(n_levels_span / obj.std_eps)
        if obj.variance_eps > 0:
            bounds.append(n_levels_span / math.sqrt(obj.variance_eps))
        return min(bounds)
    g = obj.group_size
    return math.sqrt(g - 1) if obj.std_ddof == 0 else (g - 1) / math.sqrt(g)


@lru_cache(maxsize=256)
def _standardised_levels(levels: tuple, normalization: str, std_eps: float,
                         variance_eps: float) -> tuple[np.ndarray, float, float, float]:
    """Levels divided by a power of two ``c`` (the unit) bringing their span into ``[1, 2)``, and the epsilons in
    that unit.

    Under ``r -> r / c`` the scale-normalised advantage is unchanged when ``std_eps -> std_eps / c`` and
    ``variance_eps -> variance_eps / c^2``, and the shift-only advantage is divided by ``c``. Levels whose span
    is within a factor 2**20 of 1, and no larger than 2**20, are used as given (unit 1), so ordinary inputs are
    untouched.

    Only a power of two, and no shift: dividing by it is exact, so every difference ``v_i - v_j`` (all the
    advantages use, see :func:`_advantages_for_counts`) keeps its full relative precision. A shift onto
    ``[0, 1]`` (``(v - v_min) / span``) would round away the gaps of levels that lie far from ``v_min``: shaped
    rewards ``[-4.9e30, -50.4, -0.09]`` (a collapsing answer's KL in the reward) became ``[0, 1, 1]``, a false
    tie between the other two.
    """
    v = np.asarray(levels, dtype=float)
    if v.size < 2:
        return v, 1.0, std_eps, variance_eps
    top = float(np.max(np.abs(v)))
    scaled = v / top                                    # in [-1, 1]: no overflow below
    # the levels in any order: the span is max - min (with first - last, decreasing levels gave a
    # negative unit, which flips every advantage's sign)
    low = float(scaled.min())
    span_scaled = float(scaled.max() - low)
    span = span_scaled * top                            # may be inf (e.g. [-1e308, 1e308])
    if 2.0**-20 <= span <= 2.0**20 and top <= 2.0**20:
        return v, 1.0, std_eps, variance_eps
    if normalization == "shift" and not math.isfinite(span):
        raise InvalidInputError(
            f"reward levels {levels!r} span {span_scaled:g} x {top:g}, which overflows double precision; "
            "shift-only advantages grow with the span, so rescale the rewards (scale normalisation is "
            "invariant to it)")
    if math.isfinite(span):
        exponent = math.frexp(span)[1] - 1                # span / 2**exponent in [1, 2)
    else:                                               # |v| / 2**exponent <= 1/2: differences stay finite
        exponent = math.frexp(top)[1] + 1
    u = np.ldexp(v, -exponent)
    u.setflags(write=False)
    unit = math.ldexp(1.0, exponent) if exponent <= 1023 else math.inf
    # inf unit (scale normalisation only): the epsilons vanish against the span.
    veps = 0.0 if variance_eps == 0.0 else variance_eps / unit / unit
    return u, unit, std_eps / unit, veps


def _large_group_scaled(diff: np.ndarray, diff2: np.ndarray, w: np.ndarray, variance_eps: float,
                        std_eps: float) -> np.ndarray:
    """``E_l(w)`` at ``G = inf`` with scale normalisation: ``(v_l - E_w v) / (sqrt(sigma^2 + variance_eps) + std_eps)``
    (0 where the denominator is 0), from ``diff = v_i - v_j`` and ``diff2 = diff**2``. The mean is taken as
    ``sum_j w_j (v_i - v_j)`` and ``sigma^2 = (1/2) sum_ij w_i w_j (v_i - v_j)^2``: no cancellation near a
    vertex, nor where the levels lie far from 0. One place for :func:`level_expectations` and
    :func:`expectations_evaluator`, whose values must agree to the bit."""
    var = 0.5 * np.einsum("...i,ij,...j->...", w, diff2, w)
    denom = np.sqrt(var + variance_eps) + std_eps
    num = np.einsum("ij,...j->...i", diff, w)
    safe = np.where(denom > 0, denom, 1.0)[..., None]
    return np.where(denom[..., None] > 0, num / safe, 0.0)


def level_expectations(
    levels: np.ndarray,
    log_w: np.ndarray,
    obj: Objective,
    *,
    part: str = "mean",
    max_count_vectors: int = MAX_COUNT_VECTORS,
) -> np.ndarray:
    """``E_l(w) = E[A_1 | r_1 = v_l]`` for a batch of level distributions.

    Parameters
    ----------
    levels : numpy.ndarray, shape (L,)
        Distinct reward levels ``v_l``.
    log_w : numpy.ndarray, shape (..., L)
        Log-probabilities of the levels under ``pi`` (``-inf`` allowed). Log space keeps the
        binomial weights accurate for ``G`` in the thousands and for policies within ``1e-300``
        of a vertex.
    obj : Objective
        Group size, normalisation, ``std_ddof``, ``std_eps``, ``variance_eps``.
    part : {"mean", "positive", "negative"}, default "mean"
        ``"mean"`` for ``E[A_1 | .]``; ``"positive"``/``"negative"`` for ``E[max(A_1, 0) | .]`` and
        ``E[min(A_1, 0) | .]`` (what PPO clipping needs).
    max_count_vectors : int, default MAX_COUNT_VECTORS
        Most count vectors enumerated exactly.

    Returns
    -------
    numpy.ndarray, shape (..., L)
        ``E_l(w)``.

    Raises
    ------
    ExactEvaluationTooLarge
        When the exact sum needs more than ``max_count_vectors`` count vectors (use
        :func:`monte_carlo_preference`).

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> e = level_expectations(np.array([0.0, 1.0]), np.log([0.8, 0.2]), Objective(beta=1.0, group_size=2))
    >>> e.round(12).tolist()                          # G = 2: E[sign(r_1 - r_2) | r_1]
    [-0.2, 0.8]
    """
    if obj.advantage != "group":          # the GRPO family's other estimators (issue 22)
        return advantage.level_expectations(np.asarray(levels, dtype=float), log_w, obj, part=part,
                                          max_count_vectors=max_count_vectors)
    v, unit, std_eps, variance_eps = _standardised_levels(tuple(np.asarray(levels, dtype=float).tolist()),
                                                          obj.normalization, obj.std_eps, obj.variance_eps)
    if unit != 1.0:
        # P_G in units of the reward span: scale normalisation is invariant to it (the epsilons
        # are rescaled with it), shift-only is linear in it. Rewards like [1e154, 0] would
        # overflow the variance otherwise, and tiny spans like [1e-200, 0] underflow it.
        obj = dataclasses.replace(obj, std_eps=std_eps, variance_eps=variance_eps)
        out = level_expectations(v, log_w, obj, part=part, max_count_vectors=max_count_vectors)
        return out if obj.normalization == "scale" else unit * out
    log_w = np.asarray(log_w, dtype=float)
    # v_i - E_w v as sum_j w_j (v_i - v_j): no cancellation where the levels lie far from 0 (they are not shifted)
    diff = v[:, None] - v[None, :]
    if obj.normalization == "shift" and (part == "mean" or obj.is_large_group):
        factor = 1.0 if obj.is_large_group else (obj.group_size - 1) / obj.group_size
        return advantage.signed_part(factor * np.einsum("ij,...j->...i", diff, np.exp(log_w)), part)
    if obj.is_large_group:
        return advantage.signed_part(_large_group_scaled(diff, diff**2, np.exp(log_w), obj.variance_eps,
                                                         obj.std_eps), part)
    G, L = obj.group_size, v.size
    n_vec = n_count_vectors(G, L)
    if L >= 3 and G - 1 > SMALL_TOTAL and _TRUNCATE_BINOMIAL:
        flat = log_w.reshape(-1, L)
        size = min(n_vec, max(window_size(row, G - 1) for row in flat))
    else:
        size = n_vec
    if 4 * size < n_vec or (size < n_vec and n_vec > max_count_vectors):
        # the windows are much smaller than the whole enumeration (large G), or only they fit
        if size > max_count_vectors:
            raise ExactEvaluationTooLarge(
                f"exact P_G sums up to {size:,} count vectors in the window of a policy for G={G} and "
                f"L={L} reward levels, over the limit max_count_vectors={max_count_vectors:,}; use "
                "monte_carlo_preference(...) for an estimate with its standard error, or raise the limit")
        return _multinomial_window_expectations(v, flat, obj, part).reshape(log_w.shape)
    if n_vec > max_count_vectors:
        raise ExactEvaluationTooLarge(
            f"exact P_G needs {n_vec:,} count vectors for G={G} and L={L} reward levels, over the "
            f"limit max_count_vectors={max_count_vectors:,}; use monte_carlo_preference(...) for an "
            "estimate with its standard error, or raise the limit"
        )
    key = (tuple(v.tolist()), G, obj.normalization, obj.std_ddof, obj.std_eps, obj.variance_eps, part)
    flat = log_w.reshape(-1, L)
    if L == 2 and G - 1 > SMALL_TOTAL and _TRUNCATE_BINOMIAL:
        walk = _binomial_walk(*key)

        def block_expectations(block: np.ndarray) -> np.ndarray:
            return _binomial_window_expectations(block, walk)
    else:
        table = _advantage_table(*key)                                            # (L, N)

        def block_expectations(block: np.ndarray) -> np.ndarray:
            return _enumerated_expectations(block, G - 1, table)

    rows = max(1, _BLOCK // n_vec)
    if flat.shape[0] <= rows:
        return block_expectations(flat).reshape(log_w.shape)
    out = np.empty((flat.shape[0], L))
    for start in range(0, flat.shape[0], rows):       # blocks bound memory, not a grid loop
        out[start:start + rows] = block_expectations(flat[start:start + rows])
    return out.reshape(log_w.shape)


def expectations_evaluator(levels: np.ndarray, obj: Objective):
    """``log_w -> level_expectations(levels, log_w, obj)`` with the per-call set-up done once.

    A flow evaluates ``E(w)`` hundreds of times for one question and objective (Figure 8: about 320
    right-hand sides per LSODA run), and for a few classes the set-up (the level standardisation, the
    cached tables' look-ups, the branch choice) costs more than the sum itself. For the group advantage
    with levels in their own unit and scale normalisation, at ``G = inf`` or with ``G - 1 <=
    SMALL_TOTAL`` (the exact enumeration), the returned callable runs the same array operations as
    :func:`level_expectations` on the same arrays, so its values are the same to the bit (tested); every
    other case, and a batch too large for one block, is handed to :func:`level_expectations`.

    Parameters
    ----------
    levels : numpy.ndarray, shape (L,)
        The reward levels ``v_l``.
    obj : Objective

    Returns
    -------
    callable
        ``f(log_w)`` with ``log_w`` of shape ``(..., L)``, returning ``E_l(w)`` of the same shape (``part="mean"``).

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> f = expectations_evaluator(np.array([0.0, 1.0]), Objective(beta=1.0, group_size=2))
    >>> f(np.log([0.8, 0.2])).round(12).tolist()
    [-0.2, 0.8]
    """
    levels = np.asarray(levels, dtype=float)

    def general(log_w):
        return level_expectations(levels, log_w, obj)

    if obj.advantage != "group" or obj.normalization != "scale":
        return general
    v, unit, _, _ = _standardised_levels(tuple(levels.tolist()), obj.normalization, obj.std_eps, obj.variance_eps)
    if unit != 1.0:
        return general
    if obj.is_large_group:
        diff = v[:, None] - v[None, :]
        diff2 = diff**2
        variance_eps, std_eps = obj.variance_eps, obj.std_eps

        def large(log_w):
            return _large_group_scaled(diff, diff2, np.exp(np.asarray(log_w, dtype=float)), variance_eps, std_eps)
        return large
    G, L = obj.group_size, v.size
    n_vec = n_count_vectors(G, L)
    if G - 1 > SMALL_TOTAL or n_vec > MAX_COUNT_VECTORS:
        return general
    table = _advantage_table(tuple(v.tolist()), G, obj.normalization, obj.std_ddof, obj.std_eps,
                             obj.variance_eps, "mean")
    rows = max(1, _BLOCK // n_vec)

    def small(log_w):
        log_w = np.asarray(log_w, dtype=float)
        flat = log_w.reshape(-1, L)
        if flat.shape[0] > rows:
            return general(log_w)
        return _enumerated_expectations(flat, G - 1, table).reshape(log_w.shape)   # level_expectations' block
    return small


def _enumerated_expectations(flat_log_w: np.ndarray, total: int, table: np.ndarray) -> np.ndarray:
    """``E_l(w) = sum_n Multinomial(n; total, w) A_l(n)`` over every count vector ``n``, for ``flat_log_w (B, L)``.

    ``table`` is ``A_l(n)`` (L, N) in C order. The weights are exponentiated in place and summed as
    ``table @ weights``, which reads both arrays row by row: at 5 levels and ``G = 32`` (52,360 count
    vectors) this is memory-bound, and ``weights @ table.T`` (a column sweep of the table) took twice as long.
    :func:`level_expectations` and :func:`expectations_evaluator` both sum through here, so they agree to the bit.
    """
    weights = log_multinomial_weights(flat_log_w, total)                   # (B, N), a fresh array
    np.exp(weights, out=weights)
    return (table @ weights.T).T


def _pairwise_factor(obj: Objective) -> float:
    """Advantage magnitude for G = 2 from a preference matrix: 1 (ddof 0) or 1/sqrt(2) (ddof 1)."""
    if obj.group_size != 2 or obj.normalization != "scale" or obj.std_eps != 0 or obj.variance_eps != 0 \
            or obj.advantage != "group" or obj.filter_ties:
        raise InvalidInputError(
            "a preference-matrix question determines P_G only for group_size=2 with "
            "normalization='scale' and std_eps=variance_eps=0 (then A_1 = sign(r_1 - r_2), up to 1/sqrt(2) for "
            f"ddof=1); got {obj.describe()}. Give rewards or a reward law instead."
        )
    return 1.0 if obj.std_ddof == 0 else 1.0 / math.sqrt(2.0)


def pooled_expectations(q: Question, obj: Objective, log_w: np.ndarray) -> np.ndarray:
    """``E(w)`` in the pooled coordinates of ``q`` (see :class:`Question`), batched over ``log_w``.

    For reward-law questions these are :func:`level_expectations`; for a
    preference matrix ``M`` (``G = 2``) ``E(w) = c (2M - 1) w`` with ``c = 1`` (ddof 0) or
    ``1/sqrt(2)`` (ddof 1).

    Parameters
    ----------
    q : Question
    obj : Objective
    log_w : numpy.ndarray, shape (..., D)
        Log of ``w = pi @ q.membership`` for a batch of policies.

    Returns
    -------
    numpy.ndarray, shape (..., D)
        ``E(w)``; ``P_G(o | pi) = membership[o] @ E(w)``.

    Raises
    ------
    InvalidInputError
        For a preference matrix with anything but ``G = 2``, scale normalisation and no epsilon.
    ExactEvaluationTooLarge
        As :func:`level_expectations`.
    """
    if q.has_reward_law:
        return level_expectations(q.reward_levels, log_w, obj)
    c = _pairwise_factor(obj)
    return c * (np.exp(log_w) @ (2.0 * q.preference_matrix - 1.0).T)


def _safe_log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def reward_preference(q: Question, obj: Objective, pi) -> np.ndarray:
    """Exact ``P_G(o | pi) = E[A_1 | o_1 = o]``, the expected advantage of every output ``o``.

    Exact for any finite reward law and any integer ``G >= 2`` (enumeration over
    reward-level count vectors), for ``G = inf`` (``(E[r|o] - E_pi r)/(sigma_pi + eps)``),
    for shift-only normalisation (``((G-1)/G)(E[r|o] - E_pi r)``), and for ``G = 2``
    from a preference matrix.

    ``P_G`` is that of ``q``'s own rewards: the KL fields of ``obj`` do not enter. With the KL in the
    reward (``kl_placement="reward"``) the trainer normalises the shaped reward ``r - beta value``;
    :func:`grpo_theory.solvers.output_gradient` gives that (``P_G`` of
    :func:`grpo_theory.problem.shaped_question`).

    Parameters
    ----------
    q : Question
        The question (reward law, or a preference matrix for ``G = 2``).
    obj : Objective or mapping
        Group size ``G`` and the normalisation options (``beta`` does not enter).
    pi : array_like, shape (K,)
        The policy the other ``G - 1`` group members are drawn from.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``P_G(o | pi)`` for ``o = 0..K-1``.

    Raises
    ------
    InvalidInputError
        When ``pi`` is not a probability vector with ``K`` entries, or a preference matrix meets an
        objective it does not determine.
    ExactEvaluationTooLarge
        Where the enumeration would be too large (the message gives the size); use
        :func:`monte_carlo_preference`.

    Examples
    --------
    >>> import math
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.2, 0.8], rewards=[1, 0])
    >>> reward_preference(q, Objective(beta=1.0, group_size=2), [0.2, 0.8]).round(12).tolist()
    [0.8, -0.2]
    >>> reward_preference(q, Objective(beta=1.0, group_size=math.inf), [0.2, 0.8]).round(12).tolist()
    [2.0, -0.5]
    """
    q, obj = as_question(q), as_objective(obj)
    pi = validate_probability_vector("pi", pi)
    if pi.size != q.n_outputs:
        raise InvalidInputError(f"pi must have K={q.n_outputs} entries, got {pi.size}")
    R = q.membership
    e = pooled_expectations(q, obj, _safe_log(pi @ R))
    return R @ e


