"""docs/results/small_gpt_trajectories*.csv (experiments/small_gpt_trajectories.py): the layout the held-out
validation reads, the sampling floor recomputed by another route, the counts consistent with the exact
P(correct), the kernels symmetric PSD, and the step-0 references and kernels against the committed
small_gpt_kernel*.csv (built by another script from separately pretrained references)."""

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binom

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
STEPS = [0, 5, 10, 20, 40, 80, 160, 320, 800]


def _traj():
    return pd.read_csv(RESULTS / "small_gpt_trajectories.csv")


def _K(g):
    return g.pivot(index="prompt_i", columns="prompt_j", values="K").to_numpy()


def test_layout_halves_and_start():
    t = _traj()
    assert sorted(t.seed.unique()) == [0, 1, 2, 3, 4] and sorted(t.beta.unique()) == [0.05, 0.5]
    for (_seed, _beta), run in t.groupby(["seed", "beta"]):
        assert sorted(run.step.unique()) == STEPS
        assert (run.groupby("step").prompt.nunique() == 16).all() and set(run.m) == {200}
        base = run[run.step == 0].sort_values("prompt")
        assert np.allclose(base.p, base.p_ref, atol=1e-7)
        order = np.argsort(base.p_ref.to_numpy(), kind="stable")
        assert list(base.half.to_numpy()[order]) == ["A", "B"] * 8
        assert (run.groupby("prompt").half.nunique() == 1).all()
    assert ((t.k >= 0) & (t.k <= t.m) & (t.p > 0) & (t.p < 1)).all()


def test_floor_and_counts():
    t = _traj()
    # E|Bin(m, p)/m - p| by scipy's binomial pmf (the script sums it with gammaln)
    kk = np.arange(201)
    want = np.array([binom.pmf(kk, 200, p) @ np.abs(kk / 200 - p) for p in t.p])
    # both stored to 8 significant digits: at p = 0.9984 that leaves 1 - p five, hence 1e-5
    assert np.allclose(t.floor, want, rtol=1e-5, atol=1e-12)
    # the counts are Binomial(200, p) draws: |k/m - p| averages to the floor (1,440 rows at each beta)
    dev = np.abs(t.k / t.m - t.p)
    se = np.sqrt(np.sum(np.square(dev - t.floor))) / len(t)
    assert abs(dev.mean() - t.floor.mean()) < 4 * se
    # what docs/results/README.md states: mean P(correct) 0.50-0.51 at the start, 0.897-0.901 (beta 0.5) and
    # 0.990-0.991 (beta 0.05) at step 800; floor at step 800 0.0158-0.0161 and 0.0052-0.0053
    per = t.groupby(["seed", "beta", "step"]).agg(p=("p", "mean"), floor=("floor", "mean")).reset_index()
    start, end = per[per.step == 0], per[per.step == 800]
    assert start.p.between(0.49, 0.52).all()
    e5, e05 = end[end.beta == 0.5], end[end.beta == 0.05]
    assert e5.p.between(0.8965, 0.9015).all() and e05.p.between(0.9895, 0.9915).all()
    assert e5.floor.between(0.0157, 0.0162).all() and e05.floor.between(0.0051, 0.0054).all()


def test_kernels():
    k = pd.read_csv(RESULTS / "small_gpt_trajectory_kernels.csv")
    keys = set(map(tuple, k[["seed", "beta", "step", "kernel"]].drop_duplicates().to_numpy().tolist()))
    assert len(keys) == 5 * 2 * 5
    assert {(s, b, st, kn) for s, b, st, kn in keys if st == 0} == {(s, b, 0, "plain") for s in range(5)
                                                                     for b in (0.05, 0.5)}
    for _key, g in k.groupby(["seed", "beta", "step", "kernel"]):
        K = _K(g)
        assert K.shape == (16, 16)
        assert np.allclose(K, K.T, rtol=1e-6) and np.linalg.eigvalsh(K).min() > -1e-6 * np.abs(K).max()
    old = pd.read_csv(RESULTS / "small_gpt_kernel.csv")
    old_p = pd.read_csv(RESULTS / "small_gpt_kernel_prompts.csv")
    t = _traj()
    for seed in range(5):
        want = _K(old[(old.seed == seed) & (old.answer_length == 1)])
        for beta in (0.05, 0.5):
            K0 = _K(k[(k.seed == seed) & (k.beta == beta) & (k.step == 0)])
            assert np.abs(K0 - want).max() < 1e-3 * np.abs(want).max()
            p_ref = t[(t.seed == seed) & (t.beta == beta) & (t.step == 0)].sort_values("prompt").p_ref.to_numpy()
            p_old = old_p[(old_p.seed == seed) & (old_p.answer_length == 1)].sort_values("prompt").p_ref.to_numpy()
            assert np.abs(p_ref - p_old).max() < 1e-4
