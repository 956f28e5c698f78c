"""The OpenAI-compatible HTTP API of one listener, serving one or more profiles.

Each served profile is one model id (the profile's name) in ``GET /v1/models``;
the ``model`` of a request picks the profile. The agent runs its whole loop,
tools included, for every request. Conversations continue through the
``X-Hermes-Session-Id`` header (answered on every response); without it each
request is a new session whose history is the client's messages. A client's
``system`` message is layered under the agent's own system prompt. A last user
message ``/<command> [argument]`` of an enabled plugin is answered by that plugin
(routed by ``agent/commands.py``, as on every platform), ``/model [NAME]`` shows or
switches the session's model; ``/<skill> [request]`` runs the turn with that skill loaded.

Streaming chat completions are OpenAI chunks over SSE ending in ``[DONE]``; tool
progress travels in chunks with an empty delta and a ``hermes`` field
(``{"type": "tool_start", "tool": ..., "arguments": ...}``), which plain OpenAI
clients ignore.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from hermes.agent.attachments import Attachment, ImageRefused
from hermes.agent.commands import parse, route
from hermes.agent.conversations import Busy, Conversation, Draining
from hermes.agent.dispatch import CallOutcome
from hermes.agent.factory import Interaction
from hermes.agent.loop import AgentEvents, TurnResult
from hermes.agent.seeing import EarlierImagesRefused
from hermes.gateway.api_server.body import App, BodyLimits, Receive, Scope, Send, limit_bodies
from hermes.gateway.api_server.images import Earlier, Message, split_with_images
from hermes.gateway.api_server.request_models import (
    ChatRequest,
    ResponsesRequest,
    parse_body,
    parts_of,
)
from hermes.gateway.api_server.responses import ResponseStore
from hermes.gateway.api_server.wire import (
    WireError,
    chunk,
    completion,
    new_id,
    response_object,
    usage_body,
)
from hermes.gateway.service import ProfileService
from hermes.models.types import StreamCallbacks, ToolCall, Usage

SESSION_HEADER = "X-Hermes-Session-Id"
SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclass
class Served:
    """One profile behind this listener."""

    service: ProfileService
    key: str
    """The bearer key clients must send (always one)."""
    responses: ResponseStore


ROUTES = "/v1/chat/completions, /v1/responses, /v1/responses/{id}, /v1/models, /health"
JSON_BODIES = frozenset({"/v1/chat/completions", "/v1/responses"})
"""The routes that take a body: a POST there must be ``application/json`` (``guard``)."""


def create_app(served: dict[str, Served], ready: Callable[[], bool], limits: BodyLimits,
               log: logging.Logger) -> App:
    """The listener's ASGI app: bodies limited (``body``), every error in OpenAI's shape."""
    app = FastAPI(title="Hermes API", docs_url=None, redoc_url=None, openapi_url=None)
    api = _Api(served, ready)
    app.add_exception_handler(WireError, _wire_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, api.internal_error)
    app.add_api_route("/health", api.health, methods=["GET"])
    app.add_api_route("/v1/models", api.models, methods=["GET"])
    app.add_api_route("/v1/chat/completions", api.chat, methods=["POST"], response_model=None)
    app.add_api_route("/v1/responses", api.create_response, methods=["POST"])
    app.add_api_route("/v1/responses/{response_id}", api.get_response, methods=["GET"])
    return limit_bodies(_handled_errors(app), limits, log)


class _Api:
    def __init__(self, served: dict[str, Served], ready: Callable[[], bool]):
        self.served = served
        self.ready = ready

    async def health(self, request: Request) -> JSONResponse:
        """The status for anyone; the profiles (names, turns) only for their key."""
        if not self.ready():
            status = "starting"
        else:
            draining = any(s.service.draining for s in self.served.values())
            status = "draining" if draining else "ok"
        body: dict[str, Any] = {"status": status}
        shown = {name: {"ready": status != "starting" and not s.service.draining,
                        "active_turns": s.service.active_turns}
                 for name, s in self.served.items() if _authorized(request, s.key)}
        if shown:
            body["profiles"] = shown
        return JSONResponse(body, status_code=200 if status == "ok" else 503)

    async def models(self, request: Request) -> dict[str, Any]:
        allowed = [name for name, s in self.served.items() if _authorized(request, s.key)]
        if not allowed:
            raise _unauthorized()
        return {"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "hermes",
             "hermes": {"profile": name, "model": self.served[name].service.model}}
            for name in allowed]}

    def _profile(self, request: Request, model: str) -> Served:
        served = self.served.get(model)
        if served is None:
            raise WireError(404, f"model {model!r} does not exist; this server has: "
                                 f"{', '.join(sorted(self.served))} (one per profile)",
                            param="model", code="model_not_found")
        if not _authorized(request, served.key):
            raise _unauthorized()
        return served

    def _any_key(self, request: Request) -> None:
        """503 while starting; 401 before anything is read when the key fits no profile."""
        if not self.ready():
            raise WireError(503, "the gateway is starting; retry in a moment",
                            "server_starting")
        if not any(_authorized(request, s.key) for s in self.served.values()):
            raise _unauthorized()

    async def chat(self, request: Request) -> Any:
        self._any_key(request)
        body = parse_body(await request.body(), ChatRequest)
        served = self._profile(request, body.model)
        session_id = _session_header(request)
        messages = [(m.role, *parts_of(m.content, f"messages.{i}.content"))
                    for i, m in enumerate(body.messages)]
        instructions, history, text, images = await asyncio.to_thread(
            split_with_images, messages, "messages", served.service.runtime.settings)
        headers = {SESSION_HEADER: session_id}
        answer = await _plugin_command(served.service, text, session_id)
        if answer is not None:
            return _answered(body.model, answer, bool(body.stream), headers)
        text = await asyncio.to_thread(served.service.expand, text)  # /<skill> [request]
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            stream = _stream_chat(served.service, body.model, session_id, history,
                                  instructions, Turn(text, images), usage)
            await stream.__anext__()  # takes the turn slot now: 429/503 before streaming
            return StreamingResponse(stream, media_type="text/event-stream", headers=headers)
        _, result = await _run(served.service, Interaction(source="api_server", stream=False),
                               session_id, history, instructions, Turn(text, images))
        return JSONResponse(completion(body.model, result.text, result.usage), headers=headers)

    async def create_response(self, request: Request) -> Any:
        self._any_key(request)
        body = parse_body(await request.body(), ResponsesRequest)
        served = self._profile(request, body.model)
        if body.stream:
            raise WireError(400, "stream: streaming is not supported on /v1/responses; use "
                                 "/v1/chat/completions with stream=true", param="stream")
        if isinstance(body.input, str):
            messages: list[Message] = [("user", body.input, [])]
        else:
            messages = [(m.role, *parts_of(m.content, f"input.{i}.content"))
                        for i, m in enumerate(body.input)]
        instructions, history, text, images = await asyncio.to_thread(
            split_with_images, messages, "input", served.service.runtime.settings)
        instructions = "\n\n".join(x for x in (body.instructions, instructions) if x) or None
        session_id = None
        if body.previous_response_id:
            session_id = served.responses.session_of(body.previous_response_id)
            if session_id is None:
                raise WireError(404, f"previous_response_id: no stored response "
                                     f"{body.previous_response_id!r}",
                                param="previous_response_id", code="response_not_found")
        session_id = session_id or uuid.uuid4().hex
        answer = await _plugin_command(served.service, text, session_id)
        if answer is None:
            text = await asyncio.to_thread(served.service.expand, text)  # /<skill> [request]
            session_id, result = await _run(served.service,
                                            Interaction(source="api_server", stream=False),
                                            session_id, history, instructions,
                                            Turn(text, images))
            answer, usage = result.text, result.usage
        else:
            usage = Usage()
        response = response_object(new_id("resp"), body.model, answer, usage,
                                   body.previous_response_id, body.store)
        if body.store:
            served.responses.save(response, session_id)
        return JSONResponse(response, headers={SESSION_HEADER: session_id})

    async def get_response(self, request: Request, response_id: str) -> Any:
        for served in self.served.values():
            if _authorized(request, served.key):
                found = served.responses.load(response_id)
                if found is not None:
                    return found
        raise WireError(404, f"no stored response {response_id!r}", code="response_not_found")

    async def internal_error(self, request: Request, exc: Exception) -> JSONResponse:
        for served in self.served.values():
            served.service.log.exception("request failed", exc_info=exc)
            break
        return JSONResponse(WireError(500, "internal error; see the gateway log",
                                      "server_error").body(), status_code=500)


async def _plugin_command(service: ProfileService, text: str, session_id: str
                          ) -> str | None:
    """The reply of an enabled plugin's ``/command`` (routed by the one slash-command
    table, as on every platform), or of ``/model [NAME]``, in the session of
    ``session_id``; None for any other message."""
    if not text.startswith("/"):
        return None
    name, argument = parse(text)
    found = route(name, "gateway", service.plugin_commands())
    if found == "builtin" and name == "model":
        return service.model_command(session_id, argument)
    if found != "plugin":
        return None
    return await asyncio.to_thread(service.run_plugin_command, name, argument,
                                   Interaction(source="api_server", stream=False), session_id)


def _answered(model: str, text: str, stream: bool, headers: dict[str, str]) -> Any:
    """A reply no model wrote (a plugin command's) as a completion, or its SSE chunks."""
    if not stream:
        return JSONResponse(completion(model, text, Usage()), headers=headers)
    chunk_id = new_id("chatcmpl")
    parts = [_sse(chunk(chunk_id, model, {"role": "assistant", "content": ""})),
             _sse(chunk(chunk_id, model, {"content": text})),
             _sse(chunk(chunk_id, model, {}, "stop")), "data: [DONE]\n\n"]
    return StreamingResponse(iter(parts), media_type="text/event-stream", headers=headers)


@dataclass(frozen=True)
class Turn:
    """The client's last user message: its text and its checked images."""

    text: str
    images: list[Attachment]


async def _run(service: ProfileService, how: Interaction, session_id: str,
               history: Earlier, instructions: str | None,
               turn: Turn) -> tuple[str, TurnResult]:
    """One turn in the conversation of ``session_id`` (ended after it); its session id."""
    with _slot(service):
        conversation = await asyncio.to_thread(_open, service, how, session_id, history,
                                               instructions)
        result = await asyncio.to_thread(_run_to_end, service, conversation, turn)
    _raise_for(result)
    return conversation.session_id, result


def _open(service: ProfileService, how: Interaction, session_id: str, history: Earlier,
          instructions: str | None) -> Conversation:
    """``service.open``; earlier images no model here can look at are a 400 naming the
    message, before anything is stored."""
    try:
        return service.open(how, session_id, history.messages, instructions)
    except EarlierImagesRefused as exc:
        raise history.refused(exc) from exc


@contextmanager
def _slot(service: ProfileService) -> Iterator[None]:
    """A turn slot of the profile: 429 when all are taken, 503 while shutting down."""
    try:
        with service.slot():
            yield
    except Busy as exc:
        raise WireError(429, str(exc), "rate_limit_error", code="too_many_turns") from exc
    except Draining as exc:
        raise WireError(503, str(exc), "server_shutting_down") from exc


def _raise_for(result: TurnResult) -> None:
    if result.exit_reason == "error":
        raise WireError(502, f"the model call failed: {result.error}", "upstream_error")
    if result.exit_reason == "interrupted":
        raise WireError(503, "the turn was interrupted (the gateway is shutting down); the "
                             "session keeps what was done", "server_shutting_down")


def _run_to_end(service: ProfileService, conversation: Any, turn: Turn) -> TurnResult:
    """``service.run_to_end``; images a model cannot take (no vision, no vision.model) are
    a 400 before the turn."""
    try:
        return service.run_to_end(conversation, turn.text, turn.images)
    except ImageRefused as exc:
        raise WireError(400, str(exc), param="messages", code="invalid_image") from exc


async def _stream_chat(service: ProfileService, model: str, session_id: str,
                       history: Earlier, instructions: str | None, turn: Turn,
                       include_usage: bool) -> AsyncIterator[str]:
    with _slot(service):
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def put(kind: str) -> Callable[[Any], None]:
            def deliver(item: Any) -> None:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, item))
            return deliver

        events = AgentEvents(stream=StreamCallbacks(on_text=put("text")),
                             on_tool_start=put("tool"), on_tool_end=put("tool_end"))
        how = Interaction(source="api_server", stream=True, events=events)
        conversation = await asyncio.to_thread(_open, service, how, session_id, history,
                                               instructions)  # a refusal: 400, not a stream
        try:
            yield ""  # the slot is held, the session open: the response may start
        except BaseException:  # never streamed (the client left first)
            conversation.end()
            raise
        running = asyncio.ensure_future(asyncio.to_thread(_run_to_end, service, conversation,
                                                          turn))
        running.add_done_callback(lambda _: loop.call_soon_threadsafe(queue.put_nowait,
                                                                      ("done", None)))
        chunk_id = new_id("chatcmpl")
        try:
            yield _sse(chunk(chunk_id, model, {"role": "assistant", "content": ""}))
            while (item := await queue.get())[0] != "done":
                yield _sse(_event_chunk(chunk_id, model, *item))
        except asyncio.CancelledError:  # the client went away: stop the turn (then ended)
            conversation.interrupt()
            raise
        try:
            _raise_for(running.result())
        except WireError as exc:  # the turn failed, or no model could take its images
            yield _sse(exc.body())
        else:
            extra = {"usage": usage_body(running.result().usage)} if include_usage else {}
            yield _sse(chunk(chunk_id, model, {}, "stop", **extra))
        yield "data: [DONE]\n\n"


