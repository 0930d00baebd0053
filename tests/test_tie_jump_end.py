"""The flow's end where its field jumps at tied shaped rewards (k1 in the reward, scale normalisation, no epsilon):
taken from the flows of the nearby continuous fields (grpo_theory.solvers.tie_jump_end).

The question: rewards (0, 0, 2), two answers of reward 0 with different reference masses. At ``pi_ref`` their shaped
rewards tie, a group made of them alone is normalised by its own std, and the field jumps there; the flow on all
output logits chatters and full_space_end finds no rest. SPEC: where the shaped rewards tie on the support the
answer is log pooling, ``pi ∝ pi_ref e^{r/beta}``.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_policy
from grpo_theory.solvers.classes import ClassProblem
from grpo_theory.solvers.search import kkt_checked
from grpo_theory.solvers.tie_jump_end import has_tie_jumps, tie_jump_end
from grpo_theory.solvers.two_class import flow_root_from

PI_REF = np.array([0.2933, 0.2878, 0.4189])
REWARDS = np.array([0.0, 0.0, 2.0])
BETA, G = 3.924, 8
Q = Question(PI_REF, rewards=REWARDS)
OBJ = Objective(beta=BETA, group_size=G, kl_estimator="k1", kl_placement="reward")


def _log_pooling() -> np.ndarray:
    w = PI_REF * np.exp(REWARDS / BETA)
    return w / w.sum()


def _candidate():
    cp = ClassProblem(Q, OBJ)
    return kkt_checked(Q, OBJ, flow_root_from(cp, float(cp.log_p[0] - cp.log_p[1])))


def _unsettled(candidate):
    return dataclasses.replace(candidate, converged=False, stable=None,
                               message="the flow on all output logits from pi_ref is still moving at t = 1e+12")


def test_which_objectives_jump_at_tied_shaped_rewards():
    assert has_tie_jumps(OBJ)
    assert not has_tie_jumps(dataclasses.replace(OBJ, std_eps=1e-6))
    assert not has_tie_jumps(dataclasses.replace(OBJ, variance_eps=1e-6))
    assert not has_tie_jumps(Objective(beta=BETA, group_size=G, kl_estimator="k1", kl_placement="reward",
                                       normalization="shift"))
    assert not has_tie_jumps(Objective(beta=BETA, group_size=G, kl_estimator="k1", kl_placement="advantage"))
    assert not has_tie_jumps(Objective(beta=BETA, group_size=G))


def test_the_nearby_fields_rest_at_log_pooling_and_it_is_returned():
    candidate = _candidate()
    np.testing.assert_allclose(candidate.pi, _log_pooling(), rtol=0, atol=1e-9)
    got = tie_jump_end(Q, OBJ, candidate, _unsettled(candidate), stationary_policy)
    assert got.converged and got.pi.tobytes() == candidate.pi.tobytes()
    assert "std_eps = 0.002 and 0.0002" in got.message and "pulled back" in got.message
    assert "still moving at t = 1e+12" in got.message


def test_nearby_fields_that_rest_elsewhere_leave_the_unsettled_end():
    candidate = _candidate()
    end = _unsettled(candidate)
    elsewhere = dataclasses.replace(candidate, pi=np.array([0.3, 0.3, 0.4]))
    got = tie_jump_end(Q, OBJ, candidate, end, lambda q, obj: elsewhere)
    assert not got.converged and "not approaching it" in got.message
    moving = dataclasses.replace(candidate, converged=False)
    got = tie_jump_end(Q, OBJ, candidate, end, lambda q, obj: moving)
    assert not got.converged and "does not settle either" in got.message


def _brute_force_drift(theta: np.ndarray) -> np.ndarray:
    """d theta/dt on all output logits from the definitions: every group of G draws enumerated (3^8), shaped
    rewards r - beta log(pi/pi_ref), advantages (r_i - mean)/std (ddof 0), 0 for a group whose shaped rewards tie;
    d theta_o/dt = pi_o (g_o - E_pi g) with g_o = E[A_1 | o_1 = o]."""
    seqs = np.array(list(itertools.product(range(3), repeat=G)))
    pi = np.exp(theta - theta.max())
    pi /= pi.sum()
    shaped = (REWARDS - BETA * np.log(pi / PI_REF))[seqs]
    sd = shaped.std(axis=1, keepdims=True)
    tie = sd <= 1e-12 * (1.0 + np.abs(shaped).max())
    adv = np.where(tie, 0.0, (shaped - shaped.mean(axis=1, keepdims=True)) / np.where(tie, 1.0, sd))
    weight = np.prod(pi[seqs], axis=1)
    g = np.array([np.sum(weight[seqs[:, 0] == o] * adv[seqs[:, 0] == o, 0]) / pi[o] for o in range(3)])
    return pi * (g - pi @ g)


@pytest.mark.slow
def test_euler_on_the_brute_force_field_chatters_around_log_pooling_closer_as_the_step_shrinks():
    """The independent path: explicit Euler steps on the exact expected gradient (no package code) from pi_ref,
    then with a step ten times smaller; the distance to log pooling falls with the step (0.05: about 1e-3)."""
    theta = np.log(PI_REF)
    gaps = []
    for dt, steps in ((0.05, 400), (0.005, 2000), (0.0005, 4000)):
        for _ in range(steps):
            theta = theta + dt * _brute_force_drift(theta)
        pi = np.exp(theta - theta.max())
        gaps.append(float(np.abs(pi / pi.sum() - _log_pooling()).max()))
    assert gaps[0] < 3e-3 and gaps[2] < gaps[0] / 5 and gaps[2] < 2e-4, gaps


@pytest.mark.slow
def test_stationary_policy_returns_log_pooling_where_the_flow_chatters():
    got = stationary_policy(Q, OBJ)
    assert got.converged and got.stable is True
    np.testing.assert_allclose(got.pi, _log_pooling(), rtol=0, atol=1e-9)
    assert "chatters on a jump of its field" in got.message


def test_a_flow_that_chatters_on_the_jump_is_stopped_saying_why_and_what_to_give(monkeypatch):
    """dynamics.flow integrates the same field: LSODA chatters along the jump (t = 1e-4 of flow time cost 1.3 s of
    CPU, so t = 1 would take hours). Past FLOW_MAX_SECONDS of CPU it stops, says how far it got and names std_eps;
    the budget is shrunk here to keep the test fast."""
    from grpo_theory import dynamics
    from grpo_theory.errors import InvalidInputError

    monkeypatch.setattr(dynamics, "FLOW_MAX_SECONDS", 0.5)
    with pytest.raises(InvalidInputError, match=r"flow: integrating to t = 1 was stopped after 0.5 s of CPU at "
                                                r"t = .*shaped rewards tie.*small std_eps"):
        dynamics.flow(Q, OBJ, PI_REF, [0.0, 1.0], with_points=False)
    # with std_eps the field is continuous and the flow reaches log pooling at once
    tr = dynamics.flow(Q, dataclasses.replace(OBJ, std_eps=1e-6), PI_REF, [0.0, 100.0], with_points=False)
    np.testing.assert_allclose(tr.final, _log_pooling(), rtol=0, atol=1e-6)
