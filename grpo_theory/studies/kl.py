"""The trainer's KL estimators, placements and clamps against the theory (``grpo-theory validate --study kl``).

For each seed a small GPT is pretrained on binary questions (and on an answer tree); every variant
of :data:`KL_VARIANTS` then trains a copy with our trainer, and each answer's measured probability is
compared with the stationary policy the theory predicts from the reference model's own
probabilities under the same conventions. Variants cover each estimator and placement, KL in the
reward against log pooling, and verl's clamped k3 just below and above its critical beta (where a
collapse must be predicted as one). Writes ``kl_results.csv`` (seed, config, question, answer,
predicted, measured, ...) and ``kl_summary.csv`` (per configuration and seed) into ``out_dir``.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .._io import atomic_write
from ..convergence import report_columns, summary_columns
from ..errors import InvalidInputError
from ..kl import discontinuities
from ..problem import Objective, Question
from ..training.reference import pretrain_reference
from ..training.tasks import synthetic_binary_task, synthetic_tree_task
from ..training.trainer import GRPOTrainer, TrainerConfig, answer_probabilities
from .predictions import clamp_critical_betas, study_theory

VERL_CLAMPS = dict(kl_log_ratio_clamp=20.0, kl_value_clamp=10.0)
#: The objective every variant starts from (its changes replace fields of it): beta = 0.5, G = 8, the
#: group's standard deviation with ddof 1 and eps 1e-4 (the trainer's sample std).
KL_STUDY_OBJECTIVE = Objective(beta=0.5, group_size=8, std_ddof=1, std_eps=1e-4)
#: name -> (task, TrainerConfig changes). beta ("critical", f): f x the smallest critical beta of the questions
#: for f < 1 (every question then collapses), f x the largest for f > 1 (every question keeps an interior point).
KL_VARIANTS = {
    "k1_loss": ("binary", dict(kl_estimator="k1")),
    "k2_loss": ("binary", dict(kl_estimator="k2")),
    "k3_plus_loss_verl_clamps": ("binary", dict(kl_estimator="k3_plus", **VERL_CLAMPS)),
    "abs_loss": ("binary", dict(kl_estimator="abs")),
    "k1_advantage": ("binary", dict(kl_estimator="k1", kl_placement="advantage")),
    "k3_advantage_clamp10": ("binary", dict(kl_estimator="k3", kl_placement="advantage", kl_value_clamp=10.0)),
    "k1_reward": ("binary", dict(kl_estimator="k1", kl_placement="reward")),
    "k1_reward_eps0": ("binary", dict(kl_estimator="k1", kl_placement="reward", std_eps=0.0)),
    "k3_low_var_kl_0.8x_critical": ("binary", dict(kl_estimator="k3", beta=("critical", 0.8), **VERL_CLAMPS)),
    "k3_low_var_kl_1.25x_critical": ("binary", dict(kl_estimator="k3", beta=("critical", 1.25), **VERL_CLAMPS)),
    "k3_low_var_kl_2.5x_critical": ("binary", dict(kl_estimator="k3", beta=("critical", 2.5), **VERL_CLAMPS)),
    "k3_low_var_kl_1.25x_critical_lr3e-4": ("binary", dict(kl_estimator="k3", beta=("critical", 1.25),
                                                            learning_rate=3e-4, steps_factor=4, **VERL_CLAMPS)),
    # one question alone: no other question shares the weights
    "alone_k3_low_var_kl_1.25x_critical_lr3e-4": ("alone", dict(kl_estimator="k3", beta=("critical", 1.25),
                                                                 learning_rate=3e-4, steps_factor=4, **VERL_CLAMPS)),
    "alone_k1_loss": ("alone", dict(kl_estimator="k1")),
    "tree_k1_advantage_dr_grpo": ("tree", dict(kl_estimator="k1", kl_placement="advantage", level="token",
                                               loss_type="dr_grpo")),
}


def _edge_margin(obj, q: Question, pi: np.ndarray) -> float:
    """``log pi(b) - log(pi_ref(b) e^{edge})`` for the unrewarded answer of a binary question under a value
    clamp in the loss: how far (in logit) the predicted point sits above the clamp's edge (NaN otherwise)."""
    edges = [e for e in discontinuities(obj) if e < 0] if obj.placement_variant.in_loss else []
    if not edges or q.n_outputs != 2:
        return float("nan")
    b = int(np.argmin(q.expected_reward))
    return float(np.log(pi[b]) - np.log(q.pi_ref[b]) - max(edges)) if pi[b] > 0 else float("-inf")


