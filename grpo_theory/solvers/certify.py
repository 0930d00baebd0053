r"""Certified isolation of every stationary point of a class question (SPEC section 3, **beyond**).

A *class* is the set of outputs with one deterministic reward; ``x`` (C,) are the class masses,
classes ordered by decreasing reward, ``p`` the reference masses. At every stationary point the
policy inside a class is proportional to ``pi_ref`` (see :mod:`grpo_theory.solvers.classes`), so the
stationary points are the roots of ``C - 1`` equations in the class log-ratios
``eta_k = log(x_k / x_{C-1})``:

* reverse penalty (Eq. 11 with ``E_x P = 0``): ``F_k = log x_k + log(beta - P_k(x)) - log(beta p_k)``;
* direct penalty: ``F_k = eta_k - log(p_k/p_{C-1}) - (P_k(x) - P_{C-1}(x))/beta``.

The last class's equation follows from the others (``sum_c x_c (beta - P_c) = beta`` on the simplex).

**Finite G.** ``P_c(x) = sum_n Mult(n; G-1, x) A[c, n]`` is the Bernstein form of a polynomial of
degree ``G - 1`` on the simplex: its coefficients are the advantages of the count enumeration.
Its derivative along ``e_k - e_{C-1}`` has the Bernstein coefficients ``(G-1)(A[n+e_k] - A[n+e_{C-1}])``
and its second derivatives the second differences; the extreme coefficients bound the range of
each over the whole simplex. On a box of ``eta`` the image in ``x`` is enclosed exactly (each
``x_c`` is monotone in each ``eta_j``), and ``P`` is enclosed by its second-order Taylor form at the
box's centre with the global bound of the second derivatives (valid along the segment to any
point of the image, which stays in the simplex).

**G = inf.** ``P_c = (v_c - mean)/(sqrt(var + veps) + eps)`` is enclosed by interval arithmetic
(``var`` is increasing in every mass). With the direct penalty and scale normalisation the
stationary points are exactly the tilts ``x_c ∝ p_c exp(v_c / t)`` whose temperature solves
``h(t) = t/beta - eps - sqrt(var_x(t) + veps) = 0``: a scalar problem, isolated on ``t > 0``.

**Search.** Boxes are bisected; a box is discarded when the enclosure of some ``F_k`` excludes 0
(or, reverse, ``P_k >= beta`` on it). A root is certified by the Krawczyk test
``K(X) = m - Y F(m) + (I - Y J(X))(X - m) ⊂ int X`` (one and only one root in ``X``), applied to
each small box and to a box inflated around a Newton iterate. Boxes inside a certified box hold
no other root. The search is exhaustive when no box is left: every root lies in one certified box.

**Faces.** With the reverse penalty or the direct penalty where ``|P|`` is bounded (finite G, an
epsilon, shift) the gradient ``g_c`` of an absent class is ``+inf`` (``beta pi_ref/pi`` or
``-beta log pi`` dominates), so no point of a face is stationary: the KKT condition (every absent
class's logit drift points outward) fails. At G = inf, direct, scale, no epsilon, ``P_c`` of a worse
class tends to ``-inf`` like ``-1/sigma`` at the best class's vertex, faster than ``log x_c``: that
vertex is a limit point of the flow (reported with ``limit=True``); at every other vertex a better
class has ``P -> +inf`` and is pulled back; on the other faces ``sigma > 0`` and the log wins.

**Precision.** Arithmetic rounds to nearest; every enclosure compared with 0 is padded by a margin
far above the rounding error (relative 1e-12 plus absolute 1e-11 on ``F``), so the certificates are
proofs up to that stated margin, not directed-rounding proofs.

**Scope.** Deterministic rewards; penalties ``"reverse"`` (k3 in the loss) and ``"direct"`` (k2,
k3_ratio, k3_plus in the loss, k1 in the advantage, all unclamped); sequence level; any
normalisation, ddof and epsilons; C <= 4 classes, finite G (cost grows like ``G^(C-1)``) and G = inf.
Other estimators and placements (clamps, k1 in the loss, the KL in the reward) return
``exhaustive=False`` with the reason.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .. import _interval as iv
from .._multinomial import count_vectors
from .._numerics import log_factorial, logsumexp, optimize
from ..preference import _advantages_for_counts
from ..problem import InvalidInputError, Objective, Question, as_objective, as_question

__all__ = ["Certificate", "CertifiedRoot", "CertifiedSet", "certified_stationary_points", "certification_scope"]

#: Absolute margin added to point values of ``F`` (their rounding error is ~1e-14).
F_MARGIN = 1e-11
#: Newton starts per subdivision level (the closest to a root among the small boxes).
NEWTON_STARTS = 16
#: Boxes narrower than this (in eta) that neither exclusion nor Krawczyk resolves are reported unresolved.
MIN_WIDTH = 1e-9


@dataclass(frozen=True)
class Certificate:
    """Why a root is certain: the box that holds exactly one root and the test that proved it.

    Attributes
    ----------
    box : numpy.ndarray
        The (C-1, 2) box ``[lo, hi]`` in the class log-ratios ``eta``, or the (1, 2) interval of
        temperatures ``t`` at G = inf with the direct penalty.
    test : str
        The test that passed (e.g. the Krawczyk inclusion, or "single class: P = 0").
    """

    box: np.ndarray
    test: str


@dataclass(frozen=True)
class CertifiedRoot:
    """One stationary point of a class question, with its certificate.

    Attributes
    ----------
    pi : numpy.ndarray
        The policy, shape (K,).
    x : numpy.ndarray
        The class masses ``x_c`` (mass of the answers with the c-th distinct reward), shape (C,).
    residual : float
        The residual of the stationarity equations at the reported point.
    certificate : Certificate or None
        The box and test; None for a limit point.
    limit : bool
        A vertex reached only in the limit (not an interior root).
    message : str
        What the root is.
    """

    pi: np.ndarray
    x: np.ndarray
    residual: float
    certificate: Certificate | None
    limit: bool = False
    message: str = ""


@dataclass(frozen=True)
class CertifiedSet:
    """All stationary points of a class question, as :func:`certified_stationary_points` returns them.

    Iterating over it (and ``len``) goes over ``roots``.

    Attributes
    ----------
    roots : tuple of CertifiedRoot
        The stationary points found, each certified (or a limit vertex).
    exhaustive : bool
        True only when the search proved there is no other stationary point.
    message : str
        How the search ended (or why ``(q, obj)`` is out of scope).
    n_boxes : int
        Boxes examined.
    seconds : float
        Wall time of the search.
    unresolved : numpy.ndarray
        The boxes left undecided when the budget ran out, shape (n, C-1, 2) (empty when exhaustive).
    """

    roots: tuple
    exhaustive: bool
    message: str
    n_boxes: int = 0
    seconds: float = 0.0
    unresolved: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 2)))

    def __len__(self) -> int:
        return len(self.roots)

    def __iter__(self):
        return iter(self.roots)


def certification_scope(q: Question, obj: Objective) -> str | None:
    """None when :func:`certified_stationary_points` can certify ``(q, obj)``, else the reason why not.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective.

    Returns
    -------
    str or None
        None inside the scope (the reverse or direct penalty, deterministic rewards, sequence level),
        else a sentence saying what is not covered.

    Examples
    --------
    >>> from grpo_theory import Question, Objective
    >>> q = Question([0.5, 0.5], rewards=[1, 0])
    >>> certification_scope(q, Objective(beta=1.0)) is None
    True
    >>> noisy = Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4]])
    >>> "deterministic" in certification_scope(noisy, Objective(beta=1.0))
    True
    """
    if obj.regime not in ("reverse", "direct"):
        return (f"certification covers the note's two penalties (k3 in the loss; k2/k3_ratio/k3_plus in the "
                f"loss, k1 in the advantage, unclamped); this objective is {obj.describe()}")
    if not q.has_reward_law or not q.is_deterministic:
        return "certification needs deterministic rewards (random reward laws and preference matrices are not covered)"
    if obj.level == "token" and q.is_tree:
        return "certification covers sequence-level objectives (the token level on a tree is not covered)"
    return None


class _Classes:
    """The class reduction: reward ``v`` (C,) in decreasing order, reference masses ``p`` (C,)."""

    def __init__(self, q: Question) -> None:
        support = np.flatnonzero(q.pi_ref > 0)
        r = q.expected_reward[support]
        values, inverse = np.unique(-r, return_inverse=True)          # decreasing reward
        self.v = -values
        self.class_of = np.full(q.n_outputs, -1)
        self.class_of[support] = np.asarray(inverse).ravel()
        self.p = np.bincount(self.class_of[support], weights=q.pi_ref[support], minlength=self.v.size)
        self.q = q

    def expand(self, x: np.ndarray) -> np.ndarray:
        pi = np.zeros(self.q.n_outputs)
        s = self.class_of >= 0
        pi[s] = x[self.class_of[s]] * self.q.pi_ref[s] / self.p[self.class_of[s]]
        return pi


# ----------------------------------------------------------------------------- P and its derivatives

class _FiniteG:
    """``Q_r(x)`` (rows: ``P_c`` for reverse, ``P_k - P_last`` for direct) in Bernstein form, with the
    Bernstein coefficients of its first derivatives and global bounds on its second derivatives."""

    def __init__(self, u: np.ndarray, obj: Objective, eps: float, veps: float, unit: float, direct: bool) -> None:
        G, C = obj.group_size, u.size
        self.G, self.C = G, C
        counts = count_vectors(G - 1, C)
        A = _advantages_for_counts(u, counts.astype(float), G, obj.normalization, obj.std_ddof, eps, veps, "mean")
        if obj.normalization == "shift":
            A = A * unit
        T = (A[:-1] - A[-1]) if direct else A                           # (R, N)
        self.T = T
        base = G
        keys = counts @ (base ** np.arange(C))
        order = np.argsort(keys)
        skeys = keys[order]

        def index(n):                                                  # rows of counts -> column in T
            return order[np.searchsorted(skeys, n @ (base ** np.arange(C)))]

        eye = np.eye(C, dtype=np.int64)
        last = C - 1

        def difference(total: int, dirs: tuple) -> np.ndarray:
            """Bernstein coefficients (without the factorial factor) of the derivative of T along
            ``e_d - e_last`` for each d in dirs: inclusion-exclusion over the count vectors of ``total``."""
            m = count_vectors(total, C)
            out = np.zeros((T.shape[0], m.shape[0]))
            for choice in itertools.product((0, 1), repeat=len(dirs)):
                shift = sum((eye[last] if c else eye[d]) for c, d in zip(choice, dirs))
                out += (-1) ** sum(choice) * T[:, index(m + shift)]
            return out

        n = C - 1
        m1 = count_vectors(G - 2, C)
        self.T1 = np.stack([(G - 1) * difference(G - 2, (k,)) for k in range(n)], axis=1)      # (R, n, N1)
        self.H = np.zeros((T.shape[0], n, n))
        self.T2 = None
        if G >= 3:
            T2 = np.zeros((T.shape[0], n, n, math.comb(G - 3 + C - 1, C - 1)))
            for k in range(n):
                for j in range(n):
                    T2[:, k, j] = (G - 1) * (G - 2) * difference(G - 3, (k, j))
            self.H = np.abs(T2).max(axis=-1) * (1 + 1e-12) + 1e-12
            self.T2 = T2
            self._c2 = (log_factorial(G - 3) - log_factorial(count_vectors(G - 3, C)).sum(axis=1),
                        count_vectors(G - 3, C).astype(float))
        self.H3 = np.zeros((T.shape[0], n, n, n))
        if G >= 4:
            for k in range(n):
                for j in range(n):
                    for l in range(n):
                        d3 = (G - 1) * (G - 2) * (G - 3) * difference(G - 4, (k, j, l))
                        self.H3[:, k, j, l] = np.abs(d3).max(axis=-1) * (1 + 1e-12) + 1e-12
        self.range = (T.min(axis=1), T.max(axis=1))                    # over the whole simplex
        self._c0 = (log_factorial(G - 1) - log_factorial(counts).sum(axis=1), counts.astype(float))
        self._c1 = (log_factorial(G - 2) - log_factorial(m1).sum(axis=1), m1.astype(float))

    @staticmethod
    def _weights(X: np.ndarray, terms) -> np.ndarray:
        coef, counts = terms
        with np.errstate(divide="ignore"):
            lx = np.maximum(np.log(X), -745.0)         # a mass that underflowed: weight e^-745 n, i.e. 0
        return np.exp(coef[None, :] + lx @ counts.T)

    def values(self, X: np.ndarray):
        """``Q`` (B, R) and ``dQ/dy`` (B, R, C-1) at class masses ``X`` (B, C)."""
        W0 = self._weights(X, self._c0)
        W1 = self._weights(X, self._c1)
        return W0 @ self.T.T, np.einsum("bn,rkn->brk", W1, self.T1)

    def enclose(self, xm, xlo, xhi):
        """Enclosures of ``Q`` and ``dQ/dy`` over the image of a box (Taylor at ``xm``, global Hessian bound)."""
        Q, dQ = self.values(xm)
        dlo, dhi = (xlo - xm)[:, :-1], (xhi - xm)[:, :-1]                 # (B, C-1)
        r = np.maximum(np.abs(dlo), np.abs(dhi))
        lin = iv.mul((dQ, dQ), (dlo[:, None, :], dhi[:, None, :]))         # (B, R, C-1)
        H = np.broadcast_to(self.H, (xm.shape[0],) + self.H.shape)
        if self.T2 is not None:
            # local bound on the second derivatives: their value at the centre plus the global bound
            # of the third derivatives times the box's reach (never above the global bound)
            W2 = self._weights(xm, self._c2)
            H2m = np.abs(np.einsum("bn,rkjn->brkj", W2, self.T2))
            H = np.minimum(H, H2m + np.einsum("rkjl,bl->brkj", self.H3, r) + 1e-13)
        rem = 0.5 * np.einsum("brkj,bk,bj->br", H, r, r)
        Qi = (Q + lin[0].sum(-1) - rem, Q + lin[1].sum(-1) + rem)
        grad_pad = np.einsum("brkj,bj->brk", H, r)
        return Qi, (dQ - grad_pad, dQ + grad_pad)


class _InfiniteG:
    """``Q_r(x)`` at G = inf from the closed form, with interval enclosures."""

    def __init__(self, u: np.ndarray, obj: Objective, eps: float, veps: float, unit: float, direct: bool) -> None:
        self.u, self.C, self.direct = u, u.size, direct
        self.shift = obj.normalization == "shift"
        self.eps, self.veps, self.unit = eps, veps, unit
        self.D2 = (u[:, None] - u[None, :]) ** 2
        self.dv = u[:-1] - u[-1]                                          # d mean / d y_k
        self.dvar_coef = self.D2[:-1, :] - self.D2[-1][None, :]          # d var / d y_k = coef_k . x

    def _num_den(self, mean, var):
        den = np.sqrt(var + self.veps) + self.eps
        return den

    def values(self, X: np.ndarray):
        u = self.u
        mean = X @ u
        var = 0.5 * np.einsum("bi,ij,bj->b", X, self.D2, X)
        if self.shift:
            P = (u[None, :] - mean[:, None]) * self.unit
            dP = np.broadcast_to(-self.dv[None, None, :] * self.unit, (X.shape[0], self.C, self.C - 1)).copy()
        else:
            sq = np.sqrt(var + self.veps)
            den = sq + self.eps
            num = u[None, :] - mean[:, None]
            P = num / den[:, None]
            dvar = X @ self.dvar_coef.T                                   # (B, C-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                dden = np.where(sq[:, None] > 0, dvar / (2 * sq[:, None]), 0.0)
            dP = ((-self.dv[None, None, :] * den[:, None, None] - num[:, :, None] * dden[:, None, :])
                  / den[:, None, None] ** 2)
        if self.direct:
            return P[:, :-1] - P[:, -1:], dP[:, :-1] - dP[:, -1:]
        return P, dP

    def enclose(self, xm, xlo, xhi):
        u = self.u
        B = xm.shape[0]
        # mean = u_last + sum_k y_k (u_k - u_last): each term monotone in its own y_k
        t = iv.scale(self.dv[None, :], (xlo[:, :-1], xhi[:, :-1]))
        mean = (u[-1] + t[0].sum(-1), u[-1] + t[1].sum(-1))
        num = (u[None, :] - mean[1][:, None], u[None, :] - mean[0][:, None])       # (B, C)
        if self.shift:
            P = iv.scale(self.unit, num)
            dP = (np.broadcast_to(-self.dv * self.unit, (B, self.C, self.C - 1)).copy(),) * 2
        else:
            var = (0.5 * np.einsum("bi,ij,bj->b", xlo, self.D2, xlo), 0.5 * np.einsum("bi,ij,bj->b", xhi, self.D2, xhi))
            sq = iv.isqrt((var[0] + self.veps, var[1] + self.veps))
            den = (sq[0] + self.eps, sq[1] + self.eps)
            P = iv.div(num, (den[0][:, None], den[1][:, None]))
            cpos, cneg = np.maximum(self.dvar_coef, 0.0), np.minimum(self.dvar_coef, 0.0)
            dvar = (xlo @ cpos.T + xhi @ cneg.T, xhi @ cpos.T + xlo @ cneg.T)      # (B, C-1)
            dden = iv.div(dvar, (2 * sq[0][:, None], 2 * sq[1][:, None]))
            den2 = iv.mul(den, den)
            a = iv.scale(-self.dv[None, None, :], (den[0][:, None, None], den[1][:, None, None]))
            b = iv.mul((num[0][:, :, None], num[1][:, :, None]), (dden[0][:, None, :], dden[1][:, None, :]))
            dP = iv.div(iv.sub(a, b), (den2[0][:, None, None], den2[1][:, None, None]))
        if self.direct:
            return (iv.sub((P[0][:, :-1], P[1][:, :-1]), (P[0][:, -1:], P[1][:, -1:])),
                    iv.sub((dP[0][:, :-1], dP[1][:, :-1]), (dP[0][:, -1:], dP[1][:, -1:])))
        return P, dP


# ----------------------------------------------------------------------------- the system in eta

class _System:
    def __init__(self, cls: _Classes, obj: Objective) -> None:
        self.cls, self.obj = cls, obj
        self.beta = obj.beta
        self.direct = obj.regime == "direct"
        v = cls.v
        C = v.size
        self.C, self.n = C, C - 1
        span = float(v.max() - v.min())
        u = (v - v.min()) / span
        eps, veps = obj.std_eps / span, obj.variance_eps / span**2
        model = _InfiniteG if obj.is_large_group else _FiniteG
        self.model = model(u, obj, eps, veps, span, self.direct)
        self.log_p = np.log(cls.p)
        self.domain = self._domain(u, span, eps, veps)

    # -- a priori box containing every root
    def _domain(self, u, span, eps, veps) -> np.ndarray:
        beta, obj, p = self.beta, self.obj, self.cls.p
        if isinstance(self.model, _FiniteG):
            lo_r, hi_r = self.model.range
        else:
            if obj.normalization == "shift":
                bound = span
            else:
                # |P_c| <= 1/sqrt(x_c) (var >= x_c (v_c - mean)^2); for the reverse penalty this gives
                # beta x_c + sqrt(x_c) >= beta p_c, a lower bound on x_c, hence on sigma, hence on |P|.
                t = (-1.0 + np.sqrt(1.0 + 4.0 * beta**2 * p)) / (2.0 * beta)
                xlb = t**2 * (1 - 1e-9)
                var_lb = 0.5 * (xlb @ ((u[:, None] - u[None, :]) ** 2) @ xlb - np.sum(xlb**2 * 0))
                bound = 1.0 / (math.sqrt(var_lb + veps) + eps)
                if eps > 0:
                    bound = min(bound, 1.0 / eps)
            if self.direct:                   # only shift reaches here (scale uses the t-reduction)
                lo_r, hi_r = np.full(self.n, -2 * bound), np.full(self.n, 2 * bound)
            else:
                lo_r, hi_r = np.full(self.C, -bound), np.full(self.C, bound)
        if self.direct:
            base = self.log_p[:-1] - self.log_p[-1]
            lo, hi = base + lo_r / beta, base + hi_r / beta
        else:
            xlb = beta * p / (beta - np.minimum(lo_r, 0.0))
            if isinstance(self.model, _InfiniteG) and obj.normalization == "scale":
                t = (-1.0 + np.sqrt(1.0 + 4.0 * beta**2 * p)) / (2.0 * beta)
                xlb = np.maximum(xlb, t**2 * (1 - 1e-9))
            lo = np.log(xlb[:-1]) - 0.0           # eta_k = log x_k - log x_last >= log xlb_k - log 1
            hi = -np.log(xlb[-1]) * np.ones(self.n)
        pad = 1e-6 * (1 + np.abs(lo) + np.abs(hi))
        return np.stack([lo - pad - 1e-3, hi + pad + 1e-3], axis=-1)

    # -- coordinates
    @staticmethod
    def x_of(eta: np.ndarray) -> np.ndarray:
        th = np.concatenate([eta, np.zeros(eta.shape[:-1] + (1,))], axis=-1)
        return np.exp(th - logsumexp(th, axis=-1, keepdims=True))

    def x_box(self, box: np.ndarray):
        """Exact enclosure of the masses over a box of eta (B, n, 2): each x_c is monotone in each eta_j."""
        B, n = box.shape[0], self.n
        lo, hi = np.empty((B, self.C)), np.empty((B, self.C))
        for c in range(self.C):
            th_lo = np.concatenate([box[:, :, 1], np.zeros((B, 1))], axis=1)
            th_hi = np.concatenate([box[:, :, 0], np.zeros((B, 1))], axis=1)
            if c < n:
                th_lo[:, c] = box[:, c, 0]
                th_hi[:, c] = box[:, c, 1]
            lo[:, c] = np.exp(th_lo[:, c] - logsumexp(th_lo, axis=1))
            hi[:, c] = np.exp(th_hi[:, c] - logsumexp(th_hi, axis=1))
        return lo, hi

    # -- F and J at points
    def F_point(self, eta: np.ndarray):
        X = self.x_of(eta)
        Q, dQ = self.model.values(X)
        beta, n = self.beta, self.n
        y = X[:, :-1]
        S = y[:, :, None] * (np.eye(n)[None] - y[:, None, :])               # dy_i/deta_j
        if self.direct:
            F = eta - (self.log_p[:-1] - self.log_p[-1]) - Q / beta
            J = np.eye(n)[None] - np.einsum("bki,bij->bkj", dQ, S) / beta
            return F, J, X
        P, dP = Q[:, :-1], dQ[:, :-1]
        with np.errstate(invalid="ignore", divide="ignore"):
            F = np.log(y) + np.log(beta - P) - np.log(beta * self.cls.p[:-1])
            J = (np.eye(n)[None] - X[:, None, :-1]) - np.einsum("bki,bij->bkj", dP, S) / (beta - P)[:, :, None]
        return F, J, X

    # -- enclosures over boxes
    def F_box(self, box: np.ndarray):
        """Enclosures of F (B, n) and J (B, n, n) over boxes, and a mask of boxes proven root-free
        by the sign of ``beta - P`` (reverse)."""
        beta, n = self.beta, self.n
        xlo, xhi = self.x_box(box)
        mid = 0.5 * (box[..., 0] + box[..., 1])
        xm = self.x_of(mid)
        Qi, dQi = self.model.enclose(xm, xlo, xhi)
        y = (xlo[:, :-1], xhi[:, :-1])
        eye = np.eye(n)[None]
        Si = iv.mul((y[0][:, :, None], y[1][:, :, None]),
                    iv.sub((eye, eye), (y[0][:, None, :], y[1][:, None, :])))       # (B, n, n)
        prod = _imatmul(dQi, Si)
        no_root = np.zeros(box.shape[0], dtype=bool)
        if self.direct:
            base = self.log_p[:-1] - self.log_p[-1]
            F = iv.sub((box[..., 0] - base, box[..., 1] - base), iv.scale(1.0 / beta, Qi))
            J = iv.sub((eye, eye), iv.scale(1.0 / beta, prod))
        else:
            P = (Qi[0][:, :-1], Qi[1][:, :-1])
            no_root = np.any(P[0] >= beta, axis=1)
            gap = (beta - P[1], beta - P[0])
            logx = iv.ilog(y)
            F = iv.sub(iv.add(logx, iv.ilog(gap)), (np.log(beta * self.cls.p[:-1]),) * 2)
            F = (np.where(gap[0] > 0, F[0], -np.inf), F[1])
            dPi = (dQi[0][:, :-1], dQi[1][:, :-1])
            prodP = _imatmul(dPi, Si)
            du = iv.sub((eye, eye), (xlo[:, None, :-1], xhi[:, None, :-1]))
            J = iv.sub(du, iv.div(prodP, (gap[0][:, :, None], gap[1][:, :, None])))
        return iv.widen(F, 1e-12, F_MARGIN), J, no_root


def _imatmul(A, B):
    """Interval matrix product (B, n, m) x (B, m, p) in midpoint-radius form (an enclosure)."""
    Ac, Ar = 0.5 * (A[0] + A[1]), 0.5 * (A[1] - A[0])
    Bc, Br = 0.5 * (B[0] + B[1]), 0.5 * (B[1] - B[0])
    with np.errstate(invalid="ignore"):
        c = Ac @ Bc
        r = np.abs(Ac) @ Br + Ar @ np.abs(Bc) + Ar @ Br
    r = np.where(np.isnan(r), np.inf, r)
    return c - r, c + r


def _krawczyk(sys: _System, box: np.ndarray):
    """Krawczyk test on boxes (B, n, 2): returns (inside, empty) masks."""
    m = 0.5 * (box[..., 0] + box[..., 1])
    r = 0.5 * (box[..., 1] - box[..., 0])
    _, Ji, _ = sys.F_box(box)
    Fm, _, _ = sys.F_point(m)
    with np.errstate(invalid="ignore"):
        Jc, Jr = 0.5 * (Ji[0] + Ji[1]), 0.5 * (Ji[1] - Ji[0])
    B, n = m.shape
    inside = np.zeros(B, dtype=bool)
    empty = np.zeros(B, dtype=bool)
    ok = np.all(np.isfinite(Jc), axis=(1, 2)) & np.all(np.isfinite(Jr), axis=(1, 2)) & np.all(np.isfinite(Fm), axis=1)
    if not np.any(ok):
        return inside, empty
    with np.errstate(all="ignore"):
        det = np.linalg.det(Jc[ok])
        good = np.abs(det) > 1e-300
        idx = np.flatnonzero(ok)[good]
        Y = np.linalg.inv(Jc[idx])
        absY = np.abs(Y)
        kc = m[idx] - np.einsum("bij,bj->bi", Y, Fm[idx])
        Mc = np.eye(n)[None] - Y @ Jc[idx]
        Mr = absY @ Jr[idx]
        krad = np.einsum("bij,bj->bi", absY, np.full_like(Fm[idx], F_MARGIN) + 1e-12 * np.abs(Fm[idx])) \
            + np.einsum("bij,bj->bi", np.abs(Mc) + Mr, r[idx])
        dist = np.abs(kc - m[idx])
        inside[idx] = np.all(dist + krad < r[idx] * (1 - 1e-9), axis=1)
        empty[idx] = np.any(dist - krad > r[idx] * (1 + 1e-9), axis=1)
    return inside, empty


def _newton(sys: _System, eta: np.ndarray, iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Batched Newton on F; returns the iterates and a mask of those that converged."""
    done = np.zeros(eta.shape[0], dtype=bool)
    eta = eta.copy()
    lo, hi = sys.domain[:, 0], sys.domain[:, 1]
    for _ in range(iterations):
        F, J, _ = sys.F_point(eta)
        with np.errstate(all="ignore"):
            try:
                step = np.linalg.solve(J, F[..., None])[..., 0]
            except np.linalg.LinAlgError:
                step = np.stack([np.linalg.lstsq(j, f, rcond=None)[0] for j, f in zip(J, F)])
        step = np.where(np.isfinite(step), step, 0.0)
        step = np.clip(step, -2.0, 2.0)
        eta = np.clip(eta - step, lo - 1.0, hi + 1.0)
        done = np.all(np.abs(step) < 1e-13 * (1 + np.abs(eta)), axis=1)
        if np.all(done):
            break
    F, _, _ = sys.F_point(eta)
    ok = np.all(np.isfinite(F), axis=1) & (np.max(np.abs(F), axis=1) < 1e-9)
    return eta, ok


