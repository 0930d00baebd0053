"""Cases of the fifteenth hostile audit (issue 45), part one: the public Python API.

Chosen from a count of how often the earlier rounds' files name each public callable (``scratch`` script in the
round's commit message: ``api_contract.public_callables`` against ``tests/hostile_audit*.py`` and the sweeps), least
named first, and from what no round checked against its own enumeration:

* ``reward_preference`` on random questions (2-4 outputs, G = 2..5, random rewards, every normalisation, ddof,
  epsilon, RLOO) against the reference's ordered-tuple enumeration of ``P_G``;
* binary stationary policies at extreme but valid ``pi_ref`` / ``beta`` (1e-12 .. 1 - 1e-9, 1e-8 .. 1e4) against
  Eq. 14, Eq. 15, the G = 2 direct form and shift+direct = RLHF, compared in the smaller of ``x`` and ``1 - x``;
  at finite G (3 .. 1000) against the reference's bisection of the rest condition on the binomial form;
* the GRPO family and the trainer KL settings whose answer is known: ddof 1 and std_eps at G = 2 (Eq. 14 with the
  margin ``gamma`` they imply), k2 / k3 x ratio (direct), k3 (reverse), k1 in the advantage (direct), clamps that
  never bind, RLOO on two outputs;
* three and four outputs (random and deterministic rewards): Eq. 11's / the direct rest's residual at the library's
  point computed with the enumerated ``P_G``, and the reference RK4 flow's end;
* ``log_pooling`` / ``rlhf_optimum`` at extreme ``beta`` and reward spreads; ``dynamics.flow`` / ``ascent`` against
  the reference's RK4 / Euler on the logits, with horizons, time grids and tolerances at their extremes;
* answer trees of odd shapes (deep equal-length chains solve the sequence-level question);
* numpy / pandas inputs (float32, float16, int8 overflow, uint8, complex, object, masked, read-only,
  non-contiguous, 0-d, pandas NA, categorical) in the closed forms, ``Question``, ``Objective``, ``predict``;
* the least-named callables (``signed_part``, ``sinh_grid``, ``pass_at_k_bound``, ``dedupe``, ``summary_columns``,
  ``Question.confidence_margin`` / ``pairwise_preference``, the framework family readers) with bad arguments;
* ``predict`` / ``samples_from_counts`` on odd but valid samples: one prompt, all correct, none correct, counts of
  10^15, ties, many prompts; ``p_ref``, Jeffreys' interval, ``pred``, both KLs and pass@k against the reference.

Tolerances (each from both sides' accuracy). ``P_G``: the reference's ``fsum`` of exact products (1e-16 relative
per term) against the library's log-space count-vector sums (documented ~1e-14): 1e-10 relative + 1e-13 absolute.
Closed forms: the library documents residuals below 1e-10 of ``beta``; at a root with drift slope ``|f'| >= 1/2``
(Eq. 14: ``|f'| = |1 - 2x + ... | + beta``) the position error is below 2e-10 beta, so 1e-8 relative of the smaller
of ``x``, ``1 - x`` with 1.2e-16 absolute (one rounding of ``x`` near 1, where ``1 - x`` is formed from ``x``).
Finite G: the reference bisects to the last bit; 1e-7 relative (round 14's argument). Residuals at the library's
point: 1e-8 (its 1e-10 plus the enumeration's rounding). Flows: LSODA at rtol 1e-9 / atol 1e-11 keeps a global
error below ~1e-7 on these horizons, the reference RK4 (dt 0.005) below 1e-9: 1e-6 absolute in ``pi``. Euler
``ascent``: the same arithmetic in both, 1e-12 absolute. KL values: 1e-12 relative, and 1e-27 absolute (at
``lr = 1e-12`` the value ``lr^2/2 = 5e-25`` is a difference of terms of size ``|lr|``, whose rounding,
2.2e-16 ``|lr|``, bounds any double computation from ``lr`` without a series for small ``lr``). ``predict``'s table: float64, 1e-9 relative.
"""

from __future__ import annotations

import math
from fractions import Fraction
from decimal import Decimal

import numpy as np

import hostile_audit_round15_ref as ref
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi

INF = math.inf


def _lazy(fn, *args, **kw):
    memo = []

    def get():
        if not memo:
            memo.append(fn(*args, **kw))
        return memo[0]
    return get


def _small(pi, want, rtol):
    """Compare a library policy on two outputs with the reference's ``(x, 1 - x)`` in the smaller component."""
    pi = _pi(pi)
    x, y = want
    if x <= 0.5:
        return ref.close(pi[0], x, rtol, 1e-300)
    return ref.close(pi[1], y, rtol, 1.2e-16)


# ---------------------------------------------------------------- P_G against the enumeration
def pg_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference

    G_ = "API: reward_preference against the ordered-tuple enumeration"
    rng = np.random.default_rng(1515)
    out = []
    for i in range(40):
        n = int(rng.integers(2, 5))
        G = int(rng.integers(2, 6 if n <= 3 else 5))
        pi_ref = rng.dirichlet(np.ones(n))
        pi = rng.dirichlet(np.ones(n) * 0.7)
        kind = ["scale", "shift", "rloo"][i % 3]
        ddof = int(rng.integers(0, 2)) if kind == "scale" else 0
        eps = float(rng.choice([0.0, 0.01, 0.5])) if kind == "scale" else 0.0
        stochastic = i % 4 == 1
        if stochastic:
            levels = [0.0, 0.5, 1.0]
            probs = rng.dirichlet(np.ones(3), size=n)
            q_kw = dict(reward_levels=levels, reward_probs=probs.tolist())
            laws = [[(lv, float(pr)) for lv, pr in zip(levels, row)] for row in probs]
            rew = None
        else:
            rew = np.round(rng.normal(size=n) * [1, 10, 1e-3, 1e3][i % 4], 6)
            if i % 7 == 0:
                rew[-1] = rew[0]                             # a tie between two outputs
            q_kw, laws = {}, ref.det_laws(rew)
        okw = dict(beta=1.0, group_size=G)
        if kind == "rloo":
            okw["advantage"] = "rloo"
        else:
            okw.update(normalization=kind, std_ddof=ddof, std_eps=eps)
        if kind == "scale" and ddof == 1 and G == 2:
            pass
        want = ref.enum_pg(list(pi), laws, G, kind, ddof, eps)
        label = (f"reward_preference n={n} G={G} {kind} ddof={ddof} eps={eps} "
                 f"{'random rewards' if stochastic else f'rewards={list(rew)}'} #{i}")
        out.append(_ok(G_, label,
                       lambda pi_ref=pi_ref, rew=rew, q_kw=q_kw, okw=okw, pi=pi:
                       reward_preference(Question(pi_ref, rew, **q_kw), Objective(**okw), pi),
                       lambda v, want=want: ref.close(v, want, 1e-10, 1e-13)))
    return out


# ---------------------------------------------------------------- binary closed forms at extremes
def _y_eq15(p, beta):
    b2 = beta * beta
    s = math.sqrt(1 + 4 * b2 * p * (1 - p))
    return 2 * b2 * (1 - p) ** 2 / (1 + 2 * b2 * (1 - p) + s)


def _xy(form, p, beta):
    if form == "Eq. 14 (G=2 reverse)":
        y = ref.eq14_one_minus(p, beta)
        return (1 - y if y < 0.5 else ref.eq14(p, beta)), y
    if form == "Eq. 15 (G=inf reverse)":
        y = _y_eq15(p, beta)
        return (1 - y if y < 0.5 else ref.eq15(p, beta)), y
    if form == "G=2 direct":
        z = ref.logit(p) + 1 / beta
        return ref.expit(z), ref.expit(-z)
    z = ref.logit(p) + (4 / 5) / beta                       # shift + direct, G = 5: RLHF at beta' = 5 beta / 4
    return ref.expit(z), ref.expit(-z)


def binary_extreme_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: binary stationary_policy at extreme pi_ref and beta against the closed forms"
    forms = {"Eq. 14 (G=2 reverse)": dict(group_size=2),
             "Eq. 15 (G=inf reverse)": dict(group_size=INF),
             "G=2 direct": dict(group_size=2, penalty="direct"),
             "shift+direct G=5 (RLHF at 5 beta/4)": dict(group_size=5, penalty="direct", normalization="shift")}
    out = []
    for form, okw in forms.items():
        for p in (1e-12, 1e-5, 0.3, 1 - 1e-9):
            for beta in (1e-8, 1e-3, 1.0, 1e4):
                want = _xy(form, p, beta)
                out.append(_ok(G_, f"{form}: p={p!r} beta={beta!r}",
                               lambda p=p, beta=beta, okw=okw:
                               stationary_policy(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, **okw)),
                               lambda v, want=want: _small(v, want, 1e-8)))
    return out


def finite_g_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: binary stationary_policy at finite G against the reference's bisection"
    out = []
    for G in (3, 4, 7, 16, 64, 1000):
        for p in (0.05, 0.5, 0.95):
            for beta in (0.05, 0.7):
                want = _lazy(ref.binary_rest, p, beta, G)
                out.append(_ok(G_, f"reverse G={G} p={p} beta={beta}",
                               lambda p=p, beta=beta, G=G:
                               stationary_policy(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, group_size=G)),
                               lambda v, want=want: ref.close(_pi(v)[0], want(), 1e-7)))
    for G in (3, 8, 40, 400):
        for p, beta in ((0.2, 0.3), (0.9, 2.0), (0.01, 1.0)):
            want = _lazy(ref.binary_rest, p, beta, G, "direct")
            out.append(_ok(G_, f"direct G={G} p={p} beta={beta}",
                           lambda p=p, beta=beta, G=G:
                           stationary_policy(Question([p, 1 - p], [1.0, 0.0]),
                                             Objective(beta=beta, group_size=G, penalty="direct")),
                           lambda v, want=want: ref.close(_pi(v)[0], want(), 1e-7)))
    return out


