"""Random questions and objectives, and an independent check of each result (the fuzz suite).

Every case is drawn from one integer seed, so a failure is reproduced by its seed alone.
``check_case`` solves it with :func:`grpo_theory.stationary_policy` and classifies the outcome:

* ``ok``: converged, and the stationarity residual recomputed on an **independent path** is
  within tolerance: enumeration of every reward tuple for ``G <= 6``; an exact binomial sum
  written out with ``scipy.stats.binom`` for two reward levels at any ``G``; Monte Carlo with
  its standard error for three or more levels at larger ``G``; the defining formula for ``G = inf``;
* ``ok-limit``: a limit point at a vertex (``boundary=True``, direct penalty, ``G = inf``) where the
  independent gradient near the vertex keeps pushing mass onto it;
* ``flagged``: ``converged=False`` with a reason;
* every ``ok`` and ``ok-limit`` is also checked to be where the flow on all output logits from ``pi_ref``
  goes (:func:`fuzz_kl_cases.end_check`: an independent log-time integration to t = 1e8, within 1e-3, or,
  where it is not, on to t = 1e10 and 1e12, within 1e-3 there and closer); ``end`` records it (``same``,
  ``late``, ``robust`` where only the robust integration finishes, or ``unchecked`` where neither does),
  and a different end is a ``FAIL``;
* ``error``: an :class:`~grpo_theory.InvalidInputError` or ``ExactEvaluationTooLarge``;
* ``FAIL``: anything else: another exception, a NaN, ``converged=True`` with a residual above
  tolerance, or an independent residual that disagrees.

Nothing here calls the library's P_G engine for the check itself.
"""

from __future__ import annotations

import itertools
import math
import time
import traceback
from dataclasses import dataclass

import numpy as np

from grpo_theory import (ExactEvaluationTooLarge, InvalidInputError, Objective, Question, monte_carlo_preference,
                         stationary_policy)
from grpo_theory.solvers import RESIDUAL_TOL

from _run_rows import once_per_run

FINITE_SMALL_G = (2, 3, 4, 5, 6)
FINITE_MID_G = (8, 16, 32, 64)
FINITE_LARGE_G = (256, 1000, 4096, 10_000)


@dataclass
class Case:
    seed: int
    question: Question
    objective: Objective


def draw_case(seed: int) -> Case:
    """One random (question, objective): K <= 6 outputs, ties, noisy rewards, every option."""
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 7))
    pi_ref = rng.dirichlet(np.full(K, rng.choice([0.3, 1.0, 3.0])))
    pi_ref = np.maximum(pi_ref, 1e-6)
    pi_ref /= pi_ref.sum()
    noisy = rng.random() < 0.35
    if noisy:
        L = int(rng.integers(2, 4))
        levels = np.sort(rng.choice(np.arange(-3, 4), size=L, replace=False)).astype(float)
        probs = rng.dirichlet(np.ones(L), size=K)
        deterministic_rows = rng.random(K) < 0.3
        probs[deterministic_rows] = np.eye(L)[rng.integers(0, L, deterministic_rows.sum())]
        q = Question(pi_ref, reward_levels=levels, reward_probs=probs)
    else:
        n_values = int(rng.integers(2, 4))                 # few values: ties between outputs are common
        rewards = rng.integers(0, n_values, size=K).astype(float)
        if np.all(rewards == rewards[0]):
            rewards[0] += 1.0
        q = Question(pi_ref, rewards=rewards)
    L = q.reward_levels.size
    pool = list(FINITE_SMALL_G) + list(FINITE_MID_G) + [math.inf]
    if L == 2:
        pool += list(FINITE_LARGE_G)
    G = pool[int(rng.integers(len(pool)))]
    if L >= 3 and not math.isinf(G):
        G = min(G, 16)                                     # keep the enumeration of count vectors small
    obj = Objective(beta=float(np.exp(rng.uniform(np.log(0.02), np.log(20.0)))), group_size=G,
                    penalty=str(rng.choice(["reverse", "direct"])),
                    normalization=str(rng.choice(["scale", "scale", "shift"])),
                    std_ddof=int(rng.integers(0, 2)), std_eps=float(rng.choice([0.0, 1e-4])))
    return Case(seed, q, obj)


# ----------------------------------------------------------------------------- independent P_G

def _advantage_first(r: np.ndarray, obj: Objective) -> np.ndarray:
    """A_1 of each row of rewards ``r`` (N, G), straight from Eq. 2 with the options."""
    centred = r[:, 0] - r.mean(axis=1)
    if obj.normalization == "shift":
        return centred
    tie = np.all(r == r[:, :1], axis=1)
    std = r.std(axis=1, ddof=obj.std_ddof)
    denom = np.sqrt(std**2 + obj.variance_eps) + obj.std_eps
    out = np.where(denom > 0, centred / np.where(denom > 0, denom, 1.0), 0.0)
    return np.where(tie, 0.0, out)


