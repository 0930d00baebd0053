"""Benchmarks of the theory core: every row a ratio against its own baseline, measured in the same run.

    python benchmarks/bench_theory.py [--quick] [--no-figures]

Rows (issue goals in brackets; the baseline is one ``np.exp`` over 10^6 doubles unless stated):

1. first call of exact binary ``reward_preference`` at G = 10^4 in a fresh process   [<= 5x]
2. warm binary ``stationary_policy`` at G = 4096                                      [<= 3x]
3. ``stationary_policy`` with 5 reward levels at G = 32                               [<= 200x]
4. ``import grpo_theory`` against ``import numpy`` (fresh processes)                  [<= 2.5x]
5. ``monte_carlo_preference`` against a plain vectorised Monte Carlo                  [<= 1.5x]
6. ``grpo-theory figures``, CPU seconds of a fresh process                            [<= 25 s]

then the scaling of one exact ``P_G`` evaluation with G and with the number of reward levels L,
as fitted log-log exponents. Each timing is reported as min and median over repeats.
"""

from __future__ import annotations

import argparse
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from grpo_theory import Objective, Question, monte_carlo_preference, reward_preference, stationary_policy

ROOT = Path(__file__).resolve().parents[1]


def timings(fn, repeat: int) -> np.ndarray:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return np.array(out)


def fresh(code: str, repeat: int) -> np.ndarray:
    """Seconds printed by ``code`` run in ``repeat`` fresh interpreters."""
    return np.array([float(subprocess.check_output([sys.executable, "-c", code], cwd=ROOT).decode().split()[-1])
                     for _ in range(repeat)])


def plain_monte_carlo(rewards: np.ndarray, pi: np.ndarray, G: int, n: int, seed: int):
    """The obvious vectorised estimator of P_G(o|pi) for deterministic rewards (scale, ddof 0)."""
    rng = np.random.default_rng(seed)
    K = pi.size
    outs = rng.choice(K, size=(K, n, G - 1), p=pi)
    r = np.concatenate([np.broadcast_to(rewards[:, None, None], (K, n, 1)), rewards[outs]], axis=2)
    centred = r - r.mean(-1, keepdims=True)
    sd = r.std(-1, keepdims=True)
    a = np.where(sd > 0, centred / np.where(sd > 0, sd, 1.0), 0.0)[..., 0]
    return a.mean(1), a.std(1, ddof=1) / math.sqrt(n)


