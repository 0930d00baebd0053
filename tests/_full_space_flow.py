"""An independent end point: the on-policy flow on all output logits, from the definitions, by enumeration.

Nothing here calls the library's engine. For a finite group size ``G`` every group ``(o_1, ..., o_G)`` is
enumerated (``K^G`` of them; for ``G = inf`` the group's mean and std are those under ``pi``); the objective
at ``pi_old`` is

    J(pi) = E_{groups ~ pi_old} [ (1/G) sum_i pi(o_i)/pi_old(o_i) A_i ]  -  beta E_{pi_old} [ est(o_1) ]   (KL in the loss)

with the advantages ``A_i`` computed from the group's rewards (SPEC sections 1 and 8): the reward shaped by
``-beta * est`` before normalisation (KL in the reward), ``-beta * est`` added after it (KL in the advantage),
shift ``r_i - mean`` or scale ``(r_i - mean)/(std + eps)`` (std with ``ddof``; 0 when every reward ties and
``eps = 0``). ``est`` is k1 ``lr``, k2 ``lr^2/2`` or k3 ``e^{-lr} + lr - 1`` of ``lr = log pi/pi_ref``, the
log-ratio clamped to ``+-log_clamp`` first and the value to ``+-value_clamp`` after (zero gradient where
clamped). ``g_o = dJ/dpi(o)`` at ``pi = pi_old`` and the flow is ``d theta_o/dt = pi_o (g_o - E_pi g)``,
integrated in ``s = log(1 + t)`` (so that ``t = 1e12`` is a few dozen units) with LSODA at tight tolerances.
"""

from __future__ import annotations

import functools
import itertools
import math
import time

import numpy as np
from scipy.integrate import LSODA


def _estimator(lr, name, log_clamp, value_clamp):
    """Value and d value/d lr of a KL estimator, clamps applied."""
    grad_mask = np.ones_like(lr)
    if log_clamp is not None:
        grad_mask = np.where(np.abs(lr) > log_clamp, 0.0, 1.0)
        lr = np.clip(lr, -log_clamp, log_clamp)
    if name == "k1":
        v, d = lr, np.ones_like(lr)
    elif name == "k2":
        v, d = lr ** 2 / 2, lr
    elif name == "k3":
        v, d = np.exp(-lr) + lr - 1.0, 1.0 - np.exp(-lr)
    else:
        raise ValueError(name)
    if value_clamp is not None:
        grad_mask = np.where(np.abs(v) > value_clamp, 0.0, grad_mask)
        v = np.clip(v, -value_clamp, value_clamp)
    return v, d * grad_mask


@functools.lru_cache(maxsize=32)
def _groups(support: tuple, G: int) -> np.ndarray:
    return np.array(list(itertools.product(support, repeat=G)))


def gradient(pi, pi_ref, rewards, *, beta, G, normalization="scale", ddof=0, eps=0.0, estimator="k3",
             placement="loss", log_clamp=None, value_clamp=None):
    """``g_o = dJ/dpi(o)`` at ``pi_old = pi`` on the support of ``pi`` (see the module doc)."""
    pi, pi_ref, r = (np.asarray(a, float) for a in (pi, pi_ref, rewards))
    K = pi.size
    s = pi > 0
    lr = np.zeros(K)
    lr[s] = np.log(pi[s]) - np.log(pi_ref[s])
    value, slope = _estimator(lr, estimator, log_clamp, value_clamp)
    if math.isinf(G):
        # an infinite group: the group's mean and std are those of the shaped reward under pi (no enumeration)
        rew = r - (beta * value if placement == "reward" else 0.0)
        mean = pi[s] @ rew[s]
        adv = rew - mean
        if normalization != "shift":
            den = math.sqrt(pi[s] @ (rew[s] - mean) ** 2) + eps
            adv = adv / den if den > 0 else np.zeros(K)
        g = np.where(s, adv - (beta * value if placement == "advantage" else 0.0), 0.0)
        if placement == "loss":
            g[s] -= beta * slope[s]
        return g
    groups = _groups(tuple(np.flatnonzero(s)), G)                                   # (n, G)
    prob = np.prod(pi[groups], axis=1)
    rew = r[groups] - (beta * value[groups] if placement == "reward" else 0.0)
    mean = rew.mean(axis=1, keepdims=True)
    if normalization == "shift":
        adv = rew - mean
    else:
        var = ((rew - mean) ** 2).sum(axis=1, keepdims=True) / (G - ddof)
        den = np.sqrt(var) + eps
        with np.errstate(divide="ignore", invalid="ignore"):
            adv = np.where(den > 0, (rew - mean) / den, 0.0)
    if placement == "advantage":
        adv = adv - beta * value[groups]
    g = np.zeros(K)
    total = np.bincount(groups.ravel(), weights=(prob[:, None] * adv).ravel(), minlength=K)   # sum_i 1{o_i=o} A_i
    g[s] = total[s] / (G * pi[s])
    if placement == "loss":
        g[s] -= beta * slope[s]
    return g


