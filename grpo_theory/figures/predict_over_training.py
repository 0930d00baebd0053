"""Figure 33: the finite-time, shared-weights predictor against the trained small GPT, question by question
over training (the committed tables of experiments/predict_validation_gpt.py: every held-out
prediction, ``predict_validation_gpt_prompts.csv``, and the scores, ``predict_validation_gpt.csv``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec

#: the predictors drawn, in the legend's order, with their legend labels: the kernel measured at the base
#: model (only the clock fitted), the one-parameter coupled model (rho and the clock), the tabular flow
#: (rho = 0, the clock) and a logit shift of p_ref refitted at each step
MODELS = {"kernel": "measured kernel", "coupled": "coupled (ρ fitted)", "tabular": "tabular flow",
          "shift": "logit shift (refitted)"}
#: the marker and line style of each predictor: the three flows are points and lines of data (fits), the
#: refitted shift a baseline beside them (its own marker, a key; dashed, a comparison)
MARKER = {"kernel": "o", "coupled": "o", "tabular": "o", "shift": "^"}
LINESTYLE = {"kernel": "-", "coupled": "-", "tabular": "-", "shift": "--"}
#: (a-f): the flows' dots in decreasing size, drawn largest first, so that where they agree each shows as a ring
#: around the next (as one curve thin inside another's wide line); equal sizes hid the tabular flow
SCATTER_SIZE = {"kernel": 2.0, "coupled": 3.0, "tabular": 4.0, "shift": 2.6}
#: what this module draws (see plotting.LINESTYLES, MARKERS): the diagonal is a reference (dotted), the
#: sampling floor a marked threshold (dash-dotted); pi_ref unchanged is a baseline (dashed)
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference", "-.": "marked value", "o": "point", "^": "key"}
#: the steps whose questions the scatter panels show (of 5, 10, 20, 40, 80, 160, 320, 800)
STEPS = (5, 20, 800)
#: the ticks of the scatter panels' logit axes (a wide x axis keeps the sparse ones)
TICKS = (0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999)
SPARSE_TICKS = (0.001, 0.01, 0.5, 0.99, 0.9999)
#: the betas of the study, one row of scatter panels each
BETAS = (0.05, 0.5)


def _colors() -> dict[str, str]:
    return dict(zip(MODELS, plotting.setting_colors(len(MODELS))))


def _logit_limits(v: np.ndarray) -> tuple[float, float]:
    """Equal limits on the logit scale holding every value, half a logit of margin each side."""
    z = np.log(v) - np.log1p(-v)
    lo, hi = float(z.min()) - 0.5, float(z.max()) + 0.5
    return 1 / (1 + np.exp(-lo)), 1 / (1 + np.exp(-hi))


def _logit_axes(ax, lo: float, hi: float) -> None:
    """Both axes on the logit scale over ``[lo, hi]``, ticked at 0.01, 0.1, 0.5, 0.9, 0.99, ... in plain
    decimals (the x axis at every other one when the span is wide)."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    ticks = [v for v in TICKS if lo <= v <= hi]
    wide = np.log(hi / (1 - hi)) - np.log(lo / (1 - lo)) > 9
    for axis, setscale, setlim, keep in ((ax.xaxis, ax.set_xscale, ax.set_xlim, wide),
                                         (ax.yaxis, ax.set_yscale, ax.set_ylim, False)):
        setscale("logit")
        setlim(lo, hi)
        shown = [v for v in ticks if not keep or v in SPARSE_TICKS]
        axis.set_major_locator(FixedLocator(shown))
        axis.set_major_formatter(FixedFormatter([f"{v:g}" for v in shown]))
        axis.set_minor_locator(NullLocator())


def tables(inputs) -> dict[str, pd.DataFrame]:
    pp = inputs.results_table("predict_validation_gpt_prompts.csv")
    scores = inputs.results_table("predict_validation_gpt.csv")
    data = pp[pp.model.isin(list(MODELS)) & pp.step.isin(STEPS)]
    data = data.sort_values(["beta", "step", "model", "seed", "prompt"], kind="stable").reset_index(drop=True)
    mae = scores[(scores.scope == "pooled") & scores.model.isin([*MODELS, "no_change"])]
    mae = mae[["beta", "step", "model", "prompts", "mae", "mae_lo", "mae_hi", "floor"]]
    mae = mae.sort_values(["beta", "model", "step"], kind="stable").reset_index(drop=True)
    return {"data": data[["beta", "step", "seed", "prompt", "model", "predicted", "p"]], "mae": mae}


