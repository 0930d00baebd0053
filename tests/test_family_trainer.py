"""The trainer's entropy bonus and GSPO's sequence-level ratio against the exact engine (issue 22).

The brute force enumerates every ordered group, writes each group's loss with the trainer's own
``grpo_objective`` (training/loss.py: the frameworks' per-token terms, the entropy of the next-token
distribution from ``answer_token_entropies``), weights it by the group's probability (detached, as a
trainer samples) and differentiates the exact expectation with autograd on tabular logits at
``pi_old = pi``. The engine (``output_gradient``, ``TreeProblem.logit_gradient``) shares none of that code.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question
from grpo_theory.solvers import TreeProblem
from grpo_theory.solvers.classes import output_gradient

torch = pytest.importorskip("torch")
from grpo_theory.training.loss import family_advantages, grpo_objective, tie_mask  # noqa: E402
from grpo_theory.training.policy import answer_token_entropies  # noqa: E402

torch.set_num_threads(1)


def _expected_objective(log_table, ref_table, mask, answers, rewards, probs, obj: Objective, *, level, loss_type):
    """Sum over ordered groups of P(group) x the trainer's loss of that group (one question)."""
    n, G = len(answers), obj.group_size
    ent = answer_token_entropies(log_table, answers) if obj.entropy_coef else None
    total = torch.zeros((), dtype=torch.float64)
    loss_obj = Objective(**{**_fields(obj), "kl_estimator": obj.estimator, "level": level, "loss_type": loss_type})
    for members in itertools.product(range(n), repeat=G):
        p = math.prod(probs[m] for m in members)
        if p == 0:
            continue
        idx = list(members)
        r = torch.tensor(rewards[idx], dtype=torch.float64).view(1, 1, G)
        adv = family_advantages(r, obj.advantage, pass_k=obj.pass_k, normalization=obj.normalization)
        lp = log_table[idx].view(1, 1, G, -1)
        extra = dict(group_mask=tie_mask(r)) if obj.filter_ties else {}
        if obj.entropy_coef:
            extra.update(entropy=ent[idx].view(1, 1, G, -1))
        J, _ = grpo_objective(loss_obj, lp, lp.detach(), ref_table[idx].view(1, 1, G, -1), adv,
                              mask=mask[idx].view(1, 1, G, -1), **extra)
        total = total + p * J
    return total


