"""Figure 12: the exact proximal map against the gradient flow, and the largest stable step."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .. import plotting
from ..dynamics import flow, map_cycles, map_fixed_points, proximal_map
from ..problem import Objective, Question
from ..solvers import ClassProblem, stationary_policy
from ..solvers.two_class_batch import TwoClassBatch, batch_flow_policies, supports
from ._data import binary
from ._spec import FigureSpec

#: Figure 12: the proximal map where it disagrees with the flow.
MAP_PI_REF = 3e-3
MAP_BETA = 0.5
#: the flow is the direct penalty's at G = inf: the method's colour
FLOW_COLOR = plotting.METHOD_COLORS["GRPO direct/scale"]
#: Figure 12(c, d): the colour scale's top (log10 of the step) and the colour of the bounds above it
STEP_LOG_MAX = 3.0
OVER_COLOR = plotting.COLORS["beyond the scale"]
#: Figure 12(c, d): where plain gradient steps on the logits stop converging, per variant
STEP_VARIANTS = (("reverse/scale, G = 8", dict(group_size=8)),
                 ("direct/scale, G = 8", dict(group_size=8, penalty="direct")))


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {"-": "data", "--": "comparison", ":": "reference", "o": "point", "^": "key"}



def _label_places(ax, contours) -> list[tuple[float, float]]:
    """One place per contour level for its label: the level's vertex farthest from the panel's frame (in axes
    fractions), in data coordinates."""
    to_axes = ax.transData + ax.transAxes.inverted()
    places = []
    for segs in contours.allsegs:
        pts = np.concatenate([s for s in segs if len(s)]) if any(len(s) for s in segs) else np.empty((0, 2))
        if not len(pts):
            continue
        f = to_axes.transform(pts)
        inner = np.minimum.reduce([f[:, 0], 1 - f[:, 0], f[:, 1], 1 - f[:, 1]])
        places.append(tuple(pts[int(np.argmax(inner))]))
    return places

def data(n: int = 600, n_iter: int = 40) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The proximal map f and f∘f against the identity, its fixed points and 2-cycle, and orbits."""
    q = binary(MAP_PI_REF)
    obj = Objective(beta=MAP_BETA, group_size=math.inf, penalty="direct")
    step = proximal_map(q, obj)
    # up to 0.999, so that the third fixed point (near 0.94, unstable under both) is on the axes
    xs = np.geomspace(1e-3, 0.999, n)
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


def critical_step_sizes(questions: list[Question], objectives: list[Objective], h: float = 1e-5) -> np.ndarray:
    """:func:`critical_step_size` for many binary questions at once (the same numbers): the stationary
    points by :func:`~grpo_theory.solvers.two_class_batch.batch_flow_policies` and the drifts at
    ``z* +- h`` in one :class:`~grpo_theory.solvers.two_class_batch.TwoClassBatch` call; a pair it does not
    cover goes through :func:`critical_step_size`."""
    out = np.full(len(questions), np.nan)
    cps = [ClassProblem(q, obj) for q, obj in zip(questions, objectives)]
    batched = [i for i, cp in enumerate(cps) if supports(cp)]
    for i in sorted(set(range(len(cps))) - set(batched)):
        out[i] = critical_step_size(questions[i], objectives[i], h)
    if not batched:
        return out
    batch = TwoClassBatch([cps[i] for i in batched])
    x = np.array([float(pi[0]) for pi in batch_flow_policies(batch)])
    inner = np.flatnonzero((1e-12 < x) & (x < 1 - 1e-12))    # at a vertex: no interior fixed point (NaN)
    z = np.array([math.log(v) - math.log1p(-v) for v in x[inner].tolist()])
    zz = np.column_stack([z + h, z - h])
    # the two drifts by each problem's own (scalar) drift: they are differences of O(1) terms, ~1e-6 here, and
    # the stacked evaluation's last bits (matrix products of another shape) would move the finite difference
    # by ~1e-10 relative; the roots' last bits do not matter (F(z+h) - F(z-h) does not depend on them to
    # first order)
    s = np.array([[float(batch.problems[i].drift(v)) for v in pair] for i, pair in zip(inner, zz.tolist())])
    s = s.reshape(zz.shape)
    # F(z) = 2 pi_a pi_b s(z), pi_a = expit(z) in Python floats, as critical_step_size computes it
    xx = np.array([[1.0 / (1.0 + math.exp(-v)) for v in row] for row in zz.tolist()]).reshape(zz.shape)
    F = 2.0 * xx * (1 - xx) * s
    slope = (F[:, 0] - F[:, 1]) / (2 * h)
    with np.errstate(divide="ignore"):
        out[np.asarray(batched)[inner]] = np.where(slope < 0, 2.0 / np.abs(slope), np.nan)
    return out


