"""A sweep's CSV (:func:`grpo_theory.sweep.sweep`'s ``out``): its columns, its case keys, and the resume: the rows of
an earlier run read back, each checked against the case that asks for it (the same key, question and objective)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ._io import atomic_write
from ._validate import MAX_DATA_BYTES, plain, read_text
from .problem import INTEGER_FIELDS, InvalidInputError


#: The columns of a sweep's CSV, in order. A row is defined by its ``key``, its ``objective`` (the objective's
#: description) and its ``question`` (the question's repr: ``pi_ref``, the reward law, labels, answers): a resumed
#: sweep checks all three against its case before it keeps the row.
COLUMNS = ("key", "objective", "question", "pi_ref", "n_points", "n_stable", "exhaustive", "stable_policies",
           "reached_policy", "seconds")
#: The columns of a sweep file written before the ``question`` column: read, and rewritten with it empty (its rows'
#: questions not recorded: a row a grid's case asks for is refused, since its reward law cannot be compared).
_OLD_COLUMNS = tuple(c for c in COLUMNS if c != "question")
#: A number as YAML may leave it as text (``1e-3``, ``1.0e300``).
NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _complete(rec: list, columns: tuple = COLUMNS) -> bool:
    """A row of an earlier run that every column of which reads back (a torn or edited one does not)."""
    try:
        row = dict(zip(columns, rec, strict=True))                   # a row of another width: ValueError
        _ = [json.loads(row[c]) for c in ("pi_ref", "stable_policies", "reached_policy")], int(row["n_points"])
        _ = int(row["n_stable"])
        return row["exhaustive"] in ("True", "False") and math.isfinite(float(row["seconds"]))
    except ValueError:
        return False


def done_rows(out: Path) -> list[dict]:
    """Complete rows of an earlier (perhaps killed) run; a torn or unreadable row is dropped (its case is run
    again) and the file rewritten. A file that is not a sweep file (its header, or not UTF-8) is refused."""
    if not out.exists():
        return []
    reader = csv.reader(io.StringIO(read_text(out, "sweep output", max_bytes=MAX_DATA_BYTES,
                                              expected="the CSV of an earlier sweep, to resume"), newline=""))
    try:
        header = next(reader, None)
        if header is None:
            return []
        columns = tuple(header)
        if columns not in (COLUMNS, _OLD_COLUMNS):
            raise InvalidInputError(f"{out} is not a sweep file (columns {plain(header)[:200]}, expected "
                                    f"{list(COLUMNS)})")
        rows, torn = [], columns != COLUMNS             # a file without the question column is rewritten with it
        for rec in reader:
            if _complete(rec, columns):
                rows.append({"question": "", **dict(zip(columns, rec))})
            else:
                torn = True
    except csv.Error as exc:                # NUL bytes, a field over csv's limit: no sweep wrote it
        raise InvalidInputError(f"{out} is not a sweep file (line {reader.line_num}: {exc}); expected the CSV of "
                                "an earlier sweep, to resume, or a new path") from None
    if torn:
        write_rows(out, rows)
    return rows


def write_rows(out: Path, rows: list[dict]) -> None:
    def write(p):
        with open(p, "w", newline="", encoding="utf-8") as fh:
            (w := csv.DictWriter(fh, fieldnames=COLUMNS)).writeheader()
            w.writerows(rows)
    atomic_write(out, write)


def resumed(done: list[dict], cases: list, out: Path) -> list[dict]:
    """``done`` with each row under its case's key (``beta=1`` written for ``beta=1.0`` takes the case's key); a
    second row of one key is dropped, ``out`` rewritten if a row changed. A row of another ``pi_ref`` than its
    case's (a grid edited under the same question name, another grid's rows) is refused."""
    keys, canon, by_key = [c.key for c in cases], {}, {c.key: c for c in cases}
    for k in keys:
        canon.setdefault(canonical_key(k), []).append(k)
    rows, seen = [], set()
    for r in done:
        k, alike = r["key"], canon.get(canonical_key(r["key"]), [])
        k = k if k in keys or len(alike) != 1 else alike[0]
        c = by_key.get(k)
        if c:
            _same_case(r, c, k, out)
        if k not in seen:
            seen.add(k)
            rows.append({**r, "key": k})
    if rows != done:
        write_rows(out, rows)
    return rows


def _same_case(r: dict, c, k: str, out: Path) -> None:
    """Refuse a row of ``out`` kept under case ``c``'s key ``k`` that another question or objective wrote (the
    grid was edited under the same key, or another grid wrote the file), naming both."""
    redo = "give another --out, or delete that row to recompute it"
    if json.loads(r["pi_ref"]) != c.question.pi_ref.tolist():         # the key holds the objective, not pi_ref
        raise InvalidInputError(f"{out} holds case {k!r} for pi_ref {r['pi_ref']}; the grid asks for "
                                f"{c.question.pi_ref.tolist()}: {redo}")
    if not r["question"]:
        raise InvalidInputError(f"{out} holds case {k!r} without its question (a sweep file written before the "
                                f"'question' column), so its rewards cannot be compared with the grid's "
                                f"{c.question!r}: {redo}")
    if r["question"] != repr(c.question):
        raise InvalidInputError(f"{out} holds case {k!r} for {_cut(r['question'])}; the grid asks for "
                                f"{_cut(repr(c.question))} (the spec changed under the same key): {redo}")
    if r["objective"] != c.objective.describe():
        raise InvalidInputError(f"{out} holds case {k!r} for the objective {_cut(r['objective'])!r}; the grid asks "
                                f"for {c.objective.describe()!r}: {redo}")


def _cut(text: str, n: int = 300) -> str:
    """``text``, or its first ``n`` characters and how long it is (an edited file's field may be huge)."""
    return text if len(text) <= n else f"{text[:n]}... ({len(text):,} characters)"


def value_text(name: str, v) -> str:
    """A grid value as a case's key writes it: a number (or YAML's text of one) as the value the computation uses,
    an integer field's ``4.0`` as ``4`` and any other field's ``1`` as ``1.0`` (``inf`` as ``inf``); anything else
    as ``str`` writes it. Two spellings of one number give one text."""
    if isinstance(v, str) and (NUMBER.match(v) or v.strip().lower() in ("inf", ".inf", "+inf")):
        v = math.inf if "inf" in v.lower() else float(v)
    if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, (bool, np.bool_)) \
            or not abs(v) <= 1.7976931348623157e308:        # the largest double: inf, and an int no double holds, as str
        return str(v)
    if name in INTEGER_FIELDS and float(v).is_integer():
        return str(int(v))
    return repr(float(v))


def case_key(qname: str, fields: Mapping) -> str:
    return f"{qname}|" + ",".join(f"{k}={value_text(k, v)}" for k, v in fields.items())


def canonical_key(key: str) -> str:
    """A key as :func:`case_key` writes it (``q|beta=1,group_size=4.0`` -> ``q|beta=1.0,group_size=4``), for a
    file written with the grid's own spellings; a key not of the form ``name|field=value,...`` as it is."""
    qname, bar, rest = key.rpartition("|")
    pairs = [kv.partition("=") for kv in rest.split(",")]
    if not bar or not all(k.isidentifier() and eq for k, eq, _ in pairs):
        return key
    return case_key(qname, {k: v for k, _, v in pairs})
