"""The scoring for the free-generation study (:mod:`grpo_theory.studies.free`).

Per (beta, seed), the theory's MAE over prompts against two baselines fitted on one half of the
prompts and scored on the other (the identity ``p_ref`` and the best single logit shift
``expit(logit p_ref + c)``), and at the intermediate steps the finite-time prediction
``p_x(clock * step)`` with its clock fitted by least squares on the other half.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._checks import arr, checked, dataframe, has_columns, instance, num, one_of, same_length
from .._numerics import logit
from ..errors import InvalidInputError
from ..predict import FlowTable, flow_table
from ..problem import Objective
from .predictions import stationary_x

__all__ = ["assemble", "score", "fit_shift", "fit_clock_lsq", "tail_rewards", "COLUMNS"]

#: The columns every row of docs/results/free_generation.csv has first (the issue's schema).
COLUMNS = ("seed", "beta", "prompt", "p_ref", "p_ref_n", "predicted", "measured", "measured_n", "step")


def _expit(u):
    return 1.0 / (1.0 + np.exp(-np.asarray(u, dtype=float)))


@checked(p_ref=arr(0, 1, ndim=1), measured=arr(0, 1, ndim=1))
def fit_shift(p_ref, measured) -> float:
    """The best single logit shift: ``c`` minimising ``sum (expit(logit p_ref + c) - measured)^2``.

    Parameters
    ----------
    p_ref, measured : array_like
        Values in ``[0, 1]`` (``p_ref`` is clipped to ``[1e-4, 1 - 1e-4]`` so that its logit is finite).

    Returns
    -------
    float
        The shift ``c``, in logits.

    Examples
    --------
    >>> round(fit_shift([0.2, 0.5], [0.5, 0.8]), 3)      # logit 0.5 - logit 0.2 = logit 0.8 - logit 0.5
    1.386
    """
    from scipy.optimize import minimize_scalar

    same_length("one per prompt", p_ref=p_ref, measured=measured)
    u = logit(np.clip(np.asarray(p_ref, dtype=float), 1e-4, 1 - 1e-4))
    m = np.asarray(measured, dtype=float)
    res = minimize_scalar(lambda c: float(np.sum((_expit(u + c) - m) ** 2)), bounds=(-15.0, 15.0), method="bounded",
                          options=dict(xatol=1e-8))
    return float(res.x)


def _flow_rows(table, p) -> np.ndarray:
    """The flow table's rows (P(correct) at every grid time) for starting values ``p``."""
    if table.interpolated:
        from scipy.interpolate import PchipInterpolator

        return PchipInterpolator(logit(table.starts), table.values, axis=0)(logit(p))
    idx = np.minimum(np.searchsorted(table.starts, p), table.starts.size - 1)
    if not np.allclose(table.starts[idx], p, rtol=0, atol=0):
        raise InvalidInputError("a starting value outside the flow table; build it with these p_ref")
    return table.values[idx]


@checked(table=instance(FlowTable, "a FlowTable", " (from grpo_theory.predict.flow_table)"), p_ref=arr(0, 1, ndim=1),
         steps=arr(0, ndim=1), measured=arr(0, 1, ndim=1), t_max=num(0, 1e300, low_open=True, none=True))
def fit_clock_lsq(table, p_ref, steps, measured, *, t_max: float | None = None) -> float:
    """The clock (flow time per step) minimising the squared error of ``p_x(clock * step)`` against ``measured``.

    Parameters
    ----------
    table : grpo_theory.predict.FlowTable
        Flows from the prompts' ``p_ref``.
    p_ref, steps, measured : array_like
        One entry per (prompt, step) measurement.
    t_max : float, optional
        Largest flow time (default: the table's).

    Returns
    -------
    float
        The clock: flow time per training step.
    """
    from scipy.interpolate import PchipInterpolator
    from scipy.optimize import minimize_scalar

    same_length("one per measurement", p_ref=p_ref, steps=steps, measured=measured)
    p, s, m = (np.asarray(v, dtype=float) for v in (p_ref, steps, measured))
    t_max = float(table.times[-1]) if t_max is None else t_max
    # one interpolant in t per step's prompts, built once (the search evaluates the loss ~100 times)
    curves = []
    for v in np.unique(s):
        sel = s == v
        rows = _flow_rows(table, p[sel])                                          # (n_sel, T)
        curves.append((v, PchipInterpolator(table.times, rows, axis=1), m[sel]))

    def loss(log_c):
        c = math.exp(log_c)
        return float(sum(np.sum((f(min(c * v, t_max)) - mm) ** 2) for v, f, mm in curves))
    if t_max / max(float(s.max()), 1.0) == 0.0:
        raise InvalidInputError(f"t_max = {t_max!r} over the largest step ({float(s.max()):g}) underflows to 0: no "
                                "clock can be searched below it; give a larger t_max")
    hi = math.log(t_max / max(float(s.max()), 1.0))
    grid = np.linspace(hi - 20.0, hi, 81)           # a coarse scan first: the loss need not be unimodal
    j = int(np.argmin([loss(g) for g in grid]))
    lo_b, hi_b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    res = minimize_scalar(loss, bounds=(lo_b, hi_b), method="bounded", options=dict(xatol=1e-6))
    return float(math.exp(res.x))


