"""Regression tests of the findings the eighth hostile audit left open (docs/reliability.md, "Hostile input, eighth
round"; the audit's cases in ``tests/hostile_audit_round8_*.py``). Each is a rule, tested through an entry point that
uses it; expected numbers come from the maths contract's sums written out here, not from the package."""

from __future__ import annotations

import csv
import json

import pytest

from grpo_theory import InvalidInputError
from grpo_theory import sweep as sweep_module
from grpo_theory.sweep import COLUMNS, cases_from_grid, check_grid, sweep

# ---------------------------------------------------------------- sweep: a case is its numbers, not the grid's text
QUESTION = {"name": "q", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}


def _keys(objectives):
    return [c.key for c in cases_from_grid({"questions": [QUESTION], "objectives": objectives})]


@pytest.mark.parametrize("one, other", [({"beta": 1}, {"beta": 1.0}), ({"beta": 0.3}, {"beta": "3e-1"}),
                                        ({"beta": 1.0, "group_size": 4}, {"beta": 1.0, "group_size": 4.0}),
                                        ({"beta": 1.0, "group_size": "inf"}, {"beta": 1.0, "group_size": float("inf")})])
def test_two_spellings_of_one_number_are_one_case(one, other):
    assert _keys(one) == _keys(other)


def test_two_numbers_are_two_cases():
    assert len(set(_keys({"beta": [0.3, 0.30000000000000004], "group_size": [2, 3]}))) == 4


def test_a_grid_listing_one_number_twice_is_refused_naming_the_field():
    problems = check_grid({"questions": [QUESTION], "objectives": {"beta": [1, 0.5, 1.0]}})
    assert len(problems) == 1 and "beta lists 1.0 2 times" in problems[0]


def _row(key, pi_ref="[0.3, 0.7]"):
    """A complete row of a sweep file (its numbers are not read back on a resume; its key, question and objective
    are: those of QUESTION and of ``key``'s beta and group_size, as the Question's repr and Objective.describe
    write them)."""
    from grpo_theory import Objective

    fields = {k: float(v) for k, v in (kv.split("=") for kv in key.split("|")[1].split(","))}
    objective = Objective(beta=fields.get("beta", fields.get("b")), group_size=int(fields.get("group_size", 2)))
    return dict(key=key, objective=objective.describe(), question="Question(pi_ref=[0.3, 0.7], rewards=[1.0, 0.0])",
                pi_ref=pi_ref, n_points=1, n_stable=1, exhaustive=True, stable_policies="[[0.5, 0.5]]",
                reached_policy="[0.5, 0.5]", seconds=0.1)


def test_a_file_written_with_the_grids_spellings_resumes_without_computing(tmp_path, monkeypatch):
    """An earlier version keyed a case by the grid's text: ``beta: 1`` was ``beta=1``, ``group_size: 4.0`` was
    ``group_size=4.0``, and a resume after the grid was re-spelled computed the case again under its second key. The
    resume must take both rows for the case they hold: nothing computed, one row per case, the file rewritten."""
    out = tmp_path / "g.csv"
    old = ["q|beta=1,group_size=4.0", "q|beta=1.0,group_size=4",      # one case, twice (the old defect's file)
           "q|beta=0.5,group_size=4", "other|beta=2"]                  # a second case, and a foreign row
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(_row(k) for k in old)

    def computed(case):
        raise AssertionError(f"{case.key} was computed again")

    monkeypatch.setattr(sweep_module, "evaluate_case", computed)
    cases = cases_from_grid({"questions": [QUESTION], "objectives": {"beta": [1, 0.5], "group_size": 4.0}})
    df = sweep(cases, out=out, executor="serial", progress=False)
    assert df.key.tolist() == ["q|beta=1.0,group_size=4", "q|beta=0.5,group_size=4"]
    with open(out, newline="", encoding="utf-8") as fh:
        keys = [r["key"] for r in csv.DictReader(fh)]
    assert keys == ["q|beta=1.0,group_size=4", "q|beta=0.5,group_size=4", "other|beta=2"]
    assert json.loads(df.reached_policy[0]) == [0.5, 0.5]          # the file's row, not a new one


def test_two_cases_whose_keys_differ_only_in_spelling_are_matched_exactly(tmp_path, monkeypatch):
    """Keys given in Python are the user's: ``a|b=1`` and ``a|b=1.0`` as two cases each take only their own row."""
    from grpo_theory import Objective, Question
    from grpo_theory.sweep import Case

    out = tmp_path / "s.csv"
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows([_row("a|b=1"), _row("a|b=1.0")])
    monkeypatch.setattr(sweep_module, "evaluate_case", lambda case: pytest.fail(f"{case.key} computed"))
    q = Question([0.3, 0.7], rewards=[1, 0])
    df = sweep([Case("a|b=1", q, Objective(beta=1.0)), Case("a|b=1.0", q, Objective(beta=1.0))], out=out,
               executor="serial", progress=False)
    assert df.key.tolist() == ["a|b=1", "a|b=1.0"]


