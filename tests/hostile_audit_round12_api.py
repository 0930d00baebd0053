"""Cases of the twelfth hostile audit (issue 45), part one: the Python API where eleven rounds did not go.

* ``stationary_points`` with 5-8 reward levels (beyond the certified scope of 3-4 classes): the search must run,
  say ``exhaustive=False`` with a reason, every converged point must satisfy the KKT condition recomputed by the
  reference, and ``from_reference`` must be ``stationary_policy``'s point (and, on small questions, the end of
  the reference's own RK4 flow from ``pi_ref``);
* token-level objectives on answer trees: chains of single-child nodes (depth 1-300) above one branching, tied
  subtrees, wide roots of 5-40 one-token answers, each against the closed forms / the KKT residual;
* ``convergence.check_trajectories`` on synthetic trajectories built here: a one-signed drift larger than the
  documented ``drift_tol`` must never be ``converged``; flat and oscillating ends; bad arguments;
* ``dynamics.grpo_steps`` (exact expectations, one inner update: the flow's Euler step) and ``dynamics.flow``
  for every advantage estimator against the reference's Euler steps and RK4 flow;
* the advantage registry: every estimator's ``sampled`` form against the group formulas written here, every
  ``expectations`` (mean and signed parts) against an enumeration of ordered groups, and misuse of the registry.

Tolerances. Grpo_steps against Euler: the same arithmetic in another order, 1e-10 absolute per entry after at
most 400 steps (rounding ~1e-16 per step times the steps' amplification, below 1e-12). Flow (LSODA, rtol 1e-9)
against RK4 with ``dt <= 0.01`` (error ~dt^4 |z''''| < 1e-8): 1e-6 absolute. A converged point's KKT residual
(library: below 1e-10 of beta) recomputed here to 1e-8 (the rounding of ``pi`` to doubles times ``|dg/dpi| pi``).
Closed forms (Eq. 14, 15, the G = 2 direct form) to 1e-7 relative of ``x`` or ``1 - x`` (a root solved to
1e-10 over a conditioning ``|f'|`` down to 1e-3). Enumerations with ``fsum`` against the registry's hooks: 1e-12
relative + 1e-14 absolute.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round11_ref as r11
import hostile_audit_round12_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _fmt, _pi, _ref_kw

INF = math.inf


def _kkt_problem(points, pr, R, levels, beta, rkw, interior=True) -> str:
    """Why a converged point of ``points`` fails the reference's KKT residual (1e-8), or ``''``."""
    for p in points:
        if not p.converged:
            continue
        pi = [float(x) for x in _pi(p)]
        if min(pi) <= 0:
            if interior:
                return f"converged point with a zero entry {pi} (the note's penalties keep pi_ref's support)"
            continue
        res = r11.residual(pi, pr, R, levels, beta, **rkw)
        if res > 1e-8:
            return f"a converged point's KKT residual is {res:.3g} (pi = {pi})"
    return ""


def _onehot(rewards):
    levels = sorted(set(float(r) for r in rewards))
    return [[1.0 if float(r) == v else 0.0 for v in levels] for r in rewards], levels


# ---------------------------------------------------------------- stationary_points with 5-8 reward levels
def _many_level_questions():
    rng = np.random.default_rng(1207)
    out = []
    for K in (5, 6, 7, 8):
        for j in range(4):
            pr = rng.dirichlet(np.full(K, 1.5 + j))
            pr = np.round(pr / pr.sum(), 6)
            pr[-1] = round(1 - pr[:-1].sum(), 6)
            rw = [round(float(v), 3) for v in rng.permutation(np.linspace(0, 1 + j, K))]
            out.append((pr.tolist(), rw))
    return out


