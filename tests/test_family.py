"""The GRPO family (issue 22) against an independent brute force.

The brute force enumerates every ordered group ``o_1..o_G`` and every reward outcome, writes each
variant's loss as the frameworks do, and takes the expected gradient in the softmax logits with torch
autograd; the engine's is ``pi (g - E_pi g)`` with ``g`` of :func:`grpo_theory.stationary.output_gradient`.
Sources read (to learn, not copied):

* TRL 1.16.0 (the installed version), ``trl/trainer/grpo_trainer.py``: ``_compute_loss`` forms
  ``coef_1 = exp(log_importance_weights)`` per token or, for ``importance_sampling_level="sequence"``,
  the masked mean of the token log-ratios broadcast to the answer (GSPO); the per-token k3 term is
  ``beta * per_token_kl``; the entropy bonus subtracts ``entropy_coef`` times the mean per-token entropy.
* verl ``verl/trainer/ppo/core_algos.py`` (the ``register_adv_est`` era): ``compute_rloo_outcome_advantage``
  (``r_i`` minus the mean of the others), ``compute_reinforce_plus_plus_baseline_outcome_advantage``
  (``r_i`` minus the group mean, then ``masked_whiten`` over the batch); DAPO's ``filter_groups`` drops
  groups whose metric has zero std.
* OpenRLHF ``openrlhf/trainer/ppo_utils/experience_maker.py``: ``rloo`` and ``reinforce_baseline`` the
  same two estimators (the latter whitened over the batch).
* The analytic pass@k advantage: arXiv 2508.10751, Eqs. 14-15 (written here from the paper with
  ``math.comb``, independently of :func:`grpo_theory.advantage.pass_at_k_table`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_theory import InvalidInputError, NoStationaryPolicy, Objective, Question, stationary_points, stationary_policy
from grpo_theory.solvers.classes import output_gradient
from tests.strategies import reward_law_questions, simplex

torch.set_num_threads(1)


# ----------------------------------------------------------------------------- the brute force

def _group_advantages(r: np.ndarray, obj: Objective) -> np.ndarray:
    """Advantages of one group ``r`` (G,) as the framework computes them (before batch whitening)."""
    G = r.size
    if obj.advantage == "group":
        c = r - r.mean()
        if obj.normalization == "shift":
            return c
        sd = math.sqrt(float((c**2).sum()) / (G - obj.std_ddof))
        return c / sd if sd > 0 else np.zeros(G)
    if obj.advantage == "rloo":                      # verl: r_i - mean of the other G - 1
        return np.array([r[i] - (r.sum() - r[i]) / (G - 1) for i in range(G)])
    if obj.advantage == "reinforce_pp":             # group mean removed; whitened over the batch later
        return r - r.mean()
    k, top = obj.pass_k, r.max()                     # pass@k: the top level passes (two levels)
    n_fail = int((r < top).sum()) if (r < top).any() else 0
    if r.min() == r.max():
        return np.zeros(G)
    p_fail = math.comb(n_fail, k) / math.comb(G, k)
    p_cond = math.comb(n_fail - 1, k - 1) / math.comb(G - 1, k - 1) if n_fail >= 1 else 0.0
    sd = math.sqrt(p_fail * (1 - p_fail))
    if sd == 0:
        return np.zeros(G)
    return np.where(r == top, p_fail / sd, (p_fail - p_cond) / sd)


def brute_force_logit_gradient(q: Question, obj: Objective, pi: np.ndarray) -> np.ndarray:
    """The expected gradient of the loss in the logits at ``pi_old = pi``, by enumeration and autograd."""
    K, G = q.n_outputs, obj.group_size
    levels, probs = q.reward_levels, q.reward_probs
    theta = torch.tensor(np.log(pi), dtype=torch.float64, requires_grad=True)
    logp = torch.log_softmax(theta, 0)
    p = logp.exp()
    ref = torch.tensor(q.pi_ref, dtype=torch.float64)
    entropy = -(p * logp).sum()                                 # exact entropy of the next-token law
    rows, weights, advs, masks = [], [], [], []
    for outs in itertools.product(range(K), repeat=G):
        for lv in itertools.product(range(levels.size), repeat=G):
            prob = float(np.prod(pi[list(outs)]) * np.prod(probs[list(outs), list(lv)]))
            if prob == 0.0:
                continue
            r = levels[list(lv)]
            rows.append(outs)
            weights.append(prob)
            advs.append(_group_advantages(r, obj))
            masks.append(0.0 if (obj.filter_ties and np.all(r == r[0])) else 1.0)
    outs = torch.tensor(rows)
    w = torch.tensor(weights, dtype=torch.float64)
    A = torch.tensor(np.array(advs), dtype=torch.float64)
    m = torch.tensor(masks, dtype=torch.float64)
    if obj.advantage == "reinforce_pp":
        # masked_whiten over a (large) batch: the batch's exact mean and std of the centred rewards
        mean = (w[:, None] * A).sum() / G
        sd = torch.sqrt((w[:, None] * (A - mean) ** 2).sum() / G)
        A = (A - mean) / sd if sd > 0 else torch.zeros_like(A)
    lp = logp[outs]                                             # (N, G)
    ratio = torch.exp(lp - lp.detach())                         # pi/pi_old, 1 in value
    log_rho = torch.log(ref)[outs] - lp                          # log(pi_ref/pi)
    k3 = torch.exp(log_rho) - log_rho - 1.0
    if obj.regime == "direct":                                 # TRL's bias-corrected ratio * k3
        k3 = ratio * k3
    per_group = (ratio * A - obj.beta * k3).mean(dim=1) + obj.entropy_coef * entropy
    J = (w * m * per_group).sum()
    (grad,) = torch.autograd.grad(J, theta)
    return grad.numpy()


def engine_logit_gradient(q: Question, obj: Objective, pi: np.ndarray) -> np.ndarray:
    g = output_gradient(q, obj, pi)
    return pi * (g - pi @ g)


# ----------------------------------------------------------------------------- engine == brute force

VARIANTS = [
    dict(advantage="group"),
    dict(advantage="group", normalization="shift"),
    dict(advantage="rloo"),
    dict(advantage="reinforce_pp"),
    dict(advantage="group", filter_ties=True),
    dict(advantage="rloo", filter_ties=True),
    dict(advantage="group", entropy_coef=0.3),
    dict(advantage="group", entropy_coef=0.2, filter_ties=True),
    dict(advantage="reinforce_pp", entropy_coef=0.1, penalty="direct"),
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=reward_law_questions(k_range=(2, 3), l_range=(2, 3)), pi=simplex(3), G=st.sampled_from([2, 3, 4]),
       beta=st.floats(0.05, 2.0), penalty=st.sampled_from(["reverse", "direct"]))
def test_engine_matches_brute_force(variant, q, pi, G, beta, penalty):
    pi = pi[:q.n_outputs] / pi[:q.n_outputs].sum()
    kw = {"penalty": penalty, **variant}
    obj = Objective(beta=beta, group_size=G, **kw)
    np.testing.assert_allclose(engine_logit_gradient(q, obj, pi), brute_force_logit_gradient(q, obj, pi),
                               rtol=1e-9, atol=1e-11)


@settings(max_examples=10, deadline=None)
@given(pi_ref=simplex(3), pi=simplex(3), rewards=st.lists(st.sampled_from([0.0, 1.0]), min_size=3, max_size=3),
       G=st.integers(2, 4), data=st.data(), beta=st.floats(0.05, 2.0),
       filter_ties=st.booleans(), entropy=st.sampled_from([0.0, 0.25]))
def test_pass_at_k_matches_brute_force(pi_ref, pi, rewards, G, data, beta, filter_ties, entropy):
    k = data.draw(st.integers(1, G))
    q = Question(pi_ref, reward_levels=[0.0, 1.0], reward_probs=[[1 - r, r] for r in rewards])
    obj = Objective(beta=beta, group_size=G, advantage="pass_at_k", pass_k=k, filter_ties=filter_ties,
                    entropy_coef=entropy)
    np.testing.assert_allclose(engine_logit_gradient(q, obj, pi), brute_force_logit_gradient(q, obj, pi),
                               rtol=1e-9, atol=1e-11)


def test_pass_at_1_is_the_group_advantage():
    q = Question([0.2, 0.3, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4], [1, 0]])
    pi = np.array([0.5, 0.3, 0.2])
    for G in (2, 5, math.inf):
        a = output_gradient(q, Objective(beta=0.4, group_size=G, advantage="pass_at_k", pass_k=1), pi)
        b = output_gradient(q, Objective(beta=0.4, group_size=G), pi)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_large_group_limits():
    """G = inf is the limit of finite G (checked at G = 3000, where the gap is O(1/G))."""
    q = Question([0.2, 0.3, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4], [1, 0]])
    pi = np.array([0.5, 0.3, 0.2])
    for kw in (dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(advantage="pass_at_k", pass_k=3)):
        inf = output_gradient(q, Objective(beta=0.4, group_size=math.inf, **kw), pi)
        big = output_gradient(q, Objective(beta=0.4, group_size=3000, **kw), pi)
        np.testing.assert_allclose(big, inf, atol=3e-3)


# ----------------------------------------------------------------------------- exact relations

@pytest.mark.parametrize("G", [2, 3, 8])
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_rloo_is_shift_at_rescaled_beta(G, penalty):
    """RLOO's advantage is G/(G-1) times the shift-only one: RLOO at beta = shift at beta (G-1)/G."""
    q = Question([0.15, 0.25, 0.6], reward_levels=[0, 1, 3], reward_probs=[[0, 0, 1], [0.2, 0.5, 0.3], [1, 0, 0]])
    for beta in (0.2, 1.0):
        a = stationary_policy(q, Objective(beta=beta, group_size=G, advantage="rloo", penalty=penalty))
        b = stationary_policy(q, Objective(beta=beta * (G - 1) / G, group_size=G, normalization="shift",
                                           penalty=penalty))
        np.testing.assert_allclose(a.pi, b.pi, atol=1e-9)


