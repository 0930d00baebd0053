"""Figure 7: direct KL penalty at G -> inf: several stationary points, where, and which start reaches which.

(a) the points against beta with their basins, (b) the map of how many, (c, d) the flow's paths into the
basins at one beta (:mod:`.phase_portraits`; once Figure 10, merged here so
that the points and the paths that reach them are read side by side).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from .. import closed_form, plotting
from ..problem import Objective
from ..solvers import stationary_points
from ._data import binary
from ._spec import FigureSpec
from .finite_g_regions import COUNT_COLORS  # (b)'s counts coloured as Figure 22 colours them at finite G
from .phase_portraits import (BASIN_ALPHA, BASIN_COLORS, PATH_HANDLES, PHASE_BETA, PHASE_PI_REF, PROB_TICKS,
                              caption_paths, draw_paths)
from .phase_portraits import data as path_data

#: Figure 7: the reference probability of panel (a).
NONUNIQUE_PI_REF = 0.2


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "-.": "marked value", ":": "reference", "o": "point", "s": "vertex"}


def _h_at_turning_point(beta, pi_ref_a):
    """``min_x h = h(x*)`` (direct penalty, G = inf): two interior stationary points where it is negative."""
    return closed_form.large_group_direct_h(closed_form.large_group_direct_turning_point(beta), pi_ref_a, beta)


def fold(pi_ref_a: float) -> tuple[float, float]:
    """The fold (saddle-node) of the direct penalty at G = inf: the beta where ``h(x*) = 0`` at its turning
    point ``x*`` (brentq on the closed forms), and that ``x*``, where the interior pair is born."""
    from scipy.optimize import brentq

    def h_min(beta: float) -> float:
        return float(_h_at_turning_point(beta, pi_ref_a))
    hi = 1.0
    while h_min(hi) >= 0:                # h(x*) falls with beta and is negative for large beta
        hi *= 2.0
    beta = brentq(h_min, 1e-3, hi, xtol=1e-14, rtol=1e-14)
    return beta, float(closed_form.large_group_direct_turning_point(beta))


def data(n_beta: int = 160, n_map: int = 160) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Direct penalty, G = inf: (a) stationary points against beta at pi_ref(a) = NONUNIQUE_PI_REF (on a
    geometric grid with beta = 2, where (d) follows the paths, and beta = 10 added, so that the caption's
    distances for beta >= 2 and >= 10 are read at those betas), (b) the number of stationary points over
    (beta, pi_ref) from the sign of h(x*), and the fold."""
    q = binary(NONUNIQUE_PI_REF)
    rows = []
    for beta in np.union1d(np.geomspace(0.2, 20.0, n_beta), [PHASE_BETA, 10.0]):
        for pt in stationary_points(q, Objective(beta=beta, group_size=math.inf, penalty="direct")):
            rows.append(dict(beta=beta, pi_a=pt.pi[0], stable=bool(pt.stable), boundary=pt.boundary))
    betas = np.geomspace(0.05, 20.0, n_map)
    ps = np.linspace(0.005, 0.995, n_map)
    B, P = np.meshgrid(betas, ps, indexing="ij")
    h_min = _h_at_turning_point(B, P)
    count = np.where(h_min < 0, 3, 1)     # the vertex always; two interior roots when min h < 0
    region = pd.DataFrame(dict(beta=B.ravel(), pi_ref_a=P.ravel(), h_at_turning_point=h_min.ravel(),
                               n_stationary_points=count.ravel()))
    beta_f, x_f = fold(NONUNIQUE_PI_REF)
    return pd.DataFrame(rows), region, pd.DataFrame([dict(pi_ref_a=NONUNIQUE_PI_REF, beta=beta_f, pi_a=x_f)])


