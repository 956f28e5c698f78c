"""Shell commands as the safety checks see them: every program a command line would run.

``read_command_line(text)`` cleans the text of disguises a terminal or shell
would see through (full-width letters, ANSI escapes, control characters,
``$IFS`` for a space), parses it as a shell would (``hermes.tools.shell``), then
unwraps each simple command: leading assignments and wrappers (``sudo``,
``env``, ``nice -n 5``, ``timeout 10``, ``xargs``, ...) are dropped and
recorded in ``via``; scripts that a command hands to a shell (``sh -c``,
``eval``, ``su -c``, ``ssh host CMD``, ``watch CMD``, ``find -exec CMD ;``,
``parallel CMD ::: ARGS``, ``trap``, ``alias``, git's ``!`` aliases, a
here-document fed to ``bash``) are parsed in turn and follow it.

A program whose name is not a literal (``$R``, ``$(echo rm)``, ``/bin/r?``,
xargs' ``{}``) is marked ``computed``; where the same command line tells what it
expands to (``R=rm; $R``), the command it becomes follows it too
(``hermes.tools.expansion``).

Text no shell would run is reported in ``CommandLine.errors``, with the commands
a shell runs anyway (the lines before the error); callers treat errors as
dangerous, never as safe.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import NamedTuple

from hermes.tools.expansion import Variables
from hermes.tools.launchers import git_scripts, parallel_script
from hermes.tools.shell import Command, Redirect, ShellSyntaxError, parse_runnable, split_words

__all__ = ["CommandLine", "SimpleCommand", "ShellSyntaxError", "clean", "is_option",
           "read_command_line", "split_options"]

MAX_CHARS = 100_000
MAX_NESTING = 8
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]"
                  r"|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07]*\x07?")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
IFS = re.compile(r"\$\{IFS(?::[^}]*)?\}|\$IFS(?!\w)")
WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time",
                      "nice", "ionice", "stdbuf", "timeout", "xargs", "watch", "setsid",
                      "chroot", "flock", "unbuffer", "busybox", "toybox", "caffeinate",
                      "taskset", "chrt", "systemd-run", "proxychains", "proxychains4",
                      "torsocks", "firejail", "strace", "ltrace", "catchsegv", "nsenter",
                      "unshare", "runuser", "sg", "pkexec", "run0"})
# Wrapper options that take a value, so the value is not mistaken for the program.
VALUE_OPTIONS: Mapping[str, frozenset[str]] = MappingProxyType({
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}), "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}), "env": frozenset({"-u", "-C"}),
    "timeout": frozenset({"-s", "-k"}), "watch": frozenset({"-n", "-d"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-L", "-l", "-d", "-s", "-a", "-E", "-e"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}), "taskset": frozenset({"-c"}),
    "chrt": frozenset({"-p"}), "systemd-run": frozenset({"-p", "-u", "-E", "--unit"}),
    "flock": frozenset({"-w", "-E", "-c"}), "strace": frozenset({"-e", "-o", "-p", "-s"}),
    "runuser": frozenset({"-u", "-g", "-l"}), "sg": frozenset(),
    "nsenter": frozenset({"-t"}), "firejail": frozenset(), "exec": frozenset({"-a"}),
    "pkexec": frozenset({"--user"}), "run0": frozenset({"-u", "-g", "-D", "--unit",
                                                       "--property", "--setenv", "--slice"}),
})
# Wrappers whose first operand is not the program: ``chroot DIR cmd``, ``flock FILE cmd``.
LEADING_OPERANDS: Mapping[str, int] = MappingProxyType({"chroot": 1, "flock": 1, "taskset": 1,
                                                         "chrt": 1, "sg": 1})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "csh", "tcsh",
                    "yash", "rbash"})
SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--init-file", "--rcfile"})
SSH_VALUE_OPTIONS = frozenset({"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L",
                               "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B"})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# A program's name is computed when it holds an expansion, a glob, or the ``{}``
# that xargs -I, find -exec and parallel replace.
COMPUTED_NAME = re.compile(r"[$`*?]|\[[^\]]*\]|\{\}")


@dataclass
class SimpleCommand:
    """One program a command line runs, unwrapped."""

    name: str
    """The program's basename (``/bin/rm`` is ``rm``)."""
    args: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    via: tuple[str, ...] = ()
    """Wrappers and launchers it ran under: ``sudo``, ``xargs``, ``find -exec``, ``sh -c``."""
    piped_from: tuple[str, ...] = ()
    """Names of the programs whose output is piped into this one."""
    inner: tuple[str, ...] = ()
    """Names of the programs run by substitutions in its own words (``$(curl ...)``)."""
    program: str = ""
    """The program as written (``./run.sh``, ``/usr/bin/rm``)."""
    computed: bool = False
    """Its name is not a literal: an expansion (``$R``, ``$(echo rm)``), a glob
    (``/bin/r?``) or a string xargs replaces (``{}``)."""

    @property
    def output_files(self) -> list[str]:
        """Files its redirections write (``>``, ``>>``, ``&>``, ``>|``, ``<>``)."""
        writes = (">", ">>", "&>", "&>>", ">|", "<>")
        return [r.target for r in self.redirects
                if r.op in writes or (r.op == ">&" and not r.target.isdigit()
                                      and r.target != "-")]

    @property
    def stdin_script(self) -> str | None:
        """The text of a here-document or here-string, if it feeds stdin."""
        for redirect in self.redirects:
            if redirect.op in ("<<", "<<-", "<<<") and redirect.fd in ("", "0"):
                return redirect.target
        return None


