"""Figure 9: trained language models against the theory (needs --trained CSV)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..problem import InvalidInputError, Objective
from ..solvers import stationary_points, stationary_policy
from ._data import binary, group
from ._spec import FigureSkipped, FigureSpec

#: marker and face of each source in Figure 9 (others get the default)
SOURCE_STYLE = {"small GPT": ("o", 3.2), "SmolLM2-135M, lr 1e-3": ("D", 4.5), "SmolLM2-135M, lr 3e-4": ("^", 4.8),
                "SmolLM2, TRL": ("s", 4.5)}


#: how each penalty is drawn: the curve's dash and the marker's face
PENALTY_MARK = {"reverse": "solid, filled", "direct": "dashed, open"}


def trained_points(measured: pd.DataFrame) -> pd.DataFrame:
    """A table of measured points, completed with the columns Figure 9 reads.

    Required: ``group_size, beta, pi_ref_a, measured, measured_se``. Optional: ``penalty``
    (default reverse), ``source`` (default "trained model"), ``predicted`` (default: the flow's
    stationary point from ``pi_ref_a``, computed here), ``residual_se`` (default ``measured_se``;
    study tables give the between-seed error here).
    """
    need = {"group_size", "beta", "pi_ref_a", "measured", "measured_se"}
    missing = sorted(need - set(measured.columns))
    if missing:
        raise InvalidInputError(f"the trained-points table lacks columns {missing}; it needs {sorted(need)}")
    m = measured.copy()
    if "penalty" not in m:
        m["penalty"] = "reverse"
    if "source" not in m:
        m["source"] = "trained model"
    if "predicted" not in m:
        m["predicted"] = [stationary_policy(binary(p), Objective(beta=float(b), group_size=group(G), penalty=pen)).pi[0]
                          for p, b, G, pen in zip(m.pi_ref_a, m.beta, m.group_size, m.penalty)]
    if "residual_se" not in m:
        m["residual_se"] = m.measured_se
    m["residual"] = m.measured - m.predicted
    return m


def trained_curves(measured: pd.DataFrame, n: int = 120) -> pd.DataFrame:
    """Every stable stationary branch for each (G, beta, penalty) of a table of measured points.

    Rows: ``group_size, beta, penalty, pi_ref_a, pi_a, branch`` with branch 0 the point the flow
    from pi_ref reaches (the prediction) and 1 another stable point where one exists.
    """
    m = trained_points(measured)
    p_grid = np.unique(np.concatenate([np.geomspace(1e-3, 0.05, 12), np.linspace(0.05, 0.995, n)]))
    rows = []
    for (G, beta, pen), _ in m.groupby(["group_size", "beta", "penalty"]):
        obj = Objective(beta=float(beta), group_size=group(G), penalty=pen)
        for p in p_grid:
            pts = stationary_points(binary(p), obj)
            reached = float(pts.from_reference.pi[0])
            rows.append(dict(group_size=G, beta=beta, penalty=pen, pi_ref_a=p, pi_a=reached, branch=0))
            rows += [dict(group_size=G, beta=beta, penalty=pen, pi_ref_a=p, pi_a=float(s.pi[0]), branch=1)
                     for s in pts.stable if abs(float(s.pi[0]) - reached) > 1e-6]
    return pd.DataFrame(rows)


def draw(curves: pd.DataFrame, measured: pd.DataFrame) -> Figure:
    """Figure 9: per group size, (top) the theory's stable branches per beta and penalty with the
    trained points, (bottom) the residual measured - predicted with its error bar, symlog scale."""
    gs = sorted(measured.group_size.unique())
    fig = Figure(figsize=(plotting.DOUBLE, 6.4), layout="constrained")
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1.35, 1])
    betas = sorted(measured.beta.unique())
    cols = dict(zip(betas, plotting.param_colors(betas) if len(betas) > 1 else ["#1f5fa8"]))
    dash = {"reverse": "-", "direct": "--"}
    sources = list(dict.fromkeys(measured.source))
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for (beta, pen, branch), cur in curves[curves.group_size == G].groupby(["beta", "penalty", "branch"]):
            cur = cur.sort_values("pi_ref_a")
            top.plot(cur.pi_ref_a, cur.pi_a, dash.get(pen, "-") if branch == 0 else ":", color=cols[beta],
                     lw=1.0 if branch == 0 else 0.9)
        for src in sources:
            marker, size = SOURCE_STYLE.get(src, ("o", 3.5))
            for (beta, pen), m in measured[(measured.group_size == G) & (measured.source == src)].groupby(
                    ["beta", "penalty"]):
                face = cols[beta] if pen == "reverse" else "white"
                kw = dict(fmt=marker, ms=size, color=cols[beta], mfc=face, mec="black", mew=0.6, elinewidth=0.7,
                          capsize=1.0, zorder=5, alpha=0.85)
                top.errorbar(m.pi_ref_a, m.measured, yerr=m.measured_se, **kw)
                bottom.errorbar(m.pi_ref_a, m.residual, yerr=m.residual_se, **kw)
        plotting.diagonal(top)
        plotting.panel(top, "abcdefgh"[j], plotting.g_text(G))
        plotting.panel(bottom, "abcdefgh"[len(gs) + j], "residual")
        bottom.axhline(0, color="0.3", lw=0.8)
        bottom.set_yscale("symlog", linthresh=0.01, linscale=1.0)
        bottom.set_ylim(-1.1, 1.1)
        bottom.set_xlim(-0.02, 1.02)
        bottom.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
        bottom.set_ylabel("measured − predicted" if j == 0 else "")
        bottom.axhspan(-0.01, 0.01, color="0.9", zorder=0)
    handles = [Line2D([], [], color=cols[b], lw=1.2, label=rf"$\beta$ = {b:g}") for b in betas]
    handles += [Line2D([], [], color="0.3", ls=dash[p], lw=1.0, label=f"{p} penalty ({PENALTY_MARK[p]})")
                for p in dash if p in set(measured.penalty)]
    if (curves.branch == 1).any():
        handles.append(Line2D([], [], color="0.3", ls=":", lw=0.9, label="other stable point"))
    handles += [Line2D([], [], ls="", marker=SOURCE_STYLE.get(s, ("o", 3.5))[0], mfc="0.7", mec="black", label=s)
                for s in sources]
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def tables(inputs):
    if inputs.trained is None:
        raise FigureSkipped("pass --trained CSV from `grpo-theory validate` to draw it")
    measured = trained_points(inputs.trained)
    return {"data": measured, "curves": trained_curves(measured)}


def render(t):
    return draw(t["curves"], t["data"])


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its agreement fractions read from the plotted table."""
    r = t["data"].residual.abs()
    return PREFIX + (f" Of the {len(r)} points, {(r <= 0.01).mean():.0%} lie within 0.01 of the prediction and "
                     f"{(r <= 0.001).mean():.0%} within 0.001.")


PREFIX = (
    "Figure 9. Trained language models against the theory. Top: the measured probability of the "
    "rewarded answer (mean over the final window) on the stationary curves for the same G, beta "
    "and penalty (solid: reverse, filled markers; dashed: direct, open markers; dotted: a second "
    "stable point, where training can also end). Bottom: measured - predicted on a symlog scale "
    "(linear within +-0.01, shaded), error bars the between-seed standard error where the study "
    "has several seeds.")

SPEC = FigureSpec(9, "trained_vs_theory", caption, tables, render, __name__)
