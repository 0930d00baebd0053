"""The Filippov rest at the loss placement's jumps (grpo_theory.solvers.kinks), against the definitions.

With abs in the loss and no tie filter or entropy bonus, ``g_o = P_G(o) - beta sign(lr_o)`` and at ``pi = pi_ref``
every answer sits on its kink, so ``g_o`` may be anything in ``[P_G(o) - beta, P_G(o) + beta]``: a common value
exists iff ``max P_G - min P_G <= 2 beta``. ``P_G`` here comes from ``tests/_full_space_flow.gradient`` (groups
enumerated, nothing of the library's engine), read at ``pi_ref`` where its ``sign(0) = 0``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _full_space_flow import gradient
from fuzz_kl_cases import check_kl_case, draw_kl_case, filippov_rest

from grpo_theory import Objective, Question, stationary_policy
from grpo_theory.solvers.kinks import kink_slide


def _draw(rng):
    K = int(rng.integers(2, 5))
    pi_ref = rng.dirichlet(np.ones(K))
    rewards = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=K)
    G = int(rng.choice([2, 3, 4, 8]))
    norm = str(rng.choice(["shift", "scale"]))
    return pi_ref, rewards, G, norm, float(rng.uniform(0.02, 0.8))


def test_the_rest_at_pi_ref_is_where_the_advantages_spread_at_most_two_beta():
    rng = np.random.default_rng(20261207)
    seen = {True: 0, False: 0}
    for _ in range(60):
        pi_ref, rewards, G, norm, beta = _draw(rng)
        if np.unique(rewards).size < 2:
            continue
        P = gradient(pi_ref, pi_ref, rewards, beta=beta, G=G, normalization=norm, eps=1e-6, estimator="k2")   # k2 slope 0 at pi_ref: g = P_G
        spread = float(P.max() - P.min())
        if abs(spread - 2 * beta) < 1e-4:
            continue                                          # too close to the edge to tell by either path
        obj = Objective(beta=beta, group_size=G, normalization=norm, std_eps=1e-6, kl_estimator="abs",
                        kl_placement="loss")
        rests = kink_slide(Question(pi_ref, rewards=rewards), obj, pi_ref) == ""
        assert rests == (spread <= 2 * beta), (pi_ref, rewards, G, norm, beta, spread)
        seen[rests] += 1
    assert min(seen.values()) >= 10, seen                    # both verdicts exercised


#: pi_ref (0.3, 0.3, 0.4), rewards (0.5, 1, 0), shift, abs in the loss: answer 1 gains on answer 2 by
#: ``P_1 - P_2 - 2 beta > 0`` whatever their kinks (``P_1 - P_2 = 1`` at ``G = inf``, ``7/8`` at ``G = 8``), so
#: answer 2 collapses; answer 0 (reward 0.5) is held on its kink (tests/test_end_check_robust.py gives the slide),
#: at its reference mass 0.3: the end is (0.3, 0.7, 0) exactly.
@pytest.mark.parametrize("G, beta", [(math.inf, 0.35), (8, 0.4)])
def test_stationary_policy_follows_the_slide_to_its_exact_end(G, beta):
    q = Question([0.3, 0.3, 0.4], rewards=[0.5, 1.0, 0.0])
    obj = Objective(beta=beta, group_size=G, normalization="shift", kl_estimator="abs", kl_placement="loss")
    sol = stationary_policy(q, obj)
    assert sol.converged and sol.stable is True and sol.boundary and sol.discontinuous, sol.message
    np.testing.assert_allclose(sol.pi, [0.3, 0.7, 0.0], rtol=0, atol=1e-12)
    assert "slides" in sol.message


#: The KL fuzz seeds whose returned jump point the robust end check found wrong (abs in the loss): the independent
#: integration (kinks smoothed over 1e-4) now agrees with the library's end; and seed 167, whose wrong jump point the
#: robust integration could not reach in its budget (the check's Filippov test, filippov_rest, now sees it).
@pytest.mark.slow
@pytest.mark.parametrize("seed", [181, 1034, 1642, 2331, 5351, 6659, 167])
def test_the_six_wrong_jump_points_now_end_where_the_independent_flow_does(seed):
    row = check_kl_case(seed)
    assert row["outcome"].startswith("ok") and row["end"] != "WRONG", (row["outcome"], row["end"], row["detail"])


def test_the_library_and_the_checks_filippov_tests_agree_on_random_kink_points():
    """``kink_slide`` (one-sided coefficients, per answer) against the fuzz check's ``filippov_rest`` (the field at
    every corner around the point, a linear programme): the same verdict at every KL fuzz question with jumps in
    the loss, at pi_ref (where every answer sits on abs's kink) where the margin is not within rounding."""
    agree = {True: 0, False: 0}
    for seed in range(400):
        q, obj = draw_kl_case(seed)
        if obj.kl_placement != "loss" or obj.kl_estimator != "abs" or q.n_outputs > 4:
            continue
        rest, why = filippov_rest(q, obj, q.pi_ref.copy())
        if rest is None:
            continue
        slide = kink_slide(q, obj, q.pi_ref)
        assert rest == (slide == ""), (seed, why, slide)
        agree[rest] += 1
    assert min(agree.values()) >= 5, agree


@pytest.mark.slow
def test_a_kept_answer_beside_one_on_its_kink_is_no_repulsion_at_rounding_level():
    """KL seed 1818 (abs in the loss, answers 1 and 3 of reward 1): the flow slides with answer 1 on its kink while
    answers 0 and 2 vanish (pi_1 < pi_3 and g > E g make answer 3's logit outrun answer 1's above the kink), to
    (0, pi_ref(1), 0, 1 - pi_ref(1)); at that limit a nudge of answer 3 meets a neutral direction, drift 1.6e-16 /
    beta, which the check counted as a repulsion (SILENT)."""
    row = check_kl_case(1818)
    assert row["outcome"].startswith("ok") and row["end"] != "WRONG", (row["outcome"], row["end"], row["detail"])


def test_a_stationary_points_pi_is_read_only():
    """Its residual, stability and message describe that pi: an in-place write must fail, not go unnoticed."""
    sol = stationary_policy(Question([0.3, 0.7], rewards=[1.0, 0.0]), Objective(beta=1.0))
    with pytest.raises(ValueError):
        sol.pi[0] = 0.0
    assert sol.pi[0] == pytest.approx(0.3 ** 0.5, rel=1e-12)        # Eq. 14 at beta = gamma: sqrt(p)
