"""The sessions page's data: plain, typed functions over a profile's ``SessionStore``.

No web code: the dashboard's pages render what these return. Every query goes through
the session store (``hermes.sessions``), the same code as ``hermes sessions ...``; a
missing session raises ``SessionNotFound``, bad input ``SessionError`` (one line).
"""

from hermes.dashboard.queries.actions import delete, export, rename
from hermes.dashboard.queries.found import Found, search
from hermes.dashboard.queries.pages import SessionPage, SessionRow, Stores, session_page
from hermes.dashboard.queries.transcript import Entry, ToolCall, Transcript, latest, transcript
from hermes.dashboard.queries.tree import Kind, Lineage, Node, lineage

__all__ = ["Entry", "Found", "Kind", "Lineage", "Node", "SessionPage", "SessionRow", "Stores",
           "ToolCall", "Transcript", "delete", "export", "latest", "lineage", "rename", "search",
           "session_page", "transcript"]
