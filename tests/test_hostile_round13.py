"""The thirteenth hostile audit's findings, fixed by argument rules (docs/reliability.md, "Hostile input, thirteenth
round"): each input is now a clear InvalidInputError (NoStationaryPolicy for an unregularised stationary query)
naming the argument and what was expected, or, where the docstring allows it, an answer. The expectations come from
the docstrings: Hydra's removal ``~key`` (its override grammar), ``time_grid``'s ``n`` positive times from
``t_min`` to ``t_max``, Eq. 14 for a valid answer."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from grpo_theory.errors import InvalidInputError
from grpo_theory.integrations.cmdline import argparse_flags, check_set, hydra_overrides
from grpo_theory.predict.conformal import conformal_offsets
from grpo_theory.predict.coupled import shift_stationary, time_grid
from grpo_theory.predict.intervals import unbiased_pass_at_k
from grpo_theory.predict.samples import check_counts
from grpo_theory.studies.free_prompts import select_prompts
from grpo_theory.studies.trl_stationary import newest_checkpoint


@pytest.mark.parametrize("call, names", [
    (lambda: check_set(None, ["a"], "s"), "values must be a mapping"),
    (lambda: check_set({"a": "1"}, None, "s"), "read must be the setting names"),
    (lambda: check_set({"a": "1"}, ["a"], None), "source must be text"),
    (lambda: unbiased_pass_at_k(5, 2, [1, 2]), r"k must be one integer >= 1, got \[1, 2\]"),
    (lambda: newest_checkpoint(None), "run_dir must be a folder path .* got None"),
    (lambda: newest_checkpoint(5), "run_dir must be a folder path .* got 5"),
])
def test_a_bad_argument_is_named(call, names):
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_the_valid_calls_still_answer(tmp_path):
    assert unbiased_pass_at_k(4, 1, 2) == pytest.approx(0.5)          # 1 - C(3, 2)/C(4, 2)
    assert unbiased_pass_at_k([4, 8], [1, 1], [8]).tolist()[1] == 1.0  # a one-entry list is one k
    check_set({"a": "1", "b": "$X"}, {"a": int}, "s")                  # a dict of fields: its keys; b not read
    for read in ({"a": int}, "a"):                                      # a dict's keys; one name as a str
        with pytest.raises(InvalidInputError, match=r"\$X is not set"):
            check_set({"a": "$X"}, read, "s")
    (tmp_path / "checkpoint-7").mkdir()
    (tmp_path / "checkpoint-7" / "trainer_state.json").write_text("{}")
    assert newest_checkpoint(tmp_path).name == newest_checkpoint(str(tmp_path)).name == "checkpoint-7"


def _ragged_and_zero_rows():
    from grpo_theory.studies.predictions import study_questions
    return [
        (lambda: study_questions([[0.3, 0.7], [0.5]], [[1, 0], [1]]),
         r"reference_probs is ragged: reference_probs\[0\] has 2 entries but reference_probs\[1\] has 1 entry"),
        (lambda: study_questions([[0.3, 0.7], [0.0, 0.0]], [[1, 0], [1, 0]]),
         r"reference_probs row 1 is \[0.0, 0.0\]: its sum is 0"),
    ]


def _registry():
    import dataclasses

    from grpo_theory import variants as va
    group = va.lookup("advantage", "group")
    mine = dataclasses.replace(group, name="my_group_r13")
    return [
        (lambda: va.register(dataclasses.replace(group, name="my_none", expectations=None)),
         "expectations is required, got None"),
        (lambda: va.register(dataclasses.replace(group, name="my_bound", bound="not callable")),
         "bound must be a function, got 'not callable'"),
        (lambda: va.register(mine, replace="yes"), "replace must be True or False, got 'yes'"),
        (lambda: va.register(group, replace=True), "'group' is already registered .one of the package's own entries, "
                                                   "never replaced"),
        (lambda: va.unregister("advantage", "group"), "'group' is one of the package's own entries"),
        (lambda: va.unregister("regime", "reverse"), "'reverse' is one of the package's own entries"),
    ]


@pytest.mark.parametrize("case", range(8))
def test_a_ragged_or_empty_input_and_a_registry_misuse_are_named(case):
    call, names = (_ragged_and_zero_rows() + _registry())[case]
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_note_penalty_takes_only_the_notes_two():
    import dataclasses

    from grpo_theory import variants as va
    mine = dataclasses.replace(va.lookup("regime", "reverse"), name="my_regime_r13")
    va.register(mine)
    try:
        with pytest.raises(InvalidInputError, match=r"penalty must be one of \('reverse', 'direct'\).*'my_regime_r13'"):
            va.note_penalty("my_regime_r13")
    finally:
        va.unregister("regime", "my_regime_r13")              # a user's entry is removed; the built-ins stay
    assert va.note_penalty("direct").is_direct and "my_regime_r13" not in va.names("regime")
    assert {"group", "rloo"} <= set(va.names("advantage"))


@pytest.mark.parametrize("call, names", [
    (lambda: __import__("grpo_theory.problem", fromlist=["x"]).require_regularised([]), r"obj is empty \(\[\]\)"),
    (lambda: argparse_flags(["--=1"], "s"), r"'--=1' is not a flag with a name"),
    (lambda: argparse_flags(["---x", "1"], "s"), r"'---x' is not a flag with a name"),
    (lambda: unbiased_pass_at_k([], [], 1), "correct is empty"),
    (lambda: check_counts([0, 0], [1, 1], [2, 2], 3), "index must be distinct values, got 0 twice"),
    (lambda: check_counts([0, 1], [1], [2, 2], 3), "index, k and m must have one length .* index 2, k 1, m 2"),
    (lambda: conformal_offsets([0.5], [1, 2], [4, 4]), "p_pred, k and m must have one length .* p_pred 1, k 2, m 2"),
    (lambda: select_prompts([1, 2], 10, 1, p_range=(0.0, 1.0)),
     r"p_range must be .* in \(0.0, 1.0\), got \[0.0, 1.0\]"),
    (lambda: select_prompts([1, 2], 10, 1, p_range=(0.9, 0.1)), r"p_range .* lo < hi, .*reversed: lo = 0.9, hi = 0.1"),
    (lambda: time_grid(t_max=10.0, n=1, t_min=1.0), r"n = 1 .* t_min = t_max"),
    (lambda: time_grid(t_max=1.0, n=5, t_min=1.0), r"n = 5 .* t_min < t_max"),
])
def test_a_degenerate_argument_is_named(call, names):
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_select_prompts_with_an_open_range_warns_nothing():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # NumPy's divide-by-zero was a RuntimeWarning
        with pytest.raises(InvalidInputError, match="p_range"):
            select_prompts([1, 2], 10, 1, p_range=(0.0, 1.0))


def test_hydra_removal_follows_the_override_grammar():
    # Hydra: ``~key`` removes the key (and what is under it); ``~key=value`` only where key holds value
    assert hydra_overrides(["a.b=1", "~a.b"], "s") == {}
    assert hydra_overrides(["a.b=1", "a.c=2", "x=3", "~a"], "s") == {"x": 3}
    assert hydra_overrides(["a.b=1", "~a.b=1", "a.b=4"], "s") == {"a.b": 4}
    with pytest.raises(InvalidInputError, match=r"'~a.b=2' removes a.b only where it holds 2, but the line set a.b=1"):
        hydra_overrides(["a.b=1", "~a.b=2"], "s")
    with pytest.raises(InvalidInputError, match=r"'~a' removes a.b, a setting this reader reads"):
        hydra_overrides(["a.b=1", "~a"], "s", read=("a.b",))
    with pytest.raises(InvalidInputError, match="no Hydra overrides"):
        hydra_overrides(["python3", "-m", "x"], "s")


def test_shift_stationary_at_beta_0_goes_through_the_one_guard():
    from grpo_theory import NoStationaryPolicy, Objective
    from grpo_theory.predict.field import PromptField
    with pytest.raises(NoStationaryPolicy, match="field.objective: .* is unregularised"):
        shift_stationary(PromptField(Objective(beta=0), [0.2, 0.5], z_step=1.0, tol=1.0))   # a coarse field: fast


def test_valid_calls_still_answer():
    from grpo_theory.studies.predictions import study_questions
    t = time_grid(t_max=1.0, n=1, t_min=1.0)                # one positive time: both ends (the docstring)
    assert t.tolist() == [0.0, 1.0]
    g = time_grid(t_max=100.0, n=3, t_min=1.0)               # 0 and 3 geometric times from 1 to 100
    assert g.tolist() == pytest.approx([0.0, 1.0, 10.0, 100.0], rel=1e-12)
    q = study_questions([[3.0, 7.0]], [[1, 0]])[0]           # renormalised
    assert np.asarray(q.pi_ref).tolist() == pytest.approx([0.3, 0.7], abs=1e-15)
    assert argparse_flags(["--a-b=3", "--x", "1"], "s") == {"a_b": 3, "x": 1}
    assert select_prompts([0, 2, 8, 16, 24, 30, 32], 32, 3).tolist() == [1, 3, 5]   # the docstring's example
    assert check_counts([2, 0], [1, 0], [4, 3], 3)[0].tolist() == [2, 0]


@functools.lru_cache(maxsize=1)
def _same_classes():
    """The rows' classes elsewhere: ragged input, a range reversed, a registry-like argument of the wrong type."""
    import sympy as sp

    from grpo_theory import Objective
    from grpo_theory.integrations.trl import Probe
    from grpo_theory.kl import flow_value
    from grpo_theory.predict.calibrate import fit_flow
    from grpo_theory.predict.conformal import conformal_interval
    from grpo_theory.predict.field import PromptField
    from grpo_theory.predict.finite import predict_finite
    from grpo_theory.predict.samples import samples_from_counts
    from grpo_theory.symbolic_proofs import prove_sign
    x = sp.Symbol("x", positive=True)
    field = PromptField(Objective(beta=0.5), [0.2, 0.5, 0.7], z_step=1.0, tol=1.0)        # coarse: fast
    base = samples_from_counts([64, 64], [3, 30], ["a", "b"])
    offsets = conformal_offsets([0.5, 0.4, 0.3], [1, 2, 1], [4, 4, 4])
    return [
        (lambda: flow_value(Objective(beta=0.5), [[0.1, 0.2], [0.3]]), r"lr is ragged: lr\[0\] has 2 entries"),
        (lambda: Probe("Q?", ("A", "B"), (1.0, 0.0)).question([[0.3, 0.6, 0.1], [0.3]]), "probs is ragged"),
        (lambda: conformal_interval([[0.3, 0.4], [0.5]], offsets, 4), "p is ragged"),
        (lambda: conformal_interval([0.3], None, 4), "offsets must be a ConformalOffsets, got None"),
        (lambda: fit_flow(field, [0, 1], [1, 3], [4, 4], start_sd=([0.0], [1.0])),
         r"start_sd must hold 3 logits in each of z_lo and z_hi .* shapes \(1,\) and \(1,\)"),
        (lambda: fit_flow(field, [0, 1], [1, 3], [4, 4], level="a"), "level must be a number, got 'a'"),
        (lambda: fit_flow(field, [0, 1], [1, 3], [4, 4], split=[1, 2]), r"split must be flags .* \[1, 2\]"),
        (lambda: predict_finite(base, Objective(beta=0.5), clock_range=(2.0, 1.0)),
         r"clock_range .* lo <= hi, .*reversed: lo = 2.0, hi = 1.0"),
        (lambda: predict_finite(base, Objective(beta=0.5), clock_range=5), r"clock_range must be 1-D"),
        (lambda: prove_sign(x * (1 - x), 1, "s", {x: (0.99, 0.01)}),
         r"symbols_ranges\[x\] .* lo < hi, .*\(reversed: lo = 0.99"),
        (lambda: prove_sign(x * (1 - x), 1, "s", {x: ()}), r"symbols_ranges\[x\] is empty"),
    ]


