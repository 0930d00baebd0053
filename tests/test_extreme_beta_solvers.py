"""stationary_policy / stationary_points at the extremes of beta with three reward classes (the note's penalties).

Expected values from the definitions: the reverse penalty's stationary point is ``pi(o) = pi_ref(o) / (1 - (P_G(o) -
E_pi P_G)/beta)`` (SPEC, Eq. 11), and the direct one's ``pi ∝ pi_ref e^{P_G/beta}``, with ``|P_G| <= 1`` for rewards in
[0, 1] under the group advantage at G = 8 (a normalised advantage is at most ``sqrt(G - 1)`` in size); so
``|pi - pi_ref| <= 2 sqrt(7) / beta`` (to first order) for beta far above it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_points, stationary_policy

Q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])


@pytest.mark.parametrize("beta", [1e12, 1e20, 1e300, 1.7e308])
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_a_huge_beta_returns_pi_ref_within_the_bound(beta, penalty):
    sol = stationary_policy(Q, Objective(beta=beta, group_size=8, penalty=penalty))
    assert sol.converged and sol.stable is True, sol.message
    assert np.abs(sol.pi - Q.pi_ref).max() <= 2 * math.sqrt(7) / beta + 1e-15


@pytest.mark.slow                                          # 1.5-1.8 s each: the certified search's boxes
@pytest.mark.parametrize("beta", [1e-8, 1e-100, 1e-308])
def test_stationary_points_at_a_tiny_beta_answers_without_an_exception(beta):
    pts = stationary_points(Q, Objective(beta=beta, group_size=math.inf))
    assert len(pts.points) >= 1
    best = pts.points[0].pi
    # at beta -> 0 with G = inf and the reverse penalty every stationary point puts almost all mass on the best class
    assert best[0] > 0.99 or any(p.pi[0] > 0.99 for p in pts.points), [p.pi for p in pts.points]
