"""More samples for the free-generation study's two estimates (:mod:`grpo_theory.studies.free`).

A final measurement from ``n`` samples and a ``p_ref`` from ``n`` fresh samples put a floor under the
MAE the theory can show: ``sqrt(2/pi) sigma`` a prompt, with
``sigma^2 = x(1 - x)/n + x'(p_ref)^2 p_ref(1 - p_ref)/n`` (the ±2σ band of Figure 25a(b)). Where the target sits
near that floor (beta = 4: floor 0.026 at ``n = 400`` against a target of 0.03), a test of the theory
needs more samples, not another tolerance. This module draws ``n_more`` further samples per prompt,
after training has ended and without changing any model:

* from the reference policy (the untrained MLP), on a generator no other stage uses, for ``p_ref``;
* from each finished job's final policy (its ``state.pt``), on a generator of its own, for the final
  measurement.

Each is kept on disk (``p_ref_more.csv``, ``<job>/final_more.csv``) and pooled with the first
estimate by adding counts: the first ``n`` samples' values stay in the table as ``p_ref_first`` and
``measured_first`` so that both can be scored.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .._io import atomic_write
from .._checks import arr, checked, dataframe, has_columns, same_length
from ..errors import InvalidInputError
from .free_prompts import count_correct

__all__ = ["more_reference_counts", "more_final_counts", "pool_counts"]

#: Generator seeds of the extra samples: the reference's, and each job's offset (plus its seed, and
#: 100 x its beta). Training uses the job's seed, the first p_ref 98765 and the screening 1234.
REF_MORE_SEED, FINAL_MORE_SEED = 424_242, 737_000


def _stage(path: Path, make) -> pd.DataFrame:
    if path.exists():
        return pd.read_csv(path)
    table = make()
    atomic_write(path, lambda p: table.to_csv(p, index=False))
    return table


def more_reference_counts(backend, answers, n_more: int, out_dir, *, progress: bool = True) -> pd.DataFrame:
    """``n_more`` further samples per prompt from the untrained policy: ``prompt, correct_more, n_more``
    (kept in ``out_dir/p_ref_more.csv``; an existing file with another ``n_more`` is refused).

    Parameters
    ----------
    backend
        The model (see :mod:`grpo_theory.studies.free`); sampled, not changed.
    answers : sequence of str
        One answer per prompt.
    n_more : int
        Samples per prompt.
    out_dir : str or pathlib.Path
        The study's folder.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        ``prompt, correct_more, n_more``.
    """
    path = Path(out_dir) / "p_ref_more.csv"

    def make():
        backend.reset()
        k = count_correct(backend, answers, n_more, torch.Generator().manual_seed(REF_MORE_SEED),
                          desc="p_ref (more samples)", progress=progress)
        return pd.DataFrame(dict(prompt=range(len(answers)), correct_more=k, n_more=n_more))
    t = _stage(path, make)
    _check_n(t, n_more, path)
    return t


def more_final_counts(backend, answers, n_more: int, job_dir, *, seed: int, beta: float,
                      progress: bool = True) -> pd.DataFrame:
    """``n_more`` further samples per prompt from a finished job's final policy (its ``state.pt``):
    ``prompt, correct_more, n_more`` (kept in ``job_dir/final_more.csv``).

    Parameters
    ----------
    backend
        The model (see :mod:`grpo_theory.studies.free`); its trainable part is loaded from the job's final state.
    answers : sequence of str
        One answer per prompt.
    n_more : int
        Samples per prompt.
    job_dir : str or pathlib.Path
        The finished job's folder.
    seed : int
        The job's seed (it seeds the sampler, with ``beta``).
    beta : float
        The job's beta.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        The final policy's counts: ``prompt, correct_more, n_more``.
    """
    job_dir = Path(job_dir)
    path = job_dir / "final_more.csv"

    def make():
        if not (job_dir / "measured.csv").exists():
            raise InvalidInputError(f"{job_dir} has not finished: more final samples need its final policy")
        st = torch.load(job_dir / "state.pt", weights_only=False)
        backend.load_state_dict(st["model"])
        gen = torch.Generator().manual_seed(FINAL_MORE_SEED + int(seed) + int(round(100 * beta)) * 1000)
        k = count_correct(backend, answers, n_more, gen, desc=f"final ({job_dir.name}, more samples)",
                          progress=progress)
        return pd.DataFrame(dict(prompt=range(len(answers)), correct_more=k, n_more=n_more))
    t = _stage(path, make)
    _check_n(t, n_more, path)
    return t


def _check_n(t: pd.DataFrame, n_more: int, path: Path) -> None:
    if len(t) and int(t.n_more.iloc[0]) != n_more:
        raise InvalidInputError(f"{path} holds {int(t.n_more.iloc[0])} more samples a prompt, not {n_more}; "
                                "remove it or ask for the same number")


def _prompt_ids(name, value):
    """A 1-D list, array or Series of prompt ids (not text: a string's characters are not prompts)."""
    try:
        flat = np.ndim(value) == 1
    except ValueError:                                  # ragged
        flat = False
    if isinstance(value, (str, bytes, bytearray, dict)) or not hasattr(value, "__len__") or not flat \
            or not all(isinstance(v, (str, int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value):
        raise InvalidInputError(f"{name} must be a 1-D list or Series of prompt ids, got {str(value)[:80]!r} "
                                f"({type(value).__name__})")


def _more_table(name, value):
    dataframe(name, value)
    has_columns(name, value, ("prompt", "correct_more", "n_more"))


@checked(value=arr(0.0, 1.0, ndim=1), n=arr(1, integer=True, ndim=1), more=_more_table, prompt=_prompt_ids)
def pool_counts(value: pd.Series, n: pd.Series, more: pd.DataFrame, prompt: pd.Series) -> tuple[np.ndarray,
                                                                                               np.ndarray]:
    """The pooled estimate ``(k + k_more) / (n + n_more)`` and its sample count, per row.

    Parameters
    ----------
    value : pandas.Series
        Each row's first estimate.
    n : pandas.Series
        Its samples.
    more : pandas.DataFrame
        A :func:`more_reference_counts` or :func:`more_final_counts` table.
    prompt : pandas.Series
        Each row's prompt index.

    Returns
    -------
    estimate : numpy.ndarray
        ``(k + k_more) / (n + n_more)``.
    n : numpy.ndarray
        ``n + n_more``.

    Examples
    --------
    >>> more = pd.DataFrame(dict(prompt=[0, 1], correct_more=[30, 0], n_more=100))
    >>> v, n = pool_counts(pd.Series([0.5, 0.1]), pd.Series([100, 100]), more, pd.Series([0, 1]))
    >>> v.tolist(), n.tolist()
    ([0.4, 0.05], [200, 200])
    """
    same_length("one per prompt", value=value, n=n, prompt=prompt)
    m = more.set_index("prompt")
    if not set(prompt) <= set(m.index):
        raise InvalidInputError(f"prompt holds ids with no extra samples in more: {sorted(set(prompt) - set(m.index))}")
    k = np.round(np.asarray(value, float) * np.asarray(n, float))
    km = m.correct_more.reindex(prompt).to_numpy(float)
    nm = m.n_more.reindex(prompt).to_numpy(float)
    n_all = np.asarray(n, float) + nm
    return (k + km) / n_all, n_all.astype(int)
