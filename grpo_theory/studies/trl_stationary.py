"""TRL's GRPOTrainer run to a flat curve, resumably, against the theory.

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
from .predictions import study_theory
from .trl import theory_predictions, probs_after_ids

__all__ = ["train_until_flat", "newest_checkpoint", "progress"]


def newest_checkpoint(run_dir) -> Path | None:
    """The ``checkpoint-<step>`` folder with the largest step under ``run_dir``, or None.

    Parameters
    ----------
    run_dir : str or pathlib.Path
        TRL's ``output_dir``.

    Returns
    -------
    pathlib.Path or None
        The folder.
    """
    if not isinstance(run_dir, (str, Path)):
        raise InvalidInputError(f"run_dir must be a folder path (str or pathlib.Path), got {run_dir!r}")
    found = [(int(p.name.split("-")[1]), p) for p in Path(run_dir).glob("checkpoint-*")
             if p.is_dir() and p.name.split("-")[1].isdigit() and (p / "trainer_state.json").exists()]
    return max(found)[1] if found else None


def _is_flat(rows: list, tail: float) -> bool:
    """Whether every prompt of the trajectory ``rows`` (dicts ``step, p0, p1, ...``) passes the check."""
    t = pd.DataFrame(rows)
    return bool(check_trajectories(t.step, t.drop(columns="step").to_numpy(), tail=tail).all_converged)


def _checks_at(step: int, min_steps: int, check_every: int) -> bool:
    return step >= min_steps and step % check_every == 0


def _recorder(path: Path, clock: Path, measure, *, every: int, min_steps: int, check_every: int, tail: float,
              stop_after: int | None, seconds_before: float):
    """A TrainerCallback that measures ``measure(model)`` (one value per prompt) at step 0 and every
    ``every`` steps, writes the trajectory to ``path`` after each measurement, stops the run (saving a
    checkpoint) when the stationarity check passes, checkpoints and stops after ``stop_after`` steps of
    this call, and writes the seconds spent to ``clock`` at every checkpoint."""
    from transformers import TrainerCallback

    class FlatStop(TrainerCallback):
        def __init__(self):
            self.rows: list = []
            self.first = None
            self.flat = False
            self.t0 = time.perf_counter()

        def _write(self):
            table = pd.DataFrame(self.rows)
            atomic_write(path, lambda p: table.to_csv(p, index=False, float_format="%.10g"))

        def seconds(self) -> float:
            return seconds_before + time.perf_counter() - self.t0

        def on_train_begin(self, args, state, control, model=None, **kw):
            self.first = state.global_step
            self.rows = _trajectory_until(path, state.global_step)
            # a measurement at the resumed step only where the uninterrupted run took one
            if state.global_step % every == 0 and (not self.rows or self.rows[-1]["step"] < state.global_step):
                self.rows.append(dict(step=state.global_step, **self._values(model)))
                self._write()

        def _values(self, model):
            was = model.training
            model.eval()
            try:
                return {f"p{i}": float(v) for i, v in enumerate(measure(model))}
            finally:
                model.train(was)

        def on_step_end(self, args, state, control, model=None, **kw):
            s = state.global_step
            if s % every == 0:
                self.rows.append(dict(step=s, **self._values(model)))
                self._write()
            if _checks_at(s, min_steps, check_every) and _is_flat(self.rows, tail):
                self.flat = True
                control.should_save = control.should_training_stop = True
            if stop_after is not None and s - self.first >= stop_after:
                control.should_save = control.should_training_stop = True
            return control

        def on_save(self, args, state, control, **kw):
            atomic_write(clock, lambda p: p.write_text(json.dumps(dict(seconds=self.seconds(),
                                                                        step=state.global_step))))

    return FlatStop()


def _trajectory_until(path: Path, step: int) -> list:
    """The measured rows up to ``step`` (those after a checkpoint are taken again from its state)."""
    if not path.exists():
        return []
    old = pd.read_csv(path)
    return old[old.step <= step].to_dict("records")


def _grpo_config(run: Path, settings: dict, save_every: int = 20):
    """TRL's GRPOConfig of a run, from its settings (one place, so that :func:`progress` maps the same)."""
    from trl import GRPOConfig

    n, g = len(settings["answers"]), settings["group_size"]
    return GRPOConfig(output_dir=str(run), use_cpu=True, bf16=False, num_generations=g,
                      per_device_train_batch_size=g * n, max_completion_length=1, beta=settings["beta"],
                      use_bias_correction_kl=settings["use_bias_correction_kl"],
                      learning_rate=settings["learning_rate"], max_steps=settings["max_steps"],
                      lr_scheduler_type="constant_with_warmup", warmup_steps=settings["warmup_steps"],
                      logging_steps=save_every, report_to="none", save_strategy="steps", save_steps=save_every,
                      save_total_limit=1, save_only_model=False, seed=settings["seed"], temperature=1.0, top_k=0,
                      top_p=1.0, num_iterations=1, scale_rewards="group", loss_type="grpo", disable_tqdm=True,
                      gradient_checkpointing=False)


