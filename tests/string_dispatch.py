"""Find the places that pick behaviour by comparing an Objective field with a string (``obj.regime == "reverse"``).

Read with ``ast``: a comparison (``==``, ``!=``, ``in``, ``not in``) one side of which is a string literal (or a
tuple, list or set of them) and the other a field of an Objective -- an attribute or a bare name spelled like
one (``obj.advantage``, ``normalization``), ``d.get("advantage")`` or ``d["advantage"]`` -- and a dict of
string keys indexed by such a field (``{"k3": ...}[obj.estimator]``). ``grpo_theory/variants.py`` (the
registry, where the strings live) is not searched. :func:`find_aliased` finds the same comparison made through a
local name set from such a field. Used by ``tests/test_variants.py`` (none may be left) and
``benchmarks/architecture_counts.py`` (the before/after table of docs/architecture.md).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

#: The Objective's option fields (and the derived ones), as attributes or parameter names.
FIELDS = frozenset({"regime", "advantage", "normalization", "kl_placement", "placement", "estimator",
                    "kl_estimator", "level", "loss_type", "importance_level", "penalty", "aggregation"})
#: Comparisons that are not a variant's dispatch, each with its reason: (path, source-line fragment).
ALLOWED = {
    ("grpo_theory/figures/grpo_family.py", "row.advantage =="):
        "a row of the measured family table (a CSV column), not an Objective",
    ("grpo_theory/figures/grpo_family.py", "study.importance_level =="):
        "a column of the measured family table",
    ("grpo_theory/figures/grpo_family.py", "study.level =="): "a column of the measured family table",
    ("grpo_theory/figures/trainer_conventions.py", "g.penalty =="): "a column of the figure's own table",
    ("grpo_theory/studies/small.py", "results.penalty =="): "a column of the study's measured table",
    ("grpo_theory/figures/smollm2_new_seed.py", "runs.level =="): "a column of Figure 28's measured runs table",
    ("grpo_theory/figures/family_study.py", "configs.level =="): "a column of Figure 29's configurations table",
}


def _is_strings(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
    return False


def _is_field(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in FIELDS
    if isinstance(node, ast.Name):
        return node.id in FIELDS
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and node.args and isinstance(node.args[0], ast.Constant):
        return node.args[0].value in FIELDS
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value in FIELDS
    return False


@functools.lru_cache(maxsize=512)
def _parsed(text: str) -> tuple[ast.AST, list[str]]:
    """The module ``text`` parsed, and its lines (cached: the scans below read each module once)."""
    return ast.parse(text), text.splitlines()


def find(text: str) -> list[tuple[int, str]]:
    """``(line, source line)`` of each string dispatch on an Objective field in the Python source ``text``."""
    tree, lines = _parsed(text)
    out = []
    for node in ast.walk(tree):
        hit = False
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            hit = any(_is_strings(a) and _is_field(b) or _is_field(a) and _is_strings(b)
                      for a, b in zip(operands, operands[1:]))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict) and _is_field(node.slice):
            hit = all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.value.keys)
        if hit:
            out.append((node.lineno, lines[node.lineno - 1].strip()))
    return out


def find_aliased(text: str) -> list[tuple[int, str]]:
    """``(line, source line)`` of each comparison with a string of a name that the module sets from an Objective
    field (``kind = obj.aggregation`` ... ``kind == "answer_mean"``): the dispatch :func:`find` misses, since it
    reads the fields' own spellings only. A name is followed through the module, whatever its scope."""
    tree, lines = _parsed(text)
    nodes = list(ast.walk(tree))
    aliases = {t.id for node in nodes if isinstance(node, ast.Assign) and _is_field(node.value)
               for t in node.targets if isinstance(t, ast.Name) and t.id not in FIELDS}

    def alias(node):
        return isinstance(node, ast.Name) and node.id in aliases

    return [(node.lineno, lines[node.lineno - 1].strip()) for node in nodes if aliases and isinstance(node, ast.Compare)
            and any(_is_strings(a) and alias(b) or alias(a) and _is_strings(b)
                    for a, b in zip([node.left, *node.comparators], node.comparators))]


def _modules(root: Path):
    """``(relative path, text)`` of each module of ``root/grpo_theory`` but the registry."""
    for path in sorted((root / "grpo_theory").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel != "grpo_theory/variants.py":
            yield rel, path.read_text()


def aliased_sites(root: Path) -> list[tuple[str, int, str]]:
    """``(path, line, source line)`` of :func:`find_aliased`'s comparisons under ``root/grpo_theory`` (the registry
    not searched)."""
    return sorted({(rel, lineno, line) for rel, text in _modules(root) for lineno, line in find_aliased(text)})


def sites(root: Path, *, allowed: bool = False) -> list[tuple[str, int, str]]:
    """``(path, line, source line)`` of every string dispatch on an Objective field under ``root/grpo_theory``.

    Parameters
    ----------
    root : Path
        The repository (its ``grpo_theory`` package is read).
    allowed : bool, default False
        Include the comparisons of :data:`ALLOWED` (tables' columns) too.
    """
    out = []
    for rel, text in _modules(root):
        for lineno, line in find(text):
            if not allowed and any(rel == p and frag in line for p, frag in ALLOWED):
                continue
            out.append((rel, lineno, line))
    return sorted(set(out))


if __name__ == "__main__":                  # python tests/string_dispatch.py [ROOT]
    import sys

    found = sites(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]))
    for rel, lineno, line in found:
        print(f"{rel}:{lineno}: {line}")
    print(f"{len(found)} lines in {len({r for r, _, _ in found})} files")
