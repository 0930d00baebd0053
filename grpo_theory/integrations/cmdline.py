"""Trainer configs given as command lines: verl's Hydra overrides and argparse-style ``--flag value`` lists.

Published recipes are shell scripts, e.g. ``python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo
actor_rollout_ref.rollout.n=$N ...`` with ``N=8`` set above, or ``trl grpo --beta 0.04 ...``. Here a script's
text becomes the tokens of its trainer command (line continuations joined, comments dropped, the script's own
``NAME=value`` assignments substituted for ``$NAME`` and ``${NAME}``), and the tokens become a flat mapping
of dotted keys (Hydra) or flag names (argparse) to values typed as YAML types them (``true``, ``8``,
``1e-3``, ``null``, quoted strings). Nothing is executed. A variable the script does not set stays as written
(``$HOME`` in a data path the readers never read is harmless); in a setting a reader reads it is an
:class:`~grpo_theory.errors.InvalidInputError` naming it (:func:`check_set`), as is a token that is not an
override or a flag without its value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from .._checks import checked, mapping, text, texts, whole
from ..errors import InvalidInputError
from ._shell import MAX_TOKENS, VARIABLE, script_commands

__all__ = ["script_tokens", "trainer_arguments", "detached_arguments", "hydra_overrides", "argparse_flags", "looks_like_command",
           "check_set", "HYDRA_FLAGS"]

#: A script's arguments passed on to the trainer (``"$@"``): unknown here, skipped.
_SCRIPT_ARGS = ("$@", "$*", "${@}", "${*}")
#: An argparse flag's name after its ``--``: a letter, digit or ``_`` first, then those and ``-`` and ``.``.
_FLAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
#: A Hydra key: dotted names (the override grammar's ``DOT_PATH``).
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)*")


def _scalar(text: str):
    """A value typed as Hydra/YAML types it: bools, ints, floats (``1e-3`` too), null; otherwise the string."""
    low = text.strip()
    if low.lower() in ("true", "false"):
        return low.lower() == "true"
    if low.lower() in ("null", "~"):        # YAML's and Hydra's null; 'none' is text (TRL's scale_rewards none)
        return None
    try:
        return int(low)
    except ValueError:
        pass
    try:
        return float(low)
    except ValueError:
        pass
    if len(low) >= 2 and low[0] == low[-1] and low[0] in "'\"":
        return low[1:-1]
    return low


@checked(text=text())
def looks_like_command(text: str) -> bool:
    """Whether ``text`` reads as a trainer command line or script rather than YAML/JSON.

    Parameters
    ----------
    text : str
        The config file's text.

    Returns
    -------
    bool
        True for a command line or script.
    """
    return bool(re.search(r"(^|\s)(python[0-9.]*|torchrun|accelerate|trl|deepspeed|bash)\s", text)) or \
        "main_ppo" in text or text.lstrip().startswith("#!")


@checked(text=text(), source=text(), marker=text(none=True))
def script_tokens(text: str, source: str, *, marker: str | None = None) -> list[str]:
    """The tokens of a script's trainer command, variables substituted.

    The text is read as the shell reads it, without running anything: line continuations, comments, quotes,
    several commands on a line (``;``, ``&&``, ``|``), redirections (``> log 2>&1``, dropped), the script's
    ``NAME=value`` / ``export NAME=value`` assignments and arrays ``NAME=( ... )`` applied in order, ``$NAME``,
    ``${NAME}``, ``${NAME:-default}``, ``"${NAME[@]}"`` and ``$((...))`` substituted, an unquoted expansion split
    at white space as the shell splits it, the script's own arguments (``"$@"``, ``"${@:2}"``) left out. What
    cannot be known without running the script (``$(date)``, an unset variable) is kept as written.

    Parameters
    ----------
    text : str
        A shell script or one command line.
    source : str
        For messages.
    marker : str, optional
        A token (e.g. ``"main_ppo"``) that starts the trainer command: the tokens after it in the command holding
        it are returned; without it, or when no token contains it, every token of the script's commands.

    Raises
    ------
    InvalidInputError
        An unterminated quote or expansion, more than one command holding ``marker``, or more than
        :data:`MAX_TOKENS` tokens.
    """
    commands = script_commands(text, source)
    if marker is not None:
        hits = [(c, i) for c, (toks, _op) in enumerate(commands) for i, t in enumerate(toks)
                if marker in t and "=" not in t and not any(ch.isspace() for ch in t)]
        holding = sorted({c for c, _ in hits})
        if len(holding) > 1:                # a sweep script: which run's settings to read is the user's choice
            raise InvalidInputError(f"{source}: {len(holding)} {marker} commands; the reader reads one trainer "
                                    "command: give a script (or a command line) with one of them")
        if holding:
            first = min(i for c, i in hits if c == holding[0])
            return commands[holding[0]][0][first + 1:]
    tokens: list[str] = []
    for toks, op in commands:
        if op is not None and tokens:
            tokens.append(op)
        tokens.extend(toks)
    if marker is not None:
        starts = [i for i, tok in enumerate(tokens) if marker in tok]
        if starts:                          # only inside an override's value (name=main_ppo_run)
            return tokens[starts[0] + 1:]
    return tokens


#: Modules run with ``-m`` that launch another program (``python -m torch.distributed.run train.py``): not the trainer.
_LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch",
                     "deepspeed.launcher.runner", "deepspeed")


def _entry(tokens: list) -> int | None:
    """The index of a command's trainer entry: ``grpo`` after ``trl`` (``trl grpo``, ``-m trl.cli grpo``), else the
    first Python script (``*.py``) or module after ``-m`` / ``--module`` that is not a launcher's own; what comes
    before it (``accelerate launch --config_file ...``, ``ray job submit ... --``, ``torchrun ...``) is the
    launcher's."""
    sub = next((i for i in range(1, len(tokens)) if tokens[i] == "grpo" and "trl" in tokens[i - 1]), None)
    if sub is not None:
        return sub
    for i, t in enumerate(tokens):
        if t.endswith(".py") and not t.startswith("-") and "=" not in t:
            return i
        if i and tokens[i - 1] in ("-m", "--module") and t not in _LAUNCHER_MODULES:
            return i
    return None


