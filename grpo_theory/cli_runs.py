"""The commands about a real trainer run: ``grpo-theory explain`` (what its config optimises, in the
note's terms) and ``grpo-theory predict`` (per-prompt outcomes from the base model's samples)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from . import variants
from .errors import NoStationaryPolicy, TheoryWarning
from .integrations.mapping import explain, load_config_file
from .integrations.openrlhf import read_openrlhf_config
from .integrations.trl import read_trl_config
from .integrations.verl import read_verl_config
from .predict import predict, reward_kl_tradeoff
from .problem import InvalidInputError, Objective, Question


def _read_config(framework: str, path_text: str):
    """A config file as data (:func:`~grpo_theory.integrations.mapping.load_config_file`); a TRL one must
    hold a JSON object."""
    config = load_config_file(framework, path_text)
    if framework == "trl" and not isinstance(config, dict):
        raise InvalidInputError(f"config {str(Path(path_text))!r} must hold a JSON object of GRPOConfig fields, "
                                f"got {type(config).__name__}")
    return config


def cmd_explain(args) -> int:
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


def cmd_predict(args) -> int:
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
        if args.kl_estimator is not None or not variants.lookup("kl_placement", args.kl_placement).in_loss or args.kl_value_clamp is not None \
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
