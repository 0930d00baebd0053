r"""The expected group-relative preference ``P_G(o | pi)`` (the note's reward preference model).

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
import functools
import math
import sys
from functools import lru_cache

import numpy as np

from ._laws import check_law, from_outside, in_level_order, log_law
from ._checks import OBJECTIVE, QUESTION, checked, levels_and_weights, num, numbers, one_of, whole
from . import advantage
from ._multinomial import SMALL_TOTAL, window_size
from .errors import ExactEvaluationTooLarge
from .monte_carlo import monte_carlo_preference, sample_rewards, sampled_advantages
from .preference_sums import (
    advantage_table,
    binomial_walk,
    binomial_window_expectations,
    group_enumerated_expectations,
    multinomial_window_expectations,
)
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


@checked(group_size=whole(1, 2**53), n_levels=whole(1, 10**6))
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


#: Two levels: sum, for each policy, only the binomial weights within mean +- (12 sd + 40). By
#: Bernstein's inequality P(|k - mu| >= t) <= 2 exp(-t^2 / (2 (sd^2 + t/3))) the rest is below
#: 1e-25 relative for every sd (exponent >= 60 at sd = 0, -> 72 as sd grows), also in the
#: Poisson-like regime of a tiny sd. Tests compare against the full sum.
_TRUNCATE_BINOMIAL = True


@checked(n_levels_span=num(0, finite=False), obj=OBJECTIVE)
def max_abs_advantage(n_levels_span: float, obj: Objective) -> float:
    """An upper bound on ``|A_i|`` for rewards spanning ``n_levels_span = v_max - v_min``.

    The advantage estimator's registry entry gives it (:mod:`grpo_theory.variants`). The group advantage with
    scale normalisation: ``|r_i - mean| / std <= sqrt(G-1)`` (ddof 0) and ``(G-1)/sqrt(G)`` (ddof 1); shift:
    the span. For ``G = inf`` with scale, ``span/std_eps`` or ``span/sqrt(variance_eps)`` when an epsilon is
    set, infinite otherwise. RLOO: the span; REINFORCE++: infinite (whitened by the policy's own std);
    pass@k: the largest entry of its table (infinite at ``G = inf``).

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
    return obj.advantage_variant.bound(n_levels_span, obj)     # each estimator's own (grpo_theory.variants)


@lru_cache(maxsize=256)
def _standardised_levels(levels: tuple, scales: bool, std_eps: float,
                         variance_eps: float) -> tuple[np.ndarray, float, float, float]:
    """Levels divided by a power of two ``c`` (the unit) bringing their span into ``[1, 2)``, and the epsilons in
    that unit.

    Under ``r -> r / c`` the scale-normalised advantage is unchanged when ``std_eps -> std_eps / c`` and
    ``variance_eps -> variance_eps / c^2``, and the shift-only advantage is divided by ``c``. Levels whose span
    is within a factor 2**20 of 1, and no larger than 2**20, are used as given (unit 1), so ordinary inputs are
    untouched.

    Only a power of two, and no shift: dividing by it is exact, so every difference ``v_i - v_j`` (all the
    advantages use, see :func:`advantages_for_counts`) keeps its full relative precision. A shift onto
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
    if not scales and not math.isfinite(span):
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
    # inf unit (scale normalisation only): the epsilons vanish against the span. A tiny unit (a span of
    # 5e-324) can make them overflow: capped at the largest double, which leaves every advantage ~0 (as exact:
    # a span below 1e-300 against an epsilon of 1e-4), instead of an epsilon of inf that Objective refuses.
    big = sys.float_info.max
    veps = 0.0 if variance_eps == 0.0 else min(variance_eps / unit / unit, big)
    return u, unit, min(std_eps / unit, big), veps


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


@checked(levels=numbers(ndim=1, nonempty=True, finite=True), log_w=log_law(), obj=OBJECTIVE,
         part=one_of('mean', 'positive', 'negative'), max_count_vectors=num(1, integer=True))
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
        Distinct reward levels ``v_l``, in any order (the estimator's hook gets them increasing; the result follows
        the order given).
    log_w : numpy.ndarray, shape (..., L)
        Log-probabilities of the levels under ``pi`` (``-inf`` allowed; ``logsumexp = 0`` along the last axis
        within :data:`~grpo_theory._laws.LAW_TOL`). Log space keeps the
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
    InvalidInputError
        A ``log_w`` that is not a log-law (NaN, ``+inf``, or ``sum exp(log_w)`` off 1), named with its row.
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
    levels_and_weights(levels, log_w)
    hook = obj.advantage_variant.hook("expectations")
    # distinct levels in any order reach the hook increasing; a level given twice is refused there, by name
    return in_level_order(levels, log_w, lambda v, lw: hook(v, lw, obj, part=part, max_count_vectors=max_count_vectors),
                          name="levels")


#: What an ExactEvaluationTooLarge advises (stationary_policy and stationary_points take no count limit: the large-G
#: limit is the way out there; only a direct call of level_expectations takes max_count_vectors).
_TOO_LARGE_ADVICE = ("; use group_size=math.inf (the large-G limit, exact: the stationary points approach it as "
                     "O(1/G)) or a smaller G; monte_carlo_preference(...) estimates P_G with its standard error; a "
                     "direct call of level_expectations takes a larger max_count_vectors")


@checked(levels=numbers(ndim=1, nonempty=True, finite=True), log_w=numbers(), obj=OBJECTIVE,
         part=one_of('mean', 'positive', 'negative'), max_count_vectors=num(1, integer=True))
def _group_arguments(levels, log_w, obj, *, part="mean", max_count_vectors=MAX_COUNT_VECTORS) -> None:
    """The argument rules of :func:`group_level_expectations` given from outside the package (they check only)."""


def group_level_expectations(levels: np.ndarray, log_w: np.ndarray, obj: Objective, *, part: str = "mean",
                             max_count_vectors: int = MAX_COUNT_VECTORS) -> np.ndarray:
    """:func:`level_expectations` of the group advantage (Eq. 2 with ``normalization``): its registry entry's
    ``expectations``. Returns and raises as :func:`level_expectations`.

    Parameters
    ----------
    levels : numpy.ndarray, shape (L,)
        As for :func:`level_expectations`.
    log_w : numpy.ndarray, shape (..., L)
        Likewise.
    obj : Objective
        Likewise.
    part : {"mean", "positive", "negative"}
        Likewise.
    max_count_vectors : int
        Likewise.
    """
    if from_outside():                  # level_expectations' rules; the registry's own calls are checked there
        _group_arguments(levels, log_w, obj, part=part, max_count_vectors=max_count_vectors)
        levels_and_weights(levels, log_w)
        check_law("log_w", log_w, log=True)
    v, unit, std_eps, variance_eps = _standardised_levels(tuple(np.asarray(levels, dtype=float).tolist()),
                                                          obj.normalization_variant.scales, obj.std_eps,
                                                          obj.variance_eps)
    if unit != 1.0:
        # P_G in units of the reward span: scale normalisation is invariant to it (the epsilons
        # are rescaled with it), shift-only is linear in it. Rewards like [1e154, 0] would
        # overflow the variance otherwise, and tiny spans like [1e-200, 0] underflow it.
        obj = dataclasses.replace(obj, std_eps=std_eps, variance_eps=variance_eps)
        out = group_level_expectations(v, log_w, obj, part=part, max_count_vectors=max_count_vectors)
        return out if obj.normalization_variant.scales else unit * out
    log_w = np.asarray(log_w, dtype=float)
    # v_i - E_w v as sum_j w_j (v_i - v_j): no cancellation where the levels lie far from 0 (they are not shifted)
    diff = v[:, None] - v[None, :]
    if not obj.normalization_variant.scales and (part == "mean" or obj.is_large_group):
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
                f"L={L} reward levels, over the limit max_count_vectors={max_count_vectors:,}{_TOO_LARGE_ADVICE}")
        return multinomial_window_expectations(v, flat, obj, part).reshape(log_w.shape)
    if n_vec > max_count_vectors:
        raise ExactEvaluationTooLarge(
            f"exact P_G needs {n_vec:,} count vectors for G={G} and L={L} reward levels, over the "
            f"limit max_count_vectors={max_count_vectors:,}{_TOO_LARGE_ADVICE}")
    key = (tuple(v.tolist()), G, obj.normalization, obj.std_ddof, obj.std_eps, obj.variance_eps, part)
    flat = log_w.reshape(-1, L)
    if L == 2 and G - 1 > SMALL_TOTAL and _TRUNCATE_BINOMIAL:
        walk = binomial_walk(*key)

        def block_expectations(block: np.ndarray) -> np.ndarray:
            return binomial_window_expectations(block, walk)
    else:
        table = advantage_table(*key)                                            # (L, N)

        def block_expectations(block: np.ndarray) -> np.ndarray:
            return group_enumerated_expectations(block, G - 1, table)

    rows = max(1, _BLOCK // n_vec)
    if flat.shape[0] <= rows:
        return block_expectations(flat).reshape(log_w.shape)
    out = np.empty((flat.shape[0], L))
    for start in range(0, flat.shape[0], rows):       # blocks bound memory, not a grid loop
        out[start:start + rows] = block_expectations(flat[start:start + rows])
    return out.reshape(log_w.shape)


@checked(levels=numbers(ndim=1, nonempty=True, finite=True), obj=OBJECTIVE)
def expectations_evaluator(levels: np.ndarray, obj: Objective):
    """``log_w -> level_expectations(levels, log_w, obj)`` with the per-call set-up done once.

    A flow evaluates ``E(w)`` hundreds of times for one question and objective (Figure 8: about 320
    right-hand sides per LSODA run), and for a few classes the set-up (the level standardisation, the
    cached tables' look-ups, the branch choice) costs more than the sum itself. For the group advantage
    with levels in their own unit and scale normalisation, at ``G = inf``, with ``G - 1 <= SMALL_TOTAL``
    (the exact enumeration), or with two levels above it (the binomial window about the mode), the returned
    callable runs the same array operations as :func:`level_expectations` on the same arrays, so its values
    are the same to the bit (tested); every other case, and a batch too large for one block, is handed to
    :func:`level_expectations`.

    Parameters
    ----------
    levels : numpy.ndarray, shape (L,)
        The reward levels ``v_l``.
    obj : Objective
        The objective: ``G``, the normalisation options and the advantage estimator.

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

    if not obj.advantage_variant.is_note_advantage or not obj.normalization_variant.scales:
        return general
    v, unit, _, _ = _standardised_levels(tuple(levels.tolist()), True, obj.std_eps, obj.variance_eps)
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
    if n_vec > MAX_COUNT_VECTORS:
        return general
    if G - 1 > SMALL_TOTAL:
        if L != 2:
            return general
        walk = binomial_walk(tuple(v.tolist()), G, obj.normalization, obj.std_ddof, obj.std_eps, obj.variance_eps,
                             "mean")
        rows = max(1, _BLOCK // n_vec)

        def binary(log_w):
            log_w = np.asarray(log_w, dtype=float)
            if log_w.shape[-1:] != (2,) or not _TRUNCATE_BINOMIAL:
                return general(log_w)
            flat = log_w.reshape(-1, 2)
            if flat.shape[0] > rows:
                return general(log_w)
            return binomial_window_expectations(flat, walk).reshape(log_w.shape)     # level_expectations' block
        return binary
    table = advantage_table(tuple(v.tolist()), G, obj.normalization, obj.std_ddof, obj.std_eps,
                             obj.variance_eps, "mean")
    rows = max(1, _BLOCK // n_vec)

    def small(log_w):
        log_w = np.asarray(log_w, dtype=float)
        flat = log_w.reshape(-1, L)
        if flat.shape[0] > rows:
            return general(log_w)
        return group_enumerated_expectations(flat, G - 1, table).reshape(log_w.shape)   # level_expectations' block
    return small


def _pairwise_factor(obj: Objective) -> float:
    """Advantage magnitude for G = 2 from a preference matrix: 1 (ddof 0) or 1/sqrt(2) (ddof 1)."""
    if obj.group_size != 2 or not obj.normalization_variant.scales or obj.std_eps != 0 or obj.variance_eps != 0 \
            or not obj.advantage_variant.is_note_advantage or obj.filter_ties:
        raise InvalidInputError(
            "a preference-matrix question determines P_G only for group_size=2 with "
            "normalization='scale' and std_eps=variance_eps=0 (then A_1 = sign(r_1 - r_2), up to 1/sqrt(2) for "
            f"ddof=1); got {obj.describe()}. Give rewards or a reward law instead."
        )
    return 1.0 if obj.std_ddof == 0 else 1.0 / math.sqrt(2.0)


@checked(q=QUESTION, obj=OBJECTIVE, log_w=log_law())
def pooled_expectations(q: Question, obj: Objective, log_w: np.ndarray) -> np.ndarray:
    """``E(w)`` in the pooled coordinates of ``q`` (see :class:`Question`), batched over ``log_w``.

    For reward-law questions these are :func:`level_expectations`; for a
    preference matrix ``M`` (``G = 2``) ``E(w) = c (2M - 1) w`` with ``c = 1`` (ddof 0) or
    ``1/sqrt(2)`` (ddof 1).

    Parameters
    ----------
    q : Question
        The question; its ``membership`` pools the outputs into reward classes.
    obj : Objective
        The objective: ``G``, the normalisation options and the advantage estimator.
    log_w : numpy.ndarray, shape (..., D)
        Log of ``w = pi @ q.membership`` for a batch of policies (a log-law along the last axis: ``-inf``
        allowed, ``logsumexp = 0`` within :data:`~grpo_theory._laws.LAW_TOL`).

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


@checked(q=QUESTION, obj=OBJECTIVE)
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
    return _pooled_preference(q, pi, lambda log_w: pooled_expectations(q, obj, log_w))


def _pooled_preference(q: Question, pi, expectations) -> np.ndarray:
    """``P_G = R E(log(pi R))`` (``R`` the membership) with ``E`` = ``expectations(log_w)``, after ``pi``'s check."""
    pi = validate_probability_vector("pi", pi)
    if pi.size != q.n_outputs:
        raise InvalidInputError(f"pi must have K={q.n_outputs} entries, got {pi.size}")
    R = q.membership
    e = expectations(_safe_log(pi @ R))
    return R @ e


@checked(q=QUESTION, obj=OBJECTIVE)
def preference_evaluator(q: Question, obj: Objective):
    """``pi -> reward_preference(q, obj, pi)`` with the per-call set-up done once, for a flow's hundreds of calls.

    ``E(w)`` comes from :func:`expectations_evaluator` (its values are :func:`level_expectations`' to the bit), the
    rest is :func:`reward_preference`'s own operations (``pi``'s check included), so ``P_G`` is the same to the bit.
    A preference matrix is handed to :func:`reward_preference`.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective: ``G``, the normalisation options and the advantage estimator.

    Returns
    -------
    callable
        ``f(pi)``, ``pi`` of shape (K,), returning ``P_G(o | pi)`` for every output, shape (K,).

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q, obj = Question([0.2, 0.8], rewards=[1, 0]), Objective(beta=1.0, group_size=2)
    >>> preference_evaluator(q, obj)([0.2, 0.8]).round(12).tolist()
    [0.8, -0.2]
    """
    if not q.has_reward_law:
        return lambda pi: reward_preference(q, obj, pi)
    return functools.partial(_pooled_preference, q, expectations=expectations_evaluator(q.reward_levels, obj))