def many_level_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_points, stationary_policy

    G_ = "API: stationary_points with 5-8 reward levels (beyond the certified scope)"
    out = []
    objs = [dict(group_size=2, penalty="reverse", beta=0.3), dict(group_size=3, penalty="direct", beta=0.5),
            dict(group_size=4, penalty="reverse", beta=1.1), dict(group_size=2, penalty="direct", beta=0.15),
            dict(group_size=3, penalty="reverse", normalization="shift", beta=0.2),
            dict(group_size=5, penalty="direct", normalization="shift", beta=0.8)]
    for i, (pr, rw) in enumerate(_many_level_questions()):
        for j in (0, 1, 2):
            kw = dict(objs[(i + 2 * j) % len(objs)])
            if len(pr) >= 7 and kw["group_size"] > 3:
                kw["group_size"] = 3
            beta = kw.pop("beta")
            R, levels = _onehot(rw)
            rkw = _ref_kw(kw)

            def check(v, pr=pr, rw=rw, kw=kw, beta=beta, R=R, levels=levels, rkw=rkw):
                if v.exhaustive and (kw.get("normalization") != "shift" or len(v) != 1):
                    # shift-only objectives are concave in pi (SPEC section 3): one point, which may be claimed
                    return f"exhaustive=True for {len(levels)} reward levels (outside the certified scope)"
                if not str(v.message).strip():
                    return "exhaustive=False without a reason"
                if not any(p.converged for p in v):
                    return "no converged point"
                bad = _kkt_problem(v, pr, R, levels, beta, rkw)
                if bad:
                    return bad
                sp = _pi(stationary_policy(Question(pr, rewards=rw), Objective(beta=beta, **kw)))
                if np.max(np.abs(_pi(v.from_reference) - sp)) > 1e-12:
                    return f"from_reference {_pi(v.from_reference)} != stationary_policy {sp}"
                if not any(np.max(np.abs(_pi(p) - sp)) < 1e-9 for p in v):
                    return "from_reference is not among the points"
                return True
            lab = f"stationary_points K={len(pr)} rewards={rw} beta={beta} {_fmt(kw)}"
            out.append(_ok(G_, lab, lambda pr=pr, rw=rw, kw=kw, beta=beta: stationary_points(
                Question(pr, rewards=rw), Objective(beta=beta, **kw)), check))
    # random reward laws over 5 and 6 levels
    rng = np.random.default_rng(45)
    for K, L, G, beta, pen in [(3, 5, 2, 0.4, "reverse"), (4, 6, 3, 0.7, "direct"), (5, 5, 2, 0.25, "direct"),
                               (3, 6, 3, 1.5, "reverse"), (6, 5, 2, 0.9, "reverse"), (2, 7, 4, 0.3, "reverse")]:
        P = rng.dirichlet(np.ones(L), size=K)
        P = np.round(P, 8)
        P[:, -1] = 1 - P[:, :-1].sum(1)
        levels = sorted(rng.uniform(-1, 2, L).round(4).tolist())
        pr = [1.0 / K] * K
        kw = dict(group_size=G, penalty=pen)

        def check2(v, pr=pr, P=P.tolist(), levels=levels, beta=beta, kw=kw, K=K):
            if K > 2 and v.exhaustive:
                return "exhaustive=True for a random reward law (outside the certified scope)"
            bad = _kkt_problem(v, pr, P, levels, beta, _ref_kw(kw), interior=False)
            if bad:
                return bad
            end = r11.rk4_flow(pr, P, levels, beta, t_end=200.0, dt=0.05, **_ref_kw(kw))
            if np.max(np.abs(_pi(v.from_reference) - np.array(end))) > 2e-3:
                return f"from_reference {_pi(v.from_reference)}, the reference's RK4 flow ends at {end}"
            return True
        out.append(_ok(G_, f"stationary_points K={K} reward law over {L} levels G={G} beta={beta} {pen}",
                       lambda pr=pr, P=P, levels=levels, beta=beta, kw=kw: stationary_points(
                           Question(pr, reward_levels=levels, reward_probs=P), Objective(beta=beta, **kw)), check2))
    # inside the certified scope (3-4 classes): from_reference is still stationary_policy's point
    for pr, rw, beta, G, pen in [([0.5, 0.3, 0.2], [0.0, 1.0, 0.3], 0.35, 2, "reverse"),
                                 ([0.05, 0.9, 0.05], [1.0, 0.0, 0.6], 0.12, 3, "reverse"),
                                 ([0.25, 0.25, 0.25, 0.25], [0.9, 0.1, 0.5, 0.0], 0.7, 4, "direct"),
                                 ([0.6, 0.2, 0.1, 0.1], [0.0, 0.2, 1.0, 0.7], 0.25, 2, "direct"),
                                 ([0.14, 0.43, 0.43], [1.0, 0.0, 0.5], 1.0, 16, "direct"),
                                 ([0.3, 0.3, 0.2, 0.2], [1.0, 0.8, 0.2, 0.0], 0.05, 3, "reverse"),
                                 ([0.01, 0.01, 0.98], [1.0, 0.5, 0.0], 0.4, 5, "reverse"),
                                 ([0.2, 0.7, 0.1], [2.0, -3.0, 0.0], 2.2, 2, "direct")]:
        R, levels = _onehot(rw)
        kw = dict(group_size=G, penalty=pen)

        def check4(v, pr=pr, rw=rw, beta=beta, kw=kw, R=R, levels=levels):
            sp = _pi(stationary_policy(Question(pr, rewards=rw), Objective(beta=beta, **kw)))
            if np.max(np.abs(_pi(v.from_reference) - sp)) > 1e-12:
                return f"from_reference {_pi(v.from_reference).tolist()} != stationary_policy {sp.tolist()}"
            return _kkt_problem(v, pr, R, levels, beta, _ref_kw(kw), interior=False) or True
        out.append(_ok(G_, f"stationary_points (certified scope) pi_ref={pr} rewards={rw} beta={beta} {_fmt(kw)}: "
                           "from_reference = stationary_policy",
                       lambda pr=pr, rw=rw, beta=beta, kw=kw: stationary_points(Question(pr, rewards=rw),
                                                                               Objective(beta=beta, **kw)), check4))
    # the search's own knobs at the edges, 6 levels
    q6 = ([0.1, 0.2, 0.3, 0.15, 0.15, 0.1], [0, 0.2, 0.4, 0.6, 0.8, 1.0])
    for lab, kws in [("n_starts=1", dict(n_starts=1)), ("seed=2**32-1", dict(seed=2**32 - 1)),
                     ("exhaustive=False", dict(exhaustive=False)), ("box_budget=0", dict(box_budget=0)),
                     ("time_budget=0.0", dict(time_budget=0.0)), ("n_starts=3 seed=7", dict(n_starts=3, seed=7))]:
        R, levels = _onehot(q6[1])

        def check3(v, R=R, levels=levels):
            if v.exhaustive:
                return "exhaustive=True for 6 levels"
            pi = [float(x) for x in _pi(v.from_reference)]
            res = r11.residual(pi, q6[0], R, levels, 0.4, **_ref_kw(dict(group_size=3)))
            return res <= 1e-8 or f"from_reference's residual {res:.3g}"
        out.append(_ok(G_, f"stationary_points 6 levels G=3 beta=0.4 {lab}",
                       lambda kws=kws: stationary_points(Question(q6[0], rewards=q6[1]), Objective(beta=0.4, group_size=3),
                                                         **kws), check3))
    for lab, kws, names in [("n_starts=0.5", dict(n_starts=0.5), ["n_starts", "0.5"]),
                            ("seed=-1", dict(seed=-1), ["seed", "-1"]),
                            ("time_budget=nan", dict(time_budget=float("nan")), ["time_budget", "nan"]),
                            ("box_budget=True", dict(box_budget=True), ["box_budget", "True"]),
                            ("exhaustive='no'", dict(exhaustive="no"), ["exhaustive", "no"]),
                            ("n_grid=10", dict(n_grid=10), ["n_grid", "10"])]:
        out.append(_err(G_, f"stationary_points 6 levels {lab}",
                        lambda kws=kws: stationary_points(Question(q6[0], rewards=q6[1]), Objective(beta=0.4, group_size=3),
                                                          **kws), names))
    return out


# ---------------------------------------------------------------- token trees
def _tree_two_class(pr_a, pr_b, beta, G, pen, gap=(1.0, 0.0), norm="scale"):
    """The root's stationary ``x`` of a tree whose class-a and class-b subtrees tie inside (SPEC section 4)."""
    p = sum(pr_a)
    kind = "shift" if norm == "shift" else "scale"
    levels = sorted(set(gap))
    R = [[0.0, 1.0], [1.0, 0.0]] if gap[0] > gap[1] else [[1.0, 0.0], [0.0, 1.0]]
    return r11.binary_rest(p, R, levels, beta, kind=kind, G=G, penalty=pen)


