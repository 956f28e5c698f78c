"""What ``hermes skills list`` and ``show`` print, and ``edit``'s editor round trip."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from hermes.errors import ConfigError, UserError
from hermes.home import Home
from hermes.skills.discovery import Problem
from hermes.skills.install import skill_above
from hermes.skills.lockfile import lock_or_none
from hermes.skills.model import SKILL_FILE, Skill
from hermes.skills.state import SkillRecord
from hermes.skills.store import Change, SkillsStore

COLUMNS = ("NAME", "CATEGORY", "SOURCE", "USES", "LAST USED", "NOTES")


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def ago(when: float | None, now: float | None = None) -> str:
    """``3d ago``, ``2h ago``, ``just now``; ``never`` for None."""
    if when is None:
        return "never"
    seconds = max(0.0, (now or time.time()) - when)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def render_listing(store: SkillsStore, skills: Sequence[Skill],
                   shadowed: Sequence[tuple[Skill, Skill]], since: float) -> str:
    """The table of skills, the shadowed ones, and a summary line."""
    records = store.records()
    locked = lock_or_none(store.directory, warn)
    changes = {c.name: c for c in store.changed_since(since)}
    rows = [(s.name, s.category or "general", _source(s, locked), *_usage(records.get(s.name)),
             _notes(s, records.get(s.name), changes.get(s.name), shadowed))
            for s in skills]
    lines = _table([COLUMNS, *rows]) if rows else ["(no skills)"]
    hidden = [(h, w) for h, w in shadowed if any(w is s for s in skills)]
    if hidden:
        lines += ["", "shadowed (the first source wins):"]
        lines += [f"  {h.name} from {_source(h, locked)} ({h.path}) by {_source(w, locked)}"
                  for h, w in hidden]
    marked = sum(1 for s in skills if s.name in changes)
    days = f"{(time.time() - since) / 86400:g}"
    lines += ["", f"{len(skills)} skill{'s' if len(skills) != 1 else ''}; {len(hidden)} "
                  f"shadowed; {marked} new or changed in the last {days} days (--days)"]
    return "\n".join(lines)


def warn_nested(store: SkillsStore, skills: Sequence[Skill]) -> None:
    """Warn about each installed skill (in the lock) that nothing finds because it sits
    inside another skill's directory (where installs before issue 27's fix put
    hermes-agent's ``optional-skills/dogfood/adversarial-ux-test``)."""
    found = {skill.name for skill in skills}
    for name, entry in lock_or_none(store.directory, lambda _said_by_the_listing: None).items():
        owner = None if name in found else \
            skill_above(store.directory, store.directory / entry.path)
        if owner is not None:
            warn(f"{name} (installed in skills/{entry.path}) is never found: {owner} — "
                 f"remove that directory and `hermes skills install {entry.source}` again")


def render_withheld(problems: Sequence[Problem]) -> str:
    """The skills the threat scan withholds (not loaded), each with its first finding;
    "" when there are none."""
    withheld = [p for p in problems if p.field == "content"]
    lines = [f"  {p.name} ({p.file.parent}): {p.message.removeprefix('withheld: ')}"
             for p in withheld]
    return "\n".join(["withheld by the scan (not loaded; `hermes skills audit` lists every "
                      "finding):", *lines]) if lines else ""


def _source(skill: Skill, locked: Mapping[str, object]) -> str:
    if skill.writable and skill.name in locked:
        return "installed"
    return skill.origin


def _usage(record: SkillRecord | None) -> tuple[str, str]:
    if record is None:
        return "0", "never"
    return str(record.uses), ago(record.last_used)


def _notes(skill: Skill, record: SkillRecord | None, change: Change | None,
           shadowed: Sequence[tuple[Skill, Skill]]) -> str:
    notes = []
    if change is not None and skill.writable:
        notes.append(f"{change.kind} ({change.by or '?'}, {ago(change.when)})")
    if record is not None and record.pinned:
        notes.append("pinned")
    if record is not None and record.stale_since is not None:
        notes.append("stale")
    if not skill.writable:
        notes.append("read-only")
    over = [h.origin for h, w in shadowed if w is skill]
    if over:
        notes.append(f"shadows {', '.join(over)}")
    return "; ".join(notes)


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join(cell.ljust(width) if i != 3 else cell.rjust(width)
                      for i, (cell, width) in enumerate(zip(row, widths, strict=False)))
            + "  " + row[-1] for row in rows]


def render_header(store: SkillsStore, skill: Skill) -> str:
    """``show``'s lines about the skill, above its SKILL.md."""
    record = store.usage(skill.name)
    entry = lock_or_none(store.directory, warn).get(skill.name)
    lines = [f"name: {skill.name}", f"category: {skill.category or 'general'}",
             f"source: {skill.origin}{' (read-only)' if not skill.writable else ''} "
             f"— {skill.path}"]
    if entry is not None:
        commit = f" @ {entry.commit[:12]}" if entry.commit else ""
        lines.append(f"installed from: {entry.source}{commit}")
    if skill.tags:
        lines.append(f"tags: {', '.join(skill.tags)}")
    status = [s for s, on in (("pinned", record.pinned), ("stale", record.stale_since))
              if on]
    lines.append(f"uses: {record.uses}, last used {ago(record.last_used)}"
                 + (f"; {', '.join(status)}" if status else ""))
    if record.updated is not None:
        lines.append(f"last changed: {ago(record.updated)} by {record.updated_by}")
    lines.append(f"files: {', '.join(store.files(skill.name)) or 'SKILL.md only'}")
    return "\n".join([*lines, "─" * 40])


def edit_in_editor(store: SkillsStore, home: Home, environ: Mapping[str, str], name: str,
                   file: str | None) -> str:
    """Open a copy of the file in the user's editor; save it through the store (validated
    and scanned). A refused edit is kept in the copy, whose path the error names."""
    from hermes.cli.config_editor import editor_copy, run_editor
    from hermes.skills.editing import save_edit

    original = store.read(name, file, to_edit=True)
    suffix = Path(file).suffix if file else ".md"
    with editor_copy(original, environ, prefix=f"hermes-skill-{name}-", suffix=suffix) as copy:
        try:
            run_editor(environ, copy.path, home.child_env(environ), unchanged="the skill")
        except ConfigError as exc:
            raise UserError(str(exc)) from exc
        text = copy.path.read_text(encoding="utf-8")
        if text == original:
            return "no changes"
        try:
            save_edit(store, name, file, text, by="user")
        except UserError as exc:
            copy.keep = True
            raise UserError(f"{exc}; your edit is kept in {copy.path}") from exc
    return f"saved {file or SKILL_FILE} of {name}"
