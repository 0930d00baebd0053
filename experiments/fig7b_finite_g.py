"""Finite-G Figure 7(b): how many stationary points the direct penalty has over (beta, pi_ref(a)),
for a binary question (rewards 1, 0) at G = 8 and G = 64, certified (issue 21).

    python experiments/fig7b_finite_g.py [--n 40]

Each cell is counted twice, on independent paths: the certified set of
:func:`grpo_theory.solvers.certify.certified_stationary_points` (interval enclosures + a uniqueness
test per root; ``exhaustive`` True when proven) and the exhaustive two-class scan of
:func:`grpo_theory.stationary_points` (a grid of class logits refined by Brent's method). Writes
docs/results/fig7b_finite_g.csv: G, beta, pi_ref_a, n_certified, certified (exhaustive), n_scan,
n_stable_scan, seconds.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from grpo_theory import Objective, Question, stationary_points
from grpo_theory.solvers.certify import certified_stationary_points

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40, help="grid points per axis")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "fig7b_finite_g.csv"))
    args = ap.parse_args()
    rows = []
    for G in (8, 64):
        for beta in np.geomspace(0.05, 20.0, args.n):
            for p in np.linspace(0.005, 0.995, args.n):
                q = Question([float(p), 1.0 - float(p)], rewards=[1.0, 0.0])
                obj = Objective(beta=float(beta), group_size=G, penalty="direct")
                t0 = time.perf_counter()
                cert = certified_stationary_points(q, obj, time_budget=30.0)
                scan = stationary_points(q, obj)
                rows.append(dict(G=G, beta=float(beta), pi_ref_a=float(p), n_certified=len(cert.roots),
                                 certified=bool(cert.exhaustive), n_scan=len(scan),
                                 n_stable_scan=len(scan.stable), seconds=time.perf_counter() - t0))
    df = pd.DataFrame(rows)
    df.to_csv(args.out, index=False, float_format="%.6g")
    print(df.groupby(["G", "n_certified"]).size().to_string())
    print(f"certified: {int(df.certified.sum())}/{len(df)}; certified count == scan count: "
          f"{int((df.n_certified == df.n_scan).sum())}/{len(df)}")


if __name__ == "__main__":
    main()
