"""Has a training run reached a stationary point? A check on logged trajectories of P(correct).

A study compares the policy at the end of training with the theory's stationary policy; that
comparison means something only if the end *is* stationary. :func:`check_trajectories` takes the
logged trajectory of ``p_q(t)`` (the probability of the rewarded answers of prompt ``q`` at step
``t``) and classifies each prompt's end as ``"converged"``, ``"moving"`` or ``"oscillating"``;
:func:`largest_drop` records the largest mid-run fall of the mean reward (an instability event).

The test (for one prompt)
-------------------------
Let ``t_1 < ... < t_n`` be the logged steps in the *tail*, the last ``tail`` fraction of the steps
run (``t >= t_end - tail * t_end``), and ``y_i`` the logged values there.

1. Fit the line ``y = a + b (t - tbar)`` by least squares. The **drift** is the change the line
   makes across the tail, ``D = b (t_n - t_1)``; the **spread** ``S`` is the standard deviation of
   the residuals ``e_i`` (``ddof = 2``).
2. Noise model: the residuals are a stationary AR(1) sequence (what SGD noise around a stationary
   point gives when logged every step or every few steps). With ``phi`` the lag-1 autocorrelation
   of the residuals (clipped to ``[0, 0.99]``) and ``c = 0.68 / sqrt(n)``, the effective number of
   independent points is ``n_eff = max(3, n (1 - phi - c) / (1 + phi + c))`` (Nychka et al., 2000,
   the small-sample form of the lag-1 correction used by Santer et al., 2008), and the standard
   error of the slope is ``se_b = sqrt(sum e^2 / (n_eff - 2)) / sqrt(sum (t - tbar)^2)``;
   ``se_D = se_b (t_n - t_1)``. (Without ``c`` the test rejects 9-13% of pure AR(1) noise at phi = 0.9-0.97,
   n = 200, where SGD noise logged every step lives; with it, <= 5%: ``tests/test_convergence.py``.)
3. **moving**: ``|D| > drift_tol`` (large enough to matter) *and* either
   ``|D| > t_{1-alpha/2}(n_eff - 2) se_D`` (the drift is not noise, two-sided level ``alpha``) or
   ``|D| > TREND_RATIO * S`` with ``TREND_RATIO = 6`` (a smooth trend: its residuals are so
   correlated that n_eff collapses to 3 and the t test loses all power, as on a slow recovery
   after a collapse; 6 is above the 99th percentile of ``|D| / S`` for AR(1) noise with
   phi = 0.97, 4.3 at the 95th and 5.7 at the 99th over 3000 simulated 200-step tails: noise
   slower than that cannot show stationarity in the tail anyway).
   **Near an edge, also in logit space** (exact probabilities only, ``se=None``): close to 0 or 1 a
   run can leave the edge so slowly that ``P`` hardly moves in the tail while the logit
   ``z = log(y / (1 - y))`` climbs steadily (an escape from a repelling vertex, where ``P`` grows
   about exponentially). Steps 1-3 are repeated on ``z`` (``y`` clipped to ``[1e-12, 1 - 1e-12]``),
   with the tolerance ``logit_drift_tol = 0.04`` (``drift_tol / (1/2 * 1/2)``: the same accuracy scale
   at ``P = 1/2``, where ``dP = P (1 - P) dz``). A prompt whose logit moves beyond it, significantly or as a
   trend, is **moving** too, unless it moves *towards* the nearer edge and is within ``drift_tol`` of it (what
   is left is below ``drift_tol`` in ``P``: an approach to a vertex that the flow reaches only in the limit).
   **Inside the tail, in windows** (:mod:`grpo_theory._convergence_windows`): the tail is cut into
   ``W = 6`` windows of equal step span. A prompt is **moving** too when the tail has *shifted* (the last
   window's mean differs from the first's by more than ``drift_tol``, significantly against the noise within
   the windows, the path between them mostly one way: a step or a rise inside the tail, whose correlated
   residuals blind the line's test and would read as an oscillation), or
   when it *creeps*: all ``W - 1`` differences of the window means share the line's sign and the
   line's drift exceeds ``creep_tol = drift_tol / 4``, unless the windows show a geometric approach with less
   than ``creep_tol`` left (a one-signed drift is the run still going somewhere, whatever its size).
4. **oscillating** (when not moving): the spread beyond the measurement noise,
   ``S_x = sqrt(max(S^2 - N^2, 0))`` with ``N`` the root-mean-square of the per-point standard
   errors ``se_i`` (0 for exact probabilities), exceeds ``spread_tol``, *and* ``S^2`` exceeds
   ``N^2 chi2_{1-alpha}(nu) / nu`` with ``nu = n_eff - 2`` (the excess is not the sampling spread
   of the variance estimate).
5. Otherwise **converged**.

The two tolerances are accuracy scales, not noise estimates: with the studies' target (MAE 0.02 per
configuration), a tail whose line moves by at most ``drift_tol = 0.01`` ends within half the target of its
mean, and one whose spread about the line is at most ``spread_tol = 0.02`` is summarised by its mean within
the target; the statistical thresholds come from ``alpha`` and the AR(1) model alone. A run moving too slowly
to show in the tail (a decayed learning rate) can pass: keep the tail long, in steps run.

Examples
--------
>>> import numpy as np
>>> steps = np.arange(1, 401)
>>> rng = np.random.default_rng(0)
>>> plateau = 0.6 + 0.003 * rng.standard_normal(400)
>>> drift = 0.3 + 0.3 * steps / 400
>>> rep = check_trajectories(steps, np.stack([plateau, drift], axis=1))
>>> rep.status.tolist()
['converged', 'moving']
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._checks import checked_record
from ._checks import (POSITIVE_COUNT, arr, broadcasts_to, checked, dataframe, function, has_columns, has_keys,
                      index_below, items, listed, num, one_of, optional, passed_to, same_length, text, texts, whole)
from ._convergence_windows import CREEP_FRACTION, WINDOWS, chi2_quantile, t_quantile, time_unit, window_tests
from .errors import InvalidInputError

_TOL = num(0, finite=False)                 # a tolerance: 0 and inf switch a test's tolerance off
#: The classifications, in the order a summary lists them.
STATUSES = ("converged", "moving", "oscillating")
#: Defaults (see the module docstring for what they mean and why these values).
TAIL, ALPHA, DRIFT_TOL, SPREAD_TOL = 0.25, 0.05, 0.01, 0.02
#: A drift this many times the spread about the line is a trend, whatever n_eff says (see above).
TREND_RATIO = 6.0
#: A fall of the mean reward by more than this (peak to later trough) is reported as an instability.
DROP_TOL = 0.1
#: Fewest points in the tail for a verdict; fewer gives "moving" (too short to tell).
MIN_TAIL_POINTS = 8
#: The drift tolerance in logit space: DRIFT_TOL at P = 1/2 (dP = P (1 - P) dz), see the module docstring.
LOGIT_DRIFT_TOL = 4 * DRIFT_TOL
#: Probabilities are clipped to [LOGIT_CLIP, 1 - LOGIT_CLIP] before taking logits.
LOGIT_CLIP = 1e-12


@dataclass(frozen=True)
@checked_record
class Drop:
    """The largest fall of a series, as :func:`largest_drop` finds it.

    Attributes
    ----------
    size : float
        ``values[peak] - values[trough]`` (>= 0), with the peak before the trough.
    peak_step : float
        The step of the peak.
    trough_step : float
        The step of the trough (``> peak_step`` when ``size > 0``).
    recovered : float
        The value at the last step minus the trough's value.
    """

    size: float
    peak_step: float
    trough_step: float
    recovered: float        # the value at the last step minus the trough's value


@dataclass(frozen=True)
@checked_record
class ConvergenceReport:
    """Per-prompt verdicts and the run's largest mean-reward drop, as :func:`check_trajectories` returns them.

    The arrays have one entry per prompt.

    Attributes
    ----------
    status : numpy.ndarray of str
        ``"converged"``, ``"moving"`` or ``"oscillating"``.
    drift : numpy.ndarray
        The change of the line fitted to the tail, across the tail.
    drift_se : numpy.ndarray
        Its standard error, corrected for AR(1) autocorrelation.
    slope : numpy.ndarray
        The drift per step.
    spread : numpy.ndarray
        The standard deviation of the residuals about the line.
    tail_mean : numpy.ndarray
        The mean of the tail values.
    n_tail : numpy.ndarray
        The points in the tail.
    n_eff : numpy.ndarray
        The effective number of independent points (AR(1)).
    tail_start : float
        The first step of the tail.
    steps : float
        The last logged step.
    prompt_drop : list of Drop
        Each prompt's own largest drop.
    reward_drop : Drop or None
        The largest drop of the mean reward over prompts (None when no reward was given).
    logit_drift, logit_drift_se : numpy.ndarray or None
        The drift of the tail's line in logit space and its standard error (None for sampled
        values, ``se`` given, or values outside [0, 1], where the logit test is not made).
    logit_moving : numpy.ndarray of bool or None
        Per prompt: moving by the logit test (module docstring, step 3).
    shift, shifted, creeping : numpy.ndarray or None
        The last window's mean minus the first's, and per prompt whether the window tests call it
        shifted or creeping (step 3; None when the tail was too short or the tests were off).
    shift_windows : int or None
        ``W`` of those tests.
    """

    status: np.ndarray      # "converged" / "moving" / "oscillating"
    drift: np.ndarray       # change of the fitted line across the tail
    drift_se: np.ndarray    # its AR(1)-corrected standard error
    slope: np.ndarray       # drift per step
    spread: np.ndarray      # std of the residuals about the line
    tail_mean: np.ndarray   # mean of the tail values
    n_tail: np.ndarray      # points in the tail
    n_eff: np.ndarray       # effective independent points (AR(1))
    tail_start: float       # first step of the tail
    steps: float            # last logged step
    prompt_drop: list[Drop] = field(default_factory=list)   # per prompt: its own largest Drop
    reward_drop: Drop | None = None                   # the mean over prompts' largest Drop
    logit_drift: np.ndarray | None = None             # the line's change across the tail in logit space
    logit_drift_se: np.ndarray | None = None          # its AR(1)-corrected standard error
    logit_moving: np.ndarray | None = None            # moving by the logit test (near an edge)
    shift: np.ndarray | None = None                   # last window's mean minus the first's
    shifted: np.ndarray | None = None                 # moving by the window shift test
    creeping: np.ndarray | None = None                # moving by the window creep test
    shift_windows: int | None = None                  # W of the window tests (None: not made)

    @property
    def converged(self) -> np.ndarray:
        """Per prompt: whether its status is ``"converged"``."""
        return self.status == "converged"

    @property
    def all_converged(self) -> bool:
        """Whether every prompt converged."""
        return bool(np.all(self.converged))

    def columns(self, q: int) -> dict:
        """The convergence columns of prompt ``q`` for a study's result table.

        Parameters
        ----------
        q : int
            The prompt's index.

        Returns
        -------
        dict
            ``conv_status, conv_drift, conv_slope_per_100, conv_spread, conv_drift_se, prompt_largest_drop,
            prompt_drop_step, reward_largest_drop, reward_drop_step, steps_run, conv_reason``.
        """
        index_below("q", q, len(self.status), "prompts")
        d = self.prompt_drop[q]
        return dict(conv_status=str(self.status[q]), conv_drift=float(self.drift[q]),
                    conv_slope_per_100=float(self.slope[q] * 100), conv_spread=float(self.spread[q]),
                    conv_drift_se=float(self.drift_se[q]), prompt_largest_drop=d.size, prompt_drop_step=d.trough_step,
                    reward_largest_drop=self.reward_drop.size if self.reward_drop else np.nan,
                    reward_drop_step=self.reward_drop.trough_step if self.reward_drop else np.nan,
                    steps_run=int(self.steps), conv_reason=self.reason(q))

    def reason(self, q: int) -> str:
        """Why prompt ``q`` is not converged, in words ('' when it is).

        Parameters
        ----------
        q : int
            The prompt's index, as for :meth:`columns`.

        Returns
        -------
        str
            The status with its drift or spread over the tail, and the prompt's largest drop when it is
            over ``DROP_TOL``.
        """
        index_below("q", q, len(self.status), "prompts")
        s = str(self.status[q])
        if s == "converged":
            return ""
        span = f"steps {self.tail_start:g}-{self.steps:g}"
        if s == "moving" and not np.isfinite(self.drift[q]):
            text = (f"moving (unchecked): {int(self.n_tail[q])} measurements over {span}, fewer than the "
                    f"{MIN_TAIL_POINTS} the test needs")
        elif s == "moving":
            text = f"moving: drift {self.drift[q]:+.3f} +- {self.drift_se[q]:.3f} over {span}"
            if self.creeping is not None and self.creeping[q]:
                text += f", creeping (all {self.shift_windows} window means one-signed)"
            if self.shifted is not None and self.shifted[q]:
                text += f", shifted {self.shift[q]:+.3f} from the first window to the last"
            if self.logit_moving is not None and self.logit_moving[q]:
                m = self.tail_mean[q]
                near = " near the edge" if min(m, 1 - m) < 0.1 else ""        # dP/dz = P (1 - P) below 0.09
                text += f" (logit {self.logit_drift[q]:+.2f} +- {self.logit_drift_se[q]:.2f},{near} at {m:.3g})"
        else:
            text = f"oscillating: spread {self.spread[q]:.3f} about the trend over {span}"
        d = self.prompt_drop[q]
        if d.size > DROP_TOL:
            text += f"; fell by {d.size:.2f} at step {d.trough_step:g} (recovered {d.recovered:+.2f})"
        return text


@checked(steps=arr(ndim=1, increasing=True), values=arr(ndim=1))
def largest_drop(steps, values) -> Drop:
    """The largest fall of ``values`` from an earlier peak to a later trough (maximum drawdown).

    Parameters
    ----------
    steps : array_like, shape (n,)
        Increasing step numbers.
    values : array_like, shape (n,)
        The series (e.g. the mean over prompts of P(correct), the expected reward).

    Returns
    -------
    Drop
        ``size = max_{i <= j} (values[i] - values[j])`` (0 for a non-decreasing series), the steps
        of that peak and trough, and how far the series rose again by its end.

    Raises
    ------
    InvalidInputError
        If the arrays differ in length or are empty, or the steps do not increase.

    Examples
    --------
    >>> largest_drop([1, 2, 3, 4, 5], [0.2, 0.8, 0.4, 0.5, 0.7]).size
    0.4
    """
    t = np.asarray(steps, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.ndim != 1 or v.shape != t.shape or t.size == 0:
        raise InvalidInputError(f"steps and values must be 1-d of the same non-zero length, got shapes "
                                f"{t.shape} and {v.shape}")
    peak = np.maximum.accumulate(v)
    fall = peak - v
    j = int(np.argmax(fall))
    i = int(np.argmax(v[:j + 1])) if j > 0 else 0
    return Drop(size=round(float(fall[j]), 12), peak_step=float(t[i]), trough_step=float(t[j]),
                recovered=float(v[-1] - v[j]))


@checked(steps=arr(ndim=1, increasing=True), values=arr(ndim=(1, 2)), se=arr(0, 1e150, none=True), tail=num(0, 1, low_open=True,
         high_open=True), alpha=num(1e-12, 1, high_open=True), drift_tol=_TOL, spread_tol=_TOL, logit_drift_tol=_TOL,
         creep_tol=optional(_TOL), windows=num(3, 1000, integer=True, none=True), reward=arr(ndim=1, none=True))
def check_trajectories(steps, values, *, se=None, tail: float = TAIL, alpha: float = ALPHA,
                       drift_tol: float = DRIFT_TOL, spread_tol: float = SPREAD_TOL,
                       logit_drift_tol: float = LOGIT_DRIFT_TOL, creep_tol: float | None = None,
                       windows: int | None = WINDOWS, reward=None) -> ConvergenceReport:
    """Classify the end of each prompt's trajectory as converged, moving or oscillating.

    Parameters
    ----------
    steps : array_like, shape (n,)
        Increasing steps at which the values were logged (dense logging in the tail helps).
    values : array_like, shape (n,) or (n, n_prompts)
        Logged P(correct) per prompt.
    se : array_like, optional
        Standard error of each logged value as a measurement (broadcastable to ``values``), e.g.
        the binomial SE of a sampled estimate; None (the default) for exact probabilities.
    tail : float
        Fraction of the steps run (of ``steps[-1]``) that the test looks at, in (0, 1).
    alpha : float
        Two-sided level of the drift test, and one-sided level of the spread's excess.
    drift_tol : float
        The accuracy scale below which a drift is too small to matter (module docstring).
    spread_tol : float
        The same for a spread.
    logit_drift_tol : float
        The drift tolerance of the near-edge test in logit space (made only for exact
        probabilities: ``se`` None and values in [0, 1]); ``np.inf`` turns it off.
    creep_tol : float, optional
        The line drift above which a consistently one-signed tail is moving (step 3); default
        ``drift_tol / 4``; ``np.inf`` turns the creep test off.
    windows : int or None
        ``W``, the windows of the shift and creep tests (>= 3); None turns both off (the line alone).
    reward : array_like, shape (n,), optional
        The run's mean reward at ``steps`` for the instability record; default: the mean of
        ``values`` over prompts (the expected reward of 0/1-rewarded prompts).

    Returns
    -------
    ConvergenceReport
        The verdict (converged or not, and why) per prompt, with the tail statistics it rests on.

    Raises
    ------
    InvalidInputError
        If shapes disagree, steps are not increasing, or a parameter is out of range.

    Examples
    --------
    >>> steps = np.arange(1, 201)
    >>> rep = check_trajectories(steps, 0.9 - 0.8 * np.exp(-steps / 20.0))
    >>> str(rep.status[0])
    'converged'
    """
    t = np.asarray(steps, dtype=float)
    y = np.asarray(values, dtype=float)
    if y.ndim == 1:
        y = y[:, None]
    if t.ndim != 1 or y.ndim != 2 or y.shape[0] != t.size or t.size < 2:
        raise InvalidInputError(f"steps must be 1-d with one entry per row of values, at least 2 (a line is fitted), "
                                f"got shapes {t.shape} and {np.shape(values)}")
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("values must be finite")
    creep_tol = CREEP_FRACTION * drift_tol if creep_tol is None else float(creep_tol)
    if not (0 < tail < 1 and 0 < alpha < 1 and drift_tol >= 0 and spread_tol >= 0 and logit_drift_tol >= 0
            and creep_tol >= 0 and (windows is None or (isinstance(windows, (int, np.integer)) and windows >= 3))):
        raise InvalidInputError(f"need 0 < tail < 1, 0 < alpha < 1, tolerances >= 0; got tail={tail!r}, "
                                f"alpha={alpha!r}, drift_tol={drift_tol!r}, spread_tol={spread_tol!r}, "
                                f"logit_drift_tol={logit_drift_tol!r}, creep_tol={creep_tol!r}, "
                                f"windows={windows!r} (an int >= 3 or None)")
    if se is not None and np.ndim(values) == 1:
        # one prompt given as a 1-d series: its se broadcasts to that series' shape, as documented
        broadcasts_to("se", se, (y.shape[0],), "values")
        se = np.broadcast_to(np.asarray(se, dtype=float), (y.shape[0],))[:, None]
    broadcasts_to("se", se, y.shape, "values")
    broadcasts_to("reward", reward, t.shape, "steps")
    s2 = np.zeros_like(y) if se is None else np.broadcast_to(np.asarray(se, dtype=float) ** 2, y.shape)
    tu = t if (unit := time_unit(t)) == 1.0 else t / unit      # unit 1 unless the steps' squares leave a double
    start = tu[-1] - tail * tu[-1]
    m = tu >= start
    tt, yy = tu[m], y[m]
    n, P = tt.size, y.shape[1]
    if n < MIN_TAIL_POINTS:
        nan = np.full(P, np.nan)
        status = np.full(P, "moving", dtype=object)
        return _report(status, nan, nan, nan, nan, yy.mean(0), np.full(P, n), nan, start * unit, t, y, reward)
    line = _tail_line(tt, yy, alpha, drift_tol)
    drift, drift_se, spread, n_eff, dof = line["drift"], line["drift_se"], line["spread"], line["n_eff"], line["dof"]
    win = None if windows is None else window_tests(tt, yy, alpha=alpha, drift_tol=drift_tol, creep_tol=creep_tol,
                                                    line_drift=drift, windows=int(windows))
    moving = line["moving"] if win is None else line["moving"] | win["shifted"] | win["creeping"]
    logit = _logit_test(tt, yy, alpha, drift_tol, logit_drift_tol) if se is None else None
    if logit is not None:
        moving = moving | logit["moving"]
    noise2 = s2[m].mean(0)
    excess = np.sqrt(np.maximum(spread ** 2 - noise2, 0.0))
    oscill = ~moving & (excess > spread_tol) & (spread ** 2 > noise2 * chi2_quantile(1 - alpha, dof) / dof)
    status = np.where(moving, "moving", np.where(oscill, "oscillating", "converged")).astype(object)
    return _report(status, drift, drift_se, line["slope"] / unit, spread, yy.mean(0), np.full(P, n), n_eff,
                   start * unit, t, y, reward, logit, win)


def _tail_line(tt: np.ndarray, yy: np.ndarray, alpha: float, drift_tol: float) -> dict:
    """Steps 1-3 of the module docstring on the tail ``(tt, yy)``: the line, its AR(1)-corrected drift
    test, and which columns move (``|D| > drift_tol`` and significant or a trend)."""
    n = tt.size
    x = tt - tt.mean()
    sxx = float(x @ x)
    b = x @ (yy - yy.mean(0)) / sxx                                        # (P,)
    e = yy - yy.mean(0) - np.outer(x, b)
    ss = (e ** 2).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(ss > 0, (e[1:] * e[:-1]).sum(0) / ss, 0.0)
    phi = np.clip(phi, 0.0, 0.99)
    c = 0.68 / np.sqrt(n)
    n_eff = np.maximum(n * (1 - phi - c) / (1 + phi + c), 3.0)
    dof = n_eff - 2
    span = tt[-1] - tt[0]
    drift = b * span
    drift_se = np.sqrt(ss / dof / sxx) * span
    spread = np.sqrt(ss / (n - 2))
    significant = np.abs(drift) > t_quantile(1 - alpha / 2, dof) * drift_se
    moving = (significant | (np.abs(drift) > TREND_RATIO * spread)) & (np.abs(drift) > drift_tol)
    return dict(slope=b, drift=drift, drift_se=drift_se, spread=spread, n_eff=n_eff, dof=dof, moving=moving)


def _logit_test(tt: np.ndarray, yy: np.ndarray, alpha: float, drift_tol: float, logit_drift_tol: float):
    """The near-edge test of step 3 in logit space, or None when the values are not probabilities."""
    if np.any(yy < 0) or np.any(yy > 1):
        return None
    p = np.clip(yy, LOGIT_CLIP, 1 - LOGIT_CLIP)
    line = _tail_line(tt, np.log(p) - np.log1p(-p), alpha, logit_drift_tol)
    level = yy.mean(0)
    # towards the nearer edge (z's drift has the sign of its level) and already within drift_tol of it
    approach = np.sign(line["drift"]) == np.sign(level - 0.5)
    at_edge = np.minimum(level, 1 - level) <= drift_tol
    return dict(drift=line["drift"], drift_se=line["drift_se"], moving=line["moving"] & ~(approach & at_edge))


def _report(status, drift, drift_se, slope, spread, tail_mean, n_tail, n_eff, start, t, y, reward, logit=None,
            win=None):
    r = y.mean(1) if reward is None else np.broadcast_to(np.asarray(reward, dtype=float), t.shape)
    return ConvergenceReport(status=np.asarray(status), drift=drift, drift_se=drift_se, slope=slope, spread=spread,
                             tail_mean=tail_mean, n_tail=n_tail, n_eff=n_eff, tail_start=float(start),
                             steps=float(t[-1]), prompt_drop=[largest_drop(t, y[:, q]) for q in range(y.shape[1])],
                             reward_drop=largest_drop(t, r), logit_drift=None if logit is None else logit["drift"],
                             logit_drift_se=None if logit is None else logit["drift_se"],
                             logit_moving=None if logit is None else logit["moving"],
                             **({} if win is None else dict(shift=win["shift"], shifted=win["shifted"],
                                                             creeping=win["creeping"],
                                                             shift_windows=win["means"].shape[0])))


@checked(history=items(dict, 'rows (dicts)'), n_prompts=POSITIVE_COUNT, kw=passed_to(check_trajectories, 'reward'))
@checked(too_short=one_of("refuse", "moving"))
def check_history(history: list, n_prompts: int, *, too_short: str = "refuse", **kw) -> ConvergenceReport:
    """:func:`check_trajectories` on a trainer's history (rows with ``step`` and ``p_best_q{i}``). A tail of fewer
    than :data:`MIN_TAIL_POINTS` rows cannot tell converged from moving or oscillating: refused by default.

    Parameters
    ----------
    history : list of dict
        The logged rows: ``step`` and ``p_best_q0 ... p_best_q{n_prompts-1}``; ``expected_reward``
        (when every row has it) is the mean reward for the instability record.
    n_prompts : int
        The number of prompts.
    too_short : {"refuse", "moving"}, default "refuse"
        What a tail of fewer than :data:`MIN_TAIL_POINTS` rows gives: an error naming the count and the minimum,
        or :func:`check_trajectories`' report of it (every prompt "moving", unchecked: a run still in progress).
    **kw
        Passed to :func:`check_trajectories` (``tail``, ``alpha``, ``drift_tol``, ``spread_tol``, ...).

    Returns
    -------
    ConvergenceReport
        As :func:`check_trajectories` gives it for these rows.

    Raises
    ------
    InvalidInputError
        An empty history, a tail too short (``too_short="refuse"``), or what :func:`check_trajectories` rejects.
    """
    history = listed("history", history, dict, "logged rows (dicts)")
    if not history:
        raise InvalidInputError("history is empty: nothing was logged")
    has_keys("history", history, ["step", *(f"p_best_q{i}" for i in range(n_prompts))], f"n_prompts={n_prompts}")
    steps = np.array([h["step"] for h in history], dtype=float)
    vals = np.array([[h[f"p_best_q{i}"] for i in range(n_prompts)] for h in history], dtype=float)
    for j, i in np.argwhere(~np.isfinite(vals))[:1]:       # name the row and the key, not check_trajectories' values
        raise InvalidInputError(f"history row {j} (step {history[j]['step']}): p_best_q{i} must be a finite number, "
                                f"got {history[j][f'p_best_q{i}']!r}")
    reward = (np.array([h["expected_reward"] for h in history], dtype=float)
              if all("expected_reward" in h for h in history) else None)
    report = check_trajectories(steps, vals, reward=reward, **kw)
    if too_short == "refuse" and (n_tail := int(report.n_tail[0])) < MIN_TAIL_POINTS:
        raise InvalidInputError(f"history: {n_tail} of its {len(history)} rows in the tail (steps {report.tail_start:g}"
                                f"-{report.steps:g}), too few to judge: a verdict needs {MIN_TAIL_POINTS} at least; "
                                "log more often or train longer (too_short='moving' reports it as moving, unchecked)")
    return report


@checked(errors=arr(ndim=1, finite=False, nonempty=False), status=texts(choices=(*STATUSES, "unchecked")),
         reasons=optional(texts()))
def summarise_convergence(errors, status, reasons=None) -> dict:
    """The summary's convergence fields: the theory error over converged prompts, and what did not converge.

    Parameters
    ----------
    errors : array_like
        measured - predicted, one per prompt (and seed).
    status : array_like of str
        The matching :class:`ConvergenceReport` statuses.
    reasons : array_like of str, optional
        Labels of the unconverged ones (e.g. ``"seed 7 q5: moving: ..."``), joined into ``unconverged_why``.

    Returns
    -------
    dict
        ``mae_converged``, ``max_converged`` (NaN if none converged), ``n_converged``, ``n_moving``,
        ``n_oscillating``, ``unconverged_why``.
    """
    err = np.abs(np.asarray(errors, dtype=float))
    st = np.asarray(status).astype(str)
    same_length("one per run", errors=err, status=st, **({} if reasons is None else {"reasons": reasons}))
    ok = st == "converged"
    why = "" if reasons is None else " | ".join(str(r) for r, c in zip(np.asarray(reasons), ok) if not c)
    return dict(mae_converged=float(err[ok].mean()) if ok.any() else np.nan,
                max_converged=float(err[ok].max()) if ok.any() else np.nan,
                n_converged=int(ok.sum()), n_moving=int((st == "moving").sum()),
                n_oscillating=int((st == "oscillating").sum()), unconverged_why=why)


@checked(q=whole(0))
def report_columns(report, q: int) -> dict:
    """Prompt ``q``'s convergence columns from one report, or from a list of one-prompt reports.

    Parameters
    ----------
    report : ConvergenceReport, list of ConvergenceReport, or None
        One report for all prompts, or one one-prompt report per prompt (questions trained alone).
    q : int
        The prompt's index.

    Returns
    -------
    dict
        :meth:`ConvergenceReport.columns`; every column NaN (status ``"unchecked"``) when there is no report.

    Examples
    --------
    >>> report_columns(None, 0)["conv_status"]
    'unchecked'
    """
    if report is not None and not isinstance(report, ConvergenceReport):
        report = listed("report", report, ConvergenceReport,
                        "one-prompt ConvergenceReports (or one ConvergenceReport, or None)")
        index_below("q", q, len(report), "one-prompt reports in report")
        report, q = report[q], 0
    if report is None:
        return dict(conv_status="unchecked", conv_drift=np.nan, conv_slope_per_100=np.nan, conv_spread=np.nan,
                    conv_drift_se=np.nan, prompt_largest_drop=np.nan, prompt_drop_step=np.nan,
                    reward_largest_drop=np.nan, reward_drop_step=np.nan, steps_run=np.nan,
                    conv_reason="unchecked: no convergence report (fewer than 2 logged rows, or none made)")
    return report.columns(q)


@checked(table=dataframe, error=text(), label=function(none=True), unit=optional(texts(nonempty=True)))
def summary_columns(table, error: str = "error", label=None, unit=None) -> dict:
    """:func:`summarise_convergence` over the rows of a result table that carry :func:`report_columns`.

    The MAE and max are over every row of a converged prompt; the counts and ``unconverged_why``
    are over prompts.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with the :func:`report_columns` columns and an error column.
    error : str
        The column of measured - predicted.
    label : callable, optional
        ``label(row) -> str`` names an unconverged prompt (default: ``q<question>``).
    unit : sequence of str, optional
        The columns whose distinct values are the prompts (default: every row is a prompt; e.g.
        ``["seed", "question"]`` where a table has a row per answer).

    Returns
    -------
    dict
        The fields of :func:`summarise_convergence`, and ``largest_reward_drop`` (the largest mean-reward
        drop of the rows' runs).
    """
    has_columns("table", table, ["conv_status", "conv_reason", error, *(() if label else ("question",))])
    has_columns("table", table, [] if unit is None else list(unit), given_as="unit")
    label = label or (lambda r: f"q{r['question']}")
    ok = table["conv_status"].to_numpy().astype(str) == "converged"
    err = np.abs(table[error].to_numpy(dtype=float))
    prompts = table if unit is None else table.drop_duplicates(list(unit))
    reasons = [f"{label(r)}: {r['conv_reason']}" for _, r in prompts.iterrows()]
    out = summarise_convergence(np.zeros(len(prompts)), prompts["conv_status"].to_numpy(), reasons)
    out["mae_converged"] = float(err[ok].mean()) if ok.any() else np.nan
    out["max_converged"] = float(err[ok].max()) if ok.any() else np.nan
    drops = table["reward_largest_drop"].to_numpy(dtype=float)
    out["largest_reward_drop"] = float(np.nanmax(drops)) if np.isfinite(drops).any() else np.nan
    return out
