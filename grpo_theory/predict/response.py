"""The stationary P(correct) of a binary prompt as a function of its ``p_ref``: ``x(p)``, solved once per value.

Every binary prompt is the two-class question ``Question([p, 1 - p], rewards=[r_correct, r_wrong])``, by
default rewards 1 and 0 (within the correct class, and within the wrong one, the stationary policy keeps
``pi_ref``'s proportions, so only the class masses matter). The two rewards matter where the advantage is not
scale-free: shift normalisation, an epsilon in the std. Prompts with the same ``p`` share one solve. When a dataset has more distinct
values than ``max_exact``, ``x`` is solved on a grid in ``logit(p)`` and interpolated by a cubic spline
(not-a-knot); the interpolant is checked at every cell's midpoint against an exact solve, and failing
cells are halved until the error at every midpoint is below ``tol/4`` (a margin for the error between
check points); values in a cell that never passed are solved exactly. The test suite measures the
error at every queried value against the closed form.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._checks import POSITIVE_COUNT, arr, at_most, broadcasts_to, checked, flag, num, optional, same_length
from .._numerics import expit, logit
from .._laws import from_outside
from .._validate import broadcastable, float_array, plain
from ..kl import coefficient, estimator_value
from ..problem import STATIONARY_OBJECTIVE, InvalidInputError, Objective, Question
from ..solvers import output_gradient, stationary_policy

__all__ = ["P_FLOOR", "binary_question", "binary_rewards", "zero_limit", "Response"]

#: Where the flags of a never-solved prompt (its stationary points, their stability, a collapse) are read, as
#: ``p_ref = 0+``; its stationary P(correct) is the limit ``x(0+)`` itself (:func:`zero_limit`).
P_FLOOR = 1e-12


def binary_question(p: float, rewards=(1.0, 0.0)) -> Question:
    """The two-class question of a prompt solved with probability ``p``: correct (reward 1) and wrong (0).

    Parameters
    ----------
    p : float
        ``p_ref``, the base model's P(correct), in ``[0, 1]``.
    rewards : (float, float), default (1, 0)
        The rewards of a correct and of a wrong answer (a verifier's two levels, the top one first).

    Returns
    -------
    Question
        ``pi_ref = (p, 1 - p)``, rewards ``rewards``.

    Raises
    ------
    InvalidInputError
        When ``p`` is not in ``[0, 1]``, or ``rewards`` are not two finite numbers, the first the larger.

    Examples
    --------
    >>> binary_question(0.25).pi_ref.tolist()
    [0.25, 0.75]
    """
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)) \
            or not 0.0 <= p <= 1.0:
        raise InvalidInputError(f"p (p_ref, the base model's P(correct)) must be a number in [0, 1], got {p!r}")
    return Question([p, 1.0 - p], rewards=binary_rewards(rewards))


def binary_rewards(rewards) -> list[float]:
    """``rewards`` as ``[r_correct, r_wrong]``: two finite numbers, the first the larger (else refused, named).

    Parameters
    ----------
    rewards : array_like, shape (2,)
        The rewards of a correct and of a wrong answer, ``r_correct > r_wrong``.

    Returns
    -------
    list of float
        ``[r_correct, r_wrong]``.
    """
    r = float_array("rewards", rewards).reshape(-1)
    if r.size != 2 or not r[0] > r[1]:
        raise InvalidInputError(f"rewards must be (r_correct, r_wrong), two finite numbers with r_correct > r_wrong, "
                                f"got {plain(r.tolist())}")
    return [float(r[0]), float(r[1])]


@checked(obj=STATIONARY_OBJECTIVE)
def zero_limit(obj: Objective, rewards=(1.0, 0.0)) -> float:
    r"""``x(0+) = lim_{p -> 0+} x(p)``: the stationary P(correct) a never-solved prompt (``p_ref = 0+``) reaches.

    From ``pi_ref = (p, 1 - p)`` the flow starts at ``x = p`` and rises while the update ``g_a - g_b``
    (:func:`~grpo_theory.solvers.output_gradient`) is positive, up to its first root. As ``p -> 0+`` the update
    at each ``x > 0`` tends to its value at ``pi_ref = (0, 1)``, so ``x(0+)`` is the least ``x > 0`` where that
    limit update is not positive: 0 where it is not positive from the start (the direct penalty, continuous at
    ``p = 0``; the reverse penalty at G = 2 with ``beta >= gamma``, where Eq. 14 gives ``x = sqrt(p) -> 0`` at
    ``beta = gamma``), else its first root (``1 - beta/gamma`` at G = 2, ``1/(1 + beta^2)`` at G = inf, Eq. 15),
    and 1 where it stays positive. The update is scanned on a grid in ``logit x`` from ``x = 1e-300`` to
    ``1 - 1e-16`` and its first sign change solved by Brent's method; a value within ``1e-12`` of the update's
    scale (``beta``, the reward gap, ``|g|``) of zero is rounding and decides nothing (at ``beta = gamma`` the
    update is ``-x/(1 - x)``, below rounding near ``x = 0``). A negative stretch narrower than a grid cell (1/4
    in ``logit x`` above ``x = 1e-9``) could be missed.

    Under a clamp of the KL's log-ratio or value the limit is not uniform near ``x = p``, where the flow starts (the
    clamp binds once the correct answer's log-ratio ``log(x/p)`` passes it): ``x(0+)`` is then the flow's end from
    ``p_ref = 1e-300`` (``P_TINY``), 0 where that end is below ``e^345 P_TINY`` (it shrinks with ``p``). A clamp
    that changes the estimator at no log-ratio within ``log(1/P_TINY) = 690.8`` (a value clamp of ``1e100``)
    binds for no ``p_ref`` a double holds: ``x(0+)`` is the unclamped one.

    Parameters
    ----------
    obj : Objective
        The GRPO objective.
    rewards : (float, float), default (1, 0)
        The rewards of a correct and of a wrong answer (see :func:`binary_question`).

    Returns
    -------
    float
        ``x(0+)`` in ``[0, 1]``.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> round(zero_limit(Objective(beta=0.25, group_size=2)), 12)     # Eq. 14 at p = 0: 1 - beta/gamma
    0.75
    >>> zero_limit(Objective(beta=1.0, group_size=2))            # beta = gamma: sqrt(p) -> 0
    0.0
    """
    from scipy.optimize import brentq

    top, bottom = binary_rewards(rewards)
    if obj.kl_log_ratio_clamp is not None or obj.kl_value_clamp is not None:
        unclamped = dataclasses.replace(obj, kl_log_ratio_clamp=None, kl_value_clamp=None)
        if not _clamp_binds(obj, unclamped, np.linspace(0.0, LOG_TINY, 64)):
            # the clamp binds at no correct answer's log-ratio a double holds: the unclamped limit, where the
            # wrong answer's log-ratios on the way to it do not reach the clamp either
            x0 = zero_limit(unclamped, (top, bottom))
            if not _clamp_binds(obj, unclamped, np.linspace(max(math.log1p(-x0), -LOG_TINY) if x0 < 1.0 else -LOG_TINY, 0.0, 64)):
                return x0
        return _clamped_zero_limit(obj, (top, bottom))
    q, gap = binary_question(0.0, (top, bottom)), top - bottom

    def update(z: float) -> tuple[float, float]:
        """``g_a - g_b`` at ``x = expit(z)``, and the rounding it is within (0 where nothing decides)."""
        g = output_gradient(q, obj, np.array([expit(z), expit(-z)]))
        with np.errstate(over="ignore"):             # beta near 1.8e308: g_a - g_b is +-inf, its sign decides
            return float(g[0] - g[1]), 1e-12 * (obj.beta + gap + float(np.abs(g[np.isfinite(g)]).sum()))

    z = np.concatenate([np.linspace(-690.0, -21.0, 30), np.linspace(-20.75, 37.0, 232)])
    last_up = None                                   # the last grid z where the update is positive
    for zz in z:
        s, rounding = update(zz)
        if math.isnan(s):
            raise InvalidInputError(f"x(0+) of {obj.describe()}: the update at pi_ref = (0, 1) is NaN at "
                                    f"x = {expit(zz):.3g}; please report")
        if s > rounding:
            last_up = zz
        elif s < -rounding:
            if last_up is None:
                return 0.0
            root = brentq(lambda u: update(u)[0], last_up, zz, xtol=1e-14, rtol=4 * np.finfo(float).eps)
            return float(expit(root))
    return 1.0 if last_up is not None else 0.0


#: Where a clamped objective's ``x(0+)`` is read (:func:`zero_limit`): the least ``p_ref`` whose log-ratios every
#: double can hold (``log(1/P_TINY) = 690.8``).
P_TINY = 1e-300
LOG_TINY = -math.log(P_TINY)


def _clamp_binds(obj: Objective, unclamped: Objective, lr: np.ndarray) -> bool:
    """Whether ``obj``'s clamps change its KL estimator's value or gradient coefficient anywhere on the log-ratios
    ``lr`` (against ``unclamped``, the same objective without them)."""
    same = np.array_equal(estimator_value(obj, lr), estimator_value(unclamped, lr))
    if obj.placement_variant.in_loss:
        same = same and np.array_equal(coefficient(obj, lr), coefficient(unclamped, lr))
    return not same


def _clamped_zero_limit(obj: Objective, rewards: tuple[float, float]) -> float:
    """``x(0+)`` under a clamp of the KL's log-ratio or value: the flow's end from ``p_ref = P_TINY``, 0 where it
    ends within ``e^345`` of ``P_TINY`` (its end shrinks with ``p``).

    Why not the update at ``pi_ref = (0, 1)``: a clamp binds where the log-ratio ``z = log(x/p)`` of the correct
    answer passes its threshold, so the update at a fixed ``x`` reaches its ``p = 0`` value only once ``p`` is below
    ``x e^{-z_c}``: the limit is not uniform near ``x = p``, where the flow starts. Near its start the penalty pulls
    with the unclamped estimator (``z`` from 0 up to ``z_c``); if that pull stops the flow, ``x(p)`` is a fixed
    multiple of ``p`` and tends to 0 (k3, value clamp 10, G = 8, beta = 5: ``x(p) = 2.124 p`` from ``p = 1e-4`` on),
    while the clamped update at ``pi_ref = (0, 1)`` has its first root at 0.2838. A clamp that binds only beyond
    ``z = 690.8`` binds for no ``p_ref`` a double holds, and ``x`` is the unclamped one (value clamp ``1e100``).
    """
    point = stationary_policy(binary_question(P_TINY, rewards), obj)
    if not point.converged:
        raise InvalidInputError(f"x(0+) of {obj.describe()}: the flow from p_ref = {P_TINY:g} did not converge "
                                f"({point.message}); please report")
    x = float(point.pi[0])
    return 0.0 if x < math.exp(345.0) * P_TINY else x


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
    rewards : (float, float), default (1, 0)
        The rewards of a correct and of a wrong answer (see :func:`binary_question`).

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> x = Response(Objective(beta=1.0, group_size=2)).solve(0.25)
    >>> round(x, 6)                            # G = 2, beta = gamma = 1: x = sqrt(p) (Eq. 14)
    0.5
    """

    @checked(obj=STATIONARY_OBJECTIVE, tol=num(0, 1, low_open=True), max_exact=POSITIVE_COUNT, progress=optional(flag))
    def __init__(self, obj: Objective, *, tol: float = 1e-6, max_exact: int = 400, progress=None,
                 rewards=(1.0, 0.0)) -> None:
        self.objective = obj
        self.rewards = binary_rewards(rewards)
        self.tol = float(tol)
        self.max_exact = int(max_exact)
        self.progress = progress
        self._solve_policy = stationary_policy
        self.exact: dict[float, float] = {}
        self.exact_wrong: dict[float, float] = {}     # pi(wrong) of each exact solve, where 1 - x rounds it away
        self.n_solves = 0
        self.max_check_error = 0.0           # largest midpoint error of the interpolation (grid path only)
        self.used_grid = False

    @checked(p=num(0, 1))
    def solve(self, p: float) -> float:
        """``x(p)`` by an exact solve (cached); ``x(1) = 1``; ``p = 0`` is a never-solved prompt, ``p_ref = 0+``:
        the limit ``x(0+)`` (:func:`zero_limit`).

        Parameters
        ----------
        p : float
            ``p_ref`` in ``[0, 1]``.

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
        if p == 0.0:
            x = zero_limit(self.objective, self.rewards)
            self.exact_wrong[p] = 1.0 - x
        else:
            pi = self._solve_policy(binary_question(p, self.rewards), self.objective).pi
            x = float(pi[0])
            self.exact_wrong[p] = float(pi[1])
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
            Values in ``[0, 1]``; 0 stands for ``0+`` (the limit ``x(0+)``).

        Returns
        -------
        numpy.ndarray
            ``x(p)``, shaped like ``ps``.

        Raises
        ------
        InvalidInputError
            A value outside ``[0, 1]`` or NaN (named), or ragged rows.
        """
        ps = float_array("ps", ps, low=0.0, high=1.0)
        uniq, inverse = np.unique(ps, return_inverse=True)
        zero = int(uniq.size > 0 and uniq[0] == 0.0)         # p = 0 is 0+: its limit, never on the grid
        inner = uniq[zero:][uniq[zero:] < 1.0]
        if inner.size <= self.max_exact:
            vals = self._solve_many(inner, "x(p_ref), exact")
        else:
            vals = self._grid(inner)
        full = np.ones(uniq.size)
        full[:zero] = [self.solve(0.0)] * zero
        full[zero: zero + inner.size] = vals
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

    @checked(ps=arr(0, 1, ndim=1), xs=arr(0, 1, ndim=1))
    def wrong(self, ps, xs) -> np.ndarray:
        """``1 - x(p)``, the wrong class's mass: an exact solve's own ``pi(wrong)`` where ``p`` was solved exactly
        (a mass below 1e-16 that ``1 - x`` rounds to 0: ``p_ref = 1 - 2^-53`` keeps ``pi(wrong) = 3.7e-17`` at
        G = 2, beta = 0.5), else ``1 - xs``.

        Parameters
        ----------
        ps : array_like
            Values of ``p_ref``.
        xs : array_like
            ``x(p)`` at them (as this object returned them).

        Returns
        -------
        numpy.ndarray
            ``pi(wrong)`` at each ``p``.
        """
        ps, xs = np.asarray(ps, dtype=float), np.asarray(xs, dtype=float)
        if ps.shape != xs.shape:
            raise InvalidInputError(f"ps and xs must have one length, got {ps.size} and {xs.size}")
        return np.array([self.exact_wrong.get(p, 1.0 - x) for p, x in zip(ps.tolist(), xs.tolist())])

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

        Raises
        ------
        InvalidInputError
            An interval with ``lo > hi`` (reversed: it would hold no exact solve), named with its entry.
        """
        if from_outside():                  # predict's own call passes its arrays unchecked
            for name, value in (("lo", lo), ("hi", hi), ("x_lo", x_lo), ("x_hi", x_hi)):
                arr(0.0, 1.0, ndim=1)(name, value)
            same_length("one entry per prompt", lo=lo, hi=hi, x_lo=x_lo, x_hi=x_hi)
            lo, hi, x_lo, x_hi = (np.asarray(v, dtype=float) for v in (lo, hi, x_lo, x_hi))
        at_most("lo", lo, "hi", hi)
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


def class_kl(x, p, wrong=None) -> tuple[np.ndarray, np.ndarray]:
    """KL(pi || pi_ref) (the note's direct KL) and KL(pi_ref || pi) (reverse) of a two-class policy.

    Within each class the ratio ``pi/pi_ref`` is constant at a stationary point, so the KL over
    outputs equals the KL between the class masses ``(x, 1 - x)`` and ``(p, 1 - p)``.

    Parameters
    ----------
    x : array_like
        ``pi(correct)``, the policy's class mass.
    p : array_like
        ``pi_ref(correct)``, broadcast with ``x``.
    wrong : array_like, optional
        ``pi(wrong)`` where it is known better than ``1 - x`` (a mass below 1e-16, see :meth:`Response.wrong`);
        default ``1 - x``.

    Returns
    -------
    direct : numpy.ndarray
        KL(pi || pi_ref).
    reverse : numpy.ndarray
        KL(pi_ref || pi); ``inf`` where ``pi`` leaves a class that ``pi_ref`` has.

    Raises
    ------
    InvalidInputError
        ``x``, ``p`` and ``wrong`` of shapes that do not broadcast together, naming each.
    """
    try:
        x, p = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(p, dtype=float))
        y = 1 - x if wrong is None else np.broadcast_to(np.asarray(wrong, dtype=float), x.shape)
    except ValueError:                                  # shapes that do not go together: named, not NumPy's words
        broadcastable(x=x, p=p)
        broadcasts_to("wrong", wrong, np.broadcast_shapes(np.shape(x), np.shape(p)), "x and p")
        raise
    q = 1 - p                                       # exact for p >= 1/2

    def logs(a, b):
        """``log a`` and ``log b`` of a split ``a + b = 1``, each from the smaller mass (``log1p(-b)`` for a near
        1: ``log x - log p`` of x = 1 - 3.7e-17 and p = 1 - 2^-53 is 7.4e-17, not 1.1e-16)."""
        with np.errstate(divide="ignore"):
            return np.where(a > 0.5, np.log1p(-np.minimum(b, 0.5)), np.log(a)), \
                np.where(b > 0.5, np.log1p(-np.minimum(a, 0.5)), np.log(b))

    (lx, ly), (lp, lq) = logs(x, y), logs(p, q)

    def term(a, la, lb):
        with np.errstate(invalid="ignore"):
            return np.where(a > 0, a * (la - lb), 0.0)

    direct = term(x, lx, lp) + term(y, ly, lq)
    reverse = term(p, lp, lx) + term(q, lq, ly)
    reverse = np.where(((x == 0) & (p > 0)) | ((y == 0) & (q > 0)), math.inf, reverse)
    return direct, reverse
