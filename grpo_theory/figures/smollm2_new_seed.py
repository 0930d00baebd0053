"""Figure 28: SmolLM2 at a seed the study never saw, and the one prompt that needed a longer schedule
(the committed tables of experiments/smollm2_validate.py, its ``--seeds 5`` run and
experiments/smollm2_slow_escape.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec

#: the gating pass's step size (every row of the table is trained at it)
LEARNING_RATE = 3e-4
#: the new seed, and the prompt that starts at the edge
NEW_SEED, PROMPT = 5, "2*7"
#: the prediction interval's level; the Bonferroni interval holds every row at this family-wise level
LEVEL = 0.95
LEVEL_TEXT = {"sequence": "sequence", "token": "token"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {":": "reference", "o": "point", "D": "trained"}


def _label(config: str, level: str) -> str:
    G, beta, penalty = config.split("_")
    return f"G = {G[1:]}, {penalty}, {level}"


def per_seed(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (configuration, level, seed): the mean |error| over the converged prompts, and how many
    prompts there were and converged."""
    r = rows[np.isclose(rows.learning_rate, LEARNING_RATE)]
    r = r.assign(abs_error=r.error.abs(), converged=r.conv_status == "converged")
    c = r[r.converged].groupby(["config", "level", "seed"], sort=False).abs_error.mean().rename("mae")
    n = r.groupby(["config", "level", "seed"], sort=False).agg(prompts=("prompt", "size"),
                                                               converged=("converged", "sum"),
                                                               steps=("steps", "first"))
    return n.join(c).reset_index()


def intervals(seeds: pd.DataFrame, new_seed: int = NEW_SEED) -> pd.DataFrame:
    """Per row, the prediction interval for one more seed's MAE from the other seeds' (mean ± t sd
    sqrt(1 + 1/n), t at :data:`LEVEL`, two-sided), the Bonferroni interval for all rows at once (t at
    1 - (1 - LEVEL) / (2 rows)), and whether ``new_seed`` lies in each."""
    from scipy import stats

    old, new = seeds[seeds.seed != new_seed], seeds[seeds.seed == new_seed]
    out = old.groupby(["config", "level"], sort=False).mae.agg(["mean", "std", "size"]).reset_index()
    out = out.merge(new[["config", "level", "mae"]].rename(columns={"mae": "new_seed_mae"}), on=["config", "level"])
    rows = len(out)
    t = stats.t.ppf(1 - (1 - LEVEL) / 2, out["size"] - 1)
    tb = stats.t.ppf(1 - (1 - LEVEL) / (2 * rows), out["size"] - 1)
    half = out["std"] * np.sqrt(1 + 1 / out["size"])
    out = out.assign(t=t, t_bonferroni=tb, lo=out["mean"] - t * half, hi=out["mean"] + t * half,
                     lo_bonferroni=out["mean"] - tb * half, hi_bonferroni=out["mean"] + tb * half)
    out["inside"] = (out.new_seed_mae >= out.lo) & (out.new_seed_mae <= out.hi)
    out["inside_bonferroni"] = (out.new_seed_mae >= out.lo_bonferroni) & (out.new_seed_mae <= out.hi_bonferroni)
    out["row"] = [_label(c, lv) for c, lv in zip(out.config, out.level)]
    return out


def prompt_runs(short: pd.DataFrame, long: pd.DataFrame) -> pd.DataFrame:
    """"2*7" at the end of every G = 2 reverse run: on the 600-step decay (``short``) and on the 1,800-step
    one (``long``, seeds 0-5)."""
    keep = ["seed", "level", "predicted", "measured", "error", "conv_status", "steps", "steps_run", "pi_ref"]
    parts = []
    for t in (short, long):
        t = t[(t.config == "G2_beta0.5_reverse") & (t.prompt == PROMPT) & np.isclose(t.learning_rate, LEARNING_RATE)]
        parts.append(t[keep])
    return pd.concat(parts, ignore_index=True).sort_values(["steps", "level", "seed"]).reset_index(drop=True)


