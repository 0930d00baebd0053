"""The stored published per-problem counts (docs/results/published/): the transcription against the source's totals.

The expected numbers are copied from the source file named in each folder's README (``audit/results.json`` of
``cc1107yss/limit-of-rlvr-qwen7b-math500-reproduction`` at commit 85ce075), never from the library.
"""

import csv
import math
from pathlib import Path

import pytest

DIR = Path(__file__).resolve().parents[1] / "docs" / "results" / "published" / "simplerl_zoo_qwen25_7b_math500"

#: Pooled pass@k of the source (``models.*.pooled_pass_at_k``).
POOLED = {
    "base": {1: 0.613921875, 2: 0.7340831692913385, 4: 0.8143581835395576, 8: 0.8681727477486968,
             16: 0.9043392837691936, 32: 0.9292921989161737, 64: 0.9474446568195055, 128: 0.962},
    "after": {1: 0.779328125, 2: 0.8235853838582677, 4: 0.8567501336707911, 8: 0.8829698676500476,
              16: 0.902217497649716, 32: 0.9150862887604729, 64: 0.9234943668139742, 128: 0.93},
}
#: ``paired[k]``: problems where the RL model's pass@k is above / below / equal to the base's.
PAIRED = {1: (417, 58, 25), 2: (399, 58, 43), 4: (364, 57, 79), 8: (326, 57, 117), 16: (223, 55, 222),
          32: (132, 53, 315), 64: (66, 49, 385), 128: (3, 19, 478)}


def _read(name):
    with open(DIR / name, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["prompt_id"] for r in rows] == [str(i) for i in range(500)]
    return [int(r["n"]) for r in rows], [int(r["correct"]) for r in rows]


def _pass_at_k(n, c, k):
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.fixture(scope="module")
def counts():
    return {"base": _read("base.csv"), "after": _read("after.csv")}


def test_totals_and_solved(counts):
    """correct_generations 39,291 / 49,877; solved_at_128 481 / 465; n = 128 everywhere."""
    for name, total, solved in (("base", 39291, 481), ("after", 49877, 465)):
        n, c = counts[name]
        assert set(n) == {128}
        assert all(0 <= x <= 128 for x in c)
        assert sum(c) == total
        assert sum(x > 0 for x in c) == solved


@pytest.mark.parametrize("k", sorted(PAIRED))
def test_pooled_pass_at_k_and_paired_tallies(counts, k):
    """Pooled pass@k of both models to 1e-12, and the paired per-problem tally at every k of the source."""
    pk = {name: [_pass_at_k(ni, ci, k) for ni, ci in zip(*counts[name])] for name in counts}
    for name in pk:
        assert sum(pk[name]) / 500 == pytest.approx(POOLED[name][k], abs=1e-12)
    # the source compares double-precision pass@k: values within 1e-15 (e.g. 1 - 1e-17 and 1) are ties there;
    # exact integer comparison splits a few of those ties for k >= 16
    above = sum(a > b + 1e-15 for a, b in zip(pk["after"], pk["base"]))
    below = sum(a < b - 1e-15 for a, b in zip(pk["after"], pk["base"]))
    assert (above, below, 500 - above - below) == PAIRED[k]


def test_pass128_categories_and_readme(counts):
    """both / base only / RL only / neither = 462 / 19 / 3 / 16, as the README states."""
    b, a = counts["base"][1], counts["after"][1]
    cats = (sum(x > 0 and y > 0 for x, y in zip(b, a)), sum(x > 0 and y == 0 for x, y in zip(b, a)),
            sum(x == 0 and y > 0 for x, y in zip(b, a)), sum(x == 0 and y == 0 for x, y in zip(b, a)))
    assert cats == (462, 19, 3, 16)
    text = (DIR / "README.md").read_text()
    assert "462 / 19 / 3 / 16" in text and "39,291" in text and "49,877" in text


# ---- the predictor's scores on these counts (experiments/published_counts.py) and what docs/results.md says ----

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results.md"


def _csv(name):
    with open(DIR / name, newline="") as f:
        return list(csv.DictReader(f))


def _jeffreys_start(c, n):
    """The flow's start: c/n, Jeffreys' posterior mean (c + 1/2)/(n + 1) at c = 0 or n (docs/predict.md)."""
    return (c + 0.5) / (n + 1) if c in (0, n) else c / n


