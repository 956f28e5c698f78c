"""What ``hermes mcp serve`` lets an MCP client do with the one profile it serves: list,
read and search its sessions, ask the agent (a turn in a new or a given session), and
answer the approvals those turns wait for. Plain Python (the SDK is in ``serve``);
every text handed out passes the home's redactor.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import Agent
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

    def __init__(self, sessions: SessionStore, factory: Callable[[], AgentFactory],
                 approvals: PendingApprovals, redact: Callable[[str], str]):
        self.sessions = sessions
        self.factory = factory
        """Built on the first ``ask``: the session tools need no model or tools (nor the
        runtime's MCP servers to have started)."""
        self.approvals = approvals
        self.redact = redact
        self._running: dict[str, Agent] = {}
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
        """Run one turn; the answer and the session it is in. ``request`` names the turn
        for ``interrupt``."""
        box: dict[str, str] = {}
        how = Interaction(interactive=True, stream=False, source=SOURCE,
                          approve=self.approvals.callback(lambda: box.get("id", "")))
        agent = self._agent(how, session_id)
        box["id"] = agent.session_id
        with self._lock:
            if any(running.session_id == agent.session_id
                   for running in self._running.values()):
                raise SessionError(f"session {agent.session_id} is answering another "
                                   "message; ask again when it is done")
            self._running[request or agent.session_id] = agent
        try:
            result = agent.run_turn(message)
        finally:
            with self._lock:
                self._running.pop(request or agent.session_id, None)
            agent.close()
        answer = {"session_id": agent.session_id, "answer": self.redact(result.text),
                  "exit_reason": result.exit_reason, "iterations": result.iterations}
        return answer | ({"error": self.redact(result.error)} if result.error else {})

    def interrupt(self, request: str) -> None:
        """Stop the turn ``ask`` runs for ``request`` (its client gave up on it)."""
        with self._lock:
            agent = self._running.get(request)
        if agent is not None:
            agent.interrupt()

    def _agent(self, how: Interaction, session_id: str | None) -> Agent:
        if session_id is None:
            return self.factory().new_session(how)
        return self.factory().resume(self.sessions.resolve_id(session_id), how)

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
