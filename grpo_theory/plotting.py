"""Figure builders: DataFrame in, matplotlib Figure out (no file I/O here).

One style for the set: column width (3.4 in), 8-9 pt text, viridis for ordered
parameters, a dotted diagonal for pi_theta = pi_ref.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib import cm, colors
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

COLUMN = 3.4
STYLE = {
    "font.size": 8, "axes.labelsize": 8, "axes.titlesize": 8.5, "legend.fontsize": 6.8,
    "xtick.labelsize": 7, "ytick.labelsize": 7, "lines.linewidth": 1.3, "axes.linewidth": 0.6,
    "legend.frameon": False, "savefig.bbox": "tight", "savefig.dpi": 220, "font.family": "DejaVu Sans",
}
METHOD_COLORS = {
    "GRPO reverse/scale": "#1f5fa8", "GRPO reverse/shift": "#6aa5e0", "GRPO direct/scale": "#b2182b",
    "GRPO direct/shift": "#ef8a62", "RLHF": "#333333", "NLHF": "#2ca25f",
}


def _new(width=COLUMN, height=2.7, ncols=1) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, axes


def _param_colors(values) -> list:
    norm = colors.LogNorm(min(values), max(values)) if min(values) > 0 else colors.Normalize()
    return [cm.viridis(0.8 * norm(v)) for v in values]      # viridis' yellow top is unreadable on white


def _infty(text) -> str:
    """Labels say "∞", never "inf"."""
    import re

    return re.sub(r"\binf\b", "∞", str(text))


def _diagonal(ax) -> None:
    ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9, zorder=0)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
    ax.set_ylabel(r"$\pi_\theta(a)$ at the stationary point")


def binary_curves(df: pd.DataFrame, param: str, label: str, title: str,
                  jump_at_zero: bool = True, measured: pd.DataFrame | None = None,
                  overlay: pd.DataFrame | None = None, overlay_label: str = "",
                  log_inset: bool = False) -> Figure:
    """pi(a) against pi_ref(a), one curve per value of ``param`` (Figures 1-4, 9).

    ``overlay``: another figure's curves (same ``param``), dashed and thin, for contrast;
    ``log_inset``: a second panel on a log pi_ref axis down to the grid's smallest value, showing
    how each curve behaves as pi_ref -> 0.
    """
    if log_inset:
        fig, (ax, logax) = _new(width=2 * COLUMN * 0.85, height=2.8, ncols=2)
    else:
        fig, (ax,) = _new()
    values = list(dict.fromkeys(df[param]))
    finite = [v for v in values if np.isfinite(v)]
    cols = _param_colors(finite) + (["black"] if len(finite) < len(values) else [])
    for v, c in zip(values, cols):
        d = df[df[param] == v].sort_values("pi_ref_a")
        text = "∞" if not np.isfinite(v) else f"{v:g}"
        ax.plot(d.pi_ref_a, d.pi_a, color=c, label=f"{label} = {text}")
        if jump_at_zero:
            # the value just right of 0 (open circle) against the value at 0, which is 0 (filled)
            lim = d.pi_a.iloc[0]
            if lim > 0.02:
                ax.plot([0], [lim], marker="o", mfc="white", mec=c, ms=3.2, mew=0.9, zorder=3)
    if jump_at_zero:
        ax.plot([0], [0], marker="o", color="black", ms=3.2, zorder=4)
    if overlay is not None:
        for v, c in zip(values, cols):
            d = overlay[overlay[param] == v].sort_values("pi_ref_a")
            ax.plot(d.pi_ref_a, d.pi_a, "--", color=c, lw=0.7, alpha=0.8)
        ax.plot([], [], "--", color="0.4", lw=0.7, label=overlay_label)
    if log_inset:
        for v, c in zip(values, cols):
            d = df[df[param] == v].sort_values("pi_ref_a")
            logax.plot(d.pi_ref_a, d.pi_a, color=c, lw=1.0)
        logax.set_xscale("log")
        logax.set_xlim(df.pi_ref_a.min(), 1.0)
        logax.set_ylim(-0.02, 1.02)
        logax.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$ (log scale)")
        logax.set_title(rf"the same, down to $\pi_{{\mathrm{{ref}}}}(a)$ = {df.pi_ref_a.min():.0e}")
    if measured is not None and len(measured):
        for v, c in zip(values, cols):
            m = measured[measured[param] == v]
            if len(m):
                ax.errorbar(m.pi_ref_a, m.measured, yerr=m.measured_se, fmt="o", ms=2.6, color=c, mec="white",
                            mew=0.4, elinewidth=0.8, capsize=1.2, zorder=5)
        ax.plot([], [], "o", color="0.3", ms=2.6, label="trained model")
    _diagonal(ax)
    ax.set_title(title)
    ax.legend(loc="lower right", handlelength=1.4, labelspacing=0.25)
    return fig


def convergence_in_g(df: pd.DataFrame, fits: pd.DataFrame, beta: float) -> Figure:
    """Figure 5: |pi_G - pi_inf| against G, log-log, with fitted slopes."""
    fig, (ax,) = _new(height=2.6)
    for (p, d), c in zip(df.groupby("pi_ref_a"), _param_colors(sorted(df.pi_ref_a.unique()))):
        fit = fits[fits.pi_ref_a == p].iloc[0]
        ax.loglog(d.group_size, d.abs_error, "o-", ms=2.8, color=c,
                  label=rf"$\pi_{{\mathrm{{ref}}}}(a)$ = {p:g}: slope {fit.slope:.2f}")
        g = d.group_size[d.group_size >= 64].to_numpy(float)
        ax.loglog(g, np.exp(fit.intercept) * g**fit.slope, color=c, ls="--", lw=1.6, alpha=0.55, zorder=3)
    # a reference slope of -1 (O(1/G)), anchored below the data
    gs = np.array(sorted(df.group_size.unique()), dtype=float)
    anchor = 0.3 * float(df[df.group_size == gs[0]].abs_error.min())
    ax.loglog(gs, anchor * gs[0] / gs, color="0.5", ls=":", lw=1.0, label="slope −1 (reference)")
    ax.set_xticks(gs[::2])
    ax.set_xticklabels([f"{int(g)}" for g in gs[::2]])
    ax.minorticks_off()
    ax.set_xlabel("group size $G$")
    ax.set_ylabel(r"$|\pi_G(a) - \pi_\infty(a)|$")
    ax.set_title(rf"Approach to the large-$G$ limit (reverse/scale, $\beta$ = {beta:g})")
    ax.legend(loc="lower left")
    ax.grid(True, which="major", lw=0.3, alpha=0.5)
    return fig


def all_variants(df: pd.DataFrame, pi_ref_a: float) -> Figure:
    """Figure 6: pi(a) against beta for every variant, one panel per G, RLHF and NLHF in each."""
    gs = [g for g in dict.fromkeys(df.group_size) if not (isinstance(g, float) and math.isnan(g))]
    fig, axes = _new(width=2 * COLUMN, height=2.5, ncols=len(gs))
    for ax, G in zip(axes, gs):
        for method, c in METHOD_COLORS.items():
            if method.startswith("GRPO"):
                d = df[(df.method == method) & (df.group_size == G)]
            else:
                d = df[df.method == method]
            ls = "--" if method in ("RLHF", "NLHF") else "-"
            d = d.sort_values("beta")
            beta, pi = d.beta.to_numpy(float), d.pi_a.to_numpy(float)
            # a jump between two grid points (pi_ref leaving the vertex's basin) is a break, not a steep line
            cut = np.flatnonzero(np.abs(np.diff(pi)) > 0.15) + 1
            beta, pi = np.insert(beta, cut, np.nan), np.insert(pi, cut, np.nan)
            ax.semilogx(beta, pi, color=c, ls=ls, label=_infty(method))
        # curves that coincide (e.g. direct/scale with RLHF at G = 2) would hide each other: mark them
        panel = {m: df[(df.method == m) & ((df.group_size == G) if m.startswith("GRPO") else True)]
                 .sort_values("beta").pi_a.to_numpy(float) for m in METHOD_COLORS}
        names = list(panel)
        notes = []
        if not np.isfinite(G):     # direct/scale at G = inf: the vertex a is a stable limit point for every beta
            d = df[df.method == "GRPO direct/scale"]
            ax.semilogx(d.beta, np.ones(len(d)), color=METHOD_COLORS["GRPO direct/scale"], lw=2.2, alpha=0.3)
            notes.append("thick pale line: the vertex, a second stable branch")
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if panel[a].size == panel[b].size and panel[a].size and np.allclose(panel[a], panel[b], atol=1e-6):
                    d = df[df.method == b].sort_values("beta")
                    ax.semilogx(d.beta.to_numpy()[::5], panel[b][::5], "o", ms=3.2, mfc="none",
                                mec=METHOD_COLORS[b], mew=0.8)
                    notes.append(f"○: {_infty(b)} = {_infty(a)}")
        for k, note in enumerate(notes):
            ax.text(0.03, 0.04 + 0.07 * k, note, transform=ax.transAxes, fontsize=5.5)
        ax.axhline(pi_ref_a, color="0.45", ls=":", lw=0.9)
        ax.set_title(f"G = {'∞' if not np.isfinite(G) else int(G)}")
        ax.set_xlabel(r"$\beta$")
        ax.set_ylim(-0.02, 1.02)
    axes[0].set_ylabel(r"$\pi_\theta(a)$ at the stationary point")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=6.8)
    fig.suptitle(rf"One binary question, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g} (dotted), "
                 "every variant at the same $\\beta$", fontsize=8.5)
    return fig


def non_uniqueness(points: pd.DataFrame, region: pd.DataFrame, pi_ref_a: float) -> Figure:
    """Figure 7: (a) stationary points against beta; (b) how many, over (beta, pi_ref)."""
    fig, (ax, bx) = _new(width=2 * COLUMN, height=2.9, ncols=2)
    interior = points[~points.boundary]
    top = 1 - 1e-6                      # the vertex pi(a) = 1, drawn at the logit axis' top
    stable = interior[interior.stable == True].sort_values("beta")            # noqa: E712
    unstable = interior[interior.stable == False].sort_values("beta")         # noqa: E712
    # basins: above the unstable branch (the separatrix) the flow goes to the vertex, below it to
    # the interior stable point; left of the fold only the vertex is left
    ax.fill_between(unstable.beta, unstable.pi_a, top, color="#b2182b", alpha=0.10, lw=0,
                    label="basin of the vertex")
    left = points[points.beta <= unstable.beta.min()].beta if len(unstable) else points.beta
    ax.fill_between(np.append(np.sort(left.unique()), unstable.beta.min() if len(unstable) else []), 0.05, top,
                    color="#b2182b", alpha=0.10, lw=0)
    ax.fill_between(stable.beta, 0.05, unstable.set_index("beta").pi_a.reindex(stable.beta, method="nearest"),
                    color="#2166ac", alpha=0.08, lw=0, label="basin of the interior point")
    ax.semilogx(stable.beta, stable.pi_a, "-", color="#b2182b", label="stable")
    ax.semilogx(unstable.beta, unstable.pi_a, "--", color="#b2182b", label="unstable (separatrix)")
    vertex = points[points.boundary]
    ax.semilogx(vertex.beta, np.full(len(vertex), top), color="#b2182b", lw=2.6, alpha=0.5,
                label=r"vertex $\pi(a) = 1$ (limit, stable)")
    if len(stable):
        fold = stable.iloc[0]
        ax.plot(fold.beta, fold.pi_a, "o", ms=4, color="black", zorder=5)
        ax.annotate(rf"fold, $\beta$ = {fold.beta:.3g}", (fold.beta, fold.pi_a), xytext=(6, -2),
                    textcoords="offset points", fontsize=6.5)
    ax.axhline(pi_ref_a, color="0.45", ls=":", lw=0.9)
    ax.set_yscale("logit")
    ax.set_ylim(0.05, top * 1.0000001 if top < 1 else top)
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(r"$\pi(a)$ at a stationary point (logit scale)")
    ax.set_title(rf"(a) direct KL, $G\to\infty$, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g}")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.93), fontsize=5.5, framealpha=0.9)
    betas = np.sort(region.beta.unique())
    ps = np.sort(region.pi_ref_a.unique())
    Z = region.pivot(index="pi_ref_a", columns="beta", values="n_stationary_points").to_numpy()
    cmap = colors.ListedColormap(["#fde0c5", "#b2182b"])
    bx.pcolormesh(betas, ps, Z, cmap=cmap, vmin=1, vmax=3, shading="auto", rasterized=True)
    bx.set_xscale("log")
    bx.set_xlabel(r"$\beta$")
    bx.set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
    bx.set_title("(b) number of stationary points")
    bx.legend(handles=[Line2D([], [], marker="s", ls="", color="#fde0c5", ms=7, label="1: vertex a only"),
                       Line2D([], [], marker="s", ls="", color="#b2182b", ms=7,
                              label="3: vertex + stable + unstable")], loc="upper left", frameon=True)
    return fig


def _ternary(pi: np.ndarray) -> np.ndarray:
    """Barycentric -> 2-d: a at the top, b bottom left, c bottom right."""
    corners = np.array([[0.5, math.sqrt(3) / 2], [0.0, 0.0], [1.0, 0.0]])
    return pi @ corners


def _simplex_axes(ax, labels, rewards) -> None:
    """The probability simplex as a triangle with labelled vertices (a top, b left, c right)."""
    tri = _ternary(np.eye(3))
    ax.fill(tri[:, 0], tri[:, 1], facecolor="0.97", edgecolor="0.3", lw=0.7)
    for level in (0.2, 0.4, 0.6, 0.8):             # barycentric grid: pi(o) = level for each vertex o
        for o in range(3):
            ends = []
            for other in (o + 1) % 3, (o + 2) % 3:
                p = np.zeros(3)
                p[o], p[other] = level, 1 - level
                ends.append(_ternary(p))
            ends = np.array(ends)
            ax.plot(ends[:, 0], ends[:, 1], color="0.8", lw=0.45, zorder=1.5)
    for i, name in enumerate(labels):
        r = "" if rewards is None else f" (r = {rewards[i]:g})"
        pos = {0: (tri[0, 0], tri[0, 1] + 0.03, "bottom"), 1: (tri[1, 0], -0.04, "top"),
               2: (tri[2, 0], -0.04, "top")}[i]
        ax.text(pos[0], pos[1], name + r, ha="center", va=pos[2], fontsize=7.5)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.1, math.sqrt(3) / 2 + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")


def simplex_paths(df: pd.DataFrame, pi_ref, labels=("a", "b", "c"), rewards=None, mark_beta: float = 1.0) -> Figure:
    """Figure 8: the stationary policy's path on the simplex as beta goes from large to small."""
    fig, (ax,) = _new(height=3.3)
    _simplex_axes(ax, labels, rewards)
    palette = ["#6baed6", "#2171b5", "#08306b", "#b2182b", "#333333", "#2ca25f"]
    for (method, d), c in zip(df.groupby("method", sort=False), palette):
        d = d.sort_values("beta", ascending=False)
        xy = _ternary(d[["pi_a", "pi_b", "pi_c"]].to_numpy())
        ls = "--" if method in ("RLHF", "NLHF") else "-"
        ax.plot(xy[:, 0], xy[:, 1], color=c, ls=ls, label=_infty(method))
        k = int(np.argmin(np.abs(np.log(d.beta.to_numpy() / mark_beta))))
        ax.plot(xy[k, 0], xy[k, 1], "o", color=c, ms=3.2, mec="white", mew=0.5)
    ref = _ternary(np.asarray(pi_ref))
    ax.plot(ref[0], ref[1], "k*", ms=6, label=r"$\pi_{\mathrm{ref}}$ ($\beta\to\infty$)")
    ax.plot([], [], "o", color="0.4", ms=3.2, label=rf"$\beta$ = {mark_beta:g}")
    ax.legend(loc="upper left", fontsize=6.2, bbox_to_anchor=(-0.06, 1.02))
    ax.set_title(r"Stationary policy as $\beta$ decreases from 20 to 0.02", pad=2)
    return fig