def clean(text: str) -> str:
    """``text`` as a terminal shows it and a shell splits it: NFKC letters, no ANSI
    escapes or control characters, ``$IFS`` as a space, Unix line ends."""
    text = ANSI.sub("", text.replace("\r\n", "\n"))
    text = CONTROL.sub("", unicodedata.normalize("NFKC", text))
    return IFS.sub(" ", text)


@dataclass
class CommandLine:
    """What a command line runs, as far as it can be read."""

    commands: list[SimpleCommand] = field(default_factory=list)
    """Every program it would run, including those in scripts it hands on."""
    errors: list[str] = field(default_factory=list)
    """Why a part could not be read (the commands before it are still listed)."""


def read_command_line(text: str) -> CommandLine:
    """Every program ``text`` would run, including those inside scripts it hands on."""
    line = CommandLine()
    if len(text) > MAX_CHARS:
        line.errors.append(f"command longer than {MAX_CHARS} characters")
        return line
    _read_script(clean(text), (), 0, line, Variables())
    return line


def _read_script(script: str, via: tuple[str, ...], depth: int, line: CommandLine,
                 variables: Variables) -> None:
    if depth > MAX_NESTING:
        line.errors.append("scripts nested too deeply to check")
        return
    commands, error = parse_runnable(script)
    for command in commands:  # first every value, so a later assignment counts too
        variables.record(command)
    for command in commands:
        variants = [] if variables.exhausted else variables.resolve(command.argv)
        for argv in [command.argv, *variants]:
            for simple in _unwrap(replace(command, argv=argv), via):
                line.commands.append(simple)
                handed = _handed_script(simple)
                if handed is None:
                    continue
                if handed.arguments:  # `sh -c SCRIPT $0 $1 ...`
                    variables.set_positional(list(handed.arguments[1:]), handed.arguments[0])
                _read_script(handed.script, (*simple.via, handed.how), depth + 1, line,
                             variables)
    if error is not None:
        line.errors.append(str(error))
    if variables.exhausted:
        line.errors.append("its expansions take more values than can be checked")


def _unwrap(command: Command, via: tuple[str, ...]) -> list[SimpleCommand]:
    """The command without wrappers; ``find -exec`` yields the commands it runs too."""
    argv = list(command.argv)
    wrappers: list[str] = []
    replaced = ""  # what xargs -I replaces in the command it runs
    while argv:
        name = posixpath.basename(argv[0])
        if name not in WRAPPERS or (name == "command" and argv[1:2] in (["-v"], ["-V"])) \
                or name == "flock" and option_value(argv[1:], "-c", "--command") is not None:
            break
        rest = _skip_wrapper_options(name, argv[1:])
        options = argv[1:len(argv) - len(rest)]
        wrappers.append("sudo -S" if name == "sudo" and _password_without_person(options)
                        else name)
        replaced = _xargs_replaced(options) if name == "xargs" else replaced
        argv = rest
    program = argv[0] if argv else ""
    computed = bool(COMPUTED_NAME.search(program)) or bool(replaced and replaced in program)
    base = SimpleCommand(
        posixpath.basename(program), argv[1:], list(command.redirects),
        (*via, *wrappers), tuple(_name(c) for c in command.piped_from),
        tuple(_name(c) for c in command.inner), program, computed)
    found = [base]
    if base.name == "find":
        found.extend(_find_exec(base))
    return found


