"""Which committed verdicts of the stationarity check do its window tests (shift, creep) change?

    python experiments/convergence_windows_recheck.py [--out docs/results/convergence_windows_recheck.csv]

The committed tables whose runs' trajectories are committed too are re-checked from those
trajectories, twice: with the window tests off (``windows=None``, the check before them; this must
reproduce the committed status of every row, which shows that rows and trajectories are matched
and the check's other arguments are the study's) and with the defaults. One row per prompt and run:

* free generation, both pools (``free_generation[_greetings].csv``, kind ``final``, from
  ``*_history.csv``: the training reward of each prompt at every step, 8 samples, checked as the
  study does, ``grpo_theory.studies.free._check`` with the binomial noise);
* the SmolLM2 instability runs (``smollm2_instability.csv`` from ``smollm2_instability_trajectories.csv``);
* the TRL SmolLM2 run to stationarity (``trl_smollm2_stationary.csv`` from its trajectory, tail 0.3);
* the SmolLM2 "2*7" slow escape (``smollm2_slow_escape.csv``: no committed status; its final window).

The other tables (``smollm2_validate*.csv``, ``validate_seeds.csv``, ``kl_study.csv``, ...) carry
only the tail line's drift, its standard error and the spread, not the window means: their runs'
logs are not in the repository, so the window tests cannot be made on them here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from grpo_theory.convergence import check_trajectories
from grpo_theory.studies.free import _check

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def _rows(table: str, run: str, prompts, before, after, committed) -> pd.DataFrame:
    n = len(prompts)
    return pd.DataFrame(dict(table=table, run=run, prompt=list(prompts), committed=list(committed),
                             before=before.status.astype(str), after=after.status.astype(str),
                             drift=before.drift, shift=after.shift if after.shift is not None else np.nan,
                             shifted=after.shifted if after.shifted is not None else False,
                             creeping=after.creeping if after.creeping is not None else False,
                             reason=[after.reason(q) for q in range(n)]))


def free_generation(pool: str = "") -> pd.DataFrame:
    """The free-generation study's final rows re-checked from the committed training rewards."""
    table = pd.read_csv(RESULTS / f"free_generation{pool}.csv")
    hist = pd.read_csv(RESULTS / f"free_generation{pool}_history.csv")
    out = []
    for (seed, beta), h in hist.groupby(["seed", "beta"]):
        cols = [c for c in h if c.startswith("p_best_q")]
        rows = h.sort_values("step")[["step", *cols]].to_dict("records")
        final = table[(table.kind == "final") & (table.seed == seed) & (table.beta == beta)].sort_values("prompt")
        before = _check(rows, len(cols), 8, windows=None)
        after = _check(rows, len(cols), 8)
        out.append(_rows(f"free_generation{pool}", f"seed{seed}_beta{beta:g}", final.prompt, before, after,
                         final.conv_status))
    return pd.concat(out, ignore_index=True)


def instability() -> pd.DataFrame:
    """The SmolLM2 instability runs re-checked from their committed trajectories."""
    table = pd.read_csv(RESULTS / "smollm2_instability.csv")
    traj = pd.read_csv(RESULTS / "smollm2_instability_trajectories.csv")
    out = []
    for run, g in table.groupby("run", sort=False):
        g = g.sort_values("prompt")
        wide = traj[traj.run == run].pivot(index="step", columns="question", values="p")[list(g.question)]
        steps, values = wide.index.to_numpy(float), wide.to_numpy(float)
        out.append(_rows("smollm2_instability", run, g.prompt, check_trajectories(steps, values, windows=None),
                         check_trajectories(steps, values), g.status))
    return pd.concat(out, ignore_index=True)


def trl_stationary(tail: float = 0.3) -> pd.DataFrame:
    """The TRL SmolLM2 run to stationarity re-checked from its committed trajectory."""
    table = pd.read_csv(RESULTS / "trl_smollm2_stationary.csv")
    traj = pd.read_csv(RESULTS / "trl_smollm2_stationary_trajectory.csv")
    out = []
    for seed, t in traj.groupby("seed"):
        t = t.sort_values("step")
        steps, values = t.step.to_numpy(float), t[[f"p{i}" for i in range(8)]].to_numpy(float)
        rows = table[table.seed == seed]
        out.append(_rows("trl_smollm2_stationary", f"seed{seed}", range(8),
                         check_trajectories(steps, values, tail=tail, windows=None),
                         check_trajectories(steps, values, tail=tail), rows.conv_status))
    return pd.concat(out, ignore_index=True)


def slow_escape() -> pd.DataFrame:
    """"2*7" at a constant learning rate (no committed status: the check on its whole trajectory)."""
    d = pd.read_csv(RESULTS / "smollm2_slow_escape.csv").sort_values("step")
    steps, values = d.step.to_numpy(float), d.p.to_numpy(float)
    return _rows("smollm2_slow_escape", "seed2_G2_reverse_token", ["2*7"],
                 check_trajectories(steps, values, windows=None), check_trajectories(steps, values), [""])


def recheck() -> pd.DataFrame:
    """Every re-checkable committed row, before and after the window tests."""
    return pd.concat([free_generation(), free_generation("_greetings"), instability(), trl_stationary(),
                      slow_escape()], ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(RESULTS / "convergence_windows_recheck.csv"))
    args = ap.parse_args()
    r = recheck()
    for table, g in r.groupby("table", sort=False):
        known = g.committed.astype(str) != ""
        agree = int((g.before[known] == g.committed[known]).sum())
        changed = g[g.before != g.after]
        print(f"{table}: {len(g)} rows; the check before reproduces {agree} of {int(known.sum())} committed; "
              f"{len(changed)} change: " + ", ".join(f"{a}->{b} {n}" for (a, b), n in
                                                    changed.groupby(["before", "after"]).size().items()))
        for _, c in changed.iterrows():
            print(f"    {c.run} q{c.prompt}: {c.before} -> {c.after}: {c.reason}")
    r.to_csv(args.out, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
