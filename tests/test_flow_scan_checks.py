"""The two-class flow scan's check grid near z = 0 (solvers.two_class.check_points) and the flow's rest on a stretch
of zero drift; x(0+) under a KL clamp (predict.zero_limit).

The scan from ``z0 = log(p/(1 - p))`` is spaced by the distance from ``z0``: at ``p = 1e-300`` its spacing near
``z = -7`` is 27, wider than the stretch where the drift is negative, and the flow was sent to the vertex."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from grpo_theory import Objective, Question, stationary_policy


def _k2_first_root(p: float, beta: float) -> float:
    """k2 in the loss, G = inf, scale normalisation, rewards 1/0, written from the definitions: the advantages are
    ``sqrt((1-x)/x)`` and ``-sqrt(x/(1-x))``, k2's gradient coefficient is the log-ratio, so the class-logit drift
    is ``1/sqrt(x(1-x)) - beta (z - z0)``; the flow from ``z0`` stops at its first root (below 0, where the first
    term falls and the second rises)."""
    z0 = math.log(p) - math.log1p(-p)

    def s(z):
        x = 1.0 / (1.0 + math.exp(-z))
        return 1.0 / math.sqrt(x * (1.0 - x)) - beta * (z - z0)

    return brentq(s, z0 + 1e-9, 0.0, xtol=1e-14, rtol=1e-15)   # p <= 1e-120: z0 < -40, s(0) = 2 + beta z0 < 0


@pytest.mark.parametrize("p", [1e-300, 3.16e-281, 1e-250, 1e-200, 1e-150, 1e-120])
def test_a_far_start_does_not_step_over_the_first_rest(p):
    obj = Objective(beta=0.05, group_size=math.inf, kl_estimator="k2")
    point = stationary_policy(Question([p, 1 - p], rewards=[1, 0]), obj)
    z = _k2_first_root(p, 0.05)
    assert point.converged and not point.boundary
    assert point.pi[0] == pytest.approx(1.0 / (1.0 + math.exp(-z)), rel=1e-9)


@pytest.mark.parametrize("p", [1e-10, 1e-200])
def test_the_flow_rests_where_the_drift_first_vanishes(p):
    """k1 in the reward, value clamp 10, G = 5, beta = 0.05: once both answers' log-ratios pass the clamp, the
    shaped rewards tie (1 - 0.05 * 10 = 0 + 0.05 * 10) and the drift is 0 on a whole stretch; the flow stops at its
    edge, where the wrong answer's log-ratio reaches -10: pi(wrong) = e^-10 (1 - p)."""
    obj = Objective(beta=0.05, group_size=5, kl_estimator="k1", kl_placement="reward", kl_value_clamp=10.0)
    point = stationary_policy(Question([p, 1 - p], rewards=[1, 0]), obj)
    assert point.pi[1] == pytest.approx(math.exp(-10.0) * (1 - p), rel=1e-9)


def test_the_batch_scan_agrees_with_the_scalar_one_at_far_starts():
    from grpo_theory.solvers.classes import ClassProblem
    from grpo_theory.solvers.two_class import flow_root_from
    from grpo_theory.solvers.two_class_batch import TwoClassBatch, batch_flow_roots, supports

    obj = Objective(beta=0.3, group_size=8)
    cps = [ClassProblem(Question([p, 1 - p], rewards=[1, 0]), obj) for p in np.logspace(-300, -1, 24)]
    cps = [cp for cp in cps if supports(cp)]          # the batch's coverage (extreme ones go to the scalar path)
    assert len(cps) >= 12
    batch, _ = batch_flow_roots(TwoClassBatch(cps))
    scalar = [flow_root_from(cp, float(cp.log_p[0] - cp.log_p[1])).class_logit for cp in cps]
    np.testing.assert_allclose(batch, scalar, rtol=0, atol=1e-13)


