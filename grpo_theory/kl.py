r"""Trainer-level KL terms: the estimator, where it is placed, and its clamps (beyond the note; the Conventions page).

Per output (sequence level) or per token (token level) write ``lr = log pi - log pi_ref`` and
``rho = pi_ref/pi = e^{-lr}``. The estimators of TRL, verl and OpenRLHF are

* ``k1 = lr``; ``k2 = lr^2/2``; ``k3 = rho - log rho - 1 = e^{-lr} + lr - 1``; ``abs = |lr|``;
* ``k3_ratio = (pi/pi_old) k3``, the ratio differentiable (TRL's ``use_bias_correction_kl``);
* ``k3_plus``: the value of k3 with the gradient of k2 (verl's ``k3+``, a straight-through trick).

Clamps (verl's ``low_var_kl`` clamps ``-lr`` to ``[-20, 20]`` and the k3 value to ``[-10, 10]``;
OpenRLHF clamps every estimator's value to ``[-10, 10]``): ``lr`` is clipped to ``[-L, L]`` before the
value is computed, the value to ``[-V, V]``; where either clip is active the gradient through it is 0.

At ``pi_old = pi`` the expected gradient of every placement has the form
``dJ/dtheta_o = pi(o) [g(o) - E_pi g]`` with ``g(o) = P_G(o|pi) - beta c(o)``, where the
*coefficient* ``c`` is

* placement ``"loss"`` (the estimator is a differentiable loss term): ``c = d value/d lr``
  (for ``k3_ratio`` also ``+ value``, from the ratio's derivative ``1``): k1 -> 1 (a constant, which
  cancels: **no regularisation**), k2 -> ``lr``, k3 -> ``1 - rho`` (the note's reverse penalty), k3_ratio
  -> ``k3 + 1 - rho = lr``, k3_plus -> ``lr`` (both the note's direct penalty), abs -> ``sign(lr)``;
* placement ``"advantage"`` (the value, detached, subtracted from the advantage after group
  normalisation, OpenRLHF's default): ``c = value``; k1 gives ``lr``, the direct penalty again;
* placement ``"reward"`` (the value, detached, subtracted from the reward *before* group
  normalisation, verl's ``use_kl_in_reward``): there is no ``c``; instead ``P_G`` is computed for
  the shaped reward ``r(o) - beta value(o)``, which depends on ``pi``. Since ``P_G(o)`` is strictly
  increasing in ``o``'s own shaped reward, a policy is stationary where the shaped rewards tie on
  the support; with k1 (deterministic rewards) that is ``r(o) - beta log(pi(o)/pi_ref(o)) = const``:
  logarithmic pooling, ``pi ∝ pi_ref e^{r/beta}``, for every ``G``, normalisation, ddof and eps.

Constants in ``c`` cancel in ``g - E_pi g``. With a clamp the coefficient jumps where the clamp
switches on (loss placement), and the vector field is discontinuous there: see
:func:`discontinuities`.

Examples
--------
>>> import numpy as np
>>> from grpo_theory import Objective
>>> from grpo_theory.kl import coefficient, discontinuities
>>> lr = np.log([0.5, 2.0])                                  # pi = pi_ref/2 and 2 pi_ref
>>> coefficient(Objective(beta=1.0, kl_estimator="k3"), lr)       # 1 - rho: the note's reverse penalty
array([-1. ,  0.5])
>>> coefficient(Objective(beta=1.0, kl_estimator="k3_ratio"), lr).round(6)   # lr: the direct penalty
array([-0.693147,  0.693147])
>>> verl = Objective(beta=0.001, kl_estimator="k3", kl_log_ratio_clamp=20, kl_value_clamp=10)
>>> lower_edge = discontinuities(verl)[0]
>>> round(float(np.exp(-lower_edge)), 3)                  # the gradient is off below pi_ref/13.611
13.611
"""

from __future__ import annotations

import numpy as np

from ._checks import OBJECTIVE, checked, on_failure
from . import variants
from ._validate import as_array, as_floats, number
from .errors import InvalidInputError

__all__ = ["KL_ESTIMATORS", "KL_PLACEMENTS", "LOG_RATIO_FLOOR", "estimator_value", "flow_value", "coefficient",
           "flow_coefficient", "value_slope", "flow_value_slope", "discontinuities", "effective_penalty", "value_shift",
           "flow_value_shift", "flow_log_ratio", "floored_log_ratio"]

