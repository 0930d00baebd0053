"""What the solvers return: plain containers, in the manner of scipy's ``OptimizeResult``.

Everything a result reports is computed during the search and stored; a result never calls a
solver or the dynamics. This is the bottom of :mod:`grpo_theory.solvers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from enum import StrEnum

import numpy as np

from .._checks import register_class, checked_record
from ..errors import InvalidInputError
from ..problem import Objective, Question

__all__ = ["StationaryPoint", "StationaryPointSet", "Basin", "RESIDUAL_TOL", "STABILITY_TOL", "Method", "Status",
           "STAGES", "STATUSES", "ROOT_FINDERS"]

#: Residual below which a solution counts as converged.
RESIDUAL_TOL = 1e-10
#: |eigenvalue| below which first-order stability is undecided.
STABILITY_TOL = 1e-9


def _same(a, b) -> bool:
    """Equality by value: arrays elementwise (NaN equal to NaN, so that a result equals its own copy), tuples,
    lists and dataclasses entry by entry (a dataclass's fields with ``compare=False`` left out)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))
    if is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a) if f.compare)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b)


def _key(v):
    """A hashable stand-in for ``v`` that equal values (:func:`_same`) share: -0.0 as 0.0, every NaN alike."""
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "fc":
            v = np.where(np.isnan(v), 0.0, v + 0.0)
        return v.shape, str(v.dtype), v.tobytes()
    if is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__,) + tuple(_key(getattr(v, f.name)) for f in fields(v) if f.compare)
    if isinstance(v, (tuple, list)):
        return tuple(_key(x) for x in v)
    if isinstance(v, float):
        return "nan" if v != v else v + 0.0
    return v


def _by_value(cls):
    """Give a frozen result dataclass equality and a hash by value. The dataclass's own ``==`` compares its NumPy
    arrays with ``==`` and raises NumPy's "truth value of an array is ambiguous"; its hash hashes the arrays and
    raises "unhashable type: 'numpy.ndarray'". A result equals its pickled or deep copy; ``hash`` names the
    field it cannot hash."""
    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self) if f.compare)

    def __hash__(self):
        try:
            return hash(_key(self))
        except TypeError as exc:
            raise TypeError(f"unhashable {type(self).__name__}: {exc}") from None

    cls.__eq__, cls.__hash__ = __eq__, __hash__
    return cls


#: How a point is found, by stage: ``{stage: meaning}``. ``StationaryPoint.method`` is a :class:`Method`: a stage,
#: and for the stages that end in a root finder, ``+hybr`` or ``+lm`` (scipy's ``root``, Powell's hybrid
#: method first, Levenberg-Marquardt where it fails); a two-class point at a jump of the drift adds ``+jump``;
#: NLHF's equilibrium solved on the reward classes adds `` on reward classes``; a certified point is
#: ``certified: `` and the test that passed (``certificate.test``): a member of :class:`Method` where the test is
#: fixed words, a plain ``str`` where it carries numbers (the deep root of the temperature search).
STAGES = {
    "flow": "the end of the on-policy flow, converged as it is (polishing did not improve it)",
    "flow+root": "the flow's end polished by a root finder",
    "flow+map+root": "near a vertex: the proximal map's fixed point polished by a root finder",
    "flow-to-vertex": "the flow runs into a vertex: a limit point",
    "multistart": "a root from one of many starts (stationary_points' search beyond two classes)",
    "reward-ties": "KL in the reward: the shaped rewards tie on the support (hybr)",
    "grid": "two classes: a root on the scan's grid",
    "grid+brentq": "two classes: a sign change of the drift refined by Brent's method",
    "grid+tangency": "two classes: a tangency (double root) found by minimising |drift|",
    "flow-scan": "two classes: the flow's end from pi_ref, on the scan's grid",
    "flow-scan+brentq": "two classes: the flow's end from pi_ref, a sign change refined by Brent's method",
    "boundary-limit": "two classes: a vertex reached only in the limit",
    "single-class": "one reward class: pi = pi_ref",
    "certified": "a box of the interval certificate (the test after the colon), or a limit vertex admitted by KKT",
    "full-space flow from pi_ref": "the end of the flow on all output logits (where the class reduction is not exact)",
    "full-space flow from pi_ref: limit on a face": "the flow on all output logits runs into a face: a limit point",
    "token-flow": "token level: the end of the flow on the answer tree",
    "token-flow+root": "token level: the flow's end polished by a root finder",
    "token-flow+face": "token level: the flow's end pushed onto a face",
    "token-flow: limit vertex": "token level: the flow runs into a vertex",
    "token-grid": "token level: a root from the grid of starts",
    "token-flow-grid": "token level: the flow from a grid start, polished",
    "single-answer": "token level: one answer, nothing to solve",
    "log-pooling": "RLHF's optimum in closed form (rlhf_optimum)",
    "root-hybr": "NLHF's Nash equilibrium by hybr",
    "single-output": "NLHF: one output",
    "damped-fixed-point": "NLHF's Nash equilibrium by the damped fixed-point iteration",
}
#: The root finders appended to a stage by :func:`~grpo_theory.solvers.common.polish`.
ROOT_FINDERS = ("hybr", "lm")
_POLISHED = ("flow+root", "flow+map+root", "multistart", "token-flow+root", "token-grid", "token-flow-grid")
_TWO_CLASS = ("grid", "grid+brentq", "grid+tangency", "flow-scan", "flow-scan+brentq")
_CERTIFIED = ("certified: limit vertex (KKT)", "certified: single class: P = 0", "certified: krawczyk",
              "certified: krawczyk (epsilon-inflation around a Newton iterate)",
              "certified: sign change and h' enclosure excluding 0 (one root)")
