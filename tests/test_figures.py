"""Figure data (the CSVs that `grpo-theory figures` writes), checked against independent paths:
closed-form curves against the numerical solver and vice versa; plus a rendering smoke test."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grpo_theory import Objective, Question, closed_form, log_pooling, stationary_points, stationary_policy
from grpo_theory.figures import build_figures

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"     # the committed study tables


@pytest.fixture(scope="session")
def figdir(tmp_path_factory):
    """Every figure's tables and captions as `grpo-theory figures` writes them, without the PNG/PDF files:
    saving both formats costs more than the numbers (two constrained-layout draws per format). Every
    figure is still drawn, once, by test_every_figure_has_csv_caption_and_draws; the build's PNG/PDF
    writing is checked by test_output_is_deterministic and the resume test below, and the committed images
    against this code by test_committed_images_were_drawn_by_this_code."""
    out = tmp_path_factory.mktemp("figs")
    build_figures(out, progress=False, results=RESULTS, images=False)
    return out


def _csv(figdir, stem):
    return pd.read_csv(figdir / f"{stem}.csv")


def _solve(p, obj):
    return stationary_policy(Question([p, 1 - p], rewards=[1.0, 0.0]), obj).pi[0]


@pytest.mark.parametrize("stem,obj_for", [
    ("fig1_pairwise_reverse", lambda b: Objective(beta=b, group_size=2)),
    ("fig2_large_group_reverse", lambda b: Objective(beta=b, group_size=math.inf)),
    ("fig3_pairwise_direct", lambda b: Objective(beta=b, group_size=2, penalty="direct")),
])
def test_closed_form_curves_agree_with_the_solver(figdir, stem, obj_for):
    df = _csv(figdir, stem)
    param = df.columns[0]
    sample = df[(df.pi_ref_a > 0) & (df.pi_ref_a < 1)].iloc[::37]
    for row in sample.itertuples():
        assert _solve(row.pi_ref_a, obj_for(getattr(row, param))) == pytest.approx(row.pi_a, abs=1e-10)


def test_finite_group_curves_match_the_closed_forms_at_both_ends_and_grow_with_g(figdir):
    df = _csv(figdir, "fig4_finite_group")
    g2 = df[df.group_size == 2]
    np.testing.assert_allclose(g2.pi_a, closed_form.binary_pairwise(g2.pi_ref_a, 0.5), atol=1e-10)
    ginf = df[np.isinf(df.group_size)]
    np.testing.assert_allclose(ginf.pi_a, closed_form.binary_large_group(ginf.pi_ref_a, 0.5), atol=1e-10)
    wide = df.pivot(index="pi_ref_a", columns="group_size", values="pi_a")
    assert np.all(np.diff(wide.to_numpy(), axis=1) > 0)          # more members, more mass on a


def test_convergence_in_g_is_first_order(figdir):
    fits = _csv(figdir, "fig5_convergence_in_group_size_fit")
    assert np.all(fits.slope.between(-1.15, -0.9)), fits


def test_all_variants_identities(figdir):
    df = _csv(figdir, "fig6_all_variants")
    for G in (2, 8, math.inf):
        d = df[(df.method == "GRPO direct/shift") & (df.group_size == G)]
        np.testing.assert_allclose(d.pi_a, closed_form.binary_shift_direct(0.3, d.beta, G), atol=1e-10)
    rlhf = df[df.method == "RLHF"]
    np.testing.assert_allclose(rlhf.pi_a, [log_pooling([0.3, 0.7], [1, 0], b)[0] for b in rlhf.beta], atol=1e-12)
    # G = 2 direct/scale is log pooling too here (P_2(a) - P_2(b) = reward gap = 1)
    d = df[(df.method == "GRPO direct/scale") & (df.group_size == 2)]
    np.testing.assert_allclose(d.pi_a, rlhf.pi_a.to_numpy(), atol=1e-10)


def test_region_map_counts_match_the_exhaustive_solver(figdir):
    region = _csv(figdir, "fig7_non_uniqueness_region")
    rng = np.random.default_rng(0)
    # sample away from the boundary curve, where a grid cell could straddle it
    clear = region[np.abs(region.h_at_turning_point) > 0.05]
    for row in clear.iloc[rng.choice(len(clear), 25, replace=False)].itertuples():
        pts = stationary_points(Question([row.pi_ref_a, 1 - row.pi_ref_a], rewards=[1, 0]),
                                Objective(beta=row.beta, group_size=math.inf, penalty="direct"))
        assert len(pts) == row.n_stationary_points


def test_simplex_paths_are_stationary(figdir):
    df = _csv(figdir, "fig8_simplex_paths")
    assert df.residual.max() < 1e-10
    np.testing.assert_allclose(df[["pi_a", "pi_b", "pi_c"]].sum(axis=1), 1.0, atol=1e-12)
    # NLHF, independently: pi ∝ pi_ref exp(M pi / beta) with M the pairwise preference of rewards (1, 0.5, 0)
    M = np.array([[0.5, 1.0, 1.0], [0.0, 0.5, 1.0], [0.0, 0.0, 0.5]])
    for row in df[df.method == "NLHF"].iloc[::11].itertuples():
        pi = np.array([row.pi_a, row.pi_b, row.pi_c])
        target = np.array([0.2, 0.3, 0.5]) * np.exp(M @ pi / row.beta)
        np.testing.assert_allclose(pi, target / target.sum(), atol=1e-9)
    assert np.isclose(df.beta, 1.0).any()                    # the dots marked beta = 1 are at beta = 1


def test_every_figure_has_csv_caption_and_draws(figdir):
    """Every figure (Figure 9 needs --trained) has its table and caption, and draws from its fresh tables
    (one Agg draw: the layout, text and artists that savefig draws, without writing the files); the
    committed folder holds its PNG and PDF."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from grpo_theory import plotting
    from grpo_theory.figures import FIGURES, read_tables

    committed = Path(__file__).resolve().parents[1] / "paper_figures"
    drawn = []
    for spec in FIGURES:
        tables = read_tables(spec, figdir)
        if spec.number == 9:
            assert not tables                 # skipped without --trained (test_trained_points_figure_... draws it)
            continue
        assert tables and (figdir / f"{spec.stem}_caption.txt").is_file(), spec.stem
        with matplotlib.rc_context(plotting.STYLE):
            figs = spec.render(tables)
            for fig in figs if isinstance(figs, tuple) else (figs,):
                FigureCanvasAgg(fig)
                fig.canvas.draw()
                assert fig.axes and fig.canvas.get_renderer().width > 100
        pngs = sorted(committed.glob(f"{spec.stem}*.png"))
        assert pngs and len(sorted(committed.glob(f"{spec.stem}*.pdf"))) == len(pngs), spec.stem
        png = pngs[0].read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, pngs[0].name
        drawn.append(spec.number)
    assert len(drawn) == len(FIGURES) - 1


