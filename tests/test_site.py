"""The docs site as a reader meets it: built, served on 127.0.0.1, every page opened in headless Chromium.

Checks, page by page: no failed request (script, font, image, page), no JavaScript error in the console,
no image that failed to load, no raw TeX left where math should be typeset, each page loads and typesets
within PAGE_BUDGET_S; every notebook page shows output cells and at least one image; the API index links
every name of every ``__all__`` (read here with ``ast``, independently of the site's hook) to an anchor
that exists; the search box finds ``stationary_policy``. Screenshots of the front page and a notebook
are saved under the test's tmp folder (the path is printed). In the page-by-page pass each page gets a small
stand-in of the site's one search index from that index's URL (``_QuietHandler``); the search test loads the real one.

Needs Debian's chromium and chromium-driver (``.ci/run`` installs them) and selenium (test extra);
without them the tests skip and say why.
"""

from __future__ import annotations

import ast
import functools
import http.server
import json
import shutil
import threading
import time
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[1]
PAGE_BUDGET_S = 20.0          # load + typeset; a page over it fails naming the page
API_PAGE_MAX_PX = 25_000       # an API module page's height at 1280 px (with its table of contents)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,800", "--hide-scrollbars"]

# Text nodes outside code, scripts and typeset math must not contain TeX delimiters; an arithmatex
# element that MathJax did not replace is raw math too.
RAW_MATH_JS = """
const bad = [];
const skip = new Set(["PRE", "CODE", "SCRIPT", "STYLE", "TEXTAREA", "MJX-CONTAINER", "MJX-ASSISTIVE-MML"]);
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  let p = n.parentElement, inside = false;
  for (; p; p = p.parentElement) { if (skip.has(p.tagName)) { inside = true; break; } }
  if (inside || !n.parentElement.checkVisibility()) continue;   // hidden copy-button text is not shown
  const t = n.textContent;
  for (const d of ["$$", "\\\\(", "\\\\[", "\\\\frac", "\\\\pi"]) {
    if (t.includes(d)) { bad.push(d + " in: " + t.trim().slice(0, 80)); break; }
  }
}
for (const el of document.querySelectorAll(".arithmatex")) {
  if (!el.querySelector("mjx-container")) bad.push("untypeset arithmatex: " + el.textContent.slice(0, 80));
}
return bad;
"""

# Every element of the article, outside code blocks, that scrolls sideways: a box that clips its content
# horizontally (overflow-x auto or scroll) and whose content is wider than the box.
SCROLLING_JS = """
return [...document.querySelectorAll('article *')].filter(e => !e.closest('pre') &&
    ['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.') + ': ' + e.textContent.trim().slice(0, 40));
"""

WAIT_READY_JS = """
const done = arguments[arguments.length - 1];
const t0 = Date.now();
(function poll() {
  const mj = window.MathJax;
  if (document.readyState === "complete" && mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done("ok"), (e) => done("mathjax failed: " + e));
  } else if (Date.now() - t0 > 15000) {
    done(document.readyState !== "complete" ? "page not complete" : "MathJax never started");
  } else { setTimeout(poll, 50); }
})();
"""


