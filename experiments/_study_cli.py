"""The command line the small-GPT study scripts share (kl_study.py, tree_study.py)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def study_args(doc: str, out: str) -> argparse.Namespace:
    """``--steps`` (800), ``--seeds`` (0 1 2), ``--out`` (runs/OUT), ``--resume`` and
    ``--until-stationary FACTOR`` (issue 26: train each run to stationarity, up to FACTOR x its steps), parsed."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", default=str(ROOT / "runs" / out))
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--until-stationary", type=float, default=None, metavar="FACTOR",
                    help="train each run to stationarity, up to FACTOR x its steps (issue 26)")
    return ap.parse_args()


def run_and_copy(run, args: argparse.Namespace, tables: dict, **options):
    """``run(out, seeds=, steps=, resume=, **options)`` (a study of grpo_theory.studies), then copy its
    ``tables`` (name in ``--out`` -> name in docs/results); returns the study's summary."""
    summary = run(args.out, seeds=tuple(args.seeds), steps=args.steps, resume=args.resume, progress=False,
                  **options)
    for src, dst in tables.items():
        shutil.copy(Path(args.out) / src, ROOT / "docs" / "results" / dst)
    return summary
