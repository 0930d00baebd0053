"""The commands about a real trainer run: ``grpo-theory explain`` (what its config optimises, in the
note's terms) and ``grpo-theory predict`` (per-prompt outcomes from the base model's samples)."""

from __future__ import annotations

import contextlib
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np

from ._io import writing_folder
from ._validate import given_options
from . import variants
from .errors import NoStationaryPolicy, TheoryWarning
from .integrations.mapping import explain
from .integrations.openrlhf import read_openrlhf_config
from .integrations.trl import load_config_as_read, read_trl_config
from .integrations.verl import read_verl_config
from .predict import predict, read_samples, reward_kl_tradeoff
from .predict.core import MAX_TRADEOFF_BETAS
from .predict.response import binary_question
from .solvers import clamp_critical_beta
from .problem import InvalidInputError, Objective, Question


_READERS = {"trl": read_trl_config, "verl": read_verl_config, "openrlhf": read_openrlhf_config}


def _read_config(framework: str, path_text: str):
    """A config file as data (:func:`~grpo_theory.integrations.mapping.load_config_file`); a TRL one must
    hold a JSON object."""
    config = load_config_as_read(framework, path_text)   # a TRL YAML typed as `trl grpo --config` types it
    if framework == "trl" and not isinstance(config, (dict, list)):
        raise InvalidInputError(f"config {str(Path(path_text))!r} must hold a JSON or YAML object of GRPOConfig fields "
                                "(or be a `trl grpo --field value` command line), "
                                f"got {type(config).__name__}")
    return config


def cmd_explain(args) -> int:
    given = [f for f, v in (("--trl-version", args.trl_version), ("--completion-tokens", args.completion_tokens))
             if v is not None]
    if given and args.framework != "trl":
        verb, pronoun = ("apply", "them") if len(given) > 1 else ("applies", "it")
        raise InvalidInputError(f"{' and '.join(given)} {verb} to --framework trl only (got --framework "
                                f"{args.framework}); drop {pronoun}")
    try:
        with warnings.catch_warnings(), _config_errors("config", args.config, keep=NoStationaryPolicy):
            warnings.simplefilter("ignore", TheoryWarning)      # printed below, with the rest of the account
            config = _read_config(args.framework, args.config)
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
    line = _critical_beta_line(mapping.objective, question)
    if line:
        print("  " + line)
    if "question" in info and info["question"]["stationary_policy"] is None:
        qd = info["question"]
        print(f"  pi_ref:             {np.array2string(np.asarray(qd['pi_ref']), precision=6)}")
        print(f"  stationary policy:  none ({qd['reason'].split(': ', 1)[1]})")
    elif "question" in info:
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


def _critical_beta_line(obj, question) -> str | None:
    """With a clamped KL in the loss: the clamp's critical beta (for the question, else for binary prompts with
    p_ref 0.1, 0.5, 0.9) and how far beta is below it."""
    if obj is None or obj.kl_value_clamp is None or not obj.placement_variant.in_loss or obj.beta == 0:
        return None                 # beta = 0 (OpenRLHF's init_kl_coef 0 keeps its clamp): no KL term to clamp
    qs = [("this question", question)] if question is not None else \
        [(f"p_ref {p:g}", binary_question(p)) for p in (0.1, 0.5, 0.9)]
    vals = []
    for _name, q in qs:
        try:
            vals.append(clamp_critical_beta(q, obj))
        except InvalidInputError:            # no clamp edge below pi_ref
            continue
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    where = "for this question" if question is not None else "for binary prompts with p_ref 0.1-0.9"
    crit = f"{lo:.3g}" if math.isclose(lo, hi, rel_tol=1e-3) else f"{lo:.3g}-{hi:.3g}"
    if obj.beta < lo:
        return (f"clamp: critical beta {crit} {where}; beta = {obj.beta:g} is ~{lo / obj.beta:,.0f}x below it, so the "
                "clamp lets the wrong class collapse (the stationary point is a vertex, which a finite run need not "
                "approach: see `grpo-theory predict --measured`)")
    return f"clamp: critical beta {crit} {where}; beta = {obj.beta:g} is above it"


#: ``predict``'s options that set the objective, which a trainer config (``--framework F CONFIG``) sets instead.
OBJECTIVE_OPTIONS = ("--group-size", "--penalty", "--normalization", "--std-ddof", "--std-eps", "--kl-estimator",
                     "--kl-placement", "--kl-log-ratio-clamp", "--kl-value-clamp")


