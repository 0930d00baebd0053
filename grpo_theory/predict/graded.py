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

from .._checks import OBJECTIVE, Replace, checked, flag, instance, optional
from ..problem import Objective, Question
from ..solvers import stationary_points, stationary_policy
from .intervals import check_k, pass_at_k, unbiased_pass_at_k
from .samples import PredictWarning, SampleTable

__all__ = ["predict_graded"]


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
