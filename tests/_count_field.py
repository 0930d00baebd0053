"""An independent field for the fuzz's end check, by group counts: the on-policy flow written from the definitions
(/work/shared/SPEC.md sections 1, 2 and 8, the family's definitions in grpo_theory/advantage.py's module doc), with
nothing of the library's engine (no ``P_G`` tables, no ``output_gradient``, no ``TreeProblem``).

A group's members are i.i.d. from ``pi``; each draws an answer ``o`` and then a reward level ``v_l`` with probability
``R[o, l]``. Member 1's expected advantage given its *category* ``k = (o, l)`` is enumerated over the **count vectors**
of the other ``G - 1`` members over the categories (multinomial weights), not over ordered groups: the advantage of
member 1 depends on the others only through how many of them fall in each category. With the KL in the reward
(before normalisation) category ``(o, l)``'s shaped reward is ``x = v_l - beta est(lr_o)``; elsewhere the categories
are the levels. For category values ``x`` and others' counts ``c`` (``G`` members with member 1 in ``k``):

* group, scale: ``A = (x_k - m)/(sd + eps)``, ``sd`` with ``1/(G - ddof)``, 0 where ``sd = 0``; written with
  differences only, ``G (x_k - m) = sum_a c_a (x_k - x_a)`` and ``sum_i (x_i - m)^2 = (1/2G) sum_{a,b} c'_a c'_b
  (x_a - x_b)^2`` (``c' = c + e_k``), so that a tied group's advantage is exactly 0;
* group, shift: ``E[A | k] = ((G-1)/G) (x_k - mu)`` (SPEC section 2), ``mu = E_pi x``; RLOO ``x_k - mu``;
  REINFORCE++ ``sqrt((G-1)/G) (x_k - mu)/sigma`` (0 where ``sigma = 0``); ``G = inf``: the group's mean and std are
  ``mu`` and ``sigma`` (``(x_k - mu)/(sigma + eps)``, shift ``x_k - mu``).

The per-answer gradient at ``pi_old = pi`` (sequence level) is ``g_o = P(o) - beta u(o) c(lr_o) - c_H U (log pi_o +
1)`` with ``P(o) = sum_l R[o, l] E[A | (o, l)]``: ``c`` the loss placement's slope ``d est/d lr`` (k1 ``1``, k2
``lr``, k3 ``1 - e^-lr``, abs ``sign lr``, each 0 where a clamp holds the log-ratio or the value; k3_ratio ``k3 +
d k3/d lr``; k3_plus ``lr``, unclamped), ``-beta est(lr_o)`` added to ``P(o)`` instead for the advantage placement;
``u(o) = sum_l R[o, l] (1 - w_l^(G-1))`` the probability that the group does not tie (tie filtering; 1 without it),
``U = E_pi u``, ``w_l`` the law of one draw's level. On an answer tree (``level="token"``, answer-mean aggregation)
each token ``t`` of a sampled answer ``m`` carries ``(A - beta u c(lr_t))/|m|`` times ``d log pi(t|v)/d theta``,
with the KL in the reward summed over ``m``'s tokens and in the advantage as the reward-to-go.

Where the loss placement's slope jumps (abs's kink, a clamp's threshold) the fields take a ``width``: each step of
the slope in an answer's log-ratio is smoothed over it (:func:`_loss_slope`), per answer (the slope of each answer
depends on its own log-ratio only). The smoothed flow's solutions tend to Filippov's as ``width -> 0``, the sliding
mode on a jump included, at the cost of one evaluation.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln

#: Estimators whose loss slope is the derivative of the (clamped) value.
_PLAIN = ("k1", "k2", "k3", "abs")


class NotCovered(ValueError):
    """An objective outside what this field writes out (pass@k, entropy or non-default aggregation on trees ...)."""


def _value(lr, name: str, log_clamp, value_clamp) -> np.ndarray:
    """The estimator's value at log-ratios ``lr`` (``log pi - log pi_ref``), clamps applied (SPEC section 8);
    k3_ratio's and k3_plus's value is k3's (the ratio is 1 at ``pi_old = pi``)."""
    x = np.clip(lr, -log_clamp, log_clamp) if log_clamp is not None else np.asarray(lr, float)
    base = "k3" if name in ("k3_ratio", "k3_plus") else name
    with np.errstate(over="ignore"):
        v = {"k1": lambda: x, "k2": lambda: x * x / 2, "k3": lambda: np.exp(-x) + x - 1.0,
             "abs": lambda: np.abs(x)}[base]()
    return np.clip(v, -value_clamp, value_clamp) if value_clamp is not None else v


