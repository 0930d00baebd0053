"""TRL's own GRPOTrainer on CPU against the theory, under TRL's conventions.

A tiny Llama-architecture model with a word-level tokenizer (both built here: no
hub) is pretrained on the synthetic corpus of binary questions ``Q_i ?`` -> ``A``/``B``
and saved to a directory (TRL rebuilds the reference model from the path when
``beta > 0``). TRL then trains it with single-token completions, once with
``use_bias_correction_kl=True`` (TRL >= 1.x default: the direct penalty) and once
with ``False`` (the original reverse penalty), all else equal. Completions are
sampled from the whole vocabulary, so the prediction uses the model's full
next-token distribution (``K = V`` outputs in two reward classes).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..problem import Question
from ..stationary import stationary_points, stationary_policy
from .trl import next_token_probs, objective_from_trl


def build_tokenizer(n_questions: int):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<bos>", "<eos>", "<unk>", "?", "A", "B"] + [f"Q{i}" for i in range(n_questions)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>",
                                   eos_token="<eos>", unk_token="<unk>")
    fast.padding_side = "left"
    return fast


def pretrain_tiny_llama(tokenizer, freqs: np.ndarray, correct: list, out_dir, *, steps: int = 600,
                        per_question: int = 400, seed: int = 0):
    """Pretrain a tiny LlamaForCausalLM on ``Q_i ? A|B`` and save model + tokenizer to ``out_dir``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=16,
                      pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                      eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg)
    a_id, b_id = tokenizer.convert_tokens_to_ids("A"), tokenizer.convert_tokens_to_ids("B")
    rows = []
    for i in range(len(freqs)):
        q_id = tokenizer.convert_tokens_to_ids(f"Q{i}")
        p_a = freqs[i] if correct[i] == "A" else 1 - freqs[i]
        for a in rng.random(per_question) < p_a:
            rows.append([q_id, tokenizer.convert_tokens_to_ids("?"), a_id if a else b_id])
    data = torch.tensor(rows)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    for step in range(steps):
        batch = data[torch.randint(len(data), (128,), generator=gen)]
        labels = batch.clone()
        labels[:, :2] = -100                             # learn the answer only
        loss = model(input_ids=batch, labels=labels).loss
        for g in opt.param_groups:
            g["lr"] = 3e-3 * (1 - 0.9 * step / steps)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    model.generation_config.do_sample = True
    model.generation_config.top_k = 0                    # sample from the full distribution
    model.generation_config.top_p = 1.0
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return model


