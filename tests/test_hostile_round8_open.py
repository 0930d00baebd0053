"""Regression tests of the findings the eighth hostile audit left open (docs/reliability.md, "Hostile input, eighth
round"; the audit's cases in ``tests/hostile_audit_round8_*.py``). Each is a rule, tested through an entry point that
uses it; expected numbers come from the maths contract's sums written out here, not from the package."""

from __future__ import annotations

import csv
import json

import pytest

from grpo_theory import InvalidInputError
from grpo_theory import sweep as sweep_module
from grpo_theory.sweep import COLUMNS, cases_from_grid, check_grid, sweep

# ---------------------------------------------------------------- sweep: a case is its numbers, not the grid's text
QUESTION = {"name": "q", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}


def _keys(objectives):
    return [c.key for c in cases_from_grid({"questions": [QUESTION], "objectives": objectives})]


@pytest.mark.parametrize("one, other", [({"beta": 1}, {"beta": 1.0}), ({"beta": 0.3}, {"beta": "3e-1"}),
                                        ({"beta": 1.0, "group_size": 4}, {"beta": 1.0, "group_size": 4.0}),
                                        ({"beta": 1.0, "group_size": "inf"}, {"beta": 1.0, "group_size": float("inf")})])
def test_two_spellings_of_one_number_are_one_case(one, other):
    assert _keys(one) == _keys(other)


def test_two_numbers_are_two_cases():
    assert len(set(_keys({"beta": [0.3, 0.30000000000000004], "group_size": [2, 3]}))) == 4


def test_a_grid_listing_one_number_twice_is_refused_naming_the_field():
    problems = check_grid({"questions": [QUESTION], "objectives": {"beta": [1, 0.5, 1.0]}})
    assert len(problems) == 1 and "beta lists 1.0 2 times" in problems[0]


def _row(key, pi_ref="[0.3, 0.7]"):
    """A complete row of a sweep file (its numbers are not read back on a resume, only its key)."""
    return dict(key=key, objective="o", pi_ref=pi_ref, n_points=1, n_stable=1, exhaustive=True,
                stable_policies="[[0.5, 0.5]]", reached_policy="[0.5, 0.5]", seconds=0.1)


def test_a_file_written_with_the_grids_spellings_resumes_without_computing(tmp_path, monkeypatch):
    """An earlier version keyed a case by the grid's text: ``beta: 1`` was ``beta=1``, ``group_size: 4.0`` was
    ``group_size=4.0``, and a resume after the grid was re-spelled computed the case again under its second key. The
    resume must take both rows for the case they hold: nothing computed, one row per case, the file rewritten."""
    out = tmp_path / "g.csv"
    old = ["q|beta=1,group_size=4.0", "q|beta=1.0,group_size=4",      # one case, twice (the old defect's file)
           "q|beta=0.5,group_size=4", "other|beta=2"]                  # a second case, and a foreign row
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(_row(k) for k in old)

    def computed(case):
        raise AssertionError(f"{case.key} was computed again")

    monkeypatch.setattr(sweep_module, "evaluate_case", computed)
    cases = cases_from_grid({"questions": [QUESTION], "objectives": {"beta": [1, 0.5], "group_size": 4.0}})
    df = sweep(cases, out=out, executor="serial", progress=False)
    assert df.key.tolist() == ["q|beta=1.0,group_size=4", "q|beta=0.5,group_size=4"]
    with open(out, newline="", encoding="utf-8") as fh:
        keys = [r["key"] for r in csv.DictReader(fh)]
    assert keys == ["q|beta=1.0,group_size=4", "q|beta=0.5,group_size=4", "other|beta=2"]
    assert json.loads(df.reached_policy[0]) == [0.5, 0.5]          # the file's row, not a new one


def test_two_cases_whose_keys_differ_only_in_spelling_are_matched_exactly(tmp_path, monkeypatch):
    """Keys given in Python are the user's: ``a|b=1`` and ``a|b=1.0`` as two cases each take only their own row."""
    from grpo_theory import Objective, Question
    from grpo_theory.sweep import Case

    out = tmp_path / "s.csv"
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows([_row("a|b=1"), _row("a|b=1.0")])
    monkeypatch.setattr(sweep_module, "evaluate_case", lambda case: pytest.fail(f"{case.key} computed"))
    q = Question([0.3, 0.7], rewards=[1, 0])
    df = sweep([Case("a|b=1", q, Objective(beta=1.0)), Case("a|b=1.0", q, Objective(beta=1.0))], out=out,
               executor="serial", progress=False)
    assert df.key.tolist() == ["a|b=1", "a|b=1.0"]


def test_a_case_key_must_still_be_unique():
    from grpo_theory import Objective, Question
    from grpo_theory.sweep import Case

    q = Question([0.3, 0.7], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match="'k' appears twice"):
        sweep([Case("k", q, Objective(beta=1.0))] * 2, executor="serial", progress=False)
