"""What every solver shares: the interface of a problem, root polishing, the stability verdict, dedupe.

A *problem* (:class:`~grpo_theory.solvers.classes.ClassProblem` for questions pooled into classes,
:class:`~grpo_theory.solvers.tree.TreeProblem` for token-level questions on an answer tree) works in
free logits ``x`` (one softmax gauge removed) and offers

* ``policy(x)``: the output policy ``pi``;
* ``kkt(x)``: the stationarity equations, zero exactly at a stationary point;
* ``residual(x)``: the max-norm residual of the stationarity condition at ``policy(x)``;
* ``free_flow(x)``: the on-policy logit flow in the free coordinates;
* ``stability(x)``: ``(stable, eigenvalues, why)`` from the flow's Jacobian.
"""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np

from .._numerics import optimize
from ..errors import InvalidInputError
from .results import RESIDUAL_TOL, StationaryPoint

__all__ = ["Problem", "polish", "point_at", "dedupe", "verdict", "sinh_grid"]


class Problem(Protocol):
    """The interface the shared solver steps rely on (see the module doc).

    :class:`~grpo_theory.solvers.classes.ClassProblem` and :class:`~grpo_theory.solvers.tree.TreeProblem`
    implement it in their free logits ``x``: ``policy(x)`` the policy ``pi`` (shape ``(K,)``),
    ``kkt(x)`` the stationarity equations (zero at a stationary point), ``residual(x)`` their
    max-norm residual, ``free_flow(x)`` the logit flow's velocity, ``stability(x)``
    ``(stable, eigenvalues, reason)``.
    """

    def policy(self, x: np.ndarray) -> np.ndarray: ...

    def kkt(self, x: np.ndarray) -> np.ndarray: ...

    def residual(self, x: np.ndarray) -> float: ...

    def free_flow(self, x: np.ndarray) -> np.ndarray: ...

    def stability(self, x: np.ndarray) -> tuple[bool | None, np.ndarray, str]: ...


def verdict(top: float, tol: float, what: str, *, undecided: bool = False,
            all_negative: bool = True) -> tuple[bool | None, str]:
    """First-order stability from the largest real part ``top`` of the Jacobian ``what``'s eigenvalues.

    Parameters
    ----------
    top : float
        The largest real part of the eigenvalues.
    tol : float
        ``|top| < tol`` leaves stability undecided.
    what : str
        The Jacobian's name, for the message.
    undecided : bool, default False
        Leave it undecided whatever ``top`` is.
    all_negative : bool, default True
        The sign of eigenvalues decided apart from ``top`` (classes of underflowing mass).

    Returns
    -------
    stable : bool or None
        True (all negative), False (one positive) or None (undecided).
    reason : str
        In words.

    Examples
    --------
    >>> verdict(-0.3, 1e-9, "J")
    (True, 'all eigenvalues of J have negative real part')
    >>> verdict(0.0, 1e-9, "J")[0] is None
    True
    """
    if abs(top) < tol or undecided:
        return None, f"an eigenvalue of {what} is ~0: stability undecided"
    if top < 0 and all_negative:
        return True, f"all eigenvalues of {what} have negative real part"
    return False, f"an eigenvalue of {what} has positive real part"


def point_at(problem: Problem, x: np.ndarray, method: str, nfev: int = 0, *,
             require_converged: bool = True) -> StationaryPoint | None:
    """The stationary point at free logits ``x``, with its residual and stability.

    Parameters
    ----------
    problem : Problem
    x : numpy.ndarray
        Free logits.
    method : str
        How ``x`` was found (stored in the point).
    nfev : int, default 0
        Evaluations used to find it.
    require_converged : bool, default True
        Return None when the residual is above ``RESIDUAL_TOL``; False: return the point with
        ``converged=False``.

    Returns
    -------
    StationaryPoint or None
    """
    pi = problem.policy(x)
    residual = problem.residual(x)
    converged = residual <= RESIDUAL_TOL
    if require_converged and not converged:
        return None
    stable, eig, why = problem.stability(x)
    return StationaryPoint(pi=pi, residual=residual, converged=converged, stable=stable, nfev=nfev,
                           method=method, message=why if converged else
                           f"residual {residual:.2e} above {RESIDUAL_TOL:g}; {why}", eigenvalues=eig)


def polish(problem: Problem, x0: np.ndarray, prefix: str) -> StationaryPoint | None:
    """Newton-type root finding on ``problem.kkt`` from ``x0`` (MINPACK hybrid, then Levenberg-Marquardt).

    Parameters
    ----------
    problem : Problem
    x0 : numpy.ndarray
        Starting free logits.
    prefix : str
        The start of the point's ``method`` (the root finder is appended).

    Returns
    -------
    StationaryPoint or None
        The converged point, or None when neither root finder converges.
    """
    calls = 0

    def kkt(x: np.ndarray) -> np.ndarray:
        # a Newton step can overshoot to non-finite logits (a NaN policy the problem refuses as input):
        # answer a huge residual there so that the root finder backs off instead of the search crashing
        if not np.all(np.isfinite(x)):
            return np.full(x.size, 1e100)
        try:
            with np.errstate(all="ignore"):
                r = problem.kkt(x)
        except InvalidInputError:       # a NaN policy from finite but overflowing logits: the same
            return np.full(x.size, 1e100)
        return np.where(np.isfinite(r), r, 1e100)

    for method in ("hybr", "lm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(kkt, x0, method=method,
                                options={"xtol": 1e-14} if method == "hybr" else {"xtol": 1e-15,
                                                                                  "ftol": 1e-15})
        calls += int(sol.get("nfev", 0))
        if not np.all(np.isfinite(sol.x)):
            continue
        pt = point_at(problem, sol.x, f"{prefix}+{method}", calls)
        if pt is not None:
            return pt
    return None


def dedupe(points: list[StationaryPoint], tol: float = 1e-7) -> list[StationaryPoint]:
    """``points`` without repeats (same ``boundary`` flag and ``pi`` within ``tol`` in max norm).

    Parameters
    ----------
    points : list of StationaryPoint
    tol : float, default 1e-7

    Returns
    -------
    list of StationaryPoint
        The first of each group of repeats, in the order given.
    """
    kept: list[StationaryPoint] = []
    for p in points:
        if not any(np.max(np.abs(p.pi - k.pi)) < tol and p.boundary == k.boundary for k in kept):
            kept.append(p)
    return kept


def sinh_grid(center: float, lo: float, hi: float, n: int, scale: float = 0.02) -> np.ndarray:
    """Grid on [lo, hi], dense (spacing ~ scale * dt) near ``center``, geometric far away.

    Parameters
    ----------
    center : float
        Where the grid is densest (clipped into ``[lo, hi]``).
    lo, hi : float
        The ends, both on the grid.
    n : int
        Number of points.
    scale : float, default 0.02
        Spacing scale near ``center``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Increasing.

    Examples
    --------
    >>> sinh_grid(0.0, -100.0, 100.0, 5).round(3).tolist()     # middle points: 0.02 sinh(asinh(5000)/2)
    [-100.0, -1.0, 0.0, 1.0, 100.0]
    """
    center = min(max(center, lo), hi)
    t = np.linspace(np.arcsinh((lo - center) / scale), np.arcsinh((hi - center) / scale), n)
    z = center + scale * np.sinh(t)
    z[0], z[-1] = lo, hi
    return z


