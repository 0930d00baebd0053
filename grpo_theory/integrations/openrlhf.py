"""OpenRLHF's group-normalised REINFORCE (its GRPO), seen by the theory: ``read_openrlhf_config(args)``.

``args`` is data: a mapping with OpenRLHF's flag names as keys, in the old flat style
(``advantage_estimator``, ``n_samples_per_prompt``, ``init_kl_coef``, ``kl_estimator``, ``use_kl_loss``,
up to 0.9.x) or the new dotted style of 0.10+ (``algo.advantage.estimator``,
``rollout.n_samples_per_prompt``, ``algo.kl.init_coef``, ``algo.kl.estimator``, ``algo.kl.use_loss``),
or an argv list in either style (``["--advantage_estimator", "group_norm", ...]``). Nothing of
OpenRLHF is imported. Defaults and behaviour read from OpenRLHF 0.11.0 (``openrlhf/cli/train_ppo_ray.py``,
``openrlhf/models/utils.py``: ``compute_approx_kl``, ``compute_reward``,
``openrlhf/trainer/ppo_utils/experience_maker.py``) and 0.9.10 (the old flag names, same defaults);
see docs/conventions.md. In the note's terms:

* ``group_norm``: ``(r - mean)/(torch.std + 1e-9)`` (ddof 1, eps 1e-9); ``dr_grpo`` and
  ``reinforce_baseline``: ``r - mean`` (the latter then whitened over the batch: a warning);
  ``rloo``: ``r - mean of the others = G/(G-1) (r - mean)`` (``advantage="rloo"``: shift-only at beta (G-1)/G);
* every estimator's value is clipped to +-10 (``compute_approx_kl``);
* without ``use_kl_loss`` (the default) the value, times ``init_kl_coef`` (default 0.01), is added to the
  per-token reward *after* group normalisation and the return is the sum to the answer's end
  (gamma = 1): ``kl_placement="advantage"``; with it, the estimator is a loss term;
* the loss is a token mean over the batch (``aggregate_loss``): ``loss_type="token-mean"``.
"""

from __future__ import annotations

import difflib
import functools
import json
import shlex
from collections.abc import Mapping, Sequence
from importlib import resources

from .. import variants
from .._validate import check_fields
from ..kl import effective_penalty
from ..problem import MAX_GROUP_SIZE, InvalidInputError, Objective
from .cmdline import check_set, trainer_arguments
from .family import openrlhf_family
from .mapping import UNREGULARISED_WARNING, TheoryMapping, mapping_of

__all__ = ["read_openrlhf_config", "OPENRLHF_DEFAULTS"]

OPENRLHF_VERSION = "0.11.0"
#: New (0.10+) dotted name -> old (<= 0.9.x) flat name, for the flags the theory reads.
_OLD_NAMES = {
    "algo.advantage.estimator": "advantage_estimator",
    "rollout.n_samples_per_prompt": "n_samples_per_prompt",
    "algo.kl.init_coef": "init_kl_coef",
    "algo.kl.estimator": "kl_estimator",
    "algo.kl.use_loss": "use_kl_loss",
    "algo.kl.target": "kl_target",
    "rollout.temperature": "temperature",
    "rollout.top_p": "top_p",
    "train.max_epochs": "max_epochs",
    "algo.dynamic_filtering_enable": "dynamic_filtering",
    "algo.advantage.gamma": "gamma",
    "algo.advantage.no_std_norm": "no_advantage_std_norm",
    "actor.policy_loss_type": "policy_loss_type",
}
#: 0.10+ names read under their old name here (the entropy bonus keeps the name the family reads).
_RENAMED = {"actor.entropy_coef": "entropy_loss_coef"}
#: Defaults (identical in 0.9.10 and 0.11.0), by new name.
OPENRLHF_DEFAULTS = {
    "algo.advantage.estimator": "gae", "rollout.n_samples_per_prompt": 1, "algo.kl.init_coef": 0.01,
    "algo.kl.estimator": "k1", "algo.kl.use_loss": False, "algo.kl.target": None, "rollout.temperature": 1.0,
    "rollout.top_p": 1.0, "train.max_epochs": 1, "algo.dynamic_filtering_enable": False,
    "algo.advantage.gamma": 1.0, "entropy_loss_coef": None, "algo.advantage.no_std_norm": False,
    "actor.policy_loss_type": "ppo",
}
#: store_true: no value on the command line
_FLAGS = {"algo.kl.use_loss", "algo.dynamic_filtering_enable", "algo.advantage.no_std_norm"}
_NEW_NAME = {old: new for new, old in _OLD_NAMES.items()}
#: Every flag name the reader knows, old (flat) and new (dotted) style.
_ALL_KNOWN = set(OPENRLHF_DEFAULTS) | set(_NEW_NAME) | set(_RENAMED)
OPENRLHF_STD_EPS = 1e-9
OPENRLHF_VALUE_CLAMP = 10.0


