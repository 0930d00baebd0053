"""The finite-time predictor on published per-problem before/after-RL counts (issue 42).

Datasets (folders of ``docs/results/published/``, each with ``base.csv``, ``after.csv`` and the run's objective;
source and transcription checks in each README):

* ``simplerl_zoo_qwen25_7b_math500`` (default): Qwen2.5-7B -> SimpleRL-Zoo on MATH500, 500 problems x 128 samples;
  the objective as verl overrides (``recipe.sh``: GRPO, G = 8, ``low_var_kl`` loss 1e-4, entropy 1e-3);
* ``qwen3_06b_grpo_gsm8k_train256``: a Qwen3-0.6B SFT policy -> TRL GRPO on 256 GSM8K training problems, 32 samples
  before and 16 after; the objective as TRL ``GRPOConfig`` fields (``recipe.yaml``: G = 16, ``beta = 0``, DAPO loss).
  ``beta = 0`` is the unregularised objective: no stationary policy (the stationary column is the flow's limit),
  the flows integrated at ``beta = 0`` itself; ``diagnostics.json`` records how far the flows at a small stand-in
  ``beta = 1e-6`` (``BETA_STANDIN``) are from them.

1. ``predict(base, framework=..., config=recipe, measured=after, holdout=0.5, seed=0)`` -- what
   ``grpo-theory predict BASE --framework FRAMEWORK RECIPE --measured AFTER --holdout 0.5`` prints: the table of
   models (no change, logit shift, tabular flow, one-parameter coupled flow, stationary point) on the held-out half
   of the problems, MAE and Brier with 95% bootstrap intervals (2,000 resamples over problems, the same for
   every model; ``mae_minus_shift``: the paired difference). -> ``scores.csv``, ``predictions.csv``.
2. The same split repeated with seeds 0-19 (:func:`grpo_theory.predict.finite.predict_finite`, the code path of
   the CLI) -> ``splits.csv`` (one row per seed x model, with the fitted ``t``, ``rho`` and shift ``c``).
3. Why the models do what they do, on the same 20 splits and on all problems:

   * ``profile.csv``: problems binned by the base's measured P(correct); per bin the measured change of
     ``logit P`` (Jeffreys' ``(c + 1/2)/(n + 1)`` on both sides) against what the fitted shift, tabular and
     coupled flows predict (fitted on all problems), and the share of problems RL made worse;
   * problems RL makes worse: measured ``c_after/m < c_base/n`` (raw), and significantly (one-sided Fisher exact
     test, 5%); each model's held-out MAE on them and on the others;
   * two references that are no project models: ``affine`` (``logit p -> a logit p + b``, two parameters,
     fitted by binomial likelihood on the fitting half) and ``isotonic_in_sample`` (the non-decreasing map of
     the base's frequency that minimises the squared error *on the held-out problems themselves*: a lower bound
     on the Brier of any monotone map of the base's counts, not a prediction);
   * the coverage of the 90% predictive intervals of the flows fitted on the fitting half, on the held-out
     measurements: the model's own (``pred_finite_lo, pred_finite_hi``) and the split-conformal one
     (``pred_finite_conformal_lo, pred_finite_conformal_hi``, calibrated within the fitting half), with their
     mean widths.

   -> ``diagnostics.json`` (``all<N>``: the fits on all N problems).

Deterministic. About 5 CPU-minutes for 500 problems (each fit integrates the flow on an 11-point rho grid with a
200-replicate bootstrap).

Usage: ``python experiments/published_counts.py [--dataset FOLDER]`` (a folder of ``docs/results/published/``
holding ``base.csv``, ``after.csv`` and ``recipe.sh`` (verl overrides) or ``recipe.yaml`` (TRL ``GRPOConfig``
fields); default the SimpleRL-Zoo one).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit, logit
from scipy.stats import fisher_exact

from grpo_theory.predict import predict, read_samples, samples_from_counts
from grpo_theory.predict.finite import predict_finite
from grpo_theory.predict.scoring import score_table

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "docs" / "results" / "published"
DIR = PUBLISHED / "simplerl_zoo_qwen25_7b_math500"
#: A small ``beta`` whose flows ``diagnostics.json`` compares with a recipe's ``beta = 0``.
BETA_STANDIN = 1e-6
SEEDS = range(int(__import__("os").environ.get("H42B_SEEDS", 20)))
BINS = [0.0, 1e-9, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 1 - 1e-9, 1.0 + 1e-9]
BIN_LABELS = ["0", "(0, 0.05)", "[0.05, 0.2)", "[0.2, 0.4)", "[0.4, 0.6)", "[0.6, 0.8)", "[0.8, 0.95)", "[0.95, 1)",
              "1"]


def _jeffreys_logit(c, n):
    return logit((np.asarray(c, float) + 0.5) / (np.asarray(n, float) + 1.0))


def _affine_fit(z0, k, m):
    """``(a, b)`` maximising the binomial likelihood of ``expit(a z0 + b)``."""
    def nll(ab):
        q = np.clip(expit(ab[0] * z0 + ab[1]), 1e-12, 1 - 1e-12)
        return -float(np.sum(k * np.log(q) + (m - k) * np.log1p(-q)))
    return minimize(nll, x0=[1.0, 0.0], method="Nelder-Mead", options=dict(xatol=1e-8, fatol=1e-10)).x


def _isotonic(x, y):
    """Least-squares non-decreasing fit of ``y`` on ``x`` (pool adjacent violators; equal ``x`` pooled)."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    blocks = []                                   # [sum, weight, first x]
    for xi, yi in zip(xs, ys):
        if blocks and blocks[-1][2] == xi:
            blocks[-1][0] += yi
            blocks[-1][1] += 1
        else:
            blocks.append([yi, 1.0, xi])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, w, _ = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w
    fitted = np.concatenate([np.full(int(w), s / w) for s, w, _ in blocks])
    out = np.empty_like(fitted)
    out[order] = fitted
    return out


