"""Cases of the twelfth hostile audit (issue 45), part two: predict's finite-time options, explain, the other
subcommands' options, the environment.

* ``predict --measured``: the fitted shared-weights flow's ``pred_finite`` recomputed by the reference's RK4 from
  the fit ``summary.json`` reports (``t``, ``rho``; a measured ``--kernel``), ``pred`` against Eq. 14 / the G = 2
  direct form / the binomial sums, ``pass@k_before`` against ``1 - C(n - c, k)/C(n, k)`` and ``pass@k_after``
  against ``1 - (1 - pred)^k``; after-files whose ids differ from the base's only by case, whitespace, leading
  zeros or Unicode normalisation; counts of 1 and 10^6; one or two measured prompts; ``--holdout`` fractions at
  the edges; kernels that are asymmetric by rounding, PSD up to rounding, rectangular, big-endian, float16,
  Fortran-ordered, scaled by 1e+-300, truncated, structured or an ``.npz``;
* ``explain`` on what a run folder holds (the folder itself, TRL's ``trainer_state.json``, a model's
  ``config.json``, ``training_args.bin``, predict's own outputs, links, an empty YAML);
* ``validate`` / ``figures`` / ``derivations`` options that belong to another study or clash;
* the environment: a read-only output folder (a read-only tmpfs), an unwritable ``HOME``, ``LANG=C`` with Unicode
  paths and ids, ``PYTHONIOENCODING=ascii``, a symlinked and a FIFO input, a folder where a file is expected, a
  100 MB CSV, stdout on ``/dev/full``, a deleted working folder, few file descriptors.

Tolerances. ``predictions.csv`` keeps 8 significant digits. ``pred`` against the closed forms / the bisection of
the binomial-sum drift: 2e-7 relative (of ``1 - x`` above 1/2) + 1e-8 absolute. ``pred_finite``: the library
integrates with BDF at ``rtol = 1e-6`` in the logits (global error a few 1e-6 in ``z``, so ``x (1 - x)`` times
that in ``x``), the reference with RK4 at ``dt <= 0.025`` (error < 1e-8): 1e-4 absolute; a wrong field (a
missing factor 2, the wrong penalty, ``rho`` ignored) moves it by 1e-2 or more. pass@k: 1e-7 absolute (8
digits of a number in [0, 1], and ``pred``'s error times ``k``).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

import hostile_audit_round11_ref as r11
import hostile_audit_round12_ref as ref
from hostile_audit_fresh import cli_case as _cli
from hostile_audit_round11_cli import CLI_PY, _near8, _shell

INF = math.inf


def _base(N=24, seed=3):
    """``N`` prompts ``(id, n, c)`` with ``0 < c < n`` (no start at a vertex)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(N):
        n = int(rng.integers(6, 40))
        rows.append((f"q{i:02d}", n, int(rng.integers(1, n))))
    return rows


def _after(rows, every=2, m=32, seed=5, lift=0.15):
    rng = np.random.default_rng(seed)
    out = []
    for i, (pid, n, c) in enumerate(rows):
        if i % every == 0:
            p = min(0.97, max(0.03, c / n + lift))
            out.append((pid, m, int(rng.binomial(m, p))))
    return out


def _counts(rows, header="prompt_id,n,correct"):
    return header + "\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows)


