"""TRL's GRPOTrainer on SmolLM2-135M-Instruct run to its cap, against the theory: the exact
P(correct) of every prompt during training, and its mean over the last 30% of the steps against the
stationary point of the objective the run's own GRPOConfig maps to
(docs/results/trl_smollm2_stationary*.csv from experiments/trl_smollm2_stationary.py).

Completions are one token, so P(correct) is read exactly from the next-token distribution: the
trajectories carry no sampling noise, and what moves them is the optimiser.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec

#: the window the measured value averages: the last TAIL of the steps run (studies.trl_stationary)
TAIL = 0.3
#: the experiment's cap on the steps (experiments/trl_smollm2_stationary.py --max-steps)
MAX_STEPS = 600
#: one colour per answer word (hues no method uses), one marker per answer word in (c)
ANSWER_COLORS = {"Yes": plotting.COLORS["answer Yes"], "No": plotting.COLORS["answer No"]}
ANSWER_MARKERS = {"Yes": "^", "No": "P"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
#: (c): predictions closer than this are drawn this far apart; a prompt's two seeds sit this offset either side
PROMPT_GAP, SEED_OFFSET = 0.022, 0.005
LANGUAGE = {":": "reference", "^": "key", "P": "key"}


def _question(prompt: str) -> str:
    """The user turn of a chat prompt (as the results table stores it), without the instruction."""
    try:
        text = json.loads(prompt)[0]["content"]
    except (ValueError, TypeError, KeyError, IndexError):
        text = str(prompt)
    return text.replace(" Answer Yes or No.", "")


def _logit(p):
    p = np.clip(np.asarray(p, dtype=float), 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def tables(inputs) -> dict[str, pd.DataFrame]:
    """``data``: one row per (seed, prompt) with the prediction and the tail mean; ``trajectory``: the
    exact P(correct) per seed and step, one column per prompt (as the study writes it; see :func:`errors`)."""
    res = inputs.results_table("trl_smollm2_stationary.csv")
    traj = inputs.results_table("trl_smollm2_stationary_trajectory.csv")
    res = res.assign(prompt_index=res.groupby("seed").cumcount(), question=[_question(p) for p in res.prompt])
    keep = ["seed", "prompt_index", "question", "answer", "pi_ref", "predicted", "measured", "measured_se", "error",
            "conv_status", "steps_run", "flat", "learning_rate", "beta", "group_size", "penalty", "objective"]
    data = res[[c for c in keep if c in res.columns]]
    return {"data": data.reset_index(drop=True), "trajectory": traj}


def errors(data: pd.DataFrame, trajectory: pd.DataFrame) -> pd.DataFrame:
    """The trajectory (wide: ``seed, step, p0, p1, ...``) in long form, one row per (seed, step, prompt),
    with the prompt's answer word, its prediction and the logit error ``dz``."""
    long = trajectory.melt(id_vars=["seed", "step"], var_name="prompt_index", value_name="p")
    long["prompt_index"] = long.prompt_index.str.removeprefix("p").astype(int)
    long = long.merge(data[["seed", "prompt_index", "answer", "predicted"]], on=["seed", "prompt_index"],
                      how="left").sort_values(["seed", "prompt_index", "step"])
    long["dz"] = _logit(long.p) - _logit(long.predicted)
    return long.reset_index(drop=True)


