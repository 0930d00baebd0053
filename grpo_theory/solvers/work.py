"""Up-front work estimates of the searches: what would run for minutes is refused before any work starts.

Each check estimates the work of a call from its inputs alone (count vectors of one ``P_G`` evaluation, classes,
boxes), compares it with a limit set from measured timing curves, and raises
:class:`~grpo_theory.errors.InvalidInputError` naming the estimate, the limit and what to call instead. Below the
limits nothing changes: the checks only read the question and the objective.

Measured timing curves (CPU seconds on one core of the 2-core reference machine, 2026-12-07; ``V`` is the count
vectors of one ``P_G`` evaluation, ``C(G + L - 2, L - 1)`` for ``L`` reward levels, and ``C`` the classes):

* the certified search of three or four classes (:func:`~grpo_theory.solvers.certify.certified_stationary_points`)
  costs about 4.6e-8 s per box and count vector and keeps about 78 KB per count vector: 3 levels at G = 100
  (5,050 vectors, 17,171 boxes) 3.5 s and 0.57 GB, G = 200 (20,100) 10.6 s and 1.4 GB, G = 300 (45,150) 37 s and
  3.3 GB, G = 1000 over 75 s of wall time and 3.1 GB when killed; 4 levels at G = 60 (37,820) 23.5 s and 2.9 GB;
* the multi-start search at finite G (:func:`~grpo_theory.solvers.multi_class.multi_class_points`) costs about
  4-7 us per count vector and class: 5 levels at G = 64 (766,480 vectors) 16 s, 14 distinct rewards at G = 8
  (77,520) 4.5 s, 16 at G = 8 (170,544) 17.9 s, 20 at G = 8 (657,800) over 31 s of CPU in 75 s of wall;
* at G = inf it grows about as ``C^3``: 100 classes 7.5 s (the table's ``stationary_points``, with the policy),
  300 classes 22.6 s, 1,000 about 2 minutes (docs/performance.md);
* the flow from ``pi_ref`` (:func:`~grpo_theory.solvers.search.stationary_policy`) costs about 0.7 us per count
  vector and class where ``P_G`` is enumerated whole (G <= 65): 22 distinct rewards at G = 8 (1,184,040 vectors)
  18.5 s and 1.1 GB, 24 (2,035,800) 33 s and 2.0 GB; at G = inf 1,000 classes 21-40 s, 10,000 a MemoryError
  (4 GiB).
"""

from __future__ import annotations

import numpy as np

from .._checks import COUNT, OBJECTIVE, POSITIVE_COUNT, QUESTION, checked, flag, num, optional, text
from .._multinomial import SMALL_TOTAL
from ..errors import InvalidInputError
from ..preference import n_count_vectors
from .certify import certification_scope
from .classes import ClassProblem
from .large_beta import reference_in_rounding

# The public names: the limits, the count they are set on, and the up-front check of a stationary_points call.
# The other functions are the package's own plumbing (each solver calls its check), not part of the API.
__all__ = ["CERTIFY_MAX_COUNT_VECTORS", "CERTIFY_MAX_BOX_WORK", "SEARCH_MAX_WORK", "SEARCH_MAX_CLASSES",
           "POLICY_MAX_WORK", "POLICY_MAX_CLASSES", "MAX_FLOW_VALUES", "MAX_STEP_SECONDS", "MAX_BATCH_SAMPLES",
           "TREE_MAX_EDGES", "TREE_FLOW_MAX_ANSWERS", "TREE_SEARCH_MAX_ANSWERS", "count_vectors",
           "search_work_checked"]

