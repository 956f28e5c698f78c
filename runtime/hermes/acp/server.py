"""The ACP agent: answers an editor's requests with one runtime's sessions.

``initialize`` says what we offer (loading sessions, embedded context in prompts) and
notes what the editor offers (its file system). ``session/new`` opens one of our
sessions (its id is the ACP session id; ``hermes sessions`` lists it, source
``acp``), ``session/load`` resumes any stored session and replays its transcript
first, ``session/prompt`` runs a turn streamed as updates, ``session/cancel``
interrupts it. Dangerous commands in a turn become permission requests. Sessions are
conversations of the runtime's ``Conversations``: when the editor goes, each one ends
there (one the model never answered is discarded, as everywhere).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, run_agent
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    TextContentBlock,
)

from hermes import __version__
from hermes.acp.channel import Bridge, UpdateChannel
from hermes.acp.files import EditorFiles
from hermes.acp.permission import EditorApprover
from hermes.acp.session import EditorSession, TurnEvents
from hermes.acp.updates import history
from hermes.agent.attachments import Attachment, ImageRefused, VisionLimits, from_bytes
from hermes.agent.conversations import Conversation, Conversations
from hermes.agent.factory import Interaction
from hermes.sessions.errors import SessionError

SOURCE = "acp"
"""Sessions opened by an editor are stored with this source."""
WITHOUT = ("clarify",)
"""ACP has no way to ask the person a free question mid-turn: the model asks in its
answer and the reply is the next prompt, as in any chat."""
NOT_FOUND = -32002
"""ACP's error code for a resource (here: a session) that does not exist."""


def prompt_text(blocks: Sequence[Any]) -> str:
    """A prompt's content blocks as the user's message: text as it is, a linked file as
    a mention of its URI, an embedded file (editor context) with its text."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            text = getattr(block.resource, "text", None)
            if text is not None:
                parts.append(f'<context uri="{block.resource.uri}">\n{text}\n</context>')
    return "\n\n".join(part for part in parts if part)


def prompt_images(blocks: Sequence[Any], limits: VisionLimits) -> list[Attachment]:
    """A prompt's image blocks (base64 ``data``), checked like every attached image; a
    bad one is the prompt's error (``invalid_params``: one line naming it)."""
    images = []
    for number, block in enumerate(blocks):
        if not isinstance(block, ImageContentBlock):
            continue
        source = block.uri or f"prompt[{number}] image"
        try:
            images.append(from_bytes(base64.b64decode(block.data, validate=True), source,
                                     limits))
        except (ValueError, binascii.Error, ImageRefused) as exc:
            raise RequestError.invalid_params({"prompt": f"{source}: {exc}"}) from exc
    if len(images) > limits.max_images:
        raise RequestError.invalid_params({"prompt": f"{len(images)} images, more than "
                                           f"vision.max_images ({limits.max_images})"})
    return images


class HermesAcpAgent:
    """The ``acp.Agent`` of one ``hermes acp`` process (one runtime, many sessions)."""

    def __init__(self, conversations: Conversations, learning: Any = None):
        self._conversations = conversations
        self._factory = conversations.factory
        self._learning = learning
        self._sessions: dict[str, EditorSession] = {}
        self._capabilities = ClientCapabilities()
        self._bridge: Bridge | None = None

    def on_connect(self, conn: Client) -> None:
        self._bridge = Bridge(asyncio.get_running_loop(), conn)

    async def initialize(self, protocol_version: int,
                         client_capabilities: ClientCapabilities | None = None,
                         **_: Any) -> InitializeResponse:
        self._capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_info=Implementation(name="hermes", title="Hermes", version=__version__),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True)))

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        return AuthenticateResponse()  # the profile's own credentials are used

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        await self._open(session_id, cwd, lambda how: self._conversations.open(
            how, session=session_id))
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        try:
            stored = self._factory.deps.sessions.resolve_id(session_id)
        except SessionError as exc:
            raise RequestError(NOT_FOUND, str(exc), {"sessionId": session_id}) from None
        session = await self._open(session_id, cwd,
                                   lambda how: self._conversations.open(how, resume=stored))
        channel = session.events.channel
        for update in history(self._factory.deps.sessions.messages(stored), Path(cwd)):
            channel.post(update)
        await channel.drain()  # the transcript arrives before the answer, as ACP asks
        return LoadSessionResponse()

    async def prompt(self, prompt: Sequence[Any], session_id: str,
                     **_: Any) -> PromptResponse:
        session = self._session(session_id)
        images = prompt_images(prompt, session.conversation.vision_limits())
        return await session.prompt(prompt_text(prompt), images)

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def close(self) -> None:
        """The editor is gone: stop running turns, end every session (an unanswered
        one is discarded, as the chat does)."""
        for session in self._sessions.values():
            session.cancel()
            session.events.channel.close()
            await asyncio.to_thread(session.conversation.end)
        self._sessions.clear()

    async def _open(self, session_id: str, cwd: str,
                    open_conversation: Callable[[Interaction], Conversation]
                    ) -> EditorSession:
        if not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"cwd": f"not an absolute path: {cwd}"})
        old = self._sessions.get(session_id)
        if old is not None and old.running:
            raise RequestError.invalid_request(
                {"details": f"session {session_id} is running a prompt; cancel it first"})
        bridge = self._connected()
        events = TurnEvents(UpdateChannel(bridge, session_id), Path(cwd))
        how = Interaction(interactive=True, stream=True, source=SOURCE, cwd=cwd,
                          without=WITHOUT,
                          approve=EditorApprover(bridge, events.channel, events.current_call),
                          events=events.agent_events(),
                          files=self._editor_files(bridge, session_id, cwd))
        try:
            conversation = await asyncio.to_thread(open_conversation, how)
        except BaseException:
            events.channel.close()
            raise
        if old is not None:  # loaded again: the earlier copy is done (the session goes on)
            old.events.channel.close()
            await asyncio.to_thread(old.conversation.end, keep=True)
        session = self._sessions[session_id] = EditorSession(conversation, events,
                                                             self._learning)
        return session

    def _editor_files(self, bridge: Bridge, session_id: str, cwd: str) -> EditorFiles | None:
        """Reads and writes through the editor when it offers them and the tools work on
        this machine's files (a local environment)."""
        fs = self._capabilities.fs
        environment = self._factory.environment(cwd)
        if fs is None or not (fs.read_text_file or fs.write_text_file) \
                or environment.kind != "local":
            return None
        return EditorFiles(environment.files(), bridge, session_id,
                           read=bool(fs.read_text_file), write=bool(fs.write_text_file))

    def _session(self, session_id: str) -> EditorSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError(NOT_FOUND, f"session {session_id} is not open here; open it "
                               "with session/new or session/load", {"sessionId": session_id})
        return session

    def _connected(self) -> Bridge:
        if self._bridge is None:
            raise RuntimeError("the ACP connection is not set up yet")
        return self._bridge


async def serve(conversations: Conversations, reader: asyncio.StreamReader,
                writer: asyncio.StreamWriter, learning: Any = None) -> None:
    """Answer ACP on ``reader``/``writer`` until the editor closes the connection."""
    agent = HermesAcpAgent(conversations, learning)
    try:
        # Not every method of the protocol is ours (modes, forks, session lists): the SDK
        # answers the ones an agent lacks with "method not found", as ACP intends.
        await run_agent(cast(Any, agent), writer, reader)
    finally:
        await agent.close()
