"""Numbers given in Python, read as doubles: the one conversion of a number or an array of them
(:func:`as_floats`), what it refuses (text, bytes, NumPy times, complex numbers, ragged lists, numbers beyond a
double, an object whose own conversion fails) and the messages' way of showing a value (:func:`plain`).

:mod:`grpo_theory._validate` re-exports every name here; the range checks (``float_array``, ``number``) are there.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InvalidInputError

__all__ = ["plain", "as_double", "longdouble_losses", "as_floats", "numeric_entries", "ragged", "as_array"]


def plain(value) -> str:
    """``value`` as a user would type it: ``1.4``, not ``np.float64(1.4)``; arrays as ``[0.3, 0.7]``."""
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        item = value.item()
        if type(item) is type(value):            # np.longdouble's item() is itself: show it as NumPy prints it
            return str(value)
        return plain(item)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)                       # 1.4, 4.0, 1e-300, nan: as typed
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        digits = str(abs(value))                 # 10**400: its ends and its length, not 401 digits
        return f"{'-' if value < 0 else ''}{digits[:12]}...{digits[-4:]} ({len(digits):,} digits)"
    return repr(value) if isinstance(value, str) else str(value)


_DOUBLE_MAX = float(np.finfo(np.float64).max)
_LONG_WIDER = np.finfo(np.longdouble).max > np.finfo(np.float64).max
_IN_DOUBLE = "; the computation is in double precision"


def as_double(name: str, value):
    """``value`` unchanged, unless a double cannot hold it: an int beyond 1.8e308, or an ``np.longdouble`` that
    becomes inf or 0 in double precision; those are refused naming ``name``."""
    if isinstance(value, (np.timedelta64, np.datetime64)):        # np.timedelta64 is an np.integer
        raise InvalidInputError(f"{name} must be a number, got {value!r} (a NumPy time, not a number)")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and abs(value) > _DOUBLE_MAX:
        raise InvalidInputError(f"{name} = {str(value)[:40]}... is beyond the largest double (1.8e308){_IN_DOUBLE}")
    elif _LONG_WIDER and isinstance(value, np.longdouble) and np.isfinite(value):
        f = float(value)
        if math.isinf(f) or (f == 0 and value != 0):
            where = "beyond the largest double (1.8e308)" if math.isinf(f) else "below the smallest double (5e-324)"
            raise InvalidInputError(f"{name} = {plain(value)} is {where}{_IN_DOUBLE}")
        return f
    return value


def longdouble_losses(name: str, value, arr: np.ndarray) -> None:
    """Refuse the entries of a ``longdouble`` array that a double cannot hold (inf or 0 after the cast)."""
    if _LONG_WIDER and (raw := np.asarray(value)).dtype == np.longdouble:
        lost = (np.isfinite(raw) & ~np.isfinite(arr)) | ((arr == 0) & (raw != 0))
        if np.any(lost):
            as_double(name, raw[lost].ravel()[0])


def as_floats(name: str, value) -> np.ndarray:
    """``value`` as a float array, with no entry checked for range: the one conversion of numbers given in Python.

    Refused, naming ``name`` and the value: text and bytes (``b'0.5'``, a ``bytearray``: NumPy would read their
    bytes as numbers), None, booleans, NumPy times, complex numbers (NumPy would drop the imaginary part), ragged
    lists, numbers beyond a double, and an object whose own conversion fails (its ``__float__`` raises: the
    object's message is quoted)."""
    if value.__class__ is np.ndarray and value.dtype.kind in "fiu" and value.dtype.itemsize <= 8:
        return np.asarray(value, dtype=float)   # the solvers' own arrays: nothing to refuse, no second look
    if isinstance(value, memoryview) and value.format not in ("B", "b", "c"):
        try:                                    # a typed buffer (format 'd', 'i', ...): the numbers it holds
            value = np.asarray(value)
        except (TypeError, ValueError):         # a struct or other layout NumPy cannot read: refused below
            pass
    if isinstance(value, (str, bytes, bytearray, memoryview, bool, np.bool_)) or value is None:
        bytes_view = " (a view of bytes: give np.frombuffer(view, dtype=...))" if isinstance(value, memoryview) else ""
        raise InvalidInputError(f"{name} must be a number or an array of numbers, got {_kind(value)}{bytes_view}")
    if isinstance(value, (np.timedelta64, np.datetime64)) or getattr(getattr(value, "dtype", None), "kind", "") \
            in ("m", "M"):
        shown = repr(value) if np.ndim(value) == 0 else plain(value)
        raise InvalidInputError(f"{name} must be a number or an array of numbers, got {shown} (NumPy times, "
                                "not numbers)")
    try:
        complex_given = np.iscomplexobj(value)
    except Exception:                           # noqa: BLE001 - ragged or odd input: the conversion below names it
        complex_given = False
    if complex_given:                           # NumPy would drop the imaginary part with only a warning
        flat = np.asarray(value).ravel()
        odd = np.flatnonzero(np.imag(flat) != 0)
        first = complex(flat[odd[0] if odd.size else 0])
        among = f" (among {flat.size} values)" if flat.size > 1 else ""
        raise InvalidInputError(f"{name} must be real numbers, got the complex number {first!r}{among}; give the "
                                "real part if that is what is meant")
    numeric_entries(name, value)
    try:
        with np.errstate(over="ignore"):         # a longdouble beyond a double: longdouble_losses names it
            arr = np.asarray(value, dtype=float)
    except OverflowError:
        raise InvalidInputError(f"{name} holds a number beyond the largest double (1.8e308){_IN_DOUBLE}") from None
    except (TypeError, ValueError):
        ragged(name, value)
        raise InvalidInputError(f"{name} must be a number or an array of numbers, got {_kind(value)}") from None
    except Exception as exc:                    # noqa: BLE001 - the value's own __float__ failed: say so
        raise InvalidInputError(f"{name} cannot be read as numbers: converting {_kind(value)} raised "
                                f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None
    longdouble_losses(name, value, arr)
    return arr


def _kind(value) -> str:
    """``value`` as :func:`plain` shows it (cut to 80 characters), with its type where that is not a number's or
    text's (``<generator ...>``, a ``bytearray``)."""
    try:
        shown = plain(value)
    except Exception:                           # noqa: BLE001 - any object: its type is enough
        shown = "?"
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return shown if type(value) in (int, float, str) or value is None else f"{shown} ({type(value).__name__})"


def numeric_entries(name: str, value) -> None:
    """Refuse the entries ``numpy.asarray(value, dtype=float)`` would turn silently into numbers: text (``'0.3'``),
    booleans, None (read as NaN), and masked entries of a masked array (read as their hidden values); and an
    object NumPy cannot read at all (a torch tensor that requires grad), with the object's own reason."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.is_masked(value):
        raise InvalidInputError(f"{name} has {int(np.ma.count_masked(value))} masked entries; fill them "
                                "(.filled(...)) or drop them first")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        return                                   # ragged or odd: the float conversion names it
    except RuntimeError as exc:                  # a torch tensor that requires grad refuses NumPy
        raise InvalidInputError(f"{name} cannot be read as numbers: {type(value).__name__} says "
                                f"{' '.join(str(exc).split())}") from None
    bad = (lambda x: x is None or isinstance(x, (str, bytes, bool, np.bool_, np.str_, np.bytes_)))
    if raw.dtype.kind in "iuf" and isinstance(value, (list, tuple)):
        # NumPy casts [True, 0.5] to [1.0, 0.5] before anyone looks: find a bool among the list's own entries
        if _has_bool(value):
            first = next(x for x in _flat(value) if isinstance(x, (bool, np.bool_)))
            raise InvalidInputError(f"{name} must hold numbers only, got {first!r} among {plain(value)[:80]} "
                                    "(write 1 or 0)")
        return
    if raw.dtype.kind in "USb":                  # [10, 'a'] is all text to NumPy: name the entry that was text
        first = (next((x for x in _flat(value) if bad(x)), raw.flat[0]) if isinstance(value, (list, tuple))
                 else raw.flat[0]) if raw.size else None
    elif raw.dtype.kind == "O":
        first = next((x for x in raw.flat if bad(x)), _NONE)
    else:
        return
    if first is _NONE or (raw.size == 0):
        return
    shown = plain(first.item() if isinstance(first, np.generic) else first)
    raise InvalidInputError(f"{name} must hold numbers only, got {shown}"
                            + (f" among {plain(value)[:80]}" if raw.size > 1 else "")
                            + (" (write 1 or 0)" if isinstance(first, (bool, np.bool_)) else ""))


_NONE = object()


def ragged(name: str, value) -> None:
    """Refuse nested lists that are not rectangular (rows of different lengths, or a number beside a list),
    naming the first two entries that differ: ``[[0.3, 0.7], [0.5]]`` is not an array of one shape. Called
    where NumPy's conversion failed, so a valid array never pays for the walk; nesting deeper than NumPy's 64
    dimensions is named as such."""
    stack = [(value, name, 0)]
    while stack:
        node, where, depth = stack.pop()
        if not isinstance(node, (list, tuple)) or not node:
            continue
        if depth >= 64:
            raise InvalidInputError(f"{name} is nested deeper than 64 levels; expected an array of numbers")
        lengths = [len(x) if _is_row(x) else None for x in node]
        odd = next((i for i, n in enumerate(lengths) if n != lengths[0]), None)
        if odd is not None:
            def says(n):
                return "is a number" if n is None else f"has {n} entr{'y' if n == 1 else 'ies'}"
            raise InvalidInputError(f"{name} is ragged: {where}[0] {says(lengths[0])} but {where}[{odd}] "
                                    f"{says(lengths[odd])}; expected an array of one shape (every row of one length)")
        stack.extend((x, f"{where}[{i}]", depth + 1) for i, x in reversed(list(enumerate(node))) if _is_row(x))


def as_array(name: str, value, dtype=float) -> np.ndarray:
    """``numpy.asarray(value, dtype)``, the solvers' and flows' conversion, nothing checked where NumPy converts (the
    caller's own checks apply, and the arrays are the ones NumPy gives); where it fails, the failure is an
    InvalidInputError naming ``name`` (ragged rows by :func:`ragged`)."""
    try:
        return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        ragged(name, value)
        raise InvalidInputError(f"{name} must be an array of numbers, got {plain(value)[:80]}") from None


def _is_row(x) -> bool:
    """Whether ``x`` is a row of nested input (a list, a tuple or an array of at least one dimension)."""
    return isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _has_bool(value) -> bool:
    """Whether nested lists and tuples hold a bool (by the set of their entries' types: fast for long lists)."""
    types = set(map(type, value))
    if types & {bool, np.bool_}:
        return True
    return bool(types & {list, tuple}) and any(_has_bool(x) for x in value if isinstance(x, (list, tuple)))


def _flat(value):
    """The entries of nested lists and tuples, in order."""
    for x in value:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x
