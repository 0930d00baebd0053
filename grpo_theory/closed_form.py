r"""The note's explicit formulas for binary questions (their reward preference and stationary points), vectorised.

:func:`binary_preference` is the O(G) binary form of ``P_G`` (section 2); the others are the
stationary points (section 4), described below.

Two answers ``a, b`` with confidence margin ``gamma = P(a > b) - P(b > a) >= 0``;
``p = pi_ref(a)``. The arguments, for every function below that takes them: ``pi_ref_a`` is ``p``, in
``[0, 1]``; ``beta`` the KL weight, positive and finite; ``gamma`` the margin, in ``[0, 1]`` (1 for
deterministic ``r(a) > r(b)``). A value outside its range raises :class:`~grpo_theory.InvalidInputError`
naming it; ``beta = 0`` (no penalty, no entropy bonus: no stationary policy) raises
:class:`~grpo_theory.NoStationaryPolicy` (:func:`~grpo_theory.problem.require_regularised`). Each stationary-point function returns ``x = pi(a)`` at the stationary point as a
``numpy.ndarray``, broadcast over its array arguments.

At ``p = 0`` the reference gives ``a`` no mass and neither penalty can create any,
so every function returns 0 there; the reverse-penalty forms are discontinuous
at ``p = 0`` (their limit as ``p -> 0+`` is ``max(1 - beta/gamma, 0)`` for Eq. 14 and
``1/(1 + beta^2)`` for Eq. 15).
"""

from __future__ import annotations

import math

import numpy as np

from ._numerics import expit, log_factorial
from ._validate import as_double, broadcastable, float_array, plain, unwrap_scalar
from . import variants
from .problem import InvalidInputError, require_regularised

__all__ = [
    "binary_preference",
    "binary_pairwise",
    "binary_large_group",
    "binary_pairwise_direct",
    "large_group_direct_h",
    "large_group_direct_turning_point",
    "binary_shift_direct",
    "binary_pairwise_filtered",
    "binary_rloo",
    "binary_entropy_condition",
    "binary_entropy",
]


#: Largest finite ``G`` of :func:`binary_preference`'s O(G) sum (memory ``8 G`` bytes per ``x``).
MAX_BINARY_GROUP = 10_000_000


_NO_GAMMA = object()


def _check(p, beta, gamma=_NO_GAMMA, *, bonus: bool = False):
    """The closed forms' arguments checked; ``beta = 0`` with no entropy bonus (``bonus`` False) is refused by
    :func:`~grpo_theory.problem.require_regularised` (no stationary policy), a negative one as invalid."""
    p = float_array("pi_ref_a", p, finite=False)
    beta = float_array("beta", beta, finite=False)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise InvalidInputError(f"pi_ref_a must lie in [0, 1], got {plain(p)}")
    if not bonus and beta.size and np.all(np.isfinite(beta)) and np.all(beta >= 0):     # empty: nothing to guard
        require_regularised(beta, "beta")
    if np.any(~np.isfinite(beta)) or np.any(beta <= 0):
        raise InvalidInputError(f"beta must be positive and finite, got {plain(beta)}")
    if gamma is _NO_GAMMA:
        broadcastable(pi_ref_a=p, beta=beta)
        return p, beta
    gamma = float_array("gamma", gamma, finite=False)       # None is refused here, by name
    if np.any(~np.isfinite(gamma)) or np.any((gamma < 0) | (gamma > 1)):
        raise InvalidInputError(f"gamma must lie in [0, 1] (label a as the preferred answer), got {plain(gamma)}")
    broadcastable(pi_ref_a=p, beta=beta, gamma=gamma)
    return p, beta, gamma


def _logistic(logit, p):
    """``1/(1 + e^{-logit})`` without overflow; ``p = 0`` gives 0 and ``p = 1`` gives 1 whatever the shift."""
    x = expit(np.where(np.isnan(logit), 0.0, logit))
    return np.where(p == 0, 0.0, np.where(p == 1, 1.0, x))