def tree_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: token-level objectives on answer trees (chains, tied subtrees, wide roots)"
    out = []
    # chains: d shared tokens, then the branch a/b
    for d, p, beta, G, pen in [(1, 0.3, 0.5, 2, "reverse"), (3, 0.05, 0.2, 2, "reverse"), (10, 0.7, 1.3, 2, "direct"),
                               (40, 0.2, 0.35, 4, "reverse"), (2, 0.45, 0.08, 3, "direct"), (25, 0.9, 0.6, 8, "reverse"),
                               (5, 0.15, 2.5, 2, "direct"), (12, 0.5, 0.5, 5, "direct"), (1, 0.01, 0.9, 2, "reverse"),
                               (7, 0.99, 0.03, 2, "reverse")]:
        ans = [("s",) * d + ("a",), ("s",) * d + ("b",)]
        want = r11.binary_rest(p, [[0.0, 1.0], [1.0, 0.0]], [0.0, 1.0], beta, kind="scale", G=G, penalty=pen)
        closed = r11.eq14(p, beta) if (G, pen) == (2, "reverse") else r11.direct_g2(p, beta) if G == 2 else want
        out.append(_ok(G_, f"stationary_policy chain of {d} shared tokens then a/b p={p} beta={beta} G={G} {pen} "
                           f"-> {closed:.8g}",
                       lambda ans=ans, p=p, beta=beta, G=G, pen=pen: stationary_policy(
                           Question([p, 1 - p], rewards=[1, 0], answers=ans),
                           Objective(beta=beta, group_size=G, penalty=pen, level="token")),
                       lambda v, w=closed: r11.near(_pi(v)[0], w, 1e-7) or f"x = {_pi(v)[0]!r} != {w!r}"))
    for d in (150, 300):
        ans = [("t",) * d + ("a",), ("t",) * d + ("b",)]
        out.append(_either(G_, f"stationary_policy chain of {d} shared tokens then a/b p=0.3 beta=0.5 G=2 reverse",
                           lambda ans=ans: stationary_policy(Question([0.3, 0.7], rewards=[1, 0], answers=ans),
                                                             Objective(beta=0.5, level="token")),
                           lambda v: r11.near(_pi(v)[0], r11.eq14(0.3, 0.5), 1e-7) or f"x = {_pi(v)[0]!r}",
                           ["answers"]))
    # tied subtrees: (A,x),(A,y),(B,x),(B,y), rewards tie inside each subtree
    for pa, pb, beta, G, pen, gap, norm in [
            ((0.1, 0.2), (0.3, 0.4), 0.5, 2, "reverse", (1.0, 0.0), "scale"),
            ((0.05, 0.05), (0.6, 0.3), 0.25, 2, "reverse", (1.0, 0.3), "scale"),
            ((0.3, 0.3), (0.1, 0.3), 0.4, 4, "reverse", (2.0, -1.0), "scale"),
            ((0.2, 0.1), (0.5, 0.2), 0.7, 2, "direct", (1.0, 0.0), "scale"),
            ((0.15, 0.15), (0.4, 0.3), 0.3, 3, "direct", (0.5, 0.0), "scale"),
            ((0.25, 0.05), (0.35, 0.35), 0.6, 4, "reverse", (1.0, 0.2), "shift"),
            ((0.4, 0.1), (0.1, 0.4), 0.9, 2, "reverse", (0.0, 1.0), "scale"),
            ((0.02, 0.08), (0.45, 0.45), 0.12, 6, "reverse", (1.0, 0.0), "scale"),
            ((0.3, 0.2), (0.25, 0.25), 1.5, 2, "direct", (3.0, 1.0), "shift"),
            ((0.1, 0.1), (0.1, 0.7), 0.2, 5, "direct", (1.0, 0.0), "scale")]:
        pr = [pa[0], pa[1], pb[0], pb[1]]
        rw = [gap[0], gap[0], gap[1], gap[1]]
        ans = [("A", "x"), ("A", "y"), ("B", "x"), ("B", "y")]
        x = _tree_two_class(pa, pb, beta, G, pen, gap, norm)
        sa, sb = sum(pa), sum(pb)
        want = [x * pa[0] / sa, x * pa[1] / sa, (1 - x) * pb[0] / sb, (1 - x) * pb[1] / sb]

        def chk(v, want=want):
            got = _pi(v)
            ok = all(r11.near(g, w, 1e-7) for g, w in zip(got, want))
            return ok or f"pi = {got.tolist()}, expected {want} (conditionals inside a tied subtree stay at pi_ref's)"
        out.append(_ok(G_, f"stationary_policy tied subtrees pi_ref={pr} rewards={rw} beta={beta} G={G} {pen} {norm}",
                       lambda pr=pr, rw=rw, ans=ans, beta=beta, G=G, pen=pen, norm=norm: stationary_policy(
                           Question(pr, rewards=rw, answers=ans),
                           Objective(beta=beta, group_size=G, penalty=pen, normalization=norm, level="token")), chk))
    # a chain above tied subtrees of unequal width: (s..s, A, x_i) for 3 x's, (s..s, B, y_j) for 2 y's
    for d, pa, pb, beta, G, pen in [(2, (0.1, 0.1, 0.1), (0.4, 0.3), 0.3, 2, "reverse"),
                                    (6, (0.05, 0.2, 0.05), (0.2, 0.5), 0.5, 3, "direct"),
                                    (1, (0.3, 0.2, 0.1), (0.1, 0.3), 0.9, 4, "reverse"),
                                    (4, (0.01, 0.01, 0.02), (0.48, 0.48), 0.2, 2, "reverse"),
                                    (3, (0.2, 0.2, 0.2), (0.2, 0.2), 0.05, 2, "direct")]:
        pr = list(pa) + list(pb)
        ans = [("s",) * d + ("A", f"x{i}") for i in range(3)] + [("s",) * d + ("B", f"y{j}") for j in range(2)]
        x = _tree_two_class(pa, pb, beta, G, pen)
        sa, sb = sum(pa), sum(pb)
        want = [x * v / sa for v in pa] + [(1 - x) * v / sb for v in pb]
        out.append(_ok(G_, f"stationary_policy chain of {d} above tied subtrees 3+2 pi_ref={pr} beta={beta} G={G} {pen}",
                       lambda pr=pr, ans=ans, beta=beta, G=G, pen=pen: stationary_policy(
                           Question(pr, rewards=[1, 1, 1, 0, 0], answers=ans),
                           Objective(beta=beta, group_size=G, penalty=pen, level="token")),
                       lambda v, want=want: all(r11.near(g, w, 1e-7) for g, w in zip(_pi(v), want))
                       or f"pi = {_pi(v).tolist()}, expected {want}"))
    # stationary_points on trees: from_reference is stationary_policy's point; the search is not exhaustive
    from grpo_theory import stationary_points
    for pa, pb, beta, G, pen in [((0.1, 0.2), (0.3, 0.4), 0.45, 2, "reverse"), ((0.05, 0.15), (0.5, 0.3), 0.3, 3, "direct"),
                                 ((0.2, 0.2), (0.3, 0.3), 0.8, 4, "reverse"), ((0.01, 0.04), (0.5, 0.45), 0.15, 2, "reverse"),
                                 ((0.3, 0.1), (0.2, 0.4), 1.2, 2, "direct"), ((0.25, 0.25), (0.25, 0.25), 0.6, 5, "reverse")]:
        pr = [pa[0], pa[1], pb[0], pb[1]]
        ans = [("A", "x"), ("A", "y"), ("B", "x"), ("B", "y")]
        x = _tree_two_class(pa, pb, beta, G, pen)
        want = [x * pa[0] / sum(pa), x * pa[1] / sum(pa), (1 - x) * pb[0] / sum(pb), (1 - x) * pb[1] / sum(pb)]

        def chk3(v, pr=pr, ans=ans, beta=beta, G=G, pen=pen, want=want):
            fr = _pi(v.from_reference)
            sp = _pi(stationary_policy(Question(pr, rewards=[1, 1, 0, 0], answers=ans),
                                       Objective(beta=beta, group_size=G, penalty=pen, level="token")))
            if np.max(np.abs(fr - sp)) > 1e-12:
                return f"from_reference {fr.tolist()} != stationary_policy {sp.tolist()}"
            if v.exhaustive and len(v) > 1:
                return "exhaustive with several points on a tree"
            return all(r11.near(g, w, 1e-7) for g, w in zip(fr, want)) or f"from_reference {fr.tolist()} != {want}"
        out.append(_ok(G_, f"stationary_points tied subtrees pi_ref={pr} beta={beta} G={G} {pen} token level",
                       lambda pr=pr, ans=ans, beta=beta, G=G, pen=pen: stationary_points(
                           Question(pr, rewards=[1, 1, 0, 0], answers=ans),
                           Objective(beta=beta, group_size=G, penalty=pen, level="token")), chk3))
    # wide roots: K one-token answers = the sequence-level question
    rng = np.random.default_rng(12)
    for K, G, beta, pen in [(5, 2, 0.4, "reverse"), (9, 3, 0.6, "direct"), (16, 2, 0.25, "reverse"),
                            (24, 4, 1.0, "reverse"), (40, 2, 0.5, "direct"), (12, 3, 0.2, "reverse"),
                            (7, 5, 0.9, "direct"), (30, 2, 0.15, "reverse")]:
        pr = rng.dirichlet(np.full(K, 2.0)).tolist()
        pr[-1] = 1 - sum(pr[:-1])
        rw = [float(v) for v in rng.choice([0.0, 0.5, 1.0], K)]
        rw[0], rw[1] = 1.0, 0.0
        R, levels = _onehot(rw)
        ans = [(f"w{i}",) for i in range(K)]

        def chk2(v, pr=pr, R=R, levels=levels, beta=beta, G=G, pen=pen):
            pi = [float(x) for x in _pi(v)]
            res = r11.residual(pi, pr, R, levels, beta, **_ref_kw(dict(group_size=G, penalty=pen)))
            return res <= 1e-8 or f"KKT residual {res:.3g}"
        out.append(_ok(G_, f"stationary_policy wide root of {K} one-token answers (3 reward levels) G={G} beta={beta} {pen}",
                       lambda pr=pr, rw=rw, ans=ans, beta=beta, G=G, pen=pen: stationary_policy(
                           Question(pr, rewards=rw, answers=ans),
                           Objective(beta=beta, group_size=G, penalty=pen, level="token")), chk2))
    # token-level KL estimators on a chain (k2 and k3 x ratio are the direct penalty, k3 the reverse)
    for est, p, beta in [("k2", 0.3, 0.5), ("k3_ratio", 0.6, 0.3), ("k3", 0.2, 0.7), ("k3_plus", 0.4, 0.4)]:
        ans = [("q", "a"), ("q", "b")]
        w = r11.eq14(p, beta) if est == "k3" else r11.direct_g2(p, beta)
        out.append(_ok(G_, f"stationary_policy chain q->a/b kl_estimator={est} p={p} beta={beta} G=2 token level",
                       lambda ans=ans, p=p, beta=beta, est=est: stationary_policy(
                           Question([p, 1 - p], rewards=[1, 0], answers=ans),
                           Objective(beta=beta, kl_estimator=est, level="token")),
                       lambda v, w=w: r11.near(_pi(v)[0], w, 1e-7) or f"x = {_pi(v)[0]!r} != {w!r}"))
    # refusals on trees
    for lab, kw, names in [
            ("answers with a prefix of another", dict(answers=[("a",), ("a", "b")]), ["prefix"]),
            ("answers repeated", dict(answers=[("a", "b"), ("a", "b")]), ["answers"]),
            ("an empty answer", dict(answers=[(), ("b",)]), ["answers"]),
            ("3 answers for 2 outputs", dict(answers=[("a",), ("b",), ("c",)]), ["answers", "2"]),
            ("an answer holding an unhashable token", dict(answers=[(["x"],), ("b",)]), ["answers"])]:
        out.append(_err(G_, f"Question with {lab}",
                        lambda kw=kw: Question([0.5, 0.5], rewards=[1, 0], **kw), names))
    return out


