"""Calibration of the finite-time flow on synthetic runs drawn from the model, the baselines and the scores."""

import math

import numpy as np
import pytest

from grpo_theory import Objective
from grpo_theory.errors import InvalidInputError
from grpo_theory.predict import samples_from_counts
from grpo_theory.predict.calibrate import (clock_band, clock_from_mean_reward, fit_flow, fit_shift,
                                           predictive_interval, start_logits, start_quantiles)
from grpo_theory.predict.clock import fit_clock, flow_table
from grpo_theory.predict.coupled import solve_rho, time_grid
from grpo_theory._numerics import expit, logit
from grpo_theory.predict.field import PromptField
from grpo_theory.predict.finite import predict_finite
from grpo_theory.predict.scoring import sampling_floor, score_table

OBJ = Objective(beta=0.5, group_size=8)


def _run(seed, N, n, m, rho, t, share=0.5):
    """A synthetic run: true p_ref, base counts, the coupled flow to t, measured counts on a share of prompts."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.6, 1.0, size=N).clip(2e-3, 1 - 2e-3)
    after = solve_rho(PromptField(OBJ, p), rho, np.array([0.0, t]), rtol=1e-9, atol=1e-11).p[-1]
    c = rng.binomial(n, p)
    meas = np.sort(rng.choice(N, int(share * N), replace=False))
    k = rng.binomial(m, after[meas])
    return p, after, c, meas, k, rng


@pytest.mark.parametrize("seed", [11, pytest.param(12, marks=pytest.mark.slow)])
def test_fit_recovers_t_and_rho_within_its_intervals(seed):
    """Starts known almost exactly (10^6 base samples): (t, rho) = (3, 0.6) inside the 95% intervals, and the
    intervals narrow (the fit is informative, not a wide net)."""
    N, n, m = 600, 10 ** 6, 64
    p, after, c, meas, k, _ = _run(seed, N, n, m, 0.6, 3.0)
    z0 = start_logits(np.full(N, n), c)
    fit = fit_flow(PromptField(OBJ, expit(z0)), meas, k, np.full(meas.size, m), rhos=np.linspace(0, 1, 11),
                   level=0.95, n_boot=300, seed=seed)
    assert fit.t_lo <= 3.0 <= fit.t_hi and fit.t_hi - fit.t_lo < 0.6
    assert fit.rho_lo <= 0.6 <= fit.rho_hi and fit.rho_hi - fit.rho_lo < 0.35


def test_rho_zero_fit_is_the_tabular_flow_on_a_fitted_clock():
    N, n, m = 300, 10 ** 6, 200
    p, after, c, meas, k, _ = _run(3, N, n, m, 0.0, 2.0)
    fit = fit_flow(PromptField(OBJ, expit(start_logits(np.full(N, n), c))), meas, k, np.full(meas.size, m),
                   rhos=[0.0], n_boot=100)
    assert fit.model == "tabular" and fit.rho == 0.0
    assert abs(fit.t - 2.0) < 0.15


def test_predictive_interval_covers_at_its_level():
    """90% predictive intervals for held-out prompts of a run with 128 base samples (start noise included):
    the share of held-out measurements inside them is 0.90 within sampling (500 prompts: +-0.04 is 3 sd)."""
    N, n, m = 1000, 128, 64
    p, after, c, meas, k, rng = _run(21, N, n, m, 0.5, 2.0)
    z0 = start_logits(np.full(N, n), c)
    fit = fit_flow(PromptField(OBJ, expit(z0)), meas, k, np.full(meas.size, m),
                   start_sd=start_quantiles(np.full(N, n), c), seed=4)
    lo, hi = predictive_interval(fit, m, level=0.9)
    held = np.setdiff1d(np.arange(N), meas)
    f = rng.binomial(m, after[held]) / m
    cover = float(np.mean((f >= lo[held]) & (f <= hi[held])))
    assert 0.86 <= cover <= 0.95, cover


@pytest.mark.slow
def test_predictive_interval_without_start_noise_undercovers():
    """The start's uncertainty is needed: leaving it out (start_sd=None) covers less."""
    N, n, m = 1000, 128, 64
    p, after, c, meas, k, rng = _run(21, N, n, m, 0.5, 2.0)
    z0 = start_logits(np.full(N, n), c)
    fld = PromptField(OBJ, expit(z0))
    held = np.setdiff1d(np.arange(N), meas)
    f = rng.binomial(m, after[held]) / m
    with_sd = fit_flow(fld, meas, k, np.full(meas.size, m), start_sd=start_quantiles(np.full(N, n), c), seed=4)
    without = fit_flow(fld, meas, k, np.full(meas.size, m), seed=4)
    cov = [np.mean((f >= lo[held]) & (f <= hi[held])) for lo, hi in
           (predictive_interval(x, m, level=0.9) for x in (with_sd, without))]
    assert cov[1] < cov[0]


