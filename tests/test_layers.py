"""The house's shape (issue 20): no import cycles, no import that climbs a layer of docs/layers.txt, every
module in a layer, and function-local imports of the package's own modules only where they put off an
optional heavy dependency (torch, matplotlib, sympy).

The imports are read here with ``ast`` (module level and inside functions; ``if TYPE_CHECKING:`` blocks
do not count), independently of ``../shared/tools/layers.py``, which a clean clone does not have.
"""

from __future__ import annotations

import ast
import fnmatch
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "grpo_theory"

#: Function-local imports of the package's own modules that are allowed, with the reason: each target
#: imports torch (the studies, training), matplotlib (figures, plotting) or sympy (symbolic), which
#: ``import grpo_theory`` and the numerics-only commands must not pay for.
LAZY_ALLOWED = {
    ("cli", "training.smollm"), ("cli", "figures"), ("cli", "figures.build"),
    ("cli", "symbolic"), ("integrations.trl", "plotting"), ("predict.report", "plotting"),
    ("studies.small", "plotting"), ("studies.small", "figures"),
}


def _modules() -> dict[str, Path]:
    """Module name relative to the package -> file; a package is its ``__init__`` ("" for the top)."""
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _target(name: str, mods: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` (relative to the package) names or lies in."""
    parts = name.split(".") if name else []
    while parts:
        if ".".join(parts) in mods:
            return ".".join(parts)
        parts.pop()
    return "" if name == "" else None


def _imports(mod: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, bool, int]]:
    """``(target module, inside a function, line)`` for each import of the package's own modules."""
    tree = ast.parse(path.read_text())
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    package = [p for p in package if p]
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "grpo_theory" or a.name.startswith("grpo_theory."):
                    found.append((_target(a.name[len("grpo_theory."):] if "." in a.name else "", mods),
                                  in_function, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "grpo_theory" or node.module.startswith("grpo_theory.")):
                stem = node.module[len("grpo_theory."):] if "." in node.module else ""
            else:
                stem = None
            if stem is not None:
                for a in node.names:          # ``from . import x`` imports the module x when there is one
                    sub = f"{stem}.{a.name}" if stem else a.name
                    found.append((sub if sub in mods else _target(stem, mods), in_function, node.lineno))
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(tree, False)
    return [(t, f, ln) for t, f, ln in found if t is not None and t != mod]


def _layers() -> list[list[str]]:
    lines = (ROOT / "docs" / "layers.txt").read_text().splitlines()
    return [ln.split() for ln in lines if ln.strip() and not ln.startswith("#")]


def _layer_of(mod: str, layers: list[list[str]]) -> int | None:
    hits = [i for i, globs in enumerate(layers) if any(fnmatch.fnmatchcase(mod, g) for g in globs)]
    return hits[0] if hits else None


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, bool, int]]]:
    mods = _modules()
    return {m: _imports(m, f, mods) for m, f in mods.items()}


def test_every_module_has_a_layer(graph):
    layers = _layers()
    assert [m for m in graph if m and _layer_of(m, layers) is None] == []


def _climbs(graph: dict, layers: list[list[str]]) -> list[tuple[str, str, int]]:
    """Imports of a higher layer; the top package (``grpo_theory/__init__``), which re-exports the public
    API from every layer, is exempt."""
    return [(m, t, ln) for m, edges in graph.items() if m for t, _, ln in edges
            if t and _layer_of(t, layers) > _layer_of(m, layers)]


def _cycles(graph: dict) -> list[list[str]]:
    """Tarjan's strongly connected components of the import graph (the top package left out) of more
    than one module."""
    edges = {m: {t for t, _, _ in e if t} for m, e in graph.items() if m}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            connect(v)
    return cycles


def test_no_import_climbs_a_layer(graph):
    assert _climbs(graph, _layers()) == []


def test_no_import_cycles(graph):
    assert _cycles(graph) == []


def test_function_local_imports_only_put_off_a_heavy_dependency(graph):
    lazy = {(m, t) for m, edges in graph.items() for t, inside, _ in edges if inside and t}
    assert lazy <= LAZY_ALLOWED, sorted(lazy - LAZY_ALLOWED)


def test_the_check_sees_a_climb_and_a_cycle(tmp_path, monkeypatch):
    """The reader is not blind: in a two-module package where ``errors`` (layer 0) imports ``problem``
    (layer 1) inside a function and ``problem`` imports ``errors`` twice (relative and absolute), it
    finds the climb, the function-local import and the cycle."""
    pkg = tmp_path / "grpo_theory"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from .problem import Question\n")
    (pkg / "problem.py").write_text("from .errors import f\nfrom grpo_theory import errors\nimport numpy\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    mods = _modules()
    g = {m: _imports(m, f, mods) for m, f in mods.items()}
    assert g["errors"] == [("problem", True, 2)]
    assert g["problem"] == [("errors", False, 1), ("errors", False, 2)]
    assert _climbs(g, _layers()) == [("errors", "problem", 2)]
    assert _cycles(g) == [["errors", "problem"]]
