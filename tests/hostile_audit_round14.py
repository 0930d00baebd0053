"""Fourteenth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, led by a count of how often the earlier rounds' files name each
public callable and each subcommand option (the least named first):

* the public API's least-called corners (:mod:`hostile_audit_round14_api`): the advantage registry's expectation
  functions against an ordered-tuple enumeration, ``Question`` x ``Objective`` field combinations at unusual but
  valid values, results containers (copy, pickle, ``==``, ``hash``, JSON) fed back in, the sweep module's grid
  functions, ``convergence.check_history`` on trainer-like logs, the symbolic module, ``integrations.mapping``,
  ``problem`` helpers and closed forms not yet checked;
* the command line (:mod:`hostile_audit_round14_cli`): ``sweep`` YAML specs with anchors, aliases, merge keys,
  huge and empty grids, changed specs resumed, two grids on one ``--out``; ``figures`` / ``validate`` /
  ``derivations`` / ``fetch-model`` / ``explain`` options in combination; the environment (locale, odd paths,
  read-only folders, ``--out`` a file, ``| head``, ``COLUMNS=5``, ``HOME`` unset, ``MPLBACKEND`` nonsense, a deleted
  working folder).

Every check compares with :mod:`hostile_audit_round14_ref`, which imports nothing of ``grpo_theory``.
Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``warn``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``, ``accepted``,
``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round14.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)
import hostile_audit_round10 as r10  # noqa: E402  (round eight's classes, a failed check's reason kept)


def all_cases() -> list[dict]:
    """Every case of the round, with the hang limit and an empty ``names`` where not given; each check noted as
    comparing with the reference (``case["ref"]``) when a function of :mod:`hostile_audit_round14_ref` (or the
    part-one comparison of arrays with the enumeration) ran inside it."""
    import hostile_audit_round14_api as api
    import hostile_audit_round14_cli as cli
    import hostile_audit_round14_ref as ref

    cases = api.all_api_cases() + cli.all_cli_cases()
    recorded = [r10._recording({"hang_s": fresh.HANG_S, "names": [], **c}) for c in cases]
    return fresh.noting_reference(recorded, ref, also=[(api, "_allclose")])


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
_SET = ("the set was built outside the check's try, so the TypeError escaped as a traceback; the behaviour is the "
        "hash() row's (a TypeError naming numpy.ndarray), counted there")
_STEP = ("names the offending step and its limit (n at most 1000, a step of at least 0.001), a true reason found "
         "first; the harness wanted the case count")
_IDENTITY = "returns a tuple of Proofs (its signature: tuple[Proof, ...]); both proofs hold"
_DASHDASH = ("the command put `--` before the grid, after which argparse reads --out ... as positionals: the refusal is "
             "right")
_OPTION = "names the value and the option without its dashes (rewards, pi_ref); the harness wanted the dashes"
HARNESS_MISTAKES: dict[str, str] = {
    "{StationaryPoint} (a set of results): built, or TypeError naming StationaryPoint": _SET,
    "{StationaryPointSet} (a set of results): built, or TypeError naming StationaryPointSet": _SET,
    "cases_from_grid(a grid of 10^6 x 10^3 cases)": _STEP,
    "grid: simplex step 1/1001 on 2 rewards x 201 betas (201,000 cases)": _STEP,
    "check_history(p_best_q0 = 1.7, not a probability)":
        "check_trajectories documents values outside [0, 1] (its logit test is made only for values in [0, 1])",
    **{f"symbolic_identities.{n}() holds": _IDENTITY
       for n in ("identity_pairwise_advantage", "identity_penalty_gradient", "identity_shift_direct_is_rlhf",
                 "identity_zero_mean_preference")},
    "parse_version(None)": "names the parameter (v) and the value; the harness wanted 'version'",
    "parse_version(1.16)": "names the parameter (v) and the value; the harness wanted 'version'",
    "load_config_file('keras', 'c.json')": "the harness wrote no c.json: 'no such file' is a true reason, found first",
    "shaped_question(q, shift [0.1, 0, -0.2]): rewards 0.9, 0.5, 0.2":
        "a Question has no .rewards attribute (the check's mistake); its repr shows rewards [0.9, 0.5, 0.2], as expected",
    "TrainerConfig(objective={'beta': 0.3, 'group_size': 4}) (a dict of fields)":
        "TrainerConfig documents objective as an Objective; refused naming it and the type given (dict)",
    "questions: a list that contains itself (&l [*l])":
        "a list that contains itself is infinitely deep: 'nested deeper than 64 levels' names the file and a true reason",
    "grid: objectives: {} (no field)": "names 'objectives' and the empty mapping; the harness wanted 'beta'",
    "explain TRL config --pi-ref 0.3 0.7 --rewards 1 0 0.5 (3 rewards, 2 outputs)": _OPTION,
    "explain TRL config --pi-ref 0.3 0.3 --rewards 1 0 (sums to 0.6)": _OPTION,
    "validate --study smollm2 --trainable top-99 (more layers than the model has)":
        "the in-process audit replaces the study by a stub; the model's layer count is known only once the study "
        "loads it",
    **{f"sweep a grid whose name holds {lab}": _DASHDASH
       for lab in ("spaces", "a newline", "unicode (NFD)", "a leading dash", "a dollar and quotes")},
    "sweep the grid from /dev/stdin (cat g.yaml |)":
        "the exit status read was cat's (PIPESTATUS[0]); the command refused in one line naming '/dev/stdin', which the "
        "expectation 'either' takes",
}

#: The first run's library findings left open (the second run's library rows), by input label (docs/reliability.md).
OPEN_FINDINGS: tuple[str, ...] = ()


def triage_of(case: dict) -> str:
    """``harness: why`` (:data:`HARNESS_MISTAKES`), ``library`` (open ones: :data:`OPEN_FINDINGS`), or empty."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None):
    """The round's command line (module doc); returns the classes' counts and prints how many correct rows were
    compared with the reference."""
    cases = all_cases()
    counts = fresh.round_main(cases, r10.classify_case, triage_of, argv)
    n_ref = sum(1 for c in cases if c.get("ref") and c.get("cls") == "correct")
    if counts:
        print(f"{n_ref} correct rows compared with the reference (hostile_audit_round14_ref)")
    return counts


if __name__ == "__main__":
    main()
