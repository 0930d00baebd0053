"""Regression tests for the sixth hostile audit's findings that are fixed (docs/reliability.md, "Hostile input,
sixth round"): the command line's standard output closed by its reader, full, or closed at start; the trainer's
group advantage at rewards whose squared deviations underflow or overflow."""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = f"{sys.executable} -c 'import sys; from grpo_theory.cli import main; sys.exit(main())'"
SOLVE = "solve --pi-ref 0.3 0.7 --rewards 1 0 --beta 0.5 --group-size 8"


def _bash(cmd: str, tmp_path: Path) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    p = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stderr


@pytest.mark.parametrize("tail", ["| true", "--json | head -c 10 > /dev/null"])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path, tail):
    rc, err = _bash(f"{CLI} {SOLVE} {tail}", tmp_path)
    # as `yes | head`: no traceback, no 'Exception ignored'; `head` may read all before it exits (a race), then 0
    assert (rc == 141 or (rc == 0 and "head" in tail)) and err == "", (rc, err)


def test_a_full_standard_output_is_one_line(tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    rc, err = _bash(f"{CLI} {SOLVE} --json > /dev/full", tmp_path)
    assert rc == 2 and err.splitlines() == [
        "grpo-theory: error: cannot write the output of `solve` to the standard output: No space left on device"], err


def test_a_closed_standard_output_is_refused(tmp_path):
    rc, err = _bash(f"{CLI} {SOLVE} >&-", tmp_path)
    assert rc == 2 and err.strip() == "grpo-theory: error: the standard output is closed; `solve` has nowhere to print"


def test_a_failing_file_write_is_not_taken_for_the_standard_output(monkeypatch, capsys):
    """Only a failed write to stdout is answered as such: an ENOSPC from a file the command writes keeps its
    traceback (it names no file, so it is not the user's input)."""
    import errno

    from grpo_theory import cli

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device")

    class Parser:
        def parse_args(self, argv):
            return argparse.Namespace(command="solve", func=full)
    monkeypatch.setattr(cli, "build_parser", Parser)
    with pytest.raises(OSError, match="No space"):
        cli.main(SOLVE.split())
    assert sys.stdout is not None and not isinstance(sys.stdout, cli._WatchedStdout)   # restored


@pytest.mark.parametrize("rewards, want", [
    ([1e-300, 0.0, 0.0], [math.sqrt(2), -1 / math.sqrt(2), -1 / math.sqrt(2)]),
    ([1e200, -1e200], [1.0, -1.0]),
    ([[3e-200, 1e-200], [5.0, 5.0]], [[1.0, -1.0], [0.0, 0.0]]),
])
def test_group_advantages_at_extreme_rewards(rewards, want):
    torch = pytest.importorskip("torch")
    from grpo_theory.training import group_advantages

    got = group_advantages(torch.tensor(rewards, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_group_advantages_keeps_the_epsilons_in_units_of_the_rewards():
    """``(r - mean)/(sqrt(var + variance_eps) + std_eps)`` by hand, at rewards of order 1e-3."""
    torch = pytest.importorskip("torch")
    from grpo_theory.training import group_advantages

    r = np.array([3e-3, 1e-3, 2e-3, 2e-3])
    got = group_advantages(torch.tensor(r), std_ddof=1, std_eps=1e-4, variance_eps=1e-7).numpy()
    want = (r - r.mean()) / (math.sqrt(r.var(ddof=1) + 1e-7) + 1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---------------------------------------------------------------- TRL probes, caps on work, checked inputs
@pytest.mark.parametrize("args, kw, names", [
    (("Q", ("A", "B"), (1.0,)), {}, ["rewards", "2 answers"]),
    (("Q", (), ()), {}, ["answers"]),
    (("Q", ("A", "A"), (1.0, 0.0)), {}, ["'A'", "twice"]),
    (("Q", ("A", "B"), (math.nan, 0.0)), {}, ["rewards", "nan"]),
    (("Q", ("A", "B"), (1.0, 0.0)), dict(other_reward=math.inf), ["other_reward", "inf"]),
    (("Q", "AB", (1.0, 0.0)), {}, ["answers", "'AB'"]),
    (("Q", ("", "B"), (1.0, 0.0)), {}, ["answers"]),
    ((None, ("A", "B"), (1.0, 0.0)), {}, ["prompt", "None"]),
])
def test_a_malformed_probe_is_refused_naming_the_field(args, kw, names):
    from grpo_theory import InvalidInputError
    from grpo_theory.integrations.trl import Probe

    with pytest.raises(InvalidInputError) as err:
        Probe(*args, **kw)
    assert all(n in str(err.value) for n in names), str(err.value)


def test_a_probe_question_names_probs_of_the_wrong_length():
    from grpo_theory import InvalidInputError
    from grpo_theory.integrations.trl import Probe

    p = Probe("Q", ["A", "B"], [1, 0], other_reward=0.5)
    with pytest.raises(InvalidInputError, match="probs must hold one probability per answer and one for 'other'"):
        p.question([0.5, 0.5])
    np.testing.assert_array_equal(p.question([0.2, 0.3, 0.5]).expected_reward, [1.0, 0.0, 0.5])


def test_work_that_would_not_finish_is_refused_with_the_limit():
    from grpo_theory import InvalidInputError, Objective, Question, dynamics
    from grpo_theory.predict import reward_kl_tradeoff, samples_from_counts, sampling_floor

    q, obj = Question([0.05, 0.95], [1, 0]), Objective(beta=0.2, group_size=2)
    with pytest.raises(InvalidInputError, match="period x n_grid = 401,000,000 times"):
        dynamics.map_cycles(q, obj, 10**6, n_grid=401)
    with pytest.raises(InvalidInputError, match="1,000,000,001 terms, above the limit of 20,000,000"):
        sampling_floor([0.5], [10**9])
    with pytest.raises(InvalidInputError, match="1 to 1,000 positive numbers .* got 1,000,000"):
        reward_kl_tradeoff(samples_from_counts([20], [4]), obj, np.linspace(0.1, 10, 10**6))


@pytest.mark.parametrize("q, m, names", [([1.5], [4], ["q", "1.5"]), ([math.nan], [4], ["q", "nan"]),
                                         ([0.5], [0], ["m", "0"]), ([0.5], [2.5], ["m", "2.5"]),
                                         ([0.5, 0.4], [4, 5, 6], ["2 q and 3 m"]), ([], [], ["0 q"])])
def test_sampling_floor_checks_its_inputs(q, m, names):
    from grpo_theory import InvalidInputError
    from grpo_theory.predict import sampling_floor

    with pytest.raises(InvalidInputError) as err:
        sampling_floor(q, m)
    assert all(n in str(err.value) for n in names), str(err.value)


def test_sampling_floor_by_hand():
    """``E|Bin(m, q)/m - q|`` summed with math.comb; one m for all prompts broadcasts."""
    from grpo_theory.predict import sampling_floor

    def floor(q, m):
        return sum(math.comb(m, k) * q ** k * (1 - q) ** (m - k) * abs(k / m - q) for k in range(m + 1))
    assert sampling_floor([0.1, 0.9], 7) == pytest.approx((floor(0.1, 7) + floor(0.9, 7)) / 2, rel=1e-12)
    assert sampling_floor([0.0, 1.0, 0.33], [5, 5, 11]) == pytest.approx(floor(0.33, 11) / 3, rel=1e-12)


@pytest.mark.parametrize("betas, names", [([], ["got 0"]), ([-0.5], ["betas", "-0.5"]), ([0.0], ["betas", "0.0"]),
                                          (["0.5"], ["betas", "'0.5'"]), (0.5, ["betas", "single value 0.5"])])
def test_reward_kl_tradeoff_checks_its_betas(betas, names):
    from grpo_theory import InvalidInputError, Objective
    from grpo_theory.predict import reward_kl_tradeoff, samples_from_counts

    with pytest.raises(InvalidInputError) as err:
        reward_kl_tradeoff(samples_from_counts([20, 20], [4, 12]), Objective(beta=0.5), betas)
    assert all(n in str(err.value) for n in names), str(err.value)


def test_reward_kl_tradeoff_takes_beta_0_with_an_entropy_bonus():
    """G = 4, c = 1, beta = 0: P(correct) = 0.8416 whatever p_ref (docs/guide.md); no KL pull."""
    from grpo_theory import Objective
    from grpo_theory.predict import reward_kl_tradeoff, samples_from_counts

    t = reward_kl_tradeoff(samples_from_counts([20, 20], [4, 12]), Objective(beta=0.5, group_size=4,
                                                                               entropy_coef=1.0), [0.0])
    assert t.mean_pred.iloc[0] == pytest.approx(0.8416, abs=1e-4)


@pytest.mark.parametrize("kw, names", [
    (dict(t_max=0.0), ["t_max", "0.0"]), (dict(t_max=math.inf), ["t_max", "inf"]), (dict(tol=1.5), ["tol", "1.5"]),
    (dict(tol="1e-6"), ["tol", "'1e-6'"]), (dict(max_exact=2.5), ["max_exact", "2.5"]),
    (dict(progress="yes"), ["progress", "'yes'"]), (dict(levels=[0, 2]), ["levels=[0.0, 2.0]", "[0.0, 1.0]"]),
    (dict(levels=[0, math.nan]), ["levels", "nan"]), (dict(slow_tol=0.0), ["slow_tol"]),
    (dict(clock=0.01, steps=["10"]), ["steps", "'10'"]), (dict(finite_level=1.2), ["finite_level", "1.2"]),
    (dict(seed=-3), ["seed", "-3"]), (dict(id_column=5), ["id_column", "5"]),
])
def test_predict_checks_its_keywords_from_python(kw, names):
    from grpo_theory import InvalidInputError, Objective
    from grpo_theory.predict import predict, samples_from_counts

    with pytest.raises(InvalidInputError) as err:
        predict(samples_from_counts([10, 8], [3, 1]), Objective(beta=0.5, group_size=4), **kw)
    assert all(n in str(err.value) for n in names), str(err.value)


def test_predict_keeps_its_valid_keywords():
    """The same levels in another order, progress off and a short horizon give Eq. 14 at G = 2."""
    from grpo_theory import Objective
    from grpo_theory.predict import predict, samples_from_counts

    p = 0.3
    b = 1 / 0.5                                         # Eq. 14, gamma/beta with gamma = 1, beta = 0.5
    want = 2 * p / (1 - b + math.sqrt((1 - b) ** 2 + 4 * b * p)) if b <= 1 else (b - 1 + math.sqrt(
        (1 - b) ** 2 + 4 * b * p)) / (2 * b)
    t = predict(samples_from_counts([10], [3]), Objective(beta=0.5, group_size=2), levels=(1, 0), progress=False,
                t_max=50.0, tol=1e-9, seed=0).table
    assert float(t.pred[0]) == pytest.approx(want, abs=1e-7)


@pytest.mark.parametrize("kw, names", [
    (dict(clip_eps=-0.2), ["clip_eps", "-0.2"]), (dict(learning_rate="3e-4"), ["learning_rate", "'3e-4'"]),
    (dict(learning_rate=math.inf), ["learning_rate", "inf"]), (dict(final_lr_fraction=1.5), ["final_lr_fraction"]),
    (dict(questions_per_step=0), ["questions_per_step", "0"]), (dict(steps=2.5), ["steps", "2.5"]),
    (dict(device="tpu"), ["device", "'tpu'"]), (dict(dtype="float8"), ["dtype", "'float8'"]),
    (dict(log_every=0), ["log_every"]), (dict(checkpoint_every=-5), ["checkpoint_every", "-5"]),
    (dict(seed=1.5), ["seed", "1.5"]), (dict(inner_updates=1.5), ["inner_updates", "1.5"]),
])
def test_the_trainer_config_checks_every_number(kw, names):
    pytest.importorskip("torch")
    from grpo_theory import InvalidInputError
    from grpo_theory.training import GRPOConfig

    with pytest.raises(InvalidInputError) as err:
        GRPOConfig(**kw)
    assert all(n in str(err.value) for n in names), str(err.value)


@pytest.mark.parametrize("make, names", [
    (lambda t: t.GPTConfig(vocab_size=0), ["vocab_size", "0"]),
    (lambda t: t.GPTConfig(vocab_size=10, n_embd=65), ["n_embd=65", "n_head=4"]),
    (lambda t: t.GPTConfig(vocab_size=10, dropout=1.5), ["dropout", "1.5"]),
    (lambda t: t.synthetic_binary_task(n_questions=0), ["n_questions", "0"]),
    (lambda t: t.synthetic_binary_task(p_range=(0.0, 1.0)), ["p_range"]),
    (lambda t: t.synthetic_binary_task(p_range=(0.5,)), ["p_range", "[0.5]"]),
])
def test_the_model_and_task_configs_check_their_numbers(make, names):
    pytest.importorskip("torch")
    from grpo_theory import InvalidInputError
    from grpo_theory import training

    with pytest.raises(InvalidInputError) as err:
        make(training)
    assert all(n in str(err.value) for n in names), str(err.value)


@pytest.mark.parametrize("call, names", [
    (lambda pr, o: pr.fit_shift([0.0], [11], [10]), ["k <= m", "[0]"]),
    (lambda pr, o: pr.fit_shift([math.nan], [3], [10]), ["z0", "nan"]),
    (lambda pr, o: pr.fit_shift([0.0, 1.0], [3], [10]), ["2 z0", "1 k"]),
    (lambda pr, o: pr.fit_shift([0.0], [2.5], [10]), ["k", "2.5"]),
    (lambda pr, o: pr.binary_question("0.3"), ["p", "'0.3'"]),
    (lambda pr, o: pr.binary_question(1.5), ["p", "1.5"]),
    (lambda pr, o: pr.PromptField(o, [0.3], z_step=0.0), ["z_step", "0.0"]),
    (lambda pr, o: pr.PromptField(o, [0.3], tol=math.nan), ["tol", "nan"]),
    (lambda pr, o: pr.flow_table([0.3], o, n_times=2.5), ["n_times", "2.5"]),
    (lambda pr, o: pr.flow_table([0.3], o, n_times=0), ["n_times", "0"]),
    (lambda pr, o: pr.flow_table([0.3], o, max_exact=0), ["max_exact", "0"]),
    (lambda pr, o: pr.flow_table(["a"], o), ["starts", "'a'"]),
])
def test_the_finite_time_pieces_check_their_arguments(call, names):
    from grpo_theory import InvalidInputError, Objective
    from grpo_theory import predict as pr

    with pytest.raises(InvalidInputError) as err:
        call(pr, Objective(beta=0.5, group_size=2))
    assert all(n in str(err.value) for n in names), str(err.value)


def test_fit_shift_and_binary_question_keep_their_answers():
    """``fit_shift``: ``expit(4 + c) = 1/20`` by hand; all correct is the documented edge +50; p = 0 is valid."""
    from grpo_theory.predict import binary_question, fit_shift

    assert fit_shift([4.0], [1], [20]) == pytest.approx(math.log(1 / 19) - 4.0, abs=1e-9)
    assert fit_shift([0.0], [10], [10]) == 50.0
    assert binary_question(0).pi_ref.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("rewards, kw, names", [([1.0], {}, ["G >= 2", "(1,)"]), ([1.0, math.nan], {}, ["rewards hold a NaN"]),
                                                ([1.0, 0.0, 0.5], dict(std_ddof=2), ["std_ddof", "2"]),
                                                ([1.0, 0.0], dict(std_eps=-1.0), ["std_eps", "-1.0"])])
def test_group_advantages_checks_its_arguments(rewards, kw, names):
    torch = pytest.importorskip("torch")
    from grpo_theory import InvalidInputError
    from grpo_theory.training import group_advantages

    with pytest.raises(InvalidInputError) as err:
        group_advantages(torch.tensor(rewards, dtype=torch.float64), **kw)
    assert all(n in str(err.value) for n in names), str(err.value)


@pytest.mark.parametrize("call, names", [
    (lambda dy, q, o, pi: dy.ascent(q, o, pi, lr="0.1", steps=3), ["lr", "'0.1'"]),
    (lambda dy, q, o, pi: dy.grpo_steps(q, o, pi, lr=0.1, n_batches=3, inner_updates=1.5), ["inner_updates", "1.5"]),
    (lambda dy, q, o, pi: dy.grpo_steps(q, o, pi, lr=0.1, n_batches=3, seed=-1), ["seed", "-1"]),
    (lambda dy, q, o, pi: dy.grpo_steps(q, o, pi, lr=0.1, n_batches=3, seed="a"), ["seed", "'a'"]),
    (lambda dy, q, o, pi: dy.flow(q, o, pi, [0, 1], rtol="1e-9"), ["rtol", "'1e-9'"]),
    (lambda dy, q, o, pi: dy.flow(q, o, pi, [0, 1], rtol=-1e-9), ["rtol", "-1e-09"]),
    (lambda dy, q, o, pi: dy.flow(q, o, pi, [0, 1], rtol=10.0), ["rtol", "10.0"]),
    (lambda dy, q, o, pi: dy.flow(q, o, pi, [0, 1], atol=math.nan), ["atol", "nan"]),
    (lambda dy, q, o, pi: dy.arcsin_potential(math.nan), ["p", "nan"]),
])
def test_the_dynamics_check_rates_seeds_and_tolerances(call, names):
    from grpo_theory import InvalidInputError, Objective, Question, dynamics

    with pytest.raises(InvalidInputError) as err:
        call(dynamics, Question([0.3, 0.7], [1, 0]), Objective(beta=0.5, group_size=2), np.array([0.3, 0.7]))
    assert all(n in str(err.value) for n in names), str(err.value)


def test_fit_clock_names_a_nan_mean_reward_and_grpo_steps_keeps_clip_eps_inf():
    from grpo_theory import InvalidInputError, Objective, Question, dynamics
    from grpo_theory.predict import fit_clock, flow_table

    obj = Objective(beta=0.5, group_size=2)
    with pytest.raises(InvalidInputError, match="mean_reward must be a finite number in"):
        fit_clock(flow_table([0.2, 0.5], obj, t_max=100.0, n_times=50), [0.2, 0.5], step=10.0, mean_reward=math.nan)
    q, pi0 = Question([0.3, 0.7], [1, 0]), np.array([0.3, 0.7])
    a = dynamics.grpo_steps(q, obj, pi0, lr=0.1, n_batches=3, clip_eps=math.inf, with_points=False).final
    b = dynamics.grpo_steps(q, obj, pi0, lr=0.1, n_batches=3, clip_eps=0.2, with_points=False).final
    np.testing.assert_allclose(a, b, rtol=1e-12)      # one inner update: the ratio is 1, no clip acts


class _Tok:
    """A stand-in tokenizer whose vocabulary is A-E."""

    vocab = {t: i for i, t in enumerate("ABCDE")}

    def convert_tokens_to_ids(self, token):
        return self.vocab.get(token)


@pytest.mark.parametrize("kw, names", [(dict(every=0), ["every", "0"]), (dict(every=2.5), ["every", "2.5"]),
                                       (dict(probes=[]), ["probes", "[]"]), (dict(probes=["Q"]), ["probes", "'Q'"]),
                                       (dict(tokenizer=None), ["tokenizer", "NoneType"]),
                                       (dict(answers=("A", "Zz")), ["one token", "'Zz'"])])
def test_the_tracking_callback_checks_before_training(kw, names):
    pytest.importorskip("transformers")
    from grpo_theory import InvalidInputError
    from grpo_theory.integrations.trl import Probe, make_tracking_callback

    args = dict(probes=[Probe("Q", kw.pop("answers", ("A", "B")), (1.0, 0.0))], tokenizer=_Tok(),
                config={"beta": 0.1, "num_generations": 4})
    args.update(kw)
    with pytest.raises(InvalidInputError) as err:
        make_tracking_callback(**args)
    assert all(n in str(err.value) for n in names), str(err.value)


def test_three_messages_name_what_the_user_gave(tmp_path, monkeypatch, capsys):
    """Empty reward levels are named as such; a verl kl_penalty is checked even where the loss's KL is used; a bad
    --fit mean reward names --fit, not predict()'s keyword."""
    from grpo_theory import InvalidInputError, Question
    from grpo_theory.cli import main
    from grpo_theory.integrations.verl import read_verl_config

    with pytest.raises(InvalidInputError, match=r"reward_levels must hold at least one level, got \[\]"):
        Question([0.3, 0.7], reward_levels=[], reward_probs=[[], []])
    cfg = {"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": True, "kl_penalty": "k9"},
           "actor_rollout_ref": {"actor": {"use_kl_loss": True, "kl_loss_coef": 0.2}, "rollout": {"n": 4}}}
    with pytest.raises(InvalidInputError, match="algorithm.kl_penalty='k9'"):
        read_verl_config(cfg)
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\nb,8,1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["predict", "s.csv", "--beta", "0.5", "--fit", "10", "1.5", "--out", "o", "--no-plots",
                 "--no-progress"]) == 2
    assert "--fit MEAN_REWARD must be a finite number in [0.0, 1.0], got 1.5" in capsys.readouterr().err


@pytest.mark.parametrize("fn", ["estimator_value", "coefficient", "value_slope", "value_shift", "flow_log_ratio"])
@pytest.mark.parametrize("lr, names", [("0.5", ["lr", "'0.5'"]), (None, ["lr", "None"]), (["a", "b"], ["lr", "'a'"]),
                                       (1 + 2j, ["lr", "(1+2j)"])])
def test_the_kl_helpers_refuse_log_ratios_that_are_not_numbers(fn, lr, names):
    from grpo_theory import InvalidInputError, Objective, kl

    obj = Objective(beta=0.5, group_size=2, kl_estimator="k3", kl_placement="reward" if fn == "value_shift" else "loss")
    with pytest.raises(InvalidInputError) as err:
        getattr(kl, fn)(obj, lr)
    assert all(n in str(err.value) for n in names), str(err.value)


@pytest.mark.parametrize("obj", [None, {"beta": 2.0, "kl_estimator": "k2", "kl_placement": "reward"}])
def test_the_kl_helpers_name_an_objective_that_is_not_one(obj):
    from grpo_theory import InvalidInputError, kl

    with pytest.raises(InvalidInputError, match="obj must be a grpo_theory.Objective"):
        kl.value_shift(obj, 3.0)


@pytest.mark.parametrize("fn", ["output_gradient", "potential_objective"])
@pytest.mark.parametrize("pi, names", [([0.3, 0.3, 0.4], ["2 probabilities", "(3,)"]), ([[0.3, 0.7]], ["pi"]),
                                       (None, ["pi"]), (["0.3", "0.7"], ["pi", "'0.3'"])])
def test_the_gradient_and_the_potential_name_a_pi_of_the_wrong_shape(fn, pi, names):
    import math as _m

    from grpo_theory import InvalidInputError, Objective, Question, dynamics

    obj = Objective(beta=1.0, group_size=_m.inf)
    with pytest.raises(InvalidInputError) as err:
        getattr(dynamics, fn)(Question([0.3, 0.7], [1, 0]), obj, pi)
    assert all(n in str(err.value) for n in names), str(err.value)


@pytest.mark.parametrize("argv, names", [
    (["--study", "small", "--beta", "0.3"], ["--beta is read by --study trl only", "--study small"]),
    (["--study", "trl", "--prompts", "5"], ["--prompts", "--study trl"]),
    (["--study", "tree", "--trainable", "top-2"], ["--trainable", "--study tree"]),
    (["--study", "kl", "--quick"], ["--quick", "--study kl"]),
    (["--study", "kl", "--pro", "5"], ["--prompts"]),                      # an abbreviation is the option too
    (["--study", "free", "--seeds", "1", "1"], ["--seeds repeats a seed"]),
])
def test_validate_refuses_options_its_study_would_ignore(argv, names, monkeypatch, capsys):
    from grpo_theory import cli

    monkeypatch.setattr(cli, "_run_study", lambda args: pytest.fail("the study ran"))
    assert cli.main(["validate", *argv]) == 2
    err = capsys.readouterr().err
    assert all(n in err for n in names), err


def test_validate_keeps_the_options_its_study_reads(monkeypatch):
    import pandas as pd

    from grpo_theory import cli

    ran = []
    monkeypatch.setattr(cli, "_run_study", lambda args: ran.append(args.study) or (pd.DataFrame({"a": [1]}), ""))
    for argv in (["--study", "small", "--seed", "3", "--quick"], ["--study", "trl", "--beta", "0.3", "--questions", "4"],
                 ["--study", "free", "--seeds", "1", "2", "--prompts", "5", "--workers", "1"]):
        assert cli.main(["validate", *argv]) == 0
    assert ran == ["small", "trl", "free"]


def test_predict_slow_tol_needs_steps(tmp_path, monkeypatch, capsys):
    from grpo_theory.cli import main

    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\nb,8,1\n")
    monkeypatch.chdir(tmp_path)
    base = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    assert main(base + ["--slow-tol", "0.05"]) == 2
    assert "--slow-tol flags the prompts" in capsys.readouterr().err
    assert main(base + ["--slow-tol=0.05", "--clock", "0.01", "--steps", "10", "20"]) == 0


# ---------------------------------------------------------------- kl helpers: NaN refused, +-inf given the limit
_KL_HELPERS = ("coefficient", "value_slope", "value_shift", "flow_log_ratio")


@pytest.mark.parametrize("fn", _KL_HELPERS)
def test_kl_helpers_refuse_a_nan_log_ratio_by_name_and_index(fn):
    from grpo_theory import InvalidInputError, Objective, kl

    with pytest.raises(InvalidInputError, match=rf"{fn}: the log-ratio lr = log\(pi/pi_ref\) is nan at flat index \[1\]"):
        getattr(kl, fn)(Objective(beta=0.5, kl_estimator="k3"), np.array([0.2, np.nan, 1.0]))


@pytest.mark.parametrize("est, L, V", [("k3", None, None), ("k3", None, 10.0), ("k3_ratio", None, 10.0),
                                      ("k2", None, None), ("k1", 5.0, None), ("abs", 2.0, 1.5)])
@pytest.mark.parametrize("fn", _KL_HELPERS)
def test_kl_helpers_give_the_limit_at_infinite_log_ratios(fn, est, L, V):
    """At ``lr = +-inf`` each helper equals its value at a huge finite log-ratio (the limit), never NaN."""
    from grpo_theory import Objective, kl

    place = "reward" if fn == "value_shift" else "loss"
    obj = Objective(beta=0.5, kl_estimator=est, kl_placement=place, kl_log_ratio_clamp=L, kl_value_clamp=V)
    at_inf = getattr(kl, fn)(obj, np.array([-np.inf, np.inf]))
    assert not np.isnan(at_inf).any()
    with np.errstate(over="ignore"):
        far = getattr(kl, fn)(obj, np.array([-1e3, 1e3]))
    for a, f in zip(at_inf, far):
        if np.isinf(a):          # diverging: the same sign, and huge at the finite point
            assert np.sign(a) == np.sign(f) and abs(f) >= 100   # beta |lr| / 2 at least
        else:                    # converging: reached (clamped, or 1 - e^-lr = 1 to double precision)
            assert a == pytest.approx(f, rel=1e-12, abs=1e-12)


def test_k3_limits_at_infinite_log_ratios_match_the_formulas():
    """k3 (``1 - e^{-lr}``, value ``e^{-lr} + lr - 1``): slope 1 and value +inf at ``pi_ref = 0``; at ``pi = 0`` the
    slope is -inf and the value +inf, or the value clamp V with slope 0."""
    from grpo_theory import Objective, kl

    k3 = Objective(beta=0.5, kl_estimator="k3", kl_placement="reward")
    assert kl.value_slope(k3, [-np.inf, np.inf]).tolist() == [-np.inf, 1.0]
    assert kl.value_shift(k3, [-np.inf, np.inf]).tolist() == [np.inf, np.inf]
    clamped = Objective(beta=0.5, kl_estimator="k3", kl_placement="reward", kl_value_clamp=10.0)
    assert kl.value_shift(clamped, [-np.inf]).tolist() == [5.0]
    assert kl.value_slope(clamped, [-np.inf]).tolist() == [0.0]
    assert kl.flow_log_ratio(k3, [-np.inf, np.inf]).tolist() == [kl.LOG_RATIO_FLOOR, np.inf]


def test_the_solvers_variants_of_the_kl_helpers_pass_nan_through():
    """The unchecked variants the solvers call keep a NaN trial point NaN (an integrator rejects it) and agree with
    the checked helpers elsewhere."""
    from grpo_theory import Objective, kl

    lr = np.array([-3.0, 0.4, np.nan])
    for clamp in (None, 10.0):
        obj = Objective(beta=0.5, kl_estimator="k3", kl_value_clamp=clamp)
        for checked, flow in ((kl.coefficient, kl.flow_coefficient), (kl.value_slope, kl.flow_value_slope),
                              (kl.value_shift, kl.flow_value_shift), (kl.flow_log_ratio, kl.floored_log_ratio)):
            out = flow(obj, lr)
            # unclamped, NaN stays NaN; a value clamp reads a NaN point as clamped (slope 0), as before
            assert np.isnan(out[2]) or (clamp is not None and flow in (kl.flow_coefficient, kl.flow_value_slope))
            np.testing.assert_array_equal(out[:2], checked(obj, lr[:2]))


# ---------------------------------------------------------------- trainer mappings: booleans written as text
@pytest.mark.parametrize("reader, mapping, field", [
    ("openrlhf", {"use_kl_loss": "false", "advantage_estimator": "group_norm", "n_samples_per_prompt": 8},
     "use_kl_loss"),
    ("openrlhf", {"algo.dynamic_filtering_enable": "true", "advantage_estimator": "group_norm",
                  "n_samples_per_prompt": 8}, "algo.dynamic_filtering_enable"),
    ("trl", {"mask_truncated_completions": "true", "beta": 0.1}, "mask_truncated_completions"),
    ("verl", {"actor_rollout_ref": {"actor": {"use_kl_loss": "false"}}}, "use_kl_loss"),
])
def test_trainer_mappings_refuse_booleans_written_as_text(reader, mapping, field):
    """A mapping's 'false' is truthy text, not False: the three readers refuse it by name, as they refuse numbers
    written as text."""
    import importlib

    from grpo_theory import InvalidInputError

    mod = importlib.import_module(f"grpo_theory.integrations.{reader}")
    with pytest.raises(InvalidInputError, match=rf"{field}.*expected bool, got str"):
        getattr(mod, f"read_{reader}_config")(mapping)


def test_openrlhf_argv_booleans_stay_text():
    """argv is text by nature: ``--use_kl_loss=false`` is still read as False."""
    from grpo_theory.integrations.openrlhf import read_openrlhf_config

    argv = ["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8"]
    assert read_openrlhf_config(argv + ["--use_kl_loss=false"]).objective.kl_placement == "advantage"
    assert read_openrlhf_config(argv + ["--use_kl_loss"]).objective.kl_placement == "loss"


def test_predict_with_a_subnormal_tradeoff_beta_prints_no_numpy_warning(tmp_path, monkeypatch, capsys):
    """beta = 1e-320 overflows (P - pi P)/beta inside the solvers, where the overflow is expected and handled: no raw
    NumPy warning, and the limit beta -> 0 of Eq. 14 (x -> 1 for every 0 < p < 1) in tradeoff.csv."""
    import csv
    import warnings

    from grpo_theory.cli import main

    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\nb,8,1\nc,4,2\nd,12,11\n")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert main(["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress",
                     "--tradeoff-betas", "1e-320"]) == 0
    assert "Warning" not in capsys.readouterr().err
    (row,) = list(csv.DictReader(open(tmp_path / "o" / "tradeoff.csv", encoding="utf-8")))
    assert float(row["beta"]) == 1e-320 and float(row["mean_pred"]) == pytest.approx(1.0, abs=1e-12)
