"""Valid but unusual input, checked against computations written from SPEC.md alone (no call into the package
for the expected values); messages checked for what they claim."""

from __future__ import annotations

import argparse
import math

import pytest

from grpo_theory import InvalidInputError, closed_form
from grpo_theory.sweep import check_grid


def _binary_pa(x: float, G: int) -> float:
    """SPEC section 2: ``P_G(a | pi) = E[sqrt((G-1-k)/(k+1))]``, ``k ~ Binomial(G-1, x)``, summed in log space."""
    n = G - 1
    return math.fsum(math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                              + k * math.log(x) + (n - k) * math.log1p(-x)) * math.sqrt((n - k) / (k + 1))
                     for k in range(G))


def test_the_large_group_gap_falls_as_one_over_g():
    """What the refusals of a huge G tell the user: ``P_G`` is ``O(1/G)`` from its limit ``sqrt((1-x)/x)``.

    ``G (P_inf - P_G)`` at ``x = 0.3`` is 0.9102 at ``G = 1000`` and 0.9093 at ``G = 10000`` (flat: O(1/G));
    an O(1/sqrt(G)) gap would make it grow by sqrt(10)."""
    x = 0.3
    limit = math.sqrt((1 - x) / x)
    g1, g2 = (G * (limit - _binary_pa(x, G)) for G in (1000, 10_000))
    assert g2 == pytest.approx(g1, rel=2e-3)
    assert float(closed_form.binary_preference(x, 10_000)[0]) == pytest.approx(_binary_pa(x, 10_000), rel=1e-11)


def _messages():
    from grpo_theory.cli import _group_size

    with pytest.raises(InvalidInputError) as closed:
        closed_form.binary_preference(0.3, 10**8)
    with pytest.raises(argparse.ArgumentTypeError) as shell:
        _group_size("10000000")
    grid = check_grid({"questions": [{"name": "q", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}],
                       "objectives": {"beta": [0.5], "group_size": [10**7]}})
    return [str(closed.value), str(shell.value), " ".join(grid)]


def test_the_refusals_of_a_huge_group_state_the_gap_truly():
    for text in _messages():
        assert "O(1/G)" in text and "sqrt(G)" not in text, text
