"""The declared visual language (grpo_theory.plotting.PALETTE, COLORMAPS, LINESTYLES, MARKERS): a figure
module uses no colour, colour map, line style or marker outside it, each colour, line style and marker has one
meaning, every line style and marker a module draws is declared in its LANGUAGE with the table's meaning, beta
has one colour scale for every figure, and
docs/figures.md shows the tables as they are in the code."""

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

from grpo_theory import plotting

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted((ROOT / "grpo_theory" / "figures").glob("*.py"))
#: Every file that draws: the figure modules and plotting's shared helpers (Figures 1-4).
DRAWING = [*MODULES, ROOT / "grpo_theory" / "plotting.py"]

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
        if m.group(2) not in plotting.LINESTYLES and m.group(2) not in plotting.NO_STYLE:
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
    rows = re.findall(r"^\| `(#[0-9a-fA-F]{6})` \| ([^|]+?) \| ([^|]+?) \|$", m.group(1), re.M)
    colours = {name: (hex_.strip().strip("`"), meaning.strip()) for hex_, name, meaning in rows}
    assert colours == {k: (c, mng) for k, (c, mng) in plotting.PALETTE.items()}, \
        "docs/figures.md's palette differs from plotting.PALETTE: regenerate it"
    for table in (plotting.LINESTYLES, plotting.MARKERS):
        for style, (name, meaning) in table.items():
            assert f"| `{style}` | {name} | {meaning} |" in m.group(1), style
    for cmap in plotting.COLORMAPS:
        assert f"`{cmap}`" in m.group(1)


# ---------------------------------------------------------------- line styles and markers: one meaning each

_FMT = re.compile(r"^([osDv^x_.+*<>phd|PX8H])?(--|-\.|-|:)?$")
_LINE_WORDS = {"-", "--", ":", "-.", "solid", "dashed", "dotted", "dashdot"}
_MARKER_NAMES = re.compile(r"mark|style", re.I)
#: matplotlib's marker codes that are strings ("o", "s", "D", ...)
_MARKER_CODES = {m for m in __import__("matplotlib.lines", fromlist=["Line2D"]).Line2D.markers
                 if isinstance(m, str) and m not in ("", " ", "None", "none")}


def _literal(node):
    """A style literal: a string, or a dash tuple such as (0, (1, 3)) written as its repr; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Tuple):
        try:
            v = ast.literal_eval(node)
        except ValueError:
            return None
        if len(v) == 2 and isinstance(v[1], tuple):
            return repr(v)
    return None


def _choices(node) -> list:
    """The literals a node can take: both branches of ``a if c else b``, else the node's own."""
    if isinstance(node, ast.IfExp):
        return _choices(node.body) + _choices(node.orelse)
    v = _literal(node)
    return [] if v is None else [v]


def drawn_styles(source: str) -> tuple[dict[str, int], dict[str, int]]:
    """The line styles and markers a module's source draws, each with a line where it does: keywords
    (``ls``, ``linestyle(s)``, ``marker``, ``fmt``), a format string passed to ``plot``/``semilogx``/...,
    and literals in a figure's own style tables (dicts, lists or tuples of line styles; dicts of markers
    bound to a name containing "mark" or "style")."""
    lines: dict[str, int] = {}
    marks: dict[str, int] = {}

    def fmt(v, n):
        # a format string may carry one colour letter anywhere ("k*", "o--r"); no marker code is a colour letter
        v = re.sub(r"[bgrcmykw]", "", v, count=1) if isinstance(v, str) else v
        m = _FMT.match(v)
        if v and m:
            if m.group(1):
                marks.setdefault(m.group(1), n)
            if m.group(2):
                lines.setdefault(m.group(2), n)

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                for v in _choices(kw.value) if kw.value is not None else []:
                    if kw.arg in ("ls", "linestyle", "linestyles"):
                        lines.setdefault(v, node.lineno)
                    elif kw.arg == "marker":
                        marks.setdefault(v, node.lineno)
                    elif kw.arg == "fmt":
                        fmt(v, node.lineno)
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("plot", "semilogx", "semilogy", "loglog"):
                for a in node.args:
                    for v in _choices(a):
                        fmt(v, node.lineno)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and _MARKER_NAMES.search(node.targets[0].id) and isinstance(node.value, ast.Dict):
            for v in node.value.values:
                first = v.elts[0] if isinstance(v, ast.Tuple) and v.elts else v
                c = _literal(first)
                if c is not None and c in _MARKER_CODES:
                    marks.setdefault(c, v.lineno)
        if isinstance(node, ast.IfExp):                      # ls = "--" if rlhf else "-"
            for c in _choices(node):
                if c in _LINE_WORDS or c.startswith("(0, ("):
                    lines.setdefault(c, node.lineno)
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
            for v in node.values if isinstance(node, ast.Dict) else node.elts:
                for c in _choices(v):
                    if c in _LINE_WORDS or c.startswith("(0, ("):
                        lines.setdefault(c, v.lineno)
    for d in (lines, marks):
        for none in plotting.NO_STYLE:
            d.pop(none, None)
    return lines, marks


