"""The free-generation study's machinery (issue 23) on a tiny stub model: screening, resumability,
the baselines, the clock and the CSV schema. The real SmolLM2 run is experiments/smollm2_free_generation.py."""

from __future__ import annotations

import zlib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from grpo_theory import InvalidInputError, Objective, closed_form  # noqa: E402
from grpo_theory.studies import free, free_backend  # noqa: E402


class StubLM:
    """A tabular softmax policy per prompt over three one-token answers: the right one and two wrong ones.

    The reference P(correct) of a question is ``p_of(question)``; the trainable part is the (P, 3) logits.
    """

    def __init__(self, questions, answers, p_of, fail_at=None):
        self.questions = list(questions)
        self.answers = list(answers)
        p = np.array([p_of(q) for q in self.questions])
        self.ref = torch.log(torch.tensor(np.stack([p, (1 - p) / 2, (1 - p) / 2], 1), dtype=torch.float32))
        self.theta = torch.nn.Parameter(self.ref.clone())
        self.calls = 0
        self.fail_at = fail_at          # raise on this sample() call: a simulated crash

    @property
    def prompts(self):
        return self.questions

    def sample(self, q, n, generator):
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise RuntimeError("simulated crash")
        with torch.no_grad():
            idx = torch.multinomial(torch.softmax(self.theta[q], -1), n, replacement=True, generator=generator)
        words = [self.answers[q], "wrong", "Wrong."]
        return SimpleNamespace(tokens=idx[:, None], q=q, text=[words[i] for i in idx.tolist()])

    def logp(self, comps, reference=False):
        logits = self.ref if reference else self.theta
        lp = torch.stack([torch.log_softmax(logits[c.q], -1)[c.tokens] for c in comps])   # (P, n, 1)
        return lp, torch.ones_like(lp)

    def parameters(self):
        return [self.theta]

    def state_dict(self):
        return {"theta": self.theta.detach().clone()}

    def load_state_dict(self, state):
        with torch.no_grad():
            self.theta.copy_(state["theta"])

    def reset(self):
        with torch.no_grad():
            self.theta.copy_(self.ref)


def _p_spread(q):
    """A fixed P_ref(correct) per question, spread over (0.01, 0.97) by a hash of its text."""
    return 0.01 + 0.96 * (zlib.crc32(q.encode()) % 1000) / 999


SPEC = dict(group_size=8, learning_rate=0.05, min_steps=20, max_steps=40, check_every=10, eval_steps=(5, 10),
            n_mid=40, n_eval=60, checkpoint_every=5)


def test_pool_and_verifier():
    pool = free.candidate_pool()
    assert len(pool) == 136 and len({c[1] for c in pool}) == 136
    assert all(a in ("Yes", "No") for _, _, a in pool[:40])
    for label, _q, a in pool[76:]:
        assert 0 <= int(a) <= 99 and eval(label) == int(a)       # the arithmetic answers are right
    assert free.normalise("  Paris. ") == "paris" and free.normalise("12\n####") == "12"
    assert free.normalise("No, the sun") == "no" and free.normalise('"Yes"') == "yes" and free.normalise("") == ""
    assert free.normalise("The capital of France") != free.normalise("Paris")
    assert free.normalise("12.5") != free.normalise("12")


def test_select_prompts_spreads_in_logit_and_refuses_a_thin_pool():
    rng = np.random.default_rng(0)
    k = rng.integers(0, 33, size=200)
    keep = free.select_prompts(k, 32, 24)
    p = (k[keep] + 0.5) / 33
    assert len(set(keep.tolist())) == 24 and np.all(np.diff(p) >= 0)
    assert p[0] <= 0.08 and p[-1] >= 0.85                    # the ends of [0.05, 0.9] are reached
    assert np.all((p > 0.01) & (p < 0.97))
    with pytest.raises(InvalidInputError, match="only 3 of 5 candidates"):
        free.select_prompts([0, 0, 10, 16, 20], 32, 4)
    with pytest.raises(InvalidInputError, match="correct <= n"):
        free.select_prompts([40], 32, 1)


