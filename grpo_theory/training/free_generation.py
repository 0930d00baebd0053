"""GRPO with free generation on SmolLM2: unconstrained sampling at temperature 1, a verifier reward.

The answer space is open: an output ``o`` is any completion of at most ``max_new_tokens`` tokens
(ended by ``<|im_end|>`` or cut there), sampled from the full 49,152-token vocabulary at
temperature 1, and the reward is exact match of the completion's text with the answer
(``r(o) = 1`` if ``o.strip() == answer``). The theory sees two classes, correct (reward 1) and
the rest, with ``p = P_ref(correct)``; at any stationary point of sequence-level GRPO the
policy within each class stays proportional to ``pi_ref`` (the penalty is the only force
inside a class), so the prediction for ``P(correct)`` is the two-class stationary policy of
``Question([p, 1 - p], rewards=[1, 0])``. ``p`` is estimated by sampling, with a Wilson
interval that is carried through the (monotone) prediction.

The policy is :class:`~grpo_theory.training.smollm.FrozenTrunkLM` with ``"last-mlp"``: only the
last layer's MLP trains, so every key/value in the attention cache and the MLP's input ``h0``
depend on the tokens alone. Sampling therefore keeps ``h0`` at every generated position (one
forward per token, the prompt's cache reused across steps), and the loss needs no second
forward pass through the trunk: ``log pi_theta(o_t | o_<t) = log softmax(W_E^T RMSNorm(h0_t +
MLP_theta(LN(h0_t))))[o_t]``.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from .._io import atomic_write
from ..convergence import report_columns
from .loss import group_advantages, grpo_objective


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k / n`` (95% by default)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k!r}, n={n!r}")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Completions:
    tokens: torch.Tensor     # (n, T) sampled token ids (the end token included, padding after it)
    mask: torch.Tensor       # (n, T) 1.0 on real tokens
    h0: torch.Tensor         # (n, T, d) the last MLP's input at the position predicting each token
    text: list               # decoded completions (without the end token)


class FreeSampler:
    """Samples completions of fixed prompts from a ``FrozenTrunkLM("last-mlp")``, keeping ``h0``."""

    def __init__(self, model, tokenizer, prompts, max_new_tokens: int = 6) -> None:
        if getattr(model, "k", None) != 0:
            raise ValueError("free generation needs FrozenTrunkLM(..., trainable='last-mlp')")
        self.model, self.tok, self.max_new = model, tokenizer, max_new_tokens
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.prompts = [list(p) for p in prompts]
        self._prompt_state = [self._prefill(p) for p in self.prompts]

    @torch.no_grad()
    def _forward(self, ids, cache):
        """One trunk+head forward of new tokens; returns (logits at the last position, h0 of the new
        positions, cache)."""
        grabbed = {}
        last = self.model.hf.model.layers[-1]

        def hook(_mod, args):
            grabbed["h0"] = args[0].detach()
        handle = last.post_attention_layernorm.register_forward_pre_hook(hook)
        try:
            out = self.model.hf(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        finally:
            handle.remove()
        return out.logits[:, -1].float(), grabbed["h0"], out.past_key_values

    def _prefill(self, prompt):
        """The prompt's last-position h0 and its attention cache (both independent of the trained MLP)."""
        device = next(self.model.parameters()).device
        _, h0, cache = self._forward(torch.tensor([prompt], device=device), None)
        return h0[:, -1], cache

    @torch.no_grad()
    def sample(self, q: int, n: int, generator: torch.Generator) -> Completions:
        """``n`` completions of prompt ``q`` from the current policy (temperature 1, full vocabulary)."""
        h00, cache0 = self._prompt_state[q]
        # the prompt's logits depend on the trained MLP: recompute them from its h0 (cheap), never reuse
        logits = self.model.head_from_h0(h00).float().expand(n, -1)
        cache = copy.deepcopy(cache0)
        cache.batch_repeat_interleave(n)
        h0s, toks = [h00.expand(n, -1)], []
        alive = torch.ones(n, dtype=torch.bool)
        for t in range(self.max_new):
            probs = torch.softmax(logits, dim=-1).cpu()
            nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]
            nxt = torch.where(alive, nxt, torch.full_like(nxt, self.end))
            toks.append(nxt)
            alive &= nxt != self.end
            if not alive.any() or t == self.max_new - 1:
                break
            logits, h0, cache = self._forward(nxt[:, None].to(h00.device), cache)
            h0s.append(h0[:, -1])
        tokens = torch.stack(toks, 1)
        ended_before = torch.cumsum((tokens == self.end).int(), 1) - (tokens == self.end).int()
        mask = (ended_before == 0).float()
        text = [self.tok.decode([t for t in row.tolist() if t != self.end]) for row in tokens]
        return Completions(tokens, mask, torch.stack(h0s, 1), text)


def _pad_time(x: torch.Tensor, T: int) -> torch.Tensor:
    """Zero-pad axis 1 (time) to length T (padded positions are masked out)."""
    return torch.nn.functional.pad(x, (0, 0) * (x.dim() - 2) + (0, T - x.shape[1]))


def _token_logp(model, mlp, h0: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(model.head_from_h0(h0, mlp).float(), -1).gather(-1, tokens[..., None])[..., 0]


def estimate_correct(sampler: FreeSampler, answers, n: int, generator: torch.Generator,
                     batch: int = 64) -> list[tuple[int, int]]:
    """(correct count, n) per prompt: exact match of the stripped completion with the answer."""
    out = []
    for q, ans in enumerate(answers):
        k = 0
        for start in range(0, n, batch):
            c = sampler.sample(q, min(batch, n - start), generator)
            k += sum(t.strip() == ans for t in c.text)
        out.append((k, n))
    return out


def _check(history: list, n_prompts: int, n_samples: int):
    """Issue 26: the stationarity check on the sampled P(correct) per step (each the mean of
    ``n_samples`` 0/1 rewards), against its binomial standard error at the tail's mean."""
    from ..convergence import check_history

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
    from ..problem import Objective, Question
    from ..stationary import stationary_policy

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
