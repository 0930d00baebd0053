"""Figure 6: every GRPO variant, RLHF and NLHF on one binary question as beta varies."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import plotting
from ..problem import Objective
from ..solvers import log_pooling, nash_equilibrium, stationary_policy
from ._data import binary
from ._spec import FigureSpec

#: Figure 6: the binary question and the beta range.
VARIANTS_PI_REF = 0.3
VARIANTS_BETAS = tuple(np.logspace(math.log10(0.04), 1, 40))
VARIANTS_GROUP_SIZES = (2, 8, math.inf)
METHODS = ("GRPO reverse/scale", "GRPO reverse/shift", "GRPO direct/scale", "GRPO direct/shift", "RLHF", "NLHF")


#: a change of pi(a) larger than this between neighbouring betas is a jump (a branch ending), not a slope
JUMP = 0.15


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference"}


def _with_jumps_resolved(rows: list[dict], solve, n_side: int = 8) -> list[dict]:
    """``rows`` (one per beta of the coarse grid) plus, at each jump (pi(a) changing by more than
    :data:`JUMP`, or leaving the boundary), the jump's beta located by bisection in log beta (to 1e-9
    relative) and ``n_side`` points on each side up to it: the curve is drawn up to the jump on both
    sides instead of stopping a coarse grid step short of it."""
    out = list(rows)
    for left, right in zip(rows, rows[1:]):
        if abs(right["pi_a"] - left["pi_a"]) <= JUMP and left["boundary"] == right["boundary"]:
            continue
        lo, hi = math.log(left["beta"]), math.log(right["beta"])
        while hi - lo > 1e-9:
            mid = 0.5 * (lo + hi)
            val = solve(math.exp(mid))["pi_a"]
            if abs(val - left["pi_a"]) < abs(val - right["pi_a"]):
                lo = mid
            else:
                hi = mid
        # quadratically crowded towards the jump, where a branch born at a fold is steepest
        t = np.linspace(0.0, 1.0, n_side + 1) ** 2
        out += [solve(float(b)) for b in np.exp(lo - (lo - math.log(left["beta"])) * t[:-1])]
        out += [solve(float(b)) for b in np.exp(hi + (math.log(right["beta"]) - hi) * t[:-1])]
    return sorted(out, key=lambda r: r["beta"])


def data() -> pd.DataFrame:
    """Every variant, RLHF and NLHF on one binary question (pi_ref(a) = 0.3) as beta varies."""
    q = binary(VARIANTS_PI_REF)
    rows = []
    for G in VARIANTS_GROUP_SIZES:
        for pen in ("reverse", "direct"):
            for norm in ("scale", "shift"):
                def solve(beta, G=G, pen=pen, norm=norm):
                    sol = stationary_policy(q, Objective(beta=beta, group_size=G, penalty=pen, normalization=norm))
                    return dict(beta=beta, method=f"GRPO {pen}/{norm}", group_size=G, pi_a=sol.pi[0],
                                boundary=sol.boundary)
                rows += _with_jumps_resolved([solve(beta) for beta in VARIANTS_BETAS], solve)
    for beta in VARIANTS_BETAS:
        rows.append(dict(beta=beta, method="RLHF", group_size=np.nan,
                         pi_a=log_pooling(q.pi_ref, [1.0, 0.0], beta)[0], boundary=False))
        rows.append(dict(beta=beta, method="NLHF", group_size=np.nan,
                         pi_a=nash_equilibrium(q, beta).pi[0], boundary=False))
    return pd.DataFrame(rows)


def draw(df: pd.DataFrame, pi_ref_a: float) -> Figure:
    """Figure 6: pi(a) against beta for every variant, one panel per G, RLHF and NLHF in each."""
    gs = [g for g in dict.fromkeys(df.group_size) if not (isinstance(g, float) and math.isnan(g))]
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.1, ncols=len(gs))
    for ax, G in zip(axes, gs):
        for method, c in ((m, plotting.METHOD_COLORS[m]) for m in METHODS):
            if method.startswith("GRPO"):
                d = df[(df.method == method) & (df.group_size == G)]
            else:
                d = df[df.method == method]
            ls = "--" if method in ("RLHF", "NLHF") else "-"
            d = d.sort_values("beta")
            beta, pi = d.beta.to_numpy(float), d.pi_a.to_numpy(float)
            # a jump between two grid points (pi_ref leaving the vertex's basin) is a break, not a steep line
            # (or where the point leaves the boundary: at G = ∞ direct/scale pi(a) drops from 1 to 0.87)
            edge = d.boundary.astype(bool).to_numpy()
            cut = np.flatnonzero((np.abs(np.diff(pi)) > JUMP) | (edge[1:] != edge[:-1])) + 1
            beta, pi = np.insert(beta, cut, np.nan), np.insert(pi, cut, np.nan)
            ax.semilogx(beta, pi, color=c, ls=ls, label=plotting.infty(method))
        # curves that coincide (e.g. direct/scale with RLHF at G = 2): the dashed comparison lies on the solid
        # GRPO curve, both visible; a note names the pair (no marker: open circles mean unstable points)
        panel = {m: df[(df.method == m) & ((df.group_size == G) if m.startswith("GRPO") else True)]
                 .sort_values("beta").pi_a.to_numpy(float) for m in METHODS}
        names = list(panel)
        notes = []
        if not np.isfinite(G):     # direct/scale at G = inf: the vertex a is a stable limit point for every beta
            d = df[df.method == "GRPO direct/scale"]
            ax.semilogx(d.beta, np.ones(len(d)), color=plotting.METHOD_COLORS["GRPO direct/scale"], lw=2.2, alpha=0.3)
            notes.append("pale: the vertex, also stable")
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if panel[a].size == panel[b].size and panel[a].size and np.allclose(panel[a], panel[b], atol=1e-6):
                    notes.append(f"{plotting.infty(b)} = {plotting.infty(a)} (one curve)")
        for k, note in enumerate(notes):
            ax.text(0.03, 0.04 + 0.07 * k, note, transform=ax.transAxes, fontsize=7)
        ax.axhline(pi_ref_a, color="0.45", ls=":", lw=0.9)
        plotting.panel(ax, "abc"[list(gs).index(G)], plotting.g_text(G))
        ax.set_xlabel(r"$\beta$")
        ax.set_ylim(-0.02, 1.02)
    axes[0].set_ylabel(r"$\pi_\theta(a)$ at the stationary point")
    handles, labels = axes[0].get_legend_handles_labels()
    plotting.legend_below(fig, handles, labels, ncol=len(labels))
    fig.suptitle(rf"One binary question, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g} (dotted), "
                 "every variant at the same $\\beta$", fontsize=8.5)
    return fig


def tables(_inputs):
    return {"data": data()}


def render(t):
    return draw(t["data"], VARIANTS_PI_REF)


SPEC = FigureSpec(
    6, "all_variants",
    f"Figure 6. One binary question (pi_ref(a) = {VARIANTS_PI_REF:g}, rewards 1 and 0) under "
    "every GRPO variant (reverse/direct penalty x scale/shift normalisation) for G = 2, 8, inf, "
    "against RLHF (log pooling) and NLHF (Nash), at the same beta in [0.04, 10]. Shift/direct "
    "coincides with RLHF at beta' = G beta/(G-1); direct/scale at G = inf jumps to a = 1 once "
    "pi_ref lies in the vertex's basin.",
    tables, render, __name__)
