"""The figures' shared style and shared drawing helpers (DataFrame in, matplotlib Figure out; no file I/O).

Each figure's own drawing lives in its module under :mod:`grpo_theory.figures`.
One style for the set: column width (3.4 in), 8-9 pt text, viridis for ordered
parameters, a dotted diagonal for pi_theta = pi_ref.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib import cm, colors
from matplotlib.figure import Figure

COLUMN = 3.4
STYLE = {
    "font.size": 8, "axes.labelsize": 8, "axes.titlesize": 8.5, "legend.fontsize": 6.8,
    "xtick.labelsize": 7, "ytick.labelsize": 7, "lines.linewidth": 1.3, "axes.linewidth": 0.6,
    "legend.frameon": False, "savefig.bbox": "tight", "savefig.dpi": 220, "font.family": "DejaVu Sans",
}
METHOD_COLORS = {
    "GRPO reverse/scale": "#1f5fa8", "GRPO reverse/shift": "#6aa5e0", "GRPO direct/scale": "#b2182b",
    "GRPO direct/shift": "#ef8a62", "RLHF": "#333333", "NLHF": "#2ca25f",
}


def new_figure(width=COLUMN, height=2.7, ncols=1) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, axes


def param_colors(values) -> list:
    norm = colors.LogNorm(min(values), max(values)) if min(values) > 0 else colors.Normalize()
    return [cm.viridis(0.8 * norm(v)) for v in values]      # viridis' yellow top is unreadable on white


def infty(text) -> str:
    """Labels say "∞", never "inf"."""
    import re

    return re.sub(r"\binf\b", "∞", str(text))


def diagonal(ax) -> None:
    ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=0)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
    ax.set_ylabel(r"$\pi_\theta(a)$ at the stationary point")


def binary_curves(df: pd.DataFrame, param: str, label: str, title: str,
                  jump_at_zero: bool = True, measured: pd.DataFrame | None = None,
                  overlay: pd.DataFrame | None = None, overlay_label: str = "",
                  log_inset: bool = False) -> Figure:
    """pi(a) against pi_ref(a), one curve per value of ``param`` (Figures 1-4, 9).

    ``overlay``: another figure's curves (same ``param``), dashed and thin, for contrast;
    ``log_inset``: a second panel on a log pi_ref axis down to the grid's smallest value, showing
    how each curve behaves as pi_ref -> 0.
    """
    if log_inset:
        fig, (ax, logax) = new_figure(width=2 * COLUMN * 0.85, height=2.8, ncols=2)
    else:
        fig, (ax,) = new_figure()
    values = list(dict.fromkeys(df[param]))
    finite = [v for v in values if np.isfinite(v)]
    cols = param_colors(finite) + (["black"] if len(finite) < len(values) else [])
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
        for v, c in zip(values, cols):
            d = overlay[overlay[param] == v].sort_values("pi_ref_a")
            ax.plot(d.pi_ref_a, d.pi_a, "--", color=c, lw=0.7, alpha=0.8)
        ax.plot([], [], "--", color="0.4", lw=0.7, label=overlay_label)
    if log_inset:
        for v, c in zip(values, cols):
            d = df[df[param] == v].sort_values("pi_ref_a")
            logax.plot(d.pi_ref_a, d.pi_a, color=c, lw=1.0)
        logax.set_xscale("log")
        logax.set_xlim(df.pi_ref_a.min(), 1.0)
        logax.set_ylim(-0.02, 1.02)
        logax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$ (log scale)")
        logax.set_title(rf"the same, down to $\pi_{{\mathrm{{ref}}}}(a)$ = {df.pi_ref_a.min():.0e}")
    if measured is not None and len(measured):
        for v, c in zip(values, cols):
            m = measured[measured[param] == v]
            if len(m):
                ax.errorbar(m.pi_ref_a, m.measured, yerr=m.measured_se, fmt="o", ms=2.6, color=c, mec="white",
                            mew=0.4, elinewidth=0.8, capsize=1.2, zorder=5)
        ax.plot([], [], "o", color="0.3", ms=2.6, label="trained model")
    diagonal(ax)
    ax.set_title(title)
    ax.legend(loc="lower right", handlelength=1.4, labelspacing=0.25)
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
    ax.legend(loc="upper left", fontsize=5.8)
    return fig
