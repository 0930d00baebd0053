"""Fifth hostile audit (issue 45): >= 520 new inputs, each classified automatically.

A hostile new user with fresh eyes, of every subcommand and of the public Python API. The cases
(:mod:`hostile_audit_round5_api`, ``_api2``, ``_api3``, :mod:`hostile_audit_round5_cli`, ``_cli2``) are new:
misspelt keywords on every public function, NumPy integers of every width, negative zero, subnormals,
``pandas.NA``, integers beyond double precision, round trips of ``Question``/``Objective``, results at their
edges, the closed forms no earlier audit tried, pass@k and the intervals, the registries; on the command line:
environment variables (``NO_COLOR``, ``COLUMNS=1``, ``LANG=C``, no ``HOME``, an unwritable ``TMPDIR``), ``-``
for stdin, samples files whose layout changes part-way, very long argument lists, repeated and abbreviated
options, option combinations, and trainer configs with edge values in the fields no audit tried.

Classes and expectations are those of :mod:`hostile_audit_fresh` (``ok``/``error``/``warn``/``either``;
``clean``, ``correct``, ``traceback``, ``hang`` past 60 s, ``silent``, ``accepted``, ``misleading``,
``unhelpful``, ``refused_valid``). A case with ``env`` or ``stdin`` runs in a subprocess
(:func:`run_subprocess_case`).

Slow, not in the default run: ``python tests/hostile_audit_round5.py [--group G] [--sample N] [--csv PATH]``.
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
    import hostile_audit_round5_api as a1
    import hostile_audit_round5_api2 as a2
    import hostile_audit_round5_api3 as a3
    import hostile_audit_round5_cli as c1
    import hostile_audit_round5_cli2 as c2

    out = (a1.wrong_keyword_cases() + a1.numeric_type_cases() + a2.round_trip_cases() + a2.result_edge_cases()
           + a3.closed_form_cases() + a3.pass_at_k_cases() + a3.registry_cases()
           + c1.env_cases() + c1.stdin_cases() + c1.layout_cases() + c1.argv_cases()
           + c2.config_cases() + c2.combination_cases())
    for c in out:
        c.setdefault("hang_s", HANG_S)
        c.setdefault("names", [])
    return out


def _py(argv):
    return [sys.executable, "-c", "import sys; from grpo_theory.cli import main; sys.exit(main())", *argv]


def run_subprocess_case(case: dict, tmp: Path) -> tuple[str, str]:
    """Run the command in a real process, with ``case['env']`` changes and ``case['stdin']`` as its input."""
    hi._write(tmp, case.get("files", {}))
    env = fresh.cli_env()
    for k, v in case.get("env", {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v.replace("<tmp>", str(tmp))
    if case.get("setup"):
        case["setup"](tmp)
    try:
        p = subprocess.run(_py(case["argv"]), cwd=tmp, env=env, input=case.get("stdin", ""), capture_output=True,
                           text=True, timeout=HANG_S)
    except subprocess.TimeoutExpired:
        return "hang", f"over {HANG_S} s"
    finally:
        if case.get("teardown"):
            case["teardown"](tmp)
    err = p.stderr
    lines = fresh.stderr_lines(err)
    msg = lines[-1] if lines else ""
    if "Traceback" in err:
        return "traceback", msg
    res = dict(rc=p.returncode, message=msg if p.returncode else "", warned=" ".join(lines) + " " + p.stdout,
               out=p.stdout, value=None, error=None)
    if p.returncode not in (0, 1, 2):
        return "traceback", f"exit {p.returncode}: {msg}"
    if p.returncode == 2 and not msg.startswith("grpo-theory"):
        return "unhelpful", msg
    expect = case["expect"]
    if expect == "either":
        expect = "ok" if p.returncode == 0 else "error"
    return hi.classify(dict(case, expect=expect), res, tmp), (msg or p.stdout.strip()[:200])


def classify_case(case: dict, tmp: Path) -> tuple[str, str]:
    if "env" in case or "stdin" in case:
        return run_subprocess_case(case, tmp)
    return fresh.classify_case(case, tmp)


#: The first run's results that were the harness's mistakes, by input label: why (docs/reliability.md).
HARNESS_MISTAKES = {
    "kl.estimator_value without an estimator": "Objective's default estimator is k3",
    "large_group_direct_h p=0": "h = -inf at p = 0 is the exact value",
    "--trl-version of 100,000 characters": "a syntactically valid version, answered",
    "figures --only 999": "the stub replaced the check; the real command refuses in one line",
    "figures --results a file": "the stub replaced the check; the real command refuses in one line",
    "figures --trained a CSV without the columns": "the stub replaced the check; the real command refuses",
    "sweep grid with beta: '5e-1' (text)": "documented: a grid's YAML number-like text is read as the number",
    "flow t negative [-1, 0]": "the flow is autonomous: a time origin of -1 is valid",
    "JSONL: n as text on line 2": "text read as the number, as in CSV",
    "solve --pi --rew --be": "--rew is ambiguous (--rewards, --reward-levels, --reward-probs)",
    "kl.estimator_value(k3, -745.0)": "inf is right (exp(745) overflows); the check compared inf with inf",
    "solve --beta ' 0.5 ' (spaces)": "the check parsed JSON from a run without --json",
    "predict --framework twice": "the check used Eq. 14; the TRL config has ddof 1 and eps 1e-4",
    "predict --framework trl with --sample-temperature 0.7 (equal)": "the check used Eq. 14; ddof 1, eps 1e-4",
    "stationary_points, 6 classes, G=3, reverse": "the reference's std of three equal floats (0.8) is 1e-17, not 0",
    "stationary_points, 12 classes, G=3, reverse": "the reference's std of three equal floats is not 0",
    "Objective attribute assignment obj.beta = -1": "a frozen dataclass refusing assignment (names beta) is right",
    "variants.register(5)": "names the type given (int)",
    "MPLBACKEND=nonexistent predict with figures": "names the backend value",
    "predict --penalty direct --kl-estimator k1 --kl-placement reward": "names --penalty and --kl-*",
    "predict --seed 2**70 with --measured --holdout": "the harness gave 2 measured prompts; the error says so",
    "--measured with a level column the samples lack": "names the levels",
    "CSV: count column 3.5": "names the first bad count (6.5)",
    "binary_pairwise(0.3, 0.5, gamma=-0.0)": "gamma = 0 is documented (a tie: x = p), and -0.0 == 0",
}
HARNESS_PREFIXES = ("binomial_interval(0, ", "binomial_interval(50, 50")   # documented one-sided at 0 and n


def triage(case: dict) -> str:
    """``''`` for clean/correct; else ``harness: why`` or ``library``."""
    return fresh.triage(case, HARNESS_MISTAKES, HARNESS_PREFIXES, "documented one-sided interval at correct = 0 or n")


def main(argv=None) -> collections.Counter:
    return fresh.round_main(all_cases(), classify_case, triage, argv)


if __name__ == "__main__":
    main()
