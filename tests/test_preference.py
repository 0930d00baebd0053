"""Theorems about the reward preference P_G(o|pi) (SPEC section 2), each checked
against an independent computation (tests/reference_impl.py), never against itself."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_impl import brute_force_preference, large_group_preference, pairwise_preference_p2
from strategies import objectives, reward_law_questions, simplex

from grpo_theory import (
    ExactEvaluationTooLarge,
    InvalidInputError,
    Objective,
    Question,
    monte_carlo_preference,
    reward_preference,
)
from grpo_theory.closed_form import binary_preference
from grpo_theory.preference import level_expectations


@settings(max_examples=60, deadline=None)
@given(q=reward_law_questions(), obj=objectives(), data=st.data())
def test_expected_preference_is_zero_for_every_policy(q, obj, data):
    """Theorem: E_{o~pi} P_G(o|pi) = 0 (advantages sum to zero in each group)."""
    pi = data.draw(simplex(q.n_outputs))
    P = reward_preference(q, obj, pi)
    assert abs(pi @ P) < 1e-12 * max(1.0, np.abs(P).max())


@settings(max_examples=40, deadline=None)
@given(q=reward_law_questions(k_range=(2, 3), l_range=(2, 3)),
       obj=objectives(group_sizes=(2, 3, 4), include_inf=False), data=st.data())
def test_exact_engine_equals_brute_force_over_all_groups(q, obj, data):
    """P_G equals the definition: an average of A_1 over every group and reward tuple."""
    pi = data.draw(simplex(q.n_outputs))
    expected = brute_force_preference(q.reward_levels, q.reward_probs, pi, obj.group_size,
                                      obj.normalization, obj.std_ddof, obj.std_eps)
    np.testing.assert_allclose(reward_preference(q, obj, pi), expected, rtol=1e-10, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(q=reward_law_questions(k_range=(2, 4)), data=st.data())
def test_group_of_two_is_pairwise_comparison(q, data):
    """G = 2: P_2(o|pi) = sum_o' pi(o') [P(o > o') - P(o' > o)]."""
    pi = data.draw(simplex(q.n_outputs))
    got = reward_preference(q, Objective(beta=1.0, group_size=2), pi)
    np.testing.assert_allclose(got, pairwise_preference_p2(q.reward_levels, q.reward_probs, pi),
                               atol=1e-13)
    # ddof = 1 scales every advantage by 1/sqrt(2) when G = 2
    got1 = reward_preference(q, Objective(beta=1.0, group_size=2, std_ddof=1), pi)
    np.testing.assert_allclose(got1, got / math.sqrt(2), atol=1e-13)


@settings(max_examples=50, deadline=None)
@given(q=reward_law_questions(k_range=(2, 4)), data=st.data())
def test_preference_matrix_gives_the_same_p2_as_its_reward_law(q, data):
    pi = data.draw(simplex(q.n_outputs))
    q_pref = Question(q.pi_ref, preference=q.pairwise_preference())
    obj = Objective(beta=1.0, group_size=2)
    np.testing.assert_allclose(reward_preference(q_pref, obj, pi), reward_preference(q, obj, pi),
                               atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(q=reward_law_questions(), data=st.data())
def test_large_group_formula(q, data):
    """G = inf: P_inf(o|pi) = (E[r|o] - E_pi r) / sigma_pi."""
    pi = data.draw(simplex(q.n_outputs))
    w = pi @ q.reward_probs
    if np.count_nonzero(w > 1e-12) < 2:
        return
    got = reward_preference(q, Objective(beta=1.0, group_size=math.inf), pi)
    np.testing.assert_allclose(got, large_group_preference(q.reward_levels, q.reward_probs, pi),
                               rtol=1e-12, atol=1e-12)


def test_finite_group_converges_to_large_group_at_rate_one_over_g():
    """P_G -> P_inf as G grows; the error times G settles (O(1/G))."""
    q = Question([0.5, 0.5], reward_levels=[0.0, 1.0, 2.0],
                 reward_probs=[[0.1, 0.3, 0.6], [0.5, 0.3, 0.2]])
    pi = np.array([0.35, 0.65])
    p_inf = large_group_preference(q.reward_levels, q.reward_probs, pi)
    errs = []
    for G in (50, 100, 200, 400):
        errs.append(np.max(np.abs(reward_preference(q, Objective(beta=1.0, group_size=G), pi) - p_inf)))
    errs = np.array(errs)
    assert np.all(np.diff(errs) < 0)
    ratios = errs[:-1] / errs[1:]                     # doubling G halves the error
    np.testing.assert_allclose(ratios, 2.0, rtol=0.1)


@settings(max_examples=40, deadline=None)
@given(q=reward_law_questions(k_range=(2, 3)), G=st.integers(2, 4), data=st.data())
def test_shift_only_is_scaled_centred_reward(q, G, data):
    """Shift-only: P_G(o|pi) = ((G-1)/G)(E[r|o] - E_pi r); checked by brute force."""
    pi = data.draw(simplex(q.n_outputs))
    brute = brute_force_preference(q.reward_levels, q.reward_probs, pi, G, "shift")
    r = q.reward_probs @ q.reward_levels
    np.testing.assert_allclose(brute, (G - 1) / G * (r - pi @ r), atol=1e-12)
    np.testing.assert_allclose(reward_preference(q, Objective(beta=1.0, group_size=G, normalization="shift"), pi),
                               brute, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(q=reward_law_questions(), G=st.sampled_from([2, 3, 5, 17, math.inf]),
       a=st.floats(0.1, 10.0), b=st.floats(-10, 10), ddof=st.sampled_from([0, 1]), data=st.data())
def test_scale_normalisation_is_invariant_to_affine_maps(q, G, a, b, ddof, data):
    pi = data.draw(simplex(q.n_outputs))
    q2 = Question(q.pi_ref, reward_levels=a * q.reward_levels + b, reward_probs=q.reward_probs)
    obj = Objective(beta=1.0, group_size=G, std_ddof=ddof)
    np.testing.assert_allclose(reward_preference(q2, obj, pi), reward_preference(q, obj, pi),
                               rtol=1e-9, atol=1e-11)


def test_binary_form_matches_engine_and_high_precision_at_large_g():
    """The O(G) binomial form stays accurate at G = 10,000 (checked with 50-digit mpmath)."""
    G = 10_000
    x = np.array([1e-4, 0.01, 0.3, 0.5, 0.97, 0.9999])
    pa, pb = binary_preference(x, G)
    E = level_expectations(np.array([0.0, 1.0]), np.log(np.stack([1 - x, x], -1)), Objective(beta=1.0, group_size=G))
    np.testing.assert_allclose(E[:, 1], pa, rtol=1e-11)
    np.testing.assert_allclose(E[:, 0], pb, rtol=1e-11)
    mpmath.mp.dps = 50
    for xi, got_a in zip([0.3, 0.9999], E[[2, 5], 1]):
        xm = mpmath.mpf(xi)
        terms, w = [], (1 - xm) ** (G - 1)          # w = C(G-1, k) x^k (1-x)^(G-1-k), each from the one before
        for k in range(G):
            terms.append(w * mpmath.sqrt(mpmath.mpf(G - 1 - k) / (k + 1)))
            w = w * xm / (1 - xm) * (G - 1 - k) / (k + 1)
        ref = mpmath.fsum(terms)
        assert abs(float(ref) - got_a) < 1e-12 * max(1.0, abs(float(ref)))


def test_spec_binomial_form_agrees_with_brute_force_small_g():
    q = Question([0.4, 0.6], rewards=[1.0, 0.0])
    pi = np.array([0.35, 0.65])
    for G in (2, 3, 4, 5):
        pa, pb = binary_preference(pi[0], G)
        brute = brute_force_preference(q.reward_levels, q.reward_probs, pi, G)
        np.testing.assert_allclose([pa, pb], brute, atol=1e-13)


def test_ties_give_zero_advantage_and_epsilon_is_respected():
    q = Question([0.5, 0.5], rewards=[2.0, 2.0])
    for obj in (Objective(beta=1.0, group_size=4), Objective(beta=1.0, group_size=4, std_eps=1e-4),
                Objective(beta=1.0, group_size=math.inf)):
        np.testing.assert_array_equal(reward_preference(q, obj, [0.5, 0.5]), [0.0, 0.0])


def test_cost_depends_on_levels_not_outputs():
    """1,000 outputs with 3 reward levels evaluate as fast as 3 outputs (pooling)."""
    rng = np.random.default_rng(0)
    K = 1000
    rewards = rng.choice([0.0, 0.5, 1.0], size=K)
    pi_ref = rng.dirichlet(np.ones(K))
    q = Question(pi_ref, rewards=rewards)
    P = reward_preference(q, Objective(beta=1.0, group_size=64), pi_ref)
    small = Question([1 / 3] * 3, rewards=[0.0, 0.5, 1.0])
    w = np.array([pi_ref[rewards == v].sum() for v in (0.0, 0.5, 1.0)])
    P_small = reward_preference(small, Objective(beta=1.0, group_size=64), w)
    np.testing.assert_allclose(P, P_small[(rewards * 2).astype(int)], atol=1e-13)


def test_too_large_enumeration_says_so_and_monte_carlo_agrees():
    q = Question([0.2, 0.3, 0.5], reward_levels=np.arange(8.0),
                 reward_probs=np.full((3, 8), 1 / 8))
    with pytest.raises(ExactEvaluationTooLarge, match="monte_carlo_preference"):
        reward_preference(q, Objective(beta=1.0, group_size=200), q.pi_ref)
    q_small = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 1.0, 3.0],
                       reward_probs=[[0.1, 0.2, 0.7], [0.5, 0.5, 0.0], [0.3, 0.3, 0.4]])
    obj = Objective(beta=1.0, group_size=6, std_ddof=1, std_eps=0.01)
    exact = reward_preference(q_small, obj, q_small.pi_ref)
    est, se = monte_carlo_preference(q_small, obj, q_small.pi_ref, n_groups=40_000, seed=1)
    assert np.all(np.abs(est - exact) < 4 * se)
    assert np.all(se < 0.02)


def test_monte_carlo_with_continuous_rewards():
    """A reward sampler gives P_G for continuous rewards; Gaussian rewards at large G approach
    (mu_o - E_pi mu)/sigma_pi with sigma_pi including the noise."""
    mu = np.array([1.0, 0.0])
    pi = np.array([0.5, 0.5])

    def sampler(outputs, rng):
        return mu[outputs] + rng.normal(size=outputs.shape)

    est, se = monte_carlo_preference(None, Objective(beta=1.0, group_size=200), pi, n_groups=4000, seed=2,
                                     reward_sampler=sampler)
    sigma = math.sqrt(1.0 + 0.25)
    expected = (mu - pi @ mu) / sigma
    assert np.all(np.abs(est - expected) < 4 * se + 0.01)   # + O(1/G) bias


@pytest.mark.parametrize("bad", [
    dict(pi=[0.5, 0.6]), dict(pi=[0.5]), dict(pi=[np.nan, 1.0]), dict(pi=[-0.1, 1.1]),
])
def test_bad_policy_is_rejected(bad):
    q = Question([0.5, 0.5], rewards=[1.0, 0.0])
    with pytest.raises(InvalidInputError):
        reward_preference(q, Objective(beta=1.0, group_size=2), bad["pi"])


def test_preference_matrix_rejects_settings_it_cannot_determine():
    q = Question([0.5, 0.5], preference=[[0.5, 0.8], [0.2, 0.5]])
    for obj in (Objective(beta=1.0, group_size=4), Objective(beta=1.0, group_size=2, normalization="shift"),
                Objective(beta=1.0, group_size=2, std_eps=0.1)):
        with pytest.raises(InvalidInputError, match="group_size=2"):
            reward_preference(q, obj, [0.5, 0.5])


def test_binomial_window_truncation_changes_nothing(monkeypatch):
    """Summing only mean +- 40 sd of the binomial weights equals the full O(G) sum to rounding."""
    import grpo_theory.preference as pref

    rng = np.random.default_rng(5)
    x = np.concatenate([[1e-6, 1e-3, 0.5, 0.999, 1 - 1e-9], rng.random(20)])
    lw = np.log(np.stack([1 - x, x], -1))
    for G in (65, 300, 4096, 10_000):
        for obj in (Objective(beta=1.0, group_size=G), Objective(beta=1.0, group_size=G, std_ddof=1, std_eps=1e-4)):
            cut = level_expectations(np.array([0.0, 1.0]), lw, obj)
            monkeypatch.setattr(pref, "_TRUNCATE_BINOMIAL", False)
            full = level_expectations(np.array([0.0, 1.0]), lw, obj)
            monkeypatch.setattr(pref, "_TRUNCATE_BINOMIAL", True)
            np.testing.assert_allclose(cut, full, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("std_eps", [0.0, 1e-4])
@pytest.mark.parametrize("scale", [1.0, 1e7])
def test_level_expectations_do_not_depend_on_the_order_of_the_levels(std_eps, scale):
    """E_l(w) follows its level when the levels are given in another order. Decreasing levels used to
    give a negative unit in the standardisation: every sign flipped (std_eps = 0) or an error (> 0)."""
    from grpo_theory.preference import level_expectations
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(2, 5))
        levels = np.sort(rng.normal(0.0, 1.0, n)) * scale
        log_w = np.log(rng.dirichlet(np.ones(n)))
        obj = Objective(beta=1.0, group_size=int(rng.integers(2, 9)), std_eps=std_eps)
        e = level_expectations(levels, log_w, obj)
        for perm in (np.arange(n)[::-1], rng.permutation(n)):
            np.testing.assert_allclose(level_expectations(levels[perm], log_w[perm], obj), e[perm],
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("normalization", ["scale", "shift"])
@pytest.mark.parametrize(("L", "G", "ddof", "eps", "veps"), [(2, 7, 0, 0.0, 0.0), (3, 9, 1, 1e-4, 0.0),
                                                           (5, 6, 0, 0.0, 1e-3), (9, 4, 1, 1e-6, 0.0)])
def test_advantage_table_equals_each_group_computed_from_the_definition(normalization, L, G, ddof, eps, veps):
    """The O(N L^2) table (two matrix products, issue 21's speed-up for the KL in the reward, where the
    shaped levels change with every policy) against each group built explicitly: ``G`` rewards, their
    mean and their sum of squared deviations straight from the counts, one group at a time."""
    from grpo_theory._multinomial import count_vectors
    from grpo_theory.preference_sums import advantages_for_counts

    rng = np.random.default_rng(L * 100 + G)
    v = np.sort(rng.normal(size=L)) * 3.0
    counts = count_vectors(G - 1, L).astype(float)
    table = advantages_for_counts(v, counts, G, normalization, ddof, eps, veps, "mean")
    assert table.shape == (L, counts.shape[0])
    for n in range(counts.shape[0]):
        for lev in range(L):
            rewards = np.repeat(v, (counts[n] + (np.arange(L) == lev)).astype(int))   # the whole group
            assert rewards.size == G
            if np.all(rewards == rewards[0]):
                a = 0.0                            # a tie: A = 0 (0/eps, or 0 by convention without eps)
            else:
                mean = rewards.sum() / G
                a = v[lev] - mean
                if normalization == "scale":
                    a = a / (math.sqrt(((rewards - mean) ** 2).sum() / (G - ddof) + veps) + eps)
            assert table[lev, n] == pytest.approx(a, rel=1e-12, abs=1e-12 * (1 + abs(a)))


def test_advantage_table_is_the_direct_triple_sum_it_replaced():
    """Held to the O(N L^3) sum over ``(l, n, i, j)`` it replaced, on the shapes the KL fuzz meets (up to
    13 shaped levels): the same values to 1e-12 of the advantages' scale."""
    from grpo_theory._multinomial import count_vectors
    from grpo_theory.preference_sums import advantages_for_counts

    rng = np.random.default_rng(21)
    for L, G in [(4, 6), (9, 8), (13, 6)]:
        v = np.sort(rng.normal(size=L))
        counts = count_vectors(G - 1, L).astype(float)
        total = counts[None, :, :] + np.eye(L)[:, None, :]
        diff = v[:, None] - v[None, :]
        num = np.einsum("lnj,lj->ln", total, diff) / G
        sum_sq = np.einsum("lni,ij,lnj->ln", total, diff**2, total) / (2.0 * G)
        np.testing.assert_allclose(advantages_for_counts(v, counts, G, "shift", 0, 0.0, 0.0, "mean"), num,
                                   rtol=0, atol=1e-13 * np.abs(num).max())
        old = num / (np.sqrt(sum_sq / G + 0.0) + 1e-4)
        np.testing.assert_allclose(advantages_for_counts(v, counts, G, "scale", 0, 1e-4, 0.0, "mean"), old,
                                   rtol=0, atol=1e-12 * np.abs(old).max())


