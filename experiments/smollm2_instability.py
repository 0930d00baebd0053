"""The SmolLM2 instability of issue 26, measured: how often it happens, what moves together, and
whether a smaller step removes it.

    grpo-theory fetch-model                          # once
    python experiments/smollm2_instability.py        # ~15 min on a quiet 2-core machine; resumes

The issue's case is multiple choice, G = 8, beta = 0.5, reverse (k3) penalty, sequence level, Adam
lr 1e-3, 300 steps, seed 7: "capital of Japan" and "legs of a spider" collapsed together at step
~150 and were still recovering at step 300. Here the same configuration runs at seeds 4-9 (seed 4
collapsed at step 1 in the five-seed study) with Adam at lr 1e-3 (300 steps), at lr 3e-4 (600
steps), and at lr 1e-3 after a linear warm-up over 30 steps, for exactly those steps (no
stationarity extension: the trajectory itself is the object of study).
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
#: (learning rate, steps, warm-up steps): the issue's step; one 10/3 times smaller for 2x the steps; the
#: issue's step after a linear warm-up over the first 10% of the steps (TRL's `warmup_steps`)
PASSES = ((1e-3, 300, 0), (3e-4, 600, 0), (1e-3, 300, 30))


def main(argv=None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[4, 5, 6, 7, 8, 9])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "smollm2_instability"))
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--analyse-only", action="store_true", help="only analyse the finished runs in --out")
    args = ap.parse_args(argv)
    for lr, steps, warmup in [] if args.analyse_only else PASSES:
        run_smollm_study(args.out, model_dir=args.model_dir, seeds=tuple(args.seeds), steps=steps,
                         configs=[CONFIG], task_names=("multiple_choice",), learning_rate=lr,
                         workers=args.workers, max_steps=None, warmup_steps=warmup)
    tables, trajectories = [], []
    for run, metrics, rows in smollm_runs(Path(args.out)):
        t = pd.DataFrame(analyse_run(run, metrics, rows))
        t["seed"], t["learning_rate"], t["steps"] = rows.seed.iloc[0], rows.learning_rate.iloc[0], rows.steps.iloc[0]
        t["warmup_steps"] = int(rows.get("warmup_steps", pd.Series([0])).iloc[0])
        t["error"] = t.measured - t.predicted
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
    for (lr, warmup), g in table.groupby(["learning_rate", "warmup_steps"]):
        per_run = g.groupby("run").agg(fall=("run_drop", "first"), worst=("error", lambda e: e.abs().max()))
        print(f"Adam lr {lr:g}, warm-up {warmup}: {int((per_run.fall > DROP_TOL).sum())} of {len(per_run)} runs "
              f"with a mean-reward fall > {DROP_TOL}, {int((per_run.worst > 0.5).sum())} with a prompt > 0.5 "
              f"from its prediction; MAE {g.error.abs().mean():.4f}; "
              f"not converged {int((g.status != 'converged').sum())}")
    return table


if __name__ == "__main__":
    main()
