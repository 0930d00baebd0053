"""Files written so that a killed run never leaves half of one behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` for a temporary file beside ``path``, then move it into place.

    The move is atomic on POSIX file systems: readers, and a resumed run, see either the old
    file or the new one, never a partial write.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    write(tmp)
    tmp.replace(path)
    return path
