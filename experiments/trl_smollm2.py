"""TRL's GRPOTrainer on SmolLM2-135M-Instruct against the theory (measured, not gated).

    python experiments/trl_smollm2.py        # about 15 min on one core

Two TRL settings (use_bias_correction_kl True: the direct penalty, TRL >= 1.10's default; False:
the reverse penalty), beta = 0.5, G = 4, 4 yes/no prompts, one-token completions from the full
vocabulary; the prediction comes from read_trl_config(args) and SmolLM2's own next-token
distribution. Only the last decoder layer's MLP trains (as in smollm2_validate.py).
Writes docs/results/trl_smollm2.csv.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from grpo_theory.studies.trl import run_trl_smollm2

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--out", default=str(ROOT / "runs" / "trl_smollm2"))
    args = ap.parse_args()
    parts = [run_trl_smollm2(args.out, model_dir=ROOT / "models" / "smollm2", steps=args.steps, seed=s,
                             learning_rate=args.lr) for s in args.seeds]
    table = pd.concat(parts, ignore_index=True)
    table.to_csv(ROOT / "docs" / "results" / "trl_smollm2.csv", index=False, float_format="%.6g")
    print(table[["config", "seed", "prompt", "pi_ref", "predicted", "measured", "measured_se", "error"]]
          .to_string(index=False))


if __name__ == "__main__":
    main()
