"""Explain the instabilities in logged training runs (issue 26): which prompts move together, whether
the tabular step-size analysis predicts the fall, and what the optimiser, the clip and the KL
estimate were doing when it came.

    python experiments/convergence_analysis.py --smollm runs/validate_smollm2       # the SmolLM2 study
    python experiments/convergence_analysis.py --validate runs/validate             # a small-GPT study
        [--out docs/results/convergence_analysis.csv]

Reads every run's ``metrics.csv`` (the trainer's log: P(correct) per prompt, dense early and every
step at the end; the expected reward; k3; the clip fraction; the learning rate) beside the study's
result rows (pi_ref, predicted, G, beta, penalty), and writes one row per (run, prompt):

* ``status``, ``drift``, ``spread``: grpo_theory.convergence's check on the log.
* ``run_drop``, ``run_drop_peak_step``, ``run_drop_step``: the largest fall of the run's mean
  reward; ``dropped_with_run``: this prompt fell by > 0.1 within that fall (peak to trough + 10%
  of the steps); ``comoving``: the prompts whose per-step logit increments correlate with this
  one's at > 0.5 (shared weights move them together); ``answer``: the rewarded answer's text where
  the study knows it (a shared letter or digit is a candidate cause).
* ``time_scale``: the run's effective step in logit units (the flow from pi_ref fitted to the
  trajectory before the fall, as experiments/fig16_trajectories.py does); ``tabular_drop`` and
  ``tabular_overshoot``: the largest fall and the overshoot above the stationary point of
  ``dynamics.grpo_steps`` (exact expectations, SGD on the logits) at ``lr = time_scale`` over as
  many steps: a tabular fall says the step size alone explains it, none says the cause is elsewhere
  (shared weights, Adam's state).
* ``clip_fraction_at_drop``, ``k3_at_peak``, ``k3_at_drop``, ``logit_step_ratio_at_drop`` (the
  largest |increment| of logit P(correct) over the 10 logged points before the fall against the
  run's median): Adam's step grows where its second-moment estimate lags a burst of gradient, the
  clip acts only with inner updates > 1, and a k3 that spikes before the fall points at the KL term.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from grpo_theory import Objective, Question
from grpo_theory.convergence import DROP_TOL, check_trajectories, largest_drop
from grpo_theory.dynamics import flow, grpo_steps

ROOT = Path(__file__).resolve().parents[1]
COMOVE = 0.5


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def _fit_time_scale(steps: np.ndarray, pis: np.ndarray, p0: float, obj: Objective) -> float:
    """t = c x step: the c whose flow from pi_ref best fits the trajectory (least squares)."""
    q = Question([p0, 1 - p0], rewards=[1, 0])
    t_dense = np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 3000)])
    tr = flow(q, obj, q.pi_ref, t_dense, with_points=False).pi[:, 0]
    grid = np.geomspace(1e-4, 1e4 / max(1.0, steps.max()), 300)
    loss = [float(np.sum((np.interp(c * steps, t_dense, tr) - pis) ** 2)) for c in grid]
    return float(grid[int(np.argmin(loss))])


def _tabular(p0: float, predicted: float, obj: Objective, lr: float, n: int) -> tuple[float, float]:
    q = Question([p0, 1 - p0], rewards=[1, 0])
    path = np.asarray(grpo_steps(q, obj, q.pi_ref, lr=lr, n_batches=max(1, n), with_points=False).pi)[:, 0]
    return largest_drop(np.arange(len(path)), path).size, float(path.max() - predicted)


def analyse_run(run: str, metrics: pd.DataFrame, rows: pd.DataFrame) -> list[dict]:
    """One row per prompt of one run. ``rows``: the study's rows for this run, one per prompt in the
    order of the log's ``p_best_q*`` columns, with pi_ref, predicted, group_size, beta, penalty."""
    cols = sorted((c for c in metrics if c.startswith("p_best_q")), key=lambda c: int(c[8:]))
    steps = metrics.step.to_numpy(float)
    p = metrics[cols].to_numpy(float)
    reward = metrics["expected_reward"].to_numpy(float) if "expected_reward" in metrics else p.mean(1)
    rep = check_trajectories(steps, p, reward=reward)
    drop = rep.reward_drop
    inc = np.diff(_logit(p), axis=0) / np.diff(steps)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(inc.T) if p.shape[1] > 1 else np.ones((1, 1))
    before = steps < drop.peak_step if drop.size > DROP_TOL else np.ones_like(steps, bool)
    at = (steps >= drop.peak_step) & (steps <= drop.trough_step)
    i_drop = int(np.searchsorted(steps, drop.trough_step))
    i_peak = int(np.searchsorted(steps, drop.peak_step))
    step_sizes = np.abs(inc).max(1)
    window = step_sizes[max(0, i_drop - 10):max(1, i_drop)]
    row0 = rows.iloc[0]
    obj = Objective(beta=float(row0.beta), group_size=int(row0.group_size), penalty=str(row0.penalty))
    out = []
    for q, (_, r) in enumerate(rows.iterrows()):
        own = largest_drop(steps, p[:, q])
        with_run = bool(drop.size > DROP_TOL and own.size > DROP_TOL
                        and drop.peak_step <= own.trough_step <= drop.trough_step + 0.1 * steps[-1])
        partners = [int(j) for j in np.flatnonzero(corr[q] > COMOVE) if j != q]
        c = _fit_time_scale(np.concatenate([[0.0], steps[before]]), np.concatenate([[r.pi_ref], p[before, q]]),
                            float(r.pi_ref), obj)
        tab_drop, tab_over = _tabular(float(r.pi_ref), float(r.predicted), obj, c, int(steps[-1]))
        out.append(dict(run=run, prompt=q, question=r.get("question", q), answer=r.get("answer", ""),
                        pi_ref=r.pi_ref, predicted=r.predicted, measured=r.get("measured", np.nan),
                        status=rep.status[q], drift=rep.drift[q], spread=rep.spread[q], prompt_drop=own.size,
                        prompt_drop_step=own.trough_step, run_drop=drop.size, run_drop_peak_step=drop.peak_step,
                        run_drop_step=drop.trough_step, dropped_with_run=with_run,
                        comoving=" ".join(str(rows.iloc[j].get("question", j)) for j in partners),
                        overshoot=float(p[:, q].max() - r.predicted), time_scale=c, tabular_drop=tab_drop,
                        tabular_overshoot=tab_over,
                        clip_fraction_at_drop=float(metrics.clip_fraction.to_numpy()[at].mean())
                        if "clip_fraction" in metrics and at.any() else np.nan,
                        k3_at_peak=float(metrics.k3.iloc[min(i_peak, len(metrics) - 1)]) if "k3" in metrics else np.nan,
                        k3_at_drop=float(metrics.k3.iloc[min(i_drop, len(metrics) - 1)]) if "k3" in metrics else np.nan,
                        logit_step_ratio_at_drop=float(window.max() / np.median(step_sizes))
                        if window.size and np.median(step_sizes) > 0 else np.nan))
    return out


