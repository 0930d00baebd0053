"""Cases of the seventeenth hostile audit (issue 45), part two: the command line.

* ``solve --json`` on new binary questions: every row (GRPO reverse/direct x scale/shift, RLHF, NLHF) against
  SPEC section 4's closed forms and section 5's baselines; ``--std-ddof 1`` at G = 2 (Eq. 14 at gamma = 1/sqrt 2);
  Bernoulli rewards given as ``--reward-levels`` / ``--reward-probs`` (Eq. 14 at gamma = p_a - p_b); a
  ``--preference`` matrix at G = 2; three outputs (RLHF, Eq. 11's residual, the direct/shift row as RLHF at
  G beta/(G-1));
* ``predict`` on count files, every column of ``predictions.csv`` that has a closed form: ``p_ref`` and its
  Jeffreys or Wilson interval (``--interval``, ``--level``), ``pred`` / ``pred_lo`` / ``pred_hi`` (the form at the
  interval's ends, the forms being increasing in p), both KLs, pass@1 and pass@8 before (the unbiased estimator) and
  after (``1 - (1 - pred)^k``), ``never_solved``; under six objectives (G = 2, G = inf, direct, shift+direct,
  shift+reverse, ddof 1);
* refused command lines of ``solve`` and ``predict``, each naming what is wrong.

Tolerances: ``solve --json`` keeps ``repr`` floats: closed forms 1e-9 relative in the smaller of ``x`` and ``1 - x``
(the solver's residual below 1e-10 of beta at slope >= 1/2); NLHF 1e-9 absolute. ``predictions.csv`` keeps 8
significant digits: 1e-7 relative (half a unit of the 8th digit is 5e-8) plus 1e-9 absolute (a value near 0 printed
to 8 digits of its own); the intervals are SciPy's Beta quantiles on both sides.
"""

from __future__ import annotations

import csv
import json
import math

import hostile_audit_round17_ref as ref
from hostile_audit_fresh import cli_case as _cli

INF = math.inf


def _smaller(got_pi, x, y, tol):
    if x <= 0.5:
        return ref.close(got_pi[0], x, tol, 1e-300)
    return ref.close(got_pi[1], y, tol, 2.3e-16)


def _row(d, method):
    row = next((r for r in d["rows"] if r["method"] == method or r["method"].startswith(method + " ")), None)
    if row is None:
        raise AssertionError(f"no row {method} in {[r['method'] for r in d['rows']]}")
    return row


def _solve_check(want: dict):
    def check(tmp, res):
        d = json.loads(res["out"])
        for method, (x, y, tol) in want.items():
            bad = _smaller(_row(d, method)["pi"], x, y, tol)
            if bad is not True:
                raise AssertionError(f"{method}: {bad}")
        return True
    return check


def _xy_logit(z):
    return ref.sig(z), ref.sig(-z)


