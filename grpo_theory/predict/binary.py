"""Prediction for 0/1 rewards: each prompt's stationary P(correct) with its interval, pass@k, KL, flags
(bistable, collapse, below a clamp's critical beta, slow) and the flow on a clock; graded rewards are in
:mod:`grpo_theory.predict.graded`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._validate import plain
from ..errors import InvalidInputError
from ..problem import Objective
from ..solvers import clamp_critical_beta, stationary_points
from .clock import fit_clock, flow_table
from .intervals import binomial_interval, pass_at_k, unbiased_pass_at_k
from .response import P_FLOOR, Response, binary_question, class_kl


def _flag_at(p: float, obj: Objective, clamp: bool, rewards) -> dict:
    """The stationary points at ``p`` (all, with stability), the vertex the flow reaches, the clamp's critical beta."""
    if p >= 1.0:
        return dict(stable=[1.0], multistable=False, vertex="", beta_c=math.nan)
    q = binary_question(float(p), rewards)
    pts = stationary_points(q, obj)
    ref = pts.from_reference
    vertex = ("correct" if ref.pi[0] > 0.5 else "wrong") if ref.boundary else ""
    beta_c = math.nan
    if clamp:
        try:
            beta_c = clamp_critical_beta(q, obj)
        except InvalidInputError:           # no clamp edge below pi_ref: nothing to collapse
            beta_c = math.nan
    return dict(stable=sorted(float(s.pi[0]) for s in pts.stable), multistable=pts.multistable, vertex=vertex,
                beta_c=beta_c)


def _flags(samples_p: np.ndarray, obj: Objective, x_of: dict, max_exact: int, progress, rewards) -> dict:
    """Flags per distinct ``p``: exact for up to ``max_exact`` values; beyond, from a grid of 129 values in
    ``logit p``, with an exact search for every ``p`` whose two neighbouring grid values disagree (a
    multistable stretch, a vertex or a clamp between them). A multistable window narrower than a grid cell
    could be missed there; the summary says when the grid was used."""
    from tqdm.auto import tqdm

    clamp = obj.kl_value_clamp is not None and obj.placement_variant.in_loss
    uniq = np.unique(samples_p)
    disable = (uniq.size < 200) if progress is None else not progress
    inner = uniq[uniq < 1.0]
    if inner.size <= max_exact:
        return {p: _flag_at(p, obj, clamp, rewards) for p in tqdm(uniq, desc="stationary points", disable=disable, leave=False)}
    u = np.log(inner) - np.log1p(-inner)
    nodes = 1.0 / (1.0 + np.exp(-np.linspace(u.min(), u.max(), 129)))
    at = [_flag_at(p, obj, clamp, rewards) for p in tqdm(nodes, desc="stationary points, grid", disable=disable, leave=False)]
    cell = np.clip(np.searchsorted(nodes, inner, side="right") - 1, 0, nodes.size - 2)
    out = {1.0: _flag_at(1.0, obj, clamp, rewards)} if uniq[-1] >= 1.0 else {}
    for p, i in zip(inner, cell):
        a, b = at[i], at[i + 1]
        if a["multistable"] or b["multistable"] or a["vertex"] != b["vertex"] or (clamp and (obj.beta < a["beta_c"])
                                                                                   != (obj.beta < b["beta_c"])):
            out[p] = _flag_at(p, obj, clamp, rewards)
        else:
            beta_c = _flag_at(p, obj, clamp, rewards)["beta_c"] if clamp else math.nan
            out[p] = dict(stable=[x_of[p]], multistable=False, vertex=a["vertex"], beta_c=beta_c)
    return out


#: What the stationary columns hold for an unregularised objective (summary.json's ``stationary_limit``).
LIMIT_NOTE = ("beta = 0 with no entropy bonus: no stationary point; pred is the flow's limit, 1 where p_ref > 0 (for "
              "0/1 rewards with every member of the GRPO family, P_G(correct) > P_G(wrong), so the flow's logit "
              "rises without rest) and 0 where the prompt was never solved (the estimate p_ref = 0: a class of "
              "no mass gets none); pred_lo, pred_hi the limit over p_ref's interval (0 and 1 for a never-solved "
              "prompt). No finite run reaches it: read pred_finite (measured=) or the flows on a clock (fit=)")


def _limits(phat, lo, hi) -> tuple:
    """The stationary part of the table for an unregularised objective: the flow's limit ``1{p > 0}`` at the
    estimate and over the interval, the limit vertex as the flag (``collapse``: every prompt), no bistability."""
    pred = (phat > 0).astype(float)
    x_lo, x_hi = (lo > 0).astype(float), (hi > 0).astype(float)
    p_eval = phat
    flags = {p: dict(stable=[float(p > 0)], multistable=False, vertex="correct" if p > 0 else "wrong",
                     beta_c=math.nan) for p in np.unique(phat).tolist()}
    extra = dict(x_solves=0, stationary_limit=LIMIT_NOTE)
    return pred, x_hi, np.minimum(x_lo, x_hi), np.maximum(x_lo, x_hi), p_eval, flags, extra


def _check_reach(flows, clock: float, step: float, fit) -> None:
    """Refuse a step whose flow time ``clock * step`` is beyond the integrated flows (or overflows), naming the
    step, the clock and where the clock came from."""
    t = clock * float(step)
    if math.isfinite(t) and t <= flows.times[-1]:
        return
    where = f" (fitted from the fit at step {plain(fit[0])})" if fit is not None else ""
    fix = "fit the clock at a later step" if fit is not None else "give a smaller clock"
    raise InvalidInputError(f"step {float(step):g} at clock {clock:g}{where} is flow time {t:g}, beyond the integrated "
                            f"range [0, {flows.times[-1]:g}]; give fewer steps or {fix} (in Python, or a larger "
                            "t_max)")


