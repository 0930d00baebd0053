"""``import grpo_theory`` loads the question, the objective and ``P_G``; the solvers, ``closed_form`` and
``dynamics`` load on first use of one of their names, and every public name is the same object as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import grpo_theory

ROOT = Path(__file__).resolve().parents[1]
DEFERRED = ("grpo_theory.solvers", "grpo_theory.closed_form", "grpo_theory.dynamics")


def test_import_defers_the_solvers():
    code = f"import sys, grpo_theory; print(sorted(m for m in sys.modules if m.startswith({DEFERRED!r})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_deferred_name_loads_on_first_use(monkeypatch):
    import grpo_theory.solvers.search as search

    for name in ("stationary_policy", "dynamics"):
        monkeypatch.delitem(vars(grpo_theory), name, raising=False)      # as before its first use
    namespace: dict = {}
    exec("from grpo_theory import stationary_policy", namespace)
    assert namespace["stationary_policy"] is search.stationary_policy
    assert vars(grpo_theory)["stationary_policy"] is search.stationary_policy    # kept: later look-ups skip __getattr__
    assert grpo_theory.dynamics.__name__ == "grpo_theory.dynamics"


def test_every_public_name_is_its_home_modules_object():
    import grpo_theory.closed_form
    import grpo_theory.dynamics
    import grpo_theory.solvers as solvers

    homes = {"closed_form": grpo_theory.closed_form, "dynamics": grpo_theory.dynamics, "solvers": solvers}
    for name in grpo_theory.__all__:
        value = getattr(grpo_theory, name)
        expected = homes.get(name, getattr(solvers, name, None))
        if expected is not None:
            assert value is expected, name
    assert set(grpo_theory.__all__) <= set(dir(grpo_theory))
    namespace: dict = {}
    exec("from grpo_theory import *", namespace)
    assert {n for n in namespace if not n.startswith("__")} == set(grpo_theory.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="'grpo_theory' has no attribute 'stationary_polcy'"):
        grpo_theory.stationary_polcy   # noqa: B018
