"""Regenerate every figure: PNG + PDF + CSV of the plotted data + a caption file.

``grpo-theory figures [--out DIR] [--only N ...] [--trained CSV] [--results DIR]`` calls
:func:`build_figures`. Output is deterministic (no dates in the PDFs). The figures themselves are
the modules listed in :data:`grpo_theory.figures.FIGURE_MODULES`, one figure a module.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import matplotlib
import pandas as pd
from tqdm.auto import tqdm

from .. import plotting
from .._checks import checked, dataframe, num
from .._io import atomic_write, own_json
from .._validate import MAX_DATA_BYTES, read_text
from ..errors import UnusedInputWarning
from ..problem import InvalidInputError
from ._registry import FIGURES
from ._spec import FigureInputs, FigureSkipped, FigureSpec
from .trained_vs_theory import TRAINED_COLUMNS


def _save(fig, base: Path) -> list[Path]:
    """Write ``fig`` as PNG and PDF. The canvas is drawn once first: constrained layout settles on its
    second pass, and a figure saved on the first can have its top title cut off (Figures 1, 2 and 4 lost
    7-8 px that way); the PNG then shows the layout every later draw shows."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    out = [base.with_suffix(".png"), base.with_suffix(".pdf")]
    atomic_write(out[0], lambda p: fig.savefig(p, metadata={"Software": None}))
    atomic_write(out[1], lambda p: fig.savefig(p, metadata={"CreationDate": None, "Producer": None}))
    return out


#: Tolerances under which a regenerated table counts as unchanged. The data come from solvers
#: with tolerances of 1e-9..1e-10 (ODE integration, finite-difference Jacobians), so another
#: machine's BLAS/libm, or a harmless change in summation order, moves the 12 written digits at
#: the 1e-9 level; rewriting for that would dirty the committed tree without changing anything
#: a reader can see. Real changes (a bug fix, a new grid) are far larger and are written.
CSV_RTOL = 1e-6
CSV_ATOL = 1e-9


@checked(a=dataframe, b=dataframe, rtol=num(0), atol=num(0))
def same_table(a: pd.DataFrame, b: pd.DataFrame, rtol: float = CSV_RTOL, atol: float = CSV_ATOL) -> bool:
    """Same columns, same non-numeric values, numeric values equal within ``rtol``/``atol`` (NaN = NaN).

    Parameters
    ----------
    a, b : pandas.DataFrame
        The two tables.
    rtol : float
        The relative tolerance of the numeric columns (default :data:`CSV_RTOL`).
    atol : float
        Their absolute tolerance (default :data:`CSV_ATOL`).

    Returns
    -------
    bool
        Whether they are the same table.
    """
    import numpy as np

    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            xv, yv = x.to_numpy(float), y.to_numpy(float)
            if not np.allclose(xv, yv, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif not x.astype(str).equals(y.astype(str)):
            return False
    return True


def _write_table(table: pd.DataFrame, path: Path) -> bool:
    """Write ``table`` unless ``path`` already holds the same numbers (see :data:`CSV_RTOL`, :data:`CSV_ATOL`)."""
    if path.exists():
        try:
            if same_table(pd.read_csv(path), pd.read_csv(io.StringIO(table.to_csv(index=False,
                                                                                    float_format="%.12g")))):
                return False
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
            pass                                      # unreadable: rewrite it
    atomic_write(path, lambda p: table.to_csv(p, index=False, float_format="%.12g"))
    return True


_DONE = ".figures_done.json"


#: Figure numbers no longer used, and where their content went (a number is never reused).
RETIRED = {10: "Figure 10 (the flow's paths into the basins) is panels (c) and (d) of Figure 7"}


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5, 6]`` -> ``"1-3, 5-6"``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


def figure_numbers() -> str:
    """The numbers of the figures there are, as ranges (``"1-9, 11-33"``): what ``figures --only`` takes.

    Returns
    -------
    str
        The numbers of :data:`~grpo_theory.figures.FIGURES`, consecutive ones as ``first-last``.
    """
    return _ranges(sorted({s.number for s in FIGURES}))