def _tail_summary(path: Path, tail: float):
    """A trajectory file's steps and values, the mean over the last ``tail`` of the steps with its
    batch-means standard error (5 blocks), and the stationarity check of that window."""
    traj = pd.read_csv(path)
    steps, values = traj.step.to_numpy(float), traj.drop(columns="step").to_numpy()
    window = steps >= steps[-1] * (1 - tail)
    m, se = values[window].mean(0), batch_means_se(values[window], n_blocks=5)
    return steps, values, m, se, check_trajectories(steps, values, tail=tail)


def progress(run_dir) -> pd.DataFrame:
    """Where a run stands, finished or not, from its folder alone (no model is loaded).

    ``pi_ref`` is the trajectory's step-0 measurement (the untrained policy's exact P(correct)); the
    prediction is the stationary P(correct) of the two-class question ``[pi_ref, 1 - pi_ref]`` under
    the objective :func:`read_trl_config` maps the run's GRPOConfig to (within a reward class the
    stationary policy keeps pi_ref's proportions, so this equals the full-vocabulary prediction);
    ``measured`` is the mean over the last ``tail`` of the steps run so far, with its batch-means
    standard error, and the convergence columns judge that window.

    Parameters
    ----------
    run_dir : str or pathlib.Path
        The run's folder (TRL's ``output_dir``).

    Returns
    -------
    pandas.DataFrame
        One row per prompt: ``prompt, answer, pi_ref, predicted, measured, measured_se, error``, the
        convergence columns, ``steps_so_far, seed, objective``.
    """
    run = Path(run_dir)
    if not (run / "settings.json").exists() or not (run / "trajectory.csv").exists():
        raise InvalidInputError(f"{run} holds no run of train_until_flat (settings.json and trajectory.csv)")
    st = json.loads((run / "settings.json").read_text())
    steps, values, m, se, conv = _tail_summary(run / "trajectory.csv", st["tail"])
    obj = read_trl_config(_grpo_config(run, st), completion_tokens=1).objective
    pi_ref = values[0]
    pred = study_theory(np.column_stack([pi_ref, 1.0 - pi_ref]), np.tile([1.0, 0.0], (len(pi_ref), 1)), obj).pi[:, 0]
    return pd.DataFrame([dict(prompt=st["prompts"][i], answer=st["answers"][i], pi_ref=float(pi_ref[i]),
                              predicted=float(pred[i]), measured=float(m[i]), measured_se=float(se[i]),
                              error=float(m[i] - pred[i]), **report_columns(conv, i), steps_so_far=int(steps[-1]),
                              seed=st["seed"], objective=obj.describe()) for i in range(len(pi_ref))])


