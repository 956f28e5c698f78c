"""Built-in memory: ``memories/MEMORY.md`` and ``memories/USER.md`` in the home."""

from __future__ import annotations

from pathlib import Path

from hermes.memory.base import MemoryProvider

ENTRY_DELIMITER = "\n§\n"


class BuiltinMemory(MemoryProvider):
    name = "builtin"

    def __init__(self, directory: Path, memory_char_limit: int, user_char_limit: int):
        self.directory = directory
        self.limits = {"MEMORY.md": memory_char_limit, "USER.md": user_char_limit}

    def entries(self, target: str) -> list[str]:
        try:
            text = (self.directory / target).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [e.strip() for e in text.split(ENTRY_DELIMITER) if e.strip()]

    def snapshot(self) -> str:
        parts = []
        for target, title in (("MEMORY.md", "Your notes"), ("USER.md", "About the user")):
            entries = self.entries(target)
            if entries:
                parts.append(f"## {title}\n" + "\n".join(f"- {e}" for e in entries))
        return "\n\n".join(parts)
