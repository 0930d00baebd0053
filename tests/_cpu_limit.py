"""A CPU-time limit for the in-process calls of the contract tests (the command line's and the Python API's)."""

from __future__ import annotations

import contextlib
import signal


class CpuLimit(BaseException):
    """Raised in the block once its CPU seconds are spent; a BaseException, so no ``except Exception`` in the
    code under test swallows it."""


def _over(signum, frame):
    raise CpuLimit()


@contextlib.contextmanager
def cpu_limit(seconds: float):
    """Raise :class:`CpuLimit` in the block once this process has used ``seconds`` of CPU (``ITIMER_PROF``)."""
    previous = signal.signal(signal.SIGPROF, _over)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
