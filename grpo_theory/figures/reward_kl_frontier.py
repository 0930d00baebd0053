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


def draw(df: pd.DataFrame) -> Figure:
    """Figure 15: (a) expected reward against KL(pi || pi_ref) as beta varies, RLHF the optimal frontier;
    (b) each GRPO variant's reward deficit below the frontier at its own KL."""
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=2.9, ncols=2)
    palette = ["#6baed6", "#2171b5", "#08306b", "#b2182b"]
    grpo = [m for m in dict.fromkeys(df.method) if m not in ("RLHF", "NLHF")]
    r = df[df.method == "RLHF"].sort_values("kl_direct")
    axes[0].plot(r.kl_direct, r.expected_reward, "k--", lw=1.4, label="RLHF (optimal frontier)", zorder=3)
    for m, c in zip(grpo, palette):
        d = df[df.method == m].sort_values("kl_direct")
        label = plotting.infty(m)
        axes[0].plot(d.kl_direct, d.expected_reward, "-", color=c, lw=1.0, label=label)
        axes[1].plot(d.kl_direct, d.reward_deficit, "-", color=c, lw=1.2, marker="o", ms=2, label=label)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel(r"KL($\pi\,\|\,\pi_{\mathrm{ref}}$)")
    axes[1].set_yscale("log")
    axes[0].set_ylabel(r"$E_\pi[r]$")
    axes[1].set_ylabel("reward below the RLHF frontier")
    axes[0].legend(fontsize=7, loc="upper left")
    axes[0].set_title(r"(a) reward against KL, $\beta$ from 20 to 0.02", pad=2)
    axes[1].set_title("(b) the gap to the frontier at the same KL", pad=2)
    return fig


def tables(_inputs):
    return {"data": data()}


def render(t):
    return draw(t["data"])


SPEC = FigureSpec(
    15, "reward_kl_frontier",
    f"Figure 15. Expected reward against KL(pi || pi_ref) as beta falls from 20 to 0.02, for Figure 8's "
    f"question (rewards {SIMPLEX_REWARDS}, pi_ref = {SIMPLEX_PI_REF}). RLHF's log pooling maximises "
    "reward minus beta KL, so its curve is the optimal frontier; every GRPO variant lies on or below it "
    "(b: the gap at the same KL, from the exact frontier). Take-away: GRPO's aggregation buys at most "
    "0.019 less reward for the same divergence here (reverse/scale, G = 2; 0.008 for direct/scale, "
    "G = 8), most of it near KL = 1.",
    tables, render, __name__, uses=('simplex_paths',))
