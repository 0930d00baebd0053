"""The GRPO trainer: advantages and loss against the SPEC written out by hand, single-forward
scoring against token-by-token generation, persistence, and a reduced theory-vs-trainer check."""

import copy
import dataclasses
import math
import platform
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from grpo_theory import InvalidInputError, Objective  # noqa: E402
from grpo_theory.training import (  # noqa: E402
    GRPOConfig,
    GRPOTrainer,
    answer_probabilities,
    answer_token_logprobs,
    generate,
    group_advantages,
    grpo_objective,
    pretrain_reference,
    synthetic_binary_task,
)


def test_advantages_match_eq2_and_conventions():
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0], [0.0, 1.0, 3.0, 4.0]])
    a = group_advantages(r)
    for row, got in zip(r.numpy(), a.numpy()):
        expected = np.zeros(4) if np.all(row == row[0]) else (row - row.mean()) / row.std()
        np.testing.assert_allclose(got, expected, atol=1e-6)
    a1 = group_advantages(r, std_ddof=1, std_eps=1e-4)
    row = r[2].numpy()
    np.testing.assert_allclose(a1[2].numpy(), (row - row.mean()) / (row.std(ddof=1) + 1e-4), atol=1e-6)
    np.testing.assert_allclose(group_advantages(r, "shift")[2].numpy(), row - row.mean(), atol=1e-6)
    two = group_advantages(torch.tensor([[1.0, 0.0]]), std_ddof=1)
    np.testing.assert_allclose(two.numpy(), [[1 / math.sqrt(2), -1 / math.sqrt(2)]], atol=1e-6)


def test_objective_gradient_is_the_expected_flow_on_policy():
    """With pi_old = pi, the gradient of the GRPO objective in the logits is A grad log pi minus
    beta times (1 - pi_ref/pi) grad log pi (reverse) or log(pi/pi_ref) grad log pi (direct)."""
    torch.manual_seed(0)
    theta = torch.randn(3, requires_grad=True)
    ref = torch.log_softmax(torch.randn(3), 0)
    samples = torch.tensor([0, 2, 1, 2])
    adv = torch.tensor([0.5, -1.0, 0.3, 0.2])
    for penalty in ("reverse", "direct"):
        lp = torch.log_softmax(theta, 0)
        obj, _ = grpo_objective(Objective(beta=0.7, penalty=penalty), lp[samples][:, None],
                                lp[samples][:, None].detach(), ref[samples][:, None], adv)
        (g,) = torch.autograd.grad(obj, theta)
        pi = lp.exp().detach()
        expected = torch.zeros(3)
        for o, A in zip(samples.tolist(), adv.tolist()):
            grad_log = -pi.clone()
            grad_log[o] += 1
            pen = (1 - torch.exp(ref[o] - lp[o].detach())) if penalty == "reverse" else (lp[o].detach() - ref[o])
            expected += (A - 0.7 * pen) * grad_log
        np.testing.assert_allclose(g.numpy(), (expected / len(samples)).numpy(), atol=1e-6)


@pytest.fixture(scope="module")
def small_setup():
    """A reference for the structural tests (scoring against generation, resume, frozen parameters), which hold
    for any model: 100 pretraining steps (were 300), enough to move it off its initialisation."""
    torch.manual_seed(0)
    task, freqs = synthetic_binary_task(6, 1, seed=1)
    ref = pretrain_reference(task, freqs, steps=100, progress=False, seed=1)
    return task, freqs, ref


def test_restricted_scoring_is_a_distribution_and_matches_generation(small_setup):
    task, _, ref = small_setup
    probs = answer_probabilities(ref, task)
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-6)
    gen = torch.Generator().manual_seed(0)
    draws = generate(ref, task, 400, generator=gen).numpy()
    freq = np.stack([(draws == k).mean(1) for k in range(len(task.answers))], 1)
    se = np.sqrt(probs * (1 - probs) / 400)
    assert np.all(np.abs(freq - probs) < 4.5 * se + 1e-3)


