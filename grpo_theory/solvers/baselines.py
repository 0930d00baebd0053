r"""Baselines: RLHF (logarithmic pooling, Eq. 3-4) and NLHF (Nash equilibrium, Eq. 5)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._checks import QUESTION, arr, checked, num
from .._numerics import logsumexp, optimize
from .._validate import as_double, float_array, unwrap_scalar
from ..errors import InvalidInputError
from ..problem import Question, as_question, validate_policy, validate_probability_vector
from .results import RESIDUAL_TOL, StationaryPoint

__all__ = ["log_pooling", "rlhf_optimum", "nash_equilibrium", "nash_residual"]


def _check_beta(beta) -> float:
    beta = as_double("beta", unwrap_scalar(beta))   # an int beyond 1.8e308, a longdouble a double cannot hold
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating, np.integer)) \
            or not math.isfinite(beta) or beta <= 0:
        raise InvalidInputError(f"beta must be a positive finite number, got {beta!r}")
    return float(beta)


#: Smallest beta the NLHF solvers take: ``P(o > pi)/beta`` (up to ``1/beta``) is a finite double from it on.
NASH_MIN_BETA = float(np.nextafter(1.0 / np.finfo(np.float64).max, 1.0))
#: Outputs (of distinct preference rows) above which ``nash_equilibrium`` refuses up front: 1,000 take 3 s of CPU,
#: 3,000 ran over 75 s of wall (18.6 s of CPU when killed), about n^3.
NASH_MAX_OUTPUTS = 1_500


def _check_nash_beta(beta) -> float:
    """:func:`_check_beta`, and ``beta >= NASH_MIN_BETA`` (below it ``P(o > pi)/beta`` overflows a double)."""
    beta = _check_beta(beta)
    if beta < NASH_MIN_BETA:
        raise InvalidInputError(f"beta = {beta!r} is below {NASH_MIN_BETA:.4g}, the smallest beta for which "
                                "P(o > pi)/beta (up to 1/beta) is a finite double; the computation is in double "
                                f"precision: give beta >= {NASH_MIN_BETA:.4g}")
    return beta


def log_pooling(pi_ref, rewards, beta: float) -> np.ndarray:
    r"""RLHF's optimum: ``pi(o) ∝ pi_ref(o) exp(r(o)/beta)`` (Eq. 4), computed in log space.

    Parameters
    ----------
    pi_ref : array_like, shape (K,)
        The reference policy.
    rewards : array_like, shape (K,)
        (Expected) reward ``r(o)`` per output; no broadcasting, since the normaliser couples the
        outputs.
    beta : float
        The KL weight, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (K,)
        The RLHF policy; 0 wherever ``pi_ref`` is 0.

    Raises
    ------
    InvalidInputError
        When ``pi_ref`` is not a probability vector, ``rewards`` is not finite with its shape, or
        ``beta`` is not a positive finite number.

    Examples
    --------
    >>> pi = log_pooling([0.2, 0.8], [1, 0], 0.5)      # odds 0.25 e^2
    >>> round(float(pi[0]), 4)
    0.6488
    """
    pi_ref = validate_probability_vector("pi_ref", pi_ref)
    r = float_array("rewards", rewards, finite=False)       # text, bools, None, generators: refused by name
    if r.shape != pi_ref.shape or not np.all(np.isfinite(r)):
        raise InvalidInputError(f"rewards must be finite with shape {pi_ref.shape}, got {rewards!r}")
    beta = _check_beta(beta)
    # Shift by the best reward on the support first: (r - r_max)/beta <= 0 can only underflow
    # (to -inf, i.e. no mass), never overflow, even for r = 1e300 and beta = 1e-300.
    r_max = float(np.max(r[pi_ref > 0]))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        logits = np.log(pi_ref) + (r - r_max) / beta
    logits = np.where(pi_ref > 0, logits, -np.inf)
    return np.exp(logits - logsumexp(logits))


@checked(q=QUESTION)
def rlhf_optimum(q: Question, beta: float) -> StationaryPoint:
    r"""RLHF's optimum for ``q`` as a :class:`StationaryPoint`, like :func:`nash_equilibrium`: :func:`log_pooling`
    of ``q.pi_ref`` with the expected rewards ``E[r | o]``.

    Parameters
    ----------
    q : Question
        A question with a reward law.
    beta : float
        The KL weight, ``> 0``.

    Returns
    -------
    StationaryPoint
        ``pi ∝ pi_ref exp(r/beta)`` (``method="log-pooling"``); ``residual`` is RLHF's stationarity residual
        ``max_o pi(o) |g(o) - E_pi g| / beta`` with ``g = r - beta log(pi/pi_ref)`` (0 up to rounding); unique
        and stable (the objective ``E_pi r - beta KL(pi || pi_ref)`` is strictly concave).

    Raises
    ------
    InvalidInputError
        For a preference-matrix question (no reward to pool) or an invalid ``beta``.

    Examples
    --------
    >>> from grpo_theory import Question
    >>> pt = rlhf_optimum(Question([0.2, 0.8], rewards=[1, 0]), 0.5)
    >>> round(float(pt.pi[0]), 4), pt.method, pt.status
    (0.6488, 'log-pooling', 'converged')
    """
    if not q.has_reward_law:
        raise InvalidInputError("rlhf_optimum needs a reward law (rewards= or reward_levels=); a preference matrix "
                                "has no reward to pool (see nash_equilibrium)")
    r = q.expected_reward
    pi = log_pooling(q.pi_ref, r, beta)
    beta = _check_beta(beta)
    s = pi > 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        g = r[s] - beta * (np.log(pi[s]) - np.log(q.pi_ref[s]))
        residual = float(np.max(pi[s] * np.abs(g - pi[s] @ g)) / beta)
    return StationaryPoint(pi=pi, residual=residual, converged=residual <= RESIDUAL_TOL, stable=True, nfev=0,
                           method="log-pooling", message="the closed form (Eq. 4): unique, strictly concave objective")


@checked(q=QUESTION, beta=num(0, low_open=True), pi=arr(ndim=1))
def nash_residual(q: Question, beta: float, pi) -> float:
    """``max_o |pi(o) - pi_ref(o) exp(P(o > pi)/beta) / Z|`` for the NLHF fixed point.

    Parameters
    ----------
    q : Question
        The question: ``pi_ref`` and the pairwise preferences ``P(o > o')`` (its preference matrix, or from its
        reward law).
    beta : float
        The KL weight ``beta > 0`` of the regularised game.
    pi : array_like, shape (K,)
        The policy whose residual is measured.

    Returns
    -------
    float
        0 exactly at the Nash equilibrium of :func:`nash_equilibrium`.

    Raises
    ------
    InvalidInputError
        When ``pi`` is not a probability vector of one entry per output, or ``beta`` is below
        :data:`NASH_MIN_BETA` (5.6e-309).
    """
    beta = _check_nash_beta(beta)
    pi = validate_policy("pi", pi, q.n_outputs)
    M = q.pairwise_preference()
    with np.errstate(divide="ignore"):
        logits = np.log(q.pi_ref) + (M @ pi) / beta
    return float(np.max(np.abs(pi - np.exp(logits - logsumexp(logits)))))


def _reward_classes(q: Question):
    """``(class of each output, the question of the classes)`` when outputs share their reward law.

    At the NLHF equilibrium ``log(pi/pi_ref) - (M pi)/beta`` is constant, and ``M``'s row depends on an output
    only through its reward law, so ``pi`` keeps ``pi_ref``'s proportions inside a class: the equilibrium of the
    classes (``pi_ref`` summed per class) gives it. ``None`` when every output is its own class."""
    if not q.has_reward_law:
        return None
    rows, cls = np.unique(q.reward_probs, axis=0, return_inverse=True)
    if len(rows) == q.n_outputs:
        return None
    w = np.bincount(cls.ravel(), weights=q.pi_ref, minlength=len(rows))
    return cls.ravel(), Question(w, reward_levels=q.reward_levels, reward_probs=rows)


#: Largest max-norm of the equilibrium's log-space equations that MINPACK's answer is taken with when it reports
#: no success; its converged answers are within 1e-10, its stalls 1 to 10^3 off (1,500 random questions).
_NASH_LOG_TOL = 1e-6


def _nash_newton(equations, eta: np.ndarray, log_pi, Ms: np.ndarray, beta: float) -> tuple[np.ndarray, int]:
    """Newton's method with step halving on ``equations`` (the NLHF equilibrium's log-odds form), from ``eta``;
    the Jacobian is exact: ``du_o/deta_j = delta_oj - pi_j - pi_j (Ms[o, j] - (Ms pi)_o)/beta`` for ``j`` free."""
    best, norm, steps = eta, float(np.abs(equations(eta)).max()), 0
    for _ in range(100):
        pi = np.exp(log_pi(best))
        mp = Ms @ pi
        du = np.eye(pi.size)[:, :-1] - pi[None, :-1] - pi[None, :-1] * (Ms[:, :-1] - mp[:, None]) / beta
        jac = du[:-1] - du[-1]
        try:
            step = np.linalg.solve(jac, -equations(best))
        except np.linalg.LinAlgError:
            break
        t, improved = 1.0, False
        while t > 1e-6:
            trial = best + t * step
            steps += 1
            n = float(np.abs(equations(trial)).max()) if np.all(np.isfinite(trial)) else math.inf
            if n < norm:
                best, norm, improved = trial, n, True
                break
            t /= 2
        if not improved or norm <= 1e-12:
            break
    return best, steps


@checked(q=QUESTION)
def nash_equilibrium(q: Question, beta: float) -> StationaryPoint:
    r"""NLHF: the unique symmetric Nash equilibrium of the regularised preference game (Eq. 5).

    ``pi(o) ∝ pi_ref(o) exp(P(o > pi)/beta)`` with ``P(o > pi) = sum_o' pi(o') M[o, o']``
    and ``M = q.pairwise_preference()`` (ties counted half). Solved by Newton-type
    root finding on the logits of the support of ``pi_ref``, with a damped
    fixed-point iteration as a fallback; ``converged`` reports the residual test.

    Parameters
    ----------
    q : Question
        Any question (reward law or preference matrix): only ``M`` enters.
    beta : float
        The KL weight, ``> 0``.

    Returns
    -------
    StationaryPoint
        The equilibrium, ``stable=True`` when converged (the regularised game is strictly
        concave-convex, so the equilibrium is unique).

    Raises
    ------
    InvalidInputError
        When ``beta`` is not a positive finite number, or is below :data:`NASH_MIN_BETA` (5.6e-309), where
        ``P(o > pi)/beta`` overflows a double.

    Examples
    --------
    >>> from grpo_theory import Question
    >>> eq = nash_equilibrium(Question([0.2, 0.8], rewards=[1, 0]), 0.5)   # odds 0.25 e^(0.5/beta)
    >>> round(float(eq.pi[0]), 4), eq.converged
    (0.4046, True)
    """
    q = as_question(q)
    beta = _check_nash_beta(beta)
    pooled = _reward_classes(q)
    if pooled is not None:                              # solve on the classes: K outputs, C << K classes
        cls, qc = pooled
        eq = nash_equilibrium(qc, beta)
        w = qc.pi_ref[cls]
        pi = np.where(w > 0, q.pi_ref / np.where(w > 0, w, 1.0), 0.0) * eq.pi[cls]
        return StationaryPoint(pi=pi, residual=eq.residual, converged=eq.converged, stable=eq.stable, nfev=eq.nfev,
                               method=eq.method + " on reward classes", message=eq.message)
    support = np.flatnonzero(q.pi_ref > 0)
    if support.size > NASH_MAX_OUTPUTS:                 # up front: Newton's Jacobian is n^2, its factorisation n^3
        raise InvalidInputError(
            f"nash_equilibrium: {support.size:,} outputs in pi_ref's support (outputs of distinct preference rows); the "
            f"root finder's Jacobian grows as n^2 and its solves as n^3 (1,000 outputs: 3 s of CPU; 3,000: over 75 s "
            f"of wall); the limit is {NASH_MAX_OUTPUTS:,}. Pool outputs that the preference treats alike into one")
    M = q.pairwise_preference()
    Ms = M[np.ix_(support, support)]
    log_p = np.log(q.pi_ref[support])

    def log_pi(eta):
        theta = np.append(eta, 0.0)
        return theta - logsumexp(theta)

    def equations(eta):
        lp = log_pi(eta)
        u = lp - log_p - (Ms @ np.exp(lp)) / beta      # constant across o at the equilibrium
        return u[:-1] - u[-1]

    def full(lp):
        pi = np.zeros(q.n_outputs)
        pi[support] = np.exp(lp)
        return pi

    eta0 = log_p[:-1] - log_p[-1]
    calls = 0
    if support.size > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(equations, eta0, method="hybr", options={"xtol": 1e-14})
        calls += int(sol.nfev)
        eta, method, finished = sol.x, "root-hybr", ""
        if not sol.success and np.all(np.isfinite(eta)) and float(np.abs(equations(eta)).max()) > _NASH_LOG_TOL:
            # MINPACK stopped short ("not making good progress") with the large masses right to the absolute
            # residual and masses below ~1e-30 wrong by many orders (their log-odds off by 1 to 10^3): Newton's
            # method on the same log-space equations, from there, puts every mass at its own relative precision
            eta, steps = _nash_newton(equations, eta, log_pi, Ms, beta)
            calls += steps
            finished = "; hybr stalled, finished by Newton's method on the log-odds"
        pi = full(log_pi(eta))
    else:
        pi, method, finished = full(np.zeros(1)), "single-output", ""
    residual = nash_residual(q, beta, pi)
    if residual > RESIDUAL_TOL:
        # Damped fixed-point iteration (mirror-descent style): contracts for small steps.
        lp = np.log(q.pi_ref[support])
        for it in range(20_000):
            target = log_p + (Ms @ np.exp(lp)) / beta
            target -= logsumexp(target)
            lp = 0.5 * lp + 0.5 * target
            lp -= logsumexp(lp)
            calls += 1
            if it % 50 == 0 and nash_residual(q, beta, full(lp)) <= RESIDUAL_TOL:
                break
        pi, method, finished = full(lp), "damped-fixed-point", ""
        eta = lp[:-1] - lp[-1]
        if support.size > 1 and float(np.abs(equations(eta)).max()) > _NASH_LOG_TOL:
            # the iteration stops on the absolute residual, with the log-odds of masses below ~1e-30 halfway
            # (each step halves their error): Newton's method finishes them, as after hybr above
            eta, steps = _nash_newton(equations, eta, log_pi, Ms, beta)
            calls += steps
            pi, finished = full(log_pi(eta)), "; the damped iteration finished by Newton's method on the log-odds"
        residual = nash_residual(q, beta, pi)
    converged = residual <= RESIDUAL_TOL
    return StationaryPoint(pi=pi, residual=residual, converged=converged, stable=True if converged else None,
                           nfev=calls, method=method,
                           message=("unique equilibrium (strictly concave-convex regularised game)"
                                    if converged else f"residual {residual:.2e} above tolerance") + finished)
