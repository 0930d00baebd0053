"""When the class flow runs into a vertex (stationarity): :func:`may_collapse` and :func:`unbounded_preference`
say whether a scan's ends may hold limit points, :func:`clamp_critical_beta` gives the beta below which a
value-clamped KL lets the worse of two classes collapse. Problems are
:class:`~grpo_theory.solvers.classes.ClassProblem` (see that module's doc for ``g(c)`` and the flow)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._checks import OBJECTIVE, QUESTION, checked
from .. import kl
from ..errors import InvalidInputError
from ..preference import max_abs_advantage
from ..problem import STATIONARY_OBJECTIVE, Objective, Question, as_objective, as_question
from .classes import ClassProblem

__all__ = ["clamp_critical_beta", "may_collapse", "unbounded_preference"]


@checked(q=QUESTION, obj=OBJECTIVE)
def clamp_critical_beta(q: Question, obj: Objective) -> float:
    """The beta below which a clamped KL in the loss lets the worse class of a two-class question collapse.

    A value clamp switches the estimator's gradient off where ``pi(b) < pi_ref(b) e^{e}`` (``e`` the
    lower edge of :func:`grpo_theory.kl.discontinuities`; ``e^{-e} = 13.61`` for verl's k3 clamped at 10).
    The unclamped interior root moves towards that edge as beta falls and reaches it at
    ``beta_c = (P_G(a) - P_G(b)) / (c(a) - c(b))``, everything evaluated at the edge with the
    unclamped coefficient ``c``. Below ``beta_c`` no interior stationary point is left and the flow from
    ``pi_ref`` runs to the vertex; above it the interior point is stable and the edge is a repelling
    jump (a separatrix) in front of the collapsing vertex. ``P_G`` does not depend on beta, so this is exact.

    Parameters
    ----------
    q : Question
        A two-class question (e.g. binary rewards).
    obj : Objective or mapping
        An objective with a value-clamped KL estimator in the loss (``kl_value_clamp`` set); its
        ``beta`` is not used.

    Returns
    -------
    float
        ``beta_c``: below it the worse class collapses to 0 from ``pi_ref``.

    Raises
    ------
    InvalidInputError
        When the KL is not value-clamped in the loss, the question does not have two classes, or
        the clamp has no edge below ``pi_ref``.

    Examples
    --------
    >>> from grpo_theory import Objective, Question, clamp_critical_beta
    >>> verl = Objective(beta=0.001, group_size=5, std_ddof=1, std_eps=1e-6, kl_estimator="k3", kl_log_ratio_clamp=20,
    ...                  kl_value_clamp=10)                 # verl's GRPO recipe, G = 5
    >>> round(clamp_critical_beta(Question([0.5, 0.5], rewards=[1, 0]), verl), 4)
    0.134
    """
    q, obj = as_question(q), as_objective(obj)
    if not obj.placement_variant.in_loss or obj.kl_value_clamp is None:
        raise InvalidInputError(f"clamp_critical_beta needs a value-clamped KL in the loss, got {obj.describe()}")
    cp = ClassProblem(q, obj)
    if cp.n_classes != 2:
        raise InvalidInputError(f"clamp_critical_beta needs a two-class question, got {cp.n_classes} classes")
    edges = [e for e in kl.discontinuities(obj) if e < 0]
    if not edges:
        raise InvalidInputError(f"{obj.describe()} has no clamp edge below pi_ref: nothing to collapse")
    log_b = cp.log_p[1] + max(edges)                       # the worse class at the edge
    log_pi = np.array([math.log(-math.expm1(log_b)), log_b])
    P = cp.class_preference(log_pi)
    unclamped = dataclasses.replace(obj, kl_log_ratio_clamp=None, kl_value_clamp=None)
    c = kl.flow_coefficient(unclamped, log_pi - cp.log_p)     # the coefficient on the unclamped side
    with np.errstate(divide="ignore", invalid="ignore"):   # c(a) = c(b) (k1 in the loss: no restoring force):
        return float(np.float64(P[0] - P[1]) / np.float64(c[0] - c[1]))   # no beta stops it, beta_c = inf


@checked(obj=STATIONARY_OBJECTIVE)
def may_collapse(obj: Objective) -> bool:
    """Whether the flow can run into a vertex, so that the scan's ends may hold limit points: the direct
    penalty where ``|P_G|`` is unbounded, and every estimator or placement other than the note's two
    (a clamp or k1 as a loss leaves a bounded restoring force), and wherever ties are filtered. With ``beta = 0``
    (the entropy bonus alone): where the advantage is unbounded (it outgrows ``c |log pi|``) or ties are filtered
    (near a vertex almost every group ties, and its bonus is dropped).

    Parameters
    ----------
    obj : Objective
        The objective (regularised: else NoStationaryPolicy).
    """
    if obj.beta == 0:
        return obj.filter_ties or not math.isfinite(max_abs_advantage(1.0, obj))
    if obj.filter_ties:
        # a filtered group loses its penalty too, and near a vertex almost every group ties: the restoring
        # force fades with the light mass (at G = inf and std_eps > 0 it stays bounded while the advantage's
        # pull is span/eps; fuzz seeds 1785 and 6219, k3_plus in the loss)
        return True
    if obj.regime_variant.is_reverse:
        return False
    if obj.regime_variant.is_direct:
        return unbounded_preference(obj)
    return True


@checked(obj=OBJECTIVE)
def unbounded_preference(obj: Objective) -> bool:
    """``|P_G|`` unbounded near a vertex (then the direct penalty's flow can run into a vertex, a limit point):
    ``G = inf``, scale normalisation, no epsilon; REINFORCE++ (whitened by the policy's own reward std, at every
    ``G``); whatever else :func:`~grpo_theory.preference.max_abs_advantage` cannot bound.

    Parameters
    ----------
    obj : Objective
        The objective.
    """
    if obj.is_large_group and obj.normalization_variant.scales and obj.std_eps == 0 and obj.variance_eps == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        return not math.isfinite(max_abs_advantage(1.0, obj))
