"""Code blocks of the docs pages fit the code box at 1280 px, so that no line is wrapped mid-token
(docs/stylesheets/site.css makes an overlong line wrap instead of scrolling sideways; wrapping by hand
reads better, and copying gives lines that fit a terminal).

The width, from Material's stylesheet at a 1280 px window (root font 125%: 1 rem = 20 px): the grid is
61 rem = 1,220 px; two sidebars of 12.1 rem leave 736 px, the article's margins of 1.2 rem a side 688 px;
code is 0.85 x 0.8 rem = 13.6 px with 1.176 em (16 px) of padding a side, leaving 656 px; a monospace
advance of 0.6 em is 8.16 px, so 80 characters. A block inside a list item starts about 1.25 em of body
text further right: 77 characters there. tests/test_site.py measures the rendered boxes in Chromium where it
is installed; this test needs no browser."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WIDTH = 80                  # characters of a top-level code block at 1280 px (module docstring)
NESTED_WIDTH = 77           # inside a list item
FENCE_RE = re.compile(r"^( *)(```+|~~~+)([\w-]*)[^\n]*\n(.*?)^\1\2 *$", re.M | re.S)

def code_blocks(text: str):
    """(language, indentation, code with the indentation removed, first line number) of each fenced block."""
    for m in FENCE_RE.finditer(text):
        indent = len(m.group(1))
        code = "\n".join(line[indent:] for line in m.group(4).rstrip("\n").split("\n"))
        yield m.group(3), indent, code, text[:m.start()].count("\n") + 2


def long_lines(text: str) -> list[str]:
    """``"line N (C chars): ..."`` for each code line over the width of its block."""
    out = []
    for _, indent, code, first in code_blocks(text):
        width = NESTED_WIDTH if indent else WIDTH
        out += [f"line {first + i} ({len(line)} chars): {line[:50]}..." for i, line in enumerate(code.split("\n"))
                if len(line) > width]
    return out


PAGES = sorted(p.name for p in DOCS.glob("*.md"))


@pytest.mark.parametrize("name", PAGES)
def test_code_lines_fit_the_box_at_1280_px(name):
    found = long_lines((DOCS / name).read_text())
    assert not found, f"docs/{name}: {len(found)} code lines over {WIDTH} characters: {found[:6]}"


@pytest.mark.parametrize("name", ["guide.md", "predict.md", "index.md", "trl.md", "dynamics.md", "architecture.md"])
def test_python_blocks_still_parse(name):
    """Wrapping by hand kept every Python block valid Python."""
    blocks = [(first, code) for lang, _, code, first in code_blocks((DOCS / name).read_text()) if lang == "python"]
    assert blocks
    for first, code in blocks:
        ast.parse(code, filename=f"docs/{name}:{first}")


def test_the_check_finds_a_long_line():
    text = "x\n\n```python\n" + "a" * 80 + "\nb = 1\n```\n\n1. item\n\n   ```bash\n   " + "c" * 78 + "\n   ```\n"
    found = long_lines(text)
    assert len(found) == 1 and found[0].startswith("line 11 (78 chars)")
    assert len(long_lines(text.replace("a" * 80, "a" * 81))) == 2
