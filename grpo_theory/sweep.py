"""Sweeps over (question, objective) cases that scale out: any ``concurrent.futures.Executor``.

:func:`sweep` evaluates every :class:`Case` (its stationary points, how many are stable, the stable policies,
the time taken) on an executor: a local process pool by default, or a cluster's, e.g.
``dask.distributed.Client(...).get_executor()`` or Ray's. There is no scheduler of our own. Each finished case
is appended to a CSV at once, so a killed sweep loses nothing finished and ``sweep(..., out=same_file)`` resumes.

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
import inspect
import itertools
import json
import math
import os
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._checks import checked, flag, instance, items, listed, mapping
from ._outlock import exclusive
from ._pool import stop_pool, watch_parent
from ._validate import MAX_EXACT_GROUP, out_file, plain, text_float
from .problem import (InvalidInputError, Objective, Question, as_objective, as_question,
                      require_regularised)
from .solvers import stationary_points, stationary_policy
from .sweep_file import COLUMNS, NUMBER as _NUMBER, case_key as _case_key, done_rows as _done_rows
from .sweep_file import resumed as _resumed, value_text as _value_text, write_rows as _write

__all__ = ["Case", "evaluate_case", "sweep", "cases_from_grid", "check_grid", "grid_size", "SweepInterrupted",
           "COLUMNS", "MAX_SWEEP_CASES"]



@dataclass(frozen=True)
class Case:
    """One evaluation: a unique ``key`` (the resume handle), a question and an objective.

    Parameters
    ----------
    key : str
        A non-empty one-line string, unique within a sweep: the resume handle.
    question : Question
        The question evaluated.
    objective : Objective or mapping
        An :class:`~grpo_theory.problem.Objective`, or a dict of its fields.

    Raises
    ------
    InvalidInputError
        When the key is empty or spans lines, or the question or objective is invalid (or unregularised).
    """

    key: str
    question: Question
    objective: Objective

    def __post_init__(self):
        if not isinstance(self.key, str) or not self.key or "\n" in self.key:
            raise InvalidInputError(f"a case key must be a non-empty one-line string, got {self.key!r}")
        object.__setattr__(self, "question", as_question(self.question))
        object.__setattr__(self, "objective", as_objective(self.objective))
        require_regularised(self.objective, f"case {self.key!r}")     # a case asks for stationary points


@checked(case=instance(Case, 'a Case'))
def evaluate_case(case: Case) -> dict:
    """Stationary points of one case, their stability, the policy reached from pi_ref, and the time.

    Parameters
    ----------
    case : Case
        The question and objective to evaluate, with the row's key.

    Returns
    -------
    dict
        One row with the keys :data:`COLUMNS`: ``key``, ``objective`` (its description), ``question`` (its
        repr), ``pi_ref``, ``stable_policies`` and ``reached_policy`` (JSON lists), ``n_points``,
        ``n_stable``, ``exhaustive`` and ``seconds``.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> row = evaluate_case(Case("a", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0)))
    >>> row["n_stable"], row["reached_policy"][:9]           # Eq. 14: sqrt(0.3)
    (1, '[0.547722')
    """
    t0 = time.perf_counter()
    pts = stationary_points(case.question, case.objective)
    reached = stationary_policy(case.question, case.objective)
    stable = [p.pi.tolist() for p in pts if p.stable]
    return dict(key=case.key, objective=case.objective.describe(), question=repr(case.question),
                pi_ref=json.dumps(case.question.pi_ref.tolist()),
                n_points=len(pts), n_stable=len(stable), exhaustive=bool(pts.exhaustive),
                stable_policies=json.dumps(stable), reached_policy=json.dumps(reached.pi.tolist()),
                seconds=time.perf_counter() - t0)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`sweep`; the message says how many cases are saved and how to resume."""


