"""Figure 1: G = 2, GRPO's reverse (k3) penalty, Eq. 14."""

from __future__ import annotations

from .. import closed_form, plotting
from ._data import BETAS_TEXT, PAPER_BETAS, curves
from ._spec import FigureSpec


def data():
    """Eq. 14 (G = 2, reverse penalty), one curve per beta/gamma."""
    return curves(lambda p, b: closed_form.binary_pairwise(p, b), PAPER_BETAS, "beta_over_gamma")


def tables(_inputs):
    return {"data": data()}


def render(t):
    return plotting.binary_curves(t["data"], "beta_over_gamma", r"$\beta/\gamma$",
                                  "$G$ = 2, reverse penalty (Eq. 14)")


SPEC = FigureSpec(
    1, "pairwise_reverse",
    f"Figure 1. Stationary probability of the preferred answer a against its reference probability, "
    f"G = 2, GRPO's reverse (k3) penalty (Eq. 14), beta/gamma in {{{BETAS_TEXT}}}. Dotted: pi = pi_ref. "
    "At pi_ref(a) = 0 the policy is 0 (filled dot), but for beta < gamma the curve jumps to "
    "1 - beta/gamma just to the right (open circles).",
    tables, render, __name__)
