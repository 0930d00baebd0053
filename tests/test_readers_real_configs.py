"""The readers on configs and launch scripts as their users write them (tests/data/real_configs, README there).

Each expected value is read from the file's own text and the framework's source at the commit named in the README,
not from the reader: verl ``low_var_kl`` is k3 with the log-ratio clipped to +-20 and the value to +-10
(verl/trainer/ppo/core_algos.py ``kl_penalty``); ``policy_loss.loss_mode=gspo`` takes one ratio per answer
(``compute_policy_loss_gspo``); OpenRLHF's ``--no_advantage_std_norm`` / ``--algo.advantage.no_std_norm`` leaves out
the batch std of reinforce_baseline's whitening (openrlhf/trainer/ppo_utils/experience_maker.py); TRL's parser reads
``--config FILE`` as the defaults the command line overrides (trl/scripts/utils.py ``TrlParser``).
"""

from __future__ import annotations

import shlex
import warnings
from pathlib import Path

import pytest

from grpo_theory.errors import InvalidInputError, NoStationaryPolicy
from grpo_theory.integrations.cmdline import argparse_flags, hydra_overrides, script_tokens, trainer_arguments
from grpo_theory.integrations.mapping import load_config_file
from grpo_theory.integrations.openrlhf import OPENRLHF_FIELDS, read_openrlhf_config
from grpo_theory.integrations.trl import TRL_FIELDS, as_trl_parser_reads, read_trl_config
from grpo_theory.integrations.verl import VERL_FIELDS, read_verl_config

DATA = Path(__file__).parent / "data" / "real_configs"
#: The flags the TRL and OpenRLHF readers read, in the spellings scripts use (old and 0.10+ OpenRLHF names).
READ_FLAGS = set(TRL_FIELDS) | set(OPENRLHF_FIELDS) | {"advantage_estimator", "n_samples_per_prompt", "init_kl_coef",
                                                       "kl_estimator", "use_kl_loss", "actor.entropy_coef"}


