"""The pages as a reader meets them: each nav page shows its own text, the site has no page outside the nav,
and the Python examples of the user pages can be pasted in order.

A browser read of the built site found the Results page showing the data folder's notes instead:
``docs/results/README.md`` builds to ``results/index.html``, the URL of ``docs/results.md``, and the strict
build only lists it as "not in the nav". It found the guide's examples failing when pasted in order (the
second block used the first block's last, preference-matrix ``q``) and a predict example using ``Objective``
without importing it.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import html
import io
import re
from pathlib import Path

import pytest
from _api_pages import api_page

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE_RE = re.compile(r"^( *)```python[^\n]*\n(.*?)^\1``` *$", re.M | re.S)
H1_RE = re.compile(r"<h1\b[^>]*>(.*?)</h1>", re.S | re.I)

#: Names a page's examples leave to the reader on purpose (their own data or objects).
PLACEHOLDERS = {"predict.md": {"df"}, "trl.md": {"tokenizer"}}


def _nav_pages() -> list[str]:
    import yaml

    cfg = yaml.safe_load(re.sub(r"!!python\S*", "", (ROOT / "mkdocs.yml").read_text()))

    def walk(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from walk(value) if isinstance(value, list) else [value]

    return list(walk(cfg["nav"]))


def _url(page: str) -> str:
    """The folder a nav page is built into (use_directory_urls), '' for the front page."""
    stem = re.sub(r"\.(md|ipynb)$", "", page)
    stem = re.sub(r"(^|/)index$", "", stem)
    return stem + "/" if stem else ""


def _source(page: str) -> Path | None:
    if page == "changelog.md":
        return ROOT / "CHANGELOG.md"                       # docs/site_hooks.py serves it as changelog.md
    path = DOCS / page
    return path if path.suffix == ".md" and path.exists() else None


def _plain(text: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", text)).replace("¶", "")
    return " ".join(re.sub(r"[`*_]", "", text).split())


def test_every_nav_page_shows_its_own_heading(strict_site):
    pages = _nav_pages()
    checked, wrong = 0, []
    for page in pages:
        src = _source(page)
        if src is None:
            continue                                       # a notebook or the generated API index
        first = next((ln for ln in src.read_text().splitlines() if ln.startswith("# ")), None)
        if first is None:
            continue
        built = (strict_site / _url(page) / "index.html").read_text(encoding="utf-8")
        shown = H1_RE.search(built)
        checked += 1
        if shown is None or _plain(shown.group(1)) != _plain(first[2:]):
            wrong.append(f"{page}: built page's heading {_plain(shown.group(1)) if shown else None!r}, "
                         f"the page's own {_plain(first[2:])!r}")
    assert checked >= 25
    assert not wrong, "\n".join(wrong)


def test_the_site_has_no_page_outside_the_nav(strict_site):
    built = {p.relative_to(strict_site).parent.as_posix() for p in strict_site.rglob("index.html")
             if "assets" not in p.relative_to(strict_site).parts}
    built = {"" if p == "." else p + "/" for p in built}
    nav = {_url(p) for p in _nav_pages()}
    assert not built - nav, f"pages no nav entry reaches: {sorted(built - nav)}"
    assert not nav - built, f"nav entries with no page: {sorted(nav - built)}"


def test_the_heading_check_finds_a_page_shown_in_place_of_another():
    shown = H1_RE.search('<h1 id="x">docs/results: data files<a class="headerlink" href="#x">¶</a></h1>')
    assert _plain(shown.group(1)) == "docs/results: data files"
    assert _plain(shown.group(1)) != _plain("Theory against a real GRPO trainer")
    assert _plain("<code>grpo_theory.kl</code>¶") == _plain("`grpo_theory.kl`")
    assert _url("index.md") == "" and _url("api/index.md") == "api/" and _url("notebooks/a.ipynb") == "notebooks/a/"


def _unbound_names(blocks: list[str]) -> list[tuple[int, str]]:
    """(block, name) for each name a block reads that neither builtins nor this or an earlier block binds
    (imports, assignments, loop targets, definitions, arguments)."""
    bound, out = set(dir(builtins)), []
    for i, code in enumerate(blocks):
        tree = ast.parse(code)
        stored = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stored.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                stored |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                stored.add(node.name)
            elif isinstance(node, ast.arg):
                stored.add(node.arg)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and node.id not in bound and node.id not in stored:
                out.append((i, node.id))
        bound |= stored
    return sorted(set(out))


def _python_blocks(name: str) -> list[str]:
    text = (DOCS / name).read_text()
    return ["\n".join(ln[len(m.group(1)):] for ln in m.group(2).splitlines()) for m in FENCE_RE.finditer(text)]


USER_PAGES = ["index.md", "guide.md", "predict.md", "trl.md", "dynamics.md", "conventions.md", "derivations.md",
              "install.md"]


@pytest.mark.parametrize("name", USER_PAGES)
def test_every_name_an_example_reads_is_defined_on_its_page(name):
    blocks = _python_blocks(name)
    unbound = [(i, n) for i, n in _unbound_names(blocks) if n not in PLACEHOLDERS.get(name, set())]
    assert not unbound, f"docs/{name}: python block (0-based) and the name it reads undefined: {unbound}"


def test_the_name_check_finds_a_missing_import():
    assert _unbound_names(["x = 1\nprint(x)", "predict(df, Objective(beta=x))"]) == [(1, "Objective"), (1, "df"),
                                                                                   (1, "predict")]
    assert _unbound_names(["from a import b as c\nfor i in c: pass\ndef f(y): return y + i"]) == []


def test_the_guides_examples_run_in_order():
    """Pasted one after another into one session, as a reader does, the guide's Python blocks all run."""
    blocks = _python_blocks("guide.md")
    assert len(blocks) >= 4
    namespace: dict = {"__name__": "__guide__"}
    for i, code in enumerate(blocks):
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(code, f"docs/guide.md, python block {i}", "exec"), namespace)
            except Exception as exc:                                          # noqa: BLE001 - named below
                pytest.fail(f"docs/guide.md python block {i} (0-based) fails after the ones before it: "
                            f"{type(exc).__name__}: {exc}")