def test_output_is_deterministic(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    build_figures(a, only=[1], progress=False)
    build_figures(b, only=[1], progress=False)
    assert {f.suffix for f in a.iterdir()} >= {".png", ".pdf", ".csv", ".txt"}
    png = next(a.glob("fig1_*.png")).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    for f in a.iterdir():
        assert f.read_bytes() == (b / f.name).read_bytes(), f.name


def test_trained_points_figure_renders_from_a_csv(tmp_path):
    measured = pd.DataFrame(dict(group_size=[2, 2, 64], beta=[0.5, 1.0, 0.5], pi_ref_a=[0.3, 0.5, 0.3],
                                 measured=[0.71, 0.70, 0.85], measured_se=[0.01, 0.01, 0.01]))
    csv = tmp_path / "m.csv"
    measured.to_csv(csv, index=False)
    files = build_figures(tmp_path / "out", only=[9], trained=csv, progress=False)
    assert {f.suffix for f in files} >= {".png", ".pdf", ".csv"}


def test_unknown_figure_number_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no figure numbered"):
        build_figures(tmp_path, only=[42], progress=False)


def test_the_retired_figure_10_says_where_it_went(tmp_path):
    # merged into Figure 7 (issue 24): asking for it names the panels and the numbers that exist
    with pytest.raises(ValueError, match=r"panels \(c\) and \(d\) of Figure 7.*numbered 1-9, 11-"):
        build_figures(tmp_path, only=[10], progress=False)


def test_phase_portrait_paths_split_at_the_root_of_h(figdir):
    """Figure 7(d), direct/scale at G = inf: a path runs into the vertex exactly when it starts above
    the upper root of the closed-form h (brentq on [x*, 1)), and settles at h's lower root otherwise;
    (c) reverse/scale at G = 8: every path ends at the one stationary point."""
    from scipy.optimize import brentq

    paths = pd.read_csv(figdir / "fig7_non_uniqueness_paths.csv")
    d = paths[paths.variant == "direct/scale, G = inf"]
    beta = float(d.beta.iloc[0])
    xs = float(closed_form.large_group_direct_turning_point(beta))
    h = lambda x: float(closed_form.large_group_direct_h(x, 0.2, beta))        # noqa: E731
    upper = brentq(h, xs, 1 - 1e-15, xtol=1e-15)
    lower = brentq(h, 1e-12, xs, xtol=1e-15)
    for _, r in d.groupby("start"):
        r = r.sort_values("t")
        x0 = 1 / (1 + math.exp(-r.start_logit.iloc[0]))
        if x0 > upper:
            assert r.destination.iloc[0] == "vertex"
            assert r.logit.iloc[-1] > r.logit.iloc[0] + 1          # still climbing towards the vertex
        else:
            assert r.destination.iloc[0] == "interior"
            assert r.pi_a.iloc[-1] == pytest.approx(lower, abs=1e-6)
    rev = paths[paths.variant == "reverse/scale, G = 8"]
    ends = rev[rev.t == rev.t.max()].pi_a
    assert ends.max() - ends.min() < 1e-6 and (rev.destination == "interior").all()
    assert ends.iloc[0] == pytest.approx(_solve(0.2, Objective(beta=beta, group_size=8)), abs=1e-6)


def test_simplex_flows_end_at_stable_points(figdir):
    traj = _csv(figdir, "fig11_simplex_flows")
    pts = pd.read_csv(figdir / "fig11_simplex_flows_stationary.csv")
    stable = pts[pts.stable == True][["pi_a", "pi_b", "pi_c"]].to_numpy()  # noqa: E712
    ends = traj[traj.t == traj.t.max()][["pi_a", "pi_b", "pi_c"]].to_numpy()
    dist = np.min(np.abs(ends[:, None, :] - stable[None, :, :]).max(axis=2), axis=1)
    assert np.all(dist < 1e-3)


def test_proximal_figure_cycle_satisfies_mrouehs_recurrence(figdir):
    """f(x) = sigmoid(logit p + 1/(beta sqrt(x (1-x)))) maps each cycle point to the other."""
    marks = pd.read_csv(figdir / "fig12_proximal_map_points.csv")
    p, beta = 3e-3, 0.5

    def f(x):
        return 1 / (1 + np.exp(-(np.log(p / (1 - p)) + 1 / (beta * np.sqrt(x * (1 - x))))))

    cyc = marks[marks.kind == "2-cycle"].pi_a.to_numpy()
    assert len(cyc) == 2
    assert f(cyc[0]) == pytest.approx(cyc[1], abs=1e-9) and f(cyc[1]) == pytest.approx(cyc[0], abs=1e-9)
    fps = marks[marks.kind == "fixed point"]
    for x in fps.pi_a:
        assert f(x) == pytest.approx(x, abs=1e-10)
    flow_stable = fps[fps.flow_stable == True]  # noqa: E712
    assert len(flow_stable) == 1 and not bool(flow_stable.iloc[0].map_stable)


def test_committed_figure_data_is_what_the_code_produces(figdir):
    """paper_figures/*.csv must be regenerated when the code changes (as docs/derivations.md is),
    within the tolerance under which `grpo-theory figures` leaves a committed table alone."""
    from pathlib import Path

    from grpo_theory.figures import CSV_ATOL, CSV_RTOL, same_table

    committed = Path(__file__).resolve().parents[1] / "paper_figures"
    fresh = sorted(figdir.glob("*.csv"))
    assert fresh
    for f in fresh:
        old = committed / f.name
        assert old.exists(), f"{f.name} is not committed: run `grpo-theory figures`"
        assert same_table(pd.read_csv(f), pd.read_csv(old), CSV_RTOL, CSV_ATOL), \
            f"{f.name} is stale: run `grpo-theory figures`"


def test_committed_images_were_drawn_by_this_code():
    """The PNG/PDFs in paper_figures/ are redrawn only when the drawing code changes: its hash must match."""
    import json
    from pathlib import Path

    from grpo_theory.figures import FIGURES, FINGERPRINT, code_fingerprint

    drawn_by = json.loads((Path(__file__).resolve().parents[1] / "paper_figures" / FINGERPRINT).read_text())
    specs = {s.key: s for s in FIGURES}
    stale = sorted(n for n, h in drawn_by.items() if n not in specs or h != code_fingerprint(specs[n]))
    assert not stale, f"figures {stale} were drawn by older code: run `grpo-theory figures` and commit"


def test_a_second_run_rewrites_nothing_and_a_killed_run_resumes(tmp_path):
    """Main job twice: the second writes no file. A run killed part-way: --resume builds only the rest."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "figs"
    build_figures(out, only=[1, 2], progress=False)
    assert build_figures(out, only=[1, 2], progress=False) == []
    # kill a real run of the CLI once its first figure is on disk
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "grpo_theory.cli", "figures", "--out", str(run),
                             "--only", "1", "4", "5"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not (run / ".figures_done.json").exists() and time.time() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    import json

    done = set(json.loads((run / ".figures_done.json").read_text()))
    assert 1 in done and done != {1, 4, 5}, f"the run was not killed part-way: {done}"
    before = {f.name: f.stat().st_mtime_ns for f in run.glob("fig1_*")}
    written = build_figures(run, only=[1, 4, 5], progress=False, resume=True)
    assert not any(p.name.startswith("fig1_") for p in written)
    assert {f.name: f.stat().st_mtime_ns for f in run.glob("fig1_*")} == before
    for n in {4, 5} - done:
        assert list(run.glob(f"fig{n}_*.png")), n
    assert json.loads((run / ".figures_done.json").read_text()) == [1, 4, 5]


def test_reward_kl_frontier_is_the_best_reward_at_each_kl(figdir):
    """Figure 15: the frontier at a point's KL, checked by maximising E_pi r subject to KL(pi||pi_ref) <= k
    directly (SLSQP on the simplex, no log pooling); every GRPO point lies on or below it."""
    from scipy.optimize import minimize

    from grpo_theory.figures.simplex_paths import SIMPLEX_PI_REF, SIMPLEX_REWARDS

    df = _csv(figdir, "fig15_reward_kl_frontier")
    assert (df.reward_deficit > -1e-9).all()
    ref, r = np.array(SIMPLEX_PI_REF), np.array(SIMPLEX_REWARDS)
    sample = df[(df.method != "RLHF") & (df.kl_direct > 1e-3) & (df.kl_direct < 1.4)].iloc[::17]
    assert len(sample) >= 5
    for row in sample.itertuples():
        def neg_reward(z):
            p = np.exp(z - z.max())
            return -float(p / p.sum() @ r)

        def kl_slack(z, k=row.kl_direct):
            p = np.exp(z - z.max())
            p = p / p.sum()
            return k - float(np.sum(p * np.log(p / ref)))
        best = max((minimize(neg_reward, np.log(ref) + s * r, constraints=[{"type": "ineq", "fun": kl_slack}],
                             method="SLSQP", options={"ftol": 1e-14, "maxiter": 500}) for s in (0.5, 2.0, 5.0)),
                   key=lambda res: -res.fun if kl_slack(res.x) > -1e-9 else -np.inf)
        assert -best.fun == pytest.approx(row.frontier_reward, abs=2e-7)


def test_frameworks_figure_matches_hand_built_objectives(figdir):
    """Figure 18: each framework's curve against an Objective written by hand from the cited defaults (not
    through the config readers), and the collapses against the unclamped root lying past the clamp edge."""
    df = _csv(figdir, "fig18_frameworks_same_beta")
    hand = {
        "TRL 1.9 (k3 in the loss)": lambda b: Objective(beta=b, group_size=8, penalty="reverse", std_ddof=1,
                                                        std_eps=1e-4),
        "TRL 1.16 (ratio x k3 in the loss)": lambda b: Objective(beta=b, group_size=8, penalty="direct", std_ddof=1,
                                                                 std_eps=1e-4),
        "verl GRPO recipe (low_var_kl, clamped)": lambda b: Objective(beta=b, group_size=8, penalty="reverse",
                                                                      std_ddof=1, std_eps=1e-6),
        "OpenRLHF group_norm (k1 in the advantage, clamped)": lambda b: Objective(beta=b, group_size=8,
                                                                                  penalty="direct", std_ddof=1,
                                                                                   std_eps=1e-9),
    }
    for row in df[df.framework != "RLHF (log pooling)"].iloc[::23].itertuples():
        q = Question([row.pi_ref_correct, 1 - row.pi_ref_correct], rewards=[1.0, 0.0])
        unclamped = stationary_policy(q, hand[row.framework](row.beta)).pi
        if row.collapse:
            assert row.pi_wrong == 0.0
            edge = (1 - row.pi_ref_correct) / 13.6108   # rho - log rho = 11: where k3 reaches the clamp 10
            if row.framework.startswith("verl"):
                assert unclamped[1] < edge                                   # the root lies in the clamped region
            else:                                                            # k1 clamped at 10: lr < -10
                assert unclamped[1] < (1 - row.pi_ref_correct) * math.exp(-10)
        else:
            assert row.pi_wrong == pytest.approx(unclamped[1], abs=1e-9, rel=1e-7)


def test_figure9_curves_carry_every_stable_branch_and_residuals():
    """Figure 9's curves: reverse at G = 2 is Eq. 14 (closed form); direct at G = 64, beta = 1 has a
    second stable branch exactly where the exhaustive scan finds two stable points, above the first."""
    from grpo_theory import closed_form, stationary_points
    from grpo_theory.figures.trained_vs_theory import trained_curves, trained_points

    pts = pd.DataFrame(dict(group_size=[2, 64], beta=[0.5, 1.0], penalty=["reverse", "direct"],
                            pi_ref_a=[0.3, 0.15], measured=[0.7, 0.55], measured_se=[0.01, 0.01]))
    m = trained_points(pts)
    assert np.allclose(m.residual, m.measured - m.predicted) and (m.residual_se == m.measured_se).all()
    cur = trained_curves(pts, n=40)
    rev = cur[(cur.penalty == "reverse")]
    np.testing.assert_allclose(rev.pi_a, closed_form.binary_pairwise(rev.pi_ref_a.to_numpy(), 0.5), atol=1e-6)
    assert (rev.branch == 0).all()
    d = cur[cur.penalty == "direct"]
    upper = d[d.branch == 1]
    assert len(upper) > 0
    for p in upper.pi_ref_a.to_numpy()[[0, -1]]:
        q = Question([p, 1 - p], rewards=[1, 0])
        assert stationary_points(q, Objective(beta=1.0, group_size=64, penalty="direct")).multistable
    lower = d[d.branch == 0].set_index("pi_ref_a").pi_a
    assert (upper.set_index("pi_ref_a").pi_a > lower.loc[upper.pi_ref_a]).all()
    with pytest.raises(ValueError, match="lacks columns"):
        trained_points(pts.drop(columns="measured_se"))


def test_noisy_verifier_figure_against_brute_force_enumeration(figdir):
    """Figure 17: at points of the curves and of the map the expected gradient vanishes, and changes
    sign across them (the point is a stable zero), with P_G enumerated over every group and every
    verifier outcome (G = 2, 8) or from the SPEC's large-G form with the noise in sigma (G = inf)."""
    import reference_impl as ri

    curves = _csv(figdir, "fig17_noisy_verifier")
    grid = _csv(figdir, "fig17_noisy_verifier_map")
    levels = [0.0, 1.0]

    def flow(pi_a, pi_ref_a, beta, G, eps):
        probs = [[eps, 1 - eps], [1 - eps, eps]]
        pi, ref = np.array([pi_a, 1 - pi_a]), np.array([pi_ref_a, 1 - pi_ref_a])
        P = (ri.large_group_preference(levels, probs, pi) if math.isinf(G)
             else ri.brute_force_preference(levels, probs, pi, int(G)))
        g = P - beta * (1 - ref / pi)                               # reverse penalty, SPEC
        return float(pi[0] * (g[0] - pi @ g))

    points = []
    for G, eps, p in [(2, 0.2, 0.3), (8, 0.1, 0.5), (math.inf, 0.3, 0.1)]:
        d = curves[(curves.group_size == G) & np.isclose(curves.noise, eps)]
        row = d.iloc[np.argmin(np.abs(d.pi_ref_a - p))]
        points.append((row.pi_a, row.pi_ref_a, 0.5, G, eps))
    row = grid[grid.group_size == 8].iloc[40]
    points.append((row.pi_a, 0.2, row.beta, 8, row.noise))
    for pi_a, ref_a, beta, G, eps in points:
        assert abs(flow(pi_a, ref_a, beta, G, eps)) < 1e-6, (G, eps)
        assert flow(pi_a - 0.01, ref_a, beta, G, eps) > 0 > flow(pi_a + 0.01, ref_a, beta, G, eps)
    # the take-away: at G = inf a clean verifier's curve does not move with the reward gap, a noisy one does
    clean = curves[(curves.group_size == math.inf) & (curves.noise == 0)].pi_a.to_numpy()
    noisy = curves[(curves.group_size == math.inf) & np.isclose(curves.noise, 0.3)].pi_a.to_numpy()
    assert np.all(clean > noisy + 1e-3)


