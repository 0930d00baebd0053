"""verl's GRPO, seen by the theory: ``read_verl_config(config)``.

The config is data: a nested mapping shaped like verl's ``ppo_trainer.yaml`` (e.g. the resolved
Hydra config, or the overrides of a run script nested by their dots), or the path of such a YAML
file. Nothing of verl is imported. Keys left out take verl's defaults from :data:`VERL_DEFAULTS`,
read from ``verl/trainer/config/_generated_ppo_trainer.yaml``, ``verl/trainer/ppo/core_algos.py``
(``compute_grpo_outcome_advantage``, ``kl_penalty``) and ``verl/trainer/ppo/ray_trainer.py``
(``apply_kl_penalty``) at verl-project/verl 1dda039b9 (version file ``0.10.0.dev``); see
docs/conventions.md. What verl does, in the note's terms:

* ``algorithm.adv_estimator="grpo"``: group size ``actor_rollout_ref.rollout.n``; advantages
  ``(r - mean)/(torch.std + 1e-6)`` (ddof 1, eps 1e-6), or ``r - mean`` with
  ``algorithm.norm_adv_by_std_in_grpo=False``;
* ``actor_rollout_ref.actor.use_kl_loss``: the estimator ``kl_loss_type`` (default ``low_var_kl``, k3
  with ``-lr`` clipped to +-20 and the value to +-10) in the loss with weight ``kl_loss_coef``
  (default 0.001), aggregated per token like the policy loss (``loss_agg_mode``, default ``token-mean``);
  a ``+`` suffix (``k3+``) keeps the value and takes the gradient of k2;
* ``algorithm.use_kl_in_reward``: the estimator ``algorithm.kl_penalty`` (default ``kl`` = k1), summed
  over the answer's tokens, times ``algorithm.kl_ctrl.kl_coef`` (default 0.001), subtracted from the
  reward *before* group normalisation.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from .._io import read_yaml
from .._validate import check_fields, read_text
from ..problem import LOSS_TYPES, MAX_GROUP_SIZE, InvalidInputError, Objective
from ._shell import script_commands
from .cmdline import check_set, detached_arguments, hydra_overrides, looks_like_command, script_tokens
from .family import verl_family
from .mapping import UNREGULARISED_WARNING, TheoryMapping, mapping_of, names_a_file, unwrap_logged_config

__all__ = ["read_verl_config", "VERL_DEFAULTS", "VERL_ESTIMATORS"]

VERL_VERSION = "0.10.0.dev (verl-project/verl 1dda039b9)"
#: The defaults the theory reads, by dotted key.
VERL_DEFAULTS = {
    "algorithm.adv_estimator": "gae",
    "algorithm.norm_adv_by_std_in_grpo": True,
    "algorithm.use_kl_in_reward": False,
    "algorithm.kl_penalty": "kl",
    "algorithm.kl_ctrl.type": "fixed",
    "algorithm.kl_ctrl.kl_coef": 0.001,
    "actor_rollout_ref.rollout.n": 1,
    "actor_rollout_ref.rollout.temperature": 1.0,
    "actor_rollout_ref.rollout.top_p": 1.0,
    "actor_rollout_ref.rollout.top_k": -1,
    "actor_rollout_ref.actor.use_kl_loss": False,
    "actor_rollout_ref.actor.kl_loss_coef": 0.001,
    "actor_rollout_ref.actor.kl_loss_type": "low_var_kl",
    "actor_rollout_ref.actor.loss_agg_mode": "token-mean",
    "actor_rollout_ref.actor.ppo_epochs": 1,
    "actor_rollout_ref.actor.entropy_coeff": 0.0,
    "algorithm.filter_groups.enable": False,
    "actor_rollout_ref.actor.policy_loss.loss_mode": "vanilla",
}
#: verl's ``kl_penalty`` names -> (estimator, log-ratio clamp, value clamp). ``low_var_kl``/``k3`` clip.
VERL_ESTIMATORS = {"kl": ("k1", None, None), "k1": ("k1", None, None), "abs": ("abs", None, None),
                   "mse": ("k2", None, None), "k2": ("k2", None, None),
                   "low_var_kl": ("k3", 20.0, 10.0), "k3": ("k3", 20.0, 10.0)}
#: GRPO's advantage epsilon in compute_grpo_outcome_advantage.
VERL_STD_EPS = 1e-6
#: Sections whose keys are checked against verl_config_keys.json (the rest of a config is not read).
_CHECKED_SECTIONS = ("algorithm", "actor_rollout_ref")


@functools.lru_cache(maxsize=1)
def _key_table() -> dict:
    return json.loads(resources.files(__package__).joinpath("verl_config_keys.json").read_text(encoding="utf-8"))


def _known_keys() -> frozenset:
    """The keys of verl's config: those of the version read, and of the megatron config and a later version (known,
    not read)."""
    table = _key_table()
    return frozenset(table["keys"]) | frozenset(table.get("other_versions_keys", ()))


def _free_form(key: str) -> bool:
    """Whether ``key`` lies under a node whose keys are the user's own (``override_transformer_config``, ...)."""
    return any(key.startswith(node + ".") for node in _key_table().get("free_form", ()))


