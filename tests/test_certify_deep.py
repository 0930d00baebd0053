"""Certified sets at G = inf, direct penalty, scale with std_eps: roots next to the vertex, found in log coordinates.

With an epsilon the tilt ``pi ∝ pi_ref exp(r / T)`` has a root at ``T`` just above ``T_min = beta eps`` (reward
units) whose worse answers' masses are ``exp(-(gap)/T_min)``: 1e-100, or exp(-2501), below the double range.
``t - t_min`` is then 1e-51 or exp(-1250), below what ``t`` resolves; the search works in ``log(t - t_min)``
there. Expected values come from mpmath at 80 to 1,500 digits, from the definitions (never from the library):
``h(T) = T/beta - eps - sigma_pi(T)``, ``pi_o ∝ pi_ref_o exp((r_o - r_max)/T)``.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _independent import mp_flow_jacobian

from grpo_theory import Objective, Question, stationary_points


def _tilt(pi_ref, rewards, beta, eps):
    """``pi(T)`` and ``h(T)`` in mpmath (the current precision), parameters taken as the doubles given."""
    p, r = [mp.mpf(x) for x in pi_ref], [mp.mpf(x) for x in rewards]
    beta, eps, top = mp.mpf(beta), mp.mpf(eps), max(mp.mpf(x) for x in rewards)

    def log_pi(T):
        lg = [mp.log(a) + (b - top) / T for a, b in zip(p, r)]
        m = max(lg)
        z = m + mp.log(sum(mp.e ** (a - m) for a in lg))
        return [a - z for a in lg]

    def h(T):
        x = [mp.e ** a for a in log_pi(T)]
        mean = sum(a * b for a, b in zip(x, r))
        return T / beta - eps - mp.sqrt(sum(a * (b - mean) ** 2 for a, b in zip(x, r)))

    return log_pi, h, beta * eps


def _deep_root(pi_ref, rewards, beta, eps, dps):
    """The root just above T_min: ``delta = beta sigma(T_min + delta)`` by fixed-point iteration (sigma barely
    moves over delta), in mpmath at ``dps`` digits; returns ``log delta`` and the log-masses."""
    with mp.workdps(dps):
        log_pi, h, tmin = _tilt(pi_ref, rewards, beta, eps)
        delta = mp.mpf(0)
        for _ in range(20):                       # delta <- beta sigma(T_min + delta) = delta - beta h(T_min + delta)
            delta = delta - mp.mpf(beta) * h(tmin + delta)
        assert delta > 0 and abs(h(tmin + delta)) < delta * mp.mpf(10) ** -30
        return float(mp.log(delta)), [float(a) for a in log_pi(tmin + delta)]


def _interior_roots(pi_ref, rewards, beta, eps):
    """Sign changes of h on a log grid of T - T_min in [1e-12, 1] (80 digits), refined: the other roots."""
    with mp.workdps(80):
        log_pi, h, tmin = _tilt(pi_ref, rewards, beta, eps)
        grid = [tmin + mp.mpf(10) ** (k / 20) for k in range(-240, 1)]
        vals = [h(T) for T in grid]
        out = []
        for a, b, ha, hb in zip(grid, grid[1:], vals, vals[1:]):
            if (ha > 0) != (hb > 0):
                T = mp.findroot(h, (a, b), solver="anderson")
                out.append([float(mp.e ** x) for x in log_pi(T)])
        return out


MISSED = ([0.81935, 0.13036, 0.05029], [0.82, 0.819, 0.855], 1.51137)
THREE = ([0.6, 0.2, 0.2], [1, 0.5, 0], 2.0)


def test_missed_root_at_masses_1e_100_is_certified_and_stable():
    """The set used to hold two points and say exhaustive=True, multistable=False: the stable root at
    (4.4e-100, 9.3e-104, 1) was missed. mpmath at 80 digits: delta = t - t_min = 1.1e-51 (reward units)."""
    pi_ref, rewards, beta = MISSED
    pts = stationary_points(Question(pi_ref, rewards=rewards),
                            Objective(beta=beta, group_size=math.inf, penalty="direct", std_eps=1e-4))
    log_delta, log_x = _deep_root(pi_ref, rewards, beta, 1e-4, 80)
    assert pts.exhaustive and len(pts.points) == 3 and pts.multistable
    deep = min(pts.points, key=lambda p: p.pi[0])
    assert deep.stable is True and not deep.boundary
    np.testing.assert_allclose(np.log(deep.pi), log_x, rtol=1e-9)                  # 4.35e-100, 9.27e-104, 1
    span = max(rewards) - min(rewards)
    lo, hi = deep.certificate.box[0]
    assert lo <= log_delta - math.log(span) <= hi                                     # the certified interval
    for expected in _interior_roots(pi_ref, rewards, beta, 1e-4):
        assert min(np.abs(p.pi - expected).max() for p in pts.points) < 1e-8


@pytest.mark.parametrize("eps", [0.0, 1e-4, 1e-2])
def test_three_points_whatever_the_epsilon(eps):
    """pi_ref (0.6, 0.2, 0.2), rewards (1, 0.5, 0), beta 2: three points with std_eps 0 (a limit vertex), 1e-2
    and 1e-4; std_eps 1e-4 used to give one point and exhaustive=False. Its third is an interior root with masses
    exp(-2501.1), exp(-5001.1) (mpmath at 1,500 digits): pi shows (1, 0, 0), the certificate's box holds
    log(t - t_min) = -1250.55, and it is stable (the stability bound: its Jacobian is -beta diag(pi) to within
    a rank-one term of relative size exp(-1250)), so the set is multistable for each epsilon.

    The set is exactly the independent one: the roots of h found by sign changes on the grid of T - T_min in
    [1e-12, 1] (mpmath, 80 digits; two for std_eps 0 and 1e-4, three for 1e-2), the deep root for 1e-4, and for
    std_eps 0 the vertex (1, 0, 0) as a limit: from (0.99, 0.008, 0.002) the flow on all output logits (the field
    written from the definitions, tests/_full_space_flow.py) runs into it (worse masses 1e-16 at t = 1e8, falling
    like t^-2), while from (0.95, 0.043, 0.007) it ends at the stable root (0.881, 0.091, 0.028)."""
    from _full_space_flow import flow_end, gradient

    pi_ref, rewards, beta = THREE
    pts = stationary_points(Question(pi_ref, rewards=rewards),
                            Objective(beta=beta, group_size=math.inf, penalty="direct", std_eps=eps))
    assert pts.exhaustive and len(pts.points) == 3
    expected = _interior_roots(pi_ref, rewards, beta, eps)
    assert len(expected) == {0.0: 2, 1e-4: 2, 1e-2: 3}[eps]
    interior = [p for p in pts.points if not p.boundary]
    for target in expected:
        assert min(np.abs(p.pi - target).max() for p in interior) < 1e-8
    if eps == 1e-4:
        log_delta, log_x = _deep_root(pi_ref, rewards, beta, eps, 1500)
        deep = next(p for p in pts.points if p.certificate is not None and "deep root" in p.certificate.test)
        lo, hi = deep.certificate.box[0]
        assert lo <= log_delta <= hi and abs(log_x[1] + 2501.0986) < 1e-3
        assert deep.pi.tolist() == [1.0, 0.0, 0.0] and deep.stable is True and not deep.boundary
        assert "below the double range" in deep.message and "stable on all output logits" in deep.message
        assert min(np.abs(deep.pi - target).max() for target in expected) > 1e-2   # a third point
    if eps == 0.0:
        (vertex,) = [p for p in pts.points if p.boundary]
        assert vertex.pi.tolist() == [1.0, 0.0, 0.0] and vertex.stable is True and "limit" in vertex.message
        kw = dict(beta=beta, G=math.inf, normalization="scale", eps=0.0, estimator="k2", placement="loss")
        field = lambda p: gradient(p, pi_ref, rewards, **kw)  # noqa: E731 - the flow's gradient, pi_ref fixed
        e4, e8 = (flow_end([0.99, 0.008, 0.002], grad=field, t_end=t) for t in (1e4, 1e8))
        assert e8[1:].max() < 1e-15 and np.all(e4[1:] / e8[1:] > 1e6)         # into the vertex, like t^-2
        back = flow_end([0.95, 0.043, 0.007], grad=field, t_end=1e8)
        assert np.abs(back - expected[1]).max() < 1e-8 and back[0] < 0.9
    else:
        assert len(interior) == 3
    assert pts.multistable                                 # the vertex's limit, or the root next to it, and 0.88


def test_the_deep_root_is_stable_by_an_independent_jacobian():
    """The Jacobian of the flow on all output logits at the root (4.4e-100, 9.3e-104, 1), by central differences
    of the field from the definitions (g_o = (r_o - mean)/(sigma + eps) - beta (log(pi_o/pi_ref_o) + 1), the flow
    pi_o (g_o - E g)) in mpmath at 300 digits: besides the gauge's 0 its eigenvalues are those of the penalty's
    part -beta (diag(pi) - pi pi^T) alone (-2.1e-103 and -1.3e-99), negative, as the library's stability bound
    says (stable=True; finite differences in double cannot resolve rates of 1e-100)."""
    pi_ref, rewards, beta = MISSED
    eps = 1e-4
    pts = stationary_points(Question(pi_ref, rewards=rewards),
                            Objective(beta=beta, group_size=math.inf, penalty="direct", std_eps=eps))
    deep = min(pts.points, key=lambda p: p.pi[0])
    assert deep.stable is True and "stable on all output logits" in deep.message
    with mp.workdps(300):
        log_pi, h, tmin = _tilt(pi_ref, rewards, beta, eps)
        delta = mp.mpf(0)
        for _ in range(30):
            delta = delta - mp.mpf(beta) * h(tmin + delta)
        theta0 = log_pi(tmin + delta)
        p, r, b, e = [mp.mpf(x) for x in pi_ref], [mp.mpf(x) for x in rewards], mp.mpf(beta), mp.mpf(eps)

        def gradient(pi):
            mean = sum(a * c for a, c in zip(pi, r))
            sd = mp.sqrt(sum(a * (c - mean) ** 2 for a, c in zip(pi, r)))
            return [(c - mean) / (sd + e) - b * (mp.log(a / q) + 1) for a, c, q in zip(pi, r, p)]

        at_root, jac = mp_flow_jacobian(gradient, theta0, mp.mpf(10) ** -60)
        assert max(abs(f) for f in at_root) < mp.mpf(10) ** -200                     # a root of the field
        eig = sorted(mp.eig(jac)[0], key=lambda z: abs(z))
        pi = [mp.e ** t for t in theta0]
        fisher = mp.matrix(3, 3)                      # -beta (diag(pi) - pi pi^T): the penalty's part alone
        for i in range(3):
            for j in range(3):
                fisher[i, j] = -b * ((pi[i] if i == j else 0) - pi[i] * pi[j])
        penalty_only = sorted(mp.eig(fisher)[0], key=lambda z: abs(z))
    assert abs(eig[0]) < mp.mpf(10) ** -150                                         # the gauge
    for z, w in zip(eig[1:], penalty_only[1:]):
        assert mp.re(z) < 0 and abs(z / w - 1) < 1e-6          # -1.5 beta pi_1 and -2 beta pi_0 (1e-103, 1e-99)
