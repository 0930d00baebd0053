"""``beta = 0`` with no entropy bonus: a valid, unregularised objective (TRL's default).

Every query for a stationary point refuses it with NoStationaryPolicy from one guard
(``problem.require_regularised``); the finite-time flows run, and are checked here against an independent
computation written from SPEC's definitions: ``P_G`` by enumerating every group ``(o_1, ..., o_G)`` (Eq. 2's
advantage, population std, ``A_i := 0`` when all rewards tie), the flow ``d theta_o/dt = pi(o) (g(o) - E_pi g)``
with ``g = P_G`` (no penalty) integrated by a plain RK4, PPO's clipped surrogate differentiated by hand, and the
binary prompt's ``P_G`` from SPEC's binomial forms.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from grpo_theory import NoStationaryPolicy, Objective, Question, closed_form, dynamics
from grpo_theory.errors import InvalidInputError
from grpo_theory.problem import require_regularised

Q3 = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
R3 = np.array([1.0, 0.5, 0.0])


# ---------------------------------------------------------------- the objective
def test_beta_zero_is_a_valid_unregularised_objective():
    obj = Objective(beta=0, group_size=8)
    assert obj.beta == 0.0 and not obj.regularised
    assert Objective(beta=-0.0).beta == 0.0 and math.copysign(1.0, Objective(beta=-0.0).beta) == 1.0
    assert Objective(beta=0, entropy_coef=0.01).regularised and Objective(beta=1e-300).regularised
    assert obj.describe() == "reverse/scale, G=8, beta=0"


@pytest.mark.parametrize("beta", [-1e-9, -1.0, math.nan, math.inf])
def test_negative_or_non_finite_beta_is_still_invalid(beta):
    with pytest.raises(InvalidInputError, match=r"beta must be a finite number >= 0") as info:
        Objective(beta=beta)
    assert not isinstance(info.value, NoStationaryPolicy)


# ---------------------------------------------------------------- the guard
def _queries():
    from grpo_theory import solvers
    from grpo_theory.predict.response import Response, zero_limit
    from grpo_theory.proximal import map_cycles, map_fixed_points, proximal_map
    from grpo_theory.solvers.certify import certification_scope, certified_stationary_points
    from grpo_theory.solvers.full_space import full_space_stability, logit_newton_step
    from grpo_theory.solvers.full_space_end import full_space_end
    from grpo_theory.solvers.tree import tree_stationary_policy
    from grpo_theory.solvers.tree_search import tree_search
    from grpo_theory.sweep import Case

    q2 = Question([0.3, 0.7], rewards=[1, 0])
    tree = Question([0.5, 0.5], rewards=[1.0, 0.0], answers=[("A", "B"), ("C",)])
    o = Objective(beta=0, group_size=4)
    tok = Objective(beta=0, group_size=4, level="token")
    return {
        "stationary_policy": lambda: solvers.stationary_policy(Q3, o),
        "stationary_policy (fields)": lambda: solvers.stationary_policy(Q3, {"beta": 0}),
        "stationary_points": lambda: solvers.stationary_points(q2, o),
        "stationary_policies": lambda: solvers.stationary_policies([q2, q2], [Objective(beta=1.0), o]),
        "stationary_policy_batch": lambda: solvers.stationary_policy_batch([Q3], [o]),
        "certified_stationary_points": lambda: certified_stationary_points(Q3, o),
        "certification_scope": lambda: certification_scope(Q3, o),
        "tree_stationary_policy": lambda: tree_stationary_policy(tree, tok),
        "tree_search": lambda: tree_search(tree, tok),
        "full_space_end": lambda: full_space_end(Q3, o),
        "full_space_stability": lambda: full_space_stability(Q3, o, [0.2, 0.3, 0.5]),
        "logit_newton_step": lambda: logit_newton_step(Q3, o, [0.2, 0.3, 0.5]),
        "stationarity_residual": lambda: solvers.stationarity_residual(Q3, o, [0.2, 0.3, 0.5]),
        "proximal_map": lambda: proximal_map(q2, o),
        "map_fixed_points": lambda: map_fixed_points(q2, o),
        "map_cycles": lambda: map_cycles(q2, o),
        "basins": lambda: dynamics.basins(q2, o),
        "flow with_points": lambda: dynamics.flow(q2, o, [0.3, 0.7], [0.0, 1.0]),
        "Response": lambda: Response(o),
        "zero_limit": lambda: zero_limit(o),
        "sweep Case": lambda: Case("k", q2, o),
        "may_collapse": lambda: solvers.collapse.may_collapse(o),
        "binary_pairwise": lambda: closed_form.binary_pairwise(0.3, 0.0),
        "binary_large_group": lambda: closed_form.binary_large_group([0.3, 0.5], [0.5, 0.0]),
        "binary_pairwise_direct": lambda: closed_form.binary_pairwise_direct(0.3, 0),
        "binary_shift_direct": lambda: closed_form.binary_shift_direct(0.3, 0.0, 4),
        "binary_pairwise_filtered": lambda: closed_form.binary_pairwise_filtered(0.3, 0.0),
        "binary_rloo": lambda: closed_form.binary_rloo(0.3, 0.0),
        "large_group_direct_h": lambda: closed_form.large_group_direct_h(0.5, 0.3, 0.0),
    }


@pytest.mark.parametrize("name", list(_queries()))
def test_every_stationary_query_refuses_an_unregularised_objective(name):
    with pytest.raises(NoStationaryPolicy) as info:
        _queries()[name]()
    msg = str(info.value)
    assert "is unregularised" in msg and "has no stationary policy" in msg
    assert "finite-time flow" in msg and "predict --measured" in msg      # what to use instead


def test_the_guard_names_the_query_and_passes_regularised_objectives():
    require_regularised(Objective(beta=0.04))
    require_regularised(Objective(beta=0, entropy_coef=0.2))
    require_regularised(np.array([0.5, 2.0]), "beta")
    with pytest.raises(NoStationaryPolicy, match=r"^beta: beta = 0 \(entry 1 of 2\) is unregularised"):
        require_regularised(np.array([0.5, 0.0]), "beta")
    with pytest.raises(NoStationaryPolicy, match=r"^case 'k': the objective reverse/scale, G=4, beta=0 is"):
        _queries()["sweep Case"]()


def test_a_negative_closed_form_beta_is_still_invalid_not_unregularised():
    with pytest.raises(InvalidInputError, match="beta must be positive") as info:
        closed_form.binary_pairwise(0.3, -0.5)
    assert not isinstance(info.value, NoStationaryPolicy)


# ---------------------------------------------------------------- the independent computation (SPEC 1-3)
def _groups(K: int, G: int):
    """Every group ``(o_1..o_G)`` and, per group, ``(1/G) sum_i A_i^+- 1{o_i = o}`` (Eq. 2, population std)."""
    outs = np.array(list(itertools.product(range(K), repeat=G)))
    r = R3[outs]
    dev = r - r.mean(axis=1, keepdims=True)
    sd = r.std(axis=1, keepdims=True)
    A = np.divide(dev, sd, out=np.zeros_like(dev), where=sd > 0)      # A_i := 0 when every reward ties
    onehot = np.eye(K)[outs]                                          # (n, G, K)
    pos = np.einsum("ng,ngk->nk", np.maximum(A, 0), onehot) / G
    neg = np.einsum("ng,ngk->nk", np.minimum(A, 0), onehot) / G
    return outs, pos, neg


def _weights(outs, pi):
    return np.prod(pi[outs], axis=1)


def _expected_parts(outs, pos, neg, pi):
    w = _weights(outs, pi)
    return w @ pos, w @ neg


def _rk4(rhs, y, t0: float, t1: float, h: float):
    """Classical Runge-Kutta from ``t0`` to ``t1`` in steps of at most ``h``."""
    t = t0
    while t < t1 - 1e-12:
        dt = min(h, t1 - t)
        k1 = rhs(y)
        k2 = rhs(y + dt / 2 * k1)
        k3 = rhs(y + dt / 2 * k2)
        k4 = rhs(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return y


def _rk4_flow(pi0, times, G, h=2e-3):
    """``d theta_o/dt = pi(o) (g(o) - E_pi g)``, ``g = P_G``: ``pi(o) g(o) = E[(1/G) sum_i A_i 1{o_i = o}]``."""
    outs, pos, neg = _groups(3, G)
    X = pos + neg

    def rhs(theta):
        pi = np.exp(theta - theta.max())
        pi /= pi.sum()
        w = _weights(outs, pi) @ X
        return w - pi * w.sum()

    theta, t, out = np.log(pi0), 0.0, []
    for target in times:
        theta, t = _rk4(rhs, theta, t, target, h), target
        pi = np.exp(theta - theta.max())
        out.append(pi / pi.sum())
    return np.array(out)


def test_the_flow_at_beta_zero_matches_an_rk4_of_the_enumerated_gradient():
    times = [0.0, 0.5, 2.0, 5.0]
    tr = dynamics.flow(Q3, Objective(beta=0, group_size=4), Q3.pi_ref, times, with_points=False)
    ref = _rk4_flow(Q3.pi_ref, times, 4)
    assert tr.status == "ok" and tr.points is None
    assert np.max(np.abs(tr.pi - ref)) < 1e-7
    assert ref[-1, 0] > 0.7                        # it moved far toward the best answer's vertex


def test_ascent_at_beta_zero_is_euler_on_the_enumerated_gradient():
    outs, pos, neg = _groups(3, 4)
    theta, lr = np.log(Q3.pi_ref), 0.3
    for _ in range(40):
        pi = np.exp(theta - theta.max())
        pi /= pi.sum()
        w = _weights(outs, pi) @ (pos + neg)
        theta = theta + lr * (w - pi * w.sum())
    pi = np.exp(theta - theta.max())
    tr = dynamics.ascent(Q3, Objective(beta=0, group_size=4), Q3.pi_ref, lr=lr, steps=40, with_points=False)
    assert np.max(np.abs(tr.final - pi / pi.sum())) < 1e-12


def _ppo_batches(pi0, G, lr, n_batches, inner, eps):
    """GRPO with exact expectations over groups, PPO's clip differentiated from its definition: for ``A > 0``
    ``min(rho A, clip(rho) A) = A min(rho, 1 + eps)`` (gradient ``A grad rho`` while ``rho <= 1 + eps``), for
    ``A < 0`` it is ``A max(rho, 1 - eps)`` (while ``rho >= 1 - eps``); ``grad_theta rho_o = rho_o (e_o - pi)``."""
    outs, pos, neg = _groups(3, G)
    theta = np.log(pi0)
    for _ in range(n_batches):
        pi_old = np.exp(theta - theta.max())
        pi_old /= pi_old.sum()
        ep, en = _expected_parts(outs, pos, neg, pi_old)
        for _ in range(inner):
            pi = np.exp(theta - theta.max())
            pi /= pi.sum()
            rho = pi / pi_old
            c = ep * (rho <= 1 + eps) + en * (rho >= 1 - eps)
            grad = c * rho - pi * np.sum(c * rho)
            theta = theta + lr * grad
    pi = np.exp(theta - theta.max())
    return pi / pi.sum()


@pytest.mark.parametrize("inner, lr", [(1, 0.4), (4, 0.8)])
def test_grpo_steps_exact_at_beta_zero_match_the_clipped_surrogate_by_enumeration(inner, lr):
    obj = Objective(beta=0, group_size=4)
    tr = dynamics.grpo_steps(Q3, obj, Q3.pi_ref, lr=lr, n_batches=6, inner_updates=inner, with_points=False)
    ref = _ppo_batches(Q3.pi_ref, 4, lr, 6, inner, 0.2)
    assert tr.status == "ok"
    assert np.max(np.abs(tr.final - ref)) < 1e-12
    if inner > 1:       # the clip bound on this path (else the test would not tell clipping from none)
        assert np.max(np.abs(ref - _ppo_batches(Q3.pi_ref, 4, lr, 6, inner, math.inf))) > 1e-3


def test_grpo_steps_monte_carlo_at_beta_zero_agree_with_the_enumerated_mean_within_its_error():
    """One batch, one step: the sampled gradient is the mean over groups of ``X = (1/G) sum_i A_i (e_{o_i} - pi)``;
    its standard error from the enumerated per-group variance bounds the distance to the exact step."""
    G, n, lr = 4, 20_000, 1.0
    outs, pos, neg = _groups(3, G)
    pi = Q3.pi_ref
    w = _weights(outs, pi)
    X = pos + neg                                   # sum_o X_o = 0: the centring by pi cancels
    mean = w @ X
    se = np.sqrt((w @ (X - mean) ** 2) / n)
    tr = dynamics.grpo_steps(Q3, Objective(beta=0, group_size=G), pi, lr=lr, n_batches=1, n_groups=n, seed=3,
                             with_points=False)
    theta_exact = np.log(pi) + lr * mean
    theta_mc = np.log(tr.final)
    shift = theta_mc - theta_exact
    shift -= shift.mean()                          # logits are defined up to a constant
    assert np.all(np.abs(shift) < 2 * 4 * lr * se.max())      # 4 SE a component, doubled by the centring
    assert np.max(np.abs(lr * mean)) > 20 * lr * se.max()     # the step is resolved, not noise


# ---------------------------------------------------------------- predict's field (binary prompt)
def _binary_P(x: float, G: int) -> tuple[float, float]:
    """SPEC 2: ``P_G(a) = E sqrt((G-1-k)/(k+1))``, ``P_G(b) = -E sqrt(k/(G-k))``, ``k ~ Bin(G-1, x)``."""
    k = np.arange(G)
    pmf = np.array([math.comb(G - 1, int(j)) * x ** j * (1 - x) ** (G - 1 - j) for j in k])
    return float(pmf @ np.sqrt((G - 1 - k) / (k + 1))), float(-(pmf @ np.sqrt(k / (G - k))))


def test_predict_field_at_beta_zero_is_the_binomial_update():
    from grpo_theory.predict.field import PromptField

    G = 8
    f = PromptField(Objective(beta=0, group_size=G), [0.05, 0.6])
    for z in (-4.0, -0.7, 0.0, 1.3, 5.0):
        x = 1 / (1 + math.exp(-z))
        pa, pb = _binary_P(x, G)
        want = 2 * x * (1 - x) * (pa - pb)          # dz/dt for z = theta_a - theta_b
        got = f.h(np.array([z, z]))
        assert np.all(np.abs(got - want) < 1e-7), (z, got, want)


def _rk4_binary(p0: float, t_end: float, G: int, h: float = 1e-2) -> float:
    """P(correct) at flow time ``t_end`` from ``p0``: ``dz/dt = 2 x (1 - x) (P_G(a) - P_G(b))``, ``z = logit x``."""
    def rhs(z):
        x = 1 / (1 + math.exp(-z))
        pa, pb = _binary_P(x, G)
        return 2 * x * (1 - x) * (pa - pb)

    z = _rk4(rhs, math.log(p0 / (1 - p0)), 0.0, t_end, h)
    return 1 / (1 + math.exp(-z))


def test_predict_flow_table_at_beta_zero_follows_the_binomial_flow():
    from grpo_theory.predict.clock import flow_table

    G, p0 = 8, 0.1
    tab = flow_table([p0], Objective(beta=0, group_size=G), t_max=50.0, n_times=400)
    checks = {target: _rk4_binary(p0, target, G) for target in (1.0, 4.0, 10.0)}
    for target, want in checks.items():
        got = float(tab.at(np.array([p0]), target)[0])
        assert abs(got - want) < 1e-5, (target, got, want)
    assert 0.1 < checks[1.0] < checks[4.0] < checks[10.0] and checks[10.0] > 0.95    # on its way to the vertex 1
