"""Find private names used across the package's modules, read with ``ast``.

* private cross-module imports: a name starting with ``_`` imported from another package module
  (``from .free_prompts import _x``); private *modules* themselves (``from . import _interval``,
  ``from ._question import Question``) are not counted;
* private attribute reads on another object: ``x._name`` where ``x`` is neither ``self``/``cls`` nor a module
  the file imports (another object's private state read from outside its class; pandas columns spelled
  ``_x`` included).

Used by ``tests/test_private_names.py`` (none may be left) and ``benchmarks/architecture_counts.py`` (the
before/after table of docs/architecture.md).
"""

from __future__ import annotations

import ast
from pathlib import Path


def _modules(root: Path):
    for path in sorted((root / "grpo_theory").rglob("*.py")):
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text())


def imports_in(tree: ast.AST, here: Path, pkg: Path) -> list[str]:
    """``module.name`` for each private name ``tree`` (a module in folder ``here``) imports from ``pkg``."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level > 0):
            continue
        base = here
        for _ in range(node.level - 1):
            base = base.parent
        target = base.joinpath(*(node.module or "").split(".")) if node.module else base
        for alias in node.names:
            if not alias.name.startswith("_") or alias.name.startswith("__"):
                continue
            if (target / f"{alias.name}.py").exists() or (target / alias.name).is_dir():
                continue                                  # a private module, not a private name
            if target.is_relative_to(pkg):
                out.append(f"{node.module}.{alias.name}")
    return out


def attribute_reads_in(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, "x._name")`` for each private attribute of another object that ``tree`` reads."""
    modules = {a.asname or a.name.split(".")[0] for n in ast.walk(tree)
               if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return [(node.lineno, f"{node.value.id}.{node.attr}") for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name) and node.value.id not in {"self", "cls"} | modules]


def private_imports(root: Path) -> list[str]:
    """Every private cross-module import of the package under ``root``, as ``file: module.name``."""
    pkg = root / "grpo_theory"
    return [f"{rel}: {name}" for rel, tree in _modules(root)
            for name in imports_in(tree, (root / rel).parent, pkg)]


def private_attribute_reads(root: Path) -> list[str]:
    """Every private attribute read on another object in the package under ``root``, as ``file:line: x._name``."""
    return [f"{rel}:{line}: {name}" for rel, tree in _modules(root) for line, name in attribute_reads_in(tree)]
