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


def all_cases() -> list[dict]:
    """Every case of the round (:func:`hostile_audit_fresh.referenced_round_cases`)."""
    return fresh.referenced_round_cases(18)


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


def classify_case(case: dict, tmp) -> tuple[str, str]:
    """The shared runner's :func:`hostile_audit_fresh.classify_in_child`: each case in a forked child killed past the
    hang limit."""
    return fresh.classify_in_child(case, tmp)


def main(argv=None):
    """The round's command line (module doc); returns the classes' counts and prints how many correct rows were
    compared with the reference."""
    return fresh.referenced_round_main(18, all_cases(), classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