def test_heldout_no_change_and_shift_recomputed_from_counts(counts):
    """The seed-0 table's no-change and logit-shift rows, recomputed from the counts, the stored held-out flags
    and the fitted shift c alone (no library code)."""
    import json

    diag = json.loads((DIR / "diagnostics.json").read_text())
    c_shift = diag["seed0"]["shift_c"]
    held = [r["heldout"] == "True" for r in _csv("predictions.csv")]
    assert sum(held) == 250
    (n, cb), (m, ca) = counts["base"], counts["after"]
    rows = {r["model"]: r for r in _csv("scores.csv")}
    for model in ("no_change", "shift"):
        err, brier = [], []
        for i in range(500):
            if not held[i]:
                continue
            p0 = _jeffreys_start(cb[i], n[i])
            z = math.log(p0 / (1 - p0)) + (c_shift if model == "shift" else 0.0)
            q, f = 1 / (1 + math.exp(-z)), ca[i] / m[i]
            err.append(abs(q - f))
            brier.append((q - f) ** 2 + f * (1 - f))
        assert sum(err) / 250 == pytest.approx(float(rows[model]["mae"]), abs=2e-6)
        assert sum(brier) / 250 == pytest.approx(float(rows[model]["brier"]), abs=2e-6)


def test_worse_and_better_counts(counts):
    """Problems RL made worse / better, raw and by a one-sided Fisher exact test at 5%, as diagnostics.json says."""
    import json

    from scipy.stats import fisher_exact

    diag = json.loads((DIR / "diagnostics.json").read_text())
    (n, cb), (m, ca) = counts["base"], counts["after"]
    assert (sum(a < b for a, b in zip(ca, cb)), sum(a > b for a, b in zip(ca, cb))) == (diag["worse_raw"],
                                                                                       diag["better_raw"]) == (58, 417)
    worse = sum(fisher_exact([[a, 128 - a], [b, 128 - b]], alternative="less")[1] < 0.05 for a, b in zip(ca, cb))
    better = sum(fisher_exact([[a, 128 - a], [b, 128 - b]], alternative="greater")[1] < 0.05 for a, b in zip(ca, cb))
    assert (worse, better) == (diag["worse_significant"], diag["better_significant"])


def test_profile_measured_columns(counts):
    """profile.csv's counts per bin and measured logit change, recomputed from the counts."""
    (n, cb), (m, ca) = counts["base"], counts["after"]
    edges = [(0, 0), (1e-9, 0.05), (0.05, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 0.95), (0.95, 1 - 1e-9)]
    lg = lambda c, k: math.log((c + 0.5) / (k + 1) / (1 - (c + 0.5) / (k + 1)))  # noqa: E731
    rows = _csv("profile.csv")
    assert len(rows) == 9
    for row, (lo, hi) in zip(rows, edges):
        sel = [i for i in range(500) if (cb[i] == 0 if hi == 0 else lo <= cb[i] / 128 < hi)]
        assert int(row["problems"]) == len(sel)
        d = sum(lg(ca[i], m[i]) - lg(cb[i], n[i]) for i in sel) / len(sel)
        assert float(row["dlogit_measured"]) == pytest.approx(d, abs=1e-4)
    assert int(rows[-1]["problems"]) == sum(c == 128 for c in cb)


def _section():
    text = RESULTS.read_text()
    start = text.index("## Published counts: Qwen2.5-7B -> SimpleRL-Zoo on MATH500")
    return text[start:text.index("\n## ", start + 1)]


def test_docs_table_is_the_stored_scores():
    """The seed-0 table in docs/results.md carries scores.csv's MAE, Brier and paired difference (4 decimals)."""
    sec = _section()
    names = {"no change": "no_change", "logit shift": "shift", "tabular flow": "tabular",
             "coupled, one parameter": "coupled", "stationary point": "stationary"}
    rows = {r["model"]: r for r in _csv("scores.csv")}
    for label, model in names.items():
        line = next(ln for ln in sec.splitlines() if ln.startswith(f"| {label} |"))
        r = rows[model]
        for col in ("mae", "brier"):
            cell = f"{float(r[col]):.4f} [{float(r[col + '_lo']):.4f}, {float(r[col + '_hi']):.4f}]"
            assert cell in line, (label, col, cell)
        if model != "shift":
            assert f"{float(r['mae_minus_shift']):+.4f}" in line


