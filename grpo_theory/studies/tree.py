"""The token-level study: GRPO on answer trees against the token-level theory, for each loss type and seed.

    grpo-theory validate --study tree     (or experiments/tree_study.py, which also copies the tables)
"""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .._io import atomic_write
from ..convergence import report_columns, summary_columns
from ..errors import InvalidInputError
from ..problem import Objective
from ..training.reference import pretrain_reference
from ..training.tasks import synthetic_tree_task
from ..training.trainer import GRPOTrainer, TrainerConfig, answer_probabilities
from .predictions import study_theory

__all__ = ["run_tree_study", "TREE_STUDY_SHAPES", "TREE_STUDY_LOSSES", "TREE_STUDY_OBJECTIVE"]

#: The token-level study: answer trees of different lengths whose reward depends on a later token.
TREE_STUDY_SHAPES = ("lengths", "deep", "long")
TREE_STUDY_LOSSES = (("grpo", math.inf), ("dr_grpo", math.inf), ("dapo", 1))
#: The objective every loss type of the study starts from: token level, the direct penalty, beta = 1, G = 8.
TREE_STUDY_OBJECTIVE = Objective(beta=1.0, group_size=8, penalty="direct", level="token")


def _with_loss(base: TrainerConfig, loss_type: str, groups_per_batch: int | float) -> TrainerConfig:
    """``base`` with this loss type and groups per batch (``math.inf``: the whole step; None is refused)."""
    return base.with_changes(loss_type=loss_type, groups_per_batch=groups_per_batch)


def _batch_label(groups_per_batch: int | float) -> int | str:
    """The tables' spelling of ``groups_per_batch``: "all" for the whole step (``math.inf``)."""
    return "all" if math.isinf(groups_per_batch) else int(groups_per_batch)


