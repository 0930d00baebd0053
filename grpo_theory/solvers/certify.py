r"""Certified isolation of every stationary point of a class question (**beyond** the note).

A *class* is the set of outputs with one deterministic reward; ``x`` (C,) are the class masses,
classes ordered by decreasing reward, ``p`` the reference masses. At every stationary point the
policy inside a class is proportional to ``pi_ref`` (see :mod:`grpo_theory.solvers.classes`), so the
stationary points are the roots of ``C - 1`` equations in the class log-ratios
``eta_k = log(x_k / x_{C-1})``:

* reverse penalty (Eq. 11 with ``E_x P = 0``): ``F_k = log x_k + log(beta - P_k(x)) - log(beta p_k)``;
* direct penalty: ``F_k = eta_k - log(p_k/p_{C-1}) - (P_k(x) - P_{C-1}(x))/beta``.

The last class's equation follows from the others (``sum_c x_c (beta - P_c) = beta`` on the simplex).

**Finite G.** ``P_c(x) = sum_n Mult(n; G-1, x) A[c, n]`` is the Bernstein form of a polynomial of
degree ``G - 1`` on the simplex: its coefficients are the advantages of the count enumeration.
Its derivative along ``e_k - e_{C-1}`` has the Bernstein coefficients ``(G-1)(A[n+e_k] - A[n+e_{C-1}])``
and its second derivatives the second differences; the extreme coefficients bound the range of
each over the whole simplex. On a box of ``eta`` the image in ``x`` is enclosed exactly (each
``x_c`` is monotone in each ``eta_j``), and ``P`` is enclosed by its second-order Taylor form at the
box's centre with the global bound of the second derivatives (valid along the segment to any
point of the image, which stays in the simplex).

**G = inf.** ``P_c = (v_c - mean)/(sqrt(var + veps) + eps)`` is enclosed by interval arithmetic
(``var`` is increasing in every mass). With the direct penalty and scale normalisation the
stationary points are exactly the tilts ``x_c ∝ p_c exp(v_c / t)`` whose temperature solves
``h(t) = t/beta - eps - sqrt(var_x(t) + veps) = 0``: a scalar problem, isolated on ``t > 0``. With an
epsilon it is solved in ``delta = t - t_min`` (``t_min = beta (eps + sqrt(veps))``), where ``h = delta/beta -
(sigma - sqrt(veps))`` keeps its relative precision: the epsilon creates a root next to the best class's vertex
at ``delta`` of order ``sigma``, whose worse masses are ``exp(-d_c / t_min)`` (1e-100, or exp(-2501), below the
double range). That root is isolated in ``log delta`` (``|d log(sigma - sqrt(veps))/dt| <= 1/t^2`` makes the
equation increasing there, and the root unique below ``delta = t_min^2/1000``); its masses are reported in
the root's message, and ``pi`` shows 0 where they underflow.

**Search.** Boxes are bisected; a box is discarded when the enclosure of some ``F_k`` excludes 0
(or, reverse, ``P_k >= beta`` on it). A root is certified by the Krawczyk test
``K(X) = m - Y F(m) + (I - Y J(X))(X - m) ⊂ int X`` (one and only one root in ``X``), applied to
each small box and to a box inflated around a Newton iterate. Boxes inside a certified box hold
no other root. The search is exhaustive when no box is left: every root lies in one certified box.

**Faces.** With the reverse penalty or the direct penalty where ``|P|`` is bounded (finite G, an
epsilon, shift) the gradient ``g_c`` of an absent class is ``+inf`` (``beta pi_ref/pi`` or
``-beta log pi`` dominates), so no point of a face is stationary: the KKT condition (every absent
class's logit drift points outward) fails. At G = inf, direct, scale, no epsilon, ``P_c`` of a worse
class tends to ``-inf`` like ``-1/sigma`` at the best class's vertex, faster than ``log x_c``: that
vertex is a limit point of the flow (reported with ``limit=True``); at every other vertex a better
class has ``P -> +inf`` and is pulled back; on the other faces ``sigma > 0`` and the log wins.

**Precision.** Arithmetic rounds to nearest; every enclosure compared with 0 is padded by a margin
far above the rounding error (relative 1e-12 plus absolute 1e-11 on ``F``), so the certificates are
proofs up to that stated margin, not directed-rounding proofs.

**Scope.** Deterministic rewards; penalties ``"reverse"`` (k3 in the loss) and ``"direct"`` (k2,
k3_ratio, k3_plus in the loss, k1 in the advantage, all unclamped); sequence level; any
normalisation, ddof and epsilons; C <= 4 classes, finite G (cost grows like ``G^(C-1)``) and G = inf.
Other estimators and placements (clamps, k1 in the loss, the KL in the reward) return
``exhaustive=False`` with the reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._checks import POSITIVE_COUNT, QUESTION, checked, num, checked_record
from ..problem import STATIONARY_OBJECTIVE, InvalidInputError, Objective, Question, as_objective, as_question
from .certify_search import Tilt, solve_eta
from .certify_system import Classes, EtaSystem

__all__ = ["Certificate", "CertifiedRoot", "CertifiedSet", "certified_stationary_points", "certification_scope"]


@dataclass(frozen=True)
@checked_record
class Certificate:
    """Why a root is certain: the box that holds exactly one root and the test that proved it.

    Attributes
    ----------
    box : numpy.ndarray
        The (C-1, 2) box ``[lo, hi]`` in the class log-ratios ``eta``, or at G = inf with the direct penalty
        the (1, 2) interval of ``t - t_min``, ``t`` the temperature and ``t_min = beta (eps + sqrt(veps))`` in
        units of the reward span (0 without epsilons; see the module doc).
    test : str
        The test that passed (e.g. the Krawczyk inclusion, or "single class: P = 0").
    """

    box: np.ndarray
    test: str


@dataclass(frozen=True)
@checked_record
class CertifiedRoot:
    """One stationary point of a class question, with its certificate.

    Attributes
    ----------
    pi : numpy.ndarray
        The policy, shape (K,).
    x : numpy.ndarray
        The class masses ``x_c`` (mass of the answers with the c-th distinct reward), shape (C,).
    residual : float
        The residual of the stationarity equations at the reported point.
    certificate : Certificate or None
        The box and test; None for a limit point.
    limit : bool
        A vertex reached only in the limit (not an interior root).
    message : str
        What the root is.
    stable : bool or None
        True where stability on all output logits is proved for the root (G = inf, direct penalty, scale: the
        bound of :meth:`~grpo_theory.solvers.certify_search.Tilt.stability_bound` below 1); None where this
        search does not decide it (the caller judges the Jacobian).
    """

    pi: np.ndarray
    x: np.ndarray
    residual: float
    certificate: Certificate | None
    limit: bool = False
    message: str = ""
    stable: bool | None = None


@dataclass(frozen=True)
@checked_record
class CertifiedSet:
    """All stationary points of a class question, as :func:`certified_stationary_points` returns them.

    Iterating over it (and ``len``) goes over ``roots``.

    Attributes
    ----------
    roots : tuple of CertifiedRoot
        The stationary points found, each certified (or a limit vertex).
    exhaustive : bool
        True only when the search proved there is no other stationary point.
    message : str
        How the search ended (or why ``(q, obj)`` is out of scope).
    n_boxes : int
        Boxes examined.
    seconds : float
        Wall time of the search.
    unresolved : numpy.ndarray
        The boxes left undecided when the budget ran out, shape (n, C-1, 2) (empty when exhaustive).
    """

    roots: tuple[CertifiedRoot, ...]
    exhaustive: bool
    message: str
    n_boxes: int = 0
    seconds: float = 0.0
    unresolved: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 2)))

    def __len__(self) -> int:
        return len(self.roots)

    def __iter__(self):
        return iter(self.roots)


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE)
def certification_scope(q: Question, obj: Objective) -> str | None:
    """None when :func:`certified_stationary_points` can certify ``(q, obj)``, else the reason why not.

    Parameters
    ----------
    q : Question
        Any question; inside the scope its rewards are deterministic (and, at token level, it is no tree).
    obj : Objective
        Any objective; inside the scope the note's penalty and group advantage, no tie filter, no entropy bonus.

    Returns
    -------
    str or None
        None inside the scope (the reverse or direct penalty, deterministic rewards, sequence level),
        else a sentence saying what is not covered.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> q = Question([0.5, 0.5], rewards=[1, 0])
    >>> certification_scope(q, Objective(beta=1.0)) is None
    True
    >>> noisy = Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4]])
    >>> "deterministic" in certification_scope(noisy, Objective(beta=1.0))
    True
    """
    if not obj.regime_variant.is_note_penalty:
        return (f"certification covers the note's two penalties (k3 in the loss; k2/k3_ratio/k3_plus in the "
                f"loss, k1 in the advantage, unclamped); this objective is {obj.describe()}")
    if not obj.advantage_variant.is_note_advantage or obj.filter_ties or obj.entropy_coef > 0:
        # the boxes are built from the note's equations (group advantage, the plain penalty): the GRPO family's
        # estimators and regularisers (grpo_theory.advantage) change them, so those are searched, not certified
        return (f"certification covers the group advantage without tie filtering or an entropy bonus; this "
                f"objective is {obj.describe()}")
    if not q.has_reward_law or not q.is_deterministic:
        return "certification needs deterministic rewards (random reward laws and preference matrices are not covered)"
    if obj.level_variant.per_token and q.is_tree:
        return "certification covers sequence-level objectives (the token level on a tree is not covered)"
    light = float(q.pi_ref[q.pi_ref > 0].min())
    if not (obj.beta * light >= 1e-90 and obj.beta <= 1e150):
        # the a-priori box bounds each class mass below by about (beta p_c)^3 (the reverse penalty's bound on x_c,
        # through the bound on |P| it gives), which leaves the doubles there
        return (f"certification builds its a-priori box from (beta pi_ref)^3, outside double's range at beta = "
                f"{obj.beta:.3g} with a lightest answer of {light:.3g} (covered: beta pi_ref >= 1e-90, beta <= 1e150)")
    n_classes = np.unique(q.expected_reward[q.pi_ref > 0]).size
    if n_classes > 4:
        return f"certification covers up to 4 reward classes; this question has {n_classes}"
    return None


# ----------------------------------------------------------------------------- public API

@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE, time_budget=num(0, low_open=True, none=True), max_boxes=POSITIVE_COUNT)
def certified_stationary_points(q: Question, obj: Objective, *, time_budget: float | None = None,
                                max_boxes: int = 2_000_000) -> CertifiedSet:
    """Every stationary point of a class question, each with a certificate (see the module doc).

    Parameters
    ----------
    q : Question
        Deterministic rewards (any number of outputs; C <= 4 distinct rewards on pi_ref's support).
    obj : Objective
        Penalty "reverse" or "direct" (see :func:`certification_scope`), any finite G or G = inf.
    time_budget : float or None, default None
        Seconds, or None for no wall-clock limit (the default: a result that depends on the machine's load
        is not reproducible; :func:`~grpo_theory.solvers.search.stationary_points` counts work only).
    max_boxes : int
        Cap on the number of boxes (temperature intervals at G = inf with the direct penalty) examined;
        where the search does not finish within it, ``exhaustive=False`` with the reason.

    Returns
    -------
    CertifiedSet
        ``roots``: :class:`CertifiedRoot` each (interior points with their box and test; the limit vertex,
        where there is one, with ``limit=True``); ``exhaustive``: True when proven complete.

        Outside :func:`certification_scope` (more than 4 reward classes, another penalty or advantage, random
        rewards, an answer tree): no roots, ``exhaustive=False`` and ``message`` ``"not certified: "`` followed
        by the scope's reason, e.g. "certification covers up to 4 reward classes; this question has 5";
        :func:`~grpo_theory.solvers.search.stationary_points` answers such questions by its search.

    Raises
    ------
    InvalidInputError
        A non-positive ``time_budget``, or ``q``/``obj`` that are no Question/Objective.

    Examples
    --------
    At G = inf with the direct penalty, ``pi ∝ pi_ref exp(t r)`` with ``t = 1/(beta sigma_pi)``; the two
    roots of ``beta t sigma(t) = 1`` (found by a scan and bisection in ``t``) give ``x_0`` = 0.88099 and 0.95339:

    >>> import math
    >>> from grpo_theory import Question, Objective
    >>> res = certified_stationary_points(Question([0.6, 0.2, 0.2], rewards=[1, 0.5, 0]),
    ...                                   Objective(beta=2.0, group_size=math.inf, penalty="direct"))
    >>> res.exhaustive, sorted(round(float(r.x[0]), 5) for r in res.roots if not r.limit)
    (True, [0.88099, 0.95339])
    """
    q, obj = as_question(q), as_objective(obj)
    if time_budget is not None and not (time_budget > 0):
        raise InvalidInputError(f"time_budget must be positive, got {time_budget!r}")
    t0 = time.perf_counter()
    why = certification_scope(q, obj)
    if why is not None:
        return CertifiedSet((), False, "not certified: " + why)
    cls = Classes(q)
    C = cls.v.size                  # <= 4: certification_scope returned the reason above otherwise
    if C == 1:
        pi = q.pi_ref.copy()
        return CertifiedSet((CertifiedRoot(pi, np.ones(1), 0.0, Certificate(np.zeros((0, 2)), "single class: P = 0"),
                                           message="one reward class: pi = pi_ref"),), True, "single class")
    roots: list[CertifiedRoot] = []
    unscaled = obj.normalization_variant.scales and obj.std_eps == 0 and obj.variance_eps == 0
    if obj.is_large_group and obj.regime_variant.is_direct and obj.normalization_variant.scales:
        tilt = Tilt(cls, obj)
        found, n_boxes, reason = tilt.solve(time_budget, max_boxes)
        for t, delta, box, test, res, x, logx in sorted(found, key=lambda r: r[1]):
            what = f"tilt x ∝ p exp(v/t) at temperature t = {t:.12g} (t - t_min = {delta:.6g})"
            if np.any(x[1:] < 1e-300):
                what += (f"; the class masses are exp({np.array2string(logx, precision=6)}): below the double "
                         "range, they show as 0 in pi, though the root is interior")
            bound = tilt.stability_bound(logx)
            stable = True if bound < 1.0 else None
            if stable:
                what += (f"; stable on all output logits: the Jacobian is -C^(1/2) (beta I + E) C^(1/2), C = diag(pi) "
                         f"- pi pi^T, with |E| <= {bound:.3g} beta < beta (Tilt.stability_bound)")
            roots.append(CertifiedRoot(cls.expand(x), x, res, Certificate(box, test), message=what, stable=stable))
        unresolved = np.zeros((0, 1, 2))
    else:
        sys_ = EtaSystem(cls, obj)
        found, unresolved, n_boxes, reason = solve_eta(sys_, time_budget, max_boxes)
        for eta, box, test in found:
            F, _, X = sys_.F_point(eta[None])
            roots.append(CertifiedRoot(cls.expand(X[0]), X[0], float(np.max(np.abs(F))), Certificate(box, test),
                                       message="interior root, unique in its certified box"))
    if obj.is_large_group and obj.regime_variant.is_direct and unscaled:
        x = np.zeros(C)
        x[0] = 1.0
        roots.append(CertifiedRoot(cls.expand(x), x, 0.0, None, limit=True,
                                   message="limit point: at G = inf with no epsilon, P of every worse class falls "
                                           "like -1/sigma at the best class's vertex, faster than log x: the flow "
                                           "runs into it (stationary only in the limit)"))
    roots.sort(key=lambda r: -float(r.x[0]))
    exhaustive = not reason
    where = f"{'G=inf' if obj.is_large_group else f'G={obj.group_size}'}, {C} classes, {obj.regime}"
    msg = (f"certified: every stationary point isolated ({n_boxes} boxes, {where}); faces excluded by the KKT "
           "argument of the module doc" if exhaustive else f"not exhaustive: {reason}")
    return CertifiedSet(tuple(roots), exhaustive, msg, n_boxes, time.perf_counter() - t0,
                        unresolved if unresolved.size else np.zeros((0, max(C - 1, 1), 2)))
