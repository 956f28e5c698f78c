"""An editor for the ACP tests: the official SDK's client side, driving a real `hermes acp`.

``Editor`` implements the client half of ACP the way an editor does: it records every
session update, answers permission requests with the options it was told to pick,
and (when it offers the file system) serves reads from its "buffers" and keeps
writes. ``connect`` starts ``python -m hermes [ARGS] acp`` as an editor would and
yields the SDK's connection to it, already initialized.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)


class Editor:
    """The client side of ACP, recording what the agent sent."""

    def __init__(self, answers: list[str] | None = None,
                 buffers: dict[str, str] | None = None, writable: bool = False):
        self.updates: list[tuple[str, Any]] = []
        """``(session id, update)`` in the order they arrived."""
        self.permissions: list[Any] = []
        """Each permission request: its tool call, the option ids offered, and the ids of
        the tool calls already shown when it came."""
        self.answers = list(answers or [])
        """Option ids to pick, one per request; ``cancelled`` cancels the request, ``never``
        leaves it unanswered."""
        self.buffers = buffers
        """Open files by path (None: no file-system capability)."""
        self.writable = writable
        self.writes: dict[str, str] = {}
        self.wire: list[str] = []
        """Every message from the agent as it arrived: its method, or ``response``."""

    def observe(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.wire.append(event.message.get("method") or "response")

    def capabilities(self) -> ClientCapabilities:
        reads = self.buffers is not None
        return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=reads,
                                                            write_text_file=self.writable))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **_: Any) -> RequestPermissionResponse:
        shown = [u.tool_call_id for _, u in self.updates if u.session_update == "tool_call"]
        self.permissions.append((tool_call, [option.option_id for option in options], shown))
        choice = self.answers.pop(0)
        if choice == "never":  # the person walks away: only a cancel ends the question
            await asyncio.Event().wait()
        if choice == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=choice))

    async def read_text_file(self, path: str, session_id: str, **_: Any) -> ReadTextFileResponse:
        assert self.buffers is not None, "read_text_file without the capability"
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **_: Any) -> WriteTextFileResponse:
        assert self.writable, "write_text_file without the capability"
        self.writes[path] = content
        return WriteTextFileResponse()

    def kinds(self, session_id: str | None = None) -> list[str]:
        """The ``sessionUpdate`` kind of every update (of one session), in order."""
        return [update.session_update for sid, update in self.updates
                if session_id is None or sid == session_id]

    def of_kind(self, kind: str) -> list[Any]:
        return [update for _, update in self.updates if update.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        """The text of every chunk of ``kind``, joined."""
        return "".join(update.content.text for update in self.of_kind(kind))


async def eventually(condition: Callable[[], object], timeout: float = 30.0,
                     what: str = "the condition") -> None:
    """``conftest.wait_until`` for a coroutine: poll without blocking the loop."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        await asyncio.sleep(0.02)


def prompt_of(text: str) -> list[Any]:
    return [text_block(text)]


@asynccontextmanager
async def connect(editor: Editor, environ: dict[str, str], *args: str, stderr: Path,
                  command: list[str] | None = None
                  ) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse]]:
    """Start ``hermes ARGS acp`` (or ``command``) as the editor's agent; its stderr goes to
    the file ``stderr``."""
    argv = command or [sys.executable, "-m", "hermes", *args, "acp"]
    with stderr.open("ab") as log:
        async with spawn_agent_process(editor, argv[0], *argv[1:], env=environ,
                                       transport_kwargs={"stderr": log},
                                       observers=[editor.observe]) as (conn, _):
            hello = await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                          client_capabilities=editor.capabilities())
            yield conn, hello
