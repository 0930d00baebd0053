"""The end point of the flow on all output logits: stationary_policy against an independent integration.

Expected values come from tests/_full_space_flow.py (groups enumerated from the definitions, the flow
integrated in log time to t = 1e10), never from the engine.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from _full_space_flow import flow_end

from grpo_theory import Objective, Question, stationary_points, stationary_policy
from grpo_theory.solvers.full_space_end import class_reduction_exact

# (pi_ref, rewards, the library's objective, the same objective for the independent integrator)
ISSUE_CASES = {
    "k3-reward-face": ([0.048143, 0.681806, 0.270051], [0.4, 1, 1],
                       dict(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k3",
                            kl_placement="reward"),
                       dict(beta=1.30067, G=2, normalization="shift", eps=1e-6, estimator="k3", placement="reward")),
    "k2-reward-face": ([0.048143, 0.681806, 0.270051], [0.4, 1, 1],
                       dict(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k2",
                            kl_placement="reward"),
                       dict(beta=1.30067, G=2, normalization="shift", eps=1e-6, estimator="k2", placement="reward")),
    "k3-reward-wrong-vertex": ([0.201547, 0.460425, 0.338028], [1, 0, 0.25],
                               dict(beta=0.0201367, group_size=3, normalization="shift", kl_estimator="k3",
                                    kl_placement="reward"),
                               dict(beta=0.0201367, G=3, normalization="shift", estimator="k3", placement="reward")),
    "k1-loss-creep": ([0.736668, 0.215437, 0.047895], [0.75, 0.75, 0.25],
                      dict(beta=0.124719, group_size=2, normalization="shift", std_ddof=1, kl_estimator="k1",
                           kl_placement="loss"),
                      dict(beta=0.124719, G=2, normalization="shift", ddof=1, estimator="k1", placement="loss")),
}
CLAMPED = ([0.365354, 0.614997, 0.019649], [0, 0, 1],
           dict(beta=1.35781, group_size=5, normalization="scale", std_eps=1e-4, kl_estimator="k3",
                kl_placement="reward", kl_log_ratio_clamp=20, kl_value_clamp=1),
           dict(beta=1.35781, G=5, normalization="scale", eps=1e-4, estimator="k3", placement="reward", log_clamp=20,
                value_clamp=1))


def _check(case, t_end):
    pi_ref, rewards, lib, ind = case
    point = stationary_policy(Question(pi_ref, rewards=rewards), Objective(**lib))
    end = flow_end(pi_ref, rewards, t_end=t_end, **ind)
    assert point.converged, point.message
    assert np.abs(point.pi - end).max() < 1e-4, (point.pi, end)
    return point, end


@pytest.mark.parametrize("name", sorted(ISSUE_CASES))
def test_issue_examples_end_where_the_full_space_flow_ends(name):
    point, end = _check(ISSUE_CASES[name], 1e10)
    # every one of these ends on a face or a vertex, reached only in the limit
    assert point.boundary and np.count_nonzero(point.pi) < 3


def test_k1_in_the_loss_reports_the_vertex_as_a_limit():
    """Two answers of reward 0.75 are told apart only by the flow's mass-proportional speed: the heavier takes
    all, with the lighter's mass falling like t^-1/2 (independent: 2.7e-3 at t = 1e6, 2.7e-5 at 1e10)."""
    pi_ref, rewards, lib, ind = ISSUE_CASES["k1-loss-creep"]
    e6, e10 = (flow_end(pi_ref, rewards, t_end=t, **ind) for t in (1e6, 1e10))
    assert 50 < e6[1] / e10[1] < 200                              # t^-1/2 over four decades: 100x
    point = stationary_policy(Question(pi_ref, rewards=rewards), Objective(**lib))
    assert point.pi.tolist() == [1.0, 0.0, 0.0] and point.boundary and "limit" in point.message


