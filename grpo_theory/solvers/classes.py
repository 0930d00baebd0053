r"""Stationary policies of GRPO and their stability (the note's stationarity conditions).

Let ``g(o) = dJ/dpi(o)`` be the per-output gradient of the objective at ``pi_old = pi``:

* reverse penalty (k3): ``g(o) = P_G(o|pi) - beta (1 - pi_ref(o)/pi(o))``;
* direct penalty:       ``g(o) = P_G(o|pi) - beta (log(pi(o)/pi_ref(o)) + 1)``.

A policy is stationary when ``g(o)`` is the same for every ``o`` in its support (KKT with a multiplier for the
simplex). For the reverse penalty this is Eq. 11, ``pi(o) (1 - (P_G(o|pi) - E_pi P_G)/beta) = pi_ref(o)``; for the
direct penalty ``pi(o) ∝ pi_ref(o) exp(P_G(o|pi)/beta)``.

Stability refers to the on-policy expected-gradient flow on softmax logits,
``d theta_o/dt = pi(o) (g(o) - E_pi g)``.

Reduction to classes. ``P_G`` depends on an output only through its reward law, so outputs with the same law form a
*class*; at every stationary point the policy within a class is proportional to ``pi_ref`` (both penalties), and
outputs with ``pi_ref = 0`` get 0. The solvers therefore work on the ``C`` classes:

Moving mass inside a class leaves ``w`` and so ``P_G`` unchanged; there only the penalty acts, and it restores
``pi ∝ pi_ref``. The set of policies proportional to ``pi_ref`` inside every class is invariant under the flow, so
stability is decided by the class-level dynamics alone.

* ``C = 2``: a scalar problem in the class logit ``z = log(pi(a)/pi(b))``; the drift ``s(z) = g(a) - g(b)`` is
  scanned on a grid that provably contains every root (bounds from ``max |A_i|``), each sign change is refined with
  Brent's method and tangencies are detected; the search is exhaustive. The direct penalty with ``G = inf`` can
  drive the mass to a vertex: such a *limit point* is reported with ``boundary=True`` when the flow runs into it.
* ``C > 2``: Newton-type root finding (MINPACK hybrid, then Levenberg-Marquardt) on the class logits, started from
  the end of the flow from ``pi_ref`` and from several other points; reported points are deduplicated, the search is
  not guaranteed exhaustive, and the result says so.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import advantage, kl
from .._numerics import logsumexp
from .._checks import checked, from_outside, instance, items, listed, num, numbers, point_array
from ..errors import InvalidInputError
from ..preference import expectations_evaluator, max_abs_advantage, pooled_expectations, reward_preference
from ..problem import Objective, Question, as_objective, as_question, shaped_question
from .common import verdict
from .gradient import output_gradient, stationarity_residual
from .graded import graded_eigenvalues

__all__ = ["ClassProblem", "output_gradient", "stationarity_residual", "Z_CAP"]

#: The finite-difference step of :meth:`ClassProblem.gradient_jacobian`: ``h`` and ``2 h`` are mixing weights.
_STEP = num(0.0, 0.5, low_open=True, high_open=True)

#: Largest |class logit| searched where |P_G| is unbounded (G = inf); exp(-745) underflows.
Z_CAP = 740.0


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_inverse=True)`` for a membership matrix's few rows.

    The same rows in the same (lexicographic) order and the same inverse, without numpy's sort of a
    structured view, which took a third of the set-up of a two-class solve (thousands of which make
    Figures 12 and 17).

    Parameters
    ----------
    a : numpy.ndarray, shape (n, D)
        Rows without NaN (reward-law memberships are probabilities).

    Returns
    -------
    rows : numpy.ndarray, shape (m, D)
        The distinct rows, sorted lexicographically.
    inverse : numpy.ndarray of int, shape (n,)
        ``rows[inverse] == a``.

    Examples
    --------
    >>> rows, inverse = _unique_rows(np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]))
    >>> rows.tolist(), inverse.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [0, 1, 0])
    """
    keys = [tuple(r) for r in a.tolist()]
    distinct = sorted(set(keys))
    index = {k: i for i, k in enumerate(distinct)}
    rows = np.array(distinct, dtype=a.dtype).reshape(len(distinct), a.shape[1])
    return rows, np.array([index[k] for k in keys], dtype=np.intp)


