"""One command line, walked in order as the shell would run it.

``Walk(where).judged(commands)`` yields each command with the places it may run
in (``danger_places.Places``: after ``cd /``, ``rm -rf *`` is judged in ``/``),
and the commands it leads to after it:

- the literal script a program runs though it is no shell (``danger_escapes``:
  ``awk 'BEGIN{system("rm -rf x")}'`` leads to ``rm -rf x``);
- a script the same line wrote and then runs (``echo 'rm -rf x' > s.sh; sh s.sh``):
  when what it wrote is known (``echo``, ``printf``, a here-document), that text
  is checked as the script; when it is not (``base64 -d > s.sh``, a download,
  a copy), running it is a finding of its own (``run_new_script``, or
  ``pipe_to_shell`` for a download), in ``Walk.findings``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from hermes.tools.commands import (
    SHELLS,
    SimpleCommand,
    is_option,
    read_command_line,
    shell_inline_script,
    shell_operands,
)
from hermes.tools.danger_escapes import AWK_NAMES, escapes
from hermes.tools.danger_modes import Finding
from hermes.tools.danger_paths import Whereabouts, expand, write_targets
from hermes.tools.danger_places import Places, absolute_path
from hermes.tools.danger_rules import FETCHERS, interpreter_family

MAX_FOLLOWED = 32
"""Scripts followed per command line (escapes and written scripts); past that, the
line cannot be checked."""
MAX_DEPTH = 4
DELETERS = frozenset({"rm", "unlink", "shred", "srm", "rmdir"})


@dataclass
class Written:
    """A file the command line wrote."""

    text: str | None
    """What it holds, when the line wrote it from literal text; else None."""
    downloaded: bool = False


@dataclass
class Walk:
    """The walk of one command line."""

    where: Whereabouts
    findings: list[Finding] = field(default_factory=list)
    places: Places = field(init=False)
    written: dict[str, Written] = field(default_factory=dict)
    followed: int = 0

    def __post_init__(self) -> None:
        self.places = Places(self.where)

    def judged(self, commands: list[SimpleCommand],
               depth: int = 0) -> Iterator[tuple[SimpleCommand, list[Whereabouts]]]:
        """Each command with the places it may run in, each followed by the
        commands of the scripts it leads to."""
        for cmd in commands:
            places = self.places.current()
            yield cmd, places
            self.places.see(cmd)
            for how, script in self._scripts(cmd, places):
                yield from self._follow(cmd, how, script, depth)
            self._record_writes(cmd, places)
        if depth == 0 and self.places.overflowed:
            self.findings.append(("unparseable", "it changes directory more often than can "
                                                 "be checked"))

    def _follow(self, cmd: SimpleCommand, how: str, script: str,
                depth: int) -> Iterator[tuple[SimpleCommand, list[Whereabouts]]]:
        self.followed += 1
        if depth >= MAX_DEPTH or self.followed > MAX_FOLLOWED:
            self.findings.append(("unparseable", "it runs more scripts than can be checked"))
            return
        line = read_command_line(script)
        self.findings.extend(("unparseable", f"the script run by {how} cannot be checked "
                                             f"({error})") for error in line.errors)
        inner = [replace(c, via=(*cmd.via, how, *c.via)) for c in line.commands]
        yield from self.judged(inner, depth + 1)

    def _scripts(self, cmd: SimpleCommand, places: list[Whereabouts]) -> Iterator[tuple[str, str]]:
        """``(how, script)`` of each script ``cmd`` leads to; findings for the others."""
        for escape in escapes(cmd):
            if escape.script is not None:
                yield escape.how, escape.script
        path, runner = run_file(cmd)
        if path is None:
            return
        for place in places:
            written = self.written.get(absolute_path(expand(path, place), place.cwd))
            if written is None:
                continue
            if written.text is not None and runner == "shell":
                yield f"{path} (written on this line)", written.text
            elif written.text is not None:
                self.findings.append(("shell_code", f"runs code written on this line "
                                                    f"({cmd.name} {path})"))
            elif written.downloaded:
                self.findings.append(("pipe_to_shell", f"runs {path}, downloaded on this line"))
            else:
                self.findings.append(("run_new_script", f"runs {path}, which this line wrote "
                                                        "with contents that are not known"))
            return

    def _record_writes(self, cmd: SimpleCommand, places: list[Whereabouts]) -> None:
        if cmd.name in DELETERS:
            return
        known = written_text(cmd)
        downloaded = cmd.name in FETCHERS or bool(set(cmd.piped_from) & FETCHERS)
        for target in write_targets(cmd):
            for place in places:
                path = absolute_path(expand(target, place), place.cwd)
                text = known.get(target)
                before = self.written.get(path)
                if before is not None and _appends(cmd, target):  # what it held stays
                    text = None if before.text is None or text is None else before.text + text
                    self.written[path] = Written(text, downloaded or before.downloaded)
                else:
                    self.written[path] = Written(text, downloaded)


def run_file(cmd: SimpleCommand) -> tuple[str | None, str]:
    """``(the file cmd runs as a script, "shell" or "code")``: ``sh f``, ``. f``,
    ``./f``, ``python3 f``, ``awk -f f``, ``at -f f``."""
    name, args = cmd.name, cmd.args
    if name in SHELLS and shell_inline_script(args) is None:
        operands = shell_operands(args)
        return (operands[0], "shell") if operands and operands[0] != "-" else (None, "")
    if name in ("source", ".") and args:
        return args[0], "shell"
    if name in ("at", "batch") or name in AWK_NAMES:
        script = _option_value(args, "-f")
        return (script, "shell" if name in ("at", "batch") else "code") if script else (None, "")
    if interpreter_family(name) is not None and "-m" not in args:
        operands = [a for a in args if not is_option(a)]
        return (operands[0], "code") if operands else (None, "")
    if "/" in cmd.program and not cmd.computed:
        return cmd.program, "shell"
    return None, ""


def _option_value(args: list[str], option: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == option and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(option) and len(arg) > len(option):
            return arg[len(option):]
    return None


def written_text(cmd: SimpleCommand) -> dict[str, str]:
    """The files ``cmd`` writes from literal text, with that text: ``echo TEXT > f``,
    ``printf TEXT > f``, ``cat > f <<EOF``, ``tee f <<EOF``."""
    text = _output_text(cmd)
    if text is None:
        return {}
    files = [r.target for r in cmd.redirects if r.op in (">", ">>", ">|", "&>", "&>>")]
    if cmd.name == "tee":
        files += [a for a in cmd.args if not is_option(a)]
    return dict.fromkeys(files, text)


def _output_text(cmd: SimpleCommand) -> str | None:
    name, args = cmd.name, cmd.args
    if name == "echo":
        while args and re.fullmatch(r"-[nE]+", args[0]):
            args = args[1:]
        return None if args[:1] and re.fullmatch(r"-[neE]*e[neE]*", args[0]) else \
            " ".join(args) + "\n"
    if name == "printf" and args:
        form = args[0]
        if form in ("%s\\n", "%s\n"):
            return "".join(f"{a}\n" for a in args[1:])
        if "%" not in form and not re.search(r"\\[^n]", form):
            return form.replace("\\n", "\n")
        return None
    if name in ("cat", "tee") and cmd.stdin_script is not None and \
            not [a for a in args if not is_option(a) and name == "cat" and a != "-"]:
        return cmd.stdin_script
    return None


def _appends(cmd: SimpleCommand, target: str) -> bool:
    return any(r.target == target and r.op in (">>", "&>>") for r in cmd.redirects) or \
        (cmd.name == "tee" and any(a in ("-a", "--append") for a in cmd.args))
