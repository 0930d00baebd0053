r"""GRPO's advantages and loss, exactly as in the note's Eq. 1-2 (torch).

For a group ``o_1..o_G`` with rewards ``r_1..r_G``:

    A_i = (r_i - mean r) / (sqrt(var_ddof r + variance_eps) + std_eps)   ("scale"; 0 if all tie and eps = 0)
    A_i = r_i - mean r                                                    ("shift")

and the per-member objective (maximised)

    min(rho_i A_i, clip(rho_i, 1 - eps, 1 + eps) A_i) - beta D_i

with ``rho_i = pi(o_i)/pi_old(o_i)`` and the penalty ``D_i`` the trainer's KL estimator
(:func:`kl_term`; :mod:`grpo_theory.kl` for the definitions): ``k3(o_i) = pi_ref/pi - log(pi_ref/pi) - 1``
("reverse", GRPO as published), ``rho_i k3(o_i)`` ("direct": TRL's bias-corrected estimator, whose
expectation is KL(pi || pi_ref)), k1, k2, verl's k3+ and abs, with clamps. Placed in the
``"advantage"`` its detached value is subtracted from ``A_i`` (per token: the sum over the rest of
the answer, OpenRLHF's return); placed in the ``"reward"`` the caller shapes the rewards with
:func:`kl_value` before the advantages are formed. At "sequence" level ``pi`` is the probability of the whole
answer (the note's model); at "token" level every token has its own ratio and
k3, and ``loss_type`` aggregates the token terms as TRL and verl do (see :func:`grpo_objective`).
"""

from __future__ import annotations

import math

import torch

from .. import variants
from ..errors import InvalidInputError
from ..problem import LOSS_TYPES, Objective


def group_advantages(rewards: torch.Tensor, normalization: str = "scale", std_ddof: int = 0,
                     std_eps: float = 0.0, variance_eps: float = 0.0) -> torch.Tensor:
    """Advantages over the last axis (the group), shape preserved.

    Parameters
    ----------
    rewards : torch.Tensor, shape (..., G)
        The rewards of each group.
    normalization : {"scale", "shift"}, default "scale"
        ``"scale"``: ``(r_i - mean r)/(std r + std_eps)`` (Eq. 2); ``"shift"``: ``r_i - mean r``.
    std_ddof : {0, 1}, default 0
        The std's degrees of freedom.
    std_eps : float, default 0.0
        Added to the std.
    variance_eps : float, default 0.0
        Added to the variance inside the square root.

    Returns
    -------
    torch.Tensor
        ``A_i``, shaped like ``rewards`` (0 where a group ties with both epsilons 0).
    """
    if rewards.ndim == 0 or rewards.shape[-1] < 2:
        raise InvalidInputError(f"group_advantages needs groups of G >= 2 rewards on the last axis, got shape "
                                f"{tuple(rewards.shape)}")
    if bool(torch.isnan(rewards).any()):
        raise InvalidInputError("group_advantages: the rewards hold a NaN")
    if std_ddof not in (0, 1) or isinstance(std_ddof, bool):
        raise InvalidInputError(f"std_ddof must be 0 or 1, got {std_ddof!r}")
    if not (math.isfinite(std_eps) and std_eps >= 0 and math.isfinite(variance_eps) and variance_eps >= 0):
        raise InvalidInputError(f"std_eps and variance_eps must be finite numbers >= 0, got {std_eps!r} and "
                                f"{variance_eps!r}")
    centred = rewards - rewards.mean(dim=-1, keepdim=True)
    if not variants.lookup("normalization", normalization).scales:
        return centred
    tie = (rewards.amax(dim=-1, keepdim=True) == rewards.amin(dim=-1, keepdim=True))
    # In units of each group's largest deviation s (the advantage is invariant to r -> r/s with the epsilons
    # divided by s and s^2): squared deviations of rewards near 1e-300 or 1e200 neither underflow nor overflow.
    s = centred.abs().amax(dim=-1, keepdim=True)
    s = torch.where(tie | (s == 0), torch.ones_like(s), s)
    unit = centred / s
    var = torch.where(tie, torch.zeros_like(unit[..., :1]), unit.var(dim=-1, correction=std_ddof, keepdim=True))
    denom = torch.sqrt(var + variance_eps / s / s) + std_eps / s
    safe = torch.where(denom > 0, denom, torch.ones_like(denom))
    return torch.where(denom > 0, torch.where(tie, torch.zeros_like(unit), unit) / safe, torch.zeros_like(unit))


