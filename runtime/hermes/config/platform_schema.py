"""The typed ``settings`` of each messaging platform kind, checked when a config is composed.

A platform kind is declared once per table: ``PLATFORM_SETTINGS`` maps the kind
(``platforms.enabled.<name>.kind``) to the schema its ``settings`` must fit, and
``hermes.gateway.platforms.ADAPTERS`` maps the same kind to its adapter. The first
platforms (webhook, telegram, ...) have their ``PlatformSettings`` subclass here and an
entry in each table; a newer one is one module of ``hermes.config.platform_kinds``
naming its ``KIND``, its ``Settings`` and its ``ADAPTER`` (``"module:Class"``), found
when this module is imported. ``hermes config set``, ``config validate``, ``doctor`` and
the gateway then all refuse a kind's bad settings the same way.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, PydanticKnownError

from hermes.config.plugins_schema import PLUGIN_CHOICE
from hermes.config.sections import NonBlank, Section
from hermes.errors import did_you_mean, one_of


def _refuse_booleans(error: Literal["int_type", "float_type"]) -> Any:
    """YAML reads ``yes``/``true`` as booleans, which pydantic would take as 1."""

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise PydanticKnownError(error)
        return value
    return BeforeValidator(check)


Integer = Annotated[int, _refuse_booleans("int_type")]
Number = Annotated[float, _refuse_booleans("float_type")]


class PlatformSettings(Section):
    """The settings every platform kind extends: an unknown key is refused with the
    closest known name and the list of them."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = list(cls.model_fields)
        unknown = [InitErrorDetails(type=PydanticCustomError(
            "unknown_name", "unknown key{hint}; known: {known}",
            {"hint": did_you_mean(str(key), known), "known": one_of(known)}),
            loc=(str(key),), input=value) for key, value in data.items() if key not in known]
        if unknown:
            raise ValidationError.from_exception_data(cls.__name__, unknown)
        return data

    def targets(self) -> dict[str, str]:
        """Delivery targets in these settings (``platform:chat_id``), by key: the platforms
        they name must be enabled."""
        return {}


SECRET_MISSING = ("missing: every route needs one, by reference to the profile's .env, e.g. "
                  "secret: ${secret:GITHUB_WEBHOOK_SECRET} and `hermes config set "
                  "GITHUB_WEBHOOK_SECRET \"$(openssl rand -hex 32)\"`")


def _route_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        raise PydanticCustomError("route_name", "a route name is 1-64 letters, digits, _ or -")
    return name


class ListenerSettings(PlatformSettings):
    """What the platforms served on the gateway's HTTP listener share: the address, and the
    deadlines and limits every client meets there (platforms and profiles on one address
    get the strictest)."""

    host: NonBlank = "127.0.0.1"
    """Address to listen on."""
    port: Annotated[Integer, Field(ge=0, le=65535)] = 8642
    """TCP port (0: any free port, shown by ``hermes gateway status``)."""
    header_timeout: Annotated[Number, Field(gt=0)] = 10.0
    """Seconds a request's whole header may take to arrive (from its first byte, or from
    the connection when it is new); past it the connection is answered 408 and closed."""
    read_timeout: Annotated[Number, Field(gt=0)] = 30.0
    """Seconds a request's whole body may take to arrive (not renewed by each byte); past
    it 408 and the connection is closed."""
    max_client_connections: Annotated[Integer, Field(ge=1)] = 32
    """Connections one client address may hold open at once; the next one is answered 503
    and closed (behind a reverse proxy every client is the proxy's address: raise it)."""


class ApiServerSettings(ListenerSettings):
    """``kind: api_server``: the OpenAI-compatible HTTP API. Clients always need the key
    (``API_SERVER_KEY`` in the profile's ``.env``, 16+ characters; created when missing)."""

    max_concurrency: Annotated[Integer, Field(ge=1)] = 8
    """Turns the profile runs at once; a request past them is answered 429."""
    max_body_bytes: Annotated[Integer, Field(ge=1)] = 4 * 1024 * 1024
    """Largest request body, counted as it arrives (chunked bodies too); past it 413."""
    allowed_hosts: list[NonBlank] = Field(default_factory=list)
    """Host names clients may reach the API by besides the bound address (and, on loopback
    or a wildcard address, the loopback names): a reverse proxy's public name, this
    machine's DNS name. Any other ``Host`` is refused (403: DNS rebinding); ``*`` allows
    every name."""


