"""Independent expected-gradient of the GRPO surrogate, from the SPEC definitions alone.

Setting: K answers, logits theta, pi = softmax(theta), deterministic rewards r (ties allowed).
A group o_1..o_G is drawn i.i.d. from pi_old; we enumerate groups as count vectors n (multinomial).

Surrogate at pi_old (detached), maximised:
    J(theta) = E_{n ~ Mult(G, pi_old)} [ (1/G) sum_i ( pi(o_i)/pi_old(o_i) * A_i - beta * Lpen(o_i; theta) ) ]
where
    placement 'loss':      A_i from raw rewards; Lpen = clamp(est(clamp(lr))) differentiable
                           (k3_ratio: (pi/pi_old) * k3(lr)); Lpen = 0 for other placements.
    placement 'reward':    A_i from shaped rewards s(o) = r(o) - beta * v(o), v detached value.
    placement 'advantage': A_i = A_i(raw) - beta * v(o_i), v detached.
    lr = log pi(o) - log pi_ref(o).
Advantages: d_i = s_i - mean(s); shift: A = d; scale: A = d / (std_ddof(s) + eps), and A := 0 when the
group's rewards all tie and eps == 0.
The flow: d theta / dt = grad_theta J at theta_old = theta.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

LR_SAFE = 300.0  # numerical guard only: |lr| beyond 300 means pi/pi_ref < e^-300, groups of weight < 1e-130


def compositions(G: int, K: int) -> np.ndarray:
    out = []
    for bars in itertools.combinations(range(G + K - 1), K - 1):
        prev = -1
        c = []
        for b in bars:
            c.append(b - prev - 1)
            prev = b
        c.append(G + K - 1 - prev - 1)
        out.append(c)
    return np.array(out, dtype=np.int64)


@dataclass(frozen=True)
class Spec:
    pi_ref: tuple
    rewards: tuple
    G: int
    beta: float
    placement: str = "loss"       # loss | reward | advantage
    estimator: str = "k3"         # k1 | k2 | k3 | k3_ratio
    normalization: str = "scale"  # scale | shift
    ddof: int = 0
    eps: float = 0.0
    lr_clamp: float | None = None
    value_clamp: float | None = None


def est_value(est: str, lr):
    """Estimator value and d value / d lr (numpy)."""
    if est == "k1":
        return lr, np.ones_like(lr)
    if est == "k2":
        return 0.5 * lr * lr, lr
    if est in ("k3", "k3_ratio"):
        rho = np.exp(-lr)
        return rho + lr - 1.0, 1.0 - rho
    raise ValueError(est)


def clamped_value(spec: Spec, lr):
    """Value after the clamps, and its derivative in lr (0 where a clamp is active)."""
    lr = np.asarray(lr, dtype=float)
    active = np.zeros(lr.shape, dtype=bool)
    if spec.lr_clamp is not None:
        active |= np.abs(lr) > spec.lr_clamp
        lr = np.clip(lr, -spec.lr_clamp, spec.lr_clamp)
    v, dv = est_value(spec.estimator, lr)
    if spec.value_clamp is not None:
        active |= np.abs(v) > spec.value_clamp
        v = np.clip(v, -spec.value_clamp, spec.value_clamp)
    dv = np.where(active, 0.0, dv)
    return v, dv


class Field:
    """Vectorised numpy expected gradient (the fast path, checked against torch autograd)."""

    def __init__(self, spec: Spec):
        self.s = spec
        self.K = len(spec.pi_ref)
        self.N = compositions(spec.G, self.K).astype(float)           # M x K
        G = spec.G
        self.logmult = np.array([math.lgamma(G + 1) - sum(math.lgamma(c + 1) for c in row) for row in self.N])
        self.present = self.N > 0
        self.log_pi_ref = np.log(np.asarray(spec.pi_ref, float))
        self.r = np.asarray(spec.rewards, float)
        self.nfev = 0

    def advantages(self, s_vals, N=None):
        """A[m, o]: advantage of an answer-o member in group m (rows over all groups)."""
        sp = self.s
        G = sp.G
        if N is None:
            N = self.N
        present = N > 0
        mean = N @ s_vals / G                                          # M
        d = s_vals[None, :] - mean[:, None]                            # M x K
        big = np.where(present, s_vals[None, :], -np.inf).max(1)
        small = np.where(present, s_vals[None, :], np.inf).min(1)
        tie = big == small
        d = np.where(tie[:, None], 0.0, d)
        if sp.normalization == "shift":
            return d
        var = (N * d * d).sum(1) / (G - sp.ddof)
        den = np.sqrt(var) + sp.eps
        with np.errstate(invalid="ignore", divide="ignore"):
            A = d / den[:, None]
        A = np.where(tie[:, None], 0.0, A)
        return A

    def grad(self, theta):
        self.nfev += 1
        sp = self.s
        theta = np.asarray(theta, float)
        lse = np.logaddexp.reduce(theta)
        logpi = theta - lse
        pi = np.exp(logpi)
        lr = np.clip(logpi - self.log_pi_ref, -LR_SAFE, LR_SAFE)
        logP = self.logmult + self.N @ logpi
        P = np.exp(logP)                                               # M
        lr_exact = logpi - self.log_pi_ref
        linear_reward = sp.placement == "reward" and sp.normalization == "shift"
        if sp.placement == "reward" and not linear_reward:
            # std scaling: advantages stay bounded as a value explodes, so P(n) * A -> 0 with the mass
            v, _ = clamped_value(sp, lr)
            A = self.advantages(self.r - sp.beta * v)
        else:
            A = self.advantages(self.r)
        w = (P[:, None] * self.N * A).sum(0) / sp.G                    # E[(1/G) sum_i A_i 1{o_i=o}]
        if sp.placement == "advantage":
            # E[(1/G) sum_i v(o_i) 1{o_i=o}] = pi(o) v(o), computed without overflow (pi * rho = pi_ref)
            w = w - sp.beta * self.pi_times_value(pi, lr_exact)
        if linear_reward:
            # shift: A_i = (r_i - mean r) - beta (v_i - mean v), linear in v; with E[n_o n_j] =
            # G pi_o delta_oj + G (G-1) pi_o pi_j:  E[(1/G) sum_i (v_i - mean v) 1{o_i=o}] = ((G-1)/G) pi_o (v_o - E_pi v)
            pv = self.pi_times_value(pi, lr_exact)
            w = w - sp.beta * (sp.G - 1) / sp.G * (pv - pi * pv.sum())
        g = w - pi * w.sum()
        if sp.placement == "loss":
            if sp.estimator == "k3_ratio":
                p = pi * lr_exact                                      # k3 + dk3/dlr = lr
            elif sp.estimator == "k3" and sp.lr_clamp is None and sp.value_clamp is None:
                p = pi - np.exp(self.log_pi_ref + 0 * logpi)           # pi (1 - rho) = pi - pi_ref
            else:
                _, c = clamped_value(sp, lr)
                p = pi * c
            g = g - sp.beta * (p - pi * p.sum())
        return g

    def pi_times_value(self, pi, lr_exact):
        """pi(o) * value(o), exact where the value explodes as pi -> 0 (k3: pi rho = pi_ref)."""
        sp = self.s
        if sp.estimator in ("k3", "k3_ratio") and sp.lr_clamp is None and sp.value_clamp is None:
            pi_ref = np.exp(self.log_pi_ref)
            return pi_ref + pi * (lr_exact - 1.0)                      # pi (rho + lr - 1)
        v, _ = clamped_value(sp, np.clip(lr_exact, -LR_SAFE, LR_SAFE))
        return pi * v


    def fitness(self, logpi):
        """h(o) = E[A_1 | o_1 = o] (others ~ pi) - beta * c(o) (loss placement), so that grad = pi (h - E_pi h).
        Defined also where pi(o) = 0 (the drift an absent answer would feel): the KKT check at faces."""
        sp = self.s
        K = self.K
        if not hasattr(self, "N1"):
            self.N1 = compositions(sp.G - 1, K).astype(float)
            self.logmult1 = np.array([math.lgamma(sp.G) - sum(math.lgamma(c + 1) for c in row) for row in self.N1])
        logpi = np.asarray(logpi, float)
        lr = np.clip(logpi - self.log_pi_ref, -LR_SAFE, LR_SAFE)
        P1 = np.exp(self.logmult1 + self.N1 @ logpi)
        if sp.placement == "reward":
            v, _ = clamped_value(sp, lr)
            svals = self.r - sp.beta * v
        else:
            svals = self.r
        h = np.zeros(K)
        for o in range(K):
            Np = self.N1.copy()
            Np[:, o] += 1
            A = self.advantages(svals, Np)[:, o]
            h[o] = (P1 * A).sum()
        if sp.placement == "advantage":
            v, _ = clamped_value(sp, lr)
            h = h - sp.beta * v
        if sp.placement == "loss":
            c = lr if sp.estimator == "k3_ratio" else clamped_value(sp, lr)[1]
            h = h - sp.beta * c
        return h


# ---------------------------------------------------------------- torch reference (the definition)
def surrogate_torch(spec: Spec, theta, theta_old):
    import torch
    K = len(spec.pi_ref)
    G = spec.G
    N = torch.tensor(compositions(G, K), dtype=torch.float64)
    logmult = torch.tensor([math.lgamma(G + 1) - sum(math.lgamma(int(c) + 1) for c in row) for row in N.tolist()],
                           dtype=torch.float64)
    logpi = torch.log_softmax(theta, 0)
    logpi_old = torch.log_softmax(theta_old, 0).detach()
    log_ref = torch.log(torch.tensor(spec.pi_ref, dtype=torch.float64))
    r = torch.tensor(spec.rewards, dtype=torch.float64)
    P = torch.exp(logmult + N @ logpi_old)

    def value(lr_t):
        lrc = lr_t
        if spec.lr_clamp is not None:
            lrc = torch.clamp(lrc, -spec.lr_clamp, spec.lr_clamp)
        if spec.estimator == "k1":
            v = lrc
        elif spec.estimator == "k2":
            v = 0.5 * lrc ** 2
        else:
            v = torch.exp(-lrc) + lrc - 1
        if spec.value_clamp is not None:
            v = torch.clamp(v, -spec.value_clamp, spec.value_clamp)
        return v

    lr_old = (logpi_old - log_ref)
    s = r - spec.beta * value(lr_old) if spec.placement == "reward" else r
    s = s.detach()
    total = torch.zeros((), dtype=torch.float64)
    ratio = torch.exp(logpi - logpi_old)
    lr = logpi - log_ref
    for m in range(N.shape[0]):
        members = [o for o in range(K) for _ in range(int(N[m, o]))]
        sv = torch.stack([s[o] for o in members])
        mean = sv.mean()
        d = sv - mean
        tie = bool((sv.max() == sv.min()).item())
        if tie:
            d = torch.zeros_like(d)
        if spec.normalization == "scale":
            std = torch.sqrt((d * d).sum() / (G - spec.ddof))
            A = torch.zeros_like(d) if (tie and spec.eps == 0) else d / (std + spec.eps)
        else:
            A = d
        if spec.placement == "advantage":
            A = A - spec.beta * value(lr_old)[members]
        A = A.detach()
        term = (ratio[members] * A).sum() / G
        if spec.placement == "loss":
            if spec.estimator == "k3_ratio":
                rho = torch.exp(-lr[members])
                pen = ratio[members] * (rho + lr[members] - 1)
            else:
                pen = value(lr[members])
            term = term - spec.beta * pen.sum() / G
        total = total + P[m] * term
    return total


def grad_torch(spec: Spec, theta_np):
    import torch
    th = torch.tensor(theta_np, dtype=torch.float64, requires_grad=True)
    J = surrogate_torch(spec, th, th.detach().clone())
    (g,) = torch.autograd.grad(J, th)
    return g.numpy()


def fd_torch(spec: Spec, theta_np, h=1e-6):
    import torch
    th_old = torch.tensor(theta_np, dtype=torch.float64)
    out = np.zeros(len(theta_np))
    for k in range(len(theta_np)):
        e = np.zeros(len(theta_np)); e[k] = h
        with torch.no_grad():
            jp = surrogate_torch(spec, torch.tensor(theta_np + e), th_old).item()
            jm = surrogate_torch(spec, torch.tensor(theta_np - e), th_old).item()
        out[k] = (jp - jm) / (2 * h)
    return out