def run_kl_study(out_dir="runs/validate_kl", *, seeds=(0, 1, 2), variants=None, steps: int = 800,
                 obj: Objective = KL_STUDY_OBJECTIVE, n_questions: int = 8, learning_rate: float = 3e-3,
                 device: str = "cpu", resume: bool = False, progress: bool = True,
                 num_threads: int | None = 1, until_stationary: bool = False,
                 max_steps_factor: float = 4.0) -> pd.DataFrame:
    """Train every KL variant for every seed and compare with the theory (see module doc).

    Parameters
    ----------
    out_dir : str or Path
        Where ``kl_results.csv``, ``kl_summary.csv`` and the runs go.
    seeds : sequence of int
        One run of every variant per seed.
    variants : sequence of str, optional
        Names from ``KL_VARIANTS`` (estimator, placement, clamps); None: all.
    steps : int
        Training steps per run.
    obj : Objective
        The objective every variant starts from (default :data:`KL_STUDY_OBJECTIVE`); a variant's changes
        (estimator, placement, clamps, a critical ``beta``) replace its fields.
    n_questions : int
        Questions per task.
    learning_rate : float
        Adam's step size.
    device : str
        torch device.
    resume : bool, default False
        As for :func:`grpo_theory.studies.small.run_validation`.
    progress : bool, default True
        Likewise.
    num_threads : int or None, default 1
        Likewise.
    until_stationary : bool
        Each run goes on past its steps until :mod:`grpo_theory.convergence`'s check passes for every
        question, up to ``max_steps_factor`` times its steps; every row carries the check's columns either way.
    max_steps_factor : float
        The cap, as a multiple of ``steps``.

    Returns
    -------
    pandas.DataFrame
        One row per (seed, variant): the theory error over its questions (also ``kl_summary.csv``).
    """
    if not isinstance(obj, Objective):
        raise InvalidInputError(f"obj must be an Objective, got {obj!r}")
    start = obj                 # the variants start from it; `obj` below is each variant's own
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    names = list(KL_VARIANTS) if variants is None else list(variants)
    rows, summary = [], []
    for seed in seeds:
        tasks = {"binary": synthetic_binary_task(n_questions, seed=seed),
                 "alone": synthetic_binary_task(1, seed=seed, p_range=(0.3, 0.3)),
                 "tree": synthetic_tree_task("lengths", n_questions, seed=seed)}
        refs, ref_probs = {}, {}
        for kind in {KL_VARIANTS[n][0] for n in names}:
            task, freqs = tasks[kind]
            refs[kind] = pretrain_reference(task, freqs, seed=seed, progress=progress, steps=800)
            ref_probs[kind] = answer_probabilities(refs[kind], task)
        for name in names:
            kind, changes = KL_VARIANTS[name]
            task, ref = tasks[kind][0], refs[kind]
            changes = dict(changes)
            changes["steps"] = steps * changes.pop("steps_factor", 1)
            base = TrainerConfig(objective=start, steps=steps, learning_rate=learning_rate, groups_per_question=16,
                                 device=device, seed=seed, num_threads=num_threads, final_window=0.2)
            if isinstance(changes.get("beta"), tuple):
                factor = changes["beta"][1]
                probe = base.with_changes(**{**changes, "beta": 1.0}).objective
                crit = clamp_critical_betas(ref_probs[kind], task.rewards, probe, answers=task.answers)
                changes["beta"] = factor * (crit.min() if factor < 1 else crit.max())
            else:
                crit = np.full(task.n_questions, np.nan)
            cfg = base.with_changes(**changes)
            cfg = replace(cfg, until_stationary=until_stationary,                       # issue 26
                          max_steps=int(max_steps_factor * cfg.steps) if until_stationary else None)
            obj = cfg.objective
            theory = study_theory(ref_probs[kind], task.rewards, obj, answers=task.answers)
            points, pred, pooled = theory.points, theory.pi, theory.log_pooling
            trainer = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref,
                                  run_dir=out / "runs" / f"{name}_seed{seed}", progress=progress)
            res = trainer.train(resume=resume)
            err = res.measured - pred
            for qi, (q, pt) in enumerate(zip(theory.questions, points)):
                for k in range(len(task.answers)):
                    rows.append(dict(seed=seed, config=name, penalty=obj.regime, beta=obj.beta, question=qi,
                                     answer=k, rewarded=bool(task.rewards[qi, k] > 0), pi_ref=q.pi_ref[k],
                                     predicted=pred[qi, k], measured=res.measured[qi, k],
                                     measured_se=res.measured_se[qi, k], error=err[qi, k],
                                     predicted_collapse=bool(pt.boundary), discontinuous=bool(pt.discontinuous),
                                     log_pooling=pooled[qi, k], critical_beta=crit[qi],
                                     edge_margin=_edge_margin(obj, q, pt.pi),
                                     **report_columns(res.convergence, qi)))      # issue 26
            summary.append(dict(seed=seed, config=name, penalty=obj.regime, beta=obj.beta,
                                objective=obj.describe(), mae=float(np.abs(err).mean()),
                                max_abs_error=float(np.abs(err).max()),
                                predicted_collapses=int(sum(p.boundary for p in points)),
                                measured_collapses=int(np.sum(res.measured.min(axis=1) < 0.01)),
                                mean_se=float(res.measured_se.mean()), seconds=res.seconds, steps=res.steps,
                                **summary_columns(pd.DataFrame(rows[-err.size:]), unit=["question"])))
            atomic_write(out / "kl_results.csv", lambda p: pd.DataFrame(rows).to_csv(p, index=False))
            atomic_write(out / "kl_summary.csv", lambda p: pd.DataFrame(summary).to_csv(p, index=False))
            del trainer
    return pd.DataFrame(summary)
