"""A shell script read as the shell would read it, without running anything: the commands of a trainer's launch
script (``grpo_theory.integrations.cmdline`` picks the trainer command and reads its arguments).

Handled: line continuations, comments, single and double quotes and backslashes, several commands on a line
(``;``, ``&&``, ``||``, ``|``, ``&``), redirections (``> log 2>&1``, dropped with the file they name), the script's own
``NAME=value`` / ``export NAME=value`` assignments and arrays ``NAME=( ... )`` applied in order (a command's
``NAME=value`` prefixes too), ``$NAME``, ``${NAME}``, ``${NAME:-default}``, ``${NAME:=default}``, ``"${NAME[@]}"``,
``${NAME[i]}`` and ``$((...))`` substituted, an unquoted expansion split at white space as the shell splits it, the
script's own arguments (``"$@"``, ``"${@:2}"``) left out, and the script of ``bash -c "..."`` read as commands of its
own. What cannot be known without running the script (``$(date)``, a variable it does not set) is kept as written.
"""

from __future__ import annotations

import ast
import re

from ..errors import InvalidInputError

#: ``$NAME``, ``${NAME}``, ``${NAME:-default}`` and ``${NAME:=default}``.
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
#: Most tokens a command line may have (a recipe has a few hundred).
MAX_TOKENS = 100_000


def _arithmetic(expr: str, vars_: dict) -> str:
    """A shell arithmetic expansion ``$((1024 * 3))``: its integer value where it is integers, the script's own
    variables and ``+ - * / % ( )``; else the expansion as written without spaces (one token, refused where a
    reader reads it)."""
    text = re.sub(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: vars_.get(m.group(1), m.group(0)), expr)
    if re.fullmatch(r"[0-9+\-*/%() ]+", text) and "**" not in text:
        try:
            tree = ast.parse(text.strip().replace("/", "//"), mode="eval")
            if all(isinstance(n, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop))
                   for n in ast.walk(tree)):
                return str(int(eval(compile(tree, "<arithmetic>", "eval"), {"__builtins__": {}})))
        except (SyntaxError, ZeroDivisionError, ValueError):
            pass
    return "$((" + "".join(expr.split()) + "))"


def _substitute(value: str, vars_: dict, source: str) -> str:
    def repl(m):
        name = m.group(1) or m.group(3)
        if name in vars_:
            return vars_[name]
        if m.group(2) is not None:                  # ${NAME:-default} and ${NAME:=default}
            return m.group(2)
        return m.group(0)                           # not set here: kept as written, refused where read (check_set)
    return VARIABLE.sub(repl, value)


