"""The figures of the headline results (Figures 27-29): every number a caption states, recomputed here from
the committed study tables (docs/results/), independently of the figure modules, and found in the committed
caption (paper_figures/) and in docs/figures.md. Captions stay at or under 200 words."""

import re
from pathlib import Path

import numpy as np
import pytest
import pandas as pd
from _independent import bound_up

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


#: Each figure's docs/figures.md section names its image and states these caption numbers (the tests
#: below recompute them from the tables).
SECTION_STATES = {
    27: ("fig27_seed_validation.png", ("10 of the 12 configurations", "2 of 5 seeds", "0 of 5", "4 of 80", "8 of 80")),
    28: ("fig28_smollm2_new_seed.png", ("7 of 8", "all 8", "7 of 10", "all 12", "0.0075")),
    29: ("fig29_family_study.png", ("11 configurations", "0.0097", "0.0131", "all 11")),
    30: ("fig30_trl_bias_correction.png", ("0.151", "0.156", "0.065", "9 questions")),
    31: ("fig31_certified_search.png", ("17", "93", "110", "51f4545")),
    32: ("fig32_verl_critical_beta.png", ("0.167-0.194", "24 of 24", "8 of 24", "0 of 3")),
}


@pytest.mark.parametrize("number", sorted(SECTION_STATES))
def test_docs_section_names_the_image_and_states_the_numbers(number):
    image, texts = SECTION_STATES[number]
    doc = _section(number)
    assert image in doc
    for text in texts:
        assert text in doc, text


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
    s, _, _ = _fig27_expected()
    assert int(s.loc["G64_beta1_direct", "multistable_points"]) == 15 and "15 of the 80 questions have two" in doc
    alone = pd.read_csv(RESULTS / "validate_seeds_summary.csv")
    alone = alone[(alone["mode"] == "alone") & (alone.config == "G64_beta0.5_direct")].iloc[0]
    assert alone["max"] < 0.05 and "trained alone, none does" in doc


# --- Figure 28: SmolLM2's new seed and "2*7" -------------------------------------------------------------

def test_fig28_prediction_intervals_recomputed():
    from scipy import stats

    rows = pd.concat([pd.read_csv(RESULTS / "smollm2_validate.csv"),
                      pd.read_csv(RESULTS / "smollm2_validate_seed5.csv")])
    rows = rows[np.isclose(rows.learning_rate, 3e-4) & (rows.conv_status == "converged")]
    mae = rows.assign(a=rows.error.abs()).pivot_table(index=["config", "level"], columns="seed", values="a",
                                                     aggfunc="mean")
    old, new = mae[[0, 1, 2, 3, 4]], mae[5]
    assert len(mae) == 8
    half = old.std(axis=1, ddof=1) * np.sqrt(1 + 1 / 5)
    inside = (new - old.mean(axis=1)).abs() <= stats.t.ppf(0.975, 4) * half
    inside_b = (new - old.mean(axis=1)).abs() <= stats.t.ppf(1 - 0.05 / 16, 4) * half
    assert (int(inside.sum()), int(inside_b.sum())) == (7, 8)
    (cfg, level), = [k for k, v in inside.items() if not v]
    assert (cfg, level) == ("G8_beta0.5_reverse", "sequence")
    assert old.std(axis=1, ddof=1).idxmin() == (cfg, level)          # docs: "the narrowest spread over seeds 0-4"
    hi = old.mean(axis=1)[(cfg, level)] + stats.t.ppf(0.975, 4) * half[(cfg, level)]
    cap = _caption("fig28_smollm2_new_seed")
    assert (f"Seed 5 lies inside 7 of 8 intervals (G = 8, reverse, sequence: {new[(cfg, level)]:.4f} against "
            f"{hi:.4f}) and inside all 8 Bonferroni intervals") in cap
    # the study's own table (docs/results.md) states the same row: 0.0025 against the interval 0.0016-0.0024
    assert "| G = 8, β = 0.5, reverse | sequence | 0.0020 ± 0.0001 | 0.0016–0.0024 | 0.0025 | **no** |" in \
        (ROOT / "docs" / "results.md").read_text()
    assert _words(cap) <= 200


