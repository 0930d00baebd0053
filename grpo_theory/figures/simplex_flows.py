"""Figure 11: gradient-flow trajectories on the simplex: interior attractors, saddles and a vertex limit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import plotting
from ..dynamics import flow
from ..problem import Objective, Question
from ..solvers import stationary_points
from ._spec import FigureSpec

#: Figure 11: a three-answer question with several stable points (one a vertex limit) and saddles.
FLOW_REWARDS = (1.0, 0.9, 0.0)
FLOW_PI_REF = (0.1, 0.1, 0.8)
#: the flows are the direct penalty's at G = inf: the method's colour; stationary points in black
FLOW_COLOR = plotting.METHOD_COLORS["GRPO direct/scale"]
FLOW_BETA = 2.0


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"o": "point", "s": "vertex", "v": "below the axis", "*": "reference policy"}


def data(n_starts: int = 14, t_max: float = 30000.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flow trajectories on the simplex from a spread of starts, and the stationary points."""
    q = Question(FLOW_PI_REF, rewards=FLOW_REWARDS)
    obj = Objective(beta=FLOW_BETA, group_size=math.inf, penalty="direct")
    rng = np.random.default_rng(7)
    # the edge point's basin is thin in c: starts with c ~ 1e-4 reach it, slowly (its eigenvalues scale with c)
    near_edge = [np.array(v) for v in ((0.78, 0.2199, 1e-4), (0.62, 0.3799, 1e-4), (0.9, 0.0999, 1e-4))]
    starts = [np.array(FLOW_PI_REF)] + near_edge + \
        list(0.04 + 0.88 * rng.dirichlet(np.ones(3) * 1.2, n_starts - 1 - len(near_edge)))
    starts = [s / s.sum() for s in starts]
    t = np.concatenate([[0.0], np.geomspace(0.01, t_max, 200)])
    rows = []
    for i, s in enumerate(starts):
        tr = flow(q, obj, s, t, with_points=False)
        rows += [dict(start=i, t=tt, pi_a=p[0], pi_b=p[1], pi_c=p[2]) for tt, p in zip(t, tr.pi)]
    pts = stationary_points(q, obj)
    # boundary: a limit point on the simplex's boundary (here the vertex a = 1), certified by its KKT
    # conditions rather than as a root; the flow approaches it without reaching it
    points = pd.DataFrame([dict(pi_a=p.pi[0], pi_b=p.pi[1], pi_c=p.pi[2], stable=p.stable, boundary=p.boundary)
                           for p in pts])
    return pd.DataFrame(rows), points


def _true(col: pd.Series) -> pd.Series:
    """A boolean column read back from CSV (bool) or built in memory (bool): compare as text."""
    return col.astype(str) == "True"


def edge_points(points: pd.DataFrame) -> pd.DataFrame:
    """The interior stationary points near the a-b edge (0 < pi(c) < 0.01): the edge attractor and the
    saddles on either side of it; boundary limit points (the vertex) are excluded."""
    return points[(points.pi_c < 0.01) & ~_true(points.boundary)]


def draw(traj: pd.DataFrame, points: pd.DataFrame, pi_ref, labels=("a", "b", "c"),
                  rewards=None, beta=None) -> Figure:
    """Figure 11: flow trajectories on the simplex with the stationary points."""
    fig, (ax,) = plotting.new_figure(height=3.2)
    plotting.simplex_axes(ax, labels, rewards)
    for s, d in traj.groupby("start"):
        xy = plotting.ternary(d[["pi_a", "pi_b", "pi_c"]].to_numpy())
        color = FLOW_COLOR if s else "black"
        ax.plot(xy[:, 0], xy[:, 1], color=color, lw=0.9 if s else 1.4, alpha=0.85)
        ax.plot(xy[0, 0], xy[0, 1], "o", color=color, ms=2.2)
        mid = len(xy) // 3
        ax.annotate("", xy[mid + 1], xy[mid], arrowprops=dict(arrowstyle="->", color=color, lw=0.8))
    for row in points.itertuples():
        xy = plotting.ternary(np.array([row.pi_a, row.pi_b, row.pi_c]))
        marker = "s" if str(row.boundary) == "True" else "o"
        # the vertex square under the saddle next to it (pi(a) = 0.986, 3 pt below the apex at print size): the
        # square large enough that it shows around the saddle's circle, which stays on top
        ax.plot(*xy, marker, ms=9.5 if marker == "s" else 5, mfc="black" if str(row.stable) == "True" else "white",
                mec="black", mew=1.1, zorder=4 if marker == "s" else 5, clip_on=False)
    ref = plotting.ternary(np.asarray(pi_ref))
    ax.plot(*ref, "k*", ms=6, zorder=6)
    ax.plot([], [], "o", ms=5, mfc="black", mec="black", label="stable")
    ax.plot([], [], "o", ms=5, mfc="white", mec="black", mew=1.1, label="unstable (saddle)")
    if _true(points.boundary).any():
        ax.plot([], [], "s", ms=6.5, mfc="black", mec="black", label="stable vertex limit")
    ax.plot([], [], "k*", label=r"$\pi_{\mathrm{ref}}$ (its path in black)")
    ax.legend(loc="upper left", fontsize=7, bbox_to_anchor=(-0.06, 1.02))
    ax.set_title(rf"Gradient flow, direct KL, $G\to\infty$, $\beta$ = {beta:g}", pad=2)
    _edge_inset(ax, traj, points)
    return fig


