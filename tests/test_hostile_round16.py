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
