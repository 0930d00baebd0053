"""Figure 16's data from the committed five-seed study's runs: training trajectories against the flow.

    python experiments/validate_seeds.py          # first (its runs/ hold the trajectories)
    python experiments/fig16_trajectories.py      # a few seconds; writes docs/results/fig16_trajectories.csv
    python experiments/fig16_trajectories.py --early 150    # ~1 CPU minute; no runs/ needed

The study's runs logged every 10 steps; the rise takes 2-10 of those points on Figure 16's log axis.
``--early N`` reruns the first N steps of the four runs (seed 0, each under its full learning-rate
schedule, so the steps are the same steps), logged as the trainer now logs (every step up to 20, then
about every 10% of the step number), checks that they reproduce the committed table at the steps both
have (to its 6 digits), and merges them in, with the flow and grpo_steps at the new steps.

G = 8, beta = 0.5, reverse penalty, seed 0, two questions (the lowest and the highest pi_ref): the
trained probability of the rewarded answer every 10 steps at Adam lr 3e-3, 1e-3 and 3e-4, and with
4 inner updates per batch (PPO clipping active) at 3e-3. Beside each run: the gradient flow from
pi_ref with its time scale fitted to the run (t = c x step, least squares; c is the run's
effective step in logit units), and dynamics.grpo_steps (exact expectations) at lr = c.
"""

from __future__ import annotations

import argparse
import copy
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from grpo_theory import Objective, Question
from grpo_theory.dynamics import flow, grpo_steps

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs" / "validate_seeds"
TABLE = ROOT / "docs" / "results" / "fig16_trajectories.csv"
#: each run's step count (validate_seeds.py: 800 at lr 3e-3, lr x steps = 1.2 below it): the schedule's length
RUN_STEPS = {3e-3: 800, 1e-3: 1200, 3e-4: 4000}
OBJ = Objective(beta=0.5, group_size=8)
#: (label, run directory, learning rate, inner updates)
RUN_SET = (("lr 3e-3", "modejoint_learning_rate0.003", "G8_beta0.5_reverse", 3e-3, 1),
           ("lr 1e-3", "modejoint_learning_rate0.001", "G8_beta0.5_reverse", 1e-3, 1),
           ("lr 3e-4", "modejoint_learning_rate0.0003", "G8_beta0.5_reverse", 3e-4, 1),
           ("lr 3e-3, 4 inner updates", "modejoint_learning_rate0.003", "inner4_clip_G8", 3e-3, 4))


def main(seed: int = 0) -> None:
    results = pd.read_csv(RUNS / "modejoint_learning_rate0.003" / f"seed{seed}" / "results.csv")
    base = results[(results.config == "G8_beta0.5_reverse") & (results.prediction == "trainer")]
    picks = [int(base.loc[base.pi_ref_a.idxmin()].question), int(base.loc[base.pi_ref_a.idxmax()].question)]
    rows = []
    for label, mode, config, lr, inner in RUN_SET:
        m = pd.read_csv(RUNS / mode / f"seed{seed}" / "runs" / config / "metrics.csv")
        for q in picks:
            info = base[base.question == q].iloc[0]
            p0 = float(info.pi_ref_a)
            steps = np.concatenate([[0], m.step.to_numpy()])
            pis = np.concatenate([[p0], m[f"p_best_q{q}"].to_numpy()])
            question = Question([p0, 1 - p0], rewards=[1, 0])
            t_dense = np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 4000)])
            tr = flow(question, OBJ, question.pi_ref, t_dense, with_points=False).pi[:, 0]

            def loss(c, steps=steps, pis=pis, tr=tr, t_dense=t_dense):
                return float(np.sum((np.interp(c * steps, t_dense, tr) - pis) ** 2))
            grid = np.geomspace(1e-4, 1e4 / steps.max(), 200)       # coarse, then refined: one clear minimum
            c0 = grid[np.argmin([loss(g) for g in grid])]
            c = minimize_scalar(loss, bounds=(c0 / 1.2, c0 * 1.2), method="bounded").x
            tab = grpo_steps(question, OBJ, question.pi_ref, lr=c, n_batches=int(steps.max()),
                             with_points=False).pi[:, 0]
            common = dict(run=label, learning_rate=lr, inner_updates=inner, question=q, pi_ref=p0,
                          predicted=float(info.predicted), time_scale=c)
            rows += [dict(common, kind="trained", step=s, pi=p) for s, p in zip(steps, pis)]
            rows += [dict(common, kind="flow (fitted time scale)", step=s, pi=float(np.interp(c * s, t_dense, tr)))
                     for s in steps]
            rows += [dict(common, kind="grpo_steps (lr = time scale)", step=s, pi=float(tab[min(s, len(tab) - 1)]))
                     for s in steps]
    table = pd.DataFrame(rows)
    table.to_csv(ROOT / "docs" / "results" / "fig16_trajectories.csv", index=False, float_format="%.6g")
    print(table.groupby(["run", "question"]).agg(time_scale=("time_scale", "first"), pi_ref=("pi_ref", "first"),
                                                 predicted=("predicted", "first")).to_string())


