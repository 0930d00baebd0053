"""tests/_count_field.py, the end check's field written from the definitions by group counts, against fields
enumerated over ordered groups (tests/_full_space_flow.gradient, and enumerations written here for RLOO,
REINFORCE++ and tie filtering): the same expected gradient, to rounding, with nothing of the library in either.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from _count_field import _loss_slope, _value, sequence_gradient
from _full_space_flow import gradient

from grpo_theory import Objective, Question

pytestmark = pytest.mark.slow

PI_REF = np.array([0.5, 0.3, 0.2])
REWARDS = np.array([1.0, 0.4, 0.0])


def _points(n: int = 4):
    rng = np.random.default_rng(7)
    for _ in range(n):
        p = PI_REF * np.exp(rng.normal(0.0, 1.2, PI_REF.size))
        yield p / p.sum()


def _centred(g: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``g - E_pi g``: what the flow sees (the gauge removed)."""
    return g - pi @ g


@pytest.mark.parametrize("G", [2, 3, 4, math.inf])
@pytest.mark.parametrize("placement", ["loss", "reward", "advantage"])
@pytest.mark.parametrize("estimator, log_clamp, value_clamp", [("k1", None, None), ("k2", 0.5, None),
                                                               ("k3", None, 0.4), ("k3", None, None)])
@pytest.mark.parametrize("normalization, ddof, eps", [("scale", 0, 1e-6), ("scale", 1, 1e-4), ("shift", 0, 1e-6)])
def test_group_advantage_matches_the_ordered_group_enumeration(G, placement, estimator, log_clamp, value_clamp,
                                                               normalization, ddof, eps):
    if ddof == 1 and G == 2 and normalization == "scale":
        ddof = 0
    q = Question(PI_REF, rewards=REWARDS)
    obj = Objective(beta=0.3, group_size=G, normalization=normalization, std_ddof=ddof, std_eps=eps,
                    kl_estimator=estimator, kl_placement=placement, kl_log_ratio_clamp=log_clamp,
                    kl_value_clamp=value_clamp)
    counts = sequence_gradient(q, obj)
    for pi in _points():
        want = gradient(pi, PI_REF, REWARDS, beta=0.3, G=G, normalization=normalization, ddof=ddof, eps=eps,
                        estimator=estimator, placement=placement, log_clamp=log_clamp, value_clamp=value_clamp)
        got = counts(pi)
        assert np.abs(_centred(got, pi) - _centred(want, pi)).max() < 1e-10, (pi, got, want)


def _family_enumeration(pi, G, beta, advantage, filter_ties):
    """``g_o`` by ordered groups, k1 in the loss: RLOO ``A_i = r_i - mean_{j != i} r_j``; REINFORCE++ ``(r_i - mean
    r)/s`` with ``s = sqrt((G-1)/G) sigma`` (the batch std of ``r_i - mean r``: a constant); tie filtering drops the
    tied groups' penalty terms: the penalty's gradient for ``o`` is ``beta d k1/d lr = beta`` times the probability
    that a group with member 1 at ``o`` does not tie."""
    K = pi.size
    mu = pi @ REWARDS
    sigma = math.sqrt(pi @ (REWARDS - mu) ** 2)
    adv_sum, untied = np.zeros(K), np.zeros(K)
    for grp in itertools.product(range(K), repeat=G):
        p = np.prod(pi[list(grp)])
        r = REWARDS[list(grp)]
        for i, o in enumerate(grp):
            if advantage == "rloo":
                a = r[i] - (r.sum() - r[i]) / (G - 1)
            else:
                a = (r[i] - r.mean()) / (math.sqrt((G - 1) / G) * sigma)
            adv_sum[o] += p * a / G
        if len(set(r)) > 1:
            untied[grp[0]] += p
    g = adv_sum / pi - beta * (untied / pi if filter_ties else 1.0) * np.ones(K)
    return g


@pytest.mark.parametrize("advantage", ["rloo", "reinforce_pp"])
@pytest.mark.parametrize("G, filter_ties", [(2, False), (3, True), (4, False), (4, True)])
def test_family_advantages_and_tie_filtering_match_an_enumeration(advantage, G, filter_ties):
    q = Question(PI_REF, rewards=REWARDS)
    obj = Objective(beta=0.3, group_size=G, advantage=advantage, filter_ties=filter_ties, kl_estimator="k1",
                    kl_placement="loss")
    counts = sequence_gradient(q, obj)
    for pi in _points():
        want = _family_enumeration(pi, G, 0.3, advantage, filter_ties)
        got = counts(pi)
        assert np.abs(_centred(got, pi) - _centred(want, pi)).max() < 1e-10, (pi, got, want)


@pytest.mark.parametrize("name, log_clamp, value_clamp", [("abs", None, None), ("abs", None, 0.3),
                                                          ("k2", 0.5, None), ("k3", 0.7, 0.2), ("k1", None, 0.3)])
def test_the_loss_slope_is_the_derivative_of_the_value_and_its_mollified_form_is_within_the_band(
        name, log_clamp, value_clamp):
    """Off the jumps the slope is ``d est/d lr`` (central differences of the clamped value); smoothed over ``w``, it
    differs from it by at most ``e^(-2 dist/w)`` (dist: to the nearest jump) times the slope's scale."""
    lr = np.linspace(-1.3, 1.3, 2601)
    h, w = 1e-7, 1e-4
    numeric = (_value(lr + h, name, log_clamp, value_clamp) - _value(lr - h, name, log_clamp, value_clamp)) / (2 * h)
    exact = _loss_slope(lr, name, log_clamp, value_clamp, 0.0)
    jumps = [0.0] if name == "abs" else []
    jumps += [] if log_clamp is None else [-log_clamp, log_clamp]
    if value_clamp is not None:
        jumps += [x for x in lr[1:][np.diff(np.abs(_value(lr, name, None, None)) > value_clamp)]]
    dist = np.min(np.abs(lr[:, None] - np.array(jumps)[None, :]), axis=1) if jumps else np.full(lr.size, np.inf)
    far = dist > 2e-3
    assert np.abs(exact[far] - numeric[far]).max() < 1e-6
    smooth = _loss_slope(lr, name, log_clamp, value_clamp, w)
    bound = 3.0 * np.exp(-2.0 * np.maximum(dist - 2e-3, 0.0) / w) + 1e-12
    assert np.all(np.abs(smooth - exact) <= bound)
    assert np.all(np.isfinite(smooth)) and np.abs(smooth).max() <= np.abs(exact).max() * (1 + 1e-9)
