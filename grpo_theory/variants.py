r"""The objective's variants as data: one registry entry per option of an :class:`~grpo_theory.problem.Objective`.

Every option a user can change -- the advantage estimator, the normalisation, the KL estimator, where the KL
is placed, what the KL fields amount to (the *regime*), the level and the importance level -- has one entry
here holding everything the package knows about it: a one-line description, its names in TRL, verl and
OpenRLHF, the factual properties the solvers ask (``entry.is_note_penalty``, ``entry.scales``, ...), and the
hooks that compute with it:

* an advantage estimator's exact expectation ``E_l(w) = E[A_1 | r_1 = v_l]`` (the engine's, see
  :func:`grpo_theory.preference.level_expectations`), its bound ``max |A_i|`` (what makes the two-class scan
  complete, :func:`grpo_theory.preference.max_abs_advantage`), whether the KL-in-reward drift is sharp at a
  tie for it, its sampled torch form (the trainer's, :func:`grpo_theory.training.loss.advantages_for`) and numpy form;
* a KL estimator's value and slope in the log-ratio ``lr = log(pi/pi_ref)`` (numpy, for :mod:`grpo_theory.kl`)
  and its torch value (the trainer's, :func:`grpo_theory.training.loss.kl_value`).

The rest of the package asks the entry (``obj.regime_variant.is_note_penalty``,
``obj.advantage_variant.bound(span, obj)``) and never compares an ``Objective`` field with a string;
``tests/test_variants.py`` greps the package for such comparisons.

Hooks are callables or ``"module:function"`` strings resolved on first use: the torch forms (the package imports
torch only in :mod:`grpo_theory.training`) and the group advantage's engine (in :mod:`grpo_theory.preference`,
above this module) are named that way; a user's entry passes functions.

Adding an advantage estimator
-----------------------------
Build an :class:`AdvantageEstimator` and :func:`register` it; ``Objective(advantage=name)`` then validates, the engine
computes its stationary points and the trainer samples it. The exact expectation is usually an enumeration over the
count vectors of the other ``G - 1`` rewards: give the per-count table to
:func:`grpo_theory.advantage_enumeration.enumerated_expectations` (``docs/architecture.md`` walks through an example,
which ``tests/test_variants.py`` runs through the engine and the trainer).

Examples
--------
>>> from grpo_theory import Objective
>>> obj = Objective(beta=0.1, group_size=8, advantage="rloo")
>>> obj.advantage_variant.bound(1.0, obj), obj.advantage_variant.names["verl"]
(1.0, ('rloo', 'rloo_vectorized'))
>>> Objective(beta=0.1, kl_estimator="k1", kl_placement="advantage").regime_variant.is_note_penalty
True
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

import numpy as np

from ._checks import checked, dataclass_fields, flag, one_of, text
from . import advantage as _adv
from ._numerics import optimize
from .errors import InvalidInputError

__all__ = ["Variant", "AdvantageEstimator", "Normalization", "KLEstimator", "KLPlacement", "Regime", "Level",
           "ImportanceLevel", "Aggregation", "register", "unregister", "lookup", "note_penalty", "names", "entries",
           "KINDS"]


_RESOLVED: dict[str, Callable] = {}
_HOOKS: dict[type, list[str]] = {}         # an entry class's hook fields (Variant.hook)


def _resolve(hook):
    """A hook as a callable: itself, or the function a ``"module:function"`` string names (imported on first use)."""
    if isinstance(hook, str):
        if hook not in _RESOLVED:
            module, _, name = hook.partition(":")
            _RESOLVED[hook] = getattr(importlib.import_module(module), name)
        return _RESOLVED[hook]
    return hook


@dataclass(frozen=True, kw_only=True)
class Variant:
    """What every entry holds: its name (the ``Objective`` field's value), a one-line description and its names
    in the trainers (``{"trl": (...), "verl": (...), "openrlhf": (...)}``; empty where a trainer has none)."""

    name: str
    description: str
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def hook(self, attribute: str) -> Callable:
        """The hook ``attribute`` as a callable (a ``"module:function"`` string is imported on first use).

        Parameters
        ----------
        attribute : str
            The hook's field, e.g. ``"expectations"`` or ``"torch_advantages"``.

        Raises
        ------
        InvalidInputError
            Where ``attribute`` names no hook of the entry or the entry has none (a user's entry without a torch form).
        """
        hooks = _HOOKS.get(type(self)) or _HOOKS.setdefault(type(self), [  # once per class: hook() is hot
            f.name for f in fields(self) if "Callable" in str(f.type)])
        if attribute not in hooks:     # a typo or a non-hook field is named, not met with AttributeError
            raise InvalidInputError(f"{type(self).__name__} has no hook {attribute!r}; its hooks: {', '.join(hooks)}")
        value = getattr(self, attribute)
        if value is None:
            raise InvalidInputError(f"{type(self).__name__} {self.name!r} has no {attribute}; register it with one")
        return _resolve(value)


@dataclass(frozen=True, kw_only=True)
class AdvantageEstimator(Variant):
    """An advantage estimator (``Objective.advantage``).

    Attributes
    ----------
    expectations : callable or str
        ``(v, log_w, obj, *, part, max_count_vectors) -> E`` with ``E[..., l] = E[A_1 | r_1 = v_l]`` (or its
        positive/negative part, ``part``) for the level law ``w = exp(log_w)`` of one draw from ``pi``: exact.
    bound : callable
        ``(span, obj) -> float``, an upper bound on ``|A_i|`` for rewards spanning ``span`` (``math.inf`` where
        unbounded). The two-class scan brackets every root with it: a bound too small loses roots.
    sharp_at_ties : callable
        ``obj -> bool``: the advantage is divided by a std with no epsilon, so with the KL in the reward the
        drift stays O(1) arbitrarily close to a tie of shaped rewards and jumps there.
    torch_advantages : callable or str
        ``(rewards, obj) -> A``: the trainer's sampled advantages of ``rewards`` (n_q, groups, G), in torch (lazy).
    sampled : callable, str or None
        ``(r, obj) -> A``: the advantages of sampled groups' rewards ``r`` (..., G) -> (..., G) in numpy, each
        group's from its own rewards (Monte Carlo: ``monte_carlo.sampled_advantages``); None where one group
        does not determine them (a batch's whitening) or no numpy form is registered.
    uses_normalization : bool
        ``normalization``, ``std_ddof`` and the epsilons apply to it.
    needs_pass_k : bool
        It takes ``Objective.pass_k``.
    is_note_advantage : bool
        The note's Eq. 2 (with ``normalization``): the paths built on its form (certificates, a preference
        matrix at ``G = 2``, sampled groups in ``dynamics.grpo_steps``, the batch-token-mean tree) accept it.
    batch_whitened : bool
        Whitened over a batch of groups (the per-question theory takes the batch as this question's groups).
    formula : str or None
        The advantage it forms, in words (``grpo-theory explain``); None: the normalisation's formula where
        ``uses_normalization``, else ``description``.
    equivalence : callable or None
        ``(G, beta) -> str``: a sentence relating its stationary points to another variant's (readers warn with it).
    """

    expectations: Callable | str
    bound: Callable
    sharp_at_ties: Callable = lambda obj: False
    torch_advantages: Callable | str | None = None
    sampled: Callable | str | None = None
    uses_normalization: bool = False
    needs_pass_k: bool = False
    is_note_advantage: bool = False
    batch_whitened: bool = False
    formula: str | None = None
    equivalence: Callable | None = None


@dataclass(frozen=True, kw_only=True)
class Normalization(Variant):
    """A normalisation of the group advantage (``Objective.normalization``).

    Attributes
    ----------
    scales : bool
        The centred rewards are divided by the group's std (Eq. 2); else only centred (``A_i = r_i - mean r``).
    """

    scales: bool


@dataclass(frozen=True, kw_only=True)
class KLEstimator(Variant):
    """A KL estimator (``Objective.kl_estimator``), as a function of ``lr = log(pi/pi_ref)``.

    Attributes
    ----------
    value, slope : callable
        numpy ``lr -> value`` and ``lr -> d value/d lr`` (unclamped).
    torch_value : callable
        ``x -> value`` on a torch tensor ``x = log(pi_ref/pi)`` (verl's ``kl = ref_logprob - logprob``), tensor
        methods only (no torch import).
    value_edges : callable
        ``V -> (lo, hi)``: the log-ratios where ``|value| = V`` (one each side of 0), for a value clamp.
    ratio_weighted : bool
        The loss multiplies the value by the differentiable ratio ``pi/pi_old`` (TRL's bias correction): its
        coefficient gains ``+ value``.
    straight_through : bool
        The value of k3 with the gradient of k2 (verl's ``k3+``): coefficient ``lr``, never clamped.
    exponential : bool
        The value holds ``e^{-lr}``, which overflows as an answer's mass collapses (the flows floor ``lr``).
    kink_at_zero : bool
        The slope jumps at ``lr = 0`` (abs).
    loss_coefficient : callable or None
        The unclamped loss coefficient in closed form, where slope (plus value) would cancel (k3_ratio:
        ``1 - rho + k3 = lr``); a straight-through estimator's always.
    loss_regime, advantage_regime : str
        The regime it amounts to unclamped in the loss and in the advantage.
    """

    value: Callable
    slope: Callable
    torch_value: Callable
    value_edges: Callable
    ratio_weighted: bool = False
    straight_through: bool = False
    exponential: bool = False
    kink_at_zero: bool = False
    loss_coefficient: Callable | None = None
    loss_regime: str = "other"
    advantage_regime: str = "other"


@dataclass(frozen=True, kw_only=True)
class KLPlacement(Variant):
    """Where the trainer puts the KL estimate (``Objective.kl_placement``).

    Attributes
    ----------
    in_loss : bool
        A differentiable loss term: coefficient ``c = d value/d lr``.
    in_advantage : bool
        Its detached value subtracted from the advantage after normalisation: ``c = value``.
    in_reward : bool
        Its detached value subtracted from the reward before normalisation: no coefficient, ``P_G`` of the
        shaped rewards.
    explanation : str
        Where the value goes, in words (``grpo-theory explain``).
    tells_same_reward_apart : bool
        The objective tells answers of the same reward law apart through their own log-ratio's *value*
        (advantage and reward placements): pooling them into classes is then exact only where that value is
        monotone in the log-ratio (see :func:`grpo_theory.solvers.full_space_end.class_reduction_exact`).
    """

    explanation: str = ""
    in_loss: bool = False
    in_advantage: bool = False
    in_reward: bool = False
    tells_same_reward_apart: bool = False


@dataclass(frozen=True, kw_only=True)
class Regime(Variant):
    """What the KL fields amount to (``Objective.regime``, derived by :func:`grpo_theory.kl.effective_penalty`).

    Attributes
    ----------
    is_reverse, is_direct : bool
        The note's reverse penalty (coefficient ``1 - pi_ref/pi``) or direct penalty (``log(pi/pi_ref)``).
    is_note_penalty : bool
        One of the two (the paths built on the note's equations accept it).
    in_reward : bool
        The KL shapes the reward before normalisation.
    regularises : bool
        The penalty has a restoring gradient (False for k1 as a loss, whose expected gradient vanishes).
    gradient : str
        The gradient the KL term contributes, in words (``grpo-theory explain``).
    shorthand_estimator : str or None
        The KL estimator ``Objective(penalty=name)`` stands for (an input shorthand; None: not one).
    restores_class_proportions : bool
        The penalty's per-answer slope ``s(lr_o)`` is strictly increasing in the answer's own log-ratio and
        the rest of ``g_o`` depends on the class masses only, so at fixed class masses it pulls the answers of
        a class back to ``pi_ref``'s proportions: every full-space stationary point is proportional inside
        classes, and the class solvers list every end the flow on all output logits can have (see
        :func:`grpo_theory.solvers.full_space_end.class_reduction_exact`). The note's two penalties.
    """

    gradient: str = ""
    shorthand_estimator: str | None = None
    restores_class_proportions: bool = False
    is_reverse: bool = False
    is_direct: bool = False
    in_reward: bool = False
    regularises: bool = True

    @property
    def is_note_penalty(self) -> bool:
        """The note's reverse or direct penalty, exactly."""
        return self.is_reverse or self.is_direct


@dataclass(frozen=True, kw_only=True)
class Level(Variant):
    """Where ratio and penalty are formed (``Objective.level``). ``per_token``: per token, aggregated by
    ``loss_type`` (differs from per answer only for multi-token answers)."""

    per_token: bool


@dataclass(frozen=True, kw_only=True)
class ImportanceLevel(Variant):
    """The importance ratio (``Objective.importance_level``). ``per_answer``: GSPO's geometric mean over an
    answer's tokens, broadcast to them."""

    per_answer: bool


@dataclass(frozen=True, kw_only=True)
class Aggregation(Variant):
    """The token weight a ``loss_type`` stands for (``Objective.aggregation``).

    Attributes
    ----------
    answer_mean : bool
        ``1/|o|``: the mean over the answer's tokens, then over answers.
    batch_normalised : bool
        ``1/T`` with ``T`` the sampled token count of a batch (not differentiated).
    """

    answer_mean: bool = False
    batch_normalised: bool = False


#: The kinds of entry, each with its class.
KINDS = {"advantage": AdvantageEstimator, "normalization": Normalization, "kl_estimator": KLEstimator,
         "kl_placement": KLPlacement, "regime": Regime, "level": Level, "importance_level": ImportanceLevel,
         "aggregation": Aggregation}
_REGISTRY: dict[str, dict[str, Variant]] = {kind: {} for kind in KINDS}
_BUILTIN: dict[str, frozenset] = {}      # the package's own entries' names by kind (set on import): kept as they are


@checked(replace=flag)
def register(entry: Variant, *, replace: bool = False) -> Variant:
    """Add ``entry`` to the registry of its kind (by its class); return it.

    Parameters
    ----------
    entry : Variant
        An instance of one of the classes of :data:`KINDS`.
    replace : bool, default False
        Allow replacing a user's entry of the same name (else an error); the package's own are never replaced.

    Raises
    ------
    InvalidInputError
        For an object of no registered kind, a field not of its declared type (a hook not callable, None where
        required), a name taken (without ``replace``) or the package's own (the solvers rely on those).
    """
    kind = next((k for k, cls in KINDS.items() if type(entry) is cls), None)
    if kind is None:
        raise InvalidInputError(f"entry must be an instance of one of {[c.__name__ for c in KINDS.values()]}, "
                                f"got {str(entry)[:60]!r} ({type(entry).__name__})")
    dataclass_fields(entry, f"{type(entry).__name__} {entry.name!r}", nonempty=("name",))
    own = entry.name in _BUILTIN.get(kind, ())           # the package's own entries are never replaced
    if entry.name in _REGISTRY[kind] and (own or not replace):
        raise InvalidInputError(f"{kind} {entry.name!r} is already registered (" + ("one of the package's own entries, "
                                "never replaced: name yours otherwise)" if own else "pass replace=True to replace it)"))
    _REGISTRY[kind][entry.name] = entry
    return entry


@checked(kind=one_of(*KINDS), name=text())
def unregister(kind: str, name: str) -> None:
    """Remove the user's entry ``name`` of ``kind`` (one added with :func:`register`).

    Parameters
    ----------
    kind : str
        The registry: a key of :data:`KINDS`, e.g. ``"advantage"`` or ``"regime"``.
    name : str
        The entry's name.

    Raises
    ------
    InvalidInputError
        Where there is no such entry, or it is one of the package's own (never removed, as :func:`register` says).
    """
    lookup(kind, name)
    if name in _BUILTIN.get(kind, ()):
        raise InvalidInputError(f"{kind} {name!r} is one of the package's own entries: only the user's are removed")
    del _REGISTRY[kind][name]


def lookup(kind: str, name) -> Variant:
    """The entry ``name`` of ``kind`` (e.g. ``lookup("advantage", "rloo")``).

    Parameters
    ----------
    kind : str
        The registry: a key of :data:`KINDS`, e.g. ``"advantage"`` or ``"regime"``.
    name : str
        The entry's name, e.g. ``"rloo"``.

    Returns
    -------
    Variant
        The entry.

    Raises
    ------
    InvalidInputError
        For an unknown kind or name; the message lists the registered names (``kind`` is the field's name).
    """
    if type(kind) is not str or kind not in _REGISTRY:    # the check only here: the solvers look up dozens a solve
        one_of(*KINDS)("kind", kind)                        # raises, naming kind and the kinds there are
    try:
        return _REGISTRY[kind][name]
    except (KeyError, TypeError):
        raise InvalidInputError(f"{kind} must be one of {names(kind)}, got {name!r}") from None


def note_penalty(name) -> Regime:
    """The regime entry of ``name``, one of the note's two penalties (``penalty=`` of the closed forms, symbolic).

    Parameters
    ----------
    name : str
        ``"reverse"`` or ``"direct"``.

    Returns
    -------
    Regime
        The regime entry.

    Raises
    ------
    InvalidInputError
        For any other name (a user's regime too, whatever its flags).
    """
    note = tuple(n for n, e in _REGISTRY["regime"].items() if n in _BUILTIN["regime"] and e.is_note_penalty)
    if not isinstance(name, str) or name not in note:       # the package's own entries only
        raise InvalidInputError(f"penalty must be one of {note} (the note's two penalties), got {name!r}")
    return _REGISTRY["regime"][name]


@checked(kind=one_of(*KINDS))
def names(kind: str) -> tuple[str, ...]:
    """The registered names of ``kind``, in registration order.

    Parameters
    ----------
    kind : str
        The registry: a key of :data:`KINDS`, e.g. ``"advantage"`` or ``"regime"``.

    Returns
    -------
    tuple of str
        The names.
    """
    return tuple(_REGISTRY[kind])


@checked(kind=one_of(*KINDS))
def entries(kind: str) -> tuple[Variant, ...]:
    """The registered entries of ``kind``, in registration order.

    Parameters
    ----------
    kind : str
        The registry, as for :func:`names`.

    Returns
    -------
    tuple of Variant
        The entries.
    """
    return tuple(_REGISTRY[kind].values())


# ----------------------------------------------------------------------------- KL estimators (numpy and torch)

def _k3_value(lr):
    with np.errstate(over="ignore"):
        return np.expm1(-lr) + lr             # e^{-lr} - 1 + lr, accurate near lr = 0


def _k3_slope(lr):
    with np.errstate(over="ignore"):
        return -np.expm1(-lr)                 # 1 - e^{-lr} = 1 - rho


def _k3_edges(V: float) -> tuple[float, float]:
    f = lambda t: float(np.expm1(-t) + t - V)           # noqa: E731 - a one-line root function
    return (optimize.brentq(f, -np.log(V + 2.0) - 1.0, 0.0, xtol=1e-14), optimize.brentq(f, 0.0, V + 2.0, xtol=1e-14))


def _lr_copy(lr):
    return np.asarray(lr, dtype=float).copy()


_K3 = dict(value=_k3_value, slope=_k3_slope, torch_value=lambda x: x.exp() - x - 1.0, value_edges=_k3_edges,
           exponential=True)
for _entry in (
    KLEstimator(name="k1", description="lr = log(pi/pi_ref): as a loss its expected gradient vanishes",
                value=lambda lr: np.asarray(lr, dtype=float).copy(), slope=np.ones_like, torch_value=lambda x: -x,
                value_edges=lambda V: (-V, V), loss_regime="none", advantage_regime="direct",
                names={"verl": ("k1", "kl"), "openrlhf": ("k1",)}),
    KLEstimator(name="k2", description="lr^2/2: the direct penalty's gradient as a loss",
                value=lambda lr: 0.5 * lr * lr, slope=lambda lr: np.asarray(lr, dtype=float).copy(),
                torch_value=lambda x: 0.5 * x * x, value_edges=lambda V: (-math.sqrt(2 * V), math.sqrt(2 * V)),
                loss_regime="direct", names={"verl": ("k2", "mse"), "openrlhf": ("k2",)}),
    KLEstimator(name="k3", description="pi_ref/pi - log(pi_ref/pi) - 1 (GRPO's): the note's reverse penalty",
                loss_regime="reverse", names={"trl": ("k3",), "verl": ("k3", "low_var_kl"), "openrlhf": ("k3",)},
                **_K3),
    KLEstimator(name="k3_ratio", description="(pi/pi_old) k3, the ratio differentiable (TRL's bias correction): "
                "the direct penalty", ratio_weighted=True, loss_regime="direct", loss_coefficient=_lr_copy,
                names={"trl": ("use_bias_correction_kl",)}, **_K3),
    KLEstimator(name="k3_plus", description="k3's value with k2's gradient (verl's straight-through k3+): the "
                "direct penalty", straight_through=True, loss_regime="direct", loss_coefficient=_lr_copy, names={"verl": ("k3+",)}, **_K3),
    KLEstimator(name="abs", description="|lr|: a kink at pi = pi_ref", value=lambda lr: np.abs(lr),
                slope=np.sign, torch_value=lambda x: x.abs(), value_edges=lambda V: (-V, V), kink_at_zero=True,
                names={"verl": ("abs",)}),
    KLPlacement(name="loss", description="a differentiable loss term", in_loss=True,
                explanation="a differentiable loss term",
                names={"trl": ("beta",), "verl": ("use_kl_loss",), "openrlhf": ("use_kl_loss",)}),
    KLPlacement(name="advantage", description="the detached value subtracted from the advantage after "
                "normalisation", in_advantage=True, tells_same_reward_apart=True,
                explanation="subtracted from the advantage after group normalisation (detached; per token the "
                "sum to the answer's end)",
                names={"openrlhf": ("init_kl_coef",)}),
    KLPlacement(name="reward", description="the detached value subtracted from the reward before normalisation",
                in_reward=True, tells_same_reward_apart=True, names={"verl": ("use_kl_in_reward",)},
                explanation="subtracted from the reward before group normalisation (detached)"),
    Regime(name="reverse", description="the note's reverse penalty KL(pi_ref || pi): coefficient 1 - pi_ref/pi",
           is_reverse=True, shorthand_estimator="k3", restores_class_proportions=True,
           gradient="the gradient of KL(pi_ref || pi): the note's reverse penalty (Eq. 11)"),
    Regime(name="direct", description="the note's direct penalty KL(pi || pi_ref): coefficient log(pi/pi_ref)",
           is_direct=True, shorthand_estimator="k3_ratio", restores_class_proportions=True,
           gradient="the gradient of KL(pi || pi_ref): the note's direct penalty (log pooling with P_G)"),
    Regime(name="none", description="no regularising gradient (k1 as a loss)", regularises=False,
           gradient="zero: k1 as a loss has expected gradient 0, so nothing regularises (the beta -> 0 limit)"),
    Regime(name="reward", description="the KL shapes the reward before group normalisation", in_reward=True,
           gradient="none of its own: the shaped reward r - beta*value is normalised with the rest; with k1 and "
                    "deterministic rewards the stationary policy is log pooling pi ∝ pi_ref e^{r/beta}"),
    Regime(name="other", description="another (clamped, kinked) coefficient, still solved exactly",
           gradient="beta*c(o) with c the estimator's coefficient (grpo_theory.kl.coefficient); clamps switch it "
                    "off where they are active"),
    Normalization(name="scale", description="(r_i - mean r)/(std r + eps) (Eq. 2)", scales=True,
                  names={"trl": ("scale_rewards='group'",), "verl": ("norm_adv_by_std_in_grpo=True",),
                         "openrlhf": ("group_norm",)}),
    Normalization(name="shift", description="r_i - mean r (Dr. GRPO)", scales=False,
                  names={"trl": ("scale_rewards='none'",), "verl": ("norm_adv_by_std_in_grpo=False",),
                         "openrlhf": ("dr_grpo",)}),
    Level(name="sequence", description="ratio and penalty per answer (the note)", per_token=False),
    Level(name="token", description="ratio and penalty per token, aggregated by loss_type", per_token=True),
    ImportanceLevel(name="token", description="the per-token ratio (PPO/GRPO)", per_answer=False,
                    names={"trl": ("importance_sampling_level='token'",)}),
    ImportanceLevel(name="sequence", description="GSPO's per-answer geometric mean", per_answer=True,
                    names={"trl": ("importance_sampling_level='sequence'",)}),
    Aggregation(name="answer_mean", description="1/|o|: mean over the answer's tokens, then over answers",
                answer_mean=True),
    Aggregation(name="token_sum", description="a constant: sum over tokens over a constant"),
    Aggregation(name="batch_token_mean", description="1/T, T the sampled token count of the batch",
                batch_normalised=True),
):
    register(_entry)


# ----------------------------------------------------------------------------- advantage estimators

def _group_bound(span: float, obj) -> float:
    """Scale: ``sqrt(G-1)`` (ddof 0), ``(G-1)/sqrt(G)`` (ddof 1), at ``G = inf`` ``span/std_eps`` or
    ``span/sqrt(variance_eps)`` (infinite without an epsilon); shift: the span."""
    if not obj.normalization_variant.scales:
        return float(span)
    if obj.is_large_group:
        bounds = [math.inf]
        if obj.std_eps > 0:
            bounds.append(span / obj.std_eps)
        if obj.variance_eps > 0:
            bounds.append(span / math.sqrt(obj.variance_eps))
        return min(bounds)
    g = obj.group_size
    return math.sqrt(g - 1) if obj.std_ddof == 0 else (g - 1) / math.sqrt(g)


def _rloo_equivalence(G: int | float, beta: float) -> str:
    return (f"rloo's advantage is G/(G-1) = {G / (G - 1):g} times the shift-only one: the same stationary "
            f"points as shift-only at beta (G-1)/G = {beta * (G - 1) / G:g}")


for _entry in (
    AdvantageEstimator(
        name="group", description="Eq. 2: (r_i - mean r)/(std r + eps), or r_i - mean r with normalization='shift'",
        expectations="grpo_theory.preference:group_level_expectations", bound=_group_bound,
        sharp_at_ties=lambda obj: obj.normalization_variant.scales and obj.std_eps == 0 and obj.variance_eps == 0,
        torch_advantages="grpo_theory.training.loss:group_advantages_for",
        sampled="grpo_theory.monte_carlo:_group_advantages", uses_normalization=True, is_note_advantage=True,
        names={"trl": ("GRPOTrainer",), "verl": ("grpo", "grpo_vectorized"), "openrlhf": ("group_norm", "dr_grpo")}),
    AdvantageEstimator(
        name="rloo", description="r_i minus the mean of the other G - 1 rewards: G/(G-1) times the shift-only one",
        expectations=_adv.rloo_expectations, bound=lambda span, obj: float(span),
        torch_advantages="grpo_theory.training.loss:rloo_advantages",
        sampled="grpo_theory.monte_carlo:_leave_one_out_advantages", equivalence=_rloo_equivalence,
        formula="r_i - mean of the other G-1 rewards = G/(G-1) (r_i - mean r)",
        names={"trl": ("RLOOTrainer",), "verl": ("rloo", "rloo_vectorized"), "openrlhf": ("rloo",)}),
    AdvantageEstimator(
        name="reinforce_pp", description="r_i - mean r, whitened over a large batch of this question's groups",
        expectations=_adv.reinforce_pp_expectations, bound=lambda span, obj: math.inf,
        sharp_at_ties=lambda obj: True, torch_advantages="grpo_theory.training.loss:reinforce_pp_advantages",
        formula="(r_i - mean r) whitened over the batch",
        batch_whitened=True,
        names={"verl": ("reinforce_plus_plus_baseline",), "openrlhf": ("reinforce_baseline",)}),
    AdvantageEstimator(
        name="pass_at_k", description="the analytic pass@k advantage (arXiv 2508.10751), two reward levels",
        expectations=_adv.pass_at_k_expectations, bound=_adv.pass_at_k_bound,
        torch_advantages="grpo_theory.training.loss:pass_at_k_advantages", needs_pass_k=True,
        formula="the analytic pass@k advantage (arXiv 2508.10751)"),
):
    register(_entry)
del _entry
_BUILTIN.update({kind: frozenset(registry) for kind, registry in _REGISTRY.items()})
