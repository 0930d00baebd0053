"""The command line's one rule for options that would do nothing: an option given that the chosen work does not
read is refused (or, where only the run can tell, warned about), naming the option and why."""

from __future__ import annotations

from . import _validate
from .problem import InvalidInputError

__all__ = ["READ_BY", "check_study_options"]


#: ``validate``'s options that only some studies read (the others read --out, --steps, --device, --resume, ...).
READ_BY = {"--quick": ("small",), "--seed": ("small",), "--no-extra": ("small",), "--questions": ("small", "trl"),
           "--seeds": ("smollm2", "free"), "--trainable": ("smollm2",), "--workers": ("smollm2", "free"),
           "--model-dir": ("smollm2", "free"), "--prompts": ("free",), "--beta": ("trl",)}


def check_study_options(args) -> None:
    """Refuse an option given on the command line that the chosen study does not read, and repeated --seeds."""
    for opt in _validate.given_options(getattr(args, "argv", ()), tuple(READ_BY)):
        if args.study not in READ_BY[opt]:
            studies = " and ".join(f"--study {s}" for s in READ_BY[opt])
            raise InvalidInputError(f"{opt} is read by {studies} only; --study {args.study} would ignore it")
    if args.seeds and len(set(args.seeds)) != len(args.seeds):
        raise InvalidInputError(f"--seeds repeats a seed: {args.seeds}; each seed is one run")
