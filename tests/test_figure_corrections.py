"""The statements a paper-size review found false or overstated, as corrected: every number recomputed here
from the committed tables (paper_figures/, docs/results/), independently of the figure modules, and found in
the committed caption or in docs/figures.md. The old wording is asserted gone."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _independent import bound_up

ROOT = Path(__file__).resolve().parents[1]
FIGS = ROOT / "paper_figures"
DOC = (ROOT / "docs" / "figures.md").read_text()


def _caption(stem):
    return (FIGS / f"{stem}_caption.txt").read_text()


def _csv(stem):
    return pd.read_csv(FIGS / f"{stem}.csv")


def _section(number):
    """docs/figures.md's section on one figure, flattened to one line."""
    m = re.search(rf"### Figure {number}:.*?(?=\n### |\n## |\Z)", DOC, re.S)
    assert m, f"no section for Figure {number}"
    return " ".join(m.group(0).split())


def test_fig22_g64_three_point_cells_inside_and_outside_the_large_group_region():
    """2 of G = 64's 18 three-point cells lie outside G = inf's region. G = inf's count per cell comes from
    h on a dense grid of pi(a) (min h < 0: three points), not from the figure's turning-point rule."""
    from grpo_theory import closed_form

    d = _csv("fig22_finite_g_regions")
    three = d[(d.G == 64) & (d.n_points == 3)]
    x = np.linspace(1e-5, 1 - 1e-5, 200_001)
    inside = sum(bool(closed_form.large_group_direct_h(x, p, b).min() < 0)
                 for b, p in zip(three.beta, three.pi_ref_a))
    n = len(three)
    assert (n, inside) == (18, 16)
    cap, doc = _caption("fig22_finite_g_regions"), _section(22)
    assert f"({inside} of its {n} cells inside the G = ∞ region, {n - inside} just outside it)" in cap
    assert "only a thin sliver inside the G = ∞ region keeps three" not in cap
    assert f"three points survive in {n} of 900 cells" in doc and f"{inside} of them inside the G = ∞ region" in doc


def test_fig22_certified_counts_moved_to_the_docs():
    """Figure 22's certification counts (moved from its caption to docs/figures.md), from the study's table."""
    study = pd.read_csv(ROOT / "docs" / "results" / "fig7b_finite_g.csv")
    doc, cap = _section(22), _caption("fig22_finite_g_regions")
    n = {G: len(g) for G, g in study.groupby("G")}
    cert = {G: int(g.certified.astype(str).eq("True").sum()) for G, g in study.groupby("G")}
    assert sorted(n) == [8, 64] and cert == n          # every cell certified: the caption may say "certified"
    assert f"({cert[8]} of {n[8]} at G = 8 and {cert[64]} of {n[64]} at G = 64)" in doc
    agree = int((study.n_certified == study.n_scan).sum())
    assert agree == len(study) and f"same count in {agree} of {len(study)} cells" in doc
    assert "certified counts (solvers.certify;" in cap


def test_fig11_point_counts_and_no_sliver():
    pts = _csv("fig11_simplex_flows_stationary")
    interior = pts[pts.boundary == False]                 # noqa: E712
    n_stable, n_saddle = int((interior.stable == True).sum()), int((interior.stable == False).sum())  # noqa: E712
    vertices = pts[(pts.boundary == True) & (pts.stable == True)]                                      # noqa: E712
    assert (n_stable, n_saddle, len(vertices)) == (2, 2, 1)
    cap, doc = _caption("fig11_simplex_flows"), _section(11)
    assert f"{n_stable} interior stable points and {n_saddle} saddles" in cap
    assert "two interior stable points, two saddles, and the vertex a as a stable limit" in doc
    assert "sliver" not in cap and "sliver" not in doc
    assert "two stable stationary points and a saddle" not in doc
    # which starts reach the edge attractor: the last point of each trajectory against the table's points
    traj = _csv("fig11_simplex_flows")
    stable = interior[interior.stable == True]            # noqa: E712
    edge = stable[stable.pi_c < 0.01][["pi_a", "pi_b", "pi_c"]].to_numpy()
    ends = traj.sort_values("t").groupby("start").last()
    starts = traj.sort_values("t").groupby("start").first()
    reach = [s for s in ends.index if np.abs(ends.loc[s, ["pi_a", "pi_b", "pi_c"]].to_numpy() - edge[0]).max() < 1e-3]
    c_max = starts.loc[reach, "pi_c"].max()
    assert f"only those giving c at most {c_max:.0e} reach it" in cap
    assert f"of the {len(ends)} starts drawn, only the {len(reach)} that give c at most {c_max:.0e}".replace(
        "1e-04", "1e-4") in doc
    # pi_ref's trajectory (start 0, pi_ref = (0.1, 0.1, 0.8)) ends at the other interior stable point
    assert np.allclose(starts.loc[0, ["pi_a", "pi_b", "pi_c"]].to_numpy(float), [0.1, 0.1, 0.8])
    other = interior[(interior.stable == True) & (interior.pi_c > 0.01)]                               # noqa: E712
    assert len(other) == 1 and abs(ends.loc[0, "pi_c"] - other.pi_c.iloc[0]) < 1e-3
    assert f"training from pi_ref ends at the interior point with pi(c) = {other.pi_c.iloc[0]:.2f}" in cap


