"""Theory against experiment: train GRPO on a language model, compare with the stationary policy.

For each configuration (G, beta, penalty, conventions) the trainer starts from the
reference model; the prediction for every question is the theory's stationary
policy computed from the *reference model's own* probabilities of the answers,
with the conventions the trainer used. Writes into ``out``:

    results.csv      one row per (configuration, question): pi_ref, predicted, measured, se, error
    summary.csv      per configuration: MAE, max error, mean se, seconds, gated or not
    trained_points.csv   the measured points in the format that grpo-theory figures --trained reads
    fig_predicted_vs_measured.png/.pdf, fig9_trained_vs_theory*.png/.pdf
    runs/<config>/   each training run: config.json, metrics.csv, checkpoint.pt, summary.json
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .._io import atomic_write
from ..convergence import report_columns, summary_columns
from ..errors import InvalidInputError
from ..problem import Objective
from ..training.policy import answer_token_logprobs
from ..training.reference import pretrain_reference
from ..training.tasks import QATask, synthetic_binary_task
from ..training.trainer import GRPOTrainer, TrainerConfig, answer_probabilities
from .predictions import predict_token_level, rewarded, study_theory
from .protocol import QUICK_MAX_QUESTIONS


@dataclass(frozen=True)
class Study:
    """One training configuration and how it is judged."""

    name: str
    config: TrainerConfig
    gated: bool = True               # counted against the accuracy targets
    answer_length: int = 1
    # Theories the measurement is compared with: "trainer" (the trainer's conventions, sequence
    # level), "note" (ddof 0, eps 0), "token" (token-level stationary policy, two-token answers).
    predictions: tuple = ("trainer",)


def gated_studies(steps: int = 800, group_sizes=(2, 8, 64), betas=(0.5, 1.0), lr: float = 3e-3) -> list[Study]:
    """The gated configurations: every (``G``, ``beta``, penalty) of the grid, both penalties.

    Parameters
    ----------
    steps : int, default 800
        Training steps per run.
    group_sizes : sequence of int, default (2, 8, 64)
        The group sizes ``G``.
    betas : sequence of float, default (0.5, 1.0)
        The KL weights ``beta``.
    lr : float, default 3e-3
        The learning rate.

    Returns
    -------
    list of Study
        One per configuration, ``max(4, 128 // G)`` groups per question per step.
    """
    out = []
    for G in group_sizes:
        for beta in betas:
            for penalty in ("reverse", "direct"):
                cfg = TrainerConfig(objective=Objective(group_size=G, beta=beta, penalty=penalty), steps=steps,
                                 learning_rate=lr, groups_per_question=max(4, 128 // G))
                out.append(Study(f"G{G}_beta{beta:g}_{penalty}", cfg))
    return out


def extra_studies(steps: int = 800, lr: float = 3e-3) -> list[Study]:
    """Measured and reported, not gated: practical conventions against the note's.

    Parameters
    ----------
    steps : int, default 800
        Training steps per run.
    lr : float, default 3e-3
        The learning rate.

    Returns
    -------
    list of Study
        TRL's advantages at ``G = 2`` and 8, four inner updates with clipping, and two-token answers at sequence
        and token level.
    """
    base = TrainerConfig(objective=Objective(group_size=8, beta=0.5), steps=steps, learning_rate=lr,
                      groups_per_question=16)
    g2 = base.with_changes(group_size=2, groups_per_question=64)
    return [
        Study("TRL_std_G2", g2.with_changes(std_ddof=1, std_eps=1e-4), gated=False, predictions=("trainer", "note")),
        Study("TRL_std_G8", base.with_changes(std_ddof=1, std_eps=1e-4), gated=False, predictions=("trainer", "note")),
        Study("inner4_clip_G8", replace(base, inner_updates=4, clip_eps=0.2), gated=False),
        Study("two_token_sequence_G8", base, gated=False, answer_length=2, predictions=("trainer", "token")),
        Study("two_token_token_level_G8", base.with_changes(level="token"), gated=False, answer_length=2,
              predictions=("trainer", "token")),
    ]


def _objective_for(cfg: TrainerConfig, prediction: str) -> Objective:
    if prediction == "note":
        o = cfg.objective
        return Objective(beta=o.beta, group_size=o.group_size, penalty=o.penalty, normalization=o.normalization)
    return cfg.objective


def run_validation(out_dir="runs/validate", *, quick: bool = False, n_questions: int = 16, seed: int = 0,
                   device: str = "cpu", steps: int | None = None, include_extra: bool = True,
                   resume: bool = False, progress: bool = True, num_threads: int | None = 1,
                   learning_rate: float = 3e-3, configs=None, alone: bool = False,
                   figures: bool = True, until_stationary: bool = False,
                   max_steps: int | None = None) -> pd.DataFrame:
    """Run the experiment; returns the per-configuration summary (also written to ``out_dir``).

    Every configuration (group size G, beta, penalty) trains a small policy from a pretrained
    reference ``pi_ref`` on synthetic binary questions and compares the measured P(correct) with the
    stationary point predicted for each question.

    Parameters
    ----------
    out_dir : str or Path
        Where ``results.csv``, ``summary.csv``, ``trained_points.csv``, the runs and the figures go, and the
        pretrained references (``reference_L1.pt``, ``reference_L2.pt``: reloaded by ``resume``).
    quick : bool
        A short version: G in (2, 8), beta = 0.5, 400 steps, at most 10 questions.
    n_questions : int
        Questions per task.
    seed : int
        Seed of the tasks, the references and the training.
    device : str
        torch device.
    steps : int, optional
        Training steps per configuration (default 400 quick, 800 otherwise).
    include_extra : bool
        Also run the configurations beyond the gated ones (not with ``quick``).
    resume : bool
        Continue the runs found in ``out_dir``, from the references pretrained there.
    progress : bool
        Progress bars.
    num_threads : int or None
        torch CPU threads (1 by default: for these small models one thread is far faster than two on a
        2-core machine; None keeps torch's own choice).
    learning_rate : float
        Adam's step size for every configuration (> 0).
    configs : sequence of str, optional
        The configuration names to run (None: all).
    alone : bool
        Train each question by itself (one model per question, nothing shared), which separates the
        per-question theory from the coupling that shared weights add.
    figures : bool
        Draw the figures (needs matplotlib).
    until_stationary : bool
        Train each configuration until every question's trajectory passes :mod:`grpo_theory.convergence`'s
        check; either way every row carries the check's columns and the summary the error over
        converged questions.
    max_steps : int, optional
        The cap on the steps with ``until_stationary``.

    Returns
    -------
    pandas.DataFrame
        One row per configuration: the theory error (measured - predicted) over its questions.

    Raises
    ------
    ValueError
        ``learning_rate <= 0``, or unknown ``configs``.
    """
    if not (learning_rate > 0):
        raise InvalidInputError(f"learning_rate must be > 0, got {learning_rate!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    if quick:
        studies = gated_studies(steps=steps or 400, group_sizes=(2, 8), betas=(0.5,), lr=learning_rate)
        n_questions = min(n_questions, QUICK_MAX_QUESTIONS)
    else:
        studies = gated_studies(steps=steps or 800, lr=learning_rate)
        if include_extra:
            studies += extra_studies(steps=steps or 800, lr=learning_rate)
    if configs is not None:
        known = {s.name for s in studies}
        unknown = sorted(set(configs) - known)
        if unknown:
            raise InvalidInputError(f"unknown configs {unknown}; expected some of {sorted(known)}")
        studies = [s for s in studies if s.name in set(configs)]
    refs: dict[int, tuple] = {}
    rows, summary = [], []
    t_all = time.perf_counter()
    for study in studies:
        L = study.answer_length
        if L not in refs:
            task, freqs = synthetic_binary_task(n_questions, L, seed=seed)
            ref = _reference(out, task, freqs, L, seed, n_questions, resume, progress)
            with torch.no_grad():          # the token-level prediction's input, once per reference
                ref_token_logp = answer_token_logprobs(ref, task).double().cpu().numpy()
            refs[L] = (task, ref, answer_probabilities(ref, task), ref_token_logp)
        task, ref, ref_probs, ref_token_logp = refs[L]
        cfg = replace(study.config, device=device, seed=seed, num_threads=num_threads,
                      until_stationary=until_stationary, max_steps=max_steps)     # issue 26
        if alone:
            res = _train_alone(ref, task, cfg, out / "runs" / study.name, resume, progress)
        else:
            res = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=out / "runs" / study.name,
                              progress=progress).train(resume=resume)
        p_ref = rewarded(task, ref_probs)
        p_meas, p_se = rewarded(task, res.measured), rewarded(task, res.measured_se)
        for prediction in study.predictions:
            obj = _objective_for(cfg, prediction)
            if prediction == "token":
                pred = predict_token_level(task, ref_token_logp, obj)
                stables = [[float(v)] for v in rewarded(task, pred)]
            else:
                theory = study_theory(ref_probs, task.rewards, obj, stable_points=True)
                pred, stables = theory.pi, theory.rewarded_at_stable
            p_pred = rewarded(task, pred)
            err = p_meas - p_pred
            nearest = np.array([min(st, key=lambda v: abs(v - m)) if st else np.nan
                                for st, m in zip(stables, p_meas)])
            for q in range(task.n_questions):
                rows.append(dict(config=study.name, prediction=prediction,
                                 gated=study.gated and prediction == "trainer", group_size=cfg.objective.group_size,
                                 beta=cfg.objective.beta, penalty=cfg.objective.penalty,
                                 std_ddof=cfg.objective.std_ddof, std_eps=cfg.objective.std_eps,
                                 inner_updates=cfg.inner_updates, level=cfg.objective.level, answer_length=L,
                                 question=q, pi_ref_a=p_ref[q],
                                 predicted=p_pred[q], measured=p_meas[q], measured_se=p_se[q], error=err[q],
                                 n_stable_points=len(stables[q]), nearest_stable=nearest[q],
                                 error_to_nearest_stable=p_meas[q] - nearest[q],
                                 same_basin=bool(abs(nearest[q] - p_pred[q]) < 1e-9),
                                 **report_columns(res.convergence, q)))          # issue 26
            summary.append(dict(config=study.name, prediction=prediction,
                                gated=study.gated and prediction == "trainer", n_questions=task.n_questions,
                                mae=float(np.abs(err).mean()), max_abs_error=float(np.abs(err).max()),
                                mean_se=float(p_se.mean()), mean_error=float(err.mean()),
                                max_error_to_nearest_stable=float(np.nanmax(np.abs(p_meas - nearest))),
                                basin_mismatches=int(np.sum(np.abs(nearest - p_pred) > 1e-9)),
                                seconds=res.seconds, steps=res.steps,
                                **summary_columns(pd.DataFrame(rows[-task.n_questions:]))))   # issue 26
        # nothing lost on a crash, and never a half-written table
        atomic_write(out / "results.csv", lambda p: pd.DataFrame(rows).to_csv(p, index=False))
        atomic_write(out / "summary.csv", lambda p: pd.DataFrame(summary).to_csv(p, index=False))
    results = pd.DataFrame(rows)
    summ = pd.DataFrame(summary)
    gated = results[results.gated]
    overall = dict(gated_mae=float(gated.error.abs().mean()), gated_max=float(gated.error.abs().max()),
                   seconds_total=time.perf_counter() - t_all, device=device, quick=quick, seed=seed,
                   n_questions=n_questions, torch=torch.__version__)
    atomic_write(out / "overall.json", lambda p: p.write_text(json.dumps(overall, indent=2)))
    trained = results[(results.penalty == "reverse") & results.gated & (results.answer_length == 1)]
    trained[["group_size", "beta", "pi_ref_a", "measured", "measured_se", "predicted"]].to_csv(
        out / "trained_points.csv", index=False)
    if figures:
        _figures(results, out)
    return summ


def _reference(out: Path, task: QATask, freqs: np.ndarray, L: int, seed: int, n_questions: int, resume: bool,
               progress: bool):
    """The pretrained reference for answers of ``L`` tokens, saved in ``out``: a resumed validation reloads it
    (the same parameters to the bit) instead of pretraining it again (800 or 1200 steps, more than a quick
    validation's runs)."""
    steps = 800 if L == 1 else 1200
    path = out / f"reference_L{L}.pt"
    key = dict(seed=seed, n_questions=n_questions, answer_length=L, steps=steps)
    if resume and path.is_file():
        saved = torch.load(path, weights_only=False)
        if saved.get("key") == key:
            return saved["model"]
    ref = pretrain_reference(task, freqs, seed=seed, progress=progress, steps=steps)
    atomic_write(path, lambda p: torch.save(dict(key=key, model=ref), p))
    return ref


def _train_alone(ref, task: QATask, cfg: TrainerConfig, run_dir: Path, resume: bool, progress: bool):
    """Each question trained by its own copy of the reference model; the results stacked as one run's."""
    parts = []
    for q in range(task.n_questions):
        trainer = GRPOTrainer(copy.deepcopy(ref), task.subset([q]), cfg, reference=ref,
                              run_dir=run_dir / f"q{q}", progress=progress)
        parts.append(trainer.train(resume=resume))
    return replace(parts[0], measured=np.concatenate([p.measured for p in parts]),
                   measured_se=np.concatenate([p.measured_se for p in parts]),
                   seconds=sum(p.seconds for p in parts), steps=max(p.steps for p in parts),
                   convergence=[p.convergence for p in parts])


def _figures(results: pd.DataFrame, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from .. import plotting  # matplotlib (optional), like figures
    from ..figures import build_figures  # matplotlib (optional)

    with matplotlib.rc_context(plotting.STYLE):
        fig = plotting.predicted_vs_measured(results[results.gated])
        fig.savefig(out / "fig_predicted_vs_measured.png", metadata={"Software": None})
        fig.savefig(out / "fig_predicted_vs_measured.pdf", metadata={"CreationDate": None})
        extra = results[~results.gated]
        if len(extra):
            fig = plotting.predicted_vs_measured(extra)
            fig.savefig(out / "fig_extra_studies.png", metadata={"Software": None})
    build_figures(out, only=[9], trained=out / "trained_points.csv", progress=False)
