r"""The exhaustive searches of :mod:`grpo_theory.solvers.certify` (its module doc, **Search**).

:func:`solve_eta` bisects boxes of class log-ratios, discards those whose enclosure of ``F`` excludes
0 and certifies roots by the Krawczyk test (on small boxes and on boxes inflated around Newton
iterates); :class:`Tilt` isolates the roots of the scalar temperature equation of the direct penalty
at G = inf with scale normalisation.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .. import _interval as iv
from .._numerics import logsumexp, optimize
from ..problem import Objective
from .certify_system import F_MARGIN, Classes, EtaSystem

#: Newton starts per subdivision level (the closest to a root among the small boxes).
NEWTON_STARTS = 16
#: Boxes narrower than this (in eta) that neither exclusion nor Krawczyk resolves are reported unresolved.
MIN_WIDTH = 1e-9


def _krawczyk(sys: EtaSystem, box: np.ndarray):
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


def _newton(sys: EtaSystem, eta: np.ndarray, iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
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


def solve_eta(sys: EtaSystem, budget: float | None, max_boxes: int):
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
        if (budget is not None and time.perf_counter() - t0 > budget) or n_boxes > max_boxes:
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

class Tilt:
    r"""The direct penalty at G = inf with scale normalisation: roots of ``h(t) = t/beta - eps - sigma(t)``.

    Worked in ``delta = t - t_min`` with ``t_min = beta (eps + sqrt(veps))`` (0 without epsilons), where
    ``h = delta/beta - S(t)``, ``S = sigma - sqrt(veps) = var/(sigma + sqrt(veps))``: with an epsilon a root can
    sit at ``delta / t_min`` of 1e-48 (masses 1e-100: ``sigma`` 1e-50), below what ``t`` resolves in double,
    while ``delta`` and ``S`` keep their relative precision. Enclosures are padded relative to the two terms
    (``REL_PAD``), not by an absolute margin that would swamp ``h`` there.
    """

    #: Relative pad on ``delta/beta + S``: ``x_c = p_c e^{-d_c/t}/Z`` has relative error below ``(d_c/t) 2^-52``
    #: (745 at most before it underflows: 2e-13) from the rounding of ``t``, far below this.
    REL_PAD = 1e-11
    #: Absolute pad: a mass that underflows to 0 (below 1e-308) moves ``var`` by less than this.
    ABS_PAD = 1e-300

    def __init__(self, cls: Classes, obj: Objective) -> None:
        v = cls.v
        span = float(v.max() - v.min())
        self.d = (v[0] - v) / span                       # >= 0, d_0 = 0 (class 0 is the best)
        self.u = (v - v.min()) / span
        self.p = cls.p
        self.beta = obj.beta
        self.eps, self.veps = obj.std_eps / span, obj.variance_eps / span**2
        self.sveps = math.sqrt(self.veps)
        self.tmin = self.beta * (self.eps + self.sveps)

    def x_of_t(self, t: np.ndarray) -> np.ndarray:
        logits = np.log(self.p)[None, :] - self.d[None, :] / np.asarray(t, dtype=float)[:, None]
        return np.exp(logits - logsumexp(logits, axis=1, keepdims=True))

    def x_of_delta(self, delta: np.ndarray) -> np.ndarray:
        """The tilt at ``t = t_min + delta``."""
        return self.x_of_t(self.tmin + np.asarray(delta, dtype=float))

    def _excess(self, var):
        """``S = sigma - sqrt(veps)`` from ``var``, without the cancellation (increasing in ``var``)."""
        return var / (np.sqrt(var + self.veps) + self.sveps) if self.veps > 0 else np.sqrt(var)

    def h_delta(self, delta: np.ndarray) -> np.ndarray:
        """``h`` at ``t = t_min + delta``, as ``delta/beta - S``."""
        delta = np.asarray(delta, dtype=float)
        x = self.x_of_delta(delta)
        mean = x @ self.u
        var = np.einsum("bi,bi->b", x, (self.u[None, :] - mean[:, None]) ** 2)
        return delta / self.beta - self._excess(var)

    def h(self, t: np.ndarray) -> np.ndarray:
        """``h`` at temperatures ``t``."""
        return self.h_delta(np.asarray(t, dtype=float) - self.tmin)

    def pad(self, delta: np.ndarray, excess: np.ndarray) -> np.ndarray:
        """The rounding margin of ``h = delta/beta - S`` with terms of these sizes."""
        return self.REL_PAD * (np.abs(delta) / self.beta + np.abs(excess)) + self.ABS_PAD

    def enclose(self, lo: np.ndarray, hi: np.ndarray):
        """Enclosures of h and h' over intervals [lo, hi] of ``delta`` (>= 0), h padded by :meth:`pad`."""
        tlo, thi = self.tmin + lo, self.tmin + hi
        with np.errstate(under="ignore"):
            r = (self.p[None, 1:] / self.p[0] * np.exp(-self.d[None, 1:] / tlo[:, None]),
                 self.p[None, 1:] / self.p[0] * np.exp(-self.d[None, 1:] / thi[:, None]))      # increasing in t
        z = (1.0 + r[0].sum(1), 1.0 + r[1].sum(1))
        x0 = (1.0 / z[1], 1.0 / z[0])
        xr = iv.div(r, (z[0][:, None], z[1][:, None]))
        xlo = np.concatenate([x0[0][:, None], xr[0]], axis=1)
        xhi = np.concatenate([x0[1][:, None], np.minimum(xr[1], 1.0)], axis=1)
        D2 = (self.u[:, None] - self.u[None, :]) ** 2
        var = (0.5 * np.einsum("bi,ij,bj->b", xlo, D2, xlo), 0.5 * np.einsum("bi,ij,bj->b", xhi, D2, xhi))
        excess = (self._excess(var[0]), self._excess(var[1]))
        h = (lo / self.beta - excess[1], hi / self.beta - excess[0])
        pad = self.pad(hi, excess[1])
        h = (h[0] - pad, h[1] + pad)
        sig = iv.isqrt((var[0] + self.veps, var[1] + self.veps))
        mean = (xlo @ self.u, np.minimum(xhi @ self.u, 1.0))
        cen = (self.u[None, :] - mean[1][:, None], self.u[None, :] - mean[0][:, None])
        cube = (cen[0] ** 3, cen[1] ** 3)
        m3 = iv.mul((xlo, xhi), cube)
        m3 = (m3[0].sum(1), m3[1].sum(1))
        t2 = (tlo**2, thi**2)
        dh = iv.add((np.full(lo.shape, 1 / self.beta),) * 2,
                    iv.div(m3, iv.scale(2.0, iv.mul(sig, t2))))
        return h, dh

    def log_excess(self, t: float) -> float:
        """``log S`` at the temperature ``t``, in logs throughout (the worse classes' masses may underflow)."""
        lr = np.log(self.p[1:] / self.p[0]) - self.d[1:] / t              # log(x_c / x_0)
        logx = np.concatenate([[0.0], lr]) - logsumexp(np.concatenate([[0.0], lr]))
        i, j = np.triu_indices(self.d.size, 1)
        with np.errstate(divide="ignore"):
            log_var = float(logsumexp(logx[i] + logx[j] + 2.0 * np.log(np.abs(self.d[i] - self.d[j]))))
        # var = sum_{i<j} x_i x_j (d_i - d_j)^2; S = var / (sigma + sqrt(veps)), sigma = sqrt(var + veps)
        if self.veps > 0:
            return log_var - math.log(math.sqrt(math.exp(min(log_var, 0.0)) + self.veps) + self.sveps)
        return 0.5 * log_var

    def stability_bound(self, logx: np.ndarray) -> float:
        r"""A bound, in units of ``beta``, on the part of the full-space Jacobian that can destabilise the tilt
        with class log-masses ``logx``: where it is below 1 the root is stable on all output logits.

        On all output logits, at a root, ``g_o = P_o - beta (lr_o + 1)`` with ``P_o = (v_o - m)/(sigma + eps)``,
        ``sigma = sqrt(var + veps)``, and the Jacobian of ``pi_o (g_o - E g)`` is ``J = -beta C - (C b)(C y)^T``
        with ``C = diag(pi) - pi pi^T``, ``b = (v - m)/(sigma + eps)^2``, ``y = ((v - m)^2 - var)/(2 sigma)``
        (the mean's derivative is removed by the projection). So ``J = -C^{1/2} F C^{1/2}`` with
        ``F = beta I + (C^{1/2} b)(C^{1/2} y)^T``. Where ``|C^{1/2} b| |C^{1/2} y| < beta`` the symmetric part of
        ``F`` is positive definite, and every eigenvalue of ``J`` but the gauge's 0 has negative real part
        (``F C u = mu u`` gives ``(Cu)^* F (Cu) = mu u^* C u``). ``|C^{1/2} b|^2 = var/(sigma + eps)^4`` and
        ``|C^{1/2} y|^2 = (mu_4 - var^2)/(4 sigma^2) <= var/(4 sigma^2)`` (``|v - m| <= 1`` in these units):
        the bound is ``var / (2 sigma (sigma + eps)^2 beta)``, computed in logs (masses may underflow)."""
        i, j = np.triu_indices(self.d.size, 1)
        with np.errstate(divide="ignore"):
            log_var = float(logsumexp(logx[i] + logx[j] + 2.0 * np.log(np.abs(self.d[i] - self.d[j]))))
        if self.veps > 0:
            log_sigma = 0.5 * math.log(math.exp(min(log_var, 0.0)) + self.veps)
        else:
            log_sigma = 0.5 * log_var
        log_den = 2.0 * math.log(math.exp(log_sigma) + self.eps) if self.eps > 0 or log_sigma > -600 \
            else 2.0 * log_sigma
        return math.exp(min(log_var - log_sigma - log_den - math.log(2.0 * self.beta), 700.0)) * (1 + 1e-9)

    def deep_root(self):
        """The root with ``t - t_min`` below ``delta_d = t_min^2/1000`` (masses that may underflow), in
        ``lambda = log(t - t_min)``; None where there is none there (or no epsilon).

        ``H(lambda) = lambda - log beta - L(t_min + e^lambda)`` with ``L = log S`` has the sign of ``h``. Since
        ``dvar/dt = kappa_3(d)/t^2`` with ``|kappa_3| <= var`` (``d`` in [0, 1]), ``|L'(t)| <= 1/t^2``: on
        ``lambda <= log delta_d`` ``H' >= 1 - 1e-3 > 0`` (at most one root) and ``L`` is within
        ``e^lambda / t_min^2`` of ``L(t_min)``. So where ``H(log delta_d) > 0`` there is exactly one root below
        ``delta_d``, and it lies in ``log beta + L(t_min) +- (e^lambda_hi / t_min^2 + pad)``.

        Returns
        -------
        tuple or None
            ``(lam, lam_lo, lam_hi, residual, logx)``: the root, its certified interval in ``lambda``, ``|H|``
            there and the class log-masses; None where ``H(log delta_d) <= 0`` (no such root: the floor of
            :meth:`delta_floor` applies).
        """
        if self.tmin <= 0:
            return None
        delta_d = 1e-3 * self.tmin ** 2
        if not delta_d > 0:
            return None
        L0 = self.log_excess(self.tmin)
        pad = 1e-9 + 1e-12 * abs(L0)                          # log x_c to (d_c/t) 2^-52 <= 1e-12 * (1 + |L0|)
        centre = math.log(self.beta) + L0
        if not math.isfinite(centre) or centre + 1e-3 + pad >= math.log(delta_d):
            return None                                       # the root (if any) is not that deep
        width = 1e-3 + pad
        for _ in range(3):                                    # contract: |L - L0| <= e^lambda_hi / t_min^2
            width = math.exp(min(centre + width, math.log(delta_d))) / self.tmin ** 2 + pad
        lam = centre
        t = self.tmin + math.exp(lam)
        residual = abs(lam - math.log(self.beta) - self.log_excess(t))
        lr = np.log(self.p[1:] / self.p[0]) - self.d[1:] / t
        logx = np.concatenate([[0.0], lr]) - logsumexp(np.concatenate([[0.0], lr]))
        return lam, lam - width, lam + width, residual, logx

    def delta_floor(self) -> tuple[float, str]:
        """A ``delta_1 > 0`` with no root in ``(0, delta_1]`` (0 and a reason where none is found).

        Without epsilons, ``t_1`` of the module doc (``sigma/t <= psi(t) < 1/beta`` below it). With one, a
        root has ``delta = beta S(t) > 0``: ``delta_1 = beta S(t_min)/2``, checked by the enclosure of ``h`` over
        ``[0, delta_1]`` (halved until it is), so a root at masses 1e-100 (``delta`` 1e-50) is above it."""
        if self.tmin <= 0:
            return self._t_floor(), ""
        s0 = float(self._excess(np.array([self._var(self.tmin)]))[0])
        d1 = 0.5 * self.beta * s0
        for _ in range(60):
            if not d1 > 0:
                break
            h, _ = self.enclose(np.array([0.0]), np.array([d1]))
            if h[1][0] < 0:
                return d1, ""
            d1 *= 0.5
        return 0.0, (f"a root may sit below the double range: at t = t_min the variance is {s0 ** 2:.3g} (the "
                     "worse classes' masses underflow)")

    def _var(self, t: float) -> float:
        x = self.x_of_t(np.array([t]))[0]
        return float(x @ (self.u - x @ self.u) ** 2)

    def _t_floor(self) -> float:
        """A ``t1 > 0`` with no root in ``(0, t1]``: ``sigma/t <= psi(t) < 1/beta`` there (module doc)."""
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

    def solve(self, budget: float | None, max_boxes: int = 2_000_000):
        """The roots as ``(t, delta, box, test, residual, x, log x)``, the boxes examined, and why the search is
        not exhaustive ("" when it is). ``box`` is an interval of ``delta``, or of ``log delta`` for the deep root
        (:meth:`deep_root`; its test says so)."""
        t0 = time.perf_counter()
        deep = self.deep_root()
        if deep is not None:
            d1, why = 1e-3 * self.tmin ** 2, ""
        else:
            d1, why = self.delta_floor()
        if not d1 > 0:
            return [], 0, why
        sig_max = math.sqrt(0.25 + self.veps)
        T = self.beta * (sig_max + self.eps) * (1 + 1e-9) + 1e-12
        # subdivide in log delta: roots can sit at temperatures many orders above t_min (or 0)
        edges = np.exp(np.linspace(math.log(d1), math.log(T - self.tmin), 65))
        boxes = np.stack([edges[:-1], edges[1:]], axis=1)
        roots, n_boxes, reason = [], 0, ""
        if deep is not None:
            lam, lo, hi, res, logx = deep
            roots.append((self.tmin + math.exp(lam), math.exp(lam), np.array([[lo, hi]]),
                          f"deep root: log(t - t_min) in the box, the only root below t - t_min = {d1:.3g} "
                          "(|d log S/dt| <= 1/t^2: H increasing there)", res, np.exp(logx), logx))
        while boxes.shape[0]:
            n_boxes += boxes.shape[0]
            if (budget is not None and time.perf_counter() - t0 > budget) or n_boxes > max_boxes:
                reason = f"stopped after {n_boxes} intervals with {boxes.shape[0]} unresolved"
                break
            h, dh = self.enclose(boxes[:, 0], boxes[:, 1])
            boxes = boxes[iv.contains_zero(h)]
            dh = (dh[0][iv.contains_zero(h)], dh[1][iv.contains_zero(h)])
            if not boxes.shape[0]:
                break
            ha, hb = self.h_delta(boxes[:, 0]), self.h_delta(boxes[:, 1])
            x = self.x_of_delta(boxes[:, 1])
            var = np.einsum("bi,bi->b", x, (self.u[None, :] - (x @ self.u)[:, None]) ** 2)
            pad = self.pad(boxes[:, 1], self._excess(var))
            monotone = (dh[0] > 0) | (dh[1] < 0)
            change = ((ha < -pad) & (hb > pad)) | ((ha > pad) & (hb < -pad))
            same = ((ha < -pad) & (hb < -pad)) | ((ha > pad) & (hb > pad))
            cert = monotone & change
            for a, b in boxes[cert]:
                delta = optimize.brentq(lambda s: float(self.h_delta(np.array([s]))[0]), a, b, xtol=1e-15 * b,
                                        rtol=1e-15)
                x = self.x_of_delta(np.array([delta]))[0]
                with np.errstate(divide="ignore"):
                    roots.append((self.tmin + delta, delta, np.array([[a, b]]),
                                  "sign change and h' enclosure excluding 0 (one root)",
                                  float(abs(self.h_delta(np.array([delta]))[0])), x, np.log(x)))
            # monotone with one sign beyond the margin: no root; otherwise bisect (geometric midpoint)
            rest = boxes[~cert & ~(monotone & same)]
            tiny = (rest[:, 1] - rest[:, 0]) < 1e-13 * rest[:, 1]
            if np.any(tiny):
                reason = f"{int(tiny.sum())} temperature intervals unresolved (a degenerate root)"
                rest = rest[~tiny]
            mid = np.sqrt(rest[:, 0] * rest[:, 1])
            boxes = np.concatenate([np.stack([rest[:, 0], mid], 1), np.stack([mid, rest[:, 1]], 1)])
        return roots, n_boxes, reason
