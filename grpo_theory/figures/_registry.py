"""The list of figure modules, in build order, and their specs."""

from __future__ import annotations

from importlib import import_module

from ._spec import FigureSpec

#: The figure modules, in the order they are built.
FIGURE_MODULES = (
    "pairwise_reverse", "large_group_reverse", "pairwise_direct", "finite_group", "convergence_in_group_size",
    "all_variants", "non_uniqueness", "simplex_paths", "trained_vs_theory",
    "simplex_flows", "proximal_map", "trainer_conventions", "token_vs_sequence", "reward_kl_frontier",
    "training_trajectories", "noisy_verifier", "frameworks_same_beta", "grpo_family",
    # round two (issue 24): the studies the field is missing, each from a committed results table
    "multistable_basins", "kl_estimators", "finite_g_regions", "phase_diagram_k3",
    # issue 26: the SmolLM2 optimiser instability
    "training_instability",
    # issue 23: free generation on SmolLM2 (Figure 25a-d, split by experiment), and TRL's trainer on it run to its cap
    "free_generation", "free_generation_course", "trl_smollm2",
    # issue 46: figures for the headline results
    "seed_validation", "smollm2_new_seed", "family_study", "trl_bias_correction", "certified_search",
    "verl_critical_beta",
    # issue 42: the finite-time, shared-weights predictor over training
    "predict_over_training",
)

def _specs(module: str) -> tuple[FigureSpec, ...]:
    """A module's figures: its ``SPECS`` (the parts of one split figure) or its one ``SPEC``."""
    mod = import_module(f"{__package__}.{module}")
    return tuple(mod.SPECS) if hasattr(mod, "SPECS") else (mod.SPEC,)


FIGURES: tuple[FigureSpec, ...] = tuple(spec for m in FIGURE_MODULES for spec in _specs(m))
