"""What a word with expansions could become, from what the same command line set.

The parser keeps expansions in their source form (``$R``, ``${X:-rm}``,
``$(echo rm)``). ``Variables`` records every value a command line gives a
variable — assignments, ``export``/``declare``/``local``/``readonly``, ``for``
loops, ``set --``, the arguments of a call to a function it defines (``$@``,
``$1``), ``IFS`` — and ``Variables.resolve(argv)`` lists the argument vectors the
shell could run once the known expansions are replaced: variables, literal
defaults (``${X:-rm}``) and literal substitutions (``$(echo rm)``,
`` `printf rm` ``). Every value is kept, wherever on the line it is given, and
expansions are split on every separator ``IFS`` was given as well as on blanks:
a branch not taken, a later assignment or a quoted expansion can only add
findings, never hide one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice, product

from hermes.tools.shell import Command, ShellSyntaxError, parse, split_words
from hermes.tools.shell_lexer import balanced_end

MAX_VALUES = 64  # per variable, and argument vectors per command
MAX_VARIANTS = 4096  # argument vectors per command line: past that, it cannot be checked
VARIANTS_PER_COMMAND = 16  # ... or this many per command it holds: long scripts get more,
MAX_SCRIPT_VARIANTS = 4 * MAX_VARIANTS  # up to this (the work stays bounded)
DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)(\[[^\]]*\])?\+?=(.*)$", re.DOTALL)
SIMPLE_NAME = re.compile(r"\$([A-Za-z_]\w*|[0-9@*])")
DEFAULTS = re.compile(r"^([A-Za-z_]\w*|[0-9@*])(\[[@*\d]+\])?(?:(:?[-=+])(.*))?$", re.DOTALL)
NAMES = re.compile(r"\$\{?([A-Za-z_]\w*|[0-9@*])")
BLANKS = " \t\n"


def has_expansion(word: str) -> bool:
    """Whether ``word`` holds a ``$`` or backtick expansion in its source form."""
    return "$" in word or "`" in word


@dataclass
class Variables:
    """The values variables are given anywhere in one command line, and the names of
    the functions it defines."""

    values: dict[str, list[str]] = field(default_factory=dict)
    functions: set[str] = field(default_factory=set)
    variants: int = 0
    """Argument vectors handed out so far (``resolve`` stops at ``MAX_VARIANTS``)."""
    overflowed: set[str] = field(default_factory=set)
    """Variables given more values than are kept."""
    commands: int = 0
    """Commands recorded: the budget of argument vectors grows with the line's length."""

    def record(self, command: Command) -> None:
        """Take in one command's assignments, ``export A=1``-style ones, ``set --``, and
        the arguments it passes to a function defined on the line."""
        argv = command.argv
        self.commands += 1
        for assignment in command.assignments:
            self._assign(assignment)
        if command.defines:
            self.functions.add(command.defines)
        elif argv and argv[0] in DECLARERS:
            for arg in argv[1:]:
                if ASSIGNMENT.match(arg):
                    self._assign(arg)
        elif argv[:1] == ["set"] and (argv[1:2] == ["--"] or argv[1:2] and
                                      not argv[1].startswith(("-", "+"))):
            self.set_positional(argv[2:] if argv[1] == "--" else argv[1:])
        elif argv and argv[0] in self.functions:
            self.set_positional(argv[1:])

    def set_positional(self, args: list[str], zero: str | None = None) -> None:
        """``$@``, ``$*``, ``$1``... (and ``$0``) as a script or function receives them."""
        if zero is not None:
            self._add("0", [zero])
        self._add("@", [" ".join(args)])
        self._add("*", [" ".join(args)])
        for index, arg in enumerate(args[:9], start=1):
            self._add(str(index), [arg])

    def resolve(self, argv: list[str]) -> list[list[str]]:
        """The argument vectors ``argv`` could become (none if nothing is known): every
        value of the program word first, each with the first arguments it may get."""
        if not any(has_expansion(word) for word in argv):
            return []
        if set(NAMES.findall(argv[0])) & self.overflowed:  # the program could be any of them
            self.variants = self.budget + 1
            return []
        choices = [[self._split(text) for text in self.expand(word)] or [[word]]
                   if has_expansion(word) else [[word]] for word in argv]
        combos = ([program, *rest] for rest in product(*choices[1:]) for program in choices[0])
        found = [[part for fields in combo for part in fields]
                 for combo in islice(combos, MAX_VALUES)]
        variants = [variant for variant in found if variant != argv]
        self.variants += len(variants)
        return variants

    @property
    def exhausted(self) -> bool:
        """More argument vectors than can be checked were asked for."""
        return self.variants > self.budget

    @property
    def budget(self) -> int:
        """Argument vectors that may be checked: ``MAX_VARIANTS``, or more for a long
        script (a few per command, up to ``MAX_SCRIPT_VARIANTS``), so a long script's length
        alone does not make it fail."""
        return min(max(MAX_VARIANTS, VARIANTS_PER_COMMAND * self.commands), MAX_SCRIPT_VARIANTS)

    def expand(self, word: str) -> list[str]:
        """The texts ``word`` could expand to (before splitting); [] if a part is unknown."""
        pieces: list[list[str]] = []
        for literal, expansion in _segments(word):
            pieces.append([literal])
            if expansion:
                values = self._expansion(expansion)
                if not values:
                    return []
                pieces.append(values)
        return ["".join(combo) for combo in islice(product(*pieces), MAX_VALUES)]

    def _assign(self, assignment: str) -> None:
        match = ASSIGNMENT.match(assignment)
        if match is None:
            return
        name, value = match.group(1), match.group(3)
        if value.startswith("(") and value.endswith(")"):  # arr=(rm -rf /)
            values = [" ".join(split_words(value[1:-1]))]
        else:
            values = self.expand(value) if has_expansion(value) else [value]
        self._add(name, values)

    def _add(self, name: str, values: list[str]) -> None:
        known = self.values.setdefault(name, [])
        known.extend(v for v in values if v not in known)
        if len(known) > MAX_VALUES:
            self.overflowed.add(name)
            del known[MAX_VALUES:]

    def _expansion(self, source: str) -> list[str]:
        if source.startswith(("$((", "$[")):
            return []  # arithmetic: a number, never a program worth knowing
        if source.startswith("$("):
            return self._output(source[2:-1])
        if source.startswith("`"):
            return self._output(re.sub(r"\\([`$\\])", r"\1", source[1:-1]))
        if source.startswith("${"):
            return self._parameter(source[2:-1])
        return list(self.values.get(source[1:], []))

    def _parameter(self, body: str) -> list[str]:
        """``${NAME}``, ``${NAME:-word}``, ``${NAME:+word}``, ``${arr[@]}``."""
        match = DEFAULTS.match(body)
        if match is None:
            return []  # ${#x}, ${x/a/b}, ${!x}: not worked out
        name, _, operator, word = match.groups()
        known = list(self.values.get(name, []))
        if operator is None:
            return known
        alternative = self.expand(" ".join(split_words(word)))
        if operator.endswith("+"):
            return [*alternative, ""] if alternative else []
        return known + [a for a in alternative if a not in known]

    def _output(self, script: str) -> list[str]:
        """What ``$(echo rm)`` or ``$(printf %s rm)`` prints; [] for anything else."""
        try:
            commands = parse(script)
        except ShellSyntaxError:
            return []
        if len(commands) != 1 or commands[0].redirects or not commands[0].argv:
            return []
        name, *args = commands[0].argv
        if name == "echo":
            while args and re.fullmatch(r"-[neE]+", args[0]):
                args = args[1:]
            return self.expand(" ".join(args))
        if name == "printf" and args:
            fmt, rest = args[0].replace("\\n", ""), args[1:]
            if fmt == "%s":
                return self.expand("".join(rest))
            return self.expand(fmt) if "%" not in fmt else []
        return []

    def _split(self, text: str) -> list[str]:
        separators = BLANKS + "".join(self.values.get("IFS", []))
        return [part for part in re.split(f"[{re.escape(separators)}]+", text) if part]


def _segments(word: str) -> Iterator[tuple[str, str]]:
    """``(literal text, expansion source)`` pairs along ``word``."""
    index, start = 0, 0
    while index < len(word):
        end = _expansion_end(word, index)
        if end is None:
            index += 1
            continue
        yield word[start:index], word[index:end]
        index = start = end
    yield word[start:], ""


def _expansion_end(word: str, index: int) -> int | None:
    """Where the expansion starting at ``index`` ends, or None if none starts there."""
    char, nxt = word[index], word[index + 1:index + 2]
    try:
        if char == "`":
            end = word.find("`", index + 1)
            return end + 1 if end > 0 else None
        if char != "$":
            return None
        if word.startswith("$((", index):
            return balanced_end(word, index + 3, "((", "))") + 2
        if nxt in "({":
            pair = ("(", ")") if nxt == "(" else ("{", "}")
            return balanced_end(word, index + 2, *pair) + 1
    except ShellSyntaxError:
        return None
    match = SIMPLE_NAME.match(word, index)
    return match.end() if match else None