def _filtered_binary_root(p: float, G: int, beta: float) -> float:
    """Independent root of the filtered binary condition (reverse penalty, scale), by bisection on the
    brute-force gradient: d J / d theta_a = 0."""
    q = Question([p, 1 - p], rewards=[1, 0])
    obj = Objective(beta=beta, group_size=G, filter_ties=True)

    def f(x):
        return brute_force_logit_gradient(q, obj, np.array([x, 1 - x]))[0]
    lo, hi = p, 1 - 1e-9
    assert f(lo) > 0 > f(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("p, G, before, after", [(0.05, 2, 0.546, 0.72), (0.3, 8, 0.854, 0.86)])
def test_filtering_reference_numbers(p, G, before, after):
    """The issue's numbers: filtering tied groups moves 0.546 -> ~0.72 (p 0.05, G 2) and 0.854 -> ~0.86."""
    q = Question([p, 1 - p], rewards=[1, 0])
    plain = stationary_points(q, Objective(beta=0.5, group_size=G))
    filt = stationary_points(q, Objective(beta=0.5, group_size=G, filter_ties=True))
    assert len(plain) == 1 and len(filt) == 1
    assert abs(plain[0].pi[0] - before) < 5e-4
    assert abs(filt[0].pi[0] - after) < 5e-3
    if G == 2:           # the brute force's own root (G = 8 enumerates 2^8 groups per call: fine, but slower)
        assert abs(_filtered_binary_root(p, G, 0.5) - filt[0].pi[0]) < 1e-9


def test_entropy_bonus_pulls_towards_uniform_and_keeps_the_flow_stable():
    q = Question([0.3, 0.7], rewards=[1, 0])
    xs = [stationary_policy(q, Objective(beta=0.5, group_size=4, entropy_coef=c)).pi[0] for c in (0, 0.1, 1, 10)]
    assert all(a > b for a, b in zip(xs, xs[1:]))
    assert abs(xs[-1] - 0.5) < 0.05          # a large bonus dominates: near uniform


def test_entropy_breaks_pooling_of_equal_outputs():
    """Two outputs with the same reward: without entropy pi stays proportional to pi_ref within the class;
    with it the stationary point equalises them partly (checked against the brute-force gradient)."""
    q = Question([0.1, 0.3, 0.6], rewards=[1, 1, 0])
    obj = Objective(beta=0.5, group_size=3, entropy_coef=0.5)
    sp = stationary_policy(q, obj)
    assert sp.pi[0] / sp.pi[1] > 0.1 / 0.3 + 0.01
    np.testing.assert_allclose(brute_force_logit_gradient(q, obj, sp.pi), 0.0, atol=1e-9)


# ----------------------------------------------------------------------------- importance level (GSPO)

@pytest.mark.parametrize("loss_type", ["grpo", "dr_grpo", "dapo"])
def test_sequence_importance_ratio_has_the_token_ratio_gradient(loss_type):
    """TRL's importance_sampling_level="sequence" (the masked mean of token log-ratios, broadcast to the
    answer) and the token-level ratio give the same gradient at pi_old = pi, for every aggregation."""
    torch.manual_seed(0)
    logits = torch.randn(4, 5, 6, dtype=torch.float64, requires_grad=True)     # 4 answers, up to 5 tokens
    tokens = torch.randint(0, 6, (4, 5))
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0]], dtype=torch.float64)
    A = torch.tensor([0.7, -1.2, 0.4, 0.1], dtype=torch.float64)

    def loss(level):
        lp = torch.log_softmax(logits, -1).gather(-1, tokens[..., None])[..., 0]
        log_ratio = lp - lp.detach()
        if level == "sequence":
            log_ratio = ((log_ratio * mask).sum(-1) / mask.sum(-1))[:, None]
        per_token = torch.exp(log_ratio) * A[:, None]
        if loss_type == "grpo":
            return ((per_token * mask).sum(-1) / mask.sum(-1)).mean()
        if loss_type == "dr_grpo":
            return (per_token * mask).sum() / (4 * 5)
        return (per_token * mask).sum() / mask.sum()
    g_tok = torch.autograd.grad(loss("token"), logits)[0]
    g_seq = torch.autograd.grad(loss("sequence"), logits)[0]
    torch.testing.assert_close(g_seq, g_tok, rtol=1e-12, atol=1e-14)


