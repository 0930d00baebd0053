"""Figure 18: each framework's defaults at the same beta, on one binary question."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

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


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference", "v": "below the axis"}


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


def zero_level(df: pd.DataFrame) -> float:
    """Where the "exactly 0" markers go: three decades below the smallest positive pi(wrong) of the
    table, in a strip of their own under a separator, outside the range of real values."""
    real = df.pi_wrong[df.pi_wrong > 0]
    return 10.0 ** (math.floor(math.log10(float(real.min()))) - 3)


def draw(df: pd.DataFrame) -> Figure:
    """Figure 18: pi(wrong) under each framework's defaults at the same beta; exact zeros (a clamp's
    collapse) as markers in a strip below every real value."""
    betas = sorted(df.beta.unique())
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.6, ncols=len(betas))
    names = list(dict.fromkeys(df.framework))
    # the frameworks that remove the wrong answer exactly somewhere: each its own row in the zero strip,
    # 1.1 decades apart (0.4 apart their markers overplotted), under the line at 2.2
    exact = [n for n in names if (df[df.framework == n].pi_wrong <= 0).any()]
    rows = {n: 0.3 + (1.1 / max(len(exact) - 1, 1)) * k for k, n in enumerate(exact)}
    top = float(df.pi_wrong.max()) * 3
    for ax, beta in zip(axes, betas):
        sub = df[df.beta == beta]
        z = zero_level(sub)
        for name in names:
            c = plotting.method_color(name)
            s = sub[(sub.framework == name) & (sub.pi_wrong > 0)]
            # the frameworks solid (data), RLHF dashed (a comparison); the TRL curves wide under the thin
            # verl and OpenRLHF ones, so that a curve lying on another (b) shows as a thin line inside a wide one
            rlhf = name.startswith("RLHF")
            ax.plot(s.pi_ref_correct, s.pi_wrong, ls="--" if rlhf else "-", color=c,
                    lw=2.6 if name.startswith("TRL") else 1.1, zorder=2 if name.startswith("TRL") else 3,
                    label=name.replace("low_var_kl", "low-var KL").replace("group_norm", "group norm"))
            zero = sub[(sub.framework == name) & (sub.pi_wrong <= 0)]
            # one row per framework inside the zero strip, so coinciding collapses stay distinguishable
            if len(zero):
                ax.plot(zero.pi_ref_correct, np.full(len(zero), z * 10 ** rows[name]), "v", color=c, ms=3.2)
        ax.set_yscale("log")
        if (sub.pi_wrong <= 0).any():
            # the strip spans z .. 10^2.2 z; every real value is above 10^3 z
            sep = ax.axhline(z * 10 ** 2.2, color="0.4", lw=0.7, ls=":")
            plotting.reference(sep)
            ax.set_ylim(z / 10, top)
        else:
            ax.set_ylim(float(sub.pi_wrong.min()) / 3, top)
        ax.set_xlabel(r"$\pi_{\mathrm{ref}}$(correct)")
        plotting.panel(ax, "ab"[betas.index(beta)], rf"$\beta$ = {beta:g}, $G$ = 8", pad=2)
    axes[0].set_ylabel(r"stationary $\pi$(wrong)  (▼ below the line: exactly 0)")
    handles, labels = axes[0].get_legend_handles_labels()
    # a framework drawn as ▼ where it removes the wrong answer is keyed with its ▼ too
    handles = [Line2D([], [], color=h.get_color(), ls=h.get_linestyle(), lw=h.get_linewidth(),
                      marker="v" if n in exact else None, ms=3.2) for h, n in zip(handles, names)]
    plotting.legend_below(fig, handles, labels, ncol=2)
    return fig


def tables(_inputs):
    return {"data": data()}


def render(t):
    return draw(t["data"])


def trl19_range(df: pd.DataFrame) -> dict:
    """The caption's numbers: TRL 1.9's pi(wrong) at beta = 0.04 at both ends of pi_ref(correct), and
    which frameworks remove the wrong answer exactly there."""
    s = df[(df.beta == 0.04)]
    t = s[s.framework.str.startswith("TRL 1.9")].sort_values("pi_ref_correct")
    zero = sorted(n.split(" (")[0] for n, g in s.groupby("framework") if (g.pi_wrong <= 0).all())
    return dict(hi=float(t.pi_wrong.iloc[0]), hi_at=float(t.pi_ref_correct.iloc[0]), lo=float(t.pi_wrong.iloc[-1]),
                lo_at=float(t.pi_ref_correct.iloc[-1]), zero=zero)


def coinciding(df: pd.DataFrame, beta: float = 0.5) -> dict[str, float]:
    """The largest |pi(wrong)| gap at ``beta`` between verl's recipe and TRL 1.9, and between OpenRLHF's
    group_norm and TRL 1.16 (the pairs drawn on top of each other in panel (b))."""
    p = df[df.beta == beta].pivot_table(index="pi_ref_correct", columns="framework", values="pi_wrong")

    def gap(x: str, y: str) -> float:
        cx, cy = (next(c for c in p.columns if c.startswith(n)) for n in (x, y))
        return float((p[cx] - p[cy]).abs().max())

    return {"verl": gap("verl", "TRL 1.9"), "openrlhf": gap("OpenRLHF", "TRL 1.16")}


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its numbers read from the plotted table."""
    a = trl19_range(t["data"])
    c = coinciding(t["data"])
    return (
        "Figure 18. One binary question (deterministic rewards), the same beta (0.04 left, 0.5 right) and "
        "G = 8 under the defaults of TRL 1.9 (k3: reverse), TRL 1.16 (ratio x k3: direct), verl's GRPO "
        "recipe (low_var_kl, clamped at 10) and OpenRLHF's group_norm (k1 in the advantage, clamped at "
        "10) (solid; TRL's wide, so a curve on it shows inside), beside RLHF (dashed). Markers below the dotted line: pi(wrong) exactly 0 (the clamps remove the wrong answer, "
        "a collapse), drawn below every real value. Take-away: at beta = 0.04 the same number means anything "
        f"from keeping the wrong answer at {a['hi']:.1%} (TRL 1.9 at pi_ref(correct) = {a['hi_at']:g}, falling to "
        f"{a['lo']:.2%} at {a['lo_at']:g}) to removing it exactly ({' and '.join(a['zero'])}, at every pi_ref). "
        f"At beta = 0.5, (b) shows three curves for five objectives: verl's recipe lies on TRL 1.9 (within "
        f"{c['verl']:.1e}) and OpenRLHF's on TRL 1.16 (within {c['openrlhf']:.1e}).")


SPEC = FigureSpec(18, "frameworks_same_beta", caption, tables, render, __name__)
