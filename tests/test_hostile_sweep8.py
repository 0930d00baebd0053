"""Regression tests of the sweep before the eighth hostile audit (docs/reliability.md, "Hostile input, the
sweep before the eighth round"): numbers a double cannot hold, special files, exact integers, NLHF at a beta
whose reciprocal overflows. Each case is a rule (``_validate.rounding_problem``, ``_validate.read_bytes``,
``_validate.integer``), tested through the entry points that use it."""

from __future__ import annotations

import json
import os
import sys
import warnings

import numpy as np
import pytest

from _cli_run import refused, run
import grpo_theory as g
from grpo_theory import InvalidInputError, Objective, Question, nash_equilibrium
from grpo_theory import closed_form as cf
from grpo_theory._io import own_json
from grpo_theory._validate import integer, read_text
from grpo_theory.solvers.baselines import nash_residual

TINY = "is below the smallest positive double (5e-324) and would be read as 0"
HUGE = "is beyond the largest double (1.8e308)"


# ----------------------------------------------------------------------------- numbers a double cannot hold

@pytest.mark.parametrize("argv, shown", [
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1e-400", "0", "--beta", "0.1"], "'1e-400'"),
    (["solve", "--pi-ref", "1e-400", "1", "--rewards", "1", "0", "--beta", "0.1"], "'1e-400'"),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "-1e-400"], "'-1e-400'"),
    (["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.1", "--std-eps", "1e-999"],
     "'1e-999'"),
])
def test_cli_refuses_a_nonzero_number_that_reads_as_zero(argv, shown):
    """``1e-400`` is not 0: rewards (1e-400, 0) have advantages +-1 under scale normalisation, (0, 0) none."""
    line = refused(argv, shown, TINY)
    assert "argument --" in line


def test_cli_names_a_finite_number_beyond_a_double():
    refused(["solve", "--pi-ref", "0.3", "0.7", "--rewards", "1e400", "0", "--beta", "1"], "'1e400'", HUGE)


