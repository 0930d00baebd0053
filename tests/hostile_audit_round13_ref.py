"""Independent reference of the thirteenth hostile audit: no ``grpo_theory`` import.

Written from SPEC sections 1-4 and docs/predict.md; the flows, Euler steps and KKT residuals come from
:mod:`hostile_audit_round12_ref` / :mod:`hostile_audit_round11_ref` (also free of ``grpo_theory``). New here:

* :func:`eq14_tail` -- ``1 - x`` of Eq. 14 (G = 2, reverse penalty, scale normalisation) written without the
  cancellation of ``1 - x``: ``1 - x = 2 b (1 - p) / (1 + b + sqrt((1 - b)^2 + 4 b p))``, exact algebra of
  ``x = (1 - b + sqrt((1 - b)^2 + 4 b p)) / 2``; it stays accurate for ``b`` down to the subnormals;
* :func:`direct_g2_tail` -- ``1 - x`` of the G = 2 direct form ``x = e p / (e p + (1 - p)/e)``, ``e = exp(1/(2 b))``:
  ``1 - x = (1 - p) / (e^2 p + 1 - p)``, computed in log space (0 where ``exp(-1/b)`` underflows);
* :func:`rlhf_limit` -- the ``beta -> 0`` limit of the RLHF optimum ``pi ∝ pi_ref exp(r / beta)``: ``pi_ref``
  renormalised on the answers of the largest reward;
* :func:`pass_at_k`, :func:`unbiased_pass_at_k` -- ``1 - (1 - x)^k`` and ``1 - C(n - c, k)/C(n, k)``;
* :func:`jeffreys` -- the Jeffreys interval: the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of
  ``Beta(c + 1/2, n - c + 1/2)`` (scipy's ``beta.ppf``; scipy is not the package under test).
"""

from __future__ import annotations

import math


def eq14_tail(p: float, b: float) -> float:
    """``1 - x`` of Eq. 14 without cancellation (module doc)."""
    s = math.sqrt((1 - b) ** 2 + 4 * b * p)
    return 2 * b * (1 - p) / (1 + b + s)


def direct_g2_tail(p: float, b: float) -> float:
    """``1 - x`` of the G = 2 direct form (module doc), 0 where it underflows."""
    # 1 - x = (1 - p) / (e^2 p + 1 - p) = 1 / (1 + p/(1 - p) e^{1/b})
    lg = math.log(p) - math.log1p(-p) + 1.0 / b
    if lg > 745:
        return 0.0
    return 1.0 / (1.0 + math.exp(lg))


def rlhf_limit(pi_ref, rewards) -> list:
    top = max(rewards)
    mass = math.fsum(p for p, r in zip(pi_ref, rewards) if r == top)
    return [p / mass if r == top else 0.0 for p, r in zip(pi_ref, rewards)]


def pass_at_k(x: float, k: int) -> float:
    return 1.0 - (1.0 - x) ** k


def unbiased_pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def jeffreys(c: int, n: int, level: float) -> tuple:
    from scipy.stats import beta as B

    a = (1 - level) / 2
    return float(B.ppf(a, c + 0.5, n - c + 0.5)), float(B.ppf(1 - a, c + 0.5, n - c + 0.5))
