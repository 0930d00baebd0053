"""The seed-to-seed floor: how close any predictor of a training run can get to its per-prompt P(correct).

    python experiments/predict_seed_floor.py        # a few CPU-seconds; reads committed docs/results data only

The same configuration trained with different seeds ends at different per-prompt P(correct). A prediction made
from the configuration and the base model alone does not know the seed's training randomness, so it cannot beat
the spread across seeds. For every run configuration and measured point, over its seeds ``s = 1..S`` on the
same prompts ``j``, with ``y_sj`` the scored value (SmolLM2: the measured fraction ``k/m`` of 200 or 1,600
samples, as the validation scores it; small GPT: the exact P(correct)):

* ``oracle_in``: the in-sample oracle, ``median_s y_sj`` for every prompt, scored against each seed. For every
  prompt the median minimises ``sum_s |y_sj - c|``, so the seed-averaged MAE of ANY predictor that gives the
  same prediction for every seed (any function of the configuration and the base model) is at least the
  seed-averaged ``oracle_in``: an exact lower bound on these data.
* ``oracle_loo``: the leave-one-seed-out oracle, the median of the other ``S - 1`` seeds (an upper estimate:
  it carries the other seeds' spread, and for SmolLM2 their sampling noise).
* ``oracle_loo_shift``: ``oracle_loo`` plus one logit shift fitted (binomial likelihood, ``fit_shift``) to the
  scored seed's counts on one half of the prompts and scored on the other half (then swapped; the validation's
  halves): the oracle with the one calibration parameter the validation's models get.
* ``oracle_gauss`` (SmolLM2): the MAE against the measurement of a predictor that knows every prompt's seed
  mean exactly, under a normal model of the seed spread with one variance for all prompts: ``sigma^2 =
  mean_j (var_s(y_sj) - mean_s q(1 - q)/m)`` (unbiased, clipped at 0; ``q = (k + 1/2)/(m + 1)``), and
  ``E|Bin(m, q)/m - q + N(0, sigma^2)|`` summed exactly over the binomial; ``seed_mad_gauss = sqrt(2/pi)
  sigma`` is the same against the exact P(correct) (the seed part alone, sampling removed). Where the spread
  differs between prompts the one variance overstates both (by Jensen).

Every oracle is scored like the validation's models: ``excess = MAE - floor`` (SmolLM2: the validation's floor,
the measurement's binomial noise plus ``p_ref``'s, recomputed per prompt; small GPT: 0) against the target
``excess <= 0.7 x`` the better baseline's (the refitted shift or the tabular flow, their held-out MAE at that
run and point). ``ratio_*`` = the oracle's excess / the better baseline's. Pooled over seeds (``scope =
pooled``): the ratio of summed excesses with a 95% bootstrap over prompts and scored seeds (2,000 resamples;
the oracle's predictions held fixed) and ``no_deterministic``: True where the seed-averaged ``oracle_in``
already exceeds the seed-averaged target, so that no prediction the same for every seed meets the target in
all seeds at that point (empty where the better baseline is at or below the floor in a seed: no excess can
be 0.7x of a negative one there).

The one way past the deterministic floor is the scored seed's own measured half: if a seed's deviations from
the cross-seed median are shared across prompts (a seed that trains faster lifts every prompt), a parameter
fitted on the measured half carries them to the other half. ``predict_seed_floor_halves.csv`` measures it:
per run and point the mean logit deviation ``D = logit y_sj - logit oracle_loo_sj`` over each half; the
correlation of half A's with half B's across runs x points, the slope of B on A, and the share of the
deviation variance the halves share (``cov(D_A, D_B)`` over the mean per-prompt ``D^2``, sampling noise
included), per study and per pool or task, with 95% bootstrap intervals over runs (clusters of their points);
and per prompt, the correlation of its deviation ``D_j`` with what the other half says about it: the other
half's mean deviation (one shift: ``prompt_corr_shift``) and its mean weighted by the base model's measured
kernel, ``sum_i w_ji D_i / sum_i |w_ji|`` with ``w_ji = K_ji / sqrt(K_ii K_jj)`` (``prompt_corr_kernel``;
SmolLM2: the ``first_logit`` kernel of ``free_generation_kernel.csv``; small GPT: the task's reference's, step 0
of ``small_gpt_trajectory_kernels.csv``).

Data: ``free_generation.csv``, ``free_generation_greetings.csv`` with ``predict_validation.csv`` and
``predict_validation_prompts.csv`` (SmolLM2: 3 seeds, same prompts and ``p_ref``; the final point is each
seed's last step, 150-275); ``small_gpt_seed_runs.csv`` and ``small_gpt_seed_runs_predictions.csv`` (small GPT:
2 tasks x 5 training seeds, ``experiments/small_gpt_seed_runs.py``; ``small_gpt_trajectories.csv`` cannot
serve: there every seed is another task). Writes ``docs/results/predict_seed_floor.csv`` and
``docs/results/predict_seed_floor_halves.csv``. Deterministic.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from scipy.stats import binom, norm

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "docs" / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))
POOLS = {"main": "free_generation.csv", "greetings": "free_generation_greetings.csv"}
MODELS = ("kernel", "coupled", "tabular", "shift")
TARGET = 0.7
N_BOOT = 2000


# ----------------------------------------------------------------------------------------------- estimators
def oracle_in(y: np.ndarray) -> np.ndarray:
    """``(S, N)`` in-sample oracle: every seed gets the per-prompt median over all seeds."""
    return np.broadcast_to(np.median(y, axis=0), y.shape)


def oracle_loo(y: np.ndarray) -> np.ndarray:
    """``(S, N)`` leave-one-seed-out oracle: seed ``s`` gets the per-prompt median of the other seeds."""
    S = y.shape[0]
    return np.stack([np.median(np.delete(y, s, axis=0), axis=0) for s in range(S)])


def clip_p(p: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``p`` kept within ``[1/(2m), 1 - 1/(2m)]`` (a finite logit for a measured 0 or 1)."""
    return np.clip(p, 0.5 / m, 1 - 0.5 / m)


