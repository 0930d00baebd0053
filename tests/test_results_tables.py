"""Checks of DATA, not of code: the research results recorded in the committed tables under docs/results.

These tests read the measured tables the studies wrote (``grpo-theory validate --study ...``,
experiments/*.py) and assert what docs/results.md claims about them. They pass or fail with the
committed numbers, whatever the code does; a change in the code is checked by the other test files.
"""

import re
from pathlib import Path

import pandas as pd
import pytest
from _markdown import markdown_rows

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def test_tree_study_token_level_theory_is_the_closer_one_for_every_shape():
    """docs/results.md (token level): within 0.01 of every trained answer for every shape, while the
    sequence-level theory misses by more than 0.05 somewhere in each shape."""
    t = pd.read_csv(RESULTS / "tree_study.csv")
    for shape, d in t.groupby("shape"):
        assert (d.measured - d.predicted).abs().max() < 0.01, shape
        assert (d.measured - d.predicted_sequence_level).abs().max() > 0.05, shape


def test_trained_trajectories_end_at_the_predicted_point():
    """Figure 16's runs: the mean of the last five logged policies is within 0.01 of the prediction."""
    df = pd.read_csv(RESULTS / "fig16_trajectories.csv")
    for (run, q), d in df.groupby(["run", "question"]):
        trained = d[d.kind == "trained"].sort_values("step")
        assert abs(trained.pi.iloc[-5:].mean() - d.predicted.iloc[0]) < 0.01, (run, q)


def test_trainer_convention_points_cover_both_trainers():
    """Figure 13's measured points: TRL's own GRPOTrainer and our trainer under TRL's convention, 100 or more."""
    trl, ours = pd.read_csv(RESULTS / "trl_results.csv"), pd.read_csv(RESULTS / "validate_seeds.csv")
    ours = ours[ours.config.isin(["TRL_std_G2", "TRL_std_G8"]) & (ours.prediction == "trainer")]
    assert len(trl) > 0 and len(ours) > 0 and len(trl) + len(ours) >= 100


def test_the_gated_table_of_results_md_is_what_validate_results_shows():
    """docs/results.md's gated table, recomputed from the rows of validate_results.csv with plain pandas
    (not through the study's summary), and the overall MAE its text states."""
    r = pd.read_csv(RESULTS / "validate_results.csv")
    r = r[r.gated & (r.prediction == "trainer")]
    lines = markdown_rows(RESULTS.parent / "results.md", "| configuration | MAE | max abs error | mean SE |")
    assert len(lines) == r.config.nunique() == 12
    for cells in lines:
        g, beta, penalty = re.fullmatch(r"G=(\d+), β=([\d.]+), (\w+)", cells[0]).groups()
        d = r[r.config == f"G{g}_beta{beta}_{penalty}"]
        assert len(d) == 16
        assert float(cells[1]) == pytest.approx(d.error.abs().mean(), abs=5e-5)
        assert float(cells[2]) == pytest.approx(d.error.abs().max(), abs=5e-5)
        assert float(cells[3]) == pytest.approx(d.measured_se.mean(), abs=5e-5)
    text = (RESULTS.parent / "results.md").read_text()
    overall = float(re.search(r"Over all 192 gated points the MAE is ([\d.]+)", text).group(1))
    assert overall == pytest.approx(r.error.abs().mean(), abs=5e-5) and len(r) == 192
    n_conv = int(re.search(r"the stationarity check \(below\) finds (\d+) of the 192", text).group(1))
    assert n_conv == (r.conv_status == "converged").sum()


def test_the_trl_table_of_trl_md_is_what_trl_results_shows():
    r = pd.read_csv(RESULTS / "trl_results.csv")
    lines = markdown_rows(RESULTS.parent / "trl.md", "| setting | theory objective | MAE |")
    assert len(lines) == r.setting.nunique() == 2
    for cells in lines:
        d = r[r.setting == cells[0].strip("`")]
        conv = d[d.conv_status == "converged"]
        assert float(cells[2]) == pytest.approx(d.error.abs().mean(), abs=5e-5)
        assert float(cells[3]) == pytest.approx(d.error.abs().max(), abs=5e-5)
        assert float(cells[4]) == pytest.approx(d.measured_se.mean(), abs=5e-5)
        assert cells[5] == f"{len(conv)}/{len(d)}"
        mae, mx = (float(x) for x in cells[6].split(","))
        assert (mae, mx) == (pytest.approx(conv.error.abs().mean(), abs=5e-5),
                             pytest.approx(conv.error.abs().max(), abs=5e-5))


