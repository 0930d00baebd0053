r"""The loss type's token weights per answer: ``P^w(o) = E[w A_1 | o_1 = o]`` and ``W(o) = E[w | o_1 = o]``.

The weights ``w`` of each aggregation (``answer_mean``, ``token_sum``, ``batch_token_mean``) and the
token-level gradient they enter are defined in :mod:`grpo_theory.solvers.tree` (its module doc):
exactly here (:func:`answer_weights`) or by sampling (:func:`monte_carlo_answer_weights`). A new
aggregation gets its weight here.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._checks import MAX_STEPS, OBJECTIVE, QUESTION, arr, checked, num, seed_or_generator
from .. import advantage
from .._multinomial import count_vectors, log_multinomial_weights
from ..errors import ExactEvaluationTooLarge, InvalidInputError
from ..monte_carlo import sample_rewards, sampled_advantages
from ..preference import MAX_COUNT_VECTORS, n_count_vectors, reward_preference
from ..preference_sums import advantages_for_counts
from ..problem import Objective, Question, validate_probability_vector

__all__ = ["answer_weights", "monte_carlo_answer_weights"]


@lru_cache(maxsize=32)
def _batch_tables(levels: tuple, lens: tuple, G: int, normalization: str, ddof: int, eps: float,
                  variance_eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Per count vector of the ``G - 1`` others over (level, length) categories: their token count,
    and member 1's advantage for each of its levels ``(L, N)`` (cached: they do not depend on pi)."""
    L, n_lens = len(levels), len(lens)
    counts = count_vectors(G - 1, L * n_lens).astype(float).reshape(-1, L, n_lens)
    other_tokens = counts.sum(axis=1) @ np.asarray(lens, dtype=float)
    adv = advantages_for_counts(np.asarray(levels), counts.sum(axis=2), G, normalization, ddof, eps,
                                 variance_eps, "mean")
    for a in (other_tokens, adv):
        a.setflags(write=False)
    return other_tokens, adv


def _batch_weights(q: Question, obj: Objective, pi: np.ndarray, lengths: np.ndarray,
                   max_count_vectors: int = MAX_COUNT_VECTORS) -> tuple[np.ndarray, np.ndarray]:
    """``P^w`` and ``W`` for ``w = B G / T`` (a batch of ``B`` groups of this question), exactly.

    Enumerates the other ``G - 1`` members of the group by joint (reward level, length) category,
    and the token count of the other ``B - 1`` groups by convolving the length law.
    """
    G, B = obj.group_size, obj.groups_per_batch
    levels, R = q.reward_levels, q.reward_probs
    lens = np.unique(lengths)
    J = levels.size * lens.size
    n_vec = n_count_vectors(G, J)
    if n_vec > max_count_vectors:
        raise ExactEvaluationTooLarge(
            f"the batch-normalised token-level weights need {n_vec:,} count vectors over {levels.size} reward "
            f"levels x {lens.size} answer lengths at G={G}, over max_count_vectors={max_count_vectors:,}; "
            "use groups_per_batch=math.inf (a large batch) or fewer lengths/levels")
    length_of = np.searchsorted(lens, lengths)                               # (K,) length category
    joint = np.zeros((q.n_outputs, levels.size, lens.size))
    joint[np.arange(q.n_outputs), :, length_of] = R                         # P(level, length | o)
    joint = joint.reshape(q.n_outputs, J)
    w_cat = pi @ joint
    with np.errstate(divide="ignore"):
        weights = np.exp(log_multinomial_weights(np.log(w_cat), G - 1))    # (N,)
    other_tokens, adv = _batch_tables(tuple(levels.tolist()), tuple(lens.tolist()), G, obj.normalization,
                                      obj.std_ddof, obj.std_eps, obj.variance_eps)
    # token count of the other B - 1 groups: the length law convolved (B - 1) G times
    rest = np.ones(1)
    length_law = np.zeros(int(lens.max()) + 1)
    np.add.at(length_law, lengths, pi)
    for _ in range(int((B - 1) * G)):
        rest = np.convolve(rest, length_law)
    support = np.flatnonzero(rest > 0)
    scale = B * G

    def h(t: np.ndarray) -> np.ndarray:                                     # E[B G / (t + T_rest)]
        return (rest[support] / (t[..., None] + support)).sum(axis=-1) * scale

    # member 1's own length enters only through T: one pass per distinct length, not per answer
    W_by_length = np.empty(lens.size)
    Pw_by_length = np.empty((lens.size, levels.size))
    for j, n in enumerate(lens):
        hn = h(n + other_tokens)                                            # (N,)
        W_by_length[j] = weights @ hn
        Pw_by_length[j] = adv @ (weights * hn)
    W = W_by_length[length_of]
    Pw = np.einsum("kl,kl->k", R, Pw_by_length[length_of])
    return Pw, W


