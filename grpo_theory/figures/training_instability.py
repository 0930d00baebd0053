"""The SmolLM2 instability: a run that collapses, against the flow, and the same seed
after a learning-rate warm-up (committed runs of experiments/smollm2_instability.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..dynamics import flow
from ..problem import Objective, Question
from ._spec import FigureSpec

#: the study's configuration (experiments/smollm2_instability.py)
OBJECTIVE = dict(group_size=8, beta=0.5, penalty="reverse")
#: a run "collapses" when some prompt ends this far from its predicted stationary point
COLLAPSE = 0.5


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value", ":": "reference", "o": "point"}


def variant(lr: float, warmup: int) -> str:
    """The label of an optimiser setting."""
    return f"Adam lr {lr:g}" + (f", warm-up {int(warmup)}" if warmup else "")


def per_run(analysis: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its setting and the largest |measured - predicted| over its prompts."""
    a = analysis.assign(abs_error=(analysis.measured - analysis.predicted).abs())
    runs = a.groupby("run", sort=False).agg(seed=("seed", "first"), learning_rate=("learning_rate", "first"),
                                            warmup_steps=("warmup_steps", "first"), steps=("steps", "first"),
                                            worst=("abs_error", "max"), mae=("abs_error", "mean"),
                                            run_drop=("run_drop", "first")).reset_index()
    runs["variant"] = [variant(lr, w) for lr, w in zip(runs.learning_rate, runs.warmup_steps)]
    return runs


def shown_runs(runs: pd.DataFrame) -> tuple[pd.Series, pd.Series | None]:
    """The plain lr-1e-3 run that ends farthest from the theory, and the same seed after a warm-up."""
    plain = runs[(runs.warmup_steps == 0) & np.isclose(runs.learning_rate, runs.learning_rate.max())]
    worst = plain.loc[plain.worst.idxmax()]
    warm = runs[(runs.warmup_steps > 0) & (runs.seed == worst.seed)]
    return worst, (warm.iloc[0] if len(warm) else None)


def _flow_rows(analysis: pd.DataFrame, run: str, step_max: float) -> pd.DataFrame:
    """The exact-gradient flow from pi_ref of each prompt, on the run's step axis (time = c x step, c
    fitted to the run's early trajectory by experiments/convergence_analysis.py)."""
    obj = Objective(**OBJECTIVE)
    steps = np.unique(np.concatenate([[0.0], np.geomspace(1.0, step_max, 200)]))
    out = []
    for _, r in analysis[analysis.run == run].iterrows():
        q = Question([float(r.pi_ref), 1 - float(r.pi_ref)], rewards=[1, 0])
        pi = flow(q, obj, q.pi_ref, float(r.time_scale) * steps, with_points=False).pi[:, 0]
        out.append(pd.DataFrame(dict(run=run, question=r.question, step=steps, p=pi, kind="flow")))
    return pd.concat(out, ignore_index=True)


def tables(inputs) -> dict[str, pd.DataFrame]:
    analysis = inputs.results_table("smollm2_instability.csv")
    traj = inputs.results_table("smollm2_instability_trajectories.csv")
    runs = per_run(analysis)
    worst, warm = shown_runs(runs)
    names = [worst.run] + ([warm.run] if warm is not None else [])
    keep = traj[traj.run.isin(names)].assign(kind="trained")
    start = analysis[analysis.run.isin(names)][["run", "question", "pi_ref"]].rename(columns={"pi_ref": "p"})
    keep = pd.concat([start.assign(step=0.0, kind="trained"), keep], ignore_index=True)      # step 0: pi_ref
    # the flow's clock is fitted on the run that does not collapse at once (a collapsed run has no
    # rise to fit)
    clock = warm.run if warm is not None else worst.run
    data = pd.concat([keep, _flow_rows(analysis, clock, float(keep.step.max())).assign(run=worst.run)],
                     ignore_index=True)
    data = data.merge(analysis[["run", "question", "predicted", "pi_ref"]].drop_duplicates(["run", "question"]),
                      on=["run", "question"], how="left")
    return {"data": data, "runs": runs}


