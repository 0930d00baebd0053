"""Cases of the fifteenth hostile audit (issue 45), part two: the command line.

* ``explain`` on trainer configs as users write them: TRL YAML / JSON with comments, anchors and merge keys, numbers
  as text with units, lists where a scalar is meant, ``${oc.env:...}`` interpolation, unknown keys next to known ones
  (typos), keys in other cases; verl YAML with a Hydra ``defaults:`` list, ``_self_``, interpolations, run scripts of
  overrides with ``+`` / ``~`` prefixes and quoting; OpenRLHF JSON with strings for numbers and flags. Each read
  objective (``--json``) is checked field by field against what the file says;
* ``solve --json`` with random rewards (``--reward-levels`` / ``--reward-probs``), a preference matrix and ddof /
  epsilon settings, every binary row checked against Eq. 14 at the margin ``gamma`` the input implies (G = 2), RLHF
  against log pooling;
* ``predict`` on odd but valid files (one prompt, all correct, JSONL rewards, many levels, huge counts), Wilson's
  interval against its formula, and options at their limits;
* the docs' Python blocks no round ran (docs/predict.md, docs/architecture.md) and every ``grpo-theory solve`` /
  ``explain`` command written in the docs, as written;
* work at the size limits (just below: fast and right; just above: refused naming the limit);
* two processes writing one ``--out`` at once (real processes).

Tolerances: ``solve --json`` keeps ``repr`` floats: the closed forms to 1e-9 relative (the library's 1e-10 of beta
at slope >= 1/2, see part one); ``explain --json`` fields are read, not computed: exact; ``predictions.csv`` keeps 8
significant digits: 1e-7 relative (half a unit in the 8th digit is 5e-8).
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import hostile_audit_round15_ref as ref
from hostile_audit_fresh import cli_case as _cli

ROOT = Path(__file__).resolve().parent.parent
INF = math.inf


def _obj_check(want: dict, no_warning_about: str = ""):
    """``explain --json``'s objective has every field of ``want`` (numbers exactly), and no warning names
    ``no_warning_about`` as unknown."""
    def check(tmp, res):
        d = json.loads(res["out"])
        if no_warning_about:
            bad = [w for w in d["warnings"] if f"'{no_warning_about}'" in w and "unknown" in w]
            if bad:
                raise AssertionError(f"misleading warning: {bad[0][:200]}")
        o = d["objective"]
        bad = {k: (o.get(k), v) for k, v in want.items() if o.get(k) != v}
        if bad:
            raise AssertionError(f"read {bad} (got, wanted)")
        return True
    return check


def _explain(fw, name, text, expect, names=(), want=None, **kw):
    argv = ["explain", "--framework", fw, name, "--json"]
    return dict(argv=argv, expect=expect, names=list(names), files={name: text},
                **({"check": _obj_check(want)} if want else {}), **kw)


def explain_cases() -> list[dict]:
    G_ = "CLI: explain on trainer configs as users write them"
    rows = [
        # TRL
        ("TRL YAML with comments after the values", "trl", "c.yaml",
         "beta: 0.04   # KL weight\nnum_generations: 8 # G\nuse_bias_correction_kl: false\n", "ok", (),
         dict(beta=0.04, group_size=8, kl_estimator="k3")),
        ("TRL YAML with an anchor and an alias (beta: &b 0.1, ... *b)", "trl", "c.yaml",
         "beta: &b 0.1\nnum_generations: 4\nuse_bias_correction_kl: false\nextra_copy: *b\n", "either", ("extra_copy",),
         dict(beta=0.1, group_size=4)),
        ("TRL YAML with a merge key (<<: *base)", "trl", "c.yaml",
         "base: &base\n  beta: 0.2\n  num_generations: 6\n<<: *base\nuse_bias_correction_kl: false\n", "either", ("base",),
         dict(beta=0.2, group_size=6)),
        ("TRL YAML beta: '0.04 ' (text with a trailing space)", "trl", "c.yaml", "beta: '0.04 '\nnum_generations: 8\n",
         "either", ("beta",), dict(beta=0.04)),
        ("TRL YAML beta: 4e-2 (YAML 1.1 reads it as text)", "trl", "c.yaml", "beta: 4e-2\nnum_generations: 8\n",
         "either", ("beta",), dict(beta=0.04)),
        ("TRL YAML beta: 0.04kl (a unit)", "trl", "c.yaml", "beta: 0.04kl\nnum_generations: 8\n", "error", ("beta",), None),
        ("TRL YAML num_generations: 8 samples (a unit)", "trl", "c.yaml", "beta: 0.04\nnum_generations: 8 samples\n",
         "error", ("num_generations",), None),
        ("TRL YAML num_generations: [8] (a list for a scalar)", "trl", "c.yaml", "beta: 0.04\nnum_generations: [8]\n",
         "error", ("num_generations",), None),
        ("TRL YAML beta: [0.04, 0.1] (a sweep list)", "trl", "c.yaml", "beta: [0.04, 0.1]\nnum_generations: 8\n",
         "error", ("beta",), None),
        ("TRL YAML beta: ${eval:0.02*2} (an OmegaConf resolver expression)", "trl", "c.yaml",
         "beta: ${eval:0.02*2}\nnum_generations: 8\n", "error", ("beta",), None),
        ("TRL YAML kl_beta: 0.1 (a plausible alias of beta) next to num_generations", "trl", "c.yaml",
         "kl_beta: 0.1\nnum_generations: 8\n", "warn", ("kl_beta",), None),
        ("TRL YAML Beta: 0.1 (capitalised key)", "trl", "c.yaml", "Beta: 0.1\nnum_generations: 8\n", "warn", ("Beta",), None),
        ("TRL YAML num-generations: 8 (dashes, as on the command line)", "trl", "c.yaml",
         "beta: 0.1\nnum-generations: 8\n", "either", ("num-generations",), dict(group_size=8)),
        ("TRL YAML scale_rewards: 'none' (shift only)", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 8\nscale_rewards: 'none'\n", "ok", (), dict(normalization="shift")),
        ("TRL YAML scale_rewards: no (YAML 1.1 bool false)", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 8\nscale_rewards: no\n", "either", ("scale_rewards",), dict(normalization="shift")),
        ("TRL YAML scale_rewards: None (text 'None', not null)", "trl", "c.yaml",
         "beta: 0.1\nnum_generations: 8\nscale_rewards: None\n", "either", ("scale_rewards",), dict(normalization="shift")),
        ("TRL YAML with two documents (--- twice)", "trl", "c.yaml", "beta: 0.1\n---\nbeta: 0.2\n", "error", ("c.yaml",), None),
        ("TRL YAML a top-level list", "trl", "c.yaml", "- beta: 0.1\n- num_generations: 8\n", "error", ("c.yaml",), None),
        ("TRL JSON with single-quoted keys (JSON5 / Python dict style)", "trl", "c.json", "{'beta': 0.1, 'num_generations': 8}",
         "error", ("c.json",), None),
        ("TRL JSON with // comments", "trl", "c.json", '{"beta": 0.1, // KL\n "num_generations": 8}', "error", ("c.json",),
         None),
        ("TRL JSON numbers as strings {\"beta\": \"0.1\", \"num_generations\": \"8\"}", "trl", "c.json",
         '{"beta": "0.1", "num_generations": "8", "use_bias_correction_kl": false}', "either", ("beta",),
         dict(beta=0.1, group_size=8)),
        ("TRL JSON num_generations: 8.0 (a float for an integer)", "trl", "c.json",
         '{"beta": 0.1, "num_generations": 8.0}', "either", ("num_generations",), dict(group_size=8)),
        ("TRL JSON num_generations: 8.5", "trl", "c.json", '{"beta": 0.1, "num_generations": 8.5}', "error",
         ("num_generations",), None),
        ("TRL JSON num_generations: 1 (no group)", "trl", "c.json", '{"beta": 0.1, "num_generations": 1}', "error",
         ("num_generations",), None),
        ("TRL JSON beta: 1e-400 (underflows to 0: no penalty)", "trl", "c.json", '{"beta": 1e-400, "num_generations": 4}',
         "either", ("beta",), dict(beta=0.0)),
        ("TRL JSON beta: NaN (Python's json extension)", "trl", "c.json", '{"beta": NaN, "num_generations": 4}', "error",
         ("beta",), None),
        ("TRL JSON epsilon: 0.2 and delta: 1.5 (two-sided clip; stationary point unchanged)", "trl", "c.json",
         '{"beta": 0.1, "num_generations": 4, "epsilon": 0.2, "delta": 1.5, "use_bias_correction_kl": false}',
         "ok", (), dict(beta=0.1, group_size=4, kl_estimator="k3")),
        ("TRL JSON a key twice (beta 0.1 then 0.3)", "trl", "c.json", '{"beta": 0.1, "beta": 0.3, "num_generations": 4}',
         "either", ("beta",), dict(beta=0.3)),
        ("TRL YAML nested under a 'training:' section (as in a launcher file)", "trl", "c.yaml",
         "training:\n  beta: 0.1\n  num_generations: 8\n", "either", ("training",), dict(beta=0.1, group_size=8)),
        ("TRL YAML tab-indented (YAML forbids tabs)", "trl", "c.yaml", "training:\n\tbeta: 0.1\n", "error", ("c.yaml",), None),
        # verl
        ("verl YAML with a Hydra defaults list and _self_", "verl", "v.yaml",
         "defaults:\n  - ppo_trainer\n  - _self_\nactor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.02\n"
         "    kl_loss_type: k2\n  rollout:\n    n: 6\nalgorithm:\n  adv_estimator: grpo\n", "ok", (),
         dict(beta=0.02, group_size=6, kl_estimator="k2")),
        ("verl YAML kl_loss_coef: ${algorithm.kl_ctrl.kl_coef} (an interpolation)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: ${algorithm.kl_ctrl.kl_coef}\n"
         "  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n  kl_ctrl:\n    kl_coef: 0.05\n", "either", ("kl_loss_coef",),
         dict(beta=0.05)),
        ("verl YAML rollout.n: '8' (text)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n  rollout:\n    n: '8'\n"
         "algorithm:\n  adv_estimator: grpo\n", "either", ("n",), dict(group_size=8)),
        ("verl YAML rollout.n: 8x (a typo)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n  rollout:\n    n: 8x\n"
         "algorithm:\n  adv_estimator: grpo\n", "error", ("n",), None),
        ("verl YAML kl_loss_cof: 0.3 (a typo next to use_kl_loss)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_cof: 0.3\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "warn", ("kl_loss_cof",), None),
        ("verl YAML use_kl_loss: 'True' (text)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: 'True'\n    kl_loss_coef: 0.01\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "either", ("use_kl_loss",), dict(beta=0.01)),
        ("verl YAML use_kl_loss: 1 (an int for a bool)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: 1\n    kl_loss_coef: 0.01\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "either", ("use_kl_loss",), dict(beta=0.01)),
        ("verl YAML adv_estimator: reinforce_plus_plus_baseline", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: reinforce_plus_plus_baseline\n", "either", ("reinforce_plus_plus_baseline",), None),
        ("verl YAML adv_estimator: gae (PPO with a critic, not GRPO)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: false\n  rollout:\n    n: 1\nalgorithm:\n  adv_estimator: gae\n",
         "error", ("gae",), None),
        ("verl YAML kl_loss_type: k3+ (verl's straight-through k3)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n    kl_loss_type: k3+\n"
         "  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n", "either", ("k3+",), dict(kl_estimator="k3_plus")),
        ("verl YAML kl_loss_coef: ${oc.env:KL_COEF} (no default, variable unset)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: ${oc.env:KL_COEF}\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "error", ("kl_loss_coef",), None),
        ("verl YAML with verl's own defaults list (actor@actor_rollout_ref.actor: dp_actor, _self_): no 'unknown key' "
         "warning about defaults", "verl", "v.yaml",
         "defaults:\n  - actor@actor_rollout_ref.actor: dp_actor\n  - rollout@actor_rollout_ref.rollout: rollout\n  - _self_\n"
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.02\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "ok", (), dict(beta=0.02, group_size=4)),
        ("verl YAML with a hydra: section (searchpath) as in verl's recipes: no 'unknown key' warning about hydra",
         "verl", "v.yaml",
         "hydra:\n  searchpath:\n    - file://verl/trainer/config\ndefaults:\n  - ppo_trainer\n  - _self_\n"
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.02\n  rollout:\n    n: 4\n"
         "algorithm:\n  adv_estimator: grpo\n", "ok", (), dict(beta=0.02, group_size=4)),
        ("verl YAML kl_loss_type: mse (k2)", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n    kl_loss_type: mse\n"
         "  rollout:\n    n: 4\nalgorithm:\n  adv_estimator: grpo\n", "ok", (), dict(kl_estimator="k2", beta=0.01)),
        ("verl YAML actor_rollout_ref.rollout.n: 0", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.01\n  rollout:\n    n: 0\n"
         "algorithm:\n  adv_estimator: grpo\n", "error", ("n",), None),
        ("verl YAML dotted keys at the top (actor_rollout_ref.rollout.n: 4)", "verl", "v.yaml",
         "actor_rollout_ref.rollout.n: 4\nactor_rollout_ref.actor.use_kl_loss: true\nactor_rollout_ref.actor.kl_loss_coef: 0.03\n"
         "algorithm.adv_estimator: grpo\n", "either", ("actor_rollout_ref.rollout.n",), dict(group_size=4, beta=0.03)),
        ("verl run script with +/~ override prefixes", "verl", "run.sh",
         "python3 -m verl.trainer.main_ppo \\\n  algorithm.adv_estimator=grpo \\\n  +actor_rollout_ref.actor.use_kl_loss=True \\\n"
         "  actor_rollout_ref.actor.kl_loss_coef=0.004 \\\n  actor_rollout_ref.rollout.n=5 \\\n  ~trainer.logger\n", "either",
         ("~trainer.logger",), dict(beta=0.004, group_size=5)),
        ("verl run script with quoted values (n='5', kl_loss_coef=\"0.002\")", "verl", "run.sh",
         "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.actor.use_kl_loss=True "
         "actor_rollout_ref.actor.kl_loss_coef=\"0.002\" actor_rollout_ref.rollout.n='5'\n", "ok", (),
         dict(beta=0.002, group_size=5)),
        ("verl run script with $VAR values (kl_loss_coef=$KL)", "verl", "run.sh",
         "KL=0.01\npython3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.actor.use_kl_loss=True "
         "actor_rollout_ref.actor.kl_loss_coef=$KL actor_rollout_ref.rollout.n=4\n", "error", ("kl_loss_coef",), None),
        ("verl run script ending in \"$@\" (extra overrides passed through)", "verl", "run.sh",
         "python3 -m verl.trainer.main_ppo \\\n  algorithm.adv_estimator=grpo \\\n  actor_rollout_ref.actor.use_kl_loss=True \\\n"
         "  actor_rollout_ref.actor.kl_loss_coef=0.006 \\\n  actor_rollout_ref.rollout.n=3 $@\n", "either", ("$@",),
         dict(beta=0.006, group_size=3)),
        # OpenRLHF
        ("OpenRLHF JSON numbers as strings (\"n_samples_per_prompt\": \"4\")", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": "4", "init_kl_coef": "0.02"}', "either",
         ("n_samples_per_prompt",), dict(group_size=4, beta=0.02)),
        ("OpenRLHF JSON use_kl_loss: \"false\" (text)", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.02, "use_kl_loss": "false"}',
         "either", ("use_kl_loss",), dict(kl_placement="advantage")),
        ("OpenRLHF JSON kl_estimator: k3 with use_kl_loss true", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.02, "use_kl_loss": true, '
         '"kl_estimator": "k3"}', "ok", (), dict(kl_placement="loss", kl_estimator="k3", beta=0.02)),
        ("OpenRLHF JSON kl_estimator: k4 (no such estimator)", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": 0.02, "use_kl_loss": true, '
         '"kl_estimator": "k4"}', "error", ("k4",), None),
        ("OpenRLHF JSON init_kl_coef: -0.01", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": -0.01}', "error",
         ("init_kl_coef",), None),
        ("OpenRLHF JSON n_samples_per_prompt: true", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": true, "init_kl_coef": 0.01}', "error",
         ("n_samples_per_prompt",), None),
        ("OpenRLHF JSON a list of flags [\"--n_samples_per_prompt\", \"4\"] (argv as JSON)", "openrlhf", "o.json",
         '["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--init_kl_coef", "0.03"]', "either",
         ("o.json",), dict(group_size=4, beta=0.03)),
        ("OpenRLHF JSON advantage_estimator: 'group_norm ' (trailing space)", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm ", "n_samples_per_prompt": 4, "init_kl_coef": 0.01}', "error",
         ("group_norm ",), None),
        ("OpenRLHF JSON n_samples_per_promt (a typo)", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_promt": 4, "init_kl_coef": 0.01}', "warn",
         ("n_samples_per_promt",), None),
        ("OpenRLHF JSON empty object {}", "openrlhf", "o.json", "{}", "either", ("advantage_estimator",), None),
    ]
    out = []
    for label, fw, name, text, expect, names, want in rows:
        d = _explain(fw, name, text, expect, names, want)
        for key in ("defaults", "hydra"):
            if f"no 'unknown key' warning about {key}" in label:
                d.update(check=_obj_check(want, key), bad_class="misleading")
        if expect == "either" and want is None:
            d["check"] = lambda tmp, res: True
        out.append(dict(d, group=G_, label=label, wrong=[]))
    return out


# ---------------------------------------------------------------- solve --json with random rewards / preferences
def _solve_rows(want: dict, tol=1e-9):
    def check(tmp, res):
        d = json.loads(res["out"])
        for method, x in want.items():
            row = next((r for r in d["rows"] if r["method"].startswith(method)), None)
            if row is None:
                raise AssertionError(f"no row {method}")
            bad = ref.close(row["pi"][0], x, tol)
            if bad is not True:
                raise AssertionError(f"{method}: {bad}")
        return True
    return check


def solve_cases() -> list[dict]:
    G_ = "CLI: solve --json with random rewards, preferences, ddof and eps, against Eq. 14 and log pooling"
    out = []
    base = ["solve", "--pi-ref"]
    for pa, pb, p, beta in [(0.9, 0.4, 0.3, 0.5), (0.55, 0.5, 0.5, 0.01), (1.0, 0.0, 0.2, 2.0), (0.7, 0.69, 0.9, 1e-3),
                            (0.3, 0.1, 1e-6, 0.1), (0.99, 0.01, 0.6, 50.0)]:
        g = pa - pb
        argv = base + [str(p), repr(1 - p), "--reward-levels", "0", "1", "--reward-probs", repr(1 - pa), repr(pa),
                       repr(1 - pb), repr(pb), "--beta", repr(beta), "--json"]
        # RLHF: log pooling of the expected rewards pa, pb
        rl = ref.log_pool([p, 1 - p], [pa, pb], beta)[0]
        out.append(_cli(G_, f"solve Bernoulli p_a={pa} p_b={pb} pi_ref={p} beta={beta}: Eq. 14 at gamma={g:.3g}, RLHF",
                        argv, "ok", check=_solve_rows({"GRPO reverse/scale": ref.eq14(p, beta, g),
                                                       "GRPO direct/scale": ref.g2_direct(p, beta, g),
                                                       "RLHF": rl})))
    for m01, p, beta in [(0.8, 0.3, 0.5), (0.5, 0.4, 0.2), (0.999, 0.01, 0.05), (0.6, 0.5, 3.0)]:
        g = m01 - (1 - m01)
        argv = base + [str(p), repr(1 - p), "--preference", "0.5", repr(m01), repr(1 - m01), "0.5", "--beta", repr(beta),
                       "--json"]
        out.append(_cli(G_, f"solve --preference P(a>b)={m01} pi_ref={p} beta={beta}: Eq. 14 at gamma={g:.3g}",
                        argv, "ok", check=_solve_rows({"GRPO reverse/scale": ref.eq14(p, beta, g)})))
    s2 = 1 / math.sqrt(2)
    for extra, gamma, lab in [(["--std-ddof", "1"], s2, "ddof 1: gamma = 1/sqrt 2"),
                              (["--std-eps", "0.25"], 1 / 1.5, "eps 0.25: gamma = 1/(1 + 2 eps)"),
                              (["--std-ddof", "1", "--std-eps", "1e-4"], 0.5 / (s2 + 1e-4), "ddof 1 eps 1e-4 (TRL)"),
                              (["--std-eps", "1e300"], 0.5 / 1e300, "eps 1e300: gamma = 5e-301 (x ~ p)")]:
        argv = base + ["0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--json"] + extra
        out.append(_cli(G_, f"solve pi_ref=0.3 beta=0.5 {lab}", argv, "ok",
                        check=_solve_rows({"GRPO reverse/scale": ref.eq14(0.3, 0.5, gamma)}, 1e-9)))
    for lab, extra, names in [
        ("--reward-probs rows summing to 1.1", ["--reward-levels", "0", "1", "--reward-probs", "0.2", "0.9", "0.5", "0.5"],
         ["reward"]),
        ("--reward-probs with 3 numbers for 2x2", ["--reward-levels", "0", "1", "--reward-probs", "0.2", "0.8", "0.5"],
         ["reward"]),
        ("--reward-levels with a duplicate level", ["--reward-levels", "1", "1", "--reward-probs", "0.2", "0.8", "0.5", "0.5"],
         ["reward"]),
        ("--reward-levels nan", ["--reward-levels", "0", "nan", "--reward-probs", "0.2", "0.8", "0.5", "0.5"], ["nan"]),
        ("--reward-probs without --reward-levels", ["--reward-probs", "0.2", "0.8", "0.5", "0.5"], ["reward"]),
        ("--preference and --rewards together", ["--rewards", "1", "0", "--preference", "0.5", "0.8", "0.2", "0.5"],
         ["preference"]),
        ("--preference not summing to 1 across the diagonal (0.8 and 0.8)",
         ["--preference", "0.5", "0.8", "0.8", "0.5"], ["preference"]),
        ("--preference with a diagonal of 0.3", ["--preference", "0.3", "0.8", "0.2", "0.3"], ["preference"]),
        ("--preference with a 1.5", ["--preference", "0.5", "1.5", "-0.5", "0.5"], ["preference"]),
        ("--preference at G=4 (a matrix defines only G = 2)",
         ["--preference", "0.5", "0.8", "0.2", "0.5", "--group-size", "4"], ["preference"]),
    ]:
        argv = base + ["0.3", "0.7", "--beta", "0.5"] + extra
        out.append(_cli(G_, f"solve {lab}", argv, "error", names))
    return out


# ---------------------------------------------------------------- predict on odd files
def _pred_check(rows_want: dict, tol=1e-7):
    """``predictions.csv`` has, for each prompt id, the wanted columns (8 significant digits: 1e-7 relative)."""
    def check(tmp, res):
        with open(tmp / "o" / "predictions.csv", encoding="utf-8", newline="") as fh:
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


def _wilson(c, n, level=0.95):
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - level) / 2)
    p = c / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(mid - half, 0.0), min(mid + half, 1.0)


def predict_cases() -> list[dict]:
    G_ = "CLI: predict on odd but valid files, options at their limits"
    P = ["predict", "s.csv", "--out", "o", "--no-plots", "--no-progress"]
    out = []
    one = "prompt_id,n,correct\nonly,12,5\n"
    x = ref.eq14(5 / 12, 0.5)
    out.append(_cli(G_, "predict one prompt (12, 5) --beta 0.5: pred = Eq. 14, pass@1 after = pred", P + ["--beta", "0.5"],
                    "ok", files={"s.csv": one}, check=_pred_check({"only": {"pred": x, "pass@1_after": x,
                                                                            "pass@8_after": 1 - (1 - x) ** 8}})))
    lo, hi = _wilson(5, 12)
    out.append(_cli(G_, "predict --interval wilson (12, 5): p_ref_lo/hi = Wilson's score interval",
                    P + ["--beta", "0.5", "--interval", "wilson"], "ok", files={"s.csv": one},
                    check=_pred_check({"only": {"p_ref_lo": lo, "p_ref_hi": hi, "pred_lo": ref.eq14(lo, 0.5),
                                                "pred_hi": ref.eq14(hi, 0.5)}})))
    lo, hi = _wilson(5, 12, 0.8)
    out.append(_cli(G_, "predict --interval wilson --level 0.8 (12, 5)", P + ["--beta", "0.5", "--interval", "wilson",
                                                                            "--level", "0.8"], "ok", files={"s.csv": one},
                    check=_pred_check({"only": {"p_ref_lo": lo, "p_ref_hi": hi}})))
    lo, hi = ref.jeffreys(5, 12, 0.999)
    out.append(_cli(G_, "predict --level 0.999 (12, 5): Jeffreys", P + ["--beta", "0.5", "--level", "0.999"], "ok",
                    files={"s.csv": one}, check=_pred_check({"only": {"p_ref_lo": lo, "p_ref_hi": hi}})))
    allc = "prompt_id,n,correct\na,9,9\nb,4,4\n"
    out.append(_cli(G_, "predict all prompts all correct: pred = 1", P + ["--beta", "0.5"], "ok", files={"s.csv": allc},
                    check=_pred_check({"a": {"pred": 1.0, "p_ref": 1.0}, "b": {"pred": 1.0}})))
    jl = "\n".join(json.dumps({"prompt_id": "q", "reward": r}) for r in [1, 0, 0, 1, 1, 0, 0, 0]) + "\n"
    out.append(_cli(G_, "predict JSONL reward rows (3 of 8 correct) -G 4 --beta 0.3: pred = the G = 4 rest",
                    ["predict", "s.jsonl", "--out", "o", "--no-plots", "--no-progress", "--beta", "0.3", "--group-size", "4"],
                    "ok", files={"s.jsonl": jl}, check=_pred_check({"q": {"pred": ref.binary_rest(3 / 8, 0.3, 4)}})))
    big = "prompt_id,n,correct\nh,1000000000000,300000000000\n"
    out.append(_cli(G_, "predict n = 10^12 (300,000,000,000 correct) --beta 0.5 --group-size inf: Eq. 15",
                    P + ["--beta", "0.5", "--group-size", "inf"], "ok", files={"s.csv": big},
                    check=_pred_check({"h": {"pred": ref.eq15(0.3, 0.5), "p_ref": 0.3}})))
    tie = "prompt_id,n,correct\na,10,3\nb,10,3\nc,20,6\n"
    out.append(_cli(G_, "predict three prompts with the same p_ref (ties): equal preds", P + ["--beta", "0.5"], "ok",
                    files={"s.csv": tie}, check=_pred_check({k: {"pred": ref.eq14(0.3, 0.5)} for k in "abc"})))
    x2 = ref.shift_direct(0.3, 0.5, 2)
    out.append(_cli(G_, "predict --normalization shift --penalty direct (G=2): RLHF at 2 beta",
                    P + ["--beta", "0.5", "--normalization", "shift", "--penalty", "direct"], "ok", files={"s.csv": tie},
                    check=_pred_check({"a": {"pred": x2}})))
    out.append(_cli(G_, "predict --kl-estimator k2 --kl-placement loss: the G=2 direct form",
                    P + ["--beta", "0.5", "--kl-estimator", "k2", "--kl-placement", "loss"], "ok", files={"s.csv": tie},
                    check=_pred_check({"a": {"pred": ref.g2_direct(0.3, 0.5)}})))
    out.append(_cli(G_, "predict --kl-estimator k1 --kl-placement advantage: the G=2 direct form",
                    P + ["--beta", "0.5", "--kl-estimator", "k1", "--kl-placement", "advantage"], "ok", files={"s.csv": tie},
                    check=_pred_check({"a": {"pred": ref.g2_direct(0.3, 0.5)}})))
    out.append(_cli(G_, "predict --kl-estimator k3 --kl-value-clamp 1e300 (never binds): Eq. 14",
                    P + ["--beta", "0.5", "--kl-estimator", "k3", "--kl-value-clamp", "1e300"], "ok", files={"s.csv": tie},
                    check=_pred_check({"a": {"pred": ref.eq14(0.3, 0.5)}})))
    out.append(_cli(G_, "predict --std-ddof 1 --std-eps 0 (G=2): Eq. 14 at gamma = 1/sqrt 2",
                    P + ["--beta", "0.5", "--std-ddof", "1"], "ok", files={"s.csv": tie},
                    check=_pred_check({"a": {"pred": ref.eq14(0.3, 0.5, 1 / math.sqrt(2))}})))
    out.append(_cli(G_, "predict --k 1 12 on (12, 5): pass@12_before = 1",
                    P + ["--beta", "0.5", "--k", "1", "12"], "ok", files={"s.csv": one},
                    check=_pred_check({"only": {"pass@12_before": 1.0, "pass@1_before": 5 / 12}})))
    out.append(_cli(G_, "predict --k 7 on (12, 5): pass@7_before = 1 - C(7,7)/C(12,7)",
                    P + ["--beta", "0.5", "--k", "7"], "ok", files={"s.csv": one},
                    check=_pred_check({"only": {"pass@7_before": ref.pass_at_k(12, 5, 7)}})))
    many = "prompt_id," + ",".join(f"count_{i / 10}" for i in range(11)) + "\nm," + ",".join(str(i + 1) for i in range(11)) + "\n"
    out.append(_cli(G_, "predict 11 graded levels count_0.0 .. count_1.0 --beta 0.5: runs, one row",
                    P + ["--beta", "0.5"], "ok", files={"s.csv": many},
                    check=lambda tmp, res: (tmp / "o" / "predictions.csv").exists()))
    out.append(_cli(G_, "predict --kl-placement reward without an estimator: a default estimator named in the summary, or "
                        "refused naming kl", P + ["--beta", "0.5", "--kl-placement", "reward"], "either", ["kl"],
                    files={"s.csv": one}, check=lambda tmp, res: "reward" in json.loads((tmp / "o" / "summary.json")
                                                                                      .read_text())["objective"]))
    out.append(_cli(G_, "predict --slow-tol 0 (the strictest) with --clock 0.1 --steps 10: runs",
                    P + ["--beta", "0.5", "--clock", "0.1", "--steps", "10", "--slow-tol", "0"], "ok", files={"s.csv": one},
                    check=_pred_check({"only": {"pred": ref.eq14(5 / 12, 0.5)}})))
    out.append(_cli(G_, "predict a counts file with n = 0 for one prompt: that prompt left out (said), or refused naming n",
                    P + ["--beta", "0.5"], "either", ["n"], files={"s.csv": "prompt_id,n,correct\na,0,0\nb,4,1\n"},
                    check=lambda tmp, res: "a" not in (tmp / "o" / "predictions.csv").read_text().split()[1].split(",")[0]
                    and _pred_check({"b": {"pred": ref.eq14(0.25, 0.5)}})(tmp, res)))
    out.append(_cli(G_, "predict a counts file with n written 1e3 (a whole number as a float): read as 1000, or refused",
                    P + ["--beta", "0.5"], "either", ["1e3"], files={"s.csv": "prompt_id,n,correct\na,1e3,3\n"},
                    check=_pred_check({"a": {"pred": ref.eq14(0.003, 0.5), "n": 1000}})))
    for lab, extra, files, names in [
        ("--level 0 (no interval)", ["--level", "0"], {"s.csv": one}, ["level"]),
        ("--level 1.5", ["--level", "1.5"], {"s.csv": one}, ["level"]),
        ("--k 0", ["--k", "0"], {"s.csv": one}, ["k"]),
        ("--k 2.5", ["--k", "2.5"], {"s.csv": one}, ["k"]),
        ("--kl-value-clamp 0", ["--kl-estimator", "k3", "--kl-value-clamp", "0"], {"s.csv": one}, ["kl-value-clamp"]),
        ("--kl-log-ratio-clamp nan", ["--kl-estimator", "k3", "--kl-log-ratio-clamp", "nan"], {"s.csv": one},
         ["kl-log-ratio-clamp"]),
        ("--sample-temperature 0", ["--sample-temperature", "0"], {"s.csv": one}, ["sample-temperature"]),
        ("--sample-temperature -1", ["--sample-temperature", "-1"], {"s.csv": one}, ["sample-temperature"]),
        ("--id-column '' (empty)", ["--id-column", ""], {"s.csv": one}, ["id-column"]),
        ("--id-column n (a count column as the id)", ["--id-column", "n"], {"s.csv": one}, ["n"]),
        ("--steps -5 with --clock", ["--clock", "0.1", "--steps", "-5"], {"s.csv": one}, ["steps"]),
        ("--clock inf", ["--clock", "inf", "--steps", "10"], {"s.csv": one}, ["clock"]),
        ("--fit 10 1.5 (a mean reward above 1 for 0/1 rewards)", ["--fit", "10", "1.5"], {"s.csv": one}, ["fit"]),
        ("--fit 0 0.6 (step 0)", ["--fit", "0", "0.6"], {"s.csv": one}, ["fit"]),
        ("--levels 0 1 with a count_0.5 column", ["--levels", "0", "1"],
         {"s.csv": "prompt_id,count_0,count_0.5,count_1\na,1,2,3\n"}, ["0.5"]),
        ("a counts file with a negative correct", [], {"s.csv": "prompt_id,n,correct\na,4,-1\n"}, ["-1"]),
    ]:
        files = {k: v for k, v in files.items()}
        argv = P + (["--beta", "0.5"] if "--fit" not in extra else ["--beta", "0.5"]) + extra
        out.append(_cli(G_, f"predict {lab}", argv, "error", names, files=files))
    return out


# ---------------------------------------------------------------- the docs' blocks and commands
def _blocks(path, lang):
    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / path).read_text(encoding="utf-8"), flags=re.S)


def docs_cases() -> list[dict]:
    G_ = "CLI: docs' Python blocks no round ran, and their grpo-theory commands as written"
    out = []
    # docs/predict.md's blocks, with what they name set up first: ``df`` (the user's DataFrame, with the columns its
    # comment names: prompt_id, reward), the example file under docs/examples, base.csv and after.csv
    base = "prompt_id,n,correct\n" + "".join(f"p{i},16,{(3 * i) % 17}\n" for i in range(12))
    after = "prompt_id,n,correct\n" + "".join(f"p{i},16,{min(16, (3 * i) % 17 + 4)}\n" for i in range(12))
    blocks = _blocks("docs/predict.md", "python")
    for i, b in enumerate(blocks):
        def run(b=b):
            import matplotlib
            import pandas as pd
            matplotlib.use("Agg")
            df = pd.DataFrame({"prompt_id": ["a"] * 4 + ["b"] * 4, "reward": [1, 0, 0, 1, 1, 1, 1, 0]})
            ns: dict = {"__name__": "__doc_example__", "df": df}
            exec(compile(b, "docs/predict.md block", "exec"), ns)          # noqa: S102 - the docs' own code
            return True
        out.append(dict(group=G_, label=f"docs/predict.md Python block {i + 1} of {len(blocks)} as written", call=run,
                        expect="ok", names=[], wrong=[], check=lambda tmp, res: res["value"] is True,
                        files={"docs/examples/samples_small.csv": (ROOT / "docs/examples/samples_small.csv").read_text(),
                               "base.csv": base, "after.csv": after}))
    # docs/predict.md section 2's two commands as written (docs/examples copied in): the second's objective is given
    # in full, so each prompt's pred is checked against the reference's rest at G = 8, ddof 1, eps 1e-4
    ex = {f"docs/examples/{n}": (ROOT / "docs/examples" / n).read_text() for n in ("samples_small.csv", "trl_config.json")}

    def g8_rows(tmp, res):
        with open(ROOT / "docs/examples/samples_small.csv", encoding="utf-8") as fh:
            raw = list(csv.DictReader(fh))
        per: dict = {}
        for r in raw:
            k, c_ = per.get(r["prompt_id"], (0, 0))
            per[r["prompt_id"]] = (k + 1, c_ + (float(r["reward"]) == 1.0))
        want = {pid: {"pred": ref.binary_rest(c_ / n, 0.04, 8, ddof=1, eps=1e-4)} for pid, (n, c_) in per.items()
                if 0 < c_ < n}
        return _pred_check(want, 1e-6)(tmp, res) if want else "no interior prompt"
    out.append(_cli(G_, "docs/predict.md: `grpo-theory predict docs/examples/samples_small.csv --framework trl "
                        "docs/examples/trl_config.json --out runs/predict` as written",
                    ["predict", "docs/examples/samples_small.csv", "--framework", "trl", "docs/examples/trl_config.json",
                     "--out", "runs/predict"], "ok", files=ex,
                    check=lambda tmp, res: (tmp / "runs/predict/predictions.csv").exists()))
    out.append(_cli(G_, "docs/predict.md: `grpo-theory predict docs/examples/samples_small.csv --beta 0.04 --group-size 8 "
                        "--std-ddof 1 --std-eps 1e-4 --out runs/predict` as written: each pred = the reference's rest",
                    ["predict", "docs/examples/samples_small.csv", "--beta", "0.04", "--group-size", "8", "--std-ddof", "1",
                     "--std-eps", "1e-4", "--out", "o"], "ok", files=ex, check=g8_rows))
    # the README example's printed numbers (its comments) against the reference, and with changed values
    from grpo_theory import Objective, Question, closed_form, stationary_points, stationary_policy

    out.append(dict(group=G_, label="README example: stationary_policy(0.3, beta 0.5, G 8) prints 0.8536 (the reference's rest)",
                    call=lambda: stationary_policy(Question(pi_ref=[0.3, 0.7], rewards=[1.0, 0.0]),
                                                   Objective(beta=0.5, group_size=8)),
                    expect="ok", names=[], wrong=[],
                    check=lambda tmp, res: round(float(res["value"].pi[0]), 4) == 0.8536
                    and ref.close(float(res["value"].pi[0]), ref.binary_rest(0.3, 0.5, 8), 1e-7) is True))
    out.append(dict(group=G_, label="README example: closed_form.binary_pairwise(0.3, beta=0.5) prints 0.7110 (Eq. 14)",
                    call=lambda: closed_form.binary_pairwise(0.3, beta=0.5), expect="ok", names=[], wrong=[],
                    check=lambda tmp, res: round(float(res["value"]), 4) == 0.7110
                    and ref.close(float(res["value"]), ref.eq14(0.3, 0.5), 1e-12) is True))
    import hostile_audit_round15_api as api

    for p, beta, prose in [(0.1, 1.0, [0.453, 0.967]), (0.2, 1.5, None), (0.05, 0.8, None)]:
        def chk(tmp, res, p=p, beta=beta, prose=prose):
            got = sorted(float(pt.pi[0]) for pt in res["value"] if not pt.boundary)
            want = api._h_roots(p, beta)
            if prose and [round(g, 3) for g in got] != prose:
                raise AssertionError(f"prose says {prose}, got {got}")
            if len(got) != len(want) or ref.close(got, want, 1e-7) is not True:
                raise AssertionError(f"interior points {got}, roots of h {want}")
            if not any(pt.boundary and float(pt.pi[0]) == 1.0 for pt in res["value"]):
                raise AssertionError("no limit point at the vertex a (SPEC: h > 0 near 1 ... the flow runs to a)")
            return True
        out.append(dict(group=G_, label=f"README example loop with pi_ref(a)={p}, beta={beta}: the vertex, and the roots of h"
                        + (" (the prose's 0.453, 0.967)" if prose else " (changed values)"),
                        call=lambda p=p, beta=beta: list(stationary_points(Question([p, 1 - p], rewards=[1, 0]),
                                                                           Objective(beta=beta, group_size=math.inf,
                                                                                     penalty="direct"))),
                        expect="ok", names=[], wrong=[], check=chk))
    # the README's claim for Eq. 14 at beta = gamma: x = sqrt(p)
    for p in (0.04, 0.5, 0.81):
        out.append(_cli(G_, f"solve --pi-ref {p} {1 - p} --rewards 1 0 --beta 1: x = sqrt(p) (SPEC section 4)",
                        ["solve", "--pi-ref", str(p), repr(1 - p), "--rewards", "1", "0", "--beta", "1", "--json"], "ok",
                        check=_solve_rows({"GRPO reverse/scale": math.sqrt(p)})))
    return out


# ---------------------------------------------------------------- work sizes at the limits
def size_cases() -> list[dict]:
    G_ = "CLI: work at the size limits"
    out = []
    x = ref.binary_rest(0.3, 0.5, 4096)
    out.append(_cli(G_, "solve binary -G 4096 (large but exact binomial form): the rest to 1e-7",
                    ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "4096",
                     "--json"], "ok", check=_solve_rows({"GRPO reverse/scale": x}, 1e-7), hang_s=60))
    out.append(_cli(G_, "solve binary -G 10**7: solved (O(G) form or large-G path) within 60 s, or refused naming G",
                    ["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "10000000",
                     "--json"], "either", ["group"], check=_solve_rows({"GRPO reverse/scale": ref.eq15(0.3, 0.5)}, 1e-3),
                    hang_s=60))
    out.append(_cli(G_, "solve 3 outputs -G 300 (the exact sum's size grows as G^2)",
                    ["solve", "--pi-ref", "0.2", "0.3", "0.5", "--rewards", "1", "0.5", "0", "--beta", "0.5", "--group-size",
                     "300", "--json"], "either", ["group"], check=lambda tmp, res: bool(json.loads(res["out"])["rows"]),
                    hang_s=60))
    out.append(_cli(G_, "solve 12 outputs with 12 distinct rewards -G 12 (a large count-vector sum)",
                    ["solve", "--pi-ref"] + [repr(1 / 12)] * 12 + ["--rewards"] + [str(i) for i in range(12)]
                    + ["--beta", "0.5", "--group-size", "12", "--json"], "either", ["group"],
                    check=lambda tmp, res: bool(json.loads(res["out"])["rows"]), hang_s=60))
    out.append(_cli(G_, "solve 2000 outputs (two reward levels) -G 4",
                    ["solve", "--pi-ref"] + [repr(1 / 2000)] * 2000 + ["--rewards"] + ["1", "0"] * 1000
                    + ["--beta", "0.5", "--group-size", "4", "--json"], "ok",
                    check=lambda tmp, res: ref.close(sum(json.loads(res["out"])["rows"][0]["pi"][0::2]),
                                                     ref.binary_rest(0.5, 0.5, 4), 1e-7), hang_s=60))
    rows = "prompt_id,n,correct\n" + "".join(f"p{i},{10 + i % 7},{i % 5}\n" for i in range(50000))
    out.append(_cli(G_, "predict 50,000 prompts --no-plots: finishes within 60 s",
                    ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"], "ok",
                    files={"s.csv": rows}, check=lambda tmp, res: sum(1 for _ in open(tmp / "o" / "predictions.csv")) == 50001,
                    hang_s=60))
    out.append(_cli(G_, "predict --steps with 10**6 steps listed?  no: --steps 1e15 (a huge step count) with --clock 1e-3",
                    ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress", "--clock", "1e-3",
                     "--steps", "1e15"], "either", ["steps"], files={"s.csv": "prompt_id,n,correct\na,10,3\n"},
                    check=lambda tmp, res: (tmp / "o" / "predictions.csv").exists(), hang_s=60))
    out.append(_cli(G_, "predict --k with 5000 values",
                    ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress", "--k"]
                    + [str(i) for i in range(1, 5001)], "either", ["k"], files={"s.csv": "prompt_id,n,correct\na,10,3\n"},
                    check=lambda tmp, res: (tmp / "o" / "predictions.csv").exists(), hang_s=60))
    out.append(_cli(G_, "predict --tradeoff-betas with 2000 betas",
                    ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress", "--tradeoff-betas"]
                    + [repr(0.01 * (i + 1)) for i in range(2000)], "either", ["tradeoff"],
                    files={"s.csv": "prompt_id,n,correct\na,10,3\n"},
                    check=lambda tmp, res: (tmp / "o" / "predictions.csv").exists(), hang_s=60))
    g = "objectives: {beta: [0.5], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.001}\n"
    out.append(_cli(G_, "sweep simplex step 0.001 on 2 rewards (1001 points, G=2): every row Eq. 14",
                    ["sweep", "g.yaml", "--workers", "1", "--no-progress"], "either", ["step"], files={"g.yaml": g},
                    check=_sweep_eq14(0.5), hang_s=60))
    return out


def _sweep_eq14(beta, min_rows=990):
    """Every interior row of ``g.csv``: no duplicate key, ``pi(a)`` = Eq. 14 at the key's ``p`` and ``beta`` (the key's
    own ``beta=`` where it names one), at least ``min_rows`` of them."""
    def check(tmp, res):
        with open(tmp / "g.csv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        n = 0
        for r in rows:
            name = r["key"].split("|")[0]
            if not name.startswith("pi="):
                continue
            p = float(name[3:].split(",")[0])
            if not 0 < p < 1:
                continue
            m = re.search(r"beta=([^,|]+)", r["key"])
            b = float(m.group(1)) if m else beta
            got = json.loads(r["reached_policy"])[0]
            bad = ref.close(got, ref.eq14(p, b), 1e-9)
            if bad is not True:
                raise AssertionError(f"{r['key']}: {bad}")
            n += 1
        keys = [r["key"] for r in rows]
        if len(keys) != len(set(keys)):
            raise AssertionError(f"{len(keys) - len(set(keys))} duplicate rows")
        if n < min_rows:
            raise AssertionError(f"only {n} interior rows")
        return True
    return check


# ---------------------------------------------------------------- two processes on one --out (real processes)
def _sh(group, label, shell, expect="ok", names=(), **kw):
    return dict(group=group, label=label, shell=shell, expect=expect, names=list(names), **kw)


def concurrency_cases() -> list[dict]:
    G_ = "CLI: two processes on one --out"
    g = "objectives: {beta: [0.3, 0.5, 0.9], group_size: 2}\nsimplex: {rewards: [1, 0], step: 0.01}\n"
    s = "prompt_id,n,correct\n" + "".join(f"p{i},{10 + i % 7},{i % 5}\n" for i in range(300))

    def sweep_after(tmp, out, err):
        # 99 interior lattice points x 3 betas, each row Eq. 14 at its key
        return _sweep_eq14(0.5, 297)(tmp, None)

    def predict_after(tmp, out, err):
        o = tmp / "o"
        if (o / ".incomplete").exists():
            return ".incomplete left"
        with open(o / "predictions.csv", encoding="utf-8") as fh:
            n = sum(1 for _ in fh)
        return "" if n == 301 else f"{n} lines in predictions.csv"

    out = [
        _sh(G_, "two `sweep g.yaml` at once on the same grid and --out: one complete file, no duplicate rows",
            "{cli} sweep g.yaml --workers 1 --no-progress & {cli} sweep g.yaml --workers 1 --no-progress; wait",
            "either", ["g.csv"], files={"g.yaml": g}, after=sweep_after),
        _sh(G_, "two `predict --out o` at once: one complete folder, or the second refused naming o",
            "{cli} predict s.csv --beta 0.5 --out o --no-plots --no-progress & "
            "{cli} predict s.csv --beta 0.5 --out o --no-plots --no-progress; wait", "either", ["o"], files={"s.csv": s},
            after=predict_after),
        _sh(G_, "`predict --out o` with two different betas at once: the folder holds one run's files, not a mix",
            "{cli} predict s.csv --beta 0.5 --out o --no-plots --no-progress & "
            "{cli} predict s.csv --beta 2.0 --out o --no-plots --no-progress; wait", "either", ["o"], files={"s.csv": s},
            after=lambda tmp, out, err: _one_beta(tmp)),
        _sh(G_, "`sweep` twice in sequence (the second resumes: nothing new, same rows)",
            "{cli} sweep g.yaml --workers 1 --no-progress && {cli} sweep g.yaml --workers 1 --no-progress",
            "ok", files={"g.yaml": g}, after=sweep_after),
    ]
    return out


def _one_beta(tmp):
    d = json.loads((tmp / "o" / "summary.json").read_text())
    with open(tmp / "o" / "predictions.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    beta = 0.5 if "beta=0.5" in d["objective"] else 2.0
    r = rows[0]
    p = float(r["p_ref"])
    if 0 < p < 1 and ref.close(float(r["pred"]), ref.eq14(p, beta), 1e-7) is not True:
        return f"summary says beta={beta} but the table's pred {r['pred']} is not Eq. 14 at it"
    return ""


def explain_policy_cases() -> list[dict]:
    """``explain CONFIG --pi-ref --rewards --json``: the stationary policy it prints for the config's objective,
    against Eq. 14 at the margin the config's advantage implies (G = 2) or the reference's rest."""
    G_ = "CLI: explain's stationary policy for a config, against the reference"
    s2 = 1 / math.sqrt(2)
    rows = [
        ("TRL beta 0.04, G=2, bias correction off (ddof 1, eps 1e-4): Eq. 14 at gamma = (1/2)/(1/sqrt 2 + 1e-4)", "trl",
         "c.yaml", "beta: 0.04\nnum_generations: 2\nuse_bias_correction_kl: false\n", 0.3, ref.eq14(0.3, 0.04, 0.5 / (s2 + 1e-4))),
        ("TRL beta 0.5, G=2, bias correction on: the G=2 direct form at gamma = (1/2)/(1/sqrt 2 + 1e-4)", "trl", "c.yaml",
         "beta: 0.5\nnum_generations: 2\nuse_bias_correction_kl: true\n", 0.3, ref.g2_direct(0.3, 0.5, 0.5 / (s2 + 1e-4))),
        ("TRL beta 0.2, G=2, scale_rewards none, bias correction off: shift gives gamma = 1/2", "trl", "c.yaml",
         "beta: 0.2\nnum_generations: 2\nscale_rewards: none\nuse_bias_correction_kl: false\n", 0.6, ref.eq14(0.6, 0.2, 0.5)),
        ("TRL beta 0.3, G=4, scale_rewards none, bias correction on: RLHF at beta G/(G-1)", "trl", "c.yaml",
         "beta: 0.3\nnum_generations: 4\nscale_rewards: none\nuse_bias_correction_kl: true\n", 0.2,
         ref.shift_direct(0.2, 0.3, 4)),
        ("verl kl_loss_coef 0.1, n=2, k2 in the loss (ddof 1, eps 1e-6): direct at gamma = (1/2)/(1/sqrt 2 + 1e-6)", "verl",
         "v.yaml", "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.1\n    kl_loss_type: k2\n"
         "  rollout:\n    n: 2\nalgorithm:\n  adv_estimator: grpo\n", 0.3, ref.g2_direct(0.3, 0.1, 0.5 / (s2 + 1e-6))),
        ("verl n=2, norm_adv_by_std_in_grpo false, k3 kl 0.25: shift, gamma = 1/2", "verl", "v.yaml",
         "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: 0.25\n    kl_loss_type: k3\n"
         "  rollout:\n    n: 2\nalgorithm:\n  adv_estimator: grpo\n  norm_adv_by_std_in_grpo: false\n", 0.4,
         ref.eq14(0.4, 0.25, 0.5)),
        ("OpenRLHF group_norm n=2, kl in the loss k2 0.05 (ddof 1, eps 1e-9): direct", "openrlhf", "o.json",
         '{"advantage_estimator": "group_norm", "n_samples_per_prompt": 2, "init_kl_coef": 0.05, "use_kl_loss": true, '
         '"kl_estimator": "k2"}', 0.3, ref.g2_direct(0.3, 0.05, 0.5 / (s2 + 1e-9))),
        ("OpenRLHF rloo n=4, kl in the loss k3 0.5: Eq. 14 at gamma = 1 (RLOO's gap)", "openrlhf", "o.json",
         '{"advantage_estimator": "rloo", "n_samples_per_prompt": 4, "init_kl_coef": 0.5, "use_kl_loss": true, '
         '"kl_estimator": "k3"}', 0.3, ref.eq14(0.3, 0.5, 1.0)),
    ]
    out = []
    for label, fw, name, text, p, x in rows:
        def check(tmp, res, x=x):
            d = json.loads(res["out"])
            got = d["question"]["stationary_policy"][0]
            bad = ref.close(got, x, 1e-8)
            if bad is not True:
                raise AssertionError(bad)
            return True
        out.append(_cli(G_, label, ["explain", "--framework", fw, name, "--pi-ref", repr(p), repr(1 - p), "--rewards", "1", "0",
                                    "--json"], "ok", files={name: text}, check=check))
    return out


def trl_cmdline_cases() -> list[dict]:
    """``trl grpo ...`` command lines as users paste them."""
    G_ = "CLI: explain on trl grpo command lines as users paste them"
    base = "trl grpo --model_name_or_path Qwen/Qwen2.5-0.5B --dataset_name trl-lib/tldr "
    rows = [
        ("--beta=0.07 (the = form)", base + "--beta=0.07 --num_generations=6 --use_bias_correction_kl False\n", "either",
         ("beta",), dict(beta=0.07, group_size=6)),
        ("accelerate launch prefix", "accelerate launch --num_processes 8 -m trl.cli grpo --beta 0.02 --num_generations 4\n",
         "either", ("accelerate",), dict(beta=0.02, group_size=4)),
        ("a flag given twice (--beta 0.1 ... --beta 0.3)", base + "--beta 0.1 --num_generations 4 --beta 0.3\n", "either",
         ("beta",), dict(beta=0.3)),
        ("--num_generations without its value", base + "--beta 0.1 --num_generations\n", "error", ("num_generations",), None),
        ("a line continuation followed by a comment line", base + "\\\n  --beta 0.05 \\\n  # the group\n  --num_generations 8\n",
         "either", ("num_generations",), dict(beta=0.05)),
        ("--beta '0.06' (quoted)", base + "--beta '0.06' --num_generations 4\n", "ok", (), dict(beta=0.06, group_size=4)),
        ("--num_generations 4k (a unit)", base + "--beta 0.06 --num_generations 4k\n", "error", ("num_generations",), None),
        ("--beta ${BETA} (an unexpanded shell variable)", base + "--beta ${BETA} --num_generations 4\n", "error", ("beta",), None),
        ("--scale_rewards False (the pre-1.0 bool form)", base + "--beta 0.1 --num_generations 4 --scale_rewards False\n",
         "either", ("scale_rewards",), dict(normalization="shift")),
        ("--loss_type dr_grpo", base + "--beta 0.1 --num_generations 4 --loss_type dr_grpo\n", "either", ("loss_type",),
         dict(beta=0.1, group_size=4)),
    ]
    out = []
    for label, text, expect, names, want in rows:
        d = _explain("trl", "run.sh", text, expect, names, want)
        if expect == "either" and want is None:
            d["check"] = lambda tmp, res: True
        out.append(dict(d, group=G_, label=f"trl grpo command line: {label}", wrong=[]))
    return out


def sweep_kl_cases() -> list[dict]:
    """``sweep`` grids whose objectives set the trainer KL fields: every row against its closed form."""
    G_ = "CLI: sweep grids over KL estimators and placements, each row against its closed form"
    out = []
    rows = [
        ("k2 in the loss, G=2: the direct form", "kl_estimator: k2", lambda p, b: ref.g2_direct(p, b)),
        ("k3 in the loss, G=2: Eq. 14", "kl_estimator: k3", lambda p, b: ref.eq14(p, b)),
        ("k1 in the advantage, G=2: the direct form", "kl_estimator: k1, kl_placement: advantage", lambda p, b: ref.g2_direct(p, b)),
        ("k3_ratio, G=2, std_ddof 1: direct at gamma = 1/sqrt 2", "kl_estimator: k3_ratio, std_ddof: 1",
         lambda p, b: ref.g2_direct(p, b, 1 / math.sqrt(2))),
        ("shift + direct, G=8: RLHF at 8 beta / 7", "penalty: direct, normalization: shift, group_size: 8",
         lambda p, b: ref.shift_direct(p, b, 8)),
        ("rloo, G=6, reverse: Eq. 14 at gamma = 1", "advantage: rloo, group_size: 6", lambda p, b: ref.eq14(p, b)),
    ]
    for label, fields, fn in rows:
        g = ("objectives: {beta: [0.2, 1.5], " + (fields if "group_size" in fields else fields + ", group_size: 2")
             + "}\nsimplex: {rewards: [1, 0], step: 0.05}\n")

        def check(tmp, res, fn=fn):
            with open(tmp / "g.csv", encoding="utf-8", newline="") as fh:
                rows_ = list(csv.DictReader(fh))
            n = 0
            for r in rows_:
                p = float(r["key"].split("|")[0][3:].split(",")[0])
                b = float(re.search(r"beta=([^,|]+)", r["key"]).group(1))
                bad = ref.close(json.loads(r["reached_policy"])[0], fn(p, b), 1e-9)
                if bad is not True:
                    raise AssertionError(f"{r['key']}: {bad}")
                n += 1
            if n != 38:
                raise AssertionError(f"{n} rows, expected 19 interior points x 2 betas")
            return True
        out.append(_cli(G_, f"sweep {label}", ["sweep", "g.yaml", "--workers", "1", "--no-progress"], "ok",
                        files={"g.yaml": g}, check=check))
    return out


def all_cli_cases() -> list[dict]:
    return (explain_cases() + explain_policy_cases() + trl_cmdline_cases() + sweep_kl_cases() + solve_cases()
            + predict_cases() + docs_cases() + size_cases() + concurrency_cases())
