"""Regression tests of the ninth hostile audit's findings (docs/reliability.md, "Hostile input, ninth round"; the
audit's cases in ``tests/hostile_audit_round9_*.py``). Each is a rule, tested through the entry point that uses it;
no expected number comes from the package."""

from __future__ import annotations

import argparse
import errno
import os

import pytest

from grpo_theory import InvalidInputError, Objective, Question


# ---------------------------------------------------------------- Monte Carlo and the family's advantages
def test_monte_carlo_refuses_pass_at_k_naming_the_exact_engine():
    """RLOO and REINFORCE++ are sampled (tests/test_monte_carlo_family.py); pass@k has two levels, exact already."""
    from grpo_theory import monte_carlo_preference

    q = Question([0.2, 0.3, 0.5], rewards=[0, 1, 1])
    with pytest.raises(InvalidInputError, match="advantage='pass_at_k'.*reward_preference"):
        monte_carlo_preference(q, Objective(beta=1.0, group_size=5, advantage="pass_at_k", pass_k=2),
                               [0.25, 0.25, 0.5], n_groups=100)


def test_monte_carlo_of_the_group_advantage_still_estimates_it():
    from grpo_theory import monte_carlo_preference

    # G = 2, rewards 1/0: P_2(a) = pi(b) = 0.7 (the maths contract, section 2)
    est, se = monte_carlo_preference(Question([0.5, 0.5], rewards=[1, 0]), Objective(beta=1.0, group_size=2),
                                     [0.3, 0.7], n_groups=2000)
    assert abs(est[0] - 0.7) <= 6 * se[0]


# ---------------------------------------------------------------- the command line
@pytest.mark.slow
def test_the_parser_builds_without_docstrings(monkeypatch):
    """``python -OO`` strips docstrings: the top-level description was ``__doc__.replace`` (slow: the parser reads
    the figure registry, about 3 s)."""
    from grpo_theory import cli

    monkeypatch.setattr(cli, "__doc__", None)
    assert cli.build_parser().prog == "grpo-theory"


def test_a_write_the_system_refused_is_one_line_naming_the_output():
    from grpo_theory import _argtypes
    from grpo_theory.cli import _cli_message

    exc = OSError(errno.EFBIG, "File too large")            # pandas' writer and file.close() give no file name
    full = OSError(errno.ENOSPC, "No space left on device")
    assert _argtypes.user_os_error(exc, "out9") and _argtypes.user_os_error(full, "g.csv")
    # without an output to name (solve), and for other errors, the traceback stays (tests/test_hostile_round6.py)
    assert not _argtypes.user_os_error(full) and not _argtypes.user_os_error(OSError(errno.EIO, "I/O error"), "o")
    assert _cli_message(exc, "'out9'") == "cannot write 'out9': File too large"


def test_an_input_path_too_long_is_refused_naming_it():
    from grpo_theory import _argtypes

    long = "/".join(["g" * 200] * 25) + ".yaml"
    with pytest.raises(argparse.ArgumentTypeError, match="5,029 characters.*File name too long"):
        _argtypes.existing_file(long)


def test_a_relative_output_in_a_deleted_working_folder_is_refused(monkeypatch):
    from grpo_theory import _argtypes

    def gone():
        raise FileNotFoundError(errno.ENOENT, "No such file or directory")
    monkeypatch.setattr(os, "getcwd", gone)
    assert "working folder no longer exists" in _argtypes.path_problem("out9", folder=True)


@pytest.mark.slow
def test_an_output_name_of_255_bytes_is_written(tmp_path):
    """The staging folder beside ``out`` is named by at most 50 characters of it (slow: about 2 s)."""
    from grpo_theory.predict import predict, samples_from_counts

    out = tmp_path / ("o" * 255)
    paths = predict(samples_from_counts(n=[10], correct=[3]), Objective(beta=0.5), progress=False).write(
        out, plots=False)
    assert (out / "predictions.csv").exists() and all(os.path.exists(p) for p in paths.values())
    assert not [p for p in os.listdir(tmp_path) if "incomplete" in p]


# ---------------------------------------------------------------- readers
def test_openrlhf_old_and_new_names_disagreeing_are_refused_naming_both():
    from grpo_theory.integrations.openrlhf import read_openrlhf_config

    base = {"advantage_estimator": "group_norm", "n_samples_per_prompt": 8, "use_kl_loss": True, "kl_estimator": "k3"}
    with pytest.raises(InvalidInputError, match=r"init_kl_coef \(algo.kl.init_coef\)=0.01 and algo.kl.init_coef=0.5"):
        read_openrlhf_config({**base, "init_kl_coef": 0.01, "algo.kl.init_coef": 0.5})
    assert read_openrlhf_config({**base, "init_kl_coef": 0.5, "algo.kl.init_coef": 0.5}).objective.beta == 0.5


def test_a_run_script_with_two_trainer_commands_is_refused():
    from grpo_theory.integrations.cmdline import script_tokens

    one = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=5\n"
    with pytest.raises(InvalidInputError, match="2 main_ppo commands"):
        script_tokens("set -x\n" + one + one, "run.sh", marker="main_ppo")
    named = one.rstrip() + " trainer.experiment_name=main_ppo_run\n"     # an override's value is no command
    assert script_tokens(named, "run.sh", marker="main_ppo")[-1] == "trainer.experiment_name=main_ppo_run"


def test_a_samples_file_without_a_suffix_is_named_by_its_path(tmp_path):
    from grpo_theory.predict import read_samples

    path = tmp_path / "status"
    path.write_text("Name:\tpython\nState:\tR\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=f"samples {path}:"):
        read_samples(str(path))


def test_verl_zero_kl_coefficient_is_named():
    from grpo_theory.integrations.verl import read_verl_config

    cfg = {"algorithm": {"adv_estimator": "grpo"},
           "actor_rollout_ref": {"rollout": {"n": 5}, "actor": {"use_kl_loss": True, "kl_loss_coef": 0}}}
    m = read_verl_config(cfg)               # the unregularised objective, with the reason named in the warning
    assert (m.objective.beta, m.objective.regularised) == (0.0, False)
    assert any("kl_loss_coef=0 with use_kl_loss on" in w and "finite-time" in w for w in m.warnings)