def kl_value(logp: torch.Tensor, logp_ref: torch.Tensor, estimator: str, log_ratio_clamp: float | None = None,
             value_clamp: float | None = None) -> torch.Tensor:
    """The estimator's value per entry, clamped as verl/OpenRLHF clamp it (gradient 0 where clipped)."""
    entry = variants.lookup("kl_estimator", estimator)     # its torch_value (grpo_theory.variants)
    x = logp_ref - logp                                    # verl's kl = ref_logprob - logprob
    if log_ratio_clamp is not None:
        x = torch.clamp(x, -log_ratio_clamp, log_ratio_clamp)
    v = entry.torch_value(x)
    return v if value_clamp is None else torch.clamp(v, -value_clamp, value_clamp)


def kl_term(logp: torch.Tensor, logp_old: torch.Tensor, logp_ref: torch.Tensor, estimator: str,
            log_ratio_clamp: float | None = None, value_clamp: float | None = None,
            ratio: torch.Tensor | None = None) -> torch.Tensor:
    """The differentiable KL loss term: the value, times the ratio for ``k3_ratio`` (TRL), with the k2
    gradient for ``k3_plus`` (verl's straight-through ``k3+``). ``ratio``: the importance ratio to use for
    ``k3_ratio`` (TRL multiplies by its ``coef_1``, the sequence-level one under
    ``importance_sampling_level="sequence"``); default the per-entry ``pi/pi_old``."""
    v = kl_value(logp, logp_ref, estimator, log_ratio_clamp, value_clamp)
    entry = variants.lookup("kl_estimator", estimator)
    if entry.ratio_weighted:
        return (torch.exp(logp - logp_old) if ratio is None else ratio) * v
    if entry.straight_through:
        k2 = 0.5 * (logp - logp_ref) ** 2
        return k2 - k2.detach() + v.detach()
    return v


