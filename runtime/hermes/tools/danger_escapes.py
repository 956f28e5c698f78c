"""Programs that run commands though they are no shell, and schedulers.

``escapes(cmd)`` lists how ``cmd`` runs other commands: an awk program's
``system()``, vim's ``-c ':!cmd'``, less's ``+!cmd``, a pager or browser given to
``man -P``/``-H``, ``git grep -O``, ``ag --pager``, ssh's ``ProxyCommand`` and
``LocalCommand``, ``rsync -e``/``scp -S``, ``rg --pre``, ``sort --compress-program``;
and jobs handed to ``at``, ``batch`` or ``crontab``, which run later, outside this
session. Each ``Escape`` names its class (``shell_code``, ``scheduled_command``, or
"" for a plain pager such as ``man -P cat``) and the literal script it runs, which
``detect_dangers`` checks as well.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import NamedTuple

from hermes.tools.commands import SimpleCommand, is_option
from hermes.tools.danger_editors import awk_program, ex_commands, less_keys
from hermes.tools.danger_modes import Finding
from hermes.tools.danger_paths import Whereabouts
from hermes.tools.launchers import git_subcommand

PAGERS = frozenset({"cat", "less", "more", "most", "pg", "bat", "batcat", "col"})
EDITORS = frozenset({"vi", "vim", "nvim", "view", "nano", "emacs", "ed"})
REMOTE_SHELLS = frozenset({"ssh", "rsh"})
COMPRESSORS = frozenset({"gzip", "pigz", "bzip2", "xz", "zstd", "lz4", "lzop"})
SHELL_META = re.compile(r"[;&|`$<>()\n\\]")
AWK_NAMES = frozenset({"awk", "gawk", "mawk", "nawk", "original-awk", "goawk"})
AWK_VALUED = frozenset({"-F", "-v", "-f", "-i", "-l", "-E", "-W", "--field-separator",
                        "--assign", "--file", "--include", "--load", "--exec"})
VIM_NAME = re.compile(r"(n?vim?|ex|view|g?vimdiff|[gm]vim|vim\.(basic|tiny|nox|gtk3?))")
SSH_COMMAND_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
SSH_OPTION = re.compile(r"^-[46AaCfGgKkMNnqsTtVvXxYy]*o(.*)$")
AT_QUERIES = frozenset({"-l", "-r", "-d", "-c", "-V", "--help", "--version"})
CRONTAB_QUERIES = frozenset({"-l", "-r", "-e", "-V", "-T", "--help", "--version"})


class Escape(NamedTuple):
    """One way a command runs other commands."""

    key: str
    """Its danger class; "" when it only runs a plain pager or remote shell."""
    how: str
    script: str | None
    """The shell script it runs, when it is written out literally."""


def escape_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    for escape in escapes(cmd):
        if escape.key == "scheduled_command":
            yield escape.key, f"hands commands to {escape.how}, to run later outside this session"
        elif escape.key:
            yield escape.key, f"runs commands through {escape.how}"


def escapes(cmd: SimpleCommand) -> list[Escape]:
    """How ``cmd`` runs other commands (empty for almost every command)."""
    if cmd.name in AWK_NAMES:
        return _awk(cmd)
    if VIM_NAME.fullmatch(cmd.name):
        return _vim(cmd)
    reader = READERS.get(cmd.name)
    return reader(cmd) if reader is not None else []


def _awk(cmd: SimpleCommand) -> list[Escape]:
    program, loads = _awk_source(cmd.args)
    how = f"{cmd.name} --load (a shared library)"
    found = [Escape("shell_code", how, None)] if loads else []
    runs, scripts = awk_program(program)
    return found + (_shell_code(f"{cmd.name} system()", scripts) if runs else [])


def _shell_code(how: str, scripts: list[str]) -> list[Escape]:
    """``shell_code`` escapes: one per literal script, or one with none known."""
    return [Escape("shell_code", how, s) for s in scripts] or [Escape("shell_code", how, None)]


def _awk_source(args: list[str]) -> tuple[str, bool]:
    """``(the program text, whether it loads a library)`` of ``awk ARGS``."""
    parts: list[str] = []
    from_file = loads = False
    index = 0
    while index < len(args) and is_option(args[index]):
        arg = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        name, equals, attached = arg.partition("=")
        if arg == "--":
            index += 1
            break
        if arg in ("-e", "--source") or (name == "--source" and equals):
            parts.append(attached if equals else value)
            index += 1 if equals else 2
            continue
        from_file = from_file or name in ("-f", "--file", "-E", "--exec") or \
            arg.startswith(("-f", "-E"))
        loads = loads or name in ("-l", "--load") or arg.startswith("-l")
        index += 2 if arg in AWK_VALUED else 1
    if not parts and not from_file and index < len(args):
        parts.append(args[index])
    return "\n".join(parts), loads


def _vim(cmd: SimpleCommand) -> list[Escape]:
    texts: list[str] = []
    args = cmd.args
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg == "--cmd" or re.fullmatch(r"-[A-Za-z]*c", arg):  # -c, -sc, -esc
            texts.append(value)
        elif arg.startswith("-c") and len(arg) > 2 and args[index - 1:index] != ["-c"]:
            texts.append(arg[2:])
        elif arg.startswith("+") and re.match(r"\+[^\d/?]", arg) and \
                args[index - 1:index] not in (["-c"], ["--cmd"]):
            texts.append(arg[1:])
    ex_mode = cmd.name == "ex" or any(re.fullmatch(r"-[esE]*[eE][esE]*", a) for a in args)
    if ex_mode and cmd.stdin_script is not None:
        texts.extend(cmd.stdin_script.splitlines())
    found: list[Escape] = []
    for text in texts:
        runs, scripts = ex_commands(text)
        if runs or scripts:
            found += _shell_code(f"{cmd.name} {text[:40]!r}", scripts)
    return found


def _less(cmd: SimpleCommand) -> list[Escape]:
    found: list[Escape] = []
    for arg in cmd.args:
        if arg.startswith("+"):
            runs, scripts = less_keys(arg.lstrip("+"))
            if runs:
                found += [Escape("shell_code", f"less {arg[:40]!r}", s) for s in scripts]
    return found


def _option_values(args: list[str], shorts: tuple[str, ...], longs: tuple[str, ...],
                   attached_only: bool = False) -> list[tuple[str, str]]:
    """``(option, value)`` of ``-P VALUE``, ``-PVALUE``, ``--pager VALUE``, ``--pager=VALUE``."""
    found: list[tuple[str, str]] = []
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else None
        if arg == "--":
            break
        if arg in (*shorts, *longs) and value is not None and not attached_only:
            found.append((arg, value))
        elif arg.startswith(tuple(f"{o}=" for o in longs)):
            found.append((arg.partition("=")[0], arg.partition("=")[2]))
        elif any(arg.startswith(s) and len(arg) > len(s) for s in shorts):
            found.append((arg[:2], arg[2:]))
    return found


def _program(how: str, value: str, plain: frozenset[str]) -> Escape:
    """A command line given as an option's value: plain when it is one of ``plain``."""
    words = value.split()
    ordinary = bool(words) and posixpath.basename(words[0]) in plain and \
        not SHELL_META.search(value)
    return Escape("" if ordinary else "shell_code", how, value)


