"""The findings of the fresh hostile audit (issue 45, round four; ``tests/hostile_audit_fresh.py``), each a
regression test of the rule that fixed it.

Expected numbers come from SPEC.md's closed forms computed here (Eq. 14, RLHF's ``pi ∝ pi_ref exp(r/beta)``),
not from the library.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from grpo_theory import (InvalidInputError, Objective, Question, closed_form, log_pooling, nash_equilibrium,
                         reward_preference, rlhf_optimum, stationary_policy)

from _cli_run import refused, run

GRID = "objectives: {beta: 0.5, group_size: 2}\nquestions: [{pi_ref: [0.3, 0.7], rewards: [1, 0]}]\n"


def eq14(p: float, beta: float) -> float:
    return (1 - beta + math.sqrt((1 - beta) ** 2 + 4 * beta * p)) / 2


# ---------------------------------------------------------------- numbers of every type
@pytest.mark.parametrize("make", [
    lambda v: Objective(beta=v), lambda v: Objective(beta=0.5, std_eps=v * 0 + v)])
def test_zero_d_arrays_are_numbers(make):
    """A 0-d array (``np.array(0.5)``, what NumPy reductions return) is the number it holds; it was refused
    with "must be a positive finite number, got 0.5"."""
    obj = make(np.array(0.5))
    assert isinstance(obj.beta, float)


def test_zero_d_arrays_solve_like_floats():
    q = Question([0.3, 0.7], rewards=[1, 0])
    x = stationary_policy(q, Objective(beta=np.array(0.5), group_size=np.array(2))).pi[0]
    assert abs(x - eq14(0.3, 0.5)) < 1e-12
    want = 0.3 * math.exp(2) / (0.3 * math.exp(2) + 0.7)
    assert abs(log_pooling([0.3, 0.7], [1, 0], np.array(0.5))[0] - want) < 1e-12
    assert abs(rlhf_optimum(q, np.array(0.5)).pi[0] - want) < 1e-12
    assert nash_equilibrium(q, np.array(0.5)).converged
    pa, _ = closed_form.binary_preference(0.3, np.array(3))
    assert abs(float(pa) - (0.49 * math.sqrt(2) + 0.42 * math.sqrt(1 / 2) + 0.09 * math.sqrt(0 / 3))) < 1e-12


def test_float32_distributions_are_accepted():
    """``np.float32([0.2, 0.3, 0.5])`` sums to 1 + 1.5e-8: refused before ("must sum to 1"). A vector is now
    judged at its own precision (float32's rounding) and renormalised."""
    p32 = np.asarray([0.2, 0.3, 0.5], np.float32)
    q = Question(p32, rewards=[1, 0, 0.5])
    assert abs(q.pi_ref.sum() - 1) < 1e-15
    assert np.allclose(reward_preference(Question([0.2, 0.3, 0.5], rewards=[1, 0, 0.5]), Objective(beta=1.0),
                                         [np.float32(0.1), np.float32(0.6), np.float32(0.3)]),
                       reward_preference(Question([0.2, 0.3, 0.5], rewards=[1, 0, 0.5]), Objective(beta=1.0),
                                         [0.1, 0.6, 0.3]), atol=1e-7)
    with pytest.raises(InvalidInputError, match="sum to 1"):          # float32 that is really off still fails
        Question(np.asarray([0.2, 0.3, 0.6], np.float32), rewards=[1, 0, 0.5])
    with pytest.raises(InvalidInputError, match="sum to 1"):          # float64 keeps its tight tolerance
        Question([0.2, 0.3, 0.5 + 1e-7], rewards=[1, 0, 0.5])


@pytest.mark.parametrize("rewards", [[True, 0.0, 0.5], [1.0, "0", 0.5], [1.0, None, 0.5]])
def test_mixed_lists_name_the_odd_entry(rewards):
    """A bool in a list of floats was read as 1.0 (NumPy casts the list to float before anyone looks)."""
    with pytest.raises(InvalidInputError, match="rewards"):
        Question([0.2, 0.3, 0.5], rewards=rewards)
    with pytest.raises(InvalidInputError, match="rewards"):
        log_pooling([0.2, 0.3, 0.5], rewards, 0.5)


@pytest.mark.parametrize("rewards", [(x for x in [1.0, 0.0]), {1.0, 0.0}, "1 0", {0: 1.0, 1: 0.0}.values()])
def test_log_pooling_rewards_are_validated(rewards):
    """A generator, set, string or dict view was a raw TypeError/ValueError from ``float()``."""
    with pytest.raises(InvalidInputError, match="rewards"):
        log_pooling([0.3, 0.7], rewards, 0.5)


def test_group_size_beyond_float_is_refused():
    """``group_size=10**400`` (a Python int no float can hold) was accepted."""
    with pytest.raises(InvalidInputError, match="group_size"):
        Objective(beta=0.5, group_size=10 ** 400)
    with pytest.raises(InvalidInputError, match="math.inf"):
        Objective(beta=0.5, group_size=2 ** 60)
    assert Objective(beta=0.5, group_size=2 ** 53).group_size == 2 ** 53


def test_closed_form_shapes_and_none():
    with pytest.raises(InvalidInputError, match=r"shapes"):
        closed_form.binary_pairwise([0.1, 0.5, 0.9], [0.1, 1, 10, 100])
    with pytest.raises(InvalidInputError, match="gamma"):
        closed_form.binary_pairwise(0.3, 0.5, None)


def test_tiny_reward_span_with_std_eps():
    """Rewards (5e-324, 0) with ``std_eps = 1e-4``: the advantages are ~5e-320, so pi = pi_ref. The rescaling
    of the rewards to a unit span turned eps into inf and blamed ``std_eps = inf``, which was never given."""
    sol = stationary_policy(Question([0.3, 0.7], rewards=[5e-324, 0.0]),
                            Objective(beta=0.5, group_size=4, std_ddof=1, std_eps=1e-4))
    assert np.allclose(sol.pi, [0.3, 0.7], rtol=1e-12)


# ---------------------------------------------------------------- paths
@pytest.mark.parametrize("argv", [["sweep", "g.yaml", "--workers", "1", "--no-progress", "--out"],
                                  ["predict", "s.csv", "--beta", "0.5", "--no-plots", "--no-progress", "--out"],
                                  ["derivations", "--out"], ["figures", "--only", "1", "--out"]])
@pytest.mark.parametrize("long", ["x" * 300, "/".join(["d" * 200] * 25)])
def test_names_too_long(tmp_path, monkeypatch, argv, long):
    """A 300-byte name or a 5,000-byte path was an ``OSError: File name too long`` traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.yaml").write_text(GRID)
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    line = refused(argv + [long], long[:40])
    assert "255" in line or "4096" in line or "4,096" in line


def test_symlinks(tmp_path, monkeypatch):
    """A dangling symlink or a symlink loop as ``--out`` was silently replaced by a file; a symlink to a file was
    replaced too (the file it points to kept the old rows). Writes now go through the link."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.yaml").write_text(GRID)
    os.symlink("nowhere/x.csv", "dang.csv")
    refused(["sweep", "g.yaml", "--workers", "1", "--no-progress", "--out", "dang.csv"], "dang.csv", "nowhere")
    os.symlink("loop.csv", "loop.csv")
    refused(["sweep", "g.yaml", "--workers", "1", "--no-progress", "--out", "loop.csv"], "loop.csv", "loop")
    refused(["derivations", "--check", "--out", "loop.csv"], "loop.csv", "loop")
    os.symlink("real.csv", "link.csv")
    rc, _, err = run("sweep", "g.yaml", "--workers", "1", "--no-progress", "--out", "link.csv")
    assert rc == 0, err
    assert os.path.islink("link.csv") and Path("real.csv").read_text().startswith("key,")
    os.mkfifo("fifo.md")
    refused(["derivations", "--out", "fifo.md"], "fifo.md", "not a regular file")
    assert Path("fifo.md").is_fifo()


