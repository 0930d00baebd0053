"""KL estimators, placements and clamps (grpo_theory.kl), checked against a brute-force expected gradient.

The brute force writes each framework's KL term from its definition, in torch (the clamps as
``torch.clamp``, verl's ``k3+`` as its straight-through sum, OpenRLHF's reward-to-go), enumerates
every group of answers and every reward draw, and differentiates the exact expected loss with
autograd on tabular logits at ``pi_old = pi``. Nothing of the library's P_G engine or of
``grpo_theory.kl`` enters it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from reference_impl import brute_force_preference, group_advantage_first

from grpo_theory import InvalidInputError, Objective, Question, stationary_points, stationary_policy
from grpo_theory.kl import coefficient, discontinuities, estimator_value
from grpo_theory.preference import reward_preference
from grpo_theory.solvers import ClassProblem, TreeProblem, output_gradient

torch = pytest.importorskip("torch")

ESTIMATORS = ["k1", "k2", "k3", "k3_ratio", "k3_plus", "abs"]


def torch_kl(lp, lo, lref, obj):
    """The trainer's per-token KL term (to be multiplied by -beta), written as the frameworks write it."""
    x = lref - lp                                            # verl: kl = ref_logprob - logprob
    if obj.kl_log_ratio_clamp is not None:
        x = torch.clamp(x, -obj.kl_log_ratio_clamp, obj.kl_log_ratio_clamp)
    base = {"k3_ratio": "k3", "k3_plus": "k3"}.get(obj.estimator, obj.estimator)
    value = {"k1": -x, "k2": 0.5 * x * x, "k3": torch.exp(x) - x - 1.0, "abs": x.abs()}[base]
    if obj.kl_value_clamp is not None:
        value = torch.clamp(value, -obj.kl_value_clamp, obj.kl_value_clamp)
    if obj.estimator == "k3_ratio":
        return torch.exp(lp - lo) * value
    if obj.estimator == "k3_plus":
        k2 = 0.5 * (lp - lref) ** 2
        return k2 - k2.detach() + value.detach()
    return value


