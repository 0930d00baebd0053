"""The engine's fast paths of issue 21's KL fuzz work, each held to the slower path it replaced.

* :func:`grpo_theory.problem.shaped_question` keeps only the shaped levels some output can yield (a
  level of probability 0 under every output weighs 0 in every group): the same ``P_G`` as the question
  with all ``K x L`` shifted levels, which is what it built before;
* :func:`grpo_theory._numerics.integrate_until_slow` stops chatter that goes nowhere (a Filippov point of
  a discontinuous field) instead of spending its whole step budget there, and only that.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question, _numerics, reward_preference
from grpo_theory.problem import shaped_question


def _all_shifted_levels(q: Question, shift: np.ndarray) -> Question:
    """The question with every ``(output, level)`` pair shifted, dead ones included (the old construction)."""
    levels = q.reward_levels[None, :] - shift[:, None]
    uniq, inverse = np.unique(levels, return_inverse=True)
    probs = np.zeros((q.n_outputs, uniq.size))
    np.add.at(probs, (np.repeat(np.arange(q.n_outputs), levels.shape[1]), inverse.ravel()), q.reward_probs.ravel())
    return Question(q.pi_ref, reward_levels=uniq, reward_probs=probs)


@pytest.mark.parametrize("G", [2, 5, 8, math.inf])
@pytest.mark.parametrize("normalization", ["scale", "shift"])
def test_shaped_question_without_dead_levels_has_the_same_preference(G, normalization):
    rng = np.random.default_rng(7)
    det = Question([0.1, 0.2, 0.3, 0.4], rewards=[0.0, 0.4, 0.6, 0.8])
    law = Question([0.3, 0.3, 0.4], reward_levels=[0.0, 0.5, 1.0],
                   reward_probs=[[0.2, 0.0, 0.8], [0.1, 0.9, 0.0], [0.0, 0.3, 0.7]])
    obj = Objective(beta=0.3, group_size=G, normalization=normalization, std_eps=1e-4)
    for q in (det, law):
        for _ in range(3):
            shift = rng.normal(scale=0.3, size=q.n_outputs)
            pi = rng.dirichlet(np.ones(q.n_outputs))
            fast, full = shaped_question(q, shift), _all_shifted_levels(q, shift)
            assert fast.reward_levels.size == int(np.count_nonzero(q.reward_probs))     # K for deterministic
            assert full.reward_levels.size > fast.reward_levels.size
            np.testing.assert_allclose(reward_preference(fast, obj, pi), reward_preference(full, obj, pi),
                                       rtol=0, atol=1e-13)


def test_chatter_at_a_sliding_point_ends_early_where_the_full_budget_would(monkeypatch):
    """``dy/dt = -sign(y)``: the flow reaches 0 at t = 1 and then chatters across it. The chatter test
    stops within a few windows of steps, at the end the whole budget of steps (the old behaviour, the
    tests switched off) reaches: 0 to 1e-9. Where one coordinate chatters while the other creeps on (a
    sliding motion, at the tiny steps the chatter forces), the stall test stops it within 1e-4 (relative)
    of where the whole budget ends, with far fewer evaluations."""
    def run(y0, max_steps=20_000):
        calls = {"n": 0}

        def rhs(y):
            calls["n"] += 1
            return -np.sign(y)

        return _numerics.integrate_until_slow(rhs, np.array(y0), 1e4, None, max_steps), calls["n"]

    y, n = run([1.0])
    assert abs(float(y[0])) < 1e-9 and n < 4_000
    creep, n_creep = run([1.0, -0.5], 6_000)
    monkeypatch.setattr(_numerics, "_CHATTER_WINDOW", 10**9)
    y_full, n_full = run([1.0], 6_000)
    assert n_full > 12_000 and abs(float(y_full[0])) < 1e-9
    creep_full, n_creep_full = run([1.0, -0.5], 6_000)
    assert n_creep < n_creep_full / 5
    assert np.max(np.abs(creep - creep_full)) < 1e-4 * (1 + np.max(np.abs(creep)))


@pytest.mark.parametrize("speed", [None, 1e-6])
def test_smooth_flows_are_not_cut_short_by_the_chatter_test(speed):
    """A slowly decaying fast spiral (net move per window far below the path length, as in chatter, but
    going somewhere) and a plain decay run as before: the ends match the exact solution."""
    A = np.array([[-0.05, 10.0], [-10.0, -0.05]])
    y = _numerics.integrate_until_slow(lambda y: A @ y, np.array([1.0, 0.0]), 60.0, speed)
    t = 60.0
    exact = math.exp(-0.05 * t) * np.array([math.cos(10 * t), -math.sin(10 * t)])
    if speed is None:
        np.testing.assert_allclose(y, exact, atol=1e-5)
    else:                                     # stopped where the spiral is slower than 1e-6, or at t = 60
        assert np.linalg.norm(y) <= 1.0
    y = _numerics.integrate_until_slow(lambda y: -y, np.array([1.0]), 30.0, None)
    assert abs(float(y[0]) - math.exp(-30.0)) < 1e-8


def test_tree_conditionals_all_nodes_at_once_equal_node_by_node():
    """``TreeProblem.log_cond`` normalises every node's edges at once (``reduceat``): the same as
    ``logsumexp`` node by node to 2e-15, for logits up to 300 in size, on a three-level tree."""
    from grpo_theory._numerics import logsumexp
    from grpo_theory.solvers.tree import TreeProblem

    rng = np.random.default_rng(0)
    answers = [("A", "B", "C"), ("A", "B", "D"), ("A", "E"), ("F", "G"), ("F", "H", "I"), ("F", "H", "J"), ("K",)]
    q = Question(rng.dirichlet(np.ones(7)), rewards=rng.random(7), answers=answers)
    tp = TreeProblem(q, Objective(beta=0.3, level="token"))
    for scale in (1.0, 30.0, 300.0):
        for _ in range(50):
            x = rng.normal(scale=scale, size=tp.tree.n_free)
            theta = np.zeros(len(tp.tree.edges))
            theta[tp.free] = x
            ref = np.concatenate([theta[s] - logsumexp(theta[s]) for s in tp.tree.node_slices])
            np.testing.assert_allclose(tp.log_cond(x), ref, rtol=2e-15, atol=2e-15)
