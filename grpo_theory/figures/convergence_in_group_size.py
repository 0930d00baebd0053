"""Figure 5: how fast the finite-G stationary policy approaches the large-G limit."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import closed_form, plotting
from ..problem import Objective
from ..solvers import stationary_policy
from ._data import binary
from ._spec import FigureSpec
from .finite_group import FINITE_G_BETA

#: Figure 5: group sizes and reference probabilities.
CONVERGENCE_GROUP_SIZES = tuple(2**k for k in range(1, 13))
CONVERGENCE_PI_REF = (0.1, 0.3, 0.6)


def data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """|pi_G - pi_inf| against G (reverse/scale), with the fitted log-log slope per pi_ref."""
    rows, fits = [], []
    for p in CONVERGENCE_PI_REF:
        limit = float(closed_form.binary_large_group(p, FINITE_G_BETA))
        errs = [abs(stationary_policy(binary(p), Objective(beta=FINITE_G_BETA, group_size=G)).pi[0] - limit)
                for G in CONVERGENCE_GROUP_SIZES]
        rows += [dict(pi_ref_a=p, group_size=G, abs_error=e) for G, e in zip(CONVERGENCE_GROUP_SIZES, errs)]
        g = np.array(CONVERGENCE_GROUP_SIZES, float)
        sel = g >= 64          # the asymptotic range; small G wiggles
        slope, intercept = np.polyfit(np.log(g[sel]), np.log(np.array(errs)[sel]), 1)
        fits.append(dict(pi_ref_a=p, slope=slope, intercept=intercept))
    return pd.DataFrame(rows), pd.DataFrame(fits)


def draw(df: pd.DataFrame, fits: pd.DataFrame, beta: float) -> Figure:
    """|pi_G - pi_inf| against G, log-log, with fitted slopes."""
    fig, (ax,) = plotting.new_figure(height=3.6)
    for (p, d), c in zip(df.groupby("pi_ref_a"), plotting.param_colors(sorted(df.pi_ref_a.unique()))):
        fit = fits[fits.pi_ref_a == p].iloc[0]
        ax.loglog(d.group_size, d.abs_error, "o-", ms=2.8, color=c,
                  label=rf"$\pi_{{\mathrm{{ref}}}}(a)$ = {p:g}: slope " + f"{fit.slope:.2f}".replace("-", "−"))
        g = d.group_size[d.group_size >= 64].to_numpy(float)
        ax.loglog(g, np.exp(fit.intercept) * g**fit.slope, color=c, ls="--", lw=1.6, alpha=0.55, zorder=3)
    # a reference slope of -1 (O(1/G)), anchored below the data
    gs = np.array(sorted(df.group_size.unique()), dtype=float)
    anchor = 0.3 * float(df[df.group_size == gs[0]].abs_error.min())
    ax.loglog(gs, anchor * gs[0] / gs, color="0.5", ls=":", lw=1.0, label="slope −1 (reference)")
    ax.set_xticks(gs[::2])
    ax.set_xticklabels([f"{int(g)}" for g in gs[::2]])
    ax.minorticks_off()
    ax.set_xlabel("group size $G$")
    ax.set_ylabel(r"$|\pi_G(a) - \pi_\infty(a)|$")
    ax.set_title(rf"Approach to $G\to\infty$ (reverse/scale, $\beta$ = {beta:g})")
    plotting.legend_below(fig, *ax.get_legend_handles_labels(), ncol=1)
    ax.grid(True, which="major", lw=0.3, alpha=0.5)
    return fig


def tables(_inputs):
    df, fits = data()
    return {"data": df, "fit": fits}


def render(t):
    return draw(t["data"], t["fit"], FINITE_G_BETA)


SPEC = FigureSpec(
    5, "convergence_in_group_size",
    f"Figure 5. Distance of the finite-G stationary policy from the large-G limit (Eq. 15), "
    f"beta = {FINITE_G_BETA:g}, G = 2..4096; dashed: least-squares fit for G >= 64. "
    "The fitted slopes are close to -1: the approach is O(1/G).",
    tables, render, __name__, uses=("finite_group",))