def test_check_points_lie_where_the_scan_is_coarse():
    from grpo_theory.solvers.two_class import CHECK_DT, check_points

    scanned = -690.0 + 0.5 * np.sinh(np.linspace(0.0, np.arcsinh(1430.0 / 0.5), 217))
    c = check_points(scanned)
    assert c.size and np.all(np.diff(c) > 0) and c.min() > -690.0 and c.max() < scanned[-1]
    near = c[np.abs(c) < 10]
    assert near.size and np.max(np.diff(near)) <= CHECK_DT * math.sqrt(10.0 ** 2 + 0.25) * 1.01
    assert check_points(np.linspace(0.0, 1.0, 101)).size == 0          # a fine scan needs none


# ------------------------------------------------------------------------------------------ x(0+) under a clamp
def test_a_binding_clamp_x_at_0_is_the_limit_of_the_flows_end():
    """k3 in the loss, value clamp 10, G = 8: at beta = 5 the flow stalls near its start (x(p) = 2.124 p, the clamp
    never reached) and x(0+) = 0; the clamped update at pi_ref = (0, 1) had its first root at 0.2838. At beta = 1
    the flow passes the clamp and x(p) settles at 0.6577 from p = 1e-6 down."""
    from grpo_theory.predict import zero_limit

    def x(p, obj):
        return float(stationary_policy(Question([p, 1 - p], rewards=[1, 0]), obj).pi[0])

    stall = Objective(beta=5.0, group_size=8, kl_estimator="k3", kl_value_clamp=10.0)
    assert x(1e-9, stall) / 1e-9 == pytest.approx(x(1e-12, stall) / 1e-12, rel=1e-6)     # proportional to p
    assert zero_limit(stall) == 0.0
    passes = Objective(beta=1.0, group_size=8, kl_estimator="k3", kl_value_clamp=10.0)
    assert x(1e-12, passes) == pytest.approx(x(1e-15, passes), abs=1e-12)
    assert zero_limit(passes) == pytest.approx(x(1e-15, passes), abs=1e-12)


def test_a_clamp_no_double_reaches_leaves_x_at_0_as_without_it():
    from grpo_theory.predict import zero_limit

    plain = Objective(beta=0.05, group_size=8)
    clamped = Objective(beta=0.05, group_size=8, kl_estimator="k3", kl_value_clamp=1e100)
    assert zero_limit(clamped) == zero_limit(plain)


# ------------------------------------------------------------------ an entropy bonus at a huge beta (round 17)
@pytest.mark.parametrize("pi_ref, rewards", [([0.013, 0.287, 0.7], [1.0, 0.25, 0.0]),
                                             ([0.4, 0.1, 0.3, 0.2], [2.0, -1.0, 0.5, 3.0])])
def test_an_entropy_bonus_at_a_huge_beta_is_solved_near_pi_ref(pi_ref, rewards):
    """beta 1e11 to 1e16 with an entropy bonus: the class flow's rates grow like beta and LSODA's state left the
    doubles at t = 0 (a ValueError from SciPy, the seventeenth audit's two tracebacks). The rest is within O(1/beta)
    of pi_ref: beta (pi - pi_ref) at beta = 1e13 equals its value at beta = 1e9, where the flow integrates, to 1e-2
    (the O(1/beta^2) term and the rounding of pi, 1e-16 x 1e13 = 1e-3)."""
    q = Question(pi_ref, rewards=rewards)
    low = stationary_policy(q, Objective(beta=1e9, group_size=2, entropy_coef=0.05))
    high = stationary_policy(q, Objective(beta=1e13, group_size=2, entropy_coef=0.05))
    assert low.converged and high.converged and high.stable
    np.testing.assert_allclose(1e13 * (high.pi - q.pi_ref), 1e9 * (low.pi - q.pi_ref), atol=1e-2)
    for beta in (1e11, 1e15, 1e16):
        assert stationary_policy(q, Objective(beta=beta, group_size=2, entropy_coef=0.05)).converged
