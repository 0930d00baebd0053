"""Held-out validation of the finite-time shared-weights predictor on the SmolLM2 free-generation runs.

For every run (pool x beta x seed) and every measured point (steps 10, 25, 50, 100 with 200 samples a
prompt; the final step with 1,600), each model is fitted on one half of the prompts (the study's committed
``half`` column: A/B alternately in order of ``p_ref``) at that point only, and predicts the other half; the
halves are then swapped, so every prompt is predicted once, from a fit that never saw it. Models:

* ``kernel``: the shared-weights flow with the measured kernel (``score = first_logit``, the kernel of
  ``z = logit P(correct)``); only the clock is fitted (:func:`grpo_theory.predict.calibrate.fit_flow`);
* ``kernel_krige``: ``kernel`` plus the fit half's logit residuals carried to the other half by conditioning a
  Gaussian process whose correlations are the normalised kernel (``experiments/kernel_krige.py``; the start's
  and the measurement's binomial variances as noise, one amplitude chosen by leave-one-out on the fit half);
* ``kernel_first_logprob``, ``kernel_prefix_logprob``: the same with the other committed kernel scores
  (sensitivity);
* ``coupled``: ``K = (1 - rho) I + rho 11^T/N``, rho and the clock fitted (:func:`fit_flows`);
* ``tabular``: the tabular flow (``rho = 0``) on a fitted clock;
* ``shift``: a logit shift of ``p_ref`` refitted at that point (:func:`fit_shift`);
* ``no_change``: ``p_ref``.

The objective is the study's (``Objective(beta, group_size=8, penalty="reverse")``, sequence level, the
trainer's group-normalised advantage). Starts: :func:`start_logits` of the 1,600 base samples, their
one-sigma posterior quantiles carried through the flow (:func:`start_quantiles`).

Scores (:func:`grpo_theory.predict.scoring.score_table`): MAE and Brier over the 24 (or 8) held-out
predictions, with a 95% bootstrap over prompts (2,000 resamples, the same for every model). Floors:
``floor_meas`` = ``mean_j E|Bin(m_j, q_j)/m_j - q_j|`` at ``q_j = (k_j + 1/2)/(m_j + 1)`` (the measurement's
binomial noise only); ``floor`` adds ``p_ref``'s noise carried as a logit shift: the predictor's error
``e_j ~ N(0, s_j^2)``, ``s_j = q_j (1 - q_j) / sqrt(n_ref p_ref (1 - p_ref))``, and
``floor = mean_j E|Bin(m_j, q_j)/m_j - q_j - e_j|`` (exact over the binomial, closed form over the normal).
Target (per run and point): ``mae(model) - floor <= 0.7 (min(mae_shift, mae_tabular) - floor)``.

Writes ``docs/results/predict_validation.csv`` (one row per run x point x model; ``rho``, ``t``, ``shift_c``:
the mean over the two halves' fits), ``docs/results/predict_validation_prompts.csv`` (every held-out
prediction) and ``docs/img/predict_validation.png``. Deterministic (seeds fixed). About 2-4 CPU-minutes.

Usage: ``python experiments/predict_validation.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, gammaln, logit
from scipy.stats import norm

from grpo_theory import Objective
from grpo_theory.predict.calibrate import fit_flow, fit_flows, fit_shift, start_logits, start_quantiles
from grpo_theory.predict.field import PromptField
from grpo_theory.predict.scoring import score_table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_krige import krige, logit_measurement  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "docs" / "results"
POOLS = {"main": "free_generation.csv", "greetings": "free_generation_greetings.csv"}
SCORES = ("first_logit", "first_logprob", "prefix_logprob")
N_BOOT_FIT = 50
N_BOOT_SCORE = 2000
TARGET = 0.7


def floors(k, m, p_ref, n_ref) -> tuple[float, float]:
    """``(floor_meas, floor)``: the MAE an exact predictor shows from the measurement's binomial noise, and with
    ``p_ref``'s noise carried as a logit shift (see the module docstring)."""
    k, m, p_ref, n_ref = (np.asarray(v, dtype=float) for v in (k, m, p_ref, n_ref))
    q = (k + 0.5) / (m + 1.0)
    pr = np.clip(p_ref, 0.5 / n_ref, 1 - 0.5 / n_ref)
    s = q * (1 - q) / np.sqrt(n_ref * pr * (1 - pr))
    fm, ff = [], []
    for qq, mm, ss in zip(q, m, s):
        kk = np.arange(int(mm) + 1, dtype=float)
        pmf = np.exp(gammaln(mm + 1) - gammaln(kk + 1) - gammaln(mm - kk + 1) + kk * np.log(qq)
                     + (mm - kk) * np.log1p(-qq))
        a = kk / mm - qq
        fm.append(float(pmf @ np.abs(a)))
        # E|a - e|, e ~ N(0, s^2):  s sqrt(2/pi) exp(-a^2 / 2 s^2) + a (1 - 2 Phi(-a / s))
        ea = ss * np.sqrt(2 / np.pi) * np.exp(-a ** 2 / (2 * ss ** 2)) + a * (1 - 2 * norm.cdf(-a / ss))
        ff.append(float(pmf @ ea))
    return float(np.mean(fm)), float(np.mean(ff))


