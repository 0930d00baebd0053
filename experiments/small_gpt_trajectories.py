"""Per-prompt P(correct) of the small GPT over training, and the measured kernel at three points of each run.

    OMP_NUM_THREADS=1 python experiments/small_gpt_trajectories.py      # about 2 CPU-minutes

The data of the held-out validation of the finite-time shared-weights predictor on our own small-GPT runs
(issue 42; ``experiments/predict_validation_gpt.py`` reads it). For every seed (0..4) the task is
``synthetic_binary_task(16, 1, seed=seed)`` (16 binary questions, one-token answers) and the reference
``pretrain_reference(task, freqs, seed=seed, steps=800)``, as in ``experiments/validate_seeds.py``. Every
run trains one model on all 16 questions (shared weights) with the trainer of ``grpo_theory.training``:
``Objective(beta, group_size=8)`` (reverse KL, k3 estimator, in the loss), Adam at ``lr = 3e-3`` decaying
linearly to 5% over 800 steps, 16 groups a question a step, ``seed = seed``; ``beta`` in 0.5 and 0.05.

Recorded (``docs/results/small_gpt_trajectories.csv``, one row per seed x beta x step x prompt):

* ``p``: the exact P(correct) of the model at that step (restricted decoding over the two answers: the
  model gives the probability, no sampling), at steps ``POINTS`` (0 = the reference);
* ``k`` of ``m = 200``: a binomial sample of ``p`` (seeded), what a user measuring by sampling would have;
  ``floor``: ``E|Bin(m, p)/m - p|`` summed exactly (the sampling floor of an exact predictor scored
  against ``k/m``; against the exact ``p`` the floor is 0);
* ``p_ref``, ``lr`` (the step's learning rate), ``half`` (``A``/``B`` alternately in order of ``p_ref``:
  the validation's two halves).

Kernels (``docs/results/small_gpt_trajectory_kernels.csv``, ``seed, beta, step, kernel, prompt_i,
prompt_j, K``): ``z = logit P(correct)``, gradients over all the model's parameters, at steps
``KERNEL_STEPS`` of each run: ``kernel = "plain"`` (``K = G G^T``) and, from the first step on,
``"adam"`` (``K = G P G^T``, ``P`` the trainer's Adam preconditioner from its state,
``grpo_theory.studies.kernel.adam_preconditioner``). Deterministic (seeds fixed).
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
POINTS = (0, 5, 10, 20, 40, 80, 160, 320, 800)
KERNEL_STEPS = (0, 40, 160)
BETAS = (0.5, 0.05)
M_SAMPLES = 200
STEPS = 800
LR = 3e-3


def halves(p_ref: np.ndarray) -> np.ndarray:
    """``A``/``B`` alternately in order of ``p_ref`` (ties by prompt index): two halves with alike references."""
    order = np.argsort(p_ref, kind="stable")
    half = np.empty(p_ref.size, dtype=object)
    half[order[0::2]] = "A"
    half[order[1::2]] = "B"
    return half


def floor_per_prompt(p: np.ndarray, m: int) -> np.ndarray:
    """``E|Bin(m, p)/m - p|`` for each ``p`` (exact sum over the binomial)."""
    from grpo_theory.predict.scoring import sampling_floor

    return np.array([sampling_floor([v], [m]) for v in p])


def one_run(task, ref, seed: int, beta: float):
    """Train one run; its P(correct) rows and kernel rows."""
    import torch

    from grpo_theory import Objective
    from grpo_theory.studies.kernel import adam_preconditioner, gpt_scores, measure_kernel, trainable_parameters
    from grpo_theory.training.trainer import GRPOTrainer, TrainerConfig, answer_probabilities

    cfg = TrainerConfig(objective=Objective(beta=beta, group_size=8), steps=STEPS, learning_rate=LR,
                        groups_per_question=16, seed=seed, num_threads=1)
    tr = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, progress=False)
    torch.manual_seed(seed)
    best = task.rewards == task.rewards.max(1, keepdims=True)
    n = task.n_questions
    p_ref = (tr.reference_probs * best).sum(1)
    half = halves(p_ref)
    rng = np.random.default_rng([seed, int(round(beta * 1000))])
    rows, krows, kseconds = [], [], 0.0
    while True:
        if tr.step in POINTS:
            p = (answer_probabilities(tr.model, task) * best).sum(1)
            k = rng.binomial(M_SAMPLES, p)
            rows.append(pd.DataFrame(dict(seed=seed, beta=beta, step=tr.step, prompt=np.arange(n), p_ref=p_ref,
                                          p=p, k=k, m=M_SAMPLES, floor=floor_per_prompt(p, M_SAMPLES),
                                          lr=tr._lr(), half=half)))
        if tr.step in KERNEL_STEPS:
            params = trainable_parameters(tr.model)
            kinds = {"plain": None}
            if tr.step > 0:
                kinds["adam"] = adam_preconditioner(tr.optimizer, params)
            for name, P in kinds.items():
                km = measure_kernel(gpt_scores(tr.model, task), params, n, preconditioner=P)
                kseconds += km.seconds
                krows.append(pd.DataFrame(dict(seed=seed, beta=beta, step=tr.step, kernel=name,
                                               prompt_i=np.repeat(np.arange(n), n), prompt_j=np.tile(np.arange(n), n),
                                               K=km.K.ravel())))
        if tr.step >= STEPS:
            break
        tr.train_step()
    return pd.concat(rows), pd.concat(krows), kseconds


def main() -> None:
    import torch

    from grpo_theory.training.reference import pretrain_reference
    from grpo_theory.training.tasks import synthetic_binary_task

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    traj, kern = [], []
    t_all = time.process_time()
    for seed in args.seeds:
        task, freqs = synthetic_binary_task(16, 1, seed=seed)
        t0 = time.process_time()
        ref = pretrain_reference(task, freqs, seed=seed, progress=False, steps=800)
        print(f"seed {seed}: reference {time.process_time() - t0:.1f} CPU s", flush=True)
        for beta in BETAS:
            t0 = time.process_time()
            rows, krows, ks = one_run(task, ref, seed, beta)
            traj.append(rows)
            kern.append(krows)
            last = rows[rows.step == STEPS]
            print(f"  beta {beta:g}: {time.process_time() - t0:.1f} CPU s (kernels {ks:.2f} s); mean P(correct) "
                  f"{rows[rows.step == 0].p.mean():.3f} -> {last.p.mean():.3f}; floor at the end "
                  f"{last.floor.mean():.4f}", flush=True)
    out = Path(args.results)
    pd.concat(traj, ignore_index=True).to_csv(out / "small_gpt_trajectories.csv", index=False, float_format="%.8g")
    pd.concat(kern, ignore_index=True).to_csv(out / "small_gpt_trajectory_kernels.csv", index=False,
                                              float_format="%.8g")
    print(f"total {time.process_time() - t_all:.0f} CPU s")


if __name__ == "__main__":
    main()
