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
    a result holding NaN where the valid call's had none.
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


#: The hostile values' labels, in a fixed order.
HOSTILE = tuple(_never_valid())
#: Values that no argument of the package takes (outside ANY_VALUE): a result for one is ``accepted``.
NEVER_VALID = ("b'x'", "object()", "1+2j", "[[1, 2], [3]]")


def hostile_value(label: str, valid):
    """The hostile value ``label`` for an argument whose valid value is ``valid`` (a fresh object each call).

    ``2-D array`` is the valid value stacked twice when it is a number or a 1-D sequence of numbers, else a 2x2
    array of ones."""
    if label == "2-D array":
        try:
            arr = np.asarray(valid, dtype=float)
        except (TypeError, ValueError):
            arr = None
        if arr is not None and arr.ndim <= 1:
            return np.vstack([np.atleast_1d(arr)] * 2)
        return np.ones((2, 2))
    return copy.deepcopy(_never_valid()[label])


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


def run_call(key: str, fn, kwargs: dict, *, arg: str | None = None, label: str | None = None,
             valid_nan: bool = False, aliases=(), any_value: bool = False, cpu_s: float = CPU_S) -> dict:
    """Run one call and classify it (module docstring). Returns ``{'cls', 'detail', 'nan'}``."""
    from grpo_theory.errors import ExactEvaluationTooLarge, InvalidInputError, NoStationaryPolicy

    value = kwargs.get(arg) if arg else None
    res = {"cls": "ok", "detail": "", "nan": False}
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
        res["nan"] = _has_nan(out)
        numpy_warns = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        if numpy_warns:
            w = numpy_warns[0]
            res.update(cls="warning", detail=f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})")
        elif res["nan"] and not valid_nan:
            res.update(cls="silent", detail="NaN in the result")
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
        _VALID_NAN[key] = base["nan"]
    kwargs = calls.VALID[key]()
    valid = kwargs.get(arg, inspect.signature(fn).parameters[arg].default)
    kwargs[arg] = hostile_value(label, valid)
    return run_call(key, fn, kwargs, arg=arg, label=label,
                    valid_nan=_VALID_NAN[key] or (key, arg) in calls.DOCUMENTED_NAN,
                    aliases=calls.ALIASES.get((key, arg), ()), any_value=(key, arg) in calls.ANY_VALUE
                    or arg in calls.ANY_VALUE_ARGS)


def main(argv=None) -> int:
    import argparse
    import csv
    import collections
    import time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=None)
    ap.add_argument("--only", default=None, help="keys containing this text")
    ap.add_argument("--per-arg", type=int, default=None)
    a = ap.parse_args(argv)
    import os
    import tempfile

    fns = public_callables()
    os.chdir(tempfile.mkdtemp(prefix="api_contract_"))     # a call given out="abc" writes there, not here
    todo = [c for c in cases(0, a.per_arg) if a.only is None or a.only in c[0]]
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
