"""Regression tests of the eighth hostile audit's findings (docs/reliability.md, "Hostile input, eighth round"); the
audit itself is ``tests/hostile_audit_round8.py`` (slow, not in the default run). Each is a rule, tested through an
entry point that uses it."""

from __future__ import annotations

import argparse
import io
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from _cli_run import refused
from grpo_theory import InvalidInputError, Objective, log_pooling
from grpo_theory import closed_form as cf


@pytest.mark.parametrize("beta", [Decimal("0.3"), Fraction(3, 10)])
def test_a_decimal_or_a_fraction_is_the_number_it_holds(beta):
    """``_validate.unwrap_scalar``: they were refused with 'beta must be a positive finite number, got 0.3'."""
    assert Objective(beta=beta).beta == 0.3
    assert np.array_equal(log_pooling([0.3, 0.7], [1, 0], Decimal("0.25")), log_pooling([0.3, 0.7], [1, 0], 0.25))


@pytest.mark.parametrize("beta", [Decimal("NaN"), Decimal("1e-400"), Fraction(-3, 10)])
def test_a_decimal_a_double_cannot_hold_is_still_refused(beta):
    with pytest.raises(InvalidInputError, match="beta"):
        Objective(beta=beta)


@pytest.mark.parametrize("call", [lambda: Objective(beta=np.timedelta64(1)),
                                  lambda: cf.binary_pairwise(0.3, np.timedelta64(1)),
                                  lambda: cf.binary_pairwise(np.array([1, 2], dtype="timedelta64[s]"), 0.5)])
def test_numpy_times_are_not_numbers(call):
    """``np.timedelta64`` is an ``np.integer``: it was a raw UFuncTypeError in Objective, a number in the closed forms."""
    with pytest.raises(InvalidInputError, match="NumPy time"):
        call()


def test_an_empty_output_path_is_refused(tmp_path):
    (tmp_path / "s.csv").write_text("prompt_id,n,correct\na,10,3\n")
    refused(["predict", tmp_path / "s.csv", "--beta", "0.5", "--out", "", "--no-plots"], "argument --out", "empty path")


def test_an_ascii_standard_output_gets_escapes_not_an_error():
    from grpo_theory.cli import _escape_what_cannot_be_encoded

    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    _escape_what_cannot_be_encoded(stream)
    stream.write("pi \u221d pi_ref\n")
    stream.flush()
    assert stream.buffer.getvalue() == b"pi \\u221d pi_ref\n"


def test_every_option_of_every_subcommand_is_described():
    from grpo_theory.cli import build_parser

    parser = build_parser()
    assert "``" not in parser.format_help()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    bare = [f"{name} {a.option_strings or a.dest}" for name, sp in subs.choices.items() for a in sp._actions
            if not a.help]
    assert not bare, bare
