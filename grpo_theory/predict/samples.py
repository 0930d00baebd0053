"""A base model's samples per prompt, read from CSV or JSONL and checked row by row.

Three layouts are accepted (the columns decide which):

* **per-sample rows** ``prompt_id, reward``: one row per sampled completion;
* **counts** ``prompt_id, n, correct``: ``correct`` of ``n`` samples earned the top reward;
* **reward-level counts** ``prompt_id, count_<level>...`` (e.g. ``count_0, count_0.5, count_1``), or in
  JSONL a ``counts`` object ``{"0": 3, "0.5": 1, "1": 4}``: for graded rewards.

Rows whose reward is empty (a failed generation, say) are *excluded*, counted and reported
(:attr:`SampleTable.excluded`), never dropped silently; every other defect is an
:class:`~grpo_theory.InvalidInputError` naming the row (its line in the file) and what was expected.
"""

from __future__ import annotations

import collections
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._checks import POSITIVE_COUNT, arr, at_most, checked, optional, same_length, text, checked_record
from .._json import json_value
from .._validate import MAX_DATA_BYTES, csv_records, float_array, plain, read_text, text_float, text_number
from ..errors import InvalidInputError, TheoryWarning

__all__ = ["SampleTable", "read_samples", "samples_from_counts", "PredictWarning", "check_counts"]


class PredictWarning(TheoryWarning):
    """Something about a prediction's input the user should know (excluded rows, unmodelled settings).

    Given by :func:`read_samples` (rows left out, e.g. an empty reward) and :func:`predict`; a
    :class:`~grpo_theory.errors.TheoryWarning`, so filtering that silences it too.
    """


@dataclass(frozen=True)
@checked_record
class SampleTable:
    """Counts of each reward level per prompt.

    Attributes
    ----------
    prompt_ids : tuple of str
        One per prompt, in order of first appearance.
    levels : numpy.ndarray
        The ``L`` reward levels, increasing; ``levels[-1]`` is "correct" for pass@k.
    counts : numpy.ndarray
        Integer counts, shape (P, L); ``counts.sum(1)`` is each prompt's ``n_x`` (>= 1).
    layout : str
        ``"rows"``, ``"counts"`` or ``"level_counts"``: the file layout read.
    excluded : list of tuple
        ``(line, reason)`` for each row left out (empty rewards), reported in the summary.
    source : str
        The file it came from (or ``"<memory>"``).

    Examples
    --------
    >>> t = samples_from_counts([10, 4], [3, 0])
    >>> t.n.tolist(), t.correct.tolist(), t.binary
    ([10, 4], [3, 0], True)
    """

    prompt_ids: tuple[str, ...]
    levels: np.ndarray
    counts: np.ndarray
    layout: str
    excluded: list[tuple] = field(default_factory=list)
    source: str = "<memory>"

    @property
    def n(self) -> np.ndarray:
        """Samples per prompt."""
        return self.counts.sum(axis=1)

    @property
    def binary(self) -> bool:
        """Two reward levels (correct / incorrect)."""
        return self.levels.size == 2

    @property
    def correct(self) -> np.ndarray:
        """Samples at the top level per prompt."""
        return self.counts[:, -1]

    def __len__(self) -> int:
        return len(self.prompt_ids)


def _number(value, what: str, where: str) -> float:
    x = text_number(value, f"{where}: {what}")
    if not math.isfinite(x):
        raise InvalidInputError(f"{where}: {what} must be finite, got {value!r}")
    return x


#: Largest count a samples file may give (2^53: every integer up to it is exact in a float, and sums stay in int64).
MAX_COUNT = 2**53


def _count(value, what: str, where: str) -> int:
    x = _number(value, what, where)
    if x < 0 or not x.is_integer():
        raise InvalidInputError(f"{where}: {what} must be a non-negative integer, got {value!r}")
    if x > MAX_COUNT:
        raise InvalidInputError(f"{where}: {what} = {value!r} is above the limit of {MAX_COUNT:,} samples "
                                "(2^53, where counts stop being exact)")
    return int(x)


