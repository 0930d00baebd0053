"""The stacked multi-class flows (solvers/multi_class_batch, _batch_ode) against the one-at-a-time path and scipy.

Independent checks: closed-form solutions and scipy's ``solve_ivp`` at ``rtol = 1e-12`` for the batched
Runge-Kutta integrator; each problem's own ``ClassProblem.free_flow`` for the stacked right-hand side;
the one-at-a-time ``stationary_policy`` (LSODA, then root polishing) for the policies.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from grpo_theory import Objective, Question
from grpo_theory._batch_ode import integrate_many_until_slow
from grpo_theory.solvers import ClassProblem, stationary_policy, stationary_policy_batch
from grpo_theory.solvers.multi_class_batch import MultiClassFlowBatch, batch_flow_endpoints, supports_flow


def _random_problems(n: int, seed: int, n_outputs=(3, 4)) -> list[tuple[Question, Objective]]:
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        K = int(rng.choice(n_outputs))
        pi_ref = rng.dirichlet(np.ones(K)) * 0.9 + 0.1 / K
        rewards = rng.permutation(np.linspace(0.0, 1.0, K))
        obj = Objective(beta=float(np.exp(rng.uniform(math.log(0.03), math.log(10.0)))),
                        group_size=[2, 3, 8, math.inf][int(rng.integers(4))],
                        penalty=["reverse", "direct"][int(rng.integers(2))])
        cases.append((Question(pi_ref / pi_ref.sum(), rewards=rewards), obj))
    return cases


def test_integrator_matches_closed_forms_per_flow():
    # y' = A_i y with a rotation-decay A_i per flow: each flow's own step sizes, to the tolerance
    rates = np.array([0.1, 1.0, 5.0, 0.3])
    omegas = np.array([0.0, 2.0, 0.5, 7.0])

    def rhs(y, rows):
        a, w = rates[rows, None], omegas[rows]
        return -a * y + np.stack([-w * y[:, 1], w * y[:, 0]], axis=1)

    y, done = integrate_many_until_slow(rhs, np.tile([1.0, 0.0], (4, 1)), 3.0, None)
    exact = np.exp(-3.0 * rates)[:, None] * np.stack([np.cos(3.0 * omegas), np.sin(3.0 * omegas)], axis=1)
    assert done.all()
    assert np.max(np.abs(y - exact)) < 1e-7


def test_integrator_stops_when_slow_and_gives_up_a_stiff_flow():
    k = np.array([1.0, 1e7])
    y, done = integrate_many_until_slow(lambda y, rows: -k[rows, None] * (y - 2.0), np.zeros((2, 1)), 1e4, 1e-6,
                                        max_steps=500)
    # the first flow stops once its speed 2 e^{-t} is below 1e-6 (t ~ 14.5), well before t_max
    assert done[0] and abs(y[0, 0] - 2.0) < 1e-5
    assert not done[1]                      # stiff: an explicit method needs ~1e10 steps; left to LSODA


def _figure8_like(betas=(20.0, 1.0, 0.05)):
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    objs = [Objective(beta=b, group_size=G, penalty=pen) for b in betas
            for G, pen in ((2, "reverse"), (8, "reverse"), (math.inf, "reverse"), (8, "direct"))]
    return [ClassProblem(q, o) for o in objs]


def test_batch_flow_matches_a_tight_solve_ivp_reference():
    cps = _figure8_like()
    ends = batch_flow_endpoints(cps, t_max=20.0, speed=None)
    for cp, end in zip(cps, ends):
        eta0 = cp.log_p[:-1] - cp.log_p[-1]
        ref = solve_ivp(lambda _t, y, cp=cp: cp.free_flow(y), (0.0, 20.0), eta0, method="DOP853",
                        rtol=1e-12, atol=1e-14)
        assert end is not None
        assert np.max(np.abs(end - ref.y[:, -1])) < 1e-7 * max(1.0, float(np.max(np.abs(ref.y[:, -1]))))


def test_stacked_free_flow_is_each_problems_free_flow():
    cases = _random_problems(40, seed=5, n_outputs=(3,))
    cps = [ClassProblem(q, o) for q, o in cases]
    assert all(supports_flow(cp) for cp in cps)
    batch = MultiClassFlowBatch(cps)
    eta = np.random.default_rng(6).normal(0.0, 3.0, (40, 2))
    rows = np.arange(40)
    stacked = batch.free_flow(eta, rows)
    single = np.array([cp.free_flow(e) for cp, e in zip(cps, eta)])
    assert np.allclose(stacked, single, rtol=1e-12, atol=1e-15)
    sub = rows[::3]
    assert np.allclose(batch.free_flow(eta[sub], sub), single[sub], rtol=1e-12, atol=1e-15)


def test_batch_policies_are_the_one_at_a_time_policies():
    cases = _random_problems(14, seed=11)
    cases.append((Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0]),        # not covered: the scalar path
                  Objective(beta=0.5, group_size=4, kl_estimator="k1", kl_placement="reward")))
    cases.append((Question([0.4, 0.6], rewards=[1, 0]), Objective(beta=0.5)))  # two classes: the scalar path
    batch = stationary_policy_batch(*zip(*cases))
    for (q, obj), p in zip(cases, batch):
        ref = stationary_policy(q, obj)
        assert (p.method, p.converged, p.stable, p.boundary) == (ref.method, ref.converged, ref.stable, ref.boundary)
        assert np.array_equal(p.pi == 0, ref.pi == 0)
        nz = ref.pi > 0
        assert np.max(np.abs(p.pi[nz] - ref.pi[nz]) / ref.pi[nz]) < 1e-10


def test_batch_needs_one_objective_per_question():
    with pytest.raises(ValueError, match="one objective per question"):
        stationary_policy_batch([Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])], [])


def test_a_flow_the_batch_gives_up_goes_through_lsoda(monkeypatch):
    from grpo_theory.solvers import batch

    cps = _figure8_like(betas=(0.3,))
    real = batch.batch_flow_endpoints
    # the second flow given up (as a stiff one would be): its point must be stationary_policy's, bit for bit
    monkeypatch.setattr(batch, "batch_flow_endpoints", lambda problems: [e if i != 1 else None
                                                                          for i, e in enumerate(real(problems))])
    got = stationary_policy_batch([cp.q for cp in cps], [cp.obj for cp in cps])
    ref = stationary_policy(cps[1].q, cps[1].obj)
    assert np.array_equal(got[1].pi, ref.pi) and got[1].residual == ref.residual
