"""JSON read for the package's inputs: a key given twice, a number no double holds (named by its key) and
nesting too deep are :class:`~grpo_theory.errors.InvalidInputError` naming the source."""

from __future__ import annotations

from ._validate import BEYOND_DOUBLE, MAX_DEPTH, check_structure, rounding_problem
from .errors import InvalidInputError

__all__ = ["unique_keys", "json_value", "load_json"]


class _DuplicateKey(ValueError):
    pass


def unique_keys(pairs) -> dict:
    """A JSON object (``object_pairs_hook``) whose keys appear once: ``{"n": 10, "n": 5}`` is refused, where
    ``json`` would keep the last silently."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


class _BadNumber(ValueError):
    pass


class _Unheld:
    """A JSON number a double cannot hold, kept (text, why) until the object holding it names its key."""

    __slots__ = ("text", "why")

    def __init__(self, text: str, why: str) -> None:
        self.text, self.why = text, why


def _json_float(text: str) -> float | _Unheld:
    """A JSON number with a fraction or exponent, as :func:`rounding_problem` allows it (else :class:`_Unheld`)."""
    value = float(text)
    why = rounding_problem(text, value)
    return _Unheld(text, why) if why else value


def _json_int(text: str) -> int | _Unheld:
    """A JSON integer; one of more than 309 digits (beyond any double, and towards Python's conversion limit)
    is kept as :class:`_Unheld`."""
    if len(text.lstrip("-")) > 309:
        return _Unheld(f"{text[:20]}... ({len(text.lstrip('-')):,} digits)", BEYOND_DOUBLE)
    return int(text)


def _unheld_in(value, where: str = "") -> None:
    """Raise :class:`_BadNumber` (text, why, where) for the first :class:`_Unheld` in ``value`` or the lists it
    holds (objects are checked as they are built), ``where`` the key path to it."""
    if isinstance(value, _Unheld):
        raise _BadNumber(value.text, value.why, where)
    if isinstance(value, list):
        for i, item in enumerate(value):
            _unheld_in(item, f"{where}[{i}]")


def _json_object(pairs) -> dict:
    """:func:`unique_keys`, and a number no double holds named by its key."""
    out = unique_keys(pairs)
    for key, value in out.items():
        try:
            _unheld_in(value)
        except _BadNumber as exc:
            text, why, where = exc.args
            raise _BadNumber(text, why, f"{key}{where}") from None
    return out


def json_value(text: str, source: str):
    """``text`` parsed as JSON: a parse error, a key given twice in one object, or nesting too deep for the
    parser is an InvalidInputError naming ``source``."""
    import json

    try:
        value = json.loads(text, object_pairs_hook=_json_object, parse_float=_json_float, parse_int=_json_int)
        _unheld_in(value)                       # a number at the top level or in a top-level list
        return value
    except _DuplicateKey as exc:
        raise InvalidInputError(f"{source}: the key {exc.args[0]!r} appears twice in one object") from None
    except _BadNumber as exc:
        text, why, where = exc.args
        named = f"{where} = {text[:40]}" if where else f"the number {text[:40]}"
        raise InvalidInputError(f"{source}: {named} {why}") from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{source} is not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidInputError(f"{source} is nested deeper than {MAX_DEPTH} levels; expected a few") from None


def load_json(text: str, source: str, *, max_depth: int = MAX_DEPTH):
    """``text`` parsed as JSON (:func:`json_value`), its nesting checked (:func:`check_structure`)."""
    return check_structure(json_value(text, source), source, max_depth=max_depth)
