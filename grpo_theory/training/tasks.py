"""Question-answer tasks with a finite answer set, and the synthetic corpus for the reference model.

A :class:`QATask` holds, per question, a prompt (token ids) and a reward for each
answer of a shared answer set (prefix-free token sequences, possibly of different lengths,
e.g. each closed by an end token). The policy of a
question is the model's distribution over that answer set (decoding restricted to
it, renormalised position by position): these are the outputs ``o`` of the theory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import float_array, integer
from ..errors import InvalidInputError
from ..problem import validate_answers


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
        validate_answers(self.answers, len(self.answers))      # non-empty, distinct, prefix-free
        if self.rewards.shape != (len(self.prompts), len(self.answers)):
            raise InvalidInputError(f"rewards must have shape (n_questions, n_answers) = "
                             f"({len(self.prompts)}, {len(self.answers)}), got {self.rewards.shape}")

    @property
    def n_questions(self) -> int:
        return len(self.prompts)

    @property
    def answer_length(self) -> int:
        """The longest answer's length in tokens (answers may differ in length)."""
        return max(len(a) for a in self.answers)

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(a) for a in self.answers])

    def subset(self, idx) -> QATask:
        """The task restricted to the questions ``idx``.

        Parameters
        ----------
        idx : sequence of int
            The questions kept, in that order.

        Returns
        -------
        QATask
            The same answer set and vocabulary; ``meta["subset"]`` records ``idx``.
        """
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

    Parameters
    ----------
    n_questions : int, default 12
        Questions.
    answer_length : {1, 2}, default 1
        Tokens per answer.
    seed : int, default 0
        Seed of the rewarded answers and their frequencies.
    p_range : (float, float), default (0.08, 0.92)
        The range the rewarded answer's frequency is spread over.
    """
    n_questions = integer("n_questions", n_questions, low=1)
    seed = integer("seed", seed, low=0)
    p_range = float_array("p_range", p_range, low=0.0, high=1.0, low_open=True, high_open=True)
    if p_range.shape != (2,):
        raise InvalidInputError(f"p_range must be two frequencies (low, high) in (0, 1), got {p_range.tolist()}")
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
        raise InvalidInputError(f"answer_length must be 1 or 2, got {answer_length!r}")
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


#: Padding in corpora of answers of different lengths (never predicted, never a model input that matters).
PAD = -1


def sample_corpus(task: QATask, freqs: np.ndarray, per_question: int, seed: int = 0) -> np.ndarray:
    """Token sequences ``prompt + answer``, answers drawn at the designed frequencies, padded with
    :data:`PAD` to the longest answer.

    Parameters
    ----------
    task : QATask
        The questions and their answer set.
    freqs : numpy.ndarray, shape (n_questions, n_answers)
        The frequency of each answer.
    per_question : int
        Sequences per question.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    numpy.ndarray of int
        One token sequence a row, ``n_questions * per_question`` rows.
    """
    rng = np.random.default_rng(seed)
    width = max(len(p) for p in task.prompts) + task.answer_length
    rows = []
    for q, prompt in enumerate(task.prompts):
        draws = rng.choice(len(task.answers), size=per_question, p=freqs[q])
        rows += [(list(prompt) + list(task.answers[k]) + [PAD] * width)[:width] for k in draws]
    return np.array(rows, dtype=np.int64)


#: Answer trees for the token-level study: answers closed by an end token "$", of different lengths.
TREE_SHAPES = {
    # reward depends on the second token; answers of 2 and 3 tokens
    "lengths": (("A", "$"), ("B", "X", "$"), ("B", "Y", "$")),
    # a deeper branch: 2, 3 and 4 tokens
    "deep": (("A", "$"), ("B", "X", "$"), ("B", "Y", "X", "$"), ("B", "Y", "Y", "$")),
    # a long branch beside short ones: 2, 3, 5 and 2 tokens
    "long": (("A", "$"), ("B", "X", "$"), ("B", "Y", "Y", "Y", "$"), ("C", "$")),
    # two tokens each, equal lengths (the loss types coincide here)
    "square": (("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")),
}


def synthetic_tree_task(shape: str = "lengths", n_questions: int = 8, seed: int = 0,
                        p_range: tuple = (0.1, 0.8)) -> tuple[QATask, np.ndarray]:
    """Questions ``Q_i ?`` over an answer tree of :data:`TREE_SHAPES`, one answer rewarded per question.

    The rewarded answer is one that shares its first token with another answer whenever the tree
    has one (so the reward depends on a later token), and its designed frequency is spread over
    ``p_range``. Returns the task and the designed frequencies ``(n_q, n_answers)``.
    """
    if shape not in TREE_SHAPES:
        raise InvalidInputError(f"shape must be one of {sorted(TREE_SHAPES)}, got {shape!r}")
    rng = np.random.default_rng(seed)
    words = TREE_SHAPES[shape]
    special = ["<bos>", "?"]
    qtok = [f"Q{i}" for i in range(n_questions)]
    ans_tok = list(dict.fromkeys(t for w in words for t in w))
    vocab = tuple(special + qtok + ans_tok)
    tid = {t: i for i, t in enumerate(vocab)}
    answers = tuple(tuple(tid[t] for t in w) for w in words)
    prompts = tuple((0, 2 + i, 1) for i in range(n_questions))
    n_ans = len(answers)
    shared = [k for k, w in enumerate(words) if sum(v[0] == w[0] for v in words) > 1]
    target = np.linspace(*p_range, n_questions)
    rng.shuffle(target)
    rewards = np.zeros((n_questions, n_ans))
    freqs = np.zeros((n_questions, n_ans))
    for i in range(n_questions):
        k = int(rng.choice(shared or list(range(n_ans))))
        rewards[i, k] = 1.0
        rest = rng.dirichlet(np.ones(n_ans - 1)) * (1 - target[i])
        freqs[i] = np.insert(rest, k, target[i])
    return QATask(f"synthetic-tree-{shape}", prompts, answers, rewards, vocab,
                  dict(seed=seed, shape=shape, designed_frequency=freqs.tolist())), freqs
