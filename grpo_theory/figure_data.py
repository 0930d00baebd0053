"""The data behind every figure, as pandas DataFrames (pure computation, no I/O).

Parameter choices (the note prints none) are module constants so that captions,
docs and tests quote the same values.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pandas as pd

from . import closed_form
from ._numerics import optimize
from .dynamics import flow, map_cycles, map_fixed_points, proximal_map
from .integrations.openrlhf import read_openrlhf_config
from .integrations.trl import read_trl_config
from .integrations.verl import read_verl_config
from .problem import InvalidInputError, Objective, Question
from .solvers import ClassProblem, log_pooling, nash_equilibrium, stationary_points, stationary_policy

#: beta/gamma (Figures 1, 3) and beta (Figure 2): from the note's practical 0.04 to 5.
PAPER_BETAS = (0.04, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
#: Group sizes of Figure 4 and the fixed beta used there.
FINITE_GROUP_SIZES = (2, 3, 4, 8, 16, 64, math.inf)
FINITE_G_BETA = 0.5
#: Figure 5: group sizes, reference probabilities, beta.
CONVERGENCE_GROUP_SIZES = tuple(2**k for k in range(1, 13))
CONVERGENCE_PI_REF = (0.1, 0.3, 0.6)
#: Figure 6: the binary question and the beta range.
VARIANTS_PI_REF = 0.3
VARIANTS_BETAS = tuple(np.logspace(math.log10(0.04), 1, 40))
VARIANTS_GROUP_SIZES = (2, 8, math.inf)
#: Figure 7: the reference probability of panel (a) and the grids of panel (b).
NONUNIQUE_PI_REF = 0.2
#: Figure 8: the three-answer question.
SIMPLEX_REWARDS = (1.0, 0.5, 0.0)
SIMPLEX_PI_REF = (0.2, 0.3, 0.5)
SIMPLEX_BETAS = tuple(np.unique(np.append(np.logspace(math.log10(20.0), math.log10(0.02), 60), 1.0))[::-1])


def pi_ref_grid(n: int = 400) -> np.ndarray:
    """(0, 1], dense near 0 where the reverse-penalty curves jump."""
    # down to 1e-9: the direct-penalty curves of small beta/gamma rise from 0 only below pi_ref ~ e^{-gamma/beta}
    return np.unique(np.concatenate([np.geomspace(1e-9, 1e-4, n // 8), np.geomspace(1e-4, 0.05, n // 4),
                                     np.linspace(0.05, 1.0, n)]))


def _curves(fn, params, name: str) -> pd.DataFrame:
    p = pi_ref_grid()
    x = fn(p[None, :], np.asarray(params)[:, None])          # broadcast (params, p)
    return pd.DataFrame({name: np.repeat(params, p.size), "pi_ref_a": np.tile(p, len(params)),
                         "pi_a": x.ravel()})


def figure1_data() -> pd.DataFrame:
    """Eq. 14 (G = 2, reverse penalty), one curve per beta/gamma."""
    return _curves(lambda p, b: closed_form.binary_pairwise(p, b), PAPER_BETAS, "beta_over_gamma")


def figure2_data() -> pd.DataFrame:
    """Eq. 15 (large G, reverse penalty), one curve per beta."""
    return _curves(closed_form.binary_large_group, PAPER_BETAS, "beta")


def figure3_data() -> pd.DataFrame:
    """G = 2, direct penalty, one curve per beta/gamma."""
    return _curves(lambda p, b: closed_form.binary_pairwise_direct(p, b), PAPER_BETAS, "beta_over_gamma")


def _binary(p: float) -> Question:
    return Question([p, 1.0 - p], rewards=[1.0, 0.0])


def figure4_data(n: int = 60) -> pd.DataFrame:
    """Exact finite-G stationary policies (reverse/scale) at beta = FINITE_G_BETA."""
    p_grid = np.unique(np.concatenate([np.geomspace(1e-3, 0.05, 10), np.linspace(0.05, 0.995, n)]))
    rows = []
    for G in FINITE_GROUP_SIZES:
        obj = Objective(beta=FINITE_G_BETA, group_size=G)
        for p in p_grid:
            rows.append(dict(group_size=G, pi_ref_a=p, pi_a=stationary_policy(_binary(p), obj).pi[0]))
    return pd.DataFrame(rows)


def figure5_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """|pi_G - pi_inf| against G (reverse/scale), with the fitted log-log slope per pi_ref."""
    rows, fits = [], []
    for p in CONVERGENCE_PI_REF:
        limit = float(closed_form.binary_large_group(p, FINITE_G_BETA))
        errs = [abs(stationary_policy(_binary(p), Objective(beta=FINITE_G_BETA, group_size=G)).pi[0] - limit)
                for G in CONVERGENCE_GROUP_SIZES]
        rows += [dict(pi_ref_a=p, group_size=G, abs_error=e) for G, e in zip(CONVERGENCE_GROUP_SIZES, errs)]
        g = np.array(CONVERGENCE_GROUP_SIZES, float)
        sel = g >= 64          # the asymptotic range; small G wiggles
        slope, intercept = np.polyfit(np.log(g[sel]), np.log(np.array(errs)[sel]), 1)
        fits.append(dict(pi_ref_a=p, slope=slope, intercept=intercept))
    return pd.DataFrame(rows), pd.DataFrame(fits)


def figure6_data() -> pd.DataFrame:
    """Every variant, RLHF and NLHF on one binary question (pi_ref(a) = 0.3) as beta varies."""
    q = _binary(VARIANTS_PI_REF)
    rows = []
    for beta in VARIANTS_BETAS:
        for G in VARIANTS_GROUP_SIZES:
            for pen in ("reverse", "direct"):
                for norm in ("scale", "shift"):
                    sol = stationary_policy(q, Objective(beta=beta, group_size=G, penalty=pen, normalization=norm))
                    rows.append(dict(beta=beta, method=f"GRPO {pen}/{norm}", group_size=G,
                                     pi_a=sol.pi[0], boundary=sol.boundary))
        rows.append(dict(beta=beta, method="RLHF", group_size=np.nan,
                         pi_a=log_pooling(q.pi_ref, [1.0, 0.0], beta)[0], boundary=False))
        rows.append(dict(beta=beta, method="NLHF", group_size=np.nan,
                         pi_a=nash_equilibrium(q, beta).pi[0], boundary=False))
    return pd.DataFrame(rows)


def figure7_data(n_beta: int = 160, n_map: int = 160) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Direct penalty, G = inf: (a) stationary points against beta at pi_ref(a) = NONUNIQUE_PI_REF,
    (b) the number of stationary points over (beta, pi_ref) from the sign of h(x*)."""
    q = _binary(NONUNIQUE_PI_REF)
    rows = []
    for beta in np.geomspace(0.2, 20.0, n_beta):
        for pt in stationary_points(q, Objective(beta=beta, group_size=math.inf, penalty="direct")):
            rows.append(dict(beta=beta, pi_a=pt.pi[0], stable=bool(pt.stable), boundary=pt.boundary))
    betas = np.geomspace(0.05, 20.0, n_map)
    ps = np.linspace(0.005, 0.995, n_map)
    B, P = np.meshgrid(betas, ps, indexing="ij")
    h_min = closed_form.large_group_direct_h(closed_form.large_group_direct_turning_point(B), P, B)
    count = np.where(h_min < 0, 3, 1)     # the vertex always; two interior roots when min h < 0
    region = pd.DataFrame(dict(beta=B.ravel(), pi_ref_a=P.ravel(), h_at_turning_point=h_min.ravel(),
                               n_stationary_points=count.ravel()))
    return pd.DataFrame(rows), region


