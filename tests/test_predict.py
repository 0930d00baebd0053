"""grpo_theory.predict: a run's per-prompt outcomes from base samples, checked against independent paths.

Independent references: brute-force enumeration of k draws (pass@k) and of k-subsets (the unbiased
estimator), scipy.stats (intervals), the note's closed forms (Eq. 14, Eq. 15, G = 2 direct), multi-output
questions solved whole (the pooling into classes), dynamics.flow at exact times (the clock).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from pandas import read_csv
from scipy import stats

from grpo_theory import InvalidInputError, NoStationaryPolicy, Objective, Question, closed_form, dynamics, stationary_policy
from grpo_theory.predict import (
    PredictWarning,
    Response,
    binomial_interval,
    pass_at_k,
    predict,
    read_samples,
    samples_from_counts,
    unbiased_pass_at_k,
)

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "docs" / "examples" / "samples_small.csv"


# ----------------------------------------------------------------------------- pass@k

def test_pass_at_k_matches_enumeration_of_k_draws_from_the_whole_stationary_policy():
    # five outputs, two of them correct: solved whole, without the pooling into classes
    pi_ref = np.array([0.10, 0.05, 0.30, 0.35, 0.20])
    q = Question(pi_ref, rewards=[1, 1, 0, 0, 0])
    obj = Objective(beta=0.3, group_size=4)
    pi = stationary_policy(q, obj).pi
    pr = predict(samples_from_counts([20], [3]), obj)                 # p_ref = 0.15
    for k in (1, 2, 3, 4):
        brute = sum(np.prod(pi[list(t)]) for t in itertools.product(range(5), repeat=k) if min(t) <= 1)
        assert pr.pass_at(k).after.iloc[0] == pytest.approx(brute, abs=1e-9)
    rng = np.random.default_rng(0)                                  # and a simulation of k = 3 draws
    draws = rng.choice(5, size=(200_000, 3), p=pi)
    sim = (draws <= 1).any(axis=1).mean()
    assert abs(sim - pr.pass_at(3).after.iloc[0]) < 4 * math.sqrt(sim * (1 - sim) / 200_000)


def test_unbiased_pass_at_k_matches_enumeration_of_subsets():
    for n, c, k in [(7, 2, 3), (6, 0, 2), (5, 5, 4), (8, 3, 1), (5, 4, 2)]:
        samples = [1] * c + [0] * (n - c)
        subsets = list(itertools.combinations(range(n), k))
        brute = np.mean([any(samples[i] for i in s) for s in subsets])
        assert float(unbiased_pass_at_k(n, c, k)) == pytest.approx(brute, abs=1e-12)
    # k > n: no estimate from n samples (no plug-in, which sits below the estimate's 1 at k = n)
    assert np.isnan(unbiased_pass_at_k(4, 1, 9))
    assert np.isnan(unbiased_pass_at_k([4, 9], [1, 1], 9)).tolist() == [True, False]


def test_pass_at_k_before_curve_is_non_decreasing_and_ends_at_the_smallest_n(tmp_path):
    n, c = [6, 10, 16, 10], [1, 3, 0, 10]
    pr = predict(samples_from_counts(n, c), Objective(beta=0.5, group_size=2))
    cur = pr.curves()                                                 # default k: 1, 2, 4, ..., 256 and min n = 6
    est = cur[cur.before.notna()]
    assert est.k.tolist() == [1, 2, 4, 6]                             # ends at k = min n, nothing past it
    assert np.all(np.diff(est.before) >= 0)
    assert cur.after.notna().all() and cur.k.max() == 256             # "after" (predicted) goes on

    def brute(nn, cc, k):                                             # mean over k-subsets of the n samples
        samples = [1] * cc + [0] * (nn - cc)
        return np.mean([any(samples[i] for i in s) for s in itertools.combinations(range(nn), k)])

    for k in (1, 4, 6):
        ref = np.mean([brute(nn, cc, k) for nn, cc in zip(n, c)])
        assert float(cur.before[cur.k == k].iloc[0]) == pytest.approx(ref, abs=1e-12)
    per = pr.pass_at(8)                                               # per prompt: estimable where k <= n
    assert per.before.isna().tolist() == [True, False, False, False] == (~per.before_unbiased).tolist()
    assert per.before.iloc[1] == pytest.approx(brute(10, 3, 8), abs=1e-12)
    pr8 = predict(samples_from_counts(n, c), Objective(beta=0.5, group_size=2), k=[4, 8])
    paths = pr8.write(tmp_path, plots=False)
    table = read_csv(paths["csv"])
    assert table["pass@8_before"].isna().tolist() == [True, False, False, False]   # blank in the CSV
    s = json.loads(Path(paths["summary"]).read_text())
    assert s["pass@8_before"] is None and s["pass@4_before"] == pytest.approx(np.mean(
        [brute(nn, cc, 4) for nn, cc in zip(n, c)]), abs=1e-12)
    assert s["pass_at_k_before_max_k"] == 6 and "k > n" in s["columns"]["pass_at_k_before"]
    curve = s["pass_at_k_curve"]
    assert [r["k"] for r in curve if r["before"] is not None] == [1, 2, 4, 6]
    assert all(r["after"] is not None for r in curve)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "a", None, True])
def test_unknown_k_is_an_error_naming_it(bad):
    with pytest.raises(InvalidInputError, match="k must be an integer"):
        pass_at_k(0.5, bad)
    pr = predict(samples_from_counts([10], [4]), Objective(beta=0.5))
    with pytest.raises(InvalidInputError, match="k must be an integer"):
        pr.pass_at(bad)


# ----------------------------------------------------------------------------- intervals

def test_jeffreys_and_wilson_intervals_match_scipy():
    n = np.array([10, 40, 40, 100, 7])
    c = np.array([3, 1, 39, 50, 6])
    lo, hi = binomial_interval(c, n, level=0.9)
    assert np.allclose(lo, stats.beta.ppf(0.05, c + 0.5, n - c + 0.5), atol=1e-12)
    assert np.allclose(hi, stats.beta.ppf(0.95, c + 0.5, n - c + 0.5), atol=1e-12)
    lo, hi = binomial_interval(c, n, level=0.95, method="wilson")
    for i in range(n.size):
        ci = stats.binomtest(int(c[i]), int(n[i])).proportion_ci(confidence_level=0.95, method="wilson")
        assert (lo[i], hi[i]) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_never_solved_gets_the_one_sided_bound_about_three_over_n():
    for method in ("jeffreys", "wilson"):
        lo, hi = binomial_interval([0, 0], [100, 1000], method=method)
        assert lo.tolist() == [0.0, 0.0]
        # the exact one-sided Clopper-Pearson bound for 0 of n
        assert np.allclose(hi, stats.beta.ppf(0.95, 1, [100, 1000]), atol=1e-12)
        assert hi[1] == pytest.approx(3 / 1000, rel=0.01)
        lo, hi = binomial_interval([50], [50], method=method)
        assert hi[0] == 1.0 and lo[0] == pytest.approx(stats.beta.ppf(0.05, 50, 1), abs=1e-12)


# ----------------------------------------------------------------------------- predictions against closed forms

@pytest.mark.parametrize("obj,form", [
    (Objective(beta=0.5, group_size=2), lambda p: closed_form.binary_pairwise(p, 0.5)),
    (Objective(beta=2.0, group_size=2), lambda p: closed_form.binary_pairwise(p, 2.0)),
    (Objective(beta=0.7, group_size=math.inf), lambda p: closed_form.binary_large_group(p, 0.7)),
    (Objective(beta=0.5, group_size=2, penalty="direct"), lambda p: closed_form.binary_pairwise_direct(p, 0.5)),
])
def test_predictions_and_their_intervals_match_the_closed_forms(obj, form):
    n = np.array([30, 30, 30, 64, 64, 12])
    c = np.array([1, 9, 27, 32, 0, 12])
    pr = predict(samples_from_counts(n, c), obj)
    t = pr.table
    lo, hi = stats.beta.ppf(0.025, c + 0.5, n - c + 0.5), stats.beta.ppf(0.975, c + 0.5, n - c + 0.5)
    solved = (c > 0) & (c < n)
    assert np.allclose(t.pred[solved], form(c[solved] / n[solved]), atol=1e-8)
    assert np.allclose(t.pred_lo[solved], form(lo[solved]), atol=1e-8)
    assert np.allclose(t.pred_hi[solved], form(hi[solved]), atol=1e-8)
    never = c == 0
    assert np.allclose(t.pred[never], form(1e-12), atol=1e-8)                    # x(0+)
    assert np.allclose(t.pred_hi[never], form(1 - 0.05 ** (1 / n[never])), atol=1e-8)
    assert t.pred[c == n].tolist() == [1.0]
    assert t.never_solved.tolist() == never.tolist()
    assert pr.summary["monotone_in_p_ref"] is True


def test_never_solved_under_the_reverse_penalty_is_not_predicted_zero():
    # Eq. 14 is discontinuous at p = 0: a prompt the base model solves rarely but not never ends at ~1 - beta
    pr = predict(samples_from_counts([200], [0]), Objective(beta=0.3, group_size=2))
    assert pr.table.pred.iloc[0] == pytest.approx(0.7, abs=1e-9)
    assert pr.table.pred_lo.iloc[0] == pytest.approx(0.7, abs=1e-9)
    assert pr.table.pred_hi.iloc[0] == pytest.approx(float(closed_form.binary_pairwise(1 - 0.05 ** (1 / 200), 0.3)))


def test_graded_rewards_pool_outputs_of_a_level_like_the_whole_question():
    levels = [0.0, 0.5, 1.0]
    pr = predict(_level_counts([[3, 4, 1], [0, 2, 6]], levels), Objective(beta=0.4, group_size=4))
    for row, counts in zip(range(2), ([3, 4, 1], [0, 2, 6])):
        freq = np.array(counts) / sum(counts)
        # the same question with every level split over two outputs of different pi_ref, solved whole
        pi_ref = np.repeat(freq, 2) * np.tile([0.3, 0.7], 3)
        q = Question(pi_ref, rewards=np.repeat(levels, 2))
        pi = stationary_policy(q, Objective(beta=0.4, group_size=4)).pi
        per_level = pi.reshape(3, 2).sum(axis=1)
        got = [pr.table[f"pred_r={lv:g}"].iloc[row] for lv in levels]
        assert np.allclose(got, per_level, atol=1e-7)
    assert pr.table.mean_reward_after.iloc[0] > pr.table.mean_reward_before.iloc[0]


def _level_counts(rows, levels):
    from grpo_theory.predict import SampleTable

    return SampleTable(tuple(f"g{i}" for i in range(len(rows))), np.array(levels), np.array(rows), "level_counts")


def test_the_checked_grid_is_exact_to_its_tolerance():
    rng = np.random.default_rng(1)
    n = rng.integers(5, 400, size=600)
    c = rng.binomial(n, rng.uniform(0.02, 0.98, size=n.size))
    c = np.clip(c, 1, n - 1)
    obj = Objective(beta=0.5, group_size=2)
    pr = predict(samples_from_counts(n, c), obj, max_exact=20, tol=1e-7)
    assert pr.summary["x_grid"] is True
    err = np.abs(pr.table.pred - closed_form.binary_pairwise(c / n, 0.5))
    assert err.max() < 1e-7


def test_range_over_takes_interior_extremes_when_not_monotone():
    resp = Response(Objective(beta=0.5))
    resp.exact.update({0.1: 0.5, 0.2: 0.3, 0.3: 0.6})                 # a made-up non-monotone curve
    assert not resp.monotone()
    a, b = resp.range_over(np.array([0.1]), np.array([0.3]), np.array([0.5]), np.array([0.6]))
    assert (a[0], b[0]) == (0.3, 0.6)


def test_kl_is_the_kl_over_outputs_of_the_whole_policy():
    pi_ref = np.array([0.1, 0.2, 0.4, 0.3])
    q = Question(pi_ref, rewards=[1, 1, 0, 0])
    obj = Objective(beta=0.5, group_size=4)
    pi = stationary_policy(q, obj).pi
    pr = predict(samples_from_counts([10], [3]), obj)
    assert pr.table.kl_direct.iloc[0] == pytest.approx(float(np.sum(pi * np.log(pi / pi_ref))), abs=1e-9)
    assert pr.table.kl_reverse.iloc[0] == pytest.approx(float(np.sum(pi_ref * np.log(pi_ref / pi))), abs=1e-9)


# ----------------------------------------------------------------------------- flags

def test_bistable_prompt_reports_both_stable_points():
    # the documented example: direct penalty, G = 64, beta = 1, p_ref = 0.14 has stable points 0.544 and 0.9965
    pr = predict(samples_from_counts([50, 50], [7, 40]), Objective(beta=1.0, group_size=64, penalty="direct"))
    row = pr.table.iloc[0]
    assert row.bistable
    assert [round(float(v), 4) for v in row.stable_points.split(";")] == [0.544, 0.9965]
    assert row.pred == pytest.approx(0.544, abs=1e-3)
    assert pr.summary["bistable"] >= 1


def test_below_the_clamps_critical_beta_is_flagged_as_a_collapse():
    verl = Objective(beta=0.001, group_size=5, std_ddof=1, std_eps=1e-6, kl_estimator="k3", kl_log_ratio_clamp=20,
                     kl_value_clamp=10)
    pr = predict(samples_from_counts([10], [5]), verl)
    row = pr.table.iloc[0]
    assert row.beta_critical == pytest.approx(0.134, abs=1e-3)          # the value in clamp_critical_beta's doc
    assert row.below_critical_beta and row.collapse == "correct"
    above = predict(samples_from_counts([10], [5]), dataclasses.replace(verl, beta=0.3))
    assert not above.table.below_critical_beta.iloc[0] and above.table.collapse.iloc[0] == ""


# ----------------------------------------------------------------------------- finite time

def _mean_at(obj, p_values, t):
    out = []
    for p in p_values:
        q = Question([p, 1 - p], rewards=[1, 0])
        out.append(dynamics.flow(q, obj, q.pi_ref, [0.0, t], with_points=False).pi[-1, 0])
    return float(np.mean(out))


def test_the_fitted_clock_recovers_a_known_clock_from_a_synthetic_run(tmp_path):
    obj = Objective(beta=0.5, group_size=2)
    n, c = np.array([20, 20, 20, 20, 20]), np.array([2, 5, 10, 15, 18])
    true_clock, step = 0.04, 50.0
    measured = _mean_at(obj, c / n, true_clock * step)                 # exact flow at t = clock * step
    pr = predict(samples_from_counts(n, c), obj, fit=(step, measured), steps=[20, 50, 200])
    assert pr.summary["clock"] == pytest.approx(true_clock, rel=1e-5)
    # and the per-prompt values at another step agree with the exact flow there
    for s in (20.0, 200.0):
        exact = [_mean_at(obj, [p], true_clock * s) for p in c / n]
        assert np.allclose(pr.table[f"at_step_{s:g}"], exact, atol=1e-5)
    assert pr.table.slow.tolist() == list(np.abs(pr.table["at_step_200"] - pr.table.pred) > 0.01)
    assert np.allclose(pr.at_step(200), pr.table["at_step_200"])
    paths = pr.write(tmp_path)
    assert set(paths) == {"csv", "summary", "after_vs_before", "pass_at_k", "clock"}
    assert json.loads(Path(paths["summary"]).read_text())["clock"] == pytest.approx(true_clock, rel=1e-5)


def test_a_reward_never_reached_or_a_missing_clock_is_an_error():
    with pytest.raises(InvalidInputError, match="never reached"):
        predict(samples_from_counts([20, 20], [5, 10]), Objective(beta=0.5), fit=(100, 0.99))
    with pytest.raises(InvalidInputError, match="steps= needs a clock"):
        predict(samples_from_counts([20], [5]), Objective(beta=0.5), steps=[10])
    with pytest.raises(InvalidInputError, match="clock must be a positive number"):
        predict(samples_from_counts([20], [5]), Objective(beta=0.5), clock=-1.0)


# ----------------------------------------------------------------------------- reading samples

def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_three_layouts_and_two_formats_read_the_same_counts(tmp_path):
    rows = _write(tmp_path, "r.csv", "prompt_id,reward\na,1\na,0\na,1\nb,0\nb,0\n")
    counts = _write(tmp_path, "c.csv", "prompt_id,n,correct\na,3,2\nb,2,0\n")
    levels = _write(tmp_path, "l.jsonl", '{"prompt_id": "a", "counts": {"0": 1, "1": 2}}\n'
                                         '{"prompt_id": "b", "count_0": 2, "count_1": 0}\n')
    jrows = _write(tmp_path, "r.jsonl", "\n".join(json.dumps({"prompt_id": p, "reward": r})
                                                  for p, r in [("a", 1), ("a", 0), ("a", 1), ("b", 0), ("b", 0)]))
    for path in (rows, counts, levels, jrows):
        t = read_samples(path)
        assert t.prompt_ids == ("a", "b") and t.counts.tolist() == [[1, 2], [2, 0]], path.name


def test_bad_samples_are_errors_naming_the_row(tmp_path):
    cases = [
        ("prompt_id,score\na,1\n", "no reward column"),
        ("prompt_id,reward\na,1\na,0.5\n", "line 3: reward 0.5 is not one of the declared levels"),
        ("prompt_id,n,correct\na,3,1\nb,0,0\n", "line 3: prompt 'b' has n = 0"),
        ("prompt_id,n,correct\na,3,4\n", "correct = 4 > n = 3"),
        ("prompt_id,reward\na,yes\n", "line 2: reward must be a number"),
        ("reward\n1\n", "no 'prompt_id' column"),
        ("prompt_id,n,correct\na,3,1\na,3,2\n", "appears again"),
    ]
    for text, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            read_samples(_write(tmp_path, "bad.csv", text), levels=[0, 1])


def test_excluded_rows_are_counted_and_reported(tmp_path):
    path = _write(tmp_path, "s.csv", "prompt_id,reward\na,1\na,\nb,0\nb,1\nb,\n")
    with pytest.warns(PredictWarning, match="2 row"):
        pr = predict(path, Objective(beta=0.5))
    assert pr.summary["excluded_rows"] == 2
    assert [e["line"] for e in pr.summary["excluded"]] == [3, 6]
    assert pr.table.n.tolist() == [1, 2]


def test_a_config_that_cannot_be_mapped_is_an_error_naming_why():
    # TRL's beta = 0 maps (unregularised); with no finite-time mode there is nothing to predict, and the error
    # names what to give
    with pytest.raises(NoStationaryPolicy, match=r"no measured=, fit= or clock=: the objective .*beta=0.* is unregularised"):
        predict(samples_from_counts([10], [3]), framework="trl", config={"beta": 0.0}, trl_version="1.16.0")
    with pytest.raises(InvalidInputError, match="framework must be one of"):
        predict(samples_from_counts([10], [3]), framework="deepspeed", config={})


def test_a_trl_config_gives_the_objective_it_maps_to():
    cfg = {"num_generations": 2, "beta": 0.5, "use_bias_correction_kl": False, "max_completion_length": 1,
           "scale_rewards": "none"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = predict(samples_from_counts([20], [5]), framework="trl", config=cfg, trl_version="1.16.0")
    assert pr.objective.normalization == "shift" and pr.objective.regime == "reverse"
    # shift-only, reverse: beta (x - p) = ((G-1)/G) x (1 - x), i.e. Eq. 14 with gamma = 1/2
    assert pr.table.pred.iloc[0] == pytest.approx(float(closed_form.binary_pairwise(0.25, 0.5, gamma=0.5)), abs=1e-8)


# ----------------------------------------------------------------------------- the command

def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "grpo_theory.cli", "predict", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_cli_writes_the_csv_summary_and_figures(tmp_path):
    done = _cli(str(SMALL), "--beta", "0.5", "--group-size", "2", "--k", "1", "4",
                "--out", str(tmp_path / "o"), "--no-progress")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["prompts"] == 24 and summary["samples"] == 768 and summary["excluded_rows"] == 0
    table = read_csv(tmp_path / "o" / "predictions.csv")
    assert np.allclose(table.pred[table.correct.between(1, table.n - 1)],
                       closed_form.binary_pairwise(table.p_ref[table.correct.between(1, table.n - 1)], 0.5), atol=1e-8)
    assert not (tmp_path / "o" / "clock.png").exists()                        # no clock given
    assert {p.name for p in (tmp_path / "o").iterdir()} >= {"predictions.csv", "summary.json", "after_vs_before.png",
                                                          "pass_at_k.png"}


@pytest.mark.parametrize("samples,args,message", [
    ("bad", ["--beta", "0.5"], "n = 0"),
    ("good", ["--framework", "trl", "MISSING.json"], "no such file"),
    ("good", ["--beta", "0.5", "--k", "0"], "k must be an integer"),
    ("good", [], "give either --framework"),
    ("good", ["--framework", "deepspeed", "x.json"], "expected trl, verl or openrlhf"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys, samples, args, message):
    from grpo_theory.cli import main

    text = {"bad": "prompt_id,n,correct\na,3,1\nb,0,0\n", "good": "prompt_id,n,correct\na,3,1\n"}[samples]
    path = _write(tmp_path, "s.csv", text)
    argv = [str(path), *args, "--out", str(tmp_path / "o")]
    assert main(["predict", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grpo-theory: error:") and message in lines[0], lines
    if samples == "bad":                                              # and the same through a real process
        done = _cli(*argv)
        assert done.returncode == 2 and done.stderr.strip().splitlines() == lines


def test_reward_kl_tradeoff_matches_eq14_and_the_kl_by_hand(tmp_path):
    from grpo_theory.predict import reward_kl_tradeoff

    n, c = np.array([20, 20, 40]), np.array([4, 12, 30])
    p = c / n
    t = reward_kl_tradeoff(samples_from_counts(n, c), Objective(beta=0.5, group_size=2), [0.25, 1.0, 4.0])
    for _, row in t.iterrows():
        x = closed_form.binary_pairwise(p, row.beta)
        kl = x * np.log(x / p) + (1 - x) * np.log((1 - x) / (1 - p))
        assert row.mean_pred == pytest.approx(x.mean(), abs=1e-8)
        assert row.mean_kl_direct == pytest.approx(kl.mean(), abs=1e-8)
    pr = predict(samples_from_counts(n, c), Objective(beta=1.0, group_size=2))
    paths = pr.write(tmp_path, tradeoff=t)
    assert {"tradeoff_csv", "tradeoff"} <= set(paths)


@pytest.mark.parametrize("obj", [
    Objective(beta=0.1, group_size=8),
    Objective(beta=0.5, group_size=8, penalty="direct", std_ddof=1, std_eps=1e-4),
    Objective(beta=1.0, group_size=64, penalty="direct"),                       # bistable for small p_ref
    Objective(beta=0.3, group_size=4, normalization="shift"),
], ids=["reverse-G8", "direct-trl", "direct-G64-bistable", "shift"])
def test_the_prediction_is_monotone_in_p_ref_checked_on_a_fine_scan(obj):
    # the interval is carried through by evaluating x at its ends; that needs x(p) monotone, checked here
    p = 1.0 / (1.0 + np.exp(-np.linspace(-9, 6, 61)))
    resp = Response(obj, max_exact=100, progress=False)
    x = resp(p)
    assert np.all(np.diff(x) >= -1e-9)
    assert resp.monotone()