# ---------------------------------------------------------------- check_trajectories on synthetic curves
def trajectory_cases() -> list[dict]:
    from grpo_theory.convergence import check_trajectories

    G_ = "API: convergence.check_trajectories on synthetic trajectories (a one-signed drift is never converged)"
    out = []

    def not_converged(v):
        s = str(v.status[0])
        return s != "converged" or f"status {s!r} for a one-signed drift"

    def converged(v):
        s = str(v.status[0])
        return s == "converged" or f"status {s!r} at a flat end"
    # one-signed drifts: the tail (last 25 % of the steps) moves by >= 0.02, twice drift_tol = 0.01
    for kind, n, kw in [("linear", 200, dict(rate=0.001)), ("linear", 1000, dict(rate=0.0002, start=0.1)),
                        ("linear", 50, dict(rate=0.004)), ("linear", 400, dict(rate=-0.0008, start=0.9)),
                        ("sqrt", 400, dict(rate=0.03)), ("sqrt", 2000, dict(rate=0.012, start=0.05)),
                        ("log", 500, dict(rate=0.08)), ("log", 3000, dict(rate=0.06, start=0.1)),
                        ("exp", 300, dict(rate=0.002, start=0.1, end=0.9)), ("exp", 600, dict(rate=0.0015)),
                        ("linear", 200, dict(rate=0.0012, noise=0.002)), ("sqrt", 800, dict(rate=0.02, noise=0.003)),
                        ("log", 1000, dict(rate=0.1, noise=0.004, start=0.05)),
                        ("linear", 120, dict(rate=-0.002, start=0.95, noise=0.001)),
                        ("exp", 500, dict(rate=0.003, start=0.02, end=0.6, noise=0.002))]:
        steps, vals = ref.trajectory(kind, n, **kw)
        tail = [v for s, v in zip(steps, vals) if s >= 0.75 * n]
        lab = f"check_trajectories {kind} n={n} {_fmt(kw)} (tail moves {tail[-1] - tail[0]:+.3f})"
        out.append(_ok(G_, lab, lambda steps=steps, vals=vals: check_trajectories(steps, vals), not_converged))
    # near the edges, in logits: 1 - x halves across the tail
    for a, n in [(1e-3, 400), (1e-5, 400), (1e-8, 300)]:
        steps = list(range(1, n + 1))
        vals = [1 - a * 2 ** (-(4 * s / n)) for s in steps]
        out.append(_ok(G_, f"check_trajectories 1 - x = {a:g} 2^(-4s/n), n={n} (moving in logit)",
                       lambda steps=steps, vals=vals: check_trajectories(steps, vals), not_converged))
    # flat ends and an end reached long ago
    for kind, n, kw in [("flat", 100, dict(end=0.37)), ("exp", 400, dict(rate=0.1, start=0.1, end=0.8)),
                        ("flat", 300, dict(end=0.5, noise=0.001)), ("exp", 2000, dict(rate=0.05, end=0.95))]:
        steps, vals = ref.trajectory(kind, n, **kw)
        se = 0.001 if kw.get("noise") else None
        out.append(_ok(G_, f"check_trajectories {kind} n={n} {_fmt(kw)} se={se}",
                       lambda steps=steps, vals=vals, se=se: check_trajectories(steps, vals, se=se), converged))
    # measured (binomial) values with their standard errors: a drift of 4-10 standard errors across the tail
    for kind, n, kw, se in [("linear", 200, dict(rate=0.001, noise=0.01, seed=3), 0.01),
                            ("linear", 500, dict(rate=0.0004, noise=0.02, seed=4), 0.02),
                            ("sqrt", 400, dict(rate=0.05, noise=0.015, seed=5), 0.015),
                            ("log", 800, dict(rate=0.2, noise=0.01, seed=6), 0.01),
                            ("exp", 400, dict(rate=0.004, start=0.05, end=0.95, noise=0.01, seed=7), 0.01),
                            ("linear", 300, dict(rate=-0.0015, start=0.9, noise=0.005, seed=8), 0.005)]:
        steps, vals = ref.trajectory(kind, n, **kw)
        out.append(_ok(G_, f"check_trajectories measured {kind} n={n} {_fmt(kw)} se={se}",
                       lambda steps=steps, vals=vals, se=se: check_trajectories(steps, vals, se=se), not_converged))
    steps, vals = ref.trajectory("sine", 400, amp=0.1, period=25.0, end=0.5)
    out.append(_ok(G_, "check_trajectories sine amplitude 0.1 period 25 about 0.5 (oscillating)",
                   lambda: check_trajectories(steps, vals),
                   lambda v: str(v.status[0]) == "oscillating" or f"status {v.status[0]!r}"))
    out.append(_either(G_, "check_trajectories windows=10**6 (more windows than tail points)",
                       lambda: check_trajectories(*ref.trajectory("flat", 200, end=0.4), windows=10**6),
                       lambda v: str(v.status[0]) in ("converged", "moving", "oscillating") or f"status {v.status}",
                       ["windows"]))
    # two prompts, one drifting and one flat, in one call
    s2, v2 = ref.trajectory("linear", 300, rate=0.001)
    _, v3 = ref.trajectory("flat", 300, end=0.6)
    out.append(_ok(G_, "check_trajectories two prompts: a linear drift and a flat line",
                   lambda: check_trajectories(s2, np.column_stack([v2, v3])),
                   lambda v: [str(x) for x in v.status] == ["moving", "converged"] or f"status {list(v.status)}"))
    # bad arguments
    st, va = ref.trajectory("flat", 50)
    for lab, call, names in [
            ("a NaN step", lambda: check_trajectories([math.nan] + st[1:], va), ["steps"]),
            ("steps ending at +inf", lambda: check_trajectories(st[:-1] + [math.inf], va), ["steps"]),
            ("tail=1", lambda: check_trajectories(st, va, tail=1.0), ["tail"]),
            ("alpha=0", lambda: check_trajectories(st, va, alpha=0.0), ["alpha"]),
            ("windows=2", lambda: check_trajectories(st, va, windows=2), ["windows"]),
            ("windows=4.0", lambda: check_trajectories(st, va, windows=4.0), ["windows"]),
            ("drift_tol=nan", lambda: check_trajectories(st, va, drift_tol=math.nan), ["drift_tol"]),
            ("creep_tol=-1", lambda: check_trajectories(st, va, creep_tol=-1.0), ["creep_tol"]),
            ("logit_drift_tol=nan", lambda: check_trajectories(st, va, logit_drift_tol=math.nan), ["logit_drift_tol"]),
            ("se NaN", lambda: check_trajectories(st, va, se=math.nan), ["se"]),
            ("se with one NaN among finite values", lambda: check_trajectories(st, va, se=[0.01] * 49 + [math.nan]),
             ["se"]),
            ("reward of the wrong length", lambda: check_trajectories(st, va, reward=[0.5] * 49), ["reward"]),
            ("reward with a NaN", lambda: check_trajectories(st, va, reward=[0.5] * 49 + [math.nan]), ["reward"]),
            ("values complex", lambda: check_trajectories(st, np.array(va) + 0.1j), ["values"]),
            ("values as a dict", lambda: check_trajectories(st, {"a": va}), ["values"]),
            ("steps as None", lambda: check_trajectories(None, va), ["steps"])]:
        out.append(_err(G_, f"check_trajectories {lab}", call, names))
    return out


