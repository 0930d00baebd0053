"""Cases of the ninth hostile audit (issue 45), part three: environment oddities no round tried, in real processes.

``HOME`` missing, unset or unusable; ``TMPDIR`` missing, a file or unwritable; matplotlib's and XDG's cache
folders unusable; ``PYTHONOPTIMIZE=2`` (docstrings stripped), ``PYTHONHASHSEED`` changing between a sweep and its
resume; resource limits (``ulimit -f``: the file-size limit, under which Python's writes fail with EFBIG;
``ulimit -n``; ``ulimit -v``); a working folder deleted under the command; paths with a newline, a leading dash,
bytes that are not UTF-8, a component of 256 bytes, 5,000 characters in all, a symlink loop; two commands writing
the same output at once; SIGTERM and SIGHUP part-way (not SIGINT, which round four tried). The harness runs as
root, so ``chmod`` cannot make a folder unwritable: ``/proc`` and regular files stand in for one.

Expectations as in :mod:`hostile_audit_round8` (``ok`` with an ``after`` check, ``error`` naming ``names``,
``either``, ``pipe``). A value checked is Eq. 14 at p = 0.3, beta = 0.5 (:mod:`hostile_audit_round9_ref`), to the
table's 6 decimals or ``predictions.csv``'s 8 significant digits.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import hostile_audit_round9_ref as ref

COUNTS = "prompt_id,n,correct\na,10,3\nb,20,5\nc,7,7\nd,16,0\n"
GRID = "objectives: {beta: [0.3, 0.6], group_size: 2}\nquestions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
SOLVE = "{cli} solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5"
PRED = "{cli} predict s.csv --beta 0.5 --out o --no-progress"
X = ref.eq14(0.3, 0.5)


def _sh(group, label, shell, expect="ok", names=(), **kw):
    kw.setdefault("files", {"s.csv": COUNTS, "g.yaml": GRID})
    return dict(group=group, label=label, shell=shell, expect=expect, names=list(names), **kw)


def _solve_numbers(tmp, out, err):
    line = next(ln for ln in out.splitlines() if ln.startswith("GRPO reverse/scale"))
    got = float(line.split()[2])
    return abs(got - X) <= 5e-7 or f"table {got} != {X}"


def _pred(folder="o", plots=False):
    def check(tmp, out, err):
        with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        a = next(r for r in rows if r["prompt_id"] == "a")
        if abs(float(a["pred"]) - X) > 1e-7 * X:
            return f"pred {a['pred']} != {X}"
        if len(rows) != 4:
            return f"{len(rows)} rows"
        if (Path(tmp) / folder / ".incomplete").exists():
            return "marked .incomplete after exit 0"
        if plots and not list((Path(tmp) / folder).glob("*.png")):
            return "no figures"
        return True
    return check


def _sweep_ok(name="g.csv", n=2):
    def check(tmp, out, err):
        with open(Path(tmp) / name, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        keys = [r["key"] for r in rows]
        if len(keys) != n or len(set(keys)) != n:
            return f"{len(keys)} rows, {len(set(keys))} keys; expected {n}"
        for r in rows:
            b = float(r["objective"].split("beta=")[1].split(",")[0])
            x = json.loads(r["reached_policy"])[0]
            if abs(x - ref.eq14(0.3, b)) > 1e-9:
                return f"{r['key']}: {x}"
        return True
    return check


def environment_cases() -> list[dict]:
    G_ = "shell: HOME, TMPDIR, caches, interpreter flags"
    out = []
    for lab, pre in [("HOME=/nonexistent", "HOME=/nonexistent "), ("HOME unset", "env -u HOME "),
                     ("HOME=/proc (unwritable)", "HOME=/proc "), ("HOME a regular file", "HOME=$PWD/s.csv "),
                     ("TMPDIR=/nonexistent", "TMPDIR=/nonexistent "), ("TMPDIR a regular file", "TMPDIR=$PWD/s.csv "),
                     ("TMPDIR=/proc (unwritable)", "TMPDIR=/proc "),
                     ("MPLCONFIGDIR and XDG_CACHE_HOME under /proc", "MPLCONFIGDIR=/proc/mpl XDG_CACHE_HOME=/proc/xdg "),
                     ("MPLCONFIGDIR a regular file", "MPLCONFIGDIR=$PWD/s.csv ")]:
        out.append(_sh(G_, f"predict with plots, {lab}", pre + PRED, after=_pred(plots=True), one_line=False))
        if lab.startswith(("HOME=/nonexistent", "TMPDIR=/nonexistent", "TMPDIR=/proc", "HOME unset")):
            out.append(_sh(G_, f"sweep --workers 2, {lab}", pre + "{cli} sweep g.yaml --workers 2 --no-progress",
                           after=_sweep_ok()))
            out.append(_sh(G_, f"solve, {lab}", pre + SOLVE, after=_solve_numbers))
    out.append(_sh(G_, "figures --only 1 with HOME=/nonexistent and TMPDIR=/nonexistent",
                   "HOME=/nonexistent TMPDIR=/nonexistent {cli} figures --only 1 --out f",
                   after=lambda tmp, o, e: bool(list((Path(tmp) / "f").glob("fig1*"))) or "no figure 1"))
    out.append(_sh(G_, "solve under PYTHONOPTIMIZE=2 (docstrings stripped)", "PYTHONOPTIMIZE=2 " + SOLVE,
                   after=_solve_numbers))
    out.append(_sh(G_, "solve --help under PYTHONOPTIMIZE=2", "PYTHONOPTIMIZE=2 {cli} solve --help", "help", ["solve"]))
    out.append(_sh(G_, "predict under PYTHONOPTIMIZE=1 (asserts removed)", "PYTHONOPTIMIZE=1 " + PRED + " --no-plots",
                   after=_pred()))
    out.append(_sh(G_, "explain under PYTHONOPTIMIZE=2",
                   "PYTHONOPTIMIZE=2 {cli} explain --framework trl c.json --json",
                   files={"c.json": json.dumps(dict(trl_version="1.16.0", num_generations=8, beta=0.04,
                                                    use_bias_correction_kl=False, loss_type="grpo",
                                                    max_completion_length=1))},
                   after=lambda tmp, o, e: json.loads(o)["objective"]["beta"] == 0.04))
    out.append(_sh(G_, "sweep, then a resume under another PYTHONHASHSEED (keys stable)",
                   "PYTHONHASHSEED=1 {cli} sweep g.yaml --workers 1 --no-progress && "
                   "printf 'objectives: {beta: [0.3, 0.6, 0.9], group_size: 2}\\nquestions:\\n  - {pi_ref: [0.3, 0.7], "
                   "rewards: [1, 0]}\\n' > g.yaml && PYTHONHASHSEED=2 {cli} sweep g.yaml --workers 1 --no-progress",
                   after=_sweep_ok(n=3)))
    out.append(_sh(G_, "predict with plots under PYTHONDEVMODE=1 (dev mode: ResourceWarnings shown)",
                   "PYTHONDEVMODE=1 " + PRED, after=_pred(plots=True), one_line=False))
    out.append(_sh(G_, "solve under OMP_NUM_THREADS=abc", "OMP_NUM_THREADS=abc " + SOLVE, after=_solve_numbers))
    out.append(_sh(G_, "solve --json under PYTHONIOENCODING=utf-16 (a BOM-ful stdout)",
                   "PYTHONIOENCODING=utf-16 " + SOLVE + " --json > out.json",
                   after=lambda tmp, o, e: bool(json.loads((Path(tmp) / "out.json").read_bytes().decode("utf-16"))["rows"])))
    out.append(_sh(G_, "predict under TZ=Nowhere/Invalid", "TZ=Nowhere/Invalid " + PRED + " --no-plots", after=_pred()))
    out.append(_sh(G_, "predict under COLUMNS=100000 with progress bars",
                   "COLUMNS=100000 {cli} predict s.csv --beta 0.5 --out o --no-plots", after=_pred()))
    return out


def limit_cases() -> list[dict]:
    G_ = "shell: resource limits"
    out = []
    out.append(_sh(G_, "predict under ulimit -f 1 (files over 1 KiB cannot be written)",
                   "ulimit -f 1; {cli} predict big.csv --beta 0.5 --out out9 --no-progress", "error", ["out9"],
                   files={"big.csv": "prompt_id,n,correct\n" + "".join(f"p{i},40,{i % 41}\n" for i in range(400))}))
    out.append(_sh(G_, "sweep under ulimit -f 1 (the CSV outgrows 1 KiB)",
                   "ulimit -f 1; {cli} sweep g.yaml --workers 1 --no-progress", "error", ["g.csv"],
                   files={"g.yaml": "objectives: {beta: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}\n"
                                    "questions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"}))
    out.append(_sh(G_, "solve under ulimit -f 0 (nothing to write)", "ulimit -f 0; " + SOLVE, after=_solve_numbers))
    out.append(_sh(G_, "figures --only 1 under ulimit -f 4", "ulimit -f 4; {cli} figures --only 1 --out figs9", "error",
                   ["figs9"]))
    out.append(_sh(G_, "solve --json redirected to a file under ulimit -f 0 (stdout cannot be written)",
                   "ulimit -f 0; " + SOLVE + " --json > out.json", "error", []))
    out.append(_sh(G_, "predict with plots under ulimit -n 64", "ulimit -n 64; " + PRED.replace("--out o", "--out out9"),
                   "either", ["out9"], after=_pred("out9", plots=True)))
    out.append(_sh(G_, "sweep --workers 2 under ulimit -n 32", "ulimit -n 32; {cli} sweep g.yaml --workers 2 --no-progress",
                   "either", [], after=_sweep_ok()))
    out.append(_sh(G_, "solve under ulimit -v 4 GiB", "ulimit -v 4000000; " + SOLVE, after=_solve_numbers))
    out.append(_sh(G_, "predict under ulimit -v 4 GiB", "ulimit -v 4000000; " + PRED + " --no-plots", after=_pred()))
    return out


def path_cases() -> list[dict]:
    G_ = "shell: paths"
    out = []
    nl = "$'s\\nx.csv'"
    out.append(_sh(G_, "predict a samples file whose name holds a newline",
                   f"cp s.csv {nl} && {{cli}} predict {nl} --beta 0.5 --out o --no-plots --no-progress", after=_pred()))
    out.append(_sh(G_, "predict --out a name holding a newline",
                   "{cli} predict s.csv --beta 0.5 --out $'out9\\nx' --no-plots --no-progress", "either", ["out9"],
                   after=_pred("out9\nx")))
    out.append(_sh(G_, "predict ./-s.csv (a leading dash, written as a path)",
                   "cp s.csv ./-s.csv && {cli} predict ./-s.csv --beta 0.5 --out o --no-plots --no-progress", after=_pred()))
    out.append(_sh(G_, "predict -- -s.csv (a leading dash after --)",
                   "cp s.csv ./-s.csv && {cli} predict --beta 0.5 --out o --no-plots --no-progress -- -s.csv", "either",
                   ["-s.csv"], after=_pred(), one_line=False))
    out.append(_sh(G_, "sweep --out -g.csv (a leading dash)", "{cli} sweep g.yaml --out -g.csv --workers 1 --no-progress",
                   "either", ["-g.csv"], one_line=False, after=_sweep_ok("-g.csv")))
    out.append(_sh(G_, "predict --out a component of 255 bytes", "{cli} predict s.csv --beta 0.5 --out " + "o" * 255
                   + " --no-plots --no-progress", after=_pred("o" * 255)))
    out.append(_sh(G_, "predict --out a component of 256 bytes (ENAMETOOLONG)", "{cli} predict s.csv --beta 0.5 --out "
                   + "o" * 256 + " --no-plots --no-progress", "error", ["o" * 40]))
    out.append(_sh(G_, "predict --out a path of 5,000 characters", "{cli} predict s.csv --beta 0.5 --out "
                   + "/".join(["p" * 200] * 25) + " --no-plots --no-progress", "either", ["p" * 40]))
    out.append(_sh(G_, "sweep a grid path of 5,000 characters (missing)", "{cli} sweep " + "/".join(["g" * 200] * 25)
                   + ".yaml --workers 1", "error", ["g" * 40]))
    out.append(_sh(G_, "predict a samples symlink loop", "ln -s loop.csv loop.csv; {cli} predict loop.csv --beta 0.5 "
                   "--out o --no-progress", "error", ["loop.csv"]))
    out.append(_sh(G_, "predict --out a dangling symlink", "ln -s nowhere/out9 out9; {cli} predict s.csv --beta 0.5 "
                   "--out out9 --no-plots --no-progress", "either", ["out9"]))
    out.append(_sh(G_, "predict --out a symlink to /proc", "ln -s /proc/self/fdinfo out9; {cli} predict s.csv --beta 0.5 "
                   "--out out9 --no-plots --no-progress", "error", ["out9"]))
    out.append(_sh(G_, "predict a samples name that is not UTF-8 (missing)",
                   "{cli} predict $'\\xff\\xfe.csv' --beta 0.5 --out o --no-progress", "error", [".csv"]))
    out.append(_sh(G_, "predict a samples name that is not UTF-8 (present)",
                   "cp s.csv $'\\xff.csv' && {cli} predict $'\\xff.csv' --beta 0.5 --out o --no-plots --no-progress",
                   after=_pred()))
    out.append(_sh(G_, "predict --out a name that is not UTF-8",
                   "{cli} predict s.csv --beta 0.5 --out $'o\\xff' --no-plots --no-progress", after=_pred("o\udcff")))
    out.append(_sh(G_, "sweep --out a name that is not UTF-8",
                   "{cli} sweep g.yaml --out $'g\\xff.csv' --workers 1 --no-progress", after=_sweep_ok("g\udcff.csv")))
    out.append(_sh(G_, "solve with a --pi-ref value holding a non-UTF-8 byte",
                   "{cli} solve --pi-ref $'0.3\\xff' 0.7 --rewards 1 0 --beta 0.5", "error", ["pi-ref"], one_line=False))
    out.append(_sh(G_, "predict a samples name in NFC when the file is NFD",
                   "cp s.csv $'e\\xcc\\x81.csv' && {cli} predict $'\\xc3\\xa9.csv' --beta 0.5 --out o --no-progress",
                   "error", ["é.csv"]))
    out.append(_sh(G_, "a grid named 'g \"1\".yaml' (quotes and spaces)",
                   "cp g.yaml 'g \"1\".yaml' && {cli} sweep 'g \"1\".yaml' --workers 1 --no-progress",
                   after=_sweep_ok('g "1".csv')))
    out.append(_sh(G_, "explain in a working folder deleted under it",
                   "mkdir x && cd x && rmdir ../x && {cli} explain --framework trl \"$OLDPWD/c.json\" --json "
                   "> \"$OLDPWD/e.json\"",
                   files={"c.json": json.dumps(dict(trl_version="1.16.0", num_generations=8, beta=0.04,
                                                    use_bias_correction_kl=False, loss_type="grpo",
                                                    max_completion_length=1))},
                   after=lambda tmp, o, e: json.loads((Path(tmp) / "e.json").read_text())["objective"]["beta"] == 0.04))
    out.append(_sh(G_, "predict --out o in a working folder deleted under it",
                   "mkdir x && cd x && rmdir ../x && {cli} predict \"$OLDPWD/s.csv\" --beta 0.5 --out out9 "
                   "--no-plots --no-progress", "error", ["out9"]))
    out.append(_sh(G_, "sweep with the grid's default out in a deleted folder",
                   "mkdir x && cd x && rmdir ../x && {cli} sweep \"$OLDPWD/g.yaml\" --workers 1 --no-progress",
                   after=_sweep_ok()))
    return out


def concurrency_cases() -> list[dict]:
    G_ = "shell: two at once, SIGTERM and SIGHUP part-way"
    out = []
    big = "prompt_id,n,correct\n" + "".join(f"p{i},{50 + i % 950},{(i * 13) % 50}\n" for i in range(3000))
    out.append(_sh(G_, "two predicts into the same --out at once",
                   "(" + PRED + " --no-plots & " + PRED + " --no-plots & wait)", "ok", after=_pred()))
    out.append(_sh(G_, "two sweeps of the same grid at once (same CSV)",
                   "({cli} sweep g.yaml --workers 1 --no-progress & {cli} sweep g.yaml --workers 1 --no-progress & wait)",
                   "ok", after=_sweep_ok()))

    def folder_ok(tmp, out_, err):
        o = Path(tmp) / "o"
        if not o.exists():
            return True
        marked = (o / ".incomplete").exists()
        done = (o / "summary.json").exists()
        if any(o.iterdir()) and not marked and not done:
            return "folder neither complete nor marked .incomplete"
        return True

    for sig in ("TERM", "HUP"):
        out.append(_sh(G_, f"predict (3,000 prompts, plots) sent SIG{sig} after 4 s",
                       f"({{cli}} predict big.csv --beta 0.5 --out o --no-progress & p=$!; sleep 4; kill -{sig} $p; "
                       "wait $p; s=$?; [ $s -eq 0 ] || [ $s -ge 128 ] || [ $s -eq 1 ] || [ $s -eq 2 ] || exit 9)",
                       "pipe", files={"big.csv": big}, after=folder_ok))

    def sweep_rerun(tmp, out_, err):
        with open(Path(tmp) / "g.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        keys = [r["key"] for r in rows]
        return (len(keys) == 12 and len(set(keys)) == 12) or f"{len(keys)} rows, {len(set(keys))} keys after the rerun"

    grid12 = ("objectives: {beta: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], group_size: [4, 16]}\nquestions:\n"
              "  - {pi_ref: [0.2, 0.3, 0.5], rewards: [1, 0.5, 0]}\n")
    for sig in ("TERM", "HUP"):
        out.append(_sh(G_, f"sweep sent SIG{sig} after 3 s, then rerun",
                       f"({{cli}} sweep g.yaml --workers 1 --no-progress & p=$!; sleep 3; kill -{sig} $p; wait $p; "
                       "{cli} sweep g.yaml --workers 1 --no-progress)", "pipe", files={"g.yaml": grid12},
                       after=sweep_rerun))
    return out


def device_cases() -> list[dict]:
    G_ = "shell: special files as inputs and outputs"
    out = []
    out.append(_sh(G_, "predict /proc/self/status (no suffix, not samples)", "{cli} predict /proc/self/status --beta 0.5 "
                   "--out o --no-progress", "error", ["/proc/self/status"]))
    out.append(_sh(G_, "predict --out /dev/null", "{cli} predict s.csv --beta 0.5 --out /dev/null --no-progress", "error",
                   ["/dev/null"]))
    out.append(_sh(G_, "sweep --out /dev/null (a CSV that cannot be resumed)",
                   "{cli} sweep g.yaml --out /dev/null --workers 1 --no-progress", "either", ["/dev/null"]))
    out.append(_sh(G_, "derivations --out /dev/full", "{cli} derivations --out /dev/full", "error", ["/dev/full"]))
    out.append(_sh(G_, "explain a config that is /dev/null", "{cli} explain --framework trl /dev/null", "error",
                   ["/dev/null"]))
    out.append(_sh(G_, "sweep a grid that is a folder", "mkdir gd.yaml && {cli} sweep gd.yaml --workers 1", "error",
                   ["gd.yaml"]))
    out.append(_sh(G_, "predict with stdin closed and '-' as the samples", "{cli} predict - --beta 0.5 --out o "
                   "--no-progress <&-", "error", ["-"]))
    out.append(_sh(G_, "predict from a file being appended to (tail of a live eval)",
                   "({ cat s.csv; sleep 2; echo e,64,33; } > live.csv &) ; sleep 0.5; {cli} predict live.csv --beta 0.5 "
                   "--out o --no-plots --no-progress", "either", ["live.csv"], after=_pred()))
    out.append(_sh(G_, "predict under setsid (no controlling terminal) with progress bars",
                   "setsid -w {cli} predict s.csv --beta 0.5 --out o --no-plots", after=_pred()))
    out.append(_sh(G_, "predict with stderr a file and stdout a pipe to wc",
                   "{cli} predict s.csv --beta 0.5 --out o --no-plots 2> err.txt | wc -c", after=_pred()))
    return out


def all_shell_cases() -> list[dict]:
    return environment_cases() + limit_cases() + path_cases() + concurrency_cases() + device_cases()
