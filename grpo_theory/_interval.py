"""A minimal vectorised interval arithmetic for the certified solvers.

An interval is a pair ``(lo, hi)`` of numpy arrays of the same shape. The operations are the
natural extensions (each result contains every value of the operation over the operands). They
round to nearest, not outward: :func:`widen` pads a result by a relative and absolute margin, which
the certified solver applies to every enclosure it compares with 0 (the margin is far above the
rounding error of the few operations involved).
"""

from __future__ import annotations

import numpy as np

__all__ = ["add", "sub", "mul", "div", "scale", "iexp", "ilog", "isqrt", "widen", "contains_zero", "matmul"]


def add(a, b):
    return a[0] + b[0], a[1] + b[1]


def sub(a, b):
    return a[0] - b[1], a[1] - b[0]


def mul(a, b):
    with np.errstate(invalid="ignore", over="ignore"):            # an overflow is an infinite bound, as meant
        p = np.stack([a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]])
    p = np.where(np.isnan(p), 0.0, p)               # 0 * inf from a degenerate operand: the product is 0
    return p.min(axis=0), p.max(axis=0)


def div(a, b):
    """``a / b``; where ``b`` contains 0 the result is ``(-inf, inf)``."""
    lo_b, hi_b = b
    safe = (lo_b > 0) | (hi_b < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = (np.where(safe, 1.0 / np.where(safe, hi_b, 1.0), -np.inf),
               np.where(safe, 1.0 / np.where(safe, lo_b, 1.0), np.inf))
    out = mul(a, inv)
    return np.where(safe, out[0], -np.inf), np.where(safe, out[1], np.inf)


def scale(c, a):
    """``c * a`` for a point ``c`` (array or scalar)."""
    x, y = c * a[0], c * a[1]
    return np.minimum(x, y), np.maximum(x, y)


def iexp(a):
    with np.errstate(over="ignore"):
        return np.exp(a[0]), np.exp(a[1])


def ilog(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.maximum(a[0], 0.0)), np.log(np.maximum(a[1], 0.0))


def isqrt(a):
    return np.sqrt(np.maximum(a[0], 0.0)), np.sqrt(np.maximum(a[1], 0.0))


def widen(a, rel: float = 1e-12, absolute: float = 1e-13):
    """Pad ``a`` outward by ``rel * |value| + absolute`` (the rounding margin)."""
    with np.errstate(invalid="ignore"):
        pad_lo = rel * np.abs(a[0]) + absolute
        pad_hi = rel * np.abs(a[1]) + absolute
        return a[0] - pad_lo, a[1] + pad_hi


def contains_zero(a) -> np.ndarray:
    return (a[0] <= 0.0) & (a[1] >= 0.0)


def matmul(A, B):
    """Interval matrix product (B, n, m) x (B, m, p) in midpoint-radius form (an enclosure).

    An infinite bound in ``A`` or ``B`` (an overflow at an extreme beta) has no midpoint; every entry it
    reaches is returned as ``(-inf, inf)``, the enclosure that holds whatever the product is.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        Ac, Ar = 0.5 * (A[0] + A[1]), 0.5 * (A[1] - A[0])
        Bc, Br = 0.5 * (B[0] + B[1]), 0.5 * (B[1] - B[0])
        c = Ac @ Bc
        r = np.abs(Ac) @ Br + Ar @ np.abs(Bc) + Ar @ Br
        lo, hi = c - r, c + r
    unknown = np.isnan(lo) | np.isnan(hi)
    return np.where(unknown, -np.inf, lo), np.where(unknown, np.inf, hi)
