"""The built site's API module pages with their source views left out, for the checks that read the rest.

A source view of mkdocstrings (``<details class="mkdocstrings-source">``, the collapsed code of an object) holds
the object's code in a ``<pre>`` under a summary line naming its file. The checks of the API pages
(tests/test_docs.py, tests/test_docs_pages.py) read the documentation around it, never that code: the page-length
check counts the text shown with every ``<details>`` closed, the doc-file link check skips ``<pre>``, the tables
are the numpy sections'. The source views are half of each page's markup, so the pages parse in half the time
without them, and each page is read once per process.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

SOURCE_VIEW_RE = re.compile(r'<details class="mkdocstrings-source">(.*?)</details>', re.S)


def without_source_views(page_html: str) -> str:
    """``page_html`` without its source views. A source view with a ``<details>`` inside (where the expression
    would end at the inner one's end) is an error, not a guess."""
    def drop(match: re.Match) -> str:
        if "<details" in match.group(1):
            raise ValueError(f"a source view holds a <details>: {match.group(0)[:200]!r}")
        return ""

    return SOURCE_VIEW_RE.sub(drop, page_html)


@functools.lru_cache(maxsize=None)
def api_page(path: Path) -> str:
    """The page at ``path`` (a built ``api/<name>/index.html``) without its source views, read once."""
    return without_source_views(path.read_text(encoding="utf-8"))