def test_shift_fit_is_the_likelihood_maximum_by_grid_search():
    rng = np.random.default_rng(0)
    z0 = rng.normal(-1, 1.5, 50)
    m = np.full(50, 40)
    k = rng.binomial(40, expit(z0 + 0.8))
    c = fit_shift(z0, k, m)
    grid = np.linspace(-3, 3, 60001)
    ll = [np.sum(k * np.log(expit(z0 + g)) + (m - k) * np.log(expit(-(z0 + g)))) for g in grid[::100]]
    g0 = grid[::100][int(np.argmax(ll))]
    fine = np.linspace(g0 - 0.01, g0 + 0.01, 2001)
    ll = [np.sum(k * np.log(expit(z0 + g)) + (m - k) * np.log(expit(-(z0 + g)))) for g in fine]
    assert abs(c - fine[int(np.argmax(ll))]) < 2e-5


def test_mean_reward_clock_matches_the_tabular_clock_fit():
    """rho = 0 and the mean training reward: the time the existing clock code (flow_table, fit_clock) fits."""
    rng = np.random.default_rng(1)
    c = rng.binomial(64, rng.beta(0.6, 1.0, 40))
    c = np.clip(c, 1, 63)                                  # inside (0, 1): both paths start at c/n
    p = c / 64
    times = time_grid(1e3, 400)
    path = solve_rho(PromptField(OBJ, p), 0.0, times, rtol=1e-9, atol=1e-11).p
    target = 0.6
    t_new = clock_from_mean_reward(times, path, target)
    t_old = fit_clock(flow_table(p, OBJ), p, step=1.0, mean_reward=target)
    assert abs(t_new - t_old) / t_old < 5e-3                # linear interpolation between 400 geometric times


def test_clock_band_holds_the_path_between_its_ends():
    p = np.array([0.1, 0.4])
    times = time_grid(100.0, 100)
    path = solve_rho(PromptField(OBJ, p), 0.0, times).p
    lo, hi = clock_band(times, path, 1.0, 5.0)
    inside = path[(times >= 1) & (times <= 5)]
    assert np.all(lo <= inside.min(axis=0) + 1e-12) and np.all(hi >= inside.max(axis=0) - 1e-12)
    assert np.all(lo < hi)


def test_sampling_floor_by_monte_carlo():
    rng = np.random.default_rng(2)
    q = np.array([0.03, 0.5, 0.91])
    m = np.array([10, 64, 7])
    draws = rng.binomial(m, q, size=(200000, 3)) / m
    want = float(np.mean(np.abs(draws - q)))
    assert abs(sampling_floor(q, m) - want) < 2e-3
    assert sampling_floor([0.0, 1.0], [5, 5]) == 0.0


def test_score_table_numbers_by_hand():
    k = np.array([1, 3, 0])
    m = np.array([4, 4, 2])
    pred = np.array([0.25, 0.5, 0.2])
    s = score_table({"a": pred, "b": np.full(3, 0.5)}, k, m, reference="b", n_boot=200)
    f = k / m
    a = s.set_index("model").loc["a"]
    assert math.isclose(a.mae, np.mean(np.abs(pred - f)))
    assert math.isclose(a.brier, np.mean((pred - f) ** 2 + f * (1 - f)))
    assert math.isclose(a.mae_minus_b, np.mean(np.abs(pred - f)) - np.mean(np.abs(0.5 - f)))
    assert a.mae_lo <= a.mae <= a.mae_hi
    with pytest.raises(InvalidInputError, match="2 predictions for 3"):
        score_table({"a": pred[:2]}, k, m)


def test_predict_finite_errors_name_the_value():
    base = samples_from_counts([10, 10], [3, 4], ["a", "b"])
    with pytest.raises(InvalidInputError, match=r"not among the base.*'zz'"):
        predict_finite(base, OBJ, samples_from_counts([5], [2], ["zz"]))
    with pytest.raises(InvalidInputError, match="exactly one"):
        predict_finite(base, OBJ)
    with pytest.raises(InvalidInputError, match="holdout"):
        predict_finite(base, OBJ, samples_from_counts([5, 5], [2, 1], ["a", "b"]), holdout=0.5)
    with pytest.raises(InvalidInputError, match=r"k must be at most m, got k = 6 > m = 5"):
        fit_flow(PromptField(OBJ, [0.3, 0.4]), [0], [6], [5])


def test_predict_finite_modes_say_what_their_interval_is():
    base = samples_from_counts([64] * 6, [3, 10, 20, 30, 40, 60], list("abcdef"))
    band = predict_finite(base, OBJ, clock_range=(0.5, 2.0))
    assert "band" in band.summary["interval"] and np.all(band.table.pred_finite_lo <= band.table.pred_finite_hi)
    mean = predict_finite(base, OBJ, mean_reward=0.6)
    assert abs(float(mean.table.pred_finite.mean()) - 0.6) < 2e-3
    assert mean.table.pred_finite_lo.isna().all()


def test_start_logits_and_quantiles():
    z = start_logits([10, 10, 10], [0, 5, 10])
    assert np.allclose(expit(z), [0.5 / 11, 0.5, 10.5 / 11])
    lo, hi = start_quantiles([100], [30])
    assert expit(lo)[0] < 0.3 < expit(hi)[0]
    assert abs((expit(hi)[0] - expit(lo)[0]) / 2 - math.sqrt(0.3 * 0.7 / 100)) < 0.005
    assert np.all(logit(expit(lo)) == lo)