def _event_chunk(chunk_id: str, model: str, kind: str, item: Any) -> dict[str, Any]:
    if kind == "text":
        return chunk(chunk_id, model, {"content": item})
    if kind == "tool":
        call: ToolCall = item
        return chunk(chunk_id, model, {}, hermes={"type": "tool_start", "tool": call.name,
                                                  "arguments": call.arguments})
    outcome: CallOutcome = item
    return chunk(chunk_id, model, {}, hermes={"type": "tool_end", "tool": outcome.call.name,
                                              "error": outcome.is_error})


def _sse(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _session_header(request: Request) -> str:
    value = request.headers.get(SESSION_HEADER)
    if value is None:
        return uuid.uuid4().hex
    if not SESSION_ID.match(value):
        raise WireError(400, f"{SESSION_HEADER}: 1-128 letters, digits, '.', '_' or '-'",
                        param=SESSION_HEADER)
    return value


def _authorized(request: Request, key: str) -> bool:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(),
                                                              key.encode())


def _unauthorized() -> WireError:
    return WireError(401, "missing or wrong API key: send Authorization: Bearer <key> "
                          "(API_SERVER_KEY in the profile's .env)", "authentication_error",
                     code="invalid_api_key")


async def _wire_error(request: Request, exc: WireError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's own 404 (no route) and 405 (wrong method), in OpenAI's shape."""
    where = f"{request.method} {request.url.path}"
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        error = WireError(405, f"{where}: method not allowed; use {allowed}",
                          code="method_not_allowed")
    elif exc.status_code == 404:
        error = WireError(404, f"invalid URL ({where}); this server has {ROUTES}",
                          code="not_found")
    else:
        error = WireError(exc.status_code, f"{where}: {exc.detail}")
    return JSONResponse(error.body(), status_code=error.status, headers=exc.headers)


def _handled_errors(app: FastAPI) -> App:
    """Starlette re-raises an exception after ``internal_error`` has logged and answered it;
    stop it there, or the server prints the traceback again on the gateway's stderr."""

    async def handled(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await app(scope, receive, send)
        except Exception:  # noqa: BLE001 - logged (with its traceback) by internal_error
            return

    return handled
