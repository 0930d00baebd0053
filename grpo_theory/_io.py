"""Files written so that a killed run never leaves half of one behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .errors import InvalidInputError

__all__ = ["atomic_write", "read_yaml"]


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


def read_yaml(path: str | Path, what: str, expected: str):
    """``path`` parsed as YAML; a missing file or bad YAML is an InvalidInputError naming ``what``."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{what} {str(path)!r}: no such file (expected {expected})")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{what} {str(path)!r} is not valid YAML: {exc}") from None
