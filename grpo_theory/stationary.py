r"""Stationary policies of GRPO and their stability (SPEC section 3).

Let ``g(o) = dJ/dpi(o)`` be the per-output gradient of the objective at
``pi_old = pi``:

* reverse penalty (k3): ``g(o) = P_G(o|pi) - beta (1 - pi_ref(o)/pi(o))``;
* direct penalty:       ``g(o) = P_G(o|pi) - beta (log(pi(o)/pi_ref(o)) + 1)``.

A policy is stationary when ``g(o)`` is the same for every ``o`` in its support
(KKT with a multiplier for the simplex). For the reverse penalty this is Eq. 11,
``pi(o) (1 - (P_G(o|pi) - E_pi P_G)/beta) = pi_ref(o)``; for the direct penalty
``pi(o) ∝ pi_ref(o) exp(P_G(o|pi)/beta)``.

Stability refers to the on-policy expected-gradient flow on softmax logits,
``d theta_o/dt = pi(o) (g(o) - E_pi g)``.

Reduction to classes. ``P_G`` depends on an output only through its reward law,
so outputs with the same law form a *class*; at every stationary point the policy
within a class is proportional to ``pi_ref`` (both penalties), and outputs with
``pi_ref = 0`` get 0. The solvers therefore work on the ``C`` classes:

Moving mass inside a class leaves ``w`` and so ``P_G`` unchanged; there only the
penalty acts, and it restores ``pi ∝ pi_ref``. The set of policies proportional
to ``pi_ref`` inside every class is invariant under the flow, so stability is
decided by the class-level dynamics alone.

* ``C = 2``: a scalar problem in the class logit ``z = log(pi(a)/pi(b))``; the
  drift ``s(z) = g(a) - g(b)`` is scanned on a grid that provably contains every
  root (bounds from ``max |A_i|``), each sign change is refined with Brent's
  method and tangencies are detected; the search is exhaustive. The direct
  penalty with ``G = inf`` can drive the mass to a vertex: such a *limit point*
  is reported with ``boundary=True`` when the flow runs into it.
* ``C > 2``: Newton-type root finding (MINPACK hybrid, then Levenberg-Marquardt)
  on the class logits, started from the end of the flow from ``pi_ref`` and from
  several other points; reported points are deduplicated, the search is not
  guaranteed exhaustive, and the result says so.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from . import advantage, kl
from ._numerics import expit, integrate_until_slow, logsumexp, optimize
from .preference import max_abs_advantage, pooled_expectations, reward_preference
from .problem import (
    InvalidInputError,
    Objective,
    Question,
    as_objective,
    as_question,
    validate_probability_vector,
)

__all__ = [
    "StationaryPoint",
    "StationaryPointSet",
    "stationary_policy",
    "stationary_points",
    "stationarity_residual",
    "output_gradient",
    "clamp_critical_beta",
    "ClassProblem",
]

#: Largest |class logit| searched where |P_G| is unbounded (G = inf); exp(-745) underflows.
Z_CAP = 740.0
#: Residual below which a solution counts as converged.
RESIDUAL_TOL = 1e-10
#: |eigenvalue| below which first-order stability is undecided.
STABILITY_TOL = 1e-9


@dataclass(frozen=True)
class StationaryPoint:
    """One stationary policy with its diagnostics (in the manner of scipy's OptimizeResult).

    Attributes
    ----------
    pi : (K,) the policy.
    residual : max-norm residual of the stationarity condition (see
        :func:`stationarity_residual`); for a boundary limit point, the speed of
        the logit flow at the end of the search range.
    converged : whether ``residual <= RESIDUAL_TOL`` (or the limit point test passed).
    stable : True/False under the expected-gradient flow on logits; None when
        first-order analysis cannot decide (a zero eigenvalue, e.g. a tangency).
    iterations : function evaluations used by the refinement.
    method : how it was found.
    message : the reason behind ``converged`` or ``stable``, in words.
    boundary : True for a vertex reached only in the limit (direct penalty, G = inf; or a collapse
        where a clamped or absent KL gradient cannot hold the mass).
    discontinuous : True where the vector field jumps at the point (a KL clamp switching on; the KL
        in the reward with std scaling and no epsilon, where advantages stay O(1) arbitrarily close).
        The drift changes sign across the jump: an attracting jump (``stable=True``) is a Filippov
        equilibrium, which a discrete trainer reaches and then chatters around with an amplitude set
        by its step size; a repelling one (``stable=False``) separates two basins.
    eigenvalues : eigenvalues of the Jacobian of the logit flow (reduced to classes).
    class_logit : for two-class questions, ``log(pi(class a)/pi(class b))`` (may be
        beyond what ``pi`` can show in double precision).
    """

    pi: np.ndarray
    residual: float
    converged: bool
    stable: bool | None
    iterations: int
    method: str
    message: str = ""
    boundary: bool = False
    eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0))
    class_logit: float | None = None
    discontinuous: bool = False

    def __repr__(self) -> str:
        pi = np.array2string(self.pi, precision=6)
        return (f"StationaryPoint(pi={pi}, stable={self.stable}, residual={self.residual:.1e}, "
                f"converged={self.converged}, boundary={self.boundary}, method={self.method!r})")


@dataclass(frozen=True)
class StationaryPointSet:
    """Every stationary point found, sorted by the probability of the best class.

    ``exhaustive`` is True only when the search provably found all of them
    (two-class questions); ``message`` says how the search was done.
    """

    points: tuple
    exhaustive: bool
    message: str
    question: Question | None = field(default=None, compare=False, repr=False)
    objective: Objective | None = field(default=None, compare=False, repr=False)

    @property
    def multistable(self) -> bool:
        """More than one stable point: where training ends depends on where it starts (and on noise)."""
        return len(self.stable) > 1

    @cached_property
    def from_reference(self) -> StationaryPoint:
        """The point the on-policy flow reaches from ``pi_ref`` (:func:`stationary_policy`)."""
        return stationary_policy(self.question, self.objective)

    @cached_property
    def basins(self) -> tuple | None:
        """The flow's basin of every stable point, as :class:`~grpo_theory.dynamics.Basin` intervals of
        the best class's probability (two-class questions at sequence level); None otherwise."""
        if self.question is None or _token_level(self.question, self.objective):
            return None
        if ClassProblem(self.question, self.objective).n_classes != 2:
            return None
        from .dynamics import basins

        return tuple(basins(self.question, self.objective))

    def summary(self) -> str:
        """One line per stable point (best class's probability, basin), and which one ``pi_ref`` flows to."""
        if self.question is None:
            return self.message
        cp = ClassProblem(self.question, self.objective)
        best = cp.class_of == 0

        def mass(p):
            return float(np.asarray(p.pi)[best].sum())
        lines = [f"{len(self.stable)} stable point(s) of {len(self.points)} found ({self.message})"]
        basins = self.basins or ()
        for p in self.stable:
            b = next((b for b in basins if abs(mass(b.point) - mass(p)) < 1e-9), None)
            where = f", basin pi(best) in ({b.lo:.4g}, {b.hi:.4g})" if b else ""
            lines.append(f"  pi(best class) = {mass(p):.6g}{where}")
        start = float(self.question.pi_ref[best].sum())
        end = mass(self.from_reference)
        lines.append(f"  the flow from pi_ref (pi(best) = {start:.4g}) reaches pi(best) = {end:.6g}")
        return "\n".join(lines)

    def __iter__(self) -> Iterator[StationaryPoint]:
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    def __getitem__(self, i) -> StationaryPoint:
        return self.points[i]

    @property
    def stable(self) -> tuple:
        """The points that are stable under the logit flow."""
        return tuple(p for p in self.points if p.stable)


class ClassProblem:
    """A question pooled into classes of outputs with the same reward law (see module doc).

    Attributes: ``p`` (C,) reference mass of each class, ``R`` (C, D) pooled
    membership rows, ``class_of`` (K,) class of each output (-1 where pi_ref = 0).
    Classes are ordered by decreasing expected reward (preference questions:
    by decreasing ``P_2`` against ``pi_ref``), so class 0 is the best one.
    """

    def __init__(self, q: Question, obj: Objective) -> None:
        q, obj = as_question(q), as_objective(obj)
        self.q, self.obj = q, obj
        support = np.flatnonzero(q.pi_ref > 0)
        R = q.membership
        if q.has_reward_law:
            if obj.entropy_coef:        # an entropy bonus breaks pooling (see grpo_theory.advantage)
                rows, inverse = R[support], np.arange(support.size)
            else:
                rows, inverse = np.unique(R[support], axis=0, return_inverse=True)
            score = rows @ q.reward_levels
        else:
            rows, inverse = R[support], np.arange(support.size)
            score = rows @ (2 * q.preference_matrix - 1) @ q.pi_ref
        order = np.argsort(-score, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self.R = rows[order]
        self.class_of = np.full(q.n_outputs, -1)
        self.class_of[support] = rank[np.asarray(inverse).ravel()]
        self.p = np.bincount(self.class_of[support], weights=q.pi_ref[support],
                             minlength=self.R.shape[0])
        with np.errstate(divide="ignore"):
            self._log_R = np.log(self.R)
        self._log_p = np.log(self.p)
        if obj.penalty == "reward":
            if not q.has_reward_law:
                raise InvalidInputError("kl_placement='reward' needs a reward law (rewards= or reward_levels=); "
                                        "a preference matrix has no reward to shape")
            # the classes as a question of their own: class c has reference mass p_c and reward law R_c
            self._class_q = Question(self.p / self.p.sum(), reward_levels=q.reward_levels, reward_probs=self.R)

    @property
    def n_classes(self) -> int:
        return int(self.p.size)

    def class_preference(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``P_G(c | pi)`` for a batch of class log-policies ``(..., C) -> (..., C)``."""
        if log_pi_c.min() > -700.0:      # no underflow: the plain sum is as accurate and cheaper
            with np.errstate(divide="ignore"):
                log_w = np.log(np.exp(log_pi_c) @ self.R)
        else:
            log_w = logsumexp(log_pi_c[..., :, None] + self._log_R, axis=-2)
        return pooled_expectations(self.q, self.obj, log_w) @ self.R.T

    def gradient(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``g(c) = dJ/dpi(c)`` at ``pi_old = pi`` (see module doc and :mod:`grpo_theory.kl`), batched."""
        if self.obj.penalty == "reward":
            return self._shaped_preference(log_pi_c)
        P = self.class_preference(log_pi_c)
        beta = self.obj.beta
        if advantage.changes_regulariser(self.obj):
            return self._family_gradient(log_pi_c, P)
        if self.obj.penalty == "reverse":
            with np.errstate(over="ignore"):   # +inf at a vertex is the right (repelling) value
                return P - beta * (1.0 - np.exp(self._log_p - log_pi_c))
        if self.obj.penalty == "direct":
            return P - beta * (log_pi_c - self._log_p + 1.0)
        return P - beta * kl.coefficient(self.obj, log_pi_c - self._log_p)

    def _family_gradient(self, log_pi_c: np.ndarray, P: np.ndarray) -> np.ndarray:
        """``g(c)`` with tie filtering and/or an entropy bonus (:func:`grpo_theory.advantage.regularised_gradient`)."""
        # the per-sample slope in log pi (reverse: 1 - pi_ref/pi; direct: log(pi/pi_ref), without the +1 of
        # the exact KL's gradient, which the centring removes only when every answer carries the same weight)
        slope = kl.coefficient(self.obj, log_pi_c - self._log_p)
        u = None
        if self.obj.filter_ties:
            if not self.q.has_reward_law:
                raise InvalidInputError("filter_ties needs a reward law (ties are ties of rewards); this question "
                                        "was given as a preference matrix")
            log_w = logsumexp(log_pi_c[..., :, None] + self._log_R, axis=-2)
            u = advantage.tie_free_probability(self.R, log_w, self.obj.group_size)
        return advantage.regularised_gradient(P, slope, log_pi_c, self.obj, u)

    def _shaped_preference(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``P_G`` of each class for the reward shaped by the KL at the class log-ratios (reward placement)."""
        log_pi_c = np.asarray(log_pi_c, dtype=float)
        flat = log_pi_c.reshape(-1, log_pi_c.shape[-1])
        out = np.empty_like(flat)
        for i, lp in enumerate(flat):                   # the shaped levels differ from row to row
            lr = np.maximum(lp, -745.0) - self._log_p    # a class of mass 0 keeps a finite (huge) shift
            shaped = kl.shaped_question(self._class_q, kl.value_shift(self.obj, lr))
            out[i] = reward_preference(shaped, np.exp(lp), self.obj)
        return out.reshape(log_pi_c.shape)

    def gradient_jacobian(self, log_pi_c: np.ndarray, h: float = 1e-5) -> np.ndarray:
        """``dg(c)/dtheta_k`` (C x C) at one class policy.

        Penalty part analytic; reward part by the chain rule
        ``dP_c/dtheta_k = pi_k R_c . DE(w)[R_k - w]``, the directional derivative taken
        in ``w`` (two forward steps ``w + t (R_k - w)``, which stay in the simplex,
        Richardson-extrapolated). The factor ``pi_k`` is applied exactly, so classes of
        tiny mass keep their relative accuracy.
        """
        pi = np.exp(log_pi_c)
        C = pi.size
        if self.obj.penalty not in ("reverse", "direct") or advantage.changes_regulariser(self.obj):
            return self._numeric_jacobian(log_pi_c)
        log_w = logsumexp(log_pi_c[:, None] + self._log_R, axis=0)               # (D,)
        with np.errstate(divide="ignore"):
            steps = [np.logaddexp(math.log1p(-t) + log_w, math.log(t) + self._log_R) for t in (h, 2 * h)]
        batch = np.vstack([log_w[None, :], steps[0], steps[1]])
        E = pooled_expectations(self.q, self.obj, batch)
        e0, e1, e2 = E[0], E[1:C + 1], E[C + 1:]
        dE = (4.0 * (e1 - e0) / h - (e2 - e0) / (2 * h)) / 3.0                  # (C, D): along R_k - w
        dP = (dE @ self.R.T).T * pi[None, :]                                      # [c, k]
        dlog = np.eye(C) - pi[None, :]                                            # dlog pi_c/dtheta_k
        if self.obj.penalty == "reverse":
            dpen = np.exp(self._log_p - log_pi_c)[:, None] * dlog
        else:
            dpen = dlog
        return dP - self.obj.beta * dpen

    def _numeric_jacobian(self, log_pi_c: np.ndarray, h: float = 1e-6) -> np.ndarray:
        """``dg(c)/dtheta_k`` by central differences (estimators other than the note's two)."""
        C = log_pi_c.size
        steps = []
        for k in range(C):
            for sgn in (1.0, -1.0):
                th = log_pi_c.copy()
                th[k] += sgn * h
                steps.append(th - logsumexp(th))
        g = self.gradient(np.array(steps))
        return ((g[0::2] - g[1::2]) / (2 * h)).T

    def flow(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``d theta_c/dt = pi(c) (g(c) - E_pi g)`` (class logits), batched."""
        pi = np.exp(log_pi_c)
        g = self.gradient(log_pi_c)
        return pi * (g - (pi * g).sum(axis=-1, keepdims=True))

    def expand(self, pi_c: np.ndarray) -> np.ndarray:
        """Class policy -> output policy, proportional to pi_ref within each class."""
        pi = np.zeros(self.q.n_outputs)
        s = self.class_of >= 0
        pi[s] = pi_c[self.class_of[s]] * self.q.pi_ref[s] / self.p[self.class_of[s]]
        return pi

    # ---- two classes: the scalar drift s(z) = g(a) - g(b), z = log(pi_a/pi_b)
    def drift(self, z) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        log_pi = np.stack([-np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)], axis=-1)
        g = self.gradient(log_pi)
        return g[..., 0] - g[..., 1]

    def jump_logits(self) -> np.ndarray:
        """Class logits just either side of each jump of the drift (a clamp switching on in one class),
        so that grids see a root squeezed between a jump and its neighbour."""
        if self.obj.penalty in ("reverse", "direct", "reward"):
            return np.zeros(0)
        edges = np.array(kl.discontinuities(self.obj))
        if edges.size == 0:
            return edges
        out = []
        for c, sign in ((0, 1.0), (1, -1.0)):
            log_pi = self._log_p[c] + edges                     # class c at log-ratio e to its reference
            ok = log_pi < 0
            z = sign * (log_pi[ok] - np.log(-np.expm1(log_pi[ok])))
            out.append(z)
        z = np.concatenate(out)
        h = 1e-9 * np.maximum(1.0, np.abs(z))
        return np.sort(np.concatenate([z - h, z + h]))

    def logit_bounds(self) -> tuple[float, float]:
        """An interval of class logits that contains every interior root of ``drift``.

        For finite G the bound is finite and is not capped: with the direct penalty at small
        ``beta`` the root lies near ``z = Delta / beta``, in the thousands for ``beta = 1e-3``,
        where ``pi(b) = e^{-z}`` underflows but the class logit, and the drift computed in log
        space, do not. Only where ``|P_G|`` is unbounded (``G = inf``) is the search cut at
        ``|z| = Z_CAP``, beyond which the flow's limit is a vertex.
        """
        obj, beta = self.obj, self.obj.beta
        zc = float(self._log_p[0] - self._log_p[1])
        if self.q.has_reward_law:
            with np.errstate(over="ignore"):       # an infinite span gives an infinite bound
                span = float(self.q.reward_levels.max() - self.q.reward_levels.min())
            bound_p = max_abs_advantage(span, obj)          # |P_G| <= max |A_i|
        else:
            bound_p = 1.0
        delta_max = 2.0 * bound_p                           # |P(a) - P(b)|
        if not math.isfinite(delta_max):
            return -Z_CAP, Z_CAP
        d_lo, d_hi = zc - delta_max / beta - 1.0, zc + delta_max / beta + 1.0   # direct: beta (z - zc) = Delta
        pa, pb = self.p                                                         # reverse: beta (p/x - ..) = -Delta
        r_hi = math.log((delta_max + beta) / (beta * pb)) + 1.0
        r_lo = -math.log((delta_max + beta) / (beta * pa)) - 1.0
        if obj.penalty == "direct":
            return d_lo, d_hi
        if obj.penalty == "reverse":
            return r_lo, r_hi
        # Other estimators and placements: their coefficient grows no faster than the reverse one's
        # and at least as fast as the direct one's, or is bounded (a clamp, k1 as a loss), in which
        # case the flow can run into a vertex; the hull of both bounds and +-Z_CAP covers every root
        # (the shaped rewards of the reward placement differ by at most the span plus beta|dz|).
        if self.q.has_reward_law:
            spread = max(delta_max, span) / beta + 1.0
            d_lo, d_hi = min(d_lo, zc - spread), max(d_hi, zc + spread)
        return min(d_lo, r_lo, -Z_CAP), max(d_hi, r_hi, Z_CAP)


def clamp_critical_beta(q: Question, obj: Objective) -> float:
    """The beta below which a clamped KL in the loss lets the worse class of a two-class question collapse.

    A value clamp switches the estimator's gradient off where ``pi(b) < pi_ref(b) e^{e}`` (``e`` the
    lower edge of :func:`grpo_theory.kl.discontinuities`; ``e^{-e} = 13.61`` for verl's k3 clamped at 10).
    The unclamped interior root moves towards that edge as beta falls and reaches it at
    ``beta_c = (P_G(a) - P_G(b)) / (c(a) - c(b))``, everything evaluated at the edge with the
    unclamped coefficient ``c``. Below ``beta_c`` no interior stationary point is left and the flow from
    ``pi_ref`` runs to the vertex; above it the interior point is stable and the edge is a repelling
    jump (a separatrix) in front of the collapsing vertex. ``P_G`` does not depend on beta, so this is exact.

    >>> from grpo_theory import Objective, Question, clamp_critical_beta
    >>> verl = Objective(0.001, 5, std_ddof=1, std_eps=1e-6, kl_estimator="k3", kl_log_ratio_clamp=20,
    ...                  kl_value_clamp=10)                 # verl's GRPO recipe, G = 5
    >>> round(clamp_critical_beta(Question([0.5, 0.5], rewards=[1, 0]), verl), 4)
    0.134
    """
    q, obj = as_question(q), as_objective(obj)
    if obj.kl_placement != "loss" or obj.kl_value_clamp is None:
        raise InvalidInputError(f"clamp_critical_beta needs a value-clamped KL in the loss, got {obj.describe()}")
    cp = ClassProblem(q, obj)
    if cp.n_classes != 2:
        raise InvalidInputError(f"clamp_critical_beta needs a two-class question, got {cp.n_classes} classes")
    edges = [e for e in kl.discontinuities(obj) if e < 0]
    if not edges:
        raise InvalidInputError(f"{obj.describe()} has no clamp edge below pi_ref: nothing to collapse")
    log_b = cp._log_p[1] + max(edges)                       # the worse class at the edge
    log_pi = np.array([math.log(-math.expm1(log_b)), log_b])
    P = cp.class_preference(log_pi)
    unclamped = obj.replace(kl_log_ratio_clamp=None, kl_value_clamp=None)
    c = kl.coefficient(unclamped, log_pi - cp._log_p)     # the coefficient on the unclamped side
    return float((P[0] - P[1]) / (c[0] - c[1]))


def _sinh_grid(center: float, lo: float, hi: float, n: int, scale: float = 0.02) -> np.ndarray:
    """Grid on [lo, hi], dense (spacing ~ scale * dt) near ``center``, geometric far away."""
    center = min(max(center, lo), hi)
    t = np.linspace(np.arcsinh((lo - center) / scale), np.arcsinh((hi - center) / scale), n)
    z = center + scale * np.sinh(t)
    z[0], z[-1] = lo, hi
    return z


def output_gradient(q: Question, obj: Objective, pi: np.ndarray) -> np.ndarray:
    """``g(o)`` for every output in the support of ``pi``; entries outside it are 0.

    reverse: ``P_G - beta (1 - pi_ref/pi)``; direct: ``P_G - beta (log(pi/pi_ref) + 1)``; other
    estimators and placements: ``P_G - beta c(o)`` with ``c`` of :func:`grpo_theory.kl.coefficient`,
    or, with the KL in the reward, ``P_G`` of the shaped reward ``r - beta value``.
    """
    pi = np.asarray(pi, dtype=float)
    s = pi > 0
    g = np.zeros_like(pi)
    lr = np.zeros_like(pi)
    with np.errstate(divide="ignore"):
        lr[s] = np.log(pi[s]) - np.log(q.pi_ref[s])
    if obj.penalty == "reward":
        if not q.has_reward_law:
            raise InvalidInputError("kl_placement='reward' needs a reward law; a preference matrix has no reward "
                                    "to shape")
        g[s] = reward_preference(kl.shaped_question(q, kl.value_shift(obj, lr)), pi, obj)[s]
        return g
    P = reward_preference(q, pi, obj)
    if advantage.changes_regulariser(obj):
        return _family_output_gradient(q, obj, pi, P, lr, s)
    if obj.penalty == "reverse":
        g[s] = P[s] - obj.beta * (1.0 - q.pi_ref[s] / pi[s])
    elif obj.penalty == "direct":
        g[s] = P[s] - obj.beta * (lr[s] + 1.0)
    else:
        g[s] = P[s] - obj.beta * kl.coefficient(obj, lr[s])
    return g


def _family_output_gradient(q: Question, obj: Objective, pi: np.ndarray, P: np.ndarray, lr: np.ndarray,
                            s: np.ndarray) -> np.ndarray:
    """:func:`output_gradient` with tie filtering and/or an entropy bonus (see :mod:`grpo_theory.advantage`)."""
    slope = kl.coefficient(obj, lr[s])          # per-sample slope in log pi (see ClassProblem._family_gradient)
    u = None
    if obj.filter_ties:
        if not q.has_reward_law:
            raise InvalidInputError("filter_ties needs a reward law; this question was given as a preference matrix")
        with np.errstate(divide="ignore"):
            log_w = np.log(pi @ q.membership)
        u = advantage.tie_free_probability(q.membership[s], log_w, obj.group_size)
    g = np.zeros_like(pi)
    # U = E_pi u sums over the support only (pi is 0 elsewhere), so restricting to s is exact
    g[s] = advantage.regularised_gradient(P[s], slope, np.log(pi[s]), obj, u)
    return g


def stationarity_residual(q: Question, obj: Objective, pi) -> float:
    """Max-norm residual of the stationarity condition at ``pi``.

    reverse: ``max_o |pi(o) (1 - (P_G(o|pi) - E_pi P_G)/beta) - pi_ref(o)|`` (Eq. 11);
    direct:  ``max_o |pi(o) - pi_ref(o) exp(P_G(o|pi)/beta) / Z|``;
    other estimators and placements: ``max_o pi(o) |g(o) - E_pi g| / beta`` with ``g`` of
    :func:`output_gradient` (the speed of the logit flow over ``beta``).
    """
    q, obj = as_question(q), as_objective(obj)
    pi = validate_probability_vector("pi", pi)
    if obj.penalty not in ("reverse", "direct") or advantage.changes_regulariser(obj):
        g = output_gradient(q, obj, pi)
        return float(np.max(pi * np.abs(g - pi @ g))) / obj.beta
    P = reward_preference(q, pi, obj)
    if obj.penalty == "reverse":
        return float(np.max(np.abs(pi * (1.0 - (P - pi @ P) / obj.beta) - q.pi_ref)))
    with np.errstate(divide="ignore"):
        logits = np.log(q.pi_ref) + P / obj.beta
    target = np.exp(logits - logsumexp(logits))
    return float(np.max(np.abs(pi - target)))


# ----------------------------------------------------------------------------- helpers

def _jump_at(cp: ClassProblem, z: float) -> tuple[float, float] | None:
    """The one-sided drifts at ``z`` if the drift jumps there (a discontinuous vector field), else None."""
    if cp.obj.penalty in ("reverse", "direct"):
        return None
    h = 1e-9 * max(1.0, abs(z))
    left, right = (float(v) for v in cp.drift(np.array([z - h, z + h])))
    scale = max(1e-300, float(np.max(np.abs(cp.drift(np.array([z - 1e-3, z + 1e-3]))))))
    if np.sign(left) != np.sign(right) and min(abs(left), abs(right)) > 1e-4 * scale:
        return left, right
    return None


def _point_from_class_logit(cp: ClassProblem, z: float, iterations: int, method: str,
                            slope: float | None) -> StationaryPoint:
    x, y = float(expit(z)), float(expit(-z))
    pi = cp.expand(np.array([x, y]))
    pi = pi / pi.sum()
    residual = stationarity_residual(cp.q, cp.obj, pi)
    jump = _jump_at(cp, z)
    if jump is not None:
        stable = bool(jump[0] > 0 > jump[1])
        why = ("the vector field is discontinuous here: the drift jumps from "
               f"{jump[0]:+.3g} to {jump[1]:+.3g} across z = {z:.6g}; "
               + ("attracting (a Filippov equilibrium: a discrete trainer chatters around it)" if stable
                  else "repelling (it separates two basins; not a resting point)"))
        return StationaryPoint(pi=pi, residual=residual, converged=True, stable=stable, iterations=iterations,
                               method=method + "+jump", message=why, class_logit=float(z), discontinuous=True)
    eig = np.array([]) if slope is None else np.array([2.0 * x * y * slope])
    # The sign of s'(z) decides: x(1-x) > 0 only rescales the eigenvalue (and underflows
    # near a vertex, where the point can still be clearly stable).
    if slope is None or abs(slope) < STABILITY_TOL * max(1.0, cp.obj.beta):
        stable, why = None, "degenerate root (zero slope of the drift): stability undecided at first order"
    else:
        stable = bool(slope < 0)
        why = "drift decreasing through the root" if stable else "drift increasing through the root"
    converged = residual <= RESIDUAL_TOL
    msg = why if converged else f"residual {residual:.2e} above {RESIDUAL_TOL:g}; {why}"
    return StationaryPoint(pi=pi, residual=residual, converged=converged, stable=stable,
                           iterations=iterations, method=method, message=msg,
                           eigenvalues=eig, class_logit=float(z))


def _boundary_point(cp: ClassProblem, which: int, z_end: float) -> StationaryPoint:
    pi_c = np.zeros(2)
    pi_c[which] = 1.0
    x, y = float(expit(z_end)), float(expit(-z_end))
    speed = float(abs(2.0 * x * y * cp.drift(z_end)))
    return StationaryPoint(
        pi=cp.expand(pi_c), residual=speed, converged=True, stable=True, iterations=0,
        method="boundary-limit", boundary=True, class_logit=math.copysign(math.inf, z_end),
        message=("limit point: the logit flow runs into this vertex (drift keeps its sign up to "
                 f"|z| = {abs(z_end):.0f}); it is stationary only in the limit"),
    )


def _slope(cp: ClassProblem, z: float) -> float:
    h = 1e-5 * max(1.0, abs(z))
    return float((cp.drift(z + h) - cp.drift(z - h)) / (2 * h))


def _brent(cp: ClassProblem, a: float, b: float) -> tuple[float, int]:
    root, info = optimize.brentq(lambda t: float(cp.drift(t)), a, b, xtol=1e-14, rtol=1e-15,
                                 maxiter=200, full_output=True)
    return float(root), info.function_calls


def _two_class_points(cp: ClassProblem, n_grid: int) -> list[StationaryPoint]:
    lo, hi = cp.logit_bounds()
    zc = float(cp._log_p[0] - cp._log_p[1])
    z = _sinh_grid(zc, lo, hi, n_grid)
    jumps = cp.jump_logits()
    z = np.union1d(z, jumps[(jumps > lo) & (jumps < hi)])
    s = cp.drift(z)
    points: list[StationaryPoint] = []
    exact = np.flatnonzero(s == 0)
    for i in exact:
        points.append(_point_from_class_logit(cp, z[i], 1, "grid", _slope(cp, z[i])))
    sign = np.sign(s)
    for i in np.flatnonzero(sign[:-1] * sign[1:] < 0):
        root, calls = _brent(cp, z[i], z[i + 1])
        points.append(_point_from_class_logit(cp, root, calls, "grid+brentq", _slope(cp, root)))
    # Tangencies: local minima of |s| without a sign change that reach zero.
    a = np.abs(s)
    cand = np.flatnonzero((a[1:-1] < a[:-2]) & (a[1:-1] < a[2:]) & (sign[:-2] == sign[2:])) + 1
    for i in cand:
        res = optimize.minimize_scalar(lambda t: abs(float(cp.drift(t))), bounds=(z[i - 1], z[i + 1]),
                                       method="bounded", options={"xatol": 1e-12})
        scale = max(1.0, float(np.abs(s[i - 1 : i + 2]).max()))
        if res.fun <= 1e-9 * scale:
            pt = _point_from_class_logit(cp, float(res.x), res.nfev, "grid+tangency", 0.0)
            points.append(pt)
    if _may_collapse(cp.obj):
        if s[-1] > 0:
            points.append(_boundary_point(cp, 0, z[-1]))
        if s[0] < 0:
            points.append(_boundary_point(cp, 1, z[0]))
    return points


def _flow_root_from(cp: ClassProblem, z0: float, dt: float = 0.04, chunk: int = 24) -> StationaryPoint:
    """The stationary point the logit flow reaches from class logit ``z0`` (two classes).

    Scans from ``z0`` in the direction of the drift on an asinh-spaced grid (logit
    spacing 0.02 near ``z0``, 4% of the distance far from it), in chunks, and stops at
    the first sign change. A doubling step would be faster but can jump over a
    stable and an unstable root at once; two roots closer than the local spacing
    (a near-tangency) can still be missed, as on any grid.
    """
    lo, hi = cp.logit_bounds()
    s0 = float(cp.drift(z0))
    if s0 == 0.0:
        return _point_from_class_logit(cp, z0, 1, "flow-scan", _slope(cp, z0))
    direction = 1.0 if s0 > 0 else -1.0
    end = hi if direction > 0 else lo
    span = abs(end - z0)
    scale = 0.5
    n_grid = max(8, int(np.ceil(np.arcsinh(span / scale) / dt)))
    t = np.linspace(0.0, np.arcsinh(span / scale), n_grid + 1)[1:]
    offsets = scale * np.sinh(t)
    offsets[-1] = span
    grid = z0 + direction * offsets
    jumps = cp.jump_logits()
    ahead = jumps[(direction * (jumps - z0) > 0) & (direction * (jumps - end) < 0)]
    if ahead.size:
        grid = np.union1d(grid, ahead)[::int(direction)]
    calls, prev = 1, z0
    for start in range(0, grid.size, chunk):
        zs = grid[start:start + chunk]
        vals = cp.drift(zs)
        calls += zs.size
        cross = np.flatnonzero(np.sign(vals) != np.sign(s0))
        if cross.size:
            j = int(cross[0])
            a = prev if j == 0 else float(zs[j - 1])
            if vals[j] == 0:
                root, c2 = float(zs[j]), 0
            else:
                root, c2 = _brent(cp, min(a, zs[j]), max(a, zs[j]))
            return _point_from_class_logit(cp, root, calls + c2, "flow-scan+brentq", _slope(cp, root))
        prev = float(zs[-1])
    if _may_collapse(cp.obj):
        return _boundary_point(cp, 0 if direction > 0 else 1, end)
    raise RuntimeError(  # the bounds guarantee a root; reaching here is a bug, not a user error
        f"no root of the drift between z0={z0} and {end}; please report this question and objective"
    )


# ---- more than two classes ---------------------------------------------------------------

def _log_pi_from_eta(eta: np.ndarray) -> np.ndarray:
    theta = np.concatenate((eta, (0.0,)))
    return theta - logsumexp(theta)


def _kkt_equations(cp: ClassProblem, eta: np.ndarray) -> np.ndarray:
    g = cp.gradient(_log_pi_from_eta(eta))
    return g[:-1] - g[-1]


def _reduced_flow(cp: ClassProblem, eta: np.ndarray) -> np.ndarray:
    phi = cp.flow(_log_pi_from_eta(eta))
    return phi[:-1] - phi[-1]


def _classify(cp: ClassProblem, eta: np.ndarray) -> tuple[bool | None, np.ndarray, str]:
    """Stability of the reduced logit flow at a stationary point ``eta``.

    With ``u = (g_c - g_C)_{c<C}`` (the KKT equations) and ``pi' = pi_{<C}``, the
    flow's Jacobian at a stationary point is ``J = [diag(pi') + (pi_C 1 - pi') pi'^T] du/deta``.
    ``du/deta`` is well scaled, so ``J`` keeps its relative accuracy even when some
    class masses are tiny; the eigenvalues scale with those masses, and so does the
    tolerance below which a sign counts as undecided.
    """
    log_pi = _log_pi_from_eta(eta)
    pi = np.exp(log_pi)
    dg = cp.gradient_jacobian(log_pi)                  # dg_c/dtheta_k
    # Reduce against the heaviest class: with a light reference class, pi_ref - pi_c
    # cancels catastrophically in the row of a heavy class.
    ref = int(np.argmax(log_pi))
    keep = np.delete(np.arange(pi.size), ref)
    H = dg[np.ix_(keep, keep)] - dg[ref, keep][None, :]
    # J = (I + c 1^T) diag(head) H with c = pi_ref - head has the eigenvalues of diag(head) B,
    # B = H (I + c 1^T) well scaled. head can underflow (a class at logit -2000 below the heaviest):
    # scale it by its largest entry; classes whose scaled mass still underflows decouple, and
    # each contributes the eigenvalue ~ head_c B_cc, whose sign is that of B_cc.
    log_head = log_pi[keep]
    B = H @ (np.eye(keep.size) + np.outer(pi[ref] - pi[keep], np.ones(keep.size)))
    d = np.exp(log_head - log_head.max())
    big = d > 1e-250
    scale = math.exp(float(log_head.max()))         # may underflow: decide the signs before applying it
    eig_big = np.linalg.eigvals(d[big, None] * B[np.ix_(big, big)])
    eig = np.concatenate([eig_big, d[~big] * np.diag(B)[~big]]) * scale
    signs_small = np.diag(B)[~big]
    top = float(np.max(eig_big.real)) if eig_big.size else -math.inf
    tol = 1e-7 * float(d[big].min()) * max(1.0, float(np.abs(B).max()))
    if abs(top) < tol or np.any(signs_small == 0):
        return None, eig, "an eigenvalue of the flow's Jacobian is ~0: stability undecided"
    if top < 0 and np.all(signs_small < 0):
        return True, eig, "all eigenvalues of the flow's Jacobian have negative real part"
    return False, eig, "an eigenvalue of the flow's Jacobian has positive real part"


def _point_at(cp: ClassProblem, eta: np.ndarray, method: str, iterations: int = 0) -> StationaryPoint | None:
    """The stationary point at class logits ``eta`` if its residual is within tolerance, else None."""
    pi = cp.expand(np.exp(_log_pi_from_eta(eta)))
    residual = stationarity_residual(cp.q, cp.obj, pi)
    if not residual <= RESIDUAL_TOL:
        return None
    stable, eig, why = _classify(cp, eta)
    return StationaryPoint(pi=pi, residual=residual, converged=True, stable=stable, iterations=iterations,
                           method=method, message=why, eigenvalues=eig)


def _polish(cp: ClassProblem, eta0: np.ndarray, method_prefix: str) -> StationaryPoint | None:
    calls = 0
    for method in ("hybr", "lm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(lambda e: _kkt_equations(cp, e), eta0, method=method,
                                options={"xtol": 1e-14} if method == "hybr" else {"xtol": 1e-15,
                                                                                  "ftol": 1e-15})
        calls += int(sol.get("nfev", 0))
        if not np.all(np.isfinite(sol.x)):
            continue
        pt = _point_at(cp, sol.x, f"{method_prefix}+{method}", calls)
        if pt is not None:
            return pt
    return None


def _flow_endpoint(cp: ClassProblem, eta0: np.ndarray, t_max: float = 1e4,
                   speed: float | None = 1e-6) -> np.ndarray:
    """Integrate the reduced logit flow from ``eta0`` until its speed drops below ``speed``."""
    return integrate_until_slow(lambda e: _reduced_flow(cp, e), eta0, t_max, speed)


def _vertex_limit(cp: ClassProblem, eta: np.ndarray) -> StationaryPoint | None:
    """A vertex the flow runs into (direct penalty, G = inf), if the flow at ``eta`` heads there."""
    if not _may_collapse(cp.obj):
        return None
    log_pi = _log_pi_from_eta(eta)
    top = int(np.argmax(log_pi))
    if log_pi[top] < math.log1p(-1e-6):
        return None
    phi = cp.flow(log_pi)
    if not np.all(np.delete(phi[top] - phi, top) > 0):   # still gaining on every other class
        return None
    vertex = np.zeros(cp.n_classes)
    vertex[top] = 1.0
    return StationaryPoint(pi=cp.expand(vertex), residual=float(np.max(np.abs(phi))), converged=True,
                           stable=True, iterations=0, method="flow-to-vertex", boundary=True,
                           message="limit point: the logit flow runs into this vertex (its speed "
                                   "there decays to 0); stationary only in the limit")


def _slowest_escape(cp: ClassProblem, eta: np.ndarray) -> float:
    """Time for the flow to lift a light class that gains (``g_c > E_pi g``) off the face it sits on.

    Near ``pi_c = 0`` the logit flow moves ``pi_c`` at speed ``pi_c^2 (g_c - E_pi g)``, so lifting it
    takes about ``1/(pi_c (g_c - E_pi g))``: 1e6 for a class of mass 1e-6 gaining 1e-2, forever
    for a class of mass 1e-300. Returns the shortest such time over the gaining classes (inf if none).
    """
    log_pi = _log_pi_from_eta(eta)
    g = cp.gradient(log_pi)
    gain = g - np.exp(log_pi) @ g
    up = gain > 0
    if not np.any(up):
        return math.inf
    with np.errstate(over="ignore"):
        return float(np.min(np.exp(-log_pi[up] - np.log(gain[up]))))


def _may_collapse(obj: Objective) -> bool:
    """Whether the flow can run into a vertex, so that the scan's ends may hold limit points: the direct
    penalty where ``|P_G|`` is unbounded, and every estimator or placement other than the note's two
    (a clamp or k1 as a loss leaves a bounded restoring force)."""
    if obj.penalty == "reverse":
        return False
    if obj.penalty == "direct":
        return _unbounded_preference(obj)
    return True


def _unbounded_preference(obj: Objective) -> bool:
    """``|P_G|`` unbounded near a vertex: ``G = inf``, scale normalisation, no epsilon (then the direct
    penalty's flow can run into a vertex: a limit point, not a root)."""
    return obj.is_large_group and obj.normalization == "scale" and obj.std_eps == 0 and obj.variance_eps == 0


def _class_masses(cp: ClassProblem, pi: np.ndarray) -> np.ndarray:
    return np.bincount(cp.class_of[cp.class_of >= 0], weights=pi[cp.class_of >= 0], minlength=cp.n_classes)


def _damped_direct_map(cp: ClassProblem, eta: np.ndarray, iterations: int = 400) -> np.ndarray | None:
    """Iterate ``eta <- (eta + F(eta))/2`` with ``F`` the direct penalty's argmax map (log p + P/beta)."""
    for _ in range(iterations):
        new = cp._log_p + cp.class_preference(_log_pi_from_eta(eta)) / cp.obj.beta
        target = new[:-1] - new[-1]
        if not np.all(np.isfinite(target)):
            return None
        step = 0.5 * (target - eta)
        eta = eta + step
        if float(np.max(np.abs(step))) < 1e-12 * max(1.0, float(np.max(np.abs(eta)))):
            break
    return eta


#: Longest flow time followed: beyond it a trainer would not move either.
_MAX_HORIZON = 1e8


def _reward_ties(cp: ClassProblem, starts: list) -> list[StationaryPoint]:
    """Stationary points of the KL-in-reward placement with deterministic rewards: the policies whose
    shaped rewards ``r_c - beta value(lr_c)`` tie over the classes (then every advantage is 0).

    ``P_G(c)`` is strictly increasing in class ``c``'s own shaped reward, so interior stationary points
    are exactly these ties. The flow near one has the sign of the shaped-reward differences, so it is
    stable when every class's shaped reward falls as its mass grows (``value'(lr_c) > 0``), unstable
    when one rises. With scale normalisation and no epsilon the advantages stay O(1) arbitrarily close
    to the tie: the point is a discontinuity of the vector field (``discontinuous=True``).
    """
    obj = cp.obj
    r = cp.R @ cp.q.reward_levels

    def ties(eta):
        lr = _log_pi_from_eta(eta) - cp._log_p
        shaped = r - obj.beta * kl.estimator_value(obj, lr)
        return shaped[:-1] - shaped[-1]

    sharp = obj.normalization == "scale" and obj.std_eps == 0 and obj.variance_eps == 0
    found = []
    for eta0 in starts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = optimize.root(ties, eta0, method="hybr", options={"xtol": 1e-14})
        if not np.all(np.isfinite(sol.x)) or np.max(np.abs(ties(sol.x))) > 1e-9 * max(1.0, obj.beta):
            continue
        log_pi = _log_pi_from_eta(sol.x)
        slope = kl.value_slope(obj, log_pi - cp._log_p)
        stable = True if np.all(slope > 0) else (False if np.any(slope < 0) else None)
        why = ("the shaped rewards r - beta value tie on the support, so every advantage is 0; "
               + ("each class's shaped reward falls as its mass grows: stable" if stable else
                  "a class's shaped reward rises with its mass: unstable" if stable is False else
                  "a class sits where value' = 0: stability undecided"))
        if sharp:
            why += ("; with std scaling and no epsilon the advantages stay O(1) arbitrarily close: the vector "
                    "field is discontinuous here (a Filippov point; a discrete trainer chatters around it)")
        pi = cp.expand(np.exp(log_pi))
        found.append(StationaryPoint(pi=pi, residual=float(np.max(np.abs(ties(sol.x)))), converged=True,
                                     stable=stable, iterations=int(sol.nfev), method="reward-ties+hybr",
                                     message=why, discontinuous=sharp))
    return _dedupe(found)


def _reward_tie_starts(cp: ClassProblem) -> list:
    """Starting class logits: log pooling (the k1 answer), pi_ref, and the mass tilted each way."""
    r = cp.R @ cp.q.reward_levels
    lp = cp._log_p + r / cp.obj.beta
    starts = [lp, cp._log_p, cp._log_p - r / cp.obj.beta, cp._log_p + 0.5 * r / cp.obj.beta]
    return [s[:-1] - s[-1] for s in starts]


def _multi_class_policy(cp: ClassProblem) -> StationaryPoint:
    eta0 = cp._log_p[:-1] - cp._log_p[-1]
    if cp.obj.penalty == "reward" and cp.q.is_deterministic:
        stable = [p for p in _reward_ties(cp, _reward_tie_starts(cp)) if p.stable]
        if stable:
            return min(stable, key=lambda p: float(np.abs(_class_masses(cp, p.pi) - cp.p).sum()))
    end = _flow_endpoint(cp, eta0)
    pt = _polish(cp, end, "flow+root")
    horizon = 1e4
    while (pt is None or pt.stable is False) and horizon <= _MAX_HORIZON:
        # Slowed down near a saddle, a face or a vertex: follow the flow further, then polish. The
        # first extension is a fixed 1e4; after that the horizon is set by the slowest light class
        # that still gains (see _slowest_escape), and the search stops where that is beyond reach.
        end = _flow_endpoint(cp, end, t_max=horizon, speed=None)
        pt = _vertex_limit(cp, end) or _polish(cp, end, "flow+root")
        horizon = max(10 * horizon, 20 * _slowest_escape(cp, end))
    if pt is not None and pt.stable is not False:
        return pt
    at_end = _point_at(cp, end, "flow")
    if at_end is not None and at_end.stable is not False:
        return at_end                       # the flow itself settled within tolerance; polishing only hurt
    if cp.obj.penalty == "direct" and not _unbounded_preference(cp.obj):
        # Near a vertex at finite G the direct penalty's point can sit at class logits in the
        # thousands (log pi_c = log p_c + P_c/beta - log Z with P_c ~ -sqrt(G)), which the flow
        # approaches at a speed proportional to the light classes' mass. There P barely depends
        # on pi, so the damped map eta <- log p + P/beta converges; Newton polishes its end.
        near = _damped_direct_map(cp, end)
        cand = None if near is None else _polish(cp, near, "flow+map+root")
        top = int(np.argmax(_log_pi_from_eta(end)))
        if cand is not None and cand.stable and int(np.argmax(_class_masses(cp, cand.pi))) == top:
            return cand
    pi = cp.expand(np.exp(_log_pi_from_eta(end)))
    residual = stationarity_residual(cp.q, cp.obj, pi)
    light = [int(c) for c in np.flatnonzero(np.exp(_log_pi_from_eta(end)) < 1e-12)]
    why = (f"the flow from pi_ref did not settle and root polishing failed (residual {residual:.2e})")
    if light and (math.isinf(horizon) or horizon > _MAX_HORIZON):
        why += (f"; classes {light} have mass < 1e-12 and gain under the flow, but lifting them would take "
                f"longer than t = {_MAX_HORIZON:g} (the logit flow moves a class at a speed proportional to "
                "its mass): a trainer started at pi_ref stays near this face for any practical time; "
                "stationary_points lists the stationary points")
    elif pt is not None:
        why = (f"the flow from pi_ref stalls (residual {residual:.2e} here) and the stationary point found "
               f"near it, {np.array2string(pt.pi, precision=6)}, is unstable; see stationary_points")
    else:
        why += "; the policy may be heading to a face of the simplex"
    return StationaryPoint(pi=pi, residual=residual, converged=False, stable=None, iterations=0,
                           method="flow", message=why)


def _dedupe(points: list[StationaryPoint], tol: float = 1e-7) -> list[StationaryPoint]:
    kept: list[StationaryPoint] = []
    for p in points:
        if not any(np.max(np.abs(p.pi - k.pi)) < tol and p.boundary == k.boundary for k in kept):
            kept.append(p)
    return kept


# ----------------------------------------------------------------------------- public API

def _token_level(q: Question, obj: Objective) -> bool:
    """Whether the token-level solver is needed: token level on a tree of multi-token answers.

    With single-token answers every loss type gives the sequence-level condition (the weight of
    a token is the same for every answer), so the sequence solvers, exhaustive for two classes,
    answer it.
    """
    if obj.level != "token":
        return False
    if not q.has_reward_law:
        raise InvalidInputError(f"level={obj.level!r} needs a reward law; this question was given as a preference "
                                "matrix, which does not say how a group's advantages reach each token")
    return q.is_tree



def stationary_policy(q: Question, obj: Objective) -> StationaryPoint:
    """The stationary policy that the on-policy GRPO flow reaches from ``pi_ref``.

    When several stationary points exist (see :func:`stationary_points`), this is
    the one in whose basin ``pi_ref`` lies: the policy a GRPO run initialised at
    the reference model heads to under exact expectations.

    Examples
    --------
    >>> from grpo_theory import Question, Objective, stationary_policy
    >>> sol = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=1.0))
    >>> round(float(sol.pi[0]), 6)   # Eq. 14 at beta = gamma: sqrt(0.3)
    0.547723
    """
    q, obj = as_question(q), as_objective(obj)
    if _token_level(q, obj):
        from .tree import tree_stationary_policy

        return tree_stationary_policy(q, obj)
    cp = ClassProblem(q, obj)
    if cp.n_classes == 1:
        pi = q.pi_ref.copy()
        return StationaryPoint(pi=pi, residual=stationarity_residual(q, obj, pi), converged=True,
                               stable=True, iterations=0, method="single-class",
                               message="all supported outputs share one reward law: P_G = 0, "
                                       "pi = pi_ref, and the penalty alone restores it")
    if cp.n_classes == 2:
        return _flow_root_from(cp, float(cp._log_p[0] - cp._log_p[1]))
    return _multi_class_policy(cp)


def stationary_points(q: Question, obj: Objective, *, n_grid: int = 2001, n_starts: int = 24,
                      seed: int = 0) -> StationaryPointSet:
    """Every stationary point found, each with its stability under the logit flow.

    Two classes (e.g. a binary question): exhaustive, on a grid of ``n_grid``
    class logits covering every possible root, refined by Brent's method, with
    tangencies detected and limit points at the vertices reported.
    More classes: root finding from ``n_starts`` starting points (pi_ref, the
    uniform policy, near each vertex, the end of the flow from pi_ref, random);
    not guaranteed exhaustive, which ``exhaustive=False`` says.

    The set knows its question: ``.stable``, ``.multistable``, ``.from_reference`` (the point
    the flow from ``pi_ref`` reaches), ``.basins`` (two classes) and ``.summary()``.

    Examples
    --------
    >>> from grpo_theory import Question, Objective, stationary_points
    >>> pts = stationary_points(Question([0.14, 0.86], rewards=[1, 0]),
    ...                         Objective(beta=1.0, group_size=64, penalty="direct"))
    >>> pts.multistable, [round(float(p.pi[0]), 4) for p in pts.stable]
    (True, [0.9965, 0.544])
    >>> [(round(b.lo, 4), round(b.hi, 4)) for b in pts.basins], round(float(pts.from_reference.pi[0]), 4)
    ([(0.0, 0.9734), (0.9734, 1.0)], 0.544)
    """
    q, obj = as_question(q), as_objective(obj)
    found = _stationary_points(q, obj, n_grid=n_grid, n_starts=n_starts, seed=seed)
    return replace(found, question=q, objective=obj)


def _stationary_points(q: Question, obj: Objective, *, n_grid: int, n_starts: int, seed: int) -> StationaryPointSet:
    """The search behind :func:`stationary_points`."""
    if n_grid < 11:
        raise InvalidInputError(f"n_grid must be >= 11, got {n_grid!r}")
    q, obj = as_question(q), as_objective(obj)
    if _token_level(q, obj):
        from .tree import tree_stationary_points

        return tree_stationary_points(q, obj, n_starts=n_starts, seed=seed)
    cp = ClassProblem(q, obj)
    if cp.n_classes == 1:
        return StationaryPointSet((stationary_policy(q, obj),), True, "single class: pi = pi_ref")
    if cp.n_classes == 2:
        pts = _dedupe(_two_class_points(cp, n_grid))
        pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
        return StationaryPointSet(tuple(pts), True,
                                  f"exhaustive scan of {n_grid} class logits in {cp.logit_bounds()}")
    C = cp.n_classes
    rng = np.random.default_rng(seed)
    starts = [cp._log_p, np.zeros(C)]
    for c in range(C):
        v = np.full(C, math.log(0.1 / (C - 1)))
        v[c] = math.log(0.9)
        starts.append(v)
    starts += [np.log(rng.dirichlet(np.ones(C))) for _ in range(max(0, n_starts - len(starts)))]
    etas = [s[:-1] - s[-1] for s in starts]
    if obj.penalty == "reward" and q.is_deterministic:
        pts = _reward_ties(cp, _reward_tie_starts(cp) + etas)
        pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
        return StationaryPointSet(tuple(pts), False,
                                  f"ties of the shaped rewards from {len(etas) + 4} starts over {C} classes; "
                                  "not guaranteed exhaustive; faces of the simplex not searched")
    etas.append(_flow_endpoint(cp, etas[0]))
    found = [p for p in (_polish(cp, e, "multistart") for e in etas) if p is not None]
    found.append(_vertex_limit(cp, _flow_endpoint(cp, etas[-1], speed=None)))
    pts = _dedupe([p for p in found if p is not None])
    pts.sort(key=lambda p: -p.pi[cp.class_of == 0].sum())
    return StationaryPointSet(tuple(pts), False,
                              f"multi-start root finding from {len(etas)} points over {C} classes; "
                              "not guaranteed exhaustive; of the vertices reached only in the "
                              "limit, only the one the flow from pi_ref reaches is reported")