def test_the_tree_table_of_results_md_is_what_tree_study_shows():
    """docs/results.md's token-level table: per shape and loss type, the MAE (mean over seeds; worst seed),
    the max error, the sequence-level theory's MAE / max and the other loss types' predictions' MAE / max,
    from the rows of tree_study.csv; and the worst seed and answer its text states."""
    t = pd.read_csv(RESULTS / "tree_study.csv")
    t["ae"] = (t.measured - t.predicted).abs()
    names = {"grpo": ("grpo", "predicted_grpo/B=all"), "dr_grpo": ("dr_grpo", "predicted_dr_grpo/B=all"),
             "dapo B=1": ("dapo", "predicted_dapo/B=1")}
    lines = markdown_rows(RESULTS.parent / "results.md", "| configuration | MAE (mean over 3 seeds; worst seed) |")
    assert len(lines) == t.config.nunique() == 9
    for cells in lines:
        shape, name = cells[0].split(", ")
        d = t[(t["shape"] == shape) & (t.loss_type == names[name][0])]
        per_seed = d.groupby("seed").ae.mean()
        assert cells[1] == f"{per_seed.mean():.4f}; {per_seed.max():.4f}"
        assert cells[2] == f"{d.ae.max():.4f}"
        seq = (d.measured - d.predicted_sequence_level).abs()
        assert cells[3] == f"{seq.mean():.4f} / {seq.max():.4f}"
        others = []
        for other, (_, col) in names.items():
            if other != name:
                e = (d.measured - d[col]).abs()
                others.append(f"{other} {e.mean():.4f} / {e.max():.4f}")
        assert cells[4] == "; ".join(others)
    text = (RESULTS.parent / "results.md").read_text()
    worst = t.groupby(["config", "seed"]).ae.mean().max()
    assert f"The worst seed's MAE is {worst:.4f}, the worst single answer {t.ae.max():.4f}" in text
    assert f"finds {(t.conv_status == 'converged').sum()} of the {len(t)} answers converged" in text


def test_the_kl_study_convergence_claims_are_what_kl_study_shows():
    k = pd.read_csv(RESULTS / "kl_study.csv")
    text = (RESULTS.parent / "results.md").read_text()
    off = k[k.conv_status != "converged"]
    assert f"{(k.conv_status == 'converged').sum()} of the {len(k)} answers are converged. The other {len(off)}" in text
    direct = ["k2_loss", "k3_plus_loss_verl_clamps", "k1_advantage"]
    assert set(off.config) == set(direct) and off.groupby(["config", "seed"]).question.nunique().eq(1).all()
    assert f"spread {off.conv_spread.min():.3f}–{off.conv_spread.max():.3f}" in text
    assert f"by {off.prompt_largest_drop.min():.2f}–{off.prompt_largest_drop.max():.2f}" in text
    d = k[k.config.isin(direct)]
    assert f"max error {d.error.abs().max():.3f} is one of them" in text
    assert f"converged answers the max is {d[d.conv_status == 'converged'].error.abs().max():.4f}" in text


def test_the_five_seed_convergence_claim_is_what_validate_seeds_shows():
    r = pd.read_csv(RESULTS / "validate_seeds.csv")
    t = r[r.prediction == "trainer"]
    off = t[t.conv_status != "converged"]
    text = " ".join((RESULTS.parent / "results.md").read_text().split())
    assert f"finds {len(t) - len(off):,} of the {len(t):,} trained prompts converged" in text
    osc = off[off.conv_status == "oscillating"]
    assert len(osc) == 2 and set(osc.config) == {"G64_beta0.5_direct"} and set(osc.seed) == {4}
    assert sorted(osc.question) == [1, 3] and (osc.learning_rate == 1e-3).all() and (osc["mode"] == "joint").all()
    assert f"spread of {osc.conv_spread.min():.2f}" in text and round(osc.conv_spread.max(), 2) == 0.25
    measured = sorted(osc.measured)
    assert f"measured {measured[0]:.3f} and {measured[1]:.3f}" in text
    # the near-edge logit test's verdicts (issue 26)
    mov = off[off.conv_status == "moving"]
    assert f"{len(mov)} are *moving* by the logit test" in text
    g64 = mov[mov.config.str.startswith("G64")]
    z = mov.conv_reason.str.extract(r"logit ([+-][\d.]+)")[0].astype(float)
    zg = z[mov.config.str.startswith("G64")]
    assert f"{len(g64)} G = 64 direct questions at {g64.measured.min():.4f}–{g64.measured.max():.5f}" in text
    assert (zg < 0).all() and f"by {-zg.max():.2f}–{-zg.min():.2f} over the tail" in text
    assert f"{(g64.error.abs() <= 0.0006).sum()} of the {len(g64)} are within 0.0006" in text
    other = g64[(g64.measured - g64.predicted).abs() > 0.1]
    assert len(other) == 3 and f"but {len(other)} are questions" in text
