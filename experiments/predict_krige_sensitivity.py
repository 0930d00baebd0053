"""How much of ``kernel_krige``'s shortfall is its choice of ``s^2``: the same correction with ``s^2`` chosen by the
marginal likelihood of the fit half's residuals, averaged over the grid with weights proportional to that likelihood
(``average``: the posterior mean of the correction under a uniform prior on the grid's 41 values; a rule tried
after the two others were seen), and with the best ``s^2`` of the grid for each half chosen on the
held-out half itself (an oracle: a bound on what any rule choosing one ``s^2`` per half from the grid could give,
not a predictor).

    OMP_NUM_THREADS=1 python experiments/predict_krige_sensitivity.py      # about a CPU-minute and a half

Same runs, halves, fits and scores as the two validations (``predict_validation.py``: SmolLM2, scored against
the measured fraction; ``predict_validation_gpt.py``: small GPT, against the exact P(correct)); the committed
rule (leave-one-out density, ``loo``) is recomputed beside the two others as a check. Writes
``docs/results/predict_krige_sensitivity.csv``: one row per run x point, ``study``, the run's keys, ``floor``,
``better`` (the lower MAE of shift and tabular), the MAE of ``kernel``, ``loo``, ``marginal``, ``average`` and
``oracle``.
Deterministic.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from grpo_theory import Objective
from grpo_theory.predict.calibrate import fit_flow, start_logits, start_quantiles
from grpo_theory.predict.field import PromptField

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_krige import S2_GRID, krige, logit_measurement, normalised  # noqa: E402

RES = Path(__file__).resolve().parents[1] / "docs" / "results"


def corrections(K, zh, y, v, train, test) -> tuple[dict, float, float, np.ndarray]:
    """The held-out logit correction at every ``s^2`` of the grid, the leave-one-out and marginal-likelihood
    choices, and the likelihood-weighted average correction."""
    C = normalised(K)
    C_ff, C_tf = C[np.ix_(train, train)], C[np.ix_(test, train)]
    r = y - zh[train]
    d = {s2: s2 * C_tf @ np.linalg.solve(s2 * C_ff + np.diag(v), r) for s2 in S2_GRID}   # s^2 = 0: zero

    def marginal(s2):
        A = s2 * C_ff + np.diag(v)
        return -0.5 * (r @ np.linalg.solve(A, r) + np.linalg.slogdet(A)[1])

    ml = np.array([marginal(s) for s in S2_GRID])
    w = np.exp(ml - ml.max())
    avg = sum(wi * d[s2] for wi, s2 in zip(w / w.sum(), S2_GRID))
    return d, krige(K, zh, y, v, train, test)[1], float(S2_GRID[int(np.argmax(ml))]), avg


def point(fit, K, k, m, half, truth, extra=None) -> dict:
    """MAE of the three rules at one run x point; ``fit(train)`` gives the kernel flow's P(correct)."""
    N = k.size
    pred = {name: np.empty(N) for name in ("loo", "marginal", "average", "oracle")}
    for this in ("A", "B"):
        test, train = np.flatnonzero(half == this), np.flatnonzero(half != this)
        zh = logit(fit(train))
        y, v = logit_measurement(k[train], m[train], *([] if extra is None else [e[train] for e in extra]))
        d, loo, marg, avg = corrections(K, zh, y, v, train, test)
        pred["loo"][test], pred["marginal"][test] = expit(zh[test] + d[loo]), expit(zh[test] + d[marg])
        pred["average"][test] = expit(zh[test] + avg)
        best = min(S2_GRID, key=lambda s2: np.sum(np.abs(expit(zh[test] + d[s2]) - truth[test])))
        pred["oracle"][test] = expit(zh[test] + d[best])       # the held-out half's own best: an upper bound
    return {name: float(np.mean(np.abs(q - truth))) for name, q in pred.items()}