# ---------------------------------------------------------------- family and KL settings with known answers
def family_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: family / KL settings whose binary answer is a closed form"
    s2 = 1 / math.sqrt(2)
    rows = [  # (label, objective kwargs, p, beta, reference x)
        ("ddof=1 at G=2: Eq. 14 with gamma = 1/sqrt 2", dict(std_ddof=1), 0.3, 0.4, ref.eq14(0.3, 0.4, s2)),
        ("ddof=1 at G=2, beta=1e-6: Eq. 14 with gamma = 1/sqrt 2", dict(std_ddof=1), 0.6, 1e-6, ref.eq14(0.6, 1e-6, s2)),
        ("std_eps=0.5 at G=2: Eq. 14 with gamma = 1/(1 + 2 eps)", dict(std_eps=0.5), 0.3, 0.4, ref.eq14(0.3, 0.4, 0.5)),
        ("std_eps=1e6 at G=2: Eq. 14 with gamma = 1/(1 + 2e6)", dict(std_eps=1e6), 0.3, 1e-9,
         ref.eq14(0.3, 1e-9, 1 / (1 + 2e6))),
        ("ddof=1 + std_eps=0.1 at G=2: gamma = (1/2)/(1/sqrt 2 + 0.1)", dict(std_ddof=1, std_eps=0.1), 0.45, 0.8,
         ref.eq14(0.45, 0.8, 0.5 / (s2 + 0.1))),
        ("kl_estimator=k3 in the loss = Eq. 14", dict(kl_estimator="k3"), 0.2, 0.3, ref.eq14(0.2, 0.3)),
        ("kl_estimator=k2 in the loss = the G=2 direct form", dict(kl_estimator="k2"), 0.2, 0.3, ref.g2_direct(0.2, 0.3)),
        ("kl_estimator=k3_ratio in the loss = the G=2 direct form", dict(kl_estimator="k3_ratio"), 0.7, 2.0,
         ref.g2_direct(0.7, 2.0)),
        ("kl_estimator=k1 in the advantage = the G=2 direct form", dict(kl_estimator="k1", kl_placement="advantage"),
         0.4, 0.25, ref.g2_direct(0.4, 0.25)),
        ("k3 with a log-ratio clamp of 700 (never binds here) = Eq. 14", dict(kl_estimator="k3", kl_log_ratio_clamp=700.0),
         0.3, 0.5, ref.eq14(0.3, 0.5)),
        ("k3 with a value clamp of 1e300 (never binds) = Eq. 14", dict(kl_estimator="k3", kl_value_clamp=1e300),
         0.3, 0.5, ref.eq14(0.3, 0.5)),
        ("k2 with a log-ratio clamp of 50 (never binds: |lr| = 1.52) = direct", dict(kl_estimator="k2", kl_log_ratio_clamp=50.0),
         0.5, 0.5, ref.g2_direct(0.5, 0.5)),
        ("k3_ratio with both clamps far away = direct", dict(kl_estimator="k3_ratio", kl_log_ratio_clamp=100.0,
                                                             kl_value_clamp=1e6), 0.05, 1.5, ref.g2_direct(0.05, 1.5)),
        ("shift, G=2, reverse: beta (x - p) = (1/2) x (1 - x)", dict(normalization="shift"), 0.3, 0.5,
         ref.eq14(0.3, 0.5, 0.5)),
        ("shift, G=10, reverse, gap 1: gamma = 9/10", dict(normalization="shift", group_size=10), 0.3, 0.5,
         ref.eq14(0.3, 0.5, 0.9)),
        ("shift, G=inf, direct: RLHF at beta", dict(normalization="shift", group_size=INF, penalty="direct"), 0.3, 0.05,
         ref.shift_direct(0.3, 0.05, INF)),
        ("rloo, G=2: A = r_1 - r_2, Eq. 14 with gamma = 1", dict(advantage="rloo"), 0.3, 0.5, ref.eq14(0.3, 0.5)),
        ("rloo, G=5, direct: RLHF at beta (E[A|a] - E[A|b] = gap)", dict(advantage="rloo", group_size=5, penalty="direct"),
         0.3, 0.5, ref.shift_direct(0.3, 0.5, INF)),
        ("rloo, G=3, reverse: beta (x - p) = x (1 - x)", dict(advantage="rloo", group_size=3), 0.1, 2.0,
         ref.eq14(0.1, 2.0)),
        ("groups_per_batch=1 (one group: same expectation) = Eq. 14", dict(groups_per_batch=1), 0.3, 0.5,
         ref.eq14(0.3, 0.5)),
    ]
    out = []
    for label, okw, p, beta, x in rows:
        kw = dict(dict(group_size=2), **okw)
        out.append(_ok(G_, f"{label}: p={p} beta={beta}",
                       lambda p=p, beta=beta, kw=kw:
                       stationary_policy(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, **kw)),
                       lambda v, x=x: ref.close(_pi(v)[0], x, 1e-8)))
    return out


# ---------------------------------------------------------------- three and four outputs
def multi_output_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: stationary_policy on 3-4 outputs: the rest's residual with enumerated P_G, and the RK4 flow's end"
    rng = np.random.default_rng(15)
    out = []
    for i in range(16):
        n = 3 if i < 11 else 4
        G = [2, 3, 4][i % 3] if n == 3 else [2, 3][i % 2]
        pi_ref = rng.dirichlet(np.ones(n) * 2)
        rew = np.round(rng.uniform(0, 1, n), 3)
        beta = float(rng.choice([0.1, 0.4, 1.5]))
        pen = "direct" if i % 4 == 3 else "reverse"
        laws = ref.det_laws(rew)
        okw = dict(beta=beta, group_size=G, penalty=pen)

        def chk(v, pi_ref=pi_ref, laws=laws, G=G, beta=beta, pen=pen):
            pi = _pi(v)
            P = ref.enum_pg(list(pi), laws, G)
            res = (ref.kkt_residual(pi, pi_ref, P, beta) if pen == "reverse"
                   else ref.direct_residual(pi, pi_ref, P, beta))
            if not res < 1e-8:
                return f"rest residual {res:.3g} at {pi}"
            end = ref.rk4_flow(list(pi_ref), laws, G, beta, 200.0 if beta >= 0.4 else 600.0, dt=0.1, penalty=pen)
            return ref.close(pi, end, 0, 1e-3)
        out.append(_ok(G_, f"{pen} n={n} G={G} beta={beta} pi_ref={np.round(pi_ref, 4).tolist()} rewards={rew.tolist()}",
                       lambda pi_ref=pi_ref, rew=rew, okw=okw: stationary_policy(Question(pi_ref, rew), Objective(**okw)),
                       chk))
    # random rewards (levels and probabilities): the residual only
    for i, (G, beta) in enumerate([(2, 0.3), (3, 0.5), (3, 0.05), (4, 1.0)]):
        probs = rng.dirichlet(np.ones(2), size=3)
        pi_ref = rng.dirichlet(np.ones(3))
        laws = [[(0.0, float(r[0])), (1.0, float(r[1]))] for r in probs]

        def chk2(v, pi_ref=pi_ref, laws=laws, G=G, beta=beta):
            pi = _pi(v)
            res = ref.kkt_residual(pi, pi_ref, ref.enum_pg(list(pi), laws, G), beta)
            return True if res < 1e-8 else f"Eq. 11 residual {res:.3g} at {pi}"
        out.append(_ok(G_, f"Bernoulli rewards n=3 G={G} beta={beta} probs={np.round(probs[:, 1], 4).tolist()}",
                       lambda pi_ref=pi_ref, probs=probs, G=G, beta=beta:
                       stationary_policy(Question(pi_ref, reward_levels=[0.0, 1.0], reward_probs=probs.tolist()),
                                         Objective(beta=beta, group_size=G)), chk2))
    return out


# ---------------------------------------------------------------- RLHF and log pooling
def pooling_cases() -> list[dict]:
    from grpo_theory import Question, log_pooling, rlhf_optimum

    G_ = "API: log_pooling / rlhf_optimum at extreme beta and reward spreads"
    out = []
    rows = [
        ([0.5, 0.5], [1.0, 0.0], 1e-300), ([0.5, 0.5], [1.0, 0.0], 1e300), ([0.2, 0.3, 0.5], [1e300, 0.0, -1e300], 1.0),
        ([1e-300, 1 - 1e-300], [700.0, 0.0], 1.0), ([0.25] * 4, [1e-12, 2e-12, 3e-12, 0.0], 1e-12),
        (list(np.full(1000, 1e-3)), list(np.linspace(0, 1, 1000)), 0.01), ([0.1, 0.9], [-5.0, -5.0], 0.3),
        ([0.999999, 1e-6], [0.0, 1.0], 0.05), ([0.3, 0.7], [1.0, 0.0], 5e-324),
        ([0.2, 0.8], [2.0, 1.0], 1e-3),
    ]
    for pi_ref, rew, beta in rows:
        with np.errstate(over="ignore"):
            spread = max(rew) - min(rew)
        lab = f"pi_ref={pi_ref[:3]}{'...' if len(pi_ref) > 3 else ''} rewards={rew[:3]}{'...' if len(rew) > 3 else ''} beta={beta!r}"
        if not math.isfinite(spread):
            out.append(_either(G_, f"log_pooling({lab}) (reward spread overflows)", lambda pi_ref=pi_ref, rew=rew, beta=beta:
                               log_pooling(pi_ref, rew, beta), lambda v: ref.close(v, [1.0, 0.0, 0.0], 0, 1e-300),
                               ["rewards"]))
            continue
        want = ref.log_pool(pi_ref, rew, beta) if beta > 1e-300 else None
        if want is None:
            # r/beta overflows: the mass goes to the best reward (beta -> 0 limit)
            best = int(np.argmax(rew))
            want = [1.0 if i == best else 0.0 for i in range(len(rew))]
        out.append(_either(G_, f"log_pooling({lab})", lambda pi_ref=pi_ref, rew=rew, beta=beta:
                           log_pooling(pi_ref, rew, beta), lambda v, want=want: ref.close(v, want, 1e-10, 1e-300),
                           ["beta"]))
        if len(pi_ref) <= 4 and beta > 1e-300:
            out.append(_either(G_, f"rlhf_optimum(Question({lab}))", lambda pi_ref=pi_ref, rew=rew, beta=beta:
                               rlhf_optimum(Question(pi_ref, rew), beta), lambda v, want=want: ref.close(_pi(v), want, 1e-10, 1e-300),
                               ["beta"]))
    return out