_JSON_LINES = (".jsonl", ".ndjson", ".json")


def _label(path: Path) -> str:
    """A samples file's name in messages: its name, or its whole path where the name has no suffix (``status`` of
    ``/proc/self/status``, ``63`` of ``/dev/fd/63``: the name alone says nothing of which file)."""
    return path.name if path.suffix else str(path)


def _records(path: Path) -> list[tuple[int, dict]]:
    """``(line, record)`` pairs of a CSV (header on line 1) or JSONL file, values as read (strings for CSV). The
    suffix names the format; a name without one (a pipe: ``<(cmd)``, ``/dev/stdin``) is JSON lines when its first
    line that is not blank opens an object (``{``), else CSV. The file is read once (a pipe cannot be re-read)."""
    suffix = path.suffix.lower()
    if suffix not in (*_JSON_LINES, ".csv", "") and path.exists() and not path.is_dir():
        raise InvalidInputError(f"samples {str(path)!r}: expected a .csv or .jsonl file, got {path.suffix!r} (a name "
                                "without a suffix, such as a pipe, is read by its content)")
    text = read_text(path, "samples", max_bytes=MAX_DATA_BYTES, expected="a .csv or .jsonl of samples")
    if suffix == "":
        first = next((line for line in text.splitlines() if line.strip()), "")
        suffix = ".jsonl" if first.lstrip().startswith("{") else ".csv"
    if suffix in _JSON_LINES:
        out = []
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            rec = json_value(line, f"samples {_label(path)} line {i}")
            if not isinstance(rec, dict):
                raise InvalidInputError(f"samples {_label(path)} line {i}: expected a JSON object, got {rec!r}")
            if isinstance(rec.get("counts"), dict):       # {"counts": {"0": 3, "1": 5}} -> count_<level> keys
                rec = {**{k: v for k, v in rec.items() if k != "counts"},
                       **{f"count_{lv}": c for lv, c in rec["counts"].items()}}
            out.append((i, rec))
        return out
    return csv_records(text, f"samples {_label(path)}")


def _declared(levels) -> np.ndarray | None:
    if levels is None:
        return None
    arr = np.asarray([float(v) for v in levels])
    if arr.size < 2 or np.unique(arr).size != arr.size or not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"levels must be at least two distinct finite numbers, got {list(levels)!r}")
    return np.sort(arr)


def _at(name: str, line) -> str:
    """Where a record is, for messages: ``samples f.csv line 3``, ``samples DataFrame row 2`` (the index label),
    ``samples array row 0``."""
    return f"samples {name} {_unit(name)} {line}"


def _unit(name: str) -> str:
    return "row" if name in ("DataFrame", "array") else "line"


class _Missing(str):
    """A DataFrame's missing value (NaN, None, pd.NA) read as an empty CSV cell: ``""`` as text, shown as what it
    was (``got nan (a missing value)``, not ``got ''``)."""

    def __new__(cls, value):
        self = super().__new__(cls, "")
        self.shown = f"{value!r} (a missing value)"
        return self

    def __repr__(self) -> str:
        return self.shown


def _frame_records(frame) -> list[tuple[object, dict]]:
    """``(index label, record)`` pairs of a pandas DataFrame, values as they are."""
    cols = [str(c).strip() for c in frame.columns]
    dup = sorted(c for c, k in collections.Counter(cols).items() if k > 1)
    if dup:
        raise InvalidInputError(f"samples DataFrame: column(s) {dup} appear more than once")
    out = []
    for i, row in zip(frame.index.tolist(), frame.itertuples(index=False, name=None)):
        rec = {}
        for c, v in zip(cols, row):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                v = _Missing(v)                      # as an empty CSV cell: an excluded reward, a missing count
            rec[c] = v
        out.append((i if isinstance(i, (int, str)) else str(i), rec))     # a label JSON can write
    return out