def _man(cmd: SimpleCommand) -> list[Escape]:
    values = _option_values(cmd.args, ("-P",), ("--pager",))
    values += _option_values(cmd.args, ("-H",), ("--html",), attached_only=True)
    return [_program(f"man {option}", value, PAGERS if option in ("-P", "--pager")
                     else frozenset()) for option, value in values]


def _git(cmd: SimpleCommand) -> list[Escape]:
    sub, args = git_subcommand(cmd.args)
    if sub != "grep":
        return []
    values = [(a[:2], a[2:]) for a in args if a.startswith("-O") and len(a) > 2]
    values += [(a.partition("=")[0], a.partition("=")[2]) for a in args
               if a.startswith("--open") and "=" in a]
    return [_program(f"git grep {option}", value, PAGERS | EDITORS) for option, value in values]


def _ssh(cmd: SimpleCommand) -> list[Escape]:
    found: list[Escape] = []
    args = cmd.args
    for index, arg in enumerate(args):
        match = SSH_OPTION.match(arg)
        if match is None or (arg.startswith("--")):
            continue
        setting = match.group(1) or (args[index + 1] if index + 1 < len(args) else "")
        pair = re.match(r"\s*([A-Za-z]+)\s*(?:=|\s)\s*(.*)$", setting, re.DOTALL)
        if pair and pair.group(1).lower() in SSH_COMMAND_KEYS and \
                pair.group(2).strip().lower() != "none":
            found.append(Escape("shell_code", f"{cmd.name} -o {pair.group(1)}", pair.group(2)))
    if cmd.name in ("scp", "sftp"):
        found += [_program(f"{cmd.name} -S", value, REMOTE_SHELLS)
                  for _, value in _option_values(args, ("-S",), ())]
    return found


def _rsync(cmd: SimpleCommand) -> list[Escape]:
    return [_program(f"rsync {option}", value, REMOTE_SHELLS)
            for option, value in _option_values(cmd.args, ("-e",), ("--rsh",))]


def _rg(cmd: SimpleCommand) -> list[Escape]:
    values = _option_values(cmd.args, (), ("--pre", "--hostname-bin"))
    return [Escape("shell_code", f"rg {option} {value}", value) for option, value in values]


def _sort(cmd: SimpleCommand) -> list[Escape]:
    values = _option_values(cmd.args, (), ("--compress-program",))
    return [_program(f"sort {option}", value, COMPRESSORS) for option, value in values]


def _ag(cmd: SimpleCommand) -> list[Escape]:
    return [_program(f"ag {option}", value, PAGERS)
            for option, value in _option_values(cmd.args, (), ("--pager",))]


def _at(cmd: SimpleCommand) -> list[Escape]:
    if cmd.name == "at" and AT_QUERIES & set(cmd.args):
        return []
    return [Escape("scheduled_command", cmd.name, cmd.stdin_script)]


def _crontab(cmd: SimpleCommand) -> list[Escape]:
    if CRONTAB_QUERIES & set(cmd.args):
        return []
    return [Escape("scheduled_command", "crontab", None)]


READERS: Mapping[str, Callable[[SimpleCommand], list[Escape]]] = MappingProxyType({
    "less": _less, "man": _man, "git": _git, "ssh": _ssh, "scp": _ssh, "sftp": _ssh,
    "rsync": _rsync, "rg": _rg, "sort": _sort, "ag": _ag, "at": _at, "batch": _at,
    "crontab": _crontab,
})
