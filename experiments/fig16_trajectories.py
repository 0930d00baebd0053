"""Figure 16's data from the committed five-seed study's runs: training trajectories against the flow.

    python experiments/validate_seeds.py          # first (its runs/ hold the trajectories)
    python experiments/fig16_trajectories.py      # a few seconds; writes docs/results/fig16_trajectories.csv

G = 8, beta = 0.5, reverse penalty, seed 0, two questions (the lowest and the highest pi_ref): the
trained probability of the rewarded answer every 10 steps at Adam lr 3e-3, 1e-3 and 3e-4, and with
4 inner updates per batch (PPO clipping active) at 3e-3. Beside each run: the gradient flow from
pi_ref with its time scale fitted to the run (t = c x step, least squares; c is the run's
effective step in logit units), and dynamics.grpo_steps (exact expectations) at lr = c.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from grpo_theory import Objective, Question
from grpo_theory.dynamics import flow, grpo_steps

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs" / "validate_seeds"
OBJ = Objective(beta=0.5, group_size=8)
#: (label, run directory, learning rate, inner updates)
RUN_SET = (("lr 3e-3", "modejoint_learning_rate0.003", "G8_beta0.5_reverse", 3e-3, 1),
           ("lr 1e-3", "modejoint_learning_rate0.001", "G8_beta0.5_reverse", 1e-3, 1),
           ("lr 3e-4", "modejoint_learning_rate0.0003", "G8_beta0.5_reverse", 3e-4, 1),
           ("lr 3e-3, 4 inner updates", "modejoint_learning_rate0.003", "inner4_clip_G8", 3e-3, 4))


def main(seed: int = 0) -> None:
    results = pd.read_csv(RUNS / "modejoint_learning_rate0.003" / f"seed{seed}" / "results.csv")
    base = results[(results.config == "G8_beta0.5_reverse") & (results.prediction == "trainer")]
    picks = [int(base.loc[base.pi_ref_a.idxmin()].question), int(base.loc[base.pi_ref_a.idxmax()].question)]
    rows = []
    for label, mode, config, lr, inner in RUN_SET:
        m = pd.read_csv(RUNS / mode / f"seed{seed}" / "runs" / config / "metrics.csv")
        for q in picks:
            info = base[base.question == q].iloc[0]
            p0 = float(info.pi_ref_a)
            steps = np.concatenate([[0], m.step.to_numpy()])
            pis = np.concatenate([[p0], m[f"p_best_q{q}"].to_numpy()])
            question = Question([p0, 1 - p0], rewards=[1, 0])
            t_dense = np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 4000)])
            tr = flow(question, OBJ, question.pi_ref, t_dense, with_points=False).pi[:, 0]

            def loss(c, steps=steps, pis=pis, tr=tr, t_dense=t_dense):
                return float(np.sum((np.interp(c * steps, t_dense, tr) - pis) ** 2))
            grid = np.geomspace(1e-4, 1e4 / steps.max(), 200)       # coarse, then refined: one clear minimum
            c0 = grid[np.argmin([loss(g) for g in grid])]
            c = minimize_scalar(loss, bounds=(c0 / 1.2, c0 * 1.2), method="bounded").x
            tab = grpo_steps(question, OBJ, question.pi_ref, lr=c, n_batches=int(steps.max()),
                             with_points=False).pi[:, 0]
            common = dict(run=label, learning_rate=lr, inner_updates=inner, question=q, pi_ref=p0,
                          predicted=float(info.predicted), time_scale=c)
            rows += [dict(common, kind="trained", step=s, pi=p) for s, p in zip(steps, pis)]
            rows += [dict(common, kind="flow (fitted time scale)", step=s, pi=float(np.interp(c * s, t_dense, tr)))
                     for s in steps]
            rows += [dict(common, kind="grpo_steps (lr = time scale)", step=s, pi=float(tab[min(s, len(tab) - 1)]))
                     for s in steps]
    table = pd.DataFrame(rows)
    table.to_csv(ROOT / "docs" / "results" / "fig16_trajectories.csv", index=False, float_format="%.6g")
    print(table.groupby(["run", "question"]).agg(time_scale=("time_scale", "first"), pi_ref=("pi_ref", "first"),
                                                 predicted=("predicted", "first")).to_string())


if __name__ == "__main__":
    main()
