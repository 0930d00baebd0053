"""Small reusable validators: plain number formatting for messages, and argparse ``type=`` functions.

Each ``type=`` function turns a bad command-line value into argparse's one-line
``grpo-theory <cmd>: error: argument --flag: ...`` (exit 2), whichever subcommand uses it, so the
checks survive a reshaping of the CLI. :func:`check_fields` validates a config mapping against one
table of ``field -> (kind, low, high)`` per reader, naming the field and the value.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping

import numpy as np

__all__ = ["plain", "positive_int", "nonnegative_int", "int_at_least", "device", "existing_file",
           "writable_file", "writable_dir", "check_fields"]


def plain(value) -> str:
    """``value`` as a user would type it: ``1.4``, not ``np.float64(1.4)``; arrays as ``[0.3, 0.7]``."""
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)                       # 1.4, 4.0, 1e-300, nan: as typed
    return repr(value) if isinstance(value, str) else str(value)


def int_at_least(low: int, what: str = "an integer"):
    """An argparse ``type=``: an integer ``>= low``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected {what} >= {low}, got {value}")
        return value
    parse.__name__ = f"integer>={low}"
    return parse


positive_int = int_at_least(1)
nonnegative_int = int_at_least(0)


def device(text: str) -> str:
    """An argparse ``type=``: ``cpu``, or ``cuda``/``cuda:N`` when this torch build can use it."""
    name = text.strip().lower()
    if name == "cpu":
        return name
    if name == "cuda" or name.startswith("cuda:"):
        try:
            import torch
        except ImportError:
            raise argparse.ArgumentTypeError(f"device {text!r} needs torch, which is not installed") from None
        if not torch.cuda.is_available():
            raise argparse.ArgumentTypeError(f"device {text!r}: this torch build ({torch.__version__}) has no "
                                             "usable CUDA; use --device cpu") from None
        return name
    raise argparse.ArgumentTypeError(f"device must be cpu or cuda[:N], got {text!r}")


def existing_file(text: str) -> str:
    """An argparse ``type=``: a path to an existing regular file."""
    from pathlib import Path

    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text!r}: no such file")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a file")
    return text


def _creatable_dir(p) -> str | None:
    """Why folder ``p`` cannot exist or be created, or None."""
    for parent in [p, *p.parents]:
        if parent.exists():
            if not parent.is_dir():
                return f"{str(parent)!r} is a file, not a folder"
            import os

            if not os.access(parent, os.W_OK | os.X_OK):
                return f"the folder {str(parent)!r} is not writable"
            return None
    return None


def writable_dir(text: str) -> str:
    """An argparse ``type=``: a folder that exists or can be created (not a file, not under a file)."""
    from pathlib import Path

    why = _creatable_dir(Path(text))
    if why:
        raise argparse.ArgumentTypeError(f"{text!r}: {why}")
    return text


def writable_file(text: str) -> str:
    """An argparse ``type=``: a file path that is not a folder and whose folder exists or can be created."""
    from pathlib import Path

    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file path")
    why = _creatable_dir(p.parent)
    if why:
        raise argparse.ArgumentTypeError(f"{text!r}: {why}")
    return text


_KINDS = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def check_fields(config: Mapping, table: Mapping, source: str, *, error=ValueError) -> None:
    """Check every field of ``config`` named in ``table`` (``field -> (kind, low, high)``), all at once.

    ``kind`` is ``"int"``, ``"float"``, ``"bool"``, ``"str"``, ``"int|none"`` etc., or a tuple of allowed
    values; ``low``/``high`` bound numbers (None: unbounded; a bound in a list is exclusive). ``bool`` is
    not a number here. Raises ``error`` listing every bad field with its value and what was expected.
    """
    problems = []
    for field, (kind, low, high) in table.items():
        if field not in config:
            continue
        value = config[field]
        if isinstance(kind, tuple):
            if value not in kind:
                problems.append(f"{field} = {plain(value)} (expected one of {', '.join(map(plain, kind))})")
            continue
        kinds = kind.split("|")
        if value is None and "none" in kinds:
            continue
        ok_types = tuple(t for k in kinds if k != "none" for t in _KINDS[k])
        is_bool = isinstance(value, (bool, np.bool_))
        integral_float = isinstance(value, (float, np.floating)) and float(value).is_integer()
        if integral_float and "int" in kinds:
            ok_types = ok_types + (float,)
        if not isinstance(value, ok_types + (np.integer, np.floating)) or (is_bool and "bool" not in kinds) \
                or (not is_bool and "bool" in kinds and len(kinds) == 1) \
                or (isinstance(value, (np.integer, np.floating)) and not {"int", "float"} & set(kinds)) \
                or (isinstance(value, (float, np.floating)) and "float" not in kinds and not integral_float):
            problems.append(f"{field} = {plain(value)} (expected {' or '.join(kinds)}, got {type(value).__name__})")
            continue
        if is_bool or isinstance(value, str):
            continue
        v = float(value)
        lo_excl, hi_excl = isinstance(low, list), isinstance(high, list)
        lo = low[0] if lo_excl else low
        hi = high[0] if hi_excl else high
        if not math.isfinite(v) or (lo is not None and (v < lo or (lo_excl and v == lo))) or \
                (hi is not None and (v > hi or (hi_excl and v == hi))):
            rng = f"{'(' if lo_excl else '['}{'-inf' if lo is None else plain(lo)}, " \
                  f"{'inf' if hi is None else plain(hi)}{')' if hi_excl or hi is None else ']'}"
            problems.append(f"{field} = {plain(value)} (expected a number in {rng})")
    if problems:
        raise error(f"{source}: " + "; ".join(problems))