# ---------------------------------------------------------------- dynamics
def dynamics_cases() -> list[dict]:
    from grpo_theory import Objective, Question
    from grpo_theory import dynamics as D

    G_ = "API: dynamics.flow / ascent against the reference RK4 / Euler, and their arguments at the extremes"
    q3 = Question([0.2, 0.3, 0.5], [1.0, 0.5, 0.0])
    q2 = Question([0.3, 0.7], [1.0, 0.0])
    o3 = Objective(beta=0.5, group_size=3)
    o2 = Objective(beta=0.5)
    laws3 = ref.det_laws([1.0, 0.5, 0.0])
    out = []
    for t_end in (0.5, 2.0, 7.0):
        want = _lazy(ref.rk4_flow, [0.2, 0.3, 0.5], laws3, 3, 0.5, t_end, dt=0.005)
        out.append(_ok(G_, f"flow 3 outputs G=3 beta=0.5, t=[0, {t_end}] = RK4", lambda t_end=t_end:
                       D.flow(q3, o3, q3.pi_ref, [0.0, t_end], with_points=False),
                       lambda v, want=want: ref.close(np.asarray(v.pi)[-1], want(), 0, 1e-6)))
    want_d = _lazy(ref.rk4_flow, [0.2, 0.3, 0.5], laws3, 3, 0.5, 3.0, dt=0.005, penalty="direct")
    out.append(_ok(G_, "flow 3 outputs G=3 beta=0.5 direct, t=3 = RK4",
                   lambda: D.flow(q3, Objective(beta=0.5, group_size=3, penalty="direct"), q3.pi_ref, [3.0],
                                  with_points=False),
                   lambda v: ref.close(np.asarray(v.pi)[-1], want_d(), 0, 1e-6)))
    want_s = _lazy(ref.rk4_flow, [0.2, 0.3, 0.5], laws3, 3, 0.5, 2.0, dt=0.005, pi0=[0.6, 0.2, 0.2])
    out.append(_ok(G_, "flow from pi0=[0.6, 0.2, 0.2] (not pi_ref), t=2 = RK4",
                   lambda: D.flow(q3, o3, [0.6, 0.2, 0.2], [2.0], with_points=False),
                   lambda v: ref.close(np.asarray(v.pi)[-1], want_s(), 0, 1e-6)))
    x14 = ref.eq14(0.3, 0.5)
    out.append(_ok(G_, "flow binary t=1e4 (a long horizon) ends at Eq. 14", lambda: D.flow(q2, o2, q2.pi_ref, [1e4]),
                   lambda v: ref.close(np.asarray(v.pi)[-1][0], x14, 1e-7)))
    out.append(_ok(G_, "flow binary t=[0, 0, 0] (repeated times) stays at pi0",
                   lambda: D.flow(q2, o2, q2.pi_ref, [0.0, 0.0, 0.0], with_points=False),
                   lambda v: ref.close(np.asarray(v.pi), [[0.3, 0.7]] * 3, 0, 1e-15)))
    e1 = _lazy(ref.euler_binary, 0.3, 0.5, 2, 1e-300, 1e-300)
    out.append(_ok(G_, "flow binary t=[1e-300] (a tiny horizon) is pi0",
                   lambda: D.flow(q2, o2, q2.pi_ref, [1e-300], with_points=False),
                   lambda v: ref.close(np.asarray(v.pi)[-1][0], 0.3, 1e-15)))
    del e1
    out.append(_ok(G_, "flow binary rtol=1e-3 atol=1e-6 (loose), t=1: within 1e-3 of RK4",
                   lambda: D.flow(q2, o2, q2.pi_ref, [1.0], with_points=False, rtol=1e-3, atol=1e-6),
                   lambda v: ref.close(np.asarray(v.pi)[-1][0], ref.euler_binary(0.3, 0.5, 2, 1.0, 1e-4), 0, 1e-3)))
    out.append(_either(G_, "flow binary rtol=1e-15 atol=1e-18 (tighter than the solver can): result or refusal naming rtol",
                       lambda: D.flow(q2, o2, q2.pi_ref, [1.0], with_points=False, rtol=1e-15, atol=1e-18),
                       lambda v: ref.close(np.asarray(v.pi)[-1][0], ref.euler_binary(0.3, 0.5, 2, 1.0, 1e-4), 0, 1e-6),
                       ["rtol"]))
    bad = [("t unsorted [2, 1]", dict(t=[2.0, 1.0]), ["t"]), ("t with NaN", dict(t=[0.0, math.nan]), ["t"]),
           ("t negative [-1]", dict(t=[-1.0]), ["t"]), ("t 2-d [[1, 2]]", dict(t=[[1.0, 2.0]]), ["t"]),
           ("t = inf", dict(t=[INF]), ["t"]), ("t a string '5'", dict(t="5"), ["t"]),
           ("rtol=0", dict(t=[1.0], rtol=0.0), ["rtol"]), ("rtol=nan", dict(t=[1.0], rtol=math.nan), ["rtol"]),
           ("rtol=-1e-9", dict(t=[1.0], rtol=-1e-9), ["rtol"]), ("atol=-1", dict(t=[1.0], atol=-1.0), ["atol"]),
           ("atol=inf", dict(t=[1.0], atol=INF), ["atol"]), ("rtol='1e-9' (a string)", dict(t=[1.0], rtol="1e-9"), ["rtol"]),
           ("pi0 summing to 0.9", dict(t=[1.0], pi0=[0.2, 0.7]), ["pi0"]),
           ("pi0 of 3 entries for 2 outputs", dict(t=[1.0], pi0=[0.2, 0.3, 0.5]), ["pi0"]),
           ("pi0 with a NaN", dict(t=[1.0], pi0=[math.nan, 1.0]), ["pi0"])]
    for lab, kw, names in bad:
        kw = dict(kw)
        pi0 = kw.pop("pi0", [0.3, 0.7])
        t = kw.pop("t")
        out.append(_err(G_, f"flow({lab})", lambda pi0=pi0, t=t, kw=kw: D.flow(q2, o2, pi0, t, with_points=False, **kw),
                        names))
    out.append(_either(G_, "flow t=[] (no times): an empty trajectory or a refusal naming t",
                       lambda: D.flow(q2, o2, q2.pi_ref, [], with_points=False),
                       lambda v: np.asarray(v.pi).size == 0, ["t"]))
    out.append(_either(G_, "flow from the vertex pi0=[1, 0]: stays (logit flow cannot leave a face) or refused naming pi0",
                       lambda: D.flow(q2, o2, [1.0, 0.0], [1.0], with_points=False),
                       lambda v: ref.close(np.asarray(v.pi)[-1], [1.0, 0.0], 0, 1e-12), ["pi0"]))
    # ascent: Euler on the logits
    for lr, steps in ((0.1, 50), (1e-6, 3), (2.0, 20)):
        def e_ref(lr=lr, steps=steps):
            return ref.euler_binary(0.3, 0.5, 2, lr * steps, lr)
        out.append(_ok(G_, f"ascent binary lr={lr} steps={steps} = Euler on the logits",
                       lambda lr=lr, steps=steps: D.ascent(q2, o2, q2.pi_ref, lr=lr, steps=steps, with_points=False),
                       lambda v, e_ref=e_ref: ref.close(np.asarray(v.pi)[-1][0], e_ref(), 0, 1e-12)))
    out.append(_ok(G_, "ascent lr=0 stays at pi0", lambda: D.ascent(q2, o2, q2.pi_ref, lr=0.0, steps=5, with_points=False),
                   lambda v: ref.close(np.asarray(v.pi)[-1], [0.3, 0.7], 0, 0)))
    for lab, kw, names in [("lr=-0.1", dict(lr=-0.1, steps=5), ["lr"]), ("lr=nan", dict(lr=math.nan, steps=5), ["lr"]),
                           ("steps=np.int8(-1)", dict(lr=0.1, steps=np.int8(-1)), ["steps"]),
                           ("steps=nan", dict(lr=0.1, steps=math.nan), ["steps"]),
                           ("steps=2**63 (overflows int64)", dict(lr=0.1, steps=2 ** 63), ["steps"]),
                           ("every=np.float64(2.5)", dict(lr=0.1, steps=5, every=np.float64(2.5)), ["every"]),
                           ("every=None", dict(lr=0.1, steps=5, every=None), ["every"])]:
        out.append(_err(G_, f"ascent({lab})", lambda kw=kw: D.ascent(q2, o2, q2.pi_ref, with_points=False, **kw), names))
    out.append(_either(G_, "ascent every=7 > steps=5: the start (and the end) or a refusal naming every",
                       lambda: D.ascent(q2, o2, q2.pi_ref, lr=0.1, steps=5, every=7, with_points=False),
                       lambda v: ref.close(np.asarray(v.pi)[0], [0.3, 0.7], 0, 1e-15), ["every"]))
    for lab, kw, names in [("n_batches=-3", dict(lr=0.1, n_batches=-3), ["n_batches"]),
                           ("inner_updates=10**9 (would not finish)", dict(lr=0.1, n_batches=2, inner_updates=10 ** 9),
                            ["inner_updates"]),
                           ("clip_eps=nan", dict(lr=0.1, n_batches=2, clip_eps=math.nan), ["clip_eps"]),
                           ("n_groups=-1", dict(lr=0.1, n_batches=2, n_groups=-1), ["n_groups"]),
                           ("n_batches=10**12 (would not finish)", dict(lr=0.1, n_batches=10 ** 12), ["n_batches"]),
                           ("n_groups=10**12 (would not fit)", dict(lr=0.1, n_batches=1, n_groups=10 ** 12), ["n_groups"])]:
        out.append(_err(G_, f"grpo_steps({lab})", lambda kw=kw: D.grpo_steps(q2, o2, q2.pi_ref, with_points=False, **kw),
                        names))
    return out


# ---------------------------------------------------------------- answer trees
def tree_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: answer trees of odd shapes"
    out = []
    x = ref.eq14(0.3, 0.5)
    for L in (1, 2, 5, 40):
        for lt in ("grpo", "dapo"):
            ans = [tuple(["a"] + [f"t{i}" for i in range(L - 1)]), tuple(["b"] + [f"u{i}" for i in range(L - 1)])]
            out.append(_ok(G_, f"two answers of {L} tokens each, first tokens differ, level=token loss_type={lt} = Eq. 14",
                           lambda ans=ans, lt=lt: stationary_policy(Question([0.3, 0.7], [1.0, 0.0], answers=ans),
                                                                    Objective(beta=0.5, level="token", loss_type=lt)),
                           lambda v: ref.close(_pi(v)[0], x, 1e-7)))
    out.append(_ok(G_, "answers of 3 tokens at level=sequence = Eq. 14 (the tree is ignored)",
                   lambda: stationary_policy(Question([0.3, 0.7], [1.0, 0.0], answers=[("a", "b", "c"), ("a", "b", "d")]),
                                             Objective(beta=0.5, level="sequence")),
                   lambda v: ref.close(_pi(v)[0], x, 1e-7)))
    out.append(_ok(G_, "a shared 30-token prefix, the answers differ at the last token, level=token, equal lengths = Eq. 14",
                   lambda: stationary_policy(Question([0.3, 0.7], [1.0, 0.0],
                                                      answers=[tuple(["p"] * 30 + ["a"]), tuple(["p"] * 30 + ["b"])]),
                                             Objective(beta=0.5, level="token")),
                   lambda v: ref.close(_pi(v)[0], x, 1e-7)))
    for lab, ans in [("a str answer 'ab' (documented: one-character tokens) and ('b',)", ["ab", ("b",)]),
                     ("a None token (hashable) and ('b',)", [(None,), ("b",)])]:
        out.append(_ok(G_, f"answers: {lab}, level=sequence = Eq. 14", lambda ans=ans:
                       stationary_policy(Question([0.3, 0.7], [1.0, 0.0], answers=ans), Objective(beta=0.5)),
                       lambda v: ref.close(_pi(v)[0], x, 1e-7)))
    out.append(_ok(G_, "answers with tokens 1 (int) and '1' (str): distinct tokens, level=token = Eq. 14",
                   lambda: stationary_policy(Question([0.3, 0.7], [1.0, 0.0], answers=[(1,), ("1",)]),
                                             Objective(beta=0.5, level="token")),
                   lambda v: ref.close(_pi(v)[0], x, 1e-7)))
    for lab, ans, names in [("two equal answers", [("a", "b"), ("a", "b")], ["answer"]),
                            ("an empty answer", [(), ("a",)], ["answer"]),
                            ("answers of the wrong count (3 for 2 outputs)", [("a",), ("b",), ("c",)], ["answers"]),
]:
        out.append(_either(G_, f"Question answers: {lab}", lambda ans=ans: Question([0.3, 0.7], [1.0, 0.0], answers=ans),
                           lambda v: False, names))
    return out