def test_docs_numbers_are_the_diagnostics():
    """The 20-split means, counts and shares the section states are diagnostics.json's."""
    import json

    d = json.loads((DIR / "diagnostics.json").read_text())
    s = d["splits"]
    sec = " ".join(_section().split())
    mm, mb = s["mean_mae"], s["mean_brier"]
    for label, model in (("no change", "no_change"), ("shift", "shift"), ("tabular", "tabular"),
                         ("coupled", "coupled")):
        assert f"{label} {mm[model]:.4f} / {mb[model]:.4f}" in sec
    assert f"in all {s['seeds']}" in sec and f"above 0 in {s['tabular_ci_above_zero']} of 20" in sec
    assert f"lower in {s['coupled_below_shift']} of 20" in sec
    assert f"below 0 in {s['coupled_ci_below_zero']} and above 0 in {s['coupled_ci_above_zero']}" in sec
    assert f"MAE {mm['affine']:.4f} (below the shift in {s['affine_below_shift']} of 20" in sec
    assert f"{d['worse_raw']} of 500" in sec and f"{d['worse_significant']} (5.0%)" in sec
    assert f"against {d['better_raw']} and {d['better_significant']} better" in sec
    assert f"MAE {s['isotonic_in_sample_mae']:.4f} / Brier {s['isotonic_in_sample_brier']:.4f}" in sec
    excess = (s["isotonic_in_sample_mae"] - s["mean_floor"]) / (mm["shift"] - s["mean_floor"])
    assert f"{excess:.0%} of the shift's excess" in sec
    assert f"{s['error_share_of_worse_sig']['shift']:.0%} of the shift's absolute error" in sec
    rho_one = sum(float(r["rho"]) == 1.0 for r in _csv("splits.csv") if r["model"] == "coupled")
    assert f"in {rho_one} of 20 halvings" in sec


def test_docs_predictive_interval_coverage():
    """The stated coverage of the 90% predictive interval is diagnostics.json's; in sample it is recomputed from
    predictions.csv and the counts."""
    import json

    d = json.loads((DIR / "diagnostics.json").read_text())
    rows = _csv("predictions.csv")
    inside = [float(r["pred_finite_lo"]) - 5e-7 <= float(r["measured_correct"]) / float(r["measured_n"])
              <= float(r["pred_finite_hi"]) + 5e-7 for r in rows]
    assert sum(inside) / 500 == pytest.approx(d["all500"]["predictive_90_coverage_in_sample"], abs=0.004)
    sec = " ".join(_section().split())
    s = d["splits"]
    assert (f"contain {s['predictive_90_coverage_heldout_mean']:.0%} of the held-out measurements" in sec
            and f"lowest {s['predictive_90_coverage_heldout_min']:.0%}" in sec
            and f"{d['all500']['predictive_90_coverage_in_sample']:.0%} of all 500 in sample" in sec)


def test_conformal_columns_and_their_stated_coverage():
    """predictions.csv's conformal interval is, for every problem, the counts k of 128 with
    q_lo <= logit((k + 1/2)/129) - logit(pred_finite) <= q_hi (recomputed here by hand from diagnostics.json's
    offsets); docs/results.md states the 20-split coverage and widths diagnostics.json gives."""
    import json

    d = json.loads((DIR / "diagnostics.json").read_text())
    q_lo, q_hi = d["all500"]["conformal"]["q_lo"], d["all500"]["conformal"]["q_hi"]
    for r in _csv("predictions.csv"):
        z = math.log(float(r["pred_finite"]) / (1 - float(r["pred_finite"])))
        inside = [k for k in range(129) if q_lo <= math.log((k + 0.5) / (128.5 - k)) - z <= q_hi]
        # pred_finite is stored to 6 decimals: a count on the edge may move by one
        assert abs(float(r["pred_finite_conformal_lo"]) * 128 - min(inside)) <= 1, r["prompt_id"]
        assert abs(float(r["pred_finite_conformal_hi"]) * 128 - max(inside)) <= 1, r["prompt_id"]
    s = d["splits"]
    sec = " ".join(_section().split())
    assert (f"contains {s['conformal_90_coverage_heldout_mean']:.0%} of the held-out measurements (lowest "
            f"{s['conformal_90_coverage_heldout_min']:.0%}, highest {s['conformal_90_coverage_heldout_max']:.0%}") in sec
    assert f"{s['conformal_90_mean_width']:.2f} on average, against {s['predictive_90_mean_width']:.2f}" in sec
    assert f"offsets are {q_lo:+.2f} and {q_hi:+.2f} in logits" in sec
    predict_md = " ".join((DIR.parents[2] / "predict.md").read_text().split())
    assert (f"covered {s['predictive_90_coverage_heldout_mean']:.0%}, because real prompts stray" in predict_md
            and f"the conformal interval covered {s['conformal_90_coverage_heldout_mean']:.0%} there" in predict_md)


