"""The documentation: the site builds in strict mode, every docstring example runs, every notebook executes."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import grpo_theory

ROOT = Path(__file__).resolve().parents[1]


def _modules():
    for info in pkgutil.walk_packages(grpo_theory.__path__, "grpo_theory."):
        yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_docstring_examples_run(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:                      # an optional extra (torch, transformers) is missing
        pytest.skip(f"{name}: {exc}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"


@pytest.mark.parametrize("name", ["grpo_theory.solvers.search.stationary_policy",
                                  "grpo_theory.solvers.search.stationary_points",
                                  "grpo_theory.solvers.classes.clamp_critical_beta", "grpo_theory.dynamics.flow",
                                  "grpo_theory.kl", "grpo_theory.integrations.trl.read_trl_config"])
def test_the_main_entry_points_have_examples(name):
    """The functions a newcomer starts from each carry a worked example (run by the test above)."""
    module_name, _, attr = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        obj = importlib.import_module(name)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name)
    assert any(t.examples for t in tests), f"{name} has no example"


def test_the_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env={"NO_MKDOCS_2_WARNING": "1",
                                                                         "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "kl" / "index.html").exists()
    assert (tmp_path / "site" / "paper_figures" / "fig1_pairwise_reverse.png").exists()


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_notebook_executes(path, tmp_path):
    """Each notebook runs top to bottom in a fresh kernel (committed with outputs stripped)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    if path.stem.startswith("02"):
        pytest.importorskip("trl")
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit notebooks stripped"
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
