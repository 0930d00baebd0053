"""The multi-start search over three or more classes spends a work budget counted in evaluations of the class
KKT residual (times the number of classes), not seconds: the same question gets the same answer on any machine,
and a search over many classes ends in bounded work, saying so, with the point reached from pi_ref always
among its points."""

from __future__ import annotations

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_points, stationary_policy
from grpo_theory.solvers import classes, multi_class

Q6 = Question([1 / 6] * 6, rewards=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
OBJ = Objective(beta=0.5, group_size=2, normalization="shift")


@pytest.fixture
def counted(monkeypatch):
    """Count the calls of the class KKT residual (the unit of the budget)."""
    calls = [0]
    kkt = classes.ClassProblem.kkt

    def counting(self, x):
        calls[0] += 1
        return kkt(self, x)

    monkeypatch.setattr(classes.ClassProblem, "kkt", counting)
    return calls


def test_a_binding_budget_stops_the_starts_says_so_and_keeps_the_point_reached(monkeypatch, counted):
    monkeypatch.setattr(multi_class, "SEARCH_WORK_BUDGET", 6 * 400)        # 400 evaluations at 6 classes
    spent, reached = [], stationary_policy(Q6, OBJ)
    for n_starts in (50, 1000):                     # more starts cost nothing more once the budget binds
        counted[0] = 0
        pts = stationary_points(Q6, OBJ, n_starts=n_starts, exhaustive=False)
        spent.append(counted[0])
        assert "work budget" in pts.message and "ran out after" in pts.message, pts.message
        assert any(np.array_equal(p.pi, reached.pi) for p in pts), (reached.pi, [p.pi for p in pts])
    assert spent[0] == spent[1], spent


def test_an_unbinding_budget_polishes_every_start_and_says_nothing_of_it(counted):
    pts = stationary_points(Q6, OBJ, n_starts=12, exhaustive=False)
    assert "work budget" not in pts.message and "from 13 points over 6 classes" in pts.message, pts.message
    assert counted[0] * 6 < multi_class.SEARCH_WORK_BUDGET


def test_solve_refuses_more_classes_than_its_table_can_search_naming_the_count(capsys):
    from grpo_theory import cli_solve
    from grpo_theory.cli import main

    k = cli_solve.SOLVE_MAX_CLASSES + 1
    argv = ["solve", "--pi-ref", *[repr(1 / k)] * k, "--rewards", *[str(i) for i in range(k)], "--beta", "0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{k:,} classes" in err and f"more than {cli_solve.SOLVE_MAX_CLASSES} classes" in err, err
    assert "stationary_policy" in err, err


def test_solve_prints_a_line_per_variant_for_many_classes(monkeypatch, capsys):
    from grpo_theory import cli_solve
    from grpo_theory.cli import main

    monkeypatch.setattr(cli_solve, "SOLVE_PROGRESS_CLASSES", 3)      # three classes stand for thirty
    assert main(["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "0", "0.5", "1", "--beta", "0.5"]) == 0
    err = capsys.readouterr().err
    assert [line.split(", ")[0] for line in err.splitlines()] == [
        f"grpo-theory solve: solving GRPO {pen}/{norm} ({i}/4)"
        for i, (pen, norm) in enumerate([("reverse", "scale"), ("reverse", "shift"), ("direct", "scale"),
                                         ("direct", "shift")], 1)], err
    assert "a multi-start search over 3 classes per variant" in err, err


def test_solve_refuses_a_group_whose_exact_searches_would_run_for_minutes_naming_the_largest_g(capsys):
    """Three levels at G = 300: 45,150 count vectors per P_G evaluation, about 3 minutes of certified searches
    (measured); refused up front with the largest G within the limit, found independently here from the count
    C(G + L - 2, L - 1) of the other G - 1 members' level counts."""
    from math import comb

    from grpo_theory import cli_solve
    from grpo_theory.cli import main

    assert main(["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "0.5",
                 "--group-size", "300"]) == 2
    err = capsys.readouterr().err
    limit = cli_solve.SOLVE_MAX_COUNT_VECTORS_CERTIFIED
    g_max = max(g for g in range(2, 300) if comb(g + 1, 2) <= limit)
    assert f"{comb(301, 2):,} count vectors" in err and f"a G of at most {g_max}," in err, err
    assert "--group-size inf" in err, err