def run_tree_study(out_dir="runs/validate_tree", *, seeds=(0, 1, 2), shapes=TREE_STUDY_SHAPES,
                   losses=TREE_STUDY_LOSSES, steps: int = 800, obj: Objective = TREE_STUDY_OBJECTIVE,
                   n_questions: int = 8, learning_rate: float = 3e-3, device: str = "cpu",
                   resume: bool = False, progress: bool = True, num_threads: int | None = 1,
                   until_stationary: bool = False, max_steps: int | None = None) -> pd.DataFrame:
    """Token-level GRPO on answer trees against the token-level theory, for each loss type and seed.

    For every (shape, seed) a small GPT is pretrained on the tree's answers; for every loss type
    (``(loss_type, groups_per_batch)``) it is trained at token level, and each answer's measured
    probability is compared with the token-level stationary policy computed from the reference
    model's own probabilities with the trainer's conventions. The sequence-level prediction and the
    other loss types' predictions are recorded beside it, so that the size of each effect shows.
    Writes ``tree_results.csv`` (one row per seed, configuration, question, answer) and
    ``tree_summary.csv`` (per configuration and seed) into ``out_dir``.

    ``until_stationary``/``max_steps``: train each configuration until every question's trajectory
    passes :mod:`grpo_theory.convergence`'s check (cap ``max_steps``); either way every row carries
    the check's columns and the summary the error over converged questions.

    Parameters
    ----------
    out_dir : str or pathlib.Path, default "runs/validate_tree"
        Where the tables and the runs go.
    seeds : tuple of int, default (0, 1, 2)
        The training seeds; each configuration runs once per seed.
    shapes : tuple of str, default TREE_STUDY_SHAPES
        Answer-tree shapes of ``synthetic_tree_task``.
    losses : tuple of (str, int or math.inf), default TREE_STUDY_LOSSES
        ``(loss_type, groups_per_batch)`` pairs; ``math.inf``: every group of the batch ("all" in the tables).
    steps : int, default 800
        Training steps per run.
    obj : Objective, default TREE_STUDY_OBJECTIVE
        The objective each loss type starts from (``beta``, ``G``, the penalty, ...); token level. Each pair of
        ``losses`` sets its ``loss_type`` and ``groups_per_batch``.
    n_questions : int, default 8
        Questions of the synthetic task.
    learning_rate : float, default 3e-3
        The optimiser's step size.
    device : str, default "cpu"
        torch's device for the training.
    resume : bool, default False
        Resume runs from their checkpoints under ``out_dir``.
    progress : bool, default True
        Show progress bars.
    num_threads : int or None, default 1
        torch's thread count (None: leave it).
    until_stationary : bool, default False
        Train each configuration until every question's trajectory passes the stationarity check.
    max_steps : int or None, default None
        The cap on steps with ``until_stationary``.

    Returns
    -------
    pandas.DataFrame
        The summary: per configuration and seed the MAE and max error against the token-level
        prediction and against the sequence-level one, the largest gap to the other loss types'
        predictions, the mean standard error and the seconds.
    """
    if not isinstance(obj, Objective) or not obj.level_variant.per_token:
        raise InvalidInputError(f"the tree study trains at token level: obj must be an Objective with "
                                f"level='token', got {obj!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    rows, summary = [], []
    for shape in shapes:
        for seed in seeds:
            task, freqs = synthetic_tree_task(shape, n_questions, seed=seed)
            ref = pretrain_reference(task, freqs, seed=seed, progress=progress, steps=800)
            ref_probs = answer_probabilities(ref, task)
            base = TrainerConfig(objective=obj, steps=steps, learning_rate=learning_rate, groups_per_question=16,
                                 device=device, seed=seed, num_threads=num_threads, until_stationary=until_stationary,
                                 max_steps=max_steps)
            objectives = {f"{lt}/B={_batch_label(b)}": _with_loss(base, lt, b).objective
                          for lt, b in losses}
            preds = {name: study_theory(ref_probs, task.rewards, o, answers=task.answers).pi
                     for name, o in objectives.items()}
            seq_obj = dataclasses.replace(base.objective, level="sequence")
            sequence_level = study_theory(ref_probs, task.rewards, seq_obj, answers=task.answers)
            seq_pred, questions = sequence_level.pi, sequence_level.questions
            for (lt, b), name in zip(losses, objectives):
                cfg = _with_loss(base, lt, b)
                config = f"{shape}_{lt}_B{_batch_label(b)}"
                trainer = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref,
                                      run_dir=out / "runs" / f"{config}_seed{seed}", progress=progress)
                res = trainer.train(resume=resume)
                err = res.measured - preds[name]
                others = {f"predicted_{n}": preds[n] for n in objectives if n != name}
                for q in range(task.n_questions):
                    for k in range(len(task.answers)):
                        rows.append(dict(seed=seed, config=config, shape=shape, loss_type=lt,
                                         groups_per_batch=_batch_label(b), question=q, answer=k,
                                         answer_tokens=len(task.answers[k]), rewarded=task.rewards[q, k] > 0,
                                         pi_ref=questions[q].pi_ref[k], predicted=preds[name][q, k],
                                         measured=res.measured[q, k], measured_se=res.measured_se[q, k],
                                         error=err[q, k], predicted_sequence_level=seq_pred[q, k],
                                         error_sequence_level=res.measured[q, k] - seq_pred[q, k],
                                         **{key: v[q, k] for key, v in others.items()},
                                         **report_columns(res.convergence, q)))     # issue 26
                summary.append(dict(seed=seed, config=config, shape=shape, loss_type=lt, groups_per_batch=_batch_label(b),
                                    mae=float(np.abs(err).mean()), max_abs_error=float(np.abs(err).max()),
                                    mae_sequence_level=float(np.abs(res.measured - seq_pred).mean()),
                                    max_sequence_level=float(np.abs(res.measured - seq_pred).max()),
                                    max_gap_to_other_loss_types=float(max((np.abs(preds[name] - preds[n]).max()
                                                                           for n in objectives if n != name),
                                                                          default=np.nan)),   # one loss type
                                    mean_se=float(res.measured_se.mean()), seconds=res.seconds, steps=res.steps,
                                    **summary_columns(pd.DataFrame(rows[-err.size:]), unit=["question"])))
                atomic_write(out / "tree_results.csv", lambda p: pd.DataFrame(rows).to_csv(p, index=False))
                atomic_write(out / "tree_summary.csv", lambda p: pd.DataFrame(summary).to_csv(p, index=False))
    return pd.DataFrame(summary)