def test_predict_options_named_as_options(tmp_path, monkeypatch):
    """``--steps`` without a clock said "steps= needs a clock: give clock= ..." (the Python keywords)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    base = ["predict", "s.csv", "--beta", "0.5", "--out", "o", "--no-plots", "--no-progress"]
    line = refused(base + ["--steps", "100"], "--steps", "--clock", "--fit")
    assert "clock=" not in line
    refused(base + ["--clock", "0.1", "--fit", "10", "0.5"], "--clock", "--fit")


def _interrupted_start(module: str, start: str) -> None:
    """Run ``start`` (Python lines that start the CLI) in a fresh interpreter in which importing ``module`` raises
    ``KeyboardInterrupt``, a Ctrl-C at that moment: the exit is 130 with one line on stderr, no traceback."""
    import subprocess
    import sys

    hook = ("import sys\n"
            "class Stop:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name == {module!r}:\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Stop())\n" + start)
    root = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, "-c", hook], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    assert p.returncode == 130, p.stderr
    assert p.stderr.strip() == "grpo-theory: interrupted while starting; nothing was run or written"


def test_ctrl_c_while_the_command_starts():
    """Ctrl-C in the second or two that ``grpo-theory`` spends importing pandas and scipy printed a
    ``KeyboardInterrupt`` traceback. The interrupt is raised here at the import of ``grpo_theory.cli_runs``."""
    _interrupted_start("grpo_theory.cli_runs", "from grpo_theory.cli import main\n")


def test_ctrl_c_while_the_package_imports():
    """Ctrl-C while ``import grpo_theory`` itself runs (its ``__init__`` loads numpy, before any module of
    the package can catch anything) printed a ``KeyboardInterrupt`` traceback; the console script now starts
    in ``grpo_theory_cli``, outside the package. The interrupt is raised here at the import of numpy."""
    _interrupted_start("numpy", "import grpo_theory_cli\nsys.exit(grpo_theory_cli.main())\n")


def test_console_script_is_the_launcher():
    """The installed ``grpo-theory`` runs the launcher (pyproject's entry point), which runs the CLI."""
    import subprocess
    import sys
    tomllib = pytest.importorskip("tomllib")        # Python 3.11+

    scripts = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["grpo-theory"] == "grpo_theory_cli:main"
    root = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, "-c", "import sys, grpo_theory_cli; sys.argv[1:] = ['--help']; "
                        "sys.exit(grpo_theory_cli.main())"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    assert p.returncode == 0, p.stderr
    assert "usage: grpo-theory" in p.stdout
