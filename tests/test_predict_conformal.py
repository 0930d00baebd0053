"""The split-conformal predictive interval (grpo_theory.predict.conformal) and its use in predict_finite."""

import math
import warnings

import numpy as np
import pytest

from grpo_theory import Objective
from grpo_theory._numerics import expit, logit
from grpo_theory.errors import InvalidInputError
from grpo_theory.predict import PredictWarning, samples_from_counts
from grpo_theory.predict.calibrate import fit_flow, start_logits
from grpo_theory.predict.conformal import (ConformalOffsets, calibration_split, conformal_interval,
                                           conformal_offsets, jeffreys_logit)
from grpo_theory.predict.coupled import solve_rho
from grpo_theory.predict.field import PromptField
from grpo_theory.predict.finite import predict_finite

OBJ = Objective(beta=0.5, group_size=8)


def test_offsets_are_the_order_statistics_of_the_definition():
    """n = 39 scores at level 0.9: ranks floor(40 * 0.05) = 2 and ceil(40 * 0.95) = 38 of the sorted residuals
    (computed here from the counts by hand, not by the module)."""
    rng = np.random.default_rng(0)
    m = np.full(39, 50)
    k = rng.integers(0, 51, size=39)
    p = rng.uniform(0.05, 0.95, size=39)
    r = sorted(math.log((ki + 0.5) / (50.5 - ki)) - math.log(pi / (1 - pi)) for ki, pi in zip(k, p))
    off = conformal_offsets(p, k, m, level=0.9)
    assert off.calibration == 39
    assert off.q_lo == pytest.approx(r[1], abs=1e-12) and off.q_hi == pytest.approx(r[37], abs=1e-12)


def test_interval_is_the_set_of_counts_inside_the_offsets():
    """Brute force over every count k = 0..m: k/m is inside exactly when q_lo <= g(k, m) - logit p <= q_hi."""
    off = ConformalOffsets(-0.7, 1.3, 0.9, 100)
    for m in (1, 7, 64, 128):
        p = np.array([1e-4, 0.03, 0.2, 0.5, 0.77, 0.99, 1 - 1e-6])
        lo, hi = conformal_interval(p, off, m)
        for j, pj in enumerate(p):
            ks = [kk for kk in range(m + 1) if -0.7 <= jeffreys_logit(kk, m) - logit(pj) <= 1.3]
            if ks:
                assert (lo[j] * m, hi[j] * m) == pytest.approx((min(ks), max(ks)), abs=1e-9), (m, pj)
            else:                       # no whole count inside: the nearest one to the middle
                assert lo[j] == hi[j]


