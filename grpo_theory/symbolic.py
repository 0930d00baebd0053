r"""Symbolic derivations (sympy) of the closed forms and identities of the note.

Each ``derive_*`` function starts from a stationarity condition, solves it, and
says which root it keeps and why; each ``identity_*`` function
(:mod:`grpo_theory.symbolic_identities`) states an identity and proves it, with the checks of
:mod:`grpo_theory.symbolic_proofs`. A proof is *symbolic* when sympy decides it
(``simplify(lhs - rhs) == 0``, a limit, or an empty solution set); where sympy
cannot decide, the identity is checked with 50-digit mpmath arithmetic at random
points and reported as ``status="numeric"``, never as proved.

``write_derivations_markdown()`` renders everything to ``docs/derivations.md``
(``grpo-theory derivations``); a test fails when that file is stale.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ._checks import checked, num
from . import variants
from .errors import InvalidInputError
from .symbolic_identities import all_identities
from .symbolic_proofs import Derivation, G, Proof, beta, gamma, p, prove_positive, prove_sign, prove_zero, x

__all__ = [
    "Derivation",
    "Proof",
    "derive_eq14",
    "derive_eq15",
    "derive_pairwise_direct",
    "derive_large_group_direct",
    "derive_log_pooling",
    "binary_finite_group_condition",
    "derive_filtered_pairwise",
    "derive_entropy_binary",
    "family_derivations",
    "all_derivations",
    "all_identities",
    "render_markdown",
]

_t = sp.symbols("t", positive=True)                   # a vanishing positive offset for one-sided limits


# ------------------------------------------------------------------------------ derivations

def derive_eq14() -> Derivation:
    r"""G = 2, reverse penalty: ``beta (x - p) = gamma x (1 - x)`` gives Eq. 14.

    Returns
    -------
    Derivation
        The condition, every root sympy finds, the root kept and why, and the proved properties.
    """
    b = sp.symbols("b", positive=True)                   # b = beta/gamma
    cond = sp.Eq(beta * (x - p), gamma * x * (1 - x))
    roots = tuple(sp.solve(cond.subs(beta, b * gamma), x))
    # x^2 - (1-b) x - b p = 0: the product of the roots is -b p < 0, so exactly one root is positive.
    kept = [r for r in roots if sp.simplify(r.subs({b: sp.Rational(1, 3), p: sp.Rational(1, 5)})) > 0][0]
    closed = (1 - b + sp.sqrt((1 - b) ** 2 + 4 * b * p)) / 2
    checks = (
        prove_zero(kept - closed, "kept root == (1 - b + sqrt((1-b)^2 + 4 b p))/2, b = beta/gamma"),
        prove_zero(closed.subs(b, 1) - sp.sqrt(p), "x = sqrt(p) at beta = gamma"),
        Proof("x -> 1 as beta -> 0 (p > 0)", *_limit_status(closed, b, 0, 1)),
        Proof("x -> p as beta -> oo", *_limit_status(closed, b, sp.oo, p)),
        prove_sign(sp.simplify(sp.diff(closed, p)), +1, "dx/dp > 0 (increasing in p)",
                   {b: (0.01, 10.0), p: (0.01, 0.99)}),
        prove_sign(sp.diff(closed, b), -1, "dx/db < 0 (decreasing in beta/gamma)",
                   {b: (0.01, 10.0), p: (0.01, 0.99)}),
    )
    return Derivation("Eq. 14 (G = 2, reverse penalty)", cond, roots, closed.subs(b, beta / gamma),
                      "the quadratic x^2 - (1 - b) x - b p = 0 (b = beta/gamma) has roots whose product "
                      "is -b p < 0: one is negative, the other is the policy",
                      "deterministic or random rewards with confidence margin gamma > 0; 0 < p <= 1", checks)


def _limit_status(expr, var, point, expected, direction: str = "+") -> tuple[str, str]:
    lim = sp.limit(expr, var, point, dir=direction)
    if lim == expected or (not lim.is_infinite and sp.simplify(lim - expected) == 0):
        return "symbolic", f"sympy limit = {lim}"
    return "failed", f"sympy limit = {lim}, expected {expected}"


def derive_eq15() -> Derivation:
    r"""Large G, reverse penalty: ``beta (x - p) = sqrt(x (1 - x))`` gives Eq. 15.

    Returns
    -------
    Derivation
        The condition, every root sympy finds, the root kept and why, and the proved properties.
    """
    cond = sp.Eq(beta * (x - p), sp.sqrt(x * (1 - x)))
    squared = sp.Eq(beta**2 * (x - p) ** 2, x * (1 - x))
    roots = tuple(sp.solve(squared, x))
    closed = (2 * beta**2 * p + 1 + sp.sqrt(1 + 4 * beta**2 * p * (1 - p))) / (2 * (1 + beta**2))
    kept = [r for r in roots if sp.simplify(r - closed) == 0]
    kept_expr = kept[0] if kept else closed
    other = [r for r in roots if r is not kept_expr][0] if len(roots) == 2 else None
    checks = [
        prove_zero(kept_expr - closed, "kept root == Eq. 15"),
        # the kept root satisfies the unsquared equation: beta (x - p) >= 0 there
        prove_zero(sp.sqrt(closed * (1 - closed)) - beta * (closed - p),
                   "Eq. 15 solves beta (x - p) = sqrt(x (1 - x)) (not only its square)",
                   {beta: (0.05, 5.0), p: (0.01, 0.99)}),
        Proof("x -> 1 as beta -> 0", *_limit_status(closed, beta, 0, 1)),
        Proof("x -> p as beta -> oo", *_limit_status(closed, beta, sp.oo, p)),
        Proof("x -> 1/(1+beta^2) as p -> 0+", *_limit_status(closed, p, 0, 1 / (1 + beta**2))),
        prove_positive(sp.factor(1 / (1 + beta**2) - (1 - beta)), beta, "1/(1+beta^2) > 1 - beta"),
    ]
    if other is not None:
        # the discarded root lies below p, so beta (x - p) < 0 = -sqrt(...) side: spurious
        checks.append(prove_zero(sp.sqrt(other * (1 - other)) + beta * (other - p),
                                 "the other root solves beta (x - p) = -sqrt(x (1-x)): spurious",
                                 {beta: (0.05, 5.0), p: (0.01, 0.99)}))
    return Derivation("Eq. 15 (large G, reverse penalty)", cond, roots, closed,
                      "squaring gives a quadratic; the kept root satisfies beta (x - p) = +sqrt(x(1-x)), "
                      "the other satisfies the equation with -sqrt (it lies below p)",
                      "deterministic rewards r(a) > r(b); scale normalisation; 0 < p < 1", tuple(checks))


def derive_pairwise_direct() -> Derivation:
    r"""G = 2, direct penalty: ``x/(1-x) = p/(1-p) exp(gamma/beta)``.

    Returns
    -------
    Derivation
        The condition, every root sympy finds, the root kept and why, and the proved properties.

    Examples
    --------
    >>> d = derive_pairwise_direct()
    >>> sp.simplify(d.solution.subs({p: sp.Rational(1, 2), gamma: 1, beta: sp.Rational(1, 2)}) - 1/(1 + sp.exp(-2)))
    0
    >>> [c.status for c in d.checks]
    ['symbolic', 'symbolic']
    """
    cond = sp.Eq(sp.log(x / (1 - x)), sp.log(p / (1 - p)) + gamma / beta)
    roots = tuple(sp.solve(cond, x))
    e = sp.exp(gamma / (2 * beta))
    closed = e * p / (e * p + (1 - p) / e)
    checks = (prove_zero(roots[0] - closed, "solution == e^{gamma/2beta} p / (e^{gamma/2beta} p + "
                                            "e^{-gamma/2beta} (1-p))"),
              Proof("continuous at p = 0: x -> 0", *_limit_status(closed, p, 0, 0)))
    return Derivation("G = 2, direct penalty", cond, roots, closed,
                      "the logit equation is linear in log(x/(1-x)): a single root",
                      "P_2(a) - P_2(b) = gamma (the confidence margin); 0 < p < 1", checks)


def derive_large_group_direct() -> Derivation:
    r"""Large G, direct penalty: ``h(x) = 1/(beta sqrt(x(1-x))) - log(x/(1-x)) + log(p/(1-p))``.

    The stationary points are the roots of ``h``; the solution kept is ``h``'s turning point ``x*``.

    Returns
    -------
    Derivation
        The condition, every root sympy finds, the root kept and why, and the proved properties.
    """
    h = 1 / (beta * sp.sqrt(x * (1 - x))) - sp.log(x / (1 - x)) + sp.log(p / (1 - p))
    dh = sp.simplify(sp.diff(h, x))
    x_star = (1 + sp.sqrt(1 - 1 / (1 + beta**2))) / 2
    # h'(x) = 0  <=>  (2x - 1) = 2 beta sqrt(x(1-x))  (x > 1/2)  <=>  squared quadratic
    crit = sp.solve(sp.Eq((2 * x - 1) ** 2, 4 * beta**2 * x * (1 - x)), x)
    checks = (
        prove_zero(dh.subs(x, x_star), "h'(x*) = 0", {beta: (0.05, 5.0), p: (0.05, 0.95)}),
        prove_zero(sp.Min(*[sp.simplify(c - x_star) ** 2 for c in crit]) if crit else sp.Integer(1),
                   "x* is a root of (2x-1)^2 = 4 beta^2 x(1-x)", {beta: (0.05, 5.0)}),
        # Limits at the ends through x = 1 - t and x = t, t -> 0+: sympy 1.14's one-sided limit of h
        # at x -> 1- returns -oo, which is wrong (1/(beta sqrt(1-x)) beats log(1/(1-x))).
        Proof("h -> +oo as x -> 1-", *_limit_status(h.subs(x, 1 - _t), _t, 0, sp.oo, "+")),
        Proof("h -> +oo as x -> 0+", *_limit_status(h.subs(x, _t), _t, 0, sp.oo, "+")),
    )
    return Derivation("Large G, direct penalty: h(x) and its turning point", sp.Eq(h, 0), tuple(crit), x_star,
                      "h'(x) = 0 reduces to (2x - 1)^2 = 4 beta^2 x (1 - x); the root above 1/2 is x*, "
                      "where h is smallest (h -> +oo at both ends)",
                      "deterministic rewards r(a) > r(b); G -> oo; scale normalisation", checks)


@checked(n_outputs=num(2, 12, integer=True))
def derive_log_pooling(n_outputs: int = 3) -> Derivation:
    r"""RLHF: maximise ``sum pi r - beta KL(pi || pi_ref)`` on the simplex (Eq. 3 -> Eq. 4).

    Parameters
    ----------
    n_outputs : int, default 3
        ``K``, with symbolic ``pi_ref`` (``q0, q1, ...``) and rewards (``r0, r1, ...``).

    Returns
    -------
    Derivation
        The condition, every root sympy finds, the root kept and why, and the proved properties.
    """
    pis = sp.symbols(f"pi0:{n_outputs}", positive=True)
    refs = sp.symbols(f"q0:{n_outputs}", positive=True)
    rs = sp.symbols(f"r0:{n_outputs}", real=True)
    lam = sp.symbols("lambda", real=True)
    lagr = sum(pi_ * r for pi_, r in zip(pis, rs)) - beta * sum(pi_ * sp.log(pi_ / q) for pi_, q in zip(pis, refs)) \
        - lam * (sum(pis) - 1)
    stationarity = [sp.Eq(sp.diff(lagr, pi_), 0) for pi_ in pis]
    sol = [sp.solve(eq, pi_)[0] for eq, pi_ in zip(stationarity, pis)]
    z = sum(q * sp.exp(r / beta) for q, r in zip(refs, rs))
    closed = [q * sp.exp(r / beta) / z for q, r in zip(refs, rs)]
    # the multiplier cancels in ratios: pi_i / pi_j = q_i e^{r_i/beta} / (q_j e^{r_j/beta})
    checks = tuple(prove_zero(sp.simplify(sol[i] / sol[0] - closed[i] / closed[0]),
                              f"pi{i}/pi0 = q{i} e^(r{i}/beta) / (q0 e^(r0/beta))") for i in range(1, n_outputs))
    return Derivation("RLHF: logarithmic pooling (Eq. 4)", stationarity[0], tuple(sol), closed[0],
                      "the Lagrangian is strictly concave in pi: the unique stationary point is the maximum",
                      "finite outputs, pi_ref > 0", checks)


@checked(group_size=num(2, 64, integer=True, none=True))
def binary_finite_group_condition(group_size: int | None = None, penalty: str = "reverse") -> sp.Expr:
    r"""Stationarity of a binary question at finite G, as an explicit function of x, p, beta.

    With ``k ~ Binomial(G-1, x)``: ``P_G(a) = E sqrt((G-1-k)/(k+1))``, ``P_G(b) = -E sqrt(k/(G-k))``
    (deterministic rewards, scale, ddof 0), and the condition is
    reverse: ``beta (x - p) - x (1 - x) (P_G(a) - P_G(b)) = 0``;
    direct:  ``beta (log(x/(1-x)) - log(p/(1-p))) - (P_G(a) - P_G(b)) = 0``.

    Parameters
    ----------
    group_size : int or None, default None
        ``G``; None keeps ``G`` symbolic (an unevaluated Sum).
    penalty : {"reverse", "direct"}, default "reverse"
        The KL of the penalty: the note's reverse KL(pi_ref || pi) or direct KL(pi || pi_ref).

    Returns
    -------
    sympy.Expr
        The left-hand side of the condition ``= 0``, in ``x``, ``p``, ``beta``.

    Raises
    ------
    ValueError
        For a ``penalty`` other than "reverse" or "direct".

    Examples
    --------
    >>> sp.factor(binary_finite_group_condition(2))          # Eq. 14's condition at gamma = 1
    -beta*p + beta*x + x**2 - x
    """
    k = sp.symbols("k", integer=True, nonnegative=True)
    g = G if group_size is None else sp.Integer(group_size)
    pmf = sp.binomial(g - 1, k) * x**k * (1 - x) ** (g - 1 - k)
    pa = sp.Sum(pmf * sp.sqrt((g - 1 - k) / (k + 1)), (k, 0, g - 1))
    pb = -sp.Sum(pmf * sp.sqrt(k / (g - k)), (k, 0, g - 1))
    if group_size is not None:
        pa, pb = pa.doit(), pb.doit()
    delta = pa - pb
    if variants.note_penalty(penalty).is_reverse:
        return beta * (x - p) - x * (1 - x) * delta
    if variants.note_penalty(penalty).is_direct:
        return beta * (sp.log(x / (1 - x)) - sp.log(p / (1 - p))) - delta
    raise InvalidInputError(f"penalty must be 'reverse' or 'direct', got {penalty!r}")


def derive_tree_node(penalty: str = "reverse") -> Derivation:
    r"""Token level, a node with two children, their token weights equal (``W``), at G = 2.

    Stationarity at node ``v`` (see :mod:`grpo_theory.tree`): ``g_v(c_1) = g_v(c_2)`` with
    ``g_v(c) = Q(v, c) - beta W d_v(c)``. With ``x = pi(c_1|v)``, ``p = pi_ref(c_1|v)`` and
    ``Delta = Q(v, c_1) - Q(v, c_2)``, the reverse penalty gives ``beta W (x - p) = Delta x (1 - x)``:
    Eq. 14 with ``gamma = Delta/W``; the direct penalty gives ``logit x = logit p + Delta/(beta W)``.
    At G = 2 with deterministic rewards ``Delta`` depends on the policy only through the masses of
    the answers ranked between the two children's (it is ``pi(v) + 2 m_between`` when each child is
    one answer), so each node's closed form holds given the rest of the tree.

    Parameters
    ----------
    penalty : {"reverse", "direct"}, default "reverse"
        The note's reverse KL(pi_ref || pi) or direct KL(pi || pi_ref), per node.

    Returns
    -------
    Derivation
        The node's stationarity condition, its closed form and the checks sympy made.
    """
    W, Delta = sp.symbols("W Delta", positive=True)
    if variants.note_penalty(penalty).is_reverse:
        cond = sp.Eq(Delta - beta * W * ((1 - p) / (1 - x) - p / x), 0)
        roots = tuple(sp.solve(sp.Eq(beta * W * (x - p), Delta * x * (1 - x)), x))
        b = beta * W / Delta
        closed = (1 - b + sp.sqrt((1 - b) ** 2 + 4 * b * p)) / 2
        kept = [r for r in roots
                if sp.simplify(r.subs({beta: sp.Rational(1, 3), W: 1, Delta: 1, p: sp.Rational(1, 5)})) > 0][0]
        checks = (prove_zero(sp.simplify(cond.lhs * x * (1 - x)) - (Delta * x * (1 - x) - beta * W * (x - p)),
                             "node condition times x(1-x) == Delta x (1-x) - beta W (x - p)"),
                  prove_zero(kept - closed, "kept root == Eq. 14 with gamma = Delta/W"))
        return Derivation("Token level, a two-child node at G = 2, reverse penalty", cond, roots, closed,
                          "the same quadratic as Eq. 14: the positive root", "the two children's token weights "
                          "W(v, c) are equal (equal subtree lengths, or token_sum); Delta > 0", checks)
    cond = sp.Eq(sp.log(x / (1 - x)), sp.log(p / (1 - p)) + Delta / (beta * W))
    roots = tuple(sp.solve(cond, x))
    e = sp.exp(Delta / (2 * beta * W))
    closed = e * p / (e * p + (1 - p) / e)
    checks = (prove_zero(roots[0] - closed, "solution == the G = 2 direct form with gamma = Delta/W"),)
    return Derivation("Token level, a two-child node at G = 2, direct penalty (ratio * k3)", cond, roots, closed,
                      "linear in log(x/(1-x)): a single root", "the two children's token weights are equal; "
                      "with unequal W the condition Delta = beta (W_1 log(x/p) - W_2 log((1-x)/(1-p))) is "
                      "transcendental and has no closed form", checks)


# ------------------------------------------------------------------------------ the GRPO family (issue 22)
# (kept out of all_derivations() for now so docs/derivations.md stays as it is; see family_derivations())

def derive_filtered_pairwise() -> Derivation:
    r"""G = 2, reverse (k3) penalty, tied groups filtered: derived from the enumerated groups.

    The expected loss is written over the four ordered groups of a binary question with deterministic
    rewards ``r(a) > r(b)``; the tied ones ``(a, a)``, ``(b, b)`` are dropped, the others carry
    ``A = (+1, -1)``, the ratio ``pi/pi_old`` and ``-beta k3`` per member. Its derivative in the logit
    ``z = logit pi(a)``, at ``pi_old = pi``, vanishes where
    ``beta (x - p) (x^2 + (1 - x)^2) = x (1 - x)``: Eq. 14 with ``beta`` times ``P(tie) = x^2 + (1-x)^2``.
    """
    z, z_old = sp.symbols("z z_old", real=True)
    prob = {"a": 1 / (1 + sp.exp(-z)), "b": 1 - 1 / (1 + sp.exp(-z))}
    old = {"a": 1 / (1 + sp.exp(-z_old)), "b": 1 - 1 / (1 + sp.exp(-z_old))}
    ref = {"a": p, "b": 1 - p}

    def k3(o):
        rho = ref[o] / prob[o]
        return rho - sp.log(rho) - 1
    loss = 0
    for o1, o2, adv in (("a", "b", (1, -1)), ("b", "a", (-1, 1))):     # the groups that do not tie
        loss += old[o1] * old[o2] * sum(prob[o] / old[o] * a - beta * k3(o) for o, a in zip((o1, o2), adv)) / 2
    grad = sp.diff(loss, z).subs(z_old, z).subs(z, sp.log(x / (1 - x)))
    numerator = sp.numer(sp.factor(sp.together(sp.simplify(grad))))
    target = x * (1 - x) - beta * (x - p) * (x**2 + (1 - x) ** 2)
    cond = sp.Eq(beta * (x - p) * (x**2 + (1 - x) ** 2), x * (1 - x))
    roots = tuple(sp.solve(target, x))
    at_p = sp.simplify(target.subs(x, p))
    checks = (
        prove_zero(sp.simplify(numerator / target) - sp.simplify(numerator / target).subs({x: sp.Rational(1, 3),
                                                                                          p: sp.Rational(1, 7),
                                                                                          beta: 2}),
                   "the enumerated gradient's numerator is a constant multiple of the stated cubic",
                   {x: (0.05, 0.95), p: (0.05, 0.95), beta: (0.1, 3.0)}),
        prove_sign(at_p, +1, "the cubic is positive at x = p: p (1 - p) > 0", {p: (0.01, 0.99)}),
        prove_sign(target.subs(x, 1), -1, "and negative at x = 1: -beta (1 - p) < 0",
                   {p: (0.01, 0.99), beta: (0.01, 10.0)}),
    )
    return Derivation("G = 2, reverse penalty, tied groups filtered", cond, roots, sp.Symbol("x_filtered"),
                      "the cubic is >= x(1-x) > 0 on (0, p] and -beta(1-p) < 0 at 1: the policy is its root in "
                      "(p, 1) (closed_form.binary_pairwise_filtered; uniqueness there is checked numerically)",
                      "deterministic rewards r(a) > r(b), scale normalisation (A = sign), 0 < p < 1", checks)


def derive_entropy_binary(penalty: str = "reverse") -> Derivation:
    r"""A binary question with an entropy bonus ``c H(pi)``: ``Delta - beta d(x) - c logit(x) = 0``.

    ``d(x) = (x - p)/(x (1 - x))`` (reverse) or ``logit x - logit p`` (direct) is the penalty's
    logit-gradient difference divided by ``x (1 - x)``, and ``-c logit x`` the entropy's
    (``dH/dz = -x (1 - x) logit x``). The direct case is linear in ``logit x``; the reverse case is
    transcendental, with a unique root because its left side falls strictly on ``(0, 1)``.

    Parameters
    ----------
    penalty : {"reverse", "direct"}, default "reverse"
        The note's reverse KL(pi_ref || pi) or direct KL(pi || pi_ref).

    Returns
    -------
    Derivation
        The condition, its root (closed form for the direct penalty) and the checks sympy made.
    """
    c, Delta = sp.symbols("c Delta", positive=True)
    z = sp.symbols("z", real=True)
    xs = 1 / (1 + sp.exp(-z))
    entropy = -(xs * sp.log(xs) + (1 - xs) * sp.log(1 - xs))
    d_entropy = sp.simplify(sp.diff(entropy, z) / (xs * (1 - xs)))
    entropy_check = prove_zero(d_entropy.subs(z, sp.log(x / (1 - x))) + sp.log(x / (1 - x)),
                               "dH/dz = -x (1 - x) logit(x)", {x: (0.05, 0.95)})
    logit = sp.log(x / (1 - x))
    if variants.note_penalty(penalty).is_reverse:
        lhs = Delta - beta * (x - p) / (x * (1 - x)) - c * logit
        cond = sp.Eq(lhs, 0)
        slope = sp.diff(lhs, x)
        checks = (entropy_check,
                  prove_zero(sp.diff((x - p) / (x * (1 - x)), x) - ((x - p) ** 2 + p * (1 - p)) / (x * (1 - x)) ** 2,
                             "d/dx (x - p)/(x(1-x)) = ((x - p)^2 + p(1 - p))/(x(1-x))^2 > 0"),
                  prove_sign(slope, -1, "the left side falls strictly: a unique root",
                             {x: (0.001, 0.999), p: (0.01, 0.99), beta: (0.01, 5.0), c: (0.0, 5.0),
                              Delta: (0.1, 2.0)}))
        return Derivation("binary question, reverse penalty, entropy bonus", cond, (), sp.Symbol("x_entropy"),
                          "the unique root (closed_form.binary_entropy)", "Delta = P(a) - P(b) given "
                          "(1 for G = 2 scale with deterministic rewards; the reward gap for RLOO)", checks)
    ell = sp.symbols("ell", real=True)                      # ell = logit(x): the condition is linear in it
    cond = sp.Eq(Delta - beta * (logit - sp.log(p / (1 - p))) - c * logit, 0)
    roots = tuple(1 / (1 + sp.exp(-r)) for r in sp.solve(cond.lhs.subs(logit, ell), ell))
    closed = 1 / (1 + sp.exp(-(Delta + beta * sp.log(p / (1 - p))) / (beta + c)))
    checks = (entropy_check, prove_zero(roots[0] - closed, "x = logistic((Delta + beta logit p)/(beta + c))"))
    return Derivation("binary question, direct penalty, entropy bonus", cond, roots, closed,
                      "linear in logit(x): a single root", "Delta = P(a) - P(b) constant in x (G = 2 scale with "
                      "deterministic rewards, or RLOO at any G)", checks)


def family_derivations() -> tuple[Derivation, ...]:
    """The GRPO-family derivations."""
    return derive_filtered_pairwise(), derive_entropy_binary("reverse"), derive_entropy_binary("direct")


@lru_cache(maxsize=1)      # pure and deterministic: derive once per process (about 5 s)
def all_derivations() -> tuple[Derivation, ...]:
    """Every derivation of this module (cached: they take seconds), in the order of docs/derivations.md."""
    return (derive_eq14(), derive_eq15(), derive_pairwise_direct(), derive_large_group_direct(),
            derive_log_pooling(), derive_tree_node("reverse"), derive_tree_node("direct"))


# ------------------------------------------------------------------------------ rendering

def _proof_line(pr: Proof) -> str:
    mark = {"symbolic": "proved symbolically", "numeric": "checked numerically only",
            "failed": "FAILED"}[pr.status]
    return f"- {pr.statement}: **{mark}** ({pr.method})"


@lru_cache(maxsize=1)
def render_markdown() -> str:
    """The text of docs/derivations.md (deterministic).

    Returns
    -------
    str
        Markdown with every derivation, its proofs and the identities; ``grpo-theory derivations``
        writes it, and a test fails when the committed file differs.
    """
    out = ["# Derivations", "",
           "Generated by `grpo-theory derivations` from `grpo_theory/symbolic.py`; do not edit by hand",
           "(a test fails when this file is stale). Each closed form is derived by sympy from its",
           "stationarity condition; *proved symbolically* means sympy decided the identity, *checked",
           "numerically only* means it did not and the identity was evaluated with 50-digit arithmetic.",
           "Notation: x = pi(a), p = pi_ref(a), beta, gamma (confidence margin), G (group size).", ""]
    for d in all_derivations():
        out += [f"## {d.name}", "", f"Assumptions: {d.assumptions}.", "",
                "Stationarity condition:", "", f"$$ {sp.latex(d.condition)} $$", "",
                f"Roots found by sympy: {len(d.roots)}. Kept: {d.why}.", "",
                f"$$ x = {sp.latex(d.solution)} $$", ""]
        out += [_proof_line(c) for c in d.checks]
        out.append("")
    out += ["## Token level on an answer tree (any G, any loss type)", "",
            "Answers are token sequences forming a prefix tree; the policy is a softmax over the children c",
            "of each node v. A token of answer o gets the weight w of the loss type (1/|o| for TRL's grpo,",
            "a constant for dr_grpo and verl's seq-mean-token-sum, B G / T for bnpo/dapo with T the sampled",
            "token count of B groups). With P^w(o) = E[w A_1 | o_1 = o], W(o) = E[w | o_1 = o],",
            "Q(v,c) and W(v,c) their averages under pi over the answers below the edge (v,c), the expected",
            "gradient of the token-level objective in the logit theta_{v,c} at pi_old = pi is", "",
            "$$ \\frac{\\partial J}{\\partial \\theta_{v,c}} = \\pi(v)\\,\\pi(c|v)\\Big[g_v(c) - "
            "\\sum_{c'} \\pi(c'|v)\\, g_v(c')\\Big], $$", "",
            "$$ g_v(c) = Q(v,c) - \\beta\\, W(v,c)\\, d_v(c), $$", "",
            "with d_v(c) = 1 - pi_ref(c|v)/pi(c|v) (k3 per token, the reverse penalty) or",
            "d_v(c) = log(pi(c|v)/pi_ref(c|v)) (ratio times k3 per token, the direct penalty; no +1, which",
            "would cancel only for equal W). A policy is stationary when g_v(c) is the same for every child",
            "of every reached node. This is checked in `tests/test_tree.py` against a brute-force",
            "enumeration of every batch differentiated by torch autograd. For single-token answers it is",
            "the sequence-level condition for every loss type. At the root with the reverse penalty the",
            "loss types coincide: E_pi P = 0 and sum_c pi(c|v) d_v(c) = 0 there. The two derivations",
            "above give each node's closed form at G = 2.", ""]
    out += ["## Identities", ""] + [_proof_line(p_) for p_ in all_identities()] + [""]
    out += ["## Finite G, binary question", "",
            "The stationarity condition as an explicit function of x, p, beta, here for G = 3 "
            "(`binary_finite_group_condition(3)`), reverse penalty:", "",
            f"$$ {sp.latex(sp.simplify(binary_finite_group_condition(3)))} = 0 $$", ""]
    return "\n".join(out)


def write_derivations_markdown(path="docs/derivations.md") -> str:
    """Write :func:`render_markdown`'s page to ``path``.

    Parameters
    ----------
    path : str or pathlib.Path, default "docs/derivations.md"
        The file written (replaced).

    Returns
    -------
    str
        The text written.
    """
    text = render_markdown()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return text
