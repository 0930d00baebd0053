r"""``P_G(o | pi)`` by sampling groups, and the advantages of sampled groups (the note's reward preference model).

For what the exact enumeration of :mod:`grpo_theory.preference` cannot reach (many reward levels at a
large ``G``, or continuous rewards through a sampler), and for checking it.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import (OBJECTIVE, QUESTION, arr, checked, function, indices, instance, ndarray, num, registered,
                      seed_or_generator)
from ._validate import integer, plain
from .problem import InvalidInputError, Objective, Question, as_objective, validate_probability_vector

__all__ = ["monte_carlo_preference", "sample_rewards", "sampled_advantages", "MAX_MONTE_CARLO_SAMPLES"]

#: Rewards drawn per chunk (memory), and at most in one call (time: ~1e8/s).
_MC_CHUNK = 4_000_000
MAX_MONTE_CARLO_SAMPLES = 2_000_000_000


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
    ``A_1`` averaged.

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
        For ``G = inf`` (exact already), an ``advantage`` other than ``"group"`` (RLOO, REINFORCE++ and
        pass@k: :func:`~grpo_theory.preference.reward_preference` is exact), ``n_groups < 2``, an invalid
        ``pi``, neither a reward law nor a sampler, or more than ``MAX_MONTE_CARLO_SAMPLES`` rewards in all.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.2, 0.8], rewards=[1, 0])
    >>> est, se = monte_carlo_preference(q, Objective(beta=1.0, group_size=2), [0.2, 0.8], n_groups=4000)
    >>> bool(abs(est[0] - 0.8) < 4 * se[0])           # exact: P_2(a) = pi(b) = 0.8
    True
    """
    obj = as_objective(obj)
    if obj.is_large_group:
        raise InvalidInputError("Monte Carlo needs a finite group_size; G = inf is exact already")
    if not obj.advantage_variant.is_note_advantage:
        # the sampler draws Eq. 2's group advantage: another estimator's P_G would be estimated as the group's
        raise InvalidInputError(f"monte_carlo_preference samples Eq. 2's group advantage (advantage='group'); got "
                                f"advantage={obj.advantage!r}, whose P_G reward_preference(q, obj, pi) gives exactly")
    n_groups = integer("n_groups", n_groups, low=2)
    pi = validate_probability_vector("pi", pi)
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

    if K * n_groups * G > MAX_MONTE_CARLO_SAMPLES:
        raise InvalidInputError(
            f"Monte Carlo with n_groups={n_groups:,} groups of G={G:,} for each of K={K} outputs draws "
            f"{K * n_groups * G:,} rewards, over the limit of {MAX_MONTE_CARLO_SAMPLES:,}; use fewer groups "
            "(the standard error falls as 1/sqrt(n_groups)) or the exact reward_preference")
    # Groups in chunks of about _MC_CHUNK draws: memory stays bounded whatever G is.
    chunk = max(1, _MC_CHUNK // (K * G))
    a1 = np.empty((K, n_groups))
    for start in range(0, n_groups, chunk):
        n = min(chunk, n_groups - start)
        outputs = np.empty((K, n, G), dtype=np.int64)
        outputs[:, :, 0] = np.arange(K)[:, None]
        outputs[:, :, 1:] = rng.choice(K, size=(K, n, G - 1), p=pi)
        r = _checked_rewards(reward_sampler(outputs, rng), outputs.shape)
        a1[:, start:start + n] = sampled_advantages(r, obj)[..., 0]
    return a1.mean(axis=1), a1.std(axis=1, ddof=1) / math.sqrt(n_groups)


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
    if q.is_deterministic:
        return q.expected_reward[outputs]
    L = q.reward_levels.size
    cum = np.cumsum(q.reward_probs, axis=1)
    cum[:, -1] = 1.0                                   # rows sum to 1 up to rounding
    shifted = (cum + np.arange(q.n_outputs)[:, None]).ravel()
    u = rng.random(outputs.shape) + outputs
    idx = np.searchsorted(shifted, u, side="right") - outputs * L
    return q.reward_levels[np.minimum(idx, L - 1)]


@checked(r=ndarray(), obj=OBJECTIVE)
def sampled_advantages(r: np.ndarray, obj: Objective) -> np.ndarray:
    """Advantages (Eq. 2 and its options) of sampled groups: rewards ``r`` (..., G) -> (..., G).

    Ties are detected exactly (a floating-point std of equal rewards need not be 0): with
    both epsilons 0 a tied group gets advantages 0.

    Parameters
    ----------
    r : numpy.ndarray, shape (..., G)
        Rewards of sampled groups (not modified).
    obj : Objective
        Normalisation, ``std_ddof``, ``std_eps``, ``variance_eps``.

    Returns
    -------
    numpy.ndarray, shape (..., G)
        ``A_i = (r_i - mean r)/(std r + std_eps)`` (scale) or ``r_i - mean r`` (shift).

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> sampled_advantages(np.array([[1.0, 0.0], [1.0, 1.0]]), Objective(beta=1.0)).tolist()
    [[1.0, -1.0], [0.0, 0.0]]
    """
    centred = r - r.mean(axis=-1, keepdims=True)
    if not obj.normalization_variant.scales:
        return centred
    tie = (r == r[..., :1]).all(axis=-1, keepdims=True)
    centred[np.broadcast_to(tie, centred.shape)] = 0.0     # exact zeros: no rounding residue
    var = np.einsum("...i,...i->...", centred, centred)[..., None] / (r.shape[-1] - obj.std_ddof)
    denom = np.sqrt(var + obj.variance_eps) + obj.std_eps
    return np.divide(centred, denom, out=np.zeros_like(centred), where=denom > 0)
