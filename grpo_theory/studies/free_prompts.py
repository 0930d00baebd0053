"""The prompts and betas for the free-generation study (:mod:`grpo_theory.studies.free`).

The candidate pool (yes/no, factual and arithmetic questions in SmolLM2's chat template), the
verifier's normalisation of a completion's first word, the screening count, the selection of prompts
spread evenly in ``logit p`` over :data:`P_RANGE`, and the choice of the two betas from the fresh
``p_ref`` alone (:func:`choose_betas`).
"""

from __future__ import annotations

import numpy as np
import torch
from tqdm.auto import tqdm

from .._checks import POSITIVE_COUNT, arr, checked, num, span, text
from .._numerics import logit
from ..errors import InvalidInputError
from ..problem import Objective
from ..training.smollm import YES_NO_QUESTIONS
from .predictions import stationary_x

__all__ = ["candidate_pool", "greeting_pool", "POOLS", "normalise", "select_prompts", "choose_betas", "count_correct",
           "P_RANGE", "BETA_CANDIDATES", "MIN_DIFF"]

#: The P(correct) range the kept prompts spread over (issue 23).
P_RANGE = (0.05, 0.9)
#: Candidate betas for :func:`choose_betas` and the smallest difference of predictions that counts.
BETA_CANDIDATES = (0.5, 1.0, 2.0, 4.0)
MIN_DIFF = 0.2

_FACTS = (
    ("What is the capital of France?", "Paris"), ("What is the capital of Japan?", "Tokyo"),
    ("What is the capital of Italy?", "Rome"), ("What is the capital of Germany?", "Berlin"),
    ("What is the capital of Spain?", "Madrid"), ("What is the capital of Egypt?", "Cairo"),
    ("What is the capital of Russia?", "Moscow"), ("What is the capital of Canada?", "Ottawa"),
    ("What is the capital of Australia?", "Canberra"), ("What is the capital of China?", "Beijing"),
    ("What is the capital of Greece?", "Athens"), ("What is the capital of Portugal?", "Lisbon"),
    ("What color is the sky on a clear day?", "Blue"), ("What color is grass?", "Green"),
    ("What color is snow?", "White"), ("What color is a ripe banana?", "Yellow"),
    ("What color is blood?", "Red"), ("What color is coal?", "Black"),
    ("What is frozen water called?", "Ice"), ("Which planet is known as the Red Planet?", "Mars"),
    ("What is the largest ocean on Earth?", "Pacific"), ("What animal says moo?", "Cow"),
    ("What animal barks?", "Dog"), ("What is the opposite of hot?", "Cold"),
    ("What is the opposite of up?", "Down"), ("What is the opposite of yes?", "No"),
    ("What is the first letter of the alphabet?", "A"), ("What is the last letter of the alphabet?", "Z"),
    ("What day comes after Monday?", "Tuesday"), ("What month comes after January?", "February"),
    ("How many legs does a spider have?", "8"), ("How many days are in a week?", "7"),
    ("How many months are in a year?", "12"), ("How many hours are in a day?", "24"),
    ("How many sides does a triangle have?", "3"), ("How many legs does a dog have?", "4"),
    ("Is the sun hot? Answer Yes or No.", "Yes"), ("Is ice hot? Answer Yes or No.", "No"),
    ("Can fish swim? Answer Yes or No.", "Yes"), ("Do cats bark? Answer Yes or No.", "No"),
)