def main() -> None:
    global DIR
    import argparse

    ap = argparse.ArgumentParser(description="the finite-time predictor on a published before/after-RL dataset")
    ap.add_argument("--dataset", default=DIR.name,
                    help=f"a folder of {PUBLISHED.relative_to(ROOT)} with base.csv, after.csv and recipe.sh (verl "
                         f"overrides) or recipe.yaml (TRL GRPOConfig fields); default {DIR.name}")
    DIR = PUBLISHED / ap.parse_args().dataset
    started = time.perf_counter()
    base, after = read_samples(DIR / "base.csv"), read_samples(DIR / "after.csv")
    n, c = base.n.astype(float), base.correct.astype(float)
    m, k = after.n.astype(float), after.correct.astype(float)
    assert list(base.prompt_ids) == list(after.prompt_ids)

    # 1. the CLI's table
    framework, config, beta_recipe = _recipe(DIR)
    pr = predict(DIR / "base.csv", framework=framework, config=config, measured=DIR / "after.csv",
                 holdout=0.5, seed=0)
    obj = pr.objective
    scores = pr.finite.scores.copy()
    scores.insert(0, "seed", 0)
    scores.round(6).to_csv(DIR / "scores.csv", index=False)
    cols = ["prompt_id", "n", "correct", "measured_n", "measured_correct", "heldout", "p_start", "pred",
            "pred_shift", "pred_tabular", "pred_coupled", "pred_finite", "pred_finite_lo", "pred_finite_hi",
            "pred_finite_conformal_lo", "pred_finite_conformal_hi"]
    pr.table[cols].round(6).to_csv(DIR / "predictions.csv", index=False)
    hold = pr.summary["finite"]["holdout"]
    print(scores.to_string(index=False))

    # 2. twenty splits, 3. references on the same splits
    z0 = logit(np.asarray(pr.table.p_start, float))
    worse_raw = k < c * (m / n)
    worse_sig = np.array([fisher_exact([[k[i], m[i] - k[i]], [c[i], n[i] - c[i]]], alternative="less")[1] < 0.05
                          for i in range(c.size)])
    rows, subset_rows, iso_rows, coverage, conformal = [], [], [], [], []
    for seed in SEEDS:
        fin = predict_finite(base, obj, after, holdout=0.5, seed=seed)
        held = fin.table.heldout.to_numpy()
        fit_on = ~held
        hf = fin.summary["holdout"]
        a, b = _affine_fit(z0[fit_on], k[fit_on], m[fit_on])
        extra = score_table({"affine": expit(a * z0[held] + b)}, k[held], m[held], seed=seed)
        table = pd.concat([fin.scores.drop(columns=["floor_best"], errors="ignore"), extra], ignore_index=True)
        for _, r in table.iterrows():
            fit = hf["fits"].get(r.model, {})
            rows.append(dict(seed=seed, model=r.model, prompts=int(r.prompts), mae=r.mae, mae_lo=r.mae_lo,
                             mae_hi=r.mae_hi, brier=r.brier, brier_lo=r.brier_lo, brier_hi=r.brier_hi,
                             mae_minus_shift=r.get("mae_minus_shift", np.nan),
                             mae_minus_shift_lo=r.get("mae_minus_shift_lo", np.nan),
                             mae_minus_shift_hi=r.get("mae_minus_shift_hi", np.nan), floor=r.floor,
                             t=fit.get("t", np.nan), rho=fit.get("rho", np.nan),
                             shift_c=hf["shift"] if r.model == "shift" else np.nan,
                             affine_a=a if r.model == "affine" else np.nan,
                             affine_b=b if r.model == "affine" else np.nan))
        # held-out predictions of this split's fits (the library's, recomputed where they are closed forms)
        f_meas = k[held] / m[held]
        preds = {"no_change": expit(z0[held]), "shift": expit(z0[held] + hf["shift"]),
                 "affine": expit(a * z0[held] + b)}
        kept_fit = _fit_on_kept(base, obj, after, held, seed)
        lo, hi = (np.asarray(kept_fit[col], float)[held] for col in ("pred_finite_lo", "pred_finite_hi"))
        clo, chi = (np.asarray(kept_fit[col], float)[held]
                    for col in ("pred_finite_conformal_lo", "pred_finite_conformal_hi"))
        coverage.append(float(np.mean((lo <= f_meas) & (f_meas <= hi))))
        conformal.append(dict(coverage=float(np.mean((clo <= f_meas) & (f_meas <= chi))),
                              width=float(np.mean(chi - clo)), model_width=float(np.mean(hi - lo))))
        for name in ("tabular", "coupled"):
            preds[name] = np.asarray(kept_fit[f"pred_{name}"], float)[held]
            lib = float(fin.scores.set_index("model").mae[name])
            assert abs(float(np.mean(np.abs(preds[name] - f_meas))) - lib) < 1e-9, (seed, name)
        for name, q in preds.items():
            for label, sel in (("worse_sig", worse_sig[held]), ("not_worse_sig", ~worse_sig[held])):
                subset_rows.append(dict(seed=seed, model=name, subset=label, prompts=int(sel.sum()),
                                        mae=float(np.mean(np.abs(q[sel] - f_meas[sel]))) if sel.any() else np.nan,
                                        error_share=float(np.sum(np.abs(q[sel] - f_meas[sel]))
                                                          / np.sum(np.abs(q - f_meas)))))
        iso = _isotonic(c[held] / n[held], f_meas)
        by_count = pd.Series(f_meas).groupby(c[held]).transform("mean").to_numpy()
        iso_rows.append(dict(seed=seed, iso_mae=float(np.mean(np.abs(iso - f_meas))),
                             iso_brier=float(np.mean((iso - f_meas) ** 2 + f_meas * (1 - f_meas))),
                             any_map_brier=float(np.mean((by_count - f_meas) ** 2 + f_meas * (1 - f_meas)))))
        print(f"seed {seed}: " + ", ".join(f"{r.model} {r.mae:.4f}" for _, r in table.iterrows()), flush=True)
    splits = pd.DataFrame(rows)
    splits.round(6).to_csv(DIR / "splits.csv", index=False)

    # profile over all problems (fits on all of them)
    fb = c / n
    d_meas = _jeffreys_logit(k, m) - _jeffreys_logit(c, n)
    t = pr.table
    prof = pd.DataFrame(dict(bin=pd.cut(fb, BINS, right=False, labels=BIN_LABELS), fb=fb, fa=k / m, d_meas=d_meas,
                             d_shift=logit(t.pred_shift) - z0, d_tabular=logit(t.pred_tabular) - z0,
                             d_coupled=logit(t.pred_coupled) - z0, worse_raw=worse_raw, worse_sig=worse_sig,
                             pred_shift=t.pred_shift, pred_tabular=t.pred_tabular))
    prof = prof.groupby("bin", observed=True).agg(
        problems=("fb", "size"), base_mean=("fb", "mean"), after_mean=("fa", "mean"),
        shift_mean=("pred_shift", "mean"), tabular_mean=("pred_tabular", "mean"),
        dlogit_measured=("d_meas", "mean"), dlogit_shift=("d_shift", "mean"), dlogit_tabular=("d_tabular", "mean"),
        dlogit_coupled=("d_coupled", "mean"), worse_raw=("worse_raw", "sum"), worse_sig=("worse_sig", "sum"))
    prof.round(4).to_csv(DIR / "profile.csv", index_label="base_bin")

    mean = splits.groupby("model")[["mae", "brier", "mae_minus_shift"]].mean()
    subsets = pd.DataFrame(subset_rows)
    sub = subsets.groupby(["model", "subset"]).mae.mean().unstack()
    share = subsets[subsets.subset == "worse_sig"].groupby("model").error_share.mean()
    n_worse_held = subsets[(subsets.subset == "worse_sig") & (subsets.model == "shift")].prompts.mean()
    iso = pd.DataFrame(iso_rows).mean()
    cpl = splits[splits.model == "coupled"]
    diag = dict(
        problems=int(c.size), samples_per_problem=int(n[0]),
        **({} if np.all(m == n) else dict(samples_per_problem_after=int(m[0]))),
        **({} if beta_recipe is None else dict(beta_recipe=beta_recipe, beta_used=float(obj.beta),
                                                standin=_standin_sensitivity(base, framework, config, after))),
        worse_raw=int(worse_raw.sum()), better_raw=int((k > c * (m / n)).sum()),
        worse_significant=int(worse_sig.sum()),
        better_significant=int(sum(fisher_exact([[k[i], m[i] - k[i]], [c[i], n[i] - c[i]]],
                                                alternative="greater")[1] < 0.05 for i in range(c.size))),
        seed0=dict(holdout_best=hold["best"], shift_c=hold["shift"],
                   coupled_t=hold["fits"]["coupled"]["t"], coupled_rho=hold["fits"]["coupled"]["rho"],
                   coupled_rho_lo=hold["fits"]["coupled"]["rho_lo"], tabular_t=hold["fits"]["tabular"]["t"]),
        **{f"all{c.size}": dict(coupled_rho=pr.summary["finite"]["fit"]["rho"],
                                coupled_t=pr.summary["finite"]["fit"]["t"],
                                shift_c=pr.summary["finite"]["shift"], mean_pred_finite=pr.summary["mean_pred_finite"],
                                vertex_fraction=pr.summary["vertex_fraction"],
                                predictive_90_coverage_in_sample=float(np.mean(
                                    (pr.table.pred_finite_lo <= k / m) & (k / m <= pr.table.pred_finite_hi))),
                                p_ref_interval_coverage=float(np.mean((pr.table.pred_lo <= k / m)
                                                                      & (k / m <= pr.table.pred_hi))),
                                conformal=pr.summary["finite"]["conformal"])},
        seed0_holdout_coverage=hold.get("coverage"),
        splits=dict(seeds=len(SEEDS), mean_mae={k_: float(v) for k_, v in mean.mae.items()},
                    mean_brier={k_: float(v) for k_, v in mean.brier.items()},
                    mean_mae_minus_shift={k_: float(v) for k_, v in mean.mae_minus_shift.dropna().items()},
                    coupled_below_shift=int((cpl.mae_minus_shift < 0).sum()),
                    coupled_ci_below_zero=int((cpl.mae_minus_shift_hi < 0).sum()),
                    coupled_ci_above_zero=int((cpl.mae_minus_shift_lo > 0).sum()),
                    tabular_ci_above_zero=int((splits[splits.model == "tabular"].mae_minus_shift_lo > 0).sum()),
                    coupled_rho_median=float(cpl.rho.median()), coupled_rho_min=float(cpl.rho.min()),
                    affine_a_mean=float(splits.affine_a.mean()), affine_b_mean=float(splits.affine_b.mean()),
                    affine_below_shift=int((splits[splits.model == "affine"].mae.to_numpy()
                                            < splits[splits.model == "shift"].mae.to_numpy()).sum()),
                    mean_floor=float(splits[splits.model == "shift"].floor.mean()),
                    mae_on_worse_sig={k_: float(v) if v == v else None for k_, v in sub["worse_sig"].items()},
                    mae_on_not_worse_sig={k_: float(v) for k_, v in sub["not_worse_sig"].items()},
                    worse_sig_heldout_mean=float(n_worse_held),
                    predictive_90_coverage_heldout_mean=float(np.mean(coverage)),
                    predictive_90_coverage_heldout_min=float(np.min(coverage)),
                    predictive_90_mean_width=float(np.mean([c_["model_width"] for c_ in conformal])),
                    conformal_90_coverage_heldout_mean=float(np.mean([c_["coverage"] for c_ in conformal])),
                    conformal_90_coverage_heldout_min=float(np.min([c_["coverage"] for c_ in conformal])),
                    conformal_90_coverage_heldout_max=float(np.max([c_["coverage"] for c_ in conformal])),
                    conformal_90_mean_width=float(np.mean([c_["width"] for c_ in conformal])),
                    error_share_of_worse_sig={k_: float(v) for k_, v in share.items()},
                    isotonic_in_sample_mae=float(iso.iso_mae), isotonic_in_sample_brier=float(iso.iso_brier),
                    any_map_of_base_count_in_sample_brier=float(iso.any_map_brier)),
        seconds=round(time.perf_counter() - started, 1))
    (DIR / "diagnostics.json").write_text(json.dumps(diag, indent=1) + "\n")
    print(json.dumps(diag, indent=1))