def _array_records(arr: np.ndarray) -> tuple[list[tuple[int, dict]], str]:
    """A numpy array as records: a structured array by its field names; a 2-d array of two columns as
    ``(n, correct)`` counts per prompt (ids ``0, 1, ...``)."""
    if arr.dtype.names:
        return [(i, {str(k): row[k].item() if hasattr(row[k], "item") else row[k] for k in arr.dtype.names})
                for i, row in enumerate(arr)], "array"
    if arr.ndim == 2 and arr.shape[1] == 2:
        vals = float_array("samples array", arr)
        return [(i, {"prompt_id": str(i), "n": n, "correct": c}) for i, (n, c) in enumerate(vals.tolist())], \
            "array"
    raise InvalidInputError(f"samples array of shape {arr.shape}: expected a 2-d array of (n, correct) columns, one "
                            "row per prompt, or a structured array with a prompt_id field")


@checked(levels=arr(ndim=1, none=True), id_column=text())
def read_samples(source, *, levels=None, id_column: str = "prompt_id") -> SampleTable:
    """Read a samples file (CSV or JSONL) in any of the three layouts (see the module doc), or a table in memory.

    Parameters
    ----------
    source : str, Path, pandas.DataFrame or numpy.ndarray
        The file (``.csv`` with a header row, or ``.jsonl`` with one object a line); or a DataFrame with the
        columns of any layout; or a 2-d array of ``(n, correct)`` rows (one per prompt, ids ``0, 1, ...``) or a
        structured array with the layout's fields.
    id_column : str, default "prompt_id"
        The column that names the prompt (e.g. ``"problem"`` or ``"unique_id"``).
    levels : sequence of float, optional
        The reward levels the verifier can give. Default: ``(0, 1)`` for per-sample rows whose rewards
        are all 0 or 1, otherwise the distinct rewards seen. A reward outside the declared levels is an
        error naming its row.

    Returns
    -------
    SampleTable
        The counts of each reward level per prompt, with the prompts' ids and the layout read.

    Raises
    ------
    InvalidInputError
        No ``prompt_id`` or reward column, a non-numeric or undeclared reward, a prompt with n = 0,
        ``correct > n``, a prompt listed twice in a counts file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = path.write_text("prompt_id,reward\\nq1,1\\nq1,0\\nq2,0\\nq2,\\n")
    >>> import warnings; warnings.simplefilter("ignore")
    >>> t = read_samples(path)
    >>> t.prompt_ids, t.counts.tolist(), t.excluded
    (('q1', 'q2'), [[1, 1], [1, 0]], [(5, 'empty reward')])
    """
    if not isinstance(id_column, str) or not id_column.strip():
        raise InvalidInputError(f"id_column must be a column name, got {plain(id_column)}")
    id_column = id_column.strip()
    records, name, path = _source_records(source)
    if not records:
        raise InvalidInputError(f"samples {name}: no rows (expected a header and a row per prompt or sample)")
    keys = set().union(*(r.keys() for _, r in records))
    if id_column not in keys:
        hint = " (name another column with id_column= / --id-column)" if id_column == "prompt_id" else \
            f" (id_column={id_column!r})"
        raise InvalidInputError(f"samples {name}: no {id_column!r} column{hint}; expected one of the file's columns "
                                f"{sorted(keys)}")
    if id_column != "prompt_id":
        if "prompt_id" in keys:
            raise InvalidInputError(f"samples {name}: id_column {id_column!r} names a column, but the file also has a "
                                    "'prompt_id' column; drop or rename one")
        records = [(i, {("prompt_id" if k == id_column else k): v for k, v in r.items()}) for i, r in records]
        keys = (keys - {id_column}) | {"prompt_id"}
    declared = _declared(levels)
    level_cols = sorted(k for k in keys if k.startswith("count_"))
    _one_layout(records, name, keys, level_cols)
    if "reward" in keys:
        table = _from_rows(records, name, declared)
    elif {"n", "correct"} <= keys:
        if declared is not None and not {0.0, 1.0} <= set(declared.tolist()):     # else silently not read
            raise InvalidInputError(f"samples {name}: the declared levels {plain(declared.tolist())} (the levels "
                                    "argument, --levels) do not include 0 and 1, the rewards of an (n, correct) counts "
                                    "table (correct: 1, else 0); drop the levels or give 'count_<level>' columns")
        table = _from_counts(records, name)
    elif level_cols:
        table = _from_level_counts(records, name, level_cols, declared)
    else:
        raise InvalidInputError(
            f"samples {name}: no reward column. Expected one of: 'reward' (one row per sample), 'n' and 'correct' "
            f"(counts), or 'count_<level>' columns (reward-level counts); found columns {sorted(keys)}")
    table = SampleTable(table.prompt_ids, table.levels, table.counts, table.layout, table.excluded, path)
    if table.excluded:
        first, why = table.excluded[0]
        warnings.warn(f"samples {name}: {len(table.excluded)} row(s) excluded (first: {_unit(name)} {first}, {why}); "
                      "they are counted in the summary", PredictWarning, stacklevel=2)
    return table


