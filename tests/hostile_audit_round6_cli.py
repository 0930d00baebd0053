"""Cases of the sixth hostile audit (issue 45), part three: the command line.

``solve`` with random rewards and preference matrices (every GRPO row checked against enumeration),
``predict``'s table checked column by column (pred at G = 3..8 and the direct and shift forms, pass@k before
and after, Wilson bounds, KL, the trade-off file), ``explain`` on the trainer fields no round read
(verl's ``norm_adv_by_std_in_grpo``, ``use_kl_in_reward``, ``kl_penalty``, ``filter_groups``, ``entropy_coeff``,
TRL's sampling and off-policy knobs, OpenRLHF's ``entropy_loss_coef``, ``dynamic_filtering``), sweep grids of
the GRPO family, option combinations of ``validate``/``figures``, and the shell around the output (a closed
pipe, a full disk, a closed stdout), which run in real processes (``shell``).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import yaml

import hostile_audit_round5_ref as r5
import hostile_audit_round6_ref as ref

NAN, INF = float("nan"), math.inf


def _a(group, label, argv, expect, names=(), check=None, files=None, wrong=(), **kw):
    return dict(group=group, label=label, argv=list(argv), expect=expect, names=list(names), check=check,
                files=files or {}, wrong=list(wrong), **kw)


def _data(name):
    """The rows of ``tests/data/<name>`` (YAML), the tables of bad inputs kept as data."""
    return yaml.safe_load((Path(__file__).resolve().parent / "data" / name).read_text(encoding="utf-8"))


def _rows(res):
    return {r["method"]: r for r in json.loads(res["out"])["rows"]}


# ---------------------------------------------------------------- solve with random rewards / preferences
def solve_cases() -> list[dict]:
    G = "solve: random rewards and preferences"
    out = []
    specs = [([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 2, 0.5),
             ([0.3, 0.7], [0, 1], [[0.2, 0.8], [0.6, 0.4]], 3, 0.5),
             ([0.2, 0.3, 0.5], [-1, 0, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0]], 3, 1.0),
             ([0.6, 0.4], [0, 1], [[0.45, 0.55], [0.55, 0.45]], 4, 2.0),
             ([0.1, 0.9], [3, 1], [[0.5, 0.5], [0.9, 0.1]], 5, 0.3),
             ([0.5, 0.5], [0, 1], [[0.0, 1.0], [0.3, 0.7]], 2, 0.05)]
    for i, (p, lv, pr, g, beta) in enumerate(specs):
        argv = ["solve", "--pi-ref", *map(str, p), "--reward-levels", *map(str, lv), "--reward-probs",
                *[str(x) for row in pr for x in row], "--beta", str(beta), "--group-size", str(g), "--json"]

        def chk(tmp, res, p=p, lv=lv, pr=pr, g=g, beta=beta):
            rows = _rows(res)
            ok = True
            for meth, norm, cond in (("GRPO reverse/scale", "scale", ref.reverse_ok),
                                     ("GRPO reverse/shift", "shift", ref.reverse_ok),
                                     ("GRPO direct/scale", "scale", ref.direct_ok),
                                     ("GRPO direct/shift", "shift", ref.direct_ok)):
                pi = np.asarray(rows[meth]["pi"], float)
                ok &= cond(pi, p, ref.pg_random(pi, lv, pr, g, normalization=norm), beta, tol=1e-7)
            er = np.asarray(pr, float) @ np.asarray(lv, float)
            w = np.asarray(p) * np.exp((er - er.max()) / beta)
            return ok and np.allclose(rows["RLHF (log pooling)"]["pi"], w / w.sum(), atol=1e-9)
        out.append(_a(G, f"solve --reward-levels/--reward-probs #{i} G={g} beta={beta}: 4 GRPO rows + RLHF", argv,
                      "ok", check=chk))
    for i, (p, M) in enumerate([([0.3, 0.7], [[0.5, 0.9], [0.1, 0.5]]),
                                ([0.2, 0.3, 0.5], [[0.5, 1.0, 0.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.5]])]):
        argv = ["solve", "--pi-ref", *map(str, p), "--preference", *[str(x) for row in M for x in row], "--beta",
                "0.5", "--json"]

        def chk(tmp, res, p=p, M=M):
            pi = np.asarray(_rows(res)["GRPO reverse/scale"]["pi"], float)
            return ref.reverse_ok(pi, p, ref.pg_preference(pi, M), 0.5, tol=1e-7)
        out.append(_a(G, f"solve --preference #{i} (G=2): reverse row", argv, "ok", check=chk))
    base = ["solve", "--pi-ref", "0.3", "0.7", "--beta", "0.5"]
    for row in _data("bad_solve_reward_options.yaml"):
        out.append(_a(G, f"solve {row['name']}", base + row["options"].split(), row.get("expect", "error"),
                      row["names"], check=None))
    return out


# ---------------------------------------------------------------- predict's table, column by column
SAMPLES = "prompt_id,n,correct\na,10,3\nb,8,1\nc,4,2\nd,12,11\n"
COUNTS = [("a", 10, 3), ("b", 8, 1), ("c", 4, 2), ("d", 12, 11)]


def _binary_direct(p, beta, G) -> float:
    """Direct penalty: ``logit x - logit p = Delta(x)/beta``."""
    mp = ref._mp()
    p, b = mp.mpf(p), mp.mpf(beta)
    lg = lambda x: mp.log(x / (1 - x))  # noqa: E731
    return ref.bisect(lambda x: b * (lg(x) - lg(p)) - ref._delta_binary(x, G), p, 1 - mp.mpf(10) ** -60)


def _table(tmp):
    with open(Path(tmp) / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        return {r["prompt_id"]: r for r in csv.DictReader(fh)}


def _pred_check(pred_of, ks=(), interval=None, level=0.95, tol=2e-7):
    def check(tmp, res) -> bool:
        t = _table(tmp)
        for pid, n, c in COUNTS:
            row, p = t[pid], c / n
            x = pred_of(p)
            if abs(float(row["pred"]) - x) > tol:
                return False
            kl = x * math.log(x / p) + (1 - x) * math.log((1 - x) / (1 - p))
            if abs(float(row["kl_direct"]) - kl) > 1e-6 * max(1, kl):
                return False
            for k in ks:
                if abs(float(row[f"pass@{k}_after"]) - (1 - (1 - x) ** k)) > 1e-7:
                    return False
                if k <= n and abs(float(row[f"pass@{k}_before"]) - r5.pass_at_k(n, c, k)) > 1e-7:
                    return False
            if interval == "wilson":
                lo, hi = r5.wilson(c, n, level)
                if abs(float(row["p_ref_lo"]) - lo) > 1e-7 or abs(float(row["p_ref_hi"]) - hi) > 1e-7:
                    return False
        return not (Path(tmp) / "o" / ".incomplete").exists()
    return check


#: ``predict`` writing only its table, quietly: the start of the checked-table cases
PREDICT_TABLE = ("predict", "s.csv", "--out", "o", "--no-plots", "--no-progress")


def predict_cases() -> list[dict]:
    G = "predict: the table checked"
    out = []
    base = list(PREDICT_TABLE)
    f = {"s.csv": SAMPLES}
    for g in (3, 5, 8):
        for beta in (0.1, 1.0):
            out.append(_a(G, f"predict --beta {beta} --group-size {g} --k 1 2 4", base + [
                "--beta", str(beta), "--group-size", str(g), "--k", "1", "2", "4"], "ok",
                check=_pred_check(lambda p, g=g, beta=beta: ref.binary_group_reverse(p, beta, g), ks=(1, 2, 4)), files=f))
    for g in (2, 4):
        out.append(_a(G, f"predict --penalty direct --group-size {g}", base + ["--beta", "0.5", "--group-size", str(g),
                                                                           "--penalty", "direct"], "ok",
                      check=_pred_check(lambda p, g=g: _binary_direct(p, 0.5, g)), files=f))
        out.append(_a(G, f"predict --normalization shift --group-size {g}",
                      base + ["--beta", "0.5", "--group-size", str(g), "--normalization", "shift"], "ok",
                      check=_pred_check(lambda p, g=g: ref.eq14(p, 0.5, (g - 1) / g)), files=f))
    for level in (0.5, 0.9, 0.999):
        out.append(_a(G, f"predict --interval wilson --level {level}", base + ["--beta", "0.5", "--interval", "wilson",
                                                                             "--level", str(level)], "ok",
                      check=_pred_check(lambda p: ref.eq14(p, 0.5), interval="wilson", level=level), files=f))
    out.append(_a(G, "predict --k 12 (= the largest n) and 13 (above every n but d's)", base + ["--beta", "0.5", "--k", "12",
                                                                                               "13"],
                  "either", ["--k"], check=_pred_check(lambda p: ref.eq14(p, 0.5), ks=(12,)), files=f))

    def trade(tmp, res) -> bool:
        with open(Path(tmp) / "o" / "tradeoff.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            b = float(r["beta"])
            want = np.mean([ref.eq14(c / n, b) for _, n, c in COUNTS])
            if abs(float(r["mean_pred"]) - want) > 1e-6:
                return False
        return len(rows) == 3
    def subnormal(tmp, res) -> bool:
        """beta = 1e-320 is valid: Eq. 14's limit beta -> 0 is x = 1 for every 0 < p < 1, with no raw NumPy warning."""
        with open(Path(tmp) / "o" / "tradeoff.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        return (len(rows) == 1 and abs(float(rows[0]["mean_pred"]) - 1.0) < 1e-12
                and "overflow" not in res["warned"] and "invalid value" not in res["warned"])
    out.append(_a(G, "predict --tradeoff-betas 1e-320 (subnormal)", base + ["--beta", "0.5", "--tradeoff-betas",
                                                                          "1e-320"], "ok", check=subnormal, files=f))
    out.append(_a(G, "predict --tradeoff-betas 0.05 0.5 5: tradeoff.csv's mean_pred", base + [
        "--beta", "0.5", "--tradeoff-betas", "0.05", "0.5", "5"], "ok", check=trade, files=f))
    bad = [
        ("--tradeoff-betas inf", ["--tradeoff-betas", "inf"], ["--tradeoff-betas"]),
        ("--k 0x8", ["--k", "0x8"], ["--k"]), ("--k -1", ["--k", "-1"], ["--k"]),
        ("--k 10**12", ["--k", str(10**12)], ["--k"]),
        ("--interval WILSON", ["--interval", "WILSON"], ["--interval"]),
        ("--level 1", ["--level", "1"], ["--level"]), ("--level 0.0", ["--level", "0.0"], ["--level"]),
        ("--sample-temperature inf", ["--sample-temperature", "inf"], ["--sample-temperature"]),
        ("--sample-temperature -1", ["--sample-temperature", "-1"], ["--sample-temperature"]),
        ("--sample-temperature nan", ["--sample-temperature", "nan"], ["--sample-temperature"]),
        ("--rhos 0.5 without --measured", ["--rhos", "0.5"], ["--rhos"]),
                        ("--slow-tol without a clock", ["--slow-tol", "0.05"], ["--slow-tol"]),
        ("--clock -0.0", ["--clock", "-0.0"], ["--clock"]), ("--clock inf", ["--clock", "inf"], ["--clock"]),
        ("--fit 10 1.5 (mean reward above 1)", ["--fit", "10", "1.5"], ["--fit"]),
        ("--fit -5 0.6", ["--fit", "-5", "0.6"], ["--fit"]),
        ("--fit 10 nan", ["--fit", "10", "nan"], ["--fit"]),
        ("--clock 0.01 --steps -10", ["--clock", "0.01", "--steps", "-10"], ["--steps"]),
        ("--clock 0.01 --steps nan", ["--clock", "0.01", "--steps", "nan"], ["--steps"]),
        ("--clock and --fit together", ["--clock", "0.01", "--fit", "10", "0.6", "--steps", "10"], ["--clock", "--fit"]),
        ("--beta with --framework", ["--framework", "trl", "t.json"], ["--beta"]),
        ("--std-ddof 1.0", ["--std-ddof", "1.0"], ["--std-ddof"]),
        ("--kl-placement reward with --penalty direct", ["--kl-placement", "reward", "--penalty", "direct"],
         ["--penalty"]),
        ("--kl-value-clamp 0", ["--kl-value-clamp", "0"], ["--kl-value-clamp"]),
        ("--kl-log-ratio-clamp -20", ["--kl-log-ratio-clamp", "-20"], ["--kl-log-ratio-clamp"]),
        ("--group-size 2e0", ["--group-size", "2e0"], ["--group-size"]),
        ("--id-column prompt (no such column)", ["--id-column", "prompt"], ["prompt"]),
    ]
    files = dict(f, **{"t.json": '{"beta": 0.1, "num_generations": 4}'})
    for label, extra, names in bad:
        argv = base + (["--beta", "0.5"] if label != "--slow-tol without a clock" else ["--beta", "0.5"]) + extra
        if label == "--beta with --framework":
            argv = base + ["--beta", "0.5"] + extra
        out.append(_a(G, f"predict {label}", argv, "error" if "--slow-tol" not in label else "flag", names,
                      files=files))
    return out


