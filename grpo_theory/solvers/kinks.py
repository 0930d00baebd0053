r"""Jumps of the field in the loss placement: the rest condition at them, and the flow that slides along them.

With the KL estimate in the loss, ``g(o) = base(o) - beta u(o) c(lr_o)`` (``u = 1`` without tie filtering) and
the coefficient ``c`` of :func:`grpo_theory.kl.coefficient` jumps at the log-ratios of
:func:`grpo_theory.kl.discontinuities` (``abs`` at ``lr = 0``, a clamp's edges). The flow
``d theta_o/dt = pi_o (g_o - E_pi g)`` is then a Filippov system: at a point where the answers ``J`` sit on
their jumps, the field's set-valued extension takes, for each ``o`` in ``J``, any ``g_o`` between its two
one-sided values ``g_o^-`` (``lr_o`` just below the jump) and ``g_o^+`` (just above), independently, since
``g_o`` depends on its own ``c`` only. So

* the point is a **rest** (0 in the Filippov set) iff some ``mu`` lies in every answer's range:
  ``max_o lower_o <= min_o upper_o`` with ``lower = upper = g_o`` off the jumps and
  ``[min(g^-, g^+), max(g^-, g^+)]`` on them;
* the rest **attracts** along ``o``'s jump iff the jump restores, ``g_o^+ < g_o^-`` (above it the logit is
  pulled down, below it up), and ``mu`` is strictly inside; a jump with ``g_o^+ > g_o^-`` repels (a clamp's edge,
  where the penalty's gradient switches off);
* where no ``mu`` fits, answers slide off their jumps however every single logit is nudged: at
  ``pi = pi_ref`` with abs in the loss and ``G = 8`` (rewards 0.5, 1, 0, ``beta = 0.4``) each nudge is pulled
  back, but answer 1 gains on answer 2 by ``7/8 - 2 beta`` whatever their kinks.

:func:`sliding_end` follows such a flow past the jumps with ``c`` smoothed over a band of width ``w`` in the
log-ratio (a sliding mode is then an ordinary trajectory held within ``w`` of its jump), and makes its end exact:
the answers it holds on jumps pinned there, the others solved by Newton's method.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import kl
from .._checks import OBJECTIVE, QUESTION, arr, checked, num
from .._laws import law
from .._numerics import integrate_until_slow, logsumexp, optimize
from ..errors import InvalidInputError
from ..problem import Objective, Question
from .gradient import gradient_with_coefficient

__all__ = ["kink_answers", "kink_slide", "sliding_end", "KINK_TOL"]

#: Distance in the log-ratio (relative to ``max(1, |edge|)``) within which an answer sits on a jump.
KINK_TOL = 1e-6
#: One-sided reading of ``c``: this far (relative) beyond the jump.
_SIDE = 1e-9
#: Band over which :func:`sliding_end` smooths each jump while following the flow.
_BAND = 1e-4
#: Mass below which an answer of the smoothed flow's end has left the support (a face).
_GONE = 1e-9
#: Tolerance, relative to ``max(1, |g|)``, within which the ranges of :func:`kink_slide` count as sharing a point
#: (the rest found by a chattering integration is within ~1e-7 of the jump).
_SHARE_TOL = 1e-6


def _policy(q: Question, pi) -> np.ndarray:
    """``pi`` as a float vector of one entry per output of ``q`` (else refused, named)."""
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (q.n_outputs,):
        raise InvalidInputError(f"pi must hold one probability per output ({q.n_outputs}), got shape {pi.shape}")
    return pi


@checked(q=QUESTION, obj=OBJECTIVE, pi=law(base=arr(ndim=1)))
def kink_answers(q: Question, obj: Objective, pi) -> np.ndarray:
    """The jump each answer of ``pi``'s support sits on (its log-ratio within :data:`KINK_TOL`), NaN elsewhere.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective; only the loss placement's jumps (:func:`grpo_theory.kl.discontinuities`) count.
    pi : array_like, shape (K,)
        The policy.

    Returns
    -------
    numpy.ndarray, shape (K,)
        The edge ``e`` with ``|lr_o - e| <= KINK_TOL max(1, |e|)``, or NaN (also off the support).
    """
    pi = _policy(q, pi)
    out = np.full(pi.shape, np.nan)
    edges = np.asarray(kl.discontinuities(obj), dtype=float)
    s = (pi > 0) & (q.pi_ref > 0)
    if edges.size == 0 or not s.any():
        return out
    lr = np.log(pi[s]) - np.log(q.pi_ref[s])
    dist = np.abs(lr[:, None] - edges[None, :])
    near = np.argmin(dist, axis=1)
    on = dist[np.arange(lr.size), near] <= KINK_TOL * np.maximum(1.0, np.abs(edges[near]))
    out[np.flatnonzero(s)[on]] = edges[near[on]]
    return out


def _sided(edge_s: np.ndarray, side: float):
    """``c`` with each answer on a jump (``edge_s``, aligned with the support) read just below (``side = -1``) or
    above (``+1``) it; the others at their own log-ratio."""
    at = ~np.isnan(edge_s)
    pos = edge_s[at] + side * _SIDE * np.maximum(1.0, np.abs(edge_s[at]))

    def coefficient(obj, lr):
        lr = np.array(lr, dtype=float)
        lr[at] = pos
        return kl.flow_coefficient(obj, lr)
    return coefficient


@checked(q=QUESTION, obj=OBJECTIVE, pi=law(base=arr(ndim=1)))
def kink_slide(q: Question, obj: Objective, pi) -> str:
    """Why ``pi`` is no attracting rest of the Filippov flow at the loss placement's jumps (module doc), or ``''``
    where it is one (or where no answer sits on a jump).

    Parameters
    ----------
    q : Question
        The question; its ``pi_ref`` sets each answer's log-ratio ``lr_o = log(pi_o/pi_ref(o))``.
    obj : Objective
        The objective; without jumps in the loss placement the answer is ``''``.
    pi : array_like, shape (K,)
        The point examined (where a flow chatters, typically).

    Returns
    -------
    str
        The reason, naming the answers; ``''`` if none.

    Examples
    --------
    >>> import dataclasses
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.3, 0.3, 0.4], rewards=[0.5, 1.0, 0.0])
    >>> obj = Objective(beta=0.4, group_size=8, normalization="shift", kl_estimator="abs", kl_placement="loss")
    >>> kink_slide(q, obj, q.pi_ref).startswith("no common value")
    True
    >>> kink_slide(q, dataclasses.replace(obj, beta=0.5), q.pi_ref)      # 2 beta = 1 > 7/8: every kink holds
    ''
    """
    pi = _policy(q, pi)
    edge = kink_answers(q, obj, pi)
    if np.all(np.isnan(edge)):
        return ""
    s = pi > 0
    edge_s = edge[s]
    with np.errstate(all="ignore"):
        g_lo = gradient_with_coefficient(q, obj, pi, _sided(edge_s, -1.0))[s]
        g_hi = gradient_with_coefficient(q, obj, pi, _sided(edge_s, +1.0))[s]
    if not (np.all(np.isfinite(g_lo)) and np.all(np.isfinite(g_hi))):
        return ""
    answers = np.flatnonzero(s)
    tol = _SHARE_TOL * max(1.0, float(np.abs(g_lo).max()), float(np.abs(g_hi).max()))
    repel = np.flatnonzero(g_hi > g_lo + tol)
    if repel.size:
        o = int(repel[0])
        return (f"answer {int(answers[o])} sits on a jump of the field at lr = {edge_s[o]:g} that repels (g = "
                f"{g_lo[o]:.6g} just below it, {g_hi[o]:.6g} just above): the flow leaves it")
    lower, upper = np.minimum(g_lo, g_hi), np.maximum(g_lo, g_hi)
    a, b = int(np.argmax(lower)), int(np.argmin(upper))
    gap = float(lower[a] - upper[b])
    if gap <= tol:
        return ""
    return (f"no common value of g fits every answer's range at the jumps (answer {int(answers[a])}'s least g, "
            f"{lower[a]:.6g}, exceeds answer {int(answers[b])}'s greatest, {upper[b]:.6g}, by {gap:.3g}): 0 is not "
            "in the Filippov set, and the flow slides off the jumps")


def _smoothed(edges: np.ndarray, band: float):
    """``c`` with each jump replaced by a C^1 ramp over ``|lr - e| < band`` between its two one-sided branches."""
    def coefficient(obj, lr):
        lr = np.asarray(lr, dtype=float)
        c = kl.flow_coefficient(obj, lr)
        for e in edges:
            x = (lr - e) / band
            inside = np.abs(x) < 1.0
            if not inside.any():
                continue
            d = _SIDE * max(1.0, abs(e))
            xi = x[inside]
            w = 0.5 + xi * (3.0 - xi * xi) / 4.0
            left = kl.flow_coefficient(obj, np.minimum(lr[inside], e - d))
            right = kl.flow_coefficient(obj, np.maximum(lr[inside], e + d))
            c = c.copy()
            c[inside] = (1.0 - w) * left + w * right
        return c
    return coefficient


def _field(q: Question, obj: Objective, support: np.ndarray, coefficient):
    """The flow on the logits of ``support`` with ``c`` from ``coefficient``."""
    def rhs(th):
        pi = np.zeros(q.n_outputs)
        pi[support] = np.exp(th - logsumexp(th))
        with np.errstate(all="ignore"):
            g = gradient_with_coefficient(q, obj, pi, coefficient)[support]
        return pi[support] * (g - pi[support] @ g)
    return rhs


def _pinned_end(q: Question, obj: Objective, support: np.ndarray, theta: np.ndarray, edges: np.ndarray,
                band: float) -> np.ndarray | None:
    """The Filippov end near the smoothed flow's end ``theta`` (logits on ``support``): each answer within ``10
    band`` of a jump pinned on it (mass ``pi_ref(o) e^{edge}``), the others (``F``) sharing the rest of the mass
    where ``g`` is constant on ``F`` (Newton's method on their relative logits; their ``c`` is smooth there)."""
    pi_s = np.exp(theta - logsumexp(theta))
    lr = np.log(pi_s) - np.log(q.pi_ref[support])
    dist = np.abs(lr[:, None] - edges[None, :])
    near = np.argmin(dist, axis=1)
    pinned = dist[np.arange(lr.size), near] <= 10.0 * band * np.maximum(1.0, np.abs(edges[near]))
    mass = q.pi_ref[support] * np.exp(edges[near])
    rest = 1.0 - float(mass[pinned].sum())
    free = np.flatnonzero(~pinned)
    end = np.zeros(q.n_outputs)
    end[support[pinned]] = mass[pinned]
    if free.size == 0:
        return end / end.sum() if abs(rest) <= 1e-12 else None
    if rest <= 0.0:
        return None
    if free.size == 1:
        end[support[free]] = rest
        return end
    ref, others = free[np.argmax(pi_s[free])], free[free != free[np.argmax(pi_s[free])]]

    def policy(x):
        out = end.copy()
        w = np.exp(np.append(x, 0.0) - logsumexp(np.append(x, 0.0)))
        out[support[others]] = rest * w[:-1]
        out[support[ref]] = rest * w[-1]
        return out

    def eqs(x):
        with np.errstate(all="ignore"):
            g = gradient_with_coefficient(q, obj, policy(x), kl.flow_coefficient)
        r = g[support[others]] - g[support[ref]]
        return np.where(np.isfinite(r), r, 1e100)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sol = optimize.root(eqs, np.log(pi_s[others]) - math.log(pi_s[ref]), method="hybr", options={"xtol": 1e-14})
    if not np.all(np.isfinite(sol.x)) or float(np.abs(eqs(sol.x)).max()) > 1e-10:
        return None
    return policy(sol.x)


@checked(q=QUESTION, obj=OBJECTIVE, pi=law(base=arr(ndim=1)), t_max=num(0, low_open=True))
def sliding_end(q: Question, obj: Objective, pi, t_max: float = 1e12) -> tuple[np.ndarray, str] | None:
    """Where the flow goes from ``pi`` (a point on jumps that it slides off, :func:`kink_slide`) with each jump
    smoothed over a band of ``1e-4`` in the log-ratio, followed in log time to ``t_max``. Its end is then made
    exact: an answer within ten bands of a jump is pinned on it, an answer below mass ``1e-9`` leaves the support
    (a face, reached in the limit), and the others solve ``g`` constant among themselves (Newton's method).

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective (the loss placement with jumps; None is returned without them).
    pi : array_like, shape (K,)
        The start.
    t_max : float, default 1e12
        The flow time followed.

    Returns
    -------
    (numpy.ndarray, str) or None
        The end and how it was found, or None where the smoothed flow or its polish fails (the caller says so).
    """
    edges = np.asarray(kl.discontinuities(obj), dtype=float)
    pi = _policy(q, pi)
    support = np.flatnonzero(pi > 0)
    if edges.size == 0 or support.size < 2:
        return None
    rhs = _field(q, obj, support, _smoothed(edges, _BAND))

    def in_log_time(y):
        if not np.all(np.isfinite(y)):
            return np.full(y.size, np.nan)
        return np.append(math.exp(y[-1]) * rhs(y[:-1]), 1.0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            y = integrate_until_slow(in_log_time, np.append(np.log(pi[support]), 0.0), math.log1p(t_max), None)
        except (ValueError, RuntimeError, ArithmeticError):
            return None
    theta = y[:-1]
    if not np.all(np.isfinite(theta)):
        return None
    theta = theta - theta.max()
    keep = theta > math.log(_GONE)
    end = _pinned_end(q, obj, support[keep], theta[keep], edges, _BAND)
    if end is None or float(np.abs(end[support[keep]] - np.exp(theta[keep] - logsumexp(theta[keep]))).max()) > 1e-2:
        return None
    return end, (f"the flow slides along the jumps of the field (each smoothed over {_BAND:g} in the log-ratio, "
                 f"followed to t = {t_max:g}; its end pinned on the jumps it holds and solved exactly)")
