"""The hostile inputs of the second audit, each run as the audit ran it.

Expected outcomes come from the audit's statement (a traceback must become one ``grpo-theory: error:`` line,
exit 2, naming the offending value; a hang must be refused up front with the count) and, where a number is
computed, from an independent calculation: Eq. 14's root in 800-digit mpmath for tiny ``beta`` and huge
rewards, the binomial sum by ``math.comb`` for ``binary_preference``.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question, closed_form, stationary_policy

from _cli_run import refused, run

mp = pytest.importorskip("mpmath")


def eq14_one_minus_x(p: str, b: float, gamma: str = "1") -> float:
    """``1 - x`` for Eq. 14's root ``beta (x - p) = gamma x (1 - x)``, in 800-digit arithmetic."""
    with mp.workdps(800):
        B = mp.mpf(b) / mp.mpf(gamma)
        P = mp.mpf(p)
        x = (1 - B + mp.sqrt((1 - B) ** 2 + 4 * B * P)) / 2
        return float(1 - x)


# ----------------------------------------------------------------------------- tracebacks -> solved or refused

@pytest.mark.parametrize("beta", [1e-295, 1e-300, 1e-305, 1e-310])
@pytest.mark.parametrize("norm, gamma", [("scale", "1"), ("shift", "0.5")])
def test_tiny_beta_is_solved_to_machine_precision(beta, norm, gamma):
    """G = 2, rewards (1, 0): Eq. 14 with gamma = 1 (scale) or 1/2 (shift: A = +-1/2); 1 - x ~ beta (1-p)/gamma."""
    pt = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=beta, normalization=norm))
    want = eq14_one_minus_x("0.3", beta, gamma)
    assert pt.converged
    assert abs(pt.pi[1] - want) <= 1e-12 * want + 5e-324, (pt.pi[1], want)


@pytest.mark.parametrize("beta", [1e-320, 5e-324])
def test_subnormal_beta_is_solved_to_the_subnormal_spacing(beta):
    pt = stationary_policy(Question([0.3, 0.7], rewards=[1, 0]), Objective(beta=beta))
    want = eq14_one_minus_x("0.3", beta)
    assert abs(pt.pi[1] - want) <= 5e-324 + 1e-3 * want        # the spacing of subnormals is 4.9e-324


def test_huge_rewards_with_shift_normalisation_equal_tiny_beta():
    """Shift: P_G scales with the rewards, so rewards (1e300, 0) at beta 1 is rewards (1, 0) at beta 1e-300."""
    pt = stationary_policy(Question([0.3, 0.7], rewards=[1e300, 0]), Objective(beta=1.0, normalization="shift"))
    want = eq14_one_minus_x("0.3", 1e-300, "0.5")
    assert abs(pt.pi[1] - want) <= 1e-12 * want


def test_huge_rewards_with_scale_normalisation_are_scale_free():
    pt = stationary_policy(Question([0.3, 0.7], rewards=[1e300, 0]), Objective(beta=1.0))
    assert abs(pt.pi[0] - math.sqrt(0.3)) < 1e-12          # Eq. 14 at beta = gamma: sqrt(p)


@pytest.mark.parametrize("extra", [[], ["--group-size", "inf"], ["--json"]])
@pytest.mark.parametrize("beta", ["1e-300", "5e-324"])
def test_solve_with_tiny_beta_exits_0(beta, extra):
    rc, out, err = run("solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", beta, *extra)
    assert rc == 0 and "Traceback" not in err, err
    if "--json" in extra:
        json.loads(out)


def test_solve_with_huge_rewards_exits_0():
    rc, out, err = run("solve", "--pi-ref", "0.3", "0.7", "--rewards", "1e300", "0", "--beta", "1")
    assert rc == 0, err
    assert "0.547723" in out                                  # scale: sqrt(0.3)


def test_predict_with_tiny_beta(tmp_path):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\nb,10,0\n")
    rc, _, err = run("predict", tmp_path / "s.csv", "--beta", "1e-300", "--out", tmp_path / "o", "--no-plots")
    assert rc == 0, err
    import pandas as pd

    table = pd.read_csv(tmp_path / "o" / "predictions.csv")
    assert (table.pred > 1 - 1e-12).all()


