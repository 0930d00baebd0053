"""Figure 14: token-level GRPO on answer trees (from the committed tree study)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .. import plotting
from ._spec import FigureSpec

#: TRL's loss types, as papers name them
LOSS_NAMES = {"grpo": "GRPO", "dr_grpo": "Dr. GRPO", "dapo": "DAPO", "bnpo": "BNPO"}


#: The line styles and markers this figure draws and what each means (plotting.LINESTYLES, MARKERS;
#: tests/test_figure_language.py lists the uses that differ from those tables as open).
LANGUAGE = {":": "reference", "o": "point", "x": "second theory"}


def data(t: pd.DataFrame) -> pd.DataFrame:
    """The columns Figure 14 plots from the committed token-level tree study ``t`` (``tree_study.csv``):
    for each shape, loss type, seed, question and answer, the trained probability, the token-level
    prediction for that loss type and the sequence-level prediction."""
    return t[["shape", "loss_type", "groups_per_batch", "seed", "question", "answer", "answer_tokens", "rewarded",
              "pi_ref", "measured", "predicted", "predicted_sequence_level"]].rename(
        columns={"predicted": "predicted_token_level"})


def draw(df: pd.DataFrame) -> Figure:
    """Figure 14: per tree shape, trained probability against the token-level prediction of its loss
    type (coloured) and against the sequence-level prediction (grey), every answer."""
    shapes = list(dict.fromkeys(df["shape"]))
    fig = Figure(figsize=(plotting.DOUBLE, 5.6), layout="constrained")
    grid = fig.subplots(2, len(shapes), squeeze=False, height_ratios=[1.6, 1])
    axes, lower = grid[0], grid[1]
    lim = 1.15 * float((df.measured - df.predicted_token_level).abs().max())
    losses = list(dict.fromkeys(df.loss_type))
    col = dict(zip(losses, plotting.setting_colors(len(losses))))
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
        worst_tok = (d.measured - d.predicted_token_level).abs().max()
        worst_seq = (d.measured - d.predicted_sequence_level).abs().max()
        plotting.panel(ax, "abcdefgh"[shapes.index(shape)],
                       f"tree '{shape}', max |error|:\ntoken {worst_tok:.3f}, sequence {worst_seq:.2f}",
                       fontsize=7, pad=2)
        ax.set_xlabel("predicted probability")
        # the residual row: errors of 0.005 are invisible on a 0-1 axis
        low = lower[shapes.index(shape)]
        for k, lt in enumerate(losses):
            e = d[d.loss_type == lt]
            low.plot(e.predicted_token_level, e.measured - e.predicted_token_level, "o", ms=4.2 - 1.1 * k,
                     color=col[lt], mec="black", mew=0.3, zorder=3 + k)
        plotting.reference(low.axhline(0.0, color="0.4", lw=0.7, ls=":"))
        low.set_xlim(-0.02, 1.02)
        low.set_ylim(-lim, lim)
        plotting.panel(low, "abcdefgh"[len(shapes) + shapes.index(shape)], "trained − token-level prediction",
                       fontsize=7, pad=2)
        low.set_xlabel("token-level prediction")
    axes[0].set_ylabel("trained probability")
    lower[0].set_ylabel("residual")
    handles = [Line2D([], [], ls="", marker="o", color=col[lt], mec="black",
                      label=f"token level, {LOSS_NAMES.get(lt, lt)}") for lt in losses]
    handles.append(Line2D([], [], ls="", marker="x", color="0.55", label="sequence-level prediction"))
    plotting.legend_below(fig, handles, ncol=4)
    return fig


def tables(inputs):
    return {"data": data(inputs.results_table("tree_study.csv"))}


def render(t):
    return draw(t["data"])


def caption(t: dict[str, pd.DataFrame]) -> str:
    """The caption, its numbers read from the plotted table."""
    d = t["data"]
    tok = (d.measured - d.predicted_token_level).abs()
    seq = (d.measured - d.predicted_sequence_level).abs()
    by_len = seq.groupby(d.answer_tokens).max()
    return PREFIX + (f"Take-away: the token-level theory of each loss type lands on the trainer (max error "
                     f"{tok.max():.3f}); the sequence-level theory misses by up to {seq.max():.2f}, at every answer "
                     f"length (largest miss {by_len.min():.2f} to {by_len.max():.2f} per length).")


PREFIX = (
    "Figure 14. Token-level GRPO on answer trees (answers of 2 to 5 tokens closed by an end token; "
    "the reward depends on a later token): every answer's trained probability against the "
    "token-level prediction for the trainer's loss type (filled: TRL's grpo, dr_grpo, dapo with one "
    "group per batch) and against the sequence-level prediction (grey crosses), 3 seeds x 8 questions "
    "per tree, from the committed tree study (tree_study.csv). Bottom row: trained minus the token-level "
    "prediction, on its own scale. ")

SPEC = FigureSpec(14, "token_vs_sequence", caption, tables, render, __name__)
