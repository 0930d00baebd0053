"""mkdocs hooks: what the site needs beyond the markdown in docs/.

* The figures in paper_figures/ (outside docs/) become part of the site. docs/figures.md links them
  as ``../paper_figures/X.png`` so that they also show on GitHub; the site serves them under
  ``paper_figures/`` and the links are rewritten to match.
* MathJax is served by the site itself (``assets/mathjax/``), copied from the ``mathjax`` package
  of PyPI's django-static-mathjax (MathJax 3.2.2, no Django needed; in the ``docs`` extra), so the
  math renders with no network.
* ``api/index.md`` is generated from the package's ``__all__`` lists (read statically with griffe,
  so nothing is imported and torch is not needed): every public name, its one-line summary and a
  cross reference to where mkdocstrings documents it. A name whose page is missing is a broken
  cross reference, which fails the strict build naming it.
* Sphinx roles in docstrings (``:func:`x```, ``:class:`x```) become cross references instead of
  showing as raw text.
* ``CHANGELOG.md`` (the repository's root) is the site's ``changelog.md`` page, one text for both.
* ``objects.inv`` names the package's version (mkdocstrings writes "0.0.0").
* An image without alt text (a notebook's output plot) gets one naming its page.
* On the API pages, a docstring's reference to a page by its file (``docs/predict.md``, as ``help()`` shows
  it) becomes a link to that page.
* The API pages' collapsed source listings stay out of the search index: the search plugin reads each page
  with them set aside, and they are put back, byte for byte, before the page is written. They are two fifths
  of the pages' HTML, most of it highlighting markup, and indexing them took a third of the build's time.
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "grpo_theory"
MATHJAX_DEST = "assets/mathjax"
# The combined TeX + MathML -> CommonHTML build and the folders it loads from at run time (fonts,
# menu, accessibility); the other combined builds are not used.
MATHJAX_PARTS = ("tex-mml-chtml.js", "a11y", "adaptors", "input", "output", "sre", "ui")
ROLE_RE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):`~?([\w.]+)(?:\(\))?`")
HTML_ROLE_RE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):<code>~?([\w.]+?)(?:\(\))?</code>")

#: A collapsed source listing of mkdocstrings (``show_source``): highlighted code, which escapes ``<`` and so holds no
#: ``</details>`` of its own.
SOURCE_RE = re.compile(r'<details class="mkdocstrings-source">.*?</details>', re.S)
#: What stands in for the ``i``-th source listing of a page while the search plugin reads it.
SOURCE_MARK = "<!-- grpo_theory source listing {} -->"

_state: dict = {}


# -- MathJax ------------------------------------------------------------------------------------

def _mathjax_dir() -> Path:
    spec = importlib.util.find_spec("mathjax")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        es5 = Path(loc) / "static" / "mathjax" / "es5"
        if (es5 / "tex-mml-chtml.js").exists():
            return es5
    raise PluginError("MathJax is not installed: the site serves its own copy so that math renders offline. "
                      "Install the docs extra: pip install -e '.[docs]' (it brings django-static-mathjax).")


def _mathjax_files(config) -> list[File]:
    es5 = _mathjax_dir()
    out = []
    for part in MATHJAX_PARTS:
        src = es5 / part
        paths = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
        for p in paths:
            rel = p.relative_to(es5).as_posix()
            out.append(File.generated(config, f"{MATHJAX_DEST}/{rel}", abs_src_path=str(p)))
    return out


# -- the API index --------------------------------------------------------------------------------

def _public_modules(module):
    """Non-alias, non-private modules of the package, depth first, in source order."""
    if module.is_alias or any(part.startswith("_") for part in module.path.split(".")):
        return
    yield module
    # ``module.modules`` would ask every alias member whether it is a module, which resolves it, and mkdocstrings
    # then lists each alias so resolved in the site's inventory (objects.inv): members that are not aliases only
    for sub in module.members.values():
        if not sub.is_alias and sub.is_module:
            yield from _public_modules(sub)


def _summary(obj) -> str:
    """The docstring's first paragraph on one line, with rst literals and roles made markdown."""
    doc = obj.docstring.value if obj.docstring else ""
    para = " ".join(line.strip() for line in doc.strip().split("\n\n")[0].splitlines())
    if not para:
        return "(no docstring)"

    # Code spans become <code> with "|" as an entity: a bare "|" would split the table's row, and
    # markdown would show the backslash of an escaped one inside a code span.
    def code(m):
        return "<code>" + html.escape(m.group(2)).replace("|", "&#124;") + "</code>"

    para = re.sub(r"(``?)(.+?)\1", code, para)
    return para.replace("|", "&#124;")


