"""Hypothesis profiles: CI runs a derandomized (reproducible) profile; local runs explore randomly."""

import os

# One BLAS thread per process, set before anything imports numpy (this file loads first, and pytest-xdist's
# workers and the tests' subprocesses inherit it). numpy's and scipy's OpenBLAS otherwise start a thread per
# core; with two workers on two cores (`-n 2`) those threads wait on each other, and a small product spends
# most of its time in that wait: a dot of 170,544 doubles took 7.9 ms of CPU instead of 0.06 ms under load,
# and the tree engine's 20-answer G = 16 solve (tests/test_tree.py) 41 s instead of 9 s (docs/performance.md,
# "The test suite, 2026-12-02: one BLAS thread"). torch gets one thread below for the same reason.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

# pytest-xdist's controller rebuilds a worker's warning by importing the module of its class
# (xdist.workermanage.unserialize_warning_message) in the thread that reads that worker. When both
# workers send a TheoryWarning at once, grpo_theory is imported in two threads at the same time, which
# deadlocks or sees a half-initialised package (seen on a loaded machine: _DeadlockError on
# grpo_theory.errors in one thread, "cannot import name 'expit' from grpo_theory._numerics" in the other,
# and both workers went down). Importing it here, in the main thread before any worker starts, avoids it.
import grpo_theory.errors  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def strict_site(tmp_path_factory):
    """The docs site built once in strict mode, for test_docs and test_site (a docstring griffe cannot
    parse, or a broken cross reference, fails it). The package documented is this checkout's.

    Under pytest-xdist (the README's `-n 2 --dist loadfile`) the two files may run on different workers:
    the build goes to the run's shared temporary folder under a file lock, so whichever worker comes
    first builds it and the other reads it."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    import os

    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent             # the workers' common folder
    out = shared / "strict_site"
    with FileLock(str(out) + ".lock"):
        if (out / "index.html").is_file():
            return out
        _build_strict_site(out)
    return out


def _build_strict_site(out: Path) -> None:
    import os
    import time

    env = {"NO_MKDOCS_2_WARNING": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, "mkdocs build --strict failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:]
    print(f"\nsite built in {time.perf_counter() - t0:.1f} s")


@pytest.fixture(autouse=True, scope="session")
def _fuzz_rows_once_per_run(tmp_path_factory):
    """A fuzz seed's row computed once in this run, whichever files ask for it (tests/_run_rows.py): the
    folder is the run's, common to its pytest-xdist workers, as for ``strict_site``."""
    import os

    import _run_rows

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent             # the workers' common folder
    _run_rows.FOLDER = shared / "fuzz_rows"
    _run_rows.FOLDER.mkdir(exist_ok=True)
    yield
    _run_rows.FOLDER = None


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """One torch thread for the tests' small models: on 2 busy cores two threads fight and run
    several times slower (the TRL test went from 49 s to 579 s under load)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    yield


#: The test files that cost the most, most expensive first (per-file sums of `--durations=0` of a whole default
#: run with `-n 2 --dist loadfile`, 2026-12-07, less the rows they now share: tests/_run_rows.py). Under that
#: option each file runs whole on one worker, and pytest-xdist hands files out in the order it receives them; by
#: default it reorders them by their *number* of tests, which puts a costly file of few tests near the end, where
#: the other worker idles while it runs. Longest first (the LPT rule) lets the small files fill in at the end (the
#: files listed took 17 s or more in that run, on a loaded machine: about 5 s or more quiet). test_docs builds the site that test_site and
#: test_docs_pages read (`strict_site`): it starts second, so that they, later, do not wait on the lock.
COSTLY_FIRST = ("test_fuzz_kl_regressions_10k.py", "test_docs.py", "test_reliability_extremes.py",
                "test_reliability.py", "test_kl.py", "test_site.py", "test_trl_stationary.py", "test_fuzz_kl.py",
                "test_fuzz_kl_seeds_150.py", "test_figures.py",
                "test_full_space_limits.py", "test_convergence.py", "test_notebooks.py", "test_dynamics.py",
                "test_docs_pages.py", "test_tree.py", "test_family_token.py", "test_symbolic.py", "test_stationary.py",
                "test_tree_search.py", "test_sweep.py", "test_hostile_inputs.py", "test_full_space_end.py",
                "test_hostile_round6.py", "test_predict.py", "test_predict_finite.py", "test_predict_conformal.py",
                "test_predict_coupled.py", "test_trl.py", "test_predict_cli_finite.py", "test_training.py")


def pytest_configure(config):
    # keep the order below (pytest-xdist's own reordering by test count would undo it)
    if getattr(config.option, "dist", "no") in ("loadfile", "loadscope"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Costly files first, each file's tests in their own order; the rest as collected."""
    rank = {name: i for i, name in enumerate(COSTLY_FIRST)}
    order = {id(item): (rank.get(item.path.name, len(rank)), i) for i, item in enumerate(items)}
    items.sort(key=lambda item: order[id(item)])