def test_choose_betas_against_the_g2_closed_form():
    """G = 2: x(p) is Eq. 14's closed form; the chosen pair is the brute-force best over pairs."""
    p = np.array([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9])
    cands = (0.25, 0.5, 1.0, 2.0, 4.0)
    (a, b), frac = free.choose_betas(p, candidates=cands, group_size=2)
    x = {c: np.array([closed_form.binary_pairwise(v, c) for v in p]) for c in cands}
    fracs = {(u, v): np.mean(np.abs(x[u] - x[v]) >= 0.2) for i, u in enumerate(cands) for v in cands[i + 1:]}
    best = max(fracs.values())
    assert frac == pytest.approx(best) and fracs[(a, b)] == pytest.approx(best)
    assert a == max(u for (u, _), f in fracs.items() if f == best)


def _job(tmp_path, name, fail_at=None, stop_after=None, spec=SPEC):
    qs = ["q0", "q1", "q2"]
    lm = StubLM(qs, ["7", "Paris", "3"], {"q0": 0.1, "q1": 0.4, "q2": 0.8}.get, fail_at=fail_at)
    return lm, free.run_job(lm, free.JobSpec(beta=0.5, seed=3, **spec), tmp_path / name, answers=lm.answers,
                            stop_after=stop_after)


def test_run_job_resumes_exactly_after_a_stop_and_after_a_crash(tmp_path):
    _, whole = _job(tmp_path, "whole")
    # stopped twice by stop_after, then finished: the same samples as the uninterrupted job
    assert _job(tmp_path, "stopped", stop_after=7)[1] is None
    assert _job(tmp_path, "stopped", stop_after=9)[1] is None
    lm, resumed = _job(tmp_path, "stopped")
    pd.testing.assert_frame_equal(whole.drop(columns="cpu_seconds"), resumed.drop(columns="cpu_seconds"))
    # a crash inside step 13's sampling (3 prompts a step, 2 eval passes of 3 at steps 5 and 10): resume from step 10
    with pytest.raises(RuntimeError, match="simulated crash"):
        _job(tmp_path, "crashed", fail_at=12 * 3 + 6 + 2)
    hist = pd.read_csv(tmp_path / "whole" / "history.csv")
    st = torch.load(tmp_path / "crashed" / "state.pt", weights_only=False)
    assert st["step"] == 10 and len(st["history"]) == 10
    _, after = _job(tmp_path, "crashed")
    pd.testing.assert_frame_equal(whole.drop(columns="cpu_seconds"), after.drop(columns="cpu_seconds"))
    pd.testing.assert_frame_equal(hist, pd.read_csv(tmp_path / "crashed" / "history.csv"))
    # a finished job is read back, not rerun
    lm, again = _job(tmp_path, "whole")
    assert lm.calls == 0
    assert set(whole.kind) == {"intermediate", "final"} and sorted(set(whole.step)) == [5, 10, whole.steps_run[0]]
    assert (whole[whole.kind == "final"].measured_n == 60).all()


def test_cpu_seconds_count_each_second_once_across_checkpoints_and_resumes(tmp_path, monkeypatch):
    # a CPU clock that advances one second a reading: the job's total must be the seconds it read, in
    # one call or stopped and resumed, however many checkpoints (the old total re-added the call's whole
    # time at every checkpoint)
    read = []

    def clock():
        read.append(len(read))
        return float(read[-1])
    monkeypatch.setattr(free.time, "process_time", clock)
    _, whole = _job(tmp_path, "whole")
    assert whole.cpu_seconds.iloc[0] == len(read) - 1
    read.clear()
    assert _job(tmp_path, "parts", stop_after=7)[1] is None
    first = len(read) - 1                      # this call's seconds: from its first reading to its last
    read.clear()
    _, parts = _job(tmp_path, "parts")
    assert parts.cpu_seconds.iloc[0] == first + len(read) - 1


def test_run_job_refuses_a_folder_with_other_settings(tmp_path):
    _job(tmp_path, "j", stop_after=2)
    with pytest.raises(InvalidInputError, match="learning_rate"):
        _job(tmp_path, "j", spec=dict(SPEC, learning_rate=0.01))


def _history(rng, p_of_step, n_prompts, group_size=8, steps=300):
    out = []
    for s in range(1, steps + 1):
        row = {f"p_best_q{i}": rng.binomial(group_size, p_of_step(i, s)) / group_size for i in range(n_prompts)}
        out.append(dict(step=s, reward=float(np.mean(list(row.values()))), **row))
    return out