# ---------------------------------------------------------------- explain on the fields no round read
def explain_cases() -> list[dict]:
    G = "explain: trainer fields no round read"
    out = []

    def obj_is(**want):
        def check(tmp, res) -> bool:
            o = json.loads(res["out"])["objective"]
            return all((abs(o[k] - v) < 1e-12) if isinstance(v, float) else o[k] == v for k, v in want.items())
        return check
    verl = lambda algo="", actor="", n=4: (   # noqa: E731
        "algorithm:\n  adv_estimator: grpo\n" + algo + "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n"
        "    kl_loss_coef: 0.2\n    kl_loss_type: low_var_kl\n" + actor + f"  rollout:\n    n: {n}\n")
    V = ["explain", "--framework", "verl", "v.yaml", "--json"]
    ok = [
        ("norm_adv_by_std_in_grpo: false -> shift", verl("  norm_adv_by_std_in_grpo: false\n"),
         dict(normalization="shift")),
        ("norm_adv_by_std_in_grpo: true -> scale", verl("  norm_adv_by_std_in_grpo: true\n"), dict(normalization="scale")),
        ("use_kl_in_reward with kl_penalty kl -> k1 in the reward",
         verl("  use_kl_in_reward: true\n  kl_penalty: kl\n  kl_ctrl:\n    kl_coef: 0.3\n",
              "    use_kl_loss: false\n").replace("    use_kl_loss: true\n", ""),
         dict(kl_placement="reward", kl_estimator="k1")),
        ("filter_groups.enable: true -> filter_ties", verl("  filter_groups:\n    enable: true\n"), dict(filter_ties=True)),
        ("actor.entropy_coeff: 0.01 -> entropy_coef", verl("", "    entropy_coeff: 0.01\n"), dict(entropy_coef=0.01)),
        ("adv_estimator: rloo -> advantage rloo", verl().replace("adv_estimator: grpo", "adv_estimator: rloo"),
         dict(advantage_estimator="rloo")),
        ("kl_loss_type: mse -> k2", verl().replace("low_var_kl", "mse"), dict(kl_estimator="k2")),
        ("kl_loss_type: k3+ -> k3_plus", verl().replace("low_var_kl", "k3+"), dict(kl_estimator="k3_plus")),
        ("loss_agg_mode: seq-mean-token-sum", verl("", "    loss_agg_mode: seq-mean-token-sum\n"),
         dict(loss_type="seq-mean-token-sum")),
        ("rollout.n: 64", verl(n=64), dict(group_size=64)),
    ]
    for label, text, want in ok:
        out.append(_a(G, f"verl {label}", V, "ok", check=obj_is(**want), files={"v.yaml": text}))
    bad = [
        ("norm_adv_by_std_in_grpo: 'no' (text)", verl("  norm_adv_by_std_in_grpo: 'no'\n"), ["norm_adv_by_std_in_grpo"]),
        ("norm_adv_by_std_in_grpo: 2", verl("  norm_adv_by_std_in_grpo: 2\n"), ["norm_adv_by_std_in_grpo"]),
        ("kl_penalty: k9", verl("  use_kl_in_reward: true\n  kl_penalty: k9\n"), ["kl_penalty", "k9"]),
        ("kl_loss_type: KL (capitals)", verl().replace("low_var_kl", "KL"), ["kl_loss_type"]),
        ("filter_groups.enable: 'true' (text)", verl("  filter_groups:\n    enable: 'true'\n"), ["enable"]),
        ("filter_groups: true (not a section)", verl("  filter_groups: true\n"), ["filter_groups"]),
        ("entropy_coeff: -0.01", verl("", "    entropy_coeff: -0.01\n"), ["entropy_coeff"]),
        ("entropy_coeff: .nan", verl("", "    entropy_coeff: .nan\n"), ["entropy_coeff"]),
        ("loss_agg_mode: token-sum", verl("", "    loss_agg_mode: token-sum\n"), ["loss_agg_mode"]),
        ("ppo_epochs: 2.5", verl("", "    ppo_epochs: 2.5\n"), ["ppo_epochs"]),
        ("ppo_mini_batch_size: -1", verl("", "    ppo_mini_batch_size: -1\n"), ["ppo_mini_batch_size"]),
        ("rollout.top_k: all", verl().replace("    n: 4\n", "    n: 4\n    top_k: all\n"), ["top_k"]),
        ("data.train_batch_size: 1.5", verl() + "data:\n  train_batch_size: 1.5\n", ["train_batch_size"]),
        ("adv_estimator: gae with rollout.n 4 (critic: not GRPO)", verl().replace("grpo", "gae"), ["gae"]),
    ]
    for label, text, names in bad:
        out.append(_a(G, f"verl {label}", V, "error" if "gae" not in label else "either", names,
                      files={"v.yaml": text}))
    out.append(_a(G, "verl ppo_epochs: 4 (off-policy: warned)", V, "warn", ["ppo_epochs"],
                  files={"v.yaml": verl("", "    ppo_epochs: 4\n")}))
    T = ["explain", "--framework", "trl", "t.json", "--json"]
    tj = lambda **kw: json.dumps({"beta": 0.1, "num_generations": 4, **kw})   # noqa: E731
    for label, kw, want in [("importance_sampling_level sequence with loss_type dr_grpo",
                             dict(importance_sampling_level="sequence", loss_type="dr_grpo"),
                             dict(importance_level="sequence", loss_type="dr_grpo")),
                            ("num_iterations 3 (same stationary set)", dict(num_iterations=3), dict(beta=0.1)),
                            ("epsilon_high 0.5", dict(epsilon_high=0.5), dict(beta=0.1)),
                            ("gradient_accumulation_steps 8", dict(gradient_accumulation_steps=8), dict(group_size=4))]:
        out.append(_a(G, f"trl {label}", T, "ok", check=obj_is(**want), files={"t.json": tj(**kw)}))
    for label, kw in [("top_k 20", dict(top_k=20)), ("min_p 0.05", dict(min_p=0.05)),
                      ("repetition_penalty 1.1", dict(repetition_penalty=1.1)),
                      ("top_entropy_quantile 0.5", dict(top_entropy_quantile=0.5)),
                      ("sync_ref_model true", dict(sync_ref_model=True))]:
        name = label.split()[0]
        out.append(_a(G, f"trl {label} (changes what is sampled or the reference: warned)", T, "warn", [name],
                      files={"t.json": tj(**kw)}))
    for label, kw in [("importance_sampling_level 'tokens'", dict(importance_sampling_level="tokens")),
                      ("epsilon_high -1e-9", dict(epsilon_high=-1e-9)), ("num_iterations -3", dict(num_iterations=-3)),
                      ("top_k -5", dict(top_k=-5)), ("min_p 2", dict(min_p=2)),
                      ("repetition_penalty -0.5", dict(repetition_penalty=-0.5)),
                      ("top_entropy_quantile 1.5", dict(top_entropy_quantile=1.5)),
                      ("mask_truncated_completions 'yes'", dict(mask_truncated_completions="yes")),
                      ("gradient_accumulation_steps 2.5", dict(gradient_accumulation_steps=2.5)),
                      ("num_iterations true", dict(num_iterations=True))]:
        name = label.split()[0]
        out.append(_a(G, f"trl {label}", T, "error", [name], files={"t.json": tj(**kw)}))
    O = ["explain", "--framework", "openrlhf", "o.json", "--json"]
    oj = lambda **kw: json.dumps({"advantage_estimator": "group_norm", "n_samples_per_prompt": 8,   # noqa: E731
                                  "init_kl_coef": 0.01, "use_kl_loss": True, **kw})
    out.append(_a(G, "openrlhf entropy_loss_coef 0.02 -> entropy_coef", O, "ok", check=obj_is(entropy_coef=0.02),
                  files={"o.json": oj(entropy_loss_coef=0.02)}))
    out.append(_a(G, "openrlhf dynamic_filtering true -> filter_ties", O, "ok", check=obj_is(filter_ties=True),
                  files={"o.json": oj(dynamic_filtering=True)}))
    out.append(_a(G, "openrlhf max_epochs 3 (warned)", O, "warn", ["max_epochs"], files={"o.json": oj(max_epochs=3)}))
    for label, kw, name in [("entropy_loss_coef -1", dict(entropy_loss_coef=-1), "entropy_loss_coef"),
                            ("entropy_loss_coef 'x'", dict(entropy_loss_coef="x"), "entropy_loss_coef"),
                            ("dynamic_filtering 'on'", dict(dynamic_filtering="on"), "dynamic_filtering"),
                            ("max_epochs -2", dict(max_epochs=-2), "max_epochs"), ("max_epochs 'three'", dict(max_epochs="three"),
                                                                                  "max_epochs"),
                            ("use_kl_loss 'false' (text)", dict(use_kl_loss="false"), "use_kl_loss"),
                            ("init_kl_coef inf", dict(init_kl_coef="Infinity"), "init_kl_coef")]:
        files = {"o.json": oj(**kw).replace('"Infinity"', "Infinity")}
        out.append(_a(G, f"openrlhf {label}", O, "error", [name], files=files))
    # with a question: the stationary policy beside log pooling, both checked
    for fw, fname, text, beta, G_ in (("trl", "t.json", json.dumps({"beta": 0.3, "num_generations": 2, "scale_rewards": True,
                                                                      "loss_type": "grpo"}), 0.3, 2),):
        def chk(tmp, res, beta=beta) -> bool:
            d = json.loads(res["out"])["question"]
            lp = np.array([0.3 * math.exp(1 / beta), 0.7])
            return np.allclose(d["log_pooling"], lp / lp.sum(), atol=1e-9) and abs(sum(d["stationary_policy"]) - 1) < 1e-12
        out.append(_a(G, "trl with --pi-ref 0.3 0.7 --rewards 1 0: log pooling checked",
                      ["explain", "--framework", fw, fname, "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--json"],
                      "ok", check=chk, files={fname: text}))
    out.append(_a(G, "explain --pi-ref without --rewards", ["explain", "--framework", "trl", "t.json", "--pi-ref", "0.3",
                                                            "0.7"], "error", ["--rewards"], files={"t.json": tj()}))
    out.append(_a(G, "explain --rewards of 3 for --pi-ref of 2", ["explain", "--framework", "trl", "t.json", "--pi-ref",
                                                                  "0.3", "0.7", "--rewards", "1", "0", "0"], "error",
                  ["rewards"], files={"t.json": tj()}))
    return out


