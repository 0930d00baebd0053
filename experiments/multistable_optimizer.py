"""Which stable point does training reach where two exist? Step size, optimiser, alone vs joint.

    python experiments/multistable_optimizer.py        # about 8 min on one core

For G = 64, beta = 1, direct penalty, questions with pi_ref(a) in about (0.1, 0.27) have two stable
points: the flow from pi_ref reaches the lower one (the prediction), and a separatrix near
pi(a) = 0.97 bounds the upper one's basin. validate_seeds.py found trained runs ending at the upper
point. Here every multistable question of seeds 0-4 is trained alone (its own model) with Adam
at three step sizes, and the trajectory's maximum is recorded: a run that overshoots the separatrix
early ends at the upper point. Beside it, the tabular finite-step analysis
(dynamics.grpo_steps, exact expectations, plain gradient steps on the logits) at several step
sizes. Writes docs/results/multistable_optimizer.csv.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from grpo_theory import Objective, Question, stationary_points
from grpo_theory.dynamics import grpo_steps
from grpo_theory.training.reference import pretrain_reference
from grpo_theory.training.tasks import synthetic_binary_task
from grpo_theory.training.trainer import GRPOConfig, GRPOTrainer, answer_probabilities

ROOT = Path(__file__).resolve().parents[1]
OBJ = Objective(beta=1.0, group_size=64, penalty="direct")
ADAM = ((3e-3, 800), (1e-3, 1200), (3e-4, 4000))          # (learning rate, steps), as validate_seeds.py
TABULAR_LR = (0.3, 1.0, 3.0, 5.0)


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    for seed in range(5):
        task, freqs = synthetic_binary_task(16, 1, seed=seed)
        ref = pretrain_reference(task, freqs, seed=seed, progress=False)
        probs = answer_probabilities(ref, task)
        for q in range(task.n_questions):
            best = int(np.argmax(task.rewards[q]))
            p = probs[q] / probs[q].sum()
            question = Question(p, rewards=task.rewards[q])
            pts = stationary_points(question, OBJ)
            if not pts.multistable:
                continue
            lower, upper = sorted(float(s.pi[best]) for s in pts.stable)
            separatrix = min(b.hi for b in pts.basins)
            base = dict(seed=seed, question=q, pi_ref=p[best], predicted=float(pts.from_reference.pi[best]),
                        lower=lower, upper=upper, separatrix=separatrix)
            for lr, steps in ADAM:
                cfg = GRPOConfig(objective=Objective(group_size=64, beta=1.0, penalty="direct"), steps=steps,
                                 learning_rate=lr, groups_per_question=4, log_every=1, seed=seed)
                res = GRPOTrainer(copy.deepcopy(ref), task.subset([q]), cfg, reference=ref, progress=False).train()
                traj = np.array([h["p_best_q0"] for h in res.history])
                end = float(res.measured[0, best])
                rows.append(dict(base, method="adam, alone", step_size=lr, max_along_run=traj.max(),
                                 step_of_max=int(traj.argmax()) + 1, measured=end,
                                 reached="upper" if abs(end - upper) < abs(end - lower) else "lower"))
            for lr in TABULAR_LR:
                tr = grpo_steps(question, OBJ, question.pi_ref, lr=lr, n_batches=int(400 / lr) + 50, every=1,
                                with_points=False)
                path = np.array(tr.pi)[:, best]
                end = float(path[-1])
                rows.append(dict(base, method="grpo_steps (tabular, exact expectations)", step_size=lr,
                                 max_along_run=path.max(), step_of_max=int(path.argmax()), measured=end,
                                 reached="upper" if abs(end - upper) < 0.01 else
                                 "lower" if abs(end - lower) < 0.01 else "neither"))
        print(f"seed {seed}: {len(rows)} rows", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(ROOT / "docs" / "results" / "multistable_optimizer.csv", index=False, float_format="%.6g")
    table["overshot"] = table.max_along_run > table.separatrix
    print(table.groupby(["method", "step_size"]).agg(questions=("reached", "size"),
                                                     reached_upper=("reached", lambda r: int((r == "upper").sum())),
                                                     overshot_separatrix=("overshot", "sum")).to_string())


if __name__ == "__main__":
    main()