def _flatten(d: Mapping, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping):
            out.update(_flatten(v, key))
        else:
            out[key] = v
    return out


#: verl's top-level sections (a dotted token starting with one is an override, ``=value`` or not; a top-level key
#: outside them is warned about as unknown). Read from ``verl/trainer/config/_generated_ppo_trainer.yaml`` of
#: volcengine/verl at commit 035682ed7 (``data`` holds ``train_batch_size``; ``global_profiler``, ``ray_kwargs``)
#: and ``ppo_trainer.yaml`` at 008db456b (``ray_init``, before ``ray_kwargs``). Only the keys of
#: :data:`_CHECKED_SECTIONS` are checked one by one (verl_config_keys.json).
_SECTIONS = ("algorithm", "actor_rollout_ref", "data", "trainer", "critic", "reward_model", "custom_reward_function",
             "global_profiler", "ray_kwargs", "ray_init", "transfer_queue", "reward_manager")
# transfer_queue, reward_manager: the top-level sections of _generated_ppo_trainer.yaml at volcengine/verl b178a3cd5


def _check_sections(flat: dict) -> None:
    """A section (a key with keys under it in verl's config, e.g. ``algorithm``) given a plain value is refused:
    ``algorithm: 5`` would drop every setting of the section silently."""
    sections = {k.rsplit(".", i)[0] for k in _known_keys() for i in range(1, k.count(".") + 1)}
    # only where the section holds a setting read here: verl's own _generated_ppo_trainer.yaml gives a section an
    # interpolation (profiler.tool_config: ${oc.select:...}), which the reader need not resolve
    bad = sorted(k for k in flat if k in sections and any(f.startswith(k + ".") for f in VERL_FIELDS))
    if bad:
        raise InvalidInputError(f"verl config: {bad[0]} = {flat[bad[0]]!r} is a section of verl's config; "
                                "expected a mapping of its keys")


