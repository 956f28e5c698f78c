"""Dangerous commands asked of the person in the editor (``session/request_permission``).

``approvals.py`` decides when to ask; this is the asker. The editor shows the
terminal tool call the command belongs to with four choices, one per approval scope:
allow once, allow for this session, always allow (the profile's ``approvals.json``)
and reject. A cancelled request, an interrupted turn, an answer we did not offer or
a client that went away all reject.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from acp import text_block, tool_content, update_tool_call
from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

from hermes.acp.channel import Bridge, Interrupted, UpdateChannel
from hermes.tools.context import ApprovalChoice, ApprovalRequest, Cancelled

OPTIONS = (
    PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="session", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="always", name="Always allow (this profile)",
                     kind="allow_always"),
    PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
)
"""Option ids are our approval choices, so the answer maps to a scope as it is."""
CHOICES: dict[str, ApprovalChoice] = {"once": "once", "session": "session",
                                      "always": "always", "deny": "deny"}


def choice_of(response: RequestPermissionResponse) -> ApprovalChoice:
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        return CHOICES.get(outcome.option_id, "deny")
    return "deny"  # cancelled


class EditorApprover:
    """``ApprovalCallback`` of one ACP session."""

    def __init__(self, bridge: Bridge, channel: UpdateChannel,
                 current_call: Callable[[], str | None]):
        self._bridge = bridge
        self._channel = channel
        self._current_call = current_call

    def __call__(self, request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
        self._channel.drain_from_thread()  # the tool call is on screen before the question
        call_id = self._current_call() or f"approval-{uuid.uuid4().hex[:12]}"
        detail = (f"$ {request.command}\n\n{request.reason}.\nAllowing it for the session or "
                  f"always also allows: {request.scope}.")
        tool_call = update_tool_call(call_id, title=request.command, kind="execute",
                                     status="pending",
                                     content=[tool_content(text_block(detail))],
                                     raw_input={"command": request.command})
        session_id = self._channel.session_id
        try:
            response = self._bridge.call(
                lambda client: client.request_permission(
                    session_id=session_id, tool_call=tool_call, options=list(OPTIONS)),
                cancelled=cancelled)
        except Interrupted:
            return "deny"
        except Exception:  # the client went away or answered with an error
            return "deny"
        return choice_of(response)
