"""The solvers: stationary policies of GRPO and their stability (the note's stationarity conditions), in one package.

Bottom first: :mod:`.results` (the plain result containers), :mod:`.common` (the problem interface,
root polishing, the stability verdict, dedupe), the two problems :mod:`.classes` (a question pooled
into classes of outputs with the same reward law; :mod:`.collapse` says when its flow runs into a vertex)
and :mod:`.tree` (token level on an answer tree),
the baselines :mod:`.baselines` (RLHF, NLHF), the class solvers
:mod:`.two_class` (exhaustive), :mod:`.two_class_batch` (many two-class problems at once),
:mod:`.multi_class` and :mod:`.multi_class_batch` (many multi-class flows at once), the certified root
isolation :mod:`.certify`,
stability and the flow on all output logits :mod:`.full_space`, and :mod:`.search`, the one
dispatch behind :func:`stationary_policy` and :func:`stationary_points`, with :mod:`.batch` for many
questions at once (:func:`stationary_policies`, :func:`stationary_policy_batch`).
"""

from .baselines import log_pooling, nash_equilibrium, nash_residual, rlhf_optimum
from .batch import stationary_policies, stationary_policy_batch
from .certify import certification_scope, certified_stationary_points
from .classes import Z_CAP, ClassProblem, output_gradient, stationarity_residual
from .collapse import clamp_critical_beta
from .common import dedupe, polish, sinh_grid
from .full_space import full_space_flow, full_space_stability
from .results import RESIDUAL_TOL, STABILITY_TOL, Basin, Method, StationaryPoint, StationaryPointSet, Status
from .search import basins_of, stationary_points, stationary_policy, token_level
from .tree import AnswerTree, TreeProblem, answer_weights, monte_carlo_answer_weights

__all__ = [
    "StationaryPoint", "StationaryPointSet", "Basin", "RESIDUAL_TOL", "STABILITY_TOL", "Z_CAP", "Method", "Status",
    "ClassProblem", "TreeProblem", "AnswerTree", "answer_weights", "monte_carlo_answer_weights",
    "stationary_policy", "stationary_policies", "stationary_policy_batch", "stationary_points",
    "stationarity_residual", "output_gradient",
    "clamp_critical_beta", "basins_of", "log_pooling", "rlhf_optimum", "nash_equilibrium", "nash_residual", "token_level",
    "polish", "dedupe", "sinh_grid",
    "certified_stationary_points", "certification_scope", "full_space_stability", "full_space_flow",
]