def test_fig11_has_no_text_under_seven_points():
    src = (ROOT / "grpo_theory" / "figures" / "simplex_flows.py").read_text()
    sizes = [float(v) for v in re.findall(r"fontsize=([0-9.]+)", src)]
    assert sizes and min(sizes) >= 7


def test_fig9_exceptions_counted_by_kind():
    d = _csv("fig9_trained_vs_theory")
    ok = d[d.converged.astype(bool)]
    ex = ok[ok.residual.abs() > 0.01]
    g64 = ex[(ex.group_size == 64) & (ex.penalty == "direct")]
    upper = g64[(g64.beta == 1.0) & (g64.residual > 0.1)]
    collapse = g64[(g64.beta == 0.5) & (g64.residual < -0.99)]
    rest = ex.drop(index=upper.index.union(collapse.index))
    smol = rest.source.str.startswith("SmolLM2")
    gpt2 = rest[(rest.source == "small GPT") & (rest.group_size == 2)]
    assert len(rest) == int(smol.sum()) + len(gpt2)
    text = _section(9)
    assert (f"Of the {len(ex)} converged points that miss by more than 0.01, {len(upper) + len(collapse)} are "
            f"large misses of two kinds: {len(upper)} on the upper branch") in text
    assert f"and {len(collapse)} with residuals near −1" in text
    assert (f"The other {len(rest)} miss by at most {bound_up(rest.residual.abs().max(), '.3f')} ({int(smol.sum())} SmolLM2 "
            f"prompts and {len(gpt2)} small-GPT points at G = 2)") in text
    assert "bunched" not in text


def _clean_curve(G, beta, ps):
    """pi(a) of a clean binary question (rewards 1, 0), through the public single-question solver."""
    from grpo_theory import Objective, Question, stationary_points

    out = []
    for p in ps:
        sols = [s for s in stationary_points(Question([p, 1 - p], rewards=[1.0, 0.0]),
                                             Objective(beta=beta, group_size=G)) if s.stable]
        out.append(float(sols[0].pi[0]))
    return np.array(out)


@pytest.mark.slow
def test_fig17_noise_is_a_larger_beta_only_at_g2():
    """At G = 2 the noisy curve is the clean one at beta / (1 - 2 eps); at G = 8 and inf a coarse-to-fine
    search over one beta (not the figure's bounded minimiser) misses by the caption's amounts."""
    d = _csv("fig17_noisy_verifier")
    cap, doc = _caption("fig17_noisy_verifier"), _section(17)
    assert "acts like a larger beta at every G" not in cap and "acts like a larger beta at every G" not in doc
    for eps in (0.1, 0.2, 0.3):
        x = d[(d.group_size == 2) & (d.noise == eps)].sort_values("pi_ref_a")
        assert np.abs(_clean_curve(2, 0.5 / (1 - 2 * eps), x.pi_ref_a) - x.pi_a).max() < 1e-6
    worst = {}
    for G in (8, math.inf):
        gaps = []
        for eps in (0.1, 0.2, 0.3):
            x = d[(d.group_size == G) & (d.noise == eps)].sort_values("pi_ref_a")
            ps, target = x.pi_ref_a.to_numpy(), x.pi_a.to_numpy()
            lo, hi, best = 0.5, 10.0, None
            for _ in range(4):                    # a grid in log beta, narrowed around its best point
                grid = np.geomspace(lo, hi, 9)
                miss = [np.abs(_clean_curve(G, b, ps) - target).max() for b in grid]
                k = int(np.argmin(miss))
                best = miss[k]
                lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, 8)]
            gaps.append(best)
        worst[G] = max(gaps)
        assert worst[G] > 0.004                     # no single beta reproduces the curve
    assert f"up to {worst[8]:.3f} at G = 8 and {worst[math.inf]:.3f} at G = ∞" in cap
    assert f"misses the noisy curve by up to {worst[8]:.3f} and {worst[math.inf]:.3f}" in doc


