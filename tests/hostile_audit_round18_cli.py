"""Cases of the eighteenth hostile audit (issue 45), part two: the command line.

* ``solve --json`` on new binary questions at finite G (3 .. 40), every row with a reference: GRPO reverse/scale
  against the bisection of ``beta (x - p) = x P_G(a|x)`` (the binomial ``P_G``), reverse/shift (Eq. 14 at
  ``gamma = (G-1)/G``), direct/shift (``logit p + (G-1)/(G beta)``), RLHF (``logit p + 1/beta``), NLHF
  (``logit p + 1/(2 beta)``); option combinations with ``--std-eps 0`` spelled out and ``--group-size`` as ``inf``;
* refused ``solve`` lines, each naming the option at fault.

Tolerances: ``solve --json`` keeps ``repr`` floats: closed forms 1e-9 relative in the smaller of ``x`` and ``1 - x``;
the bisection rows 1e-7 relative plus 1e-13 absolute (the reference's ``P_G`` ~1e-14 relative; the slope of the drift
at these rests is at least 1/2 of beta).
"""

from __future__ import annotations

import json
import math

import hostile_audit_round18_ref as ref
from hostile_audit_fresh import cli_case as _cli

INF = math.inf


def _smaller(got_pi, x, y, rtol, atol=1e-300):
    if x <= 0.5:
        return ref.close(got_pi[0], x, rtol, atol)
    return ref.close(got_pi[1], y, rtol, atol)


def _row(d, method):
    row = next((r for r in d["rows"] if r["method"] == method or r["method"].startswith(method + " ")), None)
    if row is None:
        raise AssertionError(f"no row {method} in {[r['method'] for r in d['rows']]}")
    return row


def _check(want):
    def check(tmp, res):
        d = json.loads(res["out"])
        for method, (x, y, rtol, atol) in want.items():
            bad = _smaller(_row(d, method)["pi"], x, y, rtol, atol)
            if bad is not True:
                raise AssertionError(f"{method}: {bad}")
        return True
    return check


def solve_cases() -> list[dict]:
    G_ = "CLI: solve --json at finite G, every row with a reference"
    out = []
    grid = [(0.0291, 0.17, 3), (0.0291, 1.9, 7), (0.1406, 0.052, 4), (0.1406, 0.66, 13), (0.3357, 0.29, 5),
            (0.3357, 3.1, 3), (0.4862, 0.11, 9), (0.4862, 0.83, 40), (0.6623, 0.4, 6), (0.6623, 7.7, 4),
            (0.8129, 0.024, 3), (0.8129, 1.15, 17), (0.9508, 0.35, 8), (0.9508, 2.2, 30), (0.2466, 0.098, 11),
            (0.5917, 0.57, 24), (0.0712, 4.6, 5), (0.7733, 0.19, 10)]
    for p, beta, G in grid:
        f = (G - 1) / G
        lp = ref.lgt(p)
        xr = ref.rest_finite(p, beta, G)
        want = {"GRPO reverse/scale": (xr, 1 - xr, 1e-7, 1e-13),
                "GRPO reverse/shift": (ref.x14(p, beta, f), ref.y14(p, beta, f), 1e-9, 1e-300),
                "GRPO direct/shift": ref.xlogit(p, f / beta) + (1e-9, 1e-300),
                "RLHF": ref.xlogit(p, 1 / beta) + (1e-9, 1e-300),
                "NLHF": ref.xlogit(p, 0.5 / beta) + (1e-9, 1e-300)}
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "1", "0", "--beta", repr(beta),
                "--group-size", str(G), "--std-eps", "0", "--json"]
        out.append(_cli(G_, f"solve --json p={p} beta={beta} G={G} --std-eps 0: five rows", argv, "ok",
                        check=_check(want)))
    # rewards given as 7 and 2 (gap 5): scale rows unchanged, shift rows at gamma 5 (G-1)/G, RLHF logit p + 5/beta
    for p, beta, G in [(0.2718, 0.93, 3), (0.6931, 2.4, 6), (0.1414, 5.9, 12), (0.5772, 1.6, "inf")]:
        Gf = INF if G == "inf" else G
        f = 1.0 if Gf == INF else (Gf - 1) / Gf
        want = {"GRPO reverse/shift": (ref.x14(p, beta, 5 * f), ref.y14(p, beta, 5 * f), 1e-9, 1e-300),
                "RLHF": ref.xlogit(p, 5 / beta) + (1e-9, 1e-300)}
        if Gf == INF:
            want["GRPO reverse/scale"] = (ref.x15(p, beta), ref.y15(p, beta), 1e-9, 1e-300)
        else:
            xr = ref.rest_finite(p, beta, Gf)
            want["GRPO reverse/scale"] = (xr, 1 - xr, 1e-7, 1e-13)
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "7", "2", "--beta", repr(beta),
                "--group-size", str(G), "--json"]
        out.append(_cli(G_, f"solve --json rewards 7 2 p={p} beta={beta} G={G}", argv, "ok", check=_check(want)))
    # rewards in the order b, a (r = [0, 1]): the smaller side swaps
    for p, beta, G in [(0.3819, 0.44, 4), (0.8566, 0.071, 9)]:
        xr = ref.rest_finite(1 - p, beta, G)

        def chk(tmp, res, xr=xr):
            d = json.loads(res["out"])
            pi = _row(d, "GRPO reverse/scale")["pi"]
            bad = _smaller([pi[1], pi[0]], xr, 1 - xr, 1e-7, 1e-13)
            if bad is not True:
                raise AssertionError(bad)
            return True
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "0", "1", "--beta", repr(beta),
                "--group-size", str(G), "--json"]
        out.append(_cli(G_, f"solve --json rewards 0 1 (b first) p={p} beta={beta} G={G}", argv, "ok", check=chk))
    return out


