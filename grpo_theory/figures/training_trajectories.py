"""Figure 16: training trajectories of the small GPT against the flow (committed runs)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec


def draw(df: pd.DataFrame) -> Figure:
    """Figure 16: trained pi_t(a) per run against the fitted flow and grpo_steps, one panel per question."""
    qs = list(dict.fromkeys(df.question))
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.5, ncols=len(qs))
    runs = list(dict.fromkeys(df.run))
    col = dict(zip(runs, ["#08306b", "#2171b5", "#6baed6", "#e6550d"]))
    for ax, q in zip(axes, qs):
        d = df[df.question == q]
        for run in runs:
            r = d[d.run == run]
            tr, fl, st = (r[r.kind == k].sort_values("step") for k in
                          ("trained", "flow (fitted time scale)", "grpo_steps (lr = time scale)"))
            c = float(r.time_scale.iloc[0])
            ax.plot(tr.step.clip(lower=1), tr.pi, "-", color=col[run], lw=1.2, label=f"{run} (c = {c:.2g})")
            # each run's fitted flow in the run's colour, so that the pairs read without a key
            ax.plot(fl.step.clip(lower=1), fl.pi, ":", color=col[run], lw=1.1)
            ax.plot(st.step.clip(lower=1)[::4], st.pi[::4], "o", ms=1.8, color=col[run], mec="none", alpha=0.8)
        ax.axhline(d.predicted.iloc[0], color="0.5", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("training step")
        plotting.panel(ax, "abcdefgh"[qs.index(q)], rf"question {q}: $\pi_{{\mathrm{{ref}}}}(a)$ = "
                       f"{d.pi_ref.iloc[0]:.3f}, predicted {d.predicted.iloc[0]:.3f}", fontsize=7)
    axes[0].set_ylabel(r"$\pi_t(a)$")
    handles = axes[0].get_legend_handles_labels()[0]
    handles += [Line2D([], [], ls=":", color="0.3", lw=1.1, label="flow, time scale c fitted per run"),
                Line2D([], [], ls="", marker="o", ms=2, color="0.4", label="plain gradient steps, step c"),
                Line2D([], [], color="0.5", lw=0.8, label="predicted stationary point")]
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def tables(inputs):
    return {"data": inputs.results_table("fig16_trajectories.csv")}


def render(t):
    return draw(t["data"])


SPEC = FigureSpec(
    16, "training_trajectories",
    "Figure 16. Training trajectories of the small GPT (G = 8, beta = 0.5, reverse penalty, seed 0): the "
    "probability of the rewarded answer for the questions with the lowest and the highest pi_ref, at "
    "Adam lr 3e-3, 1e-3, 3e-4 and with 4 inner updates per batch (solid), against the gradient flow "
    "from pi_ref with its time scale fitted to each run (dotted) and dynamics.grpo_steps at that step "
    "size (dots); grey line: the predicted stationary point. Take-away: every run ends at the "
    "prediction, sooner with a larger lr or more inner updates (fitted flow time per step c = 0.05, "
    "0.11, 0.30 and 0.60 on the left), but the path is not the flow's: a network run lags at first, "
    "then rises faster than the flow and overshoots (lr 3e-3: 0.90 at step 30 against 0.79). Where "
    "there is a separatrix, that overshoot is what crosses it (docs/results.md).",
    tables, render, __name__)
