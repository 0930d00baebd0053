"""Figure 4: exact stationary policies for finite G (reverse/scale)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import plotting
from ..problem import Objective
from ..solvers import stationary_policies
from ._data import binary
from ._spec import FigureSpec

#: Group sizes of Figure 4 and the fixed beta used there (also Figure 5's).
FINITE_GROUP_SIZES = (2, 3, 4, 8, 16, 64, math.inf)
FINITE_G_BETA = 0.5


def data(n: int = 60) -> pd.DataFrame:
    """Exact finite-G stationary policies (reverse/scale) at beta = FINITE_G_BETA."""
    p_grid = np.unique(np.concatenate([np.geomspace(1e-3, 0.05, 10), np.linspace(0.05, 0.995, n)]))
    cases = [(G, p) for G in FINITE_GROUP_SIZES for p in p_grid]
    # binary questions: solved together (stationary_policies), in the table's row order
    pis = stationary_policies([binary(p) for _, p in cases],
                              [Objective(beta=FINITE_G_BETA, group_size=G) for G, _ in cases])
    return pd.DataFrame([dict(group_size=G, pi_ref_a=p, pi_a=pi[0]) for (G, p), pi in zip(cases, pis)])


def tables(_inputs):
    return {"data": data()}


def render(t):
    return plotting.binary_curves(t["data"], "group_size", "$G$",
                                  rf"Finite $G$, reverse/scale, $\beta$ = {FINITE_G_BETA:g}")


SPEC = FigureSpec(
    4, "finite_group",
    f"Figure 4. Exact stationary policies for finite G in {{2, 3, 4, 8, 16, 64, inf}} "
    f"(reverse penalty, scale normalisation, ddof = 0, beta = {FINITE_G_BETA:g}), from the "
    "O(G) binomial form; G = 2 is Eq. 14 and G = inf is Eq. 15.",
    tables, render, __name__)