def test_a_case_key_must_still_be_unique():
    from grpo_theory import Objective, Question
    from grpo_theory.sweep import Case

    q = Question([0.3, 0.7], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match="'k' appears twice"):
        sweep([Case("k", q, Objective(beta=1.0))] * 2, executor="serial", progress=False)


# ---------------------------------------------------------------- predict: the declared levels and x(0+)
def _pg_binary(x, G, rewards, normalization="scale", ddof=0, eps=0.0):
    """``P_G(a) - P_G(b)`` of a binary question (rewards ``(r_correct, r_wrong)``) at ``pi = (x, 1 - x)``: Eq. 2's
    advantage of the first member, averaged over ``k ~ Binomial(G - 1, x)`` correct answers among the others."""
    from math import comb, sqrt

    rc, rw = rewards
    out = 0.0
    for k in range(G):
        w = comb(G - 1, k) * x ** k * (1 - x) ** (G - 1 - k)
        for first, n_correct, sign in ((rc, k + 1, 1.0), (rw, k, -1.0)):
            group = [rc] * n_correct + [rw] * (G - n_correct)
            mean = sum(group) / G
            if normalization == "shift":
                adv = first - mean
            else:
                std = sqrt(sum((r - mean) ** 2 for r in group) / (G - ddof))
                adv = 0.0 if std == 0 else (first - mean) / (std + eps)
            out += sign * w * adv
    return out


def _first_root(f, lo, hi=1.0 - 1e-13, n=4000):
    """The first sign change of ``f`` (positive at ``lo``) on a grid of ``n`` cells, refined by bisection."""
    xs = [lo + (hi - lo) * i / n for i in range(n + 1)]
    prev = xs[0]
    for x in xs[1:]:
        if f(x) <= 0:
            a, b = prev, x
            for _ in range(200):
                m = (a + b) / 2
                a, b = (m, b) if f(m) > 0 else (a, m)
            return (a + b) / 2
        prev = x
    return 1.0


def _reverse_root(p, beta, G, rewards, **kw):
    """The reverse penalty's stationary point reached from ``p``: the first root above ``p`` of
    ``x (1 - x) (P_G(a) - P_G(b)) - beta (x - p)`` (Eq. 11 for two classes); at ``p = 0`` the first ``x`` where
    ``(1 - x) (P_G(a) - P_G(b)) - beta`` (that function over ``x``) is not positive, 0 if none above 0."""
    if p == 0:
        if (1 - 1e-12) * _pg_binary(1e-12, G, rewards, **kw) - beta <= 0:
            return 0.0
        return _first_root(lambda x: (1 - x) * _pg_binary(x, G, rewards, **kw) - beta, 1e-12)
    return _first_root(lambda x: x * (1 - x) * _pg_binary(x, G, rewards, **kw) - beta * (x - p), p)


def _rows(rewards_of):
    import pandas as pd

    return pd.DataFrame([(pid, r) for pid, rs in rewards_of.items() for r in rs], columns=["prompt_id", "reward"])


def test_the_declared_levels_reach_the_shift_objective():
    """The audit's case: levels -1/1, shift, G = 3, beta = 0.5, p = 1/3. Shift-only P_G is ((G-1)/G)(r - E r), so
    Eq. 11 reads x (1 - (8/3)(1 - x)) = 1/3, 8x^2 - 5x - 1 = 0: x = (5 + sqrt(57))/16 = 0.7844 (0.6404 with the
    gap 1 of rewards 1/0)."""
    from grpo_theory import Objective
    from grpo_theory.predict import predict, read_samples

    obj = Objective(beta=0.5, group_size=3, normalization="shift")
    pr = predict(read_samples(_rows({"a": [1, -1, -1], "b": [-1, -1, -1]}), levels=[-1, 1]), obj, progress=False)
    x = pr.table.set_index("prompt_id").pred
    assert x["a"] == pytest.approx((5 + 57 ** 0.5) / 16, rel=1e-9)
    assert x["a"] == pytest.approx(_reverse_root(1 / 3, 0.5, 3, (1.0, -1.0), normalization="shift"), rel=1e-9)
    assert x["b"] == pytest.approx(5 / 8, rel=1e-9)          # p -> 0+: 1 = (8/3)(1 - x)