# ---------------------------------------------------------------- numpy / pandas input types
def dtype_cases() -> list[dict]:
    import pandas as pd

    from grpo_theory import Objective, Question, closed_form as cf, stationary_policy

    G_ = "API: numpy / pandas input types"
    out = []
    p64 = np.array([0.1, 0.3, 0.5, 0.9])
    want14 = [ref.eq14(float(p), 0.5) for p in p64]
    for dt, rtol in ((np.float32, 2e-6), (np.float16, 3e-3)):
        pin = p64.astype(dt)
        w = [ref.eq14(float(p), 0.5) for p in pin]
        out.append(_ok(G_, f"binary_pairwise(p as {np.dtype(dt).name}, 0.5) = Eq. 14 at the rounded p",
                       lambda pin=pin: cf.binary_pairwise(pin, 0.5), lambda v, w=w, rtol=rtol: ref.close(v, w, rtol)))
    ro = p64.copy()
    ro.flags.writeable = False
    out.append(_ok(G_, "binary_pairwise(a read-only array, 0.5)", lambda: cf.binary_pairwise(ro, 0.5),
                   lambda v: ref.close(v, want14, 1e-12)))
    big = np.zeros(8)
    big[::2] = p64
    out.append(_ok(G_, "binary_pairwise(a non-contiguous view p[::2], 0.5)", lambda: cf.binary_pairwise(big[::2], 0.5),
                   lambda v: ref.close(v, want14, 1e-12)))
    out.append(_ok(G_, "binary_pairwise(0-d array 0.3, np.float32 0.5)",
                   lambda: cf.binary_pairwise(np.array(0.3), np.float32(0.5)),
                   lambda v: ref.close(v, ref.eq14(0.3, 0.5), 1e-12)))
    out.append(_ok(G_, "binary_pairwise(pandas Series, 0.5) = Eq. 14", lambda: cf.binary_pairwise(pd.Series(p64), 0.5),
                   lambda v: ref.close(np.asarray(v, float), want14, 1e-12)))
    out.append(_ok(G_, "binary_large_group(p as a (2, 2) Fortran-ordered array, 2.0) = Eq. 15 elementwise",
                   lambda: cf.binary_large_group(np.asfortranarray(p64.reshape(2, 2)), 2.0),
                   lambda v: ref.close(np.asarray(v).ravel(), [ref.eq15(p, 2.0) for p in p64.reshape(2, 2).ravel()], 1e-12)))
    out.append(_ok(G_, "binary_pairwise_direct(p, beta as np.float16 0.25) = the G=2 direct form",
                   lambda: cf.binary_pairwise_direct(p64, np.float16(0.25)),
                   lambda v: ref.close(v, [ref.g2_direct(float(p), 0.25) for p in p64], 1e-12)))
    bad = [
        ("binary_pairwise(complex p 0.3+0j)", lambda: cf.binary_pairwise(np.array([0.3 + 0j]), 0.5), ["complex"]),
        ("binary_pairwise(complex p 0.3+0.1j)", lambda: cf.binary_pairwise(0.3 + 0.1j, 0.5), ["pi_ref_a"]),
        ("binary_pairwise(p as an object array with a string)", lambda: cf.binary_pairwise(np.array([0.3, "x"], object), 0.5),
         ["pi_ref_a"]),
        ("binary_pairwise(pandas Series with pd.NA)", lambda: cf.binary_pairwise(pd.Series([0.3, pd.NA]), 0.5), ["pi_ref_a"]),
        ("binary_large_group(p, beta as a bool True)", lambda: cf.binary_large_group(0.3, True), ["beta"]),
        ("binary_pairwise(p as datetime64)", lambda: cf.binary_pairwise(np.array(["2020-01-01"], "datetime64[D]"), 0.5),
         ["pi_ref_a"]),
        ("binary_rloo(p, beta as a complex 0.5+0j)", lambda: cf.binary_rloo(0.3, 0.5 + 0j), ["beta"]),
        ("binary_shift_direct(p, beta, group_size as np.float16 2.5)", lambda: cf.binary_shift_direct(0.3, 0.5, np.float16(2.5)),
         ["group_size"]),
    ]
    for lab, call, names in bad:
        out.append(_err(G_, lab, call, names))
    out.append(_either(G_, "binary_pairwise(an object array of Fractions [1/3, 1/2])",
                       lambda: cf.binary_pairwise(np.array([Fraction(1, 3), Fraction(1, 2)], object), 0.5),
                       lambda v: ref.close(np.asarray(v, float), [ref.eq14(1 / 3, 0.5), ref.eq14(0.5, 0.5)], 1e-12),
                       ["pi_ref_a"]))
    out.append(_either(G_, "binary_pairwise(Decimal('0.3'), Decimal('0.5'))",
                       lambda: cf.binary_pairwise(Decimal("0.3"), Decimal("0.5")),
                       lambda v: ref.close(float(np.asarray(v, float)), ref.eq14(0.3, 0.5), 1e-12), ["pi_ref_a"]))
    out.append(_either(G_, "binary_pairwise(a masked array with a masked 2.0): the entry masked in the result, or refused",
                       lambda: cf.binary_pairwise(np.ma.masked_greater(np.array([0.3, 2.0]), 1.0), 0.5),
                       lambda v: bool(np.ma.isMaskedArray(v) and np.ma.getmaskarray(v)[1]
                                      and ref.close(float(v[0]), ref.eq14(0.3, 0.5), 1e-12) is True), ["pi_ref_a"]))
    out.append(_either(G_, "binary_pairwise(p as a categorical Series of floats [0.3, 0.5])",
                       lambda: cf.binary_pairwise(pd.Series([0.3, 0.5], dtype="category"), 0.5),
                       lambda v: ref.close(np.asarray(v, float), [ref.eq14(0.3, 0.5), ref.eq14(0.5, 0.5)], 1e-12),
                       ["pi_ref_a"]))
    out.append(_either(G_, "binary_pairwise(a masked array with nothing masked)",
                       lambda: cf.binary_pairwise(np.ma.array(p64, mask=False), 0.5),
                       lambda v: ref.close(np.asarray(v, float), want14, 1e-12), ["pi_ref_a"]))
    # Question / Objective / stationary_policy with numpy scalars and arrays
    gap = 255.0
    x_int8 = ref.expit(ref.logit(0.3) + 0.5 * gap / 50)
    out.append(_ok(G_, "Question rewards int8 [127, -128] (gap 255 overflows int8), shift+direct G=2 beta=50",
                   lambda: stationary_policy(Question([0.3, 0.7], np.array([127, -128], np.int8)),
                                             Objective(beta=50.0, normalization="shift", penalty="direct")),
                   lambda v: ref.close(_pi(v)[0], x_int8, 1e-8)))
    x_u8 = ref.expit(ref.logit(0.3) - 0.5 * 255 / 50)
    out.append(_ok(G_, "Question rewards uint8 [0, 255] (0 - 255 wraps in uint8), shift+direct G=2 beta=50",
                   lambda: stationary_policy(Question([0.3, 0.7], np.array([0, 255], np.uint8)),
                                             Objective(beta=50.0, normalization="shift", penalty="direct")),
                   lambda v: ref.close(_pi(v)[0], x_u8, 1e-8)))
    x_i64 = ref.expit(ref.logit(0.3) + 0.5 * float(2 ** 62) * 2 / 2 ** 63)
    out.append(_ok(G_, "Question rewards int64 [2**62, -2**62] (difference overflows int64), shift+direct beta=2**63",
                   lambda: stationary_policy(Question([0.3, 0.7], np.array([2 ** 62, -2 ** 62], np.int64)),
                                             Objective(beta=float(2 ** 63), normalization="shift", penalty="direct")),
                   lambda v: ref.close(_pi(v)[0], x_i64, 1e-8)))
    p32 = np.array([0.3, 0.7], np.float32)
    out.append(_either(G_, "Question pi_ref float32 [0.3, 0.7] (sums to 1 in float32): Eq. 14 at the float32 p, or refused",
                       lambda: stationary_policy(Question(p32, [1.0, 0.0]), Objective(beta=0.5)),
                       lambda v: ref.close(_pi(v)[0], ref.eq14(float(p32[0]) / float(p32.astype(float).sum()), 0.5), 1e-6),
                       ["pi_ref"]))
    out.append(_ok(G_, "Question pi_ref as a pandas Series with a string index",
                   lambda: stationary_policy(Question(pd.Series([0.3, 0.7], index=["a", "b"]), [1.0, 0.0]), Objective(beta=0.5)),
                   lambda v: ref.close(_pi(v)[0], ref.eq14(0.3, 0.5), 1e-8)))
    out.append(_ok(G_, "Question rewards as a DataFrame column (int64)",
                   lambda: stationary_policy(Question([0.3, 0.7], pd.DataFrame({"r": [1, 0]})["r"]), Objective(beta=0.5)),
                   lambda v: ref.close(_pi(v)[0], ref.eq14(0.3, 0.5), 1e-8)))
    for lab, call, names in [
        ("Question rewards a DataFrame column with NA (Int64)", lambda: Question([0.3, 0.7], pd.Series([1, pd.NA], dtype="Int64")),
         ["rewards"]),
        ("Question rewards complex [1+0j, 0]", lambda: Question([0.3, 0.7], np.array([1 + 0j, 0])), ["rewards"]),
        ("Question pi_ref float16 [0.1, 0.9] (does not sum to 1 in float64: 0.99990845)",
         lambda: Question(np.array([0.1, 0.9], np.float16), [1.0, 0.0]), ["pi_ref"]),
        ("Question pi_ref as a 2x1 column [[0.3], [0.7]]", lambda: Question(np.array([[0.3], [0.7]]), [1.0, 0.0]), ["pi_ref"]),
        ("Question pi_ref a masked array with a masked entry", lambda: Question(np.ma.array([0.3, 0.7], mask=[False, True]),
                                                                                [1.0, 0.0]), ["pi_ref"]),
        ("Question rewards as a set {1, 0}", lambda: Question([0.3, 0.7], {1.0, 0.0}), ["rewards"]),
        ("Objective(beta=np.array([0.5, 0.6]))", lambda: Objective(beta=np.array([0.5, 0.6])), ["beta"]),
        ("Objective(beta=0.5+0j)", lambda: Objective(beta=0.5 + 0j), ["beta"]),
        ("Objective(group_size=np.float16(2.5))", lambda: Objective(beta=0.5, group_size=np.float16(2.5)), ["group_size"]),
        ("Objective(std_ddof=np.bool_(True))", lambda: Objective(beta=0.5, std_ddof=np.bool_(True)), ["std_ddof"]),
        ("Objective(std_eps=pd.NA)", lambda: Objective(beta=0.5, std_eps=pd.NA), ["std_eps"]),
        ("Objective(entropy_coef=np.float64('nan'))", lambda: Objective(beta=0.5, entropy_coef=np.float64("nan")),
         ["entropy_coef"]),
        ("Objective(pass_k=np.int8(-3), advantage='pass_at_k')",
         lambda: Objective(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=np.int8(-3)), ["pass_k"]),
    ]:
        out.append(_err(G_, lab, call, names))
    out.append(_either(G_, "Question rewards a generator: [1, 0] read, or refused naming rewards",
                       lambda: stationary_policy(Question([0.3, 0.7], (r for r in [1.0, 0.0])), Objective(beta=0.5)),
                       lambda v: ref.close(_pi(v)[0], ref.eq14(0.3, 0.5), 1e-8), ["rewards"]))
    out.append(_either(G_, "Objective(group_size=np.uint64(2**64 - 1)) (a valid, huge G): within 1e-6 of Eq. 15, or refused",
                       lambda: stationary_policy(Question([0.3, 0.7], [1.0, 0.0]),
                                                 Objective(beta=0.5, group_size=np.uint64(2 ** 64 - 1))),
                       lambda v: ref.close(_pi(v)[0], ref.eq15(0.3, 0.5), 0, 1e-6), ["group_size"]))
    for lab, kw, want in [("Objective(beta=np.float32(0.5))", dict(beta=np.float32(0.5)), ref.eq14(0.3, 0.5)),
                          ("Objective(beta=Fraction(1, 2))", dict(beta=Fraction(1, 2)), ref.eq14(0.3, 0.5)),
                          ("Objective(beta=Decimal('0.5'))", dict(beta=Decimal("0.5")), ref.eq14(0.3, 0.5)),
                          ("Objective(beta=0.5, group_size=np.int8(2))", dict(beta=0.5, group_size=np.int8(2)),
                           ref.eq14(0.3, 0.5)),
                          ("Objective(beta=np.int64(1))", dict(beta=np.int64(1)), ref.eq14(0.3, 1.0)),
                          ("Objective(beta=0.5, group_size=np.float64(2.0))", dict(beta=0.5, group_size=np.float64(2.0)),
                           ref.eq14(0.3, 0.5))]:
        out.append(_either(G_, f"{lab}: Eq. 14 or a refusal naming the field", lambda kw=kw:
                           stationary_policy(Question([0.3, 0.7], [1.0, 0.0]), Objective(**kw)),
                           lambda v, want=want: ref.close(_pi(v)[0], want, 1e-8), [next(iter(kw)) if len(kw) == 1 else "group_size"]))
    return out