def test_two_token_scoring_factorises():
    task, freqs = synthetic_binary_task(4, 2, seed=2)
    ref = pretrain_reference(task, freqs, steps=50, progress=False, seed=2)        # any model factorises (was 200)
    lp = answer_token_logprobs(ref, task)
    probs = lp.sum(-1).exp().detach().numpy()
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    first = lp[:, :, 0].exp().detach().numpy()
    np.testing.assert_allclose(first[:, 0], first[:, 1], atol=1e-6)      # (A,X) and (A,Y) share pi(A)


def test_resume_continues_where_it_stopped(small_setup, tmp_path):
    task, _, ref = small_setup
    cfg = GRPOConfig(objective=Objective(group_size=4, beta=0.5), steps=40, log_every=5, checkpoint_every=10, seed=3)
    full = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=tmp_path / "a", progress=False).train()
    part = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=tmp_path / "b", progress=False)
    part.train(stop_after=20)                       # as if the process died after step 20
    # ... having logged steps 21-22 past its last checkpoint: they are logged again on resume, once
    log = tmp_path / "b" / "metrics.csv"
    last = log.read_text().strip().splitlines()[-1].split(",", 1)[1]
    log.write_text(log.read_text() + "".join(f"{s},{last}\n" for s in (21, 22)))
    resumed = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=tmp_path / "b", progress=False)
    res = resumed.train(resume=True)
    assert res.steps == 40
    np.testing.assert_allclose(res.measured, full.measured, atol=1e-6)   # same seed, same path
    lines = (tmp_path / "b" / "metrics.csv").read_text().strip().splitlines()
    # one row per logged step (dense early, every 5 in mid-run, every step in the final window), none twice
    assert lines[0].startswith("step,") and len(lines) == 1 + len(full.history)
    assert [int(x.split(",")[0]) for x in lines[1:]] == [h["step"] for h in full.history]
    assert (tmp_path / "b" / "summary.json").exists() and (tmp_path / "b" / "config.json").exists()


def test_config_rejects_bad_values():
    """The objective's fields are checked once, by Objective; the config checks what only the trainer needs."""
    with pytest.raises(InvalidInputError, match="objective must be"):
        GRPOConfig(objective=dict(beta=0.5))
    with pytest.raises(InvalidInputError, match="group_size"):
        GRPOConfig(objective=Objective(beta=0.5, group_size=math.inf))
    with pytest.raises(InvalidInputError, match="variance_eps"):
        GRPOConfig(objective=Objective(beta=0.5, variance_eps=1e-6))
    with pytest.raises(InvalidInputError, match="groups_per_batch"):
        GRPOConfig(objective=Objective(beta=0.5, groups_per_batch=3), groups_per_question=16)
    with pytest.raises(InvalidInputError, match="sampling"):
        GRPOConfig(sampling="beam")
    with pytest.raises(TypeError):              # keyword-only, and no objective field restated
        GRPOConfig(beta=0.5)
    assert GRPOConfig(objective=Objective(beta=0.5, groups_per_batch=4)).objective.groups_per_batch == 4
    assert GRPOConfig().objective.groups_per_batch == math.inf    # the whole step's token count
    with pytest.raises(InvalidInputError, match=r"groups_per_batch=None.*math\.inf"):   # one spelling
        Objective(beta=0.5, groups_per_batch=None)