def render(t: dict[str, pd.DataFrame]) -> Figure:
    data, runs = t["data"], t["runs"]
    worst, warm = shown_runs(runs)
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.0, ncols=3,
                                    gridspec_kw=dict(width_ratios=[1.15, 1.15, 0.9]))
    # each prompt coloured by its pi_ref(correct) on the ordered map, log scale (its index told nothing, and 8
    # neighbouring shades could not be told apart): the two clusters of prompts, low and high, differ in colour
    ref = data[data.run == worst.run].groupby("question", sort=False).pi_ref.first()
    colours = dict(zip(ref.index, plotting.order_colors(list(ref), log=True)))
    for ax, run, letter in ((axes[0], worst, "a"), (axes[1], warm, "b")):
        if run is None:
            ax.set_axis_off()
            continue
        d = data[(data.run == run.run) & (data.kind == "trained")]
        for qn, g in d.groupby("question", sort=False):
            g = g.sort_values("step")
            ax.plot(g.step, g.p, color=colours.get(qn, "0.5"), lw=1.1)
        for qn, g in data[(data.run == worst.run) & (data.kind == "flow")].groupby("question", sort=False):
            ax.plot(g.step, g.p, ":", color=colours.get(qn, "0.5"), lw=0.9)
        ax.set_xscale("symlog", linthresh=1.0, linscale=0.3)
        ax.set_xlim(0, None)
        ax.set_xlabel("training step")
        ax.set_ylim(-0.02, 1.02)
        plotting.panel(ax, letter, f"seed {int(run.seed)}, {run.variant}", fontsize=7.5)
    axes[0].set_ylabel("P(correct answer)")
    ax = axes[2]
    order = list(dict.fromkeys(runs.sort_values(["warmup_steps", "learning_rate"]).variant))
    for i, v in enumerate(order):
        g = runs[runs.variant == v]
        ax.plot(np.full(len(g), i) + np.linspace(-0.15, 0.15, len(g)), g.worst, "o", ms=3.5,
                color=plotting.METHOD_COLORS["trained"])
    plotting.reference(ax.axhline(COLLAPSE, color="0.5", lw=0.7, ls="-."))
    ax.set_xticks(range(len(order)), [v.replace("Adam ", "").replace(", ", ",\n") for v in order])
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_yscale("log")
    ax.set_ylabel("largest |measured − predicted|")
    plotting.panel(ax, "c", "every seed", fontsize=7.5)
    handles = [Line2D([], [], color="0.3", lw=1.1, label=r"trained (colour: its $\pi_{\mathrm{ref}}$, dark = low)"),
               Line2D([], [], color="0.3", ls=":",
                      label=r"exact-gradient flow from $\pi_{\mathrm{ref}}$ (time scale fitted to (b))"),
               Line2D([], [], color="0.5", ls="-.", lw=0.7, label=f"(c) collapse threshold {COLLAPSE}")]
    plotting.legend_below(fig, handles, ncol=3)
    return fig


def last_step_error(data: pd.DataFrame, run: str) -> float:
    """The largest |p - predicted| over the prompts of ``run`` at its last logged training step."""
    tr = data[(data.run == run) & (data.kind == "trained")]
    last = tr[tr.step == tr.step.max()]
    return float((last.p - last.predicted).abs().max())


def caption(t: dict[str, pd.DataFrame]) -> str:
    runs = t["runs"]
    worst, warm = shown_runs(runs)
    counts = "; ".join(f"{v}: {int((g.worst > COLLAPSE).sum())} of {len(g)}"
                       for v, g in runs.groupby("variant", sort=False))
    last = None if warm is None else last_step_error(t["data"], warm.run)
    warm_text = ("" if warm is None else
                 f" (b) The same seed with {int(warm.warmup_steps)} warm-up steps: every prompt's measured "
                 f"value (its mean over the last 30% of the steps) is within {plotting.at_most(warm.worst, '.3f')} of the theory; the "
                 f"last plotted step, one noisy sample of the run, is within {plotting.at_most(last, '.3f')}.")
    return (
        "Figure {n}. An optimiser instability on SmolLM2-135M (8 multiple-choice prompts, G = 8, beta = 0.5, "
        "reverse penalty, sequence level, last MLP trained). (a) The seed-"
        f"{int(worst.seed)} run at {worst.variant}: its largest error is {worst.worst:.3f}; the exact-gradient "
        "flow from pi_ref (dotted; its time scale fitted to the run in (b)) has no such fall." + warm_text
        + f" (c) Runs with a prompt more than {COLLAPSE} from its prediction: {counts}."
    )


SPEC = FigureSpec(24, "training_instability", lambda t: caption(t).replace("{n}", "24"), tables, render, __name__)
