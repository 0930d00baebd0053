"""Hypothesis strategies that generate valid questions, policies and objectives."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from grpo_theory import Objective, Question


@st.composite
def simplex(draw, k: int, min_mass: float = 0.02) -> np.ndarray:
    """An interior point of the (k-1)-simplex with every entry >= about min_mass."""
    raw = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k)))
    v = raw / raw.sum()
    v = (1 - k * min_mass) * v + min_mass
    return v / v.sum()


@st.composite
def reward_law_questions(draw, k_range=(2, 3), l_range=(2, 3), deterministic=None) -> Question:
    k = draw(st.integers(*k_range))
    n_levels = draw(st.integers(*l_range))
    levels = sorted(draw(st.lists(st.integers(-5, 5), min_size=n_levels, max_size=n_levels,
                                  unique=True)))
    pi_ref = draw(simplex(k))
    det = draw(st.booleans()) if deterministic is None else deterministic
    if det:
        rewards = [levels[draw(st.integers(0, n_levels - 1))] for _ in range(k)]
        return Question(pi_ref, rewards=[float(r) for r in rewards])
    probs = np.vstack([draw(simplex(n_levels, 0.0)) for _ in range(k)])
    return Question(pi_ref, reward_levels=[float(v) for v in levels], reward_probs=probs)


def objectives(group_sizes=(2, 3, 4), include_inf=True, ddof=(0, 1), eps=(0.0, 0.1)):
    gs = list(group_sizes) + ([math.inf] if include_inf else [])
    return st.builds(
        Objective,
        beta=st.floats(0.05, 5.0),
        group_size=st.sampled_from(gs),
        penalty=st.sampled_from(["reverse", "direct"]),
        normalization=st.sampled_from(["scale", "shift"]),
        std_ddof=st.sampled_from(list(ddof)),
        std_eps=st.sampled_from(list(eps)),
    )
