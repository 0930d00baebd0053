"""What every solver shares: the interface of a problem, root polishing, the stability verdict, dedupe.

A *problem* (:class:`~grpo_theory.solvers.classes.ClassProblem` for questions pooled into classes,
:class:`~grpo_theory.solvers.tree.TreeProblem` for token-level questions on an answer tree) works in
free logits ``x`` (one softmax gauge removed) and offers

* ``policy(x)``: the output policy ``pi``;
* ``kkt(x)``: the stationarity equations, zero exactly at a stationary point;
* ``residual(x)``: the max-norm residual of the stationarity condition at ``policy(x)``;
* ``free_flow(x)``: the on-policy logit flow in the free coordinates;
* ``stability(x)``: ``(stable, eigenvalues, why)`` from the flow's Jacobian;
* ``n_free``: the number of free logits.

The functions here check their arguments' types and shapes (a point's values may be anything: the solvers pass
trial points), and refuse what is not a problem, a point of its shape, text or a count.
"""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np

from .._checks import checked, flag, items, num, numbers, optional, point_array, text, whole
from .._numerics import optimize
from .._validate import integer, number, plain
from ..errors import InvalidInputError
from .gradient import output_gradient
from .results import RESIDUAL_TOL, StationaryPoint

__all__ = ["Problem", "polish", "point_at", "dedupe", "verdict", "sinh_grid", "face_kkt", "FACE_PROBE"]

#: Mass given to an absent answer to read its drift on a face (:func:`face_kkt`).
FACE_PROBE = 1e-10

_PROBLEM_METHODS = ("policy", "kkt", "residual", "free_flow", "stability")


def _problem(name, value):
    """The rule of a ``problem`` argument: a :class:`Problem` (a ClassProblem or a TreeProblem; the methods of the
    interface, its question ``q`` and objective ``obj``)."""
    if not (hasattr(value, "q") and hasattr(value, "obj") and hasattr(value, "n_free")
            and all(callable(getattr(value, m, None)) for m in _PROBLEM_METHODS)):
        shown = " ".join(repr(value).split())
        raise InvalidInputError(f"{name} must be a ClassProblem or a TreeProblem (build one with ClassProblem(q, obj) "
                                f"or TreeProblem(q, obj)), got {shown[:80]} ({type(value).__name__})")


def _free_logits(problem, name: str, x) -> np.ndarray:
    """``x`` checked as the free logits of ``problem`` (type and shape: a trial point may hold any value)."""
    return point_array(name, x, problem.n_free, "the problem's free logits (problem.n_free of them)")


def _counter(name, value):
    """A one-entry list of an integer: a caller's budget that a function adds to."""
    if value is None:
        return
    if not isinstance(value, list) or len(value) != 1 or isinstance(value[0], (bool, np.bool_)) \
            or not isinstance(value[0], (int, np.integer)):
        shown = " ".join(repr(value).split())
        raise InvalidInputError(f"{name} must be a one-entry list holding an integer (a counter, e.g. [0]), got "
                                f"{shown[:80]} ({type(value).__name__})")


class Problem(Protocol):
    """The interface the shared solver steps rely on (see the module doc).

    :class:`~grpo_theory.solvers.classes.ClassProblem` and :class:`~grpo_theory.solvers.tree.TreeProblem`
    implement it in their free logits ``x``: ``policy(x)`` the policy ``pi`` (shape ``(K,)``),
    ``kkt(x)`` the stationarity equations (zero at a stationary point), ``residual(x)`` their
    max-norm residual, ``free_flow(x)`` the logit flow's velocity, ``stability(x)``
    ``(stable, eigenvalues, reason)``; ``n_free`` is the number of free logits (the size of ``x``).
    """

    n_free: int

    def policy(self, x: np.ndarray) -> np.ndarray:
        """The policy ``pi`` (shape ``(K,)``) at free logits ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits.
        """

    def kkt(self, x: np.ndarray) -> np.ndarray:
        """The stationarity equations at ``x``: zero at a stationary point.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits of a candidate point.
        """

    def residual(self, x: np.ndarray) -> float:
        """The max-norm residual of the stationarity equations at ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits, as for :meth:`kkt`.
        """

    def free_flow(self, x: np.ndarray) -> np.ndarray:
        """The logit flow's velocity at ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits, where the velocity is read.
        """

    def stability(self, x: np.ndarray) -> tuple[bool | None, np.ndarray, str]:
        """``(stable, eigenvalues, reason)`` of the flow at a stationary point ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits of the point judged.
        """


@checked(top=numbers(ndim=0), tol=numbers(ndim=0), what=text(), undecided=flag, all_negative=flag)
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


