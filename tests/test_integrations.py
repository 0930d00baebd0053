"""Config readers of TRL, verl and OpenRLHF: each framework's defaults, by version, and its warnings.

The expected objectives are read off the frameworks' sources by hand (docs/conventions.md cites
file and version); the readers are data transformations, so these are table checks plus the
behaviour the issue asks for (a TRL 1.16 dict without use_bias_correction_kl is the direct penalty).
"""

from __future__ import annotations

import math

import pytest

from grpo_theory import InvalidInputError, NoStationaryPolicy, Question, stationary_policy
from grpo_theory.integrations.mapping import explain
from grpo_theory.integrations.openrlhf import read_openrlhf_config
from grpo_theory.integrations.trl import read_trl_config
from grpo_theory.integrations.verl import read_verl_config


@pytest.mark.parametrize("version,estimator,penalty", [
    ("1.16.0", "k3_ratio", "direct"), ("1.10.0", "k3_ratio", "direct"), ("1.9.0", "k3", "reverse"),
    ("0.26.0", "k3", "reverse"), ("0.20.0", "k3", "reverse")])
def test_trl_dict_without_bias_correction_takes_the_versions_default(version, estimator, penalty):
    m = read_trl_config({"beta": 0.04, "max_completion_length": 1}, trl_version=version)
    assert (m.objective.estimator, m.objective.regime) == (estimator, penalty)
    assert any("use_bias_correction_kl" in w for w in m.warnings)


@pytest.mark.parametrize("version,beta,loss_type", [("0.18.0", 0.04, "bnpo"), ("0.16.0", 0.04, "grpo"),
                                                    ("0.21.0", None, "bnpo"), ("1.16.0", None, "dapo")])
def test_trl_beta_and_loss_type_defaults_by_version(version, beta, loss_type):
    if beta is None:                    # beta = 0: the unregularised objective, with the reader's warning
        m = read_trl_config({"max_completion_length": 1}, trl_version=version)
        assert (m.objective.beta, m.objective.regularised, m.objective.loss_type) == (0.0, False, loss_type)
        assert any(w.startswith("beta=0 (TRL's default since 0.19)") and "no stationary policy" in w
                   for w in m.warnings)
    else:
        m = read_trl_config({"max_completion_length": 1}, trl_version=version)
        assert m.objective.beta == beta and m.objective.loss_type == loss_type and m.objective.group_size == 8


def test_trl_bad_and_unknown_keys():
    with pytest.raises(InvalidInputError, match="num_generations"):
        read_trl_config({"num_generations": "eight", "beta": 0.1}, trl_version="1.16.0")
    with pytest.raises(InvalidInputError, match="scale_rewards"):
        read_trl_config({"beta": 0.1, "scale_rewards": "sometimes"}, trl_version="1.16.0")
    m = read_trl_config({"beta": 0.1, "betta": 0.2, "max_completion_length": 1}, trl_version="1.16.0")
    assert any("betta" in w for w in m.warnings)
    m = read_trl_config({"beta": 0.1, "top_p": 0.9, "repetition_penalty": 1.1, "steps_per_generation": 4,
                            "gradient_accumulation_steps": 1, "max_completion_length": 1}, trl_version="1.16.0")
    for needle in ("top_p", "repetition_penalty", "steps_per_generation"):
        assert any(needle in w for w in m.warnings), needle


def _verl(**actor):
    return {"algorithm": {"adv_estimator": "grpo"},
            "actor_rollout_ref": {"rollout": {"n": 8}, "actor": {"use_kl_loss": True, **actor}}}


@pytest.mark.parametrize("kl_type,estimator,L,V,penalty", [
    ("low_var_kl", "k3", 20.0, 10.0, "other"), ("k3", "k3", 20.0, 10.0, "other"), ("mse", "k2", None, None, "direct"),
    ("kl", "k1", None, None, "none"), ("k3+", "k3_plus", 20.0, 10.0, "direct"), ("abs", "abs", None, None, "other")])
def test_verl_kl_loss_types(kl_type, estimator, L, V, penalty):
    o = read_verl_config(_verl(kl_loss_type=kl_type)).objective
    assert (o.estimator, o.kl_log_ratio_clamp, o.kl_value_clamp, o.regime) == (estimator, L, V, penalty)
    assert (o.group_size, o.beta, o.std_ddof, o.std_eps, o.loss_type, o.kl_placement) == \
        (8, 0.001, 1, 1e-6, "token-mean", "loss")


