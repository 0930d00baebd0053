"""Free generation on SmolLM2: predict a real run per prompt, and score the prediction (issue 23).

The answer space is open: completions of at most ``max_new_tokens`` tokens are sampled from the
full vocabulary at temperature 1, and a verifier rewards a completion whose first word
(:func:`normalise`: lower case, surrounding punctuation dropped) is the answer. The
theory sees two classes, correct and the rest, with ``p_ref = P_ref(correct)``: at a stationary
point of sequence-level GRPO the policy keeps ``pi_ref``'s proportions inside each class, so the
prediction is ``x(p_ref)``, the two-class stationary P(correct)
(:class:`~grpo_theory.predict.Response`).

The study, step by step (each step's output is kept under ``out_dir``, so a rerun resumes):

1. **Screen** a pool of candidate prompts (:func:`candidate_pool`: yes/no questions, short factual
   questions and small arithmetic) with ``n_screen`` samples each, and keep ``n_prompts`` whose screened
   P(correct) spreads evenly in ``logit p`` over ``[0.05, 0.9]`` (:func:`select_prompts`).
2. **Estimate p_ref afresh** from ``n_ref >= 400`` new samples per kept prompt (an independent
   random stream), so the screening's selection does not bias it.
3. **Choose two betas** from the fresh ``p_ref`` alone (:func:`choose_betas`): the pair of the
   candidates whose predictions differ by at least 0.2 for the most prompts.
4. **Train** every (beta, seed) job (:func:`run_job`): sequence-level GRPO, reverse (k3) penalty,
   ``G`` samples per prompt per step, only the last MLP trainable. A job checkpoints every few steps
   (trainable weights, Adam's state, the random generator, the history) and resumes from its last
   checkpoint after a crash. P(correct) is measured from ``n_mid`` samples at each of ``eval_steps``.
   **Flat**: from ``min_steps`` on, every ``check_every`` steps, the logged training reward is
   checked with :func:`grpo_theory.convergence.check_trajectories` over the last 25% of the steps
   (each logged value the mean of ``G`` 0/1 rewards, judged against its binomial standard error):
   the job stops when the mean reward over prompts is "converged" and no prompt is "moving" (at the
   Bonferroni level 0.05 / prompts, see :func:`is_flat`), or at
   ``max_steps`` (then its prompts keep their "moving" status in the table). Then P(correct) is
   measured from ``n_eval >= 200`` fresh samples.
5. **Score** (:func:`score`): per (beta, seed) the theory's MAE over prompts (target <= 0.03),
   against two baselines fitted on half the prompts and scored on the other half (and the halves
   swapped, so every prompt is scored once out of sample): the identity ``p_ref`` and the best single
   logit shift ``expit(logit p_ref + c)``. At the intermediate steps the finite-time prediction
   ``p_x(clock * step)`` of :func:`grpo_theory.predict.flow_table` is scored the same way, its clock
   fitted (least squares over the run's intermediate steps) on the other half.

The model sits behind a small *backend* (:class:`SmolBackend`; the tests use a tabular stub):
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
from ..predict import Response, flow_table
from ..problem import Objective
from ..training.free_generation import FreeSampler, _pad_time, _token_logp
from ..training.loss import group_advantages, grpo_objective
from ..training.smollm import FrozenTrunkLM, _chat_prompt, load_smollm2

__all__ = ["candidate_pool", "normalise", "select_prompts", "choose_betas", "count_correct", "JobSpec",
           "run_job", "is_flat", "assemble", "score", "fit_shift", "fit_clock_lsq", "SmolBackend",
           "run_free_study", "COLUMNS", "cost_model"]

#: The columns every row of docs/results/free_generation.csv has first (the issue's schema).
COLUMNS = ("seed", "beta", "prompt", "p_ref", "p_ref_n", "predicted", "measured", "measured_n", "step")
#: The P(correct) range the kept prompts spread over (issue 23).
P_RANGE = (0.05, 0.9)
#: Candidate betas for :func:`choose_betas` and the smallest difference of predictions that counts.
BETA_CANDIDATES, MIN_DIFF = (0.5, 1.0, 2.0, 4.0), 0.2

_FACTS = (
    ("What is the capital of France?", "Paris"), ("What is the capital of Japan?", "Tokyo"),
    ("What is the capital of Italy?", "Rome"), ("What is the capital of Germany?", "Berlin"),
    ("What is the capital of Spain?", "Madrid"), ("What is the capital of Egypt?", "Cairo"),
    ("What is the capital of Russia?", "Moscow"), ("What is the capital of Canada?", "Ottawa"),
    ("What is the capital of Australia?", "Canberra"), ("What is the capital of China?", "Beijing"),
    ("What is the capital of Greece?", "Athens"), ("What is the capital of Portugal?", "Lisbon"),
    ("What color is the sky on a clear day?", "Blue"), ("What color is grass?", "Green"),
    ("What color is snow?", "White"), ("What color is a ripe banana?", "Yellow"),
    ("What color is blood?", "Red"), ("What color is coal?", "Black"),
    ("What is frozen water called?", "Ice"), ("Which planet is known as the Red Planet?", "Mars"),
    ("What is the largest ocean on Earth?", "Pacific"), ("What animal says moo?", "Cow"),
    ("What animal barks?", "Dog"), ("What is the opposite of hot?", "Cold"),
    ("What is the opposite of up?", "Down"), ("What is the opposite of yes?", "No"),
    ("What is the first letter of the alphabet?", "A"), ("What is the last letter of the alphabet?", "Z"),
    ("What day comes after Monday?", "Tuesday"), ("What month comes after January?", "February"),
    ("How many legs does a spider have?", "8"), ("How many days are in a week?", "7"),
    ("How many months are in a year?", "12"), ("How many hours are in a day?", "24"),
    ("How many sides does a triangle have?", "3"), ("How many legs does a dog have?", "4"),
    ("Is the sun hot? Answer Yes or No.", "Yes"), ("Is ice hot? Answer Yes or No.", "No"),
    ("Can fish swim? Answer Yes or No.", "Yes"), ("Do cats bark? Answer Yes or No.", "No"),
)


_YES_NO = (
    ("Is water wet?", "Yes"), ("Is the sun cold?", "No"), ("Can fish breathe underwater?", "Yes"),
    ("Is 7 an even number?", "No"), ("Is Paris in France?", "Yes"), ("Is ice colder than steam?", "Yes"),
    ("Can a car fly by itself?", "No"), ("Is the moon made of cheese?", "No"), ("Do plants need light?", "Yes"),
    ("Is 10 greater than 3?", "Yes"), ("Is snow usually black?", "No"),
    ("Is a triangle a shape with four sides?", "No"), ("Are dolphins mammals?", "Yes"), ("Is gold a metal?", "Yes"),
    ("Can humans live without water for a year?", "No"), ("Do birds have feathers?", "Yes"),
    ("Is the Earth flat?", "No"), ("Do fish have wings?", "No"), ("Is 2 smaller than 5?", "Yes"),
    ("Is a cat a reptile?", "No"), ("Is the Pacific an ocean?", "Yes"), ("Can elephants fly?", "No"),
    ("Is 9 an odd number?", "Yes"), ("Is fire cold?", "No"), ("Do cows give milk?", "Yes"),
    ("Is London in Spain?", "No"), ("Is a whale a fish?", "No"), ("Is grass green?", "Yes"),
    ("Does the sun rise in the east?", "Yes"), ("Is 100 less than 10?", "No"), ("Can dogs read books?", "No"),
    ("Is Tokyo in Japan?", "Yes"), ("Is a tomato a vegetable in botany?", "No"), ("Do spiders have six legs?", "No"),
    ("Is Mars a planet?", "Yes"), ("Is the sky green on a clear day?", "No"), ("Is 3 times 3 equal to 9?", "Yes"),
    ("Is 5 plus 5 equal to 11?", "No"), ("Do trees have roots?", "Yes"), ("Is a square round?", "No"),
)
#: The user turn's instruction for each kind of answer.
_ASK = {"yes/no": " Answer Yes or No.", "number": " Answer with the number only.", "word": " Answer with one word."}


def candidate_pool() -> list[tuple[str, str, str]]:
    """The candidate prompts, as ``(label, question, answer)``: 40 yes/no questions, 36 short factual
    questions and 60 sums, differences and products of small numbers (answers 0-99).

    A pilot (issue 23) found SmolLM2-135M-Instruct rarely *starts* its answer to a factual or an
    arithmetic question with the word or the number (it starts "The capital of France ..."), while a
    yes/no question's first word is "Yes" or "No" often, in proportions that vary by question: the
    yes/no questions are what spreads P(correct) over [0.05, 0.9]; the others are kept in the pool
    for the screening to judge.

    Returns
    -------
    list of tuple of str
        The question is the user turn; the answer is what the verifier accepts (:func:`normalise`).

    Examples
    --------
    >>> pool = candidate_pool()
    >>> len(pool), pool[76]
    (136, ('2+3', 'What is 2+3? Answer with the number only.', '5'))
    """
    out = [(q, q + _ASK["yes/no"], a) for q, a in _YES_NO]
    out += [(q, q if q.endswith("or No.") else q + _ASK["number" if a.isdigit() else "word"], a)
            for q, a in _FACTS if not q.endswith("or No.")]
    rng = np.random.default_rng(23)        # a fixed pool: the same 60 items on every machine
    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
    seen = set()
    items = [(2, "+", 3)]
    while len(items) < 60:
        op = "+-*"[len(items) % 3]
        a, b = (int(v) for v in rng.integers(2, 13 if op == "*" else 50, size=2))
        if op == "-" and b > a:
            a, b = b, a
        if (a, op, b) not in seen and 0 <= ops[op](a, b) <= 99:
            items.append((a, op, b))
        seen.add((a, op, b))
    out += [(f"{a}{op}{b}", f"What is {a}{op}{b}?" + _ASK["number"], str(ops[op](a, b))) for a, op, b in items]
    return out


_PUNCT = ".,!?;:\"'()[]*`"


def normalise(text: str) -> str:
    """The verifier's view of a completion: its first word, lower case, without surrounding punctuation.

    A completion is correct when this equals the normalised answer: "No, the sun is hot" answers
    "No"; "The capital of France" does not answer "Paris" (its first word is "the").

    Examples
    --------
    >>> normalise(" Paris.") == normalise("paris") == normalise("Paris, France")
    True
    >>> normalise("The answer is 7")
    'the'
    """
    words = text.strip().lower().split()
    return words[0].strip(_PUNCT) if words else ""


def count_correct(backend, answers, n: int, generator: torch.Generator, *, batch: int = 64,
                  desc: str = "sampling", progress: bool = False) -> np.ndarray:
    """Correct completions out of ``n`` per prompt of ``backend`` (the verifier is :func:`normalise` equality).

    Parameters
    ----------
    backend
        The model (see the module docstring); sampled, not changed.
    answers : sequence of str
        One answer per prompt.
    n : int
        Samples per prompt (drawn in batches of ``batch``).
    generator : torch.Generator
    batch : int
    desc : str
        The progress bar's label.
    progress : bool

    Returns
    -------
    numpy.ndarray of int
        One count per prompt.
    """
    want = [normalise(a) for a in answers]
    out = np.zeros(len(want), dtype=int)
    for q in tqdm(range(len(want)), desc=desc, disable=not progress, leave=False):
        for start in range(0, n, batch):
            c = backend.sample(q, min(batch, n - start), generator)
            out[q] += sum(normalise(t) == want[q] for t in c.text)
    return out


def _logit(p):
    p = np.asarray(p, dtype=float)
    return np.log(p) - np.log1p(-p)


def _expit(u):
    return 1.0 / (1.0 + np.exp(-np.asarray(u, dtype=float)))


def select_prompts(correct, n: int, n_keep: int, *, p_range=P_RANGE) -> np.ndarray:
    """Indices of ``n_keep`` screened candidates whose P(correct) spreads evenly in ``logit p`` over ``p_range``.

    The screened estimate is ``(k + 0.5) / (n + 1)``. Targets are ``n_keep`` points evenly spaced in
    ``logit p`` from ``p_range[0]`` to ``p_range[1]``; each takes, in turn, the unused candidate nearest
    to it in ``logit p`` among those screened inside the range widened by one screening standard error.

    Parameters
    ----------
    correct : array_like of int
        Correct samples of each candidate, out of ``n``.
    n : int
        Screening samples per candidate.
    n_keep : int
        Prompts to keep.
    p_range : tuple of float

    Returns
    -------
    numpy.ndarray of int
        The kept candidates' indices, in order of increasing screened P(correct).

    Raises
    ------
    InvalidInputError
        If fewer than ``n_keep`` candidates screened inside the (widened) range.

    Examples
    --------
    >>> select_prompts([0, 2, 8, 16, 24, 30, 32], 32, 3).tolist()
    [1, 3, 5]
    """
    k = np.asarray(correct, dtype=float)
    if n <= 0 or k.ndim != 1 or np.any((k < 0) | (k > n)):
        raise InvalidInputError(f"need 0 <= correct <= n with n > 0, got n={n!r} and correct={k.tolist()}")
    lo, hi = p_range
    p = (k + 0.5) / (n + 1)
    se = np.sqrt(p * (1 - p) / n)
    ok = np.flatnonzero((p + se >= lo) & (p - se <= hi))
    if ok.size < n_keep:
        raise InvalidInputError(f"only {ok.size} of {k.size} candidates screened inside P(correct) "
                                f"[{lo:g}, {hi:g}] (widened by one standard error); expected at least "
                                f"n_keep={n_keep}: give a larger pool or fewer prompts")
    targets = np.linspace(_logit(lo), _logit(hi), n_keep)
    u = _logit(p)
    free = list(ok)
    chosen = []
    for t in targets:
        j = min(free, key=lambda i: (abs(u[i] - t), i))
        chosen.append(j)
        free.remove(j)
    return np.array(sorted(chosen, key=lambda i: (p[i], i)), dtype=int)


def _x(p_ref, objective: Objective) -> np.ndarray:

    return Response(objective)(np.clip(np.asarray(p_ref, dtype=float), 1e-12, 1.0))


def choose_betas(p_ref, *, candidates=BETA_CANDIDATES, min_diff: float = MIN_DIFF, group_size: int = 8,
                 penalty: str = "reverse") -> tuple[tuple[float, float], float]:
    """The pair of betas whose stationary predictions differ by ``>= min_diff`` for the most prompts.

    Ties go to the pair with the larger smaller beta (a stronger pull to the reference: faster to
    converge, and safer from the collapse of a policy that stops sampling its correct answers), then
    to the smaller larger beta.

    Parameters
    ----------
    p_ref : array_like
        The prompts' P_ref(correct).
    candidates : sequence of float
    min_diff : float
    group_size : int
    penalty : {"reverse", "direct"}

    Returns
    -------
    ((float, float), float)
        The two betas (increasing) and the fraction of prompts whose predictions differ by ``>= min_diff``.

    Examples
    --------
    >>> choose_betas([0.1, 0.3], candidates=(0.5, 2.0, 4.0))     # (0.5, 4) ties; the smaller larger beta wins
    ((0.5, 2.0), 1.0)
    """
    cands = sorted(float(b) for b in candidates)
    if len(cands) < 2:
        raise InvalidInputError(f"need at least two candidate betas, got {candidates!r}")
    x = {b: _x(p_ref, Objective(beta=b, group_size=group_size, penalty=penalty)) for b in cands}
    best = None
    for i, a in enumerate(cands):
        for b in cands[i + 1:]:
            frac = float(np.mean(np.abs(x[a] - x[b]) >= min_diff))
            key = (frac, a, -b)
            if best is None or key > best[0]:
                best = (key, (a, b), frac)
    return best[1], best[2]


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """One training job: a beta and a seed, with the trainer's settings.

    Attributes
    ----------
    beta : float
    seed : int
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


