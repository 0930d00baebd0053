"""Tie filtering and the entropy bonus at token level (answer trees), ``beta = 0`` with an entropy bonus, and
``grpo_steps`` with both, against independent paths (issue 22).

The token-level brute force enumerates every ordered group ``o_1..o_G`` and every reward outcome, writes the
loss per token as the frameworks do, and differentiates its exact expectation with torch autograd on tabular
tree logits at ``pi_old = pi``. Nothing of the library's P_G engine, answer weights or tree gradient enters it.
Sources read (to learn, not copied):

* verl ``verl/workers/actor/dp_actor.py`` (``DataParallelPPOActor.update_policy``, v0.4/v0.5 era):
  ``entropy_loss = agg_loss(loss_mat=entropy, loss_mask=response_mask, loss_agg_mode=loss_agg_mode)`` and
  ``policy_loss = pg_loss - entropy_loss * entropy_coeff``: the per-position entropy of the full next-token
  distribution, aggregated with the same ``loss_agg_mode`` as the policy and KL terms. That is what is written
  here (OpenRLHF's ``entropy_loss_coef`` is the same term).
* TRL 1.16.0 (installed), ``trl/trainer/grpo_trainer.py`` ``_compute_loss``: its entropy bonus is the masked
  token mean over the batch, whatever ``loss_type`` (``(entropies * mask).sum() / mask.sum()``), i.e. the
  ``token_sum``-like weight for every loss type; with ``loss_type="dapo"`` and one group that is the
  ``batch_token_mean`` aggregation written here.
* Tie filtering: verl's DAPO recipe (``recipe/dapo/dapo_ray_trainer.py``, ``algorithm.filter_groups``) keeps
  the groups whose metric has nonzero std; TRL issue #5588 asks to mask them. A filtered group contributes
  nothing (policy, KL and entropy terms), the normaliser of the kept ones unchanged (masking); drop-and-refill
  only rescales the whole gradient by ``1/U``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from grpo_theory import InvalidInputError, NoStationaryPolicy, Objective, Question, stationary_points, stationary_policy
from grpo_theory.dynamics import grpo_steps
from grpo_theory.solvers import TreeProblem
from tests.reference_impl import brute_force_preference
from tests.test_family import _group_advantages, brute_force_logit_gradient
from tests.test_tree import tree_questions  # 2-4 prefix-free answers over a, b; deterministic or noisy rewards

torch.set_num_threads(1)


# ----------------------------------------------------------------------------- the token-level brute force

def brute_force_tree_gradient(tp: TreeProblem, x: np.ndarray, obj: Objective) -> np.ndarray:
    """d/dtheta of the exact expected token-level loss (one group per batch), by enumeration and autograd.

    Per sampled answer ``o_j`` (tokens ``t`` at nodes ``v_t``) the loss is
    ``sum_t [rho_t A_j - beta k3_t (* rho_t for the direct kind) + c H(pi(.|v_t))]`` times its weight
    (``1/(|o_j| G)``, ``1/G`` or ``1/T`` with ``T`` the group's tokens), summed over the group; a tied group
    is dropped with ``filter_ties``. The per-answer token sums are torch functions of the logits; the
    enumeration only accumulates their (numeric) coefficients, which is the same expectation term by term.
    """
    q, tree = tp.q, tp.tree
    log_cond0 = tp.log_cond(x)
    theta = torch.tensor(log_cond0, dtype=torch.float64, requires_grad=True)
    parts = [torch.log_softmax(theta[s], 0) for s in tree.node_slices]
    log_cond = torch.cat(parts)
    entropy = torch.stack([-(p.exp() * p).sum() for p in parts])        # exact next-token entropy per node
    old = torch.tensor(log_cond0, dtype=torch.float64)
    ref = torch.tensor(tp.log_ref_cond, dtype=torch.float64)
    support = list(tp.support)
    n = len(support)
    path_edges = [np.flatnonzero(tree.paths[i]) for i in range(n)]
    lengths = np.array([len(p) for p in path_edges])
    s_rho, s_reg = [], []                                               # per answer: sum_t rho_t, sum_t regulariser
    for i in range(n):
        e = torch.tensor(path_edges[i])
        lp, lo, lr = log_cond[e], old[e], ref[e]
        rho = torch.exp(lp - lo)
        k3 = torch.exp(lr - lp) - (lr - lp) - 1.0
        pen = k3 if obj.regime == "reverse" else rho * k3
        nodes = torch.tensor(tree.edge_node[path_edges[i]])
        s_rho.append(rho.sum())
        s_reg.append(-obj.beta * pen.sum() + obj.entropy_coef * entropy[nodes].sum())
    pi_old = np.exp(tree.paths @ log_cond0)
    levels, R = q.reward_levels, q.reward_probs
    G = obj.group_size
    kind = obj.aggregation
    alpha, gamma = np.zeros(n), np.zeros(n)                            # coefficients of s_rho[i], s_reg[i]
    for members in itertools.product(range(n), repeat=G):
        p_members = math.prod(pi_old[m] for m in members)
        tokens = lengths[list(members)].sum()
        for lv in itertools.product(range(levels.size), repeat=G):
            p_r = math.prod(R[support[m], lv[j]] for j, m in enumerate(members))
            r = levels[list(lv)]
            if p_r == 0 or (obj.filter_ties and np.all(r == r[0])):
                continue
            A = _group_advantages(r, obj)                               # as the framework writes them
            for j, m in enumerate(members):
                w = {"answer_mean": 1.0 / (lengths[m] * G), "token_sum": 1.0 / G,
                     "batch_token_mean": 1.0 / tokens}[kind]
                alpha[m] += p_members * p_r * w * A[j]
                gamma[m] += p_members * p_r * w
    total = sum(float(alpha[i]) * s_rho[i] + float(gamma[i]) * s_reg[i] for i in range(n))
    (grad,) = torch.autograd.grad(total, theta)
    return grad.numpy()


TOKEN_VARIANTS = [
    dict(filter_ties=True),
    dict(filter_ties=True, normalization="shift"),
    dict(filter_ties=True, advantage="rloo"),
    dict(entropy_coef=0.3),
    dict(entropy_coef=0.2, filter_ties=True),
    dict(entropy_coef=0.4, beta=0.0),
    dict(entropy_coef=0.5, beta=0.0, filter_ties=True),
    dict(entropy_coef=0.3, advantage="rloo", std_ddof=1),
]


@pytest.mark.parametrize("variant", TOKEN_VARIANTS, ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=tree_questions(), loss_type=st.sampled_from(["grpo", "dr_grpo", "dapo"]),
       penalty=st.sampled_from(["reverse", "direct"]), G=st.sampled_from([2, 3]), beta=st.floats(0.05, 2.0),
       seed=st.integers(0, 10_000))
def test_token_level_engine_matches_brute_force(variant, q, loss_type, penalty, G, beta, seed):
    """Token level, multi-token answers, at random tree logits: filtering and the entropy bonus."""
    kw = {"beta": beta, "penalty": penalty, **variant}
    if loss_type == "dapo" and (kw.get("filter_ties") or kw.get("advantage", "group") != "group"):
        loss_type = "grpo"              # batch-normalised with these is refused by the engine (tested below)
    obj = Objective(group_size=G, level="token", loss_type=loss_type, groups_per_batch=1, **kw)
    tp = TreeProblem(q, obj)
    x = np.random.default_rng(seed).normal(0.0, 1.0, tp.tree.n_free)
    np.testing.assert_allclose(tp.logit_gradient(x), brute_force_tree_gradient(tp, x, obj), rtol=1e-9, atol=1e-12)


def test_batch_normalised_filtering_is_refused_not_ignored():
    q = Question([0.3, 0.7], rewards=[1, 0], answers=["ab", "c"])
    with pytest.raises(InvalidInputError, match="filter_ties"):
        TreeProblem(q, Objective(beta=0.5, level="token", loss_type="dapo", groups_per_batch=2, filter_ties=True))


@pytest.mark.parametrize("variant", [dict(entropy_coef=0.3, beta=0.5), dict(entropy_coef=0.3, beta=0.0),
                                     dict(entropy_coef=0.2, beta=0.3, filter_ties=True)],
                         ids=["kl", "nokl", "filtered"])
@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo"])
def test_token_level_stationary_policy_zeroes_the_brute_force_gradient(variant, loss_type):
    """The tree solver's point is stationary for the brute-force loss, and differs from the sequence level."""
    q = Question([0.25, 0.25, 0.5], rewards=[1, 0, 0], answers=["AB$", "AC$", "D$"])
    obj = Objective(group_size=3, level="token", loss_type=loss_type, **variant)
    sol = stationary_policy(q, obj)
    assert sol.converged and sol.stable
    tp = TreeProblem(q, obj)
    x = tp.x_from_policy(sol.pi)
    brute = brute_force_tree_gradient(tp, x, obj)
    assert np.max(np.abs(brute)) < 1e-10
    seq = stationary_policy(q, Objective(group_size=3, **variant))
    assert np.max(np.abs(seq.pi - sol.pi)) > 1e-5          # per-position entropies differ from H(pi) (4.5e-4 at least)


def test_single_token_answers_match_the_sequence_level_entropy():
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0], answers=["a", "b", "c"])
    for kw in (dict(beta=0.5, entropy_coef=0.3), dict(beta=0.0, entropy_coef=0.3),
               dict(beta=0.4, entropy_coef=0.3, filter_ties=True)):
        seq = stationary_policy(q, Objective(group_size=4, **kw))
        tp = TreeProblem(q, Objective(group_size=4, level="token", loss_type="dr_grpo", **kw))
        assert tp.residual(tp.x_from_policy(seq.pi)) < 1e-9


