"""Cases of the thirteenth hostile audit (issue 45), part three: the command line at and near beta = 0.

* ``solve`` / ``sweep`` given ``--beta 0`` in its spellings (``0``, ``-0``, ``0e0``, ``-0.0``, ``.0``) or a grid
  with a 0 in it: one line, exit 2, "unregularised"; ``--beta 5e-324`` / ``1e-300`` solved (``--json``, the
  tail ``pi(b)`` against Eq. 14 written without cancellation);
* ``predict --beta 0``: refused without a finite-time mode (naming ``--measured``); with ``--clock``/``--steps``
  every ``at_step_<s>`` against the reference's RK4 of each prompt's own flow at ``t = clock x s``, ``pred = 1``
  for ``p_ref > 0`` and ``vertex_fraction = 1``; with ``--fit`` the fitted clock reproduces the mean reward; with
  ``--measured`` the shared-weights flow's ``pred_finite`` recomputed from the reported fit;
* ``predict`` / ``explain`` with trainer configs that have no KL (TRL ``beta: 0``, verl without KL, OpenRLHF
  ``init_kl_coef: 0``): the warning, and the same refusal / finite-time answer.

Tolerances. ``at_step_<s>``: the library's flow table (BDF at rtol ~1e-6, interpolated in time on a geometric grid),
the reference's RK4 with 4000 steps (error < 1e-8): 1e-3 absolute, as in part two; a wrong field moves them by more
than 1e-2 at the times used (0.5 to 5). ``pred_finite``: 1e-4 absolute (round 12). The fitted clock's mean: 1e-3.
``--json`` tails: 1e-6 relative + 1e-320 absolute (JSON keeps 17 significant digits).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import hostile_audit_round12_ref as ref
import hostile_audit_round13_ref as r13
from hostile_audit_fresh import cli_case as _cli

ROWS = [("a", 10, 3), ("b", 20, 10), ("c", 8, 1), ("d", 16, 12), ("e", 12, 6), ("f", 30, 4)]
NEVER = ROWS + [("g", 10, 0)]
UNREG = ["unregularised"]


def _counts(rows, header="prompt_id,n,correct"):
    return header + "\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows)


def _table(tmp, folder="o"):
    with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _summary(tmp, folder="o"):
    return json.loads((Path(tmp) / folder / "summary.json").read_text())


def _steps_check(rows, steps, clock=None, mean_reward=None, time_factor=1.0):
    """at_step_<s> against each prompt's own RK4 flow at beta = 0; pred = 1; vertex_fraction = 1. ``time_factor``:
    the advantage's scale relative to the note's (ddof 1 at G = 2: std sqrt(1/2) instead of 1/2, so every advantage,
    and at beta = 0 the whole drift, is 1/sqrt(2) of the note's: the same flow at time t / sqrt(2))."""
    def check(tmp, res):
        table = {r["prompt_id"]: r for r in _table(tmp)}
        summ = _summary(tmp)
        c = summ.get("clock") if clock is None else clock
        if c is None:
            c = summ.get("finite", {}).get("clock")
        if float(summ.get("vertex_fraction", -1)) != 1.0:
            raise AssertionError(f"vertex_fraction {summ.get('vertex_fraction')} at beta = 0")
        if "stationary_limit" not in summ:
            raise AssertionError("no stationary_limit in summary.json at beta = 0")
        for pid, n, k in rows:
            r = table[pid]
            if k > 0 and float(r["pred"]) != 1.0:
                raise AssertionError(f"{pid}: pred {r['pred']} at beta = 0 (the flow's limit is 1)")
            for s in steps:
                p = k / n
                want = ref.finite_flow([p], [p], 0.0, float(c) * s * time_factor, n_steps=4000)[0]
                got = float(r[f"at_step_{s:g}"])
                if abs(got - want) > 1e-3:
                    raise AssertionError(f"{pid}: at_step_{s:g} {got} != RK4 {want} (clock {c})")
        if mean_reward is not None:
            s = steps[-1]
            m = sum(float(table[pid][f"at_step_{s:g}"]) for pid, _, _ in rows) / len(rows)
            if abs(m - mean_reward) > 1e-3:
                raise AssertionError(f"mean at_step_{s:g} {m} != the fitted mean reward {mean_reward}")
        return True
    return check


def _finite_check0(rows):
    """pred_finite at beta = 0 recomputed from the reported fit (t, rho) by the reference's RK4."""
    def check(tmp, res):
        table = {r["prompt_id"]: r for r in _table(tmp)}
        fin = _summary(tmp)["finite"]
        fit, model = fin["fit"], fin["model"]
        rho = float(fit.get("rho") or 0.0) if model == "coupled" else 0.0
        p = [c / n for _, n, c in rows]
        steps = int(min(40000, max(1000, 40 * fit["t"])))
        want = ref.finite_flow(p, p, 0.0, fit["t"], rho=rho, n_steps=steps)
        for (pid, n, c), w in zip(rows, want):
            r = table[pid]
            if float(r["pred"]) != 1.0:
                raise AssertionError(f"{pid}: pred {r['pred']} at beta = 0")
            if abs(float(r["pred_finite"]) - w) > 1e-4:
                raise AssertionError(f"{pid}: pred_finite {r['pred_finite']} != RK4 {w} (t {fit['t']}, rho {rho})")
        return True
    return check


def _json_tail(b, p=0.3, direct=False):
    want = r13.direct_g2_tail(p, b) if direct else r13.eq14_tail(p, b)

    def check(tmp, res):
        d = json.loads(res["out"])
        row = next(r for r in d["rows"] if r["method"].startswith("GRPO"))
        got = float(row["pi"][1])
        if abs(got - want) > 1e-6 * want + 1e-320:
            raise AssertionError(f"pi(b) = {got}, the tail {want} ({row['method']})")
        return True
    return check


def solve_sweep_cases() -> list[dict]:
    G_ = "CLI: solve / sweep at beta = 0 (refused) and near it (solved)"
    out = []
    base = ["solve", "--pi-ref", "0.35", "0.65", "--rewards", "1", "0"]
    for b in ("0", "0.0", "-0.0", "0e0", ".0", "0e-999", "-0e5", "+0"):
        out.append(_cli(G_, f"solve binary --beta {b}", base + ["--beta", b], "error", UNREG))
    for b, extra in [("0", ["--json"]), ("0", ["--group-size", "inf"]), ("0", ["--group-size", "8"]),
                     ("0", ["--std-ddof", "1", "--std-eps", "1e-4"]), ("-0.0", ["--json", "--group-size", "4"])]:
        out.append(_cli(G_, f"solve binary --beta {b} {' '.join(extra)}", base + ["--beta", b, *extra], "error", UNREG))
    out.append(_cli(G_, "solve 3 answers --beta 0", ["solve", "--pi-ref", "0.2", "0.5", "0.3", "--rewards", "1", "0",
                                                     "0.4", "--beta", "0"], "error", UNREG))
    out.append(_cli(G_, "solve reward law --beta 0", ["solve", "--pi-ref", "0.5", "0.5", "--reward-levels", "0", "1",
                                                      "--reward-probs", "0.2", "0.8", "0.9", "0.1", "--beta", "0"],
                    "error", UNREG))
    for b in ("0x0", "zero", "0,0", "0 ", "nan0"):
        out.append(_cli(G_, f"solve binary --beta {b!r}", base + ["--beta", b], "error", ["--beta", b.strip()]))
    for b, p in [(5e-324, 0.35), (1e-300, 0.35), (1e-300, 0.95), (1e-200, 0.5), (1e-20, 0.35)]:
        out.append(_cli(G_, f"solve binary p={p} --beta {b!r} --json: pi(b) against Eq. 14's tail",
                        ["solve", "--pi-ref", str(p), repr(1 - p), "--rewards", "1", "0", "--beta", repr(b), "--json"],
                        "either", ["beta"], check=lambda tmp, res, b=b, p=p: _json_tail(b, p)(tmp, res)))
    grid = "objectives: {{beta: {betas}, group_size: 4}}\nsimplex: {{rewards: [1, 0, 0.5], step: 0.25}}\n"
    for lab, betas in [("[0, 0.5]", "[0, 0.5]"), ("[0.0]", "[0.0]"), ("[-0.0, 1.0]", "[-0.0, 1.0]"),
                       ("[0.5, 0]", "[0.5, 0]")]:
        out.append(_cli(G_, f"sweep a grid with beta: {lab}", ["sweep", "g.yaml", "--no-progress"], "error", UNREG,
                        files={"g.yaml": grid.format(betas=betas)}))
    out.append(_cli(G_, "sweep a grid with beta: [1.0e-300, 0.5] (tiny, regularised)",
                    ["sweep", "g.yaml", "--no-progress"], "either", ["beta"],
                    files={"g.yaml": grid.format(betas="[1.0e-300, 0.5]")},
                    check=lambda tmp, res: (Path(tmp) / "g.csv").exists()))
    return out


def predict_cases() -> list[dict]:
    G_ = "CLI: predict at beta = 0 (finite-time modes; reference: RK4 of each prompt's flow)"
    out = []
    files = {"s.csv": _counts(ROWS)}
    common = ["--out", "o", "--no-plots", "--no-progress"]
    for b, extra in [("-0.0", []), ("0e0", []), ("0", ["--k", "1", "4"]), ("0", ["--interval", "wilson"])]:
        out.append(_cli(G_, f"predict --beta {b} {' '.join(extra)} (no finite-time mode)",
                        ["predict", "s.csv", "--beta", b, *extra, *common], "error", ["--measured"], files=files))
    out.append(_cli(G_, "predict --beta 0 --steps 10 (no clock)", ["predict", "s.csv", "--beta", "0", "--steps", "10",
                                                                   *common], "error", ["--clock"], files=files))
    out.append(_cli(G_, "predict --beta 0 --tradeoff-betas 0.1 0.5 (no finite-time mode)",
                    ["predict", "s.csv", "--beta", "0", "--tradeoff-betas", "0.1", "0.5", *common], "error",
                    ["--measured"], files=files))
    for b, clock, steps, G in [("0", 0.05, [10, 60], 2), ("-0.0", 0.05, [10, 60], 2), ("0", 0.01, [100], 2),
                               ("0", 0.2, [5, 20], 2), ("0", 0.1, [3], 2), ("0e0", 0.05, [40], 2)]:
        argv = ["predict", "s.csv", "--beta", b, "--group-size", str(G), "--clock", str(clock), "--steps",
                *[str(s) for s in steps], *common]
        out.append(_cli(G_, f"predict --beta {b} --clock {clock} --steps {steps}: at_step against RK4, pred 1, "
                            "vertex_fraction 1", argv, "ok", files=files, check=_steps_check(ROWS, steps, clock=clock)))
    out.append(_cli(G_, "predict --beta 0 --clock 0.05 --steps 20 with a never-solved prompt (0 of 10)",
                    ["predict", "s.csv", "--beta", "0", "--clock", "0.05", "--steps", "20", *common], "ok",
                    files={"s.csv": _counts(NEVER)},
                    check=lambda tmp, res: (float({r["prompt_id"]: r for r in _table(tmp)}["g"]["pred"]) == 0.0
                                            and _steps_check(ROWS, [20], clock=0.05)(tmp, res))))
    for step, mean in [(50, 0.7), (100, 0.55), (20, 0.8)]:
        out.append(_cli(G_, f"predict --beta 0 --fit {step} {mean}: the fitted clock reproduces the mean reward",
                        ["predict", "s.csv", "--beta", "0", "--fit", str(step), str(mean), *common], "ok", files=files,
                        check=_steps_check(ROWS, [step], mean_reward=mean)))
    out.append(_cli(G_, "predict --beta 0 --fit 50 0.2 (below the start's mean 0.39: the flow only rises)",
                    ["predict", "s.csv", "--beta", "0", "--fit", "50", "0.2", *common], "error", ["0.2"], files=files))
    out.append(_cli(G_, "predict --beta 0 --fit 50 1.0 (reached only in the limit)",
                    ["predict", "s.csv", "--beta", "0", "--fit", "50", "1.0", *common], "error", ["1"], files=files))
    out.append(_cli(G_, "predict --beta 0 --clock 0 --steps 10", ["predict", "s.csv", "--beta", "0", "--clock", "0",
                                                                   "--steps", "10", *common], "error", ["clock"],
                    files=files))
    out.append(_cli(G_, "predict --beta 0 --clock 1e6 --steps 1e6 (beyond the flows' range)",
                    ["predict", "s.csv", "--beta", "0", "--clock", "1e6", "--steps", "1e6", *common], "error",
                    ["step"], files=files))
    rows24 = [(f"q{i:02d}", 10 + i, 1 + (i * 7) % (9 + i)) for i in range(16)]
    aft = [(pid, 32, min(31, int(round(32 * min(0.95, c / n + 0.2))))) for pid, n, c in rows24[::2]]
    mfiles = {"b.csv": _counts(rows24), "a.csv": _counts(aft)}
    for b, extra in [("0", []), ("-0.0", []), ("0", ["--rhos", "0", "0.5", "1"]), ("0", ["--seed", "7"])]:
        out.append(_cli(G_, f"predict --beta {b} --measured (16 prompts, 8 measured) {' '.join(extra)}: pred_finite "
                            "against RK4 from the reported fit",
                        ["predict", "b.csv", "--beta", b, "--measured", "a.csv", *common, *extra], "ok", files=mfiles,
                        check=_finite_check0(rows24)))
    out.append(_cli(G_, "predict --beta 0 --measured with graded levels (count_0, count_0.5, count_1)",
                    ["predict", "g.csv", "--beta", "0", "--measured", "g2.csv", *common], "error", ["beta"],
                    files={"g.csv": "prompt_id,count_0,count_0.5,count_1\na,3,2,5\nb,1,1,8\nc,5,0,5\n",
                           "g2.csv": "prompt_id,count_0,count_0.5,count_1\na,1,2,7\nb,0,1,9\nc,2,0,8\n"}))
    for b, p in [("1e-250", None), ("3e-320", None)]:
        def chk(tmp, res, b=float(b)):
            for pid, n, c in ROWS:
                r = {x["prompt_id"]: x for x in _table(tmp)}[pid]
                want = 1 - r13.eq14_tail(c / n, b)
                if abs(float(r["pred"]) - want) > 1e-8:
                    raise AssertionError(f"{pid}: pred {r['pred']} != {want}")
            return True
        out.append(_cli(G_, f"predict --beta {b} (regularised): pred = Eq. 14 (1 to 8 digits)",
                        ["predict", "s.csv", "--beta", b, *common], "either", ["beta"], files=files, check=chk))
    return out


def config_cases() -> list[dict]:
    G_ = "CLI: predict / explain with trainer configs that have no KL term"
    out = []
    common = ["--out", "o", "--no-plots", "--no-progress"]
    files = {"s.csv": _counts(ROWS)}
    cfgs = [("trl", "c.json", json.dumps({"beta": 0.0, "num_generations": 2})),
            ("trl", "c.yaml", "beta: 0\nnum_generations: 2\n"),
            ("trl", "c.yaml", "beta: -0.0\nnum_generations: 2\n"),
            ("verl", "v.yaml", "algorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: false\nactor_rollout_ref:\n"
                               "  actor:\n    use_kl_loss: false\n  rollout:\n    n: 2\n"),
            ("verl", "v.yaml", "algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n"
                               "    kl_loss_coef: 0.0\n  rollout:\n    n: 2\n"),
            ("openrlhf", "o.json", json.dumps({"advantage_estimator": "group_norm", "init_kl_coef": 0,
                                               "n_samples_per_prompt": 2}))]
    for fw, name, text in cfgs:
        lab = f"{fw} {name} {' '.join(text.split())[:60]}"
        out.append(_cli(G_, f"explain --framework {lab}", ["explain", "--framework", fw, name], "warn", UNREG,
                        files={name: text}))
        out.append(_cli(G_, f"predict --framework {lab} (no finite-time mode)",
                        ["predict", "s.csv", "--framework", fw, name, *common], "error", ["--measured"],
                        files={**files, name: text}))
        out.append(_cli(G_, f"predict --framework {lab} --clock 0.05 --steps 30",
                        ["predict", "s.csv", "--framework", fw, name, "--clock", "0.05", "--steps", "30", *common],
                        "warn", UNREG, files={**files, name: text},
                        check=_steps_check(ROWS, [30], clock=0.05, time_factor=1 / math.sqrt(2))))
    out.append(_cli(G_, "explain --framework trl {'beta': 0, 'num_generations': 6, 'loss_type': 'grpo'} --json",
                    ["explain", "--framework", "trl", "c.json", "--json"], "warn", UNREG,
                    files={"c.json": json.dumps({"beta": 0, "num_generations": 6, "loss_type": "grpo"})},
                    check=lambda tmp, res: json.loads(res["out"])["objective"]["beta"] == 0))
    out.append(_cli(G_, "explain --framework verl no KL but entropy_coeff 0.01 (regularised)",
                    ["explain", "--framework", "verl", "v.yaml"], "ok", [],
                    files={"v.yaml": "algorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: false\nactor_rollout_ref:\n"
                                     "  actor:\n    use_kl_loss: false\n    entropy_coeff: 0.01\n  rollout:\n    n: 4\n"},
                    check=lambda tmp, res: "unregularised" not in res["out"]))
    out.append(_cli(G_, "predict --framework trl {'beta': 0} and --beta 0.5 both given",
                    ["predict", "s.csv", "--framework", "trl", "c.json", "--beta", "0.5", *common], "error",
                    ["--beta"], files={**files, "c.json": json.dumps({"beta": 0})}))
    return out


def all_cli_cases() -> list[dict]:
    return solve_sweep_cases() + predict_cases() + config_cases()
