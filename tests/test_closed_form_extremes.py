"""Closed forms against mpmath over extreme grids (issue 25).

The reference solves each defining equation at 340 digits (mpmath bisection on log x, or the
defining logistic relation), not the library's rearranged formulas.
"""

import itertools
import warnings

import mpmath as mp
import numpy as np
import pytest

from grpo_theory import closed_form

PS = [1e-300, 1e-12, 0.3, 0.5, 1 - 1e-12]
BETAS = [1e-300, 1e-200, 1e-12, 0.5, 1.0, 2.0, 1e12, 1e200, 1e300]
GAMMAS = [1e-300, 1e-10, 0.5, 1.0]


def _bisect(f, p):
    """The root in [p, 1] of f (f(p) >= 0 >= f(1)), by bisection on log x at 340 digits.

    340 digits: x and p can differ by 300 orders of magnitude."""
    with mp.workdps(340):
        lo, hi = mp.log(mp.mpf(p)), mp.mpf(0)
        if f(mp.mpf(p)) <= 0:
            return mp.mpf(p)
        for _ in range(90):          # log x in [-691, 0]: 691 / 2^90 < 1e-24
            mid = (lo + hi) / 2
            if f(mp.exp(mid)) > 0:
                lo = mid
            else:
                hi = mid
        return mp.exp((lo + hi) / 2)


def _eq14(p, beta, gamma):
    """Eq. 14's defining equation gamma x (1 - x) = beta (x - p), its root in [p, 1]."""
    p, beta, gamma = mp.mpf(p), mp.mpf(beta), mp.mpf(gamma)
    return _bisect(lambda x: gamma * x * (1 - x) - beta * (x - p), p)


def _eq15(p, beta):
    """Eq. 15's defining equation beta (x - p) = sqrt(x (1 - x)), its root in [p, 1]."""
    p, beta = mp.mpf(p), mp.mpf(beta)
    return _bisect(lambda x: mp.sqrt(x * (1 - x)) - beta * (x - p), p)


def _direct(p, beta, gamma):
    # x / (1 - x) = p / (1 - p) exp(gamma / beta)
    with mp.workdps(60):
        odds = mp.mpf(p) / (1 - mp.mpf(p)) * mp.exp(mp.mpf(gamma) / mp.mpf(beta))
        return odds / (1 + odds)


def _rel(x, ref):
    return float(abs(mp.mpf(float(x)) - ref) / ref) if ref != 0 else abs(float(x))


@pytest.mark.parametrize("p,beta,gamma", list(itertools.product(PS, BETAS, GAMMAS)))
def test_pairwise_and_direct_match_mpmath(p, beta, gamma):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no overflow warning either
        x = float(closed_form.binary_pairwise(p, beta, gamma))
        xd = float(closed_form.binary_pairwise_direct(p, beta, gamma))
    assert _rel(x, _eq14(p, beta, gamma)) < 1e-12, (x, _eq14(p, beta, gamma))
    assert _rel(xd, _direct(p, beta, gamma)) < 1e-12


@pytest.mark.parametrize("p,beta", list(itertools.product(PS, BETAS)))
def test_large_group_matches_mpmath(p, beta):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = float(closed_form.binary_large_group(p, beta))
        t = float(closed_form.large_group_direct_turning_point(beta))
    assert _rel(x, _eq15(p, beta)) < 1e-12
    with mp.workdps(60):
        ref_t = (1 + mp.sqrt(1 - 1 / (1 + mp.mpf(beta) ** 2))) / 2
    assert _rel(t, ref_t) < 1e-14


def test_issue25_cases():
    assert float(closed_form.binary_pairwise(0.3, 1e300)) == pytest.approx(0.3, rel=1e-12)
    assert float(closed_form.binary_pairwise(0.3, 0.5, gamma=1e-300)) == pytest.approx(0.3, rel=1e-12)
    assert float(closed_form.binary_large_group(0.3, 1e200)) == pytest.approx(0.3, rel=1e-12)
    assert float(closed_form.binary_pairwise(0.3, 0.5, gamma=5e-324)) == pytest.approx(0.3, rel=1e-12)


def test_shift_direct_extremes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p, beta, g in itertools.product(PS, BETAS, [2, 8, np.inf]):
            x = float(closed_form.binary_shift_direct(p, beta, g))
            gg = mp.mpf(1) if np.isinf(g) else (mp.mpf(g) - 1) / g
            with mp.workdps(60):
                odds = mp.mpf(p) / (1 - mp.mpf(p)) * mp.exp(gg / mp.mpf(beta))
                ref = odds / (1 + odds)
            assert _rel(x, ref) < 1e-12, (p, beta, g)


def test_messages_print_numbers_plainly():
    with pytest.raises(ValueError, match=r"got -1.4$"):
        closed_form.binary_pairwise(0.3, np.float64(-1.4))
