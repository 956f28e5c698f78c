"""Shell command text made easy to judge: normalised text and simple commands.

Detection must see through the cheap disguises: backslash-newline
continuations, runs of whitespace, quoting (``r""m -rf "/"``), wrappers
(``sudo``, ``env``, ``nohup``, ``timeout 5``), absolute program paths
(``/bin/rm``) and nested shells (``sh -c '...'``, ``eval``). This is not a
shell parser; when in doubt it errs towards finding a command.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

CONTINUATION = re.compile(r"\\\r?\n")
# A line ending in a pipe or && / || continues on the next line.
OPEN_OPERATOR = re.compile(r"(\||&&)[ \t]*\r?\n")
OPERATOR_CHARS = ";&|()<>"
GROUP_WORDS = frozenset({"{", "}", "!", "then", "do", "else", "elif"})
WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time",
                      "nice", "ionice", "stdbuf", "timeout", "xargs", "watch", "setsid"})
# Wrapper options that take a value, so the value is not mistaken for the program.
WRAPPER_VALUE_OPTIONS: Mapping[str, frozenset[str]] = MappingProxyType({
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"}),
    "nice": frozenset({"-n"}), "ionice": frozenset({"-c", "-n"}), "env": frozenset({"-u", "-C"}),
    "timeout": frozenset({"-s", "-k"}), "watch": frozenset({"-n", "-d"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-d", "-s", "-a", "-E"}),
})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh"})
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


@dataclass
class SimpleCommand:
    """One program invocation: its name (basename), arguments and output redirections."""

    name: str
    args: list[str] = field(default_factory=list)
    redirects: list[str] = field(default_factory=list)


def normalise(command: str) -> str:
    """Join continuation lines and collapse whitespace (newlines become ``;``)."""
    joined = OPEN_OPERATOR.sub(r"\1 ", CONTINUATION.sub(" ", command))
    return re.sub(r"\s+", " ", re.sub(r"\s*\n\s*", " ; ", joined)).strip()


def dequote(text: str) -> str:
    """``text`` without quote characters and backslashes, for pattern matching."""
    return re.sub(r"\s+", " ", re.sub(r"[\"'\\]", "", text))


def simple_commands(command: str, depth: int = 0) -> list[SimpleCommand]:
    """Every simple command in ``command``, including those inside ``sh -c`` and ``eval``."""
    found: list[SimpleCommand] = []
    for words in _split(_tokens(normalise(command).replace("`", " ; "))):
        parsed = _parse(words)
        if parsed is None:
            continue
        found.append(parsed)
        inner = _nested_script(parsed)
        if inner and depth < 5:
            found.extend(simple_commands(inner, depth + 1))
    return found


def _tokens(text: str) -> list[str]:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=OPERATOR_CHARS)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # an unclosed quote: judge the text with quotes removed
        return _tokens(dequote(text)) if re.search(r"[\"'\\]", text) else text.split()


def _split(tokens: list[str]) -> list[list[str]]:
    """Cut the token stream at command separators, keeping redirection operators."""
    commands: list[list[str]] = [[]]
    for token in tokens:
        is_operator = all(char in OPERATOR_CHARS for char in token)
        is_redirect = set(token) <= set("<>&") and token not in ("&", "&&")
        # Words that start a command list (``{ cmd; }``, ``if x; then cmd``) end one too.
        if (is_operator and not is_redirect) or token in GROUP_WORDS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [words for words in commands if words]


def _parse(words: list[str]) -> SimpleCommand | None:
    argv: list[str] = []
    redirects: list[str] = []
    pending_redirect = False
    for word in words:
        if pending_redirect:
            redirects.append(word)
            pending_redirect = False
        elif set(word) <= set("<>&"):
            pending_redirect = ">" in word
        else:
            argv.append(word)
    argv = _unwrap(argv)
    if not argv:
        return SimpleCommand("", [], redirects) if redirects else None
    return SimpleCommand(posixpath.basename(argv[0]), argv[1:], redirects)


def _unwrap(argv: list[str]) -> list[str]:
    """Drop leading variable assignments and wrappers like ``sudo -u root``."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if ASSIGNMENT.match(word):
            index += 1
            continue
        name = posixpath.basename(word)
        if name not in WRAPPERS:
            break
        index += 1
        value_options = WRAPPER_VALUE_OPTIONS.get(name, frozenset())
        while index < len(argv) and (argv[index].startswith("-") or _is_number(argv[index])
                                     or ASSIGNMENT.match(argv[index])):
            index += 2 if argv[index] in value_options else 1
    return argv[index:]


def _is_number(word: str) -> bool:
    return bool(re.fullmatch(r"\d+(\.\d+)?[smhd]?", word))


def _nested_script(command: SimpleCommand) -> str | None:
    """The script run by ``sh -c SCRIPT`` or ``eval WORDS``, if this is one."""
    if command.name == "eval":
        return " ".join(command.args)
    if command.name in SHELLS:
        for index, arg in enumerate(command.args[:-1]):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
                return command.args[index + 1]
    return None