def predicted_vs_measured(df: pd.DataFrame, group_col: str = "config") -> Figure:
    """Scatter of measured against predicted answer probabilities with the identity line."""
    fig, (ax,) = _new(height=3.0)
    groups = list(dict.fromkeys(df[group_col]))
    palette = cm.tab10(np.arange(10)) if len(groups) <= 10 else cm.tab20(np.arange(20))
    for g, c in zip(groups, palette):
        d = df[df[group_col] == g]
        ax.errorbar(d.predicted, d.measured, yerr=d.get("measured_se"), fmt="o", ms=2.6, color=c,
                    elinewidth=0.7, capsize=1, label=_infty(g))
    ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(r"predicted $\pi(a)$ (theory, from the reference model)")
    ax.set_ylabel(r"measured $\pi_\theta(a)$ (trained model)")
    ax.legend(loc="upper left", fontsize=5.8)
    return fig


def phase_portraits(field: pd.DataFrame, curves: pd.DataFrame, pi_ref_a: float) -> Figure:
    """Figure 10: direction and speed of d pi(a)/dt over (beta, pi(a)), stationary points on top."""
    variants = list(dict.fromkeys(field.variant))
    fig, axes = _new(width=2 * COLUMN, height=2.7, ncols=len(variants))
    for ax, name in zip(axes, variants):
        f = field[field.variant == name]
        # speed in the logit of pi(a), the axis' own unit (d pi/dt vanishes near 1 just from pi(1 - pi))
        x = f.pi_a.to_numpy()
        speed = np.abs(f.dpi_dt.to_numpy()) / (x * (1 - x))
        u = np.zeros_like(speed)
        v = np.sign(f.dpi_dt.to_numpy())
        c = np.log10(speed + 1e-12)
        q = ax.quiver(np.log10(f.beta), f.pi_a, u, v, c, cmap="Greys", clim=(-3.5, 0.5), scale=38, width=0.004,
                      headwidth=3.5, headlength=3.5, pivot="mid")
        cur = curves[curves.variant == name]
        for stable, ls in ((True, "-"), (False, "--")):
            d = cur[(cur.stable == stable) & (~cur.boundary)].sort_values("beta")
            ax.plot(np.log10(d.beta), d.pi_a, ls=ls, color="#b2182b", lw=1.6,
                    label="stable" if stable else "unstable")
        vert = cur[cur.boundary]
        top = 1 - 1e-6                   # the vertex pi(a) = 1, drawn at the logit axis' top
        if len(vert):
            ax.plot(np.log10(vert.beta), np.full(len(vert), top), color="#b2182b", lw=2.6, alpha=0.5,
                    label="vertex (limit)")
        fold = cur[(cur.stable == True) & (~cur.boundary)].sort_values("beta")    # noqa: E712
        if len(cur[(cur.stable == False) & (~cur.boundary)]) and len(fold):       # noqa: E712
            ax.plot(np.log10(fold.beta.iloc[0]), fold.pi_a.iloc[0], "o", ms=3.5, color="black", zorder=6,
                    label="fold")
        ax.axhline(pi_ref_a, color="#1f5fa8", ls=":", lw=1.0, label=r"$\pi_{\mathrm{ref}}(a)$")
        ax.set_xticks([-0.5, 0, 0.5, 1.0, 1.3])
        ax.set_xticklabels(["0.3", "1", "3", "10", "20"])
        ax.set_xlabel(r"$\beta$")
        ax.set_yscale("logit")
        ax.set_ylim(0.02, top)
        ax.set_title(_infty(name))
    axes[0].set_ylabel(r"$\pi(a)$ (logit scale)")
    axes[-1].legend(loc="center left", fontsize=6, frameon=True)
    fig.colorbar(q, ax=axes, label=r"$\log_{10}|d\,\mathrm{logit}\,\pi(a)/dt|$", shrink=0.8)
    return fig


