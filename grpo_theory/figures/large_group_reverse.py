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


#: What this module draws itself (the curves are plotting.binary_curves'): the inset's curves, data.
LANGUAGE = {"-": "data"}
#: the betas whose curves lie on each other near pi(a) = 1 (within 0.04 of it at pi_ref = 0), told apart in the inset
INSET_BETAS = (0.04, 0.1, 0.2)


def render(t):
    df = t["data"]
    fig = plotting.binary_curves(df, "beta", r"$\beta$", r"$G\to\infty$, reverse penalty (Eq. 15)")
    # the three smallest betas lie on each other along the top: an inset, in the empty corner below the
    # diagonal, draws 1 - pi(a) on a log scale, which separates them
    ax = fig.axes[0]
    ins = ax.inset_axes([0.5, 0.1, 0.46, 0.3])
    for beta, colour in zip(INSET_BETAS, plotting.beta_colors(list(INSET_BETAS))):
        d = df[(df.beta == beta) & (df.pi_a < 1.0)].sort_values("pi_ref_a")
        ins.plot(d.pi_ref_a, 1.0 - d.pi_a, "-", color=colour, lw=1.0)
    ins.set_yscale("log")
    ins.set_xlim(0, 1)
    ins.set_ylim(1e-5, 0.2)
    ins.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
    ins.tick_params(labelsize=7, length=2, pad=1)
    ins.set_title(r"$1-\pi_\theta(a)$, $\beta \leq$ " + f"{max(INSET_BETAS):g}", fontsize=7, pad=2)
    return fig


SPEC = FigureSpec(
    2, "large_group_reverse",
    f"Figure 2. Large-G limit, reverse penalty, deterministic rewards (Eq. 15), beta in {{{BETAS_TEXT}}}; "
    "independent of the reward gap. The jump at pi_ref(a) = 0 (to 1/(1+beta^2)) occurs for every beta. Inset: "
    "1 - pi(a) on a log scale for beta <= 0.2, whose curves lie on each other near 1.",
    tables, render, __name__)