def _table(tmp, folder="o"):
    with open(Path(tmp) / folder / "predictions.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _stationary(p, beta, G, penalty):
    if G == 2 and penalty == "reverse":
        return r11.eq14(p, beta)
    if G == 2:
        return r11.direct_g2(p, beta)
    return r11.binary_rest(p, [[0.0, 1.0], [1.0, 0.0]], [0.0, 1.0], beta, kind="scale", G=G, penalty=penalty)


def _finite_check(rows, beta, G=2, penalty="reverse", K=None, ks=(1, 8), folder="o"):
    """predictions.csv against the reference: pred, pass@k before/after, and pred_finite from the reported fit."""
    def check(tmp, res):
        table = _table(tmp, folder)
        summ = json.loads((Path(tmp) / folder / "summary.json").read_text())
        fin = summ["finite"]
        fit, model = fin["fit"], fin["model"]
        by_id = {r["prompt_id"]: r for r in table}
        p = [c / n for _, n, c in rows]
        rho = float(fit.get("rho") or 0.0) if model == "coupled" else 0.0
        if model == "kernel" and K is None:
            raise AssertionError("model 'kernel' without a --kernel")
        steps = int(min(40000, max(1000, 40 * fit["t"])))
        want_f = ref.finite_flow(p, p, beta, fit["t"], G=G, penalty=penalty, rho=rho,
                                 K=K if model == "kernel" else None, n_steps=steps)
        for (pid, n, c), wf, pp in zip(rows, want_f, p):
            r = by_id[pid]
            x = _stationary(pp, beta, G, penalty)
            if not _near8(r["pred"], x):
                raise AssertionError(f"{pid}: pred {r['pred']} != {x}")
            if abs(float(r["pred_finite"]) - wf) > 1e-4:
                raise AssertionError(f"{pid}: pred_finite {r['pred_finite']} != the reference's {wf} (model {model}, "
                                     f"t = {fit['t']}, rho = {rho})")
            for k in ks:
                after = 1 - (1 - x) ** k
                if abs(float(r[f"pass@{k}_after"]) - after) > 1e-7:
                    raise AssertionError(f"{pid}: pass@{k}_after {r[f'pass@{k}_after']} != {after}")
                before = ref.pass_before(n, c, k)
                got = r[f"pass@{k}_before"]
                if before is None:
                    if got != "":
                        raise AssertionError(f"{pid}: pass@{k}_before {got!r} for k > n = {n}")
                elif abs(float(got) - before) > 1e-7:
                    raise AssertionError(f"{pid}: pass@{k}_before {got} != {before}")
        return True
    return check


def _save(arr):
    def write(path, arr=arr):
        np.save(path, arr)
    return write


def finite_cases() -> list[dict]:
    G_ = "CLI: predict --measured, the finite-time flow and pass@k (reference: RK4 of docs/predict.md section 5)"
    out = []
    rows = _base()
    aft = _after(rows)
    files = {"b.csv": _counts(rows), "a.csv": _counts(aft)}
    for beta, G, pen, extra in [(0.3, 2, "reverse", []), (0.05, 2, "reverse", []), (1.5, 2, "reverse", []),
                                (0.4, 2, "direct", []), (0.2, 4, "reverse", []), (0.6, 3, "direct", []),
                                (0.3, 2, "reverse", ["--k", "1", "3", "50"]), (0.25, 2, "reverse", ["--rhos", "0", "0.5", "1"]),
                                (0.8, 5, "reverse", []), (0.3, 2, "reverse", ["--finite-level", "0.5"]),
                                (0.3, 2, "reverse", ["--seed", "12345"]), (0.12, 2, "direct", ["--holdout", "0.25"])]:
        ks = tuple(int(k) for k in extra[1:]) if extra[:1] == ["--k"] else (1, 8)
        argv = ["predict", "b.csv", "--beta", str(beta), "--group-size", str(G), "--penalty", pen, "--measured", "a.csv",
                "--out", "o", "--no-plots", "--no-progress", *extra]
        out.append(_cli(G_, f"predict --measured (24 prompts, 12 measured) beta={beta} G={G} {pen} {' '.join(extra)}",
                        argv, "ok", files=files, check=_finite_check(rows, beta, G, pen, ks=ks)))
    # other measured designs
    for lab, aft2, every in [("every prompt measured", _after(rows, every=1), 1),
                             ("one prompt measured", _after(rows)[:1], 2),
                             ("two prompts measured", _after(rows)[:2], 2),
                             ("measured with 1 sample each", [(a, 1, min(1, c)) for a, _, c in _after(rows)], 2),
                             ("measured with 10^6 samples each", [(a, 10**6, c * 31250) for a, _, c in _after(rows)], 2),
                             ("measured lower than the base (training hurt)", _after(rows, lift=-0.3, seed=9), 2),
                             ("every measured prompt all correct", [(a, 16, 16) for a, _, _ in _after(rows)], 2),
                             ("every measured prompt all wrong", [(a, 16, 0) for a, _, _ in _after(rows)], 2)]:
        f2 = {"b.csv": _counts(rows), "a.csv": _counts(aft2)}
        argv = ["predict", "b.csv", "--beta", "0.3", "--measured", "a.csv", "--out", "o", "--no-plots", "--no-progress"]
        expect = "ok" if lab.startswith(("every prompt", "two", "measured with")) else "either"
        out.append(_cli(G_, f"predict --measured: {lab}", argv, expect, ["a.csv"], files=f2,
                        check=_finite_check(rows, 0.3)))
    # the kernel model, with kernels that are valid but awkward
    rng = np.random.default_rng(77)
    small = rows[:10]
    f3 = {"b.csv": _counts(small), "a.csv": _counts(_after(small))}
    A = rng.normal(size=(10, 4))
    base_K = A @ A.T + 0.5 * np.eye(10)
    for lab, K, Kref in [
            ("a PSD kernel", base_K, base_K),
            ("asymmetric by rounding (1e-15)", base_K + np.triu(np.full((10, 10), 1e-15), 1), base_K),
            ("a rank-1 kernel of ones", np.ones((10, 10)), np.ones((10, 10))),
            ("PSD with negative off-diagonals", np.eye(10) - 0.09 * (np.ones((10, 10)) - np.eye(10)),
             np.eye(10) - 0.09 * (np.ones((10, 10)) - np.eye(10))),
            ("scaled by 1e300", base_K * 1e300, base_K),
            ("scaled by 1e-300", base_K * 1e-300, base_K),
            ("Fortran-ordered", np.asfortranarray(base_K), base_K),
            ("big-endian >f8", base_K.astype(">f8"), base_K),
            ("float32", base_K.astype(np.float32), base_K.astype(np.float32).astype(float)),
            ("integers (PSD)", np.round(base_K * 10).astype(np.int64) + 40 * np.eye(10, dtype=np.int64),
             (np.round(base_K * 10) + 40 * np.eye(10))),
            ("of rank 4 (PSD, its zero eigenvalues -1e-15 by rounding)", A @ A.T, A @ A.T)]:
        out.append(_cli(G_, f"predict --measured --kernel {lab}",
                        ["predict", "b.csv", "--beta", "0.3", "--measured", "a.csv", "--kernel", "k.npy", "--out", "o",
                         "--no-plots", "--no-progress"], "ok", files=dict(f3, **{"k.npy": _save(K)}),
                        check=_finite_check(small, 0.3, K=np.asarray(Kref, float).tolist())))
    return out


def measured_quirk_cases() -> list[dict]:
    G_ = "CLI: predict --measured / --holdout / --kernel / --rhos / --seed quirks"
    out = []
    rows = _base(16, seed=11)
    base = _counts(rows)
    good_after = _counts(_after(rows))
    pv = ["predict", "b.csv", "--beta", "0.3", "--out", "o", "--no-plots", "--no-progress"]

    def case(lab, extra, expect, names, files, **kw):
        out.append(_cli(G_, f"predict {lab}", pv + extra, expect, names, files=dict({"b.csv": base}, **files), **kw))
    # ids that differ from the base's only in form
    for lab, text, names in [
            ("--measured with an id differing in case (Q00 for q00)", "prompt_id,n,correct\nQ00,10,5\nq02,10,6\n", ["Q00"]),
            ("--measured with a trailing space in an id ('q00 ')", "prompt_id,n,correct\n\"q00 \",10,5\nq02,10,6\n",
             ["q00 "]),
            ("--measured with a zero-width space in an id", "prompt_id,n,correct\nq0\u200b0,10,5\nq02,10,6\n", ["q0"]),
            ("--measured with a Cyrillic q (look-alike) in an id", "prompt_id,n,correct\n\u043a00,10,5\nq02,10,6\n",
             ["\u043a00"])]:
        case(lab, ["--measured", "a.csv"], "error", names, {"a.csv": text})
    for lab, btxt, atxt, names, expect in [
            ("--measured with numeric ids 007 (base) and 7 (after)", "prompt_id,n,correct\n007,10,5\n008,12,3\n",
             "prompt_id,n,correct\n7,10,6\n", ["7"], "error"),
            ("--measured with a decomposed e-acute where the base has the composed one",
             "prompt_id,n,correct\ncaf\u00e9,10,5\nthe,12,3\n", "prompt_id,n,correct\ncafe\u0301,10,6\n",
             ["caf"], "flag"),
            ("--measured with ids 1.0 (after) for 1 (base)", "prompt_id,n,correct\n1,10,5\n2,12,3\n",
             "prompt_id,n,correct\n1.0,10,6\n", ["1.0"], "error")]:
        out.append(_cli(G_, f"predict {lab}", ["predict", "b.csv", "--beta", "0.3", "--measured", "a.csv", "--out", "o",
                                                 "--no-plots", "--no-progress"], expect, names,
                        files={"b.csv": btxt, "a.csv": atxt}))
    for lab, text, expect, names in [
            ("--measured with a prompt listed twice", "prompt_id,n,correct\nq00,10,5\nq00,12,6\nq02,10,6\n", "error",
             ["q00"]),
            ("--measured with n = 0 and correct = 0 on one prompt", "prompt_id,n,correct\nq00,0,0\nq02,10,6\n", "error",
             ["q00"]),
            ("--measured with correct = n + 1 on one prompt among good ones",
             "prompt_id,n,correct\nq00,10,5\nq02,10,11\nq04,10,6\n", "error", ["q02"]),
            ("--measured with n = 2.5", "prompt_id,n,correct\nq00,2.5,1\n", "error", ["2.5"]),
            ("--measured with correct = NaN", "prompt_id,n,correct\nq00,10,nan\n", "error", ["q00"]),
            ("--measured with n = 1e300", "prompt_id,n,correct\nq00,1e300,5\n", "error", ["q00"]),
            ("--measured with only a header and a blank line", "prompt_id,n,correct\n\n", "error", ["a.csv"]),
            ("--measured with a count_<level> layout of levels 0 and 1", "prompt_id,count_0,count_1\nq00,4,6\nq02,3,9\n",
             "ok", []),
            ("--measured with a count_<level> layout of levels 0, 0.5, 1",
             "prompt_id,count_0,count_0.5,count_1\nq00,4,1,6\n", "error", ["0.5"]),
            ("--measured as JSONL reward rows", "".join(f'{{"prompt_id": "q0{i % 3 * 2}", "reward": {i % 2}}}\n'
                                                        for i in range(30)), "ok", []),
            ("--measured with Windows line ends and a BOM", "\ufeffprompt_id,n,correct\r\nq00,10,5\r\nq02,10,6\r\n", "ok",
             []),
            ("--measured holding only an 'id' column with --id-column id (the base has prompt_id)",
             "id,n,correct\nq00,10,5\n", "error", ["'id'"])]:
        name = "a.jsonl" if "JSONL" in lab else "a.csv"
        extra = ["--id-column", "id"] if "--id-column" in lab else []
        case(lab, ["--measured", name, *extra], expect, names, {name: text})
    # --holdout at the edges (16 prompts, 8 measured)
    for lab, val, expect, names in [
            ("0.125 (one of 8 measured held out)", "0.125", "ok", []),
            ("1e-9 (none held out)", "1e-9", "either", ["--holdout"]),
            ("0.95 (7 of 8 held out)", "0.95", "either", ["--holdout"]),
            ("0.9999999 (all but nothing left to fit)", "0.9999999", "error", ["--holdout"]),
            ("5e-1 (exponent form)", "5e-1", "ok", []),
            ("' 0.3' (a leading space)", " 0.3", "ok", []),
            ("0.3 with 2 measured prompts", "0.3", "either", ["--holdout"]),
            ("-inf", "-inf", "error", ["--holdout", "-inf"]),
            ("1/3 (a fraction written as a ratio)", "1/3", "error", ["--holdout", "1/3"])]:
        f = {"a.csv": "prompt_id,n,correct\nq00,10,5\nq02,10,6\n" if "2 measured" in lab else good_after}
        case(f"--measured --holdout {lab}", ["--measured", "a.csv", "--holdout", val], expect, names, f)
    # --kernel files that are wrong
    N = len(rows)
    good = np.eye(N)
    for lab, data, names in [
            ("asymmetric by 0.2 in one pair", good + np.pad([[0.0, 0.2], [0.0, 0.0]], ((0, N - 2), (0, N - 2))),
             ["symmetric"]),
            ("of shape (N+1, N+1)", np.eye(N + 1), [str(N)]),
            ("of shape (N, N-1)", np.eye(N)[:, :-1], [str(N - 1)]),
            ("with one NaN", np.where(np.eye(N) > 0, 1.0, 0.0) + np.pad([[0, np.nan]], ((0, N - 1), (0, N - 2))),
             ["k.npy"]),
            ("complex", good.astype(complex), ["k.npy"]),
            ("float16 with 70000 on the diagonal (inf)", np.where(good > 0, np.inf, 0.0).astype(np.float16),
             ["k.npy"]),
            ("a 0-d array", np.array(1.0), ["k.npy"]),
            ("a structured dtype", np.zeros(N, dtype=[("a", "f8"), ("b", "f8")]), ["k.npy"]),
            ("with a negative diagonal entry", good - 2 * np.pad([[1.0]], ((0, N - 1), (0, N - 1))),
             ["semi-definite"]),
            ("of booleans (the identity)", np.eye(N, dtype=bool), None)]:
        if names is None:
            case(f"--measured --kernel {lab}", ["--measured", "a.csv", "--kernel", "k.npy"], "either", ["k.npy"],
                 {"a.csv": good_after, "k.npy": _save(data)})
        else:
            case(f"--measured --kernel {lab}", ["--measured", "a.csv", "--kernel", "k.npy"], "error", names,
                 {"a.csv": good_after, "k.npy": _save(data)})

    def truncated(path):
        np.save(path, np.eye(N))
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])

    def npz(path):
        with open(path, "wb") as fh:
            np.savez(fh, K=np.eye(N))

    def pickled(path):
        np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for lab, writer, names in [("cut in half", truncated, ["k.npy"]), ("an .npz archive named k.npy", npz, ["k.npy"]),
                               ("an object array (pickle)", pickled, ["k.npy"])]:
        case(f"--measured --kernel {lab}", ["--measured", "a.csv", "--kernel", "k.npy"], "error", names,
             {"a.csv": good_after, "k.npy": writer})
    # --rhos, --finite-level, --seed
    for lab, extra, expect, names in [
            ("--rhos 0.5 0.5 (a repeated value)", ["--rhos", "0.5", "0.5"], "either", ["--rhos"]),
            ("--rhos 1 0 (decreasing)", ["--rhos", "1", "0"], "ok", []),
            ("--rhos 0 (the tabular model only)", ["--rhos", "0"], "ok", []),
            ("--rhos nan", ["--rhos", "nan"], "error", ["--rhos", "nan"]),
            ("--rhos 1e-320 (subnormal)", ["--rhos", "1e-320"], "ok", []),
            ("--finite-level 1e-9", ["--finite-level", "1e-9"], "either", ["--finite-level"]),
            ("--finite-level 0.999999", ["--finite-level", "0.999999"], "ok", []),
            ("--finite-level 0.5000001", ["--finite-level", "0.5000001"], "ok", []),
            ("--finite-level inf", ["--finite-level", "inf"], "error", ["--finite-level", "inf"]),
            ("--seed 00012 (leading zeros)", ["--seed", "00012"], "ok", []),
            ("--seed 4294967295 (2^32 - 1)", ["--seed", "4294967295"], "ok", []),
            ("--seed 2^64", ["--seed", str(2**64)], "either", ["--seed"]),
            ("--seed 1.5", ["--seed", "1.5"], "error", ["--seed", "1.5"]),
            ("--seed '' (empty)", ["--seed", ""], "error", ["--seed"])]:
        case(f"--measured {lab}", ["--measured", "a.csv", *extra], expect, names, {"a.csv": good_after})
    return out


