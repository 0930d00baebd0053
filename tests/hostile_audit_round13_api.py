"""Cases of the thirteenth hostile audit (issue 45), part one: the unregularised objective in the Python API.

* every public query whose answer is a stationary point given ``beta = 0`` (and ``-0.0``, ``np.float32(0)``,
  ``np.int64(0)``, a 0 inside an array) with no entropy bonus: one clean :class:`NoStationaryPolicy` saying
  "unregularised"; ``beta = 0`` with an entropy bonus, which is regularised, solved and checked by the KKT residual;
  ``beta`` near 0 (``1e-300``, ``5e-324``, ``np.float32`` subnormals), solved and checked against Eq. 14 / the G = 2
  direct form written without cancellation;
* the flows at ``beta = 0`` (``dynamics.flow``, ``ascent``, ``grpo_steps``) for the GRPO family against the
  reference's RK4 / Euler steps in the logits; ``solve_rho`` on a ``PromptField`` at ``beta = 0`` against the
  reference's finite-time flow;
* the trainer-config readers given configs with no KL (a warning, ``Objective(beta=0)``) or an entropy bonus only.

Tolerances. Flow (LSODA/BDF, rtol 1e-9) against RK4 with ``dt = 0.01`` (error ~dt^4 |z''''|, below 1e-8): 1e-6
absolute, as round 12. Euler steps against the library's steps: the same arithmetic in another order, 1e-10
absolute after at most 400 steps. KKT residual recomputed here: 1e-8 (pi rounded to doubles times |dg/dpi| pi).
Closed-form tails: 1e-6 relative of ``1 - x`` (a root solved to 1e-10 relative or better) plus 1e-320 absolute
(the subnormals near 5e-324 hold one significant bit). ``solve_rho`` (BDF at rtol 1e-6 in the logits) against RK4
with 4000 steps: 1e-4 absolute in P, as round 12's pred_finite.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round11_ref as r11
import hostile_audit_round12_ref as ref
import hostile_audit_round13_ref as r13
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _fmt, _pi, _ref_kw

ZEROS = [("0", 0), ("0.0", 0.0), ("-0.0", -0.0), ("np.float32(0)", np.float32(0)), ("np.int64(0)", np.int64(0)),
         ("np.float64(-0.0)", np.float64(-0.0))]
UNREG = ["unregularised"]


def _onehot(rewards):
    levels = sorted(set(float(r) for r in rewards))
    return [[1.0 if float(r) == v else 0.0 for v in levels] for r in rewards], levels


# ---------------------------------------------------------------- every stationary query at beta = 0
def stationary_refusal_cases() -> list[dict]:
    from grpo_theory import (Objective, Question, clamp_critical_beta, dynamics, stationarity_residual,
                             stationary_points, stationary_policy)
    from grpo_theory.problem import require_regularised
    from grpo_theory.studies import predictions as sp

    G_ = "API: beta = 0, no entropy bonus: every stationary query refuses it (NoStationaryPolicy)"
    out = []
    qs = [([0.3, 0.7], [1, 0]), ([0.2, 0.5, 0.3], [1.0, 0.0, 0.4]), ([0.25, 0.25, 0.25, 0.25], [0, 1, 2, 3])]
    queries = [
        ("stationary_policy", lambda q, o: stationary_policy(q, o)),
        ("stationary_points", lambda q, o: stationary_points(q, o)),
        ("dynamics.basins", lambda q, o: dynamics.basins(q, o)),
        ("dynamics.map_fixed_points", lambda q, o: dynamics.map_fixed_points(q, o)),
        ("dynamics.map_cycles", lambda q, o: dynamics.map_cycles(q, o)),
    ]
    for zl, z in ZEROS:
        for qi, (pr, rw) in enumerate(qs):
            for name, fn in queries:
                if qi == 2 and name in ("dynamics.map_cycles", "dynamics.map_fixed_points"):
                    continue
                out.append(_err(G_, f"{name} pi_ref={pr} rewards={rw} Objective(beta={zl})",
                                lambda fn=fn, pr=pr, rw=rw, z=z: fn(Question(pr, rewards=rw), Objective(beta=z)), UNREG))
    for kw in (dict(group_size=8), dict(group_size=math.inf), dict(penalty="direct"), dict(normalization="shift"),
               dict(advantage="reinforce_pp", group_size=4), dict(kl_estimator="k3", kl_value_clamp=10.0),
               dict(kl_placement="reward", kl_estimator="k1"), dict(level="token"), dict(filter_ties=True)):
        out.append(_err(G_, f"stationary_policy binary Objective(beta=0, {_fmt(kw)})",
                        lambda kw=kw: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0, **kw)),
                        UNREG))
    out.append(_err(G_, "stationary_policy binary Objective(beta=0, entropy_coef=0.0)",
                    lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0, entropy_coef=0.0)),
                    UNREG))
    out.append(_err(G_, "stationary_policy binary Objective(beta=0, entropy_coef=-0.0)",
                    lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0, entropy_coef=-0.0)),
                    UNREG))
    # a stationary question asked through the studies package and the clamp's critical beta
    out.append(_err(G_, "studies.predictions.stationary_x([0.3, 0.6], Objective(beta=0))",
                    lambda: sp.stationary_x([0.3, 0.6], Objective(beta=0)), UNREG))
    out.append(_err(G_, "studies.predictions.study_theory 2 questions Objective(beta=0)",
                    lambda: sp.study_theory([[0.3, 0.7], [0.5, 0.5]], [[1, 0], [0, 1]], Objective(beta=0)), UNREG))
    out.append(_err(G_, "studies.predictions.study_theory stable_points=True Objective(beta=-0.0, group_size=4)",
                    lambda: sp.study_theory([[0.3, 0.7]], [[1, 0]], Objective(beta=-0.0, group_size=4),
                                            stable_points=True), UNREG))
    out.append(_either(G_, "clamp_critical_beta binary Objective(beta=0, kl_estimator='k3', kl_value_clamp=10)",
                       lambda: clamp_critical_beta(Question([0.3, 0.7], rewards=[1, 0]),
                                                   Objective(beta=0, kl_estimator="k3", kl_value_clamp=10.0)),
                       lambda v: (math.isfinite(v) and v > 0) or f"critical beta {v}", ["beta"]))
    out.append(_either(G_, "studies.predictions.clamp_critical_betas Objective(beta=0, k3, value clamp 10)",
                       lambda: sp.clamp_critical_betas([[0.3, 0.7]], [[1, 0]],
                                                       Objective(beta=0, kl_estimator="k3", kl_value_clamp=10.0)),
                       lambda v: bool(np.all(np.isfinite(v)) and np.all(np.asarray(v) > 0)) or f"{v}", ["beta"]))
    # a policy's residual and potential are functions of pi, not stationary queries: a number or a clean refusal
    out.append(_either(G_, "stationarity_residual binary at pi=(0.5, 0.5) Objective(beta=0)",
                       lambda: stationarity_residual(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), [0.5, 0.5]),
                       lambda v: (math.isfinite(v) and v > 0) or f"residual {v} at a non-stationary interior pi",
                       ["beta"]))
    out.append(_either(G_, "dynamics.potential_objective binary at pi=(0.4, 0.6) Objective(beta=0)",
                       lambda: dynamics.potential_objective(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0),
                                                            [0.4, 0.6]),
                       lambda v: math.isfinite(v) or f"potential {v}", ["beta"]))
    out.append(_either(G_, "dynamics.proximal_map binary Objective(beta=0)",
                       lambda: dynamics.proximal_map(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0)),
                       lambda v: v is not None, ["beta"]))
    # the guard itself
    for lab, v, names in [("0.0", 0.0, ["beta = 0"]), ("-0.0", -0.0, ["beta = 0"]), ("np.float32(0)", np.float32(0),
                                                                                   ["beta = 0"]),
                          ("[0.3, 0.0]", [0.3, 0.0], ["entry 1"]), ("np.zeros((2, 2))", np.zeros((2, 2)), ["entry 0"]),
                          ("[[0.5], [0.0]]", [[0.5], [0.0]], ["entry 1"]),
                          ("Objective(beta=0)", None, ["unregularised"])]:
        obj = Objective(beta=0) if v is None else v
        out.append(_err(G_, f"problem.require_regularised({lab})", lambda obj=obj: require_regularised(obj), names))
    for lab, v, names in [("'0'", "0", ["obj"]), ("None", None, ["obj"]), ("-1.0", -1.0, ["obj", "-1"]),
                          ("nan", math.nan, ["obj", "nan"]), ("[]", [], ["obj"]), ("{'beta': 0}", {"beta": 0}, ["obj"]),
                          ("True", True, ["obj", "True"])]:
        out.append(_err(G_, f"problem.require_regularised({lab}) (not an Objective nor numbers >= 0)",
                        lambda v=v: require_regularised(v), names))
    out.append(_err(G_, "problem.require_regularised(Objective(beta=0.3), query='')",
                    lambda: require_regularised(Objective(beta=0.3), query=""), ["query"]))
    out.append(_err(G_, "problem.require_regularised(Objective(beta=0.3), query=5)",
                    lambda: require_regularised(Objective(beta=0.3), query=5), ["query"]))
    for lab, v in [("5e-324", 5e-324), ("Objective(beta=1e-300)", Objective(beta=1e-300)),
                   ("Objective(beta=0, entropy_coef=1e-300)", Objective(beta=0, entropy_coef=1e-300)),
                   ("[1e-300, 2.0]", [1e-300, 2.0])]:
        out.append(_ok(G_, f"problem.require_regularised({lab}) passes", lambda v=v: require_regularised(v),
                       lambda r: r is None or f"returned {r!r}"))
    out.append(_ok(G_, "problem.require_regularised(Objective(beta=0.2), query='my query') passes",
                   lambda: require_regularised(Objective(beta=0.2), query="my query"), lambda r: r is None))
    out.append(_err(G_, "problem.require_regularised(Objective(beta=0), query='my query') names the query",
                    lambda: require_regularised(Objective(beta=0), query="my query"), ["my query", "unregularised"]))
    return out


# ---------------------------------------------------------------- the closed forms at and near beta = 0
def closed_form_cases() -> list[dict]:
    from grpo_theory import Question, log_pooling, nash_equilibrium, rlhf_optimum
    from grpo_theory import closed_form as cf

    G_ = "API: closed forms at beta = 0 (refused) and near it (solved, against Eq. 14 / the direct form)"
    out = []
    zero_calls = [
        ("binary_pairwise(0.35, {z})", lambda z: cf.binary_pairwise(0.35, z)),
        ("binary_large_group(0.35, {z})", lambda z: cf.binary_large_group(0.35, z)),
        ("binary_pairwise_direct(0.35, {z})", lambda z: cf.binary_pairwise_direct(0.35, z)),
        ("binary_shift_direct(0.3, {z}, 4)", lambda z: cf.binary_shift_direct(0.3, z, 4)),
        ("binary_pairwise_filtered(0.3, {z})", lambda z: cf.binary_pairwise_filtered(0.3, z)),
        ("binary_rloo(0.3, {z})", lambda z: cf.binary_rloo(0.3, z)),
        ("binary_rloo(0.3, {z}, penalty='direct')", lambda z: cf.binary_rloo(0.3, z, penalty="direct")),
        ("binary_entropy(0.3, {z}, 0.0)", lambda z: cf.binary_entropy(0.3, z, 0.0)),
        ("large_group_direct_turning_point({z})", lambda z: cf.large_group_direct_turning_point(z)),
    ]
    for zl, z in ZEROS[:4]:
        for lab, fn in zero_calls:
            out.append(_err(G_, "closed_form." + lab.format(z=zl), lambda fn=fn, z=z: fn(z), ["beta"]))
    for lab, fn, names in [
            ("binary_pairwise(0.3, [0.5, 0.0])", lambda: cf.binary_pairwise(0.3, [0.5, 0.0]), ["entry 1"]),
            ("binary_large_group([0.2, 0.4], [0.0, 0.1])", lambda: cf.binary_large_group([0.2, 0.4], [0.0, 0.1]),
             ["entry 0"]),
            ("binary_pairwise_direct(0.3, np.array([[0.1, 0.0]]))",
             lambda: cf.binary_pairwise_direct(0.3, np.array([[0.1, 0.0]])), ["entry 1"]),
            ("binary_pairwise(0.3, 0.0, gamma=2)", lambda: cf.binary_pairwise(0.3, 0.0, gamma=2.0), ["beta"])]:
        out.append(_err(G_, "closed_form." + lab, fn, names))
    # beta = 0 with an entropy bonus is regularised: binary_entropy solves it, inside (0, 1)
    for c in (0.05, 0.5, 2.0):
        out.append(_ok(G_, f"closed_form.binary_entropy(0.3, 0.0, {c}) (entropy only)",
                       lambda c=c: cf.binary_entropy(0.3, 0.0, c),
                       lambda v: (0 < float(v) < 1) or f"x = {v} not inside (0, 1)"))
    # near zero: the tails against the reference
    for b_lab, b in [("1e-300", 1e-300), ("5e-324", 5e-324), ("1e-200", 1e-200), ("1e-30", 1e-30),
                     ("np.float32(1e-45)", np.float32(1e-45))]:
        for p in (0.35, 0.9, 1e-6):
            want = r13.eq14_tail(p, float(b))
            out.append(_either(G_, f"closed_form.binary_pairwise({p}, {b_lab}): 1 - x against Eq. 14's tail",
                               lambda p=p, b=b: cf.binary_pairwise(p, b),
                               lambda v, want=want: abs((1 - float(v)) - want) <= 1e-6 * want + 1.2e-16
                               or f"1 - x = {1 - float(v)}, Eq. 14's tail {want}", ["beta"]))
            wd = r13.direct_g2_tail(p, float(b))
            out.append(_either(G_, f"closed_form.binary_pairwise_direct({p}, {b_lab}): 1 - x against the direct tail",
                               lambda p=p, b=b: cf.binary_pairwise_direct(p, b),
                               lambda v, wd=wd: abs((1 - float(v)) - wd) <= 1e-6 * wd + 1.2e-16
                               or f"1 - x = {1 - float(v)}, the direct form's tail {wd}", ["beta"]))
    # log pooling / the RLHF optimum / Nash at beta = 0: the limit (pi_ref on the best answers) or a clean refusal
    for pr, rw in [([0.3, 0.7], [1, 0]), ([0.2, 0.5, 0.3], [1.0, 0.0, 1.0]), ([0.1, 0.6, 0.3], [0.2, 0.5, 0.1])]:
        lim = r13.rlhf_limit(pr, rw)
        out.append(_either(G_, f"log_pooling({pr}, {rw}, 0)", lambda pr=pr, rw=rw: log_pooling(pr, rw, 0),
                           lambda v, lim=lim: r11.close(_pi(v), lim, 0.0, 1e-12) or f"{_pi(v)} != limit {lim}", ["beta"]))
        out.append(_either(G_, f"rlhf_optimum({pr}, {rw}, beta=0)",
                           lambda pr=pr, rw=rw: rlhf_optimum(Question(pr, rewards=rw), 0),
                           lambda v, lim=lim: r11.close(_pi(v), lim, 0.0, 1e-12) or f"{_pi(v)} != limit {lim}", ["beta"]))
        out.append(_either(G_, f"nash_equilibrium({pr}, {rw}, beta=-0.0)",
                           lambda pr=pr, rw=rw: nash_equilibrium(Question(pr, rewards=rw), -0.0),
                           lambda v: bool(np.all(np.isfinite(_pi(v)))) or f"{_pi(v)}", ["beta"]))
    return out


# ---------------------------------------------------------------- solvers at and near beta = 0
def near_zero_solver_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_points, stationary_policy

    G_ = "API: stationary_policy near beta = 0 and at beta = 0 with an entropy bonus (reference: Eq. 14, KKT)"
    out = []
    for b_lab, b in [("1e-300", 1e-300), ("5e-324", 5e-324), ("1e-250", 1e-250), ("np.float32(1e-40)", np.float32(1e-40)),
                     ("1e-18", 1e-18)]:
        for p in (0.3, 0.95):
            want = r13.eq14_tail(p, float(b))
            out.append(_either(G_, f"stationary_policy binary p={p} G=2 reverse beta={b_lab}: pi(b) against Eq. 14's tail",
                               lambda p=p, b=b: stationary_policy(Question([p, 1 - p], rewards=[1, 0]), Objective(beta=b)),
                               lambda v, want=want: abs(float(_pi(v)[1]) - want) <= 1e-6 * want + 1e-320
                               or f"pi(b) = {_pi(v)[1]}, Eq. 14's tail {want}", ["beta"]))
            wd = r13.direct_g2_tail(p, float(b))
            out.append(_either(G_, f"stationary_policy binary p={p} G=2 direct beta={b_lab}: pi(b) against the direct tail",
                               lambda p=p, b=b: stationary_policy(Question([p, 1 - p], rewards=[1, 0]),
                                                                  Objective(beta=b, penalty="direct")),
                               lambda v, wd=wd: abs(float(_pi(v)[1]) - wd) <= 1e-6 * wd + 1e-320
                               or f"pi(b) = {_pi(v)[1]}, the direct tail {wd}", ["beta"]))
    # entropy only: beta = 0, entropy_coef > 0 is regularised: KKT by the reference
    cases = [([0.3, 0.7], [1, 0], 2, 0.1), ([0.3, 0.7], [1, 0], 4, 0.5), ([0.9, 0.1], [0, 1], 2, 0.02),
             ([0.2, 0.5, 0.3], [1.0, 0.0, 0.4], 3, 0.2), ([0.2, 0.5, 0.3], [1.0, 0.0, 0.4], 2, 1.5),
             ([0.25, 0.25, 0.25, 0.25], [0, 1, 2, 3], 2, 0.3), ([0.1, 0.2, 0.7], [1, 1, 0], 3, 0.05),
             ([0.6, 0.4], [0.0, 1.0], 5, 0.8), ([0.01, 0.99], [1, 0], 2, 0.3), ([0.5, 0.5], [1, 0], 3, 3.0)]
    for pr, rw, G, c in cases:
        R, levels = _onehot(rw)
        for z_lab, z in [("0", 0), ("-0.0", -0.0)]:
            def check(v, pr=pr, R=R, levels=levels, G=G, c=c):
                pi = [float(x) for x in _pi(v)]
                if min(pi) <= 0:
                    return f"a zero entry {pi}: the entropy bonus keeps every answer"
                res = r11.residual(pi, pr, R, levels, 0.0, G=G, entropy=c)
                return res <= 1e-8 or f"KKT residual {res:.3g} at {pi}"
            out.append(_ok(G_, f"stationary_policy pi_ref={pr} rewards={rw} G={G} beta={z_lab} entropy_coef={c}",
                           lambda pr=pr, rw=rw, G=G, c=c, z=z: stationary_policy(
                               Question(pr, rewards=rw), Objective(beta=z, group_size=G, entropy_coef=c)), check))
    for pr, rw, G, c in cases[3:7]:
        R, levels = _onehot(rw)

        def check2(v, pr=pr, R=R, levels=levels, G=G, c=c):
            conv = [p for p in v if p.converged]
            if not conv:
                return "no converged point"
            for p in conv:
                pi = [float(x) for x in _pi(p)]
                if min(pi) <= 0:
                    return f"a converged point with a zero entry {pi}"
                res = r11.residual(pi, pr, R, levels, 0.0, G=G, entropy=c)
                if res > 1e-8:
                    return f"KKT residual {res:.3g} at {pi}"
            return True
        out.append(_ok(G_, f"stationary_points pi_ref={pr} rewards={rw} G={G} beta=0 entropy_coef={c}",
                       lambda pr=pr, rw=rw, G=G, c=c: stationary_points(
                           Question(pr, rewards=rw), Objective(beta=0, group_size=G, entropy_coef=c)), check2))
    return out


# ---------------------------------------------------------------- Objective's beta values
def objective_cases() -> list[dict]:
    from grpo_theory import Objective

    G_ = "API: Objective's beta at and near 0 (regularised, describe)"
    out = []
    for zl, z in [v for v in ZEROS if v[0] != "-0.0"]:
        out.append(_ok(G_, f"Objective(beta={zl}): regularised False, beta == 0, describe without '-0'",
                       lambda z=z: Objective(beta=z),
                       lambda o: (o.regularised is False and o.beta == 0 and "-0" not in o.describe())
                       or f"regularised={o.regularised} beta={o.beta!r} describe={o.describe()!r}"))
    for lab, kw in [("beta=0, entropy_coef=0.1", dict(beta=0, entropy_coef=0.1)),
                    ("beta=5e-324", dict(beta=5e-324)), ("beta=1e-300", dict(beta=1e-300)),
                    ("beta=np.float32(1e-45)", dict(beta=np.float32(1e-45))),
                    ("beta=0, entropy_coef=5e-324", dict(beta=0, entropy_coef=5e-324))]:
        out.append(_ok(G_, f"Objective({lab}): regularised True", lambda kw=kw: Objective(**kw),
                       lambda o: o.regularised is True or f"regularised={o.regularised}"))
    for lab, kw, names in [("beta=False", dict(beta=False), ["beta", "False"]), ("beta=True", dict(beta=True),
                                                                                   ["beta", "True"]),
                           ("beta=-5e-324", dict(beta=-5e-324), ["beta"]), ("beta=0j", dict(beta=0j), ["beta"]),
                           ("beta='0'", dict(beta="0"), ["beta"]), ("beta=np.array([0.0])", dict(beta=np.array([0.0])),
                                                                   ["beta"]),
                           ("beta=0, entropy_coef=-1e-300", dict(beta=0, entropy_coef=-1e-300), ["entropy_coef"]),
                           ("beta=0, entropy_coef=nan", dict(beta=0, entropy_coef=math.nan), ["entropy_coef", "nan"]),
                           ("beta=None", dict(beta=None), ["beta"])]:
        out.append(_err(G_, f"Objective({lab})", lambda kw=kw: Objective(**kw), names))
    out.append(_ok(G_, "Objective(beta=0) == Objective(beta=-0.0) and hashes equal",
                   lambda: (Objective(beta=0), Objective(beta=-0.0)),
                   lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1])) or "differ"))
    return out


# ---------------------------------------------------------------- the flows at beta = 0
FAMILY0 = [dict(), dict(normalization="shift"), dict(advantage="rloo"), dict(advantage="reinforce_pp"),
           dict(std_ddof=1, std_eps=0.01), dict(variance_eps=0.1), dict(penalty="direct"),
           dict(filter_ties=True), dict(advantage="pass_at_k", pass_k=2), dict(entropy_coef=0.2),
           dict(advantage="rloo", penalty="direct"), dict(group_size=math.inf)]


def flow_cases() -> list[dict]:
    from grpo_theory import Objective, Question, dynamics

    G_ = "API: dynamics.flow / ascent / grpo_steps at beta = 0 (reference: RK4 and Euler in the logits)"
    out = []
    for i, fam in enumerate(FAMILY0):
        kw = dict(fam)
        kw.setdefault("group_size", [2, 3, 4][i % 3])
        kw.setdefault("penalty", "reverse")
        binary = kw.get("advantage") == "pass_at_k" or kw["group_size"] == math.inf
        pr, rw = ([0.3, 0.7], [1, 0]) if binary else ([0.2, 0.5, 0.3], [1.0, 0.0, 0.4])
        R, levels = _onehot(rw)
        rkw = _ref_kw(kw)

        def grad(pi, pr=pr, R=R, levels=levels, rkw=rkw):
            return r11.gradient(pi, pr, R, levels, 0.0, **rkw)
        for zl, z in [("0", 0), ("-0.0", -0.0)] if i % 2 == 0 else [("0", 0), ("np.float32(0)", np.float32(0))]:
            for lr, n in [(0.05, 40), (0.2, 25)]:
                want = ref.euler_logits(pr, grad, lr, n)
                out.append(_ok(G_, f"grpo_steps beta={zl} lr={lr} n_batches={n} pi_ref={pr} rewards={rw} {_fmt(kw)}",
                               lambda pr=pr, rw=rw, kw=kw, lr=lr, n=n, z=z: dynamics.grpo_steps(
                                   Question(pr, rewards=rw), Objective(beta=z, **kw), pr, lr=lr, n_batches=n,
                                   with_points=False),
                               lambda v, want=want: r11.close(v.final, want, 0.0, 1e-10)
                               or f"final {v.final.tolist()} != Euler {want}"))
        want = ref.euler_logits(pr, grad, 0.1, 30)
        out.append(_ok(G_, f"ascent beta=0 lr=0.1 steps=30 pi_ref={pr} rewards={rw} {_fmt(kw)}",
                       lambda pr=pr, rw=rw, kw=kw: dynamics.ascent(Question(pr, rewards=rw), Objective(beta=0, **kw), pr,
                                                                  lr=0.1, steps=30, with_points=False),
                       lambda v, want=want: r11.close(v.final, want, 0.0, 1e-10)
                       or f"final {v.final.tolist()} != Euler {want}"))
        for t_end in (1.0, 6.0):
            want = ref.logit_flow(pr, grad, t_end, int(t_end / 0.01))
            out.append(_ok(G_, f"flow beta=0 t={t_end} pi_ref={pr} rewards={rw} {_fmt(kw)}",
                           lambda pr=pr, rw=rw, kw=kw, t_end=t_end: dynamics.flow(
                               Question(pr, rewards=rw), Objective(beta=0, **kw), pr, [0.0, t_end], with_points=False),
                           lambda v, want=want: r11.close(v.final, want, 0.0, 1e-6)
                           or f"final {v.final.tolist()} != RK4 {want}"))
    # tiny beta: the same flow as beta = 0 up to beta x slope (below 1e-290 here)
    R, levels = _onehot([1.0, 0.0, 0.4])
    pr3 = [0.2, 0.5, 0.3]
    for b_lab, b in [("1e-300", 1e-300), ("5e-324", 5e-324)]:
        def grad0(pi):
            return r11.gradient(pi, pr3, R, levels, 0.0, G=3)
        want = ref.logit_flow(pr3, grad0, 3.0, 300)
        out.append(_ok(G_, f"flow beta={b_lab} G=3 t=3 pi_ref={pr3}: the beta = 0 flow",
                       lambda b=b: dynamics.flow(Question(pr3, rewards=[1.0, 0.0, 0.4]), Objective(beta=b, group_size=3),
                                                 pr3, [0.0, 3.0], with_points=False),
                       lambda v, want=want: r11.close(v.final, want, 0.0, 1e-6) or f"{v.final.tolist()} != {want}"))
    # with_points (the default) asks for stationary points: a clean refusal naming with_points, or a trajectory
    out.append(_either(G_, "flow beta=0 with_points left at its default (True)",
                       lambda: dynamics.flow(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), [0.3, 0.7],
                                             [0.0, 1.0]),
                       lambda v: bool(np.all(np.isfinite(v.final))) or f"{v.final}", ["with_points"]))
    out.append(_either(G_, "ascent beta=0 with_points left at its default (True)",
                       lambda: dynamics.ascent(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), [0.3, 0.7],
                                               lr=0.1, steps=5),
                       lambda v: bool(np.all(np.isfinite(v.final))) or f"{v.final}", ["with_points"]))
    out.append(_either(G_, "grpo_steps beta=0 with_points left at its default (True)",
                       lambda: dynamics.grpo_steps(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), [0.3, 0.7],
                                                   lr=0.1, n_batches=5),
                       lambda v: bool(np.all(np.isfinite(v.final))) or f"{v.final}", ["with_points"]))
    # sampled groups at beta = 0: a policy (finite, summing to 1) that moved towards the better answer
    for seed_lab, n_groups in [("n_groups=200", 200), ("n_groups=1", 1)]:
        out.append(_ok(G_, f"grpo_steps beta=0 {seed_lab} lr=0.1 n_batches=20 binary G=4",
                       lambda n_groups=n_groups: dynamics.grpo_steps(
                           Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0, group_size=4), [0.3, 0.7], lr=0.1,
                           n_batches=20, n_groups=n_groups, with_points=False),
                       lambda v: (bool(np.all(np.isfinite(v.final))) and abs(float(np.sum(v.final)) - 1) < 1e-12
                                  and float(v.final[0]) >= 0.3) or f"final {v.final}"))
    # the flow at beta = 0 from a start at a vertex, a long time, t = 0
    for lab, pi0, t, names in [("pi0 at the vertex (1, 0)", [1.0, 0.0], [0.0, 1.0], ["pi0"]),
                               ("pi0 = (0, 1)", [0.0, 1.0], [0.0, 1.0], ["pi0"])]:
        out.append(_either(G_, f"flow beta=0 {lab}", lambda pi0=pi0, t=t: dynamics.flow(
            Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), pi0, t, with_points=False),
            lambda v, pi0=pi0: r11.close(v.final, pi0, 0.0, 1e-12) or f"moved off the vertex: {v.final}", names))
    want = ref.logit_flow([0.3, 0.7], lambda pi: r11.gradient(pi, [0.3, 0.7], [[0.0, 1.0], [1.0, 0.0]], [0.0, 1.0], 0.0),
                          60.0, 6000)
    out.append(_ok(G_, "flow beta=0 binary t=60: tends to the vertex (1, 0), never past it",
                   lambda: dynamics.flow(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), [0.3, 0.7], [0.0, 60.0],
                                         with_points=False),
                   lambda v, want=want: (r11.close(v.final, want, 0.0, 1e-6) and float(v.final[0]) < 1.0 + 1e-15)
                   or f"{v.final.tolist()} != RK4 {want}"))
    out.append(_ok(G_, "flow beta=0 t=[0.0] (no time passes)",
                   lambda: dynamics.flow(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=0), [0.3, 0.7], [0.0],
                                         with_points=False),
                   lambda v: r11.close(v.final, [0.3, 0.7], 0.0, 1e-15) or f"{v.final}"))
    return out


# ---------------------------------------------------------------- the prompt field / coupled flow at beta = 0
def field_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.predict.coupled import solve_rho
    from grpo_theory.predict.field import PromptField

    G_ = "API: PromptField / solve_rho at beta = 0 (reference: RK4 of docs/predict.md section 5)"
    out = []
    ps = [0.1, 0.35, 0.5, 0.8]
    for rho in (0.0, 0.4, 1.0):
        for t in (0.5, 3.0):
            want = ref.finite_flow(ps, ps, 0.0, t, rho=rho, n_steps=4000)
            out.append(_ok(G_, f"solve_rho(PromptField(Objective(beta=0), {ps}), rho={rho}, times=[{t}])",
                           lambda rho=rho, t=t: solve_rho(PromptField(Objective(beta=0), ps), rho, [t]),
                           lambda v, want=want: r11.close(1 / (1 + np.exp(-v.z[-1])), want, 0.0, 1e-4)
                           or f"P {(1 / (1 + np.exp(-v.z[-1]))).tolist()} != RK4 {want}"))
    for lab, kw, names in [("p=[0.0, 0.5]", dict(p=[0.0, 0.5]), ["p"]), ("p=[1.0]", dict(p=[1.0]), ["p"]),
                           ("p=[]", dict(p=[]), ["p"]), ("p=[nan]", dict(p=[math.nan]), ["p", "nan"]),
                           ("z_step=0", dict(p=[0.3], z_step=0.0), ["z_step"]),
                           ("tol=-1", dict(p=[0.3], tol=-1.0), ["tol"]), ("p='0.3'", dict(p="0.3"), ["p"])]:
        out.append(_err(G_, f"PromptField(Objective(beta=0), {lab})",
                        lambda kw=kw: PromptField(Objective(beta=0), **kw), names))
    out.append(_err(G_, "PromptField(None, [0.3])", lambda: PromptField(None, [0.3]), ["obj"]))
    return out


# ---------------------------------------------------------------- the trainer-config readers with no KL
def reader_cases() -> list[dict]:
    from grpo_theory.integrations.openrlhf import read_openrlhf_config
    from grpo_theory.integrations.trl import read_trl_config
    from grpo_theory.integrations.verl import read_verl_config
    from grpo_theory.predict import objective_for

    G_ = "API: trainer-config readers with no KL term (Objective(beta=0) with a warning) or an entropy bonus only"
    out = []

    def unreg(m):
        o = m.objective
        return (o.beta == 0 and o.regularised is False) or f"objective {o.describe()} regularised={o.regularised}"

    def warn(label, call, check=unreg):
        d = _ok(G_, label, call, check)
        d.update(expect="warn", names=["unregularised"])
        return d
    for lab, cfg in [("{'beta': 0.0}", {"beta": 0.0}), ("{'beta': 0}", {"beta": 0}), ("{'beta': -0.0}", {"beta": -0.0}),
                     ("{'beta': 0.0, 'num_generations': 16}", {"beta": 0.0, "num_generations": 16}),
                     ("{'beta': 0.0, 'loss_type': 'dr_grpo'}", {"beta": 0.0, "loss_type": "dr_grpo"}),
                     ("{'beta': 0.0, 'scale_rewards': False}", {"beta": 0.0, "scale_rewards": False}),
                     ("{} with trl_version='0.14.0' (beta 0.04 then)", None)]:
        if cfg is None:
            continue
        out.append(warn(f"read_trl_config({lab})", lambda cfg=cfg: read_trl_config(cfg)))
    out.append(_ok(G_, "read_trl_config({'beta': 5e-324}): regularised, beta 5e-324",
                   lambda: read_trl_config({"beta": 5e-324}),
                   lambda m: (m.objective.beta == 5e-324 and m.objective.regularised
                              and not any("unregularised" in w for w in m.warnings)) or str(m)))
    for lab, cfg, names in [("{'beta': '0'}", {"beta": "0"}, ["beta"]), ("{'beta': -1e-300}", {"beta": -1e-300}, ["beta"]),
                            ("{'beta': None}", {"beta": None}, ["beta"]), ("{'beta': [0.0]}", {"beta": [0.0]}, ["beta"])]:
        out.append(_err(G_, f"read_trl_config({lab})", lambda cfg=cfg: read_trl_config(cfg), names))
    no_kl = {"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": False},
             "actor_rollout_ref": {"actor": {"use_kl_loss": False}, "rollout": {"n": 4}}}
    out.append(warn("read_verl_config(grpo, use_kl_loss False, use_kl_in_reward False)",
                    lambda: read_verl_config(no_kl)))
    out.append(warn("read_verl_config(grpo, use_kl_loss True, kl_loss_coef 0.0)",
                    lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {
                        "actor": {"use_kl_loss": True, "kl_loss_coef": 0.0}, "rollout": {"n": 4}}})))
    out.append(warn("read_verl_config(grpo, use_kl_loss True, kl_loss_coef -0.0)",
                    lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {
                        "actor": {"use_kl_loss": True, "kl_loss_coef": -0.0}, "rollout": {"n": 4}}})))
    out.append(warn("read_verl_config(grpo, use_kl_in_reward True, kl_ctrl.kl_coef 0)",
                    lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": True,
                                                            "kl_ctrl": {"kl_coef": 0}},
                                              "actor_rollout_ref": {"actor": {"use_kl_loss": False}, "rollout": {"n": 4}}})))
    out.append(warn("read_verl_config(Hydra overrides, no KL)",
                    lambda: read_verl_config(["algorithm.adv_estimator=grpo", "algorithm.use_kl_in_reward=False",
                                              "actor_rollout_ref.actor.use_kl_loss=False",
                                              "actor_rollout_ref.rollout.n=8"])))
    out.append(_ok(G_, "read_verl_config(no KL, entropy_coeff 0.01): regularised by the entropy bonus, no such warning",
                   lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": False},
                                             "actor_rollout_ref": {"actor": {"use_kl_loss": False, "entropy_coeff": 0.01},
                                                                   "rollout": {"n": 4}}}),
                   lambda m: (m.objective.beta == 0 and m.objective.entropy_coef == 0.01 and m.objective.regularised
                              and not any("unregularised" in w for w in m.warnings)) or str(m)))
    out.append(_err(G_, "read_verl_config(no KL, kl_loss_coef -0.1 with use_kl_loss True)",
                    lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {
                        "actor": {"use_kl_loss": True, "kl_loss_coef": -0.1}, "rollout": {"n": 4}}}), ["kl_loss_coef"]))
    out.append(warn("read_openrlhf_config(group_norm, init_kl_coef 0)",
                    lambda: read_openrlhf_config({"advantage_estimator": "group_norm", "init_kl_coef": 0,
                                                  "n_samples_per_prompt": 4})))
    out.append(warn("read_openrlhf_config(group_norm, init_kl_coef 0.0, use_kl_loss True)",
                    lambda: read_openrlhf_config({"advantage_estimator": "group_norm", "init_kl_coef": 0.0,
                                                  "use_kl_loss": True, "n_samples_per_prompt": 4})))
    out.append(warn("read_openrlhf_config(group_norm, init_kl_coef 0, entropy_loss_coef 0)",
                    lambda: read_openrlhf_config({"advantage_estimator": "group_norm", "init_kl_coef": 0,
                                                  "entropy_loss_coef": 0, "n_samples_per_prompt": 4})))
    out.append(_ok(G_, "read_openrlhf_config(init_kl_coef 0, entropy_loss_coef 0.02): regularised, no such warning",
                   lambda: read_openrlhf_config({"advantage_estimator": "group_norm", "init_kl_coef": 0,
                                                 "entropy_loss_coef": 0.02, "n_samples_per_prompt": 4}),
                   lambda m: (m.objective.beta == 0 and m.objective.entropy_coef == 0.02 and m.objective.regularised
                              and not any("unregularised" in w for w in m.warnings)) or str(m)))
    out.append(_err(G_, "read_openrlhf_config(init_kl_coef -0.01)",
                    lambda: read_openrlhf_config({"advantage_estimator": "group_norm", "init_kl_coef": -0.01}),
                    ["init_kl_coef"]))
    out.append(warn("predict.objective_for(framework='trl', config={'beta': 0.0})",
                    lambda: objective_for(framework="trl", config={"beta": 0.0}),
                    lambda v: (v[0].beta == 0 and not v[0].regularised) or f"{v!r}"))
    out.append(_err(G_, "predict.objective_for(Objective(beta=0.1), framework='trl', config={'beta': 0.0}) (both)",
                    lambda: objective_for(__import__("grpo_theory").Objective(beta=0.1), framework="trl",
                                          config={"beta": 0.0}), ["framework"]))
    return out


def all_api_cases() -> list[dict]:
    return (stationary_refusal_cases() + closed_form_cases() + near_zero_solver_cases() + objective_cases()
            + flow_cases() + field_cases() + reader_cases())
