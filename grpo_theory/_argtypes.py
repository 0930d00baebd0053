"""argparse ``type=`` functions and the CLI parser's negative-number rule.

Each ``type=`` function turns a bad command-line value into argparse's one-line
``grpo-theory <cmd>: error: argument --flag: ...`` (exit 2), whichever subcommand uses it, so the
checks survive a reshaping of the CLI. Only the CLI imports this module, so ``import grpo_theory`` does not
load argparse; the checks of values given in Python are in :mod:`grpo_theory._validate`.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
from pathlib import Path

from ._validate import plain, rounding_problem

__all__ = ["int_at_least", "positive_int", "nonnegative_int", "float_in", "finite_float", "positive_float",
           "nonnegative_float", "number_text", "any_float", "negative_number", "device", "existing_file",
           "folder_path", "path_problem", "writable_dir",
           "writable_file"]


def int_at_least(low: int, what: str = "an integer", high: int | None = None, why: str = ""):
    """An argparse ``type=``: an integer ``>= low`` (and ``<= high`` when given; ``why`` says why the cap)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected {what} >= {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{value:,} is above the limit {high:,}{why}")
        return value
    parse.__name__ = f"integer>={low}"
    return parse


def float_in(low: float | None = None, high: float | None = None, *, low_open: bool = False,
             high_open: bool = False, what: str = "a number"):
    """An argparse ``type=``: a finite float in the interval ``[low, high]`` (ends open when asked)."""
    lo_s = "-inf" if low is None else plain(float(low))
    hi_s = "inf" if high is None else plain(float(high))
    rng = f"{'(' if low_open or low is None else '['}{lo_s}, {hi_s}{')' if high_open or high is None else ']'}"

    def parse(text: str) -> float:
        value = number_text(text, f"{what} in {rng}")
        bad = not math.isfinite(value) or (low is not None and (value < low or (low_open and value == low))) \
            or (high is not None and (value > high or (high_open and value == high)))
        if bad:
            raise argparse.ArgumentTypeError(f"expected {what} in {rng}, got {text!r}")
        return value
    parse.__name__ = "number"
    return parse


def number_text(text: str, want: str = "a number") -> float:
    """``float(text)``, refusing text that is no number (``want`` says what was expected) and a number a double
    cannot hold (``1e-400`` would be read as 0, ``1e400`` as inf: :func:`grpo_theory._validate.rounding_problem`),
    as argparse's one-line error naming the value."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}") from None
    why = rounding_problem(text, value)
    if why:
        raise argparse.ArgumentTypeError(f"{text.strip()[:40]!r} {why}")
    return value


def any_float(text: str) -> float:
    """An argparse ``type=``: a number (NaN and infinities pass, for the option's own check to name), refused
    where a double cannot hold it (:func:`number_text`)."""
    return number_text(text)


any_float.__name__ = "number"
finite_float = float_in()
positive_float = float_in(0.0, low_open=True, what="a positive number")
nonnegative_float = float_in(0.0, what="a number")


class _NegativeNumber:
    """argparse's test "is this token a negative number, not an option?" (its ``_negative_number_matcher``).

    argparse's own pattern (``^-\\d+$|^-\\d*\\.\\d+$`` before Python 3.13) reads ``-1e-3``, ``-inf`` and ``-nan``
    as options, so ``--beta -nan`` failed as "expected one argument", never naming the value. Here a token is a
    value when it starts with ``-`` and ``float`` reads it, so the option's own check names it.
    """

    @staticmethod
    def match(text: str) -> bool:
        if not (isinstance(text, str) and text.startswith("-") and not text.startswith("--")):
            return False
        try:
            float(text)
        except ValueError:
            return False
        return True


#: The rule the CLI's parser uses to tell a negative number (``-1e-3``, ``-inf``, ``-nan``) from an option.
negative_number = _NegativeNumber()


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
    p = Path(text)
    try:
        exists, is_file = p.exists(), p.is_file()
    except OSError as exc:            # a name or a path too long, a symlink loop: the system's reason, with the path
        raise argparse.ArgumentTypeError(f"{_shown(text)}: {exc.strerror or exc}") from None
    if not exists:
        raise argparse.ArgumentTypeError(f"{text!r}: no such file")
    if not is_file:
        raise argparse.ArgumentTypeError(f"{text!r} is not a file")
    return text


#: ``errno`` values of the system refusing a write (a file-size limit, a full disk or quota, a read-only file system):
#: about the user's output even when the error names no file.
WRITE_REFUSED = frozenset({errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def user_os_error(exc: OSError, output=None) -> bool:
    """Whether a system error is about the user's paths or outputs, so the command line reports it in one line even
    without a file name (a study's "model not found", a file-size limit while writing): a missing file or folder, a
    permission, a file where a folder is expected or the reverse, or, where the command writes an ``output`` it can
    name (``--out``, a sweep's CSV), a write the system refused."""
    return isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError,
                            FileExistsError)) or (output is not None and exc.errno in WRITE_REFUSED)


def _creatable_dir(p) -> str | None:
    """Why folder ``p`` cannot exist or be created, or None."""
    for parent in [p, *p.parents]:
        if parent.exists():
            if not parent.is_dir():                  # the message names p already: not twice
                return "it is a file, not a folder" if parent == p else f"{str(parent)!r} is a file, not a folder"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"the folder {str(parent)!r} is not writable"
            return None
    return None


def _shown(text: str) -> str:
    """A path for a message: as given, or its two ends when it is longer than 120 characters."""
    return repr(text) if len(text) <= 120 else repr(text[:60]) + f" ... {repr(text[-40:])} ({len(text):,} characters)"


def _path_limits() -> tuple[int, int]:
    try:
        return os.pathconf(".", "PC_NAME_MAX"), os.pathconf(".", "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):   # not POSIX: the common limits
        return 255, 4096


def path_problem(text: str, *, folder: bool) -> str | None:
    """Why the path ``text`` cannot be written at all, or None: a name or the whole path longer than the file
    system allows, a symlink loop, a symlink to nothing (for a file: to a missing folder), or an existing
    non-regular file (a FIFO, a device: a write would block, or replace it); for a file, a path ending in a
    separator (it names a folder)."""
    if not text:
        return "an empty path (it would mean the working folder); give a name"
    if not folder and text.endswith(tuple(s for s in (os.sep, os.altsep) if s)):
        return "ends in a separator, so it names a folder; give a file path (without the trailing separator)"
    name_max, path_max = _path_limits()
    for part in Path(text).parts:
        if len(os.fsencode(part)) > name_max:
            return (f"a name of {len(os.fsencode(part)):,} bytes, above the file system's limit of {name_max} "
                    "bytes per name")
    try:
        full = len(os.fsencode(os.path.abspath(text)))
    except FileNotFoundError:       # os.getcwd(): the working folder was deleted under the command
        return "a relative path, and the working folder no longer exists (deleted); cd into a folder or give a full path"
    if full >= path_max:
        return f"a path of {full:,} bytes, above the system's limit of {path_max:,}"
    if os.path.islink(text):
        try:
            os.stat(text)
        except OSError as exc:
            target = os.readlink(text)
            if exc.errno == errno.ELOOP:
                return f"a symlink loop (it points to {target!r}); remove the link or point it at a real path"
            parent = os.path.dirname(os.path.realpath(text))
            if folder or not os.path.isdir(parent):
                return (f"a symlink to {target!r}, which does not exist"
                        + ("" if folder else f" (nor does its folder {parent!r})") + "; create it or remove the link")
    if not folder and os.path.exists(text) and not os.path.isdir(text) and not os.path.isfile(text):
        return "not a regular file (a FIFO, a socket or a device); give the path of a file to write"
    return None


def writable_dir(text: str) -> str:
    """An argparse ``type=``: a folder that exists or can be created (not a file, not under a file)."""
    why = path_problem(text, folder=True) or _creatable_dir(Path(text))
    if why:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: {why}")
    return text


def folder_path(text: str) -> str:
    """An argparse ``type=``: a path that, where something exists, is a folder (a model's folder: a missing one
    is named later with the command that fills it)."""
    why = path_problem(text, folder=True)
    if why:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: {why}")
    if os.path.exists(text) and not os.path.isdir(text):
        kind = "a file" if os.path.isfile(text) else "not a folder (a FIFO, a socket or a device)"
        raise argparse.ArgumentTypeError(f"{_shown(text)} is {kind}; give the folder that holds the model")
    return text


def writable_file(text: str) -> str:
    """An argparse ``type=``: a file path that is not a folder and whose folder exists or can be created (a
    symlink is followed: the file it points to is written)."""
    why = path_problem(text, folder=False)
    if why:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: {why}")
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file path")
    why = _creatable_dir(p.parent)
    if why:
        raise argparse.ArgumentTypeError(f"{text!r}: {why}")
    return text
