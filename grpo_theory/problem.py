"""Questions and GRPO objectives: the inputs of every computation.

A :class:`Question` is one context ``q`` with ``K`` outputs, their reference
probabilities ``pi_ref`` and either a reward law (``L`` distinct reward levels and
``P(r | o)``) or, for ``G = 2`` only, a pairwise preference matrix
``M[o, o'] = P(o > o')`` (ties counted half, so ``M + M^T = 1``).

An :class:`Objective` fixes the GRPO variant: ``beta``, the group size ``G``
(an integer >= 2 or ``math.inf``), the penalty (``"reverse"``: GRPO's k3
estimator, whose gradient is that of KL(pi_ref || pi); ``"direct"``:
KL(pi || pi_ref)), the normalisation (``"scale"``: Eq. 2; ``"shift"``:
``A_i = r_i - mean(r)``), ``std_ddof`` and ``std_eps``.

All input validation lives here, so that bad input fails once, early, with the
offending value and what was expected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Generic, TypeVar, overload

import numpy as np

from ._question import (  # noqa: F401  (re-exported: problem is where a question is defined for users)
    Question,
    as_question,
    rebuild_question,
    validate_answers,
    validate_policy,
    validate_probability_vector,
)
from ._checks import QUESTION, checked, numbers, register_class
from ._validate import plain as _plain
from ._validate import as_double, unwrap_scalar
from .errors import InvalidInputError
from ._regularised import (  # noqa: F401  (re-exported: the guard of every stationary query)
    STATIONARY_OBJECTIVE,
    UNREGULARISED,
    require_regularised,
)
from . import variants
from .kl import effective_penalty

__all__ = ["InvalidInputError", "Question", "Objective", "shaped_question", "PENALTIES", "NORMALIZATIONS", "LEVELS",
           "LOSS_TYPES", "ADVANTAGES", "IMPORTANCE_LEVELS",
           "as_objective", "as_question", "require_regularised"]

#: The built-in names of each option (the registry, :mod:`grpo_theory.variants`, is the one list; a
#: registered variant is accepted too). The penalty shorthands: the regimes that are the note's penalties.
PENALTIES = tuple(e.name for e in variants.entries("regime") if e.is_note_penalty)
#: What ``Objective.regime`` can read (see :func:`grpo_theory.kl.effective_penalty`).
EFFECTIVE_PENALTIES = variants.names("regime")
NORMALIZATIONS = variants.names("normalization")
LEVELS = variants.names("level")
#: Advantage estimators (see :mod:`grpo_theory.advantage`).
ADVANTAGES = variants.names("advantage")
#: Where the importance ratio is formed: per token (PPO/GRPO) or per answer as the geometric mean (GSPO).
IMPORTANCE_LEVELS = variants.names("importance_level")
#: Loss aggregations of TRL (``loss_type``) and verl (``loss_agg_mode``), each mapped onto the weight
#: a token of answer ``o`` gets in the loss:
#: ``"answer_mean"`` ``1/|o|`` (mean over the answer's tokens, then over answers);
#: ``"token_sum"`` a constant (sum over tokens divided by a constant);
#: ``"batch_token_mean"`` ``1/T`` with ``T`` the sampled number of tokens in the batch (not differentiated).
#: The KL estimator of ``Objective(penalty=None)`` with no ``kl_estimator``: GRPO's k3.
DEFAULT_ESTIMATOR = "k3"
LOSS_TYPES = {
    "grpo": "answer_mean", "seq-mean-token-mean": "answer_mean",
    "dr_grpo": "token_sum", "seq-mean-token-sum": "token_sum", "seq-mean-token-sum-norm": "token_sum",
    "bnpo": "batch_token_mean", "dapo": "batch_token_mean", "token-mean": "batch_token_mean",
}

#: The numeric fields of :class:`Objective` (a 0-d array in any of them is read as its number).
_NUMERIC_FIELDS = ("beta", "group_size", "std_ddof", "std_eps", "variance_eps", "groups_per_batch", "kl_log_ratio_clamp",
                   "kl_value_clamp", "pass_k", "entropy_coef")
#: The Objective fields that hold integers (or math.inf): ``group_size: 4.0`` is the integer 4.
INTEGER_FIELDS = ("group_size", "std_ddof", "groups_per_batch", "pass_k")
#: Largest finite group size: 2**53, beyond which integers are not exact in double precision.
MAX_GROUP_SIZE = 2**53


def _big_int(n: int) -> str:
    """``n`` with separators, or its digit count when it has more than 30 digits (``10**400``)."""
    digits = len(str(abs(n)))
    return f"{n:,}" if digits <= 30 else f"an integer of {digits} digits ({str(n)[:6]}...)"


_Entry = TypeVar("_Entry", bound=variants.Variant)


def _listed(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: the given fields in a message."""
    return " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)


