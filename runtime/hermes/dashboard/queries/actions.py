"""What the sessions page changes or downloads: ``hermes sessions rename/delete/export``'s
store calls, taking an id or unique prefix as the CLI does."""

from __future__ import annotations

from hermes.sessions import SessionStore
from hermes.sessions.export import ExportFormat


def rename(db: SessionStore, session_id: str, title: str) -> str:
    """Set the title (one line, at most 200 characters); returns it as stored."""
    full_id = db.resolve_id(session_id)
    db.rename(full_id, title)
    return db.get_session(full_id).title or ""


def delete(db: SessionStore, session_id: str) -> int:
    """Delete the session and its messages (its continuations stay); messages deleted."""
    return db.delete_session(db.resolve_id(session_id))


def export(db: SessionStore, session_id: str, fmt: ExportFormat = "jsonl") -> str:
    """The session as JSONL (lossless) or Markdown (``"md"``)."""
    return db.export(db.resolve_id(session_id), fmt)
