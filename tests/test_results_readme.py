"""docs/results/README.md's statements about the small-GPT kernel tables and the free-generation runs'
measurement points, recomputed from the committed tables."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def test_small_gpt_kernel_tables():
    k = pd.read_csv(RESULTS / "small_gpt_kernel.csv")
    pr = pd.read_csv(RESULTS / "small_gpt_kernel_prompts.csv")
    assert sorted(pr.seed.unique()) == [0, 1, 2, 3, 4] and sorted(pr.answer_length.unique()) == [1, 2]
    # the rebuilt references against the committed pi_ref_a: one-token ones reproduce it (<= 1.6e-5), the
    # two-token ones (1,200 pretraining steps) only to 7.6e-3, though the two committed tables agree with
    # each other to 5e-7 (a finding, stated in the README; the cause is not established)
    diff = (pr.p_ref - pr.pi_ref_committed).abs().groupby(pr.answer_length).max()
    assert diff[1] < 2e-5 and 5e-4 < diff[2] < 8e-3
    assert np.allclose(1 / (1 + np.exp(-pr.z)), pr.p_ref, atol=1e-7)
    for _, g in k.groupby(["seed", "answer_length"]):
        K = g.pivot(index="prompt_i", columns="prompt_j", values="K").to_numpy()
        assert K.shape == (16, 16)
        assert np.allclose(K, K.T, rtol=1e-6) and np.linalg.eigvalsh(K).min() > -1e-6 * np.abs(K).max()


@pytest.mark.parametrize("name, n_prompts", [("free_generation", 24), ("free_generation_greetings", 8)])
def test_free_generation_points_and_floors(name, n_prompts):
    d = pd.read_csv(RESULTS / f"{name}.csv")
    lo_hi = {"intermediate": [], "final": []}
    for (_seed, _beta), g in d.groupby(["seed", "beta"]):
        inter = g[g.kind == "intermediate"]
        assert sorted(inter.step.unique()) == [10, 25, 50, 100] and set(inter.measured_n) == {200}
        fin = g[g.kind == "final"]
        assert fin.step.nunique() == 1 and set(fin.measured_n) == {1600} and 150 <= fin.step.iloc[0] <= 275
        assert g.prompt.nunique() == n_prompts
        for kind, x in g.groupby("kind"):
            floor = np.mean(np.sqrt(2 / np.pi) * np.sqrt(x.measured * (1 - x.measured) / x.measured_n)
                            .groupby(x.step).mean())
            lo_hi[kind].append(floor)
    want = {"free_generation": {"intermediate": (0.023, 0.025), "final": (0.007, 0.009)},
            "free_generation_greetings": {"intermediate": (0.013, 0.024), "final": (0.004, 0.009)}}[name]
    for kind, (lo, hi) in want.items():
        assert lo - 0.0005 <= min(lo_hi[kind]) and max(lo_hi[kind]) <= hi + 0.0005, (kind, lo_hi[kind])
