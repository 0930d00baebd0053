"""Eighteenth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, aimed away from round 17's closed forms:

* the public API (:mod:`hostile_audit_round18_api`): binary ``stationary_policy`` under the family options (G = 2,
  G = inf, direct, shift with reverse and direct, RLOO at G = 3, 6, inf), finite-G reverse/scale rests against a
  bisection of the binomial drift, Bernoulli laws and preference matrices (``stationary_policy``,
  ``nash_equilibrium``), ``reward_preference`` against the binomial form and ordered tuples (scale, shift, RLOO),
  shift+direct rests of 3-4 outputs, ``rlhf_optimum`` and ``log_pooling`` against log pooling, refused family
  options of ``Objective`` / ``Question``;
* the command line (:mod:`hostile_audit_round18_cli`): ``solve --json`` at finite G, every row with a reference;
  refused ``solve`` lines.

Every check compares with :mod:`hostile_audit_round18_ref`, which imports nothing of ``grpo_theory``.
Expectations and classes are those of :mod:`hostile_audit_round8`, each case run in a forked child killed past the
hang limit.

Slow, not in the default run: ``python tests/hostile_audit_round18.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)
import hostile_audit_round10 as r10  # noqa: E402  (round eight's classes, a failed check's reason kept)


def all_cases() -> list[dict]:
    """Every case of the round, with the hang limit and an empty ``names`` where not given; each check noted as
    comparing with the reference (``case["ref"]``) when a function of :mod:`hostile_audit_round18_ref` ran inside it."""
    import hostile_audit_round18_api as api
    import hostile_audit_round18_cli as cli
    import hostile_audit_round18_ref as ref

    cases = api.all_api_cases() + cli.all_cli_cases()
    recorded = [r10._recording({"hang_s": fresh.HANG_S, "names": [], **c}) for c in cases]
    return fresh.noting_reference(recorded, ref)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
_OPTION = ("names the value and the option without its dashes (rewards, pi_ref, preference, reward_probs); the harness "
           "wanted the dashes (the fourteenth round's _OPTION; docs/reliability.md, sixteenth round: a demand for the "
           "field's spelling)")
HARNESS_MISTAKES: dict[str, str] = {
    "solve --pi-ref 0.3 0.7 --rewards 1 --beta 0.5": _OPTION,
    "solve --pi-ref 0.3 0.6 --rewards 1 0 --beta 0.5": _OPTION,
    "solve --pi-ref 0.3 0.7 --preference 0.5 0.8 0.8 0.5 --beta 0.5": _OPTION,
    "solve --pi-ref 0.3 0.7 --reward-levels 0 1 --reward-probs 0.5 0.6 0.2 0.8 --beta 0.5": _OPTION,
}

#: The first run's library findings left open, by input label (docs/reliability.md): none (0 library rows).
OPEN_FINDINGS: tuple[str, ...] = ()


def triage_of(case: dict) -> str:
    """``harness: why`` (:data:`HARNESS_MISTAKES`), ``library`` (open ones: :data:`OPEN_FINDINGS`), or empty."""
    return fresh.triage(case, HARNESS_MISTAKES)


def _classify_here(case: dict, tmp) -> tuple[str, str]:
    cls, message = r10.classify_case(case, tmp)
    if cls == "silent" and case.get("bad_class"):
        cls = case["bad_class"]
    return cls, message


def classify_case(case: dict, tmp) -> tuple[str, str]:
    """:func:`hostile_audit_round10.classify_case` (a failed check of a case with ``bad_class`` is that class), run in a
    forked child that is killed past the hang limit: the in-process alarm cannot stop a call that stays in compiled
    code (the first process of the first run waited 14 minutes in SciPy's HYBRD on a 10,000-dimensional root, its
    SIGALRM pending); the child's class, message and reference note come back through a pipe."""
    import json
    import os
    import select
    import signal
    import time

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # the child: classify, report, leave at once
        os.close(r)
        try:
            cls, message = _classify_here(case, tmp)
            out = json.dumps([cls, message, bool(case.get("ref"))])
        except BaseException as exc:                     # noqa: BLE001 - the harness's own failure, reported
            out = json.dumps(["traceback", f"harness: {type(exc).__name__}: {exc}", False])
        with os.fdopen(w, "w") as fh:
            fh.write(out)
        os._exit(0)
    os.close(w)
    # the runners' own limits, plus 15 s: in-process 60 s (the alarm), shell 2 x 60 s, SIGINT then rerun 60 + 3 x 60 s
    limit = (4 if case.get("proc") else 2 if "shell" in case else 1) * case.get("hang_s", fresh.HANG_S) + 15
    t0, chunks = time.time(), []
    with os.fdopen(r) as fh:
        while True:
            left = limit - (time.time() - t0)
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "hang", f"over {limit} s (the child was killed; the in-process alarm could not stop it)"
            ready, _, _ = select.select([fh], [], [], min(left, 5.0))
            if ready:
                data = fh.read()
                chunks.append(data)
                break
    os.waitpid(pid, 0)
    try:
        cls, message, noted = json.loads("".join(chunks))
    except ValueError:
        return "traceback", "harness: the child died without a result"
    case["ref"] = noted
    return cls, message


def main(argv=None):
    """The round's command line (module doc); returns the classes' counts and prints how many correct rows were
    compared with the reference."""
    cases = all_cases()
    counts = fresh.round_main(cases, classify_case, triage_of, argv)
    n_ref = sum(1 for c in cases if c.get("ref") and c.get("cls") == "correct")
    if counts:
        print(f"{n_ref} correct rows compared with the reference (hostile_audit_round18_ref)")
    return counts


if __name__ == "__main__":
    main()
