"""The one dispatch: which problem a question is (token level on a tree, or classes), and the searches.

:func:`token_level` decides the level, here and nowhere else; :func:`stationary_policy` and
:func:`stationary_points` hand the question to :mod:`~grpo_theory.solvers.tree`,
:mod:`~grpo_theory.solvers.two_class` or :mod:`~grpo_theory.solvers.multi_class`, and fill in
everything a :class:`~grpo_theory.solvers.results.StationaryPointSet` reports.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..problem import Objective, Question, as_objective, as_question
from .classes import ClassProblem, stationarity_residual
from .common import dedupe
from .multi_class import multi_class_points, multi_class_policy
from .results import Basin, StationaryPoint, StationaryPointSet
from .tree import tree_stationary_points, tree_stationary_policy
from .two_class import flow_root_from, two_class_points

__all__ = ["token_level", "stationary_policy", "stationary_points", "basins_of"]


def token_level(q: Question, obj: Objective) -> bool:
    """Whether the token-level solver is needed: token level on a tree of multi-token answers.

    With single-token answers every loss type gives the sequence-level condition (the weight of
    a token is the same for every answer), so the sequence solvers, exhaustive for two classes,
    answer it.
    """
    if obj.level != "token":
        return False
    if not q.has_reward_law:
        raise InvalidInputError(f"level={obj.level!r} needs a reward law; this question was given as a preference "
                                "matrix, which does not say how a group's advantages reach each token")
    return q.is_tree


def stationary_policy(q: Question, obj: Objective) -> StationaryPoint:
    """The stationary policy that the on-policy GRPO flow reaches from ``pi_ref``.

    When several stationary points exist (see :func:`stationary_points`), this is
    the one in whose basin ``pi_ref`` lies: the policy a GRPO run initialised at
    the reference model heads to under exact expectations.

    Examples
    --------
    >>> from grpo_theory import Question, Objective, stationary_policy
    >>> sol = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0))
    >>> round(float(sol.pi[0]), 6)   # Eq. 14 at beta = gamma: sqrt(0.3)
    0.547723
    """
    q, obj = as_question(q), as_objective(obj)
    if token_level(q, obj):
        return tree_stationary_policy(q, obj)
    cp = ClassProblem(q, obj)
    if cp.n_classes == 1:
        pi = q.pi_ref.copy()
        return StationaryPoint(pi=pi, residual=stationarity_residual(q, obj, pi), converged=True,
                               stable=True, nfev=0, method="single-class",
                               message="all supported outputs share one reward law: P_G = 0, "
                                       "pi = pi_ref, and the penalty alone restores it")
    if cp.n_classes == 2:
        return flow_root_from(cp, float(cp._log_p[0] - cp._log_p[1]))
    return multi_class_policy(cp)


def stationary_points(q: Question, obj: Objective, *, n_grid: int = 2001, n_starts: int = 24,
                      seed: int = 0) -> StationaryPointSet:
    """Every stationary point found, each with its stability under the logit flow.

    Two classes (e.g. a binary question): exhaustive, on a grid of ``n_grid``
    class logits covering every possible root, refined by Brent's method, with
    tangencies detected and limit points at the vertices reported.
    More classes: root finding from ``n_starts`` starting points (pi_ref, the
    uniform policy, near each vertex, the end of the flow from pi_ref, random);
    not guaranteed exhaustive, which ``exhaustive=False`` says.

    The set reports ``.stable``, ``.multistable``, ``.from_reference`` (the point the flow from
    ``pi_ref`` reaches), ``.basins`` (two classes) and ``.summary``, all found by the search.

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
    if n_grid < 11:
        raise InvalidInputError(f"n_grid must be >= 11, got {n_grid!r}")
    q, obj = as_question(q), as_objective(obj)
    basins = None
    if token_level(q, obj):
        points, exhaustive, message, from_reference = tree_stationary_points(q, obj, n_starts=n_starts, seed=seed)
        cp = ClassProblem(q, obj)
    else:
        cp = ClassProblem(q, obj)
        from_reference = stationary_policy(q, obj)
        if cp.n_classes == 1:
            points, exhaustive, message = (from_reference,), True, "single class: pi = pi_ref"
        elif cp.n_classes == 2:
            pts = dedupe(two_class_points(cp, n_grid))
            pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
            points, exhaustive = tuple(pts), True
            message = f"exhaustive scan of {n_grid} class logits in {cp.logit_bounds()}"
        else:
            points, exhaustive, message = multi_class_points(cp, n_starts=n_starts, seed=seed)
        if cp.n_classes == 2:
            basins = tuple(basins_of(points, cp.class_of == 0))
    summary = _summary(points, message, basins, from_reference, q.pi_ref, cp.class_of == 0)
    return StationaryPointSet(points, exhaustive, message, question=q, objective=obj,
                              from_reference=from_reference, basins=basins, summary=summary)


def basins_of(points, best: np.ndarray) -> list[Basin]:
    """Basins of attraction of the stable ``points`` of a two-class question, in ``pi(best class)``.

    ``best`` marks the outputs of the best class. The unstable points cut ``[0, 1]``; each stable
    point collects the interval between its neighbouring cuts, and a vertex reached only in the
    limit everything beyond the last unstable point.
    """
    mass = [float(p.pi[best].sum()) for p in points]
    order = np.argsort(mass)
    cuts = [0.0] + [mass[i] for i in order if points[i].stable is False] + [1.0]
    out = []
    for i in order:
        if points[i].stable:
            m = mass[i]
            lo = max(c for c in cuts if c <= m) if m > 0 else 0.0
            hi = min((c for c in cuts if c > m), default=1.0) if m < 1 else 1.0
            if points[i].boundary:          # a vertex collects everything beyond the last unstable point
                lo = max(c for c in cuts[:-1])
            out.append(Basin(points[i], lo, hi))
    return out


def _summary(points, message: str, basins, from_reference: StationaryPoint, pi_ref: np.ndarray,
             best: np.ndarray) -> str:
    """One line per stable point (best class's probability, basin), and which one ``pi_ref`` flows to."""
    def mass(p):
        return float(np.asarray(p.pi)[best].sum())
    stable = [p for p in points if p.stable]
    lines = [f"{len(stable)} stable point(s) of {len(points)} found ({message})"]
    for p in stable:
        b = next((b for b in basins or () if abs(mass(b.point) - mass(p)) < 1e-9), None)
        where = f", basin pi(best) in ({b.lo:.4g}, {b.hi:.4g})" if b else ""
        lines.append(f"  pi(best class) = {mass(p):.6g}{where}")
    start = float(pi_ref[best].sum())
    lines.append(f"  the flow from pi_ref (pi(best) = {start:.4g}) reaches pi(best) = {mass(from_reference):.6g}")
    return "\n".join(lines)
