"""Work that would run for minutes is refused up front, naming the count, the limit and the alternative
(grpo_theory.solvers.work, the dynamics' step costs, solve's table); work just inside a limit is not refused.

The sizes here are the ones the size probe of the sixteenth round found running over 60 s of wall time or out of
4 GiB (docs/reliability.md, docs/results/size_probe16.csv). The counts in the messages are computed here from
their definitions (``C(G + L - 2, L - 1)`` count vectors for L reward levels), not read from the package. The fast
tests only reach the refusals (each well under 0.1 s); the slow ones run the largest allowed sizes.
"""

from __future__ import annotations

import math
import resource
from math import comb

import numpy as np
import pytest

from grpo_theory import InvalidInputError, Objective, Question, dynamics, stationary_points, stationary_policy
from grpo_theory.cli import main
from grpo_theory.solvers.search import CERTIFY_BOXES
from grpo_theory.solvers.work import search_work_checked


def _distinct(n: int) -> Question:
    p = np.linspace(1, 2, n)
    return Question(list(p / p.sum()), [i / (n - 1) for i in range(n)])


Q3 = _distinct(3)


def _refused(fn, *needles):
    with pytest.raises(InvalidInputError) as info:
        fn()
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, msg
    return msg


def test_certified_search_at_g300_is_refused_with_its_count_and_the_largest_g():
    import inspect

    assert inspect.signature(search_work_checked).parameters["box_budget"].default == CERTIFY_BOXES
    # 3 levels at G = 300: 45,150 count vectors, 59 s of wall and 3.3 GB before; the limit is 25,000 vectors
    g_max = max(g for g in range(2, 300) if comb(g + 1, 2) <= 25_000)
    _refused(lambda: stationary_points(Q3, Objective(beta=0.5, group_size=300)),
             f"{comb(301, 2):,} count vectors", "25,000", f"at most {g_max},", "group_size=math.inf",
             "exhaustive=False")
    search_work_checked(Q3, Objective(beta=0.5, group_size=g_max))          # the largest allowed G passes
    with pytest.raises(InvalidInputError):
        search_work_checked(Q3, Objective(beta=0.5, group_size=g_max + 1))


def test_multi_start_search_over_many_levels_is_refused():
    # 20 distinct rewards at G = 8: 657,800 count vectors x 20 classes, over 75 s of wall before
    _refused(lambda: stationary_points(_distinct(20), Objective(beta=0.5, group_size=8)),
             f"{comb(26, 19):,} count vectors", f"{comb(26, 19) * 20:,} count vectors x classes", "2,500,000")
    search_work_checked(_distinct(15), Objective(beta=0.5, group_size=8))   # 116,280 x 15, allowed
    with pytest.raises(InvalidInputError):                                  # 170,544 x 16: 17.9-24.5 s
        search_work_checked(_distinct(16), Objective(beta=0.5, group_size=8))


def test_search_and_policy_refuse_too_many_classes():
    _refused(lambda: stationary_points(_distinct(101), Objective(beta=0.5, group_size=math.inf)),
             "101 classes", "100 classes", "stationary_policy")
    _refused(lambda: stationary_policy(_distinct(501), Objective(beta=0.5, group_size=math.inf)),
             "501 classes", "500 classes")


def test_policy_flow_over_two_million_count_vectors_is_refused():
    # 22 distinct rewards at G = 8: C(28, 21) = 1,184,040 vectors x 22 classes, 18.5 s of CPU measured (23: over 25 s)
    _refused(lambda: stationary_policy(_distinct(22), Objective(beta=0.5, group_size=8)),
             f"{comb(28, 21):,} count vectors", f"{comb(28, 21) * 22:,} count vectors x classes", "20,000,000")


