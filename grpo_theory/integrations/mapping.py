"""What a trainer config optimises, in the note's terms: the common part of the config readers.

Each reader (:func:`grpo_theory.integrations.trl.read_trl_config`,
:func:`~grpo_theory.integrations.verl.read_verl_config`,
:func:`~grpo_theory.integrations.openrlhf.read_openrlhf_config`) returns a :class:`TheoryMapping`:
the :class:`~grpo_theory.Objective` the config amounts to and a warning for every setting the theory
does not model (also emitted as a :class:`~grpo_theory.TheoryWarning`). A config with no KL term and no
entropy bonus (TRL's default ``beta = 0``) maps to the unregularised ``Objective(beta=0, ...)`` with the warning
:data:`UNREGULARISED_WARNING` (no stationary policy: finite-time predictions only); a config the theory does not
model (e.g. verl's ``gae``) raises :class:`~grpo_theory.NoStationaryPolicy` naming why.
:func:`explain` turns a mapping, and optionally a question, into the account that ``grpo-theory explain``
prints.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import warnings
from dataclasses import dataclass
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .. import kl
from .._checks import OBJECTIVE, QUESTION, arr, checked, instance, num, registered, text, texts, whole, checked_record
from .._laws import law
from .._io import read_yaml
from .._json import load_json
from .._validate import plain, read_text
from .cmdline import looks_like_command, script_tokens, trainer_arguments
from ..errors import NoStationaryPolicy, TheoryWarning
from ..problem import InvalidInputError, Objective, Question, require_regularised
from ..solvers import log_pooling, stationary_points, stationary_policy
from ..solvers.work import search_work_checked

__all__ = ["TheoryMapping", "explain", "parse_version", "defaults_for", "mapping_of", "load_config_file",
           "unwrap_logged_config"]

#: The readers' warning for a config with no KL term and no entropy bonus (after what made it so).
UNREGULARISED_WARNING = ("an unregularised objective with no stationary policy (the policy drifts to the best answers, "
                         "a vertex reached only in the limit): only finite-time predictions apply (grpo-theory "
                         "predict --measured AFTER, or --fit STEP MEAN_REWARD)")


@dataclass(frozen=True)
@checked_record
class TheoryMapping:
    """The theory's objective for a trainer config, with warnings, framework and version.

    ``str()`` gives the objective and one line per warning.

    Attributes
    ----------
    objective : Objective
        What the config optimises, in the note's terms.
    warnings : tuple of str
        Settings the theory does not model, defaults assumed, unknown keys.
    framework : str
        ``"TRL"``, ``"verl"`` or ``"OpenRLHF"``.
    version : str or None
        The framework version whose defaults were used (None: unknown).
    temperature : float or None
        The temperature training samples its groups at (None: not read).
    """

    objective: Objective
    warnings: tuple[str, ...]
    framework: str
    version: str | None
    temperature: float | None = None

    def __str__(self) -> str:
        head = self.objective.describe()
        return "\n".join([f"theory objective: {head} ({self.framework} {self.version or 'unknown'})"] +
                         [f"warning: {w}" for w in self.warnings])


def mapping_of(obj: Objective | None, warns: list, framework: str, version: str | None, *,
               stacklevel: int = 3, temperature: float | None = None) -> TheoryMapping:
    """A reader's result: each warning also emitted through ``warnings.warn`` as a :class:`TheoryWarning`.

    Parameters
    ----------
    obj : Objective or None
        The objective read; None where the config leaves nothing to predict.
    warns : list of str
        The reader's warnings (the reasons, when ``obj`` is None).
    framework : str
        The trainer's name, e.g. ``"trl"``, ``"verl"`` or ``"openrlhf"``.
    version : str or None
        The trainer's version the config was read for; None when unknown.
    stacklevel : int, default 3
        Of the warnings: 3 points at the caller of a reader that calls this directly.
    temperature : float, optional
        The config's sampling temperature of training (its default where not set).

    Returns
    -------
    TheoryMapping
        The objective, the warnings, the framework and its version.

    Raises
    ------
    NoStationaryPolicy
        When ``obj`` is None (no KL term, or an advantage the theory does not model), naming
        the reasons.
    InvalidInputError
        An argument of the wrong type (checked in the body: a wrapper would move the warnings' stack level).
    """
    for name, rule, value in (("obj", registered("Objective", none=True), obj), ("framework", text(), framework),
                              ("warns", texts(), warns), ("version", text(none=True), version),
                              ("stacklevel", whole(1, 1000), stacklevel),
                              ("temperature", num(0.0, low_open=True, none=True), temperature)):
        rule(name, value)
    if obj is None:
        raise NoStationaryPolicy(f"{framework} {version or '(version unknown)'}: no stationary policy to predict: "
                                 + "; ".join(warns))
    for w in warns:
        warnings.warn(f"{framework}: {w}", TheoryWarning, stacklevel=stacklevel)
    return TheoryMapping(obj, tuple(warns), framework, version, None if temperature is None else float(temperature))


def _version_table(name, value) -> None:
    """A rule (:mod:`grpo_theory._checks`): a non-empty list of ``(first_version, {key: default}, source)`` rows."""
    ok = isinstance(value, (list, tuple)) and len(value) > 0 and all(
        isinstance(r, (list, tuple)) and len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], Mapping)
        for r in value)
    if not ok:
        raise InvalidInputError(f"{name} must be a non-empty list of (first_version, {{key: default}}, source) rows, "
                                f"got {plain(value)[:80] if isinstance(value, (list, tuple)) else type(value).__name__}")
    firsts = [parse_version(r[0]) for r in value]
    late = next((i for i in range(1, len(firsts)) if firsts[i] < firsts[i - 1]), None)
    if late is not None:
        raise InvalidInputError(f"{name} must list its rows oldest first: {value[late][0]!r} comes after "
                                f"{value[late - 1][0]!r}")


#: A version as packages write them: up to four numbers (three read), pre-release / dev / post tags, a local part.
_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.\d+)?(?:[.-]?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)\d*)*"
                      r"(?:\+[0-9A-Za-z.]+)?", re.IGNORECASE)


@checked(v=text())
def parse_version(v: str) -> tuple:
    """``"1.16.0"`` -> ``(1, 16, 0)``; a leading ``v`` (PEP 440 allows it), a fourth number (``"1.2.3.4"``: below
    the patch level, where no framework default changes) and pre-release, dev, post and local suffixes (``.dev0``,
    ``rc1``, ``+cu118``) are dropped.

    Parameters
    ----------
    v : str
        A version string.

    Returns
    -------
    tuple of int
        Major, minor, patch (missing parts are 0).

    Raises
    ------
    InvalidInputError
        When ``v`` is not one to four dot-separated numbers with such a prefix or suffix (``'1..16'``, ``'-1.0.0'``,
        ``'1.2.3.4.5'``).

    Examples
    --------
    >>> parse_version("1.16.0"), parse_version("0.26.0.dev0"), parse_version("2"), parse_version("v1.2.3.4")
    ((1, 16, 0), (0, 26, 0), (2, 0, 0), (1, 2, 3))
    """
    m = _VERSION.fullmatch(v.strip())
    if m is None:
        raise InvalidInputError(f"version must look like '1.16.0' (up to four numbers, a pre-release or local "
                                f"suffix allowed), got {v[:80]!r}{'...' if len(v) > 80 else ''}")
    return tuple(int(p or 0) for p in m.groups())


@checked(table=_version_table, version=text(), framework=text())
def defaults_for(table, version: str, framework: str) -> tuple[dict, list]:
    """Fold a version table (rows ``(first_version, {key: default}, source)``, oldest first) up to ``version``.

    Parameters
    ----------
    table : sequence of tuple
        Rows ``(first_version, {key: default}, source)``, oldest first: each row's changes hold
        from its version on.
    version : str
        The version whose defaults are wanted.
    framework : str
        Its name, for the warning.

    Returns
    -------
    defaults : dict
        Every key's default at ``version``.
    warnings : list of str
        One warning when ``version`` is older than the table's first row.

    Examples
    --------
    >>> table = [("0.1.0", {"beta": 0.04, "eps": 1e-4}, "a"), ("0.19.0", {"beta": 0.0}, "b")]
    >>> defaults_for(table, "0.20.1", "TRL")
    ({'beta': 0.0, 'eps': 0.0001}, [])
    """
    v = parse_version(version)
    out, warns = {}, []
    if v < parse_version(table[0][0]):
        warns.append(f"{framework} {version} is older than the oldest version in the table ({table[0][0]}); "
                     f"its defaults are taken as {table[0][0]}'s")
    for first, changes, _source in table:
        if parse_version(first) <= v or not out:
            out.update(changes)
    return out, warns


def _role(obj: Objective) -> str:
    """The KL term in the note's words."""
    est, place = obj.estimator, obj.kl_placement
    where = obj.placement_variant.explanation
    clamps = []
    if obj.kl_log_ratio_clamp is not None:
        clamps.append(f"log-ratio clipped to +-{obj.kl_log_ratio_clamp:g}")
    if obj.kl_value_clamp is not None:
        clamps.append(f"value clipped to +-{obj.kl_value_clamp:g}")
    gradient = obj.regime_variant.gradient          # in words, from the registry (grpo_theory.variants)
    s = f"KL estimator {est}, {where}"
    if clamps:
        s += " (" + ", ".join(clamps) + ")"
    if obj.beta == 0:
        return s + "; weight beta = 0: no KL term at all"
    return s + f"; expected gradient: {gradient}"


@checked(mapping=instance(TheoryMapping, 'a TheoryMapping (from a reader)'), question=registered('Question', none=True))
def explain(mapping: TheoryMapping, question: Question | None = None) -> dict:
    """What the config optimises, as data: penalty and gradient, normalisation, ddof/eps, level,
    aggregation, warnings, and for ``question`` the stationary policy beside log pooling.

    Parameters
    ----------
    mapping : TheoryMapping
        A reader's result (:func:`~grpo_theory.integrations.trl.read_trl_config`,
        :func:`~grpo_theory.integrations.verl.read_verl_config`,
        :func:`~grpo_theory.integrations.openrlhf.read_openrlhf_config`).
    question : Question, optional
        A question to predict for (needs a reward law).

    Returns
    -------
    dict
        ``framework``, ``version``, ``warnings`` (plus one when a KL clamp is active at the
        predicted point) and ``objective`` (a dict: ``describe``, ``penalty``, ``kl`` in words,
        ``advantage``, ...); with ``question`` also ``question`` (a dict: ``stationary_policy``,
        ``stable``, ``collapse``, every ``stationary_points`` entry and ``log_pooling``; for an unregularised
        objective ``stationary_policy`` is None and ``reason`` says why).

    Examples
    --------
    >>> import warnings
    >>> from grpo_theory import Question
    >>> from grpo_theory.integrations.trl import read_trl_config
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = read_trl_config({"num_generations": 2, "beta": 0.5, "max_completion_length": 1,
    ...                          "use_bias_correction_kl": False, "scale_rewards": False}, trl_version="1.16.0")
    >>> info = explain(m, Question([0.2, 0.8], rewards=[1, 0]))
    >>> info["objective"]["regime"], [round(x, 4) for x in info["question"]["stationary_policy"]]
    ('reverse', [0.4472, 0.5528])
    """
    obj = mapping.objective
    out = dict(framework=mapping.framework, version=mapping.version, warnings=list(mapping.warnings), objective=None)
    norm = ("(r - mean r) / (std_{ddof} r + eps)" if obj.normalization_variant.scales else "r - mean r")
    est = obj.advantage_variant         # its formula; the normalisation's only where it uses one, else its description
    norm = est.formula or (norm if est.uses_normalization else est.description)
    out["objective"] = dict(
        describe=obj.describe(), beta=obj.beta, group_size=None if obj.is_large_group else obj.group_size,
        regime=obj.regime, kl=_role(obj), normalization=obj.normalization, advantage=norm,
        std_ddof=obj.std_ddof, std_eps=obj.std_eps, level=obj.level, loss_type=obj.loss_type,
        aggregation=obj.aggregation, kl_estimator=obj.estimator, kl_placement=obj.kl_placement,
        kl_log_ratio_clamp=obj.kl_log_ratio_clamp, kl_value_clamp=obj.kl_value_clamp,
        advantage_estimator=obj.advantage, pass_k=obj.pass_k, filter_ties=obj.filter_ties,
        entropy_coef=obj.entropy_coef, importance_level=obj.importance_level)
    if question is None:
        return out
    if not obj.regularised:                 # nothing stationary: the guard's words say why, and what applies
        try:
            require_regularised(obj, "explain")
        except NoStationaryPolicy as exc:
            out["question"] = dict(pi_ref=question.pi_ref.tolist(), rewards=question.expected_reward.tolist(),
                                   stationary_policy=None, reason=str(exc))
        return out
    search_work_checked(question, obj, caller="explain")        # up front: before the policy, not after it
    pol = stationary_policy(question, obj)
    pts = stationary_points(question, obj)
    lp = log_pooling(question.pi_ref, question.expected_reward, obj.beta)
    out["question"] = dict(pi_ref=question.pi_ref.tolist(), rewards=question.expected_reward.tolist(),
                           stationary_policy=pol.pi.tolist(), stable=pol.stable, collapse=bool(pol.boundary),
                           discontinuous=bool(pol.discontinuous), message=pol.message,
                           stationary_points=[dict(pi=p.pi.tolist(), stable=p.stable, boundary=p.boundary,
                                                   discontinuous=p.discontinuous) for p in pts],
                           log_pooling=lp.tolist())
    active = clamp_activity(question, obj, pol.pi)
    if active:
        out["warnings"].append(active)
    return out


@checked(question=QUESTION, obj=OBJECTIVE, pi=law(base=arr(ndim=1)))
def clamp_activity(question: Question, obj: Objective, pi: np.ndarray) -> str | None:
    """A warning when a clamp is active at ``pi`` (its gradient, or the value's dependence on pi, is off).

    Parameters
    ----------
    question : Question
        The question (its ``pi_ref``).
    obj : Objective
        The objective (its KL clamps).
    pi : numpy.ndarray, shape (K,)
        The predicted policy (a law over the question's outputs).

    Returns
    -------
    str or None
        The warning, naming the clipped outputs and their ``pi/pi_ref``; None when no clamp is active.
    """
    pi = np.asarray(pi, dtype=float)
    if pi.shape != question.pi_ref.shape:
        raise InvalidInputError(f"pi must hold one probability per output of the question ({question.n_outputs}), "
                                f"got {pi.size}: {plain(pi)[:80]}")
    if obj.kl_log_ratio_clamp is None and obj.kl_value_clamp is None:
        return None
    s = (pi > 0) & (question.pi_ref > 0)
    lr = np.full(pi.size, -math.inf)
    lr[s] = np.log(pi[s]) - np.log(question.pi_ref[s])
    raw = dataclasses.replace(obj, kl_log_ratio_clamp=None, kl_value_clamp=None)
    clipped = np.flatnonzero(~s & (question.pi_ref > 0))
    with np.errstate(invalid="ignore"):
        clipped = np.union1d(clipped, np.flatnonzero(s & (kl.flow_value(obj, lr) != kl.flow_value(raw, lr))))
    if clipped.size == 0:
        return None
    ratio = np.round(np.where(s, pi / np.where(question.pi_ref > 0, question.pi_ref, 1), 0), 6)
    return (f"a clamp is active at the predicted point for outputs {clipped.tolist()} (pi/pi_ref = "
            f"{ratio[clipped].tolist()}): there the KL term no longer restores them")


#: The keys W&B adds to a run's logged config.yaml besides the run's own.
_WANDB_KEYS = ("wandb_version", "_wandb")


def unwrap_logged_config(data):
    """A run's config as W&B logs it (``config.yaml`` of a run: each key ``{desc: ..., value: ...}`` beside
    ``wandb_version`` and ``_wandb``) as the config itself; anything else as it is.

    Parameters
    ----------
    data : object
        A parsed JSON or YAML document.

    Returns
    -------
    object
        ``{key: value}`` of the logged config, or ``data`` unchanged.

    Examples
    --------
    >>> unwrap_logged_config({"wandb_version": 1, "beta": {"desc": None, "value": 0.04}})
    {'beta': 0.04}
    """
    if not isinstance(data, Mapping) or not data:
        return data
    own = {k: v for k, v in data.items() if k not in _WANDB_KEYS}
    logged = bool(own) and all(isinstance(v, Mapping) and "value" in v and set(v) <= {"desc", "value"}
                               for v in own.values())
    if logged and (len(own) < len(data) or len(own) > 1):
        return {k: v["value"] for k, v in own.items()}
    return data


def names_a_file(text: str) -> bool:
    """Whether ``text`` is the path of an existing file (a reader's argument may be a path or a command line).

    Parameters
    ----------
    text : str
        A path or a command line.

    Returns
    -------
    bool
        True when ``text`` names an existing file; False otherwise, also for a string no path can be (too
        long, or with a NUL byte).
    """
    try:
        return Path(text).is_file()
    except (OSError, ValueError):           # a command line too long for a path, or with a NUL
        return False


#: Parts of a trainer's entry (its script or module) that pick it among a script's commands.
_ENTRY_HINTS = {"trl": ("grpo",), "openrlhf": ("openrlhf", "train_ppo")}


def command_config(framework: str, text: str, source: str) -> list | str:
    """A trainer command line or shell script as its reader takes it.

    Parameters
    ----------
    framework : {"trl", "verl", "openrlhf"}
        Whose command it is.
    text : str
        The script or command line (``python -m verl.trainer.main_ppo a.b=c ...``, ``trl grpo --beta 0.04 ...``).
    source : str
        For messages.

    Returns
    -------
    list or str
        For verl the text itself (``read_verl_config`` reads its Hydra overrides); otherwise the argv list from the
        first ``--flag`` on.

    Raises
    ------
    InvalidInputError
        No ``--flag`` argument in a TRL or OpenRLHF command.
    """
    if framework == "verl":
        return text
    # after the trainer's entry (trl grpo, train_grpo.py, -m openrlhf.cli.train_ppo_ray): a launcher's flags before
    # it (accelerate launch --config_file, ray job submit --address ... --, torchrun) are not the trainer's
    tokens = trainer_arguments(text, source, _ENTRY_HINTS.get(framework, ()))
    tokens = script_tokens(text, source) if tokens is None else tokens
    first = next((i for i, t in enumerate(tokens) if t.startswith("--")), len(tokens))
    if first == len(tokens):
        raise InvalidInputError(f"{source}: no --flag arguments found in the command line")
    return tokens[first:]                 # an argv list: the readers parse it


@checked(framework=text(), path=instance((str, os.PathLike), 'a file path'))
def load_config_file(framework: str, path) -> dict | list | str:
    """A trainer config file as its reader takes it: JSON for TRL and OpenRLHF, the path for verl.

    Parameters
    ----------
    framework : {"trl", "verl", "openrlhf"}
        Whose config it is.
    path : str or pathlib.Path
        The file; or, as a str that names no file and reads as a command, the command line itself
        (:func:`command_config`).

    Returns
    -------
    dict, list or str
        The parsed JSON or YAML (an object of fields); for a shell script or command line (``.sh``, ``.txt``,
        or text that reads as a command) the argv list of its ``--flag`` arguments; for verl the path itself as
        a string (``read_verl_config`` loads the YAML or the script's Hydra overrides).

    Raises
    ------
    InvalidInputError
        A missing file, or JSON that does not parse.
    """
    if isinstance(path, str) and not path.strip():          # Path("") would be the current folder
        raise InvalidInputError(f"config {path!r}: an empty path, naming no file (expected a config file or a command "
                                "line)")
    if isinstance(path, str) and looks_like_command(path) and not names_a_file(path):
        return command_config(framework, path, "config command line")     # the text itself, not a file
    path = Path(path)
    text = read_text(path, "config")            # exists, a file, size-limited, UTF-8 (the file named otherwise)
    source = f"config {str(path)!r}"
    if framework == "verl":
        return str(path)
    suffix = path.suffix.lower()
    if suffix in (".sh", ".bash", ".txt", ".cmd") or (suffix not in (".json", ".yaml", ".yml")
                                                       and looks_like_command(text)):
        return command_config(framework, text, source)
    if suffix in (".yaml", ".yml") or (suffix != ".json" and text.strip() and text.lstrip()[0] not in "{["):
        # a YAML file, or a file named without a suffix (a pipe: /dev/stdin, <(cmd)) that is no JSON object or list
        data = read_yaml(path, "config", "a YAML mapping of the trainer's fields")
    elif not text.strip():                              # JSON's own message: "Expecting value: line 1 column 1"
        raise InvalidInputError(f"{source} is empty; expected a JSON object of the trainer's fields")
    else:
        data = load_json(text, source)
    data = unwrap_logged_config(data)
    if not isinstance(data, (dict, list)):               # null, a number, a string: no fields at all
        shown = {type(None): "null (an empty document)", bool: "a boolean", str: "a string"}.get(
            type(data), f"a number ({data!r})" if isinstance(data, (int, float)) else type(data).__name__)
        raise InvalidInputError(f"{source} holds {shown}; expected an object of the trainer's fields"
                                + (" or an argv list of its flags" if framework == "openrlhf" else ""))
    if framework == "trl" and isinstance(data, list) and not all(isinstance(t, str) for t in data):
        raise InvalidInputError(f"{source} holds a list ({plain(data)[:80]}); expected an object of GRPOConfig "
                                "fields, or a list of `--field value` strings")
    return data
