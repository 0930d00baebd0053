"""Free generation on SmolLM2, the course of training: Figure 25c (the theory and the two baselines during
the yes/no run) and Figure 25d (the earlier 4-prompt run and its collapse at the larger step; its own
verifier and table, docs/results/smollm2_free_generation.csv). The tables and scores are
:mod:`grpo_theory.figures.free_generation`'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec
from .free_generation import SCORED, SCORED_LINES, SCORED_MARKERS, TARGET, fmt3, log_span, log_ticks, run_tables

#: where Figure 25c puts the end of training on its step axis (each run's last step, 150-225)
END_X = 320.0


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value", "_": "level", "o": "point", "^": "key"}


def tables_during(inputs) -> dict[str, pd.DataFrame]:
    """Figure 25c: ``data``, the MAE over prompts of the theory and the baselines per (beta, seed, kind,
    step) of the yes/no run (intermediate steps from 200 samples a prompt, and the end)."""
    _, _, scores = run_tables(inputs, "free_generation.csv")
    return {"data": scores}


def tables_collapse(inputs) -> dict[str, pd.DataFrame]:
    """Figure 25d: ``data``, the earlier 4-prompt run at two learning rates (pi_ref, the prediction, the
    measurement with its 95% Wilson interval)."""
    old = inputs.results_table("smollm2_free_generation.csv")
    collapse = old[["question", "pi_ref", "predicted", "predicted_lo", "predicted_hi", "measured", "measured_lo",
                    "measured_hi", "learning_rate", "steps", "beta", "max_new_tokens"]].sort_values(
        ["pi_ref", "learning_rate"])
    return {"data": collapse.reset_index(drop=True)}


def _during(ax, scores: pd.DataFrame, beta: float, colour, letter: str, span: tuple[float, float]) -> None:
    """MAE over prompts at each intermediate step and at the end: the seeds' mean, their range as bars."""
    g = scores[scores.beta == beta]
    mid, end = g[g.kind == "intermediate"], g[g.kind == "final"]
    for j, k in enumerate(SCORED):
        m = mid.groupby("step")[f"mae_{k}"].agg(["mean", "min", "max"])
        e = end[f"mae_{k}"]
        x = np.append(m.index.to_numpy(float), END_X) * (1.0 + 0.06 * (j - 1))   # offsets keep bars apart
        y = np.append(m["mean"].to_numpy(), e.mean())
        lo, hi = np.append(m["min"].to_numpy(), e.min()), np.append(m["max"].to_numpy(), e.max())
        ax.plot(x[:-1], y[:-1], ls=SCORED_LINES[k], color=colour, lw=1.0, zorder=2)
        ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt=SCORED_MARKERS[k], ms=3.4, color=colour, mec="0.1", mew=0.4,
                    elinewidth=0.8, ls="", zorder=3)
    plotting.reference(ax.axhline(TARGET, color="0.3", lw=0.7, ls="-."))
    ax.set_xscale("log")
    ax.set_yscale("log")
    steps = sorted(mid.step.unique())
    ax.set_xticks(list(steps) + [END_X], [f"{s:g}" for s in steps] + ["end"])
    log_ticks(ax, span)
    ax.set(xlim=(steps[0] / 1.4, END_X * 1.4), xlabel="training step")
    plotting.panel(ax, letter, f"during training, β = {beta:g}")


def render_during(t: dict[str, pd.DataFrame]) -> Figure:
    """Figure 25c: (a, b) the MAE over prompts during training, one beta each, on one y scale."""
    scores = t["data"]
    betas = sorted(scores.beta.unique())
    colours = dict(zip(betas, plotting.beta_colors(betas)))
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=2.6, ncols=len(betas), sharey=True)
    span = log_span([*scores[[f"mae_{k}" for k in SCORED]].to_numpy().ravel(), TARGET])
    for axis, b, letter in zip(axes, betas, "abcdefgh"):
        _during(axis, scores, b, colours[b], letter, span)
    axes[0].set_ylabel("MAE over prompts")
    names = {"predicted": "theory (flow on a fitted clock)", "shift": "logit shift (refitted each step)",
             "identity": r"$\pi_{\mathrm{ref}}$"}
    handles = ([Line2D([], [], color="0.2", marker=SCORED_MARKERS[k], ms=3.4, ls=SCORED_LINES[k], lw=1.0,
                       label=names[k]) for k in SCORED]
               + [Line2D([], [], color="0.3", lw=0.7, ls="-.", label=f"target MAE {TARGET:g}")])
    plotting.legend_below(fig, handles, ncol=4, columnspacing=1.2, handlelength=2.2)
    return fig


