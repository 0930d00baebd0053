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


def _mean_max(cell: str) -> tuple[float, float]:
    """``"0.0015 (0.009)"`` -> (0.0015, 0.009): a table cell's MAE and, in brackets, its max."""
    mean, top = re.fullmatch(r"([\d.]+) \(([\d.]+)\)", cell).groups()
    return float(mean), float(top)


def test_every_number_in_the_table_is_what_the_rows_show(rows):
    """Columns: configuration, level (prompts), Adam lr and steps, MAE (max), the same over converged
    prompts, converged/all · moving · oscillating, most steps run, target met; seeds 0-4 in every row."""
    for cells in _table_lines():
        config, level, lr, steps, prompts = _key(cells)
        g = rows[(rows.config == config) & (rows.level == level) & (rows.learning_rate == lr)]
        conv = g[g.conv_status == "converged"]
        assert len(cells) == 8
        assert (g.steps.iloc[0], g.question.nunique()) == (steps, prompts)
        assert set(g.seed) == {0, 1, 2, 3, 4}
        mae, top = _mean_max(cells[3])
        assert mae == pytest.approx(g.abs_error.mean(), abs=5e-5)
        assert top == pytest.approx(g.abs_error.max(), abs=5e-4)
        mae, top = _mean_max(cells[4])
        assert mae == pytest.approx(conv.abs_error.mean(), abs=5e-5)
        assert top == pytest.approx(conv.abs_error.max(), abs=5e-4)
        assert cells[5] == (f"{len(conv)}/{len(g)} · {(g.conv_status == 'moving').sum()} · "
                            f"{(g.conv_status == 'oscillating').sum()}")
        assert int(cells[6]) == g.steps_run.max()
        met = (conv.abs_error.mean() <= 0.02 and conv.abs_error.max() <= 0.05 and (len(g) - len(conv)) * 20 <= len(g))
        assert cells[7] == ("yes" if met else "**no**")


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


def test_the_gating_pass_gives_g2_reverse_its_longer_schedule(tmp_path, monkeypatch):
    """run_gating_pass (the committed command's and `validate --study smollm2`'s gating pass): G = 2 reverse on
    3 x the steps, the others on the steps, each capped at 3 x its own steps; the rows of both go out together."""
    pytest.importorskip("torch")
    from grpo_theory.studies import smollm2 as study

    calls = []

    def fake(out_dir, *, steps, configs, learning_rate, max_steps, **kw):
        calls.append((steps, tuple(configs), learning_rate, max_steps))
        return pd.DataFrame(dict(config=list(configs), steps=steps, level="sequence", learning_rate=learning_rate,
                                 seed=0, question="q", error=0.0, max_answer_error=0.0, task="t", seconds=1.0)), None

    monkeypatch.setattr(study, "run_smollm_study", fake)
    rows, summary = study.run_gating_pass(tmp_path, steps=600, learning_rate=3e-4, workers=2)
    assert sorted(calls) == [(600, ("G2_beta0.5_direct", "G8_beta0.5_reverse", "G8_beta0.5_direct"), 3e-4, 1800),
                             (1800, ("G2_beta0.5_reverse",), 3e-4, 5400)]
    assert set(summary.config) == set(study.SMOLLM_CONFIGS) and (tmp_path / "smollm2_summary.csv").exists()
    calls.clear()
    study.run_gating_pass(tmp_path, steps=400, configs=["G8_beta0.5_direct"], max_steps_factor=None)
    assert calls == [(400, ("G8_beta0.5_direct",), 3e-4, None)]


