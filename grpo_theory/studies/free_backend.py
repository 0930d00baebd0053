"""The SmolLM2 backend of the free-generation study (:mod:`grpo_theory.studies.free`): SmolLM2-135M-Instruct
as a policy whose last MLP trains, behind the small interface the study drives (``prompts``, ``sample``,
``logp``, ``parameters``, ``state_dict``/``load_state_dict``, ``reset``; the tests use a tabular stub).

A process loads the model once (:func:`smol_model`) and builds one :class:`SmolBackend` per set of
prompts on it; every backend built on one model takes its reference policy from one frozen copy of the
last MLP as it was loaded (:func:`reference_mlp`).
"""

from __future__ import annotations

import weakref

import torch

from ..training.free_generation import FreeSampler, pad_time, token_logp
from ..training.smollm import FrozenTrunkLM, chat_prompt, load_smollm2

__all__ = ["SmolBackend", "reference_mlp", "smol_model"]

#: Each model's frozen reference MLP (:func:`reference_mlp`), held as long as the model lives.
_REFERENCE_MLPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def reference_mlp(model):
    """A frozen copy of ``model``'s last MLP as it was when first asked for, kept while the model lives.

    Every backend built on one model (a worker process trains job after job on its one copy of
    SmolLM2) takes its reference, and its reset, from this copy: a copy taken when a later backend is
    built would hold the previous job's trained weights.

    Parameters
    ----------
    model : FrozenTrunkLM
        The loaded SmolLM2 (``trainable="last-mlp"``); it is held weakly, as the key of the copy.

    Returns
    -------
    torch.nn.Module
        The frozen copy (``requires_grad`` off), the same object on every call for ``model``.
    """
    import copy

    if model not in _REFERENCE_MLPS:      # kept outside the model: not among its parameters or state
        _REFERENCE_MLPS[model] = copy.deepcopy(model.hf.model.layers[-1].mlp).requires_grad_(False)
    return _REFERENCE_MLPS[model]


class SmolBackend:
    """SmolLM2-135M-Instruct as a free-generation policy: only the last MLP trains.

    Sampling keeps the last MLP's input ``h0`` at every generated position (batched, with the KV
    cache of :class:`~grpo_theory.training.free_generation.FreeSampler`), so the loss needs no second
    pass through the frozen trunk. The reference policy is a frozen copy of the MLP as the model was
    loaded (:func:`reference_mlp`), shared by every backend built on that model.

    Parameters
    ----------
    model : FrozenTrunkLM
        ``trainable="last-mlp"``; its last MLP is the one trained (shared by every backend built on it).
    tokenizer
        SmolLM2's tokenizer.
    questions : sequence of str
        User turns, put into the chat template.
    max_new_tokens : int
        The longest completion sampled, in tokens.
    """

    def __init__(self, model, tokenizer, questions, max_new_tokens: int = 4) -> None:
        self.model = model
        self.mlp = model.hf.model.layers[-1].mlp
        self.ref_mlp = reference_mlp(model)
        self.prompts = [chat_prompt(tokenizer, q) for q in questions]
        self.sampler = FreeSampler(model, tokenizer, self.prompts, max_new_tokens)

    def sample(self, q: int, n: int, generator: torch.Generator):
        """``n`` completions of prompt ``q`` from the current policy (temperature 1, the full vocabulary).

        Parameters
        ----------
        q : int
            The prompt's index in ``questions``.
        n : int
            How many completions to draw.
        generator : torch.Generator
            The random stream of the draws (a CPU generator).

        Returns
        -------
        Completions
            Their tokens, mask, ``h0`` and ``text`` (:class:`~grpo_theory.training.free_generation.Completions`).
        """
        return self.sampler.sample(q, n, generator)

    def logp(self, comps, reference: bool = False):
        """Per-token log-probabilities of sampled completions, padded to one length.

        Parameters
        ----------
        comps : sequence of Completions
            One batch of completions per prompt, as :meth:`sample` returns them.
        reference : bool
            Score them under the frozen reference MLP instead of the trained one.

        Returns
        -------
        logp : torch.Tensor, shape (prompts, n, T)
            ``log pi(token)`` at each position, 0 at padding.
        mask : torch.Tensor, shape (prompts, n, T)
            1.0 on real tokens, 0.0 on padding.
        """
        T = max(c.tokens.shape[1] for c in comps)
        h0 = torch.stack([pad_time(c.h0, T) for c in comps])
        # the sampler draws tokens on the CPU (its generator lives there); h0 lives with the model
        tokens = torch.stack([pad_time(c.tokens, T) for c in comps]).to(h0.device)
        mask = torch.stack([pad_time(c.mask, T) for c in comps]).to(h0.device)
        lp = token_logp(self.model, self.ref_mlp if reference else None, h0, tokens)
        return lp * mask, mask

    def parameters(self):
        """The trainable parameters: those of the last MLP."""
        return self.mlp.parameters()

    def state_dict(self) -> dict:
        """A detached copy of the last MLP's weights (what a checkpoint keeps)."""
        return {k: v.detach().clone() for k, v in self.mlp.state_dict().items()}

    def load_state_dict(self, state: dict) -> None:
        """Load the last MLP's weights from a checkpoint.

        Parameters
        ----------
        state : dict
            The weights, as :meth:`state_dict` gave them.
        """
        self.mlp.load_state_dict(state)

    def reset(self) -> None:
        """Set the last MLP back to the reference policy's weights (:func:`reference_mlp`)."""
        self.mlp.load_state_dict(self.ref_mlp.state_dict())


_MODEL: dict = {}


def smol_model(model_dir, device: str = "cpu"):
    """The process's one copy of SmolLM2 (model, tokenizer), loaded once; torch on one thread.

    Parameters
    ----------
    model_dir : str or pathlib.Path
        The folder of SmolLM2's GGUF file (:func:`grpo_theory.training.smollm.load_smollm2`).
    device : str
        Where the model runs; each ``(model_dir, device)`` is loaded once per process.

    Returns
    -------
    (FrozenTrunkLM, tokenizer)
        The model with its last MLP trainable, and its tokenizer.
    """
    torch.set_num_threads(1)
    key = f"{model_dir}|{device}"
    if key not in _MODEL:
        model, tok = load_smollm2(model_dir, device=device)
        _MODEL[key] = (FrozenTrunkLM(model.hf), tok)
    return _MODEL[key]
