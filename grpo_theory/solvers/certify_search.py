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
    """The direct penalty at G = inf with scale normalisation: roots of ``h(t) = t/beta - eps - sigma(t)``."""

    def __init__(self, cls: Classes, obj: Objective) -> None:
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

    def solve(self, budget: float | None, max_boxes: int = 2_000_000):
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
            if (budget is not None and time.perf_counter() - t0 > budget) or n_boxes > max_boxes:
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
