r"""How GRPO moves on a tabular policy (one context, finite outputs).

* :func:`flow` — the on-policy expected-gradient flow on softmax logits,
  ``d theta_o/dt = pi(o) (g(o) - E_pi g)`` with ``g`` the per-output gradient of
  the objective at ``pi_old = pi`` (see :mod:`grpo_theory.solvers`), integrated
  as an ODE; :func:`ascent` is the same with Euler steps of size ``lr``.
* :func:`basins` — for two-class questions, the interval of ``pi(a)`` that flows
  to each stable point (delimited by the unstable ones).
* :func:`grpo_steps` — GRPO as practised: a batch from ``pi_old``, ``mu`` inner
  gradient steps on the clipped surrogate (PPO clipping of ``rho = pi/pi_old``),
  then ``pi_old <- pi``; with exact expectations over groups, or Monte Carlo groups.
* The proximal map of the note's definition (``pi_n = argmax J(pi; pi_{n-1})``),
  its fixed points and cycles, and the arcsin potential live in
  :mod:`grpo_theory.proximal` and are re-exported here.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from . import advantage, kl
from ._checks import COUNT, OBJECTIVE, POSITIVE_COUNT, QUESTION, arr, checked, flag, num, optional, checked_record
from ._numerics import CpuBudgetSpent, IntegrationFallbackWarning, logsumexp, solve_ivp, within_cpu
from ._validate import float_array, integer, number, plain
from .monte_carlo import sample_rewards, sampled_advantages
from .preference import expectations_evaluator, level_expectations
from .problem import InvalidInputError, Objective, Question, shaped_question, validate_probability_vector
from .proximal import (  # noqa: F401  (re-exported: the issue's API is dynamics.proximal_map etc.)
    MapFixedPoint,
    arcsin_potential,
    map_cycles,
    map_fixed_points,
    potential_objective,
    proximal_map,
)
from .solvers import (
    Basin,
    ClassProblem,
    StationaryPointSet,
    TreeProblem,
    output_gradient,
    stationary_points,
    token_level,
)
from .solvers.tie_jump_end import has_tie_jumps
from .solvers.work import (
    MAX_BATCH_SAMPLES,
    MAX_FLOW_VALUES,
    count_vectors,
    refuse_slow,
    search_work_checked,
    step_seconds,
)

__all__ = ["Trajectory", "flow", "ascent", "basins", "Basin", "grpo_steps", "output_gradient",
           "proximal_map", "map_fixed_points", "map_cycles", "arcsin_potential", "potential_objective",
           "MapFixedPoint"]


def _points_checked(q: Question, obj: Objective, with_points: bool, caller: str) -> None:
    """With ``with_points``, refuse up front (before the path) a stationary-point search that would run for minutes."""
    if not with_points:
        return
    try:
        search_work_checked(q, obj, caller=f"{caller}(..., with_points=True)")
    except InvalidInputError as exc:
        raise InvalidInputError(f"{exc}; or with_points=False (the path alone; then stationary_points(q, obj, ...) "
                                "with the options above)") from None


@dataclass(frozen=True)
@checked_record
class Trajectory:
    """A path of policies with diagnostics, as :func:`flow`, :func:`ascent` and :func:`grpo_steps` return it.

    Attributes
    ----------
    t : numpy.ndarray, shape (T,)
        Times (flow) or step/batch indices.
    pi : numpy.ndarray, shape (T, K)
        The policy at each entry of ``t``.
    expected_reward : numpy.ndarray, shape (T,)
        ``E_pi r`` (NaN for preference questions).
    penalty : numpy.ndarray, shape (T,)
        The divergence the objective penalises: KL(pi || pi_ref) for "direct", KL(pi_ref || pi)
        for "reverse".
    distance : numpy.ndarray, shape (T, S)
        Max-norm distance to each of the ``S`` ``points``.
    points : StationaryPointSet or None
        The stationary points of the question (None when not asked for).
    status : str
        ``"ok"``, or why the path stopped (then :attr:`diverged` is True).
    """

    t: np.ndarray
    pi: np.ndarray
    expected_reward: np.ndarray
    penalty: np.ndarray
    distance: np.ndarray
    points: StationaryPointSet | None
    status: str = "ok"

    @property
    def diverged(self) -> bool:
        """True when the path stopped early (``status`` is not ``"ok"``)."""
        return self.status != "ok"

    @property
    def final(self) -> np.ndarray:
        """The last policy, ``pi[-1]``."""
        return self.pi[-1]


def _penalty_value(q: Question, obj: Objective, pi: np.ndarray) -> np.ndarray:
    """KL(pi || pi_ref) (direct), KL(pi_ref || pi) (reverse), else ``E_pi[value]`` of the trainer's estimator."""
    ref = q.pi_ref
    with np.errstate(divide="ignore", invalid="ignore"):
        if obj.regime_variant.is_direct:
            terms = np.where(pi > 0, pi * (np.log(pi) - np.log(ref)), 0.0)
        elif obj.regime_variant.is_reverse:
            terms = np.where(ref > 0, ref * (np.log(ref) - np.log(pi)), 0.0)
        else:
            lr = np.where(pi > 0, np.log(np.where(pi > 0, pi, 1.0)) - np.log(np.where(ref > 0, ref, 1.0)), 0.0)
            terms = pi * kl.flow_value(obj, lr)
    return terms.sum(axis=-1)