#: Count vectors of one P_G evaluation above which the certified search is refused: it keeps about 78 KB per count
#: vector (2 GB here), and examines up to ``box_budget`` boxes at 4.6e-8 s per box and count vector (11.5 s at the
#: default 10,000 boxes).
CERTIFY_MAX_COUNT_VECTORS = 25_000
#: Boxes times count vectors above which the certified search is refused (about 18 s of CPU).
CERTIFY_MAX_BOX_WORK = 4e8
#: Count vectors times classes above which the multi-start search at finite G is refused (about 4-9 us each: 16
#: distinct rewards at G = 8, 2.7e6, took 17.9-24.5 s of CPU, so under about 20 s at the limit).
SEARCH_MAX_WORK = 2_500_000
#: Classes above which the multi-start search is refused. Its work grows as about C^3 until SEARCH_WORK_BUDGET binds
#: (from about 80 classes), then stays at 15-45 s: 80 classes 16.6 s, 100 the solve table's 38 s for four variants,
#: 200 over 25 s of CPU (killed at 75 s of wall at load 8-11), 300 14-42 s, 1,000 about 2 min.
SEARCH_MAX_CLASSES = 100
#: Count vectors times classes above which the flow from pi_ref is refused where P_G is enumerated whole
#: (about 0.7 us each: 14 s of CPU and 0.8 GB at the limit; 23 distinct rewards at G = 8, 3.6e7, ran over 25 s).
POLICY_MAX_WORK = 20_000_000
#: Classes above which the flow from pi_ref is refused (1,000 classes 21-40 s of CPU; 10,000 ran out of 4 GiB).
POLICY_MAX_CLASSES = 500


def _n_levels(q) -> int:
    return len(np.unique(np.asarray(q.reward_levels))) if getattr(q, "reward_levels", None) is not None else 2


@checked(q=QUESTION, obj=OBJECTIVE)
def count_vectors(q, obj) -> int:
    """Count vectors of one exact evaluation of ``P_G`` for ``q`` (1 at ``G = inf`` or for a preference matrix).

    Parameters
    ----------
    q : Question
        The question; its reward levels are counted.
    obj : Objective
        The objective; its group size is read.

    Returns
    -------
    int
        ``C(G + L - 2, L - 1)`` for ``L`` reward levels, the whole enumeration (the engine's windows at large G are
        smaller).
    """
    if obj.is_large_group or not q.has_reward_law:
        return 1
    return n_count_vectors(int(obj.group_size), _n_levels(q))


def largest_group(q, fits) -> int | None:
    """The largest group size ``G >= 2`` with ``fits(count vectors)`` true, by bisection (None if G = 2 does not)."""
    levels = _n_levels(q)
    if not fits(n_count_vectors(2, levels)):
        return None
    lo, hi = 2, 4
    while fits(n_count_vectors(hi, levels)) and hi < 2**40:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(n_count_vectors(mid, levels)) else (lo, mid)
    return lo


def search_work(q, obj, n_classes: int) -> int:
    """The multi-start search's work estimate at finite G: count vectors times classes (0 where not counted)."""
    if obj.is_large_group or not q.has_reward_law:
        return 0
    return count_vectors(q, obj) * n_classes


def _smaller_g(q, fits) -> str:
    g = largest_group(q, fits)
    return f"a group size of at most {g}, " if g is not None else ""