#: Words that open a compound command or modify the next one: skipped before a command's assignments.
_KEYWORDS = ("then", "do", "else", "{", "!", "time", "exec")
_OPERATORS = ("&&", "||", ";;", ";", "|", "&")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Scan:
    """A shell script's text as commands of words, each word a list of parts ``(kind, text)``: ``lit`` (unquoted,
    split after expansion), ``dq`` (double-quoted), ``sq`` (single-quoted, literal), ``exp`` / ``dexp`` (an
    expansion ``$NAME`` / ``${...}`` / ``$((...))`` / ``$(...)``, unquoted or double-quoted), or an array assignment
    ``("array", name, [words])``. Nothing is executed."""

    def __init__(self, text: str, source: str):
        self.s, self.i, self.source = text, 0, source

    def fail(self, what: str, start: int):
        line = self.s.count("\n", 0, start) + 1
        raise InvalidInputError(f"{self.source}: {what} on line {line} "
                                f"({self.s[start:start + 60].splitlines()[0] if self.s[start:] else ''!r})")

    def commands(self) -> list:
        """``[(words, operator_before)]``: a command's words and the operator that joined it to the one before
        (``None`` after a newline)."""
        out, words, op = [], [], None
        while True:
            word = self.word()
            if word is None:                     # a separator or the end
                if self.i >= len(self.s):
                    if words:
                        out.append((words, op))
                    return out
                sep = self.separator()
                if words:
                    out.append((words, op))
                words, op = [], (None if sep == "\n" else sep)
            elif word:
                words.append(word)

    def separator(self) -> str:
        s = self.s
        if s[self.i] == "\n":
            self.i += 1
            return "\n"
        for o in _OPERATORS:
            if s.startswith(o, self.i):
                self.i += len(o)
                return o
        raise AssertionError(s[self.i])              # pragma: no cover - word() stops only at these

    def word(self, in_array: bool = False):
        """The next word's parts ([] for a dropped redirection or comment), or None at a separator or the end.
        Inside an array's parentheses (``in_array``) ``NAME=(`` is text: bash has no nested arrays."""
        s, parts = self.s, []
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r":
                if parts:
                    return parts
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):       # a line continuation
                self.i += 2
            elif c == "\\" and s.startswith("\\\r\n", self.i):
                self.i += 3
            elif c == "&" and s.startswith("&>", self.i):       # &> file, &>> file: both outputs redirected
                self.i += 1
                self.redirection(parts)
                if parts:
                    return parts
            elif c in "\n;|&":
                return parts or None
            elif c == "#" and not parts:
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c in "<>" and not s.startswith(("<(", ">("), self.i):
                self.redirection(parts)
                if parts and all(k == "lit" and t.isdigit() for k, t in parts):
                    parts.clear()                    # its file descriptor (2>&1)
                if parts:
                    return parts
                continue
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.fail("an unterminated single quote", self.i)
                parts.append(("sq", s[self.i + 1:end]))
                self.i = end + 1
            elif c == '"':
                self.double(parts)
            elif c == "$":
                parts.append(("exp", self.dollar()))
            elif c == "`":
                parts.append(("exp", self.backtick()))
            elif c == "(" and not in_array and len(parts) == 1 and parts[0][0] == "lit" and re.fullmatch(
                    r"[A-Za-z_][A-Za-z0-9_]*\+?=", parts[0][1]):
                self.i += 1
                return [("array", parts[0][1].rstrip("+="), self.array())]
            elif c == "\\":
                parts.append(("sq", s[self.i + 1:self.i + 2]))
                self.i += 2
            else:
                j = self.i
                while j < len(s) and s[j] not in " \t\r\n;|&<>'\"$`\\" and not (s[j] == "(" and j > self.i
                                                                                  and s[j - 1] == "="):
                    j += 1
                if j == self.i:                          # '(' after '=' with more before: a literal
                    j += 1
                parts.append(("lit", s[self.i:j]))
                self.i = j
        return parts or None

    def redirection(self, parts) -> None:
        """Skip ``>``, ``>>``, ``2>&1``, ``< file`` and the file named: not an argument of the command."""
        s = self.s
        m = re.compile(r"[<>]+(&[0-9-]+|&)?").match(s, self.i)
        self.i = m.end()
        if m.group(1) is None:
            while self.i < len(s) and s[self.i] in " \t":
                self.i += 1
            j = self.i                                   # the file named, skipped without reading it as a word
            while j < len(s) and s[j] not in " \t\r\n;|&<>":
                if s[j] in "'\"":
                    end = s.find(s[j], j + 1)
                    j = len(s) if end < 0 else end + 1
                else:
                    j += 2 if s[j] == "\\" else 1
            self.i = min(j, len(s))

    def array(self) -> list:
        words, start = [], self.i
        while True:
            while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
                self.i += 1
            if self.i >= len(self.s):
                self.fail("an array assignment without its closing ')'", start)
            if self.s[self.i] == ")":
                self.i += 1
                return words
            if self.s[self.i] == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
                continue
            w = self.word(in_array=True)
            if w is None:                                # a stray ';' or '|' inside the parentheses
                self.i += 1
                continue
            if w and w[-1][0] == "lit" and w[-1][1].endswith(")"):
                w[-1] = ("lit", w[-1][1][:-1])
                words.append(w)
                return words
            if w:
                words.append(w)

    def double(self, parts) -> None:
        s, start, before = self.s, self.i, len(parts)
        self.i += 1
        buf = []
        while True:
            if self.i >= len(s):
                self.fail("an unterminated double quote", start)
            c = s[self.i]
            if c == '"':
                self.i += 1
                break
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    buf.append(s[self.i + 1])
                self.i += 2
            elif c == "$" or c == "`":
                if buf:
                    parts.append(("dq", "".join(buf)))
                    buf = []
                parts.append(("dexp", self.dollar() if c == "$" else self.backtick()))
            else:
                buf.append(c)
                self.i += 1
        if buf or len(parts) == before:                # "" is an empty word; "$@" with no arguments is none
            parts.append(("dq", "".join(buf)))

    def balanced(self, open_: str, close: str, start: int) -> int:
        """The index after the ``close`` that balances the ``open_`` before ``self.i`` (quotes skipped)."""
        s, depth, j = self.s, 1, self.i
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                j = s.find("'", j + 1)
                if j < 0:
                    break
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        self.fail(f"an unterminated {s[start:start + 2]!r}", start)

    def dollar(self) -> str:
        """``$NAME``, ``${...}``, ``$((...))``, ``$(...)``, ``$@``...: the expansion as written."""
        s, start = self.s, self.i
        if s.startswith("$((", start):
            self.i = start + 3
            end = self.balanced("(", ")", start)
            if s[end:end + 1] == ")":
                end += 1
            self.i = end
        elif s.startswith("$(", start) or s.startswith("${", start):
            self.i = start + 2
            self.i = self.balanced(s[start + 1], ")" if s[start + 1] == "(" else "}", start)
        else:
            m = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])").match(s, start)
            self.i = m.end() if m else start + 1
        return s[start:self.i]

    def backtick(self) -> str:
        end = self.s.find("`", self.i + 1)
        if end < 0:
            self.fail("an unterminated backquote", self.i)
        start, self.i = self.i, end + 1
        return self.s[start:self.i]


