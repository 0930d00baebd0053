"""The committed verdicts of the stationarity check, re-made from the committed trajectories
(experiments/convergence_windows_recheck.py): the check without its window tests reproduces every
committed status (rows and trajectories are matched), and the committed status is the current check's."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def recheck():
    spec = importlib.util.spec_from_file_location("recheck", ROOT / "experiments" / "convergence_windows_recheck.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.recheck()


def test_committed_statuses_are_the_current_checks(recheck):
    known = recheck[recheck.committed.astype(str) != ""]
    assert len(known) == 144 + 48 + 144 + 16
    same = known.before == known.after
    assert np.all(known.before[same] == known.committed[same])   # the mapping of rows to trajectories is right
    assert np.all(known.after == known.committed)           # and the tables carry the current check


def test_what_the_window_tests_changed(recheck):
    """One row: the instability run (Adam lr 1e-3, seed 7) whose prompt 7 rose 0.066 inside its last 75 steps."""
    changed = recheck[recheck.before != recheck.after]
    assert len(changed) == 1
    c = changed.iloc[0]
    assert c.run.endswith("lr0.001_steps300_seed7") and c.prompt == 7
    assert (c.before, c.after) == ("converged", "moving") and c.shifted and abs(c["shift"] - 0.066) < 0.005


def test_rows_the_windows_would_look_at_first():
    """docs/results.md: 31 of the 240 rows of SmolLM2 G = 8 reverse at lr 3e-4 (seeds 0-4) carry a drift
    above 0.01 called converged (the tables keep no windows to re-check them with)."""
    import pandas as pd

    d = pd.read_csv(ROOT / "docs" / "results" / "smollm2_validate.csv")
    g = d[(d.config == "G8_beta0.5_reverse") & (d.learning_rate == 3e-4)]
    assert len(g) == 240
    assert int(((g.conv_drift.abs() > 0.01) & (g.conv_status == "converged")).sum()) == 31