def simplex_flows(traj: pd.DataFrame, points: pd.DataFrame, pi_ref, labels=("a", "b", "c"),
                  rewards=None, beta=None) -> Figure:
    """Figure 11: flow trajectories on the simplex with the stationary points."""
    fig, (ax,) = _new(height=3.2)
    _simplex_axes(ax, labels, rewards)
    for s, d in traj.groupby("start"):
        xy = _ternary(d[["pi_a", "pi_b", "pi_c"]].to_numpy())
        color = "#1f5fa8" if s else "black"
        ax.plot(xy[:, 0], xy[:, 1], color=color, lw=0.9 if s else 1.4, alpha=0.85)
        ax.plot(xy[0, 0], xy[0, 1], "o", color=color, ms=2.2)
        mid = len(xy) // 3
        ax.annotate("", xy[mid + 1], xy[mid], arrowprops=dict(arrowstyle="->", color=color, lw=0.8))
    for row in points.itertuples():
        xy = _ternary(np.array([row.pi_a, row.pi_b, row.pi_c]))
        ax.plot(*xy, "o", ms=6, mfc="#b2182b" if row.stable else "white", mec="#b2182b", mew=1.3, zorder=5)
    ref = _ternary(np.asarray(pi_ref))
    ax.plot(*ref, "k*", ms=6, zorder=6)
    ax.plot([], [], "o", mfc="#b2182b", mec="#b2182b", label="stable")
    ax.plot([], [], "o", mfc="white", mec="#b2182b", label="unstable (saddle)")
    ax.plot([], [], "k*", label=r"$\pi_{\mathrm{ref}}$ (its path in black)")
    ax.legend(loc="upper left", fontsize=6.2, bbox_to_anchor=(-0.06, 1.02))
    ax.set_title(rf"Gradient flow, direct KL, $G\to\infty$, $\beta$ = {beta:g}", pad=2)
    _edge_inset(ax, traj, points)
    return fig