def _table_with(*columns):
    """The rule of a DataFrame argument that must hold ``columns``."""
    def check(name, value):
        dataframe(name, value)
        has_columns(name, value, columns)
    return check


@checked(measured=_table_with("prompt", "beta", "seed", "kind", "step", "measured"),
         prompts=_table_with("prompt", "p_ref", "p_ref_n"), group_size=num(2, integer=True, finite=False),
         penalty=one_of("reverse", "direct"), t_max=num(0, 1e300, low_open=True))
def assemble(measured: pd.DataFrame, prompts: pd.DataFrame, *, group_size: int = 8,
             penalty: str = "reverse", t_max: float = 1e4) -> pd.DataFrame:
    """The result table: every measurement with ``p_ref``, the theory's prediction and the baselines.

    ``half`` splits the prompts into A and B alternately in order of ``p_ref`` (both span the range).
    Each row's ``identity`` is ``p_ref``; its ``shift`` is ``expit(logit p_ref + c)`` with ``c`` fitted
    (:func:`fit_shift`) on the *other* half's measurements of the same (beta, seed) and step (final
    rows on the other half's final values, an intermediate row on theirs at its step). ``predicted``
    is ``x(p_ref)`` for a final row, and for an intermediate row ``p_x(clock * step)`` on the flow with
    the clock fitted (:func:`fit_clock_lsq`) on the other half's intermediate measurements of the same run.

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`run_job`'s rows, every job's.
    prompts : pandas.DataFrame
        One row per prompt index: ``prompt`` (the index), ``label``, ``answer``, ``p_ref``, ``p_ref_n``.
    group_size : int
        ``G`` of the runs' objective (the predictions are made for it).
    penalty : str
        The runs' penalty, ``"reverse"`` or ``"direct"``.
    t_max : float
        Last flow time integrated (the clock is searched up to ``t_max`` over the largest intermediate step).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS` first, then ``kind, half, identity, shift, shift_c, clock, label, answer`` and
        :func:`run_job`'s other columns.
    """

    pr = prompts.sort_values(["p_ref", "prompt"]).reset_index(drop=True)
    half = {int(q): "AB"[i % 2] for i, q in enumerate(pr.prompt)}
    t = measured.merge(prompts, on="prompt", how="left", validate="many_to_one")
    if t.p_ref.isna().any():
        raise InvalidInputError(f"measurements for prompts without p_ref: {sorted(set(t.prompt[t.p_ref.isna()]))}")
    t["half"] = t.prompt.map(half)
    t["identity"] = t.p_ref
    t["predicted"] = np.nan
    t["shift"] = np.nan
    t["shift_c"] = np.nan
    t["clock"] = np.nan
    # the flow's start: p_ref kept half a count inside (0, 1), by row of t
    p_flow = pd.Series(np.clip(t.p_ref.to_numpy(float), 0.5 / t.p_ref_n.to_numpy(float),
                               1 - 0.5 / t.p_ref_n.to_numpy(float)), index=t.index)
    for beta, g in t.groupby("beta"):
        obj = Objective(beta=float(beta), group_size=group_size, penalty=penalty)
        fin = g.kind == "final"
        t.loc[g.index[fin], "predicted"] = stationary_x(g.p_ref[fin], obj)
        mid = g[g.kind == "intermediate"]
        flows = flow_table(np.unique(p_flow[g.index]), obj, t_max=t_max) if len(mid) else None
        for _seed, run in g.groupby("seed"):
            for this, other in (("A", "B"), ("B", "A")):
                # the shift gets what the theory's clock gets: the other half's measurements at the same
                # step (a final row's shift is fitted on the other half's final values)
                for (_kind, _step), o in run[run.half == other].groupby(["kind", "step"]):
                    rows = run.index[(run.half == this) & (run.kind == _kind) & (run.step == _step)]
                    c = fit_shift(o.p_ref, o.measured)
                    t.loc[rows, "shift_c"] = c
                    t.loc[rows, "shift"] = _expit(logit(np.clip(t.p_ref[rows].to_numpy(float), 1e-4, 1 - 1e-4))
                                                  + c)
                m_other = run[(run.kind == "intermediate") & (run.half == other)]
                m_this = run[(run.kind == "intermediate") & (run.half == this)]
                if len(m_other) and len(m_this):
                    clock = fit_clock_lsq(flows, p_flow[m_other.index], m_other.step, m_other.measured)
                    t.loc[m_this.index, "clock"] = clock
                    for s, rs in m_this.groupby("step"):
                        t.loc[rs.index, "predicted"] = flows.at(p_flow[rs.index].to_numpy(float),
                                                                min(clock * float(s), float(flows.times[-1])))
    rest = [c for c in t.columns if c not in COLUMNS]
    return t[list(COLUMNS) + rest].sort_values(["beta", "seed", "step", "p_ref", "prompt"]).reset_index(drop=True)


