"""``kernel_krige``: the measured-kernel flow corrected by the scored run's own residuals on its measured half.

Used by ``predict_validation.py`` (SmolLM2) and ``predict_validation_gpt.py`` (small GPT) as a model beside
``kernel``, with the same halves, floors and verdict rule; ``predict_krige_seed_runs.py`` applies it to the
small GPT's repeated seeds. Pure numpy; no fitted quantity sees a held-out prompt.

Derivation (notation of docs/predict.md, section 5: ``z_i = logit P_i(correct)``, ``K_ij`` the kernel measured
at the base model). The ``kernel`` model integrates ``dz_i/dt = sum_j K_ij h_j(z_j)`` on one clock fitted to the
measured half ``F`` and gives ``zhat_i`` for every prompt. A run is not the flow: its own sampling and the
kernel's change along training move prompt ``i`` off ``zhat_i`` by ``delta_i = z_i - zhat_i``. Where a deviation
comes from what the prompts share, it is correlated between prompts as their gradients are: a perturbation
``epsilon`` of the weights moves the logits by ``G epsilon`` (``G`` the per-prompt gradients of ``z``, ``K = G
G^T``), with covariance ``K`` for an isotropic ``epsilon``. Its correlations are the normalised kernel

    C = D^-1/2 K D^-1/2,    D = diag(K),    C_ij = K_ij / sqrt(K_ii K_jj),

(the weights of ``predict_seed_floor.py``'s kernel transfer, whose correlation with a seed's own deviation was
measured there); the normalisation gives every prompt the same prior scale (``K_ii`` is the size of a prompt's
gradient, not how far training moved it off the flow). Model: ``delta ~ N(0, s^2 C)``, one unknown amplitude
``s^2``. The measurement of a fit prompt ``j`` (``k_j`` correct of ``m_j``) is read on the kernel's own scale,
the logit: ``y_j = logit q_j``, ``q_j = (k_j + 1/2) / (m_j + 1)``, with ``y_j = z_j + e_j``, ``e_j ~ N(0,
v_j)``, ``v_j = 1 / (m_j q_j (1 - q_j))`` (the binomial variance carried to the logit by the delta method; where
the start ``p_ref`` is itself sampled, ``n_ref`` samples, its variance ``1 / (n_ref q_ref (1 - q_ref))`` is
added: an error of the start moves ``zhat_j``, to first order one for one). The residuals ``r_F = y_F - zhat_F``
are then ``N(0, s^2 C_FF + V)``, ``V = diag(v)``, jointly normal with ``delta_T`` (``cov = s^2 C_TF``), and the
conditional mean is

    delta_T = s^2 C_TF (s^2 C_FF + V)^-1 r_F  =  C_TF (C_FF + sigma^2 V)^-1 r_F,   sigma^2 = 1 / s^2.

The prediction is ``P_T = expit(zhat_T + delta_T)``: the posterior median of ``P`` (``expit`` is monotone and
the posterior of ``z_T`` normal), the point that minimises the expected absolute error the validation scores.
``s^2 = 0`` is the ``kernel`` model itself. The one parameter ``s^2`` is chosen on the fit half alone, by the
leave-one-out predictive log density of its residuals (Rasmussen & Williams, *Gaussian Processes for
Machine Learning*, eq. 5.10-5.12): with ``A = s^2 C_FF + V``, leaving ``j`` out predicts ``r_j`` with mean
``r_j - [A^-1 r]_j / [A^-1]_jj`` and variance ``1 / [A^-1]_jj``; ``s^2`` maximises the sum of the log normal
densities over ``j`` on the grid ``S2_GRID`` (0 and 40 geometric values from 1e-3 to 1e2; ties to the
smaller). ``s^2 = 0`` wins where the residuals look like binomial noise or the kernel does not carry them.

Limits: the normal model of ``logit q`` is poor at counts of 0 or ``m`` (``q`` is then pulled to ``1/(2m)``
and ``v`` is large, which keeps such residuals from counting much); ``C`` is the base model's, though the
kernel moves along training; the clock's fit is not refitted with the correction (the residuals are taken at
the ``kernel`` model's fitted clock). Measured (docs/results.md, "The run's own measured half"): near
stationarity on the small GPT the leave-one-out choice on 8 prompts often takes ``s^2 > 0`` on what is sampling
noise, and the correction adds error the ``kernel`` model did not have.
"""

from __future__ import annotations

import numpy as np

#: the candidate amplitudes ``s^2`` of the deviations (logit units squared): 0 (the ``kernel`` model) and a
#: geometric grid
S2_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 1e2, 40)])


def normalised(K) -> np.ndarray:
    """``C = D^-1/2 K D^-1/2`` (``D = diag K``)."""
    K = np.asarray(K, dtype=float)
    d = np.sqrt(np.diag(K))
    if not np.all(d > 0):
        raise ValueError("the kernel needs a positive diagonal")
    return K / np.outer(d, d)


def logit_measurement(k, m, n_ref=None, c_ref=None) -> tuple[np.ndarray, np.ndarray]:
    """``(y, v)``: ``logit q`` of the counts (``q = (k + 1/2)/(m + 1)``) and its variance ``1/(m q (1 - q))``,
    plus ``1/(n_ref q_ref (1 - q_ref))`` when the start's counts ``c_ref`` of ``n_ref`` are given."""
    k, m = np.asarray(k, dtype=float), np.asarray(m, dtype=float)
    q = (k + 0.5) / (m + 1.0)
    v = 1.0 / (m * q * (1.0 - q))
    if n_ref is not None:
        n_ref, c_ref = np.asarray(n_ref, dtype=float), np.asarray(c_ref, dtype=float)
        qr = (c_ref + 0.5) / (n_ref + 1.0)
        v = v + 1.0 / (n_ref * qr * (1.0 - qr))
    return np.log(q) - np.log1p(-q), v


def loo_log_density(C_ff: np.ndarray, r: np.ndarray, v: np.ndarray, s2: float) -> float:
    """Sum over the fit prompts of the log density of ``r_j`` under the model conditioned on the others."""
    A = s2 * C_ff + np.diag(v)
    Ai = np.linalg.inv(A)
    prec = np.diag(Ai)
    resid = (Ai @ r) / prec                     # r_j minus its leave-one-out mean
    return float(np.sum(0.5 * np.log(prec / (2 * np.pi)) - 0.5 * prec * resid ** 2))


def krige(K, zhat: np.ndarray, y_fit: np.ndarray, v_fit: np.ndarray, train, test,
          grid=S2_GRID) -> tuple[np.ndarray, float]:
    """``(delta_test, s2)``: the deviations carried to ``test`` from the residuals ``y_fit - zhat[train]``, with
    ``s2`` chosen by the leave-one-out density on ``train`` alone (see the module docstring)."""
    train, test = np.asarray(train, dtype=int), np.asarray(test, dtype=int)
    C = normalised(K)
    C_ff, C_tf = C[np.ix_(train, train)], C[np.ix_(test, train)]
    r = np.asarray(y_fit, dtype=float) - np.asarray(zhat, dtype=float)[train]
    v = np.asarray(v_fit, dtype=float)
    scores = [loo_log_density(C_ff, r, v, s2) for s2 in grid]
    s2 = float(grid[int(np.argmax(scores))])
    if s2 == 0.0:
        return np.zeros(test.size), 0.0
    return s2 * C_tf @ np.linalg.solve(s2 * C_ff + np.diag(v), r), s2