# ---------------------------------------------------------------- least-named callables
def least_named_cases() -> list[dict]:
    from grpo_theory import Objective, Question
    from grpo_theory import advantage as A
    from grpo_theory.advantage_enumeration import signed_part
    from grpo_theory.solvers.common import sinh_grid

    G_ = "API: the least-named public callables"
    out = []
    a = np.array([-2.0, 0.0, 3.0, -0.0])
    out.append(_ok(G_, "signed_part(a, 'mean') is a", lambda: signed_part(a, "mean"), lambda v: ref.close(v, a, 0)))
    out.append(_ok(G_, "signed_part(a, 'positive') = max(a, 0)", lambda: signed_part(a, "positive"),
                   lambda v: ref.close(v, [0, 0, 3, 0], 0)))
    out.append(_ok(G_, "signed_part(a, 'negative') = min(a, 0)", lambda: signed_part(a, "negative"),
                   lambda v: ref.close(v, [-2, 0, 0, 0], 0)))
    out.append(_err(G_, "signed_part(a, 'Positive') (capitalised)", lambda: signed_part(a, "Positive"), ["Positive"]))
    out.append(_err(G_, "signed_part(a, None)", lambda: signed_part(a, None), ["part"]))
    out.append(_ok(G_, "sinh_grid(0.0, -1.0, 1.0, 11): 11 points from -1 to 1, increasing",
                   lambda: sinh_grid(0.0, -1.0, 1.0, 11),
                   lambda v: len(v) == 11 and v[0] == -1.0 and v[-1] == 1.0 and bool(np.all(np.diff(v) > 0))))
    for lab, args, names in [("lo > hi", (0.0, 1.0, -1.0, 11), ["lo"]), ("n = 1", (0.0, -1.0, 1.0, 1), ["n"]),
                             ("n = 0", (0.0, -1.0, 1.0, 0), ["n"]), ("center = nan", (math.nan, -1.0, 1.0, 11), ["center"]),
                             ("hi = inf", (0.0, -1.0, INF, 11), ["hi"]), ("n = 2.5", (0.0, -1.0, 1.0, 2.5), ["n"]),
                             ("n = 10**12 (would not fit)", (0.0, -1.0, 1.0, 10 ** 12), ["n"])]:
        out.append(_err(G_, f"sinh_grid({lab})", lambda args=args: sinh_grid(*args), names))
    out.append(_either(G_, "sinh_grid(center outside [lo, hi]: 5 in [-1, 1])", lambda: sinh_grid(5.0, -1.0, 1.0, 11),
                       lambda v: len(v) == 11 and v[0] == -1.0 and v[-1] == 1.0 and bool(np.all(np.diff(v) > 0)),
                       ["center"]))
    out.append(_err(G_, "pass_at_k_bound with pass_k = 5 > G = 4",
                    lambda: A.pass_at_k_bound(1.0, Objective(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=5)),
                    ["pass_k"]))
    out.append(_ok(G_, "pass_at_k_bound at G=inf is inf (documented)",
                   lambda: A.pass_at_k_bound(1.0, Objective(beta=0.5, group_size=INF, advantage="pass_at_k", pass_k=2)),
                   lambda v: v == INF))
    out.append(_err(G_, "pass_at_k_bound(span=nan)",
                    lambda: A.pass_at_k_bound(math.nan, Objective(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=2)),
                    ["span"]))
    out.append(_err(G_, "pass_at_k_bound(span=-1)",
                    lambda: A.pass_at_k_bound(-1.0, Objective(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=2)),
                    ["span"]))
    q = Question([0.2, 0.3, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.1, 0.9], [0.5, 0.5], [1.0, 0.0]])
    # gamma(a, b) = P(r_a > r_b) - P(r_b > r_a) for independent draws: 0.9 * 0.5 - 0.5 * 0.1 = 0.4
    out.append(_ok(G_, "confidence_margin(0, 1) of Bernoulli 0.9 vs 0.5 = 0.4", lambda: q.confidence_margin(0, 1),
                   lambda v: ref.close(v, 0.4, 1e-12)))
    out.append(_ok(G_, "confidence_margin(2, 0) of Bernoulli 0 vs 0.9 = -0.9", lambda: q.confidence_margin(2, 0),
                   lambda v: ref.close(v, -0.9, 1e-12)))
    out.append(_ok(G_, "confidence_margin(1, 1) = 0", lambda: q.confidence_margin(1, 1), lambda v: v == 0))
    for lab, args, names in [("(0, 3) (no output 3)", (0, 3), ["3"]), ("(-1, 0)", (-1, 0), ["-1"]),
                             ("(0.0, 1)", (0.0, 1), ["0.0"]), ("('a', 1)", ("a", 1), ["'a'"]),
                             ("(True, 0)", (True, 0), ["True"])]:
        out.append(_err(G_, f"confidence_margin{lab}", lambda args=args: q.confidence_margin(*args), names))
    M = np.array([[0.5, 0.9 * 0.5 + 0.5 * (0.9 * 0.5 + 0.1 * 0.5), 0.9 + 0.5 * 0.1],
                  [None, 0.5, 0.5 + 0.5 * 0.5], [None, None, 0.5]], dtype=object)
    M[1, 0], M[2, 0], M[2, 1] = 1 - M[0, 1], 1 - M[0, 2], 1 - M[1, 2]
    out.append(_ok(G_, "pairwise_preference of three Bernoulli outputs (ties halved)", lambda: q.pairwise_preference(),
                   lambda v: ref.close(v, np.array(M, float), 1e-12)))
    out.append(_ok(G_, "pairwise_preference of deterministic rewards [1, 1, 0] (a tie: 1/2)",
                   lambda: Question([0.2, 0.3, 0.5], [1.0, 1.0, 0.0]).pairwise_preference(),
                   lambda v: ref.close(v, [[0.5, 0.5, 1], [0.5, 0.5, 1], [0, 0, 0.5]], 0)))
    from grpo_theory.integrations.family import openrlhf_family, trl_family, verl_family

    def getter(d):
        return lambda k, default=None: d.get(k, default)
    for lab, fn, d, names in [
        ("openrlhf_family(algo.advantage.estimator='rloo ' (a trailing space))", openrlhf_family,
         {"algo.advantage.estimator": "rloo "},
         ["rloo "]),
        ("openrlhf_family(entropy_loss_coef='abc' (text))", openrlhf_family, {"entropy_loss_coef": "abc"}, ["entropy_loss_coef"]),
        ("trl_family(importance_sampling_level='Sequence')", trl_family, {"importance_sampling_level": "Sequence"},
         ["importance_sampling_level"]),
        ("trl_family(entropy_coef=-0.1)", trl_family, {"entropy_coef": -0.1}, ["entropy_coef"]),
    ]:
        out.append(dict(_either(G_, f"{lab}: refused, or a warning naming it", lambda fn=fn, d=d: fn(getter(d)),
                                lambda v, names=names: any(names[0] in str(w) for w in v[1]), names), bad_class="accepted"))
    out.append(dict(_either(G_, "verl_family(algorithm.adv_estimator='GRPO' (upper case; verl's names are lower case)): "
                            "refused, or a warning naming it",
                            lambda: verl_family(getter({"algorithm.adv_estimator": "GRPO"}), False),
                            lambda v: any("GRPO" in str(w) for w in v[1]), ["GRPO"]), bad_class="accepted"))
    from grpo_theory.convergence import summary_columns
    out.append(_err(G_, "summary_columns(a list of dicts without the report columns)",
                    lambda: summary_columns([{"a": 1}, {"a": 2}]), ["error"]))
    out.append(_err(G_, "summary_columns(None)", lambda: summary_columns(None), ["table"]))
    return out


# ---------------------------------------------------------------- predict on odd but valid samples
def predict_api_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts

    G_ = "API: predict / samples_from_counts on odd but valid samples"
    out = []

    def row_check(n, c, beta, k=(1, 8)):
        p = c / n

        def chk(v):
            r = v.table.iloc[0]
            if not ref.close(r["p_ref"], p, 1e-15) is True:
                return f"p_ref {r['p_ref']} != {p}"
            lo, hi = ref.jeffreys(c, n)
            # the equal-tailed Jeffreys interval (docs/predict.md); at c = 0 the documented one-sided exact bound
            # [0, 1 - 0.05^(1/n)], and at c = n its mirror [0.05^(1/n), 1]
            one = 0.05 ** (1 / n)
            if c == 0:
                lo, hi = 0.0, 1 - one
            elif c == n:
                lo, hi = one, 1.0
            ends = [(r["p_ref_lo"], lo), (r["p_ref_hi"], hi)]
            bad = ref.close([e[0] for e in ends], [e[1] for e in ends], 1e-9, 1e-15)
            if bad is not True:
                return f"Jeffreys interval: {bad}"
            if 0 < p < 1:
                x = ref.eq14(p, beta)
                bad = ref.close(r["pred"], x, 1e-9)
                if bad is not True:
                    return f"pred: {bad}"
                kd = x * math.log(x / p) + (1 - x) * math.log((1 - x) / (1 - p))
                kr = p * math.log(p / x) + (1 - p) * math.log((1 - p) / (1 - x))
                bad = ref.close([r["kl_direct"], r["kl_reverse"]], [kd, kr], 1e-8, 1e-15)
                if bad is not True:
                    return f"KL: {bad}"
            for kk in k:
                want = ref.pass_at_k(n, c, kk)
                got = r[f"pass@{kk}_before"]
                if want is None:
                    if not (got == "" or got is None or (isinstance(got, float) and math.isnan(got))):
                        return f"pass@{kk}_before {got!r} for k > n"
                elif ref.close(float(got), want, 1e-9, 1e-15) is not True:
                    return f"pass@{kk}_before {got} != {want}"
            return True
        return chk

    out.append(_err(G_, "samples_from_counts(n = 2**53 + 1) (documented: counts above 2^53 are refused)",
                    lambda: predict(samples_from_counts([2 ** 53 + 1], [2 ** 52]), Objective(beta=0.3)), ["n"]))
    for n, c, beta in [(10 ** 15, 3 * 10 ** 14, 0.5), (2 ** 53, 2 ** 51, 0.3), (1, 1, 0.5), (1, 0, 0.5),
                       (7, 7, 2.0), (7, 0, 2.0), (3, 1, 1e-6), (1000, 1, 0.5), (1000, 999, 0.5), (5, 2, 1e3)]:
        out.append(_ok(G_, f"predict one prompt n={n} correct={c} beta={beta}: p_ref, Jeffreys, Eq. 14, KLs, pass@1/8",
                       lambda n=n, c=c, beta=beta: predict(samples_from_counts([n], [c]), Objective(beta=beta)),
                       row_check(n, c, beta)))
    # none correct: the documented x(0+) (Eq. 14's limit: 1 - beta for beta < 1, 0 for beta >= 1)
    for beta in (0.25, 1.0, 3.0):
        want = max(1 - beta, 0.0)
        out.append(_ok(G_, f"predict n=50 correct=0 beta={beta}: pred = x(0+) = {want}",
                       lambda beta=beta: predict(samples_from_counts([50], [0]), Objective(beta=beta)),
                       lambda v, want=want: ref.close(v.table.iloc[0]["pred"], want, 1e-9, 1e-12)))
    ids = [f"p{i}" for i in range(2000)]
    rng = np.random.default_rng(7)
    ns = rng.integers(1, 40, 2000)
    cs = np.array([int(rng.integers(0, k + 1)) for k in ns])
    out.append(_ok(G_, "predict 2000 prompts (1..39 samples each): mean p_ref = mean of c/n",
                   lambda: predict(samples_from_counts(ns, cs, ids), Objective(beta=0.5), k=(1,)),
                   lambda v: ref.close(v.summary["mean_p_ref"], float(np.mean(cs / ns)), 1e-12)))
    out.append(_ok(G_, "predict with counts as numpy uint16 arrays (n=[65535], c=[1])",
                   lambda: predict(samples_from_counts(np.array([65535], np.uint16), np.array([1], np.uint16)), Objective(beta=0.5)),
                   row_check(65535, 1, 0.5)))
    out.append(_ok(G_, "predict with k=(1, 2, 3) on n=3 c=1: pass@3_before = 1",
                   lambda: predict(samples_from_counts([3], [1]), Objective(beta=0.5), k=(1, 2, 3)),
                   row_check(3, 1, 0.5, (1, 2, 3))))
    for lab, call, names in [
        ("samples_from_counts(n float 10.5)", lambda: samples_from_counts([10.5], [3]), ["10.5"]),
        ("samples_from_counts(n int8 array [-3])", lambda: samples_from_counts(np.array([-3], np.int8), [0]), ["-3"]),
        ("samples_from_counts(correct > n: 5 of 4)", lambda: samples_from_counts([4], [5]), ["5"]),
        ("samples_from_counts(n complex)", lambda: samples_from_counts(np.array([4 + 0j]), [1]), ["n"]),
        ("samples_from_counts(n as a 2-d array)", lambda: samples_from_counts(np.array([[4, 5]]), np.array([[1, 2]])), ["n"]),
        ("samples_from_counts(prompt_ids of the wrong length)", lambda: samples_from_counts([4, 5], [1, 2], ["a"]),
         ["prompt_ids"]),
        ("samples_from_counts(prompt_ids with a None)", lambda: samples_from_counts([4, 5], [1, 2], ["a", None]),
         ["prompt_id"]),
        ("samples_from_counts(n = 10**400 as an int)", lambda: samples_from_counts([10 ** 400], [1]), ["n"]),
        ("samples_from_counts(pandas Int64 with NA)", lambda: samples_from_counts(pd_int([4, None]), [1, 1]), ["n"]),
        ("predict(k=(0,))", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), k=(0,)), ["k"]),
        ("predict(level=1.0)", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), level=1.0), ["level"]),
        ("predict(interval='Jeffreys')", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), interval="Jeffreys"),
         ["Jeffreys"]),
        ("predict(t_max=-1)", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), t_max=-1.0), ["t_max"]),
        ("predict(tol=0)", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), tol=0.0), ["tol"]),
        ("predict(max_exact=-5)", lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), max_exact=-5), ["max_exact"]),
        ("predict(an Objective and a framework at once)",
         lambda: predict(samples_from_counts([4], [1]), Objective(beta=0.5), framework="trl", config={"beta": 0.1}),
         ["framework"]),
    ]:
        out.append(_err(G_, lab, call, names))
    return out


