"""Free generation on SmolLM2: Figure 25a (the yes/no run) and 25b (the greetings run, the upper end of
P(correct)), each prompt's P(correct) after training against the theory and the theory against two fitted
baselines at the end (docs/results/free_generation*.csv from experiments/smollm2_free_generation.py).
Figures 25c (during training) and 25d (the earlier 4-prompt run's collapse) are in
:mod:`grpo_theory.figures.free_generation_course`; this module holds the tables and scores they share.

The sampling floor is the MAE an exact theory would still show: a final measurement ``m`` of
``n_m`` samples and ``p_ref`` of ``n_ref`` samples give ``m - x(p_ref)`` a standard deviation
``sigma = sqrt(x (1 - x) / n_m + x'(p_ref)^2 p_ref (1 - p_ref) / n_ref)`` (normal approximations), and
``E|m - x| = sqrt(2 / pi) sigma``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .. import plotting
from ..predict import Response
from ..problem import Objective
from ._spec import FigureSpec

#: the study's objective besides beta, and its cap on the steps (grpo_theory.studies.free.JobSpec's defaults)
GROUP_SIZE, PENALTY, MAX_STEPS = 8, "reverse", 800
#: the study's target: the theory's MAE over prompts at most this in every (beta, seed)
TARGET = 0.03
#: the three predictions scored: the theory and the two baselines (the logit shift fitted on the other
#: half of the prompts)
SCORED = {"predicted": "theory", "shift": r"logit shift of $\pi_{\mathrm{ref}}$", "identity": r"$\pi_{\mathrm{ref}}$"}
#: one encoding: colour is beta (the one beta map); in Figure 25c the marker and the line style tell the
#: theory from the baselines (its legend says which)
SCORED_MARKERS = {"predicted": "o", "shift": "P", "identity": "^"}
SCORED_LINES = {"predicted": "-", "shift": "--", "identity": ":"}
#: the marker of each run's measurements: the yes/no run circles, the greetings run diamonds
RUN_MARKER = {"yes/no": "o", "greetings": "D"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference", "-.": "marked value", "o": "point", "P": "key",
            "^": "key", "D": "trained"}


@lru_cache(maxsize=8)
def _response(beta: float) -> Response:
    """x(p_ref) for one beta, built once (the tables evaluate it on the grid, at the prompts and beside them)."""
    return Response(Objective(beta=float(beta), group_size=GROUP_SIZE, penalty=PENALTY), progress=False)


def _x_and_slope(p, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """x(p) and dx/dp by central differences in logit p (the response is smooth away from the edges),
    solved once per distinct p."""
    u_p, inv = np.unique(np.asarray(p, dtype=float), return_inverse=True)
    h = 1e-4
    u = np.log(u_p / (1 - u_p))
    lo, hi = 1 / (1 + np.exp(-(u - h))), 1 / (1 + np.exp(-(u + h)))
    r = _response(float(beta))
    x, slope = r(u_p), (r(hi) - r(lo)) / (hi - lo)
    return x[inv], slope[inv]


def sampling_sd(p_ref, beta: float, n_measured, n_ref, *, x=None, slope=None) -> np.ndarray:
    """The standard deviation of ``measured - x(p_ref)`` from sampling alone (see the module's note);
    ``x`` and ``slope`` if already known."""
    if x is None or slope is None:
        x, slope = _x_and_slope(p_ref, beta)
    p = np.asarray(p_ref, dtype=float)
    return np.sqrt(x * (1 - x) / np.asarray(n_measured, float) + slope ** 2 * p * (1 - p) / np.asarray(n_ref, float))


def _curve(betas, n_measured: int, n_ref: int) -> pd.DataFrame:
    """The stationary P(correct) x(p_ref) of each beta on a logit grid of p_ref, with the sampling
    standard deviation of a measurement of ``n_measured`` samples against it (the slope from the grid)."""
    p = 1.0 / (1.0 + np.exp(-np.linspace(-5.0, 3.0, 161)))
    out = []
    for b in betas:
        x = _response(float(b))(p)
        out.append(pd.DataFrame(dict(beta=b, p_ref=p, x=x, sd=sampling_sd(p, b, n_measured, n_ref, x=x,
                                                                             slope=np.gradient(x, p)))))
    return pd.concat(out, ignore_index=True)


def run_tables(inputs, name: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One run's rows (the results table ``name``), its final measurements (:func:`_final_rows`) and its scores
    (:func:`_scores`): what Figures 25a-25c read."""
    t = inputs.results_table(name)
    data = _final_rows(t[t.kind == "final"])
    return t, data, _scores(t, data)


def _with_curve(data: pd.DataFrame) -> pd.DataFrame:
    return _curve(sorted(data.beta.unique()), int(data.measured_n.median()), int(data.p_ref_n.median()))


def tables_yes_no(inputs) -> dict[str, pd.DataFrame]:
    """Figure 25a: ``data``, every final measurement (seed, beta, prompt) with its sampling sd; ``curve``,
    x(p_ref) and the sampling sd per beta; ``scores``, the final MAE over prompts of the theory and the
    baselines per (beta, seed) with its sampling floor."""
    _, data, scores = run_tables(inputs, "free_generation.csv")
    return {"data": data.reset_index(drop=True), "curve": _with_curve(data),
            "scores": scores[scores.kind == "final"].reset_index(drop=True)}


def tables_greetings(inputs) -> dict[str, pd.DataFrame]:
    """Figure 25b: as :func:`tables_yes_no` for the greetings run, with each measurement's training reward
    over the last quarter of its job (``tail_mean``, ``tail_n``)."""
    _, data, scores = run_tables(inputs, "free_generation_greetings.csv")
    tail = inputs.results_table("free_generation_greetings_tail.csv")
    data = data.merge(tail[["seed", "beta", "prompt", "tail_mean", "tail_n"]], on=["seed", "beta", "prompt"],
                      how="left", validate="one_to_one")
    return {"data": data.reset_index(drop=True), "curve": _with_curve(data),
            "scores": scores[scores.kind == "final"].reset_index(drop=True)}


def _final_rows(final: pd.DataFrame) -> pd.DataFrame:
    """The final measurements (seed, beta, prompt) with their sampling sd."""
    keep = ["seed", "beta", "prompt", "label", "answer", "p_ref", "p_ref_n", "predicted", "measured", "measured_n",
            "step", "identity", "shift", "shift_c", "conv_status", "steps_run", "p_ref_first", "p_ref_n_first",
            "measured_first", "measured_n_first"]
    data = final[[c for c in keep if c in final.columns]].sort_values(["beta", "p_ref", "prompt", "seed"]).copy()
    data["sd"] = np.nan
    for b, g in data.groupby("beta"):
        data.loc[g.index, "sd"] = sampling_sd(g.p_ref, b, g.measured_n, g.p_ref_n)
    return data


def _scores(t: pd.DataFrame, data: pd.DataFrame) -> pd.DataFrame:
    """The MAE over prompts of the theory and the baselines per (beta, seed, kind, step), with the
    sampling floor of each final row (``data``: :func:`_final_rows`)."""
    rows = []
    for (beta, seed, kind, step), g in t.groupby(["beta", "seed", "kind", "step"]):
        r = dict(beta=beta, seed=seed, kind=kind, step=step, n_prompts=len(g),
                 **{f"mae_{c}": float(np.mean(np.abs(g[c] - g.measured))) for c in SCORED})
        if kind == "final":
            sd = data[(data.beta == beta) & (data.seed == seed)].sd
            r["floor"] = float(np.mean(np.sqrt(2 / np.pi) * sd))
        rows.append(r)
    return pd.DataFrame(rows)


def per_prompt(data: pd.DataFrame) -> pd.DataFrame:
    """Per (beta, prompt): p_ref, the prediction, the seeds' mean, least and largest measured P(correct)."""
    g = data.groupby(["beta", "prompt"])
    return pd.DataFrame(dict(p_ref=g.p_ref.first(), predicted=g.predicted.first(), mean=g.measured.mean(),
                             lo=g.measured.min(), hi=g.measured.max(), seeds=g.seed.nunique())).reset_index()


def final_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (beta, seed): the final MAEs, whether the theory meets the target and beats each baseline."""
    f = scores[scores.kind == "final"].copy()
    f["meets"] = f.mae_predicted <= TARGET
    f["beats_identity"] = f.mae_predicted < f.mae_identity
    f["beats_shift"] = f.mae_predicted < f.mae_shift
    return f.reset_index(drop=True)


def fmt3(v: float) -> str:
    """A caption's number: three decimals."""
    return f"{v:.3f}"


LOG_TICKS = (0.01, 0.03, 0.1, 0.3, 1.0)


def log_span(values, pad: float = 1.35) -> tuple[float, float]:
    """Log-axis limits that hold every value (MAEs, floors, the target) with a margin of ``pad`` either side."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(v.min() / pad), float(min(v.max() * pad, 1.0))


def log_ticks(ax, span: tuple[float, float]) -> None:
    """The MAE axes' ticks (0.01, 0.03, ...) within ``span``, and the span as the limits."""
    ticks = [t for t in LOG_TICKS if span[0] <= t <= span[1]]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_ylim(*span)


def render_run(t: dict[str, pd.DataFrame], run: str) -> Figure:
    """Figure 25a or 25b: (a) after training against before, (b) every residual with +-2 sigma of sampling,
    (c) the MAE at the end against the two baselines, the target and the sampling floor."""
    data, curve, fs = t["data"], t["curve"], final_scores(t["scores"])
    marker = RUN_MARKER[run]
    betas = sorted(data.beta.unique())
    colours = dict(zip(betas, plotting.beta_colors(betas)))
    fig, (ax, bx, cx) = plotting.new_figure(width=plotting.DOUBLE, height=2.9, ncols=3)
    x_hi = min(1.0, np.ceil((float(data.p_ref.max()) + 0.02) * 10) / 10)
    x_lo = max(0.0, np.floor((float(data.p_ref.min()) - 0.02) * 10) / 10)

    # (a) the seeds' mean and range per prompt, the stationary curve per beta, the logit shift dashed
    pp = per_prompt(data)
    for b in betas:
        c = curve[(curve.beta == b) & (curve.p_ref >= x_lo) & (curve.p_ref <= x_hi)]
        ax.plot(c.p_ref, c.x, color=colours[b], lw=1.1, zorder=2)
        shift = float(data[data.beta == b].shift_c.mean())
        ax.plot(c.p_ref, 1 / (1 + np.exp(-(np.log(c.p_ref / (1 - c.p_ref)) + shift))), color=colours[b], lw=0.8,
                ls="--", zorder=2)
        g = pp[pp.beta == b]
        ax.errorbar(g.p_ref, g["mean"], yerr=[g["mean"] - g.lo, g.hi - g["mean"]], fmt=marker, ms=3.0,
                    lw=0.9, color=colours[b], mec="0.1", mew=0.4, zorder=3)
    plotting.reference(ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=1))
    ax.set(xlim=(x_lo, x_hi), ylim=(0, 1), xlabel=r"$\pi_{\mathrm{ref}}$(correct)",
           ylabel="P(correct) after training")
    plotting.panel(ax, "a", "after training against before")

    # (b) every final measurement against its prediction, with +-2 sigma of sampling alone (the smaller
    # beta's band an outline, so that the overlap does not read as a third band)
    for i, b in enumerate(betas):
        c = curve[(curve.beta == b) & (curve.p_ref >= x_lo) & (curve.p_ref <= x_hi)]
        if i:
            bx.fill_between(c.p_ref, -2 * c.sd, 2 * c.sd, color=colours[b], alpha=0.2, lw=0, zorder=1)
        for sign in (-2, 2):
            bx.plot(c.p_ref, sign * c.sd, color=colours[b], lw=0.9, ls="-.", zorder=1)    # a threshold
        g = data[data.beta == b]
        flat = g.conv_status.eq("converged")
        err = g.measured - g.predicted
        bx.scatter(g.p_ref[flat], err[flat], s=9, marker=marker, color=colours[b], edgecolors="0.1",
                   linewidths=0.3, alpha=0.85, zorder=3)
        # still moving: grey (the neutral for a run that had not settled; open would say "unstable")
        bx.scatter(g.p_ref[~flat], err[~flat], s=12, marker=marker, facecolors="0.7", edgecolors="0.1",
                   linewidths=0.9, zorder=4)
    plotting.reference(bx.axhline(0.0, color="0.45", lw=0.8, ls=":"))
    bx.set(xlim=(x_lo, x_hi), xlabel=r"$\pi_{\mathrm{ref}}$(correct)", ylabel="measured − predicted")
    plotting.panel(bx, "b", "every prompt and seed")

    # (c) at the end: each seed's MAE (points) and the seeds' mean (bar) per method and beta, the target,
    # and each beta's sampling floor (the MAE an exact theory would show)
    for j, k in enumerate(SCORED):
        for i, b in enumerate(betas):
            v = fs[fs.beta == b][f"mae_{k}"].to_numpy()
            x = j + 0.2 * (2 * i - 1)
            cx.scatter(np.full(v.size, x) + np.linspace(-0.06, 0.06, v.size), v, s=12, marker=marker,
                       color=colours[b], edgecolors="0.1", linewidths=0.4, zorder=3)
            cx.plot([x - 0.13, x + 0.13], [v.mean()] * 2, color=colours[b], lw=1.4, zorder=2)
    for b in betas:
        plotting.reference(cx.axhline(float(fs[fs.beta == b].floor.mean()), color=colours[b], lw=1.0, ls="-.",
                                      zorder=1))
    plotting.reference(cx.axhline(TARGET, color="0.3", lw=0.7, ls="-."))
    cx.set_xticks(range(len(SCORED)), ["theory", "logit shift", r"$\pi_{\mathrm{ref}}$"])
    cx.tick_params(axis="x", length=0)
    cx.set_yscale("log")
    log_ticks(cx, log_span([*fs[[f"mae_{k}" for k in SCORED]].to_numpy().ravel(), *fs.floor, TARGET]))
    cx.set(xlim=(-0.5, len(SCORED) - 0.5), ylabel="MAE over prompts at the end")
    plotting.panel(cx, "c", "at the end of training")

    handles = ([Line2D([], [], color=colours[b], lw=5, label=f"β = {b:g}") for b in betas]
               + [Line2D([], [], color="0.2", lw=1.1, label="(a) predicted"),
                  Line2D([], [], color="0.2", lw=0.8, ls="--", label="(a) fitted logit shift"),
                  Line2D([], [], color="0.2", marker=marker, ms=3.2, ls="", mec="0.1", label="measured"),
                  Line2D([], [], color="0.1", marker=marker, ms=3.6, mfc="0.7", ls="",
                         label="(b) not yet stationary"),
                  Patch(facecolor="0.9", edgecolor="0.45", lw=0.9, ls="-.", label="(b) ±2σ of sampling (by β)"),
                  Line2D([], [], color="0.3", lw=0.8, ls="-.", label=f"(c) target MAE {TARGET:g}"),
                  Line2D([], [], color="0.45", lw=1.0, ls="-.", label="(c) sampling floor (by β)")])
    plotting.legend_below(fig, handles, ncol=5, columnspacing=1.0, handlelength=1.6)
    return fig