def test_importance_level_leaves_the_stationary_set():
    q = Question([0.2, 0.5, 0.3], rewards=[1, 0.5, 0])
    for level in ("sequence", "token"):
        a = stationary_policy(q, Objective(beta=0.3, group_size=4, level=level, importance_level="sequence"))
        b = stationary_policy(q, Objective(beta=0.3, group_size=4, level=level))
        np.testing.assert_allclose(a.pi, b.pi, atol=1e-12)


# ----------------------------------------------------------------------------- off-policy knobs

@pytest.mark.parametrize("inner_updates, clip_eps", [(1, 0.2), (4, 0.2), (4, 0.05), (8, 0.28)])
def test_off_policy_knobs_keep_the_stationary_point(inner_updates, clip_eps):
    """At a stationary point pi_old = pi, so several updates per batch (num_iterations) and any clip range
    (epsilon_high) leave it fixed; from elsewhere they reach the same point."""
    from grpo_theory.dynamics import grpo_steps

    q = Question([0.3, 0.7], rewards=[1, 0])
    obj = Objective(beta=0.5, group_size=4)
    star = stationary_policy(q, obj).pi
    stay = grpo_steps(q, obj, star, lr=0.05, n_batches=20, inner_updates=inner_updates, clip_eps=clip_eps,
                      with_points=False)
    np.testing.assert_allclose(stay.final, star, atol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("inner_updates, clip_eps", [(1, 0.2), (4, 0.05), (8, 0.28)])
def test_off_policy_knobs_reach_the_same_point(inner_updates, clip_eps):
    from grpo_theory.dynamics import grpo_steps

    q = Question([0.3, 0.7], rewards=[1, 0])
    obj = Objective(beta=0.5, group_size=4)
    star = stationary_policy(q, obj).pi
    run = grpo_steps(q, obj, q.pi_ref, lr=0.05, n_batches=4000, inner_updates=inner_updates, clip_eps=clip_eps,
                     with_points=False, every=4000)
    np.testing.assert_allclose(run.final, star, atol=1e-6)


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("kw, match", [
    (dict(advantage="ppo"), "advantage must be one of"),
    (dict(advantage="pass_at_k"), "needs pass_k"),
    (dict(advantage="pass_at_k", pass_k=0), r"pass_k must be an integer in 1\.\.G"),
    (dict(advantage="pass_at_k", pass_k=5, group_size=4), r"1\.\.G \(G=4\), got 5"),
    (dict(pass_k=2), "only meaningful with advantage='pass_at_k'"),
    (dict(entropy_coef=-0.1), "entropy_coef must be a finite number >= 0"),
    (dict(filter_ties="yes"), "filter_ties must be True or False"),
    (dict(filter_ties=True, group_size=1), "group_size must be an integer >= 2"),
    (dict(importance_level="answer"), "importance_level must be one of"),
    (dict(beta=-0.5), r"beta must be a finite number >= 0"),
])
def test_bad_input(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        Objective(**{"beta": 0.5, **kw})


def test_no_penalty_and_no_bonus_is_valid_and_has_no_stationary_policy():
    obj = Objective(beta=0.0, advantage="rloo", group_size=4)          # unregularised, for the finite-time flows
    with pytest.raises(NoStationaryPolicy, match="no stationary policy"):
        stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), obj)