#: The restricted study's yes/no questions but "Do cats bark?" (the screened pool never held it, and
#: its 136 items keep their order), then 25 more.
_YES_NO = tuple(qa for qa in YES_NO_QUESTIONS if qa[0] != "Do cats bark?") + (
    ("Do birds have feathers?", "Yes"),
    ("Is the Earth flat?", "No"), ("Do fish have wings?", "No"), ("Is 2 smaller than 5?", "Yes"),
    ("Is a cat a reptile?", "No"), ("Is the Pacific an ocean?", "Yes"), ("Can elephants fly?", "No"),
    ("Is 9 an odd number?", "Yes"), ("Is fire cold?", "No"), ("Do cows give milk?", "Yes"),
    ("Is London in Spain?", "No"), ("Is a whale a fish?", "No"), ("Is grass green?", "Yes"),
    ("Does the sun rise in the east?", "Yes"), ("Is 100 less than 10?", "No"), ("Can dogs read books?", "No"),
    ("Is Tokyo in Japan?", "Yes"), ("Is a tomato a vegetable in botany?", "No"), ("Do spiders have six legs?", "No"),
    ("Is Mars a planet?", "Yes"), ("Is the sky green on a clear day?", "No"), ("Is 3 times 3 equal to 9?", "Yes"),
    ("Is 5 plus 5 equal to 11?", "No"), ("Do trees have roots?", "Yes"), ("Is a square round?", "No"),
)
#: The user turn's instruction for each kind of answer.
_ASK = {"yes/no": " Answer Yes or No.", "number": " Answer with the number only.", "word": " Answer with one word."}


def candidate_pool() -> list[tuple[str, str, str]]:
    """The candidate prompts, as ``(label, question, answer)``: 40 yes/no questions, 36 short factual
    questions and 60 sums, differences and products of small numbers (answers 0-99).

    A pilot run found SmolLM2-135M-Instruct rarely *starts* its answer to a factual or an
    arithmetic question with the word or the number (it starts "The capital of France ..."), while a
    yes/no question's first word is "Yes" or "No" often, in proportions that vary by question: the
    yes/no questions are what spreads P(correct) over [0.05, 0.9]; the others are kept in the pool
    for the screening to judge.

    Returns
    -------
    list of tuple of str
        The question is the user turn; the answer is what the verifier accepts (:func:`normalise`).

    Examples
    --------
    >>> pool = candidate_pool()
    >>> len(pool), pool[76]
    (136, ('2+3', 'What is 2+3? Answer with the number only.', '5'))
    """
    out = [(q, q + _ASK["yes/no"], a) for q, a in _YES_NO]
    out += [(q, q if q.endswith("or No.") else q + _ASK["number" if a.isdigit() else "word"], a)
            for q, a in _FACTS if not q.endswith("or No.")]
    rng = np.random.default_rng(23)        # a fixed pool: the same 60 items on every machine
    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
    seen = set()
    items = [(2, "+", 3)]
    while len(items) < 60:
        op = "+-*"[len(items) % 3]
        a, b = (int(v) for v in rng.integers(2, 13 if op == "*" else 50, size=2))
        if op == "-" and b > a:
            a, b = b, a
        if (a, op, b) not in seen and 0 <= ops[op](a, b) <= 99:
            items.append((a, op, b))
        seen.add((a, op, b))
    out += [(f"{a}{op}{b}", f"What is {a}{op}{b}?" + _ASK["number"], str(ops[op](a, b))) for a, op, b in items]
    return out


#: Greetings and counting requests, with the first word SmolLM2-135M-Instruct gives most often.
_GREETINGS = (
    ("Hello!", "Hello"), ("Hi!", "Hello"), ("Hey!", "Hello"), ("Hello there!", "Hello"), ("Hi there!", "Hello"),
    ("Hey there!", "Hello"), ("Hello, SmolLM!", "Hello"), ("Hi, SmolLM!", "Hello"), ("Hiya!", "Hello"),
    ("Howdy!", "Hello"), ("Greetings!", "Hello"), ("Hello, friend!", "Hello"), ("Yo!", "Hello"),
    ("Hello, assistant!", "Hello"), ("hello", "Hello"), ("hi", "Hello"), ("hey", "Hello"),
    ("Good morning!", "Good"), ("Good evening!", "Good"), ("Good afternoon!", "Good"), ("Good night!", "Good"),
    ("Count from 1 to 3.", "1"), ("Count from 1 to 5.", "1"), ("List the numbers from 1 to 3.", "1"),
    ("Count to three.", "1"), ("Goodbye!", "Goodbye"), ("Bye!", "Goodbye"), ("Say hello.", "Hello"),
    ("Say the word yes.", "Yes"), ("Write the word 'hello' and nothing else.", "Hello"),
)


