"""preference.expectations_evaluator: the set-up-once E(w) a flow calls, against level_expectations to the bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from grpo_theory import Objective, Question
from grpo_theory.preference import expectations_evaluator, level_expectations
from grpo_theory.preference_sums import binomial_walk, binomial_window_expectations
from grpo_theory.solvers import ClassProblem


@pytest.mark.parametrize("levels", [[0.0, 1.0], [0.0, 0.5, 1.0], [0.0, 2.0], [-1.0, 0.5, 3.0], [0.0, 0.2, 0.7, 1.0]])
@pytest.mark.parametrize("G", [2, 3, 8, 16, 64, 65, math.inf])      # 65: past the exact enumeration
def test_expectations_evaluator_is_level_expectations_to_the_bit(levels, G):
    rng = np.random.default_rng(len(levels) * 1000 + (0 if math.isinf(G) else G))
    v = np.array(levels)
    for kw in ({}, dict(std_ddof=1), dict(std_eps=1e-4), dict(variance_eps=1e-3), dict(normalization="shift"),
               dict(advantage="rloo")):
        obj = Objective(beta=0.5, group_size=G, **kw)
        f = expectations_evaluator(v, obj)
        for shape in [(), (5,), (3, 4)]:
            lw = np.log(rng.dirichlet(np.ones(v.size), size=shape))
            if shape:
                lw[..., 0][rng.random(shape) < 0.3] = -np.inf          # a level the policy cannot reach
                lw -= logsumexp(lw, axis=-1, keepdims=True)            # the rest renormalised: a law again
            assert np.array_equal(f(lw), level_expectations(v, lw, obj)), (levels, G, kw, shape)


@pytest.mark.parametrize("levels", [[0.0, 1.0], [-3.3, 0.7], [0.0, 1e7]])
@pytest.mark.parametrize("G", [66, 1000, 4096])                    # two levels past 65: the binomial window
def test_two_level_windows_are_level_expectations_to_the_bit(levels, G):
    rng = np.random.default_rng(G)
    v = np.array(levels)
    for kw in ({}, dict(std_ddof=1), dict(std_eps=1e-4), dict(variance_eps=1e-3), dict(normalization="shift")):
        obj = Objective(beta=0.5, group_size=G, **kw)
        f = expectations_evaluator(v, obj)
        for shape in [(), (5,), (3, 8)]:
            lw = np.log(rng.dirichlet(np.ones(2) * 0.3, size=shape))
            if shape:
                u = rng.random(shape)
                lw[u < 0.2] = [-np.inf, 0.0]                            # a vertex, either one
                lw[u > 0.9] = [0.0, -np.inf]
            assert np.array_equal(f(lw), level_expectations(v, lw, obj)), (levels, G, kw, shape)



@pytest.mark.parametrize("G", [66, 1000, 4096, 10_000])
def test_a_single_policy_window_is_its_row_in_a_batch_to_the_bit(G):
    # one policy places its window with Python numbers, a batch with arrays: a row repeated in a batch has the
    # batch's (its own) window, so the two must agree to the bit, at the mode's edges and at the clip of z too
    walk = binomial_walk((-0.3, 1.7), G, "scale", 0, 1e-6, 0.0, "mean")
    rng = np.random.default_rng(G)
    w0 = np.concatenate([rng.random(40), 10.0 ** rng.uniform(-320, -1, 20), 1 - 10.0 ** rng.uniform(-16, -1, 20),
                         [0.0, 1.0, 0.5, (G // 2) / G, 1 / G]])
    with np.errstate(divide="ignore"):
        rows = np.log(np.stack([w0, 1 - w0], axis=-1))
    for row in rows:
        one = binomial_window_expectations(row[None, :], walk)
        assert np.array_equal(one, binomial_window_expectations(np.stack([row, row]), walk)[:1]), row

def test_class_problem_drift_unchanged_by_the_evaluator():
    # the drift through the evaluator against the drift through level_expectations itself
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    for obj in (Objective(beta=0.3, group_size=8), Objective(beta=0.3, group_size=math.inf, penalty="direct")):
        cp = ClassProblem(q, obj)
        log_pi = np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=7))
        log_w = np.log(np.exp(log_pi) @ cp.R)
        expected = level_expectations(q.reward_levels, log_w, obj) @ cp.R.T
        assert np.array_equal(cp.class_preference(log_pi), expected)


def test_bd0_takes_each_form_only_where_it_is_used_and_keeps_every_bit():
    # bd0's definition (its docstring): Loader's form where M > 1e-280, the plain form below, M itself at x = 0, both
    # forms written out here on every entry; the library computes each only on the entries (columns) that take it
    from grpo_theory._multinomial import bd0, box_count_vectors, window_bounds

    def both_forms(x, log_mean):
        with np.errstate(under="ignore"):
            mean = np.exp(log_mean)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            d = (x - mean) / mean
            loader = mean * ((1.0 + d) * np.log1p(d) - d)
            plain = x * (np.log(np.where(x > 0, x, 1.0)) - log_mean) + mean - x
        return np.where(x == 0, mean, np.where(mean > 1e-280, loader, plain))

    rng = np.random.default_rng(7)
    forms = set()
    for trial in range(60):
        L, total = int(rng.integers(2, 5)), int(rng.choice([65, 300, 999]))
        log_w = rng.normal(size=L) * rng.choice([1.0, 30.0, 800.0])
        log_w -= np.logaddexp.reduce(log_w)
        if trial % 5 == 0:
            log_w[rng.integers(L)] = rng.choice([-np.inf, np.nan, -700.0])
        others = min(total, 120 if L < 4 else 50)          # the window's size only: the means are total's
        lo, hi = window_bounds(np.where(np.isfinite(log_w), log_w, -700.0), others)
        counts = box_count_vectors(others, lo, hi).astype(float)
        log_mean = math.log(total) + log_w
        if trial % 3 == 0:                                 # a batch of policies (log_multinomial_weights' form)
            log_mean = log_mean - np.abs(rng.normal(size=(3, 1, L))) * rng.choice([0.0, 400.0])
        with np.errstate(over="ignore"):
            tiny = np.exp(log_mean) > 1e-280
        forms.add("mixed" if tiny.any() and not tiny.all() else "one")
        assert np.array_equal(bd0(counts, log_mean), both_forms(counts, log_mean), equal_nan=True), (trial, log_w)
    assert forms == {"mixed", "one"}


def _outcome(f, *args):
    """``f(*args)``, or the class and message of what it raised."""
    try:
        return f(*args)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)


def _same(a, b) -> bool:
    return (a.dtype == b.dtype and a.tobytes() == b.tobytes()) if isinstance(a, np.ndarray) and \
        isinstance(b, np.ndarray) else a == b


def _evaluator_cases():
    det = Question([0.2, 0.5, 0.3, 0.0], rewards=[1.0, 0.4, 0.4, 0.0])            # a tie and an absent answer
    noisy = Question([0.3, 0.3, 0.4], reward_levels=[0.0, 0.5, 1.0], reward_probs=[[0.2, 0.3, 0.5], [0.6, 0.4, 0.0],
                                                                                    [0.1, 0.1, 0.8]])
    pref = Question([0.5, 0.25, 0.25], preference=[[0.5, 0.8, 0.6], [0.2, 0.5, 0.4], [0.4, 0.6, 0.5]])
    objs = [Objective(beta=0.4, group_size=G, penalty=pen, normalization=norm)
            for G in (2, 8, 100, math.inf) for pen in ("reverse", "direct") for norm in ("scale", "shift")]
    objs += [Objective(beta=0.7, group_size=G, kl_estimator=est, kl_placement=place, std_eps=1e-4, **extra)
             for G, est, place, extra in [
                 (4, "k1", "loss", {}), (6, "k3", "advantage", {}), (3, "k2", "reward", {}), (math.inf, "k3_ratio", "loss", {}),
                 (8, "k3_plus", "loss", dict(kl_value_clamp=10.0)), (2, "abs", "loss", {}), (4, "k3", "reward", {}),
                 (6, "k1", "loss", dict(kl_log_ratio_clamp=0.5)), (4, "k2", "loss", dict(advantage="rloo")),
                 (3, "k3", "advantage", dict(advantage="reinforce_pp")), (4, "k1", "loss", dict(filter_ties=True)),
                 (8, "k2", "advantage", dict(entropy_coef=0.1))]]
    return [(q, obj) for q in (det, noisy) for obj in objs] + [(pref, Objective(beta=0.4, group_size=2)),
                                                               (pref, Objective(beta=0.4, group_size=2, kl_placement="reward",
                                                                                kl_estimator="k1"))]


def test_gradient_and_preference_evaluators_are_the_per_call_functions_to_the_bit():
    # a flow's set-up-once gradient (and P_G) against output_gradient (reward_preference) called afresh: the same
    # bytes at random policies, on faces and at pi_ref, and the same error for a policy that is not one
    from grpo_theory.preference import preference_evaluator, reward_preference
    from grpo_theory.solvers import output_gradient
    from grpo_theory.solvers.gradient import gradient_evaluator

    rng = np.random.default_rng(11)
    compared = 0
    for q, obj in _evaluator_cases():
        grad, pref = gradient_evaluator(q, obj), preference_evaluator(q, obj)
        K = q.n_outputs
        points = [q.pi_ref, np.full(K, np.nan), np.full(K, 0.5), np.ones(K + 1) / (K + 1), np.eye(K)[0]]
        for _ in range(6):
            p = q.pi_ref * np.exp(rng.normal(size=K) * rng.choice([0.3, 4.0, 40.0]))
            p[rng.integers(K)] *= rng.choice([1.0, 0.0])
            points.append(p / p.sum())
        for p in points:
            for fast, slow in ((grad, output_gradient), (pref, reward_preference)):
                a, b = _outcome(fast, p), _outcome(slow, q, obj, p)
                assert _same(a, b), (q.n_outputs, obj.describe(), p, a, b)
                compared += 1
    assert compared == 2 * len(_evaluator_cases()) * 11


def test_the_full_space_end_flow_is_logit_flow_to_the_bit():
    # solvers.full_space_end integrates logit_flow with the gradient set up once: the same field, and the same
    # refusal of a trial point with a NaN logit
    from grpo_theory.errors import InvalidInputError
    from grpo_theory.solvers.full_space import FROZEN_GAP, logit_flow
    from grpo_theory.solvers.full_space_end import _rhs

    rng = np.random.default_rng(5)
    for q, obj in _evaluator_cases()[::3]:
        support = np.flatnonzero(q.pi_ref > 0)
        rhs = _rhs(q, obj, support)
        for scale in (0.5, 5.0, 800.0):                     # 800: an answer below FROZEN_GAP, held still
            th = np.log(q.pi_ref[support]) + rng.normal(size=support.size) * scale
            frozen = th - th.max() < FROZEN_GAP
            expected = _outcome(lambda: np.where(frozen, 0.0, logit_flow(q, obj, np.where(
                frozen, th.max() + FROZEN_GAP, th), support)))
            assert _same(_outcome(rhs, th), expected), (obj.describe(), th)
        th[0] = np.nan
        with pytest.raises(InvalidInputError, match="theta must hold finite numbers"):
            rhs(th)
