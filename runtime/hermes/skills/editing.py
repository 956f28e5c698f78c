"""Writes to the home's skills: create, edit, patch, add or remove a supporting file,
delete. Every write is validated (frontmatter, name, path), capped in size, scanned
(``guard.py``) and written atomically before it is recorded with who made it; a
refused write changes nothing. Only the home's own skills are writable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from hermes.fsutil import atomic_write, private_dir
from hermes.skills.format import check_name, parse_skill_text
from hermes.skills.guard import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    check_size,
    relative_parts,
    scan_content,
)
from hermes.skills.links import refuse_outside, tree
from hermes.skills.lockfile import read_lock, write_lock
from hermes.skills.model import SKILL_FILE, SUPPORT_DIRS, Actor, Skill, SkillError

if TYPE_CHECKING:
    from hermes.skills.store import SkillsStore

FILE_MODE = 0o644


def writable(store: SkillsStore, name: str, action: str, *, repair: bool = False) -> Skill:
    """The home's skill ``name``; bundled and configured skills are refused. ``repair``:
    also one the listing skips (malformed or withheld by the scan), to fix or delete."""
    skill = (store.withheld(name) if repair else None) or store.get(name)
    if not skill.writable:
        raise SkillError(f'cannot {action} skill "{name}": it is read-only ({skill.origin}); '
                         f"create your own copy under the same name (it takes precedence)")
    return skill


SKILL_TEMPLATE = """---
name: {name}
description: {description}
---

# {title}

## When to use

## Steps

1.

## Pitfalls

## Verify
"""


def skill_template(name: str, description: str) -> str:
    """A new skill's ``SKILL.md`` to fill in (``hermes skills create -d``)."""
    import json

    return SKILL_TEMPLATE.format(name=name, description=json.dumps(description),
                                 title=name.replace("-", " ").capitalize())


def save_edit(store: SkillsStore, name: str, file: str | None, text: str, by: Actor) -> None:
    """An edited file of skill ``name`` saved (``hermes skills edit``, the dashboard):
    SKILL.md through ``edit``, a supporting file through ``write_file``, both validated
    and scanned; a refusal writes nothing."""
    if file in (None, SKILL_FILE):
        store.edit(name, text, by=by)
    else:
        store.write_file(name, str(file), text, by=by)


def create(store: SkillsStore, name: str, content: str, category: str | None,
           by: Actor) -> Skill:
    check_name(name, "skill", "name")
    if category:
        check_name(category, "skill", "category")
    existing = store.find(name)
    if existing is not None and existing.writable:
        raise SkillError(f'skill "{name}" already exists; change it with patch or edit')
    check_skill_md(name, content)
    target = store.directory / category / name if category else store.directory / name
    if target.exists():  # a skill whose frontmatter names it otherwise, or a stray directory
        raise SkillError(f"skills/{target.relative_to(store.directory).as_posix()} exists "
                         "already (not a skill of that name); rename or remove it first")
    staging = store.directory / f".staging-{name}-{os.getpid()}"
    private_dir(staging)
    try:
        atomic_write(staging / SKILL_FILE, content, mode=FILE_MODE)
        private_dir(target.parent)
        staging.rename(target)  # the skill appears whole or not at all
    finally:
        if staging.exists():
            store.remove_tree(staging)
    store.state.note_write(name, "create", by, SKILL_FILE)
    return store.get(name)


def edit(store: SkillsStore, name: str, content: str, by: Actor) -> Skill:
    skill = writable(store, name, "edit", repair=True)
    check_skill_md(name, content)
    atomic_write(skill.file, content, mode=FILE_MODE)
    store.state.note_write(name, "edit", by, SKILL_FILE)
    return store.get(name)


