"""Sixth hostile audit (issue 45): >= 520 new inputs, each classified automatically.

A hostile new user who reads only the README, docs/guide.md, docs/predict.md, docs/trl.md and ``--help``, and
goes where the five earlier rounds went least: random rewards and preference matrices, token-level answer
trees, the GRPO family's fields (:mod:`hostile_audit_round6_api`); the KL module's slopes and shifts, the output
gradient, the proximal map, the large-G potential, ``predict``'s finite-time pieces and the trainer's
configuration (:mod:`hostile_audit_round6_api2`); ``solve`` with random rewards, ``predict``'s table column by
column, ``explain`` on trainer fields no round read, sweep grids of the family, option combinations of
``validate``/``figures``, and the shell around the output: a reader that closes the pipe, ``/dev/full``, a closed
stdout (:mod:`hostile_audit_round6_cli`). Numbers are checked against :mod:`hostile_audit_round6_ref` (no
``grpo_theory`` import).

Classes and expectations are those of :mod:`hostile_audit_fresh` (``ok``/``error``/``warn``/``either``;
``clean``, ``correct``, ``traceback``, ``hang`` past 60 s, ``silent``, ``accepted``, ``misleading``,
``unhelpful``, ``refused_valid``), and two more expectations: ``flag`` (a warning or an error, either naming
``names``; run without a word it is ``accepted``) and, for ``shell`` cases run by ``bash`` in a real process,
``pipe`` (the reader closed the pipe early: no traceback, no ``Exception ignored`` noise, exit 0, 1, 2, 120 or
141), ``error`` (the output cannot be written: exit != 0 and one ``grpo-theory:`` line) and ``quiet`` (stderr
closed: exit 2, nothing else).

Slow, not in the default run: ``python tests/hostile_audit_round6.py [--group G] [--sample N] [--csv PATH]``.
"""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_audit_fresh as fresh  # noqa: E402  (the round-four runner: in-process, with an alarm)
import hostile_audit_inputs as hi  # noqa: E402

HANG_S = 60


def all_cases() -> list[dict]:
    import hostile_audit_round6_api as a1
    import hostile_audit_round6_api2 as a2
    import hostile_audit_round6_api3 as a3
    import hostile_audit_round6_cli as c1

    out = (a1.random_reward_cases() + a1.tree_cases() + a1.family_cases()
           + a2.kl_cases() + a2.dynamics_cases() + a2.predict_piece_cases() + a2.training_cases()
           + a3.predict_keyword_cases() + a3.probe_cases()
           + c1.solve_cases() + c1.predict_cases() + c1.explain_cases() + c1.sweep_cases() + c1.other_cases()
           + c1.shell_cases())
    for c in out:
        c.setdefault("hang_s", HANG_S)
        c.setdefault("names", [])
    return out


CLI = f"{sys.executable} -c 'import sys; from grpo_theory.cli import main; sys.exit(main())'"


def run_shell_case(case: dict, tmp: Path) -> tuple[str, str]:
    """Run ``case['shell']`` with ``{cli}`` replaced by the command, in ``bash -c``, in folder ``tmp``."""
    hi._write(tmp, case.get("files", {}))
    env = fresh.cli_env()
    cmd = "set -o pipefail; " + case["shell"].replace("{cli}", CLI) + "; echo \"rc=$?\" >> rc.txt"
    try:
        p = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, capture_output=True,
                           text=True, timeout=HANG_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "hang", f"over {HANG_S} s"
    rc_text = (tmp / "rc.txt").read_text().strip() if (tmp / "rc.txt").exists() else "rc=?"
    rc = int(rc_text.split("=")[1]) if rc_text[3:].lstrip("-").isdigit() else -1
    err = p.stderr
    lines = fresh.stderr_lines(err)
    msg = f"{rc_text}: " + " | ".join(lines[-2:])
    if "Traceback" in err:
        return "traceback", msg
    expect = case["expect"]
    if expect == "pipe":
        if "Exception ignored" in err:
            return "unhelpful", msg
        if rc not in (0, 1, 2, 120, 141):
            return "traceback", msg
        if case.get("after") and not case["after"](tmp):
            return "silent", msg + " (output folder neither complete nor marked)"
        return "correct", msg
    if expect == "quiet":
        return ("clean" if rc == 2 and not err.strip() else "unhelpful"), msg
    if rc == 0:
        return "accepted", msg
    if rc not in (1, 2):
        return "traceback", msg
    return ("clean" if len(lines) == 1 and lines[0].startswith("grpo-theory") else "unhelpful"), msg


def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    if "shell" in case:
        return run_shell_case(case, tmp)
    if case["expect"] == "flag":
        res = hi.execute(case, tmp)
        msg = res["message"] or res["warned"].strip()
        if res.get("where"):
            msg += f" (in {res['where']})"
        if res["error"]:
            return res["error"], msg
        sub = dict(case, expect="warn" if res["rc"] == 0 else "error")
        return hi.classify(sub, res, tmp), msg
    return fresh.classify_case(case, tmp)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES: dict[str, str] = {
    "Question a token that is a list": "names the answer (['A'], '$') and why (hashable tokens)",
    "Question answers an integer per answer": "names the value 1 and what an answer must be",
    "clamp_critical_beta without a value clamp": "says what it needs (a value-clamped KL in the loss) and what it got",
    "clamp_critical_beta, clamp in the reward placement": "says it needs the clamp in the loss, and got it in the reward",
    "reward_kl_tradeoff betas negative": "names beta and -0.5",
    "reward_kl_tradeoff betas nan": "names beta and nan",
    "discontinuities abs clamps log 2.0, value 1.5: each at a clamp edge":
        "abs's coefficient sign(lr) jumps at 0: (-1.5, 0.0, 1.5) is right",
    "predict --k 10**12": "documented: pass@k_before empty where k > n, pass@k_after 1 - (1 - pred)^k for every k",
    "predict(samples, obj, k=[1, 10**7])": "documented: pass@k_before empty where k > n",
    "predict(samples, obj, k=5 (not a sequence))": "read as (5,); pass@5_before 1 - C(7,5)/C(10,5) = 0.9167 checked",
    "grpo_steps clip_eps=inf": "no clipping; with one inner update the ratio is 1 and the clip never acts",
    "figures --force --resume": "they compose: --resume skips finished figures, --force redraws the others",
    # found after the first run, while fixing (docs/reliability.md)
    "synthetic_binary_task p_range=(0.9, 0.1)": "the same frequencies as (0.1, 0.9), shuffled: valid",
    "sampling_floor lengths 2 and 1": "one m for every q broadcasts; 0.19743 checked against math.comb sums",
    "Probe.question pi of 2 for 3 outputs": "after the fix the message names probs, the parameter's own name",
}


def triage(case: dict) -> str:
    """``''`` for clean/correct; else ``harness: why`` or ``library``."""
    return fresh.triage(case, HARNESS_MISTAKES)


def main(argv=None) -> collections.Counter:
    return fresh.round_main(all_cases(), classify_case, triage, argv)


if __name__ == "__main__":
    main()
