"""Each framework's defaults on one binary question: what TRL 1.9, TRL 1.16, verl's GRPO recipe and
OpenRLHF's group_norm converge to at the same beta, beside RLHF (issue: every KL placement).

    python experiments/kl_framework_defaults.py

The same beta (0.04 and 0.5) and G = 8 everywhere (TRL's default num_generations; verl and OpenRLHF
default to one sample, which is not GRPO), every other setting at the framework's default as its
config reader reads it (grpo_theory.figure_data.framework_objectives). Writes the table at
pi_ref(correct) = 0.2 to docs/results/kl_framework_defaults.csv; the curves over pi_ref are
Figure 18 (`grpo-theory figures --only 18`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from grpo_theory import Question, log_pooling, stationary_policy
from grpo_theory.figure_data import FRAMEWORK_BETAS, framework_objectives

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    q = Question([0.2, 0.8], rewards=[1.0, 0.0])
    rows = []
    for beta in FRAMEWORK_BETAS:
        for name, obj in framework_objectives(beta).items():
            pt = stationary_policy(q, obj)
            rows.append(dict(beta=beta, framework=name, objective=obj.describe(), penalty=obj.regime,
                             pi_correct=pt.pi[0], pi_wrong=pt.pi[1], collapse=bool(pt.boundary)))
        lp = log_pooling(q.pi_ref, [1.0, 0.0], beta)
        rows.append(dict(beta=beta, framework="RLHF (log pooling)", objective="pi ∝ pi_ref e^{r/beta}", penalty="-",
                         pi_correct=lp[0], pi_wrong=lp[1], collapse=False))
    table = pd.DataFrame(rows)
    out = ROOT / "docs" / "results" / "kl_framework_defaults.csv"
    table.to_csv(out, index=False)
    print(table[["beta", "framework", "penalty", "pi_correct", "pi_wrong", "collapse"]].to_string(
        index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
