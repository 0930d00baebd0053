"""Fresh hostile audit (issue 45, round four): >= 500 new inputs, each classified automatically.

A hostile new user of every subcommand and of the public Python API, with inputs that no earlier audit tried
(``tests/hostile_audit*.py``, ``tests/cli_bad_inputs.py``, ``tests/test_hostile_inputs.py``,
``tests/test_cli_fuzz.py``): pairs of extremes in the closed forms, every numeric type in every slot, questions
with ties / one answer / 1,000 answers / masses of 1e-300 / rewards of a huge spread, combinations and conflicts
of options, output paths (folders, files, symlinks, FIFOs, long and unicode names), ``--json`` outputs, sweeps
and predictions at the edges, and Ctrl-C during ``sweep``, ``predict`` and ``figures`` followed by a rerun.

Each case states its expectation (``ok``: run, and the number is checked against an independent computation
in :mod:`hostile_audit_fresh_ref` where one exists; ``error``: one line naming ``names``; ``warn``; ``either``:
a clean refusal naming ``names`` or a checked result). Classes: ``clean``, ``correct``, ``traceback``, ``hang``
(past :data:`HANG_S` = 60 s), ``silent`` (a checked number is wrong), ``accepted`` (a bad input run without a
word), ``misleading`` (names something the user did not give), ``unhelpful`` (does not name the input),
``refused_valid``.

Slow, not in the default run: ``python tests/hostile_audit_fresh.py [--group G] [--exclude G] [--sample N] [--csv PATH]``.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_audit_inputs as hi  # noqa: E402  (the runner of the third audit: in-process, with an alarm)

HANG_S = 60
ROOT = HERE.parent


def _figure_stubs():
    import grpo_theory.figures as figures

    return [(figures, "build_figures", hi._ran)]


def _symbolic_stubs():
    import grpo_theory.symbolic as symbolic

    return [(symbolic, "all_derivations", lambda: []), (symbolic, "all_identities", lambda: []),
            (symbolic, "render_markdown", lambda: "RENDERED")]


def all_cases() -> list[dict]:
    import hostile_audit_fresh_cases as ac
    import hostile_audit_fresh_cli as cc

    out = (ac.closed_form_pairs() + ac.type_cases() + ac.question_cases() + ac.objective_conflict_cases()
           + cc.solve_cases() + cc.path_cases() + cc.explain_cases() + cc.sweep_cases() + cc.predict_cases()
           + interrupt_cases())
    for c in out:
        c.setdefault("hang_s", HANG_S)
        c.setdefault("names", [])
    return out


# ---------------------------------------------------------------- Ctrl-C, then a rerun (subprocesses)
SIMPLEX = "objectives: {beta: [0.3, 1.0], group_size: 4}\nsimplex: {rewards: [1, 0, 0.5], step: 0.05}\n"


def _predict_samples(n=300):
    import numpy as np

    rng = np.random.default_rng(7)
    rows = [f"p{i},{int(k)},{int(c)}" for i, (k, c) in enumerate(zip(rng.integers(4, 20, n), rng.integers(0, 4, n)))]
    return "prompt_id,n,correct\n" + "\n".join(rows) + "\n"


def interrupt_cases() -> list[dict]:
    out = []
    for delay in (1.5, 3.0, 5.0):
        out.append(dict(group="Ctrl-C, then rerun", label=f"sweep, SIGINT at {delay} s", proc=True, delay=delay,
                        files={"g.yaml": SIMPLEX}, argv=["sweep", "g.yaml", "--workers", "1", "--no-progress"],
                        expect="ok", after=_sweep_after))
        out.append(dict(group="Ctrl-C, then rerun", label=f"predict with figures, SIGINT at {delay} s", proc=True,
                        delay=delay, files={"s.csv": _predict_samples()},
                        argv=["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-progress"], expect="ok",
                        after=_predict_after))
        out.append(dict(group="Ctrl-C, then rerun", label=f"figures 1 2 3, SIGINT at {delay + 2} s", proc=True,
                        delay=delay + 2, argv=["figures", "--only", "1", "2", "3", "--out", "f"], rerun_extra=["--resume"],
                        expect="ok", after=_figures_after))
    return out


def _sweep_after(tmp: Path, first: bool) -> str:
    import csv

    path = tmp / "g.csv"
    if not path.exists():
        return "" if first else "no g.csv after the rerun"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    if rows and rows[0][0] != "key":
        return "no header"
    body = rows[1:]
    if any(len(r) != 9 for r in body):
        return "a torn row left"
    keys = [r[0] for r in body]
    if len(set(keys)) != len(keys):
        return "duplicate rows"
    if not first and len(keys) != 2 * 171:
        return f"{len(keys)} rows after the rerun, expected 342"
    return ""


def _predict_after(tmp: Path, first: bool) -> str:
    o = tmp / "o"
    marked = (o / ".incomplete").exists()
    complete = (o / "summary.json").exists() and not marked
    if first:
        if o.exists() and any(o.iterdir()) and not marked and not complete:
            return "folder neither complete nor marked .incomplete"
        if complete and not all((o / f).exists() for f in ("predictions.csv", "summary.json")):
            return "unmarked folder lacking files"
        return ""
    if marked:
        return ".incomplete left after a finished rerun"
    if not complete:
        return "rerun did not complete"
    pngs = sorted(p.name for p in o.glob("*.png"))
    return "" if len(pngs) >= 1 else "no figures after the rerun"


def _figures_after(tmp: Path, first: bool) -> str:
    import json

    f = tmp / "f"
    rec = f / ".figures_done.json"
    if first:
        if rec.exists():
            try:
                done = json.loads(rec.read_text())
            except ValueError:
                return "torn .figures_done.json"
            for n in done:
                if not list(f.glob(f"fig{n}_*.png")):
                    return f"figure {n} recorded done without its PNG"
        return ""
    done = json.loads(rec.read_text()) if rec.exists() else []
    return "" if sorted(done) == [1, 2, 3] else f"after the rerun the record says {done}"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _py(argv):
    return [sys.executable, "-c", "import sys; from grpo_theory.cli import main; sys.exit(main())", *argv]


def run_proc_case(case: dict, tmp: Path) -> tuple[str, str]:
    """Start the command, send SIGINT after ``delay`` s, then rerun it to completion."""
    hi._write(tmp, case.get("files", {}))
    env = cli_env()
    # SIGINT back to its default in the child: a harness started in the background (nohup ... &) has it
    # ignored, and Python then never raises KeyboardInterrupt (the first run's 9 cases ran to the end unhurt).
    p = subprocess.Popen(_py(case["argv"]), cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=_default_sigint)
    time.sleep(case["delay"])
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return "hang", "did not stop within 60 s of SIGINT"
    if "Traceback" in err:
        return "traceback", err.strip().splitlines()[-1]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if p.returncode not in (0, 130):
        return "traceback", f"exit {p.returncode}: {' | '.join(lines[-2:])}"
    if p.returncode == 130 and not (lines and ("interrupt" in lines[-1].lower() or "ctrl-c" in lines[-1].lower())):
        return "unhelpful", f"exit 130 with {lines[-1:]!r}"
    bad = case["after"](tmp, True)
    if bad:
        return "silent", f"after SIGINT (exit {p.returncode}): {bad}"
    first = f"exit {p.returncode}: {lines[-1] if lines else ''}"
    try:
        q = subprocess.run(_py(case["argv"] + case.get("rerun_extra", [])), cwd=tmp, env=env, capture_output=True,
                           text=True, timeout=HANG_S * 3)
    except subprocess.TimeoutExpired:
        return "hang", "the rerun did not finish"
    if q.returncode != 0:
        return "traceback" if "Traceback" in q.stderr else "refused_valid", \
            f"rerun exit {q.returncode}: {q.stderr.strip().splitlines()[-1:]}"
    bad = case["after"](tmp, False)
    return ("silent", f"rerun: {bad}") if bad else ("correct", first)


# ---------------------------------------------------------------- in-process cases
def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    """``(class, message)`` of one case, run in the empty folder ``tmp``."""
    if case.get("proc"):
        return run_proc_case(case, tmp)
    stubs = list(case.get("stubs", []))
    if case.get("stub_figures"):
        stubs += _figure_stubs()
    if case.get("stub_symbolic"):
        stubs += _symbolic_stubs()
    run = dict(case, stubs=stubs)
    if case.get("rerun"):
        hi.execute(run, tmp)
        run = dict(run, files={})
    res = hi.execute(run, tmp)
    msg = res["message"] or res["warned"].strip()
    if res.get("where"):
        msg += f" (in {res['where']})"
    if case["expect"] == "either":
        if res["error"]:
            return res["error"], msg
        if res["rc"] == 0:
            return hi.classify(dict(case, expect="ok"), res, tmp), msg
        return hi.classify(dict(case, expect="error"), res, tmp), msg
    return hi.classify(case, res, tmp), msg


def write_csv(done: list[dict], path: str) -> None:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("group", "input", "expected", "class", "message"))
        for c in done:
            w.writerow([c["group"], c["label"], c["expect"], c["cls"], " ".join(c["message"].split())[:300]])



def cli_case(group, label, argv, expect="ok", names=(), check=None, **kw) -> dict:
    """A command-line case of an audit round: ``argv`` run through the CLI, its expected class and the names its
    message must carry; ``check(tmp, res)`` judges an ok result, other keywords go into the case as given."""
    d = dict(group=group, label=label, argv=list(argv), expect=expect, names=list(names), wrong=kw.pop("wrong", []))
    if check is not None:
        d["check"] = check
    d.update(kw)
    return d


def ok_case(group, label, call, check) -> dict:
    """A Python-API case expected to succeed: ``check(value)`` returns True/None when right, False or a text (the
    reason, raised as an AssertionError) when wrong."""
    def chk(tmp, res):
        got = check(res["value"])
        if isinstance(got, str):
            raise AssertionError(got)
        return got is None or bool(got)
    return dict(group=group, label=label, call=call, expect="ok", names=[], check=chk, wrong=[])


def cli_env() -> dict:
    """The environment a real ``grpo-theory`` process of the audits runs in: this checkout, one thread, no display."""
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MPLBACKEND="Agg")


def stderr_lines(err: str) -> list[str]:
    """A process's stderr without blank lines and progress-bar updates."""
    return [ln for ln in err.splitlines() if ln.strip() and "%|" not in ln and "it/s" not in ln]


