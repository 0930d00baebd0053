"""Two classes: the scalar drift ``s(z) = g(a) - g(b)`` in the class logit ``z = log(pi(a)/pi(b))``.

The drift is scanned on a grid that provably contains every root (bounds from ``max |A_i|``,
:meth:`~grpo_theory.solvers.classes.ClassProblem.logit_bounds`), each sign change is refined with
Brent's method and tangencies are detected: the search is exhaustive. Where the flow can run into a
vertex (:func:`~grpo_theory.solvers.collapse.may_collapse`) the scan's ends report limit points.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import advantage
from .._numerics import expit, optimize
from .certify import Certificate
from .._checks import MAX_STEPS, POSITIVE_COUNT, checked, num
from ..errors import InvalidInputError
from .classes import Z_CAP, ClassProblem, class_problem, stationarity_residual
from .collapse import may_collapse
from .common import grid_around
from .gradient import note_residual
from .results import RESIDUAL_TOL, STABILITY_TOL, StationaryPoint

__all__ = ["two_class_points", "flow_root_from", "needs_log_space", "log_space"]


#: Class-logit magnitude beyond which the reverse penalty's ``beta pi_ref/pi`` leaves the range where
#: :data:`grpo_theory.kl.LOG_RATIO_FLOOR` (``e^{690}``) keeps it exact: from here the drift is taken in log space.
_LOG_SPACE_Z = 680.0


def _reverse_bounds_log(cp: ClassProblem) -> tuple[float, float] | None:
    """The reverse penalty's root bounds of :meth:`ClassProblem.logit_bounds`, with every product and quotient
    taken in logs: ``log((Delta_max + beta)/(beta p_c)) + 1``, finite for ``beta`` down to 5e-324; None where
    ``Delta_max`` is infinite (``G = inf``: :meth:`ClassProblem.logit_bounds` cuts at ``Z_CAP``)."""
    obj = cp.obj
    if cp.q.has_reward_law:
        with np.errstate(over="ignore"):
            span = float(cp.q.reward_levels.max() - cp.q.reward_levels.min())
        delta_max = 2.0 * obj.advantage_variant.bound(span, obj)         # max_abs_advantage, unchecked
    else:
        delta_max = 2.0
    if not math.isfinite(delta_max):      # G = inf (|P_G| unbounded) or an infinite span: the usual cut at Z_CAP
        return None
    top = math.log(delta_max + obj.beta) - math.log(obj.beta)
    return -(top - float(cp.log_p[0])) - 1.0, top - float(cp.log_p[1]) + 1.0


@checked(cp=class_problem())
def needs_log_space(cp: ClassProblem) -> bool:
    """Whether ``cp``'s roots may lie where the reverse penalty's coefficient ``beta pi_ref/pi`` is beyond
    the flows' floor (``beta`` below about 1e-290, or rewards near 1e300 with shift normalisation): the note's
    reverse penalty in the loss, no tie filtering or entropy bonus, and a root bound past ``|z| = 680``.

    Parameters
    ----------
    cp : ClassProblem
        The class problem.
    """
    obj = cp.obj
    if cp.n_classes != 2 or not obj.regime_variant.is_reverse or advantage.changes_regulariser(obj):
        return False
    bounds = _reverse_bounds_log(cp)
    return bounds is not None and max(-bounds[0], bounds[1]) > _LOG_SPACE_Z


class _LogSpaceProblem:
    """A two-class problem whose drift is evaluated in log space (reverse penalty), for tiny ``beta`` and huge
    rewards: ``s(z) = P(a) - P(b) + exp(log beta + log p_a - log pi_a) - exp(log beta + log p_b - log pi_b)``,
    with no floor on the log-ratio; every other attribute is the wrapped :class:`ClassProblem`'s."""

    def __init__(self, cp: ClassProblem) -> None:
        self._cp = cp
        self.log_beta = math.log(cp.obj.beta)

    def __getattr__(self, name):
        return getattr(self._cp, name)

    def logit_bounds(self) -> tuple[float, float]:
        return _reverse_bounds_log(self._cp)

    def jump_logits(self) -> np.ndarray:
        return np.zeros(0)

    def drift(self, z) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        log_pi = np.stack([-np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)], axis=-1)
        P = self._cp.class_preference(log_pi)
        with np.errstate(over="ignore"):
            pull = np.exp(self.log_beta + self._cp.log_p - log_pi)       # beta pi_ref/pi, inf past e^709
        return (P[..., 0] - P[..., 1]) + (pull[..., 0] - pull[..., 1])