def _public_names() -> dict[str, list[str]]:
    """module -> names of its ``__all__``, for every public module of the package (parsed, not imported)."""
    out = {}
    for path in sorted((ROOT / "grpo_theory").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
        if any(p.startswith("_") for p in parts):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                out[".".join(parts)] = list(ast.literal_eval(node.value))
    return out


@pytest.fixture(scope="module")
def site(strict_site):
    """conftest's strict build (shared with test_docs.py), served on 127.0.0.1."""
    out = strict_site
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", out
    server.shutdown()
    server.server_close()


#: The site's search index, where every page asks for it (mkdocs-material fetches it on each page load and builds
#: the lunr index from it in a web worker).
SEARCH_INDEX = "/search/search_index.json"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """The site's files; while ``search_stub`` is set (``visited``'s page-by-page pass), the search index is served
    as that stand-in, and ``stub_hits`` counts the requests for it.

    The index is one file for the whole site (2.5 MB, the same bytes for every page): parsing it and building its
    lunr index on each of the 50 page loads took half of the browser's CPU time over the pass (89 s against 45 s
    with the stand-in, on a loaded machine), and nothing on a page waits for it. The stand-in (the real index's
    ``config`` with the front page's entries) keeps what each page shows of search: every page still requests it
    from the real index's URL (``visited`` counts the requests; a page asking elsewhere gets a 404, a failed
    request) and the same worker builds it. The real index is loaded, built and searched by
    ``test_search_finds_stationary_policy``."""

    search_stub: bytes | None = None
    stub_hits = 0
    _hits_lock = threading.Lock()                 # the server answers each request in a thread of its own

    def do_GET(self):
        stub = _QuietHandler.search_stub
        if stub is not None and self.path.split("?")[0] == SEARCH_INDEX:
            with _QuietHandler._hits_lock:
                _QuietHandler.stub_hits += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(stub)))
            self.send_header("Cache-Control", "no-store")          # each page asks the server: counted
            self.end_headers()
            self.wfile.write(stub)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def _search_stub(site_dir: Path) -> bytes:
    """The stand-in of the search index: its ``config``, and its entries of the front page only."""
    index = json.loads((site_dir / SEARCH_INDEX.lstrip("/")).read_text(encoding="utf-8"))
    docs = [d for d in index["docs"] if d["location"] == "" or d["location"].startswith("#")]
    assert docs and len(docs) < len(index["docs"]), "the search index has no entry of the front page"
    return json.dumps({"config": index["config"], "docs": docs}).encode()


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not chromium or not driver_bin:
        pytest.skip("Debian's chromium and chromium-driver are not installed "
                    "(apt-get install -y chromium chromium-driver; .ci/run does it)")
    import tempfile

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    from selenium.webdriver.chrome.service import Service

    driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    driver.set_page_load_timeout(60)
    # the viewport a reader's laptop shows (1280 x 800 CSS pixels): the screenshots show the fold
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    driver.get("about:blank")            # what Chromium does at start-up is not the site's doing
    driver.get_log("performance")
    driver.get_log("browser")
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _network_failures(entries) -> list[str]:
    urls, failures = {}, []
    for entry in entries:
        msg = json.loads(entry["message"])["message"]
        params = msg.get("params", {})
        if msg["method"] == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif msg["method"] == "Network.responseReceived" and params["response"]["status"] >= 400:
            failures.append(f"HTTP {params['response']['status']} {params['response']['url']}")
        elif msg["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failures.append(f"{params['errorText']} {urls.get(params['requestId'], '?')}")
    return failures


def _pages(site_dir: Path) -> list[str]:
    pages = sorted(p.relative_to(site_dir).parent.as_posix() for p in site_dir.rglob("index.html")
                   if "assets" not in p.parts)
    return ["" if p == "." else p + "/" for p in pages]


@pytest.fixture(scope="module")
def visited(site, browser):
    """Open every page once; record what each showed. Returns page -> facts."""
    base, site_dir = site
    t_all = time.perf_counter()
    _QuietHandler.search_stub, _QuietHandler.stub_hits = _search_stub(site_dir), 0
    try:
        facts = _visit_every_page(base, site_dir, browser)
        hits = _QuietHandler.stub_hits
    finally:
        _QuietHandler.search_stub = None
    # every page asked for the search index at its one URL (a page asking elsewhere got a 404: a failed request)
    assert hits == len(facts), f"{hits} requests for {SEARCH_INDEX} from {len(facts)} pages"
    print(f"\n{len(facts)} pages opened in {time.perf_counter() - t_all:.1f} s")
    return facts


#: What ``visited`` records of a page beyond its load, its requests and its console, each fact a script body; read in
#: one script (:data:`PAGE_FACTS_JS`), one round trip to the browser instead of one per fact (per page 0.08 s of CPU
#: of Chromium, its driver and this process against 0.03 s, on an API page).
PAGE_FACT_SCRIPTS = {
    "raw_math": RAW_MATH_JS,
    "broken_images": "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)",
    "outputs": "return document.querySelectorAll('.jp-OutputArea-output').length",
    "output_images": "return document.querySelectorAll('.jp-OutputArea-output img').length",
    "ids": "return [...document.querySelectorAll('[id]')].map(e => e.id)",
    "links": "return [...document.querySelectorAll('article a[href]')].map(a => [a.textContent.trim(), a.href])",
    # code blocks wider than their box (a sideways scroll bar at 1280 px): a page's ``pre > code``, a notebook cell's
    # bare ``pre`` (18 of the notebooks' 32 code cells ran past their 570 px box)
    "scrolling_code": "return [...document.querySelectorAll('article pre')]"
                      ".map(p => p.querySelector(':scope > code') || p)"
                      ".filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 40))",
    "code_blocks": "return document.querySelectorAll('article pre').length",
    "height": "return document.documentElement.scrollHeight",
    # anything else that scrolls sideways: tables (Material wraps each in a scrolling box), display formulas,
    # notebook outputs such as DataFrames (14 tables and a formula did at 1280 px)
    "scrolling_other": SCROLLING_JS,
    "tables": "return document.querySelectorAll('article table').length",
}
#: Every fact of :data:`PAGE_FACT_SCRIPTS` in one object, each script run as a function of its own.
PAGE_FACTS_JS = "return {" + ", ".join(f"{name}: (() => {{{body}}})()"
                                       for name, body in PAGE_FACT_SCRIPTS.items()) + "};"


def _visit_every_page(base: str, site_dir: Path, browser) -> dict:
    """Page -> what it showed (``visited``), every page of the site opened in turn."""
    facts = {}
    for page in _pages(site_dir):
        browser.get_log("performance")
        browser.get_log("browser")
        t0 = time.perf_counter()
        browser.get(base + page)
        ready = browser.execute_async_script(WAIT_READY_JS)
        seconds = time.perf_counter() - t0
        facts[page] = dict(
            ready=ready, seconds=seconds,
            network=_network_failures(browser.get_log("performance")),
            console=[e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"],
        )
        shown = browser.execute_script(PAGE_FACTS_JS)
        assert sorted(shown) == sorted(PAGE_FACT_SCRIPTS), f"{page}: facts {sorted(shown)}"
        facts[page].update(shown, ids=set(shown["ids"]))
    return facts


def test_every_page_loads_clean(visited):
    problems = []
    for page, f in visited.items():
        name = page or "index (front page)"
        if f["ready"] != "ok":
            problems.append(f"{name}: {f['ready']}")
        if f["seconds"] > PAGE_BUDGET_S:
            problems.append(f"{name}: took {f['seconds']:.1f} s, over the {PAGE_BUDGET_S:.0f} s budget")
        problems += [f"{name}: failed request: {x}" for x in f["network"]]
        problems += [f"{name}: console error: {x}" for x in f["console"]]
        problems += [f"{name}: image did not load: {x}" for x in f["broken_images"]]
        problems += [f"{name}: raw math: {x}" for x in f["raw_math"]]
    assert not problems, "\n".join(problems)
    assert len(visited) >= 20


def test_no_code_block_scrolls_sideways_at_1280_px(visited):
    """Code blocks wrap (docs/stylesheets/site.css): 116 of 880 scrolled sideways before, and 18 of the
    notebooks' 32 code cells."""
    blocks = sum(f["code_blocks"] for f in visited.values())
    scrolling = [(p, x) for p, f in visited.items() for x in f["scrolling_code"]]
    assert blocks > 100
    assert sum(f["code_blocks"] for p, f in visited.items() if p.startswith("notebooks/")) >= 20
    assert not scrolling, f"{len(scrolling)} of {blocks} code blocks scroll sideways, e.g. {scrolling[:5]}"


def test_no_table_formula_or_output_scrolls_sideways_at_1280_px(visited):
    """Tables fit the text column (docs/stylesheets/site.css; 11 on the Results page, one each on TRL and
    Reliability and a DataFrame in the fourth notebook scrolled before), as do display formulas and
    notebook outputs."""
    tables = sum(f["tables"] for f in visited.values())
    scrolling = [(p, x) for p, f in visited.items() for x in f["scrolling_other"]]
    assert tables > 100
    assert not scrolling, f"{len(scrolling)} elements scroll sideways ({tables} tables in all), e.g. {scrolling[:5]}"


def test_no_api_module_page_is_taller_than_the_limit(visited):
    """Each API module page (the index of names aside) is at most API_PAGE_MAX_PX tall at 1280 x 800: Predict
    a run was 104,859 px, Stationary points 77,899 px and Studies 64,036 px before they were split into
    sections of several pages. tests/test_docs_pages.py bounds the shown text, where no browser runs."""
    heights = {p: f["height"] for p, f in visited.items() if p.startswith("api/") and p != "api/"}
    assert len(heights) >= 25
    assert min(heights.values()) > 800                   # the measurement measures the page, not the window
    too_tall = {p: h for p, h in heights.items() if h > API_PAGE_MAX_PX}
    assert not too_tall, f"API pages over {API_PAGE_MAX_PX:,} px at 1280 px wide: {too_tall}"
    print("\nlongest pages: " + ", ".join(f"{p or 'index'} {f['height']:,} px" for p, f in
                                           sorted(visited.items(), key=lambda x: -x[1]["height"])[:5]))


def test_notebook_pages_show_outputs_and_figures(visited):
    notebooks = [p for p in visited if p.startswith("notebooks/")]
    assert len(notebooks) == len(list((ROOT / "docs" / "notebooks").glob("*.ipynb")))
    problems = [f"{p}: {visited[p]['outputs']} output cells, {visited[p]['output_images']} images"
                for p in notebooks if visited[p]["outputs"] == 0 or visited[p]["output_images"] == 0]
    assert not problems, "\n".join(problems)


def test_api_index_links_every_public_name(site, visited):
    base, _ = site
    links = visited["api/"]["links"]
    problems = []
    for module, names in _public_names().items():
        for name in names:
            hits = [href for text, href in links if text == name]
            if not hits:
                problems.append(f"{module}.{name}: not linked from api/index")
                continue
            url, anchor = urldefrag(hits[0])
            page = urlparse(url).path.lstrip("/")
            if page not in visited or anchor not in visited[page]["ids"]:
                problems.append(f"{module}.{name}: link {hits[0]} points at no anchor")
    assert not problems, "\n".join(problems)
    assert sum(len(v) for v in _public_names().values()) >= 50


def test_search_finds_stationary_policy(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base, _ = site
    browser.get(base)
    box = WebDriverWait(browser, 10).until(ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.click()
    box.send_keys("stationary_policy")
    results = WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item") or None)
    texts = " ".join(r.text for r in results)
    assert "stationary_policy" in texts, texts[:500]
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link")]
    assert any("api/stationary" in h for h in hrefs), hrefs


def test_screenshots(site, browser, tmp_path):
    base, _ = site
    shots = {}
    for name, page in (("front_page", ""), ("notebook_01", "notebooks/01_the_note_in_10_minutes/")):
        browser.get(urljoin(base, page))
        assert browser.execute_async_script(WAIT_READY_JS) == "ok"
        shots[name] = tmp_path / f"{name}.png"
        assert browser.save_screenshot(str(shots[name]))
        assert shots[name].stat().st_size > 10_000
    print("\nscreenshots: " + ", ".join(str(p) for p in shots.values()))