def test_huge_counts_are_refused_with_the_limit(tmp_path):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,1e20,3e19\n")
    refused(["predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o"], "1e20", "line 2")


def test_deep_configs_are_refused(tmp_path):
    (tmp_path / "c.json").write_text('{"a":' * 5_000 + "1" + "}" * 5_000)     # past Python's recursion limit
    refused(["explain", tmp_path / "c.json", "--framework", "trl"], "c.json", "nested")
    (tmp_path / "c.yaml").write_text("a: " + "[" * 5_000 + "]" * 5_000)
    refused(["explain", tmp_path / "c.yaml", "--framework", "verl"], "c.yaml")


@pytest.mark.parametrize("content", ["[1, 2, 3]", '{"a": [[1]]}', "not json", '["x"]'])
def test_figures_resume_with_a_bad_done_file(tmp_path, content, monkeypatch):
    from grpo_theory.figures import build

    (tmp_path / ".figures_done.json").write_text(content)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = build._read_done(tmp_path)
    assert done == ({1, 2, 3} if content == "[1, 2, 3]" else set())


@pytest.mark.slow
def test_validate_free_with_a_missing_model_dir(tmp_path):
    pytest.importorskip("torch")
    refused(["validate", "--study", "free", "--model-dir", tmp_path / "MISSING"], "MISSING")


def test_python_entry_points_raise_invalid_input():
    from grpo_theory import nash_equilibrium
    from grpo_theory.predict import predict, read_samples

    obj = Objective(beta=0.5)
    for call, name in [(lambda: nash_equilibrium([0.3, 0.7], 0.5), "Question"),
                       (lambda: predict(None, obj), "NoneType"), (lambda: predict(42, obj), "42"),
                       (lambda: read_samples(5), "5"),
                       (lambda: closed_form.binary_pairwise("a", 1.0), "'a'"),
                       (lambda: closed_form.binary_preference("a", 8), "'a'"),
                       (lambda: closed_form.binary_large_group(np.nan, 1.0), "nan")]:
        with pytest.raises(InvalidInputError, match=name):
            call()


def test_binary_preference_at_a_huge_group_is_refused_with_the_alternative():
    with pytest.raises(InvalidInputError, match="math.inf"):
        closed_form.binary_preference(0.3, 10**9)


def test_non_utf8_and_bom_files(tmp_path):
    (tmp_path / "g.csv").write_bytes(b"\xff\xfe\x00garbage\x80")
    refused(["predict", tmp_path / "g.csv", "--beta", "0.5", "--out", tmp_path / "o"], "g.csv", "UTF-8", "0xff")
    (tmp_path / "b.csv").write_text("\ufeffprompt_id,reward\na,1\na,0\n", encoding="utf-8")
    rc, out, err = run("predict", tmp_path / "b.csv", "--beta", "0.5", "--out", tmp_path / "o2", "--no-plots")
    assert rc == 0, err
    assert "1 prompts, 2 samples" in out


# ----------------------------------------------------------------------------- hangs refused up front

def test_huge_simplex_grids_are_refused_with_the_count(tmp_path):
    g = tmp_path / "g.yaml"
    g.write_text("objectives: {beta: [0.5]}\nsimplex: {rewards: [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1], "
                 "step: 0.01}\n")
    # C(99, 9) interior points of the 10-simplex lattice with n = 100
    refused(["sweep", g, "--out", tmp_path / "o.csv"], f"{math.comb(99, 9):,}", "coarser step")
    g.write_text("objectives: {beta: [0.5]}\nsimplex: {rewards: [1, 0.5, 0], step: 0.001}\n")
    refused(["sweep", g, "--out", tmp_path / "o.csv"], "498,501")
    assert not (tmp_path / "o.csv").exists()