def _one_layout(records, name: str, keys: set, level_cols: list) -> None:
    """Refuse columns of two layouts (``reward`` with ``n``/``correct`` or ``count_<level>``: which to read?), and a
    record (a JSONL line) without its layout's columns: a file whose layout changes part-way."""
    layouts = [(label, cols) for label, cols in (("'reward'", ["reward"]), ("'n'/'correct'", ["n", "correct"]),
                                                 ("'count_<level>'", level_cols)) if set(cols) & keys]
    if len(layouts) > 1:
        def of(rec):
            return [label for label, cols in layouts if set(cols) & set(rec)]
        first = of(records[0][1])
        where = next((w for w, rec in records if of(rec) != first), None)       # a JSONL line of another layout
        at = f"{_at(name, where)} has {', '.join(of(dict(records)[where]))}, while {_unit(name)} {records[0][0]} has " \
             f"{', '.join(first)}" if where is not None else f"samples {name}: columns of two layouts, " \
             f"{layouts[0][0]} and {layouts[1][0]}"
        raise InvalidInputError(f"{at}; give one layout per file (one row per sample, counts, or reward-level counts)")
    if layouts:
        label, cols = layouts[0]
        for where, rec in records:
            missing = [c for c in cols if c not in rec]
            if missing:
                raise InvalidInputError(f"{_at(name, where)}: no {missing[0]!r}, which the file's layout ({label}) "
                                        f"needs; found keys {sorted(rec)[:8]}")


def prompt_ids_rule(name, value) -> None:
    """A rule (:mod:`grpo_theory._checks`): a 1-d sequence of prompt ids (a list, tuple, range, 1-d NumPy array,
    pandas ``Index`` or ``Series``), each text or an integer; a text, a set, a mapping, an iterator or an array of
    another shape is refused, naming it.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object
        The value to check.
    """
    kinds = "a list, tuple, 1-d NumPy array or pandas Index/Series, one id per prompt"
    if isinstance(value, (str, bytes, np.str_)):
        raise InvalidInputError(f"{name} must be a sequence of prompt ids ({kinds}), got the text {plain(value)[:80]}")
    sequence = isinstance(value, collections.abc.Sequence) or (hasattr(value, "ndim") and hasattr(value, "__len__"))
    if not sequence:
        raise InvalidInputError(f"{name} must be a sequence of prompt ids ({kinds}), got a {type(value).__name__} "
                                f"{plain(value)[:80]}")
    if getattr(value, "ndim", 1) != 1:
        raise InvalidInputError(f"{name} must be 1-d (one id per prompt), got a {type(value).__name__} of shape "
                                f"{tuple(getattr(value, 'shape', ()))}")
    for i, v in enumerate(value):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (str, int, np.integer, np.str_)):
            raise InvalidInputError(f"{name}[{i}] = {plain(v)[:80]} is not a prompt id (expected text or an integer)")