@checked(q=QUESTION, obj=OBJECTIVE, pi=arr(ndim=1))
def answer_weights(q: Question, obj: Objective, pi) -> tuple[np.ndarray, np.ndarray]:
    """``(P^w(o), W(o))`` for every answer (see the module doc): what the aggregation makes of P_G.

    Parameters
    ----------
    q : Question
        A question with a reward law (its ``answers`` give the lengths; none: one token each).
    obj : Objective
        The loss type (``obj.aggregation``), group size and normalisation.
    pi : array_like, shape (K,)
        The policy.

    Returns
    -------
    Pw : numpy.ndarray, shape (K,)
        ``P^w(o) = E[w A_1 | o_1 = o]``.
    W : numpy.ndarray, shape (K,)
        ``W(o) = E[w | o_1 = o]``.

    Raises
    ------
    ExactEvaluationTooLarge
        When a batch-normalised loss type needs too many count vectors (see
        :func:`monte_carlo_answer_weights`).

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.5, 0.5], rewards=[1, 0], answers=["AB", "C"])
    >>> Pw, W = answer_weights(q, Objective(beta=0.1, level="token", loss_type="grpo"), [0.5, 0.5])
    >>> Pw.tolist(), W.tolist()                # answer_mean: P_2(o)/|o|, with P_2 = (0.5, -0.5)
    ([0.25, -0.5], [0.5, 1.0])
    """
    pi = np.asarray(pi, dtype=float)
    lengths = np.ones(q.n_outputs, dtype=int) if q.answers is None else np.array([len(a) for a in q.answers])
    kind = obj.aggregation_variant
    if kind.batch_normalised and not obj.is_large_group:
        return _batch_weights(q, obj, pi, lengths)
    P = reward_preference(q, obj, pi)
    W = 1.0 / lengths if kind.answer_mean else np.ones(q.n_outputs)   # token_sum, or a constant normaliser
    Pw = P * W
    if obj.filter_ties:                 # a tied group's penalty terms are dropped (grpo_theory.advantage)
        with np.errstate(divide="ignore"):
            log_w = np.log(pi @ q.membership)
        W = W * advantage.tie_free_probability(q.membership, log_w, obj.group_size)
    return Pw, W


@checked(q=QUESTION, obj=OBJECTIVE, pi=arr(ndim=1), n_samples=num(2, MAX_STEPS, integer=True), seed=seed_or_generator)
def monte_carlo_answer_weights(q: Question, obj: Objective, pi, *, n_samples: int = 20_000,
                               seed: int | np.random.Generator | None = 0
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Monte Carlo ``(P^w, W)`` with their standard errors ``(se_P^w, se_W)``, per answer.

    For where :func:`answer_weights` is too large to enumerate (``ExactEvaluationTooLarge``): for each
    answer ``o`` as member 1, ``n_samples`` batches of ``B`` groups are drawn (the rest of its group and
    ``B - 1`` further groups from ``pi``), with the loss type's weight ``w`` of member 1.

    Parameters
    ----------
    q : Question
        A question with a reward law.
    obj : Objective
        A finite group size, the loss type and ``groups_per_batch`` (``B``).
    pi : array_like, shape (K,)
        The policy.
    n_samples : int, default 20000
        Batches per answer, at least 2 (the standard error needs two).
    seed : int, numpy.random.Generator or None, default 0
        Seed or generator of the sampled batches.

    Returns
    -------
    Pw : numpy.ndarray, shape (K,)
        The estimate of ``P^w(o) = E[w A_1 | o_1 = o]``.
    W : numpy.ndarray, shape (K,)
        The estimate of ``W(o) = E[w | o_1 = o]``.
    se_Pw : numpy.ndarray, shape (K,)
        The standard error of ``Pw``.
    se_W : numpy.ndarray, shape (K,)
        The standard error of ``W``.

    Raises
    ------
    InvalidInputError
        For ``G = inf`` (exact already).
    """
    if obj.is_large_group:
        raise InvalidInputError("Monte Carlo needs a finite group_size; at G = inf the weights are exact")
    rng = np.random.default_rng(seed)
    validate_probability_vector("pi", pi)              # refused here, not by rng.choice's ValueError
    if np.shape(pi) != (q.n_outputs,):
        raise InvalidInputError(f"pi must hold one probability per output (K={q.n_outputs}), got {np.size(pi)}: "
                                f"{pi!r:.80}")
    pi = np.asarray(pi, dtype=float)
    K, G = q.n_outputs, obj.group_size
    lengths = np.ones(K, dtype=int) if q.answers is None else np.array([len(a) for a in q.answers])
    B = 1 if not obj.aggregation_variant.batch_normalised else int(obj.groups_per_batch)
    Pw, W = np.zeros((K, n_samples)), np.zeros((K, n_samples))
    for k in range(K):                                                  # one answer as member 1 at a time
        members = rng.choice(K, size=(n_samples, B * G), p=pi)
        members[:, 0] = k
        r = sample_rewards(q, members[:, :G], rng)
        a1 = sampled_advantages(r, obj)[:, 0]
        if obj.aggregation_variant.answer_mean:
            w = np.full(n_samples, 1.0 / lengths[k])
        elif not obj.aggregation_variant.batch_normalised:
            w = np.ones(n_samples)
        else:
            w = B * G / lengths[members].sum(axis=1)
        Pw[k], W[k] = w * a1, w
    root = np.sqrt(n_samples)
    return Pw.mean(1), W.mean(1), Pw.std(1, ddof=1) / root, W.std(1, ddof=1) / root