#: The built-in estimators and placements (their entries in :mod:`grpo_theory.variants` hold the formulas).
KL_ESTIMATORS = variants.names("kl_estimator")
KL_PLACEMENTS = variants.names("kl_placement")
#: Log-ratio below which the flows evaluate the k3 kinds' ``e^{-lr}`` at this floor (``e^{690} ~ 1e300``):
#: an answer at ``pi < e^{-690} pi_ref`` keeps a finite, huge coefficient instead of ``inf`` (whose product
#: with a mass that underflowed to 0 is a NaN); see :func:`flow_log_ratio`.
LOG_RATIO_FLOOR = -690.0


def _log_ratios(obj, lr) -> np.ndarray:
    """``lr`` as a float array for the public functions, with ``obj`` an Objective: text, None, complex numbers and
    other objects are refused by name (the flows' own non-finite values are left to each function)."""
    if not hasattr(obj, "estimator_variant"):
        raise InvalidInputError(f"obj must be a grpo_theory.Objective (Objective(**fields) for a dict), got "
                                f"{type(obj).__name__} {obj!r:.80}")
    if lr is None or isinstance(lr, (str, bytes)):
        raise InvalidInputError(f"lr must be a log-ratio log(pi/pi_ref) or an array of them, got {lr!r}")
    return as_floats("lr", lr)                   # masked entries, complex, 10**400, a failing __float__: named


def _trial_log_ratios(lr) -> np.ndarray:
    """The unchecked twins' ``lr``: an integer or float ndarray (the solvers' trial points) converted as NumPy
    does, nothing tested; anything else read as :func:`~grpo_theory._validate.as_floats` reads numbers (None, text,
    complex numbers and other objects refused by name). NaN and infinities pass: NaN in, NaN out."""
    if lr.__class__ is np.ndarray and lr.dtype.kind in "fiu":
        return as_array("lr", lr)
    return as_floats("lr", lr)


def _checked_log_ratios(fn: str, obj, lr) -> np.ndarray:
    """:func:`_log_ratios` with NaN refused by ``fn``'s name and flat index (``+-inf`` pass: ``pi`` or
    ``pi_ref`` zero, given each function's limit)."""
    lr = _log_ratios(obj, lr)
    if np.isnan(lr).any():
        bad = np.flatnonzero(np.isnan(lr.ravel()))
        raise InvalidInputError(f"{fn}: the log-ratio lr = log(pi/pi_ref) is nan at flat index "
                                f"{bad[:5].tolist()}; expected numbers (+-inf allowed: pi or pi_ref zero)")
    return lr


