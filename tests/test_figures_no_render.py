"""The figures build renders a figure only when it saves it: with its data and drawing code unchanged and
its images present (the no-force case) the figure is not built at all."""

from __future__ import annotations

import dataclasses

import pytest

from grpo_theory.figures import build
from grpo_theory.figures._registry import FIGURES


@pytest.fixture
def counted_figure_1(monkeypatch):
    spec = next(s for s in FIGURES if s.number == 1)
    calls = []

    def render(tables):
        calls.append(1)
        return spec.render(tables)

    monkeypatch.setattr(build, "FIGURES", [dataclasses.replace(spec, render=render)])
    return spec, calls


def test_an_unchanged_figure_is_not_rendered_and_a_missing_image_is_redrawn(tmp_path, counted_figure_1):
    spec, calls = counted_figure_1
    build.build_figures(tmp_path, only=[1], progress=False)
    assert len(calls) == 1 and (tmp_path / f"{spec.stem}.png").exists()
    written = build.build_figures(tmp_path, only=[1], progress=False)
    assert len(calls) == 1 and written == []                   # nothing to save: not rendered
    (tmp_path / f"{spec.stem}.pdf").unlink()
    build.build_figures(tmp_path, only=[1], progress=False)
    assert len(calls) == 2 and (tmp_path / f"{spec.stem}.pdf").exists()
    build.build_figures(tmp_path, only=[1], progress=False, force=True)
    assert len(calls) == 3