def samples_source(name, value) -> None:
    """A rule (:mod:`grpo_theory._checks`): ``value`` is something :func:`read_samples` reads, or a
    :class:`SampleTable`; else an InvalidInputError naming ``name``.

    Parameters
    ----------
    name, value : str, object
        As for :func:`prompt_ids_rule`: the argument's name and the value to check.
    """
    if isinstance(value, (SampleTable, str, Path, np.ndarray)) or (
            type(value).__name__ == "DataFrame" and hasattr(value, "itertuples")):
        return
    shown = plain(value)[:80] if isinstance(value, (int, float, list, tuple)) else "..."
    raise InvalidInputError(f"{name} must be a SampleTable, a file path (.csv or .jsonl), a pandas DataFrame or a "
                            f"numpy array, got {type(value).__name__}: {shown}; for arrays of counts use "
                            "samples_from_counts(n, correct, prompt_ids)")


def _source_records(source) -> tuple[list, str, str]:
    """``(records, name for messages, source)`` of a file path, a DataFrame or an array."""
    if isinstance(source, (str, Path)):
        if isinstance(source, str) and not source:          # Path("") would be the current folder
            raise InvalidInputError("samples '': an empty path, naming no file (expected a .csv or .jsonl of samples)")
        path = Path(source)
        return _records(path), _label(path), str(path)
    if type(source).__name__ == "DataFrame" and hasattr(source, "itertuples"):
        return _frame_records(source), "DataFrame", "<DataFrame>"
    if isinstance(source, np.ndarray):
        records, _ = _array_records(source)
        return records, "array", "<array>"
    raise InvalidInputError(
        f"samples must be a file path (.csv or .jsonl), a pandas DataFrame or a numpy array, got "
        f"{type(source).__name__}: {plain(source)[:80] if isinstance(source, (int, float, list, tuple)) else '...'}; "
        "for arrays of counts use samples_from_counts(n, correct, prompt_ids)")


def _prompt(rec: dict, where: str) -> str:
    pid = rec.get("prompt_id")
    if pid is None or str(pid).strip() == "":
        raise InvalidInputError(f"{where}: empty prompt_id (expected an identifier for the prompt)")
    if isinstance(pid, (bool, np.bool_, dict, list, tuple, set)) or (isinstance(pid, float) and not math.isfinite(pid)):
        raise InvalidInputError(f"{where}: prompt_id must be a string or an integer, got {pid!r}")
    return str(pid).strip()


def _from_rows(records, name: str, declared) -> SampleTable:
    pids, rewards, lines, excluded = [], [], [], []
    for line, rec in records:
        where = _at(name, line)
        pid = _prompt(rec, where)
        raw = rec.get("reward")
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            excluded.append((line, "empty reward"))
            continue
        pids.append(pid)
        lines.append(line)
        rewards.append(_number(raw, "reward", where))
    if not rewards:
        raise InvalidInputError(f"samples {name}: every row has an empty reward ({len(excluded)} rows)")
    r = np.asarray(rewards)
    if declared is None:
        seen = np.unique(r)
        declared = np.array([0.0, 1.0]) if set(seen.tolist()) <= {0.0, 1.0} else seen
        if declared.size < 2:
            declared = np.array([0.0, 1.0]) if seen[0] in (0.0, 1.0) else seen
    idx = np.searchsorted(declared, r)
    ok = (idx < declared.size) & (declared[np.minimum(idx, declared.size - 1)] == r)
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        raise InvalidInputError(f"{_at(name, lines[bad])}: reward {r[bad]:g} is not one of the "
                                f"declared levels {declared.tolist()}")
    if declared.size < 2:
        raise InvalidInputError(f"samples {name}: every reward is {declared[0]:g}; give levels= (at least two) so "
                                "the prediction knows which reward counts as correct")
    order = list(dict.fromkeys(pids))
    pos = {p: i for i, p in enumerate(order)}
    counts = np.zeros((len(order), declared.size), dtype=np.int64)
    np.add.at(counts, (np.array([pos[p] for p in pids]), idx), 1)
    return SampleTable(tuple(order), declared, counts, "rows", excluded)


