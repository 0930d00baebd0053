"""Cases of the seventh hostile audit (issue 45), part three: realistic user files on the command line.

``predict`` on samples files as spreadsheets and pandas export them (an index column, CRLF, quotes, trailing
commas, thousands separators, scientific notation, percentages, semicolons and tabs, Excel's ``sep=`` line and
UTF-16 "Unicode text", TRUE/FALSE, prompt ids with leading zeros or commas, JSON records, gzip, an xlsx renamed),
and ``explain`` on trainer configs copied from TRL's, verl's and OpenRLHF's documentation with one field subtly
off (YAML 1.1's ``1e-3`` read as text, ``yes``/``on``, anchors, tabs, a typo, a string count, JSONC comments,
an ``export``-ed shell variable, an argv element holding two words). Accepted files are checked: ``p_ref`` and
``pred`` per prompt against Eq. 14, the objective's fields against the trainer's documented conventions.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import hostile_audit_round7_ref as ref

COUNTS = [("a", 10, 3), ("b", 8, 1), ("d", 12, 11)]
BASE = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]


def _a(group, label, argv, expect, names=(), check=None, files=None, wrong=()):
    return dict(group=group, label=label, argv=list(argv), expect=expect, names=list(names), check=check,
                files=files or {}, wrong=list(wrong))


def _table(tmp):
    with open(Path(tmp) / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        return {r["prompt_id"]: r for r in csv.DictReader(fh)}


def counts_check(counts=COUNTS, beta=0.5):
    """Every prompt's ``n``, ``correct``, ``p_ref = c/n`` and ``pred`` (Eq. 14 at ``p_ref``), nothing else."""
    def check(tmp, res):
        t = _table(tmp)
        if sorted(t) != sorted(pid for pid, _, _ in counts):
            return False
        for pid, n, c in counts:
            row = t[pid]
            if int(float(row["n"])) != n or int(float(row["correct"])) != c:
                return False
            if abs(float(row["p_ref"]) - c / n) > 1e-12 or abs(float(row["pred"]) - ref.eq14(c / n, beta)) > 1e-8:
                return False
        return True
    return check


def _rows(header, rows, sep=",", end="\n", quote=False):
    q = (lambda s: f'"{s}"') if quote else str
    return end.join([sep.join(map(q, header))] + [sep.join(map(q, r)) for r in rows]) + end


def _per_sample(counts=COUNTS, good="1", bad="0"):
    rows = [(pid, good if i < c else bad) for pid, n, c in counts for i in range(n)]
    return rows


def _gz(text):
    return lambda path: path.write_bytes(gzip.compress(text.encode()))