def _edge_inset(ax, traj: pd.DataFrame, points: pd.DataFrame) -> None:
    """Zoom on the a-b edge: position along it against log pi(c), where an attractor with pi(c) ~ 1e-4
    sits next to a saddle; trajectories that come near the edge show which way they go."""
    edge = edge_points(points)
    near = [d for _, d in traj.groupby("start") if d.pi_c.min() < 0.01]
    if not len(edge) or not near:
        return
    inset = ax.inset_axes([0.70, 0.52, 0.32, 0.32])
    for d in near:
        along = d.pi_a / (d.pi_a + d.pi_b)
        inset.plot(along, d.pi_c, color=FLOW_COLOR, lw=0.8)
        inset.plot(along.iloc[0], d.pi_c.iloc[0], "o", color=FLOW_COLOR, ms=2)
    lo = 3e-6
    for row in edge.itertuples():
        along, stable = row.pi_a / (row.pi_a + row.pi_b), str(row.stable) == "True"
        # a point below the axis (the saddle next to the vertex, pi(c) ~ 1e-18) is drawn on the bottom edge
        # as a down triangle with its value
        below = row.pi_c < lo
        inset.plot(along, max(row.pi_c, lo), "v" if below else "o", ms=5, mfc="black" if stable else "white",
                   mec="black", mew=1.1, zorder=5, clip_on=False)
        if below:
            inset.annotate(f"{row.pi_c:.0e}", (along, lo), xytext=(-3, 4), textcoords="offset points",
                           fontsize=7, ha="right", color="black")
    inset.set_yscale("log")
    inset.set_ylim(lo, 0.1)
    inset.set_xlim(0.55, 1.0)
    inset.set_xlabel(r"$\pi(a)/(\pi(a)+\pi(b))$", fontsize=7, labelpad=1)
    inset.set_ylabel(r"$\pi(c)$", fontsize=7, labelpad=0)
    inset.tick_params(labelsize=7, length=2, pad=1)
    # the x tick labels sit below the down triangle on the bottom edge (at 0.986 it covered the "1.0")
    inset.tick_params(axis="x", pad=4)
    inset.set_title("near the a-b edge", fontsize=7, pad=1.5)
    # the simplex's a-c edge runs behind the inset's left labels: each label on a white ground, so no line
    # crosses text
    for label in [*inset.get_yticklabels(), *inset.get_xticklabels(), inset.yaxis.label, inset.xaxis.label]:
        label.set_bbox(dict(facecolor="white", edgecolor="none", pad=0.4))


def tables(_inputs):
    traj, points = data()
    return {"data": traj, "stationary": points}


def render(t):
    return draw(t["data"], t["stationary"], FLOW_PI_REF, rewards=FLOW_REWARDS, beta=FLOW_BETA)


def edge_starts(traj: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per start: its pi(c) at t = 0 and whether it ends at the edge attractor (the interior stable point
    with pi(c) < 0.01, not the vertex), within 1e-3."""
    near = edge_points(points)
    edge = near[_true(near.stable)][["pi_a", "pi_b", "pi_c"]].to_numpy()
    rows = []
    for s, d in traj.groupby("start"):
        d = d.sort_values("t")
        end = d[["pi_a", "pi_b", "pi_c"]].to_numpy()[-1]
        rows.append(dict(start=s, c0=float(d.pi_c.iloc[0]),
                         at_edge=bool(len(edge) and np.abs(edge - end).max(axis=1).min() < 1e-3)))
    return pd.DataFrame(rows)


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its numbers read from the plotted tables."""
    pts = t["stationary"]
    edge = edge_points(pts)
    attractor = edge[_true(edge.stable)].pi_c.min()
    saddles = ", ".join(f"{c:.0e}" for c in sorted(edge[~_true(edge.stable)].pi_c, reverse=True))
    interior = pts[~_true(pts.boundary)]
    n_stable = int(_true(interior.stable).sum())
    n_saddle = int((~_true(interior.stable)).sum())
    vertices = pts[_true(pts.boundary) & _true(pts.stable)]
    vertex = ("; the vertex " + ", ".join(f"({r.pi_a:g}, {r.pi_b:g}, {r.pi_c:g})" for r in vertices.itertuples())
              + " is a stable limit on the boundary (square)") if len(vertices) else ""
    e = edge_starts(t["data"], pts)
    reach = e[e.at_edge]
    first = t["data"][t["data"].start == t["data"].start.min()].sort_values("t")
    start_end = first.iloc[-1]                        # start 0 is pi_ref (drawn in black)
    head = PREFIX.format(n_stable=n_stable, n_saddle=n_saddle, vertex=vertex)
    return head + (f"the edge attractor (pi(c) = {attractor:.0e}) and the saddles ({saddles}; a triangle on the "
                   f"bottom edge is below the axis). Of the "
                   f"{len(e)} starts drawn, the {len(reach)} that reach the edge attractor begin at pi(c) <= "
                   f"{reach.c0.max():.0e}; where its basin ends is not computed here. Take-away: the edge attractor "
                   f"exists, but of the starts drawn only those giving c at most {reach.c0.max():.0e} reach it; "
                   f"training from pi_ref ends at the interior point with pi(c) = {start_end.pi_c:.2f}.")


PREFIX = (
    f"Figure 11. Gradient-flow trajectories on the simplex, rewards {FLOW_REWARDS}, pi_ref = "
    f"{FLOW_PI_REF}, direct KL, G = inf, beta = {FLOW_BETA:g}: {{n_stable}} interior stable points and "
    "{n_saddle} saddles{vertex}; the start decides where GRPO goes (pi_ref's path in black). Inset: the a-b "
    "edge zoomed, position along it against log pi(c): ")

SPEC = FigureSpec(11, "simplex_flows", caption, tables, render, __name__)
