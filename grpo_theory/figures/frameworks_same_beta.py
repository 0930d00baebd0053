"""Figure 18: each framework's defaults at the same beta, on one binary question."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import plotting
from ..integrations.openrlhf import read_openrlhf_config
from ..integrations.trl import read_trl_config
from ..integrations.verl import read_verl_config
from ..problem import Question
from ..solvers import log_pooling, stationary_policy
from ._spec import FigureSpec

#: Figure 18: each framework's defaults at the same beta, on a binary question.
FRAMEWORK_BETAS = (0.04, 0.5)
FRAMEWORK_G = 8


def framework_objectives(beta: float) -> dict:
    """TRL 1.9, TRL 1.16, verl's GRPO recipe and OpenRLHF's group_norm at ``beta`` and G = 8, each through
    its own config reader (every other setting at the framework's default)."""
    trl = {"beta": beta, "max_completion_length": 1}
    return {
        "TRL 1.9 (k3 in the loss)": read_trl_config(trl, trl_version="1.9.0").objective,
        "TRL 1.16 (ratio x k3 in the loss)": read_trl_config(trl, trl_version="1.16.0").objective,
        "verl GRPO recipe (low_var_kl, clamped)": read_verl_config(
            {"algorithm": {"adv_estimator": "grpo"},
             "actor_rollout_ref": {"rollout": {"n": FRAMEWORK_G},
                                   "actor": {"use_kl_loss": True, "kl_loss_coef": beta,
                                             "kl_loss_type": "low_var_kl"}}}).objective,
        "OpenRLHF group_norm (k1 in the advantage, clamped)": read_openrlhf_config(
            {"advantage_estimator": "group_norm", "n_samples_per_prompt": FRAMEWORK_G,
             "init_kl_coef": beta}).objective,
    }


def data(n: int = 49) -> pd.DataFrame:
    """pi(wrong) at the stationary point against pi_ref(correct), per framework and beta, with RLHF."""
    rows = []
    for beta in FRAMEWORK_BETAS:
        objs = framework_objectives(beta)
        for p in np.linspace(0.02, 0.98, n):
            q = Question([p, 1 - p], rewards=[1.0, 0.0])
            for name, obj in objs.items():
                pt = stationary_policy(q, obj)
                rows.append(dict(beta=beta, pi_ref_correct=p, framework=name, penalty=obj.regime,
                                 pi_correct=pt.pi[0], pi_wrong=pt.pi[1], collapse=bool(pt.boundary)))
            lp = log_pooling(q.pi_ref, [1.0, 0.0], beta)
            rows.append(dict(beta=beta, pi_ref_correct=p, framework="RLHF (log pooling)", penalty="-",
                             pi_correct=lp[0], pi_wrong=lp[1], collapse=False))
    return pd.DataFrame(rows)


def draw(df: pd.DataFrame, floor: float = 1e-30) -> Figure:
    """Figure 18: pi(wrong) under each framework's defaults at the same beta; collapses shaded."""
    betas = sorted(df.beta.unique())
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.6, ncols=len(betas))
    styles = {0: ("tab:blue", "-"), 1: ("tab:orange", "-"), 2: ("tab:green", "-."), 3: ("tab:red", ":"),
              4: ("k", "--")}
    names = list(dict.fromkeys(df.framework))
    for ax, beta in zip(axes, betas):
        sub = df[df.beta == beta]
        collapsed = sub[sub.collapse]
        if len(collapsed):
            lo, hi = collapsed.pi_ref_correct.min(), collapsed.pi_ref_correct.max()
            ax.axvspan(lo, hi, color="0.88", zorder=0, label=r"clamp collapse ($\pi$(wrong) = 0)")
        for i, name in enumerate(names):
            c, ls = styles[i % len(styles)]
            s = sub[(sub.framework == name) & ~sub.collapse]
            ax.plot(s.pi_ref_correct, s.pi_wrong, ls, color=c, lw=1.3,
                    label=name.replace("low_var_kl", "low-var KL").replace("group_norm", "group norm"))
            col = sub[(sub.framework == name) & sub.collapse]
            ax.plot(col.pi_ref_correct, np.full(len(col), floor * 30.0 ** i), "v", color=c, ms=3)
        ax.set_yscale("log")
        ax.set_xlabel(r"$\pi_{\mathrm{ref}}$(correct)")
        plotting.panel(ax, "ab"[betas.index(beta)], rf"$\beta$ = {beta:g}, $G$ = 8", pad=2)
    axes[0].set_ylabel(r"stationary $\pi$(wrong)  (▼: exactly 0)")
    handles, labels = axes[0].get_legend_handles_labels()
    plotting.legend_below(fig, handles, labels, ncol=2)
    return fig


def tables(_inputs):
    return {"data": data()}


def render(t):
    return draw(t["data"])


SPEC = FigureSpec(
    18, "frameworks_same_beta",
    "Figure 18. One binary question (deterministic rewards), the same beta (0.04 left, 0.5 right) and "
    "G = 8 under the defaults of TRL 1.9 (k3: reverse), TRL 1.16 (ratio x k3: direct), verl's GRPO "
    "recipe (low_var_kl, clamped at 10) and OpenRLHF's group_norm (k1 in the advantage, clamped at "
    "10), beside RLHF. Shaded: the clamps remove the wrong answer exactly (a collapse). Take-away: "
    "at beta = 0.04 the same number means anything from keeping the wrong answer at 1% to removing "
    "it.",
    tables, render, __name__)
