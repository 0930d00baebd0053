"""A hypothesis fuzzer of the command line: random argv and random file contents for every subcommand.

Each case calls ``grpo_theory.cli.main`` in this process with a random argv built from the subcommand's own
options (read from the parser, so a new option is fuzzed without a change here) and hostile values (NaN,
infinities, 1e300, 5e-324, negative and huge integers, empty strings, unicode, missing paths, folders,
``/proc``), and files of random contents (samples tables, sweep grids, trainer configs in JSON, YAML and shell,
binary garbage, BOMs, deep nesting). The contract: no traceback (only ``SystemExit``), no hang (an alarm at
``HANG_S`` seconds), exit 0, 1, 2 or 130, and an exit 2 prints one ``grpo-theory: error:`` line that names
the option or file (or value) it refuses.

The commands that train or draw (``validate``'s studies, ``figures``, ``fetch-model``), the sympy
derivations and the sweep's evaluation are replaced by stubs that record the call: their argument
checks, which run before, are what is fuzzed. 200 cases in the default run; ``-m slow`` runs 3,000.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import string
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_theory import cli

HANG_S = 20

NUMBERS = ["nan", "NaN", "inf", "-inf", "1e300", "-1e300", "1e-300", "5e-324", "0", "-0", "-1", "2.5", "1",
           "0.5", "3", "8", "1e20", "99999999999999999999", "-5", "0.3", "0x10", "1_000", "", " ", "abc", "--",
           "1e", "\u00e9", "2", "1000000", "1000001", "1e-3", "-1e-3", "1.0e300", "+inf"]
SUBCOMMANDS = ("solve", "figures", "validate", "fetch-model", "sweep", "explain", "derivations", "predict")


class Ran(Exception):
    """A stubbed heavy command was reached: its arguments passed every check."""


def _options(parser) -> dict:
    """Every subcommand's options: ``{name: [(flags, nargs, choices, is_flag)]}`` from the parser itself."""
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    out = {}
    for name, p in sub.choices.items():
        acts = []
        for a in p._actions:
            if a.option_strings and "-h" not in a.option_strings:
                acts.append((a.option_strings[-1], a.nargs, a.choices, a.nargs == 0))
            elif not a.option_strings and a.dest != "help":
                acts.append((None, a.nargs, a.choices, False))
        out[name] = acts
    return out


OPTIONS = _options(cli.build_parser())

CSV_HEADERS = ["prompt_id,reward", "prompt_id,n,correct", "prompt_id,count_0,count_1", "prompt_id,count_nan,count_1",
               "prompt_id,count_1,count_1.0", "problem,n,correct", "prompt_id,reward,reward", "\ufeffprompt_id,reward",
               "a,b", ""]
CELLS = ["0", "1", "0.5", "", "nan", "inf", "-1", "3", "10", "1e20", "2.5", "x", "\u00e9", "1e15", "-0"]


VALID = {
    "csv": ["prompt_id,n,correct\na,10,3\nb,8,0\nc,5,5\n", "prompt_id,reward\na,1\na,0\nb,0\nb,\nb,1\n",
            "prompt_id,count_0,count_0.5,count_1\na,3,1,4\nb,0,2,2\n", "\ufeffprompt_id,n,correct\nq,4,1\n",
            "prompt_id,n,correct\na,1000000000000000,300000000000000\n"],
    "grid": ["objectives: {beta: [0.5, 1.0e300], group_size: 2}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n",
             "objectives: {beta: 1e-300}\nsimplex: {rewards: [1, 0.5, 0], step: 0.25}\n"],
    "config": ['{"beta": 0.04, "num_generations": 4, "max_completion_length": 1}',
               "beta: 0.1\nnum_generations: 8\nloss_type: dr_grpo\n",
               '["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--init_kl_coef", "0.1"]'],
    "sh": ["N=4\npython3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=$N "
           "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.01\n"],
}


