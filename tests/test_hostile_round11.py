"""Regression tests of the eleventh hostile audit's findings (docs/reliability.md, "Hostile input, eleventh round";
the audit's cases in ``tests/hostile_audit_round11_*.py``). Each is a rule, tested through the reader or entry point
that applies it; no expected number comes from the package."""

from __future__ import annotations

import math
import warnings

import pytest

from grpo_theory import Objective
from grpo_theory.errors import InvalidInputError
from grpo_theory.integrations.openrlhf import read_openrlhf_config
from grpo_theory.integrations.trl import read_trl_config
from grpo_theory.integrations.verl import read_verl_config

VERL = ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_files={files} "
        "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.rollout.n={n}")


def _quiet(read, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read(*args, **kw)


def test_a_shell_variable_the_script_does_not_set_is_harmless_where_no_reader_reads_it():
    # verl's published gsm8k example writes data.train_files=$HOME/data/gsm8k/train.parquet
    assert _quiet(read_verl_config, VERL.format(files="$HOME/data/gsm8k/train.parquet", n=5)).objective.group_size == 5


@pytest.mark.parametrize("n", ["$N", "${N}"])
def test_a_shell_variable_the_script_does_not_set_is_refused_where_read_naming_it(n):
    with pytest.raises(InvalidInputError, match=r"\$N is not set.*actor_rollout_ref\.rollout\.n"):
        _quiet(read_verl_config, VERL.format(files="x.parquet", n=n))


def test_an_assign_default_expansion_reads_its_default():
    assert _quiet(read_verl_config, VERL.format(files="x.parquet", n="${N:=6}")).objective.group_size == 6


def test_trl_and_openrlhf_command_lines_name_an_unset_variable_in_a_field_they_read():
    with pytest.raises(InvalidInputError, match=r"\$B is not set.*beta='\$B'"):
        _quiet(read_trl_config, ["--beta", "$B", "--num_generations", "4", "--output_dir", "$OUT"])
    assert _quiet(read_trl_config, ["--beta", "0.1", "--num_generations", "4", "--output_dir", "$OUT"]).objective.beta \
        == 0.1
    with pytest.raises(InvalidInputError, match=r"\$G is not set.*n_samples_per_prompt='\$G'"):
        _quiet(read_openrlhf_config, ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "$G"])


def test_trl_command_line_scale_rewards_none_is_the_text_none_shift_only():
    obj = _quiet(read_trl_config, ["--beta", "0.05", "--num_generations", "4", "--scale_rewards", "none"]).objective
    assert obj.normalization == "shift"


def test_openrlhf_argv_takes_a_two_valued_flag_it_does_not_read():
    argv = ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8", "--init_kl_coef", "0.01",
            "--use_kl_loss", "--kl_estimator", "k3", "--dynamic_filtering", "--dynamic_filtering_reward_range", "0", "1"]
    m = _quiet(read_openrlhf_config, argv)
    assert m.objective.filter_ties and m.objective.group_size == 8
    assert any("dynamic_filtering_reward_range" in w for w in m.warnings)


def test_openrlhf_dynamic_filtering_without_the_kl_loss_is_refused_in_the_configs_names():
    with pytest.raises(InvalidInputError, match=r"dynamic_filtering.*use_kl_loss") as exc:
        _quiet(read_openrlhf_config, {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4,
                                      "dynamic_filtering": True})
    assert "filter_ties" not in str(exc.value)


@pytest.mark.parametrize("delta, said", [(0.5, "delta=0.5 < 1"), (0.999, "delta=0.999 < 1"), (2.0, "inactive on-policy"),
                                         (1.0, "inactive on-policy")])
def test_trl_delta_below_one_is_said_to_clip_the_on_policy_ratio(delta, said):
    warns = _quiet(read_trl_config, {"beta": 0.04, "num_generations": 4, "delta": delta}).warnings
    assert any(said in w for w in warns), warns
    if delta < 1:
        assert not any("inactive on-policy" in w for w in warns)


@pytest.mark.parametrize("missing", [math.nan, None])
def test_predict_names_a_missing_dataframe_count_as_missing_not_as_empty_text(missing):
    pd = pytest.importorskip("pandas")
    from grpo_theory.predict import predict

    frame = pd.DataFrame({"prompt_id": ["a", "b"], "n": [5, 6], "correct": [2, missing]})
    with pytest.raises(InvalidInputError, match=r"row 1: correct must be a number, got nan \(a missing value\)") as exc:
        predict(frame, Objective(beta=0.3))
    assert "''" not in str(exc.value)


@pytest.mark.parametrize("expansion, n", [("$((2 * 3))", 6), ("$(( N * 2 ))", 8), ("$((N+1))", 5)])
def test_a_shell_arithmetic_expansion_is_one_token_and_its_integer_value(expansion, n):
    script = ("N=4\n" + VERL.format(files="x.parquet", n=expansion)
              + " data.max_response_length=$((1024 * 3))\n")
    assert _quiet(read_verl_config, script).objective.group_size == n


def test_an_arithmetic_expansion_the_reader_cannot_evaluate_is_refused_where_read_naming_it():
    with pytest.raises(InvalidInputError, match=r"rollout\.n.*\$\(\(M\*2\)\)"):
        _quiet(read_verl_config, VERL.format(files="x.parquet", n="$((M * 2))"))
