"""TRL's GRPOTrainer run to a flat curve, resumably, against the theory (issue 23).

The TRL comparison of :func:`grpo_theory.studies.trl.run_trl_smollm2` stops at a step count.
Here a run trains until the stationarity check of :mod:`grpo_theory.convergence` passes on every
prompt (or a cap), and survives being stopped: TRL's own checkpoints (model, Adam's state, the
scheduler, the random generators, the data order) are written every ``save_every`` steps, the
measured trajectory is written beside them after every measurement, and a later call resumes from
the newest checkpoint, dropping the measurements taken after it (they are taken again, from the
same state).

Completions are one token sampled from the whole vocabulary at temperature 1, so the policy's
P(correct) after prompt x is measured **exactly**: ``p_x = sum_{y rewarded} pi_theta(y | x)`` from one
forward pass, with no sampling noise. The check (:func:`~grpo_theory.convergence.check_trajectories`,
exact mode with its near-edge logit test) looks at the last ``tail`` of the steps run; the run stops
when every prompt is "converged" there, checked every ``check_every`` steps from ``min_steps``.
The learning rate is constant after a short warm-up, so "flat" is the policy's rest, not a schedule
running out. The measured value is the mean of the trajectory over that tail, with its batch-means
standard error.

The prediction is the stationary P(correct) of the objective :func:`read_trl_config` maps the
run's own ``GRPOConfig`` to, with the model's full next-token distribution as ``pi_ref``
(``K = V`` outputs in two reward classes), i.e. what ``grpo-theory predict`` gives from the same
config and the exact ``p_ref``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import atomic_write
from ..convergence import MIN_TAIL_POINTS, check_trajectories, report_columns
from ..errors import InvalidInputError
from ..integrations.trl import read_trl_config
from ..training.trainer import batch_means_se
from .trl import _predictions

__all__ = ["train_until_flat", "newest_checkpoint"]


def newest_checkpoint(run_dir) -> Path | None:
    """The ``checkpoint-<step>`` folder with the largest step under ``run_dir``, or None."""
    found = [(int(p.name.split("-")[1]), p) for p in Path(run_dir).glob("checkpoint-*")
             if p.is_dir() and p.name.split("-")[1].isdigit() and (p / "trainer_state.json").exists()]
    return max(found)[1] if found else None


def _recorder(path: Path, measure, *, every: int, min_steps: int, check_every: int, tail: float,
              stop_after: int | None):
    """A TrainerCallback that measures ``measure(model)`` (one value per prompt) at step 0 and every
    ``every`` steps, writes the trajectory to ``path`` after each measurement, stops the run (saving a
    checkpoint) when the stationarity check passes, and checkpoints and stops after ``stop_after``
    steps of this call."""
    from transformers import TrainerCallback

    class FlatStop(TrainerCallback):
        def __init__(self):
            self.rows: list = []
            self.first = None
            self.flat = False

        def _write(self):
            table = pd.DataFrame(self.rows)
            atomic_write(path, lambda p: table.to_csv(p, index=False, float_format="%.10g"))

        def on_train_begin(self, args, state, control, model=None, **kw):
            self.first = state.global_step
            if path.exists():
                # measurements after the resumed checkpoint are taken again from the same state
                old = pd.read_csv(path)
                self.rows = old[old.step <= state.global_step].to_dict("records")
            if not self.rows or self.rows[-1]["step"] < state.global_step:
                self.rows.append(dict(step=state.global_step, **self._values(model)))
                self._write()

        def _values(self, model):
            return {f"p{i}": float(v) for i, v in enumerate(measure(model))}

        def on_step_end(self, args, state, control, model=None, **kw):
            s = state.global_step
            if s % every == 0:
                self.rows.append(dict(step=s, **self._values(model)))
                self._write()
            if s >= min_steps and s % check_every == 0:
                t = pd.DataFrame(self.rows)
                rep = check_trajectories(t.step, t.drop(columns="step").to_numpy(), tail=tail)
                if rep.all_converged:
                    self.flat = True
                    control.should_save = control.should_training_stop = True
            if stop_after is not None and s - self.first >= stop_after:
                control.should_save = control.should_training_stop = True
            return control

    return FlatStop()


def train_until_flat(run_dir, *, model_path, tokenizer, prompts, answers, beta: float = 0.5,
                     group_size: int = 4, learning_rate: float = 3e-4, warmup_steps: int = 10,
                     use_bias_correction_kl: bool = False, seed: int = 0, min_steps: int = 100,
                     max_steps: int = 600, check_every: int = 20, measure_every: int = 2, save_every: int = 20,
                     tail: float = 0.3, stop_after: int | None = None, trainable: str | None = None,
                     measure=None, ref_probs=None, num_threads: int | None = 1) -> pd.DataFrame | None:
    """Train with TRL's GRPOTrainer until every prompt's P(correct) is flat (or ``max_steps``); resumable.

    Parameters
    ----------
    run_dir : str or pathlib.Path
        TRL's ``output_dir``: checkpoints, ``trajectory.csv`` and, when done, ``results.csv``.
    model_path : str or pathlib.Path
        A saved causal LM (TRL also builds the reference model from it).
    tokenizer
        Its tokenizer.
    prompts : sequence
        TRL prompts: strings, or chat messages (lists of ``{"role", "content"}``).
    answers : sequence of str
        The rewarded completion per prompt: a one-token completion ``y`` is correct when
        ``decode(y).strip() == answer``.
    beta, group_size, learning_rate, warmup_steps, use_bias_correction_kl, seed
        TRL's settings (``num_generations = group_size``, a constant rate after ``warmup_steps``).
    min_steps, max_steps, check_every, tail
        The stop rule (module docstring).
    measure_every, save_every : int
        Steps between measurements, and between checkpoints.
    stop_after : int, optional
        Train at most this many steps in this call, checkpoint, and return None (a session's share).
    trainable : str, optional
        Parameter-name prefix of the only trainable weights (``requires_grad`` False elsewhere, which
        TRL's optimiser respects); default: all.
    measure : callable, optional
        ``measure(model) -> P(correct) per prompt``; default: exact, from the next-token distribution.
    ref_probs : numpy.ndarray, optional
        ``pi_ref`` over the vocabulary per prompt (default: measured from ``model_path``).
    num_threads : int or None

    Returns
    -------
    pandas.DataFrame or None
        One row per prompt: ``prompt, answer, pi_ref, predicted, measured, measured_se, error``, the
        convergence columns (``steps_run`` among them), ``flat, seconds, objective``; None when
        stopped by ``stop_after``.

    Raises
    ------
    InvalidInputError
        If the prompts and answers differ in number, or ``run_dir`` holds a run with other settings.
    """
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    if len(prompts) != len(answers) or not prompts:
        raise InvalidInputError(f"need one answer per prompt, got {len(prompts)} prompts and {len(answers)} answers")
    if tail * min_steps / measure_every + 1 < MIN_TAIL_POINTS:
        raise InvalidInputError(f"min_steps={min_steps}, measure_every={measure_every}, tail={tail}: the check's "
                                f"window would hold fewer than the {MIN_TAIL_POINTS} measurements it needs; "
                                "raise min_steps or measure more often")
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    done = run / "results.csv"
    if done.exists():
        return pd.read_csv(done)
    settings = dict(beta=beta, group_size=group_size, learning_rate=learning_rate, warmup_steps=warmup_steps,
                    use_bias_correction_kl=use_bias_correction_kl, seed=seed, min_steps=min_steps,
                    max_steps=max_steps, check_every=check_every, measure_every=measure_every, tail=tail,
                    trainable=trainable, answers=list(answers), prompts=[json.dumps(p) for p in prompts])
    meta = run / "settings.json"
    if meta.exists() and json.loads(meta.read_text()) != settings:
        old = json.loads(meta.read_text())
        raise InvalidInputError(f"{run} holds a run with other settings "
                                f"({', '.join(sorted(k for k in settings if old.get(k) != settings[k]))}); "
                                "remove it or use another folder")
    atomic_write(meta, lambda p: p.write_text(json.dumps(settings, indent=1)))
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    n = len(prompts)
    vocab_text = [tokenizer.decode([i]).strip() for i in range(len(tokenizer))]
    reward_table = np.array([[float(t == a) for t in vocab_text] for a in answers])
    ids = [tokenizer(p, add_special_tokens=False)["input_ids"] if isinstance(p, str) else
           tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
           for p in prompts]

    def probs_of(model) -> np.ndarray:
        dev = next(model.parameters()).device
        with torch.no_grad():
            return np.array([torch.softmax(model(input_ids=torch.tensor([x], device=dev)).logits[0, -1].double(),
                                           -1).cpu().numpy() for x in ids])

    measure = measure or (lambda m: (probs_of(m) * reward_table).sum(1))
    if ref_probs is None:
        ref_probs = probs_of(AutoModelForCausalLM.from_pretrained(model_path))

    def reward_fn(prompts, completions, answer, **kw):
        text = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [1.0 if t.strip() == a else 0.0 for t, a in zip(text, answer)]

    args = GRPOConfig(output_dir=str(run), use_cpu=True, bf16=False, num_generations=group_size,
                      per_device_train_batch_size=group_size * n, max_completion_length=1, beta=beta,
                      use_bias_correction_kl=use_bias_correction_kl, learning_rate=learning_rate,
                      max_steps=max_steps, lr_scheduler_type="constant_with_warmup", warmup_steps=warmup_steps,
                      logging_steps=save_every, report_to="none", save_strategy="steps", save_steps=save_every,
                      save_total_limit=1, save_only_model=False, seed=seed, temperature=1.0, top_k=0, top_p=1.0,
                      num_iterations=1, scale_rewards="group", loss_type="grpo", disable_tqdm=True,
                      gradient_checkpointing=False)
    mapping = read_trl_config(args, completion_tokens=1)
    preds, n_stable = _predictions(ref_probs, reward_table, mapping.objective)
    policy = AutoModelForCausalLM.from_pretrained(model_path)
    if trainable is not None:
        for name, p in policy.named_parameters():
            p.requires_grad_(name.startswith(trainable))
    dataset = Dataset.from_dict({"prompt": list(prompts) * 64, "answer": list(answers) * 64})
    rec = _recorder(run / "trajectory.csv", measure, every=measure_every, min_steps=min_steps,
                    check_every=check_every, tail=tail, stop_after=stop_after)
    trainer = GRPOTrainer(model=policy, reward_funcs=reward_fn, args=args, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[rec])
    ckpt = newest_checkpoint(run)
    clock = run / "seconds.json"
    spent = json.loads(clock.read_text())["seconds"] if clock.exists() and ckpt is not None else 0.0
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(ckpt) if ckpt is not None else None)
    spent += time.perf_counter() - t0
    atomic_write(clock, lambda p: p.write_text(json.dumps(dict(seconds=spent))))
    steps_run = int(trainer.state.global_step)
    if not rec.flat and steps_run < max_steps:
        return None                                                   # stopped by stop_after: resume later
    traj = pd.read_csv(run / "trajectory.csv")
    steps, values = traj.step.to_numpy(float), traj.drop(columns="step").to_numpy()
    conv = check_trajectories(steps, values, tail=tail)
    window = steps >= steps[-1] * (1 - tail)
    m, se = values[window].mean(0), batch_means_se(values[window], n_blocks=5)
    rows = [dict(prompt=json.dumps(prompts[i]) if not isinstance(prompts[i], str) else prompts[i],
                 answer=answers[i], pi_ref=float((ref_probs[i] * reward_table[i]).sum()), predicted=preds[i],
                 measured=float(m[i]), measured_se=float(se[i]), error=float(m[i] - preds[i]),
                 n_stable_points=n_stable[i], flat=rec.flat, seconds=round(spent, 1),
                 seed=seed, beta=beta, group_size=group_size, learning_rate=learning_rate,
                 use_bias_correction_kl=use_bias_correction_kl, penalty=mapping.objective.regime,
                 objective=mapping.objective.describe(), **report_columns(conv, i)) for i in range(n)]
    table = pd.DataFrame(rows)
    atomic_write(done, lambda p: table.to_csv(p, index=False))
    return pd.read_csv(done)
