"""Where the flow on all output logits goes late: horizons to t = 1e12, and limits that leave a class-mate behind.

Expected values come from tests/_full_space_flow.py (the gradient written from the definitions for ``G = inf``,
integrated in log time) or from the fuzz's own end check (an independent integration of the library's per-output
gradient, tests/fuzz_kl_cases.end_check), never from the solvers under test.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from _full_space_flow import flow_end
from _independent import mp_flow_jacobian
from fuzz_cases import check_case, draw_case, independent_preference
from fuzz_kl_cases import check_kl_case, draw_kl_case, left_behind_check

from grpo_theory import stationary_points, stationary_policy


def _definitions(seed: int) -> tuple:
    """Reliability fuzz case ``seed`` (direct penalty, ``G = inf``) and the keywords of the independent gradient."""
    case = draw_case(seed)
    q, obj = case.question, case.objective
    assert obj.regime == "direct" and math.isinf(obj.group_size)
    kw = dict(beta=obj.beta, G=math.inf, normalization=obj.normalization, ddof=obj.std_ddof, eps=obj.std_eps,
              estimator="k2", placement="loss")
    return q, obj, kw


#: Reliability fuzz seeds whose class answer the flow reaches only after t = 1e8 (8e-2 off at 1e8 for 434, 3.2e-3 for
#: 1132): flagged "still moving at t = 1e+08" (434: a wrong end of the check) before the horizons reached 1e12.
LATE = [434, 357, 1132, 1140, 2094, 2096, 2490]


@pytest.mark.parametrize("seed", LATE)
def test_class_answers_reached_late_are_returned_and_confirmed(seed):
    row = check_case(seed)
    assert row["outcome"] in ("ok", "ok-limit") and row["end"] == "late", (row["outcome"], row["end"], row["detail"])


@pytest.mark.slow
def test_seed_990_is_reached_late_too():
    """G = inf: 7 s of the library's flow from 1e10 to 1e12 (the light answer 3 rises from 3e-12 to 1e-3)."""
    row = check_case(990)
    assert row["outcome"] == "ok" and row["end"] == "late", (row["outcome"], row["detail"])


def test_seed_2490_from_the_definitions():
    """From the definitions: the flow is at the vertex of answer 2 (within 1.5e-9) at t = 1e8 and at (0, 0, 0.97142,
    0.028576) at 1e10 and 1e12; the library returns that point, converged."""
    q, obj, kw = _definitions(2490)
    e8, e12 = (flow_end(q.pi_ref, q.expected_reward, t_end=t, **kw) for t in (1e8, 1e12))
    assert e8[2] > 1 - 1e-8
    point = stationary_policy(q, obj)
    assert point.converged and np.abs(point.pi - e12).max() < 1e-6, (point.pi, e12)


@pytest.mark.parametrize("seed, light, vertex", [(323, 4, 3), (1611, 1, 4)])
def test_a_class_mate_left_behind_for_good_is_a_limit(seed, light, vertex):
    """G = inf, direct, scale: the best class's light answer would gain at any fixed small mass (the penalty pulls
    it back to pi_ref's proportion), but its own logit speed is proportional to its mass, and from the
    definitions its mass falls like t^-c with c > 1 (323: 1.6, 1611: 1.5) while the rest collapse like t^-2:
    the flow's limit is the vertex, not the class solvers' face point (which keeps pi_ref's proportions)."""
    q, obj, kw = _definitions(seed)
    e10, e12 = (flow_end(q.pi_ref, q.expected_reward, t_end=t, **kw) for t in (1e10, 1e12))
    c = math.log10(e10[light] / e12[light]) / 2
    assert c > 1.2 and e12[vertex] > 1 - 1e-12
    point = stationary_policy(q, obj)
    assert point.converged and point.boundary and point.stable is None
    assert point.pi.tolist() == [float(o == vertex) for o in range(q.n_outputs)]
    assert f"answer {light} would gain" in point.message and "left behind for good" in point.message
    row = check_case(seed)
    assert row["outcome"] == "ok-limit" and row["end"] == "left-behind", (row["outcome"], row["end"])