def outside_two_sigma(data: pd.DataFrame) -> str:
    """"k of n at beta = b and ...": the residuals outside +-2 sigma of sampling, per beta."""
    return " and ".join(f"{int(((g.measured - g.predicted).abs() > 2 * g.sd).sum())} of {len(g)} at beta = {b:g}"
                        for b, g in data.groupby("beta"))


def _per_beta(fs: pd.DataFrame) -> str:
    return "; ".join(
        f"beta = {b:g}: theory {fmt3(v.mae_predicted.mean())} (seeds {fmt3(v.mae_predicted.min())}-"
        f"{fmt3(v.mae_predicted.max())}), logit shift {fmt3(v.mae_shift.mean())}, "
        f"pi_ref {fmt3(v.mae_identity.mean())}, sampling floor {fmt3(v.floor.mean())}" for b, v in fs.groupby("beta"))


def caption_yes_no(t: dict[str, pd.DataFrame]) -> str:
    """Figure 25a's caption, every number from its tables (tests/test_free_generation_results.py recomputes
    them from docs/results; the per-seed paired margins are in docs/figures.md)."""
    data, fs = t["data"], final_scores(t["scores"])
    steps = data.groupby(["beta", "seed"]).steps_run.first()
    flat = int((steps < MAX_STEPS).sum())
    stop = (f"until the reward curve was flat ({int(steps.min())}-{int(steps.max())} steps)" if flat == len(steps)
            else f"until the reward curve was flat or {MAX_STEPS} steps ({flat} of {len(steps)} runs flat)")
    prompts = data.drop_duplicates("prompt")
    n_b = data.groupby("beta").size().iloc[0]
    conv = int(data.conv_status.eq("converged").sum())
    return (
        "Figure 25a. Free generation on SmolLM2-135M-Instruct, the yes/no run: up to 4 tokens "
        f"from the whole vocabulary, the first word verified; {len(prompts)} prompts answered Yes or No, "
        f"pi_ref(correct) {data.p_ref.min():.2f}-{data.p_ref.max():.2f}; sequence-level GRPO, G = {GROUP_SIZE}, "
        f"{PENALTY} penalty, Adam 3 x 10^-4 on the last MLP, {data.seed.nunique()} seeds per beta, trained {stop}; "
        f"pi_ref(correct) and P(correct) each from {int(data.measured_n.median())} samples. (a) Seeds' mean and "
        "range per prompt; solid: the two-class stationary policy; dashed: the logit shift (fitted constant); "
        "dotted: no change. (b) Measured minus predicted; dash-dotted: +-2 sigma of sampling alone; outside them: "
        f"{outside_two_sigma(data)}, against about {0.0455 * n_b:.0f} each from sampling; grey: the "
        f"{len(data) - conv} of {len(data)} measurements still moving (counted in every MAE). (c) MAE over "
        "prompts at the end (points: seeds; bars: means; dash-dotted: sampling floor and target; shift fitted on the "
        f"other half). Over {len(fs)} runs the theory meets the target MAE <= "
        f"{TARGET:g} in {int(fs.meets.sum())} and beats pi_ref in {int(fs.beats_identity.sum())}: {_per_beta(fs)}.")


