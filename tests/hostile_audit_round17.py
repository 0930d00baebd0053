"""Seventeenth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, aimed at what the earlier rounds name least and at the API pages read
as a new user reads them:

* the public API (:mod:`hostile_audit_round17_api`): the ``closed_form`` module's functions called directly on a new
  ``p`` x ``beta`` grid (Eq. 14 with and without a margin, Eq. 15, the direct, shift+direct and RLOO forms, ``h`` and
  its turning point, the O(G) ``binary_preference`` up to G = 10^6), the stated properties of Eq. 14 / 15 at their
  edges, binary ``stationary_policy`` under six forms, three-output rests and ``reward_preference`` against an
  ordered-tuple enumeration, ``log_pooling`` / ``rlhf_optimum`` (up to 999,999 outputs), the ``kl`` module with both
  clamps, refused arguments and accepted types;
* the command line (:mod:`hostile_audit_round17_cli`): ``solve --json``'s every row on new binary questions,
  ``--std-ddof 1``, Bernoulli rewards, a preference matrix, three and four outputs; ``predict``'s every closed-form
  column of ``predictions.csv`` under six objectives and both intervals; refused ``solve`` / ``predict`` lines.

Every check compares with :mod:`hostile_audit_round17_ref`, which imports nothing of ``grpo_theory``.
Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``warn``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``, ``accepted``,
``misleading``, ``unhelpful``, ``refused_valid``), each case run in a forked child killed past the hang limit.

Slow, not in the default run: ``python tests/hostile_audit_round17.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)


def all_cases() -> list[dict]:
    """Every case of the round (:func:`hostile_audit_fresh.referenced_round_cases`)."""
    return fresh.referenced_round_cases(17)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md). None.
HARNESS_MISTAKES: dict[str, str] = {}

#: The first run's library findings left open, by input label (docs/reliability.md). Both: ``stationary_policy`` with
#: ``entropy_coef > 0`` on three or more outputs at beta 1e11 .. 1e16 (beyond the class flow's reach, below
#: ``reference_in_rounding``'s short cut): ``ValueError`` from SciPy's LSODA, "All components of the initial state
#: `y0` must be finite" (``multi_class_policy`` -> ``_flow_endpoint`` -> ``integrate_until_slow``).
OPEN_FINDINGS: tuple[str, ...] = ()   # the first run's two tracebacks are fixed (docs/reliability.md)


def triage_of(case: dict) -> str:
    """``harness: why`` (:data:`HARNESS_MISTAKES`), ``library`` (open ones: :data:`OPEN_FINDINGS`), or empty."""
    return fresh.triage(case, HARNESS_MISTAKES)


def classify_case(case: dict, tmp) -> tuple[str, str]:
    """The shared runner's :func:`hostile_audit_fresh.classify_in_child`: each case in a forked child killed past the
    hang limit."""
    return fresh.classify_in_child(case, tmp)


def main(argv=None):
    """The round's command line (module doc); returns the classes' counts and prints how many correct rows were
    compared with the reference."""
    return fresh.referenced_round_main(17, all_cases(), classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
