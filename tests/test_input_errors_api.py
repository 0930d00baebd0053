"""Library-level errors of issue 25: sweep's executor and workers, grids as a whole, plain numbers."""

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question
from grpo_theory.cli import _cli_message
from grpo_theory.preference import ExactEvaluationTooLarge
from grpo_theory.sweep import Case, check_grid, sweep

CASE = [Case("a", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0))]


@pytest.mark.parametrize("executor", ["threads", "processes", 3])
def test_sweep_rejects_unknown_executors(executor):
    with pytest.raises(InvalidInputError, match="executor"):
        sweep(CASE, executor=executor, progress=False)


@pytest.mark.parametrize("n", [0, -2, 1.5, True])
def test_sweep_rejects_bad_worker_counts(n):
    with pytest.raises(InvalidInputError, match="max_workers"):
        sweep(CASE, max_workers=n, progress=False)


def test_check_grid_lists_every_problem():
    problems = check_grid({"objectives": {"beta": [-1, "abc"]}, "questions": [1, {"pi_ref": [0.3, 0.8],
                                                                                    "rewards": [1, 0]}],
                           "simplex": {"rewards": [1, 0]}, "extra": 1})
    text = " | ".join(problems)
    for part in ("extra", "-1", "'abc'", "questions[0]", "questions[1]", "simplex.step is missing"):
        assert part in text, (part, problems)
    assert check_grid({"objectives": {"beta": 1}, "simplex": {"rewards": [1, 0], "step": 0.5}}) == []


@pytest.mark.parametrize("make,shown", [
    (lambda: Question([np.float64(0.3), 0.8], rewards=[1, 0]), "sum 1.1"),
    (lambda: Objective(beta=np.float64(-1.4), group_size=2), "got -1.4"),
    (lambda: Objective(beta=1.0, group_size=np.float64(2.5)), "got 2.5"),
])
def test_numbers_in_messages_are_plain(make, shown):
    with pytest.raises(InvalidInputError) as info:
        make()
    assert shown in str(info.value) and "np.float64" not in str(info.value)


def test_exact_too_large_cli_message_speaks_to_a_shell_user():
    exc = ExactEvaluationTooLarge("exact P_G needs 9 count vectors for G=5 and L=3 reward levels, over the limit "
                                  "max_count_vectors=1; use monte_carlo_preference(...) for an estimate with its "
                                  "standard error, or raise the limit")
    msg = _cli_message(exc)
    assert "--group-size inf" in msg and "G=5" in msg
    assert "\n" not in msg
