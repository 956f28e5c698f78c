"""The ``slack`` platform: a Slack app over Socket Mode (slack-bolt's ``AsyncApp`` and
``AsyncSocketModeHandler`` on aiohttp), so no public URL is needed.

It checks the bot token (``auth.test``), opens the Socket Mode WebSocket with the
app-level token (``apps.connections.open``) and takes what Slack sends there: direct
messages, mentions in channels (answered in a thread under them: ``reply_in_thread``)
and replies in threads it answered in, the slash command (``/hermes TEXT``), clicks on
the approve/deny buttons of an approval question, and App Home openings (a short view is
published). Voice clips and audio files go to the gateway's speech-to-text
(``hermes.gateway.voice``), downloaded with the bot token only for an allowed sender;
spoken answers (``/voice on``) are uploaded as OGG/Opus files in the chat.
Answers are mrkdwn in one section block (``blocks.SECTION_CHARS``: longer
answers are split on paragraphs, then lines), again as plain text when Slack rejects the
blocks; a 429's ``Retry-After`` is honoured. Slack has no typing indicator for apps: the
message being answered carries ``typing_reaction`` until the answer. A ``disconnect``
envelope (Slack's refresh) is followed at once by the SDK; a lost connection is made again
by the gateway, with backoff and ``reconnecting`` in ``gateway status``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from hermes.config.platform_kinds.slack import Settings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.images import read_capped, unreadable
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter
from hermes.gateway.messaging.text import split_text
from hermes.gateway.slack import events
from hermes.gateway.slack.blocks import SECTION_CHARS, answer_blocks, home_view
from hermes.gateway.slack.mrkdwn import escape, escaped_length, to_mrkdwn
from hermes.gateway.voice import IncomingAudio
from hermes.voice.audio import OGG_OPUS
from hermes.voice.base import Audio

DENIED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked",
                    "token_expired", "not_allowed_token_type", "missing_scope"})
"""Web API errors no retry helps: the token is wrong, revoked or lacks a scope."""
BLOCKS_REFUSED = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_too_long"})
CONNECT_TIMEOUT = 30.0
"""Seconds the Socket Mode WebSocket may take to open."""
LIVENESS_EVERY = 0.5
REMEMBERED = 1000
"""Threads answered in (and users' names) remembered."""
DOWNLOAD_TIMEOUT = 60.0
"""Seconds a voice clip's download may take."""
SLACK_LOG = logging.getLogger("hermes.gateway.slack.sdk")


class SlackPlatform(MessagingAdapter):
    """One Slack app (one workspace) of one profile."""

    max_chars = SECTION_CHARS
    voice_format = OGG_OPUS

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, Settings)  # the schema types it by ``kind``
        self.settings = settings
        if not config.token:
            raise ConfigError("no bot token — install the app, then `hermes config set "
                              "SLACK_BOT_TOKEN xoxb-…`", key=f"platforms.enabled.{name}.token")
        self.token = config.token
        self.listeners = listeners
        self._web: Any = None
        self._socket: Any = None
        self._socket_url = ""
        self._options = events.Options(name, "")
        self._answered: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._waiting: dict[str, tuple[str, str]] = {}
        """Per conversation: the message (channel, ts) its running turn answers."""
        self._reacted: set[str] = set()
        self._names: OrderedDict[str, str] = OrderedDict()

    def split(self, text: str) -> list[str]:
        return split_text(text, SECTION_CHARS, escaped_length)

    async def connect(self) -> None:
        """Check both tokens (``auth.test``; ``apps.connections.open``, which only hands out
        a WebSocket URL). The WebSocket itself is opened by ``listen``: a delivery without
        the gateway (``hermes cron run``) must not take a share of the app's events."""
        from slack_sdk.web.async_client import AsyncWebClient

        await self.disconnect()
        web = AsyncWebClient(token=self.token, base_url=self.settings.api_base,
                             logger=SLACK_LOG)
        me = await self._call("auth.test", web.auth_test())
        self._web = web
        self._options = events.Options(self.name, str(me["user_id"]),
                                       self.settings.reply_in_thread,
                                       self.settings.require_mention)
        who = f"@{me.get('user', '?')} in {me.get('team', '?')}"
        if self.settings.mode == "events":
            self.status.detail = f"{who} (Events API at {await self._serve_events(web)})"
            return
        opened = await self._call("apps.connections.open", web.apps_connections_open(
            app_token=self.settings.app_token))
        self._socket_url = str(opened["url"])
        self.status.detail = f"{who} (Socket Mode via {self.settings.api_base})"

    async def listen(self) -> None:
        """Open the Socket Mode WebSocket; return once it is down for a ping interval (the
        SDK follows Slack's own ``disconnect`` refreshes in between). With the Events API
        Slack posts to the listener: nothing to do here."""
        if self.settings.mode == "events":
            await asyncio.Event().wait()
        await self._open_socket()
        down = 0.0
        while down < self.settings.ping_interval:
            await asyncio.sleep(LIVENESS_EVERY)
            connected = self._socket is not None and await self._socket.client.is_connected()
            down = 0.0 if connected else down + LIVENESS_EVERY
        raise ConnectionError("the Socket Mode connection was lost")

    async def _open_socket(self) -> None:
        url, self._socket_url = self._socket_url, ""
        if not url:  # a second listen on one connect: ask for a fresh URL
            opened = await self._call("apps.connections.open", self._web.apps_connections_open(
                app_token=self.settings.app_token))
            url = str(opened["url"])
        self._socket = self._handler(self._web)
        self._socket.client.wss_uri = url
        try:
            await asyncio.wait_for(self._socket.client.connect(), CONNECT_TIMEOUT)
        except TimeoutError:
            raise ConnectionError(f"the Socket Mode WebSocket did not open in "
                                  f"{CONNECT_TIMEOUT:g} s") from None

    async def deliver(self, source: MessageSource, text: str) -> None:
        await self._stop_typing(source)
        if source.chat_type != "direct" and source.thread_id:  # before a reply can come
            self._remember_thread(source.chat_id, source.thread_id)
        await _translated(self._post(source, text))

    async def deliver_voice(self, source: MessageSource, sound: Audio) -> None:
        """A spoken answer as an audio file in the chat (``files:write``)."""
        await self._stop_typing(source)
        await _translated(self._web.files_upload_v2(
            channel=source.chat_id, thread_ts=source.thread_id or None, content=sound.data,
            filename=f"answer{sound.suffix}", title="Spoken answer"))

    async def typing(self, source: MessageSource) -> None:
        """A reaction on the message being answered (Slack has no typing for apps)."""
        waiting = self._waiting.get(source.session_key)
        if not self.settings.typing_reaction or waiting is None or self._web is None \
                or source.session_key in self._reacted:
            return
        self._reacted.add(source.session_key)
        await self._web.reactions_add(channel=waiting[0], timestamp=waiting[1],
                                      name=self.settings.typing_reaction)

    async def disconnect(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):  # closing a broken connection is fine
                await socket.client.close()

    async def stop(self) -> None:
        await super().stop()
        await self.disconnect()  # no more events: replies still go out by the Web API
        if self.settings.mode == "events" and self.listeners is not None:
            await self.listeners.stop(self.settings.host, self.settings.port)

    def _handler(self, web: Any) -> Any:
        """Bolt's app on a Socket Mode client that leaves reconnecting a lost connection to
        the gateway (``Connection``)."""
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        handler = AsyncSocketModeHandler(self._bolt(web), self.settings.app_token,
                                         logger=SLACK_LOG, web_client=web,
                                         ping_interval=self.settings.ping_interval)
        handler.client.default_auto_reconnect_enabled = False
        handler.client.auto_reconnect_enabled = False
        return handler

    def _bolt(self, web: Any) -> Any:
        """Bolt's app with this adapter's listeners (checking signatures on the Events
        API)."""
        from slack_bolt.async_app import AsyncApp

        app = AsyncApp(client=web, logger=SLACK_LOG, raise_error_for_unhandled_request=False,
                       signing_secret=self.settings.signing_secret or None,
                       request_verification_enabled=self.settings.mode == "events")
        app.event("message")(self._on_message)
        app.event("app_mention")(self._on_mention)
        app.event("app_home_opened")(self._on_home)
        app.command(re.compile(".*"))(self._on_command)
        app.action(re.compile(f"^{events.APPROVAL_ACTION}"))(self._on_button)
        return app

    async def _serve_events(self, web: Any) -> str:
        """Serve the Events API path on the gateway's listener (once; a reconnect gives it
        a new app); its URL."""
        from hermes.gateway.api_server.body import BodyLimits
        from hermes.gateway.slack.events_api import PREFIX, EventsEndpoint

        path = f"{PREFIX}{self.name}/"
        if self.listeners is None:  # sending without the gateway (cron): nothing to serve
            return path
        limits = BodyLimits(self.settings.max_body_bytes, self.settings.read_timeout,
                            f"settings.max_body_bytes of the {self.name} platform")
        listener = await self.listeners.listener(self.settings, limits, self.log)
        endpoint = listener.mounts.get(path)
        if isinstance(endpoint, EventsEndpoint):
            endpoint.bolt = self._bolt(web)
        else:
            listener.mounts[path] = EventsEndpoint(self._bolt(web), limits, self.log)
        return f"http://{listener.address}{path}"

    async def _on_message(self, event: dict[str, Any]) -> None:
        taken = events.message(event, self._options, self._answered)
        if taken is not None:
            taken = replace(taken, audio=tuple(self._audio(f) for f in events.audio_files(event)))
        await self._take(taken)

    async def _on_mention(self, event: dict[str, Any]) -> None:
        await self._take(events.mention(event, self._options))

    async def _on_command(self, ack: Any, command: dict[str, Any]) -> None:
        await ack()
        await self._take(events.command(command, self._options, self.settings.command))

    async def _on_button(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await self._take(events.button(body, self._options))

    async def _on_home(self, event: dict[str, Any]) -> None:
        if self.settings.app_home and event.get("tab") == "home" and self._web is not None:
            await self._web.views_publish(user_id=event.get("user"), view=home_view(
                self._options.bot_user, self.settings.command))

    async def _take(self, event: MessageEvent | None) -> None:
        if event is None:
            return
        source = event.source
        if event.message_id and source.chat_id:
            self._waiting[source.session_key] = (source.chat_id, event.message_id)
        named = MessageSource(source.platform, source.chat_id, source.chat_type,
                              source.user_id, source.user_name or await self._name(
                                  source.user_id), source.thread_id)
        await self.dispatch(replace(event, source=named))

    def _audio(self, file: dict[str, Any]) -> IncomingAudio:
        """A voice clip or audio file, downloaded (with the bot token) only for an allowed
        sender."""
        name = "voice message" if file.get("subtype") == "slack_audio" else \
            str(file.get("name") or "audio file")
        url = str(file.get("url_private_download") or file.get("url_private"))
        size = file.get("size") if isinstance(file.get("size"), int) else None
        suffix = "." + str(file.get("filetype") or "").strip(".") if file.get("filetype") \
            else ".m4a"
        return IncomingAudio(name, functools.partial(self._download, name, url), size,
                             str(file.get("mimetype") or "").lower(), suffix)

    async def _download(self, name: str, url: str, max_bytes: int) -> bytes:
        """A file's bytes from Slack (``files:read``), refused once past ``max_bytes``."""
        import aiohttp

        try:
            async with aiohttp.ClientSession() as session, session.get(
                    url, headers={"Authorization": f"Bearer {self.token}"},
                    timeout=aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT)) as response:
                if response.status != 200:
                    raise unreadable(name, "Slack", f"HTTP {response.status}")
                return await read_capped(response.content.iter_chunked(65536), max_bytes, name)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise unreadable(name, "Slack", type(exc).__name__) from None

    async def _name(self, user: str) -> str:
        """A user's name (``users.info``, remembered); empty when Slack does not say."""
        if user not in self._names and self._web is not None:
            try:
                found = await self._web.users_info(user=user)
                self._names[user] = str(found["user"].get("name") or "")
            except Exception:  # noqa: BLE001 - a name is only for display
                return ""
            while len(self._names) > REMEMBERED:
                self._names.popitem(last=False)
        return self._names.get(user, "")

    async def _post(self, source: MessageSource, text: str) -> None:
        """mrkdwn in a section block (with buttons under an approval question); plain
        text when Slack rejects the blocks."""
        from slack_sdk.errors import SlackApiError

        where = {"channel": source.chat_id, "thread_ts": source.thread_id or None}
        if self.settings.markdown:
            formatted = to_mrkdwn(text)
            try:
                await self._web.chat_postMessage(text=escape(text), blocks=answer_blocks(
                    formatted, text), **where)
                return
            except SlackApiError as exc:
                if exc.response.get("error") not in BLOCKS_REFUSED:
                    raise
                self.log.warning("blocks rejected; sent as plain text", extra={"fields": {
                    "platform": self.name, "chat": source.chat_id,
                    "error": exc.response.get("error")}})
        await self._web.chat_postMessage(text=escape(text), mrkdwn=False, **where)

    async def _stop_typing(self, source: MessageSource) -> None:
        waiting = self._waiting.pop(source.session_key, None)
        if waiting is None or source.session_key not in self._reacted:
            return
        self._reacted.discard(source.session_key)
        with contextlib.suppress(Exception):  # a reaction left behind is harmless
            await self._web.reactions_remove(channel=waiting[0], timestamp=waiting[1],
                                             name=self.settings.typing_reaction)

    def _remember_thread(self, channel: str, thread: str) -> None:
        self._answered[(channel, thread)] = None
        while len(self._answered) > REMEMBERED:
            self._answered.popitem(last=False)

    async def _call(self, method: str, call: Any) -> Any:
        """One Web API call of ``connect``: refused credentials are ``AccessDenied``,
        anything else a connection error (tried again with backoff)."""
        from slack_sdk.errors import SlackApiError

        try:
            return await call
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            if error in DENIED:
                raise AccessDenied(f"Slack refused {method}: {error} — {_token_hint(method)}"
                                   ) from None
            raise ConnectionError(f"{method}: {error}") from None


