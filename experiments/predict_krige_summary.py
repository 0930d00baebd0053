"""``kernel_krige`` against ``kernel`` and the better baseline, from the validations' committed tables.

    python experiments/predict_krige_summary.py        # a few CPU-seconds; committed docs/results data only

Reads every held-out prediction of the two validations (``predict_validation_prompts.csv``: SmolLM2, scored
against the measured fraction; ``predict_validation_gpt_prompts.csv``: small GPT, scored against the exact
P(correct)) and their score tables (the better baseline of each run x point: the lower MAE of ``shift`` and
``tabular``). For each group of run x points (SmolLM2: pool x intermediate/final points, as the validation's
table; small GPT: beta x step, as its table) it gives the mean MAE of ``kernel``, ``kernel_krige`` and the
better baseline, and the paired differences ``kernel_krige - kernel`` and ``kernel_krige - better`` of the mean
absolute error with 95% bootstrap intervals over prompts (SmolLM2: a prompt keeps all its runs and points,
2,000 resamples; small GPT: the 80 questions of the 5 seeds, each a different task, 2,000 resamples), and
how many run x points meet the 0.7x target (the validations' verdict columns). Writes
``docs/results/predict_krige.csv``. Deterministic.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

RES = Path(__file__).resolve().parents[1] / "docs" / "results"
N_BOOT = 2000
BASELINES = ["shift", "tabular"]


def better_errors(pp: pd.DataFrame, table: pd.DataFrame, keys: list, y: str) -> pd.DataFrame:
    """Per held-out prediction: ``|kernel - y|``, ``|kernel_krige - y|`` and ``|better - y|`` (the baseline with the
    lower MAE at that run x point)."""
    wide = pp.pivot_table(index=keys + ["prompt"], columns="model", values="predicted").reset_index()
    truth = pp[pp.model == "kernel"].set_index(keys + ["prompt"])[y]
    wide[y] = truth.loc[pd.MultiIndex.from_frame(wide[keys + ["prompt"]])].to_numpy()
    best = (table[table.model.isin(BASELINES)].sort_values("mae").groupby(keys).head(1).set_index(keys).model)
    wide["better_model"] = best.loc[pd.MultiIndex.from_frame(wide[keys])].to_numpy()
    out = wide[keys + ["prompt"]].copy()
    for name in ("kernel", "kernel_krige"):
        out[name] = np.abs(wide[name] - wide[y])
    pick = np.where(wide.better_model == "shift", wide["shift"], wide["tabular"])
    out["better"] = np.abs(pick - wide[y])
    return out


def paired(err: pd.DataFrame, cluster: str, rng) -> dict:
    """Mean errors and the paired differences with a 95% cluster bootstrap."""
    units = err[cluster].unique()
    idx = {u: np.flatnonzero(err[cluster].to_numpy() == u) for u in units}
    e = err[["kernel", "kernel_krige", "better"]].to_numpy(float)
    point = e.mean(axis=0)
    boot = np.empty((N_BOOT, 2))
    for b in range(N_BOOT):
        rows = np.concatenate([idx[u] for u in units[rng.integers(0, units.size, units.size)]])
        mb = e[rows].mean(axis=0)
        boot[b] = mb[1] - mb[0], mb[1] - mb[2]
    lo, hi = np.quantile(boot, 0.025, axis=0), np.quantile(boot, 0.975, axis=0)
    return dict(mae_kernel=point[0], mae_krige=point[1], mae_better=point[2],
                krige_minus_kernel=point[1] - point[0], krige_minus_kernel_lo=lo[0], krige_minus_kernel_hi=hi[0],
                krige_minus_better=point[1] - point[2], krige_minus_better_lo=lo[1], krige_minus_better_hi=hi[1])


def smollm2(rng) -> list:
    table = pd.read_csv(RES / "predict_validation.csv")
    pp = pd.read_csv(RES / "predict_validation_prompts.csv")
    keys = ["pool", "beta", "seed", "kind", "step"]
    err = better_errors(pp, table, keys, "measured")
    verdict = table.set_index(keys + ["model"])
    rows = []
    for (pool, kind), g in err.groupby(["pool", "kind"]):
        g = g.assign(unit=g.prompt)
        pts = g[keys].drop_duplicates()
        v = {name: verdict.loc[[(*r, name) for r in pts.itertuples(index=False)]]
             for name in ("kernel", "kernel_krige")}
        defined = v["kernel"].better_baseline_excess.to_numpy() > 0
        rows.append(dict(study="smollm2", group=f"{pool}, {kind}", points=len(pts), defined=int(defined.sum()),
                         meets_kernel=int(v["kernel"].meets_target.to_numpy()[defined].sum()),
                         meets_krige=int(v["kernel_krige"].meets_target.to_numpy()[defined].sum()),
                         **paired(g, "unit", rng)))
    return rows


def small_gpt(rng) -> list:
    table = pd.read_csv(RES / "predict_validation_gpt.csv")
    runs = table[table.scope == "run"]
    pp = pd.read_csv(RES / "predict_validation_gpt_prompts.csv")
    keys = ["seed", "beta", "step"]
    err = better_errors(pp, runs, keys, "p")
    verdict = runs.set_index(keys + ["model"])
    rows = []
    for (beta, step), g in err.groupby(["beta", "step"]):
        g = g.assign(unit=g.seed * 100 + g.prompt)
        pts = g[keys].drop_duplicates()
        v = {name: verdict.loc[[(*r, name) for r in pts.itertuples(index=False)]]
             for name in ("kernel", "kernel_krige")}
        rows.append(dict(study="small_gpt", group=f"beta {beta:g}, step {int(step)}", points=len(pts),
                         defined=len(pts), meets_kernel=int(v["kernel"].meets_target.sum()),
                         meets_krige=int(v["kernel_krige"].meets_target.sum()),
                         meets_kernel_sampled=int((v["kernel"].meets_target_sampled == True).sum()),  # noqa: E712
                         meets_krige_sampled=int((v["kernel_krige"].meets_target_sampled == True).sum()),  # noqa: E712
                         **paired(g, "unit", rng)))
    return rows


def main() -> int:
    rng = np.random.default_rng(0)
    out = pd.DataFrame(smollm2(rng) + small_gpt(rng))
    out.to_csv(RES / "predict_krige.csv", index=False, float_format="%.6g")
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(out.drop(columns=[c for c in out if c.endswith(("_lo", "_hi"))]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
