"""Sweeps over (question, objective) cases that scale out: any ``concurrent.futures.Executor``.

:func:`sweep` evaluates every :class:`Case` (its stationary points, how many are stable, the
stable policies, the time taken) on an executor: a local process pool by default, or a cluster's,
e.g. ``dask.distributed.Client(...).get_executor()`` or Ray's. There is no scheduler of our own.
Each finished case is appended to a CSV at once, so a killed sweep loses nothing finished and
``sweep(..., out=same_file)`` resumes with the cases still missing.

    >>> from grpo_theory import Objective, Question
    >>> from grpo_theory.sweep import Case, sweep
    >>> cases = [Case(f"beta={b}", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=b, group_size=2))
    ...          for b in (0.5, 1.0)]
    >>> df = sweep(cases, executor="serial", progress=False)
    >>> df.n_stable.tolist()
    [1, 1]
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._io import atomic_write
from .problem import InvalidInputError, Objective, Question, as_objective, as_question
from .solvers import stationary_points, stationary_policy

__all__ = ["Case", "evaluate_case", "sweep", "cases_from_grid", "COLUMNS"]

#: The columns of a sweep's CSV, in order.
COLUMNS = ("key", "objective", "pi_ref", "n_points", "n_stable", "exhaustive", "stable_policies",
           "reached_policy", "seconds")


@dataclass(frozen=True)
class Case:
    """One evaluation: a unique ``key`` (the resume handle), a question and an objective."""

    key: str
    question: Question
    objective: Objective

    def __post_init__(self):
        if not isinstance(self.key, str) or not self.key or "\n" in self.key:
            raise InvalidInputError(f"a case key must be a non-empty one-line string, got {self.key!r}")
        object.__setattr__(self, "question", as_question(self.question))
        object.__setattr__(self, "objective", as_objective(self.objective))


def evaluate_case(case: Case) -> dict:
    """Stationary points of one case, their stability, the policy reached from pi_ref, and the time."""
    t0 = time.perf_counter()
    pts = stationary_points(case.question, case.objective)
    reached = stationary_policy(case.question, case.objective)
    stable = [p.pi.tolist() for p in pts if p.stable]
    return dict(key=case.key, objective=case.objective.describe(), pi_ref=json.dumps(case.question.pi_ref.tolist()),
                n_points=len(pts), n_stable=len(stable), exhaustive=bool(pts.exhaustive),
                stable_policies=json.dumps(stable), reached_policy=json.dumps(reached.pi.tolist()),
                seconds=time.perf_counter() - t0)


def _done_rows(out: Path) -> list[dict]:
    """Complete rows of an earlier (perhaps killed) run; a torn last line is dropped and the file rewritten."""
    if not out.exists():
        return []
    rows, torn = [], False
    with out.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return []
        if tuple(header) != COLUMNS:
            raise InvalidInputError(f"{out} is not a sweep file (columns {header}, expected {list(COLUMNS)})")
        for rec in reader:
            if len(rec) != len(COLUMNS):
                torn = True
                continue
            try:
                json.loads(rec[COLUMNS.index("stable_policies")])
                float(rec[-1])
            except ValueError:
                torn = True
                continue
            rows.append(dict(zip(COLUMNS, rec)))
    if torn:
        _write(out, rows)
    return rows


def _write(out: Path, rows: list[dict]) -> None:
    def write(p):
        with open(p, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    atomic_write(out, write)


def sweep(cases: Iterable[Case], *, out: str | Path | None = None, executor: Executor | str | None = None,
          max_workers: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Evaluate ``cases`` (see :func:`evaluate_case`) and return one row per case.

    ``executor``: any ``concurrent.futures.Executor`` (e.g. ``dask.distributed.Client.get_executor()``);
    ``None`` a local process pool of ``max_workers``; ``"serial"`` this process. ``out``: a CSV to which
    each finished case is appended (flushed) as it finishes; cases whose key it already holds are
    skipped, so re-running a killed sweep resumes it.
    """
    cases = list(cases)
    keys = [c.key for c in cases]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise InvalidInputError(f"case keys must be unique; {dup!r} appears twice")
    out = None if out is None else Path(out)
    done = _done_rows(out) if out is not None else []
    have = {r["key"] for r in done}
    todo = [c for c in cases if c.key not in have]
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists():
            _write(out, [])
    from tqdm.auto import tqdm

    bar = tqdm(total=len(cases), initial=len(cases) - len(todo), desc="sweep", disable=not progress)
    fresh = []
    fh = None if out is None else out.open("a", newline="", encoding="utf-8")
    try:
        writer = None if fh is None else csv.DictWriter(fh, fieldnames=COLUMNS)

        def record(row):
            fresh.append(row)
            if writer is not None:
                writer.writerow(row)
                fh.flush()
            bar.update(1)

        if executor == "serial":
            for c in todo:
                record(evaluate_case(c))
        else:
            own = executor is None
            pool = ProcessPoolExecutor(max_workers=max_workers) if own else executor
            try:
                futures = [pool.submit(evaluate_case, c) for c in todo]
                for f in as_completed(futures):
                    record(f.result())
            finally:
                if own:
                    pool.shutdown(cancel_futures=True)
    finally:
        bar.close()
        if fh is not None:
            fh.close()
    df = pd.DataFrame(done + fresh, columns=list(COLUMNS))
    for col, kind in (("n_points", int), ("n_stable", int), ("seconds", float)):
        df[col] = df[col].astype(kind)
    df["exhaustive"] = df["exhaustive"].map(lambda v: v in (True, "True"))
    order = {k: i for i, k in enumerate(keys)}
    return df[df.key.isin(order)].sort_values("key", key=lambda s: s.map(order)).reset_index(drop=True)