def test_a_class_mate_that_falls_slower_than_1_over_t_is_not_called_left_behind():
    """Seed 2444: from the definitions answer 0 (a class-mate of answer 2, pi_ref 1.9e-6) falls like t^-0.67 between
    t = 1e10 and 1e12: its own push, proportional to its mass, outgrows the others' 1/t pull, so it comes back. The
    library says it is still moving and why; the check's own left-behind test rejects that vertex."""
    q, obj, kw = _definitions(2444)
    e10, e12 = (flow_end(q.pi_ref, q.expected_reward, t_end=t, **kw) for t in (1e10, 1e12))
    c = math.log10(e10[0] / e12[0]) / 2
    assert 0.5 < c < 0.8
    point = stationary_policy(q, obj)
    assert not point.converged and "answer 0 would gain" in point.message and "comes back" in point.message
    ok, why = left_behind_check(q, obj, np.array([0.0, 0.0, 1.0, 0.0]), [0])
    assert ok is False and "not left behind" in why


@pytest.mark.parametrize("seed", [1645, 2798, 7251, 7998])
def test_reinforce_pp_limits_that_collapse_a_class_mate(seed):
    """REINFORCE++ with the KL penalty (10^4-case KL run: 0.004-0.033 off as class limits, then flagged): the flow
    collapses the lighter answer of the class too. Now the vertex (or face) is returned as a limit, and the check
    confirms it independently: within 1e-3 of the flow, the class-mate's mass falling like t^-c, c > 1."""
    row = check_kl_case(seed)
    assert row["outcome"] == "ok-face" and row["end"] == "left-behind", (row["outcome"], row["end"], row["detail"])
    q, obj = draw_kl_case(seed)
    assert obj.advantage == "reinforce_pp"


def test_reinforce_pp_seed_4714_says_why_it_is_still_moving():
    """The same structure, but the class-mate (answer 2) falls like t^-0.97 between t = 1e10 and 1e12: not shown to
    be left behind (it comes back if the rates hold), so flagged, and the message says so."""
    q, obj = draw_kl_case(4714)
    point = stationary_policy(q, obj)
    assert not point.converged and "answer 2 would gain" in point.message and "comes back" in point.message
    assert check_kl_case(4714)["outcome"] == "flagged"


@pytest.mark.parametrize("seed", [14, 48, 79, 106, 174, 176, 285])
def test_token_level_trees_end_where_the_independent_token_flow_ends(seed):
    """Trees AB/AC/D with the KL in the reward: the tree solver returned a root that Newton's method reached from the
    flow's end across the simplex (seed 79, rewards (0.6, 0.6, 0): the vertex of the reward-0 answer D, where the flow
    rests at (0.536, 0.464, 1.6e-102)). The fuzz now checks every converged tree answer against the token-level flow
    on every edge logit from pi_ref (tests/_full_space_flow.tree_flow_end, to t = 1e8): these seven were wrong ends."""
    row = check_kl_case(seed)
    assert row["tree"] and row["outcome"] in ("ok", "ok-face") and row["end"] == "same", (row["outcome"], row["end"],
                                                                                          row["detail"])


def test_a_failed_late_integration_is_judged_on_the_horizons_reached():
    """KL seed 870: past t = 1e8 LSODA failed and BDF's trial step fed NaN logits to the field, whose policy check
    raised (a crash, 'pi must be finite'). Now a failed trial step backs the solver off, and a late leg that still
    fails leaves the end judged on the horizons reached; the answer's end agrees with the independent integration."""
    row = check_kl_case(870)
    assert row["outcome"] == "ok-face" and row["end"] == "same", (row["outcome"], row["end"], row["detail"])


def test_a_left_behind_limit_whose_plain_integration_chatters_is_decided_by_the_robust_one():
    """KL seed 1286 (abs in the loss, REINFORCE++): the library returns the vertex of answer 3, leaving the class-mate
    answer 2 behind (t^-1.33). The plain independent integration chatters at abs's kink past its budget (the end was
    'unchecked'); the robust one, on the field with the kink mollified (Filippov's sliding mode), reaches the vertex,
    and the class-mate is left behind for good."""
    row = check_kl_case(1286)
    assert row["outcome"] == "ok-face" and row["end"] == "left-behind" and "answers [2]" in row["detail"], row