class _EntryOf(Generic[_Entry]):
    """A read-only attribute of an :class:`Objective`: the registry entry of one of its options,
    ``variants.lookup(kind, getattr(obj, attribute))``, ``kind`` being the registry of ``entry_class``
    (:data:`grpo_theory.variants.KINDS`), e.g. ``obj.advantage_variant.bound(span, obj)``."""

    def __init__(self, entry_class: type[_Entry], attribute: str) -> None:
        self.kind = next(k for k, cls in variants.KINDS.items() if cls is entry_class)
        self.attribute = attribute

    @overload
    def __get__(self, obj: None, owner: type) -> _EntryOf[_Entry]: ...

    @overload
    def __get__(self, obj: Objective, owner: type | None = None) -> _Entry: ...

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return variants.lookup(self.kind, getattr(obj, self.attribute))


@register_class
@dataclass(frozen=True, kw_only=True)
class Objective:
    """A GRPO objective (Eq. 1 of the note, with the options of the Conventions page).

    Attributes
    ----------
    beta : float
        Penalty weight ``beta >= 0``. ``beta = 0`` is no KL penalty (TRL's default): with ``entropy_coef > 0``
        the entropy bonus is the only regulariser; with neither the objective is *unregularised*
        (:attr:`regularised` is False): valid for the finite-time flows (:mod:`grpo_theory.dynamics`,
        ``grpo-theory predict --measured`` or ``--fit``), while every query for a stationary point raises
        :class:`~grpo_theory.NoStationaryPolicy` (:func:`require_regularised`).
    group_size : int or math.inf
        ``G >= 2``; ``math.inf`` is the large-group limit.
    penalty : {"reverse", "direct"} or None
        The note's shorthand for an unclamped KL estimator in the loss. ``"reverse"`` (the default):
        GRPO's per-sample k3 estimator ``D_i = pi_ref/pi - log(pi_ref/pi) - 1``, whose expected
        gradient at ``pi_old = pi`` is that of KL(pi_ref || pi) (the note's *reverse* KL).
        ``"direct"``: KL(pi || pi_ref) (the note's *direct* KL; much of the RLHF literature calls
        this one the reverse KL), as TRL's ratio * k3 gives it. An input only: what the KL fields
        amount to is :attr:`regime`; giving a shorthand that contradicts the KL fields is an error.
    normalization : {"scale", "shift"}
        ``"scale"``: ``A_i = (r_i - mean r) / (std r + std_eps)`` (Eq. 2);
        ``"shift"``: ``A_i = r_i - mean r``.
    std_ddof : {0, 1}
        0: population std (the note); 1: unbiased std (TRL, verl, OpenRLHF).
    std_eps : float
        ``>= 0`` added to the std (TRL's convention). With both epsilons 0, ``A_i := 0``
        when all rewards tie.
    variance_eps : float
        ``>= 0`` added to the variance inside the square root,
        ``A_i = (r_i - mean r)/sqrt(var r + variance_eps)`` (Mroueh's convention).
    level : {"sequence", "token"}
        ``"sequence"`` (the note, the default): ratio and penalty per answer. ``"token"``: per
        token, then aggregated by ``loss_type`` (what TRL, verl and OpenRLHF do); it differs from
        the sequence level only for questions with multi-token ``answers``.
    loss_type : str
        How token terms are aggregated at token level: TRL's ``"grpo"``, ``"bnpo"``, ``"dr_grpo"``,
        ``"dapo"`` or verl's ``"token-mean"``, ``"seq-mean-token-sum"``, ``"seq-mean-token-mean"``,
        ``"seq-mean-token-sum-norm"``; see :data:`LOSS_TYPES` and :attr:`aggregation`.
    groups_per_batch : int or math.inf
        For the batch-normalised kinds (``bnpo``, ``dapo``, ``token-mean``), how many groups of
        this question share the token count ``T``: 1 is a batch of one group (exact, ``T`` random
        and correlated with the rewards); ``math.inf`` a large batch, where ``T`` is a constant
        and the kind coincides with ``"token_sum"``.
    kl_estimator : {"k1", "k2", "k3", "k3_ratio", "k3_plus", "abs"} or None
        The trainer's KL estimator (see :mod:`grpo_theory.kl`); None: from ``penalty``
        (reverse -> k3, direct -> k3_ratio). The one in use is :attr:`estimator`.
    kl_placement : {"loss", "advantage", "reward"}
        ``"loss"``: a differentiable loss term (TRL; verl ``use_kl_loss``; OpenRLHF ``use_kl_loss``);
        ``"advantage"``: its value subtracted from the advantage after group normalisation
        (OpenRLHF's default); ``"reward"``: subtracted from the reward before group normalisation
        (verl ``use_kl_in_reward``).
    kl_log_ratio_clamp, kl_value_clamp : float or None
        Clip ``log(pi/pi_ref)`` to ``[-L, L]`` before the estimator, and its value to ``[-V, V]``
        (verl's ``low_var_kl``: 20 and 10; OpenRLHF: value 10); the gradient is 0 where a clip is active.
    advantage : {"group", "rloo", "reinforce_pp", "pass_at_k"}
        The advantage estimator (:mod:`grpo_theory.advantage`). ``"group"`` (default): Eq. 2 with
        ``normalization``; ``"rloo"``: ``r_i`` minus the mean of the other ``G - 1`` rewards (no std);
        ``"reinforce_pp"``: ``r_i`` minus the group mean, whitened over a large batch of groups of this
        question (verl ``reinforce_plus_plus_baseline``, OpenRLHF ``reinforce_baseline``);
        ``"pass_at_k"``: the analytic pass@k advantage of arXiv 2508.10751 (two reward levels).
        ``normalization``, ``std_ddof`` and the epsilons apply to ``"group"`` only.
    pass_k : int or None
        ``k`` in ``1..G`` for ``advantage="pass_at_k"`` (``k = 1`` is the group advantage, ddof 0).
    filter_ties : bool
        Drop (DAPO dynamic sampling, verl ``filter_groups``) or mask (TRL) groups whose rewards all
        tie, penalty and entropy terms included.
    entropy_coef : float
        ``>= 0``; the exact entropy of the next-token distribution at each position, times this, is
        added to what the loss maximises.
    importance_level : {"token", "sequence"}
        Per-token ratio, or GSPO's per-answer geometric mean (TRL ``importance_sampling_level``). At
        ``pi_old = pi`` both give the advantage term the same gradient for every loss type, so with a
        penalty that carries no ratio (k3, k2, ...) the stationary set is that of ``"token"``. TRL's
        ratio-weighted k3 (``kl_estimator="k3_ratio"``) multiplies by the sequence ratio too; on
        multi-token answers that changes the penalty's gradient, and the token-level engine refuses it.
    regime : {"reverse", "direct", "none", "reward", "other"}
        Derived, read-only: what the KL fields amount to (:func:`grpo_theory.kl.effective_penalty`):
        the note's two penalties exactly, no regularising gradient (k1 as a loss), the KL in the
        reward, or another (clamped) coefficient, still solved exactly. Two objectives are equal when
        ``regime``, ``estimator`` and the other fields agree, however the KL was spelled.
    estimator : str
        Derived, read-only: the KL estimator in use, ``kl_estimator`` or the one ``penalty`` stands for.

    Raises
    ------
    InvalidInputError
        When a field is out of its range (``beta < 0``, ``G < 2`` or not an integer, an unknown
        option string, a negative epsilon or clamp), or ``penalty`` contradicts the KL fields.

    Notes
    -----
    Objectives are keyword-only and immutable; ``dataclasses.replace(obj, beta=0.1)`` gives a
    validated copy.

    Every option has an entry in :mod:`grpo_theory.variants` holding what the package knows about it; the
    properties ``advantage_variant``, ``normalization_variant``, ``estimator_variant``, ``placement_variant``,
    ``regime_variant``, ``level_variant``, ``importance_variant`` and ``aggregation_variant`` give this
    objective's entries (e.g. ``obj.regime_variant.is_note_penalty``).

    Examples
    --------
    >>> import math
    >>> obj = Objective(beta=0.04, group_size=8)
    >>> obj.regime, obj.estimator, obj.is_large_group
    ('reverse', 'k3', False)
    >>> Objective(beta=0.04, group_size=math.inf, penalty="direct").regime
    'direct'
    """

    beta: float
    group_size: int | float = 2
    penalty: str | None = field(default=None, compare=False)
    normalization: str = "scale"
    std_ddof: int = 0
    std_eps: float = 0.0
    variance_eps: float = 0.0
    level: str = "sequence"
    loss_type: str = "grpo"
    groups_per_batch: int | float = math.inf
    kl_estimator: str | None = field(default=None, compare=False)
    kl_placement: str = "loss"
    kl_log_ratio_clamp: float | None = None
    kl_value_clamp: float | None = None
    # --- the GRPO family (issue 22); see grpo_theory.advantage for the mathematics
    advantage: str = "group"
    pass_k: int | None = None
    filter_ties: bool = False
    entropy_coef: float = 0.0
    importance_level: str = "token"
    regime: str = field(init=False, repr=False)       # derived: repr stays a constructor call
    estimator: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for name in _NUMERIC_FIELDS:                       # np.array(0.5) is the number 0.5
            value = unwrap_scalar(getattr(self, name))
            if name not in INTEGER_FIELDS:                # ints have their own limits (G <= 2**53)
                value = as_double(name, value)             # 10**400 or np.longdouble('1e-4000'): refused
            object.__setattr__(self, name, value)
        beta = self.beta
        if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating, np.integer)) \
                or not (math.isfinite(beta) and beta >= 0):
            raise InvalidInputError(f"beta must be a finite number >= 0 (0: no KL penalty), got {_plain(beta)}")
        object.__setattr__(self, "beta", float(beta) if beta > 0 else 0.0)      # -0.0 is 0
        g = self.group_size
        if isinstance(g, bool):
            raise InvalidInputError(f"group_size must be an integer >= 2 or math.inf, got {_plain(g)}")
        if isinstance(g, (float, np.floating)) and math.isinf(g) and g > 0:
            object.__setattr__(self, "group_size", math.inf)
        elif isinstance(g, (int, np.integer)) or (
            isinstance(g, (float, np.floating)) and math.isfinite(g) and float(g).is_integer()
        ):
            if int(g) < 2:
                raise InvalidInputError(f"group_size must be an integer >= 2 or math.inf, got {_plain(g)}")
            if int(g) > MAX_GROUP_SIZE:
                raise InvalidInputError(
                    f"group_size = {_big_int(int(g))} is above 2**53 = {MAX_GROUP_SIZE:,}, beyond which G is not even "
                    "exact in double precision; use group_size=math.inf (the large-G limit)")
            object.__setattr__(self, "group_size", int(g))
        else:
            raise InvalidInputError(f"group_size must be an integer >= 2 or math.inf, got {_plain(g)}")
        self._resolve_kl()
        variants.lookup("normalization", self.normalization)
        if isinstance(self.std_ddof, bool) or not isinstance(self.std_ddof, (int, float, np.integer, np.floating)) \
                or self.std_ddof not in (0, 1):
            raise InvalidInputError(f"std_ddof must be 0 or 1, got {_plain(self.std_ddof)}")
        eps = self.std_eps
        if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)) \
                or not math.isfinite(eps) or eps < 0:
            raise InvalidInputError(f"std_eps must be a finite number >= 0, got {_plain(eps)}")
        object.__setattr__(self, "std_eps", float(eps))
        veps = self.variance_eps
        if isinstance(veps, bool) or not isinstance(veps, (int, float, np.floating, np.integer)) \
                or not math.isfinite(veps) or veps < 0:
            raise InvalidInputError(f"variance_eps must be a finite number >= 0, got {_plain(veps)}")
        object.__setattr__(self, "variance_eps", float(veps))
        variants.lookup("level", self.level)
        if not isinstance(self.loss_type, str) or self.loss_type not in LOSS_TYPES:
            raise InvalidInputError(f"loss_type must be one of {sorted(LOSS_TYPES)}, got {self.loss_type!r}")
        b = self.groups_per_batch
        if b is None:
            raise InvalidInputError("groups_per_batch=None is not accepted: the whole batch is math.inf")
        as_double("groups_per_batch", b)                 # 10**400 has no float: named, not an OverflowError
        if isinstance(b, bool) or not (
                (isinstance(b, (float, np.floating)) and (math.isinf(b) and b > 0 or (math.isfinite(b)
                                                                                 and float(b).is_integer()
                                                                                 and b >= 1)))
                or (isinstance(b, (int, np.integer)) and b >= 1)):
            raise InvalidInputError(f"groups_per_batch must be an integer >= 1 or math.inf, got {b!r}")
        object.__setattr__(self, "groups_per_batch", math.inf if math.isinf(b) else int(b))
        self._validate_family()

    def _validate_family(self) -> None:
        """Check the GRPO-family fields (advantage estimator, pass@k, tie filtering, entropy bonus,
        importance level); see :mod:`grpo_theory.advantage`."""
        entry = variants.lookup("advantage", self.advantage)
        k = self.pass_k
        if entry.needs_pass_k:
            if k is None or isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise InvalidInputError(f"advantage={self.advantage!r} needs pass_k, an integer in 1..G, got {k!r}")
            if not (1 <= int(k) and (self.is_large_group or int(k) <= self.group_size)):
                g = "inf" if self.is_large_group else self.group_size
                raise InvalidInputError(f"pass_k must be an integer in 1..G (G={g}), got {k!r}")
            object.__setattr__(self, "pass_k", int(k))
        elif k is not None:
            raise InvalidInputError(f"pass_k={k!r} is only meaningful with advantage='pass_at_k', "
                                    f"got advantage={self.advantage!r}")
        if not isinstance(self.filter_ties, (bool, np.bool_)):
            raise InvalidInputError(f"filter_ties must be True or False, got {self.filter_ties!r}")
        object.__setattr__(self, "filter_ties", bool(self.filter_ties))
        if self.filter_ties and not self.placement_variant.in_loss:
            raise InvalidInputError(f"filter_ties is modelled with the KL in the loss only, got "
                                    f"kl_placement={self.kl_placement!r}")
        c = self.entropy_coef
        if isinstance(c, bool) or not isinstance(c, (int, float, np.floating, np.integer)) \
                or not math.isfinite(c) or c < 0:
            raise InvalidInputError(f"entropy_coef must be a finite number >= 0 (a bonus added to what the "
                                    f"loss maximises), got {c!r}")
        object.__setattr__(self, "entropy_coef", float(c))
        if self.entropy_coef > 0 and self.placement_variant.in_reward:
            raise InvalidInputError("entropy_coef > 0 is modelled with the KL in the loss or the advantage, "
                                    f"got kl_placement={self.kl_placement!r}")
        variants.lookup("importance_level", self.importance_level)

    def _resolve_kl(self) -> None:
        """Check the KL fields; set ``regime`` and ``estimator`` to what they amount to (:mod:`grpo_theory.kl`)."""
        placement = variants.lookup("kl_placement", self.kl_placement)
        for name in ("kl_log_ratio_clamp", "kl_value_clamp"):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) \
                    or not (math.isfinite(v) and v > 0):
                raise InvalidInputError(f"{name} must be None or a finite number > 0, got {v!r}")
            object.__setattr__(self, name, float(v))
        shorthand = self.penalty
        if shorthand is not None and (not isinstance(shorthand, str) or shorthand not in variants.names("regime")):
            raise InvalidInputError(f"penalty must be one of {PENALTIES} (or None with kl_estimator=...), "
                                    f"got {shorthand!r}")
        short = None if shorthand is None else variants.lookup("regime", shorthand)
        est = self.kl_estimator
        # the KL fields the user set (the placement when not the loss, the clamps when not None), for the messages
        given = ([] if placement.in_loss else [f"kl_placement={self.kl_placement!r}"]) + [
            f"{name}={getattr(self, name)!r}" for name in ("kl_log_ratio_clamp", "kl_value_clamp")
            if getattr(self, name) is not None]
        if est is None:
            if short is not None and not short.is_note_penalty:
                raise InvalidInputError(f"penalty={shorthand!r} is a result, not an input: give kl_estimator=")
            if given and short is None:
                raise InvalidInputError(f"{_listed(given)} need{'s' if len(given) == 1 else ''} kl_estimator= "
                                        f"(one of {variants.names('kl_estimator')}): which KL estimator is placed "
                                        "or clamped")
            if given:
                raise InvalidInputError(f"penalty={shorthand!r} is shorthand for an unclamped estimator in the loss; "
                                        f"with {_listed(given)}, give kl_estimator= instead")
            est = DEFAULT_ESTIMATOR if short is None else short.shorthand_estimator
        else:
            variants.lookup("kl_estimator", est)
        effective = effective_penalty(est, self.kl_placement, self.kl_log_ratio_clamp, self.kl_value_clamp)
        if shorthand is not None and shorthand != effective:
            fields = [f"kl_estimator={est!r}", *given]      # kl_estimator was given: a shorthand alone agrees
            raise InvalidInputError(
                f"penalty={shorthand!r} conflicts with {_listed(fields)}, which amount"
                f"{'s' if len(fields) == 1 else ''} to {effective!r}; give one or the other")
        object.__setattr__(self, "regime", effective)
        object.__setattr__(self, "estimator", est)

    @property
    def aggregation(self) -> str:
        """The token weight ``loss_type`` stands for: "answer_mean", "token_sum" or "batch_token_mean".

        A batch-normalised kind over infinitely many groups has a constant normaliser, which only
        rescales the whole gradient: it is reported as "token_sum" (same stationary points).
        """
        kind = LOSS_TYPES[self.loss_type]
        if variants.lookup("aggregation", kind).batch_normalised and math.isinf(self.groups_per_batch):
            return "token_sum"
        return kind

    # ----------------------------------------------------------------- this objective's registry entries
    advantage_variant = _EntryOf(variants.AdvantageEstimator, "advantage")
    """The :class:`~grpo_theory.variants.AdvantageEstimator` entry of ``advantage`` (``.bound``, ...)."""
    normalization_variant = _EntryOf(variants.Normalization, "normalization")
    """The :class:`~grpo_theory.variants.Normalization` entry of ``normalization`` (``.scales``)."""
    estimator_variant = _EntryOf(variants.KLEstimator, "estimator")
    """The :class:`~grpo_theory.variants.KLEstimator` entry of the KL estimator in use (:attr:`estimator`)."""
    placement_variant = _EntryOf(variants.KLPlacement, "kl_placement")
    """The :class:`~grpo_theory.variants.KLPlacement` entry of ``kl_placement``."""
    regime_variant = _EntryOf(variants.Regime, "regime")
    """The :class:`~grpo_theory.variants.Regime` entry of :attr:`regime` (``.is_note_penalty``, ``.is_reverse``,
    ``.is_direct``, ``.in_reward``)."""
    level_variant = _EntryOf(variants.Level, "level")
    """The :class:`~grpo_theory.variants.Level` entry of ``level`` (``.per_token``)."""
    importance_variant = _EntryOf(variants.ImportanceLevel, "importance_level")
    """The :class:`~grpo_theory.variants.ImportanceLevel` entry of ``importance_level`` (``.per_answer``)."""
    aggregation_variant = _EntryOf(variants.Aggregation, "aggregation")
    """The :class:`~grpo_theory.variants.Aggregation` entry of :attr:`aggregation` (``.answer_mean``,
    ``.batch_normalised``)."""

    @property
    def regularised(self) -> bool:
        """Whether the objective has stationary policies to solve for: ``beta > 0`` or ``entropy_coef > 0``.

        False for ``beta = 0`` with no entropy bonus (TRL's default, verl or OpenRLHF with no KL at all): the
        expected gradient only pushes mass to the best answers, so the flow from ``pi_ref`` ends at a vertex
        (a limit, not a stationary point). Such an objective is valid for the finite-time flows
        (:mod:`grpo_theory.dynamics`, ``grpo-theory predict --measured`` or ``--fit``); every query for a
        stationary point refuses it (:func:`require_regularised`). It reads the weights only: ``k1`` as a loss
        (``regime == "none"``) with ``beta > 0`` carries no regularising gradient either, and the solvers
        report its limit vertex as a boundary point.

        Examples
        --------
        >>> Objective(beta=0.04).regularised, Objective(beta=0).regularised
        (True, False)
        >>> Objective(beta=0, entropy_coef=0.01).regularised
        True
        """
        return self.beta > 0 or self.entropy_coef > 0

    @property
    def is_large_group(self) -> bool:
        """True for the ``G -> inf`` limit."""
        return math.isinf(self.group_size)

    def describe(self) -> str:
        """A one-line summary in the note's terms, e.g. ``"reverse/scale, G=8, beta=0.04"``.

        Examples
        --------
        >>> Objective(beta=0.04, group_size=8).describe()
        'reverse/scale, G=8, beta=0.04'
        """
        g = "inf" if self.is_large_group else str(self.group_size)
        extra = ""
        if self.normalization_variant.scales and (self.std_ddof or self.std_eps or self.variance_eps):
            extra = f", ddof={self.std_ddof}, eps={self.std_eps:g}"
            if self.variance_eps:
                extra += f", variance_eps={self.variance_eps:g}"
        if self.level_variant.per_token:
            extra += f", token level, loss_type={self.loss_type}"
            if variants.lookup("aggregation", LOSS_TYPES[self.loss_type]).batch_normalised:
                extra += f", groups_per_batch={self.groups_per_batch:g}"
        kl = ""
        if not self.regime_variant.is_note_penalty:
            kl = f" (kl {self.estimator} in the {self.kl_placement}"
            for name, v in (("log-ratio clamp", self.kl_log_ratio_clamp), ("value clamp", self.kl_value_clamp)):
                kl += "" if v is None else f", {name} {v:g}"
            kl += ")"
        if not self.advantage_variant.is_note_advantage:
            extra += f", advantage={self.advantage}" + (f"@{self.pass_k}" if self.pass_k else "")
        if self.filter_ties:
            extra += ", tied groups filtered"
        if self.entropy_coef:
            extra += f", entropy_coef={self.entropy_coef:g}"
        if self.importance_variant.per_answer:
            extra += f", importance_level={self.importance_level}"
        return f"{self.regime}{kl}/{self.normalization}, G={g}, beta={self.beta:g}{extra}"


