r"""Fit the shared-weights flow to what a user measured, with uncertainty, and predict the other prompts.

A user measured ``k_j`` correct of ``m_j`` samples on some prompts ``j`` after training. Under the model
(:mod:`.coupled`) prompt ``j`` is then at ``P_j(t, rho) = expit(z_j(t; rho))``; the flow time ``t`` (the
run's position on the clock) and, for the one-parameter kernel, ``rho`` are fitted by maximum binomial
likelihood

    L(t, rho) = sum_j k_j log P_j + (m_j - k_j) log(1 - P_j)

on a grid: one integration per ``rho`` (default 0, 0.1, ..., 1) reported at 200 geometric times (with the
base counts, each ``P_j`` term is averaged over the start's uncertainty, see below); the
point estimate is refined by a parabola through the grid maximum and its neighbours in ``log t`` and in
``rho``, then integrated once more. **Uncertainty** is a bootstrap over the measured prompts: each
replicate reweights the per-prompt log-likelihood table (multinomial counts) and takes its maximum on the
grid, so ``n_boot`` replicates cost one matrix product. Intervals for ``t`` and ``rho`` are the replicates'
percentiles.

**The start's uncertainty.** A prompt's ``p_ref`` is known from ``n`` base samples (Jeffreys' posterior). In
the one-parameter model, *test prompts* at the posterior's 15.9% and 84.1% quantiles (start and KL
reference both moved) run in the same integration, feeling the shared update but adding nothing to it.
The fit's likelihood averages each measured prompt's binomial term over the two (two-point Gauss-Hermite
quadrature); without that, start noise biases the fit (on synthetic runs with 128 base samples, ``rho``
0.60 for a true 0.5, its interval missing the truth). For a measured kernel, two extra integrations with
every start moved to one of its quantiles in random antithetic signs stand in (the likelihood is then not
averaged).

**Predictive interval** of an unmeasured prompt (what a measurement of ``m`` samples of it will show): draws
mix the bootstrap's parameters, the start's uncertainty (a normal deviate times the one-sigma response) and
binomial sampling of ``m`` samples. It is not ``p_ref``'s sampling interval (``pred_lo``, ``pred_hi`` of the
stationary prediction).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._checks import POSITIVE_COUNT, SEED, arr, at_most, broadcasts_to, checked, instance, num, checked_record, same_length
from .._numerics import expit, logit
from .._validate import float_array
from ..errors import InvalidInputError
from .coupled import FIT_ARGUMENTS, check_kernel, solve_kernel, solve_rho, start_pair, time_grid
from .field import PromptField
from .samples import check_counts

__all__ = ["Fit", "fit_flow", "fit_flows", "fit_shift", "predictive_interval", "clock_from_mean_reward", "clock_band",
           "start_logits"]

_EPS = 1e-12
GRID_RTOL = 1e-5        # the likelihood grid's integrations; the fit itself is integrated at 1e-6


@checked(n=arr(1, integer=True), correct=arr(0, integer=True))
def start_logits(n, correct) -> np.ndarray:
    """Each prompt's starting logit: ``logit(c/n)``, and for ``c = 0`` or ``c = n`` the Jeffreys posterior
    mean ``(c + 1/2)/(n + 1)`` (inside (0, 1), symmetric in the two classes).

    Parameters
    ----------
    n, correct : array_like of int
        Base samples and correct ones per prompt: one entry each per prompt, of one length (not broadcast).

    Returns
    -------
    numpy.ndarray
        Each prompt's starting logit, finite.
    """
    n = np.asarray(n, dtype=float)
    c = np.asarray(correct, dtype=float)
    same_length("one entry per prompt", n=n, correct=c)     # no broadcasting: one count spread over prompts is a slip
    at_most("correct", c, "n", n)
    p = np.where((c == 0) | (c == n), (c + 0.5) / (n + 1.0), c / np.maximum(n, 1))
    return logit(p)


def _loglik(p: np.ndarray, k: np.ndarray, m: np.ndarray) -> np.ndarray:
    p = np.clip(p, _EPS, 1 - _EPS)
    return k * np.log(p) + (m - k) * np.log1p(-p)


@dataclass(frozen=True)
@checked_record
class Fit:
    """A fitted shared-weights flow and its uncertainty.

    Attributes
    ----------
    model : str
        ``"tabular"`` (``rho = 0``), ``"coupled"`` (``rho`` fitted), ``"kernel"`` (measured ``K``, ``t`` fitted)
        or ``"rho=<value>"`` (a given ``rho``).
    t, t_lo, t_hi : float
        Fitted flow time and its bootstrap interval.
    rho, rho_lo, rho_hi : float
        Fitted (or given) ``rho`` and its interval (NaN for a measured kernel).
    loglik : float
        Binomial log-likelihood at the fit.
    level : float
        Level of the intervals.
    p : numpy.ndarray
        Every prompt's P(correct) at the fit, shape (N,).
    p_draws : numpy.ndarray
        Every prompt's P(correct) at each bootstrap replicate's parameters, shape (B, N).
    z_plus, z_minus : numpy.ndarray
        Every prompt's logit at the fit with its start moved up and down by its posterior's one-sigma
        quantiles (the linearised start uncertainty), shape (N,).
    grid_times, grid_rhos : numpy.ndarray
        The grid the likelihood was evaluated on.
    surface : numpy.ndarray
        ``L`` on the grid, shape (R, T).
    boot_t, boot_rho : numpy.ndarray
        The replicates' maxima.
    p_split : numpy.ndarray or None
        With ``split``: every prompt's P(correct) fitted on the measured prompts marked ``True`` alone (read
        from the grid's paths like a bootstrap replicate), for a conformal calibration on the others.
    """

    model: str
    t: float
    t_lo: float
    t_hi: float
    rho: float
    rho_lo: float
    rho_hi: float
    loglik: float
    level: float
    p: np.ndarray
    p_draws: np.ndarray
    z_plus: np.ndarray
    z_minus: np.ndarray
    grid_times: np.ndarray
    grid_rhos: np.ndarray
    surface: np.ndarray
    boot_t: np.ndarray
    boot_rho: np.ndarray
    info: dict = field(default_factory=dict)
    p_split: np.ndarray | None = None

    def summary(self) -> dict:
        """The fitted numbers as plain floats (for JSON)."""
        return dict(model=self.model, t=self.t, t_lo=self.t_lo, t_hi=self.t_hi, rho=self.rho, rho_lo=self.rho_lo,
                    rho_hi=self.rho_hi, loglik=self.loglik, level=self.level, **self.info)


def _parabola_peak(x: np.ndarray, y: np.ndarray, j: int) -> float:
    """The vertex of the parabola through ``(x, y)`` at ``j - 1, j, j + 1`` (``x[j]`` at an edge)."""
    if j <= 0 or j >= x.size - 1:
        return float(x[j])
    x0, x1, x2 = x[j - 1:j + 2]
    y0, y1, y2 = y[j - 1:j + 2]
    den = (x0 - x1) * (x0 - x2) * (x1 - x2)
    a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / den
    b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / den
    if not a < 0:
        return float(x1)
    return float(np.clip(-b / (2 * a), x0, x2))


def _vertex(x: np.ndarray, y: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`_parabola_peak` for many rows ``y`` (shape (B, X)) at their maxima ``j``, vectorised."""
    j = np.asarray(j)
    out = x[j].astype(float)
    inner = (j > 0) & (j < x.size - 1)
    if not inner.any():
        return out
    b = np.flatnonzero(inner)
    jj = j[b]
    x0, x1, x2 = x[jj - 1], x[jj], x[jj + 1]
    y0, y1, y2 = y[b, jj - 1], y[b, jj], y[b, jj + 1]
    den = (x0 - x1) * (x0 - x2) * (x1 - x2)
    aa = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / den
    bb = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / den
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(aa < 0, np.clip(-bb / (2 * aa), x0, x2), x1)
    out[b] = v
    return out


