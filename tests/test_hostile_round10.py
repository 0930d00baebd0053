"""Regression tests of the tenth hostile audit's findings (docs/reliability.md, "Hostile input, tenth round"; the
audit's cases in ``tests/hostile_audit_round10_*.py``). Each is a rule, tested through the entry point that uses it;
no expected number comes from the package."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question


# ---------------------------------------------------------------- dynamics.flow: pi0 is the policy at time 0
@pytest.mark.parametrize("q, obj", [
    (Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0.2, group_size=3)),
    (Question([0.15, 0.25, 0.2, 0.4], rewards=[1.0, 0.0, 0.0, 0.5], answers=["aa$", "ab$", "b$", "c$"]),
     Objective(beta=0.5, group_size=3, level="token", loss_type="grpo")),            # the answer tree's flow
])
def test_flow_reports_the_policy_at_the_times_asked_counted_from_0(q, obj):
    from grpo_theory import dynamics

    late = dynamics.flow(q, obj, q.pi_ref, [1, 2], with_points=False)
    full = dynamics.flow(q, obj, q.pi_ref, [0, 1, 2], with_points=False)
    assert late.pi.shape == (2, q.n_outputs) and late.t.tolist() == [1, 2]
    np.testing.assert_allclose(late.pi, full.pi[1:], rtol=0, atol=1e-7)
    assert np.max(np.abs(late.pi[0] - q.pi_ref)) > 1e-3    # at t = 1 the policy has moved from pi0


def test_flow_refuses_a_negative_time_naming_it():
    from grpo_theory import dynamics

    with pytest.raises(InvalidInputError, match=r"t must be >= 0.*-1"):
        dynamics.flow(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0.2, group_size=3), [0.3, 0.7],
                      [-1, 0, 1])


# ---------------------------------------------------------------- convergence
def test_largest_drop_refuses_steps_that_do_not_increase():
    from grpo_theory.convergence import largest_drop

    with pytest.raises(InvalidInputError, match=r"steps must be strictly increasing, got steps\[0\] = 2 then "
                                                r"steps\[1\] = 1"):
        largest_drop([2, 1, 0], [0.5, 0.4, 0.1])
    with pytest.raises(InvalidInputError, match=r"steps must be strictly increasing, got steps\[1\] = 1 then "
                                                r"steps\[2\] = 1"):
        largest_drop([0, 1, 1], [0.5, 0.4, 0.1])
    assert largest_drop([0, 1, 2], [0.5, 0.4, 0.1]).size == pytest.approx(0.4)   # 0.5 - 0.1


def test_check_trajectories_names_reward_when_reward_has_the_wrong_length():
    from grpo_theory.convergence import check_trajectories

    steps = np.arange(20.0)
    with pytest.raises(InvalidInputError, match=r"^reward of shape \(5,\) .*steps, \(20,\)") as exc:
        check_trajectories(steps, np.full(20, 0.5), reward=np.ones(5))
    assert "values" not in str(exc.value)


# ---------------------------------------------------------------- kl: the wrong object is shown
def test_kl_coefficient_names_a_wrong_objective_by_its_value():
    from grpo_theory import kl

    with pytest.raises(InvalidInputError, match=r"got str 'k3'"):
        kl.coefficient("k3", [0.1])


# ---------------------------------------------------------------- the command line
def test_an_output_file_path_ending_in_a_separator_is_refused(tmp_path):
    from grpo_theory import _argtypes as check

    with pytest.raises(argparse.ArgumentTypeError, match=r"d\.md/.*separator"):
        check.writable_file(str(tmp_path / "d.md") + "/")
    assert check.writable_file(str(tmp_path / "d.md")) == str(tmp_path / "d.md")


def test_a_kernel_file_of_one_dimension_is_refused_naming_option_and_file(tmp_path):
    from grpo_theory.cli_runs import _load_kernel

    path = tmp_path / "k.npy"
    np.save(path, np.ones(60))
    with pytest.raises(InvalidInputError, match=r"--kernel '.*k\.npy'.*\(60,\)"):
        _load_kernel(str(path))
    np.save(path, np.eye(3))
    assert _load_kernel(str(path)).shape == (3, 3)


# ---------------------------------------------------------------- the measured samples' errors name their file
def test_graded_measured_samples_are_refused_naming_the_file_and_option(tmp_path):
    from grpo_theory.cli_runs import _as_options
    from grpo_theory.predict import read_samples, samples_from_counts
    from grpo_theory.predict.finite import match_measured

    path = tmp_path / "m2.csv"
    path.write_text("prompt_id,count_0,count_0.25,count_1\na,3,4,3\n")
    base = samples_from_counts([10], [3], ["a"])
    with pytest.raises(InvalidInputError) as err:
        match_measured(base, read_samples(str(path)))
    msg = str(err.value)
    assert msg.startswith(f"measured samples {str(path)!r} must have 0/1 rewards") and "0.25" in msg, msg
    assert _as_options(msg).startswith(f"--measured {str(path)!r} must have 0/1 rewards"), _as_options(msg)
    with pytest.raises(InvalidInputError, match=r"^measured samples: 1 prompt\(s\) are not among .*'zz'"):
        match_measured(base, samples_from_counts([5], [2], ["zz"]))        # in memory: no file to name
