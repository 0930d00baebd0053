"""Figure 9: trained language models against the theory (needs --trained CSV)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .. import plotting
from ..problem import InvalidInputError, Objective
from ..solvers import stationary_points, stationary_policy
from ._data import binary, group
from ._spec import FigureSkipped, FigureSpec

#: marker and face of each source in Figure 9 (others get the default)
SOURCE_STYLE = {"small GPT": ("o", 3.2), "SmolLM2-135M, lr 1e-3": ("D", 4.5), "SmolLM2-135M, lr 3e-4": ("^", 4.8),
                "SmolLM2, TRL": ("P", 4.8)}


#: the colour of points from runs that had not settled (they keep their marker and face)
UNSETTLED = "0.65"

#: how each penalty is drawn: the curve's dash and the marker's face
PENALTY_MARK = {"reverse": "solid, filled", "direct": "dashed, open"}


#: The columns a table of measured points must have.
TRAINED_COLUMNS = ("group_size", "beta", "pi_ref_a", "measured", "measured_se")


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference", "o": "point", "D": "trained", "^": "key", "P": "key"}


def trained_points(measured: pd.DataFrame) -> pd.DataFrame:
    """A table of measured points, completed with the columns Figure 9 reads.

    Required: ``group_size, beta, pi_ref_a, measured, measured_se``. Optional: ``penalty``
    (default reverse), ``source`` (default "trained model"), ``std_ddof``/``std_eps`` (the
    normalisation the runs used; default the note's 0, 0), ``predicted`` (default: the flow's
    stationary point from ``pi_ref_a`` under that objective, computed here), ``residual_se`` (default
    ``measured_se``; study tables give the between-seed error here), ``converged`` (default True;
    False marks a run that had not settled, drawn apart and left out of the caption's fractions).
    """
    need = set(TRAINED_COLUMNS)
    missing = sorted(need - set(measured.columns))
    if missing:
        raise InvalidInputError(f"the trained-points table lacks columns {missing}; it needs {sorted(need)}")
    m = measured.copy()
    if "penalty" not in m:
        m["penalty"] = "reverse"
    if "source" not in m:
        m["source"] = "trained model"
    for col, default in (("std_ddof", 0), ("std_eps", 0.0), ("converged", True)):
        if col not in m:
            m[col] = default
    m["converged"] = m.converged.astype(bool)
    if "predicted" not in m:
        m["predicted"] = [stationary_policy(binary(p), _objective(b, G, pen, d, e)).pi[0]
                          for p, b, G, pen, d, e in zip(m.pi_ref_a, m.beta, m.group_size, m.penalty, m.std_ddof,
                                                        m.std_eps)]
    if "residual_se" not in m:
        m["residual_se"] = m.measured_se
    m["residual"] = m.measured - m.predicted
    return m


def _objective(beta, G, penalty, std_ddof, std_eps) -> Objective:
    return Objective(beta=float(beta), group_size=group(G), penalty=penalty, std_ddof=int(std_ddof),
                     std_eps=float(std_eps))


def trained_curves(measured: pd.DataFrame, n: int = 120) -> pd.DataFrame:
    """Every stable stationary branch for each (G, beta, penalty, std_ddof, std_eps) of a table of
    measured points: the curves are drawn under the same objective as the points' predictions.

    Rows: ``group_size, beta, penalty, std_ddof, std_eps, pi_ref_a, pi_a, branch`` with branch 0 the
    point the flow from pi_ref reaches (the prediction) and 1 another stable point where one exists.
    """
    m = trained_points(measured)
    p_grid = np.unique(np.concatenate([np.geomspace(1e-3, 0.05, 12), np.linspace(0.05, 0.995, n)]))
    rows = []
    for (G, beta, pen, ddof, eps), _ in m.groupby(["group_size", "beta", "penalty", "std_ddof", "std_eps"]):
        obj = _objective(beta, G, pen, ddof, eps)
        key = dict(group_size=G, beta=beta, penalty=pen, std_ddof=ddof, std_eps=eps)
        for p in p_grid:
            pts = stationary_points(binary(p), obj)
            reached = float(pts.from_reference.pi[0])
            rows.append(dict(key, pi_ref_a=p, pi_a=reached, branch=0))
            rows += [dict(key, pi_ref_a=p, pi_a=float(s.pi[0]), branch=1)
                     for s in pts.stable if abs(float(s.pi[0]) - reached) > 1e-6]
    return pd.DataFrame(rows)


def drawn_group_sizes(measured: pd.DataFrame) -> list:
    """The group sizes Figure 9 draws: those with at least one converged point (TRL's G = 4 pair of 40-step
    runs, none converged, stays in the table and is named in the caption, not drawn)."""
    ok = measured[measured.converged.astype(bool)]
    return sorted(ok.group_size.unique())


#: the residual axis: symlog, linear within +-LINTHRESH, and room past -1 so points there are whole
LINTHRESH, RESIDUAL_LIM = 0.01, 2.0


def draw(curves: pd.DataFrame, measured: pd.DataFrame) -> Figure:
    """Figure 9: per group size with a converged point, (top) the theory's stable branches per beta and
    penalty with the trained points, (bottom) the residual measured - predicted with its error bar, symlog
    scale. The curves are drawn over the markers (thin), so a dense run of points does not hide them."""
    gs = drawn_group_sizes(measured)
    measured = measured[measured.group_size.isin(gs)]
    fig = Figure(figsize=(plotting.DOUBLE, 4.75), layout="constrained")
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1.25, 1])
    betas = sorted(measured.beta.unique())
    cols = dict(zip(betas, plotting.beta_colors(betas)))
    dash = {"reverse": "-", "direct": "--"}
    sources = list(dict.fromkeys(measured.source))
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for (beta, pen, branch, _, _), cur in curves[curves.group_size == G].groupby(
                ["beta", "penalty", "branch", "std_ddof", "std_eps"]):
            cur = cur.sort_values("pi_ref_a")
            if branch == 0:
                top.plot(cur.pi_ref_a, cur.pi_a, dash.get(pen, "-"), color=cols[beta], lw=1.0, zorder=6)
                continue
            # a second stable branch: its penalty's style at full width, carrying light filled circles (a stable
            # stationary point, plotting.MARKERS) every few grid points, drawn above the main curves so that it
            # stands apart from a main curve at the same height and from the frame
            top.plot(cur.pi_ref_a, cur.pi_a, dash.get(pen, "-"), color=cols[beta], lw=1.0, marker="o",
                     ms=3.0, mfc=_tint(cols[beta]), mec=cols[beta], mew=0.7, markevery=(1, 3), zorder=7)
        for src in sources:
            marker, size = SOURCE_STYLE.get(src, ("o", 3.5))
            for (beta, pen, ok), m in measured[(measured.group_size == G) & (measured.source == src)].groupby(
                    ["beta", "penalty", "converged"]):
                # reverse: filled in the beta colour; direct: open, edged in the beta colour (it keeps its beta);
                # a run that had not settled: grey, faint, behind the others
                colour = cols[beta] if ok else UNSETTLED
                face = colour if pen == "reverse" else "white"
                kw = dict(fmt=marker, ms=0.8 * size, color=colour, mfc=face,
                          mec="0.15" if pen == "reverse" else colour, mew=0.4 if pen == "reverse" else 0.8,
                          elinewidth=0.6, capsize=0.8, zorder=4 if ok else 3, alpha=0.75 if ok else 0.6)
                top.errorbar(m.pi_ref_a, m.measured, yerr=m.measured_se, **kw)
                bottom.errorbar(m.pi_ref_a, m.residual, yerr=m.residual_se, **kw)
        plotting.diagonal(top)
        top.set_ylim(-0.04, 1.04)                  # the points at 0 (residual -1) whole, not half-clipped
        if j:
            top.set_ylabel("")
        plotting.panel(top, "abcdefgh"[j], plotting.g_text(G))
        plotting.panel(bottom, "abcdefgh"[len(gs) + j], f"residual, {plotting.g_text(G)}")
        plotting.reference(bottom.axhline(0, color="0.3", lw=0.8, ls=":"))
        bottom.set_yscale("symlog", linthresh=LINTHRESH, linscale=1.0)
        bottom.set_ylim(-RESIDUAL_LIM, RESIDUAL_LIM)
        ticks = [-1, -0.1, -0.01, 0, 0.01, 0.1, 1]
        bottom.set_yticks(ticks, ["−1", "−0.1", "−0.01", "0", "0.01", "0.1", "1"])
        bottom.set_xlim(-0.02, 1.02)
        bottom.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
        bottom.set_ylabel("measured − predicted" if j == 0 else "")
        plotting.reference(bottom.axhspan(-LINTHRESH, LINTHRESH, color="0.9", zorder=0))
    handles = [Line2D([], [], color=cols[b], lw=1.2, label=rf"$\beta$ = {b:g}") for b in betas]
    handles += [Line2D([], [], color="0.3", ls=dash[p], lw=1.0, label=f"{p} penalty ({PENALTY_MARK[p]})")
                for p in dash if p in set(measured.penalty)]
    if (curves[curves.group_size.isin(gs)].branch == 1).any():
        handles.append(Line2D([], [], color="0.3", lw=1.0, marker="o", ms=3.0, mfc="0.8", mec="0.3", mew=0.7,
                              label="other stable point (light dots)"))
    handles += [Line2D([], [], ls="", marker=SOURCE_STYLE.get(s, ("o", 3.5))[0], mfc="0.7", mec="black", label=s)
                for s in sources]
    if not measured.converged.all():
        # grey, whatever the source's marker (a patch: the points are diamonds, a circle would be another glyph)
        handles.append(Patch(facecolor=UNSETTLED, edgecolor="black", lw=0.4, alpha=0.6,
                             label="not converged (grey)"))
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def _tint(colour, weight: float = 0.55):
    """A lighter tint of ``colour``: mixed with white, ``weight`` of white."""
    rgb = np.asarray(to_rgb(colour))
    return tuple(rgb + (1.0 - rgb) * weight)


def tables(inputs):
    if inputs.trained is None:
        raise FigureSkipped("pass --trained CSV from `grpo-theory validate` to draw it")
    measured = trained_points(inputs.trained)
    return {"data": measured, "curves": trained_curves(measured)}


def render(t):
    return draw(t["curves"], t["data"])


def agreement(data: pd.DataFrame) -> dict:
    """The caption's numbers from the plotted table: how many points, how many from runs that had not
    converged, and the fractions of the converged ones within 0.01 and 0.001 of the prediction."""
    ok = data[data.converged.astype(bool)]
    r = ok.residual.abs()
    return dict(n=len(data), unsettled=int(len(data) - len(ok)), within_1e2=float((r <= 0.01).mean()),
                within_1e3=float((r <= 0.001).mean()))


#: a converged point this far from the prediction is named in the caption
OFF = 0.1


def off_points(data: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """The converged points more than :data:`OFF` from the prediction, grouped by source, G, beta and penalty:
    ``n``, the residual's ``lo``/``hi`` and ``kind``: "collapsed" (measured pi(a) < 0.05), "other stable point"
    (within 0.01 of the second stable branch at the nearest pi_ref of its curve) or "elsewhere"."""
    ok = data[data.converged.astype(bool) & (data.residual.abs() > OFF)]
    rows = []
    for (src, G, beta, pen), g in ok.groupby(["source", "group_size", "beta", "penalty"], sort=True):
        other = curves[(curves.group_size == G) & (curves.beta == beta) & (curves.penalty == pen)
                       & (curves.branch == 1)]

        def kind(p, m):
            if m < 0.05:
                return "collapsed"
            if len(other):
                near = other.iloc[(other.pi_ref_a - p).abs().argsort()[:1]]
                if abs(float(near.pi_ref_a.iloc[0]) - p) < 0.02 and abs(float(near.pi_a.iloc[0]) - m) < 0.01:
                    return "other stable point"
            return "elsewhere"

        for k, h in g.groupby([kind(p, m) for p, m in zip(g.pi_ref_a, g.measured)]):
            rows.append(dict(source=src, group_size=G, beta=beta, penalty=pen, kind=k, n=len(h),
                             lo=float(h.residual.min()), hi=float(h.residual.max())))
    return pd.DataFrame(rows, columns=["source", "group_size", "beta", "penalty", "kind", "n", "lo", "hi"])


def _span(lo: float, hi: float) -> str:
    a, b = f"{lo:+.2f}", f"{hi:+.2f}"
    return a if a == b else f"{a} to {b}"


def _off_text(off: pd.DataFrame) -> str:
    if not len(off):
        return ""
    what = {"collapsed": "collapsed to pi(a) = 0", "other stable point": "ended at the other stable point",
            "elsewhere": "ended elsewhere"}
    parts = [f"{r.n} ({r.source}, {plotting.g_text(r.group_size).replace('$', '')}, beta = {r.beta:g}, "
             f"{r.penalty}) {what[r.kind]}, residual {_span(r.lo, r.hi)}" for r in off.itertuples()]
    return (f" The {int(off.n.sum())} converged points more than {OFF:g} off: " + "; ".join(parts)
            + " (residuals from the main curve; Figure 27 explains both).")


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its counts and agreement fractions read from the plotted table."""
    data = t["data"]
    a = agreement(data)
    hidden = data[~data.group_size.isin(drawn_group_sizes(data))]
    drawn_grey = a["unsettled"] - len(hidden)
    not_drawn = "".join(
        f"; the {len(g)} points at {plotting.g_text(G).replace('$', '')} ({', '.join(sorted(g.source.unique()))}, "
        "none converged) are in the table, not drawn" for G, g in hidden.groupby("group_size"))
    return PREFIX + (f" Of the {a['n']} points, {a['unsettled']} come from runs that had not converged ("
                     f"grey: {drawn_grey} SmolLM2 prompts whose seeds ended more than 0.1 apart{not_drawn}); "
                     f"of the others, {_share_at_least(a['within_1e2'])} lie within 0.01 of the prediction and "
                     f"{_share_at_least(a['within_1e3'])} within 0.001." + _off_text(off_points(data, t["curves"])))



def _share_at_least(share: float) -> str:
    """A share as a percentage with one decimal, rounded down, so that "X% lie within" is a true lower bound
    (1120 of 1147 = 97.65% is "97.6%", where rounding to nearest wrote "98%")."""
    return f"{np.floor(share * 1000) / 10:.1f}%"

PREFIX = (
    "Figure 9. Trained language models against theory. Top: the measured probability of the "
    "rewarded answer (final-window mean) under the stationary curves of the points' own G, beta, penalty and "
    "normalisation (solid: reverse, filled markers; dashed: direct, open markers edged in the beta colour; "
    "a line with light dots: a second stable point). Bottom: measured - predicted on a "
    "symlog scale (linear within +-0.01, shaded). Error bars: the between-seed SE of a mean over seeds; for a "
    "single-seed small-GPT point its SE (top) and sqrt(SE^2 + tau^2), tau its configuration's run-to-run "
    "spread (bottom).")

SPEC = FigureSpec(9, "trained_vs_theory", caption, tables, render, __name__)