@pytest.mark.slow        # 23 s on two workers: the default suite is at its 300 s goal; the figures' and sweep's resume tests stay
def test_validate_killed_part_way_resumes_and_meets_a_loose_bound(tmp_path):
    """`grpo-theory validate --quick` (the CI version: G = 2 and 8, beta = 0.5, both penalties, 10
    questions, 400 steps) killed after its first run finished: --resume keeps that run, trains the rest,
    and the whole meets the reduced validation's loose bound and gives the numbers of the committed reference
    run (issue 20; one quick validation checks all three; they were separate tests, each training its own).
    The resumed process reloads the pretrained reference the first one saved (the numbers, equal to the
    reference run's, show it is the same model)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "v"
    cmd = [sys.executable, "-m", "grpo_theory.cli", "validate", "--quick", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = out / "runs" / "G2_beta0.5_reverse" / "summary.json"
    deadline = time.time() + 1800         # only a hung run gets here; a loaded machine is slow, not wrong
    while not first.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert first.exists(), "the first run never finished"
    metrics = (out / "runs" / "G2_beta0.5_reverse" / "metrics.csv").read_text()
    reference = (out / "reference_L1.pt").stat().st_mtime_ns       # saved after pretraining, before the runs
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "runs" / "G2_beta0.5_reverse" / "metrics.csv").read_text() == metrics   # not retrained
    assert (out / "reference_L1.pt").stat().st_mtime_ns == reference     # reloaded, not pretrained again
    import pandas as pd

    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 4 and (summary.steps == 400).all() and (summary.n_questions >= 10).all()
    rows = pd.read_csv(out / "results.csv")
    # A prompt whose P(correct) fell by > 0.9 during the run went through a collapse at Adam lr 3e-3. G = 8 direct
    # does, with either torch kernel set (2026-12-02, one AVX-512 machine, and with ATEN_CPU_CAPABILITY=avx2):
    # question 7 (pi_ref 0.048) in both, questions 4, 8, 9 too with AVX2 kernels. Where a collapsed prompt ends is path
    # luck (question 7: 0.751 with AVX2 kernels, 0.968 with AVX-512 ones, against 0.735 predicted), so the bound is
    # asserted on the other prompts; no reverse-penalty or G = 2 prompt may collapse.
    collapsed = rows.prompt_largest_drop > 0.9
    assert not collapsed[(rows.penalty == "reverse") | (rows.group_size == 2)].any(), rows[collapsed]
    kept = rows[~collapsed]
    err = kept.error.abs().groupby(kept.config)
    assert err.mean().max() < 0.02 and err.max().max() < 0.05, err.agg(["mean", "max"])
    assert (out / "results.csv").exists() and (out / "fig9_trained_vs_theory.png").exists()
    _same_numbers_as_the_reference(pd.read_csv(out / "results.csv"))


#: ``validate --quick``'s results.csv as written by the code before issue 20's redesign (d240a57, torch 2.13.0+cpu,
#: x86-64, one thread); the redesigned code reproduced it to the bit (docs/results.md, "Reproduction after the
#: redesign").
QUICK_REFERENCE = Path(__file__).parent / "data" / "validate_quick_reference.csv"
QUICK_COLUMNS = ["pi_ref_a", "predicted", "measured", "measured_se"]


def _same_numbers_as_the_reference(results):
    """The quick validation's numbers against QUICK_REFERENCE. pi_ref and the prediction within 1e-6 anywhere (the
    reference's pretraining samples with integer draws; float kernels differ by rounding only). The trained numbers
    within 1e-9 on the torch build that wrote the reference; on another build a last-bit difference in a kernel
    forks a run at the first sample it flips (measured: a 1-ulp gradient change moved G = 8's numbers by up to
    8e-3), so elsewhere only the loose bound above applies."""
    import pandas as pd

    ref = pd.read_csv(QUICK_REFERENCE)
    keys = ["config", "prediction", "question"]
    m = results.merge(ref, on=keys, suffixes=("", "_ref"), how="outer", indicator=True)
    assert (m["_merge"] == "both").all(), m.loc[m["_merge"] != "both", keys]
    gap = {c: float((m[c] - m[f"{c}_ref"]).abs().max()) for c in QUICK_COLUMNS}
    assert gap["pi_ref_a"] < 1e-6 and gap["predicted"] < 1e-6, gap
    # the reference's kernels: AVX2 (this CPU build picks AVX-512 ones where the CPU has them, and they fork the runs).
    # Not sufficient everywhere: on an AVX-512 CPU forced to AVX2 (ATEN_CPU_CAPABILITY=avx2) the measured numbers
    # differ by up to 0.031 (2026-12-02), so the bit-level match is a property of the machines CI ran on.
    if (torch.__version__ == "2.13.0+cpu" and platform.machine() == "x86_64"
            and torch.backends.cpu.get_cpu_capability() == "AVX2"):
        assert gap["measured"] < 1e-9 and gap["measured_se"] < 1e-9, gap


@pytest.mark.parametrize("loss_type,B", [("grpo", None), ("dr_grpo", None), ("dapo", None), ("dapo", 2),
                                         ("seq-mean-token-sum-norm", None), ("token-mean", 1)])
def test_token_level_loss_aggregation_matches_its_definition(loss_type, B):
    """grpo_objective's token aggregation, against explicit loops (on-policy, so rho = 1 and k3 = 0 at ref = old)."""
    from grpo_theory.problem import LOSS_TYPES
    from grpo_theory.training.loss import grpo_objective

    g = torch.Generator().manual_seed(0)
    nq, groups, G, T = 2, 4, 3, 4
    lengths = torch.randint(1, T + 1, (nq, groups, G), generator=g)
    mask = (torch.arange(T)[None, None, None, :] < lengths[..., None]).float()
    logp = torch.randn(nq, groups, G, T, generator=g, dtype=torch.float64) * mask
    adv = torch.randn(nq, groups, G, generator=g, dtype=torch.float64)
    o = Objective(beta=0.3, group_size=G, level="token", loss_type=loss_type,
                  groups_per_batch=math.inf if B is None else B)
    obj, _ = grpo_objective(o, logp, logp.detach(), logp.detach(), adv, mask=mask)
    # at rho = 1 each real token contributes A_i; k3 = 0 since logp_ref = logp
    kind = LOSS_TYPES[loss_type]
    if kind == "answer_mean":
        want = adv.mean()
    elif kind == "token_sum":
        want = (adv * lengths).mean()
    elif B is None:
        want = (adv * lengths).sum() / lengths.sum()
    else:
        chunks = [(adv[q, c:c + B] * lengths[q, c:c + B]).sum() / lengths[q, c:c + B].sum()
                  for q in range(nq) for c in range(0, groups, B)]
        want = torch.stack(chunks).mean()
    assert float(obj) == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_direct_penalty_gradient_is_bit_identical_to_the_committed_studies_form(dtype):
    """The direct penalty (k3_ratio) with the per-token ratio, written out as the committed studies were trained
    (validate_results, validate_seeds, multistable_optimizer, kl_study; tree_study was first trained with the
    shared ratio, 2026-11-30, and rerun in this form on 2026-12-02): the ratio in the penalty formed apart
    from the surrogate's. Same values either way, but a shared ratio changed the gradient's last bit (2e-10 of
    3e-3 in float32) and forked the quick study's G = 8 direct run at step ~90 (issue 20); the gradient must be
    equal to the bit."""
    g = torch.Generator().manual_seed(0)
    base = torch.randn(10, 64, 2, 1, generator=g, dtype=dtype)
    logp_old = (base + 0.01 * torch.randn(base.shape, generator=g, dtype=dtype)).detach()
    logp_ref = (base + 0.1 * torch.randn(base.shape, generator=g, dtype=dtype)).detach()
    adv = torch.randn(10, 64, 2, generator=g, dtype=dtype)
    beta, eps = 0.5, 0.2
    logp = base.clone().requires_grad_(True)
    obj, _ = grpo_objective(Objective(beta=beta, penalty="direct"), logp, logp_old, logp_ref, adv, clip_eps=eps)
    obj.backward()
    mine = base.clone().requires_grad_(True)
    ratio = torch.exp(mine - logp_old)
    a = adv.unsqueeze(-1)
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - eps, 1 + eps) * a)
    x = logp_ref - mine
    penalty = torch.exp(mine - logp_old) * (torch.exp(x) - x - 1.0)       # its own ratio
    want = (surrogate - beta * penalty).sum(-1).mean()
    want.backward()
    assert torch.equal(obj.detach(), want.detach())
    assert torch.equal(logp.grad, mine.grad), float((logp.grad - mine.grad).abs().max())


