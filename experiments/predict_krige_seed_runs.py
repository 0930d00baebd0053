"""``kernel_krige`` on the small GPT's repeated training seeds (the runs of the seed-to-seed floor).

    OMP_NUM_THREADS=1 python experiments/predict_krige_seed_runs.py      # about a CPU-minute

Reads ``docs/results/small_gpt_seed_runs.csv`` (tasks 0 and 1 x training seeds 0-4 x beta 0.5 / 0.05,
``experiments/small_gpt_seed_runs.py``) and the step-0 plain kernel of each task
(``small_gpt_trajectory_kernels.csv``; the task's reference, as ``predict_seed_floor.py`` takes it). At every
run and step, as ``predict_validation_gpt.py`` does: the ``kernel`` flow is fitted on one half from the
200-sample counts, and ``kernel_krige`` corrects it on the other half (``experiments/kernel_krige.py``). The
refitted ``kernel`` predictions are checked against the committed ``small_gpt_seed_runs_predictions.csv``
(they must agree: same fit, same data). Writes ``docs/results/predict_krige_seed_runs.csv`` (one row per task,
seed, beta, step and prompt: ``kernel`` (refitted), ``kernel_krige``, the exact ``p``, the chosen ``s2``).
Deterministic.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import logit

from grpo_theory import Objective
from grpo_theory.predict.calibrate import fit_flow
from grpo_theory.predict.field import PromptField

sys.path.insert(0, str(Path(__file__).resolve().parent))

from predict_validation_gpt import N_BOOT_FIT, load_kernels, with_krige  # noqa: E402

RES = Path(__file__).resolve().parents[1] / "docs" / "results"


def main() -> int:
    t0 = time.process_time()
    runs = pd.read_csv(RES / "small_gpt_seed_runs.csv")
    stored = pd.read_csv(RES / "small_gpt_seed_runs_predictions.csv")
    stored = stored[stored.model == "kernel"].set_index(["task", "seed", "beta", "step", "prompt"]).predicted
    kernels = load_kernels(RES / "small_gpt_trajectory_kernels.csv")
    out = []
    for (task, seed, beta), run in runs.groupby(["task", "seed", "beta"]):
        task, seed, beta = int(task), int(seed), float(beta)
        K = kernels[(task, beta, 0, "plain")]
        base = run[run.step == 0].sort_values("prompt")
        p_ref = base.p_ref.to_numpy(float)
        z0 = logit(p_ref)
        fld = PromptField(Objective(beta=beta, group_size=8), p_ref)
        half = base.half.to_numpy(str)
        for step, pt in run[run.step > 0].groupby("step"):
            pt = pt.sort_values("prompt")
            k, m = pt.k.to_numpy(int), pt.m.to_numpy(int)
            kern, krig, s2s = np.empty(k.size), np.empty(k.size), np.empty(k.size)
            for this in ("A", "B"):
                test, train = np.flatnonzero(half == this), np.flatnonzero(half != this)
                fk = fit_flow(fld, train, k[train], m[train], kernel=K, z0=z0, n_boot=N_BOOT_FIT, seed=0)
                kern[test] = fk.p[test]
                krig[test], s2s[test] = with_krige(fk.p, K, k, m, train, test)
            want = stored.loc[[(task, seed, beta, int(step), j) for j in pt.prompt]].to_numpy()
            # the committed run fitted with the kernel in memory, this one with the CSV's 8 digits: 1e-5
            assert np.allclose(kern, want, rtol=0, atol=1e-5), (task, seed, beta, step, np.abs(kern - want).max())
            out.append(pd.DataFrame(dict(task=task, seed=seed, beta=beta, step=int(step), prompt=pt.prompt.to_numpy(),
                                         kernel=kern, kernel_krige=krig, p=pt.p.to_numpy(float), s2=s2s)))
        print(f"task {task} seed {seed} beta {beta:g}: done", flush=True)
    pd.concat(out, ignore_index=True).to_csv(RES / "predict_krige_seed_runs.csv", index=False, float_format="%.8g")
    print(f"CPU {time.process_time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
