"""Sixteenth hostile audit (issue 45): >= 520 new inputs, each with its expectation decided before the first run.

A hostile, demanding new user with fresh eyes, led by a count of how often the earlier rounds' files name each
public callable and each subcommand option (``tests/hostile_audit_round16_coverage.py``: 179 of 419 public
callables named at most once; the least named first), and by the API pages read as a new user reads them:

* the public API (:mod:`hostile_audit_round16_api`): ``reward_preference`` (REINFORCE++ included) against a
  count-vector enumeration; binary stationary policies on a new ``pi_ref`` x ``beta`` grid under six closed forms and
  at finite G against a bisection; ``closed_form`` called directly (the filtered and entropy forms against a
  bisection of the conditions docs/guide.md states); every root of the large-G direct ``h``; RLHF, NLHF and its
  residual; the ``kl`` module with clamps; callables no earlier round named (``stationary_policy_batch``,
  ``reinforce_pp_expectations``, ``pooled_expectations``, ``full_space_flow``, ``answer_weights``, ``proximal_map``,
  ``may_collapse``, ``binary_rewards``); ``predict`` at new counts; types and arguments at their documented edges;
* the command line (:mod:`hostile_audit_round16_cli`): ``solve --json``'s every row, trainer configs as users have
  them and the policy ``explain`` prints, ``predict``'s least-named options and sample files as users have them, the
  other subcommands' least-named options, the README's and guide's examples with changed values, SIGTERM / SIGINT
  then a rerun.

Every check compares with :mod:`hostile_audit_round16_ref`, which imports nothing of ``grpo_theory``.
Expectations and classes are those of :mod:`hostile_audit_round8` (``ok`` with a check, ``error`` naming
``names``, ``either``, ``warn``; ``clean``, ``correct``, ``traceback``, ``hang``, ``silent``, ``accepted``,
``misleading``, ``unhelpful``, ``refused_valid``).

Slow, not in the default run: ``python tests/hostile_audit_round16.py [--group G] [--sample N] [--count] [--csv PATH]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_audit_fresh as fresh  # noqa: E402  (selection, table, triage, the 60 s hang limit)


def all_cases() -> list[dict]:
    """Every case of the round (:func:`hostile_audit_fresh.referenced_round_cases`)."""
    return fresh.referenced_round_cases(16)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {
    "stationary_points(binary, n_grid=3): the one interior point is Eq. 14":
        "stationary_points documents n_grid '(>= 11)'; the refusal names n_grid, 3 and [11, 10000000]",
    "unbiased_pass_at_k(n=9, c=3, k=10) (k > n)":
        "unbiased_pass_at_k documents 'nan where k > n' (its example: unbiased_pass_at_k([4, 8], [1, 1], 8) -> "
        "[nan, ...]): not estimable, not an error",
    "sweep --dask-workers 0":
        "sweep --help gives --dask-workers '(default: 0)': 0 is the default, no cluster; the 3 cases ran locally",
    "potential_objective at G=4 (documented: G = inf only)":
        "the refusal names the value (G=4) and what is expected ('for G = inf, scale normalisation, std_eps = 0') in "
        "the docstring's own terms (G, not the field's name group_size)",
    "rloo_expectations(levels not increasing [2, 0.5, 0])":
        "RLOO's E_l = v_l - mu does not depend on the levels' order, and the call returns (1.35, -0.15, -0.65) = "
        "v - (2 x 0.2 + 0.5 x 0.5), its signed parts the sorted call's permuted; levels in any order are valid "
        "since the estimators' entries sort them for the hooks (pass@k, which read its first level as fail, was "
        "the one they mattered for: tests/test_hostile_round16.py)",
    "validate --study smollm2 --model-dir missing_dir":
        "the in-process harness stubs cli._run_study (hostile_audit_inputs._stubs), where validate checks the model "
        "folder; the real command exits 2 with 'missing_dir/SmolLM2-135M-Instruct.Q4_1.gguf not found: run "
        "`grpo-theory fetch-model` first (or give --model-dir)'",
    "solve --pi-ref 3 7 (odds, not probabilities)":
        "'pi_ref must sum to 1, got sum 10.0 for [3.0, 7.0]' names the input by the name the README gives it "
        "(pi_ref), its values and what was expected; the harness demanded the option's spelling 'pi-ref'",
}

#: The first run's library findings left open (the after-fix run's library rows), by input label (docs/reliability.md).
OPEN_FINDINGS: tuple[str, ...] = (
    # now refused up front (over 2,000 answers in pi_ref's support, work ~K^3) instead of hanging: the answer needs
    # a solver that does not solve a dense system in every logit (the solvers are frozen)
    "stationary_policy 10,000 outputs, two reward levels (p = 0.3382), G=2 beta=0.4: class mass Eq. 14, within a class "
    "proportional to pi_ref",
)


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
    return fresh.referenced_round_main(16, all_cases(), classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