def test_clamped_k3_in_the_reward_ends_on_the_face_not_at_the_saddle():
    """The library used to return an interior point it marked unstable; the flow ends at (0.8341, 0, 0.1659)."""
    point, end = _check(CLAMPED, 1e6)
    assert point.stable is True and point.boundary and point.pi[1] == 0.0


def test_class_reduction_exact_is_the_invariance_of_the_proportional_set():
    """Equal reference masses in a class stay equal along the independent flow (to rounding); unequal ones
    leave the proportional set (k3 in the reward separates answers of one reward by their own log-ratio)."""
    ind = dict(beta=0.5, G=3, normalization="shift", estimator="k3", placement="reward")
    lib = Objective(beta=0.5, group_size=3, normalization="shift", kl_estimator="k3", kl_placement="reward")
    equal, unequal = [0.3, 0.3, 0.4], [0.2, 0.4, 0.4]
    assert class_reduction_exact(Question(equal, rewards=[1, 1, 0]), lib)
    assert not class_reduction_exact(Question(unequal, rewards=[1, 1, 0]), lib)
    e = flow_end(equal, [1, 1, 0], t_end=1e3, **ind)
    u = flow_end(unequal, [1, 1, 0], t_end=1e3, **ind)
    assert abs(math.log(e[0] / e[1])) < 1e-9
    assert abs(math.log(u[0] / u[1]) - math.log(0.2 / 0.4)) > 1e-2
    # singletons, an entropy bonus (every answer its own class) and two answers: always exact
    assert class_reduction_exact(Question(unequal, rewards=[1, 0.5, 0]), lib)


def test_from_reference_is_stationary_policy():
    q, obj = Question(ISSUE_CASES["k3-reward-face"][0], rewards=[0.4, 1, 1]), Objective(**ISSUE_CASES["k3-reward-face"][2])
    pts = stationary_points(q, obj)
    assert np.array_equal(pts.from_reference.pi, stationary_policy(q, obj).pi)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_from_reference_is_stationary_policy_on_320_random_questions():
    """The KL fuzz's questions 0-319 (every placement and estimator, faces, ties, token-level trees): the set's
    from_reference is stationary_policy's answer, point and verdict, and stationary_points never raises on them
    (seeds 14, 41, 48 and 79, trees, raised before the tree search's fix). About 200 s of CPU."""
    import warnings

    from fuzz_kl_cases import draw_kl_case

    from grpo_theory import ExactEvaluationTooLarge

    differ = []
    for seed in range(320):
        q, obj = draw_kl_case(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                point = stationary_policy(q, obj)
            except ExactEvaluationTooLarge:
                continue                       # an enumeration over its limit: no answer to compare
            ref = stationary_points(q, obj).from_reference
        if not (np.array_equal(ref.pi, point.pi) and ref.converged == point.converged):
            differ.append((seed, ref.pi, point.pi))
    assert not differ, differ[:3]


def test_five_reward_levels_search_instead_of_raising():
    """Five reward levels are beyond the certified scope: the set is searched, says exhaustive=False and why, and
    what it finds is right: every point a root of the independent gradient (GRPO's k3 in the loss, the 5^4 groups
    enumerated), and from_reference where the independent flow from pi_ref is at t = 1e6 and 1e8."""
    from _full_space_flow import gradient

    rewards = [0, 0.25, 0.5, 0.75, 1]
    q, obj = Question([0.2] * 5, rewards=rewards), Objective(beta=0.5, group_size=4)
    t0 = time.perf_counter()
    pts = stationary_points(q, obj)
    assert time.perf_counter() - t0 < 60
    assert pts.exhaustive is False and "5" in pts.message
    assert np.array_equal(pts.from_reference.pi, stationary_policy(q, obj).pi)
    ind = dict(beta=0.5, G=4, normalization="scale", estimator="k3", placement="loss")
    e6, e8 = (flow_end(q.pi_ref, rewards, t_end=t, **ind) for t in (1e6, 1e8))
    assert np.abs(e6 - e8).max() < 1e-12                         # the independent flow has ended
    assert pts.from_reference.converged and np.abs(pts.from_reference.pi - e8).max() < 1e-9
    assert len(pts.points) >= 1
    for p in pts.points:
        assert p.converged and not p.boundary and np.all(p.pi > 0)
        g = gradient(p.pi, q.pi_ref, rewards, **ind)
        assert np.ptp(g) < 1e-10, (p.pi, g)                      # a root: g_o equal on the support


@pytest.mark.parametrize("beta", [0.05, 0.03])
def test_boundary_means_an_answer_at_mass_zero(beta):
    """One definition: boundary=True only where an answer of pi_ref's support has mass exactly 0 (a face,
    reached only in the limit). An interior root with masses 1e-23 or 1e-39 is boundary=False in the
    three-class path as in the two-class one; it is a root of the independent gradient (k2 in the loss is
    the direct penalty; groups enumerated)."""
    from _full_space_flow import gradient

    q3 = Question([0.3, 0.3, 0.4], rewards=[1, 0.5, 0])
    p3 = stationary_policy(q3, Objective(beta=beta, group_size=8, penalty="direct"))
    p2 = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=beta, group_size=8, penalty="direct"))
    assert not p3.boundary and not p2.boundary and p3.converged
    assert np.all(p3.pi > 0) and p3.pi[1:].max() < 1e-20
    g = gradient(p3.pi, q3.pi_ref, [1, 0.5, 0], beta=beta, G=8, estimator="k2", placement="loss")
    assert np.abs(g - g[0]).max() < 1e-8


