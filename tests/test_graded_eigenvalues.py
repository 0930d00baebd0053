"""Block-by-block eigenvalues of a flow's Jacobian ``diag(d) B`` with masses ``d`` spread over hundreds of orders,
against mpmath's eigenvalues of the same matrix at enough digits to see the smallest (an independent path)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from grpo_theory.solvers.graded import graded_eigenvalues


def _mp_eigenvalues(log_d: np.ndarray, B: np.ndarray, dps: int) -> list:
    """Eigenvalues of ``diag(exp(log_d - max)) B`` in mpmath at ``dps`` digits, sorted by modulus, descending."""
    with mp.workdps(dps):
        top = max(log_d)
        M = mp.matrix([[mp.exp(mp.mpf(log_d[i] - top)) * mp.mpf(B[i, j]) for j in range(len(log_d))]
                       for i in range(len(log_d))])
        ev = mp.eig(M, left=False, right=False)
        return sorted((complex(e) if abs(e) > mp.mpf(10) ** -300 else e for e in ev), key=lambda e: -abs(e))


@pytest.mark.parametrize("seed", range(6))
def test_graded_eigenvalues_match_mpmath_down_to_1e_minus_290(seed):
    """Random well-scaled ``B`` (n = 4) with masses 1, 1e-3 (one block with the first), 1e-150 and 1e-290: every
    eigenvalue agrees with mpmath at 700 digits to 1e-6 relative, signs included (a single dense call's
    absolute error is ~1e-16 |J|: whether it resolves 1e-290 depends on LAPACK's balancing, and at seed 7319's
    point it did not)."""
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(4, 4)) - 3 * np.eye(4)
    log_d = np.log([1.0, 1e-3, 1e-150, 1e-290])
    eig, top, singular = graded_eigenvalues(log_d, B)
    ref = _mp_eigenvalues(log_d, B, 700)
    assert not singular
    got = sorted(eig[:2], key=lambda e: -abs(e))
    for g, r in zip(got, ref[:2]):
        assert abs(g - r) <= 1e-6 * abs(r), (g, r)
    for k, scale in ((2, 1e-150), (3, 1e-290)):           # one class per light block: real eigenvalues
        r = float(mp.re(ref[k]) / mp.mpf(scale))
        g = float(eig[k].real) / scale
        assert abs(g - r) <= 1e-6 * abs(r), (k, g, r)
    expected_top_sign = max(float(mp.re(e)) > 0 for e in ref)
    assert (top > 1) == expected_top_sign and abs(top) > 1


def test_a_positive_light_eigenvalue_is_found():
    """The light class's own direction is repelling (its Schur pivot is positive): unstable, whatever its mass."""
    B = np.array([[-1.0, 0.2], [0.1, 0.5]])             # pivot 0.5 - 0.1 * 0.2 / -1 = 0.52 > 0
    eig, top, _ = graded_eigenvalues(np.log([1.0, 1e-200]), B)
    assert top > 1 and eig[1].real > 0


def test_a_singular_heavier_block_leaves_the_lighter_ones_undecided():
    B = np.array([[0.0, 0.0], [0.0, -1.0]])
    _, top, singular = graded_eigenvalues(np.log([1.0, 1e-100]), B)
    assert singular and top <= 1
