"""Cases of the fifth hostile audit (issue 45), part two: round trips, results at edges, closed forms, pass@k.

See :mod:`hostile_audit_round5_api` for the shape of a case. Numbers are checked against
:mod:`hostile_audit_round5_ref` and :mod:`hostile_audit_fresh_ref` (neither imports the library).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle

import numpy as np

import hostile_audit_fresh_ref as fref
import hostile_audit_round5_ref as ref
from hostile_audit_round5_api import _c, _dy, _o, _q


# ---------------------------------------------------------------- round trips
def _questions():
    from grpo_theory import Question

    return [
        ("rewards", lambda: Question([0.3, 0.7], [1, 0])),
        ("three answers, labels", lambda: Question([0.2, 0.3, 0.5], [1, 0, 0.5], labels=["a", "b", "c"])),
        ("reward levels", lambda: Question([0.3, 0.7], reward_levels=[0, 1], reward_probs=[[0.2, 0.8], [0.6, 0.4]])),
        ("preference", lambda: Question([0.3, 0.7], preference=[[0.5, 0.9], [0.1, 0.5]])),
        ("a zero mass", lambda: Question([0.0, 0.4, 0.6], [1, 0.5, 0])),
    ]


def _objectives():
    from grpo_theory import Objective

    return [
        ("defaults", lambda: Objective(beta=0.5)),
        ("direct, G=inf", lambda: Objective(beta=0.5, penalty="direct", group_size=math.inf)),
        ("k3 in the reward with clamps", lambda: Objective(beta=0.1, kl_estimator="k3", kl_placement="reward",
                                                           kl_log_ratio_clamp=5.0)),
        ("ddof 1, eps 1e-4, shift", lambda: Objective(beta=0.2, group_size=8, std_ddof=1, std_eps=1e-4,
                                                      normalization="shift")),
        ("pass@k", lambda: Objective(beta=0.3, group_size=8, advantage="pass_at_k", pass_k=2)),
        ("entropy", lambda: Objective(beta=0.3, entropy_coef=0.01)),
    ]


def _eval_repr(x):
    import grpo_theory as g

    return eval(repr(x), {"Question": g.Question, "Objective": g.Objective, "inf": math.inf, "nan": math.nan,
                          "array": np.array})


def round_trip_cases() -> list[dict]:
    import grpo_theory as g

    out = []
    grp = "round trips"
    for kind, items in (("Question", _questions()), ("Objective", _objectives())):
        for name, mk in items:
            out += [
                _c(grp, f"{kind} {name}: pickle", (lambda mk=mk: (mk(), pickle.loads(pickle.dumps(mk())))), "ok",
                   check=lambda tmp, res: res["value"][0] == res["value"][1]),
                _c(grp, f"{kind} {name}: copy.deepcopy", (lambda mk=mk: (mk(), copy.deepcopy(mk()))), "ok",
                   check=lambda tmp, res: res["value"][0] == res["value"][1]),
                _c(grp, f"{kind} {name}: eval(repr(x)) == x", (lambda mk=mk: (mk(), _eval_repr(mk()))), "ok",
                   check=lambda tmp, res: res["value"][0] == res["value"][1]),
                _c(grp, f"{kind} {name}: equal objects hash equal",
                   (lambda mk=mk: (mk(), mk())), "ok",
                   check=lambda tmp, res: res["value"][0] == res["value"][1]
                   and hash(res["value"][0]) == hash(res["value"][1])),
            ]
    # equal by value across spellings: then the hashes must agree too (a dict or set would split them)
    P = [
        ("Question list vs tuple vs array", lambda: (g.Question([0.3, 0.7], [1, 0]),
                                                     g.Question(np.array([0.3, 0.7]), (1.0, 0.0)))),
        ("Question rewards -0.0 vs 0.0", lambda: (g.Question([0.3, 0.7], [1, -0.0]), g.Question([0.3, 0.7], [1, 0.0]))),
        ("Objective beta 0.5 vs np.float64(0.5)", lambda: (_o(), _o(beta=np.float64(0.5)))),
        ("Objective group_size 4 vs np.int8(4)", lambda: (_o(group_size=4), _o(group_size=np.int8(4)))),
        ("Objective penalty None vs 'reverse'", lambda: (_o(), _o(penalty="reverse"))),
        ("Objective group_size inf vs float('inf')", lambda: (_o(group_size=math.inf), _o(group_size=float("inf")))),
    ]
    for label, mk in P:
        out.append(_c(grp, label + ": a == b implies hash(a) == hash(b)", mk, "ok",
                      check=lambda tmp, res: (res["value"][0] != res["value"][1])
                      or hash(res["value"][0]) == hash(res["value"][1])))
    R = [  # dataclasses.replace / copy.replace must validate like the constructor
        ("dataclasses.replace(Objective, beta=-1)", lambda: dataclasses.replace(_o(), beta=-1), ["beta", "-1"]),
        ("dataclasses.replace(Objective, group_size=1)", lambda: dataclasses.replace(_o(), group_size=1),
         ["group_size", "1"]),
        ("dataclasses.replace(Objective, penalty='sideways')", lambda: dataclasses.replace(_o(), penalty="sideways"),
         ["penalty", "sideways"]),
        ("dataclasses.replace(Objective, std_eps=nan)", lambda: dataclasses.replace(_o(), std_eps=math.nan),
         ["std_eps", "nan"]),
    ]
    for label, mk, names in R:
        out.append(_c(grp, label, mk, "error", names))
    out.append(_c(grp, "Objective attribute assignment obj.beta = -1",
                  lambda: _refused_assignment(), "error", ["beta"]))
    out.append(_c(grp, "Question.pi_ref mutated in place then solved",
                  lambda: _mutated_question(), "either", ["pi_ref"],
                  check=lambda tmp, res: fref.stationary_ok(res["value"].pi, [0.3, 0.7], [1, 0], 0.5, 2)))
    for name, mk in (("StationaryPoint", lambda: g.stationary_policy(_q(), _o())),
                     ("StationaryPointSet", lambda: g.stationary_points(_q(), _o())),
                     ("Trajectory", lambda: _dy().flow(_q(), _o(), [0.5, 0.5], [0, 1]))):
        out.append(_c(grp, f"{name}: pickle round trip", (lambda mk=mk: _pickled_pi(mk())), "ok",
                      check=lambda tmp, res: res["value"]))
    return out


def _refused_assignment():
    """A frozen dataclass refuses assignment with an AttributeError naming the field: the right answer."""
    from grpo_theory.errors import InvalidInputError

    try:
        setattr(_o(), "beta", -1)
    except AttributeError as exc:
        raise InvalidInputError(f"{type(exc).__name__}: {exc}") from None


def _mutated_question():
    import grpo_theory as g

    q = _q()
    try:
        q.pi_ref[0] = 0.9                               # a read-only array refuses; a copy is unaffected
    except (ValueError, TypeError, AttributeError):
        pass
    return g.stationary_policy(q, _o())


def _pickled_pi(x) -> bool:
    y = pickle.loads(pickle.dumps(x))
    a = getattr(x, "pi", None)
    if a is None:
        a = [p.pi for p in x.points]
        b = [p.pi for p in y.points]
        return all(np.array_equal(u, v) for u, v in zip(a, b))
    return np.array_equal(a, y.pi)


# ---------------------------------------------------------------- results' methods at their edges
def _many(K, G=2, beta=0.5, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(K))
    r = np.arange(K, dtype=float)[::-1] / (K - 1)
    return p, r, beta, G


def result_edge_cases() -> list[dict]:
    import grpo_theory as g

    out = []
    grp = "results at edges"
    for K in (5, 9, 17):      # K - 1 a power of 2: rewards k/(K-1) exact, so the reference's std of ties is 0
        for G, pen in ((2, "reverse"), (3, "reverse"), (2, "direct")):
            p, r, beta, _ = _many(K, G, 0.5, K)

            def run(p=p, r=r, G=G, pen=pen):
                return g.stationary_points(g.Question(list(p), list(r)), _o(group_size=G, penalty=pen))

            def check(tmp, res, p=p, r=r, G=G, pen=pen):
                s = res["value"]
                pts_ok = all(fref.stationary_ok(pt.pi, p, r, 0.5, G, penalty=pen, tol=1e-6)
                             for pt in s.points if not pt.boundary)
                fr = s.from_reference
                fr_ok = fr is None or any(np.allclose(fr.pi, pt.pi, atol=1e-6) for pt in s.points)
                return pts_ok and fr_ok and len(s.points) >= 1
            out.append(_c(grp, f"stationary_points, {K} classes, G={G}, {pen}", run, "ok", check=check))
    # basins of a multistable question cover [0, 1] without gaps
    for beta in (0.05, 0.2):
        out.append(_c(grp, f"basins cover [0, 1]: G=inf direct, beta={beta}",
                      (lambda beta=beta: _dy().basins(_q((0.3, 0.7)), _o(beta=beta, group_size=math.inf,
                                                                         penalty="direct"))),
                      "ok", check=_basins_cover))
    T = [  # flow over odd time grids
        ("t = [0, 1e-300]", [0, 1e-300], "ok", lambda tr: np.allclose(tr.pi[-1], [0.5, 0.5])),
        ("t = [0, 1e300]", [0, 1e300], "either",
         lambda tr: ref.close(tr.pi[-1][0], fref.eq14(0.3, 0.5), 1e-6)),
        ("t = [0, 5e-324]", [0, 5e-324], "ok", lambda tr: np.allclose(tr.pi[-1], [0.5, 0.5])),
        ("t = [0] only", [0], "either", lambda tr: np.allclose(tr.pi[-1], [0.5, 0.5])),
        ("t decreasing [1, 0]", [1, 0], "error", None),
        ("t with a repeat [0, 1, 1, 2]", [0, 1, 1, 2], "either", lambda tr: len(tr.t) == 4),
        ("t negative [-1, 0]", [-1, 0], "either", lambda tr: np.allclose(tr.pi[-1], _dy().flow(
            _q(), _o(), [0.5, 0.5], [0, 1], with_points=False).pi[-1])),     # autonomous: only differences count
        ("t as an int array", np.arange(3), "ok", lambda tr: tr.pi.shape == (3, 2)),
        ("t a scalar 5.0", 5.0, "either", lambda tr: tr.pi.shape[-1] == 2),
        ("t empty", [], "error", None),
        ("t 2-d [[0, 1]]", [[0, 1]], "error", None),
        ("t not starting at 0: [2, 3]", [2, 3], "either", lambda tr: len(tr.t) == 2),
        ("t of 100,000 points", np.linspace(0, 10, 100_000), "ok", lambda tr: tr.pi.shape == (100_000, 2)),
    ]
    for label, t, expect, ok in T:
        out.append(_c(grp, "flow " + label,
                      (lambda t=t: _dy().flow(_q(), _o(), [0.5, 0.5], t, with_points=False)), expect, ["t"],
                      check=None if ok is None else (lambda tmp, res, ok=ok: ok(res["value"]))))
    A = [  # ascent / grpo_steps / map_cycles with edge arguments
        ("ascent lr=0", lambda: _dy().ascent(_q(), _o(), [0.5, 0.5], lr=0, steps=3), "error", ["lr"]),
        ("ascent lr=-0.1", lambda: _dy().ascent(_q(), _o(), [0.5, 0.5], lr=-0.1, steps=3), "error", ["lr"]),
        ("ascent lr=1e300", lambda: _dy().ascent(_q(), _o(), [0.5, 0.5], lr=1e300, steps=3), "either", ["lr"]),
        ("ascent steps=0", lambda: _dy().ascent(_q(), _o(), [0.5, 0.5], lr=0.1, steps=0), "either", ["steps"]),
        ("ascent every=0", lambda: _dy().ascent(_q(), _o(), [0.5, 0.5], lr=0.1, steps=3, every=0), "error",
         ["every"]),
        ("ascent steps=2.5", lambda: _dy().ascent(_q(), _o(), [0.5, 0.5], lr=0.1, steps=2.5), "error", ["steps"]),
        ("grpo_steps n_batches=0", lambda: _dy().grpo_steps(_q(), _o(), [0.5, 0.5], lr=0.1, n_batches=0), "either",
         ["n_batches"]),
        ("grpo_steps clip_eps=-0.2", lambda: _dy().grpo_steps(_q(), _o(), [0.5, 0.5], lr=0.1, n_batches=2,
                                                              clip_eps=-0.2), "error", ["clip_eps"]),
        ("grpo_steps inner_updates=0", lambda: _dy().grpo_steps(_q(), _o(), [0.5, 0.5], lr=0.1, n_batches=2,
                                                                inner_updates=0), "error", ["inner_updates"]),
        ("grpo_steps n_groups=0", lambda: _dy().grpo_steps(_q(), _o(), [0.5, 0.5], lr=0.1, n_batches=2, n_groups=0),
         "error", ["n_groups"]),
        ("map_cycles period=0", lambda: _dy().map_cycles(_q(), _o(), period=0), "error", ["period"]),
        ("map_cycles period=1.5", lambda: _dy().map_cycles(_q(), _o(), period=1.5), "error", ["period"]),
        ("map_cycles n_grid=1", lambda: _dy().map_cycles(_q(), _o(), n_grid=1), "error", ["n_grid"]),
        ("arcsin_potential(1.5)", lambda: _dy().arcsin_potential(1.5), "error", ["1.5"]),
        ("arcsin_potential(0.3, variance_eps=-1)", lambda: _dy().arcsin_potential(0.3, variance_eps=-1), "error",
         ["variance_eps"]),
        ("stationarity_residual at pi = [1, 0] (a vertex)", lambda: g.stationarity_residual(_q(), _o(), [1.0, 0.0]),
         "either", ["pi"]),
        ("stationarity_residual pi of another length", lambda: g.stationarity_residual(_q(), _o(), [0.2, 0.3, 0.5]),
         "error", ["pi", "3"]),
        ("stationary_points time_budget=1e-9", lambda: g.stationary_points(_q(), _o(), time_budget=1e-9), "either",
         ["time_budget"]),
        ("stationary_points exhaustive='no'", lambda: g.stationary_points(_q(), _o(), exhaustive="no"), "error",
         ["exhaustive"]),
    ]
    for label, mk, expect, names in A:
        out.append(_c(grp, label, mk, expect, names))
    return out


def _basins_cover(tmp, res) -> bool:
    bs = sorted(res["value"], key=lambda b: b.lo)
    if not bs or bs[0].lo > 1e-12 or bs[-1].hi < 1 - 1e-12:
        return False
    return all(abs(a.hi - b.lo) < 1e-9 for a, b in zip(bs, bs[1:]))