@pytest.mark.parametrize("text", ["0", "0.0", "-0", "0e-400", "000.000e5", "5e-324"])
def test_cli_takes_zero_and_the_smallest_subnormal(text):
    rc, out, err = run("solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "0.1", "--std-eps", text)
    assert rc == 0, err


def test_predict_beta_and_seed_are_checked_by_the_parser(tmp_path):
    (tmp_path / "s.csv").write_text("prompt_id,reward\na,1\na,0\n")
    base = ["predict", tmp_path / "s.csv", "--out", tmp_path / "o", "--no-plots"]
    refused(base + ["--beta", "1e-400"], "argument --beta", TINY)          # was "beta = 0 with no entropy bonus"
    refused(base + ["--beta", "0.1", "--seed", str(2**63)], "argument --seed", "9,223,372,036,854,775,808")


@pytest.mark.parametrize("name, body, where", [
    ("r.csv", "prompt_id,reward\na,1e-400\na,0\n", "line 2: reward = 1e-400"),
    ("c.csv", "prompt_id,count_1e-400,count_1\na,3,5\n", "column 'count_1e-400'"),
    ("r.jsonl", '{"prompt_id": "a", "reward": 1e-400}\n', "line 1: reward = 1e-400"),
    ("h.jsonl", '{"prompt_id": "a", "reward": 1e999}\n', "line 1: reward = 1e999"),
])
def test_samples_files_refuse_numbers_a_double_cannot_hold(tmp_path, name, body, where):
    (tmp_path / name).write_text(body)
    refused(["predict", tmp_path / name, "--beta", "0.1", "--out", tmp_path / "o", "--no-plots"], where)


def test_configs_and_grids_refuse_numbers_a_double_cannot_hold(tmp_path):
    (tmp_path / "t.json").write_text('{"beta": 1e-400, "num_generations": 4}')
    refused(["explain", "--framework", "trl", tmp_path / "t.json"], "t.json", "1e-400", TINY)
    (tmp_path / "v.yaml").write_text("algorithm:\n  kl_ctrl:\n    kl_coef: 1.0e-400\n")
    refused(["explain", "--framework", "verl", tmp_path / "v.yaml"], "v.yaml' line 3", "1.0e-400", TINY)
    (tmp_path / "g.yaml").write_text("objectives:\n  beta: [1.0e+400]\nquestions:\n  - pi_ref: [0.5, 0.5]\n"
                                     "    rewards: [1, 0]\n")
    refused(["sweep", tmp_path / "g.yaml", "--out", tmp_path / "g.csv"], "g.yaml' line 2", "1.0e+400", HUGE)
    (tmp_path / "d.json").write_text('{"num_generations": ' + "9" * 5000 + "}")    # beyond int()'s 4,300 digits
    refused(["explain", "--framework", "trl", tmp_path / "d.json"], "5,000 digits", HUGE)


# ----------------------------------------------------------------------------- special files

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_nothing_writes_to_is_refused_at_once(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes: the readers must not wait for one."""
    for name in ("s.csv", "c.json", "v.yaml"):
        os.mkfifo(tmp_path / name)
    refused(["predict", tmp_path / "s.csv", "--beta", "0.1", "--out", tmp_path / "o", "--no-plots"],
            "s.csv' is a FIFO (named pipe) that nothing writes to")
    refused(["explain", "--framework", "trl", tmp_path / "c.json"], "c.json' is a FIFO")
    refused(["explain", "--framework", "verl", tmp_path / "v.yaml"], "v.yaml' is a FIFO")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="a POSIX /dev/zero")
def test_a_device_is_refused_not_read_forever(tmp_path):
    (tmp_path / "z.csv").symlink_to("/dev/zero")
    refused(["predict", tmp_path / "z.csv", "--beta", "0.1", "--out", tmp_path / "o", "--no-plots"],
            "z.csv' is a device")


@pytest.mark.skipif(not hasattr(os, "pipe"), reason="POSIX pipes")
def test_a_pipe_with_a_writer_is_read():
    """``<(cmd)`` and ``/dev/stdin``: a pipe whose writer is there is read to its end."""
    r, w = os.pipe()
    os.write(w, b"\xef\xbb\xbfprompt_id,reward\r\na,1\r\n")
    os.close(w)
    try:
        assert read_text(f"/dev/fd/{r}", "samples") == "prompt_id,reward\r\na,1\r\n"
    finally:
        os.close(r)


def test_utf16_is_named_as_such(tmp_path):
    (tmp_path / "s.csv").write_bytes("prompt_id,reward\na,1\n".encode("utf-16"))
    refused(["predict", tmp_path / "s.csv", "--beta", "0.1", "--out", tmp_path / "o", "--no-plots"],
            "s.csv' is UTF-16 text", "save it as UTF-8")


# ----------------------------------------------------------------------------- exact integers

def test_integer_keeps_large_ints_exact():
    """2**53 + 1 as a float is 2**53: a seed must not become its neighbour, nor a message show another number."""
    assert integer("seed", 2**53 + 1, low=0) == 2**53 + 1
    assert integer("seed", np.uint64(2**64 - 1), low=0) == 2**64 - 1
    with pytest.raises(InvalidInputError, match=r"seed must be an integer in \[0, 9223372036854775807\], got "
                                                r"99999999999999999999999$"):
        integer("seed", 99999999999999999999999, low=0, high=2**63 - 1)
    with pytest.raises(InvalidInputError, match=r"n must be an integer in \[2, inf\), got -3$"):
        integer("n", -3, low=2)
    with pytest.raises(InvalidInputError, match="beyond the largest double"):
        integer("n", 10**400, low=2)
    assert integer("n", 3.0, low=2) == 3


# ----------------------------------------------------------------------------- NLHF at a tiny beta

def test_nash_refuses_a_beta_whose_reciprocal_overflows():
    """P(o > pi)/beta overflows below 1/1.8e308: the answer there was pi_ref with residual NaN and NumPy warnings."""
    q = Question([0.3, 0.7], rewards=[1, 0])
    for fn in (lambda b: nash_equilibrium(q, b), lambda b: nash_residual(q, b, [0.5, 0.5])):
        with pytest.raises(InvalidInputError, match=r"beta = 5e-324 is below 5.563e-309"):
            fn(5e-324)
    eq = nash_equilibrium(q, 1 / sys.float_info.max * 1.0000001)
    # the preference game's limit: pi(0) / pi(1) = 3/7 exp((1 - 0) / beta), so the better output takes all
    assert eq.converged and eq.pi[0] == 1.0


def test_solve_at_a_subnormal_beta_leaves_nlhf_out():
    rc, out, err = run("solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "5e-324", "--group-size", "inf",
                       "--json")
    assert rc == 0, err
    nlhf = [r for r in json.loads(out)["rows"] if r["method"] == "NLHF (Nash)"]
    assert nlhf[0]["pi"] is None and "not computed: beta below 5.563e-309" in nlhf[0]["note"]


# ----------------------------------------------------------------------------- NumPy scalar types at the extremes

@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="longdouble is a double here")
@pytest.mark.parametrize("call", [
    lambda v: cf.binary_large_group(v, 0.5), lambda v: cf.binary_pairwise(0.3, v),
    lambda v: cf.binary_preference(v, 4), lambda v: g.log_pooling([0.3, 0.7], [v, 0], 0.5),
    lambda v: Question([0.3, 0.7], rewards=[v, 0]), lambda v: Objective(beta=v),
    lambda v: g.rlhf_optimum(Question([0.3, 0.7], rewards=[1, 0]), v),
])
@pytest.mark.parametrize("text, where", [("1e400", "beyond the largest double"),
                                         ("1e-400", "below the smallest double")])
def test_a_longdouble_a_double_cannot_hold_is_refused_without_a_numpy_warning(call, text, where):
    """np.longdouble('1e400') cast to a double overflowed with NumPy's RuntimeWarning before the refusal; 1e-400
    became beta = 0 in rlhf_optimum and failed on an empty array."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(InvalidInputError, match=where):
            call(np.longdouble(text))


@pytest.mark.parametrize("call", [lambda v: g.log_pooling([0.3, 0.7], [1, 0], v),
                                  lambda v: g.rlhf_optimum(Question([0.3, 0.7], rewards=[1, 0]), v),
                                  lambda v: cf.binary_preference(0.3, v)])
def test_an_int_beyond_a_double_is_refused_by_name(call):
    with pytest.raises(InvalidInputError, match=r"= 1000000000.*beyond the largest double"):
        call(10**400)


def test_a_huge_entropy_bonus_gives_its_limit_without_a_warning():
    """F(x) = margin - beta (x - p)/(x(1 - x)) - c logit x: as c -> inf the root goes to x = 1/2."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        x = float(cf.binary_entropy(0.3, 0.5, 1e308))
    assert abs(x - 0.5) < 1e-12


def test_a_negative_zero_probability_is_zero():
    q = Question([-0.0, 0.5, 0.5], rewards=[1, 0, 0.5])
    assert not np.signbit(q.pi_ref[0])
    rc, out, err = run("solve", "--pi-ref", "-0", "1", "--rewards", "1", "0", "--beta", "0.5", "--group-size", "inf")
    assert rc == 0 and "-0.0" not in out, out


def test_the_command_line_prints_no_solver_runtime_warning():
    """At beta = 1e308 the solvers overflow in intermediate steps; the table is pi_ref (beta -> inf), stable."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        rc, out, err = run("solve", "--pi-ref", "0.3", "0.7", "--rewards", "1", "0", "--beta", "1e308",
                           "--group-size", "inf")
    assert rc == 0 and "Warning" not in err, err
    assert "GRPO reverse/scale     0.300000   0.700000  yes" in out, out


# ----------------------------------------------------------------------------- files: links, YAML, records

def test_a_broken_symlink_is_named_as_one(tmp_path):
    (tmp_path / "loop.csv").symlink_to(tmp_path / "loop.csv")
    (tmp_path / "gone.csv").symlink_to(tmp_path / "nothere.csv")
    base = ["--beta", "0.1", "--out", tmp_path / "o", "--no-plots"]
    refused(["predict", tmp_path / "loop.csv", *base], "loop.csv' is a symlink loop")       # was "no such file"
    refused(["predict", tmp_path / "gone.csv", *base], "gone.csv' is a symlink to", "nothere.csv', which does not")


def test_yaml_errors_name_the_file_not_a_unicode_string(tmp_path):
    (tmp_path / "v.yaml").write_text("algorithm:\n\tkl_ctrl: 1\n")
    line = refused(["explain", "--framework", "verl", tmp_path / "v.yaml"], "v.yaml' is not valid YAML", "line 2")
    assert "<unicode string>" not in line


def test_trl_beta_zero_given_is_not_called_the_default(tmp_path):
    (tmp_path / "given.json").write_text('{"beta": 0, "use_bias_correction_kl": false}')
    (tmp_path / "unset.json").write_text('{"use_bias_correction_kl": false}')
    _, out, _ = run("explain", "--framework", "trl", tmp_path / "given.json")
    assert "beta=0 (the config's beta)" in out and "default" not in out.split("beta=0")[1][:30], out
    _, out, _ = run("explain", "--framework", "trl", tmp_path / "unset.json")
    assert "beta=0 (TRL's default since 0.19)" in out, out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_the_figures_records_are_read_without_blocking_or_trusting_their_shape(tmp_path):
    """figures' own records in --out: a FIFO there blocked a plain read; a list where a mapping belongs failed
    with AttributeError (.items())."""
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    assert own_json(tmp_path / "fifo.json") is None
    assert own_json(tmp_path / "bin.json") is None
    assert own_json(tmp_path / "missing.json") is None
    assert own_json(tmp_path / "list.json") == [1, 2]


def test_samples_from_counts_compares_counts_exactly():
    """n = 2**53 + 1 was read through a double as 2**53, under the limit, and stored as 2**53 samples."""
    from grpo_theory.predict import samples_from_counts

    assert samples_from_counts([2**53], [1]).counts.tolist() == [[2**53 - 1, 1]]
    for n in (2**53 + 1, np.uint64(2**64 - 1)):
        with pytest.raises(InvalidInputError, match=f"n = {int(n):,} is above the limit of 9,007,199,254,740,992"):
            samples_from_counts([n], [1])
    with pytest.raises(InvalidInputError, match=r"prompt 0: n = 10.5 \(expected an integer >= 1\)$"):
        samples_from_counts([10.5], [3])                   # was "n = np.float64(10.5)"


def test_a_huge_simplex_lattice_is_named_in_a_few_digits(tmp_path):
    (tmp_path / "g.yaml").write_text("objectives:\n  beta: 0.5\nsimplex:\n  rewards: [1, 0, 0.5]\n  step: 1.0e-300\n")
    line = refused(["sweep", tmp_path / "g.yaml", "--out", tmp_path / "g.csv"], "n = 1e+300 steps; at most 1000")
    assert len(line) < 300, line                            # was the lattice size in 301 digits


def test_a_step_beyond_the_flows_names_the_step_and_the_clock(tmp_path):
    """Was "give a larger t_max" (no such option on the command line) or "t must be ... got inf" (clock x step
    overflowed), naming neither option."""
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\nb,10,6\n")
    base = ["predict", tmp_path / "s.csv", "--beta", "0.1", "--out", tmp_path / "o", "--no-plots", "--no-progress"]
    line = refused(base + ["--clock", "1e300", "--steps", "1e9"], "step 1e+09 at clock 1e+300 is flow time inf",
                   "give fewer steps or give a smaller clock")
    assert "t must be" not in line


def test_model_dir_that_is_not_a_folder_is_named(tmp_path):
    """Was "<file>/SmolLM2-135M-Instruct.Q4_1.gguf not found: run `grpo-theory fetch-model` first (or give
    --model-dir)", after the user had given --model-dir."""
    (tmp_path / "f.csv").write_text("x\n")
    refused(["validate", "--study", "smollm2", "--model-dir", tmp_path / "f.csv", "--out", tmp_path / "v"],
            "argument --model-dir", "f.csv' is a file; give the folder that holds the model")


def test_huge_integers_in_configs_and_grids_are_named_briefly(tmp_path):
    """A 400-digit int in a verl config failed with OverflowError (float(value) in the field check); in a sweep grid
    its 400 digits filled the message, with Python's advice group_size=math.inf for a YAML file."""
    big = "9" * 400
    (tmp_path / "v.yaml").write_text(f"actor_rollout_ref:\n  rollout:\n    n: {big}\n")
    refused(["explain", "--framework", "verl", tmp_path / "v.yaml"],
            "actor_rollout_ref.rollout.n = 999999999999...9999 (400 digits) (expected a number in [1, ")
    (tmp_path / "g.yaml").write_text(f"objectives:\n  beta: 0.5\n  group_size: [{big}]\nquestions:\n"
                                     "  - pi_ref: [0.3, 0.7]\n    rewards: [1, 0]\n")
    line = refused(["sweep", tmp_path / "g.yaml", "--out", tmp_path / "g.csv"], "(400 digits)", "group_size: .inf")
    assert big not in line and "math.inf" not in line


def test_a_grid_number_yaml_reads_as_text_is_checked_like_any_number(tmp_path):
    """YAML 1.1 reads 1e-400 (no dot) as text; the grid turned it into 0.0 without a word."""
    (tmp_path / "g.yaml").write_text("objectives:\n  beta: [0.5]\nquestions:\n  - pi_ref: [0.3, 0.7]\n"
                                     "    rewards: [1e-400, 0]\n")
    refused(["sweep", tmp_path / "g.yaml", "--out", tmp_path / "g.csv"], "questions[0].rewards = 1e-400", TINY)