def binary_pairwise(pi_ref_a, beta, gamma=1.0) -> np.ndarray:
    r"""G = 2, reverse penalty (Eq. 14).

    Root in ``[p, 1]`` of ``beta (x - p) = gamma x (1 - x)``:
    ``x = (1/2) [1 - b + sqrt((1 - b)^2 + 4 b p)]`` with ``b = beta/gamma``.
    For ``b > 1`` the equivalent ``x = 2 b p / (sqrt((1 - b)^2 + 4 b p) - (1 - b))`` is
    used (no cancellation). ``gamma = 0`` (a tie) gives ``x = p``.

    Parameters
    ----------
    pi_ref_a, beta : array_like
        ``p`` and ``beta`` (ranges in the module doc).
    gamma : array_like, default 1.0
        The margin (range in the module doc).

    Returns
    -------
    numpy.ndarray
        Eq. 14's root ``x`` in ``[p, 1]``.

    Examples
    --------
    >>> round(float(binary_pairwise(0.3, 1.0)), 6)         # beta = gamma: sqrt(p)
    0.547723
    """
    p, beta, gamma = _check(pi_ref_a, beta, gamma)
    # Written with hypot and with b or 1/b (whichever is <= 1), so nothing overflows or cancels for
    # beta, gamma anywhere in (0, 1.8e308): b = 1e300 or a near-tie gamma = 1e-300 give x ~ p.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        b = beta / gamma                       # inf for a tie or a subnormal gamma
        inv_b = gamma / beta                   # 0 for a tie
        small = b <= 1
        bs = np.where(small, b, 0.0)
        direct = 0.5 * ((1.0 - bs) + np.hypot(1.0 - bs, 2.0 * np.sqrt(bs * p)))
        ib = np.where(small, 0.0, inv_b)       # x = 2p / ((1 - 1/b) + sqrt((1 - 1/b)^2 + 4p/b))
        one_ib = 1.0 - ib
        rationalised = 2.0 * p / (one_ib + np.hypot(one_ib, 2.0 * np.sqrt(ib * p)))
        x = np.where(small, direct, rationalised)
    x = np.where(gamma == 0, p, x)
    return np.where(p == 0, 0.0, x)


def binary_large_group(pi_ref_a, beta) -> np.ndarray:
    r"""Large G, reverse penalty, deterministic ``r(a) > r(b)`` (Eq. 15).

    Root in ``[p, 1]`` of ``beta (x - p) = sqrt(x (1 - x))``:
    ``x = [2 beta^2 p + 1 + sqrt(1 + 4 beta^2 p (1 - p))] / (2 (1 + beta^2))``.
    Independent of the reward gap.

    Parameters
    ----------
    pi_ref_a, beta : array_like
        ``p`` and ``beta``; no margin, the rewards being deterministic.

    Returns
    -------
    numpy.ndarray
        The root of Eq. 15 (never below ``p``).

    Examples
    --------
    >>> binary_large_group([0.2, 0.5], 0.5).round(6).tolist()
    [0.870813, 0.947214]
    """
    p, beta = _check(pi_ref_a, beta)
    # beta <= 1: the formula as written; beta > 1: divided through by beta^2 with c = 1/beta,
    # x = [2p + c^2 + c sqrt(c^2 + 4p(1-p))] / (2(1 + c^2)), so beta = 1e200 does not overflow.
    with np.errstate(over="ignore", under="ignore"):
        small = beta <= 1
        b = np.where(small, beta, 1.0)
        b2 = b * b
        x_small = (2.0 * b2 * p + 1.0 + np.hypot(1.0, 2.0 * b * np.sqrt(p * (1.0 - p)))) / (2.0 * (1.0 + b2))
        c = np.where(small, 1.0, 1.0 / beta)
        c2 = c * c
        x_large = (2.0 * p + c2 + c * np.hypot(c, 2.0 * np.sqrt(p * (1.0 - p)))) / (2.0 * (1.0 + c2))
        x = np.where(small, x_small, x_large)
    return np.where(p == 0, 0.0, x)


def binary_pairwise_direct(pi_ref_a, beta, gamma=1.0) -> np.ndarray:
    r"""G = 2, direct penalty: ``x = e^{gamma/(2 beta)} p / (e^{gamma/(2 beta)} p + e^{-gamma/(2 beta)} (1 - p))``.

    From ``x/(1-x) = p/(1-p) exp((P_2(a) - P_2(b))/beta)`` with
    ``P_2(a) - P_2(b) = gamma``; continuous at ``p = 0``. Computed as a logistic
    function of ``logit(p) + gamma/beta``.

    Parameters
    ----------
    pi_ref_a, beta : array_like
        As for :func:`binary_pairwise`.
    gamma : array_like, default 1.0
        As for :func:`binary_pairwise`.

    Returns
    -------
    numpy.ndarray
        The logistic ``x``, continuous at ``p = 0``.

    Examples
    --------
    >>> round(float(binary_pairwise_direct(0.2, 0.5)), 4)  # odds 0.25 e^2: RLHF's log pooling
    0.6488
    """
    p, beta, gamma = _check(pi_ref_a, beta, gamma)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        logit = np.log(p) - np.log1p(-p) + gamma / beta
    return _logistic(logit, p)