def _load_package(config=None):
    """The package read with griffe. In a build (``config``), mkdocstrings' Python handler loads it, with the site's
    options, into the collection its pages are then rendered from: the package is read once per build, not once
    for the API index and again for the pages (1.4 s of the build's CPU)."""
    plugin = config.plugins.get("mkdocstrings") if config is not None else None
    if plugin is not None:
        handler = plugin.handlers.get_handler("python")
        return handler.collect(PACKAGE, handler.get_options({}))
    import griffe

    return griffe.load(PACKAGE, search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False)


def _index_markdown(package) -> tuple[str, dict[str, str]]:
    """api/index.md, and a map short name -> canonical path used to resolve Sphinx roles."""
    lines = ["# API index", "",
             "Every public name of `grpo_theory`, read from the `__all__` list of each module when the site "
             "is built, with the first paragraph of its docstring. The top-level names are importable as "
             "`from grpo_theory import ...`.", ""]
    names: dict[str, set[str]] = {}
    for module in _public_modules(package):
        exports = module.exports
        if not exports:
            continue
        # the package itself has no page of its own: its names link to the modules that define them
        title = f"`{module.path}`" if module.path == PACKAGE else f"[`{module.path}`][{module.path}]"
        lines += [f"## {title}", "", "| Name | Summary |", "| --- | --- |"]
        for name in exports:
            name = name if isinstance(name, str) else getattr(name, "name", str(name))
            try:
                member = module[name]
            except KeyError as exc:
                raise PluginError(f"{module.path}.__all__ lists {name!r}, which the module does not define") from exc
            target = member.final_target if member.is_alias else member
            path = target.path
            names.setdefault(name, set()).add(path)
            lines.append(f"| [`{name}`][{path}] | {_summary(target)} |")
        lines.append("")
    return "\n".join(lines), {k: next(iter(v)) for k, v in names.items() if len(v) == 1}


def _resolve(name: str, short: dict[str, str]) -> str | None:
    if name.startswith(PACKAGE + "."):
        return name
    last = name.rsplit(".", 1)[-1]
    if "." in name:            # Class.method: qualify the class
        head = short.get(name.split(".", 1)[0])
        return f"{head}.{name.split('.', 1)[1]}" if head else None
    return short.get(last)


def _roles_to_markdown(text: str, short: dict[str, str]) -> str:
    def sub(m):
        path = _resolve(m.group(1), short)
        label = m.group(1).rsplit(".", 1)[-1]
        return f"[`{label}`][{path}]" if path else f"`{label}`"

    return ROLE_RE.sub(sub, text)


def _package_version() -> str:
    """``__version__`` from the package's ``__init__.py``, read as text (nothing is imported)."""
    m = re.search(r'^__version__\s*=\s*"([^"]+)"', (ROOT / PACKAGE / "__init__.py").read_text(), re.M)
    if not m:
        raise PluginError(f"no __version__ in {PACKAGE}/__init__.py")
    return m.group(1)


IMG_RE = re.compile(r"<img\b([^>]*)>")


def _with_alt(html_text: str, title: str) -> str:
    """Every ``<img>`` with no alt text (or an empty one) gets ``"<title>: figure"``."""

    def sub(m):
        attrs = m.group(1)
        if re.search(r'\balt="[^"]+"', attrs):
            return m.group(0)
        attrs = re.sub(r'\s*\balt=""', "", attrs)
        return f'<img alt="{html.escape(title)}: figure"{attrs}>'

    return IMG_RE.sub(sub, html_text)