def _edge_inset(ax, traj: pd.DataFrame, points: pd.DataFrame) -> None:
    """Zoom on the a-b edge: position along it against log pi(c), where an attractor with pi(c) ~ 1e-4
    sits next to a saddle; trajectories that come near the edge show which way they go."""
    edge = points[points.pi_c < 0.01]
    near = [d for _, d in traj.groupby("start") if d.pi_c.min() < 0.01]
    if not len(edge) or not near:
        return
    inset = ax.inset_axes([0.70, 0.52, 0.32, 0.32])
    for d in near:
        along = d.pi_a / (d.pi_a + d.pi_b)
        inset.plot(along, d.pi_c, color="#1f5fa8", lw=0.8)
        inset.plot(along.iloc[0], d.pi_c.iloc[0], "o", color="#1f5fa8", ms=2)
    for row in edge.itertuples():
        inset.plot(row.pi_a / (row.pi_a + row.pi_b), row.pi_c, "o", ms=5, mfc="#b2182b" if row.stable else "white",
                   mec="#b2182b", mew=1.1, zorder=5)
    inset.set_yscale("log")
    inset.set_ylim(3e-6, 0.1)
    inset.set_xlim(0.55, 1.0)
    inset.set_xlabel(r"$\pi(a)/(\pi(a)+\pi(b))$", fontsize=5.5, labelpad=1)
    inset.set_ylabel(r"$\pi(c)$", fontsize=5.5, labelpad=0)
    inset.tick_params(labelsize=5, length=2, pad=1)
    inset.set_title("near the a-b edge", fontsize=5.5, pad=1.5)