def refused_cases() -> list[dict]:
    G_ = "CLI: refused solve lines, each naming the option"
    base = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"]
    R = [
        (base + ["--group-size", "1e0"], ["--group-size"]),
        (base + ["--group-size", "-12"], ["--group-size"]),
        (base + ["--group-size", "-31"], ["--group-size"]),
        (base + ["--group-size", "nAn"], ["--group-size"]),
        (base + ["--group-size", "3.5"], ["--group-size"]),
        (base + ["--group-size", "four"], ["--group-size"]),
        (base + ["--std-ddof", "3"], ["--std-ddof"]),
        (base + ["--std-ddof", "-1"], ["--std-ddof"]),
        (base + ["--std-eps", "-0.5"], ["--std-eps"]),
        (base + ["--std-eps", "+nan"], ["--std-eps"]),
        (base + ["--std-eps", "2e308"], ["--std-eps"]),
        (base + ["--std-eps", "1e-4x"], ["--std-eps"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "-0.35"], ["--beta"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "inf"], ["--beta"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0,25"], ["--beta"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0"], ["--beta"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "nan", "--beta", "0.5"], ["--rewards"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "--beta", "0.5"], ["--rewards"]),
        (["solve", "--pi-ref", "0.3", "0.6", "--rewards", "1", "0", "--beta", "0.5"], ["--pi-ref"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--preference", "0.5", "0.8", "0.2", "--beta", "0.5"], ["--preference"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--preference", "0.5", "0.8", "0.8", "0.5", "--beta", "0.5"],
         ["--preference"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--preference", "0.5", "0.8", "0.2", "0.5",
          "--beta", "0.5"], ["--preference"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1", "--beta", "0.5"], ["--reward-probs"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1", "--reward-probs", "0.5", "0.5", "0.2",
          "--beta", "0.5"], ["--reward-probs"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1", "--reward-probs", "0.5", "0.6", "0.2", "0.8",
          "--beta", "0.5"], ["--reward-probs"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--reward-probs", "0.5", "0.5", "0.2", "0.8", "--beta", "0.5"],
         ["--reward-levels"]),
        (["solve", "--pi-ref", "0.3", "0.7", "--beta", "0.5"], ["--rewards"]),
        (base + ["--group-size"], ["--group-size"]),
        (base + ["--std-eps"], ["--std-eps"]),
        (base + ["--kl-penalty", "direct"], ["--kl-penalty"]),
    ]
    return [_cli(G_, "solve " + " ".join(a[1:]), a, "error", names=n) for a, n in R]


def all_cli_cases() -> list[dict]:
    return solve_cases() + refused_cases()
