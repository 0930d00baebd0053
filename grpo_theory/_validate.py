"""Small reusable validators: numbers and arrays given in Python checked for range (their conversion, and the
messages' plain formatting, are :mod:`grpo_theory._numbers`, re-exported here), and the readers' limits and checks
(files, JSON, CSV, config fields).

Bad input is an :class:`~grpo_theory.errors.InvalidInputError` naming the value and what was expected.
:func:`check_fields` validates a config mapping against one table of ``field -> (kind, low, high)`` per reader,
naming the field and the value. The command line's argparse ``type=`` functions are in
:mod:`grpo_theory._argtypes`.
"""

from __future__ import annotations

import collections
import decimal
import errno
import fractions
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ._numbers import as_array, as_double, as_floats, longdouble_losses, numeric_entries, plain, ragged
from .errors import InvalidInputError

__all__ = ["plain", "check_fields", "number", "float_array", "as_floats", "integer", "read_text", "out_folder", "out_file",
           "check_structure",
           "as_double", "longdouble_losses", "csv_records", "text_number",
           "text_float", "rounding_problem", "read_bytes", "BEYOND_DOUBLE",
           "numeric_entries", "ragged", "as_array", "broadcastable", "unwrap_scalar", "probability_tolerance",
           "MAX_EXACT_GROUP", "MAX_CONFIG_BYTES", "MAX_DATA_BYTES", "MAX_DEPTH", "MAX_ITEMS"]

#: Largest finite group size G the exact paths take from the shell or a sweep grid (each evaluation of P_G sums
#: over G + 1 count vectors or more); above it, G = inf (the large-G limit) is the alternative.
MAX_EXACT_GROUP = 1_000_000
#: Size limits of what the readers load: a trainer config or sweep grid, and a samples table.
MAX_CONFIG_BYTES = 16 * 2**20
MAX_DATA_BYTES = 2 * 2**30
#: Nesting depth and number of entries a config or grid may have (a real one has depth < 10).
MAX_DEPTH = 64
MAX_ITEMS = 1_000_000


def number(name: str, value, *, low: float | None = None, high: float | None = None, low_open: bool = False,
           high_open: bool = False, integer: bool = False) -> float:
    """``value`` as a finite float (an int where ``integer``), in range; else InvalidInputError naming ``name``.

    Strings, None, bools, NaN and infinities are refused with the value and what was expected.
    """
    arr = float_array(name, value, low=low, high=high, low_open=low_open, high_open=high_open, integer=integer)
    if arr.ndim != 0:
        raise InvalidInputError(f"{name} must be a single number, got {plain(value)}")
    v = float(arr)
    return int(v) if integer else v