_NLHF = ("root-hybr", "single-output", "damped-fixed-point")
_METHODS = ([s for s in STAGES if s not in _POLISHED + ("certified", "reward-ties")]
            + [f"{s}+{f}" for s in _POLISHED for f in ROOT_FINDERS] + ["reward-ties+hybr"]
            + [f"{s}+jump" for s in _TWO_CLASS] + list(_CERTIFIED) + [f"{s} on reward classes" for s in _NLHF])
Method = StrEnum("Method", {"".join(c if c.isalnum() else "_" for c in m).strip("_").upper(): m for m in _METHODS},
                 module=__name__)
_METHOD_VALUES = frozenset(_METHODS)


def _plain_repr(self) -> str:
    """The value's own repr (``'flow+root+hybr'``): a method or status prints as the string it was."""
    return repr(self.value)


Method.__repr__ = _plain_repr
Method.__doc__ = """How a :class:`StationaryPoint` was found (``StationaryPoint.method``): the stages of :data:`STAGES`,
with their root finder, ``+jump`` or `` on reward classes`` where they take one, and the certified points' tests.
A ``str`` enumeration: ``pt.method == "flow+root+hybr"`` and CSV columns read as plain strings."""


#: What came of a point, ``{status: meaning}``: the members of :class:`Status` (``StationaryPoint.status``, read off
#: ``converged`` and ``boundary``).
STATUSES = {
    "converged": "an interior point with residual <= RESIDUAL_TOL",
    "limit": "a vertex or face reached only in the limit, whose limit test passed (boundary=True)",
    "not_converged": "neither: message says why",
}
Status = StrEnum("Status", {s.upper(): s for s in STATUSES}, module=__name__)
Status.__repr__ = _plain_repr
Status.__doc__ = """The outcome of a :class:`StationaryPoint` (``StationaryPoint.status``), in the manner of scipy's
``status``: ``converged``, ``limit`` or ``not_converged``, with their meanings in :data:`STATUSES`. A ``str``
enumeration, like :class:`Method`."""