# ---------------------------------------------------------------- more: the binomial form, every root, Monte Carlo, readers
def binomial_form_cases() -> list[dict]:
    from grpo_theory import closed_form as cf

    G_ = "API: closed_form.binary_preference and the large-G direct h against the reference"
    out = []
    for x, G in [(0.3, 2), (0.3, 5), (1e-9, 50), (1 - 1e-9, 50), (0.5, 5000), (0.01, 2000), (0.999, 3), (0.75, 101)]:
        want = ref.binary_pg(x, G)
        out.append(_ok(G_, f"binary_preference(x={x!r}, G={G}) = the binomial sums", lambda x=x, G=G: cf.binary_preference(x, G),
                       lambda v, want=want: ref.close([float(np.asarray(v[0])), float(np.asarray(v[1]))], want, 1e-10, 1e-13)))
    for x in (1e-6, 0.5, 1 - 1e-6):
        want = (math.sqrt((1 - x) / x), -math.sqrt(x / (1 - x)))
        out.append(_ok(G_, f"binary_preference(x={x!r}, G=inf) = (sqrt((1-x)/x), -sqrt(x/(1-x)))",
                       lambda x=x: cf.binary_preference(x, INF),
                       lambda v, want=want: ref.close([float(np.asarray(v[0])), float(np.asarray(v[1]))], want, 1e-12)))
    for beta in (1e-3, 0.5, 1.0, 1e3):
        out.append(_ok(G_, f"large_group_direct_turning_point({beta}) = (1 + sqrt(1 - 1/(1 + beta^2)))/2",
                       lambda beta=beta: cf.large_group_direct_turning_point(beta),
                       lambda v, beta=beta: ref.close(float(np.asarray(v)), ref.large_group_direct_turning_point(beta), 1e-12)))
    for x, p, beta in [(0.5, 0.3, 0.6), (0.9, 0.2, 2.0), (1e-4, 0.5, 1.0), (0.999, 0.999, 0.1)]:
        out.append(_ok(G_, f"large_group_direct_h(x={x}, p={p}, beta={beta}) = SPEC's h",
                       lambda x=x, p=p, beta=beta: cf.large_group_direct_h(x, p, beta),
                       lambda v, x=x, p=p, beta=beta: ref.close(float(np.asarray(v)), ref.large_group_direct_h(x, p, beta),
                                                                1e-11, 1e-12)))
    return out


def _h_roots(p, beta):
    """Every interior root of SPEC's ``h`` on a logit grid of 20,001 points over [-30, 30], each bisected to the bit."""
    zs = np.linspace(-30, 30, 20001)

    def h(z):
        x = ref.expit(z)
        return 1 / (beta * math.sqrt(x * (1 - x))) - z + ref.logit(p)
    vals = [h(z) for z in zs]
    roots = []
    for i in range(len(zs) - 1):
        if vals[i] == 0 or vals[i] * vals[i + 1] < 0:
            lo, hi = zs[i], zs[i + 1]
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if mid in (lo, hi):
                    break
                if h(lo) * h(mid) <= 0:
                    hi = mid
                else:
                    lo = mid
            roots.append(ref.expit(0.5 * (lo + hi)))
    return roots


def all_points_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_points

    G_ = "API: stationary_points (every point) against the reference's roots"
    out = []
    for p, beta in [(0.3, 0.6), (0.3, 2.0), (0.05, 5.0), (0.5, 3.0), (0.01, 20.0), (0.3, 0.2)]:
        roots = _lazy(_h_roots, p, beta)

        def chk(v, roots=roots):
            got = sorted(float(pt.pi[0]) for pt in v.points if not pt.boundary)
            want = roots()
            if len(got) != len(want):
                return f"interior points {got}, reference roots of h {want}"
            return ref.close(got, want, 1e-7)
        out.append(_ok(G_, f"direct G=inf p={p} beta={beta}: the interior points are the roots of h", lambda p=p, beta=beta:
                       stationary_points(Question([p, 1 - p], [1.0, 0.0]),
                                         Objective(beta=beta, group_size=INF, penalty="direct")), chk))
    for p, beta, G in [(0.3, 0.5, 2), (0.2, 0.1, 6), (0.6, 1.2, 30)]:
        want = _lazy(ref.binary_rest, p, beta, G)

        def chk2(v, want=want):
            got = sorted(float(pt.pi[0]) for pt in v.points if not pt.boundary)
            if len(got) != 1:
                return f"interior points {got}; the reverse rest is unique here"
            return ref.close(got[0], want(), 1e-7)
        out.append(_ok(G_, f"reverse G={G} p={p} beta={beta}: one interior point, the rest", lambda p=p, beta=beta, G=G:
                       stationary_points(Question([p, 1 - p], [1.0, 0.0]), Objective(beta=beta, group_size=G)), chk2))
    return out


def monte_carlo_cases() -> list[dict]:
    from grpo_theory import Objective, Question, monte_carlo_preference

    G_ = "API: monte_carlo_preference against the enumeration (5 standard errors)"
    out = []
    for pi_ref, rew, G, okw in [([0.2, 0.3, 0.5], [1.0, 0.5, 0.0], 3, {}), ([0.5, 0.5], [1.0, 0.0], 4, dict(std_ddof=1)),
                                ([0.1, 0.9], [3.0, -1.0], 5, dict(normalization="shift")),
                                ([0.3, 0.3, 0.4], [1.0, 1.0, 0.0], 3, dict(advantage="rloo")),
                                ([0.25] * 4, [0.0, 1.0, 2.0, 3.0], 2, dict(std_eps=0.3))]:
        kind = "rloo" if okw.get("advantage") == "rloo" else okw.get("normalization", "scale")
        want = ref.enum_pg(pi_ref, ref.det_laws(rew), G, kind, okw.get("std_ddof", 0), okw.get("std_eps", 0.0))

        def chk(v, want=want):
            est, se = np.asarray(v[0]), np.asarray(v[1])
            bad = [(e, s, w) for e, s, w in zip(est, se, want) if not abs(e - w) <= 5 * s + 1e-12]
            return True if not bad else f"(estimate, se, enumerated) {bad}"
        out.append(_ok(G_, f"monte_carlo_preference pi={pi_ref} rewards={rew} G={G} {okw}",
                       lambda pi_ref=pi_ref, rew=rew, G=G, okw=okw:
                       monte_carlo_preference(Question(pi_ref, rew), Objective(beta=1.0, group_size=G, **okw), pi_ref,
                                              n_groups=20000, seed=3), chk))
    for lab, kw, names in [("n_groups=0", dict(n_groups=0), ["n_groups"]), ("n_groups=1.5", dict(n_groups=1.5), ["n_groups"]),
                           ("n_groups=10**12 (would not fit)", dict(n_groups=10 ** 12), ["n_groups"]),
                           ("seed=-1", dict(seed=-1), ["seed"]), ("seed='abc'", dict(seed="abc"), ["seed"])]:
        out.append(_err(G_, f"monte_carlo_preference({lab})", lambda kw=kw:
                        monte_carlo_preference(Question([0.5, 0.5], [1.0, 0.0]), Objective(beta=1.0, group_size=3),
                                               [0.5, 0.5], **kw), names))
    return out


def reader_api_cases() -> list[dict]:
    import pandas as pd

    from grpo_theory import Objective
    from grpo_theory.predict import predict, read_samples

    G_ = "API: predict / read_samples on in-memory tables of every type"
    out = []
    x = ref.eq14(0.25, 0.5)

    def pred_of(pid, want):
        def chk(v):
            t = v.table.set_index(v.table["prompt_id"].astype(str))
            return ref.close(t.loc[str(pid), "pred"], want, 1e-9)
        return chk
    df = pd.DataFrame({"prompt_id": ["a"] * 4 + ["b"] * 2, "reward": [1.0, 0.0, 0.0, 0.0, None, 1.0]})
    out.append(_ok(G_, "predict(DataFrame with a None reward: excluded as documented) a = 1/4",
                   lambda: predict(df, Objective(beta=0.5)), pred_of("a", x)))
    dfc = pd.DataFrame({"prompt_id": pd.Categorical(["a"] * 4, categories=["a", "zz"]), "reward": [1, 0, 0, 0]})
    out.append(_ok(G_, "predict(DataFrame with a categorical prompt_id holding an unused category 'zz'): one prompt",
                   lambda: predict(dfc, Objective(beta=0.5)),
                   lambda v: len(v.table) == 1 and pred_of("a", x)(v)))
    dfb = pd.DataFrame({"prompt_id": ["a"] * 4, "reward": [True, False, False, False]})
    out.append(_either(G_, "predict(DataFrame with bool rewards)", lambda: predict(dfb, Objective(beta=0.5)),
                       pred_of("a", x), ["reward"]))
    df16 = pd.DataFrame({"prompt_id": ["a"] * 4, "reward": np.array([1, 0, 0, 0], np.float16)})
    out.append(_ok(G_, "predict(DataFrame with float16 rewards)", lambda: predict(df16, Objective(beta=0.5)), pred_of("a", x)))
    dfi = pd.DataFrame({"prompt_id": [7, 7, 7, 7], "reward": [1, 0, 0, 0]})
    out.append(_ok(G_, "predict(DataFrame with integer prompt ids)", lambda: predict(dfi, Objective(beta=0.5)), pred_of(7, x)))
    dfn = pd.DataFrame({"problem": ["a"] * 4, "n": [4] * 4, "reward": [1, 0, 0, 0]})
    out.append(_either(G_, "predict(DataFrame, id_column='problem') with an extra column named n",
                       lambda: predict(dfn, Objective(beta=0.5), id_column="problem"), pred_of("a", x), ["n"]))
    arr = np.array([[128, 32], [8, 2]], np.int64)
    out.append(_ok(G_, "predict(2-d int64 array of (n, correct) rows)", lambda: predict(arr, Objective(beta=0.5)),
                   pred_of(0, x)))
    out.append(_ok(G_, "predict(2-d uint8 array [[200, 50]] (200 fits uint8))",
                   lambda: predict(np.array([[200, 50]], np.uint8), Objective(beta=0.5)), pred_of(0, x)))
    out.append(_ok(G_, "predict(2-d array, Fortran order, non-contiguous rows [::2])",
                   lambda: predict(np.asfortranarray(np.array([[8, 2], [9, 9], [16, 4]]))[::2], Objective(beta=0.5)),
                   lambda v: ref.close(v.table["pred"].to_numpy(float), [x, x], 1e-9)))
    for lab, call, names in [
        ("predict(2-d float array [[8.0, 2.5]] (a fractional count))", lambda: predict(np.array([[8.0, 2.5]]), Objective(beta=0.5)),
         ["2.5"]),
        ("predict(2-d array with 3 columns)", lambda: predict(np.array([[8, 2, 1]]), Objective(beta=0.5)), ["column"]),
        ("predict(3-d array)", lambda: predict(np.zeros((2, 2, 2), int), Objective(beta=0.5)), ["samples"]),
        ("predict(complex array)", lambda: predict(np.array([[8 + 0j, 2]]), Objective(beta=0.5)), ["samples"]),
        ("predict(object array with None)", lambda: predict(np.array([[8, None]], object), Objective(beta=0.5)), ["samples"]),
        ("predict(an empty DataFrame with the columns)", lambda: predict(pd.DataFrame({"prompt_id": [], "reward": []}),
                                                                        Objective(beta=0.5)), ["prompt"]),
        ("predict(DataFrame with reward 'yes')", lambda: predict(pd.DataFrame({"prompt_id": ["a"], "reward": ["yes"]}),
                                                                Objective(beta=0.5)), ["yes"]),
        ("predict(DataFrame with inf reward)", lambda: predict(pd.DataFrame({"prompt_id": ["a", "a"], "reward": [np.inf, 0.0]}),
                                                              Objective(beta=0.5)), ["inf"]),
        ("read_samples(a dict)", lambda: read_samples({"prompt_id": ["a"], "reward": [1]}), ["samples"]),
        ("read_samples(a list of tuples)", lambda: read_samples([("a", 1), ("a", 0)]), ["samples"]),
    ]:
        out.append(_either(G_, lab, call, lambda v, lab=lab: v.prompt_ids == ("a",)
                           and v.n.tolist() == ([1] if "dict" in lab else [2]) and v.correct.tolist() == [1], names)
                   if "dict" in lab or "list of" in lab else _err(G_, lab, call, names))
    return out