@checked(text=text(), source=text(), hints=texts())
def trainer_arguments(text: str, source: str, hints: Sequence[str] = ()) -> list[str] | None:
    """The arguments of a script's trainer command: the tokens after its entry (the training script or module,
    or ``trl grpo``), a launcher's own flags before it left out.

    Parameters
    ----------
    text : str
        A shell script or one command line (:func:`script_tokens` reads it).
    source : str
        For messages.
    hints : sequence of str, optional
        Parts of the trainer's entry (``"grpo"``, ``"openrlhf"``): where several commands have an entry, those
        whose entry holds one are preferred (a data preparation script before the training run).

    Returns
    -------
    list of str or None
        The tokens after the entry; None where no command has one (then the caller reads every token).

    Raises
    ------
    InvalidInputError
        When more than one command is a trainer command (a sweep script): which run to read is the user's choice.
    """
    commands = script_commands(text, source)
    found = [(c, toks, i) for c, (toks, _op) in enumerate(commands) if (i := _entry(toks)) is not None]
    preferred = [(c, toks, i) for c, toks, i in found if any(h in toks[i] for h in hints)]
    pick = preferred or found
    if len(pick) > 1:
        names = ", ".join(repr(toks[i]) for _c, toks, i in pick[:4])
        raise InvalidInputError(f"{source}: {len(pick)} trainer commands ({names}); the reader reads one: give a "
                                "script (or a command line) with one of them")
    if not pick:
        return None
    c, toks, i = pick[0]
    _refuse_detached(commands, c, source)
    return toks[i + 1:]


#: A token that only a trainer takes: a ``--flag`` or a dotted Hydra override (``a.b=1``, ``+a.b=1``, ``~a.b``).
_ARGUMENT = re.compile(r"--[A-Za-z].*|[+~]*[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)+(=.*)?")