def run_trl_validation(out_dir="runs/validate_trl", *, n_questions: int = 12, steps: int = 600,
                       group_size: int = 8, beta: float = 0.5, learning_rate: float = 2e-3, seed: int = 0,
                       settings=(True, False), measure_every: int = 5, window: float = 0.3,
                       num_threads: int | None = 1) -> pd.DataFrame:
    """Train with TRL's GRPOTrainer for each ``use_bias_correction_kl`` in ``settings``; compare with theory.

    ``num_threads``: torch CPU threads (1 by default, far faster than 2 for this tiny model on 2 cores).
    """
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from ..training.tasks import synthetic_binary_task

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    torch.manual_seed(seed)
    task, freqs2 = synthetic_binary_task(n_questions, 1, seed=seed)
    correct = ["A" if task.rewards[i, 0] == 1 else "B" for i in range(n_questions)]
    freqs = (freqs2 * task.rewards).sum(1)                       # designed frequency of the correct answer
    tok = build_tokenizer(n_questions)
    ref_dir = out / "reference_model"
    pretrain_tiny_llama(tok, freqs, correct, ref_dir, seed=seed)
    prompts = [f"Q{i} ?" for i in range(n_questions)]
    ref_model = AutoModelForCausalLM.from_pretrained(ref_dir)
    ref_probs = next_token_probs(ref_model, tok, prompts)        # (n_q, V): the theory's pi_ref
    correct_ids = np.array([tok.convert_tokens_to_ids(c) for c in correct])
    reward_table = np.zeros_like(ref_probs)
    reward_table[np.arange(n_questions), correct_ids] = 1.0

    def reward_fn(prompts, completions, correct, **kw):
        return [1.0 if c.strip() == k else 0.0 for c, k in zip(completions, correct)]

    rows, summary = [], []
    for bias_corr in settings:
        name = f"use_bias_correction_kl={bias_corr}"
        run_dir = out / ("direct" if bias_corr else "reverse")
        args = GRPOConfig(output_dir=str(run_dir), use_cpu=True, bf16=False, num_generations=group_size,
                          per_device_train_batch_size=group_size * 8, max_completion_length=1, beta=beta,
                          use_bias_correction_kl=bias_corr, learning_rate=learning_rate, max_steps=steps,
                          lr_scheduler_type="linear", warmup_steps=0, logging_steps=max(1, steps // 10),
                          report_to="none", save_strategy="no", seed=seed, temperature=1.0, num_iterations=1,
                          scale_rewards="group", loss_type="grpo", disable_tqdm=True)
        mapping = objective_from_trl(args, completion_tokens=1)
        preds, stables = [], []
        for i in range(n_questions):
            q = Question(ref_probs[i] / ref_probs[i].sum(), rewards=reward_table[i])
            preds.append(stationary_policy(q, mapping.objective).pi[correct_ids[i]])
            stables.append(len([p for p in stationary_points(q, mapping.objective) if p.stable]))
        measured: list = []

        class Measure(TrainerCallback):
            """Records pi(correct answer) for every question over the final window."""

            def __init__(self, sink: list) -> None:
                self.sink = sink

            def on_step_end(self, a, state, control, model=None, **kw):
                if state.global_step > (1 - window) * steps and state.global_step % measure_every == 0:
                    p = next_token_probs(model, tok, prompts)
                    self.sink.append(p[np.arange(n_questions), correct_ids])

        dataset = Dataset.from_dict({"prompt": prompts * 64, "correct": correct * 64})
        trainer = GRPOTrainer(model=str(ref_dir), reward_funcs=reward_fn, args=args, train_dataset=dataset,
                              processing_class=tok, callbacks=[Measure(measured)])
        t0 = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - t0
        m = np.array(measured)
        blocks = np.array_split(m, min(10, max(2, len(m) // 2)))
        se = np.std([b.mean(0) for b in blocks], axis=0, ddof=1) / np.sqrt(len(blocks))
        meas = m.mean(0)
        err = meas - np.array(preds)
        for i in range(n_questions):
            rows.append(dict(setting=name, penalty=mapping.objective.penalty, question=i,
                             pi_ref_correct=ref_probs[i, correct_ids[i]], predicted=preds[i], measured=meas[i],
                             measured_se=se[i], error=err[i], n_stable_points=stables[i]))
        summary.append(dict(setting=name, penalty=mapping.objective.penalty, objective=mapping.objective.describe(),
                            mae=float(np.abs(err).mean()), max_abs_error=float(np.abs(err).max()),
                            mean_se=float(se.mean()), seconds=seconds, steps=steps,
                            warnings=" | ".join(mapping.warnings)))
        pd.DataFrame(rows).to_csv(out / "results.csv", index=False)
        pd.DataFrame(summary).to_csv(out / "summary.csv", index=False)
    res = pd.DataFrame(rows)
    # the same beta, two TRL settings: how far apart are the predicted policies?
    wide = res.pivot(index="question", columns="penalty", values="predicted")
    if {"direct", "reverse"} <= set(wide.columns):
        gap = (wide["direct"] - wide["reverse"]).abs()
        (out / "settings_gap.json").write_text(json.dumps(dict(mean_abs_gap=float(gap.mean()),
                                                               max_abs_gap=float(gap.max())), indent=2))
    return pd.DataFrame(summary)
