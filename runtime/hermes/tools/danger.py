"""Dangerous shell commands: which need the user's approval, and which are never run.

``detect_danger(command)`` returns the first ``Danger`` found (hard-blocked ones
first) or None. Each ``Danger`` has a stable ``key`` (what "approve for the
session" and the ``always`` allowlist remember), a reason naming the pattern,
and ``hard=True`` for the blocklist nothing can approve: deleting ``/``, fork
bombs, formatting the system disk, overwriting a disk device.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hermes.tools.commands import SimpleCommand, dequote, normalise, simple_commands

DISK = re.compile(r"^/dev/(sd[a-z]+|hd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+|mmcblk\d+|disk\d+)"
                  r"(p?\d+)?$")
SYSTEM_DISK = re.compile(r"^/dev/(sda|hda|vda|xvda|nvme0n1|mmcblk0|disk0)(p?\d+)?$")
HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr",
                              "/dev/tty", "/dev/random", "/dev/urandom"})
SH = r"(?:sudo\s+(?:-\S+\s+)*)?(?:\S*/)?(?:env\s+)?(?:ba|z|k|da|a|fi)?sh\b"
FETCH = r"\b(?:curl|wget|fetch)\b"
PIPE_TO_SHELL = re.compile(
    rf"{FETCH}[^|;&]*\|\s*{SH}"  # curl x | sh
    rf"|{SH}\s+(?:-\S+\s+)*<\(\s*{FETCH}"  # bash <(curl x)
    rf"|(?:\bsource|(?:^|[;&|]\s*)\.)\s+<\(\s*{FETCH}"  # source <(curl x)
    rf"|(?:{SH}\s+-\w*c\w*|\beval)\s+(?:\$\(|`)\s*{FETCH}"  # sh -c "$(curl x)", eval `curl x`
)
FORK_BOMB = re.compile(r"([\w:.-]+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}")
SQL_DROP = re.compile(r"\bDROP\s+(TABLE|DATABASE|SCHEMA)\b", re.IGNORECASE)
# ``truncate -s 0 file`` is a coreutils command: only ``TRUNCATE TABLE`` in any case,
# or upper-case ``TRUNCATE name``, is SQL.
SQL_TRUNCATE = re.compile(r"\b(?i:truncate\s+table)\b|\bTRUNCATE\s+[A-Za-z_]")
SQL_DELETE = re.compile(r"\bDELETE\s+FROM\s+[^;]*", re.IGNORECASE)
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})


@dataclass(frozen=True)
class Danger:
    """A dangerous pattern found in a command."""

    key: str
    """Stable name of the pattern, e.g. ``recursive_delete``."""
    reason: str
    """What was found, for the approval prompt and the refusal message."""
    hard: bool = False
    """Refused always: no approval, allowlist or ``yolo`` can run it."""


def detect_danger(command: str) -> Danger | None:
    """The most serious danger in ``command`` (hard-blocked first), or None."""
    found = [*_text_dangers(dequote(normalise(command)))]
    for simple in simple_commands(command):
        found.extend(danger for check in COMMAND_CHECKS for danger in check(simple))
    hard = [danger for danger in found if danger.hard]
    return next(iter(hard or found), None)


def _text_dangers(text: str) -> Iterator[Danger]:
    """Patterns that span several commands or live inside arguments (SQL)."""
    if FORK_BOMB.search(text):
        yield Danger("fork_bomb", "fork bomb (a function that pipes into itself in the "
                                  "background)", hard=True)
    if PIPE_TO_SHELL.search(text):
        yield Danger("pipe_to_shell", "downloads a script and runs it in a shell (curl | sh)")
    if match := SQL_DROP.search(text):
        yield Danger("sql_drop", f"SQL DROP {match.group(1).upper()}")
    if SQL_TRUNCATE.search(text):
        yield Danger("sql_truncate", "SQL TRUNCATE")
    for match in SQL_DELETE.finditer(text):
        if not re.search(r"\bWHERE\b", match.group(0), re.IGNORECASE):
            yield Danger("sql_delete_all", "SQL DELETE without a WHERE clause")


def _rm(cmd: SimpleCommand) -> Iterator[Danger]:
    if cmd.name != "rm":
        return
    options = [a for a in cmd.args if a.startswith("-") and a != "--"]
    recursive = any(a == "--recursive" or (not a.startswith("--") and set(a[1:]) & {"r", "R"})
                    for a in options)
    if not recursive:
        return
    for target in _operands(cmd.args):
        scope = rm_scope(target)
        if scope == "root":
            yield Danger("delete_root", f"recursive delete of the root filesystem ({target})",
                         hard=True)
        elif scope == "broad":
            yield Danger("recursive_delete", f"recursive delete of a broad target ({target})")


def _operands(args: list[str]) -> list[str]:
    if "--" in args:
        index = args.index("--")
        return [a for a in args[:index] if not a.startswith("-")] + args[index + 1:]
    return [a for a in args if not a.startswith("-")]


def rm_scope(target: str) -> str | None:
    """``"root"`` for ``/`` and its spellings, ``"broad"`` for homes, top-level
    directories, ``.``/``*`` and ``$VAR/`` (``/`` when VAR is empty), else None."""
    base = target.rstrip("*")
    if base.startswith("/"):
        path = "/" + posixpath.normpath(base).lstrip("/")
        if path == "/":
            return "root"
        parts = path.strip("/").split("/")
        broad = len(parts) == 1 or (parts[0] in ("home", "Users") and len(parts) == 2)
        return "broad" if broad else None
    if re.fullmatch(r"(~[\w.-]*|\$\{?HOME\}?)/?(\./?)?", base):
        return "broad"
    if base in ("", ".", "./", "..", "../") or re.fullmatch(r"\$\{?\w+\}?/", base):
        return "broad"
    return None


def _disks(cmd: SimpleCommand) -> Iterator[Danger]:
    targets = [a[3:] for a in cmd.args if a.startswith("of=")] if cmd.name == "dd" else []
    targets += cmd.redirects + (_operands(cmd.args) if cmd.name == "tee" else [])
    for target in targets:
        if DISK.match(target):
            yield Danger("write_disk", f"overwrites the disk device {target}", hard=True)
        elif target.startswith("/dev/") and target not in HARMLESS_DEVICES and cmd.name == "dd":
            yield Danger("dd_device", f"dd writes to the device {target}")
        elif target.startswith("/etc/"):
            yield Danger("write_etc", f"overwrites system configuration ({target})")


def _mkfs(cmd: SimpleCommand) -> Iterator[Danger]:
    if not (cmd.name.startswith("mkfs") or cmd.name in ("mke2fs", "mkswap", "wipefs")):
        return
    devices = [a for a in _operands(cmd.args) if a.startswith("/dev/")]
    if any(SYSTEM_DISK.match(device) for device in devices):
        yield Danger("format_system_disk", f"formats the system disk ({' '.join(devices)})",
                     hard=True)
    else:
        yield Danger("format_filesystem", f"creates a filesystem ({cmd.name})")


def _chmod(cmd: SimpleCommand) -> Iterator[Danger]:
    modes = {"777", "0777", "a+rwx", "ugo+rwx", "o+rwx"}
    if cmd.name == "chmod" and modes & set(cmd.args):
        recursive = any(a in ("-R", "--recursive") for a in cmd.args)
        yield Danger("chmod_777", "makes files world-writable (chmod "
                                  f"{'-R ' if recursive else ''}777)")


def _git_force_push(cmd: SimpleCommand) -> Iterator[Danger]:
    if cmd.name != "git" or "push" not in cmd.args:
        return
    args = cmd.args[cmd.args.index("push") + 1:]
    short_force = any(re.fullmatch(r"-[a-zA-Z]*f[a-zA-Z]*", a) for a in args)
    if "--force" in args or short_force or any(a.startswith("+") for a in args):
        yield Danger("git_force_push", "git push --force rewrites the remote's history")


def _power(cmd: SimpleCommand) -> Iterator[Danger]:
    init_halt = cmd.name in ("init", "telinit") and cmd.args[:1] in (["0"], ["6"])
    systemctl = cmd.name == "systemctl" and bool(
        {"poweroff", "reboot", "halt", "kexec"} & set(cmd.args))
    if cmd.name in POWER or init_halt or systemctl:
        yield Danger("shutdown", f"shuts down or reboots the machine ({cmd.name})")


def _kill_all(cmd: SimpleCommand) -> Iterator[Danger]:
    if cmd.name != "kill":
        return
    args = list(cmd.args)
    if args[:1] in (["-s"], ["-n"]):
        args = args[2:]
    elif len(args) > 1 and args[0].startswith("-"):
        args = args[1:]  # the signal (-9, -KILL, and -1 is SIGHUP when a pid follows)
    if args[:1] == ["--"]:
        args = args[1:]
    if "-1" in args:
        yield Danger("kill_all", "kills every process you own (kill -1)")


COMMAND_CHECKS: tuple[Callable[[SimpleCommand], Iterator[Danger]], ...] = (
    _rm, _disks, _mkfs, _chmod, _git_force_push, _power, _kill_all,
)
