"""Cases of the fifth hostile audit (issue 45), part one: the public Python API.

New inputs only (not in ``tests/hostile_audit*.py``, ``tests/cli_bad_inputs.py``, ``tests/test_hostile_*.py``):
every public function called with a misspelt keyword, NumPy integers of every width and ``np.longdouble`` in
integer and float slots, negative zero, subnormals, ``pandas.NA``, integers beyond double precision,
``Question``/``Objective`` round trips (``repr``/``eval``, pickle, copy, ``dataclasses.replace``, equality
against hash), results' methods at their edges (many classes, ``from_reference``, ``basins``, flows over
``t`` of 1e-300 and 1e300), the closed forms not audited before (RLOO, shift-only direct, filtered,
entropy, the large-G direct ``h``), pass@k and the binomial intervals, the KL and variant registries.

A case is a dict as in :mod:`hostile_audit_fresh_cases`. A ``TypeError`` from a call with a wrong keyword is
Python's own answer; :func:`_typed` turns it into a refusal, which is clean when it names the keyword.
"""

from __future__ import annotations


import numpy as np

import hostile_audit_fresh_ref as fref
import hostile_audit_round5_ref as ref

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intc, np.intp]


def _typed(fn, *args, **kw):
    """Call ``fn``; a ``TypeError`` (Python's answer to a wrong keyword) becomes a refusal carrying its text."""
    from grpo_theory.errors import InvalidInputError

    try:
        return fn(*args, **kw)
    except TypeError as exc:
        raise InvalidInputError(f"TypeError: {exc}") from None


def _c(group, label, call, expect, names=(), check=None, wrong=()):
    return dict(group=group, label=label, call=call, expect=expect, names=list(names), check=check, wrong=list(wrong))


def _q(p=(0.3, 0.7), r=(1.0, 0.0)):
    from grpo_theory import Question

    return Question(list(p), list(r))


def _o(**kw):
    from grpo_theory import Objective

    return Objective(**{"beta": 0.5, **kw})


