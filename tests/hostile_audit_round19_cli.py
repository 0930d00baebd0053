"""Cases of the nineteenth hostile audit (issue 45), part two: the command line, at the options earlier rounds name
least (``predict --penalty / --normalization / --kl-placement / --kl-log-ratio-clamp / --kl-value-clamp /
--interval / --slow-tol / --tradeoff-betas / --sample-temperature / --finite-level``, ``explain`` with config files).

* ``predict`` on one samples file under 13 objective forms x 2 betas: every prompt's ``pred`` against the closed
  forms (Eq. 14 / 15, the direct forms, the shift forms, log pooling for k1 in the reward, the k2-in-the-advantage
  bisection, the finite-G bisection, ddof 1 at G = 2 as Eq. 14 at ``gamma = 1/sqrt 2``), never-solved prompts against
  the reference ``zero_limit``, the KL and pass@k columns;
* ``predict --interval wilson|jeffreys --level``: ``p_ref_lo`` / ``p_ref_hi`` against Wilson's formula and the Beta
  quantiles;
* ``explain --json`` on TRL / verl / OpenRLHF configs as users write them (YAML, JSON, argv lists) whose rests have
  closed forms (shift + direct: log pooling at ``G beta/(G-1)``; k1 in the reward: log pooling at beta; shift +
  reverse: Eq. 14 at ``(G-1)/G``; OpenRLHF at G = 2: the direct form at ``gamma = 1/sqrt 2``);
* refused ``predict`` and ``explain`` lines, each naming the option or file at fault.

Tolerances: ``predictions.csv`` keeps 8 significant digits: 1e-7 relative plus 1e-9 absolute (KL columns 1e-6 plus
1e-9); ``explain --json`` keeps ``repr`` floats: 1e-8 relative plus 1e-15 (OpenRLHF's eps 1e-9: 1e-7).
"""

from __future__ import annotations

import csv
import json
import math

import hostile_audit_round19_ref as ref
from hostile_audit_fresh import cli_case as _cli

INF = math.inf
PROMPTS = [("p1", 10, 3), ("p2", 8, 1), ("p3", 20, 13), ("p4", 6, 0), ("p5", 12, 12), ("p6", 50, 7), ("p7", 9, 8)]
SAMPLES = "prompt_id,n,correct\n" + "".join(f"{a},{n},{c}\n" for a, n, c in PROMPTS)


def _rows(tmp):
    with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        return {r["prompt_id"]: r for r in csv.DictReader(fh)}


def _pred_check(rest, zero, skip_zero=False, ks=(), kl=False):
    """``rest(p)`` for 0 < p < 1, ``zero`` for p = 0 (None: not checked), 1 for p = 1."""
    def check(tmp, res):
        rows = _rows(tmp)
        for pid, n, c in PROMPTS:
            r = rows[pid]
            p = c / n
            if c == 0:
                if skip_zero or zero is None:
                    continue
                want = zero
            elif c == n:
                want = 1.0
            else:
                want = rest(p)
            bad = ref.close(float(r["pred"]), want, 1e-7, 1e-9)
            if bad is not True:
                raise AssertionError(f"{pid} pred: {bad}")
            for k in ks:
                wb = ref.unbiased_pass(n, c, k)
                if wb is not None:
                    bad = ref.close(float(r[f"pass@{k}_before"]), wb, 1e-7, 1e-9)
                    if bad is not True:
                        raise AssertionError(f"{pid} pass@{k}_before: {bad}")
                bad = ref.close(float(r[f"pass@{k}_after"]), 1 - (1 - float(r["pred"])) ** k, 1e-7, 1e-9)
                if bad is not True:
                    raise AssertionError(f"{pid} pass@{k}_after: {bad}")
            if kl and 0 < c < n:
                kd, kr = ref.kl_pair(want, p)
                for col, w in (("kl_direct", kd), ("kl_reverse", kr)):
                    bad = ref.close(float(r[col]), w, 1e-6, 1e-9)
                    if bad is not True:
                        raise AssertionError(f"{pid} {col}: {bad}")
        return True
    return check


def _argv(beta, *extra):
    return ["predict", "s.csv", "--beta", repr(beta), *extra, "--out", "o", "--no-plots", "--no-progress"]


