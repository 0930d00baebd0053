"""Every figure, one module each (its data, its drawing, its caption), and the build driver.

A figure module defines ``data(...)`` (pure computation), ``draw(...)`` (matplotlib, in the shared
style of :mod:`grpo_theory.plotting`), ``build(inputs)`` and ``SPEC`` (:class:`FigureSpec`). Adding
a figure is adding one module and its name to :data:`FIGURE_MODULES`.
"""

from __future__ import annotations

from importlib import import_module

from ._spec import FigureInputs, FigureSkipped, FigureSpec
from .build import (
                    CSV_ATOL,
                    CSV_RTOL,
                    FINGERPRINT,
                    build_figures,
                    code_fingerprint,
                    default_results_dir,
                    read_tables,
                    same_table,
)

#: The figure modules, in the order they are built.
FIGURE_MODULES = (
    "pairwise_reverse", "large_group_reverse", "pairwise_direct", "finite_group", "convergence_in_group_size",
    "all_variants", "non_uniqueness", "simplex_paths", "trained_vs_theory", "phase_portraits",
    "simplex_flows", "proximal_map", "trainer_conventions", "token_vs_sequence", "reward_kl_frontier",
    "training_trajectories", "noisy_verifier", "frameworks_same_beta",
)

FIGURES: tuple[FigureSpec, ...] = tuple(import_module(f"{__name__}.{m}").SPEC for m in FIGURE_MODULES)

__all__ = ["CSV_ATOL", "CSV_RTOL", "FIGURES", "FIGURE_MODULES", "FINGERPRINT", "FigureInputs", "FigureSkipped",
           "FigureSpec", "build_figures", "code_fingerprint", "default_results_dir", "read_tables",
           "same_table"]