def large_group_direct_h(x, pi_ref_a, beta) -> np.ndarray:
    r"""``h(x) = 1/(beta sqrt(x(1-x))) - log(x/(1-x)) + log(p/(1-p))`` (large G, direct penalty).

    Stationary points of the direct penalty at ``G = inf`` (deterministic
    rewards) are the roots of ``h``; ``h > 0`` means the flow raises ``pi(a)``.

    Parameters
    ----------
    x : array_like
        ``pi(a)``, in ``(0, 1)``.
    pi_ref_a, beta : array_like
        ``p`` and ``beta`` (module doc).

    Returns
    -------
    numpy.ndarray
        ``h(x)``, broadcast over the arguments.

    Raises
    ------
    InvalidInputError
        Also when ``x`` leaves ``(0, 1)``.

    Examples
    --------
    >>> float(large_group_direct_h(0.5, 0.5, 1.0))       # 1/(beta/2)
    2.0
    """
    p, beta = _check(pi_ref_a, beta)
    x = float_array("x", x, low=0.0, high=1.0, low_open=True, high_open=True)
    with np.errstate(divide="ignore", over="ignore"):
        return (1.0 / (beta * np.sqrt(x * (1 - x))) - (np.log(x) - np.log1p(-x))
                + (np.log(p) - np.log1p(-p)))


def large_group_direct_turning_point(beta) -> np.ndarray:
    r"""``x* = (1 + sqrt(1 - 1/(1 + beta^2)))/2``: ``h`` falls on ``(0, x*]`` and rises on ``[x*, 1)``.

    So ``h`` (:func:`large_group_direct_h`) has at most two roots, one on each side of ``x*``.

    Parameters
    ----------
    beta : array_like
        The KL weight, ``> 0``.

    Returns
    -------
    numpy.ndarray
        ``x*``, of the shape of ``beta``.

    Examples
    --------
    >>> round(float(large_group_direct_turning_point(1.0)), 6)    # (1 + sqrt(1/2))/2
    0.853553
    """
    beta = float_array("beta", beta, low=0.0, low_open=True)
    return 0.5 * (1.0 + beta / np.hypot(1.0, beta))    # sqrt(1 - 1/(1+beta^2)) without cancellation


def binary_shift_direct(pi_ref_a, beta, group_size, reward_gap=1.0) -> np.ndarray:
    r"""Shift-only + direct penalty: RLHF with ``beta' = G beta/(G-1)`` (beyond the note).

    ``x = logistic(logit(p) + reward_gap (G-1)/(G beta))``; ``G = inf`` gives ``beta' = beta``.

    Parameters
    ----------
    pi_ref_a, beta : array_like
        ``p`` and ``beta`` (module doc).
    group_size : array_like
        ``G``: integers ``>= 2`` or ``inf``.
    reward_gap : array_like, default 1.0
        ``r(a) - r(b)``, finite.

    Returns
    -------
    numpy.ndarray
        RLHF's ``x`` at ``beta' = G beta/(G-1)``.

    Raises
    ------
    InvalidInputError
        Also for a ``group_size`` or a ``reward_gap`` out of range.

    Examples
    --------
    >>> round(float(binary_shift_direct(0.2, 0.5, 2)), 4)   # beta' = 2 beta = 1: odds 0.25 e
    0.4046
    """
    p, beta = _check(pi_ref_a, beta)
    g = float_array("group_size", group_size, finite=False)
    finite = np.isfinite(g)
    if np.any(np.isnan(g)) or np.any(g < 2) or np.any(finite & (g != np.round(np.where(finite, g, 0.0)))) \
            or np.any(~finite & (g < 0)):
        raise InvalidInputError(f"group_size must be an integer >= 2 or inf, got {group_size!r}")
    gap = float_array("reward_gap", reward_gap, finite=False)
    if not np.all(np.isfinite(gap)):
        raise InvalidInputError(f"reward_gap must be finite, got {reward_gap!r}")
    factor = np.where(np.isinf(g), 1.0, (g - 1) / np.where(np.isinf(g), 1.0, g))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        logit = np.log(p) - np.log1p(-p) + gap * factor / beta
    return _logistic(logit, p)


