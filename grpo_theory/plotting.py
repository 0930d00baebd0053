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

from .errors import InvalidInputError

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
#: The visual language: every colour a figure may use, with what it means, each colour one meaning
#: (docs/figures.md shows this table). A figure module names a colour from here (``COLORS[name]``) or
#: uses a neutral (:data:`NEUTRALS`); ``tests/test_figure_language.py`` fails on any other colour.
PALETTE: dict[str, tuple[str, str]] = {
    # methods: one colour per objective, in every figure
    "GRPO reverse/scale": ("#1f5fa8", "GRPO, reverse (k3) penalty, scale normalisation; TRL 1.9's default"),
    "GRPO reverse/shift": ("#6aa5e0", "GRPO, reverse penalty, shift normalisation"),
    "GRPO direct/scale": ("#b2182b", "GRPO, direct penalty, scale normalisation"),
    "GRPO direct/shift": ("#ef8a62", "GRPO, direct penalty, shift normalisation"),
    "RLHF": ("#333333", "RLHF (KL-regularised reward), i.e. log pooling"),
    "NLHF": ("#2ca25f", "NLHF (Nash learning from preferences)"),
    "TRL 1.16": ("#7b3294", "TRL 1.16's default objective (ratio x k3 in the loss); TRL's normalisation"),
    "verl": ("#8c510a", "verl's default objective"),
    "OpenRLHF": ("#01665e", "OpenRLHF's default objective"),
    "trained": ("#e08214", "a point measured on a trained model"),
    # the GRPO family (Figure 19): advantages other than GRPO's
    "RLOO": ("#762a83", "RLOO (leave-one-out baseline)"),
    "REINFORCE++ baseline": ("#35978f", "REINFORCE++ with a group baseline"),
    "pass@2": ("#8c8c1a", "pass@k advantage, k = 2"),
    "pass@4": ("#7f3b08", "pass@k advantage, k = 4"),
    "ties filtered": ("#80cdc1", "GRPO with tied groups filtered out"),
    "entropy bonus": ("#f781bf", "GRPO with an entropy bonus"),
    # what a trainer's KL estimator amounts to (Figure 21), where it is no method above
    "regularises nothing": ("#e7298a", "a KL estimator whose expected gradient restores no mass (a vertex)"),
    "another condition": ("#9970ab", "a KL estimator that amounts to another (clamped, non-smooth) condition"),
    # which stationary point (basins, where training ends)
    "interior point": ("#5ab4ac", "the interior stable point, its basin, runs ending there (the lower point)"),
    "vertex point": ("#d8b365", "the vertex (or the upper stable point), its basin, runs ending there"),
    # counts of stationary points over a plane
    "1 point": ("#fee0b6", "one stationary point"),
    "2 points": ("#fdb863", "two stationary points (a fold)"),
    "3 points": ("#b35806", "three stationary points"),
    # the answer word a trained model gives (Figure 26)
    "answer Yes": ("#17becf", "a prompt answered 'Yes'"),
    "answer No": ("#e377c2", "a prompt answered 'No'"),
    # settings of one study, in the order its legend lists them (loss types, learning rates)
    "setting 1": ("#66c2a5", "the first setting of a study, as its legend says"),
    "setting 2": ("#fc8d62", "the second setting"),
    "setting 3": ("#8da0cb", "the third setting"),
    "setting 4": ("#a6d854", "the fourth setting"),
    # a value beyond a colour scale's top
    "beyond the scale": ("#c4c4c4", "a value above the colour bar's top (the bar says how far)"),
}
#: The colour of each named entry of :data:`PALETTE`.
COLORS = {k: v[0] for k, v in PALETTE.items()}
#: Neutrals, for what is not data: black for pi_ref and its path, the stationary points' markers (filled:
#: stable; open: unstable; square: a vertex limit) and text; greys ("0.2".."0.95") for reference lines
#: (the diagonal pi = pi_ref, a target, a boundary), the barycentric grid, runs that had not converged
#: and marker edges; white for contours drawn on a colour map and open markers' faces.
NEUTRALS = ("black", "white", "none", "grey levels '0.0'-'1.0'")
#: One sequential map per quantity, on one scale in every figure (so the same beta has the same colour
#: everywhere): beta (and beta/gamma) on :data:`BETA_CMAP` over :data:`BETA_RANGE` (log), G on
#: :data:`GROUP_CMAP`, any other ordered quantity (noise, pi_ref, a step size) on :data:`ORDER_CMAP`,
#: a probability filled over a plane on :data:`PROB_CMAP`.
BETA_CMAP, GROUP_CMAP, ORDER_CMAP, PROB_CMAP = "viridis", "plasma", "cividis", "magma"
#: The beta scale's ends, the smallest and largest beta a figure colours (Figures 1-3): the narrowest span
#: that holds them all, so neighbouring betas stay apart (0.5 and 1: 0.12 of the map; over 0.02-20 it
#: was 0.085 and Figure 9's two betas were hard to tell apart). A beta outside is drawn at the nearer end.
BETA_RANGE = (0.04, 5.0)
#: The G scale's ends (log), the smallest and largest finite G a figure colours (Figure 4); G = inf is black.
GROUP_RANGE = (2.0, 64.0)
COLORMAPS = {BETA_CMAP: "beta (and beta/gamma), log scale over 0.04-5 (BETA_RANGE)",
             GROUP_CMAP: "group size G, log scale",
             ORDER_CMAP: "another ordered quantity (verifier noise, pi_ref, a step size)",
             PROB_CMAP: "a probability filled over a plane"}