@checked(c=whole(0))
def detached_arguments(commands: list, c: int) -> list[str]:
    """The command after ``commands[c]`` (from :func:`~grpo_theory.integrations._shell.script_commands`) when it is
    only more trainer arguments on the next line: bash ended the continued command early (a comment line, an empty
    line, a space after the final backslash), so the trainer runs without them; else ``[]``.

    Parameters
    ----------
    commands : list of (list of str, str or None)
        A script's commands and the operators before them.
    c : int
        The index of the trainer's command.

    Returns
    -------
    list of str
        The detached command's tokens, or ``[]``.
    """
    if 0 <= c < len(commands) - 1 and commands[c + 1][1] is None and _ARGUMENT.fullmatch(commands[c + 1][0][0]):
        return list(commands[c + 1][0])
    return []


def _refuse_detached(commands: list, c: int, source: str) -> None:
    """Refuse a trainer command (``commands[c]``) followed, on the next line, by a command that is only more of its
    arguments: bash ended the continued command early (a comment line, an empty line, a space after the final
    backslash) and the trainer runs without them."""
    if detached_arguments(commands, c):
        tok = commands[c + 1][0][0]
        raise InvalidInputError(f"{source}: the trainer command ends before {tok!r}: in bash a comment line, an empty "
                                "line or a space after a line's final backslash ends a continued command, so the lines "
                                f"from {tok!r} on are a command of their own that the trainer does not get (bash then "
                                "fails on it); remove that line or the space, or move the comment below the command")


@checked(values=mapping(), source=text(), shown=mapping(none=True))
def check_set(values: Mapping, read: Iterable, source: str, shown: Mapping | None = None) -> None:
    """Refuse a setting a reader reads whose value still holds a shell variable the script does not set.

    Parameters
    ----------
    values : mapping
        The settings from :func:`hydra_overrides` or :func:`argparse_flags` (or a reader's renaming of them).
    read : iterable of str
        The keys the reader reads; the others (data paths, logging) may hold anything.
    source : str
        For messages.
    shown : mapping, optional
        A key's name as the user wrote it, where the reader renamed it.

    Raises
    ------
    InvalidInputError
        Naming the variable and the setting, e.g. ``rollout.n='$N'``.
    """
    read = [read] if isinstance(read, str) else read                     # one name; a dict of fields: its keys
    if isinstance(read, (bytes, bytearray, memoryview)) or not hasattr(read, "__iter__"):
        raise InvalidInputError(f"read must be the setting names a reader reads (a list or dict), got {read!r}")
    try:
        read = list(read)
    except Exception as exc:                               # noqa: BLE001 - a 0-d array, a failing iterator
        raise InvalidInputError(f"read must be the setting names a reader reads (a list or dict), got {read!r} "
                                f"({type(exc).__name__}: {exc})") from None
    odd = [key for key in read if not isinstance(key, str)]
    if odd:
        odd = odd[0]
        raise InvalidInputError(f"read must be setting names (text); one entry is {odd!r} ({type(odd).__name__})")
    for key in read:
        value = values.get(key)
        m = VARIABLE.search(value) if isinstance(value, str) else None
        if m:
            name = m.group(1) or m.group(3)
            raise InvalidInputError(f"{source}: the shell variable ${name} is not set in the script (in "
                                    f"{(shown or {}).get(key, key)}={value!r}); set it above the command or write "
                                    "its value")


