"""One writer per sweep output: a second run on the same ``out`` is refused naming the lock file and the process
holding it; a killed run's lock is taken over with a note; every way a run ends releases its lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from grpo_theory import InvalidInputError, Objective, Question
from grpo_theory._outlock import StaleLockWarning, exclusive
from grpo_theory.cli import main
from grpo_theory.sweep import Case, SweepInterrupted, sweep

ROOT = Path(__file__).resolve().parents[1]
CASES = [Case(f"b{b}", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=b, group_size=2)) for b in (0.5, 1.0)]
GRID = "objectives: {beta: [0.5, 1.0], group_size: 2}\nquestions:\n  - {name: q, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"

# Another process holding a lock as a running sweep does: a POSIX record lock on <out>.lock, its id written in it.
# Standard library only, so it starts in a few hundredths of a second; it holds the lock until its stdin closes.
HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, f"{os.getpid()}\\n".encode())
    print("held", flush=True)
    sys.stdin.read()
""")


@pytest.fixture
def holder(tmp_path):
    """A process that holds ``tmp_path / 's.csv.lock'`` until the test ends."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "s.csv.lock")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    yield proc
    proc.stdin.close()
    proc.wait(timeout=10)


def _dead_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_second_writer_is_refused_naming_the_lock_and_its_process(tmp_path, holder):
    out = tmp_path / "s.csv"
    with pytest.raises(InvalidInputError) as err:
        sweep(CASES, out=out, executor="serial", progress=False)
    msg = str(err.value)
    assert str(tmp_path / "s.csv.lock") in msg and f"process {holder.pid}" in msg and repr(str(out)) in msg, msg
    assert not out.exists()                                  # nothing read, nothing written
    assert (tmp_path / "s.csv.lock").read_text().strip() == str(holder.pid)     # the holder's lock left alone


def test_the_command_line_refuses_a_second_run_with_exit_2_in_one_line(tmp_path, holder, capsys):
    grid = tmp_path / "g.yaml"
    grid.write_text(GRID)
    code = main(["sweep", str(grid), "--out", str(tmp_path / "s.csv"), "--workers", "1", "--no-progress"])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("grpo-theory: error: "), err
    assert str(tmp_path / "s.csv.lock") in lines[0] and f"process {holder.pid}" in lines[0], err


def test_a_killed_runs_lock_is_taken_over_with_a_warning_and_removed_at_the_end(tmp_path):
    out, lock = tmp_path / "s.csv", tmp_path / "s.csv.lock"
    pid = _dead_pid()
    lock.write_text(f"{pid}\n")                              # as SIGKILL leaves it: an id, and no record lock
    with pytest.warns(StaleLockWarning, match=f"left by process {pid}, which ended"):
        df = sweep(CASES, out=out, executor="serial", progress=False)
    assert df.key.tolist() == ["b0.5", "b1.0"] and pd.read_csv(out).key.tolist() == ["b0.5", "b1.0"]
    assert not lock.exists()


def test_the_command_line_notes_a_taken_over_lock_in_one_line(tmp_path, capsys):
    grid, out = tmp_path / "g.yaml", tmp_path / "s.csv"
    grid.write_text(GRID)
    pid = _dead_pid()
    (tmp_path / "s.csv.lock").write_text(f"{pid}\n")
    assert main(["sweep", str(grid), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grpo-theory: note: ") and f"process {pid}" in lines[0], lines
    assert len(pd.read_csv(out)) == 2 and not (tmp_path / "s.csv.lock").exists()


def test_a_second_call_in_the_same_process_is_refused_also_through_a_link(tmp_path):
    out, link = tmp_path / "s.csv", tmp_path / "link.csv"
    out.touch()
    link.symlink_to(out)
    with exclusive(out):
        for name in (out, link):
            with pytest.raises(InvalidInputError, match=f"process {os.getpid()}"):
                sweep(CASES, out=name, executor="serial", progress=False)
    assert sweep(CASES, out=link, executor="serial", progress=False).n_stable.tolist() == [1, 1]   # released


def test_two_threads_write_each_row_once(tmp_path):
    out, results = tmp_path / "s.csv", []

    def run():
        try:
            results.append(len(sweep(CASES, out=out, executor="serial", progress=False)))
        except InvalidInputError as exc:
            results.append(str(exc))
    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == 2 or "being written" in r for r in results), results
    assert pd.read_csv(out).key.tolist() == ["b0.5", "b1.0"]


def test_every_end_releases_the_lock(tmp_path, monkeypatch):
    out, lock = tmp_path / "s.csv", tmp_path / "s.csv.lock"
    out.write_text("not,a,sweep\n")
    with pytest.raises(InvalidInputError, match="not a sweep file"):
        sweep(CASES, out=out, executor="serial", progress=False)
    assert not lock.exists()
    out.unlink()

    def interrupted(case):
        raise KeyboardInterrupt
    monkeypatch.setattr("grpo_theory.sweep.evaluate_case", interrupted)
    with pytest.raises(SweepInterrupted):
        sweep(CASES, out=out, executor="serial", progress=False)
    assert not lock.exists()


@pytest.mark.slow
def test_two_command_line_sweeps_on_one_file(tmp_path):
    """End to end: a second ``grpo-theory sweep`` on a running one's ``--out`` exits 2 naming the first's process;
    once the first is killed, a third run takes its lock over, resumes and writes each row once."""
    grid, out = tmp_path / "g.yaml", tmp_path / "s.csv"
    grid.write_text("objectives: {beta: 0.5, group_size: [2, 200, 201]}\n"       # G = 200: 10-20 s (224 on: refused)
                    "questions:\n  - {name: q, pi_ref: [0.2, 0.3, 0.5], rewards: [1.0, 0.5, 0.0]}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "grpo_theory.cli", "sweep", str(grid), "--out", str(out), "--workers", "1",
            "--no-progress"]
    first = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (out.exists() and len(out.read_text().splitlines()) >= 2):
            time.sleep(0.1)                                    # the G = 2 row is written: G = 200 runs now
        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert first.poll() is None, "the first run ended before the second started; the grid is too quick"
        assert second.returncode == 2 and f"process {first.pid}" in second.stderr \
            and str(tmp_path / "s.csv.lock") in second.stderr, second.stderr
    finally:
        first.kill()
        first.wait()
    grid.write_text("objectives: {beta: 0.5, group_size: [2, 3]}\n"
                    "questions:\n  - {name: q, pi_ref: [0.2, 0.3, 0.5], rewards: [1.0, 0.5, 0.0]}\n")
    third = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert third.returncode == 0 and f"left by process {first.pid}" in third.stderr, third.stderr
    keys = pd.read_csv(out).key
    assert keys.is_unique and set(keys) == {"q|beta=0.5,group_size=2", "q|beta=0.5,group_size=3"}
    assert not (tmp_path / "s.csv.lock").exists()
