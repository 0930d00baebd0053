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
_BASINS = ("basins are documented for two-class questions; a question of 3 or 4 classes is refused first for that, "
           "naming its class count (a true reason); the harness wanted 'unregularised'")
_NOTE_ADV = ("the copy of 'group' keeps is_note_advantage=True, which tells the solvers to use the note's own sums: the "
             "expectations hook is never called, and the result is Eq. 14's (0.71097722 at p = 0.3, beta = 0.5)")
_BROADCAST = "a length-1 array broadcasts against the other argument (NumPy's rule; documented for binomial_interval)"
HARNESS_MISTAKES: dict[str, str] = {
    **{f"dynamics.basins pi_ref={pr} rewards={rw} Objective(beta={z})": _BASINS
       for pr, rw in (("[0.2, 0.5, 0.3]", "[1.0, 0.0, 0.4]"), ("[0.25, 0.25, 0.25, 0.25]", "[0, 1, 2, 3]"))
       for z in ("0", "0.0", "-0.0", "np.float32(0)", "np.int64(0)", "np.float64(-0.0)")},
    **{f"closed_form.binary_entropy(0.3, 0.0, {c}) (entropy only)":
       "binary_entropy documents beta > 0 (its beta: 'beta > 0'); the same objective is solved by stationary_policy"
       for c in ("0.05", "0.5", "2.0")},
    "script_tokens('python x a=$((__import__(\"os\").getpid()))', 's.sh'): kept as written":
        "kept unevaluated, as documented; shlex drops the quotes as the shell does, so the token is "
        "a=$((__import__(os).getpid())), not the harness's quoted form",
    "register an advantage with name 'my group' (a space)": "no documented rule on an entry's name beyond a non-empty "
                                                              "text; lookup finds it",
    "a user advantage whose expectations are NaN: stationary_policy": _NOTE_ADV,
    "a user advantage whose expectations raise ZeroDivisionError: stationary_policy": _NOTE_ADV,
    "a user advantage with expectations 'no_such_module_xyz:fn': stationary_policy": _NOTE_ADV,
    "intervals.pass_at_k(0.3, 1e20)": "1e20 is a whole number, accepted as k; 1 - 0.7^(1e20) = 1, as returned",
    "intervals.binomial_interval([1, 2], [3])": _BROADCAST,
    "conformal.jeffreys_logit([1, 2], [3])": _BROADCAST,
    "calibrate.start_logits([5, 6], [1])": _BROADCAST,
    "free_scoring.fit_shift([0.2, 0.3], [0.5])": _BROADCAST,
    **{f"intervals.binomial_interval({c}, 20, level=0.9, method='wilson')":
       "at c = 0 or c = n the interval is one-sided with the exact bound 1 - (1 - level)^(1/n) (the docstring's "
       "example: 1 - 0.05^(1/100)); 1 - 0.1^(1/20) = 0.10875 and 0.1^(1/20) = 0.89125, as returned; the reference "
       "used Wilson's one-sided formula" for c in ("0", "20")},
    "conformal.calibration_split(1)": "names the rule (at least 2 measured prompts) and the value 1; the harness "
                                      "wanted the word 'size'",
    "free_prompts.choose_betas([0.3, 0.5], candidates=(1.0,))": "names the rule (at least two candidate betas) and "
                                                                "the value (1.0,); the harness wanted 'candidates'",
    "trl_stationary.newest_checkpoint(run with checkpoint-9, checkpoint-10, checkpoint-abc)":
        "a checkpoint counts only with its trainer_state.json (the code's rule; the harness made empty folders); "
        "the docstring does not say so",
}

#: The first run's library findings left open, by input label (docs/reliability.md): none; each is fixed by an
#: argument rule and pinned in tests/test_hostile_round13.py.
OPEN_FINDINGS: tuple[str, ...] = ()


def triage_of(case: dict) -> str:
    """A row's triage: its reason from :data:`HARNESS_MISTAKES` (``harness: why``), ``library`` for any other row that
    is neither clean nor correct (the open ones are :data:`OPEN_FINDINGS`), empty for a clean or correct one."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None):
    """Run the round with the command line's options (module doc) and return the classes' counts."""
    return fresh.round_main(all_cases(), r10.classify_case, triage_of, argv)


if __name__ == "__main__":
    main()
