"""Figure 30: TRL's two settings of ``use_bias_correction_kl`` (the direct penalty when True, TRL 1.16's
default; the reverse one when False), predicted and trained (the committed rows of
``grpo-theory validate --study trl``: a tiny Llama, 12 questions, G = 8, beta = 0.5, one seed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..integrations.trl import read_trl_config
from ..solvers import stationary_policies
from ._data import binary
from ._spec import FigureSpec

#: the study's TRL settings (grpo_theory.studies.trl: ``run_trl_study``), apart from the flag
TRL_SETTINGS = dict(beta=0.5, num_generations=8, scale_rewards="group", loss_type="grpo", num_iterations=1,
                    max_completion_length=1)
TRL_VERSION = "1.16.0"
FLAGS = (True, False)


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {":": "reference", "D": "trained"}


def objective(flag: bool):
    """The objective TRL 1.16 trains with ``use_bias_correction_kl=flag`` (through the package's reader)."""
    return read_trl_config(dict(TRL_SETTINGS, use_bias_correction_kl=flag), trl_version=TRL_VERSION,
                           completion_tokens=1).objective


def setting(flag: bool) -> str:
    return f"use_bias_correction_kl={flag}"


def curves(n: int = 120) -> pd.DataFrame:
    """The stationary P(correct) of each setting against pi_ref(correct), on a binary question (the class
    reduction: with one rewarded answer P(correct) depends on pi_ref(correct) alone), and their gap."""
    p = np.unique(np.concatenate([np.geomspace(1e-3, 0.05, 15), np.linspace(0.05, 0.995, n)]))
    cols = {}
    for flag in FLAGS:
        obj = objective(flag)
        cols[setting(flag)] = [pi[0] for pi in stationary_policies([binary(x) for x in p], [obj] * len(p))]
    out = pd.DataFrame(dict(pi_ref=p, direct=cols[setting(True)], reverse=cols[setting(False)]))
    out["gap"] = out.direct - out.reverse
    return out


def points(rows: pd.DataFrame) -> pd.DataFrame:
    """The study's rows, and (a second table) per question the measured and predicted gap between the two
    settings, with the gap's SE and whether both settings' runs converged on it."""
    keep = rows[["setting", "penalty", "question", "pi_ref_correct", "predicted", "measured", "measured_se",
                 "conv_status", "steps_run"]]
    wide = keep.pivot(index="question", columns="penalty", values=["predicted", "measured", "measured_se"])
    gap = pd.DataFrame({"question": wide.index, "pi_ref_correct": keep.groupby("question").pi_ref_correct.first(),
                        "predicted_gap": wide["predicted"]["direct"] - wide["predicted"]["reverse"],
                        "measured_gap": wide["measured"]["direct"] - wide["measured"]["reverse"],
                        "measured_gap_se": np.hypot(wide["measured_se"]["direct"], wide["measured_se"]["reverse"]),
                        "both_converged": keep.groupby("question").conv_status.agg(
                            lambda s: bool((s == "converged").all()))}).reset_index(drop=True)
    return keep.reset_index(drop=True), gap


def tables(inputs) -> dict[str, pd.DataFrame]:
    pts, gap = points(inputs.results_table("trl_results.csv"))
    return {"data": curves(), "points": pts, "gaps": gap}


def render(t: dict[str, pd.DataFrame]) -> Figure:
    cur, pts, gap = t["data"], t["points"], t["gaps"]
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.1, ncols=2)
    # True is TRL 1.16's default objective (its colour, as in Figures 18 and 26); False is k3 in the loss, TRL
    # 1.9's default (reverse/scale's colour)
    colour = {"direct": plotting.METHOD_COLORS["TRL 1.16"], "reverse": plotting.METHOD_COLORS["TRL 1.9"]}
    ax = axes[0]
    plotting.reference(ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=0))
    for pen in ("direct", "reverse"):
        ax.plot(cur.pi_ref, cur[pen], color=colour[pen], lw=1.3)
        d = pts[pts.penalty == pen]
        conv = (d.conv_status == "converged").to_numpy()
        ax.plot(d.pi_ref_correct[conv], d.measured[conv], ls="", marker="D", ms=3.6, color=colour[pen],
                mec="black", mew=0.4, zorder=5)
        ax.plot(d.pi_ref_correct[~conv], d.measured[~conv], ls="", marker="D", ms=3.6, color="0.7",
                mec=colour[pen], mew=0.9, zorder=5)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}$(correct)")
    ax.set_ylabel("P(correct) at the end")
    plotting.panel(ax, "a", "each setting", fontsize=7.5)

    ax = axes[1]
    ax.plot(cur.pi_ref, cur.gap, color="black", lw=1.2)
    ok = gap.both_converged.to_numpy()
    for sel, face in ((ok, plotting.METHOD_COLORS["trained"]), (~ok, "0.7")):
        g = gap[sel]
        ax.errorbar(g.pi_ref_correct, g.measured_gap, yerr=2 * g.measured_gap_se, fmt="D", ms=3.6, color=face,
                    mec="black", mew=0.4, ecolor="0.4", elinewidth=0.7, capsize=1, zorder=5)
    plotting.reference(ax.axhline(0, color="0.45", lw=0.7, ls=":"))
    ax.set_xlim(0, 1)
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}$(correct)")
    ax.set_ylabel("P(correct): on − off")
    plotting.panel(ax, "b", "the gap between the settings", fontsize=7.5)
    handles = [Line2D([], [], color=colour["direct"], lw=1.3, label="KL bias correction on: direct penalty (TRL 1.16's default)"),
               Line2D([], [], color=colour["reverse"], lw=1.3, label="KL bias correction off: reverse penalty"),
               Line2D([], [], color="black", lw=1.2, label="(b) predicted gap"),
               Line2D([], [], ls="", marker="D", ms=3.6, mfc=plotting.METHOD_COLORS["trained"], mec="black", mew=0.4,
                      label="trained (a: the setting's colour; b: ± 2 SE)"),
               Line2D([], [], ls="", marker="D", ms=3.6, mfc="0.7", mec="0.3", mew=0.9, label="not converged")]
    plotting.legend_below(fig, handles, ncol=3)
    return fig