def check_points_work(q, obj, n_classes: int, *, certify: bool, box_budget: int, time_budget=None,
                      caller: str = "stationary_points", tables: int = 1) -> None:
    """Refuse up front a stationary-point search that would run for minutes or exhaust memory.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective.
    n_classes : int
        Its classes (outputs of one reward law), three or more (two are scanned, cheaply).
    certify : bool
        Whether the certified search will run (three or four classes in its scope, ``exhaustive=True``,
        ``box_budget > 0``).
    box_budget : int
        The boxes it may examine.
    time_budget : float or None
        A wall-clock limit the caller gave (it bounds the certification's time, not its memory).
    caller : str
        Named in the message.
    tables : int
        How many searches the caller runs (``solve``'s table: four).

    Raises
    ------
    InvalidInputError
        Naming the estimate, the limit and the alternatives.
    """
    inf_advice = "group_size=math.inf (the large-G limit, exact: the stationary points approach it as O(1/G))"
    if n_classes > SEARCH_MAX_CLASSES:
        raise InvalidInputError(
            f"{caller}: {n_classes:,} classes (outputs with distinct reward laws) need a multi-start search that "
            f"grows as classes^3 up to a work budget (100 classes take about 10 s of CPU, 200-300 15-45 s); the limit is "
            f"{SEARCH_MAX_CLASSES} classes. stationary_policy(question, objective) gives the point the flow from "
            "pi_ref reaches; pool outputs of one reward into one")
    if obj.is_large_group or not q.has_reward_law:
        return
    v = count_vectors(q, obj)
    if certify:
        work = box_budget * v * tables
        if v > CERTIFY_MAX_COUNT_VECTORS or (time_budget is None and work > CERTIFY_MAX_BOX_WORK):
            fits = (lambda n: n <= CERTIFY_MAX_COUNT_VECTORS and box_budget * n * tables <= CERTIFY_MAX_BOX_WORK)
            raise InvalidInputError(
                f"{caller}: the certified search at group_size={obj.group_size} over {n_classes} classes enumerates "
                f"{v:,} count vectors per evaluation of P_G in each of up to box_budget={box_budget:,} boxes"
                + (f" for each of {tables} variants" if tables > 1 else "")
                + f" ({work:.2g} box x count-vector terms, about {work * 4.6e-8:.0f} s of CPU, and "
                f"{v * 78e3 / 2**30:.1f} GiB); the limits are {CERTIFY_MAX_COUNT_VECTORS:,} count vectors and "
                f"{CERTIFY_MAX_BOX_WORK:.0e} terms. Use {_smaller_g(q, fits)}{inf_advice}, exhaustive=False (the "
                "multi-start search, not certified) or a smaller box_budget")
    work = search_work(q, obj, n_classes) * tables
    if work > SEARCH_MAX_WORK:
        raise InvalidInputError(
            f"{caller}: the multi-start search at group_size={obj.group_size} over {n_classes} classes evaluates "
            f"P_G over {count_vectors(q, obj):,} count vectors thousands of times"
            + (f" for each of {tables} variants" if tables > 1 else "")
            + f" ({work:,} count vectors x classes, about {work * 6e-6:.0f} s of CPU); the limit is "
            f"{SEARCH_MAX_WORK:,}. Use {_smaller_g(q, lambda n: n * n_classes * tables <= SEARCH_MAX_WORK)}"
            f"{inf_advice}, or stationary_policy(question, objective) for the point the flow from pi_ref reaches")


def check_policy_work(q, obj, n_classes: int, *, caller: str = "stationary_policy") -> None:
    """Refuse up front a flow from ``pi_ref`` that would run for minutes or exhaust memory.

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective.
    n_classes : int
        Its classes.
    caller : str
        Named in the message.

    Raises
    ------
    InvalidInputError
        Naming the estimate, the limit and the alternatives.
    """
    if n_classes > POLICY_MAX_CLASSES:
        raise InvalidInputError(
            f"{caller}: {n_classes:,} classes (outputs with distinct reward laws): the flow from pi_ref over more "
            f"than {POLICY_MAX_CLASSES:,} classes would run for a minute or more (1,000 classes: 21-40 s of CPU; 10,000 "
            "ran out of 4 GiB of memory). Pool outputs of one reward into one, or use log_pooling(pi_ref, rewards, "
            "beta) for RLHF's optimum")
    if obj.is_large_group or not q.has_reward_law or int(obj.group_size) - 1 > SMALL_TOTAL:
        return                          # at larger G the engine sums windows and refuses on its own count
    work = count_vectors(q, obj) * n_classes
    if work > POLICY_MAX_WORK:
        raise InvalidInputError(
            f"{caller}: the flow from pi_ref at group_size={obj.group_size} over {n_classes} classes evaluates P_G "
            f"over {count_vectors(q, obj):,} count vectors at every step ({work:,} count vectors x classes, about "
            f"{work * 0.7e-6:.0f} s of CPU); the limit is {POLICY_MAX_WORK:,}. Use "
            f"{_smaller_g(q, lambda n: n * n_classes <= POLICY_MAX_WORK)}group_size=math.inf (the large-G limit), "
            "or monte_carlo_preference(...) to estimate P_G at a given policy")