def _trajectory(q, obj, t, pis, with_points: bool, status: str = "ok") -> Trajectory:
    pis = np.asarray(pis)
    er = pis @ q.expected_reward if q.has_reward_law else np.full(len(pis), np.nan)
    pts = stationary_points(q, obj) if with_points else None
    dist = np.zeros((len(pis), 0)) if pts is None else \
        np.stack([np.abs(pis - p.pi).max(axis=1) for p in pts], axis=1) if len(pts) else np.zeros((len(pis), 0))
    return Trajectory(np.asarray(t, float), pis, er, _penalty_value(q, obj, pis), dist, pts, status)


def _check_start(q: Question, obj: Objective, pi0) -> np.ndarray:
    pi0 = validate_probability_vector("pi0", pi0)
    if pi0.size != q.n_outputs:
        raise InvalidInputError(f"pi0 must have K={q.n_outputs} entries, got {pi0.size}")
    if obj.regime_variant.is_direct and np.any((pi0 > 0) & (q.pi_ref == 0)):
        raise InvalidInputError("with the direct penalty pi0 must give no mass where pi_ref = 0 "
                                f"(KL(pi || pi_ref) is infinite there); got pi0={pi0.tolist()}")
    if obj.regime_variant.is_reverse and np.any((pi0 == 0) & (q.pi_ref > 0)):
        raise InvalidInputError("with the reverse penalty pi0 must give mass wherever pi_ref does "
                                f"(KL(pi_ref || pi) is infinite otherwise); got pi0={pi0.tolist()}")
    if not obj.regime_variant.is_note_penalty and np.any((pi0 > 0) != (q.pi_ref > 0)):
        raise InvalidInputError(f"with kl_estimator={obj.estimator!r} in the {obj.kl_placement} pi0 must have "
                                "the support of pi_ref (the estimator needs log(pi/pi_ref) finite); got "
                                f"pi0={pi0.tolist()}")
    return pi0


