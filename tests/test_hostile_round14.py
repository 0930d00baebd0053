"""The fourteenth hostile audit's library findings that argument rules fix (docs/reliability.md, "Hostile input,
fourteenth round"): a resumed sweep refuses rows of another pi_ref, question names are checked, YAML merge keys
merge, versions and version tables are read strictly, and ``with_changes``, ``check_history`` and
``summarise_convergence`` name what is wrong. Fast: no solver runs."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question
from grpo_theory.sweep import COLUMNS, Case, check_grid, sweep

Q = {"pi_ref": [0.3, 0.7], "rewards": [1, 0]}


def _old_file(path, key, pi_ref, question=None, columns=COLUMNS):
    """A sweep file holding one complete row of ``key`` computed for ``pi_ref`` (its question: ``pi_ref`` with the
    rewards [1, 0], as the repr of a Question writes it, unless given)."""
    if question is None:
        question = f"Question(pi_ref={pi_ref}, rewards=[1.0, 0.0])"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerow(dict(key=key, objective="reverse/scale, G=2, beta=0.5", question=question, pi_ref=pi_ref,
                        n_points=1, n_stable=1, exhaustive=True, stable_policies="[[0.5, 0.5]]",
                        reached_policy="[0.5, 0.5]", seconds=0.1))


def test_a_resumed_sweep_refuses_a_row_of_another_pi_ref(tmp_path):
    out = tmp_path / "g.csv"
    _old_file(out, "a|beta=0.5", "[0.3, 0.7]")
    case = Case("a|beta=0.5", Question([0.6, 0.4], rewards=[1, 0]), Objective(beta=0.5))
    with pytest.raises(InvalidInputError, match=r"holds case 'a\|beta=0.5' for pi_ref \[0.3, 0.7\].*\[0.6, 0.4\]"):
        sweep([case], out=out, executor="serial", progress=False)


def test_a_resumed_sweep_keeps_a_row_of_the_same_pi_ref(tmp_path, monkeypatch):
    import grpo_theory.sweep as sweep_module

    out = tmp_path / "g.csv"
    _old_file(out, "a|beta=0.5", "[0.3, 0.7]")
    monkeypatch.setattr(sweep_module, "evaluate_case", lambda c: pytest.fail("computed again"))
    df = sweep([Case("a|beta=0.5", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0.5))], out=out,
               executor="serial", progress=False)
    assert df.reached_policy.tolist() == ["[0.5, 0.5]"]


@pytest.mark.parametrize("names, shown", [(["q", "q"], "'q' must be one non-empty line, given once (found 2)"),
                                          (["a\nb"], "'a\\nb' must be"), ([" "], "' ' must be")])
def test_question_names_are_one_line_and_given_once(names, shown):
    problems = check_grid({"questions": [dict(Q, name=n) for n in names], "objectives": {"beta": 0.5}})
    assert any(p.startswith("questions: name") and shown in p for p in problems), problems


def test_yaml_merge_keys_merge_and_the_mappings_own_keys_win(tmp_path):
    from grpo_theory._io import read_yaml

    path = tmp_path / "g.yaml"
    path.write_text("questions:\n  - &q {name: a, pi_ref: [0.3, 0.7]}\n  - <<: *q\n    name: b\n"
                    "  - <<: [{x: 1, name: c}, {x: 2, y: 3}]\n", encoding="utf-8")
    qs = read_yaml(path, "grid", "YAML")["questions"]
    assert qs[1] == {"name": "b", "pi_ref": [0.3, 0.7]}
    assert qs[2] == {"x": 1, "name": "c", "y": 3}          # an earlier mapping of the list wins (YAML's rule)
    path.write_text("a: &a {long_key: A}\nb: &b {long_key: B, z: 3}\nc: {<<: [*a, *b]}\n", encoding="utf-8")
    assert read_yaml(path, "grid", "YAML")["c"] == {"long_key": "A", "z": 3}      # not B: keys compared by value
    path.write_text("a: {b: 1, b: 2}\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="'b' appears twice"):
        read_yaml(path, "grid", "YAML")


@pytest.mark.parametrize("v", ["1..16", "-1.0.0", "1.16.0" * 3, "1.16.0 beta", "x1.2"])
def test_a_malformed_version_is_refused(v):
    from grpo_theory.integrations.mapping import parse_version

    with pytest.raises(InvalidInputError, match="version must look like"):
        parse_version(v)


@pytest.mark.parametrize("v, want", [("1.16.0", (1, 16, 0)), ("0.26.0.dev0", (0, 26, 0)), ("2.0.0rc1", (2, 0, 0)),
                                     ("1.16.0+cu118", (1, 16, 0)), ("v1.9", (1, 9, 0)), ("1.16.0.post1", (1, 16, 0)),
                                     ("1.2.3.4", (1, 2, 3))])
def test_versions_as_packages_write_them_are_read(v, want):
    from grpo_theory.integrations.mapping import parse_version

    assert parse_version(v) == want


def test_a_version_table_newest_first_is_refused():
    from grpo_theory.integrations.mapping import defaults_for

    table = [("0.1.0", {"beta": 0.04}, "a"), ("0.19.0", {"beta": 0.0}, "b")]
    assert defaults_for(table, "1.0.0", "TRL") == ({"beta": 0.0}, [])
    with pytest.raises(InvalidInputError, match="oldest first: '0.1.0' comes after '0.19.0'"):
        defaults_for(table[::-1], "1.0.0", "TRL")


@pytest.mark.slow                                     # imports torch (about 4 s alone)
def test_with_changes_names_an_unknown_field():
    from grpo_theory.training.trainer import TrainerConfig

    with pytest.raises(InvalidInputError, match=r"unknown field\(s\) \['stepz'\]"):
        TrainerConfig().with_changes(stepz=10)
    assert TrainerConfig().with_changes(beta=0.2, steps=10).objective.beta == 0.2


@pytest.mark.parametrize("bad", ["nan", None, float("nan")])
def test_check_history_names_the_row_and_key_of_a_value_that_is_no_number(bad):
    from grpo_theory.convergence import check_history

    rows = [{"step": 10 * (i + 1), "p_best_q0": 0.7, "p_best_q1": 0.75} for i in range(40)]
    rows[33]["p_best_q1"] = bad
    with pytest.raises(InvalidInputError, match=r"history row 33 \(step 340\): p_best_q1 must be a finite number"):
        check_history(rows, 2)


def test_summarise_convergence_refuses_reasons_of_another_length():
    from grpo_theory.convergence import summarise_convergence

    with pytest.raises(InvalidInputError, match="reasons 3"):
        summarise_convergence([0.1, 0.2], ["converged", "moving"], ["a", "b", "c"])


# ---------------------------------------------------------------- results compare and hash by value (solvers.results)

def _points():
    from grpo_theory import stationary_points
    q = Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0])
    return stationary_points(q, Objective(beta=0.5, group_size=4)), stationary_points(q, Objective(beta=0.9, group_size=4))


def test_a_result_equals_its_copies_and_not_another_betas():
    import copy
    import pickle
    a, b = _points()
    for r in (a, a[0], a.from_reference):
        for twin in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):
            assert (r == twin) is True and (r != twin) is False and hash(r) == hash(twin)
    assert (a[0] != b[0]) is True and (a != b) is True
    assert a[0] in [b[0], copy.deepcopy(a[0])] and b[0] not in [a[0]]
    assert len({a[0], copy.deepcopy(a[0]), b[0]}) == 2 and len({a, pickle.loads(pickle.dumps(a))}) == 1
    assert (a[0] == 1) is False and (a[0] == "x") is False          # another type: not equal, no error


def test_a_point_with_nan_eigenvalues_still_equals_its_copy():
    import copy

    from grpo_theory.solvers import StationaryPoint
    p = StationaryPoint(np.array([0.5, 0.5]), float("nan"), False, None, 1, "flow", eigenvalues=np.array([np.nan]))
    q = copy.deepcopy(p)
    assert p == q and hash(p) == hash(q)
    assert p != StationaryPoint(np.array([0.5, 0.5]), float("nan"), False, None, 1, "flow",
                                eigenvalues=np.array([1.0]))


@pytest.mark.parametrize("rewards, want", [
    ([[1e300, -1e300]], [[1.0, -1.0]]),                                   # the squares overflow
    ([[1e-300, 0.0, 0.0]], [[2 ** 0.5, -(2 ** -0.5), -(2 ** -0.5)]]),    # the squares underflow
    ([[1e200, 0.0, 0.0], [5.0, 5.0, 5.0]], [[2 ** 0.5, -(2 ** -0.5), -(2 ** -0.5)], [0.0, 0.0, 0.0]]),
])
def test_sampled_advantages_at_extreme_rewards_are_eq2s(rewards, want):
    """Eq. 2 by hand: (r - mean)/std is invariant to r -> r/s, so [a, -a] gives [1, -1] and [a, 0, 0] gives
    [sqrt 2, -1/sqrt 2, -1/sqrt 2] (std sqrt(2/9) a) for every a > 0; a tied group gives 0."""
    from grpo_theory.monte_carlo import sampled_advantages

    r = np.array(rewards)
    got = sampled_advantages(r, Objective(beta=1.0, group_size=r.shape[-1]))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
