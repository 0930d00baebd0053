"""Third hostile audit (issue 45), first part: bad and extreme values for every numeric option of ``solve`` and
``predict`` and for the binary closed forms, each classified.

Classes: ``clean`` (exit 2 / InvalidInputError, one line naming the value), ``correct`` (a valid value solved;
for ``closed_form.binary_pairwise`` checked against Eq. 14 in 400-digit mpmath), ``traceback``, ``hang`` (past
``HANG_S``), ``silent`` (a wrong or non-finite number), ``accepted`` (a bad value run), ``unhelpful`` (an error
that does not name the value), ``refused_valid``. Run ``python tests/hostile_audit.py [--sample N]``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import math
import signal
import sys
import tempfile
import warnings
from pathlib import Path

HANG_S = 30
VALUES = ["nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "1e400", "-1e400", "", " ", "abc", "0x10", "1e",
          "1,5", "\u00bd", "None", "-1", "0", "-0", "1e-400", "5e-324", "1e-300", "1e300", "0.5", "2", "3", "1_0",
          "\u0661", "99999999999999999999"]
#: (subcommand argv with {v}, low, high, open ends (True: low; "both"), integer) for each numeric option
OPTIONS = [
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "{v}"], 0, None, True, False),
    (["solve", "--pi-ref", "{v}", "0.7", "--rewards", "1", "0", "--beta", "0.5"], 0.3, 0.3, False, False),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "{v}", "0", "--beta", "0.5"], None, None, False, False),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--std-eps", "{v}"], 0, None, False,
     False),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "{v}"], 2, 1e6,
     False, "G"),
    (["predict", "S", "--beta", "{v}", "--out", "O"], 0, None, True, False),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--slow-tol", "{v}"], 0, 1, True, False),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--level", "{v}"], 0, 1, "both", False),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--std-eps", "{v}"], 0, None, False, False),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--k", "{v}"], 1, None, False, True),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--clock", "{v}"], 0, None, True, False),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--measured", "S", "--seed", "{v}"], 0, None, False, True),
    (["predict", "S", "--beta", "0.5", "--out", "O", "--tradeoff-betas", "{v}"], 0, None, True, False),
    (["explain", "C", "--framework", "trl", "--completion-tokens", "{v}"], 1, 10**7, False, True),
]
API = ["binary_pairwise", "binary_large_group", "binary_pairwise_direct"]


def _parse(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def expected(text: str, low, high, low_open, integer) -> str:
    """'error' or 'ok' for ``text`` as the option's value, by the option's documented range."""
    v = _parse(text)
    if integer == "G" and text.strip().lower() in ("inf", "+inf", "infinity"):   # documented: the large-G limit
        return "ok"
    if v is None or not math.isfinite(v) or (integer and v != int(v)) or (integer and text.strip() != text):
        return "error"
    if integer and not text.strip().lstrip("+-").isdigit():
        return "either"
    if low is not None and (v < low or (low_open and v == low)):
        return "error"
    if high is not None and (v > high or (low_open == "both" and v == high)):
        return "error"
    return "ok"


def cases() -> list[dict]:
    out = []
    for argv, low, high, low_open, integer in OPTIONS:
        for v in VALUES:
            slot = next(i for i, a in enumerate(argv) if "{v}" in a)
            out.append(dict(kind="cli", argv=[a.replace("{v}", v) for a in argv], value=v,
                            option=f"{argv[0]} {argv[slot - 1]}", expect=expected(v, low, high, low_open, integer)))
    for fn in API:
        for v in VALUES:
            for slot in (0, 1):
                args = ["0.3", "0.5"]
                args[slot] = v
                bad = expected(v, 0, 1, False, False) if slot == 0 else expected(v, 0, None, True, False)
                out.append(dict(kind="api", fn=fn, args=args, value=v, expect=bad,
                                option=f"closed_form.{fn} argument {slot}"))
    return out


def _alarm(signum, frame):
    raise TimeoutError


def _eq14(p: float, b: float):
    import mpmath as mp

    with mp.workdps(400):
        B, P = mp.mpf(b), mp.mpf(p)
        if P == 0:                                   # pi_ref(a) = 0: a keeps probability 0
            return 0.0
        return float((1 - B + mp.sqrt((1 - B) ** 2 + 4 * B * P)) / 2)


def run_case(case: dict, tmp: Path) -> tuple[str, str]:
    """``(class, message)`` of a numbers case."""
    from grpo_theory import closed_form
    from grpo_theory.cli import main
    from grpo_theory.errors import ExactEvaluationTooLarge, InvalidInputError

    (tmp / "S.csv").write_text("prompt_id,n,correct\na,10,3\nb,8,0\n")
    (tmp / "C").write_text('{"beta": 0.04, "num_generations": 4}')
    err, out = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    result, exc = None, None
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if case["kind"] == "cli":
                    names = {"S": "S.csv", "O": "O", "C": "C"}
                    argv = [str(tmp / names[a]) if a in names else a for a in case["argv"]]
                    rc = main(argv + (["--no-plots", "--no-progress"] if argv[0] == "predict" else []))
                else:
                    args = [_parse(a) if _parse(a) is not None else a for a in case["args"]]
                    result = getattr(closed_form, case["fn"])(*args)
                    rc = 0
            except SystemExit as e:
                rc = e.code
            except (InvalidInputError, ExactEvaluationTooLarge) as e:
                rc, exc = 2, str(e)
    except TimeoutError:
        return "hang", ""
    except Exception as e:                                   # noqa: BLE001 - any other exception is the finding
        return "traceback", f"{type(e).__name__}: {e}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    message = exc if exc is not None else err.getvalue()
    return _number_class(case, rc, message, result), " ".join(message.split())


def _number_class(case: dict, rc, message: str, result) -> str:
    v = case["value"]
    if rc == 2:
        if "Traceback" in message:
            return "traceback"
        if case["expect"] == "ok":
            return "refused_valid"
        shown = {v, v.strip(), repr(v), repr(v.strip())}
        if _parse(v) is not None:
            shown.add(repr(_parse(v)))
            if _parse(v).is_integer():                       # -0 shown as 0, 10^20 with separators
                shown |= {str(int(_parse(v))), f"{int(_parse(v)):,}"}
            if v.strip().lstrip("+-").isascii() and v.strip().lstrip("+-").isdigit():   # 99...9 exactly, not 1e20
                shown.add(f"{int(v):,}")
        return "clean" if any(s and s in message for s in shown) or (v.strip() == "" and "''" in message) \
            else "unhelpful"
    if rc != 0:
        return "traceback"
    if case["expect"] == "error":
        return "accepted"
    if result is not None:
        import numpy as np

        x = float(np.asarray(result))
        if not math.isfinite(x):
            return "silent"
        if case["fn"] == "binary_pairwise":
            want = _eq14(*[float(a) for a in case["args"]])
            if abs(x - want) > 1e-12 * max(abs(want), 1e-300):
                return "silent"
    return "correct"


def all_cases(part: str = "all") -> list[dict]:
    """Every case of the audit, each with ``part``, ``group``, ``label`` and ``expect``: ``numbers`` (the 600
    values above) and ``inputs`` (files, configs, the other subcommands and the API: :mod:`hostile_audit_cases`,
    :mod:`hostile_audit_commands`)."""
    out = []
    if part in ("all", "numbers"):
        for c in cases():
            out.append(dict(c, part="numbers", group=c["option"], label=repr(c["value"])))
    if part in ("all", "inputs"):
        sys.path.insert(0, str(Path(__file__).parent))
        import hostile_audit_cases as hc
        import hostile_audit_commands as hm

        for c in (hc.samples_cases() + hc.config_cases() + hm.sweep_cases() + hm.other_command_cases()
                  + hm.api_cases()):
            out.append(dict(c, part="inputs"))
    return out


def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    """``(class, message)`` of any case of :func:`all_cases`, run in the empty folder ``tmp``."""
    if case["part"] == "numbers":
        return run_case(case, tmp)
    import hostile_audit_inputs

    return hostile_audit_inputs.run_case(case, tmp)


#: The per-case table (``--csv``): one row per case, so that the counts in docs/reliability.md can be checked.
CSV_COLUMNS = ("part", "group", "input", "expected", "class", "message")


def write_csv(done: list[dict], path: str) -> None:
    """The cases run, with their class and the message (or warning) they gave, as a CSV at ``path``."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for c in done:
            w.writerow([c["part"], c["group"], c["label"], c["expect"], c["cls"], " ".join(c["message"].split())[:300]])


