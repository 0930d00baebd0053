"""Cases of the thirteenth hostile audit (issue 45), part two: sub-modules' public helpers no round called directly.

* :mod:`grpo_theory.integrations.cmdline` (``script_tokens``, ``hydra_overrides``, ``argparse_flags``,
  ``looks_like_command``, ``check_set``): wrong types, empty, huge and nested inputs;
* :mod:`grpo_theory.variants`: ``register`` / ``unregister`` / ``lookup`` / ``names`` / ``entries`` with entries
  made by the user (a copy of ``group`` under a new name must give Eq. 14; broken hooks must be refused cleanly);
* the predict sub-modules' public functions (``intervals``, ``conformal``, ``calibrate``, ``coupled``, ``clock``,
  ``response``, ``samples``, ``scoring``) with bad arguments, and their numbers against the reference;
* the studies package's public functions (``free_prompts``, ``free_scoring``, ``predictions``, ``trl_stationary``,
  ``free_more``) with bad arguments.

Tolerances. pass@k and the unbiased estimate: 1e-12 relative + 1e-14 absolute (a few roundings of numbers in
[0, 1]). Jeffreys quantiles (scipy's ``beta.ppf`` here) and Wilson's closed form: 1e-9 absolute (an inverse
incomplete beta solved to ~1e-12). ``sampling_floor`` by exact ``fsum`` over the binomial: 1e-12. The logit
shift by bisection to 1e-13: 1e-8 (the library's root finder's tolerance). A flow table's values (tabulated
flows, BDF at rtol ~1e-6, linear interpolation on 600 geometric times over [0, 1e4], spacing ratio ~1.6 %,
so an error of order (0.016 t)^2 |p''| / 8 < 1e-4 at the times used): 1e-3 absolute; a wrong field (a factor 2
in time, the wrong sign) moves these values by more than 1e-2.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import hostile_audit_round12_ref as ref
import hostile_audit_round13_ref as r13
from hostile_audit_fresh import ok_case as _ok
from hostile_audit_round11_api import _either, _err, _pi


def _logit(x):
    return math.log(x) - math.log1p(-x)


def _expit(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


# ---------------------------------------------------------------- integrations.cmdline
def cmdline_cases() -> list[dict]:
    from grpo_theory.integrations import cmdline as cl

    G_ = "API: integrations.cmdline helpers (wrong types, empty, huge, nested)"
    out = []
    for lab, args, kw, names in [
            ("script_tokens(None, 's.sh')", (None, "s.sh"), {}, ["text"]),
            ("script_tokens(123, 's.sh')", (123, "s.sh"), {}, ["text"]),
            ("script_tokens(b'python x a=1', 's.sh')", (b"python x a=1", "s.sh"), {}, ["text"]),
            ("script_tokens('python x a=1', None)", ("python x a=1", None), {}, ["source"]),
            ("script_tokens('python x a=1', 's.sh', marker=5)", ("python x a=1", "s.sh"), dict(marker=5), ["marker"]),
            ("script_tokens(\"python 'unterminated\", 's.sh')", ("python 'unterminated", "s.sh"), {}, ["s.sh"]),
            ]:
        out.append(_err(G_, lab, lambda args=args, kw=kw: cl.script_tokens(*args, **kw), names))
    # arithmetic that is not plain integers is kept as written (documented: refused where a reader reads it)
    for lab, expr in [("$((10**10**10))", "10**10**10"), ("$((1/0))", "1/0"),
                      ("$((__import__(\"os\").getpid()))", "__import__('os').getpid()"),
                      ("$((9 * 10 ** 5000))", "9 * 10 ** 5000"),
]:
        out.append(_either(G_, f"script_tokens('python x a={lab[:40]}', 's.sh'): kept as written",
                           lambda expr=expr: cl.script_tokens(f"python x a=$(({expr}))", "s.sh"),
                           lambda v, expr=expr: v[-1] == "a=$((" + "".join(expr.split()) + "))" or f"{v[-1][:80]!r}",
                           ["s.sh"]))
    deep = "python x a=$((" + "(" * 50000 + "1" + ")" * 50000 + "))"
    out.append(_either(G_, "script_tokens('python x a=$(((...50,000 parentheses...1...)))', 's.sh')",
                       lambda: cl.script_tokens(deep, "s.sh"), lambda v: isinstance(v, list), ["s.sh"]))
    for lab, text, want in [("''", "", []), ("'# only a comment'", "# only a comment\n", []),
                            ("'N=4\\npython x a=$N'", "N=4\npython x a=$N", ["python", "x", "a=4"]),
                            ("'python x a=${M:-7}'", "python x a=${M:-7}", ["python", "x", "a=7"]),
                            ("'python x \\\\\\n a=1' (a continued line)", "python x \\\n a=1", ["python", "x", "a=1"])]:
        out.append(_ok(G_, f"script_tokens({lab}, 's.sh')", lambda text=text: cl.script_tokens(text, "s.sh"),
                       lambda v, want=want: v == want or f"{v!r} != {want!r}"))
    out.append(_ok(G_, "script_tokens('python x a=$((2147483647 * 2147483647 % 1000003))', 's.sh')",
                   lambda: cl.script_tokens("python x a=$((2147483647 * 2147483647 % 1000003))", "s.sh"),
                   lambda v: v[-1] == f"a={2147483647 * 2147483647 % 1000003}" or f"{v[-1]!r}"))
    big = "python x " + " ".join(f"k{i}={i}" for i in range(100000))
    out.append(_either(G_, "script_tokens(a command of 100,002 tokens, 's.sh') (over MAX_TOKENS = 100,000)",
                       lambda: cl.script_tokens(big, "s.sh"), lambda v: len(v) == 100002 or f"{len(v)} tokens",
                       ["100,000"]))
    for lab, args, kw, names in [
            ("hydra_overrides('a.b=1', 's') (a str, not a list)", ("a.b=1", "s"), {}, ["tokens"]),
            ("hydra_overrides(None, 's')", (None, "s"), {}, ["tokens"]),
            ("hydra_overrides([1, 2], 's')", ([1, 2], "s"), {}, ["tokens"]),
            ("hydra_overrides([None], 's')", ([None], "s"), {}, ["tokens"]),
            ("hydra_overrides([b'a.b=1'], 's')", ([b"a.b=1"], "s"), {}, ["tokens"]),
            ("hydra_overrides([], 's')", ([], "s"), {}, ["s"]),
            ("hydra_overrides(['python3', '-m', 'x'], 's') (no override)", (["python3", "-m", "x"], "s"), {}, ["s"]),
            ("hydra_overrides(['a.b=1', 'stray'], 's')", (["a.b=1", "stray"], "s"), {}, ["stray"]),
            ("hydra_overrides(['actor.lr'], 's', sections=['actor'])", (["a.b=1", "actor.lr"], "s"),
             dict(sections=["actor"]), ["actor.lr"]),
            ("hydra_overrides(['a.b=1'], 's', sections=5)", (["a.b=1"], "s"), dict(sections=5), ["sections"]),
            ("hydra_overrides(['a.b=1'], None)", (["a.b=1"], None), {}, ["source"])]:
        out.append(_err(G_, lab, lambda args=args, kw=kw: cl.hydra_overrides(*args, **kw), names))
    for lab, toks, want in [("['a.b=1']", ["a.b=1"], {"a.b": 1}), ("['+a.b=x']", ["+a.b=x"], {"a.b": "x"}),
                            ("['++a=true']", ["++a=true"], {"a": True}), ("['a.b=1', '~a.b']", ["a.b=1", "~a.b"], {}),
                            ("['python3', '-m', 'v', 'a=0.5']", ["python3", "-m", "v", "a=0.5"], {"a": 0.5}),
                            ("['a=null']", ["a=null"], {"a": None}), ("['a=']", ["a="], None)]:
        chk = (lambda v, want=want: v == want or f"{v!r} != {want!r}") if want is not None else (lambda v: isinstance(v, dict))
        out.append(_ok(G_, f"hydra_overrides({lab}, 's')", lambda toks=toks: cl.hydra_overrides(toks, "s"), chk))
    out.append(_ok(G_, "hydra_overrides(100,000 overrides, 's')",
                   lambda: cl.hydra_overrides([f"k{i}={i}" for i in range(100000)], "s"),
                   lambda v: (len(v) == 100000 and v["k99999"] == 99999) or f"{len(v)} keys"))
    for lab, toks in [("['a.b=1', 'a.b=2'] (given twice)", ["a.b=1", "a.b=2"]), ("['a=1e999']", ["a=1e999"]),
                      ("['a=[1,2']", ["a=[1,2"]), ("['a.b=1'], sections='a'", None)]:
        if toks is None:
            out.append(_either(G_, f"hydra_overrides({lab})", lambda: cl.hydra_overrides(["a.b=1"], "s", sections="a"),
                               lambda v: v == {"a.b": 1} or f"{v}", ["sections"]))
            continue
        out.append(_either(G_, f"hydra_overrides({lab}, 's')", lambda toks=toks: cl.hydra_overrides(toks, "s"),
                           lambda v: isinstance(v, dict), [toks[-1].split("=")[0]]))
    for lab, args, kw, names in [
            ("argparse_flags('--x 1', 's') (a str)", ("--x 1", "s"), {}, ["tokens"]),
            ("argparse_flags(None, 's')", (None, "s"), {}, ["tokens"]),
            ("argparse_flags([3], 's')", ([3], "s"), {}, ["tokens"]),
            ("argparse_flags(['--x'], 's')", (["--x"], "s"), {}, ["x"]),
            ("argparse_flags(['prog', '--x', '1', 'stray'], 's')", (["prog", "--x", "1", "stray"], "s"), {}, ["stray"]),
            ("argparse_flags(['--x', '1'], 's', boolean='x')", (["--x", "1"], "s"), dict(boolean="x"), ["boolean"]),
            ("argparse_flags(['--x', '1'], 5)", (["--x", "1"], 5), {}, ["source"]),
            ("argparse_flags(['--=1'], 's')", (["--=1"], "s"), {}, ["--=1"])]:
        out.append(_err(G_, lab, lambda args=args, kw=kw: cl.argparse_flags(*args, **kw), names))
    for lab, toks, kw, want in [("['--x', '1']", ["--x", "1"], {}, {"x": 1}),
                                ("['--a-b=3']", ["--a-b=3"], {}, {"a_b": 3}),
                                ("['--x'], boolean={'x'}", ["--x"], dict(boolean=frozenset({"x"})), {"x": True}),
                                ("['prog', '--y', 'text']", ["prog", "--y", "text"], {}, {"y": "text"}),
                                ("['--x', '-1']", ["--x", "-1"], {}, {"x": -1}),
                                ("['--x', 'null']", ["--x", "null"], {}, {"x": None})]:
        out.append(_ok(G_, f"argparse_flags({lab}, 's')", lambda toks=toks, kw=kw: cl.argparse_flags(toks, "s", **kw),
                       lambda v, want=want: v == want or f"{v!r} != {want!r}"))
    for lab, toks in [("['--x', '1', '--x', '2'] (given twice)", ["--x", "1", "--x", "2"]),
                      ("['--x=']", ["--x="]), ("['--x', '1e400']", ["--x", "1e400"])]:
        out.append(_either(G_, f"argparse_flags({lab}, 's')", lambda toks=toks: cl.argparse_flags(toks, "s"),
                           lambda v: isinstance(v, dict), ["x"]))
    for lab, v, names in [("None", None, ["text"]), ("5", 5, ["text"]), ("b'python x'", b"python x", ["text"])]:
        out.append(_err(G_, f"looks_like_command({lab})", lambda v=v: cl.looks_like_command(v), names))
    for lab, v in [("''", ""), ("'python3 -m verl.trainer.main_ppo a=1'", "python3 -m verl.trainer.main_ppo a=1"),
                   ("'{\"beta\": 0}'", '{"beta": 0}'), ("10 MB of 'x'", "x" * 10_000_000),
                   ("'beta: 0\\nnum_generations: 4'", "beta: 0\nnum_generations: 4")]:
        out.append(_ok(G_, f"looks_like_command({lab})", lambda v=v: cl.looks_like_command(v),
                       lambda r: isinstance(r, bool) or f"{r!r}"))
    for lab, args, names in [
            ("check_set({'a': '$N'}, ['a'], 's')", ({"a": "$N"}, ["a"], "s"), ["$N", "a"]),
            ("check_set({'a': 'x${N}y'}, ['a'], 's')", ({"a": "x${N}y"}, ["a"], "s"), ["N", "a"]),
            ("check_set(None, ['a'], 's')", (None, ["a"], "s"), ["values"]),
            ("check_set({'a': '1'}, None, 's')", ({"a": "1"}, None, "s"), ["read"]),
            ("check_set({'a': '1'}, ['a'], None)", ({"a": "1"}, ["a"], None), ["source"])]:
        out.append(_err(G_, lab, lambda args=args: cl.check_set(*args), names))
    for lab, args in [("check_set({'a': '1'}, ['a'], 's')", ({"a": "1"}, ["a"], "s")),
                      ("check_set({'a': '$N'}, ['b'], 's') (not read)", ({"a": "$N"}, ["b"], "s")),
                      ("check_set({}, [], 's')", ({}, [], "s")),
                      ("check_set({'a': 5}, ['a'], 's')", ({"a": 5}, ["a"], "s"))]:
        out.append(_ok(G_, lab, lambda args=args: cl.check_set(*args), lambda v: v is None))
    out.append(_err(G_, "check_set({'kl': '$K'}, ['kl'], 's', shown={'kl': 'actor.kl_loss_coef'})",
                    lambda: cl.check_set({"kl": "$K"}, ["kl"], "s", shown={"kl": "actor.kl_loss_coef"}),
                    ["actor.kl_loss_coef", "$K"]))
    out.append(_either(G_, "check_set({'a': '$N'}, 'a', 's') (read given as a str)",
                       lambda: cl.check_set({"a": "$N"}, "a", "s"), lambda v: False, ["$N"]))
    return out


# ---------------------------------------------------------------- variants with the user's entries
def _with_entry(entry, then, replace=False):
    """Register ``entry``, return ``then()``, unregister it again (also on failure)."""
    from grpo_theory import variants as va

    va.register(entry, replace=replace)
    try:
        return then()
    finally:
        kind = next(k for k, c in va.KINDS.items() if isinstance(entry, c))
        if entry.name in va.names(kind):
            va.unregister(kind, entry.name)


def registry_cases() -> list[dict]:
    import dataclasses

    from grpo_theory import Objective, Question, stationary_policy
    from grpo_theory import variants as va

    G_ = "API: variants.register / unregister / lookup / names / entries with the user's entries"
    out = []
    group = va.lookup("advantage", "group")
    mine = dataclasses.replace(group, name="my_group", description="a copy of group")
    for p, beta in [(0.3, 0.5), (0.8, 0.1), (0.05, 2.0)]:
        x = 0.5 * (1 - beta + math.sqrt((1 - beta) ** 2 + 4 * beta * p))
        out.append(_ok(G_, f"register a copy of 'group' as 'my_group': stationary_policy p={p} beta={beta} = Eq. 14",
                       lambda p=p, beta=beta: _with_entry(mine, lambda: stationary_policy(
                           Question([p, 1 - p], rewards=[1, 0]), Objective(beta=beta, advantage="my_group"))),
                       lambda v, x=x: abs(float(_pi(v)[0]) - x) <= 1e-9 or f"x = {_pi(v)[0]}, Eq. 14 {x}"))
    out.append(_ok(G_, "register 'my_group': names('advantage') ends with it, entries() holds it; gone after",
                   lambda: (_with_entry(mine, lambda: (va.names("advantage"), va.entries("advantage"))),
                            va.names("advantage")),
                   lambda v: (v[0][0][-1] == "my_group" and v[0][1][-1].name == "my_group" and "my_group" not in v[1])
                   or f"{v[0][0]} / after: {v[1]}"))
    out.append(_ok(G_, "register 'my_group' with replace=True twice", lambda: _with_entry(
        mine, lambda: va.register(mine, replace=True).name), lambda v: v == "my_group"))
    out.append(_err(G_, "register 'my_group' twice without replace", lambda: _with_entry(mine, lambda: va.register(mine)),
                    ["my_group"]))
    out.append(_err(G_, "register the built-in 'group' again (no replace)", lambda: va.register(group), ["group"]))
    for lab, ent, names in [("name ''", dataclasses.replace(group, name=""), ["name"]),
                            ("name 5", dataclasses.replace(group, name=5), ["name"]),
                            ("name None", dataclasses.replace(group, name=None), ["name"]),
                            ("name 'my group' (a space)", dataclasses.replace(group, name="my group"), ["my group"]),
                            ("expectations=None", dataclasses.replace(group, name="my_none", expectations=None),
                             ["expectations"]),
                            ("bound='not callable'", dataclasses.replace(group, name="my_bound", bound=42),
                             ["bound"])]:
        out.append(_err(G_, f"register an advantage with {lab}", lambda ent=ent: _with_entry(ent, lambda: "registered"),
                        names))
    for lab, obj, names in [("object()", object(), ["object"]), ("None", None, ["None"]), ("a dict", {"name": "x"}, ["dict"]),
                            ("the class AdvantageEstimator", va.AdvantageEstimator, ["AdvantageEstimator"])]:
        out.append(_err(G_, f"register({lab})", lambda obj=obj: va.register(obj), names))
    out.append(_err(G_, "register(mine, replace='yes')", lambda: _with_entry(mine, lambda: None, replace="yes"),
                    ["replace"]))

    def nan_expectations(v, log_w, obj, *, part="mean", max_count_vectors=3_000_000):
        return np.full(np.broadcast_shapes(np.shape(log_w)), np.nan)
    nan_adv = dataclasses.replace(group, name="my_nan", expectations=nan_expectations)
    out.append(_err(G_, "a user advantage whose expectations are NaN: stationary_policy",
                    lambda: _with_entry(nan_adv, lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                                                          Objective(beta=0.5, advantage="my_nan"))),
                    ["nan"]))

    def raising(v, log_w, obj, *, part="mean", max_count_vectors=3_000_000):
        raise ZeroDivisionError("user hook failed")
    bad_adv = dataclasses.replace(group, name="my_raise", expectations=raising)
    out.append(_either(G_, "a user advantage whose expectations raise ZeroDivisionError: stationary_policy",
                       lambda: _with_entry(bad_adv, lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                                                             Objective(beta=0.5, advantage="my_raise"))),
                       lambda v: False, ["my_raise"]))
    lazy = dataclasses.replace(group, name="my_lazy", expectations="no_such_module_xyz:fn")
    out.append(_err(G_, "a user advantage with expectations 'no_such_module_xyz:fn': stationary_policy",
                    lambda: _with_entry(lazy, lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                                                       Objective(beta=0.5, advantage="my_lazy"))),
                    ["no_such_module_xyz"]))
    out.append(_err(G_, "Objective(advantage='my_group') after unregistering it",
                    lambda: (_with_entry(mine, lambda: None), Objective(beta=0.5, advantage="my_group")), ["my_group"]))
    reg = va.lookup("regime", "reverse")
    my_reg = dataclasses.replace(reg, name="my_regime")
    out.append(_ok(G_, "register a Regime 'my_regime': lookup returns it, names lists it",
                   lambda: _with_entry(my_reg, lambda: (va.lookup("regime", "my_regime").name, va.names("regime"))),
                   lambda v: (v[0] == "my_regime" and "my_regime" in v[1]) or f"{v}"))
    out.append(_err(G_, "note_penalty('my_regime') while registered (not one of the note's two)",
                    lambda: _with_entry(my_reg, lambda: va.note_penalty("my_regime")), ["my_regime"]))
    for lab, fn, names in [
            ("lookup('advantage', 5)", lambda: va.lookup("advantage", 5), ["5"]),
            ("lookup('advantage', None)", lambda: va.lookup("advantage", None), ["None"]),
            ("lookup('advantage', 'GROUP')", lambda: va.lookup("advantage", "GROUP"), ["GROUP"]),
            ("lookup('advantages', 'group')", lambda: va.lookup("advantages", "group"), ["advantages"]),
            ("lookup(5, 'group')", lambda: va.lookup(5, "group"), ["5"]),
            ("lookup('advantage', '')", lambda: va.lookup("advantage", ""), ["advantage"]),
            ("lookup('advantage', 'x' * 100000)", lambda: va.lookup("advantage", "x" * 100000), ["advantage"]),
            ("names(5)", lambda: va.names(5), ["5"]), ("names('')", lambda: va.names(""), ["kind"]),
            ("names('Advantage')", lambda: va.names("Advantage"), ["Advantage"]),
            ("entries(None)", lambda: va.entries(None), ["None"]),
            ("entries('regimes')", lambda: va.entries("regimes"), ["regimes"]),
            ("unregister('advantage', 'nope')", lambda: va.unregister("advantage", "nope"), ["nope"]),
            ("unregister(None, 'group')", lambda: va.unregister(None, "group"), ["None"]),
            ("unregister('advantage', 5)", lambda: va.unregister("advantage", 5), ["5"]),
            ("note_penalty(5)", lambda: va.note_penalty(5), ["5"]),
            ("note_penalty('none')", lambda: va.note_penalty("none"), ["none"])]:
        out.append(_err(G_, f"variants.{lab}", fn, names))
    for kind in ("advantage", "normalization", "kl_estimator", "kl_placement", "regime", "level", "importance_level",
                 "aggregation"):
        out.append(_ok(G_, f"variants.entries('{kind}') match names('{kind}') and lookup",
                       lambda kind=kind: (va.entries(kind), va.names(kind)),
                       lambda v, kind=kind: (tuple(e.name for e in v[0]) == v[1] and len(v[1]) >= 2
                                             and all(va.lookup(kind, n).name == n for n in v[1])) or f"{v[1]}"))
    return out


def builtin_unregister_cases() -> list[dict]:
    """Unregistering a built-in entry (the last cases of the run: the entry is put back if it went)."""
    from grpo_theory import variants as va

    G_ = "API: variants.register / unregister / lookup / names / entries with the user's entries"

    def try_unregister(kind, name):
        entry = va.lookup(kind, name)
        va.unregister(kind, name)
        va.register(entry)            # put back: the rest of the process needs it
        return "removed a built-in entry"
    return [_err(G_, f"unregister('{k}', '{n}') (a built-in entry)", lambda k=k, n=n: try_unregister(k, n), [n])
            for k, n in (("advantage", "group"), ("regime", "reverse"))]


# ---------------------------------------------------------------- predict sub-modules
def predict_helper_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.predict import calibrate as ca
    from grpo_theory.predict import conformal as co
    from grpo_theory.predict import coupled as cp
    from grpo_theory.predict import intervals as iv
    from grpo_theory.predict import response as rs
    from grpo_theory.predict import samples as sa
    from grpo_theory.predict import scoring as sc
    from grpo_theory.predict.clock import fit_clock, flow_table
    from grpo_theory.predict.field import PromptField

    G_ = "API: predict sub-modules' public functions (bad arguments; numbers against the reference)"
    out = []

    def near(a, b, rel=1e-12, ab=1e-14):
        return abs(float(a) - b) <= rel * abs(b) + ab
    for x in (0.0, 0.7, 1.0, 1e-300, 1 - 2 ** -52):
        for k in (1, 8, 10 ** 6):
            want = r13.pass_at_k(x, k)
            out.append(_ok(G_, f"intervals.pass_at_k({x!r}, {k}) = 1 - (1 - x)^k",
                           lambda x=x, k=k: iv.pass_at_k(x, k),
                           lambda v, want=want: near(np.ravel(v)[0], want) or f"{v} != {want}"))
    for lab, args, names in [("(1.5, 2)", (1.5, 2), ["1.5"]), ("(-0.1, 2)", (-0.1, 2), ["-0.1"]),
                             ("(inf, 2)", (math.inf, 2), ["inf"]), ("(0.3, inf)", (0.3, math.inf), ["k", "inf"]),
                             ("(0.3, 1e20)", (0.3, 1e20), ["k"]), ("(0.3, True)", (0.3, True), ["k", "True"]),
                             ("('0.3', 2)", ("0.3", 2), ["0.3"]), ("(0.3, [])", (0.3, []), ["k"])]:
        out.append(_err(G_, f"intervals.pass_at_k{lab}", lambda args=args: iv.pass_at_k(*args), names))
    for n, c, k in [(10, 3, 1), (10, 3, 5), (10, 0, 3), (10, 10, 3), (100, 50, 100), (1000, 1, 999), (64, 7, 8),
                    (2 ** 40, 1, 1)]:
        want = r13.unbiased_pass_at_k(n, c, k)
        out.append(_ok(G_, f"intervals.unbiased_pass_at_k({n}, {c}, {k}) = 1 - C(n - c, k)/C(n, k)",
                       lambda n=n, c=c, k=k: iv.unbiased_pass_at_k(n, c, k),
                       lambda v, want=want: near(np.ravel(v)[0], want) or f"{v} != {want}"))
    for lab, args, names in [("(5, 6, 1) (correct > n)", (5, 6, 1), ["6"]), ("([], [], 1)", ([], [], 1), ["n"]),
                             ("(5, nan, 1)", (5, math.nan, 1), ["nan"]), ("(5.5, 2, 1)", (5.5, 2, 1), ["5.5"]),
                             ("(5, 2, [1, 2]) (k a list)", (5, 2, [1, 2]), ["k"])]:
        out.append(_err(G_, f"intervals.unbiased_pass_at_k{lab}", lambda args=args: iv.unbiased_pass_at_k(*args), names))
    out.append(_ok(G_, "intervals.unbiased_pass_at_k([4, 8], [1, 1], 6) (k > n for the first): [nan, 0.75]",
                   lambda: iv.unbiased_pass_at_k([4, 8], [1, 1], 6),
                   lambda v: (bool(np.isnan(np.ravel(v)[0])) and near(np.ravel(v)[1], r13.unbiased_pass_at_k(8, 1, 6)))
                   or f"{v}"))
    for c, n, level in [(3, 10, 0.95), (1, 2, 0.9), (50, 100, 0.99), (7, 1000, 0.95), (999, 1000, 0.5), (1, 128, 0.8)]:
        lo, hi = r13.jeffreys(c, n, level)
        out.append(_ok(G_, f"intervals.binomial_interval({c}, {n}, level={level}) Jeffreys",
                       lambda c=c, n=n, level=level: iv.binomial_interval(c, n, level=level),
                       lambda v, lo=lo, hi=hi: (abs(float(np.ravel(v[0])[0]) - lo) < 1e-9
                                                and abs(float(np.ravel(v[1])[0]) - hi) < 1e-9)
                       or f"{v} != ({lo}, {hi})"))
    from statistics import NormalDist
    for c, n, level in [(3, 10, 0.95), (0, 20, 0.9), (20, 20, 0.9), (12, 37, 0.99)]:
        # two-sided, one-sided at c = 0 or c = n (documented): z at level there, not at (1 + level)/2
        z = NormalDist().inv_cdf(0.5 + level / 2) if 0 < c < n else NormalDist().inv_cdf(level)
        cen = (c + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * math.sqrt(c * (n - c) / n + z * z / 4)
        if c == 0:
            cen, half = (cen + half) / 2, (cen + half) / 2          # [0, upper]
        elif c == n:
            cen, half = (1 + cen - half) / 2, (1 - cen + half) / 2  # [lower, 1]
        out.append(_ok(G_, f"intervals.binomial_interval({c}, {n}, level={level}, method='wilson')",
                       lambda c=c, n=n, level=level: iv.binomial_interval(c, n, level=level, method="wilson"),
                       lambda v, a=cen - half, b=cen + half: (abs(float(np.ravel(v[0])[0]) - max(a, 0)) < 1e-9
                                                             and abs(float(np.ravel(v[1])[0]) - min(b, 1)) < 1e-9)
                       or f"{v} != ({a}, {b})"))
    for lab, args, kw, names in [("(3, 10, level=1.5)", (3, 10), dict(level=1.5), ["level"]),
                                 ("(3, 10, level=-0.5)", (3, 10), dict(level=-0.5), ["level"]),
                                 ("(3, 10, method='exact')", (3, 10), dict(method="exact"), ["exact"]),
                                 ("(12, 11)", (12, 11), {}, ["12"]), ("(0, 0)", (0, 0), {}, ["0"]),
                                 ("(nan, 10)", (math.nan, 10), {}, ["nan"]),
                                 ("([1, 2], [3])", ([1, 2], [3]), {}, ["correct"])]:
        out.append(_err(G_, f"intervals.binomial_interval{lab}", lambda args=args, kw=kw: iv.binomial_interval(*args, **kw),
                        names))
    for lab, k, names in [("0", 0, ["0"]), ("'8'", "8", ["8"]), ("True", True, ["True"]), ("-3", -3, ["-3"]),
                          ("[1, 2.5]", [1, 2.5], ["2.5"]), ("[]", [], ["k"]), ("None", None, ["k"])]:
        out.append(_err(G_, f"intervals.check_k({lab})", lambda k=k: iv.check_k(k), names))
    out.append(_ok(G_, "intervals.check_k(np.int64(3))", lambda: iv.check_k(np.int64(3)), lambda v: v == (3,)))
    out.append(_ok(G_, "intervals.check_k([8, 1], name='ks')", lambda: iv.check_k([8, 1], name="ks"),
                   lambda v: v == (8, 1)))
    out.append(_err(G_, "intervals.check_k(0, name='my_k') names my_k", lambda: iv.check_k(0, name="my_k"), ["my_k"]))
    for k, m in [(0, 10), (10, 10), (3, 7), (0, 1), (500, 1000)]:
        want = math.log((k + 0.5) / (m - k + 0.5))
        out.append(_ok(G_, f"conformal.jeffreys_logit({k}, {m}) = logit((k + 1/2)/(m + 1))",
                       lambda k=k, m=m: co.jeffreys_logit(k, m),
                       lambda v, want=want: abs(float(np.ravel(v)[0]) - want) < 1e-12 or f"{v} != {want}"))
    for lab, args, names in [("(5, 3) (k > m)", (5, 3), ["5"]), ("(-1, 3)", (-1, 3), ["-1"]),
                             ("(nan, 3)", (math.nan, 3), ["nan"]), ("([1, 2], [3])", ([1, 2], [3]), ["k"])]:
        out.append(_err(G_, f"conformal.jeffreys_logit{lab}", lambda args=args: co.jeffreys_logit(*args), names))
    out.append(_ok(G_, "conformal.calibration_split(10)", lambda: co.calibration_split(10),
                   lambda v: (len(v) == 10 and v.dtype == bool and v.any() and not v.all()) or f"{v}"))
    for lab, args, kw, names in [("(1)", (1,), {}, ["size", "1"]), ("(0)", (0,), {}, ["size", "0"]),
                                 ("(2.5)", (2.5,), {}, ["size", "2.5"]), ("(10, fraction=0)", (10,), dict(fraction=0.0),
                                                                          ["fraction"]),
                                 ("(10, fraction=1)", (10,), dict(fraction=1.0), ["fraction"]),
                                 ("(10, fraction=nan)", (10,), dict(fraction=math.nan), ["fraction"]),
                                 ("(10, seed=-1)", (10,), dict(seed=-1), ["seed"]),
                                 ("(10**12)", (10 ** 12,), {}, ["size"]), ("('10')", ("10",), {}, ["size"])]:
        out.append(_err(G_, f"conformal.calibration_split{lab}", lambda args=args, kw=kw: co.calibration_split(*args, **kw),
                        names))
    for lab, args, kw, names in [("(p_pred=[0.5], k=[1, 2], m=[4, 4])", ([0.5], [1, 2], [4, 4]), {}, ["p_pred"]),
                                 ("([0.5, 0.4], [1, 2], [4, 4], level=1.5)", ([0.5, 0.4], [1, 2], [4, 4]),
                                  dict(level=1.5), ["level"]),
                                 ("([], [], [])", ([], [], []), {}, ["p_pred"]),
                                 ("([1.5, 0.4], [1, 2], [4, 4])", ([1.5, 0.4], [1, 2], [4, 4]), {}, ["1.5"])]:
        out.append(_err(G_, f"conformal.conformal_offsets{lab}",
                        lambda args=args, kw=kw: co.conformal_offsets(*args, **kw), names))
    for n, c in [(10, 3), (10, 0), (10, 10), (1, 1), (1000, 999)]:
        want = _logit(c / n) if 0 < c < n else _logit((c + 0.5) / (n + 1))
        out.append(_ok(G_, f"calibrate.start_logits({n}, {c})", lambda n=n, c=c: ca.start_logits([n], [c]),
                       lambda v, want=want: abs(float(np.ravel(v)[0]) - want) < 1e-12 or f"{v} != {want}"))
    for lab, args, names in [("([5], [6])", ([5], [6]), ["6"]), ("([0], [0])", ([0], [0]), ["0"]),
                             ("([5, 6], [1])", ([5, 6], [1]), ["correct"]), ("([5.5], [1])", ([5.5], [1]), ["5.5"])]:
        out.append(_err(G_, f"calibrate.start_logits{lab}", lambda args=args: ca.start_logits(*args), names))
    # the logit shift: sum_j k_j - m_j expit(z0_j + c) = 0, by bisection here
    for z0, k, m in [([0.0, 0.0], [1, 2], [2, 4]), ([0.0, 1.0], [3, 5], [4, 10]), ([-2.0, 0.5, 1.5], [1, 6, 9], [8, 8, 10])]:
        lo, hi = -50.0, 50.0
        for _ in range(200):
            mid = (lo + hi) / 2
            f = sum(kk - mm * _expit(z + mid) for z, kk, mm in zip(z0, k, m))
            lo, hi = (mid, hi) if f > 0 else (lo, mid)
        want = (lo + hi) / 2
        out.append(_ok(G_, f"calibrate.fit_shift({z0}, {k}, {m})", lambda z0=z0, k=k, m=m: ca.fit_shift(z0, k, m),
                       lambda v, want=want: abs(float(v) - want) < 1e-8 or f"{v} != {want}"))
    for lab, args, names in [("([0.0], [1.5], [2]) (k not whole)", ([0.0], [1.5], [2]), ["1.5"]),
                             ("([0.0, 1.0], [1], [2])", ([0.0, 1.0], [1], [2]), ["z0"]),
                             ("([], [], [])", ([], [], []), ["z0"]), ("([nan], [1], [2])", ([math.nan], [1], [2]), ["nan"])]:
        out.append(_err(G_, f"calibrate.fit_shift{lab}", lambda args=args: ca.fit_shift(*args), names))
    out.append(_ok(G_, "calibrate.clock_from_mean_reward([0, 1, 2], [[0.2], [0.4], [0.6]], 0.5) = 1.5",
                   lambda: ca.clock_from_mean_reward([0.0, 1.0, 2.0], [[0.2], [0.4], [0.6]], 0.5),
                   lambda v: abs(float(v) - 1.5) < 1e-12 or f"{v}"))
    for lab, args, names in [("(..., 0.9) (never reached)", ([0.0, 1.0, 2.0], [[0.2], [0.4], [0.6]], 0.9), ["0.9"]),
                             ("(times decreasing)", ([2.0, 1.0, 0.0], [[0.2], [0.4], [0.6]], 0.5), ["times"]),
                             ("(shapes differ)", ([0.0, 1.0], [[0.2], [0.4], [0.6]], 0.5), ["p_path"]),
                             ("(mean_reward nan)", ([0.0, 1.0, 2.0], [[0.2], [0.4], [0.6]], math.nan), ["nan"])]:
        out.append(_err(G_, f"calibrate.clock_from_mean_reward{lab}", lambda args=args: ca.clock_from_mean_reward(*args),
                        names))
    for lab, args, names in [("(t_lo 2 > t_hi 1)", ([0.0, 1.0, 2.0], [[0.2], [0.4], [0.6]], 2.0, 1.0), ["t_lo"]),
                             ("(t_lo -1)", ([0.0, 1.0, 2.0], [[0.2], [0.4], [0.6]], -1.0, 1.0), ["t_lo"])]:
        out.append(_err(G_, f"calibrate.clock_band{lab}", lambda args=args: ca.clock_band(*args), names))
    out.append(_ok(G_, "calibrate.clock_band([0, 1, 2], [[0.2], [0.4], [0.6]], 0.5, 1.5) = ([0.3], [0.5])",
                   lambda: ca.clock_band([0.0, 1.0, 2.0], [[0.2], [0.4], [0.6]], 0.5, 1.5),
                   lambda v: (abs(float(np.ravel(v[0])[0]) - 0.3) < 1e-12 and abs(float(np.ravel(v[1])[0]) - 0.5) < 1e-12)
                   or f"{v}"))
    for t_max, n, t_min in [(1e4, 200, 1e-3), (10.0, 3, 0.1), (1.0, 1, 1.0)]:
        def chk(v, t_max=t_max, n=n, t_min=t_min):
            v = np.asarray(v, float)
            if v.size != n + 1 or v[0] != 0:
                return f"{v.size} times, first {v[0]}"
            if abs(v[1] - t_min) > 1e-12 * t_min or abs(v[-1] - t_max) > 1e-12 * t_max:
                return f"ends {v[1]}, {v[-1]}"
            r = v[2:] / v[1:-1]
            return bool(r.size == 0 or np.allclose(r, r[0], rtol=1e-9)) or "not geometric"
        out.append(_ok(G_, f"coupled.time_grid(t_max={t_max}, n={n}, t_min={t_min})",
                       lambda t_max=t_max, n=n, t_min=t_min: cp.time_grid(t_max, n, t_min), chk))
    for lab, kw, names in [("t_max=-1", dict(t_max=-1.0), ["t_max"]), ("n=0", dict(n=0), ["n"]),
                           ("t_min=0", dict(t_min=0.0), ["t_min"]), ("t_min=5, t_max=1", dict(t_min=5.0, t_max=1.0),
                                                                      ["t_min"]),
                           ("t_max=inf", dict(t_max=math.inf), ["t_max"]), ("n=2.5", dict(n=2.5), ["n"]),
                           ("n=10**10", dict(n=10 ** 10), ["n"])]:
        out.append(_err(G_, f"coupled.time_grid({lab})", lambda kw=kw: cp.time_grid(**kw), names))
    out.append(_ok(G_, "coupled.check_kernel(2 I, 3) = I (mean diagonal 1)", lambda: cp.check_kernel(2 * np.eye(3), 3),
                   lambda v: bool(np.allclose(v, np.eye(3), atol=1e-15)) or f"{v}"))
    for lab, K, n, names in [("non-symmetric", [[1.0, 0.5], [0.0, 1.0]], 2, ["symmetric"]),
                             ("not PSD", [[1.0, 2.0], [2.0, 1.0]], 2, ["semi"]),
                             ("n mismatch", np.eye(3), 2, ["3"]), ("zero diagonal", np.zeros((2, 2)), 2, ["diag"]),
                             ("NaN entry", [[1.0, math.nan], [math.nan, 1.0]], 2, ["nan"]),
                             ("1-D", [1.0, 1.0], 2, ["K"])]:
        out.append(_err(G_, f"coupled.check_kernel({lab})", lambda K=K, n=n: cp.check_kernel(K, n), names))
    out.append(_err(G_, "coupled.shift_stationary(PromptField(Objective(beta=0), [0.2, 0.5]))",
                    lambda: cp.shift_stationary(PromptField(Objective(beta=0), [0.2, 0.5])), ["unregularised"]))
    for lab, r, names in [("[0, 1]", [0, 1], ["rewards"]), ("[1, 1]", [1, 1], ["rewards"]),
                          ("[1, nan]", [1, math.nan], ["nan"]), ("[1]", [1], ["rewards"]), ("[1, 0, 0]", [1, 0, 0],
                                                                                          ["rewards"]),
                          ("'10'", "10", ["rewards"])]:
        out.append(_err(G_, f"response.binary_rewards({lab})", lambda r=r: rs.binary_rewards(r), names))
    out.append(_ok(G_, "response.binary_rewards((2, -1))", lambda: rs.binary_rewards((2, -1)),
                   lambda v: list(v) == [2.0, -1.0] or f"{v}"))
    for lab, p, names in [("True", True, ["p", "True"]), ("None", None, ["p"]), ("0.3j", 0.3j, ["p"])]:
        out.append(_err(G_, f"response.binary_question({lab})", lambda p=p: rs.binary_question(p), names))
    for lab, p in [("0.0", 0.0), ("1.0", 1.0)]:
        out.append(_either(G_, f"response.binary_question({lab}) (a vertex)", lambda p=p: rs.binary_question(p),
                           lambda v, p=p: bool(np.allclose(_pi(v.pi_ref), [p, 1 - p])) or f"{v}", ["p"]))
    out.append(_either(G_, "response.zero_limit(Objective(beta=0))", lambda: rs.zero_limit(Objective(beta=0)),
                       lambda v: float(v) == 1.0 or f"x(0+) = {v} at beta = 0 (the flow rises to 1)", ["unregularised"]))
    for lab, args, names in [("(index=[0, 5], k=[1, 1], m=[2, 2], N=3)", ([0, 5], [1, 1], [2, 2], 3), ["5"]),
                             ("([0], [3], [2], 3) (k > m)", ([0], [3], [2], 3), ["3"]),
                             ("([0], [1], [2], 0)", ([0], [1], [2], 0), ["N"]),
                             ("([0, 0], [1, 1], [2, 2], 3) (index twice)", ([0, 0], [1, 1], [2, 2], 3), ["0"])]:
        out.append(_err(G_, f"samples.check_counts{lab}", lambda args=args: sa.check_counts(*args), names))
    for q, m in [([0.3], [10]), ([0.5, 0.1], [4, 100]), ([0.0, 1.0], [5, 5]), ([0.77], [1]), ([0.3, 0.4], [10])]:
        if len(m) < len(q):
            m = m * len(q)                    # one m for all (documented)
        want = math.fsum(math.fsum(math.comb(mm, j) * qq ** j * (1 - qq) ** (mm - j) * abs(j / mm - qq)
                                   for j in range(mm + 1)) for qq, mm in zip(q, m)) / len(q)
        out.append(_ok(G_, f"scoring.sampling_floor({q}, {m})", lambda q=q, m=m: sc.sampling_floor(q, m),
                       lambda v, want=want: abs(float(v) - want) < 1e-12 or f"{v} != {want}"))
    for lab, args, names in [("([0.3], [2.5])", ([0.3], [2.5]), ["2.5"]), ("([0.3], [0])", ([0.3], [0]), ["m"]),
                             ("([0.3, 0.4], [10, 10, 10])", ([0.3, 0.4], [10, 10, 10]), ["q"]),
                             ("([0.3], [10**9])", ([0.3], [10 ** 9]), ["m"])]:
        out.append(_err(G_, f"scoring.sampling_floor{lab}", lambda args=args: sc.sampling_floor(*args), names))
    # flow tables at beta = 0 (the finite-time path): each prompt's own flow, against the reference
    starts = [0.2, 0.45, 0.7]
    for t in (0.5, 2.0, 5.0):
        want = [ref.finite_flow([p], [p], 0.0, t, n_steps=4000)[0] for p in starts]
        out.append(_ok(G_, f"clock.flow_table({starts}, Objective(beta=0)).at(starts, {t})",
                       lambda t=t: flow_table(starts, Objective(beta=0)).at(starts, t),
                       lambda v, want=want: bool(np.max(np.abs(np.asarray(v) - want)) < 1e-3) or f"{v} != {want}"))

    def fitted(clock_and_table):
        clock, table = clock_and_table
        got = float(np.mean(table.at(starts, clock * 100)))
        return abs(got - 0.75) < 1e-4 or f"mean P at the fitted clock {got}, not 0.75"
    out.append(_ok(G_, "clock.fit_clock(flow_table(beta=0), step=100, mean_reward=0.75): the mean is reproduced",
                   lambda: (lambda tb: (fit_clock(tb, starts, step=100, mean_reward=0.75), tb))(
                       flow_table(starts, Objective(beta=0))), fitted))
    for lab, args, kw, names in [("([1.5], beta=0)", ([1.5],), {}, ["1.5"]), ("([0.3], t_max=0)", ([0.3],), dict(t_max=0.0),
                                                                          ["t_max"]),
                                 ("([0.3], n_times=1)", ([0.3],), dict(n_times=1), ["n_times"]),
                                 ("([], beta=0)", ([],), {}, ["starts"]), ("([nan])", ([math.nan],), {}, ["nan"])]:
        out.append(_err(G_, f"clock.flow_table{lab}", lambda args=args, kw=kw: flow_table(*args, Objective(beta=0), **kw),
                        names))
    out.append(_err(G_, "clock.fit_clock(flow_table(beta=0), mean_reward=1.5)",
                    lambda: fit_clock(flow_table(starts, Objective(beta=0)), starts, step=100, mean_reward=1.5),
                    ["1.5"]))
    out.append(_err(G_, "clock.fit_clock(flow_table(beta=0), step=-5)",
                    lambda: fit_clock(flow_table(starts, Objective(beta=0)), starts, step=-5, mean_reward=0.6), ["-5"]))
    return out


# ---------------------------------------------------------------- studies package
def studies_cases() -> list[dict]:
    from grpo_theory import Objective
    from grpo_theory.studies import free_prompts as fp
    from grpo_theory.studies import free_scoring as fs
    from grpo_theory.studies import predictions as sp
    from grpo_theory.studies import trl_stationary as ts

    G_ = "API: the studies package's public functions (bad arguments)"
    out = []
    for lab, v, names in [("None", None, ["text"]), ("5", 5, ["text"]), ("b'No'", b"No", ["text"])]:
        out.append(_err(G_, f"free_prompts.normalise({lab})", lambda v=v: fp.normalise(v), names))
    for lab, v, want in [("'No, the sun is hot'", "No, the sun is hot", "no"), ("'  ...Paris!!'", "  ...Paris!!", "paris"),
                         ("'x' * 10**7", "x" * 10 ** 7, "x" * 10 ** 7)]:
        out.append(_ok(G_, f"free_prompts.normalise({lab})", lambda v=v: fp.normalise(v),
                       lambda r, want=want: r == want or f"{r[:40]!r}"))
    out.append(_either(G_, "free_prompts.normalise('')", lambda: fp.normalise(""), lambda r: r == "", ["text"]))
    for lab, args, kw, names in [("([1, 2, 3], n=10, n_keep=5) (more than there are)", ([1, 2, 3], 10, 5), {}, ["n_keep"]),
                                 ("([1, 2], n=0, n_keep=1)", ([1, 2], 0, 1), {}, ["n"]),
                                 ("([11, 2], n=10, n_keep=1)", ([11, 2], 10, 1), {}, ["11"]),
                                 ("([1, 2], n=10, n_keep=1, p_range=(0.9, 0.1))", ([1, 2], 10, 1),
                                  dict(p_range=(0.9, 0.1)), ["p_range"]),
                                 ("([1, 2], n=10, n_keep=1.5)", ([1, 2], 10, 1.5), {}, ["n_keep"]),
                                 ("([1, 2], n=10, n_keep=1, p_range=(0, 1))", ([1, 2], 10, 1), dict(p_range=(0.0, 1.0)),
                                  ["p_range"])]:
        out.append(_err(G_, f"free_prompts.select_prompts{lab}",
                        lambda args=args, kw=kw: fp.select_prompts(*args, **kw), names))
    for lab, kw, names in [("candidates=(0.0, 1.0)", dict(candidates=(0.0, 1.0)), ["0"]),
                           ("candidates=()", dict(candidates=()), ["candidates"]),
                           ("candidates=(1.0,)", dict(candidates=(1.0,)), ["candidates"]),
                           ("min_diff=-1", dict(min_diff=-1.0), ["min_diff"]),
                           ("group_size=1", dict(group_size=1), ["group_size"]),
                           ("penalty='forward'", dict(penalty="forward"), ["forward"]),
                           ("candidates=(nan, 1.0)", dict(candidates=(math.nan, 1.0)), ["nan"])]:
        out.append(_err(G_, f"free_prompts.choose_betas([0.3, 0.5], {lab})",
                        lambda kw=kw: fp.choose_betas([0.3, 0.5], **kw), names))
    out.append(_err(G_, "free_prompts.choose_betas([], ...)", lambda: fp.choose_betas([]), ["p_ref"]))
    for pr, ms in [([0.2, 0.5], [0.5, 0.8]), ([0.1, 0.3, 0.6], [0.2, 0.2, 0.9]), ([0.5], [0.25])]:
        lo, hi = -30.0, 30.0
        for _ in range(300):
            a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            fa = sum((_expit(_logit(p) + a) - m) ** 2 for p, m in zip(pr, ms))
            fb = sum((_expit(_logit(p) + b) - m) ** 2 for p, m in zip(pr, ms))
            lo, hi = (lo, b) if fa < fb else (a, hi)
        want = (lo + hi) / 2
        out.append(_ok(G_, f"free_scoring.fit_shift({pr}, {ms}) (least squares in P)",
                       lambda pr=pr, ms=ms: fs.fit_shift(pr, ms),
                       lambda v, want=want: abs(float(v) - want) < 1e-5 or f"{v} != {want}"))
    for lab, args, names in [("([0.2], [1.5])", ([0.2], [1.5]), ["1.5"]), ("([0.2, 0.3], [0.5])", ([0.2, 0.3], [0.5]),
                                                                        ["measured"]),
                             ("([], [])", ([], []), ["p_ref"]), ("([nan], [0.5])", ([math.nan], [0.5]), ["nan"])]:
        out.append(_err(G_, f"free_scoring.fit_shift{lab}", lambda args=args: fs.fit_shift(*args), names))
    for lab, args, names in [("([[0.3, 0.7]], [[1]])", ([[0.3, 0.7]], [[1]]), ["rewards"]),
                             ("([[0.0, 0.0]], [[1, 0]])", ([[0.0, 0.0]], [[1, 0]]), ["reference_probs"]),
                             ("([[-0.3, 1.3]], [[1, 0]])", ([[-0.3, 1.3]], [[1, 0]]), ["-0.3"]),
                             ("([[nan, 1]], [[1, 0]])", ([[math.nan, 1.0]], [[1, 0]]), ["nan"]),
                             ("([[0.3, 0.7], [0.5]], ...) ragged", ([[0.3, 0.7], [0.5]], [[1, 0], [1]]),
                              ["reference_probs"])]:
        out.append(_err(G_, f"predictions.study_questions{lab}", lambda args=args: sp.study_questions(*args), names))
    out.append(_ok(G_, "predictions.study_questions([[3, 7]], [[1, 0]]): renormalised to (0.3, 0.7)",
                   lambda: sp.study_questions([[3.0, 7.0]], [[1, 0]]),
                   lambda v: bool(np.allclose(_pi(v[0].pi_ref), [0.3, 0.7], atol=1e-15)) or f"{v}"))
    out.append(_ok(G_, "predictions.stationary_x([0.3], Objective(beta=0.5)) = Eq. 14",
                   lambda: sp.stationary_x([0.3], Objective(beta=0.5)),
                   lambda v: abs(float(np.ravel(v)[0]) - 0.5 * (0.5 + math.sqrt(0.25 + 0.6))) < 1e-9 or f"{v}"))
    for lab, v, names in [("None", None, ["run_dir"]), ("5", 5, ["run_dir"])]:
        out.append(_err(G_, f"trl_stationary.newest_checkpoint({lab})", lambda v=v: ts.newest_checkpoint(v), names))

    def ckpts(names):
        def call():
            for n in names:
                Path("run", n).mkdir(parents=True, exist_ok=True)
            return ts.newest_checkpoint("run")
        return call
    out.append(_ok(G_, "trl_stationary.newest_checkpoint(run with checkpoint-9, checkpoint-10, checkpoint-abc)",
                   ckpts(["checkpoint-9", "checkpoint-10", "checkpoint-abc"]),
                   lambda v: (v is not None and Path(v).name == "checkpoint-10") or f"{v}"))
    out.append(_ok(G_, "trl_stationary.newest_checkpoint(run with only checkpoint-abc) = None",
                   ckpts(["checkpoint-abc"]), lambda v: v is None or f"{v}"))
    out.append(_either(G_, "trl_stationary.newest_checkpoint('no_such_folder')",
                       lambda: ts.newest_checkpoint("no_such_folder"), lambda v: v is None, ["no_such_folder"]))
    out.append(_err(G_, "trl_stationary.progress('no_such_folder')", lambda: ts.progress("no_such_folder"),
                    ["no_such_folder"]))
    out.append(_err(G_, "trl_stationary.progress(an empty folder)",
                    lambda: (Path("empty").mkdir(), ts.progress("empty"))[1], ["empty"]))
    return out


def all_helper_cases() -> list[dict]:
    return cmdline_cases() + registry_cases() + predict_helper_cases() + studies_cases()