def proximal_cobweb(curve: pd.DataFrame, marks: pd.DataFrame, orbits: pd.DataFrame, pi_ref_a: float,
                    beta: float, step_map: pd.DataFrame | None = None) -> Figure:
    """Figure 12: the proximal map against the identity (cobweb), its orbit against the flow, and
    (c, d) the largest stable step size of plain gradient steps over (beta, pi_ref)."""
    if step_map is None:
        fig, (ax, bx) = _new(width=2 * COLUMN, height=2.8, ncols=2)
    else:
        fig = Figure(figsize=(2 * COLUMN, 5.4), layout="constrained")
        grid = fig.subplots(2, 2, squeeze=False)
        ax, bx = grid[0]
        variants = list(dict.fromkeys(step_map.variant))
        for cx, name in zip(grid[1], variants):
            m = step_map[step_map.variant == name]
            b, p = np.sort(m.beta.unique()), np.sort(m.pi_ref_a.unique())
            z = np.log10(m.pivot(index="pi_ref_a", columns="beta", values="critical_lr").loc[p, b].to_numpy())
            mesh = cx.pcolormesh(b, p, z, shading="nearest", cmap="viridis", vmin=-0.5, vmax=2.5)
            cs = cx.contour(b, p, z, levels=[0, 0.5, 1, 1.5, 2], colors="white", linewidths=0.7)
            cx.clabel(cs, fmt=lambda v: f"{10 ** v:.3g}", fontsize=5.5)
            cx.set_xscale("log")
            cx.set_xlabel(r"$\beta$")
            cx.set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
            cx.set_title(f"({'cd'[variants.index(name)]}) largest stable step, {_infty(name)}", fontsize=7.5)
        fig.colorbar(mesh, ax=grid[1, :], label=r"$\log_{10}$ critical step (grpo_steps lr)", shrink=0.9)
    ax.plot(curve.pi_a, curve.f, color="#1f5fa8", label=r"$f$: proximal map")
    ax.plot(curve.pi_a, curve.f_f, color="#6aa5e0", lw=0.9, ls="--", label=r"$f\circ f$")
    ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9)
    it = orbits[orbits.kind == "proximal iteration"].pi_a.to_numpy()
    web_x, web_y = [it[0]], [it[0]]
    for a, b in zip(it[:-1], it[1:]):
        web_x += [a, b]
        web_y += [b, b]
    ax.plot(web_x, web_y, color="0.35", lw=0.6, alpha=0.9, label="iteration (cobweb)")
    fps = marks[marks.kind == "fixed point"]
    for row in fps.itertuples():
        ax.plot(row.pi_a, row.pi_a, "o", ms=5.5, mfc="white", mec="#b2182b", mew=1.3, zorder=5)
    cyc = marks[marks.kind == "2-cycle"]
    ax.plot(cyc.pi_a, cyc.pi_a, "s", color="#2ca25f", ms=4.5, zorder=5, label="2-cycle (stable)")
    ax.plot([], [], "o", mfc="white", mec="#b2182b", label="fixed point: flow-stable, map-unstable")
    ax.set_xlim(0, 0.8)
    ax.set_ylim(0, 0.8)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\pi_{n-1}(a)$")
    ax.set_ylabel(r"$\pi_n(a)$")
    ax.set_title(rf"(a) proximal map, direct KL, $G\to\infty$, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g}, "
                 rf"$\beta$ = {beta:g}", fontsize=7.5)
    ax.legend(loc="upper left", fontsize=5.8)
    pr = orbits[orbits.kind == "proximal iteration"]
    fl = orbits[orbits.kind != "proximal iteration"]
    bx.plot(pr.n, pr.pi_a, "o-", ms=2.4, lw=0.8, color="#1f5fa8", label="proximal iteration (step n, bottom axis)")
    tx = bx.twiny()                   # step n and flow time t are different units: two x axes
    tx.plot(fl.n, fl.pi_a, color="#b2182b", lw=1.3)
    bx.plot([], [], color="#b2182b", label="gradient flow (time t, top axis)")
    for row in fps.itertuples():
        if row.flow_stable:
            bx.axhline(row.pi_a, color="#b2182b", ls=":", lw=0.8)
    bx.set_xlabel("proximal step n")
    tx.set_xlabel("flow time t", color="#b2182b", fontsize=7)
    tx.tick_params(axis="x", colors="#b2182b", labelsize=6.5)
    bx.set_ylabel(r"$\pi(a)$")
    bx.set_title("(b) same start: the flow settles, the iteration cycles", fontsize=7.5, pad=18)
    bx.set_ylim(0.05, 0.72)
    bx.legend(loc="upper right", fontsize=6)
    return fig


