"""What the store remembers about skills besides their files.

``skills/.state.json`` holds one record per skill name: uses (``skill_view`` calls and
slash commands), pinned, stale, and who created and last changed it and when.
``skills/.history.jsonl`` gets one line per write (time, skill, action, file, who).
Both are changed under ``skills/.state.lock`` (the gateway, the warm server and the
CLI share them) and written atomically; both are 0600.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write, private_dir
from hermes.skills.model import Actor

STATE_FILE = ".state.json"
HISTORY_FILE = ".history.jsonl"
LOCK_FILE = ".state.lock"
LOCK_TIMEOUT = 30.0


@dataclass
class SkillRecord:
    """The state of one skill name."""

    uses: int = 0
    """How often it was loaded (``skill_view`` or a slash command)."""
    last_used: float | None = None
    """Epoch seconds of the last use."""
    pinned: bool = False
    """Pinned skills are never archived by the curator nor deleted by the agent."""
    stale_since: float | None = None
    """Set by the curator (``mark_stale``); cleared by the next use."""
    created: float | None = None
    created_by: Actor | None = None
    updated: float | None = None
    """The last write to any of the skill's files."""
    updated_by: Actor | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkillRecord:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class HistoryEntry:
    """One line of ``.history.jsonl``."""

    time: float
    skill: str
    action: str
    """create, edit, patch, write_file, remove_file, delete, install, update, pin, unpin,
    stale, archive, restore."""
    by: Actor
    file: str | None = None


class SkillState:
    """The state and history files of one home's ``skills/`` directory."""

    def __init__(self, directory: Path, clock: Callable[[], float]):
        self.directory = directory
        self.clock = clock

    @property
    def state_file(self) -> Path:
        return self.directory / STATE_FILE

    @property
    def history_file(self) -> Path:
        return self.directory / HISTORY_FILE

    def records(self) -> dict[str, SkillRecord]:
        """Every record, read without the lock (writes are atomic)."""
        return {name: SkillRecord.from_dict(data) for name, data in self._read().items()}

    def record(self, name: str) -> SkillRecord:
        return self.records().get(name) or SkillRecord()

    @contextmanager
    def change(self) -> Iterator[dict[str, SkillRecord]]:
        """The records to change in place, saved when the block ends without an error."""
        from filelock import FileLock  # only when writing: listings stay light

        private_dir(self.directory)
        with FileLock(self.directory / LOCK_FILE, timeout=LOCK_TIMEOUT, mode=0o600):
            records = {n: SkillRecord.from_dict(d) for n, d in self._read().items()}
            yield records
            data = {name: _compact(record) for name, record in sorted(records.items())}
            atomic_write(self.state_file, json.dumps(data, indent=1), mode=0o600)

    def note_write(self, name: str, action: str, by: Actor, file: str | None = None) -> None:
        """Record a write: creation or change time and author, and a history line."""
        now = self.clock()
        with self.change() as records:
            record = records.setdefault(name, SkillRecord())
            if action in ("create", "install") or record.created is None:
                record.created, record.created_by = now, by
            record.updated, record.updated_by = now, by
            if action == "delete":
                records.pop(name, None)
            self.log(HistoryEntry(now, name, action, by, file))

    def log(self, entry: HistoryEntry) -> None:
        """Append one history line (0600)."""
        line = json.dumps({k: v for k, v in asdict(entry).items() if v is not None}) + "\n"
        fd = os.open(self.history_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(line)

    def history(self) -> list[HistoryEntry]:
        """Every history line, oldest first (unreadable lines skipped)."""
        try:
            lines = self.history_file.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        entries = []
        for line in lines:
            try:
                entries.append(HistoryEntry(**json.loads(line)))
            except (ValueError, TypeError):
                continue
        return entries

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)} \
            if isinstance(data, dict) else {}


def _compact(record: SkillRecord) -> dict[str, Any]:
    """The record without default values (smaller, and readable by hand)."""
    defaults = asdict(SkillRecord())
    return {k: v for k, v in asdict(record).items() if v != defaults[k]}