def test_flatness_check_on_the_logged_reward():
    """24 prompts, G = 8 as in the study: a plateau is flat; a rise of 0.2 over the tail (0.8 over the
    run) is not, judged on the mean reward. (One prompt alone, 8 samples a step, has too little power:
    a drift of 0.15 over its 75-step tail passes, which the module docstring states.)"""
    rng = np.random.default_rng(1)
    flat = _history(rng, lambda i, s: 0.05 + 0.9 * i / 23, 24)
    assert free.is_flat(flat, 24, 8)[0]
    rising = _history(rng, lambda i, s: 0.1 + 0.8 * s / 300, 24)
    ok, rep, mean_status = free.is_flat(rising, 24, 8)
    assert not ok and mean_status == "moving"


def test_fit_shift_and_clock_recover_what_generated_the_data():
    from grpo_theory.predict import flow_table

    p = np.array([0.05, 0.1, 0.3, 0.5, 0.8])
    m = 1 / (1 + np.exp(-(np.log(p / (1 - p)) + 0.7)))
    assert free.fit_shift(p, m) == pytest.approx(0.7, abs=1e-5)
    obj = Objective(beta=1.0, group_size=4)
    table = flow_table(p, obj, t_max=50.0)
    steps = np.repeat([10.0, 40.0], p.size)
    pp = np.tile(p, 2)
    meas = np.concatenate([table.at(p, 0.03 * 10), table.at(p, 0.03 * 40)])
    assert free.fit_clock_lsq(table, pp, steps, meas) == pytest.approx(0.03, rel=1e-3)


def _measured(rng, betas=(0.5, 2.0), seeds=(0, 1), n_prompts=6):
    rows = []
    for b in betas:
        for s in seeds:
            for q in range(n_prompts):
                rows += [dict(seed=s, beta=b, prompt=q, measured=rng.uniform(), measured_n=200, step=st,
                              kind="intermediate") for st in (10, 20)]
                rows.append(dict(seed=s, beta=b, prompt=q, measured=rng.uniform(), measured_n=400, step=90,
                                 kind="final", conv_status="converged"))
    return pd.DataFrame(rows)


def test_assemble_scores_each_half_with_the_other_halfs_fit():
    rng = np.random.default_rng(2)
    prompts = pd.DataFrame(dict(prompt=range(6), label=list("abcdef"), answer=list("123456"),
                                p_ref=[0.3, 0.05, 0.6, 0.2, 0.9, 0.1], p_ref_n=400))
    meas = _measured(rng)
    t = free.assemble(meas, prompts, group_size=2, t_max=50.0)
    assert list(t.columns[:9]) == list(free.COLUMNS)
    assert len(t) == len(meas) and t[list(free.COLUMNS)].notna().all().all()
    # halves alternate in order of p_ref
    order = prompts.sort_values("p_ref").prompt.tolist()
    assert [t[t.prompt == q].half.iloc[0] for q in order] == list("ABABAB")
    fin = t[t.kind == "final"]
    want = [closed_form.binary_pairwise(p, b) for p, b in zip(fin.p_ref, fin.beta)]
    assert np.allclose(fin.predicted, want, atol=1e-6)
    assert np.allclose(t.identity, t.p_ref)
    # changing half A's measurements moves half B's shift and clock, never half A's own
    meas2 = meas.copy()
    a_prompts = [q for q in order[0::2]]
    sel = meas2.prompt.isin(a_prompts)
    meas2.loc[sel, "measured"] = 1 - meas2.loc[sel, "measured"]
    t2 = free.assemble(meas2, prompts, group_size=2, t_max=50.0)
    a = t.prompt.isin(a_prompts)
    for col in ("shift", "clock"):
        assert np.allclose(t.loc[a, col].fillna(-1), t2.loc[a, col].fillna(-1))
        assert not np.allclose(t.loc[~a, col].fillna(-1), t2.loc[~a, col].fillna(-1))
    # the shift is refitted at each step: half A's step-10 values move half B's step-10 shift only
    meas3 = meas.copy()
    sel = meas3.prompt.isin(a_prompts) & (meas3.step == 10)
    meas3.loc[sel, "measured"] = 1 - meas3.loc[sel, "measured"]
    t3 = free.assemble(meas3, prompts, group_size=2, t_max=50.0)
    b10 = ~a & (t.step == 10)
    assert not np.allclose(t.loc[b10, "shift"], t3.loc[b10, "shift"])
    assert np.allclose(t.loc[~b10, "shift"], t3.loc[~b10, "shift"])
    mid = t[t.kind == "intermediate"]
    assert mid.clock.notna().all() and mid.predicted.between(0, 1).all()
    s = free.score(t)
    assert set(s.kind) == {"final", "intermediate"} and len(s[s.kind == "final"]) == 4
    row = s[(s.kind == "final") & (s.beta == 0.5) & (s.seed == 0)].iloc[0]
    g = fin[(fin.beta == 0.5) & (fin.seed == 0)]
    assert row.mae_theory == pytest.approx(np.mean(np.abs(g.predicted - g.measured)))
    assert row.mae_shift == pytest.approx(np.mean(np.abs(g["shift"] - g.measured)))