def kl_and_closed_cases() -> list[dict]:
    from grpo_theory import Objective, kl
    from grpo_theory import closed_form as cf

    G_ = "API: KL estimator values and coefficients at extreme log-ratios; RLOO / shift closed forms"
    out = []
    lrs = np.array([-700.0, -30.0, -1e-300, 0.0, 1e-12, 2.5, 30.0, 700.0])
    for est, fn in (("k1", ref.k1), ("k2", ref.k2), ("k3", ref.k3)):
        want = []
        for v in lrs:
            try:
                want.append(fn(float(v)))
            except OverflowError:
                want.append(INF)
        out.append(_ok(G_, f"kl.estimator_value {est} at lr = {lrs.tolist()}", lambda est=est:
                       kl.estimator_value(Objective(beta=1.0, kl_estimator=est), lrs),
                       lambda v, want=want: ref.close(v, want, 1e-12, 1e-27)))
    # clamps: verl's low_var_kl clamps lr to [-20, 20] and the value to [-10, 10] (SPEC section 8)
    want = [max(-10.0, min(10.0, ref.k3(max(-20.0, min(20.0, float(v)))))) for v in lrs]
    out.append(_ok(G_, "kl.estimator_value k3 with clamps 20 / 10 (verl's low_var_kl) at extreme lr",
                   lambda: kl.estimator_value(Objective(beta=1.0, kl_estimator="k3", kl_log_ratio_clamp=20.0,
                                                        kl_value_clamp=10.0), lrs),
                   lambda v, want=want: ref.close(v, want, 1e-12, 1e-27)))
    # coefficients up to a constant: k3 in the loss: d/dpi E[k3] = 1 - pi_ref/pi = 1 - exp(-lr); k2: lr
    mid = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    for est, fn in (("k3", lambda v: 1 - math.exp(-v)), ("k2", lambda v: v), ("k3_ratio", lambda v: v)):
        want = [fn(v) - fn(0.0) for v in mid]
        out.append(_ok(G_, f"kl.coefficient {est} in the loss at lr {mid.tolist()} (differences from lr = 0)",
                       lambda est=est: kl.coefficient(Objective(beta=1.0, kl_estimator=est), mid),
                       lambda v, want=want: ref.close(np.asarray(v) - np.asarray(v)[2], want, 1e-12, 1e-15)))
    for lab, lr, names in [("NaN lr", [math.nan], ["lr"]), ("a string lr", ["0.5"], ["lr"]), ("complex lr", [0.5 + 1j], ["lr"])]:
        out.append(_err(G_, f"kl.estimator_value k3 with {lab}", lambda lr=lr:
                        kl.estimator_value(Objective(beta=1.0, kl_estimator="k3"), np.array(lr, dtype=object if isinstance(lr[0], str) else None)),
                        names))
    for p, beta, gap in [(0.3, 0.5, 1.0), (1e-9, 1e-3, 2.0), (0.999, 5.0, 0.1), (0.5, 1e-6, 1e-6), (0.2, 1e4, 1e3)]:
        out.append(_ok(G_, f"binary_rloo(p={p}, beta={beta}, gap={gap}) = Eq. 14 at gamma = gap",
                       lambda p=p, beta=beta, gap=gap: cf.binary_rloo(p, beta, gap),
                       lambda v, p=p, beta=beta, gap=gap: ref.close(float(np.asarray(v)), ref.eq14(p, beta, gap), 1e-10)))
        out.append(_ok(G_, f"binary_rloo(p={p}, beta={beta}, gap={gap}, direct) = logit p + gap/beta",
                       lambda p=p, beta=beta, gap=gap: cf.binary_rloo(p, beta, gap, penalty="direct"),
                       lambda v, p=p, beta=beta, gap=gap: ref.close(float(np.asarray(v)), ref.g2_direct(p, beta, gap), 1e-10)))
    for p, beta, G, gap in [(0.3, 0.5, 2, 1.0), (0.3, 0.5, INF, 1.0), (0.01, 0.01, 1000, 0.5), (0.9, 3.0, 7, 10.0)]:
        out.append(_ok(G_, f"binary_shift_direct(p={p}, beta={beta}, G={G}, gap={gap}) = RLHF at G beta/(G-1)",
                       lambda p=p, beta=beta, G=G, gap=gap: cf.binary_shift_direct(p, beta, G, gap),
                       lambda v, p=p, beta=beta, G=G, gap=gap: ref.close(float(np.asarray(v)), ref.shift_direct(p, beta, G, gap),
                                                                         1e-10)))
    return out


def reward_scale_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G_ = "API: rewards at extreme scales and pooled outputs"
    out = []
    x14, x15 = ref.eq14(0.3, 0.5), ref.eq15(0.3, 0.5)
    rows = [  # (label, pi_ref, rewards, objective kwargs, wanted pi(a))
        ("scale G=2 rewards [1e-300, 0] (Eq. 2 is scale-free) = Eq. 14", [1e-300, 0.0], {}, x14),
        ("scale G=2 rewards [1e300, -1e300] (the gap overflows) = Eq. 14", [1e300, -1e300], {}, x14),
        ("scale G=inf rewards [5e-324, 0] (a subnormal gap) = Eq. 15", [5e-324, 0.0], dict(group_size=INF), x15),
        ("scale G=4 rewards [1e-200, 0] = the G=4 rest", [1e-200, 0.0], dict(group_size=4), None),
        ("shift+direct G=2 rewards [1e-300, 0], beta 1e-300: logit p + 1/2", [1e-300, 0.0],
         dict(beta=1e-300, normalization="shift", penalty="direct"), ref.expit(ref.logit(0.3) + 0.5)),
        ("shift+direct G=2 rewards [1e300, 0], beta 1e300: logit p + 1/2", [1e300, 0.0],
         dict(beta=1e300, normalization="shift", penalty="direct"), ref.expit(ref.logit(0.3) + 0.5)),
        ("shift reverse G=4 rewards [2e-300, 0], beta 1e-300: Eq. 14 at gamma = 1.5", [2e-300, 0.0],
         dict(beta=1e-300, normalization="shift", group_size=4), ref.eq14(0.3, 1e-300 / 1.5e-300)),
        ("scale G=2 rewards [1, 1 + 2**-52] (the better is b by one ulp): Eq. 14 for b", [1.0, 1.0 + 2 ** -52], {},
         1 - ref.eq14(0.7, 0.5)),
        ("scale G=2 rewards [-1e308, -1.7e308] = Eq. 14", [-1e308, -1.7e308], {}, x14),
    ]
    for label, rew, okw, want in rows:
        kw = dict(dict(beta=0.5, group_size=2), **okw)
        if want is None:
            want = ref.binary_rest(0.3, kw["beta"], kw["group_size"])
        out.append(_ok(G_, label, lambda rew=rew, kw=kw: stationary_policy(Question([0.3, 0.7], rew), Objective(**kw)),
                       lambda v, want=want: ref.close(_pi(v)[0], want, 1e-8)))
    # 3 outputs, rewards [1e300, 0, -1e300] at G = 2: Eq. 2 gives sign(r_1 - r_2), as for [1, 0, -1]
    pr3 = [0.2, 0.3, 0.5]

    def chk3(v):
        pi = _pi(v)
        res = ref.kkt_residual(pi, pr3, ref.enum_pg(list(pi), ref.det_laws([1.0, 0.0, -1.0]), 2), 0.4)
        return True if res < 1e-8 else f"Eq. 11 residual {res:.3g} (rewards scaled to [1, 0, -1]) at {pi}"
    out.append(_ok(G_, "3 outputs rewards [1e300, 0, -1e300] G=2 beta=0.4: Eq. 11 with the rewards [1, 0, -1]",
                   lambda: stationary_policy(Question(pr3, [1e300, 0.0, -1e300]), Objective(beta=0.4)), chk3))
    # pooled outputs: 40 outputs with rewards in {0, 1}; the correct class's mass is the binary rest at p = its
    # pi_ref mass, and within a class pi is proportional to pi_ref (SPEC section 2: outputs with one reward law pool)
    rng = np.random.default_rng(40)
    for G, pen, beta in [(2, "reverse", 0.5), (5, "reverse", 0.3), (3, "direct", 0.8), (INF, "reverse", 1.0)]:
        pi_ref = rng.dirichlet(np.ones(40))
        rew = (rng.uniform(size=40) < 0.4).astype(float)
        p = float(pi_ref[rew == 1].sum())
        if G == 2 and pen == "reverse":
            xa = ref.eq14(p, beta)
        elif G == INF:
            xa = ref.eq15(p, beta)
        else:
            xa = ref.binary_rest(p, beta, G, pen)
        want = np.where(rew == 1, pi_ref / p * xa, pi_ref / (1 - p) * (1 - xa))
        out.append(_ok(G_, f"40 outputs, two reward levels (p = {p:.4f}), {pen} G={G} beta={beta}: class mass = the binary "
                           "rest, within a class proportional to pi_ref",
                       lambda pi_ref=pi_ref, rew=rew, G=G, pen=pen, beta=beta:
                       stationary_policy(Question(pi_ref, rew), Objective(beta=beta, group_size=G, penalty=pen)),
                       lambda v, want=want: ref.close(_pi(v), want, 1e-7, 1e-15)))
    out.append(_either(G_, "pi_ref with an exact zero [0, 0.3, 0.7], rewards [2, 1, 0], G=2: the zero stays 0 and the rest "
                           "is Eq. 14 on (0.3, 0.7)",
                       lambda: stationary_policy(Question([0.0, 0.3, 0.7], [2.0, 1.0, 0.0]), Objective(beta=0.5)),
                       lambda v: ref.close(_pi(v), [0.0, x14, 1 - x14], 1e-8, 1e-300), ["pi_ref"]))
    return out


