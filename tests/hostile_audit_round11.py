"""Eleventh hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, where ten rounds and the contract sweeps did not go:

* the GRPO family (RLOO, REINFORCE++, Dr GRPO's shift, TRL's ddof 1 + eps, a variance epsilon, pass@k, tie
  filtering, the entropy bonus and the bonus alone, the batch normalisers) at unusual but valid parameters, every
  answer checked against :mod:`hostile_audit_round11_ref` (no ``grpo_theory`` import: group enumeration, a scan and
  bisection of the two-output drift, the KKT residual, an RK4 flow on the logits); ``monte_carlo_preference`` for
  every advantage; ``Question`` / ``Objective`` as Python objects; ``predict`` with DataFrames and arrays; results
  fed back in (:mod:`hostile_audit_round11_api`);
* the readers with realistic published configs carrying one quirk (TRL YAML/JSON/command lines, verl run scripts
  and YAML, OpenRLHF argv and flag objects), ``explain`` with a question, ``predict`` with count files that carry
  quirks, 10^5 prompts and family configs, ``sweep`` specs with the family's fields, resumes and edits, two
  sweeps on one ``--out`` at once, option combinations of the other subcommands, and the environment
  (:mod:`hostile_audit_round11_cli`).

Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``flag``, ``warn``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``,
``accepted``, ``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round11.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_audit_fresh as fresh  # noqa: E402  (the round-four runner: selection, table, triage)
import hostile_audit_round10 as r10  # noqa: E402  (a failed check's reason kept for the table)

HANG_S = 60


def all_cases() -> list[dict]:
    import hostile_audit_round11_api as a1
    import hostile_audit_round11_cli as c1

    out = a1.all_api_cases() + c1.all_cli_cases()
    return [r10._recording(dict({"hang_s": HANG_S, "names": []}, **c)) for c in out]


def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    """:func:`hostile_audit_round10.classify_case` (round eight's classes, a failed check's reason kept)."""
    return r10.classify_case(case, tmp)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
_RPP_VERTEX = ("REINFORCE++ whitens over the batch, whose std goes to 0 at a vertex, so the best answer's pull grows "
               "like (1 - x)^(-1/2) and outgrows the direct penalty's log: the reference's own RK4 flow goes to the "
               "vertex (1 - pi(a) = 6.6e-3, 1.1e-4, 2.9e-6, 2.9e-7 at t = 50, 200, 1000, 3000), as returned; the "
               "expectation of an interior point was not computed")
_SPLINE = ("beyond 400 distinct p_ref values predict interpolates a spline checked to tol = 1e-6 (docs/predict.md "
           "section 6); over all 10^5 rows the largest error against Eq. 14 is 5.5e-8 (API) and 4.6e-8 (CLI "
           "data), inside it; the check demanded 1e-7 of 1 - x")
_TWICE = ("the open-r1 recipe already sets num_generations: 16, so the added line made the key appear twice, which "
          "the reader refuses naming the key and its line: right for what was given (the intended quirk untested)")
_THOUSANDS = "names the option and the value, written with thousands separators (10,000,001), and the limit"
HARNESS_MISTAKES: dict[str, str] = {
    "stationary_policy pi_ref=[0.2, 0.3, 0.5] rewards=[1.0, 0.5, 0.0] beta=0.6 advantage=reinforce_pp group_size=5 "
    "penalty=direct": _RPP_VERTEX,
    "stationary_policy pi_ref=[0.4, 0.35, 0.25] rewards=[2.0, -1.0, 0.5] beta=0.6 advantage=reinforce_pp "
    "entropy_coef=0.05 group_size=5 penalty=direct": _RPP_VERTEX,
    "monte_carlo_preference n_groups=1e4 (a float)":
        "an integer-valued float is the integer, as group_size=4.0 is (the package's convention for integer "
        "fields): 10,000 groups sampled, the estimate within its standard errors",
    "monte_carlo_preference a reward_sampler that raises":
        "the user's own exception from the user's callback propagates unchanged, its traceback ending in the "
        "callback, as Python's own higher-order functions do",
    "setting q.pi_ref on a Question":
        "AttributeError is Python's convention for a frozen attribute (dataclasses' FrozenInstanceError is one); "
        "the message names pi_ref and says the Question is immutable",
    "predict(100,000 prompts as a DataFrame) under a minute, pred = Eq. 14 on 200 rows": _SPLINE,
    "predict 100,000 prompts (CSV) --beta 0.25 under a minute": _SPLINE,
    "predict(an empty DataFrame with the columns)": "names the DataFrame and says it has no rows (the harness "
                                                     "wanted the word 'empty')",
    "predict(a 1-d array)": "names the shape (2,) and what is expected (a 2-d array of (n, correct) columns)",
    "predict(a DataFrame with a None prompt id)": "names the row and the column and says the id is missing ('empty')",
    "explain open-r1 recipe + num_generations: '16' (quoted)": _TWICE,
    "explain open-r1 recipe + num_generations: 1": _TWICE,
    "explain open-r1 recipe + num_generations: 16.5": _TWICE,
    "explain open-r1 recipe + num_generations: 0x10 (a YAML 1.1 hex integer)": _TWICE,
    "explain a JSON config with num_generations 9007199254740993 (past 2^53)":
        "TRL_JSON already holds num_generations, so the appended key appeared twice, which the reader refuses "
        "naming it: right for what was given (the intended quirk untested)",
    "explain open-r1 recipe + loss_type: bnpo":
        "documented (Objective.aggregation): a batch-normalised loss type over groups_per_batch = inf has a "
        "constant normaliser and is reported as token_sum (same stationary points); loss_type is bnpo",
    "explain OpenRLHF argv: new dotted names (0.10+)":
        "OpenRLHF clamps every estimator's value at +-10, so its k2 is a value-clamped k2, not the note's direct "
        "penalty: regime 'other', kl_estimator k2 with kl_value_clamp 10, as reported",
    "explain TRL JSON --rewards 1 0 0 for 2 probabilities":
        "names rewards (the option without its dashes), the 3 values given and the K = 2 expected, as solve does",
    "explain TRL JSON --completion-tokens 10000001 (above 10^7)": _THOUSANDS,
    "validate --study kl --questions 100001 (above the bound)": _THOUSANDS,
    "validate --study free --prompts 10001 --quick": _THOUSANDS,
    "validate --study small --threads 1025 --quick": _THOUSANDS,
    "validate --study smollm2 --workers 1025 --model-dir m": _THOUSANDS,
    "predict with PYTHONNOUSERSITE=1 and PYTHONPLATLIBDIR=nowhere":
        "PYTHONPLATLIBDIR=nowhere stops the interpreter itself before any of the package runs (no encodings "
        "module: a fatal error with no Python frame)",
}


def triage_of(case: dict) -> str:
    """``harness: why`` for :data:`HARNESS_MISTAKES`, else ``library`` (clean and correct rows: empty)."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None) -> collections.Counter:
    """The audit's command line (module doc); each row not clean or correct is triaged by :data:`HARNESS_MISTAKES`
    (``harness: why``) or called ``library``."""
    return fresh.round_main(all_cases(), classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
