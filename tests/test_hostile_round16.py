"""The sixteenth hostile audit's library findings, fixed by rule (docs/reliability.md, "Hostile input, sixteenth
round"): each refusal names the argument, the value and what was expected; valid calls compute what they did."""

from __future__ import annotations

import numpy as np
import pytest

from grpo_theory import Objective, Question
from grpo_theory.errors import InvalidInputError

Q2 = Question([0.3, 0.7], rewards=[1.0, 0.0])


def _policy_calls():
    from grpo_theory import monte_carlo_preference, stationarity_residual
    from grpo_theory.proximal import proximal_map
    from grpo_theory.solvers.baselines import nash_residual
    from grpo_theory.solvers.full_space import full_space_flow, logit_newton_step, perturbed_ends

    o = Objective(beta=0.5)
    return {
        "nash_residual": lambda pi: nash_residual(Q2, 0.5, pi),
        "stationarity_residual": lambda pi: stationarity_residual(Q2, o, pi),
        "full_space_flow": lambda pi: full_space_flow(Q2, o, pi, t_max=1.0),
        "monte_carlo_preference": lambda pi: monte_carlo_preference(Q2, Objective(beta=0.5, group_size=3), pi,
                                                                    n_groups=10),
        "proximal_map step": lambda pi: proximal_map(Q2, Objective(beta=0.8))(pi),
        "perturbed_ends": lambda pi: perturbed_ends(Q2, o, pi),
        "logit_newton_step": lambda pi: logit_newton_step(Q2, o, pi),
    }


@pytest.mark.parametrize("name", list(_policy_calls()))
def test_a_policy_of_the_wrong_length_is_refused_naming_it_and_k(name):
    # the audit's traceback: nash_residual(q, beta, [1.0]) ended in NumPy's matmul ValueError
    with pytest.raises(InvalidInputError, match=r"pi0? must have K=2 entries .*got 1: \[1\.0\]"):
        _policy_calls()[name]([1.0])


def test_a_policy_of_the_right_length_is_measured_as_before():
    from grpo_theory.solvers.baselines import nash_residual

    # max |pi - pi_ref e^{P(o > pi)/beta}/Z| at pi_ref: P(a > pi) = 0.85, P(b > pi) = 0.35 (ties half)
    z = np.log([0.3, 0.7]) + np.array([0.85, 0.35]) / 0.5
    want = abs(0.3 - np.exp(z[0]) / np.exp(z).sum())
    assert nash_residual(Q2, 0.5, [0.3, 0.7]) == pytest.approx(want, rel=1e-12)


def test_the_full_space_flow_refuses_more_answers_than_its_dense_solve_takes():
    # the audit's hang: 10,000 answers held stationary_policy in SciPy's HYBRD for over 14 minutes
    from grpo_theory.solvers.full_space_end import full_space_end

    k = 2_001
    q = Question(np.full(k, 1 / k), rewards=(np.arange(k) % 2).astype(float))
    with pytest.raises(InvalidInputError, match=r"2,001 outputs.*at most 2,000"):
        full_space_end(q, Objective(beta=0.4))


def test_empty_counts_say_they_are_empty():
    from grpo_theory.predict import samples_from_counts

    with pytest.raises(InvalidInputError, match="n and correct are empty"):
        samples_from_counts([], [])


def test_labels_name_each_output_once():
    with pytest.raises(InvalidInputError, match=r"labels must name each output once.*'a' 2 times"):
        Question([0.3, 0.7], [1.0, 0.0], labels=["a", "a"])
    assert Question([0.3, 0.7], [1.0, 0.0], labels=["a", "b"]).labels == ("a", "b")


def test_register_names_its_argument():
    from grpo_theory import variants

    with pytest.raises(InvalidInputError, match=r"entry must be an instance of one of .*got 'None' \(NoneType\)"):
        variants.register(None)


