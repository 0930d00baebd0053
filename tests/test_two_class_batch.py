"""The stacked two-class solver (solvers/two_class_batch) against the scalar path and scipy.

Independent checks: scipy's own ``brentq`` for the vectorised Brent iteration; the scalar
``stationary_policy`` (one problem at a time) and the exhaustive scalar ``stationary_points`` (a grid
scan of the whole logit range) for the roots, on random grids of binary and noisy-verifier questions,
multi-stable ones included.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from grpo_theory import Objective, Question
from grpo_theory.figures.noisy_verifier import noisy_binary
from grpo_theory.solvers import ClassProblem, stationary_points, stationary_policies, stationary_policy
from grpo_theory.solvers.two_class_batch import TwoClassBatch, batch_brentq, supports


def _random_cases(n: int, seed: int) -> list[tuple[Question, Objective]]:
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        p = float(rng.uniform(0.005, 0.995))
        eps = float(rng.uniform(0.0, 0.45))
        q = noisy_binary(p, eps, eps) if rng.random() < 0.5 else Question([p, 1 - p], rewards=[1, 0])
        obj = Objective(beta=float(np.exp(rng.uniform(math.log(0.01), math.log(5.0)))),
                        group_size=[2, 3, 8, 64, math.inf][int(rng.integers(5))],
                        penalty=["reverse", "direct"][int(rng.integers(2))])
        cases.append((q, obj))
    return cases


def test_batch_brentq_is_scipys_brentq_to_the_bit():
    rng = np.random.default_rng(3)
    c = rng.uniform(-2.0, 2.0, (200, 4))

    def f(x, rows):                       # cubics with a root in [-3, 3] where the signs differ
        k = c[rows]
        return ((k[:, 0] * x + k[:, 1]) * x + k[:, 2]) * x + k[:, 3] + np.tanh(x)

    a, b = np.full(200, -3.0), np.full(200, 3.0)
    rows = np.arange(200)
    fa, fb = f(a, rows), f(b, rows)
    ok = np.sign(fa) != np.sign(fb)
    roots = batch_brentq(lambda x, r: f(x, np.flatnonzero(ok)[r]), a[ok], b[ok], fa[ok], fb[ok])
    expected = [optimize.brentq(lambda t, i=i: float(f(np.array([t]), np.array([i]))[0]), -3.0, 3.0,
                                xtol=1e-14, rtol=1e-15, maxiter=200) for i in np.flatnonzero(ok)]
    assert ok.sum() > 50
    assert np.array_equal(roots, np.array(expected))


def test_stacked_drift_is_each_problems_drift():
    cases = _random_cases(60, seed=1)
    cps = [ClassProblem(q, o) for q, o in cases]
    batch = TwoClassBatch(cps)
    z = np.random.default_rng(2).normal(0.0, 4.0, (60, 5))
    expected = np.array([cp.drift(row) for cp, row in zip(cps, z)])
    got = batch.drift(z)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-13)
    rows = np.array([5, 0, 17])
    assert np.allclose(batch.drift(z[rows, 0], rows), expected[rows, 0], rtol=1e-12, atol=1e-13)


def test_stationary_policies_are_the_scalar_flow_roots_on_a_random_grid():
    cases = _random_cases(150, seed=4)
    got = stationary_policies(*zip(*cases))
    for (q, obj), pi in zip(cases, got):
        ref = stationary_policy(q, obj).pi
        assert np.max(np.abs(pi - ref)) <= 1e-12, (q, obj.describe(), pi, ref)


def test_stationary_policies_pick_the_flows_point_among_several():
    # G = 64, beta = 1, direct penalty: three stationary points for pi_ref(a) in about (0.1, 0.27)
    obj = Objective(beta=1.0, group_size=64, penalty="direct")
    ps = np.linspace(0.11, 0.26, 7)
    qs = [Question([p, 1 - p], rewards=[1, 0]) for p in ps]
    got = stationary_policies(qs, [obj] * len(qs))
    for q, pi in zip(qs, got):
        pts = stationary_points(q, obj)
        interior = [p for p in pts.points if not p.boundary]
        assert len(interior) == 3
        assert min(np.max(np.abs(pi - p.pi)) for p in interior) <= 1e-10     # one of the exhaustive scan's
        assert np.max(np.abs(pi - stationary_policy(q, obj).pi)) <= 1e-12   # the one the flow reaches


def test_stationary_policies_fall_back_to_the_scalar_path():
    three = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    clipped = Objective(beta=0.1, group_size=8, kl_estimator="k3", kl_value_clamp=10.0)
    binary = Question([0.3, 0.7], rewards=[1, 0])
    assert not supports(ClassProblem(binary, clipped))
    cases = [(three, Objective(beta=0.5, group_size=8)), (binary, clipped), (binary, Objective(beta=0.5))]
    got = stationary_policies(*zip(*cases))
    for (q, obj), pi in zip(cases, got):
        assert np.array_equal(pi, stationary_policy(q, obj).pi)


def test_stationary_policies_needs_one_objective_per_question():
    from grpo_theory.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="one objective per question"):
        stationary_policies([Question([0.3, 0.7], rewards=[1, 0])], [])


def test_critical_step_sizes_are_critical_step_size():
    from grpo_theory.figures._data import binary
    from grpo_theory.figures.proximal_map import critical_step_size, critical_step_sizes

    rng = np.random.default_rng(5)
    qs, objs = [], []
    for _ in range(40):
        qs.append(binary(float(rng.uniform(0.05, 0.95))))
        objs.append(Objective(beta=float(np.exp(rng.uniform(math.log(0.05), math.log(5.0)))), group_size=8,
                              penalty=["reverse", "direct"][int(rng.integers(2))]))
    got = critical_step_sizes(qs, objs)
    expected = np.array([critical_step_size(q, o) for q, o in zip(qs, objs)])
    # a central difference (h = 1e-5) of drifts that are differences of O(1) terms: its rounding noise is
    # ~1e-10 relative, re-rolled by a last-bit change of the root
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.allclose(got, expected, rtol=1e-8, equal_nan=True)


def test_a_batch_names_the_first_problem_it_does_not_cover():
    """TwoClassBatch and MultiClassFlowBatch check their problems the same way (solvers.classes.covered_problems)."""
    from grpo_theory import InvalidInputError
    from grpo_theory.solvers.multi_class_batch import MultiClassFlowBatch

    two = ClassProblem(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0))
    three = ClassProblem(Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]), Objective(beta=1.0))
    assert len(TwoClassBatch([two, two])) == 2 and len(MultiClassFlowBatch([three]).problems) == 1
    with pytest.raises(InvalidInputError, match=r"TwoClassBatch does not cover .* with 3 classes"):
        TwoClassBatch([two, three])
    with pytest.raises(InvalidInputError, match=r"MultiClassFlowBatch does not cover .* with 2 classes"):
        MultiClassFlowBatch([three, two])