def brute_force_gradient(tp: TreeProblem, x: np.ndarray, obj: Objective) -> np.ndarray:
    """d/dtheta (per edge) of the exact expected loss of one group (answer_mean or token_sum).

    Every group of ``G`` answers and every reward tuple they can draw is enumerated, with each member's advantage
    from its group's rewards (Eq. 2); the loss of a group is the mean over its members of each member's token
    terms. A member's terms are affine in its advantage ``a``: ``a agg(rho) - beta agg(kl)`` (KL in the loss),
    ``a agg(rho) - beta agg(rho togo)`` (in the advantage), ``a agg(rho)`` (in the reward), ``agg`` the answer's mean
    or sum over its tokens. So the expected loss is, exactly, the sum over answers ``m`` of ``A_m agg(rho_m) + B_m
    c_m``, with ``A_m`` the expectation over groups of the sum of ``m``'s members' advantages over ``G`` and ``B_m``
    that of their number over ``G``, both enumerated in floats, and ``c_m`` the answer's KL part; autograd
    differentiates that sum (one small graph per answer instead of one per group and member)."""
    q, tree = tp.q, tp.tree
    log_cond0 = tp.log_cond(x)
    theta = torch.tensor(log_cond0, dtype=torch.float64, requires_grad=True)
    log_cond = torch.cat([torch.log_softmax(theta[s], 0) for s in tree.node_slices])
    # pi_old = pi as the trainers write it (TRL: old_per_token_logps = per_token_logps.detach()): the ratio
    # pi/pi_old is then exactly 1 in value, not exp(log_softmax(theta) - log_cond0) = 1 +- 1e-16. That matters
    # for k3_ratio in the reward: a value clamp makes two answers' shaped rewards tie exactly, and with scale
    # normalisation and eps = 0 the advantage jumps at a tie (0 there, +-1 a rounding error away).
    old = log_cond.detach()
    ref = torch.tensor(tp.log_ref_cond, dtype=torch.float64)
    support = list(tp.support)
    edges = [torch.tensor(np.flatnonzero(tree.paths[i])) for i in range(len(support))]
    pi_old = np.exp(tree.paths @ log_cond0)
    levels, R = q.reward_levels, q.reward_probs
    G = obj.group_size
    kl_terms = [torch_kl(log_cond[e], old[e], ref[e], obj) for e in edges]
    shaped = [float(kt.detach().sum()) for kt in kl_terms]      # beta * this leaves the reward (placement "reward")
    adv_weight, count_weight = np.zeros(len(support)), np.zeros(len(support))     # A_m and B_m of the docstring
    for members in itertools.product(range(len(support)), repeat=G):
        p_m = math.prod(pi_old[m] for m in members)
        for lv in itertools.product(range(levels.size), repeat=G):
            p_r = math.prod(R[support[m], lv[j]] for j, m in enumerate(members))
            if p_m * p_r == 0:
                continue
            r = levels[list(lv)].astype(float)
            if obj.kl_placement == "reward":
                r = r - obj.beta * np.array([shaped[m] for m in members])
            for j, m in enumerate(members):
                order = [j] + [i for i in range(G) if i != j]
                adv = group_advantage_first(r[order], obj.normalization, obj.std_ddof, obj.std_eps)
                adv_weight[m] += p_m * p_r * adv / G
                count_weight[m] += p_m * p_r / G
    agg = torch.mean if obj.aggregation == "answer_mean" else torch.sum
    total = torch.zeros((), dtype=torch.float64)
    for m, e in enumerate(edges):
        rho = torch.exp(log_cond[e] - old[e])
        total = total + adv_weight[m] * agg(rho)
        if obj.kl_placement == "loss":
            total = total - obj.beta * count_weight[m] * agg(kl_terms[m])
        elif obj.kl_placement == "advantage":     # OpenRLHF: reward-to-go of the per-token values
            togo = torch.flip(torch.cumsum(torch.flip(kl_terms[m].detach(), [0]), 0), [0])
            total = total - obj.beta * count_weight[m] * agg(rho * togo)
    (grad,) = torch.autograd.grad(total, theta)
    return grad.numpy()


def _objective(est, placement, L, V, G, norm, ddof, eps, level="token", loss_type="grpo"):
    return Objective(beta=0.6, group_size=G, normalization=norm, std_ddof=ddof, std_eps=eps, level=level,
                     loss_type=loss_type,
                     kl_estimator=est, kl_placement=placement, kl_log_ratio_clamp=L, kl_value_clamp=V)


@st.composite
def questions(draw, tree: bool):
    k = draw(st.integers(2, 3))
    if tree:
        words = draw(st.lists(st.text(alphabet="ab", min_size=0, max_size=2), min_size=k, max_size=k, unique=True))
        answers = [w + "$" for w in words]
    else:
        answers = [(i,) for i in range(k)]
    pi_ref = np.array(draw(st.lists(st.floats(0.1, 1.0), min_size=k, max_size=k)))
    pi_ref /= pi_ref.sum()
    if draw(st.booleans()):
        probs = np.array([draw(st.sampled_from([[1.0, 0.0], [0.0, 1.0], [0.3, 0.7]])) for _ in range(k)])
        return Question(pi_ref, reward_levels=[0.0, 1.0], reward_probs=probs, answers=answers)
    rewards = [float(draw(st.integers(0, 2))) for _ in range(k)]
    if len(set(rewards)) == 1:
        rewards[0] += 1.0
    return Question(pi_ref, rewards=rewards, answers=answers)


OPTIONS = dict(est=st.sampled_from(ESTIMATORS), placement=st.sampled_from(["loss", "advantage", "reward"]),
               L=st.sampled_from([None, 0.7]), V=st.sampled_from([None, 0.25]), G=st.sampled_from([2, 3]),
               norm=st.sampled_from(["scale", "scale", "shift"]), ddof=st.sampled_from([0, 1]),
               eps=st.sampled_from([0.0, 0.1]), seed=st.integers(0, 10_000))


