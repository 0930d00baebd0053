"""The policy of a language model over a task's answer set.

``answer_logprobs`` scores every answer of every question by teacher forcing, with
decoding restricted to the answer set (at each position, the softmax is taken
over the tokens that continue some answer with the same prefix). For
single-token answers this is one forward pass per question, which gives the
probability of every group member at once; ``generate`` instead samples answers
token by token, one forward pass per generated token, as a generic trainer does.
"""

from __future__ import annotations

from functools import lru_cache

import torch

from .tasks import QATask


@lru_cache(maxsize=32)
def _plan(answers: tuple) -> tuple:
    """For each answer position t: the distinct prefixes, and for each prefix the allowed tokens.

    Returns a tuple over t of (prefixes, allowed, index) where prefixes is a tuple of the token
    tuples of length t that some longer answer extends, allowed[j] the tokens allowed after prefix
    j, and index[k] = (prefix id of answer k, position of its token in allowed[prefix]), or None
    when answer k has ended before position t (answers may differ in length; the set is prefix-free).
    """
    plan = []
    for t in range(max(len(a) for a in answers)):
        live = [a for a in answers if len(a) > t]
        prefixes = tuple(dict.fromkeys(a[:t] for a in live))
        allowed = tuple(tuple(dict.fromkeys(a[t] for a in live if a[:t] == pre)) for pre in prefixes)
        index = tuple(None if len(a) <= t else
                      (prefixes.index(a[:t]), allowed[prefixes.index(a[:t])].index(a[t])) for a in answers)
        plan.append((prefixes, allowed, index))
    return tuple(plan)


def _same_length_logprobs(model, prompts: torch.Tensor, answers: tuple) -> torch.Tensor:
    """Token log-probabilities of every answer for a batch of prompts of one length.

    Positions past an answer's end are 0 (log 1): sums over the last axis are sequence
    log-probabilities, and :func:`answer_token_mask` says which positions are real tokens.
    """
    device = prompts.device
    n_q = prompts.shape[0]
    n_a, length = len(answers), max(len(a) for a in answers)
    out = torch.zeros(n_q, n_a, length, device=device)
    for t, (prefixes, allowed, index) in enumerate(_plan(answers)):
        # one forward pass per (question, prefix): prompt + prefix, read the last position
        seq = torch.cat([prompts.repeat_interleave(len(prefixes), 0),
                         torch.tensor([list(p) for p in prefixes] * n_q, dtype=torch.long, device=device)
                         .view(n_q * len(prefixes), t)], dim=1) if t else prompts
        logits = model(seq)[:, -1, :].float()                             # (n_q * n_prefix, V)
        logits = logits.view(n_q, len(prefixes), -1)
        for j, toks in enumerate(allowed):
            lp = torch.log_softmax(logits[:, j, list(toks)], dim=-1)      # restricted to allowed tokens
            for k, slot in enumerate(index):
                if slot is not None and slot[0] == j:
                    out[:, k, t] = lp[:, slot[1]]
    return out


def answer_token_entropies(token_logp: torch.Tensor, answers: tuple) -> torch.Tensor:
    """Exact entropy of the (restricted) next-token distribution at each position of each answer.

    Parameters
    ----------
    token_logp : (..., n_answers, T) tensor
        :func:`answer_token_logprobs` (differentiable; 0 past an answer's end).
    answers : tuple of token tuples
        The task's answer set (prefix-free).

    Returns
    -------
    (..., n_answers, T) tensor: ``H_t(k) = -sum_c pi(c | prompt, a_k[:t]) log pi(c | prompt, a_k[:t])`` over the
    tokens ``c`` allowed after answer ``k``'s prefix of length ``t`` (the distribution decoding samples from), 0
    past the answer's end. Every allowed token continues some answer, whose log-probability at ``t`` is read
    from ``token_logp``, so no further forward pass is needed. For single-token answers every entry of a
    question is the entropy of its answer distribution.

    Examples
    --------
    >>> import math, torch
    >>> lp = torch.log(torch.tensor([[[0.5], [0.5]]]))
    >>> round(float(answer_token_entropies(lp, ((7,), (8,)))[0, 0, 0]), 6) == round(math.log(2), 6)
    True
    """
    out = torch.zeros_like(token_logp)
    for t, (_prefixes, allowed, index) in enumerate(_plan(answers)):
        for j, toks in enumerate(allowed):
            # one representative answer per allowed token after prefix j: its log-probability at t
            reps = [next(k for k, slot in enumerate(index) if slot == (j, c)) for c in range(len(toks))]
            lp = token_logp[..., reps, t]
            h = -(torch.exp(lp) * lp).sum(-1)
            for k, slot in enumerate(index):
                if slot is not None and slot[0] == j:
                    out[..., k, t] = h
    return out