class ClassProblem:
    """A question pooled into classes of outputs with the same reward law (see module doc).

    Classes are ordered by decreasing expected reward (preference questions: by decreasing
    ``P_2`` against ``pi_ref``), so class 0 is the best one.

    Parameters
    ----------
    q : Question
        The question; its outputs are pooled into classes of equal reward law.
    obj : Objective or mapping
        The objective: ``beta``, the group size ``G``, the penalty and the advantage estimator. A dict of its fields
        is accepted.

    Attributes
    ----------
    q : Question
        The question given.
    obj : Objective
        The objective (a mapping given is converted).
    p : numpy.ndarray, shape (C,)
        Reference mass of each class.
    R : numpy.ndarray, shape (C, D)
        Pooled membership row of each class.
    class_of : numpy.ndarray of int, shape (K,)
        Class of each output (-1 where ``pi_ref = 0``).

    Raises
    ------
    InvalidInputError
        When ``q`` or ``obj`` is invalid, or the KL in the reward meets a preference-matrix question.

    Examples
    --------
    >>> from grpo_theory import Objective, Question
    >>> cp = ClassProblem(Question([0.2, 0.3, 0.5], rewards=[0, 1, 0]), Objective(beta=0.5))
    >>> cp.n_classes, cp.class_of.tolist(), cp.p.tolist()
    (2, [1, 0, 1], [0.3, 0.7])
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
                rows, inverse = _unique_rows(R[support])
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
        self._log_R.flags.writeable = False
        self._log_p = np.log(self.p)
        self._log_p.flags.writeable = False
        # the objective's branches, read once (the Objective is frozen): gradient() runs hundreds of times
        self._in_reward, self._family = obj.regime_variant.in_reward, advantage.changes_regulariser(obj)
        if self._in_reward:
            if not q.has_reward_law:
                raise InvalidInputError("kl_placement='reward' needs a reward law (rewards= or reward_levels=); "
                                        "a preference matrix has no reward to shape")
            # the classes as a question of their own: class c has reference mass p_c and reward law R_c
            self._class_q = Question(self.p / self.p.sum(), reward_levels=q.reward_levels, reward_probs=self.R)

    @property
    def n_free(self) -> int:
        """The number of free class logits ``eta`` (one per class but the last)."""
        return int(self.p.size) - 1

    @property
    def n_classes(self) -> int:
        return int(self.p.size)

    @property
    def log_p(self) -> np.ndarray:
        """``log p_c``: the classes' log reference masses, shape ``(C,)`` (-inf for a class of mass 0; read-only)."""
        return self._log_p

    @property
    def log_R(self) -> np.ndarray:
        """``log R``: the classes' log reward laws, shape ``(C, L)`` (-inf where a level has probability 0;
        read-only)."""
        return self._log_R

    def _two_classes(self, method: str) -> None:
        """Refuse a method of two-class problems on a problem with another number of classes."""
        if self.p.size != 2:
            raise InvalidInputError(f"{method} is defined for a question of two reward classes (the drift of class 0 "
                                    f"against class 1); this one has {self.p.size}: use kkt, free_flow or the "
                                    "searches (stationary_points) instead")

    def class_preference(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``P_G(c | pi)`` for a batch of class log-policies ``(..., C) -> (..., C)``.

        Parameters
        ----------
        log_pi_c : numpy.ndarray, shape (..., C)
            ``log pi(c)``, each row a class log-policy (summing to 1 in probability).
        """
        log_pi_c = point_array("log_pi_c", log_pi_c, (..., self.p.size), "class log-probabilities, C on the last axis")
        return self._class_preference(log_pi_c)

    def _class_preference(self, log_pi_c: np.ndarray) -> np.ndarray:
        """:meth:`class_preference` without its argument check: the class's own calls (trial points)."""
        if log_pi_c.min() > -700.0:      # no underflow: the plain sum is as accurate and cheaper
            with np.errstate(divide="ignore"):
                log_w = np.log(np.exp(log_pi_c) @ self.R)
        else:
            log_w = logsumexp(log_pi_c[..., :, None] + self._log_R, axis=-2)
        return self.expectations(log_w) @ self.R.T

    @functools.cached_property
    def expectations(self):
        """``log_w -> pooled_expectations(q, obj, log_w)``, set up once per problem: a flow calls it hundreds
        of times (:func:`grpo_theory.preference.expectations_evaluator`; the same values to the bit)."""
        if self.q.has_reward_law:
            return expectations_evaluator(self.q.reward_levels, self.obj)
        return lambda log_w: pooled_expectations(self.q, self.obj, log_w)

    def output_preference(self, pi: np.ndarray) -> np.ndarray:
        """``P_G(o | pi)`` of every output: :func:`~grpo_theory.preference.reward_preference` without its input
        checks, through :attr:`expectations` (the same values to the bit).

        Parameters
        ----------
        pi : numpy.ndarray, shape (K,)
            A probability vector on the question's outputs that the caller has built (not checked).
        """
        pi = point_array("pi", pi, self.q.pi_ref.size, "one probability per output")
        R = self.q.membership
        with np.errstate(divide="ignore"):
            log_w = np.log(pi @ R)
        return R @ self.expectations(log_w)

    def gradient(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``g(c) = dJ/dpi(c)`` at ``pi_old = pi`` (see module doc and :mod:`grpo_theory.kl`), batched.

        Parameters
        ----------
        log_pi_c : numpy.ndarray, shape (..., C)
            Class log-policies at which ``g`` is evaluated; the result has the same shape.
        """
        log_pi_c = point_array("log_pi_c", log_pi_c, (..., self.p.size), "class log-probabilities, C on the last axis")
        return self._gradient(log_pi_c)

    def _gradient(self, log_pi_c: np.ndarray) -> np.ndarray:
        """:meth:`gradient` without its argument check: the class's own calls (trial points)."""
        if self._in_reward:
            return self._shaped_preference(log_pi_c)
        P = self._class_preference(log_pi_c)
        beta = self.obj.beta
        if self._family:
            return self._family_gradient(log_pi_c, P)
        return P - beta * penalty_slope(self.obj, log_pi_c - self._log_p)

    def _family_gradient(self, log_pi_c: np.ndarray, P: np.ndarray) -> np.ndarray:
        """``g(c)`` with tie filtering and/or an entropy bonus (:func:`grpo_theory.advantage.regularised_gradient`)."""
        # the per-sample slope in log pi (reverse: 1 - pi_ref/pi; direct: log(pi/pi_ref), without the +1 of
        # the exact KL's gradient, which the centring removes only when every answer carries the same weight)
        slope = kl.flow_coefficient(self.obj, kl.floored_log_ratio(self.obj, log_pi_c - self._log_p))
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
            shaped = shaped_question(self._class_q, kl.flow_value_shift(self.obj, lr))
            out[i] = reward_preference(shaped, self.obj, np.exp(lp))
        return out.reshape(log_pi_c.shape)

    @checked(h=_STEP)
    def gradient_jacobian(self, log_pi_c: np.ndarray, h: float = 1e-5) -> np.ndarray:
        """``dg(c)/dtheta_k`` (C x C) at one class policy.

        Penalty part analytic; reward part by the chain rule
        ``dP_c/dtheta_k = pi_k R_c . DE(w)[R_k - w]``, the directional derivative taken
        in ``w`` (two forward steps ``w + t (R_k - w)``, which stay in the simplex,
        Richardson-extrapolated). The factor ``pi_k`` is applied exactly, so classes of
        tiny mass keep their relative accuracy.

        Parameters
        ----------
        log_pi_c : numpy.ndarray, shape (C,)
            One class log-policy (not a batch).
        h : float
            The step ``t`` in ``w``: ``h`` and ``2 h`` are taken (central differences are used instead, with
            their own step, for estimators, placements or regularisers other than the note's).
        """
        log_pi_c = point_array("log_pi_c", log_pi_c, self.p.size, "one class log-policy, one entry per class")
        pi = np.exp(log_pi_c)
        C = pi.size
        if not self.obj.regime_variant.is_note_penalty or advantage.changes_regulariser(self.obj):
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
        if self.obj.regime_variant.is_reverse:
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
        g = self._gradient(np.array(steps))
        return ((g[0::2] - g[1::2]) / (2 * h)).T

    def flow(self, log_pi_c: np.ndarray) -> np.ndarray:
        """``d theta_c/dt = pi(c) (g(c) - E_pi g)`` (class logits), batched.

        Parameters
        ----------
        log_pi_c : numpy.ndarray, shape (..., C)
            Class log-policies; the velocity of their logits is returned, shaped alike.
        """
        log_pi_c = point_array("log_pi_c", log_pi_c, (..., self.p.size), "class log-probabilities, C on the last axis")
        return self._flow(log_pi_c)

    def _flow(self, log_pi_c: np.ndarray) -> np.ndarray:
        """:meth:`flow` without its argument check: the class's own calls (trial points)."""
        pi = np.exp(log_pi_c)
        with np.errstate(over="ignore", invalid="ignore"):
            g = self._gradient(log_pi_c)
            v = pi * (g - (pi * g).sum(axis=-1, keepdims=True))
        if np.all(np.isfinite(v)) or self.obj.regime_variant.in_reward or advantage.changes_regulariser(self.obj):
            return v
        # beta * (the penalty's floored slope at a light class) overflowed: a trial state of an integrator at a
        # huge beta (1e12 and up with three classes). The field over beta has finite values and the same
        # directions; scaled back by beta and held within the doubles, it points where the flow points.
        beta = self.obj.beta
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            gs = self._class_preference(log_pi_c) / beta - penalty_slope(self.obj, log_pi_c - self._log_p)
            vs = pi * (gs - (pi * gs).sum(axis=-1, keepdims=True))
            return np.clip(vs * beta, -_FIELD_CAP, _FIELD_CAP)

    def expand(self, pi_c: np.ndarray) -> np.ndarray:
        """Class policy -> output policy, proportional to pi_ref within each class.

        Parameters
        ----------
        pi_c : numpy.ndarray, shape (C,)
            The mass of each class.

        Returns
        -------
        numpy.ndarray, shape (K,)
            ``pi(o) = pi_c[c] pi_ref(o) / p_c`` for ``o`` in class ``c``, 0 where ``pi_ref = 0``.
        """
        pi_c = point_array("pi_c", pi_c, self.p.size, "one mass per class")
        return self._expand(pi_c)

    def _expand(self, pi_c: np.ndarray) -> np.ndarray:
        """:meth:`expand` without its argument check: the class's own calls (trial points)."""
        pi = np.zeros(self.q.n_outputs)
        s = self.class_of >= 0
        pi[s] = pi_c[self.class_of[s]] * self.q.pi_ref[s] / self.p[self.class_of[s]]
        return pi

    # ---- two classes: the scalar drift s(z) = g(a) - g(b), z = log(pi_a/pi_b)
    def drift(self, z) -> np.ndarray:
        """``s(z) = g(a) - g(b)`` of a two-class problem at ``z = log(pi(a)/pi(b))``, elementwise.

        Parameters
        ----------
        z : float or array_like of float
            Class logits (class 0 against class 1); the drift has their shape.
        """
        self._two_classes("drift")
        if from_outside():              # the solvers' own trial logits pass untested (NaN and overflow included)
            numbers(nonempty=True, finite=True)("z", z)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):    # a logit past 1e300: its limit
                return self.drift(z)
        z = np.asarray(z, dtype=float)
        log_pi = np.empty(z.shape + (2,))                   # (log pi(a), log pi(b)) = -log(1 + e^(-+z))
        np.logaddexp(0.0, -z, out=log_pi[..., 0])
        np.logaddexp(0.0, z, out=log_pi[..., 1])
        g = self._gradient(np.negative(log_pi, out=log_pi))
        return g[..., 0] - g[..., 1]

    def jump_logits(self) -> np.ndarray:
        """Class logits just either side of each jump of the drift (a clamp switching on in one class),
        so that grids see a root squeezed between a jump and its neighbour."""
        if (self.obj.regime_variant.is_note_penalty or self.obj.regime_variant.in_reward):
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

        With an entropy bonus ``c`` (:func:`grpo_theory.advantage.entropy_logit_bounds`): beyond both
        ``z_ref`` and 0 the penalty and the bonus both pull back, so a root also has ``c |z| <= max |Delta|``
        (without filtering); ``beta = 0`` leaves that bound alone, and an estimator or placement other than the
        note's two keeps the penalty's bounds too. Otherwise: :meth:`_penalty_logit_bounds`.
        """
        self._two_classes("logit_bounds")
        obj = self.obj
        if obj.entropy_coef == 0:
            return self._penalty_logit_bounds()
        pen = self._penalty_logit_bounds() if obj.beta > 0 else (-math.inf, math.inf)
        with np.errstate(over="ignore", invalid="ignore"):
            bound_p = max_abs_advantage(float(np.ptp(self.q.reward_levels)), obj) if self.q.has_reward_law else 1.0
        lo, hi = advantage.entropy_logit_bounds(float(self._log_p[0] - self._log_p[1]), pen, 2.0 * bound_p, obj,
                                                Z_CAP)
        if obj.beta > 0 and not obj.regime_variant.is_note_penalty:
            # the bonus's bound takes the penalty to pull back beyond z_ref; another estimator or placement need
            # not (k2 in the advantage with a value clamp pushes on: fuzz seed 7115, a root at z = 12.7 outside
            # the bonus's |z| <= 9), so the penalty's own bounds, which cover that case, are kept as well
            lo, hi = min(lo, pen[0]), max(hi, pen[1])
        return lo, hi

    def _penalty_logit_bounds(self) -> tuple[float, float]:
        """An interval of class logits that contains every interior root of ``drift`` (``beta > 0``).

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
            bound_p = obj.advantage_variant.bound(span, obj)    # |P_G| <= max |A_i| (max_abs_advantage)
        else:
            bound_p = 1.0
        delta_max = 2.0 * bound_p                           # |P(a) - P(b)|
        if not math.isfinite(delta_max):
            return -Z_CAP, Z_CAP
        pa, pb = self.p                                                         # reverse: beta (p/x - ..) = -Delta
        with np.errstate(over="ignore", divide="ignore"):   # a tiny beta (or beta p) gives an infinite bound
            d_lo, d_hi = zc - delta_max / beta - 1.0, zc + delta_max / beta + 1.0   # direct: beta (z - zc) = Delta
            r_hi = math.log((delta_max + beta) / (beta * pb)) + 1.0
            r_lo = -math.log((delta_max + beta) / (beta * pa)) - 1.0
        if obj.regime_variant.is_direct:
            return d_lo, d_hi
        if obj.regime_variant.is_reverse:
            return r_lo, r_hi
        # Other estimators and placements: their coefficient grows no faster than the reverse one's
        # and at least as fast as the direct one's, or is bounded (a clamp, k1 as a loss), in which
        # case the flow can run into a vertex; the hull of both bounds and +-Z_CAP covers every root
        # (the shaped rewards of the reward placement differ by at most the span plus beta|dz|).
        if self.q.has_reward_law:
            spread = max(delta_max, span) / beta + 1.0
            d_lo, d_hi = min(d_lo, zc - spread), max(d_hi, zc + spread)
        return min(d_lo, r_lo, -Z_CAP), max(d_hi, r_hi, Z_CAP)

    # ---- more than two classes: free logits eta_c = theta_c - theta_C (c < C), the common interface
    def log_pi(self, eta: np.ndarray) -> np.ndarray:
        """Class log-policy at free class logits ``eta``.

        Parameters
        ----------
        eta : numpy.ndarray, shape (C - 1,)
            ``theta_c - theta_C`` for ``c < C`` (the last class's logit is the origin).

        Returns
        -------
        numpy.ndarray, shape (C,)
            ``log pi(c)``, normalised.
        """
        eta = point_array("eta", eta, self.p.size - 1, "free class logits, one per class but the last")
        return self._log_pi(eta)

    def _log_pi(self, eta: np.ndarray) -> np.ndarray:
        """:meth:`log_pi` without its argument check: the class's own calls (trial points)."""
        theta = np.concatenate((eta, (0.0,)))
        m = theta.max()
        if math.isfinite(m):
            # logsumexp(theta)'s own operations, without its general-shape handling (a flow's hot path)
            return theta - (np.log(np.exp(theta - m).sum()) + m)
        return theta - logsumexp(theta)

    def policy(self, eta: np.ndarray) -> np.ndarray:
        """Output policy at free class logits ``eta``.

        Parameters
        ----------
        eta : numpy.ndarray, shape (C - 1,)
            Free class logits (:meth:`log_pi`), expanded to outputs by :meth:`expand`.
        """
        eta = point_array("eta", eta, self.p.size - 1, "free class logits, one per class but the last")
        return self._policy(eta)

    def _policy(self, eta: np.ndarray) -> np.ndarray:
        """:meth:`policy` without its argument check: the class's own calls (trial points)."""
        return self._expand(np.exp(self._log_pi(eta)))

    def kkt(self, eta: np.ndarray) -> np.ndarray:
        """``g(c) - g(C)`` for ``c < C``: zero exactly at a stationary point.

        Parameters
        ----------
        eta : numpy.ndarray, shape (C - 1,)
            Free class logits; the ``C - 1`` equations are returned in the same order.
        """
        eta = point_array("eta", eta, self.p.size - 1, "free class logits, one per class but the last")
        g = self._gradient(self._log_pi(eta))
        return g[:-1] - g[-1]

    def free_flow(self, eta: np.ndarray) -> np.ndarray:
        """The logit flow in the free coordinates ``eta``.

        Parameters
        ----------
        eta : numpy.ndarray, shape (C - 1,)
            The point of the flow, in free class logits; ``d eta/dt`` has the same shape.
        """
        eta = point_array("eta", eta, self.p.size - 1, "free class logits, one per class but the last")
        return self._free_flow(eta)

    def _free_flow(self, eta: np.ndarray) -> np.ndarray:
        """:meth:`free_flow` without its argument check: the class's own calls (trial points)."""
        phi = self._flow(self._log_pi(eta))
        return phi[:-1] - phi[-1]

    def residual(self, eta: np.ndarray) -> float:
        """:func:`stationarity_residual` at ``policy(eta)``.

        Parameters
        ----------
        eta : numpy.ndarray, shape (C - 1,)
            A candidate stationary point, in free class logits.
        """
        eta = point_array("eta", eta, self.p.size - 1, "free class logits, one per class but the last")
        return stationarity_residual(self.q, self.obj, self._policy(eta))

    def stability(self, eta: np.ndarray) -> tuple[bool | None, np.ndarray, str]:
        """Stability of the reduced logit flow at a stationary point ``eta``.

        With ``u = (g_c - g_C)_{c<C}`` (the KKT equations) and ``pi' = pi_{<C}``, the
        flow's Jacobian at a stationary point is ``J = [diag(pi') + (pi_C 1 - pi') pi'^T] du/deta``.
        ``du/deta`` is well scaled, so ``J`` keeps its relative accuracy even when some
        class masses are tiny; the eigenvalues scale with those masses, and so does the
        tolerance below which a sign counts as undecided.

        Parameters
        ----------
        eta : numpy.ndarray, shape (C - 1,)
            The stationary point, in free class logits (a root of :meth:`kkt`).

        Returns
        -------
        stable : bool or None
            True (every eigenvalue's real part negative), False (one positive) or None (undecided).
        eigenvalues : numpy.ndarray, shape (C - 1,)
            The reduced flow's Jacobian's eigenvalues (complex where a pair is).
        reason : str
            Why the verdict is what it is.
        """
        eta = point_array("eta", eta, self.p.size - 1, "free class logits, one per class but the last")
        log_pi = self._log_pi(eta)
        pi = np.exp(log_pi)
        dg = self.gradient_jacobian(log_pi)                  # dg_c/dtheta_k
        # Reduce against the heaviest class: with a light reference class, pi_ref - pi_c
        # cancels catastrophically in the row of a heavy class.
        ref = int(np.argmax(log_pi))
        keep = np.delete(np.arange(pi.size), ref)
        H = dg[np.ix_(keep, keep)] - dg[ref, keep][None, :]
        # J = (I + c 1^T) diag(head) H with c = pi_ref - head has the eigenvalues of diag(head) B,
        # B = H (I + c 1^T) well scaled. head can span hundreds of orders (a class at logit -400 below
        # another): the eigenvalues are taken block by block in mass order (graded_eigenvalues), each
        # block's signs against its own scale, so a class of mass 1e-182 keeps its sign (seed 7319).
        log_head = log_pi[keep]
        B = H @ (np.eye(keep.size) + np.outer(pi[ref] - pi[keep], np.ones(keep.size)))
        eig, top, singular = graded_eigenvalues(log_head, B)
        with np.errstate(under="ignore"):
            eig = eig * math.exp(float(log_head.max()))   # may underflow: the signs were decided before
        stable, why = verdict(top, 1.0, "the flow's Jacobian", undecided=singular and top <= 1.0)
        return stable, eig, why


def class_problem(*, n_classes=None, at_least=None):
    """The rule (:func:`grpo_theory._checks.checked`) of a ``cp`` argument: a :class:`ClassProblem`, of
    ``n_classes`` classes (or ``at_least`` that many) where the function asks for it.

    Parameters
    ----------
    n_classes : int, optional
        The number of reward classes the function needs (two for the scalar drift's solvers).
    at_least : int, optional
        The fewest reward classes the function takes.

    Returns
    -------
    callable
        ``rule(name, value)``, raising InvalidInputError naming ``name`` and the value.
    """
    is_problem = instance(ClassProblem, "a ClassProblem", "; build one with ClassProblem(q, obj)")

    def check(name, value):
        is_problem(name, value)
        c = value.n_classes
        if (n_classes is not None and c != n_classes) or (at_least is not None and c < at_least):
            want = f"{n_classes}" if n_classes is not None else f"at least {at_least}"
            raise InvalidInputError(f"{name} must be a ClassProblem of {want} reward classes, got one of {c} (its "
                                    "outputs pool into that many classes of equal reward law); stationary_points "
                                    "and stationary_policy choose the solver for any question")
    return check


def covered_problems(problems, covers, batch: str) -> list[ClassProblem]:
    """``problems`` as a list, each one that ``covers`` accepts; an InvalidInputError names the first that
    is not.

    Parameters
    ----------
    problems : iterable of ClassProblem
        The problems to stack.
    covers : callable
        ``covers(cp) -> bool``: whether the batch can take the problem ``cp``.
    batch : str
        The name of the batch being built, for the error.

    Returns
    -------
    list of ClassProblem
        ``problems``, in order.

    Raises
    ------
    InvalidInputError
        For the first problem that ``covers`` refuses, naming its objective and class count.
    """
    items(ClassProblem, "ClassProblems")("problems", problems)
    out = listed("problems", problems, ClassProblem, "ClassProblems")
    for cp in out:
        if not covers(cp):
            raise InvalidInputError(f"{batch} does not cover {cp.obj.describe()} with {cp.n_classes} classes")
    return out


#: Largest magnitude of the flow's velocity where ``beta`` times the penalty's slope overflows (:meth:`ClassProblem.flow`).
_FIELD_CAP = 1e300


def penalty_slope(obj: Objective, log_ratio: np.ndarray) -> np.ndarray:
    """The penalty's part of ``g(c)`` per unit ``beta``, at ``log_ratio = log(pi(c)/pi_ref(c))``: reverse
    ``1 - pi_ref/pi`` (floored by :func:`grpo_theory.kl.floored_log_ratio`: a huge finite, repelling value at a
    vertex, never inf), direct ``log(pi/pi_ref) + 1``, otherwise the estimator's coefficient
    (:func:`grpo_theory.kl.flow_coefficient`). Shared by :class:`ClassProblem` and the stacked two-class problems
    (:mod:`grpo_theory.solvers.two_class_batch`).

    Parameters
    ----------
    obj : Objective
        The objective.
    log_ratio : numpy.ndarray
        ``log(pi(c)/pi_ref(c))``.
    """
    if obj.regime_variant.is_reverse:
        return 1.0 - np.exp(-kl.floored_log_ratio(obj, log_ratio))
    if obj.regime_variant.is_direct:
        return log_ratio + 1.0
    return kl.flow_coefficient(obj, kl.floored_log_ratio(obj, log_ratio))
