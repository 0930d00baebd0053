r"""Finite time with shared weights: ``dz_i/dt = sum_j K_ij h_j(z_j)`` for every prompt on one clock.

``z_i = logit P_i(correct)`` and ``h_j`` is prompt ``j``'s own update (:class:`~.field.PromptField`: the
exact expected update of the objective, ``2 x (1 - x) (g_a - g_b)``). An update on prompt ``j`` moves
prompt ``i``'s logit by ``K_ij`` (the inner product of their gradients, the empirical neural tangent
kernel), so the nested models are

* ``K = I``: prompts independent, the tabular flow of :func:`grpo_theory.dynamics.flow` (:mod:`.clock`);
* ``K = 11^T/N``: every logit moves alike (a logit shift, at the speed the theory gives the mean update);
* ``K = (1 - rho) I + rho 11^T/N``, ``0 <= rho <= 1``, between them (:func:`solve_rho`);
* a measured ``K`` (an ``N x N`` positive semi-definite matrix, :func:`solve_kernel`), scaled to mean
  diagonal 1 (the clock absorbs the scale).

**Stationarity with shared weights** (derivation in docs/predict.md, section 7). Each ``h_i = -V_i'`` (a
one-dimensional field is a gradient), so ``V = sum_i V_i`` decreases along the flow,
``dV/dt = -h^T K h <= 0``; ``z(t) - z(0)`` stays in the range of ``K``. The flow stops where ``K h(z) = 0``:
for an invertible ``K`` (every ``rho < 1``) that is ``h_i(z_i) = 0`` for each prompt, the tabular stationary
points (only the path, and for a bistable prompt possibly the basin, change); for ``K = F F^T`` of rank
``r < N`` it is ``F^T h(z(0) + F v) = 0``, ``r`` equations in ``r`` unknowns, the stationary point of ``V``
on the affine set ``z(0) + range K``. For ``K = 11^T/N``: one shift ``s`` with ``sum_i h_i(z_i(0) + s) = 0``
(:func:`shift_stationary`): prompts' KL terms pull against other prompts' rewards.

**Integration.** One-parameter model: the state is ``(u, s)`` with ``z_i = u_i + s``, ``du_i/dt = (1 - rho)
h_i(z_i)``, ``ds/dt = rho mean_j h_j(z_j)``; prompts with the same start share one ``u`` (weighted by their
count), and the Jacobian is an arrow (sparse); above 400 distinct prompts their logits are rounded to
0.01 (:func:`solve_rho`). Measured ``K = V diag(lambda) V^T``: ``z = z(0) + F v``,
``F = V sqrt(lambda)`` over the eigenvalues above ``1e-10 lambda_max``, ``dv/dt = F^T h(z)`` with the
dense ``r x r`` Jacobian ``F^T diag(h') F``. Both with the stiff BDF solver (scipy), ``rtol = 1e-6``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import POSITIVE_COUNT, SEED, arr, checked, flag, flags, instance, num, numbers, checked_record
from .._validate import as_array, float_array
from .._numerics import expit, logit
from ..errors import InvalidInputError
from ..problem import require_regularised
from .field import PromptField

__all__ = ["CoupledTrajectory", "solve_rho", "solve_kernel", "shift_stationary", "check_kernel", "time_grid"]


@dataclass(frozen=True)
@checked_record
class CoupledTrajectory:
    """Every prompt's logit ``z_i(t)`` along the shared-weights flow ``dz/dt = K h(z)``, as :func:`solve_rho`
    or :func:`solve_kernel` integrates it: a row per reported time, a column per prompt.

    Attributes
    ----------
    times : numpy.ndarray
        The reported flow times ``t`` (the solve's ``times``), increasing, shape (T,).
    z : numpy.ndarray
        ``z[k, i] = logit P_i(correct)`` at ``times[k]``, prompts in the field's order, shape (T, N);
        :attr:`p` is its P(correct).
    model : str
        The kernel: ``"rho=<value>"`` for ``K = (1 - rho) I + rho 11^T/N`` (:func:`solve_rho`), ``"kernel"``
        for a measured ``K`` (:func:`solve_kernel`).
    steps : int
        Steps the BDF integrator accepted between 0 and ``times[-1]`` (0 when ``times[-1]`` is 0); they do
        not depend on how many times are reported.
    z_test : numpy.ndarray or None
        The test prompts' logits at ``times`` (``test_p`` of :func:`solve_rho`: they feel the shared update
        but carry no weight in it), shape (T, len(test_p)); None without test prompts.
    """

    times: np.ndarray
    z: np.ndarray
    model: str
    steps: int
    z_test: np.ndarray | None = None

    @property
    def p(self) -> np.ndarray:
        """P(correct) at every time, shape (T, N)."""
        return expit(self.z)


@checked(t_max=num(0, low_open=True), n=POSITIVE_COUNT, t_min=num(0, low_open=True))
def time_grid(t_max: float = 1e4, n: int = 200, t_min: float = 1e-3) -> np.ndarray:
    """``0`` and ``n`` geometric times from ``t_min`` to ``t_max``: the grid the flows are reported on.

    Parameters
    ----------
    t_max : float
        The last positive time.
    n : int
        Positive times, at least 1; one (``n = 1``) is both ends, so ``t_min = t_max`` then.
    t_min : float
        The first positive time: below ``t_max`` where ``n >= 2``.

    Returns
    -------
    numpy.ndarray
        ``n + 1`` increasing times, the first 0.

    Raises
    ------
    InvalidInputError
        A time that is not positive and finite, ``n`` not an integer in ``[1, 10^7]``, ``t_min > t_max``, or
        ``t_min = t_max`` with ``n >= 2`` (``n`` equal times), ``t_min < t_max`` with ``n = 1``.
    """
    if t_min > t_max or (t_min == t_max) != (n == 1):
        want = "t_min = t_max (one time is both ends)" if n == 1 else "t_min < t_max"
        raise InvalidInputError(f"with n = {n} positive times the grid needs {want}, got t_min = {t_min!r} and "
                                f"t_max = {t_max!r}")
    return np.concatenate([[0.0], np.geomspace(float(t_min), float(t_max), int(n))])


#: The argument rules of the fits of a flow to measured counts (:func:`~.calibrate.fit_flow`,
#: :func:`~.calibrate.fit_flows`); the counts themselves are checked by :func:`~.samples.check_counts`.
FIT_ARGUMENTS = dict(field=instance(PromptField, "a PromptField"), rhos=numbers(none=True),
                     kernel=arr(ndim=2, none=True), times=arr(0, ndim=1, increasing=True, none=True),
                     z0=numbers(ndim=1, none=True), n_boot=POSITIVE_COUNT,
                     level=num(0, 1, low_open=True, high_open=True), seed=SEED, split=flags(ndim=1, none=True))


def start_pair(start_sd, N: int) -> tuple[np.ndarray, np.ndarray]:
    """``start_sd = (z_lo, z_hi)`` as two arrays of ``N`` finite start logits each (a fit's one-sigma starts).

    Parameters
    ----------
    start_sd : tuple of array_like
        ``(z_lo, z_hi)``, as :func:`~.calibrate.fit_flow` takes it.
    N : int
        The number of prompts.

    Returns
    -------
    tuple of numpy.ndarray
        ``(z_lo, z_hi)``, each of shape ``(N,)``.

    Raises
    ------
    InvalidInputError
        Anything but a pair of ``N`` finite numbers each, naming ``start_sd``.
    """
    if isinstance(start_sd, (str, bytes, dict)) or not hasattr(start_sd, "__len__") or len(start_sd) != 2:
        raise InvalidInputError(f"start_sd must be a pair (z_lo, z_hi) of arrays of {N} logits, got "
                                f"{type(start_sd).__name__} {str(start_sd)[:80]}")
    z_lo, z_hi = (float_array(f"start_sd[{i}]", v) for i, v in enumerate(start_sd))
    if z_lo.shape != (N,) or z_hi.shape != (N,):
        raise InvalidInputError(f"start_sd must hold {N} logits in each of z_lo and z_hi (one per prompt), got "
                                f"shapes {z_lo.shape} and {z_hi.shape}")
    return z_lo, z_hi


def _z0_error(z0: np.ndarray, N: int) -> InvalidInputError:
    """The error for starting logits ``z0`` that are not ``N`` finite numbers, naming the shape or the first bad one."""
    if z0.size != N:
        return InvalidInputError(f"z0 must hold {N} finite logits (one per prompt), got shape {z0.shape}")
    i = int(np.flatnonzero(~np.isfinite(z0.ravel()))[0])
    return InvalidInputError(f"z0 must hold {N} finite logits (one per prompt), got z0[{i}] = "
                             f"{float(z0.ravel()[i])!r}")


def _check_times(times) -> np.ndarray:
    t = as_array("times", times).reshape(-1)
    if t.size < 1 or not np.all(np.isfinite(t)) or t[0] < 0 or np.any(np.diff(t) <= 0):
        raise InvalidInputError(f"times must be increasing finite numbers >= 0, got {t[:5].tolist()}...")
    return t


def _integrate(rhs, jac, y0, times, rtol, atol):
    from scipy.integrate import solve_ivp

    if times[-1] == 0:
        return np.tile(y0, (times.size, 1)), 0
    # dense_output only to count the accepted steps (its step times); the values at t_eval are the same
    sol = solve_ivp(rhs, (0.0, float(times[-1])), y0, method="BDF", t_eval=times, jac=jac, rtol=rtol, atol=atol,
                    dense_output=True)
    if not sol.success:
        raise RuntimeError(f"the shared-weights flow failed to integrate: {sol.message}")
    return sol.y.T, int(sol.sol.ts.size - 1)


def _arrow(field: PromptField, idx, z_start: np.ndarray, w: np.ndarray, rho: float, t: np.ndarray, rtol, atol):
    """The one-parameter flow of ``U`` representative prompts (references ``field.p[idx]``, starts ``z_start``,
    weights ``w`` summing to 1): logits at the times, shape (T, U), and the steps taken."""
    from scipy import sparse

    U = z_start.size

    def rhs(_t, y):
        h = field.h(y[:U] + y[U], idx)
        return np.concatenate([(1.0 - rho) * h, [rho * (w @ h)]])

    rows = np.concatenate([np.arange(U), np.arange(U), np.full(U, U), [U]])
    cols = np.concatenate([np.arange(U), np.full(U, U), np.arange(U), [U]])

    def jac(_t, y):
        d = field.dh(y[:U] + y[U], idx)
        vals = np.concatenate([(1.0 - rho) * d, (1.0 - rho) * d, rho * w * d, [rho * (w @ d)]])
        return sparse.csc_matrix((vals, (rows, cols)), shape=(U + 1, U + 1))

    ys, steps = _integrate(rhs, jac, np.concatenate([z_start, [0.0]]), t, rtol, atol)
    return ys[:, :U] + ys[:, U:U + 1], steps


@checked(field=instance(PromptField, 'a PromptField'), rho=num(0, 1), times=arr(0, ndim=1), z0=numbers(ndim=1, none=True),
         rtol=num(1e-13, 1), atol=num(1e-30, 1), max_groups=POSITIVE_COUNT, quantum=num(0, low_open=True),
         test_p=arr(0, 1, ndim=1, none=True))
def solve_rho(field: PromptField, rho: float, times, *, z0=None, rtol: float = 1e-6, atol: float = 1e-8,
              max_groups: int = 400, quantum: float = 0.01, test_p=None) -> CoupledTrajectory:
    """The flow with ``K = (1 - rho) I + rho 11^T/N`` from every prompt's ``p_ref`` (or ``z0``).

    Prompts with the same start and reference share one state (weighted by their count). Above ``max_groups``
    distinct ones (starting at their references), each ``logit p_ref`` is rounded to a multiple of
    ``quantum`` (0.01: far below the sampling error of ``p_ref``, a logit standard deviation of at least
    ``2/sqrt(n)``) and the rounded prompts share a state (the test suite measures the error against the
    exact solve).

    Parameters
    ----------
    field : PromptField
        The prompts' own updates (its ``p`` are the references; ``N`` prompts).
    rho : float
        Shared fraction, in ``[0, 1]``: 0 is the tabular flow, 1 a logit shift.
    times : array_like
        Increasing flow times ``>= 0`` to report (e.g. :func:`time_grid`).
    z0 : array_like, optional
        Starting logits (default ``logit p``).
    rtol : float
        Relative tolerance of the BDF solver, in ``[1e-13, 1]`` (below, the solver's own floor).
    atol : float
        Absolute tolerance of the BDF solver, in ``[1e-30, 1]``.
    max_groups : int
        Above this many distinct prompts (and with ``z0`` None), round the logits to ``quantum``.
    quantum : float
        The rounding step in ``logit p_ref``.
    test_p : array_like, optional
        Test prompts (reference = start = each value): they move under their own update and the shared one
        but carry no weight in it (their paths are ``z_test``): what a prompt with another ``p_ref`` would do
        in this run.

    Returns
    -------
    CoupledTrajectory
        Every prompt's logit at ``times`` (and the test prompts', ``z_test``).

    Raises
    ------
    InvalidInputError
        ``rho`` outside ``[0, 1]``, bad ``times`` or ``z0``.
    """
    if not (isinstance(rho, (int, float, np.floating)) and 0.0 <= float(rho) <= 1.0):
        raise InvalidInputError(f"rho must be a number in [0, 1], got {rho!r}")
    rho = float(rho)
    t = _check_times(times)
    start_is_ref = z0 is None
    z0 = field.z_ref.copy() if z0 is None else as_array("z0", z0).reshape(-1)
    N = field.p.size
    if z0.size != N or not np.all(np.isfinite(z0)):
        raise _z0_error(z0, N)
    test = np.zeros(0) if test_p is None else logit(np.asarray(test_p, dtype=float).reshape(-1))
    if not np.all(np.isfinite(test)):
        raise InvalidInputError("test_p must lie in (0, 1)")
    starts = np.concatenate([z0, test])
    refs = np.concatenate([field.z_ref, test])
    if np.unique(np.stack([starts, refs], axis=1), axis=0).shape[0] > max_groups and start_is_ref:
        # many distinct prompts: references (and starts) rounded to a multiple of `quantum` in logit, far
        # below p_ref's own sampling error (a logit sd of at least 2/sqrt(n)); the rounded prompts share a state
        starts = refs = np.round(refs / quantum) * quantum
    uniq, inverse = np.unique(np.stack([starts, refs], axis=1), axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    w = np.bincount(inverse[:N], minlength=uniq.shape[0]) / N        # test prompts carry no weight
    z, steps = _arrow(field.with_p(expit(uniq[:, 1])), None, uniq[:, 0], w, rho, t, rtol, atol)
    z_test = z[:, inverse[N:]] if test_p is not None else None
    return CoupledTrajectory(t, z[:, inverse[:N]], f"rho={rho:g}", steps, z_test)


@checked(K=arr(ndim=2), n=POSITIVE_COUNT)
def check_kernel(K, n: int) -> np.ndarray:
    """A measured kernel checked and scaled: symmetric ``n x n``, positive semi-definite, mean diagonal 1.

    Parameters
    ----------
    K : array_like
        The kernel ``K_ij`` (inner products of the prompts' gradients), in the prompts' order.
    n : int
        The number of prompts.

    Returns
    -------
    numpy.ndarray
        ``K / mean(diag K)``.

    Raises
    ------
    InvalidInputError
        Wrong shape, not finite, not symmetric (to 1e-6 relative), an eigenvalue below ``-1e-6 lambda_max``,
        or a zero diagonal.
    """
    K = np.asarray(K, dtype=float)
    if K.shape != (n, n):
        raise InvalidInputError(f"the kernel must be {n} x {n} (one row and column per prompt), got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise InvalidInputError("the kernel has non-finite entries")
    scale = float(np.mean(np.diag(K)))
    if not scale > 0:
        raise InvalidInputError(f"the kernel's mean diagonal must be > 0, got {scale!r}")
    K = K / scale
    asym = float(np.max(np.abs(K - K.T)))
    if asym > 1e-6 * max(1.0, float(np.max(np.abs(K)))):
        raise InvalidInputError(f"the kernel must be symmetric; largest |K_ij - K_ji| = {asym:.3g} (after scaling)")
    K = (K + K.T) / 2
    lam = np.linalg.eigvalsh(K)
    if lam[0] < -1e-6 * lam[-1]:
        raise InvalidInputError(f"the kernel must be positive semi-definite; smallest eigenvalue {lam[0]:.3g} "
                                f"(largest {lam[-1]:.3g})")
    return K


@checked(field=instance(PromptField, 'a PromptField'), K=arr(ndim=2), times=arr(0, ndim=1), z0=numbers(ndim=1, none=True),
         rtol=num(1e-13, 1), atol=num(1e-30, 1), scaled=flag)
def solve_kernel(field: PromptField, K, times, *, z0=None, rtol: float = 1e-6, atol: float = 1e-8,
                 scaled: bool = False) -> CoupledTrajectory:
    """The flow ``dz/dt = K h(z)`` with a measured kernel.

    Parameters
    ----------
    field : PromptField
        The prompts' own updates, in the kernel's order.
    K : array_like
        ``N x N`` positive semi-definite (see :func:`check_kernel`; scaled to mean diagonal 1 unless ``scaled``).
    times : array_like
        Increasing flow times ``>= 0``.
    z0 : array_like, optional
        Starting logits (default ``logit p``).
    rtol : float
        The BDF solver's relative tolerance, in ``[1e-13, 1]``.
    atol : float
        Its absolute tolerance, in ``[1e-30, 1]``.
    scaled : bool
        ``K`` is already checked and scaled (skips :func:`check_kernel`).

    Returns
    -------
    CoupledTrajectory
        Every prompt's logit at ``times``.
    """
    N = field.p.size
    K = np.asarray(K, dtype=float) if scaled else check_kernel(K, N)
    t = _check_times(times)
    z0 = field.z_ref.copy() if z0 is None else as_array("z0", z0).reshape(-1)
    if z0.size != field.z_ref.size or not np.all(np.isfinite(z0)):
        raise _z0_error(z0, field.z_ref.size)
    lam, V = np.linalg.eigh(K)
    keep = lam > 1e-10 * lam[-1]
    F = V[:, keep] * np.sqrt(lam[keep])

    def rhs(_t, v):
        return F.T @ field.h(z0 + F @ v)

    def jac(_t, v):
        return F.T @ (field.dh(z0 + F @ v)[:, None] * F)

    vs, steps = _integrate(rhs, jac, np.zeros(F.shape[1]), t, rtol, atol)
    return CoupledTrajectory(t, z0[None, :] + vs @ F.T, "kernel", steps)


def _stationary_field(name: str, value) -> None:
    """The argument rule of a stationary query's prompt field: a :class:`PromptField` whose objective is
    regularised (:func:`~grpo_theory.problem.require_regularised`, the one guard of every stationary query)."""
    instance(PromptField, "a PromptField")(name, value)
    require_regularised(value.objective, f"{name}.objective")


@checked(field=_stationary_field, z0=numbers(ndim=1, none=True))
def shift_stationary(field: PromptField, *, z0=None) -> float:
    """The stationary shift of ``K = 11^T/N``: the ``s`` with ``sum_i h_i(z_i(0) + s) = 0``.

    Parameters
    ----------
    field : PromptField
        The prompts' own updates.
    z0 : array_like, optional
        Starting logits (default ``logit p``).

    Returns
    -------
    float
        ``s``; every prompt ends at ``z_i(0) + s``.

    Raises
    ------
    NoStationaryPolicy
        The field's objective is unregularised (``beta = 0``, no entropy bonus): no stationary shift exists.
    InvalidInputError
        No sign change of the summed update on ``[-60, 60]``.
    """
    from scipy.optimize import brentq

    z0 = field.z_ref if z0 is None else as_array("z0", z0)
    if z0.shape != field.z_ref.shape or not np.all(np.isfinite(z0)):
        raise _z0_error(z0, field.z_ref.size)

    def total(s):
        return float(np.sum(field.h(z0 + s)))

    grid = np.linspace(-60, 60, 241)
    vals = np.array([total(s) for s in grid])
    down = np.flatnonzero((vals[:-1] > 0) & (vals[1:] <= 0))    # a stable zero: the sum falls through 0
    if down.size == 0:
        raise InvalidInputError("the summed update has no stable zero for shifts in [-60, 60]: the shift runs off")
    start = total(0.0)
    j = down[np.argmin(np.abs(grid[down]))] if start == 0 else (down[grid[down] >= 0][0] if start > 0 and
                                                                np.any(grid[down] >= 0) else down[grid[down] < 0][-1])
    return float(brentq(total, grid[j], grid[j + 1], xtol=1e-12))