def cmd_predict(args) -> int:
    """``grpo-theory predict SAMPLES``: per-prompt predictions for a run (see docs/predict.md)."""
    given = [flag for flag, v in (("--framework/CONFIG", args.framework), ("--beta", args.beta)) if v is not None]
    if len(given) != 1:
        raise InvalidInputError("give either --framework F CONFIG (a trainer config) or --beta B with the other "
                                f"Objective options; got {' and '.join(given) or 'neither'}")
    if args.framework is not None and args.framework[0] not in ("trl", "verl", "openrlhf"):
        raise InvalidInputError(f"--framework {args.framework[0]!r}: expected trl, verl or openrlhf")
    kwargs = dict(k=args.k, level=args.level, interval=args.interval, clock=args.clock, steps=args.steps,
                  sample_temperature=args.sample_temperature,
                  slow_tol=args.slow_tol, progress=False if args.no_progress else None)
    finite_args = [flag for flag, v in (("--holdout", args.holdout), ("--kernel", args.kernel), ("--rhos", args.rhos))
                   if v is not None]
    if args.finite_level is not None:
        finite_args.append("--finite-level")
    finite_args += given_options(getattr(args, "argv", ()), ("--seed",))    # its default 0: given or not, by argv
    if args.trl_version is not None and (args.framework is None or args.framework[0] != "trl"):
        raise InvalidInputError(f"--trl-version {args.trl_version!r} applies to --framework trl only (it picks "
                                "TRL's defaults); drop it or give --framework trl CONFIG")
    if args.framework is not None and (own := given_options(getattr(args, "argv", ()), OBJECTIVE_OPTIONS)):
        raise InvalidInputError(f"{', '.join(own)} would set what --framework {args.framework[0]} CONFIG reads from "
                                "the config, and be ignored; set the field in the config, or give --beta B with the "
                                "objective's options instead of --framework")
    if args.sample_temperature is not None and args.framework is None:
        raise InvalidInputError(f"--sample-temperature {args.sample_temperature:g} is checked against training's "
                                "temperature, which --framework F CONFIG gives; with --beta there is none to check it "
                                "against: drop it, or give the config")
    if args.tradeoff_betas and len(args.tradeoff_betas) > MAX_TRADEOFF_BETAS:
        raise InvalidInputError(f"--tradeoff-betas: {len(args.tradeoff_betas):,} values, above the limit of "
                                f"{MAX_TRADEOFF_BETAS:,} (each is a whole prediction, ~0.04 s per prompt); give fewer")
    if finite_args and args.measured is None:
        raise InvalidInputError(f"{', '.join(finite_args)} need{'s' if len(finite_args) == 1 else ''} --measured AFTER "
                                "(counts after training)")
    if args.measured is not None:
        with _as_option("--measured", "samples "):
            measured = read_samples(args.measured, levels=args.levels, id_column=args.id_column)
        kwargs.update(measured=measured,
                      holdout=args.holdout, rhos=args.rhos,
                      finite_level=0.9 if args.finite_level is None else args.finite_level,
                      seed=args.seed, kernel=None if args.kernel is None else _load_kernel(args.kernel))
    if args.fit is not None:
        kwargs["fit"] = tuple(args.fit)
    with warnings.catch_warnings(record=True) as caught:      # each printed once, below, as one line
        warnings.simplefilter("always", TheoryWarning)
        try:
            pr = _predict_from_args(args, kwargs)
        except InvalidInputError as exc:                    # the kernel's checks know no file: name it
            if args.kernel is not None and str(exc).startswith("the kernel"):
                raise InvalidInputError(f"--kernel {args.kernel!r}: {exc}") from None
            shell = _as_options(str(exc))
            if shell != str(exc):
                raise InvalidInputError(shell) from None
            raise
    for c in caught:                                        # any other warning as Python shows it
        if not issubclass(c.category, TheoryWarning):
            warnings.showwarning(c.message, c.category, c.filename, c.lineno)
    tradeoff = None
    if args.tradeoff_betas:
        with _as_option("--tradeoff-betas", "betas "):
            tradeoff = reward_kl_tradeoff(pr.samples, pr.objective, args.tradeoff_betas, progress=kwargs["progress"])
    with writing_folder(args.out, "grpo-theory predict"), _as_option("--out", "out_dir "):
        paths = pr.write(args.out, plots=not args.no_plots, tradeoff=tradeoff)
    s = pr.summary
    print(f"{s['prompts']} prompts, {s['samples']} samples ({s['excluded_rows']} rows excluded); {s['objective']}")
    shown = []
    for w in list(s["reader_warnings"]) + [str(c.message) for c in caught if issubclass(c.category, TheoryWarning)]:
        if not any(_repeats(w, x) for x in shown):
            shown.append(w)
            print(f"  warning: {w}")
    _print_predict_summary(pr, paths)
    return 0