# ----------------------------------------------------------------------------- beta = 0 with an entropy bonus

@pytest.mark.parametrize("variant", [dict(entropy_coef=0.3), dict(entropy_coef=0.5, filter_ties=True),
                                     dict(entropy_coef=0.2, advantage="rloo")], ids=["group", "filtered", "rloo"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pi=st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3), G=st.sampled_from([2, 3, 4]),
       rewards=st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=3, max_size=3))
def test_sequence_level_beta_zero_matches_brute_force(variant, pi, G, rewards):
    """Sequence level, beta = 0: the engine's expected logit gradient against test_family's brute force."""
    from tests.test_family import engine_logit_gradient

    pi = np.array(pi) / sum(pi)
    q = Question([0.2, 0.3, 0.5], rewards=rewards)
    obj = Objective(beta=0.0, group_size=G, **variant)
    np.testing.assert_allclose(engine_logit_gradient(q, obj, pi), brute_force_logit_gradient(q, obj, pi),
                               rtol=1e-9, atol=1e-11)


def _entropy_only_binary_logit(G: int, c: float) -> float:
    """beta = 0, binary question: the class logit z with P(a) - P(b) = c z, P from the reference brute force."""
    def f(z):
        x = 1.0 / (1.0 + math.exp(-z))
        P = brute_force_preference(np.array([0.0, 1.0]), np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([x, 1 - x]), G)
        return P[0] - P[1] - c * z
    return brentq(f, -60.0, 60.0, xtol=1e-14, rtol=1e-14)


