r"""Where the on-policy flow on all output logits goes from ``pi_ref``: the truth the class solvers accelerate.

The flow is ``d theta_o/dt = pi_o (g_o - E_pi g)`` on every answer's logit (the gauge, a common shift,
removed), with ``g`` of :func:`~grpo_theory.solvers.gradient.output_gradient` (every penalty, estimator and
placement). The class solvers (:mod:`.two_class`, :mod:`.multi_class`) follow the flow restricted to the
policies proportional to ``pi_ref`` inside each class of answers with one reward law; that restriction is the
flow's own trajectory exactly when :func:`class_reduction_exact` says so. Elsewhere :func:`full_space_end`
follows the flow on all output logits and reports where it ends:

* a **point**: the flow's end, polished by Newton's method on the logits of its support, is a root of the
  flow there (residual within :data:`~grpo_theory.solvers.results.RESIDUAL_TOL`), every answer of
  ``pi_ref``'s support that it has left drifts outward (KKT: ``g_o - E_pi g < 0`` read at a small mass), and
  the gauge-reduced Jacobian on all output logits says stable; a point on a face (answers at mass 0) is
  reached only in the limit (its light masses decay like ``1/t``: a logit moves at a speed proportional to
  its mass) and is reported with ``boundary=True``;
* a **limit on a face or a vertex** that no finite horizon shows as a root: masses that keep falling by a
  factor of 10 or more per two decades of flow time while the rest stays put (a continuum of face points
  along which the flow drifts at a rate that decays like ``1/t``, k1 in the loss); reported ``boundary=True``
  with the decay in the message. A left answer that would gain at any fixed small mass (a class-mate of a kept
  answer, pulled back to ``pi_ref``'s proportions by the penalty) is left behind for good when its mass falls
  like ``t^-c`` with ``c > 1`` (:func:`_left_behind`): its own speed, proportional to its mass, then adds a
  finite amount to its log-mass while the others' pull, decaying like ``1/t``, adds without bound; such a
  limit is reported with ``stable=None``;
* otherwise the policy at the horizon with ``converged=False`` and why.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from .._checks import OBJECTIVE, QUESTION, arr, checked, num, registered
from .._numerics import integrate_until_slow, logsumexp, optimize
from .._validate import plain
from ..advantage import changes_regulariser
from ..errors import InvalidInputError
from ..problem import STATIONARY_OBJECTIVE, Objective, Question
from .classes import ClassProblem
from .full_space import FROZEN_GAP, full_space_stability, jump_repeller, logit_flow
from .gradient import gradient_evaluator, output_gradient, policy_and_centred_gradient, stationarity_residual
from .kinks import kink_answers, kink_slide, sliding_end
from .results import RESIDUAL_TOL, StationaryPoint

__all__ = ["class_reduction_exact", "full_space_end", "FLOW_HORIZONS"]

#: Flow times at which :func:`full_space_end` looks at the flow's end (each integrated from the previous). Past
#: :data:`_LOG_TIME_FROM` the flow is integrated in ``s = log(1 + t)``: a penalty's pull back to ``pi_ref``
#: restores a light answer only at the speed of its mass (reliability fuzz seeds 434 and 1132: 8e-2 and 3.2e-3
#: from the flow's limit at t = 1e8, 6e-10 and 5e-11 at t = 1e10 and 1e12).
FLOW_HORIZONS = (1e4, 1e6, 1e8, 1e10, 1e12)
#: Flow time from which the integration runs in log time (the late decades cost as much as the early ones).
_LOG_TIME_FROM = 1e8
#: Mass below which an answer counts as leaving the support at a horizon (its face is then polished).
_SNAP = 1e-5
#: Max-norm distance within which a polished root counts as the flow's end.
_NEAR = 1e-3
#: Most answers in pi_ref's support that the flow on all output logits takes: its face root solves a dense system in
#: every free logit (MINPACK's hybrid method: a Jacobian of K^2 entries by differences and its QR, ~K^3), so work
#: grows as K^3; 10,000 answers (two rewards, pi_ref of Dirichlet(1)) held stationary_policy in SciPy's HYBRD for
#: over 14 minutes (the sixteenth hostile audit). Refused up front (``_check_full_space_size``).
_FULL_SPACE_MAX_ANSWERS = 2_000


def _check_full_space_size(q: Question) -> None:
    """Refuse, before any work, a question whose flow on all output logits would need a dense solve in more than
    ``_FULL_SPACE_MAX_ANSWERS`` logits, naming the count, the limit and what to give instead."""
    k = int(np.count_nonzero(q.pi_ref > 0))
    if k > _FULL_SPACE_MAX_ANSWERS:
        raise InvalidInputError(
            f"the flow on all output logits: pi_ref gives mass to {k:,} outputs; that flow is followed over at "
            f"most {_FULL_SPACE_MAX_ANSWERS:,} (its face root solves a dense system in every logit, work ~K^3: "
            "10,000 outputs ran for over 14 minutes). Give outputs that share a reward as one output with their "
            "summed pi_ref (under the note's two penalties they keep pi_ref's proportions), or fewer outputs")


#: Least mass, on ``pi_ref``'s support, of a class answer that the note's penalties vouch for
#: (:func:`class_reduction_exact`).
_TRUSTED_MASS = 1e-6
#: Decay of a light mass over the last two decades of flow time that marks it as vanishing in the limit.
_DECAY = 3.0
#: Max-norm move over the last two decades of flow time below which a flow whose field does not vanish rests at
#: a jump of the field (a Filippov equilibrium, where the nudges of :func:`jump_repeller` are pulled back).
_RESTING = 1e-9
#: Max-norm move over the last two decades below which an integration chattering at jumps is stuck there: its end
#: is examined for a slide along the jumps (:func:`~.kinks.kink_slide`; 2e-9 at abs in the loss, ``G = inf``).
_STUCK = 1e-6
#: Logit speed of the field at such a point at or above which it is a jump that the flow chatters at (0.3 at
#: fuzz seeds 1742, 5214, 6019), not a slow creep into a face (1e-8 at seeds 1645 and 2798, masses 1e-13).
_JUMP_SPEED = 1e-6
#: Least decay exponent ``c`` (mass like ``t^-c`` over the last two decades) of an answer left behind on a face
#: although it would gain at any fixed small mass (:func:`_left_behind`): above 1, with a margin for the reading.
_BEHIND_EXPONENT = 1.1
#: Most that such an answer's own push may still add to its log-mass after the last horizon (:func:`_left_behind`).
_BEHIND_GAIN = 1e-3


@checked(q=QUESTION, obj=OBJECTIVE, class_of=arr(integer=True, ndim=1, none=True),
         point=registered('StationaryPoint', none=True))
def class_reduction_exact(q: Question, obj: Objective, class_of: np.ndarray | None = None, *,
                          point: StationaryPoint | None = None) -> bool:
    """Whether the class solvers' end is the end of the flow on all output logits from ``pi_ref``.

    Then the class solvers follow the flow's own trajectory and their end is its end; otherwise the class
    end is only a candidate and :func:`full_space_end` decides.

    The condition: every class of ``pi_ref``'s support (answers with one reward law; with an entropy bonus or
    a preference matrix every answer is its own class) is a single answer or answers of equal reference
    mass (relative tolerance 1e-12).

    Or: the objective is one of the note's two penalties (:func:`penalty_restores_class_proportions`) **and**
    the class solvers' answer ``point`` converged, is stable, lies off the faces (``boundary=False``) and gives
    every answer of ``pi_ref``'s support a mass of at least :data:`_TRUSTED_MASS` (1e-6). Then the trajectory
    leaves the proportional set too, but every stationary point of the flow on all output logits is
    proportional inside classes (``g_o = P_c - beta s(lr_o)`` with ``s`` strictly increasing, so equal ``g``
    inside a class means equal log-ratios) and a point stable in class coordinates is pulled back across each
    class, at a rate proportional to the masses of its answers. Where an answer of a class is lighter than
    1e-6 that pull is too slow to be seen (a logit moves at a speed proportional to its mass: the flow from
    ``pi_ref`` can sit far from the class point at t = 1e8, fuzz seed 1132: masses 1e-9 where the class
    point has 3.2e-3), and a face or a vertex (a limit) or an unstable or unconverged class answer is no
    end the penalty vouches for: there the flow on all output logits decides (:func:`full_space_end`). Without
    ``point`` the penalty alone does not make the reduction exact.

    Why the first condition is exact. For every objective the package accepts, ``g_o`` depends on answer ``o`` only through
    its reward law and its own log-ratio ``log(pi_o/pi_ref_o)`` (the penalty's slope, the KL estimate in
    the shaped reward or the advantage), and on the policy through the law of the reward of a draw. Swapping
    two answers of one class with equal ``pi_ref`` therefore maps the flow to itself, and the set left fixed
    by every such swap (equal masses inside each class, i.e. proportional to ``pi_ref``) is invariant: the
    flow from ``pi_ref``, which starts there, stays there. Conversely, with two answers ``o, o'`` of one
    class and ``pi_ref(o) != pi_ref(o')`` the logits move at rates ``pi_o (g_o - E g)`` proportional to
    their own masses, so ``log(pi_o/pi_o')`` changes wherever ``g_o - E g != 0`` and the flow leaves that
    set. Checked numerically in ``tests/test_full_space_end.py``: equal-mass classes stay proportional to
    ``1e-12`` along an independent integration, unequal ones leave it.

    Parameters
    ----------
    q : Question
        The question whose classes are judged.
    obj : Objective
        The objective (its penalty decides the second clause).
    class_of : numpy.ndarray of int, optional
        The class of each output (:attr:`ClassProblem.class_of`, -1 off the support), if already known.
    point : StationaryPoint, optional
        The class solvers' answer, judged by the penalty clause above.

    Returns
    -------
    bool
        True when the class reduction is exact for the flow from ``pi_ref``.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> obj = Objective(beta=0.5, kl_estimator="k3", kl_placement="reward")
    >>> class_reduction_exact(Question([0.25, 0.25, 0.5], rewards=[1, 1, 0]), obj)
    True
    >>> class_reduction_exact(Question([0.2, 0.3, 0.5], rewards=[1, 1, 0]), obj)
    False
    """
    if class_of is None:
        class_of = ClassProblem(q, obj).class_of
    elif np.shape(class_of) != (q.n_outputs,) or np.min(class_of) < -1:
        raise InvalidInputError(f"class_of must give each of the K={q.n_outputs} outputs a class >= 0 (-1 off the "
                                f"support), got {plain(np.asarray(class_of))[:80]}")
    return reduction_exact(q, obj, np.asarray(class_of), point)       # a list or a range: the array it holds


def reduction_exact(q: Question, obj: Objective, class_of: np.ndarray, point: StationaryPoint | None) -> bool:
    """:func:`class_reduction_exact` without its input checks, for the solvers' own ``class_of`` and points.

    Parameters
    ----------
    q : Question
        The question whose classes are judged.
    obj : Objective
        The objective (its penalty decides the second clause of :func:`class_reduction_exact`).
    class_of : numpy.ndarray of int, shape (K,)
        The class of each output (:attr:`ClassProblem.class_of`).
    point : StationaryPoint or None
        The class solvers' answer, or None.
    """
    if obj.entropy_coef or not q.has_reward_law:
        return True
    support = class_of >= 0
    if np.unique(class_of[support]).size == int(np.count_nonzero(support)):
        return True
    if all(np.allclose(ref, ref[0], rtol=1e-12, atol=0.0)
           for ref in (q.pi_ref[class_of == c] for c in np.unique(class_of[support]))):
        return True
    return bool(penalty_restores_class_proportions(obj) and point is not None and point.converged
                and point.stable is True and not point.boundary
                and float(np.min(point.pi[support])) >= _TRUSTED_MASS)


def _rhs(q: Question, obj: Objective, support: np.ndarray):
    """The flow on the logits of ``support``; an answer ``FROZEN_GAP`` below the top is held still (see
    :func:`~grpo_theory.solvers.full_space.full_space_flow`). ``logit_flow`` with ``g``'s set-up done once
    (:func:`~grpo_theory.solvers.gradient.gradient_evaluator`: the same bits), and its checks only where one can fail
    (``support`` and the shape of ``theta`` are valid by construction; ``theta`` may hold a NaN)."""
    gradient = gradient_evaluator(q, obj)

    def rhs(th):
        frozen = th - th.max() < FROZEN_GAP
        theta = np.where(frozen, th.max() + FROZEN_GAP, th)
        if not np.isfinite(theta).all():
            return logit_flow(q, obj, theta, support)         # which refuses it, naming the value
        pi_s, centred = policy_and_centred_gradient(q, obj, theta, support, gradient)
        return np.where(frozen, 0.0, pi_s * centred)
    return rhs


def _policy(q: Question, support: np.ndarray, theta: np.ndarray) -> np.ndarray:
    pi = np.zeros(q.n_outputs)
    pi[support] = np.exp(theta - logsumexp(theta))
    return pi


def _face_root(q: Question, obj: Objective, pi: np.ndarray, keep: np.ndarray) -> np.ndarray | None:
    """A root of the flow on the face of the answers ``keep`` (the others at mass 0), by Newton's method
    (MINPACK hybrid) on ``g_o - g_ref`` in the free logits of ``keep``, started at ``pi``; None if none."""
    keep = np.flatnonzero(keep)
    if keep.size == 1:
        out = np.zeros(q.n_outputs)
        out[keep] = 1.0
        return out
    ref = keep[np.argmax(pi[keep])]
    free = keep[keep != ref]
    gradient = gradient_evaluator(q, obj)                 # output_gradient(q, obj, .), set up once: the same bits

    def policy(x):
        th = np.zeros(q.n_outputs)
        th[free] = x
        out = np.zeros(q.n_outputs)
        lse = logsumexp(np.concatenate([x, [0.0]]))
        out[free] = np.exp(x - lse)
        out[ref] = math.exp(-lse)
        return out

    def eqs(x):
        if not np.all(np.isfinite(x)):
            return np.full(x.size, 1e100)
        with np.errstate(all="ignore"):
            g = gradient(policy(x))
        r = g[free] - g[ref]
        return np.where(np.isfinite(r), r, 1e100)

    x0 = np.log(pi[free]) - math.log(pi[ref])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sol = optimize.root(eqs, x0, method="hybr", options={"xtol": 1e-14})
    if not np.all(np.isfinite(sol.x)):
        return None
    out = policy(sol.x)
    if not np.all(out[keep] > 0):
        return None
    with np.errstate(all="ignore"):
        g = output_gradient(q, obj, out)[keep]
    # the flow's speed on the face over beta: the note's residual (Eq. 11 and the direct form) also counts the
    # left answers' reference mass, which a face point never meets (fuzz seed 347: a limit face at G = inf)
    with np.errstate(over="ignore", invalid="ignore"):    # a tiny beta: an infinite speed, refused just below
        speed = out[keep] * np.abs(g - out[keep] @ g) / obj.beta
    if not np.all(np.isfinite(speed)) or float(speed.max()) > RESIDUAL_TOL:
        return None
    return out


def _judged(q: Question, obj: Objective, pi: np.ndarray, t: float, how: str) -> StationaryPoint | None:
    """The point ``pi`` (a root on its face) with its full-space verdict, or None where a left answer gains."""
    fs = full_space_stability(q, obj, pi)
    if not fs.kkt:
        return None
    on_face = bool(np.any((pi == 0) & (q.pi_ref > 0)))
    msg = f"the flow on all output logits from pi_ref ends here ({how}, followed to t = {t:g}); {fs.message}"
    if on_face:
        msg += "; on a face: reached only in the limit (the left answers' masses decay like 1/t)"
    return StationaryPoint(pi=pi, residual=stationarity_residual(q, obj, pi), converged=True, stable=fs.stable,
                           nfev=0, method="full-space flow from pi_ref", message=msg, boundary=on_face,
                           eigenvalues=fs.eigenvalues)


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE, candidate=registered('StationaryPoint', none=True),
         horizon=num(0, low_open=True))
def full_space_end(q: Question, obj: Objective, candidate: StationaryPoint | None = None, *,
                   horizon: float = FLOW_HORIZONS[-1]) -> StationaryPoint:
    """The end of the on-policy flow on all output logits from ``pi_ref`` (see the module doc).

    Parameters
    ----------
    q : Question
        The question (sequence level).
    obj : Objective
        The objective (any penalty, estimator, placement).
    candidate : StationaryPoint, optional
        The class solvers' answer: returned (with the flow's confirmation in its message) when the flow ends
        at it, so that the reported point keeps its accuracy and its diagnostics.
    horizon : float, default 1e12
        The last of :data:`FLOW_HORIZONS` followed (at least 1e6: the end is judged over the last two decades).

    Returns
    -------
    StationaryPoint
        The flow's end: a point (``boundary=True`` on a face), a limit on a face, or the policy at the last
        horizon with ``converged=False``.

    Examples
    --------
    k3 in the reward separates two answers of equal reward by their own log-ratios; the flow keeps the
    heavier (the class solvers' face point (0, 0.716, 0.284) is not where it goes):

    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.048143, 0.681806, 0.270051], rewards=[0.4, 1, 1])
    >>> obj = Objective(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k3",
    ...                 kl_placement="reward")
    >>> end = full_space_end(q, obj)
    >>> end.pi.round(6).tolist(), end.boundary
    ([0.0, 1.0, 0.0], True)
    """
    _check_full_space_size(q)
    support = np.flatnonzero(q.pi_ref > 0)
    theta = np.log(q.pi_ref[support])
    rhs = _rhs(q, obj, support)
    horizons = tuple(h for h in FLOW_HORIZONS if h <= horizon)
    if len(horizons) < 2:
        raise InvalidInputError(f"horizon must be at least {FLOW_HORIZONS[1]:g}, got {horizon!r}")
    t, seen, held = 0.0, [], None
    for stop in horizons:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                late = _integrate(rhs, theta, t, stop)
            except (InvalidInputError, RuntimeError):
                if t < _LOG_TIME_FROM:
                    raise
                late = None
        if late is None or not np.all(np.isfinite(late)):
            # the flow could not be followed past t (its solvers failed: KL fuzz seed 870): judged on the horizons
            # reached, as where the flow was followed only that far
            break
        theta = late
        t = stop
        theta = theta - theta.max()
        pi = _policy(q, support, theta)
        seen.append(pi)
        if _at_interior_candidate(q, obj, candidate, pi):
            fs = full_space_stability(q, obj, candidate.pi)
            if fs.stable is not False:
                return _confirmed(candidate, fs, t, penalty_restores_class_proportions(obj))
        keep = pi >= _SNAP
        root = _face_root(q, obj, pi, keep)
        point = None
        if root is not None and float(np.abs(root - pi).max()) <= _NEAR:
            if candidate is not None and float(np.abs(candidate.pi - root).max()) <= 1e-7:
                fs = full_space_stability(q, obj, candidate.pi) if not candidate.boundary else None
                if fs is None or fs.stable is not False:
                    return _confirmed(candidate, fs, t, penalty_restores_class_proportions(obj))
            point = _judged(q, obj, root, t, "a root of the flow on its support")
        if point is not None:
            if point.stable is True or (held is not None and float(np.abs(held.pi - point.pi).max()) <= 1e-7):
                return point
            held = point
            continue
        held = None
        if _LOG_TIME_FROM <= t < horizons[-1]:
            # a limit on a face whose left answers all drift outward, seen from t = 1e8 on: no need to go further
            limit = _limit_or_moving(q, obj, seen, t, final=False)
            if limit is not None:
                return limit
    if candidate is not None and candidate.converged and candidate.discontinuous and candidate.stable is True \
            and float(np.abs(seen[-1] - candidate.pi).max()) <= _NEAR and not jump_repeller(q, obj, candidate.pi):
        # a jump of the field (a tie of the shaped rewards under a std with no epsilon): the flow chatters there
        # and never settles to a root, but it is at the class solvers' Filippov point, whose every single-logit
        # nudge on all output logits is pulled back
        return dataclasses.replace(candidate, message=(
            f"{candidate.message}; the flow on all output logits from pi_ref is within "
            f"{float(np.abs(seen[-1] - candidate.pi).max()):.1e} of it at t = {t:g} (chattering at the jump), and "
            "nudging any one output logit either way is pulled back"))
    end = _limit_or_moving(q, obj, seen, t)
    if candidate is not None and not end.converged:
        gap = float(np.abs(candidate.pi - end.pi).max())
        end = dataclasses.replace(end, message=(
            f"{end.message}; the class solvers' answer {np.array2string(candidate.pi, precision=6)} "
            f"(converged={candidate.converged}, stable={candidate.stable}, boundary={candidate.boundary}) is "
            f"{gap:.3g} (max-norm) from the flow at t = {t:g}: not returned as the flow's end"))
    return end


def _integrate(rhs, theta: np.ndarray, t0: float, t1: float) -> np.ndarray:
    """The logits at flow time ``t1`` from ``theta`` at ``t0``: in ``t`` up to :data:`_LOG_TIME_FROM`, beyond it in
    ``s = log(1 + t)`` (``d theta/ds = (1 + t) d theta/dt``, ``s`` carried as one more coordinate of the state)."""
    if t0 < _LOG_TIME_FROM:
        return integrate_until_slow(rhs, theta, t1 - t0, None)

    def in_log_time(y):
        if not np.all(np.isfinite(y)):
            return np.full(y.size, np.nan)          # a failed trial step (BDF's Newton): the solver backs off
        return np.append(math.exp(y[-1]) * rhs(y[:-1]), 1.0)

    y = integrate_until_slow(in_log_time, np.append(theta, math.log1p(t0)), math.log1p(t1) - math.log1p(t0), None)
    return y[:-1]


def _at_interior_candidate(q: Question, obj: Objective, candidate: StationaryPoint | None, pi: np.ndarray) -> bool:
    """Whether the flow, at ``pi``, is near the class solvers' converged interior answer and Newton's method on
    the logits of the whole support, started at ``pi``, lands within 1e-7 of it: the flow's end is that answer
    even where some of its masses are below ``_SNAP`` (fuzz seed 25: a mass 3.6e-7, the flow 1e-16 from it)."""
    support = q.pi_ref > 0
    if candidate is None or not candidate.converged or candidate.boundary or not np.all(pi[support] > 0) \
            or float(np.abs(candidate.pi - pi).max()) > _NEAR:
        return False
    root = _face_root(q, obj, pi, support)
    return root is not None and float(np.abs(candidate.pi - root).max()) <= 1e-7


def penalty_restores_class_proportions(obj: Objective) -> bool:
    """Whether, at fixed class masses, the penalty alone pulls the answers of a class back to ``pi_ref``'s
    proportions: the note's two penalties (k3 in the loss, reverse; the direct penalty), with the plain group
    advantage terms (no tie filtering, no entropy bonus). Their ``g_o = P_c - beta s(lr_o)`` has ``s`` strictly
    increasing in the answer's own log-ratio (``1 - e^{-lr}``, ``lr + 1``) while ``P_c`` depends on the class
    masses only, so a move inside a class at fixed class masses is restored: a point stable in class
    coordinates is stable across each class, and every stationary point is proportional inside classes. The
    registry says which penalties do (:attr:`grpo_theory.variants.Regime.restores_class_proportions`).

    Parameters
    ----------
    obj : Objective
        The objective.
    """
    return obj.regime_variant.restores_class_proportions and not changes_regulariser(obj)


def _confirmed(candidate: StationaryPoint, fs, t: float, restores: bool) -> StationaryPoint:
    """The class solvers' point, where the full-space flow ends at it."""
    why = f"the flow on all output logits from pi_ref ends here too (followed to t = {t:g})"
    if candidate.stable is True and restores:
        # the class verdict holds across each class too (penalty_restores_class_proportions)
        return dataclasses.replace(candidate, message=f"{candidate.message}; {why}")
    if fs is not None and fs.stable is None and candidate.stable is True:
        return dataclasses.replace(candidate, stable=None, eigenvalues=fs.eigenvalues,
                                   message=f"{candidate.message}; {why}; on all output logits: {fs.message}")
    return dataclasses.replace(candidate, message=f"{candidate.message}; {why}")