@pytest.mark.parametrize("case", range(11))
def test_the_same_classes_elsewhere_are_named(case):
    call, names = _same_classes()[case]
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_a_value_given_twice_in_a_set_argument_is_named():
    from grpo_theory import Objective
    from grpo_theory.predict import reward_kl_tradeoff, samples_from_counts
    from grpo_theory.predict.intervals import check_k
    with pytest.raises(InvalidInputError, match=r"k must give each k once, got k = 8 twice: \[1, 8, 8\]"):
        check_k([1, 8, 8])
    with pytest.raises(InvalidInputError, match=r"betas must be distinct values, got 1 twice"):
        reward_kl_tradeoff(samples_from_counts([20, 20], [4, 12]), Objective(beta=0.5), [1.0, 1.0])
    assert check_k([8, 1]) == (8, 1)                     # the order given is kept (the docstring: "in the order given")


@pytest.mark.parametrize("case", range(6))
def test_more_of_the_same_classes(case):
    from grpo_theory import Question
    from grpo_theory.predict.calibrate import predictive_interval, start_quantiles
    from grpo_theory.predict.scoring import score_table
    from grpo_theory.studies.free_prompts import choose_betas
    call, names = [
        (lambda: Question([0.5, 0.5], preference=[[0.5, 0.2], [0.8]]), r"preference is ragged: preference\[0\] has 2"),
        (lambda: choose_betas([0.3, 0.5], candidates=(1.0, 1.0)), "candidates must be distinct values, got 1 twice"),
        (lambda: score_table({"a": [0.5, 0.4]}, [5, 2], [4, 4]), r"k must be at most m, got k = 5 > m = 4 \(entry 0\)"),
        (lambda: score_table([0.5, 0.4], [1, 2], [4, 4]), r"predictions must be a mapping"),
        (lambda: predictive_interval(None, 4), "fit must be a Fit, got None"),
        (lambda: start_quantiles([10, 10], [3, 14]),
         r"correct must be at most n, got correct = 14 > n = 10 \(entry 1\)"),
    ][case]
    with pytest.raises(InvalidInputError, match=names):
        call()