# Issue 21's draw: "a$" and "b$" both have their one non-trivial token's k3 clamped at V (and equal rewards), so
# their shaped rewards tie exactly and a group of the two has advantage 0 (scale, eps = 0). The brute force once
# computed the on-policy ratio pi/pi_old as exp(log_softmax(theta) - log pi_old) = 1 - 1.1e-16, which broke the tie.
TIED_BY_THE_VALUE_CLAMP = Question([0.4, 0.2, 0.4], rewards=[1.0, 0.0, 0.0], answers=["$", "a$", "b$"])


@settings(max_examples=60, deadline=None)
@given(q=questions(tree=True), loss_type=st.sampled_from(["grpo", "dr_grpo"]), **OPTIONS)
@example(q=TIED_BY_THE_VALUE_CLAMP, loss_type="grpo", est="k3_ratio", placement="reward", L=None, V=0.25, G=2,
         norm="scale", ddof=0, eps=0.0, seed=5074)
@example(q=TIED_BY_THE_VALUE_CLAMP, loss_type="dr_grpo", est="k3_ratio", placement="reward", L=None, V=0.25, G=3,
         norm="scale", ddof=1, eps=0.0, seed=5074)
def test_token_level_gradient_matches_brute_force_autograd(q, loss_type, est, placement, L, V, G, norm, ddof,
                                                           eps, seed):
    """Every estimator, placement and clamp, per token, at random tree logits (clamps active at lr ~ N(0, 1))."""
    obj = _objective(est, placement, L, V, G, norm, ddof, eps, loss_type=loss_type)
    tp = TreeProblem(q, obj)
    x = np.random.default_rng(seed).normal(0.0, 1.0, tp.tree.n_free)
    np.testing.assert_allclose(tp.logit_gradient(x), brute_force_gradient(tp, x, obj), rtol=1e-8, atol=1e-11)


@settings(max_examples=60, deadline=None)
@given(q=questions(tree=False), **OPTIONS)
@example(q=Question([0.4, 0.2, 0.4], rewards=[1.0, 0.0, 0.0]), est="k3_ratio", placement="reward", L=None, V=0.25,
         G=2, norm="scale", ddof=0, eps=0.0, seed=9)
def test_sequence_level_gradient_matches_brute_force_autograd(q, est, placement, L, V, G, norm, ddof, eps, seed):
    """The output-level g of grpo_theory.stationary (and its class form) against the same brute force."""
    obj = _objective(est, placement, L, V, G, norm, ddof, eps, level="sequence")
    tp = TreeProblem(q, obj)                                # single tokens: edges are the outputs
    logits = np.random.default_rng(seed).normal(0.0, 1.0, q.n_outputs)
    pi = np.exp(logits - logits.max())
    pi /= pi.sum()
    x = tp.x_from_policy(pi)
    brute = brute_force_gradient(tp, x, obj)
    g = output_gradient(q, obj, pi)
    np.testing.assert_allclose(pi * (g - pi @ g), brute, rtol=1e-8, atol=1e-11)
    cp = ClassProblem(q, obj)
    if cp.n_classes == q.n_outputs:                          # classes are the outputs (in some order)
        flow = cp.flow(np.log(np.array([pi[cp.class_of == c].sum() for c in range(cp.n_classes)])))
        np.testing.assert_allclose(flow[cp.class_of], brute, rtol=1e-7, atol=1e-11)


# ----------------------------------------------------------------------------- what each one amounts to

@pytest.mark.parametrize("est,placement,expected", [
    ("k3", "loss", "reverse"), ("k2", "loss", "direct"), ("k3_ratio", "loss", "direct"),
    ("k3_plus", "loss", "direct"), ("k1", "advantage", "direct"), ("k1", "loss", "none"),
    ("k1", "reward", "reward"), ("k3", "advantage", "other"), ("abs", "loss", "other")])
def test_effective_penalty_names(est, placement, expected):
    assert Objective(beta=0.5, group_size=4, kl_estimator=est, kl_placement=placement).regime == expected


