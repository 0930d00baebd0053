"""The cases of the third hostile audit's second part (see :mod:`hostile_audit_inputs`): samples files, trainer
configs, the Python API's tables and arrays, and the other subcommands.

Every ``ok`` case whose answer is a number is checked against a value computed here from the input (``correct/n``
per prompt; the config's own ``beta`` and group size; the grid's own case count), never read from the library.
"""

from __future__ import annotations

import csv
import json
import random
import zipfile
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PREDICT = ["--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]


def _sparse(size: int):
    """A file of ``size`` bytes that takes no disk (a huge input, cheaply)."""
    def make(path: Path) -> None:
        with open(path, "wb") as fh:
            fh.truncate(size)
    return make


def _predictions_match(want):
    """``predictions.csv`` has the prompts ``want`` = [(id, n, correct)] in order, with p_ref = correct / n."""
    def check(tmp: Path, res) -> bool:
        with open(tmp / "o" / "predictions.csv", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        return len(rows) == len(want) and all(
            r["prompt_id"] == str(i) and int(r["n"]) == n and int(r["correct"]) == c
            and abs(float(r["p_ref"]) - c / n) <= 6e-8 * c / n for r, (i, n, c) in zip(rows, want))
    return check


def _table_matches(want):
    def check(tmp: Path, res) -> bool:
        t = res["value"]
        return list(t.prompt_ids) == [str(i) for i, _, _ in want] and t.n.tolist() == [n for _, n, _ in want] \
            and t.correct.tolist() == [c for _, _, c in want]
    return check


def _error_case(label: str, name: str, data, *also: str) -> tuple:
    """A samples file that is refused: the message names the file and each of ``also``."""
    return label, name, data, "error", [name, *also], None


def _ok_case(label: str, name: str, data, want: list[tuple]) -> tuple:
    """A samples file that is read: its prompts are ``want`` = [(id, n, correct)]."""
    return label, name, data, "ok", [], want


def samples_cases() -> list[dict]:
    """Samples files, each through ``predict`` (CLI) and ``read_samples`` (API)."""
    rng = random.Random(45)
    C, bom = "prompt_id,n,correct\n", "\ufeff"
    big_want = [(f"q{i}", 1 + i % 50, i % (2 + i % 50) // 2) for i in range(50_000)]
    big_want = [(i, n, min(c, n)) for i, n, c in big_want]
    big = "".join(f"{i},{n},{c}\n" for i, n, c in big_want)
    # data: bytes or str or a maker of the file; after it, what a refusal names besides the file, or the
    # prompts read, [(id, n, correct)]
    T = [
        _error_case("empty file", "s.csv", "", "empty"),
        _error_case("header only", "s.csv", C, "no rows"),
        _ok_case("BOM", "s.csv", bom + C + "a,10,3\n", [("a", 10, 3)]),
        _ok_case("BOM and CRLF", "s.csv", bom + "prompt_id,n,correct\r\na,10,3\r\nb,4,4\r\n",
                 [("a", 10, 3), ("b", 4, 4)]),
        _ok_case("CR line ends", "s.csv", "prompt_id,n,correct\ra,10,3\rb,4,0\r", [("a", 10, 3), ("b", 4, 0)]),
        _ok_case("no final newline", "s.csv", C + "a,10,3", [("a", 10, 3)]),
        _ok_case("blank lines", "s.csv", C + "\na,10,3\n\n\nb,2,1\n\n", [("a", 10, 3), ("b", 2, 1)]),
        _error_case("UTF-16", "s.csv", (C + "a,10,3\n").encode("utf-16"), "UTF-8"),
        _error_case("latin-1 id", "s.csv", (C + "caf\xe9,10,3\n").encode("latin-1"), "UTF-8", "line 2"),
        _error_case("binary", "s.csv", bytes(rng.randrange(256) for _ in range(4096))),
        _error_case("NUL in a row", "s.csv", C + "a,1\x000,3\n"),
        _error_case("over 2 GiB", "s.csv", _sparse(2 * 2**30 + 1), "2,147,483,648"),
        _ok_case("50,000 prompts", "s.csv", C + big, big_want),
        _error_case("duplicate id", "s.csv", C + "a,10,3\na,5,1\n", "'a'", "line 3"),
        _error_case("duplicate id after strip", "s.csv", C + "a,10,3\n a ,5,1\n", "'a'"),
        _error_case("wrong columns", "s.csv", "x,y\n1,2\n", "'prompt_id'", "'x'"),
        _error_case("id column missing", "s.csv", "n,correct\n10,3\n", "prompt_id"),
        _error_case("n = 0", "s.csv", C + "a,0,0\n", "n = 0"),
        _error_case("correct > n", "s.csv", C + "a,3,5\n", "correct = 5 > n = 3"),
        _error_case("negative n", "s.csv", C + "a,-3,0\n", "'-3'"),
        _error_case("negative correct", "s.csv", C + "a,3,-1\n", "'-1'"),
        _error_case("fractional n", "s.csv", C + "a,2.5,1\n", "'2.5'"),
        _ok_case("n written 10.0", "s.csv", C + "a,10.0,3\n", [("a", 10, 3)]),
        _error_case("n = 1e20", "s.csv", C + "a,1e20,3\n", "'1e20'", "limit"),
        _error_case("n = 2^53 + 2", "s.csv", C + f"a,{2**53 + 2},3\n", str(2**53 + 2)),
        _ok_case("n = 1e15", "s.csv", C + "a,1e15,3e14\n", [("a", 10**15, 3 * 10**14)]),
        _error_case("n = nan", "s.csv", C + "a,nan,3\n", "'nan'"),
        _error_case("n = inf", "s.csv", C + "a,inf,3\n", "'inf'"),
        _error_case("n empty", "s.csv", C + "a,,3\n", "line 2", "n"),
        _error_case("n = ten", "s.csv", C + "a,ten,3\n", "'ten'"),
        _error_case("n = 0x10", "s.csv", C + "a,0x10,3\n", "'0x10'"),
        _ok_case("n = 1_000 (Python's digit grouping)", "s.csv", C + "a,1_000,3\n", [("a", 1000, 3)]),
        _ok_case("n in full-width digits", "s.csv", C + "a,\uff11\uff10,3\n", [("a", 10, 3)]),
        _error_case("empty id", "s.csv", C + ",10,3\n", "empty prompt_id"),
        _ok_case("unicode ids", "s.csv", C + "\u00e9t\u00e9,10,3\n\u05e9\u05dc\u05d5\u05dd,4,1\n\U0001f600,2,2\n",
                 [("\u00e9t\u00e9", 10, 3), ("\u05e9\u05dc\u05d5\u05dd", 4, 1), ("\U0001f600", 2, 2)]),
        _ok_case("id of 100,000 chars", "s.csv", C + "x" * 100_000 + ",10,3\n", [("x" * 100_000, 10, 3)]),
        _ok_case("quoted id with comma", "s.csv", C + '"a,b",10,3\n', [("a,b", 10, 3)]),
        _error_case("unterminated quote", "s.csv", C + '"a,10,3\nb,2,1\n'),
        _ok_case("extra column", "s.csv", "prompt_id,n,correct,note\na,10,3,hi\n", [("a", 10, 3)]),
        _error_case("row with too many fields", "s.csv", C + "a,10,3,7\n", "line 2"),
        _error_case("row with too few fields", "s.csv", C + "a,10\n", "line 2"),
        _error_case("semicolon separated", "s.csv", "prompt_id;n;correct\na;10;3\n", "';'"),
        _error_case("tab separated", "s.csv", "prompt_id\tn\tcorrect\na\t10\t3\n", "tab"),
        _error_case("duplicate header", "s.csv", "prompt_id,n,n,correct\na,10,10,3\n", "'n'"),
        _ok_case("header with spaces", "s.csv", " prompt_id , n , correct \na,10,3\n", [("a", 10, 3)]),
        _error_case("rows: yes/no rewards", "s.csv", "prompt_id,reward\na,yes\na,no\n", "'yes'"),
        _error_case("rows: nan reward", "s.csv", "prompt_id,reward\na,1\na,nan\n", "'nan'"),
        _error_case("rows: -inf reward", "s.csv", "prompt_id,reward\na,1\na,-inf\n", "'-inf'"),
        _ok_case("rows: all 1", "s.csv", "prompt_id,reward\na,1\na,1\nb,1\n", [("a", 2, 2), ("b", 1, 1)]),
        _error_case("rows: all 0.5", "s.csv", "prompt_id,reward\na,0.5\na,0.5\n", "0.5"),
        _ok_case("rows: duplicate ids add up", "s.csv", "prompt_id,reward\na,1\nb,0\na,0\na,1\n",
                 [("a", 3, 2), ("b", 1, 0)]),
        _error_case("rows: every reward empty", "s.csv", "prompt_id,reward\na,\nb,\n", "empty reward"),
        _error_case("levels: count_abc", "s.csv", "prompt_id,count_0,count_abc\na,3,4\n", "'count_abc'"),
        _error_case("levels: count_nan", "s.csv", "prompt_id,count_0,count_nan\na,3,5\n", "count_nan"),
        _error_case("levels: count_inf", "s.csv", "prompt_id,count_0,count_inf\na,3,5\n", "count_inf"),
        _error_case("levels: count_1 and count_1.0", "s.csv", "prompt_id,count_0,count_1,count_1.0\na,3,5,1\n",
                    "count_1.0"),
        _error_case("levels: one level", "s.csv", "prompt_id,count_1\na,3\n", "one reward level"),
        _error_case("levels: all zero", "s.csv", "prompt_id,count_0,count_1\na,0,0\n", "n = 0"),
        _error_case("levels: negative", "s.csv", "prompt_id,count_0,count_1\na,-1,3\n", "'-1'"),
        _error_case("levels: duplicate id", "s.csv", "prompt_id,count_0,count_1\na,1,3\na,2,2\n", "'a'"),
        _ok_case("levels: binary", "s.csv", "prompt_id,count_0,count_1\na,7,3\n", [("a", 10, 3)]),
        _ok_case("jsonl: counts", "s.jsonl", '{"prompt_id": "a", "n": 10, "correct": 3}\n', [("a", 10, 3)]),
        _ok_case("jsonl: BOM", "s.jsonl", bom + '{"prompt_id": "a", "n": 10, "correct": 3}\n', [("a", 10, 3)]),
        _error_case("jsonl: bad line", "s.jsonl", '{"prompt_id": "a", "n": 10, "correct": 3}\n{oops\n', "line 2"),
        _error_case("jsonl: array line", "s.jsonl", '["a", 10, 3]\n', "line 1", "object"),
        _error_case("jsonl: null line", "s.jsonl", "null\n", "line 1"),
        _error_case("jsonl: a JSON array file", "s.json", '[{"prompt_id": "a", "n": 10, "correct": 3}]', "line 1"),
        _error_case("jsonl: n as object", "s.jsonl", '{"prompt_id": "a", "n": {"v": 10}, "correct": 3}\n',
                    "line 1", "n"),
        _error_case("jsonl: n true", "s.jsonl", '{"prompt_id": "a", "n": true, "correct": false}\n', "line 1", "True"),
        _error_case("jsonl: reward true", "s.jsonl",
                    '{"prompt_id": "a", "reward": true}\n{"prompt_id": "a", "reward": 0}\n', "line 1", "True"),
        _ok_case("jsonl: n as string", "s.jsonl", '{"prompt_id": "a", "n": "10", "correct": "3"}\n', [("a", 10, 3)]),
        _ok_case("jsonl: id a number", "s.jsonl", '{"prompt_id": 7, "n": 10, "correct": 3}\n', [("7", 10, 3)]),
        _error_case("jsonl: id null", "s.jsonl", '{"prompt_id": null, "n": 10, "correct": 3}\n', "empty prompt_id"),
        _error_case("jsonl: id an object", "s.jsonl", '{"prompt_id": {"a": 1}, "n": 10, "correct": 3}\n',
                    "line 1", "prompt_id"),
        _error_case("jsonl: duplicate key", "s.jsonl", '{"prompt_id": "a", "n": 10, "n": 5, "correct": 3}\n',
                    "line 1", "'n'"),
        _error_case("jsonl: NaN literal", "s.jsonl", '{"prompt_id": "a", "n": NaN, "correct": 3}\n', "nan"),
        _error_case("jsonl: nested 100,000 deep", "s.jsonl", '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n", "line 1"),
        _ok_case("jsonl: counts dict", "s.jsonl", '{"prompt_id": "a", "counts": {"0": 7, "1": 3}}\n', [("a", 10, 3)]),
        _error_case("jsonl: counts dict bad level", "s.jsonl", '{"prompt_id": "a", "counts": {"x": 7, "1": 3}}\n',
                    "count_x"),
        _error_case("extension .txt", "s.txt", C + "a,10,3\n", ".csv or .jsonl"),
        _error_case("no extension", "s", C + "a,10,3\n", "'s'"),
        _error_case("a folder", "s.csv", None, "folder"),
    ]
    out = []
    for label, name, data, expect, names, want in T:
        files = {name: data}
        out.append(dict(group="samples file (predict)", label=label, files=files, argv=["predict", name] + PREDICT,
                        expect=expect, names=names, check=_predictions_match(want) if want else None))

        def call(name=name):
            from grpo_theory.predict import read_samples
            return read_samples(name)
        out.append(dict(group="samples file (read_samples)", label=label, files=files, call=call, expect=expect,
                        names=names, check=_table_matches(want) if want else None))
    out.append(dict(group="samples file (predict)", label="missing file", argv=["predict", "nope.csv"] + PREDICT,
                    expect="error", names=["nope.csv"]))
    out.append(dict(group="samples file (predict)", label="/dev/null", argv=["predict", "/dev/null"] + PREDICT,
                    expect="error", names=["/dev/null"]))
    out.append(dict(group="samples file (predict)", label="symlink loop", argv=["predict", "l.csv"] + PREDICT,
                    files={"l.csv": lambda p: p.symlink_to(p.name)}, expect="error", names=["l.csv"]))
    return out


def _objective_is(beta, group_size):
    def check(tmp: Path, res) -> bool:
        if res["value"] is not None:
            obj = res["value"][0]
        else:
            obj = json.loads(res["out"])["objective"]
            obj = type("O", (), obj)
        return abs(float(obj.beta) - beta) <= 1e-15 * beta and float(obj.group_size) == float(group_size)
    return check


def _wheel(members: dict):
    def make(path: Path) -> None:
        with zipfile.ZipFile(path, "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
    return make


TRL_OK = '{"beta": 0.04, "num_generations": 4}'
VERL_OK = ("algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  rollout:\n    n: 4\n  actor:\n    use_kl_loss: true\n"
           "    kl_loss_coef: 0.01\n")
VERL_SH = ("#!/bin/bash\nset -x\nN=4\nKL=0.01\npython3 -m verl.trainer.main_ppo \\\n  algorithm.adv_estimator=grpo \\\n"
           "  actor_rollout_ref.rollout.n=$N \\\n  actor_rollout_ref.actor.use_kl_loss=True \\\n"
           "  actor_rollout_ref.actor.kl_loss_coef=${KL} $@\n")
ORLHF = ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--init_kl_coef", "0.1",
         "--use_kl_loss"]


def _deep(depth: int) -> str:
    return '{"beta": 0.04, "x": ' + "[" * depth + "]" * depth + "}"


def config_cases() -> list[dict]:
    """Trainer configs, each through ``explain`` (CLI) and ``objective_for`` (API, the same file)."""
    trl = lambda **kw: json.dumps({"beta": 0.04, "num_generations": 4, **kw})             # noqa: E731
    T = [  # (label, framework, file, contents, expect, names, (beta, G) for ok, api expectation if different)
        ("TRL valid", "trl", "c.json", TRL_OK, "ok", [], (0.04, 4), None),
        ("TRL beta as text", "trl", "c.json", trl(beta="0.1"), "error", ["beta", "'0.1'"], None, None),
        ("TRL beta true", "trl", "c.json", trl(beta=True), "error", ["beta", "True"], None, None),
        ("TRL beta null", "trl", "c.json", trl(beta=None), "error", ["beta", "None"], None, None),
        ("TRL beta []", "trl", "c.json", trl(beta=[]), "error", ["beta", "[]"], None, None),
        ("TRL beta {}", "trl", "c.json", trl(beta={}), "error", ["beta"], None, None),
        ("TRL beta -1", "trl", "c.json", trl(beta=-1), "error", ["beta", "-1"], None, None),
        ("TRL beta 0 (no KL term)", "trl", "c.json", trl(beta=0), "ok", [], (0.0, 4), None),    # unregularised
        ("TRL beta NaN literal", "trl", "c.json", '{"beta": NaN, "num_generations": 4}', "error", ["beta", "nan"],
         None, None),
        ("TRL beta Infinity literal", "trl", "c.json", '{"beta": Infinity}', "error", ["beta", "inf"], None, None),
        ("TRL beta 1e400", "trl", "c.json", '{"beta": 1e400}', "error", ["beta", "inf"], None, None),
        ("TRL beta 1e-300", "trl", "c.json", trl(beta=1e-300), "ok", [], (1e-300, 4), None),
        ("TRL beta 1e300", "trl", "c.json", trl(beta=1e300), "ok", [], (1e300, 4), None),
        ("TRL num_generations 2.5", "trl", "c.json", trl(num_generations=2.5), "error", ["num_generations", "2.5"],
         None, None),
        ("TRL num_generations text", "trl", "c.json", trl(num_generations="4"), "error", ["num_generations", "'4'"],
         None, None),
        ("TRL num_generations 0", "trl", "c.json", trl(num_generations=0), "error", ["num_generations", "0"], None,
         None),
        ("TRL num_generations 1", "trl", "c.json", trl(num_generations=1), "error", ["num_generations", "1"], None,
         None),
        ("TRL num_generations -4", "trl", "c.json", trl(num_generations=-4), "error", ["num_generations", "-4"],
         None, None),
        ("TRL num_generations true", "trl", "c.json", trl(num_generations=True), "error", ["num_generations", "True"],
         None, None),
        ("TRL num_generations 4.0", "trl", "c.json", trl(num_generations=4.0), "ok", [], (0.04, 4), None),
        ("TRL num_generations 10^9", "trl", "c.json", trl(num_generations=10**9), "ok", [], (0.04, 10**9), None),
        ("TRL loss_type unknown", "trl", "c.json", trl(loss_type="foo"), "error", ["loss_type", "'foo'"], None, None),
        ("TRL loss_type 1", "trl", "c.json", trl(loss_type=1), "error", ["loss_type", "1"], None, None),
        ("TRL scale_rewards group", "trl", "c.json", trl(scale_rewards="group"), "ok", [], (0.04, 4), None),
        ("TRL scale_rewards none", "trl", "c.json", trl(scale_rewards="none"), "ok", [], (0.04, 4), None),
        ("TRL scale_rewards yes", "trl", "c.json", trl(scale_rewards="yes"), "error", ["scale_rewards", "'yes'"],
         None, None),
        ("TRL scale_rewards 2", "trl", "c.json", trl(scale_rewards=2), "error", ["scale_rewards", "2"], None, None),
        ("TRL unknown key betta", "trl", "c.json", trl(betta=0.1), "warn", ["betta"], (0.04, 4), None),
        ("TRL unknown key foo", "trl", "c.json", trl(foo={"a": 1}), "warn", ["foo"], (0.04, 4), None),
        ("TRL empty key", "trl", "c.json", trl(**{"": 1}), "warn", ["''"], (0.04, 4), None),
        ("TRL nested 65 deep", "trl", "c.json", _deep(65), "error", ["c.json", "nested deeper"], None, None),
        ("TRL nested 100,000 deep", "trl", "c.json", _deep(100_000), "error", ["c.json", "nested"], None, None),
        ("TRL 1,000,001 entries", "trl", "c.json", '{"beta": 0.04, "x": [' + "0," * 1_000_000 + "0]}", "error",
         ["c.json", "1,000,000 entries"], None, None),
        ("TRL top-level array", "trl", "c.json", "[1, 2]", "error", ["c.json", "[1, 2]"], None, None),
        ("TRL top-level number", "trl", "c.json", "5", "error", ["c.json", "5"], None, None),
        ("TRL top-level string", "trl", "c.json", '"beta"', "error", ["c.json", "string"], None, None),
        ("TRL null", "trl", "c.json", "null", "error", ["c.json", "null"], None, None),
        ("TRL {} (TRL's defaults)", "trl", "c.json", "{}", "ok", [], None, "error"),
        ("TRL empty file", "trl", "c.json", "", "error", ["c.json"], None, None),
        ("TRL duplicate key", "trl", "c.json", '{"beta": 0.04, "beta": 0.5}', "error", ["c.json", "'beta'"], None,
         None),
        ("TRL BOM", "trl", "c.json", "\ufeff" + TRL_OK, "ok", [], (0.04, 4), None),
        ("TRL binary", "trl", "c.json", bytes(range(256)) * 4, "error", ["c.json", "UTF-8"], None, None),
        ("TRL over 16 MiB", "trl", "c.json", _sparse(16 * 2**20 + 1), "error", ["c.json", "16,777,216"], None, None),
        ("TRL trailing comma", "trl", "c.json", '{"beta": 0.04,}', "error", ["c.json", "JSON"], None, None),
        ("TRL comment", "trl", "c.json", '// mine\n{"beta": 0.04}', "error", ["c.json"], None, None),
        ("TRL a folder", "trl", "c.json", None, "error", ["c.json", "folder"], None, None),
        ("TRL YAML", "trl", "c.yaml", "beta: 0.04\nnum_generations: 4\n", "ok", [], (0.04, 4), None),
        # text in YAML 1.1, and TRL's parser (trl/scripts/utils.py TrlParser: the YAML gives argparse defaults, and
        # argparse converts a text default by the field's type, float) reads it as the number (readers16, 2026-12-07)
        ("TRL YAML 1.0e300 (text in YAML 1.1)", "trl", "c.yaml", "beta: 1.0e300\n", "ok", [], (1e300, 8), None),
        ("TRL YAML 4e-2 (text in YAML 1.1)", "trl", "c.yaml", "beta: 4e-2\n", "ok", [], (0.04, 8), None),
        ("TRL YAML .nan", "trl", "c.yaml", "beta: .nan\n", "error", ["beta", "nan"], None, None),
        ("TRL YAML .inf", "trl", "c.yaml", "beta: .inf\n", "error", ["beta", "inf"], None, None),
        ("TRL YAML 0x4", "trl", "c.yaml", "beta: 0.04\nnum_generations: 0x4\n", "ok", [], (0.04, 4), None),
        ("TRL YAML billion laughs", "trl", "c.yaml",
         "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, "
                                                         f"*{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
         + "beta: 0.04\n", "error", ["c.yaml", "1,000,000 entries"], None, None),
        ("TRL YAML python tag", "trl", "c.yaml", "beta: !!python/object/apply:os.getcwd []\n", "error",
         ["c.yaml", "YAML"], None, None),
        ("TRL YAML two documents", "trl", "c.yaml", "beta: 0.04\n---\nbeta: 0.5\n", "error", ["c.yaml", "YAML"],
         None, None),
        ("TRL YAML tab indent", "trl", "c.yaml", "a:\n\tbeta: 0.04\n", "error", ["c.yaml", "YAML"], None, None),
        ("TRL YAML duplicate key", "trl", "c.yaml", "beta: 0.04\nbeta: 0.5\n", "error", ["c.yaml", "'beta'"], None,
         None),
        ("TRL YAML a list", "trl", "c.yaml", "- beta\n- 0.04\n", "error", ["c.yaml"], None, None),
        ("TRL command line", "trl", "c.sh", "trl grpo --beta 0.04 --num_generations 4 \\\n  --model_name_or_path m\n",
         "ok", [], (0.04, 4), None),
        ("TRL command line, value missing", "trl", "c.sh", "trl grpo --num_generations 4 --beta\n", "error",
         ["--beta"], None, None),
        ("TRL command line, beta x", "trl", "c.sh", "trl grpo --beta x\n", "error", ["beta", "'x'"], None, None),
        ("TRL command line, G 4.5", "trl", "c.sh", "trl grpo --num_generations 4.5\n", "error",
         ["num_generations", "4.5"], None, None),
        ("TRL command line, unknown flag", "trl", "c.sh", "trl grpo --beta 0.04 --num_generations 4 --betta 1\n",
         "warn", ["betta"], (0.04, 4), None),
        ("TRL command line, no flags", "trl", "c.sh", "trl grpo\n", "error", ["c.sh", "--flag"], None, None),
        ("TRL command line, unclosed quote", "trl", "c.sh", "trl grpo --beta '0.04\n", "error", ["c.sh"], None,
         None),
        ("verl YAML", "verl", "v.yaml", VERL_OK, "ok", [], (0.01, 4), None),
        ("verl typo section", "verl", "v.yaml", VERL_OK.replace("actor_rollout_ref", "actr_rollout_ref"), "warn",
         ["actr_rollout_ref"], (0.001, 5), None),
        ("verl typo key", "verl", "v.yaml", VERL_OK + "    kl_los_coef: 0.2\n", "warn", ["kl_los_coef"], (0.01, 4),
         None),
        ("verl rollout.n 0", "verl", "v.yaml", VERL_OK.replace("n: 4", "n: 0"), "error", ["rollout.n", "0"], None,
         None),
        ("verl rollout.n 2.5", "verl", "v.yaml", VERL_OK.replace("n: 4", "n: 2.5"), "error", ["rollout.n", "2.5"],
         None, None),
        ("verl rollout.n text", "verl", "v.yaml", VERL_OK.replace("n: 4", "n: four"), "error",
         ["rollout.n", "'four'"], None, None),
        ("verl rollout.n true", "verl", "v.yaml", VERL_OK.replace("n: 4", "n: true"), "error", ["rollout.n", "True"],
         None, None),
        ("verl kl_loss_coef -1", "verl", "v.yaml", VERL_OK.replace("0.01", "-1"), "error", ["kl_loss_coef", "-1"],
         None, None),
        ("verl kl_loss_coef .nan", "verl", "v.yaml", VERL_OK.replace("0.01", ".nan"), "error", ["kl_loss_coef",
                                                                                                   "nan"], None, None),
        ("verl kl_loss_coef a list", "verl", "v.yaml", VERL_OK.replace("0.01", "[0.01]"), "error",
         ["kl_loss_coef", "[0.01]"], None, None),
        ("verl use_kl_loss maybe", "verl", "v.yaml", VERL_OK.replace("use_kl_loss: true", "use_kl_loss: maybe"),
         "error", ["use_kl_loss", "'maybe'"], None, None),
        ("verl adv_estimator unknown", "verl", "v.yaml", VERL_OK.replace("grpo", "foo"), "error",
         ["adv_estimator", "'foo'"], None, None),
        ("verl section a scalar", "verl", "v.yaml", "algorithm: 5\n", "error", ["algorithm", "5"], None, None),
        ("verl nested 70 deep", "verl", "v.yaml", "a: " + "[" * 70 + "]" * 70 + "\n", "error", ["v.yaml", "nested"],
         None, None),
        ("verl a list", "verl", "v.yaml", "- 1\n- 2\n", "error", ["v.yaml", "list"], None, None),
        ("verl empty file", "verl", "v.yaml", "", "error", ["v.yaml"], None, None),
        ("verl duplicate key", "verl", "v.yaml", VERL_OK + "algorithm:\n  adv_estimator: rloo\n", "error",
         ["v.yaml", "'algorithm'"], None, None),
        ("verl script", "verl", "v.sh", VERL_SH, "ok", [], (0.01, 4), None),
        ("verl script, unset variable", "verl", "v.sh", VERL_SH.replace("${KL}", "${KLX}"), "error", ["KLX"], None,
         None),
        ("verl script, no main_ppo", "verl", "v.sh", "echo hello\n", "error", ["v.sh", "main_ppo"], None, None),
        ("verl script, token without =", "verl", "v.sh", VERL_SH.replace("algorithm.adv_estimator=grpo",
                                                                         "algorithm.adv_estimator"), "error",
         ["algorithm.adv_estimator"], None, None),
        ("verl script, quoted values", "verl", "v.sh", VERL_SH.replace("${KL}", "'0.01'"), "ok", [], (0.01, 4), None),
        ("verl script, n=x", "verl", "v.sh", VERL_SH.replace("N=4", "N=x"), "error", ["rollout.n", "'x'"], None,
         None),
        ("verl script, unclosed quote", "verl", "v.sh", VERL_SH.replace("${KL}", "'0.01"), "error", ["v.sh"], None,
         None),
        ("verl overrides file", "verl", "v.txt", "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
         "actor_rollout_ref.rollout.n=8 actor_rollout_ref.actor.use_kl_loss=True "
         "actor_rollout_ref.actor.kl_loss_coef=0.2\n", "ok", [], (0.2, 8), None),
        ("verl binary", "verl", "v.yaml", b"\xff\xfe\x00" * 100, "error", ["v.yaml", "UTF-8"], None, None),
        ("OpenRLHF argv", "openrlhf", "o.json", json.dumps(ORLHF), "ok", [], (0.1, 4), None),
        ("OpenRLHF value missing", "openrlhf", "o.json", json.dumps(ORLHF[:-3] + ["--init_kl_coef"]), "error",
         ["--init_kl_coef"], None, None),
        ("OpenRLHF n x", "openrlhf", "o.json", json.dumps(ORLHF).replace('"4"', '"x"'), "error",
         ["n_samples_per_prompt", "'x'"], None, None),
        ("OpenRLHF n 2.5", "openrlhf", "o.json", json.dumps(ORLHF).replace('"4"', '"2.5"'), "error",
         ["n_samples_per_prompt", "2.5"], None, None),
        ("OpenRLHF unknown flag", "openrlhf", "o.json", json.dumps(ORLHF + ["--init_kl_cof", "0.5"]), "warn",
         ["init_kl_cof"], (0.1, 4), None),
        ("OpenRLHF flag twice", "openrlhf", "o.json", json.dumps(ORLHF + ["--init_kl_coef", "0.3"]), "ok", [],
         (0.3, 4), None),
        ("OpenRLHF a number in argv (read as its text)", "openrlhf", "o.json",
         json.dumps(ORLHF[:3] + [4] + ORLHF[4:]), "ok", [], (0.1, 4), None),
        ("OpenRLHF nested list", "openrlhf", "o.json", json.dumps([ORLHF]), "error", ["OpenRLHF"], None, None),
        ("OpenRLHF positional token", "openrlhf", "o.json", json.dumps(["train"] + ORLHF), "error", ["'train'"],
         None, None),
        ("OpenRLHF object", "openrlhf", "o.json", json.dumps({"advantage_estimator": "group_norm",
                                                              "n_samples_per_prompt": 4, "init_kl_coef": 0.1,
                                                              "use_kl_loss": True}), "ok", [], (0.1, 4), None),
        ("OpenRLHF object, coef a list", "openrlhf", "o.json", json.dumps({"init_kl_coef": [0.1]}), "error",
         ["init_kl_coef", "[0.1]"], None, None),
        ("OpenRLHF object, use_kl_loss 2", "openrlhf", "o.json", json.dumps({"use_kl_loss": 2}), "error",
         ["use_kl_loss", "2"], None, None),
        ("OpenRLHF a number", "openrlhf", "o.json", "7", "error", ["o.json", "7"], None, None),
        ("OpenRLHF shell line", "openrlhf", "o.sh", "deepspeed --module openrlhf.cli.train_ppo_ray " +
         " ".join(ORLHF) + "\n", "ok", [], (0.1, 4), None),
    ]
    out = []
    for label, fw, name, data, expect, names, want, api_expect in T:
        files = {name: data}
        check = _objective_is(*want) if want else None
        out.append(dict(group=f"config ({fw}, explain)", label=label, files=files, expect=expect, names=names,
                        argv=["explain", name, "--framework", fw, "--json"], check=check))

        def call(fw=fw, name=name):
            from grpo_theory.predict import objective_for
            return objective_for(framework=fw, config=name)
        out.append(dict(group=f"config ({fw}, objective_for)", label=label, files=files, call=call,
                        expect=api_expect or expect, names=names if not api_expect else [], check=check))
    return out
