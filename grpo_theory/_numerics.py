"""Small numpy-only numerical helpers used on hot paths.

scipy's ``logsumexp``/``expit`` carry an array-API dispatch overhead that dominates on the
3-9 element arrays the solvers work with (78% of Figure 8's time was spent there), and
importing ``scipy.special`` alone costs about as much as importing numpy. These plain
versions give the same values (bit-identical for ``logsumexp`` on finite input) and keep
``import grpo_theory`` light; scipy is imported lazily where a solver needs it.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import TheoryWarning

__all__ = ["logsumexp", "expit", "logit", "log_factorial", "optimize", "solve_ivp", "integrate_until_slow", "GuardedEuler",
           "IntegrationFallbackWarning", "CpuBudgetSpent", "within_cpu"]


class IntegrationFallbackWarning(TheoryWarning):
    """LSODA failed and the flow was integrated with a stiff solver (BDF/Radau) instead."""


def logsumexp(a, axis=None, keepdims: bool = False) -> np.ndarray:
    """``log(sum(exp(a)))`` along ``axis``, stable for large and ``-inf`` entries."""
    a = np.asarray(a, dtype=float)
    m = a.max(axis=axis, keepdims=True)
    if np.isfinite(m).all():
        out = np.log(np.exp(a - m).sum(axis=axis, keepdims=True)) + m
    else:                                           # all -inf along a slice (or an inf entry)
        m = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(np.exp(a - m).sum(axis=axis, keepdims=True)) + m
    if not keepdims:
        out = out.squeeze(axis=axis) if axis is not None else out.reshape(())
    return out if out.ndim else out[()]


def expit(z):
    """The logistic function ``1/(1 + exp(-z))`` without overflow warnings."""
    z = np.asarray(z, dtype=float)
    with np.errstate(over="ignore"):
        out = np.where(z >= 0, 1.0 / (1.0 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))))
    return out if out.ndim else float(out)


def logit(p) -> np.ndarray:
    """The inverse of :func:`expit`, ``log(p / (1 - p))``, elementwise (``-inf`` at 0, ``inf`` at 1)."""
    p = np.asarray(p, dtype=float)
    return np.log(p) - np.log1p(-p)


_LOG_FACTORIAL = np.array([math.lgamma(n + 1.0) for n in range(257)])


def log_factorial(n) -> np.ndarray:
    """``log(n!)`` for integer-valued arrays (exact table up to 256, ``lgamma`` beyond)."""
    n = np.asarray(n)
    if n.size and int(np.max(n)) <= 256:
        return _LOG_FACTORIAL[n.astype(np.int64)]
    return np.vectorize(lambda v: math.lgamma(float(v) + 1.0), otypes=[float])(n)


class _LazyModule:
    """A module imported on first attribute access (scipy's solvers cost ~0.2-0.4 s to import)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr):
        import importlib

        return getattr(importlib.import_module(self._name), attr)


#: ``scipy.optimize``, imported when a solver first runs.
optimize = _LazyModule("scipy.optimize")


def solve_ivp(*args, **kwargs):
    """``scipy.integrate.solve_ivp``, imported on first use."""
    from scipy.integrate import solve_ivp as _solve_ivp

    return _solve_ivp(*args, **kwargs)


def integrate_until_slow(rhs, y0, t_max: float, speed: float | None, max_steps: int = 20_000):
    """Integrate ``dy/dt = rhs(y)`` with LSODA from ``y0`` until ``t_max`` or until it is slower than ``speed``.

    LSODA is stepped by hand and the speed is judged from each accepted step's secant
    ``|y_new - y_old| / dt``: an event function would cost one more evaluation of ``rhs`` per step
    (a third of all evaluations) for a stopping rule that needs no precision. ``speed=None`` runs
    to ``t_max``. At most ``max_steps`` steps are taken: a discontinuous field (a KL clamp, the KL in
    the reward with no epsilon) makes LSODA chatter at the jump with ever smaller steps. Chatter that
    goes nowhere ends the integration early: over each window of ``_CHATTER_WINDOW`` steps, when the
    net move is under 1% of the path length (back and forth across the jump) and, at that net rate,
    the rest of the ``max_steps`` budget would move ``y`` by less than ``_CHATTER_REACH`` (relative),
    the end is within that much of where the full budget would have ended. Steps held tiny for a whole
    window, so that at their mean length the rest of the budget would cover less than ``_STALL_SPAN`` of
    the time left and, at the window's net rate, move ``y`` by less than ``_STALL_REACH``, restart the
    solver from where it is (LSODA can hold on to a step cut short by a jump after the field has turned
    smooth); held tiny again in the window right after, the flow is a sliding motion along a jump and
    the integration ends: the budget's end would be an arbitrary point of that creep, as this one is.
    Returns the final ``y``.
    """
    import warnings

    from scipy.integrate import BDF, LSODA

    solver = LSODA(lambda _t, y: rhs(y), 0.0, np.asarray(y0, dtype=float), t_max, rtol=1e-8, atol=1e-10)
    steps = 0
    y_window, t_window, path = solver.y.copy(), solver.t, 0.0
    restarted = -1
    # LSODA's own "lsoda: Repeated convergence failures ..." is not shown: a failure is reported below, once, as
    # the project's IntegrationFallbackWarning (one filter for the whole loop, not one per step)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="lsoda:", category=UserWarning)
        while solver.status == "running" and steps < max_steps:
            steps += 1
            t_old, y_old = solver.t, solver.y.copy()
            try:
                message = solver.step()
            except RuntimeError as exc:          # LSODA's "Unexpected istate": a failed step, not a user error
                solver.status, message = "failed", str(exc)
            if solver.status == "failed":
                if isinstance(solver, GuardedEuler):
                    raise RuntimeError(f"flow integration failed with LSODA, BDF and a guarded Euler: {message}")
                if isinstance(solver, BDF):
                    # an implicit solver asked for a step below the spacing of doubles: a jump or a kink of the
                    # field that it cannot step over; explicit steps of bounded length can
                    warnings.warn(f"BDF failed at t = {t_old:.6g} ({message}); continuing with a guarded Euler "
                                  "(steps that move y by at most 1e-3)", IntegrationFallbackWarning, stacklevel=2)
                    solver = GuardedEuler(lambda _t, y: rhs(y), t_old, y_old, t_max)
                    continue
                warnings.warn(f"LSODA failed at t = {t_old:.6g} ({message}); continuing with the stiff BDF solver",
                              IntegrationFallbackWarning, stacklevel=2)
                solver = BDF(lambda _t, y: rhs(y), t_old, y_old, t_max, rtol=1e-8, atol=1e-10)
                continue
            dt = solver.t - t_old
            move = float(np.max(np.abs(solver.y - y_old)))
            if speed is not None and dt > 0 and move < speed * dt:
                break
            path += move
            if steps % _CHATTER_WINDOW == 0:
                net = float(np.max(np.abs(solver.y - y_window)))
                left = (max_steps - steps) / _CHATTER_WINDOW             # windows left in the budget
                size = 1.0 + float(np.max(np.abs(solver.y)))
                if net < 0.01 * path and net * left < _CHATTER_REACH * size:
                    break
                if (solver.t - t_window) * left < _STALL_SPAN * (t_max - solver.t) and net * left < _STALL_REACH * size:
                    if restarted == steps - _CHATTER_WINDOW:
                        break                    # held tiny again right after a fresh start: a creep along a jump
                    # LSODA can keep a step cut short by a jump long after the field has turned smooth (a
                    # collapse whose logits then run at a constant speed): a fresh start picks its own step
                    solver = type(solver)(lambda _t, y: rhs(y), solver.t, solver.y.copy(), t_max, rtol=1e-8, atol=1e-10)
                    restarted = steps
                y_window, t_window, path = solver.y.copy(), solver.t, 0.0
    return solver.y


class GuardedEuler:
    """Explicit Euler whose every step moves ``y`` by ``reach`` (relative to ``1 + |y|``) at most: the last
    resort of :func:`integrate_until_slow` where LSODA and BDF fail at a jump or a kink of the field.

    It has the interface the loop there uses (``step()``, ``t``, ``y``, ``status``): ``dt = reach (1 + |y|) /
    |f|``, so where the field is slow the steps are long (and the loop's speed test ``move < speed dt`` holds
    exactly when ``|f| < speed``), and at a jump it chatters across it within ``reach``, which the loop's chatter
    test ends. A non-finite field fails the step, as a scipy solver would.
    """

    def __init__(self, fun, t0: float, y0, t_bound: float, rtol: float = 0.0, atol: float = 0.0,
                 reach: float = 1e-3) -> None:
        del rtol, atol                                   # the signature of scipy's solvers (restarts use it)
        self.fun, self.t, self.y, self.t_bound, self.reach = fun, float(t0), np.array(y0, float), t_bound, reach
        self.status = "running" if self.t < t_bound else "finished"

    def step(self) -> str | None:
        f = np.asarray(self.fun(self.t, self.y), dtype=float)
        if not np.all(np.isfinite(f)):
            self.status = "failed"
            return "the field is not finite"
        size = float(np.max(np.abs(f)))
        limit = self.reach * (1.0 + float(np.max(np.abs(self.y))))
        dt = self.t_bound - self.t if size == 0.0 else min(self.t_bound - self.t, limit / size)
        self.y = self.y + dt * f
        self.t += dt
        if self.t >= self.t_bound:
            self.status = "finished"
        return None


#: Steps per window of :func:`integrate_until_slow`'s chatter test.
_CHATTER_WINDOW = 200
#: Relative move below which the rest of the step budget is not spent on chatter.
_CHATTER_REACH = 1e-6
#: Share of the time left below which the rest of the step budget, at the window's mean step, counts as
#: stalled: LSODA held to tiny steps (fuzz seed 117: a constant field stepped at 2.6e-6 from t = 1865 on; seed
#: 167: a sliding motion along abs's kink, t ~ 1e-4 after 20,000 steps). A stall first restarts the solver.
_STALL_SPAN = 1e-3
#: ... provided the rest of the budget would also move ``y`` by less than this (relative) at the window's rate.
_STALL_REACH = 1e-4


class CpuBudgetSpent(Exception):
    """Raised by a right-hand side wrapped by :func:`within_cpu` once its budget of CPU seconds is spent; ``t`` is
    the flow time of the last evaluation (how far the integrator got)."""

    def __init__(self, t: float, seconds: float) -> None:
        super().__init__(f"{seconds:g} s of CPU spent at t = {t:g}")
        self.t, self.seconds = t, seconds


def within_cpu(rhs, seconds: float):
    """``rhs(t, y)`` that raises :class:`CpuBudgetSpent` once ``seconds`` of this process's CPU time have passed
    since the wrapper was made: an integrator that chatters at a jump of its field takes ever smaller steps and
    would otherwise run for hours (the clock is read every 64 evaluations)."""
    import time

    start, calls, reached = time.process_time(), 0, 0.0

    def timed(t, y):
        nonlocal calls, reached
        calls += 1
        if calls % 64 == 0 and time.process_time() - start > seconds:
            raise CpuBudgetSpent(reached, seconds)
        reached = max(reached, float(t))
        return rhs(t, y)
    return timed
