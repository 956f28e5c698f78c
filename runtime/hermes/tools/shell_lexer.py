"""Splitting shell text into tokens: words (quotes removed, expansions kept in their
source form, the scripts of substitutions collected), operators, redirections and
here-documents. ``hermes.tools.shell`` parses the tokens into commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hermes.tools.shell_braces import expand_braces, unescape

OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "(", ")")
REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)")
META = frozenset(" \t\n;&|()<>")
ANSI_C = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
          "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*\+?=")


class ShellSyntaxError(ValueError):
    """The text is not a command a shell would run (unclosed quote, bracket, ...)."""

    def __init__(self, message: str, pos: int | None = None) -> None:
        super().__init__(message)
        self.pos = pos
        """Where the construct that fails starts in the text parsed, if known."""


@dataclass
class Word:
    """One shell word: its text with quotes removed, and the scripts it runs."""

    text: str
    scripts: list[str] = field(default_factory=list)
    """Bodies of ``$(...)``, backticks and process substitutions inside the word."""
    quoted: bool = False
    pattern: str = ""
    """The text with every quoted or expanded character backslash-escaped: what is
    left bare is subject to brace expansion and globbing."""

    def fields(self) -> list[str]:
        """The words it becomes after brace expansion (``a{b,c}`` is ``ab ac``)."""
        if "{" not in self.pattern:
            return [self.text]
        return [unescape(word) for word in expand_braces(self.pattern)
                if word or self.quoted]



@dataclass
class Token:
    kind: str  # "word", "op", "redirect", "newline"
    value: str
    word: Word | None = None
    fd: str = ""
    heredoc: list[str] | None = None  # filled when the body is read
    pos: int = 0  # where it starts in the text


class Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.pending_heredocs: list[tuple[Token, str, bool, bool]] = []

    def tokens(self) -> list[Token]:
        found: list[Token] = []
        while True:
            start = self.pos
            try:
                token = self._next()
            except ShellSyntaxError as exc:
                # nested lexers report no position: the token that fails starts here
                raise ShellSyntaxError(str(exc), start) from exc
            if token is None:
                break
            found.append(token)
        if self.pending_heredocs:  # bash warns but runs: the body is the rest
            self._read_heredocs()
        return found

    def _next(self) -> Token | None:
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
                return Token("newline", "\n")
            else:
                pos = self.pos
                token = self._token()
                token.pos = pos
                return token
        return None

    def _token(self) -> Token:
        text, pos = self.text, self.pos
        redirect = REDIRECT.match(text, pos)
        if redirect and not (text.startswith("<(", pos) or text.startswith(">(", pos)):
            self.pos = redirect.end()
            token = Token("redirect", redirect.group(2), fd=redirect.group(1))
            if token.value in ("<<", "<<-"):
                self._heredoc(token)
            return token
        if text.startswith("((", pos):
            body = self._balanced(pos + 2, "((", "))")
            return Token("word", "((", Word("((arith))", substitutions(body)))
        for op in OPERATORS:
            if text.startswith(op, pos):
                self.pos += len(op)
                return Token("op", op)
        word = self._word()
        return Token("word", word.text, word)

    def _heredoc(self, token: Token) -> None:
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
        bare: list[bool] = []  # per part: unquoted text the shell brace-expands and globs
        scripts: list[str] = []
        quoted = False
        while self.pos < len(text):
            char = text[self.pos]
            if char in META:
                if char in "<>" and text.startswith("(", self.pos + 1):
                    body = self._balanced(self.pos + 2, "(", ")")
                    scripts.append(body)
                    parts.append("/dev/fd/63")
                    bare.append(False)
                    continue
                if char == "(" and ARRAY_ASSIGNMENT.fullmatch("".join(parts)):
                    body = self._balanced(self.pos + 1, "(", ")")  # arr=(a b c)
                    scripts.extend(substitutions(body))
                    parts.append(f"({body})")
                    bare.append(False)
                    continue
                break
            if char == "\\":
                nxt = text[self.pos + 1:self.pos + 2]
                self.pos += 2
                quoted = True
                if nxt != "\n":
                    parts.append(nxt)
                    bare.append(False)
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unclosed single quote")
                parts.append(text[self.pos + 1:end])
                bare.append(False)
                self.pos = end + 1
                quoted = True
            elif char == '"':
                self.pos += 1
                parts.append(self._double_quoted(scripts))
                bare.append(False)
                quoted = True
            elif char == "$" or char == "`":
                parts.append(self._expansion(scripts))
                bare.append(False)
            else:
                parts.append(char)
                bare.append(True)
                self.pos += 1
        pattern = "".join(p if b else re.sub(r"(.)", r"\\\1", p, flags=re.DOTALL)
                          for p, b in zip(parts, bare, strict=True))
        return Word("".join(parts), scripts, quoted, pattern)

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
            scripts.extend(substitutions(self._balanced(start + 3, "((", "))")))
        elif nxt == "(":
            scripts.append(self._balanced(start + 2, "(", ")"))
        elif nxt == "{":
            scripts.extend(substitutions(self._balanced(start + 2, "{", "}")))
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
        end = balanced_end(self.text, start, opening, closing)
        self.pos = end + len(closing)
        return self.text[start:end]


def balanced_end(text: str, start: int, opening: str, closing: str) -> int:
    """Where the ``closing`` matching an ``opening`` just before ``start`` begins. Only a
    script in parentheses has comments: in ``${...}`` a ``#`` is an operator (``${#s}``,
    ``${s#x}``) and arithmetic has none."""
    depth, pos = 1, start
    comments = opening == "("
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
            pos = balanced_end(text, pos + 3, "((", "))") + 2
        elif text.startswith("$(", pos) or text.startswith("${", pos):
            pair = ("(", ")") if text[pos + 1] == "(" else ("{", "}")
            pos = balanced_end(text, pos + 2, *pair) + 1
        elif text[pos] == "\\":
            pos += 2
        elif text[pos] in "'\"`":
            pos = _skip_quoted(text, pos)
        elif comments and text[pos] == "#" and (pos == start or text[pos - 1] in " \t\n"):
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


def substitutions(text: str) -> list[str]:
    """Scripts of the ``$(...)`` and backticks inside ``text`` (a ``${...}`` or
    ``$((...))`` body, or an unquoted here-document)."""
    lexer = Lexer(text)
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
