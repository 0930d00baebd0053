"""The fuzz's end check where its plain integration stops: the robust integration (tests/_full_space_flow.py
``robust_flow_end`` on ``fuzz_kl_cases.mollified_gradient``'s field) decides, and catches wrong ends.

Expected ends come from the definitions: a sliding mode solved by hand, the independent field of
``_full_space_flow.gradient`` (groups enumerated), never from the solvers under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _full_space_flow import IntegrationBudget, IntegrationFailed, flow_end, gradient, robust_flow_end
from fuzz_kl_cases import check_kl_case, end_check, mollified_gradient

from grpo_theory import Objective, Question, stationary_policy
from grpo_theory.solvers import output_gradient

#: abs in the loss, shift, ``G = inf``: ``g_o = r_o - E_pi r - beta sign(lr_o)``. With ``2 beta < 1`` answer 1
#: (reward 1) gains on answer 2 (reward 0) whatever their kinks, so answer 2 collapses; with ``beta > 0.25`` answer 0
#: (reward 0.5) gains on answer 1 below its reference mass and loses above it (``g_1 - g_0 = 0.5 - beta (1 -
#: sign(lr_0))``), and ``d lr_0/dt`` has the sign of ``g_0 - g_1`` on the face: the flow slides along ``lr_0 = 0``
#: (Filippov) to (0.3, 0.7, 0).
SLIDE = dict(q=Question([0.3, 0.3, 0.4], rewards=[0.5, 1.0, 0.0]),
             obj=Objective(beta=0.35, group_size=math.inf, normalization="shift", kl_estimator="abs",
                           kl_placement="loss"),
             end=np.array([0.3, 0.7, 0.0]))


def test_the_robust_integration_follows_the_sliding_mode():
    q, obj = SLIDE["q"], SLIDE["obj"]
    end = robust_flow_end(q.pi_ref, mollified_gradient(q, obj), t_end=1e8)
    assert np.abs(end - SLIDE["end"]).max() < 1e-3, end
    assert abs(math.log(end[0] / 0.3)) < 2e-4                          # held within the band at its kink


@pytest.mark.slow
def test_the_plain_integration_chatters_on_the_sliding_mode():
    q, obj = SLIDE["q"], SLIDE["obj"]
    with pytest.raises((IntegrationBudget, IntegrationFailed)):        # every answer starts at its kink
        flow_end(q.pi_ref, grad=lambda p: output_gradient(q, obj, p), t_end=1e8, rtol=1e-8, atol=1e-10,
                 max_evals=5_000)


@pytest.mark.slow
def test_the_end_check_decides_the_sliding_end_and_refuses_a_wrong_one():
    q, obj = SLIDE["q"], SLIDE["obj"]
    ok, why = end_check(q, obj, SLIDE["end"])
    assert ok is True and why.startswith("the robust integration"), why
    for wrong in ([0.0, 1.0, 0.0], [0.3, 0.3, 0.4], [0.3, 0.69, 0.01]):
        ok, why = end_check(q, obj, np.array(wrong))
        assert ok is False, (wrong, why)


@pytest.mark.slow
def test_a_stop_at_a_jump_point_is_not_an_arrival_where_the_flow_slides_out_of_it():
    """G = 8, beta = 0.4: at pi_ref every single-logit nudge is pulled back, but answer 1 gains on answer 2 by
    ``(7/8)(1 - 0) - 2 beta = 0.075`` whatever the kinks, so pi_ref is no Filippov equilibrium; the plain
    integration chatters there from t = 4e-5 on, and its stop used to count as reaching it."""
    q = SLIDE["q"]
    obj = Objective(beta=0.4, group_size=8, normalization="shift", kl_estimator="abs", kl_placement="loss")
    ok, why = end_check(q, obj, q.pi_ref.copy(), at_jump=True)
    assert ok is False and "the plain integration stopped at the returned point" in why, why


@pytest.mark.slow                                                      # tests/test_kinks.py asserts the exact end
def test_stationary_policy_at_a_jump_point_the_flow_slides_out_of():
    q = SLIDE["q"]
    obj = Objective(beta=0.4, group_size=8, normalization="shift", kl_estimator="abs", kl_placement="loss")
    sol = stationary_policy(q, obj)
    assert sol.converged and np.abs(sol.pi - SLIDE["end"]).max() < 1e-3, sol


def test_a_collapsed_answer_keeps_its_limit_in_the_others_field():
    """KL seed 3154 from the definitions (k3 in the advantage, G = 2, shift): answer 3 collapses (its logit falls at
    a constant speed, ``pi_3 k3(lr_3) -> pi_ref(3)``), and that limit, ``-beta pi_ref(3)`` in ``E_pi g``, moves the
    others: they reach the vertex of answer 0 near t = 5e8. ``flow_end`` sees the collapsed answer at mass 0 and
    chatters where it crosses its threshold; frozen with its limit, the robust integration goes on."""
    pi_ref = np.array([0.8687649735473366, 0.0377935398173808, 0.06979527044277073, 0.023646216192512004])
    kw = dict(beta=0.5444774673689102, G=2, normalization="shift", eps=1e-6, estimator="k3", placement="advantage")

    def grad(p):
        return gradient(p, pi_ref, [0.6, 0.8, 0.8, 0.4], **kw)

    with pytest.raises(IntegrationBudget):
        flow_end(pi_ref, grad=grad, t_end=1e8, rtol=1e-8, atol=1e-10, max_evals=5_000)
    e8, e12 = (robust_flow_end(pi_ref, grad, t_end=t) for t in (1e8, 1e12))
    assert e8[3] < 1e-80 and e8[1:3].min() > 0.04                     # answer 3 frozen, 1 and 2 still there at 1e8
    assert np.abs(e12 - [1.0, 0.0, 0.0, 0.0]).max() < 1e-9, e12


#: KL seeds of the 10^4-case run at 222d354 whose end the plain integration could not decide ('unchecked'), by why:
#: LSODA gave up at a collapse (1105: k3_plus in the reward, 6e-8 from the returned face; 6240: abs in the reward),
#: chatter on a sliding mode (4775 and 7566: a log-ratio clamp in the loss; 5748: abs in the loss), and a collapsed
#: answer's threshold (3154: k3 in the advantage, reached late, near t = 5e8).
ROBUST_SEEDS = (1105, 6240, 4775, 7566, 5748, 3154)


@pytest.mark.slow
@pytest.mark.parametrize("seed", ROBUST_SEEDS)
def test_ends_the_plain_integration_left_unchecked_are_decided_by_the_robust_one(seed):
    # 1105, 6240 and 5748: the library's answers changed since (the Filippov slide ends, the collapsed share), and the
    # plain integration reaches them now ('same'); either pass confirming the end is what is asserted
    row = check_kl_case(seed)
    assert row["outcome"].startswith("ok") and row["end"] in ("robust", "same"), (row["outcome"], row["end"],
                                                                                  row["detail"])