@pytest.mark.parametrize("est,placement", [("k2", "loss"), ("k3_ratio", "loss"), ("k3_plus", "loss"),
                                           ("k1", "advantage")])
@pytest.mark.parametrize("G", [2, 8, math.inf])
def test_estimators_with_the_direct_gradient_give_the_direct_points(est, placement, G):
    q = Question([0.3, 0.5, 0.2], rewards=[1.0, 0.0, 0.5])
    direct = stationary_policy(q, Objective(beta=0.4, group_size=G, penalty="direct"))
    other = stationary_policy(q, Objective(beta=0.4, group_size=G, kl_estimator=est, kl_placement=placement))
    np.testing.assert_allclose(other.pi, direct.pi, atol=1e-9)


def test_k3_plus_keeps_the_direct_gradient_under_verl_clamps():
    q = Question([0.6, 0.4], rewards=[1.0, 0.0])
    a = stationary_points(q, Objective(beta=0.05, group_size=5, kl_estimator="k3_plus", kl_log_ratio_clamp=20,
                                       kl_value_clamp=10))
    b = stationary_points(q, Objective(beta=0.05, group_size=5, penalty="direct"))
    assert len(a) == len(b) == 1
    np.testing.assert_allclose(a[0].pi, b[0].pi, atol=1e-10)


def test_k1_as_a_loss_regularises_nothing():
    """Its expected gradient is 0: the flow runs to the best answer whatever beta is."""
    q = Question([0.2, 0.8], rewards=[1.0, 0.0])
    for beta in (0.01, 1.0, 100.0):
        pt = stationary_policy(q, Objective(beta=beta, group_size=8, kl_estimator="k1"))
        assert pt.boundary and pt.pi[0] == 1.0
    assert np.all(coefficient(Objective(beta=1.0, kl_estimator="k1"), np.linspace(-3, 3, 7)) == 1.0)


@pytest.mark.parametrize("G", [2, 3, 8, math.inf])
@pytest.mark.parametrize("norm,ddof,eps", [("scale", 0, 0.0), ("scale", 1, 1e-4), ("shift", 0, 0.0)])
def test_k1_in_the_reward_gives_log_pooling(G, norm, ddof, eps):
    """Shaped rewards tie on the support exactly at pi ∝ pi_ref e^{r/beta}, for every G and normalisation."""
    rewards = np.array([1.0, 0.0, 0.4])
    pi_ref = np.array([0.2, 0.5, 0.3])
    beta = 0.7
    obj = Objective(beta=beta, group_size=G, normalization=norm, std_ddof=ddof, std_eps=eps, kl_estimator="k1",
                    kl_placement="reward")
    q = Question(pi_ref, rewards=rewards)
    lp = pi_ref * np.exp(rewards / beta)
    lp /= lp.sum()
    pts = stationary_points(q, obj)
    stable = [p for p in pts if p.stable]
    assert len(stable) == 1
    np.testing.assert_allclose(stable[0].pi, lp, atol=1e-7)


def test_k1_in_the_reward_with_std_and_no_epsilon_is_a_discontinuous_point():
    q = Question([0.3, 0.7], rewards=[1.0, 0.0])
    sharp = stationary_points(q, Objective(beta=0.5, group_size=8, kl_estimator="k1", kl_placement="reward"))
    smooth = stationary_points(q, Objective(beta=0.5, group_size=8, std_eps=1e-2, kl_estimator="k1",
                                            kl_placement="reward"))
    assert [p.discontinuous for p in sharp] == [True] and sharp[0].stable
    assert [p.discontinuous for p in smooth] == [False] and smooth[0].stable
    x = 0.3 * math.e ** 2 / (0.3 * math.e ** 2 + 0.7)
    assert abs(sharp[0].pi[0] - x) < 1e-9 and abs(smooth[0].pi[0] - x) < 1e-7


# ----------------------------------------------------------------------------- verl's clamp

def _verl(beta, G=5, p=0.5):
    q = Question([1 - p, p], rewards=[1.0, 0.0])
    return q, Objective(beta=beta, group_size=G, std_ddof=1, std_eps=1e-6, kl_estimator="k3", kl_log_ratio_clamp=20.0,
                        kl_value_clamp=10.0)