# ---------------------------------------------------------------- grpo_steps / flow for every advantage
FAMILY = [dict(), dict(normalization="shift"), dict(advantage="rloo"), dict(advantage="reinforce_pp"),
          dict(advantage="pass_at_k", pass_k=2), dict(std_ddof=1, std_eps=0.01), dict(variance_eps=0.1),
          dict(entropy_coef=0.1), dict(filter_ties=True), dict(penalty="direct"),
          dict(advantage="rloo", penalty="direct"), dict(advantage="pass_at_k", pass_k=3, penalty="direct")]


def dynamics_cases() -> list[dict]:
    from grpo_theory import Objective, Question, dynamics

    G_ = "API: dynamics.grpo_steps (exact, one inner update) and dynamics.flow for every advantage (reference)"
    out = []
    for i, fam in enumerate(FAMILY):
        kw = dict(fam, group_size=[3, 4, 5][i % 3])
        kw.setdefault("penalty", "reverse")
        binary = "pass_at_k" in str(kw.get("advantage"))
        pr, rw = ([0.3, 0.7], [1, 0]) if binary else ([0.2, 0.5, 0.3], [1.0, 0.0, 0.4])
        R, levels = _onehot(rw)
        beta = 0.4
        rkw = _ref_kw(kw)

        def grad(pi, pr=pr, R=R, levels=levels, rkw=rkw):
            return r11.gradient(pi, pr, R, levels, beta, **rkw)
        for lr, n in [(0.05, 40), (0.5, 10), (0.01, 400)]:
            want = ref.euler_logits(pr, grad, lr, n)
            out.append(_ok(G_, f"grpo_steps lr={lr} n_batches={n} pi_ref={pr} rewards={rw} beta={beta} {_fmt(kw)}",
                           lambda pr=pr, rw=rw, kw=kw, lr=lr, n=n: dynamics.grpo_steps(
                               Question(pr, rewards=rw), Objective(beta=beta, **kw), pr, lr=lr, n_batches=n,
                               with_points=False),
                           lambda v, want=want: r11.close(v.final, want, 0.0, 1e-10)
                           or f"final {v.final.tolist()} != Euler {want}"))
        for t_end in (2.0, 15.0):
            want = ref.logit_flow(pr, grad, t_end, int(t_end / 0.01))
            out.append(_ok(G_, f"flow t={t_end} pi_ref={pr} rewards={rw} beta={beta} {_fmt(kw)}",
                           lambda pr=pr, rw=rw, kw=kw, t_end=t_end: dynamics.flow(
                               Question(pr, rewards=rw), Objective(beta=beta, **kw), pr, [0.0, t_end],
                               with_points=False),
                           lambda v, want=want: r11.close(v.final, want, 0.0, 1e-6)
                           or f"final {v.final.tolist()} != RK4 {want}"))
    # sampled groups of estimators with no sampled form, and other refusals
    q = ([0.3, 0.7], [1, 0])
    for lab, kw, call_kw, names in [
            ("rloo with n_groups=50", dict(advantage="rloo", group_size=4), dict(n_groups=50), None),
            ("reinforce_pp with n_groups=50", dict(advantage="reinforce_pp", group_size=4), dict(n_groups=50),
             ["reinforce_pp"]),
            ("pass_at_k with n_groups=50", dict(advantage="pass_at_k", pass_k=2, group_size=4), dict(n_groups=50),
             ["pass_at_k"]),
            ("n_groups=0", dict(group_size=4), dict(n_groups=0), ["n_groups", "0"]),
            ("lr=inf", dict(group_size=4), dict(lr=math.inf), ["lr", "inf"]),
            ("clip_eps=0", dict(group_size=4), dict(clip_eps=0.0), ["clip_eps", "0"]),
            ("inner_updates=2.5", dict(group_size=4), dict(inner_updates=2.5), ["inner_updates", "2.5"]),
            ("every=0", dict(group_size=4), dict(every=0), ["every", "0"])]:
        args = dict(dict(lr=0.1, n_batches=5), **call_kw)
        call = (lambda kw=kw, args=args: dynamics.grpo_steps(Question(*q[:1], rewards=q[1]), Objective(beta=0.3, **kw),
                                                             q[0], with_points=False, **args))
        if names is None:
            out.append(_either(G_, f"grpo_steps {lab}", call,
                               lambda v: bool(np.all(np.isfinite(v.final))) or f"final {v.final}", ["rloo"]))
        else:
            out.append(_err(G_, f"grpo_steps {lab}", call, names))
    for lab, pi0, t, names in [("pi0 of the wrong length", [0.2, 0.3, 0.5], [0, 1], ["pi0"]),
                               ("t with a NaN", [0.3, 0.7], [0, math.nan], ["t"]),
                               ("t decreasing", [0.3, 0.7], [2, 1], ["t"]),
                               ("pi0 not summing to 1", [0.3, 0.6], [0, 1], ["pi0"]),
                               ("t = -1", [0.3, 0.7], [-1.0], ["t"])]:
        out.append(_err(G_, f"flow {lab}", lambda pi0=pi0, t=t: dynamics.flow(
            Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0.3, advantage="rloo", group_size=3), pi0, t), names))
    return out


