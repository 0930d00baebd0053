"""Token-level GRPO on answer trees (grpo_theory.tree), checked against a brute-force expected gradient.

The brute force enumerates every batch of groups (and every reward realisation), writes the
token-level loss of each loss type from its definition (per-token ratio and k3, aggregated as
TRL/verl do, the token count a sampled constant), and differentiates the exact expectation with
torch autograd on tabular tree logits at pi_old = pi. Nothing of the library's P_G engine or of
its weights enters it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_impl import group_advantage_first

from grpo_theory import InvalidInputError, Objective, Question, stationary_points, stationary_policy
from grpo_theory.solvers import TreeProblem

torch = pytest.importorskip("torch")

LOSS_TYPES = ["grpo", "dr_grpo", "dapo", "bnpo", "token-mean", "seq-mean-token-sum", "seq-mean-token-mean",
              "seq-mean-token-sum-norm"]


def brute_force_logit_gradient(tp: TreeProblem, x: np.ndarray, obj: Objective, batch_groups: int) -> np.ndarray:
    """d/dtheta of the exact expected token-level loss, by enumeration and autograd (see module doc)."""
    q, tree = tp.q, tp.tree
    log_cond0 = tp.log_cond(x)
    theta = torch.tensor(log_cond0, dtype=torch.float64, requires_grad=True)
    parts = []
    for s in tree.node_slices:
        parts.append(torch.log_softmax(theta[s], 0))
    log_cond = torch.cat(parts)
    old = torch.tensor(log_cond0, dtype=torch.float64)
    ref = torch.tensor(tp.log_ref_cond, dtype=torch.float64)
    support = list(tp.support)
    path_edges = [np.flatnonzero(tree.paths[i]) for i in range(len(support))]
    lengths = [len(p) for p in path_edges]
    pi_old = np.exp(tree.paths @ log_cond0)
    levels, R = q.reward_levels, q.reward_probs
    G, B = obj.group_size, batch_groups
    kind = {"grpo": "mean", "seq-mean-token-mean": "mean", "dr_grpo": "sum", "seq-mean-token-sum": "sum",
            "seq-mean-token-sum-norm": "sum", "dapo": "batch", "bnpo": "batch", "token-mean": "batch"}[obj.loss_type]

    def token_terms(i, adv):
        e = torch.tensor(path_edges[i])
        lp, lo, lr = log_cond[e], old[e], ref[e]
        rho = torch.exp(lp - lo)
        k3 = torch.exp(lr - lp) - (lr - lp) - 1.0
        pen = k3 if obj.regime == "reverse" else rho * k3
        return rho * adv - obj.beta * pen

    total = torch.zeros((), dtype=torch.float64)
    n = len(support)
    for members in itertools.product(range(n), repeat=B * G):
        p_members = math.prod(pi_old[m] for m in members)
        if p_members == 0:
            continue
        for lv in itertools.product(range(levels.size), repeat=B * G):
            p_r = math.prod(R[support[m], lv[j]] for j, m in enumerate(members))
            if p_r == 0:
                continue
            r = levels[list(lv)]
            loss = torch.zeros((), dtype=torch.float64)
            tokens = sum(lengths[m] for m in members)
            for b in range(B):
                grp = list(range(b * G, (b + 1) * G))
                for j in grp:
                    order = [j] + [i for i in grp if i != j]
                    adv = group_advantage_first(r[order], obj.normalization, obj.std_ddof, obj.std_eps)
                    terms = token_terms(members[j], adv).sum()
                    if kind == "mean":
                        loss = loss + terms / lengths[members[j]] / (B * G)
                    elif kind == "sum":
                        loss = loss + terms / (B * G)
                    else:
                        loss = loss + terms / tokens
            total = total + p_members * p_r * loss
    (grad,) = torch.autograd.grad(total, theta)
    return grad.numpy()


@st.composite
def tree_questions(draw):
    k = draw(st.integers(2, 4))
    words = draw(st.lists(st.text(alphabet="ab", min_size=0, max_size=2), min_size=k, max_size=k, unique=True))
    answers = [w + "$" for w in words]                      # an end token makes any set prefix-free
    pi_ref = np.array(draw(st.lists(st.floats(0.1, 1.0), min_size=k, max_size=k)))
    pi_ref /= pi_ref.sum()
    noisy = draw(st.booleans()) and k <= 3
    if noisy:
        probs = np.array([draw(st.sampled_from([[1.0, 0.0], [0.0, 1.0], [0.3, 0.7], [0.8, 0.2]])) for _ in range(k)])
        return Question(pi_ref, reward_levels=[0.0, 1.0], reward_probs=probs, answers=answers)
    rewards = [float(draw(st.integers(0, 2))) for _ in range(k)]
    if len(set(rewards)) == 1:
        rewards[0] += 1.0
    return Question(pi_ref, rewards=rewards, answers=answers)


@settings(max_examples=40, deadline=None)
@given(q=tree_questions(), loss_type=st.sampled_from(LOSS_TYPES), penalty=st.sampled_from(["reverse", "direct"]),
       G=st.sampled_from([2, 3]), ddof=st.sampled_from([0, 1]), eps=st.sampled_from([0.0, 0.1]),
       norm=st.sampled_from(["scale", "scale", "shift"]), seed=st.integers(0, 10_000))
def test_expected_gradient_matches_brute_force_autograd(q, loss_type, penalty, G, ddof, eps, norm, seed):
    """At random tree logits (not only at stationary points), for every loss type."""
    B = 1
    obj = Objective(beta=0.7, group_size=G, penalty=penalty, normalization=norm, std_ddof=ddof, std_eps=eps,
                    level="token", loss_type=loss_type,
                    groups_per_batch=B)
    tp = TreeProblem(q, obj)
    x = np.random.default_rng(seed).normal(0.0, 1.0, tp.tree.n_free)
    ours = tp.logit_gradient(x)
    brute = brute_force_logit_gradient(tp, x, obj, B)
    np.testing.assert_allclose(ours, brute, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_two_groups_per_batch_share_the_token_count(loss_type):
    q = Question([0.2, 0.5, 0.3], rewards=[1.0, 0.0, 0.0], answers=["ab$", "a$", "b$"])
    obj = Objective(beta=0.5, group_size=2, penalty="reverse", level="token", loss_type=loss_type, groups_per_batch=2)
    tp = TreeProblem(q, obj)
    x = np.array([0.3, -0.4, 0.2])[: tp.tree.n_free]
    np.testing.assert_allclose(tp.logit_gradient(x), brute_force_logit_gradient(tp, x, obj, 2),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss_type", LOSS_TYPES)
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_single_token_answers_give_the_sequence_level_policy_for_every_loss_type(loss_type, penalty):
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0], answers=["a", "b", "c"])
    seq = stationary_policy(q, Objective(beta=0.5, group_size=4, penalty=penalty))
    for B in (1, math.inf):
        tok = stationary_policy(q, Objective(beta=0.5, group_size=4, penalty=penalty, level="token",
                                             loss_type=loss_type,
                                             groups_per_batch=B))
        np.testing.assert_allclose(tok.pi, seq.pi, atol=1e-12)
        # and the tree solver itself, forced, agrees
        tp_obj = Objective(beta=0.5, group_size=4, penalty=penalty, level="token", loss_type=loss_type,
                           groups_per_batch=B)
        tp = TreeProblem(q, tp_obj)
        assert tp.residual(tp.x_from_policy(seq.pi)) < 1e-9


@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_stationary_tree_policy_zeroes_the_brute_force_gradient_and_differs_from_sequence_level(penalty):
    q = Question([0.15, 0.25, 0.2, 0.4], rewards=[1.0, 0.0, 0.0, 0.5], answers=["aa$", "ab$", "b$", "c$"])
    obj = Objective(beta=0.5, group_size=3, penalty=penalty, level="token", loss_type="grpo")
    sol = stationary_policy(q, obj)
    assert sol.converged and sol.stable
    tp = TreeProblem(q, obj)
    x = tp.x_from_policy(sol.pi)
    assert np.max(np.abs(brute_force_logit_gradient(tp, x, obj, 1))) < 1e-9
    seq = stationary_policy(q, dataclasses.replace(obj, level="sequence"))
    assert np.max(np.abs(seq.pi - sol.pi)) > 1e-3


def test_loss_types_differ_when_lengths_differ_and_coincide_when_they_do_not():
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.0, 0.0], answers=["aab$", "ab$", "b$"])
    pis = {lt: stationary_policy(q, Objective(beta=0.3, group_size=4, level="token", loss_type=lt)).pi
           for lt in ("grpo", "dr_grpo")}
    assert np.max(np.abs(pis["grpo"] - pis["dr_grpo"])) > 1e-3
    same = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.0, 0.0], answers=["aa$", "ab$", "bb$"])
    a = stationary_policy(same, Objective(beta=0.3, group_size=4, level="token", loss_type="grpo")).pi
    b = stationary_policy(same, Objective(beta=0.3, group_size=4, level="token", loss_type="dr_grpo")).pi
    np.testing.assert_allclose(a, b, atol=1e-10)


def test_stationary_points_on_a_tree_are_stationary_with_stability():
    q = Question([0.1, 0.1, 0.8], rewards=[1.0, 0.9, 0.0], answers=["ab$", "ac$", "d$"])
    pts = stationary_points(q, Objective(beta=2.0, group_size=8, penalty="direct", level="token", loss_type="dapo"))
    assert len(pts) >= 1 and not pts.exhaustive
    for p in pts:
        assert p.converged and p.stable in (True, False, None)


def test_bad_tree_input():
    with pytest.raises(InvalidInputError, match="prefix"):
        Question([0.5, 0.5], rewards=[1, 0], answers=["a", "ab"])
    with pytest.raises(InvalidInputError, match="one entry per output"):
        Question([0.5, 0.5], rewards=[1, 0], answers=["a$"])
    with pytest.raises(InvalidInputError, match="loss_type"):
        Objective(beta=0.5, loss_type="mean")
    with pytest.raises(InvalidInputError, match="level"):
        stationary_policy(Question([0.5, 0.5], preference=[[0.5, 0.9], [0.1, 0.5]]),
                          Objective(beta=0.5, group_size=2, level="token"))


@pytest.mark.parametrize("penalty", ["reverse", "direct"])
@pytest.mark.parametrize("G", [2, 4, math.inf])
def test_reward_on_the_first_token_only_gives_the_sequence_level_answer(penalty, G):
    """Two-token answers whose reward depends on the first token alone: with equal lengths the
    token-level and sequence-level conditions coincide (the second token only feels the penalty)."""
    pi1, pi2 = np.array([0.3, 0.7]), np.array([[0.6, 0.4], [0.25, 0.75]])
    q = Question((pi1[:, None] * pi2).ravel(), rewards=[1.0, 1.0, 0.0, 0.0], answers=["AX", "AY", "BX", "BY"])
    obj = Objective(beta=2.0, group_size=G,
                    penalty=penalty)          # interior: at G = inf, small beta sends the direct penalty to a vertex
    tok = stationary_policy(q, dataclasses.replace(obj, level="token"))
    seq = stationary_policy(q, obj)
    assert tok.converged
    np.testing.assert_allclose(tok.pi, seq.pi, atol=1e-9)


@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_each_node_at_g2_follows_its_closed_form(penalty):
    """docs/derivations.md: at G = 2, with equal token weights below a node, the node's conditional is
    Eq. 14 (reverse) or the direct G = 2 form with gamma = (Q(v,c1) - Q(v,c2))/W, given the rest."""
    from grpo_theory import closed_form
    from grpo_theory.solvers import answer_weights

    q = Question([0.1, 0.3, 0.25, 0.35], rewards=[1.0, 0.2, 0.6, 0.0], answers=["AX", "AY", "BX", "BY"])
    obj = Objective(beta=0.4, group_size=2, penalty=penalty, level="token", loss_type="dr_grpo")
    sol = stationary_policy(q, obj)
    tp = TreeProblem(q, obj)
    Pw, W = answer_weights(q, obj, sol.pi)
    paths, pi = tp.tree.paths, sol.pi
    Q = (pi * Pw) @ paths / (pi @ paths)
    Wv = (pi * W) @ paths / (pi @ paths)
    cond_ref = np.exp(tp.log_ref_cond)
    cond = pi @ paths / np.repeat([pi @ paths[:, s].sum(1) for s in tp.tree.node_slices],
                                  [s.stop - s.start for s in tp.tree.node_slices])
    form = closed_form.binary_pairwise if penalty == "reverse" else closed_form.binary_pairwise_direct
    for s in tp.tree.node_slices:
        e1, e2 = s.start, s.start + 1
        delta = Q[e1] - Q[e2]
        first, p = (e1, cond_ref[e1]) if delta >= 0 else (e2, cond_ref[e2])
        x = form(p, obj.beta * Wv[e1] / abs(delta))      # both forms depend on beta/gamma only
        assert cond[first] == pytest.approx(float(x), abs=1e-9)


@pytest.mark.parametrize("loss_type,B", [("dapo", 1), ("dapo", 2), ("grpo", math.inf), ("dr_grpo", math.inf)])
def test_monte_carlo_weights_agree_with_the_exact_ones(loss_type, B):
    from grpo_theory.solvers import answer_weights, monte_carlo_answer_weights

    q = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.2, 0.8], [0.7, 0.3], [1.0, 0.0]],
                 answers=["aab$", "ab$", "b$"])
    obj = Objective(beta=0.5, group_size=4, level="token", loss_type=loss_type, groups_per_batch=B, std_ddof=1,
                    std_eps=1e-4)
    pi = np.array([0.3, 0.3, 0.4])
    Pw, W = answer_weights(q, obj, pi)
    mPw, mW, sPw, sW = monte_carlo_answer_weights(q, obj, pi, n_samples=40_000, seed=1)
    assert np.all(np.abs(mPw - Pw) <= 5 * sPw + 1e-12)
    assert np.all(np.abs(mW - W) <= 5 * sW + 1e-12)


def test_token_level_flow_ends_at_the_stationary_policy():
    from grpo_theory import dynamics

    q = Question([0.15, 0.25, 0.2, 0.4], rewards=[1.0, 0.0, 0.0, 0.5], answers=["aa$", "ab$", "b$", "c$"])
    obj = Objective(beta=0.5, group_size=3, level="token", loss_type="grpo")
    tr = dynamics.flow(q, obj, q.pi_ref, np.linspace(0, 300, 4), with_points=False)
    np.testing.assert_allclose(tr.final, stationary_policy(q, obj).pi, atol=1e-6)


@pytest.mark.timeout(120)
def test_twenty_answers_at_g16_with_a_batch_normaliser_are_solved_exactly():
    """The issue's size: ~20 answers, G = 16, enumeration over (reward level, length) counts."""
    words = ["".join(w) + "$" for n in (0, 1, 2) for w in itertools.product("abc", repeat=n)]
    words += ["".join(w) + "$" for w in itertools.product("ab", repeat=3)][:7]
    rng = np.random.default_rng(0)
    q = Question(rng.dirichlet(np.ones(20)), rewards=rng.integers(0, 2, 20).astype(float), answers=words)
    sol = stationary_policy(q, Objective(beta=0.5, group_size=16, level="token", loss_type="dapo", groups_per_batch=1))
    assert sol.converged and sol.residual < 1e-10
    from grpo_theory import ExactEvaluationTooLarge

    noisy = Question(rng.dirichlet(np.ones(20)), reward_levels=[0, 1, 2, 3],
                     reward_probs=rng.dirichlet(np.ones(4), size=20), answers=words)
    with pytest.raises(ExactEvaluationTooLarge, match="groups_per_batch=math.inf"):
        stationary_policy(noisy, Objective(beta=0.5, group_size=16, level="token", loss_type="dapo",
                                           groups_per_batch=1))
