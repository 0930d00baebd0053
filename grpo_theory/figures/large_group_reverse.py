"""Figure 2: G -> inf, reverse penalty, deterministic rewards, Eq. 15."""

from __future__ import annotations

from .. import closed_form, plotting
from ._data import BETAS_TEXT, PAPER_BETAS, curves
from ._spec import FigureSpec


def data():
    """Eq. 15 (large G, reverse penalty), one curve per beta."""
    return curves(closed_form.binary_large_group, PAPER_BETAS, "beta")


def tables(_inputs):
    return {"data": data()}


def render(t):
    return plotting.binary_curves(t["data"], "beta", r"$\beta$", r"$G\to\infty$, reverse penalty (Eq. 15)")


SPEC = FigureSpec(
    2, "large_group_reverse",
    f"Figure 2. Large-G limit, reverse penalty, deterministic rewards (Eq. 15), beta in {{{BETAS_TEXT}}}; "
    "independent of the reward gap. The jump at pi_ref(a) = 0 (to 1/(1+beta^2)) occurs for every beta.",
    tables, render, __name__)
