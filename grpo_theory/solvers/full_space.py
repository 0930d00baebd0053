r"""Stability and the flow in the full output-logit space (gauge removed), for any question.

The on-policy expected-gradient flow on output logits is ``d theta_o/dt = f_o = pi_o (g_o - E_pi g)``
with ``g`` of :func:`grpo_theory.solvers.output_gradient` (every penalty, estimator and placement).
The class solvers judge stability in class coordinates, assuming the policy inside a class stays
proportional to ``pi_ref``; the flow need not stay there (with the KL in the reward, answers of one
reward get different shaped rewards), so here stability is judged on all ``K`` logits:

* ``J = df/dtheta = diag(pi) (N + diag(c) (I - 1 pi^T))`` with ``c = g - E_pi g`` and
  ``N = dc/dtheta`` (well scaled; computed by central differences of ``output_gradient``); at a stationary
  point ``c = 0`` on the support and ``J = diag(pi) N``, but near a vertex a light answer's ``c`` can be
  O(1) while its drift ``pi_o c_o`` is below any residual tolerance, and the second term keeps that;
* ``f`` is unchanged by ``theta -> theta + c 1`` (the gauge), so ``J 1 = 0``; the eigenvalues that
  matter are those of the map induced on ``R^S / span(1)``, ``Q^T J Q`` with ``Q`` an orthonormal
  basis of ``1^perp``;
* an absent answer (``pi_o = 0``) moves at speed ``pi_o (g_o - E g) -> 0``: the point is a KKT point
  only if every absent answer's drift ``g_o - E_pi g`` (the limit, evaluated at mass 1e-12) is negative;
  otherwise the face repels and the point is not stationary for the flow.

Every function takes the question ``q`` and the objective ``obj`` (any penalty, estimator, placement).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._checks import OBJECTIVE, POSITIVE_COUNT, QUESTION, arr, checked, num, numbers, one_of, checked_record
from .._laws import law
from .._numerics import integrate_until_slow, logsumexp
from .._validate import plain
from ..problem import (STATIONARY_OBJECTIVE, InvalidInputError, Objective, Question, as_objective, as_question,
                       validate_policy, validate_probability_vector)
from .classes import output_gradient
from .gradient import policy_and_centred_gradient
from .kinks import kink_slide

__all__ = ["FullSpaceStability", "full_space_stability", "full_space_flow", "logit_flow", "jump_repeller",
           "logit_newton_step", "one_sided_repeller", "perturbed_ends"]

#: Relative size (against the largest entry of the scaled Jacobian) below which an eigenvalue counts as 0.
EIGEN_TOL = 1e-7
#: Logit below the top at which :func:`full_space_flow` holds a collapsed answer still (mass e^-700, 1e-304).
FROZEN_GAP = -700.0
#: Mass at which an absent answer's drift is evaluated (its limit as the mass goes to 0).
ABSENT_MASS = 1e-12
#: Size, relative to the centred gradient and the absent answers' drift, below which an eigenvalue is 0 however
#: small the Jacobian's own entries (a field flat on a whole face).
_FLAT = 1e-20
#: Logit nudge with which :func:`one_sided_repeller` and :func:`perturbed_ends` leave a point.
NUDGE = 1e-4
#: Flow time to which :func:`perturbed_ends` follows a nudged run.
PERTURBED_T = 1e8
#: Max-norm distance from the point beyond which a nudged run has left it.
LEFT = 1e-3


@dataclass(frozen=True)
@checked_record
class FullSpaceStability:
    """What :func:`full_space_stability` returns.

    A plain container: that function computes every field, nothing is computed on access.

    Attributes
    ----------
    stable : bool or None
        True (stable) or False (unstable), or None when first-order analysis cannot decide (``message`` says why).
    leading : float
        The largest real part of the eigenvalues of the gauge-reduced Jacobian ``Q^T J Q`` on the support
        (NaN at a vertex).
    eigenvalues : numpy.ndarray
        Those eigenvalues, shape (S-1,) for a support of ``S`` answers.
    absent_drift : numpy.ndarray
        The drift ``g_o - E_pi g`` of each absent answer (``-inf`` where ``pi_ref(o) = 0``: outside the reference's
        support, which the flow from ``pi_ref`` never leaves), NaN on the support; shape (K,).
    kkt : bool
        Whether every absent answer's drift is negative (points outward): the point is a KKT point.
    message : str
        The reason for the verdict.
    """

    stable: bool | None
    leading: float
    eigenvalues: np.ndarray
    absent_drift: np.ndarray
    kkt: bool
    message: str


@checked(q=QUESTION, obj=OBJECTIVE, theta=numbers(ndim=1, finite=True), support=arr(0, integer=True, ndim=1))
def logit_flow(q: Question, obj: Objective, theta: np.ndarray, support: np.ndarray) -> np.ndarray:
    """The flow ``f_o = pi_o (g_o - E_pi g)`` on the logits of ``support`` (the other answers at mass 0).

    Parameters
    ----------
    q : Question
        The question (module doc).
    obj : Objective
        The objective (module doc).
    theta : numpy.ndarray
        Logits of the answers in ``support`` (defined up to a constant: the gauge).
    support : numpy.ndarray
        Indices of the answers with positive mass.

    Returns
    -------
    numpy.ndarray
        ``d theta / dt``, same shape as ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Question, Objective
    >>> x = 0.3 ** 0.5                      # G = 2, beta = gamma = 1: x = sqrt(p) (Eq. 14)
    >>> f = logit_flow(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0), np.log([x, 1 - x]), np.arange(2))
    >>> bool(np.abs(f).max() < 1e-12)
    True
    """
    idx = np.asarray(support)
    if idx.dtype.kind not in "iu" or (idx.size and (idx.max() >= q.n_outputs or np.unique(idx).size != idx.size)):
        raise InvalidInputError(f"support must be distinct output indices in [0, {q.n_outputs - 1}] (ints; K = "
                                f"{q.n_outputs}), got {plain(support)} ({type(support).__name__})")
    support = idx                                      # a tuple (0, 1) would index pi in two dimensions
    if np.size(support) == 0 or np.shape(theta) != np.shape(support):
        raise InvalidInputError(f"theta must hold one logit per entry of support ({np.size(support)}), got shape "
                                f"{np.shape(theta)}")
    pi_s, centred = policy_and_centred_gradient(q, obj, theta, support)
    return pi_s * centred


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE, pi=arr(ndim=1), h=num(0, 0.5, low_open=True))
def full_space_stability(q: Question, obj: Objective, pi, *, h: float = 1e-6) -> FullSpaceStability:
    """Stability of ``pi`` under the flow on all output logits (see the module doc).

    Parameters
    ----------
    q : Question
        As for :func:`logit_flow`.
    obj : Objective
        As for :func:`logit_flow`.
    pi : array_like
        A stationary point, shape (K,); its support is the answers with ``pi > 0``.
    h : float
        Central-difference step in the logits.

    Returns
    -------
    FullSpaceStability
        ``stable`` (True, False or None), the eigenvalues, the absent answers' drifts and the reason.

    Raises
    ------
    InvalidInputError
        ``pi`` is not a probability vector with ``K`` entries.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> s = full_space_stability(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0), [0.3**0.5, 1 - 0.3**0.5])
    >>> s.stable, s.leading < 0
    (True, True)
    """
    q, obj = as_question(q), as_objective(obj)
    pi = validate_probability_vector("pi", pi)
    if pi.size != q.n_outputs:
        raise InvalidInputError(f"pi must have K={q.n_outputs} entries, got {pi.size}")
    support = np.flatnonzero(pi > 0)
    absent = np.flatnonzero(pi == 0)
    drift = np.full(q.n_outputs, np.nan)
    for o in absent:
        if q.pi_ref[o] == 0:
            # no reference mass: the flow from pi_ref never gives it any (its speed is proportional to its mass),
            # and every KL estimate is +inf there
            drift[o] = -math.inf
            continue
        mix = (1.0 - ABSENT_MASS) * pi
        mix[o] += ABSENT_MASS
        gm = output_gradient(q, obj, mix)
        drift[o] = gm[o] - mix @ gm
    kkt = bool(np.all(drift[absent] < 0)) if absent.size else True
    S = support.size
    if S == 1:
        eig = np.zeros(0)
        if not kkt:
            return FullSpaceStability(False, math.nan, eig, drift, False,
                                      "a vertex whose absent answers gain (drift > 0): not stationary, it repels")
        return FullSpaceStability(True, math.nan, eig, drift, True,
                                  "a vertex every absent answer drifts away from: stable in the limit (the flow "
                                  "approaches it at a speed proportional to the absent masses)")
    theta = np.log(pi[support])
    finite = drift[absent][np.isfinite(drift[absent])]
    eig, lead, tol, kink = _reduced_spectrum(q, obj, pi, support, theta, h,
                                             float(np.abs(finite).max()) if finite.size else 0.0)
    if not kkt:
        bad = [int(o) for o in absent if not drift[o] < 0]
        return FullSpaceStability(False, lead, eig, drift, False,
                                  f"absent answers {bad} gain under the flow (drift g - E g > 0 at mass "
                                  f"{ABSENT_MASS:g}): the face repels, the point is not stationary for the flow")
    if kink:
        return FullSpaceStability(None, lead, eig, drift, kkt,
                                  f"the field has a kink here ({kink}): first-order analysis cannot decide")
    if abs(lead) <= tol:
        return FullSpaceStability(None, lead, eig, drift, kkt,
                                  f"leading eigenvalue {lead:.3g} is ~0 (tolerance {tol:.1e}, which includes its "
                                  "change between difference steps h and 10 h): first-order analysis cannot decide")
    if lead < 0:
        why = "every eigenvalue of the gauge-reduced full-space Jacobian has negative real part"
        if absent.size:
            why += "; every absent answer drifts outward (stable in the limit along those directions)"
        return FullSpaceStability(True, lead, eig, drift, kkt, why)
    return FullSpaceStability(False, lead, eig, drift, kkt,
                              "an eigenvalue of the gauge-reduced full-space Jacobian has positive real part")


def _reduced_spectrum(q, obj, pi, support, theta, h, absent_scale: float = 0.0) -> tuple[np.ndarray, float, float,
                                                                                       str]:
    """The eigenvalues of the gauge-reduced Jacobian ``Q^T J Q`` (central differences, step ``h``), the leading
    real part, the tolerance below which it counts as 0, and a description of a kink of the field ('' if none).

    The tolerance is ``EIGEN_TOL`` of the scaled Jacobian plus twice the change of the leading eigenvalue
    when the step is ``10 h``: that change measures the differences' own error (rounding grows like
    ``eps |g| / h``, truncation like ``h^2``), and an eigenvalue that moves by more than half its size between
    the two steps is not resolved (near a vertex, where it is of the order of the light masses, or where the
    field is flat along a class: k1 in the loss, whose expected gradient vanishes). A kink (abs's at
    ``pi = pi_ref``, a clamp's threshold) shows as forward and backward differences that disagree beyond the
    smooth field's ``O(h)``; there the linearisation is not defined.
    """
    S = support.size
    g0 = policy_and_centred_gradient(q, obj, theta, support)[1]

    d = pi[support] / pi[support].max()
    Q = np.linalg.qr(np.concatenate([np.ones((S, 1)), np.eye(S)[:, :-1]], axis=1))[0][:, 1:]

    # J = diag(pi) (N + diag(c) (I - 1 pi^T)), c = g - E_pi g at the point: the second term vanishes at an exact
    # root, but near a vertex a light answer's c can be O(1) while its drift pi_o c_o is below any residual
    # tolerance (fuzz seed 7879: c = 0.9 at mass 7e-14, a slow rise the diag(pi) N form read as stable)
    lift = _stationarity_lift(g0, pi[support] / pi[support].sum())

    def spectrum(N):
        M = d[:, None] * (N + lift)                      # J / max(pi): same eigenvalue signs
        return np.linalg.eigvals(Q.T @ M @ Q) * pi[support].max(), float(np.abs(M).max())

    fwd, bwd = _one_sided_differences(q, obj, theta, support, g0, h)
    eig, scale = spectrum((fwd + bwd) / 2)
    lead = float(np.max(eig.real))
    fwd10, bwd10 = _one_sided_differences(q, obj, theta, support, g0, 10 * h)
    lead10 = float(np.max(spectrum((fwd10 + bwd10) / 2)[0].real))
    tol = EIGEN_TOL * max(1e-300, scale) * float(d.min()) * pi[support].max() + 2 * abs(lead - lead10)
    # a field that vanishes on the whole face (k1 in the loss with filtered ties: every group on the face ties) has
    # a Jacobian of rounding only (-3.6e-35 at fuzz seed 6489), whose relative tolerance is as tiny: an eigenvalue
    # counts as 0 below 1e-20 of the field's own size there (the centred gradient, the absent answers' drift)
    tol = max(tol, _FLAT * max(float(np.abs(g0).max()), absent_scale) * pi[support].max())
    # smooth: |fwd - bwd| = h |g''| at step h and ten times that at 10 h; rounding: eps |g| / h, a tenth of it at
    # 10 h; a kink: the same O(1) gap at both
    gap, gap10 = float(np.abs(fwd - bwd).max()), float(np.abs(fwd10 - bwd10).max())
    size = max(float(np.abs(fwd).max()), float(np.abs(bwd).max()), 1e-300)
    kink = ""
    if gap > 1e-3 * size and gap / 3 < gap10 < 3 * gap:
        kink = (f"forward and backward differences of the centred gradient differ by {gap:.2g} at step {h:g} "
                f"and {gap10:.2g} at {10 * h:g}, against entries up to {size:.2g}")
    return eig, lead, tol, kink


def _one_sided_differences(q, obj, theta, support, g0, step) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward differences (step ``step``) of the centred gradient ``c`` on ``support``, whose value
    at ``theta`` is ``g0``: column ``k`` is the derivative along logit ``k``."""
    S = support.size
    up, down = np.empty((S, S)), np.empty((S, S))
    for k in range(S):
        e = np.zeros(S)
        e[k] = step
        up[:, k] = policy_and_centred_gradient(q, obj, theta + e, support)[1]
        down[:, k] = policy_and_centred_gradient(q, obj, theta - e, support)[1]
    return (up - g0[:, None]) / step, (g0[:, None] - down) / step


def _stationarity_lift(c: np.ndarray, pi_s: np.ndarray) -> np.ndarray:
    """``diag(c) (I - 1 pi^T)``: the part of ``J = diag(pi) (N + diag(c)(I - 1 pi^T))`` that vanishes at a root."""
    return c[:, None] * (np.eye(c.size) - pi_s[None, :])


def _support_logits(q, pi) -> tuple[np.ndarray, np.ndarray]:
    """``pi``'s support and its output logits there (``log pi``, up to the gauge), the nudges' starting point; a
    ``pi`` of another length than ``q``'s K outputs is refused."""
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (q.n_outputs,):
        raise InvalidInputError(f"pi must hold one probability per output (K={q.n_outputs}), got {pi.size}: "
                                f"{plain(pi)[:80]}")
    support = np.flatnonzero(pi > 0)
    return support, np.log(pi[support])


_POLICY = law(base=arr(ndim=1))         # a policy given from outside: a law (grpo_theory._laws)


@checked(q=QUESTION, obj=OBJECTIVE, pi=_POLICY, h=num(0, 0.5, low_open=True))
def jump_repeller(q: Question, obj: Objective, pi, *, h: float = 1e-7) -> str:
    """Where ``pi`` sits on a jump of the field (a clamp, REINFORCE++'s whitening at a tie): the first output
    logit whose nudge by ``+-h`` makes that output's drift point away, described, or, at the loss placement's
    jumps, why no common value of ``g`` fits every answer's one-sided range (:func:`~.kinks.kink_slide`: the flow
    slides off the jumps); ``''`` if every nudge is pulled back and the ranges share a point (a Filippov
    equilibrium on all output logits).

    The class solvers judge a jump in class coordinates; across a class the answers can split (a class of
    three tied answers under REINFORCE++ with the KL in the reward: fuzz seeds 603, 1742, 5214, 6019).

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective.
    pi : array_like, shape (K,)
        The point examined (a stationary point, typically).
    h : float, default 1e-7
        The size of each nudge of an output logit.

    Returns
    -------
    str
        The first repelling nudge, described; ``''`` if there is none.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> jump_repeller(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0), [0.3 ** 0.5, 1 - 0.3 ** 0.5])
    ''
    """
    support, theta = _support_logits(q, pi)
    for k, o in enumerate(support):
        for sign in (1.0, -1.0):
            th = theta.copy()
            th[k] += sign * h
            pi_s, centred = policy_and_centred_gradient(q, obj, th, support)
            if sign * centred[k] > 0:
                return (f"moving answer {int(o)}'s logit by {sign * h:g} gives it drift {pi_s[k] * centred[k]:.3g}: "
                        "away from the point")
    # single-logit nudges miss a slide along several jumps at once (abs in the loss at pi_ref: each answer's nudge
    # is pulled back while two answers' ranges of g share no point): the Filippov condition itself decides
    return kink_slide(q, obj, pi)


@checked(q=QUESTION, obj=OBJECTIVE, pi=_POLICY, h=num(0, 0.5, low_open=True))
def one_sided_repeller(q: Question, obj: Objective, pi, *, h: float = NUDGE) -> list[tuple[int, float]]:
    """The single-logit nudges ``(answer, sign)`` of size ``h`` off ``pi`` after which the flow on all output
    logits moves away from ``pi``: ``d/dt |delta|^2 = 2 delta . f > 0`` with ``delta`` the nudge and ``f`` the
    flow there, both with the gauge (a common shift) removed, beyond the rounding of ``f``.

    Where first-order analysis cannot decide (a ~0 eigenvalue, a kink of the field), the flow can still leave
    on one side: one reward law on the support with k2 or k3 in the advantage gives answer ``a`` of a two-answer
    class ``d(lr_a - lr_b)/dt ~ (beta/2) (pi_b^2 - pi_a^2) delta^2``, of one sign whichever way the nudge went;
    abs in the advantage, ``-c |delta|``-like (fuzz seeds 5387, 6343, 5475, 5524, 5909, 7099, 7379, 7922). A
    nudge that is pulled back at first order, or a flat direction (k1 in the loss), is not listed.

    Parameters
    ----------
    q : Question
        The question whose flow is followed.
    obj : Objective
        The objective, as for :func:`jump_repeller`.
    pi : array_like, shape (K,)
        The point nudged.
    h : float, default 1e-4
        The size of each nudge of an output logit.

    Returns
    -------
    list of (int, float)
        ``(answer, sign)`` of each nudge the flow moves away from.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> one_sided_repeller(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0), [0.3 ** 0.5, 1 - 0.3 ** 0.5])
    []
    """
    support, theta = _support_logits(q, pi)
    away = []
    # two answers: nudging the second is nudging the first the other way (the gauge)
    for k, o in enumerate(support[:1] if support.size == 2 else support):
        for sign in (1.0, -1.0):
            delta = np.zeros(support.size)
            delta[k] = sign * h
            delta -= delta.mean()
            pi_s, centred = policy_and_centred_gradient(q, obj, theta + delta, support)
            f = pi_s * centred
            f = f - f.mean()
            noise = 1e-13 * h * max(float(np.abs(pi_s * (centred + pi_s @ centred)).max()), 1e-300)
            if np.all(np.isfinite(f)) and float(delta @ f) > noise:
                away.append((int(o), sign))
    return away


@checked(q=QUESTION, obj=OBJECTIVE, pi=arr(ndim=1), h=num(0, 0.5, low_open=True), t_max=num(0, low_open=True))
def perturbed_ends(q: Question, obj: Objective, pi, *, h: float = NUDGE,
                   t_max: float = PERTURBED_T) -> tuple[np.ndarray, str]:
    """Where the flow on all output logits goes from ``pi`` nudged off it: for every single-logit nudge of size
    ``h`` that :func:`one_sided_repeller` finds moving away, the flow from there followed to ``t_max``
    (:func:`full_space_flow`); the ends farther than :data:`LEFT` from ``pi``, distinct (one row each, shape
    ``(n, K)``; ``(0, K)`` when every run stays), and a description of the nudges that left.

    A point that the flow from it stays at (the field vanishes there) but that any nudge on one side leaves is
    not where a trainer, whose updates are never exact, comes to rest: it is unstable, and these are the ends
    it falls to.

    Parameters
    ----------
    q : Question
        The question; the flow runs on all its output logits.
    obj : Objective
        The objective of that flow.
    pi : array_like, shape (K,)
        The point nudged off (a stationary point, typically).
    h : float, default 1e-4
        The size of each nudge of an output logit.
    t_max : float, default 1e8
        The flow time followed from each nudged start.

    Returns
    -------
    ends : numpy.ndarray, shape (n, K)
        The distinct ends away from ``pi``.
    nudges : str
        The nudges that left, described.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> q, obj = Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0)
    >>> perturbed_ends(q, obj, [0.3 ** 0.5, 1 - 0.3 ** 0.5])[0].shape
    (0, 2)
    """
    q, obj = as_question(q), as_objective(obj)
    pi = validate_policy("pi", pi, q.n_outputs)
    support = np.flatnonzero(pi > 0)
    ends, how = [], []
    for o, sign in one_sided_repeller(q, obj, pi, h=h):
        theta = np.log(pi[support])
        theta[list(support).index(o)] += sign * h
        start = np.zeros(q.n_outputs)
        start[support] = np.exp(theta - logsumexp(theta))
        end = full_space_flow(q, obj, start, t_max=t_max)
        if float(np.abs(end - pi).max()) <= LEFT:
            continue
        how.append(f"answer {o}'s logit {sign * h:+g} -> {np.array2string(end, precision=5)}")
        if not any(float(np.abs(end - e).max()) <= LEFT for e in ends):
            ends.append(end)
    return (np.array(ends) if ends else np.zeros((0, q.n_outputs))), "; ".join(how)


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE, pi=arr(ndim=1), h=num(0, 0.5, low_open=True))
def logit_newton_step(q: Question, obj: Objective, pi, *, h: float = 1e-6) -> float:
    """The length (max norm) of the Newton step on the output logits from ``pi`` to a root of the flow.

    The residual of a point is its drift ``pi_o (g_o - E_pi g)``, so near a vertex a light answer's
    ``c_o = g_o - E_pi g`` can be far from 0 while the residual is below any tolerance. Where the field is
    also weak there (filtered ties near a vertex scale every term by the share of untied groups), the root
    is not close: fuzz seed 6872 had ``c = 1.5e-5`` at mass 4e-8 and a Newton step of about 15 in that
    answer's logit. A root is a point whose Newton step is small: ``J d = -f`` on the gauge-reduced logits
    (``J`` as in :func:`full_space_stability`, least squares so that flat directions, where ``f`` vanishes
    too, add nothing; the common shift of all logits, the gauge, removed).

    Parameters
    ----------
    q : Question
        The question whose flow's root is sought.
    obj : Objective
        The objective of the flow.
    pi : array_like, shape (K,)
        The point the step starts from.
    h : float, default 1e-6
        The step of the Jacobian's differences.

    Returns
    -------
    float
        The Newton step's max norm.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> q, obj = Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0)
    >>> logit_newton_step(q, obj, [0.3 ** 0.5, 1 - 0.3 ** 0.5]) < 1e-9
    True
    >>> round(logit_newton_step(q, obj, [0.5, 0.5]), 2) > 0.05
    True
    """
    pi = validate_policy("pi", pi, q.n_outputs)
    support = np.flatnonzero(pi > 0)
    S = support.size
    if S < 2:
        return 0.0
    theta = np.log(pi[support])
    pi_s, c = policy_and_centred_gradient(q, obj, theta, support)
    fwd, bwd = _one_sided_differences(q, obj, theta, support, c, h)
    N = (fwd + bwd) / 2
    # Newton on c = 0 itself (J = diag(pi) dc/dtheta): solved for f = pi c instead, a heavy answer's rounding in
    # c (1e-17) would be divided by a light answer's tiny row; singular values below 1e-8 of the largest (the
    # gauge, flat or noise-level directions) are cut
    dc = N + _stationarity_lift(c, pi_s)
    step = np.linalg.lstsq(dc, -c, rcond=1e-8)[0]
    return float(np.abs(step - step.mean()).max())