def shell_verdict(err: str, rc: int) -> tuple[str | None, str, list[str]]:
    """A shell case's first verdict, its message and its :func:`stderr_lines`: ``"traceback"`` where ``err`` holds one,
    else None; the message is the exit status and the last two lines."""
    lines = stderr_lines(err)
    msg = f"rc={rc}: " + " | ".join(lines[-2:])
    return ("traceback" if "Traceback" in err else None), msg, lines


_REF_CALLS = [0]


def _counted(fn):
    def wrapped(*args, **kw):
        _REF_CALLS[0] += 1
        return fn(*args, **kw)
    return wrapped


def _count_calls_of(ref, also=()) -> None:
    """Every public function of the reference module ``ref`` (and each ``(module, name)`` of ``also``, a harness's
    own comparison with the reference) counts its calls, once."""
    if getattr(ref, "_counted", False):
        return
    for name in [n for n in vars(ref) if not n.startswith("_")]:
        fn = getattr(ref, name)
        if callable(fn) and getattr(fn, "__module__", "") == ref.__name__:
            setattr(ref, name, _counted(fn))
    for module, name in also:
        setattr(module, name, _counted(getattr(module, name)))
    ref._counted = True


def noting_reference(cases: list[dict], ref, also=()) -> list[dict]:
    """``cases`` with each check (``after`` for a shell case) noting in ``case["ref"]`` whether it compared with the
    reference: whether a function of ``ref`` (or of ``also``, see :func:`_count_calls_of`) ran inside it."""
    for case in cases:
        check_key = "after" if "shell" in case else "check"
        check = case.get(check_key)
        if check is None:
            continue
        _count_calls_of(ref, also)

        def noted(*args, check=check, case=case):
            before = _REF_CALLS[0]
            try:
                return check(*args)
            finally:
                case["ref"] = _REF_CALLS[0] > before
        case[check_key] = noted
    return cases