def _value_interval(name: str, value_clamp: float) -> tuple[float, float]:
    """The log-ratios ``[a, b]`` between which ``|est(lr)| <= value_clamp`` (unclamped ``lr``; k1 ``+-V``, k2
    ``+-sqrt(2 V)``, abs ``+-V``, k3 the two roots of ``e^-lr + lr - 1 = V``)."""
    V = value_clamp
    if name in ("k1", "abs"):
        return -V, V
    if name == "k2":
        return -math.sqrt(2 * V), math.sqrt(2 * V)
    k3 = lambda lr: math.exp(-lr) + lr - 1.0 - V                       # noqa: E731 - falls on lr < 0, rises after
    return brentq(k3, -math.log1p(V) - 1.0 - V, 0.0, xtol=1e-15), brentq(k3, 0.0, V + 2.0, xtol=1e-15)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(z))


def _loss_slope(lr, name: str, log_clamp, value_clamp, width: float) -> np.ndarray:
    """``d est/d lr``, the loss placement's per-answer coefficient (0 where a clamp holds the log-ratio or the
    value). ``width > 0``: its jumps smoothed over ``width`` of the log-ratio, every step ``[lr > d]`` replaced by
    ``(1 + tanh((lr - d)/width))/2`` (abs's ``sign lr`` by ``tanh(lr/width)``): a field with every derivative, off
    the jumps within ``e^(-2 |lr - d|/width)``."""
    lr = np.asarray(lr, float)
    if name == "k3_plus":
        return lr.copy()                                    # k2's gradient, no clamp (verl's straight-through k3+)
    plain = "k3" if name == "k3_ratio" else name
    edges = []                                              # intervals [a, b] of lr where no clamp holds
    if log_clamp is not None:
        edges.append((-log_clamp, log_clamp))
    if value_clamp is not None:
        edges.append(_value_interval(plain, value_clamp))
    if width > 0:
        reach = max(abs(v) for e in edges for v in e) + 50 * width if edges else math.inf
        x = np.clip(lr, -reach, reach)                     # beyond, every mask is below e^-100
        with np.errstate(over="ignore"):
            d = {"k1": lambda: np.ones_like(x), "k2": lambda: x, "k3": lambda: 1.0 - np.exp(-x),
                 "abs": lambda: np.tanh(x / width)}[plain]()
        for a, b in edges:
            d = d * _sigmoid((lr - a) / width) * _sigmoid((b - lr) / width)
    else:
        x = np.clip(lr, -log_clamp, log_clamp) if log_clamp is not None else lr
        with np.errstate(over="ignore"):
            d = {"k1": lambda: np.ones_like(x), "k2": lambda: x, "k3": lambda: 1.0 - np.exp(-x),
                 "abs": lambda: np.sign(x)}[plain]()
        inside = np.ones(lr.shape, bool)
        for a, b in edges:
            inside &= (lr >= a) & (lr <= b)
        d = np.where(inside, d, 0.0)
    if name == "k3_ratio":                                  # d/d pi of (pi/pi_old) k3: the value plus its slope
        d = d + _value(lr, "k3", log_clamp, value_clamp)
    return d


@functools.lru_cache(maxsize=64)
def _compositions(n: int, k: int) -> np.ndarray:
    """Every count vector of ``n`` members over ``k`` categories, one per row."""
    if k == 1:
        return np.array([[n]], dtype=np.int16)
    return np.vstack([np.column_stack([np.full(len(r), f, dtype=np.int16), r])
                      for f in range(n, -1, -1) for r in [_compositions(n - f, k - 1)]])


