"""User docs speak of the package, not of its development history: no "issue N" or "session N" in the
site's pages, the notebooks, or the docstrings of the public API (module, class and function docstrings
of every public module, read with ``ast``; comments are for developers and are not checked).

The measurement and end-check records (docs/performance.md, docs/reliability.md) name their runs by date and
commit; the figure modules' docstrings are checked with the rest of the package."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HISTORY_RE = re.compile(r"\b(?:issues?|sessions?) #?\d+"
                        r"|\b(?:this|last|previous|any|the) sessions?\b(?! of)|\bthe issue's\b"
                        r"|\bthe issue (?:saw|measured|asks|asked|found)\b|\bto this task\b", re.I)
RECORD_PAGES: set[str] = set()
NOT_YET: tuple[str, ...] = ()


def _hits(text: str) -> list[str]:
    return [text[max(0, m.start() - 30):m.end() + 10].replace("\n", " ") for m in HISTORY_RE.finditer(text)]


def _public_docstrings(path: Path):
    """(qualified name, docstring) of a module and of its public classes, functions and methods."""
    tree = ast.parse(path.read_text())

    def walk(node, prefix):
        doc = ast.get_docstring(node, clean=False)
        if doc:
            yield prefix, doc
        for child in getattr(node, "body", []):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not child.name.startswith("_"):
                yield from walk(child, f"{prefix}.{child.name}")

    yield from walk(tree, path.relative_to(ROOT).as_posix())


def _public_modules():
    for path in sorted((ROOT / "grpo_theory").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        parts = path.relative_to(ROOT).with_suffix("").parts
        if any(p.startswith("_") and p != "__init__" for p in parts) or rel.startswith(NOT_YET):
            continue
        yield path


def test_the_history_check_finds_a_mention():
    assert _hits("Fixed in issue 25; see Session 3.") and _hits("(issues #21)")
    assert not _hits("the issue is 25 points; a session of 3 runs") and not _hits("reissue 2")
    assert _hits("it was not built this session") and _hits("the issue's remedy") and _hits("the issue saw 2 ms")


#: The site's pages: docs/*.md, the API pages, and the root's CHANGELOG.md (the site's changelog page).
SITE_PAGES = sorted([p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md") if p.name not in RECORD_PAGES]
                    + [p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "api").glob("*.md")]
                    + ["CHANGELOG.md"])


@pytest.mark.parametrize("name", SITE_PAGES)
def test_pages_do_not_speak_of_issues_or_sessions(name):
    hits = _hits((ROOT / name).read_text())
    assert not hits, f"{name}: {hits[:5]}"


def test_notebooks_do_not_speak_of_issues_or_sessions():
    notebooks = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
    assert notebooks
    hits = [(nb.name, h) for nb in notebooks for cell in json.loads(nb.read_text())["cells"]
            for h in _hits("".join(cell["source"]))]
    assert not hits, hits[:5]


def test_public_docstrings_do_not_speak_of_issues_or_sessions():
    docs = [(name, doc) for path in _public_modules() for name, doc in _public_docstrings(path)]
    assert len(docs) > 500
    hits = [(name, h) for name, doc in docs for h in _hits(doc)]
    assert not hits, f"{len(hits)} mentions, e.g. {hits[:8]}"
