"""``hermes mcp serve``: one profile as an MCP server, for Claude Code, Cursor, Codex or
any MCP client, over stdio or streamable HTTP (``serve_http``).

The tools (documented by their JSON schemas) are those of ``ProfileAccess``: sessions
to list, read and search, ``ask`` for a turn of the agent, and the approvals such a turn
waits for. The server is built for the one profile it was started with; nothing in it
reaches another home.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from hermes import __version__
from hermes.errors import HermesError
from hermes.mcp.profile_access import ProfileAccess

T = TypeVar("T")
INSTRUCTIONS = (
    "The Hermes agent of profile {profile}. `ask` sends a message to the agent and returns "
    "its answer (a new session, or continue one by session_id); `sessions_list`, "
    "`session_read` and `sessions_search` show earlier conversations. While an `ask` "
    "waits for approval of a dangerous command, `approvals_list` shows the question and "
    "`approval_answer` answers it.")

Limit = Annotated[int, Field(ge=1, le=200, description="How many to return at most.")]
SessionId = Annotated[str, Field(min_length=1, description="A session id (or a unique "
                                                           "prefix of one).")]


def build_server(open_access: Callable[[], AbstractContextManager[ProfileAccess]],
                 profile: str) -> Any:
    """The SDK's ``MCPServer`` with this profile's tools. ``open_access`` starts the
    profile's runtime: it runs as the server starts (for stdio, once the protocol owns
    stdout, so nothing the runtime prints can reach the client's stream) and is left as
    the server stops."""
    from mcp.server.mcpserver import MCPServer

    opened = _Opened(open_access)
    server = MCPServer(f"hermes-{profile}", instructions=INSTRUCTIONS.format(profile=profile),
                       version=__version__, log_level="WARNING", lifespan=opened.lifespan)
    for tool in _session_tools(opened) + _agent_tools(opened):
        server.add_tool(tool)
    return server


class _Opened:
    """The profile's ``ProfileAccess`` while the server runs."""

    def __init__(self, open_access: Callable[[], AbstractContextManager[ProfileAccess]]):
        self._open = open_access
        self._access: ProfileAccess | None = None

    @property
    def access(self) -> ProfileAccess:
        if self._access is None:
            raise RuntimeError("the profile's runtime is not running")
        return self._access

    @asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[dict[str, Any]]:
        import anyio

        stack = ExitStack()
        self._access = await anyio.to_thread.run_sync(lambda: stack.enter_context(self._open()))
        try:
            yield {}
        finally:
            self._access = None
            with anyio.CancelScope(shield=True):  # the runtime stops even at a cancel
                await anyio.to_thread.run_sync(stack.close)


async def _run(work: Callable[[], T], on_cancel: Callable[[], None] = lambda: None) -> T:
    """``work`` in a worker thread; a user mistake becomes the tool's error message.
    A cancelled request calls ``on_cancel`` (and leaves the thread to finish)."""
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        on_cancel()
        raise
    except (HermesError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise ToolError(str(message)) from None


def _session_tools(opened: _Opened) -> list[Callable[..., Awaitable[Any]]]:
    async def sessions_list(limit: Limit = 20, source: Annotated[str | None, Field(
            description="Only sessions from here: cli, mcp, telegram, cron, ...")] = None
                            ) -> dict[str, Any]:
        """The profile's most recent sessions, newest first."""
        return {"sessions": await _run(lambda: opened.access.sessions_list(limit, source))}

    async def session_read(session_id: SessionId, limit: Limit = 50) -> dict[str, Any]:
        """A session's details and its last `limit` messages (user, assistant and tool
        messages, oldest first)."""
        return await _run(lambda: opened.access.session_read(session_id, limit))

    async def sessions_search(query: Annotated[str, Field(min_length=1, description=(
            "Words or a phrase to find."))], limit: Limit = 10) -> dict[str, Any]:
        """Full-text search over every session of the profile: the best matching message
        of each conversation, with a snippet."""
        return {"hits": await _run(lambda: opened.access.sessions_search(query, limit))}

    return [sessions_list, session_read, sessions_search]


def _agent_tools(opened: _Opened) -> list[Callable[..., Awaitable[Any]]]:
    async def ask(message: Annotated[str, Field(min_length=1, description=(
            "What to tell the agent."))],
                  session_id: Annotated[str | None, Field(description=(
                      "Continue this session; omit to start a new one."))] = None
                  ) -> dict[str, Any]:
        """Send a message to the Hermes agent and wait for its answer: one turn, with its
        tools, in a new session or in `session_id`. Returns the answer and the session
        id (pass it again to continue the conversation)."""
        request = uuid.uuid4().hex
        return await _run(lambda: opened.access.ask(message, session_id, request),
                          on_cancel=lambda: opened.access.interrupt(request))

    async def approvals_list() -> dict[str, Any]:
        """Dangerous commands that running `ask` turns wait to have approved."""
        return {"approvals": await _run(lambda: opened.access.approvals.listed())}

    async def approval_answer(
            approval_id: Annotated[str, Field(min_length=1, description=(
                "The id approvals_list shows."))],
            choice: Annotated[Literal["once", "session", "always", "deny"], Field(
                description="Run it once, allow its kind for the session or always in "
                            "this profile, or refuse it.")]) -> dict[str, Any]:
        """Answer an approval question of a running `ask`."""
        command = await _run(lambda: opened.access.approvals.answer(approval_id, choice))
        return {"approval_id": approval_id, "choice": choice, "command": command}

    return [ask, approvals_list, approval_answer]
