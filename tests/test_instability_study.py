"""Checks of committed data (issue 26): the SmolLM2 instability study's table against the numbers
docs/results.md and Figure 24's caption state, recomputed here with plain pandas from the per-prompt
rows (not through the figure module's own aggregation)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    t = pd.read_csv(RESULTS / "smollm2_instability.csv")
    t["abs_error"] = (t.measured - t.predicted).abs()
    return t


def _per_setting(t: pd.DataFrame) -> dict:
    out = {}
    for (lr, warm), g in t.groupby(["learning_rate", "warmup_steps"]):
        runs = g.groupby("seed")
        out[(lr, warm)] = dict(runs=runs.ngroups, fell=int((runs.run_drop.first() > 0.1).sum()),
                               collapsed=int((runs.abs_error.max() > 0.5).sum()), mae=g.abs_error.mean(),
                               unconverged=int((g.status != "converged").sum()))
    return out


def test_results_table_states_what_the_rows_show(table):
    text = (ROOT / "docs" / "results.md").read_text()
    rows = {"Adam lr 1e-3, 300 steps |": (1e-3, 0), "Adam lr 1e-3, 300 steps, 30 warm-up steps |": (1e-3, 30),
            "Adam lr 3e-4, 600 steps |": (3e-4, 0)}
    stats = _per_setting(table)
    for prefix, key in rows.items():
        line = next(ln for ln in text.splitlines() if ln.startswith("| " + prefix))
        cells = [c.strip() for c in line.strip("|").split("|")]
        s = stats[key]
        assert cells[1] == f"{s['fell']} of {s['runs']}"
        assert cells[2].startswith(f"{s['collapsed']} of {s['runs']}")
        assert float(cells[3]) == pytest.approx(s["mae"], abs=5e-5)
        assert int(cells[4]) == s["unconverged"]


def test_the_collapse_is_at_the_first_step_and_the_warmup_removes_it(table):
    """Seed 4 at lr 1e-3: every prompt at a vertex by step 1 (the trajectories' first logged step); the
    same seed after the warm-up ends within 0.01 of every prediction."""
    traj = pd.read_csv(RESULTS / "smollm2_instability_trajectories.csv")
    plain = [r for r in traj.run.unique() if r.endswith("seed4") and "lr0.001_steps300" in r]
    assert len(plain) == 1
    first = traj[(traj.run == plain[0]) & (traj.step == traj[traj.run == plain[0]].step.min())]
    assert first.step.iloc[0] == 1
    assert ((first.p > 0.99) | (first.p < 0.01)).all()
    warm = table[(table.seed == 4) & (table.warmup_steps == 30)]
    assert len(warm) == 8 and warm.abs_error.max() < 0.01


def test_figure_24_caption_counts_match_the_rows(table):
    from grpo_theory.figures._spec import FigureInputs
    from grpo_theory.figures.training_instability import SPEC

    caption = SPEC.caption_text(SPEC.tables(FigureInputs(results=RESULTS)))
    stats = _per_setting(table)
    for (lr, warm), s in stats.items():
        label = f"Adam lr {lr:g}" + (f", warm-up {warm}" if warm else "")
        assert re.search(re.escape(label) + rf": {s['collapsed']} of {s['runs']}\b", caption), (label, caption)