def test_fig28_two_times_seven_under_each_schedule():
    short = pd.read_csv(RESULTS / "smollm2_validate_g2_reverse_600.csv")
    long = pd.concat([pd.read_csv(RESULTS / "smollm2_validate.csv"),
                      pd.read_csv(RESULTS / "smollm2_validate_seed5.csv")])
    pick = lambda t: t[(t.prompt == "2*7") & (t.config == "G2_beta0.5_reverse") & np.isclose(t.learning_rate, 3e-4)]  # noqa: E731
    short, long = pick(short), pick(long)
    assert (len(short), len(long)) == (10, 12) and set(long.seed) == set(range(6))
    moving = int((short.conv_status != "converged").sum())
    done = short[short.conv_status == "converged"]
    assert moving == 7 and (long.conv_status == "converged").all()
    worst = long.error.abs().max()
    assert worst < 0.0076
    cap = _caption("fig28_smollm2_new_seed")
    assert f"{moving} of 10 runs were still moving at the cap (1,800 steps)" in cap
    assert f"the 3 counted converged ended at {done.measured.min():.3f}-{done.measured.max():.3f}" in cap
    assert f"all 12 runs (seeds 0-5) converged, largest error {worst:.4f}" in cap
    assert f"pi_ref {short.pi_ref.iloc[0]:.4f}" in cap


def test_fig28_constant_rate_run():
    t = pd.read_csv(RESULTS / "smollm2_slow_escape.csv").sort_values("step")
    last = t[t.step > 0.7 * t.step.max()]                # the trainer's final 30% of the steps
    assert len(last) == int(t.in_final_window.sum())
    cap = _caption("fig28_smollm2_new_seed")
    first = int(t[t.p > 0.1].step.iloc[0])
    assert f"first passes 0.1 at step {first}" in cap and first == 590         # docs/results.md: step 590
    assert f"over the final {len(last)} steps (shaded) its mean is {last.p.mean():.4f} against " \
           f"{t.predicted.iloc[0]:.4f}" in cap
    assert f"{last.p.mean():.4f}" == "0.1724"                                   # docs/results.md states 0.1724


# --- Figure 29: the family study ------------------------------------------------------------------------

def test_fig29_against_the_studys_summary():
    rows = pd.read_csv(RESULTS / "family_study.csv")
    summary = pd.read_csv(RESULTS / "family_study_summary.csv").set_index("config")   # 3 significant digits
    err = (rows.measured - rows.predicted).abs()
    per = rows.assign(e=err).groupby("config").agg(mae=("e", "mean"), mx=("e", "max"),
                                                   mx_all=("max_abs_err_all_answers", "max"),
                                                   seeds=("seed", "nunique"), n=("e", "size"))
    assert len(per) == 11 and (per.seeds == 3).all() and (per.n == 12).all()
    per = per.loc[summary.index]
    np.testing.assert_allclose(per.mae, summary.mae, rtol=5e-3)
    np.testing.assert_allclose(per.mx, summary["max"], rtol=5e-3)
    np.testing.assert_allclose(per.mx_all, summary.max_all_answers, rtol=5e-3)
    assert summary.meets_target.all()
    cap = _caption("fig29_family_study")
    assert "11 configurations x 3 seeds x 4 questions (132 points, 400 steps a run" in cap
    assert "11 of 11 configurations meet both targets (MAE at most 0.01, largest at most 0.03)" in cap
    assert per.mx.idxmax() == "passk2_G4" and f"the largest error is {per.mx.max():.4f} (pass@2, G = 4)" in cap
    assert per.mae.idxmax() == "entropy_L2" and f"to {per.mae.max():.4f}" in cap
    assert per.mae.min() < 2e-8 and "the MAEs 10^-8 to" in cap                 # pass@4 at G = 4: 1.4e-8
    exact = per[per.mx < 1e-6]
    assert sorted(exact.index) == ["filter_G2", "passk4_G4"] and "2 configurations are exact" in cap
    assert exact.mx.max() < 4.5e-7 and "(largest error 4 x 10^-7)" in cap
    two = per[per.index.str.endswith("_L2")]
    assert f"is {two.mx_all.max():.4f}." in cap and len(two) == 3
    # pass@4 at G = 4 carries no signal: the policy stays at pi_ref
    p4 = rows[rows.config == "passk4_G4"]
    assert np.allclose(p4.predicted, p4.pi_ref, atol=1e-12)
    assert _words(cap) <= 200


