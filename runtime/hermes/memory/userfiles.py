"""The user's own edits of a home's memory (the dashboard's Memory page): one entry of
MEMORY.md or USER.md added, replaced or removed, and SOUL.md rewritten.

Entry edits are the ``memory`` tool's operations, applied by ``EntryStore.apply``: the
same threat scan of each entry, the same delimiter and size-limit checks, the same lock,
all or nothing. SOUL.md (the agent's identity, the system prompt's first section) passes
the same threat scan (``scan.scan_text``) before it is written. A refusal raises
``MemoryEditError``; nothing is written then (``edits.refusal_line`` gives the line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes.fsutil import atomic_write
from hermes.memory.edits import Action, EditOutcome, MemoryEditError, Operation, Target
from hermes.memory.scan import scan_text
from hermes.memory.store import EntryStore

if TYPE_CHECKING:
    from hermes.config.schema import MemoryConfig
    from hermes.home import Home


def entry_store(home: Home, settings: MemoryConfig) -> EntryStore:
    """MEMORY.md and USER.md of ``home`` with the limits ``settings`` give them (as the
    ``builtin`` backend opens them)."""
    return EntryStore(home.memories_dir, settings.memory_char_limit, settings.user_char_limit)


def edit_entry(store: EntryStore, action: Action, target: Target, *, entry: str = "",
               text: str = "") -> EditOutcome:
    """``action`` on ``target``: add ``text``; replace the stored ``entry`` with ``text``;
    remove ``entry``. The ``memory`` tool's operation, so its checks; raises
    ``MemoryEditError``. The entry is found as the tool finds ``old_text`` (equal first)."""
    if action != "add" and not entry.strip():
        raise MemoryEditError(f"name the entry to {action}", target)
    return store.apply([Operation(action, target, content=text, old_text=entry)])


def save_soul(home: Home, text: str) -> None:
    """Write ``text`` as the home's SOUL.md (0600) if the memory threat scan passes it;
    raises ``MemoryEditError`` (nothing written) if not."""
    reason = scan_text(text)
    if reason:
        raise MemoryEditError(f"SOUL.md blocked: {reason}. The identity must not hold "
                              "prompt injections, commands that leak data or hidden "
                              "characters")
    atomic_write(home.soul_file, text, mode=0o600)