# ---------------------------------------------------------------- the advantage registry
def _passk_adv(k):
    def adv(r):
        G = len(r)
        n_neg = sum(1 for v in r if v == 0)
        R = 1 - math.comb(n_neg, k) / math.comb(G, k)
        sd = math.sqrt(R * (1 - R))
        if sd == 0:
            return [0.0] * G
        return [(1 - R) / sd if v == 1 else (1 - R - math.comb(n_neg - 1, k - 1) / math.comb(G - 1, k - 1)) / sd
                for v in r]
    return adv


def registry_cases() -> list[dict]:
    from grpo_theory import Objective, variants

    G_ = "API: the advantage registry: sampled forms and expectations against an enumeration"
    out = []
    rng = np.random.default_rng(4512)
    # sampled forms against the formulas
    for name, kw, fn in [
            ("group", dict(group_size=4), lambda r: ref.group_advantages(r)),
            ("group", dict(group_size=5, std_ddof=1), lambda r: ref.group_advantages(r, ddof=1)),
            ("group", dict(group_size=3, std_eps=0.5), lambda r: ref.group_advantages(r, eps=0.5)),
            ("group", dict(group_size=6, normalization="shift"), lambda r: ref.group_advantages(r, shift=True)),
            ("group", dict(group_size=2, std_ddof=1, std_eps=1e-4), lambda r: ref.group_advantages(r, 1, 1e-4)),
            ("rloo", dict(advantage="rloo", group_size=4), ref.leave_one_out),
            ("rloo", dict(advantage="rloo", group_size=2), ref.leave_one_out),
            ("rloo", dict(advantage="rloo", group_size=9), ref.leave_one_out)]:
        G = kw["group_size"]
        for dist in ("binary", "graded", "ties"):
            if dist == "binary":
                r = rng.integers(0, 2, (30, G)).astype(float)
            elif dist == "graded":
                r = rng.normal(0, 3, (30, G)).round(3)
            else:
                r = np.repeat(rng.choice([0.1, 0.7], (30, 1)), G, axis=1)
                r[::2, 0] += 0.2

            def chk(v, r=r, fn=fn):
                want = [fn(list(map(float, row))) for row in r]
                return r11.close(np.ravel(v), np.ravel(want), 1e-12, 1e-14) or "sampled advantages differ"
            out.append(_ok(G_, f"advantage {name!r} sampled form on 30 {dist} groups {_fmt(kw)}",
                           lambda name=name, kw=kw, r=r: variants.lookup("advantage", name).hook("sampled")(
                               r.copy(), Objective(beta=0.1, **kw)), chk))
    for name in ("reinforce_pp", "pass_at_k"):
        out.append(_err(G_, f"advantage {name!r} sampled form (none registered)",
                        lambda name=name: variants.lookup("advantage", name).hook("sampled"), [name, "sampled"]))
    # expectations (mean and signed parts) against an enumeration of ordered groups
    specs = [("group", dict(group_size=4), [0.0, 1.0], lambda r: ref.group_advantages(r)),
             ("group", dict(group_size=3), [0.0, 0.5, 2.0], lambda r: ref.group_advantages(r)),
             ("group", dict(group_size=5, std_ddof=1, std_eps=0.1), [0.0, 1.0, 3.0],
              lambda r: ref.group_advantages(r, 1, 0.1)),
             ("group", dict(group_size=4, normalization="shift"), [-1.0, 0.0, 1.5], lambda r: ref.group_advantages(r, shift=True)),
             ("rloo", dict(advantage="rloo", group_size=3), [0.0, 1.0, 4.0], ref.leave_one_out),
             ("rloo", dict(advantage="rloo", group_size=5), [0.0, 1.0], ref.leave_one_out),
             ("pass_at_k", dict(advantage="pass_at_k", pass_k=2, group_size=4), [0.0, 1.0], _passk_adv(2)),
             ("pass_at_k", dict(advantage="pass_at_k", pass_k=3, group_size=5), [0.0, 1.0], _passk_adv(3)),
             ("pass_at_k", dict(advantage="pass_at_k", pass_k=1, group_size=3), [0.0, 1.0], _passk_adv(1))]
    for name, kw, levels, fn in specs:
        for w in ([0.3, 0.7], [0.05, 0.95], [0.6, 0.4]) if len(levels) == 2 else \
                ([0.2, 0.5, 0.3], [0.01, 0.01, 0.98], [0.7, 0.2, 0.1]):
            G = kw["group_size"]
            for part in ("mean", "positive", "negative"):
                sign = {"mean": lambda a: a, "positive": lambda a: max(a, 0.0), "negative": lambda a: min(a, 0.0)}[part]
                want = ref.conditional_advantage(levels, w, G, lambda r, fn=fn, sign=sign: [sign(fn(r)[0])])

                def chk2(v, want=want):
                    return r11.close(np.ravel(v), want, 1e-12, 1e-14) or f"{np.ravel(v).tolist()} != {want}"
                out.append(_ok(G_, f"advantage {name!r} expectations part={part} levels={levels} w={w} {_fmt(kw)}",
                               lambda name=name, kw=kw, levels=levels, w=w, part=part: variants.lookup(
                                   "advantage", name).hook("expectations")(np.array(levels), np.log(np.array(w)),
                                                                           Objective(beta=0.1, **kw), part=part), chk2))
    # reinforce_pp: (r_1 - mean) over the batch std, both by enumeration
    for levels, w, G in [([0.0, 1.0], [0.3, 0.7], 4), ([0.0, 1.0, 2.0], [0.2, 0.5, 0.3], 3), ([0.0, 1.0], [0.9, 0.1], 6)]:
        s2 = ref.conditional_advantage(levels, w, G, lambda r: [ref.group_advantages(r, shift=True)[0] ** 2])
        s = math.sqrt(sum(a * b for a, b in zip(s2, w)))
        want = [e / s for e in ref.conditional_advantage(levels, w, G, lambda r: ref.group_advantages(r, shift=True))]
        out.append(_ok(G_, f"advantage 'reinforce_pp' expectations levels={levels} w={w} G={G}",
                       lambda levels=levels, w=w, G=G: variants.lookup("advantage", "reinforce_pp").hook("expectations")(
                           np.array(levels), np.log(np.array(w)), Objective(beta=0.1, advantage="reinforce_pp",
                                                                            group_size=G)),
                       lambda v, want=want: r11.close(np.ravel(v), want, 1e-12, 1e-14) or f"{np.ravel(v)} != {want}"))
    # misuse of the registry
    est = variants.lookup("advantage", "group")
    for lab, call, names in [
            ("lookup of an unknown advantage 'grpo'", lambda: variants.lookup("advantage", "grpo"), ["grpo"]),
            ("lookup of an unknown kind 'advantages'", lambda: variants.lookup("advantages", "group"), ["advantages"]),
            ("lookup with a None name", lambda: variants.lookup("advantage", None), ["None"]),
            ("register 'group' again without replace", lambda: variants.register(est), ["group"]),
            ("register a plain dict", lambda: variants.register({"name": "x"}), ["Variant"]),
            ("unregister an unknown name", lambda: variants.unregister("advantage", "nope"), ["nope"]),
            ("names of an unknown kind", lambda: variants.names("advantagez"), ["advantagez"]),
            ("hook of a field that is no hook", lambda: est.hook("nonexistent"), ["nonexistent"])]:
        out.append(_err(G_, f"variants: {lab}", call, names))
    return out


