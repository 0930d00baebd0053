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

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError, TheoryWarning

__all__ = ["SampleTable", "read_samples", "samples_from_counts", "PredictWarning"]


class PredictWarning(TheoryWarning):
    """Something about a prediction's input the user should know (excluded rows, unmodelled settings).

    Given by :func:`read_samples` (rows left out, e.g. an empty reward) and :func:`predict`; a
    :class:`~grpo_theory.errors.TheoryWarning`, so filtering that silences it too.
    """


@dataclass(frozen=True)
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

    prompt_ids: tuple
    levels: np.ndarray
    counts: np.ndarray
    layout: str
    excluded: list = field(default_factory=list)
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
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{where}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise InvalidInputError(f"{where}: {what} must be finite, got {value!r}")
    return x


def _count(value, what: str, where: str) -> int:
    x = _number(value, what, where)
    if x < 0 or not x.is_integer():
        raise InvalidInputError(f"{where}: {what} must be a non-negative integer, got {value!r}")
    return int(x)


def _records(path: Path) -> list[tuple[int, dict]]:
    """``(line, record)`` pairs of a CSV (header on line 1) or JSONL file, values as read (strings for CSV)."""
    if not path.is_file():
        raise InvalidInputError(f"samples {str(path)!r}: no such file (expected a .csv or .jsonl of samples)")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        out = []
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"samples {path.name} line {i}: not valid JSON ({exc})") from None
            if not isinstance(rec, dict):
                raise InvalidInputError(f"samples {path.name} line {i}: expected a JSON object, got {rec!r}")
            if isinstance(rec.get("counts"), dict):       # {"counts": {"0": 3, "1": 5}} -> count_<level> keys
                rec = {**{k: v for k, v in rec.items() if k != "counts"},
                       **{f"count_{lv}": c for lv, c in rec["counts"].items()}}
            out.append((i, rec))
        return out
    if path.suffix.lower() != ".csv":
        raise InvalidInputError(f"samples {str(path)!r}: expected a .csv or .jsonl file, got {path.suffix!r}")
    import csv
    import io

    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None:
        raise InvalidInputError(f"samples {path.name}: the file is empty (expected a header row)")
    return [(i, {k.strip(): v for k, v in rec.items() if k is not None}) for i, rec in enumerate(reader, start=2)]


def _declared(levels) -> np.ndarray | None:
    if levels is None:
        return None
    arr = np.asarray([float(v) for v in levels])
    if arr.size < 2 or np.unique(arr).size != arr.size or not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"levels must be at least two distinct finite numbers, got {list(levels)!r}")
    return np.sort(arr)