class IntegrationBudget(RuntimeError):
    """:func:`flow_end` used up its ``max_evals`` (chatter at a jump of the field). ``t`` and ``pi``: the flow time
    and the policy where it stopped (None where not given)."""

    def __init__(self, message: str, *, t: float | None = None, pi: np.ndarray | None = None):
        super().__init__(message)
        self.t, self.pi = t, pi


class IntegrationFailed(RuntimeError):
    """LSODA gave up (repeated convergence failures: a jump of the field, e.g. abs's kink at ``pi = pi_ref`` with
    the KL in the loss, where the field points back from both sides). ``t`` and ``pi``: the flow time and the
    policy where it stopped."""

    def __init__(self, message: str, *, t: float, pi: np.ndarray):
        super().__init__(message)
        self.t, self.pi = t, pi


def flow_end(pi_ref, rewards=None, *, t_end=1e10, grad=None, rtol=1e-9, atol=1e-11, max_evals=None, max_cpu=20.0,
             **objective):
    """The policy at flow time ``t_end`` from ``pi_ref``: ``objective`` the keywords of :func:`gradient`, or
    ``grad`` a function ``pi -> g`` (the fuzz suites pass the library's per-output gradient, so that what is
    checked is the solvers: reduction, root finding, faces and limits, not the estimator formulas)."""
    pi_ref = np.asarray(pi_ref, float)
    sup = np.flatnonzero(pi_ref > 0)
    if grad is None:
        def grad(p):
            return gradient(p, pi_ref, rewards, **objective)

    def pol(th):
        p = np.zeros(pi_ref.size)
        e = np.exp(th - th.max())
        p[sup] = e / e.sum()
        return p

    calls = [0]
    start = time.process_time()

    def rhs(s, th):
        calls[0] += 1
        # an answer 600 below the top (mass < 1e-260) has collapsed: it holds still, and the others see it at
        # mass 0 (its speed p_o (g_o - E g) is below 1e-250)
        d = th - th.max()
        live = d > -600.0
        p = np.zeros(pi_ref.size)
        if live.all():                            # the masked forms below, without their masks: the same bits
            e = np.exp(d)
            p[sup] = e / e.sum()
            with np.errstate(all="ignore"):
                g = grad(p)[sup]
            ps = p[sup]
            return math.exp(s) * (ps * (g - ps @ g))
        e = np.where(live, np.exp(d), 0.0)
        p[sup] = e / e.sum()
        with np.errstate(all="ignore"):
            g = grad(p)[sup]
        f = np.where(live, p[sup] * (g - p[sup] @ np.where(live, g, 0.0)), 0.0)
        return math.exp(s) * f                    # d theta/ds = (1 + t) d theta/dt, t = e^s - 1

    return log_time_lsoda(rhs, np.log(pi_ref[sup]), pol, t_end=t_end, rtol=rtol, atol=atol, max_evals=max_evals,
                          calls=calls, start=start, max_cpu=max_cpu)


