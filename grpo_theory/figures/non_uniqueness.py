"""Figure 7: direct KL penalty at G -> inf: several stationary points, where, and which start reaches which.

(a) the points against beta with their basins, (b) the map of how many, (c, d) the flow's paths into the
basins at one beta (:mod:`.phase_portraits`; they were Figure 10 until session 37, merged here as issue 24
asks, so that the points and the paths that reach them are read side by side).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import closed_form, plotting
from ..problem import Objective
from ..solvers import stationary_points
from ._data import binary
from ._spec import FigureSpec
from .phase_portraits import PATH_HANDLES, PHASE_BETA, PHASE_PI_REF, caption_paths, draw_paths
from .phase_portraits import data as path_data

#: Figure 7: the reference probability of panel (a).
NONUNIQUE_PI_REF = 0.2


def data(n_beta: int = 160, n_map: int = 160) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Direct penalty, G = inf: (a) stationary points against beta at pi_ref(a) = NONUNIQUE_PI_REF,
    (b) the number of stationary points over (beta, pi_ref) from the sign of h(x*)."""
    q = binary(NONUNIQUE_PI_REF)
    rows = []
    for beta in np.geomspace(0.2, 20.0, n_beta):
        for pt in stationary_points(q, Objective(beta=beta, group_size=math.inf, penalty="direct")):
            rows.append(dict(beta=beta, pi_a=pt.pi[0], stable=bool(pt.stable), boundary=pt.boundary))
    betas = np.geomspace(0.05, 20.0, n_map)
    ps = np.linspace(0.005, 0.995, n_map)
    B, P = np.meshgrid(betas, ps, indexing="ij")
    h_min = closed_form.large_group_direct_h(closed_form.large_group_direct_turning_point(B), P, B)
    count = np.where(h_min < 0, 3, 1)     # the vertex always; two interior roots when min h < 0
    region = pd.DataFrame(dict(beta=B.ravel(), pi_ref_a=P.ravel(), h_at_turning_point=h_min.ravel(),
                               n_stationary_points=count.ravel()))
    return pd.DataFrame(rows), region


