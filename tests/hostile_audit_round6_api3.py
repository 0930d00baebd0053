"""Cases of the sixth hostile audit (issue 45), part four: ``predict()``'s keywords and TRL's probes.

``predict(samples, obj, ...)`` from Python with the keywords docs/predict.md names but no round varied
(``t_max``, ``tol``, ``max_exact``, ``progress``, ``levels``, ``k``, ``interval``, ``level``), its ``pred`` checked
against the binomial-sum root of :mod:`hostile_audit_round6_ref`; and ``integrations.trl.Probe`` /
``make_tracking_callback`` (docs/trl.md) with malformed probes and arguments.
"""

from __future__ import annotations

import math

import numpy as np

import hostile_audit_round6_ref as ref

NAN, INF = float("nan"), math.inf
COUNTS = [(10, 3), (8, 1), (4, 2), (12, 11)]


def _c(group, label, call, expect, names=(), check=None, wrong=()):
    return dict(group=group, label=label, call=call, expect=expect, names=list(names), check=check, wrong=list(wrong))


def _samples():
    from grpo_theory.predict import samples_from_counts

    return samples_from_counts([n for n, _ in COUNTS], [c for _, c in COUNTS], ["a", "b", "c", "d"])


def _obj(**kw):
    from grpo_theory import Objective

    return Objective(**{"beta": 0.5, "group_size": 4, **kw})


def _pred_ok(beta=0.5, G=4, tol=1e-6):
    def check(tmp, res) -> bool:
        t = res["value"].table
        return all(abs(float(t["pred"].iloc[i]) - ref.binary_group_reverse(c / n, beta, G)) < tol
                   for i, (n, c) in enumerate(COUNTS))
    return check


def predict_keyword_cases() -> list[dict]:
    from grpo_theory.predict import predict

    G = "predict(): keywords no round varied"
    out = []
    for label, kw in [("t_max=50", dict(t_max=50.0)), ("tol=1e-10", dict(tol=1e-10)), ("max_exact=1", dict(max_exact=1)),
                      ("max_exact=10**6", dict(max_exact=10**6)), ("progress=False", dict(progress=False)),
                      ("k=(1, 2, 3, 4)", dict(k=(1, 2, 3, 4))), ("interval='wilson', level=0.8",
                                                                 dict(interval="wilson", level=0.8)),
                      ("levels=[0, 1]", dict(levels=[0, 1])), ("levels=(1, 0) (reversed)", dict(levels=(1, 0)))]:
        out.append(_c(G, f"predict(samples, obj, {label}): pred = binomial-sum root",
                      lambda kw=kw: predict(_samples(), _obj(), **kw), "ok", check=_pred_ok()))
    bad = [
        ("t_max=0", dict(t_max=0.0), ["t_max"]), ("t_max=-1", dict(t_max=-1.0), ["t_max"]),
        ("t_max=nan", dict(t_max=NAN), ["t_max"]), ("t_max=inf", dict(t_max=INF), ["t_max"]),
        ("tol=0", dict(tol=0.0), ["tol"]), ("tol=-1e-6", dict(tol=-1e-6), ["tol"]), ("tol=1.5", dict(tol=1.5), ["tol"]),
        ("tol='1e-6'", dict(tol="1e-6"), ["tol"]),
        ("max_exact=0", dict(max_exact=0), ["max_exact"]), ("max_exact=-5", dict(max_exact=-5), ["max_exact"]),
        ("max_exact=2.5", dict(max_exact=2.5), ["max_exact"]),
        ("progress='yes'", dict(progress="yes"), ["progress"]),
        ("k=()", dict(k=()), ["k"]), ("k=[1, 10**7]", dict(k=[1, 10**7]), ["k"]), ("k=5 (not a sequence)", dict(k=5), ["k"]),
        ("k=['1']", dict(k=["1"]), ["k"]),
        ("level='0.95'", dict(level="0.95"), ["level"]), ("interval='exact'", dict(interval="exact"), ["interval"]),
        ("levels=[0, 2] (reward 1 not a level)", dict(levels=[0, 2]), ["levels"]),
        ("levels=[1] (one level)", dict(levels=[1]), ["levels"]),
        ("levels=[0, nan]", dict(levels=[0, NAN]), ["levels"]),
        ("slow_tol=0", dict(slow_tol=0.0), ["slow_tol"]),
        ("clock=-1", dict(clock=-1.0), ["clock"]),
        ("fit=(10,) (one number)", dict(fit=(10,)), ["fit"]),
        ("fit=(10, 0.5, 3) (three numbers)", dict(fit=(10, 0.5, 3)), ["fit"]),
        ("steps=[10] with clock and steps as text", dict(clock=0.01, steps=["10"]), ["steps"]),
        ("sample_temperature=0", dict(sample_temperature=0.0), ["sample_temperature"]),
        ("finite_level=1.2", dict(finite_level=1.2), ["finite_level"]),
        ("seed=-3", dict(seed=-3), ["seed"]),
        ("id_column=5", dict(id_column=5), ["id_column"]),
    ]
    for label, kw, names in bad:
        out.append(_c(G, f"predict(samples, obj, {label})", lambda kw=kw: predict(_samples(), _obj(), **kw), "error",
                      names))
    out.append(_c(G, "predict(samples) with neither obj nor framework", lambda: predict(_samples()), "error",
                  ["framework"]))
    out.append(_c(G, "predict(samples, obj, framework='trl', config={...}) (both)",
                  lambda: predict(_samples(), _obj(), framework="trl", config={"beta": 0.1, "num_generations": 4}),
                  "error", ["framework"]))
    out.append(_c(G, "predict(samples, {'beta': 0.5, 'group_size': 4}) (a dict objective)",
                  lambda: predict(_samples(), {"beta": 0.5, "group_size": 4}), "either", ["obj"], check=_pred_ok()))
    out.append(_c(G, "predict(samples, obj) with obj's group_size=inf: Eq. 15",
                  lambda: predict(_samples(), _obj(group_size=INF)), "ok",
                  check=lambda tmp, res: all(abs(float(res["value"].table["pred"].iloc[i]) - ref.binary_group_reverse(
                      c / n, 0.5, INF)) < 1e-6 for i, (n, c) in enumerate(COUNTS))))
    out.append(_c(G, "predict(samples, obj with advantage='rloo', G=6): Eq. 14",
                  lambda: predict(_samples(), _obj(advantage="rloo", group_size=6)), "ok",
                  check=lambda tmp, res: all(abs(float(res["value"].table["pred"].iloc[i]) - ref.eq14(c / n, 0.5)) < 1e-6
                                             for i, (n, c) in enumerate(COUNTS))))
    out.append(_c(G, "predict on a token-level objective (single-token prompts)",
                  lambda: predict(_samples(), _obj(level="token", loss_type="dapo")), "either", ["level"],
                  check=_pred_ok()))
    return out