@checked(tokens=texts(), source=text(), sections=texts(), read=texts())
def hydra_overrides(tokens: Sequence[str], source: str, *, sections: Sequence[str] = (),
                    read: Sequence[str] = ()) -> dict:
    """``a.b.c=value`` tokens (Hydra overrides; ``+`` and ``++`` prefixes allowed, ``~key`` removes) as a flat
    mapping of dotted keys; Hydra's own flags (:data:`HYDRA_FLAGS`: ``--config-name NAME``, ``-m``) are skipped
    wherever they stand; other tokens (``python3``, ``-m``, ``2>&1``, ``| tee log``) are skipped up to the
    first override, and after it any token that is not an override is an error; so is a dotted key in one of
    ``sections`` with no ``=value``, wherever it is.

    A removal follows Hydra's override grammar: ``~key`` removes ``key`` and every key under it from the
    config, ``~key=value`` the same where ``key`` holds ``value``. Here it removes them from the mapping (a
    key set earlier on the line is gone; a later ``key=value`` sets it again). A removal that reaches a key in
    ``read`` is refused: the trainer then runs without the setting (its code's default or an error, depending
    on its version), which a reader cannot tell; so is ``~key=value`` where the line set ``key`` to another value
    (Hydra refuses it too).

    Parameters
    ----------
    tokens : sequence of str
        The command line, split as the shell would.
    source : str
        Where the tokens came from, for the errors.
    sections : sequence of str, optional
        Top-level keys under which a bare dotted key is an error.
    read : sequence of str, optional
        The dotted keys the caller reads, which a removal may not reach.

    Returns
    -------
    dict
        ``{dotted key: value}``, values typed as Hydra types them (bool, int, float, None or str); a removed key
        is absent. Empty where the overrides remove every key they set (``['a.b=1', '~a.b']``).

    Raises
    ------
    InvalidInputError
        For a token after the first override that is not one, a bare dotted key in ``sections``, a removal
        that reaches a key in ``read`` or whose value does not match, or no override at all.

    Examples
    --------
    >>> hydra_overrides(["python3", "-m", "x", "a.b=1", "+c=0.5", "~a.b"], "s")
    {'c': 0.5}
    """
    out: dict = {}
    started = False
    skip = False
    for tok in tokens:
        if skip:                              # the value of a Hydra flag given apart (--config-name NAME)
            skip = False
            continue
        if tok in ("|", "&&", ";", "||", "&") or tok.startswith((">", "2>", "1>")):
            if started:
                break
            continue
        if tok in _SCRIPT_ARGS:               # the script's own arguments passed on: nothing to read
            continue
        if tok.partition("=")[0] in HYDRA_FLAGS:      # Hydra's own flags, anywhere on the line: not overrides
            skip = "=" not in tok and HYDRA_FLAGS[tok]
            continue
        key, eq, value = tok.partition("=")
        if tok.startswith("~") and _KEY.fullmatch(key[1:]):
            _remove(out, key[1:], _scalar(value) if eq else _ANY, tok, read, source)
            started = True
            continue
        key = key.lstrip("+")
        if eq and _KEY.fullmatch(key):
            out[key] = _scalar(value)
            started = True
        elif started and tok and not tok.strip():       # '\ ' at a line's end: bash ends the command there
            raise InvalidInputError(f"{source}: {tok!r} is an escaped space, not a Hydra override: a backslash followed "
                                    "by a space (at the end of a line meant to continue the command) gives the trainer a "
                                    "space, and bash ends the command at that line: remove the space after the "
                                    "backslash")
        elif started or (not eq and key.split(".")[0] in sections and "." in key):
            raise InvalidInputError(f"{source}: {tok!r} is not a Hydra override key=value")
    if not started:
        windows = [t for t in tokens if t in ("^", "`")]
        if windows:                            # cmd.exe's ^ / PowerShell's ` at a line's end: bash ends the command
            raise InvalidInputError(f"{source}: the command ends at its first line, which ends in {windows[0]!r}: that "
                                    "continues a line in Windows cmd.exe (^) or PowerShell (`), not in a shell script, "
                                    "so the overrides on the lines after it are not part of the command; end those "
                                    "lines with a backslash, as bash does")
        raise InvalidInputError(f"{source}: no Hydra overrides (key=value) found; expected a command such as "
                                "`python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo ...`")
    return out


_ANY = object()

