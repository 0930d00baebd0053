"""preference.expectations_evaluator: the set-up-once E(w) a flow calls, against level_expectations to the bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from grpo_theory import Objective, Question
from grpo_theory.preference import expectations_evaluator, level_expectations
from grpo_theory.preference_sums import binomial_walk, binomial_window_expectations
from grpo_theory.solvers import ClassProblem


@pytest.mark.parametrize("levels", [[0.0, 1.0], [0.0, 0.5, 1.0], [0.0, 2.0], [-1.0, 0.5, 3.0], [0.0, 0.2, 0.7, 1.0]])
@pytest.mark.parametrize("G", [2, 3, 8, 16, 64, 65, math.inf])      # 65: past the exact enumeration
def test_expectations_evaluator_is_level_expectations_to_the_bit(levels, G):
    rng = np.random.default_rng(len(levels) * 1000 + (0 if math.isinf(G) else G))
    v = np.array(levels)
    for kw in ({}, dict(std_ddof=1), dict(std_eps=1e-4), dict(variance_eps=1e-3), dict(normalization="shift"),
               dict(advantage="rloo")):
        obj = Objective(beta=0.5, group_size=G, **kw)
        f = expectations_evaluator(v, obj)
        for shape in [(), (5,), (3, 4)]:
            lw = np.log(rng.dirichlet(np.ones(v.size), size=shape))
            if shape:
                lw[..., 0][rng.random(shape) < 0.3] = -np.inf          # a level the policy cannot reach
                lw -= logsumexp(lw, axis=-1, keepdims=True)            # the rest renormalised: a law again
            assert np.array_equal(f(lw), level_expectations(v, lw, obj)), (levels, G, kw, shape)


@pytest.mark.parametrize("levels", [[0.0, 1.0], [-3.3, 0.7], [0.0, 1e7]])
@pytest.mark.parametrize("G", [66, 1000, 4096])                    # two levels past 65: the binomial window
def test_two_level_windows_are_level_expectations_to_the_bit(levels, G):
    rng = np.random.default_rng(G)
    v = np.array(levels)
    for kw in ({}, dict(std_ddof=1), dict(std_eps=1e-4), dict(variance_eps=1e-3), dict(normalization="shift")):
        obj = Objective(beta=0.5, group_size=G, **kw)
        f = expectations_evaluator(v, obj)
        for shape in [(), (5,), (3, 8)]:
            lw = np.log(rng.dirichlet(np.ones(2) * 0.3, size=shape))
            if shape:
                u = rng.random(shape)
                lw[u < 0.2] = [-np.inf, 0.0]                            # a vertex, either one
                lw[u > 0.9] = [0.0, -np.inf]
            assert np.array_equal(f(lw), level_expectations(v, lw, obj)), (levels, G, kw, shape)



@pytest.mark.parametrize("G", [66, 1000, 4096, 10_000])
def test_a_single_policy_window_is_its_row_in_a_batch_to_the_bit(G):
    # one policy places its window with Python numbers, a batch with arrays: a row repeated in a batch has the
    # batch's (its own) window, so the two must agree to the bit, at the mode's edges and at the clip of z too
    walk = binomial_walk((-0.3, 1.7), G, "scale", 0, 1e-6, 0.0, "mean")
    rng = np.random.default_rng(G)
    w0 = np.concatenate([rng.random(40), 10.0 ** rng.uniform(-320, -1, 20), 1 - 10.0 ** rng.uniform(-16, -1, 20),
                         [0.0, 1.0, 0.5, (G // 2) / G, 1 / G]])
    with np.errstate(divide="ignore"):
        rows = np.log(np.stack([w0, 1 - w0], axis=-1))
    for row in rows:
        one = binomial_window_expectations(row[None, :], walk)
        assert np.array_equal(one, binomial_window_expectations(np.stack([row, row]), walk)[:1]), row

def test_class_problem_drift_unchanged_by_the_evaluator():
    # the drift through the evaluator against the drift through level_expectations itself
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    for obj in (Objective(beta=0.3, group_size=8), Objective(beta=0.3, group_size=math.inf, penalty="direct")):
        cp = ClassProblem(q, obj)
        log_pi = np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=7))
        log_w = np.log(np.exp(log_pi) @ cp.R)
        expected = level_expectations(q.reward_levels, log_w, obj) @ cp.R.T
        assert np.array_equal(cp.class_preference(log_pi), expected)