def load_kernels() -> dict:
    kern = pd.read_csv(RES / "free_generation_kernel.csv")
    out = {}
    for (pool, sc), g in kern.groupby(["pool", "score"]):
        n = int(g.prompt_i.max()) + 1
        K = np.zeros((n, n))
        K[g.prompt_i.to_numpy(int), g.prompt_j.to_numpy(int)] = g.K.to_numpy(float)
        out[(pool, sc)] = K
    return out


def run_point(fld, z0, sd, K, pt, half, n_ref, c_ref) -> dict:
    """Predictions of every prompt at one point, each from the fit on the other half."""
    N = z0.size
    k = np.rint(pt.measured.to_numpy(float) * pt.measured_n.to_numpy(float)).astype(int)
    m = pt.measured_n.to_numpy(int)
    preds = {name: np.full(N, np.nan) for name in
             ("kernel", "kernel_krige", "kernel_first_logprob", "kernel_prefix_logprob", "coupled", "tabular", "shift",
              "no_change")}
    info = {"rho": np.full(N, np.nan), "t_coupled": np.full(N, np.nan), "t_kernel": np.full(N, np.nan),
            "t_tabular": np.full(N, np.nan), "shift_c": np.full(N, np.nan), "s2_krige": []}
    for this in ("A", "B"):
        test = np.flatnonzero(half == this)
        train = np.flatnonzero(half != this)
        kw = dict(start_sd=sd, z0=z0, n_boot=N_BOOT_FIT, seed=0)
        ff = fit_flows(fld, train, k[train], m[train], **kw)
        preds["coupled"][test] = ff["coupled"].p[test]
        preds["tabular"][test] = ff["tabular"].p[test]
        info["rho"][test] = ff["coupled"].rho
        info["t_coupled"][test] = ff["coupled"].t
        info["t_tabular"][test] = ff["tabular"].t
        for sc in SCORES:
            fk = fit_flow(fld, train, k[train], m[train], kernel=K[sc], **kw)
            preds["kernel" if sc == "first_logit" else f"kernel_{sc}"][test] = fk.p[test]
            if sc == "first_logit":
                info["t_kernel"][test] = fk.t
                y, v = logit_measurement(k[train], m[train], n_ref[train], c_ref[train])
                delta, s2 = krige(K[sc], logit(fk.p), y, v, train, test)
                preds["kernel_krige"][test] = expit(logit(fk.p[test]) + delta)
                info["s2_krige"].append(s2)
        c = fit_shift(z0[train], k[train], m[train])
        preds["shift"][test] = expit(z0[test] + c)
        info["shift_c"][test] = c
        preds["no_change"][test] = expit(z0[test])
    return preds, info, k, m


