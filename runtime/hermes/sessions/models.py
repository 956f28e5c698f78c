"""Plain values the session store hands out and takes in."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Protocol

from hermes.models.types import Usage

__all__ = ["Usage", "UsageLike"]


class UsageLike(Protocol):
    """Anything with ``Usage``'s fields, e.g. the model layer's own usage value."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_read_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...
    @property
    def reasoning_tokens(self) -> int: ...
    @property
    def cost_usd(self) -> float | None: ...


@dataclass(frozen=True)
class Session:
    """One row of ``sessions``: a conversation with its lineage, totals and end state."""

    id: str
    source: str
    """Where it ran: ``cli``, ``telegram``, ``cron``, ..."""
    model: str | None
    system_prompt: str | None
    parent_id: str | None
    """The session this one continues (compression, branch), or ``None`` for a root."""
    title: str | None
    started_at: float
    updated_at: float | None
    """Time of the last message, rename or end; what ``prune`` measures age by."""
    ended_at: float | None
    end_reason: str | None
    message_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    """Total cost in USD; ``None`` when unknown (some call had no pricing), never 0 for that."""

    @classmethod
    def columns(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_row(cls, row: Any) -> Session:
        return cls(**{name: row[name] for name in cls.columns()})

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.columns()}


@dataclass(frozen=True)
class SearchHit:
    """The best matching message of one conversation (one hit per lineage root)."""

    session_id: str
    """The session holding the matching message."""
    root_id: str
    """The root of that session's lineage; hits are unique by it."""
    message_id: int
    role: str
    snippet: str
    """Text around the match, each match wrapped in ``MATCH_OPEN`` / ``MATCH_CLOSE``."""
    created_at: float
    rank: float
    """Lower is better (FTS5 bm25); substring fallbacks rank after word matches."""
    title: str | None
    source: str


MATCH_OPEN = "⟦"
MATCH_CLOSE = "⟧"
