"""Third hostile audit (issue 45), second part: inputs beyond numbers, each classified.

Samples files (CSV and JSONL, through ``predict`` and ``read_samples``), trainer configs (TRL JSON/YAML/command
lines, verl YAML/overrides/run scripts, OpenRLHF argv and flag objects, through ``explain`` and
``objective_for``), DataFrames and arrays in the Python API, and the other subcommands (``sweep``, ``figures
--resume``, ``validate``, ``derivations``, ``explain``, ``fetch-model``): :mod:`hostile_audit_cases` builds
the cases, this module runs and classifies one.

A case says what a correct program does with it: ``error`` (refuse, naming ``names``), ``ok`` (run; where
``check`` is given, the result is checked against a value computed here, independently of the library) or
``warn`` (run, and a warning names ``names``). Classes: ``clean`` (a one-line error, or the expected warning,
naming what it should), ``correct``, ``traceback``, ``hang`` (past ``HANG_S``), ``silent`` (ran, and the
checked number is wrong), ``accepted`` (a bad input run without a word), ``misleading`` (the message names
something the user did not give: ``wrong``), ``unhelpful`` (an error that does not name ``names``),
``refused_valid``.

The commands that train (``validate``'s studies past their checks), download (``fetch-model`` without
``--wheel``) or draw every figure are replaced by recorders, so their checks, which run first, are audited.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import traceback
import warnings
from pathlib import Path

HANG_S = 30


class Ran(Exception):
    """A stubbed heavy command was reached: its arguments passed every check."""


def _ran(*args, **kwargs):
    raise Ran()


def _stubs():
    """``(module, attribute, replacement)`` for the heavy commands."""
    from grpo_theory import cli

    return [(cli, "_run_study", _ran)]


@contextlib.contextmanager
def _patched(pairs):
    saved = [(m, a, getattr(m, a)) for m, a, _ in pairs]
    try:
        for m, a, v in pairs:
            setattr(m, a, v)
        yield
    finally:
        for m, a, v in saved:
            setattr(m, a, v)


def _alarm(signum, frame):
    raise TimeoutError


def _write(tmp: Path, files: dict) -> None:
    for name, data in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(data):
            data(path)
        elif data is None:
            path.mkdir(exist_ok=True)
        else:
            path.write_bytes(data if isinstance(data, bytes) else data.encode())


def execute(case: dict, tmp: Path) -> dict:
    """Run ``case`` in folder ``tmp``: ``{'rc', 'message', 'warned', 'out', 'value', 'error'}``."""
    from grpo_theory import cli
    from grpo_theory.errors import InvalidInputError

    _write(tmp, case.get("files", {}))
    err, out = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(tmp)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(case.get("hang_s", HANG_S))
    res = dict(rc=None, message="", warned="", out="", value=None, error=None)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                warnings.catch_warnings(record=True) as caught, _patched(_stubs() + case.get("stubs", [])):
            warnings.simplefilter("always")
            try:
                if "argv" in case:
                    res["rc"] = cli.main(list(case["argv"]))
                else:
                    res["value"] = case["call"]()
                    res["rc"] = 0
            except SystemExit as exc:
                res["rc"] = exc.code
            except InvalidInputError as exc:
                res["rc"], res["message"] = 2, " ".join(str(exc).split())
            except Ran:
                res["rc"] = 0
        res["warned"] = " ".join(" ".join(str(w.message).split()) for w in caught)
    except TimeoutError:
        res["error"] = "hang"
    except Exception as exc:                             # noqa: BLE001 - any other exception is the finding
        res["error"] = "traceback"
        res["message"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        res["where"] = traceback.extract_tb(exc.__traceback__)[-1].name
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(old)
    text = err.getvalue()
    lines = [ln for ln in text.splitlines() if ln.strip() and "%|" not in ln and "it/s" not in ln]
    if not res["message"] and res["rc"] not in (0, None):
        res["message"] = " ".join(lines[-1:])
    if "Traceback" in text:
        res["error"] = "traceback"
    res["out"] = out.getvalue()
    if res["rc"] == 0:                                   # warnings printed, or listed in --json output
        res["warned"] += " " + " ".join(lines) + " " + res["out"]
    return res


def classify(case: dict, res: dict, tmp: Path) -> str:
    """The class of ``case``'s outcome ``res`` (see the module doc)."""
    if res["error"]:
        return res["error"]
    rc, message, expect = res["rc"], res["message"], case["expect"]
    names = case.get("names", ())
    if rc not in (0, 1, 2):
        return "traceback"
    if rc != 0:
        if rc == 1 and not case.get("exit1"):
            return "traceback"
        if expect == "ok":
            return "refused_valid"
        if any(w in message for w in case.get("wrong", ())):
            return "misleading"
        return "clean" if message.strip() and all(n in message for n in names) else "unhelpful"
    if expect == "error":
        return "accepted"
    if expect == "warn":
        if not all(n in res["warned"] for n in names):
            return "accepted"
        if any(w in res["warned"] for w in case.get("wrong", ())):
            return "misleading"
    check = case.get("check")
    if check is not None:
        try:
            good = check(tmp, res)
        except Exception:                                # noqa: BLE001 - a missing or unreadable result
            good = False
        if not good:
            return "silent"
    return "clean" if expect == "warn" else "correct"


def run_case(case: dict, tmp: Path) -> tuple[str, str]:
    """``(class, message)`` of one case, run in the empty folder ``tmp``."""
    res = execute(case, tmp)
    msg = res["message"] or res["warned"].strip()
    if res.get("where"):
        msg += f" (in {res['where']})"
    return classify(case, res, tmp), msg
