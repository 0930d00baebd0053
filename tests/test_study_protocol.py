"""The study protocol: one table of studies, ``run_study(name, **settings) -> StudyResult``."""

import math
import sys
import types

import pytest

from grpo_theory.errors import InvalidInputError
from grpo_theory.studies import protocol
from grpo_theory.studies.protocol import STUDIES, StudyResult, StudySpec, run_study


def test_the_table_covers_every_study_choice_of_the_cli():
    from grpo_theory.cli import STUDY_SETTINGS, build_parser

    validate = next(a for a in build_parser()._actions if a.dest == "command").choices["validate"]
    study = next(a for a in validate._actions if a.dest == "study")
    assert set(study.choices) == set(STUDIES) == set(STUDY_SETTINGS)
    assert list(study.choices) == list(STUDIES)
    assert all(spec.name == name for name, spec in STUDIES.items())


def test_every_runner_takes_the_settings_the_cli_gives_it():
    """Each entry's runner exists and accepts every keyword the CLI passes for it (its defaults as parsed)."""
    pytest.importorskip("torch")
    import importlib.util
    import inspect

    from grpo_theory.cli import STUDY_SETTINGS, build_parser

    for name, spec in STUDIES.items():
        if any(importlib.util.find_spec(m) is None for m in spec.requires):
            continue                                    # its extra is not installed here (trl)
        args = build_parser().parse_args(["validate", "--study", name])
        params = inspect.signature(spec.function()).parameters
        given = {**spec.steps_as(spec.steps), **STUDY_SETTINGS[name](args)}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            assert set(given) <= set(params), (name, set(given) - set(params))
        assert "out_dir" in params, name


@pytest.mark.parametrize("name", ["huge", "Small", "", None, 3])
def test_an_unknown_study_is_refused_by_name_with_the_known_ones(name):
    with pytest.raises(InvalidInputError) as err:
        run_study(name)
    assert repr(name) in str(err.value)
    for known in ("small", "tree", "kl", "smollm2", "free", "trl"):
        assert known in str(err.value)


@pytest.fixture
def stub_study(monkeypatch):
    """A STUB study (not one of the package's): a fake runner module recording its calls, in a test-only entry,
    to check what run_study does with a runner's answer without training anything."""
    import pandas as pd

    calls = []

    def runner(out_dir, *, spec=None, seed=0, flag=False):
        calls.append(dict(out_dir=out_dir, spec=spec, seed=seed, flag=flag))
        summary = pd.DataFrame({"config": ["a", "b"], "gap": [0.1, 0.2], "warnings": ["", "x"]})
        return pd.DataFrame({"row": [1, 2, 3]}), summary

    module = types.ModuleType("grpo_theory.studies.stub_for_test")
    module.run = runner
    monkeypatch.setitem(sys.modules, module.__name__, module)
    spec = StudySpec("stub", "stub_for_test:run", "nothing", "runs/stub", 7, returns_rows=True,
                     hidden=("warnings",), note="wrote {out}/x.csv", steps_as=protocol._steps_in_spec)
    monkeypatch.setitem(STUDIES, "stub", spec)
    return calls


def test_run_study_on_a_stub_runner_fills_the_result(stub_study, tmp_path):
    res = run_study("stub", out=tmp_path, seed=3, spec={"lr": 1.0})
    assert isinstance(res, StudyResult) and res.name == "stub" and res.out == str(tmp_path)
    assert stub_study == [dict(out_dir=tmp_path, spec={"max_steps": 7, "lr": 1.0}, seed=3, flag=False)]
    assert list(res.rows.row) == [1, 2, 3]
    assert list(res.summary.columns) == ["config", "gap", "warnings"] and list(res.table.columns) == ["config", "gap"]
    assert res.note == f"wrote {tmp_path}/x.csv"
    res = run_study("stub", steps=2)                                    # the default folder; steps given
    assert stub_study[-1]["out_dir"] == "runs/stub" and stub_study[-1]["spec"] == {"max_steps": 2}
    with pytest.raises(InvalidInputError, match="'stub' takes no setting 'quick'"):
        run_study("stub", quick=True)
    assert len(stub_study) == 2


def test_importing_the_protocol_imports_no_study():
    import subprocess

    code = ("import sys, grpo_theory.studies.protocol, grpo_theory.cli; "
            "print(sorted(m for m in sys.modules if m.startswith('grpo_theory.studies.') or m == 'torch'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['grpo_theory.studies.protocol']"


def test_the_tree_study_runs_through_run_study(tmp_path, monkeypatch):
    """A real (cheap) study through the protocol: the tree study on one shape, one seed, one loss type,
    3 steps from a 20-step reference; the result is what the runner wrote to its folder."""
    pytest.importorskip("torch")
    import pandas as pd

    from grpo_theory.studies import tree

    real = tree.pretrain_reference
    monkeypatch.setattr(tree, "pretrain_reference", lambda *a, **kw: real(*a, **{**kw, "steps": 20}))  # cheap
    res = run_study("tree", out=tmp_path, steps=3, seeds=(0,), shapes=("lengths",), losses=(("grpo", math.inf),),
                    n_questions=2, progress=False)
    assert res.rows is None and res.note is None and res.table is res.summary
    assert list(res.summary.config) == ["lengths_grpo_Ball"]
    rows = pd.read_csv(tmp_path / "tree_results.csv")
    assert len(rows) == 2 * 3 and rows.predicted.between(0, 1).all()
    assert list(res.summary.steps) == [3]                                   # the steps given reached the runner


def test_the_trainer_config_keeps_its_old_name_as_an_alias():
    """The package's trainer config is ``TrainerConfig`` (apart from TRL's ``GRPOConfig``); the old name is the
    same class."""
    pytest.importorskip("torch")
    from grpo_theory.training import GRPOConfig, TrainerConfig
    from grpo_theory.training.trainer import GRPOConfig as old

    assert GRPOConfig is TrainerConfig is old and TrainerConfig.__name__ == "TrainerConfig"
