"""Certified stationary points (grpo_theory.solvers.certify), full-space stability (grpo_theory.solvers.full_space),
and the KL-in-reward / LSODA robustness fixes, each checked against an independent path:
a dense Newton search on the engine's own ``output_gradient`` from a grid of starts, the engine's
``stationarity_residual``, and the flow on all output logits."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_theory import Objective, Question, stationarity_residual, stationary_points
from grpo_theory._numerics import optimize
from grpo_theory.problem import shaped_question
from grpo_theory.solvers import output_gradient
from grpo_theory.solvers.certify import certification_scope, certified_stationary_points
from grpo_theory.solvers.full_space import full_space_flow, full_space_stability

REWARDS = [1.0, 0.5, 0.0]


def _dense_newton_roots(q: Question, obj: Objective, n: int = 9, span: float = 12.0) -> list[np.ndarray]:
    """Interior roots of ``g_c = g_last`` (the engine's output_gradient) found by hybr from an n x n grid
    of class log-ratios (outputs are the classes here): an independent search, no certify code."""
    K = q.n_outputs

    def eqs(eta):
        th = np.concatenate([eta, [0.0]])
        pi = np.exp(th - th.max())
        pi /= pi.sum()
        if np.any(pi <= 0):
            return np.full(K - 1, 1e3)
        g = output_gradient(q, obj, pi)
        return g[:-1] - g[-1]

    found = []
    grid = np.linspace(-span, span, n)
    for a in grid:
        for b in grid:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol = optimize.root(eqs, np.array([a, b]), method="hybr", options={"xtol": 1e-13})
            if not np.all(np.isfinite(sol.x)) or np.max(np.abs(eqs(sol.x))) > 1e-9:
                continue
            th = np.concatenate([sol.x, [0.0]])
            pi = np.exp(th - th.max())
            found.append(pi / pi.sum())
    return found


def _interior(res):
    return [r for r in res.roots if not r.limit]


# ----------------------------------------------------------------------------- the issue's cases

def test_issue_missed_roots_direct_g_inf():
    """pi_ref (0.6, 0.2, 0.2), rewards (1, 0.5, 0), direct, G = inf, beta = 2: two interior points
    (the library found only the first), plus the best vertex as a limit point."""
    q = Question([0.6, 0.2, 0.2], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=math.inf, penalty="direct")
    res = certified_stationary_points(q, obj)
    assert res.exhaustive
    xs = sorted(tuple(r.x) for r in _interior(res))
    assert np.allclose(xs, [(0.88099, 0.09088, 0.02813), (0.95339, 0.04125, 0.00536)], atol=6e-6)
    assert [r.limit for r in res.roots].count(True) == 1
    for r in _interior(res):
        assert stationarity_residual(q, obj, r.pi) <= 1e-10
    newton = _dense_newton_roots(q, obj)
    assert newton, "the independent search found nothing"
    for pi in newton:                  # every root the dense search finds is certified
        assert min(np.max(np.abs(pi - r.pi)) for r in _interior(res)) < 1e-7
    for target in xs:                  # and the independent search reaches both
        assert min(np.max(np.abs(pi - np.array(target))) for pi in newton) < 1e-7


def test_issue_missed_root_near_face():
    q = Question([0.1, 0.8, 0.1], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=math.inf, penalty="direct")
    res = certified_stationary_points(q, obj)
    assert res.exhaustive
    best = max(_interior(res), key=lambda r: r.x[0])
    assert np.allclose(best.x[:2], [0.99552, 0.00448], atol=6e-6) and best.x[2] < 1e-5
    assert stationarity_residual(q, obj, best.pi) <= 1e-10


@pytest.mark.slow
def test_issue_class_reduction_misjudges_the_flow_end():
    """rewards (0.4, 1, 1), G = 2, shift, std_eps 1e-6, k2 in the reward, beta = 1.30067: the class
    solver reports (0, 0.716, 0.284) as the end of the flow from pi_ref; the flow on all output
    logits (Euler and ODE) goes to (0, 1, 0). (The face point itself is locally stable in the full
    space: a perturbed full-space flow returns to it.)"""
    q = Question([0.04814, 0.68181, 0.27005], rewards=[0.4, 1, 1])
    obj = Objective(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k2",
                    kl_placement="reward")
    end = full_space_flow(q, obj, method="euler", lr=0.05, steps=20_000)
    assert end[1] > 0.9999
    end_ode = full_space_flow(q, obj, t_max=1e4)
    assert end_ode[1] > 0.9999


def test_issue_kl_in_reward_collapse_does_not_raise():
    """k3 in the reward, unclamped: the collapsing answer's shaped reward overflows to -inf, which
    used to raise InvalidInputError for a valid question."""
    q = Question([0.82927, 0.17073], rewards=[1, 0])
    obj = Objective(beta=0.0647, group_size=2, std_eps=1e-6, kl_estimator="k3", kl_placement="reward")
    pts = stationary_points(q, obj)
    assert len(pts) >= 1
    shaped = shaped_question(q, np.array([0.0, math.inf]))
    assert np.all(np.isfinite(shaped.reward_levels))
    assert shaped.expected_reward[1] < shaped.expected_reward[0] - 1e6


def test_shaped_question_stand_in_is_the_limit():
    """With scale normalisation, P_G at a shift of +inf matches a large finite shift (the limit)."""
    from grpo_theory import reward_preference

    q = Question([0.5, 0.3, 0.2], rewards=[1.0, 0.3, 0.0])
    obj = Objective(beta=1.0, group_size=4)
    pi = np.array([0.5, 0.3, 0.2])
    lim = reward_preference(shaped_question(q, np.array([0.0, 0.1, math.inf])), obj, pi)
    far = reward_preference(shaped_question(q, np.array([0.0, 0.1, 1e5])), obj, pi)
    assert np.allclose(lim, far, atol=1e-4)


def test_lsoda_failure_falls_back(monkeypatch):
    """An LSODA failure ("Unexpected istate") falls back to BDF with a warning, and gets the answer."""
    import scipy.integrate

    from grpo_theory import _numerics

    calls = {"n": 0}
    real_step = scipy.integrate.LSODA.step

    def failing_step(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("Unexpected istate in LSODA")
        return real_step(self)

    monkeypatch.setattr(scipy.integrate.LSODA, "step", failing_step)
    with pytest.warns(_numerics.IntegrationFallbackWarning):
        y = _numerics.integrate_until_slow(lambda y: -y, np.array([1.0]), 5.0, None)
    assert abs(float(y[0]) - math.exp(-5.0)) < 1e-6


# ----------------------------------------------------------------------------- properties

PLACEMENTS = [dict(penalty="reverse"), dict(penalty="direct"), dict(kl_estimator="k2"),
              dict(kl_estimator="k1", kl_placement="advantage")]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.floats(0.05, 0.9), b=st.floats(0.05, 0.9), beta=st.floats(0.2, 3.0),
       G=st.sampled_from([2, 3, 5, 8]), kind=st.sampled_from(range(len(PLACEMENTS))))
def test_certified_roots_are_roots_and_complete(a, b, beta, G, kind):
    c = 1.0 - a - b
    if c < 0.05:
        return
    q = Question([a, b, c], rewards=REWARDS)
    obj = Objective(beta=beta, group_size=G, **PLACEMENTS[kind])
    res = certified_stationary_points(q, obj, time_budget=20.0)
    assert res.exhaustive, res.message
    assert len(_interior(res)) >= 1
    for r in _interior(res):
        assert stationarity_residual(q, obj, r.pi) <= 1e-10
        lo, hi = r.certificate.box[:, 0], r.certificate.box[:, 1]
        eta = np.log(r.x[:-1] / r.x[-1])
        assert np.all((lo <= eta) & (eta <= hi))
    for pi in _dense_newton_roots(q, obj, n=7):
        assert min(np.max(np.abs(pi - r.pi)) for r in _interior(res)) < 1e-7, (pi, [r.x for r in res.roots])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.floats(0.05, 0.9), b=st.floats(0.05, 0.9), beta=st.floats(0.3, 3.0),
       pen=st.sampled_from(["reverse", "direct"]))
def test_certified_g_inf_complete(a, b, beta, pen):
    c = 1.0 - a - b
    if c < 0.05:
        return
    q = Question([a, b, c], rewards=REWARDS)
    obj = Objective(beta=beta, group_size=math.inf, penalty=pen)
    res = certified_stationary_points(q, obj, time_budget=20.0)
    assert res.exhaustive, res.message
    for r in _interior(res):
        assert stationarity_residual(q, obj, r.pi) <= 1e-10
    for pi in _dense_newton_roots(q, obj, n=7, span=8.0):
        assert min(np.max(np.abs(pi - r.pi)) for r in _interior(res)) < 1e-7


def _flow_verdict(q, obj, pi, seed=0, delta=1e-3, t=300.0):
    """Where a perturbed full-space flow goes: True back to ``pi``, False away."""
    rng = np.random.default_rng(seed)
    th = np.log(pi) + delta * rng.standard_normal(pi.size)
    p0 = np.exp(th - th.max())
    p0 /= p0.sum()
    end = full_space_flow(q, obj, p0, t_max=t)
    return bool(np.max(np.abs(end - pi)) < np.max(np.abs(p0 - pi)))


@pytest.mark.parametrize("pi_ref,G,pen,beta", [
    ((0.6, 0.2, 0.2), math.inf, "direct", 2.0),
    ((0.2, 0.3, 0.5), 8, "direct", 0.4),
    ((0.3, 0.3, 0.4), 4, "reverse", 0.5),
])
def test_stability_agrees_with_eigenvalue_and_perturbed_flow(pi_ref, G, pen, beta):
    q = Question(list(pi_ref), rewards=REWARDS)
    obj = Objective(beta=beta, group_size=G, penalty=pen)
    res = certified_stationary_points(q, obj)
    assert res.exhaustive
    for r in _interior(res):
        s = full_space_stability(q, obj, r.pi)
        assert s.stable is not None
        assert s.stable == (s.leading < 0)
        assert _flow_verdict(q, obj, r.pi) == s.stable


def test_issue_two_roots_have_opposite_stability():
    q = Question([0.6, 0.2, 0.2], rewards=REWARDS)
    obj = Objective(beta=2.0, group_size=math.inf, penalty="direct")
    res = certified_stationary_points(q, obj)
    verdicts = {round(float(r.x[0]), 5): full_space_stability(q, obj, r.pi).stable for r in _interior(res)}
    assert verdicts == {0.88099: True, 0.95339: False}


def test_face_point_kkt_reverse_repels():
    """On a face the reverse penalty's absent answer gains (g -> +inf): not a KKT point."""
    q = Question([0.5, 0.3, 0.2], rewards=REWARDS)
    obj = Objective(beta=1.0, group_size=4)
    s = full_space_stability(q, obj, [0.6, 0.4, 0.0])
    assert s.kkt is False and s.stable is False and s.absent_drift[2] > 0


def test_scope_reports_uncertified():
    q = Question([0.5, 0.3, 0.2], rewards=REWARDS)
    obj = Objective(beta=1.0, group_size=4, kl_estimator="k3", kl_placement="reward")
    assert certification_scope(q, obj) is not None
    res = certified_stationary_points(q, obj)
    assert not res.exhaustive and "not certified" in res.message


def test_four_classes_small_g():
    q = Question([0.25, 0.25, 0.25, 0.25], rewards=[1.0, 0.6, 0.3, 0.0])
    obj = Objective(beta=0.5, group_size=4, penalty="direct")
    res = certified_stationary_points(q, obj, time_budget=30.0)
    assert res.exhaustive, res.message
    for r in _interior(res):
        assert stationarity_residual(q, obj, r.pi) <= 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("G", [16, 32, 64])
@pytest.mark.parametrize("pen", ["reverse", "direct"])
def test_certified_large_g(G, pen):
    q = Question([0.4, 0.35, 0.25], rewards=REWARDS)
    obj = Objective(beta=0.5, group_size=G, penalty=pen)
    res = certified_stationary_points(q, obj, time_budget=120.0)
    assert res.exhaustive, res.message
    for r in _interior(res):
        assert stationarity_residual(q, obj, r.pi) <= 1e-10
    for pi in _dense_newton_roots(q, obj, n=7):
        assert min(np.max(np.abs(pi - r.pi)) for r in _interior(res)) < 1e-7
