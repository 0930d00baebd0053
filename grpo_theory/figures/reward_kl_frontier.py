"""Figure 15: expected reward against KL(pi || pi_ref), RLHF the optimal frontier."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import plotting
from .._numerics import optimize
from ..solvers import log_pooling
from . import simplex_paths
from ._spec import FigureSpec
from .simplex_paths import SIMPLEX_PI_REF, SIMPLEX_REWARDS


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", ":": "reference", "o": "point"}


def data() -> pd.DataFrame:
    """Expected reward against KL(pi || pi_ref) along beta, for Figure 8's question and variants.

    RLHF's log pooling maximises ``E_pi r - beta KL(pi || pi_ref)``, so its curve is the optimal
    frontier: the most reward any policy gets at a given KL. Each GRPO variant's point lies on or below.
    """
    df = simplex_paths.data()
    pi = df[["pi_a", "pi_b", "pi_c"]].to_numpy()
    ref = np.asarray(SIMPLEX_PI_REF)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(pi > 0, pi * np.log(pi / ref), 0.0).sum(axis=1)
    out = pd.DataFrame(dict(beta=df.beta, method=df.method, expected_reward=pi @ np.asarray(SIMPLEX_REWARDS),
                            kl_direct=kl))
    # The frontier's reward at each point's KL: log pooling at the beta that gives that KL (a root in
    # log beta; KL falls monotonically as beta grows), so the deficit is exact, not interpolated.
    rewards = np.asarray(SIMPLEX_REWARDS)

    def kl_at(log_beta: float) -> float:
        p = log_pooling(SIMPLEX_PI_REF, SIMPLEX_REWARDS, math.exp(log_beta))
        return float(np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / ref), 0.0)))

    lo, hi = math.log(1e-3), math.log(1e4)
    k_max, k_min = kl_at(lo), kl_at(hi)

    def frontier(k: float) -> float:
        if k >= k_max:                  # beyond beta = 1e-3 the frontier is the best reward, to 1e-300
            return float(rewards.max())
        if k <= k_min:
            return float(ref @ rewards)
        lb = optimize.brentq(lambda t: kl_at(t) - k, lo, hi, xtol=1e-13)
        return float(log_pooling(SIMPLEX_PI_REF, SIMPLEX_REWARDS, math.exp(lb)) @ rewards)

    out["frontier_reward"] = [frontier(k) for k in out.kl_direct]
    out["reward_deficit"] = out.frontier_reward - out.expected_reward
    return out


#: deficits below this are floating-point noise of the two exact computations (RLHF against itself
#: is within 4e-15): the symlog axis is linear there, so noise and exact zeros sit at 0
LINTHRESH = 1e-6


def draw(df: pd.DataFrame) -> Figure:
    """Figure 15: each GRPO variant's reward deficit below RLHF's frontier at its own KL(pi || pi_ref),
    on a symlog axis (linear within :data:`LINTHRESH`, so non-positive gaps stay visible at 0)."""
    fig, (ax,) = plotting.new_figure(width=plotting.COLUMN, height=3.3)
    grpo = [m for m in dict.fromkeys(df.method) if m not in ("RLHF", "NLHF")]
    # one colour per method, every curve solid (data); G is a direct label at each curve's left end
    labelled = set()
    for m in grpo:
        d = df[df.method == m].sort_values("kl_direct")
        c = plotting.method_color(m)
        name = m.rsplit(" G=", 1)[0]
        ax.plot(d.kl_direct, d.reward_deficit, ls="-", color=c, lw=1.2, marker="o", ms=2,
                label=None if name in labelled else name)
        labelled.add(name)
        x0, y0 = float(d.kl_direct.iloc[0]), float(d.reward_deficit.iloc[0])
        ax.annotate(plotting.g_text(float(m.rsplit("G=", 1)[-1])), (x0, y0), xytext=(-3, 0),
                    textcoords="offset points", ha="right", va="center", color=c, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlim(df[df.method.isin(grpo)].kl_direct.min() / 8, None)       # room for the labels of G
    ax.set_yscale("symlog", linthresh=LINTHRESH, linscale=0.5)
    ax.axhspan(-LINTHRESH, LINTHRESH, color="0.92", zorder=0)
    zero = ax.axhline(0.0, color="0.45", lw=0.7, ls=":")
    plotting.reference(zero)
    ax.set_ylim(-LINTHRESH, 0.05)
    ax.set_xlabel(r"KL($\pi\,\|\,\pi_{\mathrm{ref}}$)")
    ax.set_ylabel("reward below the RLHF frontier")
    ax.set_title(r"Gap to the frontier at the same KL, $\beta$ 20 to 0.02", pad=2)
    plotting.legend_below(fig, *ax.get_legend_handles_labels(), ncol=2)
    return fig


def largest_gaps(df: pd.DataFrame) -> dict:
    """The caption's numbers: the largest deficit, its method and KL, and direct/scale's largest."""
    g = df[~df.method.isin(["RLHF", "NLHF"])]
    top = g.loc[g.reward_deficit.idxmax()]
    direct = g[g.method.str.contains("direct")]
    return dict(max=float(top.reward_deficit), method=top.method, kl=float(top.kl_direct),
                direct=float(direct.reward_deficit.max()), direct_method=direct.method.iloc[0],
                n_nonpositive=int((g.reward_deficit <= 0).sum()))


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its gaps read from the plotted table."""
    a = largest_gaps(t["data"])
    return (f"Figure 15. The reward each GRPO variant gives up against RLHF's frontier at the same KL(pi || pi_ref), "
            f"as beta falls from 20 to 0.02, for Figure 8's question (rewards {SIMPLEX_REWARDS}, pi_ref = "
            f"{SIMPLEX_PI_REF}). RLHF's log pooling maximises reward minus beta KL, so its curve is the optimal "
            "frontier (computed exactly at each point's KL); colour: the variant, G labelled at each curve's left end. Symlog axis, "
            f"linear within {LINTHRESH:g} (shaded): there the gap is floating-point noise, and the "
            f"{a['n_nonpositive']} points whose gap is 0 or -2e-16 (direct/scale on the frontier) are drawn at 0, "
            f"not dropped. Take-away: GRPO's aggregation gives up at most {a['max']:.3f} of reward at the same KL "
            f"({a['method'].replace('GRPO ', '')}; {a['direct']:.3f} for {a['direct_method'].replace('GRPO ', '')}), "
            f"the largest near KL = {a['kl']:.1f}.")


def tables(_inputs):
    return {"data": data()}


def render(t):
    return draw(t["data"])


SPEC = FigureSpec(15, "reward_kl_frontier", caption, tables, render, __name__, uses=("simplex_paths",))
