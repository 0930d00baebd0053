"""Regenerate every figure: PNG + PDF + CSV of the plotted data + a caption file.

``grpo-theory figures [--out DIR] [--only N ...] [--trained CSV]`` calls
:func:`build_figures`. Output is deterministic (no dates in the PDFs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import pandas as pd
from tqdm.auto import tqdm

from . import figure_data as fd
from . import plotting

_BETAS = ", ".join(f"{b:g}" for b in fd.PAPER_BETAS)


@dataclass(frozen=True)
class FigureSpec:
    number: int
    slug: str
    caption: str
    build: Callable[[dict], tuple[object, dict[str, pd.DataFrame]]]  # context -> (Figure, tables)


def _fig1(_ctx):
    df = fd.figure1_data()
    return plotting.binary_curves(df, "beta_over_gamma", r"$\beta/\gamma$",
                                  "G = 2, reverse (GRPO) penalty — Eq. 14"), {"data": df}


def _fig2(_ctx):
    df = fd.figure2_data()
    return plotting.binary_curves(df, "beta", r"$\beta$", r"$G\to\infty$, reverse (GRPO) penalty — Eq. 15"), \
        {"data": df}


def _fig3(_ctx):
    df = fd.figure3_data()
    return plotting.binary_curves(df, "beta_over_gamma", r"$\beta/\gamma$", "G = 2, direct KL penalty",
                                  jump_at_zero=False), {"data": df}


def _fig4(_ctx):
    df = fd.figure4_data()
    return plotting.binary_curves(df, "group_size", "G",
                                  rf"Finite G, reverse/scale, $\beta$ = {fd.FINITE_G_BETA:g} (exact)"), \
        {"data": df}


def _fig5(_ctx):
    df, fits = fd.figure5_data()
    return plotting.convergence_in_g(df, fits, fd.FINITE_G_BETA), {"data": df, "fit": fits}


def _fig6(_ctx):
    df = fd.figure6_data()
    return plotting.all_variants(df, fd.VARIANTS_PI_REF), {"data": df}


def _fig7(_ctx):
    pts, region = fd.figure7_data()
    return plotting.non_uniqueness(pts, region, fd.NONUNIQUE_PI_REF), {"data": pts, "region": region}


def _fig8(_ctx):
    df = fd.figure8_data()
    return plotting.simplex_paths(df, fd.SIMPLEX_PI_REF, rewards=fd.SIMPLEX_REWARDS), {"data": df}


def _fig9(ctx):
    measured = ctx.get("trained")
    if measured is None:
        return None, {}
    curves = fd.trained_curves(measured)
    return plotting.trained_panels(curves, measured), {"data": measured, "curves": curves}


def _fig10(_ctx):
    field, curves = fd.figure10_data()
    return plotting.phase_portraits(field, curves, fd.PHASE_PI_REF), {"data": field, "stationary": curves}


def _fig11(_ctx):
    traj, points = fd.figure11_data()
    return plotting.simplex_flows(traj, points, fd.FLOW_PI_REF, rewards=fd.FLOW_REWARDS, beta=fd.FLOW_BETA), \
        {"data": traj, "stationary": points}


def _fig12(_ctx):
    curve, marks, orbits = fd.figure12_data()
    return plotting.proximal_cobweb(curve, marks, orbits, fd.MAP_PI_REF, fd.MAP_BETA), \
        {"data": curve, "points": marks, "orbits": orbits}


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(1, "pairwise_reverse",
               f"Figure 1. Stationary probability of the preferred answer a against its reference probability, "
               f"G = 2, GRPO's reverse (k3) penalty (Eq. 14), beta/gamma in {{{_BETAS}}}. Dotted: pi = pi_ref. "
               "At pi_ref(a) = 0 the policy is 0 (filled dot), but for beta < gamma the curve jumps to "
               "1 - beta/gamma just to the right (open circles).", _fig1),
    FigureSpec(2, "large_group_reverse",
               f"Figure 2. Large-G limit, reverse penalty, deterministic rewards (Eq. 15), beta in {{{_BETAS}}}; "
               "independent of the reward gap. The jump at pi_ref(a) = 0 (to 1/(1+beta^2)) occurs for every beta.",
               _fig2),
    FigureSpec(3, "pairwise_direct",
               f"Figure 3. G = 2 with the direct KL penalty KL(pi || pi_ref), beta/gamma in {{{_BETAS}}}: "
               "logarithmic pooling with the pairwise preference; continuous at pi_ref(a) = 0 (no jump).", _fig3),
    FigureSpec(4, "finite_group",
               f"Figure 4. Exact stationary policies for finite G in {{2, 3, 4, 8, 16, 64, inf}} "
               f"(reverse penalty, scale normalisation, ddof = 0, beta = {fd.FINITE_G_BETA:g}), from the "
               "O(G) binomial form; G = 2 is Eq. 14 and G = inf is Eq. 15.", _fig4),
    FigureSpec(5, "convergence_in_group_size",
               f"Figure 5. Distance of the finite-G stationary policy from the large-G limit (Eq. 15), "
               f"beta = {fd.FINITE_G_BETA:g}, G = 2..4096; dashed: least-squares fit for G >= 64. "
               "The fitted slopes are close to -1: the approach is O(1/G).", _fig5),
    FigureSpec(6, "all_variants",
               f"Figure 6. One binary question (pi_ref(a) = {fd.VARIANTS_PI_REF:g}, rewards 1 and 0) under "
               "every GRPO variant (reverse/direct penalty x scale/shift normalisation) for G = 2, 8, inf, "
               "against RLHF (log pooling) and NLHF (Nash), at the same beta in [0.05, 10]. Shift/direct "
               "coincides with RLHF at beta' = G beta/(G-1); direct/scale at G = inf jumps to a = 1 once "
               "pi_ref lies in the vertex's basin.", _fig6),
    FigureSpec(7, "non_uniqueness",
               f"Figure 7. Direct KL penalty, G -> inf. (a) Stationary points against beta at pi_ref(a) = "
               f"{fd.NONUNIQUE_PI_REF:g}: stable (solid), unstable (dashed), and the vertex pi(a) = 1, "
               "a stable limit point for every beta. (b) Number of stationary points over (beta, pi_ref(a)), "
               "from the sign of h at its turning point x*.", _fig7),
    FigureSpec(8, "simplex_paths",
               f"Figure 8. Three answers with rewards {fd.SIMPLEX_REWARDS} and pi_ref = {fd.SIMPLEX_PI_REF}: "
               "the stationary policy's path on the simplex as beta decreases from 20 to 0.02 (dots: beta = 1), "
               "GRPO variants against RLHF (dashed).", _fig8),
    FigureSpec(9, "trained_vs_theory",
               "Figure 9. The trained language model's measured probability of the rewarded answer (mean over "
               "the final window, error bars: standard error) on top of the theory's stationary curves for "
               "the same G and beta (reverse penalty: G = 2 is Eq. 14, as in Figure 1; larger G from the "
               "exact finite-G solver, approaching Figure 2).", _fig9),
    FigureSpec(10, "phase_portraits",
               f"Figure 10. Phase portraits of the expected-gradient flow for a binary question with "
               f"pi_ref(a) = {fd.PHASE_PI_REF:g}: arrows give the direction of d pi(a)/dt (shade: log speed) at "
               "each (beta, pi(a)); red: stationary points (solid stable, dashed unstable, thick: the vertex "
               "limit point). Left, reverse/scale at G = 8: one attracting point for every beta. Right, "
               "direct/scale at G = inf: bistability above beta ~ 0.9.", _fig10),
    FigureSpec(11, "simplex_flows",
               f"Figure 11. Gradient-flow trajectories on the simplex, rewards {fd.FLOW_REWARDS}, pi_ref = "
               f"{fd.FLOW_PI_REF}, direct KL, G = inf, beta = {fd.FLOW_BETA:g}: two stable points separated "
               "by a saddle; the start decides which one GRPO reaches (pi_ref's path in black).", _fig11),
    FigureSpec(12, "proximal_map",
               f"Figure 12. The exact proximal map (the note's argmax, iterated) for pi_ref(a) = "
               f"{fd.MAP_PI_REF:g}, beta = {fd.MAP_BETA:g}, direct KL, G = inf. (a) Its stationary point is "
               "stable under the gradient flow but unstable under the map (|f'| > 1): the iteration falls "
               "onto a stable 2-cycle. (b) From the same start the flow settles while the iteration "
               "oscillates.", _fig12),
)


def _save(fig, base: Path) -> list[Path]:
    out = [base.with_suffix(".png"), base.with_suffix(".pdf")]
    fig.savefig(out[0], metadata={"Software": None})
    fig.savefig(out[1], metadata={"CreationDate": None, "Producer": None})
    return out


def build_figures(out_dir: str | Path = "paper_figures", only=None, trained: str | Path | None = None,
                  progress: bool = True) -> list[Path]:
    """Build the figures ``only`` (numbers; default all) into ``out_dir``; return the files written."""
    matplotlib.use("Agg", force=False)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx: dict = {}
    if trained is not None:
        ctx["trained"] = pd.read_csv(trained)
    specs = [s for s in FIGURES if only is None or s.number in set(only)]
    unknown = set(only or ()) - {s.number for s in FIGURES}
    if unknown:
        raise ValueError(f"no figure numbered {sorted(unknown)}; figures are 1..{len(FIGURES)}")
    written: list[Path] = []
    bar = tqdm(specs, desc="figures", disable=not progress)
    for spec in bar:
        bar.set_postfix_str(spec.slug)
        with matplotlib.rc_context(plotting.STYLE):
            fig, tables = spec.build(ctx)
            if fig is None:
                tqdm.write(f"figure {spec.number} ({spec.slug}) skipped: pass --trained CSV from "
                           "`grpo-theory validate` to draw it")
                continue
            base = out / f"fig{spec.number}_{spec.slug}"
            figs = fig if isinstance(fig, tuple) else (fig,)
            for i, f in enumerate(figs):
                suffix = "" if len(figs) == 1 else "abcdefgh"[i]
                written += _save(f, base.with_name(base.name + suffix))
        for name, table in tables.items():
            path = base.with_name(f"{base.name}_{name}.csv") if name != "data" else base.with_suffix(".csv")
            table.to_csv(path, index=False, float_format="%.12g")
            written.append(path)
        cap = base.with_name(base.name + "_caption.txt")
        cap.write_text(spec.caption + "\n")
        written.append(cap)
    return written