_ARRAY_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[(@|\*|[0-9]+)\]\}")
_DEFAULT_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=])(.*)\}", re.DOTALL)
_PLAIN_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_ARGS_REF = re.compile(r"\$(?:[@*]|\{[@*](?::[0-9]+(?::[0-9]+)?)?\})")


def _expansion(e: str, vars_: dict, arrays: dict, source: str):
    """The value of one expansion: a str, a list (an array's elements; ``[]`` for the script's own arguments), or
    None where the reader cannot know it (kept as written: a command substitution, an unset variable)."""
    if e.startswith("$((") and e.endswith("))"):
        return _arithmetic(e[3:-2], vars_)
    if e.startswith(("$(", "`")):
        return None
    if _ARGS_REF.fullmatch(e):
        return []
    m = _ARRAY_REF.fullmatch(e)
    if m:
        name, index = m.groups()
        values = arrays.get(name, [vars_[name]] if name in vars_ else None)
        if values is None:
            return None
        if index in "@*":
            return list(values)
        return values[int(index)] if int(index) < len(values) else ""
    m = _PLAIN_REF.fullmatch(e)
    if m:
        name = m.group(1) or m.group(2)
        if name in vars_:
            return vars_[name]
        return arrays[name][0] if arrays.get(name) else None
    m = _DEFAULT_REF.fullmatch(e)
    if m:
        name, how, default = m.groups()
        if name in vars_ and (vars_[name] or ":" not in how):
            return vars_[name]
        value = _substitute(default, vars_, source)
        if how.endswith("="):
            vars_[name] = value
        return value
    return None


def _fields(text: str) -> list[str]:
    """``text`` split at white space as bash splits an unquoted expansion, except inside a command substitution kept
    as written (``$(cd .. && pwd)/x``): what bash would split there is its output, which the reader does not know."""
    if "$(" not in text and "`" not in text:
        return text.split()
    out, cur, depth, tick = [], [], 0, False
    i = 0
    while i < len(text):
        c = text[i]
        if text.startswith("$(", i):
            depth += 1
            cur.append("$(")
            i += 2
            continue
        if c == ")" and depth:
            depth -= 1
        elif c == "`":
            tick = not tick
        elif c.isspace() and not depth and not tick:
            if cur:
                out.append("".join(cur))
                cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if cur:
        out.append("".join(cur))
    return out