#: Largest class logit scanned: a bound beyond it (``Delta/beta`` for ``beta`` near 5e-324) puts the root where
#: ``pi(b) = e^{-z}`` is 0 in double precision, which the scan's end reports as the vertex.
_Z_MAX = 1e300


def _capped(bounds: tuple[float, float]) -> tuple[float, float]:
    lo, hi = bounds
    return max(lo, -_Z_MAX), min(hi, _Z_MAX)


def _residual(cp, pi: np.ndarray) -> float:
    """:func:`~grpo_theory.solvers.gradient.stationarity_residual` (for a reward law and the note's penalties,
    with ``P_G`` from :meth:`ClassProblem.output_preference`: the same value without the input checks); for a
    log-space view (reverse penalty) its ``max |pi (1 - (P - E_pi P)/beta) - pi_ref|`` with ``pi (P - E_pi
    P)/beta`` taken in logs (``P/beta`` overflows for ``beta`` below ~1e-308)."""
    if not cp.q.has_reward_law:
        return stationarity_residual(cp.q, cp.obj, pi)
    if not isinstance(cp, _LogSpaceProblem):
        if not cp.obj.regime_variant.is_note_penalty or advantage.changes_regulariser(cp.obj):
            return stationarity_residual(cp.q, cp.obj, pi)
        return note_residual(cp.q, cp.obj, pi, cp.output_preference(pi))
    P = cp.output_preference(pi)
    d = P - pi @ P
    with np.errstate(divide="ignore", over="ignore"):
        term = np.sign(d) * np.exp(np.log(pi) + np.log(np.abs(d)) - cp.log_beta)
    term = np.where((pi > 0) & (d != 0), term, 0.0)
    return float(np.max(np.abs(pi - term - cp.q.pi_ref)))


@checked(cp=class_problem())
def log_space(cp: ClassProblem):
    """``cp`` itself, or, where :func:`needs_log_space`, a view of it whose drift and bounds are in log space.

    Parameters
    ----------
    cp : ClassProblem
        The class problem.

    Returns
    -------
    ClassProblem
        ``cp``, or its log-space view (the same interface).
    """
    return _LogSpaceProblem(cp) if needs_log_space(cp) else cp


def _jump_at(cp: ClassProblem, z: float) -> tuple[float, float] | None:
    """The one-sided drifts at ``z`` if the drift jumps there (a discontinuous vector field), else None."""
    if cp.obj.regime_variant.is_note_penalty:
        return None
    h = 1e-9 * max(1.0, abs(z))
    left, right = (float(v) for v in cp.drift(np.array([z - h, z + h])))
    scale = max(1e-300, float(np.max(np.abs(cp.drift(np.array([z - 1e-3, z + 1e-3]))))))
    if np.sign(left) != np.sign(right) and min(abs(left), abs(right)) > 1e-4 * scale:
        return left, right
    return None


def _point_from_class_logit(cp: ClassProblem, z: float, nfev: int, method: str,
                            slope: float | None) -> StationaryPoint:
    x, y = float(expit(z)), float(expit(-z))
    pi = cp.expand(np.array([x, y]))
    pi = pi / pi.sum()
    residual = _residual(cp, pi)
    jump = _jump_at(cp, z)
    if jump is not None:
        stable = bool(jump[0] > 0 > jump[1])
        why = ("the vector field is discontinuous here: the drift jumps from "
               f"{jump[0]:+.3g} to {jump[1]:+.3g} across z = {z:.6g}; "
               + ("attracting (a Filippov equilibrium: a discrete trainer chatters around it)" if stable
                  else "repelling (it separates two basins; not a resting point)"))
        return StationaryPoint(pi=pi, residual=residual, converged=True, stable=stable, nfev=nfev,
                               method=method + "+jump", message=why, class_logit=float(z), discontinuous=True)
    eig = np.array([]) if slope is None else np.array([2.0 * x * y * slope])
    # The sign of s'(z) decides: x(1-x) > 0 only rescales the eigenvalue (and underflows
    # near a vertex, where the point can still be clearly stable).
    if slope is None or abs(slope) < STABILITY_TOL * max(1.0, cp.obj.beta):
        stable, why = None, "degenerate root (zero slope of the drift): stability undecided at first order"
    else:
        stable = bool(slope < 0)
        why = "drift decreasing through the root" if stable else "drift increasing through the root"
    converged = residual <= RESIDUAL_TOL
    msg = why if converged else f"residual {residual:.2e} above {RESIDUAL_TOL:g}; {why}"
    return StationaryPoint(pi=pi, residual=residual, converged=converged, stable=stable,
                           nfev=nfev, method=method, message=msg,
                           eigenvalues=eig, class_logit=float(z))


