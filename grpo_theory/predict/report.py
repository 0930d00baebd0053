"""A prediction on disk: ``predictions.csv``, ``summary.json`` and three figures in the project's style.

* ``after_vs_before.png``: every prompt's stationary P(correct) against its ``p_ref``, with the interval
  carried through from ``p_ref``'s; bistable prompts show both stable points; the dotted diagonal is
  "no change";
* ``pass_at_k.png``: the dataset's mean pass@k before (unbiased estimate from the samples, up to the smallest
  ``n``) and after;
* ``clock.png`` (with a clock): the dataset's mean P(correct) along the flow against the training step,
  the fitted point, and a few prompts' ``p_x(t)``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from .._checks import checked, dataframe, flag, instance, num, optional, registered
from .._validate import out_folder
from ..errors import InvalidInputError
from .clock import mean_curve

#: The argument rule of a :class:`~grpo_theory.predict.Prediction` (registered by its module, which imports this one).
_prediction = registered("Prediction", " (from grpo_theory.predict.predict)")

__all__ = ["write_outputs", "figure_after_vs_before", "figure_pass_at_k", "figure_clock", "figure_tradeoff"]


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _new(height: float = 2.7):
    # matplotlib (plotting imports it at module level) only when drawing: predictions need no plotting stack
    from matplotlib.figure import Figure

    from ..plotting import COLUMN  # matplotlib (optional), see above

    fig = Figure(figsize=(COLUMN, height), layout="constrained")
    return fig, fig.subplots()


@checked(pr=_prediction)
def figure_after_vs_before(pr):
    """Stationary P(correct) against ``p_ref``, one point per prompt, with intervals.

    Parameters
    ----------
    pr : Prediction
        From :func:`~grpo_theory.predict.predict`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, drawn and not shown or saved.
    """
    t = pr.table
    fig, ax = _new(3.0)
    ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=0)
    normal = ~t.bistable.to_numpy()
    yerr = np.vstack([t.pred - t.pred_lo, t.pred_hi - t.pred]).clip(min=0)
    xerr = np.vstack([t.p_ref - t.p_ref_lo, t.p_ref_hi - t.p_ref]).clip(min=0) if "p_ref_lo" in t else None
    small = len(t) <= 300                        # above a few hundred prompts: thinner, lighter bars
    ax.errorbar(t.p_ref[normal], t.pred[normal], yerr=yerr[:, normal],
                xerr=None if xerr is None else xerr[:, normal], fmt="none", ecolor="0.7" if small else "0.85",
                lw=0.6 if small else 0.25, zorder=1)
    ax.scatter(t.p_ref[normal], t.pred[normal], s=9 if small else 3, color="#1f5fa8", zorder=2,
               label="stationary (bars: p_ref's interval)")
    if "pred_finite" in t:
        ferr = np.vstack([t.pred_finite - t.pred_finite_lo, t.pred_finite_hi - t.pred_finite]).clip(min=0)
        ax.errorbar(t.p_ref, t.pred_finite, yerr=ferr, fmt="none", ecolor="#f4a582", lw=0.6 if small else 0.25,
                    zorder=1)
        ax.scatter(t.p_ref, t.pred_finite, s=9 if small else 3, color="#b2182b", zorder=2,
                   label="this run, fitted (predictive interval)")
    never = t.never_solved.to_numpy()
    if never.any():
        ax.scatter(t.p_ref[never], t.pred[never], s=14, marker="v", color="#ef8a62", zorder=3,
                   label="never solved: x(0+)")
    if (~normal).any():
        for _, row in t[~normal].iterrows():
            ys = [float(v) for v in str(row.stable_points).split(";") if v]
            ax.plot([row.p_ref] * len(ys), ys, color="#b2182b", lw=0.7, marker="o", ms=3, mfc="white")
        ax.plot([], [], color="#b2182b", marker="o", mfc="white", ms=3, lw=0.7, label="bistable: both stable points")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"base model $p_{\mathrm{ref}}$ (from the samples)")
    ax.set_ylabel("P(correct) after training")
    ax.set_title(_wrap(pr.objective.describe().replace("inf", "∞")), fontsize=7)
    ax.legend(loc="lower right")
    return fig


def _wrap(text: str, width: int = 48) -> str:
    """The title on as many lines as it needs (a figure's width holds about ``width`` characters)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


@checked(pr=_prediction)
def figure_pass_at_k(pr):
    """The dataset's mean pass@k before and after, k = 1, 2, 4, ... (and the smallest ``n``).

    Before: the mean unbiased estimate from the samples, drawn only up to the smallest ``n`` (beyond it no
    prompt-pooled estimate exists); after: pass@k of the stationary P(correct), with its band, for every k.

    Parameters
    ----------
    pr : Prediction
        As for :func:`figure_after_vs_before`; its ``curves`` give the points.

    Returns
    -------
    matplotlib.figure.Figure
        k on a log-2 axis, the smallest ``n`` (where "before" ends) and the largest marked.
    """
    n_min, n_max = int(pr.table.n.min()), int(pr.table.n.max())
    ks = sorted({2 ** i for i in range(int(math.log2(max(n_max, 2))) + 3)} | {n_min})
    cur = pr.curves(ks)
    fig, ax = _new()
    est = cur.before.notna().to_numpy()     # k <= every prompt's n
    ax.plot(cur.k[est], cur.before[est], "o-", ms=3, color="0.3",
            label=f"before (unbiased, k <= n = {n_min})" if (~est).any() else "before (unbiased, from the samples)")
    ax.axvline(n_min, ls="--", color="0.6", lw=0.8)
    ax.plot(cur.k, cur.after, "o-", ms=3, color="#1f5fa8", label="after (stationary)")
    if "after_finite" in cur:
        ax.plot(cur.k, cur.after_finite, "s-", ms=3, color="#b2182b", label="after this run (fitted)")
    ax.fill_between(cur.k, cur.after_lo, cur.after_hi, color="#1f5fa8", alpha=0.2, lw=0)
    if n_max != n_min:
        ax.axvline(n_max, ls=":", color="0.6", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("mean pass@k over prompts")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize=6)
    return fig


@checked(pr=_prediction)
def figure_clock(pr):
    """Mean P(correct) along the flow against the training step, and a few prompts' flows.

    Parameters
    ----------
    pr : Prediction
        From :func:`~grpo_theory.predict.predict` with a clock (``clock=`` or ``fit=``).

    Returns
    -------
    matplotlib.figure.Figure
        The mean and a few single prompts' flows against the training step.
    """
    clock = pr.summary["clock"]
    flows = pr.flows
    start = pr.table.flow_start.to_numpy()
    moving = start < 1.0
    steps = flows.times / clock
    mean = (mean_curve(flows, start[moving]) * moving.sum() + (~moving).sum()) / start.size
    fig, ax = _new()
    keep = steps > 0
    ax.plot(steps[keep], mean[keep], color="#1f5fa8", label="dataset mean P(correct)")
    pick = np.unique(np.quantile(start[moving], [0.1, 0.5, 0.9], method="nearest"))
    for p in pick:
        ax.plot(steps[keep], _row(flows, p)[keep], lw=0.7, color="0.6")
    ax.plot([], [], lw=0.7, color="0.6", label="prompts at p_ref quantiles 0.1, 0.5, 0.9")
    fitted = pr.summary.get("clock_fitted_from")
    if fitted:
        ax.plot([fitted["step"]], [fitted["mean_reward"]], "D", color="#b2182b", ms=4, label="measured (fit)")
    ax.axhline(float(pr.table.pred.mean()), ls="--", color="#1f5fa8", lw=0.7, label="stationary mean")
    ax.set_xscale("log")
    ax.set_xlabel(f"training step (clock: {clock:.3g} flow time per step)")
    ax.set_ylabel("P(correct)")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="upper left", fontsize=6)
    return fig


