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

import copy
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..convergence import ConvergenceReport, check_trajectories, report_columns, summary_columns
from ..integrations.trl import next_token_probs, read_trl_config
from ..training.smollm import YES_NO_QUESTIONS, load_smollm2
from ..training.tasks import synthetic_binary_task
from ..training.trainer import batch_means_se
from .predictions import study_theory


def probs_after_ids(model, id_lists) -> np.ndarray:
    """The full next-token distribution (double precision) after each token-id list: the exact policy a
    one-token completion is sampled from, with no sampling noise. Shape (len(id_lists), logits' width).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal language model.
    id_lists : sequence of sequence of int
        The prompts, as token ids.

    Returns
    -------
    numpy.ndarray
        One distribution a row.
    """
    import torch

    dev = next(model.parameters()).device
    with torch.no_grad():
        return np.array([torch.softmax(model(input_ids=torch.tensor([ids], device=dev)).logits[0, -1].double(),
                                       -1).cpu().numpy() for ids in id_lists])


def theory_predictions(ref_probs: np.ndarray, reward_table: np.ndarray, obj) -> tuple[list, list]:
    """Per prompt (a row of ``ref_probs``, renormalised, and of ``reward_table``): the predicted probability of
    the rewarded tokens under ``obj``, and how many stable points exist
    (:func:`~grpo_theory.studies.predictions.study_theory`).

    Parameters
    ----------
    ref_probs : numpy.ndarray, shape (n_prompts, V)
        ``pi_ref`` over the vocabulary after each prompt (renormalised here).
    reward_table : numpy.ndarray, shape (n_prompts, V)
        The reward of each token after each prompt.
    obj : Objective
        The objective.

    Returns
    -------
    predicted : list of float
        The stationary probability of the rewarded tokens, per prompt.
    n_stable : list of int
        The number of stable stationary points, per prompt.
    """
    theory = study_theory(ref_probs, reward_table, obj, stable_points=True)
    return [float(v) for v in theory.rewarded], theory.n_stable


def _window_recorder(sink: list, start_step: float, every: int, measure):
    """A TrainerCallback that appends ``(step, measure(model))`` to ``sink`` every ``every`` steps after
    ``start_step``."""
    from transformers import TrainerCallback

    class WindowRecorder(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kw):
            if state.global_step > start_step and state.global_step % every == 0:
                sink.append((state.global_step, measure(model)))

    return WindowRecorder()


def _train(trainer, measured: list, n_blocks: int) -> tuple[np.ndarray, np.ndarray, float, ConvergenceReport]:
    """Run TRL's trainer; the probabilities its window recorder filled ``measured`` with (as ``(step, values)``
    pairs), their batch-means standard error over ``n_blocks`` blocks, the training time in seconds, and
    the stationarity check on the window's trajectories (issue 26)."""
    t0 = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - t0
    m = np.array([v for _, v in measured])
    conv = check_trajectories([s for s, _ in measured], m)                # issue 26: the window's tail
    return m, batch_means_se(m, n_blocks=n_blocks), seconds, conv


