r"""The identities of the reward preference model behind the closed forms, each proved with sympy.

Rendered in docs/derivations.md by :func:`grpo_theory.symbolic.render_markdown`.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import sympy as sp

from .symbolic_proofs import G, Proof, beta, prove_zero

__all__ = ["identity_pairwise_advantage", "identity_zero_mean_preference", "identity_shift_direct_is_rlhf",
           "identity_penalty_gradient", "all_identities"]


def identity_pairwise_advantage() -> tuple[Proof, ...]:
    """G = 2: A_1 = sign(r_1 - r_2) with the population std, sign/sqrt(2) with ddof = 1."""
    d = sp.symbols("d", positive=True)                   # r_1 - r_2 > 0 (the other sign is symmetric)
    r2 = sp.symbols("r2", real=True)
    r1 = r2 + d
    mean = (r1 + r2) / 2
    var0 = ((r1 - mean) ** 2 + (r2 - mean) ** 2) / 2
    var1 = ((r1 - mean) ** 2 + (r2 - mean) ** 2) / 1
    return (prove_zero((r1 - mean) / sp.sqrt(var0) - 1, "G = 2, ddof 0: A_1 = sign(r_1 - r_2)"),
            prove_zero((r1 - mean) / sp.sqrt(var1) - 1 / sp.sqrt(2), "G = 2, ddof 1: A_1 = sign(r_1 - r_2)/sqrt(2)"))


def _expected_first_advantage(rewards, pis, group_size: int) -> sp.Expr:
    """E[A_1] over all groups (deterministic symbolic rewards), by enumeration."""
    total = sp.Integer(0)
    for group in itertools.product(range(len(rewards)), repeat=group_size):
        r = [rewards[i] for i in group]
        if len(set(group)) == 1:
            continue                                     # all tie: A := 0
        mean = sum(r) / group_size
        std = sp.sqrt(sum((ri - mean) ** 2 for ri in r) / group_size)
        total += sp.Mul(*[pis[i] for i in group]) * (r[0] - mean) / std
    return total


def identity_zero_mean_preference() -> tuple[Proof, ...]:
    """E_pi P_G(.|pi) = 0 for G = 2 and 3 with symbolic rewards and policy (three outputs)."""
    d1, d2 = sp.symbols("d1 d2", positive=True)
    r0 = sp.symbols("r0", real=True)
    rewards = [r0 + d1 + d2, r0 + d1, r0]                # distinct, ordered
    a, b = sp.symbols("a b", positive=True)
    pis = [a, b, 1 - a - b]
    proofs = []
    for g in (2, 3):
        proofs.append(prove_zero(sp.expand(_expected_first_advantage(rewards, pis, g)),
                                 f"E_pi P_{g}(.|pi) = 0 (three outputs, symbolic rewards and policy)",
                                 {d1: (0.1, 3), d2: (0.1, 3), r0: (-2, 2), a: (0.05, 0.45), b: (0.05, 0.45)}))
    return tuple(proofs)


def identity_shift_direct_is_rlhf() -> tuple[Proof, ...]:
    """Shift-only: P_G(o) = ((G-1)/G)(r(o) - E_pi r); + direct penalty = RLHF at beta' = G beta/(G-1)."""
    r_o, m = sp.symbols("r_o m", real=True)              # m = E_pi r
    # E[A_1 | o_1 = o] = r_o - E[mean] = r_o - (r_o + (G-1) m)/G
    p_shift = r_o - (r_o + (G - 1) * m) / G
    ro2 = sp.symbols("r_o2", real=True)
    beta_prime = G * beta / (G - 1)
    # log-ratio of two outputs under pi ∝ pi_ref exp(P/beta) against pi ∝ pi_ref exp(r/beta')
    lr_grpo = (p_shift - p_shift.subs(r_o, ro2)) / beta
    lr_rlhf = (r_o - ro2) / beta_prime
    return (prove_zero(p_shift - (G - 1) / G * (r_o - m), "shift-only: P_G(o) = ((G-1)/G)(r(o) - E_pi r)"),
            prove_zero(lr_grpo - lr_rlhf, "shift + direct = RLHF with beta' = G beta/(G-1), symbolic G"))


def identity_penalty_gradient() -> tuple[Proof, ...]:
    """d/dpi(o) E_{pi_old}[k3] at pi_old = pi is 1 - pi_ref/pi; that of KL(pi_ref||pi) is -pi_ref/pi."""
    pi_o, pi_old, ref = sp.symbols("pi_o pi_old ref", positive=True)
    k3 = ref / pi_o - sp.log(ref / pi_o) - 1
    grad = sp.diff(pi_old * k3, pi_o).subs(pi_old, pi_o)
    grad_kl = sp.diff(ref * sp.log(ref / pi_o), pi_o)
    return (prove_zero(grad - (1 - ref / pi_o), "gradient of the expected k3 penalty at pi_old = pi: 1 - pi_ref/pi"),
            prove_zero(grad - grad_kl - 1, "it equals the gradient of KL(pi_ref || pi) plus the constant 1"))


@lru_cache(maxsize=1)
def all_identities() -> tuple[Proof, ...]:
    """Every identity of this module, proved or checked (cached), in the order of docs/derivations.md."""
    return identity_pairwise_advantage() + identity_zero_mean_preference() + identity_shift_direct_is_rlhf() \
        + identity_penalty_gradient()