def _boundary_point(cp: ClassProblem, which: int, z_end: float) -> StationaryPoint:
    pi_c = np.zeros(2)
    pi_c[which] = 1.0
    x, y = float(expit(z_end)), float(expit(-z_end))
    speed = float(abs(2.0 * x * y * cp.drift(z_end)))
    pi = cp.expand(pi_c)
    return StationaryPoint(
        pi=pi, residual=stationarity_residual(cp.q, cp.obj, pi), flow_speed=speed, converged=True, stable=True,
        nfev=0,
        method="boundary-limit", boundary=True, class_logit=math.copysign(math.inf, z_end),
        message=("limit point: the logit flow runs into this vertex (drift keeps its sign up to "
                 f"|z| = {abs(z_end):.0f}); it is stationary only in the limit"),
    )


def _slope(cp: ClassProblem, z: float) -> float:
    h = 1e-5 * max(1.0, abs(z))
    below, above = cp.drift(np.array([z - h, z + h]))            # one batched call for both sides
    return float((above - below) / (2 * h))


def _brent(cp: ClassProblem, a: float, b: float, fa: float, fb: float) -> tuple[float, int]:
    """Brent's root of the drift in the bracket ``[a, b]`` whose drifts ``fa``, ``fb`` (of opposite signs) the
    scan has already computed; ``brentq`` asks for them again first, and is given them without a new evaluation."""
    known = {a: fa, b: fb}

    def drift(t: float) -> float:
        value = known.get(t)
        return float(cp.drift(t)) if value is None else value

    root, info = optimize.brentq(drift, a, b, xtol=1e-14, rtol=1e-15, maxiter=200, full_output=True)
    return float(root), info.function_calls - 2


