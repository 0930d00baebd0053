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
HARNESS_MISTAKES: dict[str, str] = {}


def triage_of(case: dict) -> str:
    """``harness: why`` for :data:`HARNESS_MISTAKES`, else ``library`` (clean and correct rows: empty)."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None) -> collections.Counter:
    """The audit's command line (module doc); each row not clean or correct is triaged by :data:`HARNESS_MISTAKES`
    (``harness: why``) or called ``library``."""
    return fresh.round_main(all_cases(), classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
