"""Figure 27: the per-configuration validation over five seeds, the project's main claim (the committed
rows of experiments/validate_seeds.py: the small GPT, every gated configuration, seeds 0-4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec

#: the target a seed must meet: the mean |measured - predicted| over its questions and the largest
#: (experiments/validate_seeds.py, ``seeds_meeting_target``)
TARGET_MAE, TARGET_MAX = 0.01, 0.05
#: a measurement within this of a stable point has reached it (experiments/validate_seeds.py, ``NEAR``)
NEAR = 0.05
#: the study's main setting: every question of a seed trained jointly in one model at Adam lr 3e-3
SETTING = dict(mode="joint", learning_rate=0.003, prediction="trainer")
#: marker of each penalty (a key local to this figure)
PENALTY_MARK = {"reverse": "o", "direct": "^"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value", ":": "reference", "o": "point", "^": "key"}


def per_seed(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (configuration, seed) of the gated configurations in :data:`SETTING`: its questions,
    mean and largest |error|, whether it meets the target, and how many questions ended at a wrong vertex
    (|error| > 0.5) or at the other stable point (``same_basin`` false, within :data:`NEAR` of it)."""
    g = rows[rows.gated.astype(bool)]
    for k, v in SETTING.items():
        g = g[np.isclose(g[k], v)] if isinstance(v, float) else g[g[k] == v]
    g = g.assign(abs_error=g.error.abs(),
                 wrong_vertex=g.error.abs() > 0.5,
                 other_stable=~g.same_basin.astype(bool) & ((g.measured - g.nearest_stable).abs() <= NEAR))
    out = g.groupby(["config", "seed"], sort=False).agg(
        group_size=("group_size", "first"), beta=("beta", "first"), penalty=("penalty", "first"),
        steps=("steps_run", "max"), questions=("question", "size"), mae=("abs_error", "mean"),
        max_error=("abs_error", "max"), wrong_vertex=("wrong_vertex", "sum"),
        other_stable=("other_stable", "sum")).reset_index()
    out["meets_target"] = (out.mae <= TARGET_MAE) & (out.max_error <= TARGET_MAX)
    return out.sort_values(["group_size", "beta", "penalty"], ascending=[True, True, False],
                           kind="stable").reset_index(drop=True)


