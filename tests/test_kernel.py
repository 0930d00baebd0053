"""The measured kernel between prompts (grpo_theory.studies.kernel): symmetric PSD by construction,
scores equal to an independent computation of P(correct), and K_ij checked against the change of
prompt i's score after one real SGD step on prompt j (first order in lr, error O(lr^2))."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from grpo_theory.errors import InvalidInputError  # noqa: E402
from grpo_theory.studies.kernel import (  # noqa: E402
    free_generation_scores,
    gpt_scores,
    measure_kernel,
    trainable_parameters,
)


def _gpt(answer_length: int = 1, n: int = 6, seed: int = 0):
    from grpo_theory.training import GPTConfig, TinyGPT, synthetic_binary_task

    torch.manual_seed(seed)
    task, _ = synthetic_binary_task(n, answer_length, seed=seed)
    model = TinyGPT(GPTConfig(vocab_size=len(task.vocab), n_embd=32, n_layer=2, n_head=4)).double()
    with torch.no_grad():                       # spread the answer probabilities away from uniform
        for p in model.parameters():
            p.mul_(3.0)
    return model, task


def _step_change(model, score, j: int, n: int, lr: float) -> np.ndarray:
    """dz_i after one SGD step of size lr on the loss -z_j, taken by torch on a copy of the model."""
    m = copy.deepcopy(model)
    s = score(m)
    before = np.array([float(s(i).detach()) for i in range(n)])
    opt = torch.optim.SGD(trainable_parameters(m), lr=lr)
    opt.zero_grad()
    (-s(j)).backward()
    opt.step()
    return np.array([float(s(i).detach()) for i in range(n)]) - before


@pytest.mark.parametrize("answer_length", [1, 2])
def test_gpt_kernel_against_a_real_sgd_step(answer_length):
    model, task = _gpt(answer_length)
    n = task.n_questions
    kern = measure_kernel(gpt_scores(model, task), trainable_parameters(model), n)
    K = kern.K
    assert np.allclose(K, K.T, atol=0) and np.linalg.eigvalsh(K).min() > -1e-10 * np.abs(K).max()
    assert kern.n_params == sum(p.numel() for p in model.parameters())
    # the scores are logit P(correct), P from the trainer's own answer probabilities (an independent path)
    from grpo_theory.training.trainer import answer_probabilities

    probs = answer_probabilities(model, task)
    best = task.rewards == task.rewards.max(1, keepdims=True)
    p = (probs * best).sum(1)
    assert np.allclose(1 / (1 + np.exp(-kern.z)), p, atol=1e-6)
    # one SGD step of lr on -z_j moves z_i by lr K_ij + O(lr^2): halving lr quarters the error
    for j in (0, n - 1):
        errs = []
        for eps in (0.02, 0.01):                    # z_j moves by eps (first order); the O(eps^2) error
            # stays far above the policy's float32 rounding of the logits (~1e-7 relative)
            lr = eps / K[j, j]
            dz = _step_change(model, lambda m: gpt_scores(m, task), j, n, lr)
            errs.append(np.abs(dz - lr * K[:, j]).max())
            assert np.abs(dz - lr * K[:, j]).max() < 0.01 * lr * np.abs(K[:, j]).max()
        assert 3.0 < errs[0] / errs[1] < 5.0, errs


def test_logprob_kind_and_correlation_form():
    model, task = _gpt(1)
    n = task.n_questions
    lp = measure_kernel(gpt_scores(model, task, kind="logprob"), trainable_parameters(model), n, kind="logprob")
    lg = measure_kernel(gpt_scores(model, task), trainable_parameters(model), n)
    # logit = log P - log(1 - P): its gradient is grad log P / (1 - P), so K scales by 1/((1-P_i)(1-P_j))
    P = np.exp(lp.z)
    assert np.allclose(lg.K, lp.K / np.outer(1 - P, 1 - P), rtol=1e-5)     # the policy's logits are float32
    C = lg.normalised()
    assert np.allclose(np.diag(C), 1) and np.all(np.abs(C) <= 1 + 1e-12)


def test_bad_input():
    model, task = _gpt(1)
    with pytest.raises(InvalidInputError, match="kind"):
        gpt_scores(model, task, kind="prob")
    with pytest.raises(InvalidInputError, match="wrong one"):
        gpt_scores(model, task, correct=np.ones_like(task.rewards, dtype=bool))
    with pytest.raises(InvalidInputError, match="n_prompts"):
        measure_kernel(gpt_scores(model, task), [], task.n_questions)
    with pytest.raises(InvalidInputError, match="last-mlp"):
        free_generation_scores(model, [[1]], [[2]])


# ---------------------------------------------------------------- SmolLM2's architecture, tiny and random
def _tiny_llama():
    transformers = pytest.importorskip("transformers")
    from grpo_theory.training.smollm import FrozenTrunkLM

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   tie_word_embeddings=True)
    hf = transformers.LlamaForCausalLM(cfg).double().eval()
    return hf, FrozenTrunkLM(hf)


def test_free_generation_scores_on_a_tiny_llama():
    """A random 2-layer Llama (SmolLM2's architecture), last MLP trained: the score is the answer's
    log-probability by a plain full forward pass of the whole model (independent path), and K_ij
    matches one real SGD step of the last MLP."""
    hf, model = _tiny_llama()
    prompts = [[3, 7, 9, 11], [4, 7, 9, 12, 13], [5, 8, 9, 11], [6, 6, 2]]
    answers = [[20], [21, 22], [20, 23], [24]]
    n = len(prompts)
    score = free_generation_scores(model, prompts, answers)
    for i in range(n):
        ids = torch.tensor([prompts[i] + answers[i]])
        with torch.no_grad():
            lp = torch.log_softmax(hf(input_ids=ids).logits[0].double(), -1)
        L = len(prompts[i])
        want = sum(float(lp[L - 1 + t, a]) for t, a in enumerate(answers[i]))
        assert float(score(i)) == pytest.approx(want, abs=1e-9)
    params = trainable_parameters(model)
    assert {id(p) for p in params} == {id(p) for p in hf.model.layers[-1].mlp.parameters()}
    kern = measure_kernel(score, params, n, kind="logprob")
    assert np.linalg.eigvalsh(kern.K).min() > -1e-10 * np.abs(kern.K).max()
    lr = 1e-3 / kern.K[1, 1]
    m = copy.deepcopy(model)
    s = free_generation_scores(m, prompts, answers)
    before = np.array([float(s(i).detach()) for i in range(n)])
    opt = torch.optim.SGD(trainable_parameters(m), lr=lr)
    (-s(1)).backward()
    opt.step()
    dz = np.array([float(s(i).detach()) for i in range(n)]) - before
    assert np.abs(dz - lr * kern.K[:, 1]).max() < 0.01 * lr * np.abs(kern.K[:, 1]).max()


# ---------------------------------------------------------------- Adam's preconditioned kernel
def _adam_state(model, task, steps: int = 25, lr: float = 1e-3, betas=(0.0, 0.999)):
    """An Adam optimiser (torch's) with ``steps`` steps of state, taken on varying mixtures of the scores."""
    opt = torch.optim.Adam(trainable_parameters(model), lr=lr, betas=betas)
    s = gpt_scores(model, task)
    gen = np.random.default_rng(1)
    for _ in range(steps):
        w = gen.normal(size=task.n_questions)
        opt.zero_grad()
        sum(float(w[i]) * s(i) for i in range(task.n_questions)).backward()
        opt.step()
    return opt


def _adam_probe(model, opt, task, j: int, lr: float):
    """One real torch Adam step of size lr on -z_j, on copies of the model and the optimiser: (dz, P of the step)."""
    from grpo_theory.studies.kernel import adam_preconditioner

    n = task.n_questions
    m = copy.deepcopy(model)
    o = torch.optim.Adam(trainable_parameters(m), lr=lr, betas=opt.param_groups[0]["betas"])
    o.load_state_dict(copy.deepcopy(opt.state_dict()))      # load_state_dict shares the tensors
    for g in o.param_groups:
        g["lr"] = lr
    s = gpt_scores(m, task)
    before = np.array([float(s(i).detach()) for i in range(n)])
    o.zero_grad()
    (-s(j)).backward()
    o.step()
    dz = np.array([float(s(i).detach()) for i in range(n)]) - before
    return dz, adam_preconditioner(o, trainable_parameters(m))


def test_adam_kernel_against_a_real_adam_step():
    """With beta1 = 0 an Adam step on -z_j moves z_i by lr (G P G^T)_ij + O(lr^2), P = 1/(sqrt(v_hat) + eps)
    read from the optimiser's state after the step: the error quarters when lr halves. The plain-gradient
    kernel (P = I, rescaled to the same z_j move) is wrong at first order: its error halves with lr."""
    model, task = _gpt(1)
    n = task.n_questions
    opt = _adam_state(model, task)
    params = trainable_parameters(model)
    plain = measure_kernel(gpt_scores(model, task), params, n).K
    for j in (0, n - 1):
        dz0, P = _adam_probe(model, opt, task, j, 1e-6)
        KA = measure_kernel(gpt_scores(model, task), params, n, preconditioner=P)
        assert KA.preconditioned and np.linalg.eigvalsh(KA.K).min() > -1e-10 * np.abs(KA.K).max()
        errs, errs_plain = [], []
        for eps in (0.01, 0.005):                     # z_j moves by about eps; measured errors 1.2e-4 and 3e-5
            # (j = 0), the plain kernel's 2.4e-3 and 1.2e-3
            lr = eps / KA.K[j, j]
            dz, P_step = _adam_probe(model, opt, task, j, lr)
            assert np.allclose(P_step, P, rtol=1e-12)  # P does not depend on lr (the v update is lr-free)
            errs.append(np.abs(dz - lr * KA.K[:, j]).max())
            errs_plain.append(np.abs(dz - eps * plain[:, j] / plain[j, j]).max())
            assert errs[-1] < 0.02 * eps
        assert 3.0 < errs[0] / errs[1] < 5.0, errs
        assert 1.6 < errs_plain[0] / errs_plain[1] < 2.4 and errs_plain[1] > 5 * errs[1], (errs_plain, errs)


def test_adam_preconditioner_formula_and_bad_input():
    """P against torch's own update with beta1 = 0 (the change of the weights over -lr g, componentwise),
    amsgrad's max state, and the refusals."""
    from grpo_theory.studies.kernel import adam_preconditioner

    model, task = _gpt(1)
    params = trainable_parameters(model)
    with pytest.raises(InvalidInputError, match="no Adam state"):
        adam_preconditioner(torch.optim.Adam(params, lr=1e-3), params)
    with pytest.raises(InvalidInputError, match="no Adam state"):
        opt = torch.optim.SGD(params, lr=1e-3)
        (-gpt_scores(model, task)(0)).backward()
        opt.step()
        adam_preconditioner(opt, params)
    with pytest.raises(InvalidInputError, match="at least one"):
        adam_preconditioner(torch.optim.Adam(params, lr=1e-3), [])
    with pytest.raises(InvalidInputError, match="different learning rates"):
        adam_preconditioner(torch.optim.Adam([{"params": params[:1], "lr": 1e-3}, {"params": params[1:], "lr": 2e-3}]),
                            params)
    with pytest.raises(InvalidInputError, match="preconditioner must hold"):
        measure_kernel(gpt_scores(model, task), params, task.n_questions, preconditioner=np.ones(3))
    n_params = sum(p.numel() for p in params)
    with pytest.raises(InvalidInputError, match="preconditioner must hold"):
        measure_kernel(gpt_scores(model, task), params, task.n_questions, preconditioner=-np.ones(n_params))
    for amsgrad in (False, True):
        m = copy.deepcopy(model)
        ps = trainable_parameters(m)
        o = torch.optim.Adam(ps, lr=1e-3, betas=(0.0, 0.99), eps=1e-6, amsgrad=amsgrad)
        s = gpt_scores(m, task)
        for k in range(4):                            # gradients of shrinking size: amsgrad's max differs
            o.zero_grad()
            (-(0.5 ** k) * s(k % task.n_questions)).backward()
            before = torch.cat([p.detach().reshape(-1).clone() for p in ps])
            grad = torch.cat([p.grad.reshape(-1).double() for p in ps])
            o.step()
        after = torch.cat([p.detach().reshape(-1) for p in ps])
        P = adam_preconditioner(o, ps)
        moved = grad.abs() > 1e-8
        want = ((before - after).double() / (1e-3 * grad))[moved].numpy()
        assert np.allclose(P[moved.numpy()], want, rtol=1e-6)
        assert np.all(P > 0) and np.all(P <= 1 / 1e-6 + 1e-6)