def _load(config) -> dict:
    if isinstance(config, str) and "=" in config and ("\n" in config or " " in config.strip()) \
            and not names_a_file(config):
        return _script(config, "verl command line")
    if isinstance(config, (list, tuple)) and all(isinstance(t, str) for t in config):
        return hydra_overrides(list(config), "verl overrides", sections=_SECTIONS, read=tuple(VERL_FIELDS))
    if isinstance(config, (str, Path)):
        path = Path(config)
        text = read_text(path, "verl config", expected="a YAML file shaped like verl's ppo_trainer.yaml, or a "
                                                        "run script of Hydra overrides")
        if path.suffix.lower() in (".sh", ".bash", ".txt", ".cmd") or (
                path.suffix.lower() not in (".yaml", ".yml") and looks_like_command(text)):
            source = f"verl script {str(path)!r}"
            return _script(text, source)
        config = read_yaml(config, "verl config", "a YAML file shaped like verl's ppo_trainer.yaml",
                           omegaconf_floats=True)          # verl loads it with OmegaConf: 1e-3 is a float
        config = unwrap_logged_config(config)             # a run's config.yaml as W&B logs it
        if isinstance(config, list) and config and all(isinstance(t, str) for t in config):
            source = f"verl overrides {str(path)!r}"       # Hydra's .hydra/overrides.yaml: the run's overrides
            return hydra_overrides(config, source, sections=_SECTIONS, read=tuple(VERL_FIELDS))
        if not isinstance(config, Mapping):
            raise InvalidInputError(f"verl config {str(path)!r} holds "
                                    f"{'nothing' if config is None else type(config).__name__}; expected a YAML "
                                    "mapping shaped like verl's ppo_trainer.yaml")
    if not isinstance(config, Mapping):
        raise InvalidInputError(f"a verl config must be a nested mapping or a YAML path, got {type(config).__name__}")
    flat = _flatten(config)
    _check_sections(flat)
    # dotted keys at the top level (run-script overrides) are accepted as they are
    return flat


def _script(text: str, source: str) -> dict:
    """A run script's or command line's overrides, with the trainer it runs where that is not verl's main_ppo (a
    recipe's ``-m recipe.dapo.main_dapo``, an SFT trainer) kept under :data:`_ENTRY` for a warning."""
    flat = _overrides(script_tokens(text, source, marker="main_ppo"), source)
    # the command with the most overrides is the trainer's (not a data preparation step before it)
    commands = script_commands(text, source)
    tokens = max((toks for toks, _op in commands), default=[],
                 key=lambda toks: sum("=" in t and not t.startswith("-") for t in toks))
    trainer = next((c for c, (toks, _op) in enumerate(commands) if toks is tokens), -1)
    detached = detached_arguments(commands, trainer)
    if detached:
        flat[_DETACHED] = detached
    entry = next((t for i, t in enumerate(tokens) if (i and tokens[i - 1] in ("-m", "--module")) or
                  (t.endswith(".py") and "=" not in t)), None)
    if entry is not None and entry.replace("/", ".").removesuffix(".py") != "verl.trainer.main_ppo":
        flat[_ENTRY] = entry
    return flat


#: Where :func:`_script` keeps the trainer a script runs when it is not ``verl.trainer.main_ppo``, and the overrides
#: that a line break cut off its command (:func:`~grpo_theory.integrations.cmdline.detached_arguments`).
_ENTRY = "hydra.trainer_entry"
_DETACHED = "hydra.detached_arguments"


def _overrides(tokens: list, source: str) -> dict:
    """A script's Hydra overrides, refusing a key read here that holds a shell variable the script does not set.
    The config a ``--config-name`` names is kept (under :data:`_CONFIG_NAME`) for a warning: it is not read."""
    flat = hydra_overrides(tokens, source, sections=_SECTIONS, read=tuple(VERL_FIELDS))
    check_set(flat, VERL_FIELDS, source)
    for i, tok in enumerate(tokens):
        flag, eq, value = tok.partition("=")
        if flag in ("--config-name", "-cn"):
            flat[_CONFIG_NAME] = value if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
    return flat


#: Where :func:`_overrides` keeps a command's ``--config-name`` (Hydra's own node: not a setting of verl's).
_CONFIG_NAME = "hydra.config_name"
#: verl's own configs whose defaults for the settings read here are ppo_trainer.yaml's.
_VERL_CONFIGS = ("ppo_trainer", "ppo_megatron_trainer")


