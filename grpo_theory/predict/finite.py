"""Finite-time predictions for every prompt of a dataset, calibrated on what the user measured.

:func:`predict_finite` takes the base model's samples (every prompt of the training set), the objective,
and one of

* ``after``: counts measured after (or during) training on some prompts: fits the flow time ``t`` and
  ``rho`` of the shared-weights flow (:mod:`.calibrate`), or ``t`` alone with a measured ``kernel``, and
  predicts every prompt with a predictive interval; with ``holdout`` it also scores the models on a
  random held-out part of ``after`` (:mod:`.scoring`): no change, a fitted logit shift, the tabular flow on
  a fitted clock, the coupled flow, the measured kernel, and (when given) the stationary prediction;
* ``mean_reward``: the run's mean training reward (0/1 rewards: the mean P(correct) over the training
  prompts): the flow time at which the model's mean reaches it (``rho`` given, default 0: the tabular flow);
* ``clock_range``: no measurement: each prompt's lowest and highest P(correct) over flow times in the range,
  a band over the range (not an interval of any probability).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._checks import COUNT, OBJECTIVE, SEED, arr, checked, instance, num, numbers, span, checked_record
from .._numerics import expit
from ..errors import InvalidInputError
from ..problem import Objective
from .calibrate import (Fit, clock_band, clock_from_mean_reward, fit_flow, fit_flows, fit_shift, predictive_interval,
                        start_logits, start_quantiles)
from .conformal import calibration_split, conformal_interval, conformal_offsets
from .coupled import solve_rho, time_grid
from .field import PromptField
from .samples import SampleTable
from .scoring import score_table

__all__ = ["FinitePrediction", "predict_finite", "match_measured"]


@dataclass
@checked_record
class FinitePrediction:
    """What :func:`predict_finite` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per base prompt: ``prompt_id, p_start`` (the flow's start: ``c/n``, Jeffreys' posterior mean
        at ``c = 0`` or ``n``), ``measured_n, measured_correct, measured`` (NaN where not measured),
        ``heldout``, ``pred_finite, pred_finite_lo, pred_finite_hi`` and the other models' predictions
        (``pred_shift``, ``pred_tabular``, ``pred_coupled``, ``pred_kernel`` where fitted).
    summary : dict
        Fitted parameters with intervals, the mode, the interval's meaning, timings.
    fits : dict
        ``{name: Fit}`` of the flows fitted on all measured prompts.
    scores : pandas.DataFrame or None
        The models' MAE and Brier on the held-out prompts (with ``holdout``).
    """

    table: pd.DataFrame
    summary: dict
    fits: dict = field(default_factory=dict)
    scores: pd.DataFrame | None = None


_TABLE = instance(SampleTable, "a SampleTable", "; read one with read_samples(path) or samples_from_counts(n, correct)")


@checked(samples=_TABLE, after=_TABLE)
def match_measured(samples: SampleTable, after: SampleTable) -> tuple:
    """Each measured prompt's position among the base prompts, and its counts.

    Parameters
    ----------
    samples : SampleTable
        The base model's samples (every training prompt).
    after : SampleTable
        Counts after training on some of them (binary rewards).

    Returns
    -------
    tuple
        ``(index, k, m)``: positions in ``samples``, correct counts, sample counts.

    Raises
    ------
    InvalidInputError
        Graded ``after`` samples, or measured prompts missing from the base samples (naming up to five).
    """
    where = "measured samples" + ("" if after.source.startswith("<") else f" {after.source!r}")   # a file: named
    if not after.binary:
        raise InvalidInputError(f"{where} must have 0/1 rewards (correct or not); got levels {after.levels.tolist()}")
    pos = {pid: i for i, pid in enumerate(samples.prompt_ids)}
    missing = [pid for pid in after.prompt_ids if pid not in pos]
    if missing:
        raise InvalidInputError(f"{where}: {len(missing)} prompt(s) are not among the base samples' prompts, e.g. "
                                f"{missing[:5]}; the measured file must use the base file's prompt ids")
    index = np.array([pos[pid] for pid in after.prompt_ids], dtype=int)
    m = after.n.astype(float)
    if np.any(m < 1):
        empty = [after.prompt_ids[i] for i in np.flatnonzero(m < 1)]
        raise InvalidInputError(f"{where}: prompts with n = 0: {empty[:5]}")
    return index, after.correct.astype(float), m


def _models(fld: PromptField, z0, idx, k, m, *, kernel, rhos, start_sd, times, n_boot, level, seed,
            split=None) -> dict:
    grid = np.round(np.linspace(0, 1, 11), 10) if rhos is None else np.asarray(rhos, dtype=float).reshape(-1)
    common = dict(times=times, z0=z0, start_sd=start_sd, n_boot=n_boot, level=level, seed=seed, split=split)
    if grid.size and np.any(grid == 0) and grid.size > 1:
        out = fit_flows(fld, idx, k, m, rhos=grid, **common)
        out = {"tabular": out["tabular"], "coupled": out["coupled"]}
    else:
        out = {"tabular": fit_flow(fld, idx, k, m, rhos=[0.0], **common),
               "coupled": fit_flow(fld, idx, k, m, rhos=grid, **common)}
    if kernel is not None:
        out["kernel"] = fit_flow(fld, idx, k, m, kernel=kernel, **common)
    return out


def _split(size: int, seed: int):
    """The conformal calibration split of ``size`` measured prompts (None below 2)."""
    return calibration_split(size, seed=seed + 2) if size >= 2 else None


def _conformal(fit: Fit, idx, k, m, split, level: float, m_new):
    """``(lo, hi, offsets)``: the split-conformal interval of every prompt (:mod:`.conformal`), centred on
    ``fit.p``, calibrated on the measured prompts outside ``split`` with ``fit.p_split``."""
    cal = ~split
    offs = conformal_offsets(fit.p_split[idx[cal]], k[cal], m[cal], level=level)
    lo, hi = conformal_interval(fit.p, offs, m_new)
    return lo, hi, offs


@checked(samples=_TABLE, obj=OBJECTIVE, after=instance(SampleTable, "a SampleTable", none=True),
         kernel=arr(ndim=2, none=True), rhos=arr(0, 1, ndim=1, none=True),
         holdout=num(0, 1, low_open=True, high_open=True, none=True), mean_reward=num(0, 1, none=True),
         rho=num(0, 1), clock_range=span(0, equal=True, none=True), level=num(0, 1, low_open=True, high_open=True),
         m_pred=num(1, none=True), times=arr(0, ndim=1, increasing=True, none=True), n_boot=COUNT, seed=SEED,
         stationary=numbers(ndim=1, none=True))
def predict_finite(samples: SampleTable, obj: Objective, after: SampleTable | None = None, *, kernel=None,
                   rhos=None, holdout: float | None = None, mean_reward: float | None = None, rho: float = 0.0,
                   clock_range: tuple | None = None, level: float = 0.9, m_pred=None, times=None,
                   n_boot: int = 200, seed: int = 0, stationary=None) -> FinitePrediction:
    """Every base prompt's P(correct) after a finite run, from a measurement, a mean reward, or a clock range.

    Parameters
    ----------
    samples : SampleTable
        The base model's samples, binary rewards: every prompt trained on.
    obj : Objective
        The GRPO objective.
    after : SampleTable, optional
        Counts measured after training on some of the prompts (ids among ``samples``').
    kernel : array_like, optional
        A measured ``N x N`` kernel, in ``samples``' prompt order: fitted too, and used for ``pred_finite``.
    rhos : sequence of float, optional
        The ``rho`` grid of the one-parameter kernel (default 0, 0.1, ..., 1).
    holdout : float, optional
        With ``after``: score the models on this random fraction of the measured prompts, fitted on the rest.
    mean_reward : float, optional
        Instead of ``after``: the run's mean training reward; ``t`` is where the model's mean reaches it.
    rho : float
        The ``rho`` used with ``mean_reward`` or ``clock_range`` (0: the tabular flow).
    clock_range : tuple of float, optional
        Instead of a measurement: ``(t_lo, t_hi)`` flow times; a band over them.
    level : float
        Level of the parameter and predictive intervals.
    m_pred : int, optional
        Samples of the measurement the predictive interval is for (default: the median measured ``m``).
    times : array_like, optional
        The flow-time grid (default :func:`~.coupled.time_grid`).
    n_boot : int
        Bootstrap replicates.
    seed : int
        Seed of the bootstrap, the hold-out split and the predictive draws.
    stationary : array_like, optional
        The stationary prediction per prompt (``pred``), scored beside the models with ``holdout``.

    Returns
    -------
    FinitePrediction
        The fitted models, their prediction per prompt with intervals, and (with ``holdout``) their scores on the
        held-out prompts.

    Raises
    ------
    InvalidInputError
        An argument not of its type or range (``clock_range`` two flow times ``0 <= t_lo <= t_hi``, ``times``
        increasing from 0, ``mean_reward`` and ``rho`` in [0, 1], ``level`` in (0, 1)); not exactly one of
        ``after``, ``mean_reward``, ``clock_range``; graded samples; measured prompts missing from the base; a
        ``holdout`` outside (0, 1) or leaving fewer than 2 prompts on either side.
    """
    import time

    started = time.perf_counter()
    given = [name for name, v in (("after", after), ("mean_reward", mean_reward), ("clock_range", clock_range))
             if v is not None]
    if len(given) != 1:
        raise InvalidInputError(f"give exactly one of after=, mean_reward=, clock_range=; got {given or 'none'}")
    if samples.levels.tolist() != [0.0, 1.0]:        # the fit reads rewards (mean_reward, after) as P(correct)
        raise InvalidInputError("finite-time predictions are for 0/1 rewards; these samples have levels "
                                + str(samples.levels.tolist()))
    times = time_grid() if times is None else np.asarray(times, dtype=float)
    n, c = samples.n.astype(float), samples.correct.astype(float)
    z0 = start_logits(n, c)
    fld = PromptField(obj, expit(z0))
    table = pd.DataFrame({"prompt_id": list(samples.prompt_ids), "p_start": expit(z0)})
    summary: dict = dict(field_path=fld.path, field_check_error=fld.max_check_error)
    fits: dict = {}
    scores = None
    if after is None:
        path = solve_rho(fld, rho, times)
        P = path.p
        if mean_reward is not None:
            t = clock_from_mean_reward(times, P, float(mean_reward))
            pt = solve_rho(fld, rho, np.array([0.0, t])).p[-1] if t > 0 else P[0]
            table["pred_finite"] = pt
            table["pred_finite_lo"] = table["pred_finite_hi"] = np.nan
            summary.update(mode="mean_reward", t=t, rho=rho, mean_reward=float(mean_reward),
                           interval="none: one mean reward fixes the clock but gives no per-prompt uncertainty")
        else:
            t_lo, t_hi = (float(v) for v in clock_range)
            lo, hi = clock_band(times, P, t_lo, t_hi)
            tm = float(np.sqrt(max(t_lo, 1e-12) * t_hi))
            table["pred_finite"] = solve_rho(fld, rho, np.array([0.0, tm])).p[-1]
            table["pred_finite_lo"], table["pred_finite_hi"] = lo, hi
            summary.update(mode="clock_range", t_range=[t_lo, t_hi], t=tm, rho=rho,
                           interval=f"a band over flow times [{t_lo:g}, {t_hi:g}] (lowest and highest P(correct) "
                                    "there), not a probability interval: nothing was measured")
    else:
        idx, k, m = match_measured(samples, after)
        start_sd = start_quantiles(n, c)
        table["measured_n"] = np.nan
        table["measured_correct"] = np.nan
        table.loc[idx, "measured_n"] = m
        table.loc[idx, "measured_correct"] = k
        table["measured"] = table.measured_correct / table.measured_n
        table["heldout"] = False
        if holdout is not None:
            if not (isinstance(holdout, (int, float)) and 0 < holdout < 1):
                raise InvalidInputError(f"holdout must be a fraction in (0, 1), got {holdout!r}")
            rng = np.random.default_rng(seed)
            n_out = int(round(holdout * idx.size))
            if n_out < 2 or idx.size - n_out < 2:
                raise InvalidInputError(f"holdout={float(holdout)!r} of {idx.size} measured prompts leaves {n_out} held out "
                                        f"and {idx.size - n_out} to fit; need at least 2 each")
            perm = rng.permutation(idx.size)
            out, keep = perm[:n_out], perm[n_out:]
            table.loc[idx[out], "heldout"] = True
            hsplit = _split(keep.size, seed)
            hfits = _models(fld, z0, idx[keep], k[keep], m[keep], kernel=kernel, rhos=rhos, start_sd=start_sd,
                            times=times, n_boot=n_boot, level=level, seed=seed, split=hsplit)
            c_shift = fit_shift(z0[idx[keep]], k[keep], m[keep])
            preds = {"no_change": expit(z0[idx[out]]), "shift": expit(z0[idx[out]] + c_shift)}
            preds.update({name: f.p[idx[out]] for name, f in hfits.items()})
            if stationary is not None:
                preds["stationary"] = np.asarray(stationary, dtype=float)[idx[out]]
            scores = score_table(preds, k[out], m[out], seed=seed, reference="shift")
            best = scores.sort_values("mae").iloc[0]
            scores["floor_best"] = best.floor
            summary["holdout"] = dict(fraction=float(holdout), heldout=int(n_out), fitted_on=int(keep.size),
                                      best=str(best.model),
                                      fits={name: f.summary() for name, f in hfits.items()}, shift=c_shift)
            if hsplit is not None:
                summary["holdout"]["coverage"] = _coverage(hfits["kernel" if kernel is not None else "coupled"],
                                                           idx, k, m, keep, out, hsplit, level, seed)
        split = _split(idx.size, seed)
        fits = _models(fld, z0, idx, k, m, kernel=kernel, rhos=rhos, start_sd=start_sd, times=times,
                       n_boot=n_boot, level=level, seed=seed, split=split)
        c_shift = fit_shift(z0[idx], k, m)
        table["pred_shift"] = expit(z0 + c_shift)
        for name, f in fits.items():
            table[f"pred_{name}"] = f.p
        main: Fit = fits["kernel" if kernel is not None else "coupled"]
        m_pred = float(np.median(m)) if m_pred is None else float(m_pred)
        lo, hi = predictive_interval(main, max(1, int(round(m_pred))), level=level, seed=seed + 1)
        table["pred_finite"] = main.p
        table["pred_finite_lo"], table["pred_finite_hi"] = lo, hi
        table["pred_finite_conformal_lo"] = table["pred_finite_conformal_hi"] = np.nan
        if split is not None:
            clo, chi, offs = _conformal(main, idx, k, m, split, level, max(1, int(round(m_pred))))
            table["pred_finite_conformal_lo"], table["pred_finite_conformal_hi"] = clo, chi
            summary["conformal"] = dict(
                offs.summary(), fitted_on=int(split.sum()), m_pred=m_pred,
                max_centre_shift=float(np.max(np.abs(main.p - main.p_split))),
                interval=f"{level:.0%} split-conformal predictive interval of a new measurement of {m_pred:g} "
                         f"samples: calibrated on {offs.calibration} measured prompts predicted by a fit to the "
                         f"other {int(split.sum())}; covers at least {level:.0%} when prompts are exchangeable")
        summary.update(mode="measured", model=main.model, fit=main.summary(),
                       fits={name: f.summary() for name, f in fits.items()}, shift=c_shift, measured=int(idx.size),
                       interval=f"{level:.0%} predictive interval of a new measurement of {m_pred:g} samples: the "
                                "fit's bootstrap, the start's uncertainty (Jeffreys, carried through linearly) and "
                                "binomial sampling; not p_ref's sampling interval (pred_lo, pred_hi)",
                       m_pred=m_pred)
    summary["seconds"] = round(time.perf_counter() - started, 3)
    return FinitePrediction(table, summary, fits, scores)


def _coverage(fit: Fit, idx, k, m, keep, out, split, level: float, seed: int) -> dict:
    """Share of the held-out measurements inside the model's predictive interval and inside the conformal one,
    both from the fit to the kept prompts, each for the held-out prompt's own number of samples."""
    f = k[out] / m[out]
    m_out = np.maximum(1, np.round(m[out])).astype(int)
    full_m = np.ones(fit.p.size, dtype=int)
    full_m[idx[out]] = m_out
    lo, hi = predictive_interval(fit, full_m, level=level, seed=seed + 1)
    clo, chi, offs = _conformal(fit, idx[keep], k[keep], m[keep], split, level, full_m)
    inside = (lo[idx[out]] - 1e-12 <= f) & (f <= hi[idx[out]] + 1e-12)
    cinside = (clo[idx[out]] - 1e-12 <= f) & (f <= chi[idx[out]] + 1e-12)
    return dict(level=float(level), model=float(inside.mean()), conformal=float(cinside.mean()),
                conformal_calibration=offs.calibration,
                model_mean_width=float(np.mean(hi[idx[out]] - lo[idx[out]])),
                conformal_mean_width=float(np.mean(chi[idx[out]] - clo[idx[out]])))
