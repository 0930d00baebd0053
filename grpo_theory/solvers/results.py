"""What the solvers return: plain containers, in the manner of scipy's ``OptimizeResult``.

Everything a result reports is computed during the search and stored; a result never calls a
solver or the dynamics. This is the bottom of :mod:`grpo_theory.solvers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..problem import Objective, Question

__all__ = ["StationaryPoint", "StationaryPointSet", "Basin", "RESIDUAL_TOL", "STABILITY_TOL"]

#: Residual below which a solution counts as converged.
RESIDUAL_TOL = 1e-10
#: |eigenvalue| below which first-order stability is undecided.
STABILITY_TOL = 1e-9


@dataclass(frozen=True)
class StationaryPoint:
    """One stationary policy with its diagnostics (in the manner of scipy's OptimizeResult).

    Attributes
    ----------
    pi : numpy.ndarray, shape (K,)
        The stationary policy ``pi(o | q)``.
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
    method : str
        How it was found.
    message : str
        The reason behind ``converged`` or ``stable``, in words.
    boundary : bool
        True exactly when ``pi`` gives mass 0 to an answer of ``pi_ref``'s support: a point on a face or
        a vertex of the simplex, which the logit flow reaches only in the limit ``t -> inf`` (direct
        penalty, ``G = inf``; a collapse where a clamped or absent KL gradient cannot hold the mass; the
        KL in the reward or the advantage telling answers of one reward apart). A root whose small masses
        are positive, however small (1e-45), is interior: ``boundary=False``, in every solver.
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

    @property
    def success(self) -> bool:
        """scipy's name for ``converged``."""
        return self.converged

    def __repr__(self) -> str:
        pi = np.array2string(self.pi, precision=6)
        return (f"StationaryPoint(pi={pi}, stable={self.stable}, residual={self.residual:.1e}, "
                f"converged={self.converged}, boundary={self.boundary}, method={self.method!r})")


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class StationaryPointSet:
    """Every stationary point found, sorted by the probability of the best class.

    Iterating, ``len`` and indexing go over ``points``. Everything is filled in by the search
    (:func:`~grpo_theory.solvers.stationary_points`); nothing is computed later.

    Attributes
    ----------
    points : tuple of StationaryPoint
        The stationary points, sorted by the probability of the best class.
    exhaustive : bool
        True only when the search provably found all of them (two-class questions).
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

    points: tuple
    exhaustive: bool
    message: str
    question: Question | None = field(default=None, compare=False, repr=False)
    objective: Objective | None = field(default=None, compare=False, repr=False)
    from_reference: StationaryPoint | None = field(default=None, compare=False, repr=False)
    basins: tuple | None = field(default=None, compare=False, repr=False)
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
