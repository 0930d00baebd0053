"""More than two classes: Newton-type root finding on the class logits.

Started from the end of the flow from ``pi_ref`` and from several other points (MINPACK hybrid, then
Levenberg-Marquardt, :func:`~grpo_theory.solvers.common.polish`); reported points are deduplicated,
the search is not guaranteed exhaustive, and the result says so.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from .. import kl
from .._numerics import integrate_until_slow, optimize
from ..advantage import regularisation_scale
from .._checks import SEED, checked, num, point_array
from .classes import ClassProblem, class_problem, stationarity_residual
from .collapse import may_collapse, unbounded_preference
from .common import dedupe, point_at, polish
from .gradient import output_gradient
from .results import RESIDUAL_TOL, StationaryPoint

__all__ = ["multi_class_policy", "multi_class_points", "SEARCH_WORK_BUDGET"]

#: The multi-start search's work budget, in evaluations of the class KKT residual times the number of classes
#: ``C`` (an evaluation costs about ``C`` times a fixed amount). Counted in work, not seconds, so a question gets
#: the same answer on any machine; 2e7 units are 10-20 s on one core of a 2-core laptop-class machine. No search
#: over 40 classes or fewer came near it (reverse/shift, 40 classes, G = inf: 4.2e6); 80 classes with a start
#: near each vertex would spend 1e8 (85 s), and the count grows as about ``C^3``.
SEARCH_WORK_BUDGET = 20_000_000


def _flow_endpoint(cp: ClassProblem, eta0: np.ndarray, t_max: float = 1e4,
                   speed: float | None = 1e-6) -> np.ndarray:
    """Integrate the reduced logit flow from ``eta0`` until its speed drops below ``speed``."""
    return integrate_until_slow(cp.free_flow, eta0, t_max, speed)


def _vertex_limit(cp: ClassProblem, eta: np.ndarray) -> StationaryPoint | None:
    """A vertex the flow runs into (direct penalty, G = inf), if the flow at ``eta`` heads there."""
    if not may_collapse(cp.obj):
        return None
    log_pi = cp.log_pi(eta)
    top = int(np.argmax(log_pi))
    if log_pi[top] < math.log1p(-1e-6):
        return None
    phi = cp.flow(log_pi)
    if not np.all(np.delete(phi[top] - phi, top) > 0):   # still gaining on every other class
        return None
    vertex = np.zeros(cp.n_classes)
    vertex[top] = 1.0
    pi = cp.expand(vertex)
    return StationaryPoint(pi=pi, residual=stationarity_residual(cp.q, cp.obj, pi),
                           flow_speed=float(np.max(np.abs(phi))), converged=True,
                           stable=True, nfev=0, method="flow-to-vertex", boundary=True,
                           message="limit point: the logit flow runs into this vertex (its speed "
                                   "there decays to 0); stationary only in the limit")


def _slowest_escape(cp: ClassProblem, eta: np.ndarray) -> float:
    """Time for the flow to lift a light class that gains (``g_c > E_pi g``) off the face it sits on.

    Near ``pi_c = 0`` the logit flow moves ``pi_c`` at speed ``pi_c^2 (g_c - E_pi g)``, so lifting it
    takes about ``1/(pi_c (g_c - E_pi g))``: 1e6 for a class of mass 1e-6 gaining 1e-2, forever
    for a class of mass 1e-300. Returns the shortest such time over the gaining classes (inf if none).
    """
    log_pi = cp.log_pi(eta)
    g = cp.gradient(log_pi)
    gain = g - np.exp(log_pi) @ g
    up = gain > 0
    if not np.any(up):
        return math.inf
    with np.errstate(over="ignore"):
        return float(np.min(np.exp(-log_pi[up] - np.log(gain[up]))))


def _logit_speed(cp: ClassProblem, pi: np.ndarray) -> float:
    """``max_o pi_o |g_o - E_pi g| / beta`` over the support of ``pi``: the speed of the flow on the output
    logits there (an absent answer's gradient may be infinite)."""
    s = pi > 0
    g = output_gradient(cp.q, cp.obj, pi)[s]
    with np.errstate(invalid="ignore"):            # an infinite gradient on the support: nan, not settled
        return float(np.max(pi[s] * np.abs(g - pi[s] @ g))) / regularisation_scale(cp.obj)


def _class_masses(cp: ClassProblem, pi: np.ndarray) -> np.ndarray:
    return np.bincount(cp.class_of[cp.class_of >= 0], weights=pi[cp.class_of >= 0], minlength=cp.n_classes)


def _damped_direct_map(cp: ClassProblem, eta: np.ndarray, iterations: int = 400) -> np.ndarray | None:
    """Iterate ``eta <- (eta + F(eta))/2`` with ``F`` the direct penalty's argmax map (log p + P/beta)."""
    for _ in range(iterations):
        new = cp.log_p + cp.class_preference(cp.log_pi(eta)) / cp.obj.beta
        target = new[:-1] - new[-1]
        if not np.all(np.isfinite(target)):
            return None
        step = 0.5 * (target - eta)
        eta = eta + step
        if float(np.max(np.abs(step))) < 1e-12 * max(1.0, float(np.max(np.abs(eta)))):
            break
    return eta


#: Longest flow time followed: beyond it a trainer would not move either.
_MAX_HORIZON = 1e8


def _reward_ties(cp: ClassProblem, starts: list) -> list[StationaryPoint]:
    """Stationary points of the KL-in-reward placement with deterministic rewards: the policies whose
    shaped rewards ``r_c - beta value(lr_c)`` tie over the classes (then every advantage is 0).

    ``P_G(c)`` is strictly increasing in class ``c``'s own shaped reward, so interior stationary points
    are exactly these ties. The flow near one has the sign of the shaped-reward differences, so it is
    stable when every class's shaped reward falls as its mass grows (``value'(lr_c) > 0``), unstable
    when one rises. With scale normalisation and no epsilon, or REINFORCE++'s whitening (no epsilon),
    the advantages stay O(1) arbitrarily close to the tie: the point is a discontinuity of the vector
    field (``discontinuous=True``).
    """
    obj = cp.obj
    r = cp.R @ cp.q.reward_levels

    def ties(eta):
        lr = cp.log_pi(eta) - cp.log_p
        shaped = r - obj.beta * kl.flow_value(obj, lr)
        return shaped[:-1] - shaped[-1]

    # the advantage is divided by a std with no epsilon (the group's with scale normalisation, or
    # REINFORCE++'s batch whitening, which has none): O(1) arbitrarily close to the tie, 0 at it
    sharp = obj.advantage_variant.sharp_at_ties(obj)
    found = []
    for eta0 in starts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(ties, eta0, method="hybr", options={"xtol": 1e-14})
        if not np.all(np.isfinite(sol.x)) or np.max(np.abs(ties(sol.x))) > 1e-9 * max(1.0, obj.beta):
            continue
        log_pi = cp.log_pi(sol.x)
        slope = kl.flow_value_slope(obj, log_pi - cp.log_p)
        stable = True if np.all(slope > 0) else (False if np.any(slope < 0) else None)
        why = ("the shaped rewards r - beta value tie on the support, so every advantage is 0; "
               + ("each class's shaped reward falls as its mass grows: stable" if stable else
                  "a class's shaped reward rises with its mass: unstable" if stable is False else
                  "a class sits where value' = 0: stability undecided"))
        if sharp:
            why += ("; with a std and no epsilon dividing the advantage (scale normalisation, or REINFORCE++'s "
                    "whitening) the advantages stay O(1) arbitrarily close: the vector field is discontinuous "
                    "here (a Filippov point; a discrete trainer chatters around it)")
        pi = cp.expand(np.exp(log_pi))
        found.append(StationaryPoint(pi=pi, residual=float(np.max(np.abs(ties(sol.x)))), converged=True,
                                     stable=stable, nfev=int(sol.nfev), method="reward-ties+hybr",
                                     message=why, discontinuous=sharp))
    return dedupe(found)


def _reward_tie_starts(cp: ClassProblem) -> list:
    """Starting class logits: log pooling (the k1 answer), pi_ref, and the mass tilted each way."""
    r = cp.R @ cp.q.reward_levels
    lp = cp.log_p + r / cp.obj.beta
    starts = [lp, cp.log_p, cp.log_p - r / cp.obj.beta, cp.log_p + 0.5 * r / cp.obj.beta]
    return [s[:-1] - s[-1] for s in starts]


#: Max-norm distance (in the masses) within which a root polished from the flow's end counts as that end.
_POLISH_REACH = 1e-3


def _near(cp: ClassProblem, pt: StationaryPoint | None, end: np.ndarray) -> StationaryPoint | None:
    """``pt`` if it lies within :data:`_POLISH_REACH` of the flow's end ``end`` (free class logits), else None:
    Newton's method from a point near a vertex can land on another root (a KKT vertex across the simplex:
    k3 in the reward, the flow at (1, 1e-69, 1e-76) polished to (0, 0, 1))."""
    if pt is None:
        return None
    here = cp.expand(np.exp(cp.log_pi(end)))
    return pt if float(np.abs(pt.pi - here).max()) <= _POLISH_REACH else None


#: Mass below which a class counts as light at the flow's end (:func:`_near_face_root`).
_LIGHT = 1e-6
#: Decades between the starts of :func:`_near_face_root`.
_DECADES = 10


def _near_face_root(cp: ClassProblem, end: np.ndarray) -> StationaryPoint | None:
    """The stable root next to the face that the flow creeps toward from ``end``, or None.

    The logit flow moves a light class at a speed proportional to its mass, so a root whose light classes weigh
    ``~ 0.2 beta^2`` (the reverse penalty, std normalisation, G = inf: 2e-17 at beta = 1e-8, 2e-101 at 1e-50) is
    reached only at ``t ~ 1/mass``, and Newton's method from the end (masses ~1e-8) overshoots. Starts with the
    light classes' masses lowered by :data:`_DECADES` decades at a time (the heavy ones as at the end) are polished
    from the top down; Newton converges from below such a root, where the penalty's pull ``~ beta/pi_c`` is steep.
    The first stable root with the end's top class, its light classes no heavier than at the end and its heavy
    ones within :data:`_POLISH_REACH`, is the flow's: a light class descends to the first root below it.
    """
    log_pi = cp.log_pi(end)
    top = int(np.argmax(log_pi))
    light = log_pi < math.log(_LIGHT)
    light[top] = False
    if not light.any():
        return None
    lp = log_pi.copy()
    while True:
        lp[light] -= _DECADES * math.log(10.0)
        if float(lp[light].max()) < -740.0:        # at the smallest subnormal double: nothing left to represent
            return None
        try:
            pt = polish(cp, lp[:-1] - lp[-1], "flow+root")
        except np.linalg.LinAlgError:              # a Jacobian beyond doubles at such a start: no root to read here
            continue
        if pt is None or not pt.stable:
            continue
        masses = _class_masses(cp, pt.pi)
        if (int(np.argmax(masses)) == top and np.all(masses[light] <= np.exp(log_pi[light]) * (1 + 1e-9))
                and float(np.abs(masses[~light] - np.exp(log_pi[~light])).max()) <= _POLISH_REACH):
            return pt


@checked(cp=class_problem(at_least=2))
def multi_class_policy(cp: ClassProblem, end: np.ndarray | None = None) -> StationaryPoint:
    """The stationary point the logit flow reaches from ``pi_ref`` (three or more classes).

    The flow is integrated until it slows, then the end is polished by root finding; near a saddle,
    a face or a vertex the flow is followed further before polishing again.

    Parameters
    ----------
    cp : ClassProblem
        A problem with three or more classes.
    end : numpy.ndarray, optional
        The end of the flow from ``pi_ref`` (free class logits) where it is already known (integrated
        with other problems' flows, :func:`~grpo_theory.solvers.multi_class_batch.batch_flow_endpoints`);
        by default it is integrated here.

    Returns
    -------
    StationaryPoint
        The point reached: interior (polished, with its stability) or a face or vertex where the flow runs into one
        (a limit point).
    """
    if end is not None:
        end = point_array("end", end, cp.n_free, "free class logits, one per class but the last")
    eta0 = cp.log_p[:-1] - cp.log_p[-1]
    if cp.obj.regime_variant.in_reward and cp.q.is_deterministic:
        stable = [p for p in _reward_ties(cp, _reward_tie_starts(cp)) if p.stable]
        if stable:
            return min(stable, key=lambda p: float(np.abs(_class_masses(cp, p.pi) - cp.p).sum()))
    end = _flow_endpoint(cp, eta0) if end is None else np.asarray(end, dtype=float)
    if not np.isfinite(end).all():
        return _unintegrable_flow_point(cp, eta0)
    pt = _near(cp, polish(cp, end, "flow+root"), end)
    horizon = 1e4
    while (pt is None or pt.stable is False) and horizon <= _MAX_HORIZON:
        # Slowed down near a saddle, a face or a vertex: follow the flow further, then polish. The
        # first extension is a fixed 1e4; after that the horizon is set by the slowest light class
        # that still gains (see _slowest_escape), and the search stops where that is beyond reach.
        end = _flow_endpoint(cp, end, t_max=horizon, speed=None)
        if not np.isfinite(end).all():
            return _unintegrable_flow_point(cp, eta0)
        pt = _vertex_limit(cp, end) or _near(cp, polish(cp, end, "flow+root"), end)
        horizon = max(10 * horizon, 20 * _slowest_escape(cp, end))
    if pt is not None and pt.stable is not False:
        return pt
    at_end = point_at(cp, end, "flow")
    if at_end is not None and at_end.stable is not False and _logit_speed(cp, at_end.pi) <= RESIDUAL_TOL:
        # the flow itself settled within tolerance; polishing only hurt. Settled on the logits too: near
        # a vertex the direct penalty's residual (in masses) is small where the light classes' logits still
        # run (|P| up to span/eps with a small std_eps at G = inf; fuzz seed 192)
        return at_end
    if cp.obj.regime_variant.is_direct and cp.obj.beta > 0 and not unbounded_preference(cp.obj):
        # Near a vertex at finite G the direct penalty's point can sit at class logits in the
        # thousands (log pi_c = log p_c + P_c/beta - log Z with P_c ~ -sqrt(G)), which the flow
        # approaches at a speed proportional to the light classes' mass. There P barely depends
        # on pi, so the damped map eta <- log p + P/beta converges; Newton polishes its end.
        near = _damped_direct_map(cp, end)
        cand = None if near is None else polish(cp, near, "flow+map+root")
        top = int(np.argmax(cp.log_pi(end)))
        if cand is not None and cand.stable and int(np.argmax(_class_masses(cp, cand.pi))) == top:
            return cand
    near_face = _near_face_root(cp, end)
    if near_face is not None:
        return near_face
    pi = cp.expand(np.exp(cp.log_pi(end)))
    residual = stationarity_residual(cp.q, cp.obj, pi)
    light = [int(c) for c in np.flatnonzero(np.exp(cp.log_pi(end)) < 1e-12)]
    why = (f"the flow from pi_ref did not settle and root polishing failed (residual {residual:.2e})")
    if light and (math.isinf(horizon) or horizon > _MAX_HORIZON):
        why += (f"; classes {light} have mass < 1e-12 and gain under the flow, but lifting them would take "
                f"longer than t = {_MAX_HORIZON:g} (the logit flow moves a class at a speed proportional to "
                "its mass): a trainer started at pi_ref stays near this face for any practical time; "
                "stationary_points lists the stationary points")
    elif pt is not None:
        why = (f"the flow from pi_ref stalls (residual {residual:.2e} here) and the stationary point found "
               f"near it, {np.array2string(pt.pi, precision=6)}, is unstable; see stationary_points")
    else:
        why += "; the policy may be heading to a face of the simplex"
    return StationaryPoint(pi=pi, residual=residual, converged=False, stable=None, nfev=0,
                           method="flow", message=why)


def _unintegrable_flow_point(cp: ClassProblem, eta0: np.ndarray) -> StationaryPoint:
    """Where the class flow from ``pi_ref`` cannot be integrated: its rates grow like ``beta`` (an entropy bonus at
    beta from about 1e11 to 1e16, below :func:`~grpo_theory.solvers.large_beta.reference_in_rounding`'s short cut),
    and LSODA's state leaves the doubles at t = 0. The rest then lies within O(1/beta) of ``pi_ref``: Newton's method
    from ``pi_ref`` finds it (a stable root near ``pi_ref`` is the flow's end: the flow moves by O(1/beta)); else
    the point is ``pi_ref``, not converged, saying so."""
    why = (f"the class flow from pi_ref could not be integrated (its rates grow like beta = {cp.obj.beta:g}: the "
           "integrator's state left the doubles)")
    pt = _near(cp, polish(cp, eta0, "flow+root"), eta0)
    if pt is not None and pt.converged and pt.stable:
        return dataclasses.replace(pt, message=f"{pt.message}; {why}, so Newton's method started at pi_ref")
    pi = cp.expand(np.exp(cp.log_pi(eta0)))
    return StationaryPoint(pi=pi, residual=stationarity_residual(cp.q, cp.obj, pi), converged=False, stable=None,
                           nfev=0, method="flow", message=f"{why}, and Newton's method from pi_ref found no stable "
                                                          "rest near it")


@checked(cp=class_problem(at_least=2), n_starts=num(1, 100_000, integer=True), seed=SEED)
def multi_class_points(cp: ClassProblem, *, n_starts: int, seed: int) -> tuple[tuple, bool, str]:
    """Stationary points from ``n_starts`` starts (pi_ref, uniform, near each vertex, random, the end of
    the flow from pi_ref), each with its stability; not guaranteed exhaustive.

    Parameters
    ----------
    cp : ClassProblem
        A problem with three or more classes.
    n_starts : int
        Number of starts (at least ``pi_ref``, uniform and one near each vertex).
    seed : int
        Seed of the random starts.

    Returns
    -------
    points : tuple of StationaryPoint
        Sorted by the best class's mass.
    exhaustive : bool
        False.
    message : str
        How the search was done.
    """
    C = cp.n_classes
    rng = np.random.default_rng(seed)
    starts = [cp.log_p, np.zeros(C)]
    for c in range(C):
        v = np.full(C, math.log(0.1 / (C - 1)))
        v[c] = math.log(0.9)
        starts.append(v)
    starts += [np.log(rng.dirichlet(np.ones(C))) for _ in range(max(0, n_starts - len(starts)))]
    etas = [s[:-1] - s[-1] for s in starts]
    if cp.obj.regime_variant.in_reward and cp.q.is_deterministic:
        pts = _reward_ties(cp, _reward_tie_starts(cp) + etas)
        pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
        return tuple(pts), False, (f"ties of the shaped rewards from {len(etas) + 4} starts over {C} classes; "
                                  "not guaranteed exhaustive; faces of the simplex not searched")
    end = _flow_endpoint(cp, etas[0])
    spent, calls_left = [0], lambda: (SEARCH_WORK_BUDGET - spent[0] * C) // C
    found, tried = [], 0
    for e in etas:                      # pi_ref, uniform, near each vertex, random: while the budget lasts
        if calls_left() <= 0:
            break
        found.append(polish(cp, e, "multistart", max_calls=calls_left(), spent=spent))
        tried += 1
    # the end of the flow from pi_ref is always polished (the budget's last word): it is the point reached
    found.append(polish(cp, end, "multistart", max_calls=max(calls_left(), 20 * (C + 1)), spent=spent))
    found.append(_vertex_limit(cp, _flow_endpoint(cp, end, speed=None)))
    pts = dedupe([p for p in found if p is not None])
    pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
    budget = ("" if tried == len(etas) else
              f"; the work budget ({SEARCH_WORK_BUDGET:.0e} KKT evaluations x classes, SEARCH_WORK_BUDGET) ran "
              f"out after {tried} of the {len(etas)} other starts")
    return tuple(pts), False, (f"multi-start root finding from {len(etas) + 1} points over {C} classes{budget}; "
                              "not guaranteed exhaustive; of the vertices reached only in the "
                              "limit, only the one the flow from pi_ref reaches is reported")