def solve_cases() -> list[dict]:
    G_ = "CLI: solve --json, every row against SPEC sections 4 and 5"
    out = []
    grid = [(0.0083, 0.19, 2), (0.147, 0.033, 2), (0.392, 5.5, 2), (0.706, 0.71, 2), (0.9616, 0.0177, 2),
            (0.051, 0.26, INF), (0.268, 1.35, INF), (0.574, 0.089, INF), (0.889, 3.8, INF),
            (0.123, 0.42, 3), (0.455, 0.066, 6), (0.818, 2.2, 11), (0.31, 0.9, 25), (0.62, 0.15, 100)]
    for p, beta, G in grid:
        f = 1.0 if G == INF else (G - 1) / G
        lp = ref.lgt(p)
        want = {"RLHF": _xy_logit(lp + 1 / beta) + (1e-9,),
                # NLHF on a binary question: P(a > pi) - P(b > pi) = 1/2 (ties count half), so
                # logit x = logit p + 1/(2 beta)
                "NLHF": _xy_logit(lp + 0.5 / beta) + (1e-9,),
                "GRPO reverse/shift": (ref.x_eq14(p, beta, f), ref.y_eq14(p, beta, f), 1e-9),
                "GRPO direct/shift": _xy_logit(lp + f / beta) + (1e-9,)}
        if G == 2:
            want["GRPO reverse/scale"] = (ref.x_eq14(p, beta), ref.y_eq14(p, beta), 1e-9)
            want["GRPO direct/scale"] = _xy_logit(lp + 1 / beta) + (1e-9,)
        elif G == INF:
            want["GRPO reverse/scale"] = (ref.x_eq15(p, beta), ref.y_eq15(p, beta), 1e-9)
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "1", "0", "--beta", repr(beta),
                "--group-size", "inf" if G == INF else str(G), "--json"]
        out.append(_cli(G_, f"solve --json p={p} beta={beta} G={G}: rows {sorted(want)}", argv, "ok",
                        check=_solve_check(want)))
    # G = 2 with ddof 1: A = +-1/sqrt 2, Eq. 14 at gamma = 1/sqrt 2 (reverse) and logit p + gamma/beta (direct)
    g = 1 / math.sqrt(2)
    for p, beta in [(0.21, 0.37), (0.67, 1.9), (0.034, 0.12)]:
        want = {"GRPO reverse/scale": (ref.x_eq14(p, beta, g), ref.y_eq14(p, beta, g), 1e-9),
                "GRPO direct/scale": _xy_logit(ref.lgt(p) + g / beta) + (1e-9,)}
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "1", "0", "--beta", repr(beta), "--std-ddof",
                "1", "--json"]
        out.append(_cli(G_, f"solve --json --std-ddof 1 p={p} beta={beta} G=2: gamma = 1/sqrt 2", argv, "ok",
                        check=_solve_check(want)))
    # Bernoulli rewards, G = 2, scale: A_1 = sign(r_1 - r_2), gamma = p_a - p_b (SPEC section 4)
    for p, beta, pa, pb in [(0.3, 0.25, 0.9, 0.2), (0.55, 0.8, 0.6, 0.45), (0.12, 0.05, 0.7, 0.1)]:
        gm = pa - pb
        want = {"GRPO reverse/scale": (ref.x_eq14(p, beta, gm), ref.y_eq14(p, beta, gm), 1e-9),
                "GRPO direct/scale": _xy_logit(ref.lgt(p) + gm / beta) + (1e-9,)}
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--reward-levels", "0", "1", "--reward-probs", repr(1 - pa),
                repr(pa), repr(1 - pb), repr(pb), "--beta", repr(beta), "--json"]
        out.append(_cli(G_, f"solve --json Bernoulli p_a={pa} p_b={pb} p={p} beta={beta} G=2: gamma = {gm:.2f}",
                        argv, "ok", check=_solve_check(want)))
    # a preference matrix at G = 2: P(a > b) = 0.8: gamma = 0.6
    for p, beta in [(0.44, 0.3), (0.09, 1.4)]:
        want = {"GRPO reverse/scale": (ref.x_eq14(p, beta, 0.6), ref.y_eq14(p, beta, 0.6), 1e-9)}
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--preference", "0.5", "0.8", "0.2", "0.5", "--beta",
                repr(beta), "--json"]
        out.append(_cli(G_, f"solve --json --preference [[.5,.8],[.2,.5]] p={p} beta={beta}: Eq. 14 at gamma 0.6",
                        argv, "ok", check=_solve_check(want)))
    # three and four outputs
    for pr, rw, beta, G in [([0.25, 0.35, 0.4], [0.3, -1.0, 2.0], 0.45, 2), ([0.6, 0.3, 0.1], [0.0, 0.5, 1.0], 1.6, 3),
                            ([0.1, 0.2, 0.3, 0.4], [4.0, 3.0, 2.0, 1.0], 2.5, 2),
                            ([0.05, 0.9, 0.05], [1.0, 0.0, 1.0], 0.3, 4)]:
        def chk(tmp, res, pr=pr, rw=rw, beta=beta, G=G):
            d = json.loads(res["out"])
            bad = ref.close(_row(d, "RLHF")["pi"], ref.pool(pr, rw, beta), 1e-9, 1e-15)
            if bad is not True:
                raise AssertionError(f"RLHF: {bad}")
            bad = ref.close(_row(d, "GRPO direct/shift")["pi"], ref.pool(pr, rw, G * beta / (G - 1)), 1e-9, 1e-15)
            if bad is not True:
                raise AssertionError(f"GRPO direct/shift: {bad}")
            pi = _row(d, "GRPO reverse/scale")["pi"]
            r = ref.eq11_res(pi, pr, ref.pg_enum(pi, rw, G), beta)
            if not r < 1e-8:
                raise AssertionError(f"GRPO reverse/scale: Eq. 11 residual {r:.3g} at {pi}")
            return True
        argv = (["solve", "--pi-ref"] + [repr(x) for x in pr] + ["--rewards"] + [repr(x) for x in rw]
                + ["--beta", repr(beta), "--group-size", str(G), "--json"])
        out.append(_cli(G_, f"solve --json pi_ref={pr} rewards={rw} beta={beta} G={G}: RLHF, direct/shift, Eq. 11",
                        argv, "ok", check=chk))
    return out