#: marker and face of each source in Figure 9 (others get the default)
SOURCE_STYLE = {"small GPT": ("o", 3.2), "SmolLM2-135M, lr 1e-3": ("D", 4.5), "SmolLM2-135M, lr 3e-4": ("^", 4.8),
                "SmolLM2, TRL": ("s", 4.5)}


def trained_panels(curves: pd.DataFrame, measured: pd.DataFrame) -> Figure:
    """Figure 9: per group size, (top) the theory's stable branches per beta and penalty with the
    trained points, (bottom) the residual measured - predicted with its error bar, symlog scale."""
    gs = sorted(measured.group_size.unique())
    fig = Figure(figsize=(COLUMN * min(3, len(gs)) * 0.95, 5.6), layout="constrained")
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1.35, 1])
    betas = sorted(measured.beta.unique())
    cols = dict(zip(betas, _param_colors(betas) if len(betas) > 1 else ["#1f5fa8"]))
    dash = {"reverse": "-", "direct": "--"}
    sources = list(dict.fromkeys(measured.source))
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for (beta, pen, branch), cur in curves[curves.group_size == G].groupby(["beta", "penalty", "branch"]):
            cur = cur.sort_values("pi_ref_a")
            top.plot(cur.pi_ref_a, cur.pi_a, dash.get(pen, "-") if branch == 0 else ":", color=cols[beta],
                     lw=1.0 if branch == 0 else 0.9)
        for src in sources:
            marker, size = SOURCE_STYLE.get(src, ("o", 3.5))
            for (beta, pen), m in measured[(measured.group_size == G) & (measured.source == src)].groupby(
                    ["beta", "penalty"]):
                face = cols[beta] if pen == "reverse" else "white"
                kw = dict(fmt=marker, ms=size, color=cols[beta], mfc=face, mec="black", mew=0.6, elinewidth=0.7,
                          capsize=1.0, zorder=5, alpha=0.85)
                top.errorbar(m.pi_ref_a, m.measured, yerr=m.measured_se, **kw)
                bottom.errorbar(m.pi_ref_a, m.residual, yerr=m.residual_se, **kw)
        _diagonal(top)
        top.set_title(f"G = {_infty(int(G) if np.isfinite(G) else 'inf')}")
        bottom.axhline(0, color="0.3", lw=0.8)
        bottom.set_yscale("symlog", linthresh=0.01, linscale=1.0)
        bottom.set_ylim(-1.1, 1.1)
        bottom.set_xlim(-0.02, 1.02)
        bottom.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
        bottom.set_ylabel("measured - predicted" if j == 0 else "")
        bottom.axhspan(-0.01, 0.01, color="0.9", zorder=0)
    handles = [Line2D([], [], color=cols[b], lw=1.2, label=rf"$\beta$ = {b:g}") for b in betas]
    handles += [Line2D([], [], color="0.3", ls=dash[p], lw=1.0, label=f"{p} penalty (filled/open)")
                for p in dash if p in set(measured.penalty)]
    if (curves.branch == 1).any():
        handles.append(Line2D([], [], color="0.3", ls=":", lw=0.9, label="other stable point"))
    handles += [Line2D([], [], ls="", marker=SOURCE_STYLE.get(s, ("o", 3.5))[0], mfc="0.7", mec="black", label=s)
                for s in sources]
    # the legend goes where the points are fewest
    crowd = [len(measured[measured.group_size == G]) for G in gs]
    axes[0, int(np.argmin(crowd))].legend(handles=handles, loc="lower right", fontsize=5.5)
    return fig


def reward_kl_frontier(df: pd.DataFrame) -> Figure:
    """Figure 15: (a) expected reward against KL(pi || pi_ref) as beta varies, RLHF the optimal frontier;
    (b) each GRPO variant's reward deficit below the frontier at its own KL."""
    fig, axes = _new(width=2 * COLUMN, height=2.9, ncols=2)
    palette = ["#6baed6", "#2171b5", "#08306b", "#b2182b"]
    grpo = [m for m in dict.fromkeys(df.method) if m not in ("RLHF", "NLHF")]
    r = df[df.method == "RLHF"].sort_values("kl_direct")
    axes[0].plot(r.kl_direct, r.expected_reward, "k--", lw=1.4, label="RLHF (optimal frontier)", zorder=3)
    for m, c in zip(grpo, palette):
        d = df[df.method == m].sort_values("kl_direct")
        label = _infty(m)
        axes[0].plot(d.kl_direct, d.expected_reward, "-", color=c, lw=1.0, label=label)
        axes[1].plot(d.kl_direct, d.reward_deficit, "-", color=c, lw=1.2, marker="o", ms=2, label=label)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel(r"KL($\pi\,\|\,\pi_{\mathrm{ref}}$)")
    axes[1].set_yscale("log")
    axes[0].set_ylabel(r"$E_\pi[r]$")
    axes[1].set_ylabel("reward below the RLHF frontier")
    axes[0].legend(fontsize=6.2, loc="upper left")
    axes[0].set_title(r"(a) reward against KL, $\beta$ from 20 to 0.02", pad=2)
    axes[1].set_title("(b) the gap to the frontier at the same KL", pad=2)
    return fig


