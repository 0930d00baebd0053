"""The small-GPT validation over many seeds, learning rates, and questions trained jointly or alone.

    python experiments/validate_seeds.py [--seeds 0 1 2 3 4] [--resume]      # about 25 min on one core

1. Every configuration of ``grpo-theory validate`` (12 gated + 5 measured) for each seed: the
   seed draws the questions, pretrains the reference and drives the trainer's sampling.
2. Learning rate: the two G = 64 direct configurations that failed with seeds 1 and 3, and one
   that never failed, at Adam step sizes 1e-3 and 3e-4 (steps scaled so lr x steps stays >= 1.2).
3. Alone: the same G = 64 configurations with each question trained by its own model (no
   shared weights), for the first three seeds.

Writes docs/results/validate_seeds.csv (one row per seed, configuration, prediction, mode,
learning rate and question) and docs/results/validate_seeds_summary.csv (see ``summarise``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from grpo_theory.convergence import summary_columns
from grpo_theory.studies.small import run_validation

ROOT = Path(__file__).resolve().parents[1]
LR_CONFIGS = ("G64_beta0.5_direct", "G64_beta1_direct", "G8_beta0.5_reverse")
ALONE_CONFIGS = ("G64_beta0.5_direct", "G64_beta1_direct")
NEAR = 0.05          # a measurement within this of a stable point has reached it
STATIONARY: float | None = None     # --until-stationary FACTOR (issue 26)


def _run(out: Path, seed: int, tag: dict, resume: bool, **kw) -> pd.DataFrame:
    d = out / "_".join(f"{k}{v}" for k, v in tag.items()) / f"seed{seed}"
    if STATIONARY:        # run_validation's default is 800 steps
        kw.update(until_stationary=True, max_steps=int(STATIONARY * kw.get("steps", 800)))
    if resume and (d / "done").exists():
        res = pd.read_csv(d / "results.csv")
    else:
        run_validation(d, seed=seed, progress=False, resume=resume, figures=False, **kw)
        res = pd.read_csv(d / "results.csv")
        (d / "done").write_text("ok")
    return res.assign(seed=seed, **tag)


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per configuration, prediction, mode and learning rate, over seeds x questions.

    ``mae_*``: the per-seed MAE's mean, between-seed SE and max; ``p90``/``max``: of |error| over
    every (seed, question); ``reach_*``: fraction of (seed, question) whose measurement is within
    ``NEAR`` of the predicted stable point, of another stable point, or of none; ``tau``: the
    between-run standard deviation of the error beyond the batch-means SE (method of moments);
    ``beyond_3se_*``: fraction of points more than 3 SE from the prediction, with the batch-means
    SE alone and with ``sqrt(se^2 + tau^2)``.
    """
    out = []
    for key, g in rows.groupby(["config", "prediction", "mode", "learning_rate"], sort=False):
        err = g.error.abs()
        per_seed = g.groupby("seed").error.apply(lambda e: e.abs().mean())
        se = g.measured_se.replace(np.inf, np.nan)
        tau2 = max(0.0, float(g.error.var(ddof=1) - np.nanmean(se ** 2))) if len(g) > 1 else 0.0
        honest = np.sqrt(se ** 2 + tau2)
        near_pred = (g.measured - g.predicted).abs() <= NEAR
        near_other = ~near_pred & ((g.measured - g.nearest_stable).abs() <= NEAR) & ~g.same_basin
        out.append(dict(zip(["config", "prediction", "mode", "learning_rate"], key),
                        gated=bool(g.gated.iloc[0]), seeds=g.seed.nunique(), points=len(g),
                        mae_mean=per_seed.mean(), mae_between_seed_se=per_seed.std(ddof=1) / np.sqrt(len(per_seed)),
                        mae_max=per_seed.max(), p90=err.quantile(0.9), max=err.max(),
                        seeds_meeting_target=int(((g.assign(a=err).groupby("seed").a.mean() <= 0.01)
                                                  & (g.assign(a=err).groupby("seed").a.max() <= 0.05)).sum()),
                        reach_predicted=near_pred.mean(), reach_other_stable=near_other.mean(),
                        reach_none=1 - near_pred.mean() - near_other.mean(),
                        multistable_points=int((g.n_stable_points > 1).sum()),
                        tau=np.sqrt(tau2), mean_batch_means_se=np.nanmean(se),
                        beyond_3se_batch_means=float((err > 3 * se).mean()),
                        beyond_3se_with_between_run=float((err > 3 * honest).mean()),
                        **(summary_columns(g, label=lambda r: f"seed {r['seed']} q{r['question']}")
                           if "conv_status" in g else {})))                        # issue 26
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--alone-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", default=str(ROOT / "runs" / "validate_seeds"))
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--until-stationary", type=float, default=None, metavar="FACTOR",
                    help="train each run to stationarity, up to FACTOR x its steps (issue 26)")
    args = ap.parse_args()
    global STATIONARY
    STATIONARY = args.until_stationary
    out = Path(args.out)
    t0 = time.perf_counter()
    parts = []
    for seed in args.seeds:
        parts.append(_run(out, seed, dict(mode="joint", learning_rate=3e-3), args.resume))
        print(f"seed {seed}: all configurations, {time.perf_counter() - t0:.0f} s", flush=True)
    for lr, steps in ((1e-3, 1200), (3e-4, 4000)):
        for seed in args.seeds:
            parts.append(_run(out, seed, dict(mode="joint", learning_rate=lr), args.resume, learning_rate=lr,
                              steps=steps, configs=LR_CONFIGS))
        print(f"lr {lr:g}: {time.perf_counter() - t0:.0f} s", flush=True)
    for seed in args.alone_seeds:
        parts.append(_run(out, seed, dict(mode="alone", learning_rate=3e-3), args.resume, configs=ALONE_CONFIGS,
                          alone=True))
        print(f"alone, seed {seed}: {time.perf_counter() - t0:.0f} s", flush=True)
    rows = pd.concat(parts, ignore_index=True)
    cols = ["seed", "config", "question", "predicted", "measured"]
    rows = rows[cols + [c for c in rows.columns if c not in cols]]
    results = ROOT / "docs" / "results"
    rows.to_csv(results / "validate_seeds.csv", index=False, float_format="%.6g")
    summary = summarise(rows)
    summary.to_csv(results / "validate_seeds_summary.csv", index=False, float_format="%.6g")
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(summary[summary.prediction == "trainer"].drop(columns=["prediction"]).to_string(
            index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