# ---------------------------------------------------------------- predict
COUNTS = [(10, 3), (8, 8), (5, 0), (16, 1), (40, 39), (9, 4), (1, 1), (3, 2), (100, 37), (12, 6)]


def _kl(a, b):
    """KL(Bernoulli a || Bernoulli b)."""
    t = 0.0
    if a > 0:
        t += a * math.log(a / b)
    if a < 1:
        t += (1 - a) * math.log((1 - a) / (1 - b))
    return t


def _interval(c, n, kind, level):
    """docs/predict.md: Jeffreys' equal-tailed Beta(c + 1/2, n - c + 1/2) or Wilson's score interval; at c = 0 both
    give [0, 1 - (1 - level)^(1/n)], at c = n [(1 - level)^(1/n), 1]."""
    from scipy.stats import beta as B, norm
    if c == 0:
        return 0.0, 1 - (1 - level) ** (1 / n)
    if c == n:
        return (1 - level) ** (1 / n), 1.0
    a = (1 - level) / 2
    if kind == "jeffreys":
        return float(B.ppf(a, c + 0.5, n - c + 0.5)), float(B.ppf(1 - a, c + 0.5, n - c + 0.5))
    z = float(norm.ppf(1 - a))
    centre = (c + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(c * (n - c) / n + z * z / 4)
    return centre - half, centre + half


def _passk(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _predict_check(form, kind, level, counts):
    """Every closed-form column (module doc); at ``c = 0`` (docs/predict.md, "Prompts never solved") ``pred`` is the
    limit ``x(0+)`` and ``pred_hi = x(upper bound)`` (``pred_lo`` and the KLs, "evaluated at the upper bound", not
    checked there); at ``c = n`` ``pred = 1`` and both KLs 0."""
    x_of, x0 = form

    def check(tmp, res):
        with open(tmp / "o" / "predictions.csv", newline="", encoding="utf-8") as fh:
            rows = {r["prompt_id"]: r for r in csv.DictReader(fh)}
        for i, (n, c) in enumerate(counts):
            r = rows[f"p{i:02d}"]
            p = c / n
            lo, hi = _interval(c, n, kind, level)
            want = {"p_ref": p, "p_ref_lo": lo, "p_ref_hi": hi, "pass@1_before": p}
            if c == 0:
                x = x0
                want.update(pred_hi=x_of(hi))
            elif c == n:
                x = 1.0
                want.update(pred_lo=x_of(lo), pred_hi=1.0, kl_direct=0.0, kl_reverse=0.0)
            else:
                x = x_of(p)
                want.update(pred_lo=x_of(lo), pred_hi=x_of(hi), kl_direct=_kl(x, p), kl_reverse=_kl(p, x))
            want.update({"pred": x, "pass@1_after": x, "pass@8_after": 1 - (1 - x) ** 8})
            if n >= 8:
                want["pass@8_before"] = _passk(n, c, 8)
            for col, w in want.items():
                bad = ref.close(float(r[col]), w, 1e-7, 1e-9)
                if bad is not True:
                    raise AssertionError(f"p{i:02d} (n={n}, c={c}) {col}: {bad}")
            if (r["never_solved"] == "True") != (c == 0):
                raise AssertionError(f"p{i:02d} never_solved {r['never_solved']} with c={c}")
        return True
    return check


def _counts_file(counts):
    return "prompt_id,n,correct\n" + "".join(f"p{i:02d},{n},{c}\n" for i, (n, c) in enumerate(counts))


def _pform(opts, beta):
    """``(x(p) for 0 < p < 1, x(0+))`` of each option set: SPEC section 4's forms and their limits at ``p -> 0+``
    (Eq. 14: ``max(1 - beta/gamma, 0)``; Eq. 15: ``1/(1 + beta^2)``; the direct forms: 0)."""
    G = opts.get("-G", "2")
    if opts.get("--penalty") == "direct":
        f = 1.0 if opts.get("--normalization") != "shift" else (int(G) - 1) / int(G)
        return (lambda p: ref.sig(ref.lgt(p) + f / beta)), 0.0
    if opts.get("--normalization") == "shift":
        f = (int(G) - 1) / int(G)
        return (lambda p: ref.x_eq14(p, beta, f)), max(1 - beta / f, 0.0)
    if G == "inf":
        return (lambda p: ref.x_eq15(p, beta)), 1 / (1 + beta * beta)
    if opts.get("--std-ddof") == "1":
        g = 1 / math.sqrt(2)
        return (lambda p: ref.x_eq14(p, beta, g)), max(1 - beta / g, 0.0)
    return (lambda p: ref.x_eq14(p, beta)), max(1 - beta, 0.0)


def predict_cases() -> list[dict]:
    G_ = "CLI: predict on count files, every closed-form column of predictions.csv"
    out = []
    optsets = [{"-G": "2"}, {"-G": "inf"}, {"-G": "2", "--penalty": "direct"},
               {"-G": "4", "--penalty": "direct", "--normalization": "shift"},
               {"-G": "3", "--normalization": "shift"}, {"-G": "2", "--std-ddof": "1"}]
    ivs = [("jeffreys", 0.95), ("wilson", 0.8), ("jeffreys", 0.5), ("wilson", 0.99)]
    i = 0
    for opts in optsets:
        for beta in (0.13, 0.56, 2.4):
            kind, level = ivs[i % 4]
            i += 1
            argv = ["predict", "s.csv", "--beta", repr(beta), "--out", "o", "--no-plots", "--no-progress",
                    "--interval", kind, "--level", repr(level)]
            for k, v in opts.items():
                argv += ["--group-size" if k == "-G" else k, v]
            out.append(_cli(G_, f"predict {' '.join(f'{k} {v}' for k, v in opts.items())} --beta {beta} "
                                f"--interval {kind} --level {level}: 10 prompts", argv, "ok",
                            files={"s.csv": _counts_file(COUNTS)},
                            check=_predict_check(_pform(opts, beta), kind, level, COUNTS)))
    return out


# ---------------------------------------------------------------- refused command lines
def error_cases() -> list[dict]:
    """Each names what is wrong; an option may be named as typed (``--group-size``) or as its field
    (``group_size``): each of its words is required (``--pi-ref``: ``pi``)."""
    G_ = "CLI: refused command lines, each naming what is wrong"
    base = ["solve", "--pi-ref", "0.4", "0.6", "--rewards", "1", "0"]
    E = [
        ("solve --beta -0.25", base + ["--beta", "-0.25"], ["beta"]),
        ("solve --beta nan", base + ["--beta", "nan"], ["beta"]),
        ("solve --beta 2e-325 (underflows to 0)", base + ["--beta", "2e-325"], ["beta"]),
        ("solve --beta 'half'", base + ["--beta", "half"], ["beta"]),
        ("solve --beta 0,5 (a decimal comma)", base + ["--beta", "0,5"], ["beta"]),
        ("solve --group-size -2", base + ["--beta", "0.5", "--group-size", "-2"], ["group", "size"]),
        ("solve --group-size 0", base + ["--beta", "0.5", "--group-size", "0"], ["group", "size"]),
        ("solve --group-size 1e3x", base + ["--beta", "0.5", "--group-size", "1e3x"], ["group", "size"]),
        ("solve --group-size nan", base + ["--beta", "0.5", "--group-size", "nan"], ["group", "size"]),
        ("solve --std-ddof 2", base + ["--beta", "0.5", "--std-ddof", "2"], ["std-ddof"]),
        ("solve --std-eps -0.001", base + ["--beta", "0.5", "--std-eps", "-0.001"], ["std", "eps"]),
        ("solve --std-eps -inf", base + ["--beta", "0.5", "--std-eps", "-inf"], ["std", "eps"]),
        ("solve with no --beta", base, ["beta"]),
        ("solve --pi-ref 0.4 0.7 (sums to 1.1)", ["solve", "--pi-ref", "0.4", "0.7", "--rewards", "1", "0", "--beta",
                                                 "0.5"], ["pi"]),
        ("solve --pi-ref 1.2 -0.2", ["solve", "--pi-ref", "1.2", "-0.2", "--rewards", "1", "0", "--beta", "0.5"],
         ["pi"]),
        ("solve --pi-ref of 2, --rewards of 3", ["solve", "--pi-ref", "0.4", "0.6", "--rewards", "1", "0", "2", "--beta",
                                                "0.5"], ["rewards"]),
        ("solve with neither --rewards nor --reward-levels nor --preference",
         ["solve", "--pi-ref", "0.4", "0.6", "--beta", "0.5"], ["rewards"]),
        ("solve --rewards 1 nan", ["solve", "--pi-ref", "0.4", "0.6", "--rewards", "1", "nan", "--beta", "0.5"],
         ["rewards"]),
        ("solve --reward-probs of 3 numbers for K*L = 4",
         ["solve", "--pi-ref", "0.4", "0.6", "--reward-levels", "0", "1", "--reward-probs", "0.5", "0.5", "1",
          "--beta", "0.5"], ["reward", "probs"]),
        ("solve --reward-probs rows summing to 1.2",
         ["solve", "--pi-ref", "0.4", "0.6", "--reward-levels", "0", "1", "--reward-probs", "0.5", "0.7", "0.5",
          "0.5", "--beta", "0.5"], ["reward", "probs"]),
        ("solve --reward-probs without --reward-levels",
         ["solve", "--pi-ref", "0.4", "0.6", "--reward-probs", "0.5", "0.5", "0.5", "0.5", "--beta", "0.5"],
         ["reward", "levels"]),
        ("solve --preference of 3 numbers", ["solve", "--pi-ref", "0.4", "0.6", "--preference", "0.5", "0.8", "0.2",
                                             "--beta", "0.5"], ["preference"]),
        ("solve --preference with P(a>b) + P(b>a) = 1.3",
         ["solve", "--pi-ref", "0.4", "0.6", "--preference", "0.5", "0.8", "0.5", "0.5", "--beta", "0.5"],
         ["preference"]),
        ("solve --preference 1.7 outside [0, 1]",
         ["solve", "--pi-ref", "0.4", "0.6", "--preference", "0.5", "1.7", "-0.7", "0.5", "--beta", "0.5"],
         ["preference"]),
    ]
    out = [_cli(G_, lab, argv, "error", names) for lab, argv, names in E]

    def rows_are(want):
        def check(tmp, res):
            for row in json.loads(res["out"])["rows"]:
                bad = ref.close(row["pi"], want, 1e-12, 1e-15)
                if bad is not True:
                    raise AssertionError(f"{row['method']}: {bad}")
            return True
        return check
    # where the docs leave it open: refused naming the argument, or the limit every row must give
    out.append(_cli(G_, "solve --beta inf: refused, or every row at pi_ref (the limit beta -> inf)",
                    base + ["--beta", "inf", "--json"], "either", ["beta"], check=rows_are([0.4, 0.6])))
    out.append(_cli(G_, "solve --pi-ref 1 (one output): refused, or every row [1]",
                    ["solve", "--pi-ref", "1", "--rewards", "1", "--beta", "0.5", "--json"], "either", ["pi"],
                    check=rows_are([1.0])))
    good = {"s.csv": _counts_file([(10, 3), (4, 1)])}
    P = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
    PE = [
        ("predict --beta -1", P + ["--beta", "-1"], ["beta"], good),
        ("predict --beta 0.3 --group-size 1.0", P + ["--beta", "0.3", "--group-size", "1.0"], ["group", "size"], good),
        ("predict --beta 0.3 --level 95 (a percentage)", P + ["--beta", "0.3", "--level", "95"], ["level"], good),
        ("predict --beta 0.3 --level 0", P + ["--beta", "0.3", "--level", "0"], ["level"], good),
        ("predict --beta 0.3 --k 1 -8", P + ["--beta", "0.3", "--k", "1", "-8"], ["k"], good),
        ("predict --beta 0.3 --slow-tol nan", P + ["--beta", "0.3", "--slow-tol", "nan"], ["slow", "tol"], good),
        ("predict --beta 0.3 --interval agresti", P + ["--beta", "0.3", "--interval", "agresti"], ["interval"], good),
        ("predict --beta 0.3 --penalty direct --kl-estimator k3 (contradiction)",
         P + ["--beta", "0.3", "--penalty", "direct", "--kl-estimator", "k3"], ["penalty"], good),
        ("predict --beta 0.3 --kl-estimator k3_ratio_plus", P + ["--beta", "0.3", "--kl-estimator", "k3_ratio_plus"], ["kl", "estimator"], good),
        ("predict --beta 0.3 --kl-value-clamp -10", P + ["--beta", "0.3", "--kl-estimator", "k3", "--kl-value-clamp",
                                                       "-10"], ["value", "clamp"], good),
        ("predict with neither --beta nor --framework", P, ["beta"], good),
        ("predict counts with correct > n", P + ["--beta", "0.3"], ["line", "2"],
         {"s.csv": "prompt_id,n,correct\nq1,5,7\n"}),
        ("predict counts with n = 0", P + ["--beta", "0.3"], ["line", "2"], {"s.csv": "prompt_id,n,correct\nq1,0,0\n"}),
        ("predict counts with a negative correct", P + ["--beta", "0.3"], ["line", "2"],
         {"s.csv": "prompt_id,n,correct\nq1,5,-1\n"}),
        ("predict counts with a fractional n", P + ["--beta", "0.3"], ["line", "2"],
         {"s.csv": "prompt_id,n,correct\nq1,5.5,2\n"}),
        ("predict on a header-only file", P + ["--beta", "0.3"], ["s.csv"], {"s.csv": "prompt_id,n,correct\n"}),
        ("predict on an empty file", P + ["--beta", "0.3"], ["s.csv"], {"s.csv": ""}),
        ("predict on a missing file", ["predict", "missing.csv", "--out", "o", "--beta", "0.3", "--no-plots"],
         ["missing.csv"], {}),
        ("predict rewards rows with a reward 'yes'", P + ["--beta", "0.3"], ["line", "3"],
         {"s.csv": "prompt_id,reward\nq1,1\nq1,yes\n"}),
    ]
    out += [_cli(G_, lab, argv, "error", names, files=files) for lab, argv, names, files in PE]
    return out


def all_cli_cases() -> list[dict]:
    return solve_cases() + predict_cases() + error_cases()


# ---------------------------------------------------------------- graded predict: shift + direct is RLHF
def _graded_check(levels, beta_eff, prompts):
    """Shift-only + direct penalty (SPEC section 3): over the levels, ``pi ∝ freq exp(r/beta')`` with
    ``beta' = G beta/(G-1)``; ``mean_reward_after``, ``kl_direct``, pass@1 before and after ("correct" is the top
    level)."""
    def check(tmp, res):
        with open(tmp / "o" / "predictions.csv", newline="", encoding="utf-8") as fh:
            rows = {r["prompt_id"]: r for r in csv.DictReader(fh)}
        for pid, rewards in prompts.items():
            r = rows[pid]
            freq = [rewards.count(v) / len(rewards) for v in levels]
            pi = ref.pool(freq, levels, beta_eff)
            want = {"mean_reward_after": math.fsum(a * v for a, v in zip(pi, levels)),
                    "kl_direct": math.fsum(a * math.log(a / f) for a, f in zip(pi, freq) if a > 0),
                    "pass@1_before": freq[-1], "pass@1_after": pi[-1]}
            for col, w in want.items():
                bad = ref.close(float(r[col]), w, 1e-7, 1e-9)
                if bad is not True:
                    raise AssertionError(f"{pid} {col}: {bad}")
        return True
    return check


def graded_cases() -> list[dict]:
    import numpy as np

    G_ = "CLI: predict with graded rewards, shift + direct (RLHF at G beta/(G-1)) against log pooling"
    rng = np.random.default_rng(1700)
    out = []
    for i, (levels, beta, G) in enumerate([([0.0, 0.5, 1.0], 0.2, 2), ([0.0, 0.5, 1.0], 0.75, 5),
                                           ([0.0, 0.5, 1.0], 3.1, "inf"), ([-1.0, 0.0, 2.0, 3.0], 0.45, 3),
                                           ([-1.0, 0.0, 2.0, 3.0], 1.7, 8), ([0.0, 0.25, 0.75, 1.0], 0.09, 2)]):
        prompts = {}
        for j in range(5):
            n = int(rng.integers(4, 13))
            prompts[f"g{j}"] = [float(rng.choice(levels)) for _ in range(n)]
        prompts["g5"] = [levels[0], levels[-1], levels[1]]
        text = "prompt_id,reward\n" + "".join(f"{pid},{v!r}\n" for pid, rs in prompts.items() for v in rs)
        f = 1.0 if G == "inf" else (G - 1) / G
        argv = ["predict", "s.csv", "--beta", repr(beta), "--group-size", str(G), "--normalization", "shift",
                "--penalty", "direct", "--levels"] + [repr(v) for v in levels] + ["--out", "o", "--no-plots",
                                                                                  "--no-progress"]
        out.append(_cli(G_, f"predict graded levels={levels} beta={beta} G={G} shift+direct: 6 prompts", argv, "ok",
                        files={"s.csv": text}, check=_graded_check(levels, beta / f, prompts)))
    return out


def all_cli_cases() -> list[dict]:  # noqa: F811 - the graded cases added
    return solve_cases() + predict_cases() + graded_cases() + error_cases()