def _product(spec: Mapping) -> list[dict]:
    """``{"beta": [0.1, 1], "group_size": 8}`` -> every combination, lists expanded."""
    names = list(spec)
    values = [v if isinstance(v, list) else [v] for v in spec.values()]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def cases_from_grid(grid: Mapping) -> list[Case]:
    """Cases from a grid: ``questions`` (a list of ``{name, pi_ref, rewards | reward_levels+reward_probs}``,
    or ``simplex: {rewards, step}`` for every interior pi_ref on a lattice of a K-output simplex) times
    ``objectives`` (a mapping of Objective fields, each a value or a list: every combination)."""
    if not isinstance(grid, Mapping) or "objectives" not in grid or \
            ("questions" not in grid and "simplex" not in grid):
        raise InvalidInputError("a sweep grid needs 'objectives' and either 'questions' or 'simplex', got "
                                f"{sorted(grid) if isinstance(grid, Mapping) else grid!r}")
    questions = []
    for i, spec in enumerate(grid.get("questions", [])):
        spec = dict(spec)
        name = str(spec.pop("name", f"q{i}"))
        questions.append((name, Question(**spec)))
    if "simplex" in grid:
        s = grid["simplex"]
        rewards, step = list(s["rewards"]), float(s["step"])
        n = round(1 / step)
        if not math.isclose(n * step, 1.0) or n < len(rewards):
            raise InvalidInputError(f"simplex step must be 1/n with n >= K, got {step!r}")
        for counts in itertools.product(range(1, n), repeat=len(rewards) - 1):
            last = n - sum(counts)
            if last >= 1:
                pi = np.array(list(counts) + [last]) / n
                questions.append(("pi=" + ",".join(f"{x:.4g}" for x in pi), Question(pi, rewards=rewards)))
    objectives = _product(grid["objectives"])
    cases = []
    for (qname, q), fields in itertools.product(questions, objectives):
        obj = as_objective({k: math.inf if isinstance(v, str) and v.lower() in ("inf", ".inf") else v
                            for k, v in fields.items()})
        key = f"{qname}|" + ",".join(f"{k}={v}" for k, v in fields.items())
        cases.append(Case(key, q, obj))
    return cases