def draw(points: pd.DataFrame, region: pd.DataFrame, pi_ref_a: float, paths: pd.DataFrame,
         path_points: pd.DataFrame) -> Figure:
    """Figure 7: (a) stationary points against beta; (b) how many, over (beta, pi_ref); (c, d) the flow's
    paths from many starts at beta = PHASE_BETA, reverse at G = 8 and direct at G = inf."""
    fig, grid = plotting.new_figure(width=plotting.DOUBLE, height=5.9, ncols=2, nrows=2)
    (ax, bx), (cx, dx) = grid
    interior = points[~points.boundary]
    top = 1 - 1e-6                      # the vertex pi(a) = 1, drawn at the logit axis' top
    stable = interior[interior.stable == True].sort_values("beta")            # noqa: E712
    unstable = interior[interior.stable == False].sort_values("beta")         # noqa: E712
    # basins: above the unstable branch (the separatrix) the flow goes to the vertex, below it to
    # the interior stable point; left of the fold only the vertex is left
    ax.fill_between(unstable.beta, unstable.pi_a, top, color="#b2182b", alpha=0.10, lw=0,
                    label="basin of the vertex")
    left = points[points.beta <= unstable.beta.min()].beta if len(unstable) else points.beta
    ax.fill_between(np.append(np.sort(left.unique()), unstable.beta.min() if len(unstable) else []), 0.05, top,
                    color="#b2182b", alpha=0.10, lw=0)
    ax.fill_between(stable.beta, 0.05, unstable.set_index("beta").pi_a.reindex(stable.beta, method="nearest"),
                    color="#2166ac", alpha=0.08, lw=0, label="basin of the interior point")
    ax.semilogx(stable.beta, stable.pi_a, "-", color="#b2182b", label="stable")
    ax.semilogx(unstable.beta, unstable.pi_a, "--", color="#b2182b", label="unstable (separatrix)")
    vertex = points[points.boundary]
    ax.semilogx(vertex.beta, np.full(len(vertex), top), color="#b2182b", lw=2.6, alpha=0.5,
                label=r"vertex $\pi(a) = 1$ (limit, stable)")
    if len(stable):
        fold = stable.iloc[0]
        ax.plot(fold.beta, fold.pi_a, "o", ms=4, color="black", zorder=5)
        ax.annotate(rf"fold, $\beta$ = {fold.beta:.3g}", (fold.beta, fold.pi_a), xytext=(6, -2),
                    textcoords="offset points", fontsize=7)
    ax.axhline(pi_ref_a, color="0.45", ls=":", lw=0.9)
    ax.set_yscale("logit")
    ax.set_ylim(0.05, top * 1.0000001 if top < 1 else top)
    ax.set_xlim(points.beta.min(), points.beta.max())        # the shading reaches the axes
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(r"$\pi(a)$ at a stationary point (logit scale)")
    plotting.panel(ax, "a", rf"direct KL, $G\to\infty$, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g}")
    ax.axvline(PHASE_BETA, color="0.3", lw=0.6, ls="-.")          # where (c, d) follow the paths
    ax.annotate("(d)", (PHASE_BETA, 0.07), xytext=(3, 0), textcoords="offset points", fontsize=7)
    betas = np.sort(region.beta.unique())
    ps = np.sort(region.pi_ref_a.unique())
    # the regions as the sign of h at its turning point, contoured: the boundary h = 0 is interpolated
    # between grid points (linearly in h), not drawn cell by cell as a staircase
    H = region.pivot(index="pi_ref_a", columns="beta", values="h_at_turning_point").to_numpy()
    bx.contourf(betas, ps, H, levels=[-np.inf, 0.0, np.inf], colors=["#b2182b", "#fde0c5"])
    bx.contour(betas, ps, H, levels=[0.0], colors="black", linewidths=0.6)
    bx.set_xscale("log")
    bx.set_xlim(betas.min(), betas.max())
    bx.set_ylim(ps.min(), ps.max())
    bx.set_xlabel(r"$\beta$")
    bx.set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
    plotting.panel(bx, "b", "number of stationary points")
    for axis, name, letter in ((cx, "reverse/scale, G = 8", "c"), (dx, "direct/scale, G = inf", "d")):
        draw_paths(axis, paths, path_points, name, letter, PHASE_PI_REF, PHASE_BETA)
    handles, _ = ax.get_legend_handles_labels()
    handles += [*PATH_HANDLES,
                Line2D([], [], color="0.45", lw=0.9, ls=":", label=r"$\pi_{\mathrm{ref}}(a)$"),
                Line2D([], [], marker="s", ls="", color="#fde0c5", ms=7, label="(b) 1: the vertex only"),
                Line2D([], [], marker="s", ls="", color="#b2182b", ms=7, label="(b) 3: vertex, stable, unstable")]
    plotting.legend_below(fig, handles, ncol=3)
    return fig


def tables(_inputs):
    points, region = data()
    paths, path_points = path_data()
    return dict(data=points, region=region, paths=paths, paths_stationary=path_points)


def render(t):
    return draw(t["data"], t["region"], NONUNIQUE_PI_REF, t["paths"], t["paths_stationary"])


def separatrix_gap(points: pd.DataFrame, beta_min: float) -> float:
    """The largest distance 1 - pi(a) of the unstable interior point (the separatrix) from the vertex,
    over the betas ``>= beta_min`` of panel (a)'s table."""
    sep = points[(points.stable.astype(str) == "False") & (points.boundary.astype(str) == "False")]
    return float((1.0 - sep[sep.beta >= beta_min].pi_a).max())


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its numbers read from the plotted table."""
    return PREFIX + caption_paths(t["paths"], t["paths_stationary"]) + (
        f"Take-away: above the fold a run from pi_ref settles inside, but a start past the separatrix "
        f"(within {separatrix_gap(t['data'], 2.0):.1e} of 1 for beta >= 2, "
        f"{separatrix_gap(t['data'], 10.0):.1e} for beta >= 10), or a large first step that carries it there, "
        "runs into the vertex, and no amount of training brings it back.")


PREFIX = (
    f"Figure 7. Direct KL penalty, G -> inf. (a) Stationary points against beta at pi_ref(a) = "
    f"{NONUNIQUE_PI_REF:g}, on a logit axis: stable (solid), unstable (dashed: the separatrix), "
    "the vertex pi(a) = 1, a stable limit point for every beta, and the fold where the interior pair "
    "is born; shaded, the basin of each stable point; dash-dotted, the beta of (d). (b) Number of "
    "stationary points over (beta, pi_ref(a)), from the sign of h at its turning point x*; the boundary is "
    "the zero contour of h (black), interpolated on the 160 x 160 grid. ")

SPEC = FigureSpec(7, "non_uniqueness", caption, tables, render, __name__, uses=("phase_portraits",))
