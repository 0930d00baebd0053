"""Benchmark of ``grpo_theory.predict`` on 10^4 prompts: a ratio against a baseline measured in the same run.

    python benchmarks/bench_predict.py [--prompts 10000] [--out docs/results/predict_speed.json]

The baseline is the obvious loop without sharing: for every prompt, ``stationary_policy`` at ``p_hat``
and at both interval ends and ``stationary_points`` at ``p_hat`` (the work ``predict`` does per distinct
value), timed on 200 random prompts and scaled to the dataset. Two datasets, the same objective:

* ``fixed_n``: every prompt has n = 64 samples (at most 65 distinct p_hat: every solve is exact);
* ``varied_n``: n drawn from 8..512, so thousands of distinct p_hat (the checked spline grid).

CPU seconds (``time.process_time``) are reported besides wall seconds: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from grpo_theory import Objective, closed_form, stationary_points, stationary_policy
from grpo_theory.predict import binary_question, binomial_interval, predict, samples_from_counts


def _baseline_per_prompt(n, c, obj, sample: int, rng) -> float:
    idx = rng.choice(n.size, size=min(sample, n.size), replace=False)
    lo, hi = binomial_interval(c[idx], n[idx])
    t = time.process_time()
    for i, j in enumerate(idx):
        p = max(c[j] / n[j], 1e-12)
        for v in (p, max(lo[i], 1e-12), hi[i]):
            if v < 1:
                stationary_policy(binary_question(v), obj)
        if p < 1:
            stationary_points(binary_question(p), obj)
    return (time.process_time() - t) / idx.size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=10_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    obj = Objective(beta=0.5, group_size=2)
    p_true = rng.beta(0.7, 0.7, size=args.prompts)
    rows = {}
    for name, n in (("fixed_n", np.full(args.prompts, 64)), ("varied_n", rng.integers(8, 513, size=args.prompts))):
        c = rng.binomial(n, p_true)
        per_prompt = _baseline_per_prompt(n, c, obj, 200, rng)
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pr = predict(samples_from_counts(n, c), obj, progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        inner = (c > 0) & (c < n)
        err = float(np.max(np.abs(pr.table.pred[inner] - closed_form.binary_pairwise(c[inner] / n[inner], 0.5))))
        rows[name] = dict(prompts=args.prompts, distinct_p_hat=int(np.unique(c / n).size),
                          predict_wall_s=round(wall, 2), predict_cpu_s=round(cpu, 2),
                          baseline_cpu_s_estimated=round(per_prompt * args.prompts, 1),
                          speedup_cpu=round(per_prompt * args.prompts / cpu, 1),
                          max_error_vs_eq14=err, grid=pr.summary["x_grid"], flags_grid=pr.summary["flags_grid"])
        print(name, rows[name], flush=True)
        if name == "fixed_n":                        # the finite-time part: flows and a fitted clock
            wall, cpu = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = predict(samples_from_counts(n, c), obj, progress=False,
                                 fit=(100, float(pr.table.pred.mean() + pr.table.p_ref.mean()) / 2), steps=[100, 1000])
            rows["fixed_n_with_clock"] = dict(prompts=args.prompts, predict_wall_s=round(time.perf_counter() - wall, 2),
                                              predict_cpu_s=round(time.process_time() - cpu, 2),
                                              clock=fitted.summary["clock"])
            print("fixed_n_with_clock", rows["fixed_n_with_clock"], flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
