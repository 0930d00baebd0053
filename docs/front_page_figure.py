"""The front page's figure: the stationary probability of the right answer against beta.

    python docs/front_page_figure.py          # writes docs/img/front_page.csv and docs/img/front_page.png

One binary question (pi_ref(correct) = 0.2, reward 1 for the correct answer, 0 for the other); GRPO as
published (reverse penalty, k3), the direct-KL variant (TRL's ratio x k3), both with scale normalisation,
at G = 2, 8 and inf, and RLHF's logarithmic pooling. The PNG is drawn from the CSV, and
tests/test_docs.py checks the CSV against the library.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
PI_REF = (0.2, 0.8)
BETAS = np.geomspace(0.01, 10.0, 61)
GROUPS = (2, 8, math.inf)
PENALTIES = {"reverse": "GRPO (reverse KL, k3)", "direct": "direct KL (ratio x k3)"}


def compute() -> pd.DataFrame:
    from grpo_theory import Objective, Question, log_pooling, stationary_policy

    q = Question(list(PI_REF), rewards=[1.0, 0.0])
    rows = []
    for penalty in PENALTIES:
        for g in GROUPS:
            for beta in BETAS:
                pi = stationary_policy(q, Objective(float(beta), g, penalty, "scale")).pi
                rows.append(dict(method=penalty, G=g, beta=float(beta), p_correct=float(pi[0])))
    for beta in BETAS:
        rows.append(dict(method="rlhf", G=math.nan, beta=float(beta),
                         p_correct=float(log_pooling(q.pi_ref, [1.0, 0.0], float(beta))[0])))
    return pd.DataFrame(rows)


def draw(df: pd.DataFrame):
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from grpo_theory import plotting

    with matplotlib.rc_context(plotting.STYLE):
        fig = Figure(figsize=(1.45 * plotting.COLUMN, 3.0), layout="constrained")   # beside the example
        ax = fig.subplots()
        colors = {"reverse": plotting.METHOD_COLORS["GRPO reverse/scale"],
                  "direct": plotting.METHOD_COLORS["GRPO direct/scale"], "rlhf": plotting.METHOD_COLORS["RLHF"]}
        dashes = {2: ":", 8: "--", math.inf: "-"}
        for (method, g), d in df[df.method != "rlhf"].groupby(["method", "G"], sort=False):
            ax.plot(d.beta, d.p_correct, color=colors[method], ls=dashes[g])
        r = df[df.method == "rlhf"]
        ax.plot(r.beta, r.p_correct, color=colors["rlhf"], lw=2.2, alpha=0.55)
        ax.axhline(PI_REF[0], color="0.45", ls=":", lw=0.9)
        ax.text(BETAS[0], PI_REF[0] + 0.02, r"$\pi_{\mathrm{ref}}$(correct) = 0.2", ha="left", va="bottom", fontsize=7)
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(r"KL weight $\beta$")
        ax.set_ylabel("P(correct answer) at the\nstationary policy")
        handles = [Line2D([], [], color=colors["reverse"], label=PENALTIES["reverse"]),
                   Line2D([], [], color=colors["direct"], label=PENALTIES["direct"]),
                   Line2D([], [], color=colors["rlhf"], lw=2.2, alpha=0.55, label="RLHF (log pooling)")]
        handles += [Line2D([], [], color="0.3", ls=ls, label=f"G = {'∞' if math.isinf(g) else g}")
                    for g, ls in dashes.items()]
        ax.legend(handles=handles, loc="center left", ncols=1, bbox_to_anchor=(0.0, 0.55))
    return fig


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    df = compute()
    df.to_csv(OUT / "front_page.csv", index=False, float_format="%.10g")
    draw(pd.read_csv(OUT / "front_page.csv")).savefig(OUT / "front_page.png", dpi=200)
    print(f"wrote {OUT / 'front_page.csv'} and {OUT / 'front_page.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
