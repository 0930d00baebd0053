"""grpo_theory: the policies GRPO converges to, exactly, and checked against training.

Implements "What is the Alignment Objective of GRPO?" (Vojnovic & Yun,
arXiv 2502.18548) and goes beyond it; see ``docs/`` and the SPEC for the
mathematics. Importing this package never imports torch.
"""

from . import closed_form, dynamics, kl
from .baselines import log_pooling, nash_equilibrium
from .preference import (
    ExactEvaluationTooLarge,
    monte_carlo_preference,
    reward_preference,
)
from .problem import InvalidInputError, Objective, Question
from .stationary import (
    StationaryPoint,
    StationaryPointSet,
    clamp_critical_beta,
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
    "reward_preference",
    "monte_carlo_preference",
    "stationary_policy",
    "stationary_points",
    "stationarity_residual",
    "StationaryPoint",
    "StationaryPointSet",
    "log_pooling",
    "nash_equilibrium",
    "clamp_critical_beta",
    "closed_form",
    "dynamics",
    "kl",
]