def _repeats(new: str, shown: str) -> bool:
    """Whether warning ``new`` says nothing that ``shown`` did not: it is part of it once the reader's framework
    tag (``"verl: "``, ``"TRL: "``, ``"OpenRLHF: "``) is off both. :func:`~grpo_theory.integrations.mapping.mapping_of`
    emits each reader warning with the tag, and ``predict`` returns the same warning without it."""
    untag = re.compile(r"^(?:verl|TRL|OpenRLHF): ")
    return untag.sub("", new) in untag.sub("", shown)


#: The most values ``--tradeoff-betas`` takes: each is a whole prediction.
#: predict()'s keywords that are options of ``grpo-theory predict``: a message about ``clock=`` says ``--clock``.
_PREDICT_OPTIONS = ("clock", "fit", "steps", "k", "level", "interval", "slow_tol", "holdout", "rhos", "finite_level",
                    "seed", "kernel", "measured", "levels", "sample_temperature")


def _as_options(message: str) -> str:
    """``message`` with predict()'s keywords (``steps=``, ``fit=(step, mean_reward)``) spelt as the options."""
    message = re.sub(r"\bfit=\(step, mean_reward\)", "--fit STEP MEAN_REWARD", message)
    message = re.sub(r"^(?:fit's )?step must\b", "--fit STEP must", message)
    message = re.sub(r"^mean_reward(?=[ =])", "--fit MEAN_REWARD", message)
    message = re.sub(r"^(" + "|".join(_PREDICT_OPTIONS + ("id_column", "kl_estimator", "kl_placement")) + r") must\b",
                     lambda m: "--" + m.group(1).replace("_", "-") + " must", message)
    message = re.sub(r"\bid_column (?='[^']*' names)|\bid_column=(?=')", "--id-column ", message)
    message = re.sub(r"^measured samples (?=')", "--measured ", message)          # the file of --measured, named
    return re.sub(r"\b(" + "|".join(_PREDICT_OPTIONS) + r")=(?=[\s(,.;:]|$)",
                  lambda m: "--" + m.group(1).replace("_", "-"), message)


@contextlib.contextmanager
def _config_errors(label: str, path_text: str, *prefixes: str, keep=()):
    """A trainer config's errors name it: a message that starts with one of ``prefixes`` (the reader's words for
    the file) starts with ``label`` instead; one that does not name the file (``TRL config: beta = -1 ...``) gets
    ``label 'FILE': `` in front. ``keep``: exception classes passed on unchanged."""
    try:
        yield
    except InvalidInputError as exc:
        text = str(exc)
        prefix = next((p for p in prefixes if text.startswith(p)), None)
        if isinstance(exc, keep) or (prefix is None and path_text in text):
            raise
        if prefix is not None:
            raise InvalidInputError(f"{label} {text[len(prefix):]}") from None
        where = f"{label} {path_text!r}" if Path(path_text).is_file() else label
        raise InvalidInputError(f"{where}: {text}") from None
    except ValueError as exc:                   # a reader's own ValueError
        raise InvalidInputError(f"{label} {path_text!r}: {exc}") from None


@contextlib.contextmanager
def _as_option(option: str, *prefixes: str):
    """A reader's error about the file of ``option`` (its message starts with one of ``prefixes``, the reader's
    words for the file: ``samples 'x'``, ``config 'x'``) says the option: ``--measured 'x': no such file``."""
    try:
        yield
    except InvalidInputError as exc:
        prefix = next((p for p in prefixes if str(exc).startswith(p)), None)
        if prefix is None:
            raise
        raise InvalidInputError(_as_options(f"{option} {str(exc)[len(prefix):]}")) from None


