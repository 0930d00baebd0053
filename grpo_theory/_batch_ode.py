"""Many small autonomous ODEs integrated at once, each with its own step size (Dormand-Prince 5(4)).

A figure that follows hundreds of flows from ``pi_ref`` (Figure 8: 244 three-class flows) spends most of
its time in the Python overhead of one small right-hand side after another under LSODA. Here the
flows are advanced together: one call of the stacked right-hand side per Runge-Kutta stage for every
flow still running, each flow with its own time, step size and error control (scipy's ``RK45``
formulas, initial step and step-size rule). A flow that needs too many steps (a stiff one: an explicit
method's stable step is then far below what accuracy asks) or whose right-hand side is not finite is
reported as not done, so that the caller integrates it with its stiff-safe one-at-a-time path.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["integrate_many_until_slow"]

# Dormand-Prince 5(4), as scipy.integrate.RK45 (FSAL: the 7th stage is f at the new point)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
)
_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])
_E = np.array([-71 / 57600, 0.0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40])
_SAFETY, _MIN_FACTOR, _MAX_FACTOR, _EXPONENT = 0.9, 0.2, 10.0, -1.0 / 5.0


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x * x, axis=1))


def integrate_many_until_slow(rhs: Callable[[np.ndarray, np.ndarray], np.ndarray], y0: np.ndarray, t_max: float,
                              speed: float | None, *, rtol: float = 1e-8, atol: float = 1e-10,
                              max_steps: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """Integrate ``dy_i/dt = f_i(y_i)`` for ``N`` flows together until ``t_max`` or until each is slower than ``speed``.

    The stopping rule is that of :func:`grpo_theory._numerics.integrate_until_slow`: a flow stops at the
    end of the first accepted step whose secant speed ``max |y_new - y_old| / dt`` is below ``speed``
    (``speed=None``: it runs to ``t_max``). Each flow has its own step size and error control, the
    tolerances applied per flow (the weighted RMS norm over the flow's own ``n`` coordinates), so a flow's
    path does not depend on the others in the batch.

    Parameters
    ----------
    rhs : callable
        ``rhs(y, rows)`` with ``y`` of shape ``(s, n)``, the states of flows ``rows`` (int array, shape
        ``(s,)``), returns their derivatives, shape ``(s, n)``.
    y0 : numpy.ndarray, shape (N, n)
        The starting states.
    t_max : float
        The end time, ``> 0``.
    speed : float or None
        The secant speed below which a flow stops.
    rtol, atol : float
        Tolerances of the local error, per flow (as LSODA's in ``integrate_until_slow``).
    max_steps : int, default 4000
        Step attempts (accepted or rejected) after which a flow is given up (``done`` False).

    Returns
    -------
    y : numpy.ndarray, shape (N, n)
        The final states (for a flow given up: where it stopped).
    done : numpy.ndarray of bool, shape (N,)
        False for a flow given up: too many steps (stiff), a step size underflow, or a non-finite
        right-hand side; the caller integrates those another way.

    Examples
    --------
    >>> import numpy as np
    >>> k = np.array([1.0, 3.0])
    >>> y, done = integrate_many_until_slow(lambda y, rows: -k[rows, None] * y, np.ones((2, 1)), 2.0, None)
    >>> bool(done.all()), bool(np.allclose(y[:, 0], np.exp(-2.0 * k), rtol=1e-7))
    (True, True)
    """
    y = np.array(y0, dtype=float)
    N, n = y.shape
    t = np.zeros(N)
    done = np.zeros(N, dtype=bool)
    failed = np.zeros(N, dtype=bool)
    attempts = np.zeros(N, dtype=int)
    rejected = np.zeros(N, dtype=bool)
    rows = np.arange(N)
    with np.errstate(all="ignore"):
        f = np.asarray(rhs(y, rows), dtype=float).reshape(N, n)
        bad = ~np.isfinite(f).all(axis=1)
        failed |= bad
        h = _initial_step(rhs, y, f, rows, t_max, rtol, atol)
        failed |= ~np.isfinite(h)
        active = np.flatnonzero(~failed)
        while active.size:
            ya, fa, ha, ta = y[active], f[active], h[active], t[active]
            ha = np.minimum(ha, t_max - ta)
            K = [fa]
            for a in _A[1:]:
                K.append(np.asarray(rhs(ya + ha[:, None] * sum(c * k for c, k in zip(a, K)), active), dtype=float))
            y_new = ya + ha[:, None] * sum(b * k for b, k in zip(_B, K) if b != 0.0)
            f_new = np.asarray(rhs(y_new, active), dtype=float)
            K.append(f_new)
            err = ha[:, None] * sum(e * k for e, k in zip(_E, K) if e != 0.0)
            scale = atol + np.maximum(np.abs(ya), np.abs(y_new)) * rtol
            err_norm = _rms(err / scale)
            finite = np.isfinite(y_new).all(axis=1) & np.isfinite(f_new).all(axis=1) & np.isfinite(err_norm)
            ok = finite & (err_norm < 1.0)
            attempts[active] += 1
            # step-size update (scipy RK45): grow at most 10x after an accepted step (not at all right after
            # a rejection), shrink at least to 0.2x after a rejected one
            with np.errstate(divide="ignore"):
                grow = np.where(err_norm == 0, _MAX_FACTOR, np.minimum(_MAX_FACTOR, _SAFETY * err_norm**_EXPONENT))
            grow = np.where(rejected[active], np.minimum(1.0, grow), grow)
            shrink = np.maximum(_MIN_FACTOR, _SAFETY * err_norm**_EXPONENT)
            h[active] = np.where(ok, ha * grow, ha * np.where(np.isfinite(shrink), shrink, _MIN_FACTOR))
            rejected[active] = ~ok
            acc = active[ok]
            t_new = ta[ok] + ha[ok]
            t_new = np.where(ha[ok] >= t_max - ta[ok], t_max, t_new)
            slow = np.zeros(acc.size, dtype=bool) if speed is None else \
                np.max(np.abs(y_new[ok] - ya[ok]), axis=1) < speed * ha[ok]
            y[acc], f[acc], t[acc] = y_new[ok], f_new[ok], t_new
            rejected[acc] = False
            done[acc] = slow | (t_new >= t_max)
            tiny = h[active] < 10 * np.spacing(np.maximum(t[active], 1.0))
            failed[active] |= ~finite | (attempts[active] >= max_steps) | (tiny & ~done[active])
            failed &= ~done
            active = active[~done[active] & ~failed[active]]
    return y, done


def _initial_step(rhs, y0: np.ndarray, f0: np.ndarray, rows: np.ndarray, t_max: float, rtol: float,
                  atol: float) -> np.ndarray:
    """scipy's ``select_initial_step`` (Hairer, Norsett & Wanner, II.4) for order 5, per flow."""
    scale = atol + np.abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = np.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / np.where(d1 > 0, d1, 1.0))
    h0 = np.minimum(h0, t_max)
    f1 = np.asarray(rhs(y0 + h0[:, None] * f0, rows), dtype=float)
    d2 = _rms((f1 - f0) / scale) / h0
    big = np.maximum(d1, d2)
    h1 = np.where(big <= 1e-15, np.maximum(1e-6, h0 * 1e-3), (0.01 / np.where(big > 0, big, 1.0)) ** (1.0 / 5.0))
    return np.minimum(np.minimum(100 * h0, h1), t_max)
