"""Cases of the fifth hostile audit (issue 45), part three: closed forms not audited before, pass@k, registries.

RLOO, shift-only direct, filtered G = 2, the entropy bonus and the large-G direct ``h`` at pairs of extremes
(each against :mod:`hostile_audit_round5_ref` in 200-digit mpmath); ``unbiased_pass_at_k`` against
``math.comb``, ``binomial_interval`` against Wilson's formula and the Jeffreys Beta quantiles; the KL and
variant registries with wrong kinds and names. See :mod:`hostile_audit_round5_api` for a case's shape.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_fresh_ref as fref
import hostile_audit_round5_ref as ref
from hostile_audit_round5_api import _c, _o, _pr

P = [1e-200, 1e-9, 0.3, 0.999999, 1 - 2 ** -52]
B = [1e-250, 1e-6, 2.0, 1e6, 1e250]


def _v(res):
    return float(np.ravel(res["value"])[0])


def closed_form_cases() -> list[dict]:
    from grpo_theory import closed_form as cf

    out = []
    for p in P:
        for b in B:
            out.append(_c("closed form binary_rloo direct (p, beta)", f"p={p!r}, beta={b!r}",
                          (lambda p=p, b=b: cf.binary_rloo(p, b, penalty="direct")), "ok",
                          check=(lambda tmp, res, p=p, b=b: ref.close(_v(res), ref.rloo_direct(p, b), 1e-9))))
            out.append(_c("closed form binary_pairwise_filtered (p, beta)", f"p={p!r}, beta={b!r}",
                          (lambda p=p, b=b: cf.binary_pairwise_filtered(p, b)), "ok",
                          check=(lambda tmp, res, p=p, b=b: ref.close(_v(res), ref.filtered(p, b), 1e-9))))
    for G in (2, 7, 10 ** 6, math.inf):
        for p, b, gap in ((0.3, 0.5, 1.0), (1e-100, 1e-3, 2.0), (0.9, 50.0, 1e-8), (0.5, 1e-8, 1e-8)):
            out.append(_c("closed form binary_shift_direct (G, gap)", f"p={p!r}, beta={b!r}, G={G}, gap={gap!r}",
                          (lambda p=p, b=b, G=G, gap=gap: cf.binary_shift_direct(p, b, G, gap)), "ok",
                          check=(lambda tmp, res, p=p, b=b, G=G, gap=gap:
                                 ref.close(_v(res), ref.shift_direct(p, b, G, gap), 1e-9))))
    for gap in (1e-300, 1e-5, 3.0, 1e300):
        for p, b in ((0.3, 0.5), (1e-12, 1e-4)):
            out.append(_c("closed form binary_rloo reverse (gap)", f"p={p!r}, beta={b!r}, gap={gap!r}",
                          (lambda p=p, b=b, gap=gap: cf.binary_rloo(p, b, gap)), "ok",
                          check=(lambda tmp, res, p=p, b=b, gap=gap: ref.close(_v(res), fref.eq14(p, b, gap), 1e-9))))
    for pen in ("reverse", "direct"):
        for c in (1e-300, 0.01, 1.0, 1e6):
            for p, b, m in ((0.3, 0.5, 1.0), (1e-8, 1e-3, 0.5), (0.7, 5.0, 1e-6)):
                out.append(_c(f"closed form binary_entropy {pen} (c, margin)", f"p={p!r}, beta={b!r}, c={c!r}, "
                                                                              f"margin={m!r}",
                              (lambda p=p, b=b, c=c, m=m, pen=pen: cf.binary_entropy(p, b, c, m, penalty=pen)), "ok",
                              check=(lambda tmp, res, p=p, b=b, c=c, m=m, pen=pen:
                                     ref.close(_v(res), ref.entropy_root(p, b, c, m, pen), 1e-8))))
        for x in (1e-300, 0.5, 1 - 1e-15):
            out.append(_c(f"closed form binary_entropy_condition {pen}", f"x={x!r}, p=0.3, beta=0.5, c=0.1",
                          (lambda x=x, pen=pen: cf.binary_entropy_condition(x, 0.3, 0.5, 0.1, penalty=pen)), "ok",
                          check=(lambda tmp, res, x=x, pen=pen:
                                 ref.close(_v(res), ref.entropy_condition(x, 0.3, 0.5, 0.1, 1.0, pen), 1e-9))))
    for x in (1e-300, 1e-10, 0.5, 1 - 1e-10):
        for p, b in ((0.3, 0.5), (1e-12, 1e-6), (0.999, 1e5)):
            out.append(_c("closed form large_group_direct_h", f"x={x!r}, p={p!r}, beta={b!r}",
                          (lambda x=x, p=p, b=b: cf.large_group_direct_h(x, p, b)), "ok",
                          check=(lambda tmp, res, x=x, p=p, b=b: ref.close(_v(res), ref.direct_h(x, p, b), 1e-9))))
    for b in (1e-300, 1e-8, 1.0, 1e8, 1e300):
        out.append(_c("closed form large_group_direct_turning_point", f"beta={b!r}",
                      (lambda b=b: cf.large_group_direct_turning_point(b)), "ok",
                      check=(lambda tmp, res, b=b: ref.close(_v(res), ref.turning_point(b), 1e-12))))
    E = [  # refusals of the forms above
        ("binary_shift_direct G=1", lambda: cf.binary_shift_direct(0.3, 0.5, 1), ["group_size", "1"]),
        ("binary_shift_direct G=2.5", lambda: cf.binary_shift_direct(0.3, 0.5, 2.5), ["group_size", "2.5"]),
        ("binary_shift_direct G=nan", lambda: cf.binary_shift_direct(0.3, 0.5, math.nan), ["group_size", "nan"]),
        ("binary_shift_direct gap=inf", lambda: cf.binary_shift_direct(0.3, 0.5, 2, math.inf), ["reward_gap", "inf"]),
        ("binary_rloo penalty='Direct'", lambda: cf.binary_rloo(0.3, 0.5, penalty="Direct"), ["penalty", "Direct"]),
        ("binary_rloo gap=-1", lambda: cf.binary_rloo(0.3, 0.5, -1.0), ["reward_gap", "-1"]),
        ("binary_entropy c=-0.1", lambda: cf.binary_entropy(0.3, 0.5, -0.1), ["entropy_coef", "-0.1"]),
        ("binary_entropy c=nan", lambda: cf.binary_entropy(0.3, 0.5, math.nan), ["entropy_coef", "nan"]),
        ("binary_entropy penalty=None", lambda: cf.binary_entropy(0.3, 0.5, 0.1, penalty=None), ["penalty"]),
        ("binary_entropy margin=inf", lambda: cf.binary_entropy(0.3, 0.5, 0.1, math.inf), ["margin", "inf"]),
        ("binary_entropy_condition x=0", lambda: cf.binary_entropy_condition(0.0, 0.3, 0.5, 0.1), ["x", "0"]),
        ("binary_entropy_condition x=1", lambda: cf.binary_entropy_condition(1.0, 0.3, 0.5, 0.1), ["x", "1"]),
        ("large_group_direct_h x=1", lambda: cf.large_group_direct_h(1.0, 0.3, 0.5), ["x", "1"]),
        ("large_group_direct_turning_point beta=0", lambda: cf.large_group_direct_turning_point(0.0), ["beta", "0"]),
        ("large_group_direct_turning_point beta=-inf", lambda: cf.large_group_direct_turning_point(-math.inf),
         ["beta", "inf"]),
        ("binary_pairwise_filtered p=1.5", lambda: cf.binary_pairwise_filtered(1.5, 0.5), ["pi_ref_a", "1.5"]),
        ("binary_pairwise_filtered beta shape (2,) vs p (3,)",
         lambda: cf.binary_pairwise_filtered([0.1, 0.2, 0.3], [0.5, 1.0]), ["(3,)", "(2,)"]),
        ("binary_rloo beta shape (2,) vs p (3,)",
         lambda: cf.binary_rloo([0.1, 0.2, 0.3], [0.5, 1.0]), ["(3,)", "(2,)"]),
    ]
    for label, mk, names in E:
        out.append(_c("closed forms: refusals", label, mk, "error", names))
    out.append(_c("closed forms: refusals", "large_group_direct_h p=0 (h = -inf exactly)",
                  lambda: cf.large_group_direct_h(0.5, 0.0, 0.5), "either", ["pi_ref_a", "0"],
                  check=lambda tmp, res: _v(res) == -math.inf))
    # p = 0 and p = 1 exactly: the vertices
    for name, fn in (("binary_rloo", lambda p: cf.binary_rloo(p, 0.5)),
                     ("binary_rloo direct", lambda p: cf.binary_rloo(p, 0.5, penalty="direct")),
                     ("binary_pairwise_filtered", lambda p: cf.binary_pairwise_filtered(p, 0.5)),
                     ("binary_shift_direct", lambda p: cf.binary_shift_direct(p, 0.5, 4)),
                     ("binary_entropy reverse c=0.1", lambda p: cf.binary_entropy(p, 0.5, 0.1)),
                     ("binary_entropy direct c=0.1", lambda p: cf.binary_entropy(p, 0.5, 0.1, penalty="direct"))):
        for p in (0.0, 1.0):
            want = None if name.startswith("binary_entropy") else p   # the bonus pulls a vertex inside
            out.append(_c("closed forms at the vertices", f"{name} at p={p}", (lambda fn=fn, p=p: fn(p)), "either",
                          ["pi_ref_a"], check=None if want is None else
                          (lambda tmp, res, want=want: ref.close(_v(res), want, 1e-12, 1e-300))))
    return out


# ---------------------------------------------------------------- pass@k and intervals
def pass_at_k_cases() -> list[dict]:
    pr = _pr()
    out = []
    grp = "pass@k and intervals"
    for n, c, k in ((1, 0, 1), (1, 1, 1), (5, 0, 5), (5, 5, 5), (64, 1, 64), (64, 63, 2), (1000, 3, 999),
                    (10 ** 6, 1, 10), (200, 100, 150), (7, 3, 4)):
        out.append(_c(grp, f"unbiased_pass_at_k(n={n}, c={c}, k={k})", (lambda n=n, c=c, k=k:
                                                                       pr.unbiased_pass_at_k(n, c, k)), "ok",
                      check=(lambda tmp, res, n=n, c=c, k=k: ref.close(_v(res), ref.pass_at_k(n, c, k), 1e-10, 1e-15))))
    for n, c, k, names in ((10, 3, 0, ["k", "0"]), (10, 11, 2, ["11"]), (10, -1, 2, ["-1"]), (10, 3, -2, ["-2"]),
                           (10, 3.5, 2, ["3.5"]), (0, 0, 1, ["n", "0"]), (10, 3, 2.5, ["2.5"])):
        out.append(_c(grp, f"unbiased_pass_at_k(n={n}, c={c}, k={k})", (lambda n=n, c=c, k=k:
                                                                       pr.unbiased_pass_at_k(n, c, k)), "error",
                      names))
    out.append(_c(grp, "unbiased_pass_at_k(n=10, c=3, k=11): k > n", lambda: pr.unbiased_pass_at_k(10, 3, 11),
                  "either", ["k"], check=lambda tmp, res: math.isnan(_v(res))))
    for x, k in ((0.3, 1), (1e-300, 5), (0.999, 1000), (0.0, 3), (1.0, 3), (0.5, 10 ** 6)):
        out.append(_c(grp, f"pass_at_k({x!r}, {k})", (lambda x=x, k=k: pr.pass_at_k(x, k)), "ok",
                      check=(lambda tmp, res, x=x, k=k: ref.close(_v(res), -math.expm1(k * math.log1p(-x))
                                                                  if x < 1 else 1.0, 1e-12, 1e-300))))
    for x, k, names in ((0.3, 0, ["k", "0"]), (1.2, 2, ["1.2"]), (0.3, -1, ["-1"]), (math.nan, 2, ["nan"])):
        out.append(_c(grp, f"pass_at_k({x!r}, {k})", (lambda x=x, k=k: pr.pass_at_k(x, k)), "error", names))
    for c, n in ((0, 1), (0, 50), (50, 50), (1, 1000), (17, 40)):
        for level in (0.5, 0.95, 0.999999):
            out.append(_c(grp, f"binomial_interval({c}, {n}, level={level}, wilson)",
                          (lambda c=c, n=n, level=level: pr.binomial_interval(c, n, level=level, method="wilson")),
                          "ok", check=(lambda tmp, res, c=c, n=n, level=level: all(
                              ref.close(_v(dict(value=a)), b, 1e-9, 1e-12)
                              for a, b in zip(res["value"], ref.wilson(c, n, level))))))
            out.append(_c(grp, f"binomial_interval({c}, {n}, level={level}, jeffreys)",
                          (lambda c=c, n=n, level=level: pr.binomial_interval(c, n, level=level)), "ok",
                          check=(lambda tmp, res, c=c, n=n, level=level: all(
                              ref.close(_v(dict(value=a)), b, 1e-7, 1e-12)
                              for a, b in zip(res["value"], ref.jeffreys(c, n, level))))))
    for args, kw, names in (((3, 10), dict(level=1.0), ["level", "1"]), ((3, 10), dict(level=0.0), ["level", "0"]),
                            ((3, 10), dict(level=np.float32(0.95)), []), ((3, 10), dict(method="Wilson"), ["Wilson"]),
                            ((11, 10), {}, ["11"]), ((3, 0), {}, ["0"]), ((-1, 10), {}, ["-1"]),
                            ((3, 10.5), {}, ["10.5"]), (("3", 10), {}, ["'3'"]), ((3, 10), dict(level="0.9"), ["'0.9'"])):
        expect = "ok" if not names else "error"
        out.append(_c(grp, f"binomial_interval{args} {kw}", (lambda args=args, kw=kw: pr.binomial_interval(*args, **kw)),
                      expect, names))
    S = [  # samples_from_counts with odd inputs
        ("samples_from_counts([10, 'a'], [3, 1])", lambda: pr.samples_from_counts([10, "a"], [3, 1]), "error",
         ["'a'"], ["got '10'"]),
        ("samples_from_counts n as np.uint8", lambda: pr.samples_from_counts(np.array([10, 8], np.uint8),
                                                                              np.array([3, 0], np.uint8)), "ok", [], []),
        ("samples_from_counts n 2**60", lambda: pr.samples_from_counts([2 ** 60], [3]), "error", ["n"], []),
        ("samples_from_counts bool correct", lambda: pr.samples_from_counts([10, 8], [True, False]), "error",
         ["correct"], []),
        ("samples_from_counts ids of another length", lambda: pr.samples_from_counts([10, 8], [3, 0], ["a"]), "error",
         ["prompt_ids"], []),
        ("samples_from_counts ids None entries", lambda: pr.samples_from_counts([10, 8], [3, 0], [None, None]),
         "error", ["prompt_ids"], []),
        ("samples_from_counts n float 10.0", lambda: pr.samples_from_counts([10.0, 8.0], [3.0, 0.0]), "ok", [], []),
        ("samples_from_counts correct -0.0", lambda: pr.samples_from_counts([10], [-0.0]), "ok", [], []),
    ]
    for label, mk, expect, names, wrong in S:
        out.append(_c(grp, label, mk, expect, names, wrong=wrong))
    return out


# ---------------------------------------------------------------- the KL and variant registries
def registry_cases() -> list[dict]:
    from grpo_theory import kl, variants

    out = []
    grp = "KL and variant registries"
    k3 = lambda: _o(kl_estimator="k3")                   # noqa: E731
    # lr = +-inf (pi or pi_ref zero): k3 = e^{-lr} + lr - 1 tends to +inf on both sides.
    for lr in (math.inf, -math.inf):
        out.append(_c(grp, f"kl.estimator_value(k3, {lr})", (lambda lr=lr: kl.estimator_value(k3(), lr)), "ok",
                      check=(lambda tmp, res: _v(res) == math.inf)))
    out.append(_c(grp, "kl.estimator_value(k3, nan)", (lambda: kl.estimator_value(k3(), math.nan)), "error", ["nan"]))
    for lr in (-0.0, 700.0, -745.0, 1e-300):
        out.append(_c(grp, f"kl.estimator_value(k3, {lr!r})", (lambda lr=lr: kl.estimator_value(k3(), lr)), "ok",
                      check=(lambda tmp, res, lr=lr: ref.close(_v(res), _k3(lr), 1e-9, 1e-300))))
    E = [
        ("kl.effective_penalty('k9', 'loss', None, None)", lambda: kl.effective_penalty("k9", "loss", None, None),
         ["k9"]),
        ("kl.effective_penalty('k3', 'nowhere', None, None)", lambda: kl.effective_penalty("k3", "nowhere", None, None),
         ["nowhere"]),
        ("kl.effective_penalty('k3', 'loss', -1, None)", lambda: kl.effective_penalty("k3", "loss", -1, None), ["-1"]),
        ("kl.effective_penalty(None, 'loss', None, None)", lambda: kl.effective_penalty(None, "loss", None, None),
         ["estimator"]),
        ("variants.lookup('nope', 'x')", lambda: variants.lookup("nope", "x"), ["nope"]),
        ("variants.lookup('kl_estimator', 5)", lambda: variants.lookup("kl_estimator", 5), ["5"]),
        ("variants.lookup('kl_estimator', None)", lambda: variants.lookup("kl_estimator", None), ["None"]),
        ("variants.lookup('kl_estimator', 'K3 ')", lambda: variants.lookup("kl_estimator", "K3 "), ["K3"]),
        ("variants.names('kl')", lambda: variants.names("kl"), ["kl"]),
        ("variants.unregister('kl_estimator', 'zz')", lambda: variants.unregister("kl_estimator", "zz"), ["zz"]),
        ("variants.register(5)", lambda: variants.register(5), ["int"]),
        ("variants.note_penalty('sideways')", lambda: variants.note_penalty("sideways"), ["sideways"]),
        ("Objective(kl_estimator='k3', kl_placement='Loss')", lambda: _o(kl_estimator="k3", kl_placement="Loss"),
         ["kl_placement", "Loss"]),
        ("Objective(kl_estimator='k3', kl_value_clamp=0)", lambda: _o(kl_estimator="k3", kl_value_clamp=0),
         ["kl_value_clamp", "0"]),
        ("Objective(kl_estimator='k3', kl_log_ratio_clamp=-0.0)", lambda: _o(kl_estimator="k3", kl_log_ratio_clamp=-0.0),
         ["kl_log_ratio_clamp"]),
        ("Objective(level='Token')", lambda: _o(level="Token"), ["level", "Token"]),
        ("Objective(importance_level='answer')", lambda: _o(importance_level="answer"), ["importance_level", "answer"]),
        ("Objective(loss_type='')", lambda: _o(loss_type=""), ["loss_type"]),
        ("Objective(groups_per_batch=0)", lambda: _o(groups_per_batch=0), ["groups_per_batch", "0"]),
        ("Objective(groups_per_batch=2.5)", lambda: _o(groups_per_batch=2.5), ["groups_per_batch", "2.5"]),
        ("Objective(filter_ties='yes')", lambda: _o(filter_ties="yes"), ["filter_ties", "yes"]),
        ("Objective(variance_eps=-1e-9)", lambda: _o(variance_eps=-1e-9), ["variance_eps"]),
        ("Objective(advantage='pass_at_k') without pass_k", lambda: _o(advantage="pass_at_k", group_size=4),
         ["pass_k"]),
        ("Objective(pass_k=9, group_size=8)", lambda: _o(advantage="pass_at_k", pass_k=9, group_size=8),
         ["pass_k", "9"]),
    ]
    for label, mk, names in E:
        out.append(_c(grp, label, mk, "error", names))
    out.append(_c(grp, "kl.estimator_value of the default objective (k3)", lambda: kl.estimator_value(_o(), 0.1), "ok",
                  check=lambda tmp, res: ref.close(_v(res), _k3(0.1), 1e-12)))
    for est in ("k1", "k2", "k3", "abs"):
        out.append(_c(grp, f"kl.discontinuities({est})", (lambda est=est: kl.discontinuities(_o(kl_estimator=est))),
                      "ok", check=lambda tmp, res: isinstance(res["value"], tuple)))
    return out


def _k3(lr):
    """k3 = exp(-lr) - 1 + lr (the log-ratio lr = log(pi/pi_ref)), in mpmath."""
    import mpmath as mp

    with mp.workdps(60):
        x = mp.mpf(lr)
        return float(mp.exp(-x) - 1 + x)
