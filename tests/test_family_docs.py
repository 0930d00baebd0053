"""The family study's numbers quoted in docs/guide.md and README.md are those of the committed CSVs (issue 22)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "docs" / "results" / "family_study_summary.csv"


def _fmt(v: float) -> str:
    """The guide's rounding: 4 decimals, or one significant digit below 1e-4."""
    return f"{v:.0e}".replace("e-0", "e-") if v < 1e-4 else f"{v:.4f}"


def _summary() -> pd.DataFrame:
    return pd.read_csv(SUMMARY, index_col=0)


def test_summary_is_the_study_csv_aggregated():
    study = pd.read_csv(ROOT / "docs" / "results" / "family_study.csv")
    s = _summary()
    for cfg, d in study.groupby("config"):
        assert d.duplicated(["seed", "question"]).sum() == 0, cfg           # one row per run and question
        assert s.loc[cfg, "seeds"] == d.seed.nunique()
        assert float(s.loc[cfg, "mae"]) == float(f"{d.abs_err.mean():.3g}")
        assert float(s.loc[cfg, "max"]) == float(f"{d.abs_err.max():.3g}")


def test_guide_table_states_the_summary():
    text = (ROOT / "docs" / "guide.md").read_text()
    rows = re.findall(r"^\| [^|]+ \| `(\w+)` \| (\d+) \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    s = _summary()
    assert sorted(r[0] for r in rows) == sorted(s.index)
    for cfg, seeds, mae, mx in rows:
        assert int(seeds) == int(s.loc[cfg, "seeds"]), cfg
        assert (mae.strip(), mx.strip()) == (_fmt(s.loc[cfg, "mae"]), _fmt(s.loc[cfg, "max"])), cfg
        assert bool(s.loc[cfg, "meets_target"])


def test_readme_bounds_are_the_summarys_worst_configuration():
    text = " ".join((ROOT / "README.md").read_text().split())
    s = _summary()
    assert f"MAE ≤ {s.mae.max():.4f} and max ≤ {s['max'].max():.4f} per configuration" in text


def test_entropy_only_prediction_is_the_one_quoted():
    from grpo_theory import Objective, Question, stationary_policy

    study = pd.read_csv(ROOT / "docs" / "results" / "family_study.csv")
    pred = study[study.config == "entropy_nokl"].predicted
    x = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0, entropy_coef=1.0, group_size=4)).pi[0]
    assert abs(pred - x).max() < 1e-9                        # the same for every pi_ref
    assert f"`P(correct) = {x:.4f}` whatever `pi_ref`" in (ROOT / "docs" / "guide.md").read_text()
