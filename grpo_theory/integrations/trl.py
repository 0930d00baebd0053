"""TRL's GRPOTrainer, seen by the theory: which stationary policy a run heads to.

``objective_from_trl(config)`` maps a ``trl.GRPOConfig`` (or a dict of its fields, e.g.
loaded from JSON) onto the theory's :class:`~grpo_theory.Objective`, following the
installed TRL's conventions (checked against TRL 1.16.0's source):

* group size = ``num_generations``; ``beta`` as given (TRL's default is 0: no penalty);
* advantages ``(r - group mean) / (std + 1e-4)`` with the unbiased std (ddof = 1):
  ``std_ddof=1, std_eps=1e-4``; ``scale_rewards="none"`` is shift-only;
* the per-token k3 penalty is multiplied by the importance ratio when
  ``use_bias_correction_kl=True`` (the default in recent TRL; absent, i.e. False, in
  older releases such as 1.9): that is the **direct** penalty KL(pi || pi_ref);
  without it, GRPO's original **reverse** penalty. The same ``beta`` therefore
  leads to different stationary policies depending on the TRL version.

Every assumption of the theory that a setting breaks comes back as a warning
(multi-token completions with token-level ratio/KL, ``num_iterations > 1``,
``beta = 0``, ``temperature != 1``, ``top_entropy_quantile < 1``, batch scaling, masked
truncations). Importing this module does not import TRL; the callback needs
``transformers``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problem import Objective, Question
from ..stationary import stationary_points, stationary_policy

#: TRL constants read from trl/trainer/grpo_trainer.py (1.16.0): ``advantages / (std + 1e-4)``.
TRL_STD_EPS = 1e-4


@dataclass(frozen=True)
class TheoryMapping:
    """The theory's objective for a TRL config, or ``None`` when none applies, with warnings."""

    objective: Objective | None
    warnings: tuple
    trl_version: str | None

    def __str__(self) -> str:
        head = self.objective.describe() if self.objective else "no stationary policy (see warnings)"
        return "\n".join([f"theory objective: {head} (TRL {self.trl_version or 'unknown'})"] +
                         [f"warning: {w}" for w in self.warnings])


def _get(config, name, default=None):
    if isinstance(config, dict):
        return config.get(name, default)
    return getattr(config, name, default)


def installed_trl_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("trl")
    except Exception:  # noqa: BLE001 - not installed or broken metadata: unknown
        return None


def objective_from_trl(config, trl_version: str | None = None, completion_tokens: int | None = None
                       ) -> TheoryMapping:
    """Map a TRL ``GRPOConfig`` (or dict) to the theory's Objective, with warnings.

    ``completion_tokens``: length of the answers in tokens if known (1 for
    single-token answers); defaults to ``max_completion_length``.
    """
    version = trl_version or _get(config, "trl_version") or installed_trl_version()
    warns: list[str] = []
    G = int(_get(config, "num_generations", 8))
    beta = float(_get(config, "beta", 0.0))
    scale = _get(config, "scale_rewards", "group")
    scale = {True: "group", False: "none"}.get(scale, scale)
    bias_corr = _get(config, "use_bias_correction_kl", None)
    if bias_corr is None:
        bias_corr = False
        warns.append("use_bias_correction_kl is not in this config (TRL before it existed): the KL term is not "
                      "multiplied by the ratio, i.e. the reverse (original GRPO) penalty")
    penalty = "direct" if bias_corr else "reverse"
    normalization = "shift" if scale == "none" else "scale"
    if scale == "batch":
        warns.append('scale_rewards="batch" divides by the batch std, not the group std: the theory models the '
                     "group std; the prediction uses the group std")
    iters = int(_get(config, "num_iterations", 1))
    if iters > 1:
        warns.append(f"num_iterations={iters}: several updates per batch make the policy off-policy and "
                     "activate clipping; the stationary points are the same, but with large steps training can "
                     "settle elsewhere (docs/dynamics.md, finding 4)")
    temp = float(_get(config, "temperature", 1.0))
    if temp != 1.0:
        warns.append(f"temperature={temp}: groups are sampled from a tempered policy, not from pi; the theory "
                     "assumes sampling from pi itself")
    teq = float(_get(config, "top_entropy_quantile", 1.0))
    if teq < 1.0:
        warns.append(f"top_entropy_quantile={teq}: only high-entropy tokens enter the loss; not modelled")
    if _get(config, "mask_truncated_completions", False):
        warns.append("mask_truncated_completions=True: truncated answers leave the loss, which changes the "
                     "effective answer distribution; not modelled")
    length = completion_tokens if completion_tokens is not None else _get(config, "max_completion_length", None)
    if length is not None and int(length) > 1:
        level = _get(config, "importance_sampling_level", "token")
        warns.append(f"completions of up to {length} tokens with {level}-level ratios and per-token KL: the note's "
                     "theory is sequence-level; Question(answers=...) with Objective(level='token', "
                     f"loss_type={_get(config, 'loss_type', 'dapo')!r}) predicts the token-level stationary policy")
    loss_type = _get(config, "loss_type", "dapo")
    if loss_type not in ("grpo", "dapo", "bnpo", "dr_grpo"):
        warns.append(f"loss_type={loss_type!r} changes the surrogate itself; the theory models the clipped GRPO "
                     "surrogate")
    if _get(config, "epsilon_high", None) not in (None, _get(config, "epsilon", 0.2)) or _get(config, "delta"):
        warns.append("asymmetric or two-sided clipping (epsilon_high/delta): inactive on-policy, so the "
                     "stationary points are unchanged")
    if beta == 0.0:
        warns.append("beta=0 (TRL's default): no penalty, so no stationary policy with support like pi_ref; "
                     "the policy drifts to the best answers (the beta -> 0 limit)")
        return TheoryMapping(None, tuple(warns), version)
    obj = Objective(beta=beta, group_size=G, penalty=penalty, normalization=normalization, std_ddof=1,
                    std_eps=TRL_STD_EPS)
    return TheoryMapping(obj, tuple(warns), version)