def _predict_from_args(args, kwargs):
    """:func:`predict` for ``grpo-theory predict``'s arguments (samples read here, with --id-column)."""
    given = [t.split("=")[0] for t in getattr(args, "argv", ())]
    if not args.steps and any(t.startswith("--sl") and "--slow-tol".startswith(t) for t in given):
        raise InvalidInputError("--slow-tol flags the prompts still farther than it from their stationary value at the "
                                "last of --steps; give --steps (with --clock or --fit), or drop --slow-tol")
    samples = read_samples(args.samples, levels=args.levels, id_column=args.id_column)
    if args.framework is not None:
        framework, config = args.framework
        reader = {"trl_version": args.trl_version} if framework == "trl" and args.trl_version else {}
        with _config_errors(f"--framework {framework} CONFIG", config, "config ", f"{framework} config "):
            mapping = _READERS[framework](_read_config(framework, config), **reader)
        return predict(samples, mapping, **kwargs)
    else:
        fields = dict(beta=args.beta, group_size=args.group_size, normalization=args.normalization,
                      std_ddof=args.std_ddof, std_eps=args.std_eps)
        if args.kl_estimator is not None or not variants.lookup("kl_placement", args.kl_placement).in_loss or args.kl_value_clamp is not None \
                or args.kl_log_ratio_clamp is not None:
            fields.update(kl_estimator="k3" if args.kl_estimator is None else args.kl_estimator,
                          kl_placement=args.kl_placement,
                          kl_log_ratio_clamp=args.kl_log_ratio_clamp, kl_value_clamp=args.kl_value_clamp)
            if args.penalty is not None:
                raise InvalidInputError("give --penalty or the --kl-* options, not both")
        else:
            fields["penalty"] = args.penalty or "reverse"
        return predict(samples, Objective(**fields), **kwargs)


def _print_predict_summary(pr, paths: dict) -> None:
    s = pr.summary
    # graded rewards carry no p_ref interval (summary's interval_note): a bracket [x, x] would read as an exact one
    band = (f"({s['interval_note']})" if s.get("interval_note")
            else f"[{s['mean_pred_lo']:.4f}, {s['mean_pred_hi']:.4f}]")
    print(f"  mean P(correct): {s['mean_p_ref']:.4f} -> {s['mean_pred']:.4f} {band}; "
          f"mean KL(pi || pi_ref) {s['mean_kl_direct']:.4f}")
    flags = [f"{s[key]} {name}" for key, name in (("never_solved", "never solved"), ("bistable", "bistable"),
                                                   ("collapse", "collapse"), ("below_critical_beta",
                                                                              "below the clamp's critical beta"),
                                                   ("slow", "slow")) if s.get(key)]
    if flags:
        print("  flags: " + ", ".join(flags))
    if s.get("clock") is not None:
        print(f"  clock: {s['clock']:.6g} flow time per step")
    if s.get("kl_reverse_infinite"):
        print(f"  KL(pi_ref || pi) is infinite for {s['kl_reverse_infinite']} prompts (a class vanishes); "
              f"summary.json averages the other {s['prompts'] - s['kl_reverse_infinite']}")
    if s.get("sample_temperature") is None:
        train = s.get("train_temperature")
        print("  the samples' temperature was not given: p_ref is where training starts only if the samples were drawn "
              "at training's temperature" + (f" ({train:g}, from the config)" if train is not None else "")
              + "; --sample-temperature T checks it")
    for line in _stationary_warnings(pr):
        print("  " + line)
    if pr.finite is not None:
        for line in _finite_lines(pr):
            print("  " + line)
    print("  wrote " + ", ".join(paths.values()))


def _load_kernel(path_text: str):
    """``--kernel``: the N x N matrix in a numpy .npy file; anything else refused naming the file."""
    path, expected = Path(path_text), "expected a numpy .npy of an N x N matrix (numpy.save)"
    if not path.is_file():
        raise InvalidInputError(f"--kernel {path_text!r}: {'a folder' if path.is_dir() else 'no such file'} "
                                f"({expected})")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
        if magic == b"\x93NUMPY":      # else NumPy tries the file as a pickle, and blames pickled data
            K = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, OSError) as exc:      # an object array, cut short, unreadable
        raise InvalidInputError(f"--kernel {path_text!r} is not a readable .npy array ({exc}); {expected}") from None
    if magic == b"\x93NUMPY":
        # the file is named here: the kernel's own check further on knows it only as K
        if K.dtype.kind not in "iuf" or not np.all(np.isfinite(K)):
            bad = {"b": "boolean (True/False, not numbers)"}.get(K.dtype.kind, "non-numeric") \
                if K.dtype.kind not in "iuf" else "non-finite"
            raise InvalidInputError(f"--kernel {path_text!r} has {bad} entries; {expected} of finite numbers")
        if K.ndim != 2:
            raise InvalidInputError(f"--kernel {path_text!r} holds an array of shape {K.shape}; {expected}")
        return K
    why = "empty" if not magic else "no .npy header"
    raise InvalidInputError(f"--kernel {path_text!r} is not a .npy file ({why}); {expected}")


