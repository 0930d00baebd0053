"""What a figure module declares (:class:`FigureSpec`) and what it is given (:class:`FigureInputs`)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..problem import InvalidInputError


class FigureSkipped(Exception):
    """Raised by a figure's ``build`` when an input it needs is absent; the message says which and why."""


@dataclass(frozen=True)
class FigureInputs:
    """Measured tables reach a figure only through here, never by reading the repository.

    ``results``: the folder of committed study tables (``--results DIR``), or None;
    ``trained``: Figure 9's table of trained points (``--trained CSV``), or None.
    ``read``: the names of those two that a figure has looked at (each look is recorded), and ``digests``: the
    SHA-256 of each results table read (``"results/NAME"``), so the builder can say which input given no figure
    built used, and record what each figure was built from (a resume rebuilds a figure whose inputs changed).
    """

    results: Path | None = None
    trained: pd.DataFrame | None = None
    read: set = field(default_factory=set, compare=False, repr=False)
    digests: dict = field(default_factory=dict, compare=False, repr=False)

    def __getattribute__(self, name):
        if name in ("results", "trained"):
            object.__getattribute__(self, "read").add(name)
        return object.__getattribute__(self, name)

    def results_table(self, name: str) -> pd.DataFrame:
        """``results/name`` as a DataFrame; :class:`FigureSkipped` (naming the file) if it is absent.

        Parameters
        ----------
        name : str
            The table's file name under ``results``, e.g. ``"validate_seeds.csv"``.

        Returns
        -------
        pandas.DataFrame
            The table.
        """
        if self.results is None:
            raise FigureSkipped(f"needs {name}: pass --results DIR (docs/results in a checkout)")
        path = Path(self.results) / name
        if not path.is_file():
            raise FigureSkipped(f"needs {name}, which is not in --results {str(self.results)!r}")
        data = path.read_bytes()
        self.digests[f"results/{name}"] = hashlib.sha256(data).hexdigest()
        return pd.read_csv(io.BytesIO(data))


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its number, file stem, caption, its tables and its drawing.

    ``tables(inputs) -> {name: DataFrame}``: the plotted data (the table named ``"data"`` is written to
    ``fig<N>_<slug>.csv``, the others to ``fig<N>_<slug>_<name>.csv``); ``render(tables) -> Figure``
    draws from those tables alone, so a figure can be redrawn from its committed CSVs. ``caption`` is a string or a
    function of those tables (so a number the caption states is computed from the plotted data).
    ``uses``: the other figure modules whose code this one calls (they enter its fingerprint).
    ``part``: "" for a figure of its own; "a", "b", ... for the parts of one numbered figure split into
    several (Figure 25a-d: one experiment each, each with its own caption and tables).
    """

    number: int
    slug: str
    caption: str | Callable[[dict[str, pd.DataFrame]], str]
    tables: Callable[[FigureInputs], dict[str, pd.DataFrame]]
    render: Callable[[dict[str, pd.DataFrame]], object]
    module: str
    uses: tuple[str, ...] = field(default=())
    part: str = ""

    def __post_init__(self):
        if self.number < 1:
            raise InvalidInputError(f"figure number {self.number!r}: expected a positive integer")
        if self.part and not (len(self.part) == 1 and "a" <= self.part <= "z"):
            raise InvalidInputError(f"figure part {self.part!r}: expected one letter a-z or ''")

    @property
    def key(self) -> str:
        """The figure's name in the fingerprint file and in messages: "9", "25a"."""
        return f"{self.number}{self.part}"

    @property
    def stem(self) -> str:
        """The file stem, ``fig<N>_<slug>`` (``fig<N><part>_<slug>`` for a part)."""
        return f"fig{self.key}_{self.slug}"

    def table_stems(self, names) -> dict[str, str]:
        """File stem of each table: ``"data"`` -> ``fig<N>_<slug>``, others -> ``fig<N>_<slug>_<name>``.

        Parameters
        ----------
        names : iterable of str
            The tables' names, as the figure's ``data`` function returns them.

        Returns
        -------
        dict
            ``{name: stem}``.
        """
        return {n: self.stem if n == "data" else f"{self.stem}_{n}" for n in names}

    def caption_text(self, tables: dict[str, pd.DataFrame]) -> str:
        """The caption, computed from ``tables`` where ``caption`` is a function of them.

        Parameters
        ----------
        tables : dict of pandas.DataFrame
            The figure's tables, by name.

        Returns
        -------
        str
            The caption.
        """
        return self.caption(tables) if callable(self.caption) else self.caption