def tables(inputs) -> dict[str, pd.DataFrame]:
    main = inputs.results_table("smollm2_validate.csv")
    new = inputs.results_table("smollm2_validate_seed5.csv")
    seeds = per_seed(pd.concat([main, new], ignore_index=True))
    short = inputs.results_table("smollm2_validate_g2_reverse_600.csv")
    escape = inputs.results_table("smollm2_slow_escape.csv")
    return {"data": seeds, "intervals": intervals(seeds),
            "prompt": prompt_runs(short, pd.concat([main, new], ignore_index=True)),
            "constant_rate": escape[["seed", "level", "step", "p", "predicted", "lr", "in_final_window"]]}


def render(t: dict[str, pd.DataFrame]) -> Figure:
    seeds, iv, runs, traj = t["data"], t["intervals"], t["prompt"], t["constant_rate"]
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.0, ncols=3,
                                    gridspec_kw=dict(width_ratios=[1.35, 1.0, 1.0]))
    colour = plotting.beta_colors([0.5])[0]
    trained = plotting.COLORS["trained"]
    ax = axes[0]
    y = np.arange(len(iv))[::-1]
    for yi, (_, r) in zip(y, iv.iterrows()):
        ax.plot([r.lo_bonferroni, r.hi_bonferroni], [yi, yi], color="0.75", lw=1.0, solid_capstyle="butt")
        ax.plot([r.lo, r.hi], [yi, yi], color="0.45", lw=3.2, solid_capstyle="butt")
        old = seeds[(seeds.config == r.config) & (seeds.level == r.level) & (seeds.seed != NEW_SEED)]
        ax.plot(old.mae, np.full(len(old), yi + 0.22), ls="", marker="o", ms=2.8, color=colour, mec="black",
                mew=0.3)
        ax.plot([r.new_seed_mae], [yi], ls="", marker="D", ms=4.5, color=trained, mec="black", mew=0.5)
    ax.set_yticks(y, list(iv.row))
    ax.set_ylim(-0.7, len(iv) - 0.3)
    ax.set_xlim(0, None)
    ax.set_xlabel("per-seed MAE over converged prompts")
    plotting.panel(ax, "a", f"seed {NEW_SEED} against seeds 0-4", fontsize=7.5)

    ax = axes[1]
    groups = list(dict.fromkeys(zip(runs.steps, runs.level)))
    for i, (steps, level) in enumerate(groups):
        g = runs[(runs.steps == steps) & (runs.level == level)]
        x = i + np.linspace(-0.22, 0.22, len(g))
        conv = (g.conv_status == "converged").to_numpy()
        ax.plot(x[conv], g.measured[conv], ls="", marker="o", ms=3.6, color=colour, mec="black", mew=0.3)
        ax.plot(x[~conv], g.measured[~conv], ls="", marker="o", ms=3.6, color="0.7", mec="black", mew=0.3)
        plotting.reference(ax.plot([i - 0.35, i + 0.35], [g.predicted.iloc[0]] * 2, ls=":", color="black", lw=1.0))
    ax.set_xticks(range(len(groups)), [f"{int(s):,}\n{lv[:3] + '.' if lv == 'sequence' else lv}" for s, lv in groups])
    ax.set_xlabel("steps of the decay, level")
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, 0.6)
    ax.set_ylabel(f'P("{PROMPT}" correct) at the end')
    plotting.panel(ax, "b", f'"{PROMPT}" under each decay', fontsize=7.5)

    ax = axes[2]
    tr = traj.sort_values("step")
    win = tr[tr.in_final_window.astype(bool)]
    ax.axvspan(win.step.min(), win.step.max(), color="0.93", lw=0, zorder=0)
    ax.plot(tr.step, tr.p, color=colour, lw=0.8)
    plotting.reference(ax.axhline(tr.predicted.iloc[0], ls=":", color="black", lw=1.0))
    ax.set_xlabel("training step")
    ax.set_ylabel(f'P("{PROMPT}" correct)')
    ax.set_xlim(0, tr.step.max())
    ax.set_ylim(0, None)
    plotting.panel(ax, "c", f"constant rate, seed {int(tr.seed.iloc[0])}", fontsize=7.5)

    handles = [Line2D([], [], ls="", marker="o", ms=2.8, color=colour, mec="black", mew=0.3,
                      label=r"seeds 0-4 ($\beta$ = 0.5)"),
               Line2D([], [], ls="", marker="D", ms=4.5, color=trained, mec="black", mew=0.5, label=f"seed {NEW_SEED}"),
               Line2D([], [], color="0.45", lw=3.2, label=f"{LEVEL:.0%} prediction interval"),
               Line2D([], [], color="0.75", lw=1.0, label="Bonferroni, all rows"),
               Line2D([], [], ls="", marker="o", ms=3.6, color="0.7", mec="black", mew=0.3, label="not converged"),
               Line2D([], [], ls=":", color="black", lw=1.0, label="prediction")]
    plotting.legend_below(fig, handles, ncol=3)
    return fig


