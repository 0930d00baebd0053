"""stationary_points hands class questions within certification's scope to the certified set
(grpo_theory.solvers.certify), with stability judged on all output logits; checked against the
issue's values (a dense Newton search by the reporter), a perturbed Euler flow on the output logits
(the engine's ``output_gradient``, no Jacobian) and the multi-start search it replaces."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationarity_residual, stationary_points
from grpo_theory.solvers import output_gradient

REWARDS = [1.0, 0.5, 0.0]


def _euler_from(q: Question, obj: Objective, pi0: np.ndarray, steps: int = 4000, lr: float = 0.5) -> np.ndarray:
    """Euler steps of the expected-gradient flow on all output logits (independent of the Jacobian code)."""
    theta = np.log(pi0)
    for _ in range(steps):
        pi = np.exp(theta - theta.max())
        pi /= pi.sum()
        g = output_gradient(q, obj, pi)
        theta = theta + lr * pi * (g - pi @ g)
    pi = np.exp(theta - theta.max())
    return pi / pi.sum()


def _nearest(points, target) -> float:
    return min(float(np.max(np.abs(p.pi - np.asarray(target)))) for p in points)


def test_issue_missed_roots_found_and_certified():
    """beta = 2, pi_ref (0.6, 0.2, 0.2), direct, G = inf: both interior points of the issue (its dense
    Newton values), each with a certificate, plus the best vertex as a limit point."""
    q = Question([0.6, 0.2, 0.2], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=math.inf, penalty="direct")
    pts = stationary_points(q, obj)
    assert pts.exhaustive and pts.message.startswith("certified")
    interior = [p for p in pts if not p.boundary]
    assert len(interior) == 2
    for target in [(0.88099, 0.09088, 0.02813), (0.95339, 0.04125, 0.00536)]:
        assert _nearest(interior, target) < 6e-6
    for p in interior:
        assert p.certificate is not None and p.converged
        assert stationarity_residual(q, obj, p.pi) <= 1e-10
    vertex = [p for p in pts if p.boundary]
    assert len(vertex) == 1 and vertex[0].pi[0] == 1.0 and vertex[0].stable is True
    assert "limit" in vertex[0].message
    assert any(pts.from_reference is p for p in pts.points)


def test_issue_missed_root_near_face_via_stationary_points():
    q = Question([0.1, 0.8, 0.1], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=math.inf, penalty="direct")
    pts = stationary_points(q, obj)
    assert pts.exhaustive
    assert _nearest(pts.points, (0.99552, 0.00448, 0.0)) < 6e-6


@pytest.mark.parametrize("ref, beta, G, pen", [
    ((0.6, 0.2, 0.2), 2.0, math.inf, "direct"),
    ((0.5, 0.3, 0.2), 0.5, 8, "reverse"),
    ((0.14, 0.5, 0.36), 1.0, 16, "direct"),
])
def test_certified_stability_matches_perturbed_full_space_flow(ref, beta, G, pen):
    """Each interior point's verdict: a perturbed Euler flow on all output logits (four answers, two of
    them in one class, perturbed off proportionality) returns to a stable point and leaves an unstable one."""
    pi_ref = np.array([ref[0], ref[1] / 2, ref[1] / 2, ref[2]])
    q = Question(list(pi_ref), rewards=[1.0, 0.5, 0.5, 0.0])
    obj = Objective(beta=beta, group_size=G, penalty=pen)
    pts = stationary_points(q, obj)
    assert pts.exhaustive
    rng = np.random.default_rng(1)
    for p in pts:
        if p.boundary or p.stable is None:
            continue
        assert p.eigenvalues.size == 3                          # full space: K - 1 after the gauge
        assert (np.max(p.eigenvalues.real) < 0) == p.stable
        pi0 = p.pi * np.exp(1e-4 * rng.standard_normal(4))
        end = _euler_from(q, obj, pi0 / pi0.sum())
        back = float(np.max(np.abs(end - p.pi)))
        assert (back < 1e-6) == p.stable, (p, end)


def test_exhaustive_false_runs_the_search_and_says_why():
    q = Question([0.6, 0.2, 0.2], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=math.inf, penalty="direct")
    pts = stationary_points(q, obj, exhaustive=False)
    assert not pts.exhaustive and "not certified" in pts.message
    assert all(p.certificate is None for p in pts)


def test_out_of_scope_falls_back_with_reason():
    q = Question([0.1, 0.2, 0.3, 0.4], rewards=[1.0, 0.6, 0.3, 0.0])
    obj = Objective(beta=0.5, group_size=6, kl_estimator="k1")
    pts = stationary_points(q, obj)
    assert not pts.exhaustive and "not certified" in pts.message


def test_box_budget_exceeded_falls_back():
    q = Question([0.6, 0.2, 0.2], rewards=REWARDS)
    obj = Objective(beta=0.5, group_size=64, penalty="reverse")
    pts = stationary_points(q, obj, box_budget=50)
    assert not pts.exhaustive and "not certified" in pts.message and "boxes" in pts.message
    assert len(pts) >= 1


def test_certified_answer_does_not_depend_on_the_clock():
    """The budget counts boxes: the same question gives the same set and message however long it takes (the
    message carries no seconds)."""
    q = Question([0.6, 0.2, 0.2], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=16, penalty="direct")
    a, b = stationary_points(q, obj), stationary_points(q, obj)
    assert a.exhaustive and a.message == b.message
    assert [p.pi.tolist() for p in a.points] == [p.pi.tolist() for p in b.points]


# ----------------------------------------------------------------------------- flags on faces and vertices

def _absent_drift(q: Question, obj: Objective, vertex: int, o: int, mass: float = 1e-9) -> float:
    """``g_o - E_pi g`` of answer ``o`` at mass ``mass`` next to the vertex (the engine's output_gradient)."""
    pi = np.full(q.n_outputs, 0.0)
    pi[vertex] = 1.0 - mass
    pi[o] += mass
    g = output_gradient(q, obj, pi)
    return float(g[o] - pi @ g)


def test_k1_loss_vertex_collapse_flags():
    """k1 in the loss, K = 4, G = 6: the multi-start search lands on vertices. The best answer's vertex is
    a collapse reached in the limit (boundary=True, stable); the worst answer's vertex, which every
    other answer leaves (positive drift), is not reported as converged."""
    q = Question([0.0268, 0.0951, 0.3414, 0.5367], rewards=[0.4, 0.0, 0.6, 0.2])
    obj = Objective(beta=0.94017, group_size=6, kl_estimator="k1")
    pts = stationary_points(q, obj)
    assert not pts.exhaustive
    vertices = [p for p in pts if p.pi.max() > 1 - 1e-9]
    assert vertices
    for p in vertices:
        top = int(np.argmax(p.pi))
        drifts = [_absent_drift(q, obj, top, o) for o in range(4) if o != top]
        if max(drifts) < 0:                            # every absent answer drifts outward: KKT holds
            assert p.boundary and p.stable is True and p.converged
        else:
            assert not p.converged and p.stable is False
    best = [p for p in vertices if int(np.argmax(p.pi)) == 2]
    assert best and best[0].boundary and best[0].stable is True
    worst = [p for p in vertices if int(np.argmax(p.pi)) == 1]
    assert all(not p.converged for p in worst)
    # the flow started next to the best vertex collapses onto it (independent of the verdict code)
    end = _euler_from(q, obj, np.array([0.01, 0.01, 0.97, 0.01]), steps=3000)
    assert end[2] > 1 - 1e-3


@pytest.mark.slow
def test_issue_k2_reward_from_reference_in_full_space():
    """rewards (0.4, 1, 1), G = 2, shift, std_eps 1e-6, k2 in the reward, beta = 1.30067: the class flow
    ends at (0, 0.716, 0.284); the flow on all output logits (the issue's Euler, redone here) goes to
    (0, 1, 0), which from_reference now reports (a vertex reached in the limit, stable by KKT)."""
    q = Question([0.04814, 0.68181, 0.27005], rewards=[0.4, 1, 1])
    obj = Objective(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k2",
                    kl_placement="reward")
    end = _euler_from(q, obj, q.pi_ref.copy(), steps=20_000, lr=0.05)
    assert end[1] > 0.999
    pts = stationary_points(q, obj)
    ref = pts.from_reference
    assert np.allclose(ref.pi, [0.0, 1.0, 0.0]) and ref.boundary and ref.stable is True and ref.converged
    assert any(ref is p for p in pts.points)