def _two_level_root(q, obj, u0: float = 1e-13):
    """Reliability seed 7319 from the definitions: a noisy law over two levels, the direct penalty, scale with no
    epsilon. The group's rewards depend on pi only through ``w = sum_o pi_o p_o`` (``p_o``: answer o's chance of the
    upper level), so ``g_o = p_o D(w) + P_lo(w) - beta (log(pi_o/pi_ref_o) + 1)`` with ``D = P_up - P_lo``, and a
    root is ``pi_o ∝ pi_ref_o exp(p_o D(w)/beta)`` at a fixed point of ``w -> sum_o pi_o(w) p_o``. Found by fixed-point
    iteration in ``u = 1 - w`` (no cancellation at u = 1e-13), with ``P_up``, ``P_lo`` binomial sums over the
    ``k ~ Binomial(G - 1, w)`` other members on the upper level (levels 1/0: scale normalisation is invariant).
    Returns the root's ``pi`` (masses down to 1e-182, in double), ``w``'s slope of ``D`` there and ``Var_pi(p)``."""
    G, beta = obj.group_size, obj.beta
    assert q.reward_levels.size == 2 and obj.regime == "direct" and obj.normalization == "scale"
    assert obj.std_ddof == 0 and obj.std_eps == 0
    p = q.reward_probs[:, 1]
    N = G - 1
    k = np.arange(N + 1.0)

    def adv(own, n_up):                       # A of a member on level ``own`` among n_up upper members in G
        m = n_up / G
        with np.errstate(divide="ignore", invalid="ignore"):
            a = (own - m) / np.sqrt(m * (1 - m))
        return np.where((n_up == 0) | (n_up == G), 0.0, a)

    D = adv(1.0, k + 1) - adv(0.0, k)          # D(w) = E[D_k], k the others on the upper level

    def pmf(n, u):                            # Binomial(n, 1 - u) at 0..n, in logs
        j = np.arange(n + 1.0)
        logc = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in j])
        return np.exp(logc + j * math.log1p(-u) + (n - j) * math.log(u))

    def pi_of(u):
        lg = np.log(q.pi_ref) + p * (pmf(N, u) @ D) / beta
        x = np.exp(lg - lg.max())
        return x / x.sum()

    u = u0
    for _ in range(50):
        u = float(pi_of(u) @ (1 - p))
    pi = pi_of(u)
    slope = N * (pmf(N - 1, u) @ np.diff(D))  # d/dw E_{Bin(N, w)}[D_k] = N E_{Bin(N-1, w)}[D_{k+1} - D_k]
    var = float(pi @ (p - (1 - u)) ** 2)
    return pi, slope, var


@functools.lru_cache(maxsize=1)
def _seed_7319():
    """Reliability seed 7319's question, objective and the library's answer (0.5 s; two tests read it)."""
    case = draw_case(7319)
    return case.question, case.objective, stationary_policy(case.question, case.objective)


def test_seed_7319_returns_the_stable_root_next_to_the_vertex():
    """Reliability seed 7319 (six answers, a noisy law over two levels, G = 256, direct, beta = 0.0383): from pi_ref the
    flow runs towards the vertex of answer 2 and into the root next to it, whose light masses span 1e-12 to 1e-182.
    The library returns that root, converged and stable, and it is the root from the definitions:
    (1.7013e-12, 4.1487e-135, 1, 2.9833e-182, 2.3729e-82, 4.5806e-77) (mpmath at 60 digits gives the same).
    Its stability was decided by rounding when the eigenvalues of ``diag(masses) B`` were taken in one dense call
    (the class of mass 3e-182 got +1.8e-152); they are now taken block by block in mass order."""
    q, obj, point = _seed_7319()
    root, _, _ = _two_level_root(q, obj)
    assert abs(root[0] - 1.7013e-12) < 1e-16 and 1e-136 < root[1] < 1e-134 and 1e-183 < root[3] < 1e-181
    assert point.converged and point.stable is True and not point.boundary, point
    np.testing.assert_allclose(point.pi, root, rtol=1e-5)


def test_seed_7319_root_next_to_the_vertex_is_stable():
    """The root's stability from the definitions: with ``M = diag(pi) - pi pi^T`` the flow's Jacobian on the output
    logits is ``J = D'(w) (M p)(M p)^T - beta M`` (the field depends on pi through ``w = p . pi`` and ``log pi``), so
    on the directions off the gauge it is negative definite exactly when ``D'(w) Var_pi(p) < beta``. Here
    ``D'(w) = 1182``, ``Var_pi(p) = 6.9e-15``: the ratio is 2.1e-10, far below 1, and the root is stable (its
    eigenvalues -1.3e-13, -2.6e-78, -1.2e-83, -2.0e-136, -1.4e-183: the slow test below). The library says so,
    and ``stationary_points`` lists no point there that it calls unstable."""
    q, obj, point = _seed_7319()
    _, slope, var = _two_level_root(q, obj)
    assert 1100 < slope < 1300 and 6e-15 < var < 8e-15
    assert slope * var / obj.beta < 1e-9
    assert point.stable is True and "unstable" not in point.message, point.message
    near = [p for p in stationary_points(q, obj).points if np.abs(p.pi - point.pi).max() < 1e-6]
    assert all(p.stable is not False for p in near), near


