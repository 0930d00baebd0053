"""The notebooks (docs/notebooks): stored run, clean and from the current code, and their outputs fresh
(docs/run_notebooks.py reruns each in a fresh kernel). Split from tests/test_docs.py so that under
`-n 2 --dist loadfile` one worker runs the notebooks while the other builds the site."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _run_notebooks():
    spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "docs" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shown(cell) -> list[tuple[str, str]]:
    """What a reader sees of a code cell's outputs: printed text, result text, and which kinds of image."""
    out = []
    for o in _run_notebooks().coalesce_streams([dict(o) for o in cell.get("outputs", [])]):
        if o["output_type"] == "stream":
            out.append((o["name"], o["text"]))
        elif o["output_type"] in ("execute_result", "display_data"):
            data = o["data"]
            text = "" if "image/png" in data else data.get("text/plain", "")   # a figure's repr is not content
            out.append(("data:" + ",".join(sorted(k for k in data if k.startswith("image/"))), text))
        else:
            out.append((o["output_type"], o.get("ename", "")))
    return out


def _same_text(stored: str, fresh: str, rtol: float, atol: float) -> bool:
    """Equal text, with each number equal to within rtol/atol (exact when both are 0)."""
    if NUMBER.sub("#", stored) != NUMBER.sub("#", fresh):
        return False
    a, b = NUMBER.findall(stored), NUMBER.findall(fresh)
    return all(abs(float(x) - float(y)) <= atol + rtol * abs(float(x)) for x, y in zip(a, b))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_run_and_clean(path):
    """The site shows the stored outputs: every code cell ran, in order, from the current code; no stderr, no error."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    stored = nb.metadata.get("grpo_theory", {}).get("code_sha256")
    assert stored == _run_notebooks().code_sha256(nb), (
        f"{path.name}: code changed since its outputs were stored; run python docs/run_notebooks.py {path.stem}")
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), f"{path.name}: not run top to bottom"
    for i, c in enumerate(code):
        for kind, text in _shown(c):
            assert kind not in ("stderr", "error"), f"{path.name}, code cell {i + 1}: stored {kind}: {text[:300]}"
    assert any(kind.startswith("data:image/") for c in code for kind, _ in _shown(c)), f"{path.name}: no figure"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_outputs_are_fresh(path):
    """Each notebook reruns in a fresh kernel within its budget and prints what is stored (cells tagged
    ``approximate``, a short real training run, to 5%/0.02; the others to 1e-9 relative)."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    if path.stem.startswith("02"):
        pytest.importorskip("trl")
    stored = nbformat.read(path, as_version=4)
    fresh = nbformat.read(path, as_version=4)
    _run_notebooks().execute(fresh, path.stem)
    pairs = [(a, b) for a, b in zip(stored.cells, fresh.cells) if a.cell_type == "code"]
    for i, (a, b) in enumerate(pairs):
        rtol, atol = (0.05, 0.02) if "approximate" in a.metadata.get("tags", []) else (1e-9, 1e-12)
        sa, sb = _shown(a), _shown(b)
        assert [k for k, _ in sa] == [k for k, _ in sb], f"{path.name}, code cell {i + 1}: outputs {sa} != {sb}"
        for (_, ta), (_, tb) in zip(sa, sb):
            assert _same_text(ta, tb, rtol, atol), (
                f"{path.name}, code cell {i + 1} is stale; stored:\n{ta}\nnow:\n{tb}\n"
                f"run python docs/run_notebooks.py {path.stem}")


def test_notebook_runner_names_the_notebook_and_cell_that_raises():
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("raise ValueError('bad cell')")])
    with pytest.raises(RuntimeError, match=r"broken_nb: a cell raised(.|\n)*bad cell"):
        _run_notebooks().execute(nb, "broken_nb")