def _limit_or_moving(q: Question, obj: Objective, seen: list, t: float, *, final: bool = True) -> StationaryPoint | None:
    """After the last horizon: a limit on a face where the light masses keep decaying and the rest stays put,
    else the policy at the horizon, ``converged=False``. Before it (``final=False``, from t = 1e8): only a limit
    whose every left answer drifts outward or is neutral (KKT), else None (the flow is followed on); a limit that
    leaves behind an answer that would gain (:func:`_left_behind`) is judged only at the last horizon, where the
    decay exponent is read latest (reliability seed 1132's light answer falls until t = 1e8 and comes back by
    1e12)."""
    before, end = seen[-2], seen[-1]
    support = q.pi_ref > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        fall = np.where(end > 0, before / end, math.inf)
    vanishing = support & (end < 1e-2) & (fall >= _DECAY)
    keep = support & ~vanishing
    face = np.where(keep, end, 0.0)
    face = face / face.sum()
    moved = float(np.abs(np.where(keep, before, 0.0) / np.where(keep, before, 0.0).sum() - face).max())
    behind_note = ""
    if vanishing.any() and moved <= 1e-3:
        root = _face_root(q, obj, face, keep)
        if root is not None and float(np.abs(root - face).max()) <= _NEAR:
            fs = full_space_stability(q, obj, root)
            drift = fs.absent_drift
            gaining = np.flatnonzero(vanishing & (drift > 1e-12))
            if gaining.size and not final:
                return None
            behind, behind_note = _left_behind(q, obj, before, end, t, gaining) if gaining.size else (True, "")
            if behind:
                rates = np.log10(fall[vanishing]) / math.log10(t / (t / 100))
                stable = fs.stable if fs.kkt else None
                return StationaryPoint(
                    pi=root, residual=stationarity_residual(q, obj, root), converged=True, stable=stable, nfev=0,
                    method="full-space flow from pi_ref: limit on a face", boundary=True,
                    eigenvalues=fs.eigenvalues,
                    message=(f"the flow on all output logits from pi_ref runs into this face: answers "
                             f"{np.flatnonzero(vanishing).tolist()} keep losing mass (like t^-"
                             f"{np.array2string(rates, precision=2)} between t = {t / 100:g} and {t:g}; at t = "
                             f"{t:g} their masses are {np.array2string(end[vanishing], precision=2)}) while the "
                             f"rest moves by {moved:.1e}: a limit, reached only as t -> inf; "
                             + ("every left answer drifts outward" if fs.kkt else
                                f"{behind_note}; stability on the face undecided" if gaining.size else
                                "some left answers' drift is 0 on the face (a neutral direction, left at a rate "
                                "that decays like 1/t): stability on the face undecided") + f"; {fs.message}"))
    if not final:
        return None
    residual = stationarity_residual(q, obj, end)
    rhs = _rhs(q, obj, np.flatnonzero(support))
    speed = float(np.abs(rhs(np.log(end[support]))).max()) if np.all(end[support] > 0) else math.nan
    still = float(np.abs(end - before).max())
    at_jump = math.isfinite(speed) and speed >= _JUMP_SPEED
    slide = kink_slide(q, obj, end) if at_jump and still <= _STUCK else ""
    if slide:
        # the integration is stuck chattering at jumps of the field that the flow slides off (kinks.kink_slide)
        slid = _slid(q, obj, end, slide)
        if slid is not None:
            return slid
    if not slide and at_jump and still <= _RESTING and not jump_repeller(q, obj, end):
        # the field does not vanish here but the flow has not moved over two decades of flow time: it chatters at
        # a jump of the field (REINFORCE++'s whitening at a tie of the shaped rewards, which divides by their std
        # with no epsilon), and every single-logit nudge is pulled back: a Filippov equilibrium, where a trainer
        # comes to rest up to a chatter set by its step size (fuzz seeds 1742, 5214, 6019; a flow with the std
        # smoothed by delta ends within 2e-11 of it as delta -> 0: tests/test_fuzz_kl_regressions_10k.py)
        return StationaryPoint(
            pi=end, residual=residual, converged=True, stable=True, nfev=0, method="full-space flow from pi_ref",
            discontinuous=True, message=(
                f"the flow on all output logits from pi_ref rests here: it moved {still:.1g} (max norm) between "
                f"t = {t / 100:g} and {t:g} while the field's logit speed is {speed:.2g}, i.e. it chatters at a jump "
                "of the field (a Filippov equilibrium: the stationarity residual does not vanish, stationarity_"
                f"residual {residual:.2g}); nudging any one output logit either way is pulled back"))
    return StationaryPoint(
        pi=end, residual=residual, converged=False, stable=None, nfev=0, method="full-space flow from pi_ref",
        message=(f"the flow on all output logits from pi_ref is still moving at t = {t:g} (logit speed "
                 f"{speed:.2g}, stationarity residual {residual:.2g}; max-norm move {float(np.abs(end - before).max()):.2g} "
                 f"since t = {t / 100:g}): no stationary point or limit found"
                 + (f"; {behind_note}" if behind_note else "")))