@pytest.mark.parametrize("case", range(6))
def test_a_public_helper_names_an_argument_of_the_wrong_type(case):
    from grpo_theory import Objective
    from grpo_theory.integrations.family import trl_family
    from grpo_theory.predict import report
    from grpo_theory.predict.finite import match_measured
    from grpo_theory.studies import free_scoring, predictions
    call, names = [
        (lambda: match_measured(None, None), "samples must be a SampleTable, got None"),
        (lambda: report.figure_clock(None), "pr must be a Prediction, got None"),
        (lambda: free_scoring.score(None), "table must be a pandas DataFrame, got None"),
        (lambda: trl_family(5), "get must be a function, got 5"),
        (lambda: predictions.rewarded(None, None), "task must be a QATask, got None"),
        (lambda: predictions.stationary_x([1.5], Objective(beta=0.5)),
         r"p_ref must be .* in \[0.0, 1.0\], got \[1.5\]"),
    ][case]
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_a_figure_named_twice_is_refused(tmp_path):
    from grpo_theory.figures.build import build_figures
    with pytest.raises(InvalidInputError, match=r"--only\) names figure 1 more than once, got \[1, 1\]"):
        build_figures(tmp_path, only=iter([1, 1]))            # an iterable, read once


def test_a_reversed_interval_of_range_over_is_named():
    from grpo_theory import Objective
    from grpo_theory.predict import Response
    r = Response(Objective(beta=0.5))
    x = np.array([0.65, 0.8])
    with pytest.raises(InvalidInputError, match=r"lo must be at most hi, got lo = 0.5 > hi = 0.2"):
        r.range_over(np.array([0.5]), np.array([0.2]), x[1:], x[:1])


