"""Dangerous shell commands: which need the user's approval, and which are never run.

``detect_dangers(command)`` parses the command as a shell would and returns
every ``Danger`` it finds, hard-blocked ones first; ``detect_danger`` returns
the first. Each danger belongs to a class (``DANGER_CLASSES``) with a stable
key: approving a class for the session, or always, approves that class only.
Hard-blocked classes (deleting ``/``, a home directory or a top-level system
directory, fork bombs, formatting the system disk, overwriting a disk device)
can never be approved. Deletes are judged where they land: after the line's
``cd``, through globs matched against the file system and ``..``
(``danger_places``); scripts a program runs though it is no shell, and scripts
the line writes and then runs, are checked too (``danger_follow``). A program whose name is
computed (``$(echo rm)``, ``$R``, ``/bin/r?``) is a class of its own, and
hard-blocked when its arguments would be for ``rm`` or ``mkfs`` (``-rf /``, a
disk device). Text that does not parse as a shell command is a danger too
(``unparseable``): what cannot be checked is never taken for safe, and the
lines a shell would run before the error are checked as usual.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from types import MappingProxyType

from hermes.tools.commands import clean, read_command_line
from hermes.tools.danger_follow import Walk
from hermes.tools.danger_paths import Whereabouts
from hermes.tools.danger_places import GLOB_SECONDS
from hermes.tools.danger_rules import COMMAND_RULES, HARD_DELETES, script_rules

__all__ = ["DANGER_CLASSES", "Danger", "Whereabouts", "detect_danger", "detect_dangers"]

DANGER_CLASSES = MappingProxyType({
    # key: what approving the class (for a session, or always) lets run
    "delete_root": "recursive deletes of the root filesystem (never allowed)",
    "delete_home": "recursive deletes of a home directory or a directory holding one "
                   "(rm -rf ~, $HOME, ~/*, ~/.., cd ~ && rm -rf .; never allowed)",
    "delete_system": "recursive deletes of a top-level system directory (/etc, /usr, /bin, "
                     "/var, /home, ...; never allowed)",
    "fork_bomb": "fork bombs (never allowed)",
    "format_system_disk": "formatting the system disk (never allowed)",
    "write_disk": "overwriting or erasing a disk device (dd of=, blkdiscard; never allowed)",
    "unparseable": "commands that cannot be parsed as shell commands",
    "computed_command": "programs whose name is computed when the command runs ($(echo rm), "
                        "$VAR, ${X:-rm}, /bin/r?, xargs -I{} {})",
    "recursive_delete": "recursive deletes (rm -r, rsync --delete) of any directory",
    "find_delete": "find ... -delete",
    "find_exec_rm": "find ... -exec rm",
    "xargs_rm": "xargs rm (deleting every file named on its input)",
    "shell_code": "code handed to a shell or interpreter (bash -c, python -c, eval, "
                  "a script piped or fed by here-document) or run by a program that is "
                  "no shell (awk system(), vim -c :!, less +!, man -P, ssh -o "
                  "ProxyCommand, git grep -O)",
    "scheduled_command": "commands handed to a scheduler, to run later outside this "
                         "session (at, batch, crontab FILE)",
    "pipe_to_shell": "downloaded content run as code (curl | sh, bash <(curl ...))",
    "package_uninstall": "package-manager removals (npm/pip/apt/brew ... uninstall)",
    "write_credentials": "writes to credential files (~/.ssh, ~/.netrc, ~/.aws, ...)",
    "write_shell_startup": "writes to shell start-up files (~/.bashrc, ~/.profile, ...)",
    "write_hermes_config": "writes to any Hermes profile's config.yaml, .env or approvals",
    "write_project_config": "writes to a project's .env files, and replacing its "
                            "config.yaml (>, >>, tee, cp, mv, install; sed -i is not asked)",
    "write_etc": "writes to system configuration under /etc",
    "cloud_metadata": "requests to cloud instance-metadata endpoints (instance credentials)",
    "format_filesystem": "creating filesystems (mkfs, wipefs, mkswap)",
    "dd_device": "dd copies of raw data or devices",
    "chmod_777": "making files world-writable (chmod 777, o+w)",
    "system_permissions": "permission or ownership changes on system paths",
    "setuid": "setuid/setgid bits, file capabilities and root ownership (chmod u+s, "
              "chmod 4755, chown root, setcap)",
    "git_force_push": "git push --force (rewrites the remote's history)",
    "git_discard": "git reset --hard and git clean -f (discard uncommitted work)",
    "git_branch_delete": "force-deleting git branches (git branch -D)",
    "shutdown": "shutting down or rebooting the machine",
    "kill_all": "kill -1 (every process you own)",
    "kill_processes": "killing processes by name or pattern (pkill -9, killall -9, "
                      "kill $(pgrep ...))",
    "stop_services": "stopping or restarting services (systemctl stop, docker stop, "
                     "hermes gateway stop)",
    "sql_drop": "SQL DROP TABLE/DATABASE/SCHEMA",
    "sql_truncate": "SQL TRUNCATE",
    "sql_delete_all": "SQL DELETE without WHERE",
    "sudo_stdin": "sudo with a password from stdin or an askpass helper (-S, -A)",
    "run_new_script": "running a script the same command line wrote (base64 -d > s.sh; "
                      "sh s.sh) or made executable",
})
HARD_CLASSES = frozenset({*HARD_DELETES, "fork_bomb", "format_system_disk", "write_disk"})

FORK_BOMB = re.compile(r"([\w:.-]+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}")
SQL_DROP = re.compile(r"\bDROP\s+(TABLE|DATABASE|SCHEMA)\b", re.IGNORECASE)
# ``truncate -s 0 file`` is a coreutils command: only ``TRUNCATE TABLE`` in any case,
# or upper-case ``TRUNCATE name``, is SQL.
SQL_TRUNCATE = re.compile(r"\b(?i:truncate\s+table)\b|\bTRUNCATE\s+[A-Za-z_]")
SQL_DELETE = re.compile(r"\bDELETE\s+FROM\b[^;\n]*", re.IGNORECASE)


@dataclass(frozen=True)
class Danger:
    """A dangerous pattern found in a command."""

    key: str
    """The class (a key of ``DANGER_CLASSES``), e.g. ``recursive_delete``."""
    reason: str
    """What was found, for the approval prompt and the refusal message."""
    hard: bool = False
    """Refused always: no approval, allowlist or ``yolo`` can run it."""


def detect_dangers(command: str, where: Whereabouts | None = None) -> list[Danger]:
    """Every danger in ``command`` (one per class), hard-blocked ones first."""
    where = replace(where or Whereabouts.of_process(),
                    deadline=time.monotonic() + GLOB_SECONDS)
    found = list(_text_dangers(clean(command)))
    line = read_command_line(command)
    found.extend(Danger("unparseable", f"the command cannot be checked ({error})")
                 for error in line.errors)
    walk = Walk(where)
    for simple, places in walk.judged(line.commands):
        for place in places:
            for rule in COMMAND_RULES:
                found.extend(Danger(key, reason, key in HARD_CLASSES)
                             for key, reason in rule(simple, place))
    found.extend(Danger(key, reason) for key, reason in walk.findings)
    found.extend(Danger(key, reason) for key, reason in script_rules(line.commands))
    unique: dict[str, Danger] = {}
    for danger in found:
        unique.setdefault(danger.key, danger)
    return sorted(unique.values(), key=lambda danger: not danger.hard)


def detect_danger(command: str, where: Whereabouts | None = None) -> Danger | None:
    """The most serious danger in ``command`` (hard-blocked first), or None."""
    return next(iter(detect_dangers(command, where)), None)


def _text_dangers(text: str) -> Iterator[Danger]:
    """Patterns that span several commands or live inside arguments (SQL)."""
    bare = re.sub(r"\s+", " ", re.sub(r"[\"'\\]", "", text))
    if FORK_BOMB.search(bare):
        yield Danger("fork_bomb", "fork bomb (a function that pipes into itself in the "
                                  "background)", hard=True)
    if match := SQL_DROP.search(bare):
        yield Danger("sql_drop", f"SQL DROP {match.group(1).upper()}")
    if SQL_TRUNCATE.search(bare):
        yield Danger("sql_truncate", "SQL TRUNCATE")
    for match in SQL_DELETE.finditer(text):
        if not re.search(r"\bWHERE\b", match.group(0), re.IGNORECASE):
            yield Danger("sql_delete_all", "SQL DELETE without a WHERE clause")