def test_token_level_training_on_an_answer_tree_lands_on_the_token_level_prediction():
    """A small version of the tree study: answers of 2, 3 and 5 tokens, reward on a later token, dapo with
    one group per token count. The token-level theory predicts it; the sequence-level one does not.

    200 pretraining and 250 training steps (were 600 and 500; the predictions are made from the reference's
    own probabilities, however far it was trained). Measured: token-level error mean 0.0015, max 0.0052;
    sequence-level max 0.072 (at 600/500: 0.0010, 0.0046, 0.079), so the sequence-level prediction in place
    of the token-level one fails the bound on the max error."""
    from grpo_theory import Question, stationary_policy
    from grpo_theory.training.tasks import synthetic_tree_task

    task, freqs = synthetic_tree_task("long", 4, seed=0)
    ref = pretrain_reference(task, freqs, steps=200, progress=False, seed=0)
    cfg = GRPOConfig(objective=Objective(group_size=8, beta=1.0, penalty="direct", level="token", loss_type="dapo",
                                         groups_per_batch=1),
                     steps=250, learning_rate=3e-3, groups_per_question=16, seed=0)
    res = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, progress=False).train()
    rp = answer_probabilities(ref, task)
    qs = [Question(rp[q] / rp[q].sum(), rewards=task.rewards[q], answers=task.answers) for q in range(4)]
    tok = np.array([stationary_policy(q, cfg.objective).pi for q in qs])
    seq = np.array([stationary_policy(q, dataclasses.replace(cfg.objective, level="sequence")).pi for q in qs])
    err_tok, err_seq = np.abs(res.measured - tok), np.abs(res.measured - seq)
    assert err_tok.mean() < 0.01 and err_tok.max() < 0.03, err_tok
    assert err_seq.max() > 3 * err_tok.max()


