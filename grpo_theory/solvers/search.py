"""The one dispatch: which problem a question is (token level on a tree, or classes), and the searches.

:func:`token_level` decides the level, here and nowhere else; :func:`stationary_policy` and
:func:`stationary_points` hand the question to :mod:`~grpo_theory.solvers.tree`,
:mod:`~grpo_theory.solvers.two_class` or :mod:`~grpo_theory.solvers.multi_class`.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .._checks import OBJECTIVE, QUESTION, checked, flags, instance, items
from .._validate import integer, number
from ..errors import InvalidInputError
from ..problem import Objective, Question, as_objective, as_question, require_regularised
from .certify import certification_scope, certified_stationary_points
from .classes import ClassProblem, stationarity_residual
from .common import dedupe
from .full_space import full_space_stability, jump_repeller, logit_newton_step, perturbed_ends
from .full_space_end import full_space_end, reduction_exact
from .large_beta import reference_in_rounding, reference_point
from .multi_class import multi_class_points, multi_class_policy
from .results import RESIDUAL_TOL, Basin, StationaryPoint, StationaryPointSet
from .tie_jump_end import has_tie_jumps, tie_jump_end
from .tree import tree_stationary_policy
from .tree_search import tree_search
from .two_class import flow_root_from, two_class_points
from .work import check_policy_work, check_tree_work, search_work_checked

__all__ = ["token_level", "stationary_policy", "stationary_points", "basins_of", "kkt_checked", "CERTIFY_BOXES"]

#: Boxes a certification may examine by default before :func:`stationary_points` falls back to the
#: multi-start search: work, not seconds, so that a question gets the same answer on any machine and any load.
#: K = 3 classes (benchmarks/certify_bench.py's six questions) take 129-871 boxes at G = 16, 64 intervals or
#: 185-673 boxes at G = inf, 847-5,485 at G = 32 and 2,755-16,931 at G = 48 (docs/performance.md).
CERTIFY_BOXES = 10_000
#: Mass below which an answer of pi_ref's support counts as absent (the point sits on a face).
FACE_MASS = 1e-14


@checked(q=QUESTION, obj=OBJECTIVE)
def token_level(q: Question, obj: Objective) -> bool:
    """Whether the token-level solver is needed: token level on a tree of multi-token answers.

    With single-token answers every loss type gives the sequence-level condition (the weight of
    a token is the same for every answer), so the sequence solvers, exhaustive for two classes,
    answer it.

    Parameters
    ----------
    q : Question
        The question; its ``answers`` give the token count of each answer.
    obj : Objective
        The objective; its ``level`` is read.

    Returns
    -------
    bool
        True when ``obj.level == "token"`` and some answer of ``q`` has more than one token.

    Raises
    ------
    InvalidInputError
        When a token-level objective meets a preference-matrix question.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.5, 0.5], rewards=[1, 0], answers=["AB", "C"])
    >>> token_level(q, Objective(beta=0.1, level="token")), token_level(q, Objective(beta=0.1))
    (True, False)
    """
    if not obj.level_variant.per_token:
        return False
    if not q.has_reward_law:
        raise InvalidInputError(f"level={obj.level!r} needs a reward law; this question was given as a preference "
                                "matrix, which does not say how a group's advantages reach each token")
    return q.is_tree



#: NumPy's floating-point warnings are not this package's to pass on: at the extremes (beta of 1e-310 or 1.7e308,
#: masses of 1e-300) the solvers meet overflow and 0/0 on purpose and handle every non-finite value they make; what
#: a caller needs to know comes as a TheoryWarning or in the result's message. Values are unchanged.
def _floats_handled(fn):
    @functools.wraps(fn)
    def quiet(*args, **kwargs):
        with np.errstate(all="ignore"):            # a fresh state per call: the calls nest (points -> policy)
            return fn(*args, **kwargs)
    return quiet


@_floats_handled
def stationary_policy(q: Question, obj: Objective) -> StationaryPoint:
    """The stationary policy that the on-policy GRPO flow reaches from ``pi_ref``.

    When several stationary points exist (see :func:`stationary_points`), this is
    the one in whose basin ``pi_ref`` lies: the policy a GRPO run initialised at
    the reference model heads to under exact expectations.

    The flow is the one on all output logits (the gauge removed). The class solvers (answers of one reward
    law pooled) answer where :func:`~grpo_theory.solvers.full_space_end.class_reduction_exact` says their end
    is that flow's end; elsewhere (the KL in the reward or the advantage, k1 or a clamp in the loss, with
    several answers of one reward and unequal ``pi_ref``) the flow on all output logits is followed
    (:func:`~grpo_theory.solvers.full_space_end.full_space_end`): the result is a point (``boundary=True`` on
    a face, reached only in the limit), a limit on a face, or ``converged=False`` with the reason.

    Parameters
    ----------
    q : Question
        The question: ``pi_ref`` and the reward law (or, for ``G = 2``, a preference matrix).
    obj : Objective or mapping
        The GRPO objective (``beta``, ``G``, penalty, normalisation, ...), or a dict of its fields.

    Returns
    -------
    StationaryPoint
        The policy ``pi`` with its residual, stability and how it was found.

    Raises
    ------
    InvalidInputError
        When ``q`` is not a :class:`~grpo_theory.problem.Question` or ``obj`` is not a valid objective.
    NoStationaryPolicy
        When ``obj`` is unregularised (``beta = 0``, no entropy bonus).

    See Also
    --------
    :func:`stationary_points` : every stationary point, with stability and basins.

    Examples
    --------
    >>> from grpo_theory import Question, Objective, stationary_policy
    >>> sol = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0))
    >>> round(float(sol.pi[0]), 6)   # Eq. 14 at beta = gamma: sqrt(0.3)
    0.547723
    """
    q, obj = as_question(q), as_objective(obj)
    require_regularised(obj, "stationary_policy")
    if token_level(q, obj):
        check_tree_work(q, search=False, caller="stationary_policy")
        return tree_stationary_policy(q, obj)
    cp = ClassProblem(q, obj)
    if cp.n_classes == 1:
        return _single_class_point(q, obj)
    if reference_in_rounding(q, obj, cp):
        return reference_point(q, obj)
    if cp.n_classes == 2:
        # a root bracketed by a sign change of the class drift and refined by Brent in the class logit: a root
        # there, whatever pi's rounding (pi(b) = 5.6e-17 for pi_ref(a) = 1e-300) does to log pi
        point = flow_root_from(cp, float(cp.log_p[0] - cp.log_p[1]))
        if reduction_exact(q, obj, cp.class_of, point):
            return _unsettled_to_full_space(q, obj, _full_space_checked(q, obj, cp, point))
        point = kkt_checked(q, obj, point)
        return _settled(q, obj, point, full_space_end(q, obj, point))
    check_policy_work(q, obj, cp.n_classes)
    point = kkt_checked(q, obj, multi_class_policy(cp))
    if reduction_exact(q, obj, cp.class_of, point):
        return _unsettled_to_full_space(q, obj, _root_in_logits(q, obj, _full_space_checked(q, obj, cp, point)))
    # the class flow's end is only a candidate: the flow on all output logits decides (full_space_end)
    return _settled(q, obj, point, full_space_end(q, obj, point))


def _settled(q: Question, obj: Objective, candidate: StationaryPoint, end: StationaryPoint) -> StationaryPoint:
    """``end``, the flow on all output logits' end; where that flow did not settle on a field that jumps at tied
    shaped rewards, the class solvers' converged ``candidate`` if the nearby continuous fields' flows rest at it
    (:func:`~grpo_theory.solvers.tie_jump_end.tie_jump_end`)."""
    if end.converged or not candidate.converged or not has_tie_jumps(obj):
        return end
    return tie_jump_end(q, obj, candidate, end, stationary_policy)


def _unsettled_to_full_space(q: Question, obj: Objective, point: StationaryPoint) -> StationaryPoint:
    """``point`` (the class solvers' answer where the reduction is exact), or, where it did not converge, the end of
    the flow on all output logits if that one settles: a flow that comes to rest at a jump of the field never
    settles to a root, which the class solvers look for (abs in the loss at pi = pi_ref, where the penalty's slope
    ``sign(lr)`` points back from both sides: fuzz seeds 626, 904, 1680), while
    :func:`~grpo_theory.solvers.full_space_end.full_space_end` recognises the rest (a Filippov equilibrium)."""
    if point.converged:
        return point
    # the reduction is exact, so the class flow is the flow: the full-space one is followed only to t = 1e8, far
    # enough to see a rest at a jump (a mass of 1e-300 that the class flow cannot lift cost 15 s to 1e12)
    end = full_space_end(q, obj, horizon=1e8)
    # an end that drops an answer the class solvers keep is not taken over an unsettled root: at beta = 1e-320 the
    # class root pi(b) = 7e-321 is right to the subnormal spacing (its residual, 1e-4, is that spacing's rounding),
    # while the flow's end is the vertex it approaches only in the limit
    # (an end on jumps of the field that the flow slides along to a face is exact: kinks.sliding_end)
    if not end.converged or (not end.discontinuous and np.any((np.asarray(end.pi) <= 0) & (np.asarray(point.pi) > 0))):
        return point
    return dataclasses.replace(end, message=f"{end.message}; the class solvers did not settle: {point.message}")


#: Mass below which a converged point's root is also checked in the output logits (:func:`_root_in_logits`).
_LIGHT_MASS = 1e-6
#: Length of the Newton step on the output logits above which such a point is not a root.
_NEWTON_TOL = 1e-3


def _root_in_logits(q: Question, obj: Objective, point: StationaryPoint) -> StationaryPoint:
    """``point`` (the multi-class flow's end), or the same point flagged ``converged=False`` where an answer
    lighter than ``_LIGHT_MASS`` hides a residual: the residual weighs each answer's ``g_o - E g`` by its mass,
    and near a vertex, where the field is also weak, the root can be far in the logits (fuzz seed 6872:
    filtered ties, a Newton step of 0.8)."""
    pi = point.pi
    if not point.converged or point.boundary or point.discontinuous or not np.any((pi > 0) & (pi < _LIGHT_MASS)):
        return point
    step = logit_newton_step(q, obj, pi)
    if step <= _NEWTON_TOL:
        return point
    return dataclasses.replace(point, converged=False, message=(
        f"{point.message}; but not a root in the output logits: the Newton step there is {step:.3g} (answers "
        f"below mass {_LIGHT_MASS:g} hide their g - E g in the residual): the flow is slow here, not stopped"))


def _single_class_point(q: Question, obj: Objective) -> StationaryPoint:
    """Every supported output shares one reward law: ``P_G = 0`` and every KL estimate vanishes at ``pi_ref``,
    so ``pi_ref`` is stationary. The note's two penalties pull each answer back to it (stable); any other
    estimator or placement is judged on all output logits, where it can be flat (k1 in the loss, whose expected
    gradient vanishes) or have a kink (abs at ``pi = pi_ref``)."""
    pi = q.pi_ref.copy()
    why = "all supported outputs share one reward law: P_G = 0 and pi = pi_ref"
    if obj.regime_variant.is_note_penalty:
        stable, eig, why = True, None, why + ", and the penalty alone restores it"
    else:
        fs = full_space_stability(q, obj, pi)
        stable, eig, why = fs.stable, fs.eigenvalues, f"{why}; on all output logits: {fs.message}"
    ends = None
    if stable is None and np.count_nonzero(pi) > 1:
        # undecided at first order (a ~0 eigenvalue, a kink): the flow can still leave on one side
        ends, how = perturbed_ends(q, obj, pi)
        if len(ends):
            stable, why = False, (f"{why}; but it repels on one side (the exact flow from pi_ref stays, a nudged "
                                  f"one leaves): nudged off it, {how}")
    return StationaryPoint(pi=pi, residual=stationarity_residual(q, obj, pi), converged=True, stable=stable,
                           nfev=0, method="single-class", eigenvalues=eig, message=why, perturbed_end=ends)


def _full_space_checked(q: Question, obj: Objective, cp: ClassProblem, point: StationaryPoint) -> StationaryPoint:
    """``point`` (the class flow's end), or the end of the flow on all output logits where the class
    reduction hides an instability.

    Where a class holds answers of different reference mass the reduction is not invariant under the flow
    on output logits (:func:`~grpo_theory.solvers.full_space_end.class_reduction_exact`), and a point stable in class coordinates can be unstable
    across a class (e.g. the k2 value in the reward or the advantage, not monotone in the log-ratio: two
    answers of one class can tie at log-ratios of opposite sign). Such a point is not where a trainer
    comes to rest: the flow on all output logits from ``pi_ref`` is followed instead
    (:func:`~grpo_theory.solvers.full_space_end.full_space_end`), and its end, judged on all output logits, is
    returned.
    """
    if point.converged and point.stable is True and point.discontinuous and not point.boundary:
        away = jump_repeller(q, obj, point.pi)
        if away:
            return dataclasses.replace(point, stable=False, message=(
                f"{point.message}; but on all output logits this jump repels: {away} (the answers of a class "
                "split; where the flow goes from there is not computed)"))
        return point
    if not (point.converged and point.stable is True) or point.boundary or point.discontinuous \
            or obj.regime_variant.is_note_penalty:
        # the note's two penalties pull each answer back to its class's proportion (g_o falls strictly
        # in log(pi_o/pi_ref_o) at a fixed class mass): across a class the flow is stable
        return point
    fs = full_space_stability(q, obj, point.pi)
    if fs.stable is True:
        return point
    if fs.stable is None:
        # e.g. a near-vertex point whose slowest rate is of the order of its light masses, below what the
        # differences resolve, or a flat direction: say so rather than keep the class verdict
        return dataclasses.replace(point, stable=None, eigenvalues=fs.eigenvalues,
                                   message=f"{point.message}; on all output logits: {fs.message}")
    why = (f"the class flow's end {np.array2string(point.pi, precision=6)} is stable in class coordinates but not "
           f"on all output logits (leading eigenvalue {fs.leading:.3g})")
    end = full_space_end(q, obj)
    if end.converged and end.stable is True:
        return dataclasses.replace(end, message=f"{end.message}; {why}")
    return dataclasses.replace(point, stable=False, message=(
        f"{point.message}; but {why}, and the flow on all output logits from pi_ref does not settle on a "
        "stable point: this point is a saddle of the full flow"))


@checked(q=QUESTION, obj=OBJECTIVE, p=instance(StationaryPoint, "a StationaryPoint", " (what stationary_policy returns)"))
def kkt_checked(q: Question, obj: Objective, p: StationaryPoint) -> StationaryPoint:
    """``p`` judged by the KKT conditions of the flow on all output logits where it sits on a face.

    A point whose answers ``A`` (of pi_ref's support) have mass below :data:`FACE_MASS` is stationary
    for the flow only if every absent answer's logit drift ``g_o - E_pi g`` is negative
    (:func:`~grpo_theory.solvers.full_space.full_space_stability`): with a positive drift the face repels
    and the point is reported ``converged=False, stable=False`` whatever its residual (which the zero
    masses make small). A vertex that passes is a collapse reached in the limit: ``boundary=True``, stable
    by the KKT verdict. A point off the faces that the search left ``converged=False`` although its
    stationarity residual is within :data:`RESIDUAL_TOL` is reported converged.

    Parameters
    ----------
    q : Question
        The question ``p`` was found for.
    obj : Objective
        The objective ``p`` is to be stationary for.
    p : StationaryPoint
        A point from the multi-start search or the flow.

    Returns
    -------
    StationaryPoint
        ``p``, or a copy with ``converged``, ``stable``, ``boundary`` and ``message`` corrected (and, for a
        vertex, ``pi`` the vertex itself).
    """
    if p.pi.shape != q.pi_ref.shape:
        raise InvalidInputError(f"p.pi has {p.pi.size} entries and q has {q.pi_ref.size} outputs: p must be a point of "
                                "the question q")
    absent = (q.pi_ref > 0) & (p.pi < FACE_MASS)
    if absent.any() and p.converged and not p.boundary and np.all(p.pi[q.pi_ref > 0] > 0) \
            and logit_newton_step(q, obj, p.pi) <= _NEWTON_TOL:
        # a root in the output logits whose light masses are tiny but positive (1e-23 at G = 8, direct, beta =
        # 0.05): interior, boundary=False, as the two-class path says; a face is a point with an answer at 0
        return p
    if not absent.any():
        if not p.converged and stationarity_residual(q, obj, p.pi) <= RESIDUAL_TOL:
            return dataclasses.replace(p, converged=True, message=(
                f"{p.message}; stationarity residual {stationarity_residual(q, obj, p.pi):.1e} "
                f"<= {RESIDUAL_TOL:g}: converged"))
        return p
    face = np.where(absent, 0.0, p.pi)
    face = face / face.sum()
    fs = full_space_stability(q, obj, face)
    if not fs.kkt:
        return dataclasses.replace(p, converged=False, stable=False,
                                   message=f"{p.message}; not stationary: {fs.message}")
    if np.count_nonzero(face) == 1:
        # the limit point is the vertex itself, as the two-class and multi-class solvers report it
        # (not where the search stopped, with masses ~1e-60 on the other answers)
        return dataclasses.replace(p, pi=face, converged=True, boundary=True, stable=fs.stable, message=(
            f"{p.message}; a collapse onto a vertex, reached only in the limit: {fs.message}"))
    if not p.converged and stationarity_residual(q, obj, p.pi) <= RESIDUAL_TOL:
        return dataclasses.replace(p, converged=True, message=(
            f"{p.message}; on a face whose absent answers all drift outward (KKT) and stationarity residual "
            f"<= {RESIDUAL_TOL:g}: converged"))
    return p


@_floats_handled
def stationary_points(q: Question, obj: Objective, *, n_grid: int = 2001, n_starts: int = 24,
                      seed: int = 0, exhaustive: bool = True, box_budget: int = CERTIFY_BOXES,
                      time_budget: float | None = None) -> StationaryPointSet:
    """Every stationary point found, each with its stability under the logit flow.

    Two classes: exhaustive, on a grid of ``n_grid``
    class logits covering every possible root, refined by Brent's method, with
    tangencies detected and limit points at the vertices reported.
    Three or four classes, where :func:`~grpo_theory.solvers.certify.certification_scope` covers
    the question (the note's two penalties, deterministic rewards, sequence level) and ``exhaustive``
    is True: the certified set of :func:`~grpo_theory.solvers.certify.certified_stationary_points`:
    every stationary point, interior and on the faces, each with its ``certificate`` (box and test),
    its stability from the Jacobian of the flow on all output logits
    (:func:`~grpo_theory.solvers.full_space.full_space_stability`), a vertex reached only in the
    limit as ``boundary=True``; the set reports ``exhaustive=True``.
    Otherwise (out of scope, ``exhaustive=False``, or certification not done within ``box_budget``
    boxes): root finding from ``n_starts`` starting points (pi_ref, the uniform policy, near each
    vertex, the end of the flow from pi_ref, random), bounded in work (``multi_class.SEARCH_WORK_BUDGET``);
    not exhaustive: ``exhaustive=False``, the reason in ``message``.

    The set reports ``.stable``, ``.multistable``, ``.from_reference`` (the point the flow from
    ``pi_ref`` reaches), ``.basins`` (two classes) and ``.summary``, all found by the search.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective or mapping
        The GRPO objective, or a dict of its fields.
    n_grid : int, default 2001
        Class logits scanned for two-class questions (``>= 11``).
    n_starts : int, default 24
        Starting points of the root finder for more classes (and token-level trees).
    seed : int, default 0
        Seed of the random starting points.
    exhaustive : bool, default True
        Certify the set where :func:`~grpo_theory.solvers.certify.certification_scope` covers the
        question (three or four classes); False: root finding only.
    box_budget : int, default CERTIFY_BOXES
        Boxes the certification may examine before falling back to root finding (work, not seconds: the same
        answer on any machine).
    time_budget : float or None, default None
        A wall-clock limit in seconds, in addition (the answer then depends on the machine's load).

    Returns
    -------
    StationaryPointSet
        The points sorted by the probability of the best class, with ``exhaustive``,
        ``from_reference``, ``basins`` and ``summary``.

    Raises
    ------
    InvalidInputError
        When an argument is outside its range (``n_grid >= 11``, ``n_starts >= 1``, ``seed`` in
        ``[0, 2^32)``, budgets ``>= 0``) or ``q`` or ``obj`` is invalid.

    Examples
    --------
    >>> from grpo_theory import Question, Objective, stationary_points
    >>> pts = stationary_points(Question([0.14, 0.86], rewards=[1, 0]),
    ...                         Objective(beta=1.0, group_size=64, penalty="direct"))
    >>> pts.multistable, [round(float(p.pi[0]), 4) for p in pts.stable]
    (True, [0.9965, 0.544])
    >>> [(round(b.lo, 4), round(b.hi, 4)) for b in pts.basins], round(float(pts.from_reference.pi[0]), 4)
    ([(0.0, 0.9734), (0.9734, 1.0)], 0.544)
    """
    # caps: each start is a local solve and each grid point an evaluation (10**30 would never finish)
    n_grid, n_starts = integer("n_grid", n_grid, low=11, high=10**7), integer("n_starts", n_starts, low=1,
                                                                               high=100_000)
    if not isinstance(exhaustive, (bool, np.bool_)):
        raise InvalidInputError(f"exhaustive must be True or False, got {exhaustive!r}")
    seed, box_budget = integer("seed", seed, low=0, high=2**32 - 1), integer("box_budget", box_budget, low=0)
    if time_budget is not None:
        time_budget = number("time_budget", time_budget, low=0.0)
    q, obj = as_question(q), as_objective(obj)
    require_regularised(obj, "stationary_points")
    basins = None
    search_work_checked(q, obj, exhaustive=exhaustive, box_budget=box_budget, time_budget=time_budget, n_starts=n_starts)
    if token_level(q, obj):
        points, exhaustive, message, from_reference = tree_search(q, obj, n_starts=n_starts, seed=seed)
        cp = ClassProblem(q, obj)
    else:
        cp = ClassProblem(q, obj)
        from_reference = stationary_policy(q, obj)
        if cp.n_classes == 1:
            points, exhaustive, message = (from_reference,), True, "single class: pi = pi_ref"
        elif reference_in_rounding(q, obj, cp):
            # every stationary point is within a relative 2 max|A|/beta < 2^-53 of pi_ref, and the note's
            # penalties keep every answer of pi_ref's support: pi_ref is the only one, to double precision
            points, exhaustive, message = (from_reference,), True, from_reference.message
        elif cp.n_classes == 2:
            pts = dedupe(two_class_points(cp, n_grid))
            pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
            points, exhaustive = tuple(pts), True
            message = f"exhaustive scan of {n_grid} class logits in {cp.logit_bounds()}"
        else:
            why = certification_scope(q, obj) if exhaustive else "certification not asked for (exhaustive=False)"
            certified = None
            if why is None:
                certified, why = _certified_points(q, obj, box_budget, time_budget)
            if certified is not None:
                points, exhaustive, message = certified, True, why
            else:
                points, exhaustive, message = multi_class_points(cp, n_starts=n_starts, seed=seed)
                points = tuple(kkt_checked(q, obj, p) for p in points)
                message = f"{message} (not certified: {why})"
        points, from_reference, message = _with_reference(points, from_reference, message, exhaustive)
        if cp.n_classes == 2:
            basins = tuple(basins_of(points, cp.class_of == 0))
    summary = _summary(points, message, basins, from_reference, q.pi_ref, cp.class_of == 0)
    return StationaryPointSet(points, exhaustive, message, question=q, objective=obj,
                              from_reference=from_reference, basins=basins, summary=summary)


def _certified_points(q: Question, obj: Objective, box_budget: int,
                      time_budget: float | None) -> tuple[tuple | None, str]:
    """The certified set as StationaryPoints (stability on all output logits), or None and the reason."""
    res = certified_stationary_points(q, obj, time_budget=time_budget, max_boxes=box_budget)
    if not res.exhaustive:
        return None, res.message
    points = []
    for r in res.roots:
        fs = full_space_stability(q, obj, r.pi)
        if r.limit:
            points.append(StationaryPoint(
                pi=r.pi, residual=stationarity_residual(q, obj, r.pi), converged=True, stable=fs.stable, nfev=0,
                method="certified: limit vertex (KKT)", boundary=True, eigenvalues=fs.eigenvalues,
                message=f"{r.message}; full space: {fs.message}"))
            continue
        residual = stationarity_residual(q, obj, r.pi)
        if r.stable is True:
            # proved by the certificate's own bound (certify_search.Tilt.stability_bound), where the finite
            # differences of full_space_stability cannot resolve masses of 1e-40 or below (or pi shows 0)
            points.append(StationaryPoint(
                pi=r.pi, residual=residual, converged=True, stable=True, nfev=0,
                method=f"certified: {r.certificate.test}", certificate=r.certificate,
                message=f"{r.message} (equations' residual {r.residual:.1e}, stationarity residual {residual:.1e})"))
            continue
        if np.any(r.pi[q.pi_ref > 0] == 0):
            # an interior root whose smallest masses underflow (below 1e-308): pi shows a vertex or a face, where
            # the stability on all output logits cannot be read
            points.append(StationaryPoint(
                pi=r.pi, residual=residual, converged=True, stable=None, nfev=0,
                method=f"certified: {r.certificate.test}", certificate=r.certificate,
                message=(f"{r.message} (equations' residual {r.residual:.1e}); an interior root whose small masses "
                         "are below the double range: stability on all output logits not computed")))
            continue
        points.append(StationaryPoint(
            pi=r.pi, residual=residual, converged=True, stable=fs.stable, nfev=0,
            method=f"certified: {r.certificate.test}", eigenvalues=fs.eigenvalues, certificate=r.certificate,
            message=(f"{r.message} (equations' residual {r.residual:.1e}, stationarity residual {residual:.1e}); "
                     f"full space: leading eigenvalue {fs.leading:.3g}: {fs.message}")))
    return tuple(points), res.message


def _with_reference(points: tuple, from_reference: StationaryPoint, message: str,
                    exhaustive: bool) -> tuple[tuple, StationaryPoint, str]:
    """The set with :func:`stationary_policy`'s point in it, by construction: where a listed point is within
    1e-6 (max norm) of it, that entry becomes the policy's point (a certified entry keeps its certificate and
    diagnostics, with the policy's ``pi`` and residual); otherwise the
    policy's point, when converged, is added (the flow on all output logits ends off the class reduction, or
    at a point the search missed, which the message says)."""
    match = min(points, key=lambda p: float(np.abs(p.pi - from_reference.pi).max()), default=None)
    if match is not None and float(np.abs(match.pi - from_reference.pi).max()) <= 1e-6:
        if match.certificate is not None:
            # the certified entry keeps its certificate and its full-space Jacobian; its pi is the policy's
            from_reference = dataclasses.replace(match, pi=from_reference.pi, residual=from_reference.residual)
        return tuple(from_reference if p is match else p for p in points), from_reference, message
    if from_reference.converged:
        points = points + (from_reference,)
        message += ("; the flow on all output logits from pi_ref ends at a point the search did not list "
                    + ("(a certified set should hold every point: please report this question)" if exhaustive else
                       "(off the class reduction: answers of one class not proportional to pi_ref)") + ", added")
    return points, from_reference, message


@checked(points=items(StationaryPoint, "StationaryPoints", sequence=True), best=flags(ndim=1))
def basins_of(points, best: np.ndarray) -> list[Basin]:
    """Basins of attraction of the stable ``points`` of a two-class question, in ``pi(best class)``.

    Parameters
    ----------
    points : sequence of StationaryPoint
        Every stationary point of the question (stable, unstable and vertex limits).
    best : numpy.ndarray of bool
        Marks the outputs of the best class.

    Returns
    -------
    list of Basin
        One per stable point, ``(lo, hi)`` in ``pi(best class)``, ordered by mass.

    Notes
    -----
    The points are ordered by mass ``pi(best)``, ties (masses that round to 0 or 1 in floating
    point) broken by the class logit, which stays finite and ordered where the mass saturates; a
    vertex reached only in the limit carries an infinite logit and so sorts at its end. A stable
    point's basin runs between its unstable neighbours in that order, or to 0 or 1. Cutting
    ``[0, 1]`` at mass values instead gave ``(1, 1)`` for a point whose mass rounds to 1.

    Examples
    --------
    >>> from grpo_theory import Question, Objective, stationary_points
    >>> pts = stationary_points(Question([0.3, 0.7], rewards=[1, 0]),
    ...                         Objective(beta=1e-3, group_size=8, penalty="direct"))
    >>> [(b.lo, b.hi) for b in pts.basins]
    [(0.0, 1.0)]
    """
    best = np.asarray(best, dtype=bool)
    if any(p.pi.shape != best.shape for p in points):
        shapes = sorted({p.pi.size for p in points})
        raise InvalidInputError(f"best must mark each output of the points (their pi have {shapes} entries), got "
                                f"{best.size} flags")
    mass = [float(np.asarray(p.pi)[best].sum()) for p in points]

    def key(i):
        z = points[i].class_logit
        return (mass[i], 0.0 if z is None or np.isnan(z) else z)

    order = sorted(range(len(points)), key=key)
    out = []
    for pos, i in enumerate(order):
        if points[i].stable:
            below = [mass[j] for j in order[:pos] if points[j].stable is False]
            above = [mass[j] for j in order[pos + 1:] if points[j].stable is False]
            out.append(Basin(points[i], below[-1] if below else 0.0, above[0] if above else 1.0))
    return out


def _summary(points, message: str, basins, from_reference: StationaryPoint, pi_ref: np.ndarray,
             best: np.ndarray) -> str:
    """One line per stable point (best class's probability, basin), and which one ``pi_ref`` flows to."""
    def mass(p):
        return float(np.asarray(p.pi)[best].sum())
    stable = [p for p in points if p.stable]
    lines = [f"{len(stable)} stable point(s) of {len(points)} found ({message})"]
    for p in stable:
        # by identity: two stable points can share a mass that rounds to 1 (issue 25)
        b = next((b for b in basins or () if b.point is p), None)
        where = f", basin pi(best) in ({b.lo:.4g}, {b.hi:.4g})" if b else ""
        lines.append(f"  pi(best class) = {mass(p):.6g}{where}")
    start = float(pi_ref[best].sum())
    lines.append(f"  the flow from pi_ref (pi(best) = {start:.4g}) reaches pi(best) = {mass(from_reference):.6g}")
    return "\n".join(lines)