def _model_rows(common: dict, steps, c: float) -> list[dict]:
    """The fitted flow (time c x step) and grpo_steps at lr = c, at the given steps, from pi_ref."""
    p0 = common["pi_ref"]
    question = Question([p0, 1 - p0], rewards=[1, 0])
    t_dense = np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 4000)])
    tr = flow(question, OBJ, question.pi_ref, t_dense, with_points=False).pi[:, 0]
    tab = grpo_steps(question, OBJ, question.pi_ref, lr=c, n_batches=int(max(steps)), with_points=False).pi[:, 0]
    return ([dict(common, kind="flow (fitted time scale)", step=s, pi=float(np.interp(c * s, t_dense, tr)))
             for s in steps]
            + [dict(common, kind="grpo_steps (lr = time scale)", step=s, pi=float(tab[min(s, len(tab) - 1)]))
               for s in steps])


def densify(stop: int, seed: int = 0) -> pd.DataFrame:
    """Rerun the first ``stop`` steps of every run and merge their denser log into the committed table."""
    import torch

    from grpo_theory.studies.small import extra_studies, gated_studies
    from grpo_theory.training.reference import pretrain_reference
    from grpo_theory.training.tasks import synthetic_binary_task
    from grpo_theory.training.trainer import GRPOTrainer

    table = pd.read_csv(TABLE)
    torch.set_num_threads(1)
    task, freqs = synthetic_binary_task(16, 1, seed=seed)           # run_validation's task and reference
    ref = pretrain_reference(task, freqs, seed=seed, progress=False, steps=800)
    out = ROOT / "runs" / "fig16_early"
    added = []
    for label, _mode, config, lr, _inner in RUN_SET:
        studies = gated_studies(steps=RUN_STEPS[lr], lr=lr) + extra_studies(steps=RUN_STEPS[lr], lr=lr)
        cfg = replace(next(s for s in studies if s.name == config).config, device="cpu", seed=seed, num_threads=1)
        d = out / f"lr{lr:g}" / config
        if (d / "metrics.csv").exists():
            (d / "metrics.csv").unlink()
        GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=d, progress=False).train(stop_after=stop)
        m = pd.read_csv(d / "metrics.csv").set_index("step")
        run = table[table.run == label]
        for q, g in run.groupby("question"):
            old = g[g.kind == "trained"].set_index("step").pi
            both = [s for s in old.index if s in m.index]
            gap = float(np.max(np.abs(m.loc[both, f"p_best_q{q}"].to_numpy() - old.loc[both].to_numpy())))
            if not both or gap > 2e-6 * max(1.0, float(old.max())):
                raise SystemExit(f"{label}, question {q}: the rerun is not the committed run (gap {gap:.2g} "
                                 f"at {len(both)} common steps)")
            print(f"{label}, question {q}: rerun = committed at {len(both)} steps (max gap {gap:.1e})")
            new = [s for s in m.index if s not in set(old.index)]
            common = g.iloc[0][["run", "learning_rate", "inner_updates", "question", "pi_ref", "predicted",
                                "time_scale"]].to_dict()
            if new:          # none when the table already holds the dense log (a rerun is then only the check)
                added += [dict(common, kind="trained", step=s, pi=float(m.loc[s, f"p_best_q{q}"])) for s in new]
                added += _model_rows(common, new, float(common["time_scale"]))
    merged = pd.concat([table, pd.DataFrame(added)], ignore_index=True)
    merged = merged.sort_values(["run", "question", "kind", "step"], kind="stable")
    order = {r[0]: i for i, r in enumerate(RUN_SET)}
    merged = merged.sort_values("run", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    merged.to_csv(TABLE, index=False, float_format="%.6g")
    return merged


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--early", type=int, default=None, help="rerun the first N steps, logged densely, and merge")
    args = ap.parse_args()
    if args.early:
        densify(args.early)
    else:
        main()
