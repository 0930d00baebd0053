"""Valid but unusual input, checked against computations written from SPEC.md alone (no call into the package
for the expected values); messages checked for what they claim."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

from grpo_theory import InvalidInputError, closed_form
from grpo_theory.sweep import check_grid


def _binary_pa(x: float, G: int) -> float:
    """SPEC section 2: ``P_G(a | pi) = E[sqrt((G-1-k)/(k+1))]``, ``k ~ Binomial(G-1, x)``, summed in log space."""
    n = G - 1
    return math.fsum(math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                              + k * math.log(x) + (n - k) * math.log1p(-x)) * math.sqrt((n - k) / (k + 1))
                     for k in range(G))


def test_the_large_group_gap_falls_as_one_over_g():
    """What the refusals of a huge G tell the user: ``P_G`` is ``O(1/G)`` from its limit ``sqrt((1-x)/x)``.

    ``G (P_inf - P_G)`` at ``x = 0.3`` is 0.9102 at ``G = 1000`` and 0.9093 at ``G = 10000`` (flat: O(1/G));
    an O(1/sqrt(G)) gap would make it grow by sqrt(10)."""
    x = 0.3
    limit = math.sqrt((1 - x) / x)
    g1, g2 = (G * (limit - _binary_pa(x, G)) for G in (1000, 10_000))
    assert g2 == pytest.approx(g1, rel=2e-3)
    assert float(closed_form.binary_preference(x, 10_000)[0]) == pytest.approx(_binary_pa(x, 10_000), rel=1e-11)


def _messages():
    from grpo_theory.cli import _group_size

    with pytest.raises(InvalidInputError) as closed:
        closed_form.binary_preference(0.3, 10**8)
    with pytest.raises(argparse.ArgumentTypeError) as shell:
        _group_size("10000000")
    grid = check_grid({"questions": [{"name": "q", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}],
                       "objectives": {"beta": [0.5], "group_size": [10**7]}})
    return [str(closed.value), str(shell.value), " ".join(grid)]


def test_the_refusals_of_a_huge_group_state_the_gap_truly():
    for text in _messages():
        assert "O(1/G)" in text and "sqrt(G)" not in text, text


def _pipe(text: str) -> str:
    """A pipe holding ``text``, its writer closed (what ``<(cmd)`` gives once ``cmd`` has finished): its path."""
    import os

    r, w = os.pipe()
    os.write(w, text.encode())
    os.close(w)
    return f"/dev/fd/{r}"


_VERL = ("algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n"
         "    kl_loss_coef: 0.3\n    kl_loss_type: low_var_kl\n  rollout:\n    n: 6\n")


def test_a_verl_config_from_a_pipe_is_read_not_called_a_pipe_nothing_writes_to():
    """``explain --framework verl <(cat cfg.yaml)``: the config is read once for its format and once by the
    reader; the pipe's bytes serve both (it was "a FIFO that nothing writes to")."""
    import warnings

    from grpo_theory.integrations.mapping import load_config_file
    from grpo_theory.integrations.verl import read_verl_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = read_verl_config(load_config_file("verl", _pipe(_VERL))).objective
    assert (obj.beta, obj.group_size, obj.kl_value_clamp) == (0.3, 6, 10.0)


def test_a_trl_yaml_config_from_a_pipe_is_read_as_yaml():
    """A file without a suffix that holds no JSON object is YAML (it was "not valid JSON: Expecting value")."""
    import warnings

    from grpo_theory.integrations.mapping import load_config_file
    from grpo_theory.integrations.trl import read_trl_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = read_trl_config(load_config_file("trl", _pipe("beta: 0.1\nnum_generations: 4\n"))).objective
    assert (obj.beta, obj.group_size) == (0.1, 4)


def test_a_failure_inside_scipy_is_not_told_as_a_fault_of_the_input():
    """SciPy's "array must not contain infs or NaNs", raised inside its own routines (as it was from the solvers'
    integrator at beta = 1e150 with verl's clamps), was printed as if the user's array held them; the line says
    where it failed and whose it is."""
    import scipy.linalg

    from grpo_theory.cli import _cli_message

    try:
        scipy.linalg.lu_factor(np.array([[np.nan, 1.0], [1.0, 1.0]]))
    except ValueError as exc:
        msg = _cli_message(exc)
    assert "not an error in it" in msg and "please report" in msg, msg


def test_graded_counts_at_a_huge_beta_with_clamps_are_answered(tmp_path, capsys):
    """The same predict that failed inside SciPy: at beta = 1e150 the stationary point is pi_ref to double
    precision (the clamps do not bind there), so each prompt's prediction is its p_ref."""
    from grpo_theory.cli import main

    samples = tmp_path / "graded.csv"
    samples.write_text("prompt_id,count_0,count_0.5,count_1\na,3,2,5\nb,1,4,5\n")
    code = main(["predict", str(samples), "--beta", "1e150", "--kl-value-clamp", "10", "--kl-log-ratio-clamp", "20",
                 "--out", str(tmp_path / "out"), "--no-plots", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    import pandas as pd

    t = pd.read_csv(tmp_path / "out" / "predictions.csv")
    np.testing.assert_allclose(t.pred, t.p_ref, rtol=1e-12)


def test_the_package_own_value_errors_keep_their_message():
    from grpo_theory.cli import _cli_message

    assert _cli_message(InvalidInputError("beta must be positive, got -1")) == "beta must be positive, got -1"
    try:
        int("x")
    except ValueError as exc:              # raised outside SciPy's and NumPy's numerical routines
        assert "not an error in it" not in _cli_message(exc)


def test_graded_rewards_print_no_zero_width_interval(tmp_path, capsys):
    """Graded rewards carry no p_ref interval: the line printed ``0.7287 [0.7287, 0.7287]``, an interval of width 0."""
    from grpo_theory.cli import main

    samples = tmp_path / "r.csv"
    samples.write_text("prompt_id,reward\na,1\na,0.5\na,0\n")
    assert main(["predict", str(samples), "--beta", "0.5", "--out", str(tmp_path / "out")]) == 0
    line = next(t for t in capsys.readouterr().out.splitlines() if "mean P(correct)" in t)
    assert "no p_ref interval for graded rewards" in line and "[" not in line, line


def test_the_entropy_bonus_direct_form_underflows_without_a_numpy_warning():
    """``logit x = (Delta + beta logit p)/(beta + c)`` = -250,000 for Delta = -0.5, beta = c = 1e-6: ``x`` is 0 in
    doubles (e^-250000), and NumPy's "overflow encountered in exp" reached the caller."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(closed_form.binary_entropy(0.3, 1e-6, 1e-6, margin=-0.5, penalty="direct")) == 0.0
        # logit x = (1 + 0.5 logit 0.3)/1.5: the same closed form where nothing underflows
        want = 1 / (1 + math.exp(-(1 + 0.5 * math.log(0.3 / 0.7)) / 1.5))
        assert float(closed_form.binary_entropy(0.3, 0.5, 1.0, penalty="direct")) == pytest.approx(want, rel=1e-14)


def test_solve_at_beta_zero_gives_the_shells_remedies(capsys):
    """``solve --beta 0`` advised ``entropy_coef > 0`` (solve has no such option) and Python's ``with_points=False``."""
    from grpo_theory.cli import main

    assert main(["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0"]) == 2
    err = capsys.readouterr().err
    assert "--beta > 0" in err and "entropy_coef" not in err and "with_points" not in err, err