def _levels_by_enumeration(levels, w, obj) -> np.ndarray:
    """E[A_1 | r_1 = v_l] by enumerating all L^(G-1) reward tuples of the others."""
    L, G = levels.size, obj.group_size
    tuples = np.array(list(itertools.product(range(L), repeat=G - 1)), dtype=int).reshape(-1, G - 1)
    weight = np.prod(w[tuples], axis=1) if G > 1 else np.ones(1)
    out = np.zeros(L)
    for lv in range(L):
        r = np.column_stack([np.full(len(tuples), levels[lv]), levels[tuples]])
        out[lv] = weight @ _advantage_first(r, obj)
    return out


def _levels_by_binomial(levels, w, obj) -> np.ndarray:
    """Two levels: sum over k ~ Binomial(G-1, w_1) others on the upper level (scipy.stats)."""
    from scipy.stats import binom

    G = obj.group_size
    k = np.arange(G)
    pmf = binom.pmf(k, G - 1, w[1])
    out = np.zeros(2)
    for lv in range(2):
        n_up = k + (lv == 1)
        n_lo = G - n_up
        mean = (n_up * levels[1] + n_lo * levels[0]) / G
        centred = levels[lv] - mean
        if obj.normalization == "shift":
            out[lv] = pmf @ centred
            continue
        var = (n_up * n_lo) * (levels[1] - levels[0]) ** 2 / G**2 * G / (G - obj.std_ddof)
        denom = np.sqrt(var + obj.variance_eps) + obj.std_eps
        a = np.where((n_up == 0) | (n_lo == 0), 0.0, centred / np.where(denom > 0, denom, 1.0))
        out[lv] = pmf @ a
    return out


def _levels_large_group(levels, w, obj) -> np.ndarray:
    mean = w @ levels
    if obj.normalization == "shift":
        return levels - mean
    sigma = math.sqrt(max(float(w @ (levels - mean) ** 2), 0.0) + obj.variance_eps)
    denom = sigma + obj.std_eps
    return (levels - mean) / denom if denom > 0 else np.zeros_like(levels)


