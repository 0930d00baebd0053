r"""The GRPO family: advantage estimators, tie filtering, entropy bonus, importance level.

Each variant is a per-answer expected advantage ``P(o | pi) = E[A_1 | o_1 = o]`` plus a change to the
regulariser; the solvers, stability and dynamics only see :func:`level_expectations` (through
:func:`grpo_theory.preference.level_expectations`) and :func:`regularised_gradient`. The exact enumeration
over a group's count vectors that the estimators share is :mod:`grpo_theory.advantage_enumeration`.
Notation: reward levels ``v_1 < ... < v_L``, ``w`` the law of the reward of one draw from ``pi``,
``mu = E_pi r``, ``sigma^2 = Var_pi r`` (noise included), ``n`` the counts of the other ``G - 1`` rewards.

Advantage estimators (``Objective.advantage``)
----------------------------------------------
``"group"``
    Eq. 2 with ``normalization`` (the existing engine; Dr. GRPO is ``normalization="shift"``,
    2-GRPO is ``G = 2``).
``"rloo"``
    ``A_i = r_i - mean_{j != i} r_j = G/(G-1) (r_i - mean r)`` (verl ``rloo``, OpenRLHF ``rloo``, TRL's
    RLOO trainer without advantage whitening). Hence ``P(o) = E[r|o] - mu`` exactly at every ``G``
    (incl. inf): ``G/(G-1)`` times the shift-only preference, so RLOO at ``beta`` has the stationary
    points of ``normalization="shift"`` at ``beta (G-1)/G``.
``"reinforce_pp"``
    ``r_i - mean r`` whitened over a large batch of groups of this question (verl
    ``reinforce_plus_plus_baseline``, OpenRLHF ``reinforce_baseline``). In a large batch the batch mean
    of ``r_i - mean r`` is 0 and its batch std is ``s = sqrt((G-1)/G) sigma`` (a constant of the batch,
    not differentiated), so ``P(o) = sqrt((G-1)/G) (E[r|o] - mu)/sigma``; ``G = inf`` is the group
    advantage's limit. (Real batches mix questions: then ``s`` is the batch's pooled std, a scalar the
    per-question theory takes as this question's own.)
``"pass_at_k"``
    The analytic pass@k advantage (arXiv 2508.10751, Eqs. 14-15) for two reward levels (the top one
    passes): with ``N_neg`` failures in the group, ``R = 1 - C(N_neg, k)/C(G, k)``,
    ``s = sqrt(R (1 - R))``, ``A_pass = (1 - R)/s`` and
    ``A_fail = (1 - R - C(N_neg - 1, k - 1)/C(G - 1, k - 1))/s`` (0 where ``s = 0``); ``k = 1`` is the
    group advantage with ddof 0. ``G = inf``: with ``f = w_fail``, ``R = 1 - f^k``,
    ``A_pass = f^k/s`` and ``A_fail = -(1 - f) f^(k-1)/s``.

Tie filtering (``filter_ties``)
-------------------------------
A tied group has ``A = 0`` for every member, so filtering does not change ``P``; it removes the
group's penalty (and entropy) terms. At ``pi_old = pi`` the penalty's expected gradient for answer
``o`` is multiplied by ``u(o) = P(not all tied | o_1 = o) = sum_l P(r = v_l | o) (1 - w_l^(G-1))``, and
the entropy's by ``U = E_pi u``. TRL's masking gives exactly this; DAPO's dynamic sampling (drop and
refill) divides the whole gradient by ``U``, a positive scalar: the same stationary points.

Entropy bonus (``entropy_coef = c``)
------------------------------------
``c H(pi)`` is added to what the loss maximises, ``H`` the exact entropy of the next-token
distribution; its gradient in ``pi(o)`` is ``-c (log pi(o) + 1)``. Within a class of equal reward law
it no longer keeps ``pi`` proportional to ``pi_ref``, so the solvers do not pool outputs then. At token
level on an answer tree each sampled answer adds ``c w H(pi(.|v))`` at every node ``v`` on its path
(aggregated with the token weight ``w`` like the penalty, as verl's ``agg_loss`` does), which adds
``-c Wbar(v) (log pi(c|v) + 1)`` to the tree's ``g_v(c)`` (:func:`node_entropy_slope`).

``beta = 0`` with ``c > 0`` is a regularised objective of its own (the bonus alone); the residuals are then
measured on the scale ``c`` (:func:`regularisation_scale`). Where the advantage is unbounded (G = inf with
std normalisation, REINFORCE++'s whitening) it outgrows the bonus's ``c |log pi|`` near a vertex, and with
``filter_ties`` the bonus vanishes there (almost every group ties): the flow can then run into a vertex.
``beta = 0`` without a bonus has no stationary policy: ``Objective(beta=0)`` is valid (unregularised, for the
finite-time flows), and every stationary query refuses it with ``NoStationaryPolicy``
(:func:`grpo_theory.problem.require_regularised`).

Importance level (``importance_level``)
---------------------------------------
GSPO's ratio ``s_i = exp(mean_t log(pi/pi_old))`` has, at ``pi_old = pi``, the gradient
``(1/|o_i|) sum_t d log pi_t``; TRL broadcasts it to every token of the answer and aggregates with
``loss_type``, so answer ``i`` contributes ``|o_i| w_i (1/|o_i|) sum_t d log pi_t = w_i sum_t d log pi_t``
(``w_i`` the token weight of the loss type) -- the token-level ratio's gradient. Same stationary set,
for every loss type, as long as the penalty carries no ratio; only off-policy steps (several updates per
batch) differ. TRL's bias-corrected k3 (``kl_estimator="k3_ratio"``) is multiplied by the same ``coef_1``,
so on multi-token answers each token's score is weighted by the answer's mean k3 instead of its own: a
different penalty gradient, which the token-level engine refuses rather than ignores. On single-token
answers the two ratios coincide.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._laws import check_law, from_outside, in_level_order, law, log_law, log_probabilities
from ._checks import (OBJECTIVE, arr, at_most, checked, levels_and_weights, ndarray, num, numbers, on_failure, one_of,
                      optional)
from ._numerics import log_factorial
from ._validate import as_array, broadcastable, plain
from .advantage_enumeration import MAX_COUNT_VECTORS, enumerated_expectations, signed_part  # noqa: F401
from .errors import InvalidInputError

if TYPE_CHECKING:                   # annotations only: problem imports the registry, which imports this module
    from .problem import Objective

__all__ = ["level_expectations", "tie_free_probability", "regularised_gradient", "changes_regulariser",
           "pass_at_k_table", "regularisation_scale", "node_entropy_slope", "entropy_logit_bounds",
           "rloo_expectations", "reinforce_pp_expectations", "pass_at_k_expectations",
           "pass_at_k_bound"]


@checked(obj=OBJECTIVE)
def changes_regulariser(obj: Objective) -> bool:
    """Whether ``obj`` filters ties or adds an entropy bonus (the regulariser differs from the note's).

    Parameters
    ----------
    obj : Objective
        The objective.

    Returns
    -------
    bool
        True when ``filter_ties`` is set or ``entropy_coef > 0``.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> changes_regulariser(Objective(beta=1.0)), changes_regulariser(Objective(beta=1.0, entropy_coef=0.1))
    (False, True)
    """
    return bool(obj.filter_ties) or obj.entropy_coef > 0


@checked(obj=OBJECTIVE)
def regularisation_scale(obj: Objective) -> float:
    """The scale of the regulariser: ``beta``, or ``entropy_coef`` when ``beta = 0`` (the entropy bonus alone).

    Residuals of the stationarity conditions are divided by it (``max pi |g - E_pi g| / scale``), so that
    ``beta = 0`` with an entropy bonus is measured on the bonus's scale instead of dividing by zero.

    Parameters
    ----------
    obj : Objective
        The objective.

    Returns
    -------
    float
        ``beta`` if ``beta > 0``, else ``entropy_coef``: ``> 0`` for a regularised objective, 0 for an
        unregularised one (``beta = entropy_coef = 0``), which has no stationary point and so no residual to scale
        (the stationary queries refuse it, :func:`grpo_theory.problem.require_regularised`).

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> regularisation_scale(Objective(beta=0.5)), regularisation_scale(Objective(beta=0, entropy_coef=0.2))
    (0.5, 0.2)
    """
    return obj.beta if obj.beta > 0 else obj.entropy_coef


@checked(z_ref=num(finite=False), penalty_bounds=arr(ndim=1, finite=False), delta_max=num(0, finite=False), obj=OBJECTIVE,
         cap=num(0, low_open=True))
def entropy_logit_bounds(z_ref: float, penalty_bounds: tuple[float, float], delta_max: float, obj: Objective,
                         cap: float) -> tuple[float, float]:
    """Class logits ``z = log(pi(a)/pi(b))`` that contain every root of a two-class drift with an entropy bonus.

    The drift is ``Delta(z) - beta [pen] - c U z`` with ``|Delta| <= delta_max``. For ``z`` beyond both
    ``z_ref = log(p_a/p_b)`` and 0 the penalty term and the bonus both pull back (each has the sign of
    ``z - z_ref``, resp. ``z``), so a root there satisfies each bound alone: the penalty's
    (``penalty_bounds``) and, without filtering (``U = 1``), ``c |z| <= delta_max``. With filtering ``U``
    vanishes at the vertices and only the penalty's bound holds; infinite ends are cut at ``+-cap``.

    Parameters
    ----------
    z_ref : float
        The reference class logit.
    penalty_bounds : (float, float)
        The bounds without the bonus (``(-inf, inf)`` for ``beta = 0``).
    delta_max : float
        A bound on ``|P(a) - P(b)|`` (may be ``inf``).
    obj : Objective
        ``entropy_coef > 0`` and ``filter_ties``.
    cap : float
        Where infinite ends are cut (the flow's limit is a vertex beyond it).

    Returns
    -------
    (float, float)
        ``(lo, hi)``, finite, with ``lo <= min(z_ref, 0)`` and ``hi >= max(z_ref, 0)``.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> entropy_logit_bounds(-1.0, (-math.inf, math.inf), 2.0, Objective(beta=0, entropy_coef=0.5), 740.0)
    (-5.0, 5.0)
    """
    if not obj.entropy_coef > 0:
        raise InvalidInputError(f"obj: entropy_logit_bounds bounds the roots of a drift with an entropy bonus, so it "
                                f"needs entropy_coef > 0; got entropy_coef = {obj.entropy_coef:g} ({obj.describe()})")
    bounds = np.asarray(penalty_bounds, dtype=float)  # a Series indexed 5, 6: read by position
    if bounds.shape != (2,):
        raise InvalidInputError(f"penalty_bounds must be (lo, hi), two numbers, got {plain(penalty_bounds)[:80]}")
    h = math.inf if obj.filter_ties else delta_max / obj.entropy_coef + 1.0
    lo = min(z_ref, 0.0, max(float(bounds[0]), -h))
    hi = max(z_ref, 0.0, min(float(bounds[1]), h))
    return (lo if math.isfinite(lo) else -cap), (hi if math.isfinite(hi) else cap)


@checked(log_cond=log_probabilities(base=ndarray()), node_weight=ndarray(), obj=OBJECTIVE)
def node_entropy_slope(log_cond: np.ndarray, node_weight: np.ndarray, obj: Objective) -> np.ndarray:
    r"""The entropy bonus's part of ``g_v(c)`` on an answer tree: ``-c_H Wbar(v) (log pi(c|v) + 1)``.

    Token level: every sampled answer ``o`` adds ``c_H w H(pi(.|v))`` at each node ``v`` on its path
    (``H`` the exact entropy of the next-token law there, aggregated with the token weight ``w`` like the
    other per-token terms; a filtered tied group adds nothing). Its expected gradient in ``theta_{v,c}`` at
    ``pi_old = pi`` is ``-c_H pi(v) Wbar(v) pi(c|v) (log pi(c|v) - sum_c' pi(c'|v) log pi(c'|v))``, with
    ``pi(v) Wbar(v) = sum_{o through v} pi(o) W(o)`` (``W`` the answer's expected weight, the tie-free
    probability included), i.e. ``-c_H Wbar(v) (log pi(c|v) + 1)`` in the node-centred form
    ``pi(v) pi(c|v) [g_v(c) - E g_v]`` of :mod:`grpo_theory.solvers.tree` (the ``+1`` cancels in the
    centring). For single-token answers ``Wbar(root) = U`` and this is :func:`regularised_gradient`'s term.

    Parameters
    ----------
    log_cond : numpy.ndarray, shape (E,)
        ``log pi(c|v)`` of each edge ``v -> c`` (each ``<= 0`` or ``-inf``; NaN and ``+inf`` are refused).
    node_weight : numpy.ndarray, shape (E,)
        ``Wbar(v)`` of each edge's node ``v``.
    obj : Objective
        The objective; its ``entropy_coef`` ``c_H`` is read.

    Returns
    -------
    numpy.ndarray, shape (E,)
        ``-c_H Wbar(v) (log pi(c|v) + 1)`` per edge; 0 when ``entropy_coef = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> node_entropy_slope(np.log([0.5, 0.5]), np.array([1.0, 1.0]), Objective(beta=0, entropy_coef=1.0)).round(4)
    array([-0.3069, -0.3069])
    """
    broadcastable(log_cond=log_cond, node_weight=node_weight)
    if obj.entropy_coef == 0:
        return np.zeros_like(log_cond)
    return -obj.entropy_coef * node_weight * (np.maximum(log_cond, -745.0) + 1.0)


def _log_comb(n: np.ndarray, k: int) -> np.ndarray:
    """``log C(n, k)``, ``-inf`` where ``n < k``."""
    n = np.asarray(n, dtype=float)
    ok = n >= k
    safe = np.where(ok, n, k)
    return np.where(ok, log_factorial(safe) - log_factorial(k) - log_factorial(safe - k), -np.inf)


@checked(n_pass=arr(0, integer=True), G=num(1, 2**53, integer=True), k=num(1, integer=True))
def pass_at_k_table(n_pass: np.ndarray, G: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The analytic pass@k advantages ``(A_pass, A_fail)`` of a group of ``G`` with ``n_pass`` passes.

    Parameters
    ----------
    n_pass : array_like of int
        The number of passing members of each group, in ``0..G``.
    G : int
        The group size.
    k : int
        The ``k`` of pass@k, in ``1..G``.

    Returns
    -------
    A_pass : numpy.ndarray
        The advantage of a passing member, shaped like ``n_pass`` (0 where the group ties).
    A_fail : numpy.ndarray
        The advantage of a failing member, likewise.
    """
    if k > G:
        raise InvalidInputError(f"k must be at most the group size G = {G}, got k = {k}")
    at_most("n_pass", n_pass, "the group size G", G)                 # passes among G members
    n_fail = G - np.asarray(n_pass, dtype=float)
    p_fail = np.exp(_log_comb(n_fail, k) - _log_comb(np.array(float(G)), k))         # 1 - R
    p_cond = np.exp(_log_comb(n_fail - 1, k - 1) - _log_comb(np.array(float(G - 1)), k - 1))
    s = np.sqrt(np.maximum(p_fail * (1.0 - p_fail), 0.0))
    ok = s > 0
    safe = np.where(ok, s, 1.0)
    return np.where(ok, p_fail / safe, 0.0), np.where(ok, (p_fail - p_cond) / safe, 0.0)


def _centred_table(v: np.ndarray, total: np.ndarray, obj) -> np.ndarray:
    """``r_1 - mean r`` of member 1 at level ``l`` given the group's total counts ``total[l, n, :]``."""
    diff = v[:, None] - v[None, :]
    return np.einsum("lnj,lj->ln", total, diff) / obj.group_size


def _rloo_table(v: np.ndarray, total: np.ndarray, obj) -> np.ndarray:
    G = obj.group_size
    return _centred_table(v, total, obj) * G / (G - 1)


def _pass_at_k_table(v: np.ndarray, total: np.ndarray, obj) -> np.ndarray:
    a_pass, a_fail = pass_at_k_table(total[:, :, -1], obj.group_size, obj.pass_k)
    out = a_fail.copy()
    out[-1] = a_pass[-1]
    return out


def _moments(v: np.ndarray, log_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``v_l - mu`` and ``sigma`` (shaped ``(..., 1)``) of the level law ``exp(log_w)``."""
    w = np.exp(log_w)
    centred = v - (w @ v)[..., None]
    var = 0.5 * np.einsum("...i,ij,...j->...", w, (v[:, None] - v[None, :]) ** 2, w)
    return centred, np.sqrt(var)[..., None]


#: The input rules of the estimators' ``E_l`` functions below (one signature: levels, their log-law, the objective,
#: which part, the enumeration limit).
_LEVEL_EXPECTATION_ARGS = dict(v=numbers(ndim=1, finite=True), log_w=log_law(), obj=OBJECTIVE,
                               part=one_of("mean", "positive", "negative"),
                               max_count_vectors=optional(num(1, integer=True)))


@checked(**_LEVEL_EXPECTATION_ARGS)
def rloo_expectations(v: np.ndarray, log_w: np.ndarray, obj, *, part: str = "mean",
                      max_count_vectors: int | None = None) -> np.ndarray:
    """RLOO's ``E_l``: ``v_l - mu`` exactly at every ``G`` (its signed parts by enumeration at finite ``G``).

    Parameters
    ----------
    v, log_w : numpy.ndarray
        The reward levels ``v_l`` (shape ``(L,)``, distinct; ``E_l`` does not depend on their order) and
        ``log w_l`` (shape ``(..., L)``), as for :func:`~grpo_theory.advantage_enumeration.enumerated_expectations`.
    obj : Objective
        The objective: its ``group_size`` is read (the mean needs nothing else).
    part : {"mean", "positive", "negative"}
        The part of the advantage averaged: the mean in closed form, a signed part at finite ``G`` enumerated.
    max_count_vectors : int, optional
        The cap on that enumeration (default :data:`~grpo_theory.advantage_enumeration.MAX_COUNT_VECTORS`).

    Returns
    -------
    numpy.ndarray, shape (..., L)
        ``E_l``, or its signed part, for each law ``w`` of ``log_w``.

    Examples
    --------
    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> e = rloo_expectations(np.array([0.0, 1.0]), np.log([[0.7, 0.3]]), Objective(beta=1, advantage="rloo"))
    >>> np.round(e, 6).tolist()     # E[r|o] - mu at every G
    [[-0.3, 0.7]]
    """
    levels_and_weights(v, log_w)
    v, log_w = np.asarray(v, dtype=float), np.asarray(log_w, dtype=float)
    if v.size == 1:
        return np.zeros_like(log_w)
    if part == "mean" or obj.is_large_group:
        centred, _ = _moments(v, log_w)
        return signed_part(np.broadcast_to(centred, log_w.shape).copy(), part)
    return enumerated_expectations(v, log_w, obj, _rloo_table, part=part, max_count_vectors=max_count_vectors)


@checked(**_LEVEL_EXPECTATION_ARGS)
def reinforce_pp_expectations(v: np.ndarray, log_w: np.ndarray, obj, *, part: str = "mean",
                              max_count_vectors: int | None = None) -> np.ndarray:
    """REINFORCE++'s ``E_l``: ``sqrt((G-1)/G) (v_l - mu)/sigma`` (the group mean removed, whitened by the
    batch std ``sqrt((G-1)/G) sigma``); ``(v_l - mu)/sigma`` at ``G = inf``.

    Parameters
    ----------
    v, log_w : numpy.ndarray
        The levels, shape ``(L,)``, and the log-law of one draw's reward under ``pi``, shape ``(..., L)``.
    obj : Objective
        Its ``group_size`` sets the factor ``sqrt((G-1)/G)`` (none at ``G = inf``).
    part : {"mean", "positive", "negative"}
        Which part of the whitened advantage is averaged (a signed part is enumerated at finite ``G``).
    max_count_vectors : int, optional
        Cap on the count vectors of a signed part's enumeration (None: the engine's default).
    """
    levels_and_weights(v, log_w)
    v, log_w = np.asarray(v, dtype=float), np.asarray(log_w, dtype=float)
    if v.size == 1:
        return np.zeros_like(log_w)
    centred, sigma = _moments(v, log_w)
    if obj.is_large_group:
        return signed_part(np.where(sigma > 0, centred / np.where(sigma > 0, sigma, 1.0), 0.0), part)
    G = obj.group_size
    s = math.sqrt((G - 1) / G) * sigma
    scale = np.where(s > 0, 1.0 / np.where(s > 0, s, 1.0), 0.0)          # the batch whitening
    if part == "mean":
        return (G - 1) / G * centred * scale
    return enumerated_expectations(v, log_w, obj, _centred_table, part=part,
                                   max_count_vectors=max_count_vectors) * scale


@checked(**_LEVEL_EXPECTATION_ARGS)
def pass_at_k_expectations(v: np.ndarray, log_w: np.ndarray, obj, *, part: str = "mean",
                           max_count_vectors: int | None = None) -> np.ndarray:
    """The analytic pass@k advantage's ``E_l`` (two levels: fail, pass).

    Parameters
    ----------
    v : numpy.ndarray, shape (L,)
        The reward levels, at most two: the lower is fail, the higher pass, given in either order.
    log_w : numpy.ndarray, shape (..., L)
        The log-probabilities of failing and passing under ``pi``.
    obj : Objective
        Its ``pass_k`` and ``group_size`` are read.
    part : {"mean", "positive", "negative"}
        The part of the pass@k table averaged (closed form at ``G = inf``, else enumerated by :func:`~grpo_theory.advantage_enumeration.enumerated_expectations`).
    max_count_vectors : int, optional
        The enumeration's cap at finite ``G`` (None: the engine's default).

    Raises
    ------
    InvalidInputError
        For more than two reward levels.
    """
    levels_and_weights(v, log_w)
    v, log_w = np.asarray(v, dtype=float), np.asarray(log_w, dtype=float)
    L = v.size
    if L > 2:
        raise InvalidInputError(f"advantage='pass_at_k' needs two reward levels (fail, pass), got {L}: "
                                f"{v.tolist()!r}")
    if L == 1:
        return np.zeros_like(log_w)
    if v[1] < v[0]:                     # pass is the higher level, in whichever order the two are given
        return pass_at_k_expectations(v[::-1], log_w[..., ::-1], obj, part=part,
                                      max_count_vectors=max_count_vectors)[..., ::-1]
    if obj.is_large_group:
        f = np.exp(log_w)[..., 0]
        k = obj.pass_k
        s = np.sqrt(np.maximum((1.0 - f**k) * f**k, 0.0))
        ok = s > 0
        safe = np.where(ok, s, 1.0)
        out = np.stack([np.where(ok, -(1.0 - f) * f ** (k - 1) / safe, 0.0), np.where(ok, f**k / safe, 0.0)],
                       axis=-1)
        return signed_part(out, part)
    return enumerated_expectations(v, log_w, obj, _pass_at_k_table, part=part, max_count_vectors=max_count_vectors)


@checked(span=num(0), obj=OBJECTIVE)
def pass_at_k_bound(span: float, obj) -> float:
    """``max |A|`` of the pass@k table over every group (scale-free; infinite at ``G = inf``).

    Parameters
    ----------
    span : float
        The reward span (unused: the table is scale-free).
    obj : Objective
        Its ``group_size`` and ``pass_k``.
    """
    if obj.is_large_group:
        return math.inf
    a_pass, a_fail = pass_at_k_table(np.arange(obj.group_size + 1), obj.group_size, obj.pass_k)
    return float(max(np.abs(a_pass).max(), np.abs(a_fail).max()))


def level_expectations(v: np.ndarray, log_w: np.ndarray, obj, *, part: str = "mean",
                       max_count_vectors: int | None = None) -> np.ndarray:
    """``E_l(w) = E[A_1 | r_1 = v_l]`` of ``obj``'s advantage estimator: its registry entry's ``expectations``
    (:mod:`grpo_theory.variants`), batched over ``log_w``.

    Parameters
    ----------
    v : numpy.ndarray, shape (L,)
        The reward levels ``v_l`` of the question, distinct, in any order (the hook gets them increasing; the result
        follows the order given).
    log_w : numpy.ndarray, shape (..., L)
        ``log w_l``: the log-probabilities of the levels under ``pi`` (``-inf`` allowed; ``logsumexp = 0``
        along the last axis within :data:`~grpo_theory._laws.LAW_TOL`).
    obj : Objective
        The objective: its ``advantage``, ``pass_k`` and ``group_size`` are read.
    part : {"mean", "positive", "negative"}
        Which part of the advantage is averaged (as in :func:`grpo_theory.preference.level_expectations`).
    max_count_vectors : int, optional
        The cap on the exact enumeration (default :data:`MAX_COUNT_VECTORS`, the preference module's too).

    Returns
    -------
    numpy.ndarray, shape (..., L)
        ``E_l(w)``, or its signed part, for each law ``w`` of ``log_w``.

    Raises
    ------
    InvalidInputError
        pass@k on a question with more than two reward levels; a ``log_w`` that is not a log-law (NaN, ``+inf``,
        or ``sum exp(log_w)`` off 1), named with its row.
    ExactEvaluationTooLarge
        An enumeration over the cap.

    Examples
    --------
    Each estimator through its own entry, at ``G = 4``: the group advantage, then RLOO (``E[r|o] - mu``):

    >>> import numpy as np
    >>> from grpo_theory import Objective
    >>> v, log_w = np.array([0.0, 1.0]), np.log([[0.7, 0.3]])
    >>> [np.round(level_expectations(v, log_w, Objective(beta=1, group_size=4, advantage=a)), 6).tolist()
    ...  for a in ("group", "rloo")]
    [[[-0.490377, 1.144213]], [[-0.3, 0.7]]]
    """
    kwargs = {} if max_count_vectors is None else {"max_count_vectors": max_count_vectors}
    outside = from_outside()
    if outside:
        numbers()("log_w", log_w)
    if not isinstance(log_w, np.ndarray):
        as_array("log_w", log_w)                 # ragged or not numbers: named here; the hook converts it itself
    if outside:                         # as grpo_theory.preference.level_expectations checks its arguments
        numbers(ndim=1, nonempty=True, finite=True)("v", v)
        numbers()("log_w", log_w)
        levels_and_weights(v, log_w)
        check_law("log_w", log_w, log=True)
        OBJECTIVE("obj", obj)
        one_of("mean", "positive", "negative")("part", part)
        if max_count_vectors is not None:
            num(1, integer=True)("max_count_vectors", max_count_vectors)
    try:
        hook = obj.advantage_variant.hook("expectations")
    except AttributeError:
        on_failure(obj=(OBJECTIVE, obj))
        raise
    return in_level_order(as_array("v", v), log_w, lambda v, lw: hook(v, lw, obj, part=part, **kwargs))


@checked(R=law(ndim=2, finite=True), log_w=log_law(), group_size=num(1, integer=True, finite=False))
def tie_free_probability(R: np.ndarray, log_w: np.ndarray, group_size: int | float) -> np.ndarray:
    """``u(c) = P(the group does not tie | o_1 in c) = sum_l R[c, l] (1 - w_l^(G-1))``.

    Parameters
    ----------
    R : numpy.ndarray, shape (C, L)
        ``R[c, l]``: the reward law of each class (or output) ``c``: each row finite, ``>= 0``, summing to 1.
    log_w : numpy.ndarray, shape (..., L)
        ``log w_l``: the log-law of the reward of one draw from ``pi`` (``-inf`` allowed; ``logsumexp = 0``).
    group_size : int or float
        ``G``; at ``math.inf`` the tie probability is ``[w_l = 1]``.

    Returns
    -------
    numpy.ndarray, shape (..., C)
        ``u(c)``, in ``[0, 1]``.

    Raises
    ------
    InvalidInputError
        A row of ``R`` that is not a law, or a ``log_w`` that is not a log-law (NaN, ``+inf``, or
        ``sum exp(log_w)`` off 1 by more than :data:`~grpo_theory._laws.LAW_TOL`), named with the row.
    """
    if np.ndim(log_w) == 0 or np.shape(R)[-1] != np.shape(log_w)[-1]:
        raise InvalidInputError(f"R must have one column per reward level, as many as log_w's last axis, got shapes "
                                f"{np.shape(R)} and {np.shape(log_w)}")
    log_w = np.asarray(log_w, dtype=float)
    if math.isinf(group_size):
        tie = (log_w >= 0.0).astype(float)
    else:
        with np.errstate(invalid="ignore"):
            tie = np.exp((group_size - 1) * np.minimum(log_w, 0.0))
    return (1.0 - tie) @ np.asarray(R, dtype=float).T


def _outside_gradient_inputs(P, penalty_slope, log_pi, obj, u) -> None:
    """:func:`regularised_gradient`'s arguments as a caller outside the package gives them: NumPy arrays of numbers
    (``P`` finite, ``penalty_slope`` without NaN: ``-inf`` where ``pi = 0``), ``log_pi`` a log-law, of shapes that
    broadcast together, and an Objective."""
    ndarray(finite=True)("P", P)
    ndarray()("penalty_slope", penalty_slope)
    if np.isnan(penalty_slope).any():
        raise InvalidInputError(f"penalty_slope holds NaN ({plain(penalty_slope)[:80]}); expected the penalty's "
                                "slope at each answer (-inf allowed where pi = 0)")
    ndarray()("log_pi", log_pi)
    check_law("log_pi", log_pi, log=True)
    OBJECTIVE("obj", obj)
    if u is not None:
        ndarray()("u", u)
        arr(0.0, 1.0)("u", u)
    broadcastable(P=P, penalty_slope=penalty_slope, log_pi=log_pi, **({} if u is None else {"u": u}))


def regularised_gradient(P: np.ndarray, penalty_slope: np.ndarray, log_pi: np.ndarray, obj: Objective,
                         u: np.ndarray | None) -> np.ndarray:
    """``g(o) = P(o) - beta u(o) c(o) - c_H U (log pi(o) + 1)``: the gradient in ``pi(o)`` at ``pi_old = pi``.

    Parameters
    ----------
    P : numpy.ndarray, shape (..., C)
        The expected advantages ``P(o)``.
    penalty_slope : numpy.ndarray, shape (..., C)
        The penalty's per-answer slope ``c(o)`` (``1 - pi_ref/pi`` for the reverse penalty).
    log_pi : numpy.ndarray, shape (..., C)
        ``log pi(o)``: a log-law along the last axis (``-inf`` allowed, ``logsumexp = 0``).
    obj : Objective
        The objective: its ``beta`` and ``entropy_coef`` ``c_H`` are read.
    u : numpy.ndarray, shape (..., C), or None
        The tie-free probability ``u(o)`` (:func:`tie_free_probability`); None without filtering (``u = 1``).

    Returns
    -------
    numpy.ndarray, shape (..., C)
        ``g(o)``.
    """
    if from_outside():                  # the package's own calls (trial points) are not checked again
        _outside_gradient_inputs(P, penalty_slope, log_pi, obj, u)
    try:
        if u is None:
            pen, U = penalty_slope, 1.0
        else:
            with np.errstate(invalid="ignore"):
                pen = np.where(u > 0, u * penalty_slope, 0.0)     # a never-kept answer carries no penalty
            U = np.sum(np.exp(log_pi) * u, axis=-1, keepdims=True)
        g = P - obj.beta * pen if obj.beta > 0 else P.copy()   # beta = 0: no penalty (pen may be inf at pi = 0)
        if obj.entropy_coef > 0:
            g = g - obj.entropy_coef * U * (np.maximum(log_pi, -745.0) + 1.0)
        return g
    except (AttributeError, TypeError, ValueError):
        on_failure(P=(ndarray(), P), penalty_slope=(ndarray(), penalty_slope), log_pi=(ndarray(), log_pi),
                   obj=(OBJECTIVE, obj), u=(optional(ndarray()), u))
        raise
