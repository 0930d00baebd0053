"""TRL's GRPOTrainer on SmolLM2-135M-Instruct, run to a flat curve, against the theory (issue 23).

    python experiments/trl_smollm2_stationary.py                      # every seed to the end (hours on CPU)
    python experiments/trl_smollm2_stationary.py --stop-after 100     # a session's share; rerun to continue
    python experiments/trl_smollm2_stationary.py --pilot 3            # seconds per step, nothing kept
    python experiments/trl_smollm2_stationary.py --report             # where each seed stands

8 yes/no prompts, one-token completions from the full vocabulary at temperature 1, G = 4, beta = 0.5,
TRL 1.16's default use_bias_correction_kl=True (the direct penalty), Adam at a constant 3e-4 after 10
warm-up steps, only the last decoder layer's MLP trainable. Each seed trains until every prompt's
exact P(correct) is flat (grpo_theory.studies.trl_stationary), at most 600 steps, and resumes from
TRL's own checkpoints under --out. The prediction is read from the same GRPOConfig
(read_trl_config). Writes docs/results/trl_smollm2_stationary.csv and its trajectories
(trl_smollm2_stationary_trajectory.csv) when every seed has finished.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--max-steps", type=int, default=600)
    ap.add_argument("--stop-after", type=int, default=None, help="training steps per seed in this call")
    ap.add_argument("--pilot", type=int, default=None, metavar="STEPS", help="time this many steps, keep nothing")
    ap.add_argument("--report", action="store_true",
                    help="print where each seed's run stands (finished or not) and train nothing")
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "trl_smollm2_stationary"))
    args = ap.parse_args()

    if args.report:
        from grpo_theory.studies.trl_stationary import progress

        cols = ["seed", "answer", "pi_ref", "predicted", "measured", "measured_se", "conv_status", "steps_so_far"]
        for s in args.seeds:
            print(progress(Path(args.out) / f"seed{s}")[cols].to_string(index=False, float_format="%.3f"))
        return
    from transformers import AutoConfig, AutoTokenizer

    from grpo_theory.studies.trl import smollm2_hf_dir
    from grpo_theory.studies.trl_stationary import train_until_flat
    from grpo_theory.training.smollm import YES_NO_QUESTIONS

    out = Path(args.out)
    hf = smollm2_hf_dir(out / "smollm2_hf", args.model_dir)
    tok = AutoTokenizer.from_pretrained(hf)
    chosen = YES_NO_QUESTIONS[:args.prompts]
    prompts = [[{"role": "user", "content": q + " Answer Yes or No."}] for q, _ in chosen]
    answers = [a for _, a in chosen]
    common = dict(model_path=hf, tokenizer=tok, prompts=prompts, answers=answers, beta=0.5, group_size=4,
                  learning_rate=args.lr, warmup_steps=10, use_bias_correction_kl=True, max_steps=args.max_steps,
                  trainable=f"model.layers.{AutoConfig.from_pretrained(hf).num_hidden_layers - 1}.mlp.")
    if args.pilot:
        d = out / "pilot"
        shutil.rmtree(d, ignore_errors=True)
        t0 = time.perf_counter()
        train_until_flat(d, seed=0, stop_after=args.pilot, **common)
        print(f"{args.pilot} steps in {time.perf_counter() - t0:.1f} s "
              "(with the model loads and the first measurement)")
        shutil.rmtree(d, ignore_errors=True)
        return
    parts = [train_until_flat(out / f"seed{s}", seed=s, stop_after=args.stop_after, **common) for s in args.seeds]
    if any(p is None for p in parts):
        print(f"unfinished seeds remain under {out}: run the same command again to continue")
        return
    table = pd.concat(parts, ignore_index=True)
    res = ROOT / "docs" / "results"
    table.to_csv(res / "trl_smollm2_stationary.csv", index=False, float_format="%.6g")
    # every seed's exact P(correct) trajectory, for the tests and the docs
    traj = pd.concat([pd.read_csv(out / f"seed{s}" / "trajectory.csv").assign(seed=s) for s in args.seeds],
                     ignore_index=True)
    traj.to_csv(res / "trl_smollm2_stationary_trajectory.csv", index=False, float_format="%.6g")
    print(table[["seed", "prompt", "pi_ref", "predicted", "measured", "measured_se", "conv_status", "steps_run"]]
          .to_string(index=False))


if __name__ == "__main__":
    main()
