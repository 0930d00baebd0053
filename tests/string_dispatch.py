"""Find the places that pick behaviour by comparing an Objective field with a string (``obj.regime == "reverse"``).

Read with ``ast``: a comparison (``==``, ``!=``, ``in``, ``not in``) one side of which is a string literal (or a
tuple, list or set of them) and the other a field of an Objective -- an attribute or a bare name spelled like
one (``obj.advantage``, ``normalization``), ``d.get("advantage")`` or ``d["advantage"]`` -- and a dict of
string keys indexed by such a field (``{"k3": ...}[obj.estimator]``). ``grpo_theory/variants.py`` (the
registry, where the strings live) is not searched. Used by ``tests/test_variants.py`` (none may be left) and
``benchmarks/architecture_counts.py`` (the before/after table of docs/architecture.md).
"""

from __future__ import annotations

import ast
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


def find(text: str) -> list[tuple[int, str]]:
    """``(line, source line)`` of each string dispatch on an Objective field in the Python source ``text``."""
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
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
    for path in sorted((root / "grpo_theory").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "grpo_theory/variants.py":
            continue
        for lineno, line in find(path.read_text()):
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
