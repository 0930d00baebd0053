"""The shared-weights finite-time flow: the field against the engine, the nested kernels against independent
paths (dynamics.flow, the stationary solver, a dense eigen-solve against the arrow solve, a root search)."""

import math

import numpy as np
import pytest

from grpo_theory import Objective, dynamics
from grpo_theory.errors import InvalidInputError
from grpo_theory.predict.coupled import check_kernel, shift_stationary, solve_kernel, solve_rho, time_grid
from grpo_theory._numerics import expit, logit
from grpo_theory.predict.field import PromptField
from grpo_theory.predict.response import Response, binary_question
from grpo_theory.solvers import output_gradient

OBJECTIVES = [
    Objective(beta=0.5, group_size=8),
    Objective(beta=0.2, group_size=math.inf, penalty="direct"),
    Objective(beta=0.05, group_size=4, kl_estimator="k3", kl_placement="loss", kl_value_clamp=10.0),
    Objective(beta=0.3, group_size=4, kl_estimator="k1", kl_placement="advantage"),
]
P = np.array([0.03, 0.2, 0.55, 0.9])


def _h_by_hand(obj, p, z):
    """dz/dt of the two-class softmax flow, from output_gradient: 2 x (1 - x) (g_a - g_b)."""
    x = 1 / (1 + math.exp(-z))
    g = output_gradient(binary_question(p), obj, np.array([x, 1 - x]))
    return 2 * x * (1 - x) * (g[0] - g[1])


@pytest.mark.parametrize("obj", OBJECTIVES, ids=lambda o: o.describe())
def test_field_equals_the_engine_update(obj):
    f = PromptField(obj, P)
    assert f.path == "separable"
    z = np.linspace(-7, 7, 15)
    for i, p in enumerate(P):
        want = np.array([_h_by_hand(obj, p, zz) for zz in z])
        got = f.h(z, np.full(z.size, i))
        assert np.max(np.abs(got - want)) < 1e-8


def test_field_is_zero_at_eq_14():
    # G = 2, reverse KL, beta = 1: the stationary point is sqrt(p) (Eq. 14)
    f = PromptField(Objective(beta=1.0, group_size=2), P)
    x = np.sqrt(P)
    assert f.max_check_error <= f.tol                            # the spline's documented bound (1e-7)
    assert np.max(np.abs(f.h(logit(x)))) < f.tol


def test_field_kl_in_reward_is_tabulated_and_close_to_the_engine():
    obj = Objective(beta=0.1, group_size=4, kl_estimator="k1", kl_placement="reward")
    f = PromptField(obj, P[:2])
    assert f.path == "tabulated"
    z = np.linspace(-5, 5, 11)          # grid nodes of the tabulation
    want = np.array([_h_by_hand(obj, P[0], zz) for zz in z])
    assert np.max(np.abs(f.h(z, np.zeros(z.size, int)) - want)) < 1e-6


@pytest.mark.parametrize("obj", OBJECTIVES[:3], ids=lambda o: o.describe())
def test_identity_kernel_is_the_tabular_flow(obj):
    """K = I (rho = 0) against dynamics.flow, prompt by prompt."""
    t = time_grid(200.0, 40)
    tr = solve_rho(PromptField(obj, P), 0.0, t, rtol=1e-9, atol=1e-11)
    for i, p in enumerate(P):
        q = binary_question(p)
        want = dynamics.flow(q, obj, q.pi_ref, t, with_points=False).pi[:, 0]
        assert np.max(np.abs(tr.p[:, i] - want)) < 2e-6


def test_shift_kernel_moves_every_logit_alike_to_the_balanced_shift():
    obj = Objective(beta=0.5, group_size=8)
    f = PromptField(obj, P)
    t = time_grid(500.0, 60)
    tr = solve_rho(f, 1.0, t)
    moved = tr.z - tr.z[0]
    assert np.max(np.abs(moved - moved[:, :1])) < 1e-9          # one shift for every prompt
    s = moved[-1, 0]
    # at the end the summed update of the engine is zero (the shift balances the prompts)
    total = sum(_h_by_hand(obj, p, logit(p) + s) for p in P)
    assert abs(total) < 1e-5
    assert abs(s - shift_stationary(f)) < 1e-4


@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_invertible_kernel_ends_at_the_tabular_stationary_points(rho):
    obj = Objective(beta=0.5, group_size=8)
    tr = solve_rho(PromptField(obj, P), rho, time_grid(5e4, 60))
    want = Response(obj)(P)                                     # the stationary solver, per prompt
    assert np.max(np.abs(tr.p[-1] - want)) < 1e-5