#: Every key the reader reads: (kind, low, high); a bound in a list is exclusive. Checked once, all
#: together, in :func:`_check_config`.
VERL_FIELDS = {
    "algorithm.adv_estimator": ("str", None, None),
    "algorithm.norm_adv_by_std_in_grpo": ("bool", None, None),
    "algorithm.use_kl_in_reward": ("bool", None, None),
    "algorithm.kl_penalty": ("str", None, None),
    "algorithm.kl_ctrl.type": ("str", None, None),
    "algorithm.kl_ctrl.kl_coef": ("float", 0, None),
    "algorithm.filter_groups.enable": ("bool|none", None, None),
    "actor_rollout_ref.rollout.n": ("int", 1, MAX_GROUP_SIZE),
    "actor_rollout_ref.rollout.temperature": ("float", [0], None),
    "actor_rollout_ref.rollout.top_p": ("float", [0], 1),
    "actor_rollout_ref.rollout.top_k": ("int", -1, None),
    "actor_rollout_ref.actor.use_kl_loss": ("bool", None, None),
    "actor_rollout_ref.actor.kl_loss_coef": ("float", 0, None),
    "actor_rollout_ref.actor.kl_loss_type": ("str", None, None),
    "actor_rollout_ref.actor.loss_agg_mode": ("str", None, None),
    "actor_rollout_ref.actor.ppo_epochs": ("int", 1, None),
    "actor_rollout_ref.actor.ppo_mini_batch_size": ("int|none", 1, None),
    "actor_rollout_ref.actor.policy_loss.loss_mode": ("str", None, None),
    "data.train_batch_size": ("int|none", 1, None),
}


#: Hydra's own top-level nodes: the defaults list (composition) and the ``hydra:`` runtime settings (search path,
#: run folder); verl's ppo_trainer.yaml starts with a defaults list, so neither is an unknown section.
_HYDRA_NODES = ("defaults", "hydra")


def _unknown_key_warnings(flat: dict, known: frozenset) -> list[str]:
    """Warnings for keys verl does not have, each with the closest key it does have: a misspelt top-level
    section (``actr_rollout_ref``) drops every setting under it, so it is named with what it was likely meant to be."""
    import difflib

    out = []
    tops = sorted({k.split(".")[0] for k in known} | set(_SECTIONS))
    bad_tops = sorted({k.split(".")[0] for k in flat} - set(tops) - set(_HYDRA_NODES))
    cut = flat.get(_DETACHED)
    if cut:
        read = [t for t in cut if t.lstrip("+").partition("=")[0] in VERL_FIELDS]
        out.append(f"the trainer command ends before {cut[0]!r}: in bash a comment line, an empty line or a space after "
                   f"a line's final backslash ends a continued command, so its {len(cut)} override(s) from there on are "
                   "a command of their own that verl does not get (bash then fails on it); they are not read"
                   + (f", among them {', '.join(read)}" if read else "")
                   + ": remove that line or the space to give them to verl")
    entry = flat.get(_ENTRY)
    if entry is not None:
        out.append(f"the script runs {entry}, not verl.trainer.main_ppo: its settings are read as main_ppo reads them "
                   "(ppo_trainer.yaml's defaults, GRPO's advantage and losses); what that trainer or its own config "
                   "changes is not read" + ("; an SFT trainer has no GRPO objective at all" if "sft" in entry else ""))
    name = flat.get(_CONFIG_NAME)
    if name is not None and str(name).strip("'\"").removesuffix(".yaml") not in _VERL_CONFIGS:
        out.append(f"--config-name={name}: that config file is not read (only the command line's overrides are), so "
                   "every setting it holds and the command line leaves out takes verl's ppo_trainer.yaml default; "
                   "explain the YAML itself to read its settings")
    composed = flat.get("defaults")
    if composed is not None and (not isinstance(composed, list) or any(d != "_self_" for d in composed)):
        out.append("the Hydra defaults list is not composed: only the settings written in this file are read, and "
                   "every other key takes verl's ppo_trainer.yaml default")
    for top in bad_tops:
        under = sorted(k for k in flat if k.split(".")[0] == top)
        guess = difflib.get_close_matches(top, tops, n=1, cutoff=0.6)
        read = [k for k in under if guess and f"{guess[0]}{k[len(top):]}" in VERL_FIELDS]
        out.append(f"unknown top-level key {top!r} (not a section of verl's ppo_trainer.yaml, {VERL_VERSION})"
                   + (f"; did you mean {guess[0]!r}?" if guess else "")
                   + f" Its {len(under)} setting(s) are ignored"
                   + (f", so {', '.join(f'{guess[0]}{k[len(top):]}' for k in read)} take verl's defaults" if read else ""))
    unknown = sorted(k for k in flat if k not in known and k.split(".")[0] in _CHECKED_SECTIONS and not _free_form(k))
    for k in unknown:
        guess = _close_key(k)
        out.append(f"unknown key {k!r}: not in verl's ppo_trainer.yaml ({VERL_VERSION}); ignored"
                   + (f" (did you mean {guess[0]!r}?)" if guess else ""))
    return out


