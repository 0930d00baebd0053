r"""What :mod:`grpo_theory.symbolic` proves with: the note's symbols and the proof checks.

A statement is *proved* only when sympy decides it; otherwise it is checked with 50-digit mpmath
arithmetic at random points and reported as ``status="numeric"`` (see :class:`Proof`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import mpmath
import sympy as sp

from ._checks import POSITIVE_COUNT, SEED, checked, instance, one_of, span, text
from .errors import InvalidInputError

__all__ = ["Derivation", "Proof", "prove_zero", "prove_sign", "prove_positive"]

x, p = sp.symbols("x p", positive=True)                  # pi(a), pi_ref(a), both in (0, 1)
beta, gamma = sp.symbols("beta gamma", positive=True)
G = sp.symbols("G", integer=True, positive=True)


@dataclass(frozen=True)
class Proof:
    """The outcome of checking a statement (``expr == 0``, or a sign).

    Attributes
    ----------
    statement : str
        What was checked, in words.
    status : {"symbolic", "numeric", "failed"}
        ``"symbolic"``: sympy decided it; ``"numeric"``: sympy could not, and 50-digit evaluation at
        random points found it to hold (never reported as proved); ``"failed"``: it does not hold.
    method : str
        How it was decided.
    residual : sympy.Expr
        What sympy's simplification left (0 when proved symbolically).
    """

    statement: str
    status: str
    method: str
    residual: sp.Expr = sp.Integer(0)

    @property
    def holds(self) -> bool:
        """True unless the check failed (``status`` is "symbolic" or "numeric")."""
        return self.status in ("symbolic", "numeric")


@dataclass(frozen=True)
class Derivation:
    """A closed form derived from a stationarity condition.

    Attributes
    ----------
    name : str
        Which formula (e.g. ``"Eq. 14 (G = 2, reverse penalty)"``).
    condition : sympy.Expr
        The stationarity condition in ``x = pi(a)`` (an ``Eq``, or an expression equal to 0).
    roots : tuple of sympy.Expr
        Every root sympy finds.
    solution : sympy.Expr
        The root kept.
    why : str
        Why that root.
    assumptions : str
        The setting (group size, penalty, rewards).
    checks : tuple of Proof
        Properties of the solution, each proved or checked.
    """

    name: str
    condition: sp.Expr            # an Eq or expression == 0 in x
    roots: tuple                  # every root sympy finds
    solution: sp.Expr             # the root kept
    why: str                      # why that root
    assumptions: str
    checks: tuple = field(default_factory=tuple)   # Proofs of properties


_RANGE = span()


def _check_ranges(expr, symbols_ranges, *, required: bool, complete: bool = False) -> None:
    """Refuse ``symbols_ranges`` that is not ``{symbol: (lo, hi)}`` with ``lo < hi`` finite (None passes unless
    ``required``), or, where ``complete``, that leaves a free symbol of ``expr`` without a range (the numeric check
    could not evaluate ``expr``)."""
    if symbols_ranges is None and not required:
        return
    if not isinstance(symbols_ranges, dict) or not symbols_ranges:
        raise InvalidInputError(f"symbols_ranges must be a non-empty dict {{symbol: (lo, hi)}}, got {symbols_ranges!r}")
    for s, r in symbols_ranges.items():
        if not isinstance(s, sp.Symbol):
            raise InvalidInputError(f"symbols_ranges: {s!r} is not a sympy Symbol; expected {{symbol: (lo, hi)}}")
        _RANGE(f"symbols_ranges[{s}]", r)
    missing = () if not complete else sorted(map(str, set(getattr(expr, "free_symbols", ())) - set(symbols_ranges)))
    if missing:
        raise InvalidInputError(f"symbols_ranges gives no range for {', '.join(missing)}, a free symbol of the "
                                "expression; expected a (lo, hi) for each")


_EXPR = instance(sp.Basic, "a sympy expression", " (e.g. sympy.Symbol('x') - 1)")


@checked(expr=_EXPR, statement=text(), n_points=POSITIVE_COUNT, seed=SEED)
def prove_zero(expr: sp.Expr, statement: str, symbols_ranges: dict | None = None, n_points: int = 12,
               seed: int = 0) -> Proof:
    """Prove ``expr == 0``: symbolically if sympy can, otherwise by 50-digit evaluation (labelled).

    Parameters
    ----------
    expr : sympy.Expr
        ``lhs - rhs``.
    statement : str
        The statement, in words.
    symbols_ranges : dict, optional
        ``{symbol: (lo, hi)}`` for the numeric check (default ``(0.05, 0.95)`` for every free symbol).
    n_points : int, default 12
        Random points of the numeric check.
    seed : int, default 0
        Seed of the random points.

    Returns
    -------
    Proof
        ``status`` "symbolic", "numeric" (``|expr| < 1e-40`` at every point) or "failed".

    Examples
    --------
    >>> prove_zero(sp.sin(x)**2 + sp.cos(x)**2 - 1, "sin^2 + cos^2 = 1").status
    'symbolic'
    >>> prove_zero(x - p, "x = p").status
    'failed'
    """
    _check_ranges(expr, symbols_ranges, required=False)
    simplified = sp.simplify(expr)
    if simplified == 0:
        return Proof(statement, "symbolic", "simplify(lhs - rhs) == 0")
    if sp.simplify(sp.radsimp(sp.together(sp.expand(expr)))) == 0:
        return Proof(statement, "symbolic", "radsimp/together/expand")
    _check_ranges(expr, symbols_ranges, required=False, complete=True)     # the numeric check needs every symbol
    rng = random.Random(seed)
    symbols_ranges = symbols_ranges or {s: (0.05, 0.95) for s in expr.free_symbols}
    worst = sp.Float(0)
    for _ in range(n_points):
        subs = {s: sp.Float(rng.uniform(*rng_), 50) for s, rng_ in symbols_ranges.items()}
        val = abs(sp.N(expr.subs(subs), 50))
        worst = max(worst, val)
    if worst < sp.Float("1e-40"):
        return Proof(statement, "numeric", f"sympy could not simplify to 0; |lhs - rhs| < 1e-40 at "
                                           f"{n_points} random points with 50-digit mpmath", simplified)
    return Proof(statement, "failed", f"|lhs - rhs| = {sp.N(worst, 5)} at a random point", simplified)


@checked(expr=_EXPR, sign=one_of(1, -1), statement=text(), n_points=POSITIVE_COUNT, seed=SEED)
def prove_sign(expr: sp.Expr, sign: int, statement: str, symbols_ranges: dict, n_points: int = 200,
               seed: int = 0) -> Proof:
    """Prove ``sign * expr > 0`` from sympy's assumptions; else check it at random points (labelled).

    Parameters
    ----------
    expr : sympy.Expr
        The expression whose sign is proved.
    sign : {1, -1}
        Prove ``expr > 0`` (1) or ``expr < 0`` (-1).
    statement : str
        The statement, in words.
    symbols_ranges : dict
        ``{symbol: (lo, hi)}`` for the numeric check.
    n_points : int, default 200
        As for :func:`prove_zero`.
    seed : int, default 0
        As for :func:`prove_zero`.

    Returns
    -------
    Proof
        ``status`` "symbolic" (from the assumptions), "numeric" (the sign holds at every random point) or "failed".

    Examples
    --------
    >>> prove_sign(x * (1 - x), 1, "x(1-x) > 0", {x: (0.01, 0.99)}).status   # sympy cannot decide 1 - x > 0
    'numeric'
    """
    _check_ranges(expr, symbols_ranges, required=True)
    decided = (sign * expr).is_positive
    if decided:
        return Proof(statement, "symbolic", "sympy's assumption system (positive symbols)")
    _check_ranges(expr, symbols_ranges, required=True, complete=True)     # the numeric check needs every symbol
    rng = random.Random(seed)
    f = sp.lambdify(list(symbols_ranges), sign * expr, "mpmath")
    with mpmath.workdps(50):
        for _ in range(n_points):
            if not f(*[mpmath.mpf(rng.uniform(*r)) for r in symbols_ranges.values()]) > 0:
                return Proof(statement, "failed", "a random point violates the inequality")
    return Proof(statement, "numeric", f"sympy could not decide; holds at {n_points} random points "
                                       "(50-digit mpmath)")


@checked(expr=_EXPR, var=instance(sp.Symbol, "a sympy Symbol"), statement=text())
def prove_positive(expr: sp.Expr, var: sp.Symbol, statement: str) -> Proof:
    """Prove ``expr > 0`` for every ``var > 0`` by showing ``expr <= 0`` has no solution there.

    Parameters
    ----------
    expr : sympy.Expr
        The expression.
    var : sympy.Symbol
        The variable, ranging over ``(0, inf)``.
    statement : str
        The statement, in words.

    Returns
    -------
    Proof
        ``status`` "symbolic" when ``solveset`` finds no point where ``expr <= 0``, else "failed".
    """
    bad = sp.solveset(expr <= 0, var, sp.Interval.open(0, sp.oo))
    if bad == sp.S.EmptySet:
        return Proof(statement, "symbolic", "solveset(expr <= 0, (0, oo)) is empty")
    return Proof(statement, "failed", f"expr <= 0 on {bad}")