def trainer_conventions(curves: pd.DataFrame, points: pd.DataFrame) -> Figure:
    """Figure 13: per G, (top) curves per convention and penalty with trained points, (bottom) the gap."""
    gs = sorted(curves.group_size.unique())
    fig = Figure(figsize=(2 * COLUMN * 0.8, 4.6), layout="constrained")
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1.4, 1])
    conventions = list(dict.fromkeys(curves.convention))
    col = dict(zip(conventions, ["#1f5fa8", "#c0392b"]))
    dash = {"reverse": "-", "direct": "--"}
    marks = {"TRL GRPOTrainer": ("s", 4.5), "our trainer, TRL's convention (5 seeds)": ("o", 2.6)}
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for (conv, pen), d in curves[curves.group_size == G].groupby(["convention", "penalty"], sort=False):
            top.plot(d.pi_ref_a, d.pi_a, dash[pen], color=col[conv], lw=1.0)
        for pen, d in curves[curves.group_size == G].groupby("penalty", sort=False):
            wide = d.pivot(index="pi_ref_a", columns="convention", values="pi_a")
            bottom.plot(wide.index, wide[conventions[1]] - wide[conventions[0]], dash[pen], color="0.25", lw=1.0,
                        label=f"{pen} penalty")
        if len(points):
            for (src, pen), d in points[points.group_size == G].groupby(["source", "penalty"]):
                m, size = marks.get(src, ("o", 3))
                top.plot(d.pi_ref_a, d.measured, m, ms=size, color=col[conventions[1]],
                         mfc=col[conventions[1]] if pen == "reverse" else "white", mec="black", mew=0.5, alpha=0.8)
        _diagonal(top)
        top.set_title(f"G = {int(G)}", pad=2)
        bottom.axhline(0, color="0.6", lw=0.7)
        bottom.set_xlim(-0.02, 1.02)
        bottom.set_xlabel(r"$\pi_{\mathrm{ref}}(a)$")
        bottom.set_ylabel("TRL's - the note's" if j == 0 else "")
    handles = [Line2D([], [], color=col[c], lw=1.2, label=c) for c in conventions]
    handles += [Line2D([], [], color="0.3", ls=dash[p], lw=1.0, label=f"{p} penalty (filled/open)") for p in dash]
    if len(points):
        handles += [Line2D([], [], ls="", marker=marks.get(s, ("o", 3))[0], mfc="0.7", mec="black", label=s)
                    for s in dict.fromkeys(points.source)]
    axes[0, -1].legend(handles=handles, fontsize=5.5, loc="lower right")
    axes[1, 0].legend(fontsize=6)
    return fig


