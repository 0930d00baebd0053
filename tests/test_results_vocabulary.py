"""The results' vocabulary: every ``method`` the solvers write is a member of ``Method`` (read from their source and
from a set of solves), ``status`` follows ``converged`` and ``boundary``, and the str enumerations read and
write as plain strings."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grpo_theory import InvalidInputError, Objective, Question, nash_equilibrium, stationary_points, stationary_policy
from grpo_theory.solvers import Method, StationaryPoint, Status
from grpo_theory.solvers.results import ROOT_FINDERS, STAGES

SOLVERS = Path(__file__).resolve().parents[1] / "grpo_theory" / "solvers"


def _literal_methods():
    """``(file, line, method string)`` for each literal method the solvers' source writes: ``method="..."``,
    the stage given to ``polish`` (a root finder appended), to ``point_at`` and to the two-class helper."""
    out = []
    for path in sorted(SOLVERS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            for kw in node.keywords:
                if kw.arg == "method" and isinstance(kw.value, ast.Constant) and name == "StationaryPoint":
                    out.append((path.name, node.lineno, [kw.value.value]))
            args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
            if name == "polish" and len(args) > 2 and args[2]:
                out.append((path.name, node.lineno, [f"{args[2]}+{f}" for f in ROOT_FINDERS]))
            if name == "point_at" and len(args) > 2 and args[2]:
                out.append((path.name, node.lineno, [args[2]]))
            if name == "_point_from_class_logit" and len(args) > 3 and args[3]:
                out.append((path.name, node.lineno, [args[3], args[3] + "+jump"]))
    return out


def test_every_literal_method_of_the_solvers_is_in_the_vocabulary():
    found = _literal_methods()
    assert len(found) >= 20                                  # the scan does see the solvers' calls
    missing = [(f, n, m) for f, n, ms in found for m in ms if m not in {x.value for x in Method}]
    assert missing == [], f"add these to grpo_theory.solvers.results.STAGES / Method: {missing}"


def test_each_method_starts_with_a_documented_stage():
    for m in Method:
        assert any(m.value == s or m.value.startswith(s + "+") or m.value.startswith(s + ":") for s in STAGES), m


@pytest.mark.parametrize("q, obj", [
    (Question([0.2, 0.8], rewards=[1, 0]), Objective(beta=0.5, group_size=2)),
    (Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]), Objective(beta=0.5, group_size=4)),
    (Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]), Objective(beta=0.05, group_size=math.inf, penalty="direct")),
    (Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]), Objective(beta=0.1, kl_estimator="k3", kl_placement="reward")),
    (Question([0.5, 0.5], rewards=[1, 0]), Objective(beta=0.02, group_size=8, kl_estimator="k3",
                                                     kl_log_ratio_clamp=20, kl_value_clamp=10)),
    (Question([0.3, 0.3, 0.4], rewards=[1, 0, 0], answers=["AB", "AC", "D"]),
     Objective(beta=0.2, group_size=4, level="token")),
    (Question([0.1, 0.2, 0.3, 0.4], rewards=[1, 0.7, 0.3, 0]), Objective(beta=0.3, group_size=3, advantage="rloo")),
])
def test_the_solvers_results_carry_the_vocabulary(q, obj):
    pts = stationary_points(q, obj)
    for p in (*pts.points, pts.from_reference, stationary_policy(q, obj)):
        assert isinstance(p.method, Method), p.method
        assert isinstance(p.status, Status)
        assert p.status == ("not_converged" if not p.converged else "limit" if p.boundary else "converged")


def test_the_baselines_carry_the_vocabulary():
    m = np.array([[0.5, 0.7], [0.3, 0.5]])
    pt = nash_equilibrium(Question([0.5, 0.5], preference=m), beta=0.5)
    assert isinstance(pt.method, Method)


def test_enumerations_read_and_write_as_strings(tmp_path):
    pt = StationaryPoint(pi=np.array([0.5, 0.5]), residual=0.0, converged=True, stable=True, nfev=0,
                         method="flow+root+hybr")
    assert pt.method is Method.FLOW_ROOT_HYBR and pt.method == "flow+root+hybr"
    assert str(pt.method) == "flow+root+hybr" and json.dumps(pt.method) == '"flow+root+hybr"'
    assert "method='flow+root+hybr'" in repr(pt)
    pd.DataFrame(dict(method=[pt.method], status=[pt.status])).to_csv(tmp_path / "t.csv", index=False)
    assert (tmp_path / "t.csv").read_text().splitlines()[1] == "flow+root+hybr,converged"
    other = StationaryPoint(pi=np.array([1.0]), residual=1.0, converged=False, stable=None, nfev=0, method="mine")
    assert other.method == "mine" and other.status is Status.NOT_CONVERGED         # outside: kept as given


def test_the_architecture_page_documents_every_stage():
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    for stage, meaning in STAGES.items():
        assert f"| `{stage}` | {meaning} |" in text, stage


def test_rlhf_optimum_is_log_pooling_as_a_point():
    """RLHF's optimum as a StationaryPoint: the closed form by hand, and no perturbation does better on
    ``E_pi r - beta KL(pi || pi_ref)``."""
    from grpo_theory import rlhf_optimum

    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.4, 0.0])
    beta = 0.3
    pt = rlhf_optimum(q, beta)
    w = np.array([0.2, 0.3, 0.5]) * np.exp(np.array([1.0, 0.4, 0.0]) / beta)
    np.testing.assert_allclose(pt.pi, w / w.sum(), rtol=1e-13)
    assert pt.method == "log-pooling" and pt.status == "converged" and pt.stable and pt.residual < 1e-14

    def value(pi):
        return pi @ q.expected_reward - beta * np.sum(pi * np.log(pi / q.pi_ref))
    rng = np.random.default_rng(0)
    for _ in range(200):
        other = pt.pi * np.exp(0.05 * rng.standard_normal(3))
        assert value(other / other.sum()) < value(pt.pi)
    with pytest.raises(InvalidInputError, match="reward law"):
        rlhf_optimum(Question([0.5, 0.5], preference=np.array([[0.5, 0.7], [0.3, 0.5]])), beta)
