"""Per-prompt predictions for a run: base samples + objective -> stationary P(correct), pass@k, KL, flags, flows.

Notation: prompt ``x`` was solved ``c_x`` times in ``n_x`` base samples; ``p_x = c_x / n_x`` estimates
``p_ref`` (the base model's P(correct)); ``x(p)`` is the stationary P(correct) that the on-policy flow
from ``pi_ref`` reaches (:func:`grpo_theory.stationary_policy` on the two-class question).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._checks import arr, checked, flag, num, numbers, one_of, optional, register_class, text, checked_record
from .._validate import float_array, integer, number, plain
from ..errors import InvalidInputError
from ..integrations.openrlhf import read_openrlhf_config
from ..integrations.trl import load_config_as_read, read_trl_config
from ..integrations.verl import read_verl_config
from ..problem import Objective, as_objective, require_regularised
from .binary import predict_binary
from .clock import FlowTable
from .finite import predict_finite
from .calibrate import check_surface_size
from .coupled import time_grid
from .graded import graded_solve_seconds, predict_graded
from .intervals import INTERVALS, check_k, one_k, pass_at_k, unbiased_pass_at_k
from .report import write_outputs
from .samples import PredictWarning, SampleTable, read_samples, samples_source

__all__ = ["Prediction", "predict", "objective_for", "reward_kl_tradeoff"]


@register_class
@dataclass
@checked_record
class Prediction:
    """What :func:`predict` returns: one row per prompt ``x`` and the dataset-level summary.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per prompt: ``n``, ``correct``, ``p_ref`` (``c_x / n_x``) with ``p_ref_lo, p_ref_hi``, the
        stationary P(correct) ``pred = x(p_ref)`` with ``pred_lo, pred_hi``, ``kl_direct, kl_reverse``,
        ``pass@k_before, pass@k_after`` and the flags (columns described in docs/predict.md).
    summary : dict
        The dataset-level numbers (means of ``p_ref``, ``pred``, pass@k, KL), the settings, the counts of
        flagged prompts and the excluded rows.
    objective : Objective
        The objective predicted for.
    samples : SampleTable
        The base model's samples read.
    flows : FlowTable or None
        The flows ``p_x(t)`` of the binary prompts (only with a clock: ``clock=`` or ``fit=``).
    warnings : list of str
        The config reader's warnings (empty when an Objective was given).
    finite : FinitePrediction or None
        With ``measured=``: the finite-time fit (:func:`~grpo_theory.predict.finite.predict_finite`), its
        held-out scores and fitted parameters; its columns are also in ``table``.
    """

    table: pd.DataFrame
    summary: dict
    objective: Objective
    samples: SampleTable
    flows: FlowTable | None = None
    warnings: list[str] = field(default_factory=list)
    finite: object = None

    def pass_at(self, k) -> pd.DataFrame:
        """pass@k per prompt, before (unbiased estimate from the base samples) and after (at the stationary point).

        Parameters
        ----------
        k : int
            ``k >= 1``.

        Returns
        -------
        pandas.DataFrame
            Columns ``prompt_id, k, before, before_unbiased, after, after_lo, after_hi``; ``after = 1 - (1 - pred)^k``;
            ``before`` is the unbiased estimate where ``before_unbiased`` (``k <= n``) and ``nan`` where ``k > n``
            (not estimable from ``n`` samples); with a finite-time fit also ``after_finite = 1 - (1 - pred_finite)^k``.

        Raises
        ------
        InvalidInputError
            ``k`` not an integer ``>= 1``.

        Examples
        --------
        >>> from grpo_theory import Objective
        >>> from grpo_theory.predict import predict, samples_from_counts
        >>> pr = predict(samples_from_counts([20], [5]), Objective(beta=0.5, group_size=2))
        >>> round(float(pr.pass_at(4).after.iloc[0]), 4) == round(1 - (1 - float(pr.table.pred.iloc[0])) ** 4, 4)
        True
        """
        k = one_k(k)
        t = self.table
        out = pd.DataFrame({"prompt_id": t.prompt_id, "k": k,
                            "before": unbiased_pass_at_k(t.n, t.correct, k),
                            "before_unbiased": k <= t.n,
                            "after": pass_at_k(t.pred.to_numpy(), k),
                            "after_lo": pass_at_k(t.pred_lo.to_numpy(), k),
                            "after_hi": pass_at_k(t.pred_hi.to_numpy(), k)})
        if "pred_finite" in t:
            out["after_finite"] = pass_at_k(t.pred_finite.to_numpy(), k)
        return out

    def curves(self, ks=None) -> pd.DataFrame:
        """The dataset's mean pass@k before and after, for every ``k`` in ``ks``.

        Parameters
        ----------
        ks : sequence of int, optional
            The ``k`` values (default 1, 2, 4, ..., 256, and the smallest ``n`` where it is below 256).

        Returns
        -------
        pandas.DataFrame
            One row per ``k``: ``k, before, before_unbiased_share`` (the share of prompts with ``k <= n``),
            ``after, after_lo, after_hi`` (and ``after_finite``) (means over prompts). ``before`` is the mean
            unbiased estimate, reported only where every prompt has ``k <= n`` (up to the smallest ``n``) and
            ``nan`` beyond: it is non-decreasing in ``k`` and ends at ``k = min n``. ``after`` goes on.

        Examples
        --------
        >>> from grpo_theory import Objective
        >>> from grpo_theory.predict import predict, samples_from_counts
        >>> pr = predict(samples_from_counts([4], [2]), Objective(beta=0.5, group_size=2))
        >>> c = pr.curves([1, 2])
        >>> round(float(c.before[0]), 6), round(float(c.before[1]), 6)    # 2/4, and 1 - C(2,2)/C(4,2) = 5/6
        (0.5, 0.833333)
        """
        if ks is None:
            n_min = int(self.table.n.min())
            ks = sorted({2 ** i for i in range(9)} | ({n_min} if n_min < 256 else set()))
        ks = check_k(ks, "ks")
        rows = []
        for k in ks:
            pk = self.pass_at(k)
            # pooled only where every prompt's estimate exists: a mean over the prompts with k <= n alone
            # would change the population along the curve
            row = dict(k=k, before=float(pk.before.mean(skipna=False)),
                       before_unbiased_share=float(pk.before_unbiased.mean()),
                       after=float(pk.after.mean()), after_lo=float(pk.after_lo.mean()),
                       after_hi=float(pk.after_hi.mean()))
            if "after_finite" in pk:
                row["after_finite"] = float(pk.after_finite.mean())
            rows.append(row)
        return pd.DataFrame(rows)

    @checked(step=num(0))
    def at_step(self, step: float) -> np.ndarray:
        """Each binary prompt's predicted P(correct) ``p_x(clock * step)`` after ``step`` training steps.

        Parameters
        ----------
        step : float
            Training steps.

        Returns
        -------
        numpy.ndarray
            One value per prompt (1 for prompts with ``p_ref = 1``, which do not move).

        Raises
        ------
        InvalidInputError
            No clock: :func:`predict` was called without ``clock=`` or ``fit=``.
        """
        clock = self.summary.get("clock")
        if clock is None or self.flows is None:
            raise InvalidInputError("no clock: give predict(clock=...) or predict(fit=(step, mean_reward))")
        start = self.table.flow_start.to_numpy()
        out = np.ones(start.size)
        moving = start < 1.0
        if clock * float(step) > self.flows.times[-1]:
            raise InvalidInputError(f"step = {plain(step)} is beyond the flows' range: clock x step = "
                                    f"{clock * float(step):g} > t_max = {self.flows.times[-1]:g}; give predict(t_max=...) "
                                    "a larger value, or fewer steps")
        out[moving] = self.flows.at(start[moving], clock * float(step))
        return out

    def write(self, out_dir, *, plots: bool = True, tradeoff=None) -> dict:
        """Write ``predictions.csv``, ``summary.json`` and (with ``plots``) the figures into ``out_dir``.

        Parameters
        ----------
        out_dir : str or Path
            The folder (created if missing).
        plots : bool
            Also draw the figures (needs matplotlib).
        tradeoff : pandas.DataFrame, optional
            From :func:`reward_kl_tradeoff`: also writes ``tradeoff.csv`` and ``tradeoff.png``.

        Returns
        -------
        dict
            The paths written, by kind.
        """
        return write_outputs(self, out_dir, plots=plots, tradeoff=tradeoff)


@checked(framework=text(none=True))
def objective_for(obj=None, *, framework: str | None = None, config=None, **reader_options) -> tuple:
    """The Objective to predict for, and the reader's warnings.

    Parameters
    ----------
    obj : Objective, dict or mapping, optional
        An Objective, a dict of its fields, or a config reader's mapping (with ``.objective``).
    framework : str, optional
        ``"trl"``, ``"verl"`` or ``"openrlhf"`` (with ``config``).
    config : dict, str or Path, optional
        A trainer config: a dict, a path (JSON for TRL/OpenRLHF, YAML for verl, or a shell script), or the
        command line itself as a str (``"python -m verl.trainer.main_ppo a.b=c ..."``).
    **reader_options
        Passed to the framework's config reader (e.g. ``trl_version=``).

    Returns
    -------
    tuple
        ``(objective, warnings)``: the Objective and the reader's warnings (a list of str).

    Raises
    ------
    InvalidInputError
        Both or neither of ``obj`` and ``config``; an unknown ``framework``; a missing or unreadable
        config file; a config the theory does not model (e.g. verl's ``gae``), naming why. TRL's default
        ``beta = 0`` gives the unregularised ``Objective(beta=0, ...)`` with the reader's warning.

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> obj, warns = objective_for({"beta": 0.5, "group_size": 4})
    >>> obj == Objective(beta=0.5, group_size=4), warns
    (True, [])
    """
    obj, warns, _ = _read_objective(obj, framework, config, reader_options)
    return obj, warns


def _read_objective(obj, framework, config, reader_options) -> tuple:
    """:func:`objective_for`'s ``(objective, warnings)`` and training's sampling temperature (None: not read)."""
    if (obj is None) == (config is None):
        extra = f" (got keyword(s) {', '.join(sorted(reader_options))}, not keywords of predict)" \
            if reader_options and obj is None and config is None else ""
        raise InvalidInputError("give exactly one of an objective (Objective or its fields) or framework= and "
                                f"config={extra}")
    if obj is not None:
        if reader_options:                # e.g. trl_version=, or a misspelt keyword: never dropped silently
            raise InvalidInputError(f"{', '.join(sorted(reader_options))}: options of a config reader, which an "
                                    "objective given directly does not use (or not a keyword of predict)")
        if hasattr(obj, "objective") and hasattr(obj, "warnings"):
            return _from_mapping(obj)
        return as_objective(obj), [], None
    frameworks = ("trl", "verl", "openrlhf")
    if framework not in frameworks:
        raise InvalidInputError(f"framework must be one of {frameworks}, got {framework!r}")
    if isinstance(config, (str, Path)):
        config = load_config_as_read(framework, config)
    reader = {"trl": read_trl_config, "verl": read_verl_config, "openrlhf": read_openrlhf_config}[framework]
    try:
        # the readers raise NoStationaryPolicy (an InvalidInputError) where nothing is left to predict
        mapping = reader(config, **reader_options)
    except InvalidInputError:
        raise
    except ValueError as exc:                 # a reader's own ValueError: name the framework
        raise InvalidInputError(f"{framework} config: {exc}") from None
    return _from_mapping(mapping)


def _from_mapping(mapping) -> tuple:
    if mapping.objective is None:
        raise InvalidInputError(f"the {mapping.framework} config maps to no stationary objective: "
                                + "; ".join(mapping.warnings))
    return mapping.objective, list(mapping.warnings), getattr(mapping, "temperature", None)


def _is_finite(x) -> bool:
    """Whether the number ``x`` is finite (an int beyond the largest double, 10**400, is not: it has no float)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _fit_pair(fit) -> tuple[float, float]:
    """``fit`` as ``(step, mean_reward)``: two finite numbers, ``step > 0``; refused naming ``fit`` otherwise
    (before any flow is integrated). ``mean_reward`` is in the levels' units: its range is the flow's to check."""
    pair = float_array("fit", fit)
    if pair.shape != (2,):
        raise InvalidInputError(f"fit must be (step, mean_reward), two numbers, got {plain(fit)[:80]} (shape "
                                f"{pair.shape})")
    number("fit's step", pair[0], low=0, low_open=True)
    return float(pair[0]), float(pair[1])


def _temperature_check(sample_temperature, train_temperature) -> dict:
    """The summary's temperature fields: the samples' temperature against training's, and a warning where they
    differ (``p_ref`` is then the P(correct) of another policy than the one training samples its groups from)."""
    if sample_temperature is not None and not (isinstance(sample_temperature, (int, float))
                                               and not isinstance(sample_temperature, bool)
                                               and _is_finite(sample_temperature) and sample_temperature > 0):
        raise InvalidInputError(f"sample_temperature= must be a positive number (the temperature the samples were "
                                f"drawn at), got {plain(sample_temperature)}")
    out = dict(sample_temperature=sample_temperature, train_temperature=train_temperature, temperature_warning=None)
    if sample_temperature is not None and train_temperature is not None and sample_temperature != train_temperature:
        out["temperature_warning"] = (
            f"the samples were drawn at temperature {sample_temperature:g}, training samples its groups at "
            f"{train_temperature:g}: p_ref is the P(correct) of another policy than the one training starts from, "
            "so every prediction starts from a shifted point; sample the base model at training's temperature")
        warnings.warn(out["temperature_warning"], PredictWarning, stacklevel=3)
    return out


@checked(samples=samples_source, framework=text(none=True), interval=one_of(*INTERVALS),
         measured=optional(samples_source), rhos=arr(0, 1, ndim=1, none=True, distinct=True))
def predict(samples, obj=None, *, framework: str | None = None, config=None, k: Sequence[int] = (1, 8),
            level: float = 0.95, interval: str = "jeffreys", clock: float | None = None,
            fit: tuple | None = None, steps: Sequence[float] | None = None, slow_tol: float = 0.01,
            t_max: float = 1e4, tol: float = 1e-6, max_exact: int = 400, levels=None, progress=None,
            measured=None, kernel=None, holdout: float | None = None, rhos=None, finite_level: float = 0.9,
            seed: int = 0, id_column: str = "prompt_id", sample_temperature: float | None = None,
            **reader_options) -> Prediction:
    """Predict where GRPO takes every prompt of a dataset, from the base model's samples.

    Parameters
    ----------
    samples : SampleTable, str, Path, pandas.DataFrame or numpy.ndarray
        The base model's samples (see :func:`read_samples` for the three layouts, files and tables in memory).
    obj : Objective or dict, optional
        The GRPO objective (or a dict of its fields); or give ``framework`` and ``config`` to read it from a trainer config.
    framework : {"trl", "verl", "openrlhf"}, optional
        The trainer whose ``config`` is read, by :func:`objective_for`.
    config : dict, str or pathlib.Path, optional
        The trainer's config: a dict, a path, or a command line as a str (see :func:`objective_for`).
    k : sequence of int
        pass@k values to put in the table (any ``k >= 1``; :meth:`Prediction.pass_at` computes others).
    level : float
        Confidence level of the interval for ``p_ref``, carried through ``x(p)`` to ``pred_lo, pred_hi``.
    interval : {"jeffreys", "wilson"}
        Its method (``"jeffreys"``: the Beta posterior).
    clock : float, optional
        Flow time per training step.
    fit : tuple, optional
        ``(step, mean_reward)``: fit the clock instead, from the run's mean training reward at a step.
    steps : sequence of float, optional
        Training steps at which to report every prompt's P(correct) (columns ``at_step_<s>``); the last one is
        also the horizon of the "slow" flag.
    slow_tol : float
        A prompt is "slow" when ``|p_x(t) - x| > slow_tol`` at the last of ``steps``.
    t_max : float
        Last flow time integrated.
    tol : float
        Above ``max_exact`` distinct ``p_ref`` values, ``x(p)`` is interpolated on a checked grid whose error at
        every cell midpoint is below ``tol`` (see :class:`~grpo_theory.predict.response.Response`).
    max_exact : int
        The number of distinct ``p_ref`` values solved exactly.
    levels : optional
        Declared reward levels when ``samples`` is a path.
    progress : bool or None
        tqdm progress bars (None: only for large datasets).
    measured : SampleTable, str or Path, optional
        Counts measured after (or during) training on some of the prompts (same layouts as ``samples``, ids
        among its prompts): fits the shared-weights flow (``t`` and ``rho``) and adds ``pred_finite``,
        ``pred_finite_lo``, ``pred_finite_hi`` (a predictive interval) and the other models' columns
        (:func:`~grpo_theory.predict.finite.predict_finite`).
    kernel : array_like, optional
        With ``measured``: a measured ``N x N`` kernel in the samples' prompt order (used for ``pred_finite``).
    holdout : float, optional
        With ``measured``: score the models on this random fraction of the measured prompts.
    rhos : sequence of float, optional
        The ``rho`` grid of the one-parameter kernel.
    finite_level : float
        Level of the finite-time intervals.
    seed : int
        Seed of the bootstrap and the hold-out split.
    id_column : str, default "prompt_id"
        The column naming the prompt, where ``samples`` or ``measured`` is a file or a DataFrame
        (:func:`read_samples`).
    sample_temperature : float, optional
        The temperature the samples were drawn at. Checked against training's (read from ``config``): where
        they differ, a :class:`PredictWarning` and ``summary["temperature_warning"]``. Not given:
        ``summary["sample_temperature"]`` is None, and the CLI says the check was not made.
    **reader_options
        Passed to the config reader (e.g. ``trl_version=``); refused with an objective given directly.

    Returns
    -------
    Prediction
        The per-prompt table (``pred = x(p_ref)`` with ``pred_lo, pred_hi``, pass@k, KL, flags) and the summary.

    Raises
    ------
    InvalidInputError
        Bad samples (naming the row), an unmappable config, a bad ``k`` or clock.
    NoStationaryPolicy
        An unregularised objective (``beta = 0`` with no entropy bonus, e.g. TRL's default) with none of
        ``measured``, ``fit``, ``clock``: there is no stationary point, only finite-time predictions (with one of
        them the stationary columns hold the flow's limit, ``summary["stationary_limit"]`` says so).

    Examples
    --------
    >>> from grpo_theory import Objective, closed_form
    >>> from grpo_theory.predict import predict, samples_from_counts
    >>> pr = predict(samples_from_counts([40, 40], [10, 0], ["a", "b"]), Objective(beta=0.5, group_size=2))
    >>> round(float(pr.table.pred[0]), 6) == round(float(closed_form.binary_pairwise(0.25, 0.5)), 6)
    True
    >>> round(float(pr.table.pred[1]), 4)           # never solved: x(0+) = 1 - beta for G = 2 (Eq. 14)
    0.5
    """
    started = time.perf_counter()
    _check_keywords(samples, t_max=t_max, tol=tol, max_exact=max_exact, progress=progress, slow_tol=slow_tol,
                    finite_level=finite_level, seed=seed, id_column=id_column, levels=levels)
    obj, reader_warnings, train_temperature = _read_objective(obj, framework, config, reader_options)
    temperature = _temperature_check(sample_temperature, train_temperature)
    if not isinstance(samples, SampleTable):
        samples = read_samples(samples, levels=levels, id_column=id_column)
    ks = check_k(k)
    if not obj.regularised:             # no stationary point: only the finite-time modes predict a run
        if measured is None and fit is None and clock is None:
            require_regularised(obj, "predict with no measured=, fit= or clock=")
        if not samples.binary:
            raise InvalidInputError(f"{obj.describe()} is unregularised (no stationary policy) and the finite-time "
                                    "predictions it needs are implemented for binary rewards only; these samples "
                                    f"have levels {samples.levels.tolist()}")
    if fit is not None and clock is not None:
        raise InvalidInputError("give clock= or fit=(step, mean_reward), not both")
    if fit is not None:
        fit = _fit_pair(fit)
    if clock is not None and not (isinstance(clock, (int, float)) and _is_finite(clock) and clock > 0):
        raise InvalidInputError(f"clock must be a positive number (flow time per step), got {plain(clock)}")
    if steps is not None:
        if clock is None and fit is None:
            raise InvalidInputError("steps= needs a clock: give clock= (flow time per step) or fit=(step, mean_reward)")
        steps = [float(s) for s in np.atleast_1d(float_array("steps", steps, low=0.0))]
        arr(distinct=True)("steps", steps)                   # one at_step_<s> column each
    _check_table_size(samples, ks, steps, measured, kernel, rhos)
    if samples.binary:
        table, extra, flows = predict_binary(samples, obj, ks, level, interval, clock, fit, steps, slow_tol,
                                              t_max, tol, max_exact, progress)
    else:
        if clock is not None or fit is not None or steps:
            raise InvalidInputError("finite-time predictions (clock=, fit=, steps=) are implemented for binary "
                                    "rewards only; these samples have levels " + str(samples.levels.tolist()))
        table, extra = predict_graded(samples, obj, ks, progress)
        flows = None
    summary = _summary(samples, obj, table, ks, level, interval, reader_warnings, {**extra, **temperature})
    finite = None
    if measured is not None or kernel is not None or holdout is not None:
        finite = _finite(samples, obj, table, summary, measured, kernel, holdout, rhos, finite_level, seed, levels,
                         id_column)
    summary["seconds"] = round(time.perf_counter() - started, 3)
    pr = Prediction(table, summary, obj, samples, flows, reader_warnings, finite)
    return pr


#: Values that the pass@k and at_step columns add to the table (prompts x (2 len(k) + len(steps))) above which
#: predict refuses up front: 1,000 prompts with 1,000 values of k (2e6) took 4.3 s of CPU from the shell, 2,000 (4e6)
#: 10.3 s, 5,000 (1e7) over 75 s of wall; 3,996 steps (4e6) 21 s of CPU and 58 s of wall at load 8-11.
MAX_TABLE_VALUES = 2_000_000


def _check_table_size(samples, ks, steps, measured, kernel, rhos) -> None:
    """Refuse up front a table or a shared-weights fit too large to finish in about 30 s of CPU."""
    added = len(samples) * (2 * len(ks) + (len(steps) if steps is not None else 0))
    if added > MAX_TABLE_VALUES:
        raise InvalidInputError(
            f"k (--k) and steps (--steps): {len(ks):,} values of k (two pass@k columns each) and "
            f"{len(steps or ()):,} steps (an at_step column each) for {len(samples):,} prompts add {added:,} values "
            f"to the table, over the limit of {MAX_TABLE_VALUES:,} (1,000 prompts x 5,000 k: over 75 s). Give fewer "
            "k (from Python, Prediction.pass_at(k) computes any other afterwards) or fewer steps")
    if measured is not None:
        n_rhos = 1 if kernel is not None else (11 if rhos is None else np.size(rhos))
        check_surface_size(len(samples), n_rhos, time_grid().size)


def _check_keywords(samples, *, t_max, tol, max_exact, progress, slow_tol, finite_level, seed, id_column,
                    levels) -> None:
    """:func:`predict`'s numeric and switch keywords, each named when bad (the command line checks the same
    values in its option types)."""
    number("t_max", t_max, low=0.0, low_open=True)
    number("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    integer("max_exact", max_exact, low=1)
    number("slow_tol", slow_tol, low=0.0, high=1.0, low_open=True)
    number("finite_level", finite_level, low=0.0, high=1.0, low_open=True, high_open=True)
    integer("seed", seed, low=0)
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise InvalidInputError(f"progress must be True, False or None, got {progress!r}")
    if not isinstance(id_column, str) or not id_column:
        raise InvalidInputError(f"id_column must be a column name (text), got {id_column!r}")
    if levels is not None:
        declared = float_array("levels", levels)
        if isinstance(samples, SampleTable) and not np.array_equal(np.sort(declared.reshape(-1)), samples.levels):
            raise InvalidInputError(f"levels={declared.tolist()} differ from the levels of the samples table given, "
                                    f"{samples.levels.tolist()}; levels= declares the levels of a file or DataFrame")


def _finite(samples, obj, table, summary, measured, kernel, holdout, rhos, level, seed, levels, id_column):
    """The finite-time columns and summary fields of :func:`predict` with ``measured=``."""
    if measured is None:
        raise InvalidInputError("kernel= and holdout= need measured= (counts after training on some prompts)")
    if samples.levels.tolist() != [0.0, 1.0]:        # the finite-time fit reads its rewards as P(correct)
        raise InvalidInputError("measured= (finite-time predictions) is implemented for 0/1 rewards only; these "
                                "samples have levels " + str(samples.levels.tolist()))
    if not isinstance(measured, SampleTable):
        try:
            measured = read_samples(measured, id_column=id_column)
        except InvalidInputError as exc:
            raise InvalidInputError(f"measured: {exc}") from None
    fin = predict_finite(samples, obj, measured, kernel=kernel, rhos=rhos, holdout=holdout, level=level, seed=seed,
                         stationary=table.pred.to_numpy())
    for col in fin.table.columns:
        if col != "prompt_id":
            table[col] = fin.table[col].to_numpy()
    gap = float(np.mean(np.abs(table.pred_finite - table.pred)))
    summary["finite"] = fin.summary
    summary["mean_pred_finite"] = float(table.pred_finite.mean())
    summary["finite_vs_stationary_mae"] = gap
    summary["short_of_stationarity"] = bool(gap > 0.05)
    return fin


#: The most betas :func:`reward_kl_tradeoff` takes (each is a whole prediction).
MAX_TRADEOFF_BETAS = 1_000
#: Seconds of CPU above which :func:`reward_kl_tradeoff` refuses up front, by :func:`_prediction_seconds` per beta
#: (100 betas on 1,000 binary prompts of 16 samples: 11 s; 1,000 such betas, within MAX_TRADEOFF_BETAS, about 2 min).
MAX_TRADEOFF_SECONDS = 20.0


def _prediction_seconds(samples: SampleTable, obj: Objective) -> float:
    """One prediction's measured cost in seconds of CPU (one core of the 2-core reference machine, 2026-12-07): for
    graded rewards the distinct level-frequency vectors x :func:`~grpo_theory.predict.graded.graded_solve_seconds`;
    for binary ones 0.1 s, 6 us per prompt and, per exactly solved ``p_ref`` (up to 400 distinct, else a grid of
    129 and its checks), 2 ms plus 0.2 us per group member (1,000 prompts at G = 8: 0.11 s; at G = 10^6: 4.9 s)."""
    if samples.levels.size > 2:
        freq = samples.counts / samples.n[:, None]
        return np.unique(freq, axis=0).shape[0] * graded_solve_seconds(samples.levels.size, obj.group_size)
    distinct = np.unique(samples.correct / samples.n).size
    solves = distinct if distinct <= 400 else 2 * 129
    per_solve = 2e-3 + (0.0 if math.isinf(obj.group_size) else 2e-7 * obj.group_size)
    return 0.1 + 6e-6 * len(samples) + solves * per_solve


@checked(betas=numbers(), progress=optional(flag))
def reward_kl_tradeoff(samples, obj: Objective, betas, *, progress=None) -> pd.DataFrame:
    """The dataset's mean stationary P(correct) (the mean reward, for 0/1 rewards) and mean KL(pi || pi_ref)
    at each beta, every other field of ``obj`` kept: the reward-KL trade-off of the run.

    Parameters
    ----------
    samples : SampleTable, str or Path
        The base model's samples (see :func:`read_samples`).
    obj : Objective
        The objective; its ``beta`` is replaced by each of ``betas``.
    betas : sequence of float
        The KL coefficients beta.
    progress : bool or None
        tqdm progress bars (None: only for large datasets).

    Returns
    -------
    pandas.DataFrame
        One row per beta: ``beta, mean_pred, mean_pred_lo, mean_pred_hi, mean_kl_direct``.

    Raises
    ------
    InvalidInputError
        Bad samples, an objective :func:`predict` rejects, or ``betas`` that are not 1 to
        :data:`MAX_TRADEOFF_BETAS` positive numbers, each once (0 allowed with an entropy bonus).

    Examples
    --------
    >>> from grpo_theory import Objective
    >>> from grpo_theory.predict import samples_from_counts
    >>> t = reward_kl_tradeoff(samples_from_counts([20, 20], [4, 12]), Objective(beta=0.5), [0.25, 1.0, 4.0])
    >>> bool(t.mean_pred.is_monotonic_decreasing and t.mean_kl_direct.is_monotonic_decreasing)
    True
    """
    obj = as_objective(obj)
    if np.ndim(betas) == 0 and not isinstance(betas, (str, bytes)) and betas is not None:
        raise InvalidInputError(f"betas must be a sequence of positive numbers, got the single value {betas!r}")
    betas = float_array("betas", betas, low=0.0, low_open=not obj.entropy_coef > 0)   # 0: the bonus alone
    if betas.ndim != 1 or not 1 <= betas.size <= MAX_TRADEOFF_BETAS:
        raise InvalidInputError(f"betas must be a list of 1 to {MAX_TRADEOFF_BETAS:,} positive numbers (each is a "
                                f"whole prediction), got {betas.size:,}")
    arr(distinct=True)("betas", betas.tolist())              # one row each
    if not isinstance(samples, SampleTable):
        samples = read_samples(samples)
    each = _prediction_seconds(samples, obj)
    if betas.size * each > MAX_TRADEOFF_SECONDS:
        raise InvalidInputError(
            f"betas: {betas.size:,} betas, each a whole prediction of {len(samples):,} prompts at G={obj.group_size:g} "
            f"(about {each:.2g} s of CPU each by the measured cost): about {betas.size * each:,.0f} s, over the limit "
            f"of {MAX_TRADEOFF_SECONDS:.0f} s. Give at most {max(1, int(MAX_TRADEOFF_SECONDS // each)):,} betas "
            "(20-50 geometric values usually draw the curve), a smaller group size, or fewer prompts")
    rows = []
    for b in betas:
        pr = predict(samples, dataclasses.replace(obj, beta=float(b)), k=(1,), progress=progress)
        rows.append(dict(beta=float(b), mean_pred=pr.summary["mean_pred"], mean_pred_lo=pr.summary["mean_pred_lo"],
                         mean_pred_hi=pr.summary["mean_pred_hi"], mean_kl_direct=pr.summary["mean_kl_direct"]))
    return pd.DataFrame(rows)


def _summary(samples, obj, table, ks, level, interval, reader_warnings, extra) -> dict:
    s = dict(
        source=samples.source, layout=samples.layout, levels=samples.levels.tolist(), prompts=len(samples),
        samples=int(samples.n.sum()), excluded_rows=len(samples.excluded),
        excluded=[dict(line=ln, reason=r) for ln, r in samples.excluded[:50]],
        objective=obj.describe(), interval=dict(method=interval, level=level,
                                                never_solved="p_ref in (0, 1 - (1 - level)^(1/n)] (about 3/n at "
                                                             "0.95); " + ("pred = x(0+), pred_hi = x(upper bound)"
                                                                          if obj.regularised else "pred = 0 (the "
                                                                          "limit at p_ref = 0), pred_hi = 1")),
        reader_warnings=list(reader_warnings), mean_p_ref=float(table.p_ref.mean()), mean_pred=float(table.pred.mean()),
        mean_pred_lo=float(table.pred_lo.mean()), mean_pred_hi=float(table.pred_hi.mean()),
        mean_kl_direct=float(table.kl_direct.mean()),
        never_solved=int(table.never_solved.sum()), bistable=int(table.bistable.sum()),
        pass_at_k_before_max_k=int(table.n.min()),     # pooled pass@k before is estimable up to the smallest n
    )
    for kk in ks:
        s[f"pass@{kk}_before"] = float(table[f"pass@{kk}_before"].mean(skipna=False))    # nan (null) if k > some n
        s[f"pass@{kk}_after"] = float(table[f"pass@{kk}_after"].mean())
    if "collapse" in table:
        s["collapse"] = int((table.collapse != "").sum())
        s["vertex_fraction"] = float((table.collapse != "").mean())
    if "below_critical_beta" in table:
        s["below_critical_beta"] = int(table.below_critical_beta.sum())
    if "slow" in table:
        s["slow"] = int(table.slow.sum())
    if "kl_reverse" in table:
        finite = np.isfinite(table.kl_reverse.to_numpy())
        s["kl_reverse_infinite"] = int((~finite).sum())
        s["mean_kl_reverse_finite_rows"] = float(table.kl_reverse[finite].mean()) if finite.any() else None
        s["mean_kl_reverse"] = math.inf if (~finite).any() else float(table.kl_reverse.mean())
    s.update(extra)
    return s
