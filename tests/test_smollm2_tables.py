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


def test_a_new_seed_lands_where_the_five_seeds_say(rows):
    """docs/results.md's new-seed table: seed 5, trained with the committed command, against the 95% prediction
    interval of the per-seed MAE (over converged prompts) of seeds 0-4, mean +- t_{0.975,4} sd sqrt(1 + 1/5)."""
    from scipy.stats import t as student_t

    new = pd.read_csv(RESULTS / "smollm2_validate_seed5.csv")
    new["abs_error"] = (new.measured - new.predicted).abs()
    assert set(new.seed) == {5} and set(new.learning_rate) == {3e-4}
    text = (ROOT / "docs" / "results.md").read_text()
    body = text[text.index("| configuration | level | per-seed MAE, seeds 0–4"):]
    body = body[:body.index("\n\n")]
    lines = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in body.splitlines()[2:]]
    assert len(lines) == 8
    for cells in lines:
        g, beta, penalty = re.fullmatch(r"G = (\d+), β = ([\d.]+), (\w+)", cells[0]).groups()
        config, level = f"G{g}_beta{beta}_{penalty}", cells[1]
        old = rows[(rows.config == config) & (rows.level == level) & (rows.learning_rate == 3e-4)
                   & (rows.conv_status == "converged")]
        per = old.groupby("seed").abs_error.mean()
        assert len(per) == 5
        m, sd = per.mean(), per.std(ddof=1)
        h = student_t.ppf(0.975, 4) * sd * (1 + 1 / 5) ** 0.5
        assert cells[2] == f"{m:.4f} ± {sd:.4f}"
        assert cells[3] == f"{max(m - h, 0):.4f}–{m + h:.4f}"
        s5 = new[(new.config == config) & (new.level == level) & (new.conv_status == "converged")].abs_error.mean()
        assert cells[4] == f"{s5:.4f}"
        assert cells[5] == ("yes" if m - h <= s5 <= m + h else "**no**")


def test_the_slow_escape_at_a_constant_step_is_what_the_docs_say():
    """docs/results.md's "2*7" at a constant step: every number from docs/results/smollm2_slow_escape.csv."""
    d = pd.read_csv(RESULTS / "smollm2_slow_escape.csv")
    text = (ROOT / "docs" / "results.md").read_text()
    body = text[text.index('### "2*7" at a constant step'):]
    body = body[:body.index("\n### ")]
    w = d[d.in_final_window]
    assert set(d.lr) == {3e-4} and d.step.max() == 1800 and len(w) == 540 and w.step.min() == 1261
    first = d[d.step <= 540].p.iloc[-1], int(d[d.p > 0.1].step.iloc[0]), d[d.step <= 720].p.iloc[-1]
    assert f"{first[0]:.3f} at step\n540, above 0.1 first at step {first[1]}, {first[2]:.3f} at step 720" in body
    assert f"its mean is {w.p.mean():.4f} against the prediction {d.predicted.iloc[0]:.4f}" in body
    assert f"an error of {abs(w.p.mean() - d.predicted.iloc[0]):.4f}" in body
    assert f"standard deviation of {w.p.std():.3f} ({w.p.min():.3f}–{w.p.max():.3f})" in body
    assert f"(π_ref {d.pi_ref.iloc[0]:.4f}, predicted\n{d.predicted.iloc[0]:.3f})" in body