def _expand(parts, vars_: dict, arrays: dict, source: str, *, split: bool = True) -> list[str]:
    """A word's parts as the shell expands them: variables substituted, an unquoted expansion split at white
    space (``split``), ``"${A[@]}"`` one word per element; what cannot be known kept as written."""
    out, cur, have = [], [], False

    def flush():
        nonlocal cur, have
        if have or cur:
            out.append("".join(cur))
        cur, have = [], False

    for kind, text in parts:
        if kind in ("lit", "sq", "dq"):
            cur.append(text)
            have = True
            continue
        value = _expansion(text, vars_, arrays, source)
        if value is None:
            cur.append(text)
            have = True
        elif kind == "dexp" or not split:
            if isinstance(value, list):
                if kind == "dexp" and split:
                    for k, v in enumerate(value):
                        if k:
                            flush()
                        cur.append(v)
                        have = True
                else:
                    cur.append(" ".join(value))
                    have = True
            else:
                cur.append(value)
                have = True
        else:                                   # unquoted: split at white space
            text = " ".join(value) if isinstance(value, list) else value
            fields = _fields(text)
            if text[:1].isspace():
                flush()
            for k, f in enumerate(fields):
                if k:
                    flush()
                cur.append(f)
                have = True
            if text[-1:].isspace():
                flush()
    flush()
    return out


_ASSIGN_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
#: Builtins that assign their ``NAME=value`` arguments.
_DECLARE = ("export", "declare", "local", "readonly", "typeset")


def _bare(word) -> str | None:
    """A word that is one unquoted literal (a keyword, a builtin's name): its text; else None."""
    return word[0][1] if len(word) == 1 and word[0][0] == "lit" else None


def _nested(text: str, source: str, depth: int) -> list | None:
    """The commands of a ``bash -c`` script; a substitution the outer script kept as written (``$(scontrol ...)``,
    split by an unquoted use) is read as text; None where the string still does not parse (then it is one token)."""
    for attempt in (text, text.replace("$(", "$\\(").replace("`", "\\`")):
        try:
            return script_commands(attempt, source, depth + 1)
        except InvalidInputError:
            continue
    return None


def script_commands(text: str, source: str, depth: int = 0) -> list[tuple[list[str], str | None]]:
    """A script's commands as the shell would run them, each ``(tokens, operator_before)``: the script's own
    ``NAME=value`` and ``NAME=(...)`` assignments applied in order (a command's ``NAME=value`` prefixes too),
    expansions substituted, comments and redirections dropped. Assignment-only commands give no tokens. The
    script of ``bash -c "..."`` (a Slurm ``srun ... bash -c "ray job submit ... -- python3 -m ..."``) follows its
    command as commands of its own."""
    vars_: dict[str, str] = {}
    arrays: dict[str, list] = {}
    out, count = [], 0
    for words, op in _Scan(text, source).commands():
        while words and _bare(words[0]) in _KEYWORDS:
            words = words[1:]
        declare = bool(words) and _bare(words[0]) in _DECLARE
        if declare:
            words = [w for w in words[1:] if not (len(w) == 1 and w[0][0] == "lit" and w[0][1].startswith("-"))]
        tokens = []
        for k, w in enumerate(words):
            head = _ASSIGN_HEAD.match(w[0][1]) if w[0][0] == "lit" else None
            if w[0][0] == "array":
                _, name, elements = w[0]
                arrays[name] = [v for el in elements for v in _expand(el, vars_, arrays, source)]
                vars_.pop(name, None)
            elif head and (declare or not tokens):
                value = _expand([("lit", w[0][1][head.end():]), *w[1:]], vars_, arrays, source, split=False)
                value = value[0] if value else ""
                vars_[head.group(1)] = vars_.get(head.group(1), "") + value if head.group(2) else value
            else:
                tokens.extend(_expand(w, vars_, arrays, source))
        count += len(tokens)
        if count > MAX_TOKENS:
            raise InvalidInputError(f"{source}: more than {MAX_TOKENS:,} tokens")
        inner = next((j for j in range(1, len(tokens) - 1) if tokens[j] == "-c"
                      and tokens[j - 1].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")), None)
        nested = _nested(tokens[inner + 1], source, depth) if inner is not None and depth < 8 else None
        if nested is not None:
            out.append((tokens[:inner + 1], op))
            out.extend(nested)
        elif tokens:
            out.append((tokens, op))
    return out