def _from_counts(records, name: str) -> SampleTable:
    seen: dict[str, int] = {}
    rows = []
    for line, rec in records:
        where = _at(name, line)
        pid = _prompt(rec, where)
        n = _count(rec.get("n"), "n", where)
        c = _count(rec.get("correct"), "correct", where)
        if n == 0:
            raise InvalidInputError(f"{where}: prompt {pid!r} has n = 0 samples (expected n >= 1)")
        if c > n:
            raise InvalidInputError(f"{where}: prompt {pid!r} has correct = {c} > n = {n}")
        if pid in seen:
            raise InvalidInputError(f"{where}: prompt {pid!r} appears again (first on {_unit(name)} {seen[pid]}); "
                                    "give one row per prompt in a counts file")
        seen[pid] = line
        rows.append((pid, n - c, c))
    counts = np.array([[a, b] for _, a, b in rows], dtype=np.int64)
    return SampleTable(tuple(p for p, _, _ in rows), np.array([0.0, 1.0]), counts, "counts", [])


def _from_level_counts(records, name: str, level_cols: list, declared) -> SampleTable:
    lv = []
    for col in level_cols:
        lv.append(text_float(col[len("count_"):], f"samples {name}: the reward level of column {col!r}"))
        if lv[-1] is None:
            raise InvalidInputError(f"samples {name}: column {col!r} does not name a reward level "
                                    "(expected count_<number>, e.g. count_0.5)")
    lv = np.asarray(lv)
    if not np.all(np.isfinite(lv)):
        bad = [c for c, v in zip(level_cols, lv) if not math.isfinite(v)]
        raise InvalidInputError(f"samples {name}: column(s) {bad} name no finite reward level (expected "
                                "count_<number>, e.g. count_0.5)")
    _, first, times = np.unique(lv, return_index=True, return_counts=True)
    if np.any(times > 1):
        v = lv[first[times > 1][0]]
        same = [c for c, x in zip(level_cols, lv) if x == v]
        raise InvalidInputError(f"samples {name}: columns {same} name the same reward level {v:g}; give one "
                                "column per level")
    if declared is not None:
        outside = [c for c, v in zip(level_cols, lv) if v not in declared]
        if outside:
            raise InvalidInputError(f"samples {name}: column(s) {outside} are not among the declared levels "
                                    f"{declared.tolist()}")
    else:
        declared = np.sort(lv)
    if declared.size < 2:
        raise InvalidInputError(f"samples {name}: one reward level ({declared.tolist()}); expected at least two")
    col_of = {c: int(np.searchsorted(declared, v)) for c, v in zip(level_cols, lv)}
    seen: dict[str, int] = {}
    pids, counts = [], []
    for line, rec in records:
        where = _at(name, line)
        pid = _prompt(rec, where)
        row = np.zeros(declared.size, dtype=np.int64)
        for col in level_cols:
            v = rec.get(col)
            row[col_of[col]] += 0 if v is None or str(v).strip() == "" else _count(v, col, where)
        if row.sum() == 0:
            raise InvalidInputError(f"{where}: prompt {pid!r} has n = 0 samples (every count is 0 or empty)")
        if pid in seen:
            raise InvalidInputError(f"{where}: prompt {pid!r} appears again (first on {_unit(name)} {seen[pid]})")
        seen[pid] = line
        pids.append(pid)
        counts.append(row)
    return SampleTable(tuple(pids), declared, np.array(counts), "level_counts", [])