def caption_greetings(t: dict[str, pd.DataFrame]) -> str:
    """Figure 25b's caption, every number from its tables (the tail-reward account in docs/figures.md)."""
    g, fs = t["data"], final_scores(t["scores"])
    prompts = g.drop_duplicates("prompt")
    steps = g.groupby(["beta", "seed"]).steps_run.first()
    answers = " or ".join(sorted(prompts.answer.astype(str).unique()))
    big = g[g.beta == g.beta.max()].assign(e=lambda d: d.measured - d.predicted)
    run = big.groupby("seed").e.agg(["mean", "std"])
    return (
        "Figure 25b. The upper end of P(correct), the greetings run: as Figure 25a with "
        f"{len(prompts)} greetings answered {answers} with pi_ref {prompts.p_ref.min():.2f}-{prompts.p_ref.max():.2f}, "
        "screened from 30 greetings, farewells and counting requests, trained the same way "
        f"({int(steps.min())}-{int(steps.max())} steps) and measured from {int(g.measured_n.median())} samples "
        "(panels as in Figure 25a); over its "
        f"{len(fs)} runs the theory meets the target in {int(fs.meets.sum())}, beats pi_ref in "
        f"{int(fs.beats_identity.sum())} and the logit shift in {int(fs.beats_shift.sum())}: {_per_beta(fs)}. "
        f"At beta = {big.beta.iloc[0]:g} each run's errors share one sign (mean "
        + ", ".join(f"{v:+.3f}" for v in run["mean"]) + f"; sd within a run {run['std'].min():.2f}-"
        f"{run['std'].max():.2f}): the {len(prompts)} prompts jitter together from step to step and the snapshot at "
        "the end catches one moment of that motion (docs/figures.md: the training reward over the last quarter "
        f"lands closer). Greetings residuals outside +-2 sigma of sampling: {outside_two_sigma(g)}.")


SPECS = (
    FigureSpec(25, "free_generation_yes_no", caption_yes_no, tables_yes_no, lambda t: render_run(t, "yes/no"),
               __name__, part="a"),
    FigureSpec(25, "free_generation_greetings", caption_greetings, tables_greetings,
               lambda t: render_run(t, "greetings"), __name__, part="b"),
)
