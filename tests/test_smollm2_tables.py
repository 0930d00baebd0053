"""Checks of committed data (issue 26): the five-seed SmolLM2 table in docs/results.md against the rows of
docs/results/smollm2_validate.csv, recomputed here with plain pandas (not through the study's summarise)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SECTION = "**Five seeds, trained to stationarity**"


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    r = pd.read_csv(RESULTS / "smollm2_validate.csv")
    r["abs_error"] = (r.measured - r.predicted).abs()
    return r


def _table_lines() -> list[list[str]]:
    text = (ROOT / "docs" / "results.md").read_text()
    body = text[text.index(SECTION):]
    body = body[:body.index("\n\n", body.index("| configuration"))]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in body.splitlines()
            if ln.startswith("| G = ")]


def _key(cells: list[str]) -> tuple:
    g, beta, penalty = re.fullmatch(r"G = (\d+), β = ([\d.]+), (\w+)", cells[0]).groups()
    level, prompts = re.fullmatch(r"(\w+) \((\d+)\)", cells[1]).groups()
    lr, steps = (float(x) for x in cells[2].split(","))
    return f"G{g}_beta{beta}_{penalty}", level, lr, int(steps), int(prompts)


def test_the_table_has_every_configuration_level_and_step_size_of_the_rows(rows):
    lines = _table_lines()
    keys = {_key(c)[:3] for c in lines}
    assert keys == set(rows.groupby(["config", "level", "learning_rate"]).groups)
    assert len(lines) == len(keys)


def test_every_number_in_the_table_is_what_the_rows_show(rows):
    for cells in _table_lines():
        config, level, lr, steps, prompts = _key(cells)
        g = rows[(rows.config == config) & (rows.level == level) & (rows.learning_rate == lr)]
        conv = g[g.conv_status == "converged"]
        assert (g.steps.iloc[0], g.question.nunique()) == (steps, prompts)
        assert int(cells[3]) == g.seed.nunique() == 5
        assert float(cells[4]) == pytest.approx(g.abs_error.mean(), abs=5e-5)
        assert float(cells[5]) == pytest.approx(g.abs_error.max(), abs=5e-4)
        assert float(cells[6]) == pytest.approx(conv.abs_error.mean(), abs=5e-5)
        assert float(cells[7]) == pytest.approx(conv.abs_error.max(), abs=5e-4)
        assert cells[8] == f"{len(conv)}/{len(g)}"
        assert int(cells[9]) == (g.conv_status == "moving").sum()
        assert int(cells[10]) == (g.conv_status == "oscillating").sum()
        assert int(cells[11]) == g.steps_run.max()
        met = (conv.abs_error.mean() <= 0.02 and conv.abs_error.max() <= 0.05 and (len(g) - len(conv)) * 20 <= len(g))
        assert cells[12] == ("yes" if met else "**no**")


def test_the_summary_csv_agrees_with_the_rows(rows):
    s = pd.read_csv(RESULTS / "smollm2_validate_summary.csv")
    for _, r in s.iterrows():
        g = rows[(rows.config == r.config) & (rows.level == r.level) & (rows.learning_rate == r.learning_rate)]
        assert r.mae == pytest.approx(g.abs_error.mean(), rel=1e-4)
        assert r.n_converged == (g.conv_status == "converged").sum()
