"""The command line's contract, option by option: every subcommand, every option, every hostile value.

The subcommands and their options are read from the parser itself (``build_parser()``'s subparsers and their
actions), so a new option is covered without a change here. Each subcommand has a valid minimal command line
(:data:`BASE`, with the files it reads written into a fresh folder per call); for each option each value of
:data:`VALUES` (numbers and text) and :data:`FILE_VALUES` (paths to hostile files) is substituted in turn, in
each of the option's value positions, and each option taking a value is given twice. The contract for every call:

* exit 0 with a correct result (``solve``'s policies sum to 1 and its RLHF row is the log pooling computed
  here; ``predict``'s folder is complete and its probabilities lie in [0, 1]; JSON that parses; ...), or
* exit 2 with ONE line on stderr, ``grpo-theory: error: ...``, naming the option (or the file), the
  offending value and what was expected, with no Python exception name in it;
* for an option given twice, the last value counts (argparse's rule): exit 0 with the result of the option
  given once with that value, or exit 2 naming the option;
* never a traceback, never another exit code (but ``derivations --check``'s verdict, exit 1 with one line
  naming the file: missing or stale), never more than :data:`CPU_S` seconds of CPU, and never a
  half-written output: after a refusal no temporary file is left and an output folder is absent, empty or
  marked incomplete.

The commands that train, draw or unpack (``validate``'s studies, ``figures``, ``fetch-model``) and the sympy
derivations are replaced by stubs after their argument checks; ``sweep`` runs its cases in this process. The
default run takes a seeded sample of the calls; ``-m slow`` runs them all.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from _cpu_limit import CpuLimit as _CpuLimit  # the CPU limit shared with tests/api_contract.py
from _cpu_limit import cpu_limit as _cpu_limit

from grpo_theory import cli

CPU_S = 30

#: Values substituted for every option (as text on the command line).
VALUES = ["", "nan", "inf", "-inf", "-1", "0", "1e400", "1e-400", "99999999999999999999", "abc", "0x10", "1_000",
          "  3", "3.0", "0.5", "-0", "1e-310", "+Infinity", "1,5", "\u0663", "1e308", "\t"]
#: Hostile files, by name; each is given with the suffix of the option's kind of file (``bom.csv`` to a samples
#: option, ``bom.json`` to a TRL config), so that it reaches the reader (written by :func:`_hostile_file`).
FILE_VALUES = ["missing", "folder", "empty", "binary", "bom", "latin1", "big", "deep", "dupcols", "norows",
               "above_n", "n_zero"]
SUFFIX = {"samples": ".csv", "grid": ".yaml", "trl": ".json", "kernel": ".npy", "trained": ".csv", "wheel": ".whl",
          "verl": ".yaml", "openrlhf": ".json"}
#: The other trainers' readers: each hostile file also goes to ``explain CONFIG --framework F`` and to
#: ``predict --framework F CONFIG`` (the walk gives those files to TRL's reader).
READERS = ("verl", "openrlhf")

#: What each file-reading value position holds: (subcommand, option or positional dest, position) -> kind.
FILE_KIND = {("predict", "samples", 0): "samples", ("predict", "--measured", 0): "samples",
             ("predict", "--framework", 1): "trl", ("predict", "--kernel", 0): "kernel",
             ("sweep", "grid", 0): "grid", ("explain", "config", 0): "trl", ("figures", "--trained", 0): "trained",
             ("fetch-model", "--wheel", 0): "wheel"}

SAMPLES = "prompt_id,n,correct\na,10,3\nb,8,0\nc,5,5\n"
GOOD = {"samples": SAMPLES, "grid": "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n",
        "trl": '{"beta": 0.04, "num_generations": 4}\n', "trained": "G,beta,p_ref,p_final\n2,0.5,0.3,0.7\n",
        "wheel": "not a wheel\n",
        "verl": "algorithm: {adv_estimator: grpo}\nactor_rollout_ref: {rollout: {n: 4}, actor: {use_kl_loss: true, "
                "kl_loss_coef: 0.1, kl_loss_type: low_var_kl}}\n",
        "openrlhf": '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.1}\n'}

#: A valid minimal command line per subcommand (inputs by file name, written into the call's folder).
BASE = {
    "solve": ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"],
    "figures": ["--out", "figs"],
    "validate": ["--study", "small", "--out", "runs"],
    "fetch-model": ["--dest", "model"],
    "sweep": ["grid.yaml", "--out", "sweep.csv", "--no-progress"],
    "explain": ["config.json", "--framework", "trl"],
    "derivations": ["--out", "derivations.md"],
    "predict": ["samples.csv", "--beta", "0.5", "--out", "out", "--no-plots", "--no-progress"],
}

#: Options that need others (added to the base) or replace some of it: (subcommand, option) -> (add, drop).
NEEDS = {
    ("solve", "--reward-levels"): (["--reward-probs", "0.2", "0.8", "0.6", "0.4"], ["--rewards"]),
    ("solve", "--reward-probs"): (["--reward-levels", "0", "1"], ["--rewards"]),
    ("solve", "--preference"): ([], ["--rewards"]),
    ("explain", "--pi-ref"): (["--rewards", "1", "0"], []),
    ("explain", "--rewards"): (["--pi-ref", "0.3", "0.7"], []),
    ("predict", "--framework"): ([], ["--beta"]),
    ("predict", "--trl-version"): (["--framework", "trl", "config.json"], ["--beta"]),
    ("predict", "--sample-temperature"): (["--framework", "trl", "config.json"], ["--beta"]),
    ("predict", "--slow-tol"): (["--steps", "100", "--clock", "0.01"], []),
    ("predict", "--steps"): (["--clock", "0.01"], []),
    **{("predict", o): (["--measured", "measured.csv"], []) for o in ("--holdout", "--kernel", "--rhos",
                                                                      "--finite-level", "--seed")},
}


def _validate_study(option: str) -> str:
    """The study that reads ``validate``'s ``option`` (the CLI refuses an option the chosen study ignores)."""
    return cli._READ_BY.get(option, ("small",))[0]


