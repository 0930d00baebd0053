"""Figure 7(c, d): the flow's paths from many starts, one penalty against the other (the dynamics of 7(a)).

Figure 7(a) shows where the stationary points are and which start reaches which (the basins); panels (c)
and (d) show the paths in time at one beta above the fold, so that the separatrix is seen acting: for the
reverse penalty every start settles at the one point, for the direct penalty at G = inf the starts split
at the unstable point, and the ones above it creep into the vertex. (Once Figure 10.)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from .. import plotting
from ..dynamics import flow
from ..problem import Objective
from ..solvers import stationary_points
from ._data import binary

#: Figure 7(c, d): reference probability, the beta (above the fold at 0.896) and the two variants.
PHASE_PI_REF = 0.2
PHASE_BETA = 2.0
PHASE_VARIANTS = (("reverse/scale, G = 8", dict(group_size=8)),
                  ("direct/scale, G = inf", dict(group_size=math.inf, penalty="direct")))
#: Starting logits z0 = logit pi0(a): a spread from below pi_ref to 1 - 1e-6, plus two starts just
#: either side of the direct penalty's separatrix (added in :func:`data`).
START_LOGITS = (-3.0, -1.386, 0.0, 2.0, 4.0, 6.0, 9.0, 13.8)
#: Colours of the two basins, as Figure 7(a) shades them.
BASIN_COLORS = {"interior": plotting.COLORS["interior point"], "vertex": plotting.COLORS["vertex point"]}
#: how strongly each basin is shaded (0.10 and 0.08 were near-white at print size, the two basins and their
#: legend swatches hard to tell apart)
BASIN_ALPHA = {"interior": 0.2, "vertex": 0.24}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", ":": "reference", "o": "point"}


def _logit(pi: np.ndarray) -> np.ndarray:
    # from both probabilities, so that 1 - pi(a) = pi(b) keeps its digits near the vertex
    return np.log(pi[:, 0]) - np.log(pi[:, 1])


def data(n_t: int = 160, t_max: float = 1e4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The flow's paths logit pi_t(a) from each start, and the stationary points, for both variants."""
    q = binary(PHASE_PI_REF)
    t = np.concatenate([[0.0], np.geomspace(1e-2, t_max, n_t)])
    paths, points = [], []
    for name, template in PHASE_VARIANTS:
        obj = Objective(beta=PHASE_BETA, **template)
        pts = stationary_points(q, obj)
        interior = [p for p in pts if not p.boundary]
        for p in pts:
            points.append(dict(variant=name, beta=PHASE_BETA, pi_a=p.pi[0], one_minus_pi_a=p.pi[1],
                               logit=math.inf if p.boundary else math.log(p.pi[0] / p.pi[1]),
                               stable=bool(p.stable), boundary=bool(p.boundary)))
        starts = list(START_LOGITS)
        for p in interior:
            if not p.stable:                       # bracket the separatrix: the paths part there
                zs = math.log(p.pi[0] / p.pi[1])
                starts += [zs - 0.05, zs + 0.05]
        stable_z = [math.log(p.pi[0] / p.pi[1]) for p in interior if p.stable]
        for k, z0 in enumerate(sorted(starts)):
            x0 = 1.0 / (1.0 + math.exp(-z0))
            tr = flow(q, obj, [x0, 1.0 - x0], t, with_points=False)
            z = _logit(tr.pi)
            # where the path went: within 1e-3 in logit of a stable interior point, or past every one
            # of them towards the vertex
            dest = "interior" if any(abs(z[-1] - s) < 1e-3 for s in stable_z) else "vertex"
            paths += [dict(variant=name, beta=PHASE_BETA, start=k, start_logit=z0, t=ti, logit=zi,
                           pi_a=pa, one_minus_pi_a=pb, destination=dest)
                      for ti, zi, pa, pb in zip(t, z, tr.pi[:, 0], tr.pi[:, 1])]
    return pd.DataFrame(paths), pd.DataFrame(points)


#: The ticks of Figure 7's logit axes, as probabilities with their labels ((a) is on matplotlib's logit
#: scale, (c, d) plot the logit itself: :data:`_TICKS`).
PROB_TICKS = [(0.1, "0.1"), (0.5, "0.5"), (0.99, r"$1-10^{-2}$"), (1 - 1e-4, r"$1-10^{-4}$"),
              (1 - 1e-6, r"$1-10^{-6}$"), (1 - 1e-8, r"$1-10^{-8}$")]
_TICKS = [(math.log(p / (1 - p)), label) for p, label in PROB_TICKS]


