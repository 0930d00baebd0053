"""At a huge beta the stationary point is pi_ref to double precision (the penalty's curvature beta dominates every
advantage, the entropy bonus and the clamps, which do not bind there), also with the GRPO family's options; at a
tiny beta NumPy's floating-point warnings stay inside the solvers. Expected values: pi_ref itself (the closed form
pi(o) = pi_ref(o) / (1 - (P_G(o) - E P_G)/beta) with |P_G| <= 2 and beta >= 1e20 moves pi by less than 1e-19)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from grpo_theory import Objective, Question, stationary_policy
from grpo_theory.errors import ExactEvaluationTooLarge

Q3 = Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0])


@pytest.mark.parametrize("beta", [1e20, 1e150, 1.7e308])
@pytest.mark.parametrize("options", [dict(entropy_coef=0.01), dict(advantage="rloo"),
                                     dict(kl_estimator="k3", kl_log_ratio_clamp=20, kl_value_clamp=10)],
                         ids=["entropy", "rloo", "clamped-k3"])
def test_a_huge_beta_with_family_options_gives_pi_ref(beta, options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = stationary_policy(Q3, Objective(beta=beta, group_size=4, **options))
    assert sol.converged and sol.stable and not sol.boundary
    np.testing.assert_allclose(sol.pi, Q3.pi_ref, rtol=1e-15, atol=0)


def test_a_subnormal_beta_lets_no_numpy_warning_through():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                Objective(beta=5e-324, group_size=4, penalty="direct"))
    assert sol.pi[0] == 1.0                         # beta -> 0: all mass on the better answer (the flow's limit)


def test_too_large_an_exact_evaluation_advises_what_the_caller_can_do():
    with pytest.raises(ExactEvaluationTooLarge, match=r"group_size=math\.inf .* O\(1/G\)") as info:
        stationary_policy(Q3, Objective(beta=0.5, group_size=10**7))
    assert "raise the limit" not in str(info.value)


@pytest.mark.parametrize("args, named", [((0.0, 1.0, -1.0, 5), "lo < hi"), ((0.0, -1.0, 1.0, 1), "n must"),
                                         ((0.0, -1.0, 1.0, 0), "n must"), ((0.0, -1.0, 1.0, 2.5), "n must"),
                                         ((0.0, -1.0, 1.0, 10**12), "n must"), ((float("nan"), -1.0, 1.0, 5), "center"),
                                         ((0.0, -1.0, float("inf"), 5), "hi must"), ((0.0, -1.0, 1.0, 5, 0.0), "scale")])
def test_sinh_grid_refuses_what_is_not_a_grid_naming_the_argument(args, named):
    from grpo_theory import InvalidInputError
    from grpo_theory.solvers import sinh_grid

    with pytest.raises(InvalidInputError, match=named):
        sinh_grid(*args)
