"""Free generation on SmolLM2: how far the theory carries when the answer space is open (measured, not gated).

Completions of up to 6 tokens are sampled from the full vocabulary at temperature 1; the reward
is exact match of the stripped text with the answer ("Yes"/"No", or the number). 20 candidate
prompts (8 yes/no, 12 arithmetic) are screened with 48 samples each, and the 4 with the largest
screened P_ref(correct) are kept; P_ref(correct) is then re-estimated from fresh samples (so the
screening's winner's curse does not enter the prediction). For each configuration and seed a copy
of SmolLM2 (last MLP trainable, see :mod:`grpo_theory.training.free_generation`) trains with
sequence-level GRPO, and P(correct) is measured by sampling at the end. The prediction is the
two-class stationary policy from P_ref(correct), its interval carried through from the Wilson
interval of the estimate.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from .._io import atomic_write
from ..convergence import ConvergenceReport, check_history, report_columns
from ..problem import Objective, Question
from ..solvers import stationary_policy
from ..training.free_generation import (
    FreeSampler,
    _pad_time,
    _token_logp,
    estimate_correct,
    wilson_interval,
)
from ..training.loss import group_advantages, grpo_objective
from ..training.smollm import ARITHMETIC_QUESTIONS, YES_NO_QUESTIONS, FrozenTrunkLM, _chat_prompt, load_smollm2

__all__ = ["run_free_generation", "run_free_study", "candidates", "CONFIGS"]

#: (G, beta, penalty, Adam learning rate)
CONFIGS = ((8, 0.5, "reverse", 1e-3), (8, 0.5, "reverse", 3e-4))
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def candidates(tok):
    """(label, chat prompt, answer) for the 8 yes/no and 12 arithmetic candidate prompts."""
    out = [(q, _chat_prompt(tok, q + " Answer Yes or No."), a) for q, a in YES_NO_QUESTIONS[:8]]
    out += [(f"{a}{op}{b}", _chat_prompt(tok, f"What is {a}{op}{b}? Answer with the number only."),
             str(OPS[op](a, b))) for a, op, b in ARITHMETIC_QUESTIONS[:12]]   # the committed 20 candidates
    return out


def _check(history: list, n_prompts: int, n_samples: int) -> ConvergenceReport:
    """Issue 26: the stationarity check on the sampled P(correct) per step (each the mean of
    ``n_samples`` 0/1 rewards), against its binomial standard error at the tail's mean."""
    tail = np.array([[h[f"p_best_q{i}"] for i in range(n_prompts)] for h in history[-max(1, len(history) // 4):]])
    m = tail.mean(0)
    return check_history(history, n_prompts, se=np.sqrt(m * (1 - m) / n_samples))


def run_free_generation(out_dir, *, model, tokenizer, prompts, answers, labels, group_size: int = 8,
                        beta: float = 0.5, penalty: str = "reverse", groups_per_prompt: int = 2, steps: int = 120,
                        learning_rate: float = 1e-3, max_new_tokens: int = 6, n_ref: int = 400, n_eval: int = 400,
                        seed: int = 0, progress: bool = True) -> pd.DataFrame:
    """Estimate ``P_ref(correct)``, train sequence-level GRPO with free generation, measure
    ``P(correct)`` by sampling; one row per prompt with the prediction and both intervals.

    ``model`` is a ``FrozenTrunkLM("last-mlp")`` of SmolLM2 (not modified: a copy trains).
    The measured value is the mean of the sampled correctness over the last 30% of the steps'
    groups plus ``n_eval`` fresh samples at the end (reported separately).
    """
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    policy = copy.deepcopy(model)
    ref_mlp = copy.deepcopy(model.hf.model.layers[-1].mlp).requires_grad_(False)
    sampler = FreeSampler(policy, tokenizer, prompts, max_new_tokens)
    ref_counts = estimate_correct(sampler, answers, n_ref, gen)
    params = [p for p in policy.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=learning_rate)
    obj = Objective(beta=beta, group_size=group_size, penalty=penalty)
    window_start = int(0.7 * steps)
    window_hits = np.zeros(len(prompts))
    window_n = 0
    t0 = time.perf_counter()
    history = []
    for step in tqdm(range(steps), desc=f"free generation G={group_size} {penalty}", disable=not progress,
                     leave=False):
        for g in opt.param_groups:
            g["lr"] = learning_rate * (1 - 0.95 * step / steps)
        comps = [sampler.sample(q, groups_per_prompt * group_size, gen) for q in range(len(prompts))]
        T = max(c.tokens.shape[1] for c in comps)
        tokens = torch.stack([_pad_time(c.tokens, T) for c in comps])             # (P, n, T)
        mask = torch.stack([_pad_time(c.mask, T) for c in comps])
        h0 = torch.stack([_pad_time(c.h0, T) for c in comps])
        r = torch.tensor([[float(t.strip() == a) for t in c.text] for c, a in zip(comps, answers)])
        if step >= window_start:
            window_hits += r.mean(1).numpy()
            window_n += 1
        shape = (len(prompts), groups_per_prompt, group_size, T)
        lp = (_token_logp(policy, None, h0, tokens) * mask).view(shape)
        with torch.no_grad():
            lp_ref = (_token_logp(policy, ref_mlp, h0, tokens) * mask).view(shape)
        adv = group_advantages(r.view(shape[:3]))
        obj_t, diag = grpo_objective(lp, lp.detach(), lp_ref, adv, beta=beta, penalty=penalty, level="sequence",
                                     mask=mask.view(shape))
        opt.zero_grad(set_to_none=True)
        (-obj_t).backward()
        opt.step()
        history.append(dict(step=step + 1, reward=float(r.mean()), k3=float(diag["k3"]),
                            **{f"p_best_q{i}": float(v) for i, v in enumerate(r.mean(1).tolist())}))
    train_seconds = time.perf_counter() - t0
    conv = _check(history, len(prompts), groups_per_prompt * group_size)        # issue 26
    end_counts = estimate_correct(sampler, answers, n_eval, gen)
    rows = []
    for i, (label, (k_ref, n_r), (k_end, n_e)) in enumerate(zip(labels, ref_counts, end_counts)):
        p_ref = k_ref / n_r
        lo, hi = wilson_interval(k_ref, n_r)

        def pred(p):
            p = min(max(p, 1e-9), 1 - 1e-9)
            return float(stationary_policy(Question([p, 1 - p], rewards=[1, 0]), obj).pi[0])
        e_lo, e_hi = wilson_interval(k_end, n_e)
        rows.append(dict(seed=seed, config=f"free_G{group_size}_beta{beta:g}_{penalty}_lr{learning_rate:g}",
                         question=label,
                         predicted=pred(p_ref), measured=k_end / n_e, level="sequence", answer=answers[i],
                         pi_ref=p_ref, pi_ref_lo=lo, pi_ref_hi=hi, predicted_lo=pred(lo), predicted_hi=pred(hi),
                         measured_lo=e_lo, measured_hi=e_hi,
                         measured_window=window_hits[i] / max(1, window_n), n_ref=n_r, n_eval=n_e,
                         group_size=group_size, beta=beta, penalty=penalty, steps=steps,
                         learning_rate=learning_rate, max_new_tokens=max_new_tokens, train_seconds=train_seconds,
                         **report_columns(conv, i)))                                 # issue 26
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(rows)
    name = f"free_G{group_size}_beta{beta:g}_{penalty}_lr{learning_rate:g}_seed{seed}"
    atomic_write(out / f"{name}.csv", lambda p: table.to_csv(p, index=False))
    atomic_write(out / f"{name}_history.csv", lambda p: pd.DataFrame(history).to_csv(p, index=False))
    return table


def run_free_study(out_dir="runs/free_generation", *, model_dir="models/smollm2", seeds=(0,), steps: int = 80,
                   n_prompts: int = 4, progress: bool = False) -> pd.DataFrame:
    """The free-generation study: screen the candidate prompts, keep the ``n_prompts`` with the largest
    screened ``P_ref(correct)``, and run :func:`run_free_generation` for every configuration and seed
    (finished runs under ``out_dir`` are kept: a rerun resumes). Returns the table of every run."""
    torch.set_num_threads(1)
    model, tok = load_smollm2(model_dir)
    base = FrozenTrunkLM(model.hf)
    cands = candidates(tok)
    screen = estimate_correct(FreeSampler(base, tok, [c[1] for c in cands]), [c[2] for c in cands], 48,
                              torch.Generator().manual_seed(1234))
    order = sorted(range(len(cands)), key=lambda i: -screen[i][0])[:n_prompts]
    print("screened P_ref(correct):", {cands[i][0]: f"{screen[i][0]}/48" for i in order}, flush=True)
    chosen = [cands[i] for i in order]
    parts = []
    for G, beta, penalty, lr in CONFIGS:
        for seed in seeds:
            done = Path(out_dir) / f"free_G{G}_beta{beta:g}_{penalty}_lr{lr:g}_seed{seed}.csv"
            if done.exists():                      # finished runs are kept; a rerun resumes
                parts.append(pd.read_csv(done))
                continue
            parts.append(run_free_generation(out_dir, model=base, tokenizer=tok, prompts=[c[1] for c in chosen],
                                             answers=[c[2] for c in chosen], labels=[c[0] for c in chosen],
                                             group_size=G, beta=beta, penalty=penalty, steps=steps,
                                             learning_rate=lr, seed=seed, progress=progress))
            print(parts[-1][["config", "seed", "question", "pi_ref", "predicted", "predicted_lo", "predicted_hi",
                             "measured", "measured_lo", "measured_hi"]].to_string(index=False), flush=True)
    table = pd.concat(parts, ignore_index=True)
    table["screened_correct_of_48"] = table.question.map({cands[i][0]: screen[i][0] for i in order})
    return table