def test_the_declared_levels_reach_an_epsilon_in_the_std():
    """With ``std_eps`` the advantage is not scale-free: levels 0/2 are not levels 0/1."""
    from grpo_theory import Objective
    from grpo_theory.predict import predict, read_samples

    obj = Objective(beta=0.5, group_size=4, std_ddof=1, std_eps=0.5)
    samples = read_samples(_rows({"a": [2, 0, 0, 0]}), levels=[0, 2])
    got = float(predict(samples, obj, progress=False).table.pred[0])
    assert got == pytest.approx(_reverse_root(0.25, 0.5, 4, (2.0, 0.0), ddof=1, eps=0.5), rel=1e-8)
    assert abs(got - _reverse_root(0.25, 0.5, 4, (1.0, 0.0), ddof=1, eps=0.5)) > 1e-3


def test_a_fitted_clock_reads_the_mean_reward_in_the_levels_units():
    """Under scale normalisation (no epsilon) levels -1/1 move P(correct) as 0/1 do, so a mean reward m' = 2m - 1
    with levels -1/1 is the clock of m with 0/1."""
    from grpo_theory import Objective
    from grpo_theory.predict import predict, read_samples

    obj, rows = Objective(beta=0.5, group_size=3), {"a": [1, 0, 0], "b": [1, 1, 0]}
    signed = read_samples(_rows({k: [2 * r - 1 for r in v] for k, v in rows.items()}), levels=[-1, 1])
    ones = predict(read_samples(_rows(rows)), obj, fit=(10, 0.6), progress=False).summary["clock"]
    assert predict(signed, obj, fit=(10, 0.2), progress=False).summary["clock"] == pytest.approx(ones, rel=1e-9)
    with pytest.raises(InvalidInputError, match=r"mean_reward must be a finite number in \[-1.0, 1.0\], got 1.5"):
        predict(signed, obj, fit=(10, 1.5), progress=False)


def test_finite_time_predictions_refuse_levels_other_than_0_and_1():
    from grpo_theory import Objective
    from grpo_theory.predict import predict_finite, read_samples

    samples = read_samples(_rows({"a": [1, -1, -1], "b": [1, 1, -1]}), levels=[-1, 1])
    with pytest.raises(InvalidInputError, match=r"levels \[-1.0, 1.0\]"):
        predict_finite(samples, Objective(beta=0.5, group_size=3), mean_reward=0.2)


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.999, 1.0, 1.5, 4.0])
def test_a_never_solved_prompt_is_the_limit_of_eq_14(beta):
    """G = 2, reverse penalty: Eq. 14 at p -> 0+ is max(0, 1 - beta/gamma); at beta = gamma, x = sqrt(p) -> 0 (the
    value at p = 1e-12 was 1e-6)."""
    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts

    pr = predict(samples_from_counts([8], [0], ["a"]), Objective(beta=beta, group_size=2), progress=False)
    assert pr.table.pred[0] == pytest.approx(max(0.0, 1.0 - beta), rel=1e-12, abs=1e-15)
    assert pr.table.pred_lo[0] == pr.table.pred[0]


@pytest.mark.parametrize("beta", [0.25, 1.0, 3.0])
def test_a_never_solved_prompt_at_large_g_is_the_limit_of_eq_15(beta):
    from grpo_theory import Objective
    from grpo_theory.predict import Response

    assert Response(Objective(beta=beta, group_size=float("inf"))).solve(0.0) == pytest.approx(1 / (1 + beta ** 2),
                                                                                                rel=1e-12)


@pytest.mark.parametrize("beta, G, rewards, kw", [(0.5, 8, (1.0, 0.0), {}), (2.0, 8, (1.0, 0.0), {}),
                                                  (3.0, 8, (1.0, 0.0), {}),
                                                  (0.3, 5, (1.0, -1.0), dict(normalization="shift")),
                                                  (0.4, 6, (2.0, 0.0), dict(ddof=1, eps=0.3))])
def test_x_at_zero_is_the_first_root_of_the_limit_condition(beta, G, rewards, kw):
    from grpo_theory import Objective
    from grpo_theory.predict import zero_limit

    obj = Objective(beta=beta, group_size=G, normalization=kw.get("normalization", "scale"),
                    std_ddof=kw.get("ddof", 0), std_eps=kw.get("eps", 0.0))
    assert zero_limit(obj, rewards) == pytest.approx(_reverse_root(0.0, beta, G, rewards, **kw), rel=1e-9, abs=1e-12)