def main() -> int:
    t_start = time.process_time()
    kernels = load_kernels()
    rows, per_prompt = [], []
    for pool, fname in POOLS.items():
        d = pd.read_csv(RES / fname).sort_values(["seed", "beta", "step", "prompt"])
        prompts = np.sort(d.prompt.unique())
        N = prompts.size
        assert np.array_equal(prompts, np.arange(N)), "prompt indices must be 0..N-1 (the kernel's order)"
        K = {sc: kernels[(pool, sc)] for sc in SCORES}
        for (beta, seed), run in d.groupby(["beta", "seed"]):
            obj = Objective(beta=float(beta), group_size=8, penalty="reverse")
            base = run[run.kind == "final"].sort_values("prompt")
            n_ref = base.p_ref_n.to_numpy(int)
            c_ref = np.rint(base.p_ref.to_numpy(float) * n_ref).astype(int)
            z0 = start_logits(n_ref, c_ref)
            sd = start_quantiles(n_ref, c_ref)
            fld = PromptField(obj, expit(z0))
            half = base.half.to_numpy(str)
            for (kind, step), pt in run.groupby(["kind", "step"]):
                pt = pt.sort_values("prompt")
                preds, info, k, m = run_point(fld, z0, sd, K, pt, half, n_ref, c_ref)
                sc = score_table(preds, k, m, n_boot=N_BOOT_SCORE, seed=0, reference="shift")
                f_meas, f_all = floors(k, m, base.p_ref.to_numpy(float), n_ref)
                better = min(float(sc.set_index("model").at["shift", "mae"]),
                             float(sc.set_index("model").at["tabular", "mae"]))
                for _, r in sc.iterrows():
                    name = r.model
                    extra = dict(rho=np.nan, t=np.nan, shift_c=np.nan)
                    if name == "coupled":
                        extra.update(rho=float(np.mean(info["rho"])), t=float(np.mean(info["t_coupled"])))
                    elif name == "kernel":
                        extra["t"] = float(np.mean(info["t_kernel"]))
                    elif name == "kernel_krige":
                        extra.update(t=float(np.mean(info["t_kernel"])), s2_krige=float(np.mean(info["s2_krige"])),
                                     s2_krige_zero=int(np.sum(np.array(info["s2_krige"]) == 0)))
                    elif name == "tabular":
                        extra["t"] = float(np.mean(info["t_tabular"]))
                    elif name == "shift":
                        extra["shift_c"] = float(np.mean(info["shift_c"]))
                    excess = r.mae - f_all
                    rows.append(dict(pool=pool, beta=float(beta), seed=int(seed), kind=kind, step=int(step),
                                     measured_n=int(m[0]), prompts=N, model=name, mae=r.mae, mae_lo=r.mae_lo,
                                     mae_hi=r.mae_hi, brier=r.brier, brier_lo=r.brier_lo, brier_hi=r.brier_hi,
                                     mae_minus_shift=r.mae_minus_shift, mae_minus_shift_lo=r.mae_minus_shift_lo,
                                     mae_minus_shift_hi=r.mae_minus_shift_hi, floor_meas=f_meas, floor=f_all,
                                     excess=excess, better_baseline_excess=better - f_all,
                                     ratio=excess / (better - f_all) if better > f_all else np.nan,
                                     meets_target=bool(excess <= TARGET * (better - f_all)), **extra))
                for name, q in preds.items():
                    for i in range(N):
                        per_prompt.append(dict(pool=pool, beta=float(beta), seed=int(seed), kind=kind, step=int(step),
                                               prompt=i, model=name, predicted=float(q[i]), measured=k[i] / m[i]))
                print(f"{pool} beta={beta:g} seed={seed} step={step}: " + ", ".join(
                    f"{r.model} {r.mae:.3f}" for _, r in sc.iterrows()) + f"; floor {f_all:.3f}", flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(RES / "predict_validation.csv", index=False, float_format="%.6g")
    pd.DataFrame(per_prompt).to_csv(RES / "predict_validation_prompts.csv", index=False, float_format="%.6g")
    figure(pd.DataFrame(per_prompt))
    print(f"CPU {time.process_time() - t_start:.0f} s")
    return 0


def figure(pp: pd.DataFrame) -> None:
    """Measured against predicted P(correct) per held-out prompt at every point, one panel per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = ["kernel", "coupled", "tabular", "shift"]
    fig, axes = plt.subplots(2, 4, figsize=(14, 7), sharex=True, sharey=True)
    steps = sorted(pp.step.unique())
    cmap = plt.get_cmap("viridis")
    for row, pool in enumerate(("main", "greetings")):
        for col, name in enumerate(models):
            ax = axes[row, col]
            sel = pp[(pp.pool == pool) & (pp.model == name)]
            for kind, mark in (("intermediate", "o"), ("final", "s")):
                s = sel[sel.kind == kind]
                ax.scatter(s.predicted, s.measured, s=8 if kind == "intermediate" else 14, marker=mark, alpha=0.6,
                           c=[cmap(steps.index(v) / max(1, len(steps) - 1)) for v in s.step])
            mae = float(np.mean(np.abs(sel.predicted - sel.measured)))
            ax.plot([0, 1], [0, 1], "k-", lw=0.6)
            ax.set_title(f"{'yes/no' if pool == 'main' else 'greetings'}: {name} (MAE {mae:.3f})", fontsize=9)
            if row == 1:
                ax.set_xlabel("predicted P(correct), held out")
            if col == 0:
                ax.set_ylabel("measured P(correct)")
    fig.suptitle("SmolLM2 free generation: every run and point (colour: training step, squares: final)", fontsize=10)
    fig.tight_layout()
    (ROOT / "docs" / "img").mkdir(exist_ok=True)
    fig.savefig(ROOT / "docs" / "img" / "predict_validation.png", dpi=110)


if __name__ == "__main__":
    sys.exit(main())
