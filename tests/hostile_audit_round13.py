"""Thirteenth hostile audit (issue 45): >= 500 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, where twelve rounds and the contract sweeps did not go:

* the unregularised objective (``beta = 0`` with no entropy bonus, ``Objective.regularised`` False): every public
  query whose answer is a stationary point given 0 in every spelling (``0``, ``-0.0``, ``np.float32(0)``,
  ``np.int64(0)``, a 0 inside an array), beta near 0 (``1e-300``, ``5e-324``, float32 subnormals), ``beta = 0``
  with an entropy bonus; the flows at ``beta = 0`` (``dynamics.flow`` / ``ascent`` / ``grpo_steps``,
  ``PromptField`` + ``solve_rho``) against the reference's own RK4 and Euler steps; the TRL / verl / OpenRLHF
  readers given configs with no KL (:mod:`hostile_audit_round13_api`); ``solve``, ``sweep``, ``predict`` and
  ``explain`` at ``beta = 0`` and near it, ``predict``'s finite-time columns recomputed
  (:mod:`hostile_audit_round13_cli`);
* the sub-modules' public helpers that no round called directly: :mod:`grpo_theory.integrations.cmdline`, the
  variants registry with the user's own entries, the predict sub-modules' functions, the studies package's
  functions, with wrong types, empty and huge inputs (:mod:`hostile_audit_round13_helpers`).

Every check compares with :mod:`hostile_audit_round13_ref` / :mod:`hostile_audit_round12_ref` /
:mod:`hostile_audit_round11_ref`, which import nothing of ``grpo_theory``. Expectations and classes are those of
:mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming ``names``, ``either``, ``warn``; ``clean``,
``correct``, ``traceback``, ``hang``, ``silent``, ``accepted``, ``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round13.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)
import hostile_audit_round10 as r10  # noqa: E402  (round eight's classes, a failed check's reason kept)


def all_cases() -> list[dict]:
    """Every case of the round (API first; the built-in entries' unregistering last), with the hang limit and an
    empty ``names`` where not given."""
    import hostile_audit_round13_api as api
    import hostile_audit_round13_cli as cli
    import hostile_audit_round13_helpers as helpers

    cases = api.all_api_cases() + helpers.all_helper_cases() + cli.all_cli_cases() + helpers.builtin_unregister_cases()
    return [r10._recording({"hang_s": fresh.HANG_S, "names": [], **c}) for c in cases]


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {}

#: The first run's library findings left open (not fixed in this round), by input label (docs/reliability.md).
OPEN_FINDINGS: tuple[str, ...] = ()


def triage_of(case: dict) -> str:
    """``harness: why`` for :data:`HARNESS_MISTAKES`, else ``library`` (clean and correct rows: empty)."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None):
    """The audit's command line (module doc); each row not clean or correct is triaged by :data:`HARNESS_MISTAKES`
    (``harness: why``) or called ``library``."""
    return fresh.round_main(all_cases(), r10.classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