SIMPLEX_METHODS = (("GRPO reverse/scale G=2", Objective(beta=1.0, group_size=2)),
                   ("GRPO reverse/scale G=8", Objective(beta=1.0, group_size=8)),
                   ("GRPO reverse/scale G=inf", Objective(beta=1.0, group_size=math.inf)),
                   ("GRPO direct/scale G=8", Objective(beta=1.0, group_size=8, penalty="direct")))


def figure8_data() -> pd.DataFrame:
    """Path of the stationary policy on the simplex as beta decreases, GRPO against RLHF."""
    return _figure8_rows().copy()


@functools.lru_cache(maxsize=1)
def _figure8_rows() -> pd.DataFrame:     # shared by Figures 8 and 15: solved once per process
    q = Question(SIMPLEX_PI_REF, rewards=SIMPLEX_REWARDS, labels=("a", "b", "c"))
    rows = []
    for beta in SIMPLEX_BETAS:
        for name, template in SIMPLEX_METHODS:
            sol = stationary_policy(q, dataclasses.replace(template, beta=beta))
            rows.append(dict(beta=beta, method=name, pi_a=sol.pi[0], pi_b=sol.pi[1], pi_c=sol.pi[2],
                             residual=sol.residual))
        pi = log_pooling(q.pi_ref, SIMPLEX_REWARDS, beta)
        rows.append(dict(beta=beta, method="RLHF", pi_a=pi[0], pi_b=pi[1], pi_c=pi[2], residual=0.0))
        ne = nash_equilibrium(q, beta)
        rows.append(dict(beta=beta, method="NLHF", pi_a=ne.pi[0], pi_b=ne.pi[1], pi_c=ne.pi[2], residual=ne.residual))
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- dynamics figures

