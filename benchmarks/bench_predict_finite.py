"""Benchmark of ``predict(..., measured=...)`` (the finite-time shared-weights fit) on 10^4 prompts.

    python benchmarks/bench_predict_finite.py [--prompts 10000] [--out docs/results/predict_finite_speed.json]

A synthetic run: ``p_ref ~ Beta(0.6, 1)``, 128 base samples a prompt (``fixed_n``) or 8..512
(``varied_n``: thousands of distinct starts), the one-parameter coupled flow (``rho = 0.5``) to ``t = 2``,
half the prompts measured with 64 samples. Timed in the same run: ``predict`` without ``measured``
(the stationary prediction alone: the baseline) and with it (stationary + the fits of the tabular and
one-parameter models, their bootstraps and the predictive intervals). CPU seconds
(``time.process_time``) beside wall seconds: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from grpo_theory import Objective
from grpo_theory.predict import predict, samples_from_counts
from grpo_theory.predict.coupled import solve_rho
from grpo_theory.predict.field import PromptField


def _dataset(N: int, varied: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    obj = Objective(beta=0.5, group_size=8)
    p = rng.beta(0.6, 1.0, size=N).clip(1e-3, 1 - 1e-3)
    n = rng.integers(8, 513, size=N) if varied else np.full(N, 128)
    c = rng.binomial(n, p)
    after = solve_rho(PromptField(obj, p), 0.5, np.array([0.0, 2.0])).p[-1]
    ids = [f"q{i}" for i in range(N)]
    meas = np.sort(rng.choice(N, N // 2, replace=False))
    base = samples_from_counts(n, c, ids)
    measured = samples_from_counts(np.full(meas.size, 64), rng.binomial(64, after[meas]), [ids[i] for i in meas])
    return obj, base, measured


def _time(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def run(N: int) -> dict:
    res = {}
    for name, varied in (("fixed_n", False), ("varied_n", True)):
        obj, base, measured = _dataset(N, varied)
        _, w0, c0 = _time(lambda: predict(base, obj, progress=False))
        pr, w1, c1 = _time(lambda: predict(base, obj, measured=measured, progress=False))
        fit = pr.finite.summary["fit"]
        res[name] = dict(prompts=N, measured=int(len(measured)), distinct_starts=int(np.unique(pr.table.p_start).size),
                         stationary_cpu_s=round(c0, 2), stationary_wall_s=round(w0, 2),
                         with_measured_cpu_s=round(c1, 2), with_measured_wall_s=round(w1, 2),
                         ratio_cpu=round(c1 / c0, 2), finite_only_cpu_s=round(c1 - c0, 2),
                         fitted_t=round(fit["t"], 4), fitted_rho=round(fit["rho"], 4),
                         t_interval=[round(fit["t_lo"], 4), round(fit["t_hi"], 4)],
                         rho_interval=[round(fit["rho_lo"], 4), round(fit["rho_hi"], 4)], true_t=2.0, true_rho=0.5)
        print(name, res[name], flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=10000)
    ap.add_argument("--out", default="docs/results/predict_finite_speed.json")
    args = ap.parse_args()
    res = run(args.prompts)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