@pytest.mark.parametrize("G", [2, 4, 8])
@pytest.mark.parametrize("c", [0.1, 1.0])
def test_entropy_alone_has_a_stationary_policy_independent_of_pi_ref(G, c):
    z = _entropy_only_binary_logit(G, c)
    for p in (0.05, 0.6):
        pts = stationary_points(Question([p, 1 - p], rewards=[1, 0]), Objective(beta=0.0, group_size=G, entropy_coef=c))
        assert len(pts.points) == 1 and pts.points[0].stable and not pts.points[0].boundary
        assert pts.points[0].class_logit == pytest.approx(z, rel=1e-9)


def test_no_penalty_and_no_entropy_has_no_stationary_policy():
    obj = Objective(beta=0.0, group_size=4)                    # valid: unregularised, for the finite-time flows
    assert not obj.regularised
    with pytest.raises(NoStationaryPolicy, match="no stationary policy"):
        stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), obj)
    tree = Question([0.5, 0.5], rewards=[1.0, 0.0], answers=[("A", "B"), ("C",)])
    with pytest.raises(NoStationaryPolicy, match="entropy_coef > 0"):
        stationary_points(tree, Objective(beta=0, entropy_coef=0.0, level="token"))


def test_entropy_alone_with_filtering_collapses_where_its_bonus_vanishes():
    """beta = 0, ties filtered, G = 4, c = 1: near a vertex almost every group ties, so the bonus vanishes
    (U -> 0) while P(a) - P(b) -> sqrt(G - 1): no interior point; the vertex is a limit point. Checked on
    the drift written from the brute force: positive on the whole scanned range."""
    q = Question([0.3, 0.7], rewards=[1, 0])
    obj = Objective(beta=0.0, group_size=4, entropy_coef=1.0, filter_ties=True)
    pts = stationary_points(q, obj)
    assert [p.boundary for p in pts.points] == [True] and pts.points[0].pi[0] == 1.0
    for x in np.linspace(0.01, 0.999, 60):
        g = brute_force_logit_gradient(q, obj, np.array([x, 1 - x]))
        assert g[0] > 0


