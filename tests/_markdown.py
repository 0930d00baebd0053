"""Reading the docs' markdown tables in tests (their numbers are checked against the results tables)."""

from __future__ import annotations

from pathlib import Path


def markdown_rows(path: Path, header: str) -> list[list[str]]:
    """The body rows of the markdown table whose header line starts with ``header`` (cells stripped of
    spaces and of bold markers)."""
    text = Path(path).read_text()
    body = text[text.index(header):]
    body = body[:body.index("\n\n")]
    return [[c.strip().strip("*") for c in ln.strip().strip("|").split("|")] for ln in body.splitlines()[2:]]
