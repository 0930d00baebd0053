"""Value kinds a caller hands over where a list or a float is meant (docs/reliability.md, "Hostile input, the
sweep before the fourteenth round"): each is a clear InvalidInputError naming the argument, or, where the value
holds the valid numbers in another type, the valid call's answer."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from grpo_theory import Objective, Question
from grpo_theory.advantage import entropy_logit_bounds, rloo_expectations
from grpo_theory.convergence import check_history, check_trajectories, report_columns, summarise_convergence
from grpo_theory.errors import InvalidInputError
from grpo_theory.integrations.cmdline import check_set
from grpo_theory.integrations.openrlhf import read_openrlhf_config
from grpo_theory.kl import estimator_value
from grpo_theory.monte_carlo import sample_rewards, sampled_advantages
from grpo_theory.predict import predict, samples_from_counts
from grpo_theory.predict.conformal import calibration_split
from grpo_theory.predict.intervals import check_k, pass_at_k
from grpo_theory.preference import level_expectations
from grpo_theory.problem import Objective as _Objective
from grpo_theory.solvers.baselines import log_pooling
from grpo_theory.sweep import sweep


class _FloatRaises:
    def __float__(self):
        raise RuntimeError("cannot compute this value")


class _IterRaises:
    def __iter__(self):
        raise RuntimeError("the handle is closed")


def _history(n=60):
    return [{"step": s, "p_best_q0": 0.9 - 0.8 * math.exp(-s / 20)} for s in range(1, n + 1)]


def _report():
    steps = np.arange(1, 201)
    return check_trajectories(steps, 0.9 - 0.8 * np.exp(-steps / 20.0))


@pytest.mark.parametrize("call, names", [
    # a number-like object whose conversion fails: its own message, under the argument's name
    (lambda: log_pooling(_FloatRaises(), [1, 0], 0.5), "pi_ref cannot be read as numbers.*RuntimeError: cannot comp"),
    (lambda: estimator_value(Objective(beta=1.0), [_FloatRaises()]), "lr cannot be read as numbers"),
    # bytes-like containers: NumPy reads a bytearray as its bytes (b'0.5' -> 48, 46, 53)
    (lambda: log_pooling(bytearray(b"0.5"), [1, 0], 0.5), r"pi_ref must be a number or an array.*bytearray"),
    (lambda: check_k(bytearray(b"12")), "k must be an integer >= 1 or a list of them"),
    (lambda: Question([0.5, 0.5], [1, 0], labels=bytearray(b"ab")), "labels must be a list of K=2 names"),
    (lambda: Question([0.5, 0.5], [1, 0], answers=bytearray(b"ab")), "answers must be a sequence of token"),
    # NumPy times and complex arrays with zero imaginary parts
    (lambda: log_pooling(np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"), [1, 0], 0.5),
     "pi_ref must be a number or an array of numbers.*NumPy times"),
    (lambda: estimator_value(Objective(beta=1.0), np.array([0.1, 0.2], dtype=complex)), "lr must be real numbers"),
    # an int no double holds
    (lambda: pass_at_k(0.5, 10**400), "k = 1000000000000.* is beyond the largest double"),
    (lambda: Objective(beta=0.5, groups_per_batch=10**400), "groups_per_batch = .* beyond the largest double"),
    (lambda: predict(samples_from_counts([20], [5]), Objective(beta=0.5), clock=10**400),
     r"clock must be a positive number .*\(401 digits\)"),
    # ragged and nested lists where names are meant
    (lambda: Question([0.5, 0.5], [1, 0], labels=[[1, 2], [3]]), r"labels must be names .* one entry is \[1, 2\]"),
    (lambda: check_set({"a": "1"}, [[1, 2], [3]], "s"), r"read must be setting names .* one entry is \[1, 2\]"),
    (lambda: read_openrlhf_config({0: 0.5, 1: 0.5}), "a mapping's keys must be flag names"),
    # containers whose entries are no instances of what is meant; a pandas Series of them; a failing iterator
    (lambda: sweep(pd.Series([0.5, 0.5])), "cases must be a list of Case, got .*Series"),
    (lambda: sweep(x for x in [0.5]), "cases must be a list of Case; one entry is 0.5"),
    (lambda: report_columns(pd.Series([0.5]), 0), "report must be a list of one-prompt ConvergenceReports"),
    (lambda: report_columns([], 0), r"q = 0 is out of range: there are 0 one-prompt reports in report"),
    (lambda: check_history(_IterRaises(), 1), "history could not be read .*RuntimeError: the handle is closed"),
    (lambda: check_history(_history(), 2), r"history\[0\] has no 'p_best_q1'"),
    (lambda: check_history(_history(), 1, talk=0.5), "'talk' is not an option here: the options passed on to "
                                                     "check_trajectories are se, tail, alpha"),
    # values the function computes on directly: a 0-d array of rewards, indices beyond K, a pair of the wrong size
    (lambda: sampled_advantages(np.array(0.5), Objective(beta=1.0)),
     r"r must hold groups of rewards, shape \(\.\.\., G\)"),
    (lambda: sampled_advantages(np.array([[1.0, 0.0]], dtype=object), Objective(beta=1.0)), "r must be .*dtype object"),
    (lambda: sample_rewards(Question([0.5, 0.5], [1, 0]), np.array([0, 2]), np.random.default_rng(0)),
     r"outputs must be output indices in \[0, 1\] \(K=2\), got 2"),
    (lambda: entropy_logit_bounds(-1.0, (-1.0, 0.0, 1.0), 2.0, Objective(beta=0, entropy_coef=0.5), 740.0),
     r"penalty_bounds must be \(lo, hi\), two numbers"),
    (lambda: predict(samples_from_counts([20], [5]), Objective(beta=0.5), fit=(100, math.nan)),
     r"fit must be a finite number, got \[100, nan\]"),
    (lambda: predict(samples_from_counts([20], [5]), Objective(beta=0.5), fit=(-1.0, 0.3)), "fit's step must be"),
    # reward levels are never NaN (a NaN level recursed without end in the span's rescaling)
    (lambda: level_expectations(np.array([math.nan, 1.0]), np.log([0.8, 0.2]), Objective(beta=1.0)),
     "levels must hold finite numbers, got nan"),
    (lambda: rloo_expectations(np.array([0.0, math.inf]), np.log([[0.7, 0.3]]), Objective(beta=1.0, advantage="rloo")),
     "v must hold finite numbers, got inf"),
    (lambda: summarise_convergence([0.1], ["0.5"]), "status must hold only 'converged', 'moving', .*; got '0.5'"),
])
def test_a_hostile_value_kind_is_named(call, names):
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_a_whole_number_given_as_a_float_is_that_integer():
    """``n=3.0`` (or NumPy's float16 3) reaches a count argument as 3: range(3.0) and np.zeros(3.0) failed."""
    want = calibration_split(6, seed=1).tolist()
    assert calibration_split(6.0, seed=1).tolist() == calibration_split(np.float16(6), seed=1).tolist() == want


def test_a_longdouble_scalar_is_the_double_it_holds():
    """SciPy's solve_ivp refused an np.longdouble ``rtol`` ("cannot upcast [float128]")."""
    from grpo_theory.predict import PromptField
    from grpo_theory.predict.coupled import solve_rho

    field, times = PromptField(Objective(beta=1.0), [0.25, 0.5]), np.array([0.0, 1.0, 2.0])
    a = solve_rho(field, 0.5, times, rtol=np.longdouble(1e-6))
    b = solve_rho(field, 0.5, times, rtol=1e-6)
    assert np.array_equal(a.p, b.p)


def test_a_generator_is_read_once_or_refused():
    """A generator of reports is read once, as the list; AnswerTree.build, which walks its answers several times (a
    generator gave the tree of the first walk only), refuses one by name."""
    from grpo_theory.solvers.tree import AnswerTree

    answers = [("A", "B"), ("A", "C"), ("D",)]
    with pytest.raises(InvalidInputError, match=r"answers must be a list or tuple .*give list\(answers\)"):
        AnswerTree.build(a for a in answers)
    got, want = report_columns((r for r in [_report()]), 0), report_columns([_report()], 0)
    assert str(got) == str(want)


@pytest.mark.parametrize("value", [Fraction(1, 2), Decimal("0.5"), np.array(0.5), np.longdouble(0.5)])
def test_a_number_in_another_type_gives_the_float_answer(value):
    assert log_pooling([0.2, 0.8], [1, 0], value).tolist() == log_pooling([0.2, 0.8], [1, 0], 0.5).tolist()
    assert _Objective(beta=value).beta == 0.5


@pytest.mark.parametrize("call, names", [
    (lambda: sampled_advantages(np.matrix([[1.0, 0.0]]), Objective(beta=1.0)), "r must be a numpy array.*always 2-D"),
    (lambda: rloo_expectations(range(3), np.log([[0.7, 0.3]]), Objective(beta=1.0, advantage="rloo")),
     r"log_w must have one entry per reward level on its last axis \(v has 3 levels\)"),
    (lambda: Question([0.2, 0.3, 0.5], [1, 0, 0], answers=range(3)), r"answers\[0\] must be a sequence of tokens"),
    (lambda: Question([0.3, 0.7], preference=[[1e-310, 0.7], [0.3, 0.5]]),
     r"M\[0,0\] = 1e-310: an output ties with itself, 0.5"),
])
def test_containers_of_another_kind_are_named(call, names):
    with pytest.raises(InvalidInputError, match=names):
        call()


def test_solver_helpers_refuse_a_policy_or_classes_of_another_length():
    from grpo_theory.solvers.full_space import jump_repeller
    from grpo_theory.solvers.full_space_end import class_reduction_exact

    q, obj = Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0)
    with pytest.raises(InvalidInputError, match=r"pi must hold one probability per output \(K=2\), got 3"):
        jump_repeller(q, obj, [0.2, 0.3, 0.5])                  # a law, of 3 outputs
    with pytest.raises(InvalidInputError, match=r"pi must hold probabilities"):
        jump_repeller(q, obj, range(3))                          # neither a law nor of 2 outputs: the law is named
    with pytest.raises(InvalidInputError, match=r"class_of must give each of the K=2 outputs a class"):
        class_reduction_exact(q, obj, range(3))
    q3 = Question([0.25, 0.25, 0.5], rewards=[1, 1, 0])
    obj3 = Objective(beta=0.5, kl_estimator="k3", kl_placement="reward")
    assert class_reduction_exact(q3, obj3, [0, 0, 1]) is True       # equal pi_ref in the class: exact (its doctest)


