"""Where a command's paths land: the directories a command line moves to, and globs.

``Places`` follows ``cd``/``pushd`` along one command line: each command is judged
in every directory it may run in (the starting one and each one a ``cd`` before it
names), so ``cd / && rm -rf *`` is judged as ``rm -rf /*``. Subshells and branches
are not told apart: a ``cd`` anywhere counts for every later command, which can only
add findings. ``glob_matches`` expands a pattern against the real file system, as
the shell would, within a limit on directories read, matches and time.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from hermes.tools.commands import SimpleCommand
from hermes.tools.danger_paths import SYSTEM_DIRS, Whereabouts, expand

MAX_PLACES = 16
"""Directories one command line may be judged in; past that it cannot be checked."""
MAX_GLOB_LISTINGS = 32
"""Directories read to expand one glob."""
MAX_GLOB_MATCHES = 128
GLOB_SECONDS = 0.05
"""Time one command line may spend matching globs (``Whereabouts.deadline``)."""
MAGIC = re.compile(r"[*?\[]")
CD_OPTIONS = frozenset({"-L", "-P", "-e", "-@", "-n"})


@dataclass
class Places:
    """The directories the commands of one line may run in, as its ``cd``s go by."""

    where: Whereabouts
    cwds: list[Path] = field(default_factory=list)
    overflowed: bool = False
    """More directories than ``MAX_PLACES``: the later ones were not followed."""

    def __post_init__(self) -> None:
        self.cwds = [self.where.cwd]

    def current(self) -> list[Whereabouts]:
        """Every place the next command may run in."""
        if len(self.cwds) == 1:
            return [self.where]
        return [replace(self.where, cwd=cwd) for cwd in self.cwds]

    def see(self, cmd: SimpleCommand) -> None:
        """Take in ``cmd``: a ``cd DIR`` adds DIR, as seen from every place so far."""
        target = cd_target(cmd, self.where)
        if target is None:
            return
        for cwd in list(self.cwds):
            for path in _directories(target, cwd, self.where.deadline):
                if path in self.cwds:
                    continue
                if len(self.cwds) >= MAX_PLACES:
                    self.overflowed = True
                    return
                self.cwds.append(path)


def cd_target(cmd: SimpleCommand, where: Whereabouts) -> str | None:
    """The directory ``cd``/``pushd`` goes to, expanded; None for other commands and
    for targets that are not known (``cd $X``, ``cd -``)."""
    if cmd.name not in ("cd", "pushd", "chdir"):
        return None
    operands = [a for a in cmd.args if a not in CD_OPTIONS]
    operands = operands[1:] if operands[:1] == ["--"] else operands
    if not operands:
        return str(where.user_home)
    text = expand(operands[0], where)
    return None if "$" in text or "`" in text or text == "-" else text


def _directories(target: str, cwd: Path, deadline: float) -> list[Path]:
    absolute = absolute_path(target, cwd)
    if MAGIC.search(absolute):
        return [Path(p) for p in glob_matches(absolute, deadline)[:1]]
    return [Path(absolute)]


def absolute_path(text: str, cwd: Path) -> str:
    """``text`` (already expanded) made absolute from ``cwd``, ``..`` collapsed."""
    joined = text if text.startswith("/") else f"{cwd}/{text}"
    return "/" + posixpath.normpath(joined).lstrip("/")


def glob_matches(pattern: str, deadline: float) -> list[str]:
    """The existing paths an absolute ``pattern`` matches as the shell expands it
    (``*``, ``?``, ``[...]``; no dot files unless the pattern names them), ``..``
    collapsed; at most ``MAX_GLOB_MATCHES`` found in ``MAX_GLOB_LISTINGS`` directories
    read before ``deadline``."""
    listings = 0
    found = ["/"]
    for part in pattern.split("/"):
        if not part or not found:
            continue
        if not MAGIC.search(part):
            found = [posixpath.join(path, part) for path in found]
            continue
        matched: list[str] = []
        for path in found:
            listings += 1
            if listings > MAX_GLOB_LISTINGS or time.monotonic() > deadline:
                break
            matched.extend(posixpath.join(path, name) for name in _names(path, part))
        found = matched[:MAX_GLOB_MATCHES]
    return ["/" + posixpath.normpath(path).lstrip("/") for path in found
            if os.path.lexists(path)]


def _names(directory: str, part: str) -> list[str]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    hidden = part.startswith(".")
    return sorted(name for name in names
                  if (hidden or not name.startswith(".")) and fnmatch.fnmatchcase(name, part))


def protected_delete(target: str, where: Whereabouts) -> tuple[str, str] | None:
    """``(danger key, reason)`` when deleting ``target`` recursively, where it lands
    (from ``where.cwd``, through globs and ``..``), deletes ``/``, a home directory or
    a directory holding one (``~/..``), or a top-level system directory (``/etc``,
    ``/u?r``, ``/usr/*``)."""
    text = expand(target, where)
    if "$" in text or "`" in text:
        return None  # what it expands to is not known here
    whole = absolute_path(text.rstrip("*") or ".", where.cwd)  # `dir/*` empties dir
    candidates = [whole]
    if MAGIC.search(text):
        pattern = absolute_path(text, where.cwd)
        candidates += _protected_matches(pattern, where) + glob_matches(pattern, where.deadline)
    spelled = target if text.startswith("/") else f"{target} in {where.cwd}"
    for path in candidates:
        found = _protected(path, where)
        if found is not None:
            key, what = found
            named = "" if what.endswith(")") or spelled in (path, path + "/") else f" ({spelled})"
            return key, f"recursive delete of {what.replace('{spelled}', spelled)}{named}"
    return None


def _protected(path: str, where: Whereabouts) -> tuple[str, str] | None:
    """``(key, what it is)``; ``{spelled}`` in it stands for the target as written."""
    if path == "/":
        return "delete_root", "the root filesystem ({spelled})"
    homes = {absolute_path(str(where.user_home), where.cwd),
             os.path.realpath(where.user_home)}
    parts = path.strip("/").split("/")
    if path in homes or (len(parts) == 2 and parts[0] in ("home", "Users")):
        return "delete_home", "a home directory ({spelled})"
    if any(home.startswith(path.rstrip("/") + "/") for home in homes):
        return "delete_home", f"{path}, which holds a home directory"
    if len(parts) == 2 and parts[0] == "private":  # macOS: /etc is /private/etc
        parts = parts[1:]
    if len(parts) == 1 and parts[0] in SYSTEM_DIRS:
        return "delete_system", f"the system directory {path}"
    return None


def _protected_matches(pattern: str, where: Whereabouts) -> list[str]:
    """The protected directories (top-level system ones, the home and the directories
    holding it) that ``pattern`` matches by name, whether or not they exist, and
    whatever time globbing the file system is left."""
    home = PurePosixPath(absolute_path(str(where.user_home), where.cwd))
    names = [f"/{name}" for name in SYSTEM_DIRS] + [str(home), *map(str, home.parents)]
    parts = pattern.strip("/").split("/")
    return [name for name in names
            if len(found := name.strip("/").split("/")) == len(parts) and
            all(fnmatch.fnmatchcase(a, b) for a, b in zip(found, parts, strict=True))]
