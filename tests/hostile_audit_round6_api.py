"""Cases of the sixth hostile audit (issue 45), part one: questions and objectives no round tried.

Random rewards (``reward_levels``/``reward_probs``) and preference matrices, checked against enumeration over
every group (:mod:`hostile_audit_round6_ref`); token-level answer trees (``answers=``, ``level="token"``,
``loss_type``, ``groups_per_batch``); and the GRPO family's fields (``advantage``, ``pass_k``, ``filter_ties``,
``entropy_coef``, ``importance_level``), whose binary answers are checked against the guide's stationarity
conditions solved in mpmath.

A case is a dict as in :mod:`hostile_audit_fresh_cases`: ``expect`` is ``ok`` (checked where ``check`` is
given), ``error`` (one line naming ``names``), ``warn`` or ``either``; ``flag`` (this round's) means a warning
or an error, either naming ``names``.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round6_ref as ref

NAN, INF = float("nan"), math.inf


def _c(group, label, call, expect, names=(), check=None, wrong=()):
    return dict(group=group, label=label, call=call, expect=expect, names=list(names), check=check, wrong=list(wrong))


def _pi(res):
    v = res["value"]
    return np.asarray(getattr(v, "pi", v), float)


# ---------------------------------------------------------------- random rewards and preference matrices
def random_reward_cases() -> list[dict]:
    from grpo_theory import Objective, Question, reward_preference, stationary_policy

    G = "random rewards and preferences"
    out = []
    Q = lambda p, lv, pr: Question(p, reward_levels=lv, reward_probs=pr)   # noqa: E731
    # P_G by enumeration: (pi_ref, levels, probs, G, ddof, eps, normalization, pi)
    specs = [
        ([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 2, 0, 0.0, "scale", [0.5, 0.5]),
        ([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 5, 1, 1e-4, "scale", [0.9, 0.1]),
        ([0.2, 0.3, 0.5], [-1, 0, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0]], 4, 0, 0.0, "scale",
         [0.2, 0.3, 0.5]),
        ([0.2, 0.3, 0.5], [-1, 0, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0]], 3, 1, 0.0, "shift",
         [0.6, 0.3, 0.1]),
        ([0.5, 0.5], [0, 1], [[1.0, 0.0], [1.0, 0.0]], 4, 0, 0.0, "scale", [0.5, 0.5]),         # never rewarded
        ([0.5, 0.5], [0, 1], [[0.0, 1.0], [0.0, 1.0]], 6, 1, 0.0, "scale", [0.1, 0.9]),          # always rewarded
        ([0.4, 0.6], [0.0, 0.5, 1.0], [[0, 0, 1], [1, 0, 0]], 4, 0, 0.0, "scale", [0.4, 0.6]),     # deterministic
        ([0.25, 0.25, 0.25, 0.25], [0, 1], [[0.5, 0.5]] * 4, 3, 0, 0.0, "scale", [0.1, 0.2, 0.3, 0.4]),  # identical
        ([0.3, 0.7], [1e-9, 2e-9], [[0.2, 0.8], [0.6, 0.4]], 4, 0, 0.0, "scale", [0.5, 0.5]),  # tiny span
        ([0.3, 0.7], [-5e8, 5e8], [[0.2, 0.8], [0.6, 0.4]], 3, 0, 0.0, "scale", [0.5, 0.5]),   # big span
        ([0.3, 0.7], [0, 1], [[1e-12, 1 - 1e-12], [0.6, 0.4]], 4, 0, 0.0, "scale", [0.5, 0.5]),
        ([0.3, 0.7], [0, 1, 2, 3, 4], [[0.2] * 5, [0.1, 0.1, 0.1, 0.1, 0.6]], 4, 1, 1e-6, "scale", [0.3, 0.7]),
        ([0.1, 0.9], [3, 1], [[0.5, 0.5], [0.9, 0.1]], 5, 0, 0.0, "scale", [0.7, 0.3]),         # levels unsorted
        ([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 8, 0, 0.5, "scale", [0.2, 0.8]),         # big eps
    ]
    for i, (p, lv, pr, g, dd, eps, norm, pi) in enumerate(specs):
        want = ref.pg_random(pi, lv, pr, g, ddof=dd, eps=eps, normalization=norm)

        def chk(tmp, res, want=want):
            got = np.asarray(res["value"], float)
            return got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=1e-12)
        out.append(_c(G, f"reward_preference random #{i}: levels {lv}, G={g}, ddof {dd}, eps {eps}, {norm}",
                      lambda p=p, lv=lv, pr=pr, g=g, dd=dd, eps=eps, norm=norm, pi=pi: reward_preference(
                          Q(p, lv, pr), Objective(beta=0.5, group_size=g, std_ddof=dd, std_eps=eps,
                                                  normalization=norm), pi), "ok", check=chk))
    # G = inf
    for i, (p, lv, pr) in enumerate([([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]]),
                                     ([0.2, 0.3, 0.5], [-1, 0, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0]])]):
        want = ref.pg_random_inf(p, lv, pr)
        out.append(_c(G, f"reward_preference random G=inf #{i}",
                      lambda p=p, lv=lv, pr=pr: reward_preference(Q(p, lv, pr), Objective(beta=0.5, group_size=INF), p),
                      "ok", check=lambda tmp, res, w=want: np.allclose(np.asarray(res["value"], float), w, rtol=1e-9,
                                                                         atol=1e-12)))
    # stationary policies with random rewards: the reverse condition with enumerated P_G
    for i, (p, lv, pr, g, beta) in enumerate([
            ([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 3, 0.5),
            ([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 2, 0.05),
            ([0.2, 0.3, 0.5], [-1, 0, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0]], 3, 1.0),
            ([0.6, 0.4], [0, 1], [[0.45, 0.55], [0.55, 0.45]], 4, 2.0),
            ([0.3, 0.7], [0, 10], [[0.2, 0.8], [0.6, 0.4]], 5, 0.3)]):
        def chk(tmp, res, p=p, lv=lv, pr=pr, g=g, beta=beta):
            pi = _pi(res)
            return ref.reverse_ok(pi, p, ref.pg_random(pi, lv, pr, g), beta, tol=1e-7)
        out.append(_c(G, f"stationary_policy random #{i} G={g} beta={beta}",
                      lambda p=p, lv=lv, pr=pr, g=g, beta=beta: stationary_policy(
                          Q(p, lv, pr), Objective(beta=beta, group_size=g)), "ok", check=chk))
    # preference matrices, G = 2: P_2 = (2M - 1) pi
    mats = [([0.3, 0.7], [[0.5, 0.9], [0.1, 0.5]]),
            ([0.2, 0.3, 0.5], [[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]]),   # cyclic-ish
            ([0.2, 0.3, 0.5], [[0.5, 1.0, 0.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.5]]),   # rock-paper-scissors
            ([0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]]),                                    # all ties
            ([0.1, 0.9], [[0.5, 1 - 1e-12], [1e-12, 0.5]])]
    for i, (p, M) in enumerate(mats):
        want = ref.pg_preference(p, M)
        out.append(_c(G, f"reward_preference preference matrix #{i}",
                      lambda p=p, M=M: reward_preference(Question(p, preference=M), Objective(beta=0.5, group_size=2), p),
                      "ok", check=lambda tmp, res, w=want: np.allclose(np.asarray(res["value"], float), w, atol=1e-12)))

        def chk(tmp, res, p=p, M=M):          # an unconverged result that says so is not silent
            pi = _pi(res)
            return ref.reverse_ok(pi, p, ref.pg_preference(pi, M), 0.5, tol=1e-7) or not res["value"].converged
        out.append(_c(G, f"stationary_policy preference matrix #{i}",
                      lambda p=p, M=M: stationary_policy(Question(p, preference=M), Objective(beta=0.5, group_size=2)),
                      "ok", check=chk))
    # bad random-reward questions
    bad = [
        ("reward_probs row sums to 0.9", dict(reward_levels=[0, 1], reward_probs=[[0.2, 0.7], [0.6, 0.4]]),
         ["reward_probs"]),
        ("reward_probs negative entry", dict(reward_levels=[0, 1], reward_probs=[[1.2, -0.2], [0.6, 0.4]]),
         ["reward_probs", "-0.2"]),
        ("reward_probs NaN", dict(reward_levels=[0, 1], reward_probs=[[NAN, 1.0], [0.6, 0.4]]), ["reward_probs"]),
        ("reward_probs one row for two answers", dict(reward_levels=[0, 1], reward_probs=[[0.2, 0.8]]),
         ["reward_probs"]),
        ("reward_probs 3 columns for 2 levels", dict(reward_levels=[0, 1], reward_probs=[[0.2, 0.3, 0.5]] * 2),
         ["reward_probs"]),
        ("reward_probs flat list", dict(reward_levels=[0, 1], reward_probs=[0.2, 0.8, 0.6, 0.4]), ["reward_probs"]),
        ("reward_probs ragged rows", dict(reward_levels=[0, 1], reward_probs=[[0.2, 0.8], [1.0]]), ["reward_probs"]),
        ("reward_levels duplicated", dict(reward_levels=[1, 1], reward_probs=[[0.2, 0.8], [0.6, 0.4]]),
         ["reward_levels"]),
        ("reward_levels with inf", dict(reward_levels=[0, INF], reward_probs=[[0.2, 0.8], [0.6, 0.4]]),
         ["reward_levels"]),
        ("reward_levels without reward_probs", dict(reward_levels=[0, 1]), ["reward_probs"]),
        ("reward_probs without reward_levels", dict(reward_probs=[[0.2, 0.8], [0.6, 0.4]]), ["reward_levels"]),
        ("rewards and reward_levels both", dict(rewards=[1, 0], reward_levels=[0, 1],
                                                reward_probs=[[0.2, 0.8], [0.6, 0.4]]), ["rewards", "reward_levels"]),
        ("rewards and preference both", dict(rewards=[1, 0], preference=[[0.5, 0.9], [0.1, 0.5]]),
         ["rewards", "preference"]),
        ("reward_levels empty", dict(reward_levels=[], reward_probs=[[], []]), ["reward_levels"]),
        ("reward_probs as text", dict(reward_levels=[0, 1], reward_probs=[["0.2", "0.8"], ["0.6", "0.4"]]),
         ["reward_probs"]),
        ("reward_probs row sums to 1 + 1e-6", dict(reward_levels=[0, 1], reward_probs=[[0.2, 0.800001], [0.6, 0.4]]),
         ["reward_probs"]),
        ("preference not square", dict(preference=[[0.5, 0.9, 0.1], [0.1, 0.5, 0.2]]), ["preference"]),
        ("preference M + M^T != 1", dict(preference=[[0.5, 0.9], [0.5, 0.5]]), ["preference"]),
        ("preference diagonal 0", dict(preference=[[0.0, 0.9], [0.1, 0.0]]), ["preference"]),
        ("preference entry 1.5", dict(preference=[[0.5, 1.5], [-0.5, 0.5]]), ["preference"]),
        ("preference NaN", dict(preference=[[0.5, NAN], [NAN, 0.5]]), ["preference"]),
        ("preference 3x3 for two answers", dict(preference=[[0.5, 0.5, 0.5]] * 3), ["preference"]),
        ("preference 1-d", dict(preference=[0.5, 0.9, 0.1, 0.5]), ["preference"]),
    ]
    for label, kw, names in bad:
        out.append(_c(G, f"Question {label}", lambda kw=kw: Question([0.3, 0.7], **kw), "error", names))
    # a preference matrix fixes P_G only at G = 2: other G are refused, naming G
    for g in (3, 8, INF):
        out.append(_c(G, f"reward_preference preference matrix at G={g}",
                      lambda g=g: reward_preference(Question([0.3, 0.7], preference=[[0.5, 0.9], [0.1, 0.5]]),
                                                    Objective(beta=0.5, group_size=g), [0.3, 0.7]),
                      "error", ["G"]))
    out.append(_c(G, "stationary_policy preference matrix, shift normalisation (G=2)",
                  lambda: stationary_policy(Question([0.3, 0.7], preference=[[0.5, 0.9], [0.1, 0.5]]),
                                            Objective(beta=0.5, group_size=2, normalization="shift")), "either",
                  ["shift"]))
    return out


# ---------------------------------------------------------------- token-level answer trees
def tree_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G = "answer trees (token level)"
    out = []
    two = [("A", "$"), ("B", "$")]
    for lt in ("grpo", "dr_grpo", "dapo", "bnpo", "token-mean", "seq-mean-token-mean", "seq-mean-token-sum"):
        for gpb in (INF, 1):
            out.append(_c(G, f"two one-token answers, loss_type={lt}, groups_per_batch={gpb}: Eq. 14",
                          lambda lt=lt, gpb=gpb: stationary_policy(
                              Question([0.3, 0.7], [1, 0], answers=two),
                              Objective(beta=0.5, group_size=2, level="token", loss_type=lt, groups_per_batch=gpb)),
                          "ok", check=lambda tmp, res: ref.close(_pi(res)[0], ref.eq14(0.3, 0.5), rel=1e-7)))
    for p, beta in ((0.05, 0.2), (0.9, 3.0), (1e-6, 0.5)):
        out.append(_c(G, f"two one-token answers at p={p}, beta={beta}, token-mean: Eq. 14",
                      lambda p=p, beta=beta: stationary_policy(
                          Question([p, 1 - p], [1, 0], answers=two),
                          Objective(beta=beta, group_size=2, level="token", loss_type="token-mean")),
                      "ok", check=lambda tmp, res, p=p, beta=beta: ref.close(_pi(res)[0], ref.eq14(p, beta), rel=1e-6)))
    out.append(_c(G, "three one-token answers (a shared end token), G=8 token vs enumeration",
                  lambda: stationary_policy(Question([0.2, 0.3, 0.5], [1, 0, 0], answers=[("x", "$"), ("y", "$"),
                                                                                         ("z", "$")]),
                                            Objective(beta=0.5, group_size=8, level="token")),
                  "ok", check=lambda tmp, res: ref.close(_pi(res)[0], ref.binary_group_reverse(0.2, 0.5, 8), rel=1e-6)))
    bad = [
        ("answers not prefix-free", [("A",), ("A", "B")], ["prefix"]),
        ("answers duplicated", [("A", "$"), ("A", "$")], ["answers"]),
        ("an empty answer", [(), ("B", "$")], ["answers"]),
        ("three answers for two outputs", [("A", "$"), ("B", "$"), ("C", "$")], ["answers"]),
        ("one answer for two outputs", [("A", "$")], ["answers"]),
        ("a token that is a list", [(["A"], "$"), ("B", "$")], ["answers"]),
        ("answers a number", 5, ["answers"]),
        ("answers an integer per answer", [1, 2], ["answers"]),
        ("answers a dict", {"A": 1, "B": 2}, ["answers"]),
        ("answers with a 10,000-token answer and a prefix of it", [tuple("A" * 10_000), tuple("A" * 9_999)],
         ["prefix"]),
    ]
    for label, answers, names in bad:
        out.append(_c(G, f"Question {label}", lambda a=answers: Question([0.3, 0.7], [1, 0], answers=a), "error", names))
    out.append(_c(G, "answers as strings 'A$', 'B$' (a string is a token sequence?)",
                  lambda: stationary_policy(Question([0.3, 0.7], [1, 0], answers=["A$", "B$"]),
                                            Objective(beta=0.5, group_size=2, level="token")),
                  "either", ["answers"], check=lambda tmp, res: ref.close(_pi(res)[0], ref.eq14(0.3, 0.5), rel=1e-6)))
    for label, tok in (("None", None), ("NaN", NAN), ("an int (a token id)", 17)):
        out.append(_c(G, f"a token that is {label}: a label like any other, or refused",
                      lambda tok=tok: stationary_policy(Question([0.3, 0.7], [1, 0], answers=[(tok, "$"), ("B", "$")]),
                                                        Objective(beta=0.5, group_size=2, level="token")),
                      "either", ["answers"], check=lambda tmp, res: ref.close(_pi(res)[0], ref.eq14(0.3, 0.5), rel=1e-6)))
    out.append(_c(G, "level='token' on a question without answers",
                  lambda: stationary_policy(Question([0.3, 0.7], [1, 0]),
                                            Objective(beta=0.5, group_size=2, level="token")),
                  "either", ["answers"], check=lambda tmp, res: ref.close(_pi(res)[0], ref.eq14(0.3, 0.5), rel=1e-6)))
    out.append(_c(G, "answers with level='sequence' (answers ignored): Eq. 14",
                  lambda: stationary_policy(Question([0.3, 0.7], [1, 0], answers=[("B", "X", "$"), ("A", "$")]),
                                            Objective(beta=0.5, group_size=2)),
                  "ok", check=lambda tmp, res: ref.close(_pi(res)[0], ref.eq14(0.3, 0.5), rel=1e-7)))
    obj_bad = [
        ("loss_type='mean'", dict(level="token", loss_type="mean"), ["loss_type", "mean"]),
        ("loss_type='DAPO' (capitals)", dict(level="token", loss_type="DAPO"), ["loss_type"]),
        ("loss_type=None", dict(level="token", loss_type=None), ["loss_type"]),
        ("loss_type=3", dict(level="token", loss_type=3), ["loss_type"]),
        ("level='tokens'", dict(level="tokens"), ["level", "tokens"]),
        ("level=''", dict(level=""), ["level"]),
        ("level=None", dict(level=None), ["level"]),
        ("groups_per_batch=0", dict(level="token", loss_type="dapo", groups_per_batch=0), ["groups_per_batch"]),
        ("groups_per_batch=-1", dict(level="token", loss_type="dapo", groups_per_batch=-1), ["groups_per_batch"]),
        ("groups_per_batch=2.5", dict(level="token", loss_type="dapo", groups_per_batch=2.5), ["groups_per_batch"]),
        ("groups_per_batch=nan", dict(level="token", loss_type="dapo", groups_per_batch=NAN), ["groups_per_batch"]),
        ("groups_per_batch=-inf", dict(level="token", loss_type="dapo", groups_per_batch=-INF), ["groups_per_batch"]),
        ("groups_per_batch='1'", dict(level="token", loss_type="dapo", groups_per_batch="1"), ["groups_per_batch"]),
        ("groups_per_batch=True", dict(level="token", loss_type="dapo", groups_per_batch=True), ["groups_per_batch"]),
    ]
    for label, kw, names in obj_bad:
        out.append(_c(G, f"Objective {label}", lambda kw=kw: Objective(beta=0.5, group_size=4, **kw), "error", names))
    # token-level, a real tree (B X $, B Y $, A $): the reverse condition at the root holds for every loss type
    tree = [("B", "X", "$"), ("B", "Y", "$"), ("A", "$")]
    for lt in ("grpo", "dr_grpo", "dapo"):
        out.append(_c(G, f"the guide's tree, G=4, reverse, {lt}: a distribution with a residual",
                      lambda lt=lt: stationary_policy(Question([0.2, 0.3, 0.5], [1, 0, 0], answers=tree),
                                                      Objective(beta=0.5, group_size=4, level="token", loss_type=lt)),
                      "ok", check=lambda tmp, res: abs(_pi(res).sum() - 1) < 1e-12 and bool(res["value"].converged)
                      and _pi(res)[0] > 0.2))
    out.append(_c(G, "importance_level='sequence' + k3_ratio on a multi-token tree (documented refusal)",
                  lambda: stationary_policy(Question([0.2, 0.3, 0.5], [1, 0, 0], answers=tree),
                                            Objective(beta=0.5, group_size=4, level="token", loss_type="dapo",
                                                      kl_estimator="k3_ratio", importance_level="sequence")),
                  "error", ["sequence"]))
    return out


# ---------------------------------------------------------------- the GRPO family's fields
def family_cases() -> list[dict]:
    from grpo_theory import Objective, Question, stationary_policy

    G = "GRPO family fields"
    out = []
    B = lambda p=0.3, r=(1.0, 0.0): Question([p, 1 - p], list(r))   # noqa: E731
    # RLOO: Eq. 14 with gamma = reward gap, every G
    for g in (2, 3, 17, 1000, INF):
        for (r, p, beta) in (((1.0, 0.0), 0.3, 0.5), ((5.0, -2.0), 0.1, 2.0), ((1e-6, 0.0), 0.4, 1e-5)):
            gap = r[0] - r[1]
            out.append(_c(G, f"RLOO G={g} rewards {r} p={p} beta={beta}: Eq. 14 with gamma={gap}",
                          lambda g=g, r=r, p=p, beta=beta: stationary_policy(
                              B(p, r), Objective(beta=beta, group_size=g, advantage="rloo")),
                          "ok", check=lambda tmp, res, p=p, beta=beta, gap=gap: ref.close(
                              _pi(res)[0], ref.eq14(p, beta, gap), rel=1e-7)))
    # Dr. GRPO (shift): Eq. 14 with gamma = gap (G - 1)/G
    for g in (2, 5, 64):
        for (r, p, beta) in (((1.0, 0.0), 0.3, 0.5), ((3.0, 1.0), 0.7, 0.1)):
            gam = (r[0] - r[1]) * (g - 1) / g
            out.append(_c(G, f"shift G={g} rewards {r} p={p} beta={beta}: Eq. 14 with gamma={gam:.4g}",
                          lambda g=g, r=r, p=p, beta=beta: stationary_policy(
                              B(p, r), Objective(beta=beta, group_size=g, normalization="shift")),
                          "ok", check=lambda tmp, res, p=p, beta=beta, gam=gam: ref.close(
                              _pi(res)[0], ref.eq14(p, beta, gam), rel=1e-7)))
    # REINFORCE++: s sqrt(x(1-x)) = beta (x - p)
    for g, p, beta in ((2, 0.3, 0.5), (3, 0.05, 0.2), (8, 0.3, 0.5), (100, 0.6, 1.5), (INF, 0.3, 0.5), (INF, 1e-4, 0.1)):
        out.append(_c(G, f"REINFORCE++ G={g} p={p} beta={beta}",
                      lambda g=g, p=p, beta=beta: stationary_policy(B(p), Objective(beta=beta, group_size=g,
                                                                                    advantage="reinforce_pp")),
                      "ok", check=lambda tmp, res, g=g, p=p, beta=beta: ref.close(
                          _pi(res)[0], ref.binary_reinforce_pp(p, beta, g), rel=1e-7)))
    # group advantage at G = 3, 6, 12 against the binomial sum
    for g, p, beta in ((3, 0.3, 0.5), (6, 0.02, 0.3), (12, 0.5, 4.0)):
        out.append(_c(G, f"group G={g} p={p} beta={beta}: binomial-sum root",
                      lambda g=g, p=p, beta=beta: stationary_policy(B(p), Objective(beta=beta, group_size=g)),
                      "ok", check=lambda tmp, res, g=g, p=p, beta=beta: ref.close(
                          _pi(res)[0], ref.binary_group_reverse(p, beta, g), rel=1e-7)))
    # beta = 0 with an entropy bonus: Delta(x) = c logit x, whatever pi_ref
    for g, c, p in ((4, 1.0, 0.3), (4, 1.0, 0.93), (2, 0.5, 0.5), (3, 2.0, 0.01), (6, 0.25, 0.6)):
        out.append(_c(G, f"beta=0, entropy_coef={c}, G={g}, pi_ref={p}",
                      lambda g=g, c=c, p=p: stationary_policy(B(p), Objective(beta=0, group_size=g, entropy_coef=c)),
                      "ok", check=lambda tmp, res, g=g, c=c: ref.close(_pi(res)[0], ref.binary_entropy_only(g, c),
                                                                      rel=1e-7)))
    # pass@k with k = G: no signal, pi = pi_ref
    for g in (2, 4, 9):
        out.append(_c(G, f"pass@k with k = G = {g}: pi stays pi_ref",
                      lambda g=g: stationary_policy(B(0.37), Objective(beta=0.5, group_size=g, advantage="pass_at_k",
                                                                       pass_k=g)),
                      "ok", check=lambda tmp, res: np.allclose(_pi(res), [0.37, 0.63], atol=1e-9)))
    # bad family fields
    bad = [
        ("advantage='grpo'", dict(advantage="grpo"), ["advantage", "grpo"]),
        ("advantage=''", dict(advantage=""), ["advantage"]),
        ("advantage=None", dict(advantage=None), ["advantage"]),
        ("advantage='rloo ' (trailing space)", dict(advantage="rloo "), ["advantage"]),
        ("advantage='pass_at_k' without pass_k", dict(advantage="pass_at_k"), ["pass_k"]),
        ("pass_k=0", dict(advantage="pass_at_k", pass_k=0), ["pass_k"]),
        ("pass_k=-2", dict(advantage="pass_at_k", pass_k=-2), ["pass_k"]),
        ("pass_k=2.5", dict(advantage="pass_at_k", pass_k=2.5), ["pass_k"]),
        ("pass_k=nan", dict(advantage="pass_at_k", pass_k=NAN), ["pass_k"]),
        ("pass_k='2'", dict(advantage="pass_at_k", pass_k="2"), ["pass_k"]),
        ("pass_k=True", dict(advantage="pass_at_k", pass_k=True), ["pass_k"]),
        ("pass_k=5 > G=4", dict(advantage="pass_at_k", pass_k=5), ["pass_k"]),
        ("pass_k=inf", dict(advantage="pass_at_k", pass_k=INF), ["pass_k"]),
        ("filter_ties='yes'", dict(filter_ties="yes"), ["filter_ties"]),
        ("filter_ties=None", dict(filter_ties=None), ["filter_ties"]),
        ("filter_ties=2", dict(filter_ties=2), ["filter_ties"]),
        ("filter_ties='False' (text)", dict(filter_ties="False"), ["filter_ties"]),
        ("entropy_coef=-0.1", dict(entropy_coef=-0.1), ["entropy_coef"]),
        ("entropy_coef=nan", dict(entropy_coef=NAN), ["entropy_coef"]),
        ("entropy_coef=inf", dict(entropy_coef=INF), ["entropy_coef"]),
        ("entropy_coef='0.1'", dict(entropy_coef="0.1"), ["entropy_coef"]),
        ("entropy_coef=None", dict(entropy_coef=None), ["entropy_coef"]),
        ("entropy_coef=[0.1]", dict(entropy_coef=[0.1]), ["entropy_coef"]),
        ("importance_level='seq'", dict(importance_level="seq"), ["importance_level"]),
        ("importance_level=None", dict(importance_level=None), ["importance_level"]),
        ("importance_level='SEQUENCE'", dict(importance_level="SEQUENCE"), ["importance_level"]),
        ("variance_eps=-1e-300", dict(variance_eps=-1e-300), ["variance_eps"]),
        ("variance_eps=nan", dict(variance_eps=NAN), ["variance_eps"]),
        ("std_ddof=-1", dict(std_ddof=-1), ["std_ddof"]),
        ("std_ddof=0.5", dict(std_ddof=0.5), ["std_ddof"]),
        ("normalization='std'", dict(normalization="std"), ["normalization"]),
        ("penalty='kl'", dict(penalty="kl"), ["penalty"]),
    ]
    for label, kw, names in bad:
        out.append(_c(G, f"Objective {label}", lambda kw=kw: Objective(beta=0.5, group_size=4, **kw), "error", names))
    out.append(_c(G, "Objective pass_k=3 with advantage='group' (pass_k unused)",
                  lambda: Objective(beta=0.5, group_size=4, pass_k=3), "flag", ["pass_k"]))
    out.append(_c(G, "Objective(beta=0) without an entropy bonus: NoStationaryPolicy",
                  lambda: stationary_policy(B(), Objective(beta=0, group_size=4)), "error", ["beta"]))
    out.append(_c(G, "Objective(beta=0, entropy_coef=0.0) explicitly",
                  lambda: stationary_policy(B(), Objective(beta=0.0, group_size=4, entropy_coef=0.0)), "error", ["beta"]))
    out.append(_c(G, "beta=0, entropy_coef=1, filter_ties, G=4: only the vertex (boundary)",
                  lambda: stationary_policy(B(), Objective(beta=0, group_size=4, entropy_coef=1.0, filter_ties=True)),
                  "ok", check=lambda tmp, res: _pi(res)[0] > 1 - 1e-6 and bool(res["value"].boundary)))
    out.append(_c(G, "beta=0, entropy_coef=1, G=inf (unbounded advantage): vertex",
                  lambda: stationary_policy(B(), Objective(beta=0, group_size=INF, entropy_coef=1.0)),
                  "ok", check=lambda tmp, res: _pi(res)[0] > 1 - 1e-6 and bool(res["value"].boundary)))
    out.append(_c(G, "filter_ties at G=2 p=0.05 beta=0.5 (guide: 0.7216)",
                  lambda: stationary_policy(B(0.05), Objective(beta=0.5, group_size=2, filter_ties=True)),
                  "ok", check=lambda tmp, res: abs(_pi(res)[0] - _filtered_root(0.05, 0.5)) < 1e-8))
    out.append(_c(G, "filter_ties at G=2 p=0.3 beta=0.5 (guide table: 0.7918)",
                  lambda: stationary_policy(B(0.3), Objective(beta=0.5, group_size=2, filter_ties=True)),
                  "ok", check=lambda tmp, res: abs(_pi(res)[0] - _filtered_root(0.3, 0.5)) < 1e-8))
    out.append(_c(G, "entropy_coef=1e300 (the bonus dominates): pi -> uniform",
                  lambda: stationary_policy(B(0.3), Objective(beta=0.5, group_size=4, entropy_coef=1e300)),
                  "either", ["entropy_coef"], check=lambda tmp, res: abs(_pi(res)[0] - 0.5) < 1e-6))
    return out


def _filtered_root(p, beta) -> float:
    """G = 2 with tie filtering: ``beta (x - p)(x^2 + (1-x)^2) = x (1 - x)`` (docs/guide.md)."""
    return ref.bisect(lambda x: beta * (x - p) * (x * x + (1 - x) ** 2) - x * (1 - x), p, 1 - 1e-30)
