"""The small GPT trained several times on the SAME task and reference, only the training seed changed; and the
held-out validation's models on every run.

    OMP_NUM_THREADS=1 python experiments/small_gpt_seed_runs.py      # about 5 CPU-minutes

``docs/results/small_gpt_trajectories.csv`` cannot give a seed-to-seed spread: there the seed draws the task
(``synthetic_binary_task(16, 1, seed)``) and pretrains its reference, so no two seeds share a question. Here,
for each task ``TASKS`` (tasks 0 and 1 of that file, with their references pretrained again the same way),
the run of ``experiments/small_gpt_trajectories.py`` (``one_run``: ``Objective(beta, group_size=8)``, Adam
lr 3e-3 decaying to 5% over 800 steps, 16 groups a question a step) is repeated with training seeds
``SEEDS`` (the trainer's sampling and the 200-sample counts; the model starts from the same reference), at
beta 0.5 and 0.05. Training seed ``t`` of task ``t`` is the committed run of that file (its test checks it).

Then every run and recorded step gets the held-out validation of ``experiments/predict_validation_gpt.py``
(``predict_point``: fitted on one half of the questions from the 200-sample counts, predicting the other
half; models ``kernel`` (step-0 plain kernel: the same reference, so the same for every training seed),
``kernel_adam`` and ``kernel_40`` (that run's step-40 kernels), ``coupled``, ``tabular``, ``shift``,
``no_change``).

Writes ``docs/results/small_gpt_seed_runs.csv`` (one row per task, seed, beta, step, prompt: the columns of
``small_gpt_trajectories.csv`` plus ``task``) and ``docs/results/small_gpt_seed_runs_predictions.csv`` (one
row per task, seed, beta, step, prompt and model: the held-out ``predicted``). ``experiments/predict_seed_floor.py``
reads both. Deterministic (seeds fixed).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from predict_validation_gpt import ADAM_STEP, predict_point  # noqa: E402
from small_gpt_trajectories import BETAS, one_run  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
TASKS = (0, 1)
SEEDS = (0, 1, 2, 3, 4)


def kernel_of(krows: pd.DataFrame, step: int, kind: str) -> np.ndarray:
    """The ``kind`` kernel at ``step`` as a matrix."""
    g = krows[(krows.step == step) & (krows.kernel == kind)]
    return g.pivot(index="prompt_i", columns="prompt_j", values="K").to_numpy(float)


def validate(run: pd.DataFrame, kernels: dict, beta: float) -> pd.DataFrame:
    """Every held-out prediction of one run (the validation's protocol)."""
    from scipy.special import logit

    from grpo_theory import Objective
    from grpo_theory.predict.field import PromptField

    base = run[run.step == 0].sort_values("prompt")
    p_ref = base.p_ref.to_numpy(float)
    fld = PromptField(Objective(beta=beta, group_size=8), p_ref)
    half = base.half.to_numpy(str)
    out = []
    for step, pt in run[run.step > 0].groupby("step"):
        pt = pt.sort_values("prompt")
        k, m = pt.k.to_numpy(int), pt.m.to_numpy(int)
        preds, _ = predict_point(fld, logit(p_ref), kernels, k, m, half)
        for name, q in preds.items():
            out.append(pd.DataFrame(dict(step=int(step), prompt=pt.prompt.to_numpy(), model=name, predicted=q)))
    return pd.concat(out, ignore_index=True)


def main() -> int:
    import torch

    from grpo_theory.training.reference import pretrain_reference
    from grpo_theory.training.tasks import synthetic_binary_task

    torch.set_num_threads(1)
    t_all = time.process_time()
    traj, preds = [], []
    for task_seed in TASKS:
        task, freqs = synthetic_binary_task(16, 1, seed=task_seed)
        ref = pretrain_reference(task, freqs, seed=task_seed, progress=False, steps=800)
        for beta in BETAS:
            for seed in SEEDS:
                t0 = time.process_time()
                rows, krows, _ = one_run(task, ref, seed, beta)
                rows.insert(0, "task", task_seed)
                traj.append(rows)
                kernels = {"kernel": kernel_of(krows, 0, "plain"), "kernel_adam": kernel_of(krows, ADAM_STEP, "adam"),
                           "kernel_40": kernel_of(krows, ADAM_STEP, "plain")}
                pr = validate(rows, kernels, beta)
                pr.insert(0, "task", task_seed)
                pr.insert(1, "seed", seed)
                pr.insert(2, "beta", beta)
                preds.append(pr)
                print(f"task {task_seed} beta {beta:g} seed {seed}: {time.process_time() - t0:.1f} CPU s; mean "
                      f"P(correct) at 800 {rows[rows.step == 800].p.mean():.4f}", flush=True)
    pd.concat(traj, ignore_index=True).to_csv(RESULTS / "small_gpt_seed_runs.csv", index=False, float_format="%.8g")
    pd.concat(preds, ignore_index=True).to_csv(RESULTS / "small_gpt_seed_runs_predictions.csv", index=False,
                                               float_format="%.8g")
    print(f"total {time.process_time() - t_all:.0f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