def _stationary_warnings(pr) -> list:
    """Lines saying when the stationary column describes no finite run, and a clamp's critical beta."""
    s, t = pr.summary, pr.table
    out = []
    if "beta_critical" in t:
        bc = t.beta_critical.to_numpy(dtype=float)
        below = np.isfinite(bc) & (pr.objective.beta < bc)
        if below.any():
            ratio = float(np.median(bc[below])) / pr.objective.beta
            out.append(f"beta = {pr.objective.beta:g} is ~{ratio:,.0f}x below the clamp's critical beta (median "
                       f"{np.median(bc[below]):.3g} over the {int(below.sum())} prompts below it): the stationary "
                       "point there is a vertex")
    vf = s.get("vertex_fraction", 0.0) or 0.0
    gap = s.get("finite_vs_stationary_mae")
    if not pr.objective.regularised:
        out.append("beta = 0 with no entropy bonus: there is no stationary point. The column 'pred' is the flow's "
                   "limit (1 where p_ref > 0, 0 where never solved), which describes no finite run: read "
                   + ("pred_finite (fitted on the measured prompts)." if pr.finite is not None else
                      "the at_step_<s> columns on the clock (or give --measured AFTER)."))
    elif vf > 0.2 or (gap is not None and gap > 0.05):
        why = []
        if vf > 0.2:
            why.append(f"{vf:.0%} of prompts have a vertex (P = 0 or 1) as their stationary point")
        if gap is not None and gap > 0.05:
            why.append(f"the fitted run is short of stationarity (mean |pred_finite - pred| = {gap:.3f})")
        advice = ("use pred_finite (fitted on the measured prompts)" if pr.finite is not None else
                  "give --measured AFTER (counts on some prompts after training) to fit the finite-time "
                  "flow, or --fit STEP MEAN_REWARD for a clock")
        out.append("the stationary column 'pred' describes where the flow ends, not a finite run: "
                   + "; ".join(why) + f". {advice[0].upper() + advice[1:]}.")
    return out


def _finite_lines(pr) -> list:
    f = pr.finite.summary
    fit = f["fit"]
    lines = [f"finite time ({f['model']} model, fitted on {f['measured']} measured prompts): flow time t = "
             f"{fit['t']:.4g} [{fit['t_lo']:.4g}, {fit['t_hi']:.4g}]"
             + (f", rho = {fit['rho']:.3f} [{fit['rho_lo']:.3f}, {fit['rho_hi']:.3f}]" if f["model"] == "coupled"
                else "") + f" ({fit['level']:.0%} bootstrap); logit shift {f['shift']:+.3f}",
             f"mean P(correct) after this run: {pr.summary['mean_pred_finite']:.4f}; pred_finite_lo/hi: "
             + f["interval"]]
    if "conformal" in f:
        lines.append("pred_finite_conformal_lo/hi: " + f["conformal"]["interval"])
    sc = pr.finite.scores
    if sc is not None:
        cov = f["holdout"].get("coverage")
        if cov is not None:
            lines.append(f"held-out measurements inside the {cov['level']:.0%} intervals: conformal "
                         f"{cov['conformal']:.0%} (mean width {cov['conformal_mean_width']:.3f}), the model's own "
                         f"{cov['model']:.0%} (mean width {cov['model_mean_width']:.3f})")
        lines.append(f"held out {f['holdout']['heldout']} of the measured prompts (fitted on the rest); sampling "
                     f"floor {float(sc.floor_best.iloc[0]):.4f}:")
        for _, r in sc.iterrows():
            lines.append(f"  {r.model:<18} MAE {r.mae:.4f} [{r.mae_lo:.4f}, {r.mae_hi:.4f}]   Brier {r.brier:.4f} "
                         f"[{r.brier_lo:.4f}, {r.brier_hi:.4f}]")
    return lines
