"""The registry of variants (grpo_theory/variants.py): no string dispatch outside it, each entry's facts checked
against an independent computation, and a toy advantage estimator added the documented way (one registered
entry, nothing edited elsewhere) run through the engine, the torch trainer's loss and the trainer itself."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from grpo_theory import Objective, Question, kl, stationary_points, stationary_policy, variants
from grpo_theory.advantage import enumerated_expectations
from grpo_theory.errors import InvalidInputError
from grpo_theory.preference import max_abs_advantage, reward_preference

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import string_dispatch  # noqa: E402


# ----------------------------------------------------------------------------- no string dispatch

def test_no_objective_field_is_compared_with_a_string_outside_the_registry():
    found = string_dispatch.sites(ROOT)
    assert found == [], "ask the registry entry instead (grpo_theory.variants):\n" + "\n".join(
        f"{p}:{n}: {line}" for p, n, line in found)


@pytest.mark.parametrize("source", [
    'if obj.regime == "reverse": pass',
    'x = obj.regime in ("reverse", "direct")',
    'x = "shift" != self.obj.normalization',
    'x = cfg.objective.advantage not in ["rloo"]',
    'x = fields.get("advantage") == "rloo"',
    'x = {"k3": 1, "k1": 2}[obj.estimator]',
    'if penalty == "direct": pass',
])
def test_the_grep_finds_each_kind_of_string_dispatch(source):
    assert len(string_dispatch.find(source)) == 1


@pytest.mark.parametrize("source", ['x = obj.regime_variant.is_note_penalty', 'x = obj.beta == 0.5',
                                    'x = name == "rloo"', 'x = obj.advantage == other'])
def test_the_grep_leaves_other_comparisons_alone(source):
    assert string_dispatch.find(source) == []


#: Comparisons through a local name that are still open, each with why it is left: ``(path, line fragment)``.
OPEN_ALIASED: set[tuple[str, str]] = set()   # none open: every site asks the registry entry


def test_string_dispatch_through_a_local_name_is_only_the_known_open_site():
    """The grep above reads the fields' spellings; a field read into a local name first (``kind = obj.aggregation``)
    and compared later escapes it. This lists those comparisons: exactly the open ones (when one is fixed, remove it
    from OPEN_ALIASED)."""
    sites = string_dispatch.aliased_sites(ROOT)
    found = {(p, frag) for p, _, line in sites for q, frag in OPEN_ALIASED if p == q and frag in line}
    extra = [(p, n, line) for p, n, line in sites if not any(p == q and frag in line for q, frag in OPEN_ALIASED)]
    assert extra == [], "ask the registry entry instead (grpo_theory.variants):\n" + "\n".join(map(str, extra))
    assert found == OPEN_ALIASED, f"fixed? remove from OPEN_ALIASED: {OPEN_ALIASED - found}"


@pytest.mark.parametrize("source, hits", [
    ('def f(obj):\n    kind = obj.aggregation\n    if kind == "answer_mean":\n        pass\n', 1),
    ('def f(cfg):\n    est = cfg.objective.estimator\n    return est in ("k1", "k2"), est != other\n', 1),
    ('def f(obj):\n    kind = obj.aggregation_variant\n    return kind.answer_mean, name == "x"\n', 0),
])
def test_the_aliased_grep_follows_a_field_into_a_local_name(source, hits):
    assert len(string_dispatch.find_aliased(source)) == hits


def test_every_allowed_exception_still_exists():
    """An allowance whose line is gone would hide a new site of the same spelling: each must match a line."""
    everything = string_dispatch.sites(ROOT, allowed=True)
    for path, fragment in string_dispatch.ALLOWED:
        assert any(p == path and fragment in line for p, _, line in everything), (path, fragment)


# ----------------------------------------------------------------------------- the entries' facts

def _groups(levels, G):
    """Every reward tuple of a group of G over ``levels`` (as an (N, G) array)."""
    return np.array(list(itertools.product(levels, repeat=G)), dtype=float)


def _direct_advantages(r: np.ndarray, obj: Objective) -> np.ndarray:
    """Each estimator's advantages written out from its definition (numpy), independently of the package."""
    G = r.shape[-1]
    centred = r - r.mean(axis=-1, keepdims=True)
    if obj.advantage == "rloo":
        return r - (r.sum(axis=-1, keepdims=True) - r) / (G - 1)
    if obj.advantage == "pass_at_k":
        out = np.zeros_like(r)
        for n, row in enumerate(r):
            passed = row == row.max()
            if passed.all():
                continue
            fails = int((~passed).sum())
            R = 1 - math.comb(fails, obj.pass_k) / math.comb(G, obj.pass_k)
            s = math.sqrt(R * (1 - R))
            if s == 0:                                    # the paper's 0 where the std vanishes
                continue
            a_fail = (1 - R - math.comb(fails - 1, obj.pass_k - 1) / math.comb(G - 1, obj.pass_k - 1)) / s
            out[n] = np.where(passed, (1 - R) / s, a_fail)
        return out
    if obj.normalization == "shift":
        return centred
    sd = np.sqrt((centred**2).sum(axis=-1, keepdims=True) / (G - obj.std_ddof))
    return np.where(sd > 0, centred / np.where(sd > 0, sd, 1.0), 0.0)


