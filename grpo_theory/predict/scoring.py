"""Scoring predictions of P(correct) against measured counts: MAE, Brier, bootstrap intervals, the sampling floor.

A held-out prompt ``j`` was measured ``k_j`` correct of ``m_j``; ``f_j = k_j / m_j``. For a prediction ``q_j``:

* ``MAE = mean_j |q_j - f_j|``;
* ``Brier = mean_j [(q_j - f_j)^2 + f_j (1 - f_j)]``, the mean over each prompt's ``m_j`` samples of
  ``(q_j - y)^2`` (a proper score: an exact predictor minimises its expectation);
* intervals: percentiles of a bootstrap over held-out prompts, the same resamples for every model (so the
  models' intervals and the differences between them are comparable);
* the **sampling floor**: the MAE an exact predictor would still show, ``mean_j E|Bin(m_j, q_j)/m_j - q_j|``,
  summed exactly over the binomial (at the given ``q``: the best model's predictions).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._checks import POSITIVE_COUNT, SEED, arr, at_most, checked, mapping, num, same_length, text
from .._validate import as_array, float_array
from ..errors import InvalidInputError

#: The most binomial terms :func:`sampling_floor` sums (``sum_j (m_j + 1)``, held in memory at once per m).
MAX_FLOOR_TERMS = 20_000_000

__all__ = ["score_table", "sampling_floor"]


def sampling_floor(q, m) -> float:
    """``mean_j E|Bin(m_j, q_j)/m_j - q_j|``, by exact summation over the binomial.

    Parameters
    ----------
    q : array_like
        True P(correct) per prompt (in practice: a model's prediction).
    m : array_like of int
        Samples of each measurement.

    Returns
    -------
    float
        The mean absolute error that a model knowing ``q`` exactly still makes against measurements of ``m``
        samples.

    Raises
    ------
    InvalidInputError
        ``q`` outside [0, 1], ``m`` not a whole number >= 1, one ``m`` per ``q`` missing, or more than
        :data:`MAX_FLOOR_TERMS` terms to sum.

    Examples
    --------
    >>> round(sampling_floor([0.5], [2]), 6)      # |0 - .5| /4 + 0 /2 + |1 - .5| /4
    0.25
    """
    q = float_array("q", q, low=0.0, high=1.0).reshape(-1)
    m_in = float_array("m", m, low=1, integer=True).reshape(-1)
    if q.size == 0 or m_in.size not in (1, q.size):
        raise InvalidInputError(f"sampling_floor needs one m per q (or one m for all), got {q.size} q and "
                                f"{m_in.size} m")
    m = np.broadcast_to(m_in, q.shape)
    if float(np.sum(m + 1.0)) > MAX_FLOOR_TERMS:
        raise InvalidInputError(f"sampling_floor sums m_j + 1 binomial terms per prompt exactly: "
                                f"{float(np.sum(m + 1.0)):,.0f} terms, above the limit of {MAX_FLOOR_TERMS:,}; "
                                f"give fewer samples m")
    return _floor(q, m)


def _floor(q: np.ndarray, m: np.ndarray) -> float:
    """:func:`sampling_floor` on checked 1-d arrays (``q`` in [0, 1], ``m`` whole and >= 1, of one size)."""
    from scipy.special import gammaln

    q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0)
    m = np.broadcast_to(np.asarray(m, dtype=float), q.shape)
    out = np.empty(q.size)
    for mm in np.unique(m):
        sel = m == mm
        kk = np.arange(int(mm) + 1, dtype=float)
        qq = q[sel][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            logpmf = (gammaln(mm + 1) - gammaln(kk + 1) - gammaln(mm - kk + 1)
                      + np.where(kk > 0, kk * np.log(qq), 0.0) + np.where(mm - kk > 0, (mm - kk) * np.log1p(-qq), 0.0))
        pmf = np.nan_to_num(np.exp(logpmf))
        out[sel] = (pmf * np.abs(kk / mm - qq)).sum(axis=1)
    return float(out.mean())


@checked(predictions=mapping(), k=arr(0, integer=True), m=arr(1, integer=True), n_boot=POSITIVE_COUNT,
         level=num(0, 1, low_open=True, high_open=True), seed=SEED, reference=text(none=True))
def score_table(predictions: dict, k, m, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0,
                reference: str | None = None) -> pd.DataFrame:
    """MAE and Brier of each model on the same held-out prompts, with bootstrap intervals.

    Parameters
    ----------
    predictions : dict
        ``{model name: predicted P(correct) per held-out prompt}``.
    k, m : array_like of int
        The held-out prompts' measured counts.
    n_boot : int
        Bootstrap replicates over held-out prompts.
    level : float
        Level of the intervals.
    seed : int
        Seed of the bootstrap.
    reference : str, optional
        A model name: also the difference of every model's MAE from its MAE, with its interval (paired).

    Returns
    -------
    pandas.DataFrame
        One row per model: ``model, mae, mae_lo, mae_hi, brier, brier_lo, brier_hi`` (and ``mae_minus_<ref>``,
        ``..._lo``, ``..._hi``), ``prompts``, ``floor`` (the sampling floor at that model's predictions).

    Raises
    ------
    InvalidInputError
        Predictions of a different length than the counts, bad counts, an unknown ``reference``.
    """
    k = np.asarray(k, dtype=float).reshape(-1)
    m = np.asarray(m, dtype=float).reshape(-1)
    same_length("one of each per held-out prompt", k=k, m=m)
    at_most("k", k, "m", m)
    if reference is not None and reference not in predictions:
        raise InvalidInputError(f"reference {reference!r} is not one of the models {list(predictions)}")
    f = k / m
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, f.size, size=(n_boot, f.size))
    a = (1 - level) / 2
    errs = {}
    rows = []
    for name, q in predictions.items():
        q = as_array(f"predictions[{name!r}]", q).reshape(-1)
        if q.size != f.size:
            raise InvalidInputError(f"model {name!r}: {q.size} predictions for {f.size} held-out prompts")
        ae = np.abs(q - f)
        br = (q - f) ** 2 + f * (1 - f)
        errs[name] = ae
        mae_b, br_b = ae[idx].mean(axis=1), br[idx].mean(axis=1)
        rows.append(dict(model=name, prompts=int(f.size), mae=float(ae.mean()),
                         mae_lo=float(np.quantile(mae_b, a)), mae_hi=float(np.quantile(mae_b, 1 - a)),
                         brier=float(br.mean()), brier_lo=float(np.quantile(br_b, a)),
                         brier_hi=float(np.quantile(br_b, 1 - a)), floor=_floor(q, m)))
    if reference is not None:
        for row in rows:
            d = errs[row["model"]] - errs[reference]
            db = d[idx].mean(axis=1)
            row[f"mae_minus_{reference}"] = float(d.mean())
            row[f"mae_minus_{reference}_lo"] = float(np.quantile(db, a))
            row[f"mae_minus_{reference}_hi"] = float(np.quantile(db, 1 - a))
    return pd.DataFrame(rows)
