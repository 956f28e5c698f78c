"""Toolset ``messaging``: ``send_message``, with which the agent writes to a chat of its
own profile (``telegram:123``, ``email:ada@example.org``, a platform's home channel by
the platform's name), or lists where it may write.

A message to a chat other than the session's own is a request like a dangerous command:
asked first in manual approval mode (``hermes.tools.approval``), refused with nobody to
ask. Sub-agents never get the tool (``delegation``) and cron runs do not either (a job
has ``--deliver``). Secrets are redacted from what is sent."""

from __future__ import annotations

from typing import Any

from hermes.chats import MessageSource, Target
from hermes.errors import ToolError
from hermes.messaging.outbound import Outbound, OutboundError
from hermes.tools.approval import check_request
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ApprovalRequest, ToolContext
from hermes.tools.danger import Danger
from hermes.tools.results import error, ok

TOOLSET = "messaging"
OTHER_CHAT = "message_other_chat"
"""The approval class of a message to a chat other than the session's own."""
PREVIEW = 300
DESCRIPTION = (
    "Send a message to a chat of this profile's messaging platforms, or list them. "
    "target: 'platform:chat_id' (e.g. 'telegram:123456', 'email:ada@example.org', "
    "'matrix:!room:example.org'), 'platform:chat_id:thread', or a platform's name for its "
    "home channel. Call with action='list' (or no arguments) first when you do not know "
    "the chat. A message to a chat other than the current one may need the user's approval.")


def send_message_tool(outbound: Outbound) -> ToolSpec:
    """``send_message`` over the chat platforms of one profile; hidden where nothing can
    be sent (no chat platform, or a front door that cannot send)."""
    text = {"type": "string"}
    schema = object_schema(
        (),
        action={"type": "string", "enum": ["send", "list"],
                "description": "send (the default when target is given) or list the targets."},
        target={**text, "description": "Where to send (send)."},
        text={**text, "description": "The message (send)."},
    )

    def handle(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
        if args.get("action") == "list" or not (args.get("target") or args.get("text")):
            return listing(outbound, ctx.origin)
        try:
            return send(outbound, str(args.get("target") or ""), str(args.get("text") or ""),
                        ctx)
        except OutboundError as exc:
            return error(str(exc))

    return ToolSpec("send_message", TOOLSET, DESCRIPTION, schema, handle,
                    check=lambda: outbound.can_send)


def listing(outbound: Outbound, origin: MessageSource | None) -> str:
    """The targets, and the current chat when the session has one."""
    current = str(Target(origin.platform, origin.chat_id, origin.thread_id)) if origin else None
    return ok(targets=[chat.describe() for chat in outbound.chats.values()], current=current)


def send(outbound: Outbound, where: str, text: str, ctx: ToolContext) -> str:
    if not where.strip() or not text.strip():
        raise ToolError("send needs a target and a text; action='list' shows the targets")
    target = outbound.resolve(where)
    text = ctx.redact(text)
    if not _is_current(target, ctx.origin):
        refused = check_request(_request(target, text), ctx, what="message", sandboxed=False)
        if refused is not None:
            return error(refused)
    try:
        outbound.send(target, text)
    except OutboundError:
        raise
    except Exception as exc:  # noqa: BLE001 - the platform's failure, for the model
        return error(f"not sent to {target}: {exc}")
    return ok(sent_to=str(target), characters=len(text))


def _is_current(target: Target, origin: MessageSource | None) -> bool:
    return origin is not None and (target.platform, target.chat_id, target.thread_id) == \
        (origin.platform, origin.chat_id, origin.thread_id)


def _request(target: Target, text: str) -> ApprovalRequest:
    preview = text if len(text) <= PREVIEW else text[:PREVIEW - 1] + "…"
    return ApprovalRequest(f"send_message to {target}: {preview}",
                           (Danger(OTHER_CHAT, f"sends a message to {target}, not to this "
                                               "chat"),))
