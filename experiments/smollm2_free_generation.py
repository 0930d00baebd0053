"""Free generation on SmolLM2 (see :mod:`grpo_theory.studies.free`); writes docs/results/smollm2_free_generation.csv.

    python experiments/smollm2_free_generation.py       # about 25 min on one core; resumes
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grpo_theory.studies.free import run_free_study

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "free_generation"))
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    args = ap.parse_args()
    table = run_free_study(args.out, model_dir=args.model_dir, seeds=tuple(args.seeds), steps=args.steps,
                           n_prompts=args.prompts)
    table.to_csv(Path(args.results) / "smollm2_free_generation.csv", index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