def subcommands() -> dict:
    """``{name: subparser}`` from the parser itself."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def actions(subparser) -> list:
    """Every option and positional of a subcommand but ``--help``."""
    return [a for a in subparser._actions if not isinstance(a, argparse._HelpAction)]


def _name(action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def _arity(action) -> int:
    """How many values the option takes on the command line in these tests (``+`` and ``*``: one)."""
    if action.nargs == 0:
        return 0
    return action.nargs if isinstance(action.nargs, int) else 1


def _drop(argv: list, option: str, subparser) -> list:
    """``argv`` without ``option`` and its values."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == option:
            i += 1
            while i < len(argv) and not argv[i].startswith("--"):
                i += 1
            continue
        out.append(argv[i])
        i += 1
    return out


def command(cmd: str, action, values: list) -> list:
    """The base command line of ``cmd`` with ``action`` given ``values`` (and what it needs)."""
    sub = SUBS[cmd]
    name = _name(action)
    argv = list(BASE[cmd])
    if cmd == "validate":
        argv[1] = _validate_study(name)
    add, drop = NEEDS.get((cmd, name), ([], []))
    for opt in drop:
        argv = _drop(argv, opt, sub)
    if not action.option_strings:                       # the positional: the first token
        return [cmd, *values, *argv[1:], *add]
    argv = _drop(argv, name, sub)
    for opt in add:
        if opt.startswith("--"):
            argv = _drop(argv, opt, sub)
    return [cmd, *argv, *add, name, *values]


SUBS = subcommands()


def _good_value(cmd: str, action, pos: int) -> str:
    """A value the option takes at position ``pos`` in the base command line (read from the base, else from the
    option's choices, else a small number)."""
    name = _name(action)
    argv = BASE[cmd]
    if action.option_strings and name in argv and argv.index(name) + 1 + pos < len(argv):
        return argv[argv.index(name) + 1 + pos]
    kind = FILE_KIND.get((cmd, name, pos))
    if kind:
        return {"samples": "samples.csv", "grid": "grid.yaml", "trl": "config.json", "kernel": "kernel.npy",
                "trained": "trained.csv", "wheel": "wheel.whl"}[kind]
    if (cmd, name) == ("predict", "--framework"):
        return "trl"
    if action.choices:
        return str(list(action.choices)[-1])
    return {"--fit": ["50", "0.6"][pos] if pos < 2 else "1", "--measured": "measured.csv",
            "--trl-version": "0.19.0", "--kl-estimator": "k3", "--model-dir": "model",
            "--trainable": "last-mlp", "--results": "results",
            "--id-column": "prompt_id"}.get(name, "0.5" if pos else "1")


#: Valid value lists of options that take several values and are not in the base command line.
GOOD_LISTS = {("explain", "--pi-ref"): ["0.3", "0.7"], ("explain", "--rewards"): ["1", "0"],
              ("solve", "--reward-levels"): ["0", "1"], ("solve", "--reward-probs"): ["0.2", "0.8", "0.6", "0.4"],
              ("solve", "--preference"): ["0.5", "0.7", "0.3", "0.5"], ("predict", "--k"): ["1", "8"],
              ("predict", "--steps"): ["10", "100"], ("predict", "--tradeoff-betas"): ["0.1", "1"],
              ("predict", "--levels"): ["0", "1"], ("predict", "--rhos"): ["0", "0.5"]}