def test_value_clamp_edges_are_where_k3_reaches_ten():
    obj = _verl(0.1)[1]
    lo, hi = discontinuities(obj)
    for e in (lo, hi):
        assert abs(math.exp(-e) + e - 1 - 10.0) < 1e-9
    assert abs(math.exp(-lo) - 13.611) < 1e-3                # rho - log rho = 11: pi < pi_ref / 13.6
    v = estimator_value(obj, np.array([-5.0, -2.0, 0.0, 12.0, 30.0]))
    assert v.max() <= 10.0 and v[2] == 0.0


def test_the_clamp_collapses_a_suppressed_answer_below_a_critical_beta():
    """verl's low_var_kl: without the clamp the stationary point keeps pi(b) > 0; with it, below the
    critical beta the unrewarded answer collapses to 0, and just above it the two coexist."""
    q, low = _verl(0.001)
    unclamped = stationary_policy(q, dataclasses.replace(low, kl_log_ratio_clamp=None, kl_value_clamp=None))
    assert 0 < unclamped.pi[1] < 0.01 and unclamped.converged
    pt = stationary_policy(q, low)
    assert pt.boundary and pt.pi[1] == 0.0
    # the critical beta: the unclamped root sits exactly at the clamp edge pi(b) = pi_ref(b) e^{lo}
    from grpo_theory.kl import discontinuities as edges
    lo = edges(low)[0]
    cp = ClassProblem(q, low)
    z_edge = math.log((1 - 0.5 * math.exp(lo)) / (0.5 * math.exp(lo)))
    lpi = np.array([-math.log1p(math.exp(-z_edge)), -math.log1p(math.exp(z_edge))])
    P = cp.class_preference(lpi)
    c = 1.0 - 0.5 / np.exp(lpi)
    beta_c = float((P[0] - P[1]) / (c[0] - c[1]))
    from grpo_theory import clamp_critical_beta

    assert math.isclose(clamp_critical_beta(q, low), beta_c, rel_tol=1e-9)
    above = stationary_points(q, dataclasses.replace(low, beta=beta_c * 1.05))
    below = stationary_points(q, dataclasses.replace(low, beta=beta_c * 0.95))
    assert any(p.stable and not p.boundary and not p.discontinuous for p in above)
    assert any(p.discontinuous and p.stable is False for p in above)          # the separatrix at the edge
    assert not any(p.stable and not p.boundary for p in below)
    assert stationary_policy(q, dataclasses.replace(low, beta=beta_c * 0.95)).boundary
    assert not stationary_policy(q, dataclasses.replace(low, beta=beta_c * 1.05)).boundary


def test_bad_kl_input_names_the_value():
    with pytest.raises(InvalidInputError, match="kl_estimator"):
        Objective(beta=0.5, kl_estimator="k4")
    with pytest.raises(InvalidInputError, match="kl_placement"):
        Objective(beta=0.5, kl_estimator="k1", kl_placement="before")
    with pytest.raises(InvalidInputError, match="conflicts"):
        Objective(beta=0.5, penalty="reverse", kl_estimator="k2")
    with pytest.raises(InvalidInputError, match="kl_value_clamp"):
        Objective(beta=0.5, kl_estimator="k3", kl_value_clamp=-1)
    with pytest.raises(InvalidInputError, match="shorthand"):
        Objective(beta=0.5, penalty="direct", kl_placement="reward")
    with pytest.raises(InvalidInputError, match="reward law"):
        stationary_policy(Question([0.5, 0.5], preference=[[0.5, 0.8], [0.2, 0.5]]),
                          Objective(beta=0.5, group_size=2, kl_estimator="k1", kl_placement="reward"))
    reverse = dataclasses.replace(Objective(beta=0.5, penalty="direct"), penalty=None, kl_estimator="k3")
    assert reverse.regime == "reverse"
    assert dataclasses.replace(Objective(beta=0.5, kl_estimator="k2"), beta=1.0).regime == "direct"
    assert dataclasses.replace(Objective(beta=0.5), penalty="direct").estimator == "k3_ratio"
    with pytest.raises(InvalidInputError, match="conflicts"):      # the shorthand is an input: it must agree
        dataclasses.replace(Objective(beta=0.5, penalty="direct"), kl_estimator="k3")


