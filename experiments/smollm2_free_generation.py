"""Free generation on SmolLM2: how far the theory carries when the answer space is open (measured, not gated).

    python experiments/smollm2_free_generation.py       # about 25 min on one core; resumes

Completions of up to 6 tokens are sampled from the full vocabulary at temperature 1; the reward
is exact match of the stripped text with the answer ("Yes"/"No", or the number). 20 candidate
prompts (8 yes/no, 12 arithmetic) are screened with 48 samples each, and the 4 with the largest
screened P_ref(correct) are kept; P_ref(correct) is then re-estimated from fresh samples (so the
screening's winner's curse does not enter the prediction). For each configuration and seed a copy
of SmolLM2 (last MLP trainable, see grpo_theory.training.free_generation) trains with
sequence-level GRPO, and P(correct) is measured by sampling at the end. The prediction is the
two-class stationary policy from P_ref(correct), its interval carried through from the Wilson
interval of the estimate. Writes docs/results/smollm2_free_generation.csv.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import torch

from grpo_theory.training.free_generation import FreeSampler, estimate_correct, run_free_generation
from grpo_theory.training.smollm import (
    ARITHMETIC_QUESTIONS,
    YES_NO_QUESTIONS,
    FrozenTrunkLM,
    _chat_prompt,
    load_smollm2,
)

ROOT = Path(__file__).resolve().parents[1]
#: (G, beta, penalty, Adam learning rate)
CONFIGS = ((8, 0.5, "reverse", 1e-3), (8, 0.5, "reverse", 3e-4))
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def candidates(tok):
    out = [(q, _chat_prompt(tok, q + " Answer Yes or No."), a) for q, a in YES_NO_QUESTIONS[:8]]
    out += [(f"{a}{op}{b}", _chat_prompt(tok, f"What is {a}{op}{b}? Answer with the number only."),
             str(OPS[op](a, b))) for a, op, b in ARITHMETIC_QUESTIONS[:12]]   # the committed 20 candidates
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "free_generation"))
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, tok = load_smollm2(args.model_dir)
    base = FrozenTrunkLM(model.hf)
    cands = candidates(tok)
    screen = estimate_correct(FreeSampler(base, tok, [c[1] for c in cands]), [c[2] for c in cands], 48,
                              torch.Generator().manual_seed(1234))
    order = sorted(range(len(cands)), key=lambda i: -screen[i][0])[:args.prompts]
    print("screened P_ref(correct):", {cands[i][0]: f"{screen[i][0]}/48" for i in order}, flush=True)
    chosen = [cands[i] for i in order]
    parts = []
    for G, beta, penalty, lr in CONFIGS:
        for seed in args.seeds:
            done = Path(args.out) / f"free_G{G}_beta{beta:g}_{penalty}_lr{lr:g}_seed{seed}.csv"
            if done.exists():                      # finished runs are kept; a rerun resumes
                parts.append(pd.read_csv(done))
                continue
            parts.append(run_free_generation(args.out, model=base, tokenizer=tok, prompts=[c[1] for c in chosen],
                                             answers=[c[2] for c in chosen], labels=[c[0] for c in chosen],
                                             group_size=G, beta=beta, penalty=penalty, steps=args.steps,
                                             learning_rate=lr, seed=seed, progress=False))
            print(parts[-1][["config", "seed", "question", "pi_ref", "predicted", "predicted_lo", "predicted_hi",
                             "measured", "measured_lo", "measured_hi"]].to_string(index=False), flush=True)
    table = pd.concat(parts, ignore_index=True)
    table["screened_correct_of_48"] = table.question.map({cands[i][0]: screen[i][0] for i in order})
    table.to_csv(Path(args.results) / "smollm2_free_generation.csv", index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
