"""Figure 23: the K = 3 phase diagram from certified counts (docs/results/sweep_phase_k3.csv): how many
stationary points the direct penalty at G = inf has, drawn as the threshold in pi_ref(a) against beta
(on the lattice the count depends on pi_ref(a) alone)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec

#: the colours of Figures 7(b) and 22: one stationary point (pale), three (dark red); 0 and 2 are listed
#: only if a case has them
COUNT_COLORS = {0: "0.6", 1: plotting.COLORS["1 point"], 2: plotting.COLORS["2 points"], 3: plotting.COLORS["3 points"]}
REWARDS = (1.0, 0.5, 0.0)
LABELS = ("a", "b", "c")


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "o": "point"}


def tables(inputs) -> dict[str, pd.DataFrame]:
    """One row per case: beta, pi_ref, the certified counts, and the point the flow from pi_ref reaches."""
    study = inputs.results_table("sweep_phase_k3.csv")
    pi = np.array([json.loads(p) for p in study.pi_ref])
    reached = np.array([json.loads(p) for p in study.reached_policy])
    beta = [float(k.split("beta=")[1].split(",")[0]) for k in study.key]
    data = pd.DataFrame(dict(beta=beta, pi_ref_a=pi[:, 0], pi_ref_b=pi[:, 1], pi_ref_c=pi[:, 2],
                             n_points=study.n_points.astype(int), n_stable=study.n_stable.astype(int),
                             certified=study.exhaustive.map(lambda v: v in (True, "True")),
                             reached_a=reached[:, 0], reached_b=reached[:, 1], reached_c=reached[:, 2]))
    data["reached_vertex"] = data.reached_a > 1 - 1e-9
    return {"data": data.sort_values(["beta", "pi_ref_a", "pi_ref_b"], kind="stable").reset_index(drop=True)}


def levels(d: pd.DataFrame) -> pd.DataFrame:
    """Per beta and lattice value of pi_ref(a): the counts of stationary points its cases have (one count
    where the count depends on pi_ref(a) alone) and how many cases."""
    g = d.groupby(["beta", "pi_ref_a"])
    return pd.DataFrame(dict(counts=g.n_points.apply(lambda v: tuple(sorted(set(int(x) for x in v)))),
                             cases=g.size())).reset_index()


def draw(d: pd.DataFrame) -> Figure:
    """The result in one panel: for each beta (x) and each lattice value of pi_ref(a) (y), a dot coloured
    by the number of stationary points its cases have (every case with that pi_ref(a) has the same count);
    the black line joins, per beta, the largest pi_ref(a) with three points."""
    fig, (ax,) = plotting.new_figure(height=3.1)
    lev = levels(d)
    present = sorted(int(n) for n in d.n_points.unique())
    for r in lev.itertuples():
        c = COUNT_COLORS[r.counts[0]] if len(r.counts) == 1 else "white"
        ax.plot(r.beta, r.pi_ref_a, "o", ms=7.5, mfc=c, mec="0.3", mew=0.4, zorder=3)
    top = [(b, g[g.n_points == 3].pi_ref_a.max()) for b, g in d.groupby("beta") if (g.n_points == 3).any()]
    if top:
        bx, py = zip(*top)
        ax.plot(bx, py, "-", color="black", lw=1.1, zorder=4)
    betas = sorted(d.beta.unique())
    ax.set_xscale("log")
    ax.set_xticks(betas, [f"{b:g}" for b in betas])
    ax.minorticks_off()
    ax.set_xlim(betas[0] / 1.35, betas[-1] * 1.35)
    ax.set_ylim(0.0, 0.9)
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
    names = {0: "no stationary point", 1: "1: the vertex a only (the flow goes there)",
             2: "2 stationary points", 3: "3: vertex a, a stable interior point, a saddle"}
    handles = [Line2D([], [], marker="o", ls="", ms=6, mfc=COUNT_COLORS[n], mec="0.3", mew=0.4, label=names[n])
               for n in present]
    handles.append(Line2D([], [], color="black", lw=1.1, label=r"largest $\pi_{\mathrm{ref}}(a)$ with 3 points"))
    plotting.legend_below(fig, handles, [h.get_label() for h in handles], ncol=1)
    return fig


def render(t):
    return draw(t["data"])


def thresholds(d: pd.DataFrame) -> str:
    """"t (beta b), ...": for each beta with three-point cases, the largest pi_ref(a) that has three, checked
    to separate them from the one-point cases (else the statement is not made)."""
    out = []
    for b, g in d.groupby("beta"):
        three, one = g[g.n_points == 3].pi_ref_a, g[g.n_points == 1].pi_ref_a
        if len(three) and (not len(one) or three.max() < one.min()):
            out.append(f"{three.max():.1f} (beta {b:g})")
        elif len(three):
            # the figure's own table, computed here: a failed split is a wrong statement, not a bad input
            raise RuntimeError(f"beta {b:g}: the counts do not split by pi_ref(a) alone")
    return ", ".join(out)


def caption(t) -> str:
    d = t["data"]
    by = d.groupby("beta")
    n3 = {b: int((g.n_points == 3).sum()) for b, g in by}
    per = ", ".join(f"{b:g}: {n3[b]}" for b in sorted(n3))
    three = d[d.n_points == 3]
    one = d[d.n_points == 1]
    present = sorted(int(n) for n in d.n_points.unique())
    absent = [n for n in COUNT_COLORS if n not in present]
    return (
        f"Figure 23. Three answers with rewards (1, 0.5, 0), the direct KL penalty at G = inf: the number of "
        f"stationary points for each beta and each pi_ref of the interior of the simplex lattice of step 0.1 "
        f"({d.groupby('beta').size().iloc[0]} points a beta), certified by solvers.certify "
        f"({int(d.certified.sum())} of {len(d)} cases exhaustive; docs/results/sweep_phase_k3.csv). One dot "
        f"per beta and value of pi_ref(a): "
        f"on this lattice the count depends on pi_ref(a) alone. Counts that occur: "
        f"{' and '.join(str(n) for n in present)} (no case has {' or '.join(str(n) for n in absent)}). "
        f"Every case has the vertex a as a stable limit point; {len(three)} of {len(d)} also have a stable "
        f"interior point and a saddle (by beta: {per}), exactly where pi_ref(a) <= {thresholds(d)} (the black "
        f"line). The flow from pi_ref reaches the interior point in {int((~three.reached_vertex).sum())} of the "
        f"{len(three)} three-point cases and the vertex in {int(one.reached_vertex.sum())} of the {len(one)} "
        f"one-point cases. Take-away: with the direct penalty at large G, training collapses onto the best answer "
        f"unless beta is large enough for pi_ref(a); the threshold rises with beta."
    )


SPEC = FigureSpec(23, "phase_diagram_k3", caption, tables, render, __name__)