@register_class
@_by_value
@dataclass(frozen=True)
@checked_record(own_fields=("method",))
class StationaryPoint:
    """One stationary policy with its diagnostics (in the manner of scipy's OptimizeResult).

    Attributes
    ----------
    pi : numpy.ndarray, shape (K,)
        The stationary policy ``pi(o | q)`` (a read-only copy: the diagnostics below describe it).
    residual : float
        Always ``stationarity_residual(q, obj, pi)`` at the reported ``pi``
        (:func:`~grpo_theory.solvers.stationarity_residual`: the max-norm residual of the
        stationarity condition, 0 exactly at a stationary policy). For the NLHF baseline
        (:func:`~grpo_theory.solvers.baselines.nash_equilibrium`) the residual of its own fixed-point
        condition, :func:`~grpo_theory.solvers.baselines.nash_residual`. For a limit point
        (``boundary=True``) it is generally not small: the vertex is stationary only in the limit;
        see ``flow_speed``.
    converged : bool
        Whether ``residual <= RESIDUAL_TOL``, or, for a limit point, whether the limit test passed
        (the flow runs into the vertex, or the KKT conditions hold there).
    stable : bool or None
        True/False under the expected-gradient flow on logits; None when first-order analysis
        cannot decide (a zero eigenvalue, e.g. a tangency).
    nfev : int
        Evaluations of the stationarity equations (the drift or the KKT system) used to find it.
    method : Method or str
        How it was found: one of the vocabulary :class:`Method` (a ``str``; the stages are in :data:`STAGES`).
        The one other string accepted is ``"certified: "`` followed by ``certificate.test`` (a certified point
        whose test carries numbers, kept as that ``str``); anything else raises
        :class:`~grpo_theory.errors.InvalidInputError`.
    message : str
        The reason behind ``converged`` or ``stable``, in words (prose; ``status`` and ``method`` are the
        vocabulary).
    boundary : bool
        True exactly when ``pi`` gives mass 0 to an answer of ``pi_ref``'s support: a point on a face or
        a vertex of the simplex, which the logit flow reaches only in the limit ``t -> inf`` (direct
        penalty, ``G = inf``; a collapse where a clamped or absent KL gradient cannot hold the mass; the
        KL in the reward or the advantage telling answers of one reward apart). A root whose small masses
        are positive, however small, is interior: ``boundary=False``, in every solver. That includes masses
        below double precision's range (a class logit of -850: ``exp(-850)`` prints as ``0.0`` in ``pi``);
        ``class_logit`` carries the exact log-ratio for two classes. So ``pi == 0`` in an entry does not
        mean ``boundary``: the flag, not the printed mass, says whether the point is a limit.
    eigenvalues : numpy.ndarray
        Eigenvalues of the Jacobian of the logit flow (reduced to classes).
    class_logit : float or None
        For two-class questions, ``log(pi(class a)/pi(class b))`` (may be beyond what ``pi`` can
        show in double precision).
    discontinuous : bool
        True where the vector field jumps at the point (a KL clamp switching on; the KL in the
        reward with std scaling and no epsilon, where advantages stay O(1) arbitrarily close).
        The drift changes sign across the jump: an attracting jump (``stable=True``) is a Filippov
        equilibrium, which a discrete trainer reaches and then chatters around with an amplitude set
        by its step size; a repelling one (``stable=False``) separates two basins.
    flow_speed : float or None
        For a limit point found by following the flow (``boundary=True``): the max-norm speed of the
        logit flow where the search stopped, near the vertex (small: the flow slows down as it
        arrives). None for every other point (and for a limit vertex admitted by KKT).
    certificate : Certificate or None
        For a point of a certified set (``StationaryPointSet.exhaustive`` from
        :mod:`~grpo_theory.solvers.certify`), its :class:`~grpo_theory.solvers.certify.Certificate`
        (the box in class log-ratios, or temperatures, and the uniqueness test that passed); for a
        two-class root refined from a sign change of the scan, the bracket in the class logit with an
        existence-only test (uniqueness and exhaustiveness rest on the scan); None otherwise (and for a
        vertex reached only in the limit, which the KKT argument admits instead
        of a box).
    perturbed_end : numpy.ndarray or None
        Where first-order analysis could not decide the point's stability: the ends of the flow on all output
        logits from the point nudged off it (every single-logit nudge of 1e-4 that moves away, followed to
        t = 1e8: :func:`~grpo_theory.solvers.full_space.perturbed_ends`), one distinct end a row, shape
        ``(n, K)``. Non-empty exactly when a nudged run leaves the point: it is then ``stable=False`` (the exact
        flow stays there, a trainer's does not), and these are where it falls to. ``(0, K)`` when every nudged
        run stays; None where it was not computed.

    Examples
    --------
    >>> from grpo_theory import Objective, Question, stationary_policy
    >>> pt = stationary_policy(Question([0.2, 0.8], rewards=[1, 0]), Objective(beta=0.5, group_size=2))
    >>> round(float(pt.pi[0]), 4), pt.stable, pt.success
    (0.6531, True, True)
    """

    pi: np.ndarray
    residual: float
    converged: bool
    stable: bool | None
    nfev: int
    method: str
    message: str = ""
    boundary: bool = False
    eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0))
    class_logit: float | None = None
    discontinuous: bool = False
    certificate: object | None = None
    flow_speed: float | None = None
    perturbed_end: np.ndarray | None = None

    def __post_init__(self) -> None:
        # pi is the point that residual, stable and the rest describe: a read-only copy, so that an in-place write
        # (sol.pi[0] = 0) fails instead of leaving the diagnostics about another policy
        pi = np.array(self.pi, dtype=float)
        pi.setflags(write=False)
        object.__setattr__(self, "pi", pi)
        if isinstance(self.method, Method):
            return
        if isinstance(self.method, str) and self.method in _METHOD_VALUES:
            object.__setattr__(self, "method", Method(self.method))
            return
        test = getattr(self.certificate, "test", None)
        if isinstance(self.method, str) and isinstance(test, str) and self.method == f"certified: {test}":
            return
        shown = repr(self.method)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise InvalidInputError(
            f"method={shown} is not in the vocabulary: expected one of {', '.join(repr(m.value) for m in Method)} "
            "(grpo_theory.solvers.Method), or 'certified: ' followed by the point's certificate.test")

    @property
    def success(self) -> bool:
        """scipy's name for ``converged``."""
        return self.converged

    @property
    def status(self) -> Status:
        """:class:`Status`: ``limit`` for a converged boundary point, ``converged``, or ``not_converged``."""
        if not self.converged:
            return Status.NOT_CONVERGED
        return Status.LIMIT if self.boundary else Status.CONVERGED

    def __repr__(self) -> str:
        pi = np.array2string(self.pi, precision=6)
        return (f"StationaryPoint(pi={pi}, stable={self.stable}, residual={self.residual:.1e}, "
                f"converged={self.converged}, boundary={self.boundary}, method={self.method!r})")