def _read_trained(path: Path) -> pd.DataFrame:
    """``--trained``: a CSV table with Figure 9's columns, read through the validation layer (UTF-8, size), every
    problem naming the file."""
    text = read_text(path, "--trained", max_bytes=MAX_DATA_BYTES, expected="the CSV `grpo-theory validate` writes")
    try:
        table = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise InvalidInputError(f"--trained {str(path)!r} is not a readable CSV table: "
                                f"{' '.join(str(exc).split())}") from None
    missing = sorted(set(TRAINED_COLUMNS) - set(table.columns))
    if missing:
        raise InvalidInputError(f"--trained {str(path)!r} lacks the column(s) {missing}; it needs "
                                f"{sorted(TRAINED_COLUMNS)} (found {sorted(map(str, table.columns))[:20]})")
    return table


def _done_file(out: Path) -> Path:
    return out / _DONE


def _read_done(out: Path) -> set[int]:
    """The figure numbers an interrupted run recorded; a file that is not a JSON list of figure numbers (torn,
    edited, another tool's) is ignored with a warning, and every figure is built again."""
    path = _done_file(out)
    if not path.exists() and not path.is_symlink():
        return set()
    done = own_json(path)
    if not isinstance(done, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in done):
        import warnings

        warnings.warn(f"{path} is not a JSON list of figure numbers; ignored (every figure is built again)",
                      stacklevel=2)
        return set()
    return set(done)


FINGERPRINT = "figures_fingerprint.json"


#: The code every figure shares: the style module and the figures' shared data helpers.
_SHARED = (Path(plotting.__file__), Path(__file__).with_name("_data.py"))


def code_fingerprint(spec: FigureSpec) -> str:
    """Hash of the code that draws figure ``spec``: its own module, the modules it declares in
    ``spec.uses``, and the shared style (:mod:`grpo_theory.plotting`, ``figures/_data.py``). Editing
    another figure's module, or this driver, leaves it alone.

    Parameters
    ----------
    spec : FigureSpec
        The figure.

    Returns
    -------
    str
        The hex digest.
    """
    import hashlib

    h = hashlib.sha256()
    for path in _fingerprint_paths(spec):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _fingerprint_paths(spec: FigureSpec) -> list[Path]:
    own = Path(__file__).with_name(spec.module.rsplit(".", 1)[-1] + ".py")
    return [own, *(own.with_name(u + ".py") for u in spec.uses), *_SHARED]