def window(trajectory: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The seed's trajectory over the last TAIL of its steps (the window the measured value averages)."""
    g = trajectory[trajectory.seed == seed]
    return g[g.step >= (1 - TAIL) * g.step.max()]


def correlations(trajectory: pd.DataFrame, seed: int) -> dict[str, float]:
    """Over the window, of the logit errors: the mean pairwise correlation among the prompts answered Yes,
    among those answered No, and the correlation of the two groups' means."""
    w = window(trajectory, seed)
    z = w.pivot(index="step", columns="prompt_index", values="dz")
    answer = w.drop_duplicates("prompt_index").set_index("prompt_index").answer
    out = {}
    for a in ("Yes", "No"):
        c = np.corrcoef(z[answer.index[answer == a]].to_numpy().T)
        out[a] = float(c[np.triu_indices_from(c, 1)].mean())
    yes, no = z[answer.index[answer == "Yes"]].mean(axis=1), z[answer.index[answer == "No"]].mean(axis=1)
    out["cross"] = float(np.corrcoef(yes, no)[0, 1])
    return out


def loo_shift(pi_ref, measured) -> np.ndarray:
    """Each prompt's baseline: ``expit(logit pi_ref + c)`` with the single logit shift ``c`` fitted (least
    squares) on the other prompts of the run."""
    from scipy.optimize import minimize_scalar

    u, m = _logit(pi_ref), np.asarray(measured, dtype=float)
    out = np.empty(u.size)
    for i in range(u.size):
        o = np.arange(u.size) != i
        def loss(c, o=o):
            return float(np.sum((1 / (1 + np.exp(-(u[o] + c))) - m[o]) ** 2))
        c = minimize_scalar(loss, bounds=(-15, 15), method="bounded", options=dict(xatol=1e-9)).x
        out[i] = 1 / (1 + np.exp(-(u[i] + c)))
    return out


def fit_shift(pi_ref, measured) -> float:
    """The single logit shift ``c`` of ``expit(logit pi_ref + c)`` fitted (least squares) on every prompt."""
    from scipy.optimize import minimize_scalar

    u, m = _logit(pi_ref), np.asarray(measured, dtype=float)
    return float(minimize_scalar(lambda c: float(np.sum((1 / (1 + np.exp(-(u + c))) - m) ** 2)), bounds=(-15, 15),
                                 method="bounded", options=dict(xatol=1e-9)).x)


def tail_mae(data: pd.DataFrame, trajectory: pd.DataFrame, seed: int, tail: float) -> float:
    """The theory's MAE for ``seed`` had the measured value averaged over the last ``tail`` of the steps."""
    g = trajectory[trajectory.seed == seed]
    w = g[g.step >= (1 - tail) * g.step.max()]
    m = w.groupby("prompt_index").p.mean()
    d = data[data.seed == seed].set_index("prompt_index").predicted
    return float(np.abs(m - d.loc[m.index]).mean())


def bias(data: pd.DataFrame, trajectory: pd.DataFrame, seed: int) -> dict[str, float]:
    """The systematic part of the error for ``seed``: the signed mean error, the prompts above their
    prediction, the shift fitted on all prompts against the theory's mean shift, the MAE of the theory's
    mean shift applied to every prompt, and the mean logit error over the window per answer word."""
    g = data[data.seed == seed]
    implied = float(np.mean(_logit(g.predicted) - _logit(g.pi_ref)))
    const = 1 / (1 + np.exp(-(_logit(g.pi_ref) + implied)))
    w = window(trajectory, seed)
    return dict(signed=float((g.measured - g.predicted).mean()), above=int((g.measured > g.predicted).sum()),
                fitted=fit_shift(g.pi_ref, g.measured), implied=implied,
                const_mae=float(np.abs(const - g.measured).mean()),
                **{f"dz_{a}": float(r.dz.mean()) for a, r in w.groupby("answer")})


def render(t: dict[str, pd.DataFrame]) -> Figure:
    data = t["data"]
    traj = errors(data, t["trajectory"])
    seeds = sorted(data.seed.unique())
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=2.85, ncols=len(seeds) + 1)
    for ax, s, letter in zip(axes, seeds, "abcd"):
        g = traj[traj.seed == s]
        last = float(g.step.max())
        ax.axvspan((1 - TAIL) * last, last, color="0.9", lw=0, zorder=0)
        for (_, a), r in g.groupby(["prompt_index", "answer"]):
            ax.plot(r.step, r.dz, color=ANSWER_COLORS[a], lw=0.5, alpha=0.5, zorder=2)
        for a, r in g.groupby("answer"):
            m = r.groupby("step").dz.mean()
            ax.plot(m.index, m.values, color=ANSWER_COLORS[a], lw=1.5, zorder=3)
        plotting.reference(ax.axhline(0.0, color="0.1", lw=0.9, ls=":", zorder=4))
        ax.set(xlim=(0, last), ylim=(float(traj.dz.min()) - 0.15, float(traj.dz.max()) + 0.15),
               xlabel="training step")
        plotting.panel(ax, letter, f"seed {s}")
    axes[0].set_ylabel("logit P(correct) − logit predicted")
    for ax in axes[1:len(seeds)]:
        ax.sharey(axes[0])
        ax.tick_params(labelleft=False)

    # (c) the residual of each tail mean, with the window's interquartile range of P(correct) as its bar:
    # the bias and the swing on one axis
    cx = axes[-1]
    colour = plotting.METHOD_COLORS["TRL 1.16"]
    # prompts with near predictions (0.906 and 0.909) would overplot: their positions are drawn PROMPT_GAP apart
    centre = dict(zip(data.predicted, plotting.apart(data.predicted, gap=PROMPT_GAP)))
    for k, s in enumerate(seeds):
        g = data[data.seed == s]
        q = window(traj, s).groupby("prompt_index").p.quantile([0.25, 0.75]).unstack()
        for a, r in g.groupby("answer"):
            lo = q.loc[r.prompt_index, 0.25].to_numpy() - r.predicted.to_numpy()
            hi = q.loc[r.prompt_index, 0.75].to_numpy() - r.predicted.to_numpy()
            y = (r.measured - r.predicted).to_numpy()
            cx.errorbar(r.predicted.map(centre) + SEED_OFFSET * (2 * k - 1), y, yerr=[y - lo, hi - y], ls="", marker=ANSWER_MARKERS[a],
                        ms=4.2, color=colour, mfc=colour, mec=colour, mew=0.5, elinewidth=0.6,
                        zorder=3)
    plotting.reference(cx.axhline(0.0, color="0.45", lw=0.9, ls=":", zorder=1))
    cx.set(xlabel="predicted stationary P(correct)",
           ylabel=f"mean over the last {TAIL:.0%} − predicted")
    plotting.panel(cx, "abcd"[len(seeds)], "measured minus predicted")

    handles = ([Line2D([], [], color=ANSWER_COLORS[a], lw=1.5, label=f"answered {a}: mean") for a in ("Yes", "No")]
               + [Line2D([], [], color=ANSWER_COLORS["Yes"], lw=0.5, alpha=0.6, label="each prompt (thin)"),
                  Line2D([], [], color="0.9", lw=6, label=f"the last {TAIL:.0%} of the steps")]
               + [Line2D([], [], color=colour, marker=ANSWER_MARKERS[a], ms=4.2, ls="", label=f"(c) answered {a}")
                  for a in ("Yes", "No")]
               # the seeds told apart by position alone (open markers would say "unstable point")
               + [Line2D([], [], ls="", label=f"(c) seeds side by side, {seeds[0]} left")]
               + [Line2D([], [], color=colour, lw=0.6, label="(c) bars: the window's quartiles")])
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def account(t: dict[str, pd.DataFrame]) -> str:
    """The run's full account, moved from the caption to docs/figures.md ("Beyond the caption"): per seed the
    steps, the prompts flat, the MAEs and the window's swing and correlations; the seeds' gap; other windows;
    the shift fitted on every prompt and the theory's mean shift; the window's mean logit error.
    tests/test_trl_stationary_results.py recomputes every number from docs/results."""
    data = t["data"]
    traj = errors(data, t["trajectory"])
    seeds = sorted(data.seed.unique())
    per_seed = []
    for s in seeds:
        g = data[data.seed == s]
        w = window(traj, s)
        swing = w.groupby("prompt_index").p.agg(lambda v: v.max() - v.min())
        c = correlations(traj, s)
        shift = np.abs(loo_shift(g.pi_ref, g.measured) - g.measured).mean()
        per_seed.append(
            f"seed {s}: {int(g.steps_run.iloc[0])} steps, {int(g.conv_status.eq('converged').sum())} of {len(g)} "
            f"prompts flat, MAE {np.abs(g.error).mean():.3f} (largest {np.abs(g.error).max():.3f}; the MAE of a logit "
            f"shift fitted on the other prompts {shift:.3f}, of pi_ref {np.abs(g.pi_ref - g.measured).mean():.3f}), "
            "P(correct) peak-to-peak "
            f"{swing.min():.2f}-{swing.max():.2f} in the window, correlations {c['Yes']:+.2f} among the Yes prompts, "
            f"{c['No']:+.2f} among the No prompts, {c['cross']:+.2f} between the groups")
    m = data.pivot(index="prompt_index", columns="seed", values="measured")
    gap = float(np.abs(m[seeds[0]] - m[seeds[-1]]).mean()) if len(seeds) > 1 else float("nan")
    bs = [bias(data, traj, s) for s in seeds]
    dz = [v for b in bs for k, v in b.items() if k.startswith("dz_")]
    windows = "; ".join(f"over the last {tail:.0%}, "
                        + " and ".join(f"{tail_mae(data, traj, s, tail):.3f}" for s in seeds)
                        for tail in (0.2, 0.5))
    fitted = ", ".join(f"{b['fitted']:.2f}" for b in bs)
    const = ", ".join(f"{b['const_mae']:.3f}" for b in bs)
    return (
        f"{'; '.join(per_seed)}. The two seeds' values differ by {gap:.3f} a prompt on average. "
        f"Averaged over another window the MAE is: {windows}. "
        f"Over the window the shift fitted on every prompt is {fitted} against the theory's mean {bs[0]['implied']:.2f}; the "
        f"theory's mean shift applied to every prompt scores MAE {const}. Training updates (sampled groups of "
        f"{int(data.group_size.iloc[0])}, Adam steps) keep moving the policy, the prompts with the same answer word "
        f"together (mean logit error over the window {min(dz):+.2f} to {max(dz):+.2f} per seed and answer word)."
    )