# fuzz seed 1132 of the reliability suite (tests/fuzz_cases.py): answers 0 and 3 share reward 2 with pi_ref
# 0.00116 and 0.363; the class answer keeps them in pi_ref's proportion with the reward-0 and -1 answers at 1e-33
SEED_1132 = ([0.0011617769169529823, 0.18771686994194808, 0.23576134468152202, 0.3627308603732632,
              0.11769829549433726, 0.09493085259197649], [2, 0, 0, 2, 1, 1], 0.023848844584317918)


def test_penalty_class_answer_with_light_masses_is_the_flow_s_late_end():
    """The direct penalty pulls a class back to pi_ref's proportions only at a speed proportional to its
    masses: from pi_ref the flow on all output logits sits at answer 0's mass 6.3e-10 at t = 1e8 (independent
    integration: groups enumerated from the definitions), not at the class answer's 3.2e-3, and reaches it only
    at t = 1e10..1e12. The library follows the flow to t = 1e12 and returns the class answer, confirmed there;
    the independent integration to 1e12 (slow test below) ends at answer 0's mass 3.1926e-3."""
    pi_ref, rewards, beta = SEED_1132
    q = Question(pi_ref, rewards=rewards)
    obj = Objective(beta=beta, group_size=5, penalty="direct", normalization="scale", std_ddof=1)
    point = stationary_policy(q, obj)
    end = flow_end(pi_ref, rewards, t_end=1e8, beta=beta, G=5, normalization="scale", ddof=1, estimator="k2",
                   placement="loss")
    assert end[0] < 1e-8 and end[3] > 1 - 1e-7                   # independent: near the vertex 3 at t = 1e8
    assert point.converged and point.stable is True and not point.boundary
    assert "followed to t = 1e+12" in point.message
    assert abs(point.pi[0] - 3.1926e-3) < 1e-7 and point.pi[1:3].max() < 1e-11   # the independent end at 1e12


@pytest.mark.slow
def test_seed_1132_class_answer_is_the_flow_at_t_1e12():
    """The class answer of seed 1132 is where the independent flow is at t = 1e12 (the pull back to pi_ref's
    proportions acts at the light masses' speed), and the library returns it."""
    pi_ref, rewards, beta = SEED_1132
    end = flow_end(pi_ref, rewards, t_end=1e12, beta=beta, G=5, normalization="scale", ddof=1, estimator="k2",
                   placement="loss")
    assert abs(end[0] - 3.1926e-3) < 1e-7 and end[1:3].max() < 1e-11
    point = stationary_policy(Question(pi_ref, rewards=rewards),
                              Objective(beta=beta, group_size=5, penalty="direct", normalization="scale", std_ddof=1))
    assert np.abs(point.pi - end).max() < 1e-6