def _within(box: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """Boxes (B, n, 2) contained in the box ``outer`` (n, 2)."""
    return np.all((box[..., 0] >= outer[:, 0]) & (box[..., 1] <= outer[:, 1]), axis=1)


def _point_in(eta: np.ndarray, outer: np.ndarray) -> bool:
    return bool(np.all((eta >= outer[:, 0]) & (eta <= outer[:, 1])))


def _solve_eta(sys: _System, budget: float, max_boxes: int):
    """The box search of the module doc. Returns (roots [(eta, box, test)], unresolved boxes, n_boxes, reason)."""
    t0 = time.perf_counter()
    boxes = sys.domain[None].copy()
    certified: list[tuple[np.ndarray, np.ndarray, str]] = []
    unresolved = []
    n_boxes = 0
    reason = ""

    def add(eta, box, test):
        for i, (e, b, _) in enumerate(certified):
            if _point_in(eta, b):                       # the same (unique) root of b
                if np.all(box[:, 1] - box[:, 0] < b[:, 1] - b[:, 0]) and _point_in(e, box):
                    certified[i] = (e, box, test)
                return
            if _point_in(e, box):                       # box holds one root only: the known one
                return
        certified.append((eta, box, test))

    while boxes.shape[0]:
        n_boxes += boxes.shape[0]
        if time.perf_counter() - t0 > budget or n_boxes > max_boxes:
            reason = (f"stopped after {n_boxes} boxes and {time.perf_counter() - t0:.2f} s with {boxes.shape[0]} "
                      "boxes unresolved")
            unresolved.append(boxes)
            break
        F, _, no_root = sys.F_box(boxes)
        keep = ~no_root & np.all(iv.contains_zero(F), axis=1)
        boxes = boxes[keep]
        for _, b, _ in certified:
            boxes = boxes[~_within(boxes, b)]
        if not boxes.shape[0]:
            break
        width = (boxes[..., 1] - boxes[..., 0]).max(axis=1)
        inside, empty = _krawczyk(sys, boxes)
        for i in np.flatnonzero(inside):
            eta, ok = _newton(sys, 0.5 * (boxes[i:i + 1, :, 0] + boxes[i:i + 1, :, 1]))
            e = eta[0] if ok[0] and _point_in(eta[0], boxes[i]) else 0.5 * (boxes[i, :, 0] + boxes[i, :, 1])
            add(e, boxes[i].copy(), "krawczyk")
        small = ~inside & ~empty & (width < 0.25)
        if np.any(small):
            # Newton only accelerates (completeness comes from the subdivision): start it from the
            # few small boxes whose centres are closest to a root
            starts = 0.5 * (boxes[small][..., 0] + boxes[small][..., 1])
            if starts.shape[0] > NEWTON_STARTS:
                Fm, _, _ = sys.F_point(starts)
                with np.errstate(invalid="ignore"):
                    score = np.where(np.all(np.isfinite(Fm), axis=1), np.max(np.abs(Fm), axis=1), np.inf)
                starts = starts[np.argsort(score)[:NEWTON_STARTS]]
            eta, ok = _newton(sys, starts)
            for e in eta[ok]:
                if any(_point_in(e, b) for _, b, _ in certified):
                    continue
                for rho in (1e-10, 1e-8, 1e-6, 1e-4):
                    rad = rho * (1.0 + np.abs(e))
                    cand = np.stack([e - rad, e + rad], axis=-1)
                    ins, _ = _krawczyk(sys, cand[None])
                    if ins[0]:
                        add(e, cand, "krawczyk (epsilon-inflation around a Newton iterate)")
                        break
        boxes = boxes[~inside & ~empty]
        for _, b, _ in certified:
            boxes = boxes[~_within(boxes, b)]
        if not boxes.shape[0]:
            break
        width = boxes[..., 1] - boxes[..., 0]
        tiny = width.max(axis=1) < MIN_WIDTH
        if np.any(tiny):
            unresolved.append(boxes[tiny])
            boxes = boxes[~tiny]
        # bisect along the widest coordinate
        k = np.argmax(boxes[..., 1] - boxes[..., 0], axis=1)
        mid = 0.5 * (boxes[np.arange(boxes.shape[0]), k, 0] + boxes[np.arange(boxes.shape[0]), k, 1])
        left, right = boxes.copy(), boxes.copy()
        left[np.arange(boxes.shape[0]), k, 1] = mid
        right[np.arange(boxes.shape[0]), k, 0] = mid
        boxes = np.concatenate([left, right])
    un = np.concatenate(unresolved) if unresolved else np.zeros((0, sys.n, 2))
    if un.shape[0] and not reason:
        reason = (f"{un.shape[0]} boxes narrower than {MIN_WIDTH:g} neither excluded nor certified "
                  "(a degenerate or nearly degenerate root)")
    return certified, un, n_boxes, reason


# ----------------------------------------------------------------------------- G = inf, direct, scale

class _Tilt:
    """The direct penalty at G = inf with scale normalisation: roots of ``h(t) = t/beta - eps - sigma(t)``."""

    def __init__(self, cls: _Classes, obj: Objective) -> None:
        v = cls.v
        span = float(v.max() - v.min())
        self.d = (v[0] - v) / span                       # >= 0, d_0 = 0 (class 0 is the best)
        self.u = (v - v.min()) / span
        self.p = cls.p
        self.beta = obj.beta
        self.eps, self.veps = obj.std_eps / span, obj.variance_eps / span**2

    def x_of_t(self, t: np.ndarray) -> np.ndarray:
        logits = np.log(self.p)[None, :] - self.d[None, :] / np.asarray(t, dtype=float)[:, None]
        return np.exp(logits - logsumexp(logits, axis=1, keepdims=True))

    def h(self, t: np.ndarray) -> np.ndarray:
        x = self.x_of_t(t)
        mean = x @ self.u
        var = np.einsum("bi,bi->b", x, (self.u[None, :] - mean[:, None]) ** 2)
        return t / self.beta - self.eps - np.sqrt(var + self.veps)

    def enclose(self, lo: np.ndarray, hi: np.ndarray):
        """Enclosures of h and h' over intervals [lo, hi] of t (> 0)."""
        r = (self.p[None, 1:] / self.p[0] * np.exp(-self.d[None, 1:] / lo[:, None]),
             self.p[None, 1:] / self.p[0] * np.exp(-self.d[None, 1:] / hi[:, None]))      # increasing in t
        z = (1.0 + r[0].sum(1), 1.0 + r[1].sum(1))
        x0 = (1.0 / z[1], 1.0 / z[0])
        xr = iv.div(r, (z[0][:, None], z[1][:, None]))
        xlo = np.concatenate([x0[0][:, None], xr[0]], axis=1)
        xhi = np.concatenate([x0[1][:, None], np.minimum(xr[1], 1.0)], axis=1)
        D2 = (self.u[:, None] - self.u[None, :]) ** 2
        var = (0.5 * np.einsum("bi,ij,bj->b", xlo, D2, xlo), 0.5 * np.einsum("bi,ij,bj->b", xhi, D2, xhi))
        sig = iv.isqrt((var[0] + self.veps, var[1] + self.veps))
        h = (lo / self.beta - self.eps - sig[1], hi / self.beta - self.eps - sig[0])
        mean = (xlo @ self.u, np.minimum(xhi @ self.u, 1.0))
        cen = (self.u[None, :] - mean[1][:, None], self.u[None, :] - mean[0][:, None])
        cube = (cen[0] ** 3, cen[1] ** 3)
        m3 = iv.mul((xlo, xhi), cube)
        m3 = (m3[0].sum(1), m3[1].sum(1))
        t2 = (lo**2, hi**2)
        dh = iv.add((np.full(lo.shape, 1 / self.beta),) * 2,
                    iv.div(m3, iv.scale(2.0, iv.mul(sig, t2))))
        return iv.widen(h, 1e-12, F_MARGIN), dh

    def t_floor(self) -> float:
        """A ``t1 > 0`` with no root in ``(0, t1]``: ``sigma/t <= psi(t) < 1/beta`` there (module doc)."""
        tmin = self.beta * (self.eps + math.sqrt(self.veps))
        if tmin > 0:
            return tmin * (1 - 1e-12)
        d, w = self.d[1:], self.p[1:] / self.p[0]

        def psi(t):                                      # in logs: (d/t)^2 overflows for tiny t
            return math.sqrt(float(np.sum(np.exp(np.log(w) + 2 * np.log(d / t) - d / t))))

        top = float(d.min()) / 2.0                       # psi is increasing on (0, top]
        if psi(top) < 1.0 / self.beta:
            return top
        lo, hi = math.log(top) - 600.0, math.log(top)
        for _ in range(200):
            midpoint = 0.5 * (lo + hi)
            if psi(math.exp(midpoint)) < 1.0 / self.beta:
                lo = midpoint
            else:
                hi = midpoint
        return math.exp(lo)

    def solve(self, budget: float):
        t0 = time.perf_counter()
        t1 = self.t_floor()
        sig_max = math.sqrt(0.25 + self.veps)
        T = self.beta * (sig_max + self.eps) * (1 + 1e-9) + 1e-12
        # subdivide in log t: roots can sit at temperatures many orders below T
        edges = np.exp(np.linspace(math.log(t1), math.log(T), 65))
        boxes = np.stack([edges[:-1], edges[1:]], axis=1)
        roots, n_boxes, reason = [], 0, ""
        while boxes.shape[0]:
            n_boxes += boxes.shape[0]
            if time.perf_counter() - t0 > budget:
                reason = f"stopped after {n_boxes} intervals with {boxes.shape[0]} unresolved"
                break
            h, dh = self.enclose(boxes[:, 0], boxes[:, 1])
            boxes = boxes[iv.contains_zero(h)]
            dh = (dh[0][iv.contains_zero(h)], dh[1][iv.contains_zero(h)])
            if not boxes.shape[0]:
                break
            ha, hb = self.h(boxes[:, 0]), self.h(boxes[:, 1])
            pad = F_MARGIN + 1e-12 * (boxes[:, 1] / self.beta)
            monotone = (dh[0] > 0) | (dh[1] < 0)
            change = ((ha < -pad) & (hb > pad)) | ((ha > pad) & (hb < -pad))
            cert = monotone & change
            for a, b in boxes[cert]:
                t = optimize.brentq(lambda s: float(self.h(np.array([s]))[0]), a, b, xtol=1e-15 * b, rtol=1e-15)
                roots.append((t, np.array([[a, b]]), "sign change and h' enclosure excluding 0 (one root)"))
            # monotone without a sign change: no root; otherwise bisect (geometric midpoint)
            rest = boxes[~monotone]
            tiny = (rest[:, 1] - rest[:, 0]) < 1e-13 * rest[:, 1]
            if np.any(tiny):
                reason = f"{int(tiny.sum())} temperature intervals unresolved (a degenerate root)"
                rest = rest[~tiny]
            mid = np.sqrt(rest[:, 0] * rest[:, 1])
            boxes = np.concatenate([np.stack([rest[:, 0], mid], 1), np.stack([mid, rest[:, 1]], 1)])
        return roots, n_boxes, reason


# ----------------------------------------------------------------------------- public API

def certified_stationary_points(q: Question, obj: Objective, *, time_budget: float = 10.0,
                                max_boxes: int = 2_000_000) -> CertifiedSet:
    """Every stationary point of a class question, each with a certificate (see the module doc).

    Parameters
    ----------
    q : Question
        Deterministic rewards (any number of outputs; C <= 4 distinct rewards on pi_ref's support).
    obj : Objective
        Penalty "reverse" or "direct" (see :func:`certification_scope`), any finite G or G = inf.
    time_budget : float
        Seconds; where the search does not finish, ``exhaustive=False`` with the reason.
    max_boxes : int
        Cap on the number of boxes examined.

    Returns
    -------
    CertifiedSet
        ``roots``: :class:`CertifiedRoot` each (interior points with their box and test; the limit vertex,
        where there is one, with ``limit=True``); ``exhaustive``: True when proven complete.

    Raises
    ------
    InvalidInputError
        More than 4 classes, or a non-positive budget.

    Examples
    --------
    At G = inf with the direct penalty, ``pi ∝ pi_ref exp(t r)`` with ``t = 1/(beta sigma_pi)``; the two
    roots of ``beta t sigma(t) = 1`` (found by a scan and bisection in ``t``) give ``x_0`` = 0.88099 and 0.95339:

    >>> import math
    >>> from grpo_theory import Question, Objective
    >>> res = certified_stationary_points(Question([0.6, 0.2, 0.2], rewards=[1, 0.5, 0]),
    ...                                   Objective(beta=2.0, group_size=math.inf, penalty="direct"))
    >>> res.exhaustive, sorted(round(float(r.x[0]), 5) for r in res.roots if not r.limit)
    (True, [0.88099, 0.95339])
    """
    q, obj = as_question(q), as_objective(obj)
    if not (time_budget > 0):
        raise InvalidInputError(f"time_budget must be positive, got {time_budget!r}")
    t0 = time.perf_counter()
    why = certification_scope(q, obj)
    if why is not None:
        return CertifiedSet((), False, "not certified: " + why)
    cls = _Classes(q)
    C = cls.v.size
    if C > 4:
        raise InvalidInputError(f"certification covers up to 4 reward classes, this question has {C}")
    if C == 1:
        pi = q.pi_ref.copy()
        return CertifiedSet((CertifiedRoot(pi, np.ones(1), 0.0, Certificate(np.zeros((0, 2)), "single class: P = 0"),
                                           message="one reward class: pi = pi_ref"),), True, "single class")
    roots: list[CertifiedRoot] = []
    unscaled = obj.normalization == "scale" and obj.std_eps == 0 and obj.variance_eps == 0
    if obj.is_large_group and obj.regime == "direct" and obj.normalization == "scale":
        tilt = _Tilt(cls, obj)
        found, n_boxes, reason = tilt.solve(time_budget)
        for t, box, test in sorted(found, key=lambda r: r[0]):
            x = tilt.x_of_t(np.array([t]))[0]
            res = float(abs(tilt.h(np.array([t]))[0]))
            roots.append(CertifiedRoot(cls.expand(x), x, res, Certificate(box, test),
                                       message=f"tilt x ∝ p exp(v/t) at temperature t = {t:.12g}"))
        unresolved = np.zeros((0, 1, 2))
    else:
        sys_ = _System(cls, obj)
        found, unresolved, n_boxes, reason = _solve_eta(sys_, time_budget, max_boxes)
        for eta, box, test in found:
            F, _, X = sys_.F_point(eta[None])
            roots.append(CertifiedRoot(cls.expand(X[0]), X[0], float(np.max(np.abs(F))), Certificate(box, test),
                                       message="interior root, unique in its certified box"))
    if obj.is_large_group and obj.regime == "direct" and unscaled:
        x = np.zeros(C)
        x[0] = 1.0
        roots.append(CertifiedRoot(cls.expand(x), x, 0.0, None, limit=True,
                                   message="limit point: at G = inf with no epsilon, P of every worse class falls "
                                           "like -1/sigma at the best class's vertex, faster than log x: the flow "
                                           "runs into it (stationary only in the limit)"))
    roots.sort(key=lambda r: -float(r.x[0]))
    exhaustive = not reason
    where = f"{'G=inf' if obj.is_large_group else f'G={obj.group_size}'}, {C} classes, {obj.regime}"
    msg = (f"certified: every stationary point isolated ({n_boxes} boxes, {where}); faces excluded by the KKT "
           "argument of the module doc" if exhaustive else f"not exhaustive: {reason}")
    return CertifiedSet(tuple(roots), exhaustive, msg, n_boxes, time.perf_counter() - t0,
                        unresolved if unresolved.size else np.zeros((0, max(C - 1, 1), 2)))
