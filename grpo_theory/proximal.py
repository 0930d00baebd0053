r"""The exact proximal iteration and the arcsin potential.

Proximal map (the note's definition of a stationary policy, iterated):

    pi_n = argmax_pi  sum_o pi(o) P_G(o | pi_{n-1}) - beta D(pi)

* direct penalty, ``D = KL(pi || pi_ref)``: ``pi_n ∝ pi_ref exp(P_G(. | pi_{n-1}) / beta)``. For
  binary rewards at large G with ``variance_eps`` this is the success-probability
  recurrence of Mroueh (arXiv 2503.06639).
* reverse penalty, ``D = KL(pi_ref || pi)`` (the expected gradient of GRPO's k3
  term): ``pi_n(o) = beta pi_ref(o) / (lambda - P_G(o | pi_{n-1}))`` with ``lambda`` the
  unique value above ``max_o P_G`` that normalises it.

Its fixed points are exactly the stationary points (same equations); their
stability under the map (spectral radius of its Jacobian < 1) can differ from
their stability under the gradient flow, and the map can have period-2 cycles.

Potential. With rewards in {0, 1} (possibly random, success probability ``s(o)``)
and ``G = inf``, ``P_inf(o | pi) = (s(o) - p)/sqrt(p (1 - p) + eps)`` with ``p = E_pi s``
is the gradient on the simplex of ``Phi(p)``, ``Phi'(p) = 1/sqrt(p(1-p) + eps)``:
``Phi(p) = arcsin((2p - 1)/sqrt(1 + 4 eps)) + arcsin(1/sqrt(1 + 4 eps))``, which is
``2 arcsin sqrt(p)`` at ``eps = 0``. Then the logit flow is gradient ascent of
``F(pi) = Phi(p) - beta D(pi)``: stable points are local maxima of ``F``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import MAX_STEPS, OBJECTIVE, POSITIVE_COUNT, QUESTION, arr, checked, num, checked_record
from ._numerics import expit, logsumexp, optimize
from .preference import reward_preference
from ._validate import float_array, integer, number
from .problem import (STATIONARY_OBJECTIVE, InvalidInputError, Objective, Question, validate_policy,
                      validate_probability_vector)
from .solvers import Z_CAP, ClassProblem, StationaryPoint, stationary_points
from .solvers.common import grid_around

__all__ = ["proximal_map", "map_fixed_points", "map_cycles", "MapFixedPoint", "MapCycle", "arcsin_potential",
           "potential_objective"]


def _reverse_argmax(pi_ref: np.ndarray, P: np.ndarray, beta: float) -> np.ndarray:
    """argmax sum pi P + beta sum pi_ref log pi on the simplex: pi = beta pi_ref/(lambda - P).

    ``lambda`` is the unique value above ``max P`` (over the support of ``pi_ref``) that
    normalises ``pi``: the sum falls from +inf to at most 1 at ``max P + beta``, with
    equality exactly when ``P`` is constant on the support (then ``pi = pi_ref``).
    """
    s = pi_ref > 0
    Ps = P[s]
    top = float(Ps.max())
    if float(Ps.min()) == top:
        return pi_ref / pi_ref.sum()
    # solve for u = lambda - max P in (0, beta] with the gaps d = max P - P: lambda itself loses beta to
    # rounding once max P >> beta (a policy near a vertex at G = inf gives P ~ 1e160; issue 21)
    d = top - Ps
    ref = pi_ref[s]

    def total(u):
        with np.errstate(divide="ignore"):     # u = 0 only if lo underflowed: the top term is +inf, as it must be
            return float(np.sum(beta * ref / (u + d))) - 1.0

    lo, hi = beta * 1e-300, beta
    while total(lo) < 0 and lo > 0:     # the top answers' reference mass below 1e-300: go further down
        lo *= 1e-300
    if not total(hi) <= 0:              # rounding at a near-constant P: widen by a hair
        hi = beta * (1 + 1e-9)
    u = optimize.brentq(total, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=2000)
    pi = np.zeros_like(pi_ref)
    pi[s] = beta * ref / (u + d)
    return pi / pi.sum()


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE)
def proximal_map(q: Question, obj: Objective):
    """The exact proximal map ``pi_{n-1} -> pi_n`` (see module doc) as a callable.

    Parameters
    ----------
    q : Question
        The question: its outputs, ``pi_ref`` and the reward of each output.
    obj : Objective
        The reverse or direct penalty; its ``variance_eps`` (Mroueh's epsilon inside the square root of the
        group variance) is the map's. Regularised: with ``beta = 0`` and no entropy bonus ``J`` is linear in
        ``pi`` and its maximiser a vertex (not unique under ties), so the map is refused
        (:class:`~grpo_theory.NoStationaryPolicy`).

    Returns
    -------
    callable
        ``step(pi_prev) -> pi``: the maximiser of ``J(pi; pi_prev)``, for a policy ``pi_prev`` of
        shape ``(K,)``.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.3, 0.7], rewards=[1, 0])
    >>> step = proximal_map(q, Objective(beta=1.0, group_size=2))
    >>> pi = q.pi_ref
    >>> for _ in range(60):
    ...     pi = step(pi)
    >>> round(float(pi[0]), 6)                       # Eq. 14's point, sqrt(0.3), is a fixed point
    0.547723
    """

    def step(pi_prev) -> np.ndarray:
        pi_prev = validate_policy("pi", pi_prev, q.n_outputs)
        P = reward_preference(q, obj, pi_prev)
        if obj.regime_variant.is_direct:
            with np.errstate(divide="ignore"):
                logits = np.log(q.pi_ref) + P / obj.beta
            return np.exp(logits - logsumexp(logits))
        return _reverse_argmax(q.pi_ref, P, obj.beta)

    return step


def _class_map(cp: ClassProblem):
    """The proximal map on class logits ``eta`` (``C - 1`` values, last class as reference)."""
    obj = cp.obj

    def f(eta: np.ndarray) -> np.ndarray:
        theta = np.append(eta, 0.0)
        log_pi = theta - logsumexp(theta)
        P = cp.class_preference(log_pi)
        if obj.regime_variant.is_direct:
            new = cp.log_p + P / obj.beta
        else:
            new = np.log(_reverse_argmax(cp.p, P, obj.beta))
        return new[:-1] - new[-1]

    return f


def _jac(f, x):
    n = x.size
    J = np.empty((n, n))
    for j in range(n):           # n = C - 1, small
        h = 1e-6 * max(1.0, abs(x[j]))
        e = np.zeros(n)
        e[j] = h
        J[:, j] = (f(x + e) - f(x - e)) / (2 * h)
    return J


@dataclass(frozen=True)
@checked_record
class MapFixedPoint:
    """A fixed point of the proximal map, with its stability under the map and under the flow.

    Attributes
    ----------
    pi : numpy.ndarray, shape (K,)
        The policy (a stationary point).
    stable : bool or None
        Spectral radius of the map's Jacobian (in class logits) below 1; None within 1e-7 of 1.
    spectral_radius : float
        The largest ``|multiplier|``.
    multipliers : numpy.ndarray
        Eigenvalues of the map's Jacobian.
    flow_stable : bool or None
        The stability of the same policy under the gradient flow.
    point : StationaryPoint
        The stationary point it is.
    """

    pi: np.ndarray
    stable: bool | None
    spectral_radius: float
    multipliers: np.ndarray
    flow_stable: bool | None
    point: StationaryPoint


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE)
def map_fixed_points(q: Question, obj: Objective) -> list[MapFixedPoint]:
    """Fixed points of the proximal map with their stability (and the flow's, for comparison).

    They are the stationary points; limit points at a vertex are not fixed points
    of the map (at a vertex every group ties, P = 0, and the map returns pi_ref).

    Parameters
    ----------
    q : Question
        The question whose proximal map is solved for fixed points.
    obj : Objective
        The objective of the map (its ``beta``, ``G``, penalty and estimator).

    Returns
    -------
    list of MapFixedPoint
        One per interior stationary point: the policy, its stability under the map (the spectral radius of the map's
        Jacobian in class logits, and the multipliers) and under the flow.

    Examples
    --------
    For a small ``pi_ref(a)`` a point can be stable under the flow but not under the map (the
    proximal iteration then leaves it for a 2-cycle, see :func:`map_cycles`):

    >>> import math
    >>> from grpo_theory import Objective, Question
    >>> q = Question([3e-3, 1 - 3e-3], rewards=[1, 0])
    >>> fps = map_fixed_points(q, Objective(beta=0.5, group_size=math.inf, penalty="direct"))
    >>> [(round(float(f.pi[0]), 4), f.stable, f.flow_stable) for f in fps]
    [(0.9427, False, False), (0.2424, False, True)]
    """
    cp = ClassProblem(q, obj)
    out = []
    for pt in stationary_points(q, obj):
        if pt.boundary:
            continue
        if cp.n_classes == 1:
            out.append(MapFixedPoint(pt.pi, True, 0.0, np.zeros(0), pt.stable, pt))
            continue
        mass = np.array([pt.pi[cp.class_of == c].sum() for c in range(cp.n_classes)])
        eta = np.log(mass[:-1]) - np.log(mass[-1])
        mult = np.linalg.eigvals(_jac(_class_map(cp), eta))
        rho = float(np.max(np.abs(mult)))
        stable = None if abs(rho - 1.0) < 1e-7 else bool(rho < 1.0)
        out.append(MapFixedPoint(pt.pi, stable, rho, mult, pt.stable, pt))
    return out


class MapCycle(list):
    """A cycle of the proximal map: a list of policies along the orbit, with its stability.

    Parameters
    ----------
    policies : iterable of numpy.ndarray
        The orbit's policies, in order.
    multiplier : float
        The derivative of the ``period``-fold map along the orbit, in class-logit coordinates.

    Attributes
    ----------
    multiplier : float
        As given.
    stable : bool or None
        ``|multiplier| < 1``; None when within 1e-7 of 1.
    """

    def __init__(self, policies, multiplier: float):
        super().__init__(policies)
        self.multiplier = float(multiplier)
        self.stable = None if abs(abs(multiplier) - 1) < 1e-7 else bool(abs(multiplier) < 1)


#: The most map evaluations :func:`map_cycles` makes (``period x n_grid``): about 0.2 ms each measured (period 16 x
#: 4,001: 12.7 s of CPU; 2 x 10^5, the limit before, over 75 s of wall), so about 20 s at the limit.
MAX_MAP_EVALUATIONS = 100_000


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE, period=POSITIVE_COUNT, n_grid=num(2, MAX_STEPS, integer=True))
def map_cycles(q: Question, obj: Objective, period: int = 2, *, n_grid: int = 4001) -> list[MapCycle]:
    """Cycles of the proximal map of the given period (two-class questions; exhaustive scan).

    Fixed points and cycles whose period is a proper divisor of ``period`` are left out. Beyond
    the first period doubling the map can be chaotic: cycles then exist but none attracts.

    Parameters
    ----------
    q : Question
        A two-class question.
    obj : Objective
        The objective of the map, as for :func:`map_fixed_points`.
    period : int, default 2
        The period sought, ``>= 2``.
    n_grid : int, default 4001
        Class logits scanned for roots of ``f^period(z) - z``.

    Returns
    -------
    list of MapCycle
        Each a list of ``period`` policies, ordered along the orbit, with its stability.

    Raises
    ------
    InvalidInputError
        When ``period < 2``, ``period x n_grid`` is above :data:`MAX_MAP_EVALUATIONS`, or the question does not
        have two classes.

    Examples
    --------
    For ``pi_ref = (3e-3, 1 - 3e-3)``, rewards ``(1, 0)``, the direct penalty at ``G = inf`` and
    ``beta = 0.5`` (the example of :func:`map_fixed_points`), ``map_cycles`` returns one stable
    2-cycle, ``pi(a)`` 0.1414 <-> 0.4836 (a scan of a few seconds; ``tests/test_dynamics.py``
    iterates the map to confirm it).
    """
    period = integer("period", period, low=2)
    n_grid = integer("n_grid", n_grid, low=11, high=10**7)
    if period * n_grid > MAX_MAP_EVALUATIONS:
        raise InvalidInputError(f"map_cycles evaluates the map period x n_grid = {period * n_grid:,} times (about "
                                f"0.2 ms each), above the limit of {MAX_MAP_EVALUATIONS:,}; give a smaller period "
                                f"or n_grid")
    cp = ClassProblem(q, obj)
    if cp.n_classes != 2:
        raise InvalidInputError(f"cycles are searched for two-class questions only; this one has {cp.n_classes}")
    f1 = _class_map(cp)

    def f(z: float) -> float:
        return float(f1(np.array([z]))[0])

    def fn(z: float, n: int) -> float:
        for _ in range(n):
            z = f(z)
        return z

    lo, hi = cp.logit_bounds()
    zs = grid_around(float(cp.log_p[0] - cp.log_p[1]), lo, hi, n_grid)
    vals = np.array([fn(z, period) - z for z in zs])
    roots = []
    for i in np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:])):
        if not (np.isfinite(vals[i]) and np.isfinite(vals[i + 1])):
            continue
        z = optimize.brentq(lambda z: fn(z, period) - z, zs[i], zs[i + 1], xtol=1e-13)
        # A sign change can also be a jump: past |z| ~ 745 the policy is a vertex in double
        # precision, every group ties and the map drops to pi_ref. Keep true roots only.
        orbit = [z]
        for _ in range(period):
            orbit.append(f(orbit[-1]))
        if max(abs(w) for w in orbit) < Z_CAP and abs(orbit[-1] - z) < 1e-8 * max(1.0, abs(z)):
            roots.append(z)
    cycles, seen = [], []
    for z in roots:
        orbit = [z]
        for _ in range(period - 1):
            orbit.append(f(orbit[-1]))
        # skip orbits whose true period is a proper divisor
        if any(abs(fn(z, d) - z) < 1e-8 for d in range(1, period) if period % d == 0):
            continue
        if any(min(abs(z - s) for s in c) < 1e-7 for c in seen):
            continue
        seen.append(orbit)
        mult = 1.0
        for w in orbit:
            h = 1e-6 * max(1.0, abs(w))
            mult *= (f(w + h) - f(w - h)) / (2 * h)
        cycles.append(MapCycle([cp.expand(np.array([expit(w), expit(-w)])) for w in orbit], mult))
    return cycles


@checked(p=arr(0, 1), variance_eps=num(0))
def arcsin_potential(p, variance_eps: float = 0.0) -> np.ndarray:
    """``Phi(p)`` with ``Phi'(p) = 1/sqrt(p(1-p) + eps)`` and ``Phi(0) = 0``; ``2 arcsin sqrt(p)`` at eps = 0.

    Parameters
    ----------
    p : array_like
        Success probabilities, in ``[0, 1]``.
    variance_eps : float, default 0.0
        ``eps >= 0``.

    Returns
    -------
    numpy.ndarray
        ``Phi(p)``, of the shape of ``p``.

    Raises
    ------
    InvalidInputError
        When ``p`` leaves ``[0, 1]`` or ``variance_eps < 0``.

    Examples
    --------
    >>> arcsin_potential([0.0, 0.5, 1.0]).round(6).tolist()      # 2 arcsin sqrt(p): 0, pi/2, pi
    [0.0, 1.570796, 3.141593]
    """
    p = float_array("p", p, low=0.0, high=1.0)
    variance_eps = number("variance_eps", variance_eps, low=0.0)
    s = math.sqrt(1.0 + 4.0 * variance_eps)
    return np.arcsin((2.0 * p - 1.0) / s) + math.asin(1.0 / s)


@checked(q=QUESTION, obj=OBJECTIVE, pi=arr(ndim=1))
def potential_objective(q: Question, obj: Objective, pi) -> float:
    """``F(pi) = Phi(E_pi s) - beta D(pi)``: the scalar objective whose logit gradient ascent is
    the large-G GRPO flow, for rewards in {0, 1} (``s(o)`` the success probability of ``o``).

    ``D`` is the penalty's divergence: KL(pi_ref || pi) (reverse) or KL(pi || pi_ref) (direct).

    Parameters
    ----------
    q : Question
        Rewards in ``{0, 1}``.
    obj : Objective
        ``G = inf``, scale normalisation, ``std_eps = 0``.
    pi : array_like, shape (K,)
        The policy at which ``F`` is evaluated.

    Returns
    -------
    float
        ``F(pi)``.

    Raises
    ------
    InvalidInputError
        Outside that setting, or when ``pi`` is not a probability vector.

    Examples
    --------
    >>> import math
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.2, 0.8], rewards=[1, 0])
    >>> round(potential_objective(q, Objective(beta=1.0, group_size=math.inf), q.pi_ref), 6)  # D = 0
    0.927295
    """
    if not obj.is_large_group or not obj.normalization_variant.scales or obj.std_eps != 0:
        raise InvalidInputError("the arcsin potential is for G = inf, scale normalisation, std_eps = 0; "
                                f"got {obj.describe()}")
    if not q.has_reward_law or set(q.reward_levels.tolist()) - {0.0, 1.0}:
        raise InvalidInputError(f"the arcsin potential needs rewards in {{0, 1}}; got levels {q.reward_levels}")
    pi = validate_probability_vector("pi", pi)
    if pi.shape != (q.n_outputs,):
        raise InvalidInputError(f"pi must be a vector of {q.n_outputs} probabilities (one per output), got shape "
                                f"{pi.shape}")
    success = q.reward_probs[:, list(q.reward_levels).index(1.0)] if 1.0 in q.reward_levels else \
        np.zeros(q.n_outputs)
    p = float(pi @ success)
    ref = q.pi_ref
    with np.errstate(divide="ignore", invalid="ignore"):
        if obj.regime_variant.is_direct:
            D = float(np.sum(np.where(pi > 0, pi * (np.log(pi) - np.log(ref)), 0.0)))
        else:
            D = float(np.sum(np.where(ref > 0, ref * (np.log(ref) - np.log(pi)), 0.0)))
    return float(arcsin_potential(p, obj.variance_eps)) - obj.beta * D
