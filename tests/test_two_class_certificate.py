"""Two-class roots carry their bracket: the drift changes sign across it (checked on all output logits)."""

from __future__ import annotations

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_points
from grpo_theory.solvers import output_gradient


@pytest.mark.parametrize("obj", [Objective(beta=1.0, group_size=64, penalty="direct"),
                                 Objective(beta=0.5, group_size=2)])
def test_two_class_roots_carry_a_bracket_with_a_sign_change(obj):
    q = Question([0.14, 0.86], rewards=[1, 0])
    pts = stationary_points(q, obj)
    assert pts.exhaustive
    for p in pts:
        if p.boundary:
            continue
        lo, hi = p.certificate.box[0]
        z = np.log(p.pi[0] / p.pi[1])
        assert lo <= z <= hi and "existence" in p.certificate.test
        ends = []
        for t in (lo, hi):                   # the drift g(a) - g(b) from the per-output gradient
            pa = 1.0 / (1.0 + np.exp(-t))
            g = output_gradient(q, obj, np.array([pa, 1 - pa]))
            ends.append(g[0] - g[1])
        assert ends[0] * ends[1] < 0