def _slid(q: Question, obj: Objective, start: np.ndarray, why: str) -> StationaryPoint | None:
    """Where the flow goes from a rest of the plain integration at jumps it slides off (``why``): the end of
    :func:`~.kinks.sliding_end`, judged (a Filippov rest whose left answers drift outward), or None."""
    found = sliding_end(q, obj, start)
    if found is None:
        return None
    pi, how = found
    held = kink_slide(q, obj, pi)
    fs = full_space_stability(q, obj, pi)
    if held or not fs.kkt:
        return None
    on_jumps = np.flatnonzero(~np.isnan(kink_answers(q, obj, pi)))
    free = np.count_nonzero(pi > 0) - on_jumps.size
    on_face = bool(np.any((pi == 0) & (q.pi_ref > 0)))
    stable = True if free <= 1 else None
    msg = (f"the plain integration of the flow on all output logits chatters at {np.array2string(start, precision=6)}"
           f", but {why}; {how}: answers {on_jumps.tolist()} rest on their jumps, which hold (a Filippov "
           "equilibrium: the stationarity residual does not vanish)"
           + ("" if stable else f", and the {free} answers off them are not judged for stability")
           + ("; on a face: reached only in the limit (every left answer drifts outward)" if on_face else ""))
    return StationaryPoint(pi=pi, residual=stationarity_residual(q, obj, pi), converged=True, stable=stable, nfev=0,
                           method="full-space flow from pi_ref", discontinuous=True, boundary=on_face, message=msg)


