"""The GRPO-family switches of TRL, verl and OpenRLHF, mapped onto the Objective's fields.

Each function takes the reader's own lookup ``get(name, default=None)`` (a field of the config, dotted
names for nested fields) and returns the Objective keyword arguments
(``advantage``, ``pass_k``, ``filter_ties``, ``entropy_coef``, ``importance_level``) with the warnings for
what stays unmodelled; the readers merge them into the Objective they build. Kept apart from the readers'
type/range validation on purpose. Sources: TRL 1.16.0 ``trl/trainer/grpo_trainer.py`` / ``grpo_config.py``
(``entropy_coef``, ``use_adaptive_entropy``, ``importance_sampling_level``); verl ``core_algos.py``
(``AdvantageEstimator``: ``grpo``, ``rloo``, ``reinforce_plus_plus_baseline``, ``grpo_passk``, ...),
``algorithm.filter_groups``, ``actor.entropy_coeff``; OpenRLHF 0.9-0.11 ``--advantage_estimator``,
``--dynamic_filtering``, ``--entropy_loss_coef`` (default None: no bonus).
"""

from __future__ import annotations

import math

from .. import variants
from .._checks import checked, flag, function
from ..problem import InvalidInputError

__all__ = ["trl_family", "verl_family", "openrlhf_family", "VERL_ADVANTAGES", "OPENRLHF_ADVANTAGES"]

#: verl ``algorithm.adv_estimator`` -> Objective fields (None: known, not modelled).
VERL_ADVANTAGES = {
    "grpo": {}, "grpo_vectorized": {},
    "rloo": {"advantage": "rloo"}, "rloo_vectorized": {"advantage": "rloo"},
    "reinforce_plus_plus_baseline": {"advantage": "reinforce_pp"},
    # verl's grpo_passk gives only the best member (r_max - r_second)/std: not the analytic pass@k advantage
    "grpo_passk": None,
    "gae": None, "reinforce_plus_plus": None, "remax": None, "opo": None, "gpg": None,
}
#: verl's policy losses (``@register_policy_loss`` in verl/trainer/ppo/core_algos.py, volcengine/verl b178a3cd5):
#: ``vanilla`` is the clipped GRPO surrogate, ``gspo`` its per-answer ratio; the others change the loss.
VERL_LOSS_MODES = ("vanilla", "gspo", "sapo", "gpg", "clip_cov", "kl_cov", "geo_mean", "cispo", "bypass_mode")
#: OpenRLHF ``advantage_estimator`` -> Objective fields (None: known, not modelled).
OPENRLHF_ADVANTAGES = {
    "group_norm": {}, "dr_grpo": {"normalization": "shift"}, "rloo": {"advantage": "rloo"},
    "reinforce_baseline": {"advantage": "reinforce_pp"}, "gae": None, "reinforce": None,
}


def _coef(name: str, value, framework: str) -> float:
    try:
        c = 0.0 if value is None else float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{framework} {name}={value!r}: expected a number >= 0") from None
    if not math.isfinite(c) or c < 0:
        raise InvalidInputError(f"{framework} {name}={value!r}: expected a finite number >= 0 (an entropy bonus)")
    return c


def _entropy_coef(fields: dict, name: str, value, framework: str) -> float:
    """The entropy coefficient checked by :func:`_coef`, set in ``fields`` when it is not 0."""
    c = _coef(name, value, framework)
    if c:
        fields["entropy_coef"] = c
    return c


def _estimator_fields(table: dict, adv, field: str, no_theory: str, whitening: str) -> tuple[dict | None, list]:
    """The Objective fields of advantage estimator ``adv`` in ``table`` (a copy), or None with the warning
    ``no_theory`` for a known estimator the theory does not model; an unknown one names ``field``. A
    batch-whitened estimator (``reinforce_pp``) gets a warning ending in ``whitening``."""
    if adv not in table:
        raise InvalidInputError(f"{field}={adv!r}: expected one of {sorted(table)}")
    if table[adv] is None:
        return None, [no_theory]
    warns = []
    if variants.lookup("advantage", table[adv].get("advantage", "group")).batch_whitened:
        warns.append(f"{adv} whitens over the whole batch: modelled as a large batch of this question's groups "
                     + whitening)
    return dict(table[adv]), warns


@checked(get=function())
def trl_family(get) -> tuple[dict, list]:
    """TRL: ``entropy_coef`` (1.9+; adaptive mode not modelled), ``importance_sampling_level``.

    ``num_iterations`` and ``epsilon_high`` need no field: at a stationary point ``pi_old = pi``, so they leave
    the stationary set unchanged (the reader warns about their effect on the path).

    Parameters
    ----------
    get : callable
        The reader's lookup (module doc).

    Returns
    -------
    fields : dict
        The Objective fields of the GRPO family (``entropy_coef``, ``importance_level``).
    warnings : list of str
        What the theory does not model (e.g. an adaptive entropy coefficient).

    Raises
    ------
    InvalidInputError
        A negative or non-numeric ``entropy_coef``, or an unknown ``importance_sampling_level``.

    Examples
    --------
    >>> trl_family({"entropy_coef": 0.01}.get)
    ({'entropy_coef': 0.01, 'importance_level': 'token'}, [])
    """
    warns: list[str] = []
    fields: dict = {}
    c = _entropy_coef(fields, "entropy_coef", get("entropy_coef", 0.0), "TRL")
    if get("use_adaptive_entropy", False):
        warns.append("use_adaptive_entropy=True: the entropy coefficient adapts during training; the prediction "
                     f"uses entropy_coef={c:g}")
    level = get("importance_sampling_level", "token")
    if level not in variants.names("importance_level"):
        raise InvalidInputError(f"TRL importance_sampling_level={level!r}: expected 'token' or 'sequence'")
    fields["importance_level"] = level
    return fields, warns