def build_tokenizer(n_questions: int):
    """A word-level tokenizer for the tiny task: ``Q0 .. Q{n-1}``, ``?``, ``A``, ``B`` and the special tokens.

    Parameters
    ----------
    n_questions : int
        The number of questions.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        Left-padding.
    """
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
    """Pretrain a tiny LlamaForCausalLM on ``Q_i ? A|B`` and save model + tokenizer to ``out_dir``.

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerFast
        From :func:`build_tokenizer`.
    freqs : numpy.ndarray
        The corpus frequency of each question's correct answer.
    correct : list of str
        Each question's correct answer, ``"A"`` or ``"B"``.
    out_dir : str or pathlib.Path
        Where the model and tokenizer are saved.
    steps : int, default 600
        Training steps.
    per_question : int, default 400
        Corpus sequences per question.
    seed : int, default 0
        Seed of the corpus, the weights and the batches.

    Returns
    -------
    transformers.LlamaForCausalLM
        The trained model (also saved), sampling from the full distribution.
    """
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

    A tiny Llama pretrained to ``pi_ref`` on synthetic questions is trained by TRL; the measured
    P(correct) (averaged over the last ``window`` of the steps) is compared with the stationary point
    of ``read_trl_config``'s Objective.

    Parameters
    ----------
    out_dir : str or Path
        Where ``results.csv``, ``summary.csv`` and ``settings_gap.json`` go.
    n_questions : int
        Synthetic questions.
    steps : int
        Training steps per setting.
    group_size : int
        TRL's ``num_generations`` (the group size G).
    beta : float
        The KL coefficient beta.
    learning_rate : float
        TRL's learning rate.
    seed : int
        Seed of the task, the pretraining and the training.
    settings : sequence of bool
        The ``use_bias_correction_kl`` values to train (True: the direct penalty; False: the reverse one).
    measure_every : int
        Steps between two measurements of the policy.
    window : float
        Fraction of the run, at its end, over which the measurements are averaged.
    num_threads : int or None
        torch CPU threads (1 by default, far faster than 2 for this tiny model on 2 cores).

    Returns
    -------
    pandas.DataFrame
        One row per setting: the theory error over the questions.
    """
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

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
        mapping = read_trl_config(args, completion_tokens=1)
        preds, stables = theory_predictions(ref_probs, reward_table, mapping.objective)
        measured: list = []
        recorder = _window_recorder(measured, (1 - window) * steps, measure_every,
                                    lambda m: next_token_probs(m, tok, prompts)[np.arange(n_questions), correct_ids])

        dataset = Dataset.from_dict({"prompt": prompts * 64, "correct": correct * 64})
        trainer = GRPOTrainer(model=str(ref_dir), reward_funcs=reward_fn, args=args, train_dataset=dataset,
                              processing_class=tok, callbacks=[recorder])
        m, se, seconds, conv = _train(trainer, measured, n_blocks=10)
        meas = m.mean(0)
        err = meas - np.array(preds)
        for i in range(n_questions):
            rows.append(dict(setting=name, penalty=mapping.objective.regime, question=i,
                             pi_ref_correct=ref_probs[i, correct_ids[i]], predicted=preds[i], measured=meas[i],
                             measured_se=se[i], error=err[i], n_stable_points=stables[i],
                             **report_columns(conv, i)))
        summary.append(dict(setting=name, penalty=mapping.objective.regime, objective=mapping.objective.describe(),
                            mae=float(np.abs(err).mean()), max_abs_error=float(np.abs(err).max()),
                            mean_se=float(se.mean()), seconds=seconds, steps=steps,
                            warnings=" | ".join(mapping.warnings),
                            **summary_columns(pd.DataFrame(rows[-n_questions:]))))     # issue 26
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


def smollm2_hf_dir(hf_dir, model_dir="models/smollm2") -> Path:
    """SmolLM2 dequantised from its GGUF file and saved as a plain Hugging Face model in ``hf_dir`` (once;
    TRL rebuilds its reference model from such a path).

    Parameters
    ----------
    hf_dir : str or pathlib.Path
        Where the Hugging Face model goes (kept when it is already there).
    model_dir : str or pathlib.Path, default "models/smollm2"
        The GGUF file's folder.

    Returns
    -------
    pathlib.Path
        ``hf_dir``.
    """
    from transformers import AutoModelForCausalLM

    hf_dir = Path(hf_dir)
    if not (hf_dir / "config.json").exists():
        model, tok = load_smollm2(model_dir)
        # a GGUF-loaded model refuses save_pretrained ("quantized with gguf"): the same dequantised
        # weights in a plain model of the same config save normally
        config = copy.deepcopy(model.hf.config)
        config.__dict__.pop("quantization_config", None)
        plain = AutoModelForCausalLM.from_config(config)
        plain.load_state_dict(model.hf.state_dict())
        plain.save_pretrained(hf_dir)
        tok.save_pretrained(hf_dir)
    return hf_dir


def run_trl_smollm2(out_dir="runs/validate_trl_smollm2", *, model_dir="models/smollm2", n_prompts: int = 4,
                    steps: int = 60, group_size: int = 4, beta: float = 0.5, learning_rate: float = 1e-3,
                    seed: int = 0, settings=(True, False), measure_every: int = 2, window: float = 0.3,
                    num_threads: int | None = 1) -> pd.DataFrame:
    """TRL's GRPOTrainer on SmolLM2-135M-Instruct, yes/no prompts, one-token completions.

    The model is SmolLM2 dequantised from the GGUF file and saved once under ``out_dir`` (TRL
    rebuilds the reference model from that path). As in our CPU study, only the last decoder
    layer's MLP trains (every other parameter has ``requires_grad=False``, which TRL's optimiser
    respects). Completions are one token sampled from the whole vocabulary at temperature 1; the
    reward is 1 when the decoded token, stripped, is the answer ("Yes"/"No": " Yes" counts too).
    The prediction uses SmolLM2's full next-token distribution (``K = V`` outputs in two reward
    classes) under ``read_trl_config(args)``.

    Parameters
    ----------
    out_dir : str or Path
        Where the dequantised model and ``trl_smollm2_results.csv`` go.
    model_dir : str or Path
        The folder with SmolLM2's GGUF file.
    n_prompts : int
        Yes/no prompts.
    steps : int, default 60
        As for :func:`run_trl_validation`.
    group_size : int, default 4
        Likewise.
    beta : float, default 0.5
        Likewise.
    learning_rate : float, default 1e-3
        Likewise.
    seed : int
        Seed of the training.
    settings : sequence of bool
        The ``use_bias_correction_kl`` values to train.
    measure_every : int
        Steps between two measurements of the policy.
    window : float
        Fraction of the run, at its end, over which the measurements are averaged.
    num_threads : int or None
        torch CPU threads (None keeps torch's own choice).

    Returns
    -------
    pandas.DataFrame
        One row per (setting, prompt): ``predicted``, ``measured``, ``measured_se``, ``error`` and the
        convergence columns.
    """
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    torch.manual_seed(seed)
    hf_dir = smollm2_hf_dir(out / "smollm2_hf", model_dir)
    tok = AutoTokenizer.from_pretrained(hf_dir)
    chosen = YES_NO_QUESTIONS[:n_prompts]
    messages = [[{"role": "user", "content": q + " Answer Yes or No."}] for q, _ in chosen]
    prompt_ids = [tok.apply_chat_template(m, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
                  for m in messages]
    vocab_text = [tok.decode([i]).strip() for i in range(len(tok))]
    reward_table = np.array([[float(t == answer) for t in vocab_text] for _, answer in chosen])

    def probs_of(model) -> np.ndarray:
        return probs_after_ids(model, prompt_ids)

    ref_probs = probs_of(AutoModelForCausalLM.from_pretrained(hf_dir))

    def reward_fn(prompts, completions, answer, **kw):
        text = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [1.0 if t.strip() == a else 0.0 for t, a in zip(text, answer)]

    rows = []
    for bias_corr in settings:
        args = GRPOConfig(output_dir=str(out / ("direct" if bias_corr else "reverse")), use_cpu=True, bf16=False,
                          num_generations=group_size, per_device_train_batch_size=group_size * n_prompts,
                          max_completion_length=1, beta=beta, use_bias_correction_kl=bias_corr,
                          learning_rate=learning_rate, max_steps=steps, lr_scheduler_type="linear", warmup_steps=0,
                          logging_steps=max(1, steps // 10), report_to="none", save_strategy="no", seed=seed,
                          temperature=1.0, top_k=0, top_p=1.0, num_iterations=1, scale_rewards="group",
                          loss_type="grpo", disable_tqdm=True, gradient_checkpointing=False)
        mapping = read_trl_config(args, completion_tokens=1)
        preds, n_stable = theory_predictions(ref_probs, reward_table, mapping.objective)
        measured: list = []
        recorder = _window_recorder(measured, (1 - window) * steps, measure_every,
                                    lambda m: (probs_of(m) * reward_table).sum(1))

        policy = AutoModelForCausalLM.from_pretrained(hf_dir)
        for name, p in policy.named_parameters():
            p.requires_grad_(name.startswith(f"model.layers.{policy.config.num_hidden_layers - 1}.mlp."))
        dataset = Dataset.from_dict({"prompt": messages * 64, "answer": [a for _, a in chosen] * 64})
        trainer = GRPOTrainer(model=policy, reward_funcs=reward_fn, args=args, train_dataset=dataset,
                              processing_class=tok, callbacks=[recorder])
        m, se, seconds, conv = _train(trainer, measured, n_blocks=5)
        for i, (question, answer) in enumerate(chosen):
            rows.append(dict(seed=seed, config=f"trl_use_bias_correction_kl={bias_corr}",
                             question=f"yes_no:{i}", predicted=preds[i], measured=float(m[:, i].mean()),
                             level="sequence", prompt=question, answer=answer, penalty=mapping.objective.regime,
                             group_size=group_size, beta=beta, pi_ref=float((ref_probs[i] * reward_table[i]).sum()),
                             measured_se=float(se[i]), error=float(m[:, i].mean() - preds[i]),
                             n_stable_points=n_stable[i], steps=steps, learning_rate=learning_rate,
                             seconds=seconds, objective=mapping.objective.describe(), **report_columns(conv, i)))
        pd.DataFrame(rows).to_csv(out / "trl_smollm2_results.csv", index=False)
    return pd.DataFrame(rows)