def test_a_grid_below_the_limit_enumerates_each_point_once():
    from grpo_theory.sweep import cases_from_grid

    cases = cases_from_grid({"objectives": {"beta": 0.5}, "simplex": {"rewards": [1, 0.5, 0.2, 0.1, 0], "step": 0.1}})
    assert len(cases) == math.comb(9, 4)
    assert len({c.key for c in cases}) == len(cases)


def test_validate_with_1e20_steps_is_refused():
    refused(["validate", "--quick", "--steps", "99999999999999999999"], "99,999,999,999,999,999,999", "1,000,000")


def test_exact_path_with_a_billion_group_is_refused_with_the_alternative():
    refused(["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "1", "--group-size", "1000000000"],
            "1,000,000,000", "--group-size inf")


# ----------------------------------------------------------------------------- silently wrong -> right or refused

@pytest.mark.parametrize("x, G", [(0.3, 2.5), (0.3, -math.inf), (0.3, 1), (0.3, 0), (0.3, -5), (math.nan, 8),
                                  (0.3, math.nan), (0.3, True), (0.3, "8")])
def test_binary_preference_refuses_what_is_not_a_group(x, G):
    with pytest.raises(InvalidInputError):
        closed_form.binary_preference(x, G)


@pytest.mark.parametrize("G", [2, 3, 8, 50])
def test_binary_preference_agrees_with_the_binomial_sum(G):
    x = 0.3
    pa = sum(math.comb(G - 1, k) * x**k * (1 - x) ** (G - 1 - k) * math.sqrt((G - 1 - k) / (k + 1)) for k in range(G))
    pb = -sum(math.comb(G - 1, k) * x**k * (1 - x) ** (G - 1 - k) * math.sqrt(k / (G - k)) for k in range(G))
    got = closed_form.binary_preference(x, G)
    assert abs(float(got[0]) - pa) < 1e-12 and abs(float(got[1]) - pb) < 1e-12


@pytest.mark.parametrize("name, text", [
    ("nan.csv", "prompt_id,count_nan,count_1\na,3,5\n"),
    ("inf.csv", "prompt_id,count_inf,count_0\na,3,5\n"),
    ("dup.csv", "prompt_id,count_1,count_1.0,count_0\na,3,5,1\n"),
    ("hdr.csv", "prompt_id,reward,reward\na,1,0\n"),
])
def test_bad_level_columns_are_refused(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    refused(["predict", tmp_path / name, "--beta", "0.5", "--out", tmp_path / "o"], name)


def test_monte_carlo_with_nan_rewards_is_refused():
    from grpo_theory.monte_carlo import monte_carlo_preference

    with pytest.raises(InvalidInputError, match="nan"):
        monte_carlo_preference(None, Objective(beta=1.0, group_size=4), [0.5, 0.5], n_groups=100,
                               reward_sampler=lambda o, rng: np.full(o.shape, np.nan))
    with pytest.raises(InvalidInputError, match="n_groups"):
        monte_carlo_preference(Question([0.5, 0.5], rewards=[1, 0]), Objective(beta=1.0, group_size=4), [0.5, 0.5],
                               n_groups="100")


def test_entropy_forms_refuse_nan_margin_and_x_outside():
    with pytest.raises(InvalidInputError, match="margin"):
        closed_form.binary_entropy(0.3, 0.5, 0.1, margin=math.nan)
    with pytest.raises(InvalidInputError, match="x must"):
        closed_form.binary_entropy_condition(2, 0.3, 0.5, 0.1)


# ----------------------------------------------------------------------------- accepted -> refused

@pytest.mark.parametrize("tol", ["-1", "nan", "inf", "0"])
def test_slow_tol_out_of_range(tmp_path, tol):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    refused(["predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o", "--slow-tol", tol],
            "--slow-tol", tol)


def test_duplicate_prompt_ids_in_counts():
    from grpo_theory.predict import samples_from_counts

    with pytest.raises(InvalidInputError, match="'a' appears twice"):
        samples_from_counts([3, 4], [1, 2], ["a", "a"])


def test_an_empty_objective_list_is_refused(tmp_path):
    g = tmp_path / "g.yaml"
    g.write_text("objectives: {beta: []}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n")
    refused(["sweep", g, "--out", tmp_path / "o.csv"], "beta", "empty")


def test_a_misspelt_verl_section_is_named_with_the_likely_key():
    from grpo_theory.errors import TheoryWarning
    from grpo_theory.integrations.verl import read_verl_config

    cfg = {"algorithm": {"adv_estimator": "grpo"},
           "actor_rollout_ref": {"rollout": {"n": 8}, "actor": {"use_kl_loss": True}},
           "actr_rollout_ref": {"actor": {"kl_loss_coef": 0.2}}}
    with pytest.warns(TheoryWarning, match="actr_rollout_ref.*did you mean 'actor_rollout_ref'"):
        m = read_verl_config(cfg)
    assert m.objective.beta == 0.001                   # verl's default, as the warning says


# ----------------------------------------------------------------------------- misleading messages

def test_a_clamp_without_an_estimator_names_the_clamp():
    with pytest.raises(InvalidInputError, match="kl_value_clamp=10.0 needs kl_estimator") as info:
        Objective(beta=0.5, kl_value_clamp=10)
    assert "penalty=" not in str(info.value)


def test_tradeoff_betas_names_the_option(tmp_path):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    refused(["predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o", "--tradeoff-betas", "0", "-1"],
            "--tradeoff-betas", "'0'")


def test_yaml_exponent_without_a_dot_is_a_number(tmp_path):
    g = tmp_path / "g.yaml"
    g.write_text("objectives: {beta: 1.0e300}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n")
    rc, out, err = run("sweep", g, "--out", tmp_path / "o.csv", "--workers", "1", "--no-progress")
    assert rc == 0, err
    import pandas as pd

    row = pd.read_csv(tmp_path / "o.csv").iloc[0]
    assert abs(json.loads(row.reached_policy)[0] - 0.3) < 1e-12      # beta = 1e300: pi = pi_ref


def test_unwritable_out_names_the_users_path(tmp_path):
    g = tmp_path / "g.yaml"
    g.write_text("objectives: {beta: [0.5]}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n")
    line = refused(["sweep", g, "--out", "/proc/nope.csv", "--workers", "1", "--no-progress"], "/proc/nope.csv")
    assert ".tmp" not in line


def test_explain_on_a_folder_says_folder(tmp_path):
    refused(["explain", tmp_path, "--framework", "trl"], "is a folder")


def test_derivations_check_on_a_missing_file_says_missing(tmp_path):
    pytest.importorskip("sympy")
    rc, _, err = run("derivations", "--check", "--out", tmp_path / "missing.md")
    assert rc == 1 and "does not exist" in err and "stale" not in err


def test_unknown_trl_loss_type_is_refused():
    from grpo_theory.integrations.trl import read_trl_config

    with pytest.raises(InvalidInputError, match="'grop' is not a TRL loss type.*did you mean 'grpo'"):
        read_trl_config({"beta": 0.1, "loss_type": "grop"}, trl_version="1.16.0")


def test_openrlhf_flag_without_its_value():
    from grpo_theory.integrations.openrlhf import read_openrlhf_config

    with pytest.raises(InvalidInputError, match="--init_kl_coef has no value"):
        read_openrlhf_config(["--advantage_estimator", "group_norm", "--init_kl_coef"])


# ----------------------------------------------------------------------------- interrupted writes

def test_an_interrupted_predict_leaves_its_folder_marked(tmp_path, monkeypatch):
    from grpo_theory._io import INCOMPLETE_MARKER
    from grpo_theory.predict.core import Prediction

    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")

    def interrupted(self, out_dir, **kwargs):
        (Path(out_dir) / "predictions.csv").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(Prediction, "write", interrupted)
    rc, _, err = run("predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o", "--no-plots")
    assert rc == 130
    assert (tmp_path / "o" / INCOMPLETE_MARKER).is_file()
    monkeypatch.undo()
    rc, _, err = run("predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o", "--no-plots")
    assert rc == 0 and not (tmp_path / "o" / INCOMPLETE_MARKER).exists()


def test_atomic_write_leaves_the_old_file_on_failure(tmp_path):
    from grpo_theory._io import atomic_write, atomic_write_text

    atomic_write_text(tmp_path / "f.txt", "old")

    def fail(p):
        Path(p).write_text("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "f.txt", fail)
    assert (tmp_path / "f.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


# ----------------------------------------------------------------------------- readers of real inputs

def test_predict_takes_a_dataframe_and_arrays():
    import pandas as pd

    from grpo_theory.predict import predict, read_samples

    obj = Objective(beta=0.5)
    df = pd.DataFrame({"problem": ["a", "a", "b", "b"], "reward": [1, 0, 1, None]})
    t = read_samples(df, id_column="problem")
    assert t.prompt_ids == ("a", "b") and t.counts.tolist() == [[1, 1], [0, 1]] and len(t.excluded) == 1
    pr = predict(np.array([[10, 3], [4, 0]]), obj)
    assert abs(pr.table.pred[0] - float(closed_form.binary_pairwise(0.3, 0.5))) < 1e-9


def test_id_column_on_the_command_line(tmp_path):
    (tmp_path / "s.csv").write_text("unique_id,n,correct\na,10,3\n")
    rc, out, err = run("predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o", "--no-plots",
                       "--id-column", "unique_id")
    assert rc == 0, err
    refused(["predict", tmp_path / "s.csv", "--beta", "0.5", "--out", tmp_path / "o"], "'prompt_id'", "--id-column")


def test_verl_run_script(tmp_path):
    from grpo_theory.integrations.verl import read_verl_config

    script = tmp_path / "run_grpo.sh"
    script.write_text("#!/bin/bash\nset -x\nN=5\nexport VLLM_ATTENTION_BACKEND=XFORMERS\n"
                      "python3 -m verl.trainer.main_ppo \\\n    algorithm.adv_estimator=grpo \\\n"
                      "    actor_rollout_ref.rollout.n=${N} \\\n    actor_rollout_ref.actor.use_kl_loss=True \\\n"
                      "    actor_rollout_ref.actor.kl_loss_coef=0.002 # the KL weight\\\n"
                      "    trainer.logger=['console','wandb'] $@ 2>&1 | tee log.txt\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = read_verl_config(str(script)).objective
        same = read_verl_config("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
                                "actor_rollout_ref.rollout.n=5 actor_rollout_ref.actor.use_kl_loss=true "
                                "actor_rollout_ref.actor.kl_loss_coef=2e-3").objective
    assert (obj.group_size, obj.beta, obj.estimator) == (5, 0.002, "k3")
    assert same == obj
    script.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n=$MISSING\n")
    with pytest.raises(InvalidInputError, match=r"\$MISSING"):
        read_verl_config(str(script))


def test_trl_yaml_and_command_line(tmp_path):
    (tmp_path / "c.yaml").write_text("beta: 0.04\nnum_generations: 4\nmax_completion_length: 1\n")
    (tmp_path / "c.sh").write_text("trl grpo --model_name_or_path Qwen/Qwen2-0.5B \\\n  --beta 0.04 --num-generations 4 "
                                   "--max_completion_length=1 --use_vllm\n")
    outs = []
    for name in ("c.yaml", "c.sh"):
        rc, out, err = run("explain", tmp_path / name, "--framework", "trl", "--trl-version", "1.16.0", "--json")
        assert rc == 0, err
        outs.append(json.loads(out)["objective"])
    assert outs[0] == outs[1] and outs[0]["group_size"] == 4 and outs[0]["beta"] == 0.04


# ----------------------------------------------------------------------------- round two's leftovers (issue 45)

def test_sweep_grid_with_tiny_beta_is_solved(tmp_path):
    """The issue's sweep-grid form of the tiny-beta traceback: G = 2, scale, Eq. 14 in mpmath."""
    g = tmp_path / "g.yaml"
    g.write_text("objectives: {beta: [1e-300, 1.0e-305]}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n")
    rc, out, err = run("sweep", g, "--out", tmp_path / "o.csv", "--workers", "1", "--no-progress")
    assert rc == 0, err
    import pandas as pd

    table = pd.read_csv(tmp_path / "o.csv")
    assert len(table) == 2
    for _, row in table.iterrows():
        beta = row["key"].split("beta=")[1]
        want = eq14_one_minus_x("0.3", float(beta))
        got = json.loads(row["reached_policy"])[1]
        assert abs(got - want) <= 1e-12 * want, (beta, got, want)


def test_a_trl_config_nested_100000_deep_is_refused(tmp_path):
    (tmp_path / "c.json").write_text('{"beta":' * 100_000 + "1" + "}" * 100_000)
    refused(["explain", tmp_path / "c.json", "--framework", "trl"], "c.json", "nested deeper than 64")
    (tmp_path / "c.yaml").write_text("beta: " + "[" * 100_000 + "]" * 100_000)
    refused(["explain", tmp_path / "c.yaml", "--framework", "trl"], "c.yaml")


@pytest.mark.parametrize("kw, name", [({"n_starts": 0}, "n_starts"), ({"n_starts": -3}, "n_starts"),
                                      ({"n_starts": 2.5}, "n_starts"), ({"n_grid": "x"}, "n_grid"),
                                      ({"seed": -1}, "seed"), ({"box_budget": -1}, "box_budget"),
                                      ({"time_budget": math.nan}, "time_budget")])
def test_stationary_points_refuses_a_search_that_cannot_run(kw, name):
    """``n_starts=0`` was silently replaced by the default starts; now every search knob is checked."""
    from grpo_theory import stationary_points

    q, obj = Question([0.2, 0.3, 0.5], rewards=[1, 0.5, 0]), Objective(beta=0.3, group_size=4)
    with pytest.raises(InvalidInputError, match=f"{name} must be"):
        stationary_points(q, obj, exhaustive=False, **kw)


def test_dataframe_errors_name_the_row_by_its_index_label():
    """A DataFrame has rows, not lines: the message names the index label the user can ``.loc``."""
    import pandas as pd

    from grpo_theory.predict import read_samples

    df = pd.DataFrame({"prompt_id": ["a", "b", "c"], "n": [10, 10, 5], "correct": [3, 11, 1]}, index=[7, 8, 9])
    with pytest.raises(InvalidInputError, match=r"samples DataFrame row 8: prompt 'b' has correct = 11 > n = 10"):
        read_samples(df)
    dup = pd.DataFrame({"prompt_id": ["a", "a"], "n": [10, 10], "correct": [3, 1]})
    with pytest.raises(InvalidInputError, match=r"row 1: prompt 'a' appears again \(first on row 0\)"):
        read_samples(dup)
    with pytest.raises(InvalidInputError, match=r"samples array row 1: prompt '1' has correct = 4 > n = 3"):
        read_samples(np.array([[10, 3], [3, 4]]))


# ----------------------------------------------------------------------------- third round: negative-looking values

@pytest.mark.parametrize("value", ["-nan", "-NaN", "-inf", "-Infinity", "-1e400"])
@pytest.mark.parametrize("argv, option", [
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "{v}"], "--beta"),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "{v}", "0", "--beta", "0.5"], "--rewards"),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "{v}"],
     "--group-size")])
def test_a_negative_looking_value_is_read_as_the_value_and_named(argv, option, value):
    """argparse read ``-nan`` as an option ("expected one argument"); now the option's own check names it."""
    line = refused([a.replace("{v}", value) for a in argv], option, repr(value))
    assert "expected one argument" not in line


def test_an_option_followed_by_an_option_like_token_says_how_to_pass_it():
    line = refused(["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "-abc"], "--beta", "'-abc'",
                   "--beta=-abc")
    assert "read as an option" in line


def test_a_negative_reward_with_an_exponent_is_still_a_value():
    rc, out, _ = run("solve", "--pi-ref", "0.3", "0.7", "--rewards", "-1e-3", "0", "--beta", "1", "--json")
    assert rc == 0 and json.loads(out)
