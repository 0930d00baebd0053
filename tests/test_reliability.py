"""Never silently wrong: random questions checked on independent paths, and extreme inputs.

Each result is a converged point whose stationarity residual, recomputed without the library's
P_G engine, is within tolerance; or a limit point the independent gradient confirms; or an honest
flag (``converged=False`` with a reason); or a clear ``InvalidInputError``. Never a NaN, another
exception, ``converged=True`` above tolerance, or a hang (pytest-timeout). The grid of extreme masses over
every beta, G, penalty and normalisation is tests/test_reliability_extremes.py.
"""

from __future__ import annotations

import math

import pytest
from fuzz_cases import check_case

from grpo_theory import InvalidInputError, Objective, Question, closed_form, stationary_policy

GOOD = {"ok", "ok-limit", "flagged", "error"}


def _run(seeds):
    rows = [check_case(s) for s in seeds]
    bad = [r for r in rows if r["outcome"] not in GOOD]
    return rows, bad


@pytest.mark.timeout(240)
def test_fuzz_sample_of_300_random_questions():
    rows, bad = _run(range(300))
    assert not bad, bad[:5]
    ok = sum(r["outcome"] in ("ok", "ok-limit") for r in rows)
    assert ok >= 280, f"only {ok} of 300 cases were checked to converge; the rest were flagged or refused"


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_fuzz_ten_thousand_random_questions():
    rows, bad = _run(range(10_000))
    assert not bad, bad[:5]


def test_the_rerun_in_the_docs_is_the_committed_table():
    """docs/reliability.md's counts for the latest 10^4-case run are those of docs/results/reliability_summary.csv."""
    import re
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parents[1]
    table = pd.read_csv(root / "docs" / "results" / "reliability_summary.csv")
    doc = (root / "docs" / "reliability.md").read_text()
    run = doc[doc.index("**Rerun at"):]
    run = run[:run.index("failed**") + len("failed")]        # the run's own counts (the parent's come later)
    stated = {w: int(n.replace(",", "")) for n, w in
              re.findall(r"(\d[\d,]*) (ok-limit|ok|flagged|errors|failed)\b", run.replace("**", ""))}
    assert re.search(r"(\d[\d,]*) cases", run.replace("10⁴", "10000")).group(1) == str(int(table.cases.sum()))
    assert stated == {"ok": table.ok.sum(), "ok-limit": table.ok_limit.sum(), "flagged": table.flagged.sum(),
                      "errors": table.error.sum(), "failed": table.failed.sum()}


@pytest.mark.parametrize("beta", [1e-4, 1e-2, 1.0, 1e4])
@pytest.mark.parametrize("p", [1e-300, 1e-20, 0.3, 1 - 1e-12])
def test_binary_extremes_match_the_closed_forms(p, beta):
    """Eq. 14 (G = 2) and Eq. 15 (G = inf), and the direct G = 2 form, at extreme pi_ref and beta."""
    q = Question([p, 1 - p], rewards=[1.0, 0.0])
    for obj, x in [(Objective(beta=beta, group_size=2), closed_form.binary_pairwise(p, beta)),
                   (Objective(beta=beta, group_size=math.inf), closed_form.binary_large_group(p, beta)),
                   (Objective(beta=beta, group_size=2, penalty="direct"), closed_form.binary_pairwise_direct(p, beta))]:
        sol = stationary_policy(q, obj)
        assert sol.converged
        assert sol.pi[0] == pytest.approx(float(x), rel=1e-9, abs=1e-12), obj.describe()


def test_direct_penalty_small_beta_finite_g_has_its_interior_point_beyond_logit_740():
    """The issue's crash: the root is at z = Delta/beta (2645 at beta = 1e-3, G = 8), beyond exp underflow."""
    from grpo_theory import stationary_points

    q = Question([0.3, 0.7], rewards=[1, 0])
    for beta, G in [(0.001, 8), (0.01, 64), (0.003, 8), (0.02, 1024)]:
        obj = Objective(beta=beta, group_size=G, penalty="direct")
        sol = stationary_policy(q, obj)
        pts = stationary_points(q, obj)
        assert len(pts) == 1 and pts.exhaustive and pts[0].stable
        # at the root beta (z - zc) = P(a) - P(b) -> sqrt(G - 1) (one b among G - 1 a's: ddof 0)
        zc = math.log(0.3 / 0.7)
        assert sol.class_logit == pytest.approx(zc + math.sqrt(G - 1) / beta, rel=1e-9)
        assert sol.stable and sol.converged and sol.pi[0] == 1.0


@pytest.mark.parametrize("rewards", [[1e154, 0.0], [1e-200, 0.0], [1e308, -1e308], [3e7, -1e7]])
def test_scale_normalisation_is_invariant_to_extreme_reward_gaps(rewards):
    ref = stationary_policy(Question([0.3, 0.7], rewards=[1.0, 0.0]), Objective(beta=0.5, group_size=8))
    sol = stationary_policy(Question([0.3, 0.7], rewards=rewards), Objective(beta=0.5, group_size=8))
    assert sol.pi == pytest.approx(ref.pi, rel=1e-12)


def test_shift_only_with_an_overflowing_span_is_a_clear_error():
    with pytest.raises(InvalidInputError, match="overflows"):
        stationary_policy(Question([0.3, 0.7], rewards=[1e308, -1e308]), Objective(beta=0.5, group_size=8,
                                                                                   normalization="shift"))


def test_objective_as_a_dict_and_bad_objects():
    q = Question([0.3, 0.7], rewards=[1, 0])
    assert stationary_policy(q, {"beta": 0.5}).pi == pytest.approx(stationary_policy(q, Objective(beta=0.5)).pi)
    for bad in ({"bta": 0.5}, 0.5, None):
        with pytest.raises(InvalidInputError):
            stationary_policy(q, bad)
    with pytest.raises(InvalidInputError, match="Question"):
        stationary_policy([0.3, 0.7], Objective(beta=0.5))


def test_closed_form_and_log_pooling_reject_or_survive_extremes():
    from grpo_theory import log_pooling

    for g in (math.nan, 2.5, 1):
        with pytest.raises(InvalidInputError):
            closed_form.binary_shift_direct(0.3, 0.5, g)
    assert log_pooling([0.3, 0.7], [1e300, 0], 1e-300) == pytest.approx([1.0, 0.0])
    assert log_pooling([0.3, 0.7], [1e308, -1e308], 1e-3) == pytest.approx([1.0, 0.0])