def test_fig17_equivalent_table_matches_g2_exactly():
    e = _csv("fig17_noisy_verifier_equivalent")
    g2 = e[e.group_size == 2]
    assert np.allclose(g2.beta_equivalent, 0.5 / (1 - 2 * g2.noise), rtol=1e-5)
    cap = _caption("fig17_noisy_verifier")
    assert "exactly a larger beta, beta / (1 - 2 eps)" in cap
    # the bound is the largest G = 2 gap rounded up (1.36e-07 was printed "within 1e-07")
    assert f"(every curve within {bound_up(g2.max_gap.max(), '.1e')})" in cap


def test_fig21_three_variants_are_one_experiment():
    """From the per-answer table: k2 in the loss, k3+ with verl's clamps and k1 in the advantage measured the
    same numbers for every answer of every seed."""
    rows = pd.read_csv(ROOT / "docs" / "results" / "kl_study.csv")
    twins = ["k2_loss", "k3_plus_loss_verl_clamps", "k1_advantage"]
    meas = {c: rows[rows.config == c].sort_values(["seed", "question", "answer"]).measured.to_numpy()
            for c in twins}
    assert all(np.array_equal(meas[twins[0]], meas[c]) for c in twins[1:])
    worst = rows.assign(err=(rows.measured - rows.predicted).abs()).groupby(["config", "seed"]).err.mean()
    met = [c for c in worst.index.get_level_values(0).unique() if worst[c].max() <= 0.01]
    # distinct experiments among the variants that met the target: identical per-answer measurements
    distinct = {tuple(rows[rows.config == c].sort_values(["seed", "question", "answer"]).measured) for c in met}
    assert (len(met), len(distinct)) == (8, 6)
    cap, doc = _caption("fig21_kl_estimators"), _section(21)
    assert f"by {len(met)} of 15 variants ({len(distinct)} distinct runs: {len(twins)} of them train identically" in cap
    assert "(k2 in the loss, k3+ with verl's clamps, k1 in the\nadvantage) train identically" in DOC
    assert f"so the eight are {['zero', 'one', 'two', 'three', 'four', 'five', 'six'][len(distinct)]} distinct" in doc


def test_fig21_points_and_clip_moved_to_the_docs():
    """Figure 21(a)'s point count and clip (moved from its caption), from its committed table."""
    from grpo_theory.figures.kl_estimators import CLIP

    d = _csv("fig21_kl_estimators")
    rows = pd.read_csv(ROOT / "docs" / "results" / "kl_study.csv")
    assert len(d) == int(rows.rewarded.sum()) == 318
    assert f"draws {len(d)} points" in _section(21) and CLIP == 1e-5
    assert "clipped to [1e-5, 1 − 1e-5]" in _section(21)


def test_fig8_b_rises_little_on_every_path():
    d = _csv("fig8_simplex_paths")
    text = _section(8)
    assert "routes mass through" not in text
    peak = d.groupby("method").pi_b.max()
    assert 0.30 <= peak.min() and peak.max() <= 0.33
    assert f"RLHF's peaks at {peak['RLHF']:.3f}" in text
    at1 = d[d.beta == 1.0].set_index("method")
    a = at1.pi_a
    assert (f"π(a) = {a['GRPO reverse/scale G=2']:.2f} at `G = 2`, {a['GRPO reverse/scale G=inf']:.2f} at "
            f"`G = ∞`) than RLHF ({a['RLHF']:.2f})") in text
    r = at1.pi_b / at1.pi_c
    assert (f"π(b)/π(c) is {r['GRPO reverse/scale G=2']:.2f} for reverse/scale at `G = 2`, "
            f"{r['GRPO reverse/scale G=inf']:.2f} at `G = ∞`, {r['GRPO direct/scale G=8']:.2f} for direct/scale "
            f"at `G = 8`, against RLHF's {r['RLHF']:.2f}") in text
    assert r["GRPO reverse/scale G=2"] < r["RLHF"] < r["GRPO direct/scale G=8"]


def test_fig1_lifts_the_preferred_answer_to_at_least_one_minus_beta_over_gamma():
    d = _csv("fig1_pairwise_reverse")
    text = _section(1)
    assert "lifts any answer" not in text
    assert "lifts the preferred answer" in text
    param = [c for c in d.columns if c not in ("pi_ref_a", "pi_a")][0]
    for v, g in d.groupby(param):
        pos = g[g.pi_ref_a > 0]
        assert (pos.pi_a >= pos.pi_ref_a - 1e-9).all()              # raised above pi_ref, so b is lowered
        if v < 1:
            assert pos.pi_a.min() >= 1 - v - 1e-9


