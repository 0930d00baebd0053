"""grpo_theory.sweep: the same rows on every executor, incremental writes, and resume after a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grpo_theory import InvalidInputError, Objective, Question, stationary_points
from grpo_theory.sweep import COLUMNS, Case, cases_from_grid, sweep

GRID = {"simplex": {"rewards": [1.0, 0.5, 0.0], "step": 0.25},
        "objectives": {"beta": [0.5, 2.0], "group_size": [2, "inf"], "penalty": "direct"}}


def _compare(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = ["key", "n_points", "n_stable", "stable_policies", "reached_policy"]
    assert a[cols].equals(b[cols])


def test_grid_and_serial_rows_match_a_direct_call():
    cases = cases_from_grid(GRID)
    assert len(cases) == 3 * 4                                   # 3 interior lattice points x 4 objectives
    df = sweep(cases[:4], executor="serial", progress=False)
    for case, row in zip(cases[:4], df.itertuples()):
        pts = stationary_points(case.question, case.objective)
        assert row.key == case.key and row.n_points == len(pts) and row.n_stable == len(pts.stable)


def test_process_pool_and_dask_local_cluster_give_the_serial_rows(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    cases = cases_from_grid(GRID)
    serial = sweep(cases, executor="serial", progress=False)
    pool = sweep(cases, max_workers=2, progress=False)
    _compare(serial, pool)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        dask_rows = sweep(cases, executor=client.get_executor(), out=tmp_path / "s.csv", progress=False)
    _compare(serial, dask_rows)
    assert len(pd.read_csv(tmp_path / "s.csv")) == len(cases)


def test_a_killed_sweep_resumes_without_redoing_finished_cases(tmp_path):
    """The CLI is killed once a few cases are on disk; the resumed sweep keeps them and finishes."""
    grid = tmp_path / "grid.yaml"
    grid.write_text("simplex: {rewards: [1.0, 0.5, 0.0], step: 0.2}\n"
                    "objectives: {beta: [0.3, 1.0, 3.0], group_size: [4, .inf], penalty: direct}\n")
    out = tmp_path / "sweep.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "grpo_theory.cli", "sweep", str(grid), "--out", str(out),
                             "--workers", "1", "--no-progress"], env=env)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (tmp_path / "sweep.csv.lock").read_text().strip() == str(proc.pid)    # left by the kill: taken over below
    before = pd.read_csv(out)
    n_cases = len(cases_from_grid({"simplex": {"rewards": [1.0, 0.5, 0.0], "step": 0.2},
                                   "objectives": {"beta": [0.3, 1.0, 3.0], "group_size": [4, float("inf")],
                                                  "penalty": "direct"}}))
    assert 3 <= len(before) < n_cases
    with out.open("a") as fh:                                 # a torn last line, as a kill mid-write leaves
        fh.write("pi=0.1,0.1,0.8|beta=9,partial")
    from grpo_theory.cli import main

    assert main(["sweep", str(grid), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    after = pd.read_csv(out)
    assert len(after) == n_cases and after.key.is_unique
    kept = after.set_index("key").loc[before.key]
    np.testing.assert_array_equal(kept.seconds.to_numpy(), before.seconds.to_numpy())   # not recomputed
    assert not (tmp_path / "sweep.csv.lock").exists()


def test_bad_sweep_input():
    q = Question([0.5, 0.5], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match="unique"):
        sweep([Case("a", q, Objective(beta=1.0)), Case("a", q, Objective(beta=2.0))], executor="serial", progress=False)
    with pytest.raises(InvalidInputError, match="objectives"):
        cases_from_grid({"questions": []})
    with pytest.raises(InvalidInputError, match="key"):
        Case("", q, Objective(beta=1.0))
    assert COLUMNS[0] == "key"