def draw(points: pd.DataFrame, region: pd.DataFrame, pi_ref_a: float, paths: pd.DataFrame,
         path_points: pd.DataFrame, fold_point: pd.DataFrame) -> Figure:
    """Figure 7: (a) stationary points against beta; (b) how many, over (beta, pi_ref); (c, d) the flow's
    paths from many starts at beta = PHASE_BETA, reverse at G = 8 and direct at G = inf."""
    fig, grid = plotting.new_figure(width=plotting.DOUBLE, height=5.9, ncols=2, nrows=2)
    (ax, bx), (cx, dx) = grid
    interior = points[~points.boundary]
    bottom, top = 0.05, 1 - 1e-8         # the vertex pi(a) = 1, drawn at the logit axis' top, as in (d)
    beta_f, x_f = float(fold_point.beta.iloc[0]), float(fold_point.pi_a.iloc[0])
    # both branches start at the fold, where they are born together
    at_fold = pd.DataFrame([dict(beta=beta_f, pi_a=x_f)])
    stable = pd.concat([at_fold, interior[interior.stable == True].sort_values("beta")])       # noqa: E712
    unstable = pd.concat([at_fold, interior[interior.stable == False].sort_values("beta")])   # noqa: E712
    # basins: above the unstable branch (the separatrix) the flow goes to the vertex, below it to
    # the interior stable point; left of the fold only the vertex is left
    ax.fill_between(unstable.beta, unstable.pi_a, top, color=BASIN_COLORS["vertex"], alpha=BASIN_ALPHA["vertex"],
                    lw=0, label="basin of the vertex")
    ax.fill_between([points.beta.min(), beta_f], bottom, top, color=BASIN_COLORS["vertex"],
                    alpha=BASIN_ALPHA["vertex"], lw=0)
    ax.fill_between(stable.beta, bottom, np.interp(stable.beta, unstable.beta, unstable.pi_a),
                    color=BASIN_COLORS["interior"], alpha=BASIN_ALPHA["interior"], lw=0,
                    label="basin of the interior point")
    ax.semilogx(stable.beta, stable.pi_a, "-", color="black", lw=1.1, label="stable stationary point")
    # the unstable branch: a branch of stationary points (solid) carrying the unstable point's open circle
    ax.semilogx(unstable.beta, unstable.pi_a, "-", color="black", lw=1.1, marker="o", ms=3.2, mfc="white",
                mec="black", mew=0.8, markevery=(6, 14), label="unstable point (separatrix)")
    vertex = points[points.boundary]
    # the vertex, a stable limit for every beta: on the top edge, a line over the frame carrying the stable vertex's
    # square (plotting.MARKERS), unclipped, so that it shows whole above the frame as on (d)
    ax.semilogx(vertex.beta, np.full(len(vertex), top), "-", color=BASIN_COLORS["vertex"], lw=2.0, marker="s",
                ms=4, mec="black", mew=0.6, markevery=max(1, len(vertex) // 7), clip_on=False, zorder=6,
                label=r"vertex $\pi(a) = 1$ (limit, stable)")
    # the fold, where the two branches are born, is neither stable nor unstable: an arrow, not a circle
    ax.annotate(rf"fold, $\beta$ = {beta_f:.3f}", (beta_f, x_f), xytext=(14, -3), textcoords="offset points",
                fontsize=7, va="center", arrowprops=dict(arrowstyle="->", color="black", lw=0.7, shrinkA=1, shrinkB=1))
    plotting.reference(ax.axhline(pi_ref_a, color="0.45", ls=":", lw=0.9))
    ax.axvline(PHASE_BETA, color="0.3", lw=0.6, ls="-.")          # where (d) follows the paths
    ax.annotate("(c, d)", (PHASE_BETA, 0.07), xytext=(3, 0), textcoords="offset points", fontsize=7)
    ax.set_yscale("logit")
    ax.set_ylim(bottom, top)
    ax.set_yticks([p for p, _ in PROB_TICKS], [label for _, label in PROB_TICKS])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlim(points.beta.min(), points.beta.max())        # the shading reaches the axes
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(r"$\pi(a)$ at a stationary point (logit scale)")
    plotting.panel(ax, "a", rf"direct/scale, $G = \infty$, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g}")
    betas = np.sort(region.beta.unique())
    ps = np.sort(region.pi_ref_a.unique())
    # the regions as the sign of h at its turning point, contoured: the boundary h = 0 is interpolated
    # between grid points (linearly in h), not drawn cell by cell as a staircase
    H = region.pivot(index="pi_ref_a", columns="beta", values="h_at_turning_point").to_numpy()
    bx.contourf(betas, ps, H, levels=[-np.inf, 0.0, np.inf], colors=[COUNT_COLORS[3], COUNT_COLORS[1]])
    bx.contour(betas, ps, H, levels=[0.0], colors="black", linewidths=0.6)
    plotting.reference(bx.axhline(pi_ref_a, color="0.45", ls=":", lw=0.9))     # (a)'s pi_ref
    bx.annotate("(a)'s fold", (beta_f, pi_ref_a), xytext=(-36, 16), textcoords="offset points", fontsize=7,
                ha="center", arrowprops=dict(arrowstyle="->", color="black", lw=0.7, shrinkA=1, shrinkB=1))
    bx.text(0.2, 0.75, "1 point:\nthe vertex", fontsize=7.5, ha="center", va="center", transform=bx.transAxes)
    bx.text(0.8, 0.3, "3 points:\nthe vertex,\nstable, unstable", fontsize=7.5, ha="center", va="center",
            color="white", transform=bx.transAxes)
    bx.set_xscale("log")
    bx.set_xlim(betas.min(), betas.max())
    bx.set_ylim(ps.min(), ps.max())
    bx.set_xlabel(r"$\beta$")
    bx.set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
    plotting.panel(bx, "b", r"number of stationary points, direct/scale, $G = \infty$")
    for axis, name, letter in ((cx, "reverse/scale, G = 8", "c"), (dx, "direct/scale, G = inf", "d")):
        draw_paths(axis, paths, path_points, name, letter, PHASE_PI_REF, PHASE_BETA)
    # (d)'s vertex, stable, at logit +inf: the same squares on the top edge, above the paths that run into it
    if path_points[path_points.variant.str.startswith("direct") & path_points.boundary.astype(bool)
                   & path_points.stable.astype(bool)].shape[0]:
        lo_t, hi_t = dx.get_xlim()
        dx.plot(np.geomspace(lo_t, hi_t, 43), np.ones(43), "-", color=BASIN_COLORS["vertex"], lw=2.0, marker="s",
                ms=4, mec="black", mew=0.6, markevery=(3, 6), transform=dx.get_xaxis_transform(), clip_on=False, zorder=6)
    handles, _ = ax.get_legend_handles_labels()
    handles += [*PATH_HANDLES, Line2D([], [], color="0.45", lw=0.9, ls=":", label=r"$\pi_{\mathrm{ref}}(a)$")]
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def tables(_inputs):
    points, region, fold_point = data()
    paths, path_points = path_data()
    return dict(data=points, region=region, fold=fold_point, paths=paths, paths_stationary=path_points)


def render(t):
    return draw(t["data"], t["region"], NONUNIQUE_PI_REF, t["paths"], t["paths_stationary"], t["fold"])


def separatrix_gap(points: pd.DataFrame, beta_min: float) -> float:
    """The largest distance 1 - pi(a) of the unstable interior point (the separatrix) from the vertex,
    over the betas ``>= beta_min`` of panel (a)'s table."""
    sep = points[(points.stable.astype(str) == "False") & (points.boundary.astype(str) == "False")]
    return float((1.0 - sep[sep.beta >= beta_min].pi_a).max())


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its numbers read from the plotted tables."""
    beta_f = float(t["fold"].beta.iloc[0])
    return (
        "Figure 7. Non-unique stationary points, and the paths into them. (a) Direct/scale penalty, G -> inf, "
        f"pi_ref(a) = {NONUNIQUE_PI_REF:g}: stationary points against beta, logit axis: stable (solid), "
        "unstable (open circles: the separatrix), the vertex pi(a) = 1 (stable limit for every beta; squares on (a)'s and (d)'s top edge), the fold "
        f"at beta = {beta_f:.4f}; shaded: each stable point's basin; dash-dotted: the beta of (c, d). "
        "(b) How many stationary points, over (beta, pi_ref(a)); black: the boundary (h = 0 at its turning "
        "point); dotted: (a)'s pi_ref; arrow: (a)'s fold. "
        + caption_paths(t["paths"], t["paths_stationary"])
        + "Take-away: above the fold a run from pi_ref settles inside; a start or large first step past the "
        "separatrix runs into the vertex.")


SPEC = FigureSpec(7, "non_uniqueness", caption, tables, render, __name__, uses=("phase_portraits", "finite_g_regions"))
