"""Running the command line in the test process, as the hostile-input tests do (test_hostile_inputs.py,
test_hostile_fresh.py): the exit code and both streams, and the one-line refusal the audits require."""

from __future__ import annotations

import contextlib
import io
import warnings

from grpo_theory.cli import main


def run(*argv) -> tuple[int, str, str]:
    """``main(argv)`` in this process: (exit code, stdout, stderr); a traceback fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def refused(argv, *names) -> str:
    """The one ``grpo-theory: error:`` line of a run that exits 2 (progress bars aside), naming every one of
    ``names``."""
    rc, _, err = run(*argv)
    lines = [ln for ln in err.splitlines() if ln.strip() and "%|" not in ln]
    assert rc == 2, (rc, err)
    assert len(lines) == 1 and lines[0].startswith("grpo-theory: error:"), err
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]
