"""GRPO family on the small GPT: one seed, four binary questions, a smoke check (issue 22).

Not the 3-seed study the issue asks for (a later wave): each configuration trains a TinyGPT reference-initialised
policy for 600 steps with the trainer's family options (training/loss.py: family_advantages, tie_mask) and
compares the final-window answer probabilities with the exact engine's stationary policy for the reference
model's own probabilities. Measured on 2 shared CPU cores (20:52 UTC, 2026-12-01), seed 0:

    rloo G=4            MAE 0.0004   (pred [0.854 0.552 0.260 0.036], trained [0.854 0.552 0.261 0.036])
    filter_ties G=2     MAE 0.0000   (pred [0.878 0.724 0.193 0.034], trained [0.878 0.724 0.193 0.034])
    pass@2 G=4          MAE 0.0013   (pred [0.735 0.387 0.408 0.086], trained [0.734 0.390 0.408 0.085])

Run: ``PYTHONPATH=. python experiments/family_smoke.py`` (about 2 minutes on one core).
"""

from __future__ import annotations

import copy
import time

import numpy as np
import torch

from grpo_theory import Objective, Question, stationary_policy
from grpo_theory.training.reference import pretrain_reference
from grpo_theory.training.tasks import synthetic_binary_task
from grpo_theory.training.trainer import GRPOConfig, GRPOTrainer

CONFIGS = [("rloo G=4", dict(group_size=4, advantage="rloo")),
           ("filter_ties G=2", dict(group_size=2, filter_ties=True)),
           ("pass@2 G=4", dict(group_size=4, advantage="pass_at_k", pass_k=2))]


def main(seed: int = 0, steps: int = 600) -> None:
    torch.set_num_threads(1)
    task, freqs = synthetic_binary_task(n_questions=4, seed=seed)
    ref = pretrain_reference(task, freqs, seed=seed, progress=False, steps=400)
    for name, kw in CONFIGS:
        t0 = time.time()
        cfg = GRPOConfig(objective=Objective(beta=0.5, **kw), steps=steps, groups_per_question=16, seed=seed)
        res = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, progress=False).train()
        pred = np.array([stationary_policy(Question(np.asarray(p, float) / np.sum(p), rewards=task.rewards[i]),
                                           cfg.objective).pi for i, p in enumerate(res.reference)])
        print(f"{name:16s} MAE {np.abs(pred - res.measured).mean():.4f}  pred {np.round(pred[:, 0], 3)}  "
              f"trained {np.round(res.measured[:, 0], 3)}  se {np.round(res.measured_se[:, 0], 3)}  "
              f"{time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