def test_restricted_generation_on_a_tree_stops_at_the_end_token_and_matches_scoring():
    from grpo_theory.training.tasks import synthetic_tree_task

    task, freqs = synthetic_tree_task("deep", 2, seed=1)
    ref = pretrain_reference(task, freqs, steps=50, progress=False, seed=1)        # holds for any model (was 200)
    probs = answer_probabilities(ref, task)
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-6)
    draws = generate(ref, task, 300, generator=torch.Generator().manual_seed(0)).numpy()
    freq = np.stack([np.bincount(d, minlength=len(task.answers)) / 300 for d in draws])
    assert np.abs(freq - probs).max() < 5 * np.sqrt(0.25 / 300)


def test_kl_study_writes_every_answer_with_its_prediction(tmp_path, monkeypatch):
    """The KL study end to end on a tiny budget (the study itself is experiments/kl_study.py). The reference is
    pretrained 20 steps, not 800 (the test's main cost): every prediction is made from whatever reference the
    study trained, so the checks below hold for any reference."""
    from grpo_theory.studies import kl
    from grpo_theory.studies.kl import run_kl_study

    real = kl.pretrain_reference
    monkeypatch.setattr(kl, "pretrain_reference", lambda *a, **kw: real(*a, **{**kw, "steps": 20}))  # cheap
    summary = run_kl_study(tmp_path, seeds=(0,), variants=["k1_reward", "k3_low_var_kl_0.8x_critical"], steps=20,
                           n_questions=2, progress=False)
    import pandas as pd

    rows = pd.read_csv(tmp_path / "kl_results.csv")
    assert list(summary.config) == ["k1_reward", "k3_low_var_kl_0.8x_critical"]
    assert len(rows) == 2 * 2 * 2 and rows.predicted.between(0, 1).all()
    clamp = rows[rows.config == "k3_low_var_kl_0.8x_critical"]
    assert clamp.predicted_collapse.all() and (clamp.beta < clamp.critical_beta).all()
    reward = rows[rows.config == "k1_reward"]
    np.testing.assert_allclose(reward.predicted, reward.log_pooling, atol=1e-7)     # KL in the reward: RLHF


