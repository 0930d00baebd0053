"""The figures of the headline results (Figures 27-29): every number a caption states, recomputed here from
the committed study tables (docs/results/), independently of the figure modules, and found in the committed
caption (paper_figures/) and in docs/figures.md. Captions stay at or under 200 words."""

import re
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
FIGS = ROOT / "paper_figures"
RESULTS = ROOT / "docs" / "results"
DOC = (ROOT / "docs" / "figures.md").read_text()


def _caption(stem):
    return " ".join((FIGS / f"{stem}_caption.txt").read_text().split())


def _section(number):
    m = re.search(rf"### Figure {number}:.*?(?=\n### |\n## |\Z)", DOC, re.S)
    assert m, f"docs/figures.md has no section for Figure {number}"
    return " ".join(m.group(0).split())


def _words(text):
    return len(text.split())


# --- Figure 27: the five-seed validation ------------------------------------------------------------

def _fig27_expected():
    """From the experiment's own summary (experiments/validate_seeds.py wrote validate_seeds_summary.csv),
    the gated configurations at lr 3e-3, joint: seeds meeting the target, and the per-seed MAE and largest
    error recomputed from the rows."""
    s = pd.read_csv(RESULTS / "validate_seeds_summary.csv")
    s = s[s.gated & (s["mode"] == "joint") & np.isclose(s.learning_rate, 3e-3) & (s.prediction == "trainer")]
    rows = pd.read_csv(RESULTS / "validate_seeds.csv")
    rows = rows[rows.config.isin(s.config) & (rows["mode"] == "joint") & np.isclose(rows.learning_rate, 3e-3)
                & (rows.prediction == "trainer")]
    per_seed = rows.assign(a=rows.error.abs()).pivot_table(index=["config", "seed"], values="a",
                                                           aggfunc=["mean", "max"])
    per_seed.columns = ["mae", "max"]
    return s.set_index("config"), per_seed.reset_index(), rows


def test_fig27_counts_against_the_studys_summary():
    s, per_seed, rows = _fig27_expected()
    assert len(s) == 12 and (s.seeds == 5).all()
    full = s[s.seeds_meeting_target == s.seeds]
    miss = s[s.seeds_meeting_target < s.seeds]
    assert len(full) == 10
    assert dict(miss.seeds_meeting_target) == {"G64_beta0.5_direct": 2, "G64_beta1_direct": 0}
    good = per_seed[per_seed.config.isin(full.index)]
    cap = _caption("fig27_seed_validation")
    assert "In 10 of the 12 configurations all 5 seeds meet it" in cap
    assert f"per-seed mean {good.mae.min():.4f}-{good.mae.max():.4f}" in cap
    assert f"largest error {good['max'].max():.4f}" in cap
    assert good['max'].max() == s.loc[full.index, "max"].max()       # the summary's own largest error
    # the misses: collapsed points (error near 1) and points at the other stable point, from the rows
    b05 = rows[rows.config == "G64_beta0.5_direct"]
    collapsed = int((b05.error.abs() > 0.9).sum())
    b1 = rows[rows.config == "G64_beta1_direct"]
    other = int(round(s.loc["G64_beta1_direct", "reach_other_stable"] * s.loc["G64_beta1_direct", "points"]))
    assert (collapsed, other) == (4, 8)
    assert f"beta = 0.5, 2 of 5 seeds ({collapsed} of {len(b05)} questions collapsed to a wrong vertex" in cap
    assert (f"beta = 1, 0 of 5 seeds ({other} of {len(b1)} questions ended at the theory's other stable point, "
            f"largest error {b1.error.abs().max():.2f})") in cap
    assert "16 questions" in cap and "800 steps" in cap and int(rows.steps_run.max()) == 800
    assert rows.groupby(["config", "seed"]).size().eq(16).all()
    assert _words(cap) <= 200


def test_fig27_table_is_the_per_seed_table():
    _, per_seed, _ = _fig27_expected()
    fig = pd.read_csv(FIGS / "fig27_seed_validation.csv")
    m = fig.merge(per_seed, on=["config", "seed"])
    assert len(m) == len(fig) == 60
    np.testing.assert_allclose(m.mae_x, m.mae_y, rtol=1e-9)
    np.testing.assert_allclose(m.max_error, m["max"], rtol=1e-9)
    assert (m.meets_target == ((m.mae_y <= 0.01) & (m["max"] <= 0.05))).all()


def test_fig27_docs_state_the_caption_numbers():
    doc = _section(27)
    assert "fig27_seed_validation.png" in doc
    for text in ("10 of the 12 configurations", "2 of 5 seeds", "0 of 5", "4 of 80", "8 of 80"):
        assert text in doc, text
    s, _, _ = _fig27_expected()
    assert int(s.loc["G64_beta1_direct", "multistable_points"]) == 15 and "15 of the 80 questions have two" in doc
    alone = pd.read_csv(RESULTS / "validate_seeds_summary.csv")
    alone = alone[(alone["mode"] == "alone") & (alone.config == "G64_beta0.5_direct")].iloc[0]
    assert alone["max"] < 0.05 and "trained alone, none does" in doc
