"""SmolLM2-135M-Instruct (slow: needs the 98 MB GGUF from `grpo-theory fetch-model`).

The frozen-trunk policy against the full model's own forward pass, the free-generation log-probs
against a fresh forward over the sampled text, and a small theory-vs-training case that must meet
the study's target (MAE <= 0.02, max <= 0.05).
"""

import copy
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gguf", reason="SmolLM2 loads from GGUF: pip install -e '.[train]'")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm():
    from grpo_theory.training.smollm import GGUF_NAME, fetch_model, load_smollm2

    torch.set_num_threads(1)
    model_dir = Path("models/smollm2")
    if not (model_dir / GGUF_NAME).exists():
        fetch_model(model_dir)
    return load_smollm2(model_dir)


def test_frozen_trunk_gives_the_full_models_logits(smollm):
    from grpo_theory.training.smollm import FrozenTrunkLM, arithmetic_task

    model, tok = smollm
    task = arithmetic_task(tok, 3)
    ids = torch.tensor([list(task.prompts[0]) + [task.answers[5][0]], list(task.prompts[1]) + [task.answers[9][0]]])
    with torch.no_grad():
        full = model.hf(input_ids=ids).logits[:, -1]
        for trainable in ("last-mlp", "top-2"):
            f = FrozenTrunkLM(copy.deepcopy(model.hf), trainable)
            for _ in range(2):                                    # computed, then from the trunk cache
                np.testing.assert_allclose(f(ids)[:, 0].numpy(), full.numpy(), atol=2e-3)
            toks = sorted({t for a in task.answers for t in a})
            restricted = torch.log_softmax(f.restrict_vocab(toks)(ids)[:, 0, toks], -1)
            np.testing.assert_allclose(restricted.numpy(), torch.log_softmax(full[:, toks], -1).numpy(), atol=1e-4)
    n_train = sum(p.numel() for p in FrozenTrunkLM(copy.deepcopy(model.hf)).parameters() if p.requires_grad)
    assert n_train == 3 * 576 * 1536                              # the last MLP's three matrices


def test_free_generation_logprobs_match_a_fresh_forward(smollm):
    from grpo_theory.training.free_generation import FreeSampler, token_logp
    from grpo_theory.training.smollm import FrozenTrunkLM, chat_prompt

    model, tok = smollm
    f = FrozenTrunkLM(copy.deepcopy(model.hf))
    with torch.no_grad():
        for p in f.hf.model.layers[-1].mlp.parameters():            # a policy away from the reference
            p.add_(0.02 * torch.randn_like(p))
    prompt = chat_prompt(tok, "What is 3+4? Answer with the number only.")
    c = FreeSampler(f, tok, [prompt], max_new_tokens=5).sample(0, 4, torch.Generator().manual_seed(0))
    with torch.no_grad():
        lp = token_logp(f, None, c.h0, c.tokens)
        for row in range(4):
            seq = torch.tensor([list(prompt) + c.tokens[row].tolist()])
            ref = torch.log_softmax(f.hf(input_ids=seq).logits[0, len(prompt) - 1:-1].float(), -1)
            want = ref.gather(-1, c.tokens[row][:, None])[:, 0]
            m = c.mask[row].bool()
            np.testing.assert_allclose(lp[row][m].numpy(), want[m].numpy(), atol=2e-3)


def test_smollm2_training_meets_the_target_on_a_small_case(smollm, tmp_path):
    """4 yes/no prompts, G = 8, beta = 0.5, reverse: the trained last MLP lands on the prediction."""
    from grpo_theory import Objective
    from grpo_theory.studies.predictions import predict_task, rewarded
    from grpo_theory.training.smollm import FrozenTrunkLM, yes_no_task
    from grpo_theory.training.trainer import GRPOConfig, GRPOTrainer, answer_probabilities

    model, tok = smollm
    task = yes_no_task(tok, 4)
    ref = FrozenTrunkLM(copy.deepcopy(model.hf)).restrict_vocab({t for a in task.answers for t in a})
    ref_probs = answer_probabilities(ref, task)
    cfg = GRPOConfig(objective=Objective(group_size=8, beta=0.5, penalty="reverse"), steps=200, learning_rate=1e-3,
                     groups_per_question=8, seed=0, checkpoint_every=100)
    res = GRPOTrainer(copy.deepcopy(ref), task, cfg, reference=ref, run_dir=tmp_path, progress=False).train()
    pred = rewarded(task, predict_task(task, ref_probs, cfg.objective))
    err = np.abs(rewarded(task, res.measured) - pred)
    assert np.ptp(rewarded(task, ref_probs)) > 0.3                 # the prompts' pi_ref are spread out
    assert err.mean() <= 0.02 and err.max() <= 0.05, (pred, rewarded(task, res.measured))
    assert (tmp_path / "checkpoint.pt").stat().st_size < 60e6       # the trainable part only, not 1.6 GB