def _skip_wrapper_options(name: str, args: list[str]) -> list[str]:
    value_options = VALUE_OPTIONS.get(name, frozenset())
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if name == "env" and (split := _env_split_string(args[index:])) is not None:
            return split
        if arg in value_options or _clustered_value_option(arg, value_options):
            index += 2
        elif arg.startswith("-") or _is_number(arg) or re.match(r"^[A-Za-z_]\w*=", arg):
            index += 1
        else:
            break
    return args[index + LEADING_OPERANDS.get(name, 0):]


def _clustered_value_option(arg: str, value_options: frozenset[str]) -> bool:
    """``-iu`` in ``sudo -iu root``: the last of clustered letters takes the next word."""
    return len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and f"-{arg[-1]}" in value_options


def _env_split_string(args: list[str]) -> list[str] | None:
    """``env -S 'CMD ARGS'`` (also ``-SCMD``, ``--split-string=CMD``): the words it runs."""
    arg = args[0]
    if arg in ("-S", "--split-string") and len(args) > 1:
        return split_words(args[1]) + args[2:]
    if arg.startswith("--split-string="):
        return split_words(arg.partition("=")[2]) + args[1:]
    if arg.startswith("-S") and len(arg) > 2:
        return split_words(arg[2:]) + args[1:]
    return None


def _xargs_replaced(options: list[str]) -> str:
    """The string ``xargs -I STR`` (``-i``, ``--replace``) replaces with each input."""
    for index, option in enumerate(options):
        if option == "-I" and index + 1 < len(options):
            return options[index + 1]
        if option.startswith("--replace"):
            return option.partition("=")[2] or "{}"
        if option.startswith(("-I", "-i")):
            return option[2:] or "{}"
    return ""


def option_value(args: list[str], short: str, long: str) -> str | None:
    """The value of ``-c VALUE`` (also clustered, ``-qc VALUE``) or ``--command VALUE``/
    ``--command=VALUE`` in ``args``, None if absent."""
    for index, arg in enumerate(args):
        if arg.startswith(long + "="):
            return arg.partition("=")[2]
        clustered = arg.startswith("-") and not arg.startswith("--") and arg.endswith(short[1])
        if (arg == long or clustered) and index + 1 < len(args):
            return args[index + 1]
    return None


def _password_without_person(options: list[str]) -> bool:
    """``sudo -S`` (password on stdin) or ``-A`` (askpass helper), clustered or long."""
    return any(o in ("--stdin", "--askpass") or (o.startswith("-") and not o.startswith("--")
                                                 and set(o[1:]) & {"S", "A"}) for o in options)


def _find_exec(find: SimpleCommand) -> list[SimpleCommand]:
    """The commands ``find -exec CMD {} ;`` runs (``-execdir``, ``-ok`` too), also with
    ``{}`` as each starting point (the first path find reports): ``find / -exec rm -rf
    {} +`` runs ``rm -rf /``."""
    found: list[SimpleCommand] = []
    args = find.args
    starts = list(itertools.takewhile(lambda a: not a.startswith(("-", "(", "!")), args))
    for index, arg in enumerate(args):
        if arg in FIND_EXEC:
            end = next((i for i in range(index + 1, len(args)) if args[i] in (";", "+")),
                       len(args))
            argv = args[index + 1:end]
            for start in [None, *(starts or ["."])] if "{}" in argv else [None]:
                inner = argv if start is None else [a.replace("{}", start) for a in argv]
                found.extend(_unwrap(Command(inner), (*find.via, f"find {arg}")))
    return found


class Handed(NamedTuple):
    """A script a command hands to a shell."""

    how: str
    """How, for ``via``: ``sh -c``, ``eval``, ``ssh``, ``parallel``, ..."""
    script: str
    arguments: tuple[str, ...] = ()
    """``$0``, ``$1``... it receives (``sh -c SCRIPT name arg1``)."""


