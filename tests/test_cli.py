"""The `grpo-theory` command and the import-time promise (no torch, no TRL)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_theory.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_import_does_not_pull_torch_or_trl():
    code = ("import sys, grpo_theory, grpo_theory.dynamics, grpo_theory.symbolic, grpo_theory.figures; "
            "bad = [m for m in ('torch', 'trl', 'transformers') if m in sys.modules]; print(bad); "
            "sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_solve_prints_every_variant_and_the_baselines(capsys):
    assert main(["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5",
                 "--group-size", "2"]) == 0
    out = capsys.readouterr().out
    for name in ("GRPO reverse/scale", "GRPO reverse/shift", "GRPO direct/scale", "GRPO direct/shift",
                 "RLHF", "NLHF"):
        assert name in out
    from grpo_theory import closed_form
    row = next(line for line in out.splitlines() if line.startswith("GRPO reverse/scale"))
    assert f"{float(closed_form.binary_pairwise(0.3, 0.5)):.6f}" in row      # Eq. 14, independent of the solver


def test_solve_json_and_large_group(capsys):
    assert main(["solve", "--pi-ref", "0.1", "0.9", "--rewards", "1", "0", "--beta", "1", "--group-size", "inf",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["method"]: r for r in data["rows"]}
    assert data["group_size"] is None
    assert rows["GRPO direct/scale"]["n_points"] == 3 and rows["GRPO direct/scale"]["exhaustive"]


def test_bad_input_exits_2_with_the_value(capsys):
    assert main(["solve", "--pi-ref", "0.3", "0.6", "--rewards", "1", "0", "--beta", "0.5"]) == 2
    assert "sum to 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["solve", "--pi-ref", "0.5", "0.5", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "x"])


# `grpo-theory derivations --check` on the committed file: tests/test_symbolic.py (where the derivations
# are already computed in the same process).


def test_explain_a_trl_config_from_json(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"num_generations": 8, "beta": 0.2, "use_bias_correction_kl": False,
                               "max_completion_length": 1}))
    assert main(["explain", "--framework", "trl", str(cfg), "--pi-ref", "0.3", "0.7", "--rewards", "1", "0",
                 "--trl-version", "1.16.0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["objective"]["describe"].startswith("reverse/scale, G=8, beta=0.2, ddof=1")
    assert 0.3 < data["question"]["stationary_policy"][0] < 1
    assert main(["explain", "--framework", "trl", str(cfg), "--trl-version", "1.16.0"]) == 0
    assert "reverse penalty (Eq. 11)" in capsys.readouterr().out


def test_explain_verl_and_openrlhf_configs(tmp_path, capsys):
    y = tmp_path / "verl.yaml"
    y.write_text("algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  rollout:\n    n: 5\n  actor:\n"
                 "    use_kl_loss: true\n")
    assert main(["explain", "--framework", "verl", str(y), "--pi-ref", "0.5", "0.5", "--rewards", "1", "0"]) == 0
    out = capsys.readouterr().out
    assert "collapse" in out and "clamp is active" in out and "G = 5; beta = 0.001" in out
    a = tmp_path / "orl.json"
    a.write_text(json.dumps(["--algo.advantage.estimator", "group_norm", "--rollout.n_samples_per_prompt", "4",
                             "--algo.kl.init_coef", "0.5"]))
    assert main(["explain", "--framework", "openrlhf", str(a), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["objective"]["kl_placement"] == "advantage" and data["objective"]["group_size"] == 4
    assert main(["explain", "--framework", "verl", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["explain", "--framework", "openrlhf", str(a), "--pi-ref", "0.5", "0.5"]) == 2
    assert "both --pi-ref and --rewards" in capsys.readouterr().err


def test_validate_takes_one_study_by_name():
    """One `validate --study NAME` for every study; the old validate-smollm2/validate-trl commands are gone."""
    from grpo_theory.cli import STUDIES, build_parser

    parser = build_parser()
    assert set(STUDIES) == {"small", "tree", "kl", "smollm2", "free", "trl"}
    for name in STUDIES:
        assert parser.parse_args(["validate", "--study", name]).study == name
    assert parser.parse_args(["validate"]).study == "small"
    for argv in (["validate", "--study", "huge"], ["validate-trl"], ["validate-smollm2"], ["validate", "--tree"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)


def test_a_bare_double_dash_ends_the_options_also_for_the_given_option_checks(tmp_path, monkeypatch, capsys):
    """``predict ... -- -s.csv``: after ``--`` a name that starts with a dash is the samples file (argparse's rule);
    the check of which options were given must not read ``--`` as an abbreviation of ``--seed``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-s.csv").write_text("prompt_id,n,correct\na,8,3\n", encoding="utf-8")
    assert main(["predict", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress", "--", "-s.csv"]) == 0, \
        capsys.readouterr().err
    assert (tmp_path / "o" / "predictions.csv").exists()