# ---------------------------------------------------------------- the finite-time flow from Python
def _finite_rows(N=20, seed=31):
    rng = np.random.default_rng(seed)
    n = rng.integers(8, 30, N)
    c = np.array([int(rng.integers(1, k)) for k in n])
    return n.tolist(), c.tolist(), [f"f{i}" for i in range(N)]


def _flow_at(p, beta, t, rho):
    return ref.finite_flow(p, p, beta, t, rho=rho, n_steps=int(min(40000, max(1000, 40 * t))))


def finite_api_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.predict import predict, predict_finite, samples_from_counts

    G_ = "API: predict_finite(mean_reward=, rho=) and pass_at(k) after a measured run (reference: RK4)"
    out = []
    n, c, ids = _finite_rows()
    p = [a / b for a, b in zip(c, n)]
    for beta, rho, frac in [(0.3, 0.0, 0.5), (0.3, 0.5, 0.3), (0.1, 1.0, 0.7), (1.2, 0.0, 0.2), (0.05, 0.25, 0.9)]:
        m0 = sum(p) / len(p)
        m_end = sum(r11.eq14(x, beta) for x in p) / len(p)
        mean_reward = m0 + frac * (m_end - m0)

        def check(v, p=p, beta=beta, rho=rho, mean_reward=mean_reward):
            got = [float(x) for x in v.table.pred_finite]
            mean = sum(got) / len(got)
            if abs(mean - mean_reward) > 0.01:
                return f"mean pred_finite {mean:.6f}, the run's mean reward {mean_reward:.6f}"
            lo, hi = 0.0, 1.0
            while sum(_flow_at(p, beta, hi, rho)) / len(p) < mean:
                hi *= 2
            for _ in range(40):                 # the reference's own time at which its mean is the library's mean
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if sum(_flow_at(p, beta, mid, rho)) / len(p) < mean else (lo, mid)
            want = _flow_at(p, beta, (lo + hi) / 2, rho)
            worst = max(abs(a - b) for a, b in zip(got, want))
            return worst <= 1e-4 or f"pred_finite differs from the flow at the matching time by {worst:.3g}"
        out.append(_ok(G_, f"predict_finite 20 prompts beta={beta} rho={rho} mean_reward={mean_reward:.6f}",
                       lambda n=n, c=c, ids=ids, beta=beta, rho=rho, mean_reward=mean_reward: predict_finite(
                           samples_from_counts(n, c, ids), Objective(beta=beta), mean_reward=mean_reward, rho=rho),
                       check))
    for lab, kw, names in [("mean_reward below every start", dict(mean_reward=0.0), ["mean_reward"]),
                           ("mean_reward=nan", dict(mean_reward=math.nan), ["mean_reward"]),
                           ("rho=1.5 with mean_reward", dict(mean_reward=0.6, rho=1.5), ["rho"]),
                           ("mean_reward and clock_range both", dict(mean_reward=0.6, clock_range=(1, 2)),
                            ["mean_reward", "clock_range"])]:
        out.append(_err(G_, f"predict_finite {lab}", lambda kw=kw: predict_finite(
            samples_from_counts(n, c, ids), Objective(beta=0.3), **kw), names))
    # pass_at(k) after a measured run: after_finite = 1 - (1 - pred_finite)^k, pred_finite the flow at the fit
    rng = np.random.default_rng(8)
    meas = [(i, 24, int(rng.binomial(24, min(0.95, x + 0.2)))) for i, x in zip(ids[::2], p[::2])]
    for k, beta in [(1, 0.3), (4, 0.3), (16, 0.2), (100, 0.6)]:
        def check2(v, k=k, beta=beta):
            pr, tab = v
            fit = pr.finite.summary["fit"]
            rho = float(fit.get("rho") or 0.0) if pr.finite.summary["model"] == "coupled" else 0.0
            fin = _flow_at(p, beta, fit["t"], rho)
            for j, (x, f) in enumerate(zip(p, fin)):
                row = tab.iloc[j]
                if abs(float(row.after) - (1 - (1 - r11.eq14(x, beta)) ** k)) > 1e-9:
                    return f"{ids[j]}: after {row.after}"
                if abs(float(row.after_finite) - (1 - (1 - f) ** k)) > k * 1e-4:
                    return f"{ids[j]}: after_finite {row.after_finite} != {1 - (1 - f) ** k}"
                before = ref.pass_before(n[j], c[j], k)
                if (before is None) != bool(np.isnan(row.before)) or (before is not None and
                                                                      abs(row.before - before) > 1e-12):
                    return f"{ids[j]}: before {row.before} != {before}"
            return True

        def call(k=k, beta=beta):
            pr = predict(samples_from_counts(n, c, ids), Objective(beta=beta),
                         measured=samples_from_counts([a for _, a, _ in meas], [b for _, _, b in meas],
                                                      [i for i, _, _ in meas]))
            return pr, pr.pass_at(k)
        out.append(_ok(G_, f"predict(measured=10 of 20 prompts) beta={beta} pass_at({k}): after, after_finite, before",
                       call, check2))
    return out


def all_api_cases() -> list[dict]:
    return finite_api_cases() + many_level_cases() + tree_cases() + trajectory_cases() + dynamics_cases() + registry_cases()