def read_samples(source, *, levels=None) -> SampleTable:
    """Read a samples file (CSV or JSONL) in any of the three layouts (see the module doc).

    Parameters
    ----------
    source : str or Path
        The file; ``.csv`` (header row) or ``.jsonl`` (one object a line).
    levels : sequence of float, optional
        The reward levels the verifier can give. Default: ``(0, 1)`` for per-sample rows whose rewards
        are all 0 or 1, otherwise the distinct rewards seen. A reward outside the declared levels is an
        error naming its row.

    Returns
    -------
    SampleTable

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
    path = Path(source)
    records = _records(path)
    name = path.name
    if not records:
        raise InvalidInputError(f"samples {name}: no rows")
    keys = set().union(*(r.keys() for _, r in records))
    if "prompt_id" not in keys:
        raise InvalidInputError(f"samples {name}: no 'prompt_id' column; found columns {sorted(keys)}")
    declared = _declared(levels)
    level_cols = sorted(k for k in keys if k.startswith("count_"))
    if "reward" in keys:
        table = _from_rows(records, name, declared)
    elif {"n", "correct"} <= keys:
        table = _from_counts(records, name)
    elif level_cols:
        table = _from_level_counts(records, name, level_cols, declared)
    else:
        raise InvalidInputError(
            f"samples {name}: no reward column. Expected one of: 'reward' (one row per sample), 'n' and 'correct' "
            f"(counts), or 'count_<level>' columns (reward-level counts); found columns {sorted(keys)}")
    table = SampleTable(table.prompt_ids, table.levels, table.counts, table.layout, table.excluded, str(path))
    if table.excluded:
        warnings.warn(f"samples {name}: {len(table.excluded)} row(s) excluded (first: line {table.excluded[0][0]}, "
                      f"{table.excluded[0][1]}); they are counted in the summary", PredictWarning, stacklevel=2)
    return table


def _prompt(rec: dict, where: str) -> str:
    pid = rec.get("prompt_id")
    if pid is None or str(pid).strip() == "":
        raise InvalidInputError(f"{where}: empty prompt_id (expected an identifier for the prompt)")
    return str(pid).strip()


def _from_rows(records, name: str, declared) -> SampleTable:
    pids, rewards, lines, excluded = [], [], [], []
    for line, rec in records:
        where = f"samples {name} line {line}"
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
        raise InvalidInputError(f"samples {name} line {lines[bad]}: reward {r[bad]:g} is not one of the "
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
        where = f"samples {name} line {line}"
        pid = _prompt(rec, where)
        n = _count(rec.get("n"), "n", where)
        c = _count(rec.get("correct"), "correct", where)
        if n == 0:
            raise InvalidInputError(f"{where}: prompt {pid!r} has n = 0 samples (expected n >= 1)")
        if c > n:
            raise InvalidInputError(f"{where}: prompt {pid!r} has correct = {c} > n = {n}")
        if pid in seen:
            raise InvalidInputError(f"{where}: prompt {pid!r} appears again (first on line {seen[pid]}); give one "
                                    "row per prompt in a counts file")
        seen[pid] = line
        rows.append((pid, n - c, c))
    counts = np.array([[a, b] for _, a, b in rows], dtype=np.int64)
    return SampleTable(tuple(p for p, _, _ in rows), np.array([0.0, 1.0]), counts, "counts", [])


def _from_level_counts(records, name: str, level_cols: list, declared) -> SampleTable:
    lv = []
    for col in level_cols:
        try:
            lv.append(float(col[len("count_"):]))
        except ValueError:
            raise InvalidInputError(f"samples {name}: column {col!r} does not name a reward level "
                                    "(expected count_<number>, e.g. count_0.5)") from None
    lv = np.asarray(lv)
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
        where = f"samples {name} line {line}"
        pid = _prompt(rec, where)
        row = np.zeros(declared.size, dtype=np.int64)
        for col in level_cols:
            v = rec.get(col)
            row[col_of[col]] += 0 if v is None or str(v).strip() == "" else _count(v, col, where)
        if row.sum() == 0:
            raise InvalidInputError(f"{where}: prompt {pid!r} has n = 0 samples (every count is 0 or empty)")
        if pid in seen:
            raise InvalidInputError(f"{where}: prompt {pid!r} appears again (first on line {seen[pid]})")
        seen[pid] = line
        pids.append(pid)
        counts.append(row)
    return SampleTable(tuple(pids), declared, np.array(counts), "level_counts", [])


def samples_from_counts(n, correct, prompt_ids=None) -> SampleTable:
    """A binary :class:`SampleTable` from arrays of ``n`` and ``correct`` (no file).

    Parameters
    ----------
    n : array_like of int
        Samples per prompt ``n_x``, each ``>= 1``.
    correct : array_like of int
        Correct samples per prompt ``c_x``, each in ``[0, n_x]``.
    prompt_ids : sequence, optional
        One id per prompt (default ``"0", "1", ...``).

    Returns
    -------
    SampleTable
        Levels ``(0, 1)``, counts ``[n_x - c_x, c_x]``, layout ``"counts"``.

    Raises
    ------
    InvalidInputError
        Shapes that differ, an ``n_x < 1`` or a ``c_x`` outside ``[0, n_x]`` (naming the prompt), or the
        wrong number of ids.

    Examples
    --------
    >>> samples_from_counts([10, 4], [3, 0]).counts.tolist()
    [[7, 3], [4, 0]]
    """
    n = np.asarray(n)
    c = np.asarray(correct)
    if n.shape != c.shape or n.ndim != 1 or n.size == 0:
        raise InvalidInputError(f"n and correct must be 1-d arrays of the same length, got shapes {n.shape}, {c.shape}")
    if np.any(n < 1) or np.any(n != np.round(n)):
        i = int(np.flatnonzero((n < 1) | (n != np.round(n)))[0])
        raise InvalidInputError(f"prompt {i}: n = {n[i]!r} (expected an integer >= 1)")
    if np.any(c < 0) or np.any(c > n) or np.any(c != np.round(c)):
        i = int(np.flatnonzero((c < 0) | (c > n) | (c != np.round(c)))[0])
        raise InvalidInputError(f"prompt {i}: correct = {c[i]!r} (expected an integer in [0, n = {n[i]}])")
    ids = tuple(str(i) for i in range(n.size)) if prompt_ids is None else tuple(str(p) for p in prompt_ids)
    if len(ids) != n.size:
        raise InvalidInputError(f"prompt_ids must have {n.size} entries, got {len(ids)}")
    counts = np.stack([n - c, c], axis=1).astype(np.int64)
    return SampleTable(ids, np.array([0.0, 1.0]), counts, "counts", [])