#: Values (times x outputs) above which ``flow`` refuses: about 43 bytes each at the peak (10^7 times of 3 outputs:
#: 1.3 GB and 7 s of CPU; 10^8 ran out of 4 GiB).
MAX_FLOW_VALUES = 30_000_000
#: Seconds of CPU above which ``ascent`` and ``grpo_steps`` refuse, by the per-step costs below (measured on one
#: core of the 2-core reference machine, 2026-12-07: 600,000 steps of 3 outputs at G = 8, estimated 27.6 s, took
#: 25.9 s of CPU and 70 s of wall at load 8-11), so under a minute of wall on a busy machine.
MAX_STEP_SECONDS = 20.0
#: Samples (groups x G) of one batch above which ``grpo_steps`` refuses (10^6 groups of 8: 314 MB).
MAX_BATCH_SAMPLES = 20_000_000


def step_seconds(q, obj) -> float:
    """One expected-gradient step's cost in seconds of CPU (``dynamics.ascent``): 40 us, 60 ns per count vector of
    P_G and 1.3 us per output (3 outputs at G = 8: 38 us; 12 distinct rewards at G = 8, 31,824 vectors: 0.5 ms;
    3 levels at G = 1000: 31 ms; 300 outputs at G = inf: 0.42 ms)."""
    return 4e-5 + 6e-8 * count_vectors(q, obj) + 1.3e-6 * q.n_outputs


def refuse_slow(caller: str, what: str, seconds: float, advice: str) -> None:
    """Raise InvalidInputError naming ``what``, its estimated ``seconds``, the limit and ``advice`` when over it."""
    if seconds > MAX_STEP_SECONDS:
        raise InvalidInputError(f"{caller}: {what}, about {seconds:,.0f} s of CPU by its measured cost; the limit is "
                                f"{MAX_STEP_SECONDS:.0f} s. {advice}")


#: Edges of the answer tree (distinct prefixes) above which the token-level solvers refuse: they keep matrices of
#: edges x edges (two answers sharing a prefix of 10^4 tokens: 2.4 GB and 14 s of CPU; of 3,000: 0.4 GB and 1.7 s;
#: of 10^5: killed at 75 s).
TREE_MAX_EDGES = 10_000


def _tree_edges(answers) -> int:
    """Distinct prefixes of the answers (the tree's edges), by one walk over their tokens."""
    root, edges = {}, 0
    for answer in answers:
        node = root
        for token in answer:
            child = node.get(token)
            if child is None:
                child = node[token] = {}
                edges += 1
            node = child
    return edges
#: Answers above which the flow from pi_ref on a tree is refused (every sequence of 9 tokens over 2: 512 answers,
#: 9.8 s of CPU; of 10 tokens, 1,024: over 31 s of CPU, killed at 75 s of wall).
TREE_FLOW_MAX_ANSWERS = 600
#: Answers above which the token-level search (``stationary_points`` on a tree) is refused: its Newton and flow
#: starts grow with the tree (16 answers of 4 tokens: 7.4 s of CPU; 32 of 5: 14.8-20.5 s, 61 s of wall at load
#: 8-11; 64 of 6: killed at 75 s).
TREE_SEARCH_MAX_ANSWERS = 24