def sample_file_cases() -> list[dict]:
    G = "predict: samples files as spreadsheets and pandas write them"
    out = []
    H = ["prompt_id", "n", "correct"]
    R = [list(r) for r in COUNTS]
    ok, either, err = "ok", "either", "error"
    specs = [  # (label, file name, content, expect, names)
        ("pandas to_csv with its index column (',prompt_id,n,correct')", "s.csv",
         _rows([""] + H, [[i] + r for i, r in enumerate(R)]), either, ["column"]),
        ("pandas index column named 'Unnamed: 0'", "s.csv",
         _rows(["Unnamed: 0"] + H, [[i] + r for i, r in enumerate(R)]), either, ["Unnamed: 0"]),
        ("CRLF line endings", "s.csv", _rows(H, R, end="\r\n"), ok, []),
        ("every field quoted", "s.csv", _rows(H, R, quote=True), ok, []),
        ("CRLF and every field quoted", "s.csv", _rows(H, R, end="\r\n", quote=True), ok, []),
        ("a trailing comma on every line, header included", "s.csv",
         "".join(line + ",\n" for line in _rows(H, R).splitlines()), either, ["column"]),
        ("a trailing comma on the data lines only", "s.csv",
         "prompt_id,n,correct\n" + "".join(f"{p},{n},{c},\n" for p, n, c in COUNTS), either, ["line"]),
        ("three blank lines at the end", "s.csv", _rows(H, R) + "\n\n\n", ok, []),
        ("a space after each comma", "s.csv", _rows(H, R, sep=", "), either, ["n"]),
        ("header in title case (Prompt_ID,N,Correct)", "s.csv", _rows(["Prompt_ID", "N", "Correct"], R), either,
         ["prompt_id"]),
        ("n written as 10.0 (pandas' float column)", "s.csv", _rows(H, [[p, f"{n}.0", c] for p, n, c in COUNTS]), ok, []),
        ("n in scientific notation 1e1", "s.csv", _rows(H, [["a", "1e1", 3], ["b", 8, 1], ["d", 12, 11]]), either,
         ["1e1"]),
        ("n 10.5 (not whole)", "s.csv", _rows(H, [["a", "10.5", 3], ["b", 8, 1], ["d", 12, 11]]), err, ["10.5"]),
        ("n with a thousands separator, quoted \"1,000\"", "s.csv",
         'prompt_id,n,correct\na,"1,000",300\nb,8,1\nd,12,11\n', either, ["1,000"]),
        ("correct as a percentage 30%", "s.csv", "prompt_id,n,correct\na,10,30%\nb,8,1\nd,12,11\n", err, ["30%"]),
        ("per-sample reward as a percentage 100%", "s.csv",
         "prompt_id,reward\n" + "".join(f"{p},{'100%' if r == '1' else '0%'}\n" for p, r in _per_sample()), err,
         ["%"]),
        ("semicolon-separated (European Excel)", "s.csv", _rows(H, R, sep=";"), either, ["prompt_id"]),
        ("tab-separated in a .csv", "s.csv", _rows(H, R, sep="\t"), either, ["prompt_id"]),
        ("Excel's 'sep=,' first line", "s.csv", "sep=,\n" + _rows(H, R), either, ["sep=,"]),
        ("Excel 'Unicode text' (UTF-16 LE with BOM, tabs)", "s.csv",
         (b"\xff\xfe" + _rows(H, R, sep="\t", end="\r\n").encode("utf-16-le")), err, ["s.csv"]),
        ("per-sample rewards TRUE/FALSE (Excel)", "s.csv",
         "prompt_id,reward\n" + "".join(f"{p},{'TRUE' if r == '1' else 'FALSE'}\n" for p, r in _per_sample()), either,
         ["TRUE"]),
        ("per-sample rewards True/False (pandas bool)", "s.csv",
         "prompt_id,reward\n" + "".join(f"{p},{'True' if r == '1' else 'False'}\n" for p, r in _per_sample()), either,
         ["True"]),
        ("per-sample rewards 1.0/0.0", "s.csv",
         "prompt_id,reward\n" + "".join(f"{p},{r}.0\n" for p, r in _per_sample()), ok, []),
        ("per-sample rows with a quoted completion holding commas and a newline", "s.csv",
         "prompt_id,completion,reward\n" + "".join(f'{p},"x = 1, y = 2\nso {i}",{r}\n'
                                                    for i, (p, r) in enumerate(_per_sample())), ok, []),
        ("prompt_id last (n,correct,prompt_id)", "s.csv", _rows(["n", "correct", "prompt_id"], [[n, c, p] for p, n, c in COUNTS]),
         ok, []),
        ("extra columns model and temperature", "s.csv",
         _rows(H + ["model", "temperature"], [r + ["qwen", 0.7] for r in R]), ok, []),
        ("counts columns in reverse order (count_1, count_0)", "s.csv",
         _rows(["prompt_id", "count_1", "count_0"], [[p, c, n - c] for p, n, c in COUNTS]), ok, []),
        ("counts columns count_1.0, count_0.0", "s.csv",
         _rows(["prompt_id", "count_0.0", "count_1.0"], [[p, n - c, c] for p, n, c in COUNTS]), ok, []),
        ("a second header row in the middle (two exports concatenated)", "s.csv",
         _rows(H, R[:2]) + _rows(H, R[2:]), err, ["line 4"]),
        ("a row with an empty prompt id", "s.csv", _rows(H, R) + ",5,2\n", err, ["line 5"]),
        ("counts row with NA n and correct", "s.csv", _rows(H, R) + "e,NA,NA\n", "flag", []),
        ("per-sample reward 'nan' in one row", "s.csv",
         "prompt_id,reward\n" + "".join(f"{p},{r}\n" for p, r in _per_sample()) + "a,nan\n", "flag", []),
        ("per-sample reward 'N/A' in one row", "s.csv",
         "prompt_id,reward\n" + "".join(f"{p},{r}\n" for p, r in _per_sample()) + "a,N/A\n", "flag", []),
        ("correct with a trailing space '3 '", "s.csv", "prompt_id,n,correct\na,10,3 \nb,8,1\nd,12,11\n", either, ["3 "]),
        ("n with a plus sign +10", "s.csv", "prompt_id,n,correct\na,+10,3\nb,8,1\nd,12,11\n", either, ["+10"]),
        ("gzip-compressed s.csv.gz", "s.csv.gz", _gz(_rows(H, R)), either, ["s.csv.gz"]),
        ("an xlsx workbook renamed s.csv", "s.csv", b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)) * 4, err,
         ["s.csv"]),
        ("JSON Lines from pandas to_json(orient='records', lines=True)", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "n": n, "correct": c}) + "\n" for p, n, c in COUNTS), ok, []),
        ("JSON Lines with CRLF", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "n": n, "correct": c}) + "\r\n" for p, n, c in COUNTS), ok, []),
        ("JSON Lines with blank lines between records", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "n": n, "correct": c}) + "\n\n" for p, n, c in COUNTS), ok, []),
        ("a JSON array of records in a .jsonl", "s.jsonl",
         json.dumps([{"prompt_id": p, "n": n, "correct": c} for p, n, c in COUNTS]), either, ["line 1"]),
        ("a JSON array of records in a .json", "s.json",
         json.dumps([{"prompt_id": p, "n": n, "correct": c} for p, n, c in COUNTS]), either, ["s.json"]),
        ("JSON Lines with n as text \"10\"", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "n": str(n), "correct": c}) + "\n" for p, n, c in COUNTS), either, ["n"]),
        ("JSON Lines with n as 10.0", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "n": float(n), "correct": c}) + "\n" for p, n, c in COUNTS), ok, []),
        ("JSON Lines with a trailing comma after a record", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "n": n, "correct": c}) + ",\n" for p, n, c in COUNTS), err, ["line 1"]),
        ("JSON Lines with a '# exported' comment line", "s.jsonl",
         "# exported\n" + "".join(json.dumps({"prompt_id": p, "n": n, "correct": c}) + "\n" for p, n, c in COUNTS),
         either, ["line 1"]),
        ("JSON Lines level counts {'0': 7, '1': 3}", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "counts": {"0": n - c, "1": c}}) + "\n" for p, n, c in COUNTS), ok, []),
        ("JSON Lines level counts keyed '0.0' and '1.0'", "s.jsonl",
         "".join(json.dumps({"prompt_id": p, "counts": {"0.0": n - c, "1.0": c}}) + "\n" for p, n, c in COUNTS), ok, []),
    ]
    for label, name, content, expect, names in specs:
        argv = BASE[:1] + [name] + BASE[2:]
        chk = counts_check() if expect in (ok, either) and "1,000" not in label and "NA" not in label else None
        if "1,000" in label:
            chk = counts_check([("a", 1000, 300), ("b", 8, 1), ("d", 12, 11)])
        out.append(_a(G, f"predict {label}", argv, expect, names, check=chk, files={name: content}))
    # prompt ids that look alike
    lookalike = [("leading zeros 007 and 7 are two prompts", [("007", 10, 3), ("7", 8, 1)]),
                 ("a prompt id holding a quoted comma \"a,1\"", [("a,1", 10, 3), ("b", 8, 1)]),
                 ("numeric prompt ids 1, 2, 3", [("1", 10, 3), ("2", 8, 1), ("3", 12, 11)]),
                 ("unicode prompt ids (é, 数学, emoji)", [("é", 10, 3), ("数学", 8, 1), ("🙂", 12, 11)]),
                 ("prompt ids 1.0 and 1 are two prompts", [("1.0", 10, 3), ("1", 8, 1)])]
    num = [(7, 10, 3), ("b", 8, 1), (12.5, 12, 11)]
    out.append(_a(G, "predict JSON Lines with prompt ids 7 (a number), 'b' and 12.5", BASE[:1] + ["s.jsonl"] + BASE[2:],
                  "ok", check=counts_check([("7", 10, 3), ("b", 8, 1), ("12.5", 12, 11)]), files={"s.jsonl": "".join(
                      json.dumps({"prompt_id": p, "n": n, "correct": c}) + "\n" for p, n, c in num)}))
    for label, counts in lookalike:
        text = "prompt_id,n,correct\n" + "".join(
            (f'"{p}"' if "," in p else p) + f",{n},{c}\n" for p, n, c in counts)
        out.append(_a(G, f"predict {label}", BASE, "ok", check=counts_check(counts), files={"s.csv": text}))
    return out


