"""The stored published per-problem counts (docs/results/published/): the transcription against the source's totals.

The expected numbers are copied from the source file named in each folder's README (``audit/results.json`` of
``cc1107yss/limit-of-rlvr-qwen7b-math500-reproduction`` at commit 85ce075), never from the library.
"""

import csv
import math
from pathlib import Path

import pytest

DIR = Path(__file__).resolve().parents[1] / "docs" / "results" / "published" / "simplerl_zoo_qwen25_7b_math500"

#: Pooled pass@k of the source (``models.*.pooled_pass_at_k``).
POOLED = {
    "base": {1: 0.613921875, 2: 0.7340831692913385, 4: 0.8143581835395576, 8: 0.8681727477486968,
             16: 0.9043392837691936, 32: 0.9292921989161737, 64: 0.9474446568195055, 128: 0.962},
    "after": {1: 0.779328125, 2: 0.8235853838582677, 4: 0.8567501336707911, 8: 0.8829698676500476,
              16: 0.902217497649716, 32: 0.9150862887604729, 64: 0.9234943668139742, 128: 0.93},
}
#: ``paired[k]``: problems where the RL model's pass@k is above / below / equal to the base's.
PAIRED = {1: (417, 58, 25), 2: (399, 58, 43), 4: (364, 57, 79), 8: (326, 57, 117), 16: (223, 55, 222),
          32: (132, 53, 315), 64: (66, 49, 385), 128: (3, 19, 478)}


def _read(name):
    with open(DIR / name, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["prompt_id"] for r in rows] == [str(i) for i in range(500)]
    return [int(r["n"]) for r in rows], [int(r["correct"]) for r in rows]


def _pass_at_k(n, c, k):
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.fixture(scope="module")
def counts():
    return {"base": _read("base.csv"), "after": _read("after.csv")}


def test_totals_and_solved(counts):
    """correct_generations 39,291 / 49,877; solved_at_128 481 / 465; n = 128 everywhere."""
    for name, total, solved in (("base", 39291, 481), ("after", 49877, 465)):
        n, c = counts[name]
        assert set(n) == {128}
        assert all(0 <= x <= 128 for x in c)
        assert sum(c) == total
        assert sum(x > 0 for x in c) == solved


@pytest.mark.parametrize("k", sorted(PAIRED))
def test_pooled_pass_at_k_and_paired_tallies(counts, k):
    """Pooled pass@k of both models to 1e-12, and the paired per-problem tally at every k of the source."""
    pk = {name: [_pass_at_k(ni, ci, k) for ni, ci in zip(*counts[name])] for name in counts}
    for name in pk:
        assert sum(pk[name]) / 500 == pytest.approx(POOLED[name][k], abs=1e-12)
    # the source compares double-precision pass@k: values within 1e-15 (e.g. 1 - 1e-17 and 1) are ties there;
    # exact integer comparison splits a few of those ties for k >= 16
    above = sum(a > b + 1e-15 for a, b in zip(pk["after"], pk["base"]))
    below = sum(a < b - 1e-15 for a, b in zip(pk["after"], pk["base"]))
    assert (above, below, 500 - above - below) == PAIRED[k]


def test_pass128_categories_and_readme(counts):
    """both / base only / RL only / neither = 462 / 19 / 3 / 16, as the README states."""
    b, a = counts["base"][1], counts["after"][1]
    cats = (sum(x > 0 and y > 0 for x, y in zip(b, a)), sum(x > 0 and y == 0 for x, y in zip(b, a)),
            sum(x == 0 and y > 0 for x, y in zip(b, a)), sum(x == 0 and y == 0 for x, y in zip(b, a)))
    assert cats == (462, 19, 3, 16)
    text = (DIR / "README.md").read_text()
    assert "462 / 19 / 3 / 16" in text and "39,291" in text and "49,877" in text