def predict_trl(config, pi_ref, rewards, **kwargs) -> dict:
    """The stationary policy a TRL run with ``config`` heads to, for one question.

    Returns ``dict(mapping=TheoryMapping, policy=StationaryPoint | None, points=StationaryPointSet | None)``.
    """
    mapping = objective_from_trl(config, **kwargs)
    if mapping.objective is None:
        return dict(mapping=mapping, policy=None, points=None)
    q = Question(pi_ref, rewards=rewards)
    return dict(mapping=mapping, policy=stationary_policy(q, mapping.objective),
                points=stationary_points(q, mapping.objective))


# ------------------------------------------------------------------------------ the callback

@dataclass(frozen=True)
class Probe:
    """A probe question: its prompt text and its candidate answers (single tokens), with rewards."""

    prompt: str
    answers: tuple
    rewards: tuple


def next_token_probs(model, tokenizer, prompts: list) -> np.ndarray:
    """Full-vocabulary next-token distribution after each prompt, (n_prompts, V)."""
    import torch

    out = []
    device = next(model.parameters()).device
    with torch.no_grad():
        for p in prompts:
            ids = tokenizer(p, return_tensors="pt", add_special_tokens=False)["input_ids"].to(device)
            out.append(torch.softmax(model(input_ids=ids).logits[0, -1].double(), -1).cpu().numpy())
    return np.array(out)


def _probe_probs(model, tokenizer, probes) -> np.ndarray:
    """pi(answer | prompt) over each probe's answers: the next-token distribution restricted to them."""
    full = next_token_probs(model, tokenizer, [pr.prompt for pr in probes])
    out = []
    for row, pr in zip(full, probes):
        p = row[[tokenizer.convert_tokens_to_ids(a) for a in pr.answers]]
        out.append(p / p.sum())
    return np.array(out)


def make_tracking_callback(probes, tokenizer, config, every: int = 10, output_dir: str | None = None,
                           figure: bool = True):
    """A ``transformers.TrainerCallback`` that logs probe answer probabilities beside the predictions.

    At the start it measures the reference probabilities of each probe's answers and
    computes the stationary policy under ``config``'s conventions; every ``every``
    steps it measures the policy again and appends a row per probe to
    ``<output_dir>/stationary_tracking.csv``; at the end it draws the
    predicted-vs-measured figure. Only the main process measures and writes, and the
    measurement runs no collective operation, so multi-process training cannot
    deadlock on it.
    """
    import csv
    from pathlib import Path

    from transformers import TrainerCallback

    mapping = objective_from_trl(config, completion_tokens=1)

    class StationaryTrackingCallback(TrainerCallback):
        def __init__(self):
            self.mapping = mapping
            self.reference = None
            self.predicted = None
            self.path = None

        def _main(self, state) -> bool:
            return bool(getattr(state, "is_world_process_zero", True))

        def on_train_begin(self, args, state, control, model=None, **kw):
            if not self._main(state):
                return
            self.path = Path(output_dir or args.output_dir) / "stationary_tracking.csv"
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.reference = _probe_probs(model, tokenizer, probes)
            self.predicted = []
            for pr, ref in zip(probes, self.reference):
                if mapping.objective is None:
                    self.predicted.append(np.full(len(pr.answers), np.nan))
                else:
                    q = Question(ref / ref.sum(), rewards=list(pr.rewards))
                    self.predicted.append(stationary_policy(q, mapping.objective).pi)
            with self.path.open("w", newline="") as fh:
                csv.writer(fh).writerow(["step", "probe", "pi_ref_best", "predicted_best", "measured_best"])
            self._log(state.global_step, self.reference)

        def _log(self, step, probs):
            with self.path.open("a", newline="") as fh:
                w = csv.writer(fh)
                for i, (pr, p) in enumerate(zip(probes, probs)):
                    best = np.asarray(pr.rewards) == max(pr.rewards)
                    w.writerow([step, i, float(self.reference[i][best].sum()),
                                float(self.predicted[i][best].sum()), float(p[best].sum())])

        def on_step_end(self, args, state, control, model=None, **kw):
            if self._main(state) and state.global_step % every == 0:
                self._log(state.global_step, _probe_probs(model, tokenizer, probes))

        def on_train_end(self, args, state, control, model=None, **kw):
            if not self._main(state):
                return
            self._log(state.global_step, _probe_probs(model, tokenizer, probes))
            if figure and mapping.objective is not None:
                draw_tracking_figure(self.path)

    return StationaryTrackingCallback()


def draw_tracking_figure(csv_path, window: float = 0.3):
    """Predicted against measured (mean over the final ``window`` of logged steps), next to the CSV."""
    from pathlib import Path

    import matplotlib
    import pandas as pd

    matplotlib.use("Agg", force=False)
    from .. import plotting

    df = pd.read_csv(csv_path)
    last = df.step.max()
    tail = df[df.step >= last - window * (last - df.step.min())]
    agg = tail.groupby("probe").agg(predicted=("predicted_best", "first"), measured=("measured_best", "mean"),
                                    measured_se=("measured_best", "sem")).reset_index()
    agg["config"] = "TRL run"
    with matplotlib.rc_context(plotting.STYLE):
        fig = plotting.predicted_vs_measured(agg.fillna({"measured_se": 0.0}))
        out = Path(csv_path).with_name("stationary_tracking.png")
        fig.savefig(out)
    return out