def render(t: dict[str, pd.DataFrame]) -> Figure:
    data, mae = t["data"], t["mae"]
    cols = _colors()
    fig = Figure(figsize=(plotting.DOUBLE, 7.2), layout="constrained")
    grid = fig.add_gridspec(3, 6, height_ratios=[1, 1, 1.05])
    letters = iter("abcdefgh")
    for row, beta in enumerate(BETAS):
        for c, step in enumerate(STEPS):
            ax = fig.add_subplot(grid[row, 2 * c:2 * c + 2])
            d = data[np.isclose(data.beta, beta) & (data.step == step)]
            lo, hi = _logit_limits(np.concatenate([d.p.to_numpy(), d.predicted.to_numpy()]))
            plotting.reference(ax.plot([lo, hi], [lo, hi], ls=":", color="0.45", lw=0.9, zorder=0))
            for name in reversed(MODELS):                    # the measured kernel on top
                m = d[d.model == name]
                ax.plot(m.p, m.predicted, ls="", marker=MARKER[name], ms=SCATTER_SIZE[name], color=cols[name],
                        mec="none", alpha=0.85)
            _logit_axes(ax, lo, hi)
            ax.set_aspect("equal")
            if c == 0:
                ax.set_ylabel("predicted P(correct), held out")
            if row == len(BETAS) - 1:
                ax.set_xlabel("measured P(correct)")
            plotting.panel(ax, next(letters), f"β = {beta:g}, step {step}")
    for c, beta in enumerate(BETAS):
        ax = fig.add_subplot(grid[2, 3 * c:3 * c + 3])
        d = mae[np.isclose(mae.beta, beta)]
        for name in MODELS:
            m = d[d.model == name].sort_values("step")
            ax.errorbar(m.step, m.mae, yerr=[m.mae - m.mae_lo, m.mae_hi - m.mae], color=cols[name],
                        marker=MARKER[name], ls=LINESTYLE[name], ms=3.2, lw=1.0, elinewidth=0.7, capsize=1.5)
        base = d[d.model == "no_change"].sort_values("step")
        plotting.reference(ax.plot(base.step, base.mae, ls="--", color="0.35", lw=1.0))
        fl = d[d.model == "shift"].sort_values("step")
        plotting.reference(ax.plot(fl.step, fl.floor, ls="-.", color="0.45", lw=1.0))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training step")
        ax.set_ylabel("held-out MAE")
        ax.set_ylim(min(d.mae_lo.min(), d.floor.min()) / 2, 1.0)
        plotting.panel(ax, next(letters), f"β = {beta:g}: MAE over the {int(d.prompts.max())} questions, 95% CI")
    handles = [Line2D([], [], ls=LINESTYLE[n], lw=1.0, marker=MARKER[n], ms=4, color=cols[n], mec="none", label=lab)
               for n, lab in MODELS.items()]
    handles += [Line2D([], [], ls=":", color="0.45", lw=0.9, label="predicted = measured (a–f)"),
                Line2D([], [], ls="--", color="0.35", lw=1.0, label=r"$\pi_{\mathrm{ref}}$ unchanged (g, h)"),
                Line2D([], [], ls="-.", color="0.45", lw=1.0, label="200-sample floor (g, h)")]
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def _pooled(mae: pd.DataFrame, beta: float, step: int, model: str) -> pd.Series:
    return mae[np.isclose(mae.beta, beta) & (mae.step == step) & (mae.model == model)].iloc[0]


def _ci(r: pd.Series) -> str:
    return f"{r.mae:.3f} ({r.mae_lo:.3f}-{r.mae_hi:.3f})"


def caption(t: dict[str, pd.DataFrame]) -> str:
    data, mae = t["data"], t["mae"]
    lo_b, hi_b = min(BETAS), max(BETAS)
    first, last = min(STEPS), max(STEPS)
    n_q = int(mae.prompts.max())
    seeds = int(data.seed.nunique())
    k5, s5, t5 = (_pooled(mae, lo_b, first, m) for m in ("kernel", "shift", "tabular"))
    k20, s20 = (_pooled(mae, lo_b, 20, m) for m in ("kernel", "shift"))
    # from step 80 on: how far apart the three flows' pooled MAE lie, at either beta
    late = mae[(mae.step >= 80) & mae.model.isin(["kernel", "coupled", "tabular"])]
    spread = late.groupby(["beta", "step"]).mae.agg(lambda v: v.max() - v.min()).max()
    flows_end = mae[(mae.step == last) & mae.model.isin(["kernel", "coupled", "tabular"])]
    shift_end = [_pooled(mae, b, last, "shift").mae for b in BETAS]
    floor_end = [_pooled(mae, b, last, "shift").floor for b in BETAS]
    return (
        f"Figure 33. The finite-time predictors against the trained small GPT, question by question: {seeds} "
        f"seeds x {n_q // seeds} binary questions trained jointly in one model (G = 8, Adam lr 3e-3, {last} "
        f"steps). At each step every model is fitted on half the questions from 200-sample counts and predicts "
        f"the other half (then the halves swap). (a-c) beta = {lo_b:g}, (d-f) beta = {hi_b:g}: each "
        f"held-out prediction against the exact P(correct) at steps {', '.join(str(s) for s in STEPS)} (logit "
        f"axes; the flows' dots nested, the kernel's smallest). (g, h) Held-out MAE over the {n_q} questions with 95% bootstrap intervals, the floor of a "
        f"200-sample measurement (dash-dotted) and pi_ref unchanged (grey, dashed); the shift is dashed. At beta = "
        f"{lo_b:g} the shared model first lowers some questions; of the four predictors only the kernel "
        f"measured at the base model follows that fall: at step {first} its MAE is "
        f"{_ci(k5)} against the refitted shift's {_ci(s5)} and the tabular flow's {t5.mae:.3f}, at step 20 "
        f"{k20.mae:.3f} against {s20.mae:.3f}. From step 80 on the kernel, coupled and tabular flows agree "
        f"within {plotting.at_most(spread, '.4f')}; at step {last} they reach {flows_end.mae.min():.4f}-{flows_end.mae.max():.4f}, "
        f"below the floors ({min(floor_end):.4f}, {max(floor_end):.4f}), where the shift stays at "
        f"{shift_end[0]:.4f} and {shift_end[1]:.4f}."
    )


SPEC = FigureSpec(33, "predict_over_training", caption, tables, render, __name__)