# ---------------------------------------------------------------- sweep grids of the GRPO family
def sweep_cases() -> list[dict]:
    G = "sweep: family grids"
    out = []
    Q = "questions:\n  - {name: q1, pi_ref: [0.3, 0.7], rewards: [2, 0]}\n  - {name: q2, pi_ref: [0.05, 0.95], rewards: [1, 0]}\n"

    def rows_ok(want_of):
        def check(tmp, res) -> bool:
            with open(Path(tmp) / "g.csv", encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh))
            if not rows:
                return False
            for r in rows:
                x = json.loads(r["reached_policy"])[0]
                w = want_of(r["key"])
                if w is not None and abs(x - w) > 1e-7:
                    return False
            return True
        return check

    def rloo_want(key):
        q, obj = key.split("|")
        p, gap = (0.3, 2.0) if q == "q1" else (0.05, 1.0)
        beta = float(obj.split("beta=")[1].split(",")[0])
        return ref.eq14(p, beta, gap)
    out.append(_a(G, "grid advantage: rloo, group_size [2, 7, inf], beta [0.1, 1]", ["sweep", "g.yaml", "--out", "g.csv",
                                                                                    "--no-progress"], "ok",
                  check=rows_ok(rloo_want), files={"g.yaml": "objectives: {beta: [0.1, 1.0], group_size: [2, 7, inf], "
                                                              "advantage: rloo}\n" + Q}))

    def rpp_want(key):
        q, obj = key.split("|")
        p = 0.3 if q == "q1" else 0.05
        g = obj.split("group_size=")[1].split(",")[0]
        return ref.binary_reinforce_pp(p, 0.5, INF if g == "inf" else int(g))
    out.append(_a(G, "grid advantage: reinforce_pp, group_size [3, 8]", ["sweep", "g.yaml", "--out", "g.csv",
                                                                        "--no-progress"], "ok",
                  check=rows_ok(rpp_want), files={"g.yaml": "objectives: {beta: 0.5, group_size: [3, 8], "
                                                             "advantage: reinforce_pp}\n" + Q}))
    out.append(_a(G, "grid beta 0 with entropy_coef [0.5, 2], G 4", ["sweep", "g.yaml", "--out", "g.csv",
                                                                      "--no-progress"], "ok",
                  check=rows_ok(lambda key: None if "q1" in key else ref.binary_entropy_only(
                      4, float(key.split("entropy_coef=")[1].split(",")[0]))),
                  files={"g.yaml": "objectives: {beta: 0, group_size: 4, entropy_coef: [0.5, 2.0]}\n" + Q}))
    for row in _data("bad_sweep_grids.yaml")["audit_round6"]:
        body = row["grid"] if "questions" in row["grid"] else row["grid"] + Q
        out.append(_a(G, f"grid {row['name']}", ["sweep", "g.yaml", "--out", "g.csv", "--no-progress"],
                      row.get("expect", "error"), row["names"], files={"g.yaml": body}))
    out.append(_a(G, "grid with random-reward question: reverse condition", ["sweep", "g.yaml", "--out", "g.csv",
                                                                          "--no-progress"], "ok",
                  check=lambda tmp, res: _sweep_random_ok(tmp),
                  files={"g.yaml": "objectives: {beta: 0.5, group_size: 3}\nquestions:\n  - {name: r, pi_ref: [0.3, 0.7], "
                                   "reward_levels: [0, 1], reward_probs: [[0.2, 0.8], [0.6, 0.4]]}\n"}))
    return out