def _read_paths(paths: np.ndarray, grid: np.ndarray, logt: np.ndarray, rho: np.ndarray, lt: np.ndarray) -> np.ndarray:
    """Logits at (rho_b, log t_b) for every replicate ``b``: bilinear between the grid's paths (shape (R, T, N))."""
    R, T, _ = paths.shape
    if R > 1:
        r0 = np.clip(np.searchsorted(grid, rho, side="right") - 1, 0, R - 2)
        wr = np.clip((rho - grid[r0]) / (grid[r0 + 1] - grid[r0]), 0, 1)
    else:
        r0, wr = np.zeros(rho.size, int), np.zeros(rho.size)
    t0 = np.clip(np.searchsorted(logt, lt, side="right") - 1, 0, T - 2)
    wt = np.clip((lt - logt[t0]) / (logt[t0 + 1] - logt[t0]), 0, 1)
    r1 = np.minimum(r0 + 1, R - 1)
    out = ((1 - wr) * (1 - wt))[:, None] * paths[r0, t0] + ((1 - wr) * wt)[:, None] * paths[r0, t0 + 1] \
        + (wr * (1 - wt))[:, None] * paths[r1, t0] + (wr * wt)[:, None] * paths[r1, t0 + 1]
    return out.astype(float)


@checked(**FIT_ARGUMENTS)
def fit_flow(field: PromptField, index, k, m, *, rhos=None, kernel=None, times=None, z0=None,
             start_sd=None, n_boot: int = 200, level: float = 0.9, seed: int = 0, split=None) -> Fit:
    """Fit the flow time ``t`` (and ``rho``) to measured counts by maximum binomial likelihood, with a bootstrap.

    Parameters
    ----------
    field : PromptField
        Every prompt's own update (``N`` prompts: the training set).
    index : array_like of int
        The measured prompts' positions in ``0..N-1``.
    k, m : array_like of int
        Correct samples and samples of each measured prompt after training.
    rhos : sequence of float, optional
        The ``rho`` grid of the one-parameter kernel (default 0, 0.1, ..., 1); one value fixes ``rho``
        (``[0]``: the tabular flow on a fitted clock).
    kernel : array_like, optional
        A measured ``N x N`` kernel instead of ``rhos`` (only ``t`` is fitted).
    times : array_like, optional
        Flow-time grid (default :func:`~.coupled.time_grid`: 200 geometric times from 1e-3 to 1e4).
    z0 : array_like, optional
        Starting logits (default ``logit p`` of the field).
    start_sd : tuple of array_like, optional
        ``(z_lo, z_hi)``: each prompt's start at its posterior's one-sigma quantiles (see :func:`start_quantiles`);
        without it the start is taken as exact.
    n_boot : int
        Bootstrap replicates over the measured prompts.
    level : float
        Level of the intervals.
    seed : int
        Seed of the bootstrap.
    split : array_like of bool, optional
        One flag per measured prompt: also fit on the ``True`` ones alone (``Fit.p_split``; no extra
        integration).

    Returns
    -------
    Fit
        The fitted flow time ``t`` and ``rho`` (NaN with a measured kernel), their bootstrap intervals, and
        every prompt's P(correct) at the fit.

    Raises
    ------
    InvalidInputError
        An argument not of its type or range (``coupled.FIT_ARGUMENTS``), bad counts, both ``rhos`` and ``kernel``.
    """
    N = field.p.size
    index, k, m = check_counts(index, k, m, N)
    if kernel is not None and rhos is not None:
        raise InvalidInputError("give rhos (the one-parameter kernel) or kernel (a measured one), not both")
    times = time_grid() if times is None else _flow_times(times)
    z0 = field.z_ref.copy() if z0 is None else _starts(z0, N)
    if kernel is not None:
        K = check_kernel(kernel, N)
        grid = np.array([np.nan])

        def solve(_r, ts, start=None, rtol=1e-6, test=None):
            if start is None:
                return solve_kernel(field, K, ts, z0=z0, scaled=True, rtol=rtol, atol=rtol / 100).z, None
            return solve_kernel(field.with_p(expit(start)), K, ts, scaled=True, rtol=rtol, atol=rtol / 100).z, None
        model = "kernel"
    else:
        grid = np.round(np.linspace(0, 1, 11), 10) if rhos is None else np.asarray(rhos, dtype=float).reshape(-1)
        arr(0, 1, ndim=1, distinct=True)("rhos", grid)           # in [0, 1], each value once

        solve = _rho_solver(field, z0)
        model = "coupled" if grid.size > 1 else ("tabular" if grid[0] == 0 else f"rho={grid[0]:g}")
    _check_boot_size(n_boot, index.size, grid.size, times.size)
    ell, paths = _surface(solve, grid, times, index, k, m, N, start_sd)
    return _finish(model, solve, grid, times, ell, paths, index, k, m, N, kernel is not None, start_sd, n_boot,
                   level, seed, split)


