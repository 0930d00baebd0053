"""The figures' shared style and shared drawing helpers (DataFrame in, matplotlib Figure out; no file I/O).

Each figure's own drawing lives in its module under :mod:`grpo_theory.figures`.
One style for the set: two widths (:data:`COLUMN`, :data:`DOUBLE`), text of at least
:data:`MIN_FONT_PT` at print size, one colour per method (:func:`method_color`), one sequential map
per quantity (:func:`beta_colors`, :func:`group_colors`), "(a)", "(b)" on panels (:func:`panel`),
legends off the data (:func:`legend_below`, :func:`legend_right`), a dotted diagonal for pi = pi_ref.
``tests/test_figure_style.py`` renders every figure and checks these.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import cm, colors
from matplotlib.figure import Figure

#: The two widths a figure may have (inches): one column, two columns.
COLUMN = 3.4
DOUBLE = 7.0
WIDTHS = (COLUMN, DOUBLE)
#: No text smaller than this at print size (figures are drawn at print size).
MIN_FONT_PT = 7.0
STYLE = {
    "font.size": 8, "axes.labelsize": 8, "axes.titlesize": 8, "legend.fontsize": 7, "figure.titlesize": 8.5,
    "xtick.labelsize": 7, "ytick.labelsize": 7, "lines.linewidth": 1.3, "axes.linewidth": 0.6,
    "legend.frameon": False, "savefig.dpi": 220, "font.family": "DejaVu Sans", "axes.unicode_minus": True,
    # no bbox="tight": the saved figure keeps its declared width (3.4 or 7 in); constrained layout keeps
    # every label inside it
    "savefig.bbox": "standard",
}
#: One colour per method, the same in every figure.
METHOD_COLORS = {
    "GRPO reverse/scale": "#1f5fa8", "GRPO reverse/shift": "#6aa5e0", "GRPO direct/scale": "#b2182b",
    "GRPO direct/shift": "#ef8a62", "RLHF": "#333333", "NLHF": "#2ca25f",
    # each framework's default objective
    "TRL 1.9": "#1f5fa8", "TRL 1.16": "#7b3294", "verl": "#8c510a", "OpenRLHF": "#01665e",
    # points measured on a trained model
    "trained": "#e08214",
}
#: The normalisation conventions of Figure 13 (the note's and TRL's).
CONVENTION_COLORS = {"note": "#1f5fa8", "TRL": "#7b3294"}
#: One sequential map per quantity: beta (and beta/gamma), G, anything else ordered (noise, pi_ref).
BETA_CMAP, GROUP_CMAP, ORDER_CMAP = "viridis", "plasma", "cividis"
#: A reference artist (the diagonal, pi_ref's level, a zero line) carries this gid: it is not data.
REFERENCE = "reference"


def method_color(name: str) -> str:
    """The colour of a method, variant, framework or trained source, from its label."""
    n = str(name)
    for key in ("TRL 1.16", "TRL 1.9", "verl", "OpenRLHF", "NLHF", "RLHF"):
        if key in n:
            return METHOD_COLORS[key]
    for pen in ("reverse", "direct"):
        for norm in ("scale", "shift"):
            if f"{pen}/{norm}" in n:
                return METHOD_COLORS[f"GRPO {pen}/{norm}"]
    if "log pooling" in n:
        return METHOD_COLORS["RLHF"]
    if "trained" in n or "trainer" in n or "TRL" in n:
        return METHOD_COLORS["trained"]
    raise KeyError(f"no colour for {name!r}")


def new_figure(width=COLUMN, height=2.7, ncols=1, nrows=1, **kw) -> tuple[Figure, np.ndarray]:
    """A figure of one of the two widths (:data:`WIDTHS`) with ``ncols`` panels (a row) or a grid."""
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, (axes[0] if nrows == 1 else axes)


def _sequential(values, cmap: str, log: bool = True) -> list:
    finite = [v for v in values if np.isfinite(v)]
    if not finite:
        return ["black"] * len(values)
    lo, hi = min(finite), max(finite)
    norm = colors.LogNorm(lo, hi) if log and lo > 0 and hi > lo else colors.Normalize(lo, hi if hi > lo else lo + 1)
    cm_ = matplotlib.colormaps[cmap]
    # the map's pale top is unreadable on white: use 0..0.85 of it; G = inf is black
    return [cm_(0.85 * float(norm(v))) if np.isfinite(v) else "black" for v in values]


def beta_colors(values) -> list:
    """Colours of beta (or beta/gamma) values, on the one map for beta (log scale)."""
    return _sequential(values, BETA_CMAP)


def group_colors(values) -> list:
    """Colours of group sizes, on the one map for G (log scale); G = inf is black."""
    return _sequential(values, GROUP_CMAP)


def order_colors(values, log: bool = False) -> list:
    """Colours of any other ordered quantity (verifier noise, pi_ref)."""
    return _sequential(values, ORDER_CMAP, log=log)


def param_colors(values) -> list:
    """Kept for callers outside the figures: beta's map."""
    return beta_colors(values)