@checked(cases=items(Case, 'Case'), out=instance((str, os.PathLike), 'a file path', none=True), progress=flag)
def sweep(cases: Iterable[Case], *, out: str | Path | None = None, executor: Executor | str | None = None,
          max_workers: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Evaluate ``cases`` (see :func:`evaluate_case`) and return one row per case.

    Parameters
    ----------
    cases : iterable of Case
        The cases, with unique keys.
    out : str or pathlib.Path, optional
        A CSV to which each finished case is appended (flushed) as it finishes; cases whose key it
        already holds are skipped, so re-running a killed sweep resumes it.
    executor : concurrent.futures.Executor, "serial" or None, optional
        Any executor (e.g. ``dask.distributed.Client.get_executor()``); None: a local process pool
        of ``max_workers``; ``"serial"``: this process.
    max_workers : int, optional
        Workers of the local process pool.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per case (the columns :data:`COLUMNS`), in the order of ``cases``.

    Raises
    ------
    InvalidInputError
        When two cases share a key, ``executor`` or ``max_workers`` is invalid, ``out`` exists and is not a sweep file
        or holds a case's key for another question (``pi_ref``, rewards) or objective, or a row of a file without the
        ``question`` column under a case's key (its rewards cannot be compared), or another run holds ``out``'s lock ``<out>.lock`` (named, with
        its process id; the lock of a killed run is taken over with a warning).

    Examples
    --------
    See the module's example.
    """
    if isinstance(executor, str) and executor != "serial":
        raise InvalidInputError(f"executor must be an Executor, None (a local process pool) or 'serial', got "
                                f"{executor!r}; for threads pass concurrent.futures.ThreadPoolExecutor(...)")
    if executor is not None and not isinstance(executor, str) and not callable(getattr(executor, "submit", None)):
        raise InvalidInputError(f"executor must have a submit() method (a concurrent.futures.Executor), got "
                                f"{type(executor).__name__}")
    if max_workers is not None and (isinstance(max_workers, bool) or not isinstance(max_workers, (int, np.integer))
                                    or max_workers < 1):
        raise InvalidInputError(f"max_workers must be a positive integer or None, got {max_workers!r}")
    cases = listed("cases", cases, Case, "Case")
    keys = [c.key for c in cases]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise InvalidInputError(f"case keys must be unique; {dup!r} appears twice")
    out = None if out is None else out_file(out, "out")
    with exclusive(out, "sweep output"):           # one writer: two runs on one file would write each row twice
        return _run(cases, keys, out, executor, max_workers, progress)


def _run(cases: list[Case], keys: list[str], out: Path | None, executor, max_workers, progress) -> pd.DataFrame:
    """:func:`sweep` once its arguments are checked and ``out``'s lock is held."""
    done = _resumed(_done_rows(out), cases, out) if out is not None else []
    have = {r["key"] for r in done}
    todo = [c for c in cases if c.key not in have]
    if out is not None and (not out.exists() or not out.read_text(encoding="utf-8").strip()):
        _write(out, [])                     # no file, or no header yet (the lock made out's folder)
    from tqdm.auto import tqdm

    bar, fresh = tqdm(total=len(cases), initial=len(cases) - len(todo), desc="sweep", disable=not progress), []
    fh = None if out is None else out.open("a", newline="", encoding="utf-8")
    try:
        writer = None if fh is None else csv.DictWriter(fh, fieldnames=COLUMNS)

        def record(row):
            fresh.append(row)
            if writer is not None:
                writer.writerow(row)
                fh.flush()
            bar.update(1)

        try:
            if executor == "serial":
                for c in todo:
                    record(evaluate_case(c))
            else:
                own = executor is None
                pool = ProcessPoolExecutor(max_workers=max_workers, initializer=watch_parent,
                                           initargs=(os.getpid(),)) if own else executor
                interrupted = False
                try:
                    futures = [pool.submit(evaluate_case, c) for c in todo]
                    for f in as_completed(futures):
                        record(f.result())
                except KeyboardInterrupt:
                    interrupted = True
                    raise
                finally:
                    if own:
                        stop_pool(pool) if interrupted else pool.shutdown(cancel_futures=True)
        except KeyboardInterrupt:
            saved = len(cases) - len(todo) + len(fresh)
            where = (f"saved in {out}; run the same command again to resume" if out is not None
                     else "not saved (no out file)")
            raise SweepInterrupted(f"sweep interrupted: {saved} of {len(cases)} cases done, {where}") from None
    finally:
        bar.close()
        fh is None or fh.close()
    df = pd.DataFrame(done + fresh, columns=list(COLUMNS)).astype({"n_points": int, "n_stable": int, "seconds": float})
    df["exhaustive"] = df["exhaustive"].map(lambda v: v in (True, "True"))
    order = {k: i for i, k in enumerate(keys)}
    return df[df.key.isin(order)].sort_values("key", key=lambda s: s.map(order)).reset_index(drop=True)


def _product(spec: Mapping) -> list[dict]:
    """``{"beta": [0.1, 1], "group_size": 8}`` -> every combination, lists expanded."""
    return [dict(zip(spec, c)) for c in itertools.product(*(v if isinstance(v, list) else [v] for v in spec.values()))]


_GRID_KEYS = ("objectives", "questions", "simplex", "out")

#: Most cases one sweep grid may hold (at a few tenths of a second each, about a day of one core).
MAX_SWEEP_CASES = 200_000




def _yaml_number(v, key: str = "value"):
    """A string YAML 1.1 left as text although it is a number (``1.0e300``, ``1e-3``) as that number (one a double
    cannot hold, ``1e-400``, is refused naming ``key``); anything else as it is."""
    if isinstance(v, str) and _NUMBER.match(v):
        return text_float(v, f"sweep grid: {key}")
    if isinstance(v, list):
        return [_yaml_number(x, key) for x in v]
    return v


def _normalised(grid):
    """``grid`` with YAML's number-like strings read as numbers in the objectives, questions and simplex."""
    if not isinstance(grid, Mapping):
        return grid
    out = dict(grid)
    if isinstance(grid.get("objectives"), Mapping):
        out["objectives"] = {k: _yaml_number(v, k) for k, v in grid["objectives"].items()}
    if isinstance(grid.get("questions"), list):
        out["questions"] = [{k: (v if k == "name" else _yaml_number(v, f"questions[{i}].{k}")) for k, v in q.items()}
                            if isinstance(q, Mapping) else q for i, q in enumerate(grid["questions"])]
    if isinstance(grid.get("simplex"), Mapping):
        out["simplex"] = {k: _yaml_number(v, k) for k, v in grid["simplex"].items()}
    return out


def _compositions(n: int, k: int):
    """Every ``k``-tuple of integers ``>= 1`` summing to ``n``, in lexicographic order (``C(n - 1, k - 1)`` of
    them, each made once: no pass over the ``(n - 1)^(k - 1)`` candidates)."""
    if k == 1:
        yield (n,)
        return
    for first in range(1, n - k + 2):
        for rest in _compositions(n - first, k - 1):
            yield (first, *rest)


@checked(grid=mapping())
def grid_size(grid: Mapping) -> tuple[int, int]:
    """``(questions, objective combinations)`` a valid grid expands to, counted without enumerating: the
    simplex lattice's interior points are ``C(n - 1, K - 1)`` for ``step = 1/n``.

    Parameters
    ----------
    grid : mapping
        The grid, as :func:`cases_from_grid` takes it.

    Returns
    -------
    (int, int)
        The number of questions and the number of objective combinations.
    """
    n_q = len(grid.get("questions", []) or [])
    sx = grid.get("simplex")
    if isinstance(sx, Mapping) and isinstance(sx.get("rewards"), list) and isinstance(sx.get("step"), (int, float)) \
            and sx["step"] > 0 and math.isfinite(sx["step"]):
        n, k = round(1 / sx["step"]), len(sx["rewards"])
        n_q += math.comb(n - 1, k - 1) if n >= k else 0
    objectives = (grid.get("objectives") or {}).values()
    return n_q, math.prod(len(v) if isinstance(v, list) else 1 for v in objectives)


def _objective_fields(fields: dict) -> dict:
    return {k: math.inf if isinstance(v, str) and v.lower() in ("inf", ".inf") else v for k, v in fields.items()}


@checked(grid=mapping())
def check_grid(grid) -> list[str]:
    """Every problem of a sweep grid, as one line each (empty: the grid is valid); nothing is evaluated.

    Checks the top-level keys, each question (as :class:`Question` would), the simplex (``rewards`` a list,
    ``step`` = 1/n with n >= K) and every combination of the objective fields (as :class:`Objective` would).

    Parameters
    ----------
    grid : mapping
        A grid as :func:`cases_from_grid` takes it.

    Returns
    -------
    list of str
        One line per problem; empty when the grid is valid.

    Examples
    --------
    >>> check_grid({"questions": [{"pi_ref": [0.3, 0.7], "rewards": [1, 0]}], "objectives": {"beta": 0.5}})
    []
    >>> len(check_grid({"questions": [{"pi_ref": [0.3, 0.7], "rewards": [1, 0]}]}))   # no objectives
    1
    """
    if not isinstance(grid, Mapping):
        got = "nothing (an empty document)" if grid is None else f"{type(grid).__name__} {str(grid)[:60]}"
        return [f"a sweep grid must be a mapping with 'objectives' and 'questions' or 'simplex', got {got}"]
    grid = _normalised(grid)
    problems = []
    unknown = sorted(str(k) for k in grid if k not in _GRID_KEYS)
    if unknown:
        problems.append(f"unknown key(s) {unknown} (expected {', '.join(_GRID_KEYS)})")
    if "questions" in grid and "simplex" in grid:
        problems.append("both 'questions' and 'simplex': give one (a list of questions, or a simplex lattice)")
    if "objectives" not in grid:
        problems.append("missing 'objectives' (a mapping of Objective fields, each a value or a list)")
    elif not isinstance(grid["objectives"], Mapping) or not grid["objectives"]:
        problems.append(f"'objectives' must be a non-empty mapping of Objective fields, got {grid['objectives']!r}")
    elif any(isinstance(v, list) and not v for v in grid["objectives"].values()):
        empty = [str(k) for k, v in grid["objectives"].items() if isinstance(v, list) and not v]
        problems.append(f"objectives: {', '.join(empty)} {'is an empty list' if len(empty) == 1 else 'are empty lists'}"
                        " (0 cases); give at least one value")
    elif math.prod(len(v) if isinstance(v, list) else 1 for v in grid["objectives"].values()) > MAX_SWEEP_CASES:
        n_o = math.prod(len(v) if isinstance(v, list) else 1 for v in grid["objectives"].values())
        problems.append(f"objectives: {n_o:,} combinations of fields, over the limit of {MAX_SWEEP_CASES:,} cases; "
                        "split the grid into several files")
    else:
        seen = set()
        for fields in _product(grid["objectives"]):
            try:
                as_objective(_objective_fields(fields))
            except (InvalidInputError, TypeError, ValueError) as exc:
                why = str(exc).replace("group_size=math.inf", "group_size: .inf")        # the grid is YAML
                msg = f"objectives {{{', '.join(f'{k!r}: {plain(v)}' for k, v in fields.items())}}}: {why}"
                if str(exc) not in seen:
                    seen.add(str(exc))
                    problems.append(msg)
        for k, v in grid["objectives"].items():
            texts = [_value_text(k, x) for x in v] if isinstance(v, list) else []
            twice = next((t for t in texts if texts.count(t) > 1), None)
            if twice is not None:
                problems.append(f"objectives: {k} lists {twice} {texts.count(twice)} times (one case, however the "
                                "number is written); list each value once")
    if "questions" not in grid and "simplex" not in grid:
        problems.append("missing 'questions' (a list) or 'simplex' ({rewards, step})")
    if "questions" in grid:
        qs = grid["questions"]
        if not isinstance(qs, list) or not qs:
            problems.append(f"'questions' must be a non-empty list of mappings, got {qs!r}")
        else:
            names = [str(q.get("name", f"q{i}")) for i, q in enumerate(qs) if isinstance(q, Mapping)]
            problems += [f"questions: name {n!r} must be one non-empty line, given once (found {names.count(n)})"
                         for n in dict.fromkeys(names) if names.count(n) > 1 or "\n" in n or not n.strip()]
            for i, spec in enumerate(qs):
                if not isinstance(spec, Mapping):
                    problems.append(f"questions[{i}] must be a mapping (name, pi_ref, rewards, ...), got {spec!r}")
                    continue
                spec = dict(spec)
                spec.pop("name", None)
                allowed = set(inspect.signature(Question.__init__).parameters) - {"self"}
                unknown = sorted(str(k) for k in spec if k not in allowed)
                if unknown:
                    problems.append(f"questions[{i}]: unknown key(s) {unknown} (expected name and some of "
                                    f"{sorted(allowed)})")
                    continue
                try:
                    Question(**spec)
                except (InvalidInputError, ValueError, TypeError) as exc:
                    problems.append(f"questions[{i}]: {exc}")
    if "simplex" in grid:
        sx = grid["simplex"]
        if not isinstance(sx, Mapping):
            problems.append(f"'simplex' must be a mapping {{rewards, step}}, got {sx!r}")
        else:
            extra = sorted(str(k) for k in sx if k not in ("rewards", "step"))
            if extra:
                problems.append(f"simplex: unknown key(s) {extra} (expected rewards, step)")
            rewards = sx.get("rewards")
            if not isinstance(rewards, list) or len(rewards) < 2 or \
                    not all(isinstance(r, (int, float)) and not isinstance(r, bool) and math.isfinite(r)
                            for r in rewards):
                problems.append(f"simplex.rewards must be a list of at least 2 finite numbers, got {rewards!r}")
                rewards = None
            step = sx.get("step")
            if step is None:
                problems.append("simplex.step is missing (1/n for a lattice of n steps, e.g. 0.1)")
            elif isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step) or \
                    not 0 < step <= 0.5:
                problems.append(f"simplex.step must be a number 1/n in (0, 0.5], got {step!r}")
            else:
                n = round(1 / step)
                if not math.isclose(n * step, 1.0) or (rewards is not None and n < len(rewards)):
                    problems.append(f"simplex.step must be 1/n with n >= K = "
                                    f"{len(rewards) if rewards else 'the number of rewards'}, got {step!r}")
                elif n > 1000:
                    shown = f"{n:,}" if n < 10**12 else f"{float(n):.3g}"
                    problems.append(f"simplex.step {step!r} makes a lattice of n = {shown} steps; at most 1000 (a "
                                    "step of at least 0.001)")
                elif rewards is not None and math.comb(n - 1, len(rewards) - 1) > MAX_SWEEP_CASES:
                    problems.append(
                        f"simplex with K = {len(rewards)} rewards and step {step!r} has "
                        f"{math.comb(n - 1, len(rewards) - 1):,} interior lattice points, over the limit of "
                        f"{MAX_SWEEP_CASES:,} cases (about a day of one core); use a coarser step or fewer rewards")
    for fields in (_product(grid["objectives"]) if not problems and isinstance(grid.get("objectives"), Mapping)
                   else ()):
        g = fields.get("group_size")
        if isinstance(g, (int, float)) and not isinstance(g, bool) and math.isfinite(g) and g > MAX_EXACT_GROUP:
            problems.append(f"objectives: group_size {int(g):,} is above the exact path's limit of "
                            f"{MAX_EXACT_GROUP:,}; use group_size: inf (the large-G limit; the stationary points approach it as O(1/G))")
            break
    if "out" in grid and not isinstance(grid["out"], str):
        problems.append(f"'out' must be a file path, got {grid['out']!r}")
    if not problems:
        n_q, n_o = grid_size(grid)
        if n_q * n_o > MAX_SWEEP_CASES:
            problems.append(f"the grid has {n_q:,} questions x {n_o:,} objectives = {n_q * n_o:,} cases, over the "
                            f"limit of {MAX_SWEEP_CASES:,} (about a day of one core); split it into several grids or "
                            "use a coarser simplex step")
    return problems