@functools.lru_cache(maxsize=16)
def _counts(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_compositions` as floats, with each vector's log multinomial coefficient."""
    C = _compositions(n, k).astype(float)
    return C, gammaln(n + 1.0) - gammaln(C + 1.0).sum(axis=1)


def category_expectations(x: np.ndarray, w: np.ndarray, G: float, obj) -> np.ndarray:
    """``E[A_1 | member 1 in category k]`` for every category ``k``: values ``x``, law ``w`` of one member's category
    (see the module doc); ``obj`` gives ``advantage``, ``normalization``, ``std_ddof`` and ``std_eps``."""
    x, w = np.asarray(x, float), np.asarray(w, float)
    live = w > 0
    mu = w[live] @ x[live]
    centred = x - mu
    sigma = math.sqrt(max(w[live] @ centred[live] ** 2, 0.0))
    if obj.advantage == "rloo":
        return centred
    if obj.advantage == "reinforce_pp":
        if sigma == 0:
            return np.zeros_like(x)
        return centred / sigma * (1.0 if math.isinf(G) else math.sqrt((G - 1) / G))
    if obj.advantage != "group":
        raise NotCovered(f"advantage {obj.advantage!r}")
    if obj.normalization == "shift":
        return centred if math.isinf(G) else (G - 1) / G * centred
    if math.isinf(G):
        den = sigma + obj.std_eps
        return centred / den if den > 0 else np.zeros_like(x)
    # categories of equal value merged (exact: the advantage sees values only), so that a group ties exactly where
    # all its members share one category
    values, merged = np.unique(centred[live], return_inverse=True)
    weights = np.bincount(merged, weights=w[live])
    E = _scale_expectations(values, weights, int(G), obj.std_ddof, obj.std_eps)
    out = np.zeros_like(x)
    out[live] = E[merged]
    return out


def _scale_expectations(x: np.ndarray, w: np.ndarray, G: int, ddof: int, eps: float) -> np.ndarray:
    """``E[A_1 | member 1 in k]`` (group, scale) for distinct values ``x`` of law ``w > 0``, over the count vectors
    ``c`` of the whole group: ``w_k E[A_1 | k] = E[(c_k/G) A(k, c)]`` (the members are exchangeable), so that
    ``G w_k E[A_1 | k] = x_k sum_c P(c) c_k / (sd + eps) - sum_c P(c) c_k m / (sd + eps)``: two weighted sums over
    the count vectors instead of one advantage per category and count vector."""
    if x.size == 1:
        return np.zeros(1)
    C, log_coef, single = _group_counts(G, x.size)
    log_p, S1, S2 = (C @ np.column_stack([np.log(w), x, x * x])).T            # one pass over the count vectors
    P = np.exp(log_coef + log_p)
    m = S1 / G
    ss = np.where(single, 0.0, np.maximum(S2 - S1 * m, 0.0))
    sd = np.sqrt(ss / (G - ddof))
    with np.errstate(divide="ignore"):
        inv = np.where(sd > 0, P / (sd + eps), 0.0)
    first, second = np.vstack([inv, inv * m]) @ C                               # and one back
    return (x * first - second) / (G * w)


@functools.lru_cache(maxsize=16)
def _group_counts(n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_counts` with a mask of the vectors in a single category (a tied group)."""
    C, log_coef = _counts(n, k)
    return C, log_coef, (C == n).any(axis=1)


def _tie_free(R: np.ndarray, pi: np.ndarray, G: float) -> np.ndarray:
    """``u(o) = sum_l R[o, l] (1 - w_l^(G-1))``; ``1 - w_l = sum_o pi_o (1 - R[o, l])`` summed directly (no
    cancellation at a level of weight near 1; ``G = inf``: the group ties only where ``1 - w_l`` is 0)."""
    miss = pi @ (1.0 - R)
    if math.isinf(G):
        tie = (miss <= 0).astype(float)
    else:
        with np.errstate(divide="ignore"):
            tie = np.exp((G - 1) * np.log1p(-np.minimum(miss, 1.0)))
    return R @ (1.0 - tie)


def _check_covered(q, obj) -> None:
    if obj.advantage not in ("group", "rloo", "reinforce_pp"):
        raise NotCovered(f"advantage {obj.advantage!r}")
    if obj.filter_ties and obj.kl_placement != "loss":
        raise NotCovered("tie filtering with the KL outside the loss")
    if q.is_tree and (obj.entropy_coef > 0 or obj.aggregation != "answer_mean"):
        raise NotCovered("an entropy bonus or another aggregation at token level")
    if q.is_tree and obj.importance_level != "token":
        raise NotCovered("a sequence-level ratio at token level")


def sequence_gradient(q, obj, width: float = 0.0):
    """``pi -> g`` on the outputs of ``pi_ref``'s support (0 elsewhere), by counts (module doc); ``width``: the loss
    slope's smoothing half-width (0: none)."""
    _check_covered(q, obj)
    R, v = np.asarray(q.reward_probs, float), np.asarray(q.reward_levels, float)
    log_ref = np.log(np.where(q.pi_ref > 0, q.pi_ref, 1.0))
    est = (obj.estimator, obj.kl_log_ratio_clamp, obj.kl_value_clamp)
    G, beta = obj.group_size, obj.beta

    def grad(pi):
        pi = np.asarray(pi, float)
        s = pi > 0
        lr = np.zeros(pi.size)
        lr[s] = np.log(pi[s]) - log_ref[s]
        if obj.kl_placement == "reward":
            x = (v[None, :] - beta * _value(lr, *est)[:, None]).ravel()       # category (o, l) at o * L + l
            w = (pi[:, None] * R).ravel()
            P = (R.ravel() * category_expectations(x, w, G, obj)).reshape(R.shape).sum(axis=1)
        else:
            P = R @ category_expectations(v, pi @ R, G, obj)
        g = P.copy()
        u = _tie_free(R, pi, G) if obj.filter_ties else np.ones(pi.size)
        if obj.kl_placement == "loss":
            g -= beta * u * _loss_slope(lr, *est, width)
        elif obj.kl_placement == "advantage":
            g -= beta * _value(lr, *est)
        if obj.entropy_coef > 0:
            with np.errstate(divide="ignore"):
                g -= obj.entropy_coef * (pi @ u) * (np.maximum(np.log(np.where(s, pi, 1e-300)), -745.0) + 1.0)
        return np.where(s, g, 0.0)

    return grad


class AnswerTreeField:
    """The token-level flow on every edge logit of ``q``'s answer tree (built here from ``q.answers``, pi_ref's
    support only): edges in order of first appearance, grouped by node; ``policy(theta)``, ``field(theta)`` (``d
    theta_e/dt = dJ/dtheta_e``), ``log_ref_cond`` and ``edge_node`` for :func:`_full_space_flow.robust_log_time`."""

    def __init__(self, q, obj, width: float = 0.0):
        _check_covered(q, obj)
        self.q, self.obj, self.width = q, obj, width
        self.support = np.flatnonzero(q.pi_ref > 0)
        answers = [tuple(q.answers[k]) for k in self.support]
        nodes, edges = {}, []
        for a in answers:
            for i in range(len(a)):
                nodes.setdefault(a[:i], [])
                if a[i] not in nodes[a[:i]]:
                    nodes[a[:i]].append(a[i])
        for node, tokens in nodes.items():
            edges += [(node, t) for t in tokens]
        index = {e: i for i, e in enumerate(edges)}
        node_ids = {node: i for i, node in enumerate(nodes)}
        self.edge_node = np.array([node_ids[n] for n, _ in edges])
        self.paths = np.zeros((len(answers), len(edges)))
        for m, a in enumerate(answers):
            for i in range(len(a)):
                self.paths[m, index[(a[:i], a[i])]] = 1.0
        self.length = self.paths.sum(axis=1)
        mass = q.pi_ref[self.support] @ self.paths
        node_mass = np.bincount(self.edge_node, weights=mass)
        self.log_ref_cond = np.log(mass) - np.log(node_mass[self.edge_node])

    def log_cond(self, theta: np.ndarray) -> np.ndarray:
        n = self.edge_node
        top = np.full(n.max() + 1, -np.inf)
        np.maximum.at(top, n, theta)
        z = np.bincount(n, weights=np.exp(theta - top[n]))
        return theta - top[n] - np.log(z)[n]

    def policy(self, theta: np.ndarray) -> np.ndarray:
        pi = np.zeros(self.q.n_outputs)
        pi[self.support] = np.exp(self.paths @ self.log_cond(theta))
        return pi

    def field(self, theta: np.ndarray) -> np.ndarray:
        q, obj = self.q, self.obj
        beta, G = obj.beta, obj.group_size
        est = (obj.estimator, obj.kl_log_ratio_clamp, obj.kl_value_clamp)
        R = np.asarray(q.reward_probs, float)[self.support]
        v = np.asarray(q.reward_levels, float)
        log_cond = self.log_cond(theta)
        lr = log_cond - self.log_ref_cond
        pi = np.exp(self.paths @ log_cond)
        value = _value(lr, *est)                                  # per token
        if obj.kl_placement == "reward":
            x = (v[None, :] - beta * (self.paths @ value)[:, None]).ravel()
            P = (R.ravel() * category_expectations(x, (pi[:, None] * R).ravel(), G, obj)).reshape(R.shape).sum(1)
        else:
            P = R @ category_expectations(v, pi @ R, G, obj)
        # a[m, t]: the weight of d log pi(t|v)/d theta in dJ/dtheta, token t of answer m
        a = self.paths * ((pi / self.length) * P)[:, None]
        if obj.kl_placement == "loss":
            u = _tie_free(R, pi, G) if obj.filter_ties else np.ones(pi.size)
            a -= self.paths * ((pi / self.length) * beta * u)[:, None] * _loss_slope(lr, *est, self.width)[None, :]
        elif obj.kl_placement == "advantage":
            # reward-to-go of the per-token values along each answer's path (node ids grow with depth: a prefix
            # is met before its extensions)
            togo = np.zeros_like(self.paths)
            for m in range(self.paths.shape[0]):
                toks = np.flatnonzero(self.paths[m])
                toks = toks[np.argsort(self.edge_node[toks])]
                togo[m, toks] = np.cumsum(value[toks][::-1])[::-1]
            a -= (pi / self.length)[:, None] * beta * togo
        per_edge = a.sum(axis=0)
        node_total = np.bincount(self.edge_node, weights=per_edge)
        return per_edge - np.exp(log_cond) * node_total[self.edge_node]
