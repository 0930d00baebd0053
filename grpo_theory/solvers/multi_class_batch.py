r"""Many problems of three or more classes at once: the reduced logit flow stacked over problems.

:func:`~grpo_theory.solvers.multi_class.multi_class_policy` starts from the end of the flow from
``pi_ref`` (integrated until it is slower than ``1e-6``, then polished by root finding). A figure that
solves a path of ``beta`` (Figure 8: 61 values x 4 objectives, about 320 right-hand sides of a few
microseconds of arithmetic each under LSODA) pays almost only Python overhead. Here
:class:`MultiClassFlowBatch` evaluates the free flow
:meth:`~grpo_theory.solvers.classes.ClassProblem.free_flow` of many problems in one call (problems whose
objectives differ only in ``beta`` and that share the classes' reward laws share one ``E(w)``
evaluation, which does not depend on ``beta``), and :func:`batch_flow_endpoints` integrates all the flows
together (:func:`grpo_theory._batch_ode.integrate_many_until_slow`: Dormand-Prince 5(4), each flow with
its own step size, the same tolerances and stopping rule as the one-at-a-time path). A flow the batch
gives up (stiff, or a non-finite drift) is integrated one at a time with LSODA as before.

Covered (:func:`supports_flow`): three or more classes, a reward law, the reverse or direct penalty in
the loss, no tie filtering and no entropy bonus.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .. import advantage
from .._batch_ode import integrate_many_until_slow
from .._numerics import logsumexp
from ..errors import InvalidInputError
from .._checks import checked, items, num, optional, point_array, row_indices
from .classes import ClassProblem, class_problem, covered_problems, penalty_slope

__all__ = ["MultiClassFlowBatch", "batch_flow_endpoints", "supports_flow"]


@checked(cp=class_problem())
def supports_flow(cp: ClassProblem) -> bool:
    """Whether :class:`MultiClassFlowBatch` covers ``cp``: three or more classes, a reward law, the reverse or
    direct penalty in the loss, no tie filtering and no entropy bonus.

    Parameters
    ----------
    cp : ClassProblem
        The class problem.
    """
    obj = cp.obj
    return (cp.n_classes >= 3 and cp.q.has_reward_law and obj.regime_variant.is_note_penalty
            and not advantage.changes_regulariser(obj))


class MultiClassFlowBatch:
    """A stack of problems with ``C >= 3`` classes (the same ``C``) whose reduced logit flows are evaluated together.

    Parameters
    ----------
    problems : sequence of ClassProblem
        Each one covered (:func:`supports_flow`), all with the same number of classes.

    Raises
    ------
    ValueError
        When a problem is not covered or the class counts differ (a caller's bug).

    Examples
    --------
    >>> import math
    >>> from grpo_theory import Objective, Question
    >>> q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    >>> cps = [ClassProblem(q, Objective(beta=b, group_size=math.inf)) for b in (0.1, 2.0)]
    >>> eta = np.array([[0.3, -1.0], [2.0, 0.5]])
    >>> stacked = MultiClassFlowBatch(cps).free_flow(eta, np.arange(2))
    >>> bool(np.allclose(stacked, [cp.free_flow(e) for cp, e in zip(cps, eta)], rtol=1e-13, atol=1e-15))
    True
    """

    def __init__(self, problems: Sequence[ClassProblem]) -> None:
        self.problems = covered_problems(problems, supports_flow, "MultiClassFlowBatch")
        sizes = {cp.n_classes for cp in self.problems}
        if len(sizes) > 1:
            raise InvalidInputError(f"MultiClassFlowBatch needs one class count, got {sorted(sizes)}")
        self.n_classes = sizes.pop() if sizes else 0
        self.log_p = np.array([cp.log_p for cp in self.problems]).reshape(len(self.problems), self.n_classes)
        self.beta = np.array([cp.obj.beta for cp in self.problems])
        groups: dict = {}
        for i, cp in enumerate(self.problems):
            key = (dataclasses.replace(cp.obj, beta=1.0), tuple(cp.q.reward_levels.tolist()), cp.R.shape,
                   cp.R.tobytes())
            groups.setdefault(key, []).append(i)
        #: per group: (a member problem, its objective, its rows' indices); the member's E(w) evaluator
        #: and R serve the group (the same levels, objective up to beta, and class reward laws)
        self._member_of = np.empty(len(self.problems), dtype=np.intp)
        self._groups = []
        for g, ((obj, *_), idx) in enumerate(groups.items()):
            self._groups.append((self.problems[idx[0]], obj))
            self._member_of[idx] = g

    def __len__(self) -> int:
        return len(self.problems)

    def _free(self, eta) -> np.ndarray:
        """``eta`` checked: free class logits, one row of ``C - 1`` per problem (type and shape only)."""
        eta = point_array("eta", eta, (..., self.n_classes - 1), "free class logits, a row of C - 1 per problem")
        if eta.ndim != 2:
            raise InvalidInputError(f"eta must be 2-D (one row of C - 1 = {self.n_classes - 1} free class logits per "
                                    f"problem), got shape {eta.shape}")
        return eta

    def log_pi(self, eta: np.ndarray) -> np.ndarray:
        """Class log-policies at free class logits ``eta`` ``(s, C - 1) -> (s, C)`` (as :meth:`ClassProblem.log_pi`).

        Parameters
        ----------
        eta : numpy.ndarray, shape (s, C - 1)
            Free class logits, one row per problem.

        Returns
        -------
        numpy.ndarray, shape (s, C)
            The class log-policies.
        """
        eta = self._free(eta)
        theta = np.concatenate((eta, np.zeros((eta.shape[0], 1))), axis=1)
        m = theta.max(axis=1, keepdims=True)
        return theta - (np.log(np.exp(theta - m).sum(axis=1, keepdims=True)) + m)

    def free_flow(self, eta: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The reduced logit flow (:meth:`ClassProblem.free_flow`) of problems ``rows`` at free logits ``eta``.

        Parameters
        ----------
        eta : numpy.ndarray, shape (s, C - 1)
            Free class logits, one row per problem of ``rows``.
        rows : numpy.ndarray of int, shape (s,)
            Which problems.

        Returns
        -------
        numpy.ndarray, shape (s, C - 1)
            ``d eta/dt`` of each problem at its row of ``eta``.
        """
        eta = self._free(eta)
        if row_indices("rows", rows, len(self.problems)) != eta.shape[0]:
            raise InvalidInputError(f"rows must name one problem per row of eta ({eta.shape[0]}), got "
                                    f"{np.size(rows)}")
        eta = np.asarray(eta, dtype=float)
        rows = np.asarray(rows)
        log_pi = self.log_pi(eta)
        g = np.empty_like(log_pi)
        member = self._member_of[rows]
        for k, (cp, obj) in enumerate(self._groups):
            sel = np.flatnonzero(member == k) if len(self._groups) > 1 else slice(None)
            lp = log_pi[sel]
            if lp.size == 0:                # none of this group's flows is still running
                continue
            # as ClassProblem.class_preference: the plain sum where nothing underflows, log space elsewhere
            if lp.min() > -700.0:
                with np.errstate(divide="ignore"):
                    log_w = np.log(np.exp(lp) @ cp.R)
            else:
                log_w = logsumexp(lp[..., :, None] + cp.log_R, axis=-2)
            P = cp.expectations(log_w) @ cp.R.T
            r = rows[sel]
            g[sel] = P - self.beta[r][:, None] * penalty_slope(obj, lp - self.log_p[r])
        pi = np.exp(log_pi)
        phi = pi * (g - (pi * g).sum(axis=1, keepdims=True))
        return phi[:, :-1] - phi[:, -1:]


@checked(problems=items(ClassProblem, "ClassProblems", sequence=True), t_max=num(0.0, low_open=True),
         speed=optional(num(0.0, low_open=True)))
def batch_flow_endpoints(problems: Sequence[ClassProblem], t_max: float = 1e4,
                         speed: float | None = 1e-6) -> list[np.ndarray | None]:
    """The end of each problem's flow from ``pi_ref`` (free class logits), as ``multi_class._flow_endpoint``.

    The flows are integrated together (:func:`grpo_theory._batch_ode.integrate_many_until_slow`, the
    tolerances of the one-at-a-time path: ``rtol = 1e-8``, ``atol = 1e-10``) until each is slower than
    ``speed`` or reaches ``t_max``.

    Parameters
    ----------
    problems : sequence of ClassProblem
        Each covered (:func:`supports_flow`); the class counts may differ (one batch per count).
    t_max : float, default 1e4
        The flow time after which a flow that is still moving stops.
    speed : float or None, default 1e-6
        The secant speed ``max |d eta| / dt`` below which a flow stops; None runs each to ``t_max``.

    Returns
    -------
    list of numpy.ndarray or None
        Per problem, the end of its flow, or None where the batch gave it up (a stiff flow, a non-finite
        drift): the caller integrates that one with LSODA.
    """
    problems = list(problems)
    out: list[np.ndarray | None] = [None] * len(problems)
    by_size: dict[int, list[int]] = {}
    for i, cp in enumerate(problems):
        by_size.setdefault(cp.n_classes, []).append(i)
    for idx in by_size.values():
        batch = MultiClassFlowBatch([problems[i] for i in idx])
        eta0 = batch.log_p[:, :-1] - batch.log_p[:, -1:]
        y, done = integrate_many_until_slow(batch.free_flow, eta0, t_max, speed, rtol=1e-8, atol=1e-10)
        for j, i in enumerate(idx):
            if done[j]:
                out[i] = y[j].copy()
    return out