def test_readme_states_the_interval_coverages():
    """README.md's sentence on the calibrated interval carries diagnostics.json's held-out coverages."""
    import json

    s = json.loads((DIR / "diagnostics.json").read_text())["splits"]
    readme = " ".join((DIR.parents[3] / "README.md").read_text().split())
    assert (f"its 90% interval held {s['conformal_90_coverage_heldout_mean']:.0%} of held-out measurements, where the "
            f"model's own interval held {s['predictive_90_coverage_heldout_mean']:.0%}") in readme


# ---- second dataset: Qwen3-0.6B pi_0 -> TRL GRPO on 256 GSM8K training problems ----
# Expected numbers are copied from UnitedSnakes/rlvr_behavior_probe_runpod: the K = 32 rebaseline checkpoint
# (docs/superpowers/checkpoints/2026-09-02-k32-train-p0-rebaseline.md), crossfit_trajectory.csv (commit 15d9581,
# snapshot_pct = 100) and camera_ready/RESULTS.md (seed 42 A40 GRPO, whole-panel R at step 3736); never from the
# library.

DIR2 = DIR.parent / "qwen3_06b_grpo_gsm8k_train256"
BINS = [lambda p: p == 0, lambda p: 0 < p <= 0.25, lambda p: 0.25 < p <= 0.5, lambda p: 0.5 < p <= 0.75,
        lambda p: 0.75 < p < 1, lambda p: p == 1]


@pytest.fixture(scope="module")
def counts2():
    def rows(name):
        with open(DIR2 / name, newline="") as f:
            out = list(csv.DictReader(f))
        assert [r["prompt_id"] for r in out] == [str(i) for i in range(256)]
        return out
    base, after, halves = rows("base.csv"), rows("after.csv"), rows("base_halves.csv")
    assert {r["n"] for r in base} == {"32"} and {r["n"] for r in after} == {"16"}
    a = [int(r["correct_a"]) for r in halves]
    b = [int(r["correct_b"]) for r in halves]
    assert [int(r["correct"]) for r in base] == [x + y for x, y in zip(a, b)]
    assert all(0 <= x <= 16 for x in a + b)
    return dict(a=[x / 16 for x in a], b=[x / 16 for x in b], after=[int(r["correct"]) / 16 for r in after])