#: Hydra's own command-line flags (hydra/_internal/utils.py ``get_args_parser``), each with whether it takes a value.
HYDRA_FLAGS = {"--config-path": True, "-cp": True, "--config-name": True, "-cn": True, "--config-dir": True,
               "-cd": True, "--experimental-rerun": True, "--package": True, "-p": True, "--info": False,
               "-i": False, "--multirun": False, "-m": False, "--cfg": True, "-c": True, "--resolve": False,
               "--run": False, "-r": False, "--shell-completion": False, "-sc": False, "--hydra-help": False,
               "--version": False, "--help": False, "-h": False}


def _remove(out: dict, key: str, value, tok: str, read: Sequence[str], source: str) -> None:
    """Apply the removal ``tok`` (``~key`` or ``~key=value``) to ``out``, or refuse it (:func:`hydra_overrides`)."""
    def under(k):
        return k == key or k.startswith(key + ".")
    reached = sorted(k for k in read if under(k))
    if reached:
        raise InvalidInputError(f"{source}: {tok!r} removes {reached[0]}, a setting this reader reads; without it "
                                "the trainer takes its code's default or fails, depending on its version, which "
                                f"the reader cannot tell: set {reached[0]}=VALUE instead of removing it")
    if value is not _ANY and key in out and out[key] != value:
        raise InvalidInputError(f"{source}: {tok!r} removes {key} only where it holds {value!r}, but the line set "
                                f"{key}={out[key]!r} (Hydra refuses such a removal too)")
    for k in [k for k in out if under(k)]:
        del out[k]


@checked(tokens=texts(), source=text(), boolean=texts(), several=texts())
def argparse_flags(tokens: Sequence[str], source: str, *, boolean: frozenset = frozenset(),
                   several: frozenset = frozenset()) -> dict:
    """``--flag value`` / ``--flag=value`` tokens as a mapping of flag names (dashes as underscores) to typed
    values; a flag in ``boolean`` may stand alone (True), any other flag without a value is an error. Tokens before
    the first flag (the program, a script name) are skipped.

    Parameters
    ----------
    tokens : sequence of str
        As for :func:`hydra_overrides`.
    source : str
        As for :func:`hydra_overrides`.
    boolean : frozenset of str, optional
        The flags (dashes as underscores) that may stand alone.
    several : frozenset of str, optional
        The flags (dashes as underscores) that may take several values (``nargs="+"``: ``--reward_funcs a b``);
        given more than one, the value is their list.

    Returns
    -------
    dict
        ``{flag: value}``, values typed as YAML types them (bool, int, float, None or str).

    Raises
    ------
    InvalidInputError
        For a token that is not a flag, a flag without a name (``--=1``, ``---x``), or a flag without a value.
    """
    out: dict = {}
    i = 0
    toks = list(tokens)
    while i < len(toks) and not toks[i].startswith("--"):
        i += 1
    while i < len(toks):
        tok = toks[i]
        if tok in ("|", "&&", ";", "||", "&") or tok.startswith((">", "2>", "1>")):
            break
        if not tok.startswith("--") or tok == "--":
            raise InvalidInputError(f"{source}: expected a --flag, got {tok!r}")
        name, eq, value = tok[2:].partition("=")
        if not _FLAG.fullmatch(name):
            raise InvalidInputError(f"{source}: {tok!r} is not a flag with a name (expected --NAME VALUE or "
                                    "--NAME=VALUE, NAME of letters, digits, '_', '-' or '.')")
        name = name.replace("-", "_")
        if eq:
            out[name] = _scalar(value)
        elif i + 1 < len(toks) and not toks[i + 1].startswith("--"):
            i += 1
            out[name] = _scalar(toks[i])
            more = []
            while name in several and i + 1 < len(toks) and not toks[i + 1].startswith("--") and \
                    toks[i + 1] not in ("|", "&&", ";", "||", "&"):
                i += 1
                more.append(_scalar(toks[i]))
            if more:
                out[name] = [out[name], *more]
        elif name in boolean:
            out[name] = True
        else:
            raise InvalidInputError(f"{source}: --{tok[2:]} has no value (expected --{tok[2:]} VALUE)")
        i += 1
    return out
