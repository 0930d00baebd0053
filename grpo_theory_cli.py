"""The ``grpo-theory`` console script's launcher: a module outside the package, so that Ctrl-C while Python
imports the package (numpy, scipy and pandas: a second or two) is one line and exit status 130, not a
``KeyboardInterrupt`` traceback. Importing ``grpo_theory`` runs its ``__init__`` before any of its modules,
so the package cannot catch an interrupt of its own import; everything else is :func:`grpo_theory.cli.main`."""

from __future__ import annotations

import sys


def main() -> int:
    """Import :mod:`grpo_theory.cli` and run its ``main``; an interrupt during the import exits 130."""
    try:
        from grpo_theory.cli import main as run
    except KeyboardInterrupt:
        print("grpo-theory: interrupted while starting; nothing was run or written", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
