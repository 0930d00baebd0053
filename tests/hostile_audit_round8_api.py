"""Cases of the eighth hostile audit (issue 45), part one: answers that must be right, and the types people pass.

Checked against :mod:`hostile_audit_round8_ref` (no ``grpo_theory`` import). Tolerances: the library is exact to
about 1e-12 on these paths and the references are exact to 1e-14 (floats, ``math.fsum``) or better (40-digit
mpmath), so a stationarity condition, scaled by ``1 + max|P_G|/beta`` (the size of its terms), is held to 1e-9,
and a value compared with a closed form or a root to 1e-9 relative (1e-12 absolute near 0): a wrong root is off
by 1e-3 or more. Where a double cannot hold the input (float32 0.3), the reference takes the double the library
was given (``float(np.float32(0.3))``), not the decimal the user typed.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

import hostile_audit_round8_ref as ref

INF = math.inf
TOL = 1e-9


def _ok(group, label, call, check):
    def chk(tmp, res):
        return bool(check(res["value"]))
    return dict(group=group, label=label, call=call, expect="ok", names=[], check=chk, wrong=[])


def _pi(v):
    return np.asarray(getattr(v, "pi", v), float).ravel()


# ---------------------------------------------------------------- solve --json: six rows, each checked
def _solve_check(pi_ref, beta, G, ddof, eps, rewards=None, levels=None, probs=None, preference=None):
    def check(tmp, res):
        d = json.loads(res["out"])
        rows = {r["method"]: r for r in d["rows"]}
        bad = []
        for method, row in rows.items():
            pts = [p["pi"] for p in row.get("points", [])] or ([row["pi"]] if row.get("pi") is not None else [])
            if row.get("pi") is None:
                # not computed: only where the note says why (a preference matrix fixes G = 2, scale, eps = 0;
                # RLHF needs rewards)
                if not row.get("note"):
                    bad.append(f"{method}: no pi and no note")
                continue
            for pi in pts:
                pi = np.asarray(pi, float)
                if method.startswith("GRPO"):
                    pen, norm = method.split()[1].split("/")
                    if preference is not None:
                        M = np.asarray(preference, float).reshape(len(pi_ref), len(pi_ref))
                        P = (M - M.T) @ pi
                    else:
                        P = ref.pg_groups(pi, G, rewards=rewards, levels=levels, probs=probs,
                                          ddof=0 if norm == "shift" else ddof, eps=0.0 if norm == "shift" else eps,
                                          normalization=norm)
                    r = (ref.reverse_resid if pen == "reverse" else ref.direct_resid)(pi, pi_ref, P, beta)
                    if not r <= TOL:
                        bad.append(f"{method}: condition off by {r:.2e}")
                elif method.startswith("RLHF"):
                    mean_r = rewards if rewards is not None else (np.asarray(probs) @ np.asarray(levels, float))
                    want = ref.rlhf(pi_ref, mean_r, beta)
                    if not ref.close(pi, want, rtol=TOL, atol=1e-12):
                        bad.append(f"RLHF {pi} != {want}")
                elif method.startswith("NLHF"):
                    if preference is not None:
                        M = np.asarray(preference, float).reshape(len(pi_ref), len(pi_ref))
                        r = ref.direct_resid(pi, pi_ref, M @ pi, beta)
                    elif rewards is not None:
                        r = ref.nlhf_resid(pi, pi_ref, rewards, beta)
                    else:                       # random rewards: P(o > o') with ties counted 1/2
                        lv = np.asarray(levels, float)
                        W = (lv[:, None] > lv[None, :]) + 0.5 * (lv[:, None] == lv[None, :])
                        Pm = np.asarray(probs) @ W @ np.asarray(probs).T
                        r = ref.direct_resid(pi, pi_ref, Pm @ pi, beta)
                    if not r <= TOL:
                        bad.append(f"NLHF condition off by {r:.2e}")
        # the root from the binary form with rewards 1/0: scale normalisation is invariant to the reward gap only
        # without an epsilon
        if rewards is not None and len(pi_ref) == 2 and rewards[0] > rewards[1] and G <= 16 and (
                eps == 0 or rewards[0] - rewards[1] == 1):
            x = ref.binary_root(pi_ref[0], beta, G, "reverse", ddof, eps)
            got = rows["GRPO reverse/scale"]["pi"][0]
            if not abs(got - x) <= TOL * max(x, 1e-3):
                bad.append(f"reverse/scale pi(a) {got} != flow's root {x}")
        if bad:
            raise AssertionError("; ".join(bad))
        return True
    return check


def solve_json_cases() -> list[dict]:
    G_ = "CLI: solve --json, every row checked"
    out = []
    specs = [  # pi_ref, rewards, beta, G, ddof, eps
        ([0.3, 0.7], [1, 0], 0.3, 3, 0, 0.0), ([0.3, 0.7], [1, 0], 0.3, 3, 1, 1e-4), ([0.05, 0.95], [2, -1], 1.7, 5, 0, 0.0),
        ([0.6, 0.4], [0.5, 0.25], 0.08, 4, 1, 0.0), ([0.01, 0.99], [1, 0], 0.02, 7, 0, 0.0),
        ([0.9, 0.1], [3, 0], 2.5, 6, 1, 0.3), ([0.5, 0.5], [1, 0], 1.0, 8, 0, 0.0), ([0.2, 0.8], [1, 0], 0.7, 16, 1, 1e-4),
        ([0.25, 0.75], [-1, -2], 0.4, 2, 0, 0.0), ([0.25, 0.75], [10, 0], 0.4, 2, 1, 0.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.5, 3, 0, 0.0), ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.5, 4, 1, 1e-4),
        ([0.1, 0.1, 0.8], [0, 1, 1], 0.25, 5, 0, 0.0), ([0.4, 0.35, 0.25], [2, 2, 2.5], 1.3, 3, 0, 0.0),
        ([0.7, 0.2, 0.1], [0, 0.3, 1], 0.15, 6, 1, 0.05), ([0.25, 0.25, 0.25, 0.25], [4, 3, 2, 1], 0.9, 4, 0, 0.0),
        ([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1], 0.6, 5, 1, 0.0), ([0.05, 0.15, 0.3, 0.5], [1, 0.9, 0.1, 0], 0.35, 3, 0, 0.0),
        ([0.4, 0.3, 0.2, 0.1], [-3, 0, 0, 5], 2.0, 7, 0, 1e-4), ([0.3, 0.7], [1, 0], 0.3, INF, 0, 0.0),
        ([0.2, 0.3, 0.5], [1, 0.5, 0], 0.5, INF, 0, 0.0), ([0.1, 0.2, 0.3, 0.4], [0, 1, 2, 3], 1.1, INF, 1, 0.0),
        ([1e-6, 1 - 1e-6], [1, 0], 0.1, 3, 0, 0.0), ([0.999, 0.001], [1, 0], 0.05, 4, 0, 0.0),
        ([0.3, 0.7], [1e-3, 0], 1e-4, 3, 0, 0.0), ([0.3, 0.7], [1e3, 0], 200.0, 3, 1, 0.0),
        ([0.5, 0.2, 0.2, 0.1], [0, 0, 0, 1], 0.45, 8, 0, 0.0), ([0.3, 0.3, 0.4], [1, 1, 0], 0.2, 2, 0, 0.0),
    ]
    for pr, r, b, g, dd, eps in specs:
        gs = "inf" if g == INF else str(g)
        argv = ["solve", "--pi-ref", *map(repr, pr), "--rewards", *map(str, r), "--beta", repr(b), "--group-size", gs,
                "--std-ddof", str(dd), "--std-eps", repr(eps), "--json"]
        out.append(dict(group=G_, label=f"solve --json pi_ref={pr} rewards={r} beta={b} G={gs} ddof={dd} eps={eps}",
                        argv=argv, expect="ok", check=_solve_check(pr, b, g, dd, eps, rewards=r)))
    rnd = [  # pi_ref, levels, probs (K x L), beta, G, ddof, eps
        ([0.2, 0.3, 0.5], [0, 1], [[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]], 0.5, 3, 0, 0.0),
        ([0.2, 0.3, 0.5], [0, 1], [[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]], 0.5, INF, 0, 0.0),
        ([0.6, 0.4], [0, 0.5, 1], [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]], 0.3, 4, 1, 1e-4),
        ([0.5, 0.5], [-1, 1], [[0.3, 0.7], [0.6, 0.4]], 0.1, 5, 0, 0.0),
        ([0.1, 0.9], [0, 1], [[0.0, 1.0], [0.7, 0.3]], 0.8, 2, 0, 0.0),
        ([0.25, 0.25, 0.5], [0, 1, 2], [[1, 0, 0], [0, 1, 0], [0.2, 0.2, 0.6]], 1.0, 3, 1, 0.0),
    ]
    for pr, lv, pb, b, g, dd, eps in rnd:
        gs = "inf" if g == INF else str(g)
        argv = ["solve", "--pi-ref", *map(repr, pr), "--reward-levels", *map(str, lv), "--reward-probs",
                *[repr(float(v)) for row in pb for v in row], "--beta", repr(b), "--group-size", gs,
                "--std-ddof", str(dd), "--std-eps", repr(eps), "--json"]
        out.append(dict(group=G_, label=f"solve --json random rewards pi_ref={pr} levels={lv} probs={pb} beta={b} G={gs} "
                        f"ddof={dd} eps={eps}", argv=argv, expect="ok",
                        check=_solve_check(pr, b, g, dd, eps, levels=lv, probs=pb)))
    prefs = [([0.2, 0.3, 0.5], [0.5, 0.7, 0.2, 0.3, 0.5, 0.6, 0.8, 0.4, 0.5], 0.5),
             ([0.5, 0.5], [0.5, 0.9, 0.1, 0.5], 0.2), ([0.3, 0.3, 0.4], [0.5, 1, 0, 0, 0.5, 1, 1, 0, 0.5], 0.7),
             ([0.6, 0.4], [0.5, 0.55, 0.45, 0.5], 0.01)]
    for pr, m, b in prefs:
        argv = ["solve", "--pi-ref", *map(repr, pr), "--preference", *map(repr, m), "--beta", repr(b), "--json"]
        out.append(dict(group=G_, label=f"solve --json preference pi_ref={pr} P={m} beta={b}", argv=argv, expect="ok",
                        check=_solve_check(pr, b, 2, 0, 0.0, preference=m)))
    return out


# ---------------------------------------------------------------- stationary_policy / points, checked
def policy_cases() -> list[dict]:
    from grpo_theory import Objective, Question, nash_equilibrium, rlhf_optimum, stationary_points, stationary_policy

    G_ = "API: stationary policies, checked against the flow's root or the condition"
    out = []
    for p, b, g, dd, eps in [(0.3, 0.4, 9, 0, 0.0), (0.05, 0.1, 15, 1, 1e-4), (0.7, 2.0, 33, 0, 0.0),
                             (0.5, 0.25, 64, 1, 0.0), (0.02, 0.6, 12, 0, 0.0), (0.9, 0.05, 10, 1, 1e-6),
                             (0.15, 1.5, 21, 0, 0.0), (0.4, 0.01, 11, 0, 0.0)]:
        x = ref.binary_root(p, b, g, "reverse", dd, eps)
        out.append(_ok(G_, f"stationary_policy binary p={p} beta={b} G={g} ddof={dd} eps={eps} (reverse)",
                       lambda p=p, b=b, g=g, dd=dd, eps=eps: stationary_policy(
                           Question([p, 1 - p], rewards=[1, 0]), Objective(beta=b, group_size=g, std_ddof=dd, std_eps=eps)),
                       lambda v, x=x: abs(_pi(v)[0] - x) <= TOL * x))
    for p, b, g in [(0.3, 0.4, 9), (0.1, 0.05, 6), (0.6, 1.2, 13)]:
        x = ref.binary_root(p, b, g, "direct")
        out.append(_ok(G_, f"stationary_policy binary p={p} beta={b} G={g} direct",
                       lambda p=p, b=b, g=g: stationary_policy(Question([p, 1 - p], rewards=[1, 0]),
                                                               Objective(beta=b, group_size=g, penalty="direct")),
                       lambda v, x=x: abs(_pi(v)[0] - x) <= TOL * x))
    rnd = [([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 0.3, 6, 0, 0.0),
           ([0.2, 0.5, 0.3], [0, 1], [[0.1, 0.9], [0.4, 0.6], [0.9, 0.1]], 0.2, 4, 1, 1e-4),
           ([0.4, 0.6], [0, 0.5, 1], [[0.1, 0.1, 0.8], [0.3, 0.4, 0.3]], 0.5, 5, 0, 0.0),
           ([0.1, 0.2, 0.3, 0.4], [0, 1], [[0.5, 0.5], [0.3, 0.7], [0.9, 0.1], [1.0, 0.0]], 0.4, 3, 0, 0.0),
           ([0.5, 0.5], [-2, 0, 3], [[0.2, 0.5, 0.3], [0.4, 0.2, 0.4]], 1.5, 7, 1, 0.0),
           ([0.2, 0.3, 0.5], [0, 1], [[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]], 0.35, INF, 0, 0.0)]
    for pr, lv, pb, b, g, dd, eps in rnd:
        for pen in ("reverse", "direct"):
            def call(pr=pr, lv=lv, pb=pb, b=b, g=g, dd=dd, eps=eps, pen=pen):
                return stationary_policy(Question(pr, reward_levels=lv, reward_probs=pb),
                                         Objective(beta=b, group_size=g, std_ddof=dd, std_eps=eps, penalty=pen))

            def check(v, pr=pr, lv=lv, pb=pb, b=b, g=g, dd=dd, eps=eps, pen=pen):
                pi = _pi(v)
                P = ref.pg_groups(pi, g, levels=lv, probs=pb, ddof=dd, eps=eps)
                f = ref.reverse_resid if pen == "reverse" else ref.direct_resid
                return f(pi, pr, P, b) <= TOL
            out.append(_ok(G_, f"stationary_policy random rewards pi_ref={pr} levels={lv} probs={pb} beta={b} G={g} "
                           f"ddof={dd} eps={eps} {pen}", call, check))
    # the large-G direct penalty: two interior roots for larger beta (SPEC section 4); every point must solve
    # the condition and the set must hold both
    for p, b in [(0.3, 3.0), (0.1, 5.0), (0.5, 2.0)]:
        def call(p=p, b=b):
            return stationary_points(Question([p, 1 - p], rewards=[1, 0]), Objective(beta=b, group_size=INF,
                                                                                     penalty="direct"))

        def check(v, p=p, b=b):
            xs = sorted(float(np.asarray(pt.pi)[0]) for pt in v.points)
            h = lambda x: 1 / (b * math.sqrt(x * (1 - x))) - math.log(x / (1 - x)) + math.log(p / (1 - p))  # noqa: E731
            grid = np.linspace(1e-6, 1 - 1e-6, 200001)
            hv = np.array([h(x) for x in grid[::50]])
            n_roots = int(np.sum(np.sign(hv[1:]) != np.sign(hv[:-1])))
            interior = [x for x in xs if 0 < x < 1]
            return len(interior) == n_roots and all(abs(h(x)) <= 1e-7 * (1 + 1 / (b * math.sqrt(x * (1 - x))))
                                                    for x in interior)
        out.append(_ok(G_, f"stationary_points binary p={p} beta={b} G=inf direct: every interior root of h", call, check))
    for pr, r, b in [([1e-200, 1 - 1e-200], [1, 0], 0.01), ([0.25] * 4, [0, 1e-8, 2e-8, 3e-8], 1e-8),
                     ([0.5, 0.5 - 1e-12, 1e-12], [0, 1, 40], 1.0), ([0.1] * 10, list(range(10)), 3.0)]:
        w = ref.rlhf(pr, r, b)
        out.append(_ok(G_, f"rlhf_optimum pi_ref={pr[:4]} rewards={r[:4]} beta={b}",
                       lambda pr=pr, r=r, b=b: rlhf_optimum(Question(pr, rewards=r), b),
                       lambda v, w=w: ref.close(_pi(v), w, rtol=TOL, atol=1e-300)))
        out.append(_ok(G_, f"nash_equilibrium pi_ref={pr[:4]} rewards={r[:4]} beta={b}",
                       lambda pr=pr, r=r, b=b: nash_equilibrium(Question(pr, rewards=r), b),
                       lambda v, pr=pr, r=r, b=b: ref.nlhf_resid(_pi(v), pr, r, b) <= TOL))
    return out


# ---------------------------------------------------------------- P_G itself
def preference_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference
    from grpo_theory import closed_form as cf

    G_ = "API: P_G at large G and with random rewards, checked"
    out = []
    for g in (5000, 10007, 20000):
        for x in (0.001, 0.3, 0.97):
            pa, pb = ref.binary_p_mp(x, g)
            want = [float(pa), float(pb)]
            out.append(_ok(G_, f"binary_preference({x}, {g})",
                           lambda x=x, g=g: np.concatenate([np.ravel(a) for a in cf.binary_preference(x, g)]),
                           lambda v, w=want: ref.close(v, w, rtol=1e-9)))
    for pr, lv, pb, pi, g, dd, eps, norm in [
            ([0.2, 0.3, 0.5], [0, 1], [[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]], [0.5, 0.25, 0.25], 4, 0, 0.0, "scale"),
            ([0.6, 0.4], [0, 0.5, 1], [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]], [0.1, 0.9], 6, 1, 1e-4, "scale"),
            ([0.5, 0.5], [-1, 1], [[0.3, 0.7], [0.6, 0.4]], [0.999, 0.001], 5, 0, 0.0, "scale"),
            ([0.3, 0.7], [0, 1, 2, 3], [[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]], [0.5, 0.5], 3, 1, 0.0, "scale"),
            ([0.3, 0.7], [0, 1, 2, 3], [[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]], [0.5, 0.5], 3, 0, 0.0, "shift"),
            ([0.2, 0.3, 0.5], [0, 1], [[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]], [0.2, 0.3, 0.5], INF, 0, 0.0, "scale")]:
        want = ref.pg_groups(pi, g, levels=lv, probs=pb, ddof=dd, eps=eps, normalization=norm)
        out.append(_ok(G_, f"reward_preference random rewards levels={lv} probs={pb} pi={pi} G={g} ddof={dd} eps={eps} "
                       f"{norm}", lambda pr=pr, lv=lv, pb=pb, pi=pi, g=g, dd=dd, eps=eps, norm=norm: reward_preference(
                           Question(pr, reward_levels=lv, reward_probs=pb),
                           Objective(beta=1.0, group_size=g, std_ddof=dd, std_eps=eps, normalization=norm), pi),
                       lambda v, w=want: ref.close(v, w, rtol=1e-10, atol=1e-13)))
    for pi, r, g, dd in [([0.1, 0.2, 0.3, 0.4], [5, 1, 1, 0], 6, 0), ([0.25] * 4, [1, 2, 3, 4], 9, 1),
                         ([1e-9, 0.5, 0.5 - 1e-9], [1, 0, 0.5], 4, 0), ([0.5, 0.5, 0.0], [1, 0, 2], 3, 0)]:
        want = ref.pg_groups(pi, g, rewards=r, ddof=dd)
        out.append(_ok(G_, f"reward_preference deterministic pi={pi} rewards={r} G={g} ddof={dd}",
                       lambda pi=pi, r=r, g=g, dd=dd: reward_preference(Question([1 / len(r)] * len(r), rewards=r),
                                                                        Objective(beta=1.0, group_size=g, std_ddof=dd), pi),
                       lambda v, w=want: ref.close(v, w, rtol=1e-10, atol=1e-13)))
    return out


# ---------------------------------------------------------------- predict's table, checked
def predict_value_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts

    G_ = "API: predict's table, checked"
    out = []
    cases = [  # n, c, beta, G, interval, level, ks
        ([10, 20, 7], [3, 0, 7], 0.5, 2, "jeffreys", 0.95, (1, 3, 25)),
        ([100, 1000, 64], [1, 999, 32], 0.2, 2, "wilson", 0.8, (1, 2, 64)),
        ([5, 5, 5], [1, 2, 3], 1.3, 2, "jeffreys", 0.5, (5, 6)),
        ([3, 1000000], [0, 123457], 0.05, 2, "jeffreys", 0.999, (1,)),
        ([40, 41, 42], [10, 10, 10], 0.7, 4, "wilson", 0.95, (1, 8)),
        ([12, 12], [0, 12], 0.3, 6, "jeffreys", 0.9, (4,)),
    ]
    for n, c, b, g, itv, lvl, ks in cases:
        def call(n=n, c=c, b=b, g=g, itv=itv, lvl=lvl, ks=ks):
            return predict(samples_from_counts(n=n, correct=c, prompt_ids=[f"q{i}" for i in range(len(n))]),
                           Objective(beta=b, group_size=g), k=ks, level=lvl, interval=itv).table

        def check(t, n=n, c=c, b=b, g=g, itv=itv, lvl=lvl, ks=ks):
            bad = []
            for i, (nn, cc) in enumerate(zip(n, c)):
                row = t.iloc[i]
                p = cc / nn
                x = lambda q: ref.eq14(q, b) if g == 2 else ref.binary_root(q, b, g, "reverse")  # noqa: E731
                lo, hi = (ref.jeffreys if itv == "jeffreys" else ref.wilson)(cc, nn, lvl)
                if cc == 0:
                    lo, hi = 0.0, 1 - (1 - lvl) ** (1 / nn)
                    want_pred = (1 - b if b < 1 else 0.0) if g == 2 else None
                elif cc == nn:
                    hi, want_pred = 1.0, 1.0
                    lo = (1 - lvl) ** (1 / nn)
                else:
                    want_pred = x(p)
                if abs(row["p_ref"] - p) > 1e-15:
                    bad.append(f"{i} p_ref")
                if cc not in (0, nn) and not (ref.close(row["p_ref_lo"], lo, 1e-8) and ref.close(row["p_ref_hi"], hi, 1e-8)):
                    bad.append(f"{i} interval {row['p_ref_lo']},{row['p_ref_hi']} != {lo},{hi}")
                if cc == 0 and not ref.close(row["p_ref_hi"], hi, 1e-8):
                    bad.append(f"{i} never-solved upper bound {row['p_ref_hi']} != {hi}")
                if want_pred is not None and not abs(row["pred"] - want_pred) <= 1e-9 * max(want_pred, 1e-3):
                    bad.append(f"{i} pred {row['pred']} != {want_pred}")
                if 0 < cc < nn:
                    if not ref.close(row["pred_lo"], x(lo), 1e-7) or not ref.close(row["pred_hi"], x(hi), 1e-7):
                        bad.append(f"{i} pred interval")
                    if not ref.close(row["kl_direct"], ref.kl2(row["pred"], p), 1e-9, 1e-15):
                        bad.append(f"{i} kl_direct")
                    if not ref.close(row["kl_reverse"], ref.kl2(p, row["pred"]), 1e-9, 1e-15):
                        bad.append(f"{i} kl_reverse")
                for k in ks:
                    wb = ref.pass_before(nn, cc, k)
                    got = row[f"pass@{k}_before"]
                    if math.isnan(wb) != (got is None or (isinstance(got, float) and math.isnan(got))) or (
                            not math.isnan(wb) and not ref.close(got, wb, 1e-12, 1e-15)):
                        bad.append(f"{i} pass@{k}_before {got} != {wb}")
                    if not ref.close(row[f"pass@{k}_after"], ref.pass_after(row["pred"], k), 1e-12, 1e-15):
                        bad.append(f"{i} pass@{k}_after")
            if bad:
                raise AssertionError("; ".join(bad))
            return True
        out.append(_ok(G_, f"predict n={n} correct={c} beta={b} G={g} {itv} level={lvl} k={ks}", call, check))
    # more than max_exact (400) distinct p_ref: the checked spline, documented to tol = 1e-6
    rng = np.random.default_rng(8)
    n = rng.integers(8, 600, 700).tolist()
    c = [int(rng.integers(1, m)) for m in n]

    def big(n=n, c=c):
        return predict(samples_from_counts(n=n, correct=c), Objective(beta=0.4), k=(1,), progress=False).table

    def big_check(t, n=n, c=c):
        return all(abs(t["pred"].iloc[i] - ref.eq14(cc / nn, 0.4)) <= 1e-6 for i, (nn, cc) in enumerate(zip(n, c)))
    out.append(_ok(G_, "predict 700 prompts, n from 8 to 600 (the checked spline): pred within tol 1e-6 of Eq. 14",
                   big, big_check))
    return out


# ---------------------------------------------------------------- numeric types and containers
def type_cases() -> list[dict]:
    import pandas as pd

    from grpo_theory import Objective, Question, stationary_policy
    from grpo_theory import closed_form as cf
    from grpo_theory.predict import predict, samples_from_counts

    G_ = "API: numeric types and containers a scientist passes"
    out = []
    q = Question([0.3, 0.7], rewards=[1, 0])
    betas = {  # label: (value, expectation, the double it means)
        "np.float16(0.5)": (np.float16(0.5), "ok", 0.5), "np.float32(0.3)": (np.float32(0.3), "ok", float(np.float32(0.3))),
        "np.longdouble('0.3')": (np.longdouble("0.3"), "ok", 0.3), "np.array(0.3) (0-d)": (np.array(0.3), "ok", 0.3),
        "np.array(0.3, dtype=np.float32) (0-d)": (np.array(0.3, np.float32), "ok", float(np.float32(0.3))),
        "Decimal('0.3')": (Decimal("0.3"), "ok", 0.3), "Fraction(3, 10)": (Fraction(3, 10), "ok", 0.3),
        "np.int64(2)": (np.int64(2), "ok", 2.0), "np.uint8(1)": (np.uint8(1), "ok", 1.0), "np.int16(3)": (np.int16(3), "ok", 3.0),
        "np.bool_(True)": (np.bool_(True), "error", None), "np.array([0.3]) (shape (1,))": (np.array([0.3]), "either", 0.3),
        "pd.Series([0.3])": (pd.Series([0.3]), "either", 0.3), "np.float64('nan')": (np.float64("nan"), "error", None),
        "np.float32('inf')": (np.float32("inf"), "error", None), "Decimal('NaN')": (Decimal("NaN"), "error", None),
        "Decimal('-0.3')": (Decimal("-0.3"), "error", None), "Fraction(0)": (Fraction(0), "error", None),
        "np.str_('0.3')": (np.str_("0.3"), "error", None), "memoryview(b'0')": (memoryview(b"0"), "error", None),
        "np.datetime64('2020')": (np.datetime64("2020"), "error", None), "np.timedelta64(1)": (np.timedelta64(1), "error", None),
        "np.complex128(0.3)": (np.complex128(0.3), "error", None), "np.ma.masked": (np.ma.masked, "error", None),
        "pd.NA": (pd.NA, "error", None), "pd.Timestamp(0)": (pd.Timestamp(0), "error", None),
    }
    for lab, (v, exp, d) in betas.items():
        names = ["beta"] if exp != "ok" else []
        check = None if d is None else (lambda val, d=d: abs(_pi(val)[0] - ref.eq14(0.3, d)) <= TOL)
        case = _ok(G_, f"Objective(beta={lab})", lambda v=v: stationary_policy(q, Objective(beta=v)),
                   check or (lambda val: True))
        case.update(expect=exp, names=names)
        out.append(case)
    gsizes = {
        "np.int64(4)": (np.int64(4), "ok", 4), "np.int8(4)": (np.int8(4), "ok", 4), "np.uint16(4)": (np.uint16(4), "ok", 4),
        "np.float64(4.0)": (np.float64(4.0), "either", 4), "np.array(4) (0-d)": (np.array(4), "ok", 4),
        "Decimal(4)": (Decimal(4), "either", 4), "Fraction(8, 2)": (Fraction(8, 2), "either", 4),
        "np.float64('inf')": (np.float64("inf"), "ok", INF), "Decimal('Infinity')": (Decimal("Infinity"), "either", INF),
        "np.bool_(True)": (np.bool_(True), "error", None), "np.float32(4.5)": (np.float32(4.5), "error", None),
        "np.int64(1)": (np.int64(1), "error", None), "np.uint64(2**63)": (np.uint64(2**63), "either", INF),
        "np.array([4])": (np.array([4]), "either", 4), "'4'": ("4", "error", None), "Decimal('4.0000000000000000001')":
        (Decimal("4.0000000000000000001"), "error", None), "Fraction(9, 2)": (Fraction(9, 2), "error", None),
    }
    for lab, (v, exp, g) in gsizes.items():
        names = ["group_size"] if exp != "ok" else []
        w = None if g is None else (ref.binary_root(0.3, 0.5, g, "reverse") if g != INF else ref.eq15(0.3, 0.5))
        case = _ok(G_, f"Objective(beta=0.5, group_size={lab})",
                   lambda v=v: stationary_policy(q, Objective(beta=0.5, group_size=v)),
                   (lambda val, w=w: abs(_pi(val)[0] - w) <= TOL) if w is not None else (lambda val: True))
        case.update(expect=exp, names=names)
        out.append(case)
    pis = {
        "[Decimal('0.3'), Decimal('0.7')]": ([Decimal("0.3"), Decimal("0.7")], "ok"),
        "[Fraction(3, 10), Fraction(7, 10)]": ([Fraction(3, 10), Fraction(7, 10)], "ok"),
        "memoryview(np.array([0.3, 0.7]))": (memoryview(np.array([0.3, 0.7])), "ok"),
        "pd.Series([0.3, 0.7], index=['b', 'a'])": (pd.Series([0.3, 0.7], index=["b", "a"]), "ok"),
        "pd.Index([0.3, 0.7])": (pd.Index([0.3, 0.7]), "ok"),
        "pd.array([0.3, 0.7], dtype='Float64')": (pd.array([0.3, 0.7], dtype="Float64"), "ok"),
        "np.array([0.3, 0.7], dtype=np.float32)": (np.array([0.3, 0.7], np.float32), "either"),
        "(np.float32(0.3), np.float64(0.7))": ((np.float32(0.3), np.float64(0.7)), "either"),
        "DataFrame column df['p']": (pd.DataFrame({"p": [0.3, 0.7]})["p"], "ok"),
        "DataFrame row df.iloc[0]": (pd.DataFrame([[0.3, 0.7]], columns=["a", "b"]).iloc[0], "ok"),
        "np.array([[0.3, 0.7]]) (1 x 2)": (np.array([[0.3, 0.7]]), "error"),
        "{'a': 0.3, 'b': 0.7}": ({"a": 0.3, "b": 0.7}, "error"), "{0.3, 0.7} (a set)": ({0.3, 0.7}, "error"),
        "pd.array([0.3, None], dtype='Float64')": (pd.array([0.3, None], dtype="Float64"), "error"),
        "pd.Categorical([0.3, 0.7])": (pd.Categorical([0.3, 0.7]), "either"),
        "[Decimal('0.3'), Decimal('0.6')] (sums to 0.9)": ([Decimal("0.3"), Decimal("0.6")], "error"),
        "['0.3', '0.7'] (text)": (["0.3", "0.7"], "error"), "b'\\x00\\x01'": (b"\x00\x01", "error"),
        "[np.float64(0.3), Decimal('0.7')]": ([np.float64(0.3), Decimal("0.7")], "ok"),
        "np.ma.array([0.3, 0.7], mask=[0, 1])": (np.ma.array([0.3, 0.7], mask=[0, 1]), "error"),
    }
    for lab, (v, exp) in pis.items():
        names = ["pi_ref"] if exp != "ok" else []
        case = _ok(G_, f"Question(pi_ref={lab}, rewards=[1, 0]) solved at beta 0.5",
                   lambda v=v: stationary_policy(Question(v, rewards=[1, 0]), Objective(beta=0.5)),
                   lambda val: abs(_pi(val)[0] - ref.eq14(0.3, 0.5)) <= 1e-7)
        case.update(expect=exp, names=names)
        out.append(case)
    rewards = {
        "range(2) (rewards 0, 1)": (range(2), "ok", [0, 1]), "np.array([1, 0], dtype=np.int8)": (np.array([1, 0], np.int8), "ok", [1, 0]),
        "[Decimal('1'), Decimal('0')]": ([Decimal(1), Decimal(0)], "ok", [1, 0]),
        "memoryview(np.array([1, 0], dtype=np.int32))": (memoryview(np.array([1, 0], np.int32)), "ok", [1, 0]),
        "pd.Series([True, False])": (pd.Series([True, False]), "either", [1, 0]),
        "pd.array([1, None], dtype='Int64')": (pd.array([1, None], dtype="Int64"), "error", None),
        "np.array([1, 0], dtype=np.uint8)": (np.array([1, 0], np.uint8), "ok", [1, 0]),
        "np.array([0, 1], dtype=np.uint8) (0 - 1 would wrap)": (np.array([0, 1], np.uint8), "ok", [0, 1]),
        "[Fraction(1, 3), Fraction(0)]": ([Fraction(1, 3), Fraction(0)], "ok", [1 / 3, 0]),
        "np.array(['1', '0'])": (np.array(["1", "0"]), "error", None),
    }
    for lab, (v, exp, r) in rewards.items():
        names = ["rewards"] if exp != "ok" else []
        if r is None:
            chk = lambda val: True  # noqa: E731
        else:
            a = 0 if r[0] > r[1] else 1
            w = ref.binary_root(0.3 if a == 0 else 0.7, 0.5, 4, "reverse")     # scale: the gap drops out

            def chk(val, a=a, w=w):
                return abs(_pi(val)[a] - w) <= TOL
        case = _ok(G_, f"Question([0.3, 0.7], rewards={lab}) at beta 0.5, G 4",
                   lambda v=v: stationary_policy(Question([0.3, 0.7], rewards=v), Objective(beta=0.5, group_size=4)), chk)
        case.update(expect=exp, names=names)
        out.append(case)
    cfs = [
        ("binary_pairwise(np.array(0.3), np.float32(0.5))", lambda: cf.binary_pairwise(np.array(0.3), np.float32(0.5)),
         "ok", ref.eq14(0.3, 0.5)),
        ("binary_pairwise(Decimal('0.3'), Fraction(1, 2))", lambda: cf.binary_pairwise(Decimal("0.3"), Fraction(1, 2)),
         "ok", ref.eq14(0.3, 0.5)),
        ("binary_pairwise(pd.Series([0.3]), 0.5)", lambda: cf.binary_pairwise(pd.Series([0.3]), 0.5), "ok", ref.eq14(0.3, 0.5)),
        ("binary_pairwise(0.3, 0.5, gamma=np.float16(0.5))", lambda: cf.binary_pairwise(0.3, 0.5, gamma=np.float16(0.5)),
         "ok", ref.eq14(0.3, 1.0)),
        ("binary_large_group(Fraction(1, 3), np.int64(2))", lambda: cf.binary_large_group(Fraction(1, 3), np.int64(2)),
         "ok", ref.eq15(1 / 3, 2.0)),
        ("binary_large_group(memoryview(np.array([0.3])), 0.5)",
         lambda: cf.binary_large_group(memoryview(np.array([0.3])), 0.5), "ok", ref.eq15(0.3, 0.5)),
        ("binary_pairwise_direct(np.longdouble('0.3'), Decimal('0.25'))",
         lambda: cf.binary_pairwise_direct(np.longdouble("0.3"), Decimal("0.25")), "ok", ref.g2_direct(0.3, 0.25)),
        ("binary_pairwise(pd.array([0.3, None], dtype='Float64'), 0.5)",
         lambda: cf.binary_pairwise(pd.array([0.3, None], dtype="Float64"), 0.5), "error", None),
        ("binary_pairwise(0.3, np.timedelta64(1))", lambda: cf.binary_pairwise(0.3, np.timedelta64(1)), "error", None),
        ("binary_preference(np.array(0.3), np.int64(16))",
         lambda: np.concatenate([np.ravel(a) for a in cf.binary_preference(np.array(0.3), np.int64(16))]), "ok",
         [float(v) for v in ref.binary_p_mp(0.3, 16)]),
        ("binary_preference(Decimal('0.3'), Decimal(16))",
         lambda: np.concatenate([np.ravel(a) for a in cf.binary_preference(Decimal("0.3"), Decimal(16))]), "either",
         [float(v) for v in ref.binary_p_mp(0.3, 16)]),
        ("binary_preference(0.3, np.uint8(255))",
         lambda: np.concatenate([np.ravel(a) for a in cf.binary_preference(0.3, np.uint8(255))]), "ok",
         [float(v) for v in ref.binary_p_mp(0.3, 255)]),
    ]
    for lab, call, exp, w in cfs:
        case = _ok(G_, lab, call, (lambda v, w=w: ref.close(np.ravel(np.asarray(v, float)), np.ravel(w), 1e-10))
                   if w is not None else (lambda v: True))
        names = {"error": ["beta"] if "timedelta" in lab else ["pi_ref_a"]}.get(exp, [])
        case.update(expect=exp, names=names)
        out.append(case)
    # predict's samples as people hold them in memory
    frames = {
        "DataFrame with nullable Int64 n and correct": (lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": pd.array([10, 20], dtype="Int64"),
                                                                              "correct": pd.array([3, 5], dtype="Int64")}), "ok"),
        "DataFrame with uint8 counts": (lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": np.array([10, 20], np.uint8),
                                                              "correct": np.array([3, 5], np.uint8)}), "ok"),
        "DataFrame with a categorical prompt_id": (lambda: pd.DataFrame({"prompt_id": pd.Categorical(["a", "b"]), "n": [10, 20],
                                                                         "correct": [3, 5]}), "ok"),
        "DataFrame indexed by prompt_id (no column)": (lambda: pd.DataFrame({"n": [10, 20], "correct": [3, 5]},
                                                                            index=pd.Index(["a", "b"], name="prompt_id")), "either"),
        "DataFrame with a reversed integer index": (lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": [10, 20], "correct": [3, 5]},
                                                                         index=[1, 0]), "ok"),
        "DataFrame with pd.NA in correct": (lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": pd.array([10, 20], dtype="Int64"),
                                                                  "correct": pd.array([3, None], dtype="Int64")}), "flag"),
        "DataFrame with float counts 10.0, 3.0": (lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": [10.0, 20.0],
                                                                         "correct": [3.0, 5.0]}), "ok"),
        "DataFrame with counts 10.5": (lambda: pd.DataFrame({"prompt_id": ["a", "b"], "n": [10.5, 20.0],
                                                             "correct": [3.0, 5.0]}), "error"),
        "DataFrame with MultiIndex columns": (lambda: pd.DataFrame([["a", 10, 3], ["b", 20, 5]], columns=pd.MultiIndex.from_tuples(
            [("x", "prompt_id"), ("x", "n"), ("x", "correct")])), "either"),
        "DataFrame with per-sample bool rewards": (lambda: pd.DataFrame({"prompt_id": ["a"] * 10 + ["b"] * 20,
                                                                         "reward": [True] * 3 + [False] * 7 + [True] * 5 + [False] * 15}), "either"),
        "np.array of uint64 (n, correct) rows": (lambda: np.array([[10, 3], [20, 5]], np.uint64), "ok"),
        "list of (n, correct) tuples": (lambda: [(10, 3), (20, 5)], "either"),
        "np.array of (n, correct) rows with correct > n": (lambda: np.array([[10, 3], [20, 25]]), "error"),
        "samples_from_counts(n=pd.Series, correct=pd.Series)": (lambda: samples_from_counts(
            n=pd.Series([10, 20]), correct=pd.Series([3, 5]), prompt_ids=pd.Index(["a", "b"])), "ok"),
        "samples_from_counts(n=range(10, 30, 10), correct=(3, 5))": (lambda: samples_from_counts(
            n=range(10, 30, 10), correct=(3, 5), prompt_ids=("a", "b")), "ok"),
        "samples_from_counts with numpy str_ prompt ids": (lambda: samples_from_counts(
            n=[10, 20], correct=[3, 5], prompt_ids=np.array(["a", "b"])), "ok"),
        "samples_from_counts with prompt ids 1 and '1'": (lambda: samples_from_counts(
            n=[10, 20], correct=[3, 5], prompt_ids=[1, "1"]), "flag"),
        "samples_from_counts with Decimal counts": (lambda: samples_from_counts(
            n=[Decimal(10), Decimal(20)], correct=[Decimal(3), Decimal(5)], prompt_ids=["a", "b"]), "either"),
    }
    for lab, (make, exp) in frames.items():
        def call(make=make):
            return predict(make(), Objective(beta=0.5), k=(1,), progress=False).table

        def chk(t):
            want = {3 / 10: ref.eq14(0.3, 0.5), 5 / 20: ref.eq14(0.25, 0.5)}
            return len(t) == 2 and all(abs(row.pred - want[row.correct / row.n]) <= TOL for row in t.itertuples())
        case = _ok(G_, f"predict({lab})", call, chk)
        names = {"error": ["10.5"], "flag": ["b"] if "pd.NA" in lab else ["1"]}.get(exp, [])
        if "correct > n" in lab:
            names = ["25", "20"]
        case.update(expect=exp, names=names)
        out.append(case)
    return out


# ---------------------------------------------------------------- log pooling, residuals, closed forms
def extra_cases() -> list[dict]:
    from grpo_theory import Objective, Question, log_pooling, stationarity_residual
    from grpo_theory import closed_form as cf

    G_ = "API: log pooling, residuals at the reference's roots, closed forms"
    out = []
    for pr, r, b in [([0.5, 0.5], [1, 0], 1e-3), ([0.2, 0.3, 0.5], [-700, 0, 700], 1.0), ([1e-300, 1 - 1e-300], [1000, 0], 1.0),
                     ([0.1] * 10, [0.1 * i for i in range(10)], 0.05), ([0.3, 0.7], [1e-12, 0], 1e-12),
                     ([0.25, 0.25, 0.25, 0.25], [5, 5, 5, 5], 0.1), ([0.6, 0.4], [np.float32(1), np.int8(0)], np.float16(0.5)),
                     ([Fraction(1, 3), Fraction(2, 3)], [Decimal(1), Decimal(0)], Decimal("0.25"))]:
        w = ref.rlhf([float(v) for v in pr], [float(v) for v in r], float(b))
        out.append(_ok(G_, f"log_pooling({pr[:4]}, {r[:4]}, {b!r})", lambda pr=pr, r=r, b=b: log_pooling(pr, r, b),
                       lambda v, w=w: ref.close(_pi(v), w, rtol=TOL, atol=1e-300)))
    for p, b, g, dd, eps, norm in [(0.3, 0.5, 5, 0, 0.0, "scale"), (0.05, 0.2, 9, 1, 1e-4, "scale"), (0.7, 1.5, 3, 0, 0.0, "shift"),
                                   (0.4, 0.1, 12, 1, 0.0, "scale"), (0.2, 0.8, INF, 0, 0.0, "scale"), (0.9, 0.3, 7, 0, 0.2, "scale")]:
        x = ref.binary_root(p, b, g, "reverse", dd, eps, norm)
        out.append(_ok(G_, f"stationarity_residual at the reference's root p={p} beta={b} G={g} ddof={dd} eps={eps} {norm}",
                       lambda p=p, b=b, g=g, dd=dd, eps=eps, norm=norm, x=x: stationarity_residual(
                           Question([p, 1 - p], rewards=[1, 0]),
                           Objective(beta=b, group_size=g, std_ddof=dd, std_eps=eps, normalization=norm), [x, 1 - x]),
                       lambda v: abs(float(v)) <= 1e-9))
    for p, b, g, gap in [(Fraction(1, 4), 0.5, np.int64(6), 2.0), (np.float32(0.5), Decimal("0.1"), 3, 0.25),
                         (1e-12, 0.01, INF, 1.0), (0.999999, 100.0, 2, 1e-3)]:
        f = 1.0 if g == INF else (int(g) - 1) / int(g)
        w = ref.g2_direct(float(p), float(b), float(gap) * f)
        out.append(_ok(G_, f"binary_shift_direct({p!r}, {b!r}, {g!r}, {gap!r})",
                       lambda p=p, b=b, g=g, gap=gap: cf.binary_shift_direct(p, b, g, gap),
                       lambda v, w=w: ref.close(np.ravel(np.asarray(v, float)), [w], 1e-10, 1e-300)))
    for b in [np.float32(0.5), Decimal("2"), Fraction(1, 3), np.array([0.1, 10.0])]:
        bb = np.atleast_1d(np.asarray(b, float)) if not isinstance(b, (Decimal, Fraction)) else np.array([float(b)])
        w = (1 + bb / np.sqrt(1 + bb * bb)) / 2
        out.append(_ok(G_, f"large_group_direct_turning_point({b!r})", lambda b=b: cf.large_group_direct_turning_point(b),
                       lambda v, w=w: ref.close(np.ravel(np.asarray(v, float)), w, 1e-12)))
    return out