def small_gpt() -> list:
    import predict_validation_gpt as V

    traj = pd.read_csv(RES / "small_gpt_trajectories.csv")
    kernels = V.load_kernels(RES / "small_gpt_trajectory_kernels.csv")
    val = pd.read_csv(RES / "predict_validation_gpt.csv")
    mae = val[val.scope == "run"].set_index(["seed", "beta", "step", "model"]).mae
    rows = []
    for (seed, beta), run in traj.groupby(["seed", "beta"]):
        base = run[run.step == 0].sort_values("prompt")
        p_ref = base.p_ref.to_numpy(float)
        fld = PromptField(Objective(beta=float(beta), group_size=8), p_ref)
        K = kernels[(int(seed), float(beta), 0, "plain")]
        for step, pt in run[run.step > 0].groupby("step"):
            pt = pt.sort_values("prompt")
            k, m = pt.k.to_numpy(int), pt.m.to_numpy(int)

            def fit(train):
                return fit_flow(fld, train, k[train], m[train], kernel=K, z0=logit(p_ref), n_boot=V.N_BOOT_FIT,
                                seed=0).p

            key = (seed, beta, step)
            rows.append(dict(study="small_gpt", pool="", seed=seed, beta=beta, kind="", step=step, floor=0.0,
                             better=min(mae[(*key, "shift")], mae[(*key, "tabular")]), kernel=mae[(*key, "kernel")],
                             **point(fit, K, k, m, base.half.to_numpy(str), pt.p.to_numpy(float))))
    return rows


def smollm2() -> list:
    import predict_validation as V

    kernels = V.load_kernels()
    val = pd.read_csv(RES / "predict_validation.csv").set_index(["pool", "beta", "seed", "kind", "step", "model"])
    rows = []
    for pool, fname in V.POOLS.items():
        data = pd.read_csv(RES / fname)
        K = kernels[(pool, "first_logit")]
        for (beta, seed), run in data.groupby(["beta", "seed"]):
            base = run[run.kind == "final"].sort_values("prompt")
            n_ref = base.p_ref_n.to_numpy(int)
            c_ref = np.rint(base.p_ref.to_numpy(float) * n_ref).astype(int)
            z0, sd = start_logits(n_ref, c_ref), start_quantiles(n_ref, c_ref)
            fld = PromptField(Objective(beta=float(beta), group_size=8, penalty="reverse"), expit(z0))
            for (kind, step), pt in run.groupby(["kind", "step"]):
                pt = pt.sort_values("prompt")
                m = pt.measured_n.to_numpy(int)
                k = np.rint(pt.measured.to_numpy(float) * m).astype(int)

                def fit(train):
                    return fit_flow(fld, train, k[train], m[train], kernel=K, start_sd=sd, z0=z0,
                                    n_boot=V.N_BOOT_FIT, seed=0).p

                key = (pool, beta, seed, kind, step)
                rows.append(dict(study="smollm2", pool=pool, seed=seed, beta=beta, kind=kind, step=step,
                                 floor=val.loc[(*key, "shift")].floor,
                                 better=min(val.loc[(*key, "shift")].mae, val.loc[(*key, "tabular")].mae),
                                 kernel=val.loc[(*key, "kernel")].mae,
                                 **point(fit, K, k, m, base.half.to_numpy(str), k / m, extra=(n_ref, c_ref))))
    return rows


def main() -> int:
    t0 = time.process_time()
    out = pd.DataFrame(smollm2() + small_gpt())
    out.to_csv(RES / "predict_krige_sensitivity.csv", index=False, float_format="%.6g")
    for study, g in out.groupby("study"):
        ok = g.better > g.floor
        print(study, {n: int(((g[n] - g.floor <= 0.7 * (g.better - g.floor)) & ok).sum())
                      for n in ("kernel", "loo", "marginal", "average", "oracle")}, "of", int(ok.sum()))
    print(f"CPU {time.process_time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
