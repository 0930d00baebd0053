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
from dataclasses import dataclass

import torch

from ..errors import InvalidInputError


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k / n`` (95% by default)."""
    if n <= 0 or not 0 <= k <= n:
        raise InvalidInputError(f"need 0 <= k <= n and n > 0, got k={k!r}, n={n!r}")
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
            raise InvalidInputError("free generation needs FrozenTrunkLM(..., trainable='last-mlp')")
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


def pad_time(x: torch.Tensor, T: int) -> torch.Tensor:
    """Zero-pad axis 1 (time) to length T (padded positions are masked out)."""
    return torch.nn.functional.pad(x, (0, 0) * (x.dim() - 2) + (0, T - x.shape[1]))


def token_logp(model, mlp, h0: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``log pi(token | h0)`` at every position: the head (with ``mlp`` as the last MLP) on the trunk's ``h0``,
    log-softmax over the vocabulary in float32, read at ``tokens`` (``h0``'s leading shape)."""
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
