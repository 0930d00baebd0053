"""Cases of the tenth hostile audit (issue 45), part two: the command line and the committed data.

* ``predict`` with every KL setting at the jumps (abs, clamps, k1 in the loss, the reward and advantage
  placements), its pass@k, interval and KL columns, ``--clock``/``--fit``/``--steps`` (``at_step_<s>`` against an
  RK4 flow), and the finite-time options (``--measured``, ``--holdout``, ``--kernel``, ``--rhos``,
  ``--finite-level``, ``--seed``) at and beyond their edges;
* the figures' data: the committed ``paper_figures/fig1..4`` CSVs and freshly built ones against Eq. 14, Eq. 15,
  the direct penalty's closed form and the finite-G root (:mod:`hostile_audit_round10_ref`);
* ``derivations`` options (the sympy work stubbed) and the docs' Python examples run as written.

Tolerances. ``predictions.csv`` keeps 8 significant digits: a value read back is held to 2e-7 relative (of
``1 - x`` above 1/2, with 1e-8 absolute); the figures' CSVs keep 12: 1e-9 relative (the same rule). The
reference's own accuracy (1e-13 or better) is far inside both. ``at_step`` against RK4 (``dt = 0.005``): 1e-6
absolute.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np

import hostile_audit_round10_ref as ref
from hostile_audit_fresh import _symbolic_stubs, cli_case as _cli

INF = math.inf
ROOT = Path(__file__).resolve().parent.parent


def _api(group, label, call, check):
    def chk(tmp, res):
        got = check(res["value"])
        if isinstance(got, str):
            raise AssertionError(got)
        return bool(got)
    return dict(group=group, label=label, call=call, expect="ok", names=[], check=chk, wrong=[])


def _rows(tmp, folder="o"):
    with open(tmp / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _near8(got, want):
    got, want = float(got), float(want)
    scale = want if want <= 0.5 else 1 - want
    return abs(got - want) <= max(2e-7 * scale, 1e-8)


BASE = ("predict", "s.csv", "--out", "o", "--no-plots", "--no-progress")
COUNTS = "prompt_id,n,correct\na,10,3\nb,20,5\nc,40,31\nd,16,1\ne,64,33\nf,12,0\ng,9,9\n"
INNER = [("a", 10, 3), ("b", 20, 5), ("c", 40, 31), ("d", 16, 1), ("e", 64, 33)]


def _pred_rest(beta, G=2, est="k3", L=None, V=None, placement="loss", vertex_ok=True):
    """Every row with 0 < c < n: ``pred`` = the Filippov rest from ``p = c/n`` (the vertex: pred > 1 - 1e-6)."""
    def check(tmp, res):
        rows = {r["prompt_id"]: r for r in _rows(tmp)}
        for pid, n, c in INNER:
            w = ref.binary_rest(c / n, beta, G, est, L, V, placement, n_scan=1500)
            got = float(rows[pid]["pred"])
            if w >= 1.0:
                if not (vertex_ok and got > 1 - 1e-6):
                    raise AssertionError(f"{pid}: pred {got} but the flow runs into the vertex")
            elif not _near8(got, w):
                raise AssertionError(f"{pid}: pred {got} != {w}")
        return True
    return check


def _pred_fn(fn):
    def check(tmp, res):
        rows = {r["prompt_id"]: r for r in _rows(tmp)}
        for pid, n, c in INNER:
            w = fn(c / n)
            if not _near8(rows[pid]["pred"], w):
                raise AssertionError(f"{pid}: pred {rows[pid]['pred']} != {w}")
        return True
    return check


def predict_kl_cases() -> list[dict]:
    G_ = "CLI: predict with KL settings at the jumps of the field, checked"
    out, base, f = [], list(BASE), {"s.csv": COUNTS}
    specs = [
        (0.45, 2, "abs", None, None), (0.3, 4, "abs", None, None), (0.6, 8, "abs", None, None),
        (1.2, "inf", "abs", None, None), (0.2, 3, "abs", None, None),
        (0.05, 2, "k3", 0.5, None), (0.3, 4, "k3", 2.0, None), (0.5, 2, "k3", None, 0.5), (0.1, 3, "k3", 20.0, 10.0),
        (0.8, 2, "k1", 1.0, None), (1.5, 4, "k1", 0.4, None), (0.3, 2, "k2", None, 0.5), (0.2, 3, "k3_plus", None, 0.3),
        (0.25, 2, "k2", None, None), (0.25, 5, "k3_plus", None, None), (0.7, 3, "k3_ratio", None, None),
    ]
    for beta, G, est, L, V in specs:
        argv = base + ["--beta", str(beta), "--group-size", str(G), "--kl-estimator", est]
        if L is not None:
            argv += ["--kl-log-ratio-clamp", str(L)]
        if V is not None:
            argv += ["--kl-value-clamp", str(V)]
        Gn = INF if G == "inf" else G
        out.append(_cli(G_, f"predict --beta {beta} -G {G} --kl-estimator {est} L={L} V={V}: pred = the rest", argv,
                        "ok", check=_pred_rest(beta, Gn, est, L, V), files=f))
    for beta, G, est in [(0.5, 2, "k1"), (0.25, 4, "k2"), (1.0, 3, "k3"), (0.4, "inf", "k1"), (0.6, 2, "abs")]:
        Gn = INF if G == "inf" else G
        argv = base + ["--beta", str(beta), "--group-size", str(G), "--kl-estimator", est, "--kl-placement", "advantage"]
        out.append(_cli(G_, f"predict --kl-placement advantage {est} beta={beta} G={G}", argv, "ok",
                        check=_pred_rest(beta, Gn, est, placement="advantage"), files=f))
    for beta, G in [(0.5, 2), (0.2, 6), (1.3, "inf")]:
        argv = base + ["--beta", str(beta), "--group-size", str(G), "--kl-estimator", "k1", "--kl-placement", "reward"]
        out.append(_cli(G_, f"predict --kl-placement reward k1 beta={beta} G={G}: log pooling", argv, "ok",
                        check=_pred_fn(lambda p, b=beta: ref.logistic_shift(p, 1 / b)), files=f))
    out.append(_cli(G_, "predict --kl-value-clamp 0.2 without --kl-estimator (the default k3 clamped, or refused)",
                    base + ["--beta", "0.3", "--kl-value-clamp", "0.2"], "either", ["--kl-value-clamp"],
                    check=_pred_rest(0.3, 2, "k3", None, 0.2), files=f))
    # k1 in the loss: no regularisation, every prompt with c > 0 collapses to correct
    out.append(_cli(G_, "predict --kl-estimator k1 (loss): no regularisation, pred 1 where c > 0",
                    base + ["--beta", "0.3", "--kl-estimator", "k1"], "either",
                    check=_pred_rest(0.3, 2, "k1"), files=f))
    for lab, extra, names in [
        ("--kl-estimator abs --penalty direct", ["--kl-estimator", "abs", "--penalty", "direct"], ["--penalty"]),
        ("--kl-value-clamp -0.0", ["--kl-estimator", "k3", "--kl-value-clamp=-0.0"], ["--kl-value-clamp", "-0.0"]),
        ("--kl-log-ratio-clamp nan", ["--kl-estimator", "k3", "--kl-log-ratio-clamp", "nan"], ["--kl-log-ratio-clamp", "nan"]),
        ("--kl-log-ratio-clamp -20", ["--kl-estimator", "k3", "--kl-log-ratio-clamp=-20"], ["--kl-log-ratio-clamp", "-20"]),
        ("--kl-estimator mse (verl's name for k2, not one of ours)", ["--kl-estimator", "mse"], ["--kl-estimator", "mse"]),
        ("--kl-estimator 'k3 ' (a trailing space)", ["--kl-estimator", "k3 "], ["--kl-estimator", "k3 "]),
        ("--kl-value-clamp 1e400", ["--kl-estimator", "k3", "--kl-value-clamp", "1e400"], ["--kl-value-clamp", "1e400"]),
        ("--kl-placement reward --kl-estimator k3_ratio (a ratio has no meaning in a reward)",
         ["--kl-placement", "reward", "--kl-estimator", "k3_ratio"], ["k3_ratio"]),
    ]:
        out.append(_cli(G_, f"predict {lab}", base + ["--beta", "0.3"] + extra, "error", names, files=f))
    return out


def _col(rows, name):
    return {r["prompt_id"]: r[name] for r in rows}


def predict_column_cases() -> list[dict]:
    G_ = "CLI: predict's pass@k, interval and KL columns, checked"
    out, base, f = [], list(BASE), {"s.csv": COUNTS}
    for beta, G, ks in [(0.5, 2, [1, 3, 16, 100]), (0.1, 8, [2, 9, 10, 11]), (1.0, "inf", [5, 64, 65])]:
        Gn = INF if G == "inf" else G

        def check(tmp, res, beta=beta, Gn=Gn, ks=ks):
            rows = _rows(tmp)
            for r in rows:
                n, c = int(float(r["n"])), int(float(r["correct"]))
                pred = float(r["pred"])
                for k in ks:
                    before, after = r[f"pass@{k}_before"], r[f"pass@{k}_after"]
                    if k > n:
                        if before.strip() not in ("",):
                            raise AssertionError(f"{r['prompt_id']}: pass@{k}_before {before!r} with k > n = {n}")
                    else:
                        w = 1 - math.comb(n - c, k) / math.comb(n, k)
                        if abs(float(before) - w) > 2e-7 * max(w, 1e-300) + 1e-12:
                            raise AssertionError(f"{r['prompt_id']}: pass@{k}_before {before} != {w}")
                    w = 1 - (1 - pred) ** k
                    if abs(float(after) - w) > 1e-6 * k * max(1 - w, 1e-2) + 1e-8:
                        raise AssertionError(f"{r['prompt_id']}: pass@{k}_after {after} != {w}")
                if 0 < c < n:
                    x = ref.binary_rest(c / n, beta, Gn, "k3", n_scan=1500)
                    p = c / n
                    if x < 1:
                        kd = x * math.log(x / p) + (1 - x) * math.log((1 - x) / (1 - p))
                        kr = p * math.log(p / x) + (1 - p) * math.log((1 - p) / (1 - x))
                        for name, w in (("kl_direct", kd), ("kl_reverse", kr)):
                            if abs(float(r[name]) - w) > 1e-6 * w + 1e-9:
                                raise AssertionError(f"{r['prompt_id']}: {name} {r[name]} != {w}")
            return True
        argv = base + ["--beta", str(beta), "--group-size", str(G), "--k", *map(str, ks)]
        out.append(_cli(G_, f"predict --beta {beta} -G {G} --k {ks}: pass@k before/after and the KL columns", argv, "ok",
                        check=check, files=f))
    from scipy import stats
    for interval, level in [("jeffreys", 0.8), ("jeffreys", 0.99), ("wilson", 0.9), ("wilson", 0.5), ("jeffreys", 0.999999)]:
        def check(tmp, res, interval=interval, level=level):
            for r in _rows(tmp):
                n, c = int(float(r["n"])), int(float(r["correct"]))
                if not 0 < c < n:
                    continue
                if interval == "jeffreys":
                    lo = stats.beta.ppf((1 - level) / 2, c + 0.5, n - c + 0.5)
                    hi = stats.beta.ppf(1 - (1 - level) / 2, c + 0.5, n - c + 0.5)
                else:
                    z = stats.norm.ppf(1 - (1 - level) / 2)
                    p = c / n
                    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
                    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
                    lo, hi = mid - half, mid + half
                for name, w in (("p_ref_lo", lo), ("p_ref_hi", hi)):
                    if abs(float(r[name]) - w) > 1e-6 * w:
                        raise AssertionError(f"{r['prompt_id']}: {name} {r[name]} != {w} ({interval}, {level})")
                x_lo = ref.binary_rest(float(r["p_ref_lo"]), 0.5, 2, "k3", n_scan=500)
                if abs(float(r["pred_lo"]) - x_lo) > 2e-7:        # p_ref_lo's 8 digits times dx/dp <= 1
                    raise AssertionError(f"{r['prompt_id']}: pred_lo {r['pred_lo']} != x(p_ref_lo) = {x_lo}")
            return True
        out.append(_cli(G_, f"predict --interval {interval} --level {level}: p_ref_lo/hi and pred_lo", base +
                        ["--beta", "0.5", "--interval", interval, "--level", str(level)], "ok", check=check, files=f))
    for lab, extra, names in [
        ("--k 0x10 (hex)", ["--k", "0x10"], ["--k", "0x10"]), ("--k -2", ["--k=-2"], ["--k", "-2"]), ("--k 1e3", ["--k", "1e3"], ["--k", "1e3"]),
        ("--k 4 -1", ["--k", "4", "-1"], ["--k"]), ("--level -0.95", ["--level=-0.95"], ["--level", "-0.95"]),
        ("--level 1.0000001", ["--level", "1.0000001"], ["--level", "1.0000001"]), ("--level 95%", ["--level", "95%"], ["--level", "95%"]),
        ("--level inf", ["--level", "inf"], ["--level", "inf"]), ("--interval Jeffreys (capital J)", ["--interval", "Jeffreys"], ["--interval", "Jeffreys"]),
        ("--tradeoff-betas 1e400", ["--tradeoff-betas", "1e400"], ["--tradeoff-betas", "1e400"]),
        ("--tradeoff-betas 0.1 -0.0", ["--tradeoff-betas", "0.1", "-0.0"], ["--tradeoff-betas", "-0.0"]),
        ("--id-column n (the count column as the id)", ["--id-column", "n"], ["n"]),
        ("--levels 1 (one level)", ["--levels", "1"], ["--levels"]),
        ("--sample-temperature nan", ["--sample-temperature", "nan"], ["--sample-temperature", "nan"]),
        ("--sample-temperature -1", ["--sample-temperature=-1"], ["--sample-temperature", "-1"]),
    ]:
        out.append(_cli(G_, f"predict {lab}", base + ["--beta", "0.5"] + extra, "error", names, files=f))
    out.append(_cli(G_, "predict --sample-temperature 1.3 --beta 0.5 without --framework (nothing to check it against)",
                    base + ["--beta", "0.5", "--sample-temperature", "1.3"], "flag", ["--sample-temperature"], files=f))
    # tradeoff: the mean P(correct) at each beta = mean over prompts of the rest
    def trade(tmp, res):
        import json
        s = json.loads((tmp / "o" / "summary.json").read_text())
        blob = json.dumps(s)
        return "tradeoff" in blob or "trade" in blob
    out.append(_cli(G_, "predict --tradeoff-betas 0.05 0.5 5: the trade-off is in summary.json",
                    base + ["--beta", "0.5", "--tradeoff-betas", "0.05", "0.5", "5"], "ok", check=trade, files=f))
    return out


def predict_clock_cases() -> list[dict]:
    G_ = "CLI: predict --clock/--fit/--steps (finite time) against an RK4 flow"
    out, base, f = [], list(BASE), {"s.csv": COUNTS}
    for beta, G, clock, steps in [(0.5, 2, 0.01, [10, 100, 300]), (0.2, 4, 0.05, [20, 60]), (0.1, 3, 0.002, [500, 1500]),
                                  (1.0, "inf", 0.1, [5, 30])]:
        Gn = INF if G == "inf" else G

        def check(tmp, res, beta=beta, Gn=Gn, clock=clock, steps=steps):
            rows = {r["prompt_id"]: r for r in _rows(tmp)}
            for pid, n, c in INNER[:3]:
                p = c / n
                for s in steps:
                    w = ref.rk4_flow([p, 1 - p], [1, 0], beta, Gn, s * clock, dt=0.005)[0]
                    got = float(rows[pid][f"at_step_{s}"])
                    if abs(got - w) > 1e-6:
                        raise AssertionError(f"{pid}: at_step_{s} {got} != RK4 {w}")
            return True
        argv = base + ["--beta", str(beta), "--group-size", str(G), "--clock", str(clock), "--steps", *map(str, steps)]
        out.append(_cli(G_, f"predict --beta {beta} -G {G} --clock {clock} --steps {steps}: at_step = the flow", argv, "ok",
                        check=check, files=f))
    for step, mean in [(100, 0.6), (40, 0.5)]:
        def check(tmp, res, step=step, mean=mean):
            rows = _rows(tmp)
            got = np.mean([float(r[f"at_step_{step}"]) for r in rows])
            return abs(got - mean) <= 1e-5 or f"mean at_step_{step} = {got} != {mean}"
        out.append(_cli(G_, f"predict --fit {step} {mean} --steps {step}: the fitted clock reproduces the mean reward",
                        base + ["--beta", "0.5", "--fit", str(step), str(mean), "--steps", str(step)], "ok",
                        check=lambda tmp, res, c=check: c(tmp, res) is True, files=f))
    for lab, extra, names in [
        ("--clock -0.0", ["--clock=-0.0", "--steps", "10"], ["--clock", "-0.0"]),
        ("--clock -0.1", ["--clock=-0.1", "--steps", "10"], ["--clock", "-0.1"]),
        ("--clock 1e400", ["--clock", "1e400", "--steps", "10"], ["--clock", "1e400"]),
        ("--clock 0.1,5 (a decimal comma)", ["--clock", "0.1,5", "--steps", "10"], ["--clock", "0.1,5"]),
        ("--fit 50 0.6 then --clock 2 (the fit first)", ["--fit", "50", "0.6", "--clock", "2", "--steps", "50"], ["--clock", "--fit"]),
        ("--steps without a clock", ["--steps", "10"], ["--steps"]),
        ("--steps -5", ["--clock", "0.1", "--steps=-5"], ["--steps", "-5"]),
        ("--steps 10.5", ["--clock", "0.1", "--steps", "10.5"], ["--steps", "10.5"]),
        ("--steps inf", ["--clock", "0.1", "--steps", "inf"], ["--steps", "inf"]),
        ("--fit 100 1.0000001 (a mean reward above 1)", ["--fit", "100", "1.0000001"], ["--fit", "1.0000001"]),
        ("--fit 100 nan", ["--fit", "100", "nan"], ["--fit", "nan"]),
        ("--fit 100 -0.2", ["--fit", "100", "-0.2"], ["--fit", "-0.2"]),
        ("--fit -10 0.5", ["--fit", "-10", "0.5"], ["--fit", "-10"]),
        ("--fit 100 0.05 (below the start's mean, about 0.41: the flow never falls there)", ["--fit", "100", "0.05"], ["--fit", "0.05"]),
        ("--fit 100 0.99 (above the stationary mean: never reached)", ["--fit", "100", "0.99"], ["--fit", "0.99"]),
        ("--fit with one number", ["--fit", "100"], ["--fit"]),
    ]:
        out.append(_cli(G_, f"predict {lab}", base + ["--beta", "0.5"] + extra, "error", names, files=f))
    return out


MEASURED = "prompt_id,n,correct\na,10,6\nb,20,12\nc,40,38\nd,16,4\n"
BIG = "prompt_id,n,correct\n" + "".join(f"q{i},32,{(7 * i) % 31 + 1}\n" for i in range(60))
BIG_AFTER = "prompt_id,n,correct\n" + "".join(f"q{i},32,{min(32, (7 * i) % 31 + 6)}\n" for i in range(0, 60, 2))


def _npy(arr):
    def w(path):
        np.save(path, arr)
    return w


def _finite_ok(tmp, res):
    rows = _rows(tmp)
    seen = 0
    for r in rows:
        v = r.get("pred_finite", "")
        if v == "":
            continue
        seen += 1
        x, lo, hi = float(v), float(r["pred_finite_lo"]), float(r["pred_finite_hi"])
        if not (0 <= lo <= x <= hi <= 1):
            raise AssertionError(f"{r['prompt_id']}: pred_finite {x} outside [{lo}, {hi}] or [0, 1]")
    return seen > 0


def predict_measured_cases() -> list[dict]:
    G_ = "CLI: predict --measured / --holdout / --kernel / --rhos / --finite-level at their edges"
    out = []
    base = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    f = {"s.csv": COUNTS, "m.csv": MEASURED}
    fb = {"s.csv": BIG, "m.csv": BIG_AFTER}
    ok = [
        ("--measured m.csv", ["--measured", "m.csv"], f),
        ("--measured m.csv --finite-level 0.5", ["--measured", "m.csv", "--finite-level", "0.5"], f),
        ("--measured m.csv --rhos 0 1", ["--measured", "m.csv", "--rhos", "0", "1"], f),
        ("--measured (60 prompts, 30 measured) --holdout 0.3 --seed 4", ["--measured", "m.csv", "--holdout", "0.3", "--seed", "4"], fb),
        ("--measured (60 prompts) --finite-level 0.99", ["--measured", "m.csv", "--finite-level", "0.99"], fb),
        ("--measured the samples file itself (no change)", ["--measured", "s.csv"], f),
        ("--measured (60 prompts) --rhos 0.5", ["--measured", "m.csv", "--rhos", "0.5"], fb),
        ("--measured (60 prompts) -G 4", ["--measured", "m.csv", "--group-size", "4"], fb),
        ("--measured (60 prompts) with an identity kernel", ["--measured", "m.csv", "--kernel", "k.npy"],
         dict(fb, **{"k.npy": _npy(np.eye(60))})),
    ]
    for lab, extra, files in ok:
        out.append(_cli(G_, f"predict {lab}: pred_finite within its interval", base + extra, "ok", check=_finite_ok, files=files))

    def held(tmp, res):
        rows = _rows(tmp)
        h = sum(1 for r in rows if r.get("heldout", "").strip().lower() in ("true", "1", "yes"))
        return (5 <= h <= 13) or f"{h} held out of 30 measured at --holdout 0.3"
    out.append(_cli(G_, "predict --holdout 0.3 on 30 measured prompts: about 9 held out", base + ["--measured", "m.csv",
                    "--holdout", "0.3"], "ok", check=held, files=fb))
    ev = np.diag([1.0] * 59 + [-1.0])
    for lab, extra, files, names in [
        ("--holdout 0.5 --seed 3 without --measured", ["--holdout", "0.5", "--seed", "3"], f, ["--holdout", "--measured"]),
        ("--holdout -0.0", ["--measured", "m.csv", "--holdout=-0.0"], f, ["--holdout", "-0.0"]),
        ("--holdout 1.0000001", ["--measured", "m.csv", "--holdout", "1.0000001"], f, ["--holdout", "1.0000001"]),
        ("--holdout inf", ["--measured", "m.csv", "--holdout", "inf"], f, ["--holdout", "inf"]),
        ("--holdout 0x0.8 (hex)", ["--measured", "m.csv", "--holdout", "0x0.8"], f, ["--holdout", "0x0.8"]),
        ("--holdout 30% (a percentage)", ["--measured", "m.csv", "--holdout", "30%"], f, ["--holdout", "30%"]),
        ("--kernel (a good 7 x 7 identity) with --clock but without --measured", ["--kernel", "k.npy", "--clock", "0.1"], dict(f, **{"k.npy": _npy(np.eye(7))}), ["--kernel", "--measured"]),
        ("--kernel a missing file", ["--measured", "m.csv", "--kernel", "nope.npy"], f, ["nope.npy"]),
        ("--kernel not positive semi-definite", ["--measured", "m.csv", "--kernel", "k.npy"], dict(fb, **{"k.npy": _npy(ev)}),
         ["k.npy"]),
        ("--kernel with a triangle of 0.3 (asymmetric)", ["--measured", "m.csv", "--kernel", "k.npy"],
         dict(fb, **{"k.npy": _npy(np.eye(60) + np.triu(np.full((60, 60), 0.3), 1))}), ["k.npy"]),
        ("--kernel a 1-D array", ["--measured", "m.csv", "--kernel", "k.npy"], dict(fb, **{"k.npy": _npy(np.ones(60))}), ["k.npy"]),
        ("--kernel a text file named .npy", ["--measured", "m.csv", "--kernel", "k.npy"], dict(fb, **{"k.npy": "1 0\n0 1\n"}),
         ["k.npy"]),
        ("--kernel all zeros", ["--measured", "m.csv", "--kernel", "k.npy"], dict(fb, **{"k.npy": _npy(np.zeros((60, 60)))}),
         ["k.npy"]),
        ("--rhos 0 0.25 1 with --holdout but without --measured", ["--rhos", "0", "0.25", "1", "--holdout", "0.2"], f, ["--measured"]),
        ("--rhos -0.5", ["--measured", "m.csv", "--rhos=-0.5"], f, ["--rhos", "-0.5"]),
        ("--rhos 1.0000001", ["--measured", "m.csv", "--rhos", "1.0000001"], f, ["--rhos", "1.0000001"]),
        ("--rhos 0.5 inf", ["--measured", "m.csv", "--rhos", "0.5", "inf"], f, ["--rhos", "inf"]),
        ("--finite-level -0.9", ["--measured", "m.csv", "--finite-level=-0.9"], f, ["--finite-level", "-0.9"]),
        ("--finite-level nan", ["--measured", "m.csv", "--finite-level", "nan"], f, ["--finite-level", "nan"]),
        ("--finite-level 90", ["--measured", "m.csv", "--finite-level", "90"], f, ["--finite-level", "90"]),
        ("--seed -12", ["--measured", "m.csv", "--holdout", "0.3", "--seed=-12"], fb, ["--seed", "-12"]),
        ("--seed 1e3", ["--measured", "m.csv", "--holdout", "0.3", "--seed", "1e3"], fb, ["--seed", "1e3"]),
        ("--measured ~/nope-after.csv (a tilde, not expanded)", ["--measured", "~/nope-after.csv"], f, ["nope-after.csv"]),
        ("--measured with an id not in the samples", ["--measured", "m2.csv"],
         dict(f, **{"m2.csv": "prompt_id,n,correct\na,10,6\nzz,10,4\n"}), ["zz"]),
        ("--measured with correct > n", ["--measured", "m2.csv"], dict(f, **{"m2.csv": "prompt_id,n,correct\na,10,16\n"}),
         ["m2.csv"]),
        ("--measured a header only", ["--measured", "m2.csv"], dict(f, **{"m2.csv": "prompt_id,n,correct\n"}), ["m2.csv"]),
        ("--measured with graded levels (count_0.5)", ["--measured", "m2.csv"],
         dict(f, **{"m2.csv": "prompt_id,count_0,count_0.25,count_1\na,3,4,3\n"}), ["m2.csv"]),
        ("--measured with a negative n", ["--measured", "m2.csv"], dict(f, **{"m2.csv": "prompt_id,n,correct\na,-10,0\n"}),
         ["m2.csv"]),
        ("--measured /dev/null (empty)", ["--measured", "/dev/null"], f, ["/dev/null"]),
    ]:
        out.append(_cli(G_, f"predict {lab}", base + extra, "error", names, files=files))
    out.append(_cli(G_, "predict --measured with one prompt measured twice (two rows for a)", base + ["--measured", "m2.csv"],
                    "error", ["a"], files=dict(f, **{"m2.csv": "prompt_id,n,correct\na,10,6\na,10,7\n"})))
    out.append(_cli(G_, "predict --measured with n = 0 for a prompt (nothing measured)", base + ["--measured", "m2.csv"],
                    "either", ["m2.csv"], check=_finite_ok, files=dict(f, **{"m2.csv": MEASURED + "e,0,0\n"})))
    return out


# ---------------------------------------------------------------- figures' data
def _fig_check(path_of, fn, key_col, key, tol=1e-9):
    """Every row of the CSV with ``key_col == key``: ``pi_a`` = ``fn(pi_ref_a)`` (``near_x`` at ``tol``)."""
    def check(v):
        path = path_of()
        with open(path, encoding="utf-8", newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r[key_col] == key]
        if not rows:
            return f"no row with {key_col} = {key}"
        for r in rows:
            p, x = float(r["pi_ref_a"]), float(r["pi_a"])
            w = fn(p)
            if w >= 1.0:
                if x < 1 - 1e-9:
                    return f"pi_ref_a {p}: {x} but the reference is the vertex"
                continue
            if not ref.near_x(x, w, tol):
                return f"pi_ref_a {p}: pi_a {x} != {w}"
        return True
    return check


def figure_cases() -> list[dict]:
    out, pf = [], ROOT / "paper_figures"
    G_ = "Figures' data CSVs (committed and fresh) against the closed forms and the finite-G root"
    fams = [("fig1_pairwise_reverse.csv", "beta_over_gamma", lambda b: (lambda p: ref.eq14(p, b))),
            ("fig2_large_group_reverse.csv", "beta", lambda b: (lambda p: ref.eq15(p, b))),
            ("fig3_pairwise_direct.csv", "beta_over_gamma", lambda b: (lambda p: ref.logistic_shift(p, 1 / b)))]
    for name, col, mk in fams:
        for key in ("0.04", "0.1", "0.2", "0.5", "1", "2", "5"):
            out.append(_api(G_, f"paper_figures/{name} rows at {col} = {key}", lambda: None,
                            _fig_check(lambda name=name: pf / name, mk(float(key)), col, key)))
    # 12 digits of pi_ref_a: the root moves by dx/dp * 5e-13; 1e-9 covers it

    def finite(G):
        return lambda p: ref.binary_rest(p, 0.5, G, "k3", n_scan=300) if G != INF else ref.eq15(p, 0.5)
    for key, G in [("2", 2), ("3", 3), ("4", 4), ("8", 8), ("16", 16), ("64", 64), ("inf", INF)]:
        out.append(_api(G_, f"paper_figures/fig4_finite_group.csv rows at G = {key} (beta = 0.5, the caption)", lambda: None,
                        _fig_check(lambda: pf / "fig4_finite_group.csv", finite(G), "group_size", key)))
    # fresh builds of figures 1-4 into a temporary folder, their CSVs checked the same way
    fresh = [("1", "fig1_pairwise_reverse.csv", "beta_over_gamma", "0.2", lambda p: ref.eq14(p, 0.2)),
             ("2", "fig2_large_group_reverse.csv", "beta", "1", lambda p: ref.eq15(p, 1.0)),
             ("3", "fig3_pairwise_direct.csv", "beta_over_gamma", "0.5", lambda p: ref.logistic_shift(p, 2.0)),
             ("4", "fig4_finite_group.csv", "group_size", "8", finite(8))]
    for n, name, col, key, fn in fresh:
        def check(tmp, res, name=name, col=col, key=key, fn=fn):
            r = _fig_check(lambda: tmp / "f" / name, fn, col, key)(None)
            if r is not True:
                raise AssertionError(r)
            return True
        out.append(_cli(G_, f"figures --only {n} --out f: {name} at {col} = {key}", ["figures", "--only", n, "--out", "f"],
                        "ok", check=check))
    return out


# ---------------------------------------------------------------- derivations, docs' examples
def derivation_cases() -> list[dict]:
    G_ = "CLI: derivations options (the sympy work stubbed)"
    out = []
    st = _symbolic_stubs()                 # render_markdown -> "RENDERED", the derivations empty

    def wrote(tmp, res, p="d.md"):
        return (tmp / p).read_text(encoding="utf-8").strip() == "RENDERED"
    out.append(_cli(G_, "derivations --out d.md writes the rendering", ["derivations", "--out", "d.md"], "ok", check=wrote,
                    stubs=st))
    out.append(_cli(G_, "derivations --out sub/dir/d.md (folders missing)", ["derivations", "--out", "sub/dir/d.md"], "either",
                    ["sub"], check=lambda tmp, res: wrote(tmp, res, "sub/dir/d.md"), stubs=st))
    out.append(_cli(G_, "derivations --out d.md/ (a trailing slash)", ["derivations", "--out", "d.md/"], "error", ["d.md"], stubs=st))
    out.append(_cli(G_, "derivations --check --out d.md (up to date)", ["derivations", "--check", "--out", "d.md"], "ok",
                    files={"d.md": "RENDERED\n"}, stubs=st))
    out.append(_cli(G_, "derivations --check --out d.md (stale: exit 1, one line naming the file)",
                    ["derivations", "--check", "--out", "d.md"], "error", ["d.md"], files={"d.md": "OLD\n"}, stubs=st, exit1=True))
    out.append(_cli(G_, "derivations --out /dev/full (no space left)", ["derivations", "--out", "/dev/full"], "error", ["/dev/full"], stubs=st))
    out.append(_cli(G_, "derivations --out d.md where d.md is a folder", ["derivations", "--out", "d.md"], "error", ["d.md"],
                    files={"d.md": None}, stubs=st))
    out.append(_cli(G_, "derivations --check --out a file of NUL bytes", ["derivations", "--check", "--out", "d.md"], "error", ["d.md"],
                    files={"d.md": b"\x00" * 64}, stubs=st, exit1=True))
    return out


def _doc_blocks(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def docs_cases() -> list[dict]:
    G_ = "Docs' Python examples run as written"
    out = []
    for path in ("docs/guide.md", "docs/dynamics.md", "docs/index.md", "README.md", "docs/trl.md"):
        blocks = [b for b in _doc_blocks(path) if "read_samples" not in b]
        for i, b in enumerate(blocks):

            def run(blocks=blocks, i=i):
                ns: dict = {"__name__": "__doc_example__"}
                import matplotlib
                matplotlib.use("Agg")
                for blk in blocks[: i + 1]:
                    exec(compile(blk, f"{path} block", "exec"), ns)          # noqa: S102 - the docs' own code
                return True
            out.append(_api(G_, f"{path} Python block {i + 1} of {len(blocks)} (after the ones before it)", run,
                            lambda v: v is True))
    # the README's two solve commands, as written, checked
    out.append(_cli(G_, "README: solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --group-size inf --json: Eq. 15",
                    ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "inf", "--json"],
                    "ok", check=_solve_row("GRPO reverse/scale", ref.eq15(0.3, 0.5))))
    w8 = ref.binary_rest(0.3, 0.5, 8, "k3")
    out.append(_cli(G_, "README: solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --group-size 8 --json: the G = 8 root",
                    ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "8", "--json"],
                    "ok", check=_solve_row("GRPO reverse/scale", w8)))
    out.append(_cli(G_, "README: solve ... --group-size 8 --json: RLHF = log pooling",
                    ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "8", "--json"],
                    "ok", check=_solve_row("RLHF", ref.logistic_shift(0.3, 2.0))))
    return out


def _solve_row(method, want):
    def check(tmp, res):
        import json
        d = json.loads(res["out"])
        row = next(r for r in d["rows"] if r["method"].startswith(method))
        x = float(row["pi"][0])
        if not ref.near_x(x, want, 1e-8):
            raise AssertionError(f"{method}: {x} != {want}")
        return True
    return check


def all_cli_cases() -> list[dict]:
    return (predict_kl_cases() + predict_column_cases() + predict_clock_cases() + predict_measured_cases()
            + figure_cases() + derivation_cases() + docs_cases())
