"""Cases of the seventh hostile audit (issue 45), part one: Python objects of the wrong kind that look right.

Ten array slots no round fed odd containers (the closed forms' ``pi_ref_a`` and ``x``, ``kl.estimator_value``'s
log-ratios, ``reward_preference``'s ``pi``, a ``Question``'s tied ``rewards``, ``predict.pass_at_k``'s ``x``,
``samples_from_counts``' ``n``), each given as 20 kinds: read-only, non-contiguous, Fortran-ordered, negative-
stride, big-endian, float32 and long-double arrays, ``array.array``, tuples, pandas Series with a reversed or a
text index and the nullable ``Float64`` array, torch tensors (one that requires grad), a masked array with a
masked entry, ``np.matrix``, ``dict.values()``, a ``memoryview``, an object array of Fractions and a list of
NumPy float32; and scalar slots no round typed (``binary_preference``'s ``G``, ``pass_at_k``'s ``k``,
``monte_carlo_preference``'s ``n_groups`` and ``seed``, ``binomial_interval``'s ``level``,
``stationary_points``' ``n_starts``/``n_grid``, ``Objective``'s ``std_ddof`` and an infinite ``group_size``
of other types). Every accepted value is checked against :mod:`hostile_audit_round7_ref`.

Expectations are decided here, before any run: a container holding the right numbers is ``ok`` (checked); one
whose meaning is doubtful (a generator-like view, a tensor that requires grad, an ``np.matrix``) is ``either``
(a checked result or a clean refusal naming the slot); a masked entry, a bool, text or a fraction where a
whole number is meant is ``error`` naming the slot.
"""

from __future__ import annotations

import array
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

import hostile_audit_round7_ref as ref

INF = math.inf


def _c(group, label, call, expect, names=(), check=None, wrong=()):
    return dict(group=group, label=label, call=call, expect=expect, names=list(names), check=check, wrong=list(wrong))


def _val(res):
    v = res["value"]
    return np.asarray(getattr(v, "pi", v), float)


def _ro(v):
    a = np.array(v, float)
    a.setflags(write=False)
    return a


def _strided(v):
    a = np.empty(2 * len(v))
    a[::2], a[1::2] = v, -9.0
    return a[::2]


def _fortran_row(v):
    return np.asfortranarray(np.array([v, v], float))[0]


def _negative_stride(v):
    return np.array(v[::-1], float)[::-1]


def _masked(v):
    m = np.ma.masked_array(np.array(v, float), mask=[False] * (len(v) - 1) + [True])
    return m


def _torch(v, grad=False):
    import torch

    return torch.tensor(v, dtype=torch.float64, requires_grad=grad)


def _series(v, index):
    import pandas as pd

    return pd.Series(v, index=index)


def vector_kinds(v):
    """(label, value maker, expectation, held values) for one vector ``v`` given as an odd container."""
    import pandas as pd

    n = len(v)
    f32 = [float(np.float32(x)) for x in v]
    return [
        ("tuple", lambda: tuple(v), "ok", v),
        ("read-only float64 array", lambda: _ro(v), "ok", v),
        ("every other element of a longer array (non-contiguous)", lambda: _strided(v), "ok", v),
        ("a row of a Fortran-ordered 2-d array", lambda: _fortran_row(v), "ok", v),
        ("negative-stride view", lambda: _negative_stride(v), "ok", v),
        ("big-endian >f8 array", lambda: np.array(v, dtype=">f8"), "ok", v),
        ("float32 array", lambda: np.array(v, np.float32), "ok", f32),
        ("long-double array", lambda: np.array(v, np.longdouble), "ok", v),
        ("array.array('d')", lambda: array.array("d", v), "ok", v),
        ("pandas Series, index reversed", lambda: _series(v, list(range(n))[::-1]), "ok", v),
        ("pandas Series, text index", lambda: _series(v, [f"o{i}" for i in range(n)]), "ok", v),
        ("pandas nullable Float64 array", lambda: pd.array(v, dtype="Float64"), "ok", v),
        ("torch float64 tensor", lambda: _torch(v), "ok", v),
        ("torch tensor with requires_grad", lambda: _torch(v, True), "either", v),
        ("list of np.float32", lambda: [np.float32(x) for x in v], "ok", f32),
        ("masked array, last entry masked", lambda: _masked(v), "error", v),
        ("np.matrix, one row", lambda: np.matrix(v), "either", v),
        ("dict.values()", lambda: {i: x for i, x in enumerate(v)}.values(), "either", v),
        ("memoryview of a float64 array", lambda: memoryview(np.array(v, float)), "either", v),
        ("object array of Fractions", lambda: np.array([Fraction(x).limit_denominator(10 ** 9) for x in v],
                                                       dtype=object), "either", v),
    ]


