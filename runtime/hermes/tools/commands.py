"""Shell commands as the safety checks see them: every program a command line would run.

``simple_commands(text)`` cleans the text of disguises a terminal or shell
would see through (full-width letters, ANSI escapes, control characters,
``$IFS`` for a space), parses it as a shell would (``hermes.tools.shell``), then
unwraps each simple command: leading assignments and wrappers (``sudo``,
``env``, ``nice -n 5``, ``timeout 10``, ``xargs``, ...) are dropped and
recorded in ``via``; scripts that a command hands to a shell (``sh -c``,
``eval``, ``su -c``, ``ssh host CMD``, ``watch CMD``, ``find -exec CMD ;``,
a here-document fed to ``bash``) are parsed in turn and follow it.

Raises ``ShellSyntaxError`` for text no shell would run; callers treat that as
dangerous, never as safe.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hermes.tools.shell import Command, Redirect, ShellSyntaxError, parse

__all__ = ["SimpleCommand", "ShellSyntaxError", "clean", "simple_commands", "is_option"]

MAX_CHARS = 100_000
MAX_NESTING = 8
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]"
                  r"|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07]*\x07?")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
IFS = re.compile(r"\$\{IFS(?::[^}]*)?\}|\$IFS(?!\w)")
WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time",
                      "nice", "ionice", "stdbuf", "timeout", "xargs", "watch", "setsid",
                      "chroot", "flock", "unbuffer", "busybox", "caffeinate", "taskset",
                      "chrt", "systemd-run", "proxychains", "proxychains4", "torsocks",
                      "firejail", "strace", "ltrace", "catchsegv", "nsenter", "unshare",
                      "runuser", "sg", "script"})
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
    "runuser": frozenset({"-u", "-g", "-l"}), "sg": frozenset(), "script": frozenset({"-c"}),
    "nsenter": frozenset({"-t"}), "firejail": frozenset(),
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


def simple_commands(text: str) -> list[SimpleCommand]:
    """Every program ``text`` would run, including those inside scripts it hands on."""
    if len(text) > MAX_CHARS:
        raise ShellSyntaxError(f"command longer than {MAX_CHARS} characters")
    return _expand(parse(clean(text)), (), 0)


def _expand(commands: list[Command], via: tuple[str, ...], depth: int) -> list[SimpleCommand]:
    found: list[SimpleCommand] = []
    for command in commands:
        for simple in _unwrap(command, via):
            found.append(simple)
            script = _handed_script(simple)
            if script is not None:
                if depth >= MAX_NESTING:
                    raise ShellSyntaxError("scripts nested too deeply to check")
                found.extend(_expand(parse(script[1]), (*simple.via, script[0]), depth + 1))
    return found


def _unwrap(command: Command, via: tuple[str, ...]) -> list[SimpleCommand]:
    """The command without wrappers; ``find -exec`` yields the commands it runs too."""
    argv = list(command.argv)
    wrappers: list[str] = []
    while argv:
        name = posixpath.basename(argv[0])
        if name not in WRAPPERS or (name == "command" and argv[1:2] in (["-v"], ["-V"])):
            break
        rest = _skip_wrapper_options(name, argv[1:])
        options = argv[1:len(argv) - len(rest)]
        wrappers.append("sudo -S" if name == "sudo" and _password_without_person(options)
                        else name)
        argv = rest
    base = SimpleCommand(
        posixpath.basename(argv[0]) if argv else "", argv[1:], list(command.redirects),
        (*via, *wrappers), tuple(_name(c) for c in command.piped_from),
        tuple(_name(c) for c in command.inner), argv[0] if argv else "")
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
        if name == "env" and arg in ("-S", "--split-string") and index + 1 < len(args):
            return args[index + 1].split() + args[index + 2:]
        if arg in value_options:
            index += 2
        elif arg.startswith("-") or _is_number(arg) or re.match(r"^[A-Za-z_]\w*=", arg):
            index += 1
        else:
            break
    return args[index + LEADING_OPERANDS.get(name, 0):]


def _password_without_person(options: list[str]) -> bool:
    """``sudo -S`` (password on stdin) or ``-A`` (askpass helper), clustered or long."""
    return any(o in ("--stdin", "--askpass") or (o.startswith("-") and not o.startswith("--")
                                                 and set(o[1:]) & {"S", "A"}) for o in options)


def _find_exec(find: SimpleCommand) -> list[SimpleCommand]:
    """The commands ``find -exec CMD {} ;`` runs (``-execdir``, ``-ok`` too)."""
    found: list[SimpleCommand] = []
    args = find.args
    for index, arg in enumerate(args):
        if arg in FIND_EXEC:
            end = next((i for i in range(index + 1, len(args)) if args[i] in (";", "+")),
                       len(args))
            inner = Command(args[index + 1:end])
            found.extend(_unwrap(inner, (*find.via, f"find {arg}")))
    return found


def _handed_script(command: SimpleCommand) -> tuple[str, str] | None:
    """``(how, script)`` when ``command`` hands a script to a shell to run."""
    name, args = command.name, command.args
    if name in SHELLS:
        script = shell_inline_script(args)
        if script is not None:
            return f"{name} -c", script
        if not shell_operands(args) and command.stdin_script is not None:
            return f"{name} <<", command.stdin_script
    if name == "eval":
        return "eval", " ".join(args)
    if name == "su" and "-c" in args[:-1]:
        return "su -c", args[args.index("-c") + 1]
    if name == "ssh":
        remote = _operands(args, SSH_VALUE_OPTIONS)[1:]
        return ("ssh", " ".join(remote)) if remote else None
    words = [command.program, *args]
    if command.via[-1:] == ("watch",) and any(" " in word for word in words):
        return "watch", " ".join(words)  # watch runs its arguments with sh -c
    return None


def shell_inline_script(args: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (``-c`` may be clustered: ``-lc``, ``-ec``)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in SHELL_VALUE_OPTIONS:
            index += 2
            continue
        if arg == "--" or not arg.startswith(("-", "+")):
            return None
        if not arg.startswith("--") and "c" in arg[1:]:
            rest = [a for a in args[index + 1:] if a not in ("--",)]
            return rest[0] if rest else ""
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


def _is_number(word: str) -> bool:
    return bool(re.fullmatch(r"\d+(\.\d+)?[smhd]?", word))


def _name(command: Command) -> str:
    argv = list(command.argv)
    while argv and posixpath.basename(argv[0]) in WRAPPERS:
        argv = _skip_wrapper_options(posixpath.basename(argv[0]), argv[1:])
    return posixpath.basename(argv[0]) if argv else ""
