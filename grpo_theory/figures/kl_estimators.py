"""Figure 21: the trainer's KL, 15 variants x 3 seeds: predicted against measured
(docs/results/kl_study.csv and kl_study_summary.csv, experiments/kl_study.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from .. import plotting
from ..errors import InvalidInputError
from ._spec import FigureSpec

#: the study's configurations, in the order of docs/results.md's table, with their labels (what each amounts to,
#: the "kind", is the tables' ``penalty`` column: the study's ``Objective.regime``)
VARIANTS = {
    "k2_loss": "k2 in the loss",
    "k3_plus_loss_verl_clamps": "k3+ in the loss, verl's clamps",
    "k1_advantage": "k1 in the advantage",
    "k1_reward": "k1 in the reward",
    "k1_reward_eps0": "k1 in the reward, ε = 0",
    "tree_k1_advantage_dr_grpo": "answer tree, k1 in the advantage, token level",
    "k1_loss": "k1 in the loss",
    "abs_loss": "abs in the loss",
    "k3_advantage_clamp10": "k3 in the advantage, clamp 10",
    "k3_low_var_kl_0.8x_critical": "verl's low-variance KL, 0.8 × critical β",
    "k3_low_var_kl_1.25x_critical": "the same, 1.25 × critical β",
    "k3_low_var_kl_1.25x_critical_lr3e-4": "the same, 1.25 ×, lr 3e-4, 3200 steps",
    "k3_low_var_kl_2.5x_critical": "the same, 2.5 × critical β",
    "alone_k3_low_var_kl_1.25x_critical_lr3e-4": "one question alone, 1.25 ×, lr 3e-4",
    "alone_k1_loss": "one question alone, k1 in the loss",
}
#: what a variant's expected gradient amounts to: the direct penalty, log pooling (KL in the reward), no
#: regularisation at all, or another (clamped or non-smooth) condition
KIND_LABELS = {"direct": "amounts to the direct penalty", "reward": "amounts to log pooling (RLHF)",
               "none": "regularises nothing (a vertex)", "other": "another condition (clamped, abs)"}
KIND_COLORS = {"direct": plotting.METHOD_COLORS["GRPO direct/scale"], "reward": plotting.METHOD_COLORS["RLHF"],
               "none": plotting.COLORS["regularises nothing"], "other": plotting.COLORS["another condition"]}
#: panel (a)'s logit axes clip probabilities to [CLIP, 1 - CLIP]
CLIP = 1e-5
#: the study's target: MAE at most this in every seed
TARGET = 0.01


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value", ":": "reference", "o": "point"}


def tables(inputs) -> dict[str, pd.DataFrame]:
    """``data``: the rewarded answer of every question, seed and variant (predicted, measured);
    ``summary``: per variant and seed, the MAE over all answers and the wrong-vertex count."""
    rows = inputs.results_table("kl_study.csv")
    summary = inputs.results_table("kl_study_summary.csv")
    unknown = sorted(set(rows.config) - set(VARIANTS))
    if unknown:
        raise InvalidInputError(f"kl_study.csv has configurations {unknown} that Figure 21 does not label "
                                f"(it labels {sorted(VARIANTS)})")
    uncoloured = sorted((set(rows.penalty) | set(summary.penalty)) - set(KIND_LABELS))
    if uncoloured:
        raise InvalidInputError(f"kl_study.csv or kl_study_summary.csv has penalties {uncoloured} that Figure 21 "
                                f"does not colour (it colours {sorted(KIND_LABELS)})")
    rows = rows.assign(label=rows.config.map(VARIANTS), kind=rows.penalty)
    # a predicted vertex measured at the other end: the rewarded answer died (or won) against the prediction
    rows["wrong_vertex"] = rows.predicted_collapse.astype(bool) & (np.abs(rows.measured - rows.predicted) > 0.5)
    data = rows[rows.rewarded.astype(bool)][["config", "label", "kind", "seed", "question", "pi_ref", "predicted",
                                             "measured", "measured_se", "predicted_collapse", "wrong_vertex"]]
    wrong = data.groupby(["config", "seed"]).wrong_vertex.sum().rename("wrong_vertex").reset_index()
    n_q = data.groupby(["config", "seed"]).size().rename("questions").reset_index()
    s = summary[["config", "seed", "beta", "mae", "max_abs_error", "predicted_collapses", "measured_collapses",
                 "penalty"]]
    s = s.merge(wrong, on=["config", "seed"]).merge(n_q, on=["config", "seed"])
    s["label"] = s.config.map(VARIANTS)
    s["kind"] = s.pop("penalty")
    order = {c: i for i, c in enumerate(VARIANTS)}
    s = s.sort_values(["config", "seed"], key=lambda col: col.map(order) if col.name == "config" else col)
    return {"data": data.reset_index(drop=True), "summary": s.reset_index(drop=True)}


def per_variant(summary: pd.DataFrame) -> pd.DataFrame:
    """Per variant: mean and worst-seed MAE, wrong vertices (of all questions), questions predicted and measured
    at a vertex, target met in every seed."""
    g = summary.groupby("config", sort=False)
    out = pd.DataFrame(dict(label=g.label.first(), kind=g.kind.first(), mae_mean=g.mae.mean(), mae_worst=g.mae.max(),
                            wrong_vertex=g.wrong_vertex.sum(), questions=g.questions.sum(),
                            predicted_collapses=g.predicted_collapses.sum(),
                            measured_collapses=g.measured_collapses.sum(),
                            met=g.mae.max() <= TARGET))
    return out.loc[[c for c in VARIANTS if c in out.index]]


def draw(data: pd.DataFrame, summary: pd.DataFrame) -> Figure:
    """(a) measured against predicted pi(rewarded answer), every question and seed; (b) MAE per variant, one
    dot per seed, the target dash-dotted, the wrong-vertex count on the right."""
    fig = Figure(figsize=(plotting.DOUBLE, 3.9), layout="constrained")
    ax, bx = fig.subplots(1, 2, gridspec_kw=dict(width_ratios=[1.25, 1.0]))
    # logit axes: most predictions lie in 0.9-0.9999 and the collapses at 1e-5; values are clipped to
    # [CLIP, 1 - CLIP] (a predicted vertex sits on the edge)
    for kind, g in data.groupby("kind"):
        ax.scatter(g.predicted.clip(CLIP, 1 - CLIP), g.measured.clip(CLIP, 1 - CLIP), s=10,
                   color=KIND_COLORS[kind], alpha=0.75, lw=0, zorder=3)
    plotting.reference(ax.plot([CLIP, 1 - CLIP], [CLIP, 1 - CLIP], ls=":", color="0.45", lw=0.9, zorder=1))
    ticks = [1e-4, 0.01, 0.5, 0.99, 0.9999]
    for setscale, setlim, setticks in ((ax.set_xscale, ax.set_xlim, ax.set_xticks),
                                       (ax.set_yscale, ax.set_ylim, ax.set_yticks)):
        setscale("logit")
        setlim(CLIP / 2, 1 - CLIP / 2)
        setticks(ticks, [f"{v:g}" for v in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_aspect("equal")
    ax.set_xlabel(r"predicted $\pi$(rewarded answer)")
    ax.set_ylabel(r"measured $\pi_\theta$(rewarded answer)")
    plotting.panel(ax, "a", "every question, seed and variant")

    pv = per_variant(summary)
    y = {c: i for i, c in enumerate(pv.index)}
    floor = 1e-5                                   # MAEs below it (none in the study) would sit on the axis
    for r in summary.itertuples():
        bx.scatter(max(r.mae, floor), y[r.config], s=14, color=KIND_COLORS[r.kind], edgecolors="0.2",
                   linewidths=0.3, zorder=3)
    plotting.reference(bx.axvline(TARGET, color="0.3", ls="-.", lw=0.8))
    bx.set_xscale("log")
    bx.set_xlim(floor, 2.0)
    bx.set_yticks(range(len(pv)), pv.label)
    bx.set_ylim(len(pv) - 0.5, -0.5)
    bx.set_xlabel("mean absolute error (all answers)")
    bx.tick_params(axis="y", labelsize=7)
    tx = bx.secondary_yaxis("right")
    tx.set_yticks(range(len(pv)), [f"{int(w)}/{int(n)}" if w else "–" for w, n in zip(pv.wrong_vertex, pv.questions)])
    tx.tick_params(axis="y", labelsize=7, length=0)
    tx.set_ylabel("wrong vertex (questions)", fontsize=7)
    plotting.panel(bx, "b", f"per variant and seed (target {TARGET:g})")
    handles = [Line2D([], [], marker="o", ls="", ms=5, color=KIND_COLORS[k], label=KIND_LABELS[k])
               for k in KIND_COLORS if k in set(data.kind)]
    plotting.legend_below(fig, handles, [h.get_label() for h in handles], ncol=2)
    return fig


def render(t):
    return draw(t["data"], t["summary"])


def _who_met(pv: pd.DataFrame) -> str:
    """Which variants met the target, said as a class where a class met it whole."""
    met = pv[pv.met]
    direct = pv[pv.kind.isin(["direct", "reward"])]
    rest = met.drop(index=[c for c in direct.index if c in met.index])
    if not direct.met.all():
        return ", ".join(met.label)
    alone = [c for c in rest.index if c.startswith("alone_")]
    tail = (f" and the {len(alone)} single-question runs" if len(alone) == len(rest) and alone
            else "".join(f", {lab}" for lab in rest.label))
    return (f"every variant that amounts to the direct penalty or log pooling ({len(direct)}; worst seed "
            f"{direct.mae_worst.max():.4f}){tail}")


def identical_runs(summary: pd.DataFrame, configs) -> list[list[str]]:
    """``configs`` grouped by identical training: the same MAE and largest error in every seed, to the last
    digit (variants whose expected gradient is the same can give bit-identical runs). Groups in ``configs``'
    order; a variant with no twin is a group of one."""
    key = {c: tuple(summary[summary.config == c].sort_values("seed")[["mae", "max_abs_error"]].itertuples(
        index=False, name=None)) for c in configs}
    groups: dict[tuple, list[str]] = {}
    for c in configs:
        groups.setdefault(key[c], []).append(c)
    return list(groups.values())


def _twins_text(pv: pd.DataFrame, groups: list[list[str]]) -> str:
    twins = [g for g in groups if len(g) > 1]
    if not twins:
        return ""
    said = "; ".join(f"{len(g)} of them train identically in every seed, one experiment" for g in twins)
    return f" ({len(groups)} distinct runs: {said}; docs/figures.md names them)"


def caption(t) -> str:
    s = t["summary"]
    pv = per_variant(s)
    met = pv[pv.met]
    # the variants predicted to reach a vertex (selected on the prediction, not on the outcome), those trained
    # jointly and those trained on one question alone
    vertex = pv[pv.predicted_collapses > 0]
    joint, alone = vertex[~vertex.index.str.startswith("alone_")], vertex[vertex.index.str.startswith("alone_")]
    every = vertex.measured_collapses.ge(vertex.predicted_collapses) & vertex.predicted_collapses.eq(vertex.questions)
    do = "all do" if every.all() else f"{int(every.sum())} of them do in every question"
    right = int((alone.questions - alone.wrong_vertex).sum())
    alone_text = (f", the {'single-question one' if len(alone) == 1 else f'{len(alone)} single-question ones'} "
                  f"at the right one in {right} of {int(alone.questions.sum())} seeds") if len(alone) else ""
    clamped = pv.loc[[c for c in pv.index if c.startswith("k3_low_var_kl") and "0.8x" not in c]]
    return (
        f"Figure 21. The trainer's KL term, {len(pv)} variants x {s.seed.nunique()} seeds of the KL study "
        f"(small GPT, G = 8; settings: docs/figures.md). (a) Measured against predicted "
        f"pi(rewarded answer), every question, seed and variant (logit axes), coloured by what the "
        f"expected gradient amounts to. (b) MAE over all answers, one dot per seed (dash-dotted: the "
        f"target {TARGET:g}; right: questions at the other vertex than predicted). "
        f"The target is met in every seed by {len(met)} of {len(pv)} variants"
        f"{_twins_text(pv, identical_runs(s, list(met.index)))}: {_who_met(pv)}. "
        f"The {len(vertex)} variants predicted to reach a vertex {do}: the {len(joint)} trained jointly at the "
        f"wrong one in up to {int(joint.wrong_vertex.max())} of {int(joint.questions.max())} questions ("
        + " and ".join(r.label for r in joint.itertuples() if r.wrong_vertex == joint.wrong_vertex.max())
        + f"){alone_text}; verl's clamped low-variance KL above its critical beta, "
        "trained jointly, misses its interior point "
        f"(worst-seed MAE {clamped.mae_worst.min():.3f} to {clamped.mae_worst.max():.3f}). Where an estimator's "
        f"expected gradient restores mass it predicts training to the target; elsewhere it names the vertex, "
        f"not which one."
    )


SPEC = FigureSpec(21, "kl_estimators", caption, tables, render, __name__)
