"""Estimators whose advantage is unbounded near a vertex must not crash the two-class search.

REINFORCE++ whitens by the policy's own reward std, so on a binary question with pi(a) = x its
expected advantage gap is Delta(x) = sqrt((G-1)/G) / sqrt(x (1 - x)), unbounded as x -> 1. The
reverse-penalty condition beta (x - p) = Delta(x) x (1 - x) then reads
beta (x - p) = sqrt((G-1)/G) sqrt(x (1 - x)), solved here by bisection, independently of the engine.
(Before the bound knew the estimator, beta < ~0.1 raised "no root of the drift".)
"""
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from grpo_theory import Objective, Question, stationary_policy


def _reinforce_pp_binary(p: float, beta: float, G: int) -> float:
    c = math.sqrt((G - 1) / G)
    return brentq(lambda x: beta * (x - p) - c * math.sqrt(x * (1 - x)), p, 1 - 1e-300, xtol=1e-15, rtol=1e-15)


@pytest.mark.parametrize("G", [2, 4, 8])
@pytest.mark.parametrize("beta", [0.01, 0.05, 0.3])
def test_reinforce_pp_small_beta_matches_its_binary_condition(G, beta):
    p = 0.355
    sol = stationary_policy(Question(pi_ref=[p, 1 - p], rewards=[1, 0]),
                            Objective(beta=beta, group_size=G, advantage="reinforce_pp"))
    assert sol.converged
    assert sol.pi[0] == pytest.approx(_reinforce_pp_binary(p, beta, G), rel=1e-9, abs=1e-12)


def test_rloo_bound_holds_for_a_reward_span_above_one():
    """RLOO's advantage is bounded by the reward span, not by sqrt(G - 1): rewards spanning 5."""
    q = Question(pi_ref=[0.2, 0.8], rewards=[5.0, 0.0])
    sol = stationary_policy(q, Objective(beta=0.05, group_size=2, advantage="rloo"))
    # RLOO on a binary question is Eq. 14 with gamma = the reward gap: beta (x - p) = 5 x (1 - x)
    b = 0.05 / 5.0
    x = ((1 - b) + np.sqrt((1 - b) ** 2 + 4 * b * 0.2)) / 2
    assert sol.pi[0] == pytest.approx(x, rel=1e-9)