# The file of a docs page as a docstring names it: as text, or as the whole of an inline code span (a quoted
# one, such as a parameter's default path, is a value and stays as it is).
DOC_FILE_RE = re.compile(r"(<code>)?(?<![\w/'\"=&;.-])docs/([\w/-]+\.md)\b(?(1)</code>)")
PRE_RE = re.compile(r"(<pre\b.*?</pre>)", re.S)


def _link_doc_files(html_text: str, page, files) -> str:
    """Every ``docs/NAME.md`` outside code blocks that names a page of the site becomes a link to it."""

    def sub(m):
        target = files.get_file_from_path(m.group(2))
        if target is None or not target.is_documentation_page():
            return m.group(0)
        return f'<a href="{target.url_relative_to(page.file)}">{m.group(0)}</a>'

    parts = PRE_RE.split(html_text)
    return "".join(part if i % 2 else DOC_FILE_RE.sub(sub, part) for i, part in enumerate(parts))


# -- mkdocs events ----------------------------------------------------------------------------

def on_files(files, config):
    for png in sorted((ROOT / "paper_figures").glob("*.png")):
        files.append(File(f"paper_figures/{png.name}", src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    for f in _mathjax_files(config):
        files.append(f)
    text, short = _index_markdown(_load_package(config))
    _state["short"] = short
    files.append(File.generated(config, "api/index.md", content=_roles_to_markdown(text, short)))
    files.append(File.generated(config, "changelog.md", content=(ROOT / "CHANGELOG.md").read_text()))
    return files


def on_env(env, config, files):
    """The inventory mkdocstrings writes later in this event (its priority is -20) names the package's
    version."""
    handlers = getattr(config.plugins.get("mkdocstrings"), "_handlers", None)
    if handlers is not None:
        handlers.inventory.version = _package_version()
    return env


def on_page_markdown(markdown, page, config, files):
    return markdown.replace("](../paper_figures/", "](paper_figures/")


def on_page_content(html, page, config, files):
    """Sphinx roles that mkdocstrings rendered as ``:func:<code>x</code>`` become cross references.

    A role naming something that is documented nowhere is left as code (it may name a private helper);
    the ``[name][path]`` references in the pages themselves stay strict.
    """
    short = _state.get("short", {})

    def sub(m):
        path = _resolve(m.group(1), short)
        label = m.group(1).rsplit(".", 1)[-1]
        if not path:
            return f"<code>{label}</code>"
        return f'<autoref identifier="{path}" optional><code>{label}</code></autoref>'

    html = HTML_ROLE_RE.sub(sub, html)
    if page.file.src_uri.startswith("api/"):
        html = _link_doc_files(html, page, files)
    return _with_alt(html, page.title or "page")


@event_priority(100)             # before the search plugin (priority 0) reads the page
def _set_sources_aside(context, page, config, nav):
    listings = []

    def mark(m):
        listings.append(m.group(0))
        return SOURCE_MARK.format(len(listings) - 1)

    page.content = SOURCE_RE.sub(mark, page.content)
    if listings:
        _state.setdefault("sources", {})[page.file.src_uri] = listings
    return context


@event_priority(-100)            # after it
def _put_sources_back(context, page, config, nav):
    listings = _state.get("sources", {}).pop(page.file.src_uri, [])
    for i, listing in enumerate(listings):
        mark = SOURCE_MARK.format(i)
        if page.content.count(mark) != 1:
            raise PluginError(f"{page.file.src_uri}: source listing {i} of {len(listings)} was set aside for the "
                              f"search index and its place in the page is lost (found {page.content.count(mark)} "
                              "times, expected once)")
        page.content = page.content.replace(mark, listing)
    return context


on_page_context = CombinedEvent(_set_sources_aside, _put_sources_back)
