"""experiments/fuzz_reliability.py's runner: ``--seeds`` runs exactly the seeds given, rows keyed by seed.

The checks are stand-ins (a dict per seed), so these tests time the runner's bookkeeping, not a solve.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import fuzz_reliability as fr  # noqa: E402

from grpo_theory.errors import InvalidInputError  # noqa: E402


def _rows(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _fake(outcome="ok", end="same", **extra):
    def check(seed):
        return dict(seed=seed, outcome=outcome, end=end, detail=f"run of {seed}", **extra)
    return check


def test_seeds_from_a_list_and_from_a_file(tmp_path):
    assert fr.parse_seeds("9043,9264, 9738") == [9043, 9264, 9738]
    assert fr.parse_seeds("5,3,5") == [5, 3]                        # a repeat is run once, where it first appears
    f = tmp_path / "seeds.txt"
    f.write_text("# unfinished\n9043 9264\n9738,  # a comment\n\n9854\n")
    assert fr.parse_seeds(f"@{f}") == [9043, 9264, 9738, 9854]


@pytest.mark.parametrize("spec, named", [("9043,x1", "'x1'"), ("-3", "'-3'"), ("1.5", "'1.5'"), (" , ", "no seeds"),
                                         ("@/nonexistent/seeds.txt", "/nonexistent/seeds.txt")])
def test_a_bad_seed_list_names_the_offending_token(spec, named):
    with pytest.raises(InvalidInputError, match="--seeds") as err:
        fr.parse_seeds(spec)
    assert named in str(err.value)


def test_a_rerun_replaces_the_seeds_rows_in_place_and_says_so(tmp_path):
    out = tmp_path / "kl.csv"
    fr.rerun_seeds(_fake("ok-face", "unchecked"), [1, 2, 3], out, log=lambda _: None)
    before = _rows(out)
    lines = []
    fr.rerun_seeds(_fake("ok-face", "same", check_seconds=4.5), [2, 7], out, log=lines.append)
    after = _rows(out)
    assert [r["seed"] for r in after] == ["1", "2", "3", "7"]      # replaced in place, the new seed appended
    assert after[0] == {**before[0], "check_seconds": ""} and after[2] == {**before[2], "check_seconds": ""}
    assert after[1]["end"] == "same" and after[1]["check_seconds"] == "4.5"
    assert lines[0] == f"seed 2: ok-face, end same (replaces its row in {out}: was ok-face, end unchecked)"
    assert lines[1] == f"seed 7: ok-face, end same (new row in {out})"


def test_a_rerun_drops_a_seeds_duplicate_rows(tmp_path):
    out = tmp_path / "merged.csv"                     # two merged files can hold a seed twice
    out.write_text("seed,outcome,end\n4,timeout,\n5,ok,same\n4,ok,unchecked\n")
    lines = []
    fr.rerun_seeds(_fake(), [4], out, log=lines.append)
    assert [(r["seed"], r["outcome"]) for r in _rows(out)] == [("4", "ok"), ("5", "ok")]
    assert "replaces its 2 rows" in lines[0] and "was timeout; ok, end unchecked" in lines[0]


def test_the_command_line_runs_exactly_the_seeds_given(tmp_path, monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(fr, "check_case", lambda seed: ran.append(seed) or _fake()(seed))
    out = tmp_path / "rel.csv"
    (tmp_path / "s.txt").write_text("8\n3\n")
    fr.main(["--seeds", f"@{tmp_path / 's.txt'}", "--out", str(out)])
    assert ran == [8, 3] and [r["seed"] for r in _rows(out)] == ["8", "3"]
    assert "2 seeds run into" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        fr.main(["--seeds", "1,2", "--cases", "10", "--out", str(out)])
    assert "--cases and --first choose a range" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        fr.main(["--seeds", "1,two", "--out", str(out)])
    assert "'two' is not a seed" in capsys.readouterr().err


def test_a_recheck_reruns_only_the_unconfirmed_rows_and_keeps_both_verdicts(tmp_path, monkeypatch, capsys):
    out = tmp_path / "kl.csv"
    out.write_text("seed,outcome,end,detail\n1,ok,same,\n2,ok-face,unchecked,budget\n3,timeout,,over\n"
                   "4,ok,late,reached late\n5,flagged,,why\n")
    budgets = []

    def fake_kl(seed, budget=1.0):
        budgets.append((seed, budget))
        return dict(seed=seed, outcome="ok-face" if seed != 3 else "timeout", end="robust" if seed != 3 else "",
                    detail=f"budget {budget:g}", seconds=1.0, check_seconds=2.0)

    monkeypatch.setattr(fr, "check_kl_case", fake_kl)
    fr.main(["--kl", "--recheck-unconfirmed", "--recheck-budget", "10", "--out", str(out)])
    assert budgets == [(2, 10.0), (3, 10.0), (4, 10.0)]                 # not the confirmed 1, nor the flagged 5
    rows = {r["seed"]: r for r in _rows(out)}
    assert (rows["2"]["end"], rows["2"]["recheck_end"], rows["2"]["recheck_budget"]) == ("unchecked", "robust", "10.0")
    assert rows["2"]["detail"] == "budget" and rows["2"]["recheck_detail"] == "budget 10"
    assert rows["3"]["outcome"] == rows["3"]["recheck_outcome"] == "timeout"
    assert rows["1"]["recheck_end"] == "" and rows["5"]["recheck_outcome"] == ""
    printed = capsys.readouterr().out
    assert "3 rows of" in printed and "seeds 2, 3, 4" in printed
    # at the same factor every row is rechecked already (a killed recheck resumes); a larger factor reruns them
    budgets.clear()
    fr.main(["--kl", "--recheck-unconfirmed", "--out", str(out)])
    assert budgets == []
    fr.main(["--kl", "--recheck-unconfirmed", "--recheck-budget", "30", "--out", str(out)])
    assert [s for s, _ in budgets] == [2, 3, 4]


def test_a_recheck_needs_an_existing_file_and_a_factor_of_at_least_one(tmp_path, capsys):
    with pytest.raises(SystemExit):
        fr.main(["--kl", "--recheck-unconfirmed", "--out", str(tmp_path / "none.csv")])
    assert "none.csv does not exist" in capsys.readouterr().err
    for bad in ("0.5", "nan", "inf"):
        with pytest.raises(SystemExit):
            fr.main(["--kl", "--recheck-unconfirmed", "--recheck-budget", bad, "--out", str(tmp_path / "x.csv")])
        assert f"got {bad}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        fr.main(["--kl", "--recheck-unconfirmed", "--seeds", "1", "--out", str(tmp_path / "x.csv")])
    assert "takes no --seeds" in capsys.readouterr().err