def caption(t: dict[str, pd.DataFrame]) -> str:
    iv, runs, traj = t["intervals"], t["prompt"], t["constant_rate"]
    out = iv[~iv.inside]
    miss = "; ".join(f"{r.row}: {r.new_seed_mae:.4f} against {r.hi:.4f}" if r.new_seed_mae > r.hi else
                     f"{r.row}: {r.new_seed_mae:.4f} against {r.lo:.4f}" for _, r in out.iterrows())
    short = runs[runs.steps == runs.steps.min()]
    long = runs[runs.steps == runs.steps.max()]
    moving = int((short.conv_status != "converged").sum())
    stopped = short[short.conv_status == "converged"]
    tr = traj.sort_values("step")
    win = tr[tr.in_final_window.astype(bool)]
    above = int(tr[tr.p > 0.1].step.min())
    return (
        f"Figure 28. SmolLM2-135M (last MLP trained, beta = 0.5, Adam lr {plotting.sci_text(LEARNING_RATE, plain=True)}) "
        f"at a seed outside the five the study was run on, and the prompt that needed a longer schedule. (a) Each "
        f"row's per-seed MAE over converged prompts: seeds 0-4, the {LEVEL:.0%} prediction interval for one more seed "
        f"(mean ± t sd sqrt(1 + 1/5)), and the Bonferroni interval for all {len(iv)} rows. Seed {NEW_SEED} lies inside "
        f"{int(iv.inside.sum())} of {len(iv)} intervals ({miss}) and inside all {int(iv.inside_bonferroni.sum())} "
        f"Bonferroni intervals. (b) \"{PROMPT}\" (pi_ref {runs.pi_ref.iloc[0]:.4f}; predicted "
        f"{runs[runs.level == 'sequence'].predicted.iloc[0]:.2f} at sequence level, "
        f"{runs[runs.level == 'token'].predicted.iloc[0]:.2f} at token level, dotted) at each run's end. With "
        f"the learning rate decayed over {int(short.steps.iloc[0])} steps, {moving} of {len(short)} runs were "
        f"still moving at the cap ({int(short.steps_run.max()):,} steps), and the {len(stopped)} counted converged "
        f"ended at {stopped.measured.min():.3f}-{stopped.measured.max():.3f}; decayed over "
        f"{int(long.steps.iloc[0]):,} steps, all {len(long)} runs (seeds 0-{NEW_SEED}) converged, largest error "
        f"{long.error.abs().max():.4f}. (c) At a constant rate (seed {int(tr.seed.iloc[0])}, "
        f"{tr.level.iloc[0]} level) the prompt first passes 0.1 at step {above}; over "
        f"the final {len(win)} steps (shaded) its mean is {win.p.mean():.4f} against {tr.predicted.iloc[0]:.4f}."
    )


SPEC = FigureSpec(28, "smollm2_new_seed", caption, tables, render, __name__)
