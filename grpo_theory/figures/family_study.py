"""Figure 29: the GRPO family study, every configuration and seed (the committed rows of
experiments/family_study.py: the small GPT, 11 configurations x 3 seeds x 4 binary questions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .. import plotting
from ..errors import InvalidInputError
from ._spec import FigureSpec

#: the study's target for a configuration: MAE and largest error of P(correct) over its questions and seeds
#: (experiments/family_study.py, ``TARGET_MAE``, ``TARGET_MAX``)
TARGET_MAE, TARGET_MAX = 0.01, 0.03
#: each configuration's label and palette colour (the family member it trains); GSPO's sequence-level ratio
#: trains GRPO's objective (reverse k3, scale), so it takes GRPO's colour
CONFIGS = {
    "filter_G2": ("ties filtered, G = 2", "ties filtered"),
    "filter_G8": ("ties filtered, G = 8", "ties filtered"),
    "filter_L2": ("ties filtered, two-token", "ties filtered"),
    "rloo_G4": ("RLOO, G = 4", "RLOO"),
    "passk2_G4": ("pass@2, G = 4", "pass@2"),
    "passk4_G4": ("pass@4, G = 4 (no signal)", "pass@4"),
    "passk4_G8": ("pass@4, G = 8", "pass@4"),
    "entropy_kl": ("entropy 0.3, β = 0.3", "entropy bonus"),
    "entropy_nokl": ("entropy 1, no KL", "entropy bonus"),
    "entropy_L2": ("entropy 0.3, two-token", "entropy bonus"),
    "gspo_L2": ("GSPO ratio, two-token", "GRPO reverse/scale"),
}
#: the colour key's name of a family member where the palette's differs
MEMBER_LABEL = {"GRPO reverse/scale": "GRPO (GSPO's ratio)"}
#: marker of the answer length (a key local to this figure)
LENGTH_MARK = {"sequence": ("o", "one-token answers"), "token": ("^", "two-token answers, token level")}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value", ":": "reference", "o": "point", "^": "key"}


def points(rows: pd.DataFrame) -> pd.DataFrame:
    """The study's rows in the figure's order of configurations, with |error| and the label."""
    unknown = sorted(set(rows.config) - set(CONFIGS))
    if unknown:

        raise InvalidInputError(f"family_study.csv: unknown configuration(s) {unknown}")
    order = {c: i for i, c in enumerate(CONFIGS)}
    out = rows.assign(order=rows.config.map(order), abs_error=(rows.measured - rows.predicted).abs(),
                      label=rows.config.map(lambda c: CONFIGS[c][0]))
    return out.sort_values(["order", "seed", "question"], kind="stable").drop(columns="order").reset_index(drop=True)


def per_config(pts: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: seeds, points, MAE, largest error (of P(correct); over every answer for the
    two-token ones), and whether it meets the target."""
    out = pts.groupby("config", sort=False).agg(
        label=("label", "first"), level=("level", "first"), group_size=("group_size", "first"),
        beta=("beta", "first"), seeds=("seed", "nunique"), points=("question", "size"),
        mae=("abs_error", "mean"), max_error=("abs_error", "max"),
        max_all_answers=("max_abs_err_all_answers", "max")).reset_index()
    out["meets_target"] = (out.mae <= TARGET_MAE) & (out.max_error <= TARGET_MAX)
    return out


def tables(inputs) -> dict[str, pd.DataFrame]:
    pts = points(inputs.results_table("family_study.csv"))
    return {"data": pts, "configs": per_config(pts)}