def declared_language(source: str) -> dict[str, tuple[str, ...]]:
    """A module's ``LANGUAGE`` (style or marker -> meaning, or a tuple of meanings), read from its source."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LANGUAGE" for t in node.targets):
            lang = ast.literal_eval(node.value)
            return {k: (v,) if isinstance(v, str) else tuple(v) for k, v in lang.items()}
    return {}


def language_problems(name: str, source: str) -> tuple[list[str], set[tuple[str, str, str]]]:
    """What is wrong with a module's line styles and markers: styles drawn but not declared, declared but
    not drawn; and the (module, style, meaning) uses that differ from the tables (a style outside them, or
    another meaning than theirs)."""
    lines, marks = drawn_styles(source)
    lang = declared_language(source)
    bad = [f"{name}: draws {s!r} (line {n}) but LANGUAGE does not declare it" for s, n in {**lines, **marks}.items()
           if s not in lang]
    bad += [f"{name}: LANGUAGE declares {s!r}, which it does not draw" for s in lang if s not in {**lines, **marks}]
    table = {**{k: v[0] for k, v in plotting.LINESTYLES.items()}, **{k: v[0] for k, v in plotting.MARKERS.items()}}
    differs = {(name, s, m) for s, ms in lang.items() for m in ms if table.get(s) != m}
    return bad, differs


@pytest.mark.parametrize("path", DRAWING, ids=lambda p: p.stem)
def test_every_line_style_and_marker_is_declared_with_the_tables_meaning(path):
    bad, differs = language_problems(path.stem, path.read_text())
    assert not bad, bad
    assert not differs, f"{path.name}: a style or marker with another meaning than plotting's table: {sorted(differs)}"


def test_each_line_style_and_marker_has_one_meaning_in_the_table():
    for table in (plotting.LINESTYLES, plotting.MARKERS):
        # one meaning per style (a dict key); one style per meaning too, except the legend keys (^, P)
        names = [name for name, _ in table.values() if name != "key"]
        assert len(set(names)) == len(names) and all(m.strip() for _, m in table.values())
    # no second meanings: per style, the meanings drawn are the table's
    by_style: dict[str, set[str]] = {}
    for p in DRAWING:
        for s, ms in declared_language(p.read_text()).items():
            by_style.setdefault(s, set()).update(ms)
    table = {**plotting.LINESTYLES, **plotting.MARKERS}
    for s, meanings in by_style.items():
        extra = meanings - {table[s][0]} if s in table else meanings
        assert not extra, (s, extra)


def test_the_style_scan_catches_what_it_should():
    """The scan on a made-up module: it finds each way a style or marker is written, the declaration check
    catches an undeclared one and one declared but not drawn, and another meaning is reported."""
    src = (
        'MARKS = {"a": ("s", 3), "b": "^"}\nSTYLES = {"G=2": "-", "G=8": (0, (4, 1.5))}\n'
        'ax.plot(x, y, "o--")\nax.plot(x, y, "k*")\nax.semilogx(x, y, ":", color="0.5")\nax.errorbar(x, y, fmt="D")\n'
        'ax.axhline(0, ls="-." if flag else "-")\nax.scatter(x, y, marker="v")\nax.plot(x, y, ls="", marker="_")\n'
        'LANGUAGE = {"s": "key", "^": "key", "-": "data", "(0, (4, 1.5))": "key", "o": "point", "--": "comparison", '
        '":": "reference", "D": "trained", "-.": "marked value", "v": "below the axis", "x": "second theory"}\n')
    lines, marks = drawn_styles(src)
    assert set(lines) == {"-", "(0, (4, 1.5))", "--", ":", "-."}
    assert set(marks) == {"s", "^", "o", "D", "v", "_", "*"}        # "k*": a colour letter, then the marker
    bad, differs = language_problems("m", src)
    assert len(bad) == 3 and "'*'" in bad[0] and "'_'" in bad[1] and "'x'" in bad[2], bad
    assert differs == {("m", "s", "key"), ("m", "(0, (4, 1.5))", "key")}


def test_side_by_side_separates_only_coinciding_points():
    """Points sharing one x are spread symmetrically about it, in order; a lone x stays; on a log axis the
    offset is a factor. The expected positions are written out by hand."""
    from grpo_theory.errors import InvalidInputError

    x = [1.0, 2.0, 1.0, 3.0, 1.0]
    assert np.allclose(plotting.side_by_side(x, width=0.1), [0.9, 2.0, 1.0, 3.0, 1.1])
    assert np.allclose(plotting.side_by_side([2.0, 2.0], width=0.2, log=True), [2 * np.exp(-0.1), 2 * np.exp(0.1)])
    assert np.allclose(plotting.side_by_side([0.5, 0.7], width=0.3), [0.5, 0.7])
    with pytest.raises(InvalidInputError, match="-1"):
        plotting.side_by_side(x, width=-1)


def test_apart_spreads_only_near_values():
    """Values closer than the gap are redrawn gap apart about their mean; far ones and repeats keep theirs.
    The expected positions are written out by hand."""
    from grpo_theory.errors import InvalidInputError

    x = [0.906, 0.5, 0.909, 0.906, 0.7]
    assert np.allclose(plotting.apart(x, gap=0.015), [0.9000, 0.5, 0.9150, 0.9000, 0.7])
    # a chain: 0.10, 0.11, 0.12 is one run of three, centred on 0.11
    assert np.allclose(plotting.apart([0.12, 0.10, 0.11], gap=0.015), [0.125, 0.095, 0.11])
    assert np.allclose(plotting.apart([0.1, 0.2], gap=0.05), [0.1, 0.2])
    with pytest.raises(InvalidInputError, match="0"):
        plotting.apart(x, gap=0)


def test_at_most_rounds_up_at_the_printed_precision():
    """A caption's bound: plotting.at_most against Decimal's ROUND_CEILING (tests/_independent.bound_up), on the
    values the review found rounded down, and on values the format prints exactly."""
    from _independent import bound_up

    cases = [(0.01932, ".2g"), (1.361e-07, ".1e"), (0.00224, ".4f"), (0.001628, ".1e"), (0.015106, ".3f"),
             (0.010449, ".4f"), (0.005434, ".2g"), (0.005941, ".1e"), (0.02509, ".3f"), (0.0999, ".2g"),
             (0.0015, ".4f"), (0.25, ".2f"), (6.756e-05, ".1e")]
    for v, spec in cases:
        text = plotting.at_most(v, spec)
        assert text == bound_up(v, spec), (v, spec, text)
        assert float(text) >= v
    assert plotting.at_most(0.01932, ".2g") == "0.02" and plotting.at_most(0.0015, ".4f") == "0.0015"


def unstyled_spans(source: str) -> list[int]:
    """Lines where ``axhline``/``axvline`` is called without ``ls``/``linestyle``: matplotlib then draws it
    solid, the style of data, whatever the line means (a zero line, a predicted level); the scan of style
    literals above cannot see a style that is not written."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("axhline", "axvline")
            and not {k.arg for k in node.keywords} & {"ls", "linestyle"}]


@pytest.mark.parametrize("path", DRAWING, ids=lambda p: p.stem)
def test_every_horizontal_and_vertical_line_names_its_style(path):
    assert unstyled_spans(path.read_text()) == [], f"{path.name}: axhline/axvline without ls= on these lines"


def test_the_unstyled_line_scan_can_fail():
    src = 'ax.axhline(0, color="0.5")\nax.axvline(1, color="0.5", ls=":")\nax.axhline(0, linestyle="-.")\n'
    assert unstyled_spans(src) == [1]
