"""A sample of the fresh hostile audit (``tests/hostile_audit_fresh.py``, round four) in the default run: one case
of each group but the Ctrl-C one (subprocesses, slow), chosen by a fixed seed, and the findings' own cases.
Each must be ``clean`` (a one-line error naming the input) or ``correct`` (a result checked against an
independent computation), as the whole audit is after its fixes (docs/reliability.md)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import hostile_audit_fresh as audit  # noqa: E402

#: The first run's findings (docs/reliability.md, fourth round), by group and label.
FINDINGS = [
    ("closed form binary_pairwise (arrays)", "p (3,) against beta (4,): no broadcast"),
    ("API numeric types", "binary_pairwise(gamma) <- None"),
    ("API numeric types", "Objective(beta) <- 0-d array"),
    ("API numeric types", "nash_equilibrium(beta) <- 0-d array"),
    ("API numeric types (vectors)", "Question(pi_ref) <- float32 array"),
    ("API numeric types (vectors)", "Question(rewards) <- list with a bool"),
    ("API numeric types (vectors)", "log_pooling(rewards) <- generator"),
    ("questions at the edges", "rewards 5e-324 and 0; reverse/scale G=4 ddof=1 eps=1e-4"),
    ("Objective options together", "group_size 10**400 (a Python int)"),
    ("sweep --out paths", "a symlink loop"),
    ("sweep --out paths", "a symlink to a file of earlier rows"),
    ("predict --out paths", "a name of 300 bytes"),
    ("derivations --out paths", "a FIFO"),
    ("predict at the edges", "--steps without --clock or --fit"),
]


def _cases():
    cases = [c for c in audit.all_cases() if not c.get("proc")]
    by_group: dict[str, list] = {}
    for c in cases:
        if "1,000 answers" not in c["label"]:                    # the slowest: left to the full audit
            by_group.setdefault(c["group"], []).append(c)
    rng = random.Random(45)
    picked = [rng.choice(v) for _, v in sorted(by_group.items())]
    wanted = {(c["group"], c["label"]): c for c in cases}
    return picked + [wanted[key] for key in FINDINGS]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c['group']}: {c['label']}"[:90] for c in CASES])
def test_case_is_clean_or_correct(case, tmp_path):
    cls, message = audit.classify_case(case, tmp_path)
    assert cls in ("clean", "correct"), (cls, message)


def test_the_audit_has_500_new_inputs():
    assert len(audit.all_cases()) >= 500