#: Figure 10: reference probability and the two variants of the phase portraits.
PHASE_PI_REF = 0.2
PHASE_VARIANTS = (("reverse/scale, G = 8", Objective(beta=1.0, group_size=8)),
                  ("direct/scale, G = inf", Objective(beta=1.0, group_size=math.inf, penalty="direct")))
#: Figure 11: a three-answer question with two stable points and a saddle.
FLOW_REWARDS = (1.0, 0.9, 0.0)
FLOW_PI_REF = (0.1, 0.1, 0.8)
FLOW_BETA = 2.0
#: Figure 12: the proximal map where it disagrees with the flow.
MAP_PI_REF = 3e-3
MAP_BETA = 0.5


def figure10_data(n_beta: int = 28, n_x: int = 23, n_curve: int = 90) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flow field d pi(a)/dt over (beta, pi(a)) and the stationary points, for two variants."""
    q = _binary(PHASE_PI_REF)
    field, curves = [], []
    # uniform in the logit of pi(a): the figure's axis is logit-scaled, so that the unstable branch
    # within 1e-3 of 1 and the approach to the vertex are visible
    z = np.linspace(math.log(0.03 / 0.97), math.log((1 - 3e-6) / 3e-6), n_x)
    xs = 1.0 / (1.0 + np.exp(-z))
    for name, template in PHASE_VARIANTS:
        for beta in np.geomspace(0.2, 20.0, n_beta):
            cp = ClassProblem(q, dataclasses.replace(template, beta=beta))
            dxdt = (xs * (1 - xs)) ** 2 * 2.0 * cp.drift(z)          # dx/dt = x(1-x) dz/dt
            field += [dict(variant=name, beta=beta, pi_a=x, dpi_dt=v) for x, v in zip(xs, dxdt)]
        for beta in np.geomspace(0.2, 20.0, n_curve):
            for pt in stationary_points(q, dataclasses.replace(template, beta=beta)):
                curves.append(dict(variant=name, beta=beta, pi_a=pt.pi[0], stable=bool(pt.stable),
                                   boundary=pt.boundary))
    return pd.DataFrame(field), pd.DataFrame(curves)


def figure11_data(n_starts: int = 14, t_max: float = 30000.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flow trajectories on the simplex from a spread of starts, and the stationary points."""
    q = Question(FLOW_PI_REF, rewards=FLOW_REWARDS)
    obj = Objective(beta=FLOW_BETA, group_size=math.inf, penalty="direct")
    rng = np.random.default_rng(7)
    # the edge point's basin is thin in c: starts with c ~ 1e-4 reach it, slowly (its eigenvalues scale with c)
    near_edge = [np.array(v) for v in ((0.78, 0.2199, 1e-4), (0.62, 0.3799, 1e-4), (0.9, 0.0999, 1e-4))]
    starts = [np.array(FLOW_PI_REF)] + near_edge + \
        list(0.04 + 0.88 * rng.dirichlet(np.ones(3) * 1.2, n_starts - 1 - len(near_edge)))
    starts = [s / s.sum() for s in starts]
    t = np.concatenate([[0.0], np.geomspace(0.01, t_max, 200)])
    rows = []
    for i, s in enumerate(starts):
        tr = flow(q, obj, s, t, with_points=False)
        rows += [dict(start=i, t=tt, pi_a=p[0], pi_b=p[1], pi_c=p[2]) for tt, p in zip(t, tr.pi)]
    pts = stationary_points(q, obj)
    points = pd.DataFrame([dict(pi_a=p.pi[0], pi_b=p.pi[1], pi_c=p.pi[2], stable=p.stable) for p in pts])
    return pd.DataFrame(rows), points