@checked(tradeoff=dataframe, beta=num(0))
def figure_tradeoff(tradeoff, beta: float):
    """Mean stationary P(correct) against mean KL(pi || pi_ref), one point per beta; the run's beta marked.

    Parameters
    ----------
    tradeoff : pandas.DataFrame
        From :func:`~grpo_theory.predict.reward_kl_tradeoff`.
    beta : float
        The run's beta.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, drawn and not shown or saved.
    """
    fig, ax = _new()
    ax.plot(tradeoff.mean_kl_direct, tradeoff.mean_pred, "o-", ms=3, color="#1f5fa8")
    _label_points(ax, tradeoff.mean_kl_direct.to_numpy(), tradeoff.mean_pred.to_numpy(),
                  [f"β={b:g}" for b in tradeoff.beta])
    here = tradeoff[np.isclose(tradeoff.beta, beta)]
    if len(here):
        ax.plot(here.mean_kl_direct, here.mean_pred, "D", color="#b2182b", ms=4, label="this run's β")
        ax.legend(loc="lower right")
    ax.set_xlabel(r"mean KL($\pi\,\|\,\pi_{\mathrm{ref}}$) over prompts")
    ax.set_ylabel("mean P(correct) (stationary)")
    return fig


def _label_points(ax, x, y, labels) -> None:
    """Label points, skipping any whose label would land within ~10% of the axes of one already placed (the
    skipped ones are still drawn as points; the first and the last are placed first). A label names every point
    drawn at its very spot (``labels[i]…labels[j]``): coincident points are one point on the page."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size == 0:
        return
    span_x = max(float(np.ptp(x)), 1e-12)
    span_y = max(float(np.ptp(y)), 1e-12)
    order = [0, x.size - 1] + list(range(1, x.size - 1))
    placed: list = []                                   # (u, v, indices of the points at that spot)
    for i in dict.fromkeys(order):
        u, v = x[i] / span_x, y[i] / span_y
        near = [p for p in placed if abs(u - p[0]) < 0.12 and abs(v - p[1]) < 0.08]
        same = [p for p in near if np.isclose(x[i], x[p[2][0]], rtol=1e-9, atol=1e-12)
                and np.isclose(y[i], y[p[2][0]], rtol=1e-9, atol=1e-12)]
        if same:
            same[0][2].append(i)
        elif not near:
            placed.append((u, v, [i]))
    for _, _, members in placed:
        members = sorted(members)
        text = labels[members[0]] if len(members) == 1 else \
            f"{labels[members[0]]}…{labels[members[-1]].split('=', 1)[-1]} ({len(members)} points)"
        ax.annotate(text, (x[members[0]], y[members[0]]), fontsize=6, xytext=(3, -8), textcoords="offset points")


def _row(flows, p) -> np.ndarray:
    if not flows.interpolated:
        return flows.values[int(np.searchsorted(flows.starts, p))]
    from scipy.interpolate import PchipInterpolator

    u = np.log(flows.starts) - np.log1p(-flows.starts)
    return PchipInterpolator(u, flows.values, axis=0)(math.log(p) - math.log1p(-p))


def _write_all(pr, out: Path, *, plots: bool, tradeoff) -> dict:
    """Every file of the prediction into ``out``; ``{kind: file name}``."""
    names = {"csv": "predictions.csv", "summary": "summary.json"}
    table = pr.table.copy()
    floats = table.select_dtypes("float").columns
    table[floats] = table[floats] + 0.0          # -0.0 (an open interval end at 0) is written as 0, not '-0'
    table.to_csv(out / "predictions.csv", index=False, float_format="%.8g")
    summary = dict(pr.summary)
    summary["pass_at_k_curve"] = pr.curves().to_dict(orient="records")
    summary["columns"] = dict(pred_lo_pred_hi="p_ref's sampling interval carried through the stationary map "
                                              "(not a prediction interval of a measurement)",
                           pass_at_k_before="the unbiased estimate 1 - C(n-c,k)/C(n,k); empty (null) where k > n, "
                                            "where n samples give no estimate; pooled means (pass@k_before, "
                                            "pass_at_k_curve) are null beyond the smallest n "
                                            "(pass_at_k_before_max_k)")
    if tradeoff is not None:
        summary["reward_kl_tradeoff"] = tradeoff.to_dict(orient="records")
        tradeoff.to_csv(out / "tradeoff.csv", index=False)
        names["tradeoff_csv"] = "tradeoff.csv"
    fin = getattr(pr, "finite", None)
    if fin is not None and fin.scores is not None:
        fin.scores.to_csv(out / "scores.csv", index=False, float_format="%.6g")
        names["scores"] = "scores.csv"
        summary["holdout_scores"] = fin.scores.to_dict(orient="records")
    (out / "summary.json").write_text(json.dumps(_jsonable(summary), indent=2), encoding="utf-8")
    if plots:
        import matplotlib  # only with plots=True (see _new)

        from ..plotting import STYLE  # matplotlib (optional): only with plots=True

        figures = {"after_vs_before": figure_after_vs_before, "pass_at_k": figure_pass_at_k}
        if pr.flows is not None and pr.summary.get("clock"):
            figures["clock"] = figure_clock
        if tradeoff is not None:
            figures["tradeoff"] = lambda p: figure_tradeoff(tradeoff, p.objective.beta)
        with matplotlib.rc_context(STYLE):
            for name, build in figures.items():
                build(pr).savefig(out / f"{name}.png", format="png")
                names[name] = f"{name}.png"
    return names


@checked(pr=_prediction, out_dir=instance((str, os.PathLike), "a folder path"), plots=flag,
         tradeoff=optional(dataframe))
def write_outputs(pr, out_dir, *, plots: bool = True, tradeoff=None) -> dict:
    """Write the CSV, the JSON summary and (with ``plots``) the figures.

    Parameters
    ----------
    pr : Prediction
        From :func:`~grpo_theory.predict.predict`.
    out_dir : str or Path
        The folder (created if missing).
    plots : bool
        Also draw the figures (needs matplotlib).
    tradeoff : pandas.DataFrame, optional
        A table from :func:`~grpo_theory.predict.reward_kl_tradeoff`, written to ``tradeoff.csv`` and drawn
        in ``tradeoff.png``.

    Returns
    -------
    dict
        ``{name: path}`` of every file written.

    Raises
    ------
    InvalidInputError
        ``out_dir`` is no folder path, is a file, or cannot be made (named with the system's reason).
    """
    import shutil
    import tempfile

    out = out_folder(out_dir, "out_dir")
    # everything is written into a fresh folder beside out first and moved in only when all of it was
    # written: a failure (a figure, a full disk) leaves out as it was, never half of a prediction
    # (named by at most 50 characters of out's name: a legal name of 255 bytes would make an illegal one)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name[:50]}.incomplete-", dir=out.parent))
    try:
        names = _write_all(pr, stage, plots=plots, tradeoff=tradeoff)
        paths = {}
        for kind, name in names.items():
            (stage / name).replace(out / name)
            paths[kind] = out / name
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return {k: str(v) for k, v in paths.items()}
