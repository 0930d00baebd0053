"""Every name that experiments/ and benchmarks/ import from the package exists: a rename inside the package
must reach the scripts (they run rarely, so nothing else would notice)."""

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def missing_names(source: str) -> list[str]:
    """``module.name`` for each ``from grpo_theory... import name`` in ``source`` that does not resolve
    (a module whose optional dependency is not installed is skipped)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                and node.module.split(".")[0] == "grpo_theory"):
            continue
        try:
            module = importlib.import_module(node.module)
        except ImportError as exc:
            if (exc.name or "").split(".")[0] == "grpo_theory":
                out.append(node.module)
            continue                                         # torch, trl, ... not installed here
        for alias in node.names:
            if alias.name == "*" or hasattr(module, alias.name):
                continue
            try:
                importlib.import_module(f"{node.module}.{alias.name}")
            except ImportError:
                out.append(f"{node.module}.{alias.name}")
    return out


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT).as_posix() for folder in ("experiments", "benchmarks")
                                        for p in (ROOT / folder).glob("*.py")))
def test_script_imports_resolve(path):
    assert missing_names((ROOT / path).read_text()) == []


def test_the_check_finds_a_missing_name():
    assert missing_names("from grpo_theory.training.smollm import chat_prompt, _no_such_name\n"
                         "from grpo_theory.no_such_module import x\n") == [
        "grpo_theory.training.smollm._no_such_name", "grpo_theory.no_such_module"]
