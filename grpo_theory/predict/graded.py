"""Graded rewards: the stationary distribution over reward levels, per distinct vector of level counts.

A prompt whose samples earned reward level ``l`` with frequency ``f_l`` is the question with one output
per level, ``pi_ref = f`` and deterministic rewards ``levels``; outputs of one level pool into one class,
so this is exact for any number of distinct completions per level (the test suite solves the split
question whole). No ``p_ref`` interval is propagated here (the summary says so).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._checks import OBJECTIVE, Replace, checked, flag, instance, num, optional
from ..errors import InvalidInputError
from ..preference import n_count_vectors
from ..problem import Objective, Question
from ..solvers import stationary_points, stationary_policy
from .intervals import check_k, pass_at_k, unbiased_pass_at_k
from .samples import PredictWarning, SampleTable

__all__ = ["predict_graded", "graded_solve_seconds", "MAX_GRADED_SECONDS"]

#: Seconds of CPU above which a graded prediction is refused up front (distinct level-frequency vectors x the cost
#: of one stationary policy and its stationary points, :func:`graded_solve_seconds`).
MAX_GRADED_SECONDS = 20.0


@checked(n_levels=num(2, 10**6, integer=True), group_size=num(2, finite=False))
def graded_solve_seconds(n_levels: int, group_size) -> float:
    """The measured cost of one distinct prompt of a graded prediction (``stationary_policy`` and
    ``stationary_points`` on ``L`` levels), in seconds of CPU on one core of the 2-core reference machine
    (2026-12-07): 0.07 s, plus 7e-4 s per count vector of ``P_G`` for 3-4 levels (the certified search: 3 levels at
    G = 64, 2,080 vectors, 1.3 s; 4 at G = 32, 5,984, 4.3 s) or 1.2e-5 s per count vector and level for more (the
    multi-start search: 8 levels at G = 8, 3,432, 0.35 s; 10 at G = 8, 11,440, 1.1 s); 0.08 s at G = inf.

    Parameters
    ----------
    n_levels : int
        The reward levels ``L``.
    group_size : int or float
        ``G`` (``math.inf`` allowed).

    Returns
    -------
    float
        Seconds.
    """
    if group_size == float("inf"):
        return 0.08
    v = n_count_vectors(int(group_size), n_levels)
    return 0.07 + (7e-4 * v if n_levels <= 4 else 1.2e-5 * v * n_levels)


@checked(samples=instance(SampleTable, "a SampleTable"), obj=OBJECTIVE, ks=lambda name, value: Replace(check_k(value, name)),
         progress=optional(flag))
def predict_graded(samples: SampleTable, obj: Objective, ks, progress) -> tuple:
    """Graded rewards: the stationary distribution over reward levels per distinct count vector.

    Each prompt's empirical level frequencies are its ``pi_ref`` over the ``L`` reward levels (one
    output per level); prompts with the same frequencies share one solve.

    Parameters
    ----------
    samples : SampleTable
        Samples with more than two reward levels.
    obj : Objective
        The GRPO objective.
    ks : tuple of int
        pass@k values (``k >= 1``; "correct" is the top level).
    progress : bool or None
        tqdm progress bar (None: only for many distinct count vectors).

    Returns
    -------
    table : pandas.DataFrame
        One row per prompt: the stationary mass of every level, ``mean_reward_after``, ``kl_direct``,
        pass@k before and after, ``bistable``, ``never_solved``.
    extra : dict
        Summary fields (``x_solves``, ``interval_note``).
    """
    from tqdm.auto import tqdm

    levels = samples.levels
    freq = samples.counts / samples.n[:, None]
    uniq, inverse = np.unique(freq, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    dists, multi = [], []
    seconds = len(uniq) * graded_solve_seconds(len(levels), obj.group_size)
    if seconds > MAX_GRADED_SECONDS:
        raise InvalidInputError(
            f"graded rewards: {len(uniq):,} distinct level-frequency vectors over {len(levels)} levels, each a "
            f"stationary policy and its stationary points at G={obj.group_size:g} (about "
            f"{graded_solve_seconds(len(levels), obj.group_size):.2g} s each by the measured cost): about "
            f"{seconds:,.0f} s of CPU, over the limit of {MAX_GRADED_SECONDS:.0f} s. Pool reward levels (map the "
            "rewards to fewer values, or to 0/1), use a smaller group size or group_size inf (--group-size inf), or "
            "fewer prompts")
    disable = (len(uniq) < 50) if progress is None else not progress
    for row in tqdm(uniq, desc="stationary policies", disable=disable, leave=False):
        q = Question(row, rewards=levels)
        pol = stationary_policy(q, obj)
        dists.append(pol.pi)
        multi.append(stationary_points(q, obj).multistable)
    dist = np.array(dists)[inverse]
    rows = dict(prompt_id=list(samples.prompt_ids), n=samples.n.astype(int), correct=samples.correct.astype(int))
    for j, lv in enumerate(levels):
        rows[f"p_ref_r={lv:g}"] = freq[:, j]
    for j, lv in enumerate(levels):
        rows[f"pred_r={lv:g}"] = dist[:, j]
    rows["p_ref"] = freq[:, -1]
    rows["pred"] = dist[:, -1]
    # no interval is propagated for graded rewards (stated in the summary); lo = hi = point
    rows["pred_lo"] = rows["pred_hi"] = dist[:, -1]
    rows["mean_reward_before"] = freq @ levels
    rows["mean_reward_after"] = dist @ levels
    with np.errstate(divide="ignore", invalid="ignore"):
        rows["kl_direct"] = np.where(dist > 0, dist * np.log(np.where(dist > 0, dist, 1) / np.where(freq > 0, freq, 1)),
                                     0.0).sum(axis=1)
    for kk in ks:
        rows[f"pass@{kk}_before"] = unbiased_pass_at_k(samples.n, samples.correct, kk)
        rows[f"pass@{kk}_after"] = pass_at_k(dist[:, -1], kk)
    rows["bistable"] = np.array(multi)[inverse]
    rows["never_solved"] = samples.correct == 0
    if np.any(samples.counts == 0):
        warnings.warn("graded samples: a reward level never seen for a prompt has pi_ref = 0 there and stays at 0 "
                      "(no interval is propagated for graded rewards)", PredictWarning, stacklevel=4)
    return pd.DataFrame(rows), dict(x_solves=len(uniq), interval_note="no p_ref interval for graded rewards")