def step_size_map(n_beta: int = 49, n_p: int = 41) -> pd.DataFrame:
    """The critical step size over (beta, pi_ref(a)) for each of :data:`STEP_VARIANTS`."""
    rows, cases = [], []
    for name, template in STEP_VARIANTS:
        for beta in np.geomspace(0.05, 5.0, n_beta):
            obj = Objective(beta=float(beta), **template)
            for p in np.linspace(0.05, 0.95, n_p):
                rows.append(dict(variant=name, beta=beta, pi_ref_a=p))
                cases.append((binary(p), obj))
    lrs = critical_step_sizes(*map(list, zip(*cases)))
    for row, lr in zip(rows, lrs.tolist()):
        row["critical_lr"] = lr
    return pd.DataFrame(rows)


def draw(curve: pd.DataFrame, marks: pd.DataFrame, orbits: pd.DataFrame, pi_ref_a: float,
                    beta: float, step_map: pd.DataFrame | None = None) -> Figure:
    """Figure 12: the proximal map against the identity (cobweb), its orbit against the flow, and
    (c, d) the largest stable step size of plain gradient steps over (beta, pi_ref)."""
    if step_map is None:
        fig, (ax, bx) = plotting.new_figure(width=plotting.DOUBLE, height=2.8, ncols=2)
    else:
        fig = Figure(figsize=(plotting.DOUBLE, 6.0), layout="constrained")
        grid = fig.subplots(2, 2, squeeze=False)
        ax, bx = grid[0]
        variants = list(dict.fromkeys(step_map.variant))
        # the scale covers 10^-0.5 .. 10^STEP_LOG_MAX; larger bounds (up to 10^13 where the policy is near a
        # vertex and F' vanishes) get their own colour, not the scale's top, and the colour bar says so
        levels = np.linspace(-0.5, STEP_LOG_MAX, 15)
        cmap = matplotlib.colormaps[plotting.ORDER_CMAP].with_extremes(over=OVER_COLOR)
        for cx, name in zip(grid[1], variants):
            m = step_map[step_map.variant == name]
            b, p = np.sort(m.beta.unique()), np.sort(m.pi_ref_a.unique())
            z = np.log10(m.pivot(index="pi_ref_a", columns="beta", values="critical_lr").loc[p, b].to_numpy())
            # filled contours interpolate between the grid points (no cell corners); NaN (a vertex) stays out
            mesh = cx.contourf(b, p, z, levels=levels, cmap=cmap, extend="max")
            if np.isnan(z).any():
                cx.contourf(b, p, np.isnan(z).astype(float), levels=[0.5, 1.5], colors="none", hatches=["////"])
            cs = cx.contour(b, p, z, levels=[0, 0.5, 1, 1.5, 2], colors="white", linewidths=0.7)
            cx.set_xscale("log")
            # each contour labelled at its point farthest from the frame (the automatic place put the "1" on
            # the right edge)
            cx.clabel(cs, fmt=lambda v: f"{10 ** v:.3g}", fontsize=7, manual=_label_places(cx, cs))
            cx.set_xlabel(r"$\beta$")
            cx.set_ylabel(r"$\pi_{\mathrm{ref}}(a)$")
            shown = plotting.infty(name).replace("G = ", "$G$ = ")
            plotting.panel(cx, "cd"[variants.index(name)], f"largest stable step, {shown}")
        over = float(np.nanmax(np.log10(step_map.critical_lr)))
        fig.colorbar(mesh, ax=grid[1, :], shrink=0.9, extend="max" if over > STEP_LOG_MAX else "neither",
                     label=r"$\log_{10}$ largest stable step size", ticks=np.arange(0, STEP_LOG_MAX + 0.1, 1))
        map_handles = [Patch(facecolor=OVER_COLOR, edgecolor="0.5", lw=0.5,
                             label=rf"step bound $> 10^{{{STEP_LOG_MAX:g}}}$ (up to $10^{{{over:.0f}}}$)")]
        if step_map.critical_lr.isna().any():
            map_handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="////", lw=0.5,
                                     label="policy at a vertex (no bound)"))
    ax.plot(curve.pi_a, curve.f, color="black", label=r"$f$: proximal map")
    ax.plot(curve.pi_a, curve.f_f, color="0.45", lw=0.9, ls="--", label=r"$f\circ f$")
    plotting.reference(ax.plot([0, 1], [0, 1], ls=":", color="0.45", lw=0.9))
    it = orbits[orbits.kind == "proximal iteration"].pi_a.to_numpy()
    web_x, web_y = [it[0]], [it[0]]
    for a, b in zip(it[:-1], it[1:]):
        web_x += [a, b]
        web_y += [b, b]
    ax.plot(web_x, web_y, color="0.35", lw=0.6, alpha=0.9, label="iteration (cobweb)")
    fps = marks[marks.kind == "fixed point"]
    for row in fps.itertuples():
        # a stationary point's circle: half filled, stable under the flow and not under the map; open, unstable
        # under both
        half = dict(fillstyle="left", mfc="black", mfcalt="white") if row.flow_stable else dict(mfc="white")
        ax.plot(row.pi_a, row.pi_a, "o", ms=5.5, mec="black", mew=1.1, zorder=5, **half)
    cyc = marks[marks.kind == "2-cycle"]
    ax.plot(cyc.pi_a, cyc.pi_a, "^", color="black", ms=5, zorder=5, label="2-cycle (stable)")
    ax.plot([], [], "o", ms=5.5, mec="black", mew=1.1, fillstyle="left", mfc="black", mfcalt="white",
            label="fixed point: flow-stable, map-unstable")
    if (fps.flow_stable == False).any():                                        # noqa: E712
        ax.plot([], [], "o", mfc="white", mec="black", ms=5.5, mew=1.1, label="fixed point: unstable under both")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\pi_{n-1}(a)$")
    ax.set_ylabel(r"$\pi_n(a)$")
    plotting.panel(ax, "a", rf"the map $f$, $\pi_{{\mathrm{{ref}}}}(a)$ = {pi_ref_a:g}, $\beta$ = {beta:g}")

    pr = orbits[orbits.kind == "proximal iteration"]
    fl = orbits[orbits.kind != "proximal iteration"]
    bx.plot(pr.n, pr.pi_a, "o-", ms=2.4, lw=0.8, color="black", label="proximal iteration (step n, bottom axis)")
    tx = bx.twiny()                   # step n and flow time t are different units: two x axes
    tx.plot(fl.n, fl.pi_a, color=FLOW_COLOR, lw=1.3)
    bx.plot([], [], color=FLOW_COLOR, label="gradient flow (time t, top axis)")
    for row in fps.itertuples():
        if row.flow_stable:
            bx.axhline(row.pi_a, color=FLOW_COLOR, ls=":", lw=0.8)
    bx.set_xlabel("proximal step n")
    tx.set_xlabel("flow time t", color=FLOW_COLOR, fontsize=7)
    tx.tick_params(axis="x", colors=FLOW_COLOR, labelsize=7)
    bx.set_ylabel(r"$\pi(a)$")
    plotting.panel(bx, "b", "same start: the flow settles, the map cycles")
    bx.set_ylim(0.05, 0.72)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = bx.get_legend_handles_labels()
    if step_map is not None:
        h2 += map_handles
        l2 += [h.get_label() for h in map_handles]
    plotting.legend_below(fig, h1 + h2, l1 + l2, ncol=3)
    # (b)'s title sits above its second (time) axis: the row's titles are aligned to it
    fig.align_titles()
    return fig