def graded_cases() -> list[dict]:
    import pandas as pd

    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts

    G_ = "API: predict on graded rewards (the stationary law over levels) and Prediction.pass_at, against the reference"
    out = []
    rows = [  # (levels, counts per level, G, penalty, beta)
        ([0.0, 0.5, 1.0], [3, 3, 4], 2, "reverse", 0.5), ([0.0, 0.5, 1.0], [1, 8, 1], 3, "reverse", 0.3),
        ([0.0, 0.25, 0.5, 1.0], [2, 2, 2, 4], 2, "direct", 0.4), ([-1.0, 0.0, 2.0], [5, 1, 4], 4, "reverse", 1.0),
        ([0.0, 0.1, 0.9], [10, 1, 1], 2, "reverse", 0.05), ([0.0, 0.5, 1.0], [100, 1, 1], 3, "direct", 0.8),
        ([1.0, 2.0, 3.0], [1, 1, 1], 2, "reverse", 2.0), ([0.0, 0.3, 0.6, 1.0], [4, 3, 2, 1], 3, "reverse", 0.6),
    ]
    for levels, counts, G, pen, beta in rows:
        n = sum(counts)
        pr = [c / n for c in counts]
        df = pd.DataFrame({"prompt_id": ["q"] * n, "reward": [lv for lv, c in zip(levels, counts) for _ in range(c)]})

        def chk(v, levels=levels, pr=pr, G=G, pen=pen, beta=beta):
            r = v.table.iloc[0]
            pi = [float(r[f"pred_r={lv:g}"]) for lv in levels]
            P = ref.enum_pg(pi, ref.det_laws(levels), G)
            res = ref.kkt_residual(pi, pr, P, beta) if pen == "reverse" else ref.direct_residual(pi, pr, P, beta)
            if not res < 1e-8:
                return f"rest residual {res:.3g} at {pi}"
            end = ref.rk4_flow(pr, ref.det_laws(levels), G, beta, 300.0, dt=0.1, penalty=pen)
            bad = ref.close(pi, end, 0, 1e-3)
            if bad is not True:
                return f"not the flow's end: {bad}"
            mr = math.fsum(p * lv for p, lv in zip(pi, levels))
            kd = math.fsum(p * math.log(p / q) for p, q in zip(pi, pr) if p > 0)
            return ref.close([r["mean_reward_after"], r["kl_direct"]], [mr, kd], 1e-9, 1e-15)
        out.append(_ok(G_, f"graded levels {levels} counts {counts} {pen} G={G} beta={beta}: pred_r = the rest (Eq. 11 / "
                           "direct), the flow's end; mean reward and KL", lambda df=df, G=G, pen=pen, beta=beta:
                       predict(df, Objective(beta=beta, group_size=G, penalty=pen)), chk))
    for k in (1, 3, 64, 10 ** 6):
        def chk2(v, k=k):
            t = v.pass_at(k)
            x = ref.eq14(0.3, 0.5)
            want = 1 - (1 - x) ** k
            col = [c for c in t.columns if str(c).startswith("pass@") and str(c).endswith("_after")]
            got = float(t[col[0]].iloc[0]) if col else float(t["after"].iloc[0])
            return ref.close(got, want, 1e-9, 1e-15)
        out.append(_ok(G_, f"Prediction.pass_at({k}) of n=10 c=3 beta=0.5: 1 - (1 - x)^k at Eq. 14", lambda:
                       predict(samples_from_counts([10], [3]), Objective(beta=0.5)), chk2))
    for k, names in [(0, ["k"]), (-2, ["k"]), (2.5, ["k"]), ("8", ["k"])]:
        out.append(_err(G_, f"Prediction.pass_at({k!r})", lambda k=k: predict(samples_from_counts([10], [3]),
                                                                             Objective(beta=0.5)).pass_at(k), names))
    return out


def predict_helper_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.convergence import largest_drop
    from grpo_theory.predict import sampling_floor, unbiased_pass_at_k, zero_limit
    from grpo_theory.predict.calibrate import clock_from_mean_reward, start_logits
    from grpo_theory.predict.conformal import calibration_split, jeffreys_logit
    from grpo_theory.predict.coupled import check_kernel, time_grid
    from grpo_theory.predict.intervals import binomial_interval, pass_at_k

    G_ = "API: predict's helpers against their formulas, and with bad arguments"
    out = []
    for n, c, k in [(10 ** 12, 1, 10 ** 6), (50, 49, 2), (5, 0, 5), (2 ** 40, 2 ** 39, 3), (1000, 500, 999)]:
        want = ref.pass_at_k(n, c, k)
        out.append(_ok(G_, f"unbiased_pass_at_k(n={n}, c={c}, k={k}) = 1 - C(n-c,k)/C(n,k)",
                       lambda n=n, c=c, k=k: unbiased_pass_at_k(n, c, k),
                       lambda v, want=want: ref.close(float(np.asarray(v).ravel()[0]), want, 1e-9, 1e-15)))
    for x, k in [(1e-12, 10 ** 6), (0.5, 1), (1 - 1e-12, 3)]:
        want = -math.expm1(k * math.log1p(-x))
        out.append(_ok(G_, f"pass_at_k(x={x!r}, k={k}) = 1 - (1 - x)^k (no cancellation)", lambda x=x, k=k: pass_at_k(x, k),
                       lambda v, want=want: ref.close(float(np.asarray(v).ravel()[0]), want, 1e-10)))
    for c, n, method in [(3, 12, "jeffreys"), (3, 12, "wilson"), (999, 1000, "jeffreys"), (1, 10 ** 9, "wilson")]:
        want = ref.jeffreys(c, n) if method == "jeffreys" else _wilson_ref(c, n)
        out.append(_ok(G_, f"binomial_interval({c}, {n}, method={method!r})", lambda c=c, n=n, method=method:
                       binomial_interval(c, n, method=method),
                       lambda v, want=want: ref.close([float(np.asarray(v[0]).ravel()[0]), float(np.asarray(v[1]).ravel()[0])],
                                                      want, 1e-9, 1e-15)))
    for n, c in [(10, 0), (10, 10), (7, 3)]:
        want = ref.logit((c + 0.5) / (n + 1)) if c in (0, n) else ref.logit(c / n)
        out.append(_ok(G_, f"start_logits(n={n}, c={c})", lambda n=n, c=c: start_logits([n], [c]),
                       lambda v, want=want: ref.close(float(np.asarray(v).ravel()[0]), want, 1e-12)))
        wj = ref.logit((c + 0.5) / (n + 1))
        out.append(_ok(G_, f"jeffreys_logit(k={c}, m={n})", lambda n=n, c=c: jeffreys_logit(c, n),
                       lambda v, want=wj: ref.close(float(np.asarray(v).ravel()[0]), want, 1e-12)))
    # E|Bin(m, q)/m - q| by exact summation
    for q, m in [(0.3, 10), (0.5, 1), (1e-9, 100)]:
        want = math.fsum(math.comb(m, j) * q ** j * (1 - q) ** (m - j) * abs(j / m - q) for j in range(m + 1))
        out.append(_ok(G_, f"sampling_floor(q={q}, m={m}) = E|Bin(m, q)/m - q|", lambda q=q, m=m: sampling_floor([q], [m]),
                       lambda v, want=want: ref.close(float(v), want, 1e-10, 1e-15)))
    for beta, G in [(0.25, 2), (1.5, 2), (0.5, INF)]:
        want = max(1 - beta, 0.0) if G == 2 else 1.0          # Eq. 14 at p -> 0+; Eq. 15 is discontinuous at 0, -> 1/(1+b^2)?
        if G == INF:
            want = 1 / (1 + beta * beta)                       # Eq. 15 at p = 0+: (1 + 1)/(2 (1 + b^2))
        out.append(_ok(G_, f"zero_limit(beta={beta}, G={G}) = x(0+)", lambda beta=beta, G=G:
                       zero_limit(Objective(beta=beta, group_size=G)),
                       lambda v, want=want: ref.close(float(v), want, 1e-9, 1e-15)))
    out.append(_either(G_, "zero_limit(Objective(beta=0.5), rewards=(0, 1)) (the 'correct' class is the worse): x(0+) = 0, "
                           "or refused naming rewards", lambda: zero_limit(Objective(beta=0.5), rewards=(0.0, 1.0)),
                       lambda v: ref.close(float(v), 0.0, 0, 1e-12), ["rewards"]))
    t = np.array([0.0, 1.0, 2.0, 3.0])
    path = np.array([[0.1], [0.3], [0.5], [0.7]])          # shape (T, N): one prompt
    out.append(_ok(G_, "clock_from_mean_reward(one prompt rising linearly 0.1 .. 0.7, mean 0.4) = 1.5",
                   lambda: clock_from_mean_reward(t, path, 0.4), lambda v: ref.close(float(v), 1.5, 1e-6)))
    out.append(_ok(G_, "largest_drop(steps 0..5, values [1, 3, 2, 5, 0.5, 4]) = 4.5 (from 5 at step 3 to 0.5 at step 4)",
                   lambda: largest_drop([0, 1, 2, 3, 4, 5], [1, 3, 2, 5, 0.5, 4]),
                   lambda v: ref.close(float(getattr(v, "size", getattr(v, "drop", np.nan))), 4.5, 1e-12)))
    for lab, call, names in [
        ("unbiased_pass_at_k(n=5, c=6, k=1) (c > n)", lambda: unbiased_pass_at_k(5, 6, 1), ["6"]),
        ("unbiased_pass_at_k(n=5, c=2, k=0)", lambda: unbiased_pass_at_k(5, 2, 0), ["k"]),
        ("pass_at_k(x=1.5, k=2)", lambda: pass_at_k(1.5, 2), ["1.5"]),
        ("binomial_interval(3, 12, level=0.0)", lambda: binomial_interval(3, 12, level=0.0), ["level"]),
        ("binomial_interval(3, 12, method='clopper')", lambda: binomial_interval(3, 12, method="clopper"), ["clopper"]),
        ("start_logits(n=[0], c=[0])", lambda: start_logits([0], [0]), ["n"]),
        ("jeffreys_logit(k=5, m=3) (k > m)", lambda: jeffreys_logit(5, 3), ["5"]),
        ("calibration_split(size=1)", lambda: calibration_split(1), ["size"]),
        ("calibration_split(size=10, fraction=1.5)", lambda: calibration_split(10, fraction=1.5), ["fraction"]),
        ("time_grid(t_max=-1)", lambda: time_grid(-1.0), ["t_max"]),
        ("time_grid(n=10**10) (would not fit)", lambda: time_grid(n=10 ** 10), ["n"]),
        ("time_grid(t_min=0)", lambda: time_grid(t_min=0.0), ["t_min"]),
        ("check_kernel(a non-symmetric 2x2, n=2)", lambda: check_kernel(np.array([[1.0, 0.5], [0.0, 1.0]]), 2), ["symmetric"]),
        ("check_kernel(an indefinite 2x2 [[1, 2], [2, 1]])", lambda: check_kernel(np.array([[1.0, 2.0], [2.0, 1.0]]), 2),
         ["semi-definite"]),
        ("check_kernel(a 3x3 for n=2)", lambda: check_kernel(np.eye(3), 2), ["3"]),
        ("sampling_floor(q=[0.3], m=[0])", lambda: sampling_floor([0.3], [0]), ["m"]),
        ("sampling_floor(q=[0.3], m=[10**9]) (an exact sum of 10^9 terms)", lambda: sampling_floor([0.3], [10 ** 9]), ["m"]),
        ("clock_from_mean_reward(mean 0.9, never reached)", lambda: clock_from_mean_reward(t, path, 0.9), ["0.9"]),
        ("largest_drop(steps and values of different lengths)", lambda: largest_drop([0, 1, 2], [1.0, 2.0]), ["values"]),
    ]:
        out.append(_err(G_, lab, call, names))
    return out


def _wilson_ref(c, n, level=0.95):
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - level) / 2)
    p = c / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(mid - half, 0.0), min(mid + half, 1.0)


def pd_int(vals):
    import pandas as pd

    return pd.Series(vals, dtype="Int64")


def all_api_cases() -> list[dict]:
    return (pg_cases() + binary_extreme_cases() + finite_g_cases() + family_cases() + multi_output_cases()
            + pooling_cases() + dynamics_cases() + tree_cases() + dtype_cases() + least_named_cases()
            + predict_api_cases() + binomial_form_cases() + all_points_cases() + monte_carlo_cases() + reader_api_cases()
            + kl_and_closed_cases() + reward_scale_cases() + graded_cases()
            + predict_helper_cases())
