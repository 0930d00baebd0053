r"""Every token-level stationary point found on an answer tree: Newton from a grid, flows from a grid.

The token-level problem (:class:`~grpo_theory.solvers.tree.TreeProblem`) lives on the tree's free
logits ``x`` (one per edge, less one per node: the softmax gauge of each node removed). There is no
certified root isolation for it (the token-level preference is not a polynomial in a few class masses),
so the search here is a multi-start search and says so (``exhaustive=False`` with the reason):

* **Newton** (:func:`~grpo_theory.solvers.common.polish`, MINPACK hybrid then Levenberg-Marquardt on
  the stationarity equations ``g_v(c) = g_v(c')``) from ``pi_ref``, the uniform conditionals, a grid
  of free logits and random starts: finds stable and unstable points alike;
* **flows** (the on-policy logit flow in the free coordinates, LSODA until it slows down) from
  ``pi_ref``, the corners of a coarse grid, and both sides of every unstable point along each of its
  unstable eigenvectors (where the attractors next to a saddle are), each end polished by Newton:
  finds the stable set, whose points Newton may miss when they sit far out (a near-collapse at
  logit 5-10) or in a small basin of Newton's own;
* a flow end that does not polish but runs into a **vertex** (one answer's mass within
  :data:`VERTEX_MASS` of 1) while the logit flow still pushes every edge of that answer's path up
  against its siblings is reported as a limit point (``boundary=True``, stable in the limit), as the
  class solvers report a collapse.

Each point's stability is that of the flow on all the tree's logits (gauge removed per node):
:meth:`~grpo_theory.solvers.tree.TreeProblem.stability`. The tree's logits are its full space: every
answer's probability is a product of the conditionals along its path, so no reduction is assumed.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._checks import MAX_STEPS, QUESTION, SEED, checked, whole
from .._numerics import integrate_until_slow
from ..problem import STATIONARY_OBJECTIVE, Objective, Question
from .common import dedupe, polish
from .results import StationaryPoint
from .tree import TreeProblem, tree_stationary_policy
from .work import check_tree_work

__all__ = ["tree_search", "GRID_LOGITS", "FLOW_LOGITS", "VERTEX_MASS"]

#: Free-logit values of the Newton grid (each free coordinate; the product grid, sampled when large).
GRID_LOGITS = (-8.0, -3.0, 0.0, 3.0, 8.0)
#: Free-logit values of the flows' grid (coarser: a flow costs ~10 Newton solves).
FLOW_LOGITS = (-6.0, 6.0)
#: An answer's mass above ``1 - VERTEX_MASS`` at a flow's end: the flow runs into its vertex.
VERTEX_MASS = 1e-8
#: Most grid points used per search (the product grid is sampled beyond).
MAX_NEWTON_GRID = 49
MAX_FLOW_GRID = 4
#: Step off an unstable point along each unstable eigenvector (free logits) before following the flow.
UNSTABLE_STEP = 1e-3


def _grid(values: tuple, n: int, cap: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The product grid of ``values`` in ``n`` free logits, or ``cap`` of its points drawn at random."""
    total = len(values) ** n
    if total <= cap:
        return [np.array(p, dtype=float) for p in itertools.product(values, repeat=n)]
    return [rng.choice(values, size=n).astype(float) for _ in range(cap)]


def _unstable_directions(tp: TreeProblem, x: np.ndarray, h: float = 1e-6) -> list[np.ndarray]:
    """The real parts of the eigenvectors of the free flow's Jacobian at ``x`` with positive eigenvalue."""
    n = x.size
    J = np.empty((n, n))
    for j in range(n):                                          # free logits of one tree: few
        e = np.zeros(n)
        e[j] = h
        J[:, j] = (tp.free_flow(x + e) - tp.free_flow(x - e)) / (2 * h)
    eig, vec = np.linalg.eig(J)
    return [np.real(vec[:, i]) / np.linalg.norm(np.real(vec[:, i])) for i in np.flatnonzero(eig.real > 0)
            if np.linalg.norm(np.real(vec[:, i])) > 0]


