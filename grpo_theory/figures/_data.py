"""Data helpers shared by several figure modules (pure computation, no I/O)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..problem import Question

#: beta/gamma (Figures 1, 3) and beta (Figure 2): from the note's practical 0.04 to 5.
PAPER_BETAS = (0.04, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
BETAS_TEXT = ", ".join(f"{b:g}" for b in PAPER_BETAS)


def pi_ref_grid(n: int = 400) -> np.ndarray:
    """(0, 1], dense near 0 where the reverse-penalty curves jump."""
    # down to 1e-9: the direct-penalty curves of small beta/gamma rise from 0 only below pi_ref ~ e^{-gamma/beta}
    return np.unique(np.concatenate([np.geomspace(1e-9, 1e-4, n // 8), np.geomspace(1e-4, 0.05, n // 4),
                                     np.linspace(0.05, 1.0, n)]))


def curves(fn, params, name: str) -> pd.DataFrame:
    """``fn(pi_ref, param)`` on :func:`pi_ref_grid`, one curve per parameter value (long format)."""
    p = pi_ref_grid()
    x = fn(p[None, :], np.asarray(params)[:, None])          # broadcast (params, p)
    return pd.DataFrame({name: np.repeat(params, p.size), "pi_ref_a": np.tile(p, len(params)),
                         "pi_a": x.ravel()})


def binary(p: float) -> Question:
    """The binary question (a rewarded 1, b rewarded 0) with pi_ref(a) = p."""
    return Question([p, 1.0 - p], rewards=[1.0, 0.0])


def group(G):
    """A group size read from a table (float, possibly inf) as the solver wants it."""
    return int(G) if np.isfinite(G) else math.inf
