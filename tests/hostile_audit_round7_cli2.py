"""Cases of the seventh hostile audit (issue 45), part four: option pairs, numbers as people type them.

``solve`` checked row by row (the four GRPO rows and RLHF against :mod:`hostile_audit_round7_ref`) at finite G
with ddof 1 and an epsilon, at G = inf, and on a three-output question; ``solve``'s options in pairs that
conflict or repeat, and numbers typed the way people type them (``1_000``, ``0x1p-1``, full-width digits,
``1/3``, ``30%``, a copied trailing comma, two numbers in one argument); ``predict``'s options in pairs (a
config with ``--beta``, ``--clock`` with ``--fit``, the ``--measured`` options without it, ``--levels`` with a
counts layout, estimator/placement/clamp combinations), with the table checked where the pair is valid.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

import hostile_audit_round7_ref as ref
from hostile_audit_round7_cli import COUNTS, _a, _table, counts_check

INF = math.inf


def _rows(res):
    return {r["method"]: r for r in json.loads(res["out"])["rows"]}


def binary_solve_check(p, beta, G, ddof=0, eps=0.0):
    def check(tmp, res):
        rows = _rows(res)
        want = {"GRPO reverse/scale": ref.binary_reverse(p, beta, G, ddof, eps),
                "GRPO reverse/shift": ref.binary_reverse(p, beta, G, ddof, eps, "shift"),
                "GRPO direct/scale": ref.binary_direct(p, beta, G, ddof, eps),
                "GRPO direct/shift": ref.shift_direct(p, beta, G),
                "RLHF (log pooling)": float(ref.rlhf([p, 1 - p], [1, 0], beta)[0])}
        return all(abs(float(rows[m]["pi"][0]) - w) <= 1e-8 for m, w in want.items())
    return check


def solve_cases() -> list[dict]:
    G = "solve: checked rows, option pairs, numbers as typed"
    out = []
    for p, beta, g, dd, eps in [(0.3, 0.5, 3, 0, 0.0), (0.05, 0.2, 5, 1, 1e-4), (0.7, 2.0, INF, 0, 0.0),
                                (0.5, 0.05, 4, 0, 0.0), (0.2, 1.0, 2, 1, 0.0), (0.9, 0.3, 6, 1, 0.01),
                                (0.01, 3.0, 8, 0, 0.0), (0.45, 0.7, INF, 1, 1e-4)]:
        argv = ["solve", "--pi-ref", str(p), str(1 - p), "--rewards", "1", "0", "--beta", str(beta), "--group-size",
                "inf" if g == INF else str(g), "--std-ddof", str(dd), "--std-eps", str(eps), "--json"]
        out.append(_a(G, f"solve p={p} beta={beta} G={g} ddof={dd} eps={eps}: 4 GRPO rows + RLHF", argv, "ok",
                      check=binary_solve_check(p, beta, g, dd, eps)))
    pr, r = [0.2, 0.3, 0.5], [1.0, 0.5, 0.0]

    def three(tmp, res):
        rows = _rows(res)
        ok = True
        for m, norm, cond in (("GRPO reverse/scale", "scale", ref.reverse_ok), ("GRPO reverse/shift", "shift", ref.reverse_ok),
                              ("GRPO direct/scale", "scale", ref.direct_ok), ("GRPO direct/shift", "shift", ref.direct_ok)):
            pi = np.asarray(rows[m]["pi"], float)
            ok &= cond(pi, pr, ref.pg_levels(pi, r, 3, normalization=norm), 0.4, tol=1e-7)
        return ok and ref.close(rows["RLHF (log pooling)"]["pi"], ref.rlhf(pr, r, 0.4), rtol=1e-9)
    out.append(_a(G, "solve three outputs, rewards 1 0.5 0, G=3, beta 0.4: 4 GRPO rows + RLHF",
                  ["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "0.4",
                   "--group-size", "3", "--json"], "ok", check=three))
    b = ["solve", "--pi-ref", "0.3", "0.7"]
    x14 = lambda beta: (lambda tmp, res: abs(float(_rows(res)["GRPO reverse/scale"]["pi"][0]) - ref.eq14(0.3, beta))  # noqa: E731
                        <= 1e-9)
    x15 = lambda tmp, res: abs(float(_rows(res)["GRPO reverse/scale"]["pi"][0]) - ref.eq15(0.3, 0.5)) <= 1e-9  # noqa: E731
    xg = lambda g: (lambda tmp, res: abs(float(_rows(res)["GRPO reverse/scale"]["pi"][0])  # noqa: E731
                                         - ref.binary_reverse(0.3, 0.5, g)) <= 1e-8)
    R = ["--rewards", "1", "0"]
    specs = [  # (label, extra argv, expect, names, check)
        ("--rewards and --reward-levels together", R + ["--reward-levels", "0", "1", "--reward-probs", "0", "1", "1", "0",
                                                        "--beta", "0.5"], "error", ["--reward-levels"], None),
        ("--rewards and --preference together", R + ["--preference", "0.5", "1", "0", "0.5", "--beta", "0.5"], "error",
         ["--preference"], None),
        ("--preference with --group-size 4", ["--preference", "0.5", "0.9", "0.1", "0.5", "--beta", "0.5",
                                              "--group-size", "4"], "error", ["--group-size"], None),
        ("--reward-probs without --reward-levels", ["--reward-probs", "0", "1", "1", "0", "--beta", "0.5"], "error",
         ["--reward-levels"], None),
        ("--std-ddof 1 --group-size inf", R + ["--beta", "0.5", "--std-ddof", "1", "--group-size", "inf", "--json"],
         "ok", [], x15),
        ("--std-eps 1e-4 --group-size inf", R + ["--beta", "0.5", "--std-eps", "1e-4", "--group-size", "inf", "--json"],
         "either", ["--std-eps"], lambda tmp, res: abs(float(_rows(res)["GRPO reverse/scale"]["pi"][0])
                                                       - ref.binary_reverse(0.3, 0.5, INF, eps=1e-4)) <= 1e-8),
        ("--json given twice", R + ["--beta", "0.5", "--json", "--json"], "ok", [], x14(0.5)),
        ("--beta given twice (0.5, then 0.7)", R + ["--beta", "0.5", "--beta", "0.7", "--json"], "either", ["--beta"],
         x14(0.7)),
        ("--pi-ref given twice", R + ["--beta", "0.5", "--pi-ref", "0.3", "0.7", "--json"], "either", ["--pi-ref"],
         x14(0.5)),
        ("3 rewards for 2 answers", ["--rewards", "1", "0", "0", "--beta", "0.5"], "error", ["--rewards"], None),
        ("--group-size 3.0", R + ["--beta", "0.5", "--group-size", "3.0", "--json"], "either", ["3.0"], xg(3)),
        ("--group-size 1e1", R + ["--beta", "0.5", "--group-size", "1e1", "--json"], "either", ["1e1"], xg(10)),
        ("--group-size Infinity", R + ["--beta", "0.5", "--group-size", "Infinity", "--json"], "either", ["Infinity"],
         x15),
        ("--group-size +inf", R + ["--beta", "0.5", "--group-size", "+inf", "--json"], "either", ["+inf"], x15),
        ("--group-size 4.5", R + ["--beta", "0.5", "--group-size", "4.5"], "error", ["4.5"], None),
        ("--beta .5", R + ["--beta", ".5", "--json"], "ok", [], x14(0.5)),
        ("--beta 5e-1", R + ["--beta", "5e-1", "--json"], "ok", [], x14(0.5)),
        ("--beta 0x1p-1 (a hex float)", R + ["--beta", "0x1p-1", "--json"], "either", ["0x1p-1"], x14(0.5)),
        ("--beta 1_000 (underscores)", R + ["--beta", "1_000", "--json"], "either", ["1_000"], x14(1000.0)),
        ("--beta '0.5 ' with a trailing space", R + ["--beta", "0.5 ", "--json"], "either", ["--beta"], x14(0.5)),
        ("--beta in full-width digits ０.５", R + ["--beta", "０.５", "--json"], "either", ["--beta"], x14(0.5)),
        ("--beta 1,5 (a decimal comma)", R + ["--beta", "1,5"], "error", ["1,5"], None),
        ("--pi-ref 30% 70%", ["--pi-ref", "30%", "70%"] + R + ["--beta", "0.5"], "error", ["30%"], None),
        ("--pi-ref '0.3,' with a copied comma", ["--pi-ref", "0.3,", "0.7"] + R + ["--beta", "0.5"], "error", ["0.3,"],
         None),
        ("--pi-ref '0.3 0.7' as one argument", ["--pi-ref", "0.3 0.7"] + R + ["--beta", "0.5", "--json"], "either",
         ["0.3 0.7"], x14(0.5)),
        ("--pi-ref 1/3 2/3", ["--pi-ref", "1/3", "2/3"] + R + ["--beta", "0.5"], "either", ["1/3"], None),
        ("--rewards True False", ["--rewards", "True", "False", "--beta", "0.5"], "error", ["True"], None),
        ("--std-ddof 1.0", R + ["--beta", "0.5", "--std-ddof", "1.0"], "error", ["1.0"], None),
    ]
    for label, extra, expect, names, chk in specs:
        argv = (["solve"] + extra) if extra[0] == "--pi-ref" else b + extra
        out.append(_a(G, f"solve {label}", argv, expect, names, check=chk))
    return out


# ---------------------------------------------------------------- predict's options in pairs
SAMPLES = "prompt_id,n,correct\n" + "".join(f"{p},{n},{c}\n" for p, n, c in COUNTS)
TRL = json.dumps({"num_generations": 8, "beta": 0.04, "use_bias_correction_kl": False, "max_completion_length": 1})


def _pred_is(fn, tol=1e-8):
    def check(tmp, res):
        t = _table(tmp)
        return all(abs(float(t[p]["pred"]) - fn(c / n)) <= tol for p, n, c in COUNTS)
    return check


def _wilson(level):
    def check(tmp, res):
        t = _table(tmp)
        for p, n, c in COUNTS:
            lo, hi = ref.wilson(c, n, level)
            if abs(float(t[p]["p_ref_lo"]) - lo) > 1e-7 or abs(float(t[p]["p_ref_hi"]) - hi) > 1e-7:
                return False
        return True
    return check


def _pass3(tmp, res):
    t = _table(tmp)
    return all(abs(float(t[p]["pass@3_before"]) - ref.unbiased_pass_k(n, c, 3)) <= 1e-9
               and abs(float(t[p]["pass@3_after"]) - ref.pass_k(ref.eq14(c / n, 0.5), 3)) <= 1e-8 for p, n, c in COUNTS)


def _tradeoff(tmp, res):
    with open(Path(tmp) / "o" / "tradeoff.csv", encoding="utf-8", newline="") as fh:
        rows = {float(r["beta"]): r for r in csv.DictReader(fh)}
    return all(abs(float(rows[b]["mean_pred"]) - np.mean([ref.eq14(c / n, b) for _, n, c in COUNTS])) <= 1e-8
               for b in (0.1, 1.0, 10.0))


def predict_pair_cases() -> list[dict]:
    G = "predict: options in pairs"
    out = []
    base = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
    f = {"s.csv": SAMPLES}
    fc = dict(f, **{"c.json": TRL})
    beta = ["--beta", "0.5"]
    specs = [  # (label, extra, expect, names, check, files)
        ("--framework trl CONFIG with --beta 0.5", ["--framework", "trl", "c.json"] + beta, "error", ["--beta"], None, fc),
        ("--framework trl CONFIG with --group-size 4", ["--framework", "trl", "c.json", "--group-size", "4"], "error",
         ["--group-size"], None, fc),
        ("--framework trl CONFIG with --std-ddof 0", ["--framework", "trl", "c.json", "--std-ddof", "0"], "error",
         ["--std-ddof"], None, fc),
        ("--clock 0.01 with --fit 100 0.5", beta + ["--clock", "0.01", "--fit", "100", "0.5"], "error", ["--fit"], None, f),
        ("--holdout 0.3 without --measured", beta + ["--holdout", "0.3"], "error", ["--holdout"], None, f),
        ("--kernel K.npy without --measured", beta + ["--kernel", "K.npy"], "error", ["--kernel"], None,
         dict(f, **{"K.npy": lambda p: np.save(p, np.eye(3))})),
        ("--rhos 0 0.5 without --measured", beta + ["--rhos", "0", "0.5"], "error", ["--rhos"], None, f),
        ("--finite-level 0.8 without --measured", beta + ["--finite-level", "0.8"], "error", ["--finite-level"], None, f),
        ("--sample-temperature 1.0 with --beta (no config to compare)", beta + ["--sample-temperature", "1.0"], "flag",
         ["--sample-temperature"], None, f),
        ("--trl-version 0.14.0 with --beta (no TRL config)", beta + ["--trl-version", "0.14.0"], "flag",
         ["--trl-version"], None, f),
        ("--levels 0 1 with a counts layout", beta + ["--levels", "0", "1"], "ok", [], counts_check(), f),
        ("--levels 0 0.5 1 with a (n, correct) layout", beta + ["--levels", "0", "0.5", "1"], "either", ["--levels"],
         None, f),
        ("--interval wilson --level 0.5", beta + ["--interval", "wilson", "--level", "0.5"], "ok", [], _wilson(0.5), f),
        ("--interval wilson --level 0.999", beta + ["--interval", "wilson", "--level", "0.999"], "ok", [], _wilson(0.999),
         f),
        ("--k 3 1 (unsorted)", beta + ["--k", "3", "1"], "ok", [], _pass3, f),
        ("--k 3 3 (repeated)", beta + ["--k", "3", "3"], "either", ["--k"], _pass3, f),
        ("--penalty direct --normalization shift --group-size 6", beta + ["--penalty", "direct", "--normalization",
                                                                          "shift", "--group-size", "6"], "ok", [],
         _pred_is(lambda p: ref.shift_direct(p, 0.5, 6)), f),
        ("--penalty direct --group-size inf", beta + ["--penalty", "direct", "--group-size", "inf"], "ok", [],
         _pred_is(lambda p: ref.binary_direct(p, 0.5, INF)), f),
        ("--normalization shift --group-size inf", beta + ["--normalization", "shift", "--group-size", "inf"], "ok", [],
         _pred_is(lambda p: ref.eq14(p, 0.5)), f),
        ("--std-ddof 1 --std-eps 1e-4 --group-size 8", beta + ["--std-ddof", "1", "--std-eps", "1e-4", "--group-size",
                                                              "8"], "ok", [],
         _pred_is(lambda p: ref.binary_reverse(p, 0.5, 8, 1, 1e-4)), f),
        ("--kl-estimator k2 --group-size 4 (the direct penalty)", beta + ["--kl-estimator", "k2", "--group-size", "4"],
         "ok", [], _pred_is(lambda p: ref.binary_direct(p, 0.5, 4)), f),
        ("--kl-estimator k1 (no regularisation in the loss)", beta + ["--kl-estimator", "k1"], "flag", [], None, f),
        ("--kl-estimator k2 --kl-value-clamp 10", beta + ["--kl-estimator", "k2", "--kl-value-clamp", "10"], "either",
         ["--kl-value-clamp"], None, f),
        ("--kl-log-ratio-clamp 20 without --kl-estimator", beta + ["--kl-log-ratio-clamp", "20"], "either",
         ["--kl-log-ratio-clamp"], None, f),
        ("--kl-estimator K3 in capitals", beta + ["--kl-estimator", "K3"], "either", ["K3"],
         _pred_is(lambda p: ref.eq14(p, 0.5)), f),
        ("--penalty direct with --kl-estimator k3 (reverse)", beta + ["--penalty", "direct", "--kl-estimator", "k3"],
         "error", ["--penalty"], None, f),
        ("--id-column n (a count column as the id)", beta + ["--id-column", "n"], "error", ["n"], None, f),
        ("--id-column 'prompt id' (a header with a space)", beta + ["--id-column", "prompt id"], "ok", [], None,
         {"s.csv": SAMPLES.replace("prompt_id", "prompt id", 1)}),
        ("--tradeoff-betas 0.1 1 10 (mean pred at each)", beta + ["--tradeoff-betas", "0.1", "1", "10"], "ok", [],
         _tradeoff, f),
        ("--tradeoff-betas 0.5 0.5 (repeated)", beta + ["--tradeoff-betas", "0.5", "0.5"], "either",
         ["--tradeoff-betas"], None, f),
        ("--steps 100 --clock 0.01", beta + ["--steps", "100", "--clock", "0.01"], "ok", [],
         lambda tmp, res: "at_step_100" in next(iter(_table(tmp).values())), f),
        ("--steps 0 --clock 0.01 (pred at step 0 is p_ref)", beta + ["--steps", "0", "--clock", "0.01"], "ok", [],
         lambda tmp, res: all(abs(float(_table(tmp)[p]["at_step_0"]) - c / n) < 1e-9 for p, n, c in COUNTS), f),
        ("--group-size 2 --std-ddof 1 (G = 2 with ddof 1)", beta + ["--group-size", "2", "--std-ddof", "1"], "ok", [],
         _pred_is(lambda p: ref.binary_reverse(p, 0.5, 2, 1)), f),
    ]
    for label, extra, expect, names, chk, files in specs:
        out.append(_a(G, f"predict {label}", base + extra, expect, names, check=chk, files=files))
    # the same command twice into the same folder: the second result is the first
    out.append(dict(_a(G, "predict twice into the same folder", base + beta, "ok", check=counts_check(), files=f),
                    rerun=True))
    return out