async def _translated(sending: Any) -> None:
    """Await a send; Slack's and the network's errors as the outbox knows them."""
    from aiohttp import ClientError
    from slack_sdk.errors import SlackApiError

    try:
        await sending
    except SlackApiError as exc:
        raise _send_error(exc) from None
    except (ClientError, TimeoutError, OSError) as exc:
        raise Disconnected(f"{type(exc).__name__}: {exc}") from None


def _send_error(exc: Any) -> Exception:
    """A failed send (``chat.postMessage``, a file upload) as the outbox's kind of error."""
    response = exc.response
    if response.status_code == 429:
        headers = {str(k).lower(): v for k, v in (response.headers or {}).items()}
        return RetryAfter(float(headers.get("retry-after", "1") or 1))
    error = str(response.get("error") or response.status_code)
    method = str(response.api_url).rstrip("/").rpartition("/")[2]
    if response.status_code >= 500:
        return Disconnected(f"{method}: {error}")
    return Rejected(f"{method}: {error}")


def _token_hint(method: str) -> str:
    if method == "apps.connections.open":
        return ("set the app-level token (xapp-…, scope connections:write): `hermes config "
                "set SLACK_APP_TOKEN xapp-…`")
    return "set the bot token (xoxb-…): `hermes config set SLACK_BOT_TOKEN xoxb-…`"
