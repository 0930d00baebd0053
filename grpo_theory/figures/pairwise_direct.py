"""Figure 3: G = 2 with the direct KL penalty (log pooling with the pairwise preference)."""

from __future__ import annotations

from .. import closed_form, plotting
from . import pairwise_reverse
from ._data import BETAS_TEXT, PAPER_BETAS, curves
from ._spec import FigureSpec


def data():
    """G = 2, direct penalty, one curve per beta/gamma."""
    return curves(lambda p, b: closed_form.binary_pairwise_direct(p, b), PAPER_BETAS, "beta_over_gamma")


def tables(_inputs):
    return {"data": data()}


def render(t):
    fig = plotting.binary_curves(t["data"], "beta_over_gamma", r"$\beta/\gamma$", "$G$ = 2, direct KL penalty",
                                 jump_at_zero=False, overlay=overlay(), overlay_label=OVERLAY_LABEL,
                                 log_inset=True)
    # the shared helper draws the overlay grey; here each is recoloured to its beta/gamma's colour, so that
    # each dashed curve pairs with the solid one of the same value (kept out of plotting.py, whose edits
    # would redraw every figure)
    values = list(dict.fromkeys(t["data"].beta_over_gamma))
    colour = dict(zip(values, plotting.beta_colors(values)))
    dashed = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--" and len(ln.get_xdata())]
    for ln, b in zip(dashed, [v for v in values if v in OVERLAY_BETAS]):
        ln.set_color(colour[b])
        ln.set_linewidth(0.9)
    # (b)'s title in the axis's notation, 10^-9 (the shared helper writes "1e-09")
    low = float(t["data"].pi_ref_a.min())
    plotting.panel(fig.axes[1], "b", r"the same, down to $\pi_{\mathrm{ref}}(a)$ = " + plotting.sci_text(low))
    return fig


#: Figure 1's curves drawn for contrast, dashed in the same colour: two values, not all seven, so that
#: every curve on the panel can be told apart
OVERLAY_BETAS = (0.2, 0.5)
_PAIRS = " and ".join(f"{b:g}" for b in OVERLAY_BETAS)
OVERLAY_LABEL = r"dashed: reverse penalty (Fig. 1), $\beta/\gamma$ = " + _PAIRS


def overlay():
    d = pairwise_reverse.data()
    return d[d.beta_over_gamma.isin(OVERLAY_BETAS)]


SPEC = FigureSpec(
    3, "pairwise_direct",
    f"Figure 3. G = 2 with the direct KL penalty KL(pi || pi_ref), beta/gamma in {{{BETAS_TEXT}}}: "
    "logarithmic pooling with the pairwise preference; continuous at pi_ref(a) = 0 (no jump). Dashed, in "
    f"the same colour: Figure 1's reverse-penalty curves for beta/gamma = {_PAIRS}, "
    "which jump at 0 (to 1 - beta/gamma). Right: the same curves on a log pi_ref axis down "
    "to 1e-9: each falls to 0, at a pi_ref that shrinks like exp(-gamma/beta) (beta/gamma = 0.04 only "
    "below 1e-9). Take-away: the jump belongs to the k3 penalty, not to GRPO's advantages.",
    tables, render, __name__,
    uses=("pairwise_reverse",))