# ----------------------------------------------------------------------------- grpo_steps

STEP_VARIANTS = [dict(beta=0.5, filter_ties=True), dict(beta=0.4, entropy_coef=0.3),
                 dict(beta=0.0, entropy_coef=0.5), dict(beta=0.3, entropy_coef=0.2, filter_ties=True, penalty="direct"),
                 dict(beta=0.5, advantage="rloo", filter_ties=True)]


@pytest.mark.parametrize("variant", STEP_VARIANTS, ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()))
def test_one_step_is_the_brute_force_expected_update(variant):
    """One on-policy step of size lr moves the logits by lr times the brute-force expected gradient."""
    q = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.1, 0.9], [0.5, 0.5], [1.0, 0.0]])
    obj = Objective(group_size=3, **variant)
    pi0 = np.array([0.25, 0.35, 0.4])
    lr = 0.3
    tr = grpo_steps(q, obj, pi0, lr=lr, n_batches=1, with_points=False)
    theta = np.log(pi0) + lr * brute_force_logit_gradient(q, obj, pi0)
    expected = np.exp(theta - theta.max())
    np.testing.assert_allclose(tr.pi[-1], expected / expected.sum(), rtol=1e-12, atol=1e-14)


# (at beta = 0.3 the direct-penalty variant leaves masses ~1e-3 that need ~40000 batches to settle: beta 1.5)
@pytest.mark.parametrize("variant", STEP_VARIANTS[:3] + [dict(beta=1.5, entropy_coef=0.5, filter_ties=True,
                                                              penalty="direct")],
                         ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()))
@pytest.mark.parametrize("inner_updates", [1, 4])
def test_steps_settle_on_the_stationary_policy(variant, inner_updates):
    """The fixed point of the discrete dynamics (with clipping and several updates per batch) is the solvers'
    stationary policy: off-policy knobs change the path, not the end."""
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    obj = Objective(group_size=4, **variant)
    tr = grpo_steps(q, obj, q.pi_ref, lr=0.5, n_batches=3000, inner_updates=inner_updates, every=3000,
                    with_points=False)
    assert tr.status == "ok"
    np.testing.assert_allclose(tr.pi[-1], stationary_policy(q, obj).pi, atol=1e-8)