def test_cached_window_terms_give_the_uncached_sum_to_the_bit():
    """E_l(w) for L >= 3 at large G sums each policy's window of count vectors; the window's count vectors,
    saddle constants and advantages are cached (preference_sums._window_terms). Every objective, part and policy
    gives, warm or cold, exactly the sum written out without the cache; a window asked for again is a hit."""
    import math

    import grpo_theory.preference_sums as pref
    from grpo_theory._multinomial import bd0, box_count_vectors, saddle_constant, window_bounds

    levels = np.array([0.0, 0.4, 1.0])
    rng = np.random.default_rng(3)
    log_w = np.log(np.vstack([rng.dirichlet(np.ones(3), size=3), [1e-300, 0.5, 0.5]]))
    cases = [(Objective(beta=1.0, group_size=1000), "mean"),
             (Objective(beta=1.0, group_size=1000, std_ddof=1, std_eps=1e-4), "mean"),
             (Objective(beta=1.0, group_size=1000, variance_eps=1e-3), "positive"),
             (Objective(beta=1.0, group_size=1000, normalization="shift"), "negative")]

    def uncached(obj, part):
        total = obj.group_size - 1
        lo, hi = window_bounds(log_w, total)
        out = np.empty(log_w.shape)
        for i in range(log_w.shape[0]):
            counts = box_count_vectors(total, lo[i], hi[i]).astype(float)
            weights = np.exp(saddle_constant(counts, total) - bd0(counts, math.log(total) + log_w[i]).sum(axis=-1))
            table = pref.advantages_for_counts(levels, counts, obj.group_size, obj.normalization, obj.std_ddof,
                                                obj.std_eps, obj.variance_eps, part)
            out[i] = table @ weights
        return out

    pref._window_terms.cache_clear()
    cold = [level_expectations(levels, log_w, obj, part=part) for obj, part in cases]
    assert pref._window_terms.cache_info().hits == 0
    warm = [level_expectations(levels, log_w, obj, part=part) for obj, part in reversed(cases)][::-1]
    assert pref._window_terms.cache_info().hits > 0
    for (obj, part), c, w in zip(cases, cold, warm):
        want = uncached(obj, part)
        assert np.array_equal(c, want) and np.array_equal(w, want), (obj.describe(), part)