def triage(case: dict, mistakes: dict, prefixes: tuple = (), prefix_why: str = "") -> str:
    """``''`` for clean/correct; else ``harness: why`` (its label in ``mistakes``, or starting with one of
    ``prefixes``) or ``library``."""
    if case["cls"] in ("clean", "correct"):
        return ""
    if case["label"] in mistakes:
        return "harness: " + mistakes[case["label"]]
    if prefixes and case["label"].startswith(prefixes):
        return "harness: " + prefix_why
    return "library"


def write_triaged_csv(done: list[dict], path: str, triage_of) -> None:
    """The later rounds' table: :func:`write_csv`'s columns with ``triage_of(case)`` before the message."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("group", "input", "expected", "class", "triage", "message"))
        for c in done:
            w.writerow([c["group"], " ".join(c["label"].split()), c["expect"], c["cls"], triage_of(c),
                        " ".join(c["message"].split())[:300]])


def assert_no_library_finding(audit, tmp_path, minimum: int = 520) -> None:
    """A later round's slow test: ``audit.main`` over every case, at least ``minimum`` of them, and no row of its
    triaged table left as a library finding."""
    import csv

    counts = audit.main(["--csv", str(tmp_path / "audit.csv")])
    assert sum(counts.values()) >= minimum
    with open(tmp_path / "audit.csv", encoding="utf-8", newline="") as fh:
        open_rows = [r for r in csv.DictReader(fh) if r["triage"] == "library"]
    assert not open_rows, [(r["input"], r["class"], r["message"][:120]) for r in open_rows]


def assert_only_open_findings(audit, tmp_path, minimum: int) -> None:
    """A later round's slow test: ``audit.main`` over every case, at least ``minimum`` of them; every library row of
    its triaged table is listed in ``audit.OPEN_FINDINGS``, and every listed one is still a library row."""
    import csv

    counts = audit.main(["--csv", str(tmp_path / "audit.csv")])
    assert sum(counts.values()) >= minimum
    with open(tmp_path / "audit.csv", encoding="utf-8", newline="") as fh:
        library = {r["input"] for r in csv.DictReader(fh) if r["triage"] == "library"}
    unlisted = sorted(library - set(audit.OPEN_FINDINGS))
    assert not unlisted, unlisted
    fixed = sorted(set(audit.OPEN_FINDINGS) - library)
    assert not fixed, f"listed as open but no longer a finding (remove from OPEN_FINDINGS): {fixed}"


def referenced_round_cases(n: int) -> list[dict]:
    """Every case of round ``n`` (``hostile_audit_round{n}_api`` and ``_cli``), with the hang limit and an empty
    ``names`` where not given; each check noted as comparing with the reference (``case["ref"]``) when a function of
    ``hostile_audit_round{n}_ref`` ran inside it. Shared by the rounds from the sixteenth on."""
    import importlib

    import hostile_audit_round10 as r10      # it imports this module: imported at the call, not at the top

    api, cli, ref = (importlib.import_module(f"hostile_audit_round{n}_{part}") for part in ("api", "cli", "ref"))
    cases = api.all_api_cases() + cli.all_cli_cases()
    recorded = [r10._recording({"hang_s": HANG_S, "names": [], **c}) for c in cases]
    return noting_reference(recorded, ref)


def referenced_round_main(n: int, cases: list[dict], classify, triage_of, argv=None) -> collections.Counter:
    """:func:`round_main` for round ``n``, then how many correct rows were compared with its reference."""
    counts = round_main(cases, classify, triage_of, argv)
    n_ref = sum(1 for c in cases if c.get("ref") and c.get("cls") == "correct")
    if counts:
        print(f"{n_ref} correct rows compared with the reference (hostile_audit_round{n}_ref)")
    return counts


def round_main(cases: list[dict], classify, triage_of, argv=None) -> collections.Counter:
    """A later round's command line: ``--group``/``--exclude``/``--sample`` select, ``--count`` counts,
    ``--csv PATH`` writes the triaged table."""
    args = sys.argv[1:] if argv is None else argv
    todo = select_cases(cases, args)
    if "--count" in args:
        print(len(todo), "cases", dict(collections.Counter(c["group"] for c in todo)))
        return collections.Counter()
    return run_cases(todo, classify, lambda done, path: write_triaged_csv(done, path, triage_of), args)

def run_cases(todo: list[dict], classify, write, args: list[str]) -> collections.Counter:
    """Classify each case of ``todo`` in an empty folder with ``classify(case, tmp)``, store its class and message
    (the folder's path as ``<tmp>``) on it, print every case that is not clean or correct, the classes per group
    and in all; with ``--csv PATH`` in ``args`` write the table with ``write(todo, PATH)``. Shared by this audit's
    runner and the fifth audit's."""
    counts, t0 = collections.Counter(), time.time()
    for case in todo:
        with tempfile.TemporaryDirectory() as d:
            cls, message = classify(case, Path(d))
            message = message.replace(str(Path(d).resolve()), "<tmp>").replace(d, "<tmp>")
        counts[cls] += 1
        case["cls"], case["message"] = cls, message
        if cls not in ("clean", "correct"):
            print(cls, "|", case["group"], "|", case["label"], "::", message[:240], flush=True)
    by_group = collections.defaultdict(collections.Counter)
    for c in todo:
        by_group[c["group"]][c["cls"]] += 1
    for g, cnt in by_group.items():
        print(f"{g}: {sum(cnt.values())} {dict(cnt)}")
    print(len(todo), "cases:", dict(counts), f"({time.time() - t0:.0f} s)")
    if "--csv" in args:
        write(todo, args[args.index("--csv") + 1])
    return counts


def select_cases(todo: list[dict], args: list[str]) -> list[dict]:
    """The cases of ``todo`` that the command line's ``--group G`` (groups naming G), ``--exclude G`` and
    ``--sample N`` (N of them, seed 0) select."""
    import random

    if "--group" in args:
        g = args[args.index("--group") + 1]
        todo = [c for c in todo if g in c["group"]]
    if "--exclude" in args:
        g = args[args.index("--exclude") + 1]
        todo = [c for c in todo if g not in c["group"]]
    if "--sample" in args:
        todo = random.Random(0).sample(todo, min(len(todo), int(args[args.index("--sample") + 1])))
    return todo


def main(argv=None) -> collections.Counter:
    args = sys.argv[1:] if argv is None else argv
    return run_cases(select_cases(all_cases(), args), classify_case, write_csv, args)


if __name__ == "__main__":
    main()


def classify_with_bad_class(case: dict, tmp) -> tuple[str, str]:
    """:func:`hostile_audit_round10.classify_case`; a failed check of a case with ``bad_class`` is that class."""
    import hostile_audit_round10 as r10

    cls, message = r10.classify_case(case, tmp)
    if cls == "silent" and case.get("bad_class"):
        cls = case["bad_class"]
    return cls, message


def classify_in_child(case: dict, tmp) -> tuple[str, str]:
    """:func:`classify_with_bad_class`, run in a
    forked child that is killed past the hang limit: the in-process alarm cannot stop a call that stays in compiled
    code (the first process of the first run waited 14 minutes in SciPy's HYBRD on a 10,000-dimensional root, its
    SIGALRM pending); the child's class, message and reference note come back through a pipe."""
    import json
    import os
    import select
    import signal
    import time

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # the child: classify, report, leave at once
        os.close(r)
        try:
            cls, message = classify_with_bad_class(case, tmp)
            out = json.dumps([cls, message, bool(case.get("ref"))])
        except BaseException as exc:                     # noqa: BLE001 - the harness's own failure, reported
            out = json.dumps(["traceback", f"harness: {type(exc).__name__}: {exc}", False])
        with os.fdopen(w, "w") as fh:
            fh.write(out)
        os._exit(0)
    os.close(w)
    # the runners' own limits, plus 15 s: in-process 60 s (the alarm), shell 2 x 60 s, SIGINT then rerun 60 + 3 x 60 s
    limit = (4 if case.get("proc") else 2 if "shell" in case else 1) * case.get("hang_s", HANG_S) + 15
    t0, chunks = time.time(), []
    with os.fdopen(r) as fh:
        while True:
            left = limit - (time.time() - t0)
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "hang", f"over {limit} s (the child was killed; the in-process alarm could not stop it)"
            ready, _, _ = select.select([fh], [], [], min(left, 5.0))
            if ready:
                data = fh.read()
                chunks.append(data)
                break
    os.waitpid(pid, 0)
    try:
        cls, message, noted = json.loads("".join(chunks))
    except ValueError:
        return "traceback", "harness: the child died without a result"
    case["ref"] = noted
    return cls, message