def integer(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int (``3.0`` allowed, ``3.5``, ``True``, ``'3'`` and NaN not), in ``[low, high]``.

    An int is compared and returned exactly (``2**53 + 1`` stays itself: a seed is not rounded to its float
    neighbour), and named as given in the message."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidInputError(f"{name} must be an integer, got {plain(value)}")
    if isinstance(value, (int, np.integer)):
        as_double(name, value)
        if (low is not None and value < low) or (high is not None and value > high):
            shown = str(int(value)) if len(str(int(value))) <= 40 else f"{str(int(value))[:20]}... " \
                f"({len(str(abs(int(value))))} digits)"
            raise InvalidInputError(f"{name} must be an integer in {_interval(low, high, integer=True)}, got {shown}")
        return int(value)
    return int(number(name, value, low=low, high=high, integer=True))


def _interval(low, high, *, low_open: bool = False, high_open: bool = False, integer: bool = False) -> str:
    """``[low, high]`` as a message writes it (``(`` for an open or missing end; ``1``, not ``1.0``, for an
    integer's bound)."""
    def end(b):
        return plain(int(b)) if integer and float(b).is_integer() else plain(float(b))
    return f"{'(' if low_open or low is None else '['}{'-inf' if low is None else end(low)}, " \
           f"{'inf' if high is None else end(high)}{')' if high_open or high is None else ']'}"


def float_array(name: str, value, *, low: float | None = None, high: float | None = None, low_open: bool = False,
                high_open: bool = False, integer: bool = False, finite: bool = True) -> np.ndarray:
    """``value`` as a float array, every entry checked; the first bad entry is named in the error.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : array_like
        Numbers (no strings, None or bools).
    low, high : float, optional
        Bounds (inclusive unless ``low_open``/``high_open``).
    integer : bool
        Every entry a whole number.
    finite : bool
        Refuse NaN and infinities (default); with False only NaN is refused.
    """
    arr = as_floats(name, value)
    bad = np.isnan(arr) if not finite else ~np.isfinite(arr)
    if low is not None:
        bad |= (arr < low) | ((arr == low) if low_open else False)
    if high is not None:
        bad |= (arr > high) | ((arr == high) if high_open else False)
    if integer:
        bad |= np.isfinite(arr) & (arr != np.round(arr))
    if np.any(bad):
        first = arr[bad].ravel()[0] if arr.ndim else arr
        want = "an integer" if integer else ("a finite number" if finite else "a number")
        if low is not None or high is not None:
            want += " in " + _interval(low, high, low_open=low_open, high_open=high_open, integer=integer)
        shown = plain(value) if arr.size <= 8 else f"{plain(float(first))} (among {arr.size} values)"
        raise InvalidInputError(f"{name} must be {want}, got {shown}")
    return arr


def unwrap_scalar(value):
    """A 0-d NumPy array (what ``np.float64(x) * np.ones(())`` or a reduction returns) as the Python number it
    holds; anything else unchanged. Scalar parameters call this first, so ``np.array(0.5)`` is 0.5 everywhere."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return value.item()
    if isinstance(value, (decimal.Decimal, fractions.Fraction)):
        # Decimal('0.3') and Fraction(3, 10) are the number 0.3 (the double nearest them); one a double cannot
        # hold (Decimal('1e-400'), a NaN) stays as given, for the caller's check to name
        try:
            f = float(value)
        except (OverflowError, ValueError):
            return value
        if f.is_integer() and value != int(f):
            return value        # Decimal('4.0000000000000000001') is not the integer its double is: left as given
        if math.isfinite(f) and not (f == 0 and value != 0):     # a Decimal NaN gives nan: not finite
            return f
    return value


def broadcastable(**arrays) -> None:
    """Refuse arrays whose shapes do not broadcast together, naming each argument's shape."""
    try:
        np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shown = ", ".join(f"{k} {np.shape(a)}" for k, a in arrays.items())
        raise InvalidInputError(f"the shapes do not broadcast together: {shown}; give arrays of one shape, or "
                                "shapes NumPy can broadcast (e.g. (3, 1) against (1, 4))") from None


def probability_tolerance(value, size: int, tol: float) -> float:
    """The tolerance for "sums to 1" of ``value``: ``tol`` per entry for double precision, and the input's own
    rounding (4 ulps per entry) when it holds float32 or float16 numbers."""
    try:
        dtype = np.asarray(value).dtype
        if dtype.kind == "O" and isinstance(value, (list, tuple)) and value:
            dtype = np.result_type(*[np.asarray(v).dtype for v in value])
    except (TypeError, ValueError):
        return tol * max(1, size)
    if dtype.kind == "f" and dtype.itemsize < 8:
        return max(tol, 4 * float(np.finfo(dtype).eps)) * max(1, size)
    return tol * max(1, size)


# ----------------------------------------------------------------------------- files and structures

def read_text(path, what: str, *, max_bytes: int = MAX_CONFIG_BYTES, expected: str = "") -> str:
    """The text of file ``path``: it exists, is a file, is readable, is at most ``max_bytes``, decodes as UTF-8
    (a byte-order mark is dropped); every failure an InvalidInputError naming ``what`` and the file."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"{what} must be a file path, got {type(path).__name__} {plain(path)[:80]}")
    p = Path(path)
    hint = f" (expected {expected})" if expected else ""
    if not _exists(p, what):
        if os.path.islink(p):                   # "no such file" would send the user looking for a missing file
            target = os.readlink(p)
            raise InvalidInputError(f"{what} {str(p)!r} is " + (f"a symlink loop (it points to {target!r})" if _loops(p)
                                    else f"a symlink to {target!r}, which does not exist") + f"{hint}")
        raise InvalidInputError(f"{what} {str(p)!r}: no such file{hint}")
    if p.is_dir():
        raise InvalidInputError(f"{what} {str(p)!r} is a folder, not a file{hint}")
    data = read_bytes(p, what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise InvalidInputError(f"{what} {str(p)!r} is UTF-16 text (it starts with the UTF-16 byte-order mark "
                                    f"{data[0]:#04x} {data[1]:#04x}){hint}; save it as UTF-8") from None
        raise InvalidInputError(f"{what} {str(p)!r} is not UTF-8 text: byte {data[exc.start]:#04x} at offset "
                                f"{exc.start} (line {line}){hint}; save it as UTF-8") from None


def _exists(p: Path, what: str) -> bool:
    """``p.exists()``, with a name the file system refuses (too long) named as such instead of an OSError."""
    try:
        return p.exists()
    except OSError as exc:
        raise InvalidInputError(f"{what} {str(p)!r}: {exc.strerror or exc}") from None


def out_file(path, what: str) -> Path:
    """``path`` as the file an output is written to: text or a path, not empty, without a NUL byte, ``~``
    expanded, not a folder, its own name and its lock's (``<name>.lock``) names the file system takes, no part of
    its folder a file; else an InvalidInputError naming ``what`` and the file."""
    target = out_folder(path, what, make=False)
    if target.is_dir():
        raise InvalidInputError(f"{what} {str(target)!r} is a folder; expected a file")
    _exists(target.with_name(target.name + ".lock"), what)
    return target


def out_folder(path, what: str, *, make: bool = True) -> Path:
    """``path`` as the folder an output goes into, made (with its parents) if missing: text or a path, not empty,
    without a NUL byte, ``~`` expanded; a file there, a part of it that is a file, a name the file system refuses,
    a place it cannot be made: each an InvalidInputError naming ``what``, the folder and the system's reason.
    With ``make=False`` (:func:`out_file`) ``path`` is a file's: nothing is made, and its folder's parts must be
    folders."""
    noun = "a folder path ('.' for this folder)" if make else "a file path"
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"{what} must be {noun}, got {plain(path)[:80]} ({type(path).__name__})")
    text = os.fspath(path)
    if isinstance(text, bytes) or not text.strip() or "\x00" in text:
        why = "holds a NUL byte" if isinstance(text, str) and "\x00" in text else "is empty"
        raise InvalidInputError(f"{what} {text!r} {why}; expected {noun}")
    folder = Path(text).expanduser()
    try:
        if not make:                                     # a file's path: its folder's parts must be folders
            part = next((a for a in folder.parents if a.exists()), None)
            if part is not None and not part.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a folder")
            folder.exists()
        elif folder.exists() and not folder.is_dir():
            raise InvalidInputError(f"{what} {str(folder)!r} is a file; expected a folder")
        else:
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "a part of it is a file, not a folder" if exc.errno == errno.ENOTDIR else exc.strerror or str(exc)
        raise InvalidInputError(f"{what} {str(folder)!r}: cannot {'make the folder' if make else 'write there'}: "
                                f"{why}") from None
    return folder


def _loops(p) -> bool:
    """Whether following the symlink ``p`` runs in a loop."""
    try:
        os.stat(p)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


#: What each pipe read in this process held, by ``(st_dev, st_ino)``: a pipe gives its bytes once, and a config read
#: first for its format and then by its reader (``explain --framework verl /dev/stdin``) is read twice.
_PIPE_BYTES: dict[tuple[int, int], bytes] = {}


def read_bytes(path, what: str, *, max_bytes: int) -> bytes:
    """The bytes of ``path`` (a regular file, or a pipe with a writer: ``<(cmd)``, ``/dev/stdin``), at most
    ``max_bytes``; never blocks on a FIFO nothing writes to and never reads a device (``/dev/zero`` has no end):
    those, sockets and unreadable files are an InvalidInputError naming ``what`` and the file. A pipe read to its
    end already in this process gives the same bytes again."""
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InvalidInputError(f"{what} {p!r} cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            size = os.fstat(fd).st_size
            if size > max_bytes:
                raise InvalidInputError(f"{what} {p!r} is {size:,} bytes, over the limit of {max_bytes:,}")
        elif stat.S_ISFIFO(mode):
            st = os.fstat(fd)
            pipe = (st.st_dev, st.st_ino)
            try:
                first = os.read(fd, 65536)
            except BlockingIOError:        # a writer is there, nothing written yet: wait for it
                first = None
            else:
                if not first and pipe in _PIPE_BYTES:     # read to its end before: the same bytes
                    return _PIPE_BYTES[pipe]
                if not first:
                    raise InvalidInputError(f"{what} {p!r} is a FIFO (named pipe) that nothing writes to; give a "
                                            "file, or start the writer first")
        else:
            kind = "a folder" if stat.S_ISDIR(mode) else "a device, a socket or another special file"
            raise InvalidInputError(f"{what} {p!r} is {kind}, not a file; give the path of a file")
        os.set_blocking(fd, True)
        chunks, total = ([first], len(first)) if stat.S_ISFIFO(mode) and first else ([], 0)
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise InvalidInputError(f"{what} {p!r} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if total > max_bytes:                  # a file that grew, or a pipe: stat did not know its size
        raise InvalidInputError(f"{what} {p!r} is over the limit of {max_bytes:,} bytes")
    data = b"".join(chunks)
    if stat.S_ISFIFO(mode):
        _PIPE_BYTES[pipe] = data
    return data


def check_structure(obj, source: str, *, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS):
    """``obj`` (parsed JSON/YAML) if its nesting is at most ``max_depth`` and it has at most ``max_items``
    entries in all; else an InvalidInputError naming ``source`` and the limit. Iterative: no recursion."""
    stack, items = [(obj, 1)], 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list, tuple)):
            if depth > max_depth:
                raise InvalidInputError(f"{source} is nested deeper than {max_depth} levels; a config has a few")
            items += len(node)
            if items > max_items:
                raise InvalidInputError(f"{source} has more than {max_items:,} entries")
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return obj


def rounding_problem(text: str, value: float) -> str | None:
    """Why the number written as ``text`` is not the double ``value = float(text)`` stands for, or None: a
    nonzero number below the smallest double (``1e-400`` reads as 0) or a finite one beyond the largest
    (``1e400`` reads as inf). Text and numbers read from the shell and from files go through this rule, so a
    tiny reward is never silently a zero one."""
    if value == 0:
        mantissa = text.strip().lower().lstrip("+-").split("e")[0]
        if any(c in "123456789" for c in mantissa):
            return "is below the smallest positive double (5e-324) and would be read as 0; write 0, or a number " \
                   "a double holds"
    elif math.isinf(value) and "inf" not in text.lower():
        return BEYOND_DOUBLE
    return None


#: The words for a finite number written beyond the largest double (it would read as inf).
BEYOND_DOUBLE = "is beyond the largest double (1.8e308); expected a number of size at most 1.8e308"


def text_float(text: str, what: str) -> float | None:
    """``float(text)``, or None when ``text`` is not a number; a number that :func:`rounding_problem` finds a
    double cannot hold is an InvalidInputError naming ``what``."""
    try:
        value = float(text)
    except ValueError:
        return None
    why = rounding_problem(text, value)
    if why:
        raise InvalidInputError(f"{what} = {text.strip()[:40]} {why}")
    return value


def text_number(value, name: str) -> float:
    """A number read from a data file: an int or float (not a bool), or text ``float`` reads; else an
    InvalidInputError naming ``name`` and the value. Non-finite values are returned (the caller decides)."""
    if isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be a number, got {value!r} (write 1 or 0)")
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(as_double(name, value))        # a long double of 1e-400 is not 0
    if isinstance(value, str) and (x := text_float(value, name)) is not None:
        return x
    raise InvalidInputError(f"{name} must be a number, got {value!r}")


def csv_records(text: str, source: str) -> list[tuple[int, dict]]:
    """``(line, row)`` pairs of CSV ``text`` with a header row; keys stripped, values as text; ``line`` is the
    file line a row ends on. Refused with ``source`` and the line named: no header, a column named twice, a row
    with more or fewer fields than the header, unreadable CSV. A one-column header holding ``;`` or a tab is
    named as the wrong separator. Any line ending (LF, CRLF, CR) is read."""
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        while header is not None and not any(h.strip() for h in header):     # leading blank lines
            header = next(reader, None)
        if header is None:
            raise InvalidInputError(f"{source}: the file is empty (expected a header row)")
        names = [h.strip() for h in header]
        if len(names) == 1:
            for sep, word in ((";", "';'"), ("\t", "a tab"), ("|", "'|'")):
                if sep in names[0]:
                    raise InvalidInputError(f"{source}: the header is one column, {names[0][:80]!r}, separated by "
                                            f"{word}; the file must be comma-separated (CSV)")
        dup = sorted(h for h, c in collections.Counter(names).items() if c > 1)
        if dup:
            raise InvalidInputError(f"{source}: column(s) {dup} appear more than once in the header (expected once)")
        out = []
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip() and len(names) > 1):
                continue                                            # a blank line
            if len(row) != len(names):
                raise InvalidInputError(f"{source} line {reader.line_num}: {len(row)} field(s), expected "
                                        f"{len(names)} as in the header ({', '.join(names)})")
            out.append((reader.line_num, dict(zip(names, row))))
        return out
    except csv.Error as exc:
        raise InvalidInputError(f"{source} line {reader.line_num}: not readable CSV ({exc})") from None


def given_options(argv, options) -> list[str]:
    """The options among ``options`` that the command line ``argv`` gives (in full, as ``--opt=value``, or
    abbreviated to a prefix only one of ``options`` has, as argparse takes them), each once, in order. A bare
    ``--`` ends the options, as for argparse: what follows it is positional (``-- --s.csv`` names a file)."""
    found = []
    for token in argv:
        if str(token) == "--":
            break
        name = str(token).split("=")[0]
        if not name.startswith("--"):
            continue
        opts = [name] if name in options else [o for o in options if o.startswith(name)]
        if len(opts) == 1 and opts[0] not in found:
            found.append(opts[0])
    return found


def _reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


_KINDS = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def check_fields(config: Mapping, table: Mapping, source: str, *, error=ValueError,
                 shown: Mapping | None = None) -> None:
    """Check every field of ``config`` named in ``table`` (``field -> (kind, low, high)``), all at once.

    ``kind`` is ``"int"``, ``"float"``, ``"bool"``, ``"str"``, ``"int|none"`` etc., or a tuple of allowed
    values; ``low``/``high`` bound numbers (None: unbounded; a bound in a list is exclusive). ``bool`` is
    not a number here. Raises ``error`` listing every bad field with its value and what was expected; a field is
    named as ``shown[field]`` where given (the user's spelling of a renamed flag). A number written as text
    (``'1.0e300'``: YAML 1.1 reads a float only with a dot and a signed exponent) is named as such.
    """
    problems = []
    for field, (kind, low, high) in table.items():
        if field not in config:
            continue
        value = config[field]
        name = (shown or {}).get(field, field)
        if isinstance(kind, tuple):
            if value not in kind:
                problems.append(f"{name} = {plain(value)} (expected one of {', '.join(map(plain, kind))})")
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
            why = ""
            if isinstance(value, str) and {"int", "float"} & set(kinds) and _reads_as_number(value):
                why = ("; a number written as text: YAML 1.1 reads a float only with a dot and a signed exponent, "
                       "e.g. 1.0e+300, and never in quotes")
            problems.append(f"{name} = {plain(value)} (expected {' or '.join(kinds)}, got {type(value).__name__}{why})")
            continue
        if is_bool or isinstance(value, str):
            continue
        v = int(value) if isinstance(value, (int, np.integer)) else float(value)     # 10**400: exact, no overflow
        lo_excl, hi_excl = isinstance(low, list), isinstance(high, list)
        lo = low[0] if lo_excl else low
        hi = high[0] if hi_excl else high
        if (isinstance(v, float) and not math.isfinite(v)) or (lo is not None and (v < lo or (lo_excl and v == lo))) \
                or (hi is not None and (v > hi or (hi_excl and v == hi))):
            rng = f"{'(' if lo_excl else '['}{'-inf' if lo is None else plain(lo)}, " \
                  f"{'inf' if hi is None else plain(hi)}{')' if hi_excl or hi is None else ']'}"
            problems.append(f"{name} = {plain(value)} (expected a number in {rng})")
    if problems:
        raise error(f"{source}: " + "; ".join(problems))
