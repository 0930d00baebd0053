"""Cases of the eighth hostile audit (issue 45), part two: workflows that chain commands, hand-edited files in
between, prompt ids, and options that interact. Values are checked against :mod:`hostile_audit_round8_ref`;
``predictions.csv`` keeps 8 significant digits, so a value read back from it is held to 1e-7 relative (half a
unit of the 8th digit is 5e-8), the in-memory table to 1e-9."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import hostile_audit_round8_ref as ref
from hostile_audit_round6_cli import PREDICT_TABLE

INF = math.inf
EX = Path(__file__).resolve().parent.parent / "docs" / "examples"
COUNTS = "prompt_id,n,correct\na,10,3\nb,20,5\nc,7,7\nd,16,0\n"


def _rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _pred_ok(tmp: Path, out: str, beta: float, G=2, penalty="reverse", rtol=1e-7, **kw) -> bool:
    """Every prompt's ``pred`` in ``out/predictions.csv`` against the flow's root from ``p_ref`` (0 < c < n)."""
    rows = _rows(tmp / out / "predictions.csv")
    assert rows, "no rows"
    for r in rows:
        n, c = int(r["n"]), int(r["correct"])
        if 0 < c < n:
            p = c / n
            w = ref.eq14(p, beta) if (G == 2 and penalty == "reverse" and not kw) else \
                ref.binary_root(p, beta, G, penalty, **kw)
            got = float(r["pred"])
            if not abs(got - w) <= rtol * w:
                raise AssertionError(f"{r['prompt_id']}: pred {got} != {w}")
        if abs(float(r["p_ref"]) - c / n) > 1e-7 * c / n:
            raise AssertionError("p_ref")
    return True


def _cli(group, label, argv, expect="ok", names=(), check=None, **kw):
    d = dict(group=group, label=label, argv=argv, expect=expect, names=list(names), wrong=kw.pop("wrong", []))
    if check is not None:
        d["check"] = check
    d.update(kw)
    return d


# ---------------------------------------------------------------- chains
def _json_pi(tmp, step=0, method="GRPO reverse/scale"):
    d = json.loads((tmp / f"step{step}.out").read_text())
    return next(r for r in d["rows"] if r["method"] == method)["pi"]


def _table_pi(tmp, step=0, method="GRPO reverse/scale"):
    for line in (tmp / f"step{step}.out").read_text().splitlines():
        if line.startswith(method):
            return line[len(method):].split()[:-1] if "yes" in line or "no" in line else line[len(method):].split()
    raise AssertionError("no row")


def _solve_cond(pi_ref, rewards, beta, G):
    def check(tmp, res):
        d = json.loads(res["out"])
        row = next(r for r in d["rows"] if r["method"] == "GRPO reverse/scale")
        pi = row["pi"]
        P = ref.pg_groups(pi, G, rewards=rewards)
        pr = pi_ref(tmp) if callable(pi_ref) else pi_ref
        return ref.reverse_resid(pi, [float(v) for v in pr], P, beta) <= 1e-9
    return check


def _edit(path, fn):
    def step(tmp):
        p = tmp / path
        p.write_text(fn(p.read_text(encoding="utf-8")), encoding="utf-8")
    return step


def chain_cases() -> list[dict]:
    G_ = "CLI: workflows that chain commands"
    out = []
    base = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "4", "--json"]
    base3 = ["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "0.35", "--group-size",
             "3", "--json"]
    for lab, first, method, fmt in [
            ("solve --json's GRPO reverse/scale pi as the next --pi-ref (repr)", base, "GRPO reverse/scale", repr),
            ("solve --json's GRPO direct/scale pi as the next --pi-ref", base, "GRPO direct/scale", repr),
            ("solve --json's NLHF pi as the next --pi-ref", base, "NLHF (Nash)", repr),
            ("solve --json's RLHF pi (3 outputs) as the next --pi-ref", base3, "RLHF (log pooling)", repr),
            ("solve --json's GRPO reverse/shift pi (3 outputs) as the next --pi-ref", base3, "GRPO reverse/shift", repr),
            ("solve --json's pi written with 17 significant digits", base3, "GRPO reverse/scale", lambda v: f"{v:.17g}"),
            ("solve --json's pi written with 10 significant digits (sums to 1 within 1e-10)", base3,
             "GRPO reverse/scale", lambda v: f"{v:.10g}")]:
        # 10 digits sum to 1 only within 1e-10: a refusal naming pi_ref's sum is right too
        exp = "either" if "10 significant" in lab else "ok"
        rw = [1, 0] if first is base else [1, 0.5, 0]

        def argv(tmp, method=method, fmt=fmt, rw=rw):
            pi = _json_pi(tmp, 0, method)
            return ["solve", "--pi-ref", *[fmt(v) for v in pi], "--rewards", *map(str, rw), "--beta", "0.5",
                    "--group-size", "4", "--json"]

        def pr(tmp, method=method, fmt=fmt):
            return [float(fmt(v)) for v in _json_pi(tmp, 0, method)]
        out.append(_cli(G_, lab, argv, expect=exp, names=["pi_ref"] if exp != "ok" else [], chain=[first],
                        check=_solve_cond(pr, rw, 0.5, 4)))
    # the printed table's 6 decimals as the next --pi-ref: they may sum to 1 +- 1e-6
    for lab, first in [("solve's printed pi (6 decimals, 2 outputs) as the next --pi-ref", base[:-1]),
                       ("solve's printed pi (6 decimals, 3 outputs) as the next --pi-ref", base3[:-1])]:
        rw = [1, 0] if first[2] == "0.3" else [1, 0.5, 0]

        def argv(tmp, rw=rw):
            return ["solve", "--pi-ref", *_table_pi(tmp), "--rewards", *map(str, rw), "--beta", "0.5", "--json"]
        out.append(_cli(G_, lab, argv, expect="either", names=["pi_ref"], chain=[first]))
    # predict -> predictions.csv read back
    pred = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    out.append(_cli(G_, "predict, then its predictions.csv as the samples of a second predict", [
        "predict", "o/predictions.csv", "--beta", "0.5", "--out", "o2", "--no-plots", "--no-progress"],
        files={"s.csv": COUNTS}, chain=[pred], check=lambda tmp, res: _pred_ok(tmp, "o2", 0.5)))
    out.append(_cli(G_, "predict, then predictions.csv at another beta and G", [
        "predict", "o/predictions.csv", "--beta", "0.2", "--group-size", "5", "--out", "o2", "--no-plots", "--no-progress"],
        files={"s.csv": COUNTS}, chain=[pred], check=lambda tmp, res: _pred_ok(tmp, "o2", 0.2, G=5)))
    out.append(_cli(G_, "predict, then predictions.csv with --id-column prompt_id given explicitly", [
        "predict", "o/predictions.csv", "--beta", "0.5", "--id-column", "prompt_id", "--out", "o2", "--no-plots",
        "--no-progress"], files={"s.csv": COUNTS}, chain=[pred], check=lambda tmp, res: _pred_ok(tmp, "o2", 0.5)))
    out.append(_cli(G_, "predict, then predictions.csv with its 'correct' column deleted by hand", [
        "predict", "o/predictions.csv", "--beta", "0.5", "--out", "o2", "--no-plots", "--no-progress"],
        expect="error", names=["predictions.csv"], files={"s.csv": COUNTS},
        chain=[pred, _edit("o/predictions.csv", lambda t: "\n".join(
            ",".join(f for i, f in enumerate(line.split(",")) if i != 2) for line in t.splitlines()) + "\n")]))
    out.append(_cli(G_, "predict, then predictions.csv with a row's n edited below its correct", [
        "predict", "o/predictions.csv", "--beta", "0.5", "--out", "o2", "--no-plots", "--no-progress"],
        expect="error", names=["predictions.csv", "line 2"], files={"s.csv": COUNTS},
        chain=[pred, _edit("o/predictions.csv", lambda t: t.replace("\na,10,3,", "\na,2,3,", 1))]))
    out.append(_cli(G_, "predict, then its summary.json given as samples", [
        "predict", "o/summary.json", "--beta", "0.5", "--out", "o2", "--no-plots", "--no-progress"],
        expect="error", names=["summary.json"], files={"s.csv": COUNTS}, chain=[pred]))
    out.append(_cli(G_, "predict, then its output folder given as samples", [
        "predict", "o", "--beta", "0.5", "--out", "o2", "--no-plots", "--no-progress"],
        expect="error", names=["'o'"], files={"s.csv": COUNTS}, chain=[pred]))
    out.append(_cli(G_, "predict twice into one folder at betas 0.5 then 0.2: the second's numbers", [
        "predict", "s.csv", "--beta", "0.2", "--out", "o", "--no-plots", "--no-progress"],
        files={"s.csv": COUNTS}, chain=[pred], check=lambda tmp, res: _pred_ok(tmp, "o", 0.2) and
        json.loads((tmp / "o" / "summary.json").read_text())["objective"].endswith("beta=0.2")))
    out.append(_cli(G_, "predict, then --measured its own predictions.csv (measured = base counts)", [
        "predict", "s.csv", "--beta", "0.5", "--measured", "o/predictions.csv", "--out", "o2", "--no-plots",
        "--no-progress"], expect="either", files={"s.csv": COUNTS}, chain=[pred]))
    out.append(_cli(G_, "predict, then predictions.csv re-saved with ';' and decimal commas by hand", [
        "predict", "o/predictions.csv", "--beta", "0.5", "--out", "o2", "--no-plots", "--no-progress"],
        expect="either", names=["predictions.csv"], files={"s.csv": COUNTS},
        chain=[pred, _edit("o/predictions.csv", lambda t: t.replace(",", ";").replace(".", ","))]))
    # sweep -> its CSV as another command's input
    grid = "objectives: {beta: [0.3], group_size: 2}\nquestions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
    out.append(_cli(G_, "sweep, then its CSV given to predict as samples", [
        "predict", "g.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"], expect="error",
        names=["g.csv", "prompt_id"], files={"g.yaml": grid}, chain=[["sweep", "g.yaml", "--workers", "1", "--no-progress"]]))
    out.append(_cli(G_, "sweep, then its CSV given to sweep as the grid", ["sweep", "g.csv", "--workers", "1", "--no-progress"],
                    expect="error", names=["g.csv"], files={"g.yaml": grid},
                    chain=[["sweep", "g.yaml", "--workers", "1", "--no-progress"]]))
    out.append(_cli(G_, "solve --json's output given to explain as a TRL config", [
        "explain", "--framework", "trl", "step0.out"], expect="flag", names=["rows"], chain=[base]))
    out.append(_cli(G_, "explain --json's output given to explain as a TRL config", [
        "explain", "--framework", "trl", "step0.out"], expect="flag", names=["framework"],
        chain=[["explain", "--framework", "trl", str(EX / "trl_config.json"), "--json"]]))
    out.append(_cli(G_, "explain --json's output given to predict as a TRL config", [
        "predict", "s.csv", "--framework", "trl", "step0.out", "--out", "o", "--no-plots", "--no-progress"],
        expect="flag", names=["framework"], files={"s.csv": COUNTS},
        chain=[["explain", "--framework", "trl", str(EX / "trl_config.json"), "--json"]]))
    # a config edited by hand between explain and predict
    cfg = (EX / "trl_config.json").read_text()
    for lab, new, exp, names, chk in [
            ("beta 0.04 -> 0.5", cfg.replace('"beta": 0.04', '"beta": 0.5'), "ok", [], None),
            ("beta as text \"0.5\"", cfg.replace('"beta": 0.04', '"beta": "0.5"'), "either", ["beta"], None),
            ("num_generations 8 -> 2", cfg.replace('"num_generations": 8', '"num_generations": 2'), "ok", [], None),
            ("num_generations 8 -> 1", cfg.replace('"num_generations": 8', '"num_generations": 1'), "error",
             ["num_generations"], None),
            ("beta removed (TRL's default 0)", cfg.replace('"beta": 0.04, ', ''), "error", ["beta"], None),
            ("a trailing comma added", cfg.replace('"max_completion_length": 1}', '"max_completion_length": 1,}'),
             "error", ["line"], None),
            ("a duplicate key beta 0.04 then 0.9", cfg.replace('"beta": 0.04', '"beta": 0.04, "beta": 0.9'), "flag",
             ["beta"], None)]:
        out.append(_cli(G_, f"explain, then predict with the TRL config edited: {lab}", [
            "predict", "s.csv", "--framework", "trl", "c.json", "--out", "o", "--no-plots", "--no-progress"],
            expect=exp, names=names, files={"s.csv": COUNTS, "c.json": new},
            chain=[["explain", "--framework", "trl", "c.json"]] if exp == "ok" else [],
            **({"check": chk} if chk else {})))
    # predict from the shipped example, then the same run's numbers from Python-free reading
    out.append(_cli(G_, "predict docs/examples/samples_small.csv --framework trl docs/examples/trl_config.json", [
        "predict", str(EX / "samples_small.csv"), "--framework", "trl", str(EX / "trl_config.json"), "--out", "o",
        "--no-plots", "--no-progress"], chain=[],
        check=lambda tmp, res: _pred_ok(tmp, "o", 0.04, G=8, ddof=1, eps=1e-4)))
    return out


# ---------------------------------------------------------------- sweep CSVs edited by hand, then resumed
GRID = ("objectives: {beta: [0.3, 1.0], group_size: [2, 4]}\nquestions:\n  - {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
        "  - {pi_ref: [0.2, 0.3, 0.5], rewards: [1, 0.5, 0]}\n")
SWEEP = ["sweep", "g.yaml", "--workers", "1", "--no-progress"]


def _sweep_ok(n_rows, grid_betas=(0.3, 1.0), sizes=(2, 4)):
    def check(tmp, res):
        rows = _rows(tmp / "g.csv")
        keys = [r["key"] for r in rows]
        if len(keys) != len(set(keys)):
            raise AssertionError("duplicate keys")
        if len(rows) != n_rows:
            raise AssertionError(f"{len(rows)} rows, expected {n_rows}")
        for r in rows:
            qi, rest = r["key"].split("|")
            f = dict(kv.split("=") for kv in rest.split(","))
            b, g = float(f["beta"]), int(f["group_size"])
            pi_ref = json.loads(r["pi_ref"])
            rw = [1, 0] if len(pi_ref) == 2 else [1, 0.5, 0]
            pi = json.loads(r["reached_policy"])
            if ref.reverse_resid(pi, pi_ref, ref.pg_groups(pi, g, rewards=rw), b) > 1e-9:
                raise AssertionError(f"{r['key']}: reached_policy off its condition")
        return True
    return check


def _lines_edit(fn):
    return _edit("g.csv", lambda t: fn(t.splitlines(keepends=True)))


def sweep_edit_cases() -> list[dict]:
    G_ = "CLI: a sweep's CSV edited by hand, then resumed"
    out = []
    edits = [
        ("the last row deleted", _lines_edit(lambda ls: "".join(ls[:-1])), "ok", 8),
        ("the first data row deleted", _lines_edit(lambda ls: "".join(ls[:1] + ls[2:])), "ok", 8),
        ("every row but the header deleted", _lines_edit(lambda ls: ls[0]), "ok", 8),
        ("re-saved with CRLF line endings", _edit("g.csv", lambda t: t.replace("\r\n", "\n").replace("\n", "\r\n")), "ok", 8),
        ("a UTF-8 BOM added", _edit("g.csv", lambda t: "\ufeff" + t), "ok", 8),
        ("blank lines between rows", _edit("g.csv", lambda t: t.replace("\n", "\n\n")), "ok", 8),
        ("the last row duplicated", _lines_edit(lambda ls: "".join(ls + ls[-1:])), "either", 8),
        ("the header deleted", _lines_edit(lambda ls: "".join(ls[1:])), "either", 8),
        ("the columns reversed", _edit("g.csv", lambda t: "".join(
            ",".join(reversed(r)) + "\n" for r in csv.reader(t.splitlines()))), "either", 8),
        ("a column 'note' appended", _edit("g.csv", lambda t: "".join(
            ",".join(r + ["note" if i == 0 else "x"]) + "\n" for i, r in enumerate(csv.reader(t.splitlines())))), "either", 8),
        ("emptied to 0 bytes", _edit("g.csv", lambda t: ""), "either", 8),
        ("a middle row cut to 3 fields", _lines_edit(lambda ls: "".join(ls[:2] + [",".join(ls[2].split(",")[:3]) + "\n"]
                                                                       + ls[3:])), "either", 8),
        ("a row of another grid (beta=0.7) added", _lines_edit(lambda ls: "".join(ls + [ls[1].replace("beta=0.3", "beta=0.7")])),
         "either", 8),
        ("a row's key changed to a question index q9 that the grid lacks",
         _lines_edit(lambda ls: "".join(ls[:1] + [ls[1].replace('"q0|', '"q9|', 1)] + ls[2:])), "either", 8),
    ]
    for lab, fn, exp, n in edits:
        out.append(_cli(G_, f"sweep g.csv {lab}", SWEEP, expect=exp, names=["g.csv"], files={"g.yaml": GRID},
                        chain=[SWEEP, fn], check=_sweep_ok(n) if exp == "ok" else _either_sweep(n)))
    # the grid edited between the runs
    for lab, new, n in [
            ("beta 0.3 written 3e-1 (the same number)", GRID.replace("0.3, 1.0", "3e-1, 1.0"), 8),
            ("beta 1.0 written 1 (the same number)", GRID.replace("0.3, 1.0", "0.3, 1"), 8),
            ("a third beta 2.0 added", GRID.replace("0.3, 1.0", "0.3, 1.0, 2.0"), 12),
            ("group_size 4 written 4.0", GRID.replace("[2, 4]", "[2, 4.0]"), 8)]:
        out.append(_cli(G_, f"sweep resumed after the grid was edited: {lab}", SWEEP, files={"g.yaml": GRID},
                        chain=[SWEEP, _edit("g.yaml", lambda t, new=new: new)],
                        check=_sweep_ok(n, (0.3, 1.0, 2.0) if n == 12 else (0.3, 1.0))))
    out.append(_cli(G_, "sweep --out a different name, then resumed with the grid's own out: key", SWEEP,
                    files={"g.yaml": GRID}, chain=[SWEEP + ["--out", "x.csv"]], check=_sweep_ok(8)))
    return out


def _either_sweep(n):
    """Where the edit makes the file unreadable as a sweep's, a refusal naming it is right; where it runs, the
    grid's every case must be there once and right."""
    def check(tmp, res):
        rows = [r for r in _rows(tmp / "g.csv") if r.get("key", "").startswith("q0|") or r.get("key", "").startswith("q1|")]
        good = {r["key"] for r in rows if r.get("reached_policy", "").startswith("[")}
        want = {f"q{q}|beta={b},group_size={g}" for q in (0, 1) for b in ("0.3", "1.0") for g in (2, 4)}
        return want <= good
    return check


