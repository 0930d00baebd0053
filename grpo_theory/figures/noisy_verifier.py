"""Figure 17: a noisy verifier (false positives = false negatives = eps)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib import patheffects
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..problem import Objective, Question
from ..solvers import stationary_policies
from ._spec import FigureSpec

NOISE_LEVELS = (0.0, 0.1, 0.2, 0.3)
NOISE_GROUPS = (2, 8, math.inf)
NOISE_BETA = 0.5
NOISE_PI_REF = 0.2


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-.": "marked value"}


def noisy_binary(p: float, false_positive: float, false_negative: float) -> Question:
    """A binary question judged by a noisy verifier: the correct answer scores 1 with probability
    1 - FN, the wrong one with probability FP (rewards in {0, 1}, independent across group members)."""
    return Question([p, 1.0 - p], reward_levels=[0.0, 1.0],
                    reward_probs=[[false_negative, 1.0 - false_negative], [1.0 - false_positive, false_positive]])


def data(n: int = 33, n_beta: int = 37, n_noise: int = 25) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves, map) for a verifier with FP = FN = eps (reverse penalty, scale normalisation).

    curves: the stationary pi(correct) against pi_ref(correct) at beta = 0.5 per G and eps.
    map: pi(correct) at pi_ref(correct) = 0.2 over (beta, eps) per G; its gain over pi_ref says
    where GRPO still learns. With eps = 0 at G = inf the policy does not depend on the reward
    gap; with noise the group std contains the verifier's variance, which shrinks every advantage.
    """
    # every point is a two-class question: solved together (stationary_policies), in the tables' row order
    rows, cases = [], []
    for G in NOISE_GROUPS:
        obj = Objective(beta=NOISE_BETA, group_size=G)
        for eps in NOISE_LEVELS:
            for p in np.linspace(0.02, 0.98, n):
                rows.append(dict(group_size=G, noise=eps, pi_ref_a=p))
                cases.append((noisy_binary(p, eps, eps), obj))
    grid = []
    for G in NOISE_GROUPS:
        for beta in np.geomspace(0.02, 5.0, n_beta):
            obj = Objective(beta=float(beta), group_size=G)
            for eps in np.linspace(0.0, 0.48, n_noise):
                grid.append(dict(group_size=G, beta=beta, noise=eps))
                cases.append((noisy_binary(NOISE_PI_REF, eps, eps), obj))
    pis = stationary_policies(*zip(*cases))
    for row, pi in zip(rows + grid, pis):
        row["pi_a"] = float(pi[0])
    for row in grid:
        row["gain"] = row["pi_a"] - NOISE_PI_REF
    return pd.DataFrame(rows), pd.DataFrame(grid)


def draw(curves: pd.DataFrame, grid: pd.DataFrame, beta: float, pi_ref: float) -> Figure:
    """Figure 17: (top) pi(correct) against pi_ref per noise level and G; (bottom) pi(correct) over
    (beta, noise) at one pi_ref, with the 'learned' (0.9) and 'no learning' (gain 0.05) contours."""
    gs = list(dict.fromkeys(curves.group_size))
    fig = Figure(figsize=(plotting.DOUBLE, 5.4), layout="constrained")
    # one y scale per row: the y label and tick labels once, on the left column
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1, 1], sharey="row")
    noises = sorted(curves.noise.unique())
    cols = plotting.order_colors(noises)
    mesh = None
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for eps, c in zip(noises, cols):
            d = curves[(curves.group_size == G) & (curves.noise == eps)].sort_values("pi_ref_a")
            top.plot(d.pi_ref_a, d.pi_a, color=c, lw=1.1, label=f"{eps:g}")
        plotting.diagonal(top)
        plotting.panel(top, "abc"[j], plotting.g_text(G), pad=2)
        plotting.panel(bottom, "def"[j], plotting.g_text(G), pad=2)
        g = grid[grid.group_size == G]
        b, e = np.sort(g.beta.unique()), np.sort(g.noise.unique())
        z = g.pivot(index="noise", columns="beta", values="pi_a").loc[e, b].to_numpy()
        # filled contours interpolate between the grid points: no cells (the data stay inside [pi_ref, 1])
        mesh = bottom.contourf(b, e, z, levels=np.linspace(pi_ref, 1.0, 17), cmap=plotting.PROB_CMAP)
        bottom.contour(b, e, z, levels=[0.9], colors="white", linewidths=1.2)
        bottom.contour(b, e, z - pi_ref, levels=[0.05], colors="white", linewidths=1.0, linestyles="-.")
        bottom.set_xscale("log")
        bottom.set_xlabel(r"$\beta$")
        if j:
            top.set_ylabel("")
            top.tick_params(labelleft=False)
            bottom.tick_params(labelleft=False)
        else:
            top.set_ylabel(rf"stationary $\pi_\theta(a)$, $\beta$ = {beta:g}")
            bottom.set_ylabel("FP = FN")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    # the contours are white on the map: white keys with a dark edge, as drawn
    edge = [patheffects.withStroke(linewidth=2.6, foreground="0.3")]
    handles += [Line2D([], [], color="white", lw=1.2, path_effects=edge),
                Line2D([], [], color="white", lw=1.0, ls="-.", path_effects=edge)]
    labels += [r"(d-f) $\pi$ = 0.9", r"(d-f) gain over $\pi_{\mathrm{ref}}$ = 0.05"]
    plotting.legend_below(fig, handles, labels, ncol=6, title="FP = FN (a-c)", title_fontsize=7)
    label = rf"$\pi(\mathrm{{correct}})$, $\pi_{{\mathrm{{ref}}}}$ = {pi_ref:g}"
    fig.colorbar(mesh, ax=axes[1, :], shrink=0.9, label=label, ticks=np.arange(0.2, 1.01, 0.2))
    return fig