# ---------------------------------------------------------------- trainer configs from the docs, one field off
TRL = {"output_dir": "Qwen2-0.5B-GRPO", "learning_rate": 1e-6, "logging_steps": 10, "gradient_accumulation_steps": 2,
       "max_completion_length": 1, "num_generations": 8, "beta": 0.04, "loss_type": "grpo",
       "use_bias_correction_kl": False}
VERL = """algorithm:
  adv_estimator: grpo
  use_kl_in_reward: False
actor_rollout_ref:
  actor:
    use_kl_loss: True
    kl_loss_coef: 0.001
    kl_loss_type: low_var_kl
    entropy_coeff: 0
  rollout:
    n: 5
"""
ORLHF = ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8", "--init_kl_coef", "1e-3",
         "--use_kl_loss", "--kl_estimator", "k3"]


def objective_check(**want):
    def check(tmp, res):
        o = json.loads(res["out"])["objective"]
        for k, v in want.items():
            got = o.get(k)
            if isinstance(v, float) and isinstance(got, (int, float)):
                if abs(got - v) > 1e-12 * max(1.0, abs(v)):
                    return False
            elif got != v:
                return False
        return True
    return check


def _trl(**change):
    d = dict(TRL)
    for k, v in change.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return json.dumps(d, indent=2)


