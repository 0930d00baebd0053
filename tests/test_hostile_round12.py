"""Regression tests for the twelfth hostile audit's library findings (docs/reliability.md "Hostile input,
twelfth round"): each input once, with the refusal it now gets. Fast: about 3 s in all."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from grpo_theory import Objective
from grpo_theory.cli import main
from grpo_theory.errors import InvalidInputError

BASE = "prompt_id,n,correct\n" + "".join(f"q{i:02d},{10 + i},{1 + i % 9}\n" for i in range(16))
AFTER = "prompt_id,n,correct\n" + "".join(f"q{i:02d},32,{12 + i}\n" for i in range(0, 16, 2))


def _files(tmp_path):
    (tmp_path / "b.csv").write_text(BASE)
    (tmp_path / "a.csv").write_text(AFTER)
    return ["predict", str(tmp_path / "b.csv"), "--beta", "0.3", "--measured", str(tmp_path / "a.csv"), "--out",
            str(tmp_path / "o"), "--no-plots", "--no-progress"]


def _refused(argv, capsys, *names):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("grpo-theory"), err
    for n in names:
        assert n in err[0], (n, err[0])
    return err[0]


def test_a_repeated_rho_is_refused_by_name(tmp_path, capsys):
    line = _refused(_files(tmp_path) + ["--rhos", "0.5", "0.5"], capsys, "--rhos", "0.5", "distinct")
    assert "p < 0" not in line


def test_a_boolean_kernel_names_its_file(tmp_path, capsys):
    np.save(tmp_path / "k.npy", np.eye(16, dtype=bool))
    _refused(_files(tmp_path) + ["--kernel", str(tmp_path / "k.npy")], capsys, "k.npy", "boolean")


def test_holdout_is_shown_as_given(tmp_path, capsys):
    _refused(_files(tmp_path) + ["--holdout", "0.9999999"], capsys, "0.9999999")


def test_a_json_number_beyond_a_double_is_named_by_its_key(tmp_path, capsys):
    (tmp_path / "c.json").write_text('{"beta": 1e999, "num_generations": 8}')
    _refused(["explain", "--framework", "trl", str(tmp_path / "c.json")], capsys, "c.json", "beta = 1e999")


@pytest.mark.parametrize("values", [np.full(40, 0.5) + 0.1j, [0.5] * 39 + [0.5 + 0j]])
def test_complex_trajectories_are_refused(values):
    from grpo_theory.convergence import check_trajectories

    with pytest.raises(InvalidInputError, match=r"values must be real numbers, got the complex number"):
        check_trajectories(np.arange(1, 41), values)


def test_no_negative_zero_in_predictions_csv(tmp_path):
    assert main(_files(tmp_path)) == 0
    with open(tmp_path / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        fields = [v for row in csv.reader(fh) for v in row]
    assert not [v for v in fields if v.startswith("-0") and float(v) == 0.0]


def test_the_api_refuses_a_repeated_rho_too():
    from grpo_theory.predict import predict, samples_from_counts

    base = samples_from_counts([20] * 6, [3, 5, 7, 9, 11, 13], [f"p{i}" for i in range(6)])
    after = samples_from_counts([30] * 3, [10, 20, 25], ["p0", "p2", "p4"])
    with pytest.raises(InvalidInputError, match=r"rhos must be distinct values, got 0.3 twice"):
        predict(base, Objective(beta=0.3), measured=after, rhos=[0.0, 0.3, 0.3])