def test_trainer_conventions_figure_against_brute_force_enumeration(figdir):
    """Figure 13: under TRL's convention (ddof 1, eps 1e-4) the expected gradient, with P_G enumerated
    over every group by Eq. 2 with that std (tests/reference_impl), vanishes at the curve's points and
    changes sign across them, for both penalties; the trained points are the committed ones."""
    import reference_impl as ri

    curves = _csv(figdir, "fig13_trainer_conventions")
    for G, penalty, p in [(2, "reverse", 0.3), (2, "direct", 0.15), (8, "direct", 0.1)]:
        d = curves[(curves.group_size == G) & (curves.penalty == penalty) & (curves.std_ddof == 1)]
        row = d.iloc[np.argmin(np.abs(d.pi_ref_a - p))]

        def flow(pi_a, row=row, G=G, penalty=penalty):
            pi, ref = np.array([pi_a, 1 - pi_a]), np.array([row.pi_ref_a, 1 - row.pi_ref_a])
            P = ri.brute_force_preference([0.0, 1.0], [[0, 1], [1, 0]], pi, G, ddof=1, eps=1e-4)
            pen = 1 - ref / pi if penalty == "reverse" else np.log(pi / ref) + 1
            g = P - 0.5 * pen
            return float(pi[0] * (g[0] - pi @ g))
        assert abs(flow(row.pi_a)) < 1e-6, (G, penalty)
        assert flow(row.pi_a - 0.01) > 0 > flow(row.pi_a + 0.01)
    pts = _csv(figdir, "fig13_trainer_conventions_points")
    trl, ours = pd.read_csv(RESULTS / "trl_results.csv"), pd.read_csv(RESULTS / "validate_seeds.csv")
    ours = ours[ours.config.isin(["TRL_std_G2", "TRL_std_G8"]) & (ours.prediction == "trainer")]
    assert len(pts) == len(trl) + len(ours)                # every measured point of the two tables given
    np.testing.assert_allclose(pts.measured, np.concatenate([trl.measured, ours.measured]), atol=1e-12)


