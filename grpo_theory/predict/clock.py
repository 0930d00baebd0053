"""Finite training time: the expected-gradient flow ``p_x(t)`` of every prompt on one clock.

Each binary prompt follows the on-policy flow of :func:`grpo_theory.dynamics.flow` from its
``p_ref``; all prompts share one time axis ``t``. A trainer's step ``s`` maps to ``t = clock * s``
(``clock`` absorbs the learning rate, the optimiser and how the model's parameters move the
per-prompt logits). The clock is either given, or fitted from one measured number: the mean training
reward at a step, ``r_wrong + (r_correct - r_wrong)`` times the mean of ``p_x(t)`` over prompts (for 0/1
rewards, the mean of ``p_x(t)``).

Flows are integrated once per distinct ``p_ref`` (or on a grid in ``logit p_ref`` when there are more
than ``max_exact`` of them, interpolated with PCHIP) on a dense geometric time grid, and read between
grid times with PCHIP in ``t``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import MAX_STEPS, OBJECTIVE, POSITIVE_COUNT, arr, checked, flag, instance, num, optional, checked_record
from .. import dynamics
from .._numerics import expit, logit
from .._validate import float_array, integer, number
from ..errors import InvalidInputError
from ..problem import Objective
from .coupled import time_grid
from .response import binary_question, binary_rewards

__all__ = ["FlowTable", "flow_table", "fit_clock"]


@dataclass(frozen=True)
@checked_record
class FlowTable:
    """The tabular flows ``p_x(t)`` (each prompt on its own, ``K = I``), as :func:`flow_table` integrates them.

    A row per start, a column per time: row ``i`` is the on-policy flow (:func:`grpo_theory.dynamics.flow`) of
    the binary question ``pi_ref = (starts[i], 1 - starts[i])``, rewards ``rewards``. Every prompt with that
    ``p_ref`` follows it; :meth:`at` reads the table between its times (and starts).

    Attributes
    ----------
    starts : numpy.ndarray
        The rows' ``p_ref``, increasing, shape (S,): the distinct starts given, or with ``interpolated`` a grid
        evenly spaced in ``logit p`` over their range.
    times : numpy.ndarray
        The columns' flow times ``t``: 0, then geometric up to ``t_max``
        (:func:`~grpo_theory.predict.coupled.time_grid`), shape (T,).
    values : numpy.ndarray
        ``values[i, j] = p(times[j])`` on the flow from ``starts[i]`` (P(correct)), shape (S, T).
    interpolated : bool
        True when there were more distinct starts than ``max_exact``, so ``starts`` is the grid and
        :meth:`at` interpolates between rows (PCHIP in ``logit p``).
    rewards : tuple of float
        ``(r_correct, r_wrong)``, the binary question's rewards (default 1 and 0).
    """

    starts: np.ndarray
    times: np.ndarray
    values: np.ndarray
    interpolated: bool = False
    rewards: tuple[float, ...] = (1.0, 0.0)

    @checked(p=arr(0, 1), t=num(0))
    def at(self, p, t) -> np.ndarray:
        """P(correct) at flow time ``t`` for starting values ``p``.

        Parameters
        ----------
        p : array_like
            Starting values: each one of ``starts``, or between them when the table was built on a grid.
        t : float
            Flow time, in ``[0, times[-1]]``.

        Returns
        -------
        numpy.ndarray
            P(correct), shaped like ``p``.

        Raises
        ------
        InvalidInputError
            ``t`` outside the integrated range, or a ``p`` not in ``starts`` (exact table).
        """
        t = float(t)
        if not (0.0 <= t <= self.times[-1]):
            raise InvalidInputError(f"flow time {t:g} is outside the integrated range [0, {self.times[-1]:g}]; "
                                    "give a larger t_max (or a smaller clock)")
        from scipy.interpolate import PchipInterpolator

        column = PchipInterpolator(self.times, self.values, axis=1)(t)
        p = np.asarray(p, dtype=float)
        if not self.interpolated:
            idx = np.searchsorted(self.starts, p)
            idx = np.minimum(idx, self.starts.size - 1)
            if not np.allclose(self.starts[idx], p, rtol=0, atol=0):
                raise InvalidInputError("a starting value outside the flow table; build it with these p_ref")
            return column[idx]
        u = np.log(self.starts) - np.log1p(-self.starts)
        return PchipInterpolator(u, column)(np.log(p) - np.log1p(-p))


#: Seconds of CPU above which :func:`flow_table` refuses up front: starts x (20 ms + 1 us x n_times), measured (50
#: starts at 10^5 times: 6.8 s; 640 at 600: 13.7 s; 6,400 starts or 10^6 times: over 75 s of wall).
MAX_FLOW_TABLE_SECONDS = 20.0


@checked(starts=arr(0, 1, ndim=1), obj=OBJECTIVE, t_max=num(0, low_open=True), n_times=num(2, MAX_STEPS, integer=True),
         max_exact=POSITIVE_COUNT, progress=optional(flag))
def flow_table(starts, obj: Objective, *, t_max: float = 1e4, n_times: int = 600, max_exact: int = 64,
               progress=None, rewards=(1.0, 0.0)) -> FlowTable:
    """Integrate the flow from every distinct starting ``p_ref`` in ``starts`` (values in ``(0, 1)``).

    Parameters
    ----------
    starts : array_like
        Starting P(correct) values (``p_ref``), each in ``(0, 1)``.
    obj : Objective
        The GRPO objective of the binary question (``pi_ref = (p, 1 - p)``, rewards ``rewards``).
    t_max : float
        Last flow time integrated.
    n_times : int
        Geometric time grid from ``1e-3`` to ``t_max`` (plus ``t = 0``).
    max_exact : int
        Above this many distinct starts, integrate on a grid of ``max_exact`` starts in ``logit p``.
    progress : bool or None
        tqdm progress bar (None: only for many starts).
    rewards : (float, float), default (1, 0)
        The rewards of a correct and of a wrong answer (see :func:`~.response.binary_question`).

    Returns
    -------
    FlowTable
        One row per distinct start (or grid start).
    """
    from tqdm.auto import tqdm

    t_max = number("t_max", t_max, low=0.0, low_open=True)
    n_times = integer("n_times", n_times, low=2)
    max_exact = integer("max_exact", max_exact, low=2)
    rewards = tuple(binary_rewards(rewards))
    starts = np.unique(float_array("starts", starts, finite=False))
    if starts.size == 0 or np.any(~((starts > 0) & (starts < 1))):
        raise InvalidInputError(f"flow starts must lie in (0, 1), got {starts[(starts <= 0) | (starts >= 1)][:5]}")
    interpolated = starts.size > max_exact
    if interpolated:
        u = logit(starts)
        starts = expit(np.linspace(u.min(), u.max(), max_exact))
    seconds = starts.size * (0.02 + 1e-6 * n_times)
    if seconds > MAX_FLOW_TABLE_SECONDS:                # up front: one binary flow a start, read at every time
        raise InvalidInputError(
            f"flow_table integrates {starts.size:,} starts (max_exact={max_exact:,}) read at n_times={n_times:,} "
            f"times: about {seconds:,.0f} s of CPU by the measured cost (20 ms a start and 1 us a start and time), "
            f"over the limit of {MAX_FLOW_TABLE_SECONDS:.0f} s. Give a smaller max_exact (the rest is interpolated "
            "in logit p) or fewer times")
    times = time_grid(t_max, n_times)
    values = np.empty((starts.size, times.size))
    disable = (starts.size < 16) if progress is None else not progress
    for i, p in enumerate(tqdm(starts, desc="flows p_x(t)", disable=disable, leave=False)):
        q = binary_question(float(p), rewards)
        values[i] = dynamics.flow(q, obj, q.pi_ref, times, with_points=False).pi[:, 0]
    return FlowTable(starts, times, values, interpolated, rewards)


def mean_curve(table: FlowTable, p) -> np.ndarray:
    """Mean over prompts (starting values ``p``, repeats counted) of P(correct) at every grid time.

    Parameters
    ----------
    table : FlowTable
        The flows from the table's starting values.
    p : array_like
        Each prompt's starting P(correct).

    Returns
    -------
    numpy.ndarray
        One value per time of ``table``'s grid.
    """
    p = np.asarray(p, dtype=float)
    uniq, counts = np.unique(p, return_counts=True)
    if table.interpolated:
        from scipy.interpolate import PchipInterpolator

        u = np.log(table.starts) - np.log1p(-table.starts)
        rows = PchipInterpolator(u, table.values, axis=0)(np.log(uniq) - np.log1p(-uniq))
    else:
        rows = table.values[np.searchsorted(table.starts, uniq)]
    return counts @ rows / counts.sum()


@checked(table=instance(FlowTable, 'a FlowTable (from flow_table)'), p=arr(0, 1, ndim=1), step=num(0, low_open=True),
         fixed=arr(0, 1, ndim=1, none=True, nonempty=False))       # mean_reward: checked against the rewards
def fit_clock(table: FlowTable, p, *, step: float, mean_reward: float, fixed=None) -> float:
    """The clock (flow time per step) at which the dataset's mean reward equals ``mean_reward`` at ``step``.

    Parameters
    ----------
    table : FlowTable
        The flows, from :func:`flow_table`.
    p : array_like
        Each prompt's starting value (one entry per prompt).
    step : float
        The training step at which ``mean_reward`` was measured (> 0).
    mean_reward : float
        The run's mean training reward there, in the table's rewards: between ``r_wrong`` and ``r_correct`` (0/1
        rewards: its mean P(correct)).
    fixed : array_like, optional
        Values added to the mean unchanged (prompts whose P(correct) cannot move, e.g. p_ref = 1),
        one per such prompt.

    Returns
    -------
    float
        ``t* / step`` with ``t*`` the first flow time at which the mean reaches ``mean_reward``.

    Raises
    ------
    InvalidInputError
        ``step <= 0``, or ``mean_reward`` outside the range the mean covers along the flow.
    """
    step = number("step", step, low=0.0, low_open=True)
    top, bottom = table.rewards
    mean_reward = number("mean_reward", mean_reward, low=bottom, high=top)
    fixed = np.zeros(0) if fixed is None else np.asarray(fixed, dtype=float)
    n_moving = np.asarray(p).size
    total = n_moving + fixed.size
    curve = (mean_curve(table, p) * n_moving + fixed.sum()) / total
    target = (float(mean_reward) - bottom) / (top - bottom)             # as a mean P(correct)
    gap = curve - target
    hit = np.flatnonzero(np.sign(gap[:-1]) != np.sign(gap[1:]))
    if gap[0] == 0:
        return 0.0
    if hit.size == 0:
        r = bottom + (top - bottom) * curve
        raise InvalidInputError(f"mean_reward={mean_reward:g} is never reached: along the flow the dataset's mean "
                                f"reward goes from {r[0]:.4f} to {r[-1]:.4f} (range "
                                f"[{r.min():.4f}, {r.max():.4f}]) by flow time {table.times[-1]:g}; give a "
                                "mean reward in that range")
    j = int(hit[0])
    from scipy.optimize import brentq

    uniq, inverse = np.unique(np.asarray(p, dtype=float), return_inverse=True)

    def gap_at(t: float) -> float:
        return (table.at(uniq, t)[inverse].sum() + fixed.sum()) / total - target

    t_star = brentq(gap_at, table.times[j], table.times[j + 1], xtol=1e-12, rtol=1e-10)
    return float(t_star / step)