def test_tree_study_with_one_loss_type_writes_its_tables(tmp_path, monkeypatch):
    """run_tree_study with a single loss type (a subset, as issue 20's rerun used) writes its tables; it crashed
    after training on max() of no other loss types. The gap to other loss types is then NaN, not 0."""
    import pandas as pd

    from grpo_theory.studies import tree

    real = tree.pretrain_reference
    monkeypatch.setattr(tree, "pretrain_reference", lambda *a, **kw: real(*a, **{**kw, "steps": 20}))  # cheap
    summary = tree.run_tree_study(tmp_path, seeds=(0,), shapes=("lengths",), losses=(("grpo", math.inf),), steps=3,
                                  n_questions=2, progress=False)
    rows = pd.read_csv(tmp_path / "tree_results.csv")
    assert list(summary.config) == ["lengths_grpo_Ball"] and summary.max_gap_to_other_loss_types.isna().all()
    assert len(rows) == 2 * 3 and rows.predicted.between(0, 1).all()


def test_the_loss_takes_the_kl_options_from_the_objective():
    """grpo_objective reads the estimator, placement and clamps from the Objective: the penalty shorthand and
    the estimator it stands for give the same loss, a clamp changes it, and loose fields are refused."""
    from grpo_theory.training.loss import grpo_objective

    assert GRPOConfig(objective=Objective(beta=0.5, kl_estimator="k2")).objective.regime == "direct"
    g = torch.Generator().manual_seed(1)
    logp = torch.randn(2, 3, 4, 1, generator=g, dtype=torch.float64)
    ref = logp + 3.0 * torch.randn(logp.shape, generator=g, dtype=torch.float64)
    old = logp + 0.3 * torch.randn(logp.shape, generator=g, dtype=torch.float64)     # off-policy: ratio != 1
    adv = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)

    def loss(**kw):
        return float(grpo_objective(Objective(beta=0.5, group_size=4, **kw), logp, old, ref, adv)[0])
    assert loss(penalty="direct") == loss(kl_estimator="k3_ratio") != loss(penalty="reverse")
    assert loss(kl_estimator="k3", kl_value_clamp=0.5) != loss(kl_estimator="k3")
    with pytest.raises(TypeError):
        grpo_objective(logp, logp.detach(), ref, adv, beta=0.5)


def test_a_resume_refuses_the_checkpoint_of_another_run_naming_what_differs(small_setup, tmp_path):
    """What defines a run is in its config.json: a resume with another learning rate or objective is refused,
    naming the field and both values; a field of how it runs (threads) may change."""
    task, _, ref = small_setup
    cfg = GRPOConfig(objective=Objective(group_size=4, beta=0.5), steps=8, log_every=2, checkpoint_every=2, seed=3)
    GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=tmp_path, progress=False).train(stop_after=2)
    for change, shown in [(dict(learning_rate=1e-3), "learning_rate: 0.003 in the checkpoint's run, 0.001 now"),
                          (dict(objective=Objective(group_size=4, beta=0.25)), "objective: ")]:
        other = GRPOTrainer(copy.deepcopy(ref), task, dataclasses.replace(cfg, **change), reference=ref,
                            run_dir=tmp_path, progress=False)
        with pytest.raises(InvalidInputError, match="is of another run") as err:
            other.train(resume=True)
        assert shown in str(err.value)
    import json

    record = json.loads((tmp_path / "config.json").read_text())
    for shift, refused in [(0.01, True), (1e-7, False)]:          # another model; a forward pass's last digits
        edited = dict(record, reference_probs=(np.asarray(record["reference_probs"]) + shift).tolist())
        (tmp_path / "config.json").write_text(json.dumps(edited))
        other = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=tmp_path, progress=False)
        if refused:
            with pytest.raises(InvalidInputError, match="reference_probs: "):
                other.train(resume=True)
    same = GRPOTrainer(copy.deepcopy(ref), task, dataclasses.replace(cfg, num_threads=None), reference=ref,
                       run_dir=tmp_path, progress=False)
    assert same.train(resume=True).steps == 8