def tables(_inputs):
    curve, marks, orbits = data()
    return {"data": curve, "points": marks, "orbits": orbits, "step_size_map": step_size_map()}


def render(t):
    return draw(t["data"], t["points"], t["orbits"], MAP_PI_REF, MAP_BETA, t["step_size_map"])


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its numbers (fixed points, the 2-cycle, the step bounds) read from the plotted tables."""
    pts, m = t["points"], t["step_size_map"]
    fps = pts[pts.kind == "fixed point"]
    good = fps[fps.flow_stable.astype(str) == "True"].iloc[0]
    bad = fps[fps.flow_stable.astype(str) == "False"]
    cyc = sorted(pts[pts.kind == "2-cycle"].pi_a)
    top = m[m.beta == m.beta.max()]
    low = {v: float(g.critical_lr.min()) for v, g in top.groupby("variant", sort=False)}
    over = float(np.nanmax(np.log10(m.critical_lr)))
    third = (f" A third fixed point, {', '.join(f'{x:.3f}' for x in bad.pi_a)}, is unstable under both (open)." if len(bad)
             else "")
    return (
        f"Figure 12. The exact proximal map f (the note's argmax, iterated) for pi_ref(a) = {MAP_PI_REF:g}, "
        f"beta = {MAP_BETA:g}, direct KL, G = inf. (a) f and f∘f against the identity: the stationary point "
        f"{good.pi_a:.3f} is stable under the gradient flow but unstable under the map (half-filled; |f'| = "
        f"{good.spectral_radius:.2f} > 1), so the cobweb falls onto a stable 2-cycle, the "
        f"triangles ({cyc[0]:.3f} <-> {cyc[-1]:.3f}).{third} (b) From the same start, 30% above the fixed point, the flow "
        "(time t, top axis) settles while the iteration (step n, bottom axis) oscillates. (c, d) The largest "
        "step size of plain gradient steps on the logits (dynamics.grpo_steps, one update per batch) that still "
        "converges to the stationary point, 2/|F'(z*)|, over (beta, pi_ref(a)) at G = 8, on a "
        f"{m.beta.nunique()} x {m.pi_ref_a.nunique()} grid; grey: bounds above 10^{STEP_LOG_MAX:g} (up to "
        f"10^{over:.0f}; docs/figures.md says where); hatched: the policy sits at a "
        f"vertex. Take-away: a stationary point is a prediction only for steps below this bound; at beta = "
        f"{m.beta.max():g} it falls to " + " and ".join(f"{v:.2f} ({k.split(',')[0]})" for k, v in low.items())
        + " logit units, where the penalty's curvature is largest, so strong regularisation and large learning "
        "rates (or many inner epochs) oscillate.")


SPEC = FigureSpec(12, "proximal_map", caption, tables, render, __name__)