#: Logit below the top at which the robust integrations freeze a collapsed answer (relative mass e^-200, 1.4e-87).
#: Deep enough that only its limit term is left: ``pi_o k3(lr_o) -> pi_ref(o)`` for k3 kinds (kept exactly: the relative
#: error of ``k3 ~ e^-lr`` is ``|lr| e^lr``, 1e-85), any bounded ``g_o`` adds below 1e-86. Shallow enough that the
#: field is still the definitions': ``grpo_theory`` stands a shaped reward shifted by more than 1e100 in for its
#: limit (``problem.HUGE_SHIFT``, the library's face), a jump of some 90 orders in the collapsing answer's own speed
#: on which LSODA stalls (KL seeds 933, 3505, 5755, 8368, 8430 stopped at relative masses 1e-101 to 1e-102, where
#: ``beta k3`` crosses 1e100). At e^-200 a token's ``beta k3 <= beta e^{200} / pi_ref(c|v) < 1e92`` for the fuzz's
#: ``beta <= 5`` and ``pi_ref >= 1e-4``.
FREEZE_GAP = -200.0
#: LSODA restarts :func:`robust_flow_end` allows where LSODA gives up.
MAX_RESTARTS = 50


def robust_flow_end(pi_ref, grad, *, t_end, rtol=1e-8, atol=1e-10, max_evals=50_000, max_cpu=20.0, gap=FREEZE_GAP):
    """:func:`flow_end`'s integration made robust where the plain one cannot finish; the same flow,
    ``d theta_o/dt = pi_o (g_o - E_pi g)`` on all output logits of pi_ref's support, in ``s = log(1 + t)``:

    * an answer whose logit falls ``FREEZE_GAP`` below the top (a relative mass of e^-200) has collapsed: it leaves
      the integrated state for good (its logit is frozen), and the others see it at that mass, ``FREEZE_GAP`` below
      the current top. That keeps the limit of ``pi_o g_o`` as ``pi_o -> 0``, which is not 0 where the estimator
      grows like ``pi_ref/pi`` (k3 kinds: ``pi_o k3(lr_o) -> pi_ref(o)``, KL seed 3154), where :func:`flow_end`, which
      sees a held answer at mass 0, switches that term off and on as the answer crosses its threshold and chatters
      there;
    * where LSODA gives up, a fresh LSODA goes on from the last accepted step (at most ``MAX_RESTARTS`` times).

    ``grad`` is ``pi -> g`` (the fuzz passes the library's per-output gradient, jumps of the field mollified:
    :func:`fuzz_kl_cases.mollified_gradient`). Returns the policy at ``t_end`` (frozen answers at their relative
    mass e^-200). Raises
    :class:`IntegrationBudget` past ``max_evals`` evaluations or ``max_cpu`` seconds of CPU, and
    :class:`IntegrationFailed` past ``MAX_RESTARTS`` restarts."""
    pi_ref = np.asarray(pi_ref, float)
    sup = np.flatnonzero(pi_ref > 0)
    pol, field = support_flow(grad, sup, pi_ref.size)
    return robust_log_time(field, np.log(pi_ref[sup]), np.zeros(sup.size, dtype=int), pol, t_end=t_end, rtol=rtol,
                           atol=atol, max_evals=max_evals, max_cpu=max_cpu, gap=gap)


def support_flow(grad, sup: np.ndarray, n: int):
    """``(policy, field)`` on the logits ``th`` of the outputs ``sup`` (of ``n``): ``policy(th)`` is their softmax
    (0 elsewhere) and ``field(th)`` the flow ``d th_o/dt = pi_o (g_o - E_pi g)`` with ``g = grad(policy(th))``."""

    def policy(th):
        p = np.zeros(n)
        e = np.exp(th - th.max())
        p[sup] = e / e.sum()
        return p

    def field(th):
        p = policy(th)
        g = grad(p)[sup]
        return p[sup] * (g - p[sup] @ g)

    return policy, field