def equivalent_beta(curves: pd.DataFrame, beta: float = NOISE_BETA) -> pd.DataFrame:
    """Per G and eps > 0: the one beta at which the clean verifier's curve comes closest to the noisy curve
    at ``beta`` (the largest gap over the curve's pi_ref grid, minimised over log beta), and that gap.

    At G = 2 the noisy curve is the clean one at beta / (1 - 2 eps) (gap at the solver's tolerance); at
    larger G no single beta reproduces it, and the gap says by how much."""
    from scipy.optimize import minimize_scalar

    rows = []
    for (G, eps), d in curves[curves.noise > 0].groupby(["group_size", "noise"], sort=False):
        d = d.sort_values("pi_ref_a")
        ps, target = d.pi_ref_a.to_numpy(), d.pi_a.to_numpy()
        clean = [Question([p, 1.0 - p], rewards=[1.0, 0.0]) for p in ps]

        def gap(log_b, G=G, clean=clean, target=target):
            obj = Objective(beta=float(np.exp(log_b)), group_size=G)
            pis = stationary_policies(clean, [obj] * len(clean))
            return float(np.max(np.abs(np.array([pi[0] for pi in pis]) - target)))

        # the gap is unimodal in log beta between beta and 20 beta (a larger beta flattens every curve)
        r = minimize_scalar(gap, bounds=(np.log(beta), np.log(20 * beta)), method="bounded",
                            options=dict(xatol=1e-6))
        rows.append(dict(group_size=G, noise=eps, beta_equivalent=float(np.exp(r.x)), max_gap=float(r.fun),
                         beta_over_one_minus_2eps=beta / (1 - 2 * eps)))
    return pd.DataFrame(rows)


def tables(_inputs):
    curves, grid = data()
    return {"data": curves, "map": grid, "equivalent": equivalent_beta(curves)}


def caption(t) -> str:
    """The caption; how far noise is from a larger beta is read from the ``equivalent`` table."""
    e = t["equivalent"]
    worst = e.groupby("group_size").max_gap.max()
    g2 = e[e.group_size == 2]
    larger = [G for G in worst.index if G != 2]
    misses = " and ".join(f"{worst[G]:.3f} at G = {'inf' if not np.isfinite(G) else int(G)}" for G in larger)
    return (
        f"Figure 17. A noisy verifier: the correct answer is scored 1 with probability 1 - eps, the wrong "
        f"one with probability eps (false positives = false negatives = eps; reverse penalty, scale). Top: "
        f"the stationary pi(correct) against pi_ref(correct) at beta = {NOISE_BETA:g}, per G. Bottom: "
        f"pi(correct) from pi_ref = {NOISE_PI_REF:g} over (beta, eps), with the contours where it reaches "
        "0.9 (solid) and where it gains less than 0.05 over pi_ref (dash-dotted). Take-away: at G = 2 a noisy "
        f"verifier is exactly a larger beta, beta / (1 - 2 eps) (every curve within {plotting.at_most(g2.max_gap.max(), '.1e')}); "
        f"at larger G only roughly: the best single beta misses the noisy curve by up to {misses}. Even at "
        "G = inf the stationary policy now depends on the expected reward gap 1 - FP - FN, because the group "
        "std contains the verifier's own variance; with a clean verifier it does not depend on the gap."
    )


def render(t):
    return draw(t["data"], t["map"], NOISE_BETA, NOISE_PI_REF)


SPEC = FigureSpec(17, "noisy_verifier", caption, tables, render, __name__)
