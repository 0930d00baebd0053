"""Trainer throughput on CPU, measured side by side in one run (not a timed test).

    python benchmarks/bench_training.py

Reports steps/s and tokens/s of GRPO on the small GPT (16 questions, G = 8,
16 groups per question), and the speed-up of the single-forward path (one pass
scores every answer of a question, and all G samples are drawn from it) over
generating each group member token by token, at equal samples per step; and wall and
CPU time per step with one torch thread against two (the trainer's default is one).
"""

from __future__ import annotations

import copy
import time

import torch

from grpo_theory import Objective
from grpo_theory.training import GRPOConfig, GRPOTrainer, pretrain_reference, synthetic_binary_task


def timed(trainer: GRPOTrainer, steps: int) -> float:
    t = time.perf_counter()
    for _ in range(steps):
        trainer.train_step()
    return (time.perf_counter() - t) / steps


def threads_row(ref, task, threads: int, steps: int = 60) -> tuple[float, float]:
    """(wall, CPU) seconds per step of the default path with ``threads`` torch threads."""
    import resource

    cfg = GRPOConfig(objective=Objective(beta=0.5, group_size=8), groups_per_question=16, steps=10_000,
                     num_threads=threads)
    tr = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, progress=False)
    tr.train_step()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(steps):
        tr.train_step()
    r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return (t1 - t0) / steps, cpu / steps


def main() -> None:
    torch.set_num_threads(1)
    task, freqs = synthetic_binary_task(16, 1, seed=0)
    ref = pretrain_reference(task, freqs, progress=False)
    prompt_len = len(task.prompts[0])
    rows = []
    for sampling, steps in (("score", 60), ("generate", 3)):
        cfg = GRPOConfig(objective=Objective(beta=0.5, group_size=8), groups_per_question=16, sampling=sampling,
                         steps=10_000)
        tr = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, progress=False)
        tr.train_step()                                            # warm-up
        sec = timed(tr, steps)
        samples = task.n_questions * cfg.groups_per_question * cfg.objective.group_size
        # tokens the model actually processes per step: one scoring pass over the prompts (it is
        # both the old policy and the update's forward), plus one prompt-length pass per generated member
        scoring = task.n_questions * prompt_len
        model_tokens = scoring + (samples * prompt_len if sampling == "generate" else 0)
        rows.append((sampling, sec, samples, model_tokens))
    base = rows[0][1]
    print(f"{'path':<26}{'s/step':>9}{'steps/s':>9}{'sampled answers/s':>19}{'model tokens/s':>16}{'x slower':>10}")
    for sampling, sec, samples, tokens in rows:
        name = "single forward (score)" if sampling == "score" else "generate each member"
        print(f"{name:<26}{sec:9.4f}{1 / sec:9.2f}{samples / sec:19.0f}{tokens / sec:16.0f}{sec / base:10.1f}")
    print(f"\nspeed-up of the single-forward path: {rows[1][1] / rows[0][1]:.0f}x "
          f"({rows[0][2]} samples per step, {task.n_questions} questions, G = 8)")
    one, two = threads_row(ref, task, 1), threads_row(ref, task, 2)
    print("\ntorch threads   wall ms/step   CPU ms/step")
    for n, (wall, cpu) in ((1, one), (2, two)):
        print(f"{n:>13}{wall * 1e3:15.2f}{cpu * 1e3:14.2f}")
    print(f"two threads: {two[0] / one[0]:.2f}x the wall time and {two[1] / one[1]:.2f}x the CPU of one")


if __name__ == "__main__":
    main()