def robust_tree_flow_end(tp, *, t_end, field=None, rtol=1e-8, atol=1e-10, max_evals=50_000, max_cpu=20.0,
                         gap=FREEZE_GAP):
    """:func:`tree_flow_end`'s flow (every edge logit of ``tp``'s answer tree; ``field(x)`` its ``dJ/dtheta_e`` at free
    logits ``x``, ``tp.logit_gradient`` unless given: the fuzz passes it with the loss placement's jumps mollified)
    integrated like :func:`robust_flow_end`: an edge whose conditional falls ``FREEZE_GAP`` below the top edge of its
    node is frozen there (a collapsing answer of k3 kinds in the reward: KL seed 9854), LSODA restarted where it gives
    up."""
    free, last = tp.free, tp.last_of_edge[tp.free]
    field = tp.logit_gradient if field is None else field

    def x_of(theta):
        return theta[free] - theta[last]

    return robust_log_time(lambda th: field(x_of(th)), tp.log_ref_cond, tp.tree.edge_node,
                           lambda th: tp.policy(x_of(th)), t_end=t_end, rtol=rtol, atol=atol, max_evals=max_evals,
                           max_cpu=max_cpu, gap=gap)


def robust_log_time(field, y0, groups, pol, *, t_end, rtol, atol, max_evals, max_cpu, gap=FREEZE_GAP):
    """``pol(theta)`` at flow time ``t_end`` of ``d theta/dt = field(theta)`` from ``y0``, LSODA in ``s = log(1 + t)``:
    a logit ``gap`` (``FREEZE_GAP`` unless given) below the top of its group (``groups[i]``: the softmax it belongs
    to) is frozen there and leaves the integrated state for good, others seen at the gap, never below it; a logit left
    alone in its group by the freezes is pinned where it is (its motion is the group's gauge: it moves no
    probability). A fresh LSODA after each freeze and where LSODA gives up (at most ``MAX_RESTARTS``). The result's
    frozen logits are at their gap (a relative mass of ``e^gap``)."""
    theta = np.asarray(y0, dtype=float).copy()
    groups = np.asarray(groups)
    frozen = np.zeros(theta.size, dtype=bool)         # collapsed: held at their group's top + gap
    pinned = np.zeros(theta.size, dtype=bool)         # alone in their group: held where they are
    calls, start = [0], time.process_time()

    def floor(th):
        """Each group's top (of the logits not frozen) plus ``gap``, per logit."""
        top = np.full(groups.max() + 1, -np.inf)
        np.maximum.at(top, groups, np.where(frozen, -np.inf, th))
        return top[groups] + gap

    def at_gap(th):
        """Frozen logits at their group's gap, any other below it raised to it (a trial step past the gap)."""
        return np.maximum(np.where(frozen, -np.inf, th), floor(th))

    def rhs(s, y):
        calls[0] += 1
        if not np.all(np.isfinite(y)):
            return np.full(y.size, np.nan)            # a trial step LSODA then rejects
        th = theta.copy()
        th[moving] = y
        with np.errstate(all="ignore"):
            f = field(at_gap(th))
        return math.exp(s) * np.where(np.isfinite(f), f, 0.0)[moving]

    def final(th):
        return pol(at_gap(th))

    s, s_end, restarts, message = 0.0, math.log1p(t_end), 0, ""
    while True:
        moving = ~frozen & ~pinned
        if not moving.any():                          # every group decided: nothing moves any more
            return final(theta)
        solver = LSODA(rhs, s, theta[moving], s_end, rtol=rtol, atol=atol)
        while solver.status == "running":
            try:
                message = solver.step()
            except RuntimeError as exc:            # LSODA's "Unexpected istate"
                solver.status, message = "failed", str(exc)
            if solver.status == "failed":
                break
            theta[moving], s = solver.y, solver.t
            if calls[0] > max_evals or time.process_time() - start > max_cpu:
                raise IntegrationBudget(f"more than {max_evals} evaluations of the field or {max_cpu:g} s of CPU "
                                        f"(robust integration, {restarts} restarts)", t=math.expm1(s),
                                        pi=final(theta))
            collapsed = moving & (theta < floor(theta))
            if collapsed.any():
                frozen |= collapsed
                alone = np.bincount(groups[~frozen], minlength=groups.max() + 1)[groups] == 1
                pinned |= ~frozen & alone
                break                              # a fresh LSODA on the logits left
        if solver.status == "finished":
            return final(theta)
        if solver.status == "failed":
            restarts += 1
            if restarts > MAX_RESTARTS:
                raise IntegrationFailed(f"LSODA failed {restarts} times (robust integration), the last at t = "
                                        f"{math.expm1(s):.3g}: {message}", t=math.expm1(s), pi=final(theta))


