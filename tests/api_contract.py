"""The public Python API's input contract, checked by rule: every public callable, every argument, a fixed set
of hostile values.

:func:`public_callables` enumerates what the API pages (``docs/api/*.md``) and ``grpo_theory/__init__.py``
document: each module's ``__all__`` (its public names defined there where it has none), classes' constructors
and public methods. :mod:`api_contract_calls` gives each one a valid call (taken from its docstring example or
written there) or the reason it is skipped. :func:`run_call` replaces one argument of a valid call with one of
:data:`HOSTILE` and classifies the outcome:

``ok``
    a result, with no NaN where the valid call had none (or where :data:`api_contract_calls.DOCUMENTED_NAN`
    says a NaN is the answer by design); :class:`~grpo_theory.errors.InvalidInputError` (or the package's
    too-large error) whose message names the argument or the value; or
    :class:`~grpo_theory.errors.NoStationaryPolicy` (a valid config with nothing to predict, e.g. ``{}``).
``traceback``
    any other exception from inside (``TypeError``, ``AttributeError``, ``OverflowError``, ...).
``hang``
    past :data:`CPU_S` seconds of CPU time (``ITIMER_PROF``), or a ``MemoryError``.
``silent``
    a result holding NaN where the valid call's had none; or, for a value that holds the valid value's numbers in
    another container or number type (:data:`SAME_NUMBERS`: a tuple, a Series, a generator, a longdouble, a
    Fraction, ...), a result that differs from the valid call's.
``accepted``
    a result for a value that is never valid (bytes, ``object()``, a complex number, a ragged list), outside
    the arguments :data:`api_contract_calls.ANY_VALUE` lists as taking any object.
``misleading``
    an InvalidInputError naming neither the argument nor the value.
``warning``
    a NumPy ``RuntimeWarning`` (overflow, invalid value, divide by zero) reaching the caller.

Run the full product: ``python tests/api_contract.py [--csv PATH] [--only SUBSTRING]``.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
import io
import math
import re
import resource
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: CPU seconds a call may take before it counts as a hang.
CPU_S = 5.0
#: Address space a call may add (bytes) before its allocation fails (a MemoryError counts as a hang).
MEMORY_BYTES = 3 * 2**30


from _cpu_limit import CpuLimit as _Hang  # noqa: E402  (the CPU-time alarm's exception)
from _cpu_limit import cpu_limit  # noqa: E402


def _never_valid():
    import pandas as pd

    return {
        "None": None,
        "'abc'": "abc",
        "b'x'": b"x",
        "nan": math.nan,
        "inf": math.inf,
        "-inf": -math.inf,
        "-1": -1,
        "0": 0,
        "1e308": 1e308,
        "10**30": 10**30,
        "True": True,
        "[]": [],
        "[[1, 2], [3]]": [[1, 2], [3]],
        "{}": {},
        "2-D array": None,                     # built from the valid value: see hostile_value
        "object()": object(),
        "DataFrame": pd.DataFrame({"a": [1.0, 2.0]}),
        "1+2j": 1 + 2j,
        "-0.0": -0.0,
        "5e-324": 5e-324,
    }


class _FloatRaises:
    """A number-like object whose ``__float__`` raises (a lazy value whose computation fails)."""

    def __float__(self):
        raise RuntimeError("cannot compute this value")

    def __index__(self):
        raise RuntimeError("cannot compute this value")

    def __repr__(self):
        return "<_FloatRaises>"


class _LenRaises:
    """A sequence-like object whose ``__len__`` and ``__iter__`` raise (a closed dataset handle)."""

    def __len__(self):
        raise RuntimeError("the handle is closed")

    def __iter__(self):
        raise RuntimeError("the handle is closed")

    def __getitem__(self, i):
        raise RuntimeError("the handle is closed")

    def __repr__(self):
        return "<_LenRaises>"


def _more_kinds():
    """Value kinds beyond :func:`_never_valid`: containers and number types a caller may hand over where a list or
    a float is meant. Those built from the valid value (``None`` here) are made by :func:`hostile_value`."""
    import fractions
    import decimal

    import pandas as pd

    return {
        "[[[1.0]], [2.0]]": [[[1.0]], [2.0]],          # ragged by depth
        "[0.5, [0.5]]": [0.5, [0.5]],                  # a number next to a list
        "[[0.5, nan], [0.5, 0.5]]": [[0.5, math.nan], [0.5, 0.5]],
        "NaN inside": None,                            # the valid list with its first number NaN
        "inf inside": None,                            # the valid list with its first number inf
        "0-d array": None,                             # np.array(valid) for a number, np.array(0.5) else
        "3-D array": np.ones((2, 2, 2)),
        "(0, 3) array": np.empty((0, 3)),
        "Series": None,                                # pd.Series(valid) for a list of numbers
        "Series, index 5..": None,                     # the same with the index 5, 6, ... (not 0, 1, ...)
        "DataFrame of valid": None,                    # pd.DataFrame(valid) for a list of numbers
        "generator": None,                             # (x for x in valid)
        "dict {i: x}": None,                           # dict(enumerate(valid))
        "tuple": None,                                 # tuple(valid)
        "bool array": np.array([True, False]),
        "complex array": None,                         # np.asarray(valid, complex): imaginary parts 0
        "object array": None,                          # np.asarray(valid, dtype=object)
        "str array": np.array(["0.5", "0.5"]),
        "datetime64 array": np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
        "float16": None,                               # valid as float16 (rounded)
        "longdouble": None,                            # valid as longdouble (the same numbers)
        "np.float32(0.5)": np.float32(0.5),
        "np.int64(3)": np.int64(3),
        "np.True_": np.True_,
        "10**400": 10**400,
        "-10**400": -(10**400),
        "Fraction": None,                              # Fraction(valid) for a float, Fraction(1, 3) else
        "Decimal": None,                               # Decimal(repr(valid)) for a float, Decimal('0.5') else
        "Decimal('nan')": decimal.Decimal("nan"),
        "Fraction(1, 10**400)": fractions.Fraction(1, 10**400),
        "'0.5'": "0.5",
        "' 1e3 '": " 1e3 ",
        "'nan'": "nan",
        "'inf'": "inf",
        "bytearray": bytearray(b"0.5"),
        "pd.NA": pd.NA,
        "__float__ raises": _FloatRaises(),
        "__len__ raises": _LenRaises(),
        "1e-310": 1e-310,
        "[-0.0, 1e-310]": [-0.0, 1e-310],
        "integral float": None,                        # float(valid) for an int (3 -> 3.0), 3.0 else
        "np.int32": None,                              # np.int32(valid) for an int, np.int32(3) else
        "np.matrix": None,                             # np.matrix(valid): always 2-D
        "torch tensor": None,                          # torch.tensor(valid)
        "array.array": None,                           # array.array('d', valid)
        "list of 0-d arrays": None,                    # [np.array(x) for x in valid]
        "list of 1-entry arrays": None,                # [np.array([x]) for x in valid]: shape (K, 1)
        "dict.values()": None,                         # {i: x}.values()
        "set": None,                                   # set(valid): unordered
        "masked array": None,                          # np.ma.masked_array(valid, mask=[True, False, ...])
        "IntEnum 3": None,                             # an IntEnum member whose value is 3
        "range(3)": range(3),
        "[None, 0.5]": [None, 0.5],
        "float subclass": None,                        # a float subclass holding the valid number
        "'a\\x00b'": "a\x00b",                         # a path with a NUL byte
        "'/proc/nope/x'": "/proc/nope/x",               # a path under a folder that cannot be made
        "'/dev/null/x'": "/dev/null/x",                 # a path under a file
        "300-character name": "x" * 300,               # a name longer than a file system takes
        "one entry short": None,                       # the valid 1-D array (or list) without its last entry
        "one entry more": None,                        # the valid 1-D array (or list) with its last entry twice
    }


#: The hostile values' labels, in a fixed order: the classic set first (the default run's sample draws from it).
CLASSIC = tuple(_never_valid())
HOSTILE = CLASSIC + tuple(_more_kinds())
#: Values that no argument of the package takes (outside ANY_VALUE): a result for one is ``accepted``.
NEVER_VALID = ("b'x'", "object()", "1+2j", "[[1, 2], [3]]", "[[[1.0]], [2.0]]", "[0.5, [0.5]]",
               "datetime64 array", "bytearray", "pd.NA", "__float__ raises", "__len__ raises", "[None, 0.5]")
#: Values that carry the valid value's numbers in another container or number type, where it is a number or a
#: list of numbers: a result must then equal the valid call's (else ``silent``), or the call refuses cleanly.
SAME_NUMBERS = ("0-d array", "Series", "Series, index 5..", "generator", "tuple", "object array", "longdouble",
                "Fraction", "Decimal", "integral float", "np.int32", "torch tensor", "array.array",
                "list of 0-d arrays", "float subclass")


def _numbers_of(valid):
    """``valid`` as a float array when it is a number or a (nested, regular) list or array of numbers, else None."""
    if isinstance(valid, (bool, np.bool_, str, bytes)) or valid is None:
        return None
    if isinstance(valid, (list, tuple, np.ndarray)) or isinstance(valid, (int, float, np.integer, np.floating)):
        try:
            arr = np.asarray(valid, dtype=float)
        except (TypeError, ValueError):
            return None
        if arr.dtype.kind == "f" and (isinstance(valid, np.ndarray) and valid.dtype.kind in "iuf"
                                      or not isinstance(valid, np.ndarray)) and _no_bools(valid):
            return arr
    return None


def _no_bools(valid) -> bool:
    if isinstance(valid, (list, tuple)):
        return all(_no_bools(v) for v in valid)
    return not isinstance(valid, (bool, np.bool_))


def _built(label: str, valid):
    """``(value, same)``: the hostile value ``label`` for an argument whose valid value is ``valid``, and whether it
    holds the same numbers as ``valid`` (:data:`SAME_NUMBERS`)."""
    import decimal
    import fractions

    import pandas as pd

    nums = _numbers_of(valid)
    if label in _never_valid():
        if label == "2-D array":
            if nums is not None and nums.ndim <= 1:
                return np.vstack([np.atleast_1d(nums)] * 2), False
            return np.ones((2, 2)), False
        return copy.deepcopy(_never_valid()[label]), False
    if label in ("NaN inside", "inf inside"):
        bad = math.nan if label == "NaN inside" else math.inf
        if nums is not None and nums.ndim >= 1 and nums.size:
            out = nums.copy()
            out.flat[0] = bad
            return (out if isinstance(valid, np.ndarray) else out.tolist()), False
        return [0.5, bad], False
    if label == "0-d array":
        return (np.array(valid), True) if nums is not None and nums.ndim == 0 else (np.array(0.5), False)
    one_d = nums is not None and nums.ndim == 1 and nums.size > 0
    listed = list(valid) if one_d else [0.5, 0.5]
    if label in ("Series", "Series, index 5.."):
        index = range(5, 5 + len(listed)) if label.endswith("..") else None
        return pd.Series(listed, index=index, dtype=float if not one_d else None), one_d
    if label == "DataFrame of valid":
        return pd.DataFrame({"x": listed}), False
    if label == "generator":
        return (x for x in listed), one_d
    if label == "dict {i: x}":
        return dict(enumerate(listed)), False
    if label == "tuple":
        return tuple(valid) if nums is not None and nums.ndim >= 1 else (0.5, 0.5), nums is not None and nums.ndim >= 1
    if label == "complex array":
        return np.asarray(nums if nums is not None else [0.5, 0.5], dtype=complex), False
    if label == "object array":
        if nums is not None and nums.ndim >= 1:
            return np.asarray(valid, dtype=object), True
        return np.array([0.5, 0.5], dtype=object), False
    if label in ("float16", "longdouble"):
        dtype = np.float16 if label == "float16" else np.longdouble
        if nums is None:
            return dtype(0.5), False
        return (dtype(nums) if nums.ndim == 0 else np.asarray(nums, dtype=dtype)), label == "longdouble"
    if label in ("Fraction", "Decimal"):
        if nums is not None and nums.ndim == 0 and math.isfinite(float(nums)) \
                and isinstance(valid, (int, float, np.integer, np.floating)):
            v = float(valid)
            return (fractions.Fraction(v) if label == "Fraction" else decimal.Decimal(repr(v))), True
        return (fractions.Fraction(1, 3) if label == "Fraction" else decimal.Decimal("0.5")), False
    if label in ("np.matrix", "torch tensor", "array.array", "list of 0-d arrays", "list of 1-entry arrays",
                 "dict.values()", "set", "masked array"):
        flat = [float(x) for x in nums.ravel()] if nums is not None and nums.ndim == 1 and nums.size else [0.5, 0.5]
        same = nums is not None and nums.ndim == 1 and nums.size > 0
        if label == "np.matrix":
            return np.matrix(flat), False
        if label == "torch tensor":
            import torch

            return torch.tensor(flat, dtype=torch.float64), same
        if label == "array.array":
            import array

            return array.array("d", flat), same
        if label == "list of 0-d arrays":
            return [np.array(x) for x in flat], same
        if label == "list of 1-entry arrays":
            return [np.array([x]) for x in flat], False
        if label == "dict.values()":
            return dict(enumerate(flat)).values(), False
        if label == "set":
            return set(flat), False
        return np.ma.masked_array(flat, mask=[True] + [False] * (len(flat) - 1)), False
    if label in ("one entry short", "one entry more"):
        if nums is not None and nums.ndim == 1 and nums.size >= 2:
            out = nums[:-1] if label == "one entry short" else np.append(nums, nums[-1])
            return (out if isinstance(valid, np.ndarray) else out.tolist()), False
        return [0.5], False
    if label == "IntEnum 3":
        import enum

        return enum.IntEnum("Three", {"THREE": 3}).THREE, False
    if label == "float subclass":
        class _Float(float):
            pass

        v = float(valid) if nums is not None and nums.ndim == 0 and not isinstance(valid, (int, np.integer)) else 0.5
        return _Float(v), nums is not None and nums.ndim == 0 and not isinstance(valid, (int, np.integer))
    if label in ("integral float", "np.int32"):
        whole = isinstance(valid, (int, np.integer)) and not isinstance(valid, (bool, np.bool_)) \
            and abs(valid) < 2**31
        kind = float if label == "integral float" else np.int32
        return kind(valid if whole else 3), whole
    return copy.deepcopy(_more_kinds()[label]), False


def hostile_value(label: str, valid):
    """The hostile value ``label`` for an argument whose valid value is ``valid`` (a fresh object each call).

    ``2-D array`` is the valid value stacked twice when it is a number or a 1-D sequence of numbers, else a 2x2
    array of ones; the kinds built from the valid value are described in :func:`_more_kinds`."""
    return _built(label, valid)[0]


#: Result fields that measure the run, not the answer (two runs of one call differ there).
RUN_FIELDS = ("seconds",)


def same_result(a, b, depth: int = 0) -> bool | None:
    """Whether two results agree (numbers to 1e-12 relative, NaN equal to NaN, a Series equal to an array of its
    values); None where they cannot be compared (figures, paths, objects without fields). Fields named in
    :data:`RUN_FIELDS` are not compared."""
    import dataclasses

    import pandas as pd

    if depth > 6:
        return None
    if isinstance(a, pd.DataFrame) or isinstance(b, pd.DataFrame):
        if not (isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame)):
            return False
        try:
            pd.testing.assert_frame_equal(a, b, rtol=1e-12, check_dtype=False)
        except AssertionError:
            return False
        return True
    if isinstance(a, pd.Series) or isinstance(b, pd.Series):
        return same_result(np.asarray(a), np.asarray(b), depth + 1)
    if isinstance(a, (bool, np.bool_, str, bytes)) or a is None:
        return a == b if isinstance(b, (bool, np.bool_, str, bytes)) or b is None else False
    if isinstance(a, np.ndarray) and a.dtype.kind not in "biufc" or isinstance(b, np.ndarray) and b.dtype.kind \
            not in "biufc":
        try:
            return same_result(np.asarray(a, dtype=float), np.asarray(b, dtype=float), depth + 1)
        except (TypeError, ValueError):
            return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))
    if isinstance(a, (int, float, np.integer, np.floating, np.ndarray)):
        try:
            x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        except (TypeError, ValueError):
            return False
        return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-12, atol=0, equal_nan=True))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return False
        a, b = ({f.name: getattr(x, f.name) for f in dataclasses.fields(x)} for x in (a, b))
    if isinstance(a, dict):
        if not isinstance(b, dict) or set(a) != set(b):
            return False
        got = [same_result(a[k], b[k], depth + 1) for k in a if k not in RUN_FIELDS]
    elif isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple, np.ndarray)) or len(a) != len(b):
            return False
        got = [same_result(x, y, depth + 1) for x, y in zip(a, b)]
    else:
        return None
    return False if False in got else (None if None in got and True not in got else True)


# ---------------------------------------------------------------- enumeration
def documented_modules() -> list[str]:
    """``grpo_theory`` and every module an API page documents (``::: module`` lines), in page order."""
    out = ["grpo_theory"]
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for line in page.read_text().splitlines():
            m = re.match(r"^::: (\S+)", line)
            if m and m.group(1) not in out:
                out.append(m.group(1))
    return out


def _public_names(mod) -> list[str]:
    names = getattr(mod, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n, v in vars(mod).items() if not n.startswith("_") and getattr(v, "__module__", None) == mod.__name__]


def public_callables() -> dict[str, object]:
    """``{key: callable}`` of the public API, ``key`` = ``module:qualname`` where the object is defined (a name
    exported by several modules appears once); methods as ``module:Class.method``."""
    out: dict[str, object] = {}
    for name in documented_modules():
        mod = importlib.import_module(name)
        for attr in _public_names(mod):
            obj = getattr(mod, attr)
            if inspect.ismodule(obj) or not callable(obj) or not getattr(obj, "__module__", "").startswith("grpo_theory"):
                continue
            out.setdefault(f"{obj.__module__}:{obj.__qualname__}", obj)
            if inspect.isclass(obj):
                for meth, raw in vars(obj).items():
                    if meth.startswith("_"):
                        continue
                    if isinstance(raw, (classmethod, staticmethod)) or inspect.isfunction(raw):
                        out.setdefault(f"{obj.__module__}:{obj.__qualname__}.{meth}", getattr(obj, meth))
    return out


def parameters(key: str, fn) -> list[str]:
    """The arguments of ``fn`` one can replace (not ``self``/``cls``, not ``*args``/``**kwargs``)."""
    target = fn
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [n for n, p in sig.parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n not in ("self", "cls")]


# ---------------------------------------------------------------- one call
def _has_nan(value, depth: int = 0) -> bool:
    """Whether ``value`` (a number, array, DataFrame, mapping, sequence or dataclass) holds a NaN."""
    import dataclasses

    import pandas as pd

    if depth > 6:
        return False
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, (complex, np.complexfloating)):
        return math.isnan(value.real) or math.isnan(value.imag)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (pd.DataFrame, pd.Series)):
        num = value.select_dtypes("number") if isinstance(value, pd.DataFrame) else value
        if isinstance(num, pd.Series) and num.dtype.kind not in "fc":
            return False
        return bool(np.isnan(np.asarray(num, dtype=float)).any()) if num.size else False
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in value[:1000])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_nan(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


@contextlib.contextmanager
def _limits(cpu_s: float):
    """At most ``cpu_s`` CPU seconds (then :class:`_Hang`) and :data:`MEMORY_BYTES` more address space."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        cap = used + MEMORY_BYTES
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (OSError, ValueError):
        pass
    try:
        with cpu_limit(cpu_s):
            yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def invoke(key: str, fn, kwargs: dict):
    """Call ``fn`` with ``kwargs``; a method's instance is ``kwargs['self']``."""
    kwargs = dict(kwargs)
    if "self" in kwargs:
        inst = kwargs.pop("self")
        return getattr(inst, key.rsplit(".", 1)[1])(**kwargs)
    return fn(**kwargs)