@pytest.mark.parametrize("advantage,filter_ties,G,penalty", [
    ("group", False, 3, "reverse"), ("group", True, 2, "reverse"), ("group", True, 3, "direct"),
    ("rloo", False, 3, "reverse"), ("rloo", True, 2, "direct"), ("pass_at_k", False, 3, "reverse"),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_entropy_bonus_in_the_trainer_matches_the_engine(advantage, filter_ties, G, penalty, seed):
    """Single-token answers: the trainer's expected logit gradient with an entropy bonus is the engine's."""
    rng = np.random.default_rng(seed)
    n = 3
    rewards = np.array([1.0, 0.0, 0.0]) if advantage == "pass_at_k" else rng.integers(0, 3, n).astype(float)
    if len(set(rewards)) == 1:
        rewards[0] += 1.0
    pi_ref = rng.dirichlet(np.ones(n))
    theta0 = rng.normal(0.0, 1.0, n)
    obj = Objective(beta=0.4, group_size=G, penalty=penalty, advantage=advantage, filter_ties=filter_ties,
                    pass_k=2 if advantage == "pass_at_k" else None, entropy_coef=0.3)
    theta = torch.tensor(theta0, requires_grad=True)
    log_table = torch.log_softmax(theta, 0).view(n, 1)
    probs = np.exp(log_table.detach().numpy()[:, 0])
    ref_table = torch.log(torch.tensor(pi_ref)).view(n, 1)
    answers = tuple((7 + k,) for k in range(n))
    J = _expected_objective(log_table, ref_table, torch.ones(n, 1, dtype=torch.float64), answers, rewards, probs,
                            obj, level="sequence", loss_type="grpo")
    (brute,) = torch.autograd.grad(J, theta)
    q = Question(pi_ref, rewards=rewards)
    g = output_gradient(q, obj, probs)
    engine = probs * (g - probs @ g)
    np.testing.assert_allclose(brute.numpy(), engine, rtol=1e-9, atol=1e-12)
    # the bonus matters: without it the gradient differs
    g0 = output_gradient(q, Objective(**{**_fields(obj), "entropy_coef": 0.0}), probs)
    assert np.abs(probs * (g0 - probs @ g0) - engine).max() > 1e-3


def _fields(obj: Objective) -> dict:
    import dataclasses

    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init and f.name != "penalty"}


def _tree_setup(seed: int):
    answers = ["aa$", "ab$", "b$", "ba$"]
    rng = np.random.default_rng(seed)
    pi_ref = rng.dirichlet(np.ones(4))
    rewards = [1.0, 0.0, 0.0, 2.0] if seed % 2 else [0.0, 1.0, 1.0, 0.0]
    return Question(pi_ref, rewards=rewards, answers=answers)


def _tree_brute(tp: TreeProblem, x: np.ndarray, obj: Objective) -> np.ndarray:
    """The trainer's expected token-level gradient on tabular edge logits of ``tp``'s tree."""
    q = tp.q
    # tabular edge logits, as the engine's: log pi(c | v) = log_softmax over each node's edges
    theta = torch.tensor(tp.log_cond(x), requires_grad=True)
    log_cond = torch.cat([torch.log_softmax(theta[s], 0) for s in tp.tree.node_slices])
    ref_cond = torch.tensor(tp.log_ref_cond)
    paths = [np.flatnonzero(tp.tree.paths[i]) for i in range(len(tp.support))]
    T = max(len(p) for p in paths)
    n = len(paths)
    mask = torch.zeros(n, T, dtype=torch.float64)
    rows_lp, rows_ref = [], []
    for k, e in enumerate(paths):
        pad = T - len(e)
        rows_lp.append(torch.cat([log_cond[torch.tensor(e)], torch.zeros(pad, dtype=torch.float64)]))
        rows_ref.append(torch.cat([ref_cond[torch.tensor(e)], torch.zeros(pad, dtype=torch.float64)]))
        mask[k, :len(e)] = 1.0
    log_table, ref_table = torch.stack(rows_lp), torch.stack(rows_ref)
    probs = np.exp(log_table.detach().numpy().sum(1))
    rewards = np.asarray(q.expected_reward)[tp.support]
    J = _expected_objective(log_table, ref_table, mask, tuple(range(n)), rewards, probs, obj,
                            level="token", loss_type=obj.loss_type)
    (grad,) = torch.autograd.grad(J, theta)
    return grad.numpy()


@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "seq-mean-token-sum"])
@pytest.mark.parametrize("advantage", ["group", "rloo"])
@pytest.mark.parametrize("seed", [0, 1])
def test_sequence_level_ratio_in_the_trainer_matches_the_token_level_engine(loss_type, advantage, seed):
    """Multi-token answers, reverse k3 per token: GSPO's ratio leaves the expected gradient of every loss type
    equal to the token-level engine's (at pi_old = pi each answer's tokens get the same total weight)."""
    q = _tree_setup(seed)
    obj = Objective(beta=0.6, group_size=2, penalty="reverse", level="token", loss_type=loss_type,
                    advantage=advantage, importance_level="sequence")
    tp = TreeProblem(q, obj)
    x = np.random.default_rng(seed + 10).normal(0.0, 1.0, tp.tree.n_free)
    engine = tp.logit_gradient(x)
    np.testing.assert_allclose(_tree_brute(tp, x, obj), engine, rtol=1e-9, atol=1e-12)
    # and the token-level ratio gives the same expected gradient (the stationary set is unchanged)
    tok = Objective(**{**_fields(obj), "importance_level": "token"})
    np.testing.assert_allclose(_tree_brute(tp, x, tok), engine, rtol=1e-9, atol=1e-12)


def test_sequence_level_ratio_with_the_ratio_k3_changes_the_gradient_and_the_engine_refuses_it():
    """TRL multiplies the k3 by coef_1, the sequence-level ratio: with multi-token answers its expected gradient
    differs from the token-level one, which the tree engine models; the engine says so instead of guessing."""
    q = _tree_setup(0)
    obj = Objective(beta=0.6, group_size=2, penalty="direct", level="token", loss_type="grpo",
                    importance_level="sequence")
    with pytest.raises(InvalidInputError, match="importance_level='sequence'"):
        TreeProblem(q, obj)
    tok = Objective(**{**_fields(obj), "importance_level": "token"})
    tp = TreeProblem(q, tok)
    x = np.random.default_rng(3).normal(0.0, 1.0, tp.tree.n_free)
    grads = [_tree_brute(tp, x, o) for o in (obj, tok)]
    np.testing.assert_allclose(grads[1], tp.logit_gradient(x), rtol=1e-9, atol=1e-12)
    assert np.abs(grads[0] - grads[1]).max() > 1e-4


def test_answer_token_entropies_against_a_direct_computation():
    """Two-token answers (A|B)(X|Y): the entropy at each position is that of the distribution decoding samples."""
    answers = ((1, 3), (1, 4), (2, 3), (2, 4))
    p_first = torch.tensor([0.3, 0.7], dtype=torch.float64)
    p_second = torch.tensor([[0.9, 0.1], [0.25, 0.75]], dtype=torch.float64)
    lp = torch.log(torch.stack([torch.stack([p_first[a], p_second[a, b]]) for a in (0, 1) for b in (0, 1)]))
    H = answer_token_entropies(lp[None], answers)[0]

    def h(p):
        return float(-(p * torch.log(p)).sum())
    expected = np.array([[h(p_first), h(p_second[0])], [h(p_first), h(p_second[0])],
                         [h(p_first), h(p_second[1])], [h(p_first), h(p_second[1])]])
    np.testing.assert_allclose(H.numpy(), expected, rtol=1e-12)