def patch(store: SkillsStore, name: str, old: str, new: str, file: str | None,
          replace_all: bool, by: Actor) -> int:
    skill = writable(store, name, "patch")
    rel = file or SKILL_FILE
    path = skill.file if rel == SKILL_FILE else support_path(skill, rel)
    refuse_outside(path, skill.path, f"{rel} of skill {name!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        raise SkillError(f'skill "{name}" has no text file {rel!r}') from None
    count = text.count(old) if old else 0
    if count == 0:
        raise SkillError(f"old_string was not found in {rel} of skill {name!r}: view the file "
                         "(skill_view) and copy the text exactly, whitespace included")
    if count > 1 and not replace_all:
        raise SkillError(f"old_string appears {count} times in {rel}: include more of the "
                         "surrounding text, or set replace_all")
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if rel == SKILL_FILE:
        check_skill_md(name, updated)
    else:
        check_support(rel, updated)
    atomic_write(path, updated, mode=FILE_MODE)
    store.state.note_write(name, "patch", by, rel)
    return count if replace_all else 1


def write_file(store: SkillsStore, name: str, file: str, content: str, by: Actor) -> Path:
    skill = writable(store, name, "change")
    path = support_path(skill, file)
    check_support(file, content)
    _check_whole(skill, path, len(content.encode("utf-8")))
    private_dir(path.parent)
    atomic_write(path, content, mode=FILE_MODE)
    store.state.note_write(name, "write_file", by, file)
    return path


def remove_file(store: SkillsStore, name: str, file: str, by: Actor) -> None:
    skill = writable(store, name, "change")
    path = support_path(skill, file)
    if not path.is_file():
        files = ", ".join(store.files(name)) or "none"
        raise SkillError(f'skill "{name}" has no file {file!r}; its files: {files}')
    path.unlink()
    for parent in path.parents:  # drop directories the removal left empty
        if parent == skill.path or any(parent.iterdir()):
            break
        parent.rmdir()
    store.state.note_write(name, "remove_file", by, file)


def deletable(store: SkillsStore, name: str) -> Skill:
    """The home's skill ``name`` if it may be deleted (not read-only, not pinned)."""
    skill = writable(store, name, "delete", repair=True)
    if store.usage(name).pinned:
        raise SkillError(f'skill "{name}" is pinned; unpin it first with '
                         f"`hermes skills unpin {name}`")
    return skill


def delete(store: SkillsStore, name: str, by: Actor) -> None:
    """Delete the skill and its lock entry (else ``skills update`` would bring it back);
    an unreadable lock refuses before anything is removed."""
    skill = deletable(store, name)
    locked = read_lock(store.directory)
    store.remove_tree(skill.path)
    remove_empty_category(store, skill)
    if locked.pop(name, None) is not None:
        write_lock(store.directory, locked)
    store.state.note_write(name, "delete", by)


def remove_empty_category(store: SkillsStore, skill: Skill) -> None:
    parent = skill.path.parent
    if parent != store.directory and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()


def support_path(skill: Skill, file: str) -> Path:
    """Where supporting ``file`` goes: under references/, templates/, scripts/ or assets/."""
    parts = relative_parts(file)
    if parts is None or len(parts) < 2 or parts[0] not in SUPPORT_DIRS:
        raise SkillError(f"file_path {file!r}: give a path under "
                         f"{', '.join(d + '/' for d in SUPPORT_DIRS)} e.g. references/api.md")
    path = skill.path.joinpath(*parts)
    refuse_outside(path.parent, skill.path, f"{path.parent.relative_to(skill.path)}/ of "
                                            f"skill {skill.name!r}")
    return path


def _check_whole(skill: Skill, path: Path, size: int) -> None:
    """Refuse a file that would take the whole skill over its caps."""
    others = [e.path for e in tree(skill.path) if e.kind == "file" and e.path != path]
    total = sum(p.stat().st_size for p in others) + size
    if total > MAX_SKILL_BYTES or len(others) + 1 > MAX_SKILL_FILES:
        raise SkillError(f"refused: skill {skill.name!r} would hold {len(others) + 1} files, "
                         f"{total:,} bytes; at most {MAX_SKILL_FILES} files and "
                         f"{MAX_SKILL_BYTES:,} bytes — remove or shrink some first")


def check_skill_md(name: str, content: str) -> None:
    """Refuse a ``SKILL.md`` that is too large, malformed, misnamed or fails the scan."""
    too_big = check_size(SKILL_FILE, len(content))
    if too_big:
        raise SkillError(f"refused: {too_big}")
    meta, _ = parse_skill_text(content, SKILL_FILE)
    if meta.name != name:
        raise SkillError(f"SKILL.md: name: {meta.name!r} must be the skill's name {name!r}")
    _refuse_findings(SKILL_FILE, content)


def check_support(file: str, content: str) -> None:
    too_big = check_size(file, len(content.encode("utf-8")))
    if too_big:
        raise SkillError(f"refused: {too_big}")
    _refuse_findings(file, content)


def _refuse_findings(file: str, content: str) -> None:
    findings = scan_content(file, content.encode("utf-8"))
    if findings:
        raise SkillError(f"refused by the skill scan: {findings[0]}; nothing was written")