@pytest.mark.parametrize("obj", [Objective(beta=1.0, group_size=G, **kw) for G in (2, 3, 5) for kw in (
    {}, {"std_ddof": 1}, {"normalization": "shift"}, {"advantage": "rloo"}, {"advantage": "pass_at_k", "pass_k": 2})])
def test_each_bound_bounds_every_group_and_is_reached(obj):
    """``entry.bound`` (what makes the two-class scan complete) against every group of G over the levels."""
    levels = (0.0, 1.0) if obj.advantage == "pass_at_k" else (0.0, 0.25, 1.0)
    a = np.abs(_direct_advantages(_groups(levels, obj.group_size), obj))
    bound = obj.advantage_variant.bound(1.0, obj)
    assert bound == max_abs_advantage(1.0, obj)
    assert a.max() <= bound * (1 + 1e-12)
    if obj.advantage in ("pass_at_k", "rloo"):
        assert a.max() == pytest.approx(bound, rel=1e-12)            # the bound is sharp for these
    elif obj.normalization == "shift":                               # the span bounds (G-1)/G of it
        assert a.max() == pytest.approx((obj.group_size - 1) / obj.group_size, rel=1e-12)


@pytest.mark.parametrize("name", variants.names("kl_estimator"))
def test_each_kl_estimator_numpy_and_torch_forms_agree_and_the_slope_is_the_derivative(name):
    torch = pytest.importorskip("torch")
    entry = variants.lookup("kl_estimator", name)
    lr = np.array([-3.0, -0.7, -0.1, 0.2, 0.9, 2.5])
    v = entry.value(lr)
    t = entry.torch_value(torch.tensor(-lr, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(t, v, rtol=1e-12, atol=1e-14)
    h = 1e-6
    fd = (entry.value(lr + h) - entry.value(lr - h)) / (2 * h)
    np.testing.assert_allclose(entry.slope(lr), fd, rtol=1e-6, atol=1e-8)
    lo, hi = entry.value_edges(1.5)                      # |value| = 1.5 on each side of 0
    np.testing.assert_allclose(np.abs(entry.value(np.array([lo, hi]))), 1.5, rtol=1e-10)
    assert lo < 0 < hi


def test_regimes_follow_from_the_estimator_entries():
    """The regime a combination amounts to, against the coefficient it has (``kl.coefficient`` at two points):
    reverse 1 - e^{-lr}, direct lr (up to a constant)."""
    lr = np.array([-1.3, 0.4, 2.0])
    for est in variants.names("kl_estimator"):
        for place in ("loss", "advantage"):
            obj = Objective(beta=1.0, kl_estimator=est, kl_placement=place)
            c = kl.coefficient(obj, lr)
            reverse = np.allclose(c - c[0], -np.expm1(-lr) + np.expm1(-lr[0]), atol=1e-12)
            direct = np.allclose(c - c[0], lr - lr[0], atol=1e-12)
            assert obj.regime_variant.is_reverse == reverse, (est, place)
            assert obj.regime_variant.is_direct == direct, (est, place)


def test_the_trainer_names_match_the_readers_tables():
    """Each entry's verl/OpenRLHF names are the ones the config readers map onto it."""
    from grpo_theory.integrations.family import OPENRLHF_ADVANTAGES, VERL_ADVANTAGES

    for framework, table in (("verl", VERL_ADVANTAGES), ("openrlhf", OPENRLHF_ADVANTAGES)):
        for entry in variants.entries("advantage"):
            for name in entry.names.get(framework, ()):
                assert table[name] is not None and table[name].get("advantage", "group") == entry.name


def test_registry_errors_name_the_value():
    with pytest.raises(InvalidInputError, match="advantage must be one of .*'group'.*got 'nope'"):
        Objective(beta=1.0, advantage="nope")
    with pytest.raises(InvalidInputError, match="already registered"):
        variants.register(variants.lookup("advantage", "rloo"))
    with pytest.raises(InvalidInputError, match="penalty must be one of"):
        variants.note_penalty("none")


def test_a_kl_placement_message_names_only_what_was_given():
    with pytest.raises(InvalidInputError) as exc:
        Objective(beta=0.5, group_size=8, kl_placement="advantage")
    assert "kl_placement='advantage'" in str(exc.value) and "kl_estimator" in str(exc.value)
    assert "penalty" not in str(exc.value)
    with pytest.raises(InvalidInputError, match="penalty='direct' is shorthand.*kl_value_clamp=10"):
        Objective(beta=0.5, penalty="direct", kl_value_clamp=10)
    with pytest.raises(InvalidInputError) as exc:                      # only the estimator was given with it
        Objective(beta=0.5, penalty="direct", kl_estimator="k3")
    assert str(exc.value).startswith("penalty='direct' conflicts with kl_estimator='k3', which amounts to 'reverse';")
    with pytest.raises(InvalidInputError) as exc:
        Objective(beta=0.5, penalty="reverse", kl_estimator="k1", kl_placement="reward", kl_value_clamp=1.0)
    assert ("conflicts with kl_estimator='k1', kl_placement='reward' and kl_value_clamp=1.0, which amount to 'reward'"
            in str(exc.value)) and "log_ratio" not in str(exc.value)
    with pytest.raises(InvalidInputError, match=r"^kl_log_ratio_clamp=20.0 and kl_value_clamp=10.0 need kl_estimator="):
        Objective(beta=0.5, kl_log_ratio_clamp=20, kl_value_clamp=10)


# ----------------------------------------------------------------------------- a toy estimator, added the documented way

def _sign_table(v, total, obj):
    """``sign(r_1 - mean r)`` of member 1 at level l given the group's counts (the documented count table)."""
    return np.sign(np.einsum("lnj,lj->ln", total, v[:, None] - v[None, :]))


def _sign_expectations(v, log_w, obj, *, part="mean", max_count_vectors=None):
    return enumerated_expectations(v, log_w, obj, _sign_table, part=part, max_count_vectors=max_count_vectors)


def _sign_torch(rewards, obj):
    return (rewards - rewards.mean(dim=-1, keepdim=True)).sign()


TOY = variants.AdvantageEstimator(
    name="toy_sign", description="sign(r_i - mean r): a toy estimator for the registry's test",
    expectations=_sign_expectations, bound=lambda span, obj: 1.0, torch_advantages=_sign_torch)


@pytest.fixture()
def toy():
    variants.register(TOY)
    try:
        yield TOY
    finally:
        variants.unregister("advantage", TOY.name)
    with pytest.raises(InvalidInputError):                    # gone again
        Objective(beta=1.0, advantage=TOY.name)


def _brute_preference(q: Question, pi: np.ndarray, G: int) -> np.ndarray:
    """``P(o) = E[sign(r_1 - mean r) | o_1 = o]`` by summing over every group of outputs (deterministic rewards)."""
    K = pi.size
    r = q.expected_reward
    P = np.zeros(K)
    for others in itertools.product(range(K), repeat=G - 1):
        w = np.prod(pi[list(others)])
        for o in range(K):
            group = r[[o, *others]]
            P[o] += w * np.sign(group[0] - group.mean())
    return P


@pytest.mark.parametrize("rewards, pi_ref", [([1, 0, 0], [0.2, 0.3, 0.5]), ([2, 1, 0], [0.2, 0.3, 0.5])])
def test_a_toy_estimator_runs_through_the_engine(toy, rewards, pi_ref):
    """The engine's stationary policy for the toy estimator solves the stationarity condition written out
    independently (P by brute force over every group, the reverse penalty's coefficient by hand)."""
    from scipy import optimize

    G, beta = 4, 0.3
    q = Question(pi_ref, rewards=rewards)
    obj = Objective(beta=beta, group_size=G, advantage=toy.name)
    np.testing.assert_allclose(reward_preference(q, obj, q.pi_ref), _brute_preference(q, q.pi_ref, G), atol=1e-13)
    pt = stationary_policy(q, obj)
    assert pt.converged

    def g(pi):
        return _brute_preference(q, pi, G) - beta * (1 - q.pi_ref / pi)

    def residual(theta):                       # g(o) - g(last) = 0 on logits (last fixed at 0)
        th = np.append(theta, 0.0)
        pi = np.exp(th - th.max())
        pi /= pi.sum()
        gg = g(pi)
        return gg[:-1] - gg[-1]

    sol = optimize.root(residual, np.log(pt.pi[:-1] / pt.pi[-1]) + 0.05, tol=1e-14)
    th = np.append(sol.x, 0.0)
    pi_indep = np.exp(th) / np.exp(th).sum()
    np.testing.assert_allclose(pt.pi, pi_indep, atol=1e-9)
    gg = g(pt.pi)
    assert np.max(np.abs(gg - pt.pi @ gg)) < 1e-9
    found = stationary_points(q, obj)                      # the search, with the toy's bound
    assert any(np.allclose(p.pi, pi_indep, atol=1e-8) for p in found.points)


def test_a_toy_estimator_runs_through_the_trainer_loss(toy):
    """The torch loss with the toy's sampled advantages: its gradient on a tabular policy, averaged exactly over
    every group, is ``pi_k [g(k) - E_pi g]`` with ``g`` the engine's (``output_gradient``); a large sampled batch
    agrees within its standard error."""
    torch = pytest.importorskip("torch")
    from grpo_theory.solvers import output_gradient
    from grpo_theory.training.loss import advantages_for, grpo_objective

    torch.set_num_threads(1)
    G, beta = 3, 0.3
    q = Question([0.2, 0.3, 0.5], rewards=[2, 1, 0])
    obj = Objective(beta=beta, group_size=G, advantage=toy.name)
    pi = np.array([0.35, 0.25, 0.4])
    theta = torch.tensor(np.log(pi), dtype=torch.float64, requires_grad=True)
    ref = torch.tensor(np.log(q.pi_ref), dtype=torch.float64)
    reward = torch.tensor(q.expected_reward, dtype=torch.float64)

    def grad_of(idx):                          # idx (groups, G): the loss's gradient in theta for these groups
        theta.grad = None
        lp = torch.log_softmax(theta, 0)[idx].view(1, *idx.shape, 1)
        adv = advantages_for(reward[idx].view(1, *idx.shape), obj)
        J, _ = grpo_objective(obj, lp, lp.detach(), ref[idx].view(1, *idx.shape, 1), adv)
        J.backward()
        return theta.grad.numpy().copy()

    groups = torch.tensor(list(itertools.product(range(3), repeat=G)))
    weights = np.prod(pi[groups.numpy()], axis=1)
    exact = sum(w * grad_of(grp[None]) for w, grp in zip(weights, groups))
    g = output_gradient(q, obj, pi)
    want = pi * (g - pi @ g)
    np.testing.assert_allclose(exact, want, atol=1e-12)
    gen = torch.Generator().manual_seed(0)
    draws = np.array([grad_of(torch.multinomial(torch.tensor(pi), G * 4000, replacement=True, generator=gen)
                              .view(4000, G)) for _ in range(20)])
    se = draws.std(axis=0, ddof=1) / math.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - want) < 5 * se + 1e-12)


