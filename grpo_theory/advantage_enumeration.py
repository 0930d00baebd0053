"""The exact engine behind the advantage estimators of :mod:`grpo_theory.advantage`: ``E[A_1 | r_1 = v_l]``
by summing over the count vectors of the other ``G - 1`` rewards of a group (:func:`enumerated_expectations`),
for an estimator whose ``A_1`` depends on the group only through member 1's level and the group's counts per
level, and the signed parts of an advantage table that the clipped surrogate needs (:func:`signed_part`).

Notation as in :mod:`grpo_theory.advantage`: reward levels ``v_1 < ... < v_L``, ``w`` the law of the reward of
one draw from ``pi``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import OBJECTIVE, checked, function, levels_and_weights, num, numbers, on_failure, one_of
from ._laws import check_law, from_outside
from ._numerics import log_factorial
from ._validate import as_array
from .errors import ExactEvaluationTooLarge, InvalidInputError

__all__ = ["enumerated_expectations", "signed_part", "MAX_COUNT_VECTORS"]


#: Cap on the count vectors enumerated exactly (the preference module's default as well).
MAX_COUNT_VECTORS = 3_000_000


@checked(a=numbers(), part=one_of('mean', 'positive', 'negative'))
def signed_part(a: np.ndarray, part: str) -> np.ndarray:
    """``a`` itself (``part="mean"``), its positive part or its negative part (elementwise).

    The split of an advantage table that the clipped surrogate needs; shared with :mod:`preference`.

    Parameters
    ----------
    a : numpy.ndarray
        The table.
    part : {"mean", "positive", "negative"}
        Which part.

    Raises
    ------
    InvalidInputError
        When ``part`` is not ``"mean"``, ``"positive"`` or ``"negative"``.
    """
    if part == "mean":
        return a
    if part == "positive":
        return np.maximum(a, 0.0)
    if part == "negative":
        return np.minimum(a, 0.0)
    raise InvalidInputError(f"part must be 'mean', 'positive' or 'negative', got {part!r}")


def _count_vectors(total: int, n_levels: int) -> np.ndarray:
    """Every ``n in N^L`` with ``sum n = total``, as an ``(N, L)`` float array (level by level, no loop over G)."""
    rows = np.zeros((1, 0))
    remaining = np.array([total])
    for _ in range(n_levels - 1):
        reps = remaining + 1
        parent = np.repeat(np.arange(remaining.size), reps)
        value = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        rows = np.column_stack([rows[parent], value])
        remaining = remaining[parent] - value
    return np.column_stack([rows, remaining]).astype(float)


def _multinomial_weights(log_w: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``Multinomial(n; N, w)`` for a batch ``log_w (B, L)`` over the rows of ``counts`` (N, L) -> (B, N).

    The plain log-gamma form: accurate to ~1e-13 relative for the group sizes enumerated here (the group
    advantage's engine has the saddle-point form for G in the thousands).
    """
    total = counts[0].sum()
    coef = log_factorial(total) - log_factorial(counts).sum(axis=1)
    finite = np.isfinite(log_w)
    out = coef + np.where(finite, log_w, 0.0) @ counts.T
    impossible = (~finite).astype(float) @ (counts > 0).T.astype(float)
    return np.where(impossible > 0, 0.0, np.exp(out))


def enumerated_expectations(v: np.ndarray, log_w: np.ndarray, obj, count_table, *, part: str = "mean",
                            max_count_vectors: int | None = None) -> np.ndarray:
    """``E[A_1 | r_1 = v_l]`` (or its signed part) by summing over the count vectors of the other ``G - 1`` rewards.

    The generic exact engine of an advantage estimator whose ``A_1`` depends on the group only through member
    1's level and the group's counts per level (every estimator of this module); a new estimator gives its
    ``count_table`` and registers the result as its ``expectations`` (:mod:`grpo_theory.variants`).

    Parameters
    ----------
    v : numpy.ndarray, shape (L,)
        The reward levels ``v_l``, increasing.
    log_w : numpy.ndarray, shape (..., L)
        ``log w_l``: the log-probabilities of the levels under ``pi`` (``-inf`` allowed; ``logsumexp = 0``).
    obj : Objective
        The objective: a finite ``group_size``, and whatever ``count_table`` reads.
    count_table : callable
        ``(v, total, obj) -> (L, N)``: member 1's advantage when its reward is ``v_l`` and the whole group's
        counts per level are ``total[l, n, :]`` (``(L, N, L)``, member 1 included; every row sums to ``G``).
    part : {"mean", "positive", "negative"}
        Which part of the table is averaged (:func:`signed_part`).
    max_count_vectors : int, optional
        The cap on the count vectors enumerated (default :data:`MAX_COUNT_VECTORS`).

    Returns
    -------
    numpy.ndarray, shape (..., L)
        ``E_l``, or its signed part, for each law ``w`` of ``log_w``.

    Raises
    ------
    InvalidInputError
        A ``log_w`` given from outside the package that is not a log-law (:func:`grpo_theory._laws.check_law`).
    ExactEvaluationTooLarge
        When the ``C(G + L - 2, L - 1)`` count vectors are over the cap.
    """
    if from_outside():                  # as grpo_theory.preference.level_expectations checks its arguments
        numbers(ndim=1, nonempty=True, finite=True)("v", v)
        numbers()("log_w", log_w)
        levels_and_weights(v, log_w)
        OBJECTIVE("obj", obj)
        function()("count_table", count_table)
        one_of("mean", "positive", "negative")("part", part)
        if max_count_vectors is not None:
            num(1, integer=True)("max_count_vectors", max_count_vectors)
    v, log_w = as_array("v", v), as_array("log_w", log_w)
    if from_outside():
        check_law("log_w", log_w, log=True)
    L = v.size
    if L == 1:
        return np.zeros_like(log_w)
    try:
        G = obj.group_size
    except AttributeError:
        on_failure(obj=(OBJECTIVE, obj))
        raise
    cap = MAX_COUNT_VECTORS if max_count_vectors is None else max_count_vectors
    n_vec = math.comb(G - 1 + L - 1, L - 1)
    if n_vec > cap:
        raise ExactEvaluationTooLarge(f"exact expectations of advantage={obj.advantage!r} need {n_vec:,} count "
                                      f"vectors for G={G}, L={L}, over the limit max_count_vectors={cap:,}")
    counts = _count_vectors(G - 1, L)
    total = counts[None, :, :] + np.eye(L)[:, None, :]                        # (L, N, L)
    table = signed_part(count_table(v, total, obj), part)                     # (L, N)
    flat = log_w.reshape(-1, L)
    weights = _multinomial_weights(flat, counts)                               # (B, N)
    return (weights @ table.T).reshape(log_w.shape)