def predict_binary(samples, obj, ks, level, interval, clock, fit, steps, slow_tol, t_max, tol, max_exact,
                   progress) -> tuple:
    """The per-prompt table of :func:`grpo_theory.predict.predict` for two reward levels (its arguments), the
    summary's extra fields, and the flow table where a clock is given or fitted. The levels are the binary
    question's rewards (correct: the top one); a fitted clock's mean reward is in their units."""
    n = samples.n.astype(float)
    c = samples.correct.astype(float)
    phat = c / n
    lo, hi = binomial_interval(c, n, level=level, method=interval)
    never = c == 0                                       # p_ref = 0+: x is the limit x(0+) (Response at 0)
    rewards = (float(samples.levels[-1]), float(samples.levels[0]))          # the declared levels, top first
    if obj.regularised:
        resp = Response(obj, tol=tol, max_exact=max_exact, progress=progress, rewards=rewards)
        x_all = resp(np.concatenate([phat, lo, hi]))
        m = n.size
        pred, x_lo, x_hi = x_all[:m], x_all[m:2 * m], x_all[2 * m:]
        pred_lo, pred_hi = resp.range_over(lo, hi, x_lo, x_hi)
        p_eval = np.where(never, P_FLOOR, phat)          # the flags of a never-solved prompt are read at P_FLOOR
        x_eval = np.where(never, resp.solve(P_FLOOR) if never.any() else 0.0, pred)
        flags = _flags(p_eval, obj, dict(zip(p_eval.tolist(), x_eval.tolist())), max_exact, progress, rewards)
        if never.any() and flags[P_FLOOR]["stable"]:    # at 0+ the point reached is its limit, x(0+)
            d = flags[P_FLOOR]
            i = int(np.argmin(np.abs(np.array(d["stable"]) - x_eval[never][0])))
            flags[P_FLOOR] = dict(d, stable=sorted(d["stable"][:i] + [float(pred[never][0])] + d["stable"][i + 1:]))
        wrong = resp.wrong
        extra = dict(x_solves=resp.n_solves, x_grid=resp.used_grid, x_grid_tol=resp.tol,
                     x_grid_max_check_error=resp.max_check_error, monotone_in_p_ref=resp.monotone(),
                     flags_grid=bool(np.unique(p_eval).size > max_exact))
    else:
        pred, x_hi, pred_lo, pred_hi, p_eval, flags, extra = _limits(phat, lo, hi)
        wrong = lambda p, x: 1.0 - x                 # noqa: E731 - the limits are 0 and 1 exactly
    kl_p = np.where(never, hi, phat)                      # KL at the upper bound for never-solved prompts
    x_kl = np.where(never, x_hi, pred)
    kl_direct, kl_reverse = class_kl(x_kl, kl_p, wrong(kl_p, x_kl))
    rows = dict(prompt_id=list(samples.prompt_ids), n=n.astype(int), correct=c.astype(int), p_ref=phat,
                p_ref_lo=lo, p_ref_hi=hi, pred=pred, pred_lo=pred_lo, pred_hi=pred_hi,
                kl_direct=kl_direct, kl_reverse=kl_reverse)
    for kk in ks:
        rows[f"pass@{kk}_before"] = unbiased_pass_at_k(n, c, kk)
        rows[f"pass@{kk}_after"] = pass_at_k(pred, kk)
    f = [flags[p] for p in p_eval]
    rows["bistable"] = [d["multistable"] for d in f]
    rows["stable_points"] = [";".join(f"{v:.6g}" for v in d["stable"]) for d in f]
    rows["collapse"] = [d["vertex"] for d in f]
    if obj.kl_value_clamp is not None and obj.placement_variant.in_loss and obj.regularised:
        rows["beta_critical"] = [d["beta_c"] for d in f]
        rows["below_critical_beta"] = [bool(obj.beta < d["beta_c"]) for d in f]
    rows["never_solved"] = never
    table = pd.DataFrame(rows)
    table["flow_start"] = np.where(never, hi, phat)
    flows = None
    if clock is not None or fit is not None:
        start = table.flow_start.to_numpy()
        moving = start < 1.0
        if moving.any():
            flows = flow_table(start[moving], obj, t_max=t_max, progress=progress, rewards=rewards)
        if fit is not None:
            try:
                fstep, freward = (float(v) for v in fit)
            except (TypeError, ValueError):
                raise InvalidInputError(f"fit must be (step, mean_reward), got {fit!r}") from None
            if flows is None:
                raise InvalidInputError("every prompt has p_ref = 1: nothing moves, no clock to fit")
            clock = fit_clock(flows, start[moving], step=fstep, mean_reward=freward, fixed=start[~moving])
            extra["clock_fitted_from"] = dict(step=fstep, mean_reward=freward)
        extra["clock"] = clock
        steps = steps if steps is not None else ([float(fit[0])] if fit is not None else None)
        if steps:
            columns = {}
            for s in steps:
                vals = np.ones(start.size)
                if flows is not None:
                    _check_reach(flows, clock, s, fit)
                    vals[moving] = flows.at(start[moving], clock * s)
                columns[f"at_step_{s:g}"] = vals
            # one concat (a column at a time fragments the frame: pandas warns per column past ~100 steps)
            table = pd.concat([table.drop(columns=[c for c in columns if c in table]),
                               pd.DataFrame(columns, index=table.index)], axis=1)
            horizon = table[f"at_step_{steps[-1]:g}"].to_numpy()
            target = np.where(never, x_hi, pred)
            table["slow"] = np.abs(horizon - target) > slow_tol
            extra["slow_horizon_step"] = steps[-1]
    return table, extra, flows
