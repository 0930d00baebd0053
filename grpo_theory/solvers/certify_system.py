r"""The stationarity system of a class question in class log-ratios, with interval enclosures.

Part of the certificate of :mod:`grpo_theory.solvers.certify` (its module doc states the equations
``F(eta) = 0`` and the bounds used): the class reduction (:class:`Classes`), ``P`` and its derivatives
in Bernstein form at finite G (:class:`FiniteG`) or by interval arithmetic at G = inf
(:class:`InfiniteG`), and :class:`EtaSystem`: ``F`` and its Jacobian at points and enclosed over
boxes of ``eta``, and an a priori box holding every root.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _interval as iv
from .._multinomial import count_vectors
from .._numerics import log_factorial, logsumexp
from ..preference_sums import advantages_for_counts
from ..problem import Objective, Question

#: Absolute margin added to point values of ``F`` (their rounding error is ~1e-14).
F_MARGIN = 1e-11


class Classes:
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

class FiniteG:
    """``Q_r(x)`` (rows: ``P_c`` for reverse, ``P_k - P_last`` for direct) in Bernstein form, with the
    Bernstein coefficients of its first derivatives and global bounds on its second derivatives."""

    def __init__(self, u: np.ndarray, obj: Objective, eps: float, veps: float, unit: float, direct: bool) -> None:
        G, C = obj.group_size, u.size
        self.G, self.C = G, C
        counts = count_vectors(G - 1, C)
        A = advantages_for_counts(u, counts.astype(float), G, obj.normalization, obj.std_ddof, eps, veps, "mean")
        if not obj.normalization_variant.scales:
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


class InfiniteG:
    """``Q_r(x)`` at G = inf from the closed form, with interval enclosures."""

    def __init__(self, u: np.ndarray, obj: Objective, eps: float, veps: float, unit: float, direct: bool) -> None:
        self.u, self.C, self.direct = u, u.size, direct
        self.shift = not obj.normalization_variant.scales
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

class EtaSystem:
    def __init__(self, cls: Classes, obj: Objective) -> None:
        self.cls, self.obj = cls, obj
        self.beta = obj.beta
        self.direct = obj.regime_variant.is_direct
        v = cls.v
        C = v.size
        self.C, self.n = C, C - 1
        span = float(v.max() - v.min())
        u = (v - v.min()) / span
        eps, veps = obj.std_eps / span, obj.variance_eps / span**2
        model = InfiniteG if obj.is_large_group else FiniteG
        self.model = model(u, obj, eps, veps, span, self.direct)
        self.log_p = np.log(cls.p)
        self.domain = self._domain(u, span, eps, veps)

    # -- a priori box containing every root
    def _domain(self, u, span, eps, veps) -> np.ndarray:
        beta, obj, p = self.beta, self.obj, self.cls.p
        if isinstance(self.model, FiniteG):
            lo_r, hi_r = self.model.range
        else:
            if not obj.normalization_variant.scales:
                bound = span
            else:
                # |P_c| <= 1/sqrt(x_c) (var >= x_c (v_c - mean)^2); for the reverse penalty this gives
                # beta x_c + sqrt(x_c) >= beta p_c, a lower bound on x_c, hence on sigma, hence on |P|.
                t = 2.0 * beta * p / (1.0 + np.sqrt(1.0 + 4.0 * beta**2 * p))     # the root, without cancellation
                xlb = t**2 * (1 - 1e-9)
                # var >= 0.5 xlb D xlb, taken over xlb's largest entry: xlb^2 underflows at beta p of 1e-77
                top = float(xlb.max())
                w = 0.5 * ((xlb / top) @ ((u[:, None] - u[None, :]) ** 2) @ (xlb / top))
                bound = 1.0 / ((top * math.sqrt(w) if veps == 0 else math.sqrt(top * top * w + veps)) + eps)
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
            if isinstance(self.model, InfiniteG) and obj.normalization_variant.scales:
                t = 2.0 * beta * p / (1.0 + np.sqrt(1.0 + 4.0 * beta**2 * p))     # the root, without cancellation
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
        prod = iv.matmul(dQi, Si)
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
            prodP = iv.matmul(dPi, Si)
            du = iv.sub((eye, eye), (xlo[:, None, :-1], xhi[:, None, :-1]))
            J = iv.sub(du, iv.div(prodP, (gap[0][:, :, None], gap[1][:, :, None])))
        return iv.widen(F, 1e-12, F_MARGIN), J, no_root
