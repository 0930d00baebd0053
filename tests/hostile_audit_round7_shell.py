"""Cases of the seventh hostile audit (issue 45), part five: the environment, output paths, reruns, help.

Run in real processes (``bash -c``, ``{cli}`` the command): ``HOME`` unset, missing or a file; matplotlib's,
XDG's and Python's temporary folders under a regular file; ``LC_ALL=C``; ``PYTHONIOENCODING=ascii``;
``PYTHONWARNINGS=error``; ``OMP_NUM_THREADS=0``; a deleted working folder. Output paths under a regular file
(as root, ``chmod`` denies nothing: a path below a file is the unwritable one) for every command that writes;
an output that is the command's own input; an output folder that already holds another command's files;
``sweep`` and ``figures --resume`` run twice, a torn last row, an empty record. Every subcommand's help, and the
ways people ask for it.

Expectations: ``ok`` (exit 0, ``after(tmp, out)`` true), ``error`` (exit 1 or 2, the last stderr line a
``grpo-theory`` message naming ``names``, no traceback, ``keep`` still true: nothing of the user's damaged),
``either`` (one of the two), ``help`` (exit 0, ``usage: grpo-theory SUB`` on stdout, stderr empty).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import hostile_audit_round7_ref as ref
from hostile_audit_round7_cli import COUNTS

SAMPLES = "prompt_id,n,correct\n" + "".join(f"{p},{n},{c}\n" for p, n, c in COUNTS)
GRID = "objectives: {beta: [0.5], group_size: [2, 3]}\nquestions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
TRL = json.dumps({"num_generations": 8, "beta": 0.04, "use_bias_correction_kl": False, "max_completion_length": 1})
PRED = "{cli} predict s.csv --beta 0.5 --out o --no-progress"
SOLVE = "{cli} solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5"
PLAIN = "just a file\n"


def _s(group, label, shell, expect, names=(), after=None, files=None, keep=None):
    """A real-process case: ``after`` is checked on success; ``keep`` (``after`` for an ``error``) on a refusal."""
    return dict(group=group, label=label, shell=shell, expect=expect, names=list(names), after=after,
                keep=after if expect == "error" else keep, files=files or {})


def _pred_ok(folder="o"):
    def after(tmp, out) -> bool:
        with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            t = {r["prompt_id"]: r for r in csv.DictReader(fh)}
        return sorted(t) == sorted(p for p, _, _ in COUNTS) and all(
            abs(float(t[p]["pred"]) - ref.eq14(c / n, 0.5)) <= 1e-8 for p, n, c in COUNTS) and not (
            Path(tmp) / folder / ".incomplete").exists()
    return after


def _solve_ok(tmp, out) -> bool:
    rows = {r["method"]: r for r in json.loads(out)["rows"]}
    return abs(float(rows["GRPO reverse/scale"]["pi"][0]) - ref.eq14(0.3, 0.5)) <= 1e-9


def _sweep_ok(name="g.csv", extra_keys=0):
    def after(tmp, out) -> bool:
        with open(Path(tmp) / name, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        keys = [r["key"] for r in rows]
        want = {"q0|beta=0.5,group_size=2": ref.eq14(0.3, 0.5), "q0|beta=0.5,group_size=3": ref.binary_reverse(0.3, 0.5, 3)}
        got = {r["key"]: json.loads(r["reached_policy"])[0] for r in rows if r["key"] in want}
        return (len(keys) == len(set(keys)) == 2 + extra_keys and set(got) == set(want)
                and all(abs(got[k] - w) <= 1e-8 for k, w in want.items()))
    return after


def _unchanged(name, text):
    return lambda tmp, out: (Path(tmp) / name).read_text(encoding="utf-8") == text


def _all(*checks):
    return lambda tmp, out: all(c(tmp, out) for c in checks)


def environment_cases() -> list[dict]:
    G = "environment"
    f = {"s.csv": SAMPLES}
    fp = dict(f, plainfile=PLAIN)
    return [
        _s(G, "HOME unset: solve --json", f"env -u HOME {SOLVE} --json", "ok", after=_solve_ok),
        _s(G, "HOME unset: predict", f"env -u HOME {PRED} --no-plots", "ok", after=_pred_ok(), files=f),
        _s(G, "HOME unset: explain trl --json", "env -u HOME {cli} explain --framework trl c.json --json", "ok",
           after=lambda tmp, out: json.loads(out)["objective"]["group_size"] == 8, files={"c.json": TRL}),
        _s(G, "HOME unset: sweep", "env -u HOME {cli} sweep g.yaml --no-progress", "ok", after=_sweep_ok(),
           files={"g.yaml": GRID}),
        _s(G, "HOME=/nonexistent: predict with figures", f"HOME=/nonexistent/home {PRED}", "ok",
           after=_all(_pred_ok(), lambda tmp, out: any((Path(tmp) / "o").glob("*.png"))), files=f),
        _s(G, "HOME is a regular file: predict with figures", f"HOME=$PWD/plainfile {PRED}", "ok",
           after=_all(_pred_ok(), lambda tmp, out: any((Path(tmp) / "o").glob("*.png"))), files=fp),
        _s(G, "MPLCONFIGDIR under a regular file: predict with figures", f"MPLCONFIGDIR=$PWD/plainfile/mpl {PRED}", "ok",
           after=_all(_pred_ok(), lambda tmp, out: any((Path(tmp) / "o").glob("*.png"))), files=fp),
        _s(G, "XDG_CACHE_HOME and XDG_CONFIG_HOME under a regular file: predict",
           f"XDG_CACHE_HOME=$PWD/plainfile/c XDG_CONFIG_HOME=$PWD/plainfile/k {PRED}", "ok", after=_pred_ok(), files=fp),
        _s(G, "TMPDIR under a regular file: predict", f"TMPDIR=$PWD/plainfile/t {PRED} --no-plots", "ok",
           after=_pred_ok(), files=fp),
        _s(G, "TMPDIR under a regular file: sweep", "TMPDIR=$PWD/plainfile/t {cli} sweep g.yaml --no-progress", "ok",
           after=_sweep_ok(), files={"g.yaml": GRID, "plainfile": PLAIN}),
        _s(G, "LC_ALL=C with unicode prompt ids: predict", f"LC_ALL=C LANG=C {PRED} --no-plots", "ok",
           after=lambda tmp, out: "数学" in (Path(tmp) / "o" / "predictions.csv").read_text(encoding="utf-8"),
           files={"s.csv": "prompt_id,n,correct\né,10,3\n数学,8,1\n"}),
        _s(G, "PYTHONIOENCODING=ascii: explain (text)", "PYTHONIOENCODING=ascii {cli} explain --framework trl c.json",
           "either", ["encod"], files={"c.json": TRL}),
        _s(G, "PYTHONIOENCODING=ascii: solve (text table)", f"PYTHONIOENCODING=ascii {SOLVE}", "either", ["encod"]),
        _s(G, "PYTHONWARNINGS=error: solve --json", f"PYTHONWARNINGS=error {SOLVE} --json", "either", [], after=_solve_ok),
        _s(G, "PYTHONWARNINGS=error: predict", f"PYTHONWARNINGS=error {PRED} --no-plots", "either", [], after=_pred_ok(),
           files=f),
        _s(G, "OMP_NUM_THREADS=0: solve --json", f"OMP_NUM_THREADS=0 {SOLVE} --json", "ok", after=_solve_ok),
        _s(G, "PYTHONHASHSEED=123: sweep --workers 2", "PYTHONHASHSEED=123 {cli} sweep g.yaml --workers 2 --no-progress",
           "ok", after=_sweep_ok(), files={"g.yaml": GRID}),
        _s(G, "a deleted working folder: solve --json", "T=$PWD; mkdir gone && cd gone && rmdir $T/gone && " + SOLVE
           + " --json > $T/solve.json; cd $T && cat solve.json", "ok", after=_solve_ok),
    ]


def output_cases() -> list[dict]:
    G = "output paths and reruns"
    f = {"s.csv": SAMPLES}
    fp = dict(f, plainfile=PLAIN)
    g = {"g.yaml": GRID}
    gp = dict(g, plainfile=PLAIN)
    plain_ok = _unchanged("plainfile", PLAIN)
    old_sweep = ("key,objective,pi_ref,n_points,n_stable,exhaustive,stable_policies,reached_policy,seconds\n"
                 "\"q9|beta=2.0\",\"reverse/scale, G=2, beta=2.0\",\"[0.5, 0.5]\",1,1,True,\"[[0.6, 0.4]]\","
                 "\"[0.6, 0.4]\",0.1\n")
    return [
        _s(G, "predict --out under a regular file", "{cli} predict s.csv --beta 0.5 --out plainfile/o --no-progress",
           "error", ["plainfile"], after=plain_ok, files=fp),
        _s(G, "predict --out an existing regular file", "{cli} predict s.csv --beta 0.5 --out plainfile --no-progress",
           "error", ["plainfile"], after=plain_ok, files=fp),
        _s(G, "predict --out the samples file itself", "{cli} predict s.csv --beta 0.5 --out s.csv --no-progress",
           "error", ["s.csv"], after=_unchanged("s.csv", SAMPLES), files=f),
        _s(G, "predict --out . (the folder of the samples)", "{cli} predict s.csv --beta 0.5 --out . --no-progress "
           "--no-plots", "either", ["."], after=_all(_unchanged("s.csv", SAMPLES), _pred_ok(".")), files=f,
           keep=_unchanged("s.csv", SAMPLES)),
        _s(G, "predict into a folder holding a sweep's CSV and a figures record",
           f"{PRED} --no-plots", "ok", after=_all(_pred_ok(), _unchanged("o/g.csv", old_sweep),
                                                   _unchanged("o/.figures_done.json", "[1]")),
           files=dict(f, **{"o/g.csv": old_sweep, "o/.figures_done.json": "[1]"})),
        _s(G, "predict into a folder holding another run's predictions", f"{PRED} --no-plots", "ok", after=_pred_ok(),
           files=dict(f, **{"o/predictions.csv": "prompt_id,n,correct,p_ref,pred\nzz,5,5,1.0,1.0\n",
                            "o/summary.json": "{\"prompts\": 1}", "o/tradeoff.csv": "beta,mean_pred\n9,0.1\n"})),
        _s(G, "predict where o/predictions.csv is a folder", f"{PRED} --no-plots", "error", ["predictions.csv"],
           files=dict(f, **{"o/predictions.csv": None})),
        _s(G, "predict twice, the second with other samples", f"{PRED} --no-plots && cp s2.csv s.csv && {PRED} --no-plots",
           "ok", after=lambda tmp, out: "zz" in (Path(tmp) / "o" / "predictions.csv").read_text() and "a," not in (
               Path(tmp) / "o" / "predictions.csv").read_text(), files=dict(f, **{"s2.csv": "prompt_id,n,correct\nzz,4,1\n"})),
        _s(G, "sweep --out under a regular file", "{cli} sweep g.yaml --out plainfile/x.csv --no-progress", "error",
           ["plainfile"], after=plain_ok, files=gp),
        _s(G, "sweep --out an existing text file", "{cli} sweep g.yaml --out plainfile --no-progress", "error",
           ["plainfile"], after=plain_ok, files=gp),
        _s(G, "sweep --out its own grid file", "{cli} sweep g.yaml --out g.yaml --no-progress", "error", ["g.yaml"],
           after=_unchanged("g.yaml", GRID), files=g),
        _s(G, "sweep --out a predict run's predictions.csv", f"{PRED} --no-plots && cp o/predictions.csv keep.csv && "
           "{cli} sweep g.yaml --out o/predictions.csv --no-progress", "error", ["predictions.csv"],
           after=lambda tmp, out: (Path(tmp) / "o/predictions.csv").read_bytes() == (Path(tmp) / "keep.csv").read_bytes(),
           files=dict(f, **g)),
        _s(G, "sweep run twice", "{cli} sweep g.yaml --no-progress && {cli} sweep g.yaml --no-progress", "ok",
           after=_sweep_ok(), files=g),
        _s(G, "sweep --out a CSV of another grid (same header)", "{cli} sweep g.yaml --out old.csv --no-progress", "either",
           ["old.csv"], after=_sweep_ok("old.csv", extra_keys=1), files=dict(g, **{"old.csv": old_sweep}),
           keep=_unchanged("old.csv", old_sweep)),
        _s(G, "sweep --out an empty file", "{cli} sweep g.yaml --out empty.csv --no-progress", "ok",
           after=_sweep_ok("empty.csv"), files=dict(g, **{"empty.csv": ""})),
        _s(G, "sweep over a CSV whose last row is torn", "head -c 150 full.csv > g.csv && {cli} sweep g.yaml --no-progress",
           "ok", after=_sweep_ok(), files=dict(g, **{"full.csv": lambda p: p.write_text(
               "key,objective,pi_ref,n_points,n_stable,exhaustive,stable_policies,reached_policy,seconds\n"
               "\"q0|beta=0.5,group_size=2\",\"reverse/scale, G=2, beta=0.5\",\"[0.3, 0.7]\",1,1,True,"
               "\"[[0.7109772228646443, 0.2890227771353557]]\",\"[0.7109772228646443, 0.2890227771353557]\",1.0\n")})),
        _s(G, "figures --out under a regular file", "{cli} figures --only 1 --out plainfile/figs", "error", ["plainfile"],
           after=plain_ok, files={"plainfile": PLAIN}),
        _s(G, "derivations --out under a regular file", "{cli} derivations --out plainfile/d.md", "error", ["plainfile"],
           after=plain_ok, files={"plainfile": PLAIN}),
        _s(G, "validate --quick --out under a regular file", "{cli} validate --quick --out plainfile/v --no-progress",
           "error", ["plainfile"], after=plain_ok, files={"plainfile": PLAIN}),
        _s(G, "figures --only 1, then the same with --resume", "{cli} figures --only 1 --out figs && "
           "{cli} figures --only 1 --out figs --resume", "ok",
           after=lambda tmp, out: json.loads((Path(tmp) / "figs/.figures_done.json").read_text()) == [1]
           and any((Path(tmp) / "figs").glob("fig1_*.png"))),
        _s(G, "figures --resume with an empty record file", "{cli} figures --only 1 --out figs --resume", "either",
           [".figures_done.json"], after=lambda tmp, out: any((Path(tmp) / "figs").glob("fig1_*.png")),
           files={"figs/.figures_done.json": ""}),
        _s(G, "figures --out a folder holding predict's outputs", f"{PRED} --no-plots && "
           "{cli} figures --only 1 --out o", "ok", after=_all(_pred_ok(), lambda tmp, out: any(
               (Path(tmp) / "o").glob("fig1_*.png"))), files=f),
    ]


SUBS = ["solve", "figures", "validate", "fetch-model", "sweep", "explain", "derivations", "predict"]


def help_cases() -> list[dict]:
    G = "help"
    out = [_s(G, f"{sub} --help", f"{{cli}} {sub} --help", "help", [sub]) for sub in SUBS]
    out += [
        _s(G, "--help", "{cli} --help", "help", [""]),
        _s(G, "no arguments at all", "{cli}", "error", []),
        _s(G, "a typo: slove", "{cli} slove --beta 1", "error", ["slove"]),
        _s(G, "a subcommand in capitals: SOLVE", "{cli} SOLVE", "error", ["SOLVE"]),
        _s(G, "solve --hel (abbreviated)", "{cli} solve --hel", "help", ["solve"]),
        _s(G, "help solve", "{cli} help solve", "either", ["help"]),
        _s(G, "--version", "{cli} --version", "either", ["--version"]),
        _s(G, "solve -h --beta abc (help first)", "{cli} solve -h --beta abc", "help", ["solve"]),
        _s(G, "solve --beta abc -h (a bad value first)", "{cli} solve --beta abc -h", "either", ["abc"]),
        _s(G, "predict -h without its required arguments", "{cli} predict -h", "help", ["predict"]),
        _s(G, "COLUMNS=30 solve --help", "COLUMNS=30 {cli} solve --help", "help", ["solve"]),
        _s(G, "python -m grpo_theory --help", "{py} -m grpo_theory --help", "either", ["grpo_theory"]),
        _s(G, "solve --help piped to head -3", "{cli} solve --help | head -3", "help", ["solve"]),
    ]
    return out
