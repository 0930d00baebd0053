"""Cases of the eleventh hostile audit (issue 45), part one: the GRPO family in Python, objects, predictions.

* every family member (RLOO, REINFORCE++, Dr GRPO's shift, TRL's ddof 1 + eps, Mroueh's variance epsilon,
  pass@k, tie filtering, the entropy bonus, the bonus alone at ``beta = 0``) at unusual but valid parameters:
  two-output stationary policies against the flow's first rest from ``p`` (:func:`ref.binary_rest`), three- and
  four-output ones against the KKT residual and a plain RK4 flow, ``reward_preference`` against an enumeration;
* ``monte_carlo_preference`` for every advantage (within 5 standard errors of the enumeration);
* the batch normalisers (``bnpo``, ``dapo``, ``token-mean``, ...) at token level on one-token answers, where they
  are the sequence-level objective;
* ``Question`` / ``Objective``: ``dataclasses.replace``, copy, deepcopy, pickle, ``repr``, ``==``, ``hash``;
* ``predict`` with DataFrames and arrays, ``id_column``; results fed back in.

Tolerances. The library documents a converged point's residual below 1e-10 (``max pi |g - E_pi g| / beta``) and
its preference sums exact to ~1e-14; the reference is a ``math.fsum`` enumeration (1e-15) and a bisection in the
logit to the last bit. So a two-output rest is held to 1e-7 relative (of ``1 - x`` above 1/2; a wrong root or
branch is off by 1e-3 or more, and 1e-7 leaves room for a root's conditioning ``|f'|`` down to 1e-3); a residual
recomputed by the reference at the library's point to 1e-8 (the library's 1e-10 plus the rounding of ``pi`` to
doubles times ``|dg/dpi| pi``, below 1e-12 away from faces); an RK4 end (``dt = 0.1``, stopped where the logit velocity is below 1e-10; error ~1e-5) to 2e-3 of
the library's point (only which stationary point is checked); preferences to 1e-10 relative + 1e-13 absolute;
Monte Carlo within 5 standard errors + 1e-12 (a false alarm has probability 6e-7 per entry).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle

import numpy as np

import hostile_audit_round11_ref as ref
from hostile_audit_fresh import ok_case as _ok

INF = math.inf


def _err(group, label, call, names, wrong=()):
    return dict(group=group, label=label, call=call, expect="error", names=list(names), wrong=list(wrong))


def _either(group, label, call, check, names):
    d = _ok(group, label, call, check)
    d.update(expect="either", names=list(names))
    return d


def _warn(group, label, call, names, check=None):
    d = _ok(group, label, call, check or (lambda v: True))
    d.update(expect="warn", names=list(names))
    return d


def _pi(v):
    return np.asarray(getattr(v, "pi", v), float).ravel()


# the reference's option names for an Objective's family fields
def _ref_kw(kw: dict) -> dict:
    adv = kw.get("advantage", "group")
    kind = {"rloo": "rloo", "reinforce_pp": "rpp", "pass_at_k": "passk"}.get(adv)
    if kind is None:
        kind = "shift" if kw.get("normalization") == "shift" else "scale"
    pen = "direct" if kw.get("penalty") == "direct" or kw.get("kl_estimator") in ("k2", "k3_ratio") else "reverse"
    return dict(kind=kind, G=kw.get("group_size", 2), ddof=kw.get("std_ddof", 0), eps=kw.get("std_eps", 0.0),
                veps=kw.get("variance_eps", 0.0), k=kw.get("pass_k") or 1, penalty=pen,
                filter_ties=kw.get("filter_ties", False), entropy=kw.get("entropy_coef", 0.0))


def _fmt(kw):
    return " ".join(f"{k}={v}" for k, v in kw.items())


# ---------------------------------------------------------------- two outputs: the flow's first rest
BIN_FAMILY = [
    dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(normalization="shift"),
    dict(std_ddof=1, std_eps=1e-4), dict(variance_eps=0.05), dict(std_eps=0.5),
    dict(filter_ties=True), dict(advantage="rloo", filter_ties=True), dict(advantage="reinforce_pp", filter_ties=True),
    dict(entropy_coef=0.05), dict(entropy_coef=0.4), dict(advantage="rloo", entropy_coef=0.1),
    dict(filter_ties=True, entropy_coef=0.1), dict(normalization="shift", filter_ties=True),
]


def binary_family_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: GRPO family, two outputs, the flow's first rest from p (reference: scan + bisection)"
    out = []
    grid = [(0.3, 0.25, 3), (0.05, 0.6, 5), (0.7, 0.08, 4), (0.45, 1.7, 8), (0.2, 0.12, 2), (0.9, 0.5, 16)]
    specs = []
    for i, fam in enumerate(BIN_FAMILY):
        for j in range(3):
            p, beta, G = grid[(i + 2 * j) % len(grid)]
            pen = "direct" if (i + j) % 3 == 2 else "reverse"
            specs.append(dict(fam, group_size=G, penalty=pen, _p=p, _beta=beta, _rw="det"))
    # pass@k at several k (two levels), deterministic and Bernoulli rewards
    for G, k, p, beta in [(4, 2, 0.3, 0.2), (6, 3, 0.15, 0.3), (8, 8, 0.4, 0.5), (5, 1, 0.6, 0.1), (3, 2, 0.05, 0.05),
                          (10, 4, 0.5, 1.0)]:
        specs.append(dict(advantage="pass_at_k", pass_k=k, group_size=G, _p=p, _beta=beta, _rw="det"))
    # Bernoulli rewards (a noisy verifier), every family member
    for fam in ({}, dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(filter_ties=True),
                dict(entropy_coef=0.2), dict(normalization="shift", penalty="direct"), dict(std_ddof=1, std_eps=0.01)):
        for G, p, beta in [(4, 0.35, 0.15), (7, 0.1, 0.4)]:
            specs.append(dict(fam, group_size=G, _p=p, _beta=beta, _rw="noisy"))
    # the entropy bonus alone (beta = 0)
    for fam, G, p in [({}, 4, 0.3), (dict(advantage="rloo"), 3, 0.6), (dict(normalization="shift"), 6, 0.1),
                      (dict(advantage="pass_at_k", pass_k=2), 4, 0.25)]:
        specs.append(dict(fam, group_size=G, entropy_coef=0.3, _p=p, _beta=0.0, _rw="det"))
    # G = inf for the members that have a limit
    for fam, p, beta in [(dict(advantage="rloo"), 0.3, 0.4), (dict(normalization="shift"), 0.2, 0.2),
                         (dict(entropy_coef=0.2), 0.4, 1.5), (dict(advantage="reinforce_pp"), 0.25, 0.9)]:
        specs.append(dict(fam, group_size=INF, _p=p, _beta=beta, _rw="det"))
    for s in specs:
        p, beta, rw = s.pop("_p"), s.pop("_beta"), s.pop("_rw")
        kw = dict(s)
        if rw == "det":
            R, levels = [[0, 1], [1, 0]], [0.0, 1.0]
            mk = (lambda p=p: Question([p, 1 - p], rewards=[1, 0]))
        else:
            R, levels = [[0.15, 0.85], [0.7, 0.3]], [0.0, 1.0]
            mk = (lambda p=p: Question([p, 1 - p], reward_levels=[0, 1], reward_probs=[[0.15, 0.85], [0.7, 0.3]]))
        rkw = _ref_kw(kw)
        want = ref.binary_rest(p, R, levels, beta, **rkw)
        lab = f"stationary_policy binary p={p} beta={beta} {rw} {_fmt(kw)}"
        call = (lambda mk=mk, kw=kw, beta=beta: stationary_policy(mk(), Objective(beta=beta, **kw)))
        if want >= 1.0 or want <= 0.0:
            def chk(v, want=want):
                x = _pi(v)[0]
                return (x > 1 - 1e-6 if want >= 1 else x < 1e-6) or f"x = {x!r}, the reference's flow reaches {want}"
            out.append(_either(G_, lab + " (the flow runs into a vertex)", call, chk, ["vertex"]))
        else:
            out.append(_ok(G_, lab + f" -> x = {want:.8g}", call,
                           lambda v, want=want: ref.near(_pi(v)[0], want, 1e-7) or f"x = {_pi(v)[0]!r} != {want!r}"))
    return out


# ---------------------------------------------------------------- three and four outputs: KKT + RK4
def multi_family_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: GRPO family, 3-4 outputs, KKT residual and the RK4 flow's end (reference)"
    out = []
    questions = [
        ([0.2, 0.3, 0.5], [1.0, 0.5, 0.0]),
        ([0.1, 0.6, 0.3], [0.0, 0.2, 1.0]),
        ([0.25, 0.25, 0.25, 0.25], [1.0, 0.7, 0.2, 0.0]),
        ([0.4, 0.35, 0.25], [2.0, -1.0, 0.5]),
        ([0.15, 0.15, 0.3, 0.4], [1.0, 1.0, 0.0, 0.3]),
    ]
    fams = [dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(normalization="shift"),
            dict(std_ddof=1, std_eps=1e-3), dict(variance_eps=0.1), dict(filter_ties=True),
            dict(entropy_coef=0.1), dict(advantage="rloo", filter_ties=True), dict(advantage="reinforce_pp",
                                                                                      entropy_coef=0.05),
            dict(filter_ties=True, entropy_coef=0.2)]
    i = 0
    for fam in fams:
        for G, beta, pen in [(3, 0.3, "reverse"), (5, 0.6, "direct"), (4, 1.2, "reverse"), (6, 0.4, "reverse")]:
            pr, rw = questions[i % len(questions)]
            i += 1
            kw = dict(fam, group_size=G, penalty=pen)
            levels = sorted(set(rw))
            R = [[1.0 if r == v else 0.0 for v in levels] for r in rw]
            rkw = _ref_kw(kw)

            def check(v, pr=pr, R=R, levels=levels, beta=beta, rkw=rkw):
                pi = [float(x) for x in _pi(v)]
                if min(pi) <= 0:
                    return f"pi = {pi} has a zero entry (the reference's flow stays interior)"
                res = ref.residual(pi, pr, R, levels, beta, **rkw)
                if res > 1e-8:
                    return f"KKT residual {res:.3g} at pi = {pi}"
                end = ref.rk4_flow(pr, R, levels, beta, t_end=300.0, dt=0.1, **rkw)
                if max(abs(a - b) for a, b in zip(end, pi)) > 2e-3:
                    return f"pi = {pi}, the RK4 flow from pi_ref ends at {end}"
                return True
            out.append(_ok(G_, f"stationary_policy pi_ref={pr} rewards={rw} beta={beta} {_fmt(kw)}",
                           lambda pr=pr, rw=rw, kw=kw, beta=beta: stationary_policy(Question(pr, rewards=rw),
                                                                                   Objective(beta=beta, **kw)),
                           check))
    # the entropy bonus alone on three outputs
    for G, c, pr, rw in [(3, 0.2, [0.2, 0.3, 0.5], [1, 0.5, 0]), (5, 0.5, [0.6, 0.3, 0.1], [0, 1, 0.4])]:
        levels = sorted(set(map(float, rw)))
        R = [[1.0 if r == v else 0.0 for v in levels] for r in rw]
        kw = dict(group_size=G, entropy_coef=c)
        rkw = _ref_kw(kw)
        out.append(_ok(G_, f"stationary_policy beta=0 entropy_coef={c} G={G} pi_ref={pr} (the bonus alone)",
                       lambda pr=pr, rw=rw, kw=kw: stationary_policy(Question(pr, rewards=rw), Objective(beta=0, **kw)),
                       lambda v, pr=pr, R=R, levels=levels, rkw=rkw: ref.residual(list(_pi(v)), pr, R, levels, 0.0,
                                                                                   **rkw) <= 1e-8
                       or f"residual at {list(_pi(v))}"))
    return out


# ---------------------------------------------------------------- reward_preference for every advantage
def preference_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference

    G_ = "API: reward_preference for every advantage, random reward laws (reference: enumeration)"
    out = []
    rng = np.random.default_rng(1107)
    laws = []
    for K, L in [(2, 2), (3, 3), (4, 2), (3, 4), (5, 3)]:
        for _ in range(2):
            probs = rng.dirichlet(np.ones(L) * 0.7, size=K).round(6)
            probs[:, -1] = 1 - probs[:, :-1].sum(axis=1)
            probs = np.clip(probs, 0, None)
            probs = probs / probs.sum(axis=1, keepdims=True)
            levels = sorted(rng.choice([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0], size=L, replace=False).tolist())
            pi = rng.dirichlet(np.ones(K)).round(6)
            pi[-1] = 1 - pi[:-1].sum()
            laws.append((levels, probs.tolist(), pi.tolist()))
    fams = [dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(normalization="shift"),
            dict(std_ddof=1, std_eps=1e-4), dict(variance_eps=0.3), dict(std_eps=2.0), {}]
    i = 0
    for fam in fams:
        for G in (2, 5, 9, 13):
            levels, probs, pi = laws[i % len(laws)]
            i += 1
            kw = dict(fam, group_size=G)
            rkw = _ref_kw(kw)
            want = ref.preference(pi, probs, levels, kind=rkw["kind"], G=G, ddof=rkw["ddof"], eps=rkw["eps"],
                                  veps=rkw["veps"])
            out.append(_ok(G_, f"reward_preference levels={levels} K={len(pi)} {_fmt(kw)}",
                           lambda levels=levels, probs=probs, pi=pi, kw=kw: reward_preference(
                               Question(pi, reward_levels=levels, reward_probs=probs), Objective(beta=1.0, **kw), pi),
                           lambda v, w=want: ref.close(v, w) or f"{list(np.round(v, 12))} != {w}"))
    # pass@k on two levels, several k, with pi far from pi_ref
    for G, k, pi, probs in [(5, 2, [0.3, 0.7], [[0.1, 0.9], [0.8, 0.2]]), (9, 4, [0.2, 0.5, 0.3], [[0, 1], [1, 0], [0.5, 0.5]]),
                            (12, 12, [0.6, 0.4], [[0.3, 0.7], [0.9, 0.1]]), (7, 1, [0.25, 0.75], [[0, 1], [1, 0]]),
                            (20, 6, [0.05, 0.95], [[0, 1], [1, 0]])]:
        want = ref.preference(pi, probs, [0.0, 1.0], kind="passk", G=G, k=k)
        out.append(_ok(G_, f"reward_preference pass_at_k G={G} k={k} pi={pi} probs={probs}",
                       lambda G=G, k=k, pi=pi, probs=probs: reward_preference(
                           Question(pi, reward_levels=[0, 1], reward_probs=probs),
                           Objective(beta=1.0, group_size=G, advantage="pass_at_k", pass_k=k), pi),
                       lambda v, w=want: ref.close(v, w) or f"{list(np.round(v, 12))} != {w}"))
    # G = inf limits
    for fam in (dict(advantage="rloo"), dict(advantage="reinforce_pp"), dict(normalization="shift"),
                dict(advantage="pass_at_k", pass_k=3)):
        pi, probs = [0.35, 0.65], [[0.2, 0.8], [0.75, 0.25]]
        kw = dict(fam, group_size=INF)
        rkw = _ref_kw(kw)
        want = ref.preference(pi, probs, [0.0, 1.0], kind=rkw["kind"], G=INF, k=rkw["k"])
        out.append(_ok(G_, f"reward_preference G=inf {_fmt(fam)} Bernoulli rewards",
                       lambda pi=pi, probs=probs, kw=kw: reward_preference(
                           Question(pi, reward_levels=[0, 1], reward_probs=probs), Objective(beta=1.0, **kw), pi),
                       lambda v, w=want: ref.close(v, w) or f"{list(np.round(v, 12))} != {w}"))
    return out


# ---------------------------------------------------------------- Monte Carlo for every advantage
def monte_carlo_cases() -> list[dict]:
    from grpo_theory import Objective, Question, monte_carlo_preference

    G_ = "API: monte_carlo_preference for every advantage (within 5 SE of the enumeration)"
    out = []
    pi, levels, probs = [0.3, 0.5, 0.2], [0.0, 0.5, 1.0], [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]]

    def within(v, want):
        est, se = (np.asarray(a, float) for a in v)
        bad = [(e, s, w) for e, s, w in zip(est, se, want) if abs(e - w) > 5 * s + 1e-12 or not s > 0]
        return not bad or f"estimate, SE, exact: {bad}"
    for fam, G, expect in [({}, 4, "ok"), (dict(normalization="shift"), 6, "ok"), (dict(std_ddof=1, std_eps=1e-4), 3, "ok"),
                           (dict(variance_eps=0.2), 5, "ok"), (dict(std_eps=0.7), 2, "ok"),
                           (dict(advantage="rloo"), 4, "either"), (dict(advantage="rloo"), 2, "either"),
                           (dict(advantage="reinforce_pp"), 5, "either"), (dict(advantage="reinforce_pp"), 3, "either"),
                           (dict(filter_ties=True), 4, "ok"), (dict(entropy_coef=0.3), 4, "ok")]:
        kw = dict(fam, group_size=G)
        rkw = _ref_kw(kw)
        want = ref.preference(pi, probs, levels, kind=rkw["kind"], G=G, ddof=rkw["ddof"], eps=rkw["eps"], veps=rkw["veps"])
        call = (lambda kw=kw: monte_carlo_preference(Question(pi, reward_levels=levels, reward_probs=probs),
                                                     Objective(beta=0.5, **kw), pi, n_groups=40_000, seed=11))
        lab = f"monte_carlo_preference {_fmt(kw)} three levels"
        if expect == "ok":
            out.append(_ok(G_, lab, call, lambda v, w=want: within(v, w)))
        else:
            out.append(_either(G_, lab + " (sampled, or refused naming reward_preference)", call,
                               lambda v, w=want: within(v, w), ["reward_preference"]))
    for G, k in [(4, 2), (6, 6)]:
        pb = [[0.2, 0.8], [0.7, 0.3]]
        want = ref.preference([0.4, 0.6], pb, [0.0, 1.0], kind="passk", G=G, k=k)
        out.append(_either(G_, f"monte_carlo_preference pass_at_k G={G} k={k} (sampled, or refused naming "
                               "reward_preference)",
                           lambda G=G, k=k, pb=pb: monte_carlo_preference(
                               Question([0.4, 0.6], reward_levels=[0, 1], reward_probs=pb),
                               Objective(beta=0.5, group_size=G, advantage="pass_at_k", pass_k=k), [0.4, 0.6],
                               n_groups=40_000, seed=3),
                           lambda v, w=want: within(v, w), ["reward_preference"]))
    q = lambda: Question(pi, reward_levels=levels, reward_probs=probs)  # noqa: E731
    o = lambda: Objective(beta=0.5, group_size=4)  # noqa: E731
    for lab, call, names in [
        ("n_groups=1e4 (a float)", lambda: monte_carlo_preference(q(), o(), pi, n_groups=1e4), ["n_groups"]),
        ("n_groups=True", lambda: monte_carlo_preference(q(), o(), pi, n_groups=True), ["n_groups", "True"]),
        ("seed=-2**40", lambda: monte_carlo_preference(q(), o(), pi, seed=-2**40), ["seed", "-1099511627776"]),
        ("seed=2.5", lambda: monte_carlo_preference(q(), o(), pi, seed=2.5), ["seed", "2.5"]),
        ("seed='abc'", lambda: monte_carlo_preference(q(), o(), pi, seed="abc"), ["seed", "'abc'"]),
        ("a reward_sampler returning one reward too few",
         lambda: monte_carlo_preference(None, o(), pi, n_groups=100, reward_sampler=lambda out, rng: np.zeros(np.size(out) - 1)),
         ["reward_sampler"]),
        ("a reward_sampler returning +inf", lambda: monte_carlo_preference(
            None, o(), pi, n_groups=100, reward_sampler=lambda out, rng: np.where(out == 0, np.inf, 1.0)),
         ["reward_sampler", "inf"]),
        ("a reward_sampler returning strings", lambda: monte_carlo_preference(
            None, o(), pi, n_groups=100, reward_sampler=lambda out, rng: np.full(np.shape(out), "x")),
         ["reward_sampler"]),
        ("a reward_sampler that raises", lambda: monte_carlo_preference(
            None, o(), pi, n_groups=100, reward_sampler=lambda out, rng: 1 / 0), ["reward_sampler"]),
        ("pi of 2 entries for 3 outputs", lambda: monte_carlo_preference(q(), o(), [0.5, 0.5]), ["pi", "3"]),
    ]:
        out.append(_err(G_, f"monte_carlo_preference {lab}", call, names))
    return out


# ---------------------------------------------------------------- batch normalisers on one-token answers
def batch_norm_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: batch normalisers at token level on one-token answers (= the sequence level, reference)"
    out = []
    for lt, gpb, G, p, beta, fam in [("bnpo", 1, 4, 0.3, 0.2, {}), ("dapo", 3, 5, 0.2, 0.5, {}),
                                     ("token-mean", 1, 3, 0.6, 0.1, dict(advantage="rloo")),
                                     ("dapo", INF, 6, 0.1, 0.3, dict(filter_ties=True)),
                                     ("dr_grpo", INF, 4, 0.4, 0.7, dict(normalization="shift")),
                                     ("seq-mean-token-sum-norm", INF, 8, 0.25, 0.15, {}),
                                     ("bnpo", 7, 2, 0.05, 0.05, dict(entropy_coef=0.1)),
                                     ("token-mean", 2, 4, 0.5, 2.0, dict(advantage="reinforce_pp")),
                                     ("grpo", INF, 3, 0.35, 0.4, dict(std_ddof=1, std_eps=1e-4)),
                                     ("seq-mean-token-mean", INF, 5, 0.15, 0.25, dict(advantage="pass_at_k", pass_k=2))]:
        kw = dict(fam, group_size=G)
        want = ref.binary_rest(p, [[0, 1], [1, 0]], [0.0, 1.0], beta, **_ref_kw(kw))
        lab = f"stationary_policy level=token loss_type={lt} groups_per_batch={gpb} {_fmt(kw)} p={p} beta={beta}"
        out.append(_ok(G_, lab + f" -> {want:.8g}",
                       lambda kw=kw, lt=lt, gpb=gpb, p=p, beta=beta: stationary_policy(
                           Question([p, 1 - p], rewards=[1, 0]),
                           Objective(beta=beta, level="token", loss_type=lt, groups_per_batch=gpb, **kw)),
                       lambda v, want=want: ref.near(_pi(v)[0], want, 1e-7) or f"x = {_pi(v)[0]!r} != {want!r}"))
    return out


# ---------------------------------------------------------------- the family's refusals (new spellings)
def family_refusal_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: GRPO family fields, bad values (one clean error naming the field and value)"
    out = []
    for lab, kw, names in [
        ("advantage='RLOO' (capitals)", dict(advantage="RLOO"), ["advantage", "'RLOO'"]),
        ("advantage='reinforce++'", dict(advantage="reinforce++"), ["advantage", "'reinforce++'"]),
        ("advantage=b'rloo' (bytes)", dict(advantage=b"rloo"), ["advantage", "b'rloo'"]),
        ("advantage=('rloo',) (a tuple)", dict(advantage=("rloo",)), ["advantage", "('rloo',)"]),
        ("pass_k=3 with G=2", dict(advantage="pass_at_k", pass_k=3, group_size=2), ["pass_k", "3"]),
        ("pass_k=np.int8(-2)", dict(advantage="pass_at_k", pass_k=np.int8(-2), group_size=4), ["pass_k", "-2"]),
        ("pass_k=2.0000001", dict(advantage="pass_at_k", pass_k=2.0000001, group_size=4), ["pass_k"]),
        ("pass_k=b'2' (bytes)", dict(advantage="pass_at_k", pass_k=b"2", group_size=4), ["pass_k", "b'2'"]),
        ("pass_k=inf with G=inf", dict(advantage="pass_at_k", pass_k=INF, group_size=INF), ["pass_k", "inf"]),
        ("pass_k=2 with advantage='reinforce_pp'", dict(advantage="reinforce_pp", pass_k=2, group_size=4),
         ["pass_k", "reinforce_pp"]),
        ("filter_ties='True' (text)", dict(filter_ties="True"), ["filter_ties", "'True'"]),
        ("filter_ties=1.0", dict(filter_ties=1.0), ["filter_ties", "1.0"]),
        ("filter_ties='' (empty text)", dict(filter_ties=""), ["filter_ties", "''"]),
        ("filter_ties with kl_placement='advantage'", dict(filter_ties=True, kl_estimator="k1",
                                                            kl_placement="advantage"), ["filter_ties", "advantage"]),
        ("entropy_coef=-1e-9", dict(entropy_coef=-1e-9), ["entropy_coef", "-1e-09"]),
        ("entropy_coef=np.float16(-0.001)", dict(entropy_coef=np.float16(-0.001)), ["entropy_coef"]),
        ("entropy_coef=b'0.1' (bytes)", dict(entropy_coef=b"0.1"), ["entropy_coef", "b'0.1'"]),
        ("entropy_coef=-inf", dict(entropy_coef=-INF), ["entropy_coef", "-inf"]),
        ("entropy_coef=np.array([0.1, 0.2])", dict(entropy_coef=np.array([0.1, 0.2])), ["entropy_coef"]),
        ("entropy_coef with kl_placement='reward'", dict(entropy_coef=0.1, kl_estimator="k1", kl_placement="reward"),
         ["entropy_coef", "reward"]),
        ("variance_eps=-0.1", dict(variance_eps=-0.1), ["variance_eps", "-0.1"]),
        ("variance_eps=inf", dict(variance_eps=INF), ["variance_eps", "inf"]),
        ("std_eps=1e400 (inf from a literal)", dict(std_eps=float("1e400")), ["std_eps", "inf"]),
        ("groups_per_batch=-1.5", dict(level="token", loss_type="dapo", groups_per_batch=-1.5),
         ["groups_per_batch", "-1.5"]),
        ("groups_per_batch='inf'", dict(level="token", loss_type="dapo", groups_per_batch="inf"),
         ["groups_per_batch", "'inf'"]),
        ("importance_level='Token' (capital)", dict(importance_level="Token"), ["importance_level", "'Token'"]),
        ("loss_type='dapo\\n' (a newline)", dict(level="token", loss_type="dapo\n"), ["loss_type", "'dapo\\n'"]),
        ("loss_type='dapo ' (a trailing space)", dict(level="token", loss_type="dapo "), ["loss_type", "'dapo '"]),
        ("std_ddof=np.int64(3)", dict(std_ddof=np.int64(3)), ["std_ddof", "3"]),
        ("std_ddof=np.float64(0.999)", dict(std_ddof=np.float64(0.999)), ["std_ddof", "0.999"]),
    ]:
        out.append(_err(G_, f"Objective({lab})", lambda kw=kw: Objective(**dict(dict(beta=0.2, group_size=4), **kw)),
                        names))
    # beta = 0 without a bonus is a valid, unregularised objective; a stationary query refuses it
    # (NoStationaryPolicy, a clean refusal naming beta and entropy_coef)
    out.append(_err(G_, "stationary_policy with Objective(beta=0, entropy_coef=0, advantage='rloo') (nothing regularises)",
                    lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                              Objective(beta=0, group_size=4, advantage="rloo")),
                    ["beta", "entropy_coef"]))
    out.append(_either(G_, "Objective(beta=-0.0, entropy_coef=0.1) (a negative zero: the bonus alone, beta +0)",
                       lambda: Objective(beta=-0.0, group_size=4, entropy_coef=0.1),
                       lambda v: (v.beta == 0 and math.copysign(1.0, v.beta) > 0) or f"beta kept as {v.beta!r}",
                       ["beta"]))
    return out


# ---------------------------------------------------------------- objects: replace, copy, pickle, repr, eq, hash
def object_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: Question / Objective as Python objects (replace, copy, pickle, repr, ==, hash)"
    out = []
    objs = {
        "rloo G=5": lambda: Objective(beta=0.3, group_size=5, advantage="rloo"),
        "pass@k G=6 k=2 ties": lambda: Objective(beta=0.3, group_size=6, advantage="pass_at_k", pass_k=2, filter_ties=True),
        "entropy only": lambda: Objective(beta=0, group_size=3, entropy_coef=0.25),
        "dapo batch 4": lambda: Objective(beta=0.1, level="token", loss_type="dapo", groups_per_batch=4, group_size=8),
        "G=inf reinforce_pp": lambda: Objective(beta=0.7, group_size=INF, advantage="reinforce_pp"),
        "clamped k3 reward": lambda: Objective(beta=0.05, group_size=4, kl_estimator="k3", kl_placement="reward",
                                               kl_log_ratio_clamp=20.0, kl_value_clamp=10.0),
    }
    for name, mk in objs.items():
        out.append(_ok(G_, f"pickle round trip of Objective {name}: equal, same hash",
                       lambda mk=mk: (mk(), pickle.loads(pickle.dumps(mk(), protocol=5))),
                       lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1])) or f"{v[1]!r} != {v[0]!r}"))
        out.append(_ok(G_, f"eval(repr(Objective {name})) == it",
                       lambda mk=mk: (mk(), repr(mk())),
                       lambda v: (_eval_repr(v[1]) == v[0]) or f"repr {v[1]} evaluates to something else"))
        out.append(_ok(G_, f"copy.deepcopy(Objective {name}) == it and usable as a dict key",
                       lambda mk=mk: (mk(), copy.deepcopy(mk())),
                       lambda v: ({v[0]: 1}[v[1]] == 1) or "not found"))
    out.append(_ok(G_, "Objective(penalty='direct') == Objective(kl_estimator='k3_ratio') and hashes equal",
                   lambda: (Objective(beta=0.2, penalty="direct"), Objective(beta=0.2, kl_estimator="k3_ratio")),
                   lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1])) or f"{v[0]!r} vs {v[1]!r}"))
    out.append(_ok(G_, "Objective(beta=0.5) != Objective(beta=0.5, advantage='rloo')",
                   lambda: (Objective(beta=0.5), Objective(beta=0.5, advantage="rloo")), lambda v: v[0] != v[1]))
    out.append(_ok(G_, "Objective(group_size=np.float32(6.0)) == Objective(group_size=6) (an integer-valued float32)",
                   lambda: (Objective(beta=0.5, group_size=np.float32(6.0)), Objective(beta=0.5, group_size=6)),
                   lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1]) and type(v[0].group_size) is int)
                   or f"{v[0].group_size!r}"))
    out.append(_ok(G_, "Objective(pass_k=np.int64(2)) == Objective(pass_k=2)",
                   lambda: (Objective(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=np.int64(2)),
                            Objective(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=2)),
                   lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1]))))
    out.append(_ok(G_, "Objective(entropy_coef=np.float32(0.25)) is stored as a Python float 0.25",
                   lambda: Objective(beta=0.5, entropy_coef=np.float32(0.25)),
                   lambda v: (type(v.entropy_coef) is float and v.entropy_coef == 0.25) or repr(v.entropy_coef)))
    for lab, change, names in [
        ("advantage='pass_at_k' without pass_k", dict(advantage="pass_at_k"), ["pass_k"]),
        ("entropy_coef=-0.5", dict(entropy_coef=-0.5), ["entropy_coef", "-0.5"]),
        ("group_size=1", dict(group_size=1), ["group_size", "1"]),
        ("beta=-0.5 (rloo)", dict(beta=-0.5), ["beta", "-0.5"]),
        ("filter_ties='no'", dict(filter_ties="no"), ["filter_ties", "'no'"]),
        ("advantage='pass_at_k', pass_k=9 (k > G = 5)", dict(advantage="pass_at_k", pass_k=9), ["pass_k", "9"]),
    ]:
        out.append(_err(G_, f"dataclasses.replace(rloo Objective, {lab})",
                        lambda change=change: dataclasses.replace(Objective(beta=0.3, group_size=5, advantage="rloo"),
                                                                  **change), names))
    out.append(_ok(G_, "dataclasses.replace(rloo Objective, beta=0): valid, unregularised (no stationary policy)",
                   lambda: dataclasses.replace(Objective(beta=0.3, group_size=5, advantage="rloo"), beta=0),
                   lambda v: (v.beta == 0.0 and not v.regularised and v.advantage == "rloo") or repr(v)))
    out.append(_ok(G_, "dataclasses.replace(pass@k G=6 k=2, group_size=8) keeps k=2 and solves like a fresh one",
                   lambda: (dataclasses.replace(Objective(beta=0.3, group_size=6, advantage="pass_at_k", pass_k=2),
                                                group_size=8),
                            Objective(beta=0.3, group_size=8, advantage="pass_at_k", pass_k=2)),
                   lambda v: v[0] == v[1] or f"{v[0]!r}"))
    out.append(_ok(G_, "dataclasses.replace(Objective(penalty='direct'), beta=0.4): still the direct penalty",
                   lambda: dataclasses.replace(Objective(beta=0.2, penalty="direct"), beta=0.4),
                   lambda v: (v.regime == "direct" and v.beta == 0.4) or f"{v!r}"))
    out.append(_err(G_, "setting q.pi_ref on a Question", lambda: setattr(Question([0.5, 0.5], rewards=[1, 0]),
                                                                          "pi_ref", [0.1, 0.9]), ["pi_ref"]))
    qs = {
        "three levels, one never reached": lambda: Question([0.3, 0.7], reward_levels=[-1, 0, 2],
                                                            reward_probs=[[0.2, 0.0, 0.8], [0.6, 0.0, 0.4]]),
        "labels and answers": lambda: Question([0.2, 0.3, 0.5], rewards=[1, 0, 0], labels=["x", "y", "z"],
                                               answers=[("A", "B"), ("A", "C"), ("D",)]),
        "a 3x3 preference matrix with a tie": lambda: Question([0.2, 0.4, 0.4], preference=[[0.5, 0.5, 0.9],
                                                                                             [0.5, 0.5, 0.7],
                                                                                             [0.1, 0.3, 0.5]]),
        "1,000 outputs": lambda: Question(np.full(1000, 1e-3), rewards=np.arange(1000) / 999),
    }
    for name, mk in qs.items():
        out.append(_ok(G_, f"pickle round trip of Question ({name}): equal, same hash",
                       lambda mk=mk: (mk(), pickle.loads(pickle.dumps(mk()))),
                       lambda v: (v[0] == v[1] and hash(v[0]) == hash(v[1])) or f"{v[1]!r}"))
        out.append(_ok(G_, f"copy.copy / deepcopy of Question ({name}) equal to it",
                       lambda mk=mk: (mk(), copy.copy(mk()), copy.deepcopy(mk())),
                       lambda v: (v[0] == v[1] == v[2]) or "differs"))
        out.append(_ok(G_, f"repr of Question ({name}) is one line naming pi_ref",
                       lambda mk=mk: repr(mk()), lambda v: ("pi_ref" in v and "\n" not in v) or v))
    out.append(_ok(G_, "Question([0.5, 0.5], rewards=[1, 0]) != Question([0.5, 0.5], rewards=[0, 1])",
                   lambda: (Question([0.5, 0.5], rewards=[1, 0]), Question([0.5, 0.5], rewards=[0, 1])),
                   lambda v: v[0] != v[1]))
    out.append(_ok(G_, "Question == a non-Question (a list) is False, no error",
                   lambda: Question([0.5, 0.5], rewards=[1, 0]) == [0.5, 0.5], lambda v: v is False))
    out.append(_ok(G_, "a set of 3 Questions with one duplicate (pickled) has 2 members",
                   lambda: {Question([0.5, 0.5], rewards=[1, 0]), pickle.loads(pickle.dumps(Question([0.5, 0.5], rewards=[1, 0]))),
                            Question([0.4, 0.6], rewards=[1, 0])}, lambda v: len(v) == 2 or len(v)))
    # a pickled objective solves identically
    out.append(_ok(G_, "stationary_policy with a pickled-and-loaded rloo objective = with the original (bitwise)",
                   lambda: (stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                              Objective(beta=0.2, group_size=5, advantage="rloo")).pi,
                            stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), pickle.loads(pickle.dumps(
                                Objective(beta=0.2, group_size=5, advantage="rloo")))).pi),
                   lambda v: np.array_equal(v[0], v[1])))
    return out


def _eval_repr(text):
    from grpo_theory import Objective, Question  # noqa: F401  (names the repr may use)
    return eval(text, {"Objective": Objective, "Question": Question, "inf": INF, "math": math, "nan": math.nan,
                       "np": np, "array": np.array})


# ---------------------------------------------------------------- predict in Python: DataFrames, arrays, id_column
def predict_py_cases() -> list[dict]:
    import pandas as pd

    from grpo_theory import Objective
    from grpo_theory.predict import predict, read_samples

    G_ = "API: predict / read_samples with DataFrames and arrays (pred against Eq. 14 at G = 2)"
    out = []
    beta = 0.3
    o = lambda: Objective(beta=beta, group_size=2)  # noqa: E731

    def eq14_rows(want_ids, ns, cs):
        def check(v):
            t = v.table
            if [str(x) for x in t["prompt_id"]] != [str(x) for x in want_ids]:
                return f"ids {list(t['prompt_id'])} != {want_ids}"
            for (n, c), got in zip(zip(ns, cs), t["pred"]):
                p = c / n
                want = 0.0 if c == 0 else (1.0 if c == n else ref.eq14(p, beta))
                if 0 < c < n and not ref.near(got, want, 1e-7):
                    return f"pred {got} != {want} at {c}/{n}"
            return True
        return check
    ids, ns, cs = ["q1", "q2", "q3"], [10, 40, 7], [3, 31, 1]
    for lab, mk in [
        ("a DataFrame with a RangeIndex starting at 100", lambda: pd.DataFrame({"prompt_id": ids, "n": ns, "correct": cs},
                                                                              index=range(100, 103))),
        ("a DataFrame with a DatetimeIndex", lambda: pd.DataFrame({"prompt_id": ids, "n": ns, "correct": cs},
                                                                  index=pd.date_range("2026-01-01", periods=3))),
        ("a DataFrame with n and correct as int8", lambda: pd.DataFrame({"prompt_id": ids, "n": np.int8(ns),
                                                                          "correct": np.int8(cs)})),
        ("a DataFrame with nullable UInt8 counts", lambda: pd.DataFrame({"prompt_id": ids, "n": pd.array(ns, dtype="UInt8"),
                                                                          "correct": pd.array(cs, dtype="UInt8")})),
        ("a DataFrame with pandas 'string' dtype ids", lambda: pd.DataFrame({"prompt_id": pd.array(ids, dtype="string"),
                                                                             "n": ns, "correct": cs})),
        ("a DataFrame with an extra text column", lambda: pd.DataFrame({"prompt_id": ids, "n": ns, "correct": cs,
                                                                        "note": ["x", None, "z"]})),
        ("a DataFrame with columns in another order", lambda: pd.DataFrame({"correct": cs, "n": ns, "prompt_id": ids})),
        ("a DataFrame of per-sample float32 rewards with an extra 'step' column", lambda: pd.DataFrame(
            {"prompt_id": [i for i, n in zip(ids, ns) for _ in range(n)],
             "reward": np.array([1.0 if j < c else 0.0 for n, c in zip(ns, cs) for j in range(n)], np.float32),
             "step": 0})),
    ]:
        out.append(_ok(G_, f"predict({lab})", lambda mk=mk: predict(mk(), o()), eq14_rows(ids, ns, cs)))
    from decimal import Decimal
    out.append(_either(G_, "predict(a DataFrame of Decimal counts, object dtype) (read, or refused naming n)",
                       lambda: predict(pd.DataFrame({"prompt_id": ids, "n": [Decimal(x) for x in ns],
                                                     "correct": [Decimal(x) for x in cs]}), o()),
                       eq14_rows(ids, ns, cs), ["n"]))
    out.append(_ok(G_, "predict(DataFrame with 'question' ids, id_column='question')",
                   lambda: predict(pd.DataFrame({"question": ids, "n": ns, "correct": cs}), o(), id_column="question"),
                   lambda v: eq14_rows(ids, ns, cs)(v) if "prompt_id" in v.table else
                   eq14_rows(ids, ns, cs)(type("V", (), {"table": v.table.rename(columns={"question": "prompt_id"})}))))
    out.append(_ok(G_, "predict(2-d int array of (n, correct) rows): ids 0, 1, 2",
                   lambda: predict(np.array(list(zip(ns, cs))), o()), eq14_rows([0, 1, 2], ns, cs)))
    out.append(_ok(G_, "predict(2-d uint16 array)", lambda: predict(np.array(list(zip(ns, cs)), dtype=np.uint16), o()),
                   eq14_rows([0, 1, 2], ns, cs)))
    out.append(_ok(G_, "predict(structured array with prompt_id, n, correct fields)",
                   lambda: predict(np.array(list(zip(ids, ns, cs)), dtype=[("prompt_id", "U4"), ("n", "i4"), ("correct", "i4")]),
                                   o()), eq14_rows(ids, ns, cs)))
    out.append(_ok(G_, "predict(a Fortran-ordered 2-d float array)",
                   lambda: predict(np.asfortranarray(np.array(list(zip(ns, cs)), float)), o()), eq14_rows([0, 1, 2], ns, cs)))
    out.append(_ok(G_, "predict(read_samples(DataFrame)) = predict(DataFrame)",
                   lambda: predict(read_samples(pd.DataFrame({"prompt_id": ids, "n": ns, "correct": cs})), o()),
                   eq14_rows(ids, ns, cs)))
    big = 100_000
    rng = np.random.default_rng(5)
    nb = rng.integers(8, 64, big)
    cb = rng.binomial(nb, 0.4)
    out.append(_ok(G_, f"predict({big:,} prompts as a DataFrame) under a minute, pred = Eq. 14 on 200 rows",
                   lambda: predict(pd.DataFrame({"prompt_id": [f"p{i}" for i in range(big)], "n": nb, "correct": cb}), o()),
                   lambda v: _big_check(v, nb, cb, beta)))
    for lab, mk, names in [
        ("a DataFrame with correct > n", lambda: pd.DataFrame({"prompt_id": ["a"], "n": [5], "correct": [6]}), ["correct", "6"]),
        ("a DataFrame with a NaN count", lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": [5, np.nan], "correct": [2, 1]}),
         ["n", "nan"]),
        ("a DataFrame with n = 2.5", lambda: pd.DataFrame({"prompt_id": ["a"], "n": [2.5], "correct": [1]}), ["n", "2.5"]),
        ("an empty DataFrame with the columns", lambda: pd.DataFrame({"prompt_id": [], "n": [], "correct": []}), ["empty"]),
        ("a DataFrame with duplicate column names", lambda: pd.DataFrame([["a", 5, 2, 3]], columns=["prompt_id", "n", "correct", "n"]),
         ["n"]),
        ("a 1-d array", lambda: np.array([10, 3]), ["1"]),
        ("a 3-column float array", lambda: np.ones((2, 3)), ["3"]),
        ("an object array of strings", lambda: np.array([["a", "b"]], dtype=object), ["'a'"]),
        ("a pandas Series", lambda: pd.Series([1, 2, 3]), ["Series"]),
        ("a dict of lists", lambda: {"prompt_id": ids, "n": ns, "correct": cs}, ["dict"]),
        ("a DataFrame, id_column='qid' missing", lambda: pd.DataFrame({"prompt_id": ids, "n": ns, "correct": cs}), ["qid"]),
        ("a DataFrame with a None prompt id", lambda: pd.DataFrame({"prompt_id": ["a", None], "n": [5, 6], "correct": [1, 2]}),
         ["None"]),
    ]:
        kw = dict(id_column="qid") if "qid" in lab else {}
        out.append(_err(G_, f"predict({lab})", lambda mk=mk, kw=kw: predict(mk(), o(), **kw), names))
    return out


def _big_check(v, nb, cb, beta):
    t = v.table
    if len(t) != len(nb):
        return f"{len(t)} rows"
    idx = np.random.default_rng(0).choice(len(nb), 200, replace=False)
    for i in idx:
        c, n = int(cb[i]), int(nb[i])
        if 0 < c < n and not ref.near(t["pred"].iloc[i], ref.eq14(c / n, beta), 1e-7):
            return f"row {i}: {t['pred'].iloc[i]} != {ref.eq14(c / n, beta)}"
    return True


# ---------------------------------------------------------------- results fed back in
def feedback_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference, stationary_points, stationary_policy
    from grpo_theory.predict import predict

    G_ = "API: results fed back in"
    out = []
    q = lambda: Question([0.3, 0.7], rewards=[1, 0])  # noqa: E731
    o = lambda: Objective(beta=0.2, group_size=4, advantage="rloo")  # noqa: E731
    out.append(_either(G_, "reward_preference(q, obj, pi=a StationaryPoint) = at its .pi",
                       lambda: (reward_preference(q(), o(), stationary_policy(q(), o())),
                                reward_preference(q(), o(), stationary_policy(q(), o()).pi)),
                       lambda v: np.array_equal(v[0], v[1]), ["StationaryPoint"]))
    out.append(_err(G_, "stationary_policy(a StationaryPointSet, obj)",
                    lambda: stationary_policy(stationary_points(q(), o()), o()), ["StationaryPointSet"]))
    out.append(_err(G_, "stationary_policy(q, a Question as the objective)",
                    lambda: stationary_policy(q(), q()), ["Question"]))
    out.append(_err(G_, "Question(pi_ref=a StationaryPointSet, rewards=[1, 0])",
                    lambda: Question(stationary_points(q(), o()), rewards=[1, 0]), ["pi_ref"]))
    out.append(_ok(G_, "the policy as the next question's pi_ref: Eq. 14 composes (x2 from x1)",
                   lambda: (stationary_policy(Question(list(stationary_policy(q(), Objective(beta=0.5)).pi), rewards=[1, 0]),
                                              Objective(beta=0.5)).pi[0]),
                   lambda v: ref.near(v, ref.eq14(ref.eq14(0.3, 0.5), 0.5), 1e-7) or f"{v}"))
    out.append(_ok(G_, "predict(prediction.table) (its own output as samples): the same pred",
                   lambda: _predict_twice(), lambda v: np.allclose(v[0], v[1], rtol=0, atol=0) or f"{v}"))
    out.append(_ok(G_, "Objective(**dataclasses.asdict(obj)) rebuilds an rloo objective with a bonus",
                   lambda: _rebuild(Objective(beta=0.2, group_size=5, advantage="rloo", entropy_coef=0.1)),
                   lambda v: v[0] == v[1] or f"{v}"))
    out.append(_ok(G_, "Objective(**asdict(pass@k with ties filtered)) rebuilds it",
                   lambda: _rebuild(Objective(beta=0.2, group_size=6, advantage="pass_at_k", pass_k=3, filter_ties=True)),
                   lambda v: v[0] == v[1] or f"{v}"))
    out.append(_ok(G_, "Objective(**asdict(Objective(penalty='direct'))) rebuilds it",
                   lambda: _rebuild(Objective(beta=0.2, penalty="direct")), lambda v: v[0] == v[1] or f"{v}"))
    _ = predict
    return out


def _rebuild(obj):
    from grpo_theory import Objective
    d = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}
    return obj, Objective(**d)


def _predict_twice():
    import pandas as pd

    from grpo_theory import Objective
    from grpo_theory.predict import predict
    df = pd.DataFrame({"prompt_id": ["a", "b", "c"], "n": [12, 30, 5], "correct": [4, 29, 0]})
    p1 = predict(df, Objective(beta=0.4, group_size=4, advantage="rloo"))
    p2 = predict(p1.table, Objective(beta=0.4, group_size=4, advantage="rloo"))
    return p1.table["pred"].to_numpy(), p2.table["pred"].to_numpy()


def all_api_cases() -> list[dict]:
    return (binary_family_cases() + multi_family_cases() + preference_cases() + monte_carlo_cases()
            + batch_norm_cases() + family_refusal_cases() + object_cases() + predict_py_cases() + feedback_cases())
