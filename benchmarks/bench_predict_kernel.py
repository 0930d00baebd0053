"""Cost per prompt of the finite-time fit with a measured kernel, against the one-parameter model in the same run.

    python benchmarks/bench_predict_kernel.py [--prompts 250 500 1000] [--out docs/results/predict_kernel_speed.json]

The synthetic run of ``bench_predict_finite.py`` (``p_ref ~ Beta(0.6, 1)``, 128 base samples a prompt, the
one-parameter flow with ``rho = 0.5`` to ``t = 2``, half the prompts measured with 64 samples), at a few
sizes ``N``. Each size times :func:`~grpo_theory.predict.finite.predict_finite` twice: the one-parameter
model alone (the baseline: the tabular and coupled fits) and the same with a measured kernel ``K = G G^T``
(what ``measure_kernel`` returns: one gradient row per prompt), ``G`` of shape ``N x d`` with ``d = 2N``
(full rank: a model with more parameters than prompts) and ``d = 32`` (rank 32: prompts sharing few
directions). The kernel fit adds one eigendecomposition (``N^3``) and integrations whose Jacobian is
``r x r`` (``r`` the kernel's rank). CPU seconds (``time.process_time``) beside wall seconds; the ratio and the
kernel's extra CPU per prompt are what to read on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from grpo_theory import Objective
from grpo_theory.predict import samples_from_counts
from grpo_theory.predict.coupled import solve_rho
from grpo_theory.predict.field import PromptField
from grpo_theory.predict.finite import predict_finite


def _dataset(N: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    obj = Objective(beta=0.5, group_size=8)
    p = rng.beta(0.6, 1.0, size=N).clip(1e-3, 1 - 1e-3)
    c = rng.binomial(128, p)
    after = solve_rho(PromptField(obj, p), 0.5, np.array([0.0, 2.0])).p[-1]
    ids = [f"q{i}" for i in range(N)]
    meas = np.sort(rng.choice(N, N // 2, replace=False))
    base = samples_from_counts(np.full(N, 128), c, ids)
    measured = samples_from_counts(np.full(meas.size, 64), rng.binomial(64, after[meas]), [ids[i] for i in meas])
    return obj, base, measured, rng


def _time(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def run(sizes) -> dict:
    res = {}
    for N in sizes:
        obj, base, measured, rng = _dataset(N)
        _, w0, c0 = _time(lambda: predict_finite(base, obj, measured))
        row = dict(prompts=N, measured=int(len(measured)), one_parameter_cpu_s=round(c0, 3),
                   one_parameter_wall_s=round(w0, 3))
        for name, d in (("full_rank", 2 * N), ("rank_32", 32)):
            G = rng.standard_normal((N, d)) / np.sqrt(d)
            K = G @ G.T
            _, w1, c1 = _time(lambda: predict_finite(base, obj, measured, kernel=K))
            row[name] = dict(rank=int(min(N, d)), with_kernel_cpu_s=round(c1, 3), with_kernel_wall_s=round(w1, 3),
                             ratio_cpu=round(c1 / c0, 2),
                             kernel_cpu_ms_per_prompt=round(1000 * (c1 - c0) / N, 3))
        res[str(N)] = row
        print(N, row, flush=True)
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, nargs="+", default=[250, 500, 1000], help="the sizes N to time")
    ap.add_argument("--out", default="docs/results/predict_kernel_speed.json", help="JSON written")
    opts = vars(ap.parse_args(argv))
    Path(opts["out"]).write_text(json.dumps(run(opts["prompts"]), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
