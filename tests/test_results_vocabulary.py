"""The results' vocabulary: every ``method`` the solvers write is a member of ``Method`` (read from their source and
from a set of solves), ``StationaryPoint`` refuses any other, ``status`` follows ``converged`` and ``boundary``,
the str enumerations read and write as plain strings, and docs/architecture.md's two tables are the ones built
here from the enumerations."""

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
from grpo_theory.solvers.certify import Certificate
from grpo_theory.solvers.results import ROOT_FINDERS, STAGES, STATUSES

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
    # the temperature search's deep root (test_certify_deep's THREE): a certified method that carries numbers
    (Question([0.6, 0.2, 0.2], rewards=[1, 0.5, 0]), Objective(beta=2.0, group_size=math.inf, penalty="direct",
                                                               std_eps=1e-4)),
])
def test_the_solvers_results_carry_the_vocabulary(q, obj):
    pts = stationary_points(q, obj)
    for p in (*pts.points, pts.from_reference, stationary_policy(q, obj)):
        assert _in_vocabulary(p), p.method
        assert isinstance(p.status, Status)
        assert p.status == ("not_converged" if not p.converged else "limit" if p.boundary else "converged")


def _in_vocabulary(p) -> bool:
    """A member of ``Method``, or ``certified: `` and the point's own certificate's test (kept as a str)."""
    if isinstance(p.method, Method):
        return True
    test = getattr(p.certificate, "test", None)
    return type(p.method) is str and test is not None and p.method == f"certified: {test}"


def test_the_baselines_carry_the_vocabulary():
    m = np.array([[0.5, 0.7], [0.3, 0.5]])
    assert nash_equilibrium(Question([0.5, 0.5], preference=m), beta=0.5).method is Method("root-hybr")
    # outputs sharing a reward law: solved on the classes, the method says so
    pooled = nash_equilibrium(Question([0.2, 0.3, 0.5], rewards=[1, 1, 0]), beta=0.5)
    assert pooled.method is Method("root-hybr on reward classes")
    one = nash_equilibrium(Question([0.4, 0.6], rewards=[1, 1]), beta=0.5)
    assert one.method is Method("single-output on reward classes") and one.pi.tolist() == [0.4, 0.6]


def test_enumerations_read_and_write_as_strings(tmp_path):
    pt = StationaryPoint(pi=np.array([0.5, 0.5]), residual=0.0, converged=True, stable=True, nfev=0,
                         method="flow+root+hybr")
    assert pt.method is Method.FLOW_ROOT_HYBR and pt.method == "flow+root+hybr"
    assert str(pt.method) == "flow+root+hybr" and json.dumps(pt.method) == '"flow+root+hybr"'
    assert "method='flow+root+hybr'" in repr(pt)
    pd.DataFrame(dict(method=[pt.method], status=[pt.status])).to_csv(tmp_path / "t.csv", index=False)
    assert (tmp_path / "t.csv").read_text().splitlines()[1] == "flow+root+hybr,converged"
    assert repr(pt.status) == "'converged'" and json.dumps(pt.status) == '"converged"'


def _point(method, **kw):
    return StationaryPoint(pi=np.array([0.5, 0.5]), residual=0.0, converged=True, stable=True, nfev=0, method=method,
                           **kw)


@pytest.mark.parametrize("method", ["bogus", "", "Flow+root+hybr", "flow+root", "multistart", "reward-ties",
                                    "certified", "certified: krawczyk2", "root-hybr on classes", " flow", None, 3,
                                    b"flow", ["flow"]])
def test_a_method_outside_the_vocabulary_is_refused_by_name(method):
    """Anything but a member, including a stage that always takes a root finder ("flow+root") or a near-miss
    spelling, raises InvalidInputError naming the value and listing the members."""
    with pytest.raises(InvalidInputError) as err:
        _point(method)
    msg = str(err.value)
    assert f"method={method!r}" in msg
    assert all(repr(m.value) in msg for m in Method)                  # the accepted ones, every one
    assert "certificate.test" in msg


def test_certified_with_the_certificates_own_test_is_the_one_composition_accepted():
    """``certified: `` + the point's ``certificate.test`` is kept as the plain string (the deep root's test carries
    numbers); the same string without that certificate, or with another test, is refused."""
    test = "deep root: log(t - t_min) in the box, the only root below t - t_min = 4e-11"
    cert = Certificate(np.array([[-1.0, 1.0]]), test)
    pt = _point(f"certified: {test}", certificate=cert)
    assert pt.method == f"certified: {test}" and not isinstance(pt.method, Method)
    for bad in (dict(), dict(certificate=Certificate(np.array([[-1.0, 1.0]]), "krawczyk"))):
        with pytest.raises(InvalidInputError, match="deep root"):
            _point(f"certified: {test}", **bad)
    member = _point("certified: krawczyk", certificate=Certificate(np.array([[-1.0, 1.0]]), "krawczyk"))
    assert member.method is Method("certified: krawczyk")


def _stage_of(method: str) -> str | None:
    """The longest stage a method starts with (then ``+``, ``:`` or a space), or None."""
    found = [s for s in STAGES if method == s or any(method.startswith(s + sep) for sep in ("+", ":", " "))]
    return max(found, key=len) if found else None


