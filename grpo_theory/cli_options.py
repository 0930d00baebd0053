"""The command line's one rule for options that would do nothing: an option given that the chosen work does not
read is refused (or, where only the run can tell, warned about), naming the option and why."""

from __future__ import annotations

import warnings

from . import _validate
from .errors import ExactEvaluationTooLarge, NoStationaryPolicy, UnusedInputWarning
from .problem import InvalidInputError
from .studies.protocol import QUICK_MAX_QUESTIONS



def read_by(settings: dict) -> dict:
    """For each ``validate`` option that some studies read and others do not, the studies that read it: found by
    calling each study's settings function (``STUDY_SETTINGS``) on arguments that record what is read, so the table
    follows the settings (an option every study reads, ``--out`` and ``--steps``, is not in it)."""
    class Recorder:
        def __init__(self):
            self.read = set()

        def __getattr__(self, name):
            self.read.add(name)

    reads = {}
    for study, fn in settings.items():
        rec = Recorder()
        fn(rec)
        reads[study] = rec.read
    every = set.union(*reads.values())
    return {f"--{name.replace('_', '-')}": tuple(s for s in settings if name in reads[s])
            for name in sorted(every) if not all(name in r for r in reads.values())}


#: What a study does without the option (said with the refusal, so dropping the option is not read as losing it).
_ALWAYS = {("--resume", "smollm2"): " (it keeps every finished job of its --out folder on every run)",
           ("--resume", "free"): " (a rerun resumes each job from its checkpoint on every run)"}


def check_study_options(args, table: dict) -> None:
    """Refuse an option given on the command line that the chosen study does not read (``table``:
    :func:`read_by`'s), naming the option and the studies that read it, and repeated --seeds."""
    for opt in _validate.given_options(getattr(args, "argv", ()), tuple(table)):
        if args.study not in table[opt]:
            studies = ", ".join(f"--study {s}" for s in table[opt])
            why = _ALWAYS.get((opt, args.study), "")
            raise InvalidInputError(f"{opt} is read by {studies} only; --study {args.study} would ignore it{why}")
    if args.study == "small" and args.quick:          # what --quick fixes itself
        if args.no_extra:                            # harmless: said, not refused
            warnings.warn("--no-extra is not used with --quick: the quick validation runs the gated configurations "
                          "only, no extra ones", UnusedInputWarning, stacklevel=2)
        if args.questions and args.questions > QUICK_MAX_QUESTIONS:
            raise InvalidInputError(f"--questions {args.questions} with --quick: the quick validation trains at most "
                                    f"{QUICK_MAX_QUESTIONS} questions; give --questions {QUICK_MAX_QUESTIONS} or "
                                    "fewer, or drop --quick")
    if args.seeds and len(set(args.seeds)) != len(args.seeds):
        raise InvalidInputError(f"--seeds repeats a seed: {args.seeds}; each seed is one run")


def numerical_library_failure(exc: BaseException) -> str | None:
    """``'SciPy'`` or ``'NumPy'`` where a ``ValueError`` that is not the package's own was raised inside their
    numerical routines (an integrator's or a factorisation's check of its array), where no input of the user is
    read: the message ("array must not contain infs or NaNs") would read as a fault of the user's input."""
    import re

    if not isinstance(exc, ValueError) or isinstance(exc, (InvalidInputError, ExactEvaluationTooLarge,
                                                           NoStationaryPolicy)):
        return None
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    name = (tb.tb_frame.f_globals.get("__name__", "") if tb is not None else "")
    if re.match(r"scipy\.(integrate|linalg)\b", name):
        return "SciPy"
    if re.match(r"numpy\.(linalg|lib\._function_base_impl)\b", name):
        return "NumPy"
    return None
