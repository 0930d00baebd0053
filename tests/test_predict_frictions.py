"""Issue 42's frictions, each tried as a new user would on a small slice of the published counts
(docs/results/published/simplerl_zoo_qwen25_7b_math500: 20 problems, the run's verl recipe).

Each test fails on the main branch where the friction was found (see the commit that added it)."""

import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest

from grpo_theory import InvalidInputError, Objective, Question, clamp_critical_beta
from grpo_theory.cli import main
from grpo_theory.integrations.verl import read_verl_config
from grpo_theory.predict import PredictWarning, predict, samples_from_counts

PUBLISHED = Path(__file__).resolve().parents[1] / "docs" / "results" / "published" / "simplerl_zoo_qwen25_7b_math500"


@pytest.fixture
def base20(tmp_path):
    lines = (PUBLISHED / "base.csv").read_text().splitlines()[:21]
    path = tmp_path / "base20.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _warning_lines(out: str) -> list:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("warning:")]


def test_reader_warning_printed_once(base20, tmp_path, capsys):
    """A reader warning is printed once, not again with its framework tag ('verl: ...')."""
    rc = main(["predict", str(base20), "--framework", "verl", str(PUBLISHED / "recipe.sh"), "--out",
               str(tmp_path / "out"), "--no-plots", "--no-progress"])
    assert rc == 0
    lines = _warning_lines(capsys.readouterr().out)
    assert len([w for w in lines if "ppo_mini_batch_size=256" in w]) == 1, lines
    assert not [w for w in lines if w.startswith("warning: verl:")], lines


def test_openrlhf_warning_once_and_no_raw_runtime_warning(base20, tmp_path, capfd):
    """OpenRLHF with k1 in the loss: its reader warning once, and no numpy warning with a source line (the
    clamp's critical beta is infinite: k1 as a loss has no restoring force)."""
    script = tmp_path / "orl.sh"
    script.write_text("python -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm "
                      "--n_samples_per_prompt 8 --init_kl_coef 0.01 --use_kl_loss\n")
    rc = main(["predict", str(base20), "--framework", "openrlhf", str(script), "--out", str(tmp_path / "out"),
               "--no-plots", "--no-progress"])
    assert rc == 0
    out, err = capfd.readouterr()
    assert len([w for w in _warning_lines(out) if "k1 as a loss" in w]) == 1, out
    assert "RuntimeWarning" not in err and "RuntimeWarning" not in out


