"""``grpo-theory solve``: the stationary policies of every GRPO variant, RLHF and NLHF, side by side."""

from __future__ import annotations

import dataclasses
import json
import math
import sys

import numpy as np

from ._validate import plain
from .preference import n_count_vectors
from .errors import NoStationaryPolicy
from .problem import InvalidInputError, Objective, Question
from .solvers import ClassProblem, log_pooling, nash_equilibrium, stationary_points, stationary_policy
from .solvers.baselines import NASH_MIN_BETA
from .solvers.search import CERTIFY_BOXES
from .solvers.work import CERTIFY_MAX_BOX_WORK, SEARCH_MAX_WORK

VARIANTS = [(pen, norm) for pen in ("reverse", "direct") for norm in ("scale", "shift")]


#: Above this many count vectors per P_G evaluation times classes, `solve` refuses with five or more levels: its
#: table's four multi-start searches cost about 4-7 us each (solvers.work.SEARCH_MAX_WORK for the four; 14
#: distinct rewards at G = 8, 77,520 vectors: 13 s of CPU; 16 at G = 8, 170,544: about 70 s), so under 30 s below it.
SOLVE_MAX_COUNT_VECTORS = SEARCH_MAX_WORK // 4
#: The same in count vectors alone for three or four levels, where each of the four certified searches examines up to
#: 10,000 boxes at 4.6e-8 s per box and count vector (solvers.work; 3 levels at G = 100, 5,050 vectors: the table in
#: 8.6-12 s of CPU; G = 140, 9,870: over 25 s of CPU in 75 s of wall on a loaded machine; G = 300: about 3 min), and
#: the fallback searches, policies and NLHF besides: half the four searches' box work.
SOLVE_MAX_COUNT_VECTORS_CERTIFIED = int(CERTIFY_MAX_BOX_WORK // (8 * CERTIFY_BOXES))

#: Above this many classes (outputs with distinct reward laws), `solve` refuses: its table runs four multi-start
#: searches (30 distinct rewards at G = inf: the table in 11 s of CPU; 40: 22 s of CPU and 45 s of wall, 60: 26 s and
#: 75 s at load 8-11; 100: 38 s; 300: 1-3 min), so under about 15 s of CPU below it.
SOLVE_MAX_CLASSES = 30
#: From this many classes on, `solve` prints a progress line before each variant (a few seconds each and more).
SOLVE_PROGRESS_CLASSES = 30


def _check_solve_cost(q: Question, group_size) -> str:
    """Refuse up front a finite G whose exact P_G would take minutes (issue 25), naming the way out.

    Returns a note (non-empty when the case is large enough that progress lines are worth printing).
    """
    if q.has_reward_law:
        n_classes = ClassProblem(q, Objective(beta=1.0, group_size=group_size)).n_classes
        if n_classes > SOLVE_MAX_CLASSES:
            raise InvalidInputError(
                f"--pi-ref's {q.n_outputs:,} outputs fall in {n_classes:,} classes (outputs with distinct reward "
                f"laws); the solve table's four multi-start searches over more than {SOLVE_MAX_CLASSES} classes "
                "would run for a minute or more. From Python, stationary_policy(question, objective) gives the "
                "point the flow from pi_ref reaches (up to 500 classes; seconds at 100), and stationary_points(...) "
                "one variant's search (up to 100 classes)")
        many = (f"a multi-start search over {n_classes} classes per variant"
                if n_classes >= SOLVE_PROGRESS_CLASSES else "")
    elif q.n_outputs > SOLVE_MAX_CLASSES:          # a preference matrix: every output its own class
        raise InvalidInputError(
            f"--preference gives {q.n_outputs:,} outputs, each its own class; the solve table's searches over more "
            f"than {SOLVE_MAX_CLASSES} would run for a minute or more (300 outputs: over 75 s). From Python, "
            "nash_equilibrium(question, beta) gives NLHF's equilibrium (up to 1,500 outputs)")
    else:
        many = ""
    if math.isinf(group_size) or not q.has_reward_law:
        return many
    n_levels = len(np.unique(np.asarray(q.reward_levels))) if getattr(q, "reward_levels", None) is not None \
        else len(np.unique(q.expected_reward))
    n = n_count_vectors(int(group_size), n_levels)
    limit = SOLVE_MAX_COUNT_VECTORS_CERTIFIED if n_levels <= 4 else \
        SOLVE_MAX_COUNT_VECTORS // (n_classes if q.has_reward_law else n_levels)
    if n_levels >= 3 and n > limit:
        g_lo, g_hi = 2, int(group_size)                    # the largest G within the limit, by bisection
        while g_hi - g_lo > 1:
            mid = (g_lo + g_hi) // 2
            g_lo, g_hi = (mid, g_hi) if n_count_vectors(mid, n_levels) <= limit else (g_lo, mid)
        raise InvalidInputError(
            f"--group-size {group_size} with {n_levels} reward levels needs {n:,} count vectors per evaluation of "
            f"P_G (the limit here is {limit:,}"
            + (f", {SOLVE_MAX_COUNT_VECTORS:,} count vectors x classes over its "
               f"{n_classes if q.has_reward_law else n_levels} classes" if n_levels > 4 else "")
            + f": the table's searches evaluate P_G thousands of times and would run "
            f"for minutes). Use --group-size inf (the large-G limit, exact: the stationary points approach it as "
            f"O(1/G)), a G of at most {g_lo}, or, from Python, stationary_policy(question, objective) for the "
            "point the flow from pi_ref reaches")
    return "; ".join(filter(None, (f"{n:,} count vectors per evaluation of P_G" if n > 20_000 else "", many)))


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
            raise InvalidInputError(f"--preference needs K*K = {k * k} numbers (row-major; K = {k} outputs in "
                                    f"--pi-ref), got {len(args.preference)}: {plain(args.preference)[:200]}")
        return Question(args.pi_ref, preference=np.reshape(args.preference, (k, k)))
    if args.reward_levels is not None:
        k, n_levels = len(args.pi_ref), len(args.reward_levels)
        if args.reward_probs is None or len(args.reward_probs) != k * n_levels:
            raise InvalidInputError(
                f"--reward-probs needs K*L = {k * n_levels} numbers (K = {k} outputs in --pi-ref, L = {n_levels} "
                f"levels in --reward-levels {plain(args.reward_levels)[:80]}; row o: P(r = level | o)), got "
                + ("none: --reward-levels needs --reward-probs" if args.reward_probs is None else
                   f"{len(args.reward_probs)}: {plain(args.reward_probs)[:200]}"))
        return Question(args.pi_ref, reward_levels=args.reward_levels,
                        reward_probs=np.reshape(args.reward_probs, (k, n_levels)))
    if args.rewards is None:
        raise InvalidInputError("give --rewards, --reward-levels with --reward-probs, or --preference")
    return Question(args.pi_ref, rewards=args.rewards)


def solve_table(q: Question, obj: Objective, progress=None) -> list[dict]:
    """Rows (dicts) for every GRPO variant of ``obj`` (its penalty and normalisation in turn, the rest of
    ``obj`` kept: ``beta``, ``group_size``, ``std_ddof``, ``std_eps``, ...), RLHF and NLHF at ``obj.beta``.

    ``progress``: called with a line before each variant is solved (the CLI prints it for slow cases).
    """
    beta = obj.beta
    rows = []
    for i, (pen, norm) in enumerate(VARIANTS):
        name = f"GRPO {pen}/{norm}"
        if progress is not None:
            progress(f"solving {name} ({i + 1}/{len(VARIANTS)})")
        try:
            variant = dataclasses.replace(obj, kl_estimator=None, penalty=pen, normalization=norm)
            pts = stationary_points(q, variant)
        except InvalidInputError as exc:
            short = ("a preference matrix fixes P_G only for G = 2, scale, eps = 0"
                     if not q.has_reward_law else str(exc))
            rows.append(dict(method=name, pi=None, note=short))
            continue
        reached = stationary_policy(q, variant)
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
    if beta < NASH_MIN_BETA:                            # P(o > pi)/beta overflows: the solver refuses it
        rows.append(dict(method="NLHF (Nash)", pi=None, note=f"not computed: beta below {NASH_MIN_BETA:.4g}, where "
                                                             "P(o > pi)/beta overflows a double"))
        return rows
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


def cmd_solve(args) -> int:
    q = _question_from_args(args)
    obj = Objective(beta=args.beta, group_size=args.group_size, std_ddof=args.std_ddof,
                    std_eps=args.std_eps)   # bad values fail here
    if not obj.regularised:             # no penalty: nothing stationary to solve for; the shell's remedies, not Python's
        raise NoStationaryPolicy(f"solve --beta 0: the objective {obj.describe()} is unregularised: with no KL "
                                 "penalty there is no stationary policy in the interior (the expected gradient only "
                                 "pushes mass to the best answers, so every run ends at a vertex); give --beta > 0 "
                                 "(solve has no entropy bonus), or, for a finite run, `grpo-theory predict --measured "
                                 "AFTER` (or `--fit STEP MEAN_REWARD`)")
    slow = _check_solve_cost(q, args.group_size)
    progress = None
    if slow:
        import time

        t0 = time.perf_counter()

        def progress(line):
            print(f"grpo-theory solve: {line}, {time.perf_counter() - t0:.0f} s so far ({slow})",
                  file=sys.stderr, flush=True)
    rows = solve_table(q, obj, progress=progress)
    if args.json:
        print(json.dumps(dict(pi_ref=q.pi_ref.tolist(), beta=args.beta,
                              group_size=None if math.isinf(args.group_size) else args.group_size,
                              std_ddof=args.std_ddof, std_eps=args.std_eps, rows=rows), indent=2))
    else:
        g = "inf" if math.isinf(args.group_size) else args.group_size
        print(_format_table(q, rows, f"Stationary policies at beta={args.beta:g}, G={g} "
                                     f"(ddof={args.std_ddof}, eps={args.std_eps:g})"))
    return 0
