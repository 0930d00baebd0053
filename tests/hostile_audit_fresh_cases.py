"""Cases of the fresh hostile audit (issue 45, round four), part one: the Python API.

Every case is new (not in ``tests/hostile_audit*.py``, ``tests/cli_bad_inputs.py``,
``tests/test_hostile_inputs.py`` or ``tests/test_cli_fuzz.py``): pairs of extreme values in the binary closed
forms, the numeric types a user may pass (NumPy scalars, float32, 0-d and 2-d arrays, Series, Fraction,
Decimal, bool, generators, text), and questions with ties, one answer, 1,000 answers, masses of 1e-300 and
rewards of a huge spread. Each ``ok`` case is checked against :mod:`hostile_audit_fresh_ref`.

A case is a dict: ``group``, ``label``, ``call`` (a thunk), ``expect`` (``ok``, ``error``, ``warn`` or
``either``: a clean refusal naming ``names`` or a checked result), ``names``, ``check(tmp, res)``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

import hostile_audit_fresh_ref as ref


def _v(res):
    return res["value"]


# ---------------------------------------------------------------- closed forms at pairs of extremes
P_VALUES = [1e-300, 1e-17, 1e-8, 0.5, 1 - 1e-12, 1 - 2 ** -53, 1.0]
B_VALUES = [1e-300, 1e-10, 1.0, 1e10, 1e300]


def closed_form_pairs() -> list[dict]:
    from grpo_theory import closed_form as cf

    out = []
    forms = [("binary_pairwise", cf.binary_pairwise, ref.eq14), ("binary_large_group", cf.binary_large_group, ref.eq15),
             ("binary_pairwise_direct", cf.binary_pairwise_direct, ref.g2_direct)]
    for name, fn, want in forms:
        for p in P_VALUES:
            for b in B_VALUES:
                out.append(dict(group=f"closed form {name} (p, beta)", label=f"p={p!r}, beta={b!r}",
                                call=(lambda fn=fn, p=p, b=b: fn(p, b)), expect="ok",
                                check=(lambda tmp, res, w=want, p=p, b=b: ref.close(_v(res), w(p, b), 1e-9))))
    for name, fn, want in forms[::2]:
        for g in (1e-300, 1e-10, 0.25):
            for p in (1e-8, 0.5):
                for b in (1e-10, 1.0):
                    out.append(dict(group=f"closed form {name} (gamma)", label=f"p={p!r}, beta={b!r}, gamma={g!r}",
                                    call=(lambda fn=fn, p=p, b=b, g=g: fn(p, b, g)), expect="ok",
                                    check=(lambda tmp, res, w=want, p=p, b=b, g=g:
                                           ref.close(_v(res), w(p, b, g), 1e-9))))
    # vectorised: a 2-d grid in one call, each entry Eq. 14
    P, B = np.meshgrid([1e-12, 0.3, 0.9], [1e-5, 0.5, 7.0])
    out.append(dict(group="closed form binary_pairwise (arrays)", label="3x3 grid of (p, beta)",
                    call=lambda: cf.binary_pairwise(P, B), expect="ok",
                    check=lambda tmp, res: np.shape(_v(res)) == (3, 3) and all(
                        ref.close(x, ref.eq14(p, b)) for x, p, b in zip(np.ravel(_v(res)), P.ravel(), B.ravel()))))
    out.append(dict(group="closed form binary_pairwise (arrays)", label="p (3,1) against beta (1,4): broadcast",
                    call=lambda: cf.binary_pairwise(np.array([[0.1], [0.5], [0.9]]), np.array([[0.1, 1, 10, 100]])),
                    expect="ok",
                    check=lambda tmp, res: np.shape(_v(res)) == (3, 4) and ref.close(_v(res)[2, 3], ref.eq14(0.9, 100))))
    out.append(dict(group="closed form binary_pairwise (arrays)", label="p (3,) against beta (4,): no broadcast",
                    call=lambda: cf.binary_pairwise([0.1, 0.5, 0.9], [0.1, 1, 10, 100]), expect="error",
                    names=["shape"]))
    out.append(dict(group="closed form binary_pairwise (arrays)", label="an empty p",
                    call=lambda: cf.binary_pairwise([], 0.5), expect="either", names=["pi_ref_a"],
                    check=lambda tmp, res: np.size(_v(res)) == 0))
    # binary_preference against the binomial sum in 60-digit mpmath
    for x in (0.0, 1e-300, 1e-9, 0.5, 1 - 1e-9, 1.0):
        for G in (2, 3, 50, 1000, math.inf):
            out.append(dict(group="closed form binary_preference (x, G)", label=f"x={x!r}, G={G!r}",
                            call=(lambda x=x, G=G: cf.binary_preference(x, G)), expect="ok",
                            check=(lambda tmp, res, x=x, G=G: _pref_ok(_v(res), x, G))))
    return out


def _pref_ok(got, x, G) -> bool:
    import mpmath as mp

    pa, pb = (float(np.asarray(v, float).ravel()[0]) for v in got)
    with mp.workdps(60):
        X = mp.mpf(x)
        if math.isinf(G):
            wa = mp.sqrt((1 - X) / X) if 0 < X < 1 else 0
            wb = -mp.sqrt(X / (1 - X)) if 0 < X < 1 else 0
        else:
            wa = wb = mp.mpf(0)
            for k in range(G):
                pmf = mp.binomial(G - 1, k) * X ** k * (1 - X) ** (G - 1 - k)
                wa += pmf * mp.sqrt(mp.mpf(G - 1 - k) / (k + 1))
                wb -= pmf * mp.sqrt(mp.mpf(k) / (G - k))
    return ref.close(pa, float(wa), 1e-9, 1e-300) and ref.close(pb, float(wb), 1e-9, 1e-300)


# ---------------------------------------------------------------- numeric types in every slot
def _scalar_kinds(v):
    """(label, value, expectation) for one scalar ``v`` given in every way a user might."""
    import pandas as pd

    return [
        ("np.float64", np.float64(v), "ok"), ("np.float32", np.float32(v), "ok"), ("np.float16", np.float16(v), "ok"),
        ("0-d array", np.array(v), "ok"), ("Fraction", Fraction(v).limit_denominator(10 ** 6), "either"),
        ("Decimal", Decimal(repr(v)), "either"), ("bool True", True, "error"), ("None", None, "error"),
        ("text", repr(v), "error"), ("complex", complex(v, 0), "error"), ("list of one", [v], "scalar-array"),
        ("2-d [[v]]", np.array([[v]]), "scalar-array"), ("Series of one", pd.Series([v]), "scalar-array"),
        ("generator", (x for x in [v]), "error"), ("bytes", repr(v).encode(), "error"),
    ]


def type_cases() -> list[dict]:
    from grpo_theory import Objective, Question, closed_form as cf, log_pooling, nash_equilibrium, rlhf_optimum
    from grpo_theory import stationary_policy

    q = Question([0.3, 0.7], rewards=[1, 0])
    out = []
    # scalar slots: (name, maker(v), v, array_like?, check of a result at v)
    slots = [
        ("Objective(beta)", lambda v: stationary_policy(q, Objective(beta=v)).pi, 0.5, False,
         lambda r: ref.close(r[0], ref.eq14(0.3, 0.5))),
        ("Objective(group_size)", lambda v: stationary_policy(q, Objective(beta=0.5, group_size=v)).pi, 3, False,
         lambda r: ref.stationary_ok(r, [0.3, 0.7], [1, 0], 0.5, 3)),
        ("Objective(std_eps)", lambda v: stationary_policy(q, Objective(beta=0.5, group_size=3, std_eps=v)).pi, 0.25,
         False, lambda r: ref.stationary_ok(r, [0.3, 0.7], [1, 0], 0.5, 3, eps=0.25)),
        ("binary_pairwise(p)", lambda v: cf.binary_pairwise(v, 0.5), 0.3, True,
         lambda r, v=None: ref.close(r, ref.eq14(v, 0.5))),
        ("binary_pairwise(beta)", lambda v: cf.binary_pairwise(0.3, v), 0.5, True,
         lambda r: ref.close(r, ref.eq14(0.3, 0.5))),
        ("binary_pairwise(gamma)", lambda v: cf.binary_pairwise(0.3, 0.5, v), 0.5, True,
         lambda r: ref.close(r, ref.eq14(0.3, 0.5, 0.5))),
        ("binary_large_group(beta)", lambda v: cf.binary_large_group(0.3, v), 0.5, True,
         lambda r: ref.close(r, ref.eq15(0.3, 0.5))),
        ("binary_pairwise_direct(p)", lambda v: cf.binary_pairwise_direct(v, 0.5), 0.3, True,
         lambda r, v=None: ref.close(r, ref.g2_direct(v, 0.5))),
        ("binary_preference(G)", lambda v: cf.binary_preference(0.3, v)[0], 3, False,
         lambda r: _pref_ok((r, cf.binary_preference(0.3, 3)[1]), 0.3, 3)),
        ("log_pooling(beta)", lambda v: log_pooling([0.3, 0.7], [1, 0], v), 0.5, False,
         lambda r: np.allclose(r, ref.rlhf([0.3, 0.7], [1, 0], 0.5), rtol=1e-12)),
        ("rlhf_optimum(beta)", lambda v: rlhf_optimum(q, v).pi, 0.5, False,
         lambda r: np.allclose(r, ref.rlhf([0.3, 0.7], [1, 0], 0.5), rtol=1e-12)),
        ("nash_equilibrium(beta)", lambda v: nash_equilibrium(q, v).pi, 0.5, False,
         lambda r: ref.nlhf_ok(r, [0.3, 0.7], [1, 0], 0.5)),
    ]
    for name, maker, v, array_like, good in slots:
        integer = isinstance(v, int)
        for kind, value, expect in _scalar_kinds(v):
            if integer and kind in ("np.float16",):
                continue
            if expect == "scalar-array":
                expect = "ok" if array_like else "error"
            if integer and kind == "Decimal":
                value = Decimal(v)
            arg = {"p": "pi_ref_a", "G": "group_size"}.get(name.split("(")[1].rstrip(")"), name.split("(")[1].rstrip(")"))
            names = [] if expect == "ok" else [arg]
            out.append(dict(group="API numeric types", label=f"{name} <- {kind}",
                            call=(lambda maker=maker, value=value: maker(value)), expect=expect, names=names,
                            check=(lambda tmp, res, good=good, value=value: bool(
                                good(np.asarray(_v(res), float).ravel(), v=_held(value))
                                if "v=None" in _src(good) else good(np.asarray(_v(res), float).ravel())))))
    # vector slots: pi_ref and rewards of a Question, pi of reward_preference, pi_ref of log_pooling
    out += _vector_cases()
    return out


def _held(value) -> float:
    """The number a typed value holds (a float32 0.3 is 0.30000001192092896)."""
    return float(np.asarray(value, float).ravel()[0])


def _src(fn) -> str:
    import inspect

    return str(inspect.signature(fn))


def _vector_kinds(vals):
    import pandas as pd

    return [
        ("tuple", tuple(vals), "ok"), ("float32 array", np.asarray(vals, np.float32), "ok"),
        ("list of np.float32", [np.float32(x) for x in vals], "ok"), ("Series", pd.Series(vals), "ok"),
        ("Series, index 10, 20, ...", pd.Series(vals, index=[10 * (i + 1) for i in range(len(vals))]), "ok"),
        ("list of Fraction", [Fraction(x).limit_denominator(10 ** 6) for x in vals], "either"),
        ("list of Decimal", [Decimal(repr(x)) for x in vals], "either"),
        ("generator", (x for x in vals), "either"), ("dict values", {i: x for i, x in enumerate(vals)}.values(), "either"),
        ("list of text", [repr(x) for x in vals], "error"), ("0-d array", np.array(vals[0]), "error"),
        ("2-d (1, K)", np.array([vals]), "error"), ("2-d (K, 1)", np.array(vals)[:, None], "error"),
        ("list with a bool", [True] + list(vals[1:]), "error"), ("a set", set(vals), "error"),
        ("a string", " ".join(map(repr, vals)), "error"),
    ]


def _vector_cases() -> list[dict]:
    from grpo_theory import Objective, Question, log_pooling, reward_preference, stationary_policy

    obj = Objective(beta=0.5, group_size=3)
    pi_ref, r = [0.2, 0.3, 0.5], [1.0, 0.0, 0.5]
    slots = [
        ("Question(pi_ref)", lambda v: stationary_policy(Question(v, rewards=r), obj).pi, pi_ref,
         lambda got: ref.stationary_ok(got, pi_ref, r, 0.5, 3)),
        ("Question(rewards)", lambda v: stationary_policy(Question(pi_ref, rewards=v), obj).pi, r,
         lambda got: ref.stationary_ok(got, pi_ref, r, 0.5, 3)),
        ("reward_preference(pi)", lambda v: reward_preference(Question(pi_ref, rewards=r), obj, v), [0.1, 0.6, 0.3],
         lambda got: np.allclose(got, ref.ref_pg([0.1, 0.6, 0.3], r, 3), atol=1e-12)),
        ("log_pooling(pi_ref)", lambda v: log_pooling(v, r, 0.5), pi_ref,
         lambda got: np.allclose(got, ref.rlhf(pi_ref, r, 0.5), rtol=1e-12)),
        ("log_pooling(rewards)", lambda v: log_pooling(pi_ref, v, 0.5), r,
         lambda got: np.allclose(got, ref.rlhf(pi_ref, r, 0.5), rtol=1e-12)),
    ]
    out = []
    for name, maker, vals, good in slots:
        arg = name.split("(")[1].rstrip(")")
        for kind, value, expect in _vector_kinds(vals):
            out.append(dict(group="API numeric types (vectors)", label=f"{name} <- {kind}",
                            call=(lambda maker=maker, value=value: maker(value)), expect=expect,
                            names=[] if expect == "ok" else [arg],
                            check=(lambda tmp, res, good=good: bool(good(np.asarray(_v(res), float))))))
    return out


# ---------------------------------------------------------------- questions and objectives at the edges
def question_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    rng = np.random.default_rng(45)
    big = rng.dirichlet(np.ones(1000))
    big_r2 = (rng.random(1000) < 0.3).astype(float)
    big_r3 = rng.integers(0, 3, 1000) / 2.0
    Q = [  # (label, pi_ref, rewards, expect, names)
        ("two-way tie", [0.3, 0.7], [1, 1], "ok", []),
        ("three-way tie", [0.2, 0.3, 0.5], [0.5, 0.5, 0.5], "ok", []),
        ("tie of the two best", [0.2, 0.3, 0.5], [1, 1, 0], "ok", []),
        ("a single answer", [1.0], [3.0], "ok", []),
        ("1,000 answers, two rewards", big, big_r2, "ok", []),
        ("1,000 answers, three rewards", big, big_r3, "ok", []),
        ("pi_ref 1e-300 on the right answer", [1e-300, 1.0], [1, 0], "ok", []),
        ("pi_ref 1e-300 on the wrong answer", [1.0, 1e-300], [1, 0], "ok", []),
        ("pi_ref 1e-300 twice of three", [1e-300, 1e-300, 1.0], [1, 0.5, 0], "ok", []),
        ("pi_ref with an exact 0", [0.0, 0.4, 0.6], [1, 0, 0.5], "ok", []),
        ("rewards 1e300 and 0", [0.3, 0.7], [1e300, 0], "ok", []),
        ("rewards 1e-300 and 0", [0.3, 0.7], [1e-300, 0], "ok", []),
        ("rewards -1e300 and 1e300", [0.3, 0.7], [-1e300, 1e300], "either", ["reward"]),
        ("rewards 1e15 + 1 and 1e15", [0.3, 0.7], [1e15 + 1, 1e15], "ok", []),
        ("rewards 1 and 1 + 2^-52 (one ulp)", [0.3, 0.7], [1 + 2 ** -52, 1.0], "ok", []),
        ("rewards 5e-324 and 0", [0.3, 0.7], [5e-324, 0.0], "ok", []),
        ("three rewards spanning 1e-200 .. 1e200", [0.2, 0.3, 0.5], [1e200, 1e-200, 0], "ok", []),
        ("negative rewards", [0.2, 0.3, 0.5], [-1, -3, -2], "ok", []),
    ]
    O = [  # (label, objective kwargs, check kwargs); every one checkable by enumeration
        ("reverse/scale G=2", dict(beta=0.5, group_size=2), dict(G=2)),
        ("reverse/scale G=4 ddof=1 eps=1e-4", dict(beta=0.5, group_size=4, std_ddof=1, std_eps=1e-4),
         dict(G=4, ddof=1, eps=1e-4)),
        ("reverse/shift G=3", dict(beta=0.5, group_size=3, normalization="shift"), dict(G=3, normalization="shift")),
        ("direct/scale G=3", dict(beta=0.5, group_size=3, penalty="direct"), dict(G=3, penalty="direct")),
        ("direct/shift G=inf", dict(beta=0.5, group_size=math.inf, penalty="direct", normalization="shift"),
         dict(G=math.inf, penalty="direct", normalization="shift")),
        ("reverse/scale G=inf", dict(beta=2.0, group_size=math.inf), dict(G=math.inf, beta=2.0)),
    ]
    out = []
    for qlabel, p, r, expect, names in Q:
        for olabel, kw, ck in O:
            if qlabel.startswith("rewards 1e300") and "shift" in olabel:
                exp2, nm = "either", ["reward"]           # shift-only advantages grow with the span (documented)
            else:
                exp2, nm = expect, names
            out.append(dict(group="questions at the edges", label=f"{qlabel}; {olabel}",
                            call=(lambda p=p, r=r, kw=kw: stationary_policy(Question(p, rewards=r), Objective(**kw))),
                            expect=exp2, names=nm, check=(lambda tmp, res, p=p, r=r, ck=ck: _point_ok(_v(res), p, r, ck))))
    return out


def _point_ok(sol, p, r, ck) -> bool:
    """A flagged result (``converged=False`` with a reason) is honest; a converged one must satisfy the
    condition by enumeration; a boundary one must put its mass on the best reward (limit points)."""
    ck = dict(ck)
    beta = ck.pop("beta", 0.5)
    pi = np.asarray(sol.pi, float)
    if not np.all(np.isfinite(pi)) or abs(pi.sum() - 1) > 1e-9:
        return False
    if not sol.converged:
        return bool(str(sol.message).strip())
    if sol.boundary:
        return True
    p = np.asarray(p, float) / np.sum(p)
    if np.ptp(r) == 0:
        return np.allclose(pi, p, rtol=1e-9, atol=1e-300)
    return ref.stationary_ok(pi, p, r, beta, **ck)


def objective_conflict_cases() -> list[dict]:
    from grpo_theory import Objective

    C = [  # (label, kwargs, expect, names)
        ("pass_k 0", dict(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=0), "error", ["pass_k", "0"]),
        ("pass_k above G", dict(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=5), "error", ["pass_k", "5"]),
        ("pass_k without pass_at_k", dict(beta=0.5, group_size=4, pass_k=2), "either", ["pass_k"]),
        ("pass_k 2.5", dict(beta=0.5, group_size=4, advantage="pass_at_k", pass_k=2.5), "error", ["pass_k", "2.5"]),
        ("groups_per_batch 0", dict(beta=0.5, groups_per_batch=0), "error", ["groups_per_batch", "0"]),
        ("groups_per_batch -inf", dict(beta=0.5, groups_per_batch=-math.inf), "error", ["groups_per_batch", "inf"]),
        ("std_ddof 2", dict(beta=0.5, group_size=4, std_ddof=2), "error", ["std_ddof", "2"]),
        ("std_ddof 1 at G = 2 with eps 0", dict(beta=0.5, group_size=2, std_ddof=1), "ok", []),
        ("std_ddof True", dict(beta=0.5, std_ddof=True), "error", ["std_ddof"]),
        ("variance_eps -1", dict(beta=0.5, variance_eps=-1.0), "error", ["variance_eps", "-1"]),
        ("std_eps and variance_eps both", dict(beta=0.5, std_eps=1e-4, variance_eps=1e-4), "either",
         ["std_eps", "variance_eps"]),
        ("entropy_coef -0.1", dict(beta=0.5, entropy_coef=-0.1), "either", ["entropy_coef"]),
        ("entropy_coef nan", dict(beta=0.5, entropy_coef=math.nan), "error", ["entropy_coef", "nan"]),
        ("level 'tokens'", dict(beta=0.5, level="tokens"), "error", ["level", "tokens"]),
        ("importance_level 'Sequence'", dict(beta=0.5, importance_level="Sequence"), "either", ["importance_level"]),
        ("loss_type 'GRPO'", dict(beta=0.5, loss_type="GRPO"), "either", ["loss_type"]),
        ("loss_type ''", dict(beta=0.5, loss_type=""), "error", ["loss_type"]),
        ("kl_estimator 'K3'", dict(beta=0.5, kl_estimator="K3"), "either", ["kl_estimator"]),
        ("kl_placement 'rewards'", dict(beta=0.5, kl_placement="rewards"), "error", ["kl_placement", "rewards"]),
        ("kl_log_ratio_clamp 0", dict(beta=0.5, kl_estimator="k3", kl_log_ratio_clamp=0.0), "error",
         ["kl_log_ratio_clamp", "0"]),
        ("kl_log_ratio_clamp -1", dict(beta=0.5, kl_estimator="k3", kl_log_ratio_clamp=-1.0), "error",
         ["kl_log_ratio_clamp", "-1"]),
        ("kl_value_clamp inf", dict(beta=0.5, kl_estimator="k3", kl_value_clamp=math.inf), "either",
         ["kl_value_clamp"]),
        ("penalty 'reverse' and kl_estimator 'k1'", dict(beta=0.5, penalty="reverse", kl_estimator="k1"), "either",
         ["penalty", "kl_estimator"]),
        ("penalty 'Direct'", dict(beta=0.5, penalty="Direct"), "either", ["penalty"]),
        ("normalization 'none'", dict(beta=0.5, normalization="none"), "either", ["normalization"]),
        ("filter_ties 1", dict(beta=0.5, filter_ties=1), "either", ["filter_ties"]),
        ("filter_ties 'no'", dict(beta=0.5, filter_ties="no"), "error", ["filter_ties", "no"]),
        ("advantage 'GRPO'", dict(beta=0.5, advantage="GRPO"), "either", ["advantage"]),
        ("advantage 'rloo' at G = inf", dict(beta=0.5, advantage="rloo", group_size=math.inf), "either",
         ["rloo", "inf"]),
        ("beta 1e-320 (subnormal)", dict(beta=1e-320), "ok", []),
        ("beta 1e308", dict(beta=1e308), "ok", []),
        ("group_size 2**63", dict(beta=0.5, group_size=2 ** 63), "either", ["group_size"]),
        ("group_size 10**400 (a Python int)", dict(beta=0.5, group_size=10 ** 400), "error", ["group_size"]),
    ]
    return [dict(group="Objective options together", label=label, call=(lambda kw=kw: Objective(**kw)),
                 expect=expect, names=names) for label, kw, expect, names in C]