def _answers() -> dict:
    """Prompt text -> the rewarded answer, for the SmolLM2 prompt sets (a shared letter shows)."""
    from grpo_theory.training.smollm import ARITHMETIC_QUESTIONS, MULTIPLE_CHOICE_QUESTIONS, YES_NO_QUESTIONS

    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
    out = {q: a for q, a in YES_NO_QUESTIONS}
    out |= {q: "ABCD"[c] for q, _, c in MULTIPLE_CHOICE_QUESTIONS}
    out |= {f"{a}{op}{b}": str(ops[op](a, b)) for a, op, b in ARITHMETIC_QUESTIONS}
    return out


def _read_log(path: Path) -> pd.DataFrame:
    """A run's metrics.csv, each step once (a run resumed by an older trainer logged the steps after
    its last checkpoint twice: the later rows are the ones its history kept)."""
    return pd.read_csv(path).drop_duplicates("step", keep="last").sort_values("step", ignore_index=True)


def smollm_runs(out: Path):
    """(run name, metrics, rows) for every finished job of a SmolLM2 study directory."""
    answers = _answers()
    for f in sorted((out / "rows").glob("*.csv")):
        m = out / "runs" / f.stem / "metrics.csv"
        if m.exists():
            rows = pd.read_csv(f)
            rows["answer"] = rows.prompt.map(answers).fillna("")
            yield f.stem, _read_log(m), rows


def validate_runs(out: Path):
    """(config, metrics, rows) for every configuration of a ``run_validation`` directory."""
    res = pd.read_csv(out / "results.csv")
    for config, rows in res[res.prediction == "trainer"].groupby("config", sort=False):
        m = out / "runs" / config / "metrics.csv"
        if m.exists():
            yield config, _read_log(m), rows.rename(columns={"pi_ref_a": "pi_ref"}).sort_values("question")


def main(argv=None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smollm", type=Path, help="a run_smollm_study output directory")
    ap.add_argument("--validate", type=Path, help="a run_validation output directory")
    ap.add_argument("--runs", default=None, help="only runs whose name matches this regular expression")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "convergence_analysis.csv")
    args = ap.parse_args(argv)
    runs = []
    if args.smollm:
        runs += list(smollm_runs(args.smollm))
    if args.validate:
        runs += list(validate_runs(args.validate))
    if args.runs:
        runs = [r for r in runs if re.search(args.runs, r[0])]
    if not runs:
        raise SystemExit("no runs found: give --smollm or --validate a study directory with runs/*/metrics.csv")
    table = pd.DataFrame([row for run in runs for row in analyse_run(*run)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.6g")
    unstable = table[table.run_drop > DROP_TOL].drop_duplicates("run")
    print(f"{table.run.nunique()} runs, {len(table)} prompts; {len(unstable)} runs with a mean-reward fall > "
          f"{DROP_TOL}; {int((table.status != 'converged').sum())} prompts not converged")
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(table[table.status != "converged"][["run", "question", "status", "drift", "prompt_drop", "run_drop",
                                                  "comoving", "tabular_drop"]].to_string(index=False))
    return table


if __name__ == "__main__":
    main()