def test_token_vs_sequence_figure_replots_the_study_it_is_given(figdir):
    """Figure 14 replots the tree study's table unchanged: every trained point, its token-level
    prediction and the sequence-level one (what the table says is checked in test_results_tables)."""
    fig = _csv(figdir, "fig14_token_vs_sequence")
    study = pd.read_csv(RESULTS / "tree_study.csv")
    assert len(fig) == len(study)
    np.testing.assert_allclose(fig.predicted_token_level, study.predicted, atol=1e-9)
    np.testing.assert_allclose(fig.measured, study.measured, atol=1e-9)
    np.testing.assert_allclose(fig.predicted_sequence_level, study.predicted_sequence_level, atol=1e-9)


def test_critical_step_size_separates_converging_from_oscillating_grpo_steps():
    """Figure 12(c, d): below the critical step dynamics.grpo_steps (the iteration itself, exact
    expectations) settles on the stationary point; above it, it does not (it oscillates)."""
    from grpo_theory.dynamics import grpo_steps
    from grpo_theory.figures.proximal_map import critical_step_size

    for obj, p in [(Objective(beta=2.0, group_size=8), 0.4), (Objective(beta=1.5, group_size=8, penalty="direct"),
                                                              0.3)]:
        q = Question([p, 1 - p], rewards=[1, 0])
        lr_c = critical_step_size(q, obj)
        target = stationary_policy(q, obj).pi[0]
        assert 0.1 < lr_c < 100
        below = grpo_steps(q, obj, q.pi_ref, lr=0.8 * lr_c, n_batches=3000, with_points=False).pi[-60:, 0]
        above = grpo_steps(q, obj, q.pi_ref, lr=1.25 * lr_c, n_batches=3000, with_points=False).pi[-60:, 0]
        assert np.abs(below - target).max() < 1e-6
        assert np.abs(above - target).max() > 1e-3