def figure12_data(n: int = 600, n_iter: int = 40) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The proximal map f and f∘f against the identity, its fixed points and 2-cycle, and orbits."""
    q = _binary(MAP_PI_REF)
    obj = Objective(beta=MAP_BETA, group_size=math.inf, penalty="direct")
    step = proximal_map(q, obj)
    xs = np.geomspace(1e-3, 0.95, n)
    f1 = np.array([step([x, 1 - x])[0] for x in xs])
    f2 = np.array([step([y, 1 - y])[0] for y in f1])
    curve = pd.DataFrame(dict(pi_a=xs, f=f1, f_f=f2))
    marks = [dict(kind="fixed point", pi_a=fp.pi[0], map_stable=fp.stable, flow_stable=fp.flow_stable,
                  spectral_radius=fp.spectral_radius) for fp in map_fixed_points(q, obj)]
    marks += [dict(kind="2-cycle", pi_a=c[0], map_stable=cyc.stable, flow_stable=None,
                   spectral_radius=abs(cyc.multiplier)) for cyc in map_cycles(q, obj) for c in cyc]
    # start 30% above the fixed point: close enough to read the cycle's onset, far enough that the flow's
    # approach is visible (2% drew the flow as a flat line)
    x0 = next(m["pi_a"] for m in marks if m["kind"] == "fixed point" and m["flow_stable"]) * 1.3
    orbit, x = [], x0
    for n_ in range(n_iter + 1):
        orbit.append(dict(n=n_, pi_a=x))
        x = step([x, 1 - x])[0]
    tr = flow(q, obj, [x0, 1 - x0], np.linspace(0, 60, 121), with_points=False)
    orbit_df = pd.DataFrame(orbit).assign(kind="proximal iteration")
    flow_df = pd.DataFrame(dict(n=tr.t, pi_a=tr.pi[:, 0], kind="gradient flow (time)"))
    return curve, pd.DataFrame(marks), pd.concat([orbit_df, flow_df], ignore_index=True)


#: Figure 12(c): where plain gradient steps on the logits stop converging, per variant
STEP_VARIANTS = (("reverse/scale, G = 8", Objective(beta=1.0, group_size=8)), ("direct/scale, G = 8",
                                                                               Objective(beta=1.0, group_size=8,
                                                                                         penalty="direct")))


def critical_step_size(q: Question, obj: Objective, h: float = 1e-5) -> float:
    """The largest step of ``dynamics.grpo_steps`` (exact expectations, one update per batch) under
    which its iteration still converges to the stationary point the flow reaches from pi_ref.

    For a binary question one step moves z = theta_a - theta_b by ``lr F(z)`` with
    ``F(z) = 2 pi_a pi_b (g_a - g_b)``; near the fixed point z* the error is multiplied by
    ``1 + lr F'(z*)``, so the iteration converges iff ``lr < 2 / |F'(z*)|``.
    """
    cp = ClassProblem(q, obj)
    x = float(stationary_policy(q, obj).pi[0])
    if not 1e-12 < x < 1 - 1e-12:
        return float("nan")              # saturated at a vertex: no interior fixed point to linearise
    z = math.log(x) - math.log1p(-x)

    def F(zz):
        xx = 1.0 / (1.0 + math.exp(-zz))
        return 2.0 * xx * (1 - xx) * float(cp.drift(zz))
    slope = (F(z + h) - F(z - h)) / (2 * h)
    return 2.0 / abs(slope) if slope < 0 else float("nan")


def figure12_map(n_beta: int = 21, n_p: int = 19) -> pd.DataFrame:
    """The critical step size over (beta, pi_ref(a)) for each of :data:`STEP_VARIANTS`."""
    rows = []
    for name, template in STEP_VARIANTS:
        for beta in np.geomspace(0.05, 5.0, n_beta):
            obj = dataclasses.replace(template, beta=float(beta))
            for p in np.linspace(0.05, 0.95, n_p):
                rows.append(dict(variant=name, beta=beta, pi_ref_a=p, critical_lr=critical_step_size(_binary(p), obj)))
    return pd.DataFrame(rows)


def trained_points(measured: pd.DataFrame) -> pd.DataFrame:
    """A table of measured points, completed with the columns Figure 9 reads.

    Required: ``group_size, beta, pi_ref_a, measured, measured_se``. Optional: ``penalty``
    (default reverse), ``source`` (default "trained model"), ``predicted`` (default: the flow's
    stationary point from ``pi_ref_a``, computed here), ``residual_se`` (default ``measured_se``;
    study tables give the between-seed error here).
    """
    need = {"group_size", "beta", "pi_ref_a", "measured", "measured_se"}
    missing = sorted(need - set(measured.columns))
    if missing:
        raise InvalidInputError(f"the trained-points table lacks columns {missing}; it needs {sorted(need)}")
    m = measured.copy()
    if "penalty" not in m:
        m["penalty"] = "reverse"
    if "source" not in m:
        m["source"] = "trained model"
    if "predicted" not in m:
        m["predicted"] = [stationary_policy(_binary(p), Objective(beta=float(b), group_size=_group(G),
                                                                  penalty=pen)).pi[0]
                          for p, b, G, pen in zip(m.pi_ref_a, m.beta, m.group_size, m.penalty)]
    if "residual_se" not in m:
        m["residual_se"] = m.measured_se
    m["residual"] = m.measured - m.predicted
    return m


def _group(G):
    return int(G) if np.isfinite(G) else math.inf


def trained_curves(measured: pd.DataFrame, n: int = 120) -> pd.DataFrame:
    """Every stable stationary branch for each (G, beta, penalty) of a table of measured points.

    Rows: ``group_size, beta, penalty, pi_ref_a, pi_a, branch`` with branch 0 the point the flow
    from pi_ref reaches (the prediction) and 1 another stable point where one exists.
    """
    m = trained_points(measured)
    p_grid = np.unique(np.concatenate([np.geomspace(1e-3, 0.05, 12), np.linspace(0.05, 0.995, n)]))
    rows = []
    for (G, beta, pen), _ in m.groupby(["group_size", "beta", "penalty"]):
        obj = Objective(beta=float(beta), group_size=_group(G), penalty=pen)
        for p in p_grid:
            pts = stationary_points(_binary(p), obj)
            reached = float(pts.from_reference.pi[0])
            rows.append(dict(group_size=G, beta=beta, penalty=pen, pi_ref_a=p, pi_a=reached, branch=0))
            rows += [dict(group_size=G, beta=beta, penalty=pen, pi_ref_a=p, pi_a=float(s.pi[0]), branch=1)
                     for s in pts.stable if abs(float(s.pi[0]) - reached) > 1e-6]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- beyond the note: 15, 18

def figure15_data() -> pd.DataFrame:
    """Expected reward against KL(pi || pi_ref) along beta, for Figure 8's question and variants.

    RLHF's log pooling maximises ``E_pi r - beta KL(pi || pi_ref)``, so its curve is the optimal
    frontier: the most reward any policy gets at a given KL. Each GRPO variant's point lies on or below.
    """
    df = figure8_data()
    pi = df[["pi_a", "pi_b", "pi_c"]].to_numpy()
    ref = np.asarray(SIMPLEX_PI_REF)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(pi > 0, pi * np.log(pi / ref), 0.0).sum(axis=1)
    out = pd.DataFrame(dict(beta=df.beta, method=df.method, expected_reward=pi @ np.asarray(SIMPLEX_REWARDS),
                            kl_direct=kl))
    # The frontier's reward at each point's KL: log pooling at the beta that gives that KL (a root in
    # log beta; KL falls monotonically as beta grows), so the deficit is exact, not interpolated.
    rewards = np.asarray(SIMPLEX_REWARDS)

    def kl_at(log_beta: float) -> float:
        p = log_pooling(SIMPLEX_PI_REF, SIMPLEX_REWARDS, math.exp(log_beta))
        return float(np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / ref), 0.0)))

    lo, hi = math.log(1e-3), math.log(1e4)
    k_max, k_min = kl_at(lo), kl_at(hi)

    def frontier(k: float) -> float:
        if k >= k_max:                  # beyond beta = 1e-3 the frontier is the best reward, to 1e-300
            return float(rewards.max())
        if k <= k_min:
            return float(ref @ rewards)
        lb = optimize.brentq(lambda t: kl_at(t) - k, lo, hi, xtol=1e-13)
        return float(log_pooling(SIMPLEX_PI_REF, SIMPLEX_REWARDS, math.exp(lb)) @ rewards)

    out["frontier_reward"] = [frontier(k) for k in out.kl_direct]
    out["reward_deficit"] = out.frontier_reward - out.expected_reward
    return out


#: Figure 18: each framework's defaults at the same beta, on a binary question.
FRAMEWORK_BETAS = (0.04, 0.5)
FRAMEWORK_G = 8


def framework_objectives(beta: float) -> dict:
    """TRL 1.9, TRL 1.16, verl's GRPO recipe and OpenRLHF's group_norm at ``beta`` and G = 8, each through
    its own config reader (every other setting at the framework's default)."""
    trl = {"beta": beta, "max_completion_length": 1}
    return {
        "TRL 1.9 (k3 in the loss)": read_trl_config(trl, trl_version="1.9.0").objective,
        "TRL 1.16 (ratio x k3 in the loss)": read_trl_config(trl, trl_version="1.16.0").objective,
        "verl GRPO recipe (low_var_kl, clamped)": read_verl_config(
            {"algorithm": {"adv_estimator": "grpo"},
             "actor_rollout_ref": {"rollout": {"n": FRAMEWORK_G},
                                   "actor": {"use_kl_loss": True, "kl_loss_coef": beta,
                                             "kl_loss_type": "low_var_kl"}}}).objective,
        "OpenRLHF group_norm (k1 in the advantage, clamped)": read_openrlhf_config(
            {"advantage_estimator": "group_norm", "n_samples_per_prompt": FRAMEWORK_G,
             "init_kl_coef": beta}).objective,
    }


def figure18_data(n: int = 49) -> pd.DataFrame:
    """pi(wrong) at the stationary point against pi_ref(correct), per framework and beta, with RLHF."""
    rows = []
    for beta in FRAMEWORK_BETAS:
        objs = framework_objectives(beta)
        for p in np.linspace(0.02, 0.98, n):
            q = Question([p, 1 - p], rewards=[1.0, 0.0])
            for name, obj in objs.items():
                pt = stationary_policy(q, obj)
                rows.append(dict(beta=beta, pi_ref_correct=p, framework=name, penalty=obj.regime,
                                 pi_correct=pt.pi[0], pi_wrong=pt.pi[1], collapse=bool(pt.boundary)))
            lp = log_pooling(q.pi_ref, [1.0, 0.0], beta)
            rows.append(dict(beta=beta, pi_ref_correct=p, framework="RLHF (log pooling)", penalty="-",
                             pi_correct=lp[0], pi_wrong=lp[1], collapse=False))
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- 17: a noisy verifier

NOISE_LEVELS = (0.0, 0.1, 0.2, 0.3)
NOISE_GROUPS = (2, 8, math.inf)
NOISE_BETA = 0.5
NOISE_PI_REF = 0.2


def noisy_binary(p: float, false_positive: float, false_negative: float) -> Question:
    """A binary question judged by a noisy verifier: the correct answer scores 1 with probability
    1 - FN, the wrong one with probability FP (rewards in {0, 1}, independent across group members)."""
    return Question([p, 1.0 - p], reward_levels=[0.0, 1.0],
                    reward_probs=[[false_negative, 1.0 - false_negative], [1.0 - false_positive, false_positive]])


def figure17_data(n: int = 33, n_beta: int = 17, n_noise: int = 13) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves, map) for a verifier with FP = FN = eps (reverse penalty, scale normalisation).

    curves: the stationary pi(correct) against pi_ref(correct) at beta = 0.5 per G and eps.
    map: pi(correct) at pi_ref(correct) = 0.2 over (beta, eps) per G; its gain over pi_ref says
    where GRPO still learns. With eps = 0 at G = inf the policy does not depend on the reward
    gap; with noise the group std contains the verifier's variance, which shrinks every advantage.
    """
    rows = []
    for G in NOISE_GROUPS:
        obj = Objective(beta=NOISE_BETA, group_size=G)
        for eps in NOISE_LEVELS:
            for p in np.linspace(0.02, 0.98, n):
                rows.append(dict(group_size=G, noise=eps, pi_ref_a=p,
                                 pi_a=float(stationary_policy(noisy_binary(p, eps, eps), obj).pi[0])))
    grid = []
    for G in NOISE_GROUPS:
        for beta in np.geomspace(0.02, 5.0, n_beta):
            obj = Objective(beta=float(beta), group_size=G)
            for eps in np.linspace(0.0, 0.48, n_noise):
                pi = float(stationary_policy(noisy_binary(NOISE_PI_REF, eps, eps), obj).pi[0])
                grid.append(dict(group_size=G, beta=beta, noise=eps, pi_a=pi, gain=pi - NOISE_PI_REF))
    return pd.DataFrame(rows), pd.DataFrame(grid)


# ----------------------------------------------------------------------------- 13: trainer conventions

#: (label, std_ddof, std_eps): the note's normalisation and TRL's (also verl's and OpenRLHF's ddof)
CONVENTIONS = (("note: ddof 0, eps 0", 0, 0.0), ("TRL: ddof 1, eps 1e-4", 1, 1e-4))
CONVENTION_BETA = 0.5


def figure13_data(trl: pd.DataFrame | None = None, ours: pd.DataFrame | None = None,
                   n: int = 49) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves, points): the stationary pi(correct) against pi_ref(correct) under each convention, for
    G = 2 and 8, both penalties, beta = 0.5; and the measured points under TRL's convention from the
    tables given: ``trl`` (``trl_results.csv``: TRL's own GRPOTrainer at G = 8) and ``ours``
    (``validate_seeds.csv``: our trainer's 5-seed runs at G = 2 and 8); no points from a table not given."""
    rows = []
    for G in (2, 8):
        for penalty in ("reverse", "direct"):
            for label, ddof, eps in CONVENTIONS:
                obj = Objective(beta=CONVENTION_BETA, group_size=G, penalty=penalty, std_ddof=ddof, std_eps=eps)
                for p in np.linspace(0.02, 0.98, n):
                    rows.append(dict(group_size=G, penalty=penalty, convention=label, std_ddof=ddof, std_eps=eps,
                                     pi_ref_a=p, pi_a=float(stationary_policy(_binary(p), obj).pi[0])))
    points = []
    if trl is not None:
        t = trl
        points.append(pd.DataFrame(dict(source="TRL GRPOTrainer", group_size=8, penalty=t.penalty,
                                        pi_ref_a=t.pi_ref_correct, measured=t.measured)))
    if ours is not None:
        v = ours
        v = v[v.config.isin(["TRL_std_G2", "TRL_std_G8"]) & (v.prediction == "trainer")]
        points.append(pd.DataFrame(dict(source="our trainer, TRL's convention (5 seeds)", group_size=v.group_size,
                                        # the trainer's penalty=None is its default, reverse
                                        penalty=v.penalty.fillna("reverse"), pi_ref_a=v.pi_ref_a,
                                        measured=v.measured)))
    return pd.DataFrame(rows), (pd.concat(points, ignore_index=True) if points else pd.DataFrame())


# ----------------------------------------------------------------------------- 14: token vs sequence level

def figure14_data(t: pd.DataFrame) -> pd.DataFrame:
    """The token-level tree study's table (``tree_study.csv``, written by ``validate --study tree``): for
    each shape, loss type, seed, question and answer, the trained probability, the token-level
    prediction for that loss type and the sequence-level prediction."""
    return t[["shape", "loss_type", "groups_per_batch", "seed", "question", "answer", "answer_tokens", "rewarded",
              "pi_ref", "measured", "predicted", "predicted_sequence_level"]].rename(
        columns={"predicted": "predicted_token_level"})


def figure16_data(trajectories: pd.DataFrame) -> pd.DataFrame:
    """The measured trajectories (``fig16_trajectories.csv``, written by experiments/fig16_trajectories.py
    from the five-seed study's runs), as given."""
    return trajectories