def log_time_lsoda(rhs, y0, pol, *, t_end, rtol, atol, max_evals=None, calls=None, start=None, max_cpu=20.0):
    """``pol(y)`` at flow time ``t_end``: ``rhs(s, y)`` is ``dy/ds`` in ``s = log(1 + t)``, integrated by LSODA from
    ``y0`` at ``s = 0``. Raises :class:`IntegrationBudget` past ``max_evals`` evaluations (counted in ``calls[0]``
    by ``rhs``) or ``max_cpu`` seconds of CPU (20), :class:`IntegrationFailed` where LSODA gives up."""
    calls = calls if calls is not None else [0]
    start = start if start is not None else time.process_time()
    # LSODA stepped by hand, so that the budget is checked between steps (an exception raised inside its
    # callback, or a field set to 0 there, can leave it looping at a jump of the field)
    solver = LSODA(rhs, 0.0, np.asarray(y0, float), math.log1p(t_end), rtol=rtol, atol=atol)
    while solver.status == "running":
        try:
            message = solver.step()
        except RuntimeError as exc:                # LSODA's "Unexpected istate"
            solver.status, message = "failed", str(exc)
        if max_evals is not None and (calls[0] > max_evals or time.process_time() - start > max_cpu):
            raise IntegrationBudget(f"more than {max_evals} evaluations of the field or {max_cpu:g} s of CPU",
                                    t=math.expm1(solver.t), pi=pol(solver.y))
    if solver.status != "finished":
        raise IntegrationFailed(f"LSODA failed at t = {math.expm1(solver.t):.3g}: {message}",
                                t=math.expm1(solver.t), pi=pol(solver.y))
    return pol(solver.y)


def tree_flow_end(tp, *, t_end, rtol=1e-8, atol=1e-10, max_evals=None, max_cpu=20.0):
    """The answers' policy at flow time ``t_end`` of the token-level flow on **every edge logit** of the answer tree
    of ``tp`` (a :class:`grpo_theory.solvers.tree.TreeProblem`), from pi_ref's conditionals: ``d theta_e/dt =
    dJ/dtheta_e`` (``tp.logit_gradient``, checked against autograd in tests/test_tree.py), no gauge fixed, no
    snapping, integrated in log time like :func:`flow_end`."""
    calls = [0]
    free, last = tp.free, tp.last_of_edge[tp.free]

    def x_of(theta):
        return theta[free] - theta[last]

    def rhs(s, theta):
        calls[0] += 1
        with np.errstate(all="ignore"):
            f = tp.logit_gradient(x_of(theta))
        return math.exp(s) * np.where(np.isfinite(f), f, 0.0)

    return log_time_lsoda(rhs, tp.log_ref_cond, lambda th: tp.policy(x_of(th)), t_end=t_end, rtol=rtol, atol=atol,
                          max_evals=max_evals, calls=calls, max_cpu=max_cpu)
