"""The measured kernel between prompts: the empirical neural tangent kernel of per-prompt scores.

With shared weights ``theta``, an update on prompt ``j`` moves every prompt's score. For a score
``z_i(theta)`` per prompt (the logit of its P(correct), or the log-probability of its answer), a
gradient step ``theta -> theta - lr grad L`` on a loss ``L = f(z_j)`` changes ``z_i`` by

    dz_i = -lr K_ij f'(z_j) + O(lr^2),      K_ij = <grad_theta z_i, grad_theta z_j>,

the inner product taken over the parameters the trainer trains. ``K`` (N x N) is the Gram matrix of
the per-prompt gradients ``g_i = grad_theta z_i`` at the base model: symmetric and positive
semi-definite by construction. :func:`measure_kernel` computes it from any score function;
:func:`gpt_scores` gives the scores of the small GPT of :mod:`grpo_theory.training` on a
:class:`~grpo_theory.training.QATask` (restricted decoding, P(correct) exact), and
:func:`free_generation_scores` those of SmolLM2 with its last MLP trained (the free-generation
study's policy, :mod:`grpo_theory.studies.free`), where P(correct) has no closed form and the score
is the log-probability that a completion *starts with* the answer's tokens (teacher forcing, the
full vocabulary, temperature 1): the completions the verifier accepts are mostly of this form.

**Adam.** An Adam step does not move the weights along the gradient: it moves them by ``-lr P g`` with
``P = diag(1 / (sqrt(v_hat) + eps))`` from the optimiser's second-moment state ``v`` (``v_hat = v / (1 -
beta2^t)``; with momentum the step is a running average of ``P g`` over the last ``~1/(1 - beta1)`` steps, the
same ``P g`` while the gradients change slowly). The kernel such a step applies is ``K_ij = g_i^T P g_j``:
:func:`adam_preconditioner` reads ``P`` from a ``torch.optim.Adam`` (or ``AdamW``) and
``measure_kernel(..., preconditioner=P)`` computes that kernel.

torch is imported inside the functions (``import grpo_theory`` stays torch-free).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import POSITIVE_COUNT, checked, function, instance, items, one_of
from ..errors import InvalidInputError
from ..training.policy import answer_logprobs
from ..training.tasks import QATask

__all__ = ["MeasuredKernel", "measure_kernel", "adam_preconditioner", "gpt_scores", "free_generation_scores",
           "first_token_scores", "trainable_parameters"]

#: The score kinds: ``"logit"`` is logit P(correct), ``"logprob"`` is log P(correct).
KINDS = ("logit", "logprob")


@dataclass(frozen=True)
class MeasuredKernel:
    """The kernel between prompts at one model, as :func:`measure_kernel` returns it.

    Attributes
    ----------
    K : numpy.ndarray, shape (N, N)
        ``K_ij = <grad z_i, grad z_j>`` over the trained parameters (float64), or ``g_i^T P g_j`` with a
        preconditioner ``P``.
    z : numpy.ndarray, shape (N,)
        The scores ``z_i`` at the model.
    kind : str
        ``"logit"`` or ``"logprob"``.
    n_params : int
        The number of trained parameters the gradients run over.
    seconds : float
        Wall-clock time of all N gradients.
    preconditioned : bool
        Whether ``K`` carries a preconditioner (e.g. Adam's, :func:`adam_preconditioner`).
    """

    K: np.ndarray
    z: np.ndarray
    kind: str
    n_params: int
    seconds: float
    preconditioned: bool = False

    @property
    def seconds_per_prompt(self) -> float:
        """Wall-clock time per prompt's gradient (the Gram product is included and negligible)."""
        return self.seconds / max(len(self.z), 1)

    def normalised(self) -> np.ndarray:
        """The correlation form ``K_ij / sqrt(K_ii K_jj)`` (1 on the diagonal; NaN where a gradient is 0)."""
        d = np.sqrt(np.diag(self.K))
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.K / np.outer(d, d)

    def correlation_range(self) -> str:
        """The off-diagonal entries of :meth:`normalised`, in words: ``"median m, range lo..hi"``."""
        C = self.normalised()
        off = C[~np.eye(len(C), dtype=bool)]
        return f"median {np.median(off):.3f}, range {off.min():.3f}..{off.max():.3f}"


_MODEL = instance(torch.nn.Module, "a torch.nn.Module")
_PARAMS = items(torch.nn.Parameter, "torch parameters (torch.nn.Parameter)")


@checked(model=_MODEL)
def trainable_parameters(model) -> list:
    """The parameters a trainer moves: those of ``model`` with ``requires_grad``.

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    list of torch.nn.Parameter
        Those with ``requires_grad``, in ``model.parameters()``'s order.
    """
    return [p for p in model.parameters() if p.requires_grad]


@checked(score=function(), params=_PARAMS, n_prompts=POSITIVE_COUNT, kind=one_of(*KINDS))
def measure_kernel(score: Callable[[int], object], params, n_prompts: int, *, kind: str = "logit",
                   preconditioner=None) -> MeasuredKernel:
    """The Gram matrix of the per-prompt score gradients over ``params``: ``K_ij = g_i^T P g_j``.

    Parameters
    ----------
    score : callable
        ``score(i)`` returns prompt ``i``'s scalar score ``z_i`` as a torch tensor, differentiable in
        ``params`` (e.g. :func:`gpt_scores`, :func:`free_generation_scores`).
    params : sequence of torch.nn.Parameter
        The trained parameters (the kernel's inner product runs over them).
    n_prompts : int
        ``N``.
    kind : str
        What ``score`` returns (recorded): ``"logit"`` or ``"logprob"``.
    preconditioner : array_like, shape (n_params,), optional
        The diagonal ``P`` of a preconditioned step ``-lr P g`` over ``params`` flattened in their order
        (e.g. :func:`adam_preconditioner`), finite and ``>= 0``; None: ``P = I`` (plain gradient steps).

    Returns
    -------
    MeasuredKernel
        ``K`` (``N x N``) with the scores ``z``, their kind, the parameter count and the time taken.

    Raises
    ------
    InvalidInputError
        If ``n_prompts < 1``, ``params`` is empty, ``kind`` is unknown, a score is not a finite scalar, or
        ``preconditioner`` is not ``n_params`` finite numbers ``>= 0``.
    """
    params = list(params)
    if n_prompts < 1 or not params or kind not in KINDS:
        raise InvalidInputError(f"need n_prompts >= 1, trainable parameters and kind in {KINDS}; got "
                                f"n_prompts={n_prompts!r}, {len(params)} parameters, kind={kind!r}")
    n_params = sum(p.numel() for p in params)
    P = None
    if preconditioner is not None:
        P = torch.as_tensor(np.asarray(preconditioner, dtype=np.float64).reshape(-1))
        if P.numel() != n_params or not bool(torch.isfinite(P).all()) or bool((P < 0).any()):
            raise InvalidInputError(f"preconditioner must hold {n_params} finite numbers >= 0 (one per trained "
                                    f"parameter), got {P.numel()} values")
    grads = torch.empty(n_prompts, n_params, dtype=torch.float64)
    z = np.empty(n_prompts)
    t0 = time.perf_counter()
    for i in range(n_prompts):
        zi = score(i)
        if zi.numel() != 1 or not torch.isfinite(zi).all():
            raise InvalidInputError(f"score({i}) must be a finite scalar, got {zi!r}")
        g = torch.autograd.grad(zi.reshape(()), params, allow_unused=True)
        grads[i] = torch.cat([(torch.zeros_like(p) if gi is None else gi).reshape(-1).double()
                              for gi, p in zip(g, params)])
        z[i] = float(zi.detach())
    K = (grads @ (grads if P is None else grads * P).T).numpy()
    K = 0.5 * (K + K.T)
    return MeasuredKernel(K=K, z=z, kind=kind, n_params=n_params, seconds=time.perf_counter() - t0,
                          preconditioned=P is not None)


@checked(optimizer=instance(torch.optim.Optimizer, "a torch optimiser (Adam or AdamW)"), params=_PARAMS)
def adam_preconditioner(optimizer, params) -> np.ndarray:
    """Adam's diagonal preconditioner ``P`` over ``params``, from the optimiser's state.

    ``torch.optim.Adam`` (and ``AdamW``) moves a parameter by ``-lr m_hat / (sqrt(v_hat) + eps)``,
    ``m_hat = m / (1 - beta1^t)``, ``v_hat = v / (1 - beta2^t)`` (``v`` the running mean of squared
    gradients, ``max v`` with ``amsgrad``). With ``beta1 = 0`` the step is exactly ``-lr P g`` with

        P = 1 / (sqrt(v_hat) + eps),

    taken from the state after the step's own update of ``v``; with momentum it is a running average of
    ``P g``. ``P`` is read here from the state as it is now: the preconditioner of the last step taken.
    The weight decay of AdamW does not depend on the gradient and is not part of ``P``.

    Parameters
    ----------
    optimizer : torch.optim.Adam or torch.optim.AdamW
        An optimiser that has taken at least one step on every one of ``params``.
    params : sequence of torch.nn.Parameter
        The parameters, in the order :func:`measure_kernel` flattens them.

    Returns
    -------
    numpy.ndarray, shape (n_params,)
        ``P`` (float64), for ``measure_kernel(..., preconditioner=P)``.

    Raises
    ------
    InvalidInputError
        If ``params`` is empty, a parameter is not in the optimiser, has no second-moment state (no step
        taken, or not an Adam-type optimiser), or the parameters' groups have different learning rates
        (``P`` would then not be one diagonal times one ``lr``).
    """
    params = list(params)
    if not params:
        raise InvalidInputError("adam_preconditioner needs at least one parameter, got none")
    group_of = {id(p): g for g in optimizer.param_groups for p in g["params"]}
    lrs = {float(group_of[id(p)]["lr"]) for p in params if id(p) in group_of}
    if len(lrs) > 1:
        raise InvalidInputError(f"the parameters' optimiser groups have different learning rates {sorted(lrs)}: "
                                "one diagonal P cannot represent the step")
    out = []
    for k, p in enumerate(params):
        g = group_of.get(id(p))
        st = optimizer.state.get(p, {})
        if g is None or "exp_avg_sq" not in st or "step" not in st or "betas" not in g:
            raise InvalidInputError(f"parameter {k} (shape {tuple(p.shape)}) has no Adam state in "
                                    f"{type(optimizer).__name__}: take an Adam step first")
        t = float(st["step"])
        v = st["max_exp_avg_sq"] if g.get("amsgrad") else st["exp_avg_sq"]
        bc2 = 1.0 - float(g["betas"][1]) ** t
        out.append((1.0 / (v.detach().double().sqrt() / np.sqrt(bc2) + float(g["eps"]))).reshape(-1))
    return torch.cat(out).numpy()


def _score_from_logp(lp_correct, lp_rest, kind: str):
    """``log P`` or ``logit P`` from the log-probabilities of the correct and the other answers."""
    log_p = torch.logsumexp(lp_correct, 0)
    if kind == "logprob":
        return log_p
    return log_p - torch.logsumexp(lp_rest, 0)


@checked(model=_MODEL, task=instance(QATask, "a QATask"), kind=one_of(*KINDS))
def gpt_scores(model, task, *, kind: str = "logit", correct=None) -> Callable[[int], object]:
    """Scores of the small GPT (or any model :func:`~grpo_theory.training.policy.answer_logprobs` takes).

    Parameters
    ----------
    model : torch.nn.Module
        ``forward(idx) -> logits``; the policy is restricted decoding over the task's answers.
    task : grpo_theory.training.QATask
        Prompts and answers.
    kind : str
        ``"logit"``: ``z_i = log P_i - log (1 - P_i)`` with ``P_i`` the probability of the correct
        answers (exact: the restricted answer distribution sums to 1); ``"logprob"``: ``log P_i``.
    correct : array_like of bool, shape (n_questions, n_answers), optional
        Which answers count as correct; default: those with the question's highest reward.

    Returns
    -------
    callable
        ``score(i)``, a scalar torch tensor.

    Raises
    ------
    InvalidInputError
        If ``kind`` is unknown, or a question has no correct answer or (for ``"logit"``) no other one.
    """
    rewards = np.asarray(task.rewards, dtype=float)
    mask = rewards == rewards.max(1, keepdims=True) if correct is None else np.asarray(correct, dtype=bool)
    if kind not in KINDS or mask.shape != rewards.shape:
        raise InvalidInputError(f"kind must be one of {KINDS} and correct of shape {rewards.shape}; got "
                                f"kind={kind!r}, correct of shape {mask.shape}")
    if not mask.any(1).all() or (kind == "logit" and mask.all(1).any()):
        raise InvalidInputError("every question needs a correct answer (and, for kind='logit', a wrong one)")

    def score(i: int):
        lp = answer_logprobs(model, task, question_idx=[i])[0]
        return _score_from_logp(lp[mask[i]], lp[~mask[i]], kind)

    return score


def _check_last_mlp(name: str, model, prompts, per_prompt, kind: str, what: str) -> None:
    """The checks the SmolLM2 scores share: a model training its last MLP, ``kind`` known, one non-empty
    ``what`` per prompt."""
    if getattr(model, "k", None) != 0:
        raise InvalidInputError(f"{name} needs FrozenTrunkLM(..., trainable='last-mlp')")
    if kind not in KINDS or len(prompts) != len(per_prompt) or any(len(a) == 0 for a in per_prompt):
        raise InvalidInputError(f"need kind in {KINDS}, one non-empty {what} per prompt; got kind={kind!r}, "
                                f"{len(prompts)} prompts and {len(per_prompt)} {what}s")


@checked(model=_MODEL, kind=one_of(*KINDS))
def free_generation_scores(model, prompts, answer_tokens, *, kind: str = "logprob") -> Callable[[int], object]:
    """Scores of SmolLM2 with its last MLP trained: the completion starts with the answer's tokens.

    ``log P_i = sum_t log pi(a_t | prompt_i, a_<t)`` over the answer's tokens ``a`` (full vocabulary,
    temperature 1, as the free-generation study samples), through
    :meth:`~grpo_theory.training.smollm.FrozenTrunkLM.head_from_h0`: the trunk's ``h0`` is a function of
    the tokens alone, so only the last MLP carries gradients.

    Parameters
    ----------
    model : grpo_theory.training.smollm.FrozenTrunkLM
        With ``trainable="last-mlp"``.
    prompts : sequence of sequence of int
        The chat-templated prompt tokens (``grpo_theory.training.smollm.chat_prompt``).
    answer_tokens : sequence of sequence of int
        Each prompt's answer as the tokens a completion starts with.
    kind : str
        ``"logprob"`` (``log P_i``) or ``"logit"`` (``log P_i - log(1 - P_i)``).

    Returns
    -------
    callable
        ``score(i)``, a scalar torch tensor differentiable in the last MLP's weights.

    Raises
    ------
    InvalidInputError
        If the lengths differ, an answer is empty, ``kind`` is unknown, or the model is not "last-mlp".
    """
    _check_last_mlp("free_generation_scores", model, prompts, answer_tokens, kind, "answer")

    def score(i: int):
        prompt, ans = list(prompts[i]), list(answer_tokens[i])
        h0 = torch.cat([model.features(torch.tensor([prompt + ans[:t]])) for t in range(len(ans))])
        lp = torch.log_softmax(model.head_from_h0(h0), -1)
        log_p = lp[torch.arange(len(ans)), torch.tensor(ans)].sum()
        if kind == "logprob":
            return log_p
        return log_p - torch.log(-torch.expm1(log_p))

    return score


@checked(model=_MODEL, kind=one_of(*KINDS))
def first_token_scores(model, prompts, token_sets, *, kind: str = "logit") -> Callable[[int], object]:
    """Scores of SmolLM2 with its last MLP trained: the completion's first token is one of a set.

    ``P_i = sum_{t in S_i} pi(t | prompt_i)`` (full vocabulary, temperature 1), e.g. ``S_i`` every token
    whose text the verifier reads as the answer (``"Yes"``, ``"yes"``, ``" Yes"``, ``"YES"``, ...). One
    position a prompt: the trunk's ``h0`` at the prompt's last token, the last MLP, the unembedding.

    Parameters
    ----------
    model, prompts
        As for :func:`free_generation_scores`.
    token_sets : sequence of sequence of int
        ``S_i``, non-empty, one per prompt.
    kind : str
        ``"logit"`` (``log P_i - log(1 - P_i)``) or ``"logprob"`` (``log P_i``).

    Returns
    -------
    callable
        ``score(i)``: ``P_i``'s logit or log as a scalar torch tensor.

    Raises
    ------
    InvalidInputError
        As :func:`free_generation_scores` does, with a token set in place of an answer.
    """
    _check_last_mlp("first_token_scores", model, prompts, token_sets, kind, "token set")

    def score(i: int):
        lp = torch.log_softmax(model.head_from_h0(model.features(torch.tensor([list(prompts[i])]))[0]), -1)
        keep = torch.zeros(lp.shape[-1], dtype=torch.bool)
        keep[torch.tensor(sorted(set(token_sets[i])))] = True
        return _score_from_logp(lp[keep], lp[~keep], kind)

    return score
