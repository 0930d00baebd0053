"""The trainer's KL estimators, placements and clamps against the theory (issue: every KL placement).

    python experiments/kl_study.py [--steps 800] [--seeds 0 1 2] [--resume]

Fifteen variants (grpo_theory.studies.kl.KL_VARIANTS) x 3 seeds on the small GPT, G = 8,
beta = 0.5 (the clamp pair at 0.8 x and 1.25 x the critical beta), ddof 1, eps 1e-4. Target per
configuration: MAE <= 0.01 and every predicted collapse measured as one (min probability < 0.01).
Writes docs/results/kl_study.csv (every answer) and docs/results/kl_study_summary.csv.
"""

from __future__ import annotations

from _study_cli import run_and_copy, study_args

from grpo_theory.studies.kl import run_kl_study


def main() -> None:
    args = study_args(__doc__, "validate_kl")
    summary = run_and_copy(run_kl_study, args, {"kl_results.csv": "kl_study.csv",
                                                "kl_summary.csv": "kl_study_summary.csv"},
                           until_stationary=args.until_stationary is not None,               # issue 26
                           max_steps_factor=args.until_stationary or 4.0)
    summary["unconverged"] = summary.n_moving + summary.n_oscillating          # issue 26
    by = summary.groupby("config", sort=False).agg(
        seeds=("seed", "nunique"), beta=("beta", "mean"), mae_mean=("mae", "mean"), mae_max=("mae", "max"),
        max_error=("max_abs_error", "max"), predicted_collapses=("predicted_collapses", "sum"),
        measured_collapses=("measured_collapses", "sum"), mae_converged_max=("mae_converged", "max"),
        unconverged=("unconverged", "sum"))
    by["meets_target"] = by.mae_max <= 0.01
    print(by.to_string(float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