def infty(text) -> str:
    """Labels say "∞", never "inf"."""
    import re

    return re.sub(r"\binf\b", "∞", str(text))


def sci_text(v: float, *, plain: bool = False) -> str:
    """A step size as "3 × 10⁻⁴" (mathtext, for figures) or "3 x 10^-4" (``plain``, for captions);
    a mantissa of 1 is dropped ("10⁻³")."""
    m, e = f"{v:.0e}".split("e")
    if plain:
        return (f"{m} x " if m != "1" else "") + f"10^{int(e)}"
    return (f"{m} × " if m != "1" else "") + f"10$^{{{int(e)}}}$"


def g_text(G) -> str:
    """"$G$ = 8" or "$G$ = ∞": italic G, the infinity sign."""
    return "$G$ = ∞" if not np.isfinite(float(G)) else f"$G$ = {int(G)}"


def panel(ax, letter: str, text: str = "", **kw) -> None:
    """Title a panel "(a) text": every multi-panel figure letters its panels."""
    ax.set_title(f"({letter}) {text}".rstrip(), **kw)


def reference(artist):
    """Mark an artist (a list of them, as ``plot`` returns) as a reference line, not data."""
    for a in artist if isinstance(artist, list | tuple) else [artist]:
        a.set_gid(REFERENCE)
    return artist


def legend_below(fig: Figure, handles=None, labels=None, ncol: int = 3, **kw):
    """A figure legend below the panels, never on data."""
    if handles is None:
        handles, labels = fig.axes[0].get_legend_handles_labels()
    if labels is None:
        labels = [h.get_label() for h in handles]
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol, **kw)


def legend_right(fig: Figure, handles=None, labels=None, **kw):
    """A figure legend right of the panels, never on data."""
    if handles is None:
        handles, labels = fig.axes[0].get_legend_handles_labels()
    if labels is None:
        labels = [h.get_label() for h in handles]
    return fig.legend(handles, labels, loc="outside right upper", **kw)


def diagonal(ax) -> None:
    """The dotted diagonal pi = pi_ref on a square 0-1 panel (a reference, not data)."""
    reference(ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=0))
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
    ax.set_ylabel(r"$\pi_\theta(a)$ at the stationary point")


