"""The window tests of the stationarity check: a level shift and a consistent creep across the tail.

:mod:`grpo_theory.convergence` fits one line to the tail of a trajectory. A line misses two things
a run does: a rise that happens *inside* the tail (a step or a sigmoid: the residuals about the
line are so correlated that the line's t test has no power, and the spread about the line reads as
an oscillation), and a creep that is consistent but smaller than the drift tolerance (it goes on
after the run stops). Both are seen in the means of ``W`` consecutive windows of equal step span
that cut the tail, ``m_1, ..., m_W``, with the differences ``d_k = m_{k+1} - m_k``.

Shift
    ``Delta = m_W - m_1``. The noise of a window mean is estimated from the residuals about the
    window means: the median over windows of their variance ``s^2`` and of their lag-1
    autocorrelation ``phi`` (each corrected for its small-sample bias; medians, so that a step
    inside one window does not count as noise) give ``n_eff,k = max(1, n_k (1 - phi - c_k) /
    (1 + phi + c_k))`` with ``c_k = 0.68 / sqrt(n_k)`` (the AR(1) correction of the line test) and
    ``var m_k = s^2 / n_eff,k``. The tail has
    **shifted** when ``|Delta| > drift_tol``, ``|Delta| > t_{1-alpha/2}(n_eff,1 + n_eff,W - 2)
    sqrt(var m_1 + var m_W)``, and the path is mostly one way, ``|Delta| >= 1/2 sum_k |d_k|``
    (an oscillation whose phase happens to differ between the first and last window goes back and
    forth; a step or a rise does not).
Creep
    The tail **creeps** when every ``d_k`` has the same sign, the line's drift over the tail exceeds
    ``creep_tol`` (default ``drift_tol / 4``: a creep that, if it goes on, passes ``drift_tol``
    within four more tails), and the windows do not show an approach that has nearly ended: a line
    fitted to ``log |d_k|`` against ``k`` gives the per-window ratio ``r`` of a geometric approach
    and the fitted last difference ``|d|_{W-1}``; what is left of the approach,
    ``|d|_{W-1} r / (1 - r)`` (infinite for ``r >= 1``), must exceed ``creep_tol``. This
    test asks nothing of the noise: a consistent sign over ``W`` windows is the evidence. Its
    false-positive rate on noise is that of ``W`` means falling in order, ``2 / W!`` for
    independent ones (0.3% at ``W = 6``), more for slow noise whose window means are correlated;
    ``W = 6`` keeps it at 0.3-0.5% at lag-1 autocorrelation 0.9 and 1.3% at 0.97 (2,000 simulated
    200-step tails, sd 0.006, as in ``tests/test_convergence.py``), where ``W = 4`` gives 7% and 10%.
    A caller that tests many prompts at a corrected level (e.g. ``alpha / n_prompts``) gets no
    correction of this test: it has no level to correct.
"""

from __future__ import annotations

import numpy as np

#: Windows that cut the tail for the shift and creep tests.
WINDOWS = 6
#: The default creep tolerance as a fraction of the drift tolerance.
CREEP_FRACTION = 0.25


def window_means(tt: np.ndarray, yy: np.ndarray, windows: int) -> tuple[np.ndarray, np.ndarray]:
    """The tail's window means and each point's window.

    Parameters
    ----------
    tt : numpy.ndarray, shape (n,)
        The tail's steps, increasing.
    yy : numpy.ndarray, shape (n, P)
        The tail's values, one column per prompt.
    windows : int
        ``W``, the number of windows of equal step span.

    Returns
    -------
    means : numpy.ndarray, shape (W, P)
        ``m_k``; NaN for a window without points.
    index : numpy.ndarray of int, shape (n,)
        The window of each point.
    """
    span = tt[-1] - tt[0]
    index = np.minimum(((tt - tt[0]) / span * windows).astype(int), windows - 1)
    counts = np.bincount(index, minlength=windows).astype(float)
    sums = np.zeros((windows, yy.shape[1]))
    np.add.at(sums, index, yy)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None], index


def _window_noise(r: np.ndarray, index: np.ndarray, windows: int) -> tuple[np.ndarray, np.ndarray]:
    """The noise about the window means: the median over windows of each window's residual variance
    (``ddof = 1``) and of its lag-1 autocorrelation, the latter corrected for its small-sample bias
    (``E r_1 ~ phi - (1 + 3 phi) / n``, Marriott and Pope 1954) and clipped to ``[0, 0.99]``. Medians,
    so that a step inside one window does not count as noise."""
    var, phi = [], []
    for k in range(windows):
        e = r[index == k]
        n = e.shape[0]
        ss = (e ** 2).sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            r1 = np.where(ss > 0, (e[1:] * e[:-1]).sum(0) / ss, 0.0)
        var.append(ss / (n - 1))
        phi.append((n * r1 + 1) / max(n - 3, 1))
    return np.median(var, axis=0), np.clip(np.median(phi, axis=0), 0.0, 0.99)