def _binary_expectations_mp(xs, G: int, ddof: int, eps: float) -> np.ndarray:
    """``(E_0, E_1)`` for levels (0, 1) at each P(level 1) = x, summed at 40 digits from the definitions (SPEC 2):
    the other G - 1 members carry k ones, k ~ Binomial(G - 1, x); member 1's advantage is
    (r_1 - mean)/(std + eps), 0 when every reward ties."""
    import mpmath

    with mpmath.workdps(40):
        n = G - 1
        adv = [[mpmath.mpf(0)] * G for _ in (0, 1)]
        for k in range(G):
            for r1 in (0, 1):
                ones = k + r1
                if ones not in (0, G):
                    mean = mpmath.mpf(ones) / G
                    std = mpmath.sqrt(mean * (1 - mean) * (mpmath.mpf(G) / (G - 1) if ddof else 1)) + eps
                    adv[r1][k] = (r1 - mean) / std
        out = []
        for x in xs:
            xm = mpmath.mpf(x)
            p = (1 - xm) ** n                                  # P(k = 0), then the binomial recurrence in k
            ratio = xm / (1 - xm)
            totals = [mpmath.mpf(0), mpmath.mpf(0)]
            for k in range(G):
                totals[0] += p * adv[0][k]
                totals[1] += p * adv[1][k]
                p = p * (n - k) / (k + 1) * ratio
            out.append([float(t) for t in totals])
        return np.array(out)


@pytest.mark.parametrize("G", [66, 1000, 4096])
def test_binomial_window_matches_a_forty_digit_sum(G):
    """The binomial window's walk from the mode (two levels, G - 1 > 64) against an independent sum at 40 digits,
    near both vertices and in the bulk, with and without ddof 1 and std_eps."""
    xs = [1e-9, 3e-4, 0.37, 0.5, 0.93, 1 - 1e-7]
    lw = np.log(np.stack([1 - np.array(xs), xs], -1))
    for ddof, eps in ((0, 0.0), (1, 1e-4)):
        got = level_expectations(np.array([0.0, 1.0]), lw, Objective(beta=1.0, group_size=G, std_ddof=ddof,
                                                                     std_eps=eps))
        want = _binary_expectations_mp(xs, G, ddof, eps)
        np.testing.assert_allclose(got, want, rtol=2e-14, atol=1e-15 * np.abs(want).max())
