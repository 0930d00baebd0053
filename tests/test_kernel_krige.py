"""experiments/kernel_krige.py (the ``kernel_krige`` model of the held-out validations) against computations
written here another way: the conditional mean by the precision matrix of the joint normal (not the
covariance form the module uses), the leave-one-out density by deleting each fit prompt and conditioning on
the rest, and a synthetic run whose deviations are drawn from the model (the correction must recover them);
and the guarantees the validations rely on: ``s^2 = 0`` is the ``kernel`` model, nothing of the test half is
read."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import kernel_krige as KK  # noqa: E402


def _kernel(rng, n=10, rank=3):
    G = rng.normal(size=(n, rank))
    return G @ G.T + 1e-3 * np.eye(n)


def _normal_logpdf(x, mean, var):
    return -0.5 * np.log(2 * np.pi * var) - (x - mean) ** 2 / (2 * var)


def test_conditional_mean_by_the_joint_precision():
    """delta_T = E[delta_T | r_F] from the precision matrix Q of (delta_T, r_F): -Q_TT^-1 Q_TF r_F."""
    rng = np.random.default_rng(1)
    K = _kernel(rng)
    train, test = np.arange(0, 10, 2), np.arange(1, 10, 2)
    zhat = rng.normal(size=10)
    y = zhat[train] + rng.normal(scale=0.7, size=train.size)
    v = rng.uniform(0.05, 0.5, size=train.size)
    delta, s2 = KK.krige(K, zhat, y, v, train, test, grid=np.array([0.8]))
    assert s2 == 0.8
    d = np.sqrt(np.diag(K))
    C = K / np.outer(d, d)
    # joint covariance of (delta_T, r_F): r_F = delta_F + e_F
    S = np.block([[s2 * C[np.ix_(test, test)], s2 * C[np.ix_(test, train)]],
                  [s2 * C[np.ix_(train, test)], s2 * C[np.ix_(train, train)] + np.diag(v)]])
    Q = np.linalg.inv(S)
    nt = test.size
    want = -np.linalg.solve(Q[:nt, :nt], Q[:nt, nt:] @ (y - zhat[train]))
    assert np.allclose(delta, want, rtol=1e-9, atol=1e-12)


def test_leave_one_out_density_by_deletion():
    rng = np.random.default_rng(2)
    C = KK.normalised(_kernel(rng, n=7))
    r = rng.normal(size=7)
    v = rng.uniform(0.1, 1.0, size=7)
    for s2 in (0.01, 0.3, 5.0):
        total = 0.0
        for j in range(7):
            o = np.delete(np.arange(7), j)
            A = s2 * C[np.ix_(o, o)] + np.diag(v[o])
            mean = s2 * C[j, o] @ np.linalg.solve(A, r[o])
            var = s2 * C[j, j] + v[j] - s2 ** 2 * C[j, o] @ np.linalg.solve(A, C[o, j])
            total += _normal_logpdf(r[j], mean, var)
        assert KK.loo_log_density(C, r, v, s2) == pytest.approx(total, rel=1e-10)
    # s^2 = 0: each residual is its own noise
    assert KK.loo_log_density(C, r, v, 0.0) == pytest.approx(np.sum(_normal_logpdf(r, 0.0, v)), rel=1e-12)


def test_binomial_noise_on_the_logit_scale():
    y, v = KK.logit_measurement([0, 50, 200], [200, 200, 200])
    q = (np.array([0, 50, 200]) + 0.5) / 201
    assert np.allclose(y, np.log(q / (1 - q))) and np.allclose(v, 1 / (200 * q * (1 - q)))
    # the delta method against the simulated variance of logit q at p = 0.3, m = 200
    rng = np.random.default_rng(3)
    ys, _ = KK.logit_measurement(rng.binomial(200, 0.3, size=200_000), 200)
    assert np.var(ys) == pytest.approx(1 / (200 * 0.3 * 0.7), rel=0.03)
    _, v2 = KK.logit_measurement([50], [200], n_ref=[1600], c_ref=[800])
    assert v2[0] == pytest.approx(1 / (200 * q[1] * (1 - q[1])) + 1 / (1600 * 0.25), rel=1e-12)


def test_zero_amplitude_is_the_kernel_model_and_the_test_half_is_not_read():
    rng = np.random.default_rng(4)
    K = _kernel(rng)
    train, test = np.arange(5), np.arange(5, 10)
    zhat = rng.normal(size=10)
    # residuals that are pure binomial-size noise, tiny: the density prefers no correlated deviation
    v = np.full(5, 1.0)
    y = zhat[train] + 1e-3 * rng.normal(size=5)
    delta, s2 = KK.krige(K, zhat, y, v, train, test)
    assert s2 == 0.0 and np.all(delta == 0.0)
    # changing the test half's zhat (or anything of it) changes nothing of the correction
    y = zhat[train] + rng.normal(size=5)
    d1, s1 = KK.krige(K, zhat, y, v, train, test)
    z2 = zhat.copy()
    z2[test] += 5.0
    d2, s2b = KK.krige(K, z2, y, v, train, test)
    assert s1 == s2b and np.array_equal(d1, d2)


def test_recovers_deviations_drawn_from_the_model():
    """Deviations drawn from N(0, s^2 C) on 40 prompts, observed with binomial-size noise on 20: the correction
    lowers the test half's squared error well below leaving them out (s^2 = 0), over 30 draws."""
    rng = np.random.default_rng(5)
    n = 40
    K = _kernel(rng, n=n, rank=3)
    C = KK.normalised(K)
    train, test = np.arange(0, n, 2), np.arange(1, n, 2)
    L = np.linalg.cholesky(C + 1e-9 * np.eye(n))
    before, after, chosen = [], [], []
    for _ in range(30):
        delta = 1.0 * L @ rng.normal(size=n)
        v = np.full(train.size, 0.05)
        y = delta[train] + rng.normal(scale=np.sqrt(v))
        d, s2 = KK.krige(K, np.zeros(n), y, v, train, test)
        before.append(np.mean(delta[test] ** 2))
        after.append(np.mean((delta[test] - d) ** 2))
        chosen.append(s2)
    assert np.mean(after) < 0.2 * np.mean(before)
    assert 0.2 < np.median(chosen) < 5.0            # the amplitude drawn is 1