def _flow_times(times) -> np.ndarray:
    """``times`` (checked by ``FIT_ARGUMENTS``: increasing, >= 0) as a grid of at least two flow times."""
    t = np.asarray(times, dtype=float)
    if t.size < 2:
        raise InvalidInputError(f"times must hold at least two flow times (a grid the fit interpolates on), got "
                                f"{t.tolist()}")
    return t


def _starts(z0, N: int) -> np.ndarray:
    """``z0`` (already checked as numbers by ``FIT_ARGUMENTS``) as one starting logit per prompt of the field."""
    z = np.asarray(z0, dtype=float)
    if z.shape != (N,):
        raise InvalidInputError(f"z0 must hold one starting logit per prompt of the field ({N}), got shape {z.shape}")
    return z


def _rho_solver(field: PromptField, z0: np.ndarray):
    """``solve(rho, times, start=None, rtol=1e-6, test=None) -> (z, z_test)`` for the one-parameter kernel."""
    def solve(r, ts, start=None, rtol=1e-6, test=None):
        if start is None:
            own = np.allclose(z0, field.z_ref, rtol=0, atol=1e-9)         # starting at the references
            tr = solve_rho(field, float(r), ts, z0=None if own else z0, rtol=rtol,
                           atol=rtol / 100, test_p=None if test is None else expit(test))
        else:
            tr = solve_rho(field.with_p(expit(start)), float(r), ts, rtol=rtol, atol=rtol / 100)
        return tr.z, tr.z_test
    return solve


