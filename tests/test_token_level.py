"""Token-level stationary policies (grpo_theory.token_level), checked independently."""

import math

import numpy as np
import pytest
from reference_impl import brute_force_preference

from grpo_theory import Objective, Question, stationary_policy
from grpo_theory.token_level import token_level_stationary

torch = pytest.importorskip("torch")

PI1 = np.array([0.3, 0.7])
PI2 = np.array([[0.6, 0.4], [0.25, 0.75]])


@pytest.mark.parametrize("penalty", ["reverse", "direct"])
@pytest.mark.parametrize("G", [2, 4, math.inf])
def test_reward_on_first_token_only_gives_the_sequence_level_answer(penalty, G):
    rewards = np.array([[1.0, 1.0], [0.0, 0.0]])
    obj = Objective(2.0, G, penalty)          # interior: at G = inf, small beta sends the direct penalty to a vertex
    tok = token_level_stationary(PI1, PI2, rewards, obj)
    seq = stationary_policy(Question((PI1[:, None] * PI2).ravel(), rewards=rewards.ravel()), obj)
    assert tok["converged"]
    np.testing.assert_allclose(tok["pi"], seq.pi, atol=1e-9)


@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_expected_token_level_gradient_vanishes_at_the_solution(penalty):
    """Autograd of the exact expected token-level GRPO objective (written from its definition:
    mean over the answer's two tokens of rho_t A - beta D_t, at pi_old = pi) is zero there."""
    G, beta = 3, 0.5
    rewards = np.array([[1.0, 0.0], [0.0, 0.0]])           # only (t1=0, t2=0) is rewarded
    sol = token_level_stationary(PI1, PI2, rewards, Objective(beta, G, penalty))
    assert sol["converged"]
    levels, probs = np.array([0.0, 1.0]), np.eye(2)[rewards.ravel().astype(int)]
    P = brute_force_preference(levels, probs, sol["pi"], G)   # E[A | seq], independent enumeration
    th1 = torch.tensor(np.log(sol["pi1"]), requires_grad=True)
    th2 = torch.tensor(np.log(sol["pi2"]), requires_grad=True)
    old1, old2 = torch.tensor(sol["pi1"]), torch.tensor(sol["pi2"])
    ref1, ref2 = torch.tensor(PI1), torch.tensor(PI2)
    lp1, lp2 = torch.log_softmax(th1, 0), torch.log_softmax(th2, 1)
    total = torch.zeros((), dtype=torch.float64)
    for i in range(2):
        for j in range(2):
            w = old1[i] * old2[i, j]                          # probability of the sequence under pi_old
            terms = []
            for lp, old, ref in ((lp1[i], old1[i], ref1[i]), (lp2[i, j], old2[i, j], ref2[i, j])):
                rho = torch.exp(lp) / old
                k3 = ref / torch.exp(lp) - torch.log(ref) + lp - 1
                pen = k3 if penalty == "reverse" else rho * k3
                terms.append(rho * float(P[2 * i + j]) - beta * pen)
            total = total + w * (terms[0] + terms[1]) / 2
    g1, g2 = torch.autograd.grad(total, (th1, th2))
    assert float(g1.abs().max()) < 1e-9 and float(g2.abs().max()) < 1e-9
    # and the sequence-level stationary policy does not make it vanish
    seq = stationary_policy(Question((PI1[:, None] * PI2).ravel(), rewards=rewards.ravel()),
                            Objective(beta, G, penalty)).pi
    assert np.max(np.abs(seq - sol["pi"])) > 1e-3