def config_cases() -> list[dict]:
    G = "explain: configs from the trainers' docs, one field off"
    out = []
    trl_ok = dict(group_size=8, beta=0.04, std_ddof=1, std_eps=1e-4)

    def trl(label, text, expect, names=(), name="c.json", check=None, extra=()):
        out.append(_a(G, f"explain trl: {label}", ["explain", "--framework", "trl", name, "--json", *extra], expect,
                      names, check=check, files={name: text}))
    trl("the docs' example, use_bias_correction_kl false", _trl(), "ok",
        check=objective_check(regime="reverse", normalization="scale", **trl_ok))
    trl("use_bias_correction_kl true", _trl(use_bias_correction_kl=True), "ok",
        check=objective_check(regime="direct", **trl_ok))
    trl("scale_rewards 'none'", _trl(scale_rewards="none"), "ok", check=objective_check(normalization="shift"))
    trl("scale_rewards false (TRL 0.16's bool) with --trl-version 0.16.0", _trl(scale_rewards=False), "either",
        ["scale_rewards"], check=objective_check(normalization="shift"), extra=("--trl-version", "0.16.0"))
    trl("scale_rewards 'False' as text", _trl(scale_rewards="False"), "error", ["scale_rewards"])
    trl("num_generations '8' as text", _trl(num_generations="8"), "either", ["num_generations"],
        check=objective_check(group_size=8))
    trl("num_generations 8.0", _trl(num_generations=8.0), "either", ["num_generations"],
        check=objective_check(group_size=8))
    trl("num_generations 8.5", _trl(num_generations=8.5), "error", ["num_generations"])
    trl("num_generations 1", _trl(num_generations=1), "error", ["num_generations"])
    trl("beta '0.04' as text", _trl(beta="0.04"), "either", ["beta"], check=objective_check(beta=0.04))
    trl("beta 4e-2", _trl(beta=4e-2), "ok", check=objective_check(beta=0.04))
    trl("a typo num_generation", _trl(num_generations=None, num_generation=8), "flag", ["num_generation"])
    trl("a typo betta", _trl(beta=None, betta=0.04), "flag", ["betta"])
    trl("epsilon 0.2 and epsilon_high 0.28 (clip-higher)", _trl(epsilon=0.2, epsilon_high=0.28), "ok",
        check=objective_check(**trl_ok))
    trl("loss_type 'bnpo'", _trl(loss_type="bnpo"), "ok", check=objective_check(group_size=8, beta=0.04))
    trl("loss_type 'dr_grpo'", _trl(loss_type="dr_grpo"), "ok", check=objective_check(group_size=8, beta=0.04))
    trl("loss_type 'DAPO' in capitals", _trl(loss_type="DAPO"), "either", ["DAPO"],
        check=objective_check(group_size=8))
    trl("loss_type 'grpo ' with a trailing space", _trl(loss_type="grpo "), "either", ["grpo "],
        check=objective_check(group_size=8))
    trl("JSONC: a // comment line", "// from the docs\n" + _trl(), "error", ["c.json"])
    trl("JSON with a trailing comma after the last field", _trl()[:-2] + ",\n}", "error", ["c.json"])
    trl("the same config as YAML (trl grpo --config)", "\n".join(f"{k}: {json.dumps(v)}" for k, v in TRL.items()) + "\n",
        "ok", name="c.yaml", check=objective_check(**trl_ok))
    trl("YAML with beta: 4e-2 (YAML 1.1 reads text)", "num_generations: 8\nbeta: 4e-2\nuse_bias_correction_kl: false\n"
        "max_completion_length: 1\n", "either", ["beta"], name="c.yaml", check=objective_check(beta=0.04))
    trl("YAML with learning_rate: 1e-6 (text, a field the theory ignores)", "num_generations: 8\nbeta: 0.04\n"
        "learning_rate: 1e-6\nuse_bias_correction_kl: false\nmax_completion_length: 1\n", "ok", name="c.yaml",
        check=objective_check(**trl_ok))
    trl("a 'trl grpo' command line with --num_generations=8", "trl grpo --model_name_or_path Qwen/Qwen2-0.5B "
        "--beta 0.04 --num_generations=8 --use_bias_correction_kl false --max_completion_length 1\n", "ok",
        name="run.sh", check=objective_check(**trl_ok))
    trl("a 'trl grpo' command line over lines with backslashes", "trl grpo \\\n  --model_name_or_path Qwen/Qwen2-0.5B \\\n"
        "  --beta 0.04 \\\n  --num_generations 8 \\\n  --max_completion_length 1\n", "ok", name="run.sh",
        check=objective_check(group_size=8, beta=0.04))
    trl("max_completion_length 256 with --completion-tokens 0", _trl(max_completion_length=256), "error",
        ["--completion-tokens"], extra=("--completion-tokens", "0"))
    trl("beta -0.04", _trl(beta=-0.04), "error", ["beta"])

    def verl(label, text, expect, names=(), name="v.yaml", check=None):
        out.append(_a(G, f"explain verl: {label}", ["explain", "--framework", "verl", name, "--json"], expect, names,
                      check=check, files={name: text}))
    vok = dict(group_size=5, beta=0.001, std_ddof=1, std_eps=1e-6, kl_estimator="k3")
    verl("the GRPO recipe's fields", VERL, "ok", check=objective_check(kl_log_ratio_clamp=20.0, kl_value_clamp=10.0, **vok))
    verl("kl_loss_coef: 1e-3 (YAML 1.1 reads text)", VERL.replace("0.001", "1e-3"), "either", ["kl_loss_coef"],
         check=objective_check(**vok))
    verl("kl_loss_type: low-var-kl (dashes)", VERL.replace("low_var_kl", "low-var-kl"), "error", ["low-var-kl"])
    verl("kl_loss_type: k3 (no clamp)", VERL.replace("low_var_kl", "k3"), "ok",
         check=objective_check(kl_log_ratio_clamp=None, kl_value_clamp=None, regime="reverse", **vok))
    verl("kl_loss_type: kl (k1: no regularisation)", VERL.replace("low_var_kl", "kl"), "flag", [])
    verl("rollout n: '5' as text", VERL.replace("n: 5", "n: '5'"), "either", ["n"], check=objective_check(group_size=5))
    verl("rollout n: 5.0", VERL.replace("n: 5", "n: 5.0"), "either", ["n"], check=objective_check(group_size=5))
    verl("rollout n: 1", VERL.replace("n: 5", "n: 1"), "error", ["n"])
    verl("use_kl_loss: yes (YAML 1.1 bool)", VERL.replace("use_kl_loss: True", "use_kl_loss: yes"), "ok",
         check=objective_check(**vok))
    verl("use_kl_loss: on (YAML 1.1 bool)", VERL.replace("use_kl_loss: True", "use_kl_loss: on"), "ok",
         check=objective_check(**vok))
    verl("use_kl_loss: 'True' quoted", VERL.replace("use_kl_loss: True", "use_kl_loss: 'True'"), "either",
         ["use_kl_loss"], check=objective_check(**vok))
    verl("anchors and aliases (&coef / *coef)", VERL.replace("kl_loss_coef: 0.001", "kl_loss_coef: &coef 0.001")
         + "critic:\n  kl_coef: *coef\n", "ok", check=objective_check(**vok))
    verl("adv_estimator: GRPO in capitals", VERL.replace("adv_estimator: grpo", "adv_estimator: GRPO"), "either",
         ["GRPO"], check=objective_check(**vok))
    verl("a tab-indented line", VERL.replace("    kl_loss_coef", "\tkl_loss_coef"), "error", ["v.yaml"])
    verl("kl_loss_coef: 0", VERL.replace("0.001", "0"), "flag", [])
    verl("kl_loss_coef: -0.001", VERL.replace("0.001", "-0.001"), "error", ["kl_loss_coef"])
    verl("full excerpt with data:, trainer: and critic: sections",
         "data:\n  train_batch_size: 1024\n  max_prompt_length: 512\n" + VERL
         + "trainer:\n  n_gpus_per_node: 8\n  total_epochs: 15\ncritic:\n  optim:\n    lr: 1e-5\n", "ok",
         check=objective_check(**vok))
    verl("a run script with $@ at the end", "set -x\npython3 -m verl.trainer.main_ppo \\\n  algorithm.adv_estimator=grpo \\\n"
         "  actor_rollout_ref.actor.use_kl_loss=True \\\n  actor_rollout_ref.actor.kl_loss_coef=0.001 \\\n"
         "  actor_rollout_ref.actor.kl_loss_type=low_var_kl \\\n  actor_rollout_ref.rollout.n=5 $@\n", "either", ["$@"],
         name="run_qwen.sh", check=objective_check(**vok))
    verl("a run script with quoted overrides", "python3 -m verl.trainer.main_ppo 'algorithm.adv_estimator=grpo' "
         "'actor_rollout_ref.actor.use_kl_loss=True' 'actor_rollout_ref.actor.kl_loss_coef=0.001' "
         "'actor_rollout_ref.rollout.n=5'\n", "ok", name="run.sh", check=objective_check(group_size=5, beta=0.001))
    verl("a run script with 'export N=8' and rollout.n=$N", "export N=8\npython3 -m verl.trainer.main_ppo "
         "algorithm.adv_estimator=grpo actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.rollout.n=$N\n",
         "either", ["N"], name="run.sh", check=objective_check(group_size=8))
    verl("a run script with rollout.n=${N} and N never set", "python3 -m verl.trainer.main_ppo "
         "algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=${N}\n", "error", ["N"], name="run.sh")
    verl("a Hydra '+' override of a new key", "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
         "actor_rollout_ref.rollout.n=5 +actor_rollout_ref.actor.extra_flag=1\n", "either", ["extra_flag"],
         name="run.sh", check=objective_check(group_size=5))

    def orl(label, argv_or_obj, expect, names=(), check=None):
        out.append(_a(G, f"explain openrlhf: {label}", ["explain", "--framework", "openrlhf", "o.json", "--json"],
                      expect, names, check=check, files={"o.json": json.dumps(argv_or_obj)}))
    ook = dict(group_size=8, beta=0.001, std_ddof=1, std_eps=1e-9)
    orl("the docs' GRPO argv", ORLHF, "ok", check=objective_check(**ook))
    orl("--n_samples_per_prompt=8 in one element", [a for a in ORLHF if a not in ("--n_samples_per_prompt", "8")]
        + ["--n_samples_per_prompt=8"], "ok", check=objective_check(**ook))
    orl("one element holding two words '--n_samples_per_prompt 8'",
        [a for a in ORLHF if a not in ("--n_samples_per_prompt", "8")] + ["--n_samples_per_prompt 8"], "error",
        ["--n_samples_per_prompt 8"])
    orl("--advantage_estimator grpo (verl's name)", [("grpo" if a == "group_norm" else a) for a in ORLHF], "error",
        ["grpo"])
    orl("--kl_estimator k4", [("k4" if a == "k3" else a) for a in ORLHF], "error", ["k4"])
    orl("a flag object with n_samples_per_prompt '8' as text",
        {"advantage_estimator": "group_norm", "n_samples_per_prompt": "8", "init_kl_coef": 0.001, "use_kl_loss": True,
         "kl_estimator": "k3"}, "either", ["n_samples_per_prompt"], check=objective_check(**ook))
    orl("--use_kl_loss followed by 'true'", ORLHF[:7] + ["true"] + ORLHF[7:], "either", ["true"],
        check=objective_check(**ook))
    orl("--advantage_estimator reinforce_baseline", [("reinforce_baseline" if a == "group_norm" else a) for a in ORLHF],
        "ok", check=objective_check(group_size=8, beta=0.001))
    orl("--advantage_estimator dr_grpo", [("dr_grpo" if a == "group_norm" else a) for a in ORLHF], "ok",
        check=objective_check(group_size=8, beta=0.001, normalization="shift"))
    orl("--init_kl_coef given twice (0.001, then 0.002)", ORLHF + ["--init_kl_coef", "0.002"], "either",
        ["init_kl_coef"], check=objective_check(group_size=8, beta=0.002))
    return out