#: Path values (rhos x times x prompts) above which the shared-weights fit refuses up front: 2e7 (1,000 prompts, 100
#: rhos, 201 times) took 6.3 s of CPU and 0.56 GB; 2e8 ran over 75 s or out of 4 GiB.
MAX_SURFACE_VALUES = 50_000_000


def check_surface_size(N: int, R: int, T: int) -> None:
    """Refuse up front a shared-weights fit of ``N`` prompts at ``R`` values of rho over ``T`` times whose paths'
    table (``R x T x N`` values) would not fit in about 30 s of CPU and 4 GiB (:data:`MAX_SURFACE_VALUES`).

    Parameters
    ----------
    N : int
        The prompts fitted.
    R : int
        The values of rho on the grid.
    T : int
        The flow times.
    """
    if R * T * N > MAX_SURFACE_VALUES:
        raise InvalidInputError(
            f"the shared-weights fit integrates {N:,} prompts at {R:,} values of rho over {T:,} times: {R * T * N:,} "
            f"path values ({R * T * N * 4 / 2**30:.1f} GiB for the paths alone), over the limit of "
            f"{MAX_SURFACE_VALUES:,} (1,000 prompts x 100 rhos: 6 s of CPU; x 1,000 rhos or 10^5 prompts x 11: over "
            "75 s or out of 4 GiB). Give fewer rhos (--rhos), or predict a sample of the prompts (without --measured "
            "every prompt is predicted alone)")


#: Bootstrap values (replicates x (measured prompts + rhos x times)) above which a fit refuses up front: each is a
#: double of the replicates' weights and likelihood surfaces (n_boot = 10^6 at 11 rhos x 201 times: 18 GB).
MAX_BOOT_VALUES = 50_000_000


def _check_boot_size(n_boot: int, M: int, R: int, T: int) -> None:
    """Refuse up front ``n_boot`` replicates whose weights and surfaces would not fit in about 400 MB."""
    if n_boot * (M + R * T) > MAX_BOOT_VALUES:
        raise InvalidInputError(f"n_boot = {n_boot:,} bootstrap replicates of {M:,} measured prompts over {R:,} rhos x "
                                f"{T:,} times hold {n_boot * (M + R * T):,} values ({n_boot * (M + R * T) * 8 / 2**30:.1f} "
                                f"GiB), over the limit of {MAX_BOOT_VALUES:,}; give n_boot <= "
                                f"{MAX_BOOT_VALUES // (M + R * T):,} (200 is the default)")


