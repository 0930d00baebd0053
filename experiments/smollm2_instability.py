"""The SmolLM2 instability of issue 26, measured: how often it happens, what moves together, and
whether a smaller step removes it.

    grpo-theory fetch-model                          # once
    python experiments/smollm2_instability.py        # ~15 min on a quiet 2-core machine; resumes

The issue's case is multiple choice, G = 8, beta = 0.5, reverse (k3) penalty, sequence level, Adam
lr 1e-3, 300 steps, seed 7: "capital of Japan" and "legs of a spider" collapsed together at step
~150 and were still recovering at step 300. Here the same configuration runs at seeds 5-9 with
Adam at lr 1e-3 (300 steps) and at lr 3e-4 (600 steps: the same number of lr x steps), for exactly
those steps (no stationarity extension: the trajectory itself is the object of study).
Each run's log goes through experiments/convergence_analysis.py (which prompts fell with the run's
mean reward, which move together, whether ``dynamics.grpo_steps`` at the run's fitted step size
falls too, the clip fraction, k3 and Adam's step size at the fall).

Writes docs/results/smollm2_instability.csv (one row per run and prompt: the analysis' columns plus
the optimiser's settings) and docs/results/smollm2_instability_trajectories.csv (run, step,
question, p: every logged P(correct), for the figure).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from grpo_theory.convergence import DROP_TOL
from grpo_theory.studies.smollm2 import run_smollm_study

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from convergence_analysis import analyse_run, smollm_runs  # noqa: E402

CONFIG = "G8_beta0.5_reverse"
#: (learning rate, steps): the issue's step and one 10/3 times smaller for 2x the steps
PASSES = ((1e-3, 300), (3e-4, 600))


def main(argv=None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[5, 6, 7, 8, 9])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "smollm2_instability"))
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    args = ap.parse_args(argv)
    for lr, steps in PASSES:
        run_smollm_study(args.out, model_dir=args.model_dir, seeds=tuple(args.seeds), steps=steps,
                         configs=[CONFIG], task_names=("multiple_choice",), learning_rate=lr,
                         workers=args.workers, max_steps=None)
    tables, trajectories = [], []
    for run, metrics, rows in smollm_runs(Path(args.out)):
        t = pd.DataFrame(analyse_run(run, metrics, rows))
        t["seed"], t["learning_rate"], t["steps"] = rows.seed.iloc[0], rows.learning_rate.iloc[0], rows.steps.iloc[0]
        tables.append(t)
        cols = [c for c in metrics if c.startswith("p_best_q")]
        long = metrics.melt(id_vars="step", value_vars=cols, var_name="q", value_name="p")
        long["question"] = long.q.str[8:].astype(int).map(dict(enumerate(rows.question)))
        long["run"] = run
        trajectories.append(long[["run", "step", "question", "p"]])
    table = pd.concat(tables, ignore_index=True)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    table.to_csv(results / "smollm2_instability.csv", index=False, float_format="%.6g")
    pd.concat(trajectories, ignore_index=True).to_csv(results / "smollm2_instability_trajectories.csv",
                                                      index=False, float_format="%.6g")
    runs = table.drop_duplicates("run")
    for lr, g in runs.groupby("learning_rate"):
        fell = g[g.run_drop > DROP_TOL]
        print(f"lr {lr:g}: {len(fell)} of {len(g)} runs with a mean-reward fall > {DROP_TOL} "
              f"(largest {g.run_drop.max():.3f}); prompts not converged at the end: "
              f"{int((table[table.learning_rate == lr].status != 'converged').sum())}")
    return table


if __name__ == "__main__":
    main()