# ---------------------------------------------------------------- a misspelt keyword on every public function
def wrong_keyword_cases() -> list[dict]:
    import grpo_theory as g
    from grpo_theory import closed_form as cf, dynamics as dy, kl, variants
    from grpo_theory import predict as pr
    from grpo_theory.integrations import openrlhf, trl, verl

    q, o = _q, _o
    S = [  # (label, thunk building the call with the bad keyword, the bad keyword)
        ("Question(rewrds=)", lambda: g.Question([0.3, 0.7], rewrds=[1, 0]), "rewrds"),
        ("Question(pi_reff=)", lambda: g.Question(pi_reff=[0.3, 0.7], rewards=[1, 0]), "pi_reff"),
        ("Objective(betta=)", lambda: g.Objective(betta=0.5), "betta"),
        ("Objective(Beta=)", lambda: g.Objective(Beta=0.5), "Beta"),
        ("Objective(beta, groupsize=)", lambda: g.Objective(beta=0.5, groupsize=4), "groupsize"),
        ("Objective(beta, G=)", lambda: g.Objective(beta=0.5, G=4), "G"),
        ("Objective(0.5) positional", lambda: g.Objective(0.5), "positional"),
        ("stationary_policy(tol=)", lambda: g.stationary_policy(q(), o(), tol=1e-3), "tol"),
        ("stationary_points(nstarts=)", lambda: g.stationary_points(q(), o(), nstarts=3), "nstarts"),
        ("stationarity_residual(norm=)", lambda: g.stationarity_residual(q(), o(), [0.5, 0.5], norm=2), "norm"),
        ("reward_preference(G=)", lambda: g.reward_preference(q(), o(), [0.5, 0.5], G=3), "G"),
        ("monte_carlo_preference(ngroups=)", lambda: g.monte_carlo_preference(q(), o(), [0.5, 0.5], ngroups=10),
         "ngroups"),
        ("log_pooling(temperature=)", lambda: g.log_pooling([0.3, 0.7], [1, 0], 0.5, temperature=1), "temperature"),
        ("rlhf_optimum(group_size=)", lambda: g.rlhf_optimum(q(), 0.5, group_size=2), "group_size"),
        ("nash_equilibrium(tol=)", lambda: g.nash_equilibrium(q(), 0.5, tol=1e-9), "tol"),
        ("clamp_critical_beta(beta=)", lambda: g.clamp_critical_beta(q(), o(), beta=1), "beta"),
        ("binary_pairwise(p=)", lambda: cf.binary_pairwise(p=0.3, beta=0.5), "p"),
        ("binary_large_group(gamma=)", lambda: cf.binary_large_group(0.3, 0.5, gamma=1), "gamma"),
        ("binary_pairwise_direct(margin=)", lambda: cf.binary_pairwise_direct(0.3, 0.5, margin=1), "margin"),
        ("binary_preference(G=)", lambda: cf.binary_preference(0.3, G=4), "G"),
        ("binary_shift_direct(gap=)", lambda: cf.binary_shift_direct(0.3, 0.5, 4, gap=1), "gap"),
        ("binary_pairwise_filtered(gamma=)", lambda: cf.binary_pairwise_filtered(0.3, 0.5, gamma=1), "gamma"),
        ("binary_rloo(group_size=)", lambda: cf.binary_rloo(0.3, 0.5, group_size=4), "group_size"),
        ("binary_entropy(entropy=)", lambda: cf.binary_entropy(0.3, 0.5, entropy=0.1), "entropy"),
        ("binary_entropy_condition(c=)", lambda: cf.binary_entropy_condition(0.5, 0.3, 0.5, c=0.1), "c"),
        ("large_group_direct_h(p=)", lambda: cf.large_group_direct_h(0.5, p=0.3, beta=0.5), "p"),
        ("large_group_direct_turning_point(b=)", lambda: cf.large_group_direct_turning_point(b=1), "b"),
        ("dynamics.flow(method=)", lambda: dy.flow(q(), o(), [0.5, 0.5], [0, 1], method="RK45"), "method"),
        ("dynamics.ascent(step=)", lambda: dy.ascent(q(), o(), [0.5, 0.5], lr=0.1, step=3), "step"),
        ("dynamics.basins(n_grid=)", lambda: dy.basins(q(), o(), n_grid=11), "n_grid"),
        ("dynamics.grpo_steps(nbatches=)", lambda: dy.grpo_steps(q(), o(), [0.5, 0.5], lr=0.1, nbatches=2),
         "nbatches"),
        ("dynamics.output_gradient(normalise=)", lambda: dy.output_gradient(q(), o(), [0.5, 0.5], normalise=True),
         "normalise"),
        ("dynamics.map_cycles(ngrid=)", lambda: dy.map_cycles(q(), o(), ngrid=101), "ngrid"),
        ("dynamics.arcsin_potential(eps=)", lambda: dy.arcsin_potential(0.3, eps=0.1), "eps"),
        ("dynamics.potential_objective(beta=)", lambda: dy.potential_objective(q(), o(), [0.5, 0.5], beta=1),
         "beta"),
        ("kl.estimator_value(log_ratio=)", lambda: kl.estimator_value(o(kl_estimator="k1"), log_ratio=0.1),
         "log_ratio"),
        ("kl.coefficient(x=)", lambda: kl.coefficient(o(kl_estimator="k3"), x=0.1), "x"),
        ("kl.discontinuities(lr=)", lambda: kl.discontinuities(o(kl_estimator="k3"), lr=0), "lr"),
        ("kl.effective_penalty(clamp=)", lambda: kl.effective_penalty("k3", "loss", None, None, clamp=1), "clamp"),
        ("variants.lookup(kinds=)", lambda: variants.lookup(kinds="kl_estimator", name="k1"), "kinds"),
        ("variants.names(k=)", lambda: variants.names(k="kl_estimator"), "k"),
        ("predict.unbiased_pass_at_k(c=)", lambda: pr.unbiased_pass_at_k(10, c=3, k=2), "c"),
        ("predict.binomial_interval(levels=)", lambda: pr.binomial_interval(3, 10, levels=0.9), "levels"),
        ("predict.binomial_interval(kind=)", lambda: pr.binomial_interval(3, 10, kind="wilson"), "kind"),
        ("predict.samples_from_counts(ids=)", lambda: pr.samples_from_counts([10], [3], ids=["a"]), "ids"),
        ("predict.read_samples(level=)", lambda: pr.read_samples(_df(), level=[0, 1]), "level"),
        ("predict.pass_at_k(n=)", lambda: pr.pass_at_k(0.3, 2, n=10), "n"),
        ("predict.binary_question(beta=)", lambda: pr.binary_question(0.3, beta=1), "beta"),
        ("predict.predict(samples, obj, clocks=) (into **reader_options)",
         lambda: pr.predict(_df(), o(), clocks=1.0), "clocks"),
        ("predict.predict(samples, obj, stepz=) (into **reader_options)",
         lambda: pr.predict(_df(), o(), stepz=[10]), "stepz"),
        ("predict.predict(samples, betta=) (no objective)", lambda: pr.predict(_df(), betta=0.5), "betta"),
        ("predict.objective_for(trl_versoin=) (into **reader_options)",
         lambda: pr.objective_for(framework="trl", config={"beta": 0.1}, trl_versoin="0.19.0"), "trl_versoin"),
        ("predict.reward_kl_tradeoff(beta=)", lambda: pr.reward_kl_tradeoff(_df(), o(), [0.5], beta=1), "beta"),
        ("read_trl_config(version=)", lambda: trl.read_trl_config({"beta": 0.1}, version="0.19.0"), "version"),
        ("read_verl_config(strict=)", lambda: verl.read_verl_config({}, strict=True), "strict"),
        ("read_openrlhf_config(argv=)", lambda: openrlhf.read_openrlhf_config(argv=[]), "argv"),
    ]
    out = []
    for label, thunk, bad in S:
        out.append(_c("a misspelt keyword", label, (lambda t=thunk: _typed(t)), "error",
                      [bad] if bad != "positional" else ["positional"]))
    return out