def test_the_direct_penalty_is_continuous_at_0():
    """G = 2, direct penalty: x = e^{gamma/(2 beta)} p / (e^{gamma/(2 beta)} p + e^{-gamma/(2 beta)} (1 - p)) -> 0."""
    from grpo_theory import Objective
    from grpo_theory.predict import zero_limit

    assert zero_limit(Objective(beta=0.5, group_size=2, penalty="direct")) == 0.0


# ---------------------------------------------------------------- samples_from_counts: any 1-d sequence of ids
def _id_containers():
    import numpy as np
    import pandas as pd

    return [["a", "b"], ("a", "b"), np.array(["a", "b"]), pd.Index(["a", "b"]), pd.Series(["a", "b"]),
            pd.Series(["a", "b"], dtype="category"), pd.array(["a", "b"])]


@pytest.mark.parametrize("ids", _id_containers(), ids=lambda v: type(v).__name__)
def test_prompt_ids_may_be_any_1d_sequence(ids):
    from grpo_theory.predict import samples_from_counts

    assert samples_from_counts([3, 4], [1, 2], prompt_ids=ids).prompt_ids == ("a", "b")


_BAD_IDS = {
    "a duplicate in an Index": (lambda np, pd: pd.Index(["a", "a"]), "'a' appears twice"),
    "a 2-d array": (lambda np, pd: np.array([["a", "b"]]), "shape (1, 2)"),
    "a DataFrame": (lambda np, pd: pd.DataFrame({"id": ["a", "b"]}), "shape (2, 1)"),
    "a text": (lambda np, pd: "ab", "the text 'ab'"),
    "a set": (lambda np, pd: {"a", "b"}, "a set"),
    "an iterator": (lambda np, pd: iter(["a", "b"]), "list_iterator"),
    "a float id": (lambda np, pd: pd.Series(["a", 1.5]), "prompt_ids[1] = 1.5"),
    "one id too many": (lambda np, pd: pd.Index(["a", "b", "c"]), "must have 2 entries, got 3"),
}


@pytest.mark.parametrize("case", _BAD_IDS)
def test_prompt_ids_that_are_not_one_per_prompt_are_refused_naming_them(case):
    import numpy as np
    import pandas as pd

    from grpo_theory.predict import samples_from_counts

    make, named = _BAD_IDS[case]
    with pytest.raises(InvalidInputError, match="prompt_ids") as err:
        samples_from_counts([3, 4], [1, 2], prompt_ids=make(np, pd))
    assert named in str(err.value)


# ---------------------------------------------------------------- samples from a pipe: the content names the format
CSV_ROWS = "prompt_id,reward\na,1\na,0\na,0\nb,0\nb,1\n"
JSON_LINES = '\n{"prompt_id": "a", "n": 3, "correct": 1}\n{"prompt_id": "b", "n": 2, "correct": 1}\n'


@pytest.mark.parametrize("text", [CSV_ROWS, JSON_LINES], ids=["csv", "jsonl"])
def test_samples_from_a_pipe_are_read_once_by_their_content(text):
    """``predict /dev/stdin`` and ``predict <(cmd)`` name a pipe with no suffix (``/dev/fd/63``)."""
    import os
    import threading

    from grpo_theory.predict import read_samples

    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, text.encode()), os.close(w)))
    writer.start()
    try:
        table = read_samples(f"/dev/fd/{r}")
    finally:
        writer.join()
        os.close(r)
    assert table.prompt_ids == ("a", "b") and table.counts.tolist() == [[2, 1], [1, 1]]


@pytest.mark.parametrize("name, text, refused", [("samples", JSON_LINES, None), ("samples", CSV_ROWS, None),
                                                 ("samples.txt", CSV_ROWS, "got '.txt'")])
def test_a_file_without_a_suffix_is_read_by_its_content_and_a_foreign_suffix_is_refused(tmp_path, name, text,
                                                                                         refused):
    from grpo_theory.predict import read_samples

    (tmp_path / name).write_text(text)
    if refused:
        with pytest.raises(InvalidInputError, match=refused):
            read_samples(tmp_path / name)
    else:
        assert read_samples(tmp_path / name).counts.tolist() == [[2, 1], [1, 1]]


# ---------------------------------------------------------------- an unusable MPLBACKEND: the variable and the remedy
def _matplotlibs_refusal():
    import matplotlib

    try:
        matplotlib.rcParams["backend"] = "nonexistent"     # what `import matplotlib` does with MPLBACKEND's value
    except ValueError as exc:
        return exc
    raise AssertionError("matplotlib took the backend 'nonexistent'")


