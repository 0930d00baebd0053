"""Regression tests for the sixth hostile audit's findings that are fixed (docs/reliability.md, "Hostile input,
sixth round"): the command line's standard output closed by its reader, full, or closed at start; the trainer's
group advantage at rewards whose squared deviations underflow or overflow."""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = f"{sys.executable} -c 'import sys; from grpo_theory.cli import main; sys.exit(main())'"
SOLVE = "solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --group-size 8"


def _bash(cmd: str, tmp_path: Path) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    p = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stderr


@pytest.mark.parametrize("tail", ["| true", "--json | head -c 10 > /dev/null"])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path, tail):
    rc, err = _bash(f"{CLI} {SOLVE} {tail}", tmp_path)
    assert rc == 141 and err == "", (rc, err)         # as `yes | head`: no traceback, no 'Exception ignored'


def test_a_full_standard_output_is_one_line(tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    rc, err = _bash(f"{CLI} {SOLVE} --json > /dev/full", tmp_path)
    assert rc == 2 and err.splitlines() == [
        "grpo-theory: error: cannot write the output of `solve` to the standard output: No space left on device"], err


def test_a_closed_standard_output_is_refused(tmp_path):
    rc, err = _bash(f"{CLI} {SOLVE} >&-", tmp_path)
    assert rc == 2 and err.strip() == "grpo-theory: error: the standard output is closed; `solve` has nowhere to print"


def test_a_failing_file_write_is_not_taken_for_the_standard_output(monkeypatch, capsys):
    """Only a failed write to stdout is answered as such: an ENOSPC from a file the command writes keeps its
    traceback (it names no file, so it is not the user's input)."""
    import errno

    from grpo_theory import cli

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device")

    class Parser:
        def parse_args(self, argv):
            return argparse.Namespace(command="solve", func=full)
    monkeypatch.setattr(cli, "build_parser", Parser)
    with pytest.raises(OSError, match="No space"):
        cli.main(SOLVE.split())
    assert sys.stdout is not None and not isinstance(sys.stdout, cli._WatchedStdout)   # restored


@pytest.mark.parametrize("rewards, want", [
    ([1e-300, 0.0, 0.0], [math.sqrt(2), -1 / math.sqrt(2), -1 / math.sqrt(2)]),
    ([1e200, -1e200], [1.0, -1.0]),
    ([[3e-200, 1e-200], [5.0, 5.0]], [[1.0, -1.0], [0.0, 0.0]]),
])
def test_group_advantages_at_extreme_rewards(rewards, want):
    torch = pytest.importorskip("torch")
    from grpo_theory.training import group_advantages

    got = group_advantages(torch.tensor(rewards, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_group_advantages_keeps_the_epsilons_in_units_of_the_rewards():
    """``(r - mean)/(sqrt(var + variance_eps) + std_eps)`` by hand, at rewards of order 1e-3."""
    torch = pytest.importorskip("torch")
    from grpo_theory.training import group_advantages

    r = np.array([3e-3, 1e-3, 2e-3, 2e-3])
    got = group_advantages(torch.tensor(r), std_ddof=1, std_eps=1e-4, variance_eps=1e-7).numpy()
    want = (r - r.mean()) / (math.sqrt(r.var(ddof=1) + 1e-7) + 1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-12)
