"""A default-run sample of the fifth hostile audit (``tests/hostile_audit_round5.py``, not in the default run).

One case of each in-process group (the first), and the cases of a few findings across the groups, each must be
``clean`` (a one-line error naming the input, or the expected warning) or ``correct`` (checked against an
independent value). The groups run in real processes (environment, stdin) and the long argument lists are left to
the full audit. Also: the committed per-case table lists the audit's cases.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_audit_round5 as audit  # noqa: E402

SLOW_GROUPS = ("environment", "stdin as '-'", "long argument lists")
FINDINGS = (  # one finding of each kind, by label
    "Objective(beta=10**400)", "unbiased_pass_at_k(2**60, 2**59, 3)", "flow t = [0, 1e-300]",
    "samples_from_counts([10, 'a'], [3, 1])", "predict --finite-level without --measured",
    "Question rewards -0.0 vs 0.0: a == b implies hash(a) == hash(b)", "p=1e-200, beta=2.0",
    "CSV: both layouts' columns (reward and n, correct)", "init_kl_coef: \"1e-3\"",
)


def _sample() -> list[dict]:
    cases = audit.all_cases()
    first, seen = [], set()
    for c in cases:
        if c["group"] in SLOW_GROUPS or "env" in c or "stdin" in c:
            continue
        if c["group"] not in seen:
            seen.add(c["group"])
            first.append(c)
    first += [c for c in cases if c["label"] in FINDINGS and c not in first]
    return first


SAMPLE = _sample()
@pytest.mark.parametrize("case", SAMPLE, ids=[f"{c['group']}: {c['label']}"[:90] for c in SAMPLE])
def test_case_is_clean_or_correct(case):
    with tempfile.TemporaryDirectory() as d:
        cls, message = audit.classify_case(case, Path(d))
    assert cls in ("clean", "correct"), message


def test_the_table_lists_the_audit_cases():
    path = HERE.parent / "docs" / "results" / "hostile_audit_round5_after.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    labels = [" ".join(c["label"].split()) for c in audit.all_cases()]
    assert len(rows) == len(labels) and [r["input"] for r in rows] == labels
