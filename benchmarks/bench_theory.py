"""Benchmarks of the theory core, measured side by side in one run (not a timed test).

    python benchmarks/bench_theory.py

1. Exact O(G) binary P_G against Monte Carlo at equal accuracy.
2. stationary_policy: binary question at G = 4096; 5 reward levels at G = 32.
3. Closed forms over a 10^6-point grid.
"""

from __future__ import annotations

import math
import time

import numpy as np

from grpo_theory import (
    Objective,
    Question,
    closed_form,
    monte_carlo_preference,
    reward_preference,
    stationary_policy,
)


def best_of(fn, repeat=5, number=1):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            out = fn()
        times.append((time.perf_counter() - t) / number)
    return min(times), out


def main() -> None:
    rows = []
    # 1. exact vs Monte Carlo at equal accuracy
    G = 64
    q = Question([0.3, 0.7], rewards=[1.0, 0.0])
    obj = Objective(1.0, G)
    pi = np.array([0.3, 0.7])
    t_exact, exact = best_of(lambda: reward_preference(q, pi, obj), number=50)
    # error of the exact path: against the independent O(G) binomial form of the SPEC
    from grpo_theory.preference import binary_preference
    pa, pb = binary_preference(0.3, G)
    err_exact = max(abs(exact[0] - pa), abs(exact[1] - pb))
    # Monte Carlo needs n groups for a standard error of 1e-3 per output: estimate the
    # per-group std once, then time the run with exactly that many groups.
    _, se_pilot = monte_carlo_preference(q, pi, obj, n_groups=2000, seed=0)
    target = 1e-3
    n_needed = int(math.ceil(2000 * (se_pilot.max() / target) ** 2))
    t_mc, (est, se) = best_of(lambda: monte_carlo_preference(q, pi, obj, n_groups=n_needed, seed=1),
                              repeat=3)
    rows.append(("P_G binary G=64: exact O(G)", t_exact, f"error vs binomial form {err_exact:.1e}"))
    rows.append((f"P_G binary G=64: Monte Carlo, {n_needed} groups", t_mc,
                 f"stderr {se.max():.1e}; speed-up of exact {t_mc / t_exact:,.0f}x "
                 f"(and exact is ~{target / max(err_exact, 1e-16):.0e}x more accurate)"))
    # 2. stationary policies
    obj = Objective(0.5, 4096)
    t_bin, sol = best_of(lambda: stationary_policy(q, obj), repeat=10)
    rows.append(("stationary_policy binary, G=4096", t_bin, f"residual {sol.residual:.1e}"))
    q5 = Question([0.1, 0.2, 0.3, 0.2, 0.2], rewards=[1.0, 0.75, 0.5, 0.25, 0.0])
    t_5, sol5 = best_of(lambda: stationary_policy(q5, Objective(0.5, 32)), repeat=3)
    rows.append(("stationary_policy 5 levels, G=32", t_5, f"residual {sol5.residual:.1e}"))
    # 3. closed forms over 10^6 points
    p = np.random.default_rng(0).random(10**6)
    for name, fn in [("Eq. 14 over 10^6 points", lambda: closed_form.binary_pairwise(p, 0.5)),
                     ("Eq. 15 over 10^6 points", lambda: closed_form.binary_large_group(p, 0.5)),
                     ("direct G=2 over 10^6 points", lambda: closed_form.binary_pairwise_direct(p, 0.5))]:
        t, _ = best_of(fn)
        rows.append((name, t, ""))
    # baseline for ratios: one numpy exp over 10^6 points, same run
    t_base, _ = best_of(lambda: np.exp(p))
    rows.append(("baseline: np.exp over 10^6 points", t_base, "reference for ratios"))
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'benchmark'.ljust(width)}{'time':>12}  {'x baseline':>10}  notes")
    for name, t, note in rows:
        print(f"{name.ljust(width)}{t * 1e3:10.3f}ms  {t / t_base:10.3g}  {note}")


if __name__ == "__main__":
    main()