def _df():
    import pandas as pd

    return pd.DataFrame({"prompt_id": ["a", "b"], "n": [10, 8], "correct": [3, 0]})


# ---------------------------------------------------------------- integer widths, negative zero, subnormals, NA
def _stat_ok(p, r, beta, G, penalty="reverse"):
    def check(tmp, res) -> bool:
        pi = np.asarray(res["value"].pi, float)
        return fref.stationary_ok(pi, p, r, beta, G, penalty=penalty)
    return check


def numeric_type_cases() -> list[dict]:
    import grpo_theory as g
    import pandas as pd
    from grpo_theory import closed_form as cf

    out = []
    grp = "integer widths"
    for T in INT_TYPES:
        for G in (2, 3, 5):
            out.append(_c(grp, f"Objective(group_size={T.__name__}({G})) -> stationary_policy",
                          (lambda T=T, G=G: g.stationary_policy(_q((0.2, 0.3, 0.5), (1.0, 0.0, 0.5)),
                                                                 _o(group_size=T(G)))),
                          "ok", check=_stat_ok([0.2, 0.3, 0.5], [1.0, 0.0, 0.5], 0.5, G)))
        out.append(_c(grp, f"binary_preference(0.3, {T.__name__}(6))", (lambda T=T: cf.binary_preference(0.3, T(6))),
                      "ok", check=lambda tmp, res: all(ref.close(float(a), b, 1e-12) for a, b in
                                                       zip(res["value"], ref.binary_pg(0.3, 6)))))
        out.append(_c(grp, f"std_ddof={T.__name__}(1)", (lambda T=T: g.stationary_policy(_q(), _o(group_size=3,
                                                                                            std_ddof=T(1)))),
                      "ok", check=lambda tmp, res: fref.stationary_ok(res["value"].pi, [0.3, 0.7], [1, 0], 0.5, 3,
                                                                       ddof=1)))
        out.append(_c(grp, f"stationary_points(n_starts={T.__name__}(4), seed={T.__name__}(3))",
                      (lambda T=T: g.stationary_points(_q(), _o(), n_starts=T(4), seed=T(3))), "ok",
                      check=lambda tmp, res: all(fref.stationary_ok(p.pi, [0.3, 0.7], [1, 0], 0.5, 2)
                                                 for p in res["value"].points)))
        out.append(_c(grp, f"binary_shift_direct(0.3, 0.5, {T.__name__}(4))",
                      (lambda T=T: cf.binary_shift_direct(0.3, 0.5, T(4))), "ok",
                      check=lambda tmp, res: ref.close(res["value"], ref.shift_direct(0.3, 0.5, 4), 1e-12)))
    for T in (np.int8, np.uint8, np.int64, np.uint64):
        out.append(_c(grp, f"unbiased_pass_at_k({T.__name__} n=20, c=5, k=4)",
                      (lambda T=T: _pr().unbiased_pass_at_k(T(20), T(5), T(4))), "ok",
                      check=lambda tmp, res: ref.close(float(np.ravel(res["value"])[0]), ref.pass_at_k(20, 5, 4),
                                                       1e-12)))
    out.append(_c(grp, "group_size=np.int8(-2)", lambda: _o(group_size=np.int8(-2)), "error", ["group_size", "-2"]))
    out.append(_c(grp, "group_size=np.uint8(1)", lambda: _o(group_size=np.uint8(1)), "error", ["group_size", "1"]))
    out.append(_c(grp, "group_size=np.uint64(2**63+1)", lambda: _o(group_size=np.uint64(2 ** 63 + 1)), "error",
                  ["group_size"]))
    out.append(_c(grp, "std_ddof=np.int16(2)", lambda: _o(std_ddof=np.int16(2)), "error", ["std_ddof", "2"]))
    out.append(_c(grp, "pass_k=np.int32(0)", lambda: _o(pass_k=np.int32(0), advantage="pass_at_k", group_size=4),
                  "error", ["pass_k", "0"]))

    grp = "negative zero"
    out += [
        # beta = -0.0 is beta = 0: the unregularised objective (beta stored as +0.0), which stationary queries refuse
        _c(grp, "beta=-0.0", lambda: _o(beta=-0.0), "ok",
           check=lambda tmp, res: str(res["value"].beta) == "0.0" and not res["value"].regularised),
        _c(grp, "std_eps=-0.0 (== 0)", lambda: g.stationary_policy(_q(), _o(std_eps=-0.0)), "ok",
           check=_stat_ok([0.3, 0.7], [1, 0], 0.5, 2)),
        _c(grp, "entropy_coef=-0.0 (== 0)", lambda: g.stationary_policy(_q(), _o(entropy_coef=-0.0)), "ok",
           check=_stat_ok([0.3, 0.7], [1, 0], 0.5, 2)),
        _c(grp, "pi_ref [-0.0, 1.0]", lambda: g.stationary_policy(_q((-0.0, 1.0), (1.0, 0.0)), _o()), "either",
           ["pi_ref"], check=lambda tmp, res: np.allclose(res["value"].pi, [0, 1])),
        _c(grp, "rewards [-0.0, 0.0] (a tie)", lambda: g.stationary_policy(_q((0.3, 0.7), (-0.0, 0.0)), _o()),
           "ok", check=lambda tmp, res: np.allclose(res["value"].pi, [0.3, 0.7], rtol=1e-9)),
        _c(grp, "binary_pairwise(-0.0, 0.5)", lambda: cf.binary_pairwise(-0.0, 0.5), "ok",
           check=lambda tmp, res: float(res["value"]) == 0.0),
        _c(grp, "binary_pairwise(0.3, 0.5, gamma=-0.0)", lambda: cf.binary_pairwise(0.3, 0.5, -0.0), "ok",
           check=lambda tmp, res: float(res["value"]) == 0.3),        # gamma = 0 is documented: a tie, x = p
        _c(grp, "binary_rloo(0.3, 0.5, reward_gap=-0.0)", lambda: cf.binary_rloo(0.3, 0.5, -0.0), "error",
           ["reward_gap"]),
        _c(grp, "binary_preference(-0.0, 4)", lambda: cf.binary_preference(-0.0, 4), "ok",
           check=lambda tmp, res: all(ref.close(float(a), b, 1e-12) for a, b in
                                      zip(res["value"], ref.binary_pg(0.0, 4)))),
        _c(grp, "log_pooling beta=-0.0", lambda: g.log_pooling([0.3, 0.7], [1, 0], -0.0), "error", ["beta"]),
        _c(grp, "flow t=[-0.0, 1.0]", lambda: _dy().flow(_q(), _o(), [0.3, 0.7], [-0.0, 1.0]), "ok",
           check=lambda tmp, res: res["value"].pi.shape == (2, 2)),
        _c(grp, "binomial_interval(0, 10, level=-0.0)", lambda: _pr().binomial_interval(0, 10, level=-0.0), "error",
           ["level"]),
    ]

    grp = "subnormals"
    SUB = [5e-324, 1e-310, 2.2250738585072014e-308]
    for s in SUB:
        out += [
            _c(grp, f"binary_rloo(p={s!r}, 0.5)", (lambda s=s: cf.binary_rloo(s, 0.5)), "ok",
               check=(lambda tmp, res, s=s: ref.close(res["value"], fref.eq14(s, 0.5), 1e-9))),
            _c(grp, f"binary_rloo(p={s!r}, 0.5, direct)", (lambda s=s: cf.binary_rloo(s, 0.5, penalty="direct")), "ok",
               check=(lambda tmp, res, s=s: ref.close(res["value"], ref.rloo_direct(s, 0.5), 1e-9))),
            _c(grp, f"binary_shift_direct(p={s!r}, 0.5, 3)", (lambda s=s: cf.binary_shift_direct(s, 0.5, 3)), "ok",
               check=(lambda tmp, res, s=s: ref.close(res["value"], ref.shift_direct(s, 0.5, 3), 1e-9))),
            _c(grp, f"binary_pairwise_filtered(p={s!r}, 0.5)", (lambda s=s: cf.binary_pairwise_filtered(s, 0.5)),
               "ok", check=(lambda tmp, res, s=s: ref.close(res["value"], ref.filtered(s, 0.5), 1e-9))),
            _c(grp, f"binary_rloo(0.3, beta={s!r})", (lambda s=s: cf.binary_rloo(0.3, s)), "ok",
               check=(lambda tmp, res, s=s: ref.close(res["value"], fref.eq14(0.3, s), 1e-9))),
            _c(grp, f"binary_pairwise_filtered(0.3, beta={s!r})", (lambda s=s: cf.binary_pairwise_filtered(0.3, s)),
               "ok", check=(lambda tmp, res, s=s: ref.close(res["value"], ref.filtered(0.3, s), 1e-9))),
            _c(grp, f"large_group_direct_turning_point({s!r})", (lambda s=s: cf.large_group_direct_turning_point(s)),
               "ok", check=(lambda tmp, res, s=s: ref.close(res["value"], ref.turning_point(s), 1e-9))),
            _c(grp, f"binary_preference({s!r}, 5)", (lambda s=s: cf.binary_preference(s, 5)), "ok",
               check=(lambda tmp, res, s=s: all(ref.close(float(a), b, 1e-12) for a, b in
                                                zip(res["value"], ref.binary_pg(s, 5))))),
            _c(grp, f"Objective(beta={s!r}) -> stationary_policy", (lambda s=s: g.stationary_policy(_q(), _o(beta=s))),
               "ok", check=(lambda tmp, res, s=s: ref.close(res["value"].pi[0], fref.eq14(0.3, s), 1e-9))),
            _c(grp, f"std_eps={s!r}", (lambda s=s: g.stationary_policy(_q(), _o(std_eps=s))), "ok",
               check=(lambda tmp, res, s=s: ref.close(res["value"].pi[0], fref.eq14(0.3, 0.5), 1e-9))),
        ]

    grp = "pandas NA and other missing values"
    NA = [("pd.NA", lambda: pd.NA), ("pd.NaT", lambda: pd.NaT), ("np.datetime64('NaT')", lambda: np.datetime64("NaT"))]
    for name, mk in NA:
        out += [
            _c(grp, f"Objective(beta={name})", (lambda mk=mk: _o(beta=mk())), "error", ["beta"]),
            _c(grp, f"Objective(beta=0.5, group_size={name})", (lambda mk=mk: _o(group_size=mk())), "error",
               ["group_size"]),
            _c(grp, f"Question pi_ref [0.3, {name}]", (lambda mk=mk: g.Question([0.3, mk()], [1, 0])), "error",
               ["pi_ref"]),
            _c(grp, f"binary_pairwise({name}, 0.5)", (lambda mk=mk: cf.binary_pairwise(mk(), 0.5)), "error",
               ["pi_ref_a"]),
            _c(grp, f"samples_from_counts([10, {name}], [3, 1])", (lambda mk=mk: _pr().samples_from_counts([10, mk()],
                                                                                                       [3, 1])),
               "error", ["n"]),
        ]
    out += [
        _c(grp, "Question from a nullable Float64 Series with NA",
           lambda: g.Question(pd.Series([0.3, None], dtype="Float64"), [1, 0]), "error", ["pi_ref"]),
        _c(grp, "Question from a nullable Float64 Series (no NA)",
           lambda: g.stationary_policy(g.Question(pd.Series([0.3, 0.7], dtype="Float64"),
                                                  pd.Series([1, 0], dtype="Int64")), _o()),
           "ok", check=_stat_ok([0.3, 0.7], [1, 0], 0.5, 2)),
        _c(grp, "samples_from_counts Int64 Series with NA",
           lambda: _pr().samples_from_counts(pd.Series([10, None], dtype="Int64"), pd.Series([3, 1], dtype="Int64")),
           "error", ["n"]),
        _c(grp, "binomial_interval(pd.NA, 10)", lambda: _pr().binomial_interval(pd.NA, 10), "error", ["correct"]),
        _c(grp, "unbiased_pass_at_k(10, pd.NA, 2)", lambda: _pr().unbiased_pass_at_k(10, pd.NA, 2), "error",
           ["correct"]),
    ]

    grp = "integers beyond double precision"
    out += [
        _c(grp, "Objective(beta=10**400)", lambda: _o(beta=10 ** 400), "error", ["beta"]),
        _c(grp, "Objective(beta=10**20) (an int)", lambda: g.stationary_policy(_q(), _o(beta=10 ** 20)), "ok",
           check=lambda tmp, res: ref.close(res["value"].pi[0], fref.eq14(0.3, 1e20), 1e-9)),
        _c(grp, "Objective(group_size=2**53)", lambda: _o(group_size=2 ** 53), "either", ["group_size"],
           check=lambda tmp, res: res["value"].group_size == 2 ** 53),
        _c(grp, "Question rewards [10**400, 0]", lambda: g.Question([0.3, 0.7], [10 ** 400, 0]), "error",
           ["rewards"]),
        _c(grp, "Question rewards [2**70, 0] (ints)", lambda: g.stationary_policy(g.Question([0.3, 0.7], [2 ** 70, 0]),
                                                                                   _o()),
           "ok", check=lambda tmp, res: ref.close(res["value"].pi[0], fref.eq14(0.3, 0.5), 1e-9)),
        _c(grp, "Question pi_ref [1, 0] (ints)", lambda: g.stationary_policy(g.Question([1, 0], [1, 0]), _o()), "ok",
           check=lambda tmp, res: np.allclose(res["value"].pi, [1, 0])),
        _c(grp, "stationary_points(n_starts=10**30)", lambda: g.stationary_points(_q(), _o(), n_starts=10 ** 30),
           "error", ["n_starts"]),
        _c(grp, "stationary_points(seed=2**64)", lambda: g.stationary_points(_q(), _o(), seed=2 ** 64), "either",
           ["seed"], check=lambda tmp, res: all(fref.stationary_ok(p.pi, [0.3, 0.7], [1, 0], 0.5, 2)
                                                for p in res["value"].points)),
        _c(grp, "stationary_points(seed=-1)", lambda: g.stationary_points(_q(), _o(), seed=-1), "error", ["seed"]),
        _c(grp, "unbiased_pass_at_k(2**60, 2**59, 3)", lambda: _pr().unbiased_pass_at_k(2 ** 60, 2 ** 59, 3), "either",
           ["n"], check=lambda tmp, res: ref.close(float(np.ravel(res["value"])[0]), 0.875, 1e-9)),
        _c(grp, "binary_shift_direct(0.3, 0.5, 10**30)", lambda: cf.binary_shift_direct(0.3, 0.5, 10 ** 30), "either",
           ["group_size"], check=lambda tmp, res: ref.close(res["value"], ref.shift_direct(0.3, 0.5, 1e30), 1e-9)),
        _c(grp, "monte_carlo_preference(n_groups=10**20)",
           lambda: g.monte_carlo_preference(_q(), _o(), [0.5, 0.5], n_groups=10 ** 20), "error", ["n_groups"]),
        _c(grp, "Objective(beta=np.longdouble(0.5))", lambda: g.stationary_policy(_q(), _o(beta=np.longdouble(0.5))),
           "ok", check=lambda tmp, res: ref.close(res["value"].pi[0], fref.eq14(0.3, 0.5), 1e-9)),
        _c(grp, "binary_pairwise(np.longdouble(0.3), 0.5)", lambda: cf.binary_pairwise(np.longdouble(0.3), 0.5), "ok",
           check=lambda tmp, res: ref.close(res["value"], fref.eq14(float(np.longdouble(0.3)), 0.5), 1e-9)),
        _c(grp, "Objective(beta=np.longdouble('1e-4000'))", lambda: _o(beta=np.longdouble("1e-4000")), "error",
           ["beta"]),
        _c(grp, "Objective(beta=np.longdouble('1e4000'))", lambda: _o(beta=np.longdouble("1e4000")), "error",
           ["beta"]),
    ]
    return out


def _pr():
    from grpo_theory import predict

    return predict


def _dy():
    from grpo_theory import dynamics

    return dynamics
