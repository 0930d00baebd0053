"""The logit-shift baseline of the held-out validation tables, recomputed in tests without the predictor:
the maximum-likelihood shift ``c`` of ``k`` successes in ``m`` trials at ``sigmoid(z0 + c)``, found by a
coarse-to-fine grid search (no root finder)."""

from __future__ import annotations

import numpy as np


def sig(z):
    """``1 / (1 + exp(-z))``."""
    return 1.0 / (1.0 + np.exp(-z))


def shift_grid(z0, k, m):
    """Maximum-likelihood logit shift by a coarse-to-fine grid search (six rounds of 401 points on [-20, 20])."""
    lo, hi = -20.0, 20.0
    for _ in range(6):
        c = np.linspace(lo, hi, 401)
        p = np.clip(sig(z0[None, :] + c[:, None]), 1e-15, 1 - 1e-15)
        ll = (k * np.log(p) + (m - k) * np.log(1 - p)).sum(axis=1)
        j = int(np.argmax(ll))
        step = c[1] - c[0]
        lo, hi = c[j] - step, c[j] + step
    return c[j]