def test_dynamics_refuse_up_front():
    obj = Objective(beta=0.5, group_size=8)
    _refused(lambda: dynamics.flow(Q3, obj, Q3.pi_ref, np.linspace(0, 1, 10_000_001), with_points=False),
             "10,000,001 times for 3 outputs", "30,000,000")
    _refused(lambda: dynamics.flow(Q3, Objective(beta=0.5, group_size=1000), Q3.pi_ref, [0, 1]),
             f"{comb(1001, 2):,} count vectors", "with_points=False")
    _refused(lambda: dynamics.ascent(Q3, obj, Q3.pi_ref, lr=0.01, steps=10**6, with_points=False),
             "steps=1,000,000", "dynamics.flow")
    _refused(lambda: dynamics.grpo_steps(Q3, obj, Q3.pi_ref, lr=0.01, n_batches=10**6, with_points=False),
             "n_batches=1,000,000")
    _refused(lambda: dynamics.grpo_steps(Q3, obj, Q3.pi_ref, lr=0.01, n_batches=10, n_groups=10**7,
                                         with_points=False), "80,000,000 samples")


def test_solve_table_refuses_more_than_thirty_classes(capsys):
    n = 31
    argv = ["solve", "--pi-ref", *[str(1 / n)] * n, "--rewards", *[str(i) for i in range(n)], "--beta", "0.5",
            "--group-size", "inf"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "31 classes" in err and "more than 30 classes" in err and "Traceback" not in err, err


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


@pytest.mark.slow
@pytest.mark.parametrize("call", [
    lambda: stationary_points(Q3, Objective(beta=0.5, group_size=200)),
    lambda: stationary_points(_distinct(4), Objective(beta=0.5, group_size=51)),
    lambda: stationary_points(_distinct(15), Objective(beta=0.5, group_size=8)),
    lambda: stationary_policy(_distinct(21), Objective(beta=0.5, group_size=8)),
    lambda: dynamics.ascent(Q3, Objective(beta=0.5, group_size=8), Q3.pi_ref, lr=0.01, steps=400_000, every=10**4,
                            with_points=False),
], ids=["points-3-levels-G200", "points-4-levels-G51", "points-15-distinct-G8", "policy-21-distinct-G8",
        "ascent-400k-steps"])
def test_the_largest_allowed_sizes_finish_within_a_minute_of_cpu(call):
    t0 = _cpu()
    call()
    assert _cpu() - t0 < 60.0


def test_solve_refuses_a_preference_matrix_over_thirty_outputs(capsys):
    n = 31
    argv = ["solve", "--pi-ref", *[str(1 / n)] * n, "--preference", *["0.5"] * (n * n), "--beta", "0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "31 outputs" in err and "more than 30" in err and "nash_equilibrium" in err, err


def test_nash_equilibrium_map_cycles_and_monte_carlo_refuse_up_front(monkeypatch):
    from grpo_theory import monte_carlo_preference, nash_equilibrium
    from grpo_theory.proximal import map_cycles
    from grpo_theory.solvers import baselines

    assert baselines.NASH_MAX_OUTPUTS == 1_500          # 3,000 outputs ran over 75 s; 1,000 took 3 s
    monkeypatch.setattr(baselines, "NASH_MAX_OUTPUTS", 20)      # the rule at a size this test can afford
    _refused(lambda: nash_equilibrium(_distinct(21), 0.5), "21 outputs", "the limit is 20")
    nash_equilibrium(_distinct(20), 0.5)
    q2 = Question([0.3, 0.7], [1.0, 0.0])
    _refused(lambda: map_cycles(q2, Objective(beta=0.5, group_size=8), period=2, n_grid=50_001),
             f"{2 * 50_001:,}", "100,000")
    # 3 outputs x 10^7 groups of 16: 4.8e8 draws (over 75 s before); the limit is 3e8
    _refused(lambda: monte_carlo_preference(Q3, Objective(beta=0.5, group_size=16), Q3.pi_ref, n_groups=10**7),
             f"{3 * 10**7 * 16:,} rewards", "300,000,000")


def test_token_level_trees_over_their_limits_are_refused():
    import itertools

    from grpo_theory.solvers.tree_search import tree_search

    def tree(depth):          # every sequence of `depth` tokens over {a, b}: 2^depth answers, 2^(depth+1) - 2 edges
        answers = list(itertools.product("ab", repeat=depth))
        n = len(answers)
        return Question(list(np.full(n, 1 / n)), [float(i % 2) for i in range(n)], answers=answers)

    obj = Objective(beta=0.5, group_size=4, level="token")
    _refused(lambda: stationary_policy(tree(10), obj), "1,024 answers", "600 answers")
    _refused(lambda: stationary_points(tree(6), obj), "64 answers", f"{64 * (51 + 24):,} answers x starts")
    _refused(lambda: tree_search(tree(6), obj), "64 answers")
    n = 5001                        # 5,001 answers of two tokens, no prefix shared: 10,002 edges
    wide = Question(list(np.full(n, 1 / n)), [float(i % 2) for i in range(n)],
                    answers=[(f"a{i}", "z") for i in range(n)])
    _refused(lambda: stationary_points(wide, obj), "10,002 edges", "10,000 edges")
    search_work_checked(tree(4), obj)                   # 16 answers: 7.4 s of CPU, allowed
    _refused(lambda: search_work_checked(tree(5), obj), "32 answers")      # 15-21 s of CPU


def test_graded_predictions_and_the_trade_off_refuse_up_front():
    import pandas as pd

    from grpo_theory.predict import predict, reward_kl_tradeoff, samples_from_counts

    rng = np.random.default_rng(0)
    # 1,000 prompts of 16 samples over 5 levels: hundreds of distinct frequency vectors, each a certified-free
    # multi-start solve (over 75 s of wall before)
    df = pd.DataFrame(dict(prompt_id=np.repeat(np.arange(1000), 16), reward=rng.integers(0, 5, 16_000) / 4))
    n_distinct = np.unique(df.groupby("prompt_id").reward.value_counts().unstack(fill_value=0).to_numpy(),
                           axis=0).shape[0]
    _refused(lambda: predict(df, Objective(beta=0.5, group_size=8), progress=False),
             f"{n_distinct:,} distinct level-frequency vectors over 5 levels", "20 s")
    samples = samples_from_counts(np.full(1000, 16), rng.integers(0, 17, 1000))
    _refused(lambda: reward_kl_tradeoff(samples, Objective(beta=0.5, group_size=8), np.geomspace(0.01, 10, 1000)),
             "1,000 betas", "1,000 prompts", "20 s")


def test_predict_refuses_huge_tables_and_fits_up_front():
    from grpo_theory.predict import predict, samples_from_counts

    rng = np.random.default_rng(1)
    samples = samples_from_counts(np.full(1000, 16), rng.integers(0, 17, 1000))
    obj = Objective(beta=0.5, group_size=8)
    _refused(lambda: predict(samples, obj, k=range(1, 1002), progress=False), "1,001 values of k",
             f"{1000 * 2 * 1001:,} values", "2,000,000")
    _refused(lambda: predict(samples, obj, clock=0.01, steps=list(range(1, 2000)), progress=False),
             "1,999 steps", f"{1000 * (2 * 2 + 1999):,} values")
    # the shared-weights fit: 1,000 prompts x 300 rhos x 201 times = 60,300,000 path values
    _refused(lambda: predict(samples, obj, clock=0.01, steps=[10], measured=samples, rhos=np.linspace(0, 0.99, 300),
                             progress=False), f"{1000 * 300 * 201:,} path values", "50,000,000")


def test_explain_refuses_the_search_before_solving_the_policy(capsys):
    from pathlib import Path

    config = Path(__file__).resolve().parents[1] / "docs" / "examples" / "trl_config.json"     # G = 8
    n = 20           # 20 distinct rewards at G = 8: the policy took 9 s before the search was refused (59 s of wall)
    argv = ["explain", "--framework", "trl", str(config), "--pi-ref", *[str(1 / n)] * n,
            "--rewards", *[str(i) for i in range(n)]]
    t0 = _cpu()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "explain: the multi-start search" in err and f"{comb(26, 19) * 20:,}" in err, err
    assert _cpu() - t0 < 5.0


def test_flow_table_refuses_up_front():
    from grpo_theory.predict import flow_table

    starts = np.linspace(0.001, 0.999, 10_000)
    # 6,400 starts at 600 times: about 6,400 x (20 ms + 0.6 ms) of flows (over 75 s of wall before)
    _refused(lambda: flow_table(starts, Objective(beta=0.5, group_size=8), max_exact=6400), "6,400 starts",
             "max_exact=6,400", "20 s")