@pytest.mark.parametrize("est", ESTIMATORS)
@pytest.mark.parametrize("placement", ["loss", "advantage", "reward"])
@pytest.mark.parametrize("clamps", [(None, None), (0.7, None), (None, 0.25), (0.7, 0.25)])
def test_every_combination_matches_brute_force_on_a_fixed_tree(est, placement, clamps):
    """Every estimator x placement x clamp, deterministic coverage beside the random draws above:
    a tree with answers of 1-3 tokens, noisy rewards, token level (answer mean) and sequence level."""
    q = Question([0.2, 0.3, 0.1, 0.4], reward_levels=[0.0, 1.0],
                 reward_probs=[[0.1, 0.9], [0.6, 0.4], [1.0, 0.0], [0.3, 0.7]],
                 answers=["a$", "ba$", "bb$", "$"])
    for level, loss_type in (("token", "grpo"),):
        obj = _objective(est, placement, *clamps, G=3, norm="scale", ddof=1, eps=0.0, level=level,
                         loss_type=loss_type)
        tp = TreeProblem(q, obj)
        x = np.random.default_rng(7).normal(0.0, 1.2, tp.tree.n_free)
        np.testing.assert_allclose(tp.logit_gradient(x), brute_force_gradient(tp, x, obj), rtol=1e-8, atol=1e-11)
    single = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.1, 0.9], [0.6, 0.4], [1.0, 0.0]])
    obj = _objective(est, placement, *clamps, G=3, norm="scale", ddof=0, eps=0.0, level="sequence")
    tp = TreeProblem(single, obj)
    pi = np.array([0.05, 0.15, 0.8])                     # |lr| up to 1.4: both clamps active somewhere
    g = output_gradient(single, obj, pi)
    np.testing.assert_allclose(pi * (g - pi @ g), brute_force_gradient(tp, tp.x_from_policy(pi), obj),
                               rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("est", ESTIMATORS)
@pytest.mark.parametrize("clamps", [(None, None), (0.7, 0.25)])
def test_the_trainers_kl_term_is_the_frameworks(est, clamps):
    """grpo_theory.training.loss.kl_term (what our trainer optimises) against the definitions above,
    values and gradients, at log-ratios on both sides of every clamp."""
    from grpo_theory.training.loss import kl_term

    obj = _objective(est, "loss", *clamps, G=2, norm="scale", ddof=0, eps=0.0)
    lp = torch.linspace(-3.0, 1.0, 41, dtype=torch.float64).requires_grad_(True)
    ref = torch.full_like(lp, -1.0)
    old = lp.detach() + 0.1
    ours = kl_term(lp, old, ref, est, *clamps)
    theirs = torch_kl(lp, old, ref, obj)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14)
    (g1,) = torch.autograd.grad(ours.sum(), lp)
    (g2,) = torch.autograd.grad(theirs.sum(), lp)
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw,n_batches", [
    (dict(kl_estimator="k3", kl_log_ratio_clamp=20.0, kl_value_clamp=10.0), 3000),
    (dict(kl_estimator="k1", kl_placement="advantage", kl_value_clamp=10.0), 12000),
    (dict(kl_estimator="k1", kl_placement="reward", std_eps=1e-2), 3000),
    (dict(kl_estimator="k2"), 12000)])
