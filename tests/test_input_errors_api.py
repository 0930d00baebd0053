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


def test_too_large_is_not_a_bad_input():
    """``except InvalidInputError`` must not swallow a valid input that is only too large to sum exactly."""
    from grpo_theory.preference import level_expectations

    with pytest.raises(ExactEvaluationTooLarge) as info:
        level_expectations(np.array([0.0, 0.5, 1.0]), np.log(np.full((1, 3), 1 / 3)),
                           Objective(beta=1.0, group_size=8), max_count_vectors=10)
    assert not isinstance(info.value, InvalidInputError) and isinstance(info.value, ValueError)
    assert not issubclass(ExactEvaluationTooLarge, InvalidInputError)


def _bare_value_errors(source: str) -> list[int]:
    """Lines of ``raise ValueError`` / ``raise ValueError(...)`` in ``source``."""
    import ast

    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "ValueError":
                hits.append(node.lineno)
    return sorted(hits)


def test_the_package_raises_no_bare_value_error():
    """errors.py promises InvalidInputError for bad input: no ``raise ValueError`` anywhere in the package
    (a check that is not about input raises RuntimeError, like the solvers' "reaching here is a bug")."""
    from pathlib import Path

    import grpo_theory

    found = [f"{path.relative_to(Path(grpo_theory.__file__).parent)}:{line}"
             for path in sorted(Path(grpo_theory.__file__).parent.rglob("*.py"))
             for line in _bare_value_errors(path.read_text())]
    assert found == []


def test_the_scan_finds_a_bare_value_error():
    source = ("def f(x):\n    if x < 0:\n        raise ValueError(x)\n    raise ValueError\n"
              "def g():\n    raise InvalidInputError('x')\n")
    assert _bare_value_errors(source) == [3, 4]


def test_an_unknown_kl_study_configuration_is_named():
    """Figure 21 given a results table with a configuration it does not label: the bad input, named."""
    import pandas as pd

    from grpo_theory.figures import kl_estimators

    class Inputs:
        def results_table(self, name):
            return pd.DataFrame({"config": ["made_up_variant"]})

    with pytest.raises(InvalidInputError, match="made_up_variant"):
        kl_estimators.tables(Inputs())


def test_a_kl_study_penalty_figure_21_does_not_colour_is_named():
    """Figure 21 colours a variant by what it amounts to, the tables' ``penalty`` column: a penalty it has no
    colour for is named, with the ones it colours."""
    import pandas as pd

    from grpo_theory.figures import kl_estimators

    class Inputs:
        def results_table(self, name):
            return pd.DataFrame({"config": ["k2_loss"], "penalty": ["reverse"]})

    with pytest.raises(InvalidInputError, match=r"\['reverse'\].*'direct'"):
        kl_estimators.tables(Inputs())


@pytest.mark.parametrize("value", ["maybe", "yes", ""])
def test_openrlhf_bool_flag_names_the_value(value):
    from grpo_theory.integrations.openrlhf import read_openrlhf_config

    # a mapping's flag given as text is refused as TRL's and verl's readers do, naming the user's key and value
    with pytest.raises(InvalidInputError, match=rf"use_kl_loss \(algo\.kl\.use_loss\) = '{value}' \(expected bool"):
        read_openrlhf_config({"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.1,
                              "use_kl_loss": value})
