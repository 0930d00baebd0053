"""Which verdicts of the stationarity check would the near-edge logit test change? (issue 26)

    python experiments/convergence_recheck.py RUNS_DIR [RUNS_DIR ...] [--out CSV]
    python experiments/convergence_recheck.py RUNS_DIR --apply seeds|small --table CSV --summary CSV

Reads every ``metrics.csv`` under the given directories (the trainer's logs: ``step``,
``p_best_q*``, ``expected_reward``), checks each prompt's trajectory with
``grpo_theory.convergence.check_trajectories`` twice, with the logit test off
(``logit_drift_tol=inf``, the check before it) and with the defaults, using the run's own
``convergence_tail`` (its ``config.json``, default 0.25), and prints every prompt whose status
changes, with counts per directory. A study whose runs show no change keeps its committed verdicts;
the others are resumed from their checkpoints under the new check (a run at its finished horizon
continues while a prompt is moving), or, where that is too costly, re-verdicted in place:

``--apply seeds`` (``validate_seeds.csv`` and its summary, runs under
``mode{mode}_learning_rate{lr}/seed{seed}/runs/{config}[/q{question}]``) and ``--apply small``
(``validate_results.csv`` and ``summary.csv``, runs under ``{config}[/q{question}]``) recompute the
rows' convergence columns from the logs with the current check, and the summaries' from the rows
(``grpo_theory.convergence.summary_columns``). The runs are not extended. First each row's columns are
recomputed with the logit test off and compared with the committed ones (they must agree: the mapping
from rows to logs is right; a table already re-verdicted stops there, its verdicts being the new check's),
then written with it on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from grpo_theory.convergence import TAIL, check_trajectories, report_columns, summary_columns

#: The columns check_trajectories' report gives a row (grpo_theory.convergence.report_columns).
CONV = list(report_columns(None, 0))


def _load_log(metrics: Path) -> dict:
    """A run's log (each step once, in order) as ``check_trajectories``' arguments, with its ``convergence_tail``."""
    m = pd.read_csv(metrics).drop_duplicates("step", keep="last").sort_values("step")
    n = sum(c.startswith("p_best_q") for c in m)
    cfg = metrics.parent / "config.json"
    tail = json.loads(cfg.read_text()).get("convergence_tail", TAIL) if cfg.exists() else TAIL
    return dict(steps=m.step.to_numpy(), values=m[[f"p_best_q{i}" for i in range(n)]].to_numpy(dtype=float),
                tail=tail or TAIL, reward=m["expected_reward"].to_numpy() if "expected_reward" in m else None)


def _checks(log: dict):
    """The check on one loaded log without the logit test (as before it) and with it (the defaults)."""
    return check_trajectories(**log, logit_drift_tol=np.inf), check_trajectories(**log)


def recheck_log(metrics: Path) -> pd.DataFrame:
    """One row per prompt of one run's log: the status without and with the logit test."""
    log = _load_log(metrics)
    before, after = _checks(log)
    n = before.status.size
    return pd.DataFrame(dict(run=str(metrics.parent), prompt=np.arange(n), steps=int(before.steps),
                             p_end=log["values"][-1], before=before.status.astype(str),
                             after=after.status.astype(str), drift=before.drift, logit_drift=after.logit_drift,
                             reason=[after.reason(q) for q in range(n)]))


def _run_dir(study: str, root: Path, r) -> Path:
    base = root if study == "small" else root / f"mode{r['mode']}_learning_rate{r['learning_rate']:g}" / \
        f"seed{int(r['seed'])}" / "runs"
    d = base / str(r["config"])
    return d / f"q{int(r['question'])}" if (d / f"q{int(r['question'])}").is_dir() else d


def apply(study: str, root: Path, table: Path, summary: Path) -> None:
    """Re-verdict ``table``'s rows from their runs' logs and re-summarise ``summary`` (see the module doc)."""
    rows = pd.read_csv(table, keep_default_na=False, na_values=[""], dtype={"conv_reason": object})
    reports: dict = {}
    old, new = [], []
    for _, r in rows.iterrows():
        d = _run_dir(study, root, r)
        if d not in reports:
            if not (d / "metrics.csv").exists():
                raise SystemExit(f"error: no log for {dict(r[['config', 'question']])}: {d / 'metrics.csv'}")
            reports[d] = _checks(_load_log(d / "metrics.csv"))
        q = 0 if d.name.startswith("q") and d.name[1:].isdigit() else int(r["question"])
        old.append(report_columns(reports[d][0], q))
        new.append(report_columns(reports[d][1], q))
    old, new = pd.DataFrame(old), pd.DataFrame(new)
    for c in CONV:                         # the mapping reproduces the committed verdicts, to the CSV's digits
        a, b = rows[c], old[c]
        if c in ("conv_status", "conv_reason"):
            bad = a.astype(object).fillna("").astype(str) != b.astype(object).fillna("").astype(str)
        else:
            bad = ~np.isclose(a.astype(float), b.astype(float), rtol=1e-5, atol=1e-9, equal_nan=True)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SystemExit(f"error: {c} of row {i} is {a.iloc[i]!r} in {table} but {b.iloc[i]!r} from its log")
    changed = rows.conv_status.to_numpy() != new.conv_status.to_numpy()
    for c in CONV:
        rows[c] = new[c].to_numpy()
    keys = ["config", "prediction"] + (["mode", "learning_rate"] if study == "seeds" else [])
    label = (lambda r: f"seed {r['seed']} q{r['question']}") if study == "seeds" else None
    unit = ["seed", "question"] if study == "seeds" else None
    summ = pd.read_csv(summary, keep_default_na=False, na_values=[""], dtype={"unconverged_why": object})
    for i, s in summ.iterrows():
        g = rows.loc[np.logical_and.reduce([rows[k] == s[k] for k in keys])]
        for k, v in summary_columns(g, label=label, unit=unit).items():
            summ.loc[i, k] = v
    rows.to_csv(table, index=False, float_format="%.6g" if study == "seeds" else None)
    summ.to_csv(summary, index=False, float_format="%.6g" if study == "seeds" else None)
    print(f"{table}: {int(changed.sum())} rows changed status; {summary} re-summarised")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="directories searched for metrics.csv")
    ap.add_argument("--out", default=None, help="write every prompt's two verdicts here")
    ap.add_argument("--apply", choices=["seeds", "small"], default=None,
                    help="re-verdict a committed table from the logs in RUNS_DIR (see the module doc)")
    ap.add_argument("--table", default=None)
    ap.add_argument("--summary", default=None)
    args = ap.parse_args()
    if args.apply:
        if len(args.runs) != 1 or not args.table or not args.summary:
            raise SystemExit("error: --apply needs one RUNS_DIR, --table and --summary")
        apply(args.apply, Path(args.runs[0]), Path(args.table), Path(args.summary))
        return
    parts = []
    for d in args.runs:
        logs = sorted(Path(d).rglob("metrics.csv"))
        if not logs:
            raise SystemExit(f"error: no metrics.csv under {d}")
        t = pd.concat([recheck_log(p) for p in logs], ignore_index=True)
        t.insert(0, "root", d)
        changed = t[t.before != t.after]
        print(f"{d}: {len(logs)} runs, {len(t)} prompts, {len(changed)} verdicts changed")
        for _, r in changed.iterrows():
            print(f"  {Path(r.run).relative_to(d)} q{r.prompt}: {r.before} -> {r.after} (P {r.p_end:.4g} at step "
                  f"{r.steps}; {r.reason})")
        parts.append(t)
    if args.out:
        pd.concat(parts, ignore_index=True).to_csv(args.out, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
