"""A redraw of unchanged tables and drawing code gives the same bytes: the build draws a figure from its tables
as written (the CSVs, 12 digits), not from the tables in memory, whose last digits move from one solver version,
thread count or machine to the next while the CSV is kept (equal within CSV_RTOL). Figure 8's PNG changed by 11
pixels and Figure 15's PDF at every full rebuild that way."""

import dataclasses

from grpo_theory.figures import build
from grpo_theory.figures._registry import FIGURES

FIG8 = next(s for s in FIGURES if s.number == 8)


def _perturbed(spec, rel):
    """``spec`` whose tables have every float multiplied by ``1 + rel`` (another solver's last digits)."""
    def tables(inputs):
        out = {}
        for name, t in spec.tables(inputs).items():
            t = t.copy()
            for c in t.columns:
                if t[c].dtype.kind == "f":
                    t[c] = t[c] * (1.0 + rel)
            out[name] = t
        return out
    return dataclasses.replace(spec, tables=tables)


def _build(monkeypatch, spec, out):
    monkeypatch.setattr(build, "FIGURES", (spec,))
    build.build_figures(out, only=[spec.number], progress=False, force=True)
    return {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".png", ".pdf")}


def test_force_redraw_twice_is_byte_identical(tmp_path, monkeypatch):
    first = _build(monkeypatch, FIG8, tmp_path)
    again = _build(monkeypatch, FIG8, tmp_path)
    assert set(first) == {"fig8_simplex_paths.png", "fig8_simplex_paths.pdf"}
    assert first == again


def test_last_digit_changes_in_memory_leave_the_images_alone(tmp_path, monkeypatch):
    """Tables that differ by 5e-7 relative (inside CSV_RTOL, so the CSV is kept) draw the same bytes: the images
    follow the shipped CSV. Drawn from memory, the PDF's coordinates (10 decimals) changed."""
    assert 5e-7 < build.CSV_RTOL
    first = _build(monkeypatch, FIG8, tmp_path)
    csv = (tmp_path / "fig8_simplex_paths.csv").read_bytes()
    moved = _build(monkeypatch, _perturbed(FIG8, 5e-7), tmp_path)
    assert (tmp_path / "fig8_simplex_paths.csv").read_bytes() == csv          # the table was kept
    assert moved == first


def test_a_real_change_is_still_drawn(tmp_path, monkeypatch):
    """The converse: a change beyond CSV_RTOL (1e-3) rewrites the table and the images with it."""
    first = _build(monkeypatch, FIG8, tmp_path)
    moved = _build(monkeypatch, _perturbed(FIG8, 1e-3), tmp_path)
    assert moved["fig8_simplex_paths.pdf"] != first["fig8_simplex_paths.pdf"]
