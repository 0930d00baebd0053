"""Figure 32: verl's critical beta against pi_ref, and what training does around it (the package's
``clamp_critical_beta`` on the objectives ``read_verl_config`` reads from verl's GRPO recipe; the committed
rows of the KL study, experiments/kl_study.py, for the runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..integrations.verl import read_verl_config
from ..solvers import clamp_critical_beta
from ._data import binary
from ._spec import FigureSpec

#: the group sizes drawn (verl's ``rollout.n``)
GROUP_SIZES = (2, 4, 8, 16, 64)
#: a question "collapsed" when an answer ends below this (the KL study's test)
COLLAPSE = 0.01
#: points at one beta ratio (the three seeds of a question trained alone) are drawn side by side, this far
#: apart in log(beta ratio)
SPREAD = 0.03
#: the KL study's clamped runs, in the legend's order: label, and whether each question trained alone
RUNS = {"k3_low_var_kl_0.8x_critical": "jointly, lr 3e-3",
        "k3_low_var_kl_1.25x_critical": "jointly, lr 3e-3",
        "k3_low_var_kl_2.5x_critical": "jointly, lr 3e-3",
        "k3_low_var_kl_1.25x_critical_lr3e-4": "jointly, lr 3e-4",
        "alone_k3_low_var_kl_1.25x_critical_lr3e-4": "each question alone, lr 3e-4"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value", "^": "key", "o": "point", "_": "level"}


def verl_objective(group_size: int):
    """verl's GRPO recipe with the KL in the loss (``low_var_kl``: k3, clamped), every other key at verl's
    default (its ``kl_loss_coef``, 0.001, is the objective's beta)."""
    import warnings

    cfg = {"algorithm": {"adv_estimator": "grpo"},
           "actor_rollout_ref": {"rollout": {"n": group_size},
                                 "actor": {"use_kl_loss": True, "kl_loss_type": "low_var_kl"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the reader's notes on verl's defaults; the caption states them
        return read_verl_config(cfg).objective


def curves(n: int = 50) -> pd.DataFrame:
    """beta_c against pi_ref(correct) on a binary question, for each G of :data:`GROUP_SIZES`."""
    p = np.linspace(0.01, 0.99, n)
    rows = []
    for G in GROUP_SIZES:
        obj = verl_objective(G)
        rows += [dict(group_size=G, pi_ref=x, critical_beta=clamp_critical_beta(binary(x), obj),
                      default_beta=obj.beta) for x in p]
    return pd.DataFrame(rows)


def runs(study: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, seed, question) of the KL study's clamped runs: beta over the question's critical
    beta, the smallest measured and predicted answer probability, whether it collapsed (an answer below
    :data:`COLLAPSE`), whether the rewarded answer did, and whether a collapse was predicted."""
    s = study[study.config.isin(list(RUNS))]
    g = s.groupby(["config", "seed", "question"], sort=False)
    out = g.agg(beta=("beta", "first"), critical_beta=("critical_beta", "first"), pi_ref=("pi_ref", "first"),
                measured_min=("measured", "min"), predicted_min=("predicted", "min"),
                predicted_collapse=("predicted_collapse", "first"), edge_margin=("edge_margin", "first"),
                rewarded_measured=("measured", lambda m: float(m[s.loc[m.index, "rewarded"].astype(bool)].iloc[0])),
                rewarded_pi_ref=("pi_ref", lambda m: float(m[s.loc[m.index, "rewarded"].astype(bool)].iloc[0]))
                ).reset_index()
    out["ratio"] = out.beta / out.critical_beta
    out["collapsed"] = out.measured_min < COLLAPSE
    out["rewarded_died"] = out.rewarded_measured < COLLAPSE
    out["setting"] = out.config.map(RUNS)
    return out


def tables(inputs) -> dict[str, pd.DataFrame]:
    study = runs(inputs.results_table("kl_study.csv"))
    return {"data": curves(), "runs": study}


def render(t: dict[str, pd.DataFrame]) -> Figure:
    cur, rn = t["data"], t["runs"]
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.1, ncols=2)
    ax = axes[0]
    gs = list(dict.fromkeys(cur.group_size))
    for G, colour in zip(gs, plotting.group_colors(gs)):
        d = cur[cur.group_size == G]
        ax.plot(d.pi_ref, d.critical_beta, color=colour, lw=1.3, label=plotting.g_text(G))
    q = rn.drop_duplicates(["seed", "question"])
    # computed critical betas, not measurements: drawn in G = 8's colour, on its curve
    ax.plot(q.rewarded_pi_ref, q.critical_beta, ls="", marker="^", ms=3.6, color=plotting.group_colors([8])[0],
            mec="black", mew=0.3, label="the KL study's questions ($G$ = 8)")
    default = float(cur.default_beta.iloc[0])
    plotting.reference(ax.axhline(default, ls="-.", color="0.35", lw=0.8))
    ax.text(0.02, default * 1.3, f"verl's default β = {default:g}", ha="left", va="bottom", fontsize=7)
    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_ylim(default / 2, 1.0)
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}$(correct)")
    ax.set_ylabel(r"critical $\beta$")
    plotting.panel(ax, "a", "below the curve the wrong answer collapses", fontsize=7.5)
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 0.14), fontsize=7, ncol=2)

    ax = axes[1]
    settings = list(dict.fromkeys(RUNS.values()))
    cols = dict(zip(settings, plotting.setting_colors(len(settings))))
    for s in settings:
        d = rn[rn.setting == s]
        # seeds at one beta ratio (the questions trained alone) are drawn side by side, SPREAD apart
        ax.plot(plotting.side_by_side(d.ratio, width=SPREAD, log=True), np.maximum(d.measured_min, 1e-6), ls="", marker="o", ms=3.4 if len(d) > 3 else 4.5,
                color=cols[s], mec="black", mew=0.3, label=s, zorder=3 if len(d) > 3 else 4)
    ax.plot(rn.ratio, np.maximum(rn.predicted_min, 1e-6), ls="", marker="_", ms=4, color="black", mew=0.9,
            label="predicted", zorder=1)
    plotting.reference(ax.axhline(COLLAPSE, ls="-.", color="0.35", lw=0.8))
    plotting.reference(ax.axvline(1.0, ls="-.", color="0.65", lw=0.8))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(5e-7, 1)
    ax.set_xticks([0.7, 1, 1.5, 2, 3], ["0.7", "1", "1.5", "2", "3"])
    ax.set_xlabel(r"$\beta$ / critical $\beta$ of the question")
    ax.set_ylabel("smaller answer's P at the end")
    plotting.panel(ax, "b", f"the KL study ($G$ = 8), collapse below {COLLAPSE:g}", fontsize=7.5)
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], ls="-.", color="0.35", lw=0.8), Line2D([], [], ls="-.", color="0.65", lw=0.8)]
    labels += [f"collapse ({COLLAPSE:g}); (a) verl's default β", "critical β"]
    plotting.legend_below(fig, handles, labels, ncol=3)
    return fig


def caption(t: dict[str, pd.DataFrame]) -> str:
    cur, rn = t["data"], t["runs"]
    default = float(cur.default_beta.iloc[0])
    span = {G: (d.critical_beta.min(), d.critical_beta.max()) for G, d in cur.groupby("group_size")}
    q = rn.drop_duplicates(["seed", "question"])
    lo, hi = q.critical_beta.min(), q.critical_beta.max()

    def part(config):
        d = rn[rn.config == config]
        return d, f"{int(d.collapsed.sum())} of {len(d)}"

    below, below_n = part("k3_low_var_kl_0.8x_critical")
    above, above_n = part("k3_low_var_kl_1.25x_critical")
    slow, slow_n = part("k3_low_var_kl_1.25x_critical_lr3e-4")
    far, far_n = part("k3_low_var_kl_2.5x_critical")
    alone, alone_n = part("alone_k3_low_var_kl_1.25x_critical_lr3e-4")
    g_lo, g_hi = min(span), max(span)
    return (
        "Figure 32. verl's GRPO recipe with the KL in the loss (low_var_kl: k3, clamped at 10), read from its "
        "config by the package. (a) The critical beta (clamp_critical_beta) against pi_ref(correct) on a binary "
        f"question: below it the wrong answer collapses from pi_ref; {span[g_lo][0]:.3f}-{span[g_lo][1]:.3f} at "
        f"G = {g_lo}, {span[g_hi][0]:.2f}-{span[g_hi][1]:.2f} at G = {g_hi}; at G = 8 the KL study's questions (triangles) "
        f"have {lo:.3f}-{hi:.3f}, {lo / default:.0f}-{hi / default:.0f} times verl's default beta {default:g}. "
        f"(b) The KL study (small GPT, 8 questions x 3 seeds, G = 8): each question's smaller answer at the end, "
        f"and its prediction (bars; a predicted collapse drawn at 10^-6). Below the critical beta "
        f"({below.ratio.min():.2f}-{below.ratio.max():.2f} x) {below_n} collapsed (below {COLLAPSE:g}), as predicted "
        f"({int(below.rewarded_died.sum())} losing the rewarded answer). Above it the prediction keeps the smaller "
        f"answer at {above.predicted_min.min():.3f}-{above.predicted_min.max():.2f}, yet at "
        f"{above.ratio.min():.2f}-{above.ratio.max():.2f} x {above_n} ended below {COLLAPSE:g} (at most "
        f"{above.measured_min.max():.0e}; {int(above.rewarded_died.sum())} losing the rewarded answer), {slow_n} at "
        f"lr 3e-4, and {far_n} at {far.ratio.min():.1f}-{far.ratio.max():.1f} x; trained alone at lr 3e-4, "
        f"{alone_n} (its {len(alone)} seeds, at one ratio, drawn {SPREAD:.0%} apart). The clamp holds an "
        "answer in training only with a margin well above the critical beta."
    )


SPEC = FigureSpec(32, "verl_critical_beta", caption, tables, render, __name__)
