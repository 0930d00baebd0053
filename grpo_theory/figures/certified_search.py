"""Figure 31: the certified search against the multi-start one on the K = 3 phase diagram (216 cases: the
direct penalty at G = inf, rewards (1, 0.5, 0), 36 interior points of the simplex lattice of step 0.1 x 6
betas). The certified rows are docs/results/sweep_phase_k3.csv; the multi-start rows are the same sweep's
first run, before certification (``sweep_phase_k3_multistart.csv``, committed as sweep_phase_k3.csv by
51f4545)."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import colors
from matplotlib.cm import ScalarMappable
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from .. import plotting
from ..errors import InvalidInputError
from ._spec import FigureSpec

#: a stable policy with P(a) above this is the vertex a (reached only in the limit)
VERTEX = 0.999


def _stable(policies: str) -> list[list[float]]:
    return json.loads(policies)


def cases(certified: pd.DataFrame, multistart: pd.DataFrame) -> pd.DataFrame:
    """One row per case: pi_ref, beta, the points each search reports, and what the multi-start one found of
    the certified set (the saddle: a second point; the vertex a as a stable limit)."""
    m = certified.merge(multistart, on="key", suffixes=("_certified", "_multistart"), validate="one_to_one")
    if len(m) != len(certified) or len(m) != len(multistart):

        raise InvalidInputError(f"the two sweeps hold {len(certified)} and {len(multistart)} cases, "
                                f"{len(m)} in common: expected the same cases")
    pi = np.array([json.loads(s) for s in m.pi_ref_certified])
    out = pd.DataFrame(dict(key=m.key, beta=m.key.str.extract(r"beta=([0-9.]+)")[0].astype(float),
                            pi_ref_a=pi[:, 0], pi_ref_b=pi[:, 1], pi_ref_c=pi[:, 2],
                            certified=m.exhaustive_certified.astype(bool),
                            points_certified=m.n_points_certified, stable_certified=m.n_stable_certified,
                            points_multistart=m.n_points_multistart, stable_multistart=m.n_stable_multistart))
    out["vertex_limit_certified"] = [any(p[0] > VERTEX for p in _stable(s)) for s in m.stable_policies_certified]
    out["vertex_limit_multistart"] = [any(p[0] > VERTEX for p in _stable(s)) for s in m.stable_policies_multistart]
    three = out.points_certified == 3
    out["saddle_found"] = three & (out.points_multistart >= 2)
    return out.sort_values(["beta", "pi_ref_a", "pi_ref_b"]).reset_index(drop=True)


def by_cell(c: pd.DataFrame) -> pd.DataFrame:
    """Per (beta, pi_ref(a)): the certified three-point cases and how many of them the multi-start search
    found the saddle in."""
    three = c[c.points_certified == 3]
    return three.groupby(["beta", "pi_ref_a"]).agg(cases=("key", "size"), saddle_found=("saddle_found", "sum")
                                                   ).reset_index().assign(share=lambda d: d.saddle_found / d.cases)


def tables(inputs) -> dict[str, pd.DataFrame]:
    c = cases(inputs.results_table("sweep_phase_k3.csv"), inputs.results_table("sweep_phase_k3_multistart.csv"))
    return {"data": c, "cells": by_cell(c)}


def draw(c: pd.DataFrame, cells: pd.DataFrame) -> Figure:
    """(a) per beta, how many cases (points of the lattice) have 1, 2 or 3 stationary points as the certified
    search reports them (C) and as multi-start root finding does (M); (b) per (beta, pi_ref(a)) cell of
    :func:`by_cell`, the certified three-point cases in which multi-start found the saddle."""
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.0, ncols=2,
                                    gridspec_kw=dict(width_ratios=[1.0, 1.1]))
    ax = axes[0]
    betas = sorted(c.beta.unique())
    count_colour = {1: plotting.COLORS["1 point"], 2: plotting.COLORS["2 points"], 3: plotting.COLORS["3 points"]}
    for j, (col, dx) in enumerate((("points_certified", -0.2), ("points_multistart", 0.2))):
        for i, b in enumerate(betas):
            bottom = 0
            counts = c[c.beta == b][col].value_counts()
            for n in sorted(counts.index):
                ax.bar(i + dx, counts[n], width=0.36, bottom=bottom, color=count_colour[int(n)], edgecolor="0.3",
                       lw=0.5)
                bottom += counts[n]
        for i in range(len(betas)):
            ax.text(i + dx, c.groupby("beta").size().max() + 0.6, "C" if j == 0 else "M", ha="center",
                    va="bottom", fontsize=7)
    ax.set_xticks(range(len(betas)), [f"{b:g}" for b in betas])
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel("cases (points of the simplex lattice)")
    ax.set_ylim(0, c.groupby("beta").size().max() + 4)
    plotting.panel(ax, "a", "points reported: C certified, M multi-start", fontsize=7.5)

    ax = axes[1]
    cb = sorted(cells.beta.unique())
    xs = sorted(c.pi_ref_a.unique())
    # each cell filled by the share of its cases where multi-start found the saddle (the probability map), so
    # the trend reads without the fractions
    # the map's pale top is unreadable on white: 0..0.85 of it, as plotting's sequential colours
    cmap = colors.ListedColormap(matplotlib.colormaps[plotting.PROB_CMAP](np.linspace(0.0, 0.85, 256)))
    norm = colors.Normalize(0.0, 1.0)
    for _, r in cells.iterrows():
        x, y = xs.index(r.pi_ref_a), cb.index(r.beta)
        share = float(r.saddle_found) / float(r.cases)
        ax.add_patch(Rectangle((x - 0.46, y - 0.42), 0.92, 0.84, facecolor=cmap(norm(share)),
                               edgecolor="0.3", lw=0.5))
        ax.text(x, y, f"{int(r.saddle_found)}/{int(r.cases)}", ha="center", va="center", fontsize=7.5,
                color="white" if share < 0.5 else "black")
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, fraction=0.05, pad=0.02)
    bar.set_label("share where multi-start\nfound the saddle", fontsize=7)
    bar.ax.tick_params(labelsize=7)
    ax.set_xticks(range(len(xs)), [f"{x:.1f}" for x in xs])
    ax.set_yticks(range(len(cb)), [f"{b:g}" for b in cb])
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_ylim(-0.6, len(cb) - 0.4)
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$ (the best answer)")
    ax.set_ylabel(r"$\beta$")
    plotting.panel(ax, "b", "three-point cases: multi-start found the saddle / cases", fontsize=7.5)
    handles = [Patch(facecolor=count_colour[n], edgecolor="0.3", lw=0.5, label=f"(a) {n} point{'s' if n > 1 else ''}")
               for n in (1, 2, 3)]
    plotting.legend_below(fig, handles, ncol=3)
    return fig


def render(t: dict[str, pd.DataFrame]) -> Figure:
    return draw(t["data"], t["cells"])


def caption(t: dict[str, pd.DataFrame]) -> str:
    c = t["data"]
    three = c[c.points_certified == 3]
    one = c[c.points_certified == 1]
    found = int(three.saddle_found.sum())
    per_beta = ", ".join(f"{g.saddle_found.sum()} of {len(g)} at beta = {b:g}" for b, g in three.groupby("beta"))
    thresholds = "/".join(f"{g.pi_ref_a.max():.1f}" for _, g in three.groupby("beta"))
    three_betas = "/".join(f"{b:g}" for b in sorted(three.beta.unique()))
    return (
        f"Figure 31. Certified search against multi-start root finding on the K = 3 phase diagram: {len(c)} "
        f"cases (the direct penalty at G = ∞, rewards 1, 0.5, 0, {c.groupby('beta').size().max()} points of the "
        f"simplex lattice of step 0.1 x {c.beta.nunique()} betas). (a) The number of stationary points each "
        f"search reports, per beta. The certified search ({int(c.certified.sum())} of {len(c)} certified) finds "
        f"three in {len(three)} cases (a stable interior point, a saddle, and the vertex a as a stable limit; "
        f"where pi_ref(a) <= {thresholds} at beta = {three_betas}) and one, the vertex, in {len(one)}. The "
        f"multi-start search, before certification, reported at most {int(c.points_multistart.max())} and never "
        f"the vertex as a limit in those {len(three)} cases; it found the saddle in {found} and missed it in "
        f"{len(three) - found}. (b) Where (colour: the share found): {per_beta}: the larger beta, the more it misses."
    )


SPEC = FigureSpec(31, "certified_search", caption, tables, render, __name__)