def _handed_script(command: SimpleCommand) -> Handed | None:
    """The script ``command`` hands to a shell to run, if it hands one."""
    name, args = command.name, command.args
    if name in SHELLS or command.computed:  # a computed name may be a shell
        inline = _inline_script(args)
        if inline is not None:
            return Handed(f"{command.program} -c", inline[0], tuple(inline[1:]))
    if name in SHELLS and not shell_operands(args) and command.stdin_script is not None:
        return Handed(f"{name} <<", command.stdin_script)
    if name == "eval":
        return Handed("eval", " ".join(args))
    if name in ("su", "script", "flock"):
        script = option_value(args, "-c", "--command")
        return Handed(f"{name} -c", script) if script is not None else None
    found = _script_argument(command) or _remote_script(command)
    return Handed(*found) if found is not None else None


def _script_argument(command: SimpleCommand) -> tuple[str, str] | None:
    """Scripts in arguments: ``trap CMD SIG``, ``alias x=CMD``, ``parallel``, git."""
    name, args = command.name, command.args
    if name == "trap":
        operands = args[1:] if args[:1] == ["--"] else args
        if len(operands) >= 2 and not operands[0].startswith("-"):
            return "trap", operands[0]
    if name == "alias":
        return "alias", "\n".join(a.partition("=")[2] for a in args if "=" in a)
    if name == "parallel":
        return parallel_script(args)
    if name == "git" and (scripts := git_scripts(args)):
        return "git alias or setting", "\n".join(scripts)
    return None


def _remote_script(command: SimpleCommand) -> tuple[str, str] | None:
    """``ssh host CMD`` and ``watch CMD``: their arguments become a shell command."""
    name, args = command.name, command.args
    if name == "ssh":
        remote = _operands(args, SSH_VALUE_OPTIONS)[1:]
        return ("ssh", " ".join(remote)) if remote else None
    words = [command.program, *args]
    if command.via[-1:] == ("watch",) and any(" " in word for word in words):
        return "watch", " ".join(words)  # watch runs its arguments with sh -c
    return None


def shell_inline_script(args: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (``-c`` may be clustered: ``-lc``, ``-ec``)."""
    inline = _inline_script(args)
    return inline[0] if inline is not None else None


def _inline_script(args: list[str]) -> list[str] | None:
    """``[SCRIPT, $0, $1, ...]`` of ``sh -c SCRIPT NAME ARGS``, None without ``-c``."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in SHELL_VALUE_OPTIONS:
            index += 2
            continue
        if arg == "--" or not arg.startswith(("-", "+")):
            return None
        if not arg.startswith("--") and "c" in arg[1:]:
            rest = args[index + 1:]
            rest = rest[1:] if rest[:1] == ["--"] else rest
            return rest or [""]
        index += 1
    return None


def shell_operands(args: list[str]) -> list[str]:
    """A shell's operands: its script file and that script's arguments."""
    return _operands(args, SHELL_VALUE_OPTIONS)


def _operands(args: list[str], value_options: frozenset[str]) -> list[str]:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return args[index + 1:]
        if arg in value_options:
            index += 2
        elif arg.startswith("-") and arg != "-":
            index += 1
        else:
            return args[index:]
    return []


def is_option(arg: str) -> bool:
    """``-x`` / ``--long``, not ``-`` (stdin) and not a negative number."""
    return arg.startswith("-") and arg != "-" and not _is_number(arg[1:])


def split_options(args: list[str]) -> tuple[list[str], list[str]]:
    """GNU-style: options anywhere before ``--`` (``rm build/ -rf``), operands the rest."""
    if "--" in args:
        index = args.index("--")
        head, tail = args[:index], args[index + 1:]
    else:
        head, tail = args, []
    return [a for a in head if is_option(a)], [a for a in head if not is_option(a)] + tail


def _is_number(word: str) -> bool:
    return bool(re.fullmatch(r"\d+(\.\d+)?[smhd]?", word))


def _name(command: Command) -> str:
    argv = list(command.argv)
    while argv and posixpath.basename(argv[0]) in WRAPPERS:
        argv = _skip_wrapper_options(posixpath.basename(argv[0]), argv[1:])
    return posixpath.basename(argv[0]) if argv else ""