def token_vs_sequence(df: pd.DataFrame) -> Figure:
    """Figure 14: per tree shape, trained probability against the token-level prediction of its loss
    type (coloured) and against the sequence-level prediction (grey), every answer."""
    shapes = list(dict.fromkeys(df["shape"]))
    fig, axes = _new(width=2 * COLUMN, height=2.9, ncols=len(shapes))
    losses = list(dict.fromkeys(df.loss_type))
    col = dict(zip(losses, ["#1f5fa8", "#e08214", "#2ca25f", "#8c510a"]))
    for ax, shape in zip(axes, shapes):
        d = df[df["shape"] == shape]
        ax.plot(d.predicted_sequence_level, d.measured, "x", ms=3.2, color="0.55", mew=0.8, zorder=2)
        for k, lt in enumerate(losses):           # shrinking markers: coinciding loss types stay visible
            e = d[d.loss_type == lt]
            ax.plot(e.predicted_token_level, e.measured, "o", ms=4.2 - 1.1 * k, color=col[lt], mec="black", mew=0.3,
                    zorder=3 + k)
        ax.plot([0, 1], [0, 1], ":", color="0.3", lw=0.8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        worst_tok = (d.measured - d.predicted_token_level).abs().max()
        worst_seq = (d.measured - d.predicted_sequence_level).abs().max()
        ax.set_title(f"tree '{shape}'\nmax |error|: token {worst_tok:.3f}, sequence {worst_seq:.2f}",
                     fontsize=6.8, pad=2)
        ax.set_xlabel("predicted probability of the answer")
    axes[0].set_ylabel("trained probability")
    handles = [Line2D([], [], ls="", marker="o", color=col[lt], mec="black", label=f"token level, {lt}")
               for lt in losses]
    handles.append(Line2D([], [], ls="", marker="x", color="0.55", label="sequence-level prediction"))
    axes[0].legend(handles=handles, fontsize=5.5, loc="upper left")
    return fig


def training_trajectories(df: pd.DataFrame) -> Figure:
    """Figure 16: trained pi_t(a) per run against the fitted flow and grpo_steps, one panel per question."""
    qs = list(dict.fromkeys(df.question))
    fig, axes = _new(width=2 * COLUMN, height=2.8, ncols=len(qs))
    runs = list(dict.fromkeys(df.run))
    col = dict(zip(runs, ["#08306b", "#2171b5", "#6baed6", "#e6550d"]))
    for ax, q in zip(axes, qs):
        d = df[df.question == q]
        for run in runs:
            r = d[d.run == run]
            tr, fl, st = (r[r.kind == k].sort_values("step") for k in
                          ("trained", "flow (fitted time scale)", "grpo_steps (lr = time scale)"))
            c = float(r.time_scale.iloc[0])
            ax.plot(tr.step.clip(lower=1), tr.pi, "-", color=col[run], lw=1.2, label=f"{run} (c = {c:.2g})")
            ax.plot(fl.step.clip(lower=1), fl.pi, ":", color="black", lw=0.9)
            ax.plot(st.step.clip(lower=1)[::4], st.pi[::4], "o", ms=1.8, color=col[run], mec="none", alpha=0.8)
        ax.axhline(d.predicted.iloc[0], color="0.5", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("training step")
        ax.set_title(rf"question {q}: $\pi_{{\mathrm{{ref}}}}(a)$ = {d.pi_ref.iloc[0]:.3f}, "
                     f"predicted {d.predicted.iloc[0]:.3f}", fontsize=7)
    axes[0].set_ylabel(r"$\pi_t(a)$")
    handles = axes[0].get_legend_handles_labels()[0]
    handles += [Line2D([], [], ls=":", color="black", label="flow, time scale c fitted per run"),
                Line2D([], [], ls="", marker="o", ms=2, color="0.4", label="grpo_steps, step c"),
                Line2D([], [], color="0.5", lw=0.8, label="predicted stationary point")]
    axes[0].legend(handles=handles, fontsize=5.5, loc="lower right")
    return fig


def noisy_verifier(curves: pd.DataFrame, grid: pd.DataFrame, beta: float, pi_ref: float) -> Figure:
    """Figure 17: (top) pi(correct) against pi_ref per noise level and G; (bottom) pi(correct) over
    (beta, noise) at one pi_ref, with the 'learned' (0.9) and 'no learning' (gain 0.05) contours."""
    gs = list(dict.fromkeys(curves.group_size))
    fig = Figure(figsize=(2 * COLUMN, 4.9), layout="constrained")
    axes = fig.subplots(2, len(gs), squeeze=False, height_ratios=[1, 1])
    noises = sorted(curves.noise.unique())
    cols = [cm.viridis(0.8 * i / max(1, len(noises) - 1)) for i in range(len(noises))]
    mesh = None
    for j, G in enumerate(gs):
        top, bottom = axes[0, j], axes[1, j]
        for eps, c in zip(noises, cols):
            d = curves[(curves.group_size == G) & (curves.noise == eps)].sort_values("pi_ref_a")
            top.plot(d.pi_ref_a, d.pi_a, color=c, lw=1.1, label=f"FP = FN = {eps:g}")
        _diagonal(top)
        top.set_title(f"G = {_infty(int(G) if np.isfinite(G) else 'inf')}, " + rf"$\beta$ = {beta:g}", pad=2)
        g = grid[grid.group_size == G]
        b, e = np.sort(g.beta.unique()), np.sort(g.noise.unique())
        z = g.pivot(index="noise", columns="beta", values="pi_a").loc[e, b].to_numpy()
        mesh = bottom.pcolormesh(b, e, z, shading="nearest", cmap="viridis", vmin=pi_ref, vmax=1.0)
        bottom.contour(b, e, z, levels=[0.9], colors="white", linewidths=1.2)
        bottom.contour(b, e, z - pi_ref, levels=[0.05], colors="white", linewidths=1.0, linestyles="--")
        bottom.set_xscale("log")
        bottom.set_xlabel(r"$\beta$")
        bottom.set_ylabel("FP = FN" if j == 0 else "")
    axes[0, 0].legend(fontsize=6, loc="lower right")
    label = rf"$\pi(\mathrm{{correct}})$, $\pi_{{\mathrm{{ref}}}}$ = {pi_ref:g}"
    fig.colorbar(mesh, ax=axes[1, :], shrink=0.9, label=label)
    return fig


def frameworks_same_beta(df: pd.DataFrame, floor: float = 1e-30) -> Figure:
    """Figure 18: pi(wrong) under each framework's defaults at the same beta; collapses shaded."""
    betas = sorted(df.beta.unique())
    fig, axes = _new(width=2 * COLUMN, height=3.0, ncols=len(betas))
    styles = {0: ("tab:blue", "-"), 1: ("tab:orange", "-"), 2: ("tab:green", "-."), 3: ("tab:red", ":"),
              4: ("k", "--")}
    names = list(dict.fromkeys(df.framework))
    for ax, beta in zip(axes, betas):
        sub = df[df.beta == beta]
        collapsed = sub[sub.collapse]
        if len(collapsed):
            lo, hi = collapsed.pi_ref_correct.min(), collapsed.pi_ref_correct.max()
            ax.axvspan(lo, hi, color="0.88", zorder=0, label="clamp collapse (pi(wrong) = 0)")
        for i, name in enumerate(names):
            c, ls = styles[i % len(styles)]
            s = sub[(sub.framework == name) & ~sub.collapse]
            ax.plot(s.pi_ref_correct, s.pi_wrong, ls, color=c, lw=1.3, label=name)
            col = sub[(sub.framework == name) & sub.collapse]
            ax.plot(col.pi_ref_correct, np.full(len(col), floor * 30.0 ** i), "v", color=c, ms=3)
        ax.set_yscale("log")
        ax.set_xlabel(r"$\pi_{\mathrm{ref}}$(correct)")
        ax.set_title(rf"$\beta$ = {beta:g}, G = 8", pad=2)
    axes[0].set_ylabel(r"stationary $\pi$(wrong)  (▼: exactly 0)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=6.5, bbox_to_anchor=(0.5, -0.13))
    return fig
