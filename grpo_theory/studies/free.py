"""Free generation on SmolLM2: predict a real run per prompt, and score the prediction.

The answer space is open: completions of at most ``max_new_tokens`` tokens are sampled from the full vocabulary at
temperature 1, and a verifier rewards a completion whose first word (:func:`normalise`: lower case, surrounding
punctuation dropped) is the answer. The theory sees two classes, correct and the rest, with
``p_ref = P_ref(correct)``: at a stationary point of sequence-level GRPO the policy keeps ``pi_ref``'s proportions
inside each class, so the prediction is ``x(p_ref)``, the two-class stationary P(correct)
(:class:`~grpo_theory.predict.Response`).

The study, step by step (each step's output is kept under ``out_dir``, so a rerun resumes):

1. **Screen** a pool of candidate prompts (:func:`candidate_pool`: yes/no questions, short factual
   questions and small arithmetic) with ``n_screen`` samples each, and keep ``n_prompts`` whose screened
   P(correct) spreads evenly in ``logit p`` over ``[0.05, 0.9]`` (:func:`select_prompts`).
2. **Estimate p_ref afresh** from ``n_ref >= 400`` new samples per kept prompt (an independent
   random stream), so the screening's selection does not bias it.
3. **Choose two betas** from the fresh ``p_ref`` alone (:func:`choose_betas`): the pair of the
   candidates whose predictions differ by at least 0.2 for the most prompts.
4. **Train** every (beta, seed) job (:func:`run_job`): sequence-level GRPO, reverse (k3) penalty, ``G`` samples per
   prompt per step, only the last MLP trainable. A job checkpoints every few steps (trainable weights, Adam's state,
   the random generator, the history) and resumes from its last checkpoint after a crash. P(correct) is measured
   from ``n_mid`` samples at each of ``eval_steps``. **Flat**: from ``min_steps`` on, every ``check_every`` steps,
   the logged training reward is checked with :func:`grpo_theory.convergence.check_trajectories` over the last 25%
   of the steps (each logged value the mean of ``G`` 0/1 rewards, judged against its binomial standard error): the
   job stops when the mean reward over prompts is "converged" and no prompt is "moving" (at the Bonferroni level
   0.05 / prompts, see :func:`is_flat`), or at ``max_steps`` (then its prompts keep their "moving" status in the
   table). Then P(correct) is measured from ``n_eval >= 200`` fresh samples.
5. **Score** (:func:`score`): per (beta, seed) the theory's MAE over prompts (target <= 0.03),
   against two baselines fitted on half the prompts and scored on the other half (and the halves
   swapped, so every prompt is scored once out of sample): the identity ``p_ref`` and the best single
   logit shift ``expit(logit p_ref + c)``. At the intermediate steps the finite-time prediction
   ``p_x(clock * step)`` of :func:`grpo_theory.predict.flow_table` is scored the same way, its clock
   fitted (least squares over the run's intermediate steps) on the other half, and the shift
   refitted on the other half at each step.

The model sits behind a small *backend* (:class:`~grpo_theory.studies.free_backend.SmolBackend`; the tests use a
tabular stub):
``prompts``, ``sample(q, n, generator) -> completions with .text``, ``logp(completions, reference)
-> (logp, mask)`` of shape (prompts, n, T), ``parameters()``, ``state_dict()``/``load_state_dict()``
of the trainable part, and ``reset()`` (back to the reference).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from .._io import atomic_write
from ..convergence import ALPHA, ConvergenceReport, check_history, check_trajectories
from ..errors import InvalidInputError
from ..problem import Objective
from ..training.loss import group_advantages, grpo_objective
from .free_backend import SmolBackend, smol_model  # noqa: F401
from .free_more import more_final_counts, more_reference_counts, pool_counts
from .free_prompts import (  # noqa: F401
    BETA_CANDIDATES,
    MIN_DIFF,
    P_RANGE,
    POOLS,
    candidate_pool,
    choose_betas,
    count_correct,
    greeting_pool,
    normalise,
    select_prompts,
)
from .free_scoring import COLUMNS, assemble, fit_clock_lsq, fit_shift, score  # noqa: F401
from .predictions import stationary_x

# this module's own public names; the prompt selection (free_prompts) and the scoring (free_scoring)
# are documented there and importable from here as before
__all__ = ["JobSpec", "run_job", "is_flat", "run_free_study", "cost_model"]


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """One training job: a beta and a seed, with the trainer's settings.

    Attributes
    ----------
    beta : float
        The KL weight ``beta``.
    seed : int
        Seed of the sampling and of the training.
    group_size : int
        ``G``: samples per prompt per step (one group).
    penalty : str
        ``"reverse"`` (GRPO's k3 in the loss).
    learning_rate : float
        Adam's, constant (so that one clock maps steps to flow time).
    min_steps, max_steps : int
        The flatness check starts at ``min_steps``; no job runs past ``max_steps``.
    check_every : int
        Steps between flatness checks.
    eval_steps : tuple of int
        Steps at which P(correct) is measured for the finite-time prediction, from ``n_mid`` samples.
    n_mid, n_eval : int
        Samples per prompt at an intermediate step, and at the end.
    checkpoint_every : int
        Steps between checkpoints.
    """

    beta: float
    seed: int
    group_size: int = 8
    penalty: str = "reverse"
    learning_rate: float = 3e-4
    min_steps: int = 150
    max_steps: int = 800
    check_every: int = 25
    eval_steps: tuple = (10, 25, 50, 100)
    n_mid: int = 200
    n_eval: int = 400
    checkpoint_every: int = 10

    @property
    def name(self) -> str:
        return f"beta{self.beta:g}_seed{self.seed}"

    @property
    def obj(self) -> Objective:
        """The :class:`~grpo_theory.Objective` this job trains (sequence level, the group advantage, the
        penalty in the loss): what crosses into the torch loss."""
        return Objective(beta=self.beta, group_size=self.group_size, penalty=self.penalty)


def _check(history: list, n_prompts: int, n_samples: int, **kw) -> ConvergenceReport:
    """The stationarity check on the sampled P(correct) per step (each the mean of ``n_samples`` 0/1
    rewards), against its binomial standard error at the tail's mean; ``kw`` go to the check."""
    tail = np.array([[h[f"p_best_q{i}"] for i in range(n_prompts)] for h in history[-max(1, len(history) // 4):]])
    m = tail.mean(0)
    return check_history(history, n_prompts, se=np.sqrt(m * (1 - m) / n_samples), too_short="moving",
                         **kw)                          # a job in progress: a short tail is moving (train on)


def is_flat(history: list, n_prompts: int, group_size: int) -> tuple[bool, ConvergenceReport, str]:
    """Whether a job's training reward is flat: the mean reward "converged" and no prompt "moving" at the
    Bonferroni level ``ALPHA / n_prompts``.

    The per-prompt test at the plain level would stop a stationary 24-prompt run at only about half
    of its checks (one of 24 prompts is "moving" by chance 5% of the time each); the corrected level
    keeps the chance that noise alone delays the stop near ``ALPHA``.

    Parameters
    ----------
    history : list of dict
        Rows ``step, reward, p_best_q0 ...`` (each ``p_best_q{i}`` the mean of ``group_size`` 0/1 rewards).
    n_prompts, group_size : int
        The prompts trained on, and ``G``, the samples per prompt per step.

    Returns
    -------
    (bool, ConvergenceReport, str)
        The verdict, the per-prompt report at the plain level (for the result table), and the mean
        reward's status.
    """

    per_prompt = _check(history, n_prompts, group_size)
    strict = _check(history, n_prompts, group_size, alpha=ALPHA / n_prompts)
    steps = np.array([h["step"] for h in history], dtype=float)
    reward = np.array([h["reward"] for h in history], dtype=float)
    tail = np.array([[h[f"p_best_q{i}"] for i in range(n_prompts)] for h in history[-max(1, len(history) // 4):]])
    m = tail.mean(0)
    se = math.sqrt(float(np.sum(m * (1 - m))) / (n_prompts ** 2 * group_size))
    mean_status = str(check_trajectories(steps, reward, se=se).status[0])
    flat = mean_status == "converged" and not np.any(strict.status == "moving")
    return flat, per_prompt, mean_status


def _grpo_step(backend, opt, spec: JobSpec, answers, want, gen) -> dict:

    P, G = len(answers), spec.group_size
    comps = [backend.sample(q, G, gen) for q in range(P)]
    r = torch.tensor([[float(normalise(t) == want[q]) for t in c.text] for q, c in enumerate(comps)])
    lp, mask = backend.logp(comps, reference=False)
    with torch.no_grad():
        lp_ref, _ = backend.logp(comps, reference=True)
    shape = (P, 1, G, lp.shape[-1])
    adv = group_advantages(r.view(P, 1, G)).to(lp.device)
    obj, diag = grpo_objective(spec.obj, lp.view(shape), lp.detach().view(shape), lp_ref.view(shape), adv,
                               mask=mask.view(shape))
    opt.zero_grad(set_to_none=True)
    (-obj).backward()
    opt.step()
    return dict(reward=float(r.mean()), k3=float(diag["k3"]),
                **{f"p_best_q{i}": float(v) for i, v in enumerate(r.mean(1).tolist())})


def _save(path: Path, state: dict) -> None:
    atomic_write(path, lambda p: torch.save(state, p))


def run_job(backend, spec: JobSpec, job_dir, *, answers, stop_after: int | None = None,
            progress: bool = False) -> pd.DataFrame | None:
    """Train one (beta, seed) job to a flat reward curve and measure P(correct); resumable.

    The job's state (step, trainable weights, Adam's state, the generator's state, the history, the intermediate
    measurements, the CPU seconds spent) is saved to ``job_dir/state.pt`` every ``spec.checkpoint_every`` steps and
    after every measurement, atomically; a call finds it and continues from there, so a crash loses at most
    ``checkpoint_every`` steps, and the resumed job draws the same samples as an uninterrupted one. A finished job's
    table is ``job_dir/measured.csv`` and is returned at once by later calls.

    Parameters
    ----------
    backend
        The model (see the module docstring); :meth:`reset` is called before a fresh start.
    spec : JobSpec
        The job's beta, seed and trainer settings.
    job_dir : str or pathlib.Path
        The job's folder: its checkpoint and, when done, its table.
    answers : sequence of str
        One per prompt of ``backend``.
    stop_after : int, optional
        Run at most this many training steps in this call, then checkpoint and return None (a
        session's share of a long job; the tests' simulated crash).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame or None
        One row per (measurement step, prompt): ``seed, beta, prompt`` (index), ``measured, measured_n,
        step, kind`` (``"intermediate"`` or ``"final"``), ``conv_status, mean_reward_status, steps_run,
        cpu_seconds``; None when stopped early by ``stop_after``.

    Raises
    ------
    InvalidInputError
        If ``job_dir`` holds a job with other settings or another number of prompts.
    """
    job_dir = Path(job_dir)
    job_dir.mkdir(parents=True, exist_ok=True)
    done = job_dir / "measured.csv"
    if done.exists():
        return pd.read_csv(done)
    P = len(answers)
    want = [normalise(a) for a in answers]
    meta = dict(asdict(spec), eval_steps=list(spec.eval_steps), n_prompts=P, answers=list(answers))
    meta_path = job_dir / "spec.json"
    if meta_path.exists():
        old = json.loads(meta_path.read_text())
        if old != meta:
            diff = sorted(k for k in meta if old.get(k) != meta[k])
            raise InvalidInputError(f"{job_dir} holds a job with other settings ({', '.join(diff)}); "
                                    "remove it or use another out_dir")
    else:
        atomic_write(meta_path, lambda p: p.write_text(json.dumps(meta, indent=1)))
    torch.manual_seed(spec.seed)
    gen = torch.Generator().manual_seed(spec.seed)
    opt = torch.optim.Adam(list(backend.parameters()), lr=spec.learning_rate)
    state_path = job_dir / "state.pt"
    if state_path.exists():
        st = torch.load(state_path, weights_only=False)
        backend.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        gen.set_state(st["gen"])
    else:
        backend.reset()
        st = dict(step=0, history=[], evals=[], cpu=0.0, flat=False)
    cpu_before, cpu0 = st["cpu"], time.process_time()       # CPU seconds of earlier calls, and this call's start
    ran = 0

    def checkpoint():
        st.update(model=backend.state_dict(), opt=opt.state_dict(), gen=gen.get_state(),
                  cpu=cpu_before + time.process_time() - cpu0)
        _save(state_path, st)

    bar = tqdm(total=spec.max_steps, initial=st["step"], desc=f"job {spec.name}", disable=not progress, leave=False)
    while st["step"] < spec.max_steps and not st["flat"]:
        if stop_after is not None and ran >= stop_after:
            checkpoint()
            bar.close()
            return None
        row = _grpo_step(backend, opt, spec, answers, want, gen)
        st["step"] += 1
        ran += 1
        st["history"].append(dict(step=st["step"], **row))
        bar.update()
        bar.set_postfix(reward=f"{row['reward']:.3f}")
        saved = False
        if st["step"] in spec.eval_steps:
            st["evals"].append(dict(step=st["step"], counts=count_correct(backend, answers, spec.n_mid, gen).tolist(),
                                    n=spec.n_mid))
            checkpoint()
            saved = True
        s = st["step"]
        if s >= spec.min_steps and (s - spec.min_steps) % spec.check_every == 0:
            st["flat"] = bool(is_flat(st["history"], P, spec.group_size)[0])
        if (s % spec.checkpoint_every == 0 or st["flat"]) and not saved:
            checkpoint()
    bar.close()
    final = count_correct(backend, answers, spec.n_eval, gen)
    cpu = cpu_before + time.process_time() - cpu0
    _, rep, mean_status = is_flat(st["history"], P, spec.group_size)
    rows = []
    for ev in st["evals"]:
        rows += [dict(seed=spec.seed, beta=spec.beta, prompt=q, measured=k / ev["n"], measured_n=ev["n"],
                      step=ev["step"], kind="intermediate") for q, k in enumerate(ev["counts"])]
    rows += [dict(seed=spec.seed, beta=spec.beta, prompt=q, measured=k / spec.n_eval, measured_n=spec.n_eval,
                  step=st["step"], kind="final", conv_status=str(rep.status[q]), conv_reason=rep.reason(q))
             for q, k in enumerate(final)]
    table = pd.DataFrame(rows)
    table["mean_reward_status"] = mean_status
    table["steps_run"] = st["step"]
    table["cpu_seconds"] = round(cpu, 2)
    atomic_write(job_dir / "history.csv", lambda p: pd.DataFrame(st["history"]).to_csv(p, index=False))
    atomic_write(done, lambda p: table.to_csv(p, index=False))
    return pd.read_csv(done)          # as a later call reads it: the same table whether resumed or not


def _job_worker(args) -> pd.DataFrame | None:
    model_dir, device, questions, answers, max_new, spec, job_dir, stop_after, progress = args
    model, tok = smol_model(model_dir, device)
    backend = SmolBackend(model, tok, questions, max_new)
    return run_job(backend, spec, job_dir, answers=answers, stop_after=stop_after, progress=progress)


def _stage(path: Path, make):
    """``path``'s table if an earlier run wrote it, else ``make()`` written there atomically."""
    if path.exists():
        return pd.read_csv(path, dtype={"answer": str})
    table = make()
    atomic_write(path, lambda p: table.to_csv(p, index=False))
    return table


def _with_more_samples(out: Path, jobs, results, prompts, answers, n_more, backend_factory, questions, progress):
    """Pool ``n_more`` further samples into ``p_ref`` and every job's final measurement (:mod:`.free_more`);
    the first estimates stay as ``p_ref_first``/``measured_first`` (and their ``_n_first``)."""
    holder: list = []

    def backend():                           # the model is loaded only if some count is not on disk yet
        if not holder:
            holder.append(backend_factory(questions))
        return holder[0]
    need = not (out / "p_ref_more.csv").exists() or any(not (out / j.name / "final_more.csv").exists() for j in jobs)
    b = backend() if need else None
    ref = more_reference_counts(b, answers, n_more, out, progress=progress)
    prompts = prompts.assign(p_ref_first=prompts.p_ref, p_ref_n_first=prompts.p_ref_n)
    prompts["p_ref"], prompts["p_ref_n"] = pool_counts(prompts.p_ref, prompts.p_ref_n, ref, prompts.prompt)
    pooled = []
    for j, r in zip(jobs, results):
        more = more_final_counts(b, answers, n_more, out / j.name, seed=j.seed, beta=j.beta, progress=progress)
        r = r.assign(measured_first=r.measured, measured_n_first=r.measured_n)
        fin = r.kind == "final"
        v, n = pool_counts(r.measured[fin], r.measured_n[fin], more, r.prompt[fin])
        r.loc[fin, "measured"], r.loc[fin, "measured_n"] = v, n
        pooled.append(r)
    return prompts, pooled


def run_free_study(out_dir="runs/free_generation", *, model_dir="models/smollm2", seeds=(0, 1, 2),
                   betas=None, n_prompts: int = 24, n_screen: int = 32, n_ref: int = 400, max_new_tokens: int = 4,
                   spec: dict | None = None, workers: int = 1, stop_after: int | None = None,
                   progress: bool = True, backend_factory=None, device: str = "cpu",
                   t_max: float = 1e4, n_more: int = 0, pool: str = "main",
                   p_range: tuple[float, float] = P_RANGE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The whole validation: screen, estimate p_ref afresh, choose betas, train every (beta, seed), score.

    Every stage's output is kept under ``out_dir`` (``screen.csv``, ``prompts.csv``, ``betas.json``, one
    folder per job): a rerun resumes where the last one stopped.

    Parameters
    ----------
    out_dir : str or pathlib.Path
        Where every stage's output goes (a rerun resumes from it).
    model_dir : str or pathlib.Path
        SmolLM2's GGUF file's folder.
    seeds : sequence of int
        The training seeds: one job per (beta, seed).
    betas : (float, float), optional
        Default: :func:`choose_betas` from the fresh ``p_ref``.
    n_prompts : int
        Prompts kept after the screening.
    n_screen : int
        Screening samples per candidate prompt.
    n_ref : int
        Fresh samples per kept prompt for ``p_ref``.
    max_new_tokens : int
        The longest completion sampled, in tokens.
    spec : dict, optional
        :class:`JobSpec` fields other than ``beta`` and ``seed``.
    workers : int
        Jobs run at once, each in its own process with one torch thread.
    stop_after : int, optional
        Training steps per job in this call (see :func:`run_job`); unfinished jobs are left for the next call.
    progress : bool
        Show progress bars.
    backend_factory : callable, optional
        ``backend_factory(questions) -> backend`` (tests); default: :class:`~grpo_theory.studies.free_backend.SmolBackend` on SmolLM2
        (then ``workers > 1`` uses processes).
    device : str
        Where SmolLM2 runs ("cpu", or "cuda": untested here, no GPU was at hand; the sampler's generator
        and the rewards stay on the CPU).
    t_max : float
        See :func:`assemble`.
    n_more : int
        Once every job has finished: this many further samples per prompt for ``p_ref`` (from the
        untrained policy) and for each job's final measurement (from its final policy), pooled with the
        first ones (:mod:`grpo_theory.studies.free_more`; the first estimates are kept as ``p_ref_first``,
        ``measured_first`` and their ``_n_first``). 0: none.
    pool : {"main", "greetings"}
        The candidates screened (:data:`~grpo_theory.studies.free_prompts.POOLS`): the yes/no, factual and
        arithmetic questions of :func:`candidate_pool`, or :func:`greeting_pool` for the upper end of P(correct).
    p_range : (float, float)
        The P(correct) range the kept prompts spread over (:func:`select_prompts`).

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        :func:`assemble`'s table and :func:`score`'s summary (empty while jobs are unfinished).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = dict(spec or {})
    if pool not in POOLS:
        raise InvalidInputError(f"pool must be one of {sorted(POOLS)}, got {pool!r}")
    pool = POOLS[pool]()
    use_processes = workers > 1 and backend_factory is None
    if backend_factory is None:
        def backend_factory(questions):
            model, tok = smol_model(model_dir, device)
            return SmolBackend(model, tok, questions, max_new_tokens)

    def screen():
        b = backend_factory([c[1] for c in pool])
        k = count_correct(b, [c[2] for c in pool], n_screen, torch.Generator().manual_seed(1234),
                          desc="screening", progress=progress)
        return pd.DataFrame(dict(candidate=range(len(pool)), label=[c[0] for c in pool], answer=[c[2] for c in pool],
                                 correct=k, n=n_screen))
    scr = _stage(out / "screen.csv", screen)
    if len(scr) != len(pool) or list(scr.label) != [c[0] for c in pool]:
        raise InvalidInputError(f"{out / 'screen.csv'} screened another pool ({len(scr)} candidates, first "
                                f"{scr.label.iloc[0]!r}); use another out_dir for this pool")
    keep = select_prompts(scr.correct.to_numpy(), n_screen, n_prompts, p_range=p_range)

    def fresh():
        b = backend_factory([pool[i][1] for i in keep])
        k = count_correct(b, [pool[i][2] for i in keep], n_ref, torch.Generator().manual_seed(98765),
                          desc="p_ref (fresh samples)", progress=progress)   # a stream the screening never saw
        return pd.DataFrame(dict(prompt=range(len(keep)), candidate=keep, label=[pool[i][0] for i in keep],
                                 question=[pool[i][1] for i in keep], answer=[pool[i][2] for i in keep],
                                 correct=k, p_ref_n=n_ref, p_ref=k / n_ref,
                                 screened=scr.correct.to_numpy()[keep] / n_screen))
    prompts = _stage(out / "prompts.csv", fresh)
    beta_path = out / "betas.json"
    if beta_path.exists():
        chosen = json.loads(beta_path.read_text())
    else:
        G, pen = spec.get("group_size", 8), spec.get("penalty", "reverse")
        pair, frac = (tuple(betas), None) if betas else choose_betas(prompts.p_ref, group_size=G, penalty=pen)
        x = [stationary_x(prompts.p_ref, Objective(beta=b, group_size=G, penalty=pen)) for b in pair]
        frac = float(np.mean(np.abs(x[0] - x[1]) >= MIN_DIFF)) if frac is None else frac
        chosen = dict(betas=list(pair), fraction_differing=frac)
        atomic_write(beta_path, lambda p: p.write_text(json.dumps(chosen, indent=1)))
    questions, answers = prompts.question.tolist(), prompts.answer.astype(str).tolist()
    jobs = [JobSpec(beta=float(b), seed=int(s), **spec) for b in chosen["betas"] for s in seeds]
    results: list = []
    done = [out / j.name / "measured.csv" for j in jobs]
    if all(d.exists() for d in done):                 # rescoring finished jobs needs no model
        results = [pd.read_csv(d) for d in done]
    elif use_processes:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as ex:
            args = [(str(model_dir), device, questions, answers, max_new_tokens, j, out / j.name, stop_after, False)
                    for j in jobs]
            results = list(tqdm(ex.map(_job_worker, args), total=len(jobs), desc="jobs", disable=not progress))
    else:
        backend = backend_factory(questions)
        for j in tqdm(jobs, desc="jobs", disable=not progress):
            results.append(run_job(backend, j, out / j.name, answers=answers, stop_after=stop_after,
                                   progress=progress))
    if any(r is None for r in results):
        return pd.DataFrame(columns=list(COLUMNS)), pd.DataFrame()
    cols = ["prompt", "label", "answer", "p_ref", "p_ref_n"]
    if n_more:
        prompts, results = _with_more_samples(out, jobs, results, prompts, answers, n_more, backend_factory, questions,
                                              progress)
        cols += ["p_ref_first", "p_ref_n_first"]
    G, pen = spec.get("group_size", 8), spec.get("penalty", "reverse")
    table = assemble(pd.concat(results, ignore_index=True), prompts[cols], group_size=G, penalty=pen, t_max=t_max)
    return table, score(table)


def cost_model(*, cpu_per_sample: float, cpu_per_step_per_prompt: float, n_pool: int = 136, n_screen: int = 32,
               n_prompts: int = 24, n_ref: int = 400, jobs: int = 6, steps: int = 400, eval_steps: int = 4,
               n_mid: int = 200, n_eval: int = 400) -> dict:
    """CPU seconds of the full study from the pilot's unit costs.

    Parameters
    ----------
    cpu_per_sample : float
        CPU seconds per sampled completion (batched evaluation sampling).
    cpu_per_step_per_prompt : float
        CPU seconds per training step and prompt (``G`` samples and the gradient).
    n_pool : int
        Candidate prompts screened.
    n_screen : int
        Screening samples per candidate.
    n_prompts : int
        Prompts kept.
    n_ref : int
        Fresh samples per kept prompt for ``p_ref``.
    jobs : int
        Training jobs, one per (beta, seed).
    steps : int
        Training steps per job.
    eval_steps : int
        Intermediate measurements per job.
    n_mid : int
        Samples per prompt at an intermediate measurement.
    n_eval : int
        Samples per prompt at the final measurement.

    Returns
    -------
    dict
        ``screen, p_ref, training, evaluation, total`` in CPU seconds, and ``jobs``.
    """
    c = dict(screen=n_pool * n_screen * cpu_per_sample, p_ref=n_prompts * n_ref * cpu_per_sample,
             training=jobs * steps * n_prompts * cpu_per_step_per_prompt,
             evaluation=jobs * n_prompts * (eval_steps * n_mid + n_eval) * cpu_per_sample)
    c["total"] = sum(c.values())
    c["jobs"] = jobs
    return c
