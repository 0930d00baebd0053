"""Regression tests of the seventh hostile audit's findings in the library (docs/reliability.md, "Hostile input,
seventh round"); the audit itself is ``tests/hostile_audit_round7.py`` (slow, not in the default run)."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question, kl, monte_carlo_preference
from grpo_theory import closed_form as cf
from grpo_theory.cli import main
from grpo_theory.predict import binomial_interval

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow                                 # importing torch costs seconds
def test_a_tensor_that_requires_grad_is_refused_by_name():
    torch = pytest.importorskip("torch")
    t = torch.tensor([0.15, 0.85], dtype=torch.float64, requires_grad=True)
    with pytest.raises(InvalidInputError, match=r"pi_ref_a cannot be read as numbers: Tensor says .*detach"):
        cf.binary_large_group(t, 2.0)
    with pytest.raises(InvalidInputError, match="lr cannot be read as numbers"):
        kl.estimator_value(Objective(beta=0.5, kl_estimator="k3"), t)


def test_masked_log_ratios_are_refused():
    lr = np.ma.masked_array([-0.7, 0.0, 2.5], mask=[False, False, True])
    with pytest.raises(InvalidInputError, match="lr has 1 masked entries"):
        kl.estimator_value(Objective(beta=0.5, kl_estimator="k3"), lr)


def test_binomial_interval_level_is_a_double():
    """Wilson's interval at level 0.9 held as float32 (0.89999998): the same numbers as that level as a double
    (it was computed in single precision, 3e-9 off); a Decimal or long double level works (it raised)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + float(np.float32(0.9)) / 2)
    ph, n = 7 / 20, 20
    mid, half = (ph + z * z / (2 * n)) / (1 + z * z / n), z * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo, hi = binomial_interval(7, 20, level=np.float32(0.9), method="wilson")
    assert abs(float(lo) - (mid - half)) < 1e-12 and abs(float(hi) - (mid + half)) < 1e-12
    a = binomial_interval(7, 20, level=Decimal("0.9"), method="wilson")
    b = binomial_interval(7, 20, level=0.9, method="wilson")
    assert np.allclose(a, b, rtol=0, atol=0)
    assert np.allclose(binomial_interval(7, 20, level=np.longdouble(0.8)), binomial_interval(7, 20, level=0.8))


@pytest.mark.parametrize("seed", [-1, "3", 2.5, True])
def test_monte_carlo_seed_is_checked(seed):
    q = Question([0.3, 0.7], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match="seed"):
        monte_carlo_preference(q, Objective(beta=0.5, group_size=4), [0.3, 0.7], n_groups=10, seed=seed)


def test_std_ddof_numpy_bool_is_refused():
    with pytest.raises(InvalidInputError, match="std_ddof must be 0 or 1"):
        Objective(beta=0.5, group_size=3, std_ddof=np.True_)


def test_openrlhf_dr_grpo_and_an_element_with_two_words(tmp_path, capsys):
    argv = ["--advantage_estimator", "dr_grpo", "--n_samples_per_prompt", "8", "--init_kl_coef", "1e-3",
            "--use_kl_loss", "--kl_estimator", "k3"]
    path = tmp_path / "o.json"
    path.write_text(json.dumps(argv))
    assert main(["explain", "--framework", "openrlhf", str(path), "--json"]) == 0
    o = json.loads(capsys.readouterr().out)["objective"]
    assert (o["normalization"], o["group_size"], o["beta"]) == ("shift", 8, 0.001)
    path.write_text(json.dumps(["--advantage_estimator", "group_norm", "--n_samples_per_prompt 8"]))
    assert main(["explain", "--framework", "openrlhf", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'--n_samples_per_prompt 8' at position 2 holds a flag and a value" in err


@pytest.mark.parametrize("extra, named", [(["--group-size", "4"], "--group-size"), (["--std-d", "0"], "--std-ddof"),
                                          (["--kl-estimator=k2"], "--kl-estimator")])
def test_predict_refuses_objective_options_beside_a_config(tmp_path, capsys, extra, named):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    (tmp_path / "c.json").write_text(json.dumps({"num_generations": 8, "beta": 0.04}))
    rc = main(["predict", str(tmp_path / "s.csv"), "--framework", "trl", str(tmp_path / "c.json"), "--out",
               str(tmp_path / "o"), "--no-progress", *extra])
    assert rc == 2 and f"{named} would set what --framework trl CONFIG reads" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_predict_sample_temperature_needs_a_config(tmp_path, capsys):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    rc = main(["predict", str(tmp_path / "s.csv"), "--beta", "0.5", "--sample-temperature", "1.0", "--out",
               str(tmp_path / "o"), "--no-progress"])
    assert rc == 2 and "--sample-temperature 1 is checked against training's temperature" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    import grpo_theory

    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"grpo-theory {grpo_theory.__version__}"


@pytest.mark.slow                                 # a fresh interpreter
def test_python_dash_m():
    p = subprocess.run([sys.executable, "-m", "grpo_theory", "--version"], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("grpo-theory ")
