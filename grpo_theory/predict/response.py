"""The stationary P(correct) of a binary prompt as a function of its ``p_ref``: ``x(p)``, solved once per value.

Every binary prompt is the two-class question ``Question([p, 1 - p], rewards=[1, 0])`` (within the
correct class, and within the wrong one, the stationary policy keeps ``pi_ref``'s proportions, so only
the class masses matter). Prompts with the same ``p`` share one solve. When a dataset has more distinct
values than ``max_exact``, ``x`` is solved on a grid in ``logit(p)`` and interpolated by a cubic spline
(not-a-knot); the interpolant is checked at every cell's midpoint against an exact solve, and failing
cells are halved until the error at every midpoint is below ``tol/4`` (a margin for the error between
check points); values in a cell that never passed are solved exactly. The test suite measures the
error at every queried value against the closed form.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import OBJECTIVE, POSITIVE_COUNT, checked, flag, num, optional
from .._numerics import expit, logit
from ..problem import InvalidInputError, Objective, Question
from ..solvers import stationary_policy

__all__ = ["P_FLOOR", "binary_question", "Response"]

#: ``p_ref = 0+`` (a prompt never solved, whose true ``p_ref`` is small but not 0) is evaluated here.
P_FLOOR = 1e-12


def binary_question(p: float) -> Question:
    """The two-class question of a prompt solved with probability ``p``: correct (reward 1) and wrong (0).

    Parameters
    ----------
    p : float
        ``p_ref``, the base model's P(correct), in ``[0, 1]``.

    Returns
    -------
    Question
        ``pi_ref = (p, 1 - p)``, rewards ``(1, 0)``.

    Examples
    --------
    >>> binary_question(0.25).pi_ref.tolist()
    [0.25, 0.75]
    """
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)) \
            or not 0.0 <= p <= 1.0:
        raise InvalidInputError(f"p (p_ref, the base model's P(correct)) must be a number in [0, 1], got {p!r}")
    return Question([p, 1.0 - p], rewards=[1.0, 0.0])


class Response:
    """``x(p)``: the stationary P(correct) the flow from ``pi_ref`` reaches, with every exact solve cached.

    Calling it on an array of ``p`` solves exactly up to ``max_exact`` distinct values; beyond, it
    interpolates on a grid in ``logit p`` whose error at every cell midpoint is checked below ``tol``.

    Parameters
    ----------
    obj : Objective
        The GRPO objective (kept as the attribute ``objective``).
    tol : float
        Largest interpolation error allowed at a cell midpoint (grid path).
    max_exact : int
        Most distinct ``p`` solved exactly before the grid is used.
    progress : bool or None
        tqdm progress bars (None: only for many values).

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> x = Response(Objective(beta=1.0, group_size=2)).solve(0.25)
    >>> round(x, 6)                            # G = 2, beta = gamma = 1: x = sqrt(p) (Eq. 14)
    0.5
    """

    @checked(obj=OBJECTIVE, tol=num(0, 1, low_open=True), max_exact=POSITIVE_COUNT, progress=optional(flag))
    def __init__(self, obj: Objective, *, tol: float = 1e-6, max_exact: int = 400, progress=None) -> None:
        self.objective = obj
        self.tol = float(tol)
        self.max_exact = int(max_exact)
        self.progress = progress
        self._solve_policy = stationary_policy
        self.exact: dict[float, float] = {}
        self.n_solves = 0
        self.max_check_error = 0.0           # largest midpoint error of the interpolation (grid path only)
        self.used_grid = False

    @checked(p=num(0, 1))
    def solve(self, p: float) -> float:
        """``x(p)`` by an exact solve (cached); ``x(1) = 1``.

        Parameters
        ----------
        p : float
            ``p_ref`` in ``(0, 1]``.

        Returns
        -------
        float
            The stationary ``x(p)``, in ``[0, 1]``.
        """
        p = float(p)
        if p >= 1.0:
            return 1.0
        if p in self.exact:
            return self.exact[p]
        x = float(self._solve_policy(binary_question(p), self.objective).pi[0])
        self.exact[p] = x
        self.n_solves += 1
        return x

    def _bar(self, total: int, desc: str):
        from tqdm.auto import tqdm

        disable = (total < 200) if self.progress is None else not self.progress
        return tqdm(total=total, desc=desc, disable=disable, leave=False)

    def _solve_many(self, ps, desc: str) -> np.ndarray:
        ps = np.asarray(ps, dtype=float)
        out = np.empty(ps.size)
        with self._bar(ps.size, desc) as bar:
            for i, p in enumerate(ps):
                out[i] = self.solve(p)
                bar.update()
        return out

    def __call__(self, ps) -> np.ndarray:
        """``x`` at every ``p`` in ``ps``.

        Parameters
        ----------
        ps : array_like
            Values in ``(0, 1]``; ``P_FLOOR`` stands for ``0+``.

        Returns
        -------
        numpy.ndarray
            ``x(p)``, shaped like ``ps``.
        """
        ps = np.asarray(ps, dtype=float)
        uniq, inverse = np.unique(ps, return_inverse=True)
        inner = uniq[uniq < 1.0]
        if inner.size <= self.max_exact:
            vals = self._solve_many(inner, "x(p_ref), exact")
        else:
            vals = self._grid(inner)
        full = np.ones(uniq.size)
        full[: inner.size] = vals
        return full[inverse].reshape(ps.shape)

    def _grid(self, inner: np.ndarray) -> np.ndarray:
        from scipy.interpolate import CubicSpline

        self.used_grid = True
        u = logit(inner)
        nodes = np.linspace(float(u.min()), float(u.max()), 65)
        vals = dict(zip(nodes.tolist(), self._solve_many(expit(nodes), "x(p_ref), grid")))
        mids: dict[float, float] = {}
        bad = np.zeros(0, dtype=bool)
        for _ in range(10):
            # the interpolant that will be used is checked at every cell's midpoint (midpoints are not nodes)
            xs = np.array(sorted(vals))
            interp = CubicSpline(xs, [vals[v] for v in xs])
            m = (xs[:-1] + xs[1:]) / 2
            new = [v for v in m.tolist() if v not in mids]
            mids.update(zip(new, self._solve_many(expit(np.array(new)), "x(p_ref), grid check").tolist()))
            err = np.abs(interp(m) - np.array([mids[v] for v in m.tolist()]))
            bad = err > self.tol / 4                 # a margin: the error between checks can exceed the midpoint's
            self.max_check_error = float(err[~bad].max(initial=0.0))
            if not bad.any():
                break
            vals.update((v, mids[v]) for v in m[bad].tolist())
        out = interp(u)
        cells = np.searchsorted(xs, u, side="right") - 1
        unchecked = bad[np.clip(cells, 0, bad.size - 1)] if bad.size else np.zeros(u.size, bool)
        if unchecked.any():                          # cells that never passed the check: exact solves
            out[unchecked] = self._solve_many(inner[unchecked], "x(p_ref), exact in unchecked cells")
        return out

    def monotone(self) -> bool:
        """Whether every exact solve so far is non-decreasing in ``p`` (checked, not assumed)."""
        if len(self.exact) < 2:
            return True
        ps = np.array(sorted(self.exact))
        xs = np.array([self.exact[p] for p in ps])
        return bool(np.all(np.diff(xs) >= -1e-9))

    def range_over(self, lo: np.ndarray, hi: np.ndarray, x_lo: np.ndarray, x_hi: np.ndarray) -> tuple:
        """``min`` and ``max`` of ``x`` over ``[lo, hi]``: the end values, and, if ``x`` is not monotone,
        every exact solve inside the interval too.

        Parameters
        ----------
        lo, hi : numpy.ndarray
            The interval ends of ``p_ref``, one per prompt.
        x_lo, x_hi : numpy.ndarray
            ``x`` at those ends.

        Returns
        -------
        tuple of numpy.ndarray
            ``(pred_lo, pred_hi)``, one per prompt.
        """
        a, b = np.minimum(x_lo, x_hi), np.maximum(x_lo, x_hi)
        if self.monotone():
            return a, b
        ps = np.array(sorted(self.exact))
        xs = np.array([self.exact[p] for p in ps])
        a, b = a.copy(), b.copy()
        for i in range(lo.size):
            inside = (ps >= lo[i]) & (ps <= hi[i])
            if inside.any():
                a[i] = min(a[i], xs[inside].min())
                b[i] = max(b[i], xs[inside].max())
        return a, b


def class_kl(x, p) -> tuple[np.ndarray, np.ndarray]:
    """KL(pi || pi_ref) (the note's direct KL) and KL(pi_ref || pi) (reverse) of a two-class policy.

    Within each class the ratio ``pi/pi_ref`` is constant at a stationary point, so the KL over
    outputs equals the KL between the class masses ``(x, 1 - x)`` and ``(p, 1 - p)``.

    Parameters
    ----------
    x : array_like
        ``pi(correct)``, the policy's class mass.
    p : array_like
        ``pi_ref(correct)``, broadcast with ``x``.

    Returns
    -------
    direct : numpy.ndarray
        KL(pi || pi_ref).
    reverse : numpy.ndarray
        KL(pi_ref || pi); ``inf`` where ``pi`` leaves a class that ``pi_ref`` has.
    """
    x = np.asarray(x, dtype=float)
    p = np.asarray(p, dtype=float)

    def term(a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a > 0, a * (np.log(np.where(a > 0, a, 1.0)) - np.log(np.where(b > 0, b, 1.0))), 0.0)

    direct = term(x, p) + term(1 - x, 1 - p)
    reverse = term(p, x) + term(1 - p, 1 - x)
    reverse = np.where(((x == 0) & (p > 0)) | ((x == 1) & (p < 1)), math.inf, reverse)
    return direct, reverse
