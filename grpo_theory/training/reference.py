"""Pretrain the small GPT on the synthetic corpus: the reference model pi_ref."""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F
from tqdm.auto import tqdm

from .model import GPTConfig, TinyGPT
from .tasks import PAD, QATask, sample_corpus


def pretrain_reference(task: QATask, freqs: np.ndarray, *, per_question: int = 400, steps: int = 800,
                       batch_size: int = 128, learning_rate: float = 3e-3, model_cfg: GPTConfig | None = None,
                       seed: int = 0, progress: bool = True) -> TinyGPT:
    """Next-token training on ``prompt + answer`` sequences (loss on the answer tokens).

    The reference probabilities come from what this model learns, not from the
    designed frequencies: a finite corpus and finite training leave it close to,
    but not at, ``freqs``.

    Parameters
    ----------
    task : QATask
        The questions and their answer set.
    freqs : numpy.ndarray, shape (n_questions, n_answers)
        The designed corpus frequency of each answer.
    per_question : int, default 400
        Corpus sequences per question (:func:`~grpo_theory.training.tasks.sample_corpus`).
    steps : int, default 800
        Training steps.
    batch_size : int, default 128
        Sequences per step.
    learning_rate : float, default 3e-3
        Adam's step size.
    model_cfg : GPTConfig, optional
        The model's shape (default: the task's vocabulary and the corpus's sequence length, the other fields
        :class:`GPTConfig`'s defaults).
    seed : int, default 0
        Seed of the corpus, the initial weights and the batches.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    TinyGPT
        The reference model.
    """
    torch.manual_seed(seed)
    corpus = torch.from_numpy(sample_corpus(task, freqs, per_question, seed=seed))
    pad = corpus == PAD                                  # answers of different lengths are padded
    corpus = torch.where(pad, torch.zeros_like(corpus), corpus)
    cfg = model_cfg or GPTConfig(vocab_size=len(task.vocab), block_size=corpus.shape[1])
    model = TinyGPT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    n_prompt = len(task.prompts[0])
    gen = torch.Generator().manual_seed(seed)
    for step in tqdm(range(steps), desc="pretrain reference", disable=not progress, leave=False):
        rows = torch.randint(len(corpus), (batch_size,), generator=gen)
        batch = corpus[rows]
        logits = model(batch[:, :-1])
        target = batch[:, 1:].clone()
        target[:, : n_prompt - 1] = -100                  # only the answer tokens are predicted
        target[pad[rows][:, 1:]] = -100                   # and never the padding
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100)
        for g in opt.param_groups:
            g["lr"] = learning_rate * (1 - 0.9 * step / steps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()
