"""dynamics' per-flow gradient (E(w) set up once) against ``output_gradient``, to the bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question, dynamics
from grpo_theory.solvers import output_gradient


@pytest.mark.parametrize("G", [2, 3, 8, math.inf])
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_flow_gradient_is_output_gradient_to_the_bit(G, penalty):
    rng = np.random.default_rng(4)
    q = Question([0.1, 0.2, 0.3, 0.4], rewards=[1.0, 0.5, 0.5, 0.0])
    obj = Objective(beta=0.7, group_size=G, penalty=penalty)
    gradient = dynamics._gradient_evaluator(q, obj)
    edge = [np.array([0.5, 0.5, 0.0, 0.0]), np.array([1e-300, 0.3, 0.2, 0.5])]     # a face, a tiny mass
    pis = [rng.dirichlet(np.ones(4)) for _ in range(20)] + edge
    for pi in pis:
        assert np.array_equal(gradient(pi), output_gradient(q, obj, pi))


def test_other_objectives_fall_back_to_output_gradient():
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    obj = Objective(beta=0.5, group_size=4, kl_estimator="k1", kl_placement="reward")
    pi = np.array([0.3, 0.3, 0.4])
    assert np.array_equal(dynamics._gradient_evaluator(q, obj)(pi), output_gradient(q, obj, pi))