def shifted(pred: np.ndarray, k: np.ndarray, m: np.ndarray, half: np.ndarray) -> np.ndarray:
    """``(S, N)``: each seed's ``pred`` with one logit shift fitted to that seed's counts on one half and applied
    to the other half (then the halves swap)."""
    from grpo_theory.predict.calibrate import fit_shift

    z = logit(clip_p(pred, m))
    out = np.empty(pred.shape)
    for s in range(pred.shape[0]):
        for h in np.unique(half):
            test, train = half == h, half != h
            out[s, test] = expit(z[s, test] + fit_shift(z[s, train], k[s, train], m[s, train]))
    return out


def abs_binomial_plus_normal(q: np.ndarray, m: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``E|Bin(m, q)/m - q + e|``, ``e ~ N(0, sd^2)``, per entry (exact over the binomial; ``sd = 0`` allowed)."""
    out = np.empty(np.shape(q))
    for idx in np.ndindex(out.shape):
        mm = int(m[idx])
        kk = np.arange(mm + 1)
        a = kk / mm - q[idx]
        w = binom.pmf(kk, mm, q[idx])
        s = float(sd[idx])
        if s > 0:
            e = s * np.sqrt(2 / np.pi) * np.exp(-a * a / (2 * s * s)) + a * (2 * norm.cdf(a / s) - 1)
        else:
            e = np.abs(a)
        out[idx] = w @ e
    return out


def seed_variance(y: np.ndarray, k: np.ndarray, m: np.ndarray) -> float:
    """The seed-to-seed variance of the true P(correct), pooled over prompts, from ``S`` measured fractions a
    prompt: the mean over prompts of the sample variance (``ddof = 1``) less the mean binomial variance
    ``q(1 - q)/m`` (unbiased under the normal model), clipped at 0 after pooling."""
    q = (k + 0.5) / (m + 1.0)
    return max(0.0, float(np.mean(np.var(y, axis=0, ddof=1) - np.mean(q * (1 - q) / m, axis=0))))


def pooled_ratio(err: np.ndarray, base: dict, floor: np.ndarray, rng, n_boot: int = N_BOOT) -> tuple:
    """Summed excess of ``err`` over summed excess of the better baseline (per seed), pooled over seeds; with a
    bootstrap over prompts and seeds. All arrays ``(S, N)`` absolute errors (``floor`` per prompt)."""
    S, N = err.shape

    def ratio(si, pj):
        sub = lambda a: a[si[..., :, None], pj[..., None, :]].mean(axis=-1)   # noqa: E731
        f = sub(floor)
        better = np.minimum(*[sub(b) for b in base.values()])
        return (sub(err) - f).sum(axis=-1) / (better - f).sum(axis=-1)

    point = float(ratio(np.arange(S), np.arange(N)))
    b = ratio(rng.integers(0, S, size=(n_boot, S)), rng.integers(0, N, size=(n_boot, N)))
    b = b[np.isfinite(b)]
    return point, float(np.quantile(b, 0.025)), float(np.quantile(b, 0.975))


def half_deviations(y: np.ndarray, pred: np.ndarray, m: np.ndarray, half: np.ndarray) -> np.ndarray:
    """``(S, 2)``: per seed, the mean logit deviation of ``y`` from ``pred`` over half A and over half B."""
    d = logit(clip_p(y, m)) - logit(clip_p(pred, m))
    return np.stack([d[:, half == h].mean(axis=1) for h in ("A", "B")], axis=1)


def transfer_predictors(d: np.ndarray, half: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(S, N)`` twice: for every prompt, what the other half's deviations ``d`` say about it: their mean (one
    shift) and their mean weighted by the normalised kernel ``K_ji / sqrt(K_ii K_jj)`` (``sum w d / sum |w|``)."""
    dg = np.sqrt(np.diag(K))
    W = K / np.outer(dg, dg)
    shift, kern = np.empty(d.shape), np.empty(d.shape)
    for h in np.unique(half):
        test, train = np.flatnonzero(half == h), np.flatnonzero(half != h)
        shift[:, test] = d[:, train].mean(axis=1, keepdims=True)
        w = W[np.ix_(test, train)]
        kern[:, test] = d[:, train] @ w.T / np.abs(w).sum(axis=1)
    return shift, kern


def prompt_stats(dev: pd.DataFrame, rng, n_boot: int = N_BOOT) -> dict:
    """Correlation over prompts, runs and points of a prompt's deviation ``dev`` with the two transfer predictors
    (``pred_shift``, ``pred_kernel``), with a 95% bootstrap over the ``cluster`` column."""
    x = dev[["dev", "pred_shift", "pred_kernel"]].to_numpy(float)
    members = [np.flatnonzero(dev.cluster.to_numpy() == c) for c in dev.cluster.unique()]

    def stats(i):
        c = np.corrcoef(x[i].T)
        return np.array([c[0, 1], c[0, 2]])

    point = stats(np.arange(len(x)))
    boot = np.array([stats(np.concatenate([members[j] for j in rng.integers(0, len(members), len(members))]))
                     for _ in range(n_boot)])
    lo, hi = np.nanquantile(boot, 0.025, axis=0), np.nanquantile(boot, 0.975, axis=0)
    out = {}
    for i, name in enumerate(("prompt_corr_shift", "prompt_corr_kernel")):
        out.update({name: point[i], f"{name}_lo": lo[i], f"{name}_hi": hi[i]})
    return out


def halves_stats(dev: pd.DataFrame, rng, n_boot: int = N_BOOT) -> dict:
    """Correlation of the halves' mean deviations, slope of B on A and the shared share of the per-prompt
    deviation variance, with a 95% bootstrap over the ``cluster`` column."""
    a, b, v = (dev[c].to_numpy(float) for c in ("dev_a", "dev_b", "dev_var"))
    members = [np.flatnonzero(dev.cluster.to_numpy() == c) for c in dev.cluster.unique()]

    def stats(i):
        c = np.cov(a[i], b[i])
        return np.array([c[0, 1] / np.sqrt(c[0, 0] * c[1, 1]), c[0, 1] / c[0, 0], c[0, 1] / v[i].mean()])

    point = stats(np.arange(a.size))
    boot = np.array([stats(np.concatenate([members[j] for j in rng.integers(0, len(members), len(members))]))
                     for _ in range(n_boot)])
    lo, hi = np.nanquantile(boot, 0.025, axis=0), np.nanquantile(boot, 0.975, axis=0)
    out = {}
    for i, name in enumerate(("corr", "slope", "shared_share")):
        out.update({name: point[i], f"{name}_lo": lo[i], f"{name}_hi": hi[i]})
    return out


# ----------------------------------------------------------------------------------------------- data
def smollm2_groups():
    """Per pool, beta and point: the (S, N) arrays of one configuration's seeds."""
    from predict_validation import floors, load_kernels

    kernels = load_kernels()
    table = pd.read_csv(RES / "predict_validation.csv")
    prompts = pd.read_csv(RES / "predict_validation_prompts.csv")
    for pool, fname in POOLS.items():
        d = pd.read_csv(RES / fname)
        for beta, cfg in d.groupby("beta"):
            seeds = np.sort(cfg.seed.unique())
            base = cfg[(cfg.kind == "final") & (cfg.seed == seeds[0])].sort_values("prompt")
            half = base.half.to_numpy(str)
            p_ref, n_ref = base.p_ref.to_numpy(float), base.p_ref_n.to_numpy(float)
            for point in ("10", "25", "50", "100", "final"):
                sel = cfg[cfg.kind == "final"] if point == "final" else cfg[(cfg.kind == "intermediate")
                                                                             & (cfg.step == int(point))]
                rows = [sel[sel.seed == s].sort_values("prompt") for s in seeds]
                y = np.stack([r.measured.to_numpy(float) for r in rows])
                m = np.stack([r.measured_n.to_numpy(float) for r in rows])
                k = np.rint(y * m)
                steps = [int(r.step.iloc[0]) for r in rows]
                floor = np.array([[floors(k[s, j:j + 1], m[s, j:j + 1], p_ref[j:j + 1], n_ref[j:j + 1])[1]
                                   for j in range(y.shape[1])] for s in range(len(seeds))])
                models = {}
                for name in MODELS:
                    pp = prompts[(prompts.pool == pool) & (prompts.beta == beta) & (prompts.model == name)]
                    models[name] = np.stack([pp[(pp.seed == s) & (pp.step == st)].sort_values("prompt")
                                             .predicted.to_numpy(float) for s, st in zip(seeds, steps)])
                vt = table[(table.pool == pool) & (table.beta == beta) & (table.model == "shift")]
                committed_floor = [float(vt[(vt.seed == s) & (vt.step == st)].floor.iloc[0])
                                   for s, st in zip(seeds, steps)]
                yield dict(study="smollm2", pool=pool, beta=float(beta), point=point, seeds=seeds, steps=steps,
                           y=y, k=k, m=m, half=half, floor=floor, models=models, committed_floor=committed_floor,
                           kernel=kernels[(pool, "first_logit")])


def small_gpt_groups():
    """Per task, beta and step: the (S, N) arrays of the small GPT's training seeds."""
    from predict_validation_gpt import load_kernels

    kernels = load_kernels(RES / "small_gpt_trajectory_kernels.csv")
    runs = pd.read_csv(RES / "small_gpt_seed_runs.csv")
    preds = pd.read_csv(RES / "small_gpt_seed_runs_predictions.csv")
    for (task, beta, step), g in runs[runs.step > 0].groupby(["task", "beta", "step"]):
        seeds = np.sort(g.seed.unique())
        rows = [g[g.seed == s].sort_values("prompt") for s in seeds]
        half = rows[0].half.to_numpy(str)
        assert all((r.half.to_numpy(str) == half).all() for r in rows), "one task: the same halves in every seed"
        pp = preds[(preds.task == task) & (preds.beta == beta) & (preds.step == step)]
        models = {name: np.stack([pp[(pp.seed == s) & (pp.model == name)].sort_values("prompt").predicted
                                  .to_numpy(float) for s in seeds]) for name in MODELS}
        y = np.stack([r.p.to_numpy(float) for r in rows])
        yield dict(study="small_gpt", pool=f"task{int(task)}", beta=float(beta), point=str(int(step)), seeds=seeds,
                   steps=[int(step)] * len(seeds), y=y, k=np.stack([r.k.to_numpy(float) for r in rows]),
                   m=np.stack([r.m.to_numpy(float) for r in rows]), half=half, floor=np.zeros_like(y),
                   models=models, committed_floor=[0.0] * len(seeds),
                   kernel=kernels[(int(task), float(beta), 0, "plain")])


# ----------------------------------------------------------------------------------------------- analysis
def analyse(g: dict, rng) -> tuple[list, dict, pd.DataFrame, pd.DataFrame]:
    """Run rows, the pooled row, the halves' deviations and the per-prompt deviations with their transfer
    predictors, of one configuration and point."""
    y, k, m, half, floor = g["y"], g["k"], g["m"], g["half"], g["floor"]
    S, N = y.shape
    loo = oracle_loo(y)
    oracles = {"oracle_in": oracle_in(y), "oracle_loo": loo, "oracle_loo_shift": shifted(loo, k, m, half)}
    err = {name: np.abs(p - y) for name, p in oracles.items()}
    err.update({name: np.abs(p - y) for name, p in g["models"].items()})
    if g["study"] == "smollm2":
        var = seed_variance(y, k, m)
        q = (k + 0.5) / (m + 1.0)
        err["oracle_gauss"] = abs_binomial_plus_normal(q, m, np.full(y.shape, np.sqrt(var)))
        seed_mad = np.full(S, np.sqrt(2 / np.pi * var))
    else:
        seed_mad = np.full(S, np.nan)
    mae = {name: e.mean(axis=1) for name, e in err.items()}
    fl = floor.mean(axis=1)
    better = np.minimum(mae["shift"], mae["tabular"])
    keys = dict(study=g["study"], pool=g["pool"], beta=g["beta"], point=g["point"])
    rows = []
    for s in range(S):
        r = dict(scope="run", **keys, seed=int(g["seeds"][s]), step=g["steps"][s], prompts=N,
                 measured_n=int(m[s, 0]), floor=fl[s], better_baseline=better[s],
                 better_baseline_excess=better[s] - fl[s], seed_mad_gauss=seed_mad[s])
        for name in (*oracles, "oracle_gauss", *MODELS):
            if name not in mae:
                continue
            r[name] = mae[name][s]
            if better[s] > fl[s]:
                r[f"ratio_{name}"] = (mae[name][s] - fl[s]) / (better[s] - fl[s])
                r[f"meets_{name}"] = bool(mae[name][s] - fl[s] <= TARGET * (better[s] - fl[s]))
        rows.append(r)
    pooled = dict(scope="pooled", **keys, seed=-1, step=-1, prompts=N, measured_n=int(m[0, 0]), floor=fl.mean(),
                  better_baseline=better.mean(), better_baseline_excess=(better - fl).mean(),
                  seed_mad_gauss=seed_mad.mean())
    base = {"shift": err["shift"], "tabular": err["tabular"]}
    for name in (*oracles, "oracle_gauss", *MODELS):
        if name not in mae:
            continue
        pooled[name] = mae[name].mean()
        if (better - fl).sum() > 0:
            pooled[f"ratio_{name}"], pooled[f"ratio_{name}_lo"], pooled[f"ratio_{name}_hi"] = pooled_ratio(
                err[name], base, floor, rng)
    pooled["no_deterministic"] = (bool(mae["oracle_in"].mean() > np.mean(fl + TARGET * (better - fl)))
                                  if np.all(better > fl) else np.nan)
    hd = half_deviations(y, loo, m, half)
    d = logit(clip_p(y, m)) - logit(clip_p(loo, m))
    dev = pd.DataFrame(dict(study=g["study"], pool=g["pool"], beta=g["beta"], point=g["point"], seed=g["seeds"],
                            dev_a=hd[:, 0], dev_b=hd[:, 1], dev_var=np.mean(d ** 2, axis=1)))
    ps, pk = transfer_predictors(d, half, g["kernel"])
    per = pd.DataFrame(dict(study=g["study"], pool=g["pool"], beta=g["beta"], point=g["point"],
                            seed=np.repeat(g["seeds"], N), dev=d.ravel(), pred_shift=ps.ravel(),
                            pred_kernel=pk.ravel()))
    return rows, pooled, dev, per


def main() -> int:
    t0 = time.process_time()
    rng = np.random.default_rng(0)
    rows, devs, pers = [], [], []
    for gen in (smollm2_groups(), small_gpt_groups()):
        for g in gen:
            r, p, dev, per = analyse(g, rng)
            rows += r + [p]
            devs.append(dev)
            pers.append(per)
            print(f"{g['study']} {g['pool']} beta {g['beta']:g} point {g['point']}: oracle_in {p['oracle_in']:.4f} "
                  f"loo {p['oracle_loo']:.4f} loo+shift {p['oracle_loo_shift']:.4f} better {p['better_baseline']:.4f}"
                  f" floor {p['floor']:.4f} ratio_in {p.get('ratio_oracle_in', np.nan):.2f}", flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(RES / "predict_seed_floor.csv", index=False, float_format="%.6g")
    dev, per = pd.concat(devs, ignore_index=True), pd.concat(pers, ignore_index=True)
    for f in (dev, per):
        f["cluster"] = f.study + "/" + f.pool + "/" + f.beta.astype(str) + "/" + f.seed.astype(str)
    halves = []
    for study, d in dev.groupby("study"):
        for pool, dd in [("all", d), *d.groupby("pool")]:
            pp = per[per.study == study] if pool == "all" else per[(per.study == study) & (per.pool == pool)]
            halves.append(dict(study=study, pool=pool, n=len(dd), runs=dd.cluster.nunique(), **halves_stats(dd, rng),
                               **prompt_stats(pp, rng)))
    pd.DataFrame(halves).to_csv(RES / "predict_seed_floor_halves.csv", index=False, float_format="%.6g")
    print(pd.DataFrame(halves).to_string())
    print(f"CPU {time.process_time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