# ---------------------------------------------------------------- explain on what a run folder holds
def explain_folder_cases() -> list[dict]:
    G_ = "CLI: explain on the files of a run folder"
    out = []
    trainer_state = json.dumps({"global_step": 100, "log_history": [{"loss": 0.1, "step": 10}], "best_metric": None})
    model_cfg = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 576})
    for lab, fw, cfg, files, expect, names in [
            ("the current folder '.'", "trl", ".", {}, "error", ["'.'"]),
            ("a run folder holding config.json ('run/')", "trl", "run/", {"run/config.json": model_cfg}, "error", ["run"]),
            ("a folder path with a space ('my run')", "openrlhf", "my run", {"my run/x.json": "{}"}, "error", ["my run"]),
            ("TRL's trainer_state.json", "trl", "run/trainer_state.json", {"run/trainer_state.json": trainer_state},
             "flag", ["log_history"]),
            ("a model's config.json (LlamaForCausalLM)", "trl", "run/config.json", {"run/config.json": model_cfg},
             "flag", ["architectures"]),
            ("training_args.bin (a torch pickle)", "trl", "run/training_args.bin",
             {"run/training_args.bin": b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256))}, "error",
             ["training_args.bin"]),
            ("predict's predictions.csv", "trl", "o/predictions.csv",
             {"o/predictions.csv": "prompt_id,n,correct,p_ref,pred\nq,10,5,0.5,0.8\n"}, "error", ["predictions.csv"]),
            ("predict's summary.json (openrlhf)", "openrlhf", "o/summary.json",
             {"o/summary.json": json.dumps({"prompts": 10, "mean_p_ref": 0.5, "mean_pred": 0.8})}, "flag",
             ["mean_p_ref"]),
            ("an empty config.yaml", "trl", "run/config.yaml", {"run/config.yaml": ""}, "error", ["config.yaml"]),
            ("a YAML holding only comments", "verl", "run/c.yaml", {"run/c.yaml": "# nothing\n# here\n"}, "either",
             ["c.yaml"]),
            ("wandb's config.yaml (values nested under 'value')", "trl", "run/config.yaml",
             {"run/config.yaml": "wandb_version: 1\nbeta:\n  desc: null\n  value: 0.04\nnum_generations:\n  value: 8\n"},
             "flag", ["beta"]),
            ("a JSON config with beta 1e999 (overflows to inf)", "trl", "c.json",
             {"c.json": '{"beta": 1e999, "num_generations": 8}'}, "error", ["beta"]),
            ("a JSON config with beta given twice", "trl", "c.json",
             {"c.json": '{"beta": 0.1, "num_generations": 8, "beta": 0.2}'}, "flag", ["beta"]),
            ("a TRL JSON config with num_generations true", "trl", "c.json",
             {"c.json": '{"beta": 0.1, "num_generations": true}'}, "error", ["num_generations", "true"])]:
        out.append(_cli(G_, f"explain --framework {fw} {lab}", ["explain", "--framework", fw, cfg], expect, names,
                        files=files))

    def linked(target, name):
        def prep(path):
            (path.parent / "real").mkdir(exist_ok=True)
            (path.parent / name).symlink_to(target)
        return prep
    for lab, target in [("a symlink to a folder", "real"), ("a dangling symlink", "gone.json"),
                        ("a symlink loop", "loop.json")]:
        name = "loop.json" if "loop" in lab else "c.json"
        out.append(_cli(G_, f"explain --framework trl {lab}", ["explain", "--framework", "trl", name], "error", [name],
                        files={"_": linked(target, name)}))
    return out