class _Tok:
    """A stand-in tokenizer whose vocabulary is the letters A-E (``convert_tokens_to_ids``, as transformers')."""

    vocab = {t: i for i, t in enumerate("ABCDE")}

    def convert_tokens_to_ids(self, token):
        return self.vocab.get(token)

    def get_vocab(self):
        return dict(self.vocab)

    def __len__(self):
        return len(self.vocab)


def probe_cases() -> list[dict]:
    G = "TRL probes and tracking callback"
    out = []

    def P(*a, **kw):
        from grpo_theory.integrations.trl import Probe
        return Probe(*a, **kw)
    for label, args, kw, want in [
            ("two answers, default other", ("Q", ("A", "B"), (1.0, 0.0)), {}, [1.0, 0.0, 0.0]),
            ("other_reward 0.5", ("Q", ("A", "B"), (1.0, 0.0)), dict(other_reward=0.5), [1.0, 0.0, 0.5]),
            ("three answers, rewards (0.2, 1, -1)", ("Q", ("A", "B", "C"), (0.2, 1.0, -1.0)), {}, [0.2, 1.0, -1.0, -1.0]),
            ("rewards as a list", ("Q", ["A", "B"], [1, 0]), {}, [1.0, 0.0, 0.0])]:
        k = len(want)
        pi = [1.0 / k] * k
        out.append(_c(G, f"Probe {label}: question(pi).expected_reward",
                      lambda args=args, kw=kw, pi=pi: P(*args, **kw).question(pi).expected_reward, "ok",
                      check=lambda tmp, res, w=want: np.allclose(np.asarray(res["value"], float), w)))
    bad = [
        ("answers and rewards of different lengths", ("Q", ("A", "B"), (1.0,)), {}, ["rewards"]),
        ("no answers", ("Q", (), ()), {}, ["answers"]),
        ("answers repeated", ("Q", ("A", "A"), (1.0, 0.0)), {}, ["A"]),
        ("a NaN reward", ("Q", ("A", "B"), (NAN, 0.0)), {}, ["rewards"]),
        ("other_reward inf", ("Q", ("A", "B"), (1.0, 0.0)), dict(other_reward=INF), ["other_reward"]),
        ("answers a string 'AB'", ("Q", "AB", (1.0, 0.0)), {}, ["answers"]),
        ("an empty answer ''", ("Q", ("", "B"), (1.0, 0.0)), {}, ["answers"]),
        ("a prompt that is None", (None, ("A", "B"), (1.0, 0.0)), {}, ["prompt"]),
        ("rewards as text", ("Q", ("A", "B"), ("1", "0")), {}, ["rewards"]),
    ]
    for label, args, kw, names in bad:
        out.append(_c(G, f"Probe {label}", lambda args=args, kw=kw: P(*args, **kw).question([0.3, 0.3, 0.4]), "error",
                      names))
    for label, pi, names in [("pi of 2 for 3 outputs", [0.5, 0.5], ["pi"]), ("pi not summing to 1", [0.3, 0.3, 0.3],
                                                                               ["pi"]),
                             ("pi with a negative", [1.2, -0.1, -0.1], ["pi"])]:
        out.append(_c(G, f"Probe.question {label}", lambda pi=pi: P("Q", ("A", "B"), (1.0, 0.0)).question(pi), "error",
                      names))

    def cb(**kw):
        from grpo_theory.integrations.trl import make_tracking_callback
        args = dict(probes=[P("Q", ("A", "B"), (1.0, 0.0))], tokenizer=_Tok(),
                    config={"beta": 0.1, "num_generations": 4})
        args.update(kw)
        return make_tracking_callback(**args)
    for label, kw, names in [("every=0", dict(every=0), ["every"]), ("every=-1", dict(every=-1), ["every"]),
                             ("every=2.5", dict(every=2.5), ["every"]), ("probes=[]", dict(probes=[]), ["probes"]),
                             ("probes of text", dict(probes=["Q"]), ["probes"]), ("config=None", dict(config=None),
                                                                                   ["config"]),
                             ("config with beta=-1", dict(config={"beta": -1.0, "num_generations": 4}), ["beta"]),
                             ("tokenizer=None", dict(tokenizer=None), ["tokenizer"]),
                             ("a probe answer that is not a token", dict(probes=[P("Q", ("A", "Zz"), (1.0, 0.0))]),
                              ["Zz"])]:
        out.append(_c(G, f"make_tracking_callback {label}", lambda kw=kw: cb(**kw), "error", names))
    return out