def _named(message: str, arg: str, label: str, value, aliases=()) -> bool:
    """Whether ``message`` names the argument ``arg`` (or one of its ``aliases``) or shows ``value``."""
    from grpo_theory._validate import plain

    low = message.lower()
    for name in (arg, arg.replace("_", " "), *aliases):
        if re.search(r"(?<![A-Za-z0-9_])" + re.escape(name.lower()) + r"(?![A-Za-z0-9])", low):
            return True
    if isinstance(value, (list, dict)) and not value:
        return False                               # [] and {}: only the argument's name identifies them
    shown = {repr(value), str(value)}
    with contextlib.suppress(Exception):
        shown.add(plain(value))
    return any(re.search(r"(?<![\w.])" + re.escape(s) + r"(?!\w)", message) for s in shown if s)


_NOTHING = object()


def run_call(key: str, fn, kwargs: dict, *, arg: str | None = None, label: str | None = None,
             valid_nan: bool = False, aliases=(), any_value: bool = False, cpu_s: float = CPU_S,
             expect=_NOTHING) -> dict:
    """Run one call and classify it (module docstring). Returns ``{'cls', 'detail', 'nan', 'out'}``; with
    ``expect`` (the valid call's result, for a value holding the valid numbers), a result that differs from it is
    ``silent``."""
    from grpo_theory.errors import ExactEvaluationTooLarge, InvalidInputError, NoStationaryPolicy

    value = kwargs.get(arg) if arg else None
    res = {"cls": "ok", "detail": "", "nan": False, "out": None}
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(sink), \
                contextlib.redirect_stderr(sink), _limits(cpu_s):
            warnings.simplefilter("always")
            np_err = np.seterr(divide="warn", over="warn", invalid="warn", under="ignore")   # NumPy's defaults
            try:
                out = invoke(key, fn, kwargs)
            finally:
                np.seterr(**np_err)
        res["nan"], res["out"] = _has_nan(out), out
        numpy_warns = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        if numpy_warns:
            w = numpy_warns[0]
            res.update(cls="warning", detail=f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})")
        elif res["nan"] and not valid_nan:
            res.update(cls="silent", detail="NaN in the result")
        elif expect is not _NOTHING and same_result(expect, out) is False:
            res.update(cls="silent", detail=f"differs from the valid call's result: {_short(out)} (valid: "
                                            f"{_short(expect)})")
        elif arg is not None and label in NEVER_VALID and not any_value:
            res.update(cls="accepted", detail=f"returned {type(out).__name__}")
    except _Hang:
        res.update(cls="hang", detail=f"over {cpu_s:g} s of CPU")
    except MemoryError:
        res.update(cls="hang", detail="MemoryError")
    except NoStationaryPolicy as exc:               # a valid input with nothing to predict: an answer
        res["detail"] = " ".join(str(exc).split())[:300]
    except (InvalidInputError, ExactEvaluationTooLarge) as exc:
        msg = " ".join(str(exc).split())
        res["detail"] = msg[:300]
        if arg is not None and not _named(msg, arg, label, value, aliases):
            res["cls"] = "misleading"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        import traceback

        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if "grpo_theory" in f.filename),
                     f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?")
        res.update(cls="traceback", detail=f"{type(exc).__name__} at {where}: {' '.join(str(exc).split())[:200]}")
    return res


