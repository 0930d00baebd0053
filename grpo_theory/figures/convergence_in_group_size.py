"""Figure 5: how fast the finite-G stationary policy approaches the large-G limit."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import closed_form, plotting
from ..problem import Objective
from ..solvers import stationary_policy
from ._data import binary
from ._spec import FigureSpec
from .finite_group import FINITE_G_BETA

#: Figure 5: group sizes and reference probabilities.
CONVERGENCE_GROUP_SIZES = tuple(2**k for k in range(1, 13))
CONVERGENCE_PI_REF = (0.1, 0.3, 0.6)
#: the fits use G >= this (the asymptotic range)
FIT_FROM = 64


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", ":": "reference", "o": "point"}


def data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """|pi_G - pi_inf| against G (reverse/scale), with the fitted log-log slope per pi_ref."""
    rows, fits = [], []
    for p in CONVERGENCE_PI_REF:
        limit = float(closed_form.binary_large_group(p, FINITE_G_BETA))
        errs = [abs(stationary_policy(binary(p), Objective(beta=FINITE_G_BETA, group_size=G)).pi[0] - limit)
                for G in CONVERGENCE_GROUP_SIZES]
        rows += [dict(pi_ref_a=p, group_size=G, abs_error=e) for G, e in zip(CONVERGENCE_GROUP_SIZES, errs)]
        g = np.array(CONVERGENCE_GROUP_SIZES, float)
        sel = g >= FIT_FROM          # the asymptotic range; small G wiggles
        slope, intercept = np.polyfit(np.log(g[sel]), np.log(np.array(errs)[sel]), 1)
        fits.append(dict(pi_ref_a=p, slope=slope, intercept=intercept))
    return pd.DataFrame(rows), pd.DataFrame(fits)


def asymptote(df: pd.DataFrame) -> float:
    """The constant C of the data's asymptote C/G: the median over pi_ref of G |pi_G - pi_inf| at the
    largest G (where G |error| has settled to 3 digits)."""
    top = df[df.group_size == df.group_size.max()]
    return float(np.median(top.group_size * top.abs_error))


def draw(df: pd.DataFrame, fits: pd.DataFrame, beta: float) -> Figure:
    """|pi_G - pi_inf| against G, log-log: the data as markers, the fitted lines solid over the fitted
    range, and the slope -1 reference through the data's asymptote C/G."""
    fig, (ax,) = plotting.new_figure(height=3.6)
    gs = np.array(sorted(df.group_size.unique()), dtype=float)
    c_inf = asymptote(df)
    ref, = ax.loglog(gs, c_inf / gs, color="0.35", ls=":", lw=1.4, zorder=2,
                     label=f"slope −1: {c_inf:.2f}/$G$ (the data's asymptote)")
    plotting.reference(ref)
    handles = [ref]
    for (p, d), c in zip(df.groupby("pi_ref_a"), plotting.order_colors(sorted(df.pi_ref_a.unique()))):
        fit = fits[fits.pi_ref_a == p].iloc[0]
        ax.loglog(d.group_size, d.abs_error, "o", ms=3.2, color=c, mec="white", mew=0.5, zorder=4)
        handles.append(Line2D([], [], color=c, marker="o", ms=3.2, mec="white", mew=0.5, lw=1.3,
                              label=rf"$\pi_{{\mathrm{{ref}}}}(a)$ = {p:g}, fit (solid): slope "
                              + f"{fit.slope:.2f}".replace("-", "−")))
        g = np.geomspace(FIT_FROM, gs.max(), 30)
        ax.loglog(g, np.exp(fit.intercept) * g**fit.slope, color=c, ls="-", lw=1.3, zorder=3)
    ax.set_xticks(gs[::2])
    ax.set_xticklabels([f"{int(g)}" for g in gs[::2]])
    ax.minorticks_off()
    ax.set_xlabel("group size $G$")
    ax.set_ylabel(r"$|\pi_G(a) - \pi_\infty(a)|$")
    ax.set_title(rf"Approach to $G\to\infty$ (reverse/scale, $\beta$ = {beta:g})")
    plotting.legend_below(fig, handles, ncol=1)
    ax.grid(True, which="major", lw=0.3, alpha=0.5)
    return fig


def tables(_inputs):
    return dict(zip(("data", "fit"), data()))


def render(t):
    return draw(t["data"], t["fit"], FINITE_G_BETA)


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its slopes and asymptote read from the plotted tables."""
    slopes = t["fit"].slope
    return (f"Figure 5. Distance of the finite-G stationary policy from the large-G limit (Eq. 15), "
            f"beta = {FINITE_G_BETA:g}, G = 2..4096 (markers); solid: least-squares fit for G >= {FIT_FROM}, "
            f"slopes {slopes.min():.2f} to {slopes.max():.2f}; dotted: slope -1 through the data's asymptote "
            f"{asymptote(t['data']):.2f}/G (the median over pi_ref of G |error| at G = 4096). "
            "The approach is O(1/G).")


SPEC = FigureSpec(5, "convergence_in_group_size", caption, tables, render, __name__, uses=("finite_group",))
