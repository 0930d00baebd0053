"""One writer per output file: the lock that :func:`grpo_theory.sweep.sweep` holds on its ``out``.

``exclusive(path)`` holds ``<path>.lock`` beside the file while the block runs: a POSIX record lock, which the
system releases when its process ends however it ends (``SIGKILL`` included; the workers a process forks do not
hold it), on a file holding the owner's process id. A second writer of the same file, in another process or in
this one, is refused with an :class:`~grpo_theory.errors.InvalidInputError` naming the lock and the process that
holds it. A lock file whose process ended without removing it (killed) is taken over with a
:class:`StaleLockWarning`. A writer that finishes, fails or is interrupted removes its lock file.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sys
import threading
import warnings
from pathlib import Path

from .errors import InvalidInputError, TheoryWarning

try:
    import fcntl
except ImportError:                     # not POSIX: the lock file's exclusive creation alone (no stale takeover)
    fcntl = None

__all__ = ["exclusive", "lock_path", "StaleLockWarning", "show_notes"]

_HELD: set[str] = set()                 # the locks this process holds: a record lock does not exclude its own process
_GUARD = threading.Lock()


class StaleLockWarning(TheoryWarning):
    """An output's lock file was left by a process that has ended (killed); this process took it over."""


def lock_path(path) -> Path:
    """The lock of ``path``: ``<name>.lock`` beside the file ``path`` names (a symbolic link followed, so two
    names of one file share a lock); a name too long for the system keeps its start and a digest of the rest."""
    real = Path(os.path.realpath(path))
    name = real.name + ".lock"
    raw = os.fsencode(name)                 # the bytes the system stores: a name that is not UTF-8 has surrogates
    if len(raw) > 255:
        name = os.fsencode(real.name)[:180].decode(errors="ignore") + hashlib.sha256(raw).hexdigest()[:16] + ".lock"
    return real.with_name(name)


@contextlib.contextmanager
def exclusive(path, what: str = "output"):
    """Hold ``path``'s lock while the block runs (nothing for ``path`` None); ``what`` names the file in messages.

    Raises
    ------
    InvalidInputError
        When another writer holds the lock (naming the lock file and its process id), or the lock file cannot
        be created (naming it and the system's reason).
    """
    if path is None:
        yield None
        return
    lock = lock_path(path)
    with _GUARD:
        if str(lock) in _HELD:
            raise InvalidInputError(f"{what} {str(path)!r} is being written by another call in this process "
                                    f"(process {os.getpid()}, lock {str(lock)!r}); wait for it to finish, or give "
                                    "another file")
        _HELD.add(str(lock))
    try:
        fd = _acquire(lock, path, what)
        try:
            yield lock
        finally:
            with contextlib.suppress(OSError):    # removed before the close releases it: a waiter sees it is gone
                os.unlink(lock)
            os.close(fd)
    finally:
        with _GUARD:
            _HELD.discard(str(lock))


def _acquire(lock: Path, path, what: str) -> int:
    """The open, locked lock file holding this process's id; a stale owner's id is replaced, with a warning."""
    for _ in range(100):                # each pass: a holder removed the file between our open and our lock
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | (os.O_EXCL if fcntl is None else 0), 0o644)
        except FileExistsError:         # no record locks: an existing lock file is a holder
            raise InvalidInputError(_busy(path, what, lock, _owner(lock.read_bytes()[:64]),
                                          " (delete it if that process has ended)")) from None
        except OSError as exc:
            raise InvalidInputError(f"cannot create the lock file {str(lock)!r} of {what} {str(path)!r}: "
                                    f"{exc.strerror or exc}") from None
        if fcntl is None:
            break
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            owner = os.pread(fd, 64, 0)
            os.close(fd)
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise InvalidInputError(f"cannot lock {str(lock)!r}, the lock file of {what} {str(path)!r}: "
                                        f"{exc.strerror or exc}") from None
            raise InvalidInputError(_busy(path, what, lock, _owner(owner), "")) from None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    else:
        raise InvalidInputError(f"cannot lock {str(lock)!r}, the lock file of {what} {str(path)!r}: it was replaced "
                                "100 times while this process tried")
    left = os.pread(fd, 64, 0)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    if left.strip():                    # an id and no lock: its process ended without removing the file
        warnings.warn(f"{what} {str(path)!r}: took over its lock file {str(lock)!r}, left by {_owner(left)}, which "
                      "ended without removing it (killed?)", StaleLockWarning, stacklevel=4)
    return fd


def _owner(text: bytes) -> str:
    """The holder a lock file's bytes name: ``process N``, or what is known when they hold no process id."""
    word = text.decode("ascii", errors="replace").strip()
    if word.isdigit():
        return f"process {int(word)}"
    return "a process that has not yet written its id" if not word else f"a process (the file holds {word[:20]!r})"


def _busy(path, what: str, lock: Path, owner: str, tail: str) -> str:
    return (f"{what} {str(path)!r} is being written by another run: {owner} holds its lock file {str(lock)!r}"
            f"{tail}; wait for that run to finish, or give another file")


def show_notes(prefix: str, categories: tuple = ()) -> None:
    """Show each :class:`StaleLockWarning` (or warning of ``categories`` when given) as one line ``prefix + message``
    on the standard error from now on, other warnings as before; for the command line, which calls it inside
    ``warnings.catch_warnings()`` (that restores the previous display on leaving)."""
    shown, categories = warnings.showwarning, tuple(categories) or (StaleLockWarning,)

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, categories):
            print(f"{prefix}{message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)
    warnings.showwarning = show