def read_tables(spec: FigureSpec, folder: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of figure ``spec`` as written to ``folder`` by :func:`build_figures` (``"data"`` and
    each ``fig<N>_<slug>_<name>.csv``); empty if it has none there (a skipped figure).

    Parameters
    ----------
    spec : FigureSpec
        The figure.
    folder : str or pathlib.Path
        Where :func:`build_figures` wrote it.

    Returns
    -------
    dict of pandas.DataFrame
        ``{name: table}``.
    """
    folder = Path(folder)
    out = {}
    if (folder / f"{spec.stem}.csv").is_file():
        out["data"] = pd.read_csv(folder / f"{spec.stem}.csv")
    for path in sorted(folder.glob(f"{spec.stem}_*.csv")):
        out[path.stem[len(spec.stem) + 1:]] = pd.read_csv(path)
    return out


def build_figures(out_dir: str | Path = "paper_figures", only=None, trained: str | Path | None = None,
                  progress: bool = True, resume: bool = False, force: bool = False,
                  results: str | Path | None = None, images: bool = True) -> list[Path]:
    """Build the figures ``only`` (numbers; default all) into ``out_dir``; return the files written.

    * ``images=False`` writes the tables and captions only (no PNG/PDF, no drawing): the numbers
      cost a fraction of the drawing, and the tests check the numbers of every figure this way.

    * Measured tables are inputs: ``trained`` (Figure 9's CSV) and ``results`` (the folder of the
      studies' tables; the command line passes ``docs/results`` in a checkout). The library never
      reads the repository: a figure whose input is not given is skipped, with the reason printed.

    * Each file is written atomically, and each finished figure is recorded in
      ``out_dir/.figures_done.json``, with what it was built from in ``out_dir/.figures_inputs.json`` (the hash
      of its code and the SHA-256 of each input it read): with ``resume=True`` the figures recorded there are
      skipped, so an interrupted run continues where it stopped; one whose code or inputs differ from this run's,
      or whose inputs are not recorded, is built again, with a line saying why.
    * A clean tree after the main job: tables equal within :data:`CSV_RTOL` and :data:`CSV_ATOL` to the ones on
      disk are not rewritten, and a figure's PNG/PDF are redrawn only when its data changed,
      an image is missing, the drawing code changed (its hash differs from the one recorded for
      that figure in ``out_dir/figures_fingerprint.json``) or ``force=True``. Another machine's last-digit
      differences then leave every committed file as it was. The images are drawn from the tables as
      written (read back from their CSVs), so a redraw of unchanged tables and code gives the same bytes.

    Parameters
    ----------
    out_dir : str or pathlib.Path, default "paper_figures"
        Where the figures, their tables and captions go.
    only : iterable of int, optional
        The figure numbers to build (a number with parts builds every part); default all.
    trained : str or pathlib.Path, optional
        Figure 9's CSV of trained points.
    progress : bool, default True
        Show a progress bar.
    resume : bool, default False
        Skip the figures recorded as done in ``out_dir/.figures_done.json`` (built from this run's code and
        inputs).
    force : bool, default False
        Redraw every image, changed or not.
    results : str or pathlib.Path, optional
        The folder of the studies' tables.
    images : bool, default True
        Draw the PNG and PDF files (False: tables and captions only).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    matplotlib.use("Agg", force=False)
    only = None if only is None else list(only)
    twice = sorted({n for n in only or () if only.count(n) > 1})          # a set of figures: each named once
    if twice:
        raise InvalidInputError(f"only (--only) names figure {twice[0]} more than once, got {list(only)}; give each "
                                "figure number once")
    unknown = set(only or ()) - {s.number for s in FIGURES}
    if unknown:
        moved = "".join(f"; {RETIRED[n]}" for n in sorted(unknown) if n in RETIRED)
        raise InvalidInputError(f"no figure numbered {sorted(unknown)}{moved}; the figures are numbered "
                                f"{figure_numbers()}")
    measured = None
    if trained is not None:
        trained = Path(trained)
        if not trained.is_file():
            raise InvalidInputError(f"--trained {str(trained)!r}: no such file; it is written by "
                                    "`grpo-theory validate` (runs/validate/trained_points.csv)")
        measured = _read_trained(trained)
    if results is not None and not Path(results).is_dir():
        raise InvalidInputError(f"--results {str(results)!r}: no such folder; expected the folder of study "
                                "tables (docs/results in a checkout)")
    inputs = FigureInputs(results=Path(results) if results is not None else None,
                          trained=measured)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trained_digest = None if trained is None else hashlib.sha256(trained.read_bytes()).hexdigest()
    built_from, used = (_read_built_from(out) if resume else {}), set()
    done = _still_done(_read_done(out), built_from, inputs, trained_digest, used) if resume else set()
    if not resume:
        _done_file(out).unlink(missing_ok=True)
    fp_path = out / FINGERPRINT
    drawn_by = own_json(fp_path)                             # figure number -> hash of the code that drew it
    if not isinstance(drawn_by, dict):                        # missing, torn, edited: every figure is redrawn
        drawn_by = {}
    # a number no figure has any more (Figure 10, merged into Figure 7) is dropped at the next write
    keys = {s.key for s in FIGURES}
    drawn_by = {k: v for k, v in drawn_by.items() if k in keys}
    specs = [s for s in FIGURES if (only is None or s.number in set(only)) and s.number not in done]
    written: list[Path] = []
    bar = tqdm(specs, desc="figures", disable=not progress)
    for i, spec in enumerate(bar):
        bar.set_postfix_str(spec.slug)
        with matplotlib.rc_context(plotting.STYLE):
            inputs.read.clear()
            inputs.digests.clear()
            try:
                tables = spec.tables(inputs)
            except FigureSkipped as why:
                tqdm.write(f"figure {spec.key} ({spec.slug}) skipped: {why}")
                continue
            finally:
                used |= inputs.read
            built_from[spec.key] = _inputs_of(spec, inputs, trained_digest)
            base = out / spec.stem
            data_changed = False
            shipped: dict[str, pd.DataFrame] = {}
            for name, table in tables.items():
                path = base.with_name(f"{base.name}_{name}.csv") if name != "data" else base.with_suffix(".csv")
                if _write_table(table, path):
                    written.append(path)
                    data_changed = True
                shipped[name] = pd.read_csv(path)
            if images:
                # drawn from the tables as written (12 digits), not from the ones in memory: a table left
                # as it was (equal within CSV_RTOL) differs in memory in its last digits from one solver
                # version, thread count or machine to the next, and Figure 8's PNG (11 pixels) and
                # Figure 15's PDF changed at every redraw although nothing a reader sees had; the image
                # is now a function of the shipped tables and the drawing code (which the fingerprint hashes)
                written += _draw(spec, shipped, base, data_changed, force, drawn_by, fp_path)
        cap = base.with_name(base.name + "_caption.txt")
        caption = plotting.infty(spec.caption_text(tables))          # "∞", never "inf", in captions too
        if not cap.exists() or cap.read_text() != caption + "\n":
            atomic_write(cap, lambda p, text=caption: p.write_text(text + "\n"))
            written.append(cap)
        if not any(s.number == spec.number for s in specs[i + 1:]):     # a split figure: after its last part
            done.add(spec.number)
        # what each figure was built from first, then the record of it done (a kill between leaves no figure done
        # without its inputs)
        atomic_write(out / _BUILT_FROM, lambda p: p.write_text(json.dumps(built_from, indent=1, sort_keys=True)))
        atomic_write(_done_file(out), lambda p: p.write_text(json.dumps(sorted(done))))
    _warn_unread(used, {"trained": trained, "results": results}, specs)
    if force and not (specs and images):
        import warnings

        why = ("no figure was built, every one asked for is recorded as done (--resume); leave out --resume to redraw "
               "them" if not specs else "images=False draws no image")
        warnings.warn(f"--force (force=True) was not used: {why}", UnusedInputWarning, stacklevel=2)
    return written


#: Beside the record of the figures done: per figure, the hash of the code that built it and of each input it read.
_BUILT_FROM = ".figures_inputs.json"


def _inputs_of(spec: FigureSpec, inputs: FigureInputs, trained_digest) -> dict:
    """What figure ``spec`` was just built from: its code's hash and the SHA-256 of each input it read."""
    got = {"code": code_fingerprint(spec), **inputs.digests}
    if "trained" in inputs.read:
        got["trained"] = trained_digest
    return got


def _read_built_from(out: Path) -> dict:
    """The record of what each figure was built from; a missing or unreadable one is empty (every figure is then
    built again on a resume: what it was built from is not known)."""
    got = own_json(out / _BUILT_FROM)
    return got if isinstance(got, dict) and all(isinstance(v, dict) for v in got.values()) else {}


def _still_done(done: set, built_from: dict, inputs: FigureInputs, trained_digest, used: set) -> set:
    """The figures of ``done`` a resume may skip: those whose every part is recorded as built from the code and the
    inputs this run has (the inputs so compared are added to ``used``); each other one is built again, with a line
    saying why."""
    keep = set()
    for n in sorted(done):
        why, parts = "", [s for s in FIGURES if s.number == n]
        for spec in parts:
            why = why or _changed(spec, built_from.get(spec.key), inputs, trained_digest)
        if why:
            tqdm.write(f"figure {n} is built again: {why}")
            continue
        keep.add(n)
        used |= {k.split("/")[0] for s in parts for k in built_from.get(s.key, {}) if k != "code"}
    return keep


def _changed(spec: FigureSpec, rec, inputs: FigureInputs, trained_digest) -> str:
    """Why the record ``rec`` of figure ``spec`` does not match this run ('' when it does)."""
    if rec is None:
        return f"{_BUILT_FROM} does not record what it was built from"
    for name, digest in rec.items():
        table = name[len("results/"):] if name.startswith("results/") else ""
        if name == "code":
            now, why = code_fingerprint(spec), "its code changed"
        elif name == "trained":
            now, why = trained_digest, "the --trained table it read is not this run's"
        elif table and "/" not in table and table not in ("", ".", ".."):
            path = None if inputs.results is None else Path(inputs.results) / table
            now = hashlib.sha256(path.read_bytes()).hexdigest() if path is not None and path.is_file() else None
            why = f"the table {table} it read (--results) is not this run's"
        else:                                            # an entry no run writes (an edited record)
            return f"{_BUILT_FROM} records {name[:60]!r}, which no figure reads"
        if now != digest:
            return why
    return ""


def _warn_unread(used: set, given: dict, specs: list) -> None:
    """Warn, naming the option, for each input given that no figure of ``specs`` (those built) looked at."""
    import warnings

    built = (f"no figure built ({', '.join(s.key for s in specs)}) reads it" if specs else
             "no figure was built (every one asked for is recorded as done) nor was one done from it")
    for name, value in given.items():
        if value is not None and name not in used:
            warnings.warn(f"--{name} {str(value)!r} was not used: {built}; leave it out, or add a figure that reads it "
                          "to --only", UnusedInputWarning, stacklevel=3)


def _images_present(base: Path) -> bool:
    """Whether the PNG and PDF of the figure at ``base`` are on disk: ``base.png/.pdf``, or, for a figure of
    several images, ``base`` + ``a``, ``b``, ... (at least the first; the code that drew them is checked by
    the fingerprint, so their number is the one it draws)."""
    if all(base.with_suffix(ext).exists() for ext in (".png", ".pdf")):
        return True
    first = base.with_name(base.name + "a")
    return all(first.with_suffix(ext).exists() for ext in (".png", ".pdf"))


def _draw(spec: FigureSpec, tables: dict[str, pd.DataFrame], base: Path, data_changed: bool, force: bool,
          drawn_by: dict[str, str], fp_path: Path) -> list[Path]:
    """Draw figure ``spec`` from ``tables`` and save its PNG/PDF where needed (see :func:`build_figures`);
    ``drawn_by`` (figure key, "9" or "25a" -> code hash) is updated and written to ``fp_path``."""
    fingerprint = code_fingerprint(spec)
    if not (data_changed or force or drawn_by.get(spec.key) != fingerprint) and _images_present(base):
        # nothing to save: building the figure (its artists, contours, layout engine) is skipped too
        return []
    fig = spec.render(tables)
    figs = fig if isinstance(fig, tuple) else (fig,)
    bases = [base.with_name(base.name + ("" if len(figs) == 1 else "abcdefgh"[i])) for i in range(len(figs))]
    missing = any(not b.with_suffix(ext).exists() for b in bases for ext in (".png", ".pdf"))
    written: list[Path] = []
    if data_changed or missing or force or drawn_by.get(spec.key) != fingerprint:
        for f, b in zip(figs, bases):
            written += _save(f, b)
        drawn_by[spec.key] = fingerprint
        atomic_write(fp_path, lambda p: p.write_text(json.dumps(drawn_by, indent=1, sort_keys=True) + "\n"))
    return written
