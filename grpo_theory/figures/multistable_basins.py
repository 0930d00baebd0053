"""Figure 20: which stable point a run reaches, by optimiser and step size, where two exist
(docs/results/multistable_optimizer.csv; G = 64, beta = 1, direct penalty), beside Figure 12's step-size bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from .. import plotting
from ..problem import Objective
from ..solvers import stationary_policy
from ._data import binary
from ._spec import FigureSpec
from .proximal_map import critical_step_size

#: the study's objective (experiments/multistable_optimizer.py)
OBJECTIVE = dict(beta=1.0, group_size=64, penalty="direct")
TABULAR, ADAM = "grpo_steps (tabular, exact expectations)", "adam, alone"
#: where a run ended: the flow's point (lower), the other stable point (upper), or neither (it cycles)
OUTCOME_COLORS = {"lower": plotting.COLORS["interior point"], "upper": plotting.COLORS["vertex point"],
                  "neither": "0.6"}
OUTCOME_LABELS = {"lower": "ends at the lower point (the flow's)", "upper": "ends at the upper point",
                  "neither": "ends at neither (cycles)"}
ADAM_MARKERS = {3e-4: "o", 1e-3: "P", 3e-3: "^"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "o": "point", "P": "key", "^": "key"}
#: (b) draws a question's three Adam runs side by side, this far apart in pi_ref(a), in the order of their lr
ADAM_SPREAD = 0.0025


def critical_curve(pi_refs) -> pd.DataFrame:
    """Figure 12's bound 2/|F'(z*)| at the point the flow reaches (the lower one), along pi_ref(a); only where
    that point is the lower branch (below 0.95: past the fold the flow's point jumps to the upper one)."""
    obj = Objective(**OBJECTIVE)
    rows = []
    for p in pi_refs:
        x = float(stationary_policy(binary(float(p)), obj).pi[0])
        if x < 0.95:
            rows.append(dict(pi_ref_a=float(p), pi_a=x, critical_lr=critical_step_size(binary(float(p)), obj)))
    return pd.DataFrame(rows)


def tables(inputs) -> dict[str, pd.DataFrame]:
    study = inputs.results_table("multistable_optimizer.csv")
    obj = Objective(**OBJECTIVE)
    data = study.copy()
    crit = {p: critical_step_size(binary(float(p)), obj) for p in data.pi_ref.unique()}
    data["critical_lr"] = data.pi_ref.map(crit)
    data["crossed_separatrix"] = data.max_along_run > data.separatrix
    lo, hi = data.pi_ref.min(), data.pi_ref.max()
    curve = critical_curve(np.concatenate([np.linspace(lo - 0.01, hi, 60), np.linspace(hi, hi + 0.0015, 6)[1:]]))
    return {"data": data, "critical": curve}


def draw(d: pd.DataFrame, curve: pd.DataFrame) -> Figure:
    """(a) plain gradient steps (tabular): step size against pi_ref, each run coloured by where it ended, with
    the largest step under which the flow's point stays stable; (b) Adam: the largest pi(a) along each run
    against the separatrix between the two basins."""
    fig, (ax, bx) = plotting.new_figure(width=plotting.DOUBLE, height=3.2, ncols=2)
    tab = d[d.method == TABULAR]
    ax.fill_between(curve.pi_ref_a, curve.critical_lr, 1e3, color="0.92", lw=0, zorder=0)
    ax.plot(curve.pi_ref_a, curve.critical_lr, color="black", lw=1.0,
            label=r"largest stable step $2/|F'(z^*)|$ (Fig. 12)")
    for out, g in tab.groupby("reached"):
        ax.scatter(g.pi_ref, g.step_size, s=22, color=OUTCOME_COLORS[out], edgecolors="0.2", linewidths=0.4,
                   zorder=3)
    ax.set_yscale("log")
    ax.set_ylim(0.2, 300)
    ax.set_xlim(curve.pi_ref_a.min(), d.pi_ref.max() + 0.005)
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
    ax.set_ylabel("step size on the logits")
    plotting.panel(ax, "a", "plain gradient steps, exact expectations")
    ax.text(0.03, 0.95, "shaded: the flow's point\nis unstable under the steps", transform=ax.transAxes,
            va="top", fontsize=7, color="0.3")

    adam = d[d.method == ADAM]
    q = d.drop_duplicates("pi_ref").sort_values("pi_ref")
    # three branches of stationary points (solid): the stable ones carry filled circles in the colour of the
    # runs that end there, the separatrix, the unstable one, open circles
    for col, lab in (("lower", "lower stable point (the flow's)"), ("separatrix", "separatrix (unstable point)"),
                     ("upper", "upper stable point")):
        sep = col == "separatrix"
        colour = "0.25" if sep else OUTCOME_COLORS[col]
        bx.plot(q.pi_ref, q[col], ls="-", color=colour, lw=0.9, marker="o", ms=3.2 if sep else 2.8,
                mfc="white" if sep else colour, mec="0.25", mew=0.8 if sep else 0.4, label=lab, zorder=2)
    adam = adam.sort_values(["pi_ref", "step_size"], kind="stable")
    adam = adam.assign(x=plotting.side_by_side(adam.pi_ref, width=ADAM_SPREAD))
    for lr, g in adam.groupby("step_size"):
        bx.scatter(g.x, g.max_along_run, s=22, marker=ADAM_MARKERS[lr],
                   c=[OUTCOME_COLORS[o] for o in g.reached], edgecolors="0.2", linewidths=0.4, zorder=3)
    bx.set_yscale("logit")
    bx.set_ylim(0.4, 0.9995)
    ticks = [0.5, 0.7, 0.9, 0.97, 0.99, 0.997, 0.999]
    bx.set_yticks(ticks, [f"{v:g}" for v in ticks])
    bx.yaxis.set_minor_formatter(NullFormatter())
    bx.set_xlim(*ax.get_xlim())
    bx.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
    bx.set_ylabel(r"largest $\pi_\theta(a)$ along the run")
    plotting.panel(bx, "b", "Adam, each question trained alone")

    handles = [Line2D([], [], marker="o", ls="", ms=5, mfc=c, mec="0.2", mew=0.4, label=OUTCOME_LABELS[o])
               for o, c in OUTCOME_COLORS.items() if o in set(d.reached)]
    handles += [Line2D([], [], color="black", lw=1.0, label=r"(a) largest stable step $2/|F'(z^*)|$ (Fig. 12)")]
    handles += [Line2D([], [], marker=m, ls="", ms=5, mfc="white", mec="0.2", label=f"(b) Adam, lr {lr:g}")
                for lr, m in ADAM_MARKERS.items()]
    handles += bx.get_legend_handles_labels()[0]
    plotting.legend_below(fig, handles, [h.get_label() for h in handles], ncol=3)
    return fig


def render(t):
    return draw(t["data"], t["critical"])


def claims(d: pd.DataFrame) -> dict:
    """The numbers the caption states, from the plotted table."""
    tab, adam = d[d.method == TABULAR], d[d.method == ADAM]
    n_q = d.drop_duplicates(["seed", "question"]).shape[0]
    upper = {(m, s): int((g.reached == "upper").sum()) for (m, s), g in d.groupby(["method", "step_size"])}
    big = tab[tab.step_size == tab.step_size.max()]
    neither, up5, low5 = big[big.reached == "neither"], big[big.reached == "upper"], big[big.reached == "lower"]
    small = tab[tab.step_size < tab.step_size.max()]
    a3 = adam[adam.step_size == adam.step_size.max()]
    same = (set(map(tuple, a3[a3.reached == "upper"][["seed", "question"]].to_numpy()))
            == set(map(tuple, up5[["seed", "question"]].to_numpy())))
    return dict(
        n_q=n_q, upper=upper, s_max=float(big.step_size.max()),
        small_steps=", ".join(f"{s:g}" for s in sorted(small.step_size.unique())),
        small_all_lower=bool((small.reached == "lower").all()),
        neither=len(neither), neither_below=int((neither.critical_lr < neither.step_size).sum()),
        neither_crit=(float(neither.critical_lr.min()), float(neither.critical_lr.max())) if len(neither) else None,
        up5=len(up5), low5=len(low5), stable_at_5=int((big[big.reached != "neither"].critical_lr
                                                      > big[big.reached != "neither"].step_size).sum()),
        up5_pi=float(up5.pi_ref.min()) if len(up5) else float("nan"),
        low5_pi=float(low5.pi_ref.max()) if len(low5) else float("nan"),
        adam_upper=int((adam.reached == "upper").sum()), adam_runs=len(adam),
        adam_crossed_is_upper=int((adam.crossed_separatrix == (adam.reached == "upper")).sum()),
        same_as_adam=same)


def caption(t) -> str:
    c = claims(t["data"])
    u = c["upper"]
    adam_counts = ", ".join(f"{u[(ADAM, lr)]} at lr {lr:g}" for lr in sorted(ADAM_MARKERS))
    lo, hi = c["neither_crit"] or (float("nan"), float("nan"))
    small = "in every question" if c["small_all_lower"] else "not in every question"
    above = "all" if c["neither_below"] == c["neither"] else f"{c['neither_below']} of them"
    others = c["up5"] + c["low5"]
    below = (f"the {others} below their bound" if c["stable_at_5"] == others
             else f"the {others} others ({c['stable_at_5']} below their bound)")
    return (
        f"Figure 20. Which stable point a run reaches where there are two (binary questions, G = 64, beta = 1, "
        f"direct KL; the {c['n_q']} multistable questions). The flow from pi_ref "
        f"reaches the lower stable point; a separatrix (open circles) bounds the upper one's basin (filled "
        f"circles: the stable points). (a) Exact-expectation "
        f"gradient steps, coloured by where each run ended; black: Figure 12's step bound 2/|F'(z*)|. Steps {c['small_steps']} end at the flow's point "
        f"{small}. At step {c['s_max']:g}: {c['neither']} runs end at neither point, {above} above their bound "
        f"({lo:.2f}-{hi:.2f}); {c['up5']} of {below} end at the upper point "
        f"(pi_ref(a) >= {c['up5_pi']:.3f}): their first steps overshoot the separatrix. (b) Adam (each question "
        f"alone; its three runs side by side, {ADAM_SPREAD:g} apart): the largest "
        f"pi(a) along each run; they end at the upper point "
        f"{adam_counts} of {c['n_q']}, exactly those whose path crossed the separatrix "
        f"({c['adam_crossed_is_upper']} of {c['adam_runs']} runs). Adam at lr 3e-3 and tabular steps of "
        f"{c['s_max']:g} send {'the same' if c['same_as_adam'] else 'different'} questions up. "
        f"Small steps reach the flow's point; a large step destabilises it (above the bound) or "
        f"jumps the separatrix (below it)."
    )


SPEC = FigureSpec(20, "multistable_basins", caption, tables, render, __name__, uses=("proximal_map",))