def independent_preference(q: Question, obj: Objective, pi: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """P_G(o | pi) and its standard error (0 for the exact paths), not using the library's engine."""
    levels = q.reward_levels
    w = np.clip(pi @ q.reward_probs, 0.0, 1.0)     # a sum of 1 + 2e-16 is a NaN for scipy's binom
    G = obj.group_size
    if math.isinf(G):
        e = _levels_large_group(levels, w, obj)
    elif obj.normalization == "shift":               # linearity: E[r_1 - mean] = ((G-1)/G)(v_l - E_w r)
        e = (G - 1) / G * (levels - w @ levels)
    elif levels.size == 2:
        e = _levels_by_binomial(levels, w, obj)
    elif levels.size ** (G - 1) <= 20_000:
        e = _levels_by_enumeration(levels, w, obj)
    else:
        est, se = monte_carlo_preference(q, obj, pi, n_groups=20_000, seed=rng)
        return est, se
    return q.reward_probs @ e, np.zeros(q.n_outputs)


def independent_residual(q: Question, obj: Objective, pi: np.ndarray, rng) -> tuple[float, float]:
    """Stationarity residual at ``pi`` from the independent P_G, and the tolerance it must meet."""
    P, se = independent_preference(q, obj, pi, rng)
    beta = obj.beta
    s = q.pi_ref > 0
    if obj.regime == "reverse":
        res = np.abs(pi * (1.0 - (P - pi @ P) / beta) - q.pi_ref)
        tol = pi * (5.0 * (se + np.abs(pi @ se))) / beta
    else:
        with np.errstate(divide="ignore"):
            logits = np.where(s, np.log(np.where(s, q.pi_ref, 1.0)) + P / beta, -np.inf)
        target = np.exp(logits - logits.max())
        target /= target.sum()
        res = np.abs(pi - target)
        tol = pi * np.expm1(np.minimum(2 * 5.0 * se.max() / beta, 50.0))
    exact_tol = 1e-8 * max(1.0, 1.0 / beta)
    worst = int(np.argmax(res - tol))
    return float(res[worst]), float(tol[worst] + exact_tol)


def limit_point_attracts(q: Question, obj: Objective, vertex: np.ndarray, mix: float = 1e-9) -> tuple[bool, bool]:
    """Near a vertex limit point, the independent per-output gradient of the direct objective
    ``g(o) = P(o) - beta (log(pi(o)/pi_ref(o)) + 1)`` is larger on the vertex's outputs than on
    every other output of the support: the logit flow keeps moving mass onto the vertex.

    An absent output with the reward law of a kept one (a class-mate) gains there whenever the
    penalty pulls it back to pi_ref's proportions; the flow can still leave it behind (its own
    speed is proportional to its mass), which only the end check can tell. Such outputs are left
    out of the comparison, and the second value says whether there were any (the end check then
    also tests that they are left behind: :func:`fuzz_kl_cases.left_behind_check`)."""
    pi = (1.0 - mix) * vertex + mix * q.pi_ref
    P, _ = independent_preference(q, obj, pi, np.random.default_rng(0))
    s = q.pi_ref > 0
    g = P[s] - obj.beta * (np.log(pi[s] / q.pi_ref[s]) + 1.0)
    inside = vertex[s] > 0
    law = q.reward_probs[s]
    twin = np.array([not inside[i] and any(np.array_equal(law[i], law[k]) for k in np.flatnonzero(inside))
                     for i in range(law.shape[0])], dtype=bool)
    others = ~inside & ~twin
    attracts = bool(not others.any() or g[inside].min() > g[others].max())
    return attracts, bool(twin.any() and (g[twin] >= g[inside].min()).any())


def twin_answers(q: Question, pi: np.ndarray) -> list[int]:
    """Answers of pi_ref's support absent from ``pi`` with the reward law of an answer ``pi`` keeps."""
    kept = np.flatnonzero(pi > 0)
    return [int(o) for o in np.flatnonzero((pi == 0) & (q.pi_ref > 0))
            if any(np.array_equal(q.reward_probs[o], q.reward_probs[k]) for k in kept)]


def check_case(seed: int, time_limit: float = 60.0, budget: float = 1.0) -> dict:
    """Solve one random case and check it independently; a dict row for the report (``budget`` multiplies the end
    check's budgets: :func:`fuzz_kl_cases.end_check`).

    ``seconds`` and ``time_limit`` are the solve's CPU seconds (``time.process_time``), not wall time: on a
    loaded machine a case that needs 7 s of CPU can take 70 s of wall time, and a verdict must not depend on
    the machine's load. In a pytest run, computed once per run for all the test files that ask for the seed
    (tests/_run_rows.py), at ``budget=1``."""
    if budget == 1.0:
        return once_per_run(f"reliability-{time_limit!r}", seed, lambda s: _check_case(s, time_limit))
    return _check_case(seed, time_limit, budget)


def _check_case(seed: int, time_limit: float, budget: float = 1.0) -> dict:
    case = draw_case(seed)
    q, obj = case.question, case.objective
    row = dict(seed=seed, K=q.n_outputs, L=q.reward_levels.size, noisy=not q.is_deterministic,
               G=obj.group_size, beta=obj.beta, penalty=obj.regime, normalization=obj.normalization,
               ddof=obj.std_ddof, eps=obj.std_eps, outcome="", residual=np.nan, independent=np.nan,
               tolerance=np.nan, seconds=np.nan, end="", detail="")
    t0 = time.process_time()
    try:
        sol = stationary_policy(q, obj)
    except (InvalidInputError, ExactEvaluationTooLarge) as exc:
        row.update(outcome="error", detail=str(exc)[:200], seconds=time.process_time() - t0)
        return row
    except Exception:  # noqa: BLE001 - any other exception is a failure to report
        row.update(outcome="FAIL", detail=traceback.format_exc(limit=3)[-400:], seconds=time.process_time() - t0)
        return row
    row["seconds"] = time.process_time() - t0
    row["residual"] = sol.residual
    twin_gains = False
    if not np.all(np.isfinite(sol.pi)) or abs(sol.pi.sum() - 1.0) > 1e-9 or np.any(sol.pi < 0):
        row.update(outcome="FAIL", detail=f"not a distribution: {sol.pi}")
    elif sol.converged and not sol.boundary and not sol.residual <= RESIDUAL_TOL:
        row.update(outcome="FAIL", detail=f"converged=True with residual {sol.residual:.2e}")
    elif sol.boundary:
        ok, twin_gains = limit_point_attracts(q, obj, sol.pi)
        row.update(outcome="ok-limit" if ok else "FAIL",
                   detail=sol.message[:200] if ok else "boundary point, but the independent gradient "
                   "near the vertex does not push towards it")
    elif not sol.converged:
        row.update(outcome="flagged", detail=sol.message[:200])
    else:
        res, tol = independent_residual(q, obj, sol.pi, np.random.default_rng(seed))
        row.update(independent=res, tolerance=tol,
                   outcome="ok" if res <= tol else "FAIL",
                   detail="" if res <= tol else f"independent residual {res:.2e} above {tol:.2e}")
    if row["outcome"] in ("ok", "ok-limit"):
        from fuzz_kl_cases import ROBUST, end_check

        twins = twin_answers(q, sol.pi) if twin_gains else []
        ok, why = end_check(q, obj, sol.pi, left_behind=twins, budget=budget)
        verdict = ("late" if why.startswith("reached late") else "left-behind" if why.startswith("left behind")
                   else "robust" if why.startswith(ROBUST) else "same")
        row["end"] = "unchecked" if ok is None else (verdict if ok else "WRONG")
        if ok is False:
            row.update(outcome="FAIL", detail=f"not the flow's end: {why}")
    if row["seconds"] > time_limit and row["outcome"] != "FAIL":
        row.update(outcome="FAIL", detail=f"took {row['seconds']:.1f} s (limit {time_limit:g} s)")
    return row
