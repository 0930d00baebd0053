"""Compare a rerun of a trainer study with its committed table, number by number (issue 20).

    python experiments/compare_reruns.py small /tmp/rerun/validate            # results.csv vs validate_results.csv
    python experiments/compare_reruns.py tree /tmp/rerun/tree --where seed=0
    python experiments/compare_reruns.py small RERUN --committed OTHER.csv     # e.g. the same study at another commit

A rerun (a study run into a scratch folder, never into docs/results) is matched to the committed table
row by row on the study's keys (configuration, seed, question, answer, ...); rows only one side has are
counted, not compared. For every numeric column both tables have, the largest absolute difference over
the matched rows is printed. Tables written with ``float_format="%.6g"`` differ from a full-precision
rerun by their rounding (up to 5e-7 on a probability), which is not a change.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


@dataclass(frozen=True)
class Table:
    """Where a study's rerun writes its table, the committed table it is compared with, and the row keys."""

    rerun: str
    committed: str
    keys: tuple


#: study -> its table. The columns a study's summary adds (seconds, convergence verdicts) are left out of the
#: keys, so that a table written before a column existed still matches.
TABLES = {
    "small": Table("results.csv", "validate_results.csv", ("config", "prediction", "question")),
    "small_summary": Table("summary.csv", "summary.csv", ("config", "prediction")),
    "validate_seeds": Table("validate_seeds.csv", "validate_seeds.csv",
                            ("seed", "config", "prediction", "mode", "learning_rate", "question")),
    "tree": Table("tree_results.csv", "tree_study.csv", ("seed", "config", "question", "answer")),
    "tree_summary": Table("tree_summary.csv", "tree_study_summary.csv", ("seed", "config")),
    "kl": Table("kl_results.csv", "kl_study.csv", ("seed", "config", "question", "answer")),
    "kl_summary": Table("kl_summary.csv", "kl_study_summary.csv", ("seed", "config")),
    "family": Table("family_study.csv", "family_study.csv", ("seed", "config", "question")),
    "multistable": Table("multistable_optimizer.csv", "multistable_optimizer.csv",
                         ("seed", "question", "method", "step_size")),
    "fig16": Table("fig16_trajectories.csv", "fig16_trajectories.csv", ("run", "question", "kind", "step")),
    "trl": Table("results.csv", "trl_results.csv", ("setting", "question")),
}
#: columns that are not numbers of the study (wall time, counters of the run's own bookkeeping)
NOT_COMPARED = {"seconds", "seconds_total"}


def compare_tables(rerun: pd.DataFrame, committed: pd.DataFrame, keys) -> tuple[pd.Series, dict]:
    """The largest |rerun - committed| per numeric column, over the rows matched on ``keys``.

    Parameters
    ----------
    rerun, committed : pandas.DataFrame
        The two tables; each row is identified by its values in ``keys``.
    keys : sequence of str
        Columns both tables have, which identify a row (e.g. configuration, seed, question).

    Returns
    -------
    diffs : pandas.Series
        Column name -> the largest absolute difference over matched rows where both values are numbers
        (NaN where the column has no such row); numeric columns both tables have, keys and wall time excluded.
    counts : dict
        ``matched``, ``only_rerun``, ``only_committed`` (rows) and ``mismatched_nan`` (cells NaN on one side only).

    Raises
    ------
    KeyError
        A key column missing from either table, or keys that do not identify the rows of a table.

    Examples
    --------
    >>> a = pd.DataFrame(dict(config=["x", "y"], measured=[0.5, 0.25]))
    >>> b = pd.DataFrame(dict(config=["x", "z"], measured=[0.5 + 1e-3, 0.0]))
    >>> diffs, counts = compare_tables(a, b, ["config"])
    >>> round(float(diffs["measured"]), 6), counts["matched"], counts["only_rerun"]
    (0.001, 1, 1)
    """
    keys = list(keys)
    for name, t in (("rerun", rerun), ("committed", committed)):
        missing = [k for k in keys if k not in t.columns]
        if missing:
            raise KeyError(f"the {name} table has no key column(s) {missing}; its columns are {list(t.columns)}")
        if t.duplicated(keys).any():
            raise KeyError(f"the keys {keys} do not identify the rows of the {name} table")
    # keys compared as text: a key written as 0.003 in one table and 0.0030 in the other is still one key
    left = rerun.assign(**{k: rerun[k].astype(str) for k in keys})
    right = committed.assign(**{k: committed[k].astype(str) for k in keys})
    m = left.merge(right, on=keys, how="outer", suffixes=("_rerun", "_committed"), indicator=True)
    both = m[m["_merge"] == "both"]
    cols = [c for c in rerun.columns if c in committed.columns and c not in keys and c not in NOT_COMPARED
            and pd.api.types.is_numeric_dtype(rerun[c]) and pd.api.types.is_numeric_dtype(committed[c])]
    diffs, nan_mismatch = {}, 0
    for c in cols:
        a = both[f"{c}_rerun"].astype(float).to_numpy()
        b = both[f"{c}_committed"].astype(float).to_numpy()
        ok = np.isfinite(a) & np.isfinite(b)
        nan_mismatch += int(np.sum(np.isnan(a) != np.isnan(b)))
        diffs[c] = float(np.max(np.abs(a[ok] - b[ok]))) if ok.any() else np.nan
    counts = dict(matched=len(both), only_rerun=int((m["_merge"] == "left_only").sum()),
                  only_committed=int((m["_merge"] == "right_only").sum()), mismatched_nan=nan_mismatch)
    return pd.Series(diffs, dtype=float), counts


def _where(df: pd.DataFrame, where: list[str]) -> pd.DataFrame:
    for cond in where:
        col, _, val = cond.partition("=")
        if col not in df.columns:
            raise KeyError(f"--where {cond!r}: no column {col!r}")
        df = df[df[col].astype(str) == val]
    return df


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", choices=sorted(TABLES))
    ap.add_argument("rerun", type=Path, help="the rerun's folder (or its table)")
    ap.add_argument("--committed", type=Path, default=None, help="default: the study's table in docs/results")
    ap.add_argument("--where", nargs="*", default=[], metavar="COLUMN=VALUE",
                    help="compare only the committed rows with these values (e.g. seed=0 mode=joint)")
    a = ap.parse_args(argv)
    spec = TABLES[a.study]
    rerun_path = a.rerun / spec.rerun if a.rerun.is_dir() else a.rerun
    committed_path = a.committed or RESULTS / spec.committed
    for what, path in (("rerun", rerun_path), ("committed", committed_path)):
        if not path.is_file():
            ap.error(f"the {what} table {path} does not exist (a {a.study} rerun's folder holds {spec.rerun}; "
                     f"e.g. the study's --out folder, where it writes its tables before copying them)")
    rerun = pd.read_csv(rerun_path)
    committed = _where(pd.read_csv(committed_path), a.where)
    diffs, counts = compare_tables(rerun, committed, spec.keys)
    print(f"{a.study}: {counts['matched']} rows compared on {list(spec.keys)}; only in the rerun "
          f"{counts['only_rerun']}, only committed {counts['only_committed']}, "
          f"NaN on one side {counts['mismatched_nan']}")
    for col, d in diffs.items():
        print(f"  {col:32s} max |difference| {d:.3g}")


if __name__ == "__main__":
    main()