def _short(value) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - any object
        text = type(value).__name__
    return " ".join(text.split())[:100]


# ---------------------------------------------------------------- the product
def cases(rng_seed: int | None = None, per_arg: int | None = None, keys=None):
    """``(key, arg, label)`` triples: every argument of every covered callable with every hostile value, or
    ``per_arg`` of them chosen by ``numpy.random.default_rng(rng_seed)``."""
    import api_contract_calls as calls

    fns = public_callables()
    rng = np.random.default_rng(rng_seed)
    out = []
    for key in sorted(calls.VALID):
        if keys is not None and key not in keys:
            continue
        for arg in parameters(key, fns[key]):
            labels = list(HOSTILE)
            if per_arg is not None:
                labels = [labels[i] for i in sorted(rng.choice(len(labels), per_arg, replace=False))]
            out.extend((key, arg, label) for label in labels)
    return out


_VALID_NAN: dict = {}
_VALID_OUT: dict = {}


def check(key: str, arg: str, label: str, fns=None) -> dict:
    """Run the case ``(key, arg, label)``: the valid call once (cached) to learn whether it has NaN, then the call
    with ``arg`` replaced."""
    import api_contract_calls as calls

    fns = fns or public_callables()
    fn = fns[key]
    if key not in _VALID_NAN:
        base = run_call(key, fn, calls.VALID[key](), cpu_s=60, valid_nan=True)
        if base["cls"] != "ok" or base["detail"]:
            raise AssertionError(f"the valid call of {key} fails: {base}")
        _VALID_NAN[key], _VALID_OUT[key] = base["nan"], base["out"]
    kwargs = calls.VALID[key]()
    valid = kwargs.get(arg, inspect.signature(fn).parameters[arg].default)
    kwargs[arg], same = _built(label, valid)
    expect = _VALID_OUT[key] if same and key not in calls.NOT_REPEATABLE else _NOTHING
    return run_call(key, fn, kwargs, arg=arg, label=label,
                    valid_nan=_VALID_NAN[key] or (key, arg) in calls.DOCUMENTED_NAN,
                    aliases=calls.ALIASES.get((key, arg), ()), any_value=(key, arg) in calls.ANY_VALUE
                    or arg in calls.ANY_VALUE_ARGS, expect=expect)