# ---------------------------------------------------------------- validate / figures / derivations options
def option_cases() -> list[dict]:
    G_ = "CLI: validate / figures / derivations options that belong elsewhere or clash"
    out = []
    for lab, argv, expect, names in [
            ("--study tree --questions 5 (small/trl's option)", ["validate", "--study", "tree", "--questions", "5"], "flag",
             ["--questions"]),
            ("--study kl --seeds 1 2 (smollm2/free's option)", ["validate", "--study", "kl", "--seeds", "1", "2"], "flag",
             ["--seeds"]),
            ("--study small --prompts 5 (free's option)", ["validate", "--study", "small", "--prompts", "5", "--quick"],
             "flag", ["--prompts"]),
            ("--study trl --trainable 2 (smollm2's option)", ["validate", "--study", "trl", "--trainable", "2"], "flag",
             ["--trainable"]),
            ("--study small --beta 0.3 (trl's option)", ["validate", "--study", "small", "--beta", "0.3", "--quick"],
             "flag", ["--beta"]),
            ("--study kl --no-extra (small's option)", ["validate", "--study", "kl", "--no-extra"], "flag", ["--no-extra"]),
            ("--study free --quick (small's option)", ["validate", "--study", "free", "--quick"], "flag", ["--quick"]),
            ("--study tree --seed 3 (small's option)", ["validate", "--study", "tree", "--seed", "3"], "flag", ["--seed"]),
            ("--study smollm2 --steps 9 (below its 10)", ["validate", "--study", "smollm2", "--steps", "9"], "error",
             ["--steps", "9"]),
            ("--study kl --steps 10**9", ["validate", "--study", "kl", "--steps", str(10**9)], "error", ["--steps"]),
            ("--study trl --questions 1", ["validate", "--study", "trl", "--questions", "1"], "either", ["--questions"]),
            ("--study small --device 'cpu ' (a trailing space)", ["validate", "--study", "small", "--device", "cpu ",
                                                                   "--quick"], "either", ["cpu "]),
            ("--study small --device cuda (no GPU)", ["validate", "--study", "small", "--device", "cuda", "--quick"],
             "error", ["cuda"]),
            ("--study kl --threads 0 (torch's default)", ["validate", "--study", "kl", "--threads", "0"], "ok", []),
            ("--study small --out '' (empty)", ["validate", "--study", "small", "--out", "", "--quick"], "error",
             ["--out"]),
            ("--study free --prompts 1", ["validate", "--study", "free", "--prompts", "1"], "either", ["--prompts"]),
            ("--study smollm2 --trainable top-1.5", ["validate", "--study", "smollm2", "--trainable", "top-1.5"], "error",
             ["top-1.5"]),
            ("--study smollm2 --model-dir an empty folder", ["validate", "--study", "smollm2", "--model-dir", "m"],
             "error", ["m"]),
            ("--study free --seeds 0 0 (repeated)", ["validate", "--study", "free", "--seeds", "0", "0"], "either",
             ["--seeds"]),
            ("--study trl --beta 1e-12", ["validate", "--study", "trl", "--beta", "1e-12"], "either", ["trl"]),
            ("--study small --resume with no earlier run", ["validate", "--study", "small", "--resume", "--quick"], "ok",
             []),
            ("--study small --questions 3 --quick --seed 2**31", ["validate", "--study", "small", "--questions", "3",
                                                                  "--quick", "--seed", str(2**31)], "ok", [])]:
        files = {"m": None} if "empty folder" in lab else {}
        out.append(_cli(G_, f"validate {lab}", argv, expect, names, files=files))
    for lab, argv, expect, names, stub in [
            ("--only 1-3 (a range)", ["figures", "--only", "1-3", "--out", "f"], "error", ["1-3"], False),
            ("--only 1e1", ["figures", "--only", "1e1", "--out", "f"], "error", ["1e1"], False),
            ("--only -3", ["figures", "--only=-3", "--out", "f"], "error", ["-3"], False),
            ("--only 34 (one past the last)", ["figures", "--only", "34", "--out", "f"], "error", ["34"], False),
            ("--only 1 1 (repeated)", ["figures", "--only", "1", "1", "--out", "f"], "ok", [], True),
            ("--only ' 2' (a leading space)", ["figures", "--only", " 2", "--out", "f"], "either", ["2"], True),
            ("--only '' (empty)", ["figures", "--only", "", "--out", "f"], "error", ["--only"], False),
            ("--out /dev/null", ["figures", "--only", "1", "--out", "/dev/null"], "error", ["/dev/null"], True),
            ("--out under /sys (unwritable)", ["figures", "--only", "1", "--out", "/sys/grpo_figs"], "error",
             ["/sys/grpo_figs"], True),
            ("--trained a missing CSV", ["figures", "--only", "9", "--trained", "missing.csv", "--out", "f"], "error",
             ["missing.csv"], True),
            ("--trained an empty CSV", ["figures", "--only", "9", "--trained", "t.csv", "--out", "f"], "error", ["t.csv"],
             True),
            ("--results a folder with no tables --only 13", ["figures", "--only", "13", "--results", "r", "--out", "f"],
             "either", ["r"], True)]:
        files = {"t.csv": ""} if "empty CSV" in lab else {"r": None} if "--results" in lab else {}
        kw = dict(stub_figures=True) if stub else {}
        out.append(_cli(G_, f"figures {lab}", argv, expect, names, files=files, **kw))
    for lab, argv, expect, names in [
            ("--check --out a folder", ["derivations", "--check", "--out", "d"], "error", ["d"]),
            ("--out a folder", ["derivations", "--out", "d"], "error", ["d"]),
            ("--out /dev/full (no space)", ["derivations", "--out", "/dev/full"], "error", ["/dev/full"]),
            ("--out '' (empty)", ["derivations", "--out", ""], "error", ["--out"]),
            ("--out a new folder's file (parents missing)", ["derivations", "--out", "new/sub/d.md"], "either",
             ["new/sub"]),
            ("--check --out /dev/null", ["derivations", "--check", "--out", "/dev/null"], "error", ["/dev/null"])]:
        files = {"d": None} if "folder" in lab and "new" not in lab else {"d.md": "# old\n"} if "other text" in lab else {}
        out.append(_cli(G_, f"derivations {lab}", argv, expect, names, files=files, stub_symbolic=True,
                        exit1="--check" in argv))
    return out