def test_explain_gives_a_toy_estimator_its_own_words(toy):
    """``explain`` states the advantage a registered estimator forms: with no ``formula`` its description, not the
    group advantage's Eq. 2 (which it does not use)."""
    from grpo_theory.integrations.mapping import explain, mapping_of

    info = explain(mapping_of(Objective(beta=0.3, group_size=4, advantage=toy.name), [], "test", None))
    assert info["objective"]["advantage"] == toy.description
    assert explain(mapping_of(Objective(beta=0.3, group_size=4), [], "test", None))["objective"]["advantage"] \
        == "(r - mean r) / (std_{ddof} r + eps)"


def test_a_toy_estimator_trains_in_the_trainer():
    """``GRPOTrainer`` (the small GPT on a binary task) given ``Objective(advantage=toy)``: every step's
    advantages come from the toy's registered torch form, applied to that step's sampled rewards, and the
    model moves. Nothing outside the entry names the toy."""
    torch = pytest.importorskip("torch")
    import copy
    import dataclasses

    from grpo_theory.training.reference import pretrain_reference
    from grpo_theory.training.tasks import synthetic_binary_task
    from grpo_theory.training.trainer import GRPOTrainer, TrainerConfig

    calls = []

    def spy(rewards, obj):
        out = _sign_torch(rewards, obj)
        calls.append((rewards.detach().clone(), out.detach().clone()))
        return out

    variants.register(dataclasses.replace(TOY, torch_advantages=spy))
    try:
        torch.manual_seed(0)
        task, freqs = synthetic_binary_task(4, 1, seed=3)
        ref = pretrain_reference(task, freqs, steps=20, progress=False, seed=3)
        cfg = TrainerConfig(objective=Objective(beta=0.5, group_size=4, advantage=TOY.name), steps=4,
                            groups_per_question=8, seed=0)
        model = copy.deepcopy(ref)
        GRPOTrainer(model, task, cfg, reference=ref, progress=False).train()
    finally:
        variants.unregister("advantage", TOY.name)
    assert len(calls) == cfg.steps
    for rewards, adv in calls:
        assert rewards.shape[-1] == 4 and set(rewards.unique().tolist()) <= {0.0, 1.0}
        torch.testing.assert_close(adv, (rewards - rewards.mean(-1, keepdim=True)).sign())
    assert any(not torch.equal(a, b) for a, b in zip(model.parameters(), ref.parameters()))