@pytest.mark.parametrize("case", range(7))
def test_a_hot_path_names_a_bad_argument_when_it_fails(case):
    """The unchecked hot paths (the flows' KL and the engine's gradient) check nothing up front and name the bad
    argument once their computation failed (_checks.on_failure); the readers' mapping and the proofs check first."""
    from grpo_theory import advantage, kl, symbolic_proofs
    from grpo_theory.integrations.mapping import mapping_of
    call, names = [
        (lambda: kl.flow_value(None, [0.1]), "obj must be an Objective, got None"),
        (lambda: kl.floored_log_ratio(5, [0.1]), "obj must be an Objective, got 5"),
        (lambda: kl.flow_value_shift("x", [0.1]), "obj must be an Objective, got 'x'"),
        (lambda: advantage.level_expectations([0.0, 1.0], np.log([[0.5, 0.5]]), None), "obj must be an Objective"),
        (lambda: advantage.regularised_gradient([0.1], np.zeros(1), np.zeros(1), None, None),
         "P must be a numpy array"),
        (lambda: mapping_of(None, None, "verl", None), "warns must be a list of strings, got None"),
        (lambda: symbolic_proofs.prove_zero(None, "s"), "expr must be a sympy expression, got None"),
    ][case]
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_the_lock_of_an_output_named_in_bytes_that_are_not_utf8(tmp_path):
    import os

    from grpo_theory._outlock import lock_path
    out = os.fsdecode(os.fsencode(str(tmp_path)) + b"/g\xff.csv")    # a name the shell gives as $'g\xff.csv'
    assert os.fsencode(lock_path(out).name) == b"g\xff.csv.lock"       # beside it, its own bytes kept


