"""Time of a certified stationary_points for K = 3 classes, as a ratio against np.exp over 1e6 doubles.

Run: PYTHONPATH=. python benchmarks/certify_bench.py [--g64]   (issue 21 target: <= 2000x at G = 16 and at G = inf)
"""

from __future__ import annotations

import math
import time

import numpy as np

from grpo_theory import Objective, Question
from grpo_theory.solvers.certify import certified_stationary_points


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(with_g64: bool = False) -> None:
    x = np.random.default_rng(0).standard_normal(1_000_000)
    base = best_of(lambda: np.exp(x), 20)
    print(f"np.exp over 1e6 doubles: {base * 1e3:.2f} ms")
    cases = [((0.6, 0.2, 0.2), 2.0), ((0.1, 0.8, 0.1), 2.0), ((0.4, 0.35, 0.25), 0.5)]
    for G in (16, math.inf) + ((64,) if with_g64 else ()):
        for pen in ("reverse", "direct"):
            for pi_ref, beta in cases:
                q = Question(list(pi_ref), rewards=[1.0, 0.5, 0.0])
                obj = Objective(beta=beta, group_size=G, penalty=pen)
                res = certified_stationary_points(q, obj, time_budget=120.0)      # warm the caches
                t = best_of(lambda q=q, obj=obj: certified_stationary_points(q, obj, time_budget=120.0), 3)
                print(f"G={G!s:>4} {pen:>7} pi_ref={pi_ref} beta={beta}: {len(res.roots)} point(s), "
                      f"exhaustive={res.exhaustive}, {res.n_boxes} boxes, {t * 1e3:8.1f} ms = {t / base:7.0f}x np.exp")


if __name__ == "__main__":
    import sys

    main(with_g64="--g64" in sys.argv)
