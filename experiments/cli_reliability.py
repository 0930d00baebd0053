"""Count the CLI's answers to the table of bad inputs (tests/cli_bad_inputs.py): docs/reliability.md's figures.

Each case runs through ``grpo_theory.cli.main`` in this process with a 60 s alarm, in a scratch folder.
Outcomes: ``clear`` (exit 2, one ``grpo-theory: error:`` line naming the value, no traceback),
``unclear`` (exit 2 but not that line, or without the value), ``crash`` (an exception escaped),
``accepted`` (exit 0: the bad input was taken as good), ``hang`` (past the alarm).

    PYTHONPATH=. python experiments/cli_reliability.py
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grpo_theory.cli import main  # noqa: E402
from tests.cli_bad_inputs import ISSUE_CASES, all_cases  # noqa: E402
from tests.test_cli_errors import _setup  # noqa: E402


class _Hang(Exception):
    pass


def _alarm(*_):
    raise _Hang


def run_case(argv, files, names) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        _setup(Path(tmp), files)
        cwd = os.getcwd()
        os.chdir(tmp)
        err = io.StringIO()
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(60)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    rc = main(argv)
                except SystemExit as exc:
                    rc = exc.code
        except _Hang:
            return "hang"
        except Exception:  # noqa: BLE001 - counting escapes is the point
            return "crash"
        finally:
            signal.alarm(0)
            os.chdir(cwd)
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    if rc == 0:
        return "accepted"
    ok = (rc == 2 and len(lines) == 1 and lines[0].startswith("grpo-theory: error: ")
          and all(n in lines[0] for n in names) and "np.float64" not in lines[0])
    return "clear" if ok else "unclear"


if __name__ == "__main__":
    t0 = time.perf_counter()
    outcomes = Counter()
    issue = Counter()
    for name, argv, files, names in all_cases():
        result = run_case(argv, files, names)
        outcomes[result] += 1
        if name in ISSUE_CASES:
            issue[result] += 1
        if result != "clear":
            print(f"{result}: {name}: {argv}")
    print(f"{sum(outcomes.values())} cases in {time.perf_counter() - t0:.1f} s: {dict(outcomes)}")
    print(f"of them the issue's {sum(issue.values())} CLI cases: {dict(issue)}")
