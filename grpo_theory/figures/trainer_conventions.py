"""Figure 13: the note's normalisation against TRL's (ddof 1, eps), with trained points."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..problem import Objective
from ..solvers import stationary_policies
from ._data import binary
from ._spec import FigureInputs, FigureSkipped, FigureSpec

#: (label, std_ddof, std_eps): the note's normalisation and TRL's (also verl's and OpenRLHF's ddof)
CONVENTIONS = (("note: ddof 0, eps 0", 0, 0.0), ("TRL: ddof 1, eps 1e-4", 1, 1e-4))
CONVENTION_BETA = 0.5


#: how each penalty is drawn: the curve's dash and the marker's face
MARK = {"reverse": "solid, filled", "direct": "dashed, open"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference", "o": "point", "D": "trained"}


def pi_ref_grid(n: int = 97) -> np.ndarray:
    """Linear on [0.02, 0.98], and geometric down to 1e-6: the largest gap (G = 2, reverse) is a
    supremum approached as pi_ref(correct) -> 0, so the table must reach there to state it."""
    return np.unique(np.concatenate([np.geomspace(1e-6, 0.02, 14), np.linspace(0.02, 0.98, n)]))


def data(n: int = 97) -> pd.DataFrame:
    """The stationary pi(correct) against pi_ref(correct) under each convention, for G = 2 and 8,
    both penalties, beta = 0.5."""
    rows, questions, objectives = [], [], []
    for G in (2, 8):
        for penalty in ("reverse", "direct"):
            for label, ddof, eps in CONVENTIONS:
                obj = Objective(beta=CONVENTION_BETA, group_size=G, penalty=penalty, std_ddof=ddof, std_eps=eps)
                for p in pi_ref_grid(n):
                    rows.append(dict(group_size=G, penalty=penalty, convention=label, std_ddof=ddof, std_eps=eps,
                                     pi_ref_a=p))
                    questions.append(binary(p))
                    objectives.append(obj)
    # binary questions: solved together (stationary_policies), in the table's row order
    for row, pi in zip(rows, stationary_policies(questions, objectives)):
        row["pi_a"] = float(pi[0])
    return pd.DataFrame(rows)


def measured_points(inputs: FigureInputs) -> pd.DataFrame:
    """The committed trained points under TRL's convention (TRL's own GRPOTrainer at G = 8, from
    ``trl_results.csv``; our trainer's 5-seed runs at G = 2 and 8, from ``validate_seeds.csv``), read
    from ``inputs.results``; :class:`FigureSkipped` when neither table is there (the figure is about them)."""
    points = []
    try:
        t = inputs.results_table("trl_results.csv")
    except FigureSkipped as why:
        t, skipped = None, why
    if t is not None:
        points.append(pd.DataFrame(dict(source="TRL GRPOTrainer", group_size=8, penalty=t.penalty,
                                        pi_ref_a=t.pi_ref_correct, measured=t.measured)))
    try:
        v = inputs.results_table("validate_seeds.csv")
    except FigureSkipped:
        v = None
    if v is not None:
        v = v[v.config.isin(["TRL_std_G2", "TRL_std_G8"]) & (v.prediction == "trainer")]
        points.append(pd.DataFrame(dict(source="our trainer, TRL's convention (5 seeds)", group_size=v.group_size,
                                        # the trainer's penalty=None is its default, reverse
                                        penalty=v.penalty.fillna("reverse"), pi_ref_a=v.pi_ref_a,
                                        measured=v.measured)))
    if not points:
        raise FigureSkipped(f"{skipped} (or validate_seeds.csv)")
    return pd.concat(points, ignore_index=True)


def draw(curves: pd.DataFrame, points: pd.DataFrame) -> Figure:
    """Figure 13: per G, (top) curves per convention and penalty with trained points, (bottom) the gap."""
    gs = sorted(curves.group_size.unique())
    fig = Figure(figsize=(plotting.DOUBLE, 5.2), layout="constrained")
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1.4, 1])
    conventions = list(dict.fromkeys(curves.convention))
    col = {c: plotting.CONVENTION_COLORS[c.split(":")[0]] for c in conventions}
    dash = {"reverse": "-", "direct": "--"}
    marks = {"TRL GRPOTrainer": ("D", 4.5), "our trainer, TRL's convention (5 seeds)": ("o", 2.6)}
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for (conv, pen), d in curves[curves.group_size == G].groupby(["convention", "penalty"], sort=False):
            top.plot(d.pi_ref_a, d.pi_a, dash[pen], color=col[conv], lw=1.0)
        for pen, d in curves[curves.group_size == G].groupby("penalty", sort=False):
            wide = d.pivot(index="pi_ref_a", columns="convention", values="pi_a")
            bottom.plot(wide.index, wide[conventions[1]] - wide[conventions[0]], dash[pen], color="0.25", lw=1.0,
                        label=f"{pen} penalty")
        if len(points):
            for (src, pen), d in points[points.group_size == G].groupby(["source", "penalty"]):
                m, size = marks.get(src, ("o", 3))
                top.plot(d.pi_ref_a, d.measured, m, ms=size, color=col[conventions[1]],
                         mfc=col[conventions[1]] if pen == "reverse" else "white", mec="black", mew=0.5, alpha=0.8)
        plotting.diagonal(top)
        plotting.panel(top, "ab"[j], plotting.g_text(G), pad=2)
        plotting.panel(bottom, "cd"[j], "TRL's − the note's", pad=2)
        plotting.reference(bottom.axhline(0, color="0.45", lw=0.7, ls=":"))
        bottom.set_xlim(-0.02, 1.02)
        bottom.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
        bottom.set_ylabel("difference" if j == 0 else "")
    handles = [Line2D([], [], color=col[c], lw=1.2, label=c) for c in conventions]
    handles += [Line2D([], [], color="0.3", ls=dash[p], lw=1.0, label=f"{p} penalty ({MARK[p]})") for p in dash]
    if len(points):
        handles += [Line2D([], [], ls="", marker=marks.get(s, ("o", 3))[0], mfc="0.7", mec="black", label=s)
                    for s in dict.fromkeys(points.source)]
    plotting.legend_below(fig, handles, ncol=3)
    return fig


def tables(inputs):
    return {"data": data(), "points": measured_points(inputs)}


def render(t):
    return draw(t["data"], t["points"])


def gaps(curves: pd.DataFrame) -> pd.DataFrame:
    """TRL's minus the note's stationary pi(correct), per G, penalty and pi_ref(correct) (the bottom panels)."""
    wide = curves.pivot_table(index=["group_size", "penalty", "pi_ref_a"], columns="std_ddof", values="pi_a")
    return (wide[1] - wide[0]).rename("gap").reset_index()


def largest_gaps(curves: pd.DataFrame) -> dict:
    """The caption's numbers: the largest |gap| at G = 2 (any penalty; a supremum, reached as
    pi_ref -> 0, stated with the smallest pi_ref of the table) and at G = 8 with the direct penalty."""
    g = gaps(curves)
    at2 = g[g.group_size == 2]
    top = at2.loc[at2.gap.abs().idxmax()]
    d8 = g[(g.group_size == 8) & (g.penalty == "direct")]
    return dict(g2=float(abs(top.gap)), g2_penalty=top.penalty, g2_at=float(top.pi_ref_a),
                g8_direct=float(d8.gap.abs().max()))


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its gaps computed from the plotted curves."""
    a = largest_gaps(t["data"])
    return (
        f"Figure 13. The same objective under the note's normalisation (std with ddof 0, no eps) and TRL's "
        f"(ddof 1, eps 1e-4; verl and OpenRLHF also use ddof 1), beta = {CONVENTION_BETA:g}. Top: the "
        "stationary pi(correct) against pi_ref(correct) (solid: reverse penalty; dashed: direct), with "
        "trained points under TRL's convention (TRL's own GRPOTrainer at G = 8, both penalties; our "
        "trainer, reverse, 5 seeds). Bottom: TRL's minus the note's prediction. Take-away: at G = 2 the "
        f"convention alone moves the prediction by up to {a['g2']:.2f} ({a['g2_penalty']} penalty; a supremum "
        f"approached as pi_ref(correct) -> 0, here at pi_ref = {a['g2_at']:.0e}; ddof 1 makes a two-member "
        f"group's std sqrt(2) times larger), {a['g8_direct']:.2f} at G = 8 with the direct penalty, and the "
        "trained points follow the trainer's convention, not the note's.")


SPEC = FigureSpec(13, "trainer_conventions", caption, tables, render, __name__)
