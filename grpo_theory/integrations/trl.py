"""TRL's GRPOTrainer, seen by the theory: which stationary policy a run heads to.

``read_trl_config(config, trl_version=None)`` maps a ``trl.GRPOConfig`` (or a dict of its fields,
e.g. loaded from JSON) onto the theory's :class:`~grpo_theory.Objective`. A field missing from a
dict takes its default *for that TRL version*, from :data:`TRL_DEFAULTS` (each row read from TRL's
``trl/trainer/grpo_config.py`` at that release; see docs/conventions.md):

* group size = ``num_generations``; ``beta`` as given (0 since 0.19, 0.04 before);
* advantages ``(r - group mean) / (std + 1e-4)`` with the unbiased std (ddof = 1):
  ``std_ddof=1, std_eps=1e-4``; ``scale_rewards="none"`` (or ``False``) is shift-only;
* the per-token k3 penalty in the loss, multiplied by the differentiable ratio when
  ``use_bias_correction_kl`` is on (``kl_estimator="k3_ratio"``: the note's **direct** penalty;
  default True from 1.10, False from 0.26 to 1.9, absent before); otherwise ``"k3"``, the note's
  **reverse** penalty. The same ``beta`` therefore leads to different stationary policies
  depending on the TRL version;
* per-token ratio and KL, aggregated by ``loss_type`` (``level="token"``; for one-token answers the
  same as the note's sequence level).

Every assumption of the theory that a setting breaks comes back as a warning. Importing this module
does not import TRL; the callback needs ``transformers``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .._checks import checked, mapping, numbers
from .._io import read_yaml
from .._validate import check_fields, float_array, integer, number, plain
from .. import variants
from ..problem import LOSS_TYPES, MAX_GROUP_SIZE, InvalidInputError, Objective, Question, require_regularised
from ..solvers import stationary_policy
from .cmdline import argparse_flags, check_set
from .family import trl_family
from .mapping import UNREGULARISED_WARNING, TheoryMapping, defaults_for, load_config_file, mapping_of, parse_version

#: TRL constants read from trl/trainer/grpo_trainer.py (0.14 to 1.16): ``advantages / (std + 1e-4)``.
TRL_STD_EPS = 1e-4
#: The TRL release the project is tested against (``pip install -e .[trl]``).
PINNED_TRL = "1.16.0"
#: Defaults of the fields the theory reads, by first release: ``(version, changes, source)``.
TRL_DEFAULTS = (
    ("0.14.0", dict(beta=0.04, num_generations=8, scale_rewards=True, loss_type="grpo",
                    use_bias_correction_kl=None, num_iterations=1, temperature=1.0),
     "grpo_config.py @ v0.14.0 (no loss_type field: per-answer mean; no use_bias_correction_kl)"),
    ("0.17.0", dict(loss_type="bnpo"), "grpo_config.py @ v0.17.0"),
    ("0.19.0", dict(beta=0.0), "grpo_config.py @ v0.19.0"),
    ("0.22.0", dict(loss_type="dapo", scale_rewards="group"), "grpo_config.py @ v0.22.0"),
    ("0.26.0", dict(use_bias_correction_kl=False), "grpo_config.py @ v0.26.0 (field added, PR #4638)"),
    ("1.10.0", dict(use_bias_correction_kl=True), "grpo_config.py in the 1.10.0 to 1.16.0 wheels"),
)
#: Newest release whose defaults were read.
_NEWEST_READ = "1.16.0"


def _grpo_config_fields() -> frozenset:
    """GRPOConfig's fields and the other arguments of ``trl grpo`` (ModelConfig's and GRPOScriptArguments':
    ``--model_name_or_path``, ``--dataset_name``, ...), which every real command line carries: known, not read."""
    table = json.loads(resources.files(__package__).joinpath("trl_grpo_config_fields.json").read_text(encoding="utf-8"))
    return frozenset(table["fields"]) | frozenset(table["cli_fields"])


#: Every GRPOConfig field the reader reads: (kind, low, high); a bound in a list is exclusive.
#: Checked once, all together, by :func:`_check_config` before anything is read.
TRL_FIELDS = {
    "num_generations": ("int", 2, MAX_GROUP_SIZE),      # the Objective's limit, named by the config's field
    "beta": ("float", 0, None),
    "scale_rewards": ((True, False, "group", "batch", "none"), None, None),
    "use_bias_correction_kl": ("bool|none", None, None),
    "loss_type": ("str", None, None),
    "num_iterations": ("int", 1, None),
    "steps_per_generation": ("int|none", 1, None),
    "gradient_accumulation_steps": ("int", 1, None),
    "temperature": ("float", [0], None),
    "top_p": ("float", [0], 1),
    "top_k": ("int|none", -1, None),
    "min_p": ("float|none", 0, 1),
    "repetition_penalty": ("float", [0], None),
    "top_entropy_quantile": ("float", 0, 1),
    "mask_truncated_completions": ("bool", None, None),
    "sync_ref_model": ("bool", None, None),
    "importance_sampling_level": (("token", "sequence"), None, None),
    "max_completion_length": ("int|none", 1, None),
    "epsilon": ("float", 0, None),
    "epsilon_high": ("float|none", 0, None),
    "delta": ("float|none", 0, None),
    "trl_version": ("str|none", None, None),
}


#: TRL loss types that are surrogates of their own (not an aggregation of GRPO's), read from trl's
#: ``GRPOConfig.loss_type`` help; the theory maps them onto 'grpo' with a warning.
TRL_OTHER_LOSS_TYPES = ("cispo", "sapo", "luspo", "vespo")


def _check_config(config, completion_tokens) -> None:
    """One check of every field :func:`read_trl_config` reads, naming each bad field and its value."""
    if isinstance(config, Mapping):
        values = dict(config)
    elif config is not None and hasattr(config, "num_generations"):
        values = {k: getattr(config, k) for k in TRL_FIELDS if hasattr(config, k)}
    else:
        raise InvalidInputError(f"a TRL config must be a GRPOConfig or a dict of its fields, got "
                                f"{type(config).__name__}")
    if completion_tokens is not None:
        values["completion_tokens"] = completion_tokens
    check_fields(values, {**TRL_FIELDS, "completion_tokens": ("int", 1, None)}, "TRL config",
                 error=InvalidInputError)


_UNSET = object()

#: Keys of a ``trl grpo`` config that are neither GRPOConfig fields nor the script's: ``env`` (environment variables,
#: set by TRL's parser, trl/scripts/utils.py ``TrlParser.parse_args_and_config``) and the arguments it passes on to
#: ``accelerate launch`` (trl/cli/commands/training.py; accelerate's ``launch_command_parser``).
TRL_LAUNCH_KEYS = frozenset({
    "env", "accelerate_config", "config_file", "num_processes", "num_machines", "machine_rank", "main_process_ip",
    "main_process_port", "mixed_precision", "multi_gpu", "use_deepspeed", "use_fsdp", "deepspeed_config_file",
    "zero_stage", "gpu_ids", "same_network", "dynamo_backend", "num_cpu_threads_per_process", "rdzv_backend"})


def _with_config_file(flags: dict) -> dict:
    """``--config FILE`` as TRL's parser reads it: the YAML's fields are the defaults, the command line's flags
    override them (trl/scripts/utils.py ``TrlParser.parse_args_and_config``)."""
    flags = dict(flags)
    path = flags.pop("config")
    if not isinstance(path, str) or not path.strip():
        raise InvalidInputError(f"TRL arguments: --config {plain(path)[:80]}: expected the path of a YAML file of "
                                "GRPOConfig fields")
    if not Path(path).is_file():
        raise InvalidInputError(f"TRL arguments: --config {path!r}: no such file from the current folder "
                                f"({Path.cwd()}); TRL reads it relative to the folder the command runs in: run "
                                "explain there, or give the YAML file itself as the config")
    data = read_yaml(path, "TRL --config file", "a YAML mapping of GRPOConfig fields")
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"TRL --config file {path!r} holds {type(data).__name__}; expected a YAML mapping "
                                "of GRPOConfig fields")
    return {**as_trl_parser_reads(data), **flags}


#: The spellings of a bool that TRL's parser takes (transformers' ``string_to_bool``).
_BOOL_TEXT = {"true": True, "t": True, "yes": True, "y": True, "1": True,
              "false": False, "f": False, "no": False, "n": False, "0": False}


@checked(values=mapping())
def as_trl_parser_reads(values: Mapping) -> dict:
    """A YAML config's values as ``trl grpo`` reads them: TRL's parser (``TrlParser``) makes them argparse's
    defaults, and argparse converts a text default with the field's type, so ``beta: 1e-3`` (text to YAML 1.1) is
    the number 0.001 and ``use_vllm: "false"`` is False. Only the fields the reader reads are converted; text that
    the type refuses stays as it is (and the reader's check names it).

    Parameters
    ----------
    values : mapping
        The YAML's fields.

    Returns
    -------
    dict
        The same fields, numbers and bools given as text converted.

    Examples
    --------
    >>> as_trl_parser_reads({"beta": "1e-3", "num_generations": "8", "output_dir": "1e-3"})
    {'beta': 0.001, 'num_generations': 8, 'output_dir': '1e-3'}
    """
    out = dict(values)
    for key, value in values.items():
        kind = str(TRL_FIELDS.get(key, ("",))[0])
        if not isinstance(value, str):
            continue
        if kind.startswith(("int", "float")):
            try:
                out[key] = int(value) if kind.startswith("int") else float(value)
            except ValueError:
                pass
        elif kind.startswith("bool") and value.strip().lower() in _BOOL_TEXT:
            out[key] = _BOOL_TEXT[value.strip().lower()]
    return out


def load_config_as_read(framework: str, path) -> object:
    """The config file ``path`` for ``framework`` as data (:func:`~grpo_theory.integrations.mapping.load_config_file`),
    a TRL YAML file's values typed as ``trl grpo --config`` types them (:func:`as_trl_parser_reads`): the one rule
    for every entry that reads a config file (``explain``, ``predict``, :func:`~grpo_theory.predict.objective_for`).

    Parameters
    ----------
    framework : {"trl", "verl", "openrlhf"}
        (any case)
        The trainer the config is for.
    path : str or Path
        The config file (or, for a command-line config, its text; see ``load_config_file``).

    Returns
    -------
    object
        The config as its reader takes it.
    """
    config = load_config_file(framework, path)               # checks framework and path, naming them
    if framework.lower() == "trl" and isinstance(config, Mapping) and isinstance(path, (str, Path)) \
            and Path(path).suffix.lower() in (".yaml", ".yml"):
        return as_trl_parser_reads(config)
    return config


def _get(config, name, default=None):
    if isinstance(config, Mapping):
        return config.get(name, default)
    return getattr(config, name, default)


def installed_trl_version() -> str | None:
    """The installed TRL's version string, or None when TRL is not installed."""
    try:
        from importlib.metadata import version

        return version("trl")
    except Exception:  # noqa: BLE001 - not installed or broken metadata: unknown
        return None


def _number(config, name, default, lo=None, integer=False):
    v = _get(config, name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or \
            (integer and not float(v).is_integer()) or (lo is not None and v < lo):
        kind = "an integer" if integer else "a number"
        raise InvalidInputError(f"TRL config {name}={v!r}: expected {kind}" + (f" >= {lo}" if lo is not None else ""))
    return int(v) if integer else float(v)


def read_trl_config(config, trl_version: str | None = None, completion_tokens: int | None = None
                       ) -> TheoryMapping:
    """Map a TRL ``GRPOConfig`` (or a dict of its fields) onto the theory's Objective, with warnings.

    Unknown keys and settings the theory does not model come back as warnings.

    Parameters
    ----------
    config : trl.GRPOConfig, dict or list of str
        The config, or a dict of its fields (e.g. loaded from JSON or YAML), or the ``--field value`` arguments of
        a ``trl grpo`` command line.
    trl_version : str, optional
        Whose defaults fill the fields a dict leaves out (default: the config's ``trl_version`` key,
        else the installed TRL, else :data:`PINNED_TRL`).
    completion_tokens : int, optional
        Answer length in tokens if known (1 for one-token answers); defaults to
        ``max_completion_length``.

    Returns
    -------
    TheoryMapping
        The objective, with every warning (also emitted as a :class:`~grpo_theory.TheoryWarning`).

    Raises
    ------
    InvalidInputError
        When a value has the wrong type or range (the message names it).
    NoStationaryPolicy
        When the config leaves nothing to model. ``beta = 0`` (TRL's default since 0.19) with no entropy bonus
        is read as the unregularised ``Objective(beta=0, ...)`` with a warning (finite-time predictions only).

    Examples
    --------
    >>> m = read_trl_config({"beta": 0.04, "max_completion_length": 1}, trl_version="1.16.0")
    >>> m.objective.regime, m.objective.estimator           # 1.16's default use_bias_correction_kl=True
    ('direct', 'k3_ratio')
    >>> read_trl_config({"beta": 0.04, "max_completion_length": 1}, trl_version="1.9.0").objective.regime
    'reverse'
    """
    if isinstance(config, (list, tuple)) and all(isinstance(t, str) for t in config):
        bools = frozenset(k for k, (kind, _, _) in TRL_FIELDS.items() if "bool" in str(kind))
        names = {t[2:].partition("=")[0].replace("-", "_") for t in config if t.startswith("--")}
        unread = frozenset(names - set(TRL_FIELDS) - {"config"})    # may stand alone, or take several values
        config = argparse_flags(config, "TRL arguments", boolean=bools | unread, several=unread)
        check_set(config, TRL_FIELDS, "TRL arguments")     # $NAME left by a script in a field read here
        if "config" in config:
            config = _with_config_file(config)
    _check_config(config, completion_tokens)
    warns: list[str] = []
    if trl_version is not None and (not isinstance(trl_version, str) or not trl_version.strip()):
        raise InvalidInputError(f"trl_version must be a version such as '1.16.0', got {trl_version!r}")
    version = trl_version or _get(config, "trl_version") or installed_trl_version()
    if version is None:
        version = PINNED_TRL
        warns.append(f"TRL version unknown (not given, not installed): defaults of TRL {PINNED_TRL} assumed")
    defaults, w = defaults_for(TRL_DEFAULTS, version, "TRL")
    warns += w
    if parse_version(version) > parse_version(_NEWEST_READ):
        warns.append(f"TRL {version} is newer than the newest release whose defaults were read ({_NEWEST_READ}): "
                     "fields left out take 1.16's defaults; check them")
    if isinstance(config, Mapping):
        known = _grpo_config_fields() | {"trl_version"} | TRL_LAUNCH_KEYS
        unknown = sorted(set(config) - known, key=str)
        if unknown and len(unknown) == len(config):     # nothing of a trainer's config: not one at all
            looks = (" (it looks like `grpo-theory explain --json`'s output; give the trainer's own config)"
                     if {"framework", "objective"} <= set(config) else "")
            raise InvalidInputError(f"TRL config: none of its keys {plain(unknown)[:200]} is a GRPOConfig field (nor "
                                    f"another `trl grpo` argument) of TRL 1.16.0{looks}")
        if unknown:
            hints = [f"{m[0]!r} for {k!r}" for k in unknown
                     if (m := difflib.get_close_matches(str(k), sorted(known), n=1, cutoff=0.8))]
            warns.append(f"unknown key(s) {unknown}: not GRPOConfig fields (nor other `trl grpo` arguments) of TRL "
                         "1.16.0; ignored" + (f" (did you mean {', '.join(hints)}?)" if hints else ""))
    G = _number(config, "num_generations", defaults["num_generations"], lo=2, integer=True)
    beta = _number(config, "beta", defaults["beta"], lo=0)
    scale = _get(config, "scale_rewards", defaults["scale_rewards"])
    scale = {True: "group", False: "none"}.get(scale, scale)
    if scale not in ("group", "batch", "none"):
        raise InvalidInputError(f"TRL config scale_rewards={scale!r}: expected 'group', 'batch', 'none' or a bool")
    bias_corr = _get(config, "use_bias_correction_kl", defaults["use_bias_correction_kl"])
    if bias_corr is None:
        bias_corr = False
        warns.append(f"use_bias_correction_kl does not exist in TRL {version} (added in 0.26.0): the KL term is "
                     "not multiplied by the ratio, i.e. the reverse (original GRPO) penalty")
    elif not isinstance(bias_corr, (bool, np.bool_)):
        raise InvalidInputError(f"TRL config use_bias_correction_kl={bias_corr!r}: expected a bool")
    elif isinstance(config, dict) and "use_bias_correction_kl" not in config:
        warns.append(f"use_bias_correction_kl not given: TRL {version}'s default ({bool(bias_corr)}) gives the "
                     f"{'direct' if bias_corr else 'reverse'} penalty")
    loss_type = _get(config, "loss_type", defaults["loss_type"])
    normalization = "shift" if scale == "none" else "scale"
    if scale == "batch":
        warns.append('scale_rewards="batch" divides by the batch std, not the group std: the theory models the '
                     "group std; the prediction uses the group std")
    iters = _number(config, "num_iterations", defaults["num_iterations"], lo=1, integer=True)
    if iters > 1:
        warns.append(f"num_iterations={iters}: several updates per batch make the policy off-policy and "
                     "activate clipping; the stationary points are the same, but with large steps training can "
                     "settle elsewhere (docs/dynamics.md, finding 4)")
    spg, gas = _get(config, "steps_per_generation"), _get(config, "gradient_accumulation_steps", 1)
    if spg is not None and gas is not None and spg > gas:
        warns.append(f"steps_per_generation={spg} > gradient_accumulation_steps={gas}: each generation batch "
                     "feeds several optimiser steps, so later steps are off-policy (importance-weighted and "
                     "clipped); the on-policy theory holds only in the small-step limit")
    temp = _number(config, "temperature", defaults["temperature"])
    if temp != 1.0:
        warns.append(f"temperature={temp}: groups are sampled from a tempered policy, not from pi; the theory "
                     "assumes sampling from pi itself")
    for name, neutral in (("top_p", 1.0), ("top_k", 0), ("min_p", None), ("repetition_penalty", 1.0)):
        v = _get(config, name, neutral)
        if v not in (neutral, None) and not (name == "top_k" and v in (-1, 0)):
            warns.append(f"{name}={v}: sampling is then not from pi_theta itself; the theory assumes it is")
    teq = float(_get(config, "top_entropy_quantile", 1.0))
    if teq < 1.0:
        warns.append(f"top_entropy_quantile={teq}: only high-entropy tokens enter the loss; not modelled")
    if _get(config, "mask_truncated_completions", False):
        warns.append("mask_truncated_completions=True: truncated answers leave the loss, which changes the "
                     "effective answer distribution; not modelled")
    if _get(config, "sync_ref_model", False):
        warns.append("sync_ref_model=True: the reference model moves during training; the theory assumes a "
                     "fixed pi_ref")
    if _get(config, "importance_sampling_level", "token") == "sequence":
        warns.append("importance_sampling_level='sequence' (GSPO): the ratio is per sequence, the KL per token; "
                     "on-policy the surrogate's gradient is the same, the KL term is modelled per token")
    length = completion_tokens if completion_tokens is not None else _get(config, "max_completion_length", None)
    if length is not None and int(length) > 1:
        warns.append(f"completions of up to {length} tokens: ratios and KL are per token; give the answer tree "
                     f"(Question(answers=...)) so that the token-level theory (level='token', "
                     f"loss_type={loss_type!r}) predicts the stationary policy")
    if loss_type not in LOSS_TYPES:
        if loss_type not in TRL_OTHER_LOSS_TYPES:
            known = sorted(set(TRL_OTHER_LOSS_TYPES) | {k for k in LOSS_TYPES if "-" not in k})
            guess = difflib.get_close_matches(str(loss_type), known, n=1)
            raise InvalidInputError(f"TRL config loss_type={loss_type!r} is not a TRL loss type (expected one of "
                                    f"{', '.join(known)})" + (f"; did you mean {guess[0]!r}?" if guess else ""))
        warns.append(f"loss_type={loss_type!r} changes the surrogate itself; the theory models the clipped GRPO "
                     "surrogate; the prediction uses loss_type='grpo'")
        loss_type = "grpo"
    delta = _get(config, "delta")
    if delta is not None and delta < 1:
        warns.append(f"delta={delta:g} < 1: the two-sided clip caps the ratio below its on-policy value 1, so tokens "
                     "with a positive advantage get no gradient; the theory's objective does not describe this run")
    elif _get(config, "epsilon_high", None) not in (None, _get(config, "epsilon", 0.2)) or delta:
        warns.append("asymmetric or two-sided clipping (epsilon_high/delta): inactive on-policy, so the "
                     "stationary points are unchanged")
    family_fields, family_warns = trl_family(lambda name, default=None: _get(config, name, default))  # issue 22
    warns += family_warns
    if family_fields.get("entropy_coef", 0.0) > 0 and not variants.lookup("aggregation", LOSS_TYPES[loss_type]).batch_normalised:
        warns.append(f"entropy_coef with loss_type={loss_type!r}: TRL averages the entropy over all the batch's "
                     "tokens whatever the loss type; the theory aggregates it like the loss type's other per-token "
                     "terms (the same on single-token answers)")
    if beta == 0.0 and family_fields.get("entropy_coef", 0.0) > 0:
        warns.append("beta=0 with entropy_coef > 0: the entropy bonus is the only regulariser (no KL penalty)")
    elif beta == 0.0:
        defaulted = _get(config, "beta", _UNSET) is _UNSET
        whose = "TRL's default since 0.19" if defaulted else "the config's beta"
        guessed = defaulted and trl_version is None and _get(config, "trl_version") is None
        warns.append(f"beta=0 ({whose}): no KL penalty and no entropy bonus, {UNREGULARISED_WARNING}"
                     + (f" (the defaults are TRL {version}'s; a run on TRL before 0.19 had beta = 0.04: give its "
                        "version, --trl-version)" if guessed else ""))
    obj = Objective(beta=beta, group_size=G, normalization=normalization, std_ddof=1, std_eps=TRL_STD_EPS,
                    level="token", loss_type=loss_type, kl_estimator="k3_ratio" if bias_corr else "k3",
                    **family_fields)
    return mapping_of(obj, warns, "TRL", version, temperature=temp)


# ------------------------------------------------------------------------------ the callback

@dataclass(frozen=True)
class Probe:
    """A probe question: its prompt text and its candidate answers (single tokens), with rewards.

    Every other token of the vocabulary is one more output, "other", with reward ``other_reward``
    (default: the lowest of ``rewards``, as for a verifier that rejects anything else).

    Attributes
    ----------
    prompt : str
        The prompt text.
    answers : tuple of str
        The candidate answers, each one token of the tokenizer.
    rewards : tuple of float
        The reward of each answer.
    other_reward : float or None
        The reward of every other token (None: the lowest of ``rewards``).

    Examples
    --------
    >>> Probe("Q0 ?", ("A", "B"), (1.0, 0.0)).question([0.3, 0.6, 0.1]).expected_reward.tolist()
    [1.0, 0.0, 0.0]
    """

    prompt: str
    answers: tuple
    rewards: tuple
    other_reward: float | None = None

    def __post_init__(self):
        if not isinstance(self.prompt, str):
            raise InvalidInputError(f"Probe prompt must be text, got {plain(self.prompt)}")
        answers = self.answers
        if isinstance(answers, (str, bytes)) or not isinstance(answers, (tuple, list)):
            raise InvalidInputError(f"Probe answers must be a tuple of one-token strings, got {plain(answers)}")
        bad = [a for a in answers if not isinstance(a, str) or not a]
        if not answers or bad:
            raise InvalidInputError(f"Probe answers must be non-empty one-token strings, got {plain(tuple(answers))}")
        repeated = sorted({a for a in answers if answers.count(a) > 1})
        if repeated:
            raise InvalidInputError(f"Probe answers must differ; {plain(repeated[0])} is given twice")
        rewards = float_array("Probe rewards", self.rewards)
        if rewards.shape != (len(answers),):
            raise InvalidInputError(f"Probe rewards must have one entry per answer ({len(answers)} answers), "
                                    f"got {plain(self.rewards)}")
        if self.other_reward is not None:
            number("Probe other_reward", self.other_reward)
        # the documented types, whatever container held them (a tensor, an array.array, a Series): the same values
        object.__setattr__(self, "answers", tuple(answers))
        object.__setattr__(self, "rewards", tuple(float(r) for r in rewards))

    @checked(probs=numbers(ndim=1))
    def question(self, probs: np.ndarray) -> Question:
        """The probe as a question over its answers plus "other", from full-vocabulary ``probs`` of them.

        Parameters
        ----------
        probs : array_like, shape (n_answers + 1,)
            The reference probabilities of the answers and of "other" (the rest of the vocabulary).

        Returns
        -------
        Question
            Rewarded as the probe says; "other" gets ``other_reward`` (default: the lowest reward).
        """
        if np.ndim(probs) != 1 or len(probs) != len(self.answers) + 1:
            raise InvalidInputError(f"probs must hold one probability per answer and one for 'other' "
                                    f"({len(self.answers) + 1}), got {plain(probs)}")
        other = self.other_reward if self.other_reward is not None else min(self.rewards)
        return Question(probs, rewards=list(self.rewards) + [other], labels=list(self.answers) + ["<other>"])


def next_token_probs(model, tokenizer, prompts: list) -> np.ndarray:
    """Full-vocabulary next-token distribution after each prompt (needs torch).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal language model.
    tokenizer : transformers.PreTrainedTokenizerBase
    prompts : list of str

    Returns
    -------
    numpy.ndarray, shape (n_prompts, V)
        Softmax of the last position's logits, in double precision.
    """
    import torch

    out = []
    device = next(model.parameters()).device
    with torch.no_grad():
        for p in prompts:
            ids = tokenizer(p, return_tensors="pt", add_special_tokens=False)["input_ids"].to(device)
            out.append(torch.softmax(model(input_ids=ids).logits[0, -1].double(), -1).cpu().numpy())
    return np.array(out)


def _probe_probs(model, tokenizer, probes) -> list:
    """pi(answer | prompt) for each probe's answers, then the rest of the vocabulary as "other"."""
    full = next_token_probs(model, tokenizer, [pr.prompt for pr in probes])
    out = []
    for row, pr in zip(full, probes):
        p = row[[tokenizer.convert_tokens_to_ids(a) for a in pr.answers]]
        p = np.append(p, max(0.0, 1.0 - p.sum()))
        out.append(p / p.sum())                                 # the sum is 1 up to rounding
    return out


def _check_tracking(probes, tokenizer, every) -> None:
    """What :func:`make_tracking_callback` checks before training starts: ``every`` a whole number >= 1, a non-empty
    list of :class:`Probe`, and a tokenizer that knows every probe answer as one token."""
    integer("every", every, low=1)
    if not isinstance(probes, (list, tuple)) or not probes or not all(isinstance(p, Probe) for p in probes):
        raise InvalidInputError(f"probes must be a non-empty list of Probe, got {plain(probes)}")
    convert = getattr(tokenizer, "convert_tokens_to_ids", None)
    if not callable(convert):
        raise InvalidInputError(f"tokenizer must be the run's tokenizer (with convert_tokens_to_ids), got "
                                f"{type(tokenizer).__name__}")
    unk = getattr(tokenizer, "unk_token_id", None)
    unknown = [a for p in probes for a in p.answers if convert(a) is None or (unk is not None and convert(a) == unk)]
    if unknown:
        raise InvalidInputError(f"probe answers must each be one token of the tokenizer; not tokens: {unknown[:5]}")


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

    Parameters
    ----------
    probes : sequence of Probe
        The probe questions.
    tokenizer : transformers.PreTrainedTokenizerBase
        The run's tokenizer (each probe answer must be one of its tokens).
    config : trl.GRPOConfig or dict
        The run's config, read with :func:`read_trl_config` (one-token answers).
    every : int, default 10
        Log every ``every`` optimizer steps.
    output_dir : str, optional
        Where the CSV goes (default: the trainer's ``output_dir``).
    figure : bool, default True
        Draw ``stationary_tracking.png`` at the end (:func:`draw_tracking_figure`).

    Returns
    -------
    transformers.TrainerCallback
        Pass it in ``callbacks=[...]`` of ``trl.GRPOTrainer``.

    Raises
    ------
    NoStationaryPolicy
        When the config leaves no stationary policy to track (e.g. ``beta = 0`` with no entropy bonus).
    """
    import csv
    from pathlib import Path

    from transformers import TrainerCallback

    mapping = read_trl_config(config, completion_tokens=1)
    require_regularised(mapping.objective, "make_tracking_callback")      # it tracks the stationary policy
    _check_tracking(probes, tokenizer, every)

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
            self.predicted = [stationary_policy(pr.question(ref), mapping.objective).pi
                              for pr, ref in zip(probes, self.reference)]
            with self.path.open("w", newline="") as fh:
                csv.writer(fh).writerow(["step", "probe", "pi_ref_best", "predicted_best", "measured_best"])
            self._log(state.global_step, self.reference)

        def _log(self, step, probs):
            with self.path.open("a", newline="") as fh:
                w = csv.writer(fh)
                for i, (pr, p) in enumerate(zip(probes, probs)):
                    best = np.append(np.asarray(pr.rewards) == max(pr.rewards), False)
                    w.writerow([step, i, float(self.reference[i][best].sum()),
                                float(self.predicted[i][best].sum()), float(p[best].sum())])

        def on_step_end(self, args, state, control, model=None, **kw):
            if self._main(state) and state.global_step % every == 0:
                self._log(state.global_step, _probe_probs(model, tokenizer, probes))

        def on_train_end(self, args, state, control, model=None, **kw):
            if not self._main(state):
                return
            self._log(state.global_step, _probe_probs(model, tokenizer, probes))
            if figure:
                draw_tracking_figure(self.path)

    return StationaryTrackingCallback()


def draw_tracking_figure(csv_path, window: float = 0.3):
    """Predicted against measured (mean over the final ``window`` of logged steps), next to the CSV.

    Parameters
    ----------
    csv_path : str or pathlib.Path
        A ``stationary_tracking.csv`` written by :func:`make_tracking_callback`.
    window : float, default 0.3
        The final fraction of the logged steps averaged as "measured".

    Returns
    -------
    pathlib.Path
        The PNG written beside the CSV (``stationary_tracking.png``).
    """
    from pathlib import Path

    import matplotlib
    import pandas as pd

    matplotlib.use("Agg", force=False)
    from .. import plotting  # imports matplotlib (optional): only when a figure is drawn

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