def test_tabular_grpo_steps_end_at_the_predicted_point(kw, n_batches):
    """dynamics.grpo_steps (SGD on tabular logits, exact expectations) for each placement ends where
    stationary_policy says, including verl's clamp just above its critical beta.

    Each case runs the steps it needs to sit well inside the tolerance (all ran 20,000 before): measured
    distance to the prediction 2.4e-12 (k3) and 6e-17 (k1 in the reward) after 2,000 steps; k1 as an advantage
    and k2 converge linearly: 2.3e-4 after 5,000 steps, 8.6e-7 after 12,000, 1.5e-9 after 20,000."""
    from grpo_theory import clamp_critical_beta
    from grpo_theory.dynamics import grpo_steps

    q = Question([0.3, 0.7], rewards=[1.0, 0.0])
    obj = Objective(beta=0.5, group_size=8, std_ddof=1, **{"std_eps": 1e-4, **kw})
    if "kl_value_clamp" in kw and kw.get("kl_placement", "loss") == "loss":
        obj = dataclasses.replace(obj, beta=1.25 * clamp_critical_beta(q, obj))
    pred = stationary_policy(q, obj)
    traj = grpo_steps(q, obj, q.pi_ref, lr=0.05, n_batches=n_batches, with_points=False)  # lr 0.2: a 2-cycle (eps 1e-2)
    assert traj.status == "ok" and not pred.boundary
    np.testing.assert_allclose(traj.final, pred.pi, atol=1e-5)


def test_the_flow_honours_the_kl_options():
    """dynamics.flow: k2 in the loss follows the direct penalty's trajectory; k1 in the reward ends at
    log pooling; k1 as a loss runs to the best answer."""
    from grpo_theory import dynamics

    q = Question([0.3, 0.5, 0.2], rewards=[1.0, 0.0, 0.5])
    t = np.linspace(0, 40, 5)
    a = dynamics.flow(q, Objective(beta=0.5, group_size=4, penalty="direct"), q.pi_ref, t, with_points=False)
    b = dynamics.flow(q, Objective(beta=0.5, group_size=4, kl_estimator="k2"), q.pi_ref, t, with_points=False)
    np.testing.assert_allclose(a.pi, b.pi, atol=1e-7)
    r = dynamics.flow(q, Objective(beta=0.5, group_size=4, std_eps=0.05, kl_estimator="k1", kl_placement="reward"),
                      q.pi_ref,
                      np.linspace(0, 400, 3), with_points=False)
    lp = q.pi_ref * np.exp(q.expected_reward / 0.5)
    np.testing.assert_allclose(r.final, lp / lp.sum(), atol=1e-5)
    n = dynamics.flow(q, Objective(beta=0.5, group_size=4, kl_estimator="k1"), q.pi_ref, np.linspace(0, 400, 3),
                      with_points=False)
    assert n.final[0] > 0.99


# ----------------------------------------------------------------------------- KL in the reward: far-apart levels

def test_far_apart_shaped_levels_keep_their_gaps():
    """A collapsing answer's k3 in the reward puts its shaped reward ~1e30 below the others; P_G must still
    tell the others apart. The levels were once shifted onto [0, 1] ((v - v_min) / span), which rounded -50.4
    and -0.088 to the same level: a false tie, advantage 0 in the groups of the two."""
    q = Question([0.1, 0.5, 0.4], rewards=[-4.9e30, -50.4, -0.088])
    pi = np.array([1e-3, 0.6, 0.399])
    for G, norm, ddof in [(2, "scale", 0), (3, "scale", 1), (5, "scale", 0), (3, "shift", 0), (math.inf, "scale", 0)]:
        obj = Objective(beta=0.5, group_size=G, normalization=norm, std_ddof=ddof)
        if G == math.inf:                                   # (E[r|o] - E r) / sigma, from the definition
            r = q.expected_reward
            mean = pi @ r
            expected = (r - mean) / math.sqrt(pi @ (r - mean) ** 2)
        else:
            expected = brute_force_preference(q.reward_levels, q.reward_probs, pi, G, norm, ddof, 0.0)
        np.testing.assert_allclose(reward_preference(q, obj, pi), expected, rtol=1e-9, atol=1e-12)


# A point stationary_points once reported for this objective (pi ~ (0.9955, 2.4e-32, 0.0045)): a$ has collapsed,
# its shaped reward is -4.9e30, and the false tie of $ and b$ (above) zeroed the flow between them.
FAR_APART = (Question([0.4, 0.2, 0.4], rewards=[0.1, 0.0, 0.0], answers=["$", "a$", "b$"]),
             dict(est="k3_ratio", placement="reward", L=None, V=None, G=2, norm="scale", ddof=0, eps=0.0))