def per_config(seeds: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: seeds, seeds meeting the target, points at a wrong vertex or another
    stable point, the range of its per-seed MAE and its largest error."""
    return seeds.groupby("config", sort=False).agg(
        group_size=("group_size", "first"), beta=("beta", "first"), penalty=("penalty", "first"),
        seeds=("seed", "size"), meeting=("meets_target", "sum"), points=("questions", "sum"),
        wrong_vertex=("wrong_vertex", "sum"), other_stable=("other_stable", "sum"),
        mae_min=("mae", "min"), mae_max=("mae", "max"), max_error=("max_error", "max")).reset_index()


def tables(inputs) -> dict[str, pd.DataFrame]:
    seeds = per_seed(inputs.results_table("validate_seeds.csv"))
    return {"data": seeds, "configs": per_config(seeds)}


def render(t: dict[str, pd.DataFrame]) -> Figure:
    seeds, configs = t["data"], t["configs"]
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=4.3, nrows=2, ncols=1, sharex=True)
    axes = axes[:, 0]
    betas = sorted(configs.beta.unique())
    cols = dict(zip(betas, plotting.beta_colors(betas)))
    xpos = {c: i for i, c in enumerate(configs.config)}
    offsets = np.linspace(-0.24, 0.24, int(seeds.groupby("config").size().max()))
    for ax, col, target, label in ((axes[0], "mae", TARGET_MAE, "per-seed mean |error|"),
                                   (axes[1], "max_error", TARGET_MAX, "per-seed largest |error|")):
        for c, d in seeds.groupby("config", sort=False):
            r = d.iloc[0]
            ax.plot(xpos[c] + offsets[:len(d)], d[col], ls="", marker=PENALTY_MARK[r.penalty], ms=4.2,
                    color=cols[r.beta], mec="black", mew=0.4)
        plotting.reference(ax.axhline(target, color="0.35", lw=0.8, ls="-."))
        ax.set_yscale("log")
        ax.set_ylabel(label)
        for i, G in enumerate(sorted(configs.group_size.unique())[:-1]):
            last = configs[configs.group_size == G].index.max()
            plotting.reference(ax.axvline(last + 0.5, color="0.8", lw=0.6, ls=":"))   # a boundary between G
    lo = min(seeds.mae.min(), seeds.max_error.min())
    axes[0].set_ylim(lo / 3, 8.0)
    axes[1].set_ylim(lo / 3, 3.0)
    for _, r in configs.iterrows():              # seeds meeting the target, above each configuration
        axes[0].text(xpos[r.config], 0.45, f"{int(r.meeting)}/{int(r.seeds)}", ha="center", va="center",
                     fontsize=7, weight="bold" if r.meeting < r.seeds else "normal")
    for G, d in configs.groupby("group_size", sort=True):
        axes[0].text(d.index.to_numpy().mean(), 3.0, plotting.g_text(G), ha="center", va="center", fontsize=7.5)
    plotting.panel(axes[0], "a", f"mean over each seed's questions (target ≤ {TARGET_MAE:g}); "
                   "seeds meeting the target", fontsize=7.5)
    plotting.panel(axes[1], "b", f"largest over each seed's questions (target ≤ {TARGET_MAX:g})", fontsize=7.5)
    axes[1].set_xticks(range(len(configs)), [f"{p}\nβ = {b:g}" for p, b in zip(configs.penalty, configs.beta)])
    axes[1].set_xlim(-0.6, len(configs) - 0.4)
    handles = [Line2D([], [], ls="", marker="o", ms=4.2, color=cols[b], mec="black", mew=0.4,
                      label=rf"$\beta$ = {b:g}") for b in betas]
    handles += [Line2D([], [], ls="", marker=m, ms=4.2, mfc="0.7", mec="black", mew=0.4, label=f"{p} penalty")
                for p, m in PENALTY_MARK.items()]
    handles.append(Line2D([], [], color="0.35", lw=0.8, ls="-.", label="target"))
    plotting.legend_below(fig, handles, ncol=5)
    return fig


def _range(lo: float, hi: float) -> str:
    return f"{lo:.4f}-{hi:.4f}"


def caption(t: dict[str, pd.DataFrame]) -> str:
    seeds, configs = t["data"], t["configs"]
    n_seeds, n_q = int(configs.seeds.max()), int(seeds.questions.max())
    good = configs[configs.meeting == configs.seeds]
    bad = configs[configs.meeting < configs.seeds]
    misses = "; ".join(
        f"at G = {int(r.group_size)}, {r.penalty} penalty, beta = {r.beta:g}, {int(r.meeting)} of {int(r.seeds)} seeds"
        + (f" ({int(r.wrong_vertex)} of {int(r.points)} questions collapsed to a wrong vertex through the shared "
           "weights, error near 1)" if r.wrong_vertex else "")
        + (f" ({int(r.other_stable)} of {int(r.points)} questions ended at the theory's other stable point, "
           f"largest error {r.max_error:.2f})" if r.other_stable else "")
        for _, r in bad.iterrows())
    return (
        f"Figure 27. The prediction against the trained small GPT in each of the {len(configs)} gated "
        f"configurations (G = 2, 8, 64; beta = 0.5, 1; reverse and direct penalty), {n_seeds} seeds each; a seed "
        f"draws {n_q} questions and trains them jointly in one model (Adam lr 3e-3, {int(seeds.steps.max())} "
        f"steps). (a) Each seed's mean |measured - predicted| over its questions, with the number of seeds "
        f"meeting the target; (b) each seed's largest (circles: reverse penalty, triangles: direct). A seed meets the target when its mean is at most "
        f"{TARGET_MAE:g} and its largest at most {TARGET_MAX:g} (dash-dotted). In {len(good)} of the "
        f"{len(configs)} configurations all {n_seeds} seeds meet it (per-seed mean "
        f"{_range(good.mae_min.min(), good.mae_max.max())}, largest error {good.max_error.max():.4f}). The "
        f"misses: {misses}."
    )


SPEC = FigureSpec(27, "seed_validation", caption, tables, render, __name__)