def test_assemble_refuses_measurements_without_p_ref():
    prompts = pd.DataFrame(dict(prompt=[0], label=["a"], answer=["1"], p_ref=[0.3], p_ref_n=[400]))
    meas = pd.DataFrame(dict(seed=[0], beta=[0.5], prompt=[1], measured=[0.5], measured_n=[200], step=[9],
                             kind=["final"]))
    with pytest.raises(InvalidInputError, match=r"without p_ref: \[1\]"):
        free.assemble(meas, prompts)


def test_study_end_to_end_on_the_stub_screens_fresh_and_resumes(tmp_path):
    """Every candidate has P_ref(correct) = 0.3: screening keeps the lucky and the unlucky (a spread of
    screened values), but the fresh estimate of the kept prompts is unbiased."""
    made = []

    def factory(questions):
        lm = StubLM(questions, [dict((c[1], c[2]) for c in free.candidate_pool())[q] for q in questions],
                    lambda q: 0.3)
        made.append(lm)
        return lm

    kw = dict(seeds=(0,), betas=(0.5, 2.0), n_prompts=8, n_screen=16, n_ref=400, spec=SPEC, progress=False,
              backend_factory=factory, t_max=50.0)
    t, s = free.run_free_study(tmp_path, stop_after=3, **kw)
    assert t.empty and s.empty and (tmp_path / "beta0.5_seed0" / "state.pt").exists()
    t, s = free.run_free_study(tmp_path, **kw)
    prompts = pd.read_csv(tmp_path / "prompts.csv")
    assert prompts.screened.max() - prompts.screened.min() > 0.3                 # selection by screening noise
    se = np.sqrt(0.3 * 0.7 / (400 * 8))
    assert abs(prompts.p_ref.mean() - 0.3) < 4 * se                              # ... not in the fresh p_ref
    assert list(t.columns[:9]) == list(free.COLUMNS) and set(t.beta) == {0.5, 2.0}
    assert (t[t.kind == "final"].measured_n == 60).all() and (t.p_ref_n == 400).all()
    assert set(s.columns) >= {"mae_theory", "mae_identity", "mae_shift", "meets_target", "beats_baselines"}
    n_made = len(made)
    t2, _ = free.run_free_study(tmp_path, **kw)               # all stages are on disk: nothing is sampled
    assert sum(lm.calls for lm in made[n_made:]) == 0
    pd.testing.assert_frame_equal(t, t2)


