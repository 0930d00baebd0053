"""Coverage of the finite-time predictor's intervals on the small-GPT trajectories (held-out halves).

    OMP_NUM_THREADS=1 python experiments/predict_intervals_gpt.py      # about a CPU-minute

Reads ``docs/results/small_gpt_trajectories.csv`` (``experiments/small_gpt_trajectories.py``: 5 seeds x beta
0.5 / 0.05, 16 binary questions trained by one small GPT, a 200-sample count ``k`` of each question's
P(correct) at steps 5 ... 800). As in ``experiments/predict_validation_gpt.py``, at every run and step the
one-parameter coupled flow is fitted on one half of the questions (the committed ``half``; 8 questions) and
predicts the other; the halves are swapped. For each held-out question: is its measured fraction ``k/m``
inside

* the model's own predictive interval (:func:`~grpo_theory.predict.calibrate.predictive_interval`: the
  fit's bootstrap and binomial sampling of ``m = 200``; the start ``p_ref`` is exact here), and
* the split-conformal interval (:mod:`grpo_theory.predict.conformal`): the 8 fitted questions split at
  random 4 / 4, the fit to 4 predicting the other 4, their signed logit residuals setting the offsets,

at levels 0.9 and 0.5. With 4 calibration questions a 90% conformal interval cannot be finite (it needs 19):
it is ``[0, 1]``, and its coverage 1 says nothing; at 0.5 it needs 3. Writes
``docs/results/predict_intervals_gpt.csv`` (one row per beta, level and interval: held-out questions,
coverage, mean width). Deterministic.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from grpo_theory import Objective
from grpo_theory._numerics import logit
from grpo_theory.predict.calibrate import fit_flows, predictive_interval
from grpo_theory.predict.conformal import calibration_split, conformal_interval, conformal_offsets
from grpo_theory.predict.field import PromptField
from grpo_theory.predict.samples import PredictWarning

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "docs" / "results"
LEVELS = (0.9, 0.5)
N_BOOT = 200


def intervals_at_point(fld: PromptField, z0, k, m, half, seed: int) -> list:
    """Per held-out question and level: inside the model's interval, inside the conformal one, their widths."""
    out = []
    f = k / m
    for this in ("A", "B"):
        test = np.flatnonzero(half == this)
        train = np.flatnonzero(half != this)
        split = calibration_split(train.size, seed=seed)
        fit = fit_flows(fld, train, k[train], m[train], z0=z0, n_boot=N_BOOT, seed=seed, split=split)["coupled"]
        full_m = np.full(z0.size, int(m[0]))
        for level in LEVELS:
            lo, hi = predictive_interval(fit, full_m, level=level, seed=seed + 1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PredictWarning)     # 4 calibration questions at 90%: said in the docs
                offs = conformal_offsets(fit.p_split[train[~split]], k[train[~split]], m[train[~split]], level=level)
            clo, chi = conformal_interval(fit.p, offs, full_m)
            for j in test:
                out.append(dict(level=level, model_in=bool(lo[j] <= f[j] <= hi[j]), model_width=hi[j] - lo[j],
                                conformal_in=bool(clo[j] <= f[j] <= chi[j]), conformal_width=chi[j] - clo[j],
                                conformal_finite=bool(np.isfinite(offs.q_lo) and np.isfinite(offs.q_hi))))
    return out


def main() -> int:
    t0 = time.process_time()
    traj = pd.read_csv(RES / "small_gpt_trajectories.csv")
    rows = []
    for (seed, beta), run in traj.groupby(["seed", "beta"]):
        base = run[run.step == 0].sort_values("prompt")
        p_ref = base.p_ref.to_numpy(float)
        fld = PromptField(Objective(beta=float(beta), group_size=8), p_ref)
        half = base.half.to_numpy(str)
        for step, pt in run[run.step > 0].groupby("step"):
            pt = pt.sort_values("prompt")
            k, m = pt.k.to_numpy(float), pt.m.to_numpy(float)
            for r in intervals_at_point(fld, logit(p_ref), k, m, half, int(seed)):
                rows.append(dict(seed=int(seed), beta=float(beta), step=int(step), **r))
        print(f"seed {seed} beta {beta:g} done", flush=True)
    df = pd.DataFrame(rows)
    summary = []
    for (beta, level), g in df.groupby(["beta", "level"]):
        for name in ("model", "conformal"):
            summary.append(dict(beta=beta, level=level, interval=name, heldout=len(g),
                                coverage=float(g[f"{name}_in"].mean()), mean_width=float(g[f"{name}_width"].mean()),
                                finite_share=float(g.conformal_finite.mean()) if name == "conformal" else 1.0))
    out = pd.DataFrame(summary)
    out.to_csv(RES / "predict_intervals_gpt.csv", index=False, float_format="%.6g")
    print(out.to_string(index=False))
    print(f"CPU {time.process_time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