def _with_hidden_pairs(cp: ClassProblem, z: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exhaustive scan's grid ``z`` (increasing) and drifts ``s``, with the :func:`check_points` added inside
    each cell whose ends share a sign while a check point inside has the other: a pair of roots the scan stepped
    over (its grid is spaced by the distance from ``pi_ref``'s class logit). Cells without such a point, and so
    every bracket the scan found, are left as they were."""
    extra = check_points(z)
    if extra.size == 0:
        return z, s
    se = cp.drift(extra)
    cell = np.searchsorted(z, extra)                       # extra lies in (z[cell - 1], z[cell])
    sign = np.sign(s)
    hidden = (sign[cell - 1] == sign[cell]) & (np.sign(se) != sign[cell - 1])
    if not hidden.any():
        return z, s
    take = np.isin(cell, cell[hidden])
    order = np.argsort(np.concatenate([z, extra[take]]), kind="stable")
    return np.concatenate([z, extra[take]])[order], np.concatenate([s, se[take]])[order]


@checked(cp=class_problem(n_classes=2), n_grid=num(11, 10**7, integer=True))
def two_class_points(cp: ClassProblem, n_grid: int) -> list[StationaryPoint]:
    """Every stationary point of a two-class problem: an exhaustive scan of the class logit.

    The drift ``s(z) = g(a) - g(b)`` is evaluated on ``n_grid`` class logits covering every possible
    root (plus the drift's jumps); each sign change is refined with Brent's method, tangencies are
    detected, and limit points at the vertices are reported with ``boundary=True``.

    Parameters
    ----------
    cp : ClassProblem
        A problem with two classes.
    n_grid : int
        Grid size of the scan.

    Returns
    -------
    list of StationaryPoint
        Unsorted, possibly with repeats (the caller dedupes and sorts).
    """
    cp = log_space(cp)
    lo, hi = _capped(cp.logit_bounds())
    zc = float(cp.log_p[0] - cp.log_p[1])
    z = grid_around(zc, lo, hi, n_grid)
    jumps = cp.jump_logits()
    z = np.union1d(z, jumps[(jumps > lo) & (jumps < hi)])
    s = cp.drift(z)
    z, s = _with_hidden_pairs(cp, z, s)
    points: list[StationaryPoint] = []
    exact = np.flatnonzero(s == 0)
    for i in exact:
        points.append(_point_from_class_logit(cp, z[i], 1, "grid", _slope(cp, z[i])))
    sign = np.sign(s)
    for i in np.flatnonzero(sign[:-1] * sign[1:] < 0):
        root, calls = _brent(cp, float(z[i]), float(z[i + 1]), float(s[i]), float(s[i + 1]))
        pt = _point_from_class_logit(cp, root, calls, "grid+brentq", _slope(cp, root))
        # the bracket's strict sign change of the drift, continuous inside it (jumps lie on the grid),
        # proves a root there (intermediate value theorem); not its uniqueness in the bracket, nor that no
        # pair of roots hides between two grid points of the same sign
        points.append(dataclasses.replace(pt, certificate=Certificate(
            box=np.array([[z[i], z[i + 1]]]),
            test="existence: strict sign change of the continuous class-logit drift over the bracket "
                 "(intermediate value theorem); uniqueness and exhaustiveness rest on the grid scan")))
    # Tangencies: local minima of |s| without a sign change that reach zero.
    a = np.abs(s)
    cand = np.flatnonzero((a[1:-1] < a[:-2]) & (a[1:-1] < a[2:]) & (sign[:-2] == sign[2:])) + 1
    for i in cand:
        res = optimize.minimize_scalar(lambda t: abs(float(cp.drift(t))), bounds=(z[i - 1], z[i + 1]),
                                       method="bounded", options={"xatol": 1e-12})
        scale = max(1.0, float(np.abs(s[i - 1 : i + 2]).max()))
        if res.fun <= 1e-9 * scale:
            pt = _point_from_class_logit(cp, float(res.x), res.nfev, "grid+tangency", 0.0)
            points.append(pt)
    if may_collapse(cp.obj):
        if s[-1] > 0:
            points.append(_boundary_point(cp, 0, z[-1]))
        if s[0] < 0:
            points.append(_boundary_point(cp, 1, z[0]))
    return points


#: Class-logit distance beyond which the light class's mass underflows (e^-745 is the smallest double).
_UNDERFLOW_Z = 745.0


#: Step in ``t`` of the check grid ``z = +-0.5 sinh(t)`` around ``z = 0`` (:func:`check_points`): spacing 0.1 near 0,
#: 20 % of ``|z|`` far from it.
CHECK_DT = 0.2


def check_points(scanned: np.ndarray) -> np.ndarray:
    """Points of the check grid ``z = +-0.5 sinh(k CHECK_DT)`` strictly inside the span of ``scanned`` (a scan's
    points, in its order, its start first) where the scan's own spacing is coarser than the check grid's.

    A scan spaced by the distance from its start ``z0`` (:func:`flow_root_from`, the exhaustive scan of
    :func:`two_class_points`) is coarse near ``z = 0`` when ``z0`` is far from it, while the drift's features near
    ``z = 0`` (both classes' masses of one order) have widths of order 1 whatever ``z0``.

    Parameters
    ----------
    scanned : numpy.ndarray, shape (m,)
        The scan's points in its order (monotone), its start first.

    Returns
    -------
    numpy.ndarray
        The check points in the scan's order (possibly empty).
    """
    if scanned.size < 2:
        return scanned[:0]
    z0, a = float(scanned[0]), float(scanned[-1])
    direction = 1.0 if a > z0 else -1.0
    far = max(abs(z0), abs(a))
    t = np.arange(1, int(np.ceil(np.arcsinh(far / 0.5) / CHECK_DT)) + 1) * CHECK_DT
    half = 0.5 * np.sinh(t)
    c = np.concatenate([-half[::-1], [0.0], half])[::int(direction)]
    off_c = direction * (c - z0)
    off = direction * (scanned - z0)
    inside = (off_c > 0) & (off_c < off[-1])
    c, off_c = c[inside], off_c[inside]
    i = np.clip(np.searchsorted(off, off_c), 1, off.size - 1)
    keep = off[i] - off[i - 1] > CHECK_DT * np.sqrt(c * c + 0.25)
    return c[keep]


def hidden_bracket(reached: np.ndarray, direction: float, s0: float, far: tuple[float, float] | None,
                   extra: np.ndarray, vals: np.ndarray) -> tuple[float, float, int] | None:
    """Where a scan from ``reached[0]`` stepped over a sign change of the drift that its check points show.

    The scan evaluated ``reached`` (in its order, all of the sign of ``s0``) and then found its bracket's far end
    ``far = (b, f(b))`` (None: no change of sign up to its end); ``extra`` are the :func:`check_points` of
    ``reached`` (and ``b``) and ``vals`` their drifts. A check point of the other sign before the bracket, or more
    than one change of sign inside it (Brent's method may converge to any), is a change the scan stepped over.

    Parameters
    ----------
    reached : numpy.ndarray
        The scan's points up to its bracket's near end (or its end), in its order, its start first.
    direction : float
        +1 or -1: the scan's direction (the sign of the drift at its start).
    s0 : float
        The drift at the scan's start.
    far : (float, float) or None
        The bracket's far end and its drift; None where the scan found no change of sign.
    extra : numpy.ndarray
        The check points, in the scan's order.
    vals : numpy.ndarray
        The drift at ``extra``.

    Returns
    -------
    tuple (a, b, j) or None
        The first such change's bracket: ``b = extra[j]``, ``a`` the nearest evaluated point before it (the scan's or
        the check's); None where the check points show no other change (the scan's bracket stands, untouched).
    """
    if extra.size == 0:
        return None
    other = np.sign(vals) != np.sign(s0)
    if far is not None:
        inside = direction * (extra - reached[-1]) > 0
        signs = np.concatenate([[np.sign(s0)], np.sign(vals[inside]), [np.sign(far[1])]])
        if not other[~inside].any() and np.count_nonzero(signs[1:] != signs[:-1]) <= 1:
            return None
    if not other.any():
        return None
    j = int(np.flatnonzero(other)[0])
    b = float(extra[j])
    a = float(reached[direction * (reached - b) < 0][-1])
    if j > 0 and direction * (extra[j - 1] - a) > 0:
        a = float(extra[j - 1])
    return a, b, j


def _hidden_crossing(cp: ClassProblem, reached: np.ndarray, direction: float, s0: float,
                     crossing: tuple[float, float, float, float] | None) -> tuple[tuple[float, float, float, float],
                                                                                 int] | None:
    """:func:`hidden_bracket` for :func:`flow_root_from`'s scan: the bracket ``(a, f(a), b, f(b))`` and the drift
    evaluations spent, or None."""
    extra = check_points(reached if crossing is None else np.append(reached, crossing[2]))
    if extra.size == 0:
        return None
    vals = cp.drift(extra)
    found = hidden_bracket(reached, direction, s0, None if crossing is None else crossing[2:], extra, vals)
    if found is None:
        return None
    a, b, j = found
    fa = float(vals[j - 1]) if j > 0 and a == extra[j - 1] else float(cp.drift(a))
    return (a, fa, b, float(vals[j])), extra.size


def _first_stop(cp: ClassProblem, a: float, b: float, s0: float) -> tuple[float, int]:
    """The first point after ``a`` (drift of the sign of ``s0``) where the drift does not keep that sign, before
    ``b`` (drift 0), by bisection to the last bit: where the flow moving from ``a`` comes to rest."""
    calls = 0
    for _ in range(200):
        mid = 0.5 * (a + b)
        if mid == a or mid == b:
            break
        calls += 1
        if np.sign(float(cp.drift(mid))) == np.sign(s0):
            a = mid
        else:
            b = mid
    return b, calls


@checked(cp=class_problem(n_classes=2), z0=num(), dt=num(0.0, low_open=True), chunk=POSITIVE_COUNT)
def flow_root_from(cp: ClassProblem, z0: float, dt: float = 0.04, chunk: int = 24) -> StationaryPoint:
    """The stationary point the logit flow reaches from class logit ``z0`` (two classes).

    Scans from ``z0`` in the direction of the drift on an asinh-spaced grid (logit
    spacing 0.02 near ``z0``, 4% of the distance far from it), in chunks, and stops at
    the first sign change. A doubling step would be faster but can jump over a
    stable and an unstable root at once; two roots closer than the local spacing
    (a near-tangency) can still be missed, as on any grid. Far from ``z0`` the spacing is
    coarse, so the drift is also checked on :func:`check_points` (spacing 0.1 near
    ``z = 0``, 20 % of ``|z|`` beyond) before the bracket and inside it: a change of
    sign the scan stepped over there is the flow's first (:func:`hidden_bracket`);
    where there is none, the scan's bracket and root stand to the last bit. Where the
    drift is exactly 0 at the bracket's end, the flow rests where it first loses the
    sign it started with (bisection: a stretch of zero drift).

    Parameters
    ----------
    cp : ClassProblem
        A problem with two classes.
    z0 : float
        The starting class logit ``log(pi(a)/pi(b))``.
    dt : float, default 0.04
        Scale of the grid spacing near ``z0``.
    chunk : int, default 24
        Grid points evaluated at once.

    Returns
    -------
    StationaryPoint
        The first root in the drift's direction, or the limit point at a vertex.
    """
    cp = log_space(cp)
    lo, hi = _capped(cp.logit_bounds())
    s0 = float(cp.drift(z0))
    if s0 == 0.0:
        return _point_from_class_logit(cp, z0, 1, "flow-scan", _slope(cp, z0))
    direction = 1.0 if s0 > 0 else -1.0
    end = hi if direction > 0 else lo
    span = abs(end - z0)
    scale = 0.5
    if not np.arcsinh(span / scale) / dt <= MAX_STEPS:          # refused up front: a scan that would not end
        raise InvalidInputError(f"flow_root_from: the scan from z0 = {z0!r} to the bound {end:g} at spacing scale "
                                f"dt = {dt!r} needs {np.arcsinh(span / scale) / dt:.3g} grid points (at most "
                                f"{MAX_STEPS:.0e}); give a larger dt, or a z0 nearer the class logits' bounds "
                                f"({lo:g}, {hi:g})")
    n_grid = max(8, int(np.ceil(np.arcsinh(span / scale) / dt)))
    t = np.linspace(0.0, np.arcsinh(span / scale), n_grid + 1)[1:]
    offsets = scale * np.sinh(t)
    offsets[-1] = span
    grid = z0 + direction * offsets
    jumps = cp.jump_logits()
    ahead = jumps[(direction * (jumps - z0) > 0) & (direction * (jumps - end) < 0)]
    if ahead.size:
        grid = np.union1d(grid, ahead)[::int(direction)]
    calls, prev, f_prev = 1, z0, s0
    crossing = None
    for start in range(0, grid.size, chunk):
        zs = grid[start:start + chunk]
        vals = cp.drift(zs)
        calls += zs.size
        cross = np.flatnonzero(np.sign(vals) != np.sign(s0))
        if cross.size:
            j = int(cross[0])
            a, fa = (prev, f_prev) if j == 0 else (float(zs[j - 1]), float(vals[j - 1]))
            crossing = (a, fa, float(zs[j]), float(vals[j]))
            reached = np.concatenate([[z0], grid[:start + j]])
            break
        prev, f_prev = float(zs[-1]), float(vals[-1])
    else:
        reached = np.concatenate([[z0], grid])
    # the grid is spaced by the distance from z0: a stretch of the other sign near z = 0, where the classes'
    # masses are of one order, can lie between two grid points when z0 is far (pi_ref(a) = 1e-300: spacing 27
    # at z = -7, a negative stretch 9 wide)
    hidden = _hidden_crossing(cp, reached, direction, s0, crossing)
    if hidden is not None:
        crossing, extra_calls = hidden
        calls += extra_calls
    if crossing is not None:
        a, fa, b, fb = crossing
        if fb == 0:
            # the drift is 0 at b, maybe on a whole stretch (k1 in the reward, both log-ratios past a value clamp:
            # the shaped rewards tie): the flow stops where the drift first leaves the sign of s0
            root, c2 = _first_stop(cp, a, b, s0)
        else:
            root, c2 = _brent(cp, *((a, b, fa, fb) if a < b else (b, a, fb, fa)))
        return _point_from_class_logit(cp, root, calls + c2, "flow-scan+brentq", _slope(cp, root))
    if may_collapse(cp.obj):
        return _boundary_point(cp, 0 if direction > 0 else 1, end)
    if abs(end - z0) > _UNDERFLOW_Z or abs(end) >= Z_CAP:
        # The bounds guarantee a root, but beyond |z| ~ 745 the light class's mass underflows and a drift that
        # is not computed in log space (k3_ratio in the loss with an entropy bonus, fuzz seed 2268: the root at
        # z ~ 7,800) stops moving: the root lies where pi(b) < e^-745, the vertex to double precision.
        pt = _boundary_point(cp, 0 if direction > 0 else 1, end)
        return dataclasses.replace(pt, message=(
            f"the drift keeps its sign up to |z| = {abs(end):.0f}, where the bounds put the root: it lies beyond "
            "the light mass's underflow (pi < e^-745), so the policy is this vertex to double precision"))
    raise RuntimeError(  # the bounds guarantee a root; reaching here is a bug, not a user error
        f"no root of the drift between z0={z0} and {end}; please report this question and objective"
    )