SPEC_RE = re.compile(r"\bSPEC(?:'s)? (?:sections?\b|§)|\bthe SPEC\b|\bin the SPEC\b")


def _docstrings():
    """(file, docstring) of every module, class and function of the package, read with ``ast``."""
    for path in sorted((ROOT / "grpo_theory").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield path.relative_to(ROOT).as_posix(), doc


def test_no_page_or_docstring_sends_the_reader_to_the_spec():
    """The project's SPEC is not shipped with the package or the site: "SPEC section 3" is a reference a
    reader cannot follow (the note's equations and the site's pages are)."""
    texts = [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted(DOCS.rglob("*.md"))]
    texts += [("CHANGELOG.md", (ROOT / "CHANGELOG.md").read_text()), *_docstrings()]
    assert len(texts) > 500
    hits = [(name, m.group(0)) for name, text in texts for m in SPEC_RE.finditer(text)]
    assert not hits, f"{len(hits)} references to the SPEC, e.g. {hits[:8]}"
    assert SPEC_RE.search("(SPEC section 3)") and SPEC_RE.search("forms of SPEC §2")
    assert SPEC_RE.search("as in the SPEC (Eq. 2)")
    assert not SPEC_RE.search("SPEC = FigureSpec(number, slug)")


def _raw_literals(page_html: str) -> list[str]:
    """Double-backtick literals shown as typed on a built page (outside the collapsed source views, whose
    docstrings keep their markup): rst's ````x```` in a docstring's indented block renders verbatim."""
    text = re.sub(r"<details\b.*?</details>", "", page_html, flags=re.S)
    if "<article" in text:
        text = text[text.index("<article"):text.index("</article>")]
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return re.findall(r".{0,40}``[^`\n]{1,60}``", text)


def test_no_api_page_shows_a_raw_double_backtick_literal(strict_site):
    pages = sorted((strict_site / "api").glob("*/index.html"))
    assert len(pages) >= 15
    hits = [(p.parent.name, h) for p in pages for h in _raw_literals(api_page(p))]
    assert not hits, f"{len(hits)} raw literals, e.g. {hits[:6]}"
    shown = '<article><pre><code>out.csv  in the format of ``grpo-theory figures``</code></pre></article>'
    assert _raw_literals(shown) and not _raw_literals('<article><details class="quote"><code>``x``</code>'
                                                      '</details><code>x</code></article>')


#: The most text an API module page may show (characters outside the collapsed source views). Measured in
#: Chromium at 1280 px on the API pages, a page is 0.74 to 1.21 px tall per shown character (median 1.0):
#: 32,000 characters is about the ~25,000 px a reader can still scroll through with its table of contents.
#: tests/test_site.py measures the heights themselves where Chromium is installed.
API_PAGE_MAX_CHARS = 32_000


def _article(html_text: str):
    """The ``<article>`` of a built page, parsed (BeautifulSoup's html.parser)."""
    bs4 = pytest.importorskip("bs4")
    return bs4.BeautifulSoup(html_text, "html.parser").find("article")


def _shown_text(article) -> str:
    """The text ``article`` (parsed) shows with every ``<details>`` (the collapsed source) closed. It removes them
    from ``article``: read anything else of it first."""
    for details in article.find_all("details"):
        details.decompose()
    return article.get_text(" ", strip=True)


def _shown_api_text(html_text: str) -> str:
    """The text an API page's article shows with every ``<details>`` (the collapsed source) closed."""
    return _shown_text(_article(html_text))


@functools.lru_cache(maxsize=None)
def _api_page_facts(path: Path) -> tuple[list[str], int]:
    """An API page's ``docs/NAME.md`` files shown as text (:func:`_unlinked_doc_files`) and the number of characters
    it shows (:func:`_shown_api_text`), from one parse of the page (parsing is most of either check's time)."""
    article = _article(api_page(path))
    unlinked = _unlinked_in(article, _doc_pages())          # before _shown_text closes the <details>
    return unlinked, len(_shown_text(article))


def test_no_api_module_page_is_too_long(strict_site):
    """Each API module page (the generated index of names aside) shows at most API_PAGE_MAX_CHARS
    characters: the Predict-a-run page showed 102,039 (104,859 px), Stationary points 94,163 (77,899 px)
    and Studies 74,830 (64,036 px) before they were split into sections of several pages."""
    pages = sorted(p for p in (strict_site / "api").glob("*/index.html"))
    sizes = {p.parent.name: _api_page_facts(p)[1] for p in pages}
    assert len(sizes) >= 25
    too_long = {name: n for name, n in sizes.items() if n > API_PAGE_MAX_CHARS}
    assert not too_long, f"API pages over {API_PAGE_MAX_CHARS:,} shown characters: {too_long}"


def test_the_pages_are_read_without_their_source_views_only():
    """The checks above read each API page without mkdocstrings' source views (tests/_api_pages.py): the
    rest, an admonition's ``<details>`` included, stays; a source view with a ``<details>`` inside is refused."""
    from _api_pages import without_source_views

    page = ('<article><p>See docs/predict.md</p><details class="mkdocstrings-source"><summary>Source code in '
            '<code>grpo_theory/kl.py</code></summary><pre>x = "docs/guide.md"</pre></details>'
            '<details class="note" open><p>kept</p></details></article>')
    assert without_source_views(page) == ('<article><p>See docs/predict.md</p><details class="note" open><p>kept'
                                          '</p></details></article>')
    with pytest.raises(ValueError, match="holds a <details>"):
        without_source_views('<details class="mkdocstrings-source"><details>x</details></details>')


def test_the_length_check_counts_shown_text_not_the_collapsed_source():
    page = ("<html><body><article><h2>f</h2><p>one two</p><details><summary>Source</summary>"
            "<pre>" + "x" * 5000 + "</pre></details></article></body></html>")
    assert _shown_api_text(page) == "f one two"


DOC_FILE_TEXT_RE = re.compile(r"(?<![\w/'\"=.-])docs/([\w/-]+\.md)\b")


def _unlinked_in(article, pages: set[str]) -> list[str]:
    """``docs/NAME.md`` (NAME.md a page of the site) shown as text outside a link and outside code blocks of
    ``article`` (parsed)."""
    found = []
    for text in article.find_all(string=DOC_FILE_TEXT_RE):
        if text.find_parent(["pre", "a"]) is None:
            found += [f"docs/{m.group(1)}" for m in DOC_FILE_TEXT_RE.finditer(text) if m.group(1) in pages]
    return found


def _unlinked_doc_files(html_text: str, pages: set[str]) -> list[str]:
    """``docs/NAME.md`` (NAME.md a page of the site) shown as text outside a link and outside code blocks."""
    return _unlinked_in(_article(html_text), pages)


@functools.lru_cache(maxsize=None)
def _doc_pages() -> frozenset[str]:
    """The site's pages by their file under docs/ (``predict.md``, ``api/kl.md`` ...)."""
    return frozenset(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


def test_api_pages_link_the_doc_pages_their_docstrings_name(strict_site):
    """A docstring names a guide page by its file (``See docs/predict.md``, as ``help()`` shows it); on the API
    pages it is a link to that page (docs/site_hooks.py). 13 showed as plain text on 5 pages before."""
    found = {p.parent.name: _api_page_facts(p)[0] for p in sorted((strict_site / "api").glob("*/index.html"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"API pages showing a docs page's file as text, not a link: {found}"


def test_the_doc_file_check_finds_plain_text_and_leaves_links_code_blocks_and_values():
    page = ('<article><p>See docs/predict.md. Also <a href="x">docs/guide.md</a>, '
            "<code>'docs/derivations.md'</code>, docs/missing.md</p><pre>docs/trl.md</pre></article>")
    assert _unlinked_doc_files(page, {"predict.md", "guide.md", "derivations.md", "trl.md"}) == ["docs/predict.md"]