def predict_cases() -> list[dict]:
    G_ = "CLI: predict under objective options, every prompt's pred against the reference"
    out = []
    s2 = 1 / math.sqrt(2)
    forms = [
        ("G=2 reverse (Eq. 14)", ["--group-size", "2"], lambda b: (lambda p: ref.x14(p, b)),
         lambda b: ref.zero_limit(2, b), dict(ks=(1, 3, 8), kl=True)),
        ("--penalty direct G=2", ["--group-size", "2", "--penalty", "direct"], lambda b: (lambda p: ref.xlogit(p, 1 / b)),
         lambda b: 0.0, dict(kl=True)),
        ("--normalization shift G=4", ["--group-size", "4", "--normalization", "shift"],
         lambda b: (lambda p: ref.x14(p, b, 0.75)), lambda b: ref.zero_limit(4, b, "shift"), {}),
        ("--normalization shift --penalty direct G=6", ["--group-size", "6", "--normalization", "shift", "--penalty",
                                                        "direct"],
         lambda b: (lambda p: ref.xlogit(p, 5 / 6 / b)), lambda b: 0.0, {}),
        ("G=inf (Eq. 15)", ["--group-size", "inf"], lambda b: (lambda p: ref.x15(p, b)),
         lambda b: ref.zero_limit(INF, b), {}),
        ("--kl-estimator k2 G=2", ["--group-size", "2", "--kl-estimator", "k2"], lambda b: (lambda p: ref.xlogit(p, 1 / b)),
         lambda b: 0.0, {}),
        ("--kl-estimator k3_ratio G=2", ["--group-size", "2", "--kl-estimator", "k3_ratio"],
         lambda b: (lambda p: ref.xlogit(p, 1 / b)), lambda b: 0.0, {}),
        ("--kl-estimator k1 --kl-placement advantage G=2", ["--group-size", "2", "--kl-estimator", "k1",
                                                            "--kl-placement", "advantage"],
         lambda b: (lambda p: ref.xlogit(p, 1 / b)), lambda b: 0.0, {}),
        ("--kl-estimator k1 --kl-placement reward G=4", ["--group-size", "4", "--kl-estimator", "k1", "--kl-placement",
                                                         "reward"],
         lambda b: (lambda p: ref.xlogit(p, 1 / b)), lambda b: 0.0, {}),
        ("--kl-estimator k2 --kl-placement advantage G=2", ["--group-size", "2", "--kl-estimator", "k2",
                                                            "--kl-placement", "advantage"],
         lambda b: (lambda p: ref.rest_k2_adv(p, b)), lambda b: 0.0, {}),
        ("--group-size 5 (finite G bisection)", ["--group-size", "5"], lambda b: (lambda p: ref.rest_finite(p, b, 5)),
         lambda b: ref.zero_limit(5, b), {}),
        ("--std-ddof 1 G=2 (Eq. 14 at gamma 1/sqrt 2)", ["--group-size", "2", "--std-ddof", "1"],
         lambda b: (lambda p: ref.x14(p, b, s2)), lambda b: max(0.0, 1 - b / s2), {}),
    ]
    for label, extra, rest, zero, kw in forms:
        for beta in (0.37, 1.9):
            out.append(_cli(G_, f"predict s.csv --beta {beta} {' '.join(extra)}: pred per prompt", _argv(beta, *extra,
                                                                                                      *(["--k", "1", "3", "8"] if kw.get("ks") else [])),
                            "ok", files={"s.csv": SAMPLES}, check=_pred_check(rest(beta), zero(beta), **kw)))
    # verl's low_var_kl clamps where they do not bind (checked per prompt by the reference; p = 0 not checked)
    for beta in (0.8, 2.6):
        def rest(p, beta=beta):
            return ref.x14(p, beta)
        binding = []
        for pid, n, c in PROMPTS:
            if 0 < c < n:
                x = rest(c / n)
                la, lb = math.log(x / (c / n)), math.log((1 - x) / (1 - c / n))
                binding.append(max(ref.kl_value("k3", la), ref.kl_value("k3", lb)) >= 10)
        if not any(binding):
            out.append(_cli(G_, f"predict s.csv --beta {beta} --kl-estimator k3 --kl-log-ratio-clamp 20 "
                                f"--kl-value-clamp 10 (not binding): Eq. 14",
                            _argv(beta, "--kl-estimator", "k3", "--kl-log-ratio-clamp", "20", "--kl-value-clamp", "10"),
                            "ok", files={"s.csv": SAMPLES}, check=_pred_check(rest, None, skip_zero=True)))
    # the p_ref interval
    for method in ("wilson", "jeffreys"):
        for level in (0.95, 0.8, 0.5):
            fn = ref.wilson if method == "wilson" else ref.jeffreys_interval

            def check(tmp, res, fn=fn, level=level):
                rows = _rows(tmp)
                for pid, n, c in PROMPTS:
                    lo, hi = fn(c, n, level)
                    bad = ref.close([float(rows[pid]["p_ref_lo"]), float(rows[pid]["p_ref_hi"])], [lo, hi], 1e-7, 1e-9)
                    if bad is not True:
                        raise AssertionError(f"{pid}: {bad}")
                return True
            out.append(_cli(G_, f"predict s.csv --beta 0.5 --interval {method} --level {level}: p_ref_lo, p_ref_hi",
                            _argv(0.5, "--interval", method, "--level", str(level)), "ok", files={"s.csv": SAMPLES},
                            check=check))
    return out