# ---------------------------------------------------------------- prompt ids
def _ids_ok(ids, counts):
    def check(tmp, res):
        rows = _rows(tmp / "o" / "predictions.csv")
        got = [r["prompt_id"] for r in rows]
        if sorted(got) != sorted(ids):
            raise AssertionError(f"ids {got!r} != {ids!r}")
        for r in rows:
            n, c = counts[ids.index(r["prompt_id"])]
            if int(r["n"]) != n or int(r["correct"]) != c:
                raise AssertionError(f"{r['prompt_id']!r}: counts")
            if 0 < c < n and abs(float(r["pred"]) - ref.eq14(c / n, 0.5)) > 1e-7 * ref.eq14(c / n, 0.5):
                raise AssertionError("pred")
        return True
    return check


def _csv_text(ids, counts):
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["prompt_id", "n", "correct"])
    for i, (n, c) in zip(ids, counts):
        w.writerow([i, n, c])
    return buf.getvalue()


def prompt_id_cases() -> list[dict]:
    G_ = "CLI: prompt ids, long and unicode"
    out = []
    P = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    PJ = ["predict", "s.jsonl", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    sets = [
        ("an id of 10,000 characters", ["x" * 10000, "b"]),
        ("an id of 100,000 characters", ["y" * 100000, "b"]),
        ("Arabic (right-to-left) ids", ["سؤال ١", "سؤال ٢"]),
        ("é precomposed (NFC) and e + U+0301 (NFD): two prompts", ["caf\u00e9", "cafe\u0301"]),
        ("an id holding a zero-width space", ["a\u200bb", "ab"]),
        ("an emoji ZWJ family and a flag", ["\U0001F468\u200d\U0001F469\u200d\U0001F467", "\U0001F1EB\U0001F1F7"]),
        ("an id holding a comma and a quote (quoted)", ['a,"b"', "c"]),
        ("an id holding a newline (quoted)", ["line1\nline2", "c"]),
        ("an id holding a tab", ["a\tb", "c"]),
        ("ids '1e3' and '1000'", ["1e3", "1000"]),
        ("ids '0.1' and '.1'", ["0.1", ".1"]),
        ("ids 'NaN', 'None', 'null'", ["NaN", "None", "null"]),
        ("ids 'True' and 'true'", ["True", "true"]),
        ("ids differing in case only", ["Q1", "q1"]),
        ("a spreadsheet formula as an id", ["=HYPERLINK(\"x\")", "+1", "-1", "@a"]),
        ("CJK and Devanagari ids", ["数学题", "प्रश्न"]),
        ("an id of one surrogate-free astral character", ["\U00010348", "b"]),
        ("an id that is a Windows path", ["C:\\data\\q1.txt", "b"]),
        ("an id with a BOM character inside", ["a\ufeffb", "ab"]),
        ("ids with trailing space 'a ' and 'a'", ["a ", "a"]),
    ]
    for lab, ids in sets:
        counts = [(10 + i, 3 + i) for i in range(len(ids))]
        exp = "either" if lab.startswith(("ids with trailing", "an id holding a tab", "ids 'NaN'")) else "ok"
        out.append(_cli(G_, f"predict CSV: {lab}", P, expect=exp, files={"s.csv": _csv_text(ids, counts)},
                        check=_ids_ok(ids, counts)))
        jl = "".join(json.dumps({"prompt_id": i, "n": n, "correct": c}) + "\n" for i, (n, c) in zip(ids, counts))
        out.append(_cli(G_, f"predict JSONL: {lab}", PJ, expect=exp if "NaN" not in lab else "ok",
                        files={"s.jsonl": jl}, check=_ids_ok(ids, counts)))
    for lab, body, exp, names in [
            ("JSONL ids 1e3 (a number) and '1000' (text)", '{"prompt_id": 1e3, "n": 10, "correct": 3}\n'
             '{"prompt_id": "1000", "n": 11, "correct": 4}\n', "either", ["1000"]),
            ("JSONL id an object", '{"prompt_id": {"a": 1}, "n": 10, "correct": 3}\n', "error", ["prompt_id", "line 1"]),
            ("JSONL id null", '{"prompt_id": null, "n": 10, "correct": 3}\n', "error", ["prompt_id", "line 1"]),
            ("JSONL id a list", '{"prompt_id": [1, 2], "n": 10, "correct": 3}\n', "error", ["prompt_id", "line 1"]),
            ("CSV empty id", "prompt_id,n,correct\n,10,3\nb,11,4\n", "error", ["prompt_id", "line 2"])]:
        fn = "s.jsonl" if body.startswith("{") else "s.csv"
        out.append(_cli(G_, f"predict {lab}", ["predict", fn, "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"],
                        expect=exp, names=names, files={fn: body}))
    return out


# ---------------------------------------------------------------- options that interact, values checked
def _tbl(tmp):
    return _rows(tmp / "o" / "predictions.csv")


def _interval_ok(method, level, rtol=1e-7):
    def check(tmp, res):
        for r in _tbl(tmp):
            n, c = int(r["n"]), int(r["correct"])
            if 0 < c < n:
                lo, hi = (ref.jeffreys if method == "jeffreys" else ref.wilson)(c, n, level)
                if not (ref.close(float(r["p_ref_lo"]), lo, rtol) and ref.close(float(r["p_ref_hi"]), hi, rtol)):
                    raise AssertionError(f"{r['prompt_id']}: [{r['p_ref_lo']}, {r['p_ref_hi']}] != [{lo}, {hi}]")
            if c == 0:
                want = 1 - (1 - level) ** (1 / n)
                if not ref.close(float(r["p_ref_hi"]), want, rtol):
                    raise AssertionError(f"{r['prompt_id']}: never-solved bound {r['p_ref_hi']} != {want}")
        return True
    return check


def _pass_ok(ks):
    def check(tmp, res):
        for r in _tbl(tmp):
            n, c = int(r["n"]), int(r["correct"])
            for k in ks:
                w = ref.pass_before(n, c, k)
                got = r[f"pass@{k}_before"]
                if math.isnan(w):
                    if got != "":
                        raise AssertionError(f"pass@{k}_before {got!r} where k > n")
                elif not ref.close(float(got), w, 1e-7, 1e-15):
                    raise AssertionError(f"{r['prompt_id']} pass@{k}_before {got} != {w}")
                wa = ref.pass_after(float(r["pred"]), k)
                if not ref.close(float(r[f"pass@{k}_after"]), wa, 1e-7, 1e-15):
                    raise AssertionError(f"pass@{k}_after")
        return True
    return check


def _pred_fn(fn, rtol=1e-7):
    def check(tmp, res):
        for r in _tbl(tmp):
            n, c = int(r["n"]), int(r["correct"])
            if 0 < c < n:
                w = fn(c / n)
                if not abs(float(r["pred"]) - w) <= rtol * max(w, 1e-12):
                    raise AssertionError(f"{r['prompt_id']}: pred {r['pred']} != {w}")
        return True
    return check


def option_cases() -> list[dict]:
    G_ = "CLI: predict's options together, values checked"
    out = []
    base = list(PREDICT_TABLE)
    f = {"s.csv": COUNTS}
    for itv, lvl in [("wilson", "0.5"), ("jeffreys", "0.999999"), ("wilson", "0.999"), ("jeffreys", "0.01"),
                     ("wilson", "0.6827")]:
        out.append(_cli(G_, f"predict --interval {itv} --level {lvl}", base + ["--beta", "0.5", "--interval", itv, "--level", lvl],
                        files=f, check=_interval_ok(itv, float(lvl))))
    for ks in [(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 20), (7,), (100, 1000), (16,)]:
        out.append(_cli(G_, f"predict --k {' '.join(map(str, ks))}", base + ["--beta", "0.5", "--k", *map(str, ks)],
                        files=f, check=_pass_ok(ks)))
    models = [
        ("--group-size inf", ["--beta", "0.5", "--group-size", "inf"], lambda p: ref.eq15(p, 0.5)),
        ("--group-size inf --beta 3", ["--beta", "3", "--group-size", "inf"], lambda p: ref.eq15(p, 3.0)),
        ("--penalty direct (G = 2)", ["--beta", "0.5", "--penalty", "direct"], lambda p: ref.g2_direct(p, 0.5)),
        ("--penalty direct --beta 0.05 (G = 2)", ["--beta", "0.05", "--penalty", "direct"], lambda p: ref.g2_direct(p, 0.05)),
        ("--normalization shift --penalty direct --group-size 4",
         ["--beta", "0.5", "--normalization", "shift", "--penalty", "direct", "--group-size", "4"],
         lambda p: ref.g2_direct(p, 0.5 * 4 / 3)),
        ("--normalization shift --group-size 4 (reverse)", ["--beta", "0.5", "--normalization", "shift", "--group-size", "4"],
         lambda p: ref.binary_root(p, 0.5, 4, "reverse", normalization="shift")),
        ("--std-ddof 1 --std-eps 1e-4 --group-size 8", ["--beta", "0.3", "--std-ddof", "1", "--std-eps", "1e-4",
                                                        "--group-size", "8"],
         lambda p: ref.binary_root(p, 0.3, 8, "reverse", ddof=1, eps=1e-4)),
        ("--std-ddof 1 (G = 2: advantages +-1/sqrt(2))", ["--beta", "0.5", "--std-ddof", "1"],
         lambda p: ref.eq14(p, 0.5, 1 / math.sqrt(2))),
        ("--std-eps 0.5 (G = 2: advantages +-0.5/(0.5 + 0.5))", ["--beta", "0.5", "--std-eps", "0.5"],
         lambda p: ref.eq14(p, 0.5, 0.5)),
        ("--beta 1 (= gamma: x = sqrt(p))", ["--beta", "1"], lambda p: math.sqrt(p)),
        ("--beta 1e-6", ["--beta", "1e-6"], lambda p: ref.eq14(p, 1e-6)),
        ("--beta 1e6", ["--beta", "1e6"], lambda p: ref.eq14(p, 1e6)),
        ("--beta 0.5 --kl-estimator k3 --kl-placement loss (the default spelled out)",
         ["--beta", "0.5", "--kl-estimator", "k3", "--kl-placement", "loss"], lambda p: ref.eq14(p, 0.5)),
        ("--beta 0.5 --kl-estimator k2 (the direct penalty)", ["--beta", "0.5", "--kl-estimator", "k2"],
         lambda p: ref.g2_direct(p, 0.5)),
        ("--beta 0.5 --kl-estimator k3_ratio (the direct penalty)", ["--beta", "0.5", "--kl-estimator", "k3_ratio"],
         lambda p: ref.g2_direct(p, 0.5)),
    ]
    for lab, extra, fn in models:
        out.append(_cli(G_, f"predict {lab}", base + extra, files=f, check=_pred_fn(fn)))
    # never solved: pred = x(0+), pred_hi = x(upper bound) (docs/predict.md)
    for b, want0 in [("0.25", 0.75), ("1", 0.0), ("4", 0.0)]:
        def chk(tmp, res, b=float(b), want0=want0):
            r = next(r for r in _tbl(tmp) if r["prompt_id"] == "d")
            ub = 1 - 0.05 ** (1 / 16)
            return abs(float(r["pred"]) - want0) <= 1e-7 and ref.close(float(r["pred_hi"]), ref.eq14(ub, b), 1e-7)
        out.append(_cli(G_, f"predict --beta {b}: the never-solved prompt's pred = x(0+) and pred_hi = x(bound)",
                        base + ["--beta", b], files=f, check=chk))
    # graded rewards and declared levels
    graded = "prompt_id,reward\n" + "".join(f"a,{r}\n" for r in [0, 0.5, 1, 1, 0.5, 0]) + \
        "".join(f"b,{r}\n" for r in [0, 0, 1, 0.5])
    out.append(_cli(G_, "predict --levels 1 0.5 0 (declared in falling order) on graded rewards",
                    base[:1] + ["g.csv"] + base[2:] + ["--beta", "0.5", "--levels", "1", "0.5", "0"], files={"g.csv": graded},
                    expect="ok"))
    out.append(_cli(G_, "predict --levels 0 1 on rewards 0, 0.5, 1 (0.5 undeclared)",
                    base[:1] + ["g.csv"] + base[2:] + ["--beta", "0.5", "--levels", "0", "1"], files={"g.csv": graded},
                    expect="error", names=["0.5", "line"]))
    out.append(_cli(G_, "predict --levels 0 0.5 1 2 (a level no sample has)",
                    base[:1] + ["g.csv"] + base[2:] + ["--beta", "0.5", "--levels", "0", "0.5", "1", "2"],
                    files={"g.csv": graded}, expect="ok"))
    per = "prompt_id,reward\n" + "a,1\na,0\na,0\n" + "b,1\nb,1\nb,0\nb,0\n"
    out.append(_cli(G_, "predict --levels 1 0 (reversed) on 0/1 rewards", base[:1] + ["r.csv"] + base[2:] +
                    ["--beta", "0.5", "--levels", "1", "0"], files={"r.csv": per},
                    check=_pred_fn(lambda p: ref.eq14(p, 0.5))))
    out.append(_cli(G_, "predict --levels 0 2 on rewards 0/2 (the top reward 2)", base[:1] + ["r.csv"] + base[2:] +
                    ["--beta", "0.5", "--levels", "0", "2"], files={"r.csv": per.replace(",1\n", ",2\n")},
                    check=_pred_fn(lambda p: ref.eq14(p, 0.5))))
    out.append(_cli(G_, "predict --levels -1 1 on rewards -1/1 with --normalization shift --group-size 3",
                    base[:1] + ["r.csv"] + base[2:] + ["--beta", "0.5", "--levels", "-1", "1", "--normalization", "shift",
                                                       "--group-size", "3"],
                    files={"r.csv": per.replace(",0\n", ",-1\n")},
                    check=_pred_fn(lambda p: ref.binary_root(p, 0.25, 3, "reverse", normalization="shift"))))
    # refusals that must name the option the user gave
    for lab, extra, names in [
            ("--level 1", ["--beta", "0.5", "--level", "1"], ["--level"]),
            ("--level 95 (a percentage)", ["--beta", "0.5", "--level", "95"], ["--level", "95"]),
            ("--k 0", ["--beta", "0.5", "--k", "0"], ["--k"]),
            ("--k 2.5", ["--beta", "0.5", "--k", "2.5"], ["--k", "2.5"]),
            ("--slow-tol 0.01 without --clock or --fit", ["--beta", "0.5", "--slow-tol", "0.02"], ["--slow-tol"]),
            ("--steps 10 without a clock", ["--beta", "0.5", "--steps", "10"], ["--steps"]),
            ("--holdout 0.5 without --measured", ["--beta", "0.5", "--holdout", "0.5"], ["--holdout", "--measured"]),
            ("--rhos 0.5 without --measured", ["--beta", "0.5", "--rhos", "0.5"], ["--rhos", "--measured"]),
            ("--finite-level 0.8 without --measured", ["--beta", "0.5", "--finite-level", "0.8"], ["--finite-level"]),
            ("--kernel k.npy without --measured", ["--beta", "0.5", "--kernel", "k.npy"], ["--kernel"]),
            ("--clock 0.1 --fit 100 0.6 (both)", ["--beta", "0.5", "--clock", "0.1", "--fit", "100", "0.6"],
             ["--clock", "--fit"]),
            ("--kl-value-clamp 10 with the default k3 in the loss", ["--beta", "0.5", "--kl-value-clamp", "10"], []),
            ("--trl-version 1.9 with --beta (no config)", ["--beta", "0.5", "--trl-version", "1.9"], ["--trl-version"]),
            ("--id-column question (absent)", ["--beta", "0.5", "--id-column", "question"], ["question"]),
            ("--beta 0.5 --framework trl (config missing)", ["--beta", "0.5", "--framework", "trl"], ["--framework"]),
            ("--tradeoff-betas 0.1 nan", ["--beta", "0.5", "--tradeoff-betas", "0.1", "nan"], ["--tradeoff-betas", "nan"]),
            ("--seed -1", ["--beta", "0.5", "--seed", "-1"], ["--seed"])]:
        exp = "either" if lab.startswith(("--slow-tol", "--kl-value-clamp")) else "error"
        if lab.startswith("--slow-tol"):
            exp = "flag"
        out.append(_cli(G_, f"predict {lab}", base + extra, expect=exp, names=names, files=f))
    return out