def main(argv=None) -> collections.Counter:
    """``python tests/hostile_audit.py [--part numbers|inputs|all] [--sample N] [--csv PATH]``: run, print the
    non-clean cases and the counts by class; with ``--csv``, write the per-case table
    (docs/results/hostile_audit_cases.csv is ``--csv docs/results/hostile_audit_cases.csv``)."""
    import random

    args = sys.argv[1:] if argv is None else argv
    part = args[args.index("--part") + 1] if "--part" in args else "all"
    todo = all_cases(part)
    if "--sample" in args:
        todo = random.Random(0).sample(todo, int(args[args.index("--sample") + 1]))
    counts, bad = collections.Counter(), []
    for case in todo:
        with tempfile.TemporaryDirectory() as d:
            cls, message = classify_case(case, Path(d))
            message = message.replace(str(Path(d).resolve()), "<tmp>").replace(d, "<tmp>")   # the same each run
        counts[cls] += 1
        case["cls"], case["message"] = cls, message
        if cls not in ("clean", "correct"):
            bad.append(case)
    for case in bad:
        print(case["cls"], case["part"], case["group"], case["label"], "::", case["message"][:200])
    by_part = collections.Counter((c["part"], c["cls"]) for c in todo)
    for p in ("numbers", "inputs"):
        n = sum(v for (q, _), v in by_part.items() if q == p)
        if n:
            print(p, n, "cases:", {k: v for (q, k), v in sorted(by_part.items()) if q == p})
    print(len(todo), "cases:", dict(counts))
    if "--csv" in args:
        write_csv(todo, args[args.index("--csv") + 1])
    return counts


if __name__ == "__main__":
    main()
