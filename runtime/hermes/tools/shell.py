"""A shell parser for safety checks: every simple command a POSIX shell or bash would run.

``parse(script)`` returns the simple commands of ``script`` in order, including
those inside pipelines, lists, subshells, ``{ ...; }`` groups, ``if``/``while``/
``for``/``case`` bodies, ``$(...)``, backticks, ``<(...)``/``>(...)``, ``${...}``
and ``$((...))`` expansions and unquoted here-documents. Quoting is removed as
the shell would (``r""m`` is ``rm``, ``$'\\x72m'`` is ``rm``); expansions are kept
in their source form (``$HOME``), for the caller to resolve what it can.

It errs on the side of finding commands, and refuses (``ShellSyntaxError``) what
a shell would refuse too: an unclosed quote, substitution or parenthesis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_DEPTH = 25
OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "(", ")")
REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)")
META = frozenset(" \t\n;&|()<>")
ANSI_C = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
          "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*(\[[^\]]*\])?\+?=")
ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*\+?=")


class ShellSyntaxError(ValueError):
    """The text is not a command a shell would run (unclosed quote, bracket, ...)."""


@dataclass
class Word:
    """One shell word: its text with quotes removed, and the scripts it runs."""

    text: str
    scripts: list[str] = field(default_factory=list)
    """Bodies of ``$(...)``, backticks and process substitutions inside the word."""
    quoted: bool = False


@dataclass
class Redirect:
    op: str
    """``>``, ``>>``, ``<``, ``<<`` (here-document), ``<<<``, ``&>``, ``>&``, ..."""
    target: str
    """The file (or here-document body, or here-string) it names."""
    fd: str = ""


@dataclass
class Command:
    """One simple command as the shell would run it."""

    argv: list[str]
    redirects: list[Redirect] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    piped_from: list[Command] = field(default_factory=list)
    """The commands earlier in the same pipeline (their output reaches this one)."""
    nested: bool = False
    """Inside a substitution: its output becomes part of another command."""
    inner: list[Command] = field(default_factory=list)
    """Commands of the substitutions in this command's own words and redirections."""


def parse(script: str, depth: int = 0) -> list[Command]:
    """Every simple command in ``script`` (nested ones after the one holding them)."""
    if depth > MAX_DEPTH:
        raise ShellSyntaxError("commands nested too deeply to check")
    return _Parser(_Lexer(script).tokens(), depth).commands()


# ---------------------------------------------------------------- lexing


