"""Figure 10: phase portraits of the expected-gradient flow for a binary question."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import plotting
from ..problem import Objective
from ..solvers import ClassProblem, stationary_points
from ._data import binary
from ._spec import FigureSpec

#: Figure 10: reference probability and the two variants of the phase portraits.
PHASE_PI_REF = 0.2
PHASE_VARIANTS = (("reverse/scale, G = 8", dict(group_size=8)),
                  ("direct/scale, G = inf", dict(group_size=math.inf, penalty="direct")))


def data(n_beta: int = 28, n_x: int = 23, n_curve: int = 90) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flow field d pi(a)/dt over (beta, pi(a)) and the stationary points, for two variants."""
    q = binary(PHASE_PI_REF)
    field, curves = [], []
    # uniform in the logit of pi(a): the figure's axis is logit-scaled, so that the unstable branch
    # within 1e-3 of 1 and the approach to the vertex are visible
    z = np.linspace(math.log(0.03 / 0.97), math.log((1 - 3e-6) / 3e-6), n_x)
    xs = 1.0 / (1.0 + np.exp(-z))
    for name, template in PHASE_VARIANTS:
        for beta in np.geomspace(0.2, 20.0, n_beta):
            cp = ClassProblem(q, Objective(beta=beta, **template))
            dxdt = (xs * (1 - xs)) ** 2 * 2.0 * cp.drift(z)          # dx/dt = x(1-x) dz/dt
            field += [dict(variant=name, beta=beta, pi_a=x, dpi_dt=v) for x, v in zip(xs, dxdt)]
        for beta in np.geomspace(0.2, 20.0, n_curve):
            for pt in stationary_points(q, Objective(beta=beta, **template)):
                curves.append(dict(variant=name, beta=beta, pi_a=pt.pi[0], stable=bool(pt.stable),
                                   boundary=pt.boundary))
    return pd.DataFrame(field), pd.DataFrame(curves)


def draw(field: pd.DataFrame, curves: pd.DataFrame, pi_ref_a: float) -> Figure:
    """Figure 10: direction and speed of d pi(a)/dt over (beta, pi(a)), stationary points on top."""
    variants = list(dict.fromkeys(field.variant))
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.2, ncols=len(variants))
    for ax, name in zip(axes, variants):
        f = field[field.variant == name]
        # speed in the logit of pi(a), the axis' own unit (d pi/dt vanishes near 1 just from pi(1 - pi))
        x = f.pi_a.to_numpy()
        speed = np.abs(f.dpi_dt.to_numpy()) / (x * (1 - x))
        u = np.zeros_like(speed)
        v = np.sign(f.dpi_dt.to_numpy())
        c = np.log10(speed + 1e-12)
        q = ax.quiver(np.log10(f.beta), f.pi_a, u, v, c, cmap="Greys", clim=(-3.5, 0.5), scale=38, width=0.004,
                      headwidth=3.5, headlength=3.5, pivot="mid")
        cur = curves[curves.variant == name]
        for stable, ls in ((True, "-"), (False, "--")):
            d = cur[(cur.stable == stable) & (~cur.boundary)].sort_values("beta")
            ax.plot(np.log10(d.beta), d.pi_a, ls=ls, color="#b2182b", lw=1.6,
                    label="stable" if stable else "unstable")
        vert = cur[cur.boundary]
        top = 1 - 1e-6                   # the vertex pi(a) = 1, drawn at the logit axis' top
        if len(vert):
            ax.plot(np.log10(vert.beta), np.full(len(vert), top), color="#b2182b", lw=2.6, alpha=0.5,
                    label="vertex (limit)")
        fold = cur[(cur.stable == True) & (~cur.boundary)].sort_values("beta")    # noqa: E712
        if len(cur[(cur.stable == False) & (~cur.boundary)]) and len(fold):       # noqa: E712
            ax.plot(np.log10(fold.beta.iloc[0]), fold.pi_a.iloc[0], "o", ms=3.5, color="black", zorder=6,
                    label="fold")
        ax.axhline(pi_ref_a, color="#1f5fa8", ls=":", lw=1.0, label=r"$\pi_{\mathrm{ref}}(a)$")
        ax.set_xticks([-0.5, 0, 0.5, 1.0, 1.3])
        ax.set_xticklabels(["0.3", "1", "3", "10", "20"])
        ax.set_xlabel(r"$\beta$")
        ax.set_yscale("logit")
        ax.set_ylim(0.02, top)
        plotting.panel(ax, "ab"[variants.index(name)], plotting.infty(name).replace("G = ", "$G$ = "))
    axes[0].set_ylabel(r"$\pi(a)$ (logit scale)")
    plotting.legend_below(fig, *axes[-1].get_legend_handles_labels(), ncol=6)
    fig.colorbar(q, ax=axes, label=r"$\log_{10}|d\,\mathrm{logit}\,\pi(a)/dt|$", shrink=0.8)
    return fig


def tables(_inputs):
    field, curves = data()
    return {"data": field, "stationary": curves}


def render(t):
    return draw(t["data"], t["stationary"], PHASE_PI_REF)


SPEC = FigureSpec(
    10, "phase_portraits",
    f"Figure 10. Phase portraits of the expected-gradient flow for a binary question with "
    f"pi_ref(a) = {PHASE_PI_REF:g}, on a logit axis: arrows give the direction of d pi(a)/dt "
    "(shade: log speed of logit pi(a)) at each (beta, pi(a)); red: stationary points (solid stable, "
    "dashed unstable, thick: the vertex limit point; dot: the fold). Left, reverse/scale at G = 8: "
    "one attracting point for every beta. Right, direct/scale at G = inf: bistability above the "
    "fold at beta = 0.90; above the dashed separatrix every start drifts, slowly, into the vertex.",
    tables, render, __name__)
