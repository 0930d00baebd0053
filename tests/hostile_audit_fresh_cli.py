"""Cases of the fresh hostile audit (issue 45, round four), part two: the command line.

``solve`` with combinations and conflicts of options (every ``--json`` row checked by enumeration, the RLHF
closed form and the NLHF fixed point), output paths (an existing folder, a file where a folder is meant,
symlinks, a FIFO, names of 255+ bytes, unicode, newlines), ``explain --json``, ``sweep`` and ``predict`` at
the edges (checked against Eq. 14), and Ctrl-C during ``sweep``, ``predict`` and ``figures``, then a rerun.
See :mod:`hostile_audit_fresh_cases` for the shape of a case; a case with ``proc`` runs in a subprocess.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np

import hostile_audit_fresh_ref as ref

SAMPLES = "prompt_id,n,correct\na,10,3\nb,8,0\nc,4,4\nd,6,5\n"


def _solve_json_ok(p, r, beta, G, ddof=0, eps=0.0):
    p = np.asarray(p, float)
    p = p / p.sum()

    def check(tmp, res) -> bool:
        data = json.loads(res["out"])
        ok = []
        for row in data["rows"]:
            pi = np.asarray(row["pi"], float)
            m = row["method"]
            if m.startswith("GRPO"):
                pen, norm = m.split()[1].split("/")
                if row.get("boundary") or row.get("pi") is None:
                    ok.append(True)
                    continue
                if np.ptp(r) == 0:
                    ok.append(np.allclose(pi, p, rtol=1e-9))
                    continue
                ok.append(ref.stationary_ok(pi, p, r, beta, G, penalty=pen, normalization=norm, ddof=ddof, eps=eps))
            elif m.startswith("RLHF"):
                ok.append(np.allclose(pi, ref.rlhf(p, r, beta), rtol=1e-9, atol=1e-300))
            elif m.startswith("NLHF"):
                ok.append(ref.nlhf_ok(pi, p, r, beta))
        return len(ok) == 6 and all(ok)
    return check


def solve_cases() -> list[dict]:
    base = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"]
    out = []
    Q = [  # (label, pi_ref, rewards, beta, G, extra argv)
        ("tie", [0.3, 0.7], [1, 1], 0.5, 2, []),
        ("three-way tie", [0.2, 0.3, 0.5], [2, 2, 2], 0.5, 3, []),
        ("tie of the best two", [0.2, 0.3, 0.5], [1, 1, 0], 0.5, 3, []),
        ("one answer", [1.0], [5.0], 0.5, 2, []),
        ("rewards 1e200 and -1e200", [0.3, 0.7], [1e200, -1e200], 0.5, 2, []),
        ("rewards 1e-200 and 0", [0.3, 0.7], [1e-200, 0], 0.5, 2, []),
        ("rewards 1e15+1 and 1e15", [0.3, 0.7], [1e15 + 1, 1e15], 0.5, 2, []),
        ("pi_ref 1e-300 and 1", [1e-300, 1.0], [1, 0], 0.5, 2, []),
        ("pi_ref 1e-300 on the worse", [1.0, 1e-300], [1, 0], 0.5, 2, []),
        ("pi_ref with an exact 0", [0.0, 0.3, 0.7], [1, 0.5, 0], 0.5, 3, []),
        ("pi_ref summing to 1 + 1e-13", [0.3, 0.7 + 1e-13], [1, 0], 0.5, 2, []),
        ("negative rewards", [0.2, 0.3, 0.5], [-1, -3, -2], 0.5, 3, []),
        ("beta 1e-8", [0.3, 0.7], [1, 0], 1e-8, 2, []),
        ("beta 1e8", [0.3, 0.7], [1, 0], 1e8, 2, []),
        ("G=4, ddof 1, eps 1e-4", [0.2, 0.3, 0.5], [1, 0, 0.5], 0.5, 4, ["--std-ddof", "1", "--std-eps", "1e-4"]),
        ("G=5", [0.2, 0.3, 0.5], [1, 0, 0.5], 0.5, 5, []),
        ("G=inf", [0.2, 0.3, 0.5], [1, 0, 0.5], 2.0, math.inf, []),
        ("G=inf, ties", [0.2, 0.3, 0.5], [1, 1, 0], 2.0, math.inf, []),
        ("G=2 spelled 2.0 (documented: an integer; either way)", [0.3, 0.7], [1, 0], 0.5, 2,
         ["--group-size", "2.0"]),
        ("six answers", [0.1, 0.1, 0.2, 0.2, 0.15, 0.25], [1, 0, 0.5, 0.25, 1, 0], 0.5, 3, []),
        ("--beta given twice (the last counts)", [0.3, 0.7], [1, 0], 0.7, 2, ["--beta", "0.7"]),
        ("option abbreviation --group 3", [0.3, 0.7], [1, 0], 0.5, 3, ["--group", "3"]),
    ]
    for label, p, r, beta, G, extra in Q:
        argv = ["solve", "--pi-ref", *map(repr, p), "--rewards", *map(repr, map(float, r)), "--beta", repr(beta)]
        if "--group-size" not in extra and "--group" not in extra:
            argv += ["--group-size", "inf" if math.isinf(G) else str(G)]
        if "--beta" in extra:
            argv = argv[: argv.index("--beta")] + argv[argv.index("--beta") + 2:] + ["--beta", "0.5"]
        ddof = int(extra[extra.index("--std-ddof") + 1]) if "--std-ddof" in extra else 0
        eps = float(extra[extra.index("--std-eps") + 1]) if "--std-eps" in extra else 0.0
        out.append(dict(group="solve --json, checked", label=label, argv=argv + extra + ["--json"],
                        expect="either" if "2.0" in extra else "ok", names=["2.0"],
                        check=_solve_json_ok(p, r, beta, G, ddof, eps)))
    C = [  # conflicts and combinations: (label, argv, expect, names)
        ("--rewards and --reward-levels", base + ["--reward-levels", "0", "1"], "error", ["--rewards", "--reward-levels"]),
        ("--rewards and --preference", base + ["--preference", "0.5", "0.9", "0.1", "0.5"], "error",
         ["--rewards", "--preference"]),
        ("--reward-probs without --reward-levels", ["solve", "--pi-ref", "0.3", "0.7", "--reward-probs", "0.2", "0.8",
                                                     "0.6", "0.4", "--beta", "0.5"], "error", ["--reward-levels"]),
        ("--reward-levels without --reward-probs", ["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1",
                                                     "--beta", "0.5"], "error", ["--reward-probs"]),
        ("no rewards at all", ["solve", "--pi-ref", "0.3", "0.7", "--beta", "0.5"], "error", ["--rewards"]),
        ("--reward-probs rows summing to 0.9", ["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1",
                                                "--reward-probs", "0.2", "0.7", "0.6", "0.4", "--beta", "0.5"],
         "error", ["reward_probs", "0.89999"]),
        ("--reward-probs of 3 numbers", ["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "0", "1",
                                         "--reward-probs", "0.2", "0.8", "0.6", "--beta", "0.5"], "error", ["--reward-probs", "4", "0.6]"]),
        ("--reward-levels repeated", ["solve", "--pi-ref", "0.3", "0.7", "--reward-levels", "1", "1",
                                      "--reward-probs", "0.2", "0.8", "0.6", "0.4", "--beta", "0.5"], "error",
         ["reward_levels"]),
        ("--preference with G = 4", ["solve", "--pi-ref", "0.3", "0.7", "--preference", "0.5", "0.9", "0.1", "0.5",
                                     "--beta", "0.5", "--group-size", "4"], "either", ["preference", "4"]),
        ("--preference not antisymmetric", ["solve", "--pi-ref", "0.3", "0.7", "--preference", "0.5", "0.9", "0.3",
                                            "0.5", "--beta", "0.5"], "error", ["preference"]),
        ("--preference diagonal 1", ["solve", "--pi-ref", "0.3", "0.7", "--preference", "1", "0.9", "0.1", "1",
                                     "--beta", "0.5"], "error", ["preference"]),
        ("--preference of 3 numbers", ["solve", "--pi-ref", "0.3", "0.7", "--preference", "0.5", "0.9", "0.1",
                                       "--beta", "0.5"], "error", ["preference", "3"]),
        ("--pi-ref all zeros", ["solve", "--pi-ref", "0", "0", "--rewards", "1", "0", "--beta", "0.5"], "error",
         ["pi_ref"]),
        ("--pi-ref summing to 1 + 1e-6", ["solve", "--pi-ref", "0.3", "0.700001", "--rewards", "1", "0", "--beta",
                                          "0.5"], "error", ["pi_ref"]),
        ("--std-eps with --group-size inf", base + ["--group-size", "inf", "--std-eps", "1e-4"], "either",
         ["--std-eps"]),
        ("--std-ddof 1 with --group-size inf", base + ["--group-size", "inf", "--std-ddof", "1"], "ok", []),
        ("--std-ddof 2", base + ["--std-ddof", "2"], "error", ["--std-ddof", "2"]),
        ("--json twice", base + ["--json", "--json"], "ok", []),
        ("unknown option --betta", base + ["--betta", "1"], "error", ["--betta"]),
        ("positional junk", base + ["extra"], "error", ["extra"]),
        ("--pi-ref of 1,000 equal masses", ["solve", "--pi-ref", *["0.001"] * 1000, "--rewards",
                                            *(["1"] * 300 + ["0"] * 700), "--beta", "0.5", "--json"], "ok", []),
        ("--rewards of another length", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "0.5", "--beta",
                                         "0.5"], "error", ["rewards", "3"]),
    ]
    for label, argv, expect, names in C:
        case = dict(group="solve options together", label=label, argv=argv, expect=expect, names=names)
        if label.startswith("--pi-ref of 1,000"):
            case["check"] = _thousand_ok
        if label == "--preference with G = 4":           # answered row by row: n/a, with the reason
            case["check"] = lambda tmp, res: "n/a" in res["out"] and "only for G = 2" in res["out"]
        out.append(case)
    return out


def _thousand_ok(tmp, res) -> bool:
    data = json.loads(res["out"])
    row = data["rows"][0]                                   # GRPO reverse/scale, G = 2: Eq. 14 per class
    pi = np.asarray(row["pi"])
    return ref.close(pi[:300].sum(), ref.eq14(0.3, 0.5), 1e-8) and np.ptp(pi[:300]) < 1e-15


# ---------------------------------------------------------------- output paths
def _sweep_rows_ok(out):
    def check(tmp, res) -> bool:
        with open(tmp / out, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        return len(rows) == 1 and ref.close(json.loads(rows[0]["reached_policy"])[0], ref.eq14(0.3, 0.5), 1e-9)
    return check


def _predict_ok(folder):
    def check(tmp, res) -> bool:
        with open(tmp / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        return len(rows) == 4 and all(_pred_row_ok(r, 0.5) for r in rows) \
            and not (tmp / folder / ".incomplete").exists()
    return check


def _pred_row_ok(row, beta) -> bool:
    n, c = int(row["n"]), int(row["correct"])
    p = c / n
    want = ref.eq14(p, beta) if p > 0 else max(1 - beta, 0.0)
    return abs(float(row["p_ref"]) - p) < 1e-8 and abs(float(row["pred"]) - want) < 1e-7


GRID = "objectives: {beta: 0.5, group_size: 2}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"
LONG = "x" * 300
DEEP = "/".join(["d" * 200] * 25)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _symlink(target: str):
    def make(path: Path) -> None:
        os.symlink(target, path)
    return make


def _loop(path: Path) -> None:
    os.symlink(path.name, path)


def path_cases() -> list[dict]:
    out = []
    S = [  # sweep --out: (label, out path, files, expect, names, check)
        ("an existing folder", "d", {"d": None}, "error", ["d", "folder"], None),
        ("inside a file", "f/x.csv", {"f": "text"}, "error", ["f"], None),
        ("a symlink to a file of earlier rows", "link.csv", {"real.csv": "", "link.csv": _symlink("real.csv")},
         "ok", [], lambda tmp, res: (tmp / "link.csv").is_symlink() and _sweep_rows_ok("real.csv")(tmp, res)),
        ("a dangling symlink", "dang.csv", {"dang.csv": _symlink("nowhere/x.csv")}, "error", ["dang.csv"], None),
        ("a symlink loop", "loop.csv", {"loop.csv": _loop}, "error", ["loop.csv"], None),
        ("a FIFO", "fifo.csv", {"fifo.csv": _fifo}, "error", ["fifo.csv"], None),
        ("a name of 300 bytes", LONG + ".csv", {}, "error", [LONG[:50]], None),
        ("a path of 5,000 bytes", DEEP + "/x.csv", {}, "error", ["d" * 50], None),
        ("a unicode name", "résultats-αβγ-😀.csv", {}, "ok", [], _sweep_rows_ok("résultats-αβγ-😀.csv")),
        ("a name with a newline", "a\nb.csv", {}, "either", ["a\\nb.csv"], _sweep_rows_ok("a\nb.csv")),
        ("a name starting with '-' (--out=-x.csv)", "-x.csv", {}, "ok", [], _sweep_rows_ok("-x.csv")),
        ("the grid itself", "g.yaml", {}, "error", ["g.yaml"], None),
        ("'.'", ".", {}, "error", ["."], None),
        ("empty", "", {}, "error", ["--out"], None),
        ("a right-to-left name", "\u202eoutput.csv", {}, "ok", [], _sweep_rows_ok("\u202eoutput.csv")),
    ]
    for label, path, files, expect, names, check in S:
        out.append(dict(group="sweep --out paths", label=label, files={"g.yaml": GRID, **files},
                        argv=["sweep", "g.yaml", f"--out={path}", "--workers", "1", "--no-progress"],
                        expect=expect, names=names, check=check))
    P = [  # predict --out: a folder
        ("a file", "f", {"f": "text"}, "error", ["f"], None),
        ("a symlink to a folder", "ln", {"real": None, "ln": _symlink("real")}, "ok", [], _predict_ok("ln")),
        ("a dangling symlink", "dang", {"dang": _symlink("nowhere")}, "either", ["dang"], _predict_ok("dang")),
        ("a symlink to a file", "lf", {"t.txt": "x", "lf": _symlink("t.txt")}, "error", ["lf"], None),
        ("a name of 300 bytes", LONG, {}, "error", [LONG[:50]], None),
        ("a path of 5,000 bytes", DEEP, {}, "error", ["d" * 50], None),
        ("a unicode folder", "预测-ü", {}, "ok", [], _predict_ok("预测-ü")),
        ("nested missing parents", "a/b/c", {}, "either", ["a/b/c"], _predict_ok("a/b/c")),
        ("the samples file itself", "s.csv", {}, "error", ["s.csv"], None),
        ("a folder holding other files", "busy", {"busy/keep.txt": "mine"}, "ok", [],
         lambda tmp, res: _predict_ok("busy")(tmp, res) and (tmp / "busy/keep.txt").read_text() == "mine"),
        ("a folder left .incomplete by an earlier run", "half", {"half/.incomplete": "grpo-theory predict"}, "ok", [],
         _predict_ok("half")),
        ("a FIFO", "fifo", {"fifo": _fifo}, "error", ["fifo"], None),
    ]
    for label, path, files, expect, names, check in P:
        out.append(dict(group="predict --out paths", label=label, files={"s.csv": SAMPLES, **files},
                        argv=["predict", "s.csv", "--beta", "0.5", f"--out={path}", "--no-plots", "--no-progress"],
                        expect=expect, names=names, check=check))
    D = [  # derivations --out: a file
        ("a symlink to a file", "ln.md", {"real.md": "old", "ln.md": _symlink("real.md")}, "ok", []),
        ("a FIFO", "fifo.md", {"fifo.md": _fifo}, "error", ["fifo.md"]),
        ("a name of 300 bytes", LONG + ".md", {}, "error", [LONG[:50]]),
        ("a unicode name", "dérivations-ß.md", {}, "ok", []),
        ("inside a file", "f/x.md", {"f": "text"}, "error", ["f"]),
        ("--check on a symlink loop", "loop.md", {"loop.md": _loop}, "error", ["loop.md"]),
    ]
    for label, path, files, expect, names in D:
        argv = ["derivations", f"--out={path}"] + (["--check"] if "--check" in label else [])
        out.append(dict(group="derivations --out paths", label=label, files=files, argv=argv, expect=expect,
                        names=names, stub_symbolic=True, exit1=False,
                        check=(lambda tmp, res, path=path: (tmp / path).read_text() == "RENDERED"
                               and (path != "ln.md" or (tmp / "ln.md").is_symlink()))))
    F = [  # figures --out: a folder (drawing stubbed)
        ("a file", "f", {"f": "x"}, "error", ["f"]),
        ("a symlink to a file", "lf", {"t": "x", "lf": _symlink("t")}, "error", ["lf"]),
        ("a name of 300 bytes", LONG, {}, "error", [LONG[:50]]),
        ("a unicode folder", "图-ß", {}, "ok", []),
        ("a FIFO", "fifo", {"fifo": _fifo}, "error", ["fifo"]),
    ]
    for label, path, files, expect, names in F:
        out.append(dict(group="figures --out paths", label=label, files=files,
                        argv=["figures", f"--out={path}", "--only", "1"], expect=expect, names=names,
                        stub_figures=True))
    return out


# ---------------------------------------------------------------- explain --json, sweep and predict at the edges
def explain_cases() -> list[dict]:
    C = [  # (label, framework, config file text, extra argv, expect, names, check of the parsed JSON)
        ("TRL minimal", "trl", '{"beta": 0.04, "num_generations": 8}', [], "ok", [],
         lambda d: True),
        ("TRL with a question", "trl", '{"beta": 0.5, "num_generations": 2}',
         ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0"], "ok", [], None),
        ("TRL beta 0 (no penalty)", "trl", '{"beta": 0.0, "num_generations": 4}', [], "either", ["beta"], None),
        ("TRL num_generations 1", "trl", '{"beta": 0.1, "num_generations": 1}', [], "error", ["num_generations"],
         None),
        ("TRL beta 1e-300", "trl", '{"beta": 1e-300, "num_generations": 2}',
         ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0"], "ok", [], None),
        ("TRL a question with a tie", "trl", '{"beta": 0.5, "num_generations": 2}',
         ["--pi-ref", "0.3", "0.7", "--rewards", "1", "1"], "ok", [], None),
        ("TRL a question of one answer", "trl", '{"beta": 0.5, "num_generations": 2}',
         ["--pi-ref", "1", "--rewards", "1"], "ok", [], None),
        ("TRL --rewards without --pi-ref", "trl", '{"beta": 0.5}', ["--rewards", "1", "0"], "error",
         ["--pi-ref"], None),
        ("TRL scale_rewards 'none'", "trl", '{"beta": 0.1, "num_generations": 4, "scale_rewards": "none"}', [],
         "ok", [], None),
        ("TRL unicode key", "trl", '{"beta": 0.1, "num_generations": 4, "bétà": 1}', [], "ok", [],
         lambda d: any("bétà" in w for w in d["warnings"])),
        ("verl minimal", "verl", "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.2\n"
                                 "  rollout:\n    n: 4\n", [], "ok", [], None),
        ("verl kl_loss_coef 0 with use_kl_loss", "verl",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.0\n  rollout:\n    n: 4\n", [],
         "either", ["kl_loss_coef"], None),
        ("verl rollout.n 1 (the default estimator, gae, allows it)", "verl",
         "actor_rollout_ref:\n  rollout:\n    n: 1\n", [], "ok", [],
         lambda d: d["objective"] is None and "gae" in d["reason"]),
        ("OpenRLHF argv", "openrlhf", '["--init_kl_coef", "0.05", "--n_samples_per_prompt", "4", '
                                      '"--advantage_estimator", "group_norm"]', [], "ok", [], None),
        ("OpenRLHF flags object", "openrlhf", '{"init_kl_coef": 0.05, "n_samples_per_prompt": 4}', [], "ok", [],
         None),
        ("OpenRLHF n_samples_per_prompt 0", "openrlhf", '{"init_kl_coef": 0.05, "n_samples_per_prompt": 0}', [],
         "error", ["n_samples_per_prompt"], None),
        ("TRL --completion-tokens 1", "trl", '{"beta": 0.1, "num_generations": 4}', ["--completion-tokens", "1"],
         "ok", [], None),
        ("TRL --pi-ref of 3 and --rewards of 3 with a 1e-300 mass", "trl", '{"beta": 0.5, "num_generations": 2}',
         ["--pi-ref", "1e-300", "0.5", "0.5", "--rewards", "1", "0", "0.5"], "ok", [], None),
    ]
    out = []
    for label, fw, text, extra, expect, names, check in C:
        ext = ".yaml" if fw == "verl" else ".json"
        out.append(dict(group="explain --json", label=label, files={"c" + ext: text},
                        argv=["explain", "c" + ext, "--framework", fw, "--json"] + extra, expect=expect, names=names,
                        check=_json_ok(check)))
    return out


def _json_ok(check):
    def ok(tmp, res) -> bool:
        data = json.loads(res["out"])
        return isinstance(data, dict) and (check is None or check(data))
    return ok


def _grid_ok(out, want):
    """``want``: {key fragment: expected reached pi[0]}."""
    def check(tmp, res) -> bool:
        with open(tmp / out, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if len(rows) != len(want) or len({r["key"] for r in rows}) != len(rows):
            return False
        for frag, x in want.items():
            hit = [r for r in rows if frag in r["key"] or frag in r["objective"]]
            if len(hit) != 1 or not ref.close(json.loads(hit[0]["reached_policy"])[0], x, 1e-8):
                return False
        return True
    return check


def sweep_cases() -> list[dict]:
    Q = "questions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"
    S = [  # (label, grid, argv extra, files, expect, names, check)
        ("one case, G=inf", "objectives: {beta: 0.5, group_size: inf}\n" + Q, [], {}, "ok", [],
         _grid_ok("g.csv", {"beta=0.5": ref.eq15(0.3, 0.5)})),
        ("G .inf (YAML)", "objectives: {beta: 0.5, group_size: .inf}\n" + Q, [], {}, "ok", [],
         _grid_ok("g.csv", {"beta=0.5": ref.eq15(0.3, 0.5)})),
        ("direct penalty, G=2", "objectives: {beta: 0.5, penalty: direct}\n" + Q, [], {}, "ok", [],
         _grid_ok("g.csv", {"beta=0.5": ref.g2_direct(0.3, 0.5)})),
        ("a tie question", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 1]}]\n", [], {},
         "ok", [], _grid_ok("g.csv", {"beta=0.5": 0.3})),
        ("a one-answer question", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [1.0], rewards: [1]}]\n", [], {},
         "ok", [], _grid_ok("g.csv", {"beta=0.5": 1.0})),
        ("pi_ref 1e-300", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [1.0e-300, 1.0], rewards: [1, 0]}]\n", [],
         {}, "either", ["1e-300"], None),
        ("beta written 5e-1 (YAML text)", "objectives: {beta: 5e-1}\n" + Q, [], {}, "ok", [],
         _grid_ok("g.csv", {"beta=0.5": ref.eq14(0.3, 0.5)})),
        ("three betas, two questions", "objectives: {beta: [0.25, 0.5, 1.0]}\nquestions: [{pi_ref: [0.3, 0.7], "
         "rewards: [1, 0]}, {pi_ref: [0.6, 0.4], rewards: [1, 0]}]\n", [], {}, "ok", [], None),
        ("rerun after a complete run (no duplicates)", "objectives: {beta: [0.25, 0.5]}\n" + Q, [], {}, "ok", [],
         None),
        ("--out holding another grid's rows", "objectives: {beta: 0.5}\n" + Q, ["--out", "other.csv"],
         {"other.csv": "key,objective,pi_ref,n_points,n_stable,exhaustive,stable_policies,reached_policy,seconds\n"
                       "q0|beta=9,x,[0.5],1,1,True,[[0.5]],[0.5],0.0\n"}, "either", ["other.csv"], None),
        ("--workers 0", "objectives: {beta: 0.5}\n" + Q, ["--workers", "0"], {}, "error", ["--workers", "0"], None),
        ("--workers 10^6", "objectives: {beta: 0.5}\n" + Q, ["--workers", "1000000"], {}, "either",
         ["--workers"], None),
        ("--workers and --dask-workers", "objectives: {beta: 0.5}\n" + Q, ["--workers", "2", "--dask-workers", "2"],
         {}, "either", ["--dask-workers"], None),
        ("--dask-workers -1", "objectives: {beta: 0.5}\n" + Q, ["--dask-workers", "-1"], {}, "error",
         ["--dask-workers", "-1"], None),
        ("a question with labels", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0], "
         "labels: [a, b]}]\n", [], {}, "either", ["labels"], None),
        ("penalty direct and kl_estimator k1", "objectives: {beta: 0.5, penalty: direct, kl_estimator: k1}\n" + Q,
         [], {}, "either", ["penalty", "kl_estimator"], None),
        ("simplex with step 0.5 (one interior point at 3 rewards?)", "objectives: {beta: 0.5}\nsimplex: {rewards: "
         "[1, 0, 0.5], step: 0.5}\n", [], {}, "either", ["step"], None),
        ("simplex and questions both", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0], step: 0.25}\n" + Q, [],
         {}, "either", ["simplex", "questions"], None),
    ]
    out = []
    for label, grid, extra, files, expect, names, check in S:
        case = dict(group="sweep at the edges", label=label, files={"g.yaml": grid, **files},
                    argv=["sweep", "g.yaml", "--no-progress"] + (["--workers", "1"] if "--workers" not in extra
                                                                 and "--dask" not in " ".join(extra) else []) + extra,
                    expect=expect, names=names, check=check)
        if label.startswith("rerun"):
            case["rerun"] = True
            case["check"] = _rows_unique("g.csv", 2)
        if label.startswith("three betas"):
            case["check"] = _rows_eq14("g.csv")
        out.append(case)
    return out


def _rows_unique(out, n):
    def check(tmp, res) -> bool:
        with open(tmp / out, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        return len(rows) == n and len({r["key"] for r in rows}) == n
    return check


def _rows_eq14(out):
    def check(tmp, res) -> bool:
        with open(tmp / out, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if len(rows) != 6:
            return False
        for r in rows:
            p = json.loads(r["pi_ref"])[0]
            b = float(r["key"].split("beta=")[1].split(",")[0].split("|")[0])
            if not ref.close(json.loads(r["reached_policy"])[0], ref.eq14(p, b), 1e-8):
                return False
        return True
    return check


def predict_cases() -> list[dict]:
    base = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
    P = [  # (label, samples text, argv extra, expect, names, check)
        ("--k 20 above every n", SAMPLES, ["--beta", "0.5", "--k", "20"], "either", ["20"], _pass_k_ok(20)),
        ("--k 1 twice", SAMPLES, ["--beta", "0.5", "--k", "1", "1"], "either", ["--k"], None),
        ("one prompt", "prompt_id,n,correct\nonly,5,2\n", ["--beta", "0.5"], "ok", [], _pred_ok_all(0.5)),
        ("every prompt always right", "prompt_id,n,correct\na,5,5\nb,3,3\n", ["--beta", "0.5"], "ok", [],
         _pred_ok_all(0.5)),
        ("n = 1 everywhere", "prompt_id,n,correct\na,1,1\nb,1,0\n", ["--beta", "0.5"], "ok", [], _pred_ok_all(0.5)),
        ("beta 1e-300", SAMPLES, ["--beta", "1e-300"], "ok", [], _pred_ok_all(1e-300)),
        ("beta 1e300", SAMPLES, ["--beta", "1e300"], "ok", [], _pred_ok_all(1e300)),
        ("--steps without --clock or --fit", SAMPLES, ["--beta", "0.5", "--steps", "100"], "error",
         ["--steps", "--clock"], None),
        ("--clock and --fit both", SAMPLES, ["--beta", "0.5", "--clock", "0.01", "--fit", "10", "0.5"], "error",
         ["--clock", "--fit"], None),
        ("--fit with a mean reward of 1.5", SAMPLES, ["--beta", "0.5", "--fit", "10", "1.5", "--steps", "20"],
         "error", ["1.5"], None),
        ("--fit at step 0", SAMPLES, ["--beta", "0.5", "--fit", "0", "0.6", "--steps", "20"], "error", ["0"], None),
        ("--tradeoff-betas of 50 values", SAMPLES, ["--beta", "0.5", "--tradeoff-betas",
                                                    *[str(float(b)) for b in np.geomspace(0.01, 10, 50)]], "ok", [], None),
        ("--tradeoff-betas repeated value", SAMPLES, ["--beta", "0.5", "--tradeoff-betas", "0.5", "0.5"], "either",
         ["0.5"], None),
        ("--group-size inf", SAMPLES, ["--beta", "0.5", "--group-size", "inf"], "ok", [], _pred_gen(ref.eq15, 0.5)),
        ("--penalty direct", SAMPLES, ["--beta", "0.5", "--penalty", "direct"], "ok", [],
         _pred_gen(ref.g2_direct, 0.5)),
        ("--std-ddof 1 --group-size inf", SAMPLES, ["--beta", "0.5", "--std-ddof", "1", "--group-size", "inf"], "ok",
         [], _pred_gen(ref.eq15, 0.5)),
        ("--kl-estimator K3 (case)", SAMPLES, ["--beta", "0.5", "--kl-estimator", "K3"], "either", ["K3"], None),
        ("--kl-estimator bogus", SAMPLES, ["--beta", "0.5", "--kl-estimator", "k9"], "error", ["k9"], None),
        ("--levels 0 1 on counts", SAMPLES, ["--beta", "0.5", "--levels", "0", "1"], "ok", [], _pred_ok_all(0.5)),
        ("--levels 0 2 on counts", SAMPLES, ["--beta", "0.5", "--levels", "0", "2"], "either", ["--levels"], None),
        ("--id-column on counts that lack it", SAMPLES, ["--beta", "0.5", "--id-column", "question"], "error",
         ["question"], None),
        ("unicode ids", "prompt_id,n,correct\nпример,10,3\n例子,8,4\n😀,4,1\n", ["--beta", "0.5"], "ok", [],
         _pred_ok_all(0.5)),
        ("ids that look like numbers", "prompt_id,n,correct\n007,10,3\n7,8,4\n", ["--beta", "0.5"], "ok", [],
         lambda tmp, res: {r["prompt_id"] for r in _rows(tmp)} == {"007", "7"}),
        ("ids with commas (quoted)", 'prompt_id,n,correct\n"a,b",10,3\n"c",8,4\n', ["--beta", "0.5"], "ok", [],
         lambda tmp, res: {r["prompt_id"] for r in _rows(tmp)} == {"a,b", "c"}),
        ("ids starting with '=' (a spreadsheet formula)", "prompt_id,n,correct\n=1+1,10,3\n", ["--beta", "0.5"],
         "ok", [], lambda tmp, res: [r["prompt_id"] for r in _rows(tmp)] in (["=1+1"], ["'=1+1"])),
        ("rewards layout with a reward of 0.5", "prompt_id,reward\na,1\na,0.5\na,0\n", ["--beta", "0.5"], "either",
         ["0.5"], None),
        ("rewards layout, 1,000 samples of one prompt", "prompt_id,reward\n" + "a,1\n" * 300 + "a,0\n" * 700,
         ["--beta", "0.5"], "ok", [], _pred_ok_all(0.5)),
    ]
    out = []
    for label, text, extra, expect, names, check in P:
        out.append(dict(group="predict at the edges", label=label, files={"s.csv": text}, argv=base + extra,
                        expect=expect, names=names, check=check))
    return out


def _rows(tmp):
    with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _pred_ok_all(beta):
    return lambda tmp, res: all(_pred_row_ok(r, beta) for r in _rows(tmp))


def _pred_gen(fn, beta):
    def check(tmp, res) -> bool:
        for r in _rows(tmp):
            p = int(r["correct"]) / int(r["n"])
            if 0 < p < 1 and abs(float(r["pred"]) - fn(p, beta)) > 1e-7:
                return False
        return True
    return check


def _pass_k_ok(k):
    def check(tmp, res) -> bool:
        for r in _rows(tmp):
            after = float(r[f"pass@{k}_after"])
            if abs(after - (1 - (1 - float(r["pred"])) ** k)) > 1e-7:
                return False
            before = r[f"pass@{k}_before"]
            n, c = int(r["n"]), int(r["correct"])
            if before not in ("", "nan", "NaN"):        # k > n: no unbiased estimate; only 1 - (1-p)^k or blank
                b = float(before)
                if c == 0 and b != 0:
                    return False
                if c > 0 and not (abs(b - (1 - (1 - c / n) ** k)) < 1e-7 or (c == n and b == 1)):
                    return False
        return True
    return check