def _policy_from_logits(q: Question, support: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Softmax of the logits ``theta`` of the outputs in ``support``; 0 elsewhere."""
    pi = np.zeros(q.n_outputs)
    pi[support] = np.exp(theta - logsumexp(theta))
    return pi


def _gradient_evaluator(q: Question, obj: Objective):
    """``pi -> output_gradient(q, obj, pi)`` with ``E(w)``'s set-up done once per flow.

    A flow evaluates the gradient hundreds of times for one question and objective; for a reward law and
    the note's two penalties (no tie filtering, no entropy bonus) this runs :func:`output_gradient`'s own
    operations on the same arrays, with :func:`~grpo_theory.preference.expectations_evaluator` (the same
    values as ``level_expectations`` to the bit) in place of :func:`~grpo_theory.preference.reward_preference`'s
    per-call checks and look-ups, so the gradient, and the flow, are the same to the bit. Other cases call
    :func:`output_gradient`.
    """
    if not (q.has_reward_law and obj.regime_variant.is_note_penalty and not advantage.changes_regulariser(obj)):
        return lambda pi: output_gradient(q, obj, pi)
    R, ref, beta = q.membership, q.pi_ref, obj.beta
    expectations = expectations_evaluator(q.reward_levels, obj)
    reverse = obj.regime_variant.is_reverse

    def gradient(pi: np.ndarray) -> np.ndarray:
        s = pi > 0
        g = np.zeros_like(pi)
        with np.errstate(divide="ignore"):
            P = R @ expectations(np.log(pi @ R))         # reward_preference(q, obj, pi)
            if reverse:
                g[s] = P[s] - beta * (1.0 - ref[s] / pi[s])
            else:
                lr = np.zeros_like(pi)
                lr[s] = np.log(pi[s]) - np.log(ref[s])
                g[s] = P[s] - beta * (lr[s] + 1.0)
        return g
    return gradient


def _logit_rhs(q, obj, support):
    gradient = _gradient_evaluator(q, obj)

    def rhs(_t, theta):
        pi = np.zeros(q.n_outputs)
        lp = theta - logsumexp(theta)
        pi[support] = np.exp(lp)
        g = gradient(pi)[support]
        w = np.exp(lp)
        return w * (g - w @ g)
    return rhs


@checked(q=QUESTION, obj=OBJECTIVE, t=arr(ndim=1), with_points=flag)
def flow(q: Question, obj: Objective, pi0, t, *, with_points: bool = True, rtol: float = 1e-9,
         atol: float = 1e-11) -> Trajectory:
    """Integrate the expected-gradient flow on logits from ``pi0`` at time 0; ``pi`` at the times ``t >= 0``.

    ``d theta_o/dt = pi(o) (g(o) - E_pi g)`` with ``g`` the per-output gradient at ``pi_old = pi``
    (:func:`~grpo_theory.solvers.output_gradient`), integrated with LSODA; at token level on an
    answer tree, the flow on the tree's node logits.

    Parameters
    ----------
    q : Question
        The question: its outputs, ``pi_ref`` and rewards (as for :func:`~grpo_theory.solvers.output_gradient`).
    obj : Objective
        The objective whose expected gradient ``g`` drives the flow.
    pi0 : array_like, shape (K,)
        The policy at time 0 (e.g. ``q.pi_ref``).
    t : array_like, shape (T,)
        Non-decreasing times ``>= 0`` at which ``pi`` is reported (``t[0] > 0`` skips the path from 0).
    with_points : bool, default True
        Also compute the stationary points, for ``Trajectory.distance``.
    rtol : float, default 1e-9
        Relative tolerance of the ODE solver.
    atol : float, default 1e-11
        Absolute tolerance of the ODE solver.

    Returns
    -------
    Trajectory
        ``pi`` at the times ``t``, with the expected reward, the penalty and the distance to each stationary point
        along the way.

    Raises
    ------
    InvalidInputError
        When ``pi0`` is not a valid start or ``t`` is not a non-decreasing 1-d array of times ``>= 0``; up front,
        when ``t`` holds more than :data:`~grpo_theory.solvers.work.MAX_FLOW_VALUES` values of ``pi`` (times x outputs), or ``with_points``
        asks for a search that would run for minutes (:func:`~grpo_theory.solvers.search.search_work_checked`); when
        the integration runs past :data:`FLOW_MAX_SECONDS` of CPU (a field that jumps, where the integrator chatters:
        the message says how far it got and what to give instead).
    RuntimeError
        When the ODE solver fails.

    Examples
    --------
    From pi_ref = 0.2 with beta = 1 (direct penalty, G = inf), where does GRPO end up? At the
    stable interior point (there is also an unstable one at 0.9347 and the vertex a, see Figure 7).

    >>> import math, numpy as np
    >>> from grpo_theory import Question, Objective, dynamics
    >>> q, obj = Question([0.2, 0.8], rewards=[1, 0]), Objective(beta=1.0, group_size=math.inf, penalty="direct")
    >>> tr = dynamics.flow(q, obj, q.pi_ref, np.linspace(0, 100, 6))
    >>> round(float(tr.final[0]), 4)
    0.6813
    """
    rtol = number("rtol", rtol, low=0.0, high=1.0, low_open=True)
    atol = number("atol", atol, low=0.0)
    pi0 = _check_start(q, obj, pi0)
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 1 or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise InvalidInputError(f"t must be a non-decreasing 1-d array of finite times, got {plain(t)}")
    if t[0] < 0:
        raise InvalidInputError(f"t must be >= 0 (pi0 is the policy at time 0), got t = {plain(float(t[0]))}")
    if t.size * q.n_outputs > MAX_FLOW_VALUES:
        raise InvalidInputError(
            f"flow: t has {t.size:,} times for {q.n_outputs:,} outputs, {t.size * q.n_outputs:,} values of pi (about "
            f"{t.size * q.n_outputs * 43 / 2**30:.1f} GiB at the peak); the limit is {MAX_FLOW_VALUES:,}. Give fewer "
            "times (the integrator's own steps do not depend on them: t = [0, t_max] gives the end)")
    _points_checked(q, obj, with_points, "flow")
    if token_level(q, obj):
        return _tree_flow(q, obj, pi0, t, with_points, rtol, atol)
    support = np.flatnonzero(pi0 > 0)
    theta0 = np.log(pi0[support])
    ts = t if t[0] == 0 else np.concatenate([[0.0], t])            # the flow starts at 0, whatever t[0] is
    try:
        thetas = _logits_at(within_cpu(_logit_rhs(q, obj, support), FLOW_MAX_SECONDS), theta0, ts, rtol, atol)[-t.size:]
    except CpuBudgetSpent as spent:
        raise InvalidInputError(_too_slow(obj, spent, float(t[-1]))) from None
    pis = np.zeros((t.size, q.n_outputs))
    pis[:, support] = np.exp(thetas - logsumexp(thetas, axis=1, keepdims=True))
    return _trajectory(q, obj, t, pis, with_points)


#: Flow times beyond ``t[0] + FLOW_HORIZON`` are filled with the end state when the flow has settled there.
FLOW_HORIZON = 1e12
#: CPU seconds after which ``flow`` stops integrating and says why (a field that jumps makes the integrator chatter).
FLOW_MAX_SECONDS = 30.0


def _too_slow(obj: Objective, spent: CpuBudgetSpent, t_end: float) -> str:
    """``flow``'s refusal when its integration ran out of CPU: how far it got, and the likely cause."""
    why = ("the field jumps where shaped rewards tie (the KL value in the reward, scale normalisation and no "
           "std_eps), and the integrator chatters along the jump with ever smaller steps; give the objective a small "
           "std_eps (trainers use about 1e-6: a continuous field), or use stationary_policy(question, objective) for "
           "the end") if has_tie_jumps(obj) else (
           "the field may jump (a clamp, abs, a tie of normalised rewards) or be stiff there; give fewer or shorter "
           "times, or use stationary_policy(question, objective) for the end")
    return (f"flow: integrating to t = {t_end:g} was stopped after {spent.seconds:g} s of CPU at t = {spent.t:.3g}; "
            + why)


def _logits_at(rhs, theta0: np.ndarray, t: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Logits at the non-decreasing times ``t`` (shape ``(T, len(theta0))``).

    Times closer to ``t[0]`` than the flow can move a logit by one part in 10^17 (``(t - t[0]) max(|rhs|, 1) <=
    1e-17``, e.g. ``t = 1e-300``) keep the start: the change is below double precision, and an integrator asked for such a
    span never finishes. Repeated times are integrated once. Times past ``t[0] + FLOW_HORIZON`` take the state
    at the horizon when the policy no longer moves there (equal at half and the whole horizon to 1e-12);
    otherwise they are refused, naming the time.
    """
    out = np.repeat(theta0[None, :], t.size, axis=0)
    speed = float(np.max(np.abs(rhs(float(t[0]), theta0)), initial=0.0))
    # max(speed, 1): a slow start (near an unstable point) may speed up; over a span <= 1e-17 it cannot matter
    moving = (t - t[0]) * max(speed, 1.0) > 1e-17 * max(1.0, float(np.max(np.abs(theta0), initial=0.0)))
    if not np.any(moving):
        return out
    tu, inv = np.unique(t[moving], return_inverse=True)
    far = tu > t[0] + FLOW_HORIZON
    near = np.concatenate([tu[~far], [t[0] + FLOW_HORIZON]]) if np.any(far) else tu
    sol = _solve_with_fallback(rhs, (float(t[0]), float(near[-1])), theta0, np.concatenate([[t[0]], near])
                               if near[0] > t[0] else near, rtol, atol)
    ys = sol.y.T[-len(near):]
    if np.any(far):
        half = _solve_with_fallback(rhs, (float(t[0]), float(t[0] + FLOW_HORIZON / 2)), theta0,
                                    np.array([t[0], t[0] + FLOW_HORIZON / 2]), rtol, atol).y.T[-1]
        end = ys[-1]
        p_end, p_half = np.exp(end - logsumexp(end)), np.exp(half - logsumexp(half))
        if np.max(np.abs(p_end - p_half)) > 1e-12:
            raise InvalidInputError(f"t = {plain(float(tu[far][0]))} is beyond the flow horizon t[0] + "
                                    f"{FLOW_HORIZON:.0e}, and the policy still moves there; give times up to "
                                    f"{FLOW_HORIZON:.0e} after t[0]")
        ys = np.concatenate([ys[:-1], np.repeat(end[None, :], int(np.sum(far)), axis=0)])
    out[moving] = ys[inv]
    return out


def _solve_with_fallback(rhs, span, y0, t, rtol, atol):
    """``solve_ivp`` with LSODA; where it fails (e.g. "Unexpected istate"), the stiff BDF solver, with a warning."""
    try:
        sol = solve_ivp(rhs, span, y0, t_eval=t, method="LSODA", rtol=rtol, atol=atol)
        failure = None if sol.success else sol.message
    except RuntimeError as exc:
        failure = str(exc)
    if failure is None:
        return sol
    warnings.warn(f"LSODA failed ({failure}); integrating with the stiff BDF solver instead",
                  IntegrationFallbackWarning, stacklevel=3)
    sol = solve_ivp(rhs, span, y0, t_eval=t, method="BDF", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"flow integration failed with LSODA ({failure}) and BDF ({sol.message})")
    return sol


def _tree_flow(q: Question, obj: Objective, pi0: np.ndarray, t: np.ndarray, with_points: bool, rtol: float,
               atol: float) -> Trajectory:
    """The token-level flow on the answer tree's node logits (see :mod:`grpo_theory.tree`)."""
    tp = TreeProblem(q, obj)
    if np.any(pi0[tp.support] <= 0):
        raise InvalidInputError(f"the token-level flow starts from a policy with mass on every answer of pi_ref's "
                                f"support; got pi0={pi0.tolist()}")
    x0 = tp.x_from_policy(pi0)
    ts = t if t[0] == 0 else np.concatenate([[0.0], t])            # the flow starts at 0, whatever t[0] is
    sol = solve_ivp(lambda _t, x: tp.free_flow(x), (0.0, float(t[-1])), x0, t_eval=ts, method="LSODA",
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"token-level flow integration failed: {sol.message}")
    pis = np.array([tp.policy(x) for x in sol.y.T[-t.size:]])
    pts = stationary_points(q, obj) if with_points else None
    er = pis @ q.expected_reward
    dist = np.zeros((len(pis), 0)) if not pts else np.stack([np.abs(pis - p.pi).max(axis=1) for p in pts], axis=1)
    return Trajectory(t, pis, er, _penalty_value(q, obj, pis), dist, pts)


@checked(q=QUESTION, obj=OBJECTIVE, steps=COUNT, every=POSITIVE_COUNT, with_points=flag)
def ascent(q: Question, obj: Objective, pi0, *, lr: float, steps: int, every: int = 1,
           with_points: bool = True) -> Trajectory:
    """Expected-gradient ascent on logits with step ``lr`` (Euler steps of :func:`flow`).

    Parameters
    ----------
    q : Question
        The question, as for :func:`flow`.
    obj : Objective
        The objective whose expected gradient is ascended.
    pi0 : array_like, shape (K,)
        The starting policy.
    lr : float
        Step size, ``> 0``.
    steps : int
        Number of steps.
    every : int, default 1
        Record every ``every``-th step (and the last).
    with_points : bool, default True
        Also compute the stationary points, for ``Trajectory.distance``.

    Returns
    -------
    Trajectory
        ``t`` holds the step indices.

    Raises
    ------
    InvalidInputError
        When ``lr`` is not positive and finite, or ``pi0`` is not a valid start; up front, when the steps would
        take over :data:`~grpo_theory.solvers.work.MAX_STEP_SECONDS` of CPU by their measured cost, or ``with_points`` asks for a search that
        would run for minutes.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.3, 0.7], rewards=[1, 0])
    >>> tr = ascent(q, Objective(beta=1.0), q.pi_ref, lr=0.5, steps=400, with_points=False)
    >>> round(float(tr.final[0]), 6)                  # Eq. 14: sqrt(0.3)
    0.547723
    """
    lr = number("lr", lr, low=0.0, low_open=True)
    steps, every = integer("steps", steps, low=0), integer("every", every, low=1)
    pi0 = _check_start(q, obj, pi0)
    refuse_slow("ascent", f"steps={steps:,} of {step_seconds(q, obj) * 1e6:,.0f} us each",
                 steps * step_seconds(q, obj),
                 "Use dynamics.flow(q, obj, pi0, [0, lr * steps]) (the same path in the limit of small steps, with "
                 "adaptive steps), fewer steps or a larger lr")
    _points_checked(q, obj, with_points, "ascent")
    support = np.flatnonzero(pi0 > 0)
    rhs = _logit_rhs(q, obj, support)
    theta = np.log(pi0[support])
    ts, pis = [], []
    for k in range(steps + 1):
        if k % every == 0 or k == steps:
            pi = _policy_from_logits(q, support, theta)
            ts.append(k)
            pis.append(pi)
        if k < steps:
            theta = theta + lr * rhs(0.0, theta)
    return _trajectory(q, obj, ts, pis, with_points)


@checked(q=QUESTION, obj=OBJECTIVE)
def basins(q: Question, obj: Objective) -> list[Basin]:
    """Basins of attraction of the stable points (two-class questions), in ``pi(class a)``.

    Parameters
    ----------
    q : Question
        A two-class question.
    obj : Objective
        The objective: ``beta``, the group size ``G``, the penalty and the advantage estimator.

    Returns
    -------
    list of Basin
        One interval of the best class's probability per stable point.

    Raises
    ------
    InvalidInputError
        When the question does not have two classes.

    Examples
    --------
    >>> import math
    >>> from grpo_theory import Objective, Question
    >>> b = basins(Question([0.2, 0.8], rewards=[1, 0]), Objective(beta=1.0, group_size=math.inf, penalty="direct"))
    >>> [(round(x.lo, 4), round(x.hi, 4)) for x in b]
    [(0.0, 0.9347), (0.9347, 1.0)]
    """
    cp = ClassProblem(q, obj)
    if cp.n_classes != 2:
        raise InvalidInputError(f"basins are computed for two-class questions; this one has {cp.n_classes}")
    basins = stationary_points(q, obj).basins       # one home: the search computes them (solvers.basins_of)
    if basins is None:
        raise InvalidInputError(f"basins are computed for two-class questions at sequence level; got {obj.describe()}")
    return list(basins)


# ----------------------------------------------------------------------------- finite-step GRPO

def _exact_batch_stats(q: Question, obj: Objective, pi_old: np.ndarray):
    """Per output: pi_old(o) E[A_1^+ | o_1 = o], pi_old(o) E[A_1^- | o_1 = o], the penalty's sampling weight
    pi_old(o) u(o) (``u`` the probability that its group does not tie, 1 without ``filter_ties``), and the
    entropy bonus's weight ``U = E_pi_old u`` (the kept fraction of groups).

    Needs a reward law: a preference matrix (ties counted half) does not determine ``P(A_1 > 0)``
    when ties are possible.
    """
    if not q.has_reward_law:
        raise InvalidInputError("finite-step GRPO with clipping needs a reward law: a preference matrix "
                                "does not say how often A_1 > 0 strictly")
    R = q.membership
    with np.errstate(divide="ignore"):
        log_w = np.log(pi_old @ R)
    pos = R @ level_expectations(q.reward_levels, log_w, obj, part="positive")
    neg = R @ level_expectations(q.reward_levels, log_w, obj, part="negative")
    kept = advantage.tie_free_probability(R, log_w, obj.group_size) if obj.filter_ties else np.ones_like(pi_old)
    return pi_old * pos, pi_old * neg, pi_old * kept, float(pi_old @ kept)


def _sampled_batch_stats(q: Question, obj: Objective, pi_old: np.ndarray, n_groups: int, rng):
    """Monte Carlo: per output, (1/(B G)) sums of A^+ and A^- over sampled members, and frequencies."""
    if not q.has_reward_law:
        raise InvalidInputError("Monte Carlo GRPO steps need a reward law (rewards are sampled)")
    K, G = q.n_outputs, obj.group_size
    outs = rng.choice(K, size=(n_groups, G), p=pi_old)
    r = sample_rewards(q, outs, rng)
    A = sampled_advantages(r, obj)
    n = n_groups * G
    pos = np.bincount(outs.ravel(), weights=np.maximum(A, 0).ravel(), minlength=K) / n
    neg = np.bincount(outs.ravel(), weights=np.minimum(A, 0).ravel(), minlength=K) / n
    # filter_ties masks a tied group's terms (TRL-style; the normaliser B G stays, as in training.loss)
    kept = np.ones(n_groups) if not obj.filter_ties else (r.max(axis=1) > r.min(axis=1)).astype(float)
    freq = np.bincount(outs.ravel(), weights=np.repeat(kept, G), minlength=K) / n
    return pos, neg, freq, float(kept.mean())


def _surrogate_gradient(q, obj, theta, support, pi_old, stats, clip_eps):
    """Gradient in the logits of the clipped surrogate minus beta times the penalty estimate."""
    pos, neg, freq = (s[support] for s in stats[:3])
    lp = theta - logsumexp(theta)
    pi = np.exp(lp)
    rho = pi / pi_old[support]
    # d/drho of min(rho A, clip(rho) A): 1 unless clipped (A > 0 and rho > 1 + eps, or A < 0 and rho < 1 - eps)
    c = pos * (rho <= 1 + clip_eps) + neg * (rho >= 1 - clip_eps)
    ref = q.pi_ref[support]
    if obj.regime_variant.is_reverse:           # k3 at the sampled outputs: d/dlog pi = 1 - pi_ref/pi
        d = freq * (1.0 - ref / pi)
    elif obj.regime_variant.is_direct and obj.placement_variant.in_loss:
        d = freq * rho * (lp - np.log(ref))  # ratio * k3 (TRL's bias correction): d/dlog pi = rho log(pi/pi_ref)
    elif obj.placement_variant.in_loss:        # the estimator at the current pi; a ratio kind carries rho
        kc = kl.flow_coefficient(obj, lp - np.log(ref))
        d = freq * (rho * kc if obj.estimator_variant.ratio_weighted else kc)
    elif obj.placement_variant.in_advantage:   # A - beta value(pi_old): the value is fixed, the ratio carries it
        d = freq * rho * kl.flow_value(obj, np.log(pi_old[support]) - np.log(ref))
    else:                                   # in the reward: already inside the advantages (stats)
        d = 0.0
    weights = c * rho - obj.beta * d if obj.beta > 0 else c * rho   # coefficient of d log pi(o)/d theta = e_o - pi
    if obj.entropy_coef > 0:                # c_H U H(pi) at the current pi: dH = sum_o -pi(o)(log pi(o) + 1) (e_o - pi)
        weights = weights - obj.entropy_coef * stats[3] * pi * (np.maximum(lp, -745.0) + 1.0)
    return weights - pi * weights.sum()


@checked(q=QUESTION, obj=OBJECTIVE, n_batches=POSITIVE_COUNT, inner_updates=POSITIVE_COUNT,
         clip_eps=num(0, low_open=True, finite=False), n_groups=optional(POSITIVE_COUNT), seed=num(0, 2**63 - 1, integer=True),
         every=POSITIVE_COUNT, with_points=flag)
def grpo_steps(q: Question, obj: Objective, pi0, *, lr: float, n_batches: int, inner_updates: int = 1,
               clip_eps: float = 0.2, n_groups: int | None = None, seed: int = 0, every: int = 1,
               with_points: bool = True) -> Trajectory:
    """GRPO as practised on a tabular softmax policy (plain SGD on the logits).

    Each batch fixes ``pi_old``, then takes ``inner_updates`` gradient steps of size ``lr``
    on ``(1/G) sum_i min(rho_i A_i, clip(rho_i, 1-eps, 1+eps) A_i) - beta * penalty``,
    where the penalty is k3 at the sampled outputs ("reverse") or ratio * k3
    ("direct", TRL's bias-corrected form, whose expectation is KL(pi || pi_ref)).
    With ``n_groups=None`` expectations over groups are exact (the positive and
    negative parts of ``A_1`` per output, from the exact engine); otherwise
    ``n_groups`` groups are sampled per batch. ``filter_ties`` masks a tied group's penalty and entropy
    terms (its advantages are 0); ``entropy_coef = c`` adds ``c H(pi)`` per kept group, ``H`` the exact
    entropy at the current ``pi`` (``beta = 0`` with an entropy bonus is allowed).

    Parameters
    ----------
    q : Question
        A question with a reward law.
    obj : Objective
        The objective: ``beta``, the group size ``G``, the penalty and the advantage estimator. Its ``filter_ties``
        and ``entropy_coef`` are honoured.
    pi0 : array_like, shape (K,)
        The starting policy.
    lr : float
        Step size of the inner SGD steps, ``> 0``.
    n_batches : int
        Number of batches (``pi_old`` updates), ``>= 1``.
    inner_updates : int, default 1
        Gradient steps per batch (``mu``).
    clip_eps : float, default 0.2
        PPO's clipping ``eps`` of ``rho = pi/pi_old``.
    n_groups : int or None, default None
        None: exact expectations over groups; otherwise groups sampled per batch (finite ``G`` only).
    seed : int, default 0
        Seed of the sampled groups.
    every : int, default 1
        As for :func:`ascent`, counting batches.
    with_points : bool, default True
        As for :func:`ascent`.

    Returns
    -------
    Trajectory
        ``t`` holds the batch indices.

    Raises
    ------
    InvalidInputError
        For a bad step or count, Monte Carlo groups with ``G = inf``, or a preference-matrix question; up front,
        over :data:`~grpo_theory.solvers.work.MAX_BATCH_SAMPLES` samples per batch, over :data:`~grpo_theory.solvers.work.MAX_STEP_SECONDS` of CPU by the measured
        cost of a batch, or where ``with_points`` asks for a search that would run for minutes.
    """
    if obj.is_large_group and n_groups is not None:
        raise InvalidInputError(f"n_groups={n_groups!r} draws Monte Carlo groups of group_size answers, which needs a "
                                "finite group_size, got group_size=inf; leave n_groups out (None) for the exact "
                                "expected gradient at G = inf, or give a finite group_size")
    if n_groups is not None:
        n_groups = integer("n_groups", n_groups, low=1)
    lr = number("lr", lr, low=0.0, low_open=True)
    inner_updates, n_batches = integer("inner_updates", inner_updates, low=1), integer("n_batches", n_batches, low=1)
    clip_eps = float(float_array("clip_eps", clip_eps, low=0.0, low_open=True, finite=False))   # inf: no clipping
    seed = integer("seed", seed, low=0)
    if not (lr > 0 and math.isfinite(lr)) or inner_updates < 1 or n_batches < 1 or not (0 < clip_eps):
        raise InvalidInputError(f"need lr > 0, inner_updates >= 1, n_batches >= 1, clip_eps > 0; got "
                                f"lr={lr!r}, inner_updates={inner_updates!r}, n_batches={n_batches!r}, "
                                f"clip_eps={clip_eps!r}")
    if n_groups is not None and not obj.advantage_variant.is_note_advantage:
        raise InvalidInputError("grpo_steps does not model sampled groups of the other advantage estimators yet "
                                f"(exact expectations, n_groups=None, and the expected flow, dynamics.flow, do); "
                                f"got {obj.describe()}")
    pi0 = _check_start(q, obj, pi0)
    if n_groups is not None and n_groups * obj.group_size > MAX_BATCH_SAMPLES:
        raise InvalidInputError(
            f"grpo_steps: n_groups={n_groups:,} groups of G={obj.group_size:,} are {n_groups * obj.group_size:,} "
            f"samples per batch; the limit is {MAX_BATCH_SAMPLES:,} (memory: 10^6 groups of 8 take 314 MB). Use "
            "fewer groups, or n_groups=None for exact expectations over groups")
    # a batch: its statistics (exact: 150 us and 110 ns per count vector of P_G; sampled: 70 ns per sample) and
    # inner_updates steps of 35 us and 0.1 us per output (measured, 3 to 300 outputs)
    stats_s = 1.5e-4 + 4e-6 * q.n_outputs + (1.1e-7 * count_vectors(q, obj) if n_groups is None
                                             else 7e-8 * n_groups * obj.group_size)
    batch_s = stats_s + inner_updates * (3.5e-5 + 1e-7 * q.n_outputs)
    refuse_slow("grpo_steps", f"n_batches={n_batches:,} batches of {batch_s * 1e3:,.3g} ms each "
                 f"(inner_updates={inner_updates:,}" + (f", n_groups={n_groups:,}" if n_groups is not None else "")
                 + ")", n_batches * batch_s,
                 "Use fewer batches, inner updates or groups, or dynamics.flow(q, obj, pi0, t) for the expected "
                 "flow")
    _points_checked(q, obj, with_points, "grpo_steps")
    rng = np.random.default_rng(seed)
    support = np.flatnonzero(pi0 > 0)
    theta = np.log(pi0[support])
    ts, pis = [0], [pi0.copy()]
    status = "ok"
    for b in range(1, n_batches + 1):
        pi_old = _policy_from_logits(q, support, theta)
        if np.any(pi_old[support] == 0):
            # an output of the support underflowed: the k3 gradient (1/pi) and the ratios are
            # undefined from here on; stop and say so rather than return NaN
            status = (f"diverged at batch {b}: pi(o) underflowed to 0 for outputs "
                      f"{support[pi_old[support] == 0].tolist()} (step size {lr:g} too large)")
            break
        q_b = q
        if obj.regime_variant.in_reward:        # the reward shaped by the KL at pi_old, then normalised
            lr_old = np.zeros(q.n_outputs)
            lr_old[support] = np.log(pi_old[support]) - np.log(q.pi_ref[support])
            q_b = shaped_question(q, kl.flow_value_shift(obj, lr_old))
        stats = _exact_batch_stats(q_b, obj, pi_old) if n_groups is None else \
            _sampled_batch_stats(q_b, obj, pi_old, n_groups, rng)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for _ in range(inner_updates):
                theta = theta + lr * _surrogate_gradient(q, obj, theta, support, pi_old, stats, clip_eps)
        if not np.all(np.isfinite(theta)):
            status = f"diverged at batch {b}: non-finite logits (step size {lr:g} too large)"
            break
        if b % every == 0 or b == n_batches:
            pi = _policy_from_logits(q, support, theta)
            ts.append(b)
            pis.append(pi)
    return _trajectory(q, obj, ts, pis, with_points, status)
