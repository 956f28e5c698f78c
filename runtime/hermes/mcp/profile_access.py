"""What ``hermes mcp serve`` lets an MCP client do with the one profile it serves: list,
read and search its sessions, ask the agent (a turn in a new or a given session), and
answer the approvals those turns wait for. Plain Python (the SDK is in ``serve``);
every text handed out passes the home's redactor.

``ask`` runs through the runtime's ``Conversations``: a provider without its key refuses
it in one line before a session exists (the session tools work without one), and a
session the model never answered is discarded when the turn ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from hermes.agent.conversations import Conversation, Conversations
from hermes.agent.factory import Interaction
from hermes.mcp.approvals import PendingApprovals
from hermes.sessions.errors import SessionError
from hermes.sessions.store import SessionStore

SOURCE = "mcp"
"""Sessions an MCP client starts are stored with this source."""
MAX_MESSAGE_CHARS = 20_000
"""Longest message text ``session_read`` hands out (longer ones are cut, saying so)."""
SESSION_FIELDS = ("id", "title", "source", "model", "started_at", "updated_at", "ended_at",
                  "end_reason", "message_count", "parent_id")


class ProfileAccess:
    """One profile's sessions and agent, as the MCP tools use them."""

    def __init__(self, sessions: SessionStore, conversations: Callable[[], Conversations],
                 approvals: PendingApprovals, redact: Callable[[str], str]):
        self.sessions = sessions
        self.conversations = conversations
        """Built on the first ``ask``: the session tools need no model or tools (nor the
        runtime's MCP servers to have started)."""
        self.approvals = approvals
        self.redact = redact
        self._running: dict[str, Conversation] = {}
        self._lock = threading.Lock()

    def sessions_list(self, limit: int, source: str | None) -> list[dict[str, Any]]:
        found = self.sessions.list_sessions(source=source or None, limit=limit)
        return [self._summary(session) for session in found]

    def session_read(self, session_id: str, limit: int) -> dict[str, Any]:
        session = self.sessions.get_session(self.sessions.resolve_id(session_id))
        rows = self.sessions.messages(session.id)
        shown = [self._message(row) for row in rows if row.get("role") != "system"]
        return {"session": self._summary(session), "total_messages": len(shown),
                "messages": shown[-limit:]}

    def sessions_search(self, query: str, limit: int) -> list[dict[str, Any]]:
        return [{"session_id": hit.session_id, "role": hit.role, "created_at": hit.created_at,
                 "snippet": self.redact(hit.snippet)}
                for hit in self.sessions.search(query, limit)]

    def ask(self, message: str, session_id: str | None, request: str = "") -> dict[str, Any]:
        """Run one turn; the answer and the session it is in (None when the model never
        answered: the session is discarded). ``request`` names the turn for
        ``interrupt``."""
        box: dict[str, str] = {}
        how = Interaction(interactive=True, stream=False, source=SOURCE,
                          approve=self.approvals.callback(lambda: box.get("id", "")))
        conversation = self.conversations().open(how, resume=session_id) \
            if session_id is not None else self.conversations().open(how)
        box["id"] = key = conversation.session_id
        self._start(request or key, conversation)
        try:
            result = conversation.run(message)
        finally:
            with self._lock:
                self._running.pop(request or key, None)
            ended = conversation.end()
        answer = {"session_id": key if ended.kept else None,
                  "answer": self.redact(result.text),
                  "exit_reason": result.exit_reason, "iterations": result.iterations}
        return answer | ({"error": self.redact(result.error)} if result.error else {})

    def _start(self, request: str, conversation: Conversation) -> None:
        """Count ``conversation``'s turn under ``request``; refused while the session
        answers another message."""
        with self._lock:
            busy = any(running.session_id == conversation.session_id
                       for running in self._running.values())
            if not busy:
                self._running[request] = conversation
        if busy:  # not ended: that would end the session for the turn that runs in it
            raise SessionError(f"session {conversation.session_id} is answering another "
                               "message; ask again when it is done")

    def interrupt(self, request: str) -> None:
        """Stop the turn ``ask`` runs for ``request`` (its client gave up on it)."""
        with self._lock:
            conversation = self._running.get(request)
        if conversation is not None:
            conversation.interrupt()

    def _summary(self, session: Any) -> dict[str, Any]:
        data = {key: value for key, value in asdict(session).items() if key in SESSION_FIELDS}
        return data | {"title": self.redact(session.title or "")}

    def _message(self, row: dict[str, Any]) -> dict[str, Any]:
        text = self.redact(row.get("content") or "")
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + f"\n[… {len(text) - MAX_MESSAGE_CHARS} more " \
                                              "characters not shown]"
        message = {"id": row["id"], "role": row["role"], "content": text,
                   "created_at": row.get("created_at")}
        if row.get("tool_name"):
            message["tool_name"] = row["tool_name"]
        if row.get("tool_calls"):
            message["tool_calls"] = [call.get("function", {}).get("name")
                                     for call in row["tool_calls"]]
        return message