class MessagingSettings(PlatformSettings):
    """What every chat platform (telegram, matrix, email, ...) shares. Who may talk to the
    agent is the platform's ``allowed_users`` (beside ``settings``) plus paired users."""

    pairing: bool = True
    """Offer unknown senders in direct messages a pairing code for the owner to approve
    (``hermes pairing approve PLATFORM CODE``); off: they are told no."""
    send_rate: Annotated[Number, Field(gt=0)] = 1.0
    """Replies sent per second at most; the platform's own rate limits (429 with
    ``retry_after``) are honoured besides."""
    announce_learning: bool = False
    """Tell the chat in one line what the background learning review of its conversation
    saved (``learned: skill deploy-site updated``); off: the chat hears nothing of it."""


class TelegramSettings(MessagingSettings):
    """``kind: telegram``: a Telegram bot (long polling); its token is the platform's
    ``token``, by reference: ``${secret:TELEGRAM_BOT_TOKEN}``."""

    base_url: NonBlank = "https://api.telegram.org"
    """The Bot API server (a self-hosted ``telegram-bot-api``, or a test double)."""
    poll_timeout: Annotated[Integer, Field(ge=1, le=120)] = 30
    """Seconds one long poll for updates waits on the server."""
    markdown: bool = True
    """Send answers as MarkdownV2 (escaped; plain text when Telegram rejects the markup)."""


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def _http_url(url: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise PydanticCustomError("url", "not an http(s) URL; e.g. https://matrix.example.org")
    return url.rstrip("/")


def _matrix_user(user_id: str) -> str:
    if user_id and not re.fullmatch(r"@[^:\s]+:\S+", user_id):
        raise PydanticCustomError("matrix_user", "not a Matrix user id; e.g. @hermes:example.org")
    return user_id


def _address(address: str) -> str:
    if not re.fullmatch(r"[^@\s<>]+@[^@\s<>]+", address):
        raise PydanticCustomError("address", "not an email address; e.g. hermes@example.org")
    return address


class MatrixSettings(MessagingSettings):
    """``kind: matrix``: a Matrix account talking in rooms. It logs in with an access token,
    the platform's ``token`` (``${secret:MATRIX_ACCESS_TOKEN}``), or with ``user_id`` and
    ``password``. Unencrypted rooms only: end-to-end encryption may come later."""

    homeserver: Annotated[NonBlank, AfterValidator(_http_url)]
    """The homeserver's address, e.g. ``https://matrix.example.org``."""
    user_id: Annotated[str, AfterValidator(_matrix_user)] = ""
    """The agent's account, e.g. ``@hermes:example.org``: needed with ``password``; with a
    token, checked against the account the token belongs to."""
    password: str | None = None
    """The account's password, by reference: ``${secret:MATRIX_PASSWORD}`` (instead of a
    token; the login gets a token that lives only in memory)."""
    device_id: NonBlank = "HERMES"
    """The device a password login reuses, so restarts do not pile up devices."""
    sync_timeout: Annotated[Integer, Field(ge=1, le=120)] = 30
    """Seconds one sync request waits on the homeserver for news."""
    require_mention: bool = True
    """In rooms of more than two members, answer only messages that mention the agent,
    reply to it, or continue a thread it answered in."""


class EmailSettings(MessagingSettings):
    """``kind: email``: a mailbox read over IMAP (IDLE, else polling) and answered over SMTP,
    in the thread of the question. The password is the platform's ``token``, by reference:
    ``${secret:EMAIL_PASSWORD}``; allowed senders are lower-case addresses."""

    address: Annotated[NonBlank, AfterValidator(_address)]
    """The agent's address: answers come from it."""
    username: str = ""
    """The login name on both servers (empty: ``address``)."""
    imap_host: NonBlank
    """The IMAP server, e.g. ``imap.example.org``."""
    imap_port: Annotated[Integer, Field(ge=1, le=65535)] = 993
    imap_tls: Literal["ssl", "none"] = "ssl"
    """``ssl``: TLS from the start (port 993); ``none``: plain text, for a loopback host
    only (the password would cross the network in the clear)."""
    smtp_host: NonBlank
    """The SMTP server answers are sent through, e.g. ``smtp.example.org``."""
    smtp_port: Annotated[Integer, Field(ge=1, le=65535)] = 587
    smtp_tls: Literal["starttls", "ssl", "none"] = "starttls"
    """``starttls`` (port 587), ``ssl`` (port 465) or ``none`` (a loopback host only)."""
    mailbox: NonBlank = "INBOX"
    """The folder read for new mail."""
    poll_interval: Annotated[Number, Field(gt=0)] = 60.0
    """Seconds between checks for new mail when the server has no IDLE."""
    idle_timeout: Annotated[Number, Field(gt=0, le=1740)] = 600.0
    """Seconds one IDLE lasts before it is renewed (servers drop it after 30 minutes)."""
    require_authentication: bool = True
    """Take mail only when the receiving server vouches for the sender: its
    ``Authentication-Results`` header (from ``authserv_id``) shows DMARC, or an SPF or DKIM
    pass aligned with the From domain. A From address alone is easily forged."""
    authserv_id: str = ""
    """The name your mail server signs its ``Authentication-Results`` with, e.g.
    ``mx.example.org`` (needed while ``require_authentication`` is on)."""
    subject: NonBlank = "Message from Hermes"
    """The subject of mail that answers nothing (cron results, webhook deliveries)."""
    max_bytes: Annotated[Integer, Field(ge=1024)] = 10 * 1024 * 1024
    """Larger messages are not downloaded nor answered (anyone can send the agent mail)."""

    @model_validator(mode="after")
    def _safe(self) -> EmailSettings:
        for key, mode, host in (("imap_tls", self.imap_tls, self.imap_host),
                                ("smtp_tls", self.smtp_tls, self.smtp_host)):
            if mode == "none" and host not in LOOPBACK_HOSTS:
                raise PydanticCustomError("plain_text", "{key}: none would send the password "
                                          "to {host} in the clear; use TLS (none is for a "
                                          "loopback host only)", {"key": key, "host": host})
        if self.require_authentication and not self.authserv_id.strip():
            raise PydanticCustomError("authserv_id", "authserv_id: empty — name the server "
                                      "whose Authentication-Results to trust (e.g. "
                                      "mx.example.org), or set require_authentication: false")
        return self


class WebhookRoute(PlatformSettings):
    """One ``POST /webhooks/<route>``: who may call it and what the agent is asked."""

    secret: str = Field("", validate_default=True)
    """The HMAC-SHA256 key, by reference: ``${secret:GITHUB_WEBHOOK_SECRET}`` (required)."""
    signature: Literal["generic", "github"] = "generic"
    """``generic``: ``X-Webhook-Signature: sha256=HMAC(secret, timestamp + "." + body)``
    with ``X-Webhook-Timestamp`` (unix seconds) and an optional ``X-Webhook-Id``;
    ``github``: GitHub's ``X-Hub-Signature-256`` over the body, ``X-GitHub-Delivery``."""
    prompt: NonBlank
    """What the agent is asked, filled from the JSON payload: ``{issue.title}``."""
    toolsets: list[str] = Field(default_factory=list)
    """The only toolsets its turns may use (within the profile's); empty: no tools."""
    deliver: NonBlank = "response"
    """``response``: the answer is the HTTP response (200); else a chat,
    ``platform:chat_id[:thread]``: the request is answered 202 and the answer sent there."""

    @field_validator("secret", mode="before")
    @classmethod
    def _secret(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise PydanticCustomError("as_written", SECRET_MISSING)
        return value

    @field_validator("toolsets")
    @classmethod
    def _toolsets(cls, value: list[str]) -> list[str]:
        from hermes.config.toolset_names import toolset_error

        if message := toolset_error(value):
            raise PydanticCustomError("unknown_name", message)
        return value

    @field_validator("prompt")
    @classmethod
    def _template(cls, value: str) -> str:
        from hermes.config.webhook_template import TemplateError, parse_template

        try:
            parse_template(value)
        except TemplateError as exc:
            raise PydanticCustomError("template", str(exc)) from None
        return value

    @field_validator("deliver")
    @classmethod
    def _target(cls, value: str) -> str:
        from hermes.chats import TargetError, parse_target

        if value != "response":
            try:
                parse_target(value)
            except TargetError as exc:
                raise PydanticCustomError("target", f"{exc}; or response") from None
        return value


class ReplayRetention(PlatformSettings):
    """How long, and how many, signatures of ``signature: github`` deliveries are kept to
    refuse the same signed body sent again (GitHub signs no timestamp)."""

    seconds: Annotated[Number, Field(gt=0)] = 7 * 24 * 3600.0
    """Seconds a delivery's signature is remembered (7 days)."""
    entries: Annotated[Integer, Field(ge=1)] = 10_000
    """Signatures remembered per route at most; past it the oldest are forgotten first."""


class WebhookSettings(ListenerSettings):
    """``kind: webhook``: ``POST /webhooks/<route>`` on the gateway's HTTP server (the API
    server's listener when host and port are the same)."""

    max_body_bytes: Annotated[Integer, Field(ge=1)] = 1024 * 1024
    """Largest delivery, counted as it arrives; past it 413."""
    replay_window: Annotated[Number, Field(gt=0)] = 300.0
    """Seconds a signed timestamp is accepted; a delivery whose signature (or id) was seen
    within it is answered ``duplicate`` and not run again."""
    replay_retention: ReplayRetention = Field(default_factory=ReplayRetention)
    """For ``signature: github`` routes: the signatures seen, kept in the profile's home
    across restarts (``webhooks/``, 0600) for this long and at most this many."""
    routes: dict[Annotated[str, AfterValidator(_route_name)], WebhookRoute] = Field(
        default_factory=dict)
    """The routes, by name (the last part of the URL)."""

    def targets(self) -> dict[str, str]:
        return {f"routes.{name}.deliver": route.deliver for name, route in self.routes.items()
                if route.deliver != "response"}


PLATFORM_SETTINGS: dict[str, type[PlatformSettings]] = {
    "api_server": ApiServerSettings, "webhook": WebhookSettings, "telegram": TelegramSettings,
    "matrix": MatrixSettings, "email": EmailSettings}
"""The schema of ``settings`` for each platform kind."""

PLATFORM_ADAPTERS: dict[str, str] = {}
"""The adapter (``"module:Class"``) of each kind declared in ``hermes.config.platform_kinds``."""


def _declare_platform_kinds() -> None:
    """Add each module of ``hermes.config.platform_kinds`` to the two tables."""
    import importlib
    import pkgutil

    from hermes.config import platform_kinds

    for found in sorted(pkgutil.iter_modules(platform_kinds.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{platform_kinds.__name__}.{found.name}")
        PLATFORM_SETTINGS[module.KIND] = module.Settings
        PLATFORM_ADAPTERS[module.KIND] = module.ADAPTER


class PluginPlatformSettings(MessagingSettings):
    """``kind: plugin:NAME``: a platform an enabled plugin provides. Besides ``pairing``
    and ``send_rate``, its settings are the plugin's own, handed to it as they are."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return data  # the plugin checks its own keys


def check_kind(kind: str) -> str:
    """``kind`` if a platform kind of that name is declared (or a plugin's, ``plugin:NAME``),
    else a did-you-mean error."""
    if kind not in PLATFORM_SETTINGS and not PLUGIN_CHOICE.fullmatch(kind):
        raise PydanticCustomError("unknown_name", 'no platform kind "{kind}"{hint}; '
                                  "available: {known} (a plugin's: plugin:NAME)", {
                                      "kind": kind, "hint": did_you_mean(kind, PLATFORM_SETTINGS),
                                      "known": one_of(PLATFORM_SETTINGS)})
    return kind


def typed_settings(kind: str | None, value: Any) -> PlatformSettings:
    """``value`` validated against the settings schema of ``kind`` (an unknown kind's own
    error is reported instead, so its settings are not checked)."""
    model = PluginPlatformSettings if PLUGIN_CHOICE.fullmatch(kind or "") else \
        PLATFORM_SETTINGS.get(kind or "")
    if model is None:
        return PlatformSettings()
    return model.model_validate(value)


_declare_platform_kinds()
