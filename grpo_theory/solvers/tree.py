r"""Token-level GRPO on an answer tree: the objective that real trainers optimise (beyond the note).

The answers of a :class:`~grpo_theory.Question` with ``answers=`` form a prefix tree. The policy
factorises over its internal nodes ``v`` (proper prefixes): ``pi(o) = prod_k pi(t_k | v_k)``, one
softmax over the children ``c`` of each node. Trainers take the ratio and the KL estimator *per
token* and aggregate the token terms with a weight ``w``: for answer ``o_i`` in a batch,

* ``answer_mean`` (TRL ``grpo``, verl ``seq-mean-token-mean``): ``w = 1/|o_i|``;
* ``token_sum`` (TRL ``dr_grpo``, verl ``seq-mean-token-sum[-norm]``): ``w`` constant;
* ``batch_token_mean`` (TRL ``bnpo``/``dapo``, verl ``token-mean``): ``w = B G / T`` with ``T`` the
  sampled number of tokens of the ``B`` groups in the batch, a constant factor in the gradient
  (never differentiated). ``B = inf`` makes ``T/(B G)`` a constant: the same as ``token_sum``.

Per answer ``o`` define ``P^w(o) = E[w A_1 | o_1 = o]`` and ``W(o) = E[w | o_1 = o]`` (for the first two
kinds ``P^w = w(o) P_G(o)``, ``W = w(o)``). At ``pi_old = pi`` the expected gradient of the token-level
objective in the logit ``theta_{v,c}`` is

    dJ/dtheta_{v,c} = pi(v) pi(c|v) [ g_v(c) - sum_c' pi(c'|v) g_v(c') ],
    g_v(c) = Q(v,c) - beta W(v,c) d_v(c),

with ``pi(v)`` the probability of reaching ``v``, ``Q(v,c) = E[P^w(o) | o passes (v,c)]``,
``W(v,c) = E[W(o) | o passes (v,c)]`` (averages over the answers below ``c`` under ``pi``), and the
per-token penalty's derivative

* reverse (k3 per token): ``d_v(c) = 1 - pi_ref(c|v)/pi(c|v)``;
* direct (TRL's ratio * k3 per token): ``d_v(c) = log(pi(c|v)/pi_ref(c|v))``.

With an entropy bonus ``c_H`` (the exact entropy of ``pi(.|v)`` at each position, aggregated like the
penalty) ``g_v(c)`` gains ``-c_H Wbar(v) (log pi(c|v) + 1)``, ``Wbar(v) = E[W(o) | o passes v]``
(:func:`grpo_theory.advantage.node_entropy_slope`); with ``filter_ties`` ``W`` carries the probability
that the group does not tie, which drops both the penalty and the bonus of tied groups.

(For the direct kind the ``+1`` of the KL's derivative is absent: ``d/dtheta [pi_c k3_c] = log(pi_c/
pi_ref_c) dpi_c/dtheta``; it would cancel only where ``W(v,c)`` is the same for every child.) A policy
is **stationary** when ``g_v(c)`` is the same for every child of every reached node. For
single-token answers this is the sequence-level condition of :mod:`grpo_theory.solvers`, for
every loss type; for answers of equal length ``answer_mean`` and ``token_sum`` coincide.
Stability is that of the flow ``d theta/dt = dJ/dtheta`` with one logit per node fixed (the softmax
gauge removed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import advantage, kl
from .._checks import OBJECTIVE, QUESTION, checked, items, num, point_array, checked_record
from .._numerics import integrate_until_slow, logsumexp
from ..errors import InvalidInputError
from ..problem import HUGE_SHIFT, STATIONARY_OBJECTIVE, Objective, Question, shaped_question
from .common import point_at, polish, verdict
from .results import StationaryPoint
from .token_weights import answer_weights, monte_carlo_answer_weights

__all__ = ["AnswerTree", "TreeProblem", "answer_weights", "monte_carlo_answer_weights", "tree_stationary_policy"]

#: The relative step of :meth:`TreeProblem.stability`'s central differences (a fraction of ``max(1, |x|)``).
_REL_STEP = num(0.0, 1.0, low_open=True)


@dataclass(frozen=True)
@checked_record
class AnswerTree:
    """The prefix tree of a set of answers (build it with :meth:`build`).

    Attributes
    ----------
    nodes : tuple of tuple
        The internal nodes ``v`` (proper prefixes of the answers), root ``()`` first.
    edges : tuple of (node, token)
        The edges ``(v, c)``, grouped by node.
    edge_node : numpy.ndarray of int, shape (E,)
        ``edge_node[e]``: the index in ``nodes`` of edge ``e``'s node.
    paths : numpy.ndarray, shape (K, E)
        1 where answer ``o`` passes edge ``e``.
    node_slices : tuple of slice
        ``node_slices[v]``: the edges of node ``v``.
    lengths : numpy.ndarray of int, shape (K,)
        Tokens per answer.

    Examples
    --------
    >>> t = AnswerTree.build([("A", "B"), ("A", "C"), ("D",)])
    >>> t.nodes, t.n_free, t.lengths.tolist()
    (((), ('A',)), 2, [2, 2, 1])
    """

    nodes: tuple[tuple, ...]
    edges: tuple[tuple, ...]
    edge_node: np.ndarray
    paths: np.ndarray
    node_slices: tuple[slice, ...]
    lengths: np.ndarray

    @classmethod
    @checked(answers=items((tuple, str), "answers (tuples of tokens)", sequence=True))
    def build(cls, answers) -> AnswerTree:
        """The tree of ``answers`` (a sequence of token tuples, prefix-free, as ``Question`` checks them).

        Parameters
        ----------
        answers : sequence of tuple
            The answers' token tuples.

        Returns
        -------
        AnswerTree
            Its nodes (the answers' proper prefixes), edges and paths.
        """
        nodes = tuple(dict.fromkeys(a[:n] for a in answers for n in range(len(a))))
        index = {v: i for i, v in enumerate(nodes)}
        edges, slices = [], []
        for v in nodes:
            kids = tuple(dict.fromkeys(a[len(v)] for a in answers if len(a) > len(v) and a[:len(v)] == v))
            slices.append(slice(len(edges), len(edges) + len(kids)))
            edges += [(v, t) for t in kids]
        edge_index = {e: i for i, e in enumerate(edges)}
        paths = np.zeros((len(answers), len(edges)))
        for k, a in enumerate(answers):
            for n in range(len(a)):
                paths[k, edge_index[(a[:n], a[n])]] = 1.0
        edge_node = np.array([index[v] for v, _ in edges])
        return cls(nodes, tuple(edges), edge_node, paths, tuple(slices), np.array([len(a) for a in answers]))

    @property
    def n_free(self) -> int:
        """Free logits: one per edge, less one per node (the softmax gauge)."""
        return len(self.edges) - len(self.nodes)


def _check_family(obj: Objective) -> None:
    """The GRPO-family options the token-level engine does not model yet: say so rather than ignore them."""
    if obj.aggregation_variant.batch_normalised and not obj.is_large_group and (
            not obj.advantage_variant.is_note_advantage or obj.filter_ties):
        raise InvalidInputError(f"loss_type={obj.loss_type!r} with groups_per_batch={obj.groups_per_batch} is "
                                f"modelled for advantage='group' without filter_ties only; got {obj.describe()}")


def _affine_in_shaped_rewards(obj: Objective) -> bool:
    """Whether ``P_G(o) = a (x_o - E_pi x)`` (``a > 0``) for shaped rewards ``x``: the group mean at shift
    normalisation (``a = (G-1)/G``; 1 at ``G = inf``) and RLOO (``a = 1``), at every ``G``."""
    name = obj.advantage_variant.name
    return name == "rloo" or (name == "group" and not obj.normalization_variant.scales)


# ----------------------------------------------------------------------------- the problem

class TreeProblem:
    """Token-level stationarity on the answer tree of ``q`` (answers with ``pi_ref = 0`` get 0).

    The problem interface of :mod:`~grpo_theory.solvers.common` (``policy``, ``kkt``, ``residual``,
    ``free_flow``, ``stability``) in the free logits ``x`` of the tree (one per edge, less one per node).

    Parameters
    ----------
    q : Question
        A question with a reward law (``answers`` optional: without them every answer is one token).
    obj : Objective
        The objective: ``beta``, the group size ``G``, the penalty and the advantage estimator. At token level its
        ``loss_type`` gives the token weight.

    Attributes
    ----------
    q : Question
        The question whose answers form the tree.
    obj : Objective
        The objective given (its ``loss_type`` sets the token weight).
    support : numpy.ndarray of int
        The answers with ``pi_ref > 0``.
    tree : AnswerTree
        The tree of the supported answers.
    log_ref_cond : numpy.ndarray, shape (E,)
        ``log pi_ref(c | v)`` per edge.

    Raises
    ------
    InvalidInputError
        For a preference-matrix question.
    """

    @checked(q=QUESTION, obj=OBJECTIVE)
    def __init__(self, q: Question, obj: Objective) -> None:
        if not q.has_reward_law:
            raise InvalidInputError("level='token' needs a reward law (rewards= or reward_levels=); a preference "
                                    "matrix does not say how a group's advantages split over its members' tokens")
        _check_family(obj)
        self.q, self.obj = q, obj
        answers = q.answers if q.answers is not None else tuple((k,) for k in range(q.n_outputs))
        if obj.importance_variant.per_answer and obj.placement_variant.in_loss and obj.estimator_variant.ratio_weighted \
                and max(len(a) for a in answers) > 1:
            # TRL multiplies the k3 by coef_1, the answer's GSPO ratio: each token's score is then weighted by
            # the answer's mean k3, not its own; not modelled (the ratio-free penalties are unaffected)
            raise InvalidInputError("importance_level='sequence' with the ratio-weighted k3 (kl_estimator="
                                    "'k3_ratio', TRL's use_bias_correction_kl) on multi-token answers is not "
                                    "modelled: its penalty gradient differs from the token level's; use "
                                    "kl_estimator='k3' or importance_level='token'")
        self.support = np.flatnonzero(q.pi_ref > 0)
        self.tree = AnswerTree.build([answers[k] for k in self.support])
        t = self.tree
        mass = q.pi_ref[self.support]
        edge_mass = mass @ t.paths                                          # reference mass below each edge
        node_mass = np.zeros(len(t.nodes))
        np.add.at(node_mass, t.edge_node, edge_mass)
        self.log_ref_cond = np.log(edge_mass) - np.log(node_mass[t.edge_node])
        # free coordinates: every edge but the last of its node, relative to that last edge
        depth = np.array([len(v) for v, _ in t.edges])
        self._later_or_same = (depth[:, None] >= depth[None, :]).astype(float)   # [e', e]: e' at or below e's depth
        last = np.array([s.stop - 1 for s in t.node_slices])
        self.free = np.array([e for s in t.node_slices for e in range(s.start, s.stop - 1)], dtype=int)
        self.last_of_edge = last[t.edge_node]
        self._node_starts = np.array([s.start for s in t.node_slices])
        assert all(s.stop == e.start for s, e in zip(t.node_slices, t.node_slices[1:]))   # contiguous, in order

    # -- policies and their logits
    @property
    def n_free(self) -> int:
        """The number of free logits ``x`` (one per edge but the last of each node)."""
        return int(self.free.size)

    def x_from_log_cond(self, log_cond: np.ndarray) -> np.ndarray:
        """The free logits of the conditionals ``log pi(c|v)``.

        Parameters
        ----------
        log_cond : numpy.ndarray, shape (E,)
            ``log pi(c|v)`` per edge.

        Returns
        -------
        numpy.ndarray
            ``x``.
        """
        log_cond = point_array("log_cond", log_cond, len(self.tree.edges), "one log-conditional per edge")
        return self._x_from_log_cond(log_cond)

    def _x_from_log_cond(self, log_cond: np.ndarray) -> np.ndarray:
        """:meth:`x_from_log_cond` without its argument check: the class's own calls (trial points)."""
        return log_cond[self.free] - log_cond[self.last_of_edge[self.free]]

    def log_cond(self, x: np.ndarray) -> np.ndarray:
        """``log pi(c|v)`` per edge at free logits ``x`` (a softmax at each node).

        Parameters
        ----------
        x : numpy.ndarray
            Free logits: each edge's logit less that of its node's last edge.

        Returns
        -------
        numpy.ndarray, shape (E,)
            The log-conditionals.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        return self._log_cond(x)

    def _log_cond(self, x: np.ndarray) -> np.ndarray:
        """:meth:`log_cond` without its argument check: the class's own calls (trial points)."""
        theta = np.zeros(len(self.tree.edges))
        theta[self.free] = x
        if np.all(np.isfinite(theta)):
            # every node at once (its edges are one contiguous run): logsumexp's operations per node, to the
            # last bit or so (numpy's vectorised exp may round a lane differently)
            node = self.tree.edge_node
            m = np.maximum.reduceat(theta, self._node_starts)
            return theta - (np.log(np.add.reduceat(np.exp(theta - m[node]), self._node_starts)) + m)[node]
        out = np.empty_like(theta)
        for s in self.tree.node_slices:                                     # nodes of one tree, not a grid
            out[s] = theta[s] - logsumexp(theta[s])
        return out

    def policy(self, x: np.ndarray) -> np.ndarray:
        """The answers' probabilities ``pi(o)``, products of the conditionals along each path.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits, as for :meth:`log_cond`.

        Returns
        -------
        numpy.ndarray, shape (K,)
            ``pi``; 0 off the support.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        return self._policy(x)

    def _policy(self, x: np.ndarray) -> np.ndarray:
        """:meth:`policy` without its argument check: the class's own calls (trial points)."""
        pi = np.zeros(self.q.n_outputs)
        pi[self.support] = np.exp(self.tree.paths @ self._log_cond(x))
        return pi

    def x_from_policy(self, pi) -> np.ndarray:
        """The free logits of a policy over the answers (its conditionals at every node).

        Parameters
        ----------
        pi : array_like, shape (K,)
            The policy.

        Returns
        -------
        numpy.ndarray
            ``x`` (``-inf`` or ``nan`` where a conditional is 0).
        """
        pi = point_array("pi", pi, self.q.n_outputs, "one probability per answer")
        t = self.tree
        pi = np.asarray(pi, dtype=float)[self.support]
        edge = pi @ t.paths
        node = np.zeros(len(t.nodes))
        np.add.at(node, t.edge_node, edge)
        with np.errstate(divide="ignore"):
            return self._x_from_log_cond(np.log(edge) - np.log(node[t.edge_node]))

    # -- the gradient of the module doc
    def edge_gradient(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(g_v(c), pi(c|v), pi(v))`` per edge at free logits ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits at which the three are read.

        Returns
        -------
        g : numpy.ndarray, shape (E,)
            ``g_v(c)``.
        cond : numpy.ndarray, shape (E,)
            ``pi(c|v)``.
        reach : numpy.ndarray, shape (E,)
            ``pi(v)``, the probability of reaching the edge's node.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        return self._edge_gradient(x)

    def _edge_gradient(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`edge_gradient` without its argument check: the class's own calls (trial points)."""
        t, obj = self.tree, self.obj
        log_cond = self._log_cond(x)
        lr = log_cond - self.log_ref_cond                                   # per token: log(pi(c|v)/pi_ref(c|v))
        pi = self._policy(x)
        q = self.q
        if obj.regime_variant.in_reward:     # the answer's reward less beta * (sum of its tokens' estimator values)
            shift = np.zeros(q.n_outputs)
            # summed over each answer's own tokens only: 0 * inf (an edge off the answer, whose value overflowed
            # as its mass collapsed) must not make a NaN; +inf is a limit shaped_question handles
            tok = kl.flow_value_shift(obj, np.maximum(lr, -745.0))
            shift[self.support] = np.where(t.paths > 0, tok[None, :], 0.0).sum(axis=1)
            shift, weight = self._collapsed_shares(log_cond, lr, shift, pi)
            q = shaped_question(q, shift)
        else:
            weight = pi
        Pw, W = answer_weights(q, obj, weight)
        ps = pi[self.support]
        reach_edge = ps @ t.paths                                           # pi(v) pi(c|v)
        cond = np.exp(log_cond)
        reach = reach_edge / np.where(cond > 0, cond, 1.0)                 # pi(v)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            Q = (weight[self.support] * Pw[self.support]) @ t.paths / reach_edge
            if obj.regime_variant.in_reward:
                # a collapsing edge's Q(v,c) ~ -beta pi_ref(c|v)/pi(c|v) overflows where pi(c|v) is subnormal:
                # held at -1e300 there (its share pi(c|v) Q(v,c) of its node's mean then fades into the underflow)
                return np.where(reach > 0, np.clip(Q, -1e300, 1e300), 0.0), cond, reach
            mass_w = (ps * W[self.support]) @ t.paths                       # pi(v) pi(c|v) W(v,c)
            lr_f = kl.floored_log_ratio(obj, lr)          # finite k3 values where a token's mass collapsed
            if obj.beta == 0:                                               # the entropy bonus alone
                pen = np.zeros_like(Q)
            elif obj.placement_variant.in_advantage:
                # OpenRLHF: each token's value enters the reward at that token and the return is the sum
                # to the end (gamma = 1), so token t carries the values of tokens t.. of its answer.
                tail = (t.paths * kl.flow_value(obj, lr_f)[None, :]) @ self._later_or_same * t.paths
                pen = (ps * W[self.support]) @ tail / reach_edge
            else:
                pen = mass_w / reach_edge * kl.flow_coefficient(obj, lr_f)
            g = Q - obj.beta * pen
            if obj.entropy_coef > 0:        # per-position entropy, weighted like the penalty (advantage module)
                g = g + advantage.node_entropy_slope(log_cond, self._node_average(mass_w, reach_edge), obj)
        # a node the policy never reaches (its mass underflowed) has no gradient: 0, not 0/0
        return np.where(reach > 0, g, 0.0), cond, reach

    def _collapsed_shares(self, log_cond: np.ndarray, lr: np.ndarray, shift: np.ndarray,
                          pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The shifts and the masses the reward placement's ``P^w`` and ``Q`` are read with: ``(shift, pi)`` itself,
        except for an answer ``o`` whose shift ``beta sum_{c in o} k3(lr_c)`` is beyond :data:`HUGE_SHIFT` (a token
        of ``o`` collapsing, a k3 kind's ``e^{-lr_c}`` running off) when ``P_G`` is affine in the shaped rewards.

        There ``o`` enters every ``Q(v,c)`` above it and ``E_pi x`` through ``pi(o) x_o`` only, whose limit is not 0:
        ``pi(o) k3(lr_c) = pi(o)/pi(c|v) [pi_ref(c|v) + pi(c|v) (lr_c - 1)] -> pi(o)/pi(c|v) pi_ref(c|v)``. Its
        stand-in (:func:`~grpo_theory.problem.shaped_question`, far below the others with mass ``pi(o)``) would drop
        that share; instead ``o`` is given the shift ``HUGE_SHIFT`` and the mass ``L(o)/HUGE_SHIFT``, ``L(o) =
        pi(o) beta sum_{c in o} k3(lr_c)`` taken in logs: ``pi(o) x_o`` keeps its value ``pi(o) E r_o - L(o)`` to
        ``1e-100`` relative, and the field is continuous where the shift crosses ``HUGE_SHIFT``. (With a std in
        ``P_G`` the limit differs: at finite ``G`` the answer's groups have probability ``-> 0`` and bounded
        advantages, its share ``-> 0``, which the stand-in gives; whitened by the std under ``pi``, the std runs off
        like ``L(o)/sqrt(pi(o))``. Both keep the stand-in.)"""
        obj = self.obj
        off = ~(shift[self.support] <= HUGE_SHIFT)
        if not off.any() or not obj.estimator_variant.exponential or not _affine_in_shaped_rewards(obj):
            return shift, pi
        with np.errstate(all="ignore"):
            # log(pi(c|v) k3(lr_c)) per edge: directly, or from pi_ref(c|v) (1 + (lr - 1) e^lr) where k3 runs off
            mass_value = log_cond + np.log(kl.flow_value(obj, lr))
            deep = (lr < -30.0) & (obj.kl_log_ratio_clamp is None) & (obj.kl_value_clamp is None)
            tail = np.where(np.isfinite(lr), (lr - 1.0) * np.exp(lr), 0.0)
            mass_value = np.where(deep, self.log_ref_cond + np.log1p(tail), mass_value)
        on = self.tree.paths[off] > 0
        lc = np.where(on, log_cond[None, :], 0.0)
        rest = np.where(np.isfinite(lc), lc, 0.0)
        rest = rest.sum(axis=1, keepdims=True) - rest                      # log pi(o)/pi(c|v): o's other tokens
        rest[np.isinf(lc).sum(axis=1, keepdims=True) - np.isinf(lc) > 0] = -np.inf
        log_share = np.log(obj.beta) + logsumexp(np.where(on, rest + mass_value[None, :], -np.inf), axis=1).ravel()
        rows = self.support[off]
        shift, weight = shift.copy(), pi.copy()
        shift[rows], weight[rows] = HUGE_SHIFT, np.exp(log_share - np.log(HUGE_SHIFT))
        return shift, weight

    def _node_average(self, mass_w: np.ndarray, reach_edge: np.ndarray) -> np.ndarray:
        """``Wbar(v) = sum_c pi(v) pi(c|v) W(v,c) / pi(v)`` of each edge's node (nan where ``pi(v) = 0``)."""
        t = self.tree
        num, den = np.zeros(len(t.nodes)), np.zeros(len(t.nodes))
        np.add.at(num, t.edge_node, mass_w)
        np.add.at(den, t.edge_node, reach_edge)
        return num[t.edge_node] / den[t.edge_node]

    def centred(self, g: np.ndarray, cond: np.ndarray) -> np.ndarray:
        """``g - E[g | node]``: each edge's gradient less its node's mean under the conditionals ``cond``.

        Parameters
        ----------
        g : numpy.ndarray, shape (E,)
            A value per edge.
        cond : numpy.ndarray, shape (E,)
            The conditionals ``pi(c|v)``.

        Returns
        -------
        numpy.ndarray, shape (E,)
            ``g_v(c) - sum_c' pi(c'|v) g_v(c')``.
        """
        g = point_array("g", g, len(self.tree.edges), "one value per edge")
        cond = point_array("cond", cond, len(self.tree.edges), "one conditional per edge")
        return self._centred(g, cond)

    def _centred(self, g: np.ndarray, cond: np.ndarray) -> np.ndarray:
        """:meth:`centred` without its argument check: the class's own calls (trial points)."""
        mean = np.zeros(len(self.tree.nodes))
        np.add.at(mean, self.tree.edge_node, cond * g)
        return g - mean[self.tree.edge_node]

    def logit_gradient(self, x: np.ndarray) -> np.ndarray:
        """``dJ/dtheta_{v,c}`` for every edge (the expected gradient a trainer follows).

        Parameters
        ----------
        x : numpy.ndarray
            Free logits.

        Returns
        -------
        numpy.ndarray, shape (E,)
            ``dJ/dtheta_{v,c}``.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        return self._logit_gradient(x)

    def _logit_gradient(self, x: np.ndarray) -> np.ndarray:
        """:meth:`logit_gradient` without its argument check: the class's own calls (trial points)."""
        g, cond, reach = self._edge_gradient(x)
        return reach * cond * self._centred(g, cond)

    def free_flow(self, x: np.ndarray) -> np.ndarray:
        """The logit flow in the free coordinates (each relative to its node's last edge).

        Parameters
        ----------
        x : numpy.ndarray
            Free logits, the flow's coordinates.

        Returns
        -------
        numpy.ndarray
            ``dx/dt``.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        return self._free_flow(x)

    def _free_flow(self, x: np.ndarray) -> np.ndarray:
        """:meth:`free_flow` without its argument check: the class's own calls (trial points)."""
        phi = self._logit_gradient(x)
        return phi[self.free] - phi[self.last_of_edge[self.free]]

    def kkt(self, x: np.ndarray) -> np.ndarray:
        """The stationarity equations: ``g_v(c) - g_v(last)`` for every free edge.

        Parameters
        ----------
        x : numpy.ndarray
            Free logits of a candidate.

        Returns
        -------
        numpy.ndarray
            0 at a stationary point.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        g, _, _ = self._edge_gradient(x)
        return g[self.free] - g[self.last_of_edge[self.free]]

    def residual(self, x: np.ndarray) -> float:
        """``max_{v,c} pi(c|v) |g_v(c) - E g_v| / beta`` (the sequence-level residual for single tokens;
        ``entropy_coef`` in place of ``beta = 0``).

        Parameters
        ----------
        x : numpy.ndarray
            Free logits of the point whose residual is measured.

        Returns
        -------
        float
            The residual; 0 at a stationary point.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        g, cond, _ = self._edge_gradient(x)
        return float(np.max(cond * np.abs(self._centred(g, cond)))) / advantage.regularisation_scale(self.obj)

    @checked(h=_REL_STEP)
    def stability(self, x: np.ndarray, h: float = 1e-6) -> tuple[bool | None, np.ndarray, str]:
        """Stability of the flow on the free logits at a stationary point ``x`` (central-difference Jacobian).

        Parameters
        ----------
        x : numpy.ndarray
            Free logits of the stationary point.
        h : float, default 1e-6
            The relative step of the differences.

        Returns
        -------
        stable : bool or None
            The Jacobian's eigenvalues all in the left half-plane; None where the largest real part is 0
            within tolerance.
        eigenvalues : numpy.ndarray
            The Jacobian's eigenvalues.
        why : str
            The verdict in words.
        """
        x = point_array("x", x, self.free.size, "free logits, one per edge but the last of each node")
        n = x.size
        if n == 0:
            return True, np.zeros(0), "no free logits"
        J = np.empty((n, n))
        for j in range(n):                                                  # free logits of one tree
            e = np.zeros(n)
            e[j] = h * max(1.0, abs(x[j]))
            J[:, j] = (self._free_flow(x + e) - self._free_flow(x - e)) / (2 * e[j])
        eig = np.linalg.eigvals(J)
        top = float(np.max(eig.real))
        tol = 1e-7 * max(1e-300, float(np.abs(J).max()))
        stable, why = verdict(top, tol, "the token-level flow's Jacobian")
        return stable, eig, why


# ----------------------------------------------------------------------------- solvers

#: A free logit beyond which the flow's end is read as heading to a face (conditional mass < e^-460 ~ 1e-200),
#: and how far it is pushed for the face test (the mass then underflows to 0).
_FACE_LOGIT, _FACE_PUSH = 460.0, 400.0
#: Max-norm distance over the answers within which a root polished from the flow's end counts as that end.
_NEAR = 1e-3
#: Free logits beyond which, where no root is found near the flow's end, that end is tried as a face (conditional
#: masses e^-30, then e^-11.5 ~ 1e-5: a vertex approached like 1/t, KL fuzz seed 48: masses 2e-7 at t = 1e6).
_SNAP_LOGITS = (30.0, 11.5)


@checked(q=QUESTION, obj=STATIONARY_OBJECTIVE)
def tree_stationary_policy(q: Question, obj: Objective) -> StationaryPoint:
    """The token-level stationary policy the on-policy flow on the tree's logits reaches from ``pi_ref``.

    :func:`~grpo_theory.solvers.stationary_policy` calls it for token-level objectives on trees.

    Parameters
    ----------
    q : Question
        A question whose answers form a tree.
    obj : Objective
        A token-level objective.

    Returns
    -------
    StationaryPoint
        ``converged=False`` (with the reason) when the flow does not settle on a stable point.

    Examples
    --------
    Token level differs from the sequence level once answers share a prefix:

    >>> from grpo_theory import Objective, Question, stationary_policy
    >>> q = Question([0.25, 0.25, 0.5], rewards=[1, 0, 0], answers=["AB", "AC", "D"])
    >>> tree_stationary_policy(q, Objective(beta=0.5, level="token")).pi.round(4).tolist()
    [0.63, 0.1487, 0.2212]
    >>> stationary_policy(q, Objective(beta=0.5)).pi.round(4).tolist()
    [0.683, 0.1057, 0.2113]
    """
    tp = TreeProblem(q, obj)
    x0 = tp.x_from_log_cond(tp.log_ref_cond)
    if tp.tree.n_free == 0:
        return point_at(tp, x0, "single-answer", require_converged=False)
    end = integrate_until_slow(tp.free_flow, x0, 1e4, 1e-7)
    pt = _near_flow(tp, polish(tp, end, "token-flow+root"), end)
    if pt is None or pt.stable is False:
        end = integrate_until_slow(tp.free_flow, end, 1e6, None)
        pt = _near_flow(tp, polish(tp, end, "token-flow+root"), end) or pt
    if pt is not None and pt.stable is not False:
        return pt
    for gap in (_FACE_LOGIT, *_SNAP_LOGITS):
        if not np.any(np.abs(end) > gap):
            continue
        # the flow ran towards a face and stopped with some conditional masses below e^-460 (or e^-30, 1e-5) but
        # not yet 0 (where it stops depends on the last bits of the field): take the face itself, kept only if its
        # KKT test (point_at: each absent answer's drift at a small mass points out) passes and it is where the
        # flow is (KL fuzz seeds 14 and 79: conditionals of 1e-102 at t = 1e6, Newton elsewhere)
        push = _FACE_PUSH if gap == _FACE_LOGIT else _FACE_PUSH + _FACE_LOGIT        # to masses that underflow to 0
        face = point_at(tp, end + push * np.sign(end) * (np.abs(end) > gap), "token-flow+face")
        face = _near_flow(tp, face, end)
        if face is not None and face.boundary and face.stable is not False:
            return face
    rest = point_at(tp, end, "token-flow")
    if rest is not None and rest.stable is not False:
        # the flow's end is itself a root (within RESIDUAL_TOL) that Newton's method left for another: with the KL
        # in the reward a rare answer's shaped reward falls like -beta pi_ref/pi, the std grows with it, and its
        # logit freezes at masses of 1e-102 (KL fuzz seeds 14, 79; the independent flow is there at t = 1e8 too)
        return rest
    out = point_at(tp, end, "token-flow", require_converged=False)
    return replace(out, converged=False,
                   message="the token-level flow from pi_ref did not settle on a stable point within t = 1e6 "
                           f"(residual {out.residual:.2e} there); see stationary_points")


def _near_flow(tp: TreeProblem, point: StationaryPoint | None, end: np.ndarray) -> StationaryPoint | None:
    """``point`` where it lies within :data:`_NEAR` (max-norm over the answers) of the flow's position ``end`` (free
    logits), else None: Newton's method from the flow's end can cross the simplex to another root or KKT face. With
    the KL in the reward (k3), every vertex is a KKT face (a rare answer's shaped reward falls like -beta/pi), and
    Newton from the flow at (0.536, 0.464, 1e-102) had landed on the vertex (0, 0, 1), whose reward is the lowest
    (KL fuzz seed 79; an independent integration of the flow on every edge logit stays at the first point)."""
    if point is None:
        return None
    return point if float(np.abs(point.pi - tp.policy(end)).max()) <= _NEAR else None