@functools.lru_cache(maxsize=4096)
def _close_key(key: str) -> list:
    """verl's key closest to an unknown one (difflib, cutoff 0.8), as a list of at most one: the same key is looked up
    once (a recipe's megatron keys recur across scripts)."""
    import difflib

    return difflib.get_close_matches(key, sorted(_known_keys()), n=1, cutoff=0.8)


def _check_config(flat: dict) -> None:
    for key in VERL_FIELDS:
        if isinstance(flat.get(key), str) and "${" in flat[key]:
            flat[key] = _resolved(flat, key)
    check_fields(flat, VERL_FIELDS, "verl config", error=InvalidInputError)


_INTERPOLATION = re.compile(r"\$\{(?:oc\.select:)?([A-Za-z_][A-Za-z0-9_.]*)(?:,([^{}]*))?\}")


def _resolved(flat: dict, key: str, depth: int = 0):
    """A read setting given as an OmegaConf interpolation (``${algorithm.kl_ctrl.kl_coef}``,
    ``${oc.select:key,default}``), resolved as OmegaConf resolves it when verl runs: the other key's value in the
    config, or verl's default where the config leaves that key out. ``${oc.env:NAME}`` and other resolvers depend on
    what the run sees and are refused, naming them."""
    value = flat[key]
    m = _INTERPOLATION.fullmatch(value.strip())
    env = re.fullmatch(r"\$\{oc\.env:([^,}]*)(?:,([^}]*))?\}", value.strip())
    if env:
        raise InvalidInputError(f"verl config: {key} = {value!r} is read from the environment variable "
                                f"{env.group(1).strip()} when verl runs" + (f" ({env.group(2).strip()} where it is "
                                                                             "unset)" if env.group(2) else "")
                                + "; the reader cannot see that environment: write the value")
    if m is None or depth > 20:
        raise InvalidInputError(f"verl config: {key} = {value!r} is an OmegaConf interpolation the reader does not "
                                "resolve (it resolves ${other.key} and ${oc.select:other.key,default} only): write "
                                "the value")
    target, default = m.group(1), m.group(2)
    if target in flat:
        if isinstance(flat[target], str) and "${" in flat[target]:
            return _resolved(flat, target, depth + 1)
        return flat[target]
    if target in VERL_DEFAULTS:
        return VERL_DEFAULTS[target]
    if default is not None and value.strip().startswith("${oc.select:"):
        return hydra_overrides([f"x={default.strip()}"], "verl config")["x"]
    raise InvalidInputError(f"verl config: {key} = {value!r} refers to {target}, which the config does not set and "
                            "whose verl default the reader does not know: write the value")


def _estimator(name, where: str) -> tuple:
    if not isinstance(name, str):
        raise InvalidInputError(f"verl {where}={name!r}: expected one of {sorted(VERL_ESTIMATORS)} "
                                "(optionally with '+')")
    plus = name.endswith("+") and name[:-1] not in ("mse", "k2")
    base = name[:-1] if name.endswith("+") else name
    if base == "full":
        raise InvalidInputError(f"verl {where}='full' is not implemented in verl itself (NotImplementedError)")
    if base not in VERL_ESTIMATORS:
        raise InvalidInputError(f"verl {where}={name!r}: expected one of {sorted(VERL_ESTIMATORS)} (optionally "
                                "with '+')")
    est, L, V = VERL_ESTIMATORS[base]
    return ("k3_plus" if plus else est), L, V