#: Every flag the reader reads (new names; after coercion from argv strings): (kind, low, high); a
#: bound in a list is exclusive. Checked once, all together, in :func:`read_openrlhf_config`.
OPENRLHF_FIELDS = {
    "algo.advantage.estimator": ("str", None, None),
    "rollout.n_samples_per_prompt": ("int", 1, MAX_GROUP_SIZE),
    "algo.kl.init_coef": ("float", 0, None),          # 0: no KL term; a negative coefficient rewards drift
    "algo.kl.estimator": ("str", None, None),
    "algo.kl.use_loss": ("bool", None, None),
    "algo.kl.target": ("float|none", 0, None),
    "rollout.temperature": ("float", [0], None),
    "rollout.top_p": ("float", [0], 1),
    "train.max_epochs": ("int", 1, None),
    "algo.dynamic_filtering_enable": ("bool", None, None),
    "algo.advantage.gamma": ("float", 0, 1),
    "entropy_loss_coef": ("float|none", 0, None),    # the entropy bonus (issue 22); None: no bonus
    "algo.advantage.no_std_norm": ("bool", None, None),
    "actor.policy_loss_type": (("ppo", "gspo"), None, None),
}


def _from_argv(argv: Sequence[str]) -> dict:
    flags = _FLAGS | {_OLD_NAMES[k] for k in _FLAGS}
    out, i = {}, 0
    while i < len(argv):
        tok = argv[i]
        if not tok.startswith("--"):
            raise InvalidInputError(f"OpenRLHF argv: expected a --flag at position {i}, got {tok!r}")
        name = tok[2:]
        if "=" not in name and len(name.split()) > 1:
            raise InvalidInputError(f"OpenRLHF argv: the element {tok!r} at position {i} holds a flag and a value; "
                                    f"give them as two elements ({', '.join(map(repr, tok.split(None, 1)))}) or as "
                                    f"--{name.split()[0]}=VALUE")
        if "=" in name:
            name, value = name.split("=", 1)
        elif name in flags:
            value = True
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                raise InvalidInputError(f"OpenRLHF argv: --{name} is a switch and takes no value (give --{name} for "
                                        f"true, leave it out for false); got {argv[i + 1]!r} after it")
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            i += 1
            value = argv[i]
            if name.replace("-", "_") not in _ALL_KNOWN:     # a flag not read here may take several values
                more = []                                      # (--dynamic_filtering_reward_range 0 1: nargs=2)
                while i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                    i += 1
                    more.append(argv[i])
                value = [value, *more] if more else value
        elif name in _ALL_KNOWN and not isinstance(OPENRLHF_DEFAULTS.get(_NEW_NAME.get(name, name)), bool):
            raise InvalidInputError(f"OpenRLHF argv: --{name} has no value (expected --{name} VALUE)")
        else:
            value = True
        out[name] = value
        i += 1
    return out


#: Numeric flags whose default is None (unset): argv strings for them are read as numbers too.
_OPTIONAL_NUMBERS = {"algo.kl.target", "entropy_loss_coef"}


def _coerce(key: str, value):
    default = OPENRLHF_DEFAULTS[key]
    if isinstance(default, bool):
        if isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise InvalidInputError(f"OpenRLHF {key}={value!r}: expected bool (true, false, 1 or 0)")
            return value.lower() in ("true", "1")
        return value                         # checked (a bool, not 2 or a list) by OPENRLHF_FIELDS
    try:
        if isinstance(value, str) and (isinstance(default, (int, float)) or key in _OPTIONAL_NUMBERS):
            # argv gives strings; a mapping's numbers are checked as they are by OPENRLHF_FIELDS
            return int(value) if isinstance(default, int) else float(value)
    except (TypeError, ValueError):
        expected = "a number" if default is None else type(default).__name__
        raise InvalidInputError(f"OpenRLHF {key}={value!r}: expected {expected}") from None
    return value


@functools.lru_cache(maxsize=1)
def _openrlhf_flags() -> frozenset:
    """Every flag of ``openrlhf.cli.train_ppo_ray`` (0.7.5 to 0.11.0; openrlhf_flags.json), dashes as underscores."""
    text = resources.files(__package__).joinpath("openrlhf_flags.json").read_text(encoding="utf-8")
    return frozenset(json.loads(text)["flags"])


def _close_flag(name: str) -> str | None:
    """The flag the theory reads (old flat or new dotted name) closest to ``name``, if one is close (a typo)."""
    import difflib

    flags = sorted(_ALL_KNOWN)
    guess = difflib.get_close_matches(name.replace("-", "_"), flags, n=1, cutoff=0.85)
    return guess[0] if guess else None


