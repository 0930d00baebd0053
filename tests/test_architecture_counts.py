"""The before/after table of docs/architecture.md ("The objective's variants"): every scripted row, recounted
from the source with ``benchmarks/architecture_counts.py`` -- the "after" column on this checkout, the
"before" column on the package as it was at the commit the table names (read with ``git archive``; skipped
where the clone does not hold that commit). Slow (the scans parse every module twice, ~30 s).

The zero counts of the "after" column are also enforced by fast tests of their own (``tests/test_variants.py``,
``tests/test_private_names.py``, ``tests/test_input_errors_api.py``); this test checks that the page states
what the code holds, before and after."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import architecture_counts  # noqa: E402

PAGE = ROOT / "docs" / "architecture.md"
#: each scripted row of the page's table (its first words) and the script's name for the count
ROWS = {
    "lines comparing an `Objective` field with a string": "string-dispatch lines",
    "files holding such lines": "string-dispatch files",
    "package files naming a non-default advantage estimator in code":
        "package files naming a non-default advantage estimator in code",
    "private names imported across modules": "private names imported across modules",
    "reads of `ClassProblem._log_p` outside its class": "reads of ClassProblem's `_log_p` outside its class",
    "private attributes read on another object": "private attributes read on another object",
    "public-API inconsistencies": "public-API inconsistencies (sum of the six above)",
    "&nbsp;&nbsp;public functions taking the objective before the question":
        "public functions taking the objective before the question",
    "&nbsp;&nbsp;public functions naming the objective `objective`":
        "public functions naming the objective `objective` (the rest: `obj`)",
    "&nbsp;&nbsp;bare `raise ValueError` in the package": "bare `raise ValueError` in the package",
    "&nbsp;&nbsp;`ExactEvaluationTooLarge` is an `InvalidInputError`": "ExactEvaluationTooLarge is an InvalidInputError",
    "&nbsp;&nbsp;RLHF baseline without a `StationaryPoint` form": "RLHF baseline without a StationaryPoint form",
    "&nbsp;&nbsp;`Objective` fields not in its docstring": "Objective fields not in its docstring",
}


def page_table() -> tuple[str, dict[str, tuple[int, int]]]:
    """The commit the table's "before" column names, and ``{row: (before, after)}`` for the scripted rows."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## The objective's variants: before and after the registry"):]
    commit = re.search(r"\| count \| before \(([0-9a-f]{7,40})\) \| after \|", section).group(1)
    out = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        row = next((r for r in ROWS if cells[0].startswith(r)), None) if len(cells) == 3 else None
        if row is not None:
            out[row] = (int(cells[1]), int(cells[2]))
    return commit, out


def test_the_page_lists_every_scripted_row():
    _, table = page_table()
    assert set(table) == set(ROWS)


@pytest.mark.slow
def test_the_after_column_is_this_checkout():
    _, table = page_table()
    counts = architecture_counts.counts(ROOT)
    assert {row: after for row, (_, after) in table.items()} == {row: counts[key] for row, key in ROWS.items()}


@pytest.mark.slow
def test_the_before_column_is_the_named_commit(tmp_path):
    commit, table = page_table()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "grpo_theory"], capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"this clone does not hold {commit} (git archive: {archive.stderr.decode()[:200]})")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tmp_path, filter="data")
    counts = architecture_counts.counts(tmp_path)
    assert {row: before for row, (before, _) in table.items()} == {row: counts[key] for row, key in ROWS.items()}