def read_verl_config(config) -> TheoryMapping:
    """Map a verl config (nested mapping or YAML path) onto the theory's Objective, with warnings.

    Parameters
    ----------
    config : mapping, str, pathlib.Path or list of str
        A nested mapping shaped like verl's ``ppo_trainer.yaml`` (dotted keys at the top level are
        accepted too), or the path of such a YAML file; or a run script (``.sh``) or command line
        (``python3 -m verl.trainer.main_ppo a.b=c ...``) of Hydra overrides, or a list of ``a.b=c`` overrides
        (:mod:`grpo_theory.integrations.cmdline`). Keys left out take :data:`VERL_DEFAULTS`, those of the verl
        version named in :data:`VERL_VERSION`.

    Returns
    -------
    TheoryMapping
        The objective and the warnings, as for :func:`~grpo_theory.integrations.trl.read_trl_config`.

    Raises
    ------
    InvalidInputError
        When the config is neither a mapping nor a YAML path, or a value has the wrong type or range.
    NoStationaryPolicy
        When there is nothing to model: an advantage estimator other than GRPO's (verl's default ``gae``). No
        KL term and no entropy bonus is read as the unregularised ``Objective(beta=0, ...)`` with a warning.

    Examples
    --------
    >>> import warnings
    >>> cfg = {"algorithm": {"adv_estimator": "grpo"},
    ...        "actor_rollout_ref": {"rollout": {"n": 5}, "actor": {"use_kl_loss": True}}}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     obj = read_verl_config(cfg).objective
    >>> obj.group_size, obj.estimator, obj.kl_log_ratio_clamp, obj.kl_value_clamp, obj.beta   # low_var_kl
    (5, 'k3', 20.0, 10.0, 0.001)
    """
    flat = _load(config)
    known = _known_keys()
    unknown_warns = _unknown_key_warnings(flat, known)
    with _noting_sections(unknown_warns):     # no frame of its own: the warnings' stacklevel stays the caller's
        return _read_flat(flat, unknown_warns)


@contextlib.contextmanager
def _noting_sections(unknown_warns: list):
    """An InvalidInputError raised inside, re-raised with the misspelt sections named: a misspelt section
    (``actr_rollout_ref``) explains many errors (``rollout.n`` = 1, its default)."""
    try:
        yield
    except InvalidInputError as exc:
        tops = [w for w in unknown_warns if w.startswith(("unknown top-level key", "the trainer command ends")) or (
            w.startswith("unknown key") and any(f"did you mean {k!r}" in w for k in VERL_FIELDS))]
        if tops:
            raise type(exc)(f"{exc}. Note: {'; '.join(tops)}") from None
        raise


