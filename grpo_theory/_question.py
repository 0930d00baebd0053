"""Questions: one context ``q``, its outputs' reference probabilities and their rewards or preferences.

The :class:`Question` half of :mod:`grpo_theory.problem` (which re-exports everything here): a
:class:`Question` is one context ``q`` with ``K`` outputs, their reference probabilities ``pi_ref``
and either a reward law (``L`` distinct reward levels and ``P(r | o)``) or, for ``G = 2`` only, a
pairwise preference matrix ``M[o, o'] = P(o > o')`` (ties counted half, so ``M + M^T = 1``).
Layer 0 of the map: it imports only numpy and the other layer-0 modules, so the KL module and the
objective can sit above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._checks import index_below, register_class
from ._validate import as_floats, probability_tolerance
from ._validate import plain as _plain
from .errors import InvalidInputError

#: Tolerance for "sums to one" and "M + M^T = 1" checks on user input.
_PROB_TOL = 1e-9


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


def _as_float_array(name: str, value, ndim: int) -> np.ndarray:
    arr = as_floats(name, value)
    if arr.ndim != ndim:
        raise InvalidInputError(
            f"{name} must be a {ndim}-d array, got shape {arr.shape} from {value!r}"
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} must be finite (no NaN/inf), got {arr.tolist()!r}")
    return arr


def validate_probability_vector(name: str, value) -> np.ndarray:
    """``value`` as a float vector, after checking that it lies on the probability simplex.

    Parameters
    ----------
    name : str
        What the value is called in the error message.
    value : array_like, shape (K,)

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InvalidInputError
        When ``value`` is not a finite 1-d vector of non-negative numbers summing to 1.
    """
    arr = _as_float_array(name, value, 1)
    if arr.size < 1:
        raise InvalidInputError(f"{name} must have at least one entry, got {arr.tolist()!r}")
    if np.any(arr < 0):
        raise InvalidInputError(f"{name} must be non-negative, got {arr.tolist()!r}")
    total = float(arr.sum())
    tol = probability_tolerance(value, arr.size, _PROB_TOL)
    if abs(total - 1.0) > tol:
        raise InvalidInputError(f"{name} must sum to 1, got sum {_plain(total)} for {arr.tolist()!r}")
    if tol > _PROB_TOL * max(1, arr.size):           # float32 input: off by its own rounding; renormalised
        arr = arr / total
    return arr


def validate_policy(name: str, value, n_outputs: int) -> np.ndarray:
    """:func:`validate_probability_vector`, and one probability per output of a question of ``n_outputs``.

    Parameters
    ----------
    name : str
        What the value is called in the error message.
    value : array_like, shape (K,)
        The policy.
    n_outputs : int
        ``K``, the question's number of outputs.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InvalidInputError
        As :func:`validate_probability_vector`, or when ``value`` has not ``K`` entries.
    """
    arr = validate_probability_vector(name, value)
    if arr.shape != (n_outputs,):
        raise InvalidInputError(f"{name} must have K={n_outputs} entries (one probability per output of the question), "
                                f"got {arr.size}: {str(arr.tolist())[:80]}")
    return arr


def validate_answers(answers, k: int) -> tuple:
    """Answers as a tuple of token tuples, checked: one per output, non-empty, hashable, prefix-free."""
    if isinstance(answers, (str, bytes, bytearray, memoryview)) or not isinstance(answers, Sequence):
        raise InvalidInputError(f"answers must be a sequence of token sequences, one per output, got {answers!r}")
    if len(answers) != k:
        raise InvalidInputError(f"answers must have one entry per output (K={k}), got {len(answers)}: {answers!r}")
    out = []
    for i, a in enumerate(answers):
        if isinstance(a, str):
            a = tuple(a)
        elif isinstance(a, Sequence) and not isinstance(a, (bytes, bytearray)):
            a = tuple(a)
        else:
            raise InvalidInputError(f"answers[{i}] must be a sequence of tokens (a str is one-character tokens), "
                                    f"got {a!r}")
        if len(a) == 0:
            raise InvalidInputError(f"answers must be non-empty, got an empty answer in {answers!r}")
        try:
            hash(a)
        except TypeError:
            raise InvalidInputError(f"answers[{i}]'s tokens must be hashable, got {a!r}") from None
        out.append(a)
    seen = set(out)
    if len(seen) != len(out):
        dup = next(a for a in out if out.count(a) > 1)
        raise InvalidInputError(f"answers must be distinct, {dup!r} appears twice")
    for a in out:
        for n in range(1, len(a)):
            if a[:n] in seen:
                raise InvalidInputError(f"answers must be prefix-free: {a[:n]!r} is a prefix of {a!r}; "
                                        "end each answer with an end-of-sequence token")
    return tuple(out)


@register_class
class Question:
    """One context ``q``: outputs ``o = 0..K-1`` with reference probabilities ``pi_ref`` and a reward law.

    Exactly one of ``rewards``, ``reward_levels`` + ``reward_probs`` or ``preference`` describes
    the rewards. The question is immutable (and picklable).

    Parameters
    ----------
    pi_ref : sequence of float, shape (K,)
        The reference policy ``pi_ref(o | q)``: non-negative, summing to 1.
    rewards : sequence of float, shape (K,), optional
        A deterministic reward ``r(o)`` per output.
    reward_levels : sequence of float, shape (L,), optional, keyword-only
        The ``L`` distinct reward levels of a random reward (given with ``reward_probs``).
    reward_probs : array_like, shape (K, L), optional, keyword-only
        ``reward_probs[o, l]``: the probability that output ``o`` yields ``reward_levels[l]``,
        independently across group members; rows sum to 1.
    preference : array_like, shape (K, K), optional, keyword-only
        A pairwise preference matrix ``M[o, o'] = P(o > o')`` with ties counted half
        (``M + M^T = 1``); it determines ``P_G`` for ``G = 2`` only.
    labels : sequence of str, optional, keyword-only
        ``K`` distinct names of the outputs, used in reports and figures.
    answers : sequence of token sequences, optional, keyword-only
        Each output as a sequence of hashable tokens (a ``str`` is a sequence of one-character
        tokens), e.g. ``[("A", "B"), ("A", "C"), ("D",)]``; distinct and prefix-free (an
        end-of-sequence token is simply a token). ``pi_ref`` stays over complete answers; the
        reference conditionals at each node of the answer tree follow from it. Without
        ``answers`` every output is one token. The tree matters only for token-level objectives
        (``Objective(level="token")``).

    Raises
    ------
    InvalidInputError
        When ``pi_ref`` is not a probability vector, not exactly one reward description is given,
        a shape does not match ``K`` (or ``L``), ``reward_levels`` are not distinct, a row of
        ``reward_probs`` does not sum to 1, ``preference`` violates ``M + M^T = 1`` or leaves
        ``[0, 1]``, or ``answers`` are not distinct, non-empty and prefix-free.

    Notes
    -----
    Internally every question is reduced to a *pooled* form: a membership matrix
    ``membership`` (``K x D``) so that ``P_G(o | pi) = membership[o] @ E(w)`` with
    ``w = pi @ membership``. For reward laws ``D = L`` (the reward levels) and
    ``membership = reward_probs``; for a preference matrix ``D = K`` and
    ``membership`` is the identity.

    Examples
    --------
    >>> q = Question([0.2, 0.8], rewards=[1, 0])
    >>> q.n_outputs, q.expected_reward.tolist()
    (2, [1.0, 0.0])
    >>> Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4]]).is_deterministic
    False
    """

    __slots__ = ("pi_ref", "reward_levels", "reward_probs", "preference_matrix", "labels", "answers")

    def __init__(
        self,
        pi_ref: Sequence[float],
        rewards: Sequence[float] | None = None,
        *,
        reward_levels: Sequence[float] | None = None,
        reward_probs: Sequence[Sequence[float]] | None = None,
        preference: Sequence[Sequence[float]] | None = None,
        labels: Sequence[str] | None = None,
        answers: Sequence[Sequence] | None = None,
    ) -> None:
        pi_ref_arr = validate_probability_vector("pi_ref", pi_ref) + 0.0    # -0.0 is 0: a probability has no sign
        k = pi_ref_arr.size
        given = [
            name
            for name, val in (("rewards", rewards), ("reward_levels/reward_probs", reward_levels),
                              ("preference", preference))
            if val is not None
        ]
        if reward_probs is not None and reward_levels is None:
            raise InvalidInputError("reward_probs was given without reward_levels; give both")
        if len(given) != 1:
            raise InvalidInputError(
                "give exactly one of rewards=, reward_levels=+reward_probs=, preference=; "
                f"got {given or 'none'}"
            )
        levels = probs = pref = None
        if rewards is not None:
            r = _as_float_array("rewards", rewards, 1)
            if r.size != k:
                raise InvalidInputError(
                    f"rewards must have one entry per output (K={k}), got {r.size}: {r.tolist()!r}"
                )
            levels, inverse = np.unique(r, return_inverse=True)
            probs = np.zeros((k, levels.size))
            probs[np.arange(k), inverse] = 1.0
        elif reward_levels is not None:
            levels = _as_float_array("reward_levels", reward_levels, 1)
            if levels.size == 0:
                raise InvalidInputError("reward_levels must hold at least one level, got []")
            if reward_probs is None:
                raise InvalidInputError("reward_levels was given without reward_probs; give both")
            probs = _as_float_array("reward_probs", reward_probs, 2)
            if probs.shape != (k, levels.size):
                raise InvalidInputError(
                    f"reward_probs must have shape (K, L) = ({k}, {levels.size}), got {probs.shape}"
                )
            if np.unique(levels).size != levels.size:
                raise InvalidInputError(f"reward_levels must be distinct, got {levels.tolist()!r}")
            if np.any(probs < 0):
                raise InvalidInputError(f"reward_probs must be non-negative, got {probs.tolist()!r}")
            bad = np.flatnonzero(np.abs(probs.sum(axis=1) - 1.0) > _PROB_TOL * levels.size)
            if bad.size:
                raise InvalidInputError(
                    f"each row of reward_probs must sum to 1; rows {bad.tolist()} are "
                    f"{probs[bad].tolist()[:8]}, summing to {probs.sum(axis=1)[bad].tolist()[:8]}"
                )
            order = np.argsort(levels)
            levels, probs = levels[order], probs[:, order]
        else:
            pref = _as_float_array("preference", preference, 2)
            if pref.shape != (k, k):
                raise InvalidInputError(
                    f"preference must have shape (K, K) = ({k}, {k}), got {pref.shape}"
                )
            if np.any((pref < 0) | (pref > 1)):
                raise InvalidInputError(f"preference entries must lie in [0, 1], got {pref.tolist()!r}")
            dev = np.abs(pref + pref.T - 1.0)
            if dev.max() > 1e-9:
                i, j = np.unravel_index(int(dev.argmax()), dev.shape)
                raise InvalidInputError(
                    "preference must satisfy M + M^T = 1 (M[o,o'] = P(o > o') with ties counted "
                    f"half); M[{i},{j}] + M[{j},{i}] = {_plain(pref[i, j] + pref[j, i])}"
                    + (f" (M[{i},{i}] = {_plain(pref[i, i])}: an output ties with itself, 0.5)" if i == j else
                       f" (M[{i},{j}] = {_plain(pref[i, j])}, M[{j},{i}] = {_plain(pref[j, i])})")
                )
        if labels is not None:
            if isinstance(labels, (str, bytes, bytearray, memoryview, Mapping)) or not hasattr(labels, "__iter__") \
                    or isinstance(labels, np.ndarray) and labels.ndim != 1:
                raise InvalidInputError(f"labels must be a list of K={k} names, got {_plain(labels)[:80]} "
                                        f"({type(labels).__name__})")
            try:
                given = list(labels)
            except Exception as exc:                    # noqa: BLE001 - the iterable's own failure, named
                raise InvalidInputError(f"labels could not be read as a list of names: {type(labels).__name__} "
                                        f"raised {type(exc).__name__}: {exc}") from None
            odd = [s for s in given if not isinstance(s, (str, int, float, np.str_, np.integer, np.floating))
                   or isinstance(s, (bool, np.bool_))]
            if odd:
                raise InvalidInputError(f"labels must be names (text or numbers), one per output; one entry is "
                                        f"{_plain(odd[0])[:80]} ({type(odd[0]).__name__})")
            labels = tuple(str(s) for s in given)
            if len(labels) != k:
                raise InvalidInputError(f"labels must have K={k} entries, got {len(labels)}")
            twice = sorted({x for x in labels if labels.count(x) > 1})
            if twice:
                raise InvalidInputError(f"labels must name each output once (they name outputs in reports and "
                                        f"figures), got {twice[0]!r} {labels.count(twice[0])} times: "
                                        f"{list(labels)[:8]!r}")
        answers = None if answers is None else validate_answers(answers, k)
        object.__setattr__(self, "answers", answers)
        object.__setattr__(self, "pi_ref", _frozen(pi_ref_arr))
        object.__setattr__(self, "reward_levels", None if levels is None else _frozen(levels))
        object.__setattr__(self, "reward_probs", None if probs is None else _frozen(probs))
        object.__setattr__(self, "preference_matrix", None if pref is None else _frozen(pref))
        object.__setattr__(self, "labels", labels)

    @property
    def is_tree(self) -> bool:
        """True when some answer has more than one token (token level then differs from sequence level)."""
        return self.answers is not None and any(len(a) > 1 for a in self.answers)

    def __setattr__(self, name, value):  # immutability, like a frozen dataclass
        raise AttributeError(f"Question is immutable; cannot set {name!r}")

    def __reduce__(self):  # pickling (process pools, cluster executors) bypasses the immutable __setattr__
        return (rebuild_question, (tuple(getattr(self, s) for s in self.__slots__),))

    def __eq__(self, other) -> bool:  # by value (slots compared, arrays elementwise): survives pickling
        if not isinstance(other, Question):
            return NotImplemented
        for name in self.__slots__:
            a, b = getattr(self, name), getattr(other, name)
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if a is None or b is None or not np.array_equal(a, b):
                    return False
            elif a != b:
                return False
        return True

    def __hash__(self) -> int:
        # + 0.0 turns -0.0 into 0.0: equal arrays (np.array_equal(-0.0, 0.0)) must hash alike
        return hash(tuple((v + 0.0 if v.dtype.kind == "f" else v).tobytes() + str(v.shape).encode()
                          if isinstance(v, np.ndarray) else v
                          for v in (getattr(self, s) for s in self.__slots__)))

    # ------------------------------------------------------------------ views
    @property
    def n_outputs(self) -> int:
        """``K``, the number of outputs."""
        return int(self.pi_ref.size)

    @property
    def has_reward_law(self) -> bool:
        """True when rewards (a reward law) are given, False for a preference matrix."""
        return self.reward_levels is not None

    @property
    def membership(self) -> np.ndarray:
        """``K x D`` matrix mapping outputs to pooled coordinates (see class doc)."""
        if self.has_reward_law:
            return self.reward_probs
        return np.eye(self.n_outputs)

    @property
    def expected_reward(self) -> np.ndarray:
        """``E[r | o]`` for each output (reward-law questions only)."""
        self._require_reward_law("expected_reward")
        return self.reward_probs @ self.reward_levels

    @property
    def is_deterministic(self) -> bool:
        """True when every output has a single reward level."""
        return self.has_reward_law and bool(np.all(self.reward_probs.max(axis=1) == 1.0))

    def pairwise_preference(self) -> np.ndarray:
        """``M[o, o'] = P(r_o > r_o') + P(r_o = r_o')/2`` for independent draws.

        For a preference-matrix question this is the given matrix.

        Returns
        -------
        numpy.ndarray, shape (K, K)
            ``M``, with ``M + M^T = 1``.

        Examples
        --------
        >>> q = Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4]])
        >>> q.pairwise_preference().round(12).tolist()     # 0.9 * 0.6 + (0.1 * 0.6 + 0.9 * 0.4)/2
        [[0.5, 0.75], [0.25, 0.5]]
        """
        if not self.has_reward_law:
            return self.preference_matrix
        v = self.reward_levels
        # cmp[l, m] = 1 if v_l > v_m, 1/2 if equal, 0 otherwise.
        cmp = (v[:, None] > v[None, :]) + 0.5 * (v[:, None] == v[None, :])
        return self.reward_probs @ cmp @ self.reward_probs.T

    def confidence_margin(self, a: int = 0, b: int = 1) -> float:
        """``gamma = P(a > b) - P(b > a)`` between outputs ``a`` and ``b``.

        Parameters
        ----------
        a : int, default 0
            An output index.
        b : int, default 1
            Another output index.

        Returns
        -------
        float
            The confidence margin, in ``[-1, 1]``.

        Examples
        --------
        >>> q = Question([0.5, 0.5], reward_levels=[0, 1], reward_probs=[[0.1, 0.9], [0.6, 0.4]])
        >>> round(q.confidence_margin(), 12)
        0.5
        """
        index_below("a", a, self.n_outputs, "outputs")
        index_below("b", b, self.n_outputs, "outputs")
        m = self.pairwise_preference()
        return float(m[a, b] - m[b, a])

    def _require_reward_law(self, what: str) -> None:
        if not self.has_reward_law:
            raise InvalidInputError(
                f"{what} needs a reward law (rewards= or reward_levels=/reward_probs=); "
                "this question was given as a preference matrix"
            )

    def __repr__(self) -> str:
        if self.has_reward_law:
            if self.is_deterministic:
                body = f"rewards={self.expected_reward.tolist()}"
            else:
                body = (f"reward_levels={self.reward_levels.tolist()}, "
                        f"reward_probs={self.reward_probs.tolist()}")
        else:
            body = f"preference={self.preference_matrix.tolist()}"
        labels = "" if self.labels is None else f", labels={list(self.labels)!r}"
        tree = "" if self.answers is None else f", answers={list(self.answers)!r}"
        return f"Question(pi_ref={self.pi_ref.tolist()}, {body}{labels}{tree})"


def rebuild_question(values: tuple) -> Question:
    """A :class:`Question` from its slot values in ``Question.__slots__`` order, not validated again: for
    values that are already a question's (unpickling, a question with its levels merged)."""
    q = Question.__new__(Question)
    for name, v in zip(Question.__slots__, values):
        if isinstance(v, np.ndarray):
            v = _frozen(v)
        object.__setattr__(q, name, v)
    return q


#: The name pickles written before it was public refer to.
_rebuild_question = rebuild_question


def as_question(q) -> Question:
    """``q`` if it is a :class:`Question`; otherwise a clear error.

    Parameters
    ----------
    q : Question
        The value to check.

    Returns
    -------
    Question
        ``q`` itself.

    Raises
    ------
    InvalidInputError
        When ``q`` is not a :class:`Question`.
    """
    if isinstance(q, Question):
        return q
    raise InvalidInputError(f"q must be a Question, got {type(q).__name__}: {q!r}; build one with "
                            "Question(pi_ref, rewards=...)")
