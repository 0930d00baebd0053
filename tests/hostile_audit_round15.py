"""Fifteenth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, led by a count of how often the earlier rounds' files name each
public callable and each subcommand option (the least named first):

* the public API (:mod:`hostile_audit_round15_api`): ``reward_preference`` against an ordered-tuple enumeration;
  binary stationary policies at extreme ``pi_ref`` / ``beta`` against the closed forms and at finite G against a
  bisection; family and trainer-KL settings whose answer is a closed form; three and four outputs against Eq. 11's
  residual and an RK4 flow; log pooling at extremes; ``dynamics`` against RK4 / Euler; answer trees of odd shapes;
  numpy / pandas input types; the least-named callables; ``predict`` on odd samples;
* the command line (:mod:`hostile_audit_round15_cli`): trainer configs as users write them, ``solve --json`` with
  random rewards and preferences, ``predict`` on odd files, the docs' blocks and commands, work at the size limits,
  two processes on one ``--out``.

Every check compares with :mod:`hostile_audit_round15_ref`, which imports nothing of ``grpo_theory``.
Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``warn``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``, ``accepted``,
``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round15.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)
import hostile_audit_round10 as r10  # noqa: E402  (round eight's classes, a failed check's reason kept)


def all_cases() -> list[dict]:
    """Every case of the round, with the hang limit and an empty ``names`` where not given; each check noted as
    comparing with the reference (``case["ref"]``) when a function of :mod:`hostile_audit_round15_ref` (or the
    part-one comparison of arrays with the enumeration) ran inside it."""
    import hostile_audit_round15_api as api
    import hostile_audit_round15_cli as cli

    cases = api.all_api_cases() + cli.all_cli_cases()
    return [_noting_ref(r10._recording({"hang_s": fresh.HANG_S, "names": [], **c})) for c in cases]


_REF_CALLS = [0]


def _counted(fn):
    def wrapped(*args, **kw):
        _REF_CALLS[0] += 1
        return fn(*args, **kw)
    return wrapped


def _count_reference_calls() -> None:
    """Every public function of the reference (and part one's array comparison) counts its calls, once."""
    import hostile_audit_round15_ref as ref

    if getattr(ref, "_counted", False):
        return
    for name in [n for n in vars(ref) if not n.startswith("_")]:
        fn = getattr(ref, name)
        if callable(fn) and getattr(fn, "__module__", "") == ref.__name__:
            setattr(ref, name, _counted(fn))
    ref._counted = True


def _noting_ref(case: dict) -> dict:
    check_key = "after" if "shell" in case else "check"
    check = case.get(check_key)
    if check is None:
        return case
    _count_reference_calls()

    def noted(*args):
        before = _REF_CALLS[0]
        try:
            return check(*args)
        finally:
            case["ref"] = _REF_CALLS[0] > before
    case[check_key] = noted
    return case


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {}

#: The first run's library findings left open (the second run's library rows), by input label (docs/reliability.md).
OPEN_FINDINGS: tuple[str, ...] = ()


def triage_of(case: dict) -> str:
    """``harness: why`` (:data:`HARNESS_MISTAKES`), ``library`` (open ones: :data:`OPEN_FINDINGS`), or empty."""
    return fresh.triage(case, HARNESS_MISTAKES)


def classify_case(case: dict, tmp) -> tuple[str, str]:
    """:func:`hostile_audit_round10.classify_case`; a failed check of a case with ``bad_class`` (a warning that names
    the wrong thing) is that class, not ``silent``."""
    cls, message = r10.classify_case(case, tmp)
    if cls == "silent" and case.get("bad_class"):
        cls = case["bad_class"]
    return cls, message


def main(argv=None):
    """The round's command line (module doc); returns the classes' counts and prints how many correct rows were
    compared with the reference."""
    cases = all_cases()
    counts = fresh.round_main(cases, classify_case, triage_of, argv)
    n_ref = sum(1 for c in cases if c.get("ref") and c.get("cls") == "correct")
    if counts:
        print(f"{n_ref} correct rows compared with the reference (hostile_audit_round15_ref)")
    return counts


if __name__ == "__main__":
    main()