def read_openrlhf_config(args) -> TheoryMapping:
    """Map OpenRLHF's arguments (a mapping of flag names or an argv list) onto the theory's Objective.

    Parameters
    ----------
    args : mapping or sequence of str
        Flag names (old flat or new dotted style) to values, or an argv list in either style.
        Flags left out take :data:`OPENRLHF_DEFAULTS`.

    Returns
    -------
    TheoryMapping
        As :func:`~grpo_theory.integrations.trl.read_trl_config` returns it (warnings emitted too).

    Raises
    ------
    InvalidInputError
        When ``args`` is neither, an argv list is malformed, or a value has the wrong type.
    NoStationaryPolicy
        When there is nothing to model (an advantage estimator the theory does not model).
        ``init_kl_coef = 0`` with no entropy bonus is read as the unregularised ``Objective(beta=0, ...)`` with
        a warning.

    Examples
    --------
    >>> m = read_openrlhf_config(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8"])
    >>> m.objective.group_size, m.objective.estimator, m.objective.kl_placement, m.objective.beta
    (8, 'k1', 'advantage', 0.01)
    """
    from_argv = not isinstance(args, Mapping)
    if isinstance(args, Mapping):
        raw = dict(args)
        odd = [name for name in raw if not isinstance(name, str)]
        if odd:
            raise InvalidInputError(f"OpenRLHF args: a mapping's keys must be flag names (text, e.g. "
                                    f"'n_samples_per_prompt'), got {odd[0]!r} ({type(odd[0]).__name__})")
    elif isinstance(args, Sequence) and not isinstance(args, (str, bytes)):
        argv = [str(a) for a in args]
        if argv and not argv[0].startswith("--"):   # the whole command (python3 -m openrlhf.cli.train_ppo_ray ...)
            argv = trainer_arguments(shlex.join(argv), "OpenRLHF argv", ("openrlhf", "train_ppo")) or argv
        raw = _from_argv(argv)
        new = {**{v: k for k, v in _OLD_NAMES.items()}, **_RENAMED}
        read = [n for n in raw if new.get(n.replace("-", "_"), n) in OPENRLHF_DEFAULTS]
        check_set(raw, read, "OpenRLHF argv")           # $NAME left by a script in a flag read here
    else:
        raise InvalidInputError(f"OpenRLHF args must be a mapping of flags or an argv list, got {args!r}")
    warns: list[str] = []
    old_to_new = {**{v: k for k, v in _OLD_NAMES.items()}, **_RENAMED}
    values, given, ignored = {}, {}, {}
    for name, v in raw.items():
        key = name.replace("-", "_") if "." not in name else name
        key = old_to_new.get(key, key)
        if key in OPENRLHF_DEFAULTS:
            # argv is text; a mapping's values are taken as given: its text '1e-3' or 'false' is refused by the
            # table (expected float/bool, got str), as TRL's and verl's readers refuse them
            value = _coerce(key, v) if from_argv else v
            if key in values and values[key] != value:      # the old and the new name of one flag, disagreeing
                raise InvalidInputError(f"OpenRLHF args give {key} twice with different values: {given[key]}="
                                        f"{values[key]!r} and {name}={value!r}; give one (the new name is {key})")
            values[key] = value
            given[key] = name if name == key else f"{name} ({key})"      # messages name the user's spelling
        elif (name.replace("-", "_") if "." not in name else name) in _openrlhf_flags():
            continue                            # one of OpenRLHF's own flags (model, data, parallelism): not read
        else:
            guess = _close_flag(name)
            ignored[name] = guess
            near = guess or next(iter(difflib.get_close_matches(name.replace("-", "_"), sorted(_openrlhf_flags()),
                                                                n=1, cutoff=0.75)), None)
            warns.append(f"flag {name!r} is not a flag of OpenRLHF's train_ppo_ray (0.7.5 to {OPENRLHF_VERSION}); "
                         "ignored" + (f" (did you mean {near!r}?)" if near else ""))
    check_fields(values, OPENRLHF_FIELDS, "OpenRLHF args", error=InvalidInputError, shown=given)
    values = {k: int(v) if OPENRLHF_FIELDS[k][0] == "int" else v for k, v in values.items()}
    get = lambda key: values.get(key, OPENRLHF_DEFAULTS[key])            # noqa: E731 - a local lookup
    adv = get("algo.advantage.estimator")
    G = get("rollout.n_samples_per_prompt")
    # the estimator, dynamic filtering and entropy bonus (issue 22): grpo_theory.integrations.family
    family_fields, family_warns = openrlhf_family(get)
    warns += family_warns
    if family_fields is None:
        # why there is nothing to predict first, then the flags not read (a PPO script has dozens)
        return mapping_of(None, family_warns + [w for w in warns if w not in family_warns], "OpenRLHF",
                          OPENRLHF_VERSION)
    if G < 2:
        typo = [n for n, g in ignored.items() if g in ("n_samples_per_prompt", "rollout.n_samples_per_prompt")]
        raise InvalidInputError(f"OpenRLHF n_samples_per_prompt={G}: {adv} needs >= 2 (OpenRLHF's default is 1)"
                                + (f"; the config's {typo[0]!r} is not an OpenRLHF flag (a misspelling of "
                                   "n_samples_per_prompt?)" if typo and "rollout.n_samples_per_prompt" not in values
                                   else ""))
    beta = get("algo.kl.init_coef")
    norm = "scale" if adv == "group_norm" else "shift"   # rloo / reinforce_baseline: their own advantage field
    norm = family_fields.pop("normalization", norm)       # dr_grpo's shift is the family's field, given once
    est = get("algo.kl.estimator")
    if est not in ("k1", "k2", "k3"):
        raise InvalidInputError(f"OpenRLHF kl_estimator={est!r}: expected k1, k2 or k3")
    placement = "loss" if get("algo.kl.use_loss") else "advantage"
    if family_fields.get("filter_ties") and not variants.lookup("kl_placement", placement).in_loss:
        raise InvalidInputError(f"OpenRLHF {given.get('algo.dynamic_filtering_enable', 'dynamic_filtering')} with "
                                "the KL in the advantage (use_kl_loss off): dropping tied groups is modelled with the "
                                "KL as a loss term only; add use_kl_loss (--use_kl_loss) or drop dynamic filtering")
    if not variants.lookup("regime", effective_penalty(est, placement, None, None)).regularises:
        warns.append("kl_estimator='k1' with use_kl_loss: k1 as a loss has expected gradient 0; it regularises "
                     "nothing")
    if get("algo.kl.target") is not None:
        warns.append(f"kl_target={get('algo.kl.target')}: an adaptive KL coefficient; the prediction uses init_kl_coef")
    if get("rollout.temperature") != 1.0:
        warns.append(f"temperature={get('rollout.temperature')}: groups are not sampled from pi itself")
    if get("rollout.top_p") != 1.0:
        warns.append(f"top_p={get('rollout.top_p')}: sampling is then not from pi_theta itself")
    if get("train.max_epochs") > 1:
        warns.append(f"max_epochs={get('train.max_epochs')}: several passes per batch are off-policy")
    if beta <= 0 and family_fields.get("entropy_coef", 0.0) > 0:
        warns.append("init_kl_coef <= 0 with entropy_loss_coef > 0: the entropy bonus is the only regulariser")
        beta = 0.0
    elif beta <= 0:                             # 0: the field's range refuses a negative one
        warns.append(f"init_kl_coef=0: no KL term and no entropy bonus, {UNREGULARISED_WARNING}")
    if get("algo.advantage.no_std_norm"):
        flag = given["algo.advantage.no_std_norm"]
        if variants.lookup("advantage", family_fields.get("advantage", "group")).batch_whitened:
            # whitening without its division: the group's r - mean
            family_fields.pop("advantage")
            warns[:] = [w for w in warns if "whitens over the whole batch" not in w]
            warns.append(f"{flag}: {adv}'s advantages are r - group mean less the batch's token-mean advantage, not "
                         "divided by the batch std (openrlhf/trainer/ppo_utils/experience_maker.py): modelled as r - "
                         "mean (normalization='shift'); the batch mean is 0 for one-token answers with the KL as a "
                         "loss term and is not modelled otherwise")
        else:
            warns.append(f"{flag} has no effect with {adv} (OpenRLHF applies it to the batch whitening of gae, "
                         "reinforce and reinforce_baseline only); the group std still divides")
    if get("actor.policy_loss_type") == "gspo":                   # GSPO: one ratio per answer (openrlhf/models/loss.py)
        family_fields["importance_level"] = "sequence"
    if (equivalence := variants.lookup("advantage", family_fields.get("advantage", "group")).equivalence):
        warns.append(equivalence(G, beta))
    obj = Objective(beta=beta, group_size=G, normalization=norm, std_ddof=1, std_eps=OPENRLHF_STD_EPS,
                    level="token", loss_type="token-mean", kl_estimator=est, kl_placement=placement,
                    kl_value_clamp=OPENRLHF_VALUE_CLAMP, **family_fields)
    return mapping_of(obj, warns, "OpenRLHF", OPENRLHF_VERSION, temperature=get("rollout.temperature"))
