"""stationary_policy / stationary_points at the extremes of beta with three reward classes (the note's penalties).

Expected values from the definitions: the reverse penalty's stationary point is ``pi(o) = pi_ref(o) / (1 - (P_G(o) -
E_pi P_G)/beta)`` (SPEC, Eq. 11), and the direct one's ``pi ∝ pi_ref e^{P_G/beta}``, with ``|P_G| <= 1`` for rewards in
[0, 1] under the group advantage at G = 8 (a normalised advantage is at most ``sqrt(G - 1)`` in size); so
``|pi - pi_ref| <= 2 sqrt(7) / beta`` (to first order) for beta far above it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_points, stationary_policy

Q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])


@pytest.mark.parametrize("beta", [1e12, 1e20, 1e300, 1.7e308])
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_a_huge_beta_returns_pi_ref_within_the_bound(beta, penalty):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sol = stationary_policy(Q, Objective(beta=beta, group_size=8, penalty=penalty))
    # an integrator's failure reaches the user once, as the project's warning, never as scipy's raw "lsoda: ..."
    assert not [w for w in seen if str(w.message).startswith("lsoda:")], [str(w.message) for w in seen]
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


def _eq13_relative_residual(pi_ref, rewards, pi, beta):
    """Eq. 13 (G = inf, reverse penalty, std normalisation) as ``pi(o) (1 - (r(o) - E r)/(beta sigma)) / pi_ref(o) - 1``,
    computed from deviations to the top reward so that masses of 1e-200 keep their digits (``E r`` itself would round
    to the top reward)."""
    pi, r = np.asarray(pi, float), np.asarray(rewards, float)
    dev = r - r.max()                                      # <= 0
    shortfall = float(pi @ dev)                            # E r - r_max, exact to relative rounding
    var = float(pi @ dev**2) - shortfall**2                # sigma^2; shortfall^2 << pi @ dev^2 near the vertex
    lhs = pi * (1.0 - (dev - shortfall) / (beta * math.sqrt(var)))
    return np.abs(lhs / np.asarray(pi_ref, float) - 1.0)


@pytest.mark.parametrize("beta", [1e-8, 1e-20, 1e-50, 1e-100])
def test_a_tiny_beta_with_the_std_returns_the_root_next_to_the_vertex(beta):
    # The root's light masses scale like beta^2 (sigma ~ sqrt(pi_light), so pi_light (r_gap / (beta sigma)) = pi_ref
    # gives pi_light ~ beta^2): 2e-17 at beta = 1e-8, representable down to beta ~ 1e-150. The flow moves a class at
    # a speed proportional to its mass, so it gets there only at t ~ 1e17; the vertex (1, 0, 0) is not its end (the
    # reverse penalty's pull beta pi_ref/pi beats the advantage's -1/sigma ~ pi^-1/2 below the root).
    sol = stationary_policy(Q, Objective(beta=beta, group_size=math.inf, penalty="reverse", normalization="scale"))
    assert sol.converged and sol.stable is True and not sol.boundary, sol.message
    assert np.all(sol.pi > 0), sol.pi
    assert _eq13_relative_residual(Q.pi_ref, [1.0, 0.5, 0.0], sol.pi, beta).max() < 1e-9
    # the beta^2 law: pi(o) / beta^2 is the same at every tiny beta (to the first order of its expansion)
    ratio = sol.pi[1:] / beta**2
    ref = stationary_policy(Q, Objective(beta=1e-8, group_size=math.inf, penalty="reverse", normalization="scale"))
    np.testing.assert_allclose(ratio, ref.pi[1:] / 1e-16, rtol=1e-6)


def test_interval_products_with_an_infinite_bound_enclose_without_a_warning():
    # an overflowed bound has no midpoint: the midpoint-radius product must still enclose, as (-inf, inf)
    from grpo_theory import _interval as iv

    A = (np.array([[[1.0, -np.inf]]]), np.array([[[2.0, np.inf]]]))     # [1, 2] and (-inf, inf)
    B = (np.array([[[3.0], [1.0]]]), np.array([[[4.0], [1.0]]]))         # [3, 4] and [1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = iv.matmul(A, B)
        plo, phi = iv.mul((np.array([1e200]), np.array([1e300])), (np.array([1e200]), np.array([1e300])))
    assert lo[0, 0, 0] == -np.inf and hi[0, 0, 0] == np.inf            # [3, 8] + (-inf, inf)
    finite = iv.matmul((A[0][..., :1], A[1][..., :1]), (B[0][:, :1], B[1][:, :1]))   # [1, 2] x [3, 4] = [3, 8]
    assert finite[0][0, 0, 0] <= 3.0 <= 8.0 <= finite[1][0, 0, 0]
    assert plo[0] == np.inf and phi[0] == np.inf                      # 1e400 overflows: an infinite bound


@pytest.mark.slow                                          # ~1 s: the certified search's boxes
def test_stationary_points_at_beta_1e_50_raises_no_numpy_warning():
    # the certified search's enclosures overflow at beta = 1e-50 (1 / beta times a mass); that is an infinite bound,
    # never a RuntimeWarning printed to the user
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        pts = stationary_points(Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0]),
                                Objective(beta=1e-50, group_size=math.inf))
    assert len(pts.points) >= 1


def test_the_near_face_search_survives_a_jacobian_beyond_doubles():
    # KL fuzz seed 7091 (k3_ratio in the loss with verl's clamps, G = 16, tie filtering, an entropy bonus): the light
    # classes' lowered starts reach points whose Jacobian is not finite, and numpy's eigvals raised LinAlgError out of
    # stationary_policy. The search must skip such a start: the flow does not settle there, said as such.
    q = Question([0.24451323863902846, 0.10348264665839668, 0.30291494453251877, 0.34908917017005603],
                 rewards=[0.0, 0.4, 0.6, 0.6])
    obj = Objective(beta=0.03390890152520702, group_size=16, std_eps=1e-6, kl_estimator="k3_ratio", kl_placement="loss",
                    kl_log_ratio_clamp=20.0, kl_value_clamp=10.0, filter_ties=True, entropy_coef=0.01)
    sol = stationary_policy(q, obj)
    assert not sol.converged and "did not settle" in sol.message, sol.message
