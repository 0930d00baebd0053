"""Rules of the framework readers on files that are not what they claim: a TRL config none of whose keys is a
trainer field is refused (explain's own JSON output given back is named as such), a near-miss key gets its
likely field, and array inputs given as typed memory views are read as their numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question, stationary_policy
from grpo_theory.cli import main
from grpo_theory.integrations.trl import read_trl_config as from_trl


def test_explains_json_given_back_as_a_trl_config_is_named_not_read_as_defaults(tmp_path, capsys):
    cfg = tmp_path / "trl.json"
    cfg.write_text(json.dumps({"beta": 0.04, "num_generations": 8}), encoding="utf-8")
    assert main(["explain", "--framework", "trl", str(cfg), "--json"]) == 0
    out = tmp_path / "explained.json"
    out.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["explain", "--framework", "trl", str(out)]) == 2
    err = capsys.readouterr().err
    assert "none of its keys" in err and "explain --json" in err, err
    with pytest.raises(InvalidInputError, match="none of its keys"):
        from_trl({"learning_rat": 1e-6})                 # one key, and not a field


def test_a_near_miss_key_names_the_field_it_likely_meant():
    with pytest.warns(Warning, match="beta=0"):         # betaa is not beta: TRL's default 0 is used, and said
        m = from_trl({"betaa": 0.1, "num_generations": 8})
    assert any("did you mean 'beta' for 'betaa'" in w for w in m.warnings), m.warnings
    assert m.objective.group_size == 8


def test_a_typed_memoryview_is_read_as_its_numbers_and_a_view_of_bytes_is_refused():
    obj = Objective(beta=0.5)
    plain = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), obj).pi
    viewed = stationary_policy(Question(memoryview(np.array([0.3, 0.7])), rewards=memoryview(np.array([1, 0],
                                                                                                    dtype=np.int32))),
                               obj).pi
    assert np.array_equal(plain, viewed)
    with pytest.raises(InvalidInputError, match="view of bytes"):
        Question(memoryview(b"ab"), rewards=[1, 0])