def test_clamp_critical_beta_without_restoring_force_is_inf():
    obj = Objective(beta=0.01, group_size=8, kl_estimator="k1", kl_value_clamp=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clamp_critical_beta(Question([0.5, 0.5], rewards=[1, 0]), obj) == math.inf


def test_verl_data_section_is_known_and_read(recwarn):
    """``data`` is a section of verl's ppo_trainer.yaml: no 'unknown top-level key' warning, and its
    ``train_batch_size`` is read (the mini-batch warning names it); a misspelt section is still caught."""
    m = read_verl_config(["algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=8",
                          "actor_rollout_ref.actor.use_kl_loss=True", "data.train_batch_size=1024",
                          "actor_rollout_ref.actor.ppo_mini_batch_size=256", "trainer.total_epochs=1"])
    assert not [w for w in m.warnings if "unknown" in w], m.warnings
    assert any("data.train_batch_size=1024" in w for w in m.warnings), m.warnings
    m = read_verl_config(["algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=8",
                          "actor_rollout_ref.actor.use_kl_loss=True", "dta.train_batch_size=1024"])
    assert any("unknown top-level key 'dta'" in w and "'data'" in w for w in m.warnings), m.warnings


def test_verl_wrong_type_error_names_no_phantom_section(base20, tmp_path, capsys):
    """A recipe key with a wrong type: an error naming the value, without a note blaming the ``data`` section."""
    script = tmp_path / "recipe.sh"
    script.write_text((PUBLISHED / "recipe.sh").read_text().replace("rollout.n=8", "rollout.n=eight"))
    rc = main(["predict", str(base20), "--framework", "verl", str(script), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc != 0 and "'eight'" in err and "data" not in err, err
    assert not (tmp_path / "out").exists()


def test_predict_names_the_id_column_of_a_dataframe_and_of_measured():
    """``predict(df, obj, id_column=...)``: the DataFrame's (and ``measured``'s) prompt column by name."""
    base = pd.read_csv(PUBLISHED / "base.csv").iloc[:20].rename(columns={"prompt_id": "problem"})
    after = pd.read_csv(PUBLISHED / "after.csv").iloc[:10].rename(columns={"prompt_id": "problem"})
    base["problem"] = "p" + base.problem.astype(str)
    after["problem"] = "p" + after.problem.astype(str)
    pr = predict(base, Objective(beta=0.5, group_size=8), id_column="problem", measured=after, progress=False,
                 rhos=[0.0, 1.0])
    assert list(pr.table.prompt_id[:2]) == ["p0", "p1"]
    assert pr.table.correct.tolist() == base.correct.tolist()
    assert "pred_finite" in pr.table


def test_predict_refuses_reader_options_it_would_drop():
    """An objective given directly uses no reader option: ``trl_version=`` (or a misspelt keyword) is an error
    naming it, not silently dropped."""
    with pytest.raises(InvalidInputError, match="idcolumn"):
        predict(samples_from_counts([8, 8], [3, 0]), Objective(beta=0.5, group_size=2), idcolumn="problem")


@pytest.mark.parametrize("framework, command, beta, group_size", [
    ("verl", "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=8 "
             "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.0001", 1e-4, 8),
    ("trl", "trl grpo --beta 0.04 --num_generations 8 --use_bias_correction_kl false", 0.04, 8),
    ("openrlhf", "python -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm --n_samples_per_prompt 4 "
                 "--init_kl_coef 0.01 --use_kl_loss --kl_estimator k3", 0.01, 4),
])
def test_predict_takes_a_command_line_as_config(framework, command, beta, group_size):
    """``config=`` a command line as text (what ``explain`` and the CLI take from a script file)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = predict(samples_from_counts([8, 8], [3, 0]), framework=framework, config=command, progress=False)
    assert (pr.objective.beta, pr.objective.group_size) == (beta, group_size)


def test_samples_temperature_is_asked_and_checked(base20, tmp_path, capsys):
    """The published counts were sampled at 0.6, training at 1.0 (recipe.sh): --sample-temperature says so; not
    given, the CLI says the check was not made and names training's temperature."""
    out_dir = tmp_path / "out"
    args = ["predict", str(base20), "--framework", "verl", str(PUBLISHED / "recipe.sh"), "--out", str(out_dir),
            "--no-plots", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "temperature was not given" in out and "(1, from the config)" in out
    assert main(args + ["--sample-temperature", "0.6"]) == 0
    lines = _warning_lines(capsys.readouterr().out)
    assert len([w for w in lines if "temperature 0.6" in w and "at 1:" in w]) == 1, lines
    summary = json.loads((out_dir / "summary.json").read_text())
    assert (summary["sample_temperature"], summary["train_temperature"]) == (0.6, 1.0)
    assert main(args + ["--sample-temperature", "1.0"]) == 0
    out = capsys.readouterr().out
    assert "temperature was not given" not in out and not [w for w in _warning_lines(out) if "temperature" in w]
    with pytest.warns(PredictWarning, match="temperature 0.7"):
        predict(samples_from_counts([8], [3]), framework="trl", config={"beta": 0.1, "num_generations": 4,
                                                                        "temperature": 0.9},
                sample_temperature=0.7, progress=False)
    with pytest.raises(InvalidInputError, match="sample_temperature"):
        predict(samples_from_counts([8], [3]), Objective(beta=0.5), sample_temperature=0, progress=False)


def test_tradeoff_labels_of_coincident_points_are_one_label():
    """Every beta of the published recipe's sweep (1e-4 ... 0.1) is below the clamp's critical beta, so all six
    points coincide (P = 1, the same KL): one label naming them, not six printed on top of each other."""
    from grpo_theory.predict.report import figure_tradeoff

    betas = [1e-4, 2e-4, 5e-4, 1e-3, 0.01, 0.1]
    t = pd.DataFrame(dict(beta=betas, mean_kl_direct=[0.889087] * 6, mean_pred=[1.0] * 6))
    texts = [a.get_text() for a in figure_tradeoff(t, 1e-4).axes[0].texts]
    assert texts == ["β=0.0001…0.1 (6 points)"], texts
    t = pd.DataFrame(dict(beta=[0.1, 1.0], mean_kl_direct=[2.0, 0.5], mean_pred=[0.9, 0.7]))
    assert [a.get_text() for a in figure_tradeoff(t, 1.0).axes[0].texts] == ["β=0.1", "β=1"]


def test_a_real_trl_grpo_command_line_draws_no_unknown_key_warning():
    """``trl grpo`` always carries ModelConfig and script arguments (``--model_name_or_path``,
    ``--dataset_name``): known arguments of the command, not 'unknown keys'; a misspelt GRPOConfig field still is."""
    from grpo_theory.integrations.trl import read_trl_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = read_trl_config(["--model_name_or_path", "Qwen/Qwen2.5-0.5B", "--dataset_name", "trl-lib/tldr",
                             "--reward_funcs", "accuracy", "--use_peft", "--lora_r", "16", "--beta", "0.04",
                             "--num_generations", "8", "--use_bias_correction_kl", "false"], trl_version="1.16.0")
        assert not [w for w in m.warnings if "unknown" in w], m.warnings
        m = read_trl_config(["--beta", "0.04", "--num_generation", "8"], trl_version="1.16.0")
    assert any("unknown key(s) ['num_generation']" in w for w in m.warnings), m.warnings