def test_measured_kernel_path_matches_the_arrow_path():
    """solve_kernel (dense eigen-solve) with K = (1 - rho) I + rho 11^T/N against solve_rho (arrow Jacobian):
    the kernel is scaled to mean diagonal 1, so its clock runs 1/mean(diag K) times faster."""
    obj = Objective(beta=0.3, group_size=8)
    p = np.array([0.05, 0.1, 0.3, 0.3, 0.6, 0.8])
    f = PromptField(obj, p)
    N, rho = p.size, 0.6
    K = (1 - rho) * np.eye(N) + rho * np.ones((N, N)) / N
    d = (1 - rho) + rho / N
    t = time_grid(50.0, 30)
    a = solve_rho(f, rho, t, rtol=1e-9, atol=1e-11)
    b = solve_kernel(f, K, t * d, rtol=1e-9, atol=1e-11)
    assert np.max(np.abs(a.z - b.z)) < 1e-6


def test_kernel_checks_name_the_problem():
    f = PromptField(Objective(beta=0.5, group_size=8), P)
    with pytest.raises(InvalidInputError, match="4 x 4"):
        solve_kernel(f, np.eye(3), [0, 1])
    with pytest.raises(InvalidInputError, match="symmetric"):
        check_kernel(np.array([[1, 0.5], [0, 1.0]]), 2)
    with pytest.raises(InvalidInputError, match="positive semi-definite"):
        check_kernel(np.array([[1, 2.0], [2.0, 1]]), 2)
    with pytest.raises(InvalidInputError, match="rho"):
        solve_rho(f, 1.5, [0, 1])
    with pytest.raises(InvalidInputError, match=r"\(0, 1\)"):
        PromptField(Objective(beta=0.5), [0.0, 0.5])


def test_expit_logit_round_trip():
    z = np.array([-800.0, -30, 0, 30, 800])
    x = expit(z)
    assert np.all(np.isfinite(x)) and x[0] == 0 and x[-1] == 1
    zz = np.array([-30.0, -5, 0, 5, 15])           # above ~15, 1 - x itself carries the rounding of x near 1
    assert np.allclose(logit(expit(zz)), zz, rtol=0, atol=1e-8)


def test_rounded_logits_above_max_groups_stay_close_to_the_exact_solve():
    """Above max_groups distinct prompts the logits are rounded to 0.01: measured against the exact solve on
    600 distinct prompts (n from 8 to 512), median error below 1e-3 and largest below 0.01 up to t = 10 (the
    escape of prompts near p = 0.002 at t ~ 100 is where a 1% change of p matters most)."""
    rng = np.random.default_rng(0)
    obj = Objective(beta=0.5, group_size=8)
    n = rng.integers(8, 513, 600)
    c = rng.binomial(n, rng.beta(0.6, 1, 600))
    p = (c + 0.5) / (n + 1)
    f = PromptField(obj, p)
    t = time_grid(10.0, 40)
    for rho in (0.0, 0.5):
        exact = solve_rho(f, rho, t, max_groups=10 ** 6).p
        rounded = solve_rho(f, rho, t, max_groups=50).p
        err = np.abs(exact - rounded)
        assert np.median(err) < 1e-3 and err.max() < 0.01


def test_test_prompts_feel_the_shared_update_without_adding_to_it():
    obj = Objective(beta=0.5, group_size=8)
    f = PromptField(obj, P)
    t = time_grid(20.0, 20)
    tight = dict(rtol=1e-10, atol=1e-12)                           # the two integrations step differently
    plain = solve_rho(f, 0.7, t, **tight)
    with_test = solve_rho(f, 0.7, t, test_p=[0.4, 0.03], **tight)
    assert np.max(np.abs(plain.z - with_test.z)) < 1e-7           # the run is unchanged
    # a test prompt equal to a real one follows it exactly
    same = solve_rho(f, 0.7, t, test_p=[P[1]])
    assert np.max(np.abs(same.z_test[:, 0] - same.z[:, 1])) < 1e-12


def test_steps_are_the_integrators_accepted_steps_not_the_reported_times():
    """``CoupledTrajectory.steps`` counts the BDF solver's steps to ``times[-1]``: the same whether 301 times
    or only the two ends are reported, more than two for a flow to t = 1000, and 0 for ``times = [0]``."""
    f = PromptField(OBJECTIVES[0], P)
    for solve in (lambda times: solve_rho(f, 0.4, times),
                  lambda times: solve_kernel(f, 0.6 * np.eye(P.size) + 0.4 / P.size, times)):
        dense, ends = solve(time_grid(1e3, 300)), solve([0.0, 1e3])
        assert dense.times.size == 301 and ends.times.size == 2
        assert dense.steps == ends.steps > 2, (dense.steps, ends.steps)
        assert solve([0.0]).steps == 0