def draw(pts: pd.DataFrame, configs: pd.DataFrame) -> Figure:
    """(a) measured against predicted P(correct), every run and question of :func:`points`; (b) each
    configuration's errors (every seed and question) and its MAE (:func:`per_config`) against the targets."""
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.9, ncols=2,
                                    gridspec_kw=dict(width_ratios=[1.0, 1.7]))
    ax = axes[0]
    plotting.reference(ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=0))
    for c, d in pts.groupby("config", sort=False):
        mark = LENGTH_MARK[d.level.iloc[0]][0]
        ax.plot(d.predicted, d.measured, ls="", marker=mark, ms=3.6, color=plotting.COLORS[CONFIGS[c][1]],
                mec="black", mew=0.3)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("predicted P(correct)")
    ax.set_ylabel("measured P(correct)")
    plotting.panel(ax, "a", "every run and question", fontsize=7.5)

    ax = axes[1]
    floor = max(pts.abs_error[pts.abs_error > 0].min() / 3, 1e-10)
    offsets = {s: o for s, o in zip(sorted(pts.seed.unique()), np.linspace(-0.25, 0.25, pts.seed.nunique()))}
    for i, (c, d) in enumerate(pts.groupby("config", sort=False)):
        mark = LENGTH_MARK[d.level.iloc[0]][0]
        x = i + d.seed.map(offsets).to_numpy() + np.tile(np.linspace(-0.04, 0.04, 4), len(d))[:len(d)]
        ax.plot(x, np.maximum(d.abs_error, floor), ls="", marker=mark, ms=3.2,
                color=plotting.COLORS[CONFIGS[c][1]], mec="black", mew=0.3)
        mae = configs.loc[configs.config == c, "mae"].iloc[0]
        ax.plot([i - 0.38, i + 0.38], [mae, mae], color="black", lw=1.2)
    plotting.reference(ax.axhline(TARGET_MAX, ls="-.", color="0.35", lw=0.8))
    plotting.reference(ax.axhline(TARGET_MAE, ls="-.", color="0.65", lw=0.8))
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 0.1)
    ax.set_xticks(range(len(configs)), list(configs.label), rotation=40, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(configs) - 0.4)
    ax.set_ylabel("|measured − predicted|")
    plotting.panel(ax, "b", "each configuration: 3 seeds × 4 questions", fontsize=7.5)

    # the colour key: one patch per family member (a colour, not a marker)
    members = list(dict.fromkeys(name for _, name in CONFIGS.values()))
    handles = [Patch(facecolor=plotting.COLORS[m], edgecolor="black", lw=0.3, label=MEMBER_LABEL.get(m, m))
               for m in members]
    handles += [Line2D([], [], ls="", marker=m, ms=3.6, mfc="0.7", mec="black", mew=0.3, label=text)
                for m, text in LENGTH_MARK.values()]
    handles += [Line2D([], [], color="black", lw=1.2, label="(b) MAE of the configuration"),
                Line2D([], [], ls="-.", color="0.35", lw=0.8, label=f"target: largest ≤ {TARGET_MAX:g}"),
                Line2D([], [], ls="-.", color="0.65", lw=0.8, label=f"target: MAE ≤ {TARGET_MAE:g}"),
                Line2D([], [], ls=":", color="0.45", lw=0.9, label="(a) measured = predicted")]
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def render(t: dict[str, pd.DataFrame]) -> Figure:
    return draw(t["data"], t["configs"])


def caption(t: dict[str, pd.DataFrame]) -> str:
    pts, configs = t["data"], t["configs"]
    worst = configs.loc[configs.max_error.idxmax()]
    exact = configs[configs.max_error < 1e-6]
    two = configs[configs.level == "token"]
    return (
        f"Figure 29. The GRPO family trained on the small GPT against the exact engine's prediction: "
        f"{len(configs)} configurations x {int(configs.seeds.max())} seeds x {int(pts.question.nunique())} "
        f"questions ({len(pts)} points, {int(pts.steps.max())} steps a run, reverse k3 penalty): tie "
        "filtering, RLOO, the pass@k advantage and an entropy bonus (with and without the KL penalty) on "
        "one-token answers; tie filtering, the entropy bonus and GSPO's sequence-level ratio on two-token "
        f"answers at token level ({len(two)} configurations, triangles, predicted by the tree engine). Colour is the family member (keyed below). (a) Measured P(correct) against predicted; (b) each "
        "point's |error| with its configuration's MAE (bars) and the study's targets (dash-dotted). "
        f"{int(configs.meets_target.sum())} of {len(configs)} configurations meet both targets (MAE at most "
        f"{TARGET_MAE:g}, largest at most {TARGET_MAX:g}); the largest error is {worst.max_error:.4f} "
        f"({worst.label}), the MAEs {plotting.sci_text(configs.mae.min(), plain=True)} to {configs.mae.max():.4f}. "
        f"{len(exact)} configurations are exact up to the optimiser (largest error {plotting.sci_text(exact.max_error.max(), plain=True)}): "
        "ties filtered at G = 2, where every kept group pushes along one direction, and pass@4 at G = 4, where "
        "no group carries a signal and the policy stays at pi_ref. On two-token answers the largest error over "
        f"every answer, not only the correct one, is {two.max_all_answers.max():.4f}."
    )


SPEC = FigureSpec(29, "family_study", caption, tables, render, __name__)