def binary_curves(df: pd.DataFrame, param: str, label: str, title: str,
                  jump_at_zero: bool = True, overlay: pd.DataFrame | None = None, overlay_label: str = "",
                  log_inset: bool = False) -> Figure:
    """pi(a) against pi_ref(a), one curve per value of ``param`` (Figures 1-4).

    ``param`` is ``"group_size"`` (coloured on G's map) or a beta (beta's map). ``overlay``: another
    figure's curves (same ``param``), thin grey dashes, for contrast; ``log_inset``: a second panel on a
    log pi_ref axis down to the grid's smallest value, showing how each curve behaves as pi_ref -> 0.
    The legend sits below the panels, off the data.
    """
    if log_inset:
        fig, (ax, logax) = new_figure(width=DOUBLE, height=3.4, ncols=2)
    else:
        fig, (ax,) = new_figure(height=3.9)
    values = list(dict.fromkeys(df[param]))
    cols = group_colors(values) if param == "group_size" else beta_colors(values)
    for v, c in zip(values, cols):
        d = df[df[param] == v].sort_values("pi_ref_a")
        text = "∞" if not np.isfinite(v) else f"{v:g}"
        ax.plot(d.pi_ref_a, d.pi_a, color=c, label=f"{label} = {text}")
        if jump_at_zero:
            # the value just right of 0 (open circle) against the value at 0, which is 0 (filled)
            lim = d.pi_a.iloc[0]
            if lim > 0.02:
                ax.plot([0], [lim], marker="o", mfc="white", mec=c, ms=3.2, mew=0.9, zorder=3)
    if jump_at_zero:
        ax.plot([0], [0], marker="o", color="black", ms=3.2, zorder=4)
    if overlay is not None:
        for v in values:
            d = overlay[overlay[param] == v].sort_values("pi_ref_a")
            ax.plot(d.pi_ref_a, d.pi_a, "--", color="0.55", lw=0.7, zorder=1)
        ax.plot([], [], "--", color="0.55", lw=0.7, label=overlay_label)
    diagonal(ax)
    if log_inset:
        for v, c in zip(values, cols):
            d = df[df[param] == v].sort_values("pi_ref_a")
            logax.plot(d.pi_ref_a, d.pi_a, color=c, lw=1.0)
        logax.set_xscale("log")
        logax.set_xlim(df.pi_ref_a.min(), 1.0)
        logax.set_ylim(-0.02, 1.02)
        logax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$ (log scale)")
        logax.set_ylabel(r"$\pi_\theta(a)$ at the stationary point")
        panel(ax, "a", title)
        panel(logax, "b", rf"the same, down to $\pi_{{\mathrm{{ref}}}}(a)$ = {df.pi_ref_a.min():.0e}")
        legend_below(fig, *ax.get_legend_handles_labels(), ncol=4)
    else:
        ax.set_title(title)
        legend_below(fig, *ax.get_legend_handles_labels(), ncol=3, columnspacing=1.0, handlelength=1.4)
    return fig


def ternary(pi: np.ndarray) -> np.ndarray:
    """Barycentric -> 2-d: a at the top, b bottom left, c bottom right."""
    corners = np.array([[0.5, math.sqrt(3) / 2], [0.0, 0.0], [1.0, 0.0]])
    return pi @ corners


def simplex_axes(ax, labels, rewards) -> None:
    """The probability simplex as a triangle with labelled vertices (a top, b left, c right)."""
    tri = ternary(np.eye(3))
    ax.fill(tri[:, 0], tri[:, 1], facecolor="0.97", edgecolor="0.3", lw=0.7)
    for level in (0.2, 0.4, 0.6, 0.8):             # barycentric grid: pi(o) = level for each vertex o
        for o in range(3):
            ends = []
            for other in (o + 1) % 3, (o + 2) % 3:
                p = np.zeros(3)
                p[o], p[other] = level, 1 - level
                ends.append(ternary(p))
            ends = np.array(ends)
            ax.plot(ends[:, 0], ends[:, 1], color="0.8", lw=0.45, zorder=1.5)
    for i, name in enumerate(labels):
        r = "" if rewards is None else f" (r = {rewards[i]:g})"
        pos = {0: (tri[0, 0], tri[0, 1] + 0.03, "bottom"), 1: (tri[1, 0], -0.04, "top"),
               2: (tri[2, 0], -0.04, "top")}[i]
        ax.text(pos[0], pos[1], name + r, ha="center", va=pos[2], fontsize=7.5)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.1, math.sqrt(3) / 2 + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")


def predicted_vs_measured(df: pd.DataFrame, group_col: str = "config") -> Figure:
    """Scatter of measured against predicted answer probabilities with the identity line."""
    fig, (ax,) = new_figure(height=3.0)
    groups = list(dict.fromkeys(df[group_col]))
    palette = cm.tab10(np.arange(10)) if len(groups) <= 10 else cm.tab20(np.arange(20))
    for g, c in zip(groups, palette):
        d = df[df[group_col] == g]
        ax.errorbar(d.predicted, d.measured, yerr=d.get("measured_se"), fmt="o", ms=2.6, color=c,
                    elinewidth=0.7, capsize=1, label=infty(g))
    ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"predicted $\pi(a)$ (theory, from the reference model)")
    ax.set_ylabel(r"measured $\pi_\theta(a)$ (trained model)")
    ax.legend(loc="upper left", fontsize=7)
    return fig
