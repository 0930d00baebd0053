"""One protocol for every study: ``run_study(name, **settings) -> StudyResult``.

The six studies (``small``, ``tree``, ``kl``, ``smollm2``, ``free``, ``trl``) keep their own runner
functions, with their own settings; :data:`STUDIES` is the table that says, for each, where its runner
lives, what it needs, its output folder, its default number of steps, the shape of what it returns
and which columns its printed table leaves out. :func:`run_study` reads that table, so
``grpo-theory validate --study NAME`` is one lookup, not a chain of branches, and a new study is one
entry here (plus its CLI settings in ``cli.py``).

Importing this module imports no study (each one imports torch): a runner's module is imported
when :func:`run_study` calls it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError

#: The questions ``validate --quick`` (``run_validation(quick=True)``) trains at most.
QUICK_MAX_QUESTIONS = 10

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _steps_keyword(steps: int | None) -> dict:
    return {"steps": steps}


def _steps_in_spec(steps: int | None) -> dict:
    return {"spec": {"max_steps": steps}}


@dataclass(frozen=True)
class StudySpec:
    """Where a study's runner lives and how to call it.

    Parameters
    ----------
    name : str
        The study's name (``validate --study NAME``).
    runner : str
        ``"module:function"``, the module relative to :mod:`grpo_theory.studies`; imported only when run.
    needs : str
        What the study needs installed, in words (the CLI's hint when an import fails).
    out : str
        Its default output folder.
    steps : int or None
        Its default number of training steps (None: the runner's own default).
    returns_rows : bool
        True when the runner returns ``(rows, summary)``, False when it returns the summary alone.
    hidden : tuple of str
        Summary columns left out of the printed table (kept in :attr:`StudyResult.summary`).
    requires : tuple of str
        Modules imported before the runner's, so that a missing extra fails with ImportError first.
    note : str or None
        A line printed after the table (``{out}`` is the run folder), or None.
    steps_as : callable
        Maps the number of steps to the runner's keyword arguments (most take ``steps=``).
    """

    name: str
    runner: str
    needs: str
    out: str
    steps: int | None
    returns_rows: bool = False
    hidden: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    note: str | None = None
    steps_as: Callable[[int | None], dict] = field(default=_steps_keyword, repr=False)

    def function(self) -> Callable:
        """The runner function (imports its module, and torch with it)."""
        for module in self.requires:
            importlib.import_module(module)
        module, _, name = self.runner.partition(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)


@dataclass(frozen=True)
class StudyResult:
    """What one study run gave.

    Parameters
    ----------
    name : str
        The study's name.
    out : str
        The run folder (every table is also written there).
    summary : pandas.DataFrame
        The per-configuration summary, as the runner returned it.
    rows : pandas.DataFrame or None
        The per-run rows, for the studies that return them (``smollm2``, ``free``); None otherwise.
    table : pandas.DataFrame
        ``summary`` without the columns the printed table leaves out.
    note : str or None
        The line printed after the table, or None.
    """

    name: str
    out: str
    summary: pd.DataFrame
    rows: pd.DataFrame | None
    table: pd.DataFrame
    note: str | None = None


#: Every study, by name (the CLI's ``--study`` choices, in this order).
STUDIES: dict[str, StudySpec] = {s.name: s for s in (
    StudySpec("small", "small:run_validation", "torch", "runs/validate", None,
              note="wrote {out}/results.csv, summary.csv, overall.json and figures"),
    StudySpec("tree", "tree:run_tree_study", "torch", "runs/validate_tree", 800),
    StudySpec("kl", "kl:run_kl_study", "torch", "runs/validate_kl", 800, hidden=("objective",)),
    StudySpec("smollm2", "smollm2:run_gating_pass", "torch and the train extra", "runs/validate_smollm2", 600,
              returns_rows=True),
    StudySpec("free", "free:run_free_study", "torch and the train extra", "runs/free_generation", 800,
              returns_rows=True, steps_as=_steps_in_spec),
    StudySpec("trl", "trl:run_trl_validation", "torch and the trl extra", "runs/validate_trl", 600,
              hidden=("warnings",), requires=("trl",)),
)}


def study_spec(name: str) -> StudySpec:
    """The table's entry for ``name``; InvalidInputError naming it and the known studies if there is none."""
    try:
        return STUDIES[name]
    except (KeyError, TypeError):
        raise InvalidInputError(f"unknown study {name!r}; expected one of {', '.join(STUDIES)}") from None


def _merge(defaults: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """``settings`` over ``defaults``; a dict given for a dict default (``free``'s ``spec``) is merged into it."""
    merged = dict(defaults)
    for key, value in settings.items():
        if isinstance(merged.get(key), dict) and isinstance(value, Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def run_study(name: str, *, out: str | None = None, steps: int | None = None, **settings) -> StudyResult:
    """Run the study ``name`` with its runner and return what it gave.

    Parameters
    ----------
    name : str
        One of :data:`STUDIES` (``small``, ``tree``, ``kl``, ``smollm2``, ``free``, ``trl``).
    out : str, optional
        The run folder (default: the study's own, e.g. ``runs/validate_kl``).
    steps : int, optional
        Training steps (default: the study's own).
    **settings
        The runner's other keyword arguments, passed as they are (see each runner's docstring).

    Returns
    -------
    StudyResult

    Raises
    ------
    InvalidInputError
        For an unknown study, or a setting its runner does not take (both named).
    ImportError
        When torch or the study's extra is missing.
    """
    spec = study_spec(name)
    out = out or spec.out
    kwargs = _merge(spec.steps_as(steps if steps is not None else spec.steps), settings)
    runner = spec.function()
    params = inspect.signature(runner).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise InvalidInputError(f"study {name!r} takes no setting {', '.join(map(repr, unknown))}; its settings: "
                                    f"{', '.join(p for p in params if p != 'out_dir')}")
    result = runner(out, **kwargs)
    rows, summary = result if spec.returns_rows else (None, result)
    table = summary.drop(columns=list(spec.hidden)) if spec.hidden else summary
    return StudyResult(name=name, out=str(out), summary=summary, rows=rows, table=table,
                       note=spec.note.format(out=out) if spec.note else None)