#: What each line style means: one meaning each, named (the name a figure module's ``LANGUAGE`` gives it).
#: Each figure module declares in ``LANGUAGE`` (style or marker -> meaning name) every line style and marker
#: it draws; ``tests/test_figure_language.py`` fails on a style or marker drawn but not declared, on one
#: outside these tables, and on a declared meaning that is not the table's. An unstable branch is a branch of
#: stationary points (solid) carrying the unstable point's open circles (Figures 7 and 20), not a line style of
#: its own; curves of one colour carry direct labels (Figures 8, 15), and a curve on another is thin inside the
#: other's wide line (Figures 18, 19), not a dash pattern.
LINESTYLES: dict[str, tuple[str, str]] = {
    "-": ("data", "data: a theory curve (a branch of stationary points; an unstable one carries open circles), "
                  "a trained run, a fit"),
    "--": ("comparison", "a comparison beside the data: another objective's or penalty's curve (RLHF, NLHF, the "
                         "direct penalty), a fitted baseline (the logit shift), an overlay (G = ∞'s boundary), f∘f"),
    ":": ("reference", "a reference: pi = pi_ref, zero, a predicted level, the exact-gradient flow beside a run"),
    "-.": ("marked value", "a marked value: a target, a threshold (a sampling floor, a collapse level, a contour "
                           "level), a chosen parameter (Figure 7's beta of (c, d))"),
}
#: What each marker means: one meaning each, named as in :data:`LINESTYLES`. A stationary point is a circle,
#: filled when stable and open when unstable; a vertex that is a stable limit point is a square.
MARKERS: dict[str, tuple[str, str]] = {
    "o": ("point", "a point of data: a stationary point (filled: stable; open: unstable), a measurement; at a "
                   "curve's jump (Figures 1-4), open: the one-sided limit, not attained"),
    "s": ("vertex", "a vertex as a stable limit point (Figure 11)"),
    "D": ("trained", "a point measured on a trained model beside theory"),
    "^": ("key", "a category that the figure's legend names (a source, a step size, an answer word, a baseline)"),
    "P": ("key", "a second category that the figure's legend names, beside ^ (a step size, a baseline)"),
    "v": ("below the axis", "a value below the axis, drawn on its edge"),
    "x": ("second theory", "a second theory's prediction beside the first (the sequence-level theory)"),
    "_": ("level", "a level per item (a prediction or pi_ref per prompt)"),
    ".": ("steps", "a run's steps"),
    "*": ("reference policy", "pi_ref itself, where a figure draws the policy's space (Figures 8, 11)"),
}
#: Neither a line style nor a marker: no line ("" or "none"), no marker.
NO_STYLE = ("", "none", "None")
#: What this module draws for Figures 1-4 and :func:`predicted_vs_measured` (see :data:`LINESTYLES`).
LANGUAGE = {"--": "comparison", ":": "reference", "o": "point"}
#: One colour per method, the same in every figure (the method entries of :data:`PALETTE`).
METHOD_COLORS = {k: COLORS[k] for k in ("GRPO reverse/scale", "GRPO reverse/shift", "GRPO direct/scale",
                                        "GRPO direct/shift", "RLHF", "NLHF", "TRL 1.16", "verl", "OpenRLHF",
                                        "trained")}
METHOD_COLORS["TRL 1.9"] = COLORS["GRPO reverse/scale"]          # TRL 1.9's default is reverse/scale
#: The normalisation conventions of Figure 13 (the note's; TRL's), the figure's two settings: drawn for both
#: penalties, so not in a method's colour (reverse/scale's blue and TRL 1.16's purple each name one objective).
CONVENTION_COLORS = {"note": COLORS["setting 1"], "TRL": COLORS["setting 2"]}
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