def test_pass_at_k_needs_two_levels():
    q = Question([0.2, 0.3, 0.5], rewards=[0, 1, 2])
    with pytest.raises(InvalidInputError, match="two reward levels"):
        stationary_policy(q, Objective(beta=0.5, group_size=3, advantage="pass_at_k", pass_k=2))


# ----------------------------------------------------------------------------- closed forms (sympy-derived)

def test_family_derivations_hold():
    from grpo_theory.symbolic import family_derivations

    for d in family_derivations():
        assert all(c.holds for c in d.checks), d.name


@pytest.mark.parametrize("p", [0.02, 0.05, 0.3, 0.7])
@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_filtered_pairwise_closed_form_matches_solver(p, beta):
    from grpo_theory.closed_form import binary_pairwise_filtered

    sp = stationary_points(Question([p, 1 - p], rewards=[1, 0]), Objective(beta=beta, group_size=2, filter_ties=True))
    assert len(sp) == 1                      # one stationary point: the cubic's root in (p, 1) is unique here
    assert abs(float(binary_pairwise_filtered(p, beta)) - sp[0].pi[0]) < 1e-9


@pytest.mark.parametrize("G", [2, 5, math.inf])
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_rloo_closed_form_matches_solver(G, penalty):
    from grpo_theory.closed_form import binary_rloo

    q = Question([0.25, 0.75], reward_levels=[0, 1], reward_probs=[[0.2, 0.8], [0.7, 0.3]])   # gap 0.5
    for beta in (0.1, 0.7):
        x = stationary_policy(q, Objective(beta=beta, group_size=G, advantage="rloo", penalty=penalty)).pi[0]
        assert abs(float(binary_rloo(0.25, beta, reward_gap=0.5, penalty=penalty)) - x) < 1e-9