def check_tree_work(q, *, search: bool, caller: str, n_starts: int = 24) -> None:
    """Refuse up front a token-level solve on a tree too large to finish in about 30 s of CPU or in memory.

    Parameters
    ----------
    q : Question
        A question with ``answers`` (a tree).
    search : bool
        Whether every stationary point is searched for (``stationary_points``), not only the flow's end.
    caller : str
        Named in the message.
    n_starts : int, default 24
        The search's random starts (it also starts from up to 51 grid points): its work is counted as answers x
        (51 + n_starts), at most ``TREE_SEARCH_MAX_ANSWERS`` x 75.

    Raises
    ------
    InvalidInputError
        Naming the count, the limit and the alternative.
    """
    edges = _tree_edges(q.answers)
    if edges > TREE_MAX_EDGES:
        raise InvalidInputError(
            f"{caller}: the answer tree has {edges:,} edges (distinct prefixes); the token-level solvers keep "
            f"matrices of edges x edges (two answers sharing 10^4 tokens: 2.4 GB); the limit is {TREE_MAX_EDGES:,} "
            "edges. Use Objective(level='sequence') (one logit per answer), or shorter answers")
    if not search and q.n_outputs > TREE_FLOW_MAX_ANSWERS:
        raise InvalidInputError(
            f"{caller}: {q.n_outputs:,} answers on a tree; the token-level flow from pi_ref grows faster than the "
            f"answers (512: 10 s of CPU, 1,024: over 75 s); the limit is {TREE_FLOW_MAX_ANSWERS:,} answers. Use "
            "Objective(level='sequence'), or pool answers of one reward")
    work, limit = q.n_outputs * (51 + n_starts), TREE_SEARCH_MAX_ANSWERS * 75
    if search and work > limit:
        raise InvalidInputError(
            f"{caller}: {q.n_outputs:,} answers on a tree with n_starts={n_starts:,}: the token-level search polishes "
            f"up to 51 + n_starts starts, each growing with the tree (32 answers with 24 starts: 15-21 s of CPU; "
            f"64: over 75 s), {work:,} answers x starts; the limit is {limit:,} (at most {TREE_SEARCH_MAX_ANSWERS} "
            f"answers at the default 24 starts). Use stationary_policy(question, objective) (the flow's end, up to "
            f"{TREE_FLOW_MAX_ANSWERS} answers), fewer n_starts, Objective(level='sequence'), or pool answers of one "
            "reward")


@checked(q=QUESTION, obj=OBJECTIVE, exhaustive=flag, box_budget=COUNT, time_budget=optional(num(0)),
         n_starts=POSITIVE_COUNT, caller=text(nonempty=True))
def search_work_checked(q, obj, *, exhaustive: bool = True, box_budget: int = 10_000, time_budget: float | None = None,
                        n_starts: int = 24, caller: str = "stationary_points") -> None:
    """Refuse up front a ``stationary_points`` call with these options whose search would run for minutes or exhaust
    memory, naming the estimate, the limit and the alternatives; ``stationary_points`` calls it first, and so do the
    callers that compute the points after other work (the dynamics' ``with_points``).

    Parameters
    ----------
    q : Question
        The question.
    obj : Objective
        The objective.
    exhaustive : bool, default True
        As for ``stationary_points``.
    box_budget : int, default 10,000
        As for ``stationary_points`` (its default, ``search.CERTIFY_BOXES``).
    time_budget : float or None, default None
        As for ``stationary_points``.
    n_starts : int, default 24
        As for ``stationary_points`` (counted on trees).
    caller : str, default "stationary_points"
        Named in the message.

    Raises
    ------
    InvalidInputError
        Where the estimate is over a limit.
    """
    if obj.level_variant.per_token and q.has_reward_law and q.is_tree:       # search.token_level's test
        check_tree_work(q, search=True, caller=caller, n_starts=n_starts)
        return
    cp = ClassProblem(q, obj)
    if cp.n_classes >= 3 and not reference_in_rounding(q, obj, cp):
        certify = bool(exhaustive) and box_budget > 0 and certification_scope(q, obj) is None
        check_points_work(q, obj, cp.n_classes, certify=certify, box_budget=box_budget, time_budget=time_budget,
                          caller=caller)
        check_policy_work(q, obj, cp.n_classes, caller=caller)
