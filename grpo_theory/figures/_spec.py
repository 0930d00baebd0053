"""What a figure module declares (:class:`FigureSpec`) and what it is given (:class:`FigureInputs`)."""

from __future__ import annotations

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
    """

    results: Path | None = None
    trained: pd.DataFrame | None = None

    def results_table(self, name: str) -> pd.DataFrame:
        """``results/name`` as a DataFrame; :class:`FigureSkipped` (naming the file) if it is absent."""
        if self.results is None:
            raise FigureSkipped(f"needs {name}: pass --results DIR (docs/results in a checkout)")
        path = Path(self.results) / name
        if not path.is_file():
            raise FigureSkipped(f"needs {name}, which is not in --results {str(self.results)!r}")
        return pd.read_csv(path)


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its number, file stem, caption and builder.

    ``build(inputs) -> (Figure, {name: table})``; the table named ``"data"`` is written to
    ``fig<N>_<slug>.csv``, the others to ``fig<N>_<slug>_<name>.csv``. ``caption`` is a string or a
    function of those tables (so a number the caption states is computed from the plotted data).
    ``uses``: the other figure modules whose code this one calls (they enter its fingerprint).
    """

    number: int
    slug: str
    caption: str | Callable[[dict[str, pd.DataFrame]], str]
    build: Callable[[FigureInputs], tuple[object, dict[str, pd.DataFrame]]]
    module: str
    uses: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if self.number < 1:
            raise InvalidInputError(f"figure number {self.number!r}: expected a positive integer")

    def caption_text(self, tables: dict[str, pd.DataFrame]) -> str:
        return self.caption(tables) if callable(self.caption) else self.caption