def _surface(solve, grid, times, index, k, m, N, start_sd=None):
    """The per-prompt log-likelihood table (M, R, T) and the paths (R, T, N). The middle ``rho`` is integrated
    over every time; the others up to 60 grid times (a factor ~130 on the default grid) past its maximum, and
    over every time again if their own maximum falls on that horizon.

    With ``start_sd`` and the one-parameter kernel, each measured prompt's likelihood is averaged over its
    start's uncertainty by two-point Gauss-Hermite quadrature: test prompts at the posterior's one-sigma
    quantiles (reference and start), moving in the same run, weights 1/2 (exact for a likelihood cubic in the
    start's normal deviate). Without it the noise of the starts biases the fit (``rho`` upwards)."""
    R, T = grid.size, times.size
    check_surface_size(N, R, T)
    ell = np.full((index.size, R, T), -1e12)
    paths = np.empty((R, T, N), dtype=np.float32)
    order = [R // 2] + [r for r in range(R) if r != R // 2]
    horizon = T - 1
    test = None
    if start_sd is not None:
        z_lo, z_hi = start_pair(start_sd, N)
        test = np.concatenate([z_hi[index], z_lo[index]])
    for r in order:
        for upto in (horizon, T - 1):
            z, zt = solve(grid[r], times[:upto + 1], rtol=GRID_RTOL, test=test)
            paths[r, :upto + 1] = z
            paths[r, upto + 1:] = z[-1]
            if zt is None:
                ell[:, r, :upto + 1] = _loglik(expit(z[:, index]), k[None, :], m[None, :]).T
            else:
                M = index.size
                up = _loglik(expit(zt[:, :M]), k[None, :], m[None, :])
                down = _loglik(expit(zt[:, M:]), k[None, :], m[None, :])
                ell[:, r, :upto + 1] = (np.logaddexp(up, down) - np.log(2.0)).T
            peak = int(np.argmax(ell[:, r, :].sum(axis=0)))
            if peak < upto or upto == T - 1:
                break
        if r == order[0]:
            horizon = min(T - 1, peak + 60)
    return ell, paths


def _finish(model, solve, grid, times, ell, paths, index, k, m, N, is_kernel, start_sd, n_boot, level, seed,
            split=None) -> Fit:
    """The fit, its bootstrap and the start responses from the likelihood table (see :func:`fit_flow`)."""
    R, T = grid.size, times.size
    surface = ell.sum(axis=0)
    r_hat, t_hat = np.unravel_index(int(np.argmax(surface)), surface.shape)
    logt = np.log(np.where(times > 0, times, times[1] / 10 if times.size > 1 else 1.0))
    t_fit = float(np.exp(_parabola_peak(logt, surface[r_hat], int(t_hat)))) if times[t_hat] > 0 else 0.0
    rho_fit = float(grid[r_hat]) if R == 1 else _parabola_peak(grid, surface[:, t_hat], int(r_hat))
    ts = np.array([0.0, t_fit]) if t_fit > 0 else np.array([0.0])
    z_fit = solve(rho_fit, ts)[0][-1]
    # bootstrap over measured prompts: reweighted sums of the per-prompt log-likelihood table, each
    # replicate's grid maximum refined by parabolas in log t and rho, paths read between grid points
    rng = np.random.default_rng(seed)
    W = rng.multinomial(index.size, np.full(index.size, 1.0 / index.size), size=n_boot).astype(float)
    boot = (W @ ell.reshape(index.size, R * T)).reshape(n_boot, R, T)
    br, bt = np.unravel_index(np.argmax(boot.reshape(n_boot, -1), axis=1), (R, T))
    lt = _vertex(logt, boot[np.arange(n_boot), br, :], bt)
    lr = _vertex(grid, boot[np.arange(n_boot), :, bt], br) if R > 1 else np.full(n_boot, grid[0])
    a = (1 - level) / 2
    boot_t = np.where(times[bt] > 0, np.exp(lt), 0.0)
    boot_rho = lr
    p_draws = expit(_read_paths(paths, grid, logt, lr, lt))
    if start_sd is not None and t_fit > 0 and not is_kernel:
        # every prompt's start (and reference) at its one-sigma quantiles, as test prompts of the fitted run
        z_lo, z_hi = start_pair(start_sd, N)
        zt = solve(rho_fit, ts, test=np.concatenate([z_hi, z_lo]))[1][-1]
        z_plus, z_minus = zt[:N], zt[N:]
    elif start_sd is not None and t_fit > 0:
        # a measured kernel couples given prompts: antithetic signs keep the shared update unchanged on average
        z_lo, z_hi = start_pair(start_sd, N)
        sign = rng.integers(0, 2, size=N).astype(bool)
        up = solve(rho_fit, ts, np.where(sign, z_hi, z_lo))[0][-1]
        down = solve(rho_fit, ts, np.where(sign, z_lo, z_hi))[0][-1]
        z_plus, z_minus = np.where(sign, up, down), np.where(sign, down, up)
    else:
        z_plus = z_minus = z_fit
    p_split = None if split is None else _split_fit(ell, grid, logt, paths, split)
    loglik = float(surface[r_hat, t_hat])
    rho_q = (np.nan, np.nan) if is_kernel else tuple(float(v) for v in np.quantile(boot_rho, [a, 1 - a]))
    t_q = tuple(float(v) for v in np.quantile(boot_t, [a, 1 - a]))
    return Fit(model, t_fit, t_q[0], t_q[1], rho_fit if not is_kernel else np.nan, rho_q[0], rho_q[1], loglik,
               level, expit(z_fit), p_draws, z_plus, z_minus, times, grid, surface, boot_t, boot_rho,
               dict(measured=int(index.size), n_boot=int(n_boot), grid_edge_t=bool(t_hat in (0, T - 1))), p_split)


def _split_fit(ell, grid, logt, paths, split) -> np.ndarray:
    """Every prompt's P(correct) fitted on the measured prompts flagged in ``split`` alone: one replicate with
    weights 1 there and 0 elsewhere, refined and read from the paths as the bootstrap's are."""
    w = np.asarray(split, dtype=bool).reshape(-1)
    if w.size != ell.shape[0] or not w.any():
        raise InvalidInputError(f"split needs one flag per measured prompt ({ell.shape[0]}) and at least one True")
    R, T = ell.shape[1:]
    s = ell[w].sum(axis=0)[None]
    br, bt = np.unravel_index(np.argmax(s.reshape(1, -1), axis=1), (R, T))
    lt = _vertex(logt, s[np.arange(1), br, :], bt)
    lr = _vertex(grid, s[np.arange(1), :, bt], br) if R > 1 else np.full(1, grid[0])
    return expit(_read_paths(paths, grid, logt, lr, lt))[0]


@checked(**{name: rule for name, rule in FIT_ARGUMENTS.items() if name != "kernel"})
def fit_flows(field: PromptField, index, k, m, *, rhos=None, times=None, z0=None, start_sd=None,
              n_boot: int = 200, level: float = 0.9, seed: int = 0, split=None) -> dict:
    """:func:`fit_flow` of the one-parameter model and of the tabular flow (its ``rho = 0`` row), from one grid.

    Parameters
    ----------
    field : PromptField
        As for :func:`fit_flow`.
    index, k, m
        As for :func:`fit_flow`.
    rhos, times, z0, start_sd : optional
        As for :func:`fit_flow` (``rhos`` must contain 0).
    n_boot : int
        As for :func:`fit_flow`.
    level : float
        As for :func:`fit_flow`.
    seed : int
        As for :func:`fit_flow`.
    split : array_like of bool, optional
        As for :func:`fit_flow` (both fits get their ``p_split``).

    Returns
    -------
    dict
        ``{"coupled": Fit, "tabular": Fit}``; the tabular fit is the maximum over the ``rho = 0`` row, with
        the same bootstrap replicates.
    """
    N = field.p.size
    index, k, m = check_counts(index, k, m, N)
    times = time_grid() if times is None else _flow_times(times)
    z0 = field.z_ref.copy() if z0 is None else _starts(z0, N)
    grid = np.round(np.linspace(0, 1, 11), 10) if rhos is None else np.asarray(rhos, dtype=float).reshape(-1)
    if grid.size < 2 or np.any(~np.isfinite(grid)) or np.any((grid < 0) | (grid > 1)) or not np.any(grid == 0):
        raise InvalidInputError(f"rhos must lie in [0, 1], hold 0 and at least one other value, got {grid.tolist()}")
    arr(0, 1, ndim=1, distinct=True)("rhos", grid)

    solve = _rho_solver(field, z0)
    _check_boot_size(n_boot, index.size, grid.size, times.size)
    ell, paths = _surface(solve, grid, times, index, k, m, N, start_sd)
    r0 = int(np.flatnonzero(grid == 0)[0])
    args = (index, k, m, N, False, start_sd, n_boot, level, seed, split)
    return {"coupled": _finish("coupled", solve, grid, times, ell, paths, *args),
            "tabular": _finish("tabular", solve, grid[r0:r0 + 1], times, ell[:, r0:r0 + 1], paths[r0:r0 + 1], *args)}


@checked(n=arr(1, integer=True), correct=arr(0, integer=True))
def start_quantiles(n, correct) -> tuple:
    """Each prompt's start at the 15.9% and 84.1% quantiles of Jeffreys' posterior ``Beta(c + 1/2, n - c + 1/2)``,
    in logits: the one-sigma band of the start carried through the flow by :func:`fit_flow`.

    Parameters
    ----------
    n, correct : array_like of int
        Base samples and correct ones.

    Returns
    -------
    tuple of numpy.ndarray
        ``(z_lo, z_hi)``.
    """
    from scipy.special import betaincinv

    n, c = np.asarray(n, dtype=float), np.asarray(correct, dtype=float)
    at_most("correct", c, "n", n)
    lo = betaincinv(c + 0.5, n - c + 0.5, 0.15865525393145707)
    hi = betaincinv(c + 0.5, n - c + 0.5, 0.8413447460685429)
    return logit(np.clip(lo, 1e-15, 1 - 1e-15)), logit(np.clip(hi, 1e-15, 1 - 1e-15))


@checked(fit=instance(Fit, "a Fit", " (from fit_flow)"), m=arr(1, 2**53, integer=True), level=num(0, 1, low_open=True, high_open=True),
         draws=POSITIVE_COUNT, seed=SEED)
def predictive_interval(fit: Fit, m, *, level: float = 0.9, draws: int = 2, seed: int = 1) -> tuple:
    """The interval a measurement of ``m`` samples of each prompt will fall in, under the fitted model.

    Each draw takes a bootstrap replicate's P(correct), moves the prompt's logit by a normal deviate times its
    start's one-sigma response (``z_plus`` or ``z_minus`` of the fit), and draws ``Binomial(m, P)/m``.

    Parameters
    ----------
    fit : Fit
        From :func:`fit_flow`.
    m : int or array_like of int
        Samples of the measurement predicted (one per prompt, or one for all).
    level : float
        Level of the interval.
    draws : int
        Binomial draws per bootstrap replicate.
    seed : int
        Seed.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lo, hi)`` of the measured fraction, per prompt.
    """
    rng, N = np.random.default_rng(seed), fit.p.size
    broadcasts_to("m", m, (N,), "the fit's prompts")
    m = np.broadcast_to(np.asarray(m, dtype=float), (N,))
    zb = logit(np.clip(fit.p_draws, 1e-15, 1 - 1e-15))
    zb = np.repeat(zb, draws, axis=0)
    eps = rng.standard_normal(zb.shape)
    z_fit = logit(np.clip(fit.p, 1e-15, 1 - 1e-15))
    zb = zb + np.where(eps > 0, eps * (fit.z_plus - z_fit), -eps * (fit.z_minus - z_fit))
    frac = rng.binomial(m.astype(np.int64)[None, :], expit(zb)) / m[None, :]
    a = (1 - level) / 2
    lo, hi = np.quantile(frac, [a, 1 - a], axis=0, method="inverted_cdf")
    return lo, hi


def fit_shift(z0, k, m) -> float:
    """The logit shift ``c`` that maximises the binomial likelihood of ``expit(z0 + c)`` for the counts.

    Parameters
    ----------
    z0 : array_like
        The measured prompts' starting logits.
    k, m : array_like of int
        Their correct samples and samples after training.

    Returns
    -------
    float
        ``c`` (the root of ``sum_j k_j - m_j expit(z0_j + c)``, decreasing in ``c``); +-50 at the edges.
    """
    from scipy.optimize import brentq

    z0 = float_array("z0", z0).reshape(-1)
    k = float_array("k", k, low=0, integer=True).reshape(-1)
    m = float_array("m", m, low=1, integer=True).reshape(-1)
    if not z0.size or not z0.size == k.size == m.size:
        raise InvalidInputError(f"fit_shift needs one z0, k and m per prompt (at least one), got {z0.size} z0, "
                                f"{k.size} k and {m.size} m")
    if np.any(k > m):
        raise InvalidInputError(f"fit_shift needs k <= m, got k > m at prompts {np.flatnonzero(k > m)[:5].tolist()}")

    def score(c):
        return float(np.sum(k - m * expit(z0 + c)))

    if score(-50.0) <= 0:
        return -50.0
    if score(50.0) >= 0:
        return 50.0
    return float(brentq(score, -50.0, 50.0, xtol=1e-12))


def _check_path(times, p_path) -> None:
    """Refuse a path whose rows are not one per time, or times that do not increase."""
    t, P = np.asarray(times, dtype=float), np.asarray(p_path, dtype=float)
    if P.shape[0] != t.size or t.size < 2:
        raise InvalidInputError(f"p_path must have one row per entry of times (at least 2), got {P.shape[0]} rows for "
                                f"{t.size} times")
    if np.any(np.diff(t) <= 0):
        raise InvalidInputError("times must be strictly increasing")


@checked(times=arr(0, ndim=1), p_path=arr(0, 1, ndim=2), mean_reward=num())
def clock_from_mean_reward(times, p_path, mean_reward: float) -> float:
    """The first flow time at which the mean over prompts of ``p_path`` equals ``mean_reward``.

    Parameters
    ----------
    times : array_like
        Flow times, shape (T,).
    p_path : array_like
        P(correct) of every prompt at every time, shape (T, N).
    mean_reward : float
        The run's mean training reward (0/1 rewards: its mean P(correct)).

    Returns
    -------
    float
        The time (linear interpolation between grid times).

    Raises
    ------
    InvalidInputError
        ``mean_reward`` never reached on the grid.
    """
    _check_path(times, p_path)
    t = np.asarray(times, dtype=float)
    curve = np.asarray(p_path, dtype=float).mean(axis=1)
    gap = curve - float(mean_reward)
    if gap[0] == 0:
        return 0.0
    hit = np.flatnonzero(np.sign(gap[:-1]) != np.sign(gap[1:]))
    if hit.size == 0:
        raise InvalidInputError(f"mean_reward={mean_reward:g} is never reached: the mean goes from {curve[0]:.4f} "
                                f"to {curve[-1]:.4f} (range [{curve.min():.4f}, {curve.max():.4f}]) by t = {t[-1]:g}; "
                                "give a mean reward in that range")
    j = int(hit[0])
    return float(t[j] + (t[j + 1] - t[j]) * gap[j] / (gap[j] - gap[j + 1]))


@checked(times=arr(0, ndim=1), p_path=arr(0, 1, ndim=2), t_lo=num(0), t_hi=num(0))
def clock_band(times, p_path, t_lo: float, t_hi: float) -> tuple:
    """Without a measurement: each prompt's lowest and highest P(correct) over flow times in ``[t_lo, t_hi]``.

    Parameters
    ----------
    times : array_like
        Flow times, shape (T,).
    p_path : array_like
        P(correct), shape (T, N).
    t_lo, t_hi : float
        The clock range (``0 <= t_lo <= t_hi``); the grid times inside it and both ends (interpolated) count.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lo, hi)`` per prompt: a band over the range, not an interval of any probability.
    """
    _check_path(times, p_path)
    t = np.asarray(times, dtype=float)
    P = np.asarray(p_path, dtype=float)
    if not (0 <= t_lo <= t_hi <= t[-1]):
        raise InvalidInputError(f"need 0 <= t_lo <= t_hi <= {t[-1]:g}, got {t_lo!r}, {t_hi!r}")
    def at(tt):
        j = int(np.clip(np.searchsorted(t, tt, side="right") - 1, 0, t.size - 2))
        w = (tt - t[j]) / (t[j + 1] - t[j])
        return (1 - w) * P[j] + w * P[j + 1]

    ends = np.array([at(t_lo), at(t_hi)])
    inside = P[(t >= t_lo) & (t <= t_hi)]
    allv = np.vstack([ends, inside])
    return allv.min(axis=0), allv.max(axis=0)
