"""The sweep before the sixteenth round (docs/reliability.md): numbers the earlier sweeps checked least, against
expected values written from the maths (Eq. 5's fixed point), not from the code."""

import math

import numpy as np
import pytest

from grpo_theory import Question, nash_equilibrium

#: A preference matrix (M + M^T = 1) with no Condorcet winner among its first three outputs.
_M = [[0.5, 0.9, 0.2, 0.7], [0.1, 0.5, 0.6, 0.3], [0.8, 0.4, 0.5, 0.9], [0.3, 0.7, 0.1, 0.5]]


def _log_odds_gap(q, beta, pi):
    """Eq. 5: ``log(pi/pi_ref) - (M pi)/beta`` is one constant over the outputs; its spread over the masses a double
    holds."""
    m = q.pairwise_preference()
    held = pi > 1e-300
    u = (np.log(pi[held]) - np.log(q.pi_ref[held]) - (m @ pi)[held] / beta)
    return float(u.max() - u.min())


def test_nash_small_masses_have_their_own_relative_precision():
    """Near the best answer's vertex (beta about 1e-3) every other mass is
    ``pi_ref(o)/pi_ref(best) e^{(M[o, best] - 1/2)/beta}`` up to terms of relative size 1e-109 and below: 4.19e-163
    for output 1 at beta = 1.3557e-3 (given to 17 digits). hybr stopped short there ("not making good progress"), its absolute residual
    passed, and that mass came back as 2.8e-35 with ``converged=True``."""
    pi_ref = np.array([0.00125606, 0.00251035, 0.40142152, 0.58421966, 0.01059241])
    q = Question(pi_ref, rewards=[0, 1, 2, 0, 0])
    for beta in (0.0013556969394245845, 1e-3):
        eq = nash_equilibrium(q, beta)
        assert eq.converged
        expect = pi_ref / pi_ref[2] * math.exp(-0.5 / beta)
        for o in (0, 1, 3, 4):
            assert abs(math.log(eq.pi[o] / expect[o])) < 1e-9, (beta, o, eq.pi)


@pytest.mark.parametrize("pi_ref,beta", [([0.001, 0.003, 0.4, 0.596], 2e-3),
                                         ([1e-6, 0.3, 0.3, 0.399999], 7e-4),
                                         pytest.param([1e-6, 0.3, 0.3, 0.399999], 5e-4, marks=pytest.mark.slow)])
def test_nash_on_a_preference_matrix_solves_eq5_in_every_mass(pi_ref, beta):
    """hybr stalled (the first two) or needed the damped fixed point (the third, whose loop stopped on the absolute
    residual with the light answer's log-odds halfway): the light mass (1e-31 to 1e-127) was off by hundreds of
    nats, with ``converged=True``."""
    q = Question(pi_ref, preference=_M)
    eq = nash_equilibrium(q, beta)
    assert eq.converged
    assert eq.pi.min() > 0
    assert _log_odds_gap(q, beta, eq.pi) < 1e-8


def test_check_trajectories_takes_a_1d_se_with_1d_values():
    """``values`` of shape (n,) with ``se`` of shape (n,), "broadcastable to values" as documented, was refused
    ("se of shape (200,) does not broadcast to the shape of values, (200, 1)"); it is the same call as the (n, 1)
    form."""
    from grpo_theory.convergence import check_trajectories

    rng = np.random.default_rng(0)
    steps = np.arange(1, 201)
    values = 0.5 + rng.normal(0, 0.02, steps.size)
    one = check_trajectories(steps, values, se=np.full(steps.size, 0.02))
    two = check_trajectories(steps, values[:, None], se=np.full((steps.size, 1), 0.02))
    assert list(one.status) == list(two.status)
    assert np.array_equal(one.drift, two.drift, equal_nan=True)


@pytest.mark.parametrize("pi", [[1.0], [0.2, 0.3, 0.5]])
def test_nash_residual_refuses_a_policy_of_another_length_by_name(pi):
    """The sixteenth audit's first run: ``nash_residual`` with ``pi`` of the wrong length raised NumPy's matmul
    ValueError; like ``reward_preference`` and ``stationarity_residual`` it names ``pi``, K and the length."""
    from grpo_theory import InvalidInputError
    from grpo_theory.solvers import nash_residual

    with pytest.raises(InvalidInputError, match=rf"pi must have K=2 entries .*, got {len(pi)}"):
        nash_residual(Question([0.3, 0.7], rewards=[1, 0]), 0.5, pi)
