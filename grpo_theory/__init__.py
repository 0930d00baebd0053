"""grpo_theory: the policies GRPO converges to, exactly, and checked against training.

Implements "What is the Alignment Objective of GRPO?" (Vojnovic & Yun,
arXiv 2502.18548) and goes beyond it; see ``docs/`` (Conventions, Derivations)
for the mathematics. Importing this package never imports torch.
"""

from . import closed_form, dynamics, kl, solvers, variants
from .errors import ExactEvaluationTooLarge, InvalidInputError, NoStationaryPolicy, TheoryWarning
from .preference import monte_carlo_preference, reward_preference
from .problem import Objective, Question
from .solvers import (
    StationaryPoint,
    StationaryPointSet,
    clamp_critical_beta,
    log_pooling,
    nash_equilibrium,
    rlhf_optimum,
    stationarity_residual,
    stationary_points,
    stationary_policy,
)

__version__ = "0.1.0"

__all__ = [
    "Question",
    "Objective",
    "InvalidInputError",
    "ExactEvaluationTooLarge",
    "NoStationaryPolicy",
    "TheoryWarning",
    "reward_preference",
    "monte_carlo_preference",
    "stationary_policy",
    "stationary_points",
    "stationarity_residual",
    "StationaryPoint",
    "StationaryPointSet",
    "log_pooling",
    "rlhf_optimum",
    "nash_equilibrium",
    "clamp_critical_beta",
    "closed_form",
    "dynamics",
    "kl",
    "solvers",
    "variants",
]
