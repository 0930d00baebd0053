"""The measured kernel between the small-GPT validation's questions at its reference models.

    python experiments/small_gpt_kernel.py [--seeds 0 1 2 3 4]      # about 1 min a seed on one core

The five-seed validation (``experiments/validate_seeds.py``, mode ``joint``: 16 questions trained by one
model) starts every run from ``pretrain_reference`` of ``synthetic_binary_task(16, L, seed=seed)``
(800 pretraining steps for one-token answers, 1200 for two; ``grpo_theory.studies.small._reference``).
This rebuilds those references, checks them against the committed ``pi_ref_a`` of
``docs/results/validate_seeds.csv``, and measures ``K_ij = <grad z_i, grad z_j>`` over all the model's
parameters (the trainer trains them all), ``z_i = logit P_i(correct)`` under restricted decoding, with
``grpo_theory.studies.kernel``. Runs in mode ``alone`` train a copy per question: no kernel couples them.

Writes ``docs/results/small_gpt_kernel.csv`` (``seed, answer_length, prompt_i, prompt_j, K``) and
``docs/results/small_gpt_kernel_prompts.csv`` (``seed, answer_length, prompt, p_ref, pi_ref_committed,
z, seconds_per_prompt``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _kernel_tables import long_form, write_tables

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def main() -> None:
    import torch

    from grpo_theory.studies.kernel import gpt_scores, measure_kernel, trainable_parameters
    from grpo_theory.training.reference import pretrain_reference
    from grpo_theory.training.tasks import synthetic_binary_task

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--answer-lengths", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    committed = pd.read_csv(Path(args.results) / "validate_seeds.csv")
    committed = committed[committed["mode"] == "joint"].drop_duplicates(["seed", "answer_length", "question"])
    long, per = [], []
    for L in args.answer_lengths:
        for seed in args.seeds:
            task, freqs = synthetic_binary_task(16, L, seed=seed)
            t0 = time.perf_counter()
            ref = pretrain_reference(task, freqs, seed=seed, progress=False, steps=800 if L == 1 else 1200)
            pre = time.perf_counter() - t0
            k = measure_kernel(gpt_scores(ref, task), trainable_parameters(ref), task.n_questions)
            n = task.n_questions
            p = 1 / (1 + np.exp(-k.z))
            c = committed[(committed.seed == seed) & (committed.answer_length == L)].set_index("question")
            want = c.pi_ref_a.reindex(range(n)).to_numpy() if len(c) else np.full(n, np.nan)
            long.append(long_form(k, np.arange(n), seed=seed, answer_length=L))
            per.append(pd.DataFrame(dict(seed=seed, answer_length=L, prompt=np.arange(n), p_ref=p,
                                         pi_ref_committed=want, z=k.z, seconds_per_prompt=k.seconds_per_prompt)))
            print(f"L={L} seed {seed}: pretraining {pre:.0f} s; {k.n_params} parameters, "
                  f"{k.seconds_per_prompt * 1e3:.1f} ms a prompt; p_ref vs committed pi_ref_a: max |diff| "
                  f"{np.nanmax(np.abs(p - want)):.2e}; kernel correlations off the diagonal: {k.correlation_range()}")
    write_tables(args.results, "small_gpt_kernel", long, per)


if __name__ == "__main__":
    main()
