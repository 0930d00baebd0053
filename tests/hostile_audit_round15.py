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
    import hostile_audit_round15_ref as ref

    cases = api.all_api_cases() + cli.all_cli_cases()
    recorded = [r10._recording({"hang_s": fresh.HANG_S, "names": [], **c}) for c in cases]
    return fresh.noting_reference(recorded, ref)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
_FACE = ("the reference's RK4 end (t = 200 or 600) was not at the end: near a face a class of mass m moves at m^2 times "
         "its drift, and RK4 keeps moving towards the library's point (first case: pi(0) = 1.44e-3, 5.32e-4, 2.30e-4 at "
         "t = 600, 2000, 6000; the library's 4.16e-5), whose direct-rest residual with the enumerated P_G is below 1e-8")
HARNESS_MISTAKES: dict[str, str] = {
    "direct G=400 p=0.2 beta=0.3":
        "the reference's bisection evaluated log1p(-x) at x = 1.0 (the root is at logit 65.2, 1 - x = 4.85e-29, not a "
        "double below 1); the drift written in the limit k = G - 1 gives z = 66.583 - 1.386 = 65.197, pi(b) = 4.85e-29, "
        "the library's 4.845e-29",
    **{lab: _FACE for lab in (
        "direct n=3 G=2 beta=0.1 pi_ref=[0.4479, 0.0633, 0.4888] rewards=[0.202, 0.04, 0.343]",
        "direct n=3 G=3 beta=0.1 pi_ref=[0.6185, 0.2851, 0.0965] rewards=[0.306, 0.457, 0.283]",
        "direct n=4 G=3 beta=0.1 pi_ref=[0.4156, 0.1437, 0.011, 0.4297] rewards=[0.621, 0.618, 0.919, 0.626]",
        "direct n=4 G=3 beta=0.4 pi_ref=[0.4014, 0.0551, 0.4871, 0.0563] rewards=[0.961, 0.165, 0.324, 0.627]")},
    "ascent lr=0 stays at pi0": "ascent documents lr > 0 (a step size); the refusal names lr, 0.0 and (0, inf)",
    "Question pi_ref float16 [0.1, 0.9] (does not sum to 1 in float64: 0.99990845)":
        "the validation layer documents 4 ulps per entry of the input's own precision for float16/float32 "
        "(probability_tolerance): 9.2e-5 is within 2 x 4 x 9.8e-4",
    "openrlhf_family(entropy_loss_coef='abc' (text)): refused, or a warning naming it":
        "the harness's lookup gave no advantage_estimator, which the function reads first: a true reason, found first",
    "summary_columns(a list of dicts without the report columns)":
        "the documented argument is a DataFrame: 'table must be a pandas DataFrame, got [...] (list)' is a true reason, "
        "found first",
    "calibration_split(size=1)": "names the value 1 and the limit (at least 2 measured prompts), in the caller's terms",
    "verl YAML adv_estimator: gae (PPO with a critic, not GRPO)":
        "explain answers objective null with the reason naming 'gae' (not modelled: no group baseline), exit 0: what "
        "explain is for",
    "verl run script with $VAR values (kl_loss_coef=$KL)":
        "the reader expands a variable the script sets above the command (KL=0.03 reads beta 0.03; unset, it refuses "
        "naming $KL and the key): right",
    "OpenRLHF group_norm n=2, kl in the loss k2 0.05 (ddof 1, eps 1e-9): direct":
        "OpenRLHF clamps every estimator's value to [-10, 10] (SPEC section 8); at the unclamped direct rest "
        "lr(b) = -12.94 and k2 = 83.7 > 10, so the clamp binds and the harness's closed form does not apply (the "
        "library warns that the clamp is active)",
    "solve --preference at G=4 (a matrix defines only G = 2)":
        "solve answers RLHF and NLHF (which do not depend on G) and marks each GRPO row n/a with the reason naming "
        "the preference matrix and G = 2",
    "predict --slow-tol 0 (the strictest) with --clock 0.1 --steps 10: runs":
        "a tolerance of 0 flags every prompt at any finite time; the option's range (0, 1] is named in the refusal",
}

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
