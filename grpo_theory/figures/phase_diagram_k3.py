"""Figure 23: the K = 3 phase diagram from certified counts (docs/results/sweep_phase_k3.csv): how many
stationary points the direct penalty at G = inf has over the simplex of pi_ref, for six betas, and where
the flow from pi_ref goes."""

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
COUNT_COLORS = {0: "0.6", 1: "#fde0c5", 2: "#f4a582", 3: "#b2182b"}
REWARDS = (1.0, 0.5, 0.0)
LABELS = ("a", "b", "c")


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


def draw(d: pd.DataFrame) -> Figure:
    """One simplex per beta: each pi_ref a dot coloured by its number of stationary points; where the flow
    from pi_ref reaches an interior point, a grey segment to that point (a small black dot)."""
    betas = sorted(d.beta.unique())
    fig, grid = plotting.new_figure(width=plotting.DOUBLE, height=5.0, ncols=3, nrows=2)
    axes = np.asarray(grid).ravel()
    present = sorted(int(n) for n in d.n_points.unique())
    for k, (ax, beta) in enumerate(zip(axes, betas)):
        s = d[d.beta == beta]
        plotting.simplex_axes(ax, [f"{n} (r = {r:g})" for n, r in zip(LABELS, REWARDS)], None)
        start = plotting.ternary(s[["pi_ref_a", "pi_ref_b", "pi_ref_c"]].to_numpy())
        end = plotting.ternary(s[["reached_a", "reached_b", "reached_c"]].to_numpy())
        inner = ~s.reached_vertex.to_numpy()
        for (x0, y0), (x1, y1) in zip(start[inner], end[inner]):
            ax.plot([x0, x1], [y0, y1], color="0.55", lw=0.45, zorder=2)
        ax.scatter(end[inner, 0], end[inner, 1], s=3, color="black", zorder=4)
        ax.scatter(start[:, 0], start[:, 1], s=30, c=[COUNT_COLORS[int(n)] for n in s.n_points],
                   edgecolors="0.3", linewidths=0.4, zorder=3)
        n3 = int((s.n_points == 3).sum())
        plotting.panel(ax, "abcdef"[k], rf"$\beta$ = {beta:g}: 3 points at {n3} of {len(s)}")
    for ax in axes[len(betas):]:
        ax.axis("off")
    names = {0: "no stationary point", 1: "1: the vertex a only (the flow goes there)",
             2: "2 stationary points", 3: "3: vertex a, a stable interior point, a saddle"}
    handles = [Line2D([], [], marker="o", ls="", ms=6, mfc=COUNT_COLORS[n], mec="0.3", mew=0.4, label=names[n])
               for n in present]
    handles.append(Line2D([], [], color="0.55", lw=0.45, marker="o", ms=2, mfc="black", mec="black",
                          label=r"$\pi_{\mathrm{ref}}$ → the interior point the flow reaches"))
    plotting.legend_below(fig, handles, [h.get_label() for h in handles], ncol=2)
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
            raise ValueError(f"beta {b:g}: the counts do not split by pi_ref(a) alone")
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
        f"stationary points at each pi_ref of the interior of the simplex lattice of step 0.1 "
        f"({d.groupby('beta').size().iloc[0]} points) for beta in {{{', '.join(f'{b:g}' for b in sorted(n3))}}}, "
        f"certified by solvers.certify ({int(d.certified.sum())} of {len(d)} cases exhaustive: every stationary "
        f"point isolated with a certificate, faces excluded by the KKT conditions); "
        f"docs/results/sweep_phase_k3.csv from experiments/sweep_phase_diagram_k3.py. Counts that occur: "
        f"{' and '.join(str(n) for n in present)} (no case has {' or '.join(str(n) for n in absent)}). "
        f"Every case has the best vertex a as a "
        f"stable limit point; {len(three)} of {len(d)} also have a stable interior point and a saddle between it "
        f"and the vertex (by beta: {per}). On this lattice the count depends on pi_ref(a) alone: three points "
        f"exactly where pi_ref(a) <= {thresholds(d)}. Segments: from pi_ref to the point the gradient flow from pi_ref "
        f"reaches; it reaches the interior point in {int((~three.reached_vertex).sum())} of the {len(three)} "
        f"three-point cases and the vertex in {int(one.reached_vertex.sum())} of the {len(one)} one-point cases. "
        f"Take-away: with the direct penalty at large G, an answer set collapses onto its best answer unless "
        f"beta is large enough and pi_ref puts little enough mass on that answer; where an interior point exists, "
        f"the flow from pi_ref finds it."
    )


SPEC = FigureSpec(23, "phase_diagram_k3", caption, tables, render, __name__)