@checked(get=function(), kl_in_reward=flag)
def verl_family(get, kl_in_reward: bool) -> tuple[dict | None, list]:
    """verl: ``algorithm.adv_estimator``, ``algorithm.filter_groups.enable``, ``actor.entropy_coeff``.

    Parameters
    ----------
    get : callable
        The lookup into the verl config, as for :func:`trl_family`.
    kl_in_reward : bool
        Whether the KL is in the reward (``algorithm.use_kl_in_reward``): then a group filter looks at the
        shaped reward and is not modelled.

    Returns
    -------
    fields : dict or None
        The Objective fields (``advantage``, ``normalization``, ``filter_ties``, ``entropy_coef``, ...); None
        for an estimator the theory does not model.
    warnings : list of str
        What is modelled approximately or not at all.

    Raises
    ------
    InvalidInputError
        An unknown ``algorithm.adv_estimator`` or a bad entropy coefficient.

    Examples
    --------
    >>> fields, warns = verl_family({"algorithm.adv_estimator": "gae"}.get, kl_in_reward=False)
    >>> fields is None, "not modelled" in warns[0]
    (True, True)
    """
    adv = get("algorithm.adv_estimator")
    fields, warns = _estimator_fields(
        VERL_ADVANTAGES, adv, "verl algorithm.adv_estimator",
        f"algorithm.adv_estimator={adv!r} is not modelled (no group baseline the theory covers"
        + (", e.g. 'gae' is PPO with a critic" if adv == "gae" else "") + "): the theory does not apply",
        "(a batch mixing questions has a pooled std instead)")
    if fields is None:
        return None, warns
    if get("algorithm.filter_groups.enable"):
        if kl_in_reward:
            warns.append("algorithm.filter_groups.enable with use_kl_in_reward: the filter looks at the shaped "
                         "reward; not modelled (filtering ignored)")
        else:
            fields["filter_ties"] = True
            warns.append("algorithm.filter_groups.enable (DAPO dynamic sampling): tied groups dropped, modelled "
                         "per question (filter_ties=True); the metric is taken to be the reward, and the "
                         "reweighting of questions in a mixed batch is not modelled")
    _entropy_coef(fields, "actor_rollout_ref.actor.entropy_coeff", get("actor_rollout_ref.actor.entropy_coeff"),
                  "verl")
    mode = get("actor_rollout_ref.actor.policy_loss.loss_mode")
    if mode == "gspo":                  # one ratio per answer: on-policy, GSPO's gradient (Objective.importance_level)
        fields["importance_level"] = "sequence"
    elif mode not in (None, "vanilla"):
        known = mode in VERL_LOSS_MODES
        warns.append(f"actor_rollout_ref.actor.policy_loss.loss_mode={mode!r} "
                     + ("changes the policy loss itself" if known else
                        f"is none of verl's policy losses ({', '.join(VERL_LOSS_MODES)}; one registered by the run?)")
                     + ": not modelled; the prediction uses the vanilla clipped surrogate")
    return fields, warns


@checked(get=function())
def openrlhf_family(get) -> tuple[dict | None, list]:
    """OpenRLHF: ``advantage_estimator``, ``dynamic_filtering``, ``entropy_loss_coef``.

    Parameters
    ----------
    get : callable
        As for :func:`trl_family`; flags under their ``algo.`` names.

    Returns
    -------
    fields : dict or None
        The Objective fields; None for an estimator without a group baseline (``"gae"``).
    warnings : list of str
        What is modelled approximately or not at all.

    Raises
    ------
    InvalidInputError
        An unknown advantage estimator, or an entropy coefficient that is not a number >= 0.

    Examples
    --------
    >>> openrlhf_family({"algo.advantage.estimator": "gae"}.get)[0] is None
    True
    """
    adv = get("algo.advantage.estimator")
    fields, warns = _estimator_fields(
        OPENRLHF_ADVANTAGES, adv, "OpenRLHF advantage_estimator",
        f"advantage estimator {adv!r} has no group baseline (OpenRLHF's default is 'gae', PPO with a critic): "
        "the theory does not apply", "(advantage='reinforce_pp')")
    if fields is None:
        return None, warns
    if get("algo.dynamic_filtering_enable"):
        fields["filter_ties"] = True
        warns.append("dynamic filtering (DAPO): groups whose rewards all tie are dropped, modelled per question "
                     "(filter_ties=True); a custom dynamic_filtering_reward_range other than excluding all-0 and "
                     "all-1 groups is not modelled")
    _entropy_coef(fields, "entropy_loss_coef", get("entropy_loss_coef"), "OpenRLHF")
    return fields, warns