# ----------------------------------------------------------------------------- the GRPO family (issue 22)

def _bisect(f, lo, hi, n: int = 200) -> np.ndarray:
    """Vectorised bisection for a root of ``f`` that changes sign from + at ``lo`` to - at ``hi``.

    Where ``0 < lo`` and ``hi > 4 lo`` the midpoint is geometric, ``sqrt(lo hi)``: a root of 2e-200 in
    ``[1e-200, 1]`` is then found to machine precision (arithmetic halving reaches only 2^-200 = 6e-61 in
    200 steps)."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    lo, hi = lo.copy(), hi.copy()
    for _ in range(n):
        geometric = (lo > 0) & (hi > 4 * lo)
        mid = np.where(geometric, np.sqrt(np.where(geometric, lo, 1.0)) * np.sqrt(np.where(geometric, hi, 1.0)),
                       0.5 * (lo + hi))
        pos = f(mid) > 0
        lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
        if np.all(hi - lo <= 4 * np.finfo(float).eps * np.maximum(hi, np.finfo(float).tiny)):
            break
    return 0.5 * (lo + hi)


def binary_pairwise_filtered(pi_ref_a, beta) -> np.ndarray:
    r"""G = 2, reverse penalty, tied groups filtered (DAPO dynamic sampling / TRL masking).

    Deterministic rewards ``r(a) > r(b)``. The condition (derived by sympy from the enumerated groups,
    :func:`grpo_theory.symbolic.derive_filtered_pairwise`) is
    ``beta (x - p) (x^2 + (1 - x)^2) = x (1 - x)``: Eq. 14 with ``beta`` multiplied by the probability
    ``x^2 + (1 - x)^2`` that a group ties. Its cubic ``f(x) = x(1-x) - beta (x-p)(x^2+(1-x)^2)`` is positive
    on ``(0, p]`` and negative at 1; the root kept is the one in ``(p, 1)`` (bisection to machine precision).

    Parameters
    ----------
    pi_ref_a, beta : array_like
        ``p`` and ``beta`` (ranges in the module doc).

    Returns
    -------
    numpy.ndarray
        ``x = pi(a)`` at the stationary point, broadcast over ``pi_ref_a`` and ``beta``.

    Examples
    --------
    >>> round(float(binary_pairwise_filtered(0.05, 0.5)), 4)      # unfiltered (Eq. 14): 0.546
    0.7216
    """
    p, beta = _check(pi_ref_a, beta)

    def f(x):
        return x * (1 - x) - beta * (x - p) * (x**2 + (1 - x) ** 2)
    x = _bisect(f, p, np.ones_like(p + beta))
    return np.where(p == 0, 0.0, np.where(p == 1, 1.0, x))


def binary_rloo(pi_ref_a, beta, reward_gap=1.0, penalty: str = "reverse") -> np.ndarray:
    r"""RLOO (any G, incl. inf) on a binary question with ``E[r|a] - E[r|b] = reward_gap > 0``.

    RLOO's expected advantage difference is the reward gap at every ``G``, so the reverse penalty gives
    Eq. 14 with ``gamma = reward_gap``: ``beta (x - p) = reward_gap x (1 - x)``, and the direct penalty
    ``logit x = logit p + reward_gap/beta``. (RLOO at ``beta`` = shift-only at ``beta (G-1)/G``.)

    Parameters
    ----------
    pi_ref_a, beta : array_like
        ``p = pi_ref(a)`` in ``[0, 1]`` and ``beta > 0``.
    reward_gap : float, default 1.0
        ``E[r|a] - E[r|b] > 0``.
    penalty : {"reverse", "direct"}, default "reverse"
        The note's reverse KL(pi_ref || pi) or direct KL(pi || pi_ref).

    Returns
    -------
    numpy.ndarray
        ``x = pi(a)`` at the stationary point, broadcast over ``pi_ref_a`` and ``beta``.
    """
    p, beta = _check(pi_ref_a, beta)
    gap = float_array("reward_gap", reward_gap, finite=False)
    if np.any(~np.isfinite(gap)) or np.any(gap <= 0):
        raise InvalidInputError(f"reward_gap must be positive and finite (label a as the better answer), got "
                                f"{reward_gap!r}")
    with np.errstate(over="ignore"):
        scaled = beta / gap
    if not np.all(np.isfinite(scaled)):
        raise InvalidInputError(f"beta / reward_gap overflows (beta = {plain(beta)}, reward_gap = {plain(gap)}): "
                                "RLOO's condition is Eq. 14 at beta / reward_gap, which must be a finite number")
    if variants.note_penalty(penalty).is_reverse:
        return binary_pairwise(p, beta / gap)
    if variants.note_penalty(penalty).is_direct:
        return binary_pairwise_direct(p, beta / gap)
    raise InvalidInputError(f"penalty must be 'reverse' or 'direct', got {penalty!r}")


def binary_entropy_condition(x, pi_ref_a, beta, entropy_coef, margin=1.0, penalty: str = "reverse") -> np.ndarray:
    r"""The entropy-regularised binary condition ``F(x) = 0`` (two answers, ``Delta = P(a) - P(b)`` given).

    ``F(x) = Delta - beta (x - p)/(x (1 - x)) - c logit(x)`` (reverse penalty) or
    ``Delta - beta (logit x - logit p) - c logit(x)`` (direct), ``c`` the entropy coefficient. ``Delta`` is
    1 for G = 2 (scale, deterministic rewards) and the reward gap for RLOO at every G. ``F`` falls strictly
    on ``(0, 1)`` (sympy: :func:`grpo_theory.symbolic.derive_entropy_binary`), so the root is unique.

    Parameters
    ----------
    x : array_like
        ``pi(a)``, in ``(0, 1)``.
    pi_ref_a, beta, entropy_coef
        As for :func:`binary_entropy`, whose root condition this is.
    margin : array_like, default 1.0
        Likewise.
    penalty : {"reverse", "direct"}, default "reverse"
        Likewise.

    Returns
    -------
    numpy.ndarray
        ``F(x)``, broadcast over the arguments.
    """
    x = float_array("x", x, low=0.0, high=1.0, low_open=True, high_open=True)
    p, beta = _check(pi_ref_a, beta, bonus=True)
    margin = float_array("margin", margin)
    entropy_coef = float_array("entropy_coef", entropy_coef, low=0.0)
    logit_x = np.log(x) - np.log1p(-x)
    if variants.note_penalty(penalty).is_reverse:
        with np.errstate(over="ignore"):            # x near 0 or 1: the penalty's limit, +-inf
            pen = beta * (x - p) / (x * (1 - x))
    elif variants.note_penalty(penalty).is_direct:
        pen = beta * (logit_x - (np.log(p) - np.log1p(-p)))
    else:
        raise InvalidInputError(f"penalty must be 'reverse' or 'direct', got {penalty!r}")
    with np.errstate(over="ignore"):                # a huge entropy_coef: the bonus's limit, +-inf
        return margin - pen - entropy_coef * logit_x


def binary_entropy(pi_ref_a, beta, entropy_coef, margin=1.0, penalty: str = "reverse") -> np.ndarray:
    r"""``x = pi(a)`` with an entropy bonus: the root of :func:`binary_entropy_condition`.

    Direct penalty: ``logit x = (Delta + beta logit p)/(beta + c)`` in closed form (log pooling of
    ``pi_ref`` and the uniform policy); reverse: the unique root, by bisection. ``c = 0`` gives
    Eq. 14 (reverse, ``Delta = gamma``) and the G = 2 direct form.

    Parameters
    ----------
    pi_ref_a : array_like
        ``p = pi_ref(a)``, in ``[0, 1]``.
    beta : array_like
        ``beta > 0``.
    entropy_coef : array_like
        The entropy coefficient ``c >= 0``.
    margin : array_like, default 1.0
        ``Delta = P(a) - P(b)``.
    penalty : {"reverse", "direct"}, default "reverse"
        The note's reverse KL(pi_ref || pi) or direct KL(pi || pi_ref).

    Returns
    -------
    numpy.ndarray
        ``x = pi(a)``, broadcast over ``pi_ref_a`` and ``beta``.

    Examples
    --------
    >>> round(float(binary_entropy(0.3, 1e-12, 1.0, penalty="direct")), 6)   # beta -> 0: logit x = 1/c
    0.731059
    """
    p, beta = _check(pi_ref_a, beta, bonus=True)
    c = float_array("entropy_coef", entropy_coef, finite=False)
    if np.any(~np.isfinite(c)) or np.any(c < 0):
        raise InvalidInputError(f"entropy_coef must be finite and >= 0, got {entropy_coef!r}")
    margin = float_array("margin", margin)
    if variants.note_penalty(penalty).is_direct:
        with np.errstate(divide="ignore"):
            logit = (margin + beta * (np.log(p) - np.log1p(-p))) / (beta + c)
        with np.errstate(over="ignore"):        # exp(-logit) = inf where x underflows: x = 0, as it should
            return 1.0 / (1.0 + np.exp(-logit))
    tiny = 1e-300
    return _bisect(lambda x: binary_entropy_condition(x, p, beta, c, margin, penalty),
                   np.full(np.broadcast(p, beta, c).shape, tiny), np.full(np.broadcast(p, beta, c).shape, 1 - 1e-16))


def _group_size(group_size) -> int | float:
    """``G``: an integer ``>= 2`` up to :data:`MAX_BINARY_GROUP`, or ``+inf``; else an InvalidInputError."""
    group_size = unwrap_scalar(group_size)
    if isinstance(group_size, (bool, np.bool_)) or not isinstance(group_size, (int, float, np.integer, np.floating)):
        raise InvalidInputError(f"group_size must be an integer >= 2 or math.inf, got {plain(group_size)}")
    g = float(as_double("group_size", group_size))
    if g == math.inf:
        return math.inf
    if not (math.isfinite(g) and g >= 2 and g.is_integer()):
        raise InvalidInputError(f"group_size must be an integer >= 2 or math.inf, got {plain(group_size)}")
    if g > MAX_BINARY_GROUP:
        raise InvalidInputError(
            f"group_size = {int(g):,} is above the O(G) sum's limit of {MAX_BINARY_GROUP:,} (it needs {8 * int(g):,} "
            "bytes per x); use group_size=math.inf, the large-G limit (O(1/G) away at a fixed x in (0, 1))")
    return int(g)


def binary_preference(x, group_size: int | float) -> tuple[np.ndarray, np.ndarray]:
    r"""The note's O(G) binary form, vectorised over ``x = pi(a)``.

    Deterministic rewards ``r(a) > r(b)``, scale normalisation, ddof 0, eps 0; with
    ``k ~ Binomial(G-1, x)`` correct answers among the others,
    ``P_G(a|pi) = E[sqrt((G-1-k)/(k+1))]`` and ``P_G(b|pi) = -E[sqrt(k/(G-k))]``.
    ``G = inf`` gives ``sqrt((1-x)/x)`` and ``-sqrt(x/(1-x))``.

    This is an independent implementation of the formula printed in the note,
    used to cross-check :func:`grpo_theory.preference.level_expectations`.

    Parameters
    ----------
    x : array_like
        ``pi(a)``, the probability of the better output, in ``[0, 1]``.
    group_size : int or math.inf
        ``G``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(P_G(a|pi), P_G(b|pi))``, each of the shape of ``x``.

    Raises
    ------
    InvalidInputError
        When an entry of ``x`` is NaN or lies outside ``[0, 1]``, or ``group_size`` is not an integer ``>= 2``
        (at most :data:`MAX_BINARY_GROUP`) or ``math.inf``.

    Examples
    --------
    >>> pa, pb = binary_preference([0.2], float("inf"))
    >>> pa.round(12).tolist(), pb.round(12).tolist()
    ([2.0], [-0.5])
    """
    x = float_array("x", x, low=0.0, high=1.0)
    G = _group_size(group_size)
    if math.isinf(G):
        with np.errstate(divide="ignore", invalid="ignore"):
            pa = np.where((x > 0) & (x < 1), np.sqrt((1 - x) / np.where(x > 0, x, 1)), 0.0)
            pb = np.where((x > 0) & (x < 1), -np.sqrt(x / np.where(x < 1, 1 - x, 1)), 0.0)
        return pa, pb
    k = np.arange(G)
    with np.errstate(divide="ignore"):
        logx, log1mx = np.log(x)[..., None], np.log1p(-x)[..., None]
    logc = log_factorial(G - 1) - log_factorial(k) - log_factorial(G - 1 - k)
    with np.errstate(invalid="ignore"):             # 0 * log(0) where x = 0 or 1: np.where takes 0 there
        logpmf = logc + np.where(k > 0, k * logx, 0.0) + np.where(G - 1 - k > 0, (G - 1 - k) * log1mx, 0.0)
    logpmf = np.where(np.isnan(logpmf), -np.inf, logpmf)
    pmf = np.exp(logpmf)
    pa = pmf @ np.sqrt((G - 1 - k) / (k + 1.0))
    pb = -(pmf @ np.sqrt(k / (G - k.astype(float))))
    return pa, pb