def as_objective(obj) -> Objective:
    """``obj`` as an :class:`Objective`: an Objective as is, a mapping of its fields validated into one.

    Parameters
    ----------
    obj : Objective or mapping
        An :class:`Objective`, or its fields by name (e.g. ``{"beta": 0.5, "group_size": 8}``).

    Returns
    -------
    Objective
        ``obj`` itself, or the objective built from the mapping's fields.

    Raises
    ------
    InvalidInputError
        When ``obj`` is neither, a mapping has an unknown field or lacks ``beta``, or a field is invalid.

    Examples
    --------
    >>> as_objective({"beta": 0.5, "group_size": 8}).describe()
    'reverse/scale, G=8, beta=0.5'
    """
    if isinstance(obj, Objective):
        return obj
    from collections.abc import Mapping

    if isinstance(obj, Mapping):
        known = {f.name for f in Objective.__dataclass_fields__.values() if f.init}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise InvalidInputError(f"unknown Objective field(s) {unknown}; expected some of {sorted(known)}")
        if "beta" not in obj:
            raise InvalidInputError(f"obj: an Objective needs beta; got the fields {sorted(obj)}")
        return Objective(**obj)
    raise InvalidInputError(f"obj must be an Objective (or a dict of its fields), got {type(obj).__name__}: {obj!r}")


