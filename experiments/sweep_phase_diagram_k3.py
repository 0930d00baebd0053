"""A K = 3 phase diagram with grpo_theory.sweep on a Dask LocalCluster: how many stationary points the
direct penalty at G = inf has, over beta x the simplex of pi_ref (issue: runs beyond one machine).

With three outputs stationary_points returns the certified set (issue 21; ``exhaustive`` True):
every case has the best vertex as a limit point, and 110 of the 216 also a stable interior point and
a saddle between it and the vertex.

    python experiments/sweep_phase_diagram_k3.py [--step 0.1]

Rewards (1, 0.5, 0); pi_ref on the interior of a lattice of the simplex; beta in {0.25, 0.5, 1, 1.5,
2, 3}. First times the same 48 cases on a LocalCluster of 1 worker and of 2 workers (one run, one
machine: the speed-up), then runs the whole grid on 2 workers, appending to
docs/results/sweep_phase_k3.csv (re-running resumes), and draws fig_sweep_phase_k3.png.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from dask.distributed import Client, LocalCluster  # noqa: E402

from grpo_theory import plotting  # noqa: E402
from grpo_theory.figures import FigureInputs, phase_diagram_k3  # noqa: E402
from grpo_theory.sweep import cases_from_grid, sweep  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BETAS = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0]


def timed(cases, workers: int) -> float:
    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(lambda: __import__("grpo_theory.solvers"))          # warm the workers' imports
        t0 = time.perf_counter()
        sweep(cases, executor=client.get_executor(), progress=False)
        return time.perf_counter() - t0


def draw(results: Path) -> None:
    """fig_sweep_phase_k3.png: Figure 23 of `grpo-theory figures` (the certified counts; its legend lists only
    the counts that occur), drawn from results/sweep_phase_k3.csv."""
    with matplotlib.rc_context(plotting.STYLE):
        fig = phase_diagram_k3.render(phase_diagram_k3.tables(FigureInputs(results=results)))
        fig.savefig(results / "fig_sweep_phase_k3.png")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--step", type=float, default=0.1)
    args = ap.parse_args()
    grid = {"simplex": {"rewards": [1.0, 0.5, 0.0], "step": args.step},
            "objectives": {"beta": BETAS, "group_size": float("inf"), "penalty": "direct"}}
    cases = cases_from_grid(grid)
    sample = cases[::max(1, len(cases) // 48)][:48]
    t1, t2 = timed(sample, 1), timed(sample, 2)
    print(f"{len(sample)} cases: 1 worker {t1:.1f} s, 2 workers {t2:.1f} s, speed-up {t1 / t2:.2f}x")
    out = ROOT / "docs" / "results" / "sweep_phase_k3.csv"
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
        df = sweep(cases, executor=client.get_executor(), out=out, progress=True)
    (ROOT / "docs" / "results" / "sweep_speedup.json").write_text(json.dumps(
        dict(cases=len(sample), seconds_1_worker=t1, seconds_2_workers=t2, speedup=t1 / t2), indent=1) + "\n")
    df["beta"] = [float(k.split("beta=")[1].split(",")[0]) for k in df.key]
    draw(out.parent)
    print(df.groupby("beta").n_points.value_counts().unstack(fill_value=0).to_string())
    print("stable points per case:", df.n_stable.value_counts().to_dict())


if __name__ == "__main__":
    main()