def test_a_run_of_one_logged_row_reports_no_convergence_check_and_says_why(small_setup):
    """A line through the tail needs two rows (check_trajectories); one step logs one: no report, and the study's
    columns say 'unchecked' with the reason (it raised 'steps must be 1-d ...' from inside the trainer)."""
    from grpo_theory.convergence import check_trajectories, report_columns

    task, _, ref = small_setup
    cfg = GRPOConfig(objective=Objective(group_size=2, beta=0.5), steps=1, seed=0)
    res = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, progress=False).train()
    assert len(res.history) == 1 and res.convergence is None
    cols = report_columns(res.convergence, 0)
    assert cols["conv_status"] == "unchecked" and "fewer than 2 logged rows" in cols["conv_reason"]
    with pytest.raises(InvalidInputError, match="at least 2"):
        check_trajectories([10.0], [0.5])


def test_frozen_parameters_are_neither_trained_nor_checkpointed(small_setup, tmp_path):
    """A model that freezes part of itself: only the rest moves, the checkpoint holds only the rest,
    and a resumed run follows the uninterrupted one."""
    task, _, ref = small_setup
    cfg = GRPOConfig(objective=Objective(group_size=4, beta=0.5), steps=30, log_every=5, checkpoint_every=10, seed=1)

    def frozen_copy():
        m = copy.deepcopy(ref)
        for name, p in m.named_parameters():
            p.requires_grad_(not name.startswith(("tok.", "pos.", "blocks.0.")))
        return m

    full_model = frozen_copy()
    full = GRPOTrainer(full_model, task, cfg, reference=ref, run_dir=tmp_path / "a", progress=False).train()
    before, after = dict(ref.named_parameters()), dict(full_model.named_parameters())
    frozen = [n for n, p in after.items() if not p.requires_grad]
    assert frozen and all(torch.equal(after[n], before[n]) for n in frozen)
    assert any(not torch.equal(after[n], before[n]) for n, p in after.items() if p.requires_grad)
    saved = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["model"]
    assert set(saved) == {n for n, p in after.items() if p.requires_grad}
    part = GRPOTrainer(frozen_copy(), task, cfg, reference=ref, run_dir=tmp_path / "b", progress=False)
    part.train(stop_after=10)
    resumed = GRPOTrainer(frozen_copy(), task, cfg, reference=ref, run_dir=tmp_path / "b", progress=False)
    res = resumed.train(resume=True)
    np.testing.assert_allclose(res.measured, full.measured, atol=1e-6)
    with pytest.raises(ValueError, match="nothing to train"):
        GRPOTrainer(copy.deepcopy(ref).requires_grad_(False), task, cfg, reference=ref, progress=False)


def test_alone_trains_each_question_by_its_own_model(tmp_path, monkeypatch):
    """validate(alone=True) gives, for each question, exactly a run on that question alone."""
    from grpo_theory.studies import small
    from grpo_theory.studies.small import run_validation

    # the reference validate pretrains, kept (not pretrained a second time here); the run below starts from a
    # deep copy of it, as validate's runs do. It is pretrained 50 steps, not validate's 800 (the test's main
    # cost): both sides start from that same reference, so what is compared is the same; the call's own
    # arguments (this task's, seed 0, 800 steps) are recorded and checked
    made = []

    def keep(*args, **kwargs):
        made.append((args, kwargs, pretrain_reference(*args, **{**kwargs, "steps": 50})))
        return made[-1][2]

    monkeypatch.setattr(small, "pretrain_reference", keep)
    run_validation(tmp_path / "v", quick=True, n_questions=2, steps=20, configs=["G2_beta0.5_reverse"], alone=True,
                   progress=False, figures=False)
    import pandas as pd

    got = pd.read_csv(tmp_path / "v" / "results.csv")
    task, freqs = synthetic_binary_task(2, 1, seed=0)
    (args, kwargs, ref), = made
    np.testing.assert_array_equal(args[1], freqs)           # validate's reference: this task's, seed 0
    assert kwargs["seed"] == 0 and kwargs["steps"] == 800 and args[0].rewards.tolist() == task.rewards.tolist()
    cfg = GRPOConfig(objective=Objective(group_size=2, beta=0.5, penalty="reverse"), steps=20, learning_rate=3e-3,
                     groups_per_question=64)
    one = GRPOTrainer(copy.deepcopy(ref), task.subset([1]), cfg, reference=ref, progress=False).train()
    best = int(np.argmax(task.rewards[1]))
    assert got.measured.iloc[1] == pytest.approx(one.measured[0, best], abs=1e-9)
    with pytest.raises(ValueError, match="unknown configs"):
        run_validation(tmp_path / "w", quick=True, configs=["G3_nothing"], progress=False)