@st.composite
def file_contents(draw, kind: str) -> bytes:
    """Random contents for a file the subcommand reads."""
    # valid files first: hypothesis leans to a strategy's first choices, and a valid file lets the run reach
    # the library; then random structured, binary garbage, deep nesting
    choice = draw(st.sampled_from(["valid", "random", "valid", "binary", "random", "deep"]))
    if choice == "binary":
        return draw(st.binary(max_size=64))
    if choice == "deep":
        depth = draw(st.integers(50, 3000))
        return ('{"a":' * depth + "1" + "}" * depth).encode()
    if choice == "valid":
        return draw(st.sampled_from(VALID[kind])).encode()
    if kind == "csv":
        header = draw(st.sampled_from(CSV_HEADERS))
        rows = draw(st.lists(st.lists(st.sampled_from(CELLS + ["a", "b"]), min_size=1, max_size=4),
                             max_size=6))
        return (header + "\n" + "\n".join(",".join(r) for r in rows) + "\n").encode()
    if kind == "grid":
        beta = draw(st.sampled_from(["0.5", "[0.5, 1.0]", "[]", "1.0e300", "nan", "-1", "'x'", "[1e-300]", "{a: 1}"]))
        g = draw(st.sampled_from(["2", "inf", "1", "2.5", "1000000000", "[2, 4]"]))
        body = draw(st.sampled_from([
            "questions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]",
            "questions: [{pi_ref: [0.3, 0.7], rewards: [1e300, 0]}]",
            "questions: []", "questions: 5", "questions: [{pi_ref: [nan, 1], rewards: [1, 0]}]",
            "simplex: {rewards: [1, 0.5, 0], step: 0.5}", "simplex: {rewards: [1, 0.5, 0], step: 0.001}",
            "simplex: {rewards: [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1], step: 0.01}",
            "simplex: {rewards: [1, 0], step: 0}", ""]))
        return f"objectives: {{beta: {beta}, group_size: {g}}}\n{body}\n".encode()
    if kind == "sh":
        n = draw(st.sampled_from(["8", "$N", "${N}", "1", "x", "1e300", "''"]))
        return ("#!/bin/bash\nN=4\npython3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\\n"
                f" actor_rollout_ref.rollout.n={n} actor_rollout_ref.actor.use_kl_loss="
                f"{draw(st.sampled_from(['True', 'false', '2', 'x']))} "
                f"actor_rollout_ref.actor.kl_loss_coef={draw(st.sampled_from(NUMBERS[:20]))} $@\n").encode()
    # a config: JSON, YAML or an argv list
    value = draw(st.sampled_from(["0.1", "-1", "1e300", "null", "true", '"x"', "[]", "{}", "8", "1.5", "NaN"]))
    key = draw(st.sampled_from(["beta", "num_generations", "loss_type", "scale_rewards", "algorithm",
                                "actor_rollout_ref", "actr_rollout_ref", "init_kl_coef", "n_samples_per_prompt",
                                "epsilon", "max_completion_length", "\u00e9"]))
    form = draw(st.integers(0, 3))
    if form == 0:
        return f'{{"{key}": {value}}}'.encode()
    if form == 1:
        return f"{key}: {value}\n".encode()
    if form == 2:
        return f'["--{key}", "{value}"]'.encode()
    return f'["--{key}"]'.encode()


