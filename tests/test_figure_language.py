"""The declared visual language (grpo_theory.plotting.PALETTE, COLORMAPS, LINESTYLES, MARKERS): a figure
module uses no colour, colour map or line style outside it, each palette colour has one meaning, beta has
one colour scale for every figure, and docs/figures.md shows the table as it is in the code."""

import math
import re
from pathlib import Path

import pytest

from grpo_theory import plotting

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted((ROOT / "grpo_theory" / "figures").glob("*.py"))

_COLOR_KW = (r"(?:color|colors|c|mec|mfc|markeredgecolor|markerfacecolor|facecolor|facecolors|edgecolor|"
             r"edgecolors|ecolor)")
_GREY = re.compile(r"^(?:0(?:\.\d+)?|1(?:\.0+)?)$")
NEUTRAL_NAMES = {"black", "white", "none"}


def violations(source: str) -> list[str]:
    """Colours, colour maps and line styles in a module's source that the visual language does not declare."""
    bad = []
    for m in re.finditer(r"#[0-9a-fA-F]{6}\b", source):
        bad.append(f"hex colour {m.group(0)} (name it from plotting.COLORS)")
    for m in re.finditer(rf"\b{_COLOR_KW}\s*=\s*([\"'])([^\"']*)\1", source):
        value = m.group(2)
        if value not in NEUTRAL_NAMES and not _GREY.match(value) and not value.startswith("#"):
            bad.append(f"colour {value!r} (not a neutral; name it from plotting.COLORS)")
    for m in re.finditer(r"\bcmap\s*=\s*([\"'])([^\"']*)\1|colormaps\[\s*([\"'])([^\"']*)\3\s*\]", source):
        bad.append(f"colour map {m.group(2) or m.group(4)!r} (use plotting's declared maps)")
    for m in re.finditer(r"\bcm\.(\w+)", source):
        bad.append(f"colour map cm.{m.group(1)} (use plotting's declared maps)")
    for m in re.finditer(r"\b(?:ls|linestyle|linestyles)\s*=\s*([\"'])([^\"']*)\1", source):
        if m.group(2) not in plotting.LINESTYLES and m.group(2) not in ("", "none", "None"):
            bad.append(f"line style {m.group(2)!r} (not in plotting.LINESTYLES)")
    return bad


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_figure_module_uses_only_the_declared_language(path):
    bad = violations(path.read_text())
    assert not bad, f"{path.name}: {bad}"


def test_the_scan_catches_what_it_should():
    src = ('ax.plot(x, y, color="#b2182b")\nax.plot(x, y, mec="red")\nax.contourf(z, cmap="viridis")\n'
           'c = cm.viridis(0.3)\nax.plot(x, y, ls="-.-")\nax.plot(x, y, color="0.45", mfc="white", ls=":")\n')
    bad = violations(src)
    assert len(bad) == 5, bad
    assert violations('ax.plot(x, y, color=plotting.COLORS["trained"], ls="--")') == []


def test_each_palette_colour_has_one_meaning():
    hexes = [c.lower() for c, _ in plotting.PALETTE.values()]
    dup = sorted({h for h in hexes if hexes.count(h) > 1})
    assert not dup, f"colours with two meanings: {dup}"
    assert all(meaning.strip() for _, meaning in plotting.PALETTE.values())
    # the method table is the palette's: TRL 1.9's default objective is reverse/scale, so it shares that colour
    for name, colour in plotting.METHOD_COLORS.items():
        key = "GRPO reverse/scale" if name == "TRL 1.9" else name
        assert colour == plotting.COLORS[key]


def test_beta_has_one_colour_in_every_figure():
    """beta = 0.5 is drawn in one colour whatever other betas a figure shows (it was teal in Figures 1-3
    and dark purple in 9 and 25 when each figure normalised its own betas)."""
    import matplotlib
    from matplotlib import colors

    sets = [[0.04, 0.1, 0.2, 0.5, 1, 2, 5], [0.5, 1.0], [0.5, 4.0], [0.5]]
    seen = {tuple(plotting.beta_colors(s)[s.index(0.5)]) for s in sets}
    assert len(seen) == 1
    # and it is the map's colour at 0.5's place on the declared log scale, computed here by hand
    lo, hi = plotting.BETA_RANGE
    frac = (math.log10(0.5) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    want = matplotlib.colormaps[plotting.BETA_CMAP](0.85 * frac)
    assert colors.to_hex(seen.pop()) == colors.to_hex(want)


def test_docs_show_the_table_as_the_code_declares_it():
    doc = (ROOT / "docs" / "figures.md").read_text()
    m = re.search(r"<!-- palette -->(.*?)<!-- /palette -->", doc, re.S)
    assert m, "docs/figures.md has no palette table"
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+?) \| ([^|]+?) \|$", m.group(1), re.M)
    colours = {name: (hex_.strip().strip("`"), meaning.strip()) for hex_, name, meaning in rows}
    assert colours == {k: (c, mng) for k, (c, mng) in plotting.PALETTE.items()}, \
        "docs/figures.md's palette differs from plotting.PALETTE: regenerate it"
    for style in plotting.LINESTYLES:
        assert f"| `{style}` |" in m.group(1)
    for cmap in plotting.COLORMAPS:
        assert f"`{cmap}`" in m.group(1)
