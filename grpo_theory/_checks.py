"""Argument rules for the public entry points: ``@checked(name=rule, ...)`` checks each named argument first.

A rule is a function ``rule(name, value)`` that returns nothing for a valid value and raises
:class:`~grpo_theory.errors.InvalidInputError` naming ``name`` and the value otherwise. Rules refuse; the one
thing a rule may change is a number's type, never its value: :func:`num` passes a whole number given as a float
(``n=3.0``, ``2e4``) to an integer argument as that int, and an ``np.longdouble`` as the double it holds (SciPy
and NumPy's linear algebra take neither), by returning :class:`Replace`. Every other argument reaches the
function unchanged, so a valid call computes exactly what it computed without the rules.
The factories below build the rules the package uses (numbers, arrays, text, choices, instances of a class);
:data:`OBJECTIVE` and :data:`QUESTION` are the rules for an objective and a question. Checks that relate two
arguments (:func:`levels_and_weights`, :func:`at_most`, :func:`index_below`, ...) are called by the function
itself, first.

Examples
--------
>>> @checked(beta=num(0, low_open=True), n=num(1, 1000, integer=True))
... def f(beta, n=10):
...     return beta * n
>>> f(0.5)
5.0
>>> try:
...     f(0.5, n=2.5)
... except InvalidInputError as exc:
...     print(exc)
n must be an integer in [1, 1000], got 2.5
"""

from __future__ import annotations

import decimal
import fractions
import functools
import inspect
import sys
from collections.abc import Mapping

import numpy as np

from ._validate import as_floats, float_array, plain, ragged, unwrap_scalar
from .errors import InvalidInputError

__all__ = ["checked", "Replace", "passed_to", "num", "arr", "span", "numbers", "ndarray", "indices", "whole", "text",
           "texts", "one_of", "instance", "registered", "register_class", "is_instance", "dataclass_fields", "mapping",
           "dataframe", "items", "listed", "flag", "function", "optional", "seed_or_generator", "index_below",
           "levels_and_weights", "broadcasts_to", "has_columns", "has_keys", "at_most", "same_length", "flags",
           "on_failure", "from_outside", "built_outside", "record_fields", "checked_record", "point_array", "row_indices", "OBJECTIVE", "QUESTION", "MAX_STEPS", "COUNT", "POSITIVE_COUNT", "SEED"]

#: Largest number of steps, grid points, samples or starts an entry point takes: each costs at least a
#: microsecond and most tens of them: 10^7 of them take minutes, more would take hours.
MAX_STEPS = 10**7


def checked(**rules):
    """Decorator: check the named arguments with their rules before the call (the module docstring).

    An argument not given (its default used) is not checked; ``None`` passes only a rule that allows it. The
    wrapper costs a microsecond or two a call (a loop over the rules), so the solvers' inner calls may go through
    it."""
    def wrap(fn):
        sig = inspect.signature(fn)
        names = list(sig.parameters)
        unknown = sorted(set(rules) - set(names))
        if unknown:
            raise TypeError(f"@checked names {unknown}, which {fn.__qualname__} does not take")
        where = [(name, names.index(name), rule) for name, rule in rules.items()
                 if sig.parameters[name].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                  inspect.Parameter.POSITIONAL_ONLY)]
        keyword_only = [(name, rule) for name, rule in rules.items()
                        if sig.parameters[name].kind == inspect.Parameter.KEYWORD_ONLY]
        var_keyword = [(name, rule) for name, rule in rules.items()
                       if sig.parameters[name].kind == inspect.Parameter.VAR_KEYWORD]

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            for name, index, rule in where:
                if index < len(args):
                    new = rule(name, args[index])
                    if new.__class__ is Replace:
                        args = (*args[:index], new.value, *args[index + 1:])
                elif name in kwargs:
                    new = rule(name, kwargs[name])
                    if new.__class__ is Replace:
                        kwargs[name] = new.value
            for name, rule in keyword_only:
                if name in kwargs:
                    new = rule(name, kwargs[name])
                    if new.__class__ is Replace:
                        kwargs[name] = new.value
            for name, rule in var_keyword:                   # the options a **kw passes on, checked as a whole
                rule(name, {k: v for k, v in kwargs.items() if k not in sig.parameters})
            return fn(*args, **kwargs)
        inner.__signature__ = sig
        return inner
    return wrap