def render_collapse(t: dict[str, pd.DataFrame]) -> Figure:
    """Figure 25d: the earlier run: pi_ref, the prediction, and P(correct) after its fixed steps at two Adam
    steps (circles: the smaller, triangles: the larger)."""
    collapse = t["data"]
    fig, (fx,) = plotting.new_figure(width=plotting.COLUMN, height=3.0)
    lrs = sorted(collapse.learning_rate.unique())
    qs = list(dict.fromkeys(collapse.sort_values("pi_ref").question))
    x0 = {q: i for i, q in enumerate(qs)}
    first = collapse.drop_duplicates("question")
    xs = np.array([x0[q] for q in first.question], float)
    c_old = plotting.beta_colors([float(collapse.beta.iloc[0])])[0]
    fx.plot(xs, first.predicted, ls="", marker="_", ms=13, mew=1.8, color=c_old, zorder=3)
    plotting.reference(fx.plot(xs, first.pi_ref, ls="", marker="_", ms=13, mew=1.8, color="0.62", zorder=2))
    # the two learning rates side by side, each its own marker (an open circle would say "unstable")
    for lr, off, mark in zip(lrs, (-0.17, 0.17), ("o", "^")):
        g = collapse[collapse.learning_rate == lr]
        fx.errorbar([x0[q] + off for q in g.question], g.measured,
                    yerr=[g.measured - g.measured_lo, g.measured_hi - g.measured], fmt=mark, ms=3.6, lw=0.9,
                    color=c_old, mfc=c_old, mec="0.1", ls="", zorder=4)
    fx.set_xticks(range(len(qs)), [q.rstrip("?") for q in qs], rotation=25, ha="right", rotation_mode="anchor")
    steps_old = int(collapse.steps.iloc[0])
    fx.set(ylim=(-0.03, 1.0), xlim=(-0.6, len(qs) - 0.4), ylabel=f"P(correct) after {steps_old} steps")
    fx.set_title(f"An earlier run, {steps_old} steps, β = {float(collapse.beta.iloc[0]):g}")
    handles = [Line2D([], [], color=c_old, marker="_", ms=9, mew=1.8, ls="", label="predicted"),
               Line2D([], [], color="0.62", marker="_", ms=9, mew=1.8, ls="", label=r"$\pi_{\mathrm{ref}}$"),
               Line2D([], [], color=c_old, marker="o", ms=3.6, mec="0.1", ls="",
                      label=f"Adam {plotting.sci_text(lrs[0])}"),
               Line2D([], [], color=c_old, marker="^", ms=3.6, mec="0.1", ls="",
                      label=f"Adam {plotting.sci_text(lrs[-1])}")]
    plotting.legend_below(fig, handles, ncol=2, columnspacing=1.0, handlelength=1.4)
    return fig


def caption_during(t: dict[str, pd.DataFrame]) -> str:
    """Figure 25c's caption, its ranges computed from the plotted scores."""
    mid = t["data"][t["data"].kind == "intermediate"]
    during = []
    for b, g in mid.groupby("beta"):
        per = g.groupby("step")[["mae_predicted", "mae_shift", "mae_identity"]].mean()
        during.append(f"beta = {b:g}: theory {fmt3(per.mae_predicted.min())}-{fmt3(per.mae_predicted.max())}, "
                      f"shift {fmt3(per.mae_shift.min())}-{fmt3(per.mae_shift.max())}, "
                      f"pi_ref {fmt3(per.mae_identity.min())}-{fmt3(per.mae_identity.max())}")
    return ("Figure 25c. The yes/no run of Figure 25a during training (200 samples a prompt), one beta a panel: "
            "the MAE over prompts of the theory, the flow from pi_ref on one clock fitted on the other half of the "
            "prompts (one number per run), of the logit shift, refitted on the other half at each step (one "
            "number per step), and of pi_ref; means over seeds with their range as bars, the end of training "
            f"last; dash-dotted: the target MAE {TARGET:g}. Range over the intermediate steps of the mean MAE: "
            f"{'; '.join(during)}.")


def caption_collapse(t: dict[str, pd.DataFrame]) -> str:
    """Figure 25d's caption, its numbers computed from the plotted table."""
    collapse = t["data"]
    lrs = sorted(collapse.learning_rate.unique())
    big, small = collapse[collapse.learning_rate == lrs[-1]], collapse[collapse.learning_rate == lrs[0]]
    e_small = (small.measured - small.predicted).abs()
    worst = small.loc[e_small.idxmax()]
    near = e_small[e_small.index != e_small.idxmax()]
    below, rest = big[big.measured < big.pi_ref], big[big.measured >= big.pi_ref]
    rest_text = "; ".join(f"{r.question.rstrip('?')} rose from {r.pi_ref:.3f} to {r.measured:.3f}"
                          for r in rest.itertuples())
    return ("Figure 25d. An earlier free-generation run on SmolLM2-135M-Instruct with another verifier (exact "
            "match of the whole completion, so its pi_ref differs from Figure 25a's for the same question; "
            f"seed 0, beta = {float(collapse.beta.iloc[0]):g}, at most {int(collapse.max_new_tokens.iloc[0])} "
            f"tokens, a fixed {int(collapse.steps.iloc[0])} steps, not checked for stationarity): per prompt "
            "pi_ref (grey), the prediction and P(correct) after training at two Adam steps, with 95% Wilson "
            f"intervals of 400 samples. At Adam {plotting.sci_text(lrs[0], plain=True)}, {len(near)} of "
            f"{len(small)} prompts end {fmt3(near.min())}-{fmt3(near.max())} from the prediction and "
            f"{worst.question.rstrip('?')} (pi_ref {worst.pi_ref:.4f}) reaches {worst.measured:.3f} against "
            f"{worst.predicted:.3f}; at {plotting.sci_text(lrs[-1], plain=True)}, {len(below)} of {len(big)} end "
            "below pi_ref" + (f" and {rest_text}" if len(rest) else "") + ": the larger step collapses.")


SPECS = (
    FigureSpec(25, "free_generation_during", caption_during, tables_during, render_during, __name__,
               uses=("free_generation",), part="c"),
    FigureSpec(25, "free_generation_collapse", caption_collapse, tables_collapse, render_collapse, __name__,
               uses=("free_generation",), part="d"),
)
