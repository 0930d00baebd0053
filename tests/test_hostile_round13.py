"""The thirteenth hostile audit's findings, fixed by argument rules (docs/reliability.md, "Hostile input, thirteenth
round"): each input is now a clear InvalidInputError (NoStationaryPolicy for an unregularised stationary query)
naming the argument and what was expected, or, where the docstring allows it, an answer. The expectations come from
the docstrings: Hydra's removal ``~key`` (its override grammar), ``time_grid``'s ``n`` positive times from
``t_min`` to ``t_max``, Eq. 14 for a valid answer."""

from __future__ import annotations

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
    (lambda: check_counts([0, 0], [1, 1], [2, 2], 3), "index must be distinct values, got 0 2 times"),
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