def _read(framework: str, path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = load_config_file(framework, str(path))
        reader = {"trl": read_trl_config, "verl": read_verl_config, "openrlhf": read_openrlhf_config}[framework]
        return reader(config, **kw)


@pytest.mark.parametrize("name, G, beta", [
    ("verl_npu_arrays.sh", 8, 0.001),                # n_resp_per_prompt=8, kl_loss_coef=0.001 inside "${ARR[@]}"
    ("verl_megatron_lora_arrays.sh", 4, 0.001),      # rollout.n=4 in the ROLLOUT=( ... ) array
    ("verl_trtllm_script_args.sh", 5, 0.001),        # the script's own arguments passed on as "${@:2}"
])
def test_verl_scripts_with_arrays_and_script_arguments_read_their_settings(name, G, beta):
    obj = _read("verl", DATA / name).objective
    assert (obj.group_size, obj.beta, obj.kl_placement) == (G, beta, "loss")
    assert (obj.estimator, obj.kl_log_ratio_clamp, obj.kl_value_clamp) == ("k3", 20.0, 10.0)     # low_var_kl


def test_verl_gspo_script_with_multiline_quotes_reads_one_ratio_per_answer():
    m = _read("verl", DATA / "verl_gspo_multiline.sh")       # use_kl_loss=False, n_resp_per_prompt=16, loss_mode=gspo
    assert (m.objective.group_size, m.objective.beta, m.objective.importance_level) == (16, 0.0, "sequence")


def test_verl_policy_loss_other_than_vanilla_and_gspo_is_named():
    m = _read("verl", DATA / "verl_entropy_kl_cov.sh")       # loss_mode="kl_cov", enable_filter_groups=True, n=8
    assert m.objective.group_size == 8 and m.objective.filter_ties
    assert any("loss_mode='kl_cov'" in w and "not modelled" in w for w in m.warnings)


def test_verls_own_generated_config_is_read_not_refused():
    # every key at verl's default: adv_estimator gae, which the theory does not model (not a refused section)
    with pytest.raises(NoStationaryPolicy, match="'gae'"):
        _read("verl", DATA / "verl_generated_ppo_trainer.yaml")


def test_verl_unquoted_variable_is_split_as_the_shell_splits_it(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text('KL="actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.05"\n'
                      "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=4 "
                      "$KL trainer.experiment_name=run_$(date +%s) 2>&1 | tee log.txt\n")
    obj = _read("verl", script).objective
    assert (obj.beta, obj.group_size) == (0.05, 4)


def test_verl_interpolations_resolve_or_name_the_environment(tmp_path):
    cfg = tmp_path / "c.yaml"
    body = ("algorithm:\n  adv_estimator: grpo\n  kl_ctrl:\n    kl_coef: 0.04\nactor_rollout_ref:\n  actor:\n"
            "    use_kl_loss: true\n    kl_loss_coef: {v}\n  rollout:\n    n: 4\n")
    cfg.write_text(body.format(v="${algorithm.kl_ctrl.kl_coef}"))
    assert _read("verl", cfg).objective.beta == 0.04
    cfg.write_text(body.format(v="${oc.env:KL_COEF,0.02}"))
    with pytest.raises(InvalidInputError, match="environment variable KL_COEF"):
        _read("verl", cfg)


def test_a_misspelt_group_size_is_named_in_the_error(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.nn=8\n")
    with pytest.raises(InvalidInputError, match="rollout.n=1.*did you mean 'actor_rollout_ref.rollout.n'"):
        _read("verl", script)


def test_openrlhf_slurm_script_reads_the_trainer_inside_bash_c():
    # the estimator is left at OpenRLHF's default gae: a clean account, not "expected a --flag, got '-w'"
    with pytest.raises(NoStationaryPolicy, match="'gae'"):
        _read("openrlhf", DATA / "openrlhf_ppo_slurm_bash_c.sh")


def test_openrlhf_ray_job_submit_launcher_flags_are_not_read_as_openrlhf_flags():
    m = _read("openrlhf", DATA / "openrlhf_grpo_ray_submit.sh")  # group_norm, n=8, init_kl_coef 1e-3, k3 as a loss
    o = m.objective
    assert (o.group_size, o.beta, o.estimator, o.kl_placement, o.normalization) == (8, 1e-3, "k3", "loss", "scale")
    assert not any("'address'" in w or "flag ''" in w or "runtime-env" in w for w in m.warnings)


def test_openrlhf_0_11_names_entropy_and_no_std_norm():
    argv = ["--algo.advantage.estimator", "reinforce_baseline", "--rollout.n_samples_per_prompt", "8",
            "--algo.kl.use_loss", "--algo.kl.estimator", "k2", "--algo.kl.init_coef", "1e-3",
            "--actor.entropy_coef", "0.01"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whitened = read_openrlhf_config(argv).objective
        plain = read_openrlhf_config(argv + ["--algo.advantage.no_std_norm"]).objective
        old = read_openrlhf_config(["--advantage_estimator", "reinforce_baseline", "--n_samples_per_prompt", "8",
                                    "--no_advantage_std_norm", "--policy_loss_type", "gspo"]).objective
    assert whitened.entropy_coef == 0.01 and whitened.advantage == "reinforce_pp"
    assert (plain.advantage, plain.normalization) == ("group", "shift")       # r - group mean, no batch std
    assert (old.advantage, old.importance_level) == ("group", "sequence")


def test_openrlhf_arrays_script_reads_every_group():
    o = _read("openrlhf", DATA / "openrlhf_reinforce_baseline_arrays.sh").objective
    # OPTIMIZER_ARGS: reinforce_baseline, init_coef 1e-5, use_loss, k2; ROLLOUT_ARGS: 8 samples, dynamic filtering
    assert (o.group_size, o.beta, o.estimator, o.advantage, o.filter_ties) == (8, 1e-5, "k2", "reinforce_pp", True)


def test_trl_accelerate_launch_with_a_script_and_a_list_flag():
    m = _read("trl", DATA / "trl_grpo_vlm_accelerate.sh", trl_version="1.16.0")
    # no beta nor num_generations given: TRL 1.16's defaults 0 and 8; max_completion_length 1024
    assert (m.objective.group_size, m.objective.beta) == (8, 0.0)
    assert any("1024 tokens" in w for w in m.warnings)


def test_trl_config_file_is_read_as_trl_reads_it(monkeypatch):
    monkeypatch.chdir(DATA)
    # open-r1 pins trl 0.18.0, whose beta default is 0.04; the YAML sets num_generations 16; --vllm_mode colocate
    m = _read("trl", DATA / "trl_openr1_launch.sh", trl_version="0.18.0")
    assert (m.objective.group_size, m.objective.beta) == (16, 0.04)
    direct = _read("trl", DATA / "trl_openr1_config_demo.yaml", trl_version="0.18.0").objective
    assert direct == m.objective


def test_trl_config_file_missing_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match="--config 'nope.yaml': no such file"):
        read_trl_config(["--config", "nope.yaml", "--beta", "0.1"])


def test_the_shell_reading_rules():
    text = ('A=(x.y=1 "x.z=two words")\nexport N=3\n'
            'python3 -m verl.trainer.main_ppo "${A[@]}" n.m=$N p.q=${UNSET:-7} r.s=$((N * 2)) "${@:2}" > log 2>&1\n')
    assert script_tokens(text, "s", marker="main_ppo") == ["x.y=1", "x.z=two words", "n.m=3", "p.q=7", "r.s=6"]
    launch = "ray job submit --address=http://h:8265 -- python3 -m openrlhf.cli.train_ppo_ray --x 1"
    assert trainer_arguments(launch, "s", ("openrlhf",)) == ["--x", "1"]
    with pytest.raises(InvalidInputError, match="2 trainer commands"):
        trainer_arguments("python a_grpo.py --x 1\npython b_grpo.py --x 2\n", "s", ("grpo",))


def test_hydra_flags_and_other_trainers_are_named_not_refused(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=8 "
                      "--config-name=my_grpo\n")                 # Hydra takes its flags anywhere on the line
    m = _read("verl", script)
    assert m.objective.group_size == 8
    assert any("--config-name=my_grpo: that config file is not read" in w for w in m.warnings)
    script.write_text("python3 examples/data_preprocess/gsm8k.py --local_dir data\n"
                      "python3 -m verl.trainer.main_ppo --config-path=config --config-name='ppo_megatron_trainer.yaml'"
                      " algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=8\n")
    assert not any("config" in w or "runs" in w for w in _read("verl", script).warnings)
    m = _read("verl", DATA / "verl_entropy_kl_cov.sh")           # python -m recipe.entropy.main_entropy
    assert any("runs recipe.entropy.main_entropy, not verl.trainer.main_ppo" in w for w in m.warnings)


def test_a_comment_line_inside_a_continued_command_is_named():
    # line 73 of verl's own example is a comment inside the backslash-continued command: bash ends the command
    # there (verl gets kl_loss_coef=0.01 and n=5 from before it, not algorithm.use_kl_in_reward=False after it)
    m = _read("verl", DATA / "verl_comment_inside_command.sh")
    assert (m.objective.beta, m.objective.group_size) == (0.01, 5)
    assert any("ends before '+actor_rollout_ref.actor.megatron.override_transformer_config.moe_aux_loss_coeff=0.01'"
               in w and "algorithm.use_kl_in_reward" in w for w in m.warnings)
    with pytest.raises(InvalidInputError, match="ends before '--num_generations'"):
        load_config_file("trl", "trl grpo \\\n  --beta 0.04 \\\n  # --num_generations 16 \\\n  --num_generations 4\n")


def test_yaml_numbers_are_read_as_each_trainer_reads_them(tmp_path):
    verl = tmp_path / "v.yaml"        # OmegaConf reads 1e-3 as a float (PyYAML, YAML 1.1: text)
    verl.write_text("algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n"
                    "    kl_loss_coef: 1e-3\n  rollout:\n    n: 4\n")
    assert _read("verl", verl).objective.beta == 0.001
    trl = tmp_path / "t.yaml"         # trl grpo --config: argparse converts text defaults with the field's type
    trl.write_text("beta: 1e-3\nnum_generations: '4'\nuse_bias_correction_kl: 'false'\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = read_trl_config(as_trl_parser_reads(load_config_file("trl", str(trl))), trl_version="1.16.0").objective
    assert (o.beta, o.group_size, o.estimator) == (0.001, 4, "k3")
    with pytest.raises(InvalidInputError, match="beta"):            # a dict in Python is taken as given
        read_trl_config({"beta": "1e-3", "num_generations": 4}, trl_version="1.16.0")


def test_a_space_after_the_final_backslash_is_named(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\ \n"
                      "    actor_rollout_ref.rollout.n=8\n")
    with pytest.raises(InvalidInputError, match="escaped space"):
        _read("verl", script)


def test_why_nothing_is_predicted_comes_first_and_a_whole_argv_list_is_read():
    with pytest.raises(NoStationaryPolicy, match=r"to predict: advantage estimator 'gae'"):
        _read("openrlhf", DATA / "openrlhf_ppo_slurm_bash_c.sh")    # then its 40 flags not read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = read_openrlhf_config(["python3", "-m", "openrlhf.cli.train_ppo_ray", "--advantage_estimator",
                                  "group_norm", "--n_samples_per_prompt", "4"]).objective
    assert (o.group_size, o.beta, o.kl_placement) == (4, 0.01, "advantage")    # OpenRLHF's init_kl_coef default


def test_openrlhfs_own_flags_are_quiet_and_a_misspelt_one_is_named():
    m = _read("openrlhf", DATA / "openrlhf_dapo_flag_typo.sh")     # group_norm, n=8, 1e-3, k3 loss, dynamic filtering
    o = m.objective
    assert (o.group_size, o.beta, o.estimator, o.kl_placement, o.filter_ties) == (8, 1e-3, "k3", "loss", True)
    flags = [w for w in m.warnings if w.startswith("flag ")]
    assert len(flags) == 1 and "'vllm_enable_is_correction'" in flags[0] and "'enable_vllm_is_correction'" in flags[0]


def test_verls_megatron_keys_are_known():
    # --config-name='ppo_megatron_trainer.yaml': its actor.megatron.* keys and the '+...override_transformer_config.*'
    # fields it passes to Megatron-Core are verl's own, not typos
    m = _read("verl", DATA / "verl_comment_inside_command.sh")
    assert not any(w.startswith("unknown key") for w in m.warnings), [w for w in m.warnings if "unknown" in w]


def test_the_shell_reader_bounds_its_work_on_hostile_text():
    for text in ("A=(" * 20000, ">A=(" * 20000, "$((" * 30000 + "1" + "))" * 30000, "x a=1 &> y b=2"):
        try:
            script_tokens(text, "s")
        except InvalidInputError:
            pass
    assert script_tokens("x a=1 &> y b=2", "s") == ["x", "a=1", "b=2"]


def _bash_argv(script: Path, tmp_path: Path) -> list:
    """The argv bash gives each program the script runs, from stubs that log it (PATH holds only the stubs, in an
    empty folder; ``set`` is a no-op so that ``set -eu`` does not stop at an unset variable)."""
    import os
    import subprocess

    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    stub = bin_ / "stub"
    stub.write_text('#!/bin/bash\n{ printf \'%s\\n\' "${0##*/}" "$@"; printf \'\\x1e\\n\'; } >> "$STUBLOG"\n')
    stub.chmod(0o755)
    for name in ("python", "python3", "ray", "torchrun", "accelerate", "deepspeed", "trl", "nohup"):
        (bin_ / name).exists() or os.symlink(stub, bin_ / name)
    (tmp_path / "env.sh").write_text("set() { :; }\n")
    work, log = tmp_path / "w", tmp_path / "log"
    work.mkdir(exist_ok=True)
    log.unlink(missing_ok=True)
    subprocess.run(["/bin/bash", str(script)], cwd=work, stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                   env={"PATH": str(bin_), "STUBLOG": str(log), "HOME": "/nonexistent",
                        "BASH_ENV": str(tmp_path / "env.sh")})
    return [c.strip("\n").split("\n") for c in log.read_text().split("\x1e\n") if c.strip()] if log.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.sh")))
def test_each_real_script_reads_as_bash_builds_it(name, tmp_path):
    """bash itself is the reference: the trainer's settings read from the argv bash built equal the reader's."""
    import shutil

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    framework = name.split("_")[0]
    text = (DATA / name).read_text()
    calls = _bash_argv(DATA / name, tmp_path)
    if framework == "verl":
        bash = next(c[i + 1:] for c in calls for i, t in enumerate(c) if "main_" in t and "=" not in t)
        ours = script_tokens(text, "s", marker="main_ppo")
        read = lambda toks: {k: v for k, v in hydra_overrides([t for t in toks if t.strip()], "s").items()  # noqa: E731
                             if k in VERL_FIELDS}
    else:
        hints = ("openrlhf", "train_ppo") if framework == "openrlhf" else ("grpo",)
        joined = [c for c in calls if any(h in " ".join(c) for h in hints)]
        if not joined:                     # srun ... bash -c "...": the stubs do not run the inner script
            pytest.skip("bash ran no trainer command here")
        bash = trainer_arguments(" ".join(shlex.quote(t) for t in joined[0]), "bash argv", hints)
        ours = trainer_arguments(text, "s", hints)
        read = lambda toks: {k: v for k, v in argparse_flags(toks, "s", boolean=frozenset(  # noqa: E731
            t[2:] for t in toks if t.startswith("--")), several=frozenset(t[2:] for t in toks if t.startswith("--"))
        ).items() if k in READ_FLAGS}
    assert read(bash) == {k: v for k, v in read(ours).items() if not (isinstance(v, str) and "$" in v)}


def test_a_command_substitution_kept_as_written_is_one_word():
    # bash splits the output of $(cd x && pwd), which has no space; splitting its text gave '&&', and the TRL flags
    # after it were dropped (beta 0 and G 8, TRL's defaults, instead of 0.1 and 4)
    m = read_trl_config(load_config_file("trl", "OUT=$(cd x && pwd)/run\ntrl grpo --output_dir $OUT --beta 0.1 "
                                                "--num_generations 4 --max_completion_length 1\n"), trl_version="1.16.0")
    assert (m.objective.beta, m.objective.group_size) == (0.1, 4)


def test_explain_with_a_question_on_a_clamped_kl_of_weight_zero(tmp_path, capsys):
    # OpenRLHF clamps every estimator (+-10) whatever init_kl_coef; with --init_kl_coef 0 and --use_kl_loss the
    # clamp line divided by beta = 0 (ZeroDivisionError)
    from grpo_theory.cli import main

    cfg = tmp_path / "o.json"
    cfg.write_text('{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0, '
                   '"use_kl_loss": true, "kl_estimator": "k3"}')
    assert main(["explain", str(cfg), "--framework", "openrlhf", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0"]) == 0
    assert "stationary policy:  none" in capsys.readouterr().out


def test_run_artifacts_hydra_overrides_and_wandb_config(tmp_path):
    # Hydra writes a run's overrides to .hydra/overrides.yaml as a list of strings; W&B logs the config as
    # {key: {desc, value}} beside wandb_version and _wandb (a GRPO run read as verl's default gae before)
    over = tmp_path / "overrides.yaml"
    over.write_text("- algorithm.adv_estimator=grpo\n- actor_rollout_ref.actor.use_kl_loss=True\n"
                    "- actor_rollout_ref.actor.kl_loss_coef=0.001\n- actor_rollout_ref.rollout.n=5\n")
    assert (_read("verl", over).objective.group_size, _read("verl", over).objective.beta) == (5, 0.001)
    logged = tmp_path / "config.yaml"
    logged.write_text("wandb_version: 1\n_wandb:\n  desc: null\n  value:\n    cli_version: 0.19.1\n"
                      "actor_rollout_ref:\n  desc: null\n  value:\n    actor:\n      use_kl_loss: true\n"
                      "      kl_loss_coef: 0.002\n    rollout:\n      n: 8\nalgorithm:\n  desc: null\n  value:\n"
                      "    adv_estimator: grpo\n")
    o = _read("verl", logged).objective
    assert (o.group_size, o.beta, o.estimator) == (8, 0.002, "k3")
    trl = tmp_path / "trl.yaml"
    trl.write_text("_wandb:\n  value:\n    cli_version: 0.19.1\nbeta:\n  value: 0.04\nnum_generations:\n  value: 4\n")
    assert _read("trl", trl, trl_version="1.16.0").objective.group_size == 4
