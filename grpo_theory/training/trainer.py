"""A small but real GRPO trainer: one config dataclass, one readable loop.

Every step: for each question, score the answer set under the current model (one
teacher-forced pass; the old policy is the current one, detached), sample
``groups_per_question`` groups of ``group_size`` answers, look up their rewards,
form advantages, and take ``inner_updates`` optimiser steps on the clipped
surrogate minus ``beta`` times the penalty. The reference model is frozen.

Names follow TRL's GRPOTrainer where the meaning is the same: ``group_size``
(TRL ``num_generations``), ``beta``, ``clip_eps`` (TRL ``epsilon``),
``inner_updates`` (TRL ``num_iterations``), ``learning_rate``.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from .._io import atomic_write
from ..convergence import ConvergenceReport, check_history
from ..problem import LOSS_TYPES, InvalidInputError, Objective
from .loss import family_advantages, group_advantages, grpo_objective, kl_value, tie_mask
from .policy import answer_token_entropies, answer_token_logprobs, answer_token_mask, generate
from .tasks import QATask


@dataclass
class GRPOConfig:
    group_size: int = 8
    beta: float = 0.5
    penalty: str | None = None        # "reverse" (None's default): k3 (GRPO); "direct": ratio * k3 (TRL)
    kl_estimator: str | None = None   # k1/k2/k3/k3_ratio/k3_plus/abs (overrides penalty; see grpo_theory.kl)
    kl_placement: str = "loss"        # "loss", "advantage" (after normalisation), "reward" (before it)
    kl_log_ratio_clamp: float | None = None   # verl low_var_kl: 20
    kl_value_clamp: float | None = None       # verl low_var_kl and OpenRLHF: 10
    normalization: str = "scale"      # "scale" (Eq. 2) or "shift"
    std_ddof: int = 0                 # 0: the note; 1: TRL/verl/OpenRLHF
    std_eps: float = 0.0              # TRL 1e-4
    clip_eps: float = 0.2
    inner_updates: int = 1            # > 1: several updates per batch (clipping becomes active)
    learning_rate: float = 3e-3
    optimizer: str = "adam"           # "adam" or "sgd"
    final_lr_fraction: float = 0.05   # linear decay of the learning rate to this fraction
    questions_per_step: int | None = None   # None: every question every step
    groups_per_question: int = 16
    steps: int = 1500
    level: str = "sequence"           # ratio and KL per "sequence" (the note) or per "token"
    loss_type: str = "grpo"           # token level: TRL's grpo/bnpo/dr_grpo/dapo or verl's loss_agg_mode names
    groups_per_batch: int | None = None   # batch-normalised loss types: groups sharing a token count (None: all)
    sampling: str = "score"           # "score": one pass scores every answer; "generate": token by token
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"
    log_every: int = 10               # history spacing in mid-run; denser early (every ~10% of the step
                                      # number) and every step in the final window (see _log_due)
    checkpoint_every: int = 250
    final_window: float = 0.3         # fraction of steps averaged for the measured policy
    advantage: str = "group"          # issue 22: "group", "rloo", "reinforce_pp" or "pass_at_k"
    pass_k: int | None = None         # k for advantage="pass_at_k"
    filter_ties: bool = False         # drop tied groups' terms (DAPO dynamic sampling / TRL masking)
    entropy_coef: float = 0.0         # entropy bonus per position (verl entropy_coeff, OpenRLHF entropy_loss_coef)
    importance_level: str = "token"   # "sequence": GSPO's ratio (TRL importance_sampling_level)
    num_threads: int | None = 1       # torch CPU threads; 1 is far faster than 2 for small models on
                                      # 2-core machines (8.8x less CPU measured); None keeps torch's choice
    # --- run to stationarity (issue 26): after `steps`, check the logged P(correct) of every question
    # (grpo_theory.convergence); while one is not converged, train `steps // 2` more at the final
    # learning rate (lr x final_lr_fraction: the smaller step), up to `max_steps` (None: 4 x steps).
    until_stationary: bool = False
    max_steps: int | None = None
    convergence_tail: float = 0.25    # fraction of the steps run that the check looks at

    def __post_init__(self):
        checks = [
            (self.group_size >= 2, f"group_size must be >= 2, got {self.group_size}"),
            (self.beta >= 0, f"beta must be >= 0, got {self.beta}"),
            (self.penalty in (None, "reverse", "direct"),
             f"penalty must be reverse/direct (or None, with kl_estimator), got {self.penalty!r}"),
            (self.normalization in ("scale", "shift"),
             f"normalization must be scale/shift, got {self.normalization!r}"),
            (self.std_ddof in (0, 1), f"std_ddof must be 0 or 1, got {self.std_ddof}"),
            (self.level in ("sequence", "token"), f"level must be sequence/token, got {self.level!r}"),
            (self.loss_type in _loss_types(),
             f"loss_type must be one of {sorted(_loss_types())}, got {self.loss_type!r}"),
            (self.groups_per_batch is None or (isinstance(self.groups_per_batch, int) and self.groups_per_batch >= 1
                                               and self.groups_per_question % self.groups_per_batch == 0),
             f"groups_per_batch must be None or a divisor of groups_per_question={self.groups_per_question}, "
             f"got {self.groups_per_batch!r}"),
            (self.sampling in ("score", "generate"), f"sampling must be score/generate, got {self.sampling!r}"),
            (self.optimizer in ("adam", "sgd"), f"optimizer must be adam/sgd, got {self.optimizer!r}"),
            (self.inner_updates >= 1 and self.steps >= 1, "inner_updates and steps must be >= 1"),
            (0 < self.final_window <= 1, f"final_window must be in (0, 1], got {self.final_window}"),
            (self.max_steps is None or self.max_steps >= self.steps,
             f"max_steps must be None or >= steps={self.steps}, got {self.max_steps!r}"),
            (0 < self.convergence_tail < 1, f"convergence_tail must be in (0, 1), got {self.convergence_tail}"),
            (self.num_threads is None or (isinstance(self.num_threads, int) and self.num_threads >= 1),
             f"num_threads must be None or an integer >= 1, got {self.num_threads!r}"),
            (self.advantage in ("group", "rloo", "reinforce_pp", "pass_at_k"),
             f"advantage must be group/rloo/reinforce_pp/pass_at_k, got {self.advantage!r}"),
            ((self.advantage == "pass_at_k") == (self.pass_k is not None)
             and (self.pass_k is None or 1 <= self.pass_k <= self.group_size),
             f"pass_k must be an integer in 1..G (G={self.group_size}) with advantage='pass_at_k' and None "
             f"otherwise, got pass_k={self.pass_k!r} with advantage={self.advantage!r}"),
            (isinstance(self.entropy_coef, (int, float)) and math.isfinite(self.entropy_coef)
             and self.entropy_coef >= 0, f"entropy_coef must be a finite number >= 0, got {self.entropy_coef!r}"),
            (self.importance_level in ("token", "sequence"),
             f"importance_level must be token/sequence, got {self.importance_level!r}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)
        try:
            self.kl_options()
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from None

    def kl_options(self) -> dict:
        """The KL estimator, placement and clamps, resolved as :class:`~grpo_theory.Objective` resolves them."""
        o = Objective(beta=1.0, penalty=self.penalty,
                      kl_estimator=self.kl_estimator, kl_placement=self.kl_placement,
                      kl_log_ratio_clamp=self.kl_log_ratio_clamp, kl_value_clamp=self.kl_value_clamp)
        return dict(kl_estimator=o.estimator, kl_placement=o.kl_placement,
                    kl_log_ratio_clamp=o.kl_log_ratio_clamp, kl_value_clamp=o.kl_value_clamp)

    def objective(self):
        """The theory's Objective with this trainer's conventions (level, loss type and batch included).

        ``groups_per_batch=None`` normalises by the token count of the whole step (every question's
        groups): many groups, so the theory's ``groups_per_batch = inf``.
        """
        return Objective(beta=self.beta, group_size=self.group_size,
                         normalization=self.normalization, std_ddof=self.std_ddof, std_eps=self.std_eps,
                         level=self.level, loss_type=self.loss_type,
                         groups_per_batch=math.inf if self.groups_per_batch is None else self.groups_per_batch,
                         **self.kl_options(), advantage=self.advantage, pass_k=self.pass_k,
                         filter_ties=self.filter_ties, entropy_coef=self.entropy_coef,
                         importance_level=self.importance_level)


def _loss_types():
    return LOSS_TYPES


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


def _dtype(name: str):
    return {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}[name]


@torch.no_grad()
def answer_probabilities(model, task: QATask) -> np.ndarray:
    """pi(answer | question) over the answer set, (n_questions, n_answers), as float64 numpy."""
    lp = answer_token_logprobs(model, task).sum(-1)
    return torch.exp(lp.double()).cpu().numpy()


def batch_means_se(x: np.ndarray, n_blocks: int = 10) -> np.ndarray:
    """Standard error of the mean of a correlated series (axis 0) by the method of batch means."""
    n = x.shape[0]
    if n < 4:              # too few points to estimate a spread: say "unknown" (inf), never NaN
        return np.full(x.shape[1:], np.inf)
    k = min(n_blocks, n // 2)
    blocks = np.array_split(x, k, axis=0)
    means = np.stack([b.mean(axis=0) for b in blocks])
    return means.std(axis=0, ddof=1) / math.sqrt(k)


class GRPOTrainer:
    """Trains ``model`` on ``task`` with GRPO; ``reference`` is frozen (a copy is made if None)."""

    def __init__(self, model, task: QATask, config: GRPOConfig, reference=None, run_dir=None,
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
            raise ValueError("the model has no parameter with requires_grad=True: nothing to train")
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

    def _write_config(self):
        cfg_path, *_ = self._paths()
        text = json.dumps(dict(config=asdict(self.cfg), task=self.task.name,
                               reference_probs=self.reference_probs.tolist()), indent=2)
        atomic_write(cfg_path, lambda p: p.write_text(text))

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
        state = torch.load(ckpt, weights_only=False)
        if set(state["model"]) != set(self.trainable):
            raise ValueError(f"checkpoint {ckpt} holds parameters {sorted(state['model'])[:5]}..., this model "
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
        return self.cfg.learning_rate * (1.0 - (1.0 - self.cfg.final_lr_fraction) * frac)

    def _sample(self, token_logp_old: torch.Tensor, q_idx: list[int]) -> torch.Tensor:
        """Answer indices (n_q, groups, G) from the old policy."""
        cfg = self.cfg
        n = cfg.groups_per_question * cfg.group_size
        if cfg.sampling == "generate":
            sub = self.task.subset(q_idx)
            idx = generate(self.model, sub, n, generator=self.generator)
        else:
            probs = torch.exp(token_logp_old.sum(-1).double()).cpu()
            idx = torch.multinomial(probs / probs.sum(-1, keepdim=True), n, replacement=True,
                                    generator=self.generator)
        return idx.view(len(q_idx), cfg.groups_per_question, cfg.group_size).to(self.device)

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
        kl = cfg.kl_options()
        if kl["kl_placement"] == "reward":       # verl's use_kl_in_reward: r - beta * (sum of the values)
            clamps = (kl["kl_log_ratio_clamp"], kl["kl_value_clamp"])
            if cfg.level == "sequence":
                v = kl_value(lp_old.sum(-1), lp_ref.sum(-1), kl["kl_estimator"], *clamps)
            else:
                v = (kl_value(lp_old, lp_ref, kl["kl_estimator"], *clamps) * mask).sum(-1)
            r = r - cfg.beta * v
        if cfg.advantage == "group":
            adv = group_advantages(r, cfg.normalization, cfg.std_ddof, cfg.std_eps)
        else:
            adv = family_advantages(r, cfg.advantage, pass_k=cfg.pass_k)
        family = dict(group_mask=tie_mask(r)) if cfg.filter_ties else {}
        family["importance_level"] = cfg.importance_level
        for group in self.optimizer.param_groups:
            group["lr"] = self._lr()
        for inner in range(cfg.inner_updates):
            if inner > 0:
                lp_all = answer_token_logprobs(self.model, self.task, question_idx=q_idx)
            if cfg.entropy_coef:                 # the exact per-position entropies, with their graph
                family.update(entropy=gather(answer_token_entropies(lp_all, self.task.answers)),
                              entropy_coef=cfg.entropy_coef)
            obj, diag = grpo_objective(gather(lp_all), lp_old, lp_ref, adv, beta=cfg.beta,
                                       clip_eps=cfg.clip_eps, level=cfg.level, mask=mask,
                                       loss_type=cfg.loss_type, groups_per_batch=cfg.groups_per_batch, **kl,
                                       **family)
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

    def check_convergence(self) -> ConvergenceReport:
        """:func:`grpo_theory.convergence.check_history` on the history so far (every question)."""
        return check_history(self.history, self.task.n_questions, tail=self.cfg.convergence_tail)

    def train(self, resume: bool = False, stop_after: int | None = None) -> TrainResult:
        """Train to ``config.steps`` (or stop, checkpointed, after ``stop_after`` more steps).

        With ``resume=True`` and a checkpoint in ``run_dir``, training continues from it:
        same model, optimiser, sampler state and metrics, as if never interrupted.
        With ``config.until_stationary``, training goes on past ``steps`` in chunks of ``steps // 2``
        (at the final learning rate) until :meth:`check_convergence` finds every question converged
        or ``max_steps`` is reached; the result's ``convergence`` says which.
        """
        cfg = self.cfg
        torch.manual_seed(cfg.seed)
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            if not (resume and self.load_checkpoint()):
                self._write_config()
                _, metrics, *_ = self._paths()
                metrics.unlink(missing_ok=True)
        # probabilities are kept every step from the first horizon's window on: a later horizon's
        # window starts later, so it is always covered
        first_window_start = int(round(cfg.steps * (1 - cfg.final_window)))
        t0 = time.perf_counter()
        kl_name = cfg.kl_options()["kl_estimator"]
        cap = self._cap()
        bar = tqdm(total=self.horizon, initial=self.step,
                   desc=f"GRPO {kl_name} G={cfg.group_size} beta={cfg.beta:g}", disable=not self.progress, leave=False)
        metrics_file = None
        writer = None
        if self.run_dir is not None:
            _, metrics_path, *_ = self._paths()
            new = not metrics_path.exists()
            metrics_file = metrics_path.open("a", newline="")
        budget = None if stop_after is None else self.step + stop_after
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
                if self.step == self.horizon and self.horizon < cap and not self.check_convergence().all_converged:
                    self.horizon = min(cap, self.horizon + max(1, cfg.steps // 2))
                    bar.total = self.horizon
        finally:
            bar.close()
            if metrics_file is not None:
                metrics_file.close()
        self.save_checkpoint()
        # the measured policy: the mean over the last `final_window` of the steps run
        start = int(round(self.step * (1 - cfg.final_window)))
        kept = [w for s, w in zip(self.window_steps, self.window) if s > start]
        window = np.stack(kept) if kept else answer_probabilities(self.model, self.task)[None]
        report = self.check_convergence() if self.history else None
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