def test_verl_kl_in_reward_and_defaults_and_errors(tmp_path):
    cfg = {"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": True, "norm_adv_by_std_in_grpo": False,
                         "kl_ctrl": {"kl_coef": 0.05}}, "actor_rollout_ref": {"rollout": {"n": 4}}}
    o = read_verl_config(cfg).objective
    assert (o.estimator, o.kl_placement, o.beta, o.normalization, o.regime) == ("k1", "reward", 0.05, "shift",
                                                                                   "reward")
    m = read_verl_config({"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {"rollout": {"n": 4}}})
    assert (m.objective.beta, m.objective.regularised) == (0.0, False)                      # no KL by default
    assert any("use_kl_loss and use_kl_in_reward both off" in w and "no stationary policy" in w for w in m.warnings)
    with pytest.raises(NoStationaryPolicy, match="gae"):                                    # gae by default
        read_verl_config({})
    with pytest.raises(InvalidInputError, match="rollout.n"):
        read_verl_config({"algorithm": {"adv_estimator": "grpo"}})
    with pytest.raises(InvalidInputError, match="full"):
        read_verl_config(_verl(kl_loss_type="full"))
    y = tmp_path / "c.yaml"
    y.write_text("algorithm:\n  adv_estimator: grpo\n  bogus_key: 1\nactor_rollout_ref:\n  rollout:\n    n: 5\n"
                 "    temperature: 0.7\n  actor:\n    use_kl_loss: true\n    ppo_epochs: 2\n")
    m = read_verl_config(str(y))
    assert m.objective.group_size == 5
    for needle in ("bogus_key", "temperature", "ppo_epochs"):
        assert any(needle in w for w in m.warnings), needle


@pytest.mark.parametrize("style", ["old", "new", "argv_old", "argv_new"])
def test_openrlhf_flag_styles_agree(style):
    old = {"advantage_estimator": "group_norm", "n_samples_per_prompt": 8, "init_kl_coef": 0.02,
           "kl_estimator": "k2", "use_kl_loss": True}
    names = {"advantage_estimator": "algo.advantage.estimator",
             "n_samples_per_prompt": "rollout.n_samples_per_prompt", "init_kl_coef": "algo.kl.init_coef",
             "kl_estimator": "algo.kl.estimator", "use_kl_loss": "algo.kl.use_loss"}
    if style == "old":
        args = old
    elif style == "new":
        args = {names[k]: v for k, v in old.items()}
    else:
        table = old if style == "argv_old" else {names[k]: v for k, v in old.items()}
        args = []
        for k, v in table.items():
            args += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    o = read_openrlhf_config(args).objective
    assert (o.group_size, o.beta, o.estimator, o.kl_placement, o.kl_value_clamp, o.std_eps, o.normalization) == \
        (8, 0.02, "k2", "loss", 10.0, 1e-9, "scale")


def test_openrlhf_defaults_put_k1_in_the_advantage_and_rloo_rescales_beta():
    o = read_openrlhf_config({"advantage_estimator": "group_norm", "n_samples_per_prompt": 4}).objective
    assert (o.estimator, o.kl_placement, o.beta) == ("k1", "advantage", 0.01)
    r = read_openrlhf_config({"advantage_estimator": "rloo", "n_samples_per_prompt": 4, "init_kl_coef": 0.4})
    # issue 22: rloo is its own estimator now; its stationary points are shift-only's at beta (G-1)/G = 0.3
    assert r.objective.advantage == "rloo" and math.isclose(r.objective.beta, 0.4)
    assert any("0.3" in w for w in r.warnings)
    with pytest.raises(NoStationaryPolicy, match="gae"):                     # gae by default
        read_openrlhf_config({})
    with pytest.raises(InvalidInputError, match="n_samples_per_prompt"):
        read_openrlhf_config({"advantage_estimator": "group_norm"})
    with pytest.raises(InvalidInputError, match="kl_estimator"):
        read_openrlhf_config({"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "kl_estimator": "k4"})
    m = read_openrlhf_config(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--lr", "1"])
    assert any("'lr'" in w for w in m.warnings)


def test_rloo_prediction_satisfies_its_own_stationarity_condition():
    """rloo's A = r - mean(others), with k1 in the advantage: for 0/1 rewards E[A | a] - E[A | b] = 1
    exactly (the others' mean cancels), so stationarity is beta (lr_a - lr_b) = 1 with beta = init_kl_coef
    itself; the mapping's shift-only objective with beta (G-1)/G must land there."""
    G, beta = 4, 0.4
    o = read_openrlhf_config({"advantage_estimator": "rloo", "n_samples_per_prompt": G, "init_kl_coef": beta,
                                 "kl_estimator": "k1"}).objective
    x = stationary_policy(Question([0.3, 0.7], rewards=[1.0, 0.0]), o).pi[0]
    assert math.isclose(beta * (math.log(x / 0.3) - math.log((1 - x) / 0.7)), 1.0, rel_tol=1e-9)


def test_explain_reports_clamp_activity_and_log_pooling():
    m = read_verl_config(_verl())
    info = explain(m, Question([0.5, 0.5], rewards=[1.0, 0.0]))
    assert info["question"]["collapse"] and any("clamp is active" in w for w in info["warnings"])
    assert info["question"]["log_pooling"][0] > 0.99
