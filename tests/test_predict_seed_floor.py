"""The seed-to-seed floor (experiments/predict_seed_floor.py, docs/results/predict_seed_floor*.csv).

The estimators against synthetic seeds drawn around a known per-prompt centre (the true floor computed by
quadrature, not by the estimators); the committed table against the raw runs by another route (pandas
group medians; the validation's own MAEs and floors); the small GPT's repeated runs against the committed
trajectories they repeat; and every number docs/results.md states in its section."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import binom

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "docs" / "results"
sys.path.insert(0, str(ROOT / "experiments"))

import predict_seed_floor as P  # noqa: E402

SECTION = "## The seed-to-seed floor: how close any predictor can get"
GH_X, GH_W = np.polynomial.hermite_e.hermegauss(40)
GH_W = GH_W / np.sqrt(2 * np.pi)                       # E over N(0, 1) = sum w g(x)


# ----------------------------------------------------------------------------------------------- synthetic
def test_exact_seeds_bracket_the_known_floor():
    """No sampling (the small GPT's case): seeds ``p_sj = expit(mu_j + 0.4 z_sj)``. The best prediction the same
    for every seed is the seed distribution's median ``expit(mu_j)``; its MAE, by quadrature, lies between the
    in-sample and the leave-one-out oracle; and the in-sample oracle beats that true median on the very data."""
    rng = np.random.default_rng(3)
    S, N, sd = 5, 2000, 0.4
    mu = rng.uniform(-2, 2, N)
    y = expit(mu + sd * rng.standard_normal((S, N)))
    truth = np.mean([GH_W @ np.abs(expit(m + sd * GH_X) - expit(m)) for m in mu])
    e_in = np.abs(y - P.oracle_in(y)).mean()
    e_loo = np.abs(y - P.oracle_loo(y)).mean()
    assert e_in < 0.93 * truth and e_loo > 1.07 * truth
    assert e_in <= np.abs(y - expit(mu)).mean()                     # exact: the median minimises the sum
    assert np.abs(y - expit(mu)).mean() == pytest.approx(truth, rel=0.03)
    # the leave-one-out oracle of seed s never uses seed s
    y2 = y.copy()
    y2[0] += 0.1
    assert np.array_equal(P.oracle_loo(y2)[0], P.oracle_loo(y)[0])


@pytest.mark.parametrize("sd", [0.0, 0.05])
def test_sampled_seeds_gaussian_floor(sd):
    """200-sample measurements of seeds ``p_sj = mu_j + sd z_sj`` (S = 3, as SmolLM2): the pooled seed variance
    and the MAE of a predictor knowing ``mu_j`` against the measurement, by quadrature over z and the exact
    binomial (true values 0 / 0.0399 and 0.0265 / 0.0479)."""
    rng = np.random.default_rng(5)
    S, N, m = 3, 400, 200
    mu = rng.uniform(0.2, 0.8, N)
    p = mu + sd * rng.standard_normal((S, N))
    k = rng.binomial(m, p).astype(float)
    M = np.full((S, N), float(m))
    y = k / M
    var = P.seed_variance(y, k, M)
    assert np.sqrt(var) == pytest.approx(sd, abs=0.006)
    kk = np.arange(m + 1)
    truth = np.mean([GH_W @ np.array([binom.pmf(kk, m, np.clip(mj + sd * x, 0, 1)) @ np.abs(kk / m - mj) for x in GH_X])
                     for mj in mu[:60]])
    q = (k[:, :60] + 0.5) / (m + 1)
    est = P.abs_binomial_plus_normal(q, M[:, :60], np.full(q.shape, np.sqrt(var))).mean()
    assert est == pytest.approx(truth, rel=0.08)


def test_one_shift_recovers_a_seed_wide_shift():
    """Seeds that differ by a common logit shift (a seed that trains faster): the other seeds' median plus one
    shift fitted on half A predicts half B almost exactly; without the shift the error is the shift's."""
    rng = np.random.default_rng(7)
    S, N, m = 5, 24, 100000
    mu = rng.uniform(-2, 2, N)
    a = np.array([0.8, 0.0, 0.0, 0.0, 0.0])                          # seed 0 ahead of the others
    y = expit(mu[None, :] + a[:, None])
    k = np.rint(y * m)
    M = np.full((S, N), float(m))
    half = np.array(["A", "B"] * (N // 2))
    loo = P.oracle_loo(y)
    sh = P.shifted(loo, k, M, half)
    assert np.abs(sh - y).max() < 2e-3
    assert np.abs(loo - y)[0].mean() > 0.08 and np.abs(loo - y)[1:].max() < 1e-12
    d = P.half_deviations(y, loo, M, half)
    assert np.allclose(d[:, 0], d[:, 1], atol=1e-3)                 # the halves see the same deviation


def test_halves_stats_known_correlation():
    """Half means ``a + e_A``, ``a + e_B`` with var(a) = 1, var(e) = 1: correlation and slope 1/2, shared share
    = var(a) / dev_var; independent halves: correlation near 0 with the interval covering it."""
    rng = np.random.default_rng(11)
    n = 4000
    a = rng.standard_normal(n)
    dev = pd.DataFrame(dict(dev_a=a + rng.standard_normal(n), dev_b=a + rng.standard_normal(n), dev_var=4.0,
                            cluster=np.arange(n) // 20))
    st = P.halves_stats(dev, np.random.default_rng(0), n_boot=200)
    assert st["corr"] == pytest.approx(0.5, abs=0.04) and st["slope"] == pytest.approx(0.5, abs=0.05)
    assert st["shared_share"] == pytest.approx(0.25, abs=0.03)
    assert st["corr_lo"] < st["corr"] < st["corr_hi"]
    dev["dev_b"] = rng.standard_normal(n)
    st = P.halves_stats(dev, np.random.default_rng(0), n_boot=200)
    assert st["corr_lo"] < 0 < st["corr_hi"]


def test_kernel_transfer_recovers_cluster_deviations():
    """Two clusters of prompts, the kernel linking prompts within a cluster only, and a seed's deviation one
    value per cluster: the kernel-weighted mean of the other half's deviations is each prompt's deviation
    exactly; the plain mean (one shift) is the mean of both clusters."""
    N = 12
    cl = np.arange(N) % 3 == 0                                        # cluster membership, in both halves
    K = np.where(cl[:, None] == cl[None, :], 2.0, 0.0) + np.eye(N)
    d = np.where(cl, 1.5, -0.5)[None, :] * np.array([[1.0], [2.0]])   # two seeds
    half = np.array(["A", "B"] * (N // 2))
    shift, kern = P.transfer_predictors(d, half, K)
    assert np.allclose(kern, d)
    for h in "AB":
        other = half != h
        assert np.allclose(shift[:, half == h], d[:, other].mean(axis=1, keepdims=True))


def test_pooled_ratio_exact_when_proportional():
    """An error whose excess is exactly 0.4 of the better baseline's at every prompt and seed: ratio 0.4 in every
    bootstrap resample."""
    rng = np.random.default_rng(2)
    floor = rng.uniform(0.01, 0.02, (3, 10))
    sh = floor + rng.uniform(0.01, 0.1, (3, 10))
    tab = sh + 0.5                                                    # the shift is the better baseline
    r, lo, hi = P.pooled_ratio(floor + 0.4 * (sh - floor), {"shift": sh, "tabular": tab}, floor, rng, n_boot=50)
    assert (r, lo, hi) == pytest.approx((0.4, 0.4, 0.4))


# ----------------------------------------------------------------------------------------------- committed
@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return pd.read_csv(RES / "predict_seed_floor.csv", dtype={"point": str})


def _smollm2_raw() -> pd.DataFrame:
    d = pd.concat([pd.read_csv(RES / f).assign(pool=pool) for pool, f in P.POOLS.items()])
    d["point"] = np.where(d.kind == "final", "final", d.step.astype(str))
    return d


def test_layout(table):
    run = table[table.scope == "run"]
    assert len(run[run.study == "smollm2"]) == 2 * 2 * 5 * 3 and len(run[run.study == "small_gpt"]) == 2 * 2 * 8 * 5
    assert len(table[table.scope == "pooled"]) == 2 * 2 * 5 + 2 * 2 * 8
    # docs/results/README.md's row counts of the repeated small-GPT runs
    assert len(pd.read_csv(RES / "small_gpt_seed_runs.csv")) == 2880
    pr = pd.read_csv(RES / "small_gpt_seed_runs_predictions.csv")
    assert len(pr) == 17920 and pr.groupby(["task", "seed", "beta", "step", "model"]).prompt.nunique().eq(16).all()


def test_oracles_recomputed_from_raw_runs(table):
    """The in-sample and leave-one-out oracles by pandas group medians over the raw measured values."""
    raw = pd.concat([
        _smollm2_raw().assign(study="smollm2", y=lambda d: d.measured)[["study", "pool", "beta", "point", "seed",
                                                                         "prompt", "y"]],
        pd.read_csv(RES / "small_gpt_seed_runs.csv").query("step > 0").assign(
            study="small_gpt", pool=lambda d: "task" + d.task.astype(str), point=lambda d: d.step.astype(str),
            y=lambda d: d.p)[["study", "pool", "beta", "point", "seed", "prompt", "y"]]])
    keys = ["study", "pool", "beta", "point"]
    raw["med"] = raw.groupby(keys + ["prompt"]).y.transform("median")
    loo = []
    for s in raw.seed.unique():
        others = raw[raw.seed != s].groupby(keys + ["prompt"]).y.median().rename("loo").reset_index()
        loo.append(raw[raw.seed == s].merge(others, on=keys + ["prompt"]))
    raw = pd.concat(loo)
    got = raw.assign(e_in=(raw.y - raw.med).abs(), e_loo=(raw.y - raw.loo).abs()).groupby(keys + ["seed"])[
        ["e_in", "e_loo"]].mean()
    run = table[table.scope == "run"].set_index(keys + ["seed"]).sort_index()
    got = got.reindex(run.index)
    assert np.allclose(run.oracle_in, got.e_in, atol=2e-6) and np.allclose(run.oracle_loo, got.e_loo, atol=2e-6)


def test_smollm2_models_and_floors_are_the_validations(table):
    v = pd.read_csv(RES / "predict_validation.csv")
    v["point"] = np.where(v.kind == "final", "final", v.step.astype(str))
    v = v.pivot_table(index=["pool", "beta", "point", "seed"], columns="model", values="mae")
    fl = pd.read_csv(RES / "predict_validation.csv").query("model == 'shift'")
    fl["point"] = np.where(fl.kind == "final", "final", fl.step.astype(str))
    fl = fl.set_index(["pool", "beta", "point", "seed"]).floor
    run = table[(table.scope == "run") & (table.study == "smollm2")].set_index(["pool", "beta", "point", "seed"])
    for name in P.MODELS:
        assert np.allclose(run[name], v.loc[run.index, name], atol=2e-6)
    assert np.allclose(run.floor, fl.loc[run.index], rtol=1e-5)
    assert np.allclose(run.better_baseline, np.minimum(run["shift"], run.tabular))


def test_verdicts_from_the_table(table):
    run = table[table.scope == "run"]
    ok = run.better_baseline > run.floor
    for name in ("oracle_in", "oracle_loo", "oracle_loo_shift", "kernel"):
        want = run[name] - run.floor <= P.TARGET * (run.better_baseline - run.floor)
        assert (run.loc[ok, f"meets_{name}"].astype(bool) == want[ok]).all()
        assert run.loc[~ok, f"meets_{name}"].isna().all()


def test_small_gpt_repeats_the_committed_runs():
    """Training seed t of task t is the committed small_gpt_trajectories run of seed t (both made by the same
    trainer): the same reference, halves, P(correct) and counts at every step, bit for bit; every seed of a task
    from one reference."""
    new = pd.read_csv(RES / "small_gpt_seed_runs.csv")
    old = pd.read_csv(RES / "small_gpt_trajectories.csv")
    for t in new.task.unique():
        a = new[(new.task == t) & (new.seed == t)].sort_values(["beta", "step", "prompt"])
        b = old[old.seed == t].sort_values(["beta", "step", "prompt"])
        assert len(a) == len(b) == 2 * 9 * 16
        assert np.array_equal(a.p_ref.to_numpy(), b.p_ref.to_numpy()) and (a.half.to_numpy() == b.half.to_numpy()).all()
        assert np.array_equal(a.p.to_numpy(), b.p.to_numpy()) and np.array_equal(a.k.to_numpy(), b.k.to_numpy())
    assert (new[new.step == 0].groupby(["task", "prompt"]).p_ref.nunique() == 1).all()
    assert sorted(new.seed.unique()) == [0, 1, 2, 3, 4] and sorted(new.task.unique()) == [0, 1]

# ----------------------------------------------------------------------------------------------- docs/results.md
@pytest.fixture(scope="module")
def section() -> str:
    text = (ROOT / "docs" / "results.md").read_text()
    sec = text[text.index(SECTION):]
    return " ".join(sec[:sec.index("\n## ")].split())             # one line: phrases may wrap in the file


def _rng(values, nd=2) -> str:
    return f"{min(values):.{nd}f}-{max(values):.{nd}f}"


def test_section_tables(table):
    text = (ROOT / "docs" / "results.md").read_text()
    sec = text[text.index(SECTION):]
    sec = sec[:sec.index("\n## ")]
    labels = {"yes/no": "main", "greetings": "greetings"}
    rows = re.findall(r"^\| (yes/no|greetings) \| ([\d.]+) \| (\w+) \|(.*)\|$", sec, re.M)
    p = table[(table.scope == "pooled") & (table.study == "smollm2")].set_index(["pool", "beta", "point"])
    assert len(rows) == len(p) == 20
    for pool, beta, point, cells in rows:
        r = p.loc[(labels[pool], float(beta), point)]
        want = [r[c] for c in ("floor", "oracle_in", "oracle_loo", "oracle_loo_shift", "oracle_gauss", "kernel",
                               "better_baseline")]
        assert [float(v) for v in cells.split("|")] == pytest.approx(want, abs=5e-5 + 1e-9)
    rows = re.findall(r"^\| (0\.5|0\.05) \| (\d+) \|(.*)\|$", sec, re.M)
    g = table[(table.scope == "run") & (table.study == "small_gpt")].groupby(["beta", "point"])[
        ["oracle_in", "oracle_loo", "oracle_loo_shift", "kernel", "tabular", "shift"]].mean()
    assert len(rows) == len(g) == 16
    for beta, step, cells in rows:
        assert [float(v) for v in cells.split("|")] == pytest.approx(list(g.loc[(float(beta), step)]), abs=5e-5 + 1e-9)


def test_section_counts(table, section):
    run = table[table.scope == "run"]

    def n(study, name):
        return int(run[run.study == study][f"meets_{name}"].fillna(False).astype(bool).sum())

    sm = run[run.study == "smollm2"]
    defined = int((sm.better_baseline > sm.floor).sum())
    assert (f"Of the {defined} SmolLM2 run x points where the better baseline is above the floor (at the other "
            f"{len(sm) - defined} no predictor") in section
    assert (f"in-sample oracle at {n('smollm2', 'oracle_in')}, the leave-one-out oracle at "
            f"{n('smollm2', 'oracle_loo')}, the leave-one-out oracle with a shift at {n('smollm2', 'oracle_loo_shift')}"
            f", the normal model at {n('smollm2', 'oracle_gauss')}; by `kernel` at {n('smollm2', 'kernel')} and "
            f"`coupled` at {n('smollm2', 'coupled')}") in section
    gp = run[run.study == "small_gpt"]
    assert (gp.better_baseline > gp.floor).all()
    assert (f"Of the {len(gp)} small-GPT run x steps: in-sample oracle {n('small_gpt', 'oracle_in')}, leave-one-out "
            f"{n('small_gpt', 'oracle_loo')}, with a shift {n('small_gpt', 'oracle_loo_shift')}; `kernel` "
            f"{n('small_gpt', 'kernel')}, `coupled` {n('small_gpt', 'coupled')}") in section

    def every(study, name):
        g = run[run.study == study].groupby(["pool", "beta", "seed"])[f"meets_{name}"]
        ok = g.apply(lambda x: bool(x.notna().all() and x.astype(bool).all()))
        return int(ok.sum()), len(ok)

    (a, na), (b, nb) = every("smollm2", "oracle_in"), every("small_gpt", "oracle_in")
    assert f"in-sample oracle in {a} of the {na} SmolLM2 runs and {b} of the {nb} small-GPT runs" in section
    assert every("smollm2", "oracle_loo")[0] == every("small_gpt", "oracle_loo")[0] == 0
    assert "the leave-one-out oracle in none" in section
    p = table[table.scope == "pooled"]
    nd = {s: p[(p.study == s) & p.no_deterministic.notna()].no_deterministic.astype(bool) for s in p.study.unique()}
    assert (f"at {int(nd['smollm2'].sum())} of the {len(nd['smollm2'])} SmolLM2 configuration x points where it is "
            f"defined in every seed, and at {int(nd['small_gpt'].sum())} of the {len(nd['small_gpt'])} small-GPT "
            f"ones (beta 0.5, steps 40 to 160)") in section
    hit = p[(p.study == "small_gpt") & (p.no_deterministic == True)]          # noqa: E712
    assert set(hit.beta) == {0.5} and {int(v) for v in hit.point} <= {40, 80, 160} and {"40", "160"} <= set(hit.point)


def test_section_ratios(table, section):
    p = table[(table.scope == "pooled") & (table.study == "smollm2")].set_index(["pool", "beta", "point"])
    mid = p.loc[[("main", 0.5, s) for s in ("25", "50", "100")]]
    assert (f"the leave-one-out oracle's excess is {_rng(mid.ratio_oracle_loo)}x the better baseline's (95% "
            f"intervals up to {mid.ratio_oracle_loo_hi.max():.2f}), the in-sample oracle's "
            f"{_rng(mid.ratio_oracle_in)}x; `kernel` is at {_rng(mid.ratio_kernel)}x") in section
    b4 = p.loc[[("main", 4.0, s) for s in ("25", "50", "100", "final")]]
    assert (b4.better_baseline - b4.floor).max() < 0.004 and "within 0.004 of the floor" in section
    assert b4.ratio_oracle_loo_lo.max() < -8 and b4.ratio_oracle_loo_hi.min() > 8
    assert "95% intervals from below -8 to above 8" in section
    g = table[(table.scope == "run") & (table.study == "small_gpt")].groupby(["beta", "point"])[
        ["oracle_in", "oracle_loo", "kernel", "better_baseline", "oracle_loo_shift"]].mean()
    early = g.loc[[(b, s) for b in (0.5, 0.05) for s in ("5", "10", "20")]]
    assert (f"the leave-one-out oracle's mean MAE is {_rng(early.oracle_loo / early.better_baseline)}x the better "
            f"baseline's, `kernel`'s {_rng(early.kernel / early.better_baseline)}x") in section
    late = g.loc[[(0.5, s) for s in ("80", "160", "320")]]
    assert (f"the in-sample oracle's mean MAE is {_rng(late.oracle_in / late.better_baseline)}x the better "
            f"baseline's (the tabular flow), the leave-one-out oracle's {_rng(late.oracle_loo / late.better_baseline)}x"
            ) in section
    run = table[(table.scope == "run") & (table.study == "small_gpt") & (table.beta == 0.5)]
    assert (run[run.point.isin(["80", "160", "320"])].better_baseline == run[run.point.isin(["80", "160", "320"])]
            .tabular).mean() > 0.5                                     # mostly the tabular flow there
    gr = p.loc[("greetings", 4.0, "final")]
    assert (f"leave-one-out oracle's MAE is {gr.oracle_loo:.4f}, the refitted shift's {gr['shift']:.4f}" in section
            and f"leave-one-out + shift: {gr.oracle_loo_shift:.4f} against {gr.oracle_loo:.4f}" in section)
    late_in = late.oracle_in / late.better_baseline
    assert list(late_in.index.get_level_values(1)[late_in > 0.7]) == ["80", "160"]
    assert "even the exact lower bound is above 0.7x at steps 80 and 160" in section
    gre = table[(table.scope == "run") & (table.study == "smollm2") & (table.pool == "greetings")]
    gre = gre[gre.better_baseline > gre.floor]
    assert (f"the oracle with one shift meets the target at {int(gre.meets_oracle_loo_shift.astype(bool).sum())} of "
            f"the pool's {len(gre)} run x points where it is defined") in section
    b4 = p.loc[[("main", 4.0, s) for s in ("10", "25", "50", "100", "final")]]
    assert (b4.oracle_in < b4.floor).all() and "at beta = 4 it lies below the floor at every point" in section
    e = g.loc[(0.5, "800")]
    assert f"({e.oracle_loo_shift:.4f} against {e.oracle_loo:.4f} at step 800, beta 0.5)" in section


def test_section_halves(section):
    h = pd.read_csv(RES / "predict_seed_floor_halves.csv").set_index(["study", "pool"])
    s, g = h.loc[("smollm2", "all")], h.loc[("small_gpt", "all")]
    assert (f"deviations correlate at {s['corr']:.2f} (95% interval over runs {s.corr_lo:.2f}-{s.corr_hi:.2f}), "
            f"and the shared part is {s.shared_share:.2f} of the per-prompt deviation variance (sampling included; "
            f"greetings {h.loc[('smollm2', 'greetings')].shared_share:.2f}, yes/no "
            f"{h.loc[('smollm2', 'main')].shared_share:.2f})") in section
    assert (f"they correlate at {g['corr']:.2f} ({g.corr_lo:.2f}-{g.corr_hi:.2f}), shared part "
            f"{g.shared_share:.2f}") in section
    y, gr = h.loc[("smollm2", "main")], h.loc[("smollm2", "greetings")]

    def ci(r, name):
        return f"{r[name]:.2f} ({r[name + '_lo']:.2f}-{r[name + '_hi']:.2f}"

    assert (f"correlates with a prompt's own deviation at {ci(s, 'prompt_corr_shift')}; yes/no "
            f"{y.prompt_corr_shift:.2f}, greetings {gr.prompt_corr_shift:.2f}) and at {ci(g, 'prompt_corr_shift')})"
            ) in section
    assert (f"measured kernel (`K_ji / sqrt(K_ii K_jj)`) at {ci(s, 'prompt_corr_kernel')}; yes/no "
            f"{y.prompt_corr_kernel:.2f}, greetings {gr.prompt_corr_kernel:.2f}) and {ci(g, 'prompt_corr_kernel')})"
            ) in section
    assert (f"account for {s.prompt_corr_shift ** 2:.2f} (shift) and {s.prompt_corr_kernel ** 2:.2f} (kernel) of the "
            f"per-prompt deviation variance on SmolLM2 (on the yes/no pool {y.prompt_corr_shift ** 2:.2f} and "
            f"{y.prompt_corr_kernel ** 2:.2f}: there the kernel carries what one shift cannot), and "
            f"{g.prompt_corr_shift ** 2:.2f} and {g.prompt_corr_kernel ** 2:.2f} on the small GPT") in section


def test_section_rerun_drift(section):
    """The section says the repeated runs reproduce the validation's runs exactly (checked bit for bit above)."""
    assert ("Training seed `t` of task `t` is the run of seed `t` in the section above, and reproduces it exactly "
            "(every P(correct) and count at every step)") in section
