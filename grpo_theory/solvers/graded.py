"""Eigenvalue signs of a flow's Jacobian whose rows are scaled by masses spread over hundreds of orders.

Near a face or a vertex the class flow's Jacobian is ``J = diag(d) B`` with ``B`` well scaled and ``d`` the class
masses (relative to the heaviest), which can span 1 down to 1e-300. A dense eigenvalue routine on ``J`` has
absolute errors ~ ``eps |J|``, so an eigenvalue ~ ``d_c B_cc`` of a class of mass 1e-182 drowns in noise of
1e-152 and its sign is decided by rounding (reliability seed 7319). Graded matrices have accurate eigenvalues
by blocks instead: order the classes by mass, cut where consecutive masses are more than :data:`GAP` apart,
and for each block ``I`` below the heavier classes ``P``

    ``diag(d_I) S_I``,  ``S_I = B_II - B_IP B_PP^{-1} B_PI``  (the Schur complement of the heavier block)

has the block's eigenvalues up to a relative error of order ``max d_I / min d_P <= GAP`` (block elimination
of ``J - lambda I`` with ``|lambda| ~ d_I << d_P``). Each block's signs are decided against its own scale.
"""

from __future__ import annotations

import math

import numpy as np

#: Consecutive masses (sorted) further apart than this ratio start a new block.
GAP = 1e-8


def graded_eigenvalues(log_d: np.ndarray, B: np.ndarray, *, rel_tol: float = 1e-7
                       ) -> tuple[np.ndarray, float, bool]:
    """Eigenvalues of ``diag(exp(log_d)) B`` block by block, and the sign of the largest real part, scaled.

    Parameters
    ----------
    log_d : numpy.ndarray, shape (n,)
        Logs of the row scales (masses relative to the heaviest; any common offset is allowed: the
        eigenvalues are returned for ``exp(log_d - max(log_d))``).
    B : numpy.ndarray, shape (n, n)
        The well-scaled factor.
    rel_tol : float, default 1e-7
        A block's eigenvalue whose real part is within ``rel_tol * min(d_I) * max(1, |S_I|)`` of 0
        (relative to the block's scale) is undecided.

    Returns
    -------
    eigenvalues : numpy.ndarray, shape (n,)
        Complex in general, in the classes' mass order (heaviest block first), scaled by
        ``exp(log_d - max(log_d))`` (entries may underflow to 0; their signs were decided before).
    top : float
        The largest over blocks of ``max Re(block eigenvalue) / block tolerance``: below -1 every
        eigenvalue is negative, above 1 one is positive, in between undecided.
    singular : bool
        True when a heavier block's ``B_PP`` is (numerically) singular, so the lighter blocks' values
        could not be separated (then ``top`` covers the blocks decided so far and the caller should
        treat the verdict as undecided unless it is already positive).

    Examples
    --------
    A mass of 1e-200 next to a mass of 1: the light class's eigenvalue keeps its sign and size.

    >>> B = np.array([[-1.0, 0.5], [0.3, -2.0]])
    >>> eig, top, singular = graded_eigenvalues(np.log([1.0, 1e-200]), B)
    >>> bool(top < -1), singular
    (True, False)
    >>> round(float(eig[1].real / 1e-200), 12)  # d_2 (B_22 - B_21 B_11^-1 B_12) = 1e-200 (-2 + 0.15)
    -1.85
    """
    log_d = np.asarray(log_d, dtype=float)
    n = log_d.size
    order = np.argsort(-log_d, kind="stable")
    ls = log_d[order] - float(log_d.max())
    Bs = np.asarray(B)[np.ix_(order, order)]
    cuts = np.flatnonzero(np.diff(ls) < math.log(GAP)) + 1
    blocks = np.split(np.arange(n), cuts)
    eigs: list[np.ndarray] = []
    top = -math.inf
    for k, I in enumerate(blocks):
        P = np.arange(I[0])
        S = Bs[np.ix_(I, I)]
        if P.size:
            BPP = Bs[np.ix_(P, P)]
            if np.linalg.cond(BPP) > 1e12:
                eigs.append(np.zeros(n - I[0], dtype=complex))
                return np.concatenate(eigs), top, True
            S = S - Bs[np.ix_(I, P)] @ np.linalg.solve(BPP, Bs[np.ix_(P, I)])
        lead = float(ls[I[0]])
        d = np.exp(ls[I] - lead)                      # within the block: >= GAP^(|I|-1), no underflow in practice
        e = np.linalg.eigvals(d[:, None] * S)
        tol = rel_tol * float(d.min()) * max(1.0, float(np.abs(S).max()))
        top = max(top, float(np.max(e.real)) / tol)
        with np.errstate(under="ignore"):
            eigs.append(e * math.exp(lead) if lead > -745 else e * 0.0)
    return np.concatenate(eigs), top, False
