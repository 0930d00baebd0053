"""The studies' one bridge to the theory (``grpo_theory.studies.predictions``): every study reaches the
solvers through it, and it hands each question to the solvers as the studies built it by hand."""

import ast
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from grpo_theory import Objective, Question, stationary_points, stationary_policy  # noqa: E402
from grpo_theory.errors import InvalidInputError  # noqa: E402
from grpo_theory.studies.predictions import study_questions, study_theory  # noqa: E402

STUDIES = Path(__file__).resolve().parents[1] / "grpo_theory" / "studies"
#: What only the bridge may import: the solvers' package, its two entry points, the free study's response.
THEORY_NAMES = {"stationary_policy", "stationary_points", "stationary_policy_batch", "Response"}


def theory_imports(source: str) -> list[str]:
    """Each import in ``source`` of the solvers package or of one of :data:`THEORY_NAMES`, as text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {a.name for a in node.names}
            if module.split(".")[-1] == "solvers" or "solvers" in module.split(".") or "solvers" in names \
                    or names & THEORY_NAMES:
                found.append(f"from {'.' * node.level}{module} import {', '.join(sorted(names))}")
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if "solvers" in a.name.split(".")]
    return found


def test_the_scan_sees_each_way_of_importing_the_solvers():
    for src in ("from ..solvers import stationary_policy", "from ..solvers.search import log_pooling",
                "from .. import solvers", "import grpo_theory.solvers", "from grpo_theory import stationary_points",
                "from ..predict import Response"):
        assert theory_imports(src), src
    assert theory_imports("from ..predict import flow_table\nfrom .predictions import study_theory") == []


def test_no_study_but_the_bridge_imports_the_solvers():
    offenders = {p.name: theory_imports(p.read_text()) for p in sorted(STUDIES.glob("*.py"))
                 if p.name != "predictions.py"}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert theory_imports((STUDIES / "predictions.py").read_text())     # the bridge itself does


def test_rows_are_renormalised_into_the_questions_the_studies_built():
    obj = Objective(beta=0.5, group_size=4)
    th = study_theory([[2.0, 6.0], [0.9, 0.1]], [[1.0, 0.0], [0.0, 1.0]], obj)
    by_hand = [Question([0.25, 0.75], rewards=[1.0, 0.0]), Question([0.9, 0.1], rewards=[0.0, 1.0])]
    for q, want in zip(th.questions, by_hand):
        assert q.pi_ref.tolist() == want.pi_ref.tolist()
    want_pi = np.array([stationary_policy(q, obj).pi for q in by_hand])
    assert np.array_equal(th.pi, want_pi)
    assert np.array_equal(th.rewarded, [want_pi[0, 0], want_pi[1, 1]])     # the rewarded column of each row


def test_stable_points_are_counted_and_read_at_the_rewarded_class():
    obj = Objective(beta=0.5, group_size=4)
    th = study_theory([[3.0, 1.0]], [[0.0, 1.0]], obj, stable_points=True)
    want = stationary_points(Question([0.75, 0.25], rewards=[0.0, 1.0]), obj)
    assert th.n_stable == [len(want.stable)] and th.n_stable[0] >= 1
    assert th.rewarded_at_stable == [[float(pt.pi[1]) for pt in want.stable]]


def test_a_two_class_row_p_1_minus_p_renormalises_to_itself():
    # trl_stationary builds [p, 1 - p] rows where it used binary_question(p): dividing by the row's sum
    # must leave them unchanged to the bit, or its predictions would move
    p = np.concatenate([np.random.default_rng(0).uniform(0, 1, 10_000), [0.0, 1e-300, 0.1, 0.3, 0.5, 1.0]])
    rows = np.column_stack([p, 1.0 - p])
    assert np.array_equal(rows / rows.sum(axis=1, keepdims=True), rows)


def test_bad_tables_and_missing_point_sets_are_refused_by_name():
    obj = Objective(beta=0.5, group_size=4)
    with pytest.raises(InvalidInputError, match=r"one shape.*\(2, 2\) and \(2, 3\)"):
        study_questions(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(InvalidInputError, match="K=2.*got 3"):
        study_questions(np.ones((1, 2)), [[1.0, 0.0]], answers=[(1,), (2,), (3,)])
    with pytest.raises(InvalidInputError, match="obj must be an Objective, got 0.5"):
        study_theory([[0.5, 0.5]], [[1.0, 0.0]], 0.5)
    th = study_theory([[0.5, 0.5]], [[1.0, 0.0]], obj)
    with pytest.raises(InvalidInputError, match="stable_points=True"):
        th.n_stable