@pytest.mark.parametrize("penalty", ["reverse", "direct"])
@pytest.mark.parametrize("c", [0.05, 0.5, 3.0])
def test_entropy_binary_closed_form_matches_solver(penalty, c):
    from grpo_theory.closed_form import binary_entropy

    q = Question([0.2, 0.8], rewards=[1, 0])
    for beta in (0.1, 1.0):
        x = stationary_policy(q, Objective(beta=beta, group_size=2, penalty=penalty, entropy_coef=c)).pi[0]
        assert abs(float(binary_entropy(0.2, beta, c, penalty=penalty)) - x) < 1e-9
        # RLOO at G = 6: Delta is the reward gap (1), the same condition
        x6 = stationary_policy(q, Objective(beta=beta, group_size=6, penalty=penalty, entropy_coef=c,
                                            advantage="rloo")).pi[0]
        assert abs(float(binary_entropy(0.2, beta, c, penalty=penalty)) - x6) < 1e-9


# ----------------------------------------------------------------------------- readers

def test_readers_map_the_family_switches():
    from grpo_theory.integrations.openrlhf import read_openrlhf_config
    from grpo_theory.integrations.trl import read_trl_config
    from grpo_theory.integrations.verl import read_verl_config

    t = read_trl_config({"beta": 0.04, "entropy_coef": 0.01, "importance_sampling_level": "sequence",
                            "max_completion_length": 1}, trl_version="1.16.0").objective
    assert (t.entropy_coef, t.importance_level) == (0.01, "sequence")
    with pytest.raises(InvalidInputError,
                       match=r"TRL config: importance_sampling_level = 'answer' "
                             r"\(expected one of 'token', 'sequence'\)"):
        read_trl_config({"beta": 0.04, "importance_sampling_level": "answer"}, trl_version="1.16.0")
    with pytest.raises(InvalidInputError, match="entropy_coef=-1"):
        read_trl_config({"beta": 0.04, "entropy_coef": -1}, trl_version="1.16.0")

    base = {"actor_rollout_ref": {"rollout": {"n": 4}, "actor": {"use_kl_loss": True, "kl_loss_coef": 0.1,
                                                                 "entropy_coeff": 0.001}}}
    for name, adv in (("grpo", "group"), ("rloo", "rloo"), ("reinforce_plus_plus_baseline", "reinforce_pp")):
        cfg = {**base, "algorithm": {"adv_estimator": name, "filter_groups": {"enable": True}}}
        v = read_verl_config(cfg).objective
        assert (v.advantage, v.filter_ties, v.entropy_coef) == (adv, True, 0.001)
    with pytest.raises(NoStationaryPolicy, match="grpo_passk"):
        read_verl_config({**base, "algorithm": {"adv_estimator": "grpo_passk"}})
    with pytest.raises(InvalidInputError, match="adv_estimator='grpoo'"):
        read_verl_config({**base, "algorithm": {"adv_estimator": "grpoo"}})

    o = read_openrlhf_config(["--advantage_estimator", "reinforce_baseline", "--n_samples_per_prompt", "4",
                                 "--dynamic_filtering", "--entropy_loss_coef", "0.002", "--use_kl_loss",
                                 "--kl_estimator", "k3"]).objective
    assert (o.advantage, o.filter_ties, o.entropy_coef) == ("reinforce_pp", True, 0.002)
    with pytest.raises(InvalidInputError, match="advantage_estimator='ppo'"):
        read_openrlhf_config({"advantage_estimator": "ppo", "n_samples_per_prompt": 4})