@_by_value
@dataclass(frozen=True)
@checked_record
class Basin:
    """Starting values ``pi(a)`` in ``(lo, hi)`` flow to ``point`` (two-class questions).

    Attributes
    ----------
    point : StationaryPoint
        The stable point the on-policy flow reaches.
    lo, hi : float
        The basin: starting probabilities of the best class ``a`` strictly between them.
    """

    point: object
    lo: float
    hi: float


@_by_value
@dataclass(frozen=True)
@checked_record
class StationaryPointSet:
    """Every stationary point found, sorted by the probability of the best class.

    Iterating, ``len`` and indexing go over ``points``. The search fills in everything
    (:func:`~grpo_theory.solvers.stationary_points`).

    Attributes
    ----------
    points : tuple of StationaryPoint
        The stationary points, sorted by the probability of the best class.
    exhaustive : bool
        True only when the search provably found all of them: the two-class scan (a bracket from the advantage's
        bound, every sign change refined), or the interval certificate for more classes
        (:func:`~grpo_theory.solvers.certify.certified_stationary_points`, within its scope:
        :func:`~grpo_theory.solvers.certify.certification_scope`).
    message : str
        How the search was done.
    question : Question or None
        The question solved.
    objective : Objective or None
        The objective solved.
    from_reference : StationaryPoint or None
        The point the on-policy flow reaches from ``pi_ref``, as
        :func:`~grpo_theory.solvers.stationary_policy` returns it.
    basins : tuple of Basin or None
        The flow's basin of every stable point, as :class:`Basin` intervals of the best class's
        probability, for two-class questions at sequence level; None otherwise.
    summary : str
        One line per stable point and where ``pi_ref`` flows.

    Examples
    --------
    >>> from grpo_theory import Objective, Question, stationary_points
    >>> pts = stationary_points(Question([0.2, 0.8], rewards=[1, 0]), Objective(beta=0.5, group_size=2))
    >>> len(pts), pts.exhaustive, pts.multistable
    (1, True, False)
    """

    points: tuple[StationaryPoint, ...]
    exhaustive: bool
    message: str
    question: Question | None = field(default=None, compare=False, repr=False)
    objective: Objective | None = field(default=None, compare=False, repr=False)
    from_reference: StationaryPoint | None = field(default=None, compare=False, repr=False)
    basins: tuple[Basin, ...] | None = field(default=None, compare=False, repr=False)
    summary: str = field(default="", compare=False, repr=False)

    @property
    def multistable(self) -> bool:
        """More than one stable point: where training ends depends on where it starts (and on noise)."""
        return len(self.stable) > 1

    def __iter__(self) -> Iterator[StationaryPoint]:
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    def __getitem__(self, i) -> StationaryPoint:
        return self.points[i]

    @property
    def stable(self) -> tuple:
        """The points that are stable under the logit flow."""
        return tuple(p for p in self.points if p.stable)