def _sweep_random_ok(tmp) -> bool:
    with open(Path(tmp) / "g.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    pi = np.asarray(json.loads(rows[0]["reached_policy"]), float)
    return ref.reverse_ok(pi, [0.3, 0.7], ref.pg_random(pi, [0, 1], [[0.2, 0.8], [0.6, 0.4]], 3), 0.5)


# ---------------------------------------------------------------- other commands' option combinations
def other_cases() -> list[dict]:
    G = "validate/figures/derivations combinations"
    out = []
    for label, argv, expect, names in [
            ("validate --study small --beta 0.3 (beta is trl's)", ["validate", "--study", "small", "--beta", "0.3"], "flag",
             ["--beta"]),
            ("validate --study trl --prompts 5 (prompts is free's)", ["validate", "--study", "trl", "--prompts", "5"], "flag",
             ["--prompts"]),
            ("validate --study small --seed 3 --seeds 1 2", ["validate", "--study", "small", "--seed", "3", "--seeds", "1",
                                                             "2"], "flag", ["--seed"]),
            ("validate --seeds 1 1 (repeated)", ["validate", "--study", "kl", "--seeds", "1", "1"], "flag", ["--seeds"]),
            ("validate --study tree --trainable top-2", ["validate", "--study", "tree", "--trainable", "top-2"], "flag",
             ["--trainable"]),
            ("validate --study small --workers 4 (smollm2/free only)", ["validate", "--study", "small", "--workers", "4"],
             "flag", ["--workers"]),
            ("validate --quick --study kl", ["validate", "--quick", "--study", "kl"], "flag", ["--quick"]),
            ("validate --study free --prompts 100000", ["validate", "--study", "free", "--prompts", "100000"], "either", ["--prompts"]),
            ("validate --threads 10000", ["validate", "--threads", "10000"], "either", ["--threads"]),
                        ("validate --study trl --beta -0.0", ["validate", "--study", "trl", "--beta", "-0.0"], "error", ["--beta"]),
            ("validate --questions 100000 --quick", ["validate", "--quick", "--questions", "100000"], "either",
             ["--questions"]),
            ("figures --only 1 1 (repeated)", ["figures", "--only", "1", "1", "--out", "f"], "either", ["--only"]),
            ("figures --only 2.0", ["figures", "--only", "2.0", "--out", "f"], "error", ["2.0"]),
            ("figures --force --resume", ["figures", "--force", "--resume", "--out", "f"], "flag", ["--force"]),
            ("derivations --check --out a missing folder's file", ["derivations", "--check", "--out", "no/such/d.md"],
             "error", ["no/such/d.md"]),
    ]:
        out.append(_a(G, label, argv, expect, names, stub_figures=True, stub_symbolic=True))
    return out


# ---------------------------------------------------------------- the shell around the output (real processes)
def shell_cases() -> list[dict]:
    G = "shell: pipes, full disks, closed streams"
    out = []
    solve = "solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --group-size 8"
    for label, cmd, expect in [
            ("solve --json | head -c 10 (reader closes early)", f"{{cli}} {solve} --json | head -c 10 >/dev/null", "pipe"),
            ("solve | true (the reader exits at once)", f"{{cli}} {solve} | true", "pipe"),
            ("explain --json | true", "{cli} explain --framework trl t.json --json | true", "pipe"),
            ("derivations --help | true", "{cli} derivations --help | true", "pipe"),
            ("predict (3,000 prompts) | true", "{cli} predict big.csv --beta 0.5 --out o --no-plots | true", "pipe"),
            ("solve --json > /dev/full", f"{{cli}} {solve} --json > /dev/full", "error"),
            ("explain --json > /dev/full", "{cli} explain --framework trl t.json --json > /dev/full", "error"),
            ("solve with stdout closed (>&-)", f"{{cli}} {solve} >&-", "error"),
            ("solve with stderr closed, bad input (2>&-)", "{cli} solve --pi-ref 0.3 --rewards 1 --beta -1 2>&-", "quiet"),
            ("predict - with stdin closed (<&-)", "{cli} predict - --beta 0.5 --out o --no-plots <&-", "error"),
            ("sweep --out /dev/full", "{cli} sweep g.yaml --out /dev/full --no-progress", "error"),
            ("predict --out /dev/null (a device, not a folder)", "{cli} predict s.csv --beta 0.5 --out /dev/null "
                                                                       "--no-plots", "error"),
    ]:
        after = _predict_folder_ok if "predict (3,000" in label else None
        out.append(dict(group=G, label=label, shell=cmd, expect=expect, names=[], after=after,
                        files={"t.json": '{"beta": 0.1, "num_generations": 4}', "s.csv": SAMPLES,
                               "g.yaml": "objectives: {beta: 0.5}\nquestions:\n  - {name: q, pi_ref: [0.3, 0.7], "
                                         "rewards: [1, 0]}\n",
                               "big.csv": "prompt_id,n,correct\n" + "".join(f"p{i},10,{i % 11}\n" for i in range(3000))}))
    return out


def _predict_folder_ok(tmp) -> bool:
    """After a closed pipe, ``o`` is complete (predictions.csv with every prompt) or marked ``.incomplete``."""
    o = Path(tmp) / "o"
    if (o / ".incomplete").exists():
        return True
    pred = o / "predictions.csv"
    return pred.exists() and len(pred.read_text().splitlines()) == 3001