# ----------------------------------------------------------------------------- the trainer's loss

@settings(max_examples=25, deadline=None)
@given(r=st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=4, max_size=4), min_size=3, max_size=3),
       adv=st.sampled_from(["rloo", "pass_at_k"]), k=st.integers(1, 4))
def test_trainer_advantages_match_the_brute_force_ones(r, adv, k):
    from grpo_theory.training.loss import family_advantages

    rewards = torch.tensor([r], dtype=torch.float64)                         # (1 question, 3 groups, G = 4)
    obj = Objective(beta=1.0, group_size=4, advantage=adv, pass_k=k if adv == "pass_at_k" else None)
    got = family_advantages(rewards, adv, pass_k=obj.pass_k).numpy()[0]
    want = np.array([_group_advantages(np.array(g), obj) for g in r])
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_trainer_reinforce_pp_whitens_per_question():
    from grpo_theory.training.loss import family_advantages, tie_mask

    rewards = torch.tensor([[[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]])
    a = family_advantages(rewards, "reinforce_pp")
    for qa in a:
        assert abs(float(qa.mean())) < 1e-6 and abs(float(qa.pow(2).mean()) - 1.0) < 1e-5
    assert tie_mask(rewards)[0, 1].sum() == 0 and tie_mask(rewards)[0, 0].sum() == 3