def _left_behind(q: Question, obj: Objective, before: np.ndarray, end: np.ndarray, t: float,
                 gaining: np.ndarray) -> tuple[bool, str]:
    r"""Whether the answers ``gaining``, absent from a face the flow runs into although each would gain at any
    fixed small mass (``g_o - E g > 0`` on the face: a class-mate of a kept answer under a penalty that pulls it
    back to ``pi_ref``'s proportions), are left at mass 0 for good; and why, in words.

    Along the flow, ``d/dt log(pi_o / pi_h) = f_o - f_h`` with ``f`` the logit speeds and ``h`` the heaviest
    answer. The heaviest gains from the collapse of the others at a rate that decays like ``1/t``; ``o``'s own
    speed ``f_o = pi_o (g_o - E g)`` is proportional to its mass. If ``pi_o`` falls like ``t^-c`` with ``c > 1``
    (``g_o - E g`` growing at most like ``log t``), ``o``'s own push adds at most ``f_o(T) T / (c - 1)`` to its
    log-mass after ``T`` while the pull's integral diverges (``log t``): ``pi_o -> 0``. With ``c <= 1`` the own
    push outgrows the pull and the answer returns (reliability fuzz seed 2444: ``c = 0.67``; seed 323:
    ``c = 1.6``, left behind). Checked on the last two decades ``[T/100, T]`` of the flow: ``c``, read from
    the fall of ``pi_o``, at least :data:`_BEHIND_EXPONENT`; ``f_o < f_h`` at both ends; the ratio ``f_o / f_h``
    falling; and the bound ``f_o(T) T / (c - 1)`` at most :data:`_BEHIND_GAIN`.
    """
    support = np.flatnonzero(q.pi_ref > 0)
    if not (np.all(before[support] > 0) and np.all(end[support] > 0)):
        return False, "a left answer's mass underflowed: the fall cannot be read"
    rhs = _rhs(q, obj, support)
    where = {int(o): i for i, o in enumerate(support)}
    with np.errstate(all="ignore"):
        f_before, f_end = (rhs(np.log(p[support])) for p in (before, end))
    top = where[int(support[np.argmax(end[support])])]
    notes, ok = [], True
    for o in gaining:
        i = where[int(o)]
        c = math.log10(before[o] / end[o]) / 2.0
        gain = f_end[i] * t / (c - 1.0) if c > 1.0 else math.inf
        falling = f_end[i] < f_end[top] and f_before[i] < f_before[top] \
            and f_end[i] / f_end[top] < f_before[i] / f_before[top]
        good = bool(np.isfinite(gain) and c >= _BEHIND_EXPONENT and falling and gain <= _BEHIND_GAIN)
        ok &= good
        notes.append(f"answer {int(o)} would gain at a fixed small mass (drift > 0 on the face) but falls like "
                     f"t^-{c:.2f} (mass {end[o]:.2g} at t = {t:g}; own logit speed {f_end[i]:.2g} against the "
                     f"heaviest answer's {f_end[top]:.2g}); "
                     + (f"its own push can add at most {gain:.1g} to its log-mass after t = {t:g}: left behind for "
                        "good" if good else
                        "its own push grows against the others' pull (t f_o rises like t^(1-c)): if the rates hold, "
                        "it comes back, beyond the horizon" if c <= 1.0 else
                        "left behind is not shown"))
    return ok, "; ".join(notes)
