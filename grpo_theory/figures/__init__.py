"""Every figure, one module each (its data, its drawing, its caption), and the build driver.

A figure module defines ``data(...)`` (pure computation), ``draw(...)`` (matplotlib, in the shared
style of :mod:`grpo_theory.plotting`), ``build(inputs)`` and ``SPEC`` (:class:`FigureSpec`). Adding
a figure is adding one module and its name to :data:`FIGURE_MODULES`.
"""

from __future__ import annotations

from ._registry import FIGURE_MODULES, FIGURES
from ._spec import FigureInputs, FigureSkipped, FigureSpec
from .build import (
                    CSV_ATOL,
                    CSV_RTOL,
                    FINGERPRINT,
                    build_figures,
                    code_fingerprint,
                    read_tables,
                    same_table,
)

__all__ = ["CSV_ATOL", "CSV_RTOL", "FIGURES", "FIGURE_MODULES", "FINGERPRINT", "FigureInputs", "FigureSkipped",
           "FigureSpec", "build_figures", "code_fingerprint", "read_tables",
           "same_table"]
