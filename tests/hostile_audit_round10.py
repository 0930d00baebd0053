"""Tenth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, where nine rounds and the contract sweeps did not go:

* the jumps of the field: the KL estimators' values, coefficients and discontinuities with every clamp, and
  binary stationary policies where ``abs`` or a clamp makes the field jump, against the Filippov rest condition
  written from SPEC section 8's definitions; stationary points of 3-4 classes near faces; ``dynamics.flow`` and
  ``ascent`` against a plain RK4 / Euler flow on the logits; pass@k; token-level objectives on answer trees with
  every KL setting; convergence checks on synthetic trajectories (:mod:`hostile_audit_round10_api`);
* ``predict`` with the KL options, its pass@k / interval / KL columns, the clock (``--clock``, ``--fit``,
  ``--steps``) against an RK4 flow, the finite-time options (``--measured``, ``--holdout``, ``--kernel``,
  ``--rhos``, ``--finite-level``, ``--seed``); the figures' data CSVs (committed and freshly built) against the
  closed forms; ``derivations``; the docs' Python examples as written (:mod:`hostile_audit_round10_cli`).

Every check compares with :mod:`hostile_audit_round10_ref`, which imports nothing of ``grpo_theory``.
Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``flag``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``, ``accepted``,
``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round10.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_audit_fresh as fresh  # noqa: E402  (the round-four runner: selection, table, triage)
import hostile_audit_round8 as r8  # noqa: E402  (in-process classification)

HANG_S = 60


def all_cases() -> list[dict]:
    import hostile_audit_round10_api as a1
    import hostile_audit_round10_cli as c1

    out = a1.all_api_cases() + c1.all_cli_cases()
    return [_recording(dict({"hang_s": HANG_S, "names": []}, **c)) for c in out]


def _recording(case: dict) -> dict:
    """``case`` with its check wrapped so that why it failed is kept (``case["why"]``) for the table."""
    check = case.get("check")
    if check is None:
        return case
    why: dict = {}

    def wrapped(tmp, res):
        try:
            good = check(tmp, res)
        except Exception as exc:                         # noqa: BLE001 - kept, then re-raised for the classifier
            why["why"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:240]}"
            raise
        if not good:
            why["why"] = "check failed"
        return good
    return dict(case, check=wrapped, why=why)


def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    """:func:`hostile_audit_round8.classify_case`, with the failed check's reason added to a ``silent`` row."""
    cls, message = r8.classify_case(case, tmp)
    if cls == "silent" and case.get("why", {}).get("why"):
        message = f"{message} [check: {case['why']['why']}]".strip()
    return cls, message


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {}


def main(argv=None) -> collections.Counter:
    """The audit's command line (module doc); each row not clean or correct is triaged by :data:`HARNESS_MISTAKES`
    (``harness: why``) or called ``library``."""
    return fresh.round_main(all_cases(), classify_case, lambda case: fresh.triage(case, HARNESS_MISTAKES), argv)


if __name__ == "__main__":
    main()
