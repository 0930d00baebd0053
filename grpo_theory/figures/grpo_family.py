"""Figure 19: the GRPO family on one binary question, with the trained points on top."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ..problem import Objective
from ..solvers import stationary_policy
from ._data import binary
from ._spec import FigureSpec

#: Figure 19: the question is one the family study trained (seed 0, question 2: pi_ref(correct) = 0.35498),
#: rounded; the trained points of that question (within PI_REF_TOL) are drawn on the curves.
FAMILY_PI_REF = 0.355
PI_REF_TOL = 1e-3
#: a modest grid: every variant's curve is smooth in beta (reverse penalty, no fold), 30 points suffice
FAMILY_BETAS = tuple(np.geomspace(0.05, 10.0, 30))
#: G = 4 is added to the issue's 2, 8, inf because most trained configurations ran at G = 4
FAMILY_GROUP_SIZES = (2, 4, 8, math.inf)
#: the entropy bonus's coefficient (the trained ``entropy_kl`` configuration's)
ENTROPY_COEF = 0.3

#: label -> the Objective fields of the variant (reverse k3 penalty throughout, as in the study)
VARIANTS = {
    "GRPO (reverse/scale)": dict(),
    "Dr. GRPO (reverse/shift)": dict(normalization="shift"),
    "RLOO": dict(advantage="rloo"),
    "REINFORCE++ baseline": dict(advantage="reinforce_pp"),
    "pass@2": dict(advantage="pass_at_k", pass_k=2),
    "pass@4": dict(advantage="pass_at_k", pass_k=4),
    "ties filtered": dict(filter_ties=True),
    f"entropy bonus {ENTROPY_COEF:g}": dict(entropy_coef=ENTROPY_COEF),
}
#: colours of the variants the shared palette does not name (GRPO's two come from plotting.method_color);
#: none is red (direct penalty), green (NLHF), dark grey (RLHF) or orange (trained, the diamonds' edge)
_OWN_COLORS = {k: plotting.COLORS[k] for k in ("RLOO", "REINFORCE++ baseline", "pass@2", "pass@4", "ties filtered")}
_OWN_COLORS[f"entropy bonus {ENTROPY_COEF:g}"] = plotting.COLORS["entropy bonus"]


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", ":": "reference", "D": "trained"}


def variant_color(label: str) -> str:
    """The colour of a family variant (GRPO's own two from the shared palette)."""
    return _OWN_COLORS.get(label) or plotting.method_color(label)


def _exists(kw: dict, G) -> bool:
    """pass@k needs k <= G."""
    return kw.get("pass_k") is None or kw["pass_k"] <= G


def data() -> pd.DataFrame:
    """The stationary pi(correct) of every variant against beta, for each G where the variant exists."""
    q = binary(FAMILY_PI_REF)
    rows = []
    for G in FAMILY_GROUP_SIZES:
        for label, kw in VARIANTS.items():
            if not _exists(kw, G):
                continue
            for beta in FAMILY_BETAS:
                sol = stationary_policy(q, Objective(beta=float(beta), group_size=G, **kw))
                rows.append(dict(variant=label, group_size=G, beta=float(beta), pi_a=float(sol.pi[0]),
                                 boundary=bool(sol.boundary)))
    return pd.DataFrame(rows)


def _variant_of(row) -> str | None:
    """The figure's label of a trained configuration (None: not one of the curves)."""
    if row.advantage == "pass_at_k":
        return f"pass@{int(row.pass_k)}"
    if row.advantage == "rloo":
        return "RLOO"
    if row.advantage == "reinforce_pp":
        return "REINFORCE++ baseline"
    if bool(row.filter_ties):
        return "ties filtered"
    if row.entropy_coef > 0:
        return f"entropy bonus {ENTROPY_COEF:g}" if math.isclose(row.entropy_coef, ENTROPY_COEF) else None
    return "GRPO (reverse/scale)"


def trained(study: pd.DataFrame) -> pd.DataFrame:
    """The family study's runs on the figure's question that lie on one of the curves (sequence level,
    beta > 0: the beta = 0 entropy run has no place on a log beta axis)."""
    d = study[(np.abs(study.pi_ref - FAMILY_PI_REF) < PI_REF_TOL) & (study.importance_level == "token")
              & (study.level == "sequence") & (study.beta > 0)].copy()
    d["variant"] = [_variant_of(r) for r in d.itertuples()]
    d = d[d.variant.notna()]
    return d[["config", "seed", "variant", "group_size", "beta", "pi_ref", "predicted", "measured",
              "measured_se"]].reset_index(drop=True)


def tables(inputs):
    study = inputs.results_table("family_study.csv")      # first: an absent table skips before any solving
    return {"data": data(), "trained": trained(study)}


def _coincident(df: pd.DataFrame, G) -> list[tuple[str, str]]:
    """Pairs of variants whose curves coincide at this G (to 1e-6), the second named after the first."""
    d = df[df.group_size == G]
    curves = {v: g.sort_values("beta").pi_a.to_numpy(float) for v, g in d.groupby("variant", sort=False)}
    names, out = list(curves), []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if curves[a].size == curves[b].size and np.allclose(curves[a], curves[b], atol=1e-6):
                out.append((a, b))
    return out


def _nested_widths(pairs: list[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    """Line width and z-order of each variant in a set of coinciding curves (the pairs joined into sets, in
    :data:`VARIANTS` order): the first widest and lowest, each next one narrower and above it."""
    sets: list[set[str]] = []
    for a, b in pairs:
        hit = [s for s in sets if a in s or b in s]
        merged = {a, b}.union(*hit)
        sets = [s for s in sets if s not in hit] + [merged]
    out = {}
    for members in sets:
        order = [v for v in VARIANTS if v in members]
        widths = np.linspace(2.8 if len(order) == 2 else 3.8, 0.9 if len(order) == 2 else 0.8, len(order))
        out.update({v: (float(w), 2.0 + k) for k, (v, w) in enumerate(zip(order, widths))})
    return out


def draw(df: pd.DataFrame, pts: pd.DataFrame) -> Figure:
    """Figure 19: pi(correct) against beta, one panel per G, every variant, trained points on top."""
    gs = list(FAMILY_GROUP_SIZES)
    fig, axes = plotting.new_figure(width=plotting.DOUBLE, height=3.3, ncols=len(gs), sharey=True)
    se_drawn = 0.0                                  # the largest bar drawn (2 SE), which the key states
    for k, (ax, G) in enumerate(zip(axes, gs)):
        nest = _nested_widths(_coincident(df, G))
        for label in VARIANTS:
            d = df[(df.variant == label) & (df.group_size == G)].sort_values("beta")
            if d.empty:
                continue
            # every variant solid in its colour; curves that coincide are nested, each narrower than the one
            # under it, so all stay visible (a thin line inside a wide one; three in (d) at G = inf)
            lw, z = nest.get(label, (1.3, 2))
            ax.semilogx(d.beta, d.pi_a, "-", color=variant_color(label), lw=lw, zorder=z, label=label)
        plotting.reference(ax.axhline(FAMILY_PI_REF, color="0.45", ls=":", lw=0.9))
        p = pts[pts.group_size == G] if np.isfinite(G) else pts.iloc[:0]
        if len(p):
            se_drawn = max(se_drawn, float(2 * p.measured_se.max()))
            ax.errorbar(p.beta, p.measured, yerr=2 * p.measured_se, fmt="none",
                        ecolor=plotting.METHOD_COLORS["trained"], elinewidth=0.8, capsize=1.5, zorder=5)
            sc = ax.scatter(p.beta, p.measured, marker="D", s=22, c=[variant_color(v) for v in p.variant],
                            edgecolors=plotting.METHOD_COLORS["trained"], linewidths=1.1, zorder=6)
            sc.set_gid("trained")
        plotting.panel(ax, "abcd"[k], plotting.g_text(G))
        ax.set_xlabel(r"$\beta$")
        ax.set_ylim(0.3, 1.0)
    axes[0].set_ylabel(r"stationary $\pi_\theta$(correct)")
    handles = [Line2D([], [], color=variant_color(lab)) for lab in VARIANTS]
    labels = list(VARIANTS)
    handles.append(Line2D([], [], marker="D", ls="none", mfc="0.8", mec=plotting.METHOD_COLORS["trained"], mew=1.1))
    # the bars (2 SE) are smaller than the marker at print size: the key says how small, not "±2 SE"
    labels.append(f"trained\n(bars ±2 SE ≤ {plotting.at_most(se_drawn, '.0e')})")
    plotting.legend_below(fig, handles, labels, ncol=5)
    fig.suptitle(r"The GRPO family on one binary question, $\pi_{\mathrm{ref}}$(correct) = "
                 f"{FAMILY_PI_REF:g} (dotted), reverse k3 penalty", fontsize=8.5)
    return fig


def render(t):
    return draw(t["data"], t["trained"])


def _at(df: pd.DataFrame, variant: str, G, beta: float) -> float:
    d = df[(df.variant == variant) & (df.group_size == G)]
    return float(d.iloc[(d.beta - beta).abs().argmin()].pi_a)


def caption(t) -> str:
    df, pts = t["data"], t["trained"]
    b1 = float(min(FAMILY_BETAS, key=lambda b: abs(b - 1.0)))
    at = {v: [_at(df, v, G, b1) for G in (2, 8, math.inf) if not df[(df.variant == v) & (df.group_size == G)].empty]
          for v in VARIANTS}
    lo = min(at, key=lambda v: min(at[v]))
    hi = max(at, key=lambda v: max(at[v]))
    coinc = "; ".join(f"G = {G:g}: " + ", ".join(f"{b} = {a}" for a, b in _coincident(df, G))
                      for G in FAMILY_GROUP_SIZES if _coincident(df, G))
    err = np.abs(pts.measured - pts.predicted)
    return (
        f"Figure 19. The GRPO family on one binary question (pi_ref(correct) = {FAMILY_PI_REF:g}, rewards 1 and 0, "
        f"reverse k3 penalty): the stationary pi(correct) from the exact engine against beta in "
        f"[{min(FAMILY_BETAS):g}, {max(FAMILY_BETAS):g}] ({len(FAMILY_BETAS)} points) for G = 2, 4, 8 and inf. "
        f"Variants: the group advantage with the std "
        f"(GRPO) and without (Dr. GRPO), RLOO, REINFORCE++ with a group baseline, the analytic pass@k advantage "
        f"(k = 2; k = 4 only where G >= 4), tied groups filtered, and an entropy bonus of {ENTROPY_COEF:g} "
        f"(on GRPO). At k = G pass@k has no signal and stays at pi_ref. Coinciding curves, each narrower inside the "
        f"one before: {coinc}. At beta = {b1:.3g} the pull ranges from {min(at[lo]):.3f} ({lo}) to "
        f"{max(at[hi]):.3f} ({hi}) over G = 2, 8, inf. Diamonds: the family study's runs on this question "
        f"(docs/results/family_study.csv, seed 0; {len(pts)} runs: {', '.join(sorted(set(pts.config)))}), "
        f"within {plotting.at_most(err.max(), '.1e')} of their predictions; the beta = 0 entropy-only run and the sequence-level "
        f"ratio (GSPO, another question) are not on these axes."
    )


SPEC = FigureSpec(19, "grpo_family", caption, tables, render, __name__)
