"""Sessions: the per-home SQLite database (``state.db``) of conversations and messages.

Layer 0, the foundation: imports only ``errors``, ``fsutil`` and ``models.types`` (plain
values); ``config`` and every service may import it.
"""

from hermes.sessions.errors import (
    AmbiguousSessionId,
    InvalidDuration,
    SessionError,
    SessionNotFound,
    SessionStoreBusy,
)
from hermes.sessions.models import (
    MATCH_CLOSE,
    MATCH_OPEN,
    SearchHit,
    Session,
    Usage,
    UsageLike,
)
from hermes.sessions.store import SessionStore, open_session_store

__all__ = ["MATCH_CLOSE", "MATCH_OPEN", "AmbiguousSessionId", "InvalidDuration", "SearchHit",
           "Session", "SessionError", "SessionNotFound", "SessionStore", "SessionStoreBusy",
           "Usage", "UsageLike", "open_session_store"]