@checked(prompt_ids=optional(prompt_ids_rule))
def samples_from_counts(n, correct, prompt_ids=None) -> SampleTable:
    """A binary :class:`SampleTable` from arrays of ``n`` and ``correct`` (no file).

    Parameters
    ----------
    n : array_like of int
        Samples per prompt ``n_x``, each ``>= 1``.
    correct : array_like of int
        Correct samples per prompt ``c_x``, each in ``[0, n_x]``.
    prompt_ids : sequence, optional
        One id per prompt, text or integers (default ``"0", "1", ...``): a list, tuple, 1-d NumPy array or pandas
        ``Index``/``Series``.

    Returns
    -------
    SampleTable
        Levels ``(0, 1)``, counts ``[n_x - c_x, c_x]``, layout ``"counts"``.

    Raises
    ------
    InvalidInputError
        Shapes that differ, an ``n_x < 1`` or a ``c_x`` outside ``[0, n_x]`` (naming the prompt), ids that are
        not a 1-d sequence, the wrong number of ids, or an id given twice (naming it).

    Examples
    --------
    >>> samples_from_counts([10, 4], [3, 0]).counts.tolist()
    [[7, 3], [4, 0]]
    """
    n_given, n = n, float_array("n", n)
    c = float_array("correct", correct)
    if n.shape != c.shape or n.ndim != 1:
        raise InvalidInputError(f"n and correct must be 1-d arrays of the same length, got shapes {n.shape}, {c.shape}")
    if n.size == 0:
        raise InvalidInputError("n and correct are empty: expected the counts of at least one prompt")
    if np.any(n < 1) or np.any(n != np.round(n)):
        i = int(np.flatnonzero((n < 1) | (n != np.round(n)))[0])
        raise InvalidInputError(f"prompt {i}: n = {plain(n[i])} (expected an integer >= 1)")
    if np.any(c < 0) or np.any(c > n) or np.any(c != np.round(c)):
        i = int(np.flatnonzero((c < 0) | (c > n) | (c != np.round(c)))[0])
        raise InvalidInputError(f"prompt {i}: correct = {plain(c[i])} (expected an integer in [0, n = {plain(n[i])}])")
    ids = tuple(str(i) for i in range(n.size)) if prompt_ids is None else tuple(str(p) for p in prompt_ids)
    if len(ids) != n.size:
        raise InvalidInputError(f"prompt_ids must have {n.size} entries, got {len(ids)}")
    exact = np.asarray(n_given) if np.asarray(n_given).dtype.kind in "iuO" else n     # 2**53 + 1 stays itself
    above = np.asarray([v > MAX_COUNT for v in exact.ravel()]) if exact.dtype.kind == "O" else exact > MAX_COUNT
    if np.any(above):
        i = int(np.flatnonzero(above)[0])
        v = exact.ravel()[i]
        shown = f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e30 else plain(v)
        raise InvalidInputError(f"prompt {ids[i]!r}: n = {shown} is above the limit of {MAX_COUNT:,} samples (2^53, "
                                "where counts stop being exact)")
    if len(set(ids)) != len(ids):
        seen: dict = {}
        for i, p in enumerate(ids):
            if p in seen:
                raise InvalidInputError(f"prompt_ids: {p!r} appears twice (entries {seen[p]} and {i}); give one "
                                        "entry per prompt")
            seen[p] = i
    counts = np.stack([n - c, c], axis=1).astype(np.int64)
    return SampleTable(ids, np.array([0.0, 1.0]), counts, "counts", [])


@checked(index=arr(0, integer=True, ndim=1, distinct=True), k=arr(0, integer=True, ndim=1),
         m=arr(1, integer=True, ndim=1), N=POSITIVE_COUNT)
def check_counts(index, k, m, N: int) -> tuple:
    """Measured counts as arrays, checked.

    Parameters
    ----------
    index : array_like of int
        The measured prompts' positions in ``0..N-1``.
    k, m : array_like of int
        Their correct samples and samples.
    N : int
        Number of prompts.

    Returns
    -------
    tuple of numpy.ndarray
        ``(index, k, m)`` (int, float, float).

    Raises
    ------
    InvalidInputError
        Entries that are not whole numbers, lengths that differ or zero, an ``index`` given twice or outside
        ``0..N-1``, ``k`` outside ``0..m``, ``m < 1`` (naming the bad entries).
    """
    index = np.asarray(index, dtype=float).reshape(-1).astype(int)
    k = np.asarray(k, dtype=float).reshape(-1)
    m = np.asarray(m, dtype=float).reshape(-1)
    same_length("one entry per measured prompt", index=index, k=k, m=m)
    if np.any(index >= N):
        raise InvalidInputError(f"index must lie in 0..{N - 1} (N = {N} prompts), got "
                                f"{index[index >= N][:5].tolist()}")
    at_most("k", k, "m", m)
    return index, k, m
