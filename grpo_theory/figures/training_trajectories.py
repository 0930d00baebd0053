"""Figure 16: training trajectories of the small GPT against the flow (committed runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", ":": "reference", "-.": "marked value", "o": "point"}


def _log_spaced(steps: pd.Series, n: int = 12) -> np.ndarray:
    """Positions of the logged steps nearest to ``n`` log-spaced steps from 1 to the last (each once)."""
    s = steps.to_numpy(dtype=float)
    targets = np.geomspace(1.0, max(float(s.max()), 1.0), n)
    return np.unique([int(np.abs(s - t).argmin()) for t in targets])


def steps_off_flow(df: pd.DataFrame) -> float:
    """The largest |plain gradient steps - fitted flow| over every run, question and logged step."""
    fl = df[df.kind == "flow (fitted time scale)"].set_index(["run", "question", "step"]).pi
    st = df[df.kind == "grpo_steps (lr = time scale)"].set_index(["run", "question", "step"]).pi
    return float((fl - st).abs().max())


def draw(df: pd.DataFrame) -> Figure:
    """Figure 16: trained pi_t(a) per run against the fitted flow and grpo_steps, one panel per question."""
    qs = list(dict.fromkeys(df.question))
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.5, ncols=len(qs))
    runs = list(dict.fromkeys(df.run))
    col = dict(zip(runs, plotting.setting_colors(len(runs))))
    for ax, q in zip(axes, qs):
        d = df[df.question == q]
        for run in runs:
            r = d[d.run == run]
            tr, fl, st = (r[r.kind == k].sort_values("step") for k in
                          ("trained", "flow (fitted time scale)", "grpo_steps (lr = time scale)"))
            ax.plot(tr.step, tr.pi, "-", color=col[run], lw=1.2, label=run)
            # each run's fitted flow in the run's colour, so that the pairs read without a key
            ax.plot(fl.step, fl.pi, ":", color=col[run], lw=1.1)
            # the plain steps lie on their flow: filled circles (computed points; open ones would say "unstable")
            # edged in white at about log-spaced steps, so they show on it
            ax.plot(st.step.iloc[_log_spaced(st.step)], st.pi.iloc[_log_spaced(st.step)], "o", ms=3.4,
                    mfc=col[run], mec="white", mew=0.6, zorder=3)
        ax.axhline(d.predicted.iloc[0], color="0.5", lw=0.8, ls="-.")
        # log in the step, but step 0 (pi_ref) kept: linear below 1
        ax.set_xscale("symlog", linthresh=1, linscale=0.4)
        ax.set_xlim(0, df.step.max() * 1.3)
        ax.set_xlabel("training step")
        plotting.panel(ax, "abcdefgh"[qs.index(q)], rf"question {q}: $\pi_{{\mathrm{{ref}}}}(a)$ = "
                       f"{d.pi_ref.iloc[0]:.3f}, predicted {d.predicted.iloc[0]:.3f}", fontsize=7)
    axes[0].set_ylabel(r"$\pi_t(a)$")
    handles = axes[0].get_legend_handles_labels()[0]
    flow_label = r"flow from $\pi_{\mathrm{ref}}$, time scale c fitted per run"
    handles += [Line2D([], [], ls=":", color="0.3", lw=1.1, label=flow_label),
                Line2D([], [], ls="", marker="o", ms=3.4, mfc="0.3", mec="white", mew=0.6,
                       label="plain gradient steps, step c"),
                Line2D([], [], color="0.5", lw=0.8, ls="-.", label="predicted stationary point")]
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def tables(inputs):
    return {"data": inputs.results_table("fig16_trajectories.csv")}


def render(t):
    return draw(t["data"])


TRAINED, FLOW = "trained", "flow (fitted time scale)"


def early_lag(g: pd.DataFrame) -> tuple[int, int]:
    """For one run on one question: of the logged steps before the fitted flow is half-way from pi_ref to
    the prediction, how many the run is behind its flow at, and how many there are."""
    tr = g[g.kind == TRAINED].set_index("step").pi
    fl = g[g.kind == FLOW].set_index("step").pi
    p0, pr = float(g.pi_ref.iloc[0]), float(g.predicted.iloc[0])
    up = np.sign(pr - p0)
    early = fl.index[(fl.index > 0) & ((fl - (p0 + pr) / 2) * up < 0)]
    return int(((tr.loc[early] - fl.loc[early]) * up < 0).sum()), len(early)


def leads_at_first(g: pd.DataFrame) -> bool:
    """Whether the run is ahead of its fitted flow at its first logged step after 0."""
    tr = g[(g.kind == TRAINED) & (g.step > 0)].sort_values("step")
    fl = g[(g.kind == FLOW) & (g.step > 0)].sort_values("step")
    up = np.sign(float(g.predicted.iloc[0]) - float(g.pi_ref.iloc[0]))
    return bool((tr.pi.iloc[0] - fl.pi.iloc[0]) * up > 0)


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption; its numbers (time scales, the lag, the overshoot, the end) read from the plotted table."""
    df = t["data"]
    qs = list(dict.fromkeys(df.question))
    a = df[df.question == qs[0]]
    runs = list(dict.fromkeys(df.run))
    single = [r for r in runs if int(a[a.run == r].inner_updates.iloc[0]) == 1]
    multi = [r for r in runs if r not in single]
    lags = [early_lag(a[a.run == r]) for r in single]
    lag = "lag their flow at first" if all(k > n / 2 for k, n in lags) else "do not all lag their flow at first"
    lead_b = all(leads_at_first(df[(df.question == qs[1]) & (df.run == r)]) for r in runs)
    lead_multi = all(leads_at_first(a[a.run == r]) for r in multi)
    fast = a[(a.run == single[0]) & (a.kind == TRAINED)]
    peak = fast.loc[fast.pi.idxmax()]
    last = df[df.kind == TRAINED].sort_values("step").groupby(["run", "question"]).tail(1)
    end = float((last.pi - last.predicted).abs().max())
    n_early = df[(df.kind == TRAINED) & (df.step > 0) & (df.step <= 20)].groupby(["run", "question"]).size().min()
    cs = ", ".join(f"{a[a.run == r].time_scale.iloc[0]:.2f}" for r in runs)
    return (
        "Figure 16. Training trajectories of the small GPT (G = 8, beta = 0.5, reverse penalty, seed 0): the "
        "probability of the rewarded answer for the questions with the lowest and the highest pi_ref, at "
        f"Adam {', '.join(runs)} (solid; logged at every step up to {n_early}, then sparser), "
        "against the gradient flow from pi_ref with its time scale c fitted to each run (dotted, "
        "its colour) and dynamics.grpo_steps at that step size (circles, on the flow within "
        f"{plotting.at_most(steps_off_flow(df), '.2g')}); grey dash-dotted: the predicted stationary point (the runs' target). "
        f"Take-away: every run ends at the prediction (within {plotting.at_most(end, '.2g')} at its last logged step), sooner with a "
        f"larger lr or more inner updates (fitted flow time per step c = {cs} in (a)). The path is not the "
        f"flow's: in (a) the single-update runs ({', '.join(single)}) {lag} (docs/figures.md "
        f"counts the steps), then rise faster and overshoot ({single[0]}: {peak.pi:.2f} at step "
        f"{int(peak.step)} against {float(peak.predicted):.2f})"
        + (f"; the run with {int(a[a.run == multi[0]].inner_updates.iloc[0])} inner updates is ahead of its "
           "flow at first" if multi and lead_multi else "")
        + (", and in (b) every run is ahead of its flow at its first logged step" if lead_b else "")
        + ".")


SPEC = FigureSpec(16, "training_trajectories", caption, tables, render, __name__)
