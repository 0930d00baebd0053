"""Each framework's defaults on one binary question: what TRL 1.9, TRL 1.16, verl's GRPO recipe and
OpenRLHF's group_norm converge to at the same beta, beside RLHF (issue: every KL placement).

    python experiments/kl_framework_defaults.py

The same beta (0.04 and 0.5) and the same group size G = 8 everywhere (TRL's default
num_generations; verl and OpenRLHF default to one sample, which is not GRPO), every other setting at
the framework's default as read by its config reader. Writes docs/results/kl_framework_defaults.csv
(the table: the question pi_ref(correct) = 0.2) and docs/results/fig_kl_framework_defaults.png
(pi(wrong) against pi_ref(correct), log scale; a collapse to exactly 0 is drawn on the floor).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from grpo_theory import Question, log_pooling, plotting, stationary_policy  # noqa: E402
from grpo_theory.integrations.openrlhf import objective_from_openrlhf  # noqa: E402
from grpo_theory.integrations.trl import objective_from_trl  # noqa: E402
from grpo_theory.integrations.verl import objective_from_verl  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
G = 8
BETAS = (0.04, 0.5)
FLOOR = 1e-30


def frameworks(beta: float) -> dict:
    """Each framework's objective at ``beta`` (and G = 8), through its own config reader."""
    return {
        "TRL 1.9 (k3 in the loss)": objective_from_trl({"beta": beta, "max_completion_length": 1},
                                                        trl_version="1.9.0").objective,
        "TRL 1.16 (ratio x k3 in the loss)": objective_from_trl({"beta": beta, "max_completion_length": 1},
                                                                trl_version="1.16.0").objective,
        "verl GRPO recipe (low_var_kl loss, clamped)": objective_from_verl(
            {"algorithm": {"adv_estimator": "grpo"},
             "actor_rollout_ref": {"rollout": {"n": G}, "actor": {"use_kl_loss": True, "kl_loss_coef": beta,
                                                                   "kl_loss_type": "low_var_kl"}}}).objective,
        "OpenRLHF group_norm (k1 in the advantage, clamped)": objective_from_openrlhf(
            {"advantage_estimator": "group_norm", "n_samples_per_prompt": G, "init_kl_coef": beta}).objective,
    }


def main() -> None:
    rows, curves = [], []
    grid = np.linspace(0.02, 0.98, 49)
    for beta in BETAS:
        objs = frameworks(beta)
        for p in np.append(grid, 0.2):
            q = Question([p, 1 - p], rewards=[1.0, 0.0])
            entries = {name: stationary_policy(q, o) for name, o in objs.items()}
            lp = log_pooling(q.pi_ref, q.expected_reward, beta)
            for name, pt in entries.items():
                rec = dict(beta=beta, pi_ref_correct=p, framework=name, objective=objs[name].describe(),
                           penalty=objs[name].penalty, pi_correct=pt.pi[0], pi_wrong=pt.pi[1],
                           collapse=bool(pt.boundary), stable=pt.stable)
                (rows if p == 0.2 else curves).append(rec)
            rec = dict(beta=beta, pi_ref_correct=p, framework="RLHF (log pooling)", objective="pi ∝ pi_ref e^{r/beta}",
                       penalty="-", pi_correct=lp[0], pi_wrong=lp[1], collapse=False, stable=True)
            (rows if p == 0.2 else curves).append(rec)
    table = pd.DataFrame(rows)
    out = ROOT / "docs" / "results"
    table.to_csv(out / "kl_framework_defaults.csv", index=False)
    print(table[["beta", "framework", "penalty", "pi_correct", "pi_wrong", "collapse"]].to_string(
        index=False, float_format=lambda v: f"{v:.4g}"))
    df = pd.DataFrame(curves)
    with matplotlib.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.4))
        names = list(dict.fromkeys(df.framework))
        # categorical, not ordered: distinct hues, and line styles for the curves that coincide
        styles = dict(zip(names, [("tab:blue", "-"), ("tab:orange", "-"), ("tab:green", "-."), ("tab:red", ":"),
                                  ("k", "--")]))
        for ax, beta in zip(axes, BETAS):
            sub = df[df.beta == beta]
            for i, name in enumerate(names):
                c, ls = styles[name]
                s = sub[sub.framework == name]
                ax.plot(s.pi_ref_correct, np.maximum(s.pi_wrong.to_numpy(), FLOOR), ls, color=c, label=name, lw=1.3)
                col = s[s.collapse]
                ax.plot(col.pi_ref_correct, np.full(len(col), FLOOR * 30.0 ** i), "v", color=c, ms=3.5)
            ax.set_yscale("log")
            if (sub.collapse).any():
                ax.set_ylim(FLOOR / 5, 2)
                ax.set_yticks([1e-30, 1e-24, 1e-18, 1e-12, 1e-6, 1])
            ax.set_xlabel(r"$\pi_{ref}$(correct)")
            ax.set_title(rf"$\beta$ = {beta:g}, G = {G}")
        axes[0].set_ylabel(r"stationary $\pi$(wrong)")
        axes[0].annotate("collapse to 0 (markers)", (0.5, FLOOR * 1e3), xytext=(0.3, 1e-21), fontsize=7,
                         arrowprops=dict(arrowstyle="->", lw=0.6))
        fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=7,
                   bbox_to_anchor=(0.5, -0.2))
        fig.savefig(out / "fig_kl_framework_defaults.png")
    print(f"wrote {out / 'kl_framework_defaults.csv'} and {out / 'fig_kl_framework_defaults.png'}")


if __name__ == "__main__":
    main()
