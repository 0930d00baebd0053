"""The measured kernel between the free-generation study's prompts at SmolLM2's base model (both pools).

    python experiments/free_generation_kernel.py [--model-dir models/smollm2]      # needs grpo-theory fetch-model

For each pool's kept prompts (``docs/results/free_generation[_greetings].csv``: their labels, mapped to
the user turns by ``grpo_theory.studies.free_prompts.POOLS``, and answers; the chat template as the study
builds it), three scores at the base model (full vocabulary, temperature 1): ``first_logit`` and
``first_logprob``, the logit and log of the probability that the first generated token reads as the answer
to the verifier (``normalise(token) == normalise(answer)``: the study's P(correct), up to completions whose
first word spans several tokens), and ``prefix_logprob``, the log-probability that a completion starts with
``tokenizer.encode(answer)``. ``K_ij = <grad z_i, grad z_j>`` over the last MLP's 2.65M parameters (the
only ones the study trains), by ``grpo_theory.studies.kernel``.

Writes ``docs/results/free_generation_kernel.csv`` (long form: ``pool, score, prompt_i, prompt_j, K``) and
``docs/results/free_generation_kernel_prompts.csv`` (per prompt: ``pool, prompt, label, answer,
answer_tokens, n_first_tokens, z_first_logit, p_first_token, p_answer_prefix, p_ref, p_ref_n`` (the
study's sampled P(correct) at the base model), and the seconds a prompt), and prints each score's check
against the sampled ``p_ref`` and the kernel's correlation structure.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _kernel_tables import long_form, write_tables

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
POOLS = {"main": "free_generation.csv", "greetings": "free_generation_greetings.csv"}


def main() -> None:
    import torch

    from grpo_theory.studies.free_prompts import POOLS as CANDIDATES
    from grpo_theory.studies.free_prompts import normalise
    from grpo_theory.studies.kernel import (
        first_token_scores,
        free_generation_scores,
        measure_kernel,
        trainable_parameters,
    )
    from grpo_theory.training.smollm import FrozenTrunkLM, chat_prompt, load_smollm2

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", default="models/smollm2")
    ap.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    hf, tok = load_smollm2(args.model_dir)
    model = FrozenTrunkLM(hf.hf if hasattr(hf, "hf") else hf)
    words = [normalise(tok.decode([v])) for v in range(len(tok))]          # the verifier's view of each token
    long, per = [], []
    for pool, fname in POOLS.items():
        t = pd.read_csv(Path(args.results) / fname).drop_duplicates("prompt").sort_values("prompt")
        question = {label: q for label, q, _ in CANDIDATES[pool]()}      # the user turn the study sampled
        prompts = [chat_prompt(tok, question[label]) for label in t.label]
        answers = [tok.encode(a, add_special_tokens=False) for a in t.answer]
        want = [normalise(a) for a in t.answer]
        sets = [[v for v, w in enumerate(words) if w == x] for x in want]
        out = {}
        for name, make, kind in (("first_logit", first_token_scores, "logit"),
                                 ("first_logprob", first_token_scores, "logprob"),
                                 ("prefix_logprob", free_generation_scores, "logprob")):
            k = measure_kernel(make(model, prompts, sets if make is first_token_scores else answers, kind=kind),
                               trainable_parameters(model), len(prompts), kind=kind)
            out[name] = k
            long.append(long_form(k, t.prompt.to_numpy(), pool=pool, score=name))
        first, prefix = out["first_logprob"], out["prefix_logprob"]
        per.append(pd.DataFrame(dict(pool=pool, prompt=t.prompt.to_numpy(), label=t.label.to_numpy(),
                                     answer=t.answer.to_numpy(), answer_tokens=[" ".join(map(str, a)) for a in answers],
                                     n_first_tokens=[len(x) for x in sets], z_first_logit=out["first_logit"].z,
                                     p_first_token=np.exp(first.z), p_answer_prefix=np.exp(prefix.z),
                                     p_ref=t.p_ref.to_numpy(), p_ref_n=t.p_ref_n.to_numpy(),
                                     seconds_per_prompt_first=first.seconds_per_prompt,
                                     seconds_per_prompt_prefix=prefix.seconds_per_prompt)))
        for name, k in out.items():
            p = np.exp(k.z) if k.kind == "logprob" else 1 / (1 + np.exp(-k.z))
            print(f"{pool} {name}: {len(prompts)} prompts, {k.n_params} parameters, {k.seconds_per_prompt:.3f} s a "
                  f"prompt; P vs sampled p_ref (n {int(t.p_ref_n.min())}): MAE {np.abs(p - t.p_ref).mean():.4f}, "
                  f"max {np.abs(p - t.p_ref).max():.4f}, corr {np.corrcoef(p, t.p_ref)[0, 1]:.3f}; K correlations off "
                  f"the diagonal: {k.correlation_range()}")
    write_tables(args.results, "free_generation_kernel", long, per)


if __name__ == "__main__":
    main()