def test_more_samples_are_pooled_after_training_and_kept_apart(tmp_path):
    """n_more: further samples for p_ref (from the untrained policy) and for each final measurement (from
    the job's final policy), pooled by adding counts; the first estimates stay in their own columns; a
    rerun samples nothing, and another n_more for the same folder is refused."""
    made = []

    def factory(questions):
        lm = StubLM(questions, [dict((c[1], c[2]) for c in free.candidate_pool())[q] for q in questions], _p_spread)
        made.append(lm)
        return lm

    kw = dict(seeds=(0,), betas=(0.5, 2.0), n_prompts=8, n_screen=16, n_ref=100, spec=SPEC, progress=False,
              backend_factory=factory, t_max=50.0)
    t0, _ = free.run_free_study(tmp_path, **kw)
    t, s = free.run_free_study(tmp_path, n_more=300, **kw)
    ref = pd.read_csv(tmp_path / "p_ref_more.csv")
    prompts = pd.read_csv(tmp_path / "prompts.csv")
    pooled = (prompts.correct + ref.correct_more) / 400
    got = t.drop_duplicates("prompt").set_index("prompt")
    assert np.allclose(got.p_ref.loc[prompts.prompt], pooled) and (t.p_ref_n == 400).all()
    assert np.allclose(got.p_ref_first.loc[prompts.prompt], prompts.p_ref)
    for b in (0.5, 2.0):
        more = pd.read_csv(tmp_path / f"beta{b:g}_seed0" / "final_more.csv").set_index("prompt")
        f0 = t0[(t0.kind == "final") & (t0.beta == b)].set_index("prompt").sort_index()
        f = t[(t.kind == "final") & (t.beta == b)].set_index("prompt").sort_index()
        assert np.allclose(f.measured, (f0.measured * 60 + more.correct_more) / 360) and (f.measured_n == 360).all()
        assert np.allclose(f.measured_first, f0.measured) and (f.measured_n_first == 60).all()
        # the final policy is sampled, not the reference: its extra samples lie near its first 60, far
        # from p_ref
        near, far = np.abs(more.correct_more / 300 - f.measured_first), np.abs(more.correct_more / 300 - f.p_ref_first)
        assert near.mean() < 0.5 * far.mean()
    mid = t[t.kind == "intermediate"]
    assert np.allclose(mid.measured, mid.measured_first)              # intermediate steps are not re-sampled
    assert set(s.kind) == {"final", "intermediate"}
    n_made = len(made)
    t2, _ = free.run_free_study(tmp_path, n_more=300, **kw)
    assert sum(lm.calls for lm in made[n_made:]) == 0
    pd.testing.assert_frame_equal(t, t2)
    with pytest.raises(InvalidInputError, match="300 more samples a prompt, not 200"):
        free.run_free_study(tmp_path, n_more=200, **kw)


def test_cost_model_adds_the_stages():
    c = free.cost_model(cpu_per_sample=0.01, cpu_per_step_per_prompt=0.1, n_pool=10, n_screen=10, n_prompts=2,
                        n_ref=100, jobs=2, steps=5, eval_steps=1, n_mid=10, n_eval=20)
    assert c == pytest.approx(dict(screen=1.0, p_ref=2.0, training=2.0, evaluation=1.2, total=6.2, jobs=2))


def test_every_backend_on_one_model_keeps_the_untrained_reference():
    # a worker process trains job after job on its one SmolLM2: the second job's reference (and its
    # reset) must be the pretrained MLP, not the first job's trained one (the bug: a copy per backend)
    from types import SimpleNamespace

    layer = SimpleNamespace(mlp=torch.nn.Linear(3, 3))
    model = torch.nn.Module()
    model.hf = SimpleNamespace(model=SimpleNamespace(layers=[layer]))
    pretrained = {k: v.clone() for k, v in layer.mlp.state_dict().items()}
    first = free_backend.reference_mlp(model)
    with torch.no_grad():
        layer.mlp.weight.add_(1.0)                             # the first job trains
    second = free_backend.reference_mlp(model)
    assert second is first and not second.weight.requires_grad
    for k, v in second.state_dict().items():
        assert torch.equal(v, pretrained[k])
    assert not list(model.parameters())                        # not registered as a submodule


def test_the_greeting_pool_runs_in_its_own_folder_and_range(tmp_path):
    """pool="greetings" screens greeting_pool and keeps prompts inside p_range; a folder screened on
    another pool, or an unknown pool, is a clear error naming it."""
    pool = free.greeting_pool()
    assert len(pool) == len({c[1] for c in pool}) == 30

    def factory(questions):
        answers = dict((c[1], c[2]) for c in pool + free.candidate_pool())
        return StubLM(questions, [answers[q] for q in questions], _p_spread)

    kw = dict(seeds=(0,), betas=(0.5, 2.0), n_prompts=4, n_screen=32, n_ref=100, spec=SPEC, progress=False,
              backend_factory=factory, t_max=50.0)
    free.run_free_study(tmp_path / "g", pool="greetings", p_range=(0.45, 0.95), stop_after=1, **kw)
    prompts = pd.read_csv(tmp_path / "g" / "prompts.csv")
    assert set(prompts.question) <= {c[1] for c in pool}
    assert prompts.screened.min() > 0.3                          # inside the range widened by a standard error
    with pytest.raises(InvalidInputError, match="screened another pool"):
        free.run_free_study(tmp_path / "g", pool="main", stop_after=1, **kw)
    with pytest.raises(InvalidInputError, match="pool must be one of"):
        free.run_free_study(tmp_path / "h", pool="jokes", **kw)