def grpo_objective(obj: Objective, logp: torch.Tensor, logp_old: torch.Tensor, logp_ref: torch.Tensor,
                   advantages: torch.Tensor, *, clip_eps: float = 0.2, mask: torch.Tensor | None = None,
                   group_mask: torch.Tensor | None = None,
                   entropy: torch.Tensor | None = None) -> tuple[torch.Tensor, dict]:
    """GRPO objective (to be maximised) and diagnostics, every option taken from the
    :class:`~grpo_theory.Objective` ``obj`` (the objective crosses into torch whole): ``beta``, ``level``,
    ``loss_type``, ``groups_per_batch``, the KL estimator (:attr:`~grpo_theory.Objective.estimator`), its
    placement and clamps, ``entropy_coef`` and ``importance_level``.

    Parameters
    ----------
    obj : Objective
        The objective.
    logp, logp_old, logp_ref : torch.Tensor
        (n_q, groups, G, T) token log-probabilities of the sampled answers under the current, old and
        reference policies (0 past an answer's end).
    advantages : torch.Tensor
        (n_q, groups, G).
    clip_eps : float, default 0.2
        The ratio clip, a training setting (not part of the objective).
    mask : torch.Tensor, optional
        (n_q, groups, G, T), 1 on real tokens (default: all).
    group_mask : torch.Tensor, optional
        (n_q, groups, G): 0 drops a member's terms (tied-group filtering, :func:`tie_mask` of the rewards
        where ``obj.filter_ties``); the normalisers stay as they are (TRL-style masking; DAPO's refill only
        rescales the whole gradient).
    entropy : torch.Tensor, optional
        (n_q, groups, G, T): the entropy of the next-token distribution at each position
        (:func:`grpo_theory.training.policy.answer_token_entropies`, differentiable); needed where
        ``obj.entropy_coef > 0``.

    Returns
    -------
    (objective, diagnostics)
        The scalar objective and ``{"k3": ..., "clip_fraction": ...}`` (detached).

    Notes
    -----
    At ``level="sequence"`` ratio and penalty are per answer and the objective is the mean over members.
    At ``level="token"`` they are per token, and ``loss_type`` aggregates them (the names of TRL and
    verl, see :data:`grpo_theory.problem.LOSS_TYPES`): ``answer_mean`` kinds average over each
    answer's tokens, then over members; ``token_sum`` kinds sum over tokens, then average over
    members; ``batch_token_mean`` kinds divide the sum over the tokens of each chunk of
    ``groups_per_batch`` groups of a question (``math.inf``: the whole batch) by that chunk's token count,
    a sampled constant (detached), then average over chunks. ``entropy_coef`` times the entropy is added to
    each token's term and aggregated with it (verl ``actor.entropy_coeff``: ``agg_loss`` of the entropy with
    the same ``loss_agg_mode``; OpenRLHF ``entropy_loss_coef``); at sequence level an answer's term is the
    sum over its positions. ``importance_level="sequence"``: GSPO's ratio, ``exp`` of the mean over an
    answer's tokens of ``log(pi/pi_old)``, one per answer and broadcast to its tokens, also in the
    ``k3_ratio`` penalty (TRL ``importance_sampling_level="sequence"``: ``coef_1``).
    """
    if not isinstance(obj, Objective):
        raise InvalidInputError(f"obj must be a grpo_theory.Objective, got {type(obj).__name__}")
    beta, entropy_coef, kl_estimator = obj.beta, obj.entropy_coef, obj.estimator
    if mask is None:
        mask = torch.ones_like(logp)
    per_answer_ratio = obj.importance_variant.per_answer
    if entropy_coef and entropy is None:
        raise InvalidInputError("entropy_coef > 0 needs the per-position entropies (entropy=)")
    seq_log_ratio = None
    if per_answer_ratio:          # TRL: (log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1)
        seq_log_ratio = ((logp - logp_old) * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1.0)
    if entropy_coef:
        entropy = entropy * mask
    per_token = obj.level_variant.per_token
    if not per_token:
        if entropy_coef:
            entropy = entropy.sum(-1, keepdim=True)
        logp, logp_old, logp_ref = (x.sum(-1, keepdim=True) for x in (logp, logp_old, logp_ref))
        mask = torch.ones_like(logp)
    placement = obj.placement_variant
    clamps = (obj.kl_log_ratio_clamp, obj.kl_value_clamp)
    adv = advantages.unsqueeze(-1) * torch.ones_like(logp)
    if placement.in_advantage:
        # the detached value leaves each token's advantage; per token the sum over the rest of the
        # answer (OpenRLHF's return with gamma = 1), which for one token is its own value
        v = (kl_value(logp_old, logp_ref, kl_estimator, *clamps) * mask).detach()
        adv = adv - beta * torch.flip(torch.cumsum(torch.flip(v, [-1]), -1), [-1])
    ratio = torch.exp(logp - logp_old) if seq_log_ratio is None else torch.exp(seq_log_ratio).expand_as(logp)
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    log_ref_ratio = logp_ref - logp
    k3 = torch.exp(log_ref_ratio) - log_ref_ratio - 1.0
    # k3_ratio's ratio: GSPO's sequence-level one is passed; the per-token one is left to kl_term to form
    # again, as before GSPO's option existed. The same values, but sharing ``ratio`` with the surrogate changes
    # the gradient's last bit, and one flipped sample later a run forks from its committed trajectory (issue 20).
    pen = (kl_term(logp, logp_old, logp_ref, kl_estimator, *clamps,
                   ratio=None if seq_log_ratio is None else ratio) if placement.in_loss else 0.0)
    terms = (surrogate - beta * pen) * mask
    if entropy_coef:
        terms = terms + entropy_coef * entropy
    if group_mask is not None:          # filtered (tied) groups leave the loss, penalty included (issue 22)
        terms = terms * group_mask.unsqueeze(-1)
    # the loss type's own kind: a batch-normalised one over the whole batch keeps its sampled token count here
    # (Objective.aggregation reports it as "token_sum", the same stationary points, not the same loss)
    kind = variants.lookup("aggregation", LOSS_TYPES[obj.loss_type] if per_token else "answer_mean")
    if kind.answer_mean:
        objective = (terms.sum(-1) / mask.sum(-1)).mean()
    elif not kind.batch_normalised:
        objective = terms.sum(-1).mean()
    else:
        n_q, groups = terms.shape[:2]
        whole = math.isinf(obj.groups_per_batch)
        chunk = groups if whole else int(obj.groups_per_batch)
        if groups % chunk:
            raise InvalidInputError(f"groups_per_batch={chunk} must divide the groups per question ({groups})")
        if whole:
            objective = terms.sum() / mask.sum().detach()
        else:
            t = terms.reshape(n_q, groups // chunk, -1).sum(-1)
            m = mask.reshape(n_q, groups // chunk, -1).sum(-1).detach()
            objective = (t / m).mean()
    real = mask > 0
    clipped = ((ratio - 1).abs() > clip_eps)[real].float().mean()
    return objective, {"k3": k3[real].mean().detach(), "clip_fraction": clipped.detach()}


def shaped_rewards(rewards: torch.Tensor, obj, logp_old: torch.Tensor, logp_ref: torch.Tensor,
                   mask: torch.Tensor) -> torch.Tensor:
    """``rewards`` less ``beta`` times the KL value of each answer where ``obj`` puts the KL in the reward (verl's
    ``use_kl_in_reward``: the sum of the per-token values at token level), else ``rewards`` itself.

    Parameters
    ----------
    rewards : torch.Tensor
        (n_q, groups, G) rewards.
    obj : Objective
        The objective (``kl_placement``, ``level``, the estimator and its clamps, ``beta``).
    logp_old, logp_ref : torch.Tensor
        (n_q, groups, G, T) token log-probabilities under the old and reference policies.
    mask : torch.Tensor
        (n_q, groups, G, T), 1 on real tokens.

    Returns
    -------
    torch.Tensor
        The rewards the advantages are formed from.
    """
    if not obj.placement_variant.in_reward:
        return rewards
    clamps = (obj.kl_log_ratio_clamp, obj.kl_value_clamp)
    if not obj.level_variant.per_token:
        v = kl_value(logp_old.sum(-1), logp_ref.sum(-1), obj.estimator, *clamps)
    else:
        v = (kl_value(logp_old, logp_ref, obj.estimator, *clamps) * mask).sum(-1)
    return rewards - obj.beta * v


# ----------------------------------------------------------------------------- the GRPO family (issue 22)

def advantages_for(rewards: torch.Tensor, obj) -> torch.Tensor:
    """The sampled advantages of ``rewards`` (n_q, groups, G) for ``obj``'s estimator: its registry entry's
    ``torch_advantages`` (:mod:`grpo_theory.variants`), the trainer's one call.

    Parameters
    ----------
    rewards : torch.Tensor
        (n_q, groups, G) rewards, the groups of each question along the middle axis.
    obj : Objective
        The objective (its ``advantage`` and that estimator's fields).

    Returns
    -------
    torch.Tensor
        Advantages of the shape of ``rewards``.
    """
    return obj.advantage_variant.hook("torch_advantages")(rewards, obj)


def group_advantages_for(rewards: torch.Tensor, obj) -> torch.Tensor:
    """The group advantage (Eq. 2 with ``obj``'s normalisation, ddof and epsilons): :func:`group_advantages`."""
    return group_advantages(rewards, obj.normalization, obj.std_ddof, obj.std_eps, obj.variance_eps)


def rloo_advantages(rewards: torch.Tensor, obj=None) -> torch.Tensor:
    """``r_i`` minus the mean of the other members (verl ``compute_rloo_outcome_advantage``)."""
    G = rewards.shape[-1]
    return (rewards - rewards.mean(dim=-1, keepdim=True)) * G / (G - 1)


def reinforce_pp_advantages(rewards: torch.Tensor, obj=None) -> torch.Tensor:
    """The group mean removed, then whitened over all groups of the same question (verl
    ``reinforce_plus_plus_baseline`` whitens over the whole batch; per question is what the per-question theory
    models)."""
    centred = rewards - rewards.mean(dim=-1, keepdim=True)
    flat = centred.flatten(1)
    sd = (flat - flat.mean(1, keepdim=True)).pow(2).mean(1).sqrt()                      # per question
    sd = sd.view(-1, *([1] * (centred.dim() - 1)))
    return torch.where(sd > 0, (centred - flat.mean(1).view_as(sd)) / torch.where(sd > 0, sd, 1.0),
                       torch.zeros_like(centred))


def pass_at_k_advantages(rewards: torch.Tensor, obj) -> torch.Tensor:
    """arXiv 2508.10751 Eqs. 14-15 for 0/1 rewards (the top reward of the group passes), ``k = obj.pass_k``."""
    G = rewards.shape[-1]
    k = int(obj.pass_k)
    top = rewards.amax(dim=-1, keepdim=True)
    passed = rewards == top
    tie = rewards.amin(dim=-1, keepdim=True) == top
    n_fail = (~passed).sum(-1, keepdim=True).to(rewards.dtype)

    def comb(n, r):                                     # C(n, r) for a tensor n, 0 where n < r
        out = torch.lgamma(n + 1) - torch.lgamma(n - r + 1) - math.lgamma(r + 1)
        return torch.where(n >= r, torch.exp(out), torch.zeros_like(n))
    p_fail = comb(n_fail, k) / math.comb(G, k)
    p_cond = comb(n_fail - 1, k - 1) / math.comb(G - 1, k - 1)
    sd = torch.sqrt(torch.clamp(p_fail * (1 - p_fail), min=0.0))
    ok = (sd > 0) & ~tie
    safe = torch.where(ok, sd, torch.ones_like(sd))
    adv = torch.where(passed, p_fail / safe, (p_fail - p_cond) / safe)
    return torch.where(ok, adv, torch.zeros_like(adv))


def family_advantages(rewards: torch.Tensor, advantage: str = "group", *, pass_k: int | None = None,
                      normalization: str = "scale", std_ddof: int = 0, std_eps: float = 0.0,
                      variance_eps: float = 0.0) -> torch.Tensor:
    """Advantages of ``rewards`` (n_q, groups, G) for each estimator of :mod:`grpo_theory.advantage`, its fields
    given loosely: :func:`advantages_for` of the :class:`~grpo_theory.problem.Objective` they make (kept for
    callers that hold the fields, not the objective)."""
    obj = Objective(beta=1.0, group_size=max(2, rewards.shape[-1]), advantage=advantage, pass_k=pass_k,
                    normalization=normalization, std_ddof=std_ddof, std_eps=std_eps, variance_eps=variance_eps)
    return advantages_for(rewards, obj)


def tie_mask(rewards: torch.Tensor) -> torch.Tensor:
    """1 for groups (last axis) whose rewards do not all tie, 0 for tied ones (DAPO's filter, TRL's masking)."""
    return (rewards.amax(dim=-1, keepdim=True) != rewards.amin(dim=-1, keepdim=True)).to(rewards.dtype) \
        .expand_as(rewards)