def test_second_base_bank_against_the_source(counts2):
    """Mean P (K = 32, each half), median, P = 0 / 1, the half-to-half agreement and the bin counts, as stated."""
    a, b = counts2["a"], counts2["b"]
    p = [(x + y) / 2 for x, y in zip(a, b)]
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    assert (round(mean(p), 6), round(mean(a), 6), round(mean(b), 6)) == (0.349121, 0.354248, 0.343994)
    assert sorted(p)[127] == sorted(p)[128] == 0.3125 and sum(x == 0 for x in p) == 20 and 1.0 not in p
    d = [x - y for x, y in zip(a, b)]
    ma, mb = mean(a), mean(b)
    corr = sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(
        sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    assert (round(mean(d), 6), round(mean([abs(x) for x in d]), 6), round(math.sqrt(mean([x * x for x in d])), 6),
            round(corr, 6)) == (0.010254, 0.103516, 0.138438, 0.874866)
    assert [round(100 * mean([abs(x) <= t for x in d]), 2) for t in (0, 1 / 16, 2 / 16)] == [23.05, 53.91, 77.73]
    live = lambda v: [0 < x < 1 for x in v]  # noqa: E731
    assert [round(100 * mean(live(v)), 2) for v in (a, b)] == [86.72, 85.55]
    assert round(100 * mean([x == y for x, y in zip(live(a), live(b))]), 2) == 87.89
    assert [sum(map(f, p)) for f in BINS] == [20, 97, 51, 65, 23, 0]
    assert [sum(map(f, a)) for f in BINS] == [33, 89, 57, 56, 20, 1]
    assert [sum(map(f, b)) for f in BINS] == [37, 86, 59, 55, 19, 0]


def test_second_final_policy_against_the_source(counts2):
    """Whole-panel reward of the final policy (53.03%) and the per-bin mean change of P in both cross-fit
    directions at 100% of training (crossfit_trajectory.csv), to 6 decimals."""
    a, b, s = counts2["a"], counts2["b"], counts2["after"]
    assert round(100 * sum(s) / 256, 2) == 53.03 and round(16 * sum(s)) == 2172
    a_bin = [0.09848484848484848, 0.18609550561797752, 0.22697368421052633, 0.22209821428571427, 0.121875, 0.0625]
    b_bin = [0.06418918918918919, 0.18531976744186046, 0.2044491525423729, 0.22272727272727272,
             0.12828947368421054]
    for bin_by, base, expected in ((a, b, a_bin), (b, a, b_bin)):
        for f, want in zip(BINS, expected):
            sel = [i for i in range(256) if f(bin_by[i])]
            assert sum(s[i] - base[i] for i in sel) / len(sel) == pytest.approx(want, abs=1e-12)


def _section2():
    text = RESULTS.read_text()
    start = text.index("## Published counts: Qwen3-0.6B -> GRPO on 256 GSM8K training problems")
    return text[start:text.index("\n## ", start + 1)]


def test_second_docs_table_is_the_stored_scores():
    """The second section's seed-0 table carries its scores.csv (4 decimals)."""
    with open(DIR2 / "scores.csv", newline="") as f:
        rows = {r["model"]: r for r in csv.DictReader(f)}
    sec = _section2()
    names = {"no change": "no_change", "logit shift": "shift", "tabular flow": "tabular",
             "coupled, one parameter": "coupled", "stationary point": "stationary"}
    for label, model in names.items():
        line = next(ln for ln in sec.splitlines() if ln.startswith(f"| {label} "))
        r = rows[model]
        for col in ("mae", "brier"):
            assert f"{float(r[col]):.4f} [{float(r[col + '_lo']):.4f}, {float(r[col + '_hi']):.4f}]" in line
        if model != "shift":
            assert f"{float(r['mae_minus_shift']):+.4f}" in line


def test_second_docs_numbers_are_the_diagnostics():
    """The 20-split means, counts and shares the second section states are its diagnostics.json's."""
    import json

    d = json.loads((DIR2 / "diagnostics.json").read_text())
    s = d["splits"]
    sec = " ".join(_section2().split())
    mm, mb = s["mean_mae"], s["mean_brier"]
    for label, model in (("no change", "no_change"), ("shift", "shift"), ("tabular", "tabular"),
                         ("coupled", "coupled")):
        assert f"{label} {mm[model]:.4f} / {mb[model]:.4f}" in sec
    assert f"(floor {s['mean_floor']:.4f})" in sec
    assert f"by {s['mean_mae_minus_shift']['tabular']:.4f} on average" in sec
    assert f"above 0 in {s['tabular_ci_above_zero']} of 20" in sec
    assert f"lower in {s['coupled_below_shift']} of 20" in sec
    assert f"below 0 in {s['coupled_ci_below_zero']} and above 0 in {s['coupled_ci_above_zero']}" in sec
    assert f"{d['worse_raw']} of 256 have a lower frequency after, none significantly" in sec
    assert d["worse_significant"] == 0 and f"against {d['better_raw']} and {d['better_significant']} better" in sec
    assert f"MAE {s['isotonic_in_sample_mae']:.4f} / Brier {s['isotonic_in_sample_brier']:.4f}" in sec
    excess = (s["isotonic_in_sample_mae"] - s["mean_floor"]) / (s["mean_mae"]["shift"] - s["mean_floor"])
    assert f"{excess:.0%} of the shift's excess" in sec
    assert f"MAE {mm['affine']:.4f} (below the shift in {s['affine_below_shift']} of 20" in sec
    assert (f"contains {s['predictive_90_coverage_heldout_mean']:.0%} of the held-out measurements (lowest "
            f"{s['predictive_90_coverage_heldout_min']:.0%}") in sec
    assert f"split-conformal one {s['conformal_90_coverage_heldout_mean']:.0%}" in sec
    # the recipe's beta = 0 is predicted as it is (the unregularised objective), the stand-in 1e-6 only compared
    assert d["beta_recipe"] == 0.0 and d["beta_used"] == 0.0 and d["all256"]["vertex_fraction"] == 1.0
    st = d["standin"]
    assert st["beta"] == 1e-6 and max(abs(v) for v in st["heldout_mae_change"].values()) < 1e-9
    assert f"by more than {max(st['max_abs_change'].values()):.1e}".replace("e-0", "e-") in sec
