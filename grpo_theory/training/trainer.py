"""A small but real GRPO trainer: one config dataclass, one readable loop.

Every step: for each question, score the answer set under the current model (one
teacher-forced pass; the old policy is the current one, detached), sample
``groups_per_question`` groups of ``group_size`` answers, look up their rewards,
form advantages, and take ``inner_updates`` optimiser steps on the clipped
surrogate minus ``beta`` times the penalty. The reference model is frozen.

The objective is a :class:`~grpo_theory.Objective` (``config.objective``); the run's own
settings are the other fields of :class:`TrainerConfig`, whose docstring names the TRL knob each
corresponds to where the names differ (``group_size`` is TRL's ``num_generations``, ``clip_eps``
its ``epsilon``, ``inner_updates`` its ``num_iterations``).
"""

from __future__ import annotations

import copy
import csv
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from .._io import atomic_write
from ..convergence import ConvergenceReport, check_history
from .._validate import integer, number
from ..problem import InvalidInputError, Objective
from .loss import advantages_for, grpo_objective, shaped_rewards, tie_mask
from .policy import answer_logprobs, answer_token_entropies, answer_token_logprobs, answer_token_mask, generate
from .tasks import QATask


def _default_objective() -> Objective:
    return Objective(beta=0.5, group_size=8)


def _truncate_log(path: Path, last_step: int) -> None:
    """Keep the header and the rows of ``path`` (a CSV whose first column is the step) up to ``last_step``."""
    lines = path.read_text().splitlines(keepends=True)
    kept = lines[:1] + [ln for ln in lines[1:] if ln.strip() and int(ln.split(",", 1)[0]) <= last_step]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(kept))
    tmp.replace(path)


def _close(a, b) -> bool:
    """Whether two nested lists of probabilities agree within 1e-5 (a reference's float32 forward pass on another
    device or thread count differs in its last digits; another model or task by far more)."""
    try:
        return np.shape(a) == np.shape(b) and bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=0,
                                                               atol=1e-5))
    except (TypeError, ValueError):
        return False


#: Config fields that say how a run is executed, not what it computes: a resume may change them.
RUNTIME_FIELDS = ("device", "num_threads", "checkpoint_every")


