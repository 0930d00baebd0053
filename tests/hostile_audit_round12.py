"""Twelfth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, where eleven rounds and the contract sweeps did not go:

* ``stationary_points`` with 5-8 reward levels, beyond the certified scope (``exhaustive=False`` with a reason,
  every converged point checked by the KKT residual, ``from_reference`` equal to ``stationary_policy``); token
  trees (chains up to 300 shared tokens, tied subtrees, wide roots, token-level KL estimators);
  ``check_trajectories`` on synthetic trajectories (a one-signed drift must never be ``converged``);
  ``dynamics.grpo_steps`` and ``flow`` for every advantage against Euler / RK4; the advantage registry's
  ``sampled`` and ``expectations`` hooks against an enumeration of ordered groups
  (:mod:`hostile_audit_round12_api`);
* ``predict``'s finite-time options (``pred_finite`` recomputed from the reported fit, pass@k, ids that differ
  in form, kernels that are awkward or wrong, ``--holdout`` at the edges); ``explain`` on a run folder's files;
  ``validate`` / ``figures`` / ``derivations`` options; the environment (a read-only tmpfs, an unwritable
  ``HOME``, ``LANG=C``, FIFOs, ``/dev/full``, a 100 MB CSV) (:mod:`hostile_audit_round12_cli`).

Every check compares with :mod:`hostile_audit_round12_ref` / :mod:`hostile_audit_round11_ref`, which import
nothing of ``grpo_theory``. Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a
check, ``error`` naming ``names``, ``either``, ``flag``; ``clean``, ``correct``, ``traceback``, ``hang``,
``silent``, ``accepted``, ``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round12.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)
import hostile_audit_round10 as r10  # noqa: E402  (round eight's classes, a failed check's reason kept)


def all_cases() -> list[dict]:
    """Every case of the round (API first), with the hang limit and an empty ``names`` where not given."""
    import hostile_audit_round12_api as api
    import hostile_audit_round12_cli as cli

    return [r10._recording({"hang_s": fresh.HANG_S, "names": [], **c}) for c in api.all_api_cases() + cli.all_cli_cases()]


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {}


def triage_of(case: dict) -> str:
    """``harness: why`` for :data:`HARNESS_MISTAKES`, else ``library`` (clean and correct rows: empty)."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None):
    """The audit's command line (module doc); each row not clean or correct is triaged by :data:`HARNESS_MISTAKES`
    (``harness: why``) or called ``library``."""
    return fresh.round_main(all_cases(), r10.classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
