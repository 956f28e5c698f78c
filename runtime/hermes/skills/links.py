"""Symbolic links in a skill: they never lead out of the skill's directory.

A link may point anywhere (``~/.netrc``, a ``.env``, a private key), so whatever the
skills code reads, lists, copies, diffs or writes for a skill is first resolved to its
real path and compared with the skill directory's real path: ``..``, links to links and
links to directories resolve where they lead, and a skill reached through a link (in
``skills.directories``, or a linked skill directory) keeps its links that stay inside.
A link leading out is never followed: reading or writing through it is refused, listings
leave it out, installs and updates do not copy it, and diffs show that it is a link,
never what it points at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes.skills.model import SkillError

EntryKind = Literal["file", "link", "outside"]


@dataclass(frozen=True)
class Entry:
    """One file or link of a skill's tree (directories are walked, not listed)."""

    rel: str
    """Its path relative to the skill's directory (``/``-separated)."""
    path: Path
    kind: EntryKind
    """``file`` (a regular file), ``link`` (a link staying inside the skill) or
    ``outside`` (a link leading out of it, or a link whose target cannot be resolved
    inside)."""
    target: str = ""
    """For a ``link``: where it leads, relative to the link's directory."""

    @property
    def hidden(self) -> bool:
        """Under a name starting with ``.`` (``.git``, ``.origin``)."""
        return any(part.startswith(".") for part in self.rel.split("/"))


def within(path: Path | str, root: Path | str) -> bool:
    """Whether ``path`` really is ``root`` or under it (both resolved, links followed)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def refuse_outside(path: Path, directory: Path, what: str) -> None:
    """``SkillError`` when ``path`` (possibly through a link) leads out of ``directory``."""
    if not within(path, directory):
        raise SkillError(f"{what} is a symbolic link leading outside the skill, so Hermes "
                         "neither reads nor writes it; ask the user to replace it with a "
                         "real file inside the skill")


def tree(directory: Path) -> list[Entry]:
    """Every regular file and link under ``directory``, in path order, without following
    a link (a linked directory is one ``link`` or ``outside`` entry)."""
    top = os.path.realpath(directory)
    entries = []
    for parent, dirs, files in os.walk(directory):  # never descends into linked dirs
        for name in [*dirs, *files]:
            path = os.path.join(parent, name)
            rel = os.path.relpath(path, directory).replace(os.sep, "/")
            if os.path.islink(path):
                entries.append(_link_entry(Path(path), rel, top))
            elif name in files and os.path.isfile(path):
                entries.append(Entry(rel, Path(path), "file"))
    return sorted(entries, key=lambda e: e.rel.split("/"))


def _link_entry(path: Path, rel: str, top: str) -> Entry:
    real = os.path.realpath(path)
    if not within(real, top):
        return Entry(rel, path, "outside")
    return Entry(rel, path, "link", os.path.relpath(real, os.path.realpath(path.parent)))


def copy_tree(source: Path, target: Path, skip: Callable[[str], bool]) -> None:
    """Copy a skill (or plugin) directory: files, and links staying inside as links to
    the same place; links leading out and entries ``skip`` names (by relative path) are
    left behind."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in tree(source):
        if entry.kind == "outside" or skip(entry.rel):
            continue
        destination = target / entry.rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        if entry.kind == "link":
            os.symlink(entry.target, destination)
        else:
            shutil.copy2(entry.path, destination)


def shown(entry: Entry) -> str | None:
    """How a diff shows a link (its target only when it stays inside); None for a file."""
    if entry.kind == "outside":
        return f"{entry.rel}: symbolic link leading outside the skill (not copied)\n"
    if entry.kind == "link":
        return f"{entry.rel} → {entry.target}\n"
    return None