@dataclass(kw_only=True)
class TrainerConfig:
    """The trainer's settings: the :class:`~grpo_theory.Objective` it optimises, and how it runs.

    ``objective`` holds everything the theory reads (beta, G, the KL estimator and placement, the
    normalisation, level, loss type, groups per batch and the GRPO-family fields), checked once, by
    :class:`~grpo_theory.Objective`; ``groups_per_batch = math.inf`` normalises by the token count of
    the whole step. The trainer refuses what it does not implement (``variance_eps != 0``,
    ``group_size = math.inf``). The other fields say how the optimisation runs; where TRL has the same
    knob under another name it is given here: ``clip_eps`` is TRL's ``epsilon``, ``inner_updates`` its
    ``num_iterations``, ``groups_per_question x objective.group_size`` answers per question per step
    (TRL: ``per_device_train_batch_size`` completions in groups of ``num_generations``), ``steps`` its
    ``max_steps``; ``learning_rate`` and ``seed`` mean what TRL's mean. ``max_steps`` here is the cap
    when training to stationarity, not TRL's.
    """

    objective: Objective = field(default_factory=_default_objective)
    clip_eps: float = 0.2             # TRL `epsilon`
    inner_updates: int = 1            # TRL `num_iterations`; > 1: several updates per batch (clipping active)
    learning_rate: float = 3e-3
    optimizer: str = "adam"           # "adam" or "sgd"
    final_lr_fraction: float = 0.05   # linear decay of the learning rate to this fraction
    warmup_steps: int = 0             # TRL `warmup_steps`: the rate rises linearly from lr / warmup_steps to
                                      # lr over these steps (Adam's first steps move every weight by ~lr,
                                      # whatever the gradient's size: issue 26's collapse at step 1)
    questions_per_step: int | None = None   # None: every question every step
    groups_per_question: int = 16
    steps: int = 1500
    sampling: str = "score"           # "score": one pass scores every answer; "generate": token by token
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"
    log_every: int = 10               # history spacing in mid-run; denser early (every ~10% of the step
                                      # number) and every step in the final window (see _log_due)
    checkpoint_every: int = 250
    final_window: float = 0.3         # fraction of steps averaged for the measured policy
    num_threads: int | None = 1       # torch CPU threads; 1 is far faster than 2 for small models on
                                      # 2-core machines (8.8x less CPU measured); None keeps torch's choice
    # --- run to stationarity (issue 26): after `steps`, check the logged P(correct) of every question
    # (grpo_theory.convergence); while one is still moving, train `steps // 2` more at the final
    # learning rate (lr x final_lr_fraction: the smaller step), up to `max_steps` (None: 4 x steps).
    # An oscillating question (no drift, a spread about its level above the tolerance) extends the run
    # only while the check's tail still holds steps from before the final learning rate: at a constant
    # step Adam's spread about a stationary point is a noise floor that more steps at that step do
    # not shrink (measured on SmolLM2 at G = 2: spread 0.022 from step 300 to 900 at lr 5e-5), but the
    # decaying schedule's tail mixes larger steps (spread roughly ~ sqrt(lr)) into the verdict.
    until_stationary: bool = False
    max_steps: int | None = None
    convergence_tail: float = 0.25    # fraction of the steps run that the check looks at

    def __post_init__(self) -> None:
        obj = self.objective
        if not isinstance(obj, Objective):
            raise InvalidInputError(f"objective must be a grpo_theory.Objective, got {type(obj).__name__}")
        self._check_numbers()
        b = obj.groups_per_batch
        checks = [
            (math.isfinite(obj.group_size),
             "objective.group_size must be a finite integer for the trainer, got math.inf"),
            (obj.variance_eps == 0,
             f"objective.variance_eps must be 0: the trainer does not implement it, got {obj.variance_eps}"),
            (math.isinf(b) or self.groups_per_question % b == 0,
             f"objective.groups_per_batch must be math.inf or a divisor of groups_per_question="
             f"{self.groups_per_question}, got {b!r}"),
            (self.sampling in ("score", "generate"), f"sampling must be score/generate, got {self.sampling!r}"),
            (self.optimizer in ("adam", "sgd"), f"optimizer must be adam/sgd, got {self.optimizer!r}"),
            (self.inner_updates >= 1 and self.steps >= 1,
             f"inner_updates and steps must be >= 1, got {self.inner_updates} and {self.steps}"),
            (0 < self.final_window <= 1, f"final_window must be in (0, 1], got {self.final_window}"),
            (isinstance(self.warmup_steps, int) and 0 <= self.warmup_steps <= self.steps,
             f"warmup_steps must be an integer in [0, steps={self.steps}], got {self.warmup_steps!r}"),
            (self.max_steps is None or self.max_steps >= self.steps,
             f"max_steps must be None or >= steps={self.steps}, got {self.max_steps!r}"),
            (0 < self.convergence_tail < 1, f"convergence_tail must be in (0, 1), got {self.convergence_tail}"),
            (self.num_threads is None or (isinstance(self.num_threads, int) and self.num_threads >= 1),
             f"num_threads must be None or an integer >= 1, got {self.num_threads!r}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise InvalidInputError(msg)

    def _check_numbers(self) -> None:
        """Every number a finite number of the right kind and range, named when not (``_validate``)."""
        number("clip_eps", self.clip_eps, low=0.0, low_open=True)
        number("learning_rate", self.learning_rate, low=0.0, low_open=True)
        number("final_lr_fraction", self.final_lr_fraction, low=0.0, high=1.0)
        number("final_window", self.final_window, low=0.0, high=1.0, low_open=True)
        number("convergence_tail", self.convergence_tail, low=0.0, high=1.0, low_open=True, high_open=True)
        for name in ("inner_updates", "steps", "groups_per_question", "log_every", "checkpoint_every"):
            integer(name, getattr(self, name), low=1)
        for name in ("questions_per_step", "max_steps"):
            if getattr(self, name) is not None:
                integer(name, getattr(self, name), low=1)
        integer("seed", self.seed, low=0)
        if self.dtype not in _DTYPES:
            raise InvalidInputError(f"dtype must be one of {sorted(_DTYPES)}, got {self.dtype!r}")
        if not isinstance(self.device, str) or not (self.device == "cpu" or self.device == "cuda"
                                                    or self.device.startswith("cuda:")):
            raise InvalidInputError(f"device must be cpu, cuda or cuda:N, got {self.device!r}")

    def with_changes(self, **changes) -> TrainerConfig:
        """A validated copy with ``changes`` applied; the names of :class:`~grpo_theory.Objective`'s
        fields change the objective, the others the config.

        Examples
        --------
        >>> cfg = TrainerConfig(objective=Objective(beta=0.5, group_size=8), steps=100)
        >>> new = cfg.with_changes(group_size=2, steps=50)
        >>> new.objective.group_size, new.steps
        (2, 50)
        """
        names = {f.name for f in fields(Objective) if f.init}
        unknown = sorted(set(changes) - names - {f.name for f in fields(self) if f.init})
        if unknown:
            raise InvalidInputError(f"with_changes: unknown field(s) {unknown}; expected TrainerConfig's fields or "
                                    f"Objective's ({', '.join(sorted(names))})")
        to_objective = {k: v for k, v in changes.items() if k in names}
        rest = {k: v for k, v in changes.items() if k not in names}
        obj = replace(self.objective, **to_objective) if to_objective else self.objective
        return replace(self, objective=obj, **rest)


@dataclass
class TrainResult:
    probs_window: np.ndarray          # (n_window_logs, n_q, n_answers) answer probabilities over the window
    measured: np.ndarray              # (n_q, n_answers) mean over the final window
    measured_se: np.ndarray           # (n_q, n_answers) batch-means standard error
    reference: np.ndarray             # (n_q, n_answers) reference model's answer probabilities
    seconds: float
    steps: int
    history: list = field(default_factory=list)
    convergence: ConvergenceReport | None = None  # the check (grpo_theory.convergence) on the logged P(correct)


_DTYPES = ("float32", "float64", "bfloat16")


def _dtype(name: str):
    return {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}[name]


@torch.no_grad()
def answer_probabilities(model, task: QATask) -> np.ndarray:
    """pi(answer | question) over the answer set, (n_questions, n_answers), as float64 numpy.

    Parameters
    ----------
    model : TinyGPT
        The policy, scored as :func:`~grpo_theory.training.policy.answer_logprobs` scores it.
    task : QATask
        The questions and their answer set.
    """
    return torch.exp(answer_logprobs(model, task).double()).cpu().numpy()


def batch_means_se(x: np.ndarray, n_blocks: int = 10) -> np.ndarray:
    """Standard error of the mean of a correlated series (axis 0) by the method of batch means."""
    n = x.shape[0]
    if n < 4:              # too few points to estimate a spread: say "unknown" (inf), never NaN
        return np.full(x.shape[1:], np.inf)
    k = min(n_blocks, n // 2)
    blocks = np.array_split(x, k, axis=0)
    means = np.stack([b.mean(axis=0) for b in blocks])
    return means.std(axis=0, ddof=1) / math.sqrt(k)


#: The former name of :class:`TrainerConfig`, kept as an alias (the same class). The new name keeps it apart
#: from TRL's ``trl.GRPOConfig``, which the TRL studies use beside it.
GRPOConfig = TrainerConfig


class GRPOTrainer:
    """Trains ``model`` on ``task`` with GRPO; ``reference`` is frozen (a copy is made if None)."""

    def __init__(self, model, task: QATask, config: TrainerConfig, reference=None, run_dir=None,
                 progress: bool = True) -> None:
        self.cfg = config
        self.task = task
        if config.num_threads is not None and config.device == "cpu":
            torch.set_num_threads(config.num_threads)
        self.device = torch.device(config.device)
        self.model = model.to(self.device, _dtype(config.dtype)).train()
        # Only the parameters that require grad are trained and checkpointed: a model that freezes
        # part of itself (e.g. SmolLM2 with a frozen trunk) keeps its optimiser state and its
        # checkpoints small.
        self.trainable = {n: p for n, p in self.model.named_parameters() if p.requires_grad}
        if not self.trainable:
            raise InvalidInputError("the model has no parameter with requires_grad=True: nothing to train")
        # The reference is only read once, under no_grad: the caller's model is left untouched.
        reference = reference if reference is not None else copy.deepcopy(model)
        reference = reference.to(self.device, _dtype(config.dtype))
        opt = torch.optim.Adam if config.optimizer == "adam" else torch.optim.SGD
        self.optimizer = opt(list(self.trainable.values()), lr=config.learning_rate)
        self.rewards = torch.tensor(task.rewards, dtype=torch.float32, device=self.device)
        self.generator = torch.Generator(device="cpu").manual_seed(config.seed)
        self.run_dir = Path(run_dir) if run_dir else None
        self.progress = progress
        self.step = 0
        self.horizon = config.steps       # grows past `steps` when training to stationarity
        self.window: list[np.ndarray] = []
        self.window_steps: list[int] = []
        self.history: list[dict] = []
        was_training = reference.training
        reference.eval()
        with torch.no_grad():
            self.ref_token_logp = answer_token_logprobs(reference, task).float()
        reference.train(was_training)
        self.reference_probs = torch.exp(self.ref_token_logp.double().sum(-1)).cpu().numpy()
        self.token_mask = answer_token_mask(task.answers, device=self.device)

    # ------------------------------------------------------------------ persistence
    def _paths(self):
        d = self.run_dir
        return d / "config.json", d / "metrics.csv", d / "checkpoint.pt", d / "summary.json"

    def _run_record(self) -> dict:
        """What defines this run (``config.json``): the config, the task's name and the reference's probabilities."""
        return dict(config=asdict(self.cfg), task=self.task.name, reference_probs=self.reference_probs.tolist())

    def _write_config(self):
        cfg_path, *_ = self._paths()
        text = json.dumps(self._run_record(), indent=2)
        atomic_write(cfg_path, lambda p: p.write_text(text))

    def _same_run(self, ckpt: Path) -> None:
        """Refuse to resume from ``ckpt`` a run its ``config.json`` says was another: a field of the config (but
        :data:`RUNTIME_FIELDS`), the task or the reference's probabilities differ, each named with both values."""
        cfg_path, *_ = self._paths()
        try:
            stored = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        if not isinstance(stored, dict) or not isinstance(stored.get("config"), dict):
            raise InvalidInputError(f"checkpoint {ckpt}: {cfg_path} is missing or unreadable, so what the run was "
                                    "trained with is unknown; start the run afresh (without resume) or restore it")
        now = json.loads(json.dumps(self._run_record()))
        diffs = [f"{k}: {stored['config'].get(k)!r} in the checkpoint's run, {v!r} now"
                 for k, v in now["config"].items() if k not in RUNTIME_FIELDS and stored["config"].get(k) != v]
        if stored.get("task") != now["task"]:
            diffs.append(f"task: {stored.get('task')!r} in the checkpoint's run, {now['task']!r} now")
        if not _close(stored.get("reference_probs"), now["reference_probs"]):     # float32 forward passes: 1e-5
            diffs.append(f"reference_probs: {str(stored.get('reference_probs'))[:120]} in the checkpoint's run, "
                         f"{str(now['reference_probs'])[:120]} now")
        if diffs:
            raise InvalidInputError(f"checkpoint {ckpt} is of another run ({'; '.join(diffs)}); resume with the same "
                                    "settings, or start afresh in another folder")

    def save_checkpoint(self) -> None:
        if self.run_dir is None:
            return
        *_, ckpt, _ = self._paths()
        weights = {n: p.detach() for n, p in self.trainable.items()}
        state = dict(step=self.step, model=weights, optimizer=self.optimizer.state_dict(),
                     generator=self.generator.get_state(), window=self.window, history=self.history,
                     torch_rng=torch.get_rng_state(), window_steps=self.window_steps, horizon=self.horizon)
        atomic_write(ckpt, lambda p: torch.save(state, p))   # a crash never leaves a half-written checkpoint

    def load_checkpoint(self) -> bool:
        if self.run_dir is None:
            return False
        *_, ckpt, _ = self._paths()
        if not ckpt.exists():
            return False
        self._same_run(ckpt)
        state = torch.load(ckpt, weights_only=False)
        if set(state["model"]) != set(self.trainable):
            raise InvalidInputError(f"checkpoint {ckpt} holds parameters {sorted(state['model'])[:5]}..., this model "
                             f"trains {sorted(self.trainable)[:5]}...: not the same run")
        with torch.no_grad():
            for n, v in state["model"].items():
                self.trainable[n].copy_(v)
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        self.step, self.window, self.history = state["step"], state["window"], state["history"]
        # checkpoints written before issue 26 hold the window's probabilities only, one per step up to `step`
        self.window_steps = state.get("window_steps", list(range(self.step - len(self.window) + 1, self.step + 1)))
        self.horizon = state.get("horizon", self.cfg.steps)
        return True

    # ------------------------------------------------------------------ training
    def _lr(self) -> float:
        # past `steps` (training to stationarity) the rate stays at its final value
        frac = min(1.0, self.step / max(1, self.cfg.steps))
        warm = min(1.0, (self.step + 1) / self.cfg.warmup_steps) if self.cfg.warmup_steps else 1.0
        return warm * self.cfg.learning_rate * (1.0 - (1.0 - self.cfg.final_lr_fraction) * frac)

    def _sample(self, token_logp_old: torch.Tensor, q_idx: list[int]) -> torch.Tensor:
        """Answer indices (n_q, groups, G) from the old policy."""
        cfg = self.cfg
        n = cfg.groups_per_question * cfg.objective.group_size
        if cfg.sampling == "generate":
            sub = self.task.subset(q_idx)
            idx = generate(self.model, sub, n, generator=self.generator)
        else:
            probs = torch.exp(token_logp_old.sum(-1).double()).cpu()
            idx = torch.multinomial(probs / probs.sum(-1, keepdim=True), n, replacement=True,
                                    generator=self.generator)
        return idx.view(len(q_idx), cfg.groups_per_question, cfg.objective.group_size).to(self.device)

    def train_step(self) -> dict:
        cfg = self.cfg
        nq = self.task.n_questions
        if cfg.questions_per_step is None or cfg.questions_per_step >= nq:
            q_idx = list(range(nq))
        else:
            q_idx = torch.randperm(nq, generator=self.generator)[:cfg.questions_per_step].tolist()
        # One forward pass serves twice: detached, it is the old policy (sampling, ratios); with its
        # graph, it is the first inner update's current policy (the same parameters).
        lp_all = answer_token_logprobs(self.model, self.task, question_idx=q_idx)
        lp_old_all = lp_all.detach().float()
        idx = self._sample(lp_old_all, q_idx)                                          # (nq, g, G)
        q_t = torch.tensor(q_idx, device=self.device)
        r = torch.gather(self.rewards[q_t], 1, idx.flatten(1)).view_as(idx)
        task_reward = float(r.mean())

        def gather(table):                                                             # (nq, A, T) -> (nq, g, G, T)
            t = table.unsqueeze(1).unsqueeze(1).expand(-1, *idx.shape[1:], -1, -1)
            return torch.gather(t, 3, idx[..., None, None].expand(*idx.shape, 1, table.shape[-1])).squeeze(3)

        lp_old = gather(lp_old_all)
        lp_ref = gather(self.ref_token_logp[q_t])
        mask = self.token_mask[idx]                                                    # (nq, g, G, T)
        r = shaped_rewards(r, cfg.objective, lp_old, lp_ref, mask)   # the KL in the reward (verl), if placed there
        adv = advantages_for(r, cfg.objective)       # the estimator's sampled form (grpo_theory.variants)
        group_mask = tie_mask(r) if cfg.objective.filter_ties else None
        for group in self.optimizer.param_groups:
            group["lr"] = self._lr()
        for inner in range(cfg.inner_updates):
            if inner > 0:
                lp_all = answer_token_logprobs(self.model, self.task, question_idx=q_idx)
            entropy = (gather(answer_token_entropies(lp_all, self.task.answers))    # the exact per-position
                       if cfg.objective.entropy_coef else None)                      # entropies, with their graph
            obj, diag = grpo_objective(cfg.objective, gather(lp_all), lp_old, lp_ref, adv, clip_eps=cfg.clip_eps,
                                       mask=mask, group_mask=group_mask, entropy=entropy)
            self.optimizer.zero_grad(set_to_none=True)
            (-obj).backward()
            self.optimizer.step()
        self.step += 1
        return dict(step=self.step, reward=task_reward, k3=float(diag["k3"]),
                    clip_fraction=float(diag["clip_fraction"]), lr=self._lr())

    def _cap(self) -> int:
        cfg = self.cfg
        if not cfg.until_stationary:
            return cfg.steps
        return cfg.max_steps if cfg.max_steps is not None else 4 * cfg.steps

    def _log_due(self, window_start: int) -> bool:
        """Log P(correct) densely early (spacing about 10% of the step number, at most ``log_every``),
        every ``log_every`` steps in mid-run, and every step in the final window (where the
        probabilities are computed anyway): the stationarity check reads the last quarter."""
        s, cfg = self.step, self.cfg
        spacing = max(1, min(cfg.log_every, s // 10))
        return s % spacing == 0 or s > window_start or s == self.horizon

    def _extend_if_due(self, cap: int, bar) -> None:
        """At the horizon, push it on by ``steps // 2`` (up to ``cap``) when :meth:`_extension_due`."""
        if self.step == self.horizon and self.history and self._extension_due(cap):
            self.horizon = min(cap, self.horizon + max(1, self.cfg.steps // 2))
            bar.total = self.horizon

    def _extension_due(self, cap: int) -> bool:
        """Train on past the horizon? Only below the cap, and while a question is moving, or is
        oscillating with the check's tail reaching back before the final learning rate (step
        ``steps``): see :class:`TrainerConfig`."""
        if self.horizon >= cap:
            return False
        if len(self.history) < 2:               # nothing to judge yet (a line needs two rows): train on
            return True
        rep = self.check_convergence()
        return bool((rep.status == "moving").any()
                    or ((rep.status == "oscillating").any() and rep.tail_start < self.cfg.steps))

    def check_convergence(self) -> ConvergenceReport:
        """:func:`grpo_theory.convergence.check_history` on the history so far (every question)."""
        return check_history(self.history, self.task.n_questions, tail=self.cfg.convergence_tail,
                             too_short="moving")         # a run in progress: a short tail is moving (train on)

    def train(self, resume: bool = False, stop_after: int | None = None) -> TrainResult:
        """Train to ``config.steps`` (or stop, checkpointed, after ``stop_after`` more steps).

        With ``resume=True`` and a checkpoint in ``run_dir``, training continues from it:
        same model, optimiser, sampler state and metrics, as if never interrupted.
        With ``config.until_stationary``, training goes on past ``steps`` in chunks of ``steps // 2``
        (at the final learning rate) while :meth:`check_convergence` finds a question still moving,
        up to ``max_steps``, or while one oscillates with the check's tail reaching back before the
        final learning rate; the result's ``convergence`` says where each question ended (see
        :class:`TrainerConfig`). A run resumed at its finished horizon continues if the rule asks for more.

        Parameters
        ----------
        resume : bool, default False
            Continue from the checkpoint in ``run_dir``, if there is one.
        stop_after : int, optional
            Train at most this many more steps in this call, then checkpoint and return.

        Returns
        -------
        TrainResult
            The measured answer probabilities over the final window with their standard errors, the metrics
            and the convergence check.
        """
        cfg = self.cfg
        torch.manual_seed(cfg.seed)
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            _, metrics, *_ = self._paths()
            if not (resume and self.load_checkpoint()):
                self._write_config()
                metrics.unlink(missing_ok=True)
            elif metrics.exists():
                # rows logged after the checkpoint were lost with the process and are logged again:
                # drop them, so the log has each step once, in order
                _truncate_log(metrics, self.step)
        # probabilities are kept every step from the first horizon's window on: a later horizon's
        # window starts later, so it is always covered
        first_window_start = int(round(cfg.steps * (1 - cfg.final_window)))
        t0 = time.perf_counter()
        kl_name = cfg.objective.estimator
        cap = self._cap()
        bar = tqdm(total=self.horizon, initial=self.step,
                   desc=f"GRPO {kl_name} G={cfg.objective.group_size} beta={cfg.objective.beta:g}",
                   disable=not self.progress, leave=False)
        metrics_file = None
        writer = None
        if self.run_dir is not None:
            _, metrics_path, *_ = self._paths()
            new = not metrics_path.exists()
            metrics_file = metrics_path.open("a", newline="")
        budget = None if stop_after is None else self.step + stop_after
        # resumed at a finished horizon (e.g. a run from before this rule): continue as the
        # uninterrupted run would have at this step
        self._extend_if_due(cap, bar)
        best_mask = self.task.rewards == self.task.rewards.max(1, keepdims=True)
        try:
            while self.step < self.horizon and (budget is None or self.step < budget):
                row = self.train_step()
                bar.update(1)
                probs = None
                if self.step > first_window_start:
                    probs = answer_probabilities(self.model, self.task)
                    self.window.append(probs)
                    self.window_steps.append(self.step)
                if self._log_due(first_window_start):
                    if probs is None:
                        probs = answer_probabilities(self.model, self.task)
                    best = (probs * best_mask).sum(1)
                    row.update({f"p_best_q{i}": float(v) for i, v in enumerate(best)})
                    row["expected_reward"] = float((probs * self.task.rewards).sum(1).mean())
                    self.history.append(row)
                    bar.set_postfix(reward=f"{row['reward']:.3f}", k3=f"{row['k3']:.3f}")
                    if metrics_file is not None:
                        if writer is None:
                            writer = csv.DictWriter(metrics_file, fieldnames=list(row))
                            if new:
                                writer.writeheader()
                        writer.writerow(row)
                        metrics_file.flush()
                if self.step % cfg.checkpoint_every == 0:
                    self.save_checkpoint()
                self._extend_if_due(cap, bar)
        finally:
            bar.close()
            if metrics_file is not None:
                metrics_file.close()
        self.save_checkpoint()
        # the measured policy: the mean over the last `final_window` of the steps run
        start = int(round(self.step * (1 - cfg.final_window)))
        kept = [w for s, w in zip(self.window_steps, self.window) if s > start]
        window = np.stack(kept) if kept else answer_probabilities(self.model, self.task)[None]
        report = self.check_convergence() if len(self.history) >= 2 else None     # one row: nothing to judge
        result = TrainResult(window, window.mean(0), batch_means_se(window), self.reference_probs,
                             time.perf_counter() - t0, self.step, self.history, report)
        if self.run_dir is not None:
            *_, summary = self._paths()
            conv = {} if report is None else dict(convergence=report.status.tolist(),
                                                  drift=report.drift.tolist(), spread=report.spread.tolist(),
                                                  reward_largest_drop=report.reward_drop.size)
            text = json.dumps(dict(measured=result.measured.tolist(), measured_se=result.measured_se.tolist(),
                                   reference=result.reference.tolist(), steps=self.step, seconds=result.seconds,
                                   **conv), indent=2, default=float)
            atomic_write(summary, lambda p: p.write_text(text))
        return result