def _token_face_drift(problem, pi: np.ndarray, o: int) -> float:
    """Token level: the centred drift ``g_v(c) - E g_v`` of the edge where answer ``o`` leaves the support
    of ``pi``, with ``o`` given :data:`FACE_PROBE` of the mass."""
    mix = (1.0 - FACE_PROBE) * pi
    mix[o] += FACE_PROBE
    with np.errstate(all="ignore"):
        x = np.nan_to_num(problem.x_from_policy(mix), nan=0.0, neginf=-800.0, posinf=800.0)
        before = problem.x_from_policy(pi)
        g, cond, _ = problem.edge_gradient(x)
        centred = problem.centred(g, cond)
    t = problem.tree
    path = np.flatnonzero(t.paths[list(problem.support).index(o)] > 0)
    cond_before = np.exp(problem.log_cond(np.nan_to_num(before, nan=0.0, neginf=-800.0, posinf=800.0)))
    off = [e for e in path if cond_before[e] == 0.0]
    return float(centred[off[0]]) if off else 0.0


@checked(problem=_problem)
def face_kkt(problem: Problem, pi: np.ndarray) -> tuple[bool, str] | None:
    """The KKT test of a point on a face: every answer of ``pi_ref``'s support absent from ``pi`` must lose
    mass when given a little (its logit drift ``g(o) - E_pi g`` points out of the simplex).

    Parameters
    ----------
    problem : Problem
        Its ``q`` and ``obj`` (and, at token level, its tree).
    pi : numpy.ndarray
        The point (``policy(x)``).

    Returns
    -------
    None or (bool, str)
        None when no supported answer is absent (not on a face); else whether every absent answer's
        drift, read at mass :data:`FACE_PROBE`, is negative, and in words.
    """
    q, obj = problem.q, problem.obj
    pi = point_array("pi", pi, q.pi_ref.size, "one probability per output of problem.q")
    absent = np.flatnonzero((pi == 0) & (q.pi_ref > 0))
    if absent.size == 0:
        return None
    token = hasattr(problem, "edge_gradient")
    for o in absent:
        if token:
            d = _token_face_drift(problem, pi, int(o))
        else:
            mix = (1.0 - FACE_PROBE) * pi
            mix[o] += FACE_PROBE
            with np.errstate(all="ignore"):
                g = output_gradient(q, obj, mix)
            d = float(g[o] - mix @ g)
        if not d < 0:
            return False, (f"on a face, but absent answer {int(o)}'s drift g - E g = {d:.3g} at mass "
                           f"{FACE_PROBE:g} is not negative: the face repels it, the point is not stationary")
    return True, (f"on a face: answers {absent.tolist()} are absent and each one's drift at mass {FACE_PROBE:g} "
                  "points out of the simplex (KKT); a limit point of the flow")


@checked(problem=_problem, method=text(), nfev=whole(0), require_converged=flag)
def point_at(problem: Problem, x: np.ndarray, method: str, nfev: int = 0, *,
             require_converged: bool = True) -> StationaryPoint | None:
    """The stationary point at free logits ``x``, with its residual and stability.

    Parameters
    ----------
    problem : Problem
        The reduced problem (class or tree logits) whose free logits ``x`` are.
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
        The point, with its residual and stability; None when ``require_converged`` and its residual is above
        ``RESIDUAL_TOL``.
    """
    x = _free_logits(problem, "x", x)
    pi = problem.policy(x)
    residual = problem.residual(x)
    converged = residual <= RESIDUAL_TOL
    if require_converged and not converged:
        return None
    face = face_kkt(problem, pi)
    if face is not None and not face[0]:          # a repelling face: not a stationary point of the flow
        if require_converged:
            return None
        converged = False
    stable, eig, why = problem.stability(x)
    boundary = False
    if face is not None:
        boundary = True
        if face[0]:
            # the absent directions give eigenvalues ~0 (their masses underflowed); the drift points out
            # there, so the verdict is that of the remaining (within-face) directions
            tol = 1e-7 * max(1e-300, float(np.max(np.abs(eig)))) if np.size(eig) else 0.0
            top = float(np.max(np.real(eig))) if np.size(eig) else -np.inf
            stable = False if top > tol else True
            why = face[1] + ("; an eigenvalue within the face has positive real part" if stable is False else
                             "; no eigenvalue within the face has positive real part")
        else:
            stable, why = None, face[1]
    return StationaryPoint(pi=pi, residual=residual, converged=converged, stable=stable, nfev=nfev,
                           method=method, boundary=boundary, message=why if converged else
                           f"residual {residual:.2e} above {RESIDUAL_TOL:g}; {why}", eigenvalues=eig)