def greeting_pool() -> list[tuple[str, str, str]]:
    """A second pool, for the upper end of P(correct): 30 greetings, farewells and counting requests.

    Screening :func:`candidate_pool` found no prompt SmolLM2-135M-Instruct answers correctly more than
    about half the time with a bare first word (a system prompt asking for Yes or No did not change
    that: at most 20 of 32 in a pilot). A greeting's first word is "Hello" most of the time ("Hello!"
    29 of 32, "Hi!" 23 of 32 in the pilot), so these prompts reach P(correct) 0.5-0.9.

    Returns
    -------
    list of tuple of str
        ``(label, question, answer)`` as in :func:`candidate_pool`; the label is the user turn itself.

    Examples
    --------
    >>> pool = greeting_pool()
    >>> len(pool), pool[0]
    (30, ('Hello!', 'Hello!', 'Hello'))
    """
    return [(q, q, a) for q, a in _GREETINGS]


#: The screening pools by name (the study's ``pool`` option).
POOLS = {"main": candidate_pool, "greetings": greeting_pool}


_PUNCT = ".,!?;:\"'()[]*`"


@checked(text=text())
def normalise(text: str) -> str:
    """The verifier's view of a completion: its first word, lower case, without surrounding punctuation.

    A completion is correct when this equals the normalised answer: "No, the sun is hot" answers
    "No"; "The capital of France" does not answer "Paris" (its first word is "the").

    Parameters
    ----------
    text : str
        A completion (or an answer).

    Returns
    -------
    str
        Its first word, lower case, punctuation stripped; ``""`` for an empty text.

    Examples
    --------
    >>> normalise(" Paris.") == normalise("paris") == normalise("Paris, France")
    True
    >>> normalise("The answer is 7")
    'the'
    """
    words = text.strip().lower().split()
    return words[0].strip(_PUNCT) if words else ""


def count_correct(backend, answers, n: int, generator: torch.Generator, *, batch: int = 64,
                  desc: str = "sampling", progress: bool = False) -> np.ndarray:
    """Correct completions out of ``n`` per prompt of ``backend`` (the verifier is :func:`normalise` equality).

    Parameters
    ----------
    backend
        The model (see the module docstring); sampled, not changed.
    answers : sequence of str
        One answer per prompt.
    n : int
        Samples per prompt (drawn in batches of ``batch``).
    generator : torch.Generator
        The sampler's random generator.
    batch : int
        Completions sampled per call of the model.
    desc : str
        The progress bar's label.
    progress : bool
        Show a progress bar.

    Returns
    -------
    numpy.ndarray of int
        One count per prompt.
    """
    want = [normalise(a) for a in answers]
    out = np.zeros(len(want), dtype=int)
    for q in tqdm(range(len(want)), desc=desc, disable=not progress, leave=False):
        for start in range(0, n, batch):
            c = backend.sample(q, min(batch, n - start), generator)
            out[q] += sum(normalise(t) == want[q] for t in c.text)
    return out


@checked(correct=arr(0, integer=True, ndim=1), n=POSITIVE_COUNT, n_keep=POSITIVE_COUNT,
         p_range=span(0, 1, low_open=True, high_open=True, why="; the targets are spaced in logit p, which is "
                      "infinite at 0 and 1"))