def passed_to(target, *given):
    """The rule of a ``**kw`` that a function passes on to ``target``: each option must be an optional keyword
    ``target`` takes, other than those ``given`` by the function itself (else Python's TypeError would name
    ``target``, which the caller did not call)."""
    takes = [n for n, p in inspect.signature(target).parameters.items() if n not in given and p.default is not p.empty
             and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]

    def check(name, value):
        unknown = [k for k in value if k not in takes]
        if unknown:
            raise InvalidInputError(f"{unknown[0]!r} is not an option here: the options passed on to "
                                    f"{target.__name__} are {', '.join(takes)}")
    return check


class Replace:
    """What a rule returns to pass the function ``value`` instead of the argument given (:func:`num` only: the
    same number in another type)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def optional(rule):
    """``rule``, or None."""
    def check(name, value):
        if value is not None:
            return rule(name, value)
    return check


def num(low=None, high=None, *, low_open=False, high_open=False, integer=False, finite=True, none=False):
    """A single number (not a bool, text or an array), finite unless ``finite=False`` (then NaN only is
    refused), in ``[low, high]`` (ends open when asked), a whole number where ``integer``; None where ``none``.

    Where ``integer``, a whole number given as a float (``3.0``, ``np.float16(3)``; at most ``2**53``) reaches the
    function as the int it is; an ``np.longdouble`` reaches it as the double it holds (one a double cannot hold is
    refused); a 0-d array, a ``Fraction`` and a ``Decimal`` reach it as the number they hold
    (:func:`~grpo_theory._validate.unwrap_scalar`, as ``Objective`` reads them). Any other value reaches it
    unchanged."""
    def check(name, value):
        if value is None and none:
            return
        given, value = value, unwrap_scalar(value)
        if isinstance(value, (decimal.Decimal, fractions.Fraction)):     # NaN, or no double holds it
            raise InvalidInputError(f"{name} = {_shown(value)} is not a number a double holds (NaN, or beyond "
                                    "1.8e308 or below 5e-324 in size); the computation is in double precision")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            want = "an integer" if integer else "a number"
            raise InvalidInputError(f"{name} must be {want}, got {_shown(value)}")
        float_array(name, value, low=low, high=high, low_open=low_open, high_open=high_open, integer=integer,
                    finite=finite)
        if integer and isinstance(value, (float, np.floating)) and abs(float(value)) <= 2**53:
            return Replace(int(value))                   # range(3.0), np.zeros(3.0) and rng.choice(.., 3.0) fail
        if isinstance(value, np.longdouble) and type(value) is not np.float64:
            return Replace(float(value))                 # SciPy, linalg and NumPy's special functions refuse it
        if value is not given:
            return Replace(value)
    return check


def arr(low=None, high=None, *, low_open=False, high_open=False, integer=False, finite=True, ndim=None,
        nonempty=True, none=False, increasing=False, distinct=False):
    """An array of numbers (a number where ``ndim`` allows 0): every entry checked as :func:`num` does, with
    ``ndim`` dimensions (an int or a tuple of allowed ones), at least one entry unless ``nonempty=False``,
    strictly increasing entries where ``increasing``, and no value twice where ``distinct``."""
    def check(name, value):
        if value is None and none:
            return
        if isinstance(value, Mapping) or not (np.isscalar(value) or hasattr(value, "__len__")
                                               or isinstance(value, np.ndarray)):
            raise InvalidInputError(f"{name} must be an array of numbers, got {_shown(value)}")
        a = float_array(name, value, low=low, high=high, low_open=low_open, high_open=high_open,
                        integer=integer, finite=finite)
        _shape(name, value, a, ndim, nonempty)
        if increasing and np.any(~(a.ravel()[1:] > a.ravel()[:-1])):        # no difference taken: it may overflow
            i = int(np.flatnonzero(~(a.ravel()[1:] > a.ravel()[:-1]))[0])
            raise InvalidInputError(f"{name} must be strictly increasing, got {name}[{i}] = {a.ravel()[i]:g} then "
                                    f"{name}[{i + 1}] = {a.ravel()[i + 1]:g}: {_shown(value)}")
        values, counts = np.unique(a, return_counts=True) if distinct else (a, np.ones(1))
        if np.any(counts > 1):
            twice, n = float(values[counts > 1][0]), int(counts[counts > 1][0])
            times = "twice" if n == 2 else f"{n} times"
            raise InvalidInputError(f"{name} must be distinct values, got {twice:g} {times}: {_shown(value)}; give "
                                    "each value once")
    return check


def span(low=None, high=None, *, low_open=False, high_open=False, equal=False, none=False, why: str = ""):
    """A range ``(lo, hi)``: exactly two numbers, each in ``[low, high]`` (ends open when asked), with
    ``lo < hi`` (``lo <= hi`` where ``equal``: a range of one point); a reversed or empty range is refused, naming
    both ends; None where ``none``. ``why`` (appended to the message of an end out of bounds) says why the bounds
    are what they are."""
    ends = arr(low, high, low_open=low_open, high_open=high_open, ndim=1)

    def check(name, value):
        if value is None and none:
            return
        try:
            ends(name, value)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{exc}{why}") from None
        a = np.asarray(value, dtype=float)
        if a.size != 2:
            raise InvalidInputError(f"{name} must be a range (lo, hi) of two numbers, got {a.size}: {_shown(value)}")
        if not (a[0] <= a[1] if equal else a[0] < a[1]):
            what = "reversed" if a[0] > a[1] else "empty"
            raise InvalidInputError(f"{name} must be a range (lo, hi) with lo {'<=' if equal else '<'} hi, got "
                                    f"{_shown(value)} ({what}: "
                                    f"lo = {plain(float(a[0]))}, hi = {plain(float(a[1]))})")
    return check


def _shape(name, value, a: np.ndarray, ndim, nonempty: bool) -> None:
    """Refuse an array ``a`` (``value`` as given) of another number of dimensions than ``ndim`` (an int or a
    tuple of them; None: any), or empty where ``nonempty``."""
    if ndim is not None and a.ndim not in ((ndim,) if isinstance(ndim, int) else ndim):
        want = " or ".join(f"{d}-D" for d in ((ndim,) if isinstance(ndim, int) else ndim))
        raise InvalidInputError(f"{name} must be {want} (got shape {a.shape}): {_shown(value)}")
    if nonempty and a.size == 0:
        raise InvalidInputError(f"{name} is empty; expected at least one number")


def flags(*, ndim=None, none=False):
    """An array of flags: booleans, or integers 0 and 1 (a mask such as a hold-out split), ``ndim`` dimensions."""
    def check(name, value):
        if value is None and none:
            return
        try:
            a = np.asarray(value)
        except (TypeError, ValueError):
            ragged(name, value)
            a = np.asarray(None)
        if a.dtype.kind not in "biu" or (a.dtype.kind != "b" and np.any((a != 0) & (a != 1))):
            raise InvalidInputError(f"{name} must be flags (True/False, or 1/0), got {_shown(value)}")
        _shape(name, value, a, ndim, nonempty=False)
    return check


def numbers(*, ndim=None, none=False, nonempty=False, finite=False):
    """An array of numbers of ``ndim`` dimensions, any values (NaN and infinities included) unless ``finite``: the
    type check of :func:`arr` for arguments the solvers also pass mid-computation (a trial point may hold NaN).
    The function computes on the value given, so a Decimal, a Fraction and an object array are refused."""
    def check(name, value):
        if value is None and none:
            return
        if isinstance(value, (Mapping, decimal.Decimal, fractions.Fraction)):
            raise InvalidInputError(f"{name} must be an array of numbers, got {_shown(value)}")
        a = as_floats(name, value)
        if isinstance(value, np.ndarray) and value.dtype.kind == "O":    # the function computes on the array given
            raise InvalidInputError(f"{name} must be an array of numbers with a numeric dtype, got dtype object "
                                    f"({_shown(value)}); convert it with np.asarray({name}, dtype=float)")
        if finite and not np.isfinite(a).all():
            first = a[~np.isfinite(a)].ravel()[0] if a.ndim else a
            raise InvalidInputError(f"{name} must hold finite numbers, got {plain(float(first))}"
                                    + (f" among {_shown(value)}" if a.size > 1 else ""))
        _shape(name, value, a, ndim, nonempty)
    return check


def indices(name, value):
    """An array of integers ``>= 0`` (indices), checked without a float copy: a large integer array passes in
    one pass over it."""
    if isinstance(value, (str, bytes, bytearray, memoryview, bool, np.bool_, Mapping)) or value is None:
        raise InvalidInputError(f"{name} must be an array of integers >= 0, got {_shown(value)}")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        ragged(name, value)
        raise InvalidInputError(f"{name} must be an array of integers >= 0, got {_shown(value)}") from None
    if a.dtype.kind not in "iu" or (a.size and a.min() < 0):
        raise InvalidInputError(f"{name} must be an array of integers >= 0, got {_shown(value)}")


def text(*, none=False, nonempty=False):
    """A string."""
    def check(name, value):
        if value is None and none:
            return
        if not isinstance(value, str):
            raise InvalidInputError(f"{name} must be text, got {_shown(value)}")
        if nonempty and not value.strip():
            raise InvalidInputError(f"{name} is empty; expected text")
    return check


def texts(*, nonempty=False, choices=None):
    """A list, tuple, set or array of strings, each one of ``choices`` where given."""
    def check(name, value):
        if not isinstance(value, (list, tuple, set, frozenset, np.ndarray)) or \
                (isinstance(value, np.ndarray) and value.ndim != 1) or not all(isinstance(t, str) for t in value):
            raise InvalidInputError(f"{name} must be a list of strings, got {_shown(value)}")
        if nonempty and len(value) == 0:
            raise InvalidInputError(f"{name} is empty; expected at least one string")
        if choices is not None and (odd := [str(t) for t in value if t not in choices]):
            raise InvalidInputError(f"{name} must hold only {', '.join(map(repr, choices))}; got {odd[0]!r}")
    return check


def one_of(*choices, none=False):
    """One of ``choices`` (compared with ``==``, after a type check: ``True`` is not ``1``)."""
    def check(name, value):
        if value is None and none:
            return
        try:
            ok = any(type(value) is type(c) and value == c for c in choices)
        except Exception:                               # noqa: BLE001 - an object whose == fails is not a choice
            ok = False
        if not ok:
            raise InvalidInputError(f"{name} must be one of {', '.join(map(plain, choices))}, got {_shown(value)}")
    return check


def instance(cls, what: str, hint: str = "", *, none=False):
    """An instance of ``cls`` (``what`` names it in the message; ``hint`` says how to build one)."""
    def check(name, value):
        if value is None and none:
            return
        if not isinstance(value, cls):
            raise InvalidInputError(f"{name} must be {what}, got {_shown(value)}{hint}")
    return check


_CLASSES: dict = {}


def register_class(cls):
    """Make ``cls`` known to :func:`registered` by its name (the module that defines it calls this, so the
    rules need not import a layer above this one)."""
    _CLASSES[cls.__name__] = cls
    return cls


def is_instance(value, class_name: str) -> bool:
    """Whether ``value`` is an instance of the class registered as ``class_name`` (:func:`register_class`)."""
    return isinstance(value, _CLASSES[class_name])


def registered(class_name: str, hint: str = "", *, none=False):
    """An instance of the class registered as ``class_name`` (:func:`register_class`)."""
    article = "an" if class_name[0] in "AEIOU" else "a"

    def check(name, value):
        if value is None and none:
            return
        if not isinstance(value, _CLASSES[class_name]):      # inline: a hot check (every solver call)
            raise InvalidInputError(f"{name} must be {article} {class_name}, got {_shown(value)}{hint}")
    return check


#: An objective (:class:`grpo_theory.problem.Objective`) and a question (:class:`grpo_theory.problem.Question`).
OBJECTIVE = registered("Objective", "; build one with Objective(beta=...)")
QUESTION = registered("Question", "; build one with Question(pi_ref, rewards=...)")


def dataclass_fields(obj, what: str, *, nonempty=()) -> None:
    """Refuse a field of the dataclass instance ``obj`` (``what`` names it) whose value does not have the field's
    declared type: None where the type does not allow it; a ``Callable`` field that is not callable (a
    ``"module:function"`` name where the type allows ``str``); a ``bool`` field that is not a bool; a ``str``
    field that is not text, or is empty where named in ``nonempty``; a ``Mapping[str, tuple[str, ...]]`` field
    that is not one."""
    import dataclasses

    for f in dataclasses.fields(obj):
        kinds, value = {k.strip() for k in str(f.type).split("|")}, getattr(obj, f.name)
        if f.name in nonempty and isinstance(value, str) and not value.strip():
            raise InvalidInputError(f"{what}: {f.name} is empty ({value!r}); expected text")
        if value is None:
            if "None" not in kinds and "object" not in kinds:
                raise InvalidInputError(f"{what}: {f.name} is required, got None")
        elif "Callable" in kinds:
            if isinstance(value, str) and "str" in kinds:
                module, colon, function = value.partition(":")
                if not (colon and module and function):
                    raise InvalidInputError(f"{what}: {f.name} = {value!r} is not a \"module:function\" name")
            elif not callable(value):
                want = "a function or a \"module:function\" name" if "str" in kinds else "a function"
                raise InvalidInputError(f"{what}: {f.name} must be {want}, got {_shown(value)}")
        elif kinds == {"bool"} and not isinstance(value, bool):
            raise InvalidInputError(f"{what}: {f.name} must be True or False, got {_shown(value)}")
        elif "str" in kinds and not isinstance(value, str):
            raise InvalidInputError(f"{what}: {f.name} must be text, got {_shown(value)}")
        elif kinds == {"Mapping[str, tuple[str, ...]]"} and not (isinstance(value, Mapping) and all(
                isinstance(k, str) and isinstance(v, tuple) and all(isinstance(t, str) for t in v)
                for k, v in value.items())):
            raise InvalidInputError(f"{what}: {f.name} must map text to tuples of text, e.g. "
                                    f"{{'trl': ('GRPOTrainer',)}}, got {_shown(value)}")


def items(cls, what: str, *, sequence: bool = False):
    """An iterable of instances of ``cls``: a list or tuple is checked entry by entry; a generator passes (the
    function reads it once with :func:`listed`) unless ``sequence`` (the function walks it more than once). Text,
    bytes, mappings, arrays and pandas objects are refused: an entry of those is a character, a byte, a key or a
    number, never a ``cls``."""
    def check(name, value):
        if isinstance(value, (str, bytes, bytearray, memoryview, Mapping, np.ndarray)) \
                or not hasattr(value, "__iter__") or type(value).__module__.split(".")[0] == "pandas":
            raise InvalidInputError(f"{name} must be a list of {what}, got {_shown(value)}")
        if sequence and not isinstance(value, (list, tuple)):
            raise InvalidInputError(f"{name} must be a list or tuple of {what}, got {_shown(value)}: it is read more "
                                    f"than once (give list({name}))")
        if isinstance(value, (list, tuple)):
            bad = next((v for v in value if not isinstance(v, cls)), _NO_ITEM)
            if bad is not _NO_ITEM:
                raise InvalidInputError(f"{name} must be a list of {what}; one entry is {_shown(bad)}")
    return check


def listed(name: str, value, cls, what: str) -> list:
    """``value`` (what :func:`items` passed: a list, a tuple or a generator) as a list, every entry an instance of
    ``cls``: a generator is read here, once, and an error raised while reading it is named."""
    if not isinstance(value, (list, tuple)):
        try:
            value = list(value)
        except Exception as exc:                         # noqa: BLE001 - the iterable's own failure, named
            raise InvalidInputError(f"{name} could not be read as a list of {what}: {type(value).__name__} raised "
                                    f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None
    items(cls, what)(name, value)
    return list(value)


_NO_ITEM = object()


def dataframe(name, value):
    """A pandas DataFrame (pandas is not imported for the check: a value that is one has imported it)."""
    import sys

    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(value, pd.DataFrame):
        raise InvalidInputError(f"{name} must be a pandas DataFrame, got {_shown(value)}")


def mapping(*, none=False):
    """A mapping (a dict)."""
    return instance(Mapping, "a mapping (a dict)", none=none)


def flag(name, value):
    """A bool (``True``/``False``; NumPy's bool too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be True or False, got {_shown(value)}")


def function(*, none=False):
    """A callable."""
    def check(name, value):
        if value is None and none:
            return
        if not callable(value):
            raise InvalidInputError(f"{name} must be a function, got {_shown(value)}")
    return check


def whole(low=None, high=None, *, none=False):
    """An integer of Python's or NumPy's integer types (not a float, not a bool), in ``[low, high]``: for an
    index or a seed, which a float cannot stand for."""
    def check(name, value):
        if value is None and none:
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise InvalidInputError(f"{name} must be an integer, got {_shown(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            rng = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
            raise InvalidInputError(f"{name} must be an integer in {rng}, got {_shown(value)}")
    return check


def index_below(name: str, value, n: int, what: str = "entries") -> None:
    """Refuse an index ``value`` that is not an integer in ``[0, n)`` (``n`` ``what`` there are)."""
    whole(0)(name, value)
    if value >= n:
        raise InvalidInputError(f"{name} = {value} is out of range: there are {n} {what} (0 to {n - 1})")


def levels_and_weights(v, log_w) -> None:
    """Refuse reward levels ``v`` and level log-weights ``log_w`` that do not go together: ``v`` empty, or the
    last axis of ``log_w`` not one entry per level."""
    nv, shape = _size(v), tuple(np.shape(log_w))
    if nv == 0:
        raise InvalidInputError("v is empty; expected the reward levels")
    if not shape or shape[-1] != nv:
        raise InvalidInputError(f"log_w must have one entry per reward level on its last axis (v has {nv} levels), "
                                f"got shape {shape}")


def broadcasts_to(name: str, value, shape: tuple, what: str) -> None:
    """Refuse a ``value`` whose shape does not broadcast to ``shape`` (the shape of the argument ``what``); None
    passes."""
    if value is None:
        return
    try:
        ok = np.broadcast_shapes(np.shape(value), shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise InvalidInputError(f"{name} of shape {np.shape(value)} does not broadcast to the shape of {what}, {shape}")


def at_most(name: str, value, other_name: str, other) -> None:
    """Refuse arrays that do not broadcast together, or an entry of ``value`` above ``other``'s (a count of
    successes above its count of trials)."""
    try:
        a, b = np.broadcast_arrays(np.asarray(value, dtype=float), np.asarray(other, dtype=float))
    except ValueError:
        raise InvalidInputError(f"{name} of shape {np.shape(value)} and {other_name} of shape {np.shape(other)} do "
                                "not broadcast together") from None
    if np.any(a > b):
        i = np.flatnonzero((a > b).ravel())[0]
        x, y = (int(v) if float(v).is_integer() else v for v in (a.ravel()[i], b.ravel()[i]))    # a count as 6
        raise InvalidInputError(f"{name} must be at most {other_name}, got {name} = {plain(x)} > "
                                f"{other_name} = {plain(y)}" + (f" (entry {i})" if a.size > 1 else ""))


def _size(a) -> int:
    """The number of entries of an array-like (``np.size`` reads a torch tensor's ``size`` method instead)."""
    return a.size if isinstance(a, np.ndarray) else int(np.asarray(a).size)


def on_failure(**checks) -> None:
    """For a hot path that checks nothing up front: called after its computation raised, it runs ``checks``
    (``name=(rule, value)``), so a bad argument is named as its rule names it; where every argument passes, the
    caller re-raises the original error (a bug, not bad input). Valid calls pay nothing."""
    for name, (rule, value) in checks.items():
        rule(name, value)


def from_outside(depth: int = 1) -> bool:
    """Whether the frame ``depth`` levels above the caller of this function runs code outside the package
    (``depth=1``: the caller's caller, the one that called the function asking); the argument rules' wrapper
    (:func:`checked`) between them is skipped."""
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    name = "" if frame is None else frame.f_globals.get("__name__", "")
    return not (name == "grpo_theory" or name.startswith("grpo_theory."))


def built_outside() -> bool:
    """Called in a dataclass's ``__post_init__``: whether the code that built the record (past its ``__init__``,
    ``dataclasses.replace`` and this module) runs outside the package: the library's own records are not checked
    again."""
    frame = sys._getframe(3)                      # 0 here, 1 __post_init__, 2 __init__, 3 who built it
    while frame is not None and frame.f_globals.get("__name__") in (__name__, "dataclasses"):
        frame = frame.f_back
    name = "" if frame is None else frame.f_globals.get("__name__", "")
    return not (name == "grpo_theory" or name.startswith("grpo_theory."))


def _of_kind(value, kind: str) -> bool:
    """Whether ``value`` has the declared field type ``kind`` (one name of an annotation's union)."""
    if kind in ("float", "int"):
        ok = (int, np.integer) if kind == "int" else (int, float, np.integer, np.floating)
        return isinstance(value, ok) and not isinstance(value, (bool, np.bool_))
    if kind == "bool":
        return isinstance(value, (bool, np.bool_))
    if kind == "str":
        return isinstance(value, str)
    if kind in ("tuple", "list"):
        return isinstance(value, (tuple, list))
    if kind.startswith(("tuple[", "list[")):                  # tuple[str, ...], list[str]: each entry checked
        inner = kind[kind.index("[") + 1:-1].split(",")[0].strip()
        if inner == "tuple":                                   # entries that are tuples: not lists
            return isinstance(value, (tuple, list)) and all(isinstance(v, tuple) for v in value)
        return isinstance(value, (tuple, list)) and all(_of_kind(v, inner) for v in value)
    if kind == "dict":
        return isinstance(value, Mapping)
    if kind in ("np.ndarray", "numpy.ndarray"):
        if isinstance(value, np.ndarray) and not isinstance(value, np.matrix):
            if value.dtype.kind == "O":                  # text held as objects (a status per prompt)
                return all(isinstance(v, str) for v in value.ravel())
            return value.dtype.kind in "biufUS"          # numbers, flags or text
        try:
            numbers()("value", value)
        except InvalidInputError:
            return False
        return not isinstance(value, (Mapping, set, frozenset)) and hasattr(value, "__len__") or np.ndim(value) == 0
    if kind == "pd.DataFrame":
        return type(value).__name__ == "DataFrame" and type(value).__module__.startswith("pandas")
    if kind in ("object", "Any"):
        return True
    kind = kind.rsplit(".", 1)[-1]
    return any(c.__name__ == kind for c in type(value).__mro__)       # a class of the package (or sympy's), by name


def record_fields(obj, skip=()) -> None:
    """Refuse a field of the result record ``obj`` (a dataclass) whose value does not have the field's declared
    type, naming the record, the field and the value: the check a record built outside the package gets in its
    ``__post_init__`` (:func:`built_outside`), so that a hand-built record fails where it is built, not later in
    a method or a function that takes it. Types only: a number field takes any number, an array field any
    array of numbers (NaN included: the library's own records hold NaN where nothing was computed)."""
    import dataclasses

    for f in dataclasses.fields(obj):
        if f.name in skip:
            continue
        kinds = [k.strip() for k in str(f.type).split("|")]
        value = getattr(obj, f.name)
        if value is None:
            if "None" not in kinds and "object" not in kinds:
                raise InvalidInputError(f"{type(obj).__name__}: {f.name} is required, got None")
            continue
        if not any(_of_kind(value, k) for k in kinds if k != "None"):
            want = " or ".join(k for k in kinds)
            raise InvalidInputError(f"{type(obj).__name__}: {f.name} must be {want}, got {_shown(value)}")


def checked_record(cls=None, *, own_fields=()):
    """Class decorator, placed under ``@dataclass``: a record built outside the package has its fields checked
    (:func:`record_fields`) before the class's own ``__post_init__`` runs; ``own_fields`` are left to that one
    (it checks them with its own message)."""
    if cls is None:
        return lambda c: checked_record(c, own_fields=own_fields)
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        if built_outside():
            record_fields(self, skip=own_fields)
        if own is not None:
            own(self)
    __post_init__.__doc__ = own.__doc__ if own is not None else None
    cls.__post_init__ = __post_init__
    return cls


def point_array(name: str, value, shape, what: str) -> np.ndarray:
    """A point a public method of a solver's problem takes (free logits, class log-probabilities, a policy):
    ``value`` as a float array of ``shape`` (an int: that many entries, 1-D; or a tuple), any values, NaN and
    infinities included (the solvers pass trial points). A float ndarray of that shape is returned as it is (the
    solvers' own calls: one type test, no copy); anything else is checked as :func:`numbers` checks it and
    returned as ``np.asarray(value, dtype=float)``, or refused naming ``name``, the shape expected (``what``
    says what its entries are) and the value."""
    want = (shape,) if isinstance(shape, int) else tuple(shape)
    batched = want[:1] == (Ellipsis,)                   # (..., C): any leading axes, C entries on the last
    if value.__class__ is np.ndarray and value.dtype.char == "d" and (
            value.shape[-1:] == want[1:] and value.size if batched else value.shape == want):
        a = value
    else:
        numbers()(name, value)
        a = np.asarray(value, dtype=float)
        if (a.shape[-1:] != want[1:] or not a.size) if batched else (a.shape != want):
            shown = f"(..., {want[1]})" if batched else str(want)
            raise InvalidInputError(f"{name} must hold {what}: shape {shown}, got shape {a.shape} ({_shown(value)})")
    if from_outside(2) and not np.isfinite(a).all():
        raise InvalidInputError(f"{name} must hold finite numbers (the solvers' own trial points may not be; a point "
                                f"given from outside the package must), got {_shown(value)}")
    return a


def row_indices(name: str, value, n: int) -> int:
    """Refuse ``value`` unless it is a 1-D array of indices below ``n`` (which of ``n`` problems a batch call
    evaluates); return how many it holds. An integer ndarray is tested with two reductions, nothing more."""
    if not (value.__class__ is np.ndarray and value.dtype.kind in "iu" and value.ndim == 1):
        indices(name, value)
        value = np.asarray(value)
        if value.ndim != 1:
            raise InvalidInputError(f"{name} must be a 1-D array of problem indices, got shape {value.shape}")
    if value.size and (value.min() < 0 or value.max() >= n):
        bad = value[(value < 0) | (value >= n)][0]
        raise InvalidInputError(f"{name} holds {bad}, out of range: there are {n} problems (0 to {n - 1})")
    return value.size


def same_length(what: str = "", **arrays) -> None:
    """Refuse 1-D arrays (``name=array``) of different lengths, naming each argument's length; ``what`` says
    what one entry of each stands for (``"one entry per calibration prompt"``)."""
    sizes = {k: _size(a) for k, a in arrays.items()}
    if len(set(sizes.values())) > 1:
        names = list(sizes)
        shown = ", ".join(f"{k} {n}" for k, n in sizes.items())
        raise InvalidInputError(f"{', '.join(names[:-1])} and {names[-1]} must have one length"
                                f"{f' ({what})' if what else ''}, got lengths {shown}")


def has_columns(name: str, table, columns, given_as: str = "") -> None:
    """Refuse a DataFrame ``table`` that lacks one of ``columns`` (each must be a column name); ``given_as`` names
    the argument that asked for them, where it is not the table itself (``unit``)."""
    missing = [c for c in columns if not isinstance(c, str) or c not in table.columns]
    if missing:
        asked = f" (asked for by {given_as})" if given_as else ""
        raise InvalidInputError(f"{name} has no column(s) {plain(missing)}{asked}; found "
                                f"{plain(list(table.columns)[:12])}")


def has_keys(name: str, rows, keys, why: str = "") -> None:
    """Refuse a list of dicts ``rows`` where a row lacks one of ``keys`` (the first such row is named, with the keys
    it has; ``why`` says what asked for the keys)."""
    for i, row in enumerate(rows):
        if missing := [k for k in keys if k not in row]:
            raise InvalidInputError(f"{name}[{i}] has no {plain(missing[:3])[1:-1]}{' ...' if len(missing) > 3 else ''}"
                                    f"{f' ({why})' if why else ''}; it has {plain(sorted(map(str, row))[:8])}")


def ndarray(*, ndim=None, finite=False):
    """A NumPy array of numbers (not a list: the function uses the array's methods), finite where ``finite``."""
    inner = numbers(ndim=ndim, finite=finite)

    def check(name, value):
        if not isinstance(value, np.ndarray) or isinstance(value, np.matrix):   # a matrix is 2-D whatever it holds
            raise InvalidInputError(f"{name} must be a numpy array, got {_shown(value)}"
                                    + ("; give np.asarray(...): a matrix is always 2-D" if isinstance(value, np.ndarray)
                                       else ""))
        inner(name, value)
        if value.dtype.kind not in "iuf":          # object, bool, text, time: the array's methods would fail
            raise InvalidInputError(f"{name} must be a numpy array of numbers (an int or float dtype), got dtype "
                                    f"{value.dtype} ({_shown(value)}); convert it with np.asarray({name}, "
                                    "dtype=float)")
    return check


#: A number of steps, points or samples: an integer in ``[0, MAX_STEPS]``, or in ``[1, MAX_STEPS]``.
COUNT = num(0, MAX_STEPS, integer=True)
POSITIVE_COUNT = num(1, MAX_STEPS, integer=True)
#: A random seed: an integer in ``[0, 2**63)``.
SEED = whole(0, 2**63 - 1)


def seed_or_generator(name, value):
    """A seed (:data:`SEED`), None (fresh entropy) or a ``numpy.random.Generator``."""
    if value is None or isinstance(value, np.random.Generator):
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidInputError(f"{name} must be an integer seed, None or a numpy.random.Generator, got "
                                f"{_shown(value)}")
    SEED(name, value)


def _shown(value) -> str:
    """A value for a message: its type and, cut to 80 characters, how it prints."""
    try:
        shown = plain(value)
    except Exception:                                   # noqa: BLE001 - any object: its type is enough
        shown = "?"
    shown = " ".join(shown.split())                    # a Series prints on several lines
    if len(shown) > 80:
        shown = shown[:77] + "..."
    kind = type(value).__name__
    return shown if kind in ("int", "float", "str") else f"{shown} ({kind})"