def _check(history: list, n_prompts: int, n_samples: int, **kw) -> ConvergenceReport:
    """The stationarity check on the sampled P(correct) per step (each the mean of ``n_samples`` 0/1
    rewards), against its binomial standard error at the tail's mean; ``kw`` go to the check."""
    tail = np.array([[h[f"p_best_q{i}"] for i in range(n_prompts)] for h in history[-max(1, len(history) // 4):]])
    m = tail.mean(0)
    return check_history(history, n_prompts, se=np.sqrt(m * (1 - m) / n_samples), **kw)


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
    obj, diag = grpo_objective(lp.view(shape), lp.detach().view(shape), lp_ref.view(shape), adv, beta=spec.beta,
                               penalty=spec.penalty, level="sequence", mask=mask.view(shape))
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

    The job's state (step, trainable weights, Adam's state, the generator's state, the history, the
    intermediate measurements, the CPU seconds spent) is saved to ``job_dir/state.pt`` every
    ``spec.checkpoint_every`` steps and after every measurement, atomically; a call finds it and
    continues from there, so a crash loses at most ``checkpoint_every`` steps, and the resumed job
    draws the same samples as an uninterrupted one. A finished job's table is ``job_dir/measured.csv``
    and is returned at once by later calls.

    Parameters
    ----------
    backend
        The model (see the module docstring); :meth:`reset` is called before a fresh start.
    spec : JobSpec
    job_dir : str or pathlib.Path
    answers : sequence of str
        One per prompt of ``backend``.
    stop_after : int, optional
        Run at most this many training steps in this call, then checkpoint and return None (a
        session's share of a long job; the tests' simulated crash).
    progress : bool

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
    cpu0 = time.process_time()
    ran = 0

    def checkpoint():
        st.update(model=backend.state_dict(), opt=opt.state_dict(), gen=gen.get_state(),
                  cpu=st["cpu"] + time.process_time() - cpu0)
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
    cpu = st["cpu"] + time.process_time() - cpu0
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


def fit_shift(p_ref, measured) -> float:
    """The best single logit shift: ``c`` minimising ``sum (expit(logit p_ref + c) - measured)^2``.

    Parameters
    ----------
    p_ref, measured : array_like
        Values in ``[0, 1]`` (``p_ref`` is clipped to ``[1e-4, 1 - 1e-4]`` so that its logit is finite).

    Returns
    -------
    float

    Examples
    --------
    >>> round(fit_shift([0.2, 0.5], [0.5, 0.8]), 3)      # logit 0.5 - logit 0.2 = logit 0.8 - logit 0.5
    1.386
    """
    from scipy.optimize import minimize_scalar

    u = _logit(np.clip(np.asarray(p_ref, dtype=float), 1e-4, 1 - 1e-4))
    m = np.asarray(measured, dtype=float)
    res = minimize_scalar(lambda c: float(np.sum((_expit(u + c) - m) ** 2)), bounds=(-15.0, 15.0), method="bounded",
                          options=dict(xatol=1e-8))
    return float(res.x)


def _flow_rows(table, p) -> np.ndarray:
    """The flow table's rows (P(correct) at every grid time) for starting values ``p``."""
    if table.interpolated:
        from scipy.interpolate import PchipInterpolator

        return PchipInterpolator(_logit(table.starts), table.values, axis=0)(_logit(p))
    idx = np.minimum(np.searchsorted(table.starts, p), table.starts.size - 1)
    if not np.allclose(table.starts[idx], p, rtol=0, atol=0):
        raise InvalidInputError("a starting value outside the flow table; build it with these p_ref")
    return table.values[idx]


def fit_clock_lsq(table, p_ref, steps, measured, *, t_max: float | None = None) -> float:
    """The clock (flow time per step) minimising the squared error of ``p_x(clock * step)`` against ``measured``.

    Parameters
    ----------
    table : grpo_theory.predict.FlowTable
        Flows from the prompts' ``p_ref``.
    p_ref, steps, measured : array_like
        One entry per (prompt, step) measurement.
    t_max : float, optional
        Largest flow time (default: the table's).

    Returns
    -------
    float
    """
    from scipy.interpolate import PchipInterpolator
    from scipy.optimize import minimize_scalar

    p, s, m = (np.asarray(v, dtype=float) for v in (p_ref, steps, measured))
    t_max = float(table.times[-1]) if t_max is None else t_max
    # one interpolant in t per step's prompts, built once (the search evaluates the loss ~100 times)
    curves = []
    for v in np.unique(s):
        sel = s == v
        rows = _flow_rows(table, p[sel])                                          # (n_sel, T)
        curves.append((v, PchipInterpolator(table.times, rows, axis=1), m[sel]))

    def loss(log_c):
        c = math.exp(log_c)
        return float(sum(np.sum((f(min(c * v, t_max)) - mm) ** 2) for v, f, mm in curves))
    hi = math.log(t_max / max(float(s.max()), 1.0))
    grid = np.linspace(hi - 20.0, hi, 81)           # a coarse scan first: the loss need not be unimodal
    j = int(np.argmin([loss(g) for g in grid]))
    lo_b, hi_b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    res = minimize_scalar(loss, bounds=(lo_b, hi_b), method="bounded", options=dict(xatol=1e-6))
    return float(math.exp(res.x))


def assemble(measured: pd.DataFrame, prompts: pd.DataFrame, *, group_size: int = 8,
             penalty: str = "reverse", t_max: float = 1e4) -> pd.DataFrame:
    """The result table: every measurement with ``p_ref``, the theory's prediction and the baselines.

    ``half`` splits the prompts into A and B alternately in order of ``p_ref`` (both span the range).
    Each row's ``identity`` is ``p_ref``; its ``shift`` is ``expit(logit p_ref + c)`` with ``c`` fitted
    (:func:`fit_shift`) on the *other* half's final measurements of the same (beta, seed). ``predicted``
    is ``x(p_ref)`` for a final row, and for an intermediate row ``p_x(clock * step)`` on the flow with
    the clock fitted (:func:`fit_clock_lsq`) on the other half's intermediate measurements of the same run.

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`run_job`'s rows, every job's.
    prompts : pandas.DataFrame
        One row per prompt index: ``prompt`` (the index), ``label``, ``answer``, ``p_ref``, ``p_ref_n``.
    group_size : int
    penalty : str
    t_max : float
        Last flow time integrated (the clock is searched up to ``t_max`` over the largest intermediate step).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS` first, then ``kind, half, identity, shift, shift_c, clock, label, answer`` and
        :func:`run_job`'s other columns.
    """

    pr = prompts.sort_values(["p_ref", "prompt"]).reset_index(drop=True)
    half = {int(q): "AB"[i % 2] for i, q in enumerate(pr.prompt)}
    t = measured.merge(prompts, on="prompt", how="left", validate="many_to_one")
    if t.p_ref.isna().any():
        raise InvalidInputError(f"measurements for prompts without p_ref: {sorted(set(t.prompt[t.p_ref.isna()]))}")
    t["half"] = t.prompt.map(half)
    t["identity"] = t.p_ref
    t["predicted"] = np.nan
    t["shift"] = np.nan
    t["shift_c"] = np.nan
    t["clock"] = np.nan
    p_flow = np.clip(t.p_ref.to_numpy(float), 0.5 / t.p_ref_n.to_numpy(float), 1 - 0.5 / t.p_ref_n.to_numpy(float))
    t["_p_flow"] = p_flow
    for beta, g in t.groupby("beta"):
        obj = Objective(beta=float(beta), group_size=group_size, penalty=penalty)
        fin = g.kind == "final"
        t.loc[g.index[fin], "predicted"] = _x(g.p_ref[fin], obj)
        mid = g[g.kind == "intermediate"]
        flows = flow_table(np.unique(t._p_flow[g.index]), obj, t_max=t_max) if len(mid) else None
        for _seed, run in g.groupby("seed"):
            for this, other in (("A", "B"), ("B", "A")):
                f_other = run[(run.kind == "final") & (run.half == other)]
                rows = run.index[run.half == this]
                c = fit_shift(f_other.p_ref, f_other.measured) if len(f_other) else np.nan
                t.loc[rows, "shift_c"] = c
                t.loc[rows, "shift"] = _expit(_logit(np.clip(t.p_ref[rows].to_numpy(float), 1e-4, 1 - 1e-4)) + c)
                m_other = run[(run.kind == "intermediate") & (run.half == other)]
                m_this = run[(run.kind == "intermediate") & (run.half == this)]
                if len(m_other) and len(m_this):
                    clock = fit_clock_lsq(flows, m_other._p_flow, m_other.step, m_other.measured)
                    t.loc[m_this.index, "clock"] = clock
                    for s, rs in m_this.groupby("step"):
                        t.loc[rs.index, "predicted"] = flows.at(rs._p_flow.to_numpy(float),
                                                                min(clock * float(s), float(flows.times[-1])))
    t = t.drop(columns="_p_flow")
    rest = [c for c in t.columns if c not in COLUMNS]
    return t[list(COLUMNS) + rest].sort_values(["beta", "seed", "step", "p_ref", "prompt"]).reset_index(drop=True)


def score(table: pd.DataFrame) -> pd.DataFrame:
    """Per (beta, seed, kind, step): the MAE over prompts of the theory and of the two baselines.

    Every MAE is out of sample: the theory fits nothing to measurements; the shift and the clock are
    fitted on the other half (:func:`assemble`). Final rows carry ``meets_target`` (theory MAE <= 0.03)
    and ``beats_baselines`` (theory MAE below both baselines').

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`assemble`'s output.

    Returns
    -------
    pandas.DataFrame
        ``beta, seed, kind, step, n_prompts, mae_theory, mae_identity, mae_shift, max_theory, n_converged,
        meets_target, beats_baselines`` (the last three for final rows; NaN otherwise).
    """
    rows = []
    for (beta, seed, kind, step), g in table.groupby(["beta", "seed", "kind", "step"]):
        mae = {col: float(np.mean(np.abs(g[col] - g.measured))) for col in ("predicted", "identity", "shift")}
        r = dict(beta=beta, seed=seed, kind=kind, step=step, n_prompts=len(g), mae_theory=mae["predicted"],
                 mae_identity=mae["identity"], mae_shift=mae["shift"],
                 max_theory=float(np.max(np.abs(g.predicted - g.measured))))
        if kind == "final":
            r["n_converged"] = int((g.get("conv_status", pd.Series(dtype=str)) == "converged").sum())
            r["meets_target"] = r["mae_theory"] <= 0.03
            r["beats_baselines"] = r["mae_theory"] < min(r["mae_identity"], r["mae_shift"])
        rows.append(r)
    return pd.DataFrame(rows)


class SmolBackend:
    """SmolLM2-135M-Instruct as a free-generation policy: only the last MLP trains.

    Sampling keeps the last MLP's input ``h0`` at every generated position (batched, with the KV
    cache of :class:`~grpo_theory.training.free_generation.FreeSampler`), so the loss needs no second
    pass through the frozen trunk. The reference policy is a frozen copy of the MLP.

    Parameters
    ----------
    model : FrozenTrunkLM
        ``trainable="last-mlp"``; its last MLP is the one trained (shared by every backend built on it).
    tokenizer
    questions : sequence of str
        User turns, put into the chat template.
    max_new_tokens : int
    """

    def __init__(self, model, tokenizer, questions, max_new_tokens: int = 4) -> None:
        import copy


        self.model = model
        self.mlp = model.hf.model.layers[-1].mlp
        self.ref_mlp = copy.deepcopy(self.mlp).requires_grad_(False)
        self.prompts = [_chat_prompt(tokenizer, q) for q in questions]
        self.sampler = FreeSampler(model, tokenizer, self.prompts, max_new_tokens)

    def sample(self, q: int, n: int, generator: torch.Generator):
        return self.sampler.sample(q, n, generator)

    def logp(self, comps, reference: bool = False):

        T = max(c.tokens.shape[1] for c in comps)
        h0 = torch.stack([_pad_time(c.h0, T) for c in comps])
        # the sampler draws tokens on the CPU (its generator lives there); h0 lives with the model
        tokens = torch.stack([_pad_time(c.tokens, T) for c in comps]).to(h0.device)
        mask = torch.stack([_pad_time(c.mask, T) for c in comps]).to(h0.device)
        lp = _token_logp(self.model, self.ref_mlp if reference else None, h0, tokens)
        return lp * mask, mask

    def parameters(self):
        return self.mlp.parameters()

    def state_dict(self) -> dict:
        return {k: v.detach().clone() for k, v in self.mlp.state_dict().items()}

    def load_state_dict(self, state: dict) -> None:
        self.mlp.load_state_dict(state)

    def reset(self) -> None:
        self.mlp.load_state_dict(self.ref_mlp.state_dict())


_MODEL: dict = {}


def _smol(model_dir, device: str = "cpu"):
    """The process's one copy of SmolLM2 (model, tokenizer), loaded once; torch on one thread."""
    torch.set_num_threads(1)
    key = f"{model_dir}|{device}"
    if key not in _MODEL:

        model, tok = load_smollm2(model_dir, device=device)
        _MODEL[key] = (FrozenTrunkLM(model.hf), tok)
    return _MODEL[key]


def _job_worker(args) -> pd.DataFrame | None:
    model_dir, device, questions, answers, max_new, spec, job_dir, stop_after, progress = args
    model, tok = _smol(model_dir, device)
    backend = SmolBackend(model, tok, questions, max_new)
    return run_job(backend, spec, job_dir, answers=answers, stop_after=stop_after, progress=progress)


def _stage(path: Path, make):
    """``path``'s table if an earlier run wrote it, else ``make()`` written there atomically."""
    if path.exists():
        return pd.read_csv(path, dtype={"answer": str})
    table = make()
    atomic_write(path, lambda p: table.to_csv(p, index=False))
    return table


def run_free_study(out_dir="runs/free_generation", *, model_dir="models/smollm2", seeds=(0, 1, 2),
                   betas=None, n_prompts: int = 24, n_screen: int = 32, n_ref: int = 400, max_new_tokens: int = 4,
                   spec: dict | None = None, workers: int = 1, stop_after: int | None = None,
                   progress: bool = True, backend_factory=None, device: str = "cpu",
                   t_max: float = 1e4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The whole validation: screen, estimate p_ref afresh, choose betas, train every (beta, seed), score.

    Every stage's output is kept under ``out_dir`` (``screen.csv``, ``prompts.csv``, ``betas.json``, one
    folder per job): a rerun resumes where the last one stopped.

    Parameters
    ----------
    out_dir : str or pathlib.Path
    model_dir : str or pathlib.Path
        SmolLM2's GGUF file's folder.
    seeds : sequence of int
    betas : (float, float), optional
        Default: :func:`choose_betas` from the fresh ``p_ref``.
    n_prompts, n_screen, n_ref : int
        Prompts kept; screening samples per candidate; fresh samples per kept prompt for ``p_ref``.
    max_new_tokens : int
    spec : dict, optional
        :class:`JobSpec` fields other than ``beta`` and ``seed``.
    workers : int
        Jobs run at once, each in its own process with one torch thread.
    stop_after : int, optional
        Training steps per job in this call (see :func:`run_job`); unfinished jobs are left for the next call.
    progress : bool
    backend_factory : callable, optional
        ``backend_factory(questions) -> backend`` (tests); default: :class:`SmolBackend` on SmolLM2
        (then ``workers > 1`` uses processes).
    device : str
        Where SmolLM2 runs ("cpu", or "cuda": untested here, no GPU was at hand; the sampler's generator
        and the rewards stay on the CPU).
    t_max : float
        See :func:`assemble`.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        :func:`assemble`'s table and :func:`score`'s summary (empty while jobs are unfinished).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = dict(spec or {})
    pool = candidate_pool()
    use_processes = workers > 1 and backend_factory is None
    if backend_factory is None:
        def backend_factory(questions):
            model, tok = _smol(model_dir, device)
            return SmolBackend(model, tok, questions, max_new_tokens)

    def screen():
        b = backend_factory([c[1] for c in pool])
        k = count_correct(b, [c[2] for c in pool], n_screen, torch.Generator().manual_seed(1234),
                          desc="screening", progress=progress)
        return pd.DataFrame(dict(candidate=range(len(pool)), label=[c[0] for c in pool], answer=[c[2] for c in pool],
                                 correct=k, n=n_screen))
    scr = _stage(out / "screen.csv", screen)
    keep = select_prompts(scr.correct.to_numpy(), n_screen, n_prompts)

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
        x = [_x(prompts.p_ref, Objective(beta=b, group_size=G, penalty=pen)) for b in pair]
        frac = float(np.mean(np.abs(x[0] - x[1]) >= MIN_DIFF)) if frac is None else frac
        chosen = dict(betas=list(pair), fraction_differing=frac)
        atomic_write(beta_path, lambda p: p.write_text(json.dumps(chosen, indent=1)))
    questions, answers = prompts.question.tolist(), prompts.answer.astype(str).tolist()
    jobs = [JobSpec(beta=float(b), seed=int(s), **spec) for b in chosen["betas"] for s in seeds]
    results: list = []
    if use_processes:
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
    G, pen = spec.get("group_size", 8), spec.get("penalty", "reverse")
    table = assemble(pd.concat(results, ignore_index=True),
                     prompts[["prompt", "label", "answer", "p_ref", "p_ref_n"]], group_size=G, penalty=pen,
                     t_max=t_max)
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
    n_pool, n_screen, n_prompts, n_ref, jobs, steps, eval_steps, n_mid, n_eval : int
        The study's sizes (``steps``: training steps per job).

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