def _good_values(cmd: str, action) -> list:
    """The option's valid values: its values in the base command line, else :data:`GOOD_LISTS`, else one valid
    value per position (a hostile value replaces one of them, so the rest of the line stays valid)."""
    name, argv = _name(action), BASE[cmd]
    if action.nargs == "+" and action.option_strings and name in argv:
        i = argv.index(name) + 1
        j = next((k for k in range(i, len(argv)) if argv[k].startswith("--")), len(argv))
        return argv[i:j]
    if (cmd, name) in GOOD_LISTS:
        return list(GOOD_LISTS[(cmd, name)])
    return [_good_value(cmd, action, p) for p in range(max(_arity(action), 1))]


_Q = "questions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"
_DEEP = "[" * 100_000 + "]" * 100_000
#: Hostile contents per kind of file: (file name, text, expected exit: 0, 2, or None for either). A content that
#: is plainly invalid must be refused (2); one that is valid, read (0).
CONTENTS = {
    "samples": [
        ("c_reward_nan.csv", "prompt_id,reward\na,1\na,nan\nb,0\nb,1\n", None),
        ("c_reward_inf.csv", "prompt_id,reward\na,inf\na,0\nb,1\nb,0\n", 2),
        ("c_levels_twice.csv", "prompt_id,count_1,count_1.0\na,3,4\n", 2),
        ("c_level_nan.csv", "prompt_id,count_nan,count_1\na,3,5\n", 2),
        ("c_count_negative.csv", "prompt_id,n,correct\na,10,-1\n", 2),
        ("c_count_1e20.csv", "prompt_id,n,correct\na,1e20,3e19\n", 2),
        ("c_count_fraction.csv", "prompt_id,n,correct\na,10,2.5\n", 2),
        ("c_prompt_twice.csv", "prompt_id,n,correct\na,10,3\na,8,1\n", 2),
        ("c_ragged.csv", "prompt_id,n,correct\na,10\n", 2), ("c_semicolons.csv", "prompt_id;n;correct\na;10;3\n", 2),
        ("c_two_layouts.csv", "prompt_id,n,correct,reward\na,10,3,1\n", 2),
        ("c_crlf.csv", "prompt_id,n,correct\r\na,10,3\r\nb,8,0\r\n", 0),
        ("c_deep.jsonl", '{"prompt_id": "a", "reward": ' + _DEEP + "}\n", 2),
        ("c_key_twice.jsonl", '{"prompt_id": "a", "reward": 1, "reward": 0}\n', 2),
        ("c_not_object.jsonl", "[1, 2]\n", 2),
    ],
    "trl": [
        ("c_key_twice.json", '{"beta": 0.1, "beta": 0.2}', 2), ("c_beta_text.json", '{"beta": "0.1"}', 2),
        ("c_beta_nan.json", '{"beta": NaN}', 2), ("c_beta_negative.json", '{"beta": -1}', 2),
        ("c_beta_object.json", '{"beta": {"a": 1}}', 2),
        ("c_generations_1e20.json", '{"beta": 0.1, "num_generations": 1e20}', 2),
        ("c_loss_type.json", '{"beta": 0.1, "loss_type": "grop"}', 2), ("c_list_of_numbers.json", "[1, 2]", 2),
        ("c_string.json", '"beta"', 2),
    ],
    "verl": [(name, ("{}: {{actor: {{use_kl_loss: true, kl_loss_coef: {}}}}}\n".format(*fields) if len(fields) == 2
                     else fields[0]), expect) for name, fields, expect in [
        ("c_typo.yaml", ("actr_rollout_ref", "0.2"), None), ("c_coef_negative.yaml", ("actor_rollout_ref", "-1"), 2),
        ("c_coef_text.yaml", ("actor_rollout_ref", "1e-3"), 2),
        ("c_key_twice.yaml", ("algorithm: {adv_estimator: grpo}\nalgorithm: {adv_estimator: rloo}\n",), 2),
        ("c_n_zero.yaml", ("algorithm: {adv_estimator: grpo}\nactor_rollout_ref: {rollout: {n: 0}}\n",), 2)]],
    "openrlhf": [
        ("c_flag_without_value.json", '["--init_kl_coef"]', 2), ("c_text_bool.json", '{"use_kl_loss": "maybe"}', 2),
        ("c_samples_zero.json", '{"n_samples_per_prompt": 0}', 2), ("c_coef_negative.json", '{"init_kl_coef": -1}', 2),
    ],
    "grid": [
        ("c_beta_empty.yaml", "objectives: {beta: []}\n" + _Q, 2),
        ("c_simplex_1e17.yaml", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, "
                                "0.2, 0.1], step: 0.01}\n", 2),
        ("c_simplex_500k.yaml", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.5, 0], step: 0.001}\n", 2),
        ("c_group_1e9.yaml", "objectives: {beta: 0.5, group_size: 1000000000}\n" + _Q, 2),
        ("c_beta_text.yaml", "objectives: {beta: 1e300}\n" + _Q, 0),      # a grid reads YAML's text numbers
        ("c_beta_nan.yaml", "objectives: {beta: .nan}\n" + _Q, 2),
        ("c_pi_ref_sum.yaml", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.3], rewards: [1, 0]}]\n", 2),
        ("c_unknown_key.yaml", "objectivs: {beta: 0.5}\n" + _Q, 2),
        ("c_key_twice.yaml", "objectives: {beta: 0.5}\nobjectives: {beta: 1}\n" + _Q, 2),
    ],
}
EXPECT = {name: expect for rows in CONTENTS.values() for name, _, expect in rows}
_TEXT = {(kind, name): text for kind, rows in CONTENTS.items() for name, text, _ in rows}


