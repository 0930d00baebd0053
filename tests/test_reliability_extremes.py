"""Extreme inputs give a checked answer, an honest flag or a clear error (docs/reliability.md, "Extreme inputs").

Masses of 1e-300 and 1 - 1e-12 in pi_ref, over betas from 1e-4 to 1e4, G from 2 to 10^6 and inf, both penalties
and both normalisations: a converged interior point's residual is recomputed on the independent path of
tests/fuzz_cases.py. (Apart from tests/test_reliability.py, which runs the random sample: pytest-xdist runs a
file on one worker, and the two halves cost about the same.)
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from fuzz_cases import independent_residual

from grpo_theory import ExactEvaluationTooLarge, InvalidInputError, Objective, Question, stationary_policy
from grpo_theory.solvers import RESIDUAL_TOL


def _extreme_questions():
    return {
        "binary, pi_ref(a) = 1e-300": Question([1e-300, 1.0 - 1e-300], rewards=[1.0, 0.0]),
        "binary, pi_ref(a) = 1 - 1e-12": Question([1.0 - 1e-12, 1e-12], rewards=[1.0, 0.0]),
        "three outputs, one of mass 1e-300": Question([1e-300, 0.5, 0.5 - 1e-300], rewards=[1.0, 0.5, 0.0]),
        "noisy, two levels, one of mass 1e-300": Question([1e-300, 0.4, 0.6 - 1e-300], reward_levels=[0, 1],
                                                          reward_probs=[[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]]),
    }


EXTREME_BETAS = (1e-4, 1e-2, 1.0, 1e4)
EXTREME_G = (2, 8, 1000, 10**6, math.inf)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", list(_extreme_questions()))
def test_extreme_inputs_give_a_checked_answer_a_flag_or_a_clear_error(name):
    q = _extreme_questions()[name]
    problems = []
    for beta, G, pen, norm in itertools.product(EXTREME_BETAS, EXTREME_G, ("reverse", "direct"), ("scale", "shift")):
        obj = Objective(beta=beta, group_size=G, penalty=pen, normalization=norm)
        with warnings.catch_warnings():
            warnings.simplefilter("error")            # a numpy warning is a silent NaN in the making
            try:
                sol = stationary_policy(q, obj)
            except (InvalidInputError, ExactEvaluationTooLarge):
                continue                              # e.g. ExactEvaluationTooLarge: clear, and allowed
        if not (np.all(np.isfinite(sol.pi)) and abs(sol.pi.sum() - 1) < 1e-9):
            problems.append((obj.describe(), "not a distribution", sol.pi))
        elif sol.converged and not sol.boundary:
            if not sol.residual <= RESIDUAL_TOL:
                problems.append((obj.describe(), "converged above tolerance", sol.residual))
            res, tol = independent_residual(q, obj, sol.pi, np.random.default_rng(0))
            if not res <= tol:
                problems.append((obj.describe(), "independent residual", res, tol))
        elif not sol.converged and not sol.message:
            problems.append((obj.describe(), "flagged without a reason"))
    assert not problems, problems[:5]
