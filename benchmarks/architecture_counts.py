"""Counts behind the before/after table of docs/architecture.md ("The objective's variants").

    python benchmarks/architecture_counts.py [ROOT ...]

ROOT is a checkout (default: this one); give an older one (``git worktree add /tmp/before <commit>``, or
``git archive <commit> grpo_theory | tar -x -C /tmp/before``) for the "before" column. Every count is read
from the source with ``ast``:

* string-dispatch sites: comparisons of an Objective field with a string (``tests/string_dispatch.py``);
* files naming a non-default advantage estimator in code: package files (not the registry) whose code holds
  the string ``"rloo"``, ``"reinforce_pp"`` or ``"pass_at_k"`` (docstrings and messages excluded) -- where a
  new estimator would have to be special-cased too;
* private cross-module imports and private attribute reads on another object (``tests/private_names.py``;
  of the reads, those of ``ClassProblem._log_p``, now the public ``ClassProblem.log_p``);
* public-API inconsistencies: public functions taking the objective before the question; public parameters
  named ``objective`` where the rest say ``obj``; bare ``raise ValueError`` in the package;
  ``ExactEvaluationTooLarge`` subclassing ``InvalidInputError``; the RLHF baseline without a
  ``StationaryPoint`` form beside ``nash_equilibrium``; ``Objective`` fields missing from its docstring.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import string_dispatch  # noqa: E402
from private_names import private_attribute_reads, private_imports  # noqa: E402

ESTIMATORS = {"rloo", "reinforce_pp", "pass_at_k"}


def _modules(root: Path):
    for path in sorted((root / "grpo_theory").rglob("*.py")):
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text())


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            out.add(id(node.body[0].value))
    return out


def _message_nodes(tree: ast.AST) -> set[int]:
    """String constants inside a raise or a warning/f-string (messages, not dispatch)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Raise, ast.JoinedStr)) or (
                isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("append", "warn")):
            out |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant)}
    return out


def estimator_files(root: Path) -> list[str]:
    out = []
    for rel, tree in _modules(root):
        if rel == "grpo_theory/variants.py":
            continue
        skip = _docstring_nodes(tree) | _message_nodes(tree)
        if any(isinstance(n, ast.Constant) and n.value in ESTIMATORS and id(n) not in skip for n in ast.walk(tree)):
            out.append(rel)
    return out


def api_inconsistencies(root: Path) -> dict[str, int]:
    obj_first, objective_named, bare = 0, 0, 0
    for rel, tree in _modules(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                    and getattr(node.exc.func, "id", "") == "ValueError":
                bare += 1
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            names = [a.arg for a in node.args.args]
            objective_named += "objective" in names and "obj" not in names
            qi = next((i for i, n in enumerate(names) if n in ("q", "question")), None)
            oi = next((i for i, n in enumerate(names) if n in ("obj", "objective")), None)
            obj_first += qi is not None and oi is not None and oi < qi
    errors = (root / "grpo_theory" / "errors.py").read_text()
    too_large_is_bad_input = "class ExactEvaluationTooLarge(InvalidInputError)" in errors
    baselines = (root / "grpo_theory" / "solvers" / "baselines.py").read_text()
    rlhf_point = "def rlhf_optimum(" in baselines
    problem = (root / "grpo_theory" / "problem.py").read_text()
    tree = ast.parse(problem)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Objective")
    doc = ast.get_docstring(cls) or ""
    heads = set()
    for line in doc.splitlines():
        if " :" in line and not line.startswith(" "):
            heads |= {h.strip() for h in line.split(" :")[0].split(",")}
    fields = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]
    return {"public functions taking the objective before the question": obj_first,
            "public functions naming the objective `objective` (the rest: `obj`)": objective_named,
            "bare `raise ValueError` in the package": bare,
            "ExactEvaluationTooLarge is an InvalidInputError": int(too_large_is_bad_input),
            "RLHF baseline without a StationaryPoint form": int(not rlhf_point),
            "Objective fields not in its docstring": sum(f not in heads for f in fields)}


def counts(root: Path) -> dict[str, int]:
    sites = string_dispatch.sites(root)
    out = {"string-dispatch lines": len(sites), "string-dispatch files": len({p for p, _, _ in sites}),
           "package files naming a non-default advantage estimator in code": len(estimator_files(root)),
           "private names imported across modules": len(private_imports(root)),
           "reads of ClassProblem's `_log_p` outside its class": sum(r.endswith("._log_p")
                                                                     for r in private_attribute_reads(root)),
           "private attributes read on another object": len(private_attribute_reads(root))}
    api = api_inconsistencies(root)
    out.update(api)
    out["public-API inconsistencies (sum of the six above)"] = sum(api.values())
    return out


if __name__ == "__main__":
    roots = [Path(a) for a in sys.argv[1:]] or [Path(__file__).resolve().parents[1]]
    table = [counts(r) for r in roots]
    print("| count | " + " | ".join(str(r) for r in roots) + " |")
    print("| --- |" + " --- |" * len(roots))
    for key in table[0]:
        print(f"| {key} | " + " | ".join(str(t[key]) for t in table) + " |")
