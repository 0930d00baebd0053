"""Token-level stationary points on a tree: the search's set against independent searches (issue 21).

The independent paths: a dense damped-Newton search of our own (finite-difference Jacobian) on the
tree's stationarity equations from a grid of free logits, and explicit Euler on *all* the tree's edge
logits (no gauge fixing, no LSODA) from random starts, which must land on reported stable points.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_points, stationary_policy
from grpo_theory.solvers.tree import TreeProblem

Q = Question([0.1, 0.3, 0.6], rewards=[1, 0, 0], answers=["AB", "AC", "D"])


def _dense_newton_roots(tp: TreeProblem, values, tol: float = 1e-11) -> list[np.ndarray]:
    """Damped Newton on ``tp.kkt`` from every point of the product grid of ``values``: the roots' policies."""
    n = tp.tree.n_free
    roots = []
    for start in np.array(np.meshgrid(*[values] * n)).reshape(n, -1).T:
        x = start.astype(float)
        with np.errstate(all="ignore"):
            for _ in range(60):
                f = tp.kkt(x)
                if not np.all(np.isfinite(f)):
                    break
                if np.abs(f).max() < tol:
                    roots.append(tp.policy(x))
                    break
                J = np.empty((n, n))
                for j in range(n):
                    e = np.zeros(n)
                    e[j] = 1e-7
                    J[:, j] = (tp.kkt(x + e) - f) / 1e-7
                try:
                    step = np.linalg.solve(J, -f)
                except np.linalg.LinAlgError:
                    break
                step *= min(1.0, 2.0 / max(1e-300, np.abs(step).max()))     # at most 2 logits a step
                x = x + step
    return roots


def _edge_logits(tp: TreeProblem, pi) -> np.ndarray:
    """log pi(c | v) on every edge of the tree for the answer policy ``pi``."""
    edge = np.asarray(pi, dtype=float) @ tp.tree.paths
    node = np.zeros(len(tp.tree.nodes))
    np.add.at(node, tp.tree.edge_node, edge)
    return np.log(edge) - np.log(node[tp.tree.edge_node])


def _euler_all_edges(tp: TreeProblem, theta: np.ndarray, lr: float, steps: int) -> np.ndarray:
    """Explicit Euler on every edge logit (gauge left free) with the expected gradient; the end policy."""
    for _ in range(steps):
        theta = theta + lr * tp.logit_gradient(tp.x_from_log_cond(theta))
    return tp.policy(tp.x_from_log_cond(theta))


@pytest.mark.parametrize("G, beta, n_stable", [(64, 1.0, 2), (math.inf, 3.0, 2), (8, 1.0, 1)])
def test_tree_points_contain_every_root_of_a_dense_newton_search(G, beta, n_stable):
    obj = Objective(beta=beta, group_size=G, penalty="direct", level="token")
    pts = stationary_points(Q, obj)
    assert not pts.exhaustive and "not exhaustive" in pts.message
    interior = [p for p in pts if not p.boundary]
    assert len(pts.stable) == n_stable
    for p in interior:
        assert p.converged and p.residual <= 1e-10
    tp = TreeProblem(Q, obj)
    roots = _dense_newton_roots(tp, np.linspace(-9.0, 9.0, 7))
    assert roots, "the dense search found no root"
    for r in roots:
        if r.max() > 1 - 1e-6:
            continue                 # a near-vertex point of the G = inf collapse (reported as the limit vertex)
        assert min(np.abs(p.pi - r).max() for p in interior) < 1e-6, (r, [p.pi for p in pts])


def test_tree_stable_points_are_where_euler_on_all_edge_logits_goes():
    obj = Objective(beta=1.0, group_size=64, penalty="direct", level="token")
    pts = stationary_points(Q, obj)
    stable = [p.pi for p in pts.stable]
    assert len(stable) == 2 and any(p.stable is False for p in pts)
    tp = TreeProblem(Q, obj)
    rng = np.random.default_rng(3)
    landed = set()
    starts = [_edge_logits(tp, [0.99, 0.005, 0.005]), _edge_logits(tp, [0.2, 0.3, 0.5])]
    starts += [rng.normal(0.0, 1.0, len(tp.tree.edges)) for _ in range(1)]
    for theta0 in starts:
        end = _euler_all_edges(tp, theta0, 0.2, 4000)
        d = [float(np.abs(end - s).max()) for s in stable]
        # near the collapse the flow is slow (rates ~ the tiny masses): close, and 10x closer than any other point
        others = [float(np.abs(end - p.pi).max()) for p in pts if p.stable is not True]
        assert min(d) < 5e-3 and 10 * min(d) < min(others), (end, stable)
        landed.add(int(np.argmin(d)))
    assert landed == {0, 1}, "Euler from the chosen starts should reach both stable points"


def test_tree_search_reports_the_limit_vertex_of_a_collapse():
    pts = stationary_points(Q, Objective(beta=3.0, group_size=math.inf, penalty="direct", level="token"))
    vertex = [p for p in pts if p.boundary]
    assert len(vertex) == 1 and vertex[0].pi.tolist() == [1.0, 0.0, 0.0] and vertex[0].stable
    assert "limit" in vertex[0].message


def test_single_answer_tree_is_exhaustive():
    q = Question([1.0, 0.0], rewards=[1, 0], answers=["AB", "AC"])
    pts = stationary_points(q, Objective(beta=1.0, group_size=8, level="token"))
    assert pts.exhaustive and len(pts) == 1


def test_tree_search_on_a_face_answer_does_not_raise():
    """KL fuzz seed 41 (tree AB/AC/D, a noisy law over three levels, G = 8, shift, std_eps 1e-6, k1 in the loss,
    beta 2.2445): stationary_policy answers it (the limit (1, 2.9e-115, 0) on a face, checked by the KL fuzz against
    the independent token-level flow), but stationary_points raised InvalidInputError 'pi must be finite': the
    search stepped along the unstable directions of an unstable point on a face, whose free logits are infinite. A valid question must get a set,
    whose from_reference is stationary_policy's answer."""
    import warnings

    from fuzz_kl_cases import draw_kl_case

    q, obj = draw_kl_case(41)
    assert q.is_tree and obj.level == "token" and obj.estimator == "k1" and obj.kl_placement == "loss"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pts = stationary_points(q, obj)
    assert np.array_equal(pts.from_reference.pi, stationary_policy(q, obj).pi)
