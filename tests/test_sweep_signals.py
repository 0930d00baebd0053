"""A sweep's workers die with their parent; Ctrl-C gives one line saying what was saved (issue 25)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
# The smallest sweep that shows both: one quick case (G = 2: a saved row within a second) and one slow
# case per worker (G = 200 and 201 on three reward levels: 10-20 s each; 224 and more are refused up front by
# the certified search's cost model, solvers.work), so that both workers
# are busy when the signal comes and nothing is computed after it.
GRID = ("objectives: {beta: 0.5, group_size: [2, 200, 201]}\n"
        "questions:\n  - {pi_ref: [0.2, 0.3, 0.5], rewards: [1.0, 0.5, 0.0]}\n")


def _start(tmp_path, *extra, new_session=False):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "grpo_theory.cli", "sweep", str(grid), "--out",
                             str(tmp_path / "s.csv"), "--no-progress", *extra], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=new_session, preexec_fn=_default_sigint)


def _default_sigint():
    # as from a terminal: Ctrl-C at its default. A process started with SIGINT ignored keeps it ignored
    # (Python then installs no KeyboardInterrupt handler), and a test runner's worker may have it so.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children(pid, n, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = psutil.Process(pid).children(recursive=True)
        if len(kids) >= n:
            return kids
        time.sleep(0.1)
    pytest.fail(f"the sweep did not start {n} workers in {timeout} s")


def _gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_workers_die_with_a_killed_parent(tmp_path):
    parent = _start(tmp_path, "--workers", "2")
    try:
        workers = _children(parent.pid, 2)
        time.sleep(0.5)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(_gone(w) for w in workers):
            time.sleep(0.1)
        alive = [w.pid for w in workers if not _gone(w)]
    finally:
        for w in psutil.Process().children(recursive=True):
            if w.pid in [x.pid for x in workers if not _gone(x)]:
                w.kill()
    assert not alive, f"workers {alive} outlived their SIGKILLed parent by 5 s"


def test_ctrl_c_says_what_was_saved_and_how_to_resume(tmp_path):
    proc = _start(tmp_path, "--workers", "2", new_session=True)
    _children(proc.pid, 2)
    out = tmp_path / "s.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)                  # as Ctrl-C does: the whole process group
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        pytest.fail(f"the sweep did not stop within 30 s of Ctrl-C; rows saved: "
                    f"{len(out.read_text().splitlines()) if out.exists() else 0}; its stderr: {err!r}")
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "cases done" in lines[0] and str(out) in lines[0] and "resume" in lines[0]
    assert not (tmp_path / "s.csv.lock").exists()            # the lock released: the same command resumes
