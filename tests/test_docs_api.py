"""The API pages' tables: every row of a Parameters, Attributes, Returns or Raises table that mkdocstrings
renders has a description, no row puts its description in the Type column (a ``name : description``
docstring line), and no raw Sphinx role or double-backtick literal shows.

The rows are read the way the docs build reads them, without building: each ``::: name`` of docs/api/*.md
with its options, loaded statically by griffe (the loader mkdocstrings uses) and parsed by its numpy parser,
walking the members mkdocstrings renders (mkdocs.yml's ``filters``, a page's ``members`` list, public
aliases only, no submodules). On the built site this walk gives the same rows: 1,645 table rows, 173 with an
empty description cell, when this test was written (counted once on the HTML with BeautifulSoup).

What "raw" means here: the Type column is shown as written (a role or ````x```` in it shows as typed);
roles in descriptions become cross references (docs/site_hooks.py) when they name ``[\\w.]+``; a
````literal```` in a description renders unless its paragraph leaves one unclosed.

And every function or method rendered has a row for each parameter of its signature
(:func:`test_every_parameter_has_a_row`; ``self``, ``*args`` and ``**kwargs`` aside), and a row naming several
parameters (``rtol, atol : float``) groups only parameters with the same default and annotation, since griffe
shows the first one's for all (:func:`test_grouped_rows_show_the_right_default_and_type`)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
SECTIONS = ("parameters", "other parameters", "attributes", "returns", "yields", "receives", "raises", "warns")
DEFAULT_FILTERS = ["!^_"]                                     # mkdocs.yml's mkdocstrings options
DIRECTIVE_RE = re.compile(r"^::: (\S+)\n((?:[ \t]+.*\n|\n(?=[ \t]))*)", re.M)
ANY_ROLE_RE = re.compile(r":(?:py:)?[a-z]+:`[^`]*`")
HOOK_ROLE_RE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):`~?[\w.]+(?:\(\))?`")

# Words a numpy Type column may hold besides names (``array_like of float, shape (n,), optional``).
TYPE_WORDS = frozenset("""of or and shape optional keyword only sequence sequences list tuple dict mapping array
    int float bool str none callable iterable default object path bytes complex set frozenset type any generator
    iterator ndarray dataframe series scalar number integer string boolean instance slice token""".split())
SENTENCE_STARTS = frozenset({"The", "A", "An", "Each", "One", "If", "Every", "When", "Derived"})
QUOTED_RE = re.compile(r"'[^']*'|\"[^\"]*\"")
NAME_TUPLE_RE = re.compile(r"\(\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+\s*\)")     # (lo, hi) names a tuple


def description_words(annotation: str) -> list[str]:
    """The words of a Type column that are neither names nor type vocabulary (empty for a real type)."""
    text = NAME_TUPLE_RE.sub(" ", QUOTED_RE.sub(" ", annotation))
    words = []
    for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", text):
        if "_" in tok or "." in tok or len(tok) == 1 or tok.isupper() or re.search(r"[a-z][A-Z]", tok):
            continue                                               # a name: n_pass, numpy.ndarray, K, FlowTable
        if tok[0].isupper() and tok not in SENTENCE_STARTS:
            continue                                               # a class: Objective, Path
        if tok.lower() not in TYPE_WORDS:
            words.append(tok)
    return words


def raw_markup(text: str, *, rendered_as_markdown: bool) -> list[str]:
    """Roles and double-backtick literals that show as typed."""
    if not rendered_as_markdown:
        return ANY_ROLE_RE.findall(text) + (["``"] if "``" in text else [])
    found = [r for r in ANY_ROLE_RE.findall(text) if not HOOK_ROLE_RE.fullmatch(r)]
    found += [f"unclosed `` in {p[:40]!r}" for p in re.split(r"\n\s*\n", text) if p.count("``") % 2]
    return found


def row_defects(kind: str, name: str, annotation: str, description: str) -> dict[str, list[str]]:
    """``{"empty": [...], "type": [...], "raw": [...]}`` for one table row."""
    out: dict[str, list[str]] = {"empty": [], "type": [], "raw": []}
    label = f"{kind} {name or '(unnamed)'}"
    if not description.strip(" .;:-\n"):
        out["empty"].append(label)
    if annotation and (description_words(annotation) or annotation.rstrip().endswith(".")
                       or re.search(r"\s:\s", annotation)):
        out["type"].append(f"{label}: {annotation[:60]!r}")
    out["raw"] += [f"{label}: {r}" for r in raw_markup(annotation + " " + name, rendered_as_markdown=False)]
    out["raw"] += [f"{label}: {r}" for r in raw_markup(description, rendered_as_markdown=True)]
    return out


def _keep(name: str, filters: list[str]) -> bool:
    keep = True
    for f in filters:
        negate = f.startswith("!")
        if re.search(f[1:] if negate else f, name):
            keep = not negate
    return keep


def _rendered(obj, filters, members, root=True):
    """The objects mkdocstrings renders for ``::: obj`` (members_list applies to the root only)."""
    yield obj
    if root and (members is False or members == []):
        return
    listed = root and isinstance(members, list)
    for name, child in obj.members.items():
        if listed:
            if name not in members:
                continue
        elif child.inherited or not _keep(name, filters) or (child.is_alias and not child.is_public):
            continue
        try:
            target = child.final_target if child.is_alias else child
        except griffe.AliasResolutionError:                       # an import from outside the package
            continue
        if target.is_module:
            continue                                               # show_submodules is off
        if target.is_class:
            yield from _rendered(target, filters, None, root=False)
        else:
            yield target


def _directives():
    for page in sorted(API.glob("*.md")):
        for m in DIRECTIVE_RE.finditer(page.read_text()):
            options = (yaml.safe_load(m.group(2)) or {}).get("options", {}) if m.group(2).strip() else {}
            yield page.stem, m.group(1), options


def _rows(package):
    """(page, object path, section, name, Type column, description) of every rendered table row."""
    for page, ident, options in _directives():
        obj = package if ident == package.path else package[ident[len(package.path) + 1:]]
        for o in _rendered(obj, options.get("filters", DEFAULT_FILTERS), options.get("members")):
            if not o.docstring:
                continue
            for section in o.docstring.parse("numpy", warnings=False):
                if section.kind.value not in SECTIONS:
                    continue
                for item in section.value:
                    annotation = "" if item.annotation is None else str(item.annotation)
                    yield page, o.path, section.kind.value, getattr(item, "name", "") or "", annotation, \
                        item.description or ""


@pytest.fixture(scope="module")
def package():
    """The package as griffe reads it for mkdocstrings (statically: nothing is imported)."""
    return griffe.load("grpo_theory", search_paths=[str(ROOT)], docstring_parser="numpy",
                       resolve_aliases=True, resolve_external=False)


@pytest.fixture(scope="module")
def page_defects(package):
    """``{page: {"rows": n, "empty": [...], "type": [...], "raw": [...]}}``."""
    pages: dict[str, dict] = {}
    for page, path, kind, name, annotation, description in _rows(package):
        entry = pages.setdefault(page, {"rows": 0, "empty": [], "type": [], "raw": []})
        entry["rows"] += 1
        for key, found in row_defects(kind, name, annotation, description).items():
            entry[key] += [f"{path}: {x}" for x in found]
    return pages


def _counts(entry) -> tuple[int, int, int]:
    return len(entry["empty"]), len(entry["type"]), len(entry["raw"])


API_PAGES = sorted(p.stem for p in API.glob("*.md") if DIRECTIVE_RE.search(p.read_text()))


def test_the_walk_covers_every_api_page(page_defects):
    """Every ``:::`` directive resolves (a KeyError otherwise), and every page yields table rows but two
    whose objects carry no numpy sections (errors: two classes; figures: dataclasses and a driver)."""
    assert len(API_PAGES) >= 18
    assert {p for p in API_PAGES if p not in page_defects} <= {"errors", "figures"}
    assert sum(e["rows"] for e in page_defects.values()) > 1200


@pytest.mark.parametrize("page", API_PAGES)
def test_api_page_tables_are_complete(page_defects, page):
    entry = page_defects.get(page, {"rows": 0, "empty": [], "type": [], "raw": []})
    problems = entry["empty"] + entry["type"] + entry["raw"]
    assert not problems, (f"api/{page}: {_counts(entry)} (empty, Type column, raw) of {entry['rows']} rows; "
                          + "; ".join(problems[:12]))


def test_the_checks_find_each_defect():
    doc = griffe.Docstring(
        "Summary.\n\nParameters\n----------\nx : float\n    The value.\ny : int\nz : the scale of ``x``.\n"
        "w : float\n    Like :func:`f(1)`; see :func:`grpo_theory.kl.coefficient`.\n\n"
        "Returns\n-------\nfloat\n    ``x`` times 2.\n", parser="numpy")
    rows = [(s.kind.value, i.name, str(i.annotation or ""), i.description) for s in doc.parse() if s.kind.value in SECTIONS for i in s.value]
    found = [row_defects(*r) for r in rows]
    assert [Counter({k: len(v) for k, v in f.items()}) for f in found] == [
        Counter(), Counter(empty=1), Counter(empty=1, type=1, raw=1), Counter(raw=1), Counter()]
    assert description_words("array_like of float, shape (n,), optional") == []
    assert description_words("{'k1', 'k2'} or None") == [] and description_words("(lo, hi)") == []
    assert description_words("numpy.ndarray of int, number of passing members") == ["passing", "members"]
    assert raw_markup("one ``x`` and\n\nan ``open one", rendered_as_markdown=True) != []
    assert raw_markup("one ``x``, :class:`Question`", rendered_as_markdown=True) == []


# -- every parameter has a row ----------------------------------------------------------------------------

def undocumented_parameters(function) -> list[str]:
    """The parameters of ``function``'s signature (``self``, ``cls``, ``*args`` and ``**kwargs`` aside)
    that no row of its Parameters or Other Parameters table names."""
    wanted = [p.name for p in function.parameters if p.name not in ("self", "cls")
              and p.kind.value not in ("variadic positional", "variadic keyword")]
    rows = set()
    for section in (function.docstring.parse("numpy", warnings=False) if function.docstring else []):
        if section.kind.value in ("parameters", "other parameters"):
            rows |= {item.name for item in section.value}
    return [name for name in wanted if name not in rows]


def _rendered_functions(package):
    """``(page, function)`` for every function and method rendered, each once (on the first page that
    renders it)."""
    seen = set()
    for page, ident, options in _directives():
        obj = package if ident == package.path else package[ident[len(package.path) + 1:]]
        for o in _rendered(obj, options.get("filters", DEFAULT_FILTERS), options.get("members")):
            if o.is_function and o.path not in seen:
                seen.add(o.path)
                yield page, o


@pytest.fixture(scope="module")
def page_signatures(package):
    """``{page: ["path: missing, ...", ...]}`` over every rendered function and method (each counted once,
    on the first page that renders it; names starting with ``_`` aside)."""
    pages: dict[str, list[str]] = {}
    for page, o in _rendered_functions(package):
        missing = [] if o.name.startswith("_") else undocumented_parameters(o)
        if missing:
            pages.setdefault(page, []).append(f"{o.path}: {', '.join(missing)}")
    return pages


@pytest.mark.parametrize("page", API_PAGES)
def test_every_parameter_has_a_row(page_signatures, page):
    found = page_signatures.get(page, [])
    assert not found, f"api/{page}: {len(found)} functions leave parameters out of their table: {found[:10]}"


def test_the_signature_check_finds_a_missing_row(package):
    function = griffe.Function("f", parameters=griffe.Parameters(
        griffe.Parameter("x", kind=griffe.ParameterKind.positional_or_keyword),
        griffe.Parameter("y", kind=griffe.ParameterKind.keyword_only),
        griffe.Parameter("kw", kind=griffe.ParameterKind.var_keyword)))
    function.docstring = griffe.Docstring("F.\n\nParameters\n----------\nx : float\n    The value.\n",
                                          parent=function)
    assert undocumented_parameters(function) == ["y"]
    function.docstring = None
    assert undocumented_parameters(function) == ["x", "y"]


# -- rows that name several parameters ----------------------------------------------------------------------

PARAMETERS_SECTION_RE = re.compile(r"^(?:Other )?Parameters\n-+\n(.*?)(?=\n\S[^\n]*\n-{3,}\n|\Z)", re.M | re.S)


def grouped_rows_that_mislead(function) -> list[str]:
    """Rows such as ``rtol, atol : float`` whose names differ in their signature's default or annotation.

    griffe renders such a row once per name, each with the *first* name's default (and, without a type, its
    annotation): ``rtol, atol`` with defaults 1e-9 and 1e-11 shows 1e-9 twice in the Default column."""
    if not function.docstring:
        return []
    params = {p.name: p for p in function.parameters}
    out = []
    for section in PARAMETERS_SECTION_RE.finditer(function.docstring.value):
        for line in section.group(1).split("\n"):
            if not line or line[0].isspace():
                continue
            names = [n.strip() for n in line.partition(" : ")[0].split(", ")]
            if len(names) < 2 or not all(n in params for n in names):
                continue
            defaults = {"required" if params[n].default is None else str(params[n].default) for n in names}
            if len(defaults) > 1 or len({str(params[n].annotation) for n in names}) > 1:
                out.append(line.strip())
    return out


@pytest.fixture(scope="module")
def page_grouped(package):
    """``{page: ["path: row", ...]}`` over every rendered function and method, each counted once."""
    pages: dict[str, list[str]] = {}
    for page, o in _rendered_functions(package):
        pages.setdefault(page, []).extend(f"{o.path}: {row}" for row in grouped_rows_that_mislead(o))
    return pages


@pytest.mark.parametrize("page", API_PAGES)
def test_grouped_rows_show_the_right_default_and_type(page_grouped, page):
    found = page_grouped.get(page, [])
    assert not found, f"api/{page}: {len(found)} rows group parameters with different defaults or types: {found[:8]}"


def test_the_grouped_row_check_finds_a_misleading_row():
    function = griffe.Function("f", parameters=griffe.Parameters(
        griffe.Parameter("rtol", kind=griffe.ParameterKind.keyword_only, annotation="float", default="1e-9"),
        griffe.Parameter("atol", kind=griffe.ParameterKind.keyword_only, annotation="float", default="1e-11"),
        griffe.Parameter("a", kind=griffe.ParameterKind.keyword_only, annotation="float", default="0"),
        griffe.Parameter("b", kind=griffe.ParameterKind.keyword_only, annotation="float", default="0"),
        griffe.Parameter("c", kind=griffe.ParameterKind.keyword_only, annotation="float"),
        griffe.Parameter("d", kind=griffe.ParameterKind.keyword_only, annotation="float", default="None")))
    function.docstring = griffe.Docstring("F.\n\nParameters\n----------\nrtol, atol : float\n    Tolerances.\n"
                                          "a, b : float\n    Two more.\nc, d : float\n    Required, and not.\n\nReturns\n-------\nx, y : float\n"
                                          "    Not parameters.\n", parent=function)
    assert grouped_rows_that_mislead(function) == ["rtol, atol : float", "c, d : float"]