def caption(t: dict[str, pd.DataFrame]) -> str:
    """Every number computed from the tables (tests/test_trl_stationary_results.py recomputes them from
    docs/results); the run's full account is :func:`account` (docs/figures.md)."""
    data = t["data"]
    traj = errors(data, t["trajectory"])
    seeds = sorted(data.seed.unique())
    first = data[data.seed == seeds[0]]
    implied = _logit(first.predicted) - _logit(first.pi_ref)
    lr = float(first.learning_rate.iloc[0])
    bs = [bias(data, traj, s) for s in seeds]
    signed = ", ".join(f"{b['signed']:+.3f}" for b in bs)
    steps = data.groupby("seed").steps_run.first()
    stop = (f"to a flat curve or the cap of {MAX_STEPS} steps"
            + (" (every run reached the cap)" if (steps >= MAX_STEPS).all() else ""))
    by_seed = [data[data.seed == s] for s in seeds]
    maes = " and ".join(f"{np.abs(g.error).mean():.3f}" for g in by_seed)
    ident = " and ".join(f"{np.abs(g.pi_ref - g.measured).mean():.3f}" for g in by_seed)
    flat = sum(int(g.conv_status.eq("converged").sum()) for g in by_seed)
    return (
        "Figure {n}. TRL 1.16's GRPOTrainer on SmolLM2-135M-Instruct: "
        f"{len(first)} yes/no prompts, one-token completions from the whole vocabulary at temperature 1, "
        f"G = {int(first.group_size.iloc[0])}, beta = {first.beta.iloc[0]:g}, use_bias_correction_kl=True (TRL "
        f"1.16's default: the {first.penalty.iloc[0]} penalty), Adam at a constant "
        f"{plotting.sci_text(lr, plain=True)} after 10 warm-up steps, only the last MLP trained, {len(seeds)} "
        f"seeds, {stop}. Each P(correct) is exact (the next-token distribution). pi_ref(correct) "
        f"{first.pi_ref.min():.2f}-{first.pi_ref.max():.2f}; the stationary predictions "
        f"{first.predicted.min():.2f}-{first.predicted.max():.2f} (docs/trl.md). (a, b) Each prompt's logit error "
        "(thin) and the mean over the Yes and over the No prompts (bold); shaded: the window the measured value averages (in P). (c) Each prompt's mean "
        f"P(correct) over the window minus its prediction, seeds side by side, {seeds[0]} left (triangles: Yes, pluses: No; "
        f"predictions within {PROMPT_GAP:g} spread {PROMPT_GAP:g} apart); bars: the window's quartiles. "
        f"MAE {maes} (of pi_ref {ident}); {flat} of {len(data)} prompts flat. Over this range the prediction is "
        f"nearly one logit shift of pi_ref ({implied.min():.2f}-{implied.max():.2f}), and the measurements sit "
        f"above it: signed mean error {signed}, {sum(b['above'] for b in bs)} of {len(data)} prompts above their "
        "prediction. The runs never rest; why their motion centres above the fixed point is not measured here "
        "(docs/figures.md)."
    )


SPEC = FigureSpec(26, "trl_smollm2", lambda t: caption(t).replace("{n}", "26"), tables, render, __name__)
