r"""GRPO's advantages and loss, exactly as in SPEC section 1 (torch).

For a group ``o_1..o_G`` with rewards ``r_1..r_G``:

    A_i = (r_i - mean r) / (sqrt(var_ddof r + variance_eps) + std_eps)   ("scale"; 0 if all tie and eps = 0)
    A_i = r_i - mean r                                                    ("shift")

and the per-member objective (maximised)

    min(rho_i A_i, clip(rho_i, 1 - eps, 1 + eps) A_i) - beta D_i

with ``rho_i = pi(o_i)/pi_old(o_i)`` and the penalty ``D_i``
``= k3(o_i) = pi_ref/pi - log(pi_ref/pi) - 1`` ("reverse", GRPO as published) or
``= rho_i k3(o_i)`` ("direct": TRL's bias-corrected estimator, whose expectation
is KL(pi || pi_ref)). At "sequence" level ``pi`` is the probability of the whole
answer (the note's model); at "token" level every token has its own ratio and
k3, averaged over the answer's tokens (common practice).
"""

from __future__ import annotations

import torch


def group_advantages(rewards: torch.Tensor, normalization: str = "scale", std_ddof: int = 0,
                     std_eps: float = 0.0, variance_eps: float = 0.0) -> torch.Tensor:
    """Advantages over the last axis (the group), shape preserved."""
    centred = rewards - rewards.mean(dim=-1, keepdim=True)
    if normalization == "shift":
        return centred
    if normalization != "scale":
        raise ValueError(f"normalization must be 'scale' or 'shift', got {normalization!r}")
    tie = (rewards.amax(dim=-1, keepdim=True) == rewards.amin(dim=-1, keepdim=True))
    var = torch.where(tie, torch.zeros_like(centred[..., :1]),
                      rewards.var(dim=-1, correction=std_ddof, keepdim=True))
    denom = torch.sqrt(var + variance_eps) + std_eps
    safe = torch.where(denom > 0, denom, torch.ones_like(denom))
    return torch.where(denom > 0, torch.where(tie, torch.zeros_like(centred), centred) / safe,
                       torch.zeros_like(centred))


def grpo_objective(logp: torch.Tensor, logp_old: torch.Tensor, logp_ref: torch.Tensor,
                   advantages: torch.Tensor, *, beta: float, penalty: str = "reverse",
                   clip_eps: float = 0.2, level: str = "sequence") -> tuple[torch.Tensor, dict]:
    """Mean per-member GRPO objective (to be maximised) and diagnostics.

    ``logp``, ``logp_old``, ``logp_ref``: (..., T) token log-probabilities of the sampled
    answers under the current, old and reference policies; ``advantages``: (...).
    """
    if level == "sequence":
        logp, logp_old, logp_ref = (x.sum(-1, keepdim=True) for x in (logp, logp_old, logp_ref))
    elif level != "token":
        raise ValueError(f"level must be 'sequence' or 'token', got {level!r}")
    adv = advantages.unsqueeze(-1)
    ratio = torch.exp(logp - logp_old)
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    log_ref_ratio = logp_ref - logp
    k3 = torch.exp(log_ref_ratio) - log_ref_ratio - 1.0
    if penalty == "reverse":
        pen = k3
    elif penalty == "direct":
        pen = ratio * k3
    else:
        raise ValueError(f"penalty must be 'reverse' or 'direct', got {penalty!r}")
    per_member = (surrogate - beta * pen).mean(-1)            # mean over tokens (1 at sequence level)
    clipped = ((ratio - 1).abs() > clip_eps).float().mean()
    return per_member.mean(), {"k3": k3.mean().detach(), "clip_fraction": clipped.detach()}