def calls() -> list:
    """Every (subcommand, option, argv, value, substituted position) of the product."""
    out = []
    for cmd, sub in SUBS.items():
        for action in actions(sub):
            name = _name(action)
            n = _arity(action)
            good = _good_values(cmd, action)
            if n == 0:
                out.append((cmd, name, command(cmd, action, []) + [name], None, None))
                continue
            for pos in range(n):
                suffix = SUFFIX.get(FILE_KIND.get((cmd, name, pos)), ".csv")
                for v in VALUES + [stem + suffix for stem in FILE_VALUES]:
                    vals = list(good)
                    vals[pos] = v
                    out.append((cmd, name, command(cmd, action, vals), v, pos))
            if action.option_strings:                   # given twice: first another value, then the good one
                first = list(good)
                if action.choices:
                    first[0] = next(str(c) for c in action.choices if str(c) != good[0])
                elif not FILE_KIND.get((cmd, name, 0)) and (cmd, name) != ("predict", "--framework"):
                    first[0] = "2"
                twice = command(cmd, action, first) + [name, *good]
                out.append((cmd, name, twice, "twice", command(cmd, action, good)))
    for framework in READERS:
        for v in [stem + SUFFIX[framework] for stem in FILE_VALUES]:
            out.append(("explain", "config", ["explain", v, "--framework", framework], v, framework))
            out.append(("predict", "--framework", ["predict", *BASE["predict"][3:], "samples.csv", "--framework",
                                                   framework, v], v, framework))
    for (cmd, name, pos), kind in FILE_KIND.items():            # each reader's hostile contents
        for v, _, _ in CONTENTS.get(kind, ()):
            out.append((cmd, name, command(cmd, _action(cmd, name), _with(_good_values(cmd, _action(cmd, name)),
                                                                           pos, v)), v, pos))
    for framework in READERS:
        for v, _, _ in CONTENTS[framework]:
            out.append(("explain", "config", ["explain", v, "--framework", framework], v, framework))
            out.append(("predict", "--framework", ["predict", *BASE["predict"][3:], "samples.csv", "--framework",
                                                   framework, v], v, framework))
    return out


def _action(cmd: str, name: str):
    return next(a for a in actions(SUBS[cmd]) if _name(a) == name)


def _with(values: list, pos: int, value: str) -> list:
    out = list(values)
    out[pos] = value
    return out


CALLS = calls()


# ------------------------------------------------------------------------------------------------ the files

def _is_file_value(value) -> bool:
    return value in EXPECT or (isinstance(value, str) and Path(value).stem in FILE_VALUES
                               and Path(value).suffix in SUFFIX.values())


def _write_files(tmp: Path) -> None:
    (tmp / "samples.csv").write_text(SAMPLES, encoding="utf-8")
    (tmp / "measured.csv").write_text("prompt_id,n,correct\na,10,7\nb,8,2\nc,5,5\n", encoding="utf-8")
    (tmp / "grid.yaml").write_text(GOOD["grid"], encoding="utf-8")
    (tmp / "config.json").write_text(GOOD["trl"], encoding="utf-8")
    (tmp / "trained.csv").write_text(GOOD["trained"], encoding="utf-8")
    (tmp / "wheel.whl").write_text(GOOD["wheel"], encoding="utf-8")
    np.save(tmp / "kernel.npy", np.eye(3))