def _slots():
    from grpo_theory import Objective, Question, kl, reward_preference, stationary_policy
    from grpo_theory import closed_form as cf
    from grpo_theory.predict import pass_at_k, predict, samples_from_counts

    q3 = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    o4 = Objective(beta=0.5, group_size=4)
    k3obj = Objective(beta=0.5, kl_estimator="k3")
    pr4 = [0.1, 0.2, 0.3, 0.4]

    def pred_of(n):
        t = predict(samples_from_counts(n, [3, 0]), Objective(beta=0.5), progress=False).table
        return np.concatenate([t["p_ref"].to_numpy(float), t["pred"].to_numpy(float)])

    return [  # (slot label, parameter name, values, call(v), want(held values))
        ("closed_form.binary_pairwise_direct(pi_ref_a=V, beta=0.5)", "pi_ref_a", [0.15, 0.85],
         lambda v: cf.binary_pairwise_direct(v, 0.5), lambda h: [ref.g2_direct(x, 0.5) for x in h]),
        ("closed_form.binary_large_group(pi_ref_a=V, beta=2)", "pi_ref_a", [0.15, 0.85],
         lambda v: cf.binary_large_group(v, 2.0), lambda h: [ref.eq15(x, 2.0) for x in h]),
        ("closed_form.binary_shift_direct(pi_ref_a=V, beta=0.5, G=5)", "pi_ref_a", [0.15, 0.85],
         lambda v: cf.binary_shift_direct(v, 0.5, 5), lambda h: [ref.shift_direct(x, 0.5, 5) for x in h]),
        ("kl.estimator_value(k3, lr=V)", "lr", [-0.7, 0.0, 2.5],
         lambda v: kl.estimator_value(k3obj, v), lambda h: [ref.k3(x) for x in h]),
        ("reward_preference(G=4, pi=V), rewards 1, 0.5, 0", "pi", [0.25, 0.35, 0.4],
         lambda v: reward_preference(q3, o4, v), lambda h: ref.pg_levels(h, [1.0, 0.5, 0.0], 4)),
        ("stationary_policy(G=3), tied rewards=V [1, 1, 0, 0.5]", "rewards", [1.0, 1.0, 0.0, 0.5],
         lambda v: stationary_policy(Question(pr4, rewards=v), Objective(beta=0.5, group_size=3)), None),
        ("predict.pass_at_k(x=V, k=5)", "x", [0.05, 0.6],
         lambda v: pass_at_k(v, 5), lambda h: [ref.pass_k(x, 5) for x in h]),
        ("samples_from_counts(n=V [10, 7], correct=[3, 0]) -> predict beta 0.5", "n", [10, 7],
         pred_of, lambda h: [0.3, 0.0, ref.eq14(0.3, 0.5), 0.5]),
        ("closed_form.large_group_direct_h(x=V, pi_ref_a=0.4, beta=0.7)", "x", [0.2, 0.9],
         lambda v: cf.large_group_direct_h(v, 0.4, 0.7), lambda h: [ref.direct_h(x, 0.4, 0.7) for x in h]),
        ("closed_form.binary_preference(x=V, G=6)", "x", [0.2, 0.7],
         lambda v: np.concatenate([np.ravel(a) for a in cf.binary_preference(v, 6)]),
         lambda h: [float(ref.binary_p(x, 6)[0]) for x in h] + [float(ref.binary_p(x, 6)[1]) for x in h]),
    ]