# ---------------------------------------------------------------- the environment (real processes)
def _ro_mount(tmp):
    (tmp / "ro").mkdir()
    import subprocess
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(tmp / "ro")], check=True)


def _ro_umount(tmp):
    import subprocess
    subprocess.run(["umount", str(tmp / "ro")], check=False)


def environment_cases() -> list[dict]:
    G_ = "CLI: environment oddities (real processes)"
    out = []
    cli = CLI_PY
    rows = _base(12, seed=21)
    counts = _counts(rows)

    def pred_ok(folder="o", ids=None):
        def check(tmp, stdout, stderr):
            table = _table(tmp, folder)
            for r, (pid, n, c) in zip(table, rows):
                want_id = pid if ids is None else ids(pid)
                if r["prompt_id"] != want_id:
                    return f"id {r['prompt_id']!r} != {want_id!r}"
                if not _near8(r["pred"], r11.eq14(c / n, 0.3)):
                    return f"{pid}: pred {r['pred']}"
            return ""
        return check
    pred = f"{cli} predict s.csv --beta 0.3 --out o --no-plots --no-progress"
    uni_counts = _counts([(f"é-{a}-✓", b, c) for a, b, c in rows])
    for lab, shell, env, files, expect, names, after, extra in [
            ("--out in a read-only tmpfs", pred.replace("--out o", "--out ro/o"), {}, {"s.csv": counts}, "error",
             ["ro/o"], None, dict(prep=_ro_mount, cleanup=_ro_umount)),
            ("HOME under /sys (unwritable) and MPLCONFIGDIR unset", pred.replace(" --no-plots", ""),
             {"HOME": "/sys/nohome"}, {"s.csv": counts}, "ok", [], pred_ok(), dict(unset=["MPLCONFIGDIR"])),
            ("HOME set to a regular file", pred.replace(" --no-plots", ""), {"HOME": "h"}, {"s.csv": counts, "h": "x"},
             "ok", [], pred_ok(), dict(unset=["MPLCONFIGDIR"])),
            ("LANG=C LC_ALL=C, a Unicode file name and Unicode ids",
             f"{cli} predict 'sämples ✓.csv' --beta 0.3 --out 'ö' --no-plots --no-progress",
             {"LANG": "C", "LC_ALL": "C"}, {"sämples ✓.csv": uni_counts}, "ok", [],
             pred_ok("ö", lambda pid: f"é-{pid}-✓"), {}),
            ("PYTHONIOENCODING=ascii and Unicode ids (printed)", pred, {"PYTHONIOENCODING": "ascii"},
             {"s.csv": uni_counts}, "ok", [], pred_ok(ids=lambda pid: f"é-{pid}-✓"), {}),
            ("LC_ALL=C and a missing Unicode file", f"{cli} predict 'nöpe.csv' --beta 0.3 --out o --no-progress",
             {"LC_ALL": "C", "LANG": "C"}, {}, "error", ["nöpe.csv"], None, {}),
            ("a symlinked samples file", f"ln -s real.csv s.csv && {pred}", {}, {"real.csv": counts}, "ok", [],
             pred_ok(), {}),
            ("a FIFO fed by a writer", f"mkfifo s.csv && (cat real.csv > s.csv &) && {pred}", {},
             {"real.csv": counts}, "ok", [], pred_ok(), {}),
            ("a folder where the samples file is expected", pred, {}, {"s.csv": None}, "error", ["s.csv"], None, {}),
            ("--out an existing regular file", pred, {}, {"s.csv": counts, "o": "x"}, "error", ["o"], None, {}),
            ("stdout on /dev/full", f"{pred} > /dev/full", {}, {"s.csv": counts}, "error", [], None, {}),
            ("a refused input with stderr on /dev/full", f"{cli} predict nope.csv --beta 0.3 --out o 2> /dev/full", {},
             {}, "pipe", [], None, {}),
            ("--out through a symlinked folder", f"mkdir real && ln -s real link && "
             f"{pred.replace('--out o', '--out link/o')}", {}, {"s.csv": counts}, "ok", [], pred_ok("real/o"), {}),
            ("ulimit -s 512 (a small stack)", f"ulimit -s 512 && {pred}", {}, {"s.csv": counts}, "either", [],
             pred_ok(), {}),
            ("TMPDIR=/nonexistent", pred, {"TMPDIR": "/nonexistent"}, {"s.csv": counts}, "ok", [], pred_ok(), {}),
            ("umask 0777 (new files unreadable)", f"umask 0777 && {pred}", {}, {"s.csv": counts}, "either", [],
             pred_ok(), {}),
            ("XDG_CACHE_HOME and MPLCONFIGDIR under /sys", pred.replace(" --no-plots", ""),
             {"XDG_CACHE_HOME": "/sys/x", "MPLCONFIGDIR": "/sys/y"}, {"s.csv": counts}, "ok", [], pred_ok(), {}),
            ("samples given as /dev/stdin from a here-string", f"{cli} predict /dev/stdin --beta 0.3 --out o --no-plots "
             f"--no-progress < real.csv", {}, {"real.csv": counts}, "ok", [], pred_ok(), {})]:
        out.append(_shell(G_, f"predict/solve with {lab}", shell, expect, names, after=after, env=env, files=files,
                          **extra))

    def big(path):
        with open(path, "w") as fh:
            fh.write("prompt_id,reward\n")
            line = "".join(f"p{i % 500},{(i * 7919) % 3 == 0:d}\n" for i in range(100_000))
            for _ in range(60):                  # 60 x 1.7 MB: about 100 MB, 6,000,000 rows
                fh.write(line)
    out.append(_shell(G_, "predict on a 100 MB reward-rows CSV (6,000,000 rows, 500 prompts)",
                      f"{cli} predict s.csv --beta 0.3 --out o --no-plots --no-progress", "either", ["s.csv"],
                      files={"s.csv": big}, after=lambda tmp, so, se: "" if len(_table(tmp)) == 500 else "rows"))
    return out