@checked(q=QUESTION, obj=OBJECTIVE, pi0=arr(ndim=1, none=True), t_max=num(0, low_open=True),
         method=one_of('ode', 'euler'), lr=num(0, low_open=True), steps=POSITIVE_COUNT)
def full_space_flow(q: Question, obj: Objective, pi0=None, *, t_max: float = 1e4, method: str = "ode",
                    lr: float = 0.05, steps: int = 200_000) -> np.ndarray:
    """The end of the flow on all output logits from ``pi0`` (default ``pi_ref``).

    Parameters
    ----------
    q : Question
        The question; the flow moves every output's logit, not only its classes'.
    obj : Objective
        The objective, as for :func:`~grpo_theory.solvers.gradient.output_gradient`.
    pi0 : array_like, optional
        The starting policy, shape (K,) (default ``pi_ref``); answers with ``pi0 = 0`` stay at 0.
    t_max : float
        Flow time integrated (``method="ode"``).
    method : str
        ``"ode"``: LSODA to ``t_max`` (at most 20,000 steps; chatter at a jump ends it early), falling
        back to BDF, then a guarded Euler, with an ``IntegrationFallbackWarning`` if it fails;
        ``"euler"``: ``steps`` Euler steps of size ``lr`` (what a trainer does with exact expectations).
    lr : float
        Euler step size (``method="euler"``).
    steps : int
        Number of Euler steps (``method="euler"``).

    Returns
    -------
    numpy.ndarray
        The policy at the end, shape (K,).

    Raises
    ------
    InvalidInputError
        ``pi0`` is not a probability vector, or ``method`` is unknown.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> pi = full_space_flow(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0))
    >>> round(float(pi[0]), 6), round(0.3 ** 0.5, 6)     # G = 2, beta = gamma: x = sqrt(p) (Eq. 14)
    (0.547723, 0.547723)
    """
    q, obj = as_question(q), as_objective(obj)
    pi0 = q.pi_ref if pi0 is None else validate_policy("pi0", pi0, q.n_outputs)
    support = np.flatnonzero(pi0 > 0)
    theta = np.log(pi0[support])
    def rhs(th):
        # An answer whose logit has fallen FROZEN_GAP below the top holds a mass under 1e-304: it has collapsed,
        # and the flow carries it on at a constant speed (fuzz seeds 1181 and 1731: k3_ratio in the advantage)
        # until its mass underflows to 0 and the KL estimate turns NaN. It stays where it is; its mass, which
        # moves the others by less than 1e-300, and the snapping of the caller do the rest.
        frozen = th - th.max() < FROZEN_GAP
        f = logit_flow(q, obj, np.where(frozen, th.max() + FROZEN_GAP, th), support)
        return np.where(frozen, 0.0, f)

    if method == "euler":
        with np.errstate(all="ignore"):
            for _ in range(steps):
                theta = theta + lr * rhs(theta)
                theta = theta - theta.max()
    elif method == "ode":
        theta = _integrate(rhs, theta, t_max)
    else:
        raise InvalidInputError(f"method must be 'ode' or 'euler', got {method!r}")
    pi = np.zeros(q.n_outputs)
    pi[support] = np.exp(theta - logsumexp(theta))
    return pi


def _integrate(rhs, y0: np.ndarray, t_max: float) -> np.ndarray:
    """LSODA to ``t_max`` by :func:`~grpo_theory._numerics.integrate_until_slow`: at most 20,000 steps, chatter
    at a jump or a creep along a kink ends it early (abs in the loss, fuzz seed 7879: solve_ivp chattered for
    minutes), and a failed LSODA continues with BDF, then a guarded Euler, each with a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return integrate_until_slow(rhs, y0, t_max, None)