#: A valid command line per subcommand (files named ``input.*``): the fuzzer mutates these, so most cases reach
#: the library (a bad value among good ones) rather than stopping at the first unparsable token.
TEMPLATES = {
    "solve": [["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"],
              ["--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "0.3", "--group-size", "4"],
              ["--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1", "--reward-probs", "0.2", "0.8", "0.6", "0.4",
               "--beta", "1", "--group-size", "inf"],
              ["--pi-ref", "0.5", "0.5", "--preference", "0.5", "0.7", "0.3", "0.5", "--beta", "0.5", "--json"]],
    "predict": [["input.csv", "--beta", "0.5", "--out", "out"],
                ["input.csv", "--beta", "0.2", "--group-size", "4", "--k", "1", "4", "--out", "out"],
                ["input.csv", "--beta", "0.5", "--clock", "0.1", "--steps", "10", "100", "--out", "out"],
                ["input.csv", "--beta", "0.5", "--fit", "50", "0.6", "--out", "out", "--tradeoff-betas", "0.1", "1"],
                ["input.csv", "--framework", "trl", "config.json", "--out", "out"],
                ["input.csv", "--framework", "verl", "config.sh", "--out", "out", "--id-column", "prompt_id"]],
    "explain": [["config.json", "--framework", "trl"], ["config.sh", "--framework", "verl"],
                ["config.json", "--framework", "openrlhf", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0"],
                ["config.yaml", "--framework", "trl", "--json"]],
    "sweep": [["input.yaml", "--out", "o.csv"]],
    "validate": [["--quick"], ["--study", "tree", "--steps", "10"], ["--study", "free", "--seeds", "0", "1"]],
    "figures": [["--out", "figs", "--only", "1"], ["--resume", "--out", "figs"]],
    "fetch-model": [["--dest", "m"]],
    "derivations": [["--out", "d.md"], ["--check", "--out", "d.md"]],
}


@st.composite
def argv_and_files(draw, cmd: str):
    argv = [cmd] + list(draw(st.sampled_from(TEMPLATES[cmd])))
    files = {"input.csv": draw(file_contents("csv")), "input.yaml": draw(file_contents("grid")),
             "config.json": draw(file_contents("config")), "config.yaml": draw(file_contents("config")),
             "config.sh": draw(file_contents("sh"))}
    paths = ["input.csv", "missing.csv", "folder", "/proc/nope.csv", "folder/out", "input.csv/x", "out",
             "\u00e9.csv", "", "config.json", "input.yaml"]

    def hostile(choices=None):
        pools = [st.sampled_from(NUMBERS), st.sampled_from(paths), st.text(alphabet=string.printable, max_size=6)]
        if choices:
            pools.append(st.sampled_from([str(c) for c in choices]))
        return draw(st.one_of(*pools))

    for _ in range(draw(st.integers(0, 2))):                # 0 to 2 mutations of the valid line
        op = draw(st.integers(0, 2))
        if op == 0 and len(argv) > 1:                       # a token replaced by a hostile one
            i = draw(st.integers(1, len(argv) - 1))
            argv[i] = hostile()
        elif op == 1 and len(argv) > 1:                     # a token dropped
            del argv[draw(st.integers(1, len(argv) - 1))]
        else:                                               # an option of the subcommand added, random value(s)
            flags, nargs, choices, is_flag = draw(st.sampled_from(OPTIONS[cmd]))
            if flags is None:
                continue
            argv.append(flags)
            if not is_flag:
                n = {None: 1, "+": draw(st.integers(1, 3)), 2: 2, "?": 1, "*": draw(st.integers(0, 2))}.get(nargs, 1)
                argv += [hostile(choices) for _ in range(n)]
    if cmd == "predict":                                    # keep it fast: no figures, no progress bars
        argv += ["--no-plots", "--no-progress"]
    if cmd == "sweep":
        argv += ["--workers", "1", "--no-progress"]
    return argv, files


@pytest.fixture
def stubs(monkeypatch):
    """The heavy commands replaced by a recorder (their checks, before, still run)."""
    def ran(*args, **kwargs):
        raise Ran()

    monkeypatch.setattr(cli, "_run_study", ran)
    monkeypatch.setattr(cli, "sweep", ran)
    import grpo_theory.figures as figures

    monkeypatch.setattr(figures, "build_figures", ran)
    try:
        import grpo_theory.symbolic as symbolic

        for name in ("all_derivations", "all_identities", "render_markdown"):
            monkeypatch.setattr(symbolic, name, ran)
    except ImportError:
        pass
    try:
        import grpo_theory.training.smollm as smollm

        monkeypatch.setattr(smollm, "fetch_model", ran)
    except ImportError:
        pass


def _alarm(signum, frame):
    raise TimeoutError(f"a case ran past {HANG_S} s")


def _run_case(tmp: Path, argv: list, files: dict) -> None:
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    (tmp / "folder").mkdir(exist_ok=True)
    err, out = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(tmp)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                rc = cli.main(argv)
            except SystemExit as exc:
                rc = exc.code
            except Ran:
                rc = 0
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(old)
    text = err.getvalue()
    if os.environ.get("GRPO_FUZZ_LOG"):                     # outcome counts for docs/reliability.md
        with open(os.environ["GRPO_FUZZ_LOG"], "a", encoding="utf-8") as fh:
            last = [ln for ln in text.splitlines() if ln.strip()][-1:] or [""]
            fh.write(f"{argv[0]}\t{rc}\t{last[0][:160]!r}\t{argv!r}\n")
    assert rc in (0, 1, 2, 130), (argv, rc, text)
    if rc == 2:
        lines = [ln for ln in text.splitlines() if ln.strip() and "%|" not in ln and "it/s" not in ln]
        assert lines and lines[-1].startswith("grpo-theory: error: "), (argv, text)
        assert len(lines[-1]) > len("grpo-theory: error: ") + 10, (argv, text)
        assert "Traceback" not in text, (argv, text)


def _fuzz(tmp_path_factory, case):
    argv, files = case
    _run_case(tmp_path_factory.mktemp("fuzz"), argv, files)


_SETTINGS = dict(deadline=None, database=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("cmd", SUBCOMMANDS)
@settings(max_examples=25, derandomize=True, **_SETTINGS)
@given(data=st.data())
def test_cli_fuzz(tmp_path_factory, stubs, cmd, data):
    """25 random command lines and files per subcommand (200 in all): no traceback, no hang, exit 2 with one
    naming line."""
    _fuzz(tmp_path_factory, data.draw(argv_and_files(cmd)))


@pytest.mark.slow
@pytest.mark.parametrize("cmd", SUBCOMMANDS)
@settings(max_examples=375, **_SETTINGS)
@given(data=st.data())
def test_cli_fuzz_long(tmp_path_factory, stubs, cmd, data):
    """3,000 more (375 per subcommand), not derandomised: a new sample each run."""
    _fuzz(tmp_path_factory, data.draw(argv_and_files(cmd)))
