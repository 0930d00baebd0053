"""``monte_carlo_preference`` for RLOO and REINFORCE++: the sampled estimate against the exact engine's ``P_G``,
within its standard error (z-scores over several seeds), and the edges (a tied whitening batch, the sample limit,
pass@k still refused)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question, monte_carlo_preference, reward_preference
from grpo_theory.errors import TheoryWarning
from grpo_theory.monte_carlo import MAX_MONTE_CARLO_SAMPLES

# Noisy rewards on three levels: sigma includes the noise, so REINFORCE++'s whitening is not the deterministic case's.
NOISY = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 1.0, 3.0],
                 reward_probs=[[0.1, 0.2, 0.7], [0.5, 0.5, 0.0], [0.3, 0.3, 0.4]])
PI = np.array([0.25, 0.25, 0.5])


def test_the_estimates_agree_with_the_exact_engine_within_their_standard_errors():
    z = []
    for advantage in ("rloo", "reinforce_pp"):
        for G in (2, 5):
            obj = Objective(beta=1.0, group_size=G, advantage=advantage)
            exact = reward_preference(NOISY, obj, PI)
            for seed in range(4):
                est, se = monte_carlo_preference(NOISY, obj, PI, n_groups=5000, seed=seed)
                assert np.all(se > 0) and np.all(se < 0.05), (advantage, G, seed, se)
                z.append((est - exact) / se)
    z = np.concatenate(z)                                    # 48 z-scores
    assert np.all(np.abs(z) < 4.5), z
    # the standard errors are neither too small (the bound above) nor too large: mean z^2 is chi^2_48 / 48
    assert 0.3 < np.mean(z ** 2) < 2.5, np.mean(z ** 2)


def test_rloo_and_reinforce_pp_by_hand():
    """Deterministic rewards 1, 0 at pi = (0.2, 0.8): mu = 0.2, sigma = 0.4. RLOO: E[r|o] - mu = (0.8, -0.2) at
    every G; REINFORCE++ at G = 4: sqrt(3/4) (E[r|o] - mu)/sigma = (1.7321, -0.4330)."""
    q, pi = Question([0.5, 0.5], rewards=[1, 0]), [0.2, 0.8]
    for advantage, expected in (("rloo", [0.8, -0.2]), ("reinforce_pp", [np.sqrt(0.75) * 2, -np.sqrt(0.75) / 2])):
        est, se = monte_carlo_preference(q, Objective(beta=1.0, group_size=4, advantage=advantage), pi,
                                         n_groups=20_000, seed=7)
        assert np.all(np.abs(est - expected) < 4.5 * se), (advantage, est, se)


def test_a_whitening_batch_without_spread_whitens_to_zero_with_a_warning():
    """At the vertex pi = (1, 0) every group drawn from pi ties (sigma = 0): the whitening gives 0, as the exact
    engine does; member 1 = b's own groups do not tie, so the warning says the estimate is the whitening's 0."""
    q, obj = Question([0.5, 0.5], rewards=[1, 0]), Objective(beta=1.0, group_size=3, advantage="reinforce_pp")
    with pytest.warns(TheoryWarning, match="no reward spread"):
        est, se = monte_carlo_preference(q, obj, [1.0, 0.0], n_groups=200, seed=0)
    assert est.tolist() == [0.0, 0.0] and se.tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(reward_preference(q, obj, np.array([1.0, 0.0])), [0.0, 0.0])
    with warnings.catch_warnings():                          # equal rewards: every A_1 is 0, nothing to warn of
        warnings.simplefilter("error")
        est, _ = monte_carlo_preference(Question([0.5, 0.5], rewards=[1, 1]), obj, [0.5, 0.5], n_groups=200)
    assert est.tolist() == [0.0, 0.0]


def test_the_sample_limit_counts_the_whitening_batch():
    G = 1000
    n_groups = MAX_MONTE_CARLO_SAMPLES // (3 * G) + 1        # 2 outputs: under the limit; with the batch: over it
    assert 2 * n_groups * G <= MAX_MONTE_CARLO_SAMPLES
    q = Question([0.5, 0.5], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match=f"n_groups={n_groups:,}.*whitening batch.*{3 * n_groups * G:,}"):
        monte_carlo_preference(q, Objective(beta=1.0, group_size=G, advantage="reinforce_pp"), [0.5, 0.5],
                               n_groups=n_groups)


def test_pass_at_k_is_refused_for_the_exact_engine():
    q = Question([0.5, 0.5], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match="advantage='pass_at_k'.*reward_preference"):
        monte_carlo_preference(q, Objective(beta=1.0, group_size=4, advantage="pass_at_k", pass_k=2), [0.5, 0.5],
                               n_groups=100)


@pytest.mark.parametrize("G", [3, 5])
def test_monte_carlo_answer_weights_sample_the_objectives_advantage(G):
    # monte_carlo_answer_weights drew Eq. 2's advantage whatever obj.advantage said (RLOO gave 1.16 where the exact
    # weight is 0.7); RLOO's baseline leaves member 1 out, so E[A_1 | o] = r(o) - E_pi r exactly
    from grpo_theory.solvers import answer_weights, monte_carlo_answer_weights

    q = Question([0.3, 0.7], rewards=[1.0, 0.0])
    obj = Objective(beta=0.5, group_size=G, advantage="rloo")
    Pw, _, se, _ = monte_carlo_answer_weights(q, obj, [0.3, 0.7], n_samples=20_000, seed=G)
    exact = answer_weights(q, obj, [0.3, 0.7])[0]
    np.testing.assert_allclose(exact, [0.7, -0.3], atol=1e-12)         # r(o) - 0.3 (leave-one-out is unbiased)
    assert np.all(np.abs(Pw - exact) < 4.5 * se), (Pw, exact, se)


def test_sampled_advantages_refuse_a_batch_whitened_estimator_by_name():
    from grpo_theory.monte_carlo import sampled_advantages

    with pytest.raises(InvalidInputError, match="reinforce_pp.*batch"):
        sampled_advantages(np.array([[1.0, 0.0]]), Objective(beta=0.5, group_size=2, advantage="reinforce_pp"))