def select_prompts(correct, n: int, n_keep: int, *, p_range=P_RANGE) -> np.ndarray:
    """Indices of ``n_keep`` screened candidates whose P(correct) spreads evenly in ``logit p`` over ``p_range``.

    The screened estimate is ``(k + 0.5) / (n + 1)``. Targets are ``n_keep`` points evenly spaced in
    ``logit p`` from ``p_range[0]`` to ``p_range[1]``; each takes, in turn, the unused candidate nearest
    to it in ``logit p`` among those screened inside the range widened by one screening standard error.

    Parameters
    ----------
    correct : array_like of int
        Correct samples of each candidate, out of ``n``.
    n : int
        Screening samples per candidate.
    n_keep : int
        Prompts to keep.
    p_range : tuple of float
        ``(lo, hi)`` with ``0 < lo < hi < 1``: the P(correct) range the kept prompts spread over.

    Returns
    -------
    numpy.ndarray of int
        The kept candidates' indices, in order of increasing screened P(correct).

    Raises
    ------
    InvalidInputError
        If fewer than ``n_keep`` candidates screened inside the (widened) range.

    Examples
    --------
    >>> select_prompts([0, 2, 8, 16, 24, 30, 32], 32, 3).tolist()
    [1, 3, 5]
    """
    k = np.asarray(correct, dtype=float)
    if n <= 0 or k.ndim != 1 or np.any((k < 0) | (k > n)):
        raise InvalidInputError(f"need 0 <= correct <= n with n > 0, got n={n!r} and correct={k.tolist()}")
    lo, hi = (float(x) for x in np.asarray(p_range, dtype=float))     # a tensor or a Series: its two numbers
    p = (k + 0.5) / (n + 1)
    se = np.sqrt(p * (1 - p) / n)
    ok = np.flatnonzero((p + se >= lo) & (p - se <= hi))
    if ok.size < n_keep:
        raise InvalidInputError(f"only {ok.size} of {k.size} candidates screened inside P(correct) "
                                f"[{lo:g}, {hi:g}] (widened by one standard error); expected at least "
                                f"n_keep={n_keep}: give a larger pool or fewer prompts")
    targets = np.linspace(logit(lo), logit(hi), n_keep)
    u = logit(p)
    free = list(ok)
    chosen = []
    for t in targets:
        j = min(free, key=lambda i: (abs(u[i] - t), i))
        chosen.append(j)
        free.remove(j)
    return np.array(sorted(chosen, key=lambda i: (p[i], i)), dtype=int)


@checked(p_ref=arr(0, 1, ndim=1), candidates=arr(0, low_open=True, ndim=1, distinct=True), min_diff=num(0),
         group_size=num(2, integer=True, finite=False))
def choose_betas(p_ref, *, candidates=BETA_CANDIDATES, min_diff: float = MIN_DIFF, group_size: int = 8,
                 penalty: str = "reverse") -> tuple[tuple[float, float], float]:
    """The pair of betas whose stationary predictions differ by ``>= min_diff`` for the most prompts.

    Ties go to the pair with the larger smaller beta (a stronger pull to the reference: faster to
    converge, and safer from the collapse of a policy that stops sampling its correct answers), then
    to the smaller larger beta.

    Parameters
    ----------
    p_ref : array_like
        The prompts' P_ref(correct).
    candidates : sequence of float
        The betas the pair is chosen from (at least two, each once).
    min_diff : float
        The difference in stationary P(correct) that counts a prompt as telling the two betas apart.
    group_size : int
        ``G`` of the objective the predictions are made for.
    penalty : {"reverse", "direct"}
        The penalty of that objective.

    Returns
    -------
    ((float, float), float)
        The two betas (increasing) and the fraction of prompts whose predictions differ by ``>= min_diff``.

    Examples
    --------
    >>> choose_betas([0.1, 0.3], candidates=(0.5, 2.0, 4.0))     # (0.5, 4) ties; the smaller larger beta wins
    ((0.5, 2.0), 1.0)
    """
    cands = sorted(float(b) for b in candidates)
    if len(cands) < 2:
        raise InvalidInputError(f"need at least two candidate betas, got {candidates!r}")
    x = {b: stationary_x(p_ref, Objective(beta=b, group_size=group_size, penalty=penalty)) for b in cands}
    best = None
    for i, a in enumerate(cands):
        for b in cands[i + 1:]:
            frac = float(np.mean(np.abs(x[a] - x[b]) >= min_diff))
            key = (frac, a, -b)
            if best is None or key > best[0]:
                best = (key, (a, b), frac)
    return best[1], best[2]