def test_fig29_table_and_docs():
    fig = pd.read_csv(FIGS / "fig29_family_study.csv")
    assert len(fig) == 132 and fig.config.nunique() == 11
    doc = _section(29)
    assert len(pd.read_csv(FIGS / "fig19_grpo_family_trained.csv")) == 7 and "Figure 19 draws 7 runs" in doc


# --- Figure 30: TRL's use_bias_correction_kl -------------------------------------------------------------

def _trl_gap(p):
    """P(correct) under the direct minus the reverse penalty at pi_ref(correct) = p, with the objective
    written out here (G = 8, beta = 0.5, TRL's std: ddof 1, eps 1e-4), not read from a TRL config."""
    from grpo_theory import Objective, Question, stationary_policy

    q = Question([p, 1 - p], rewards=[1.0, 0.0])
    return float(np.subtract(*[stationary_policy(q, Objective(group_size=8, beta=0.5, penalty=pen, std_ddof=1,
                                                                std_eps=1e-4)).pi[0]
                               for pen in ("direct", "reverse")]))


def test_fig30_gap_against_the_studys_own_numbers_and_an_independent_solve():
    import json

    from scipy.optimize import brentq, minimize_scalar

    rows = pd.read_csv(RESULTS / "trl_results.csv")
    wide = rows.pivot(index="question", columns="penalty", values="predicted")
    gap = wide.direct - wide.reverse
    study = json.loads((RESULTS / "trl_settings_gap.json").read_text())     # written by the study itself
    assert gap.abs().max() == pytest.approx(study["max_abs_gap"], abs=1e-6)
    assert gap.abs().mean() == pytest.approx(study["mean_abs_gap"], abs=1e-6)
    cap = _caption("fig30_trl_bias_correction")
    assert (f"over the 12 questions {gap.min():.3f}-{gap.max():.3f} (mean {gap.mean():.3f})") in cap
    top = minimize_scalar(lambda p: -_trl_gap(p), bounds=(0.1, 0.3), method="bounded", options=dict(xatol=1e-4))
    assert f"predicted at most {-top.fun:.3f} (at pi_ref {top.x:.2f})" in cap
    cross = brentq(_trl_gap, 0.02, 0.1, xtol=1e-6)
    assert f"changing sign at pi_ref {cross:.3f}" in cap
    assert f"({_trl_gap(1e-3):.2f} at pi_ref 0.001)" in cap
    err = (rows.measured - rows.predicted).abs()
    for flag in (True, False):
        assert f"{err[rows.setting == f'use_bias_correction_kl={flag}'].mean():.4f} ({flag})" in cap
    assert f"largest error {err.max():.4f}" in cap
    unconv = rows[rows.conv_status != "converged"]
    assert len(unconv) == 3 and set(unconv.penalty) == {"direct"}
    assert "3 of the 24 measurements had not converged (all under True)" in cap
    ok = rows.groupby("question").conv_status.apply(lambda s: (s == "converged").all())
    m = rows.pivot(index="question", columns="penalty", values="measured")
    within = ((m.direct - m.reverse) - gap)[ok].abs().max()
    assert f"On the {int(ok.sum())} questions converged in both settings the measured gap is within " \
           f"{bound_up(within, '.4f')}" in cap
    assert _words(cap) <= 200


def test_fig30_docs():
    doc = _section(30)
    rows = pd.read_csv(RESULTS / "trl_results.csv")
    assert f"the smallest π_ref is {rows.pi_ref_correct.min():.3f}" in doc and rows.pi_ref_correct.min() > 0.065


# --- Figure 31: certified search against multi-start ------------------------------------------------------