def test_a_windows_continuation_in_a_verl_script_is_named(tmp_path):
    from grpo_theory.integrations.verl import read_verl_config

    path = tmp_path / "run.bat"
    path.write_text("python -m verl.trainer.main_ppo ^\n  algorithm.adv_estimator=grpo ^\n  actor_rollout_ref.rollout.n=4\n")
    with pytest.raises(InvalidInputError, match=r"ends in '\^'.*cmd\.exe"):
        read_verl_config(path)


# ---- the advantage estimators' levels in any order (the round's 'accepted' rloo row; pass@k was silently wrong)

def _estimators():
    from grpo_theory import advantage as adv
    from grpo_theory import preference

    return {"group (preference.level_expectations)": ("group", preference.level_expectations),
            "rloo (advantage.level_expectations)": ("rloo", adv.level_expectations),
            "reinforce_pp (its hook)": ("reinforce_pp", adv.reinforce_pp_expectations),
            "rloo (its hook)": ("rloo", adv.rloo_expectations)}


@pytest.mark.parametrize("G", [4, float("inf")])
@pytest.mark.parametrize("part", ["mean", "positive", "negative"])
@pytest.mark.parametrize("name", list(_estimators()))
def test_levels_in_another_order_give_the_same_expectations_in_that_order(name, part, G):
    advantage, fn = _estimators()[name]
    obj = Objective(beta=1.0, group_size=G, advantage=advantage)
    v, log_w = np.array([0.0, 0.5, 2.0]), np.log([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    for perm in ([2, 0, 1], [2, 1, 0], [1, 2, 0]):
        shuffled = fn(v[perm], log_w[:, perm], obj, part=part)
        np.testing.assert_allclose(shuffled, fn(v, log_w, obj, part=part)[:, perm], rtol=0, atol=1e-15)


def test_rloo_on_the_audits_unsorted_levels_is_v_minus_the_mean():
    from grpo_theory.advantage import rloo_expectations

    v, w = np.array([2.0, 0.5, 0.0]), np.array([0.2, 0.5, 0.3])
    got = rloo_expectations(v, np.log([w]), Objective(beta=1.0, group_size=4, advantage="rloo"))
    np.testing.assert_allclose(got[0], v - (2.0 * 0.2 + 0.5 * 0.5), rtol=0, atol=1e-15)   # (1.35, -0.15, -0.65)


@pytest.mark.parametrize("G", [3, 5, float("inf")])
def test_pass_at_k_takes_the_higher_level_as_pass_in_either_order(G):
    """Given (pass, fail) = (1, 0) the table was read as (fail, pass): the pass level got the fail's negative E."""
    from grpo_theory.advantage import pass_at_k_expectations
    from grpo_theory.preference import level_expectations

    k, f = 2, 0.7                                  # fail probability 0.7
    obj = Objective(beta=1.0, group_size=G, advantage="pass_at_k", pass_k=k)
    for fn in (pass_at_k_expectations, level_expectations):
        given = fn(np.array([1.0, 0.0]), np.log([[1 - f, f]]), obj)[0]           # (pass, fail)
        e_fail, e_pass = fn(np.array([0.0, 1.0]), np.log([[f, 1 - f]]), obj)[0]
        assert given.tolist() == [e_pass, e_fail]
        assert e_pass > 0 > e_fail
    if G == float("inf"):                           # the large-G pass@k advantage from its definition
        s = np.sqrt((1 - f**k) * f**k)
        np.testing.assert_allclose([e_fail, e_pass], [-(1 - f) * f ** (k - 1) / s, f**k / s], rtol=1e-14)


@pytest.mark.parametrize("call", ["preference", "advantage"])
def test_a_level_given_twice_is_refused_naming_it(call):
    from grpo_theory import advantage as adv
    from grpo_theory import preference

    fn, name = (preference.level_expectations, "levels") if call == "preference" else (adv.level_expectations, "v")
    with pytest.raises(InvalidInputError, match=rf"^{name} must be distinct values, got 0 twice: \[0.0, 1.0, 0.0\]"):
        fn(np.array([0.0, 1.0, 0.0]), np.log([[0.2, 0.5, 0.3]]), Objective(beta=1.0, group_size=4, advantage="rloo"))
