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
from .results import RESIDUAL_TOL, StationaryPoint

__all__ = ["Problem", "polish", "point_at", "dedupe", "verdict", "sinh_grid"]


class Problem(Protocol):
    """The interface the shared solver steps rely on (see the module doc)."""

    def policy(self, x: np.ndarray) -> np.ndarray: ...

    def kkt(self, x: np.ndarray) -> np.ndarray: ...

    def residual(self, x: np.ndarray) -> float: ...

    def free_flow(self, x: np.ndarray) -> np.ndarray: ...

    def stability(self, x: np.ndarray) -> tuple[bool | None, np.ndarray, str]: ...


def verdict(top: float, tol: float, what: str, *, undecided: bool = False,
            all_negative: bool = True) -> tuple[bool | None, str]:
    """First-order stability from the largest real part ``top`` of the Jacobian ``what``'s eigenvalues.

    ``|top| < tol`` (or ``undecided``) leaves it undecided; ``all_negative`` carries the sign of
    eigenvalues that were decided apart from ``top`` (classes of underflowing mass).
    """
    if abs(top) < tol or undecided:
        return None, f"an eigenvalue of {what} is ~0: stability undecided"
    if top < 0 and all_negative:
        return True, f"all eigenvalues of {what} have negative real part"
    return False, f"an eigenvalue of {what} has positive real part"


def point_at(problem: Problem, x: np.ndarray, method: str, nfev: int = 0, *,
             require_converged: bool = True) -> StationaryPoint | None:
    """The stationary point at free logits ``x``; None if its residual is above ``RESIDUAL_TOL`` and
    ``require_converged`` (otherwise the point is returned with ``converged=False``)."""
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
    """Newton-type root finding on ``problem.kkt`` from ``x0`` (MINPACK hybrid, then Levenberg-Marquardt);
    the converged point, or None."""
    calls = 0
    for method in ("hybr", "lm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(problem.kkt, x0, method=method,
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
    """``points`` without repeats (same ``boundary`` flag and ``pi`` within ``tol`` in max norm)."""
    kept: list[StationaryPoint] = []
    for p in points:
        if not any(np.max(np.abs(p.pi - k.pi)) < tol and p.boundary == k.boundary for k in kept):
            kept.append(p)
    return kept


def sinh_grid(center: float, lo: float, hi: float, n: int, scale: float = 0.02) -> np.ndarray:
    """Grid on [lo, hi], dense (spacing ~ scale * dt) near ``center``, geometric far away."""
    center = min(max(center, lo), hi)
    t = np.linspace(np.arcsinh((lo - center) / scale), np.arcsinh((hi - center) / scale), n)
    z = center + scale * np.sinh(t)
    z[0], z[-1] = lo, hi
    return z