def _tied_ok(pi) -> bool:
    pr, r = [0.1, 0.2, 0.3, 0.4], [1.0, 1.0, 0.0, 0.5]
    return ref.reverse_ok(pi, pr, ref.pg_levels(pi, r, 3), 0.5, tol=1e-7)


def vector_cases() -> list[dict]:
    G = "API: odd containers in array slots"
    out = []
    for slot, name, vals, call, want in _slots():
        for kind, make, expect, held in vector_kinds(vals):
            if slot.startswith("samples_from_counts") and kind in ("float32 array", "list of np.float32"):
                held = vals                                  # whole counts are exact in float32

            def chk(tmp, res, want=want, held=held):
                got = _val(res).ravel()
                if want is None:
                    return _tied_ok(got)
                return ref.close(got, want(held), rtol=1e-9, atol=1e-12)
            out.append(_c(G, f"{slot} <- {kind}", lambda call=call, make=make: call(make()), expect,
                          names=[] if expect == "ok" else [name], check=chk))
    return out


# ---------------------------------------------------------------- scalar slots of other types
def scalar_cases() -> list[dict]:
    import torch

    from grpo_theory import Objective, Question, monte_carlo_preference, stationary_points, stationary_policy
    from grpo_theory import closed_form as cf
    from grpo_theory.predict import binomial_interval, pass_at_k, unbiased_pass_at_k

    G = "API: scalar slots of other types"
    out = []
    q = Question([0.3, 0.7], rewards=[1, 0])
    bp6 = [float(v) for v in ref.binary_p(0.3, 6)]

    def pref_ok(tmp, res, G=6):
        return ref.close(np.concatenate([np.ravel(a) for a in res["value"]]), bp6, rtol=1e-9)
    for kind, v, expect in [("np.int64(6)", np.int64(6), "ok"), ("np.uint8(6)", np.uint8(6), "ok"),
                            ("np.int8(6)", np.int8(6), "ok"), ("6.0", 6.0, "either"),
                            ("np.float32(6)", np.float32(6), "either"), ("Fraction(6)", Fraction(6), "either"),
                            ("Decimal('6')", Decimal("6"), "either"), ("torch.tensor(6)", torch.tensor(6), "either"),
                            ("0-d int array", np.array(6), "ok"), ("np.True_", np.True_, "error"),
                            ("6.5", 6.5, "error"), ("'6'", "6", "error"), ("Fraction(13, 2)", Fraction(13, 2), "error"),
                            ("-np.inf", -np.inf, "error"), ("np.nan", np.nan, "error")]:
        out.append(_c(G, f"closed_form.binary_preference(0.3, group_size={kind})",
                      lambda v=v: cf.binary_preference(0.3, v), expect,
                      names=[] if expect == "ok" else ["group_size"], check=pref_ok))
    # pass_at_k's k
    for kind, v, expect in [("np.int64(5)", np.int64(5), "ok"), ("5.0", 5.0, "either"), ("np.float32(5)",
                            np.float32(5), "either"), ("np.True_", np.True_, "error"), ("0", 0, "error"),
                            ("-2", -2, "error"), ("2.5", 2.5, "error"), ("'5'", "5", "error"),
                            ("10**6", 10 ** 6, "ok"), ("np.uint64(5)", np.uint64(5), "ok")]:
        kk = 10 ** 6 if kind == "10**6" else 5
        out.append(_c(G, f"predict.pass_at_k(0.3, k={kind})", lambda v=v: pass_at_k(0.3, v), expect,
                      names=[] if expect == "ok" else ["k"],
                      check=lambda tmp, res, kk=kk: ref.close(_val(res).ravel()[0], ref.pass_k(0.3, kk), rtol=1e-12)))
    # unbiased_pass_at_k's k and n
    for kind, args, expect, want in [
            ("k=np.int32(4)", (10, 3, np.int32(4)), "ok", ref.unbiased_pass_k(10, 3, 4)),
            ("n=np.int64(10**6), c=1, k=1000", (np.int64(10 ** 6), 1, 1000), "ok", ref.unbiased_pass_k(10 ** 6, 1, 1000)),
            ("n=2000, c=1999, k=2", (2000, 1999, 2), "ok", 1.0),
            ("k=4.0", (10, 3, 4.0), "either", ref.unbiased_pass_k(10, 3, 4)),
            ("correct=3.5", (10, 3.5, 4), "error", None), ("n=True", (True, 0, 1), "error", None),
            ("k=0", (10, 3, 0), "error", None), ("correct=-1", (10, -1, 2), "error", None)]:
        names = [] if expect == "ok" else [kind.split("=")[0].split(",")[0]]
        out.append(_c(G, f"predict.unbiased_pass_at_k({kind})", lambda a=args: unbiased_pass_at_k(*a), expect,
                      names=names, check=lambda tmp, res, w=want: ref.close(_val(res).ravel()[0], w, rtol=1e-9)))
    # binomial_interval's level, Wilson
    for kind, v, expect, lv in [("np.float32(0.9)", np.float32(0.9), "ok", float(np.float32(0.9))),
                                ("Fraction(9, 10)", Fraction(9, 10), "either", 0.9),
                                ("Decimal('0.9')", Decimal("0.9"), "either", 0.9), ("95 (a percentage)", 95, "error", 0),
                                ("'95%'", "95%", "error", 0), ("1.0", 1.0, "error", 0), ("0.0", 0.0, "error", 0),
                                ("np.longdouble(0.8)", np.longdouble(0.8), "ok", 0.8)]:
        out.append(_c(G, f"predict.binomial_interval(7, 20, level={kind}, method='wilson')",
                      lambda v=v: binomial_interval(7, 20, level=v, method="wilson"), expect,
                      names=[] if expect == "ok" else ["level"],
                      check=lambda tmp, res, lv=lv: ref.close(np.ravel(res["value"]), ref.wilson(7, 20, lv), rtol=1e-9)))
    # monte_carlo_preference's n_groups and seed: within 6 standard errors of the binomial sum at G = 4
    exact4 = [float(v) for v in ref.binary_p(0.3, 4)]

    def mc_ok(tmp, res):
        est, se = (np.asarray(a, float) for a in res["value"])
        return bool(np.all(np.abs(est - exact4) <= 6 * se + 1e-12)) and bool(np.all(se > 0))
    o4 = Objective(beta=0.5, group_size=4)
    for kind, kw, expect, name in [
            ("n_groups=np.int64(4000)", dict(n_groups=np.int64(4000)), "ok", ""),
            ("n_groups=4000.0", dict(n_groups=4000.0), "either", "n_groups"),
            ("n_groups=np.True_", dict(n_groups=np.True_), "error", "n_groups"),
            ("n_groups=1", dict(n_groups=1), "either", "n_groups"),
            ("n_groups=2.5", dict(n_groups=2.5), "error", "n_groups"),
            ("seed=np.random.default_rng(3)", dict(n_groups=4000, seed=np.random.default_rng(3)), "ok", ""),
            ("seed=np.int64(3)", dict(n_groups=4000, seed=np.int64(3)), "ok", ""),
            ("seed=np.random.SeedSequence(3)", dict(n_groups=4000, seed=np.random.SeedSequence(3)), "either", "seed"),
            ("seed=-1", dict(n_groups=4000, seed=-1), "error", "seed"),
            ("seed='3'", dict(n_groups=4000, seed="3"), "error", "seed"),
            ("seed=2**70", dict(n_groups=4000, seed=2 ** 70), "either", "seed"),
            ("seed=3.0", dict(n_groups=4000, seed=3.0), "either", "seed")]:
        chk = None if kind == "n_groups=1" else mc_ok
        out.append(_c(G, f"monte_carlo_preference(G=4, {kind})",
                      lambda kw=kw: monte_carlo_preference(q, o4, [0.3, 0.7], **kw), expect,
                      names=[name] if expect != "ok" else [], check=chk))
    # stationary_points' counts: the point set of Eq. 14
    x14 = ref.eq14(0.3, 0.5)

    def pts_ok(tmp, res):
        pts = res["value"].points
        return any(abs(float(p.pi[0]) - x14) < 1e-8 for p in pts) and all(
            abs(float(p.pi[0]) - x14) < 1e-8 or p.boundary or float(p.pi[0]) in (0.0, 1.0) for p in pts)
    o2 = Objective(beta=0.5)
    for kind, kw, expect, name in [
            ("n_starts=np.int64(8)", dict(n_starts=np.int64(8)), "ok", ""),
            ("n_grid=np.int32(501)", dict(n_grid=np.int32(501)), "ok", ""),
            ("n_starts=8.0", dict(n_starts=8.0), "either", "n_starts"),
            ("n_grid=np.True_", dict(n_grid=np.True_), "error", "n_grid"),
            ("n_grid=1", dict(n_grid=1), "either", "n_grid"),
            ("n_starts=-3", dict(n_starts=-3), "error", "n_starts"),
            ("seed=np.int64(5)", dict(seed=np.int64(5)), "ok", ""),
            ("time_budget=np.float32(30)", dict(time_budget=np.float32(30)), "ok", ""),
            ("time_budget=-1", dict(time_budget=-1.0), "error", "time_budget"),
            ("box_budget=0", dict(box_budget=0), "either", "box_budget"),
            ("exhaustive='no'", dict(exhaustive="no"), "error", "exhaustive")]:
        out.append(_c(G, f"stationary_points(binary, beta 0.5, {kind})",
                      lambda kw=kw: stationary_points(q, o2, **kw), expect, names=[name] if expect != "ok" else [],
                      check=pts_ok))
    # Objective's std_ddof and an infinite group_size of other types
    x3 = ref.binary_reverse(0.3, 0.5, 3, ddof=1)
    for kind, kw, expect, name, want in [
            ("std_ddof=np.int64(1), G=3", dict(std_ddof=np.int64(1), group_size=3), "ok", "", x3),
            ("std_ddof=1.0, G=3", dict(std_ddof=1.0, group_size=3), "either", "std_ddof", x3),
            ("std_ddof=np.True_, G=3", dict(std_ddof=np.True_, group_size=3), "error", "std_ddof", x3),
            ("std_ddof=np.uint8(0), G=3", dict(std_ddof=np.uint8(0), group_size=3), "ok", "",
             ref.binary_reverse(0.3, 0.5, 3)),
            ("group_size=np.float32(inf)", dict(group_size=np.float32("inf")), "ok", "", ref.eq15(0.3, 0.5)),
            ("group_size=np.longdouble(4)", dict(group_size=np.longdouble(4)), "ok", "", ref.binary_reverse(0.3, 0.5, 4)),
            ("group_size=Decimal('Infinity')", dict(group_size=Decimal("Infinity")), "either", "group_size",
             ref.eq15(0.3, 0.5)),
            ("group_size=torch.tensor(4)", dict(group_size=torch.tensor(4)), "either", "group_size",
             ref.binary_reverse(0.3, 0.5, 4)),
            ("group_size='inf'", dict(group_size="inf"), "either", "group_size", ref.eq15(0.3, 0.5)),
            ("beta=torch.tensor(0.5)", dict(group_size=2), "either", "beta", ref.eq14(0.3, 0.5))]:
        beta = torch.tensor(0.5, dtype=torch.float64) if kind.startswith("beta") else 0.5
        out.append(_c(G, f"stationary_policy(Objective(beta=0.5, {kind}))",
                      lambda kw=kw, beta=beta: stationary_policy(q, Objective(beta=beta, **kw)), expect,
                      names=[name] if expect != "ok" else [],
                      check=lambda tmp, res, w=want: ref.close(_val(res)[0], w, rtol=0, atol=1e-8)))
    return out