def solve_many_cases() -> list[dict]:
    G_ = "CLI: solve --json with 5-8 outputs (every GRPO row's KKT residual, RLHF's closed form)"
    out = []
    rng = np.random.default_rng(812)
    for i in range(12):
        K = 5 + i % 4
        pr = rng.dirichlet(np.full(K, 2.0)).round(5)
        pr[-1] = round(1 - pr[:-1].sum(), 5)
        pr = pr.tolist()
        rw = rng.permutation(np.linspace(-1, 2, K)).round(3).tolist()
        beta, G = [0.2, 0.5, 1.3][i % 3], [2, 3, 4][(i // 3) % 3]
        R = [[1.0 if r == v else 0.0 for v in sorted(rw)] for r in rw]
        levels = sorted(rw)

        def check(tmp, res, pr=pr, rw=rw, beta=beta, G=G, R=R, levels=levels):
            rows = {r["method"]: r for r in json.loads(res["out"])["rows"]}
            for pen in ("reverse", "direct"):
                for norm in ("scale", "shift"):
                    row = rows[f"GRPO {pen}/{norm}"]
                    if row.get("exhaustive") and (norm == "scale" or row.get("n_points") != 1):
                        raise AssertionError(f"{pen}/{norm}: exhaustive for {len(pr)} reward levels")
                    res_ = r11.residual(row["pi"], pr, R, levels, beta, kind=norm, G=G, penalty=pen)
                    if res_ > 1e-8:
                        raise AssertionError(f"{pen}/{norm}: KKT residual {res_:.3g} at {row['pi']}")
            e = [p * math.exp(r / beta) for p, r in zip(pr, rw)]
            want = [v / math.fsum(e) for v in e]
            if not r11.close(rows["RLHF (log pooling)"]["pi"], want, 1e-10, 1e-15):
                raise AssertionError(f"RLHF {rows['RLHF (log pooling)']['pi']} != {want}")
            return True
        out.append(_cli(G_, f"solve --json K={K} pi_ref={pr} rewards={rw} beta={beta} G={G}",
                        ["solve", "--pi-ref", *map(str, pr), "--rewards", *map(str, rw), "--beta", str(beta),
                         "--group-size", str(G), "--json"], "ok", check=check))
    return out


def all_cli_cases() -> list[dict]:
    return solve_many_cases() + finite_cases() + measured_quirk_cases() + explain_folder_cases() + option_cases() + environment_cases()