@dataclass
class _Token:
    kind: str  # "word", "op", "redirect", "newline"
    value: str
    word: Word | None = None
    fd: str = ""
    heredoc: list[str] | None = None  # filled when the body is read


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.pending_heredocs: list[tuple[_Token, str, bool, bool]] = []

    def tokens(self) -> list[_Token]:
        found: list[_Token] = []
        while (token := self._next()) is not None:
            found.append(token)
        if self.pending_heredocs:  # bash warns but runs: the body is the rest
            self._read_heredocs()
        return found

    def _next(self) -> _Token | None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r":
                self.pos += 1
            elif text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif char == "\n":
                self.pos += 1
                self._read_heredocs()
                return _Token("newline", "\n")
            else:
                return self._token()
        return None

    def _token(self) -> _Token:
        text, pos = self.text, self.pos
        redirect = REDIRECT.match(text, pos)
        if redirect and not (text.startswith("<(", pos) or text.startswith(">(", pos)):
            self.pos = redirect.end()
            token = _Token("redirect", redirect.group(2), fd=redirect.group(1))
            if token.value in ("<<", "<<-"):
                self._heredoc(token)
            return token
        if text.startswith("((", pos):
            body = self._balanced(pos + 2, "((", "))")
            return _Token("word", "((", Word("((arith))", _substitutions(body)))
        for op in OPERATORS:
            if text.startswith(op, pos):
                self.pos += len(op)
                return _Token("op", op)
        word = self._word()
        return _Token("word", word.text, word)

    def _heredoc(self, token: _Token) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        start = self.pos
        delimiter = self._word()
        quoted = any(c in self.text[start:self.pos] for c in "'\"\\")
        self.pending_heredocs.append((token, delimiter.text, token.value == "<<-", quoted))

    def _read_heredocs(self) -> None:
        for token, delimiter, strip_tabs, quoted in self.pending_heredocs:
            lines: list[str] = []
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end
                line = self.text[self.pos:end]
                self.pos = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                lines.append(line)
            body = "\n".join(lines)
            token.heredoc = [body, "" if quoted else body]
        self.pending_heredocs = []

    def _word(self) -> Word:
        text = self.text
        parts: list[str] = []
        scripts: list[str] = []
        quoted = False
        while self.pos < len(text):
            char = text[self.pos]
            if char in META:
                if char in "<>" and text.startswith("(", self.pos + 1):
                    body = self._balanced(self.pos + 2, "(", ")")
                    scripts.append(body)
                    parts.append("/dev/fd/63")
                    continue
                if char == "(" and ARRAY_ASSIGNMENT.fullmatch("".join(parts)):
                    body = self._balanced(self.pos + 1, "(", ")")  # arr=(a b c)
                    scripts.extend(_substitutions(body))
                    parts.append(f"({body})")
                    continue
                break
            if char == "\\":
                nxt = text[self.pos + 1:self.pos + 2]
                self.pos += 2
                quoted = True
                if nxt != "\n":
                    parts.append(nxt)
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                parts.append(text[self.pos + 1:end])
                self.pos = end + 1
                quoted = True
            elif char == '"':
                self.pos += 1
                parts.append(self._double_quoted(scripts))
                quoted = True
            elif char == "$" or char == "`":
                parts.append(self._expansion(scripts))
            else:
                parts.append(char)
                self.pos += 1
        return Word("".join(parts), scripts, quoted)

    def _double_quoted(self, scripts: list[str]) -> str:
        text = self.text
        parts: list[str] = []
        while self.pos < len(text):
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return "".join(parts)
            if char == "\\" and text[self.pos + 1:self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                if text[self.pos + 1] != "\n":
                    parts.append(text[self.pos + 1])
                self.pos += 2
            elif char in "$`":
                parts.append(self._expansion(scripts))
            else:
                parts.append(char)
                self.pos += 1
        raise ShellSyntaxError("unclosed double quote")

    def _expansion(self, scripts: list[str]) -> str:
        """Consume ``$...`` or a backtick substitution; return its source text."""
        text, start = self.text, self.pos
        if text[start] == "`":
            end = start + 1
            while end < len(text) and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ShellSyntaxError("unclosed backtick")
            scripts.append(re.sub(r"\\([`$\\])", r"\1", text[start + 1:end]))
            self.pos = end + 1
            return text[start:self.pos]
        nxt = text[start + 1:start + 2]
        if text.startswith("$((", start):
            scripts.extend(_substitutions(self._balanced(start + 3, "((", "))")))
        elif nxt == "(":
            scripts.append(self._balanced(start + 2, "(", ")"))
        elif nxt == "{":
            scripts.extend(_substitutions(self._balanced(start + 2, "{", "}")))
        elif nxt == "'":
            self.pos = start + 2
            return _ansi_c(self._until_quote())
        elif nxt == '"':
            self.pos = start + 1
            return ""
        else:
            match = re.compile(r"\$([A-Za-z_]\w*|[0-9@*#?$!-])?").match(text, start)
            assert match is not None
            self.pos = match.end()
        return text[start:self.pos]

    def _until_quote(self) -> str:
        text, end = self.text, self.pos
        while end < len(text) and text[end] != "'":
            end += 2 if text[end] == "\\" else 1
        if end >= len(text):
            raise ShellSyntaxError("unclosed $'...' quote")
        body, self.pos = text[self.pos:end], end + 1
        return body

    def _balanced(self, start: int, opening: str, closing: str) -> str:
        """The text from ``start`` to the matching ``closing``; moves past it."""
        end = _balanced_end(self.text, start, opening, closing)
        self.pos = end + len(closing)
        return self.text[start:end]


def _balanced_end(text: str, start: int, opening: str, closing: str) -> int:
    """Where the ``closing`` matching an ``opening`` just before ``start`` begins."""
    depth, pos = 1, start
    while pos < len(text):
        if text.startswith(closing, pos):
            depth -= 1
            if depth == 0:
                return pos
            pos += len(closing)
        elif text.startswith(opening, pos):
            depth += 1
            pos += len(opening)
        elif text.startswith("$((", pos):
            pos = _balanced_end(text, pos + 3, "((", "))") + 2
        elif text.startswith("$(", pos) or text.startswith("${", pos):
            pair = ("(", ")") if text[pos + 1] == "(" else ("{", "}")
            pos = _balanced_end(text, pos + 2, *pair) + 1
        elif text[pos] == "\\":
            pos += 2
        elif text[pos] in "'\"`":
            pos = _skip_quoted(text, pos)
        elif text[pos] == "#" and (pos == start or text[pos - 1] in " \t\n"):
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
        else:
            pos += 1
    raise ShellSyntaxError(f"unclosed {opening!r}")


def _skip_quoted(text: str, pos: int) -> int:
    quote, pos = text[pos], pos + 1
    while pos < len(text) and text[pos] != quote:
        pos += 2 if text[pos] == "\\" and quote != "'" else 1
    if pos >= len(text):
        raise ShellSyntaxError("unclosed quote")
    return pos + 1


def _substitutions(text: str) -> list[str]:
    """Scripts of the ``$(...)`` and backticks inside ``text`` (a ``${...}`` or
    ``$((...))`` body, or an unquoted here-document)."""
    lexer = _Lexer(text)
    scripts: list[str] = []
    while lexer.pos < len(text):
        if text[lexer.pos] in "$`":
            lexer._expansion(scripts)
        elif text[lexer.pos] == "\\":
            lexer.pos += 2
        else:
            lexer.pos += 1
    return scripts


def _ansi_c(body: str) -> str:
    def escape(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU":
            return chr(int(code[1:], 16))
        if code[0].isdigit():
            return chr(int(code, 8) & 0xFF)
        return ANSI_C.get(code, "\\" + code)

    return re.sub(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)",
                  escape, body)


# ---------------------------------------------------------------- parsing

RESERVED_SKIP = frozenset({"!", "{", "}", "then", "else", "elif", "do", "done", "fi", "esac",
                           "if", "while", "until", "coproc"})
CASE_SEPARATORS = (";;", ";&", ";;&")


class _Parser:
    def __init__(self, tokens: list[_Token], depth: int) -> None:
        self.tokens = tokens
        self.depth = depth
        self.index = 0
        self.found: list[Command] = []
        self.nested: list[Command] = []

    def commands(self) -> list[Command]:
        pipeline_start = 0
        piped = False
        group_starts: list[tuple[int, bool]] = []
        while self.index < len(self.tokens):
            token = self.tokens[self.index]
            if token.kind in ("op", "newline"):
                self.index += 1
                previous = self.tokens[self.index - 2].value if self.index > 1 else ""
                if token.kind == "newline" and previous in ("|", "|&", "&&", "||"):
                    continue  # the pipeline or list goes on on the next line
                if token.value in ("|", "|&"):
                    piped = True
                elif token.value in CASE_SEPARATORS:
                    self._case_patterns()
                elif token.value == "(":
                    group_starts.append((pipeline_start, piped))
                elif token.value == ")":
                    if not group_starts:
                        raise ShellSyntaxError("unmatched ')'")
                    pipeline_start, _ = group_starts.pop()
                elif not (group_starts and group_starts[-1][1]):  # not inside `| ( ... )`
                    pipeline_start, piped = len(self.found), False
                continue
            command = self._simple_command()
            if command is not None:
                command.inner = list(self.nested)
                if piped:
                    command.piped_from = self.found[pipeline_start:]
                self.found.append(command)
            self.found.extend(self.nested)
            self.nested = []
            piped = piped and bool(group_starts)
        if group_starts:
            raise ShellSyntaxError("unclosed '('")
        return self.found

    def _simple_command(self) -> Command | None:
        words: list[Word] = []
        redirects: list[Redirect] = []
        while self.index < len(self.tokens):
            token = self.tokens[self.index]
            if token.kind in ("op", "newline"):
                if token.value == "(" and len(words) == 1 and self._next_is(")"):
                    self.index += 2  # name() { body; }: a function definition
                    words = []
                    continue
                break
            self.index += 1
            if token.kind == "redirect":
                redirects.append(self._redirect(token))
                continue
            assert token.word is not None
            self._nest(token.word.scripts)
            if not words and not token.word.quoted and self._skip_reserved(token.value):
                continue
            words.append(token.word)
        argv = [w.text for w in words]
        assignments: list[str] = []
        while argv and ASSIGNMENT.match(argv[0]):
            assignments.append(argv.pop(0))
        if not argv and not redirects and not assignments:
            return None
        return Command(argv, redirects, assignments)

    def _skip_reserved(self, value: str) -> bool:
        """Consume a reserved word at the start of a command; True if it was one."""
        skipped = self._skip_reserved_words(value)
        self.found.extend(self.nested)  # `for x in $(cmd)`: cmd runs before the body
        self.nested = []
        return skipped

    def _skip_reserved_words(self, value: str) -> bool:
        if value in RESERVED_SKIP:
            return True
        if value in ("for", "select", "case"):  # `for x in words; do`: no command yet
            while self.index < len(self.tokens):
                token = self.tokens[self.index]
                if token.kind == "word" and token.word is not None:
                    self._nest(token.word.scripts)
                if token.value in ("do", "in") and value == "case" or token.value == "do":
                    self.index += 1
                    if value == "case":
                        self._case_patterns()
                    return True
                self.index += 1
            return True
        if value == "function":
            self.index += 1  # the name; `()` and the body follow as usual
            return True
        if value == "[[":
            while self.index < len(self.tokens) and self.tokens[self.index].value != "]]":
                token = self.tokens[self.index]
                if token.word is not None:
                    self._nest(token.word.scripts)
                self.index += 1
            self.index += 1
            return True
        return False

    def _case_patterns(self) -> None:
        """After ``in`` or ``;;``: skip ``pattern)`` heads up to the first command."""
        while self.index < len(self.tokens):
            token = self.tokens[self.index]
            if token.value == "esac":
                self.index += 1
                return
            if token.kind == "newline" or token.value in ("(", "|") or token.kind == "word":
                self.index += 1
                continue
            if token.value == ")":
                self.index += 1
                return
            return

    def _redirect(self, token: _Token) -> Redirect:
        if token.heredoc is not None:
            body, expanded = token.heredoc
            self._nest(_substitutions(expanded) if expanded else [])
            return Redirect(token.value, body, token.fd)
        if self.index >= len(self.tokens) or self.tokens[self.index].kind != "word":
            raise ShellSyntaxError(f"redirection {token.value!r} has no target")
        target = self.tokens[self.index].word
        assert target is not None
        self.index += 1
        self._nest(target.scripts)
        return Redirect(token.value, target.text, token.fd)

    def _nest(self, scripts: list[str]) -> None:
        for script in scripts:
            for command in parse(script, self.depth + 1):
                command.nested = True
                self.nested.append(command)

    def _next_is(self, value: str) -> bool:
        index = self.index + 1
        return index < len(self.tokens) and self.tokens[index].value == value
