"""Ninth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, where eight rounds and the contract sweeps did not go:

* the Python API as a researcher uses it in a notebook: every family member (RLOO, REINFORCE++, tie filtering, an
  entropy bonus with and without a KL, the variance epsilon, pass@k at k = G) and every KL estimator and placement
  (k2, k3+, k3 x ratio in the loss; k1 in the advantage and in the reward) at unusual but valid parameters, and
  the closed forms at parameters no round tried, 120+ answers checked against :mod:`hostile_audit_round9_ref`
  (no ``grpo_theory`` import: binomial sums in 40-digit mpmath, group enumeration, an RK4 flow on the logits
  polished by Newton's method); results fed back as the next ``pi_ref``, objects reused, mutated, pickled,
  copied, compared and hashed; the results' documented attributes (:mod:`hostile_audit_round9_api`);
* the readers with configs as people write them: a published TRL recipe, comments, YAML anchors, aliases and
  merge keys, YAML 1.1 booleans, hex and text numbers, tags, duplicate keys, interpolation left in the file,
  JSON with comments, UTF-16, command lines with continuations and CRLF; verl YAML and run scripts with Hydra's
  ``+``/``~`` and bash's ``${N:-4}``/``$((...))``; OpenRLHF's old and new names disagreeing; ``predict`` on count
  files with CRLF, quoted fields, trailing commas, scientific-notation counts, ids that look like numbers,
  semicolons, gzip, 10^5 prompts; ``sweep`` grids with family fields, anchors, JSON, and resumes after edits;
  ``figures``/``derivations``/``validate``/``fetch-model`` options together (:mod:`hostile_audit_round9_cli`);
* the environment in real processes: ``HOME`` and ``TMPDIR`` missing or unusable, ``PYTHONOPTIMIZE=2``, a hash
  seed changing between a sweep and its resume, ``ulimit -f``/``-n``/``-v``, a working folder deleted under the
  command, paths with a newline, a leading dash, non-UTF-8 bytes, 256-byte components, symlink loops, two
  commands writing one output at once, SIGTERM and SIGHUP part-way (:mod:`hostile_audit_round9_shell`).

Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``flag``, ``help``, ``pipe``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``,
``accepted``, ``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round9.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_audit_fresh as fresh  # noqa: E402  (the round-four runner: selection, table, triage)
import hostile_audit_round8 as r8  # noqa: E402  (shell, chain and in-process classification)

HANG_S = 60


def all_cases() -> list[dict]:
    import hostile_audit_round9_api as a1
    import hostile_audit_round9_cli as c1
    import hostile_audit_round9_shell as sh

    out = a1.all_api_cases() + c1.all_cli_cases() + sh.all_shell_cases()
    return [dict({"hang_s": HANG_S, "names": []}, **c) for c in out]


def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    return r8.classify_case(case, tmp)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {}


def main(argv=None) -> collections.Counter:
    """The audit's command line (module doc); each row not clean or correct is triaged by :data:`HARNESS_MISTAKES`
    (``harness: why``) or called ``library``."""
    return fresh.round_main(all_cases(), classify_case, lambda case: fresh.triage(case, HARNESS_MISTAKES), argv)


if __name__ == "__main__":
    main()
