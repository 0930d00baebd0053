"""The thirteenth hostile audit's tracebacks that are fixed (docs/reliability.md, "Hostile input, thirteenth round"):
each input is now a clear InvalidInputError naming the argument."""

from __future__ import annotations

import pytest

from grpo_theory.errors import InvalidInputError
from grpo_theory.integrations.cmdline import check_set
from grpo_theory.predict.intervals import unbiased_pass_at_k
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