@checked(table=_table_with("beta", "seed", "kind", "step", "measured", "predicted", "identity", "shift"))
def score(table: pd.DataFrame) -> pd.DataFrame:
    """Per (beta, seed, kind, step): the MAE over prompts of the theory and of the two baselines.

    Every MAE is out of sample: the theory fits nothing to measurements; the shift and the clock are
    fitted on the other half (:func:`assemble`). Final rows carry ``meets_target`` (theory MAE <= 0.03)
    and ``beats_baselines`` (theory MAE below both baselines').

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`assemble`'s output.

    Returns
    -------
    pandas.DataFrame
        ``beta, seed, kind, step, n_prompts, mae_theory, mae_identity, mae_shift, max_theory, n_converged,
        meets_target, beats_baselines`` (the last three for final rows; NaN otherwise).
    """
    rows = []
    for (beta, seed, kind, step), g in table.groupby(["beta", "seed", "kind", "step"]):
        mae = {col: float(np.mean(np.abs(g[col] - g.measured))) for col in ("predicted", "identity", "shift")}
        r = dict(beta=beta, seed=seed, kind=kind, step=step, n_prompts=len(g), mae_theory=mae["predicted"],
                 mae_identity=mae["identity"], mae_shift=mae["shift"],
                 max_theory=float(np.max(np.abs(g.predicted - g.measured))))
        if kind == "final":
            r["n_converged"] = int((g.get("conv_status", pd.Series(dtype=str)) == "converged").sum())
            r["meets_target"] = r["mae_theory"] <= 0.03
            r["beats_baselines"] = r["mae_theory"] < min(r["mae_identity"], r["mae_shift"])
        rows.append(r)
    return pd.DataFrame(rows)



@checked(history=dataframe, group_size=num(2, 2**53, integer=True))
def tail_rewards(history: pd.DataFrame, *, group_size: int = 8) -> pd.DataFrame:
    """Each prompt's training reward over the last 25% of a job's steps (the window its flatness check
    judges): ``prompt, tail_correct, tail_n, tail_mean, tail_from_step``.

    The rewards at step t are G samples from the policy at step t, so ``tail_mean`` estimates the time
    average of P(correct) over the window, (1/|W|) sum_{t in W} pi_t(correct); the end-of-training
    measurement is instead a snapshot, pi_T(correct). A policy that keeps moving at a constant step
    (one shared MLP moving every prompt with the same answer word together) can be close to the
    stationary point on average and far from it at T.

    Parameters
    ----------
    history : pandas.DataFrame
        A job's ``history.csv``: ``step`` and ``p_best_q<i>``, the fraction of the G samples of prompt i
        that the verifier accepted.
    group_size : int
        G.

    Examples
    --------
    >>> h = pd.DataFrame(dict(step=[1, 2, 3, 4], p_best_q0=[0.0, 0.5, 0.25, 0.75]))
    >>> tail_rewards(h, group_size=4).to_dict("records")
    [{'prompt': 0, 'tail_correct': 3, 'tail_n': 4, 'tail_mean': 0.75, 'tail_from_step': 4}]
    """
    has_columns("history", history, ["step"])
    h = history.sort_values("step")
    w = h.iloc[-max(1, len(h) // 4):]
    cols = sorted((c for c in h.columns if c.startswith("p_best_q")), key=lambda c: int(c[8:]))
    k = np.rint(w[cols].to_numpy() * group_size).sum(0).astype(int)
    n = len(w) * group_size
    return pd.DataFrame(dict(prompt=[int(c[8:]) for c in cols], tail_correct=k, tail_n=n, tail_mean=k / n,
                             tail_from_step=int(w.step.iloc[0])))