@checked(problem=_problem, prefix=text(nonempty=True), max_calls=optional(num(0, integer=True)), spent=_counter)
def polish(problem: Problem, x0: np.ndarray, prefix: str, *, max_calls: int | None = None,
           spent: list | None = None) -> StationaryPoint | None:
    """Newton-type root finding on ``problem.kkt`` from ``x0`` (MINPACK hybrid, then Levenberg-Marquardt).

    Parameters
    ----------
    problem : Problem
        The reduced problem (class or tree logits) whose free logits ``x0`` are.
    x0 : numpy.ndarray
        Starting free logits.
    prefix : str
        The start of the point's ``method`` (the root finder is appended).
    max_calls : int, optional
        At most this many evaluations of ``problem.kkt`` for each root finder (a search's work budget);
        MINPACK's own limits (``200 (n + 1)`` and ``100 (n + 1)`` for ``n`` free logits) where not given or
        larger.
    spent : list of int, optional
        A one-entry counter the evaluations made are added to (the caller's budget).

    Returns
    -------
    StationaryPoint or None
        The converged point, or None when neither root finder converges.
    """
    x0 = _free_logits(problem, "x0", x0)
    calls = 0
    n = np.size(x0)

    def kkt(x: np.ndarray) -> np.ndarray:
        if spent is not None:
            spent[0] += 1
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
        options = {"xtol": 1e-14} if method == "hybr" else {"xtol": 1e-15, "ftol": 1e-15}
        own_limit = (200 if method == "hybr" else 100) * (n + 1)
        if max_calls is not None and max_calls < own_limit:   # only a binding budget changes the call
            options["maxfev" if method == "hybr" else "maxiter"] = max(1, int(max_calls))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(kkt, x0, method=method, options=options)
        calls += int(sol.get("nfev", 0))
        if not np.all(np.isfinite(sol.x)):
            continue
        pt = point_at(problem, sol.x, f"{prefix}+{method}", calls)
        if pt is not None:
            return pt
    return None


@checked(points=items(StationaryPoint, "StationaryPoint", sequence=True), tol=num(0.0))
def dedupe(points: list[StationaryPoint], tol: float = 1e-7) -> list[StationaryPoint]:
    """``points`` without repeats (same ``boundary`` flag and ``pi`` within ``tol`` in max norm).

    Parameters
    ----------
    points : list of StationaryPoint
        The points, possibly with repeats.
    tol : float, default 1e-7
        Two points repeat each other when their ``pi`` differ by less than ``tol`` in max norm (and their
        ``boundary`` flags agree).

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
        Number of points, in ``[2, 10^7]`` (both ends are on the grid).
    scale : float, default 0.02
        Spacing scale near ``center`` (finite, positive).

    Returns
    -------
    numpy.ndarray, shape (n,)
        Increasing.

    Raises
    ------
    InvalidInputError
        When ``lo``, ``hi`` or ``center`` is not a finite number, ``lo >= hi``, ``n`` is not a whole number
        in ``[2, 10^7]`` or ``scale`` is not a finite positive number.

    Examples
    --------
    >>> sinh_grid(0.0, -100.0, 100.0, 5).round(3).tolist()     # middle points: 0.02 sinh(asinh(5000)/2)
    [-100.0, -1.0, 0.0, 1.0, 100.0]
    """
    lo, hi, center = (number(name, v) for name, v in (("lo", lo), ("hi", hi), ("center", center)))
    if not lo < hi:
        raise InvalidInputError(f"sinh_grid needs lo < hi, got lo = {plain(lo)}, hi = {plain(hi)}")
    n, scale = integer("n", n, low=2, high=10**7), number("scale", scale, low=0.0, low_open=True)
    c = min(max(center, lo), hi)
    with np.errstate(over="ignore"):
        extent = max(abs((lo - c) / scale), abs((hi - c) / scale))
    if not np.isfinite(extent):                     # asinh of it is inf, and the grid NaN: refused up front
        raise InvalidInputError(f"sinh_grid: the range [{plain(lo)}, {plain(hi)}] in units of scale = {plain(scale)} "
                                "overflows a double ((hi - center)/scale or (lo - center)/scale is beyond 1.8e308); "
                                "give a larger scale or a narrower range")
    return grid_around(center, lo, hi, n, scale)


def grid_around(center: float, lo: float, hi: float, n: int, scale: float = 0.02) -> np.ndarray:
    """:func:`sinh_grid` without its argument checks, for the solvers' own scans.

    Parameters
    ----------
    center : float
        Where the grid is densest (clipped into ``[lo, hi]``: a scan's centre may lie outside its bounds).
    lo, hi : float
        The ends (a scan's capped class logits).
    n : int
        Number of points.
    scale : float, default 0.02
        Spacing scale near ``center``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Increasing, with ``lo`` and ``hi`` at its ends.
    """
    center = min(max(center, lo), hi)
    t = np.linspace(np.arcsinh((lo - center) / scale), np.arcsinh((hi - center) / scale), n)
    z = center + scale * np.sinh(t)
    z[0], z[-1] = lo, hi
    return z