def test_the_architecture_page_example_registers_a_working_estimator():
    """docs/architecture.md's example, run as written: the estimator it registers equals the toy above."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text[text.index("```python", text.index("**A variant**")) + len("```python"):]
    block = block[:block.index("```")]
    code = "\n".join(line[2:] if line.startswith("  ") else line for line in block.splitlines())
    exec(compile(code, "architecture.md", "exec"), {})
    try:
        q = Question([0.2, 0.3, 0.5], rewards=[2, 1, 0])
        obj = Objective(beta=0.3, group_size=4, advantage="sign")
        np.testing.assert_allclose(reward_preference(q, obj, q.pi_ref), _brute_preference(q, q.pi_ref, 4), atol=1e-13)
    finally:
        variants.unregister("advantage", "sign")


def test_every_objective_field_is_documented():
    import dataclasses
    import re

    heads = set()
    for line in Objective.__doc__.splitlines():
        m = re.match(r"^    ([a-z_][a-z_0-9, ]*) :", line)
        if m:
            heads |= {h.strip() for h in m.group(1).split(",")}
    assert [f.name for f in dataclasses.fields(Objective) if f.name not in heads] == []


def test_an_entry_without_a_torch_form_says_so():
    bare = variants.AdvantageEstimator(name="toy_bare", description="no torch form", expectations=_sign_expectations,
                                       bound=lambda span, obj: 1.0)
    variants.register(bare)
    try:
        obj = Objective(beta=1.0, group_size=3, advantage="toy_bare")
        with pytest.raises(InvalidInputError, match="'toy_bare' has no torch_advantages"):
            obj.advantage_variant.hook("torch_advantages")
    finally:
        variants.unregister("advantage", "toy_bare")


def test_hook_of_a_name_that_is_no_hook_is_a_clear_error():
    """``hook`` of a misspelt or non-hook field names it and the entry's hooks (was Python's AttributeError, or an
    attempt to import the entry's name as a module)."""
    from grpo_theory import variants
    from grpo_theory.errors import InvalidInputError

    entry = variants.lookup("advantage", "group")
    for bad in ("nonexistent", "name", "description", 3):
        with pytest.raises(InvalidInputError, match=f"no hook {bad!r}; its hooks: expectations, bound"):
            entry.hook(bad)
    assert callable(entry.hook("expectations"))
    kl = variants.lookup("kl_estimator", "k3")
    with pytest.raises(InvalidInputError, match="KLEstimator has no hook 'expectations'; its hooks: value, slope"):
        kl.hook("expectations")