def predict_refused_cases() -> list[dict]:
    G_ = "CLI: refused predict lines at the least-tried options, each naming the option"
    R = [
        (["--kl-estimator", "k3", "--kl-log-ratio-clamp", "-1"], ["--kl-log-ratio-clamp"]),
        (["--kl-estimator", "k3", "--kl-log-ratio-clamp", "nan"], ["--kl-log-ratio-clamp"]),
        (["--kl-estimator", "k3", "--kl-log-ratio-clamp", "twenty"], ["--kl-log-ratio-clamp"]),
        (["--kl-estimator", "k3", "--kl-log-ratio-clamp", "0"], ["--kl-log-ratio-clamp"]),
        (["--kl-estimator", "k3", "--kl-value-clamp", "-10"], ["--kl-value-clamp"]),
        (["--kl-estimator", "k3", "--kl-value-clamp", "nan"], ["--kl-value-clamp"]),
        (["--kl-estimator", "k3", "--kl-value-clamp", "0"], ["--kl-value-clamp"]),
        (["--kl-estimator", "k3", "--kl-value-clamp", "1e5x"], ["--kl-value-clamp"]),
        (["--kl-placement", "rewards"], ["--kl-placement"]),
        (["--kl-placement", "Loss"], ["--kl-placement"]),
        (["--kl-estimator", "k5"], ["--kl-estimator"]),
        (["--kl-estimator", "low_var_kl"], ["--kl-estimator"]),
        (["--normalization", "zscore"], ["--normalization"]),
        (["--normalization", "none"], ["--normalization"]),
        (["--penalty", "forward"], ["--penalty"]),
        (["--penalty", "direct", "--kl-estimator", "k3"], ["--penalty"]),
        (["--penalty", "reverse", "--kl-placement", "reward"], ["--penalty"]),
        (["--slow-tol", "-0.01"], ["--slow-tol"]),
        (["--slow-tol", "nan"], ["--slow-tol"]),
        (["--slow-tol", "abc"], ["--slow-tol"]),
        (["--interval", "exact"], ["--interval"]),
        (["--interval", "Wilson"], ["--interval"]),
        (["--level", "1.5"], ["--level"]),
        (["--level", "0"], ["--level"]),
        (["--level", "95"], ["--level"]),
        (["--level", "nan"], ["--level"]),
        (["--tradeoff-betas", "-0.5"], ["--tradeoff-betas"]),
        (["--tradeoff-betas", "nan"], ["--tradeoff-betas"]),
        (["--tradeoff-betas", "0.1", "x"], ["--tradeoff-betas"]),
        (["--tradeoff-betas", "inf"], ["--tradeoff-betas"]),
        (["--sample-temperature", "0"], ["--sample-temperature"]),
        (["--sample-temperature", "-1"], ["--sample-temperature"]),
        (["--sample-temperature", "nan"], ["--sample-temperature"]),
        (["--sample-temperature", "hot"], ["--sample-temperature"]),
        (["--k", "0"], ["--k"]),
        (["--k", "2.5"], ["--k"]),
        (["--k", "-3"], ["--k"]),
        (["--group-size", "1"], ["--group-size"]),
        (["--std-eps", "-1e-4"], ["--std-eps"]),
        (["--finite-level", "1.2"], ["--finite-level"]),
        (["--finite-level", "0"], ["--finite-level"]),
        (["--levels", "0"], ["--levels"]),
        (["--levels", "0", "0"], ["--levels"]),
        (["--levels", "0", "nan"], ["--levels"]),
    ]
    out = [_cli(G_, "predict s.csv --beta 0.5 " + " ".join(a), _argv(0.5, *a), "error", names=n,
                files={"s.csv": SAMPLES}) for a, n in R]
    out.append(_cli(G_, "predict s.csv --beta -0.5", _argv(-0.5), "error", names=["--beta"], files={"s.csv": SAMPLES}))
    out.append(_cli(G_, "predict s.csv --beta 0 (no regularisation: refused or warned, naming beta)", _argv(0.0), "flag",
                    names=["beta"], files={"s.csv": SAMPLES}))
    bad_files = [
        ("s.csv with correct > n", "prompt_id,n,correct\na,5,6\n", ["a"]),
        ("s.csv with n = 0", "prompt_id,n,correct\na,0,0\n", ["a"]),
        ("s.csv with correct = -1", "prompt_id,n,correct\na,5,-1\n", ["a"]),
        ("s.csv with n = 2.5", "prompt_id,n,correct\na,2.5,1\n", ["n"]),
        ("s.csv with an id twice", "prompt_id,n,correct\na,5,1\na,6,2\n", ["a"]),
        ("s.csv with a header only", "prompt_id,n,correct\n", ["s.csv"]),
        ("s.csv empty", "", ["s.csv"]),
        ("s.csv with 'n' missing", "prompt_id,correct\na,1\n", ["n"]),
        ("s.csv with correct = 'yes'", "prompt_id,n,correct\na,5,yes\n", ["yes"]),
        ("s.csv with n = nan", "prompt_id,n,correct\na,nan,1\n", ["n"]),
    ]
    for lab, text, names in bad_files:
        out.append(_cli(G_, f"predict ({lab}) --beta 0.5", _argv(0.5), "error", names=names, files={"s.csv": text}))
    return out


