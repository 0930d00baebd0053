"""A local process pool's workers that die with their parent, and a pool stopped at once (a sweep's)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor

__all__ = ["watch_parent", "stop_pool"]


def watch_parent(parent_pid: int) -> None:
    """Worker initializer: die with the parent (a SIGKILLed sweep must not leave its workers running).

    On Linux the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``); elsewhere, and as a
    fallback, a daemon thread checks twice a second whether the parent is gone. Ctrl-C is ignored
    here: the parent handles it and stops the pool (no traceback from every worker).
    """
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)     # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    first_ppid = os.getppid()       # the sweep's process (fork, spawn) or the forkserver

    def alive() -> bool:
        if os.getppid() != first_ppid:                  # reparented: our parent has died (even if unreaped)
            return False
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    def watch():
        while alive():
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="grpo-theory-parent-watch").start()


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and end the running workers now (a case can take a while)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())    # shutdown() forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
