"""The Chat page: a thin front door over the one conversation path.

``/p/{profile}/chat`` starts a session, ``/p/{profile}/chat/{id}`` resumes one (its
latest ``PART`` messages shown, tool calls folded; "Earlier messages" loads the part
before). A message is a POST whose answer is a stream of
server-sent events (``chat_turn``): the answer as it is written, each tool call with its
arguments, progress and result, dangerous commands asked in the page (a POST answers:
once, session, always or deny) and a Stop button (the session's interrupt). Turns run in
the profile's runtime, opened on its first chat and kept (``chat_runtimes``): the same
sandbox, approvals and secrets as every other front door of that profile.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, StreamingResponse

from hermes.agent.text_files import MAX_BYTES, NOTE, FileRefused
from hermes.dashboard.page import Page, open_page
from hermes.dashboard.pages.chat_files import attachments_of
from hermes.dashboard.pages.chat_runtimes import ChatRuntime, source_of
from hermes.dashboard.pages.chat_turn import ChatDoor, Message
from hermes.dashboard.queries.transcript import Transcript, latest
from hermes.errors import ConfigError
from hermes.sessions.errors import SessionNotFound

SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
"""A session id the page names (as the API server's ``X-Hermes-Session-Id``)."""
CHOICES = {"once": "/approve", "session": "/approve session", "always": "/approve always",
           "deny": "/deny"}
MAX_TEXT = 100_000
PART = 200
"""A resumed session shows its latest this many messages; "Earlier messages" the part
before."""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    door: ChatDoor | None = getattr(app.state, "chat", None)
    if door is not None:
        await asyncio.to_thread(door.runtimes.close)


router = APIRouter(lifespan=_lifespan)


def door_of(request: Request) -> ChatDoor:
    """The dashboard's ``ChatDoor``, made on the first chat request; beside the gateway
    (``app.state.runtimes``) it runs turns in the gateway's runtimes."""
    state = request.app.state
    if getattr(state, "chat", None) is None:
        state.chat = ChatDoor(dict(state.views.manager.environ),
                              getattr(state, "runtimes", None))  # the gateway's, if any
    door: ChatDoor = state.chat
    return door


async def runtime_of(page: Page) -> ChatRuntime:
    """The profile's runtime (opened on first use); a config that does not compose is a
    409 with its one line."""
    door = door_of(page.request)
    try:
        return await asyncio.to_thread(door.runtimes.get, page.home)
    except ConfigError as exc:
        raise HTTPException(409, str(exc)) from exc


@router.get("/p/{profile}/chat", response_class=HTMLResponse)
async def new_chat(page: Annotated[Page, Depends(open_page)]) -> HTMLResponse:
    runtime = await runtime_of(page)
    return _render(page, runtime, None)


@router.get("/p/{profile}/chat/{session_id}", response_model=None)
async def resumed_chat(page: Annotated[Page, Depends(open_page)], session_id: str
                       ) -> HTMLResponse | RedirectResponse:
    runtime = await runtime_of(page)
    shown = await _part(page, runtime, session_id, None)
    if shown.session.id != session_id:  # a unique prefix: the page names the full id
        return RedirectResponse(f"/p/{page.profile}/chat/{shown.session.id}", 303)
    return _render(page, runtime, shown)


@router.get("/p/{profile}/chat/{session_id}/earlier", response_class=HTMLResponse)
async def earlier_messages(page: Annotated[Page, Depends(open_page)], session_id: str,
                           before: int) -> HTMLResponse:
    """The part of the transcript before the message id ``before`` (an htmx fragment: its
    entries, after its own "Earlier messages" button if there are more)."""
    shown = await _part(page, await runtime_of(page), session_id, before)
    return page.views.render("chat/_entries.html", transcript=shown, profile=page.profile,
                             attached_note=NOTE)


async def _part(page: Page, runtime: ChatRuntime, session_id: str, before: int | None
                ) -> Transcript:
    """The ``PART`` latest messages of the session (before ``before``); 404 if none."""
    store = runtime.service.runtime.container.sessions()
    try:
        return await asyncio.to_thread(latest, store, session_id, limit=PART, before=before)
    except (SessionNotFound, LookupError) as exc:
        raise HTTPException(404, f"No session {session_id!r} in profile {page.profile}: "
                                 "start one on the Chat page.") from exc


def _render(page: Page, runtime: ChatRuntime, shown: Transcript | None) -> HTMLResponse:
    settings = runtime.service.runtime.settings
    return page.render("chat/index.html", "chat", transcript=shown,
                       session_id=shown.session.id if shown else "",
                       refusal=runtime.refusal, model=settings.provider.model,
                       max_text_kib=MAX_BYTES // 1024, attached_note=NOTE)


@router.post("/p/{profile}/chat/turn")
async def send(page: Annotated[Page, Depends(open_page)], request: Request
               ) -> StreamingResponse:
    """A message: ``{"text": ..., "session_id": ..., "files": [{"name": ..., "data":
    data: URL}, ...], "images": [data: URL, ...]}`` (no session: a new one); the turn's
    events as ``text/event-stream``. A file that is neither an image nor text is a 400
    with its one line (nothing asked)."""
    body = await _json(request)
    text = body.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        raise HTTPException(400, f"text: a message of 1 to {MAX_TEXT} characters")
    try:
        images, files = attachments_of(body)
    except (ValueError, FileRefused) as exc:
        raise HTTPException(400, str(exc)) from exc
    session_id = body.get("session_id") or uuid.uuid4().hex
    _check_id(session_id)
    runtime = await runtime_of(page)
    message = Message(text.strip(), images, files)
    events = door_of(request).turn(page.profile, runtime, session_id, message)
    return StreamingResponse(events, media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


@router.post("/p/{profile}/chat/{session_id}/stop")
async def stop(page: Annotated[Page, Depends(open_page)], session_id: str) -> JSONResponse:
    """The Stop button: interrupt the session's running turn (and its open question)."""
    _check_id(session_id)
    runtime = await runtime_of(page)
    stopped = runtime.service.conversations.interrupt_session(session_id)
    return JSONResponse({"stopped": stopped})


@router.post("/p/{profile}/chat/{session_id}/approval")
async def answer(page: Annotated[Page, Depends(open_page)], session_id: str,
                 request: Request) -> JSONResponse:
    """The answer to the command waiting for approval: ``{"choice": "once" | "session" |
    "always" | "deny"}``."""
    _check_id(session_id)
    choice = (await _json(request)).get("choice")
    if choice not in CHOICES:
        raise HTTPException(400, "choice: once, session, always or deny")
    runtime = await runtime_of(page)
    source = source_of(session_id)
    if runtime.approvals.waiting(source) is None:
        return JSONResponse({"message": "nothing is waiting for approval here"}, 409)
    return JSONResponse({"message": runtime.approvals.answer(source, CHOICES[choice])})


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise HTTPException(400, "the body must be JSON") from exc
    if not isinstance(body, dict):
        raise HTTPException(400, "the body must be a JSON object")
    return body


def _check_id(session_id: Any) -> None:
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise HTTPException(400, "session_id: 1-128 letters, digits, '.', '_' or '-'")