def test_the_response_takes_probabilities_only():
    from grpo_theory import Objective
    from grpo_theory.predict import Response
    r = Response(Objective(beta=0.5))
    for ps, names in (([float("nan")], r"ps must be a finite number in \[0.0, 1.0\], got \[nan\]"),   # was x = 1
                      ([1.5], r"got \[1.5\]"), ([[0.3], [0.2, 0.1]], "ps is ragged")):
        with pytest.raises(InvalidInputError, match=names):
            r(ps)


def test_arrays_that_do_not_go_together_are_named():
    from grpo_theory.predict.conformal import conformal_interval
    from grpo_theory.predict.response import class_kl
    offsets = conformal_offsets([0.5, 0.4, 0.3], [1, 2, 1], [4, 4, 4])
    with pytest.raises(InvalidInputError, match=r"m of shape \(2,\) does not broadcast to the shape of p"):
        conformal_interval([0.3, 0.4, 0.5], offsets, [4, 4])
    with pytest.raises(InvalidInputError, match=r"do not broadcast together: x \(3,\), p \(2,\)"):
        class_kl([0.3, 0.4, 0.5], [0.2, 0.3])


def test_the_fourteenth_rounds_rows_of_these_classes():
    import pandas as pd

    from grpo_theory import Objective
    from grpo_theory.advantage import pass_at_k_table
    from grpo_theory.figures.build import same_table
    from grpo_theory.monte_carlo import sampled_advantages
    with pytest.raises(InvalidInputError, match=r"n_pass must be at most the group size G, got n_pass = 5 > .* = 4"):
        pass_at_k_table(np.array([5]), 4, 2)                  # 5 passes among G = 4 members
    with pytest.raises(InvalidInputError, match=r"G = 3 rewards .* got shape \(1, 4\)"):
        sampled_advantages(np.array([[1.0, 0.0, 0.0, 1.0]]), Objective(beta=0.5, group_size=3))
    a = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(InvalidInputError, match="b must be a pandas DataFrame, got 'a.csv'"):
        same_table(a, "a.csv")
    with pytest.raises(InvalidInputError, match=r"rtol must be a finite number in \[0.0, inf\), got -1"):
        same_table(a, a, rtol=-1)
    assert sampled_advantages(np.array([[1.0, 0.0]]), Objective(beta=0.5)).tolist() == [[1.0, -1.0]]   # Eq. 2, G = 2
    from grpo_theory.preference import level_expectations
    with pytest.raises(InvalidInputError, match="levels must be distinct values, got 0 twice"):
        level_expectations(np.array([0.0, 0.0]), np.log([[0.5, 0.5]]), Objective(beta=0.5, group_size=4))
    from grpo_theory.convergence import summarise_convergence
    with pytest.raises(InvalidInputError, match="errors, status and reasons must have one length .* reasons 3"):
        summarise_convergence([0.1, 0.2], ["converged", "moving"], ["x", "y", "z"])
