"""A fuzz case's row computed once per test run, shared by the test files that check the same seed.

The 300-case KL sample (tests/test_fuzz_kl*.py) solves and checks seeds 0-299; tests/test_full_space_limits.py
and tests/test_fuzz_kl_regressions_10k.py assert on the rows of some of the same seeds (trees 14 ... 285, Filippov
rests 42 and 167, the collapse of seed 290) and on rows the regression file also computes (REINFORCE++ seeds 1645,
2798, 7251, 7998, 4714). A row is a deterministic function of its seed (:func:`fuzz_kl_cases.check_kl_case`,
:func:`fuzz_cases.check_case`), so the second file reads the first one's row instead of solving and integrating
again. Each test keeps its own assertions on the row.

``FOLDER`` is set by tests/conftest.py for a pytest run (the run's temporary folder, common to its pytest-xdist
workers; a file lock per seed, so two workers never compute the same row at once). Outside pytest it is None and
every call computes (experiments/fuzz_reliability.py's 10^4-case runs are unchanged).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path

#: The run's folder of computed rows (tests/conftest.py); None: no sharing.
FOLDER: Path | None = None


def once_per_run(kind: str, seed: int, compute: Callable[[int], dict]) -> dict:
    """``compute(seed)``, or the row an earlier call of this run stored for ``(kind, seed)`` (a fresh copy)."""
    if FOLDER is None:
        return compute(seed)
    from filelock import FileLock

    path = FOLDER / f"{kind}-{int(seed)}.pkl"
    with FileLock(str(path) + ".lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        row = compute(seed)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(row))
        tmp.replace(path)
        return row