#: How many reward spans beyond the others a collapsing answer's shaped reward is placed (see shaped_question).
STAND_IN_SPANS = 1e8
#: A shift beyond this is treated as the infinite limit too (a k3 value ``e^{-lr}`` that did not quite overflow
#: still would when the group statistics square it).
HUGE_SHIFT = 1e100


@checked(q=QUESTION, shift=numbers(ndim=1))
def shaped_question(q, shift: np.ndarray):
    """``q`` with output ``o``'s reward law shifted down by ``shift[o]`` (the KL-in-reward placement).

    Deterministic rewards stay deterministic; a reward law with levels ``v_l`` becomes one over the
    shifted levels ``v_l - shift[o]`` of positive probability, with coinciding levels merged.

    A shift of ``+inf`` (``-inf``), or beyond :data:`HUGE_SHIFT` in size, is the limit of an answer whose
    mass collapses (the estimator's value
    overflows, e.g. k3's ``e^{-lr}``): its shaped reward is below (above) every other. It stands for that
    limit: the answer's levels are put :data:`STAND_IN_SPANS` spans beyond the finite shaped levels. With
    scale normalisation this is the limit to about 1e-8 (advantages tend to finite limits as one reward
    runs off); with shift-only normalisation the answer's advantage is large instead of infinite, with the
    same sign, so its drift points the same way.

    Parameters
    ----------
    q : Question
        A question with a reward law (not a preference matrix).
    shift : array_like, shape (K,)
        The amount subtracted from each output's rewards (``beta`` times its KL value); ``+-inf``
        stands for a collapsing answer (see above).

    Returns
    -------
    Question
        The shifted question, with ``q``'s ``pi_ref``, labels and answers.

    Raises
    ------
    InvalidInputError
        When ``shift`` has a NaN.

    Examples
    --------
    >>> shaped_question(Question([0.5, 0.5], rewards=[1, 0]), [0.25, 0.0]).expected_reward.tolist()
    [0.75, 0.0]
    """
    shift = np.asarray(shift, dtype=float)
    if shift.size != q.n_outputs:
        raise InvalidInputError(f"shift must have one entry per output (K={q.n_outputs}), got {shift.size}")
    if np.any(np.isnan(shift)):
        raise InvalidInputError(f"shift must not be NaN, got {shift.tolist()!r}")
    off = ~(np.abs(shift) <= HUGE_SHIFT)
    if np.any(off):
        shift = shift.copy()
        v = q.reward_levels
        finite = v[None, :] - shift[~off][:, None]
        lo = float(finite.min()) if finite.size else float(v.min())
        hi = float(finite.max()) if finite.size else float(v.max())
        reach = STAND_IN_SPANS * max(hi - lo, float(v.max() - v.min()), 1.0)
        shift[off & (shift > 0)] = float(v.max()) - lo + reach      # top level at lo - reach
        shift[off & (shift < 0)] = float(v.min()) - hi - reach      # bottom level at hi + reach
    levels = q.reward_levels[None, :] - shift[:, None]                 # (K, L)
    # only the (output, level) pairs of positive probability make a shaped level: a level no output
    # can yield has weight 0 in every group and leaves P_G unchanged, but it would multiply the count
    # vectors (K deterministic rewards gave up to K^2 shaped levels instead of K)
    live = q.reward_probs > 0
    uniq, inverse = np.unique(levels[live], return_inverse=True)
    probs = np.zeros((q.n_outputs, uniq.size))
    np.add.at(probs, (np.nonzero(live)[0], inverse.ravel()), q.reward_probs[live])
    if not np.all(np.isfinite(uniq)):
        return Question(q.pi_ref, reward_levels=uniq, reward_probs=probs, labels=q.labels, answers=q.answers)
    # valid by construction (q's pi_ref, labels and answers; distinct sorted levels; each row a sum of q's
    # row): built without the constructor's checks, which cost more than P_G itself inside a flow
    return rebuild_question((q.pi_ref, uniq, probs, None, q.labels, q.answers))
