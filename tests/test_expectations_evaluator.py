"""preference.expectations_evaluator: the set-up-once E(w) a flow calls, against level_expectations to the bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question
from grpo_theory.preference import expectations_evaluator, level_expectations
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
            assert np.array_equal(f(lw), level_expectations(v, lw, obj)), (levels, G, kw, shape)


def test_class_problem_drift_unchanged_by_the_evaluator():
    # the drift through the evaluator against the drift through level_expectations itself
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    for obj in (Objective(beta=0.3, group_size=8), Objective(beta=0.3, group_size=math.inf, penalty="direct")):
        cp = ClassProblem(q, obj)
        log_pi = np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=7))
        log_w = np.log(np.exp(log_pi) @ cp.R)
        expected = level_expectations(q.reward_levels, log_w, obj) @ cp.R.T
        assert np.array_equal(cp.class_preference(log_pi), expected)