def cases_from_grid(grid: Mapping) -> list[Case]:
    """Cases from a grid: every question times every combination of objective fields.

    Parameters
    ----------
    grid : mapping
        ``questions``: a list of ``{name, pi_ref, rewards | reward_levels+reward_probs}``, or (not both)
        ``simplex: {rewards, step}`` for every interior ``pi_ref`` on a lattice of a K-output
        simplex (``step = 1/n``); ``objectives``: a mapping of Objective fields, each a value or a
        list (every combination; ``"inf"`` is ``math.inf``).

    Returns
    -------
    list of Case
        Keys ``"<question name>|field=value,..."``, each number written as the value the computation uses
        (``beta: 1`` and ``beta: 1.0`` give ``beta=1.0``, ``group_size: 4.0`` gives ``group_size=4``).

    Raises
    ------
    InvalidInputError
        Naming every problem :func:`check_grid` finds (missing ``objectives`` or question source, an
        invalid question, a step that is not ``1/n`` with ``n >= K``, an invalid objective), before any
        work starts.

    Examples
    --------
    >>> cases = cases_from_grid({"questions": [{"name": "q", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}],
    ...                          "objectives": {"beta": [0.5, 1.0], "group_size": "inf"}})
    >>> [c.key for c in cases]
    ['q|beta=0.5,group_size=inf', 'q|beta=1.0,group_size=inf']
    """
    problems = check_grid(grid)
    grid = _normalised(grid)
    if problems:             # every problem at once, before any work starts
        raise InvalidInputError(f"the sweep grid has {len(problems)} problem(s): "
                                + "; ".join(f"({i + 1}) {p}" for i, p in enumerate(problems)))
    questions = []
    for i, spec in enumerate(grid.get("questions", [])):
        spec = dict(spec)
        name = str(spec.pop("name", f"q{i}"))
        questions.append((name, Question(**spec)))
    if "simplex" in grid:
        s = grid["simplex"]
        rewards, step = list(s["rewards"]), float(s["step"])
        n = round(1 / step)                 # 1/n with n >= K: check_grid refused any other step
        for counts in _compositions(n, len(rewards)):
            pi = np.array(counts) / n
            questions.append(("pi=" + ",".join(f"{x:.4g}" for x in pi), Question(pi, rewards=rewards)))
    objectives = _product(grid["objectives"])
    cases = []
    for (qname, q), fields in itertools.product(questions, objectives):
        obj = as_objective(_objective_fields(fields))
        cases.append(Case(_case_key(qname, fields), q, obj))
    return cases