def window_tests(tt: np.ndarray, yy: np.ndarray, *, alpha: float, drift_tol: float, creep_tol: float,
                 line_drift: np.ndarray, windows: int = WINDOWS) -> dict:
    """The shift and creep tests of the module docstring on one tail.

    Parameters
    ----------
    tt : numpy.ndarray, shape (n,)
        The tail's steps, increasing.
    yy : numpy.ndarray, shape (n, P)
        The tail's values.
    alpha : float
        Two-sided level of the shift's test.
    drift_tol : float
        The shift must exceed it.
    creep_tol : float
        The creep's line drift and its remaining approach must exceed it (``np.inf``: no creep test).
    line_drift : numpy.ndarray, shape (P,)
        The drift of the line fitted to the tail (:mod:`grpo_theory.convergence`, step 1).
    windows : int
        ``W`` (>= 3).

    Returns
    -------
    dict
        ``means`` (W, P), ``shift`` (``Delta``), ``shift_se``, ``shifted`` and ``creeping`` (bool, P),
        all False where a window has fewer than 2 points (too few to tell; the line test decides).
    """
    from scipy.stats import t as student_t

    m, index = window_means(tt, yy, windows)
    counts = np.bincount(index, minlength=windows)
    P = yy.shape[1]
    if np.any(counts < 2):
        false = np.zeros(P, dtype=bool)
        return dict(means=m, shift=m[-1] - m[0], shift_se=np.full(P, np.nan), shifted=false, creeping=false)
    delta = m[-1] - m[0]
    s2, phi = _window_noise(yy - m[index], index, windows)
    c = 0.68 / np.sqrt(counts[:, None])
    n_eff = np.maximum(counts[:, None] * (1 - phi - c) / (1 + phi + c), 1.0)    # (W, P)
    se = np.sqrt(s2 / n_eff[0] + s2 / n_eff[-1])
    dof = np.maximum(n_eff[0] + n_eff[-1] - 2, 1.0)
    d = np.diff(m, axis=0)
    one_way = np.abs(delta) >= 0.5 * np.abs(d).sum(0)
    shifted = (np.abs(delta) > drift_tol) & (np.abs(delta) > student_t.ppf(1 - alpha / 2, dof) * se) & one_way
    one_signed = (np.all(d > 0, 0) | np.all(d < 0, 0)) & (np.sign(d[0]) == np.sign(line_drift))
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.arange(windows - 1) - (windows - 2) / 2
        logd = np.log(np.abs(d))                                                 # -inf where d = 0
        slope = k @ (logd - logd.mean(0)) / (k @ k)
        ratio = np.exp(slope)
        last = np.exp(logd.mean(0) + slope * k[-1])                              # the fitted |d_{W-1}|
        left = np.where(ratio < 1, last * ratio / (1 - ratio), np.inf)
    creeping = one_signed & (np.abs(line_drift) > creep_tol) & (left > creep_tol)
    return dict(means=m, shift=delta, shift_se=se, shifted=shifted, creeping=creeping)


def t_quantile(p: float, dof: np.ndarray) -> np.ndarray:
    """Student's ``t`` quantile ``t_p(dof)`` (SciPy, imported on first use)."""
    from scipy.stats import t as student_t

    return student_t.ppf(p, dof)


def chi2_quantile(p: float, dof: np.ndarray) -> np.ndarray:
    """The ``chi2_p(dof)`` quantile (SciPy, imported on first use)."""
    from scipy.stats import chi2

    return chi2.ppf(p, dof)


def time_unit(t: np.ndarray) -> float:
    """The unit the stationarity check measures steps in: 1.0, unless the span of ``t`` is beyond ``1e100`` or
    below ``1e-100`` (its squares would overflow or underflow a double), then the largest ``|t|``. The verdict, the
    drift and the spread do not depend on the unit; the slope per step is reported in the steps given."""
    with np.errstate(over="ignore"):                # steps from -1e308 to 1e308: a span of inf, measured in 1e308
        span = float(t[-1] - t[0])
    return 1.0 if 1e-100 <= span <= 1e100 else float(np.max(np.abs(t)))
