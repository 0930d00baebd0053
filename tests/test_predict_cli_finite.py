"""``grpo-theory predict --measured``: outputs, words, bad input, and nothing written half."""

import json

import numpy as np
import pandas as pd
import pytest

from grpo_theory import Objective
from grpo_theory.cli import main
from grpo_theory.predict import predict, samples_from_counts
from grpo_theory.predict.coupled import solve_rho
from grpo_theory.predict.field import PromptField


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("finite")
    rng = np.random.default_rng(5)
    N, n, m = 120, 64, 48
    p = rng.beta(0.6, 1, size=N).clip(5e-3, 1 - 5e-3)
    after = solve_rho(PromptField(Objective(beta=0.5, group_size=8), p), 0.5, np.array([0, 2.0])).p[-1]
    ids = [f"q{i}" for i in range(N)]
    pd.DataFrame(dict(prompt_id=ids, n=n, correct=rng.binomial(n, p))).to_csv(d / "base.csv", index=False)
    meas = rng.choice(N, 60, replace=False)
    pd.DataFrame(dict(prompt_id=[ids[i] for i in meas], n=m, correct=rng.binomial(m, after[meas]))).to_csv(
        d / "after.csv", index=False)
    return d


def test_measured_holdout_writes_the_models_table(files, capsys):
    out = files / "out"
    rc = main(["predict", str(files / "base.csv"), "--beta", "0.5", "--group-size", "8", "--measured",
               str(files / "after.csv"), "--holdout", "0.3", "--out", str(out), "--no-plots", "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "predictive interval" in text and "held out 18" in text
    table = pd.read_csv(out / "predictions.csv")
    for col in ("pred_finite", "pred_finite_lo", "pred_finite_hi", "pred_shift", "pred_tabular", "pred_coupled"):
        assert col in table
    assert np.all(table.pred_finite_lo <= table.pred_finite_hi)
    scores = pd.read_csv(out / "scores.csv")
    assert set(scores.model) == {"no_change", "shift", "tabular", "coupled", "stationary"}
    assert (scores.mae_lo <= scores.mae).all() and (scores.mae <= scores.mae_hi).all()
    summary = json.loads((out / "summary.json").read_text())
    assert "vertex_fraction" in summary and summary["finite"]["fit"]["model"] == "coupled"
    assert "sampling interval" in summary["columns"]["pred_lo_pred_hi"]
    # the stationary column is far from this short run: said in words
    assert "describes where the flow ends, not a finite run" in text


def test_measured_kernel_from_npy(files, tmp_path, capsys):
    N = 120
    np.save(tmp_path / "K.npy", np.eye(N))
    rc = main(["predict", str(files / "base.csv"), "--beta", "0.5", "--group-size", "8", "--measured",
               str(files / "after.csv"), "--kernel", str(tmp_path / "K.npy"), "--out", str(tmp_path / "o"),
               "--no-plots", "--no-progress"])
    assert rc == 0
    table = pd.read_csv(tmp_path / "o" / "predictions.csv")
    t_kernel = json.loads((tmp_path / "o" / "summary.json").read_text())["finite"]["fits"]["kernel"]["t"]
    # K = I is the tabular flow: at the kernel fit's time, the rho = 0 flow from the same starts
    want = solve_rho(PromptField(Objective(beta=0.5, group_size=8), table.p_start.to_numpy()), 0.0,
                     np.array([0.0, t_kernel]), rtol=1e-9, atol=1e-11).p[-1]
    assert np.max(np.abs(table.pred_kernel - want)) < 1e-5
    np.save(tmp_path / "bad.npy", np.eye(3))
    rc = main(["predict", str(files / "base.csv"), "--beta", "0.5", "--measured", str(files / "after.csv"),
               "--kernel", str(tmp_path / "bad.npy"), "--out", str(tmp_path / "o2"), "--no-plots"])
    assert rc == 2 and "120 x 120" in capsys.readouterr().err
    assert not (tmp_path / "o2" / "predictions.csv").exists()


def test_bad_measured_input_is_one_line_naming_the_value(files, tmp_path, capsys):
    bad = tmp_path / "after_bad.csv"
    pd.DataFrame(dict(prompt_id=["q1", "nope"], n=[4, 4], correct=[1, 2])).to_csv(bad, index=False)
    rc = main(["predict", str(files / "base.csv"), "--beta", "0.5", "--measured", str(bad), "--out",
               str(tmp_path / "o"), "--no-plots"])
    err = capsys.readouterr().err
    assert rc == 2 and "'nope'" in err and "Traceback" not in err
    over = tmp_path / "after_over.csv"
    pd.DataFrame(dict(prompt_id=["q1"], n=[4], correct=[5])).to_csv(over, index=False)
    rc = main(["predict", str(files / "base.csv"), "--beta", "0.5", "--measured", str(over), "--out",
               str(tmp_path / "o"), "--no-plots"])
    assert rc == 2 and "correct" in capsys.readouterr().err
    rc = main(["predict", str(files / "base.csv"), "--beta", "0.5", "--holdout", "0.3", "--out",
               str(tmp_path / "o"), "--no-plots"])
    assert rc == 2 and "--measured" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_nothing_is_written_half(files, tmp_path, monkeypatch):
    from grpo_theory.predict import report

    def broken(_pr):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(report, "figure_pass_at_k", broken)
    out = tmp_path / "o"
    pr = predict(samples_from_counts([10, 10], [3, 5], ["a", "b"]), Objective(beta=0.5, group_size=2))
    with pytest.raises(RuntimeError):
        pr.write(out, plots=True)
    assert list(out.iterdir()) == []                             # no csv, no json, no staging folder left
    assert [p.name for p in tmp_path.iterdir()] == ["o"]


def test_mean_kl_reverse_counts_infinite_rows_and_critical_beta_is_said(tmp_path, capsys):
    base = tmp_path / "b.csv"
    pd.DataFrame(dict(prompt_id=["a", "b", "c"], n=[64, 64, 64], correct=[5, 30, 60])).to_csv(base, index=False)
    rc = main(["predict", str(base), "--beta", "1e-4", "--group-size", "8", "--kl-estimator", "k3",
               "--kl-value-clamp", "10", "--out", str(tmp_path / "o"), "--no-plots", "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["kl_reverse_infinite"] == 3 and s["mean_kl_reverse"] is None
    assert s["vertex_fraction"] == 1.0
    assert "below the clamp's critical beta" in text and "x below" in text
    assert "Give --measured AFTER" in text


def test_pass_at_k_before_stops_at_n():
    pr = predict(samples_from_counts([4, 4], [1, 2]), Objective(beta=0.5, group_size=2))
    cur = pr.curves([2, 4, 8])
    assert cur.before_unbiased_share.tolist() == [1.0, 1.0, 0.0]
    assert cur.before.isna().tolist() == [False, False, True] and cur.after.notna().all()
    from grpo_theory.predict.report import figure_pass_at_k

    ax = figure_pass_at_k(pr).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any("plug-in" in s for s in labels) and any("k <= n = 4" in s for s in labels)
    before = next(ln for ln in ax.get_lines() if ln.get_label().startswith("before"))
    assert before.get_xdata().tolist()[-1] == 4 and max(before.get_xdata()) == 4      # drawn up to n only


def test_tradeoff_labels_do_not_pile_up():
    from grpo_theory.predict.report import figure_tradeoff

    betas = np.array([0.1, 0.11, 0.12, 0.13, 1.0, 2.0, 4.0])
    t = pd.DataFrame(dict(beta=betas, mean_kl_direct=1 / betas, mean_pred=0.5 + 0.4 / (1 + betas)))
    texts = [a.get_text() for a in figure_tradeoff(t, 1.0).axes[0].texts]
    assert "β=0.1" in texts and "β=4" in texts                # the ends always
    assert len(texts) < betas.size                              # the crowded ones skipped, drawn as points only


def test_explain_says_how_far_beta_is_below_the_clamps_critical_beta(tmp_path, capsys):
    cfg = tmp_path / "verl.yaml"
    cfg.write_text("actor_rollout_ref:\n  rollout:\n    n: 8\n  actor:\n    use_kl_loss: true\n"
                   "    kl_loss_coef: 0.0001\n    kl_loss_type: low_var_kl\nalgorithm:\n  adv_estimator: grpo\n")
    assert main(["explain", str(cfg), "--framework", "verl"]) == 0
    line = [ln for ln in capsys.readouterr().out.splitlines() if "critical beta" in ln][0]
    # the critical beta of a binary prompt by the solver, independently: beta / critical
    from grpo_theory.predict.response import binary_question
    from grpo_theory.solvers import clamp_critical_beta
    from grpo_theory.integrations.verl import read_verl_config
    import yaml

    obj = read_verl_config(yaml.safe_load(cfg.read_text())).objective
    crit = min(clamp_critical_beta(binary_question(p), obj) for p in (0.1, 0.5, 0.9))
    assert f"~{crit / 1e-4:,.0f}x below" in line