def test_fig23_threshold_against_beta_from_the_study_table():
    """The redrawn Figure 23 states one result: three stationary points exactly where pi_ref(a) <= 0.2, 0.4,
    0.6, 0.8 at beta = 1, 1.5, 2, 3 (none at 0.25, 0.5). Recomputed from docs/results/sweep_phase_k3.csv, read
    here with json (not the figure's table)."""
    import json

    study = pd.read_csv(ROOT / "docs" / "results" / "sweep_phase_k3.csv")
    a = np.array([json.loads(p)[0] for p in study.pi_ref])
    beta = np.array([float(re.search(r"beta=([0-9.]+)", k).group(1)) for k in study.key])
    found = {}
    for b in np.unique(beta):
        three = a[(beta == b) & (study.n_points == 3)]
        one = a[(beta == b) & (study.n_points == 1)]
        assert len(three) + len(one) == int((beta == b).sum())
        if len(three):
            assert not len(one) or three.max() < one.min() - 1e-9           # split by pi_ref(a) alone
            found[float(b)] = round(float(three.max()), 6)
    assert found == {1.0: 0.2, 1.5: 0.4, 2.0: 0.6, 3.0: 0.8}
    cap = _caption("fig23_phase_diagram_k3")
    assert "exactly where pi_ref(a) <= 0.2 (beta 1), 0.4 (beta 1.5), 0.6 (beta 2), 0.8 (beta 3)" in cap
    assert len(cap.split()) <= 200


def test_fig9_caption_names_each_group_of_converged_points_more_than_0_1_off():
    """The caption explains the converged points more than 0.1 from the prediction: per source, G, beta and
    penalty, how many and their residual range, recomputed here from the shipped table (the reviewer's
    count: 4 collapsed at beta = 0.5 and 8 at beta = 1 on the other stable point, small GPT, G = 64, direct)."""
    d = _csv("fig9_trained_vs_theory")
    curves = _csv("fig9_trained_vs_theory_curves")
    ok = d[d.converged.astype(bool)]
    off = ok[ok.residual.abs() > 0.1]
    cap = " ".join(_caption("fig9_trained_vs_theory").split())
    assert f"The {len(off)} converged points more than 0.1 off" in cap
    groups = off.groupby(["source", "group_size", "beta", "penalty"])
    assert len(groups) >= 1
    for (src, G, beta, pen), g in groups:
        lo, hi = f"{g.residual.min():+.2f}", f"{g.residual.max():+.2f}"
        span = lo if lo == hi else f"{lo} to {hi}"
        head = f"{len(g)} ({src}, G = {G}, beta = {beta:g}, {pen})"
        assert head in cap, head
        assert f"residual {span}" in cap.split(head, 1)[1].split(";")[0], (head, span)
        if (g.measured < 0.05).all():
            assert f"{head} collapsed to pi(a) = 0" in cap
        else:
            # each of these ends on the second stable branch: within 0.01 of that curve near its pi_ref
            other = curves[(curves.group_size == G) & (curves.beta == beta) & (curves.penalty == pen)
                           & (curves.branch == 1)]
            for p, m in zip(g.pi_ref_a, g.measured):
                near = other[(other.pi_ref_a - p).abs() < 0.02]
                assert len(near) and (near.pi_a - m).abs().min() < 0.01, (p, m)
            assert f"{head} ended at the other stable point" in cap
    assert "Figure 27 explains both" in cap
    assert "thin and faint" not in cap and "light dots" in cap


def test_fig9_caption_says_what_its_error_bars_are():
    """The bars were described as "the between-seed standard error where the study has several seeds", yet the
    small-GPT points are single seeds with bars in both rows, and the bottom row's are sqrt(SE^2 + tau^2): the
    caption now says so, and the committed table bears it out."""
    pts = pd.read_csv(ROOT / "docs" / "results" / "fig9_points.csv")
    gpt = pts[pts.source == "small GPT"]
    assert (gpt.seeds == 1).all() and (gpt.residual_se >= gpt.measured_se - 1e-15).all()
    assert (gpt.residual_se > gpt.measured_se + 1e-12).mean() > 0.5
    multi = pts[pts.seeds > 1]
    assert len(multi) and np.allclose(multi.residual_se, multi.measured_se, equal_nan=True)
    cap = _caption("fig9_trained_vs_theory")
    assert "where the study has several seeds" not in cap
    assert ("Error bars: the between-seed SE of a mean over seeds; for a single-seed small-GPT point its SE (top) "
            "and sqrt(SE^2 + tau^2)") in cap