# ---------------------------------------------------------------- explain on configs as users write them
def _explain_check(want, rtol=1e-8):
    def check(tmp, res):
        d = json.loads(res["out"])
        got = d["question"]["stationary_policy"]
        bad = ref.close(got, want, rtol, 1e-15)
        if bad is not True:
            raise AssertionError(bad)
        return True
    return check


def explain_cases() -> list[dict]:
    G_ = "CLI: explain --json on trainer configs, the question's rest against a closed form"
    out = []
    qs = [([0.3, 0.7], [1.0, 0.0]), ([0.2, 0.5, 0.3], [1.0, 0.0, 0.5]), ([0.05, 0.15, 0.8], [2.0, 0.0, 1.0])]

    def q_args(pr, rw):
        return ["--pi-ref", *map(repr, pr), "--rewards", *map(repr, rw)]
    # TRL shift + direct (bias-corrected k3): log pooling at G beta/(G-1)
    for (pr, rw), (b, G) in zip(qs, ((0.2, 4), (0.5, 8), (1.3, 16))):
        yaml = f"beta: {b}\nnum_generations: {G}\nscale_rewards: none\nuse_bias_correction_kl: true\n"
        out.append(_cli(G_, f"explain --framework trl (YAML beta {b}, G {G}, scale_rewards none, bias-corrected) "
                            f"{pr} {rw}: pool at G beta/(G-1)",
                        ["explain", "--framework", "trl", "c.yaml", *q_args(pr, rw), "--json"], "ok",
                        files={"c.yaml": yaml}, check=_explain_check(ref.pool(pr, rw, G * b / (G - 1)))))
    # TRL shift + reverse, binary: Eq. 14 at gamma (G-1)/G
    for b, G, p in ((0.3, 4, 0.3), (0.9, 6, 0.12), (0.05, 3, 0.6)):
        js = json.dumps({"beta": b, "num_generations": G, "scale_rewards": "none", "use_bias_correction_kl": False})
        x = ref.x14(p, b, (G - 1) / G)
        out.append(_cli(G_, f"explain --framework trl (JSON beta {b}, G {G}, shift, reverse) [{p}, 1-p]: Eq. 14 at "
                            f"(G-1)/G",
                        ["explain", "--framework", "trl", "c.json", *q_args([p, 1 - p], [1.0, 0.0]), "--json"], "ok",
                        files={"c.json": js}, check=_explain_check([x, 1 - x])))
    # verl: KL in the reward (k1): log pooling at beta for every G
    for (pr, rw), (b, n) in zip(qs, ((0.25, 5), (0.7, 16), (2.0, 3))):
        yaml = ("algorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: true\n  kl_penalty: kl\n  kl_ctrl:\n"
                f"    type: fixed\n    kl_coef: {b}\nactor_rollout_ref:\n  actor:\n    use_kl_loss: false\n"
                f"  rollout:\n    n: {n}\n")
        out.append(_cli(G_, f"explain --framework verl (YAML use_kl_in_reward kl coef {b}, n {n}) {pr} {rw}: pool at beta",
                        ["explain", "--framework", "verl", "c.yaml", *q_args(pr, rw), "--json"], "ok",
                        files={"c.yaml": yaml}, check=_explain_check(ref.pool(pr, rw, b))))
    # verl: shift + k2 in the loss (direct): pool at G beta/(G-1)
    for (pr, rw), (b, n) in zip(qs, ((0.4, 4), (1.1, 8), (0.15, 12))):
        yaml = ("algorithm:\n  adv_estimator: grpo\n  norm_adv_by_std_in_grpo: false\nactor_rollout_ref:\n  actor:\n"
                f"    use_kl_loss: true\n    kl_loss_coef: {b}\n    kl_loss_type: mse\n  rollout:\n    n: {n}\n")
        out.append(_cli(G_, f"explain --framework verl (YAML shift, kl_loss_type mse coef {b}, n {n}) {pr} {rw}: pool at "
                            f"G beta/(G-1)",
                        ["explain", "--framework", "verl", "c.yaml", *q_args(pr, rw), "--json"], "ok",
                        files={"c.yaml": yaml}, check=_explain_check(ref.pool(pr, rw, n * b / (n - 1)))))
    # verl as a run script of Hydra overrides: same as the YAML above
    for b, n, p in ((0.5, 4, 0.25), (0.2, 6, 0.7)):
        sh = ("#!/bin/bash\nset -x\npython3 -m verl.trainer.main_ppo \\\n    algorithm.adv_estimator=grpo \\\n"
              "    algorithm.norm_adv_by_std_in_grpo=False \\\n    actor_rollout_ref.actor.use_kl_loss=True \\\n"
              f"    actor_rollout_ref.actor.kl_loss_coef={b} \\\n    actor_rollout_ref.actor.kl_loss_type=mse \\\n"
              f"    actor_rollout_ref.rollout.n={n} \\\n    trainer.total_epochs=15 $@\n")
        x = ref.xlogit(p, (n - 1) / n / b)
        out.append(_cli(G_, f"explain --framework verl (run script, shift, mse coef {b}, n {n}) [{p}, 1-p]: "
                            f"logit p + (G-1)/(G beta)",
                        ["explain", "--framework", "verl", "run.sh", *q_args([p, 1 - p], [1.0, 0.0]), "--json"], "ok",
                        files={"run.sh": sh}, check=_explain_check([x, 1 - x])))
    # OpenRLHF at G = 2: k1 after normalisation (direct), ddof 1: logit p + (1/sqrt 2)/beta
    for b, p in ((0.5, 0.3), (1.5, 0.85), (0.9, 0.05)):
        js = json.dumps({"init_kl_coef": b, "n_samples_per_prompt": 2, "advantage_estimator": "group_norm"})
        x = ref.xlogit(p, 1 / math.sqrt(2) / b)
        out.append(_cli(G_, f"explain --framework openrlhf (JSON init_kl_coef {b}, n 2, group_norm) [{p}, 1-p]: "
                            f"logit p + (1/sqrt 2)/beta",
                        ["explain", "--framework", "openrlhf", "c.json", *q_args([p, 1 - p], [1.0, 0.0]), "--json"],
                        "ok", files={"c.json": js}, check=_explain_check([x, 1 - x], 1e-7)))
    js = json.dumps(["--init_kl_coef", "0.5", "--n_samples_per_prompt", "2", "--advantage_estimator", "group_norm"])
    x = ref.xlogit(0.3, 1 / math.sqrt(2) / 0.5)
    out.append(_cli(G_, "explain --framework openrlhf (a JSON list of argv, init_kl_coef 0.5, n 2) [0.3, 0.7]",
                    ["explain", "--framework", "openrlhf", "c.json", *q_args([0.3, 0.7], [1.0, 0.0]), "--json"], "ok",
                    files={"c.json": js}, check=_explain_check([x, 1 - x], 1e-7)))
    return out