def answer_token_mask(answers: tuple, device=None) -> torch.Tensor:
    """(n_answers, max length) float mask: 1 where answer k has a token at position t."""
    length = max(len(a) for a in answers)
    return torch.tensor([[1.0] * len(a) + [0.0] * (length - len(a)) for a in answers], device=device)


def answer_token_logprobs(model, task: QATask, device=None, question_idx=None) -> torch.Tensor:
    """``log pi(token_t | prompt, answer[:t])`` for every question, answer and position.

    Returns a tensor (n_questions, n_answers, longest answer), differentiable w.r.t. the
    model, 0 past an answer's end. The sequence log-probability is the sum over the last axis. Questions
    whose prompts have the same length are scored in one batch (no padding needed).

    Parameters
    ----------
    model : TinyGPT
        The policy.
    task : QATask
        The questions and their answer set.
    device : torch.device or str, optional
        Where to score (default: the model's).
    question_idx : sequence of int, optional
        The questions scored (default all), in that order.
    """
    device = device or next(model.parameters()).device
    qs = list(range(task.n_questions)) if question_idx is None else list(question_idx)
    by_length: dict[int, list[int]] = {}
    for row, q in enumerate(qs):
        by_length.setdefault(len(task.prompts[q]), []).append(row)
    parts, order = [], []
    for rows in by_length.values():
        prompts = torch.tensor([task.prompts[qs[r]] for r in rows], dtype=torch.long, device=device)
        parts.append(_same_length_logprobs(model, prompts, task.answers))
        order += rows
    out = torch.cat(parts, dim=0)
    if order != sorted(order):
        out = out[torch.tensor(sorted(range(len(order)), key=order.__getitem__), device=device)]
    return out


def answer_logprobs(model, task: QATask, device=None, question_idx=None) -> torch.Tensor:
    """``log pi(answer | prompt)`` (n_questions, n_answers).

    Parameters
    ----------
    model : TinyGPT
        The policy, as for :func:`answer_token_logprobs`.
    task : QATask
        Its questions and answer set.
    device, question_idx
        As for :func:`answer_token_logprobs`, whose last axis this sums.
    """
    return answer_token_logprobs(model, task, device, question_idx).sum(-1)


@torch.no_grad()
def generate(model, task: QATask, n_samples: int, generator: torch.Generator | None = None,
             device=None) -> torch.Tensor:
    """Sample ``n_samples`` answers per question token by token (restricted decoding).

    One forward pass per sample and token, as a trainer that generates each group
    member does. Returns answer indices (n_questions, n_samples).

    Parameters
    ----------
    model : TinyGPT
        The policy sampled.
    task : QATask
        The questions and their answer set.
    n_samples : int
        Answers sampled per question.
    generator : torch.Generator, optional
        The sampler's random generator.
    device : torch.device or str, optional
        Where to score (default: the model's).
    """
    device = device or next(model.parameters()).device
    answers = task.answers
    complete = set(answers)
    plan = _plan(answers)
    out = torch.empty(task.n_questions, n_samples, dtype=torch.long)
    for q, prompt in enumerate(task.prompts):
        for s in range(n_samples):
            prefix: tuple = ()
            for prefixes, allowed, _ in plan:
                if prefix in complete:                    # this answer has ended (e.g. at its end token)
                    break
                ids = torch.tensor([list(prompt) + list(prefix)], dtype=torch.long, device=device)
                logits = model(ids)[0, -1]
                toks = allowed[prefixes.index(prefix)]
                probs = torch.softmax(logits[list(toks)], dim=-1)
                prefix = prefix + (toks[int(torch.multinomial(probs.cpu(), 1, generator=generator))],)
            out[q, s] = answers.index(prefix)
    return out