def _tables() -> tuple[str, str]:
    """docs/architecture.md's two tables as they must read, built from ``Method``, ``STAGES`` and ``STATUSES``."""
    rows = ["| stage | methods | meaning |", "| --- | --- | --- |"]
    for stage, meaning in STAGES.items():
        methods = ", ".join(f"`{m.value}`" for m in Method if _stage_of(m.value) == stage)
        rows.append(f"| `{stage}` | {methods} | {meaning.replace('|', chr(92) + '|')} |")
    status = ["| status | meaning |", "| --- | --- |"] + [f"| `{s}` | {m} |" for s, m in STATUSES.items()]
    return "\n".join(rows), "\n".join(status)


def test_every_method_has_one_stage_and_every_stage_a_method():
    assert [m.value for m in Method if _stage_of(m.value) is None] == []
    assert [s for s in STAGES if not any(_stage_of(m.value) == s for m in Method)] == []
    assert len(set(Method)) == len(Method) == len({m.value for m in Method})       # no alias, no duplicate


def test_status_is_the_statuses_table():
    assert [s.value for s in Status] == list(STATUSES)
    assert Status("limit") is Status.LIMIT and Status.NOT_CONVERGED == "not_converged"


def test_the_architecture_page_holds_the_tables_built_from_the_enumerations():
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    section = text[text.index("## Results' vocabulary"):]
    section = section[:section.index("\n## ", 1)]
    methods, status = _tables()
    assert methods in section, f"docs/architecture.md's method table must read:\n{methods}"
    assert status in section, f"docs/architecture.md's status table must read:\n{status}"
    assert section.count("\n| ") == methods.count("\n") + status.count("\n") + 2        # no other table rows


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


#: Fuzz draws (tests/fuzz_kl_cases.draw_kl_case) that reach, between them, the solvers' paths listed in
#: ``WALKED``; each the cheapest of the first 400 draws to reach one of them.
WALK_SEEDS = (2, 68, 83, 109, 118, 162, 178, 192, 237, 289, 333, 358, 377)
#: The methods the walk must meet (a path no longer reached means a seed to re-pick, not a vocabulary to widen).
#: Not reached cheaply: "grid", "grid+tangency", "flow-scan" (a root exactly on the scan's grid, a tangency),
#: their "+jump" forms, the "+lm" of "flow+map+root" and "token-flow-grid", "damped-fixed-point" (hybr failing on
#: NLHF) and "certified: single class: P = 0" (a single class is answered before the certificate); the source
#: scan above holds their spelling.
WALKED = {
    "flow", "flow+root+hybr", "flow+root+lm", "flow+map+root+hybr", "flow-to-vertex", "multistart+hybr",
    "multistart+lm", "reward-ties+hybr", "grid+brentq", "grid+brentq+jump", "flow-scan+brentq",
    "flow-scan+brentq+jump", "boundary-limit", "single-class", "certified: limit vertex (KKT)",
    "certified: krawczyk", "certified: krawczyk (epsilon-inflation around a Newton iterate)",
    "certified: sign change and h' enclosure excluding 0 (one root)", "full-space flow from pi_ref",
    "full-space flow from pi_ref: limit on a face", "token-flow", "token-flow+root+hybr", "token-flow+root+lm",
    "token-flow+face", "token-flow: limit vertex", "token-grid+hybr", "token-grid+lm", "token-flow-grid+hybr",
    "single-answer", "log-pooling", "root-hybr", "single-output", "root-hybr on reward classes",
    "single-output on reward classes",
}


@pytest.mark.slow
def test_a_walk_over_the_solvers_paths_meets_only_the_vocabulary(monkeypatch):
    """Every point any solver builds on the way (kept or discarded), over fuzz draws that reach the paths of
    ``WALKED``, the deep root's certificate, the baselines and a single answer: a member of ``Method``, or the
    certified composition. 10-15 s."""
    from fuzz_kl_cases import draw_kl_case

    from grpo_theory import rlhf_optimum
    from grpo_theory.solvers.tree import tree_stationary_policy

    built, outside = [], []
    original = StationaryPoint.__post_init__

    def spy(self):
        original(self)
        built.append(str(self.method))
        if not _in_vocabulary(self):
            outside.append(self.method)

    monkeypatch.setattr(StationaryPoint, "__post_init__", spy)
    cases = [draw_kl_case(seed) for seed in WALK_SEEDS]
    cases += [(Question([0.6, 0.2, 0.2], rewards=[1, 0.5, 0]),                     # deep root and KKT vertex
               Objective(beta=2.0, group_size=math.inf, penalty="direct", std_eps=eps)) for eps in (0.0, 1e-4)]
    cases += [(Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]), Objective(beta=0.5, group_size=4)),
              (Question([0.3, 0.7], rewards=[1, 1]), Objective(beta=0.5, group_size=4))]
    for q, obj in cases:
        stationary_points(q, obj)
        stationary_policy(q, obj)
    tree_stationary_policy(Question([1.0], rewards=[1], answers=["A"]), Objective(beta=0.5, level="token"))
    for q in (Question([0.2, 0.3, 0.5], rewards=[1, 1, 0]), Question([0.5, 0.5], rewards=[1, 1]),
              Question([0.2, 0.8], rewards=[1, 0]), Question([1.0, 0.0], rewards=[1, 0])):
        nash_equilibrium(q, 0.5)
        rlhf_optimum(q, 0.5)
    assert outside == []
    assert any(m.startswith("certified: deep root: ") for m in built)               # the composition was met
    assert WALKED - set(built) == set(), f"paths the walk no longer reaches: {sorted(WALKED - set(built))}"
    assert WALKED <= {m.value for m in Method}