def _hostile_file(tmp: Path, cmd: str, name: str, pos, value) -> None:
    """Write the hostile file ``value`` names (its stem says what it holds). The BOM and latin-1 files hold the
    option's own kind of content, valid but for the encoding."""
    if not _is_file_value(value):
        return
    path, stem = tmp / value, Path(value).stem
    kind = pos if pos in READERS else FILE_KIND.get((cmd, name, pos), "samples")
    if (kind, value) in _TEXT:
        path.write_text(_TEXT[(kind, value)], encoding="utf-8")
        return
    text = GOOD.get(kind, SAMPLES)
    latin = {"samples": SAMPLES.replace("a,10,3", "\u00e9t\u00e9,10,3"), "grid": "# caf\u00e9\n" + text,
             "trl": '{"beta": 0.04, "num_generations": 4, "output_dir": "caf\u00e9"}\n', "verl": "# caf\u00e9\n" + text,
             "openrlhf": text.replace("}", ', "save_path": "caf\u00e9"}')}.get(kind, "caf\u00e9\n" + text)
    if stem == "folder":
        path.mkdir()
    elif stem == "big":
        path.touch()
        os.truncate(path, 50 * 2**20)          # 50 MB of NUL bytes, sparse: cheap to make
    elif stem != "missing":
        path.write_bytes({
            "empty": b"", "binary": bytes(range(256)) * 4, "bom": b"\xef\xbb\xbf" + text.encode("utf-8"),
            "latin1": latin.encode("latin-1"),
            "deep": ("[" * 100_000 + "]" * 100_000 + "\n").encode(),          # JSON and YAML, 10^5 deep
            "dupcols": b"prompt_id,n,correct,n\na,10,3,10\n", "norows": b"prompt_id,n,correct\n",
            "above_n": b"prompt_id,n,correct\na,10,12\nb,8,0\n", "n_zero": b"prompt_id,n,correct\na,0,0\nb,8,3\n",
        }[stem])


# ------------------------------------------------------------------------------------------------ the stubs

def _module(name: str, **attrs):
    import types

    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


@pytest.fixture
def stubs(monkeypatch):
    """Training, drawing, unpacking and sympy replaced by stub modules (the CLI's checks, before, still run;
    nothing heavy is imported); sweep serial, in this process."""
    import sys

    import pandas as pd

    import grpo_theory.sweep as sweep_module

    monkeypatch.setattr(cli, "_run_study", lambda args: (pd.DataFrame({"study": [args.study]}), ""))
    monkeypatch.setitem(sys.modules, "grpo_theory.figures", _module("grpo_theory.figures",
                                                                    build_figures=lambda **kw: None))
    monkeypatch.setitem(sys.modules, "grpo_theory.symbolic", _module(
        "grpo_theory.symbolic", all_derivations=lambda: [], all_identities=lambda: [],
        render_markdown=lambda: "# derivations\n"))
    monkeypatch.setitem(sys.modules, "grpo_theory.training.smollm", _module(
        "grpo_theory.training.smollm", fetch_model=lambda dest, wheel=None: dest))
    real_sweep = sweep_module.sweep
    monkeypatch.setattr(cli, "sweep", lambda cases, **kw: real_sweep(
        cases, out=kw.get("out"), executor="serial", progress=False))

    class _Cluster(contextlib.nullcontext):
        def __init__(self, *a, **kw):
            super().__init__(self)

        def get_executor(self):
            return None

    monkeypatch.setitem(sys.modules, "dask.distributed", _module("dask.distributed", LocalCluster=_Cluster,
                                                                 Client=_Cluster))




