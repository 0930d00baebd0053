"""Question-answer tasks with a finite answer set, and the synthetic corpus for the reference model.

A :class:`QATask` holds, per question, a prompt (token ids) and a reward for each
answer of a shared answer set (token sequences of equal length). The policy of a
question is the model's distribution over that answer set (decoding restricted to
it, renormalised position by position): these are the outputs ``o`` of the theory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class QATask:
    """Prompts, the answer set and the reward table ``rewards[q, k]`` of answer ``k`` to question ``q``."""

    name: str
    prompts: tuple          # tuple of tuples of token ids, one per question
    answers: tuple          # tuple of equal-length tuples of token ids
    rewards: np.ndarray     # (n_questions, n_answers)
    vocab: tuple = ()       # token strings, for display
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        lens = {len(a) for a in self.answers}
        if len(lens) != 1:
            raise ValueError(f"answers must have equal length, got lengths {sorted(lens)}")
        if self.rewards.shape != (len(self.prompts), len(self.answers)):
            raise ValueError(f"rewards must have shape (n_questions, n_answers) = "
                             f"({len(self.prompts)}, {len(self.answers)}), got {self.rewards.shape}")

    @property
    def n_questions(self) -> int:
        return len(self.prompts)

    @property
    def answer_length(self) -> int:
        return len(self.answers[0])

    def subset(self, idx) -> QATask:
        idx = list(idx)
        return QATask(self.name, tuple(self.prompts[i] for i in idx), self.answers, self.rewards[idx],
                      self.vocab, dict(self.meta, subset=idx))


def synthetic_binary_task(n_questions: int = 12, answer_length: int = 1, seed: int = 0,
                          p_range: tuple = (0.08, 0.92)) -> tuple[QATask, np.ndarray]:
    """Binary questions ``Q_i ?`` whose rewarded answer is drawn per question.

    Single-token answers: ``A`` or ``B``. Two-token answers: ``(A|B)(X|Y)``, four
    sequences, rewarded only for one of them (so the two tokens matter jointly).
    Returns the task and the designed corpus frequency of each answer, ``(n_q, n_answers)``;
    the frequency of the rewarded answer is spread over ``p_range``.
    """
    rng = np.random.default_rng(seed)
    special = ["<bos>", "?"]
    qtok = [f"Q{i}" for i in range(n_questions)]
    if answer_length == 1:
        ans_tok = ["A", "B"]
        answers = ((len(special) + n_questions,), (len(special) + n_questions + 1,))
    elif answer_length == 2:
        ans_tok = ["A", "B", "X", "Y"]
        base = len(special) + n_questions
        a, b, x, y = base, base + 1, base + 2, base + 3
        answers = ((a, x), (a, y), (b, x), (b, y))
    else:
        raise ValueError(f"answer_length must be 1 or 2, got {answer_length!r}")
    vocab = tuple(special + qtok + ans_tok)
    prompts = tuple((0, 2 + i, 1) for i in range(n_questions))
    n_ans = len(answers)
    target = np.linspace(*p_range, n_questions)
    rng.shuffle(target)
    rewards = np.zeros((n_questions, n_ans))
    freqs = np.zeros((n_questions, n_ans))
    for i in range(n_questions):
        k = int(rng.integers(n_ans))                        # which answer is rewarded
        rewards[i, k] = 1.0
        rest = rng.dirichlet(np.ones(n_ans - 1)) * (1 - target[i])
        freqs[i] = np.insert(rest, k, target[i])
    task = QATask(f"synthetic-binary-L{answer_length}", prompts, answers, rewards, vocab,
                  dict(seed=seed, designed_frequency=freqs.tolist()))
    return task, freqs


def sample_corpus(task: QATask, freqs: np.ndarray, per_question: int, seed: int = 0) -> np.ndarray:
    """Token sequences ``prompt + answer``, answers drawn at the designed frequencies."""
    rng = np.random.default_rng(seed)
    rows = []
    for q, prompt in enumerate(task.prompts):
        draws = rng.choice(len(task.answers), size=per_question, p=freqs[q])
        rows += [list(prompt) + list(task.answers[k]) for k in draws]
    return np.array(rows, dtype=np.int64)
