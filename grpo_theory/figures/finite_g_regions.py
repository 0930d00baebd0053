"""Figure 22: Figure 7(b) at finite G: how many stationary points the direct penalty has over
(beta, pi_ref(a)) at G = 8 and G = 64 (certified counts, docs/results/fig7b_finite_g.csv), beside G = inf."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .. import closed_form, plotting
from ._spec import FigureSpec

#: the colours of Figure 7(b): the palette's counts of stationary points
COUNT_COLORS = {1: plotting.COLORS["1 point"], 2: plotting.COLORS["2 points"], 3: plotting.COLORS["3 points"]}
COUNT_LABELS = {1: "1 stationary point", 2: "2 (a fold: only on the boundary curve)",
                3: "3 stationary points"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"--": "comparison"}


def large_group_counts(betas, pi_refs) -> pd.DataFrame:
    """G = inf on the same grid, from the sign of h at its turning point (Figure 7(b)'s rule):
    3 (the vertex as a limit point and two interior points) where min h < 0, else 1 (the vertex)."""
    B, P = np.meshgrid(np.asarray(betas, float), np.asarray(pi_refs, float), indexing="ij")
    h_min = closed_form.large_group_direct_h(closed_form.large_group_direct_turning_point(B), P, B)
    return pd.DataFrame(dict(G=np.inf, beta=B.ravel(), pi_ref_a=P.ravel(),
                             n_points=np.where(h_min < 0, 3, 1).ravel(), h_at_turning_point=h_min.ravel()))


def large_group_boundary(n: int = 400) -> pd.DataFrame:
    """The G = inf boundary h(x*) = 0 as a curve: pi_ref(a) at which min h = 0, for each beta where it exists.

    ``h(x*) = c(beta) + logit(p)`` with ``c = 1/(beta sqrt(x*(1-x*))) - logit(x*)``, so the boundary is
    ``p = expit(-c(beta))`` exactly (no contouring)."""
    b = np.geomspace(0.05, 20.0, n)
    xs = closed_form.large_group_direct_turning_point(b)
    c = 1.0 / (b * np.sqrt(xs * (1 - xs))) - np.log(xs / (1 - xs))
    return pd.DataFrame(dict(beta=b, pi_ref_a=1.0 / (1.0 + np.exp(c))))


def tables(inputs) -> dict[str, pd.DataFrame]:
    study = inputs.results_table("fig7b_finite_g.csv")
    data = study.rename(columns={"n_certified": "n_points"})[
        ["G", "beta", "pi_ref_a", "n_points", "certified", "n_scan", "n_stable_scan"]]
    inf = large_group_counts(np.sort(data.beta.unique()), np.sort(data.pi_ref_a.unique()))
    return {"data": data, "large_group": inf, "boundary": large_group_boundary()}


def _edges(v: np.ndarray, log: bool) -> np.ndarray:
    """Cell edges around grid points (midpoints; geometric on a log axis), so cells tile the panel."""
    w = np.log(v) if log else v
    mid = (w[1:] + w[:-1]) / 2
    e = np.concatenate([[w[0] - (mid[0] - w[0])], mid, [w[-1] + (w[-1] - mid[-1])]])
    return np.exp(e) if log else e


def draw(data: pd.DataFrame, inf: pd.DataFrame, boundary: pd.DataFrame) -> Figure:
    """(a) G = 8, (b) G = 64, (c) G = inf: one cell per grid point, coloured by the number of points."""
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=2.9, ncols=3, sharey=True)
    panels = [(g, data[data.G == g]) for g in sorted(data.G.unique())] + [(np.inf, inf)]
    seen = set()
    for k, (ax, (G, d)) in enumerate(zip(axes, panels)):
        b, p = np.sort(d.beta.unique()), np.sort(d.pi_ref_a.unique())
        n = d.pivot(index="pi_ref_a", columns="beta", values="n_points").loc[p, b].to_numpy()
        present = sorted(int(v) for v in np.unique(n))
        seen.update(present)
        rgb = np.array([[_rgb(COUNT_COLORS[int(v)]) for v in row] for row in n])
        ax.pcolormesh(_edges(b, True), _edges(p, False), rgb, shading="flat", rasterized=False)
        # G = inf's exact boundary on every panel: how far the finite-G region is from it
        line = ax.plot(boundary.beta, boundary.pi_ref_a, color="black", lw=0.8, ls="--")
        plotting.reference(line)
        ax.set_xscale("log")
        ax.set_xlim(_edges(b, True)[[0, -1]])
        ax.set_ylim(_edges(p, False)[[0, -1]])
        ax.set_xlabel(r"$\beta$")
        three = int((n == 3).sum())
        plotting.panel(ax, "abc"[k], f"{plotting.g_text(G)}: 3 points in {three} of {n.size} cells")
    axes[0].set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
    handles = [Patch(facecolor=COUNT_COLORS[c], edgecolor="0.5", lw=0.4, label=COUNT_LABELS[c]) for c in sorted(seen)]
    handles.append(plotting.reference(axes[0].plot([], [], color="black", lw=0.8, ls="--",
                                                   label=r"boundary at $G$ = ∞ (exact)"))[0])
    plotting.legend_below(fig, handles, [h.get_label() for h in handles], ncol=len(handles))
    return fig


def _rgb(c: str):
    from matplotlib import colors
    return colors.to_rgb(c)


def render(t):
    return draw(t["data"], t["large_group"], t["boundary"])


def counts(t) -> dict:
    """The numbers the caption states, from the plotted tables."""
    d = t["data"]
    out = {}
    for G, g in d.groupby("G"):
        three = g[g.n_points == 3]
        out[int(G)] = dict(cells=len(g), three=len(three), certified=int(g.certified.astype(bool).sum()),
                           agree=int((g.n_points == g.n_scan).sum()),
                           beta_lo=float(three.beta.min()) if len(three) else float("nan"),
                           beta_hi=float(three.beta.max()) if len(three) else float("nan"),
                           p_hi=float(three.pi_ref_a.max()) if len(three) else float("nan"))
    inf = t["large_group"]
    out["inf"] = dict(cells=len(inf), three=int((inf.n_points == 3).sum()))
    # where G = 64's three-point cells sit against G = inf's: the same cell counted on both panels
    big = d[(d.G == d.G.max()) & (d.n_points == 3)].merge(inf[["beta", "pi_ref_a", "n_points"]],
                                                         on=["beta", "pi_ref_a"], suffixes=("", "_inf"))
    out["inside_inf"] = int((big.n_points_inf == 3).sum())
    return out


def _certified(*panels: dict) -> str:
    """"solvers.certify" when every cell of every panel is certified and the two-class scan agrees; else the
    counts (a caption may not call a count certified that is not)."""
    if all(g["certified"] == g["agree"] == g["cells"] for g in panels):
        return "solvers.certify"
    return "solvers.certify; " + ", ".join(f"{g['certified']} of {g['cells']} certified, the scan agrees in "
                                            f"{g['agree']}" for g in panels)


def caption(t) -> str:
    c = counts(t)
    g8, g64, gi = c[8], c[64], c["inf"]
    d = t["data"]
    nb, npi = d.beta.nunique(), d.pi_ref_a.nunique()
    return (
        f"Figure 22. Figure 7(b) at finite group size: the number of stationary points of the direct KL penalty "
        f"(binary question, rewards 1 and 0, scale normalisation, ddof 0) over (beta, pi_ref(a)) on a {nb} x {npi} "
        f"grid (beta in [{d.beta.min():g}, {d.beta.max():g}], log-spaced; pi_ref(a) in [{d.pi_ref_a.min():g}, "
        f"{d.pi_ref_a.max():g}]). (a) G = 8, (b) G = 64: certified counts "
        f"({_certified(g8, g64)}; docs/figures.md gives the checks). At finite G every stationary point is "
        f"interior (h -> +inf as pi(a) -> 1), so the count is odd; 2 occurs only on the fold curve, which no grid "
        f"point hits. (c) G = inf from the sign of h at its turning point. Dashed: the exact G = inf boundary. Cells with three points: {g8['three']} at G = 8, {g64['three']} at G = 64 "
        f"(beta {g64['beta_lo']:.3g} to {g64['beta_hi']:.3g}, pi_ref(a) <= {g64['p_hi']:.3g}), {gi['three']} at "
        f"G = inf. Take-away: the non-uniqueness of Figure 7 is a large-group effect; at G = 8 the stationary point "
        f"is unique everywhere on the grid, and at G = 64 three points survive only in a thin band along the G = inf "
        f"boundary ({c['inside_inf']} of its {g64['three']} cells inside the G = inf region, "
        f"{g64['three'] - c['inside_inf']} just outside it)."
    )


SPEC = FigureSpec(22, "finite_g_regions", caption, tables, render, __name__)