def test_too_few_calibration_prompts_open_the_interval_and_warn():
    """At 90% both ends need n >= 19; with 10 scores the interval is [0, 1] and a PredictWarning says so."""
    with pytest.warns(PredictWarning, match="too few"):
        off = conformal_offsets(np.full(10, 0.5), np.arange(10), np.full(10, 10), level=0.9)
    assert off.q_lo == -math.inf and off.q_hi == math.inf
    lo, hi = conformal_interval([0.3, 0.9], off, 20)
    assert lo.tolist() == [0.0, 0.0] and hi.tolist() == [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        off = conformal_offsets(np.full(19, 0.5), np.arange(19) % 11, np.full(19, 10), level=0.9)
    assert math.isfinite(off.q_lo) and math.isfinite(off.q_hi)


@pytest.mark.parametrize("bad", [dict(p_pred=[], k=[], m=[]), dict(p_pred=[0.5], k=[3], m=[2]),
                                 dict(p_pred=[0.5, 0.5], k=[1], m=[2]), dict(p_pred=[0.5], k=[1], m=[0])])
def test_bad_calibration_input_is_refused(bad):
    with pytest.raises(InvalidInputError):
        conformal_offsets(**bad)
    with pytest.raises(InvalidInputError, match="at least 2"):
        calibration_split(1)


def test_covers_at_its_level_when_the_model_is_wrong():
    """Prompts whose true logits deviate from the prediction (a t-distributed per-prompt error, as real runs
    deviate from any one-parameter flow): over 40 draws of 100 calibration and 400 new prompts, 64 samples
    each, the 90% interval's mean coverage is 0.90 within sampling, and never far below it in one draw."""
    rng = np.random.default_rng(5)
    covers = []
    for _ in range(40):
        z_pred = rng.normal(0.5, 1.5, size=500)
        z_true = z_pred + 0.8 * rng.standard_t(3, size=500) + 0.4
        k = rng.binomial(64, expit(z_true))
        off = conformal_offsets(expit(z_pred[:100]), k[:100], np.full(100, 64), level=0.9)
        lo, hi = conformal_interval(expit(z_pred[100:]), off, 64)
        f = k[100:] / 64
        covers.append(np.mean((lo <= f) & (f <= hi)))
    assert 0.885 <= np.mean(covers) <= 0.94, np.mean(covers)
    assert min(covers) >= 0.8


def _run(seed, N=400, n=128, m=64, rho=0.5, t=2.0, wobble=0.0):
    """A synthetic run from the coupled flow, each prompt's after-logit moved by ``wobble`` times a normal
    deviate (what no flow follows); half the prompts measured."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.6, 1.0, size=N).clip(2e-3, 1 - 2e-3)
    after = solve_rho(PromptField(OBJ, p), rho, np.array([0.0, t]), rtol=1e-9, atol=1e-11).p[-1]
    after = expit(logit(after) + wobble * rng.standard_normal(N))
    c = rng.binomial(n, p)
    meas = np.sort(rng.choice(N, N // 2, replace=False))
    ids = [f"q{i}" for i in range(N)]
    base = samples_from_counts(np.full(N, n), c, ids)
    measured = samples_from_counts(np.full(meas.size, m), rng.binomial(m, after[meas]), [ids[i] for i in meas])
    return base, measured, after, meas, rng


def test_split_fit_matches_a_fit_on_the_flagged_prompts_alone():
    """Fit.p_split (one reweighted replicate of the grid) agrees with fit_flow run on those prompts only."""
    base, measured, after, meas, _ = _run(3)
    z0 = start_logits(base.n, base.correct)
    fld = PromptField(OBJ, expit(z0))
    k, m = measured.correct.astype(float), measured.n.astype(float)
    split = calibration_split(meas.size, seed=1)
    full = fit_flow(fld, meas, k, m, rhos=np.linspace(0, 1, 11), split=split, n_boot=20)
    alone = fit_flow(fld, meas[split], k[split], m[split], rhos=np.linspace(0, 1, 11), n_boot=20)
    assert np.max(np.abs(full.p_split - alone.p)) < 5e-3
    assert np.max(np.abs(full.p_split - full.p)) > 0          # a different fit, not the full one again


def test_predict_finite_reports_both_intervals_and_their_held_out_coverage():
    """A run with per-prompt deviations (wobble 0.8 in logits): on the held-out prompts the conformal interval
    covers near its 90% while the model's own predictive interval, which knows nothing of the deviations,
    covers less; the table carries the conformal columns, ordered."""
    base, measured, after, meas, _ = _run(7, N=600, wobble=0.8)
    fin = predict_finite(base, OBJ, measured, holdout=0.5, seed=0, n_boot=50)
    t = fin.table
    assert np.all(t.pred_finite_conformal_lo <= t.pred_finite_conformal_hi)
    assert t.pred_finite_conformal_lo.between(0, 1).all() and t.pred_finite_conformal_hi.between(0, 1).all()
    conf = fin.summary["conformal"]
    assert conf["calibration"] + conf["fitted_on"] == meas.size and conf["q_lo"] < 0 < conf["q_hi"]
    assert conf["max_centre_shift"] < 0.05
    cov = fin.summary["holdout"]["coverage"]
    assert cov["conformal_calibration"] == 75                 # 300 measured: 150 held out, 150 kept, half of them
    assert 0.83 <= cov["conformal"] <= 0.97, cov
    assert cov["model"] < cov["conformal"] - 0.1, cov


def test_too_few_measured_prompts_leave_the_conformal_columns_open():
    """Two measured prompts: one to fit, one to calibrate, so the 90% interval is [0, 1] (said by a warning)."""
    base, measured, *_ = _run(2, N=40)
    two = samples_from_counts(measured.n[:2], measured.correct[:2], list(measured.prompt_ids[:2]))
    with pytest.warns(PredictWarning, match="too few"):
        fin = predict_finite(base, OBJ, two, n_boot=10)
    assert (fin.table.pred_finite_conformal_lo == 0).all() and (fin.table.pred_finite_conformal_hi == 1).all()
