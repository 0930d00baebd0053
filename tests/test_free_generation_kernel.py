"""The committed measured kernel of the free-generation prompts at SmolLM2's base model
(experiments/free_generation_kernel.py -> docs/results/free_generation_kernel*.csv): every number the
results README states, recomputed from the tables, and the tables checked against each other and
against the study's own sampled p_ref."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


@pytest.fixture(scope="module")
def tables():
    return (pd.read_csv(RESULTS / "free_generation_kernel.csv"),
            pd.read_csv(RESULTS / "free_generation_kernel_prompts.csv"))


def _K(k: pd.DataFrame, pool: str, score: str) -> pd.DataFrame:
    return k[(k.pool == pool) & (k.score == score)].pivot(index="prompt_i", columns="prompt_j", values="K")


def test_kernels_are_gram_matrices_and_agree_with_each_other(tables):
    k, pr = tables
    assert set(k.pool) == {"main", "greetings"} and set(k.score) == {"first_logit", "first_logprob", "prefix_logprob"}
    for pool, g in pr.groupby("pool"):
        g = g.set_index("prompt")
        n = len(g)
        for score in ("first_logit", "first_logprob", "prefix_logprob"):
            K = _K(k, pool, score)
            assert K.shape == (n, n) and list(K.index) == list(g.index)
            K = K.to_numpy()
            assert np.allclose(K, K.T, rtol=1e-6) and np.linalg.eigvalsh(K).min() > -1e-6 * np.abs(K).max()
        # logit P = log P - log(1 - P): its kernel is the log P kernel over (1 - P_i)(1 - P_j), two separate runs
        P = g.p_first_token.to_numpy()
        Kz = _K(k, pool, "first_logit").to_numpy()            # float32 gradients: error relative to the largest
        assert np.abs(Kz - _K(k, pool, "first_logprob").to_numpy() / np.outer(1 - P, 1 - P)).max() < 1e-4 * Kz.max()
        assert np.allclose(1 / (1 + np.exp(-g.z_first_logit)), P, rtol=1e-4)      # float32 logits (1.3e-5 seen)


def test_the_first_token_score_is_the_sampled_p_ref(tables):
    """P(first token reads as the answer), computed exactly, against the study's 1,600 samples a prompt:
    within sampling error (|z| <= 2.14, 1 of 32 beyond 2; MAE 0.0087 and 0.0062)."""
    _, pr = tables
    p = pr.p_first_token
    z = (pr.p_ref - p) / np.sqrt(p * (1 - p) / pr.p_ref_n)
    assert np.abs(z).max() < 2.2 and (np.abs(z) > 2).sum() == 1 and abs(z.mean()) < 0.5
    mae = (pr.p_ref - p).abs().groupby(pr.pool).mean()
    assert mae["main"] == pytest.approx(0.0087, abs=5e-5) and mae["greetings"] == pytest.approx(0.0062, abs=5e-5)


def test_prompts_sharing_an_answer_move_together(tables):
    """The kernel's correlations: median 0.912 between yes/no prompts with the same answer word, -0.064
    between a Yes and a No prompt; 0.965 among the greetings (all 'Hello')."""
    k, pr = tables
    med = {}
    for pool, g in pr.groupby("pool"):
        K = _K(k, pool, "first_logit").to_numpy()
        d = np.sqrt(np.diag(K))
        C = K / np.outer(d, d)
        ans = g.set_index("prompt").loc[_K(k, pool, "first_logit").index, "answer"].to_numpy()
        off = ~np.eye(len(ans), dtype=bool)
        med[pool, "same"] = np.median(C[(ans[:, None] == ans[None, :]) & off])
        if pool == "main":
            med[pool, "different"] = np.median(C[ans[:, None] != ans[None, :]])
    assert med["main", "same"] == pytest.approx(0.912, abs=5e-4)
    assert med["main", "different"] == pytest.approx(-0.064, abs=5e-4)
    assert med["greetings", "same"] == pytest.approx(0.965, abs=5e-4)
