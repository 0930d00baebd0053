"""Figure 19 (the GRPO family): its committed CSV against the closed forms (an independent path to the
engine's curves), its caption against its CSV, and the trained points drawn where the study measured them."""

import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from _independent import bound_up

from grpo_theory import closed_form, plotting
from grpo_theory.figures import grpo_family as fam
from grpo_theory.figures._spec import FigureInputs, FigureSkipped

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
FIG = ROOT / "paper_figures"
P = fam.FAMILY_PI_REF


@pytest.fixture(scope="module")
def t():
    return {"data": pd.read_csv(FIG / "fig19_grpo_family.csv"),
            "trained": pd.read_csv(FIG / "fig19_grpo_family_trained.csv")}


def _curve(df, variant, G):
    d = df[(df.variant == variant) & (df.group_size == G)].dropna(subset=["pi_a"]).sort_values("beta")
    assert len(d) > 10, (variant, G)
    return d.beta.to_numpy(float), d.pi_a.to_numpy(float)


def test_group_scale_against_eq14_and_eq15(t):
    b, x = _curve(t["data"], "GRPO (reverse/scale)", 2)
    np.testing.assert_allclose(x, closed_form.binary_pairwise(P, b), atol=1e-7)
    b, x = _curve(t["data"], "GRPO (reverse/scale)", math.inf)
    np.testing.assert_allclose(x, closed_form.binary_large_group(P, b), atol=1e-7)


@pytest.mark.parametrize("G", [2, 4, 8, math.inf])
def test_rloo_against_its_closed_form(t, G):
    b, x = _curve(t["data"], "RLOO", G)
    np.testing.assert_allclose(x, closed_form.binary_rloo(P, b), atol=1e-7)


@pytest.mark.parametrize("G", [2, 4, 8, math.inf])
def test_shift_is_rloo_at_a_rescaled_beta(t, G):
    # RLOO at beta == shift at beta (G-1)/G, so shift at beta == Eq. 14 at beta G/(G-1) (RLOO's closed form)
    b, x = _curve(t["data"], "Dr. GRPO (reverse/shift)", G)
    scale = 1.0 if math.isinf(G) else G / (G - 1)
    np.testing.assert_allclose(x, closed_form.binary_rloo(P, b * scale), atol=1e-7)


def test_filtered_pairs_against_the_cubic(t):
    b, x = _curve(t["data"], "ties filtered", 2)
    np.testing.assert_allclose(x, closed_form.binary_pairwise_filtered(P, b), atol=1e-7)


def test_entropy_bonus_at_g2_against_its_condition(t):
    b, x = _curve(t["data"], f"entropy bonus {fam.ENTROPY_COEF:g}", 2)
    np.testing.assert_allclose(x, closed_form.binary_entropy(P, b, fam.ENTROPY_COEF), atol=1e-7)


def test_pass_at_k_exists_only_for_k_at_most_g_and_is_flat_at_k_equal_g(t):
    df = t["data"]
    assert df[(df.variant == "pass@4") & (df.group_size == 2)].empty
    for k, G in ((2, 2), (4, 4)):
        _, x = _curve(df, f"pass@{k}", G)
        np.testing.assert_allclose(x, P, atol=1e-9)        # every non-tied group has R = 1: no signal


def test_every_variant_lies_above_pi_ref_and_falls_with_beta(t):
    for (v, G), d in t["data"].dropna(subset=["pi_a"]).groupby(["variant", "group_size"]):
        x = d.sort_values("beta").pi_a.to_numpy(float)
        assert np.all(x >= P - 1e-9), (v, G)
        assert np.all(np.diff(x) <= 1e-9), (v, G)


def test_trained_points_are_the_studys_runs_on_this_question(t):
    study = pd.read_csv(ROOT / "docs" / "results" / "family_study.csv")
    pts = t["trained"]
    assert len(pts) == 7 and set(pts.config) >= {"filter_G2", "filter_G8", "rloo_G4", "passk2_G4"}
    for r in pts.itertuples():
        row = study[(study.config == r.config) & (study.seed == r.seed) & (np.abs(study.pi_ref - P) < 1e-3)]
        assert len(row) == 1 and np.isclose(row.measured.iloc[0], r.measured, rtol=0, atol=1e-12)
        # the point sits on its curve: the curve at its beta (engine, pi_ref 0.355) against its own prediction
        # (the study's engine call at its exact pi_ref 0.35498)
        d = t["data"][(t["data"].variant == r.variant) & (t["data"].group_size == r.group_size)]
        if np.isclose(d.beta, r.beta, rtol=1e-9).any():
            assert abs(d[np.isclose(d.beta, r.beta)].pi_a.iloc[0] - r.predicted) < 1e-4


def test_trained_points_are_drawn(t):
    fig = fam.render(t)
    drawn = []
    for ax in fig.axes:
        for c in ax.collections:
            if c.get_gid() == "trained":
                drawn += [tuple(o) for o in c.get_offsets()]
    assert len(drawn) == len(t["trained"])
    assert sorted(round(y, 12) for _, y in drawn) == sorted(round(y, 12) for y in t["trained"].measured)
    w, _ = fig.get_size_inches()
    assert w == pytest.approx(7.0)


def test_caption_is_the_committed_one_and_states_the_csv_numbers(t):
    cap = fam.caption(t)
    assert (FIG / "fig19_grpo_family_caption.txt").read_text().strip() == plotting.infty(cap).strip()
    err = np.abs(t["trained"].measured - t["trained"].predicted).max()
    assert f"within {bound_up(err, '.1e')}" in cap


def test_without_the_results_table_the_figure_is_skipped(tmp_path):
    with pytest.raises(FigureSkipped, match="family_study.csv"):
        fam.tables(FigureInputs(results=tmp_path))


def test_the_take_away_in_figures_md_states_the_captions_numbers(t):
    # the typed take-away may not drift from the CSV: its numbers are the caption's, rounded
    text = (ROOT / "docs" / "figures.md").read_text().split("### Figure 19")[1]
    cap = fam.caption(t)
    err = np.abs(t["trained"].measured - t["trained"].predicted).max()
    assert f"({err:.1e})".replace("e-0", "e-") in text
    d = t["data"]
    b1 = min(fam.FAMILY_BETAS, key=lambda b: abs(b - 1.0))
    g_inf = d[(d.variant == "GRPO (reverse/scale)") & (d.group_size == math.inf) & np.isclose(d.beta, b1)]
    assert f"to {g_inf.pi_a.iloc[0]:.2f} for GRPO at G = ∞" in text
    assert f"{g_inf.pi_a.iloc[0]:.3f} (GRPO" in cap


def test_coinciding_curves_are_nested_so_each_shows():
    """At G = inf three curves coincide (GRPO, the REINFORCE++ baseline, ties filtered); with two widths the two
    thin ones hid each other. Each of a coinciding set now has its own width, narrower and above the one before."""
    pairs = [("GRPO (reverse/scale)", "REINFORCE++ baseline"), ("GRPO (reverse/scale)", "ties filtered"),
             ("REINFORCE++ baseline", "ties filtered"), ("RLOO", "pass@2")]
    nest = fam._nested_widths(pairs)
    three = [nest[v] for v in ("GRPO (reverse/scale)", "REINFORCE++ baseline", "ties filtered")]
    assert three[0][0] > three[1][0] > three[2][0] and three[0][1] < three[1][1] < three[2][1]
    assert nest["RLOO"][0] > nest["pass@2"][0] and len(nest) == 5