def _sequential(values, cmap: str, log: bool = True, span: tuple[float, float] | None = None) -> list:
    finite = [v for v in values if np.isfinite(v)]
    if not finite:
        return ["black"] * len(values)
    lo, hi = span if span is not None else (min(finite), max(finite))
    if span is not None:
        values = [min(max(v, lo), hi) if np.isfinite(v) else v for v in values]
    norm = colors.LogNorm(lo, hi) if log and lo > 0 and hi > lo else colors.Normalize(lo, hi if hi > lo else lo + 1)
    cm_ = matplotlib.colormaps[cmap]
    # the map's pale top is unreadable on white: use 0..0.85 of it; G = inf is black
    return [cm_(0.85 * float(norm(v))) if np.isfinite(v) else "black" for v in values]


def beta_colors(values) -> list:
    """Colours of beta (or beta/gamma) values, on the one map for beta (log scale over :data:`BETA_RANGE`,
    the same in every figure: beta = 0.5 has one colour everywhere)."""
    return _sequential(values, BETA_CMAP, span=BETA_RANGE)


def group_colors(values) -> list:
    """Colours of group sizes, on the one map for G (log scale over :data:`GROUP_RANGE`); G = inf is black."""
    return _sequential(values, GROUP_CMAP, span=GROUP_RANGE)


def order_colors(values, log: bool = False) -> list:
    """Colours of any other ordered quantity (verifier noise, pi_ref), on :data:`ORDER_CMAP` over the values'
    own range."""
    return _sequential(values, ORDER_CMAP, log=log)


def setting_colors(n: int) -> list[str]:
    """The colours of a study's ``n`` settings (loss types, learning rates), in its legend's order."""
    if n > 4:
        raise KeyError(f"{n} settings: the palette names 4")
    return [COLORS[f"setting {i + 1}"] for i in range(n)]


def param_colors(values) -> list:
    """Kept for callers outside the figures: beta's map."""
    return beta_colors(values)


def side_by_side(x, *, width: float, log: bool = False) -> np.ndarray:
    """Positions that keep coinciding points apart: the points of ``x`` that share one value (to 9 digits)
    are moved, in their order, to x + (k - (n - 1)/2) * width for the k-th of n (on a log axis
    ``log=True``: x * exp((k - (n - 1)/2) * width)); a value held by one point stays. Deterministic, so a
    caption can state the offset ("drawn side by side, ``width`` apart")."""
    x = np.asarray(x, dtype=float)
    if width <= 0:
        raise InvalidInputError(f"side_by_side: width must be positive, got {width!r}")
    out = x.copy()
    keys = np.round(x, 9)
    for v in np.unique(keys[np.isfinite(keys)]):
        idx = np.flatnonzero(keys == v)
        shift = (np.arange(len(idx)) - (len(idx) - 1) / 2) * width
        out[idx] = x[idx] * np.exp(shift) if log else x[idx] + shift
    return out


def apart(x, *, gap: float) -> np.ndarray:
    """Positions that keep near values at least ``gap`` apart: the distinct values of ``x``, in order, form
    runs in which each is within ``gap`` of the next; a run of n values is redrawn n evenly spaced positions
    ``gap`` apart, centred on the run's mean (a value with no neighbour within ``gap`` stays; equal values share
    their position). Deterministic, so a caption can say so ("drawn at least ``gap`` apart")."""
    x = np.asarray(x, dtype=float)
    if gap <= 0:
        raise InvalidInputError(f"apart: gap must be positive, got {gap!r}")
    values = np.unique(x[np.isfinite(x)])
    where = {}
    start = 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] - values[i - 1] >= gap:
            run = values[start:i]
            centre = run.mean()
            for k, v in enumerate(run):
                where[v] = centre + (k - (len(run) - 1) / 2) * gap if len(run) > 1 else v
            start = i
    return np.array([where.get(v, v) for v in x])


def at_most(value: float, spec: str) -> str:
    """``value`` written with the format ``spec`` (".4f", ".1e", ".2g"), rounded up at the printed precision
    rather than to nearest, so that a caption's "within X" or "at most X" is a true bound (0.01932 with ".2g"
    is "0.02", not "0.019")."""
    text = format(value, spec)
    if not np.isfinite(value) or float(text) >= value:
        return text
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    step = 10.0 ** ((int(exponent) if exponent else 0) - decimals)
    return format(float(text) + step, spec)


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