def _read_flat(flat: dict, unknown_warns: list) -> TheoryMapping:
    """:func:`read_verl_config` on the flattened config, the unknown-key warnings given."""
    _check_config(flat)
    warns: list[str] = list(unknown_warns)

    def get(key):
        return flat.get(key, VERL_DEFAULTS[key])

    # the estimator, tie filtering and entropy bonus (issue 22): grpo_theory.integrations.family
    family_fields, family_warns = verl_family(
        get, bool(get("algorithm.use_kl_in_reward")) and not get("actor_rollout_ref.actor.use_kl_loss"))
    warns += family_warns
    if family_fields is None:
        # why there is nothing to predict first, then the keys not read
        first = [w for w in warns if w.startswith("the script runs")] + family_warns
        return mapping_of(None, first + [w for w in warns if w not in first], "verl", VERL_VERSION, stacklevel=4)
    n = get("actor_rollout_ref.rollout.n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise InvalidInputError(f"verl actor_rollout_ref.rollout.n={n!r}: GRPO needs an integer >= 2 "
                                "(verl's default is 1)")
    norm = "scale" if get("algorithm.norm_adv_by_std_in_grpo") else "shift"
    loss_agg = get("actor_rollout_ref.actor.loss_agg_mode")
    if loss_agg not in LOSS_TYPES:
        raise InvalidInputError(f"verl actor_rollout_ref.actor.loss_agg_mode={loss_agg!r}: expected one of "
                                f"{sorted(k for k in LOSS_TYPES if '-' in k)}")
    in_loss = bool(get("actor_rollout_ref.actor.use_kl_loss"))
    in_reward = bool(get("algorithm.use_kl_in_reward"))
    kl = {}
    if in_loss and in_reward:
        warns.append("both use_kl_loss and use_kl_in_reward are on: the theory models one KL term; the loss term "
                     "is modelled and the reward term ignored")
    _estimator(get("algorithm.kl_penalty"), "algorithm.kl_penalty")     # a bad name is refused even where unused
    if in_loss:
        est, L, V = _estimator(get("actor_rollout_ref.actor.kl_loss_type"), "actor_rollout_ref.actor.kl_loss_type")
        beta = float(get("actor_rollout_ref.actor.kl_loss_coef"))
        kl = dict(kl_estimator=est, kl_placement="loss", kl_log_ratio_clamp=L, kl_value_clamp=V)
        if est == "k1":
            warns.append("kl_loss_type='kl' (k1) as a loss has expected gradient 0: it regularises nothing")
    elif in_reward:
        est, L, V = _estimator(get("algorithm.kl_penalty"), "algorithm.kl_penalty")
        est = {"k3_plus": "k3"}.get(est, est)        # the value is detached in the reward: '+' changes nothing
        beta = float(get("algorithm.kl_ctrl.kl_coef"))
        kl = dict(kl_estimator=est, kl_placement="reward", kl_log_ratio_clamp=L, kl_value_clamp=V)
        if get("algorithm.kl_ctrl.type") != "fixed":
            warns.append(f"algorithm.kl_ctrl.type={get('algorithm.kl_ctrl.type')!r}: the coefficient adapts during "
                         "training; the prediction uses its initial value kl_coef")
    else:
        beta = 0.0
    temp = get("actor_rollout_ref.rollout.temperature")
    if temp != 1.0:
        warns.append(f"actor_rollout_ref.rollout.temperature={temp}: groups are not sampled from pi itself")
    for key, neutral in (("actor_rollout_ref.rollout.top_p", 1.0), ("actor_rollout_ref.rollout.top_k", -1)):
        if get(key) != neutral and not (key.endswith("top_k") and get(key) == 0):
            warns.append(f"{key}={get(key)}: sampling is then not from pi_theta itself; the theory assumes it is")
    epochs = get("actor_rollout_ref.actor.ppo_epochs")
    if epochs > 1:
        warns.append(f"actor_rollout_ref.actor.ppo_epochs={epochs}: several passes per batch are off-policy")
    mini, batch = flat.get("actor_rollout_ref.actor.ppo_mini_batch_size"), flat.get("data.train_batch_size")
    if isinstance(mini, int) and isinstance(batch, int) and mini < batch:
        warns.append(f"ppo_mini_batch_size={mini} < data.train_batch_size={batch}: later mini-batches of a step are "
                     "off-policy (importance-weighted and clipped); the theory holds in the small-step limit")
    if beta == 0.0 and family_fields.get("entropy_coef", 0.0) > 0:
        warns.append("no KL term but actor.entropy_coeff > 0: the entropy bonus is the only regulariser")
        kl = {}                     # a zero coefficient: where the KL would have gone does not matter
    elif beta == 0.0:
        why = ("actor_rollout_ref.actor.kl_loss_coef=0 with use_kl_loss on" if in_loss else
               "algorithm.kl_ctrl.kl_coef=0 with use_kl_in_reward on" if in_reward else
               "use_kl_loss and use_kl_in_reward both off")
        warns.append(f"no KL term ({why}) and no entropy bonus: {UNREGULARISED_WARNING}")
        kl = {}                     # a zero coefficient: where the KL would have gone does not matter
    obj = Objective(beta=beta, group_size=n, normalization=norm, std_ddof=1, std_eps=VERL_STD_EPS, level="token",
                    loss_type=loss_agg, **kl, **family_fields)
    return mapping_of(obj, warns, "verl", VERL_VERSION, stacklevel=4, temperature=temp)
