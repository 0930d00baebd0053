"""Checks of DATA, not of code: the research results recorded in the committed tables under docs/results.

These tests read the measured tables the studies wrote (``grpo-theory validate --study ...``,
experiments/*.py) and assert what docs/results.md claims about them. They pass or fail with the
committed numbers, whatever the code does; a change in the code is checked by the other test files.
"""

from pathlib import Path

import pandas as pd

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
