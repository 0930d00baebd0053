"""``beta = 0`` with no entropy bonus in the readers, ``explain`` and ``predict`` (TRL's default run).

The readers map such a config to ``Objective(beta=0, ...)`` with a warning; ``predict`` refuses it without a
finite-time mode, and with one fills the stationary columns with the flow's limit. The finite-time columns are
checked against an RK4 integration of SPEC's binomial ``P_G`` (section 2), written in test_unregularised.py.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from grpo_theory import InvalidInputError, NoStationaryPolicy, Objective, Question
from grpo_theory.cli import main
from grpo_theory.integrations.mapping import explain
from grpo_theory.integrations.openrlhf import read_openrlhf_config
from grpo_theory.integrations.trl import read_trl_config
from grpo_theory.integrations.verl import read_verl_config
from grpo_theory.predict import predict, samples_from_counts
from test_unregularised import _rk4_binary   # SPEC's binomial P_G and its RK4 flow, written there


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


# ---------------------------------------------------------------- readers
@pytest.mark.parametrize("read, why", [
    (lambda: read_trl_config({"beta": 0.0, "num_generations": 4}, trl_version="1.16.0"), "beta=0 (the config's beta)"),
    (lambda: read_trl_config({"num_generations": 4}, trl_version="0.19.0"), "beta=0 (TRL's default since 0.19)"),
    (lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": {"rollout": {"n": 8}}}),
     "use_kl_loss and use_kl_in_reward both off"),
    (lambda: read_verl_config({"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": True,
                                             "kl_ctrl": {"kl_coef": 0.0}}, "actor_rollout_ref": {"rollout": {"n": 8}}}),
     "kl_coef=0 with use_kl_in_reward on"),
    (lambda: read_openrlhf_config(["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4",
                                   "--init_kl_coef", "0"]), "init_kl_coef=0"),
])
def test_a_config_with_no_kl_maps_to_the_unregularised_objective_with_a_warning(read, why):
    with pytest.warns(Warning, match="no stationary policy") as caught:
        m = read()
    assert m.objective.beta == 0.0 and m.objective.entropy_coef == 0.0 and not m.objective.regularised
    mine = [w for w in m.warnings if why in w]
    assert len(mine) == 1 and "only finite-time predictions apply" in mine[0] and "--measured AFTER" in mine[0]
    assert any(why in str(w.message) for w in caught)


def test_the_readers_other_checks_stay():
    with pytest.raises(NoStationaryPolicy, match="gae"):                      # verl's default advantage
        _quiet(read_verl_config, {"actor_rollout_ref": {"rollout": {"n": 4}}})
    with pytest.raises(InvalidInputError, match=r"init_kl_coef .* = -0.1"):
        _quiet(read_openrlhf_config, ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4",
                                      "--init_kl_coef", "-0.1"])
    with pytest.raises(InvalidInputError, match="beta"):
        _quiet(read_trl_config, {"beta": -1.0}, trl_version="1.16.0")


def test_explain_gives_no_stationary_policy_and_says_why():
    m = _quiet(read_trl_config, {"beta": 0.0, "num_generations": 4}, trl_version="1.16.0")
    info = explain(m, Question([0.3, 0.7], rewards=[1, 0]))
    assert info["objective"]["beta"] == 0.0 and "no KL term at all" in info["objective"]["kl"]
    assert info["question"]["stationary_policy"] is None
    assert "is unregularised" in info["question"]["reason"] and "finite-time flow" in info["question"]["reason"]


# ---------------------------------------------------------------- predict
SAMPLES = dict(n=[20, 20, 20, 20], correct=[0, 5, 12, 20], prompt_ids=["never", "low", "mid", "all"])


def test_predict_without_a_finite_time_mode_is_refused_naming_what_to_give():
    with pytest.raises(NoStationaryPolicy, match=r"^predict with no measured=, fit= or clock=: .* is unregularised"):
        predict(samples_from_counts(**SAMPLES), Objective(beta=0, group_size=8))
    graded = pd.DataFrame(dict(prompt_id=["a", "a", "b"], reward=[0.0, 0.5, 1.0]))
    with pytest.raises(InvalidInputError, match="binary rewards only"):
        predict(graded, Objective(beta=0, group_size=4), clock=0.1)


@pytest.fixture(scope="module")
def fitted():
    G = 8
    pr = predict(samples_from_counts(**SAMPLES), Objective(beta=0, group_size=G), fit=(50, 0.6), steps=[10, 50],
                 progress=False)
    return G, pr


def test_the_stationary_columns_hold_the_flows_limit(fitted):
    _, pr = fitted
    t = pr.table
    assert t.pred.tolist() == [0.0, 1.0, 1.0, 1.0]                   # 1 where p_ref > 0, 0 where never solved
    assert t.pred_lo.tolist() == [0.0, 1.0, 1.0, 1.0] and t.pred_hi.tolist() == [1.0] * 4
    assert t.collapse.tolist() == ["wrong", "correct", "correct", "correct"] and not t.bistable.any()
    s = pr.summary
    assert s["vertex_fraction"] == 1.0 and s["collapse"] == 4 and "flow's limit" in s["stationary_limit"]
    assert "pred = 0 (the limit at p_ref = 0)" in s["interval"]["never_solved"]
    assert "beta_critical" not in t


def test_the_clock_and_the_steps_follow_the_binomial_flow(fitted):
    G, pr = fitted
    t, clock = pr.table, pr.summary["clock"]
    want_at = {s: [1.0 if p0 >= 1 else _rk4_binary(p0, clock * s, G) for p0 in t.flow_start] for s in (10, 50)}
    for s, want in want_at.items():
        assert np.max(np.abs(t[f"at_step_{s:g}"].to_numpy() - want)) < 1e-4, (s, t[f"at_step_{s:g}"].tolist(), want)
    assert abs(float(np.mean(want_at[50])) - 0.6) < 1e-4                  # the clock reproduces the fitted mean
    assert 0.25 < want_at[50][1] < 0.99                                   # short of the limit 1: a finite run


def test_pass_at_k_after_training_and_the_written_summary(fitted, tmp_path):
    _, pr = fitted
    pk = pr.pass_at(4)
    assert pk.after.tolist() == [0.0, 1.0, 1.0, 1.0]
    n, c = 20, np.array(SAMPLES["correct"])
    before = [1 - math.comb(n - ci, 4) / math.comb(n, 4) for ci in c]
    assert np.allclose(pk.before, before, rtol=0, atol=1e-12)
    pr.write(tmp_path, plots=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["vertex_fraction"] == 1.0 and summary["objective"] == "reverse/scale, G=8, beta=0"
    assert summary["stationary_limit"].startswith("beta = 0 with no entropy bonus: no stationary point")
    table = pd.read_csv(tmp_path / "predictions.csv")
    assert table.pred.tolist() == [0.0, 1.0, 1.0, 1.0]


def test_measured_gives_the_finite_columns_and_their_pass_at_k():
    rng = np.random.default_rng(4)
    N = 40
    p = rng.uniform(0.05, 0.8, N)
    ids = [f"q{i}" for i in range(N)]
    base = samples_from_counts([32] * N, rng.binomial(32, p), ids)
    after = samples_from_counts([32] * 30, rng.binomial(32, np.minimum(0.97, 1.6 * p[:30])), ids[:30])
    pr = _quiet(predict, base, Objective(beta=0, group_size=8), measured=after, progress=False)
    t = pr.table
    assert np.all((t.pred_finite > 0) & (t.pred_finite < 1)) and np.all(t.pred_finite_lo <= t.pred_finite)
    assert np.all(t.pred_finite >= t.p_start - 1e-9)          # beta = 0: every prompt's flow only rises
    pk = pr.pass_at(8)
    assert np.allclose(pk.after_finite, 1 - (1 - t.pred_finite.to_numpy()) ** 8, rtol=0, atol=1e-12)
    assert pr.summary["short_of_stationarity"] and pr.summary["vertex_fraction"] == 1.0


@pytest.mark.parametrize("kw", [dict(group_size=2), dict(group_size=8, std_ddof=1, std_eps=1e-4),
                                dict(group_size=math.inf), dict(group_size=5, normalization="shift"),
                                dict(group_size=4, advantage="rloo"), dict(group_size=6, advantage="reinforce_pp"),
                                dict(group_size=4, advantage="pass_at_k", pass_k=2),
                                dict(group_size=4, filter_ties=True)])
def test_the_limit_note_holds_the_correct_answer_gains_at_every_x(kw):
    """``stationary_limit``'s reason: for 0/1 rewards, ``g(correct) > g(wrong)`` at every interior ``x``."""
    from grpo_theory.solvers import output_gradient

    obj = Objective(beta=0, **kw)
    q = Question([0.3, 0.7], rewards=[1, 0])
    for x in (1e-6, 0.01, 0.3, 0.7, 0.99, 1 - 1e-6):
        g = output_gradient(q, obj, np.array([x, 1 - x]))
        assert g[0] > g[1], (kw, x, g)


# ---------------------------------------------------------------- the command line
def test_cli_predict_with_trls_default_config(tmp_path, capsys):
    pd.DataFrame(dict(prompt_id=SAMPLES["prompt_ids"], n=SAMPLES["n"], correct=SAMPLES["correct"])).to_csv(
        tmp_path / "base.csv", index=False)
    (tmp_path / "c.json").write_text('{"num_generations": 8}')
    argv = ["predict", str(tmp_path / "base.csv"), "--framework", "trl", str(tmp_path / "c.json"), "--trl-version",
            "1.16.0", "--no-plots", "--no-progress"]
    assert main(argv + ["--out", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "no --measured, --fit or --clock" in err and "is unregularised" in err
    assert not (tmp_path / "none").exists()
    assert main(argv + ["--fit", "50", "0.6", "--out", str(tmp_path / "fit")]) == 0
    out = capsys.readouterr().out
    assert "beta=0 (TRL's default since 0.19)" in out and "only finite-time predictions apply" in out
    assert "there is no stationary point" in out and "describes no finite run" in out
    assert json.loads((tmp_path / "fit" / "summary.json").read_text())["vertex_fraction"] == 1.0
