"""The files that are shipped (paper_figures/*.png, *.pdf, as the build wrote them), checked as files:
the declared width, nothing cut at the canvas edge. A re-render cannot stand in for them: the build once
saved Figures 1, 2 and 4 on constrained layout's first pass and cut their titles by 7-8 px, while a
second draw (what a re-render measured) showed them whole."""

import re
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from grpo_theory import plotting

FIGS = Path(__file__).resolve().parents[1] / "paper_figures"
PNGS = sorted(FIGS.glob("fig*.png"))
#: the build's resolution (plotting.STYLE's savefig.dpi)
DPI = plotting.STYLE["savefig.dpi"]


def test_every_figure_is_shipped_as_png_and_pdf():
    assert len(PNGS) >= 25
    for png in PNGS:
        assert png.with_suffix(".pdf").is_file(), png.name


def _ink(strip: np.ndarray) -> int:
    """Pixels darker than near-white in a strip of an RGB(A) image (values 0-1)."""
    return int((strip[..., :3] < 0.9).any(axis=-1).sum())


@pytest.mark.parametrize("png", PNGS, ids=lambda p: p.stem)
def test_png_has_a_declared_width_and_nothing_cut_at_its_edge(png):
    im = mpimg.imread(png)
    h, w = im.shape[:2]
    assert min(abs(w - x * DPI) for x in plotting.WIDTHS) <= 1, f"{png.name} is {w} px wide"
    # constrained layout keeps a margin: ink in the outermost 2 px is an artist cut by the canvas
    edges = dict(top=im[:2], bottom=im[-2:], left=im[:, :2], right=im[:, -2:])
    cut = {k: _ink(v) for k, v in edges.items() if _ink(v)}
    assert not cut, f"{png.name}: ink at the edge (pixels per side): {cut}"


def test_the_edge_check_catches_a_cut_title(tmp_path):
    """The check above can fail: a title pushed past the top of the canvas leaves ink in the top rows."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(plotting.COLUMN, 2.0))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    fig.text(0.5, 1.0, "a title set too high", ha="center", va="center", fontsize=9)   # half above the canvas
    fig.savefig(tmp_path / "cut.png", dpi=DPI)
    im = mpimg.imread(tmp_path / "cut.png")
    assert _ink(im[:2]) > 0


@pytest.mark.parametrize("png", PNGS, ids=lambda p: p.stem)
def test_pdf_page_has_the_pngs_size(png):
    raw = png.with_suffix(".pdf").read_bytes()
    m = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([0-9.]+)\s+([0-9.]+)\s*\]", raw)
    assert m, f"{png.name}: no MediaBox"
    w_in, h_in = float(m.group(1)) / 72, float(m.group(2)) / 72
    assert min(abs(w_in - x) for x in plotting.WIDTHS) < 0.01, f"{png.name}: the PDF is {w_in:.2f} in wide"
    h, w = mpimg.imread(png).shape[:2]
    assert abs(w_in * DPI - w) <= 1 and abs(h_in * DPI - h) <= 1


PDFS = sorted(FIGS.glob("fig*.pdf"))
#: mathtext draws sub- and superscripts at this fraction of their text's size (matplotlib's SHRINK_FACTOR)
SCRIPT = 0.7


def pdf_font_sizes(pdf: Path) -> set[float]:
    """The sizes (pt) of every text run in a shipped PDF: the ``/F<n> <size> Tf`` operators of its
    (Flate-compressed) content streams."""
    import zlib

    data, sizes = pdf.read_bytes(), set()
    for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        try:
            body = zlib.decompress(m.group(1))
        except zlib.error:
            continue
        sizes |= {float(s) for s in re.findall(rb"/F\d+ ([\d.]+) Tf", body)}
    return sizes


def too_small(sizes: set[float]) -> list[float]:
    """The sizes under MIN_FONT_PT that are not a script (0.7 x) of a size >= MIN_FONT_PT among ``sizes``."""
    base = {s for s in sizes if s >= plotting.MIN_FONT_PT}
    return sorted(s for s in sizes - base if not any(abs(s - SCRIPT * b) < 0.011 for b in base))


@pytest.mark.parametrize("pdf", PDFS, ids=lambda p: p.stem)
def test_shipped_pdf_text_is_at_least_seven_points(pdf):
    """Every text run in the shipped PDF is >= MIN_FONT_PT, except a mathtext script (a subscript such as
    pi_ref's 'ref'), which is 0.7 x the size of a text run >= MIN_FONT_PT in the same file. A 6 pt label
    fails (6 / 0.7 = 8.6 pt is no size these figures use)."""
    sizes = pdf_font_sizes(pdf)
    assert sizes, f"{pdf.name}: no text found"
    small = too_small(sizes)
    assert not small, f"{pdf.name}: text under {plotting.MIN_FONT_PT} pt that is no script: {small}"


def test_the_pdf_size_check_finds_a_small_label(tmp_path):
    """The check above on a figure with a 6 pt label: it finds it."""
    import matplotlib

    from matplotlib.figure import Figure

    with matplotlib.rc_context({**plotting.STYLE, "pdf.compression": 6}):
        fig = Figure(figsize=(plotting.COLUMN, 2))
        ax = fig.subplots()
        ax.set_xlabel("seven", fontsize=7)
        ax.set_ylabel("six", fontsize=6)
        fig.savefig(tmp_path / "f.pdf")
    sizes = pdf_font_sizes(tmp_path / "f.pdf")
    assert 6.0 in sizes and 7.0 in sizes and too_small(sizes) == [6.0]


#: Captions at most this many words; longer detail belongs in docs/figures.md ("Beyond the caption").
CAPTION_WORDS = 200


@pytest.mark.parametrize("cap", sorted(FIGS.glob("fig*_caption.txt")), ids=lambda p: p.stem)
def test_caption_word_count(cap):
    stem = cap.name[: -len("_caption.txt")]
    words = len(cap.read_text().split())
    assert words <= CAPTION_WORDS, f"{cap.name}: {words} words"
