"""The tables the kernel scripts share (free_generation_kernel.py, small_gpt_kernel.py): a measured kernel in
long form, and the pair of CSVs ``STEM.csv`` (long form) and ``STEM_prompts.csv`` (per prompt) they write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def long_form(k, labels, **keys) -> pd.DataFrame:
    """One row per prompt pair ``(i, j)`` of the ``MeasuredKernel`` ``k``: ``keys`` (constant columns),
    ``prompt_i``, ``prompt_j`` (from ``labels``, in ``k``'s order) and ``K``."""
    labels = np.asarray(labels)
    n = len(labels)
    return pd.DataFrame(dict(**keys, prompt_i=np.repeat(labels, n), prompt_j=np.tile(labels, n), K=k.K.ravel()))


def write_tables(results, stem: str, long: list, per: list) -> None:
    """``results/STEM.csv`` (the ``long`` frames) and ``results/STEM_prompts.csv`` (the ``per`` frames), with
    8 significant digits."""
    for frames, name in ((long, f"{stem}.csv"), (per, f"{stem}_prompts.csv")):
        pd.concat(frames, ignore_index=True).to_csv(Path(results) / name, index=False, float_format="%.8g")