@pytest.mark.slow
def test_seed_7319_root_is_stable_by_an_independent_jacobian():
    """The Jacobian of the flow on all output logits at seed 7319's root by central differences (step 1e-120) of the
    field from the definitions, in mpmath at 320 digits: besides the gauge's ~0 (1e-203, rounding) its five
    eigenvalues are negative, -1.3e-13 (answer 0's direction) down to -1.4e-183, as the criterion of the fast test says
    (about 5 s of CPU)."""
    import mpmath as mp

    case = draw_case(7319)
    q, obj = case.question, case.objective
    G = obj.group_size
    N = G - 1
    with mp.workdps(320):
        beta, pref = mp.mpf(obj.beta), [mp.mpf(x) for x in q.pi_ref]
        p = [mp.mpf(x) for x in q.reward_probs[:, 1]]
        logc = [mp.log(mp.binomial(N, k)) for k in range(N + 1)]

        def adv(own, n_up):
            if n_up in (0, G):
                return mp.mpf(0)
            m = mp.mpf(n_up) / G
            return (own - m) / mp.sqrt(m * (1 - m))

        def up_lo(w):
            up = lo = mp.mpf(0)
            for k in range(N + 1):
                wk = mp.e ** (logc[k] + k * mp.log(w) + (N - k) * mp.log1p(-w))
                up, lo = up + wk * adv(1, k + 1), lo + wk * adv(0, k)
            return up, lo

        def gradient(pi):
            up, lo = up_lo(sum(a * b for a, b in zip(pi, p)))
            return [b * up + (1 - b) * lo - beta * (mp.log(a / r) + 1) for a, b, r in zip(pi, p, pref)]

        def pi_of(u):
            up, lo = up_lo(1 - u)
            lg = [mp.log(a) + b * (up - lo) / beta for a, b in zip(pref, p)]
            top = max(lg)
            z = sum(mp.e ** (x - top) for x in lg)
            return [mp.e ** (x - top) / z for x in lg]

        u = mp.mpf("1e-13")
        for _ in range(40):
            u = sum(a * (1 - b) for a, b in zip(pi_of(u), p))
        theta0 = [mp.log(a) for a in pi_of(u)]
        at_root, jac = mp_flow_jacobian(gradient, theta0, mp.mpf(10) ** -120)
        assert max(abs(f) for f in at_root) < mp.mpf(10) ** -300
        eig = sorted((mp.re(z) for z in mp.eig(jac)[0]), key=abs)
    assert abs(eig[0]) < mp.mpf(10) ** -195                                          # the gauge
    assert all(z < 0 for z in eig[1:]) and abs(eig[-1] / mp.mpf("-1.3024e-13") - 1) < 1e-3


@pytest.mark.parametrize("seed", [186, 255])
def test_an_interior_root_whose_light_mass_underflows_is_not_a_boundary_point(seed):
    """Reliability seeds 186 and 255 (two classes, direct, G = 10,000): the root sits at a class log-ratio of 850
    and 1,148, so the light class's mass exp(-850) prints as 0.0 in ``pi``; the point is still interior
    (``boundary=False``, as the docstring defines it), and the log-ratio is where the class stationarity equation
    ``log(pi_a/pi_b) = log(p_a/p_b) + (P_a - P_b)/beta`` puts it, with ``P`` the independent Monte Carlo-free
    preference of the fuzz checker evaluated at the vertex the point prints as."""
    case = draw_case(seed)
    q, obj = case.question, case.objective
    point = stationary_policy(q, obj)
    assert point.converged and not point.boundary
    assert np.min(point.pi) == 0.0 and abs(point.class_logit) > 745
    P, se = independent_preference(q, obj, point.pi, np.random.default_rng(0))
    assert np.all(se == 0)
    log_ratio = math.log(q.pi_ref[0] / q.pi_ref[1]) + (P[0] - P[1]) / obj.beta
    assert abs(abs(point.class_logit) - abs(log_ratio)) < 1e-6 * abs(log_ratio), (point.class_logit, log_ratio)