def test_the_longer_schedule_paragraph_is_what_the_rows_show(rows):
    """The G = 2 reverse paragraph: the 1,800-step rows (committed table) against the 600-step rows they replaced
    (kept in smollm2_validate_g2_reverse_600.csv), every number recomputed here."""
    text = (ROOT / "docs" / "results.md").read_text()
    body = text[text.index("* **G = 2, reverse: a longer schedule for a slow escape.**"):]
    body = " ".join(body[:body.index("\n* **")].split())
    old = pd.read_csv(RESULTS / "smollm2_validate_g2_reverse_600.csv")
    old["abs_error"] = (old.measured - old.predicted).abs()
    new = rows[(rows.config == "G2_beta0.5_reverse") & (rows.learning_rate == 3e-4)]
    assert set(old.steps) == {600} and set(new.steps) == {1800} and len(old) == len(new) == 240
    assert f"those {len(old)} rows are kept" in body
    o27 = old[old.prompt == "2*7"]
    moving = [int((o27[o27.level == lv].conv_status == "moving").sum()) for lv in ("sequence", "token")]
    assert f"in {moving[0]} of 5 seeds at sequence level and {moving[1]} of 5 at token level" in body
    rest = o27[(o27.level == "token") & (o27.conv_status == "converged")].sort_values("seed")
    assert list(rest.seed) == [2, 4] and f"at {rest.measured.iloc[0]:.3f} and {rest.measured.iloc[1]:.3f}" in body
    assert f"max error {old[(old.level == 'token') & (old.conv_status == 'converged')].abs_error.max():.3f}" in body
    assert (new.conv_status == "converged").all() and f"by step {new.steps_run.max():,}" in body
    for lv, word in (("sequence", "at sequence level"), ("token", "at token level")):
        p = new[(new.prompt == "2*7") & (new.level == lv)]
        err = (p.measured - p.predicted).abs().max()
        span = f"{p.measured.min():.4f}–{p.measured.max():.4f}"
        assert re.search(rf"within {err:.4f} (of its prediction )?{word} \({span}\)", body), (lv, err)
    n151 = new[new.prompt == "15-1"]
    assert f"(within {old[old.prompt == '15-1'].abs_error.max():.3f} over 600 steps, within " \
           f"{(n151.measured - n151.predicted).abs().max():.3f} over 1,800)" in body
    s = pd.read_csv(RESULTS / "smollm2_validate_summary.csv")
    s = s[(s.config == "G2_beta0.5_reverse") & (s.learning_rate == 3e-4)]
    assert f"{s.seconds.sum() / 3600:.1f} hours of training time" in body


def test_the_new_seed_paragraph_is_what_seed_5_shows(rows):
    text = (ROOT / "docs" / "results.md").read_text()
    body = text[text.index("Seven of eight rows land inside."):]
    body = " ".join(body[:body.index("\n\n")].split())
    new = pd.read_csv(RESULTS / "smollm2_validate_seed5.csv")
    new["abs_error"] = (new.measured - new.predicted).abs()
    g8 = new[(new.config == "G8_beta0.5_reverse") & (new.level == "sequence")]
    assert f"seed 5's worst prompt in that row is off by {g8.abs_error.max():.3f}" in body
    g2 = new[new.config == "G2_beta0.5_reverse"]
    assert set(g2.steps) == {1800} and (g2.conv_status == "converged").all() and f"its {len(g2)} prompts" in body
    p = g2[g2.prompt == "2*7"].set_index("level").measured
    assert f'"2*7" at {p["sequence"]:.3f} (sequence) and {p["token"]:.3f} (token)' in body
    worst = new[new.conv_status == "converged"].nlargest(3, "abs_error")
    assert set(worst.config) == {"G8_beta0.5_direct"}
    assert "worst converged errors are now " + ", ".join(f"{e:.3f}" for e in worst.abs_error[:2]) + \
           f" and {worst.abs_error.iloc[2]:.3f}, all G = 8 direct" in body
    assert f"{(new.conv_status != 'converged').sum()} of its {len(new)} prompts did not converge" in body


def test_seed_5_is_inside_the_family_wise_intervals(rows):
    """The new-seed paragraph's joint statement: every row's interval at 1 - 0.05/8 (Bonferroni over the eight
    rows) holds seed 5's MAE over converged prompts; the one the docs quote is recomputed."""
    from scipy.stats import t as student_t

    new = pd.read_csv(RESULTS / "smollm2_validate_seed5.csv")
    new["abs_error"] = (new.measured - new.predicted).abs()
    text = " ".join((ROOT / "docs" / "results.md").read_text().split())
    q = student_t.ppf(1 - 0.025 / 8, 4)
    assert f"t₀.₉₉₆₉,₄ = {q:.2f}" in text
    conv = rows[(rows.learning_rate == 3e-4) & (rows.conv_status == "converged")]
    groups = list(conv.groupby(["config", "level"]))
    assert len(groups) == 8
    for (config, level), g in groups:
        per = g.groupby("seed").abs_error.mean()
        m, h = per.mean(), q * per.std(ddof=1) * (1 + 1 / 5) ** 0.5
        s5 = new[(new.config == config) & (new.level == level) & (new.conv_status == "converged")].abs_error.mean()
        assert m - h <= s5 <= m + h, (config, level)
        if (config, level) == ("G8_beta0.5_reverse", "sequence"):
            assert f"(that row's interval: {m - h:.4f}–{m + h:.4f})" in text
