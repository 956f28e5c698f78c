"""The built-in memory files of one home: ``memories/MEMORY.md`` and ``memories/USER.md``.

Reads are lock-free (writes replace files atomically, so a reader sees the old
or the new file). Every edit is read-modify-write under one lock for both
files (a thread lock, then ``memories/.memory.lock`` with filelock for other
processes), so concurrent writers never lose an entry and a batch over both
files is applied whole or not at all. Files are written 0600.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from filelock import FileLock, Timeout

from hermes.fsutil import atomic_write, private_dir
from hermes.memory.edits import (
    ENTRY_DELIMITER,
    FILES,
    EditOutcome,
    MemoryEditError,
    Operation,
    Target,
    apply_operations,
    char_count,
)
from hermes.memory.scan import find_threat

log = logging.getLogger(__name__)

LOCK_NAME = ".memory.lock"
TITLES: Mapping[Target, str] = MappingProxyType({"memory": "Your notes",
                                                "user": "About the user"})


def parse_entries(text: str) -> list[str]:
    """Entries of a memory file: split on the delimiter, stripped, empty and repeats dropped."""
    return list(dict.fromkeys(e.strip() for e in text.split(ENTRY_DELIMITER) if e.strip()))


def display_entries(entries: Sequence[str], target: Target) -> list[str]:
    """Entries safe to show the model: one that fails the threat scan (e.g. edited
    into the file by hand) is replaced by a note saying why."""
    shown = []
    for entry in entries:
        finding = find_threat(entry)
        if finding:
            log.warning("memory: %s entry withheld from the prompt: %s", FILES[target],
                        finding.reason())
            entry = (f"[entry withheld: {finding.kind}; ask the user to delete it from "
                     f"memories/{FILES[target]}]")
        shown.append(entry)
    return shown


@dataclass(frozen=True)
class MemorySnapshot:
    """The memory files as they were at one moment (a session's start), immutable."""

    entries: Mapping[Target, tuple[str, ...]]
    limits: Mapping[Target, int] = field(default_factory=dict)

    def render(self) -> str:
        """The system-prompt text: one section per non-empty file, with its usage."""
        sections = []
        for target, title in TITLES.items():
            entries = self.entries.get(target, ())
            if not entries:
                continue
            usage = f"{char_count(entries):,}/{self.limits.get(target, 0):,} chars"
            body = ENTRY_DELIMITER.join(display_entries(entries, target))
            sections.append(f"## {title} ({FILES[target]}, {usage})\n{body}")
        if not sections:
            return ""
        return ("# Memory\nWhat you saved with the memory tool in earlier sessions. Changes "
                "you make now are saved at once and appear here from the next session.\n\n"
                + "\n\n".join(sections))


class EntryStore:
    """Reads and edits the entries of MEMORY.md and USER.md in ``directory``."""

    def __init__(self, directory: Path, memory_char_limit: int, user_char_limit: int, *,
                 lock_timeout: float = 10.0):
        self.directory = directory
        self.limits: dict[Target, int] = {"memory": memory_char_limit, "user": user_char_limit}
        self.lock_timeout = lock_timeout
        """Seconds to wait for another process's edit before giving up."""
        self._thread_lock = threading.Lock()

    def path(self, target: Target) -> Path:
        return self.directory / FILES[target]

    def entries(self, target: Target) -> list[str]:
        """The current entries of ``target``, read from its file now."""
        try:
            return parse_entries(self.path(target).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []

    def all_entries(self) -> dict[Target, list[str]]:
        return {target: self.entries(target) for target in FILES}

    def capture(self) -> MemorySnapshot:
        """A frozen copy of both files as they are now."""
        current = self.all_entries()
        return MemorySnapshot({t: tuple(e) for t, e in current.items()}, dict(self.limits))

    def apply(self, operations: Sequence[Operation]) -> EditOutcome:
        """Apply a batch under the lock, all or nothing; raises ``MemoryEditError``."""
        with self._locked():
            outcome = apply_operations(self.all_entries(), operations, self.limits)
            for target in sorted(outcome.changed):
                self._write(target, outcome.entries[target])
        return outcome

    def _write(self, target: Target, entries: Sequence[str]) -> None:
        text = ENTRY_DELIMITER.join(entries) + "\n" if entries else ""
        atomic_write(self.path(target), text, mode=0o600)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.directory)
        lock = FileLock(self.directory / LOCK_NAME, timeout=self.lock_timeout, mode=0o600)
        with self._thread_lock:
            try:
                lock.acquire()
            except Timeout as exc:
                raise MemoryEditError("memory is being edited by another process; "
                                      "try again in a moment") from exc
            try:
                yield
            finally:
                lock.release()
