"""Regenerate every figure: PNG + PDF + CSV of the plotted data + a caption file.

``grpo-theory figures [--out DIR] [--only N ...] [--trained CSV]`` calls
:func:`build_figures`. Output is deterministic (no dates in the PDFs).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import pandas as pd
from tqdm.auto import tqdm

from . import figure_data as fd
from . import plotting
from ._io import atomic_write
from .problem import InvalidInputError

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
                                  jump_at_zero=False, overlay=fd.figure1_data(),
                                  overlay_label="reverse penalty (Fig. 1)", log_inset=True), {"data": df}


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


def _results_table(ctx, name: str) -> pd.DataFrame | None:
    """The measured table ``name`` from the ``results`` folder passed to :func:`build_figures`, or None."""
    folder = ctx.get("results")
    path = None if folder is None else Path(folder) / name
    return pd.read_csv(path) if path is not None and path.is_file() else None


def _fig9(ctx):
    measured = ctx.get("trained")
    if measured is None:
        return None, "pass --trained CSV from `grpo-theory validate` to draw it"
    measured = fd.trained_points(measured)
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
    step_map = fd.figure12_map()
    return plotting.proximal_cobweb(curve, marks, orbits, fd.MAP_PI_REF, fd.MAP_BETA, step_map), \
        {"data": curve, "points": marks, "orbits": orbits, "step_size_map": step_map}


def _fig13(ctx):
    trl, ours = _results_table(ctx, "trl_results.csv"), _results_table(ctx, "validate_seeds.csv")
    if trl is None and ours is None:
        return None, "needs trl_results.csv or validate_seeds.csv in the --results folder"
    curves, points = fd.figure13_data(trl, ours)
    return plotting.trainer_conventions(curves, points), {"data": curves, "points": points}


def _replot(ctx, name: str, source: str, data, draw):
    """A figure of one measured table ``name`` from the ``results`` folder (skipped, saying why, without it)."""
    table = _results_table(ctx, name)
    if table is None:
        return None, f"needs {name} ({source}) in the --results folder"
    df = data(table)
    return draw(df), {"data": df}


def _fig14(ctx):
    return _replot(ctx, "tree_study.csv", "from `grpo-theory validate --study tree`", fd.figure14_data,
                   plotting.token_vs_sequence)


def _fig15(_ctx):
    df = fd.figure15_data()
    return plotting.reward_kl_frontier(df), {"data": df}


def _fig16(ctx):
    return _replot(ctx, "fig16_trajectories.csv", "experiments/fig16_trajectories.py", fd.figure16_data,
                   plotting.training_trajectories)


def _fig17(_ctx):
    curves, grid = fd.figure17_data()
    return plotting.noisy_verifier(curves, grid, fd.NOISE_BETA, fd.NOISE_PI_REF), {"data": curves, "map": grid}


def _fig18(_ctx):
    df = fd.figure18_data()
    return plotting.frameworks_same_beta(df), {"data": df}


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
               "logarithmic pooling with the pairwise preference; continuous at pi_ref(a) = 0 (no jump). Dashed: "
               "Figure 1's reverse-penalty curves, which jump at 0. Right: the same curves on a log pi_ref axis down "
               "to 1e-9: each falls to 0, at a pi_ref that shrinks like exp(-gamma/beta) (beta/gamma = 0.04 only "
               "below 1e-9). Take-away: the jump belongs to the k3 penalty, not to GRPO's advantages.", _fig3),
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
               "against RLHF (log pooling) and NLHF (Nash), at the same beta in [0.04, 10]. Shift/direct "
               "coincides with RLHF at beta' = G beta/(G-1); direct/scale at G = inf jumps to a = 1 once "
               "pi_ref lies in the vertex's basin.", _fig6),
    FigureSpec(7, "non_uniqueness",
               f"Figure 7. Direct KL penalty, G -> inf. (a) Stationary points against beta at pi_ref(a) = "
               f"{fd.NONUNIQUE_PI_REF:g}, on a logit axis: stable (solid), unstable (dashed: the separatrix), "
               "the vertex pi(a) = 1, a stable limit point for every beta, and the fold where the interior pair "
               "is born; shaded, the basin of each stable point. (b) Number of stationary points over "
               "(beta, pi_ref(a)), from the sign of h at its turning point x*. Take-away: above the fold a run "
               "from pi_ref settles inside, but a start past the separatrix (within 1e-4 of 1 at large beta) "
               "runs into the vertex.", _fig7),
    FigureSpec(8, "simplex_paths",
               f"Figure 8. Three answers with rewards {fd.SIMPLEX_REWARDS} and pi_ref = {fd.SIMPLEX_PI_REF}: "
               "the stationary policy's path on the simplex as beta decreases from 20 to 0.02 (dots: beta = 1), "
               "GRPO variants against RLHF and NLHF (dashed); grey lines: the barycentric grid, pi(o) = 0.2, 0.4, "
               "0.6, 0.8.", _fig8),
    FigureSpec(9, "trained_vs_theory",
               "Figure 9. Trained language models against the theory. Top: the measured probability of the "
               "rewarded answer (mean over the final window) on the stationary curves for the same G, beta "
               "and penalty (solid: reverse, filled markers; dashed: direct, open markers; dotted: a second "
               "stable point, where training can also end). Bottom: measured - predicted on a symlog scale "
               "(linear within +-0.01, shaded), error bars the between-seed standard error where the study "
               "has several seeds.", _fig9),
    FigureSpec(10, "phase_portraits",
               f"Figure 10. Phase portraits of the expected-gradient flow for a binary question with "
               f"pi_ref(a) = {fd.PHASE_PI_REF:g}, on a logit axis: arrows give the direction of d pi(a)/dt "
               "(shade: log speed of logit pi(a)) at each (beta, pi(a)); red: stationary points (solid stable, "
               "dashed unstable, thick: the vertex limit point; dot: the fold). Left, reverse/scale at G = 8: "
               "one attracting point for every beta. Right, direct/scale at G = inf: bistability above the "
               "fold at beta = 0.90; above the dashed separatrix every start drifts, slowly, into the vertex.",
               _fig10),
    FigureSpec(11, "simplex_flows",
               f"Figure 11. Gradient-flow trajectories on the simplex, rewards {fd.FLOW_REWARDS}, pi_ref = "
               f"{fd.FLOW_PI_REF}, direct KL, G = inf, beta = {fd.FLOW_BETA:g}: two stable points separated "
               "by a saddle; the start decides which one GRPO reaches (pi_ref's path in black). Inset: the a-b "
               "edge zoomed, position along it against log pi(c): the edge attractor (pi(c) = 6e-5) and the "
               "saddle (2e-3); only starts within about 1e-4 of the edge reach it. Take-away: the second stable "
               "point exists but its basin is a sliver along the edge, so training from pi_ref never sees it.",
               _fig11),
    FigureSpec(12, "proximal_map",
               f"Figure 12. The exact proximal map (the note's argmax, iterated) for pi_ref(a) = "
               f"{fd.MAP_PI_REF:g}, beta = {fd.MAP_BETA:g}, direct KL, G = inf. (a) Its stationary point is "
               "stable under the gradient flow but unstable under the map (|f'| > 1): the iteration falls "
               "onto a stable 2-cycle. (b) From the same start, 30% above the fixed point, the flow (time t, top "
               "axis) settles while the iteration (step n, bottom axis) oscillates. (c, d) The largest step size "
               "of plain gradient steps on the logits (dynamics.grpo_steps, one update per batch) that still "
               "converges to the stationary point, 2/|F'(z*)|, over (beta, pi_ref(a)) at G = 8 (white: the "
               "policy sits at a vertex). Take-away: a stationary point is a prediction only for steps below "
               "this bound; it falls to about 1 logit unit at large beta, where the penalty's curvature is "
               "largest, so strong regularisation and large learning rates (or many inner epochs) oscillate.",
               _fig12),
    FigureSpec(13, "trainer_conventions",
               f"Figure 13. The same objective under the note's normalisation (std with ddof 0, no eps) and TRL's "
               f"(ddof 1, eps 1e-4; verl and OpenRLHF also use ddof 1), beta = {fd.CONVENTION_BETA:g}. Top: the "
               "stationary pi(correct) against pi_ref(correct) (solid: reverse penalty; dashed: direct), with "
               "trained points under TRL's convention (TRL's own GRPOTrainer at G = 8, both penalties; our "
               "trainer, reverse, 5 seeds). Bottom: TRL's minus the note's prediction. Take-away: at G = 2 the "
               "convention alone moves the prediction by up to 0.18 (ddof 1 makes a two-member group's std "
               "sqrt(2) times larger; 0.10 at G = 8 with the direct penalty), and the trained points follow "
               "the trainer's convention, not the note's.",
               _fig13),
    FigureSpec(14, "token_vs_sequence",
               "Figure 14. Token-level GRPO on answer trees (answers of 2 to 5 tokens closed by an end token; "
               "the reward depends on a later token): every answer's trained probability against the "
               "token-level prediction for the trainer's loss type (filled: TRL's grpo, dr_grpo, dapo with one "
               "group per batch) and against the sequence-level prediction (grey crosses), 3 seeds x 8 questions "
               "per tree, from docs/results/tree_study.csv. Take-away: the token-level theory of each loss type "
               "lands on the trainer (max error 0.008); the sequence-level theory misses by up to 0.12, most on "
               "the longest answers.", _fig14),
    FigureSpec(15, "reward_kl_frontier",
               f"Figure 15. Expected reward against KL(pi || pi_ref) as beta falls from 20 to 0.02, for Figure 8's "
               f"question (rewards {fd.SIMPLEX_REWARDS}, pi_ref = {fd.SIMPLEX_PI_REF}). RLHF's log pooling maximises "
               "reward minus beta KL, so its curve is the optimal frontier; every GRPO variant lies on or below it "
               "(b: the gap at the same KL, from the exact frontier). Take-away: GRPO's aggregation buys at most "
               "0.019 less reward for the same divergence here (reverse/scale, G = 2; 0.008 for direct/scale, "
               "G = 8), most of it near KL = 1.", _fig15),
    FigureSpec(16, "training_trajectories",
               "Figure 16. Training trajectories of the small GPT (G = 8, beta = 0.5, reverse penalty, seed 0): the "
               "probability of the rewarded answer for the questions with the lowest and the highest pi_ref, at "
               "Adam lr 3e-3, 1e-3, 3e-4 and with 4 inner updates per batch (solid), against the gradient flow "
               "from pi_ref with its time scale fitted to each run (dotted) and dynamics.grpo_steps at that step "
               "size (dots); grey line: the predicted stationary point. Take-away: every run ends at the "
               "prediction, sooner with a larger lr or more inner updates (fitted flow time per step c = 0.05, "
               "0.11, 0.30 and 0.60 on the left), but the path is not the flow's: a network run lags at first, "
               "then rises faster than the flow and overshoots (lr 3e-3: 0.90 at step 30 against 0.79). Where "
               "there is a separatrix, that overshoot is what crosses it (docs/results.md).", _fig16),
    FigureSpec(17, "noisy_verifier",
               f"Figure 17. A noisy verifier: the correct answer is scored 1 with probability 1 - eps, the wrong "
               f"one with probability eps (false positives = false negatives = eps; reverse penalty, scale). Top: "
               f"the stationary pi(correct) against pi_ref(correct) at beta = {fd.NOISE_BETA:g}, per G. Bottom: "
               f"pi(correct) from pi_ref = {fd.NOISE_PI_REF:g} over (beta, eps), with the contours where it reaches "
               "0.9 (solid) and where it gains less than 0.05 over pi_ref (dashed). Take-away: a noisy verifier "
               "acts like a larger beta at every G. Even at G = inf the stationary policy now depends on the "
               "expected reward gap 1 - FP - FN, because the group std contains the verifier's own variance; "
               "with a clean verifier it does not depend on the gap.", _fig17),
    FigureSpec(18, "frameworks_same_beta",
               "Figure 18. One binary question (deterministic rewards), the same beta (0.04 left, 0.5 right) and "
               "G = 8 under the defaults of TRL 1.9 (k3: reverse), TRL 1.16 (ratio x k3: direct), verl's GRPO "
               "recipe (low_var_kl, clamped at 10) and OpenRLHF's group_norm (k1 in the advantage, clamped at "
               "10), beside RLHF. Shaded: the clamps remove the wrong answer exactly (a collapse). Take-away: "
               "at beta = 0.04 the same number means anything from keeping the wrong answer at 1% to removing "
               "it.", _fig18),
)


def _save(fig, base: Path) -> list[Path]:
    out = [base.with_suffix(".png"), base.with_suffix(".pdf")]
    atomic_write(out[0], lambda p: fig.savefig(p, metadata={"Software": None}))
    atomic_write(out[1], lambda p: fig.savefig(p, metadata={"CreationDate": None, "Producer": None}))
    return out


#: Tolerances under which a regenerated table counts as unchanged. The data come from solvers
#: with tolerances of 1e-9..1e-10 (ODE integration, finite-difference Jacobians), so another
#: machine's BLAS/libm, or a harmless change in summation order, moves the 12 written digits at
#: the 1e-9 level; rewriting for that would dirty the committed tree without changing anything
#: a reader can see. Real changes (a bug fix, a new grid) are far larger and are written.
CSV_RTOL = 1e-6
CSV_ATOL = 1e-9


def same_table(a: pd.DataFrame, b: pd.DataFrame, rtol: float = CSV_RTOL, atol: float = CSV_ATOL) -> bool:
    """Same columns, same non-numeric values, numeric values equal within ``rtol``/``atol`` (NaN = NaN)."""
    import numpy as np

    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            xv, yv = x.to_numpy(float), y.to_numpy(float)
            if not np.allclose(xv, yv, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif not x.astype(str).equals(y.astype(str)):
            return False
    return True


def _write_table(table: pd.DataFrame, path: Path) -> bool:
    """Write ``table`` unless ``path`` already holds the same numbers (see :data:`CSV_RTOL`, :data:`CSV_ATOL`)."""
    if path.exists():
        try:
            if same_table(pd.read_csv(path), pd.read_csv(io.StringIO(table.to_csv(index=False,
                                                                                    float_format="%.12g")))):
                return False
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
            pass                                      # unreadable: rewrite it
    atomic_write(path, lambda p: table.to_csv(p, index=False, float_format="%.12g"))
    return True


_DONE = ".figures_done.json"


def _done_file(out: Path) -> Path:
    return out / _DONE


def _read_done(out: Path) -> set[int]:
    try:
        return set(json.loads(_done_file(out).read_text()))
    except (FileNotFoundError, ValueError):
        return set()


FINGERPRINT = "figures_fingerprint.json"


def code_fingerprint() -> str:
    """Hash of the code that draws the figures (this module, plotting, figure_data)."""
    import hashlib

    h = hashlib.sha256()
    for mod in ("figures.py", "plotting.py", "figure_data.py"):
        h.update((Path(__file__).parent / mod).read_bytes())
    return h.hexdigest()[:16]


def build_figures(out_dir: str | Path = "paper_figures", only=None, trained: str | Path | None = None,
                  progress: bool = True, resume: bool = False, force: bool = False,
                  results: str | Path | None = None) -> list[Path]:
    """Build the figures ``only`` (numbers; default all) into ``out_dir``; return the files written.

    * Measured tables are inputs: ``trained`` (Figure 9) and the folder ``results`` holding the
      studies' tables (Figures 13, 14, 16; ``docs/results`` in a checkout). A figure whose table is
      not given is skipped, and the reason printed.

    * Each file is written atomically, and each finished figure is recorded in
      ``out_dir/.figures_done.json``: with ``resume=True`` the figures recorded there are
      skipped, so an interrupted run continues where it stopped.
    * A clean tree after the main job: tables equal within :data:`CSV_RTOL` and :data:`CSV_ATOL` to the ones on
      disk are not rewritten, and a figure's PNG/PDF are redrawn only when its data changed,
      an image is missing, the drawing code changed (its hash differs from the one recorded for
      that figure in ``out_dir/figures_fingerprint.json``) or ``force=True``. Another machine's last-digit
      differences then leave every committed file as it was.
    """
    matplotlib.use("Agg", force=False)
    valid = {s.number for s in FIGURES}
    unknown = set(only or ()) - valid
    if unknown:
        raise InvalidInputError(f"no figure numbered {sorted(unknown)}; the figures are numbered "
                                f"{min(valid)}..{max(valid)}")
    ctx: dict = {}
    if results is not None:
        if not Path(results).is_dir():
            raise InvalidInputError(f"--results {str(results)!r}: no such folder (expected the studies' tables, "
                                    "docs/results in a checkout)")
        ctx["results"] = Path(results)
    if trained is not None:
        trained = Path(trained)
        if not trained.is_file():
            raise InvalidInputError(f"--trained {str(trained)!r}: no such file; it is written by "
                                    "`grpo-theory validate` (runs/validate/trained_points.csv)")
        ctx["trained"] = pd.read_csv(trained)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = _read_done(out) if resume else set()
    if not resume:
        _done_file(out).unlink(missing_ok=True)
    fingerprint = code_fingerprint()
    fp_path = out / FINGERPRINT
    try:
        drawn_by = json.loads(fp_path.read_text())          # figure number -> hash of the code that drew it
    except (FileNotFoundError, ValueError):
        drawn_by = {}
    specs = [s for s in FIGURES if (only is None or s.number in set(only)) and s.number not in done]
    written: list[Path] = []
    bar = tqdm(specs, desc="figures", disable=not progress)
    for spec in bar:
        bar.set_postfix_str(spec.slug)
        with matplotlib.rc_context(plotting.STYLE):
            fig, tables = spec.build(ctx)
            if fig is None:
                tqdm.write(f"figure {spec.number} ({spec.slug}) skipped: {tables}")
                continue
            base = out / f"fig{spec.number}_{spec.slug}"
            data_changed = False
            for name, table in tables.items():
                path = base.with_name(f"{base.name}_{name}.csv") if name != "data" else base.with_suffix(".csv")
                if _write_table(table, path):
                    written.append(path)
                    data_changed = True
            figs = fig if isinstance(fig, tuple) else (fig,)
            bases = [base.with_name(base.name + ("" if len(figs) == 1 else "abcdefgh"[i])) for i in range(len(figs))]
            missing = any(not b.with_suffix(ext).exists() for b in bases for ext in (".png", ".pdf"))
            if data_changed or missing or force or drawn_by.get(str(spec.number)) != fingerprint:
                for f, b in zip(figs, bases):
                    written += _save(f, b)
                drawn_by[str(spec.number)] = fingerprint
                atomic_write(fp_path, lambda p: p.write_text(json.dumps(drawn_by, indent=1, sort_keys=True) + "\n"))
        cap = base.with_name(base.name + "_caption.txt")
        caption = plotting._infty(spec.caption)          # "∞", never "inf", in captions too
        if not cap.exists() or cap.read_text() != caption + "\n":
            atomic_write(cap, lambda p, text=caption: p.write_text(text + "\n"))
            written.append(cap)
        done.add(spec.number)
        atomic_write(_done_file(out), lambda p: p.write_text(json.dumps(sorted(done))))
    return written