def test_token_gradient_where_one_shaped_reward_runs_off():
    q, kw = FAR_APART
    obj = _objective(**kw)
    tp = TreeProblem(q, obj)
    x = np.array([5.406334, -67.378979])
    brute = brute_force_gradient(tp, x, obj)
    assert abs(brute[0]) > 1e-3                              # $ beats b$ in every group of the two: not stationary
    np.testing.assert_allclose(tp.logit_gradient(x), brute, rtol=1e-8, atol=1e-11)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["far_apart", "issue_21"])
def test_stationary_points_of_kl_in_the_reward_zero_the_brute_force_gradient(case):
    """Every interior point stationary_points reports (token level, k3_ratio in the reward, eps = 0) has a zero
    brute-force gradient (about 2 s of CPU each)."""
    if case == "far_apart":
        q, kw = FAR_APART
    else:
        q, kw = TIED_BY_THE_VALUE_CLAMP, dict(est="k3_ratio", placement="reward", L=None, V=0.25, G=2, norm="scale",
                                               ddof=0, eps=0.0)
    obj = _objective(**kw)
    tp = TreeProblem(q, obj)
    interior = [p for p in stationary_points(q, obj) if not p.boundary and np.all(p.pi > 0)]
    assert interior
    for p in interior:
        brute = brute_force_gradient(tp, tp.x_from_policy(p.pi), obj)
        assert np.abs(brute).max() < 1e-9, (p.pi, brute)


@pytest.mark.parametrize("estimator", ["k3", "k3_plus", "k3_ratio"])
def test_stationarity_residual_is_taken_over_the_support(estimator):
    # In the advantage, a log-ratio estimator's gradient overflows to -inf at an answer of mass 1e-320; the
    # residual averaged g over every answer, so 0 * inf and inf - inf made it NaN with a RuntimeWarning
    from grpo_theory.solvers.gradient import output_gradient, stationarity_residual

    q = Question([0.5, 0.3, 0.2], rewards=[1.0, 0.5, 0.0])
    obj = Objective(beta=0.5, group_size=8, kl_estimator=estimator, kl_placement="advantage")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        on_face = stationarity_residual(q, obj, [0.6, 0.4, 0.0])
        assert stationarity_residual(q, obj, [0.6, 0.4, 1e-320]) == math.inf   # cannot be evaluated: not small
    g = output_gradient(q, obj, np.array([0.6, 0.4, 0.0]))[:2]
    pi = np.array([0.6, 0.4])
    assert on_face == pytest.approx(np.max(pi * np.abs(g - pi @ g)) / 0.5, rel=1e-15)
    assert on_face > 0.5                                                   # pi_ref's proportions: far from stationary


def test_estimator_value_at_non_finite_log_ratios():
    """pi = 0 (lr = -inf): k3 = e^{-lr} + lr - 1 -> +inf (not inf - inf = NaN), clamped by a value clamp; lr = +inf:
    +inf; k1 keeps lr itself; a NaN log-ratio is refused by name. The solvers' flow_value keeps NaN in, NaN out."""
    from grpo_theory import Objective
    from grpo_theory.errors import InvalidInputError
    from grpo_theory.kl import flow_value

    k3 = Objective(beta=1.0, kl_estimator="k3")
    assert estimator_value(k3, np.array([-np.inf, np.inf])).tolist() == [np.inf, np.inf]
    clamped = Objective(beta=1.0, kl_estimator="k3", kl_value_clamp=10.0)
    assert estimator_value(clamped, -np.inf) == 10.0
    assert estimator_value(Objective(beta=1.0, kl_estimator="k1"), -np.inf) == -np.inf
    with pytest.raises(InvalidInputError, match="nan"):
        estimator_value(k3, [0.0, np.nan])
    assert np.isnan(flow_value(k3, np.nan))
