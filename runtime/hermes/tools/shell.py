"""A shell parser for safety checks: every simple command a POSIX shell or bash would run.

``parse(script)`` returns the simple commands of ``script`` in order, including
those inside pipelines, lists, subshells, ``{ ...; }`` groups, ``if``/``while``/
``for``/``case`` bodies, ``$(...)``, backticks, ``<(...)``/``>(...)``, ``${...}``
and ``$((...))`` expansions and unquoted here-documents. Quoting is removed as
the shell would (``r""m`` is ``rm``, ``$'\\x72m'`` is ``rm``), unquoted braces are
expanded (``{rm,-rf,/}`` is three words); expansions are kept in their source form
(``$HOME``), for the caller to resolve what it can. ``for NAME in WORDS`` is
reported as assignments of each word to ``NAME``, ``name() { ...; }`` as a
command that ``defines`` the name before the commands of its body.

It errs on the side of finding commands, and refuses (``ShellSyntaxError``) what
a shell would refuse too: an unclosed quote, substitution or parenthesis.
``parse_runnable`` returns what a shell runs anyway: the lines before the error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hermes.tools.shell_lexer import Lexer, ShellSyntaxError, Token, Word, substitutions

__all__ = ["Command", "Redirect", "ShellSyntaxError", "Word", "parse", "parse_runnable",
           "split_words"]

MAX_DEPTH = 25
MAX_SALVAGE = 16
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*(\[[^\]]*\])?\+?=")


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
    defines: str = ""
    """The name of the function this defines (``name() { ...; }``); its body follows."""


def parse(script: str, depth: int = 0) -> list[Command]:
    """Every simple command in ``script`` (nested ones after the one holding them)."""
    if depth > MAX_DEPTH:
        raise ShellSyntaxError("commands nested too deeply to check")
    return _Parser(Lexer(script).tokens(), depth).commands()


def split_words(text: str) -> list[str]:
    """The words of ``text`` as a shell splits and unquotes them (blanks if it cannot)."""
    try:
        return [word for command in parse(text) if not command.nested
                for word in [*command.assignments, *command.argv]]
    except ShellSyntaxError:
        return text.split()


def parse_runnable(script: str) -> tuple[list[Command], ShellSyntaxError | None]:
    """The commands a shell runs from ``script``, and the syntax error that stops it.

    A shell reads and runs one line at a time, so the lines before one it cannot
    parse still run: ``rm -rf /`` followed by an unclosed quote deletes first."""
    text, first = script, None
    for _ in range(MAX_SALVAGE):
        try:
            return parse(text), first
        except ShellSyntaxError as exc:
            first = first or exc
            cut = text.rfind("\n", 0, exc.pos) if exc.pos is not None else -1
            if cut < 0:
                break
            text = text[:cut]
    return [], first


# ---------------------------------------------------------------- parsing

RESERVED_SKIP = frozenset({"!", "{", "}", "then", "else", "elif", "do", "done", "fi", "esac",
                           "if", "while", "until", "coproc"})
CASE_SEPARATORS = (";;", ";&", ";;&")


class _Parser:
    def __init__(self, tokens: list[Token], depth: int) -> None:
        self.tokens = tokens
        self.depth = depth
        self.index = 0
        self.found: list[Command] = []
        self.nested: list[Command] = []

    def commands(self) -> list[Command]:
        pipeline_start = 0
        piped = False
        group_starts: list[tuple[int, bool]] = []
        opened: list[int] = []  # where each open ``(`` is, for the error
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
                    opened.append(token.pos)
                elif token.value == ")":
                    if not group_starts:
                        raise ShellSyntaxError("unmatched ')'", token.pos)
                    pipeline_start, _ = group_starts.pop()
                    opened.pop()
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
            raise ShellSyntaxError("unclosed '('", opened[0])
        return self.found

    def _simple_command(self) -> Command | None:
        words: list[Word] = []
        redirects: list[Redirect] = []
        while self.index < len(self.tokens):
            token = self.tokens[self.index]
            if token.kind in ("op", "newline"):
                if token.value == "(" and len(words) == 1 and self._next_is(")"):
                    self.index += 2  # name() { body; }: a function definition
                    self.found.append(Command([], defines=words.pop().text))
                    continue
                break
            self.index += 1
            if token.kind == "redirect":
                redirects.append(self._redirect(token))
                continue
            assert token.word is not None
            self._nest(token.word.scripts, token.pos)
            if not words and not token.word.quoted and self._skip_reserved(token):
                continue
            words.append(token.word)
        assignments: list[str] = []
        while words and ASSIGNMENT.match(words[0].text):
            assignments.append(words.pop(0).text)
        argv = [text for word in words for text in word.fields()]
        if not argv and not redirects and not assignments:
            return None
        return Command(argv, redirects, assignments)

    def _skip_reserved(self, token: Token) -> bool:
        """Consume a reserved word at the start of a command; True if it was one."""
        skipped = self._skip_reserved_words(token)
        self.found.extend(self.nested)  # `for x in $(cmd)`: cmd runs before the body
        self.nested = []
        return skipped

    def _skip_reserved_words(self, reserved: Token) -> bool:
        value = reserved.value
        if value in RESERVED_SKIP:
            return True
        if value in ("for", "select", "case"):  # `for x in words; do`: no command yet
            head: list[Word] = []
            while self.index < len(self.tokens):
                token = self.tokens[self.index]
                if token.kind == "word" and token.word is not None:
                    self._nest(token.word.scripts, token.pos)
                    head.append(token.word)
                if token.value in ("do", "in") and value == "case" or token.value == "do":
                    self.index += 1
                    if value == "case":
                        self._case_patterns()
                    else:
                        self._loop_assignments(head[:-1])
                    return True
                self.index += 1
            return True
        if value == "function":  # the name; `()` and the body follow as usual
            if self.index < len(self.tokens) and self.tokens[self.index].word is not None:
                self.found.append(Command([], defines=self.tokens[self.index].value))
            self.index += 1
            return True
        if value == "[[":
            while self.index < len(self.tokens) and self.tokens[self.index].value != "]]":
                token = self.tokens[self.index]
                if token.word is not None:
                    self._nest(token.word.scripts, token.pos)
                self.index += 1
            self.index += 1
            return True
        return False

    def _loop_assignments(self, head: list[Word]) -> None:
        """``for NAME in WORDS``: NAME takes each word, as if assigned in turn."""
        if len(head) < 2 or head[1].text != "in":
            return
        name = head[0].text
        values = [text for word in head[2:] for text in word.fields()]
        self.nested.append(Command([], assignments=[f"{name}={value}" for value in values]))

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

    def _redirect(self, token: Token) -> Redirect:
        if token.heredoc is not None:
            body, expanded = token.heredoc
            try:
                scripts = substitutions(expanded) if expanded else []
            except ShellSyntaxError as exc:
                raise ShellSyntaxError(str(exc), token.pos) from exc
            self._nest(scripts, token.pos)
            return Redirect(token.value, body, token.fd)
        if self.index >= len(self.tokens) or self.tokens[self.index].kind != "word":
            raise ShellSyntaxError(f"redirection {token.value!r} has no target", token.pos)
        target = self.tokens[self.index].word
        assert target is not None
        self.index += 1
        self._nest(target.scripts, token.pos)
        return Redirect(token.value, target.text, token.fd)

    def _nest(self, scripts: list[str], pos: int) -> None:
        """Parse the substitutions of the word at ``pos``; their errors are at ``pos``."""
        for script in scripts:
            try:
                commands = parse(script, self.depth + 1)
            except ShellSyntaxError as exc:
                raise ShellSyntaxError(str(exc), pos) from exc
            for command in commands:
                command.nested = True
                self.nested.append(command)

    def _next_is(self, value: str) -> bool:
        index = self.index + 1
        return index < len(self.tokens) and self.tokens[index].value == value