def test_training_trajectories_figure_against_the_flow(figdir):
    """Figure 16: its flow curves are dynamics.flow from pi_ref at the stated time scale (recomputed
    here); where the trained runs end is checked in test_results_tables."""
    from grpo_theory.dynamics import flow

    df = _csv(figdir, "fig16_training_trajectories")
    for _, d in df.groupby(["run", "question"]):
        fl = d[d.kind == "flow (fitted time scale)"].sort_values("step")
        c, p0 = d.time_scale.iloc[0], d.pi_ref.iloc[0]
        qq = Question([p0, 1 - p0], rewards=[1, 0])
        sample = fl.iloc[[1, len(fl) // 4, -1]]
        want = flow(qq, Objective(beta=0.5, group_size=8), qq.pi_ref, np.concatenate([[0.0],
                                                                                      c * sample.step.to_numpy()]),
                    with_points=False).pi[1:, 0]
        np.testing.assert_allclose(sample.pi.to_numpy(), want, atol=2e-3)


def test_measured_tables_are_inputs_and_a_missing_one_skips_its_figure(tmp_path, capsys):
    """Figures 13, 14 and 16 read only --results DIR: with an empty folder each is skipped, naming the file."""
    empty = tmp_path / "results"
    empty.mkdir()
    assert build_figures(tmp_path / "out", only=[13, 14, 16], results=empty, progress=False) == []
    err = capsys.readouterr()
    text = err.out + err.err
    assert "figure 13 (trainer_conventions) skipped: needs trl_results.csv" in text
    assert "figure 14 (token_vs_sequence) skipped: needs tree_study.csv" in text
    assert "figure 16 (training_trajectories) skipped: needs fig16_trajectories.csv" in text
    with pytest.raises(ValueError, match="--results"):
        build_figures(tmp_path / "out", only=[14], results=tmp_path / "absent", progress=False)


def test_a_figures_fingerprint_covers_only_its_own_code():
    """Figure 1's hash reads its own module and the shared style, not Figure 2's module or the driver."""
    from grpo_theory.figures import FIGURES, code_fingerprint
    from grpo_theory.figures import build as driver

    spec = {s.number: s for s in FIGURES}
    paths = driver._fingerprint_paths(spec[1])
    names = {p.name for p in paths}
    assert names == {"pairwise_reverse.py", "plotting.py", "_data.py"}
    assert "pairwise_reverse.py" in {p.name for p in driver._fingerprint_paths(spec[3])}     # Fig 3 uses Fig 1's data
    assert code_fingerprint(spec[1]) != code_fingerprint(spec[2])


def test_figures_without_their_measured_tables_are_skipped_with_the_reason(tmp_path, capsys):
    """The library never reads the repository: without ``results`` Figures 13, 14 and 16 are skipped, saying why."""
    assert build_figures(tmp_path, only=[13, 14, 16], progress=False) == []
    said = capsys.readouterr()
    text = said.out + said.err
    for n, table in ((13, "trl_results.csv"), (14, "tree_study.csv"), (16, "fig16_trajectories.csv")):
        assert f"figure {n} " in text and table in text, text
    with pytest.raises(ValueError, match="no such folder"):
        build_figures(tmp_path, only=[14], progress=False, results=tmp_path / "absent")
