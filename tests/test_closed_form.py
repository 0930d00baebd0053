"""The properties of Eq. 14 and 15 and the direct-penalty forms (SPEC section 4)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_theory import InvalidInputError, Objective, Question, closed_form, stationary_policy

p_st = st.floats(1e-6, 1 - 1e-6)
beta_st = st.floats(1e-3, 1e3)


@settings(max_examples=200)
@given(p=p_st, beta=beta_st, gamma=st.floats(0.01, 1.0))
def test_eq14_solves_its_equation_and_bounds(p, beta, gamma):
    x = float(closed_form.binary_pairwise(p, beta, gamma))
    assert beta * (x - p) == pytest.approx(gamma * x * (1 - x), abs=1e-12 * max(1, beta))
    assert x >= max(1 - beta / gamma, p) - 1e-12 and x <= 1


def test_eq14_monotone_limits_and_special_values():
    p = np.linspace(0.01, 0.99, 99)
    b = np.logspace(-3, 3, 200)
    X = closed_form.binary_pairwise(p[None, :], b[:, None])
    assert np.all(np.diff(X, axis=0) <= 1e-15)          # decreasing in beta
    assert np.all(np.diff(X, axis=1) > 0)               # increasing in p
    g = np.linspace(0.05, 1, 50)
    assert np.all(np.diff(closed_form.binary_pairwise(0.3, 0.5, g)) > 0)   # increasing in gamma
    np.testing.assert_allclose(closed_form.binary_pairwise(p, 1e-9), 1, atol=1e-8)
    np.testing.assert_allclose(closed_form.binary_pairwise(p, 1e9), p, atol=1e-8)
    np.testing.assert_allclose(closed_form.binary_pairwise(p, 0.7, 0.7), np.sqrt(p), atol=1e-14)
    np.testing.assert_allclose(closed_form.binary_pairwise(p, 0.7, 0.0), p)    # a tie
    # discontinuity at p = 0 for beta < gamma (limit 1 - beta/gamma), none for beta >= gamma
    assert closed_form.binary_pairwise(0.0, 0.25) == 0.0
    assert closed_form.binary_pairwise(1e-12, 0.25) == pytest.approx(0.75, abs=1e-9)
    assert closed_form.binary_pairwise(1e-12, 2.0) == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=200)
@given(p=p_st, beta=beta_st)
def test_eq15_solves_its_equation_and_bounds(p, beta):
    x = float(closed_form.binary_large_group(p, beta))
    if 1 - x > 1e-8:   # sqrt(x (1-x)) from a double x is meaningless within a few ulps of 1
        assert beta * (x - p) == pytest.approx(np.sqrt(x * (1 - x)), abs=1e-9)
    assert x >= max(1 / (1 + beta**2), p) - 1e-12
    assert 1 / (1 + beta**2) > 1 - beta


def test_eq15_discontinuous_at_zero_for_every_beta():
    for beta in (0.1, 1.0, 10.0):
        assert closed_form.binary_large_group(0.0, beta) == 0.0
        assert closed_form.binary_large_group(1e-14, beta) == pytest.approx(1 / (1 + beta**2), rel=1e-6)
    b = np.logspace(-2, 2, 100)
    assert np.all(np.diff(closed_form.binary_large_group(0.4, b)) < 0)


@settings(max_examples=200)
@given(p=p_st, beta=beta_st, gamma=st.floats(0.0, 1.0))
def test_direct_pairwise_is_tilted_logit_and_continuous(p, beta, gamma):
    x = float(closed_form.binary_pairwise_direct(p, beta, gamma))
    # Recovering logit(x) from a double x is well conditioned only away from 1 (1 - x needs digits).
    if 1e-300 < x < 1 - 1e-6:
        assert np.log(x / (1 - x)) - np.log(p / (1 - p)) == pytest.approx(gamma / beta, rel=1e-9, abs=1e-9)
    # continuous at p = 0: the limit is 0, and small p gives a proportionally small x
    assert closed_form.binary_pairwise_direct(0.0, beta, gamma) == 0.0
    tiny = float(closed_form.binary_pairwise_direct(1e-300, beta, gamma))
    assert tiny == 0.0 or np.log(tiny) <= np.log(1e-300) + gamma / beta + 1e-9


def test_turning_point_is_the_minimum_of_h():
    for beta in (0.3, 1.0, 4.0):
        x = np.linspace(1e-4, 1 - 1e-6, 2_000_001)
        h = closed_form.large_group_direct_h(x, 0.2, beta)
        assert x[np.argmin(h)] == pytest.approx(float(closed_form.large_group_direct_turning_point(beta)),
                                               abs=1e-5)


def test_vectorised_over_a_million_points_matches_the_solver():
    """One call over a million pi_ref values; a sample of them checked against the numerical solver."""
    p = np.random.default_rng(0).uniform(0.01, 0.99, 10**6)
    got = closed_form.binary_pairwise(p, 0.5)
    assert got.shape == (10**6,)
    for i in np.random.default_rng(1).choice(p.size, 12, replace=False):
        q = Question([p[i], 1 - p[i]], rewards=[1.0, 0.0])
        assert abs(got[i] - stationary_policy(q, Objective(beta=0.5, group_size=2)).pi[0]) < 1e-9


@pytest.mark.parametrize("fn,args", [
    (closed_form.binary_pairwise, (1.2, 0.5)), (closed_form.binary_pairwise, (0.5, 0.0)),
    (closed_form.binary_pairwise, (0.5, 0.5, 1.5)), (closed_form.binary_large_group, (0.5, -1.0)),
    (closed_form.binary_large_group, (np.nan, 1.0)),
])
def test_bad_arguments_are_rejected(fn, args):
    with pytest.raises(InvalidInputError):
        fn(*args)
