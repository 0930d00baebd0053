r"""Many two-class problems at once: the class-logit drift and the flow's root, vectorised over problems.

A figure that solves a grid of binary questions (Figures 12 and 17: thousands of ``(beta, pi_ref)``
pairs) spends almost all of its time in the Python overhead of one small drift evaluation after
another. Here the problems are stacked: the drift ``s(z) = g(a) - g(b)`` in the class logit
``z = log(pi(a)/pi(b))`` (:meth:`~grpo_theory.solvers.classes.ClassProblem.drift`) is evaluated for
all of them in one call, and :func:`batch_flow_roots` repeats, for every problem at once, exactly the
steps of the scalar :func:`~grpo_theory.solvers.two_class.flow_root_from` from ``z_ref = log(p_a/p_b)``:
the same asinh-spaced scan in the direction of the drift (the same grid, so the same bracket, the
first sign change), then Brent's method with scipy's ``brentq`` iteration and tolerances
(:func:`batch_brentq`, a line-by-line vectorisation of it). The roots are those of
:func:`~grpo_theory.solvers.search.stationary_policy` up to the last bits of the drift values.

Covered: the note's two penalties (reverse, direct) with a reward law, any ``G`` and normalisation,
no tie filtering or entropy bonus (their drift has no jumps and the scan needs none of
``jump_logits``). :func:`supports` says whether a problem is covered; the callers fall back to the
scalar path for the others.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from .. import advantage
from .._numerics import expit, logsumexp
from ..preference import level_expectations
from .._checks import COUNT, checked, function, instance, num, numbers, row_indices, same_length
from ..errors import InvalidInputError
from .classes import ClassProblem, class_problem, covered_problems, penalty_slope
from .collapse import may_collapse
from .two_class import check_points, hidden_bracket, needs_log_space

__all__ = ["TwoClassBatch", "batch_brentq", "batch_flow_roots", "batch_flow_policies", "supports"]

#: ``flow_root_from``'s grid: spacing scale near ``z_ref`` (``dt``), asinh scale, and chunk of the scan.
_DT, _SCALE, _CHUNK = 0.04, 0.5, 24
#: ``two_class._brent``'s tolerances and iteration cap (scipy ``brentq``).
_XTOL, _RTOL, _MAXITER = 1e-14, 1e-15, 200


@checked(cp=class_problem())
def supports(cp: ClassProblem) -> bool:
    """Whether :class:`TwoClassBatch` covers ``cp``: two classes, a reward law, the reverse or direct
    penalty in the loss, no tie filtering and no entropy bonus, and not so extreme a ``beta`` or reward span
    that the drift must be taken in log space (:func:`~grpo_theory.solvers.two_class.needs_log_space`: those go
    to the scalar path).

    Parameters
    ----------
    cp : ClassProblem
        The class problem.
    """
    obj = cp.obj
    return (cp.n_classes == 2 and cp.q.has_reward_law and obj.regime_variant.is_note_penalty
            and not advantage.changes_regulariser(obj) and not needs_log_space(cp))


class TwoClassBatch:
    """A stack of two-class problems whose class-logit drifts are evaluated together.

    Problems whose objectives differ only in ``beta`` and whose questions share the reward levels share
    one call of :func:`~grpo_theory.preference.level_expectations` (``E(w)`` does not depend on
    ``beta``); the penalty term is vectorised over the problems' ``beta``.

    Parameters
    ----------
    problems : sequence of ClassProblem
        Each one covered (:func:`supports`).

    Raises
    ------
    ValueError
        When a problem is not covered (a caller's bug: check :func:`supports` first).

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> cps = [ClassProblem(Question([p, 1 - p], rewards=[1, 0]), Objective(beta=b, group_size=8))
    ...        for p, b in ((0.2, 0.5), (0.7, 0.05))]
    >>> batch = TwoClassBatch(cps)
    >>> z = np.array([0.3, -1.0])
    >>> bool(np.allclose(batch.drift(z), [cp.drift(v) for cp, v in zip(cps, z)], rtol=1e-13, atol=1e-15))
    True
    """

    def __init__(self, problems: Sequence[ClassProblem]) -> None:
        self.problems = covered_problems(problems, supports, "TwoClassBatch")
        n = len(self.problems)
        self.log_p = np.array([cp.log_p for cp in self.problems]).reshape(n, 2)
        self.beta = np.array([cp.obj.beta for cp in self.problems])
        groups: dict = {}
        for i, cp in enumerate(self.problems):
            key = (dataclasses.replace(cp.obj, beta=1.0), tuple(cp.q.reward_levels.tolist()))
            groups.setdefault(key, []).append(i)
        #: (objective with beta = 1, reward levels, indices, R (m, 2, D), log R)
        self._groups = []
        for (obj, levels), idx in groups.items():
            R = np.array([self.problems[i].R for i in idx])
            with np.errstate(divide="ignore"):
                log_R = np.log(R)
            self._groups.append((obj, np.array(levels), np.array(idx), R, log_R))

    def __len__(self) -> int:
        return len(self.problems)

    def _gradient(self, log_pi: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``g(c)`` (see :meth:`ClassProblem.gradient`) for problems ``rows`` at class log-policies ``log_pi``
        ``(len(rows), m, 2)``."""
        g = np.empty_like(log_pi)
        for obj, levels, idx, R, log_R in self._groups:
            sel = np.flatnonzero(np.isin(rows, idx))
            if sel.size == 0:
                continue
            which = np.searchsorted(idx, rows[sel])              # idx is increasing: the group's own rows
            lp = log_pi[sel]                                     # (s, m, 2)
            Rs, log_Rs = R[which], log_R[which]                  # (s, 2, D)
            # as ClassProblem.class_preference: the plain sum where nothing underflows, log space elsewhere
            with np.errstate(divide="ignore"):
                log_w = np.log(np.einsum("smk,skd->smd", np.exp(lp), Rs))
            low = lp.min(axis=(1, 2)) <= -700.0
            if low.any():
                log_w[low] = logsumexp(lp[low][..., :, None] + log_Rs[low][:, None, :, :], axis=-2)
            E = level_expectations(levels, log_w, obj)                       # (s, m, D)
            P = np.einsum("smd,skd->smk", E, Rs)
            beta = self.beta[rows[sel]][:, None, None]
            lr = lp - self.log_p[rows[sel]][:, None, :]
            g[sel] = P - beta * penalty_slope(obj, lr)
        return g

    def drift(self, z: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """``s(z) = g(a) - g(b)`` of problems ``rows`` (default all) at class logits ``z``.

        Parameters
        ----------
        z : numpy.ndarray, shape (n,) or (n, m)
            Class logits, one row per problem of ``rows``.
        rows : numpy.ndarray of int, optional
            Which problems (default: all, in order).

        Returns
        -------
        numpy.ndarray
            The drifts, shaped like ``z``.
        """
        n = len(self.problems) if rows is None else row_indices("rows", rows, len(self.problems))
        if not (z.__class__ is np.ndarray and z.dtype.kind == "f" and z.ndim in (1, 2) and z.shape[0] == n):
            numbers(ndim=(1, 2))("z", z)
            if np.shape(z)[0] != n:
                raise InvalidInputError(f"z must have one row per problem of rows ({n}), got shape {np.shape(z)}")
        z = np.asarray(z, dtype=float)
        rows = np.arange(len(self.problems)) if rows is None else np.asarray(rows)
        zz = z.reshape(z.shape[0], -1)
        log_pi = np.stack([-np.logaddexp(0.0, -zz), -np.logaddexp(0.0, zz)], axis=-1)
        g = self._gradient(log_pi, rows)
        return (g[..., 0] - g[..., 1]).reshape(z.shape)


_BATCH = instance(TwoClassBatch, "a TwoClassBatch", "; build one with TwoClassBatch([ClassProblem(q, obj), ...])")


@checked(f=function(), a=numbers(ndim=1), b=numbers(ndim=1), fa=numbers(ndim=1), fb=numbers(ndim=1),
         xtol=num(0.0, low_open=True), rtol=num(0.0, 1.0), maxiter=COUNT)
def batch_brentq(f, a: np.ndarray, b: np.ndarray, fa: np.ndarray, fb: np.ndarray, xtol: float = _XTOL,
                 rtol: float = _RTOL, maxiter: int = _MAXITER) -> np.ndarray:
    """Brent's method on many brackets at once: scipy's ``brentq`` iteration, vectorised.

    Each bracket ``[a_i, b_i]`` follows the same steps (inverse quadratic interpolation, secant or
    bisection; stop when half the bracket is below ``(xtol + rtol |x|)/2``) as ``scipy.optimize.brentq``
    would on it alone, so, given the same function values, the roots are the same to the bit (tested).

    Parameters
    ----------
    f : callable
        ``f(x, rows) -> values``: the functions of the brackets ``rows`` at ``x`` (both shape ``(k,)``).
    a, b : numpy.ndarray, shape (n,)
        The brackets' ends.
    fa, fb : numpy.ndarray, shape (n,)
        ``f`` at them, of opposite signs (or one zero).
    xtol : float
        As for ``brentq``.
    rtol : float
        As for ``brentq``.
    maxiter : int
        As for ``brentq``; a bracket not converged by then keeps its last iterate (as ``brentq`` with
        ``disp=False``).

    Returns
    -------
    numpy.ndarray, shape (n,)
        The roots.

    Examples
    --------
    >>> r = batch_brentq(lambda x, rows: x**2 - np.array([2.0, 3.0])[rows], np.zeros(2), np.full(2, 2.0),
    ...                  np.array([-2.0, -3.0]), np.array([2.0, 1.0]))
    >>> bool(np.allclose(r, np.sqrt([2.0, 3.0]), rtol=1e-14))
    True
    """
    same_length("the brackets' ends and values", a=a, b=b, fa=fa, fb=fb)
    xpre, xcur = np.array(a, dtype=float), np.array(b, dtype=float)
    fpre, fcur = np.array(fa, dtype=float), np.array(fb, dtype=float)
    n = xpre.size
    root = np.where(fpre == 0, xpre, xcur)
    active = (fpre != 0) & (fcur != 0)
    xblk, fblk = np.zeros(n), np.zeros(n)
    spre, scur = np.zeros(n), np.zeros(n)
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        xp, xc, fp, fc = xpre[idx], xcur[idx], fpre[idx], fcur[idx]
        xb, fb_, sp, sc = xblk[idx], fblk[idx], spre[idx], scur[idx]
        new = (fp != 0) & (fc != 0) & (np.signbit(fp) != np.signbit(fc))
        xb, fb_ = np.where(new, xp, xb), np.where(new, fp, fb_)
        sp = np.where(new, xc - xp, sp)
        sc = np.where(new, xc - xp, sc)
        swap = np.abs(fb_) < np.abs(fc)
        xp, xc, xb = np.where(swap, xc, xp), np.where(swap, xb, xc), np.where(swap, xc, xb)
        fp, fc, fb_ = np.where(swap, fc, fp), np.where(swap, fb_, fc), np.where(swap, fc, fb_)
        delta = (xtol + rtol * np.abs(xc)) / 2
        sbis = (xb - xc) / 2
        done = (fc == 0) | (np.abs(sbis) < delta)
        root[idx[done]] = xc[done]
        active[idx[done]] = False
        with np.errstate(divide="ignore", invalid="ignore"):
            interp = -fc * (xc - xp) / (fc - fp)
            dpre = (fp - fc) / (xp - xc)
            dblk = (fb_ - fc) / (xb - xc)
            extrap = -fc * (fb_ * dblk - fp * dpre) / (dblk * dpre * (fb_ - fp))
        stry = np.where(xp == xb, interp, extrap)
        try_step = (np.abs(sp) > delta) & (np.abs(fc) < np.abs(fp))
        good = try_step & (2 * np.abs(stry) < np.minimum(np.abs(sp), 3 * np.abs(sbis) - delta))
        sp, sc = np.where(good, sc, sbis), np.where(good, stry, sbis)
        xp, fp = xc, fc
        xc = np.where(np.abs(sc) > delta, xc + sc, xc + np.where(sbis > 0, delta, -delta))
        go = ~done
        keep = idx[go]
        xpre[keep], fpre[keep], xblk[keep], fblk[keep] = xp[go], fp[go], xb[go], fb_[go]
        spre[keep], scur[keep], xcur[keep] = sp[go], sc[go], xc[go]
        if keep.size:
            fcur[keep] = f(xc[go], keep)
    root[active] = xcur[active]
    return root


@checked(batch=_BATCH)
def batch_flow_roots(batch: TwoClassBatch) -> tuple[np.ndarray, np.ndarray]:
    """The class logit the logit flow reaches from ``z_ref = log(p_a/p_b)``, for every problem of ``batch``.

    The steps of :func:`~grpo_theory.solvers.two_class.flow_root_from` (``dt = 0.04``, ``chunk = 24``)
    for all problems at once: the drift at ``z_ref``; the asinh-spaced grid from ``z_ref`` to the end of
    :meth:`~grpo_theory.solvers.classes.ClassProblem.logit_bounds` in the drift's direction, scanned in
    chunks until its first sign change; Brent's method on that bracket (:func:`batch_brentq`). Where the
    drift keeps its sign up to the end and the flow may run into a vertex
    (:func:`~grpo_theory.solvers.collapse.may_collapse`), the limit point is that vertex.

    Parameters
    ----------
    batch : TwoClassBatch
        The two-class problems, stacked.

    Returns
    -------
    z : numpy.ndarray, shape (n,)
        The root's class logit; ``+inf`` (class a's vertex) or ``-inf`` (class b's) for a limit point.
    end : numpy.ndarray, shape (n,)
        The scan's end (``logit_bounds`` in the drift's direction), where a limit point's flow speed is read.

    Raises
    ------
    RuntimeError
        Where no root lies between ``z_ref`` and the bound although the flow cannot collapse (a bug, as in
        the scalar path).
    """
    n = len(batch)
    z0 = batch.log_p[:, 0] - batch.log_p[:, 1]
    bounds = np.array([cp.logit_bounds() for cp in batch.problems]).reshape(n, 2)
    s0 = batch.drift(z0)
    z = np.full(n, np.nan)
    z[s0 == 0.0] = z0[s0 == 0.0]
    direction = np.where(s0 > 0, 1.0, -1.0)
    end = np.where(direction > 0, bounds[:, 1], bounds[:, 0])
    span = np.abs(end - z0)
    top = np.arcsinh(span / _SCALE)
    n_grid = np.maximum(8, np.ceil(top / _DT)).astype(np.int64)
    # np.linspace(0, top, n_grid + 1)[1:] row by row: k * (top / n_grid), the last one exactly top
    k = np.arange(1, int(n_grid.max()) + 1)
    t = np.minimum(k[None, :], n_grid[:, None]) * (top / n_grid)[:, None]
    t[np.arange(n), n_grid - 1] = top
    offsets = _SCALE * np.sinh(t)
    offsets[np.arange(n), n_grid - 1] = span
    grid = z0[:, None] + direction[:, None] * offsets                   # padded past n_grid with the end
    pending = np.flatnonzero(s0 != 0.0)
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    prev_z = z0.copy()                                   # the point before the chunk
    for start in range(0, grid.shape[1], _CHUNK):
        pending = pending[start < n_grid[pending]]
        if pending.size == 0:
            break
        zs = grid[pending, start:start + _CHUNK]
        vals = batch.drift(zs, pending)
        inside = start + np.arange(zs.shape[1])[None, :] < n_grid[pending, None]
        cross = (np.sign(vals) != np.sign(s0[pending])[:, None]) & inside
        hit = cross.any(axis=1)
        j = np.argmax(cross, axis=1)[hit]
        rows = pending[hit]
        zj, vj = zs[hit, j], vals[hit, j]
        before = np.maximum(j - 1, 0)
        za = np.where(j == 0, prev_z[rows], zs[hit, before])
        exact = vj == 0
        z[rows[exact]] = zj[exact]
        lo[rows], hi[rows] = np.minimum(za, zj), np.maximum(za, zj)
        rest = ~hit
        pending = pending[rest]
        # the chunk's last point (still pending means the whole chunk lies inside the grid)
        prev_z[pending] = zs[rest, -1]
    _hidden_brackets(batch, z0, grid, n_grid, direction, s0, z, lo, hi)
    todo = np.flatnonzero(np.isnan(z) & ~np.isnan(lo))
    if todo.size:
        # the bracket's ends evaluated afresh, one point per problem, as brentq does: a chunk's drifts can
        # differ from them in the last bits (the level sums are matrix products of another shape), and Brent's
        # iterates follow those bits
        f = lambda x, r: batch.drift(x, todo[r])                                      # noqa: E731
        every = np.arange(todo.size)
        z[todo] = batch_brentq(f, lo[todo], hi[todo], f(lo[todo], every), f(hi[todo], every))
    for i in np.flatnonzero(np.isnan(z)):
        if not may_collapse(batch.problems[i].obj):
            raise RuntimeError(  # the bounds guarantee a root; reaching here is a bug, not a user error
                f"no root of the drift between z0={z0[i]} and {end[i]}; please report this question and objective")
        z[i] = math.copysign(math.inf, direction[i])
    return z, end


def _hidden_brackets(batch: TwoClassBatch, z0: np.ndarray, grid: np.ndarray, n_grid: np.ndarray,
                     direction: np.ndarray, s0: np.ndarray, z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """:func:`~grpo_theory.solvers.two_class.flow_root_from`'s check for a sign change the scan stepped over
    (:func:`~grpo_theory.solvers.two_class.hidden_bracket`), for every problem, the drifts on the check points in
    one call: where one is found, the bracket ``lo``, ``hi`` becomes it (``z`` set where the drift is 0 at its far
    end). In place."""
    rows, reached_rows, fars, checks = [], [], [], []
    for i in np.flatnonzero(s0 != 0.0):
        inside = grid[i, :n_grid[i]]
        far = None
        if not np.isnan(lo[i]):                     # a bracket (or an exact root at its far end)
            near, b = (lo[i], hi[i]) if direction[i] > 0 else (hi[i], lo[i])
            inside = inside[direction[i] * (inside - near) <= 0]
            far = b
        reached = np.concatenate([[z0[i]], inside])
        c = check_points(reached if far is None else np.append(reached, far))
        if c.size:
            rows.append(i), reached_rows.append(reached), fars.append(far), checks.append(c)
    if not rows:
        return
    width = max(c.size for c in checks)
    pad = np.array([np.concatenate([c, np.full(width - c.size, z0[i])]) for i, c in zip(rows, checks)])
    vals = batch.drift(pad, np.array(rows))
    far_vals = batch.drift(np.array([f if f is not None else z0[i] for i, f in zip(rows, fars)]), np.array(rows))
    for k, i in enumerate(rows):
        v = vals[k, :checks[k].size]
        far = None if fars[k] is None else (fars[k], 0.0 if z[i] == fars[k] else float(far_vals[k]))
        found = hidden_bracket(reached_rows[k], float(direction[i]), float(s0[i]), far, checks[k], v)
        if found is None:
            continue
        a, b, j = found
        z[i] = b if v[j] == 0 else np.nan
        lo[i], hi[i] = min(a, b), max(a, b)


@checked(batch=_BATCH)
def batch_flow_policies(batch: TwoClassBatch) -> list[np.ndarray]:
    """The output policy the flow from ``pi_ref`` reaches, per problem of ``batch`` (what
    :func:`~grpo_theory.solvers.search.stationary_policy` returns as ``.pi``).

    Parameters
    ----------
    batch : TwoClassBatch
        As for :func:`batch_flow_roots`.

    Returns
    -------
    list of numpy.ndarray
        ``pi`` over each problem's outputs: ``(expit(z), expit(-z))`` spread within the classes in proportion
        to ``pi_ref`` (:meth:`~grpo_theory.solvers.classes.ClassProblem.expand`), at the root ``z`` of
        :func:`batch_flow_roots`; the vertex itself for a limit point.
    """
    z, _ = batch_flow_roots(batch)
    out = []
    for cp, zi in zip(batch.problems, z.tolist()):
        if math.isinf(zi):                       # a limit point: the vertex itself, as flow_root_from reports it
            out.append(cp.expand(np.array([1.0, 0.0]) if zi > 0 else np.array([0.0, 1.0])))
        else:
            pi = cp.expand(np.array([float(expit(zi)), float(expit(-zi))]))
            out.append(pi / pi.sum())
    return out
