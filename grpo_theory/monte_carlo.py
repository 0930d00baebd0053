r"""``P_G(o | pi)`` by sampling groups, and the advantages of sampled groups (the note's reward preference model).

For what the exact enumeration of :mod:`grpo_theory.preference` cannot reach (many reward levels at a
large ``G``, or continuous rewards through a sampler), and for checking it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._checks import (OBJECTIVE, QUESTION, arr, checked, function, indices, instance, ndarray, num, registered,
                      seed_or_generator)
from ._validate import integer, plain
from .errors import TheoryWarning
from .problem import InvalidInputError, Objective, Question, as_objective, validate_policy, validate_probability_vector
from .variants import entries

__all__ = ["monte_carlo_preference", "sample_rewards", "sampled_advantages", "MAX_MONTE_CARLO_SAMPLES"]

#: Rewards drawn per chunk (memory), and at most in one call (time: 1-3e7 draws a second measured on one core, rows
#: x groups x G: 100 outputs x 2e4 groups of 64, 1.28e8 draws, 11.8 s of CPU; 3 x 1e7 x 16, 4.8e8, over 75 s of wall;
#: so about 10-30 s at the limit; it was 2e9, several minutes).
_MC_CHUNK = 4_000_000
MAX_MONTE_CARLO_SAMPLES = 300_000_000


@checked(q=registered('Question', none=True), obj=OBJECTIVE, pi=arr(ndim=1), n_groups=num(2, integer=True),
         seed=seed_or_generator, reward_sampler=function(none=True))
def monte_carlo_preference(
    q: Question | None,
    obj: Objective,
    pi,
    *,
    n_groups: int = 20_000,
    seed: int | np.random.Generator | None = 0,
    reward_sampler=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo estimate of ``P_G(o | pi)`` with its standard error.

    For each output ``o``, ``n_groups`` groups with ``o_1 = o`` and ``o_2..o_G ~ pi`` are
    sampled, rewards drawn (from ``q``'s reward law, or from
    ``reward_sampler(outputs, rng) -> rewards`` for continuous rewards), and
    ``A_1`` averaged, ``A_1`` the advantage ``obj.advantage`` forms:

    - ``"group"``: Eq. 2 with ``obj``'s normalisation (:func:`sampled_advantages`);
    - ``"rloo"``: ``A_1 = r_1 - mean_{j != 1} r_j``;
    - ``"reinforce_pp"``: ``A_1 = (r_1 - mean r)/s``, ``s`` the batch std of ``r_i - mean r``, measured on
      another ``n_groups`` groups with every member drawn from ``pi`` (``s^2`` estimates
      ``(G-1)/G sigma^2``); the standard error includes ``s``'s own (delta method). A batch whose rewards
      all tie has ``s = 0`` and whitens to 0, as the trainers do (a warning says so when ``A_1`` was not 0).

    Parameters
    ----------
    q : Question or None
        The question whose reward law is sampled; None when ``reward_sampler`` is given.
    obj : Objective or mapping
        A finite group size ``G`` and the normalisation options.
    pi : array_like, shape (K,)
        The policy the other group members are drawn from.
    n_groups : int, default 20000
        Groups sampled per output (``>= 2``); the standard error falls as ``1/sqrt(n_groups)``.
    seed : int, numpy.random.Generator or None, default 0
        Seed or generator.
    reward_sampler : callable, optional
        ``reward_sampler(outputs, rng) -> rewards``: rewards for an integer array of output indices
        (any shape), for reward laws that are not finite.

    Returns
    -------
    estimate : numpy.ndarray, shape (K,)
        The estimate of ``P_G(o | pi)``.
    stderr : numpy.ndarray, shape (K,)
        Its standard error.

    Raises
    ------
    InvalidInputError
        For ``G = inf`` (exact already), ``advantage="pass_at_k"`` (two reward levels:
        :func:`~grpo_theory.preference.reward_preference` is exact and sums ``G + 1`` count vectors),
        ``n_groups < 2``, an invalid ``pi``, neither a reward law nor a sampler, or more than
        ``MAX_MONTE_CARLO_SAMPLES`` rewards in all (the REINFORCE++ batch included).

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.2, 0.8], rewards=[1, 0])
    >>> est, se = monte_carlo_preference(q, Objective(beta=1.0, group_size=2), [0.2, 0.8], n_groups=4000)
    >>> bool(abs(est[0] - 0.8) < 4 * se[0])           # exact: P_2(a) = pi(b) = 0.8
    True
    >>> est, se = monte_carlo_preference(q, Objective(beta=1.0, group_size=4, advantage="rloo"), [0.2, 0.8],
    ...                                  n_groups=4000)
    >>> bool(abs(est[0] - 0.8) < 4 * se[0])           # RLOO: E[r|a] - mu = 1 - 0.2
    True
    """
    obj = as_objective(obj)
    if obj.is_large_group:
        raise InvalidInputError("Monte Carlo needs a finite group_size; G = inf is exact already")
    whitened = obj.advantage_variant.batch_whitened
    if not (whitened or obj.advantage_variant.sampled is not None):
        sampled = ", ".join(repr(e.name) for e in entries("advantage") if e.batch_whitened or e.sampled is not None)
        raise InvalidInputError(f"monte_carlo_preference samples the advantages {sampled}; got "
                                f"advantage={obj.advantage!r}, whose P_G reward_preference(q, obj, pi) gives exactly")
    n_groups = integer("n_groups", n_groups, low=2)
    pi = validate_probability_vector("pi", pi) if q is None else validate_policy("pi", pi, q.n_outputs)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:                              # NumPy's own errors named no argument
            raise InvalidInputError(f"seed must be an integer >= 0, a numpy Generator or None, got {seed}")
    elif not (seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence))):
        seed = integer("seed", seed, low=0)       # 3.0 is 3; text, bools and fractions are refused by name
    rng = np.random.default_rng(seed)
    K, G = pi.size, obj.group_size
    if q is not None and pi.size != q.n_outputs:
        raise InvalidInputError(f"pi must have K={q.n_outputs} entries, got {pi.size}")
    if reward_sampler is None:
        if q is None or not q.has_reward_law:
            raise InvalidInputError("Monte Carlo needs a question q with a reward law, or a reward_sampler; got "
                                    + ("q = None" if q is None else "a question without one") + " and no reward_sampler")

        def reward_sampler(outputs, rng):
            return sample_rewards(q, outputs, rng)

    rows = K + whitened                             # REINFORCE++: one more row of groups, its batch
    if rows * n_groups * G > MAX_MONTE_CARLO_SAMPLES:
        raise InvalidInputError(
            f"Monte Carlo with n_groups={n_groups:,} groups of G={G:,} for each of K={K} outputs"
            f"{' and its whitening batch' if whitened else ''} draws {rows * n_groups * G:,} rewards, over the "
            f"limit of {MAX_MONTE_CARLO_SAMPLES:,}; use fewer groups (the standard error falls as "
            "1/sqrt(n_groups)) or the exact reward_preference")
    # Groups in chunks of about _MC_CHUNK draws: memory stays bounded whatever G is.
    chunk = max(1, _MC_CHUNK // (rows * G))
    a1, spread = np.empty((K, n_groups)), np.empty(n_groups if whitened else 0)
    for start in range(0, n_groups, chunk):
        n = min(chunk, n_groups - start)
        outputs = np.empty((rows, n, G), dtype=np.int64)
        outputs[:K, :, 0] = np.arange(K)[:, None]
        outputs[:K, :, 1:] = rng.choice(K, size=(K, n, G - 1), p=pi)
        if whitened:                                # the batch: every member drawn from pi
            outputs[K] = rng.choice(K, size=(n, G), p=pi)
        r = _checked_rewards(reward_sampler(outputs, rng), outputs.shape)
        if whitened:                                # r_1 - mean r now; divided by the batch's std below
            centred = r - r.mean(axis=-1, keepdims=True)
            a1[:, start:start + n] = centred[:K, :, 0]
            spread[start:start + n] = np.einsum("ij,ij->i", centred[K], centred[K]) / G
        else:                                       # each group's own advantages, as the registry forms them
            a1[:, start:start + n] = sampled_advantages(r, obj)[..., 0]
    est, se = a1.mean(axis=1), a1.std(axis=1, ddof=1) / math.sqrt(n_groups)
    return _whitened(est, se, spread, n_groups) if whitened else (est, se)


def _whitened(est: np.ndarray, se: np.ndarray, spread: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """REINFORCE++'s estimate ``m/s`` and its standard error from ``m`` (the mean of ``r_1 - mean r``, standard
    error ``se``) and the batch's per-group ``sum_i (r_i - mean r)^2 / G`` (``spread``, mean ``s^2``; the batch
    mean of ``r_i - mean r`` is 0 in every group). Delta method, ``m`` and ``s`` independent:
    ``Var(m/s) = Var(m)/s^2 + (m/s)^2 Var(s^2)/(4 s^4)``."""
    s2 = spread.mean()
    if s2 <= 0:                                     # every batch group tied: the trainers whiten to 0
        if np.any(est != 0):
            warnings.warn(f"REINFORCE++'s whitening batch of {n_groups:,} groups drawn from pi had no reward "
                          "spread (batch std 0), so the estimate is its whitening's 0; where the reward's std "
                          "under pi is not 0 that is not P_G: use more groups, or reward_preference (exact)",
                          TheoryWarning, stacklevel=3)
        return np.zeros_like(est), np.zeros_like(se)
    ratio = est / math.sqrt(s2)
    var_s2 = spread.var(ddof=1) / n_groups
    return ratio, np.sqrt(se ** 2 / s2 + ratio ** 2 * var_s2 / (4 * s2 ** 2))


def _checked_rewards(r, shape) -> np.ndarray:
    """A reward sampler's output as floats of ``shape``, every one finite (a NaN would make the group's
    advantages NaN, which the tie test reads as a tie: an estimate 0 with standard error 0)."""
    try:
        arr = np.asarray(r, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"reward_sampler must return numbers, got {type(r).__name__}") from None
    if arr.shape != shape:
        raise InvalidInputError(f"reward_sampler must return one reward per output, shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)].ravel()[0]
        raise InvalidInputError(f"reward_sampler returned {plain(float(bad))} for {int((~np.isfinite(arr)).sum())} "
                                f"of {arr.size} draws; rewards must be finite numbers")
    return arr


@checked(q=QUESTION, outputs=indices, rng=instance(np.random.Generator, 'a numpy.random.Generator'))
def sample_rewards(q: Question, outputs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One reward per entry of ``outputs`` (output indices), drawn from ``q``'s reward law.

    Deterministic rewards are a lookup. Otherwise each draw inverts its output's CDF in one
    ``searchsorted`` over the rows of CDFs laid end to end (row ``o`` shifted by ``o``), with no
    ``(..., L)`` temporary.

    Parameters
    ----------
    q : Question
        A question with a reward law.
    outputs : numpy.ndarray of int
        Output indices, any shape.
    rng : numpy.random.Generator
        The generator the rewards are drawn with.

    Returns
    -------
    numpy.ndarray
        A reward per entry of ``outputs``, same shape.
    """
    outputs = np.asarray(outputs)                      # a tuple or a scalar: indexed as the array it is
    if outputs.size and outputs.max() >= q.n_outputs:
        raise InvalidInputError(f"outputs must be output indices in [0, {q.n_outputs - 1}] (K={q.n_outputs}), got "
                                f"{int(outputs.max())}")
    if q.is_deterministic:
        return q.expected_reward[outputs]
    L = q.reward_levels.size
    cum = np.cumsum(q.reward_probs, axis=1)
    cum[:, -1] = 1.0                                   # rows sum to 1 up to rounding
    shifted = (cum + np.arange(q.n_outputs)[:, None]).ravel()
    u = rng.random(outputs.shape) + outputs
    idx = np.searchsorted(shifted, u, side="right") - outputs * L
    return q.reward_levels[np.minimum(idx, L - 1)]


@checked(r=ndarray(finite=True), obj=OBJECTIVE)
def sampled_advantages(r: np.ndarray, obj: Objective) -> np.ndarray:
    """Advantages of sampled groups as ``obj.advantage`` forms them: rewards ``r`` (..., G) -> (..., G).

    The registry entry's ``sampled`` form: Eq. 2 and its options for ``"group"``
    (``_group_advantages``), ``r_i`` minus the mean of the other ``G - 1`` rewards for ``"rloo"``
    (``_leave_one_out_advantages``).

    Parameters
    ----------
    r : numpy.ndarray, shape (..., G)
        Rewards of sampled groups (not modified).
    obj : Objective
        The advantage estimator and, for Eq. 2, ``normalization``, ``std_ddof``, ``std_eps``, ``variance_eps``.

    Returns
    -------
    numpy.ndarray, shape (..., G)
        ``A_i`` of each member.

    Raises
    ------
    InvalidInputError
        For an advantage that one group's rewards do not determine (REINFORCE++ whitens over a batch:
        :func:`monte_carlo_preference` samples its batch) or that has no numpy form (pass@k).

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> sampled_advantages(np.array([[1.0, 0.0], [1.0, 1.0]]), Objective(beta=1.0)).tolist()
    [[1.0, -1.0], [0.0, 0.0]]
    >>> sampled_advantages(np.array([[1.0, 0.0, 0.0]]), Objective(beta=1.0, advantage="rloo", group_size=3)).tolist()
    [[1.0, -0.5, -0.5]]
    """
    if r.ndim == 0:
        raise InvalidInputError(f"r must hold groups of rewards, shape (..., G), got the single number {r.item()!r}")
    if not obj.is_large_group and r.shape[-1] != obj.group_size:        # a group is G members, the objective's G
        raise InvalidInputError(f"r must hold groups of G = {obj.group_size} rewards (the objective's group size) on "
                                f"its last axis, got shape {r.shape} ({r.shape[-1]} per group)")
    entry = obj.advantage_variant
    if entry.sampled is None:
        why = ("it is whitened over a batch of groups, which one group's rewards do not determine "
               "(monte_carlo_preference samples its batch)" if entry.batch_whitened else "it has no sampled form")
        raise InvalidInputError(f"sampled advantages of advantage={obj.advantage!r}: {why}; the exact "
                                "reward_preference / answer_weights take it")
    return entry.hook("sampled")(r, obj)


def _group_advantages(r: np.ndarray, obj: Objective) -> np.ndarray:
    """Eq. 2 of sampled groups: ``A_i = (r_i - mean r)/(std r + std_eps)`` (scale) or ``r_i - mean r`` (shift).

    Ties are detected exactly (a floating-point std of equal rewards need not be 0): with both epsilons 0 a
    tied group gets advantages 0. ``r`` (..., G) is not modified.
    """
    centred = r - r.mean(axis=-1, keepdims=True)
    if not obj.normalization_variant.scales:
        return centred
    tie = (r == r[..., :1]).all(axis=-1, keepdims=True)
    centred[np.broadcast_to(tie, centred.shape)] = 0.0     # exact zeros: no rounding residue
    var = np.einsum("...i,...i->...", centred, centred)[..., None] / (r.shape[-1] - obj.std_ddof)
    denom = np.sqrt(var + obj.variance_eps) + obj.std_eps
    adv = np.divide(centred, denom, out=np.zeros_like(centred), where=denom > 0)
    # Squares of deviations near 1e200 overflow and near 1e-170 underflow (rewards [1e300, -1e300] gave [0, -0]):
    # there, in units of the group's largest deviation s, as the trainer's torch form always works (the advantage is
    # invariant to r -> r/s with std_eps divided by s and variance_eps by s^2). Other groups keep the plain bits.
    lost = ~tie & (np.isinf(var) | ~(var >= np.finfo(float).tiny))      # per group: cheap on every call
    if lost.any():
        lost &= np.isfinite(centred).all(axis=-1, keepdims=True)           # a non-finite reward stays as it was
        s = np.abs(centred).max(axis=-1, keepdims=True)
        s = np.where(lost & (s > 0), s, 1.0)
        unit = centred / s
        var_u = np.einsum("...i,...i->...", unit, unit)[..., None] / (r.shape[-1] - obj.std_ddof)
        with np.errstate(over="ignore"):            # an epsilon that dwarfs the deviations: the advantage is ~0
            denom_u = np.sqrt(var_u + obj.variance_eps / s / s) + obj.std_eps / s
        adv_u = np.divide(unit, denom_u, out=np.zeros_like(unit), where=denom_u > 0)
        adv = np.where(lost, adv_u, adv)
    return adv


def _leave_one_out_advantages(r: np.ndarray, obj: Objective) -> np.ndarray:
    """RLOO of sampled groups: ``A_i = r_i - (sum_{j != i} r_j)/(G - 1)``; ``r`` (..., G) is not modified."""
    G = r.shape[-1]
    return r - (r.sum(axis=-1, keepdims=True) - r) / (G - 1)