@pytest.mark.parametrize("variant", [dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(filter_ties=True),
                                     dict(entropy_coef=0.2), dict(entropy_coef=0.3, beta=0.0)],
                         ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()))
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_three_class_points_solve_the_family_condition(variant, penalty):
    """stationary_points on three classes: every point found is stationary for the family's own gradient (the
    brute force's), and the flow's end is among them (the certified search, built on the note's equations,
    is not used for the family: it returned Eq. 11's point for every variant)."""
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    obj = Objective(group_size=3, penalty=penalty, **{"beta": 0.3, **variant})
    pts = stationary_points(q, obj)
    assert pts.points
    for p in pts.points:
        if p.boundary:
            # a vertex reached only in the limit (REINFORCE++'s whitened advantage outgrows the direct penalty):
            # near it, every absent answer's logit falls behind the top answer's (brute force, two distances)
            top = int(np.argmax(p.pi))
            assert p.pi[top] == 1.0 and p.stable
            for eps in (1e-3, 1e-6):
                near = np.full(q.n_outputs, eps)
                near[top] = 1.0 - eps * (q.n_outputs - 1)
                g = brute_force_logit_gradient(q, obj, near)
                assert np.all(np.delete(g - g[top], top) < 0), (eps, g)
            continue
        g = brute_force_logit_gradient(q, obj, p.pi)
        assert np.max(np.abs(g)) < 1e-9, (p.pi, g)
    ref = stationary_policy(q, obj).pi
    assert min(np.max(np.abs(p.pi - ref)) for p in pts.points) < 1e-9


def test_sampled_filtered_steps_average_to_the_expected_update():
    """Monte Carlo groups with filtering: the mean one-step move over many seeds matches the exact step."""
    q = Question([0.3, 0.7], rewards=[1, 0])
    obj = Objective(beta=0.5, group_size=2, filter_ties=True, entropy_coef=0.2)
    pi0 = np.array([0.3, 0.7])
    exact = grpo_steps(q, obj, pi0, lr=0.1, n_batches=1, with_points=False).pi[-1]
    moves = [grpo_steps(q, obj, pi0, lr=0.1, n_batches=1, n_groups=200, seed=s, with_points=False).pi[-1]
             for s in range(100)]
    mean, se = np.mean(moves, axis=0), np.std(moves, axis=0, ddof=1) / 10
    assert np.all(np.abs(mean - exact) < 4 * se + 1e-6)


# ----------------------------------------------------------------------------- readers: beta = 0 with a bonus

def test_readers_take_an_entropy_bonus_without_kl():
    import warnings

    from grpo_theory import TheoryWarning
    from grpo_theory.integrations.openrlhf import read_openrlhf_config
    from grpo_theory.integrations.trl import read_trl_config
    from grpo_theory.integrations.verl import read_verl_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TheoryWarning)
        t = read_trl_config({"beta": 0.0, "entropy_coef": 0.01, "max_completion_length": 1}, trl_version="1.16.0")
        g = read_trl_config({"beta": 0.04, "entropy_coef": 0.01, "loss_type": "grpo"}, trl_version="1.16.0")
        v = read_verl_config({"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": True,
                                            "kl_ctrl": {"kl_coef": 0}},
                              "actor_rollout_ref": {"rollout": {"n": 4}, "actor": {"entropy_coeff": 0.001}}})
        o = read_openrlhf_config(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4",
                                  "--entropy_loss_coef", "0.002", "--init_kl_coef", "0"])
    assert (t.objective.beta, t.objective.entropy_coef) == (0.0, 0.01)
    assert any("only regulariser" in w for w in t.warnings)
    assert any("averages the entropy over all the batch's tokens" in w for w in g.warnings)
    assert (v.objective.beta, v.objective.entropy_coef, v.objective.kl_placement) == (0.0, 0.001, "loss")
    assert (o.objective.beta, o.objective.entropy_coef) == (0.0, 0.002)
    m = read_trl_config({"beta": 0.0}, trl_version="1.16.0")       # no bonus: unregularised, with a warning
    assert (m.objective.beta, m.objective.entropy_coef, m.objective.regularised) == (0.0, 0.0, False)
    assert not any("only regulariser" in w for w in m.warnings)