def draw_paths(ax, paths: pd.DataFrame, points: pd.DataFrame, name: str, letter: str, pi_ref_a: float,
               beta: float) -> None:
    """One panel: logit pi_t(a) against flow time from each start of variant ``name``; stationary points
    as lines, the basins shaded as in panel (a)."""
    lo = min(paths.logit.min(), math.log(pi_ref_a / (1 - pi_ref_a))) - 0.6
    hi = paths.logit.max() + 0.8
    p = paths[paths.variant == name]
    pts = points[(points.variant == name) & (~points.boundary.astype(bool))]
    tmin, tmax = p.t[p.t > 0].min(), p.t.max()
    sep = pts[~pts.stable.astype(bool)]
    if len(sep):
        zs = float(sep.logit.iloc[0])
        ax.axhspan(zs, hi, color=BASIN_COLORS["vertex"], alpha=BASIN_ALPHA["vertex"], lw=0)
        ax.axhspan(lo, zs, color=BASIN_COLORS["interior"], alpha=BASIN_ALPHA["interior"], lw=0)
    for _, r in p.groupby("start"):
        r = r[r.t > 0]
        ax.plot(r.t, r.logit, color=BASIN_COLORS[r.destination.iloc[0]], lw=1.0, zorder=2)
    for row in pts.itertuples():          # above the paths, which converge onto the stable one
        ax.axhline(row.logit, color="black", lw=0.9, ls="-", zorder=3)     # a stationary point: data
        if not row.stable:                # the unstable point's open circles, as on (a)'s branch
            ax.plot(np.geomspace(tmin, tmax, 9)[1:-1], np.full(7, row.logit), ls="", marker="o", ms=3.2,
                    mfc="white", mec="black", mew=0.8, zorder=3)
    plotting.reference(ax.axhline(math.log(pi_ref_a / (1 - pi_ref_a)), color="0.45", ls=":", lw=0.9))
    ax.set_xscale("log")
    ax.set_xlim(tmin, tmax)
    ax.set_ylim(lo, hi)
    ax.set_yticks([z for z, _ in _TICKS if lo <= z <= hi], [s for z, s in _TICKS if lo <= z <= hi])
    ax.set_xlabel("flow time $t$")
    ax.set_ylabel(r"$\pi_t(a)$ (logit scale)")
    shown = plotting.infty(name).replace("G = ", "$G$ = ")
    plotting.panel(ax, letter, rf"paths, {shown}, $\beta$ = {beta:g}")


#: The legend entries of the paths' panels.
PATH_HANDLES = (
    Line2D([], [], color=BASIN_COLORS["interior"], label="path that settles inside"),
    Line2D([], [], color=BASIN_COLORS["vertex"], label=r"path into the vertex $\pi(a) = 1$"),
)


def caption_paths(paths: pd.DataFrame, pts: pd.DataFrame) -> str:
    """The caption's sentences on panels (c) and (d); its numbers (the points, the split) read from the plotted
    tables (the slowest path's distance from the vertex is in docs/figures.md)."""
    rev = paths[paths.variant.str.startswith("reverse")]
    dirp = paths[paths.variant.str.startswith("direct")]
    rev_pt = pts[pts.variant.str.startswith("reverse") & ~pts.boundary.astype(bool)]
    dpts = pts[pts.variant.str.startswith("direct") & ~pts.boundary.astype(bool)]
    d_stable = float(dpts[dpts.stable.astype(bool)].pi_a.iloc[0])
    gap = float(dpts[~dpts.stable.astype(bool)].one_minus_pi_a.iloc[0])
    n_rev = rev.start.nunique()
    ends = dirp[dirp.t == dirp.t.max()]
    zs = float(np.log(1.0 - gap) - np.log(gap))
    above = ends[ends.start_logit > zs]
    beside = ends[~ends.start_logit.isin(START_LOGITS)].sort_values("start_logit")   # the two added starts
    into = above[above.destination == "vertex"]
    below_end = ("settles at the stable point" if beside.destination.iloc[0] == "interior"
                 else "runs into the vertex too")
    share = f"all {len(above)}" if len(into) == len(above) else f"{len(into)} of the {len(above)}"
    return (
        f"(c, d) The expected-gradient flow's paths from {n_rev} starts (two more in (d), beside the "
        f"separatrix) at beta = {PHASE_BETA:g} against flow time; teal: settles inside, ochre: runs into the "
        "vertex; black: stationary points (open circles: unstable). (c) Reverse/scale, G = 8: one "
        f"stationary point ({float(rev_pt.pi_a.iloc[0]):.3f}), and every start settles there. (d) Direct/scale, "
        f"G = inf: the stable point {d_stable:.3f} and the separatrix at 1 - {gap:.1e}; {share} "
        f"starts above it run into the vertex, and the one {zs - beside.start_logit.iloc[0]:.2f} below "
        f"it {below_end}. ")