def _without_limit(fn: str, lr: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out``, refused by ``fn``'s name where an infinite ``lr`` left it NaN (no limit there)."""
    bad = np.isnan(out) & np.isinf(lr)
    if np.any(bad):
        at = np.flatnonzero(np.broadcast_to(bad, np.shape(out)).ravel())
        raise InvalidInputError(f"{fn}: no limit at the infinite log-ratio lr = log(pi/pi_ref) at flat index "
                                f"{at[:5].tolist()}; expected finite log-ratios here")
    return out


def _limit_value(obj, lr: np.ndarray) -> np.ndarray:
    """:func:`flow_value` with k3's ``inf - inf`` at ``lr = -inf`` (``pi = 0``) replaced by its limit,
    ``+inf`` (the value clamp where there is one)."""
    with np.errstate(invalid="ignore"):                 # the inf - inf replaced below
        v = flow_value(obj, lr)
    if variants.lookup("kl_estimator", obj.estimator).exponential:
        V = obj.kl_value_clamp
        v = np.where(np.isnan(v) & np.isneginf(lr), np.inf if V is None else V, v)
    return v


def _clipped_lr(obj, lr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``lr`` clipped to the log-ratio clamp, and the mask where the clip is inactive."""
    L = obj.kl_log_ratio_clamp
    if L is None:
        return lr, np.ones(np.shape(lr), dtype=bool)
    return np.clip(lr, -L, L), np.abs(lr) <= L


def _raw_value(est: str, lr: np.ndarray) -> np.ndarray:
    """The unclamped value of estimator ``est`` (its registry entry's ``value``)."""
    with np.errstate(over="ignore", invalid="ignore"):     # k3's inf - inf at lr = -inf: NaN, as documented
        return variants.lookup("kl_estimator", est).value(lr)


def estimator_value(obj, lr) -> np.ndarray:
    """The estimator's value at log-ratio ``lr = log(pi/pi_ref)`` after both clamps (what a trainer logs).

    Parameters
    ----------
    obj : Objective
        Its KL fields: ``estimator``, ``kl_placement``, ``kl_log_ratio_clamp``, ``kl_value_clamp``.
    lr : array_like
        Log-ratios ``lr = log(pi/pi_ref)``; ``-inf`` (``pi = 0``) and ``+inf`` give the value's limit (k3:
        ``+inf`` on both sides, k1: ``lr`` itself), NaN is refused.

    Returns
    -------
    numpy.ndarray
        The value, of the shape of ``lr``.

    Raises
    ------
    InvalidInputError
        A NaN log-ratio.

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> estimator_value(Objective(beta=1.0, kl_estimator="k3"), np.log([0.5, 1.0, 2.0])).round(6)  # e^-lr + lr - 1
    array([0.306853, 0.      , 0.193147])
    """
    # k3 kinds at lr = -inf (pi = 0): e^{-lr} + lr - 1 evaluates as inf - inf; its limit is +inf (clamped).
    return _limit_value(obj, _checked_log_ratios("estimator_value", obj, lr))


def flow_value(obj, lr) -> np.ndarray:
    """:func:`estimator_value` as the solvers evaluate it, without its input check: a NaN log-ratio (a trial
    point an integrator then rejects) gives NaN, and so does k3's ``inf - inf`` at ``lr = -inf``.

    Parameters
    ----------
    obj, lr : Objective, array_like
        As for :func:`estimator_value`, whose value (after both clamps, of the shape of ``lr``) it returns.
    """
    lr = _trial_log_ratios(lr)
    try:
        lr_c, _ = _clipped_lr(obj, lr)
    except (AttributeError, TypeError):
        on_failure(obj=(OBJECTIVE, obj))
        raise
    v = _raw_value(obj.estimator, lr_c)
    V = obj.kl_value_clamp
    return v if V is None else np.clip(v, -V, V)


def _active(obj, lr: np.ndarray) -> np.ndarray:
    """Mask where neither clamp is active (the gradient passes through the value)."""
    lr_c, inside = _clipped_lr(obj, lr)
    V = obj.kl_value_clamp
    if V is None:
        return inside
    return inside & (np.abs(_raw_value(obj.estimator, lr_c)) <= V)


def _raw_slope(est: str, lr: np.ndarray) -> np.ndarray:
    """``d value/d lr`` of the unclamped estimator (its registry entry's ``slope``; k3 kinds: that of k3)."""
    with np.errstate(over="ignore"):
        return variants.lookup("kl_estimator", est).slope(lr)


def coefficient(obj, lr) -> np.ndarray:
    """``c(o)`` of the module doc at ``lr = log(pi/pi_ref)`` (loss and advantage placements).

    The expected gradient is ``g(o) = P_G(o|pi) - beta c(o)``; constants in ``c`` cancel.

    Parameters
    ----------
    obj, lr : Objective, array_like
        As for :func:`estimator_value`.

    Returns
    -------
    numpy.ndarray
        ``c``, of the shape of ``lr`` (0 where a clamp is active in the loss).

    Raises
    ------
    InvalidInputError
        For ``kl_placement="reward"``, which has no coefficient (see :func:`value_shift`); a NaN log-ratio
        (``+-inf`` give the limit, e.g. k3's ``1 - e^{-lr}``: ``-inf`` and ``1``).

    Examples
    --------
    See the module's examples: k3 gives ``1 - rho``, k3_ratio gives ``lr``.
    """
    lr = _checked_log_ratios("coefficient", obj, lr)
    return _without_limit("coefficient", lr, _coefficient(obj, lr, _limit_value))


def flow_coefficient(obj, lr) -> np.ndarray:
    """:func:`coefficient` as the solvers evaluate it, without its input check: a NaN log-ratio (a trial
    point an integrator then rejects) gives NaN, and so does a k3 kind's value at ``lr = -inf``.

    Parameters
    ----------
    obj, lr : Objective, array_like
        As for :func:`coefficient`, whose ``c`` (of the shape of ``lr``) it returns.
    """
    lr = _trial_log_ratios(lr)
    try:
        return _coefficient(obj, lr, flow_value)
    except (AttributeError, TypeError):
        on_failure(obj=(OBJECTIVE, obj))
        raise


def _coefficient(obj, lr: np.ndarray, value) -> np.ndarray:
    """``c`` at the float array ``lr``, the estimator's value (where ``c`` holds it) from ``value(obj, lr)``."""
    est, entry, place = obj.estimator, obj.estimator_variant, obj.placement_variant
    if place.in_advantage:
        return value(obj, lr)
    if not place.in_loss:
        raise InvalidInputError(f"no coefficient for kl_placement={obj.kl_placement!r}; the KL is in the reward")
    if entry.loss_coefficient is not None and (entry.straight_through or (
            obj.kl_log_ratio_clamp is None and obj.kl_value_clamp is None)):
        return entry.loss_coefficient(lr)    # k3+: straight-through k2 gradient, never clamped; k3 + 1 - rho = lr
    with np.errstate(invalid="ignore"):
        c = np.where(_active(obj, lr), _raw_slope(est, lr), 0.0)
    if entry.ratio_weighted:
        c = c + value(obj, lr)
    return c


def value_slope(obj, lr) -> np.ndarray:
    """``d value/d lr`` of the clamped estimator (0 where a clamp is active), away from discontinuities.

    Parameters
    ----------
    obj : Objective
        The estimator and its clamps (the placement does not enter).
    lr : array_like
        Where to take the slope, as in :func:`estimator_value` (``+-inf`` give the limit, NaN is refused).

    Returns
    -------
    numpy.ndarray
        The slope, of the shape of ``lr``.
    """
    lr = _checked_log_ratios("value_slope", obj, lr)
    return _without_limit("value_slope", lr, flow_value_slope(obj, lr))


def flow_value_slope(obj, lr) -> np.ndarray:
    """:func:`value_slope` as the solvers evaluate it, without its input check (a NaN log-ratio gives NaN).

    Parameters
    ----------
    obj, lr : Objective, array_like
        As for :func:`value_slope`, whose slope (of the shape of ``lr``) it returns.
    """
    lr = _trial_log_ratios(lr)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(_active(obj, lr), _raw_slope(obj.estimator, lr), 0.0)
    except (AttributeError, TypeError):
        on_failure(obj=(OBJECTIVE, obj))
        raise


@checked(obj=OBJECTIVE)
def discontinuities(obj) -> tuple[float, ...]:
    """Log-ratios ``lr`` where ``c`` jumps (loss placement with a clamp, or ``abs`` at 0).

    The value is continuous in ``lr`` (clipping is continuous), so the advantage placement has no
    jumps; in the loss, the gradient switches off where a clamp switches on.

    Parameters
    ----------
    obj : Objective
        Its KL fields, as for :func:`estimator_value`.

    Returns
    -------
    tuple of float
        The jump points in increasing order; empty when ``c`` is continuous.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> discontinuities(Objective(beta=0.1, kl_estimator="abs"))
    (0.0,)
    >>> discontinuities(Objective(beta=0.1))                  # unclamped k3: none
    ()
    """
    if not obj.placement_variant.in_loss or obj.estimator_variant.straight_through:
        return ()
    out = []
    if obj.estimator_variant.kink_at_zero:
        out.append(0.0)
    L, V = obj.kl_log_ratio_clamp, obj.kl_value_clamp
    if L is not None:
        out += [-L, L]
    if V is not None:
        out += _value_clamp_edges(obj.estimator, V, L)
    # keep the edges where c really jumps (a log-ratio clamp beyond an active value clamp does not)
    out = np.array(sorted(set(out)))
    h = 1e-9 * np.maximum(1.0, np.abs(out))
    jump = np.abs(coefficient(obj, out + h) - coefficient(obj, out - h)) > 1e-6
    return tuple(float(e) for e in out[jump])


def _value_clamp_edges(est: str, V: float, L: float | None) -> list[float]:
    """The ``lr`` where ``|value(lr)| = V`` (inside the log-ratio clamp; the entry's ``value_edges``)."""
    edges = list(variants.lookup("kl_estimator", est).value_edges(V))
    if L is not None:
        edges = [e for e in edges if abs(e) < L]
    return [float(e) for e in edges]


def effective_penalty(estimator: str, placement: str, log_ratio_clamp, value_clamp) -> str:
    """The name of what an estimator/placement/clamp combination does to the stationary points.

    Parameters
    ----------
    estimator : {"k1", "k2", "k3", "k3_ratio", "k3_plus", "abs"}
        The KL estimator.
    placement : {"loss", "advantage", "reward"}
        Where the trainer puts it.
    log_ratio_clamp, value_clamp : float or None
        The clamps (None: none).

    Returns
    -------
    str
        ``"reverse"`` and ``"direct"`` (the note's two penalties, exactly), ``"none"`` (no
        regularising gradient: k1 as a loss), ``"reward"`` (in the reward before normalisation), or
        ``"other"`` (a clamped or otherwise different coefficient, still solved exactly; see
        :func:`coefficient`). ``Objective.regime`` holds it.

    Examples
    --------
    >>> effective_penalty("k3", "loss", None, None), effective_penalty("k1", "advantage", None, None)
    ('reverse', 'direct')
    >>> effective_penalty("k1", "loss", None, None), effective_penalty("k3", "loss", 20, 10)
    ('none', 'other')
    """
    for name, clamp in (("log_ratio_clamp", log_ratio_clamp), ("value_clamp", value_clamp)):
        if clamp is not None:                         # a clamp is a positive bound (as Objective checks it)
            number(name, clamp, low=0.0, low_open=True)
    clamped = log_ratio_clamp is not None or value_clamp is not None
    entry, place = variants.lookup("kl_estimator", estimator), variants.lookup("kl_placement", placement)
    if place.in_reward:
        return "reward"
    if place.in_advantage:
        return "other" if clamped else entry.advantage_regime
    if clamped and not entry.straight_through:
        return "other"
    return entry.loss_regime


def value_shift(obj, lr) -> np.ndarray:
    """``beta * value(lr)``, subtracted from each reward by the ``"reward"`` placement.

    Parameters
    ----------
    obj : Objective
        ``beta`` and the KL fields.
    lr : array_like
        As for :func:`estimator_value` (``+-inf`` give the limit, NaN is refused).

    Returns
    -------
    numpy.ndarray
        The shift, of the shape of ``lr``.
    """
    lr = _checked_log_ratios("value_shift", obj, lr)
    return _without_limit("value_shift", lr, obj.beta * _limit_value(obj, lr))


def flow_value_shift(obj, lr) -> np.ndarray:
    """:func:`value_shift` as the solvers evaluate it, without its input check: a NaN log-ratio gives NaN,
    and so does a k3 kind's value at ``lr = -inf``.

    Parameters
    ----------
    obj, lr : Objective, array_like
        As for :func:`value_shift`, whose shift ``beta * value(lr)`` (of the shape of ``lr``) it returns.
    """
    try:
        beta = obj.beta
    except AttributeError:
        on_failure(obj=(OBJECTIVE, obj))
        raise
    return beta * flow_value(obj, lr)


def flow_log_ratio(obj, lr) -> np.ndarray:
    """``lr`` as the flows evaluate the loss/advantage coefficient: floored at :data:`LOG_RATIO_FLOOR`
    for the k3 kinds, whose ``e^{-lr}`` overflows as an answer's mass collapses.

    The coefficient then stays finite (about ``1e300``) and keeps its sign, so a collapsing answer is still
    pushed the same way; only answers below ``e^{-690}`` of their reference mass are affected, where the
    mass itself is 0 in double precision. The other estimators grow at most like ``lr^2`` and are left as
    they are (the direct penalty's roots can lie at class logits in the thousands).

    Parameters
    ----------
    obj : Objective
        Its estimator.
    lr : array_like
        Log-ratios ``log(pi/pi_ref)`` (``+-inf`` allowed, NaN refused).

    Returns
    -------
    numpy.ndarray
        ``lr``, floored for the k3 kinds.

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> flow_log_ratio(Objective(beta=1.0, kl_estimator="k3"), np.array([-np.inf, 0.5])).tolist()
    [-690.0, 0.5]
    """
    return floored_log_ratio(obj, _checked_log_ratios("flow_log_ratio", obj, lr))


def floored_log_ratio(obj, lr) -> np.ndarray:
    """:func:`flow_log_ratio` as the solvers evaluate it, without its input check (a NaN log-ratio, a trial
    point an integrator then rejects, stays NaN).

    Parameters
    ----------
    obj, lr : Objective, array_like
        As for :func:`flow_log_ratio`, whose floored ``lr`` it returns.
    """
    lr = _trial_log_ratios(lr)
    try:
        exponential = obj.estimator_variant.exponential
    except AttributeError:
        on_failure(obj=(OBJECTIVE, obj))
        raise
    if exponential:
        return np.maximum(lr, LOG_RATIO_FLOOR)
    return lr