def test_penalty_clause_trusts_only_a_converged_stable_interior_answer_with_masses_above_1e6():
    """The note's penalties make the reduction exact for the class answer only when it converged, is stable,
    lies off the faces and every answer of the support keeps mass >= 1e-6; otherwise (or without an answer)
    the full-space flow decides."""
    from grpo_theory.solvers.results import StationaryPoint

    q = Question([0.1, 0.3, 0.6], rewards=[1, 1, 0])
    obj = Objective(beta=0.5, group_size=4, penalty="direct")

    def answer(pi, **kw):
        fields = dict(pi=np.array(pi), residual=0.0, converged=True, stable=True, nfev=0, method="flow",
                      message="", boundary=False)
        return StationaryPoint(**{**fields, **kw})

    good = [0.2, 0.6, 0.2]
    assert class_reduction_exact(q, obj, point=answer(good))
    assert not class_reduction_exact(q, obj)
    assert not class_reduction_exact(q, obj, point=answer(good, converged=False))
    assert not class_reduction_exact(q, obj, point=answer(good, stable=None))
    assert not class_reduction_exact(q, obj, point=answer([0.25, 0.75, 0.0], boundary=True))
    assert not class_reduction_exact(q, obj, point=answer([0.25, 0.75 - 9e-7, 9e-7]))
    assert class_reduction_exact(q, obj, point=answer([0.25, 0.75 - 1.1e-6, 1.1e-6]))
    # the invariance condition (equal reference masses in each class) needs no answer
    assert class_reduction_exact(Question([0.3, 0.3, 0.4], rewards=[1, 1, 0]), obj)


def test_penalty_limit_face_is_confirmed_by_the_full_space_flow():
    """Fuzz seed 347 (G = inf, direct, scale, no epsilon): the class answer is a limit on the face of the
    reward-1 answers. The flow on all output logits runs into it (independent: the reward-0 answer at 2.6e-16 at
    t = 1e8, the others in pi_ref's proportions), and the library confirms it there: the face root is judged
    by the flow's speed on the face, not by the note's residual, which counts the left answer's pi_ref."""
    from fuzz_cases import draw_case

    case = draw_case(347)
    q, obj = case.question, case.objective
    assert obj.group_size == math.inf and obj.regime == "direct" and obj.std_eps == 0
    assert q.expected_reward.tolist() == [1, 0, 1, 1, 1]
    end = flow_end(q.pi_ref, q.expected_reward, t_end=1e8, beta=obj.beta, G=math.inf, normalization="scale",
                   ddof=obj.std_ddof, estimator="k2", placement="loss")
    point = stationary_policy(q, obj)
    assert end[1] < 1e-12
    assert point.converged and point.boundary and point.pi[1] == 0.0
    assert np.abs(point.pi - end).max() < 1e-6


def test_certification_budget_is_work_not_seconds(monkeypatch):
    """A certified set must not depend on the machine's load (G = 48 cases fell back to exhaustive=False on a loaded
    machine under a 2 s wall-clock budget). The same question on a clock that runs 5 s per reading (a machine far
    slower than any) gives the same certified set."""
    q, obj = Question([0.5, 0.3, 0.2], rewards=[1, 0.5, 0]), Objective(beta=0.3, group_size=48)
    calm = stationary_points(q, obj)
    real, skew = time.perf_counter, [0.0]

    def loaded():
        skew[0] += 5.0
        return real() + skew[0]

    monkeypatch.setattr(time, "perf_counter", loaded)
    busy = stationary_points(q, obj)
    assert calm.exhaustive and busy.exhaustive and len(calm.points) == len(busy.points)
    assert all(np.array_equal(a.pi, b.pi) for a, b in zip(calm.points, busy.points))