def test_a_probe_keeps_the_documented_types():
    from grpo_theory.integrations.trl import Probe

    import array

    p = Probe("Q0 ?", ["A", "B"], array.array("d", [1.0, 0.0]))
    assert p.answers == ("A", "B") and p.rewards == (1.0, 0.0) and type(p.rewards[0]) is float


def test_predict_at_extreme_beta_prints_no_numpy_warning(tmp_path, monkeypatch):
    """``predict --beta 1e308`` and ``--kl-value-clamp 1e308`` printed "overflow encountered" from the flows'
    edge search and the clamp's edges; the command answers without them."""
    import warnings

    from grpo_theory import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\nb,8,0\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli.main(["predict", "s.csv", "--out", "o1", "--no-plots", "--no-progress", "--beta", "1e308"]) == 0
        assert cli.main(["predict", "s.csv", "--out", "o2", "--no-plots", "--no-progress", "--beta", "0.5",
                         "--kl-value-clamp", "1e308"]) == 0
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []


def test_a_number_argument_reads_a_fraction_a_decimal_and_a_0d_array_as_their_number():
    """An argument with a number rule took a Fraction, a Decimal or np.array(0.5) as "not a number" (Objective read
    them); now each is the number it holds, and one a double cannot hold is named."""
    want = calibration_split(6, seed=1, fraction=0.5).tolist()
    for v in (Fraction(1, 2), Decimal("0.5"), np.array(0.5)):
        assert calibration_split(6, seed=1, fraction=v).tolist() == want
    assert calibration_split(Fraction(6), seed=1).tolist() == calibration_split(6, seed=1).tolist()
    with pytest.raises(InvalidInputError, match=r"fraction = NaN \(Decimal\) is not a number a double holds"):
        calibration_split(6, seed=1, fraction=Decimal("nan"))