def main(argv=None) -> int:
    import argparse
    import csv
    import collections
    import time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=None)
    ap.add_argument("--only", default=None, help="keys containing this text")
    ap.add_argument("--per-arg", type=int, default=None)
    ap.add_argument("--keys", default=None, help="a file of keys (module:qualname), one a line: only these")
    ap.add_argument("--labels", default=None, help="only these hostile values (labels joined by '|')")
    a = ap.parse_args(argv)
    import os
    import tempfile

    fns = public_callables()
    os.chdir(tempfile.mkdtemp(prefix="api_contract_"))     # a call given out="abc" writes there, not here
    keys = set(Path(a.keys).read_text().split()) if a.keys else None
    todo = [c for c in cases(0, a.per_arg, keys) if (a.only is None or a.only in c[0])
            and (a.labels is None or c[2] in a.labels.split("|"))]
    rows, t0 = [], time.time()
    counts = collections.Counter()
    for i, (key, arg, label) in enumerate(todo):
        t = time.process_time()
        try:
            res = check(key, arg, label, fns)
        except AssertionError as exc:
            res = {"cls": "valid-fails", "detail": str(exc)[:300]}
        counts[res["cls"]] += 1
        rows.append(dict(key=key, arg=arg, value=label, cls=res["cls"], cpu_s=round(time.process_time() - t, 3),
                         detail=res["detail"]))
        if res["cls"] not in ("ok",):
            print(f"{res['cls']:10s} {key} {arg}={label}: {res['detail'][:160]}", flush=True)
    print(f"{len(todo)} calls, {time.time() - t0:.0f} s: {dict(counts)}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
