r"""Split-conformal predictive intervals for the finite-time predictor: calibrated on the measured prompts.

The model's own predictive interval (:func:`~.calibrate.predictive_interval`) carries the fit's, the start's
and the binomial uncertainty. It is calibrated only when the model is right; on real runs prompts deviate from
any one- or two-parameter flow (RL makes some problems worse, others move more than their neighbours), and its
90% interval covered 46% of held-out measurements of a published run. This interval is calibrated from what
the user measured instead.

**Split conformal within the measured prompts.** The measured prompts are split at random into a fitting half
``A`` and a calibration half ``B``. The model fitted on ``A`` alone predicts ``P_j`` for ``j`` in ``B``; the
score of ``j`` is the signed residual in logits of its measured count ``k_j`` of ``m_j`` samples,

    r_j = g(k_j, m_j) - logit P_j,        g(k, m) = logit((k + 1/2) / (m + 1))

(Jeffreys' posterior mean: finite at ``k = 0`` and ``k = m``). With ``n = |B|`` scores sorted
``r_(1) <= ... <= r_(n)`` and ``alpha = 1 - level``, the offsets are

    q_lo = r_(floor((n + 1) alpha / 2)),     q_hi = r_(ceil((n + 1) (1 - alpha / 2)))

(``-inf`` / ``+inf`` where the rank falls outside ``1..n``). For an unmeasured prompt with prediction ``P``,
a new measurement of ``m`` samples lies in the interval when ``q_lo <= g(k, m) - logit P <= q_hi``, i.e.
``k`` between ``ceil((m + 1) expit(logit P + q_lo) - 1/2)`` and ``floor((m + 1) expit(logit P + q_hi) - 1/2)``;
the interval is those ``k / m``. If the prompts (measured and not) are exchangeable and the new measurement
has as many samples as the calibration ones, each one-sided miss has probability at most ``alpha / 2``, so the
interval covers with probability at least ``level`` (the usual split-conformal argument: the new score is
equally likely to take any rank among the ``n + 1``). The interval is centred on the fit to all measured
prompts (``pred_finite``), not on the fit to ``A``; with one or two fitted parameters the two differ little,
and :func:`~.finite.predict_finite` reports the largest difference.

It needs ``n >= 2 / alpha - 1`` calibration prompts for both ends to be finite (19 at ``level = 0.9``);
with fewer, the missing end is 0 or 1 and a :class:`~.samples.PredictWarning` says so.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._checks import POSITIVE_COUNT, SEED, arr, at_most, broadcasts_to, checked, instance, num, same_length, checked_record
from ..errors import InvalidInputError
from .._numerics import expit, logit
from .samples import PredictWarning, check_counts

__all__ = ["ConformalOffsets", "calibration_split", "jeffreys_logit", "conformal_offsets", "conformal_interval"]


@dataclass(frozen=True)
@checked_record
class ConformalOffsets:
    """The calibrated offsets of :func:`conformal_offsets`.

    Attributes
    ----------
    q_lo, q_hi : float
        Lower and upper offsets in logits (``-inf`` / ``+inf`` where too few calibration prompts).
    level : float
        The nominal coverage.
    calibration : int
        Number of calibration prompts ``n``.
    """

    q_lo: float
    q_hi: float
    level: float
    calibration: int

    def summary(self) -> dict:
        """Plain numbers for JSON (``None`` for an infinite offset)."""
        def num(v):
            return float(v) if math.isfinite(v) else None
        return dict(q_lo=num(self.q_lo), q_hi=num(self.q_hi), level=self.level, calibration=self.calibration)


@checked(size=POSITIVE_COUNT, seed=SEED, fraction=num(0, 1, low_open=True, high_open=True))
def calibration_split(size: int, *, seed: int = 0, fraction: float = 0.5) -> np.ndarray:
    """A random split of ``size`` measured prompts: ``True`` for the fitting half, ``False`` for calibration.

    Parameters
    ----------
    size : int
        Number of measured prompts (at least 2).
    seed : int
        Seed of the permutation.
    fraction : float
        Share of the prompts used for calibration, in (0, 1); both sides get at least one prompt.

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the prompt is fitted on.
    """
    if size < 2:
        raise InvalidInputError(f"size = {size}: a calibration split needs at least 2 measured prompts (one to fit, "
                                "one to calibrate)")
    if not 0 < fraction < 1:
        raise InvalidInputError(f"fraction must lie in (0, 1), got {fraction!r}")
    n_cal = min(size - 1, max(1, int(round(fraction * size))))
    perm = np.random.default_rng(seed).permutation(size)
    fit = np.ones(size, dtype=bool)
    fit[perm[:n_cal]] = False
    return fit


@checked(k=arr(0, integer=True), m=arr(1, integer=True))
def jeffreys_logit(k, m) -> np.ndarray:
    """``logit((k + 1/2) / (m + 1))``: a measured fraction in logits, finite at ``k = 0`` and ``k = m``.

    Parameters
    ----------
    k, m : array_like
        Correct samples and samples.

    Returns
    -------
    numpy.ndarray
        The score's transform ``g(k, m)`` of the module docstring.
    """
    k = np.asarray(k, dtype=float)
    m = np.asarray(m, dtype=float)
    at_most("k", k, "m", m)
    return logit((k + 0.5) / (m + 1.0))


@checked(p_pred=arr(0, 1, ndim=1), k=arr(0, integer=True, ndim=1), m=arr(1, integer=True, ndim=1),
         level=num(0, 1, low_open=True, high_open=True))
def conformal_offsets(p_pred, k, m, *, level: float = 0.9) -> ConformalOffsets:
    """The offsets ``q_lo, q_hi`` of the signed logit residuals of calibration prompts (module docstring).

    Parameters
    ----------
    p_pred : array_like
        Each calibration prompt's P(correct) predicted by a fit that did not see it.
    k, m : array_like of int
        Its measured correct samples and samples.
    level : float
        Nominal coverage, in (0, 1).

    Returns
    -------
    ConformalOffsets
        The offsets and the number of calibration prompts.

    Raises
    ------
    InvalidInputError
        Lengths that differ, no prompt, counts outside ``0 <= k <= m``, ``m < 1``, a level outside (0, 1).
    """
    p = np.asarray(p_pred, dtype=float).reshape(-1)
    same_length("one entry per calibration prompt", p_pred=p, k=k, m=m)
    _, k, m = check_counts(np.arange(p.size), k, m, p.size)
    if not 0 < level < 1:
        raise InvalidInputError(f"level must lie in (0, 1), got {level!r}")
    r = np.sort(jeffreys_logit(k, m) - logit(np.clip(p, 1e-15, 1 - 1e-15)))
    n = r.size
    a = (1.0 - level) / 2.0
    i_lo = math.floor((n + 1) * a + 1e-12)
    i_hi = math.ceil((n + 1) * (1.0 - a) - 1e-12)
    q_lo = float(r[i_lo - 1]) if i_lo >= 1 else -math.inf
    q_hi = float(r[i_hi - 1]) if i_hi <= n else math.inf
    if not (math.isfinite(q_lo) and math.isfinite(q_hi)):
        warnings.warn(f"{n} calibration prompt(s) are too few for a finite {level:.0%} conformal interval (need "
                      f"{math.ceil(2 / (1 - level) - 1)}); its open end(s) are 0 or 1", PredictWarning, stacklevel=2)
    return ConformalOffsets(q_lo, q_hi, float(level), int(n))


@checked(p=arr(0, 1), offsets=instance(ConformalOffsets, "a ConformalOffsets", " (from conformal_offsets)"),
         m=arr(1, integer=True))
def conformal_interval(p, offsets: ConformalOffsets, m) -> tuple:
    """Where a new measurement of ``m`` samples of each prompt will fall: the measured fractions ``k / m`` with
    ``q_lo <= g(k, m) - logit p <= q_hi``.

    Parameters
    ----------
    p : array_like
        Each prompt's predicted P(correct) (the centre).
    offsets : ConformalOffsets
        From :func:`conformal_offsets`.
    m : int or array_like of int
        Samples of the measurement (one for all, or one per prompt), at least 1.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lo, hi)`` measured fractions per prompt, ``0 <= lo <= hi <= 1``.
    """
    p = np.asarray(p, dtype=float).reshape(-1)
    broadcasts_to("m", m, p.shape, "p (one m per prompt, or one for all)")
    m = np.broadcast_to(np.asarray(m, dtype=float), p.shape)
    if np.any(m < 1):
        raise InvalidInputError(f"m must be >= 1, got {m[m < 1][:3].tolist()}")
    z = logit(np.clip(p, 1e-15, 1 - 1e-15))
    with np.errstate(over="ignore"):
        up = (m + 1.0) * expit(z + offsets.q_hi) - 0.5
        down = (m + 1.0) * expit(z + offsets.q_lo) - 0.5
    k_hi = np.clip(np.floor(up + 1e-9), 0, m)
    k_lo = np.clip(np.ceil(down - 1e-9), 0, m)
    # an interval with no whole count in it (offsets closer than one count) keeps the count nearest its middle
    empty = k_lo > k_hi
    if np.any(empty):
        mid = np.clip(np.round((m + 1.0) * expit(z + (offsets.q_lo + offsets.q_hi) / 2) - 0.5), 0, m)
        k_lo = np.where(empty, mid, k_lo)
        k_hi = np.where(empty, mid, k_hi)
    return k_lo / m, k_hi / m
