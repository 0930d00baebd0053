"""grpo_theory: the policies GRPO converges to, exactly, and checked against training.

Implements "What is the Alignment Objective of GRPO?" (Vojnovic & Yun,
arXiv 2502.18548) and goes beyond it; see ``docs/`` (Conventions, Derivations)
for the mathematics. Importing this package never imports torch.

``import grpo_theory`` loads the question, the objective and ``P_G`` (:mod:`grpo_theory.problem`,
:mod:`grpo_theory.preference`); the solvers (:func:`stationary_policy` and the rest), :mod:`grpo_theory.closed_form`
and :mod:`grpo_theory.dynamics` are loaded on first use of any of their names (``grpo_theory.stationary_policy``,
``from grpo_theory import stationary_points``): the same objects, with the import's cost paid once, when needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import kl, variants
from .errors import ExactEvaluationTooLarge, InvalidInputError, NoStationaryPolicy, TheoryWarning
from .preference import monte_carlo_preference, reward_preference
from .problem import Objective, Question

if TYPE_CHECKING:       # loaded on first use (__getattr__ below); named here for type checkers and the API pages
    from . import closed_form, dynamics, solvers
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

#: The names loaded on first use: a submodule (``None``), or the submodule whose attribute of that name it is.
_LAZY = {
    "closed_form": None, "dynamics": None, "solvers": None,
    **{name: "solvers" for name in ("StationaryPoint", "StationaryPointSet", "clamp_critical_beta", "log_pooling",
                                     "nash_equilibrium", "rlhf_optimum", "stationarity_residual", "stationary_points",
                                     "stationary_policy")},
}


def __getattr__(name: str):
    """Load a name of :data:`_LAZY` on first use and keep it (later look-ups do not come here)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = _LAZY[name]
    value = importlib.import_module(f".{home or name}", __name__)
    if home is not None:
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
