"""Input validation: bad input fails once, early, naming the value and what was expected."""

import math

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question


@pytest.mark.parametrize("kwargs,match", [
    (dict(pi_ref=[0.3, 0.6], rewards=[1, 0]), "sum to 1"),
    (dict(pi_ref=[-0.1, 1.1], rewards=[1, 0]), "non-negative"),
    (dict(pi_ref=[0.5, np.nan], rewards=[1, 0]), "finite"),
    (dict(pi_ref=[0.5, 0.5], rewards=[1, np.inf]), "finite"),
    (dict(pi_ref=[0.5, 0.5], rewards=[1, 0, 2]), "one entry per output"),
    (dict(pi_ref=[0.5, 0.5]), "exactly one"),
    (dict(pi_ref=[0.5, 0.5], rewards=[1, 0], preference=[[0.5, 0.5], [0.5, 0.5]]), "exactly one"),
    (dict(pi_ref=[0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.5, 0.4], [0, 1]]), "sum to 1"),
    (dict(pi_ref=[0.5, 0.5], reward_levels=[0, 0], reward_probs=[[0.5, 0.5], [0, 1]]), "distinct"),
    (dict(pi_ref=[0.5, 0.5], reward_levels=[0, 1], reward_probs=[[1, 0, 0], [0, 1, 0]]), "shape"),
    (dict(pi_ref=[0.5, 0.5], reward_probs=[[1, 0], [0, 1]]), "without reward_levels"),
    (dict(pi_ref=[0.5, 0.5], preference=[[0.5, 0.9], [0.3, 0.5]]), "M \\+ M\\^T = 1"),
    (dict(pi_ref=[0.5, 0.5], preference=[[0.5, 1.2], [-0.2, 0.5]]), r"\[0, 1\]"),
    (dict(pi_ref=[[0.5, 0.5]], rewards=[1, 0]), "1-d"),
])
def test_question_rejects(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        Question(**kwargs)


@pytest.mark.parametrize("kwargs,match", [
    (dict(beta=-1e-300), "beta"), (dict(beta=-1), "beta"), (dict(beta=math.inf), "beta"),
    (dict(beta=math.nan), "beta"), (dict(beta="1"), "beta"),
    (dict(beta=1, group_size=1), "group_size"), (dict(beta=1, group_size=2.5), "group_size"),
    (dict(beta=1, group_size=True), "group_size"), (dict(beta=1, group_size=-math.inf), "group_size"),
    (dict(beta=1, penalty="kl"), "penalty"), (dict(beta=1, normalization="none"), "normalization"),
    (dict(beta=1, std_ddof=2), "std_ddof"), (dict(beta=1, std_eps=-1e-4), "std_eps"),
])
def test_objective_rejects(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        Objective(**kwargs)


def test_error_is_a_value_error_and_names_the_value():
    with pytest.raises(ValueError, match=r"-0\.5"):
        Objective(beta=-0.5)


def test_question_is_immutable_and_pools_levels():
    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.0, 1.0])
    np.testing.assert_array_equal(q.reward_levels, [0.0, 1.0])
    with pytest.raises(AttributeError):
        q.pi_ref = [1, 0, 0]
    with pytest.raises(ValueError):
        q.pi_ref[0] = 1.0
    assert Objective(beta=1, group_size=8.0).group_size == 8
    assert Objective(beta=1, group_size=math.inf).is_large_group


def test_pairwise_preference_from_noisy_rewards():
    q = Question([0.5, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.2, 0.8], [0.6, 0.4]])
    M = q.pairwise_preference()
    # P(a > b) = 0.8 * 0.6, tie = 0.8*0.4 + 0.2*0.6
    assert M[0, 1] == pytest.approx(0.48 + 0.5 * (0.32 + 0.12))
    assert q.confidence_margin() == pytest.approx(0.8 - 0.4)


def test_question_pickles_to_an_equal_question():
    import pickle

    for q in (Question([0.2, 0.8], rewards=[1, 0]),
              Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4]], labels=["a", "b"]),
              Question([0.3, 0.3, 0.4], rewards=[1, 0, 0], answers=["AB", "AC", "D"]),
              Question([0.5, 0.5], preference=[[0.5, 0.7], [0.3, 0.5]])):
        back = pickle.loads(pickle.dumps(q))
        assert back == q and hash(back) == hash(q) and not (back != q)
    a = Question([0.2, 0.8], rewards=[1, 0])
    assert a != Question([0.2, 0.8], rewards=[1, 0.5]) and a != Question([0.3, 0.7], rewards=[1, 0])
    assert a != Question([0.2, 0.8], rewards=[1, 0], answers=["A", "B"]) and a != "a question"
    assert len({a, Question([0.2, 0.8], rewards=[1, 0])}) == 1


def test_a_question_pickled_under_the_old_private_name_still_loads():
    """Pickles written while the rebuilder was ``_question._rebuild_question`` name it so; the rename kept it."""
    import pickle

    q = Question([0.2, 0.8], rewards=[1, 0])
    data = pickle.dumps(q, protocol=4)
    assert b"rebuild_question" in data and b"_rebuild_question" not in data
    old = data.replace(b"\x8c\x10rebuild_question", b"\x8c\x11_rebuild_question")
    assert old != data and pickle.loads(old) == q