def explain_refused_cases() -> list[dict]:
    G_ = "CLI: refused explain lines, each naming the file or option"
    ok_yaml = "beta: 0.1\nnum_generations: 4\n"
    R = [
        ("explain --framework trl missing.yaml", ["explain", "--framework", "trl", "missing.yaml"], {}, ["missing.yaml"]),
        ("explain --framework trl c.yaml (YAML syntax error)", ["explain", "--framework", "trl", "c.yaml"],
         {"c.yaml": "beta: [0.1\nnum_generations: 4\n"}, ["c.yaml"]),
        ("explain --framework trl c.json (trailing comma)", ["explain", "--framework", "trl", "c.json"],
         {"c.json": '{"beta": 0.1, "num_generations": 4,}'}, ["c.json"]),
        ("explain --framework trl c.yaml (empty file)", ["explain", "--framework", "trl", "c.yaml"], {"c.yaml": ""},
         ["c.yaml"]),
        ("explain --framework trl d (a folder)", ["explain", "--framework", "trl", "d"], {"d": None}, ["d"]),
        ("explain --framework trl c.yaml (a YAML list)", ["explain", "--framework", "trl", "c.yaml"],
         {"c.yaml": "- 1\n- 2\n"}, ["c.yaml"]),
        ("explain --framework trl c.yaml (binary garbage)", ["explain", "--framework", "trl", "c.yaml"],
         {"c.yaml": b"\xff\xfe\x00\x01beta"}, ["c.yaml"]),
        ("explain --framework trl c.yaml --completion-tokens 0", ["explain", "--framework", "trl", "c.yaml",
                                                                   "--completion-tokens", "0"],
         {"c.yaml": ok_yaml}, ["--completion-tokens"]),
        ("explain --framework trl c.yaml --completion-tokens -5", ["explain", "--framework", "trl", "c.yaml",
                                                                    "--completion-tokens", "-5"],
         {"c.yaml": ok_yaml}, ["--completion-tokens"]),
        ("explain --framework trl c.yaml --completion-tokens 2.5", ["explain", "--framework", "trl", "c.yaml",
                                                                     "--completion-tokens", "2.5"],
         {"c.yaml": ok_yaml}, ["--completion-tokens"]),
        ("explain --framework trl c.yaml --trl-version x.y.z", ["explain", "--framework", "trl", "c.yaml",
                                                                "--trl-version", "x.y.z"],
         {"c.yaml": ok_yaml}, ["x.y.z"]),
        ("explain --framework trl c.yaml --pi-ref 0.3 0.7 (no rewards)", ["explain", "--framework", "trl", "c.yaml",
                                                                          "--pi-ref", "0.3", "0.7"],
         {"c.yaml": ok_yaml}, ["rewards"]),
        ("explain --framework trl c.yaml --pi-ref 0.3 0.6 --rewards 1 0", ["explain", "--framework", "trl", "c.yaml",
                                                                           "--pi-ref", "0.3", "0.6", "--rewards", "1",
                                                                           "0"],
         {"c.yaml": ok_yaml}, ["pi_ref"]),
        ("explain --framework Trl c.yaml", ["explain", "--framework", "Trl", "c.yaml"], {"c.yaml": ok_yaml},
         ["--framework"]),
        ("explain c.yaml (no --framework)", ["explain", "c.yaml"], {"c.yaml": ok_yaml}, ["--framework"]),
        ("explain --framework verl c.yaml (adv_estimator gae)", ["explain", "--framework", "verl", "c.yaml"],
         {"c.yaml": "algorithm:\n  adv_estimator: gae\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n"
                    "    kl_loss_coef: 0.1\n  rollout:\n    n: 4\n"}, ["gae"]),
        ("explain --framework verl c.yaml (kl_loss_type k9)", ["explain", "--framework", "verl", "c.yaml"],
         {"c.yaml": "algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n"
                    "    kl_loss_coef: 0.1\n    kl_loss_type: k9\n  rollout:\n    n: 4\n"}, ["k9"]),
        ("explain --framework openrlhf c.json (a JSON string)", ["explain", "--framework", "openrlhf", "c.json"],
         {"c.json": '"--init_kl_coef 0.1"'}, ["c.json"]),
        ("explain --framework openrlhf c.json (init_kl_coef -0.1)", ["explain", "--framework", "openrlhf", "c.json"],
         {"c.json": '{"init_kl_coef": -0.1, "n_samples_per_prompt": 4, "advantage_estimator": "group_norm"}'},
         ["init_kl_coef"]),
    ]
    return [_cli(G_, lab, argv, "error", names=names, files=files) for lab, argv, files, names in R]


def all_cli_cases() -> list[dict]:
    return predict_cases() + predict_refused_cases() + explain_cases() + explain_refused_cases()