def caption(t: dict[str, pd.DataFrame]) -> str:
    cur, pts, gap = t["data"], t["points"], t["gaps"]
    err = (pts.measured - pts.predicted).abs()
    by = {pen: err[pts.penalty == pen] for pen in ("direct", "reverse")}
    unconv = pts[pts.conv_status != "converged"]
    ok = gap[gap.both_converged]
    gap_err = (ok.measured_gap - ok.predicted_gap).abs()
    top = cur.loc[cur.gap.idxmax()]
    low = cur.iloc[0]
    i = int(np.flatnonzero(np.diff(np.sign(cur.gap)) != 0)[0])           # the sign change, linearly interpolated
    a, b = cur.iloc[i], cur.iloc[i + 1]
    cross = a.pi_ref - a.gap * (b.pi_ref - a.pi_ref) / (b.gap - a.gap)
    return (
        f"Figure 30. TRL {TRL_VERSION}'s GRPOTrainer with use_bias_correction_kl=True (its default: the direct "
        "penalty) and =False (the reverse penalty), otherwise the same (G = 8, beta = 0.5, TRL's std with ddof 1 "
        f"and eps 1e-4), on a tiny Llama: {pts.question.nunique()} questions, one-token answers, "
        f"{int(pts.steps_run.max())} steps, one seed. (a) The stationary P(correct) of each setting (curves, from the package's reading of the TRL "
        "config) and the trained models (diamonds; grey: not converged). (b) The gap between the settings: "
        f"predicted at most {top.gap:.3f} (at pi_ref {top.pi_ref:.2f}), changing sign at pi_ref {cross:.3f}, below "
        f"which the direct penalty keeps less ({low.gap:.2f} at pi_ref {low.pi_ref:g}); over the {len(gap)} questions "
        f"{gap.predicted_gap.min():.3f}-{gap.predicted_gap.max():.3f} (mean {gap.predicted_gap.mean():.3f}). "
        f"Measured MAE {by['direct'].mean():.4f} (True) and {by['reverse'].mean():.4f} (False), largest error "
        f"{err.max():.4f}; {len(unconv)} of the {len(pts)} measurements had not converged "
        f"({'all ' if unconv.setting.nunique() == 1 else ''}under "
        f"{' and '.join(sorted(set(unconv.setting.str.split('=').str[1])))}). On "
        f"the {len(ok)} questions converged in both settings the measured gap is within {plotting.at_most(gap_err.max(), '.4f')} of "
        "the predicted one: one flag moves the trained policy by as much as the theory says."
    )


SPEC = FigureSpec(30, "trl_bias_correction", caption, tables, render, __name__)