def test_an_unusable_mplbackend_is_named_with_what_to_set(monkeypatch):
    from grpo_theory.cli import _cli_message

    exc = _matplotlibs_refusal()                            # matplotlib imported before MPLBACKEND is set
    monkeypatch.setenv("MPLBACKEND", "nonexistent")
    line = _cli_message(exc)
    assert "MPLBACKEND='nonexistent'" in line and "MPLBACKEND=Agg" in line


def test_matplotlibs_words_without_mplbackend_are_left_as_they_are(monkeypatch):
    from grpo_theory.cli import _cli_message

    exc = _matplotlibs_refusal()
    monkeypatch.delenv("MPLBACKEND", raising=False)
    assert _cli_message(exc) == " ".join(str(exc).split())


@pytest.mark.slow
def test_predict_under_an_unusable_mplbackend_says_what_to_set(tmp_path):
    """The whole command in a process of its own (matplotlib reads MPLBACKEND once, on import)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "r.csv").write_text(CSV_ROWS)
    env = {**os.environ, "MPLBACKEND": "nonexistent", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    res = subprocess.run([sys.executable, "-m", "grpo_theory.cli", "predict", "r.csv", "--beta", "0.5", "--out", "o",
                          "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "MPLBACKEND=Agg" in res.stderr and "Traceback" not in res.stderr


# ---------------------------------------------------------------- figures --only: its help names the numbers
def test_figures_help_lists_every_figure_number_and_no_other(capsys):
    import re

    from grpo_theory.cli import build_parser
    from grpo_theory.figures import FIGURES

    with pytest.raises(SystemExit):
        build_parser().parse_args(["figures", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    listed = re.search(r"figure numbers to build, of ([\d, -]+?) \(default", text).group(1)
    shown = set()
    for part in listed.split(", "):
        first, _, last = part.partition("-")
        shown |= set(range(int(first), int(last or first) + 1))
    assert shown == {s.number for s in FIGURES}


# ---------------------------------------------------------------- a class whose mass vanishes in double
def test_the_kl_of_a_prompt_at_p_ref_1_minus_2_to_the_minus_53_is_finite_and_right():
    """n = 2^53 samples with one wrong: p_ref = 1 - 2^-53. Eq. 14 (G = 2, beta = 0.5) keeps pi(wrong) = 3.7e-17, which
    1 - x rounds to 0: the reverse KL read inf and the direct KL 1.1e-16. Reference: Eq. 14 and the two KLs in 50-digit
    decimal arithmetic."""
    from decimal import Decimal, getcontext

    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts

    getcontext().prec = 50
    q = Decimal(2) ** -53
    p, b = 1 - q, Decimal("0.5")
    x = ((1 - b) + ((1 - b) ** 2 + 4 * b * p).sqrt()) / 2          # beta (x - p) = x (1 - x)
    y = 1 - x
    direct = x * (x / p).ln() + y * (y / q).ln()
    reverse = p * (p / x).ln() + q * (q / y).ln()
    row = predict(samples_from_counts([2 ** 53], [2 ** 53 - 1]), Objective(beta=0.5, group_size=2),
                  progress=False).table.iloc[0]
    assert row.kl_direct == pytest.approx(float(direct), rel=1e-9)
    assert row.kl_reverse == pytest.approx(float(reverse), rel=1e-9)


# ---------------------------------------------------------------- the solvers' numeric helpers' warnings at extreme beta
@pytest.mark.parametrize("module, shown", [("grpo_theory._numerics", False), ("grpo_theory._interval", False),
                                           ("grpo_theory._multinomial", False), ("grpo_theory.solvers.classes", False),
                                           ("grpo_theory.predict.core", True)])
def test_the_command_line_keeps_the_solvers_intermediate_overflows_to_itself(monkeypatch, module, shown):
    """An intermediate overflow inside the solvers or the numeric helpers they compute with (``_numerics``,
    ``_interval`` at beta = 1e-308 with three outputs) is not printed; any other module's warning is."""
    import warnings

    from grpo_theory import cli

    def warns(args):
        warnings.warn_explicit("overflow encountered in subtract", RuntimeWarning, "x.py", 1, module=module,
                               registry={})
        return 0

    monkeypatch.setattr(cli, "cmd_solve", warns)
    with warnings.catch_warnings(record=True) as seen:          # what the command would print
        warnings.simplefilter("default")
        assert cli.main(["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"]) == 0
    assert bool(seen) == shown


@pytest.mark.slow
def test_solve_at_a_subnormal_beta_prints_no_raw_warning():
    import warnings

    from grpo_theory.cli import main

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        assert main(["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "1e-320",
                     "--group-size", "2"]) == 0
    assert not [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]