def _limit_vertex(tp: TreeProblem, x: np.ndarray) -> StationaryPoint | None:
    """The vertex the flow runs into at free logits ``x``, when it still pushes every path edge up."""
    pi = tp.policy(x)
    top = int(np.argmax(pi))
    if not pi[top] > 1.0 - VERTEX_MASS:
        return None
    k = int(np.flatnonzero(tp.support == top)[0])
    phi = tp.logit_gradient(x)
    on_path = np.flatnonzero(tp.tree.paths[k] > 0)
    for e in on_path:
        s = tp.tree.node_slices[tp.tree.edge_node[e]]
        others = [f for f in range(s.start, s.stop) if f != e]
        # the flow must keep raising the path edge's logit against each sibling's
        if others and not np.all(phi[e] - phi[others] > 0):
            return None
    vertex = np.zeros(tp.q.n_outputs)
    vertex[top] = 1.0
    speed = float(np.max(np.abs(tp.free_flow(x))))
    return StationaryPoint(
        pi=vertex, residual=tp.residual(x), converged=True, stable=True, nfev=0, method="token-flow: limit vertex",
        boundary=True, flow_speed=speed,
        message=(f"the token-level flow runs into answer {top}'s vertex (mass {pi[top]:.12g}) and still pushes "
                 "every edge of its path up against its siblings: a collapse reached only in the limit, "
                 "stable in that limit (residual and flow_speed where the flow stopped)"))


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE, n_starts=whole(0, MAX_STEPS), seed=SEED)
def tree_search(q: Question, obj: Objective, *, n_starts: int = 24, seed: int = 0
                ) -> tuple[tuple, bool, str, StationaryPoint]:
    """Token-level stationary points of ``q`` from Newton and flows started on grids (see the module doc).

    Parameters
    ----------
    q : Question
        A question whose answers form a tree (``answers=``), with a reward law.
    obj : Objective
        A token-level objective.
    n_starts : int, default 24
        Random Newton starts added to ``pi_ref``, the uniform conditionals and the grid.
    seed : int, default 0
        Seed of the random starts (and of the grid's sample when it is large).

    Returns
    -------
    points : tuple of StationaryPoint
        Every point found, converged (or a limit vertex), deduplicated, sorted by decreasing expected
        reward; each with its stability on all the tree's logits.
    exhaustive : bool
        True only for a tree with no free logit (one answer); otherwise False.
    message : str
        How the search was done, and why it is not exhaustive.
    from_reference : StationaryPoint
        Where the flow from ``pi_ref`` ends (:func:`~grpo_theory.solvers.tree.tree_stationary_policy`).

    Raises
    ------
    InvalidInputError
        From :class:`~grpo_theory.solvers.tree.TreeProblem` (a preference matrix, an option not modelled).

    Examples
    --------
    Bistable at G = 64 with the direct penalty (as the binary question of Fig. 3): both stable points
    and the unstable one between them.

    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.1, 0.3, 0.6], rewards=[1, 0, 0], answers=["AB", "AC", "D"])
    >>> pts, exhaustive, _, ref = tree_search(q, Objective(beta=1.0, group_size=64, penalty="direct", level="token"))
    >>> [(round(float(p.pi[0]), 4), p.stable) for p in pts], exhaustive
    ([(0.9982, True), (0.9529, False), (0.5399, True)], False)
    """
    check_tree_work(q, search=True, caller="tree_search", n_starts=n_starts)      # up front (solvers.work)
    tp = TreeProblem(q, obj)
    from_reference = tree_stationary_policy(q, obj)
    n = tp.tree.n_free
    if n == 0:
        return (from_reference,), True, "token-level: a single answer, pi = pi_ref", from_reference
    rng = np.random.default_rng(seed)
    x_ref = tp.x_from_log_cond(tp.log_ref_cond)
    newton_starts = [x_ref, np.zeros(n)] + _grid(GRID_LOGITS, n, MAX_NEWTON_GRID, rng)
    newton_starts += [rng.normal(0.0, 3.0, n) for _ in range(n_starts)]
    found = [from_reference] if from_reference.converged else []
    found += [p for p in (polish(tp, x, "token-grid") for x in newton_starts) if p is not None]
    # the stable set: flows from the corners, and down both sides of every unstable point's unstable
    # manifold (the attractors next to a saddle are where its unstable directions lead)
    flow_starts = [(x, 1e-5) for x in _grid(FLOW_LOGITS, n, MAX_FLOW_GRID, rng)]
    on_face = 0
    for p in dedupe(found):
        if p.stable is False:
            x = tp.x_from_policy(p.pi)
            if not np.all(np.isfinite(x)):      # a conditional is 0: a point on a face has no finite free logits
                on_face += 1                    # to step from, so its unstable manifold is not followed
                continue
            # no speed stop: the flow starts slow, next to the unstable point
            flow_starts += [(x + sign * UNSTABLE_STEP * v, None) for v in _unstable_directions(tp, x)
                            for sign in (1, -1)]
    unresolved = 0
    for x0, speed in flow_starts:
        end = integrate_until_slow(tp.free_flow, x0, 1e5, speed)
        # a flow into a vertex first: Newton from there may jump back to a root far away
        pt = _limit_vertex(tp, end) or polish(tp, end, "token-flow-grid")
        if pt is None:
            unresolved += 1
        else:
            found.append(pt)
    pts = dedupe(found)
    order = np.argsort([-(p.pi @ q.expected_reward) for p in pts], kind="stable")
    pts = tuple(pts[i] for i in order)
    message = (f"token-level: Newton from {len(newton_starts)} starts (pi_ref, uniform, a grid of free logits, "
               f"random) and the flow from pi_ref and {len(flow_starts)} starts (grid corners, both sides of each "
               f"unstable point's unstable directions) on {n} free logits of a tree with "
               f"{len(tp.tree.nodes)} nodes; not exhaustive (no certified root isolation for token-level "
               "trees: a multi-start search)")
    if on_face:
        message += (f"; the unstable manifolds of {on_face} unstable point(s) on a face (a conditional 0) not "
                    "followed")
    if unresolved:
        message += f"; {unresolved} flow(s) ended neither on a root nor at a vertex"
    return pts, False, message, from_reference
