"""experiments/compare_reruns.py (issue 20): a rerun against its committed table, number by number."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import compare_reruns  # noqa: E402


def test_the_largest_difference_per_column_over_the_rows_both_tables_hold():
    committed = pd.DataFrame(dict(seed=[0, 0, 1], question=[0, 1, 0], measured=[0.5, 0.25, 0.75],
                                  predicted=[0.5, 0.3, 0.7], seconds=[1.0, 2.0, 3.0]))
    rerun = committed.copy()
    rerun.loc[1, "measured"] = 0.2625                  # moved by 0.0125
    rerun.loc[2, "seed"] = 2                          # a row only the rerun has (and one only committed)
    rerun.loc[0, "predicted"] = np.nan                # NaN on one side: counted, not compared
    rerun["seconds"] = 99.0                           # wall time is not a number of the study
    diffs, counts = compare_reruns.compare_tables(rerun, committed, ("seed", "question"))
    assert diffs["measured"] == pytest.approx(0.0125) and diffs["predicted"] == 0.0
    assert "seconds" not in diffs and "seed" not in diffs
    assert counts == dict(matched=2, only_rerun=1, only_committed=1, mismatched_nan=1)


def test_a_missing_table_is_named_not_a_traceback(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        compare_reruns.main(["tree", str(tmp_path)])
    assert exit_info.value.code == 2
    assert f"{tmp_path / 'tree_results.csv'} does not exist" in capsys.readouterr().err