def test_fig31_counts_from_the_two_sweeps():
    import json

    cert = pd.read_csv(RESULTS / "sweep_phase_k3.csv")
    ms = pd.read_csv(RESULTS / "sweep_phase_k3_multistart.csv")
    assert len(cert) == len(ms) == 216 and cert.exhaustive.all() and not ms.exhaustive.any()
    m = cert.merge(ms, on="key", suffixes=("_c", "_m"))
    assert len(m) == 216
    m["beta"] = [float(re.search(r"beta=([0-9.]+)", k).group(1)) for k in m.key]
    three = m[m.n_points_c == 3]
    one = m[m.n_points_c == 1]
    assert len(three) + len(one) == 216 and (len(three), len(one)) == (110, 106)
    # every certified one-point case is the vertex a; every three-point case has it as a stable limit too
    vertex = lambda s: any(p[0] > 0.999 for p in json.loads(s))           # noqa: E731
    assert all(map(vertex, one.stable_policies_c)) and all(map(vertex, three.stable_policies_c))
    assert not any(map(vertex, three.stable_policies_m)) and (three.n_stable_m == 1).all()
    found = int((three.n_points_m >= 2).sum())
    assert (found, len(three) - found) == (17, 93)
    cap = _caption("fig31_certified_search")
    assert "finds three in 110 cases" in cap and "and one, the vertex, in 106" in cap
    assert "reported at most 2 and never the vertex as a limit in those 110 cases" in cap
    assert "it found the saddle in 17 and missed it in 93" in cap
    for b, g in three.groupby("beta"):
        assert f"{int((g.n_points_m >= 2).sum())} of {len(g)} at beta = {b:g}" in cap
    # the thresholds: three points exactly where pi_ref(a) <= 0.2/0.4/0.6/0.8 at beta = 1/1.5/2/3
    pa = np.array([json.loads(s)[0] for s in m.pi_ref_c])
    for b, edge in ((1.0, 0.2), (1.5, 0.4), (2.0, 0.6), (3.0, 0.8)):
        sel = np.isclose(m.beta, b)
        assert ((m.n_points_c[sel] == 3) == (pa[sel] <= edge + 1e-9)).all()
    assert "pi_ref(a) <= 0.2/0.4/0.6/0.8 at beta = 1/1.5/2/3" in cap
    # docs/results.md states the same counts
    results = " ".join((ROOT / "docs" / "results.md").read_text().split())
    assert "found the saddle in 17 cases and missed it in 93" in results
    assert _words(cap) <= 200


def test_fig31_docs():
    assert "sweep_phase_k3_multistart.csv" in (RESULTS / "README.md").read_text()


# --- Figure 32: verl's critical beta ----------------------------------------------------------------------

def _interior_stable(p, G, beta, eps):
    """Whether the binary question at pi_ref(correct) = p keeps a stable interior point under verl's clamped
    k3 in the loss (objective written out here: ddof 1, log-ratio clamp 20, value clamp 10), from the
    two-class exhaustive scan of stationary_points, not from clamp_critical_beta's formula."""
    from grpo_theory import Objective, Question, stationary_points

    obj = Objective(beta=beta, group_size=G, std_ddof=1, std_eps=eps, kl_estimator="k3", kl_log_ratio_clamp=20.0,
                    kl_value_clamp=10.0)
    pts = stationary_points(Question([p, 1 - p], rewards=[1.0, 0.0]), obj)
    return any(1e-9 < pt.pi[1] < 1 - 1e-9 for pt in pts.stable)


def test_fig32_critical_beta_brackets_the_loss_of_the_interior_point():
    cur = pd.read_csv(FIGS / "fig32_verl_critical_beta.csv")
    assert (cur.default_beta == 0.001).all()            # verl's kl_loss_coef default, through read_verl_config
    for G, p in ((2, 0.01), (64, 0.99), (64, 0.01)):
        row = cur[(cur.group_size == G) & np.isclose(cur.pi_ref, p)].iloc[0]
        assert not _interior_stable(p, G, 0.98 * row.critical_beta, 1e-6)
        assert _interior_stable(p, G, 1.02 * row.critical_beta, 1e-6)
    # the KL study's own column (its objective: eps 1e-4), on one of its questions
    study = pd.read_csv(RESULTS / "kl_study.csv")
    q = study[(study.config == "k3_low_var_kl_1.25x_critical") & (study.seed == 0) & (study.question == 0)
              & study.rewarded].iloc[0]
    assert not _interior_stable(q.pi_ref, 8, 0.98 * q.critical_beta, 1e-4)
    assert _interior_stable(q.pi_ref, 8, 1.02 * q.critical_beta, 1e-4)
    cap = _caption("fig32_verl_critical_beta")
    g2, g64 = cur[cur.group_size == 2].critical_beta, cur[cur.group_size == 64].critical_beta
    assert f"{g2.min():.3f}-{g2.max():.3f} at G = 2, {g64.min():.2f}-{g64.max():.2f} at G = 64" in cap
    crit = study[study.config == "k3_low_var_kl_1.25x_critical"].critical_beta
    assert f"have {crit.min():.3f}-{crit.max():.3f}, {crit.min() / 1e-3:.0f}-{crit.max() / 1e-3:.0f} times" in cap
    assert _words(cap) <= 200