def test_wilson_interval_matches_scipy():
    from scipy.stats import binomtest

    from grpo_theory.training.free_generation import wilson_interval

    for k, n in [(0, 48), (3, 48), (24, 48), (48, 48), (137, 400)]:
        ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
        np.testing.assert_allclose(wilson_interval(k, n), (ci.low, ci.high), atol=2e-4)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(5, 4)


def test_warmup_rises_linearly_then_the_schedule_decays():
    """warmup_steps (TRL's name): lr x (s + 1) / W for the first W steps, times the linear decay to
    final_lr_fraction over `steps`; a bad value is refused with the value in the message."""
    from types import SimpleNamespace

    from grpo_theory.training import GRPOConfig, GRPOTrainer

    cfg = GRPOConfig(steps=100, learning_rate=1e-3, warmup_steps=10, final_lr_fraction=0.05)
    lr = [GRPOTrainer._lr(SimpleNamespace(cfg=cfg, step=s)) for s in range(150)]
    decay = [1e-3 * (1 - 0.95 * min(1.0, s / 100)) for s in range(150)]
    expected = [d * min(1.0, (s + 1) / 10) for s, d in enumerate(decay)]
    np.testing.assert_allclose(lr, expected, rtol=1e-12)
    assert lr[0] == pytest.approx(1e-4 * 1.0) and lr[9] == pytest.approx(1e-3 * (1 - 0.95 * 0.09))
    with pytest.raises(ValueError, match="warmup_steps must be .* got 101"):
        GRPOConfig(steps=100, warmup_steps=101)


def test_the_kl_and_tree_studies_take_the_objective_whole(tmp_path, monkeypatch):
    """run_kl_study(obj=...) and run_tree_study(obj=...): one spelling for the objective they start from (its
    beta and G reach the rows); the tree study refuses a sequence-level one before training anything."""
    import pandas as pd

    from grpo_theory.studies import kl, tree

    with pytest.raises(InvalidInputError, match="level='token'"):
        tree.run_tree_study(tmp_path / "t", obj=Objective(beta=1.0, penalty="direct"), progress=False)
    with pytest.raises(InvalidInputError, match="obj must be an Objective"):
        kl.run_kl_study(tmp_path / "k", obj={"beta": 0.7}, progress=False)
    real = kl.pretrain_reference
    monkeypatch.setattr(kl, "pretrain_reference", lambda *a, **kw: real(*a, **{**kw, "steps": 20}))  # cheap
    obj = Objective(beta=0.7, group_size=4, std_ddof=1, std_eps=1e-4)
    summary = kl.run_kl_study(tmp_path / "k", seeds=(0,), variants=["k1_reward"], steps=5, n_questions=2, obj=obj,
                              progress=False)
    rows = pd.read_csv(tmp_path / "k" / "kl_results.csv")
    assert (rows.beta == 0.7).all() and "G=4" in summary.objective[0]
    np.testing.assert_allclose(rows.predicted, rows.log_pooling, atol=1e-7)     # KL in the reward, at beta 0.7