def _recipe(folder):
    """``(framework, config, beta_recipe)``: the folder's verl overrides (``recipe.sh``) or TRL fields
    (``recipe.yaml``, as a dict); ``beta_recipe`` is 0.0 where the recipe states ``beta = 0`` (read as it is: the
    unregularised objective), else None."""
    if (folder / "recipe.sh").exists():
        return "verl", folder / "recipe.sh", None
    import yaml

    config = yaml.safe_load((folder / "recipe.yaml").read_text())
    if float(config.get("beta", 1.0)) != 0.0:
        return "trl", config, None
    print("recipe beta = 0: the unregularised objective (no stationary policy; finite-time predictions)", flush=True)
    return "trl", config, 0.0


def _standin_sensitivity(base, framework, config, after):
    """How far the flows at the stand-in ``beta = 1e-6`` are from those at the recipe's ``beta = 0`` (seed-0
    split): the largest change of any prediction, and of each model's held-out MAE."""
    from grpo_theory.predict.core import objective_for

    tables, scores = {}, {}
    for beta in (0.0, BETA_STANDIN):
        obj = objective_for(framework=framework, config={**config, "beta": beta})[0]
        fin = predict_finite(base, obj, after, holdout=0.5, seed=0)
        tables[beta], scores[beta] = fin.table, fin.scores.set_index("model").mae
    zero, small = tables.values()
    return dict(beta=BETA_STANDIN,
                max_abs_change={col: float(np.max(np.abs(np.asarray(small[col], float) - np.asarray(zero[col], float))))
                                for col in ("pred_tabular", "pred_coupled", "pred_finite")},
                heldout_mae_change={m_: float(scores[BETA_STANDIN][m_] - scores[0.0][m_])
                                    for m_ in ("tabular", "coupled")})


def _fit_on_kept(base, obj, after, held, seed):
    """The flows fitted on the kept half only (what ``predict_finite(..., holdout=)`` fits), for every problem."""
    sel = ~held
    kept = samples_from_counts(after.n[sel], after.correct[sel], [pid for pid, s in zip(after.prompt_ids, sel) if s])
    return predict_finite(base, obj, kept, seed=seed).table


if __name__ == "__main__":
    main()