def fit_exponent(x, y) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--no-figures", action="store_true", help="skip row 6 (about 20 s)")
    args = ap.parse_args()
    rep = 3 if args.quick else 7
    x = np.random.default_rng(0).random(10**6)
    base = timings(lambda: np.exp(x), 5 * rep)
    rows = []

    def row(name, t, baseline, goal, note=""):
        rows.append((name, np.min(t), np.median(t), np.min(t) / np.min(baseline),
                     np.median(t) / np.median(baseline), goal, note))

    code = ("import time, numpy as np; from grpo_theory import Question, Objective, reward_preference; "
            "q = Question([0.3, 0.7], rewards=[1, 0]); o = Objective(beta=1.0, group_size=10_000); "
            "pi = np.array([0.3, 0.7]); "
            "t = time.perf_counter(); reward_preference(q, o, pi); print(time.perf_counter() - t)")
    row("first exact binary P_G, G = 10^4, fresh process", fresh(code, rep), base, "<= 5x")

    q = Question([0.3, 0.7], rewards=[1.0, 0.0])
    obj = Objective(beta=0.5, group_size=4096)
    stationary_policy(q, obj)
    row("warm binary stationary_policy, G = 4096", timings(lambda: stationary_policy(q, obj), 2 * rep), base, "<= 3x")

    q5 = Question([0.1, 0.2, 0.3, 0.2, 0.2], rewards=[1.0, 0.75, 0.5, 0.25, 0.0])
    o5 = Objective(beta=0.5, group_size=32)
    stationary_policy(q5, o5)
    row("stationary_policy, 5 levels, G = 32", timings(lambda: stationary_policy(q5, o5), rep),
        base, "<= 200x")

    imp = "import time; t = time.perf_counter(); import {}; print(time.perf_counter() - t)"
    t_np = fresh(imp.format("numpy"), 2 * rep)
    row("import grpo_theory (baseline: import numpy)", fresh(imp.format("grpo_theory"), 2 * rep), t_np, "<= 2.5x")

    pi = np.array([0.3, 0.7])
    mc_obj = Objective(beta=1.0, group_size=64)
    t_plain = timings(lambda: plain_monte_carlo(np.array([1.0, 0.0]), pi, 64, 20_000, 1), rep)
    t_mc = timings(lambda: monte_carlo_preference(q, mc_obj, pi, n_groups=20_000, seed=1), rep)
    row("monte_carlo_preference, G = 64, 20k groups (baseline: plain MC)", t_mc, t_plain, "<= 1.5x")

    if not args.no_figures:
        with tempfile.TemporaryDirectory() as tmp:
            code = ("import resource, sys; from grpo_theory.figures import build_figures; "
                    f"build_figures({tmp!r}, progress=False); r = resource.getrusage(resource.RUSAGE_SELF); "
                    "print(r.ru_utime + r.ru_stime)")
            cpu = fresh(code, 1)
        rows.append(("grpo-theory figures, CPU seconds", cpu.min(), cpu.min(), math.nan, math.nan, "<= 25 s",
                     "absolute seconds"))

    print(f"baseline np.exp over 10^6 doubles: min {base.min() * 1e3:.2f} ms, median {np.median(base) * 1e3:.2f} ms;"
          f" import numpy: median {np.median(t_np) * 1e3:.0f} ms\n")
    w = max(len(r[0]) for r in rows) + 2
    print(f"{'benchmark'.ljust(w)}{'min':>10}{'median':>10}{'x min':>8}{'x median':>9}  goal")
    for name, tmin, tmed, rmin, rmed, goal, note in rows:
        print(f"{name.ljust(w)}{tmin * 1e3:8.1f}ms{tmed * 1e3:8.1f}ms{rmin:8.2f}{rmed:9.2f}  {goal} {note}")

    # ---- scaling of one exact evaluation of P_G with G and with L
    print("\nscaling of one exact P_G evaluation (median of repeats, warm caches)")
    rng = np.random.default_rng(1)
    for L, Gs in [(2, [64, 256, 1024, 4096, 16384]), (3, [64, 256, 1024, 4096]), (4, [16, 32, 64, 128])]:
        levels = np.linspace(0.0, 1.0, L)
        qL = Question(np.full(L, 1.0 / L), rewards=levels)
        piL = rng.dirichlet(np.ones(L) * 3)
        ts = []
        for G in Gs:
            o = Objective(beta=1.0, group_size=G)
            reward_preference(qL, o, piL)
            ts.append(np.median(timings(lambda o=o, qL=qL, piL=piL: reward_preference(qL, o, piL), rep)))
        k = fit_exponent(Gs, ts)
        print(f"  L = {L}: G = {Gs}: " + ", ".join(f"{t * 1e3:.2f}" for t in ts) + f" ms; time ~ G^{k:.2f}")
    G = 32
    Ls = [2, 3, 4, 5, 6]
    ts = []
    for L in Ls:
        qL = Question(np.full(L, 1.0 / L), rewards=np.linspace(0, 1, L))
        piL = np.full(L, 1.0 / L)
        o = Objective(beta=1.0, group_size=G)
        reward_preference(qL, o, piL)
        ts.append(np.median(timings(lambda o=o, qL=qL, piL=piL: reward_preference(qL, o, piL), rep)))
    print(f"  G = {G}: L = {Ls}: " + ", ".join(f"{t * 1e3:.2f}" for t in ts) +
          f" ms; time ~ L^{fit_exponent(Ls, ts):.2f} (count vectors C(G+L-2, L-1) ~ G^(L-1)/(L-1)!)")
    print(f"\n(max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
