"""Symbolic derivations: each identity proven by sympy (or honestly labelled numeric), the
generated docs fresh, and every symbolic result compared with closed_form and the solvers."""

import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from grpo_theory import Objective, Question, closed_form, log_pooling, stationary_policy
from grpo_theory import symbolic as S

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def derivations():
    # the process's cached derivations: the first call in this process runs every check (they are pure
    # and deterministic), and render_markdown below and `grpo-theory derivations --check` reuse them
    # instead of deriving everything again (about 10 s each)
    return {d.name: d for d in S.all_derivations()}


def test_no_check_fails_and_the_required_identities_are_symbolic(derivations):
    proofs = [c for d in derivations.values() for c in d.checks]
    proofs += list(S.all_identities())
    assert all(p.holds for p in proofs), [p for p in proofs if not p.holds]
    status = {p.statement: p.status for p in proofs}
    must_be_symbolic = [
        "G = 2, ddof 0: A_1 = sign(r_1 - r_2)", "G = 2, ddof 1: A_1 = sign(r_1 - r_2)/sqrt(2)",
        "E_pi P_2(.|pi) = 0 (three outputs, symbolic rewards and policy)",
        "E_pi P_3(.|pi) = 0 (three outputs, symbolic rewards and policy)",
        "shift + direct = RLHF with beta' = G beta/(G-1), symbolic G",
        "gradient of the expected k3 penalty at pi_old = pi: 1 - pi_ref/pi",
        "it equals the gradient of KL(pi_ref || pi) plus the constant 1",
        "x = sqrt(p) at beta = gamma", "x -> 1 as beta -> 0 (p > 0)", "x -> p as beta -> oo",
        "1/(1+beta^2) > 1 - beta", "h'(x*) = 0",
    ]
    for s in must_be_symbolic:
        assert status[s] == "symbolic", s


def test_prove_zero_does_not_prove_a_false_identity():
    a = sp.symbols("a", positive=True)
    assert S.prove_zero(sp.sqrt(a**2 + 1) - a - 1, "false", {a: (0.1, 3)}).status == "failed"
    assert S.prove_sign(a - 1, +1, "false", {a: (0.1, 3)}).status == "failed"


def test_derivations_markdown_is_fresh():
    """docs/derivations.md must be what `grpo-theory derivations` writes now."""
    assert (ROOT / "docs" / "derivations.md").read_text(encoding="utf-8") == S.render_markdown()


def test_derivations_check_passes_on_the_committed_file(monkeypatch):
    """The command line's check (here, not in test_cli.py, so that it runs in the process, and on the
    xdist worker, that has already derived everything)."""
    from grpo_theory.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["derivations", "--check"]) == 0


@settings(max_examples=40, deadline=None)
@given(p=st.floats(0.01, 0.99), beta=st.floats(0.05, 5.0), gamma=st.floats(0.1, 1.0))
def test_symbolic_solutions_agree_with_closed_forms_and_solvers(derivations, p, beta, gamma):
    eq14 = sp.lambdify((S.p, S.beta, S.gamma), derivations["Eq. 14 (G = 2, reverse penalty)"].solution)
    eq15 = sp.lambdify((S.p, S.beta), derivations["Eq. 15 (large G, reverse penalty)"].solution)
    dir2 = sp.lambdify((S.p, S.beta, S.gamma), derivations["G = 2, direct penalty"].solution)
    assert eq14(p, beta, gamma) == pytest.approx(float(closed_form.binary_pairwise(p, beta, gamma)), abs=1e-12)
    assert eq15(p, beta) == pytest.approx(float(closed_form.binary_large_group(p, beta)), abs=1e-12)
    assert dir2(p, beta, gamma) == pytest.approx(float(closed_form.binary_pairwise_direct(p, beta, gamma)),
                                                 abs=1e-12)
    q = Question([p, 1 - p], rewards=[1.0, 0.0])
    assert eq15(p, beta) == pytest.approx(stationary_policy(q, Objective(beta=beta, group_size=math.inf)).pi[0],
                                          abs=1e-10)
    xs = sp.lambdify(S.beta, derivations["Large G, direct penalty: h(x) and its turning point"].solution)
    assert xs(beta) == pytest.approx(float(closed_form.large_group_direct_turning_point(beta)), abs=1e-13)


def test_log_pooling_derivation_matches_baseline(derivations):
    d = derivations["RLHF: logarithmic pooling (Eq. 4)"]
    q0, q1, q2 = sp.symbols("q0:3", positive=True)
    r0, r1, r2 = sp.symbols("r0:3", real=True)
    f = sp.lambdify((q0, q1, q2, r0, r1, r2, S.beta), d.solution)
    ref, r, b = [0.2, 0.3, 0.5], [1.0, 0.2, -0.4], 0.7
    assert f(*ref, *r, b) == pytest.approx(log_pooling(ref, r, b)[0], abs=1e-14)


@pytest.mark.parametrize("G", [3, 4, 6])
@pytest.mark.parametrize("penalty", ["reverse", "direct"])
def test_finite_group_symbolic_condition_has_the_solver_root(G, penalty):
    expr = S.binary_finite_group_condition(G, penalty)
    f = sp.lambdify((S.x, S.p, S.beta), expr)
    for p, beta in [(0.2, 0.5), (0.6, 2.0)]:
        lo, hi = (1e-9, 1 - 1e-9) if penalty == "reverse" else (p, 1 - 1e-12)
        root = brentq(f, lo, hi, args=(p, beta), xtol=1e-15)
        sol = stationary_policy(Question([p, 1 - p], rewards=[1.0, 0.0]), Objective(beta=beta, group_size=G,
                                                                                    penalty=penalty))
        assert root == pytest.approx(sol.pi[0], abs=1e-10)


def test_symbolic_g_keeps_an_unevaluated_sum():
    expr = S.binary_finite_group_condition(None)
    assert expr.has(sp.Sum) and S.G in expr.free_symbols
    np.testing.assert_allclose(
        float(expr.subs(S.G, 2).doit().subs({S.x: 0.4, S.p: 0.3, S.beta: 1.0})),
        1.0 * (0.4 - 0.3) - 0.4 * 0.6 * 1.0)        # G = 2: Delta = 1