def run_call(tmp: Path, argv: list) -> tuple[object, str, str]:
    """``main(argv)`` in folder ``tmp`` under a CPU limit: (exit code, or "cpu", or the traceback's line; stdout;
    stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(tmp), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with _cpu_limit(CPU_S):
                rc = cli.main(argv)
        except SystemExit as exc:
            rc = exc.code
        except _CpuLimit:
            rc = "cpu"
        except Exception as exc:                # noqa: BLE001 - a traceback: reported by the contract
            rc = f"traceback {type(exc).__name__}: {exc}"[:300]
    return rc, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------------------------ the contract

_EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|Traceback")
_EXPECTED = re.compile(r"expect|must|give|use |limit|need|only|not |no such|empty|twice|save it|instead|above|"
                       r"below|between|at least|at most|should|one of|invalid|choose", re.I)


def _names_value(line: str, value: str) -> bool:
    if _is_file_value(value):
        return value in line
    text = value.strip()
    if not text:
        return "''" in line or '""' in line or "empty" in line or (bool(value) and repr(value) in line)
    if re.search(r"(?<![\w.])" + re.escape(text) + r"(?![\w.])", line):
        return True
    try:                                        # the same number written another way: -1 as -1.0
        number = float(text)
    except ValueError:
        return False
    shown = {float(t.replace(",", "")) for t in _NUMBER.findall(line)}
    return number in shown or (math.isnan(number) and "nan" in line.lower())


_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+\.?\d*(?:e[-+]?\d+)?|inf)", re.I)


def _names_option(line: str, cmd: str, name: str, value) -> bool:
    sub = SUBS[cmd]
    action = next(a for a in actions(sub) if _name(a) == name)
    names = list(action.option_strings) + [action.dest, action.dest.replace("_", "-")]
    if action.metavar:
        names += [action.metavar] if isinstance(action.metavar, str) else list(action.metavar)
    return any(n in line for n in names) or (_is_file_value(value) and value in line)


def _last(argv: list, option: str) -> int:
    """The index of the last ``option`` in ``argv`` (argparse keeps the last of an option given twice)."""
    return len(argv) - 1 - argv[::-1].index(option)


def _floats_after(argv: list, option: str) -> list:
    i = _last(argv, option) + 1
    out = []
    while i < len(argv) and not argv[i].startswith("--"):
        out.append(float(argv[i]))
        i += 1
    return out


def _check_result(tmp: Path, cmd: str, argv: list, stdout: str) -> None:
    """What a successful call must have produced (computed here, not by the code under test)."""
    if cmd == "solve":
        if "--json" in argv:
            rows = [r["pi"] for r in json.loads(stdout)["rows"] if r["pi"] is not None]
        else:
            k = len(_floats_after(argv, "--pi-ref"))
            rows = [[float(x) for x in re.findall(r"-?\d+\.\d{6}", ln)[:k]] for ln in stdout.splitlines()
                    if ln.startswith(("GRPO", "RLHF", "NLHF")) and "n/a" not in ln]
        assert rows, stdout
        for pi in rows:
            assert all(0 <= p <= 1 for p in pi) and math.isclose(sum(pi), 1, abs_tol=1e-5), (pi, stdout)
        if "--rewards" in argv and "--json" not in argv:
            pi_ref, r = np.array(_floats_after(argv, "--pi-ref")), np.array(_floats_after(argv, "--rewards"))
            beta = _floats_after(argv, "--beta")[0]
            w = np.log(pi_ref) + (r - r.max()) / beta
            pool = np.exp(w - w.max()) / np.exp(w - w.max()).sum()
            line = next(ln for ln in stdout.splitlines() if ln.startswith("RLHF"))
            got = [float(x) for x in re.findall(r"-?\d+\.\d{6}", line)[:len(pool)]]
            assert np.allclose(got, pool, atol=2e-6), (got, pool)
    elif cmd == "predict":
        folder = tmp / argv[_last(argv, "--out") + 1]
        assert (folder / "predictions.csv").is_file() and (folder / "summary.json").is_file(), stdout
        assert not (folder / ".incomplete").exists()
        import pandas as pd

        table = pd.read_csv(folder / "predictions.csv")
        for col in ("p_ref", "pred"):
            assert table[col].between(0, 1).all(), table[col]
        json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    elif cmd == "explain" and "--json" in argv:
        json.loads(stdout)
    elif cmd == "explain":
        assert stdout.strip(), stdout
    elif cmd == "sweep":
        import pandas as pd

        name = argv[_last(argv, "--out") + 1]
        table = pd.read_csv(tmp / name)
        assert len(table) >= 1 and table.n_stable.ge(1).all(), table
    elif cmd == "derivations":
        path = tmp / argv[_last(argv, "--out") + 1]
        assert path.read_text(encoding="utf-8") == "# derivations\n"


def _same_as_once(tmp: Path, cmd: str, argv: list, once: list, stdout: str) -> str | None:
    """Why a call with an option given twice differs from the call with it given once (its last value)."""
    alone = tmp / "once"
    alone.mkdir()
    _write_files(alone)
    rc, out, err = run_call(alone, once)
    if rc != 0:
        return f"harness: the option given once fails ({rc}): {err[-200:]!r}"
    if cmd == "predict":
        folder = argv[_last(argv, "--out") + 1]
        same = (tmp / folder / "predictions.csv").read_bytes() == (alone / folder / "predictions.csv").read_bytes()
    else:
        same = out == stdout
    return None if same else "wrong: given twice, the result is not that of the last value given once"


def _output_paths(tmp: Path, argv: list) -> list:
    return [tmp / argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--out", "--dest")]


def check_contract(tmp: Path, case) -> tuple[object, str | None]:
    """Run one call: its exit code, and None when it keeps the contract, else what broke (a class: the first
    word)."""
    cmd, name, argv, value, pos = case            # pos: for "twice", the command line with the option once
    _write_files(tmp)
    _hostile_file(tmp, cmd, name, pos, value)
    before = {p: p.exists() for p in _output_paths(tmp, argv)}
    rc, stdout, stderr = run_call(tmp, argv)
    lines = [ln for ln in stderr.splitlines() if ln.strip() and "%|" not in ln]
    if rc == "cpu":
        return rc, f"hang: more than {CPU_S} s of CPU"
    if isinstance(rc, str):
        return rc, rc
    if EXPECT.get(value) is not None and rc in (0, 2) and rc != EXPECT[value]:
        return rc, f"wrong: {value} expected exit {EXPECT[value]}, got {rc}: {(stderr or stdout)[-300:]!r}"
    if rc == 0:
        if "Traceback" in stderr:
            return rc, f"traceback (exit 0): {stderr[-300:]}"
        try:
            _check_result(tmp, cmd, argv, stdout)
        except Exception as exc:                # noqa: BLE001
            return rc, f"wrong: {type(exc).__name__} {str(exc)[:300]}"
        if value == "twice":                    # the last one counts: the same result as the option given once
            return rc, _same_as_once(tmp, cmd, argv, pos, stdout)
        return rc, None
    if rc == 1 and cmd == "derivations" and "--check" in argv:     # the check's verdict: missing or stale
        ok = len(lines) == 1 and not _EXCEPTION_NAME.search(lines[0]) and argv[_last(argv, "--out") + 1] in lines[0]
        return rc, None if ok else f"exit 1: {stderr[-300:]!r}"
    if rc != 2:
        return rc, f"exit {rc}: {stderr[-300:]!r}"
    if len(lines) != 1 or not lines[0].startswith("grpo-theory: error: "):
        return rc, f"lines: {len(lines)} line(s) on stderr: {stderr[-300:]!r}"
    line = lines[0]
    if _EXCEPTION_NAME.search(line):
        return rc, f"exception-name: {line}"
    for p in tmp.rglob("*"):
        if ".tmp" in p.name:
            return rc, f"half-written: {p.relative_to(tmp)} left behind; {line}"
    for p, existed in before.items():
        if not existed and p.is_dir() and any(p.iterdir()) and not (p / ".incomplete").exists():
            return rc, f"half-written: {p.name} holds {sorted(x.name for x in p.iterdir())}; {line}"
        if not existed and p.is_file():
            return rc, f"half-written: {p.name} written; {line}"
    if value == "twice":
        return rc, None if _names_option(line, cmd, name, None) else f"unnamed-option: {line}"
    if not _names_option(line, cmd, name, value):
        return rc, f"unnamed-option: {line}"
    if value is not None and not _names_value(line, value):
        return rc, f"unnamed-value: {line}"
    if not _EXPECTED.search(line):
        return rc, f"no-expectation: {line}"
    return rc, None


def _id(case) -> str:
    cmd, name, _argv, value, pos = case
    where = f"[{pos}]" if (isinstance(pos, int) and pos) or pos in READERS else ""
    return f"{cmd}:{name}{where}={value!r}"


#: The default run's seeded sample of the product.
#: Seconds of CPU each, in the full product only: G = 1,000 on the exact path, and two predictions with the KL in
#: the reward (its flow is the slowest of the placements).
_COSTLY = {("solve", "--group-size", "1_000"), ("predict", "--group-size", "1_000"),
           ("predict", "--kl-placement", "twice")}
SAMPLE = random.Random(45).sample([c for c in CALLS if (c[0], c[1], c[3]) not in _COSTLY], 40)


@pytest.mark.parametrize("case", SAMPLE, ids=_id)
def test_cli_contract_sample(tmp_path, stubs, case):
    """A seeded sample of 40 calls of the product keeps the contract."""
    _, why = check_contract(tmp_path, case)
    assert why is None, (case[2], why)


@pytest.mark.slow
@pytest.mark.parametrize("case", CALLS, ids=_id)
def test_cli_contract_all(tmp_path, stubs, case):
    """Every call of the product keeps the contract (``GRPO_CONTRACT_LOG=FILE``: one line per call, for the counts
    in docs/reliability.md)."""
    rc, why = check_contract(tmp_path, case)
    if os.environ.get("GRPO_CONTRACT_LOG"):
        with open(os.environ["GRPO_CONTRACT_LOG"], "a", encoding="utf-8") as fh:
            fh.write("\t".join([_id(case), f"ok (exit {rc})" if why is None else why.split(":")[0], repr(why),
                                repr(case[2])]) + "\n")
    assert why is None, (case[2], why)


def test_every_option_is_covered():
    """Each option of each subcommand appears in the product with every value (a check of the walk itself)."""
    seen = {(c[0], c[1]) for c in CALLS}
    for cmd, sub in SUBS.items():
        for action in actions(sub):
            assert (cmd, _name(action)) in seen
    assert len(SUBS) == 8 and sum(len(actions(s)) for s in SUBS.values()) > 60


#: The sweep's findings, one call each (the full product runs under ``-m slow`` only): (argv, names the line must
#: hold). Files: s.csv (counts), k.npy (empty), big.csv (1 MB of NUL bytes), c.json and g.json (TRL configs).
FOUND = [
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--measured", "s.csv", "--kernel", "k.npy"],
     ["--kernel", "k.npy", "empty"]),                                   # was EOFError
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--measured", "s.csv", "--kernel", "c.json"],
     ["--kernel", "c.json", ".npy"]),                                   # was "pickled (object) data"
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--measured", "s.csv", "--kernel", ""],
     ["--kernel", "''"]),                                               # was ignored: no kernel
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--kl-estimator", ""],
     ["--kl-estimator", "''"]),                                         # was k3
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--levels", "5", "7"],
     ["--levels", "[5.0, 7.0]", "0 and 1"]),                            # was ignored
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--measured", "nope.csv"],
     ["--measured", "nope.csv", "no such file"]),                       # said "samples"
    (["predict", "s.csv", "--framework", "trl", "nope.json", "--out", "o"],
     ["--framework trl CONFIG", "nope.json", "no such file"]),          # said "config"
    (["predict", "s.csv", "--beta", "0.5", "--out", "o", "--id-column", "nan"],
     ["--id-column", "'nan'", "expected one of"]),                      # named no option
    (["predict", "", "--beta", "0.5", "--out", "o"], ["samples", "''", "empty path"]),    # said "'.' is a folder"
    (["explain", "", "--framework", "trl"], ["config", "''", "empty path"]),
    (["explain", "c.json", "--framework", "trl", "--trl-version", "abc"], ["--trl-version", "'abc'", "expected"]),
    (["sweep", "g.yaml", "--out", "big.csv", "--no-progress"], ["big.csv", "not a sweep file"]),   # was csv.Error
    (["explain", "g.json", "--framework", "trl"], ["g.json", "num_generations", "1e+20", "expected"]),  # group_size
    (["solve", "--pi-ref", "0.3", "0.7", "--preference", "0.5", "--beta", "1"],
     ["--preference", "K = 2", "[0.5]"]),                               # named no value
    (["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "1", "--reward-probs", "0.2", "0.8", "0.6", "0.4",
      "--beta", "1"], ["--reward-levels", "L = 1", "[0.2, 0.8, 0.6, 0.4]"]),   # blamed --reward-probs alone
]


@pytest.mark.parametrize("argv, names", FOUND, ids=[" ".join(a[:1] + a[-2:]) for a, _ in FOUND])
def test_found_by_the_sweep(tmp_path, argv, names):
    """Each finding of the full product: one line naming the option or file, the value, and what was expected."""
    from _cli_run import refused

    (tmp_path / "s.csv").write_text(SAMPLES, encoding="utf-8")
    (tmp_path / "k.npy").write_bytes(b"")
    (tmp_path / "c.json").write_text(GOOD["trl"], encoding="utf-8")
    (tmp_path / "g.yaml").write_text(GOOD["grid"], encoding="utf-8")
    (tmp_path / "g.json").write_text('{"beta": 0.1, "num_generations": 1e20}', encoding="utf-8")
    (tmp_path / "big.csv").touch()
    os.truncate(tmp_path / "big.csv", 2**20)         # NUL bytes past csv's field limit
    with contextlib.chdir(tmp_path):
        refused(argv, *names)
    assert not (tmp_path / "o").exists() or (tmp_path / "o" / ".incomplete").exists()


def _broken_solve(kind: str):
    """A ``solve`` that breaks the contract one way (for the checker's own test)."""
    def run(args):
        import sys

        if kind == "traceback":
            raise RuntimeError("no root")
        if kind == "two lines":
            print("grpo-theory: error: --beta: expected a positive number, got 'nan'\nmore", file=sys.stderr)
            return 2
        if kind == "no value":
            raise cli.InvalidInputError("--beta must be a positive number")
        if kind == "wrong":
            print("RLHF (log pooling)   0.500000   0.500000")
            return 0
        if kind == "exit 1":
            return 1
        Path("half.tmp.csv").write_text("x")
        raise cli.InvalidInputError("--beta 0.5: expected a positive number")
    return run


@pytest.mark.parametrize("kind, word", [("traceback", "traceback RuntimeError"), ("two lines", "lines"),
                                        ("no value", "unnamed-value"), ("wrong", "wrong"), ("exit 1", "exit 1"),
                                        ("half-written", "half-written")])
def test_the_checker_catches_each_break(tmp_path, monkeypatch, kind, word):
    """The contract's checker is not vacuous: a ``solve`` broken each way is reported with that class."""
    monkeypatch.setattr(cli, "cmd_solve", _broken_solve(kind))
    argv = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"]   # the broken command answers
    _, why = check_contract(tmp_path, ("solve", "--beta", argv, argv[-1], 0))
    assert why is not None and why.startswith(word), why
