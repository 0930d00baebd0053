"""Figure 8: the stationary policy's path on the simplex as beta decreases (three answers)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import plotting
from ..problem import Objective, Question
from ..solvers import log_pooling, nash_equilibrium, stationary_policy_batch
from ._spec import FigureSpec

#: Figure 8: the three-answer question.
SIMPLEX_REWARDS = (1.0, 0.5, 0.0)
SIMPLEX_PI_REF = (0.2, 0.3, 0.5)
SIMPLEX_BETAS = tuple(np.unique(np.append(np.logspace(math.log10(20.0), math.log10(0.02), 60), 1.0))[::-1])
SIMPLEX_METHODS = (("GRPO reverse/scale G=2", dict(group_size=2)),
                   ("GRPO reverse/scale G=8", dict(group_size=8)),
                   ("GRPO reverse/scale G=inf", dict(group_size=math.inf)),
                   ("GRPO direct/scale G=8", dict(group_size=8, penalty="direct")))


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", "o": "point", "*": "reference policy"}


def data() -> pd.DataFrame:
    """Path of the stationary policy on the simplex as beta decreases, GRPO against RLHF."""
    return _rows().copy()


@functools.lru_cache(maxsize=1)
def _rows() -> pd.DataFrame:     # shared with Figure 15: solved once per process
    q = Question(SIMPLEX_PI_REF, rewards=SIMPLEX_REWARDS, labels=("a", "b", "c"))
    # the 244 GRPO points at once: their flows from pi_ref integrated together (stationary_policy_batch)
    objectives = [Objective(beta=beta, **template) for beta in SIMPLEX_BETAS for _, template in SIMPLEX_METHODS]
    points = iter(stationary_policy_batch([q] * len(objectives), objectives))
    rows = []
    for beta in SIMPLEX_BETAS:
        for name, _ in SIMPLEX_METHODS:
            sol = next(points)
            rows.append(dict(beta=beta, method=name, pi_a=sol.pi[0], pi_b=sol.pi[1], pi_c=sol.pi[2],
                             residual=sol.residual))
        pi = log_pooling(q.pi_ref, SIMPLEX_REWARDS, beta)
        rows.append(dict(beta=beta, method="RLHF", pi_a=pi[0], pi_b=pi[1], pi_c=pi[2], residual=0.0))
        ne = nash_equilibrium(q, beta)
        rows.append(dict(beta=beta, method="NLHF", pi_a=ne.pi[0], pi_b=ne.pi[1], pi_c=ne.pi[2], residual=ne.residual))
    return pd.DataFrame(rows)


def draw(df: pd.DataFrame, pi_ref, labels=("a", "b", "c"), rewards=None, mark_beta: float = 1.0) -> Figure:
    """Figure 8: the stationary policy's path on the simplex as beta goes from large to small."""
    fig, (ax,) = plotting.new_figure(height=4.0)
    plotting.simplex_axes(ax, labels, rewards)
    # one colour per method (as in Figure 15); GRPO's paths solid (data), RLHF's and NLHF's dashed
    # (comparisons); the three reverse/scale paths, one colour, are told apart by direct labels of G
    g_dots = []
    for method, d in df.groupby("method", sort=False):
        c = plotting.method_color(method)
        d = d.sort_values("beta", ascending=False)
        xy = plotting.ternary(d[["pi_a", "pi_b", "pi_c"]].to_numpy())
        comparison = method in ("RLHF", "NLHF")
        label = "GRPO reverse/scale (label: $G$)" if "reverse" in method else method.replace("G=", "G = ")
        ax.plot(xy[:, 0], xy[:, 1], color=c, ls="--" if comparison else "-", lw=1.3,
                label=None if "reverse" in method and g_dots else plotting.infty(label))
        k = int(np.argmin(np.abs(np.log(d.beta.to_numpy() / mark_beta))))
        ax.plot(xy[k, 0], xy[k, 1], "o", color=c, ms=3.2, mec="white", mew=0.5)
        if "reverse" in method:
            g_dots.append((method.rsplit("G=", 1)[-1], xy[k], c))
    # the labels to the right of the beta = 1 dots, in the dots' vertical order, at least 0.055 apart, wholly
    # outside the triangle: left-aligned 0.03 right of its right edge (x = 1 - y/sqrt(3)) at the lowest label
    y_text = []
    for _, p, _ in sorted(g_dots, key=lambda t: t[1][1]):
        y_text.append(max(p[1], y_text[-1] + 0.055) if y_text else p[1])
    x_text = 1.0 - min(y_text) / np.sqrt(3.0) + 0.03
    for (g, p, c), y in zip(sorted(g_dots, key=lambda t: t[1][1]), y_text):
        ax.annotate(plotting.g_text(float(g)), p, xytext=(x_text, y), color=c, fontsize=7.5,
                    va="center", arrowprops=dict(arrowstyle="-", color=c, lw=0.5, shrinkA=1, shrinkB=2))
    ref = plotting.ternary(np.asarray(pi_ref))
    ax.plot(ref[0], ref[1], "k*", ms=6, label=r"$\pi_{\mathrm{ref}}$ ($\beta\to\infty$)")
    ax.plot([], [], "o", color="0.4", ms=3.2, label=rf"$\beta$ = {mark_beta:g}")
    plotting.legend_below(fig, *ax.get_legend_handles_labels(), ncol=2)
    ax.set_title(r"Stationary policy as $\beta$ decreases from 20 to 0.02", pad=2)
    return fig


def tables(_inputs):
    return {"data": data()}


def render(t):
    return draw(t["data"], SIMPLEX_PI_REF, rewards=SIMPLEX_REWARDS)


SPEC = FigureSpec(
    8, "simplex_paths",
    f"Figure 8. Three answers with rewards {SIMPLEX_REWARDS} and pi_ref = {SIMPLEX_PI_REF}: "
    "the stationary policy's path on the simplex as beta decreases from 20 to 0.02 (dots: beta = 1), "
    "GRPO variants (solid; colour: the variant; the reverse/scale paths labelled with G at their dots) against RLHF and "
    "NLHF (dashed); "
    "grey lines: the barycentric grid, where one answer's probability is 0.2, 0.4, "
    "0.6 or 0.8.",
    tables, render, __name__)