def test_fig32_training_counts_from_the_kl_study():
    study = pd.read_csv(RESULTS / "kl_study.csv")
    cap = _caption("fig32_verl_critical_beta")

    def per_question(config):
        d = study[study.config == config]
        g = d.groupby(["seed", "question"])
        out = pd.DataFrame({"min": g.measured.min(), "pred": g.predicted.min(),
                            "ratio": g.beta.first() / g.critical_beta.first(),
                            "rewarded": d[d.rewarded.astype(bool)].set_index(["seed", "question"]).measured})
        return out

    below = per_question("k3_low_var_kl_0.8x_critical")
    above = per_question("k3_low_var_kl_1.25x_critical")
    slow = per_question("k3_low_var_kl_1.25x_critical_lr3e-4")
    far = per_question("k3_low_var_kl_2.5x_critical")
    alone = per_question("alone_k3_low_var_kl_1.25x_critical_lr3e-4")
    n = lambda d: f"{int((d['min'] < 0.01).sum())} of {len(d)}"           # noqa: E731
    assert [n(d) for d in (below, above, slow, far, alone)] == ["24 of 24", "24 of 24", "24 of 24", "8 of 24", "0 of 3"]
    assert (below.pred == 0).all() and (above.pred > 0).all()
    assert f"({below.ratio.min():.2f}-{below.ratio.max():.2f} x) 24 of 24 collapsed (below 0.01), as predicted " \
           f"({int((below.rewarded < 0.01).sum())} losing the rewarded answer)" in cap
    assert f"keeps the smaller answer at {above.pred.min():.3f}-{above.pred.max():.2f}, yet at " \
           f"{above.ratio.min():.2f}-{above.ratio.max():.2f} x 24 of 24 ended below 0.01 (at most " \
           f"{above['min'].max():.0e}; {int((above.rewarded < 0.01).sum())} losing the rewarded answer)" in cap
    assert f"24 of 24 at lr 3e-4, and 8 of 24 at {far.ratio.min():.1f}-{far.ratio.max():.1f} x" in cap
    assert "trained alone at lr 3e-4, 0 of 3" in cap
    # the three seeds trained alone share one beta ratio, so the figure draws them side by side and says so
    assert alone.ratio.round(9).nunique() == 1
    assert f"(its {len(alone)} seeds, at one ratio, drawn 3% apart)" in cap


def test_fig32_docs():
    doc = _section(32)
    study = pd.read_csv(RESULTS / "kl_study.csv")
    m = study[study.config == "k3_low_var_kl_1.25x_critical"].edge_margin
    assert f"{m.min():.2f}-{m.max():.2f} nats above the clamp edge" in doc
    cur = pd.read_csv(FIGS / "fig32_verl_critical_beta.csv").pivot(index="pi_ref", columns="group_size",
                                                                    values="critical_beta")
    assert (np.diff(cur.to_numpy(), axis=1) > 0).all() and "it grows with G" in doc


# --- all six: registered, skipped without their tables, caption as committed ------------------------------

@pytest.mark.parametrize("number,table", [(27, "validate_seeds.csv"), (28, "smollm2_validate.csv"),
                                          (29, "family_study.csv"), (30, "trl_results.csv"),
                                          (31, "sweep_phase_k3.csv"), (32, "kl_study.csv")])
def test_new_figure_skips_without_its_table_and_its_caption_is_the_committed_one(number, table, tmp_path):
    from grpo_theory import plotting
    from grpo_theory.figures import FIGURES, FigureInputs, FigureSkipped, read_tables

    spec, = [s for s in FIGURES if s.number == number]
    with pytest.raises(FigureSkipped, match=re.escape(table)):
        spec.tables(FigureInputs(results=tmp_path))
    committed = read_tables(spec, FIGS)
    assert plotting.infty(spec.caption_text(committed)).strip() == _caption(spec.stem).strip()