def train_until_flat(run_dir, *, model_path, tokenizer, prompts, answers, beta: float = 0.5,
                     group_size: int = 4, learning_rate: float = 3e-4, warmup_steps: int = 10,
                     use_bias_correction_kl: bool = True, seed: int = 0, min_steps: int = 100,
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
    beta : float, default 0.5
        TRL's ``beta``.
    group_size : int, default 4
        ``num_generations``.
    learning_rate : float, default 3e-4
        A constant rate after the warm-up.
    warmup_steps : int, default 10
        The warm-up's steps.
    use_bias_correction_kl : bool, default True
        TRL's setting (True, TRL 1.16's default, is the direct penalty).
    seed : int, default 0
        TRL's seed.
    min_steps : int, default 100
        The stop rule (module docstring): the first step checked.
    max_steps : int, default 600
        Its cap on the steps.
    check_every : int, default 20
        Steps between its checks.
    tail : float
        The stop rule's tail: the fraction of the steps run that the check looks at.
    measure_every : int
        Steps between measurements.
    save_every : int
        Steps between checkpoints.
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
        torch's thread count (None: leave it).

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
    from transformers import AutoConfig, AutoModelForCausalLM
    from trl import GRPOTrainer

    if len(prompts) != len(answers) or not prompts:
        raise InvalidInputError(f"need one answer per prompt, got {len(prompts)} prompts and {len(answers)} answers")
    if not 0 < tail < 1:
        raise InvalidInputError(f"tail={tail!r}: expected a fraction of the steps in (0, 1)")
    if tail * min_steps / measure_every + 1 < MIN_TAIL_POINTS:
        raise InvalidInputError(f"min_steps={min_steps}, measure_every={measure_every}, tail={tail}: the check's "
                                f"window would hold fewer than the {MIN_TAIL_POINTS} measurements it needs; "
                                "raise min_steps or measure more often")
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    settings = dict(model_path=str(model_path), beta=beta, group_size=group_size, learning_rate=learning_rate,
                    warmup_steps=warmup_steps, use_bias_correction_kl=use_bias_correction_kl, seed=int(seed),
                    min_steps=min_steps, max_steps=max_steps, check_every=check_every, measure_every=measure_every,
                    tail=tail, trainable=trainable, answers=list(answers), prompts=[json.dumps(p) for p in prompts])
    meta = run / "settings.json"
    if meta.exists() and json.loads(meta.read_text()) != settings:
        old = json.loads(meta.read_text())
        raise InvalidInputError(f"{run} holds a run with other settings "
                                f"({', '.join(sorted(k for k in settings if old.get(k) != settings[k]))}); "
                                "remove it or use another folder")
    done = run / "results.csv"
    if done.exists():
        return pd.read_csv(done)
    atomic_write(meta, lambda p: p.write_text(json.dumps(settings, indent=1)))
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    n = len(prompts)
    width = AutoConfig.from_pretrained(model_path).vocab_size          # the logits' width (>= the tokenizer's)
    vocab_text = [tokenizer.decode([i]).strip() if i < len(tokenizer) else None for i in range(width)]
    reward_table = np.array([[float(t == a) for t in vocab_text] for a in answers])
    # the token ids TRL feeds the model: a string prompt with the tokenizer's special tokens, a chat
    # prompt through the chat template with the generation prompt (TRL 1.16's _tokenize_prompts)
    ids = [tokenizer(p)["input_ids"] if isinstance(p, str) else
           tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
           for p in prompts]

    def probs_of(model) -> np.ndarray:
        return probs_after_ids(model, ids)

    measure = measure or (lambda m: (probs_of(m) * reward_table).sum(1))
    if ref_probs is None:
        ref_probs = probs_of(AutoModelForCausalLM.from_pretrained(model_path).eval())

    def reward_fn(prompts, completions, answer, **kw):
        text = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        return [1.0 if t.strip() == a else 0.0 for t, a in zip(text, answer)]

    args = _grpo_config(run, settings, save_every)
    mapping = read_trl_config(args, completion_tokens=1)
    preds, n_stable = theory_predictions(ref_probs, reward_table, mapping.objective)
    traj_path, clock = run / "trajectory.csv", run / "seconds.json"
    ckpt = newest_checkpoint(run)
    at = int(ckpt.name.split("-")[1]) if ckpt is not None else 0
    before = json.loads(clock.read_text()) if clock.exists() and ckpt is not None else {}
    seconds_before = float(before.get("seconds", 0.0)) if before.get("step") == at else 0.0
    rows_at = _trajectory_until(traj_path, at)
    # a run killed after its last checkpoint (the cap, or the check that stopped it) is finished there
    flat_at = bool(rows_at) and _checks_at(at, min_steps, check_every) and _is_flat(rows_at, tail)
    if ckpt is not None and (at >= max_steps or flat_at):
        flat, steps_run, spent = flat_at, at, seconds_before
        atomic_write(traj_path, lambda p: pd.DataFrame(rows_at).to_csv(p, index=False, float_format="%.10g"))
    else:
        policy = AutoModelForCausalLM.from_pretrained(model_path)
        if trainable is not None:
            for name, p in policy.named_parameters():
                p.requires_grad_(name.startswith(trainable))
        # one epoch covers the whole run: TRL's sampler draws each epoch's order from its own generator,
        # which a checkpoint does not save, so a resumed later epoch would replay the first one's order
        reps = max(64, max_steps + 1)
        dataset = Dataset.from_dict({"prompt": list(prompts) * reps, "answer": list(answers) * reps})
        rec = _recorder(traj_path, clock, measure, every=measure_every, min_steps=min_steps,
                        check_every=check_every, tail=tail, stop_after=stop_after, seconds_before=seconds_before)
        trainer = GRPOTrainer(model=policy, reward_funcs=reward_fn, args=args, train_dataset=dataset,
                              processing_class=tokenizer, callbacks=[rec])
        trainer.train(resume_from_checkpoint=str(ckpt) if ckpt is not None else None)
        flat, steps_run, spent = rec.flat, int(trainer.state.global_step), rec.seconds()
        if not flat and steps_run < max_steps:
            return None                                               # stopped by stop_after: resume later
    _, _, m, se, conv = _tail_summary(run / "trajectory.csv", tail)
    rows = [dict(prompt=json.dumps(prompts[i]) if not isinstance(prompts[i], str) else prompts[i],
                 answer=answers[i], pi_ref=float((ref_probs[i] * reward_table[i]).sum()), predicted=preds[i],
                 measured=float(m[i]), measured_se=float(se[i]), error=float(m[i] - preds[i]),
                 n_stable_points=n_stable[i], flat=flat, seconds=round(spent, 1),
                 seed=seed, beta=beta, group_size=group_size, learning_rate=learning_rate,
                 use_bias_correction_kl=use_bias_correction_kl, penalty=mapping.objective.regime,
                 objective=mapping.objective.describe(), **report_columns(conv, i)) for i in range(n)]
    table = pd.DataFrame(rows)
    atomic_write(done, lambda p: table.to_csv(p, index=False))
    return pd.read_csv(done)
